/*
 * detect.c: the dispatcher. Takes one frame from the framer (or one Kafka
 * value), decides its format and hands it to a decoder:
 *
 *   CRI line             -> joined per (file, stream) when partial, then
 *                           dec_logs (ing_log_emit)
 *   JSON ({ or [)        -> read by json_scan.h: docker json-file (joined
 *                           per (file, stream)), else an Event
 *                           (fast_event.c), else a log record
 *                           (ing_log_json_js: Fluent Bit, Vector, ...);
 *                           what none of them reads (Lists, arrays, Helm
 *                           objects) goes to dec_kube_json, then to
 *                           ing_log_json_js again
 *   anything else        -> dec_helm_text_line, else a plain text record
 *
 * JSON that does not parse is plain text (docs/formats.md §2.6). The frame
 * is copied into the arena once, sanitised (text.c); every decoder reads
 * that copy.
 * opts.force narrows the choice; a frame the forced decoder refuses is a
 * reject, as is a text frame made mostly of binary junk.
 */
#include <string.h>

#include "frame.h"
#include "json_scan.h"

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

static int emit_wrap(void *ctx, struct rt_record *rec)
{
	struct ingest *in = ctx;
	int rc = in->emit ? in->emit(in->emit_ctx, rec) : 0;

	if (rc)
		in->stop = rc;
	return rc;
}

static void dctx_init(struct ingest *in, struct dec_ctx *d,
		      const struct rt_record *base)
{
	d->arena = in->arena;
	d->opts = &in->opts;
	d->stats = &in->stats;
	d->base = base;
	d->hint_ts_ns = in->hint_ts_ns;
	d->emit = emit_wrap;
	d->emit_ctx = in;
	d->helm = NULL;
	d->time_range = false;
	d->payload = &in->pdoc;
}

/* The file context's pod/namespace/container, valid for this call. */
static void ctx_fill(struct ingest *in, struct ing_src *src,
		     struct ing_ctx *ctx, struct rt_record *rec)
{
	if (!ctx->pod.n)
		return;
	if (ctx == &src->ctx[0]) {
		/* Views into the source name, which outlives the ingest. */
		rec->pod = ctx->pod;
		rec->ns = ctx->ns;
		rec->container = ctx->container;
		return;
	}
	if (ctx->gen != in->gen) {
		ctx->apod = rt_arena_strdup(in->arena, ctx->pod.p, ctx->pod.n);
		ctx->ans = rt_arena_strdup(in->arena, ctx->ns.p, ctx->ns.n);
		ctx->acontainer = rt_arena_strdup(in->arena, ctx->container.p,
						  ctx->container.n);
		ctx->gen = in->gen;
	}
	rec->pod = ctx->apod;
	rec->ns = ctx->ans;
	rec->container = ctx->acontainer;
}

static void base_init(struct ingest *in, struct rt_record *rec,
		      struct ing_src *src, struct ing_ctx *ctx,
		      const struct rt_pos *pos, struct rt_str raw,
		      unsigned flags)
{
	rt_record_init(rec);
	rec->raw = raw;
	rec->message = raw;
	rec->pos = *pos;
	rec->flags = flags;
	if (src && ctx)
		ctx_fill(in, src, ctx, rec);
}

/* The frame's text where it lies when clean (the framer may know it is),
 * else a cleaned copy in the arena. */
static struct rt_str frame_view(struct ingest *in, const struct ing_frame *f,
				unsigned *flags, size_t *junk)
{
	if (f->plain)
		return rt_str_make(f->p, f->n);
	return ing_clean_view(in->arena, f->p, f->n,
			      f->flags & RT_REC_TRUNCATED, flags, junk);
}

static struct ing_ctx *cur_ctx(const struct ing_frame *f)
{
	return f->src ? &f->src->ctx[f->src->cur] : NULL;
}

static void count_flags(struct ingest *in, unsigned flags)
{
	if (!flags)             /* nearly every record: nothing to count */
		return;
	in->stats.truncated += !!(flags & RT_REC_TRUNCATED);
	in->stats.bad_utf8 += !!(flags & RT_REC_BAD_UTF8);
	in->stats.binary += !!(flags & RT_REC_BINARY);
}

static int reject(struct ingest *in, const struct ing_frame *f,
		  const char *reason)
{
	ing_reject(in, &f->pos, reason);
	return 0;
}

/* A decoder's return: the callback's stop wins, errors other than ENOMEM
 * reject the frame and let the stream go on. */
