/*
 * json_scan.c: the allocation-free one-line JSON parser of json_scan.h.
 *
 * It follows cJSON 1.7's grammar where the two must agree: blanks are any
 * byte up to 0x20; a string runs to the first quote not escaped and may
 * hold raw control bytes; a number is the longest run of "0-9+-eE." of
 * which strtod takes what it can; literals are compared
 * whole. Whatever cJSON would do differently is refused rather than
 * imitated (see json_scan.h).
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "json_scan.h"

#define NUM_MAX 63      /* a number copied on the stack */

struct jp {
	struct js_doc *doc;
	const char *p;
	size_t n;
	int depth;
	bool nomem;
};

/* Positions are returned rather than stored, so they stay in registers;
 * 0 means failure (no value ends at offset 0). */
static inline size_t skip_blanks(const char *p, size_t i, size_t n)
{
	while (i < n && (unsigned char)p[i] <= 0x20)
		i++;
	return i;
}

/* The byte at *i past any blanks (*i moved to it), or -1 at the end: one
 * bounds test and one load serve the skip and the caller's test of what
 * follows, four times a member. */
static inline int peek(const char *p, size_t *i, size_t n)
{
	for (size_t k = *i; k < n; k++)
		if ((unsigned char)p[k] > 0x20) {
			*i = k;
			return (unsigned char)p[k];
		}
	*i = n;
	return -1;
}

/* js_find_special for a name or string that most likely ends within 16
 * bytes of i: one straight compare first, without the loop around it.
 * That was a tenth of an Event's parse. */
static inline size_t find_special_near(const char *p, size_t i, size_t n)
{
#ifdef __SSE2__
	if (i + 16 <= n) {
		unsigned m = js_special16(p + i);

		if (m)
			return i + (unsigned)__builtin_ctz(m);
		i += 16;
	}
#endif
	return js_find_special(p, i, n);
}

