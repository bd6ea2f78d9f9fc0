/*
 * literal.c: derives, from a PCRE2 pattern, a small set of literals such that
 * every match contains at least one of them (lower-cased, because patterns
 * are caseless). The prefilter only runs a pattern on a text holding one of
 * its literals, so a wrong literal silently loses matches: whenever this
 * parser meets syntax it does not fully understand it gives up ("bail") and
 * the pattern simply runs on every record.
 *
 * Model: a branch is a sequence of atoms: literal characters, zero-width
 * items, groups, classes and opaque things. The parser keeps `cur`, the set
 * of strings one of which the text must hold right up to the current atom:
 * a mandatory character is appended to every member; a group or class whose
 * language is a small finite set of strings ("exact": `(?:INUSE|NOTAVAIL)`,
 * `[234]`) multiplies it; anything else ends it. Every ended `cur` whose
 * members all have LIT_MIN bytes is a candidate, and so is a mandatory
 * group's own literal set. Every candidate is required, so the branch keeps
 * its best few (LIT_CONJ): a match holds a member of each, which lets the
 * prefilter require two literals where one alone is weak ("HTTP/" and
 * "503"). An alternation is the union of its branches' best candidates, and
 * has no literal when one branch has none. Patterns are known to compile (the parser runs after
 * pcre2_compile), which keeps the syntax checks short.
 */
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"

#define MAX_DEPTH 48

/* Locale-free ASCII classes: the pattern syntax is ASCII. */
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static bool is_alnum(int c) { return is_digit(c) || is_alpha(c); }
static bool is_xdigit(int c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}
static int to_lower(int c) { return c >= 'A' && c <= 'Z' ? c | 0x20 : c; }

enum atom { A_LIT, A_ZERO, A_GROUP, A_OPAQUE };

struct dctx {
	const unsigned char *s;
	size_t n, i;
	int depth;
	bool bail;
};

struct quant {
	bool present;
	unsigned min, max;      /* max UINT_MAX-ish for unbounded */
};

/* What a group (or class) yields: its required literal sets, best first,
 * and when its language is a small set of strings, that set (members may
 * be short). */
struct gres {
	struct lit_cnf req;
	struct lit_set exact;
	bool is_exact;
};

static void parse_alt(struct dctx *c, struct gres *out);

static int at(const struct dctx *c, size_t k)
{
	return c->i + k < c->n ? c->s[c->i + k] : -1;
}

/* The worst member decides: a higher score (rarer in ordinary logs), then
 * fewer members, then longer. */
static void set_rank(const struct lit_set *a, unsigned *score, unsigned *len)
{
	if (!a->n) {
		*score = *len = 0;
		return;
	}
	*score = *len = 0xffff;
	for (unsigned k = 0; k < a->n; k++) {
		unsigned sc = lit_score(a->s[k], a->len[k]);

		*score = sc < *score ? sc : *score;
		*len = a->len[k] < *len ? a->len[k] : *len;
	}
}

static bool better(const struct lit_set *a, const struct lit_set *b)
{
	unsigned as, al, bs, bl;

	if (!a->n)
		return false;
	if (!b->n)
		return true;
	set_rank(a, &as, &al);
	set_rank(b, &bs, &bl);
	if (as != bs)
		return as > bs;
	if (a->n != b->n)
		return a->n < b->n;
	return al > bl;
}

unsigned lit_set_score(const struct lit_set *s)
{
	unsigned score, len;

	set_rank(s, &score, &len);
	return score;
}

static bool contains(const char *h, size_t hn, const char *n, size_t nn)
{
	return nn <= hn && memmem(h, hn, n, nn) != NULL;
}

static bool same_set(const struct lit_set *a, const struct lit_set *b)
{
	if (a->n != b->n)
		return false;
	for (unsigned k = 0; k < a->n; k++) {
		bool found = false;

		for (unsigned j = 0; j < b->n && !found; j++)
			found = a->len[k] == b->len[j] &&
				!memcmp(a->s[k], b->s[j], a->len[k]);
		if (!found)
			return false;
	}
	return true;
}

