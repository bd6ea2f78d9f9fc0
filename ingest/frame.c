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
	src->in_doc = src->doc_skip = src->doc_str = src->doc_esc = false;
	src->doc_depth = 0;
	src->doc_flags = 0;
	src->doc.n = 0;
}

/*
 * Brackets outside strings. Returns the index just after the bracket that
 * closes the document, or 0 while it stays open. A JSON string cannot hold
 * a raw newline, so string state does not carry over lines.
 */
static size_t doc_scan(struct ing_src *src, const char *p, size_t n)
{
	src->doc_str = src->doc_esc = false;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (src->doc_str) {
			if (src->doc_esc)
				src->doc_esc = false;
			else if (c == '\\')
				src->doc_esc = true;
			else if (c == '"')
				src->doc_str = false;
		} else if (c == '"') {
			src->doc_str = true;
		} else if (c == '{' || c == '[') {
			src->doc_depth++;
		} else if ((c == '}' || c == ']') && --src->doc_depth == 0) {
			return i + 1;
		}
	}
	return 0;
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

static int doc_emit(struct ingest *in, struct ing_src *src)
{
	int rc = 0;

	if (!src->doc_skip)
		rc = emit_frame(in, src, src->doc.p, src->doc.n, src->doc_off,
				src->doc_flags, true, false);
	doc_reset(src);
	return rc;
}

static int doc_append(struct ingest *in, struct ing_src *src, const char *p,
		      size_t n)
{
	size_t room = max_record(in) - src->doc.n;
	int rc;

	if (n + 1 <= room) {
		if ((rc = ing_buf_put(&src->doc, "\n", 1)) < 0)
			return rc;
		return ing_buf_put(&src->doc, p, n);
	}
	/* Over the limit: emit the cut document now, skip the rest of it. */
	if (room > 0 && (rc = ing_buf_put(&src->doc, "\n", 1)) < 0)
		return rc;
	if (room > 1 && (rc = ing_buf_put(&src->doc, p, room - 1)) < 0)
		return rc;
	rc = emit_frame(in, src, src->doc.p, src->doc.n, src->doc_off,
			src->doc_flags | RT_REC_TRUNCATED, true, false);
	src->doc_skip = true;
	src->doc.n = 0;
	return rc;
}

static int line_plain(struct ingest *in, struct ing_src *src, const char *p,
		      size_t n, uint64_t off, bool cut, bool plain);

static int doc_line(struct ingest *in, struct ing_src *src, const char *p,
		    size_t n, uint64_t off, bool cut)
{
	size_t end;
	int rc;

	if (!doc_plausible(p, n)) {
		if ((rc = doc_emit(in, src)) != 0)
			return rc;
		return line_plain(in, src, p, n, off, cut, false);
	}
	if (cut)
		src->doc_flags |= RT_REC_TRUNCATED;
	end = doc_scan(src, p, n);
	if (!src->doc_skip && (rc = doc_append(in, src, p, n)) != 0)
		return rc;
	return end ? doc_emit(in, src) : 0;
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
	if (!cut && doc_framing(in) && opens_doc(p, n)) {
		src->in_doc = true;
		src->doc_off = off;
		src->doc_depth = 1;
		src->doc.n = 0;
		return ing_buf_put(&src->doc, p, n);
	}
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

	if (src->line.n == 0 && !src->line_over)
		src->line_off = src->off;
	if (take > cap - src->line.n) {
		take = cap - src->line.n;
		src->line_over = true;
	}
	return ing_buf_put(&src->line, p, take);
}

static int stashed_line(struct ingest *in, struct ing_src *src)
{
	int rc = line(in, src, src->line.p, src->line.n, src->line_off,
		      src->line_over, false);

	src->line.n = 0;
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

		if (!nl || src->line.n || src->line_over) {
			rc = stash(in, src, p, len);
			if (rc == 0 && nl)
				rc = stashed_line(in, src);
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

	if (src->line.n || src->line_over)
		rc = stashed_line(in, src);
	if (rc == 0 && src->in_doc)
		rc = doc_emit(in, src);
	for (int i = 0; rc == 0 && i < src->nctx; i++)
		rc = ing_flush_parts(in, src, &src->ctx[i]);
	return rc;
}
