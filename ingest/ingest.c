/*
 * ingest.c: the public face of ingest/ (include/revtrail/ingest.h): the
 * ingest object, its table of named sources, what a source's file name or
 * a `tail -F` header says about the pod behind its lines, rejects, and the
 * Kafka entry point (one already-framed value).
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

void ing_ctx_release(struct ing_ctx *ctx)
{
	free(ctx->path);
	for (int i = 0; i < 2; i++) {
		rt_buf_release(&ctx->part[i].raw);
		rt_buf_release(&ctx->part[i].text);
	}
	memset(ctx, 0, sizeof(*ctx));
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
	free(in);
}

const struct ingest_stats *ingest_stats(const struct ingest *in)
{
	return &in->stats;
}

void ing_reject(struct ingest *in, const struct rt_pos *pos,
		const char *reason)
{
	in->stats.rejects++;
	if (!in->opts.verbose)
		return;
	if (pos->partition >= 0)
		fprintf(in->opts.verbose, "reject: %s/%d:%lld: %s\n",
			pos->source ? pos->source : "-", (int)pos->partition,
			(long long)pos->kafka_offset, reason);
	else
		fprintf(in->opts.verbose, "reject: %s:%llu: %s\n",
			pos->source ? pos->source : "-",
			(unsigned long long)pos->offset, reason);
}

void ing_oversize(struct ingest *in, const struct rt_pos *pos)
{
	struct ingest_stats *st = &in->stats;

	if (!st->oversize++) {
		if (pos->partition >= 0)
			snprintf(st->oversize_at, sizeof(st->oversize_at),
				 "%s/%d:%lld", pos->source ? pos->source : "-",
				 (int)pos->partition,
				 (long long)pos->kafka_offset);
		else
			snprintf(st->oversize_at, sizeof(st->oversize_at),
				 "%s:%llu", pos->source ? pos->source : "-",
				 (unsigned long long)pos->offset);
	}
	ing_reject(in, pos, "over --max-record: skipped");
}

/* Splits s at its first two '_' into a, b and the rest. */
static bool split3(const char *s, size_t n, struct rt_str *a, struct rt_str *b,
		   struct rt_str *rest)
{
	const char *u1 = memchr(s, '_', n), *u2;

	if (!u1 || u1 == s)
		return false;
	u2 = memchr(u1 + 1, '_', n - (size_t)(u1 + 1 - s));
	if (!u2 || u2 == u1 + 1 || u2 + 1 == s + n)
		return false;
	*a = rt_str_make(s, (size_t)(u1 - s));
	*b = rt_str_make(u1 + 1, (size_t)(u2 - u1 - 1));
	*rest = rt_str_make(u2 + 1, n - (size_t)(u2 + 1 - s));
	return true;
}

static bool all_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

static bool all_digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return n > 0;
}

/* Path component that ends just before end (end points at a '/'). */
static struct rt_str dir_before(const char *path, const char *end)
{
	const char *s = end;

	while (s > path && s[-1] != '/')
		s--;
	return rt_str_make(s, (size_t)(end - s));
}

/* /var/log/pods/<ns>_<pod>_<uid>/<container>/<N>.log[.<rotation>] */
static bool pods_path(const char *path, const char *base, size_t bn,
		      struct rt_str *pod, struct rt_str *ns, struct rt_str *ctr)
{
	const char *dot = memchr(base, '.', bn);
	struct rt_str c, d, uid;

	if (!dot || !all_digits(base, (size_t)(dot - base)) ||
	    (size_t)(base + bn - dot) < 4 || memcmp(dot, ".log", 4) != 0 ||
	    (dot + 4 != base + bn && dot[4] != '.') || base - path < 4)
		return false;
	c = dir_before(path, base - 1);
	if (!c.n || c.p - path < 2)
		return false;
	d = dir_before(path, c.p - 1);
	if (!split3(d.p, d.n, ns, pod, &uid))
		return false;
	*ctr = c;
	return true;
}

/*
 * /var/log/containers/<pod>_<ns>_<container>-<id>.log. The kubelet cuts
 * the name to 251 bytes, so the id may be short: accept it when it is 64
 * hex digits, when the name was cut, or in a directory named containers.
 */
static bool containers_path(const char *path, const char *base, size_t bn,
			    struct rt_str *pod, struct rt_str *ns,
			    struct rt_str *ctr)
{
	struct rt_str rest, dir;
	const char *dash;
	size_t stem = bn - 4, idn;

	if (bn < 5 || memcmp(base + stem, ".log", 4) != 0 ||
	    !split3(base, stem, pod, ns, &rest))
		return false;
	dash = memrchr(rest.p, '-', rest.n);
	if (!dash || dash == rest.p)
		return false;
	idn = rest.n - (size_t)(dash + 1 - rest.p);
	if (!all_hex(dash + 1, idn))
		return false;
	dir = base > path ? dir_before(path, base - 1) : RT_STR_NULL;
	if (idn != 64 && stem != 251 && !rt_str_eq(dir, "containers"))
		return false;
	*ctr = rt_str_make(rest.p, (size_t)(dash - rest.p));
	return true;
}

bool ing_path_parse(const char *path, size_t n, struct rt_str *pod,
		    struct rt_str *ns, struct rt_str *container)
{
	const char *base = path;

	if (!path)
		return false;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '/')
			base = path + i + 1;
	if (pods_path(path, base, n - (size_t)(base - path), pod, ns, container))
		return true;
	return containers_path(path, base, n - (size_t)(base - path), pod, ns,
			       container);
}

static void ctx_parse(struct ing_ctx *ctx, const char *path, size_t n)
{
	if (!ing_path_parse(path, n, &ctx->pod, &ctx->ns, &ctx->container))
		ctx->pod = ctx->ns = ctx->container = RT_STR_NULL;
}

/* Evicting a context emits its pending partials first. */
static int ctx_take(struct ingest *in, struct ing_src *src, int *slot)
{
	int lru = 1, rc;

	if (src->nctx < ING_MAX_CTX) {
		*slot = src->nctx++;
		return 0;
	}
	for (int i = 2; i < src->nctx; i++)
		if (src->ctx[i].used < src->ctx[lru].used)
			lru = i;
	if ((rc = ing_flush_parts(in, src, &src->ctx[lru])) != 0)
		return rc;
	ing_ctx_release(&src->ctx[lru]);
	*slot = lru;
	return 0;
}

int ing_set_header(struct ingest *in, struct ing_src *src, const char *path,
		   size_t n)
{
	struct ing_ctx *ctx;
	int slot, rc;

	for (int i = 1; i < src->nctx; i++) {
		ctx = &src->ctx[i];
		if (strlen(ctx->path) == n && memcmp(ctx->path, path, n) == 0) {
			src->cur = i;
			ctx->used = ++in->tick;
			return 0;
		}
	}
	if ((rc = ctx_take(in, src, &slot)) != 0)
		return rc;
	ctx = &src->ctx[slot];
	memset(ctx, 0, sizeof(*ctx));
	ctx->path = strndup(path, n);
	if (!ctx->path)
		return RT_ENOMEM;
	ctx_parse(ctx, ctx->path, n);
	ctx->used = ++in->tick;
	src->cur = slot;
	return 0;
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
	ctx_parse(&s->ctx[0], name, strlen(name));
	s->next = in->srcs;
	in->srcs = s;
	return s;
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
