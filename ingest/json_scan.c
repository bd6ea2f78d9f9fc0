/*
 * json_scan.c: the allocation-free one-line JSON parser of json_scan.h.
 *
 * It follows cJSON 1.7's grammar where the two must agree: blanks are any
 * byte up to 0x20; a string runs to the first quote not escaped and may
 * hold raw control bytes; a number is the longest run of "0-9+-eE." (at
 * most 63 bytes) of which strtod takes what it can; literals are compared
 * whole. Whatever cJSON would do differently is refused rather than
 * imitated (see json_scan.h).
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "json_scan.h"

#define NUM_MAX 63      /* cJSON copies a number into 64 bytes */

struct jp {
	struct js_doc *doc;
	const char *p;
	size_t n;
	int depth;
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

/* At a '"' at i: past the closing quote. Escapes other than the plain
 * one-character ones are refused (\u has rules of its own in cJSON). */
static inline size_t scan_string(const char *p, size_t i, size_t n, bool *esc)
{
	*esc = false;
	for (i++;;) {
		i = find_special_near(p, i, n);
		if (i >= n)
			return 0;
		if (p[i] == '"')
			return i + 1;
		if (i + 1 >= n)
			return 0;
		switch (p[i + 1]) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n':
		case 'r': case 't':
			break;
		default:
			return 0;
		}
		*esc = true;
		i += 2;
	}
}

static bool num_char(char c)
{
	return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' ||
	       c == 'E' || c == '.';
}

static size_t scan_number(const char *p, size_t i, size_t n,
			  struct js_node *nd)
{
	char buf[NUM_MAX + 1], *end;
	size_t k = 0;
	bool digits = true;

	while (i + k < n && k < NUM_MAX && num_char(p[i + k])) {
		digits &= p[i + k] >= '0' && p[i + k] <= '9';
		k++;
	}
	if (k == NUM_MAX)
		return 0;       /* cJSON would cut it: not worth imitating */
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
	memcpy(buf, p + i, k);
	buf[k] = '\0';
	nd->num = strtod(buf, &end);
	if (end == buf)
		return 0;
	nd->n = (size_t)(end - buf);
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

/* At the '"' at i, the name of a member: past the closing quote, or 0.
 * Any backslash refuses the frame, as an escaped key must be. */
static inline size_t scan_key(const char *p, size_t i, size_t n)
{
	size_t k = find_special_near(p, i + 1, n);

	return k < n && p[k] == '"' ? k + 1 : 0;
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
	uint32_t *link = &doc->node[at].child;

	if ((c = peek(p, &i, n)) == close)
		return i + 1;
	/* c is p[i], the first byte of a member or element, or -1. */
	for (;;) {
		uint32_t idx = doc->count;
		struct js_node *nd;
		const char *key = NULL;
		size_t keyn = 0, k;

		if (idx >= JS_MAX_NODES)
			return 0;
		if (object) {
			if (c != '"' || !(k = scan_key(p, i, n)))
				return 0;
			key = p + i + 1;
			keyn = k - i - 2;
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
		*link = idx;
		link = &nd->next;
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
		k = scan_items(j, at, i + 1, p[i] == '{');
		j->depth--;
		return k;
	case 't':
		return scan_literal(p, i, n, nd, "true", 4, JS_TRUE);
	case 'f':
		return scan_literal(p, i, n, nd, "false", 5, JS_FALSE);
	case 'n':
		return scan_literal(p, i, n, nd, "null", 4, JS_NULL);
	}
	if (p[i] == '-' || (p[i] >= '0' && p[i] <= '9'))
		return scan_number(p, i, n, nd);
	return 0;
}

int js_parse(struct js_doc *doc, const char *p, size_t n)
{
	struct jp j = { doc, p, n, 0 };
	size_t i;

	doc->count = 1;
	doc->node[0] = (struct js_node){ .type = JS_NONE };
	i = skip_blanks(p, 0, n);
	if (!(i = scan_value(&j, 0, i)))
		return -1;
	return skip_blanks(p, i, n) == n ? 0 : -1;
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

/* Decodes the plain escapes js_parse lets through; out holds n bytes.
 * Runs between backslashes are copied whole: a message with quotes in it
 * took 1,250 instructions byte by byte. In a string body every quote is
 * escaped, so js_find_special stops at backslashes only. */
static size_t unescape(const char *s, size_t n, char *out)
{
	size_t o = 0, i = 0;

	for (;;) {
		size_t k = js_find_special(s, i, n);
		char c;

		memcpy(out + o, s + i, k - i);
		o += k - i;
		if (k + 1 >= n) {
			if (k < n)
				out[o++] = '\\';
			return o;
		}
		c = s[k + 1];
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
	/* What ing_json_unescape gives for the escapes js_parse accepts. */
	if (!(p = rt_arena_alloc(a, it->n + 1)))
		return RT_STR_LIT("");
	n = unescape(it->s, it->n, p);
	p[n] = '\0';
	return rt_str_make(p, n);
}

bool js_has_nul_escape(const char *p, size_t n)
{
	for (const char *q = p; (q = memmem(q, (size_t)(p + n - q),
					    "\\u0000", 6)); q += 6) {
		size_t bs = 0;

		/* \\u0000 is an escaped backslash, then text */
		while (q - bs > p && q[-(ptrdiff_t)bs - 1] == '\\')
			bs++;
		if (bs % 2 == 0)
			return true;
	}
	return false;
}