static int outcome(struct ingest *in, const struct ing_frame *f, int rc)
{
	if (in->stop)
		return in->stop;
	if (rc == RT_ENOMEM)
		return rc;
	if (rc < 0)
		return reject(in, f, rt_strerror(rc));
	return 0;
}

/* ---- partial pieces (CRI P lines, docker pieces without "\n") ---- */

/* Cuts b to at most max bytes, at a UTF-8 character boundary. */
static bool cut_to(struct rt_buf *b, size_t max)
{
	if (b->n <= max)
		return false;
	b->n = max;
	while (b->n && ((unsigned char)b->p[b->n] & 0xc0) == 0x80)
		b->n--;
	b->p[b->n] = '\0';
	return true;
}

static int part_add(struct ingest *in, const struct ing_frame *f,
		    struct ing_part *part, enum rt_format fmt, int64_t ts_ns,
		    struct rt_str raw, struct rt_str text, unsigned flags)
{
	size_t max = in->opts.max_record;
	bool cut_raw, cut_text;
	int rc = 0;

	if (!part->open) {
		part->open = true;
		part->off = f->pos.offset;
		part->ts_ns = ts_ns;
		part->flags = 0;
		part->time_range = false;
		part->pieces = 0;
		part->fmt = fmt;
		rt_buf_reset(&part->raw);
		rt_buf_reset(&part->text);
	}
	part->flags |= flags;
	part->pieces++;
	if (part->raw.n < max) {
		if (part->raw.n)
			rc = rt_buf_add(&part->raw, "\n", 1);
		if (rc == 0)
			rc = rt_buf_add(&part->raw, raw.p, raw.n);
	}
	if (rc == 0 && part->text.n <= max)
		rc = rt_buf_add(&part->text, text.p, text.n);
	/* Both are cut, whatever the first says. */
	cut_raw = cut_to(&part->raw, max);
	cut_text = cut_to(&part->text, max);
	if (cut_raw || cut_text)
		part->flags |= RT_REC_TRUNCATED;
	return rc;
}

static int part_emit(struct ingest *in, struct ing_src *src,
		     struct ing_ctx *ctx, int stream)
{
	struct ing_part *part = &ctx->part[stream];
	struct rt_pos pos = { src->name, part->off, -1, -1 };
	struct rt_str raw, text;
	struct rt_record rec;
	struct dec_ctx d;
	unsigned flags = part->flags;

	part->open = false;
	raw = rt_arena_strdup(in->arena, part->raw.p, part->raw.n);
	text = rt_arena_strdup(in->arena, part->text.p, part->text.n);
	if (!raw.p || !text.p)
		return RT_ENOMEM;
	if (part->pieces > 1)
		flags |= RT_REC_MULTILINE;
	count_flags(in, flags);
	base_init(in, &rec, src, ctx, &pos, raw, flags);
	rec.ts_ns = part->ts_ns;
	rec.stream = ing_stream_names[stream];
	if (part->fmt == RT_FMT_DOCKER)
		while (text.n && (text.p[text.n - 1] == '\n' ||
				  text.p[text.n - 1] == '\r'))
			text.n--;
	dctx_init(in, &d, &rec);
	d.helm = &src->helm;
	d.time_range = part->time_range;
	return ing_log_emit(&d, &rec, part->fmt, text);
}

int ing_flush_parts(struct ingest *in, struct ing_src *src,
		    struct ing_ctx *ctx)
{
	int rc = 0;

	for (int i = 0; i < 2 && rc == 0; i++)
		if (ctx->part[i].open)
			rc = part_emit(in, src, ctx, i);
	return in->stop ? in->stop : rc;
}

/* The other format's pieces of this stream cannot continue: emit them. */
static int part_claim(struct ingest *in, const struct ing_frame *f,
		      int stream, enum rt_format fmt, struct ing_part **out)
{
	struct ing_ctx *ctx = cur_ctx(f);

	*out = NULL;
	if (!ctx)
		return 0;
	*out = &ctx->part[stream];
	if ((*out)->open && (*out)->fmt != fmt)
		return part_emit(in, f->src, ctx, stream);
	return 0;
}

/* ---- CRI ---- */