/* Adds a required set, keeping the LIT_CONJ best in rank order; a set that
 * ranks equal goes after the ones already there. */
static void req_add(struct lit_cnf *req, const struct lit_set *c)
{
	unsigned pos = 0;

	if (!c->n)
		return;
	for (unsigned k = 0; k < req->n; k++)
		if (same_set(c, &req->set[k]))
			return;
	while (pos < req->n && !better(c, &req->set[pos]))
		pos++;
	if (pos == LIT_CONJ)
		return;
	if (req->n < LIT_CONJ)
		req->n++;
	memmove(&req->set[pos + 1], &req->set[pos],
		(req->n - 1 - pos) * sizeof(req->set[0]));
	req->set[pos] = *c;
}

/* cur as a candidate: usable when every member has LIT_MIN bytes. A
 * member holding another member adds nothing ("no such host." when "no
 * such host" is in) and is dropped. */
static void consider(struct lit_cnf *req, const struct lit_set *cur)
{
	struct lit_set c;

	c.n = 0;
	for (unsigned k = 0; k < cur->n; k++) {
		bool redundant = false;

		if (cur->len[k] < LIT_MIN)
			return;
		for (unsigned j = 0; j < cur->n && !redundant; j++)
			redundant = j != k && contains(cur->s[k], cur->len[k],
						       cur->s[j], cur->len[j]) &&
				    (cur->len[j] < cur->len[k] || j < k);
		if (redundant)
			continue;
		c.len[c.n] = cur->len[k];
		memcpy(c.s[c.n++], cur->s[k], cur->len[k]);
	}
	req_add(req, &c);
}

static void set_reset(struct lit_set *s)
{
	s->n = 1;
	s->len[0] = 0;
}

/* Adds b's members to a; false when the union would be too large. */
static bool set_union(struct lit_set *a, const struct lit_set *b)
{
	for (unsigned k = 0; k < b->n; k++) {
		bool dup = false;

		for (unsigned j = 0; j < a->n && !dup; j++)
			dup = a->len[j] == b->len[k] &&
			      !memcmp(a->s[j], b->s[k], b->len[k]);
		if (dup)
			continue;
		if (a->n == LIT_MAX)
			return false;
		a->len[a->n] = b->len[k];
		memcpy(a->s[a->n++], b->s[k], b->len[k]);
	}
	return true;
}

/* Moves past the next `closer`; bails when there is none. */
static void skip_past(struct dctx *c, int closer)
{
	while (c->i < c->n && c->s[c->i] != closer)
		c->i++;
	if (c->i >= c->n)
		c->bail = true;
	else
		c->i++;
}

/* One class member for an exact set: a plain ASCII character or an
 * escaped punctuation character; -1 for anything else. */
static int class_char(struct dctx *c)
{
	int ch = at(c, 0);

	if (ch == '\\') {
		ch = at(c, 1);
		if (ch < 0x21 || ch > 0x7e || is_alnum(ch))
			return -1;
		c->i += 2;
		return ch;
	}
	if (ch < 0x20 || ch > 0x7e || ch == '[')
		return -1;
	c->i++;
	return ch;
}

static bool class_add(struct lit_set *set, int ch)
{
	ch = to_lower(ch);
	for (unsigned k = 0; k < set->n; k++)
		if ((unsigned char)set->s[k][0] == ch)
			return true;
	if (set->n == LIT_MAX)
		return false;
	set->s[set->n][0] = (char)ch;
	set->len[set->n++] = 1;
	return true;
}

/* A class like [234], [a-c] or [.,:] is an exact set of characters; the
 * rest (negated, escapes such as \d, POSIX names, large) is opaque. */
