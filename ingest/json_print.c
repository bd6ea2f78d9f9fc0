/*
 * json_print.c: a json_scan.h value printed compact, byte for byte as
 * cJSON_PrintUnformatted prints the tree cJSON parses from the same text
 * (cJSON 1.7: strings cut at a NUL, control bytes as \u00xx in lower case,
 * numbers as %1.15g, or %1.17g when that does not read back). An Event
 * item of a List keeps this as its raw text without a cJSON tree being
 * built and freed for it.
 */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"

struct pbuf {
	char *p;
	size_t n, cap;
	bool nomem;
};

static void put(struct pbuf *b, const char *s, size_t n)
{
	char *grown;

	if (b->nomem)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;

		if (!(grown = realloc(b->p, cap))) {
			b->nomem = true;
			return;
		}
		b->p = grown;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

/* cJSON's print_string_ptr of s (n bytes, no NUL in them). */
static void put_string(struct pbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6] = { '\\', 0, '0', '0', 0, 0 };
		size_t en = 2;

		if (c >= 32 && c != '"' && c != '\\')
			continue;
		put(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'u';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			en = 6;
		}
		put(b, esc, en);
	}
	put(b, s + run, n - run);
	put(b, "\"", 1);
}

/* A string node (or a name, raw = false) as cJSON holds it: decoded and
 * cut at its first NUL. */
static void put_decoded(struct pbuf *b, const struct js_node *it)
{
	char small[256], *buf = small;
	int n;

	if (!it->esc && !memchr(it->s, '\0', it->n)) {
		put_string(b, it->s, it->n);
		return;
	}
	if (it->n >= sizeof(small) && !(buf = malloc(it->n + 1))) {
		b->nomem = true;
		return;
	}
	if ((n = js_decode(it, buf, it->n + 1)) >= 0)
		put_string(b, buf, strlen(buf));
	else
		b->nomem = true;
	if (buf != small)
		free(buf);
}

/* cJSON's compare_double. */
static bool same_double(double a, double b)
{
	double max = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	return fabs(a - b) <= max * DBL_EPSILON;
}

/* cJSON 1.7.15's print_number (later versions print a value equal to its
 * int with %d, which differs only for -0: test_ingest_jsprint.c tells). */
static void put_number(struct pbuf *b, double d)
{
	char s[32];
	char point = localeconv()->decimal_point[0];
	double back;
	int n;

	if (isnan(d) || isinf(d))
		n = snprintf(s, sizeof(s), "null");
	else {
		n = snprintf(s, sizeof(s), "%1.15g", d);
		if (sscanf(s, "%lg", &back) != 1 || !same_double(back, d))
			n = snprintf(s, sizeof(s), "%1.17g", d);
	}
	for (int i = 0; i < n; i++)
		if (s[i] == point)
			s[i] = '.';
	put(b, s, (size_t)n);
}

static void put_value(struct pbuf *b, const struct js_doc *doc,
		      const struct js_node *v)
{
	bool obj = v->type == JS_OBJ;

	switch (v->type) {
	case JS_NULL: put(b, "null", 4); return;
	case JS_TRUE: put(b, "true", 4); return;
	case JS_FALSE: put(b, "false", 5); return;
	case JS_NUM: put_number(b, v->num); return;
	case JS_STR: put_decoded(b, v); return;
	default: break;
	}
	put(b, obj ? "{" : "[", 1);
	for (uint32_t i = v->child; i && !b->nomem; i = doc->node[i].next) {
		const struct js_node *m = &doc->node[i];

		if (i != v->child)
			put(b, ",", 1);
		if (obj) {
			const char *nul = m->keyn ?
					  memchr(m->key, '\0', m->keyn) : NULL;

			put_string(b, m->keyn ? m->key : "",
				   nul ? (size_t)(nul - m->key) : m->keyn);
			put(b, ":", 1);
		}
		put_value(b, doc, m);
	}
	put(b, obj ? "}" : "]", 1);
}

struct rt_str js_print(struct rt_arena *a, const struct js_doc *doc,
		       const struct js_node *v)
{
	struct pbuf b = { 0 };
	struct rt_str s = RT_STR_NULL;

	put_value(&b, doc, v);
	if (!b.nomem)
		s = rt_arena_strdup(a, b.p ? b.p : "", b.n);
	free(b.p);
	return s;
}
