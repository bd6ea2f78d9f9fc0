/*
 * frame.c: the framer. Cuts a source's bytes into frames, as docs/formats.md
 * §1.4 describes: one frame per line, except that a line which
 * is just `{` or `[` opens a pretty-printed JSON document that runs to its
 * matching bracket (kubectl get events -w -o json, jq output).
 *
 * Everything is decided per complete line, so feeding a stream byte by byte
 * frames it exactly as feeding it at once. Bounds:
 *  - a line longer than max_record is cut there (RT_REC_TRUNCATED); the
 *    rest of it up to its newline is dropped;
 *  - an open document that grows past max_record is emitted cut, and its
 *    remaining lines are skipped up to its closing bracket;
 *  - an open document ends early (emitted as it stands, which then decodes
 *    as plain text) at the first line that cannot be a line of indented
 *    JSON. So a stray `{` never swallows the good lines after it.
 */
#include <string.h>

#include "frame.h"

static size_t max_record(const struct ingest *in)
{
	return in->opts.max_record;
}

static bool doc_framing(const struct ingest *in)
{
	enum rt_format f = in->opts.force;

	return f == RT_FMT_UNKNOWN || f == RT_FMT_K8S_EVENT ||
	       f == RT_FMT_EXPORTER || f == RT_FMT_HELM_HISTORY ||
	       f == RT_FMT_HELM_LIST || f == RT_FMT_HELM_STATUS ||
	       f == RT_FMT_HELM_STORAGE || f == RT_FMT_JSON ||
	       f == RT_FMT_FLUENTBIT || f == RT_FMT_VECTOR;
}

static int emit_frame(struct ingest *in, struct ing_src *src, const char *p,
		      size_t n, uint64_t off, unsigned flags, bool doc,
		      bool plain)
{
	struct ing_frame f = {
		.p = p, .n = n, .flags = flags, .doc = doc, .plain = plain,
		.src = src,
		.helm = &src->helm,
		.pos = { .source = src->name, .offset = off, .partition = -1,
			 .kafka_offset = -1 },
	};

	return ing_dispatch(in, &f);
}

static void doc_reset(struct ing_src *src)
{
	src->in_doc = src->doc_whole = src->doc_line = false;
	rt_buf_reset(&src->doc);
}

/*
 * A line inside a pretty document is indented (or is the closing bracket)
 * and starts a JSON token. A CRI line, a log line, a header do not.
 */
static bool doc_plausible(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && ing_is_space(p[i]))
		i++;
	if (i == n)
		return true;
	if (i == 0 && p[0] != '}' && p[0] != ']')
		return false;
	return strchr("\"{}[]-0123456789tfn", p[i]) != NULL;
}

static struct rt_pos file_pos(const struct ing_src *src, uint64_t off)
{
	return (struct rt_pos){ .source = src->name, .offset = off,
				.partition = -1, .kafka_offset = -1 };
}

/* The streamer's callbacks: an element of the List is a frame. */
static int doc_item(void *ctx, const char *p, size_t n, uint64_t off)
{
	struct ing_src *src = ctx;

	return emit_frame(src->in, src, p, n, off, 0, true, false);
}

static int doc_oversize(void *ctx, uint64_t off)
{
	struct ing_src *src = ctx;
	struct rt_pos pos = file_pos(src, off);

	ing_oversize(src->in, &pos);
	return src->in->stop;
}

static const struct js_stream_ops doc_ops = { doc_item, doc_oversize };

void ing_doc_init(struct ingest *in, struct ing_src *src)
{
	src->in = in;
	js_stream_init(&src->js, &doc_ops, src, max_record(in), false);
}

/* The document closed: whole, it is one frame; streamed, its items went
 * out one by one; over the bound and no List, it is skipped. */
static int doc_close(struct ingest *in, struct ing_src *src)
{
	struct rt_pos pos = file_pos(src, src->doc_off);
	int rc = 0;

	if (src->doc_whole)
		rc = emit_frame(in, src, src->doc.p, src->doc.n, src->doc_off,
				0, true, false);
	else if (!js_stream_listed(&src->js))
		ing_oversize(in, &pos);
	doc_reset(src);
	return rc ? rc : in->stop;
}

/* The document ends before its closing bracket (a line that cannot be
 * JSON, the end of a compact document's line, EOF). Whole, it is emitted
 * as it stands (and then decodes as text); an item it cut is a reject. */
static int doc_abort(struct ingest *in, struct ing_src *src)
{
	struct rt_pos pos = file_pos(src, src->js.item_off);

	if (src->doc_whole || !js_stream_listed(&src->js))
		return doc_close(in, src);
	if (src->js.in_item)
		ing_reject(in, &pos, "a List item cut short");
	doc_reset(src);
	return in->stop;
}

/* The document outgrew the bound while kept whole: the streamer reads
 * what was kept again, now streaming a root array's elements too. */
