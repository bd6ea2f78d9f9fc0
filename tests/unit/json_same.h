/*
 * json_same.h: whether json_scan.h's reading of a value is cJSON's, node
 * for node. Shared by test_ingest_fast.c and the fuzz harness
 * fuzz_json_scan.c; also a growing text buffer for building inputs.
 */
#ifndef REVTRAIL_TEST_JSON_SAME_H
#define REVTRAIL_TEST_JSON_SAME_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "../../ingest/json_scan.h"

struct dump {
	char *p;
	size_t n, cap;
};

static inline void put(struct dump *d, const char *s, size_t n)
{
	if (d->n + n + 1 > d->cap) {
		d->cap = (d->n + n + 1) * 2;
		if (!(d->p = realloc(d->p, d->cap)))
			abort();
	}
	memcpy(d->p + d->n, s, n);
	d->n += n;
	d->p[d->n] = '\0';
}

/* Whether node k of doc is the value cJSON read as c: same type, same
 * names, same strings as C strings (cut at a NUL as cJSON's are), same
 * numbers, same members in the same order. */
static inline bool same_tree(const struct js_doc *doc, uint32_t k, const cJSON *c)
{
	const struct js_node *nd = &doc->node[k];
	char buf[256];
	uint32_t i;

	if (nd->key && (!c->string || strlen(c->string) != nd->keyn ||
			memcmp(c->string, nd->key, nd->keyn)))
		return false;
	switch (nd->type) {
	case JS_STR: {
		char *b = nd->n < sizeof(buf) ? buf : malloc(nd->n + 1);
		bool same = b && cJSON_IsString(c) &&
			    js_decode(nd, b, nd->n + 1) >= 0 &&
			    strcmp(b, c->valuestring) == 0;

		if (b != buf)
			free(b);
		return same;
	}
	case JS_NUM:
		return cJSON_IsNumber(c) && (nd->num == c->valuedouble ||
					     (nd->num != nd->num &&
					      c->valuedouble != c->valuedouble));
	case JS_TRUE:
		return cJSON_IsTrue(c);
	case JS_FALSE:
		return cJSON_IsFalse(c);
	case JS_NULL:
		return cJSON_IsNull(c);
	}
	if (nd->type == JS_OBJ ? !cJSON_IsObject(c) : !cJSON_IsArray(c))
		return false;
	for (i = nd->child, c = c->child; i && c; i = doc->node[i].next,
	     c = c->next)
		if (!same_tree(doc, i, c))
			return false;
	return !i && !c;
}

#endif
