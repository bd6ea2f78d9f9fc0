/*
 * fuzz_list_stream.c: libFuzzer harness for the List streamer
 * (ingest/json_stream.c). The first byte chooses the split of the input
 * into two reads, the element bound and whether a root array streams;
 * the rest is the document. Checked, else abort():
 *  - fed at once, fed split in two and fed a byte at a time, the
 *    elements, their offsets and the oversize reports are the same, and
 *    the document ends at the same byte;
 *  - every element offset is a '{' or '[' of the input;
 *  - when cJSON reads the whole input as a List the streamer follows (a
 *    root array when asked, or an object with one `items` array and no
 *    `kind`), the elements handed out are its object and array elements,
 *    in order, each equal to it as cJSON reads it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "../../ingest/json_stream.h"

struct out {
	char *p;
	size_t n, cap;
	const char *doc;        /* the input, for the offset check */
	size_t len;
	cJSON *want;            /* the elements expected, or NULL */
	const cJSON *next;
	int oversize;
};

static void out_put(struct out *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2;
		if (!(o->p = realloc(o->p, o->cap)))
			abort();
	}
	memcpy(o->p + o->n, p, n);
	o->n += n;
}

/* Skips the elements the streamer does not hand out (scalars). */
static const cJSON *next_container(const cJSON *it)
{
	while (it && !cJSON_IsObject(it) && !cJSON_IsArray(it))
		it = it->next;
	return it;
}

/* cJSON_Compare looks members up by key, which duplicate keys defeat:
 * compare in order instead. */
static bool same(const cJSON *a, const cJSON *b)
{
	if ((a->type & 0xff) != (b->type & 0xff) ||
	    !a->string != !b->string || (a->string && strcmp(a->string, b->string)))
		return false;
	if (cJSON_IsString(a))
		return !strcmp(a->valuestring, b->valuestring);
	if (cJSON_IsNumber(a))
		return a->valuedouble == b->valuedouble ||
		       (a->valuedouble != a->valuedouble &&
			b->valuedouble != b->valuedouble);
	for (a = a->child, b = b->child; a && b; a = a->next, b = b->next)
		if (!same(a, b))
			return false;
	return !a && !b;
}

static int on_item(void *ctx, const char *p, size_t n, uint64_t off)
{
	struct out *o = ctx;

	if (off >= o->len || (o->doc[off] != '{' && o->doc[off] != '['))
		abort();
	out_put(o, &off, sizeof(off));
	out_put(o, &n, sizeof(n));
	out_put(o, p, n);
	if (o->want && !o->oversize) {
		cJSON *got = cJSON_ParseWithLength(p, n);

		o->next = next_container(o->next);
		if (!got || !o->next || !same(got, o->next)) {
			fprintf(stderr, "element differs from cJSON's: %.*s\n",
				(int)n, p);
			abort();
		}
		o->next = o->next->next;
		cJSON_Delete(got);
	}
	return 0;
}

static int on_over(void *ctx, uint64_t off)
{
	struct out *o = ctx;

	if (off >= o->len || (o->doc[off] != '{' && o->doc[off] != '['))
		abort();
	o->oversize = 1;        /* from here the oracle cannot follow */
	out_put(o, "!", 1);
	out_put(o, &off, sizeof(off));
	return 0;
}

static const struct js_stream_ops ops = { on_item, on_over };

/* Feeds p in reads of at most step bytes (0: at once), split first at
 * cut; returns where the document ended, or len. */
static size_t run(struct out *o, const char *p, size_t len, size_t cut,
		  size_t step, size_t max, bool arrays)
{
	struct js_stream js;
	size_t at = 0;

	js_stream_init(&js, &ops, o, max, arrays);
	while (at < len && !js.done) {
		size_t k = len - at, used;

		if (at < cut && k > cut - at)
			k = cut - at;
		if (step && k > step)
			k = step;
		js_stream_feed(&js, p + at, k, at, &used);
		if (used != k && !js.done)
			abort();
		at += used;
	}
	js_stream_release(&js);
	return at;
}

/* The elements cJSON says the streamer must hand out, or NULL. */
static cJSON *expected(const char *p, size_t n, bool arrays, cJSON **root)
{
	const cJSON *items, *m;
	int count = 0;

	*root = cJSON_ParseWithLength(p, n);
	if (!*root)
		return NULL;
	if (cJSON_IsArray(*root))
		return arrays ? *root : NULL;
	/* An escaped key, or one cut by a NUL (cJSON keeps C strings), may
	 * be "items" to cJSON, never to the streamer. */
	if (!cJSON_IsObject(*root) || memchr(p, '\\', n) ||
	    memchr(p, 0, n) ||
	    cJSON_GetObjectItemCaseSensitive(*root, "kind"))
		return NULL;
	cJSON_ArrayForEach(m, *root)
		count += !strcmp(m->string, "items");
	items = cJSON_GetObjectItemCaseSensitive(*root, "items");
	return count == 1 && cJSON_IsArray(items) ? (cJSON *)items : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct out once = { 0 }, two = { 0 }, bytes = { 0 };
	const char *p = (const char *)data + 1;
	size_t len = size ? size - 1 : 0, end1, end2, end3;
	size_t max = size ? (size_t)(data[0] & 0x3f) * 8 + 1 : 1;
	bool arrays = size && (data[0] & 0x40);
	size_t cut = size ? (size_t)data[0] * 7 % (len + 1) : 0;
	cJSON *root = NULL, *want;

	if (!size)
		return 0;
	if (data[0] & 0x80)
		max = 1 << 20;          /* nothing over: the oracle runs */
	once.doc = two.doc = bytes.doc = p;
	once.len = two.len = bytes.len = len;
	want = expected(p, len, arrays, &root);
	once.want = want;
	once.next = want ? want->child : NULL;
	end1 = run(&once, p, len, len, 0, max, arrays);
	end2 = run(&two, p, len, cut, 0, max, arrays);
	end3 = run(&bytes, p, len, len, 1, max, arrays);
	if (end1 != end2 || end1 != end3 || once.n != two.n ||
	    once.n != bytes.n || (once.n && (memcmp(once.p, two.p, once.n) ||
					     memcmp(once.p, bytes.p, once.n))))
		abort();
	if (want && !once.oversize && next_container(once.next))
		abort();        /* an element cJSON saw was not handed out */
	cJSON_Delete(root);
	free(once.p);
	free(two.p);
	free(bytes.p);
	return 0;
}