static int cri_line(struct ingest *in, const struct ing_frame *f,
		    const struct ing_cri *c)
{
	struct ing_part *part;
	struct rt_record rec;
	struct dec_ctx d;
	struct rt_str clean, content;
	unsigned flags = f->flags;
	size_t junk = 0;
	int rc;

	if ((rc = part_claim(in, f, c->stream, RT_FMT_CRI, &part)) != 0)
		return outcome(in, f, rc);
	/* A CRI line is read with lengths only (its JSON payload is scanned,
	 * not handed to cJSON), so a clean one is used where it lies. */
	clean = frame_view(in, f, &flags, &junk);
	if (!clean.p)
		return RT_ENOMEM;
	/* The prefix is ASCII, so the content starts at the same offset. */
	content = rt_str_make(clean.p + c->content, clean.n - c->content);
	if (part && (c->partial || part->open)) {
		rc = part_add(in, f, part, RT_FMT_CRI, c->ts_ns, clean, content,
			      flags);
		if (rc == 0 && !c->partial)
			rc = part_emit(in, f->src, cur_ctx(f), c->stream);
		return outcome(in, f, rc);
	}
	count_flags(in, flags);
	base_init(in, &rec, f->src, cur_ctx(f), &f->pos, clean, flags);
	rec.ts_ns = c->ts_ns;
	rec.stream = ing_stream_names[c->stream];
	dctx_init(in, &d, &rec);
	d.helm = f->helm;
	return outcome(in, f, ing_log_emit(&d, &rec, RT_FMT_CRI, content));
}

/* ---- docker json-file ---- */

/* A docker line whose time, stream and attrs are already in base, read
 * with d (whose time_range the record or its joined line carries): its log
 * string (decoded, "" when absent) joins its stream's pieces or is emitted
 * alone. sx: the stream is stderr. */
static int docker_frame(struct ingest *in, const struct ing_frame *f,
			struct dec_ctx *d, struct rt_record *base,
			struct rt_str log, int sx)
{
	const char *s = log.p;
	size_t n = log.n;
	struct rt_str text;
	struct ing_part *part;
	int rc;

	if ((rc = part_claim(in, f, sx, RT_FMT_DOCKER, &part)) != 0)
		return outcome(in, f, rc);
	/* A piece of a long line has no trailing newline. */
	if (part && n && (s[n - 1] != '\n' || part->open)) {
		rc = part_add(in, f, part, RT_FMT_DOCKER, base->ts_ns, base->raw,
			      rt_str_make(s, n), base->flags);
		part->time_range |= d->time_range;
		if (rc == 0 && s[n - 1] == '\n')
			rc = part_emit(in, f->src, cur_ctx(f), sx);
		return outcome(in, f, rc);
	}
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	text = rt_arena_strdup(in->arena, s, n);
	if (!text.p)
		return RT_ENOMEM;
	count_flags(in, base->flags);
	d->helm = f->helm;
	return outcome(in, f, ing_log_emit(d, base, RT_FMT_DOCKER, text));
}

/* ---- JSON and text ---- */

static bool kube_allowed(enum rt_format f)
{
	return f == RT_FMT_UNKNOWN || f == RT_FMT_K8S_EVENT ||
	       f == RT_FMT_EXPORTER || f == RT_FMT_HELM_HISTORY ||
	       f == RT_FMT_HELM_LIST || f == RT_FMT_HELM_STATUS ||
	       f == RT_FMT_HELM_STORAGE;
}

static int text_frame(struct ingest *in, const struct ing_frame *f,
		      struct rt_str clean, unsigned flags, size_t junk);

/* One JSON value of a frame, obj a node of doc: Kubernetes/Helm first,
 * then log shapes. */
static int json_value(struct ingest *in, struct dec_ctx *d,
		      const struct js_doc *doc, const struct js_node *obj)
{
	enum rt_format force = in->opts.force;
	int rc = DEC_NO;

	if (kube_allowed(force))
		rc = dec_kube_json(d, doc, obj);
	if (rc == DEC_NO && (force == RT_FMT_UNKNOWN || !kube_allowed(force)))
		rc = ing_log_json_js(d, doc, obj, true);
	return rc;
}

/* `jq .items` and friends: an array of objects, each read alone. */
static int json_array(struct ingest *in, struct dec_ctx *d,
		      const struct js_doc *doc, bool *any)
{
	int rc = DEC_YES;

	for (uint32_t i = doc->node[0].child; i; i = doc->node[i].next) {
		if (doc->node[i].type != JS_OBJ)
			continue;
		*any = true;
		rc = json_value(in, d, doc, &doc->node[i]);
		if (in->stop || rc < 0)
			break;
	}
	return rc;
}