static int doc_unwhole(struct ing_src *src)
{
	size_t used;
	int rc;

	src->doc_whole = false;
	js_stream_reset(&src->js, true);
	rc = js_stream_feed(&src->js, src->doc.p, src->doc.n, src->doc_off,
			    &used);
	rt_buf_reset(&src->doc);
	return rc;
}

/* Feeds the streamer; a document kept whole keeps the bytes it read, up
 * to the closing bracket: what follows it on its line is dropped. */
static int doc_scan(struct ing_src *src, const char *p, size_t n,
		    uint64_t off, size_t *used)
{
	int rc = js_stream_feed(&src->js, p, n, off, used);

	if (rc == 0 && src->doc_whole)
		rc = rt_buf_add(&src->doc, p, *used);
	return rc;
}

/*
 * The one way bytes of an open document go; off: the stream offset of
 * p[0]. A document is kept whole while it fits the bound, so whether it
 * is one frame does not depend on how its bytes were chunked.
 */
static int doc_feed(struct ingest *in, struct ing_src *src, const char *p,
		    size_t n, uint64_t off)
{
	size_t used = 0, room = max_record(in) - src->doc.n;
	int rc = 0;

	if (!n)                 /* a spill's first piece may be empty */
		return 0;
	if (src->doc_whole && n > room) {
		if ((rc = doc_scan(src, p, room, off, &used)) == 0 &&
		    !src->js.done && !js_stream_listed(&src->js))
			rc = doc_unwhole(src);
		p += used;
		n -= used;
		off += used;
	}
	if (rc == 0 && !src->js.done)
		rc = doc_scan(src, p, n, off, &used);
	if (rc == 0 && src->doc_whole && js_stream_listed(&src->js)) {
		src->doc_whole = false;   /* a List: its items went out */
		rt_buf_reset(&src->doc);
	}
	if (rc == 0 && src->js.done)
		rc = doc_close(in, src);
	return rc ? rc : in->stop;
}

static int doc_open(struct ingest *in, struct ing_src *src, const char *p,
		    size_t n, uint64_t off, bool compact)
{
	src->in_doc = true;
	src->doc_whole = !compact;
	src->doc_line = compact;
	src->doc_off = off;
	rt_buf_reset(&src->doc);
	js_stream_reset(&src->js, compact);
	return doc_feed(in, src, p, n, off);
}

static int line_plain(struct ingest *in, struct ing_src *src, const char *p,
		      size_t n, uint64_t off, bool cut, bool plain);

static int doc_line(struct ingest *in, struct ing_src *src, const char *p,
		    size_t n, uint64_t off, bool cut)
{
	int rc;

	if (cut || !doc_plausible(p, n)) {
		if ((rc = doc_abort(in, src)) != 0)
			return rc;
		return line_plain(in, src, p, n, off, cut, false);
	}
	if ((rc = doc_feed(in, src, "\n", 1, off - 1)) != 0 || !src->in_doc)
		return rc;
	return doc_feed(in, src, p, n, off);
}

/* ---- lines over the bound ---- */

/* Whether a line over the bound, starting with p[0..n), goes to the
 * streamer: it continues an open document, or it starts a compact one. */
static bool spill_ok(const struct ingest *in, const struct ing_src *src,
		     const char *p, size_t n)
{
	if (src->in_doc)
		return !src->doc_line && doc_plausible(p, n);
	return doc_framing(in) && n && (p[0] == '{' || p[0] == '[');
}

/* The line at off, whose first n bytes are p, is over the bound. */
static int spill_start(struct ingest *in, struct ing_src *src, const char *p,
		       size_t n, uint64_t off)
{
	int rc;

	src->spill = true;
	if (!src->in_doc)
		return doc_open(in, src, p, n, off, true);
	if ((rc = doc_feed(in, src, "\n", 1, off - 1)) != 0 || !src->in_doc)
		return rc;
	return doc_feed(in, src, p, n, off);
}

static int spill_feed(struct ingest *in, struct ing_src *src, const char *p,
		      size_t n, uint64_t off)
{
	return src->in_doc ? doc_feed(in, src, p, n, off) : 0;
}

/* The newline of a spilled line: a compact document ends with it. */
static int spill_end(struct ingest *in, struct ing_src *src)
{
	src->spill = false;
	if (src->in_doc && src->doc_line)
		return doc_abort(in, src);
	return 0;
}

/* A line that is only a `{` or `[` (and blanks): it opens a document.
 * Asked of every line, and nearly every line starts with something else:
 * that is known from its first byte. */
static bool opens_doc(const char *p, size_t n)
{
	size_t i = 0, j = n;

	while (i < j && ing_is_space(p[i]))
		i++;
	if (i == j || (p[i] != '{' && p[i] != '['))
		return false;
	while (j > i + 1 && ing_is_space(p[j - 1]))
		j--;
	return j == i + 1;
}