static bool exact_class(struct dctx *c, struct lit_set *set)
{
	bool first = true;

	set->n = 0;
	if (at(c, 0) == '^')
		return false;
	while (c->i < c->n && (first || at(c, 0) != ']')) {
		int lo = class_char(c), hi;

		first = false;
		if (lo < 0)
			return false;
		if (at(c, 0) != '-' || at(c, 1) == ']' || at(c, 1) < 0) {
			if (!class_add(set, lo))
				return false;
			continue;
		}
		c->i++;
		if ((hi = class_char(c)) < lo || hi - lo >= LIT_MAX)
			return false;
		for (int ch = lo; ch <= hi; ch++)
			if (!class_add(set, ch))
				return false;
	}
	if (at(c, 0) != ']')
		return false;
	c->i++;
	return true;
}

static enum atom skip_class(struct dctx *c, struct gres *g)
{
	size_t start = ++c->i;

	if (exact_class(c, &g->exact)) {
		g->is_exact = true;
		g->req.n = 0;
		return A_GROUP;
	}
	c->i = start;
	if (at(c, 0) == '^')
		c->i++;
	if (at(c, 0) == ']')
		c->i++;
	while (c->i < c->n) {
		int ch = c->s[c->i];

		if (ch == '\\') {
			c->i += 2;
		} else if (ch == '[' && (at(c, 1) == ':' || at(c, 1) == '.' ||
					 at(c, 1) == '=')) {
			int kind = at(c, 1);
			size_t j = c->i + 2;

			while (j + 1 < c->n &&
			       !(c->s[j] == kind && c->s[j + 1] == ']'))
				j++;
			c->i = j + 1 < c->n ? j + 2 : c->i + 1;
		} else if (ch == ']') {
			c->i++;
			return A_OPAQUE;
		} else {
			c->i++;
		}
	}
	c->bail = true;
	return A_OPAQUE;
}

/* After "\x", "\o", "\p", "\N", "\g", "\k": a braced or bracketed tail. */
static void skip_escape_tail(struct dctx *c, const char *openers)
{
	int o = at(c, 0);

	if (o < 0 || !strchr(openers, o))
		return;
	skip_past(c, o == '{' ? '}' : o == '<' ? '>' : '\'');
}

static enum atom parse_escape(struct dctx *c, unsigned char *lit)
{
	int e = at(c, 1);

	if (e < 0) {
		c->bail = true;
		return A_OPAQUE;
	}
	c->i += 2;
	if (e >= 0x80)
		return A_OPAQUE;
	if (!is_alnum(e)) {
		*lit = (unsigned char)to_lower(e);
		return A_LIT;
	}
	switch (e) {
	case 'b': case 'B': case 'A': case 'z': case 'Z': case 'G': case 'K':
	case 'E':       /* a lone \E is ignored by PCRE2 */
		return A_ZERO;
	case 'x':
		if (at(c, 0) == '{')
			skip_past(c, '}');
		else
			for (int k = 0; k < 2 && is_xdigit(at(c, 0)); k++)
				c->i++;
		return A_OPAQUE;
	case 'o': case 'N':
		skip_escape_tail(c, "{");
		return A_OPAQUE;
	case 'p': case 'P':
		if (at(c, 0) == '{')
			skip_past(c, '}');
		else
			c->i++;
		return A_OPAQUE;
	case 'g':
		if (at(c, 0) == '{' || at(c, 0) == '<' || at(c, 0) == '\'') {
			skip_escape_tail(c, "{<'");
		} else {
			if (at(c, 0) == '+' || at(c, 0) == '-')
				c->i++;
			while (is_digit(at(c, 0)))
				c->i++;
		}
		return A_OPAQUE;
	case 'k':
		skip_escape_tail(c, "{<'");
		return A_OPAQUE;
	case 'c':
		c->i++;         /* \cX: X is any printing character */
		return A_OPAQUE;
	case 'd': case 'D': case 's': case 'S': case 'w': case 'W':
	case 'h': case 'H': case 'v': case 'V': case 'R': case 'X': case 'C':
	case 'a': case 'e': case 'f': case 'n': case 'r': case 't':
		return A_OPAQUE;
	}
	if (is_digit(e)) {       /* back reference or octal: opaque either way */
		while (is_digit(at(c, 0)))
			c->i++;
		return A_OPAQUE;
	}
	c->bail = true;         /* \Q.. and anything unknown */
	return A_OPAQUE;
}

