/*
 * fuzz_json_scan.c: libFuzzer harness of json_scan.h, the one JSON reader,
 * against cJSON, the reader every decoder was written against. Both must
 * take the same inputs (a
 * \u0000 aside, which json_scan.h refuses for the dispatcher to reject)
 * and read the same values from them, every object's and array's text
 * read again by cJSON alike, and js_print must print what
 * cJSON_PrintUnformatted does; else abort(). js_parse_lead, which reads
 * the object a log line's payload opens with, must read the value cJSON
 * reads from the text's start when not asked for its end, up to the same
 * byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/json_same.h"

/* Every container of doc, its text parsed again by cJSON, as doc read it. */
static bool spans_same(const struct js_doc *doc)
{
	for (uint32_t k = 0; k < doc->count; k++) {
		const struct js_node *nd = &doc->node[k];
		const cJSON *it;
		uint32_t i;
		cJSON *c;
		bool same;

		if (nd->type != JS_OBJ && nd->type != JS_ARR)
			continue;
		c = cJSON_ParseWithLength(nd->s, nd->n);
		same = c && (nd->type == JS_OBJ ? cJSON_IsObject(c) :
			     cJSON_IsArray(c));
		for (i = nd->child, it = c ? c->child : NULL; same && i && it;
		     i = doc->node[i].next, it = it->next)
			same = same_tree(doc, i, it);
		same = same && !i && !it;
		cJSON_Delete(c);
		if (!same)
			return false;
	}
	return true;
}

/* js_print of the root is cJSON_PrintUnformatted of cJSON's tree. */
static bool print_same(const struct js_doc *doc, const cJSON *c)
{
	static struct rt_arena arena;
	static bool init;
	char *want = cJSON_PrintUnformatted(c);
	struct rt_str got;
	bool same;

	if (!init) {
		rt_arena_init(&arena);
		init = true;
	}
	got = js_print(&arena, doc, &doc->node[0]);
	same = want && got.p && strlen(want) == got.n &&
	       memcmp(want, got.p, got.n) == 0;
	free(want);
	rt_arena_reset(&arena);
	return same;
}

/* js_parse_lead of text is cJSON's reading of the value it opens with. */
static bool lead_same(const char *text, size_t size)
{
	static struct js_doc lead;
	const char *cend = NULL;
	cJSON *c = cJSON_ParseWithLengthOpts(text, size + 1, &cend, 0);
	size_t end = 0;
	int rc = js_parse_lead(&lead, text, size, &end);
	bool same = (rc == 0) == (c != NULL) &&
		    (!c || ((size_t)(cend - text) == end &&
			    same_tree(&lead, 0, c)));

	cJSON_Delete(c);
	return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct js_doc doc;
	char *text = malloc(size + 1);
	cJSON *c;
	int rc;

	/* A raw NUL never reaches the reader (text.c replaces control
	 * bytes first), and would end cJSON's C strings where it lies. */
	if (!text || memchr(data, 0, size)) {
		free(text);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	c = cJSON_ParseWithLengthOpts(text, size + 1, NULL, 1);
	rc = js_parse(&doc, text, size);
	if (js_has_nul_escape(text, size) ? rc == 0 :
	    (rc == 0) != (c != NULL) ||
	    (c && (!same_tree(&doc, 0, c) || !spans_same(&doc) ||
		   !print_same(&doc, c)))) {
		fprintf(stderr, "json_scan and cJSON differ (js %d, cJSON %s)\n",
			rc, c ? "read it" : "refused it");
		abort();
	}
	if (!js_has_nul_escape(text, size) && !lead_same(text, size)) {
		fprintf(stderr, "js_parse_lead and cJSON differ\n");
		abort();
	}
	cJSON_Delete(c);
	free(text);
	return 0;
}
