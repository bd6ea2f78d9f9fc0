/*
 * json_scan.h (private to ingest/): an allocation-free parser for one-line
 * JSON values, for the frames that arrive by the million (Kubernetes Event
 * JSON, docker json-file lines), where building and freeing a cJSON tree
 * cost more than everything else done with the line.
 *
 * It parses into an array of nodes that point into the text, grown as the
 * value needs (a frame is bounded, so are its nodes). It accepts what
 * cJSON 1.7 accepts and reads the same values from it (same number
 * conversion, same string escapes, \u escapes and surrogate pairs
 * included, same nesting limit), and refuses the rest. A \u escape whose
 * four bytes are not all hex digits cJSON reads as a NUL that ends its C
 * string: the string is read up to it here too. A \u0000 is refused, as
 * the caller refuses such a frame (js_has_nul_escape).
 */
#ifndef REVTRAIL_INGEST_JSON_SCAN_H
#define REVTRAIL_INGEST_JSON_SCAN_H

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "revtrail/rt.h"

/* cJSON's CJSON_NESTING_LIMIT: deeper values are refused by both. */
#define JS_MAX_DEPTH 1000
/* Nodes kept between parses: a frame with more gives them back. */
#define JS_KEEP_NODES 4096

enum js_type { JS_NONE, JS_OBJ, JS_ARR, JS_STR, JS_NUM, JS_TRUE, JS_FALSE,
	       JS_NULL };

struct js_node {
	unsigned char type;     /* enum js_type */
	bool esc;               /* a string whose body holds escapes */
	uint32_t next;          /* next member or element; 0: none */
	uint32_t child;         /* first member or element; 0: none */
	const char *key;        /* member name (decoded), NULL otherwise */
	size_t keyn;
	const char *s;          /* string body between the quotes, as written;
				 * an object's or array's text, brackets
				 * included */
	size_t n;
	double num;             /* JS_NUM: as cJSON's valuedouble */
};

/* node[0] is the root; 0 doubles as "no node" since the root is no one's
 * member. A zeroed js_doc is ready; js_doc_release frees what parses
 * allocated. Names with escapes are decoded into keys, which holds as
 * many bytes as the text parsed, so it never moves during a parse. */
struct js_doc {
	struct js_node *node;
	uint32_t count, cap;
	char *keys;
	size_t keyn, keycap;
};

void js_doc_release(struct js_doc *doc);

#ifdef __SSE2__
/* Bit k: p[k] is a '"' or a backslash, for the 16 bytes at p. */
static inline unsigned js_special16(const char *p)
{
	const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	__m128i v = _mm_loadu_si128((const __m128i *)p);

	return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, q),
							_mm_cmpeq_epi8(v, bs)));
}
#endif

/* Index of the first '"' or backslash in p[i..n), or n: where a JSON
 * string body ends or escapes, 16 bytes at a time. */
static inline size_t js_find_special(const char *p, size_t i, size_t n)
{
#ifdef __SSE2__
	for (; i + 16 <= n; i += 16) {
		unsigned m = js_special16(p + i);

		if (m)
			return i + (unsigned)__builtin_ctz(m);
	}
#endif
	while (i < n && p[i] != '"' && p[i] != '\\')
		i++;
	return i;
}

/* Parses all of p[0..n) (blanks around the value allowed). 0, RT_EPARSE
 * when it is not JSON cJSON would read, or RT_ENOMEM. */
int js_parse(struct js_doc *doc, const char *p, size_t n);

/* js_parse of the value p[0..n) begins with, whatever follows it, as
 * cJSON_ParseWithLength reads a value: *end is the offset just past it. */
int js_parse_lead(struct js_doc *doc, const char *p, size_t n, size_t *end);

/* The first member of obj named key (keyn bytes), as
 * cJSON_GetObjectItemCaseSensitive finds it; NULL when obj is NULL or not
 * an object. */
const struct js_node *js_get_n(const struct js_doc *doc,
			       const struct js_node *obj, const char *key,
			       size_t keyn);