/* cJSON's parse_hex4: the four hex digits at p, 0 when one is not. */
static unsigned hex4(const char *p)
{
	unsigned h = 0;

	for (int k = 0; k < 4; k++) {
		unsigned char c = (unsigned char)p[k];

		if (c >= '0' && c <= '9')
			h = h << 4 | (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			h = h << 4 | (unsigned)((c | 0x20) - 'a' + 10);
		else
			return 0;
	}
	return h;
}

/*
 * The \u escape at p (end: where its string's body ends), as cJSON reads
 * it: false when cJSON refuses it, else its code point in *cp (0 when a
 * byte is no hex digit: cJSON writes a NUL, which ends its C string) and
 * in *len the bytes it spans (6, or 12 for a surrogate pair).
 */
static bool u_escape(const char *p, const char *end, unsigned *cp,
		     size_t *len)
{
	unsigned hi, lo;

	if (end - p < 6)
		return false;
	hi = hex4(p + 2);
	*cp = hi;
	*len = 6;
	if (hi >= 0xDC00 && hi <= 0xDFFF)
		return false;
	if (hi < 0xD800 || hi > 0xDBFF)
		return true;
	if (end - p < 12 || p[6] != '\\' || p[7] != 'u')
		return false;
	lo = hex4(p + 8);
	if (lo < 0xDC00 || lo > 0xDFFF)
		return false;
	*cp = 0x10000 + (((hi & 0x3FF) << 10) | (lo & 0x3FF));
	*len = 12;
	return true;
}

/* cJSON finds a string's end first (the first quote not escaped), then
 * decodes what lies before it; a \u escape is judged against that end. */
static size_t string_end(const char *p, size_t i, size_t n)
{
	for (;;) {
		i = js_find_special(p, i, n);
		if (i >= n || p[i] == '"')
			return i;
		i += 2;
	}
}

/* The next backslash of a body at or after i, or end. A quote before end
 * is text: cJSON reads the bytes after \\u as its digits, whatever they
 * are, so "\\u12\\"" leaves the quote of the \\" as text. */
static size_t next_escape(const char *p, size_t i, size_t end)
{
	while ((i = js_find_special(p, i, end)) < end && p[i] == '"')
		i++;
	return i;
}

/* The escapes of a body (from body) that holds one at i, up to its
 * closing quote: past it, or 0. What js_has_nul_escape names is refused,
 * for the dispatcher to reject as it always did. */
static size_t check_escapes(const char *p, size_t body, size_t i, size_t n)
{
	size_t end = string_end(p, i, n), len;
	unsigned cp;

	if (end >= n || js_has_nul_escape(p + body, end - body))
		return 0;
	while (i < end) {
		switch (p[i + 1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n':
		case 'r': case 't':
			i += 2;
			break;
		case 'u':
			if (!u_escape(p + i, p + end, &cp, &len))
				return 0;
			i += len;
			break;
		default:
			return 0;
		}
		i = next_escape(p, i, end);
	}
	return end + 1;
}

/* At a '"' at i: past the closing quote. */
static inline size_t scan_string(const char *p, size_t i, size_t n, bool *esc)
{
	size_t body = i + 1;

	*esc = false;
	i = find_special_near(p, body, n);
	if (i >= n)
		return 0;
	if (p[i] == '"')
		return i + 1;
	*esc = true;
	return check_escapes(p, body, i, n);
}

static bool num_char(char c)
{
	return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' ||
	       c == 'E' || c == '.';
}

/* strtod of p[0..k), copied to be NUL-terminated: into buf when it fits
 * (nearly always), else onto the heap. The bytes strtod took, 0 for none
 * or on ENOMEM (*nomem set). */
static size_t num_read(const char *p, size_t k, double *out, bool *nomem)
{
	char buf[NUM_MAX + 1], *s = k <= NUM_MAX ? buf : malloc(k + 1), *end;

	if (!s) {
		*nomem = true;
		return 0;
	}
	memcpy(s, p, k);
	s[k] = '\0';
	*out = strtod(s, &end);
	k = (size_t)(end - s);
	if (s != buf)
		free(s);
	return k;
}

/*
 * A run -?D+.D+ whose digits, read as one integer, a double holds exactly
 * (up to 2^53), with at most 22 of them after the point: that integer over
 * a power of ten a double also holds exactly is one correctly rounded
 * division, the value strtod gives (Clinger's fast path), and strtod
 * would take the whole run. false for any other run, left to strtod.
 * Loggers' float times ("ts":1714558513.123456) are most of the numbers
 * of a JSON log line, and strtod cost a thousand instructions each.
 */
static bool decimal_fast(const char *p, size_t k, double *out)
{
	static const double pow10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
		1e22,
	};
	size_t i = p[0] == '-', dot = 0, digits = 0;
	uint64_t m = 0;
	double v;

	for (; i < k; i++) {
		if (p[i] == '.' && !dot && digits) {
			dot = i;
			continue;
		}
		if (p[i] < '0' || p[i] > '9' || ++digits > 19)
			return false;
		m = m * 10 + (uint64_t)(p[i] - '0');
	}
	if (!dot || dot == k - 1 || k - 1 - dot > 22 || m > (uint64_t)1 << 53)
		return false;
	v = (double)m / pow10[k - 1 - dot];
	*out = p[0] == '-' ? -v : v;
	return true;
}

static size_t scan_number(struct jp *j, size_t i, struct js_node *nd)
{
	const char *p = j->p;
	size_t n = j->n, k = 0;
	bool digits = true;

	/* cJSON takes the whole run of these bytes (Debian's cJSON 1.7.15
	 * copies it however long; upstream's stopped at 63) for strtod. */
	while (i + k < n && num_char(p[i + k])) {
		digits &= p[i + k] >= '0' && p[i + k] <= '9';
		k++;
	}
	nd->type = JS_NUM;
	nd->s = p + i;
	if (digits && k <= 15) {
		/* Exact in a double, so strtod could only agree. */
		uint64_t v = 0;

		for (size_t m = 0; m < k; m++)
			v = v * 10 + (uint64_t)(p[i + m] - '0');
		nd->num = (double)v;
		nd->n = k;
		return i + k;
	}
	if (decimal_fast(p + i, k, &nd->num)) {
		nd->n = k;
		return i + k;
	}
	if (!(nd->n = num_read(p + i, k, &nd->num, &j->nomem)))
		return 0;
	return i + nd->n;
}

static size_t scan_literal(const char *p, size_t i, size_t n,
			   struct js_node *nd, const char *lit, size_t len,
			   enum js_type t)
{
	if (n - i < len || memcmp(p + i, lit, len))
		return 0;
	nd->type = (unsigned char)t;
	return i + len;
}

static size_t scan_value(struct jp *j, uint32_t at, size_t i);

static size_t unescape(const char *s, size_t n, char *out);

/* A name with escapes, p[0..n) as written: decoded into doc->keys, which
 * was made as large as the text, so what it holds never moves. A NUL
 * follows it, for js_pick's look at the first byte of an empty name. */
static const char *key_decode(struct jp *j, const char *p, size_t *n)
{
	struct js_doc *doc = j->doc;
	char *out;

	if (doc->keycap <= j->n) {
		char *b = realloc(doc->keys, j->n + 1);

		if (!b) {
			j->nomem = true;
			return NULL;
		}
		doc->keys = b;
		doc->keycap = j->n + 1;
	}
	out = doc->keys + doc->keyn;
	*n = unescape(p, *n, out);
	out[*n] = '\0';
	doc->keyn += *n + 1;
	return out;
}

/* At the '"' at i, the name of a member: past the closing quote, or 0;
 * *key and *keyn: the name, decoded. */
static inline size_t scan_key(struct jp *j, size_t i, const char **key,
			      size_t *keyn)
{
	const char *p = j->p;
	size_t k = find_special_near(p, i + 1, j->n);
	bool esc;

	if (k < j->n && p[k] == '"') {
		*key = p + i + 1;
		*keyn = k - i - 1;
		return k + 1;
	}
	if (!(k = scan_string(p, i, j->n, &esc)))
		return 0;
	*keyn = k - i - 2;
	*key = key_decode(j, p + i + 1, keyn);
	return *key ? k : 0;
}

/* Room for node idx: the array grows as a value needs, doubling. */
static bool node_room(struct jp *j, uint32_t idx)
{
	struct js_doc *doc = j->doc;
	uint32_t cap = doc->cap ? doc->cap * 2 : 256;
	struct js_node *b;

	if (idx < doc->cap)
		return true;
	if (doc->cap >= UINT32_MAX / 2 ||
	    !(b = realloc(doc->node, (size_t)cap * sizeof(*b)))) {
		j->nomem = true;
		return false;
	}
	doc->node = b;
	doc->cap = cap;
	return true;
}

/*
 * Members or elements up to the closing bracket, from just past the
 * opening one. Each new node is linked after the previous one. A string
 * value, most of an Event's, is read here: a call of scan_value for each
 * value was a third of the 4,700 instructions an Event took to parse.
 */
static size_t scan_items(struct jp *j, uint32_t at, size_t i, bool object)
{
	const char *p = j->p;
	size_t n = j->n;
	struct js_doc *doc = j->doc;
	int c, close = object ? '}' : ']';
	uint32_t prev = 0;

	if ((c = peek(p, &i, n)) == close)
		return i + 1;
	/* c is p[i], the first byte of a member or element, or -1. Nodes are
	 * named by index: the array may move as it grows. */
	for (;;) {
		uint32_t idx = doc->count;
		struct js_node *nd;
		const char *key = NULL;
		size_t keyn = 0, k;

		if (!node_room(j, idx))
			return 0;
		if (object) {
			if (c != '"' || !(k = scan_key(j, i, &key, &keyn)))
				return 0;
			i = k + 1;
			/* Compact "name":value first, at one test a byte. */
			if (i < n && p[k] == ':' && (unsigned char)p[i] > 0x20) {
				c = (unsigned char)p[i];
			} else {
				if (peek(p, &k, n) != ':')
					return 0;
				i = k + 1;
				c = peek(p, &i, n);
			}
		}
		doc->count = idx + 1;
		nd = &doc->node[idx];
		*nd = (struct js_node){ .key = key, .keyn = keyn };
		if (prev)
			doc->node[prev].next = idx;
		else
			doc->node[at].child = idx;
		prev = idx;
		if (c == '"') {
			nd->type = JS_STR;
			if (!(k = scan_string(p, i, n, &nd->esc)))
				return 0;
			nd->s = p + i + 1;
			nd->n = k - i - 2;
			i = k;
		} else if (!(i = scan_value(j, idx, i))) {
			return 0;
		}
		/* Likewise a compact ",next". */
		if (i + 1 < n && p[i] == ',' && (unsigned char)p[i + 1] > 0x20) {
			c = (unsigned char)p[++i];
			continue;
		}
		c = peek(p, &i, n);
		if (c != ',')
			return c == close ? i + 1 : 0;
		i++;
		c = peek(p, &i, n);
	}
}

/* The value at i into node at (already counted). */
static size_t scan_value(struct jp *j, uint32_t at, size_t i)
{
	struct js_node *nd = &j->doc->node[at];
	const char *p = j->p;
	size_t n = j->n, k;

	if (i >= n)
		return 0;
	switch (p[i]) {
	case '"':
		nd->type = JS_STR;
		if (!(k = scan_string(p, i, n, &nd->esc)))
			return 0;
		nd->s = p + i + 1;
		nd->n = k - i - 2;
		return k;
	case '{':
	case '[':
		if (++j->depth > JS_MAX_DEPTH)
			return 0;
		nd->type = p[i] == '{' ? JS_OBJ : JS_ARR;
		nd->s = p + i;
		k = scan_items(j, at, i + 1, p[i] == '{');
		j->depth--;
		/* By index: the nodes may have moved. */
		j->doc->node[at].n = k ? k - i : 0;
		return k;
	case 't':
		return scan_literal(p, i, n, nd, "true", 4, JS_TRUE);
	case 'f':
		return scan_literal(p, i, n, nd, "false", 5, JS_FALSE);
	case 'n':
		return scan_literal(p, i, n, nd, "null", 4, JS_NULL);
	}
	if (p[i] == '-' || (p[i] >= '0' && p[i] <= '9'))
		return scan_number(j, i, nd);
	return 0;
}

void js_doc_release(struct js_doc *doc)
{
	free(doc->node);
	free(doc->keys);
	*doc = (struct js_doc){ 0 };
}

/* Parses the value that p[0..n) opens with; *end: where it ends. */
static int parse_lead(struct js_doc *doc, const char *p, size_t n,
		      size_t *end)
{
	struct jp j = { doc, p, n, 0, false };
	size_t i;

	/* A frame of many values does not keep its nodes for the next. */
	if (doc->cap > JS_KEEP_NODES || doc->keycap > JS_KEEP_NODES * 16)
		js_doc_release(doc);
	doc->count = 1;
	doc->keyn = 0;
	if (!node_room(&j, 0))
		return RT_ENOMEM;
	doc->node[0] = (struct js_node){ .type = JS_NONE };
	i = skip_blanks(p, 0, n);
	if (!(i = scan_value(&j, 0, i)))
		return j.nomem ? RT_ENOMEM : RT_EPARSE;
	*end = i;
	return 0;
}

int js_parse(struct js_doc *doc, const char *p, size_t n)
{
	size_t i;
	int rc = parse_lead(doc, p, n, &i);

	if (rc)
		return rc;
	return skip_blanks(p, i, n) == n ? 0 : RT_EPARSE;
}

int js_parse_lead(struct js_doc *doc, const char *p, size_t n, size_t *end)
{
	return parse_lead(doc, p, n, end);
}

/*
 * a and b hold the same n bytes. Member names are short, and a call of
 * memcmp for each candidate was a quarter of js_pick's 2,400 instructions
 * an Event: this compares in at most two loads a side up to 16 bytes.
 */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	uint32_t u, v;

	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (x != y)
				return false;
		}
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	if (n >= 4) {
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		if (u != v)
			return false;
		memcpy(&u, a + n - 4, 4);
		memcpy(&v, b + n - 4, 4);
		return u == v;
	}
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