/* A frame fast_json read (doc) but did not decode. */
static int json_frame(struct ingest *in, const struct ing_frame *f,
		      const struct js_doc *doc, struct rt_str clean,
		      unsigned flags, size_t junk)
{
	enum rt_format force = in->opts.force;
	struct rt_record base;
	struct dec_ctx d;
	int rc;

	base_init(in, &base, f->src, cur_ctx(f), &f->pos, clean, flags);
	dctx_init(in, &d, &base);
	rc = json_value(in, &d, doc, &doc->node[0]);
	if (rc == DEC_NO && !in->stop && doc->node[0].type == JS_ARR &&
	    force == RT_FMT_UNKNOWN) {
		bool any = false;

		rc = json_array(in, &d, doc, &any);
		if (!any)
			return text_frame(in, f, clean, flags, junk);
		rc = rc < 0 || in->stop ? rc : DEC_YES;
	}
	count_flags(in, flags);
	if (rc != DEC_NO || in->stop)
		return outcome(in, f, rc);
	if (force != RT_FMT_UNKNOWN)
		return reject(in, f, force == RT_FMT_DOCKER
				? "not a docker json-file line"
				: "not a record of the forced format");
	return reject(in, f, "JSON value with nothing to decode");
}

static bool helm_allowed(enum rt_format f)
{
	return f == RT_FMT_UNKNOWN || f == RT_FMT_HELM_TEXT ||
	       f == RT_FMT_HELM_HISTORY || f == RT_FMT_HELM_LIST;
}

/*
 * `kubectl logs --prefix`: "[pod/NAME/CONTAINER] text". The prefix names
 * the pod and container; the message is the text after it.
 */
static void kubectl_prefix(struct rt_record *rec)
{
	const char *p = rec->message.p, *end = p + rec->message.n;
	const char *close, *slash;

	if (rec->message.n < 9 || memcmp(p, "[pod/", 5) != 0)
		return;
	close = memchr(p + 5, ']', (size_t)(end - p - 5));
	if (!close || close + 1 >= end || close[1] != ' ')
		return;
	slash = memchr(p + 5, '/', (size_t)(close - p - 5));
	if (!slash || slash == p + 5 || slash + 1 == close)
		return;
	rec->pod = rt_str_make(p + 5, (size_t)(slash - p - 5));
	rec->container = rt_str_make(slash + 1, (size_t)(close - slash - 1));
	rec->message = rt_str_make(close + 2, (size_t)(end - close - 2));
}

static int text_frame(struct ingest *in, const struct ing_frame *f,
		      struct rt_str clean, unsigned flags, size_t junk)
{
	enum rt_format force = in->opts.force;
	struct rt_record rec;
	struct dec_ctx d;
	int64_t ns = 0;
	int rc;

	count_flags(in, flags);
	if (junk * 2 > f->n)
		return reject(in, f, "binary data");
	base_init(in, &rec, f->src, cur_ctx(f), &f->pos, clean, flags);
	dctx_init(in, &d, &rec);
	d.helm = f->helm;
	if (!f->doc && helm_allowed(force)) {
		rc = dec_helm_text_line(&d, f->helm, clean.p, clean.n);
		if (rc != DEC_NO || in->stop)
			return outcome(in, f, rc);
	}
	if (force == RT_FMT_HELM_HISTORY || force == RT_FMT_HELM_LIST)
		return reject(in, f, "not a helm table line");
	if (force != RT_FMT_UNKNOWN && force != RT_FMT_TEXT &&
	    force != RT_FMT_HELM_TEXT)
		return reject(in, f, "not JSON");
	if (force == RT_FMT_HELM_TEXT) {
		rec.format = RT_FMT_HELM_TEXT;
		rec.ts_ns = dec_time(&d, ing_leading_time(clean.p, clean.n,
							  &ns), &ns);
		return outcome(in, f, dec_emit(&d, &rec));
	}
	kubectl_prefix(&rec);
	rec.ts_ns = dec_time(&d, ing_leading_time(rec.message.p,
						  rec.message.n, &ns), &ns);
	if (force == RT_FMT_TEXT) {
		rec.format = RT_FMT_TEXT;
		return outcome(in, f, dec_emit(&d, &rec));
	}
	return outcome(in, f, ing_log_emit(&d, &rec, RT_FMT_TEXT, rec.message));
}