static bool is_header(const char *p, size_t n)
{
	return n > 8 && memcmp(p, "==> ", 4) == 0 &&
	       memcmp(p + n - 4, " <==", 4) == 0;
}

/* A line outside any document. plain: ing_plain_run covered all of it. */
static int line_plain(struct ingest *in, struct ing_src *src, const char *p,
		      size_t n, uint64_t off, bool cut, bool plain)
{
	if (!cut && doc_framing(in) && opens_doc(p, n))
		return doc_open(in, src, p, n, off, false);
	if (!cut && is_header(p, n)) {
		in->stats.skipped++;
		return ing_set_header(in, src, p + 4, n - 8);
	}
	return emit_frame(in, src, p, n, off, cut ? RT_REC_TRUNCATED : 0,
			  false, plain);
}

/*
 * One complete line without its newline. over: bytes past max_record + 1
 * were dropped (the caller keeps one extra byte so that a CR right at the
 * limit does not count as truncation).
 */
static int line(struct ingest *in, struct ing_src *src, const char *p,
		size_t n, uint64_t off, bool over, bool plain)
{
	bool cut = over;

	if (!over && n && p[n - 1] == '\r')
		n--;
	if (n > max_record(in)) {
		n = max_record(in);
		cut = true;
	}
	if (src->in_doc)
		return doc_line(in, src, p, n, off, cut);
	return line_plain(in, src, p, n, off, cut, plain);
}

/* Keeps the start of a line that continues in the next chunk. */
static int stash(struct ingest *in, struct ing_src *src, const char *p,
		 size_t n)
{
	size_t cap = max_record(in) + 1, take = n;
	bool fresh = src->line.n == 0;
	int rc;

	if (fresh && !src->line_over)
		src->line_off = src->off;
	if (take > cap - src->line.n && !src->line_over &&
	    spill_ok(in, src, fresh ? p : src->line.p,
		     fresh ? n : src->line.n)) {
		rc = spill_start(in, src, src->line.p, src->line.n,
				 src->line_off);
		src->line.n = 0;
		return rc ? rc : spill_feed(in, src, p, n, src->off);
	}
	if (take > cap - src->line.n) {
		take = cap - src->line.n;
		src->line_over = true;
	}
	return rt_buf_add(&src->line, p, take);
}

static int stashed_line(struct ingest *in, struct ing_src *src)
{
	int rc = line(in, src, src->line.p, src->line.n, src->line_off,
		      src->line_over, false);

	rt_buf_reset(&src->line);
	src->line_over = false;
	return rc;
}

/*
 * A whole plain line outside a document that starts with a digit (a CRI
 * line's time, most lines read) has no CR to drop, opens no document and
 * is no header: line() would hand it to the dispatcher as it is, so it
 * goes there directly.
 */
static bool digit_led(const struct ing_src *src, const char *p)
{
	return !src->in_doc && *p >= '0' && *p <= '9';
}

int ing_frame_bytes(struct ingest *in, struct ing_src *src, const char *buf,
		    size_t n)
{
	const char *p = buf, *end = buf + n;
	size_t cap = max_record(in) + 1;
	int rc = 0;

	while (p < end && rc == 0) {
		/* Most lines are printable ASCII to their newline: one pass
		 * finds the newline and spares the decoders their check. */
		size_t run = ing_plain_run(p, (size_t)(end - p));
		bool plain = p + run < end && p[run] == '\n';
		const char *nl = plain ? p + run :
			memchr(p + run, '\n', (size_t)(end - p) - run);
		size_t len = (size_t)((nl ? nl : end) - p);

		if (src->spill) {
			rc = spill_feed(in, src, p, len, src->off);
			if (rc == 0 && nl)
				rc = spill_end(in, src);
		} else if (!nl || src->line.n || src->line_over) {
			rc = stash(in, src, p, len);
			if (rc == 0 && nl)
				rc = src->spill ? spill_end(in, src) :
				     stashed_line(in, src);
		} else if (len > cap && spill_ok(in, src, p, len)) {
			rc = spill_start(in, src, p, len, src->off);
			if (rc == 0)
				rc = spill_end(in, src);
		} else if (plain && len < cap && digit_led(src, p)) {
			rc = emit_frame(in, src, p, len, src->off, 0, false,
					true);
		} else {
			rc = line(in, src, p, len < cap ? len : cap, src->off,
				  len > cap, plain);
		}
		src->off += len + (nl != NULL);
		p = nl ? nl + 1 : end;
	}
	return rc;
}

int ing_frame_finish(struct ingest *in, struct ing_src *src)
{
	int rc = 0;

	if (src->spill)
		rc = spill_end(in, src);
	else if (src->line.n || src->line_over)
		rc = stashed_line(in, src);
	if (rc == 0 && src->in_doc)
		rc = doc_abort(in, src);
	for (int i = 0; rc == 0 && i < src->nctx; i++)
		rc = ing_flush_parts(in, src, &src->ctx[i]);
	return rc;
}
