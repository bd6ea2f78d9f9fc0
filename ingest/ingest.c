/*
 * ingest.c: the public face of ingest/ (include/revtrail/ingest.h): the
 * ingest object, its table of named sources and the Kafka entry point
 * (one already-framed value). What a file name or a `tail -F` header says
 * about the pod behind its lines is ctx.c; rejects are counted in
 * detect.c, where they are found.
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"

/* The streamer's callbacks for a Kafka value: each List item a frame at
 * the value's position. */
static int msg_item(void *ctx, const char *p, size_t n, uint64_t off)
{
	struct ingest *in = ctx;
	struct ing_frame f = *in->msg;

	(void)off;
	f.p = p;
	f.n = n;
	f.doc = true;
	return ing_dispatch(in, &f);
}

static int msg_oversize(void *ctx, uint64_t off)
{
	struct ingest *in = ctx;

	(void)off;
	ing_oversize(in, &in->msg->pos);
	return in->stop;
}

static const struct js_stream_ops msg_ops = { msg_item, msg_oversize };

struct ingest *ingest_new(const struct ingest_opts *opts)
{
	struct ingest *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	if (opts)
		in->opts = *opts;
	if (!in->opts.max_record)
		in->opts.max_record = INGEST_DEFAULT_MAX_RECORD;
	js_stream_init(&in->msg_js, &msg_ops, in, in->opts.max_record, true);
	return in;
}

static void src_free(struct ing_src *src)
{
	for (int i = 0; i < src->nctx; i++)
		ing_ctx_release(&src->ctx[i]);
	rt_buf_release(&src->line);
	rt_buf_release(&src->doc);
	js_stream_release(&src->js);
	free(src);
}

void ingest_free(struct ingest *in)
{
	struct ing_src *s, *next;

	if (!in)
		return;
	for (s = in->srcs; s; s = next) {
		next = s->next;
		src_free(s);
	}
	js_stream_release(&in->msg_js);
	js_doc_release(&in->jdoc);
	js_doc_release(&in->pdoc);
	free(in);
}

const struct ingest_stats *ingest_stats(const struct ingest *in)
{
	return &in->stats;
}

static struct ing_src *src_get(struct ingest *in, const char *name)
{
	struct ing_src *s;

	for (s = in->srcs; s; s = s->next)
		if (s->name == name)
			return s;
	for (s = in->srcs; s; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->name = name;
	s->nctx = 1;
	ing_doc_init(in, s);
	ing_ctx_parse(&s->ctx[0], name, strlen(name));
	s->next = in->srcs;
	in->srcs = s;
	return s;
}

int ingest_set_offset(struct ingest *in, const char *name, uint64_t off)
{
	struct ing_src *src = src_get(in, name);

	if (!src)
		return RT_ENOMEM;
	src->off = off;
	return 0;
}

static void src_drop(struct ingest *in, struct ing_src *src)
{
	for (struct ing_src **pp = &in->srcs; *pp; pp = &(*pp)->next)
		if (*pp == src) {
			*pp = src->next;
			break;
		}
	src_free(src);
}

static void call_begin(struct ingest *in, struct rt_arena *arena,
		       ingest_emit_fn emit, void *ctx)
{
	in->gen++;
	in->arena = arena;
	in->emit = emit;
	in->emit_ctx = ctx;
	in->stop = 0;
}

int ingest_feed(struct ingest *in, const char *source, const char *buf,
		size_t n, struct rt_arena *arena, ingest_emit_fn emit, void *ctx)
{
	struct ing_src *src;
	int rc;

	if (!source)
		source = "-";
	src = src_get(in, source);
	if (!src)
		return RT_ENOMEM;
	call_begin(in, arena, emit, ctx);
	in->stats.bytes += n;
	rc = ing_frame_bytes(in, src, buf, n);
	return in->stop ? in->stop : rc;
}

int ingest_finish(struct ingest *in, const char *source,
		  struct rt_arena *arena, ingest_emit_fn emit, void *ctx)
{
	struct ing_src *src;
	int rc;

	if (!source)
		source = "-";
	src = src_get(in, source);
	if (!src)
		return RT_ENOMEM;
	call_begin(in, arena, emit, ctx);
	rc = ing_frame_finish(in, src);
	dec_helm_text_end(&in->stats, &src->helm);
	src_drop(in, src);
	return in->stop ? in->stop : rc;
}

static bool json_led(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && ing_is_space(p[i]))
		i++;
	return i < n && (p[i] == '{' || p[i] == '[');
}

/* A JSON value over the bound: a List's items, each within it, are read
 * one by one; anything else is skipped and counted. */
static int msg_stream(struct ingest *in, const struct ing_frame *f)
{
	size_t used;
	int rc;

	in->msg = f;
	js_stream_reset(&in->msg_js, true);
	rc = js_stream_feed(&in->msg_js, f->p, f->n, 0, &used);
	if (rc == 0 && !js_stream_listed(&in->msg_js))
		ing_oversize(in, &f->pos);
	else if (rc == 0 && in->msg_js.in_item)
		ing_reject(in, &f->pos, "a List item cut short");
	in->msg = NULL;
	return rc;
}

int ingest_decode_message(struct ingest *in, const char *buf, size_t n,
			  const char *key, size_t keylen, int64_t kafka_ts_ns,
			  const struct rt_pos *pos, struct rt_arena *arena,
			  ingest_emit_fn emit, void *ctx)
{
	struct ing_frame f = { .p = buf, .n = n, .helm = &in->msg_helm };
	unsigned flags = 0;
	int rc;

	(void)key;
	(void)keylen;
	call_begin(in, arena, emit, ctx);
	in->stats.bytes += n;
	if (pos)
		f.pos = *pos;
	else
		f.pos = (struct rt_pos){ "-", 0, -1, -1 };
	while (f.n && ing_is_space(f.p[f.n - 1]))
		f.n--;
	in->hint_ts_ns = kafka_ts_ns;
	if (f.n > in->opts.max_record && json_led(f.p, f.n)) {
		rc = msg_stream(in, &f);
		in->hint_ts_ns = 0;
		return in->stop ? in->stop : rc;
	}
	if (f.n > in->opts.max_record) {
		f.n = in->opts.max_record;
		flags |= RT_REC_TRUNCATED;
	}
	f.flags = flags;
	/* A value may hold a pretty document: newlines inside are framing-
	 * neutral, so treat any value with one as a document. */
	f.doc = memchr(f.p, '\n', f.n) != NULL;
	rc = ing_dispatch(in, &f);
	in->hint_ts_ns = 0;
	return in->stop ? in->stop : rc;
}