const struct js_node *js_get_n(const struct js_doc *doc,
			       const struct js_node *obj, const char *key,
			       size_t keyn)
{
	if (!obj || obj->type != JS_OBJ)
		return NULL;
	for (uint32_t i = obj->child; i; i = doc->node[i].next) {
		const struct js_node *m = &doc->node[i];

		if (m->keyn == keyn && same_bytes(m->key, key, keyn))
			return m;
	}
	return NULL;
}

static inline unsigned key_slot(size_t n, char c0)
{
	return (unsigned)(n * 7 + (unsigned char)c0) & (JS_PICK_SLOTS - 1);
}

/* A chained hash of the keys by length and first byte. Built once rather
 * than at each js_pick: hashing an Event reader's 41 keys again for every
 * Event cost 700 instructions. */
void js_keyset_init(struct js_keyset *set, const struct js_key *keys,
		    size_t n)
{
	memset(set, 0, sizeof(*set));
	set->keys = keys;
	set->n = n < JS_PICK_MAX ? n : JS_PICK_MAX;
	for (size_t k = 0; k < set->n; k++) {
		unsigned h = key_slot(keys[k].n, keys[k].s[0]);

		set->next[k] = set->first[h];
		set->first[h] = (unsigned char)(k + 1);
	}
}

void js_pick(const struct js_doc *doc, const struct js_node *obj,
	     const struct js_keyset *set, const struct js_node **out)
{
	const struct js_node *m;

	for (size_t k = 0; k < set->n; k++)
		out[k] = NULL;
	if (!obj || obj->type != JS_OBJ)
		return;
	for (uint32_t i = obj->child; i; i = m->next) {
		m = &doc->node[i];
		/* An empty name's first byte is its closing quote: it hashes,
		 * and matches no key, all of which have one. */
		for (unsigned k = set->first[key_slot(m->keyn, m->key[0])]; k;
		     k = set->next[k - 1]) {
			const struct js_key *key = &set->keys[k - 1];

			if (key->n == m->keyn && !out[k - 1] &&
			    same_bytes(key->s, m->key, m->keyn)) {
				out[k - 1] = m;
				break;
			}
		}
	}
}