/* Parses "(...)" content up to its ')' and moves past it. */
static void group_body(struct dctx *c, struct gres *g)
{
	if (++c->depth > MAX_DEPTH) {
		c->bail = true;
		return;
	}
	parse_alt(c, g);
	c->depth--;
	if (at(c, 0) != ')')
		c->bail = true;
	else
		c->i++;
}

static enum atom opaque_group(struct dctx *c)
{
	struct gres discard;

	group_body(c, &discard);
	return A_OPAQUE;
}

/* c->i is just past "(?". */
static enum atom parse_ext_group(struct dctx *c, struct gres *set)
{
	int k = at(c, 0);

	switch (k) {
	case ':': case '>': case '|':
		c->i++;
		group_body(c, set);
		return A_GROUP;
	case '=': case '!':
		c->i++;
		return opaque_group(c);
	case '<':
		if (at(c, 1) == '=' || at(c, 1) == '!') {
			c->i += 2;
			return opaque_group(c);
		}
		skip_past(c, '>');
		group_body(c, set);
		return A_GROUP;
	case '\'':
		c->i++;
		skip_past(c, '\'');
		group_body(c, set);
		return A_GROUP;
	case 'P':
		if (at(c, 1) == '<') {
			skip_past(c, '>');
			group_body(c, set);
			return A_GROUP;
		}
		skip_past(c, ')');      /* (?P=name) (?P>name) */
		return A_OPAQUE;
	case '#':
		skip_past(c, ')');
		return A_ZERO;
	case '(':                       /* conditional: condition + branches */
		return opaque_group(c);
	case 'R': case '&': case '+':
		skip_past(c, ')');
		return A_OPAQUE;
	}
	if (is_digit(k) || (k == '-' && is_digit(at(c, 1)))) {
		skip_past(c, ')');
		return A_OPAQUE;
	}
	/* Option letters: (?i) (?-i) (?^) or (?i:...). Extended mode changes
	 * how the rest is read, so give up on it. */
	while (at(c, 0) >= 0 && (is_alpha(at(c, 0)) || at(c, 0) == '-' ||
				 at(c, 0) == '^')) {
		if (at(c, 0) == 'x' || at(c, 0) == 'C') {
			c->bail = true;
			return A_OPAQUE;
		}
		c->i++;
	}
	if (at(c, 0) == ')') {
		c->i++;
		return A_ZERO;
	}
	if (at(c, 0) == ':') {
		c->i++;
		group_body(c, set);
		return A_GROUP;
	}
	c->bail = true;
	return A_OPAQUE;
}

static enum atom parse_group(struct dctx *c, struct gres *set)
{
	set->req.n = 0;
	set->is_exact = false;
	c->i++;
	if (at(c, 0) == '*') {          /* verbs such as (*ACCEPT) */
		c->bail = true;
		return A_OPAQUE;
	}
	if (at(c, 0) != '?') {
		group_body(c, set);
		return A_GROUP;
	}
	c->i++;
	return parse_ext_group(c, set);
}

/* True at "{n}", "{n,}" or "{n,m}", with min and max filled in. */
static bool strict_braces(struct dctx *c, struct quant *q)
{
	size_t j = c->i + 1;
	unsigned long lo = 0, hi = 0;
	bool comma = false, hidig = false;

	if (j >= c->n || !is_digit(c->s[j]))
		return false;
	while (j < c->n && is_digit(c->s[j]) && lo < 100000)
		lo = lo * 10 + (c->s[j++] - '0');
	if (j < c->n && c->s[j] == ',') {
		comma = true;
		j++;
		while (j < c->n && is_digit(c->s[j]) && hi < 100000) {
			hi = hi * 10 + (c->s[j++] - '0');
			hidig = true;
		}
	}
	if (j >= c->n || c->s[j] != '}')
		return false;
	q->min = (unsigned)lo;
	q->max = !comma ? (unsigned)lo : hidig ? (unsigned)hi : 0xffffffu;
	c->i = j + 1;
	return true;
}

