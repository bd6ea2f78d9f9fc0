/*
 * json_stream.h (private to ingest/): the List streamer. Reads one JSON
 * document a piece at a time, any size, and hands out the elements of its
 * List one by one: the `items` array of a root object (a `kind: List`,
 * `EventList`, `SecretList`, ...), or the elements of a root array when
 * asked to. Nothing but the element in progress is kept, so memory is the
 * size of the largest element, not of the document.
 *
 * It tracks structure only (depth, strings, escapes) and does not check
 * the JSON: an element is handed out as the bytes it spans, blanks outside
 * strings dropped, and the decoders judge it as they judge any frame.
 * Feeding a document a byte at a time gives what feeding it at once does.
 */
#ifndef REVTRAIL_INGEST_JSON_STREAM_H
#define REVTRAIL_INGEST_JSON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What the streamer found. Both return 0 or a non-zero code that stops
 * the feed (js_stream_feed returns it). item's bytes are valid during the
 * call only; off is the stream offset of the element's first byte.
 */
struct js_stream_ops {
	int (*item)(void *ctx, const char *p, size_t n, uint64_t off);
	/* An element over the bound, skipped; off as for item. */
	int (*oversize)(void *ctx, uint64_t off);
};

struct js_stream {
	const struct js_stream_ops *ops;
	void *ctx;
	size_t max;             /* an element's bound, in its kept bytes */
	bool arrays;            /* stream a root array's elements */

	char root;              /* '{' or '[' once seen, else 0 */
	bool done;              /* the root closed */
	bool str, esc;
	int depth;

	/* Members of a root object: the key being read, and what is known
	 * of `kind` (a kind that does not end in "List", seen before
	 * `items`, means the object is not a List). */
	int member;             /* JS_M_*: where a root member stands */
	char key[8];
	size_t keyn;            /* > sizeof(key): not a key we look for */
	bool kind_value, not_list;
	char kind[8];           /* the last bytes of kind's value */
	size_t kindn;

	/* The streamed array: its elements open at depth list_depth. */
	int list_depth;         /* 0: none open */
	bool listed;            /* some array was streamed */
	uint64_t items, skipped;        /* elements handed out, oversize */

	/* The element in progress. */
	bool in_item, item_over;
	uint64_t item_off;
	char *buf;
	size_t n, cap;
};

/* Ready to read a document; ops and ctx are kept. */
void js_stream_init(struct js_stream *s, const struct js_stream_ops *ops,
		    void *ctx, size_t max, bool arrays);
/* Frees the element buffer; s may be fed again after js_stream_init. */
void js_stream_release(struct js_stream *s);
/* Starts over on a new document, keeping the buffer and the settings. */
void js_stream_reset(struct js_stream *s, bool arrays);

/*
 * Feeds p[0..n), whose first byte is at stream offset off. Stops just
 * after the byte that closes the document (s->done) and sets *used to the
 * bytes read. Returns 0, RT_ENOMEM, or what a callback returned.
 */
int js_stream_feed(struct js_stream *s, const char *p, size_t n,
		   uint64_t off, size_t *used);

/* Whether the document, as read so far, opened a List array. */
static inline bool js_stream_listed(const struct js_stream *s)
{
	return s->listed;
}

#endif