/* A code point as UTF-8 into out: its length. */
static size_t utf8_put(unsigned cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Decodes the escapes js_parse lets through; out holds n bytes, as no
 * escape is shorter decoded than written. Runs between backslashes are
 * copied whole: a message with quotes in it took 1,250 instructions byte
 * by byte. */
static size_t unescape(const char *s, size_t n, char *out)
{
	size_t o = 0, i = 0, len;

	for (;;) {
		size_t k = next_escape(s, i, n);
		unsigned cp;
		char c;

		memcpy(out + o, s + i, k - i);
		o += k - i;
		if (k + 1 >= n) {
			if (k < n)
				out[o++] = '\\';
			return o;
		}
		c = s[k + 1];
		if (c == 'u' && u_escape(s + k, s + n, &cp, &len)) {
			if (!cp)        /* cJSON's string ends at its NUL */
				return o;
			o += utf8_put(cp, out + o);
			i = k + len;
			continue;
		}
		out[o++] = c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' :
			   c == 'r' ? '\r' : c == 't' ? '\t' : c;
		i = k + 2;
	}
}

int js_decode(const struct js_node *it, char *buf, size_t cap)
{
	size_t n;

	if (!it || it->type != JS_STR || it->n >= cap)
		return -1;
	n = it->esc ? unescape(it->s, it->n, buf) : it->n;
	if (!it->esc)
		memcpy(buf, it->s, n);
	buf[n] = '\0';
	return (int)n;
}

bool js_str_is_esc(const struct js_node *it, const char *lit, size_t len)
{
	char buf[64];

	return js_decode(it, buf, sizeof(buf)) == (int)len &&
	       !memcmp(buf, lit, len);
}

struct rt_str js_str_esc(struct rt_arena *a, const struct js_node *it)
{
	char *p;
	size_t n;

	if (!it || it->type != JS_STR)
		return RT_STR_LIT("");
	if (!(p = rt_arena_alloc(a, it->n + 1)))
		return RT_STR_LIT("");
	n = unescape(it->s, it->n, p);
	p[n] = '\0';
	return rt_str_make(p, n);
}

bool js_has_nul_escape(const char *p, size_t n)
{
	for (const char *q = p; (q = memmem(q, (size_t)(p + n - q),
					    "\\u", 2)); q += 2) {
		size_t bs = 0;

		/* \\u0000 is an escaped backslash, then text */
		while (q - bs > p && q[-(ptrdiff_t)bs - 1] == '\\')
			bs++;
		if (bs % 2 == 0 && p + n - q >= 6 && !memcmp(q + 2, "0000", 4))
			return true;
	}
	return false;
}

bool js_str_cut(const struct js_node *it)
{
	const char *p, *end;

	if (!it || it->type != JS_STR || !it->esc)
		return false;
	/* Every escape here passed check_escapes: only the digits of a \u
	 * are left to look at. */
	for (p = it->s, end = it->s + it->n;
	     (p = memchr(p, '\\', (size_t)(end - p))); p += 2) {
		if (p[1] != 'u')
			continue;
		if (end - p < 6)
			return true;
		for (int k = 2; k < 6; k++)
			if (!((p[k] >= '0' && p[k] <= '9') ||
			      ((p[k] | 0x20) >= 'a' && (p[k] | 0x20) <= 'f')))
				return true;
		p += 4;
	}
	return false;
}