/* Not a record, but it ends a Helm table or status block. */
static int blank_line(struct ingest *in, const struct ing_frame *f)
{
	struct rt_record rec;
	struct dec_ctx d;
	int rc = DEC_NO;

	if (!f->doc && helm_allowed(in->opts.force)) {
		base_init(in, &rec, f->src, cur_ctx(f), &f->pos,
			  RT_STR_LIT(""), 0);
		dctx_init(in, &d, &rec);
		rc = dec_helm_text_line(&d, f->helm, "", 0);
	}
	if (rc == DEC_NO && !in->stop)
		in->stats.skipped++;
	return outcome(in, f, rc);
}

/*
 * Every JSON frame is read here by json_scan.h into in->jdoc (*parsed set
 * when it is JSON): true when the frame was handled (*rc set): a docker
 * line, an Event, a log record; false leaves it to json_frame.
 */
static bool fast_json(struct ingest *in, const struct ing_frame *f,
		      struct rt_str clean, unsigned flags, int *rc,
		      bool *parsed)
{
	enum rt_format force = in->opts.force;
	struct js_doc *doc = &in->jdoc;
	const struct js_node *root;
	struct ing_event ev;
	bool event = false;
	struct rt_record base;
	struct dec_ctx d;
	int prc;

	if ((prc = js_parse(doc, clean.p, clean.n)) == RT_ENOMEM) {
		*rc = prc;
		return true;
	}
	if (!(*parsed = prc == 0) || (root = &doc->node[0])->type != JS_OBJ)
		return false;
	if (ing_is_docker_js(doc, root)) {
		const struct js_node *log = js_get(doc, root, "log");

		if (force != RT_FMT_UNKNOWN && force != RT_FMT_DOCKER)
			return false;
		base_init(in, &base, f->src, cur_ctx(f), &f->pos, clean, flags);
		dctx_init(in, &d, &base);
		ing_docker_fields_js(&d, &base, doc, root);
		*rc = docker_frame(in, f, &d, &base, js_str(in->arena, log),
				   js_str_is(js_get(doc, root, "stream"),
					     "stderr"));
		return true;
	}
	if (force == RT_FMT_UNKNOWN || force == RT_FMT_K8S_EVENT)
		event = ing_event_at(doc, root, true, &ev);
	base_init(in, &base, f->src, cur_ctx(f), &f->pos, clean, flags);
	dctx_init(in, &d, &base);
	*rc = event ? ing_event_fast(&d, doc, &ev)
		    : ing_log_json_js(&d, doc, root, false);
	if (*rc == DEC_NO)
		return false;
	count_flags(in, flags);
	*rc = outcome(in, f, *rc);
	return true;
}

/* Whether a frame starting with a bracket may be read as JSON. */
static bool json_ok(enum rt_format force)
{
	return force != RT_FMT_TEXT && force != RT_FMT_HELM_TEXT;
}

int ing_dispatch(struct ingest *in, const struct ing_frame *f)
{
	enum rt_format force = in->opts.force;
	unsigned flags = f->flags;
	struct rt_str clean;
	struct ing_cri c;
	size_t i = 0, junk = 0;
	bool json, parsed = false;
	char first;
	int rc;

	while (i < f->n && ing_is_space(f->p[i]))
		i++;
	if (i == f->n)
		return blank_line(in, f);
	first = f->p[i];
	if (!f->doc && i == 0 && first >= '0' && first <= '9' &&
	    (force == RT_FMT_UNKNOWN || force == RT_FMT_CRI) &&
	    ing_cri_parse(f->p, f->n, &c) == 0)
		return cri_line(in, f, &c);
	if (force == RT_FMT_CRI)
		return reject(in, f, "not a CRI log line");
	/* A clean line is read where it lies by the JSON scanner, which takes
	 * lengths; cJSON and the text decoders get a NUL-terminated copy. */
	clean = frame_view(in, f, &flags, &junk);
	if (!clean.p)
		return RT_ENOMEM;
	json = (first == '{' || first == '[') && json_ok(force);
	if (json && fast_json(in, f, clean, flags, &rc, &parsed))
		return rc;
	if (clean.p == f->p &&
	    !(clean = rt_arena_strdup(in->arena, clean.p, clean.n)).p)
		return RT_ENOMEM;
	if (json && js_has_nul_escape(clean.p, clean.n))
		return reject(in, f, "a \\u0000 (NUL) in a JSON string: it "
			      "would cut the text there");
	/* The nodes of in->jdoc point into the frame, which outlives this
	 * call. */
	if (parsed)
		return json_frame(in, f, &in->jdoc, clean, flags, junk);
	return text_frame(in, f, clean, flags, junk);
}