/* "{" with only digits, commas and blanks: a quantifier in newer PCRE2. */
static bool loose_braces(const struct dctx *c, size_t *end)
{
	size_t j = c->i + 1;

	while (j < c->n && (is_digit(c->s[j]) || c->s[j] == ',' ||
			    c->s[j] == ' ' || c->s[j] == '\t'))
		j++;
	if (j >= c->n || c->s[j] != '}')
		return false;
	*end = j + 1;
	return true;
}

static void parse_quant(struct dctx *c, struct quant *q)
{
	int ch = at(c, 0);
	size_t end;

	q->present = true;
	q->min = q->max = 1;
	if (ch == '?') {
		q->min = 0;
	} else if (ch == '*') {
		q->min = 0;
		q->max = 0xffffffu;
	} else if (ch == '+') {
		q->max = 0xffffffu;
	} else if (ch == '{' && strict_braces(c, q)) {
		c->i--;         /* re-advanced below */
	} else if (ch == '{' && loose_braces(c, &end)) {
		q->min = 0;     /* could be {,n}: assume the atom is optional */
		q->max = 0xffffffu;
		c->i = end - 1;
	} else {
		q->present = false;
		return;
	}
	c->i++;
	if (at(c, 0) == '?' || at(c, 0) == '+')
		c->i++;
}

static enum atom parse_atom(struct dctx *c, unsigned char *lit,
			    struct gres *set)
{
	int ch = at(c, 0);
	size_t end;

	switch (ch) {
	case '\\':
		return parse_escape(c, lit);
	case '(':
		return parse_group(c, set);
	case '[':
		return skip_class(c, set);
	case '.':
		c->i++;
		return A_OPAQUE;
	case '^': case '$':
		c->i++;
		return A_ZERO;
	case '*': case '+': case '?':
		c->bail = true;         /* a quantifier with nothing before */
		return A_OPAQUE;
	case '{':
		if (loose_braces(c, &end)) {
			c->bail = true;
			return A_OPAQUE;
		}
		break;
	}
	c->i++;
	if (ch >= 0x80)
		return A_OPAQUE;        /* non-ASCII: caseless needs Unicode */
	*lit = (unsigned char)to_lower(ch);
	return A_LIT;
}

/* cur x g: every pairing, when it fits. */
static bool product(struct lit_set *cur, const struct lit_set *g)
{
	struct lit_set out;

	out.n = 0;
	for (unsigned i = 0; i < cur->n; i++)
		for (unsigned j = 0; j < g->n; j++) {
			struct lit_set one;
			size_t n = (size_t)cur->len[i] + g->len[j];

			if (n > LIT_LEN)
				return false;
			one.n = 1;
			one.len[0] = (unsigned char)n;
			memcpy(one.s[0], cur->s[i], cur->len[i]);
			memcpy(one.s[0] + cur->len[i], g->s[j], g->len[j]);
			if (!set_union(&out, &one))
				return false;
		}
	*cur = out;
	return true;
}

/* Appends a mandatory character to every member of cur. */
static bool append(struct lit_set *cur, unsigned char ch)
{
	for (unsigned k = 0; k < cur->n; k++)
		if (cur->len[k] == LIT_LEN)
			return false;
	for (unsigned k = 0; k < cur->n; k++)
		cur->s[k][cur->len[k]++] = (char)ch;
	return true;
}

/* One atom with its quantifier applied to cur and req; false when the
 * branch stops being an exact string set. */
static bool apply(struct dctx *c, enum atom a, unsigned char lit,
		  const struct gres *g, const struct quant *q,
		  struct lit_set *cur, struct lit_cnf *req)
{
	bool opt = q->present && q->min == 0;
	bool once = !q->present || (q->min == 1 && q->max == 1);
	struct lit_set one = { 1, { 1 }, { { (char)lit } } };