/* js_get_n of a C string: inline, so a literal's length is known when
 * compiled rather than counted by strlen at each call. */
static inline const struct js_node *js_get(const struct js_doc *doc,
					   const struct js_node *obj,
					   const char *key)
{
	return js_get_n(doc, obj, key, strlen(key));
}

/* Names to pick, none empty, at most JS_PICK_MAX; hashed once into a
 * js_keyset by js_keyset_init (which keeps the pointer to keys). */
#define JS_PICK_MAX 64
#define JS_PICK_SLOTS 64
struct js_key {
	const char *s;
	size_t n;
};
#define JS_KEY(lit) { lit, sizeof(lit) - 1 }
struct js_keyset {
	const struct js_key *keys;
	size_t n;
	unsigned char first[JS_PICK_SLOTS];     /* 1 + a slot's first key */
	unsigned char next[JS_PICK_MAX];        /* 1 + the slot's next key */
};
void js_keyset_init(struct js_keyset *set, const struct js_key *keys,
		    size_t n);

/* Several members at once, in one pass: out[k] (set->n of them) is what
 * js_get would find for set->keys[k]. */
void js_pick(const struct js_doc *doc, const struct js_node *obj,
	     const struct js_keyset *set, const struct js_node **out);

static inline bool js_is(const struct js_node *it, enum js_type t)
{
	return it && it->type == t;
}

/* A string with at least one character, else NULL. */
static inline const struct js_node *js_nonempty(const struct js_node *it)
{
	return it && it->type == JS_STR && it->n ? it : NULL;
}

/* The decoded value of a string into buf (cap bytes, NUL-terminated):
 * its length, or -1 when it is not a string or does not fit. */
int js_decode(const struct js_node *it, char *buf, size_t cap);

/* js_str_is_n of a string with escapes. */
bool js_str_is_esc(const struct js_node *it, const char *lit, size_t len);

/* A string equal to lit (len bytes) once decoded. Inline, since most
 * strings asked about are unescaped and of another length. */
static inline bool js_str_is_n(const struct js_node *it, const char *lit,
			       size_t len)
{
	if (!it || it->type != JS_STR)
		return false;
	if (it->esc)
		return js_str_is_esc(it, lit, len);
	return it->n == len && !memcmp(it->s, lit, len);
}

/* js_str_is_n of a C string, inline for the same reason as js_get. */
static inline bool js_str_is(const struct js_node *it, const char *lit)
{
	return js_str_is_n(it, lit, strlen(lit));
}

/* js_str of a string with escapes, or of no string. */
struct rt_str js_str_esc(struct rt_arena *a, const struct js_node *it);

/* The decoded value of a string: a view into the parsed
 * text when it has no escapes (that text must live as long as the result,
 * as the frame's arena copy does), else decoded into the arena; "" (a
 * static empty string) when it is not a string or on ENOMEM. Inline, as
 * nearly every string is the view: a call cost an Event 110 instructions. */
static inline struct rt_str js_str(struct rt_arena *a,
				   const struct js_node *it)
{
	if (it && it->type == JS_STR && !it->esc)
		return rt_str_make(it->s, it->n);
	return js_str_esc(a, it);
}

/* json_print.c: v as cJSON_PrintUnformatted prints the tree cJSON reads
 * from v's text, byte for byte, in the arena; RT_STR_NULL on ENOMEM. */
struct rt_str js_print(struct rt_arena *a, const struct js_doc *doc,
		       const struct js_node *v);

/* Whether text holds a \u0000 escape (not an escaped backslash before
 * "u0000"). cJSON decodes it into a NUL that ends its C string there, so
 * a name "a\u0000b" would read as "a": such a record is refused, and
 * js_parse refuses it. */
bool js_has_nul_escape(const char *p, size_t n);

/* Whether a string (a node of a parsed doc) holds a \u escape whose four
 * bytes are not all hex digits, which js_parse reads as the end of the
 * string (see above): for a caller that would rather not read such a
 * text as JSON at all. */
bool js_str_cut(const struct js_node *it);

#endif