	if (a == A_ZERO) {
		/* A quantified comment or \E binds to what precedes it;
		 * too rare to model. */
		c->bail |= q->present;
		return true;
	}
	if (opt && q->max == 1 && (a == A_LIT || g->is_exact)) {
		/* x? or (?:uration)?: the set plus the empty string, so
		 * `colou?r` still gives "colour" and "color". */
		struct lit_set with = a == A_LIT ? one : g->exact;
		struct lit_set empty = { 1, { 0 }, { { 0 } } };

		if (set_union(&with, &empty) && product(cur, &with))
			return true;
	}
	if (a == A_OPAQUE || opt || (a == A_GROUP && !g->is_exact)) {
		consider(req, cur);
		set_reset(cur);
		if (a == A_GROUP && !opt)
			for (unsigned k = 0; k < g->req.n; k++)
				req_add(req, &g->req.set[k]);
		return false;
	}
	if (a == A_LIT && once) {
		if (append(cur, lit))
			return true;
		consider(req, cur);
		set_reset(cur);
		append(cur, lit);
		return false;
	}
	/* An exact set (a character or a group): multiply, and when that
	 * does not fit, restart from the set itself, still required. */
	const struct lit_set *set = a == A_LIT ? &one : &g->exact;
	bool exact = once;

	if (!product(cur, set)) {
		consider(req, cur);
		*cur = *set;
		exact = false;
	}
	if (!once) {
		/* x+ or (..){2,}: the last repetition is still followed by
		 * what comes next, so the next run starts with the set. */
		consider(req, cur);
		*cur = *set;
	}
	return exact;
}

static void parse_seq(struct dctx *c, struct lit_cnf *req,
		      struct lit_set *cur, bool *exact)
{
	struct gres *g = malloc(sizeof(*g));

	req->n = 0;
	set_reset(cur);
	*exact = true;
	if (!g) {
		c->bail = true;
		return;
	}
	while (c->i < c->n && !c->bail) {
		unsigned char lit = 0;
		struct quant q;
		enum atom a;

		if (c->s[c->i] == '|' || c->s[c->i] == ')')
			break;
		g->is_exact = false;
		g->req.n = 0;
		a = parse_atom(c, &lit, g);
		parse_quant(c, &q);
		if (!apply(c, a, lit, g, &q, cur, req))
			*exact = false;
	}
	consider(req, cur);
	free(g);
}

static void parse_alt(struct dctx *c, struct gres *out)
{
	struct lit_cnf *req = malloc(sizeof(*req));
	struct lit_set uni, cur;
	bool none = false, exact;
	unsigned branches = 0;

	out->req.n = 0;
	out->exact.n = 0;
	out->is_exact = true;
	uni.n = 0;
	if (!req) {
		c->bail = true;
		out->is_exact = false;
		return;
	}
	for (;;) {
		parse_seq(c, req, &cur, &exact);
		if (!req->n || !set_union(&uni, &req->set[0]))
			none = true;
		if (!branches++)
			out->req = *req;
		if (!exact || !set_union(&out->exact, &cur))
			out->is_exact = false;
		if (c->bail || at(c, 0) != '|')
			break;
		c->i++;
	}
	free(req);
	if (none || c->bail) {
		out->req.n = 0;
	} else if (branches > 1) {
		/* (a1 & a2) | (b1 & b2) only promises a1 | b1. */
		out->req.n = 1;
		out->req.set[0] = uni;
	}
	if (c->bail)
		out->is_exact = false;
}

void lit_derive_cnf(const char *re, size_t n, struct lit_cnf *out)
{
	struct dctx c = { (const unsigned char *)re, n, 0, 0, false };
	struct gres *g = malloc(sizeof(*g));

	out->n = 0;
	/* Quoting needs a second parser; not worth it. */
	if (!g || memmem(re, n, "\\Q", 2)) {
		free(g);
		return;
	}
	parse_alt(&c, g);
	if (!c.bail && c.i == n)
		*out = g->req;
	free(g);
}

void lit_derive(const char *re, size_t n, struct lit_set *out)
{
	struct lit_cnf *cnf = malloc(sizeof(*cnf));

	out->n = 0;
	if (!cnf)
		return;
	lit_derive_cnf(re, n, cnf);
	if (cnf->n)
		*out = cnf->set[0];
	free(cnf);
}
