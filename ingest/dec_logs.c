/*
 * dec_logs.c: container log shapes (docs/formats.md §2): CRI lines, docker
 * json-file, Fluent Bit and Vector records, and any other JSON object (an
 * application's structured log, a proxy's JSON access log).
 *
 * CRI content and docker `log` strings are often JSON themselves
 * (`... stdout F {"level":"error","msg":"db timeout"}`); such a payload is
 * read by json_scan.h, the one JSON reader, as the records are, and its
 * message and level taken by the same rule (payload_json).
 *
 * Structured loggers put the error beside the message, not in it: zap and
 * logrus in "error", slog in "err", controllers in "reason", Python's JSON
 * formatters in "exc_info", Java encoders in "stack_trace" or an "error"
 * object ({"type":..,"message":..}), ECS in "error.type"/"error.message".
 * The rules read one message, so those causes are joined to it
 * ("msg: cause: cause"), best first, each once.
 */
#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>      /* defers256, when the CPU has AVX2 */
#endif
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "frame.h"
#include "json_scan.h"

const struct rt_str ing_stream_names[2] = {
	RT_STR_LIT("stdout"), RT_STR_LIT("stderr"),
};

/* The keys a message, a cause or a level is read from, best first. */
static const char *const msg_keys[] = {
	"msg", "message", "log", "MESSAGE", "Message", "@m", "@mt", NULL,
};
static const char *const cause_keys[] = {
	"error", "err", "error.type", "error.message", "exception", "exc_info",
	"reason", "stack_trace", "error.stack_trace", "stack", "@x", "thrown",
	NULL,
};
/* Inside an error object: what it is, then what it says. */
static const char *const obj_type_keys[] = {
	"type", "name", "class", "kind", NULL,
};
static const char *const obj_msg_keys[] = {
	"message", "msg", "localizedMessage", "reason", "stack", "stack_trace",
	NULL,
};
static const char *const level_keys[] = {
	"level", "severity", "lvl", "levelname", "loglevel", "log.level", "@l",
	NULL,
};
static const char *const time_keys[] = {
	"time", "ts", "timestamp", "@timestamp", "time_local", "date", NULL,
};

int ing_cri_parse(const char *p, size_t n, struct ing_cri *c)
{
	size_t k = ing_rfc3339(p, n, &c->ts_ns);

	if (!k || n - k < 9 || p[k] != ' ')
		return -1;
	k++;
	if (memcmp(p + k, "stdout ", 7) == 0)
		c->stream = 0;
	else if (memcmp(p + k, "stderr ", 7) == 0)
		c->stream = 1;
	else
		return -1;
	k += 7;
	if (p[k] != 'P' && p[k] != 'F')
		return -1;
	c->partial = p[k] == 'P';
	k++;
	/* Further tags are ':'-separated; only the first one matters. */
	if (k < n && p[k] == ':')
		while (k < n && p[k] != ' ')
			k++;
	if (k < n && p[k] != ' ')
		return -1;
	c->content = k < n ? k + 1 : n;
	return 0;
}

static void payload_json(struct dec_ctx *d, struct rt_record *rec,
			 struct rt_str content);

/* pino/bunyan numeric levels. */
static struct rt_str level_num(double v)
{
	if (v >= 60)
		return RT_STR_LIT("fatal");
	if (v >= 50)
		return RT_STR_LIT("error");
	if (v >= 40)
		return RT_STR_LIT("warn");
	if (v >= 30)
		return RT_STR_LIT("info");
	if (v >= 20)
		return RT_STR_LIT("debug");
	return RT_STR_LIT("trace");
}

static struct rt_str chomp(struct rt_str s)
{
	while (s.n && (s.p[s.n - 1] == '\n' || s.p[s.n - 1] == '\r'))
		s.n--;
	return s;
}

/* A record's causes, best first; a few are plenty, the rest is noise. */
#define MAX_CAUSES 4
struct causes {
	struct rt_str v[MAX_CAUSES];
	int rank[MAX_CAUSES], n;
};

static void cause_add(struct causes *c, int rank, struct rt_str v)
{
	int i;

	v = chomp(v);
	if (!v.p || !v.n || (c->n == MAX_CAUSES && rank >= c->rank[c->n - 1]))
		return;
	if (c->n == MAX_CAUSES)
		c->n--;
	for (i = c->n; i > 0 && c->rank[i - 1] > rank; i--) {
		c->v[i] = c->v[i - 1];
		c->rank[i] = c->rank[i - 1];
	}
	c->v[i] = v;
	c->rank[i] = rank;
	c->n++;
}

static bool contains(struct rt_str hay, struct rt_str needle)
{
	return hay.n >= needle.n && memmem(hay.p, hay.n, needle.p, needle.n);
}

/*
 * "msg: cause: cause", skipping a cause the text already holds (an error
 * repeated in the message, a message repeated in its stack trace). With no
 * message the causes alone; with neither, RT_STR_NULL.
 */
static struct rt_str join_causes(struct dec_ctx *d, struct rt_str msg,
				 const struct causes *c)
{
	struct rt_str keep[MAX_CAUSES];
	size_t len = msg.n, nk = 0, at;
	char *p;

	for (int i = 0; i < c->n; i++) {
		bool dup = msg.n && contains(msg, c->v[i]);

		for (size_t k = 0; k < nk && !dup; k++)
			dup = contains(keep[k], c->v[i]);
		if (!dup) {
			keep[nk++] = c->v[i];
			len += c->v[i].n + 2;
		}
	}
	if (!nk)
		return msg;
	if (!msg.n && nk == 1)
		return keep[0];
	p = rt_arena_alloc(d->arena, len + 1);
	if (!p)
		return msg.n ? msg : keep[0];
	if (msg.n)
		memcpy(p, msg.p, msg.n);
	at = msg.n;
	for (size_t k = 0; k < nk; k++) {
		if (at) {
			memcpy(p + at, ": ", 2);
			at += 2;
		}
		memcpy(p + at, keep[k].p, keep[k].n);
		at += keep[k].n;
	}
	p[at] = '\0';
	return rt_str_make(p, at);
}

/* "type: message" of an error object's parts, or whichever it has. */
static struct rt_str type_and_message(struct dec_ctx *d, struct rt_str type,
				      struct rt_str msg)
{
	struct causes c = { .n = 0 };

	cause_add(&c, 0, msg);
	return join_causes(d, chomp(type), &c);
}

/* Bit k of cause_at[i][c]: byte i of cause_keys[k], or the '"' that closes
 * it, is c. The first three bytes of a string rule out nearly every one
 * that is no cause key ("ts", "request_id", "server/..."), where comparing
 * each key that starts alike took a loop per quote on every JSON line. */
_Static_assert(sizeof(cause_keys) / sizeof(cause_keys[0]) - 1 <= 16,
	       "a bit of cause_at for each cause key");
static uint16_t cause_at[3][256];
static once_flag cause_at_built = ONCE_FLAG_INIT;

static void build_cause_at(void)
{
	for (int k = 0; cause_keys[k]; k++) {
		const char *c = cause_keys[k];
		size_t len = strlen(c);

		for (size_t i = 0; i < 3; i++)
			cause_at[i][(unsigned char)(i < len ? c[i] : '"')] |=
				(uint16_t)(1u << k);
	}
}

/* The length of the cause key p[0..n) starts with, followed by its closing
 * '"', or 0. Every key is two bytes or more, so three bytes decide which
 * keys may follow. */
static size_t cause_key_len(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;

	if (n < 3)
		return 0;
	for (unsigned m = cause_at[0][u[0]] & cause_at[1][u[1]] &
			  cause_at[2][u[2]]; m; m &= m - 1) {
		const char *c = cause_keys[__builtin_ctz(m)];
		size_t i = 0;

		while (c[i] && i < n && p[i] == c[i])
			i++;
		if (!c[i] && i < n && p[i] == '"')
			return i;
	}
	return 0;
}

/* Whether the '"' at p[at] opens a member named after a cause. */
static bool cause_key_at(const char *p, size_t n, size_t at)
{
	size_t i = at + 1, kn;

	if (i >= n || !(kn = cause_key_len(p + i, n - i)))
		return false;
	for (i += kn + 1; i < n && ing_is_space(p[i]); i++)
		;
	return i < n && p[i] == ':';
}

/* Whether a '"' of m (bit k: at p[at + k]) opens a cause key. */
static bool opens_cause(const char *p, size_t n, size_t at, unsigned m)
{
	for (; m; m &= m - 1)
		if (cause_key_at(p, n, at + (unsigned)__builtin_ctz(m)))
			return true;
	return false;
}

#ifdef __SSE2__
/* Whether positions [i, i + 16) of p hold a backslash or open a cause
 * key; p[i + 16] must exist. A position looked at twice gives the same
 * answer, so blocks may overlap. */
static bool block_defers(const char *p, size_t n, size_t i)
{
	const __m128i bs = _mm_set1_epi8('\\'), q = _mm_set1_epi8('"'),
		      e = _mm_set1_epi8('e'), r = _mm_set1_epi8('r'),
		      st = _mm_set1_epi8('s'), at = _mm_set1_epi8('@'),
		      t = _mm_set1_epi8('t');
	__m128i v0 = _mm_loadu_si128((const __m128i *)(p + i));
	__m128i v1 = _mm_loadu_si128((const __m128i *)(p + i + 1));

	if (_mm_movemask_epi8(_mm_cmpeq_epi8(v0, bs)))
		return true;
	__m128i first = _mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v1, e), _mm_cmpeq_epi8(v1, r)),
		_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v1, st),
					  _mm_cmpeq_epi8(v1, at)),
			     _mm_cmpeq_epi8(v1, t)));

	return opens_cause(p, n, i, (unsigned)_mm_movemask_epi8(
		_mm_and_si128(_mm_cmpeq_epi8(v0, q), first)));
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* !deferrable() of a text of 33 bytes or more, 32 a step where the CPU
 * has AVX2: half the steps of block_defers on every JSON payload. The
 * last block overlaps the one before it and ends a byte short of the
 * text, whose last byte is looked at alone. */
static __attribute__((target("avx2"))) bool defers256(const char *p,
						       size_t n)
{
	const __m256i bs = _mm256_set1_epi8('\\'), q = _mm256_set1_epi8('"'),
		      e = _mm256_set1_epi8('e'), r = _mm256_set1_epi8('r'),
		      st = _mm256_set1_epi8('s'), at = _mm256_set1_epi8('@'),
		      t = _mm256_set1_epi8('t');
	size_t i = 0;

	while (i < n - 1) {
		size_t b = i + 33 <= n ? i : n - 33;
		__m256i v0 = _mm256_loadu_si256((const __m256i *)(p + b));
		__m256i v1 = _mm256_loadu_si256((const __m256i *)(p + b + 1));

		if (_mm256_movemask_epi8(_mm256_cmpeq_epi8(v0, bs)))
			return true;
		__m256i first = _mm256_or_si256(
			_mm256_or_si256(_mm256_cmpeq_epi8(v1, e),
					_mm256_cmpeq_epi8(v1, r)),
			_mm256_or_si256(_mm256_or_si256(
						_mm256_cmpeq_epi8(v1, st),
						_mm256_cmpeq_epi8(v1, at)),
					_mm256_cmpeq_epi8(v1, t)));

		if (opens_cause(p, n, b, (unsigned)_mm256_movemask_epi8(
				_mm256_and_si256(_mm256_cmpeq_epi8(v0, q),
						 first))))
			return true;
		i = b + 32;
	}
	return p[n - 1] == '\\';
}
#endif

/*
 * Whether decoding content can only cut text out of it: with no escape,
 * the message is a substring of the payload, unless a cause is joined to
 * it. Every literal of the decoded message is then in the payload's text,
 * so a prefilter miss there is a miss on the message. One pass: every
 * payload line comes here. The last block overlaps the one before it
 * rather than going byte by byte; it ends a byte short of the text, as
 * every block does, so the last byte is looked at alone.
 */
static bool deferrable(struct rt_str content)
{
	const char *p = content.p;
	size_t n = content.n, i = 0;

	call_once(&cause_at_built, build_cause_at);
#if defined(__x86_64__) && defined(__GNUC__)
	if (n >= 33 && __builtin_cpu_supports("avx2"))
		return !defers256(p, n);
#endif
#ifdef __SSE2__
	/* One call site, so that the block is inlined. */
	while (i + 17 <= n || (n >= 17 && i < n - 1)) {
		size_t at = i + 17 <= n ? i : n - 17;

		if (block_defers(p, n, at))
			return false;
		i = at + 16;
	}
#endif
	for (; i < n; i++)
		if (p[i] == '\\' || (p[i] == '"' && cause_key_at(p, n, i)))
			return false;
	return true;
}

int ing_log_emit(struct dec_ctx *d, struct rt_record *rec,
		 enum rt_format fmt, struct rt_str content)
{
	size_t i = 0;

	rec->format = fmt;
	rec->message = content;
	while (i < content.n && ing_is_space(content.p[i]))
		i++;
	if (i < content.n && content.p[i] == '{') {
		if (d->opts->defer_payload && deferrable(content))
			rec->flags |= RT_REC_DEFERRED;
		else
			payload_json(d, rec, content);
	}
	if (d->helm)
		dec_helm_op_apply(d, d->helm, rec, content);
	return dec_emit(d, rec);
}

void ingest_undefer(struct rt_record *rec, struct rt_arena *arena)
{
	struct dec_ctx d = { .arena = arena };

	if (!(rec->flags & RT_REC_DEFERRED))
		return;
	rec->flags &= ~RT_REC_DEFERRED;
	payload_json(&d, rec, rec->message);
}

/* ---- docker json-file objects ---- */

/* Epoch seconds (Fluent Bit's @timestamp double), or ms/us/ns. A double
 * holds about a microsecond at this magnitude, so the fraction is rounded
 * to microseconds. v > 0. */
static int64_t epoch_time(double v)
{
	double scale = v > 1e17 ? 1 : v > 1e14 ? 1e3 : v > 1e11 ? 1e6 : 1e9;
	double ip = floor(v), frac = v - ip;

	if (ip * scale > 9.0e18)   /* past int64 nanoseconds: no time */
		return 0;
	return (int64_t)ip * (int64_t)scale + llround(frac * scale / 1e3) * 1000;
}

/* A docker line's time, or 0 when it is empty or not a time (counted),
 * or one out of range (counted as such, dec_time). */
static int64_t docker_time(struct dec_ctx *d, int rc, int64_t ns)
{
	if (rc != RT_OK && rc != RT_ERANGE)
		dec_count(d, &d->stats->bad_times, d->stats->first_bad_time);
	return dec_time(d, rc, &ns);
}

bool ing_is_docker_js(const struct js_doc *doc, const struct js_node *root)
{
	/* With their lengths: strlen in the loop cost 100 instructions a
	 * line, Events included. */
	static const struct js_key keys[] = {
		JS_KEY("log"), JS_KEY("stream"), JS_KEY("time"), JS_KEY("attrs"),
	};
	const struct js_node *log;

	if (!js_is(root, JS_OBJ))
		return false;
	/* The members first: an Event fails at its first one, where looking
	 * up "time" walked all of them. */
	for (uint32_t i = root->child; i; i = doc->node[i].next) {
		const struct js_node *m = &doc->node[i];
		bool known = false;

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !known;
		     k++)
			known = m->keyn == keys[k].n &&
				!memcmp(m->key, keys[k].s, m->keyn);
		if (!known)
			return false;
	}
	if (!js_is(js_get(doc, root, "time"), JS_STR))
		return false;
	log = js_get(doc, root, "log");
	return !log || log->type == JS_STR;
}

static void take_str_js(struct dec_ctx *d, struct rt_str *dst,
			const struct js_node *it)
{
	if (js_nonempty(it))
		*dst = js_str(d->arena, it);
}

/* A time string or epoch number: 0 with *ns, or ing_time_parse's error
 * (RT_EPARSE for anything else). */
static int json_time_js(struct rt_arena *a, const struct js_node *it,
			int64_t *ns)
{
	if (js_nonempty(it)) {
		struct rt_str t = it->esc ? js_str(a, it) :
				  rt_str_make(it->s, it->n);

		return ing_time_parse(t.p, t.n, ns);
	}
	if (js_is(it, JS_NUM) && it->num > 0)
		return (*ns = epoch_time(it->num)) ? RT_OK : RT_EPARSE;
	return RT_EPARSE;
}

static struct rt_str stream_js(struct dec_ctx *d, const struct js_node *it)
{
	if (js_str_is(it, "stdout"))
		return ing_stream_names[0];
	if (js_str_is(it, "stderr"))
		return ing_stream_names[1];
	return js_is(it, JS_STR) ? js_str(d->arena, it) : RT_STR_NULL;
}

void ing_docker_fields_js(struct dec_ctx *d, struct rt_record *rec,
			  const struct js_doc *doc, const struct js_node *root)
{
	const struct js_node *attrs = js_get(doc, root, "attrs");
	int64_t ns = 0;
	int rc = json_time_js(d->arena, js_get(doc, root, "time"), &ns);

	if ((ns = docker_time(d, rc, ns)))
		rec->ts_ns = ns;
	rec->stream = stream_js(d, js_get(doc, root, "stream"));
	if (!js_is(attrs, JS_OBJ))
		return;
	take_str_js(d, &rec->pod, js_get(doc, attrs, "io.kubernetes.pod.name"));
	take_str_js(d, &rec->ns,
		    js_get(doc, attrs, "io.kubernetes.pod.namespace"));
	take_str_js(d, &rec->container,
		    js_get(doc, attrs, "io.kubernetes.container.name"));
}

/* ---- Fluent Bit, Vector and other JSON log records ----
 *
 * Read from json_scan.h nodes: log topics carry these by the million, and
 * a cJSON tree with its lookups cost 50,000 instructions a record.
 */

/* The root members read, in one walk: the four key lists above, the shape
 * and stream members, and the members that make dec_kube_json read the
 * object first (then this leaves it to dec_kube_json, unless that had its
 * turn). */
enum {
	LK_MSG = 0, LK_CAUSE = 7, LK_LEVEL = 19, LK_TIME = 26,
	LK_STREAM = 32, LK_K8S, LK_SOURCE_TYPE, LK_P, LK_LOGTAG, LK_FILE,
	LK_KUBE, LK_N = LK_KUBE + 6
};
_Static_assert(sizeof(msg_keys) / sizeof(msg_keys[0]) - 1 == LK_CAUSE - LK_MSG &&
	       sizeof(cause_keys) / sizeof(cause_keys[0]) - 1 == LK_LEVEL - LK_CAUSE &&
	       sizeof(level_keys) / sizeof(level_keys[0]) - 1 == LK_TIME - LK_LEVEL &&
	       sizeof(time_keys) / sizeof(time_keys[0]) - 1 == LK_STREAM - LK_TIME,
	       "the key lists fill their ranges");
_Static_assert(LK_N <= JS_PICK_MAX, "one js_pick");
static const char *const root_keys[] = {
	"stream", "kubernetes", "source_type", "_p", "logtag", "file",
	/* dec_kube_json's: a watch envelope, a List, an Event, Helm storage
	 * or a release. */
	"kind", "object", "involvedObject", "regarding", "metadata", "info",
};

/* The kubernetes map's members, Fluent Bit's and Vector's. */
enum {
	K8_POD, K8_NS, K8_CTR, K8_HOST, K8_LABELS, K8_ANN, K8_OWNERS,
	K8_POD_NS, K8_NODE, K8_POD_LABELS, K8_POD_ANN, K8_POD_OWNER, K8_N
};
static const struct js_key k8s_keys[K8_N] = {
	JS_KEY("pod_name"), JS_KEY("namespace_name"), JS_KEY("container_name"),
	JS_KEY("host"), JS_KEY("labels"), JS_KEY("annotations"),
	JS_KEY("owner_references"), JS_KEY("pod_namespace"),
	JS_KEY("pod_node_name"), JS_KEY("pod_labels"),
	JS_KEY("pod_annotations"), JS_KEY("pod_owner"),
};

static struct js_key log_keys[LK_N];
static struct js_keyset log_set, k8s_set;
static once_flag log_sets_built = ONCE_FLAG_INIT;

static void add_keys(size_t at, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n && keys[i]; i++)
		log_keys[at + i] = (struct js_key){ keys[i], strlen(keys[i]) };
}

static void build_log_sets(void)
{
	add_keys(LK_MSG, msg_keys, LK_CAUSE - LK_MSG);
	add_keys(LK_CAUSE, cause_keys, LK_LEVEL - LK_CAUSE);
	add_keys(LK_LEVEL, level_keys, LK_TIME - LK_LEVEL);
	add_keys(LK_TIME, time_keys, LK_STREAM - LK_TIME);
	add_keys(LK_STREAM, root_keys, LK_N - LK_STREAM);
	js_keyset_init(&log_set, log_keys, LK_N);
	js_keyset_init(&k8s_set, k8s_keys, K8_N);
}

/* first_str of an object's members, by name. */
static struct rt_str first_str_js(struct dec_ctx *d, const struct js_doc *doc,
				  const struct js_node *obj,
				  const char *const *keys)
{
	for (int i = 0; keys[i]; i++) {
		const struct js_node *it = js_get(doc, obj, keys[i]);

		if (js_nonempty(it))
			return js_str(d->arena, it);
	}
	return RT_STR_NULL;
}

/* json_message from the picked members. */
static struct rt_str json_message_js(struct dec_ctx *d,
				     const struct js_doc *doc,
				     const struct js_node **pk)
{
	struct causes c = { .n = 0 };
	struct rt_str msg = RT_STR_NULL;

	for (int i = 0; i < LK_LEVEL - LK_CAUSE; i++) {
		const struct js_node *it = pk[LK_CAUSE + i];

		if (js_is(it, JS_STR))
			cause_add(&c, i, js_str(d->arena, it));
		else if (js_is(it, JS_OBJ))
			cause_add(&c, i, type_and_message(d,
				first_str_js(d, doc, it, obj_type_keys),
				first_str_js(d, doc, it, obj_msg_keys)));
	}
	for (int i = LK_MSG; i < LK_CAUSE && !msg.p; i++)
		if (js_nonempty(pk[i]))
			msg = js_str(d->arena, pk[i]);
	return join_causes(d, chomp(msg), &c);
}

/* The message (when the object has one) and the level of a JSON log
 * object, from its picked members: one rule for a record (Fluent Bit,
 * Vector, an application's JSON line) and for a log line's payload. */
static void message_level_js(struct dec_ctx *d, struct rt_record *rec,
			     const struct js_doc *doc,
			     const struct js_node **pk)
{
	struct rt_str msg = json_message_js(d, doc, pk);

	if (msg.p && msg.n)
		rec->message = msg;
	for (int i = LK_LEVEL; i < LK_TIME; i++) {
		if (js_nonempty(pk[i])) {
			rec->type = js_str(d->arena, pk[i]);
			break;
		}
		if (js_is(pk[i], JS_NUM)) {
			rec->type = level_num(pk[i]->num);
			break;
		}
	}
}

/* Whether a string value of doc is cut short by a \u escape that is not
 * one. Only strings with escapes are looked into, few of a log line's. */
static bool any_cut(const struct js_doc *doc)
{
	for (uint32_t k = 1; k < doc->count; k++)
		if (doc->node[k].esc && js_str_cut(&doc->node[k]))
			return true;
	return false;
}

/*
 * content holds what may be a JSON object (a CRI line's content, a docker
 * line's log, a record's message): json_scan.h reads the object it opens
 * with, whatever follows it (formats.md §2.6). Its message and level are
 * taken as a JSON record's; its time is not, the line's own comes first.
 * Anything that is not a whole object by json_scan.h's grammar, or one
 * whose string values hold a \u escape that is not one (read, as cJSON
 * reads it, as the end of its string), leaves rec as it is: a text line,
 * nothing of it lost.
 */
static void payload_json(struct dec_ctx *d, struct rt_record *rec,
			 struct rt_str content)
{
	struct js_doc own = { 0 }, *doc = d->payload ? d->payload : &own;
	const struct js_node *pk[LK_N];
	size_t end;

	if (js_parse_lead(doc, content.p, content.n, &end) == 0 &&
	    doc->node[0].type == JS_OBJ && !any_cut(doc)) {
		call_once(&log_sets_built, build_log_sets);
		js_pick(doc, &doc->node[0], &log_set, pk);
		message_level_js(d, rec, doc, pk);
	}
	if (doc == &own)
		js_doc_release(&own);
}

/* common_fields from the picked members. */
static void common_fields_js(struct dec_ctx *d, struct rt_record *rec,
			     const struct js_doc *doc,
			     const struct js_node **pk)
{
	int64_t ts, ns = 0;

	message_level_js(d, rec, doc, pk);
	for (int i = LK_TIME; i < LK_STREAM; i++)
		if ((ts = dec_time(d, json_time_js(d->arena, pk[i], &ns),
				   &ns)) != 0) {
			rec->ts_ns = ts;
			break;
		}
	if (js_is(pk[LK_STREAM], JS_STR))
		rec->stream = stream_js(d, pk[LK_STREAM]);
	if (rec->message.n && rec->message.p != rec->raw.p)
		payload_json(d, rec, rec->message);
}

/* labels of two nodes. */
static void labels_js(struct dec_ctx *d, struct rt_record *rec,
		      const struct js_doc *doc, const struct js_node *lab,
		      const struct js_node *ann)
{
	take_str_js(d, &rec->release, js_get(doc, lab, "release"));
	take_str_js(d, &rec->release, js_get(doc, lab, "helm.sh/release"));
	take_str_js(d, &rec->release,
		    js_get(doc, lab, "app.kubernetes.io/instance"));
	take_str_js(d, &rec->release,
		    js_get(doc, ann, "meta.helm.sh/release-name"));
	take_str_js(d, &rec->release_ns,
		    js_get(doc, ann, "meta.helm.sh/release-namespace"));
	take_str_js(d, &rec->template_hash,
		    js_get(doc, lab, "pod-template-hash"));
	take_str_js(d, &rec->chart, js_get(doc, lab, "helm.sh/chart"));
}

static void fluentbit_js(struct dec_ctx *d, struct rt_record *rec,
			 const struct js_doc *doc, const struct js_node **kp)
{
	const struct js_node *owners = kp[K8_OWNERS], *pick = NULL;

	take_str_js(d, &rec->pod, kp[K8_POD]);
	take_str_js(d, &rec->ns, kp[K8_NS]);
	take_str_js(d, &rec->container, kp[K8_CTR]);
	take_str_js(d, &rec->host, kp[K8_HOST]);
	labels_js(d, rec, doc, kp[K8_LABELS], kp[K8_ANN]);
	/* As cJSON_GetArrayItem and cJSON_ArrayForEach take them: the
	 * children of whatever it is. */
	for (uint32_t i = owners ? owners->child : 0; i; i = doc->node[i].next)
		if (!pick || js_is(js_get(doc, &doc->node[i], "controller"),
				   JS_TRUE))
			pick = &doc->node[i];
	if (pick) {
		take_str_js(d, &rec->owner_kind, js_get(doc, pick, "kind"));
		take_str_js(d, &rec->owner_name, js_get(doc, pick, "name"));
	}
}

static void vector_js(struct dec_ctx *d, struct rt_record *rec,
		      const struct js_doc *doc, const struct js_node *file,
		      const struct js_node **kp)
{
	const struct js_node *owner = kp[K8_POD_OWNER];
	struct rt_str path, pod, ns, ctr;

	/* Views into the path, which lives as long as the record. */
	if (js_is(file, JS_STR) && (path = js_str(d->arena, file)).p &&
	    ing_path_parse(path.p, path.n, &pod, &ns, &ctr)) {
		rec->pod = pod;
		rec->ns = ns;
		rec->container = ctr;
	}
	take_str_js(d, &rec->pod, kp[K8_POD]);
	take_str_js(d, &rec->ns, kp[K8_POD_NS]);
	take_str_js(d, &rec->container, kp[K8_CTR]);
	take_str_js(d, &rec->host, kp[K8_NODE]);
	labels_js(d, rec, doc, kp[K8_POD_LABELS], kp[K8_POD_ANN]);
	if (js_is(owner, JS_STR)) {
		struct rt_str o = js_str(d->arena, owner);
		const char *slash = o.n ? memchr(o.p, '/', o.n) : NULL;

		if (slash) {
			rec->owner_kind = rt_str_make(o.p, (size_t)(slash - o.p));
			rec->owner_name = rt_str_make(slash + 1,
					o.n - (size_t)(slash + 1 - o.p));
		}
	}
}

/* The shape from the picked members; RT_FMT_UNKNOWN for a forced format
 * of another kind. */
static enum rt_format shape_js(const struct dec_ctx *d,
			       const struct js_doc *doc,
			       const struct js_node *root,
			       const struct js_node **pk,
			       const struct js_node **kp)
{
	enum rt_format f = d->opts->force;
	bool vec_src = js_str_is(pk[LK_SOURCE_TYPE], "kubernetes_logs");

	if (f == RT_FMT_FLUENTBIT || f == RT_FMT_VECTOR || f == RT_FMT_JSON)
		return f;
	if (f == RT_FMT_DOCKER)
		return ing_is_docker_js(doc, root) ? f : RT_FMT_UNKNOWN;
	if (f != RT_FMT_UNKNOWN)
		return RT_FMT_UNKNOWN;
	if (js_is(pk[LK_K8S], JS_OBJ)) {
		if (vec_src || kp[K8_POD_NS] || kp[K8_POD_LABELS] ||
		    kp[K8_POD_OWNER])
			return RT_FMT_VECTOR;
		return RT_FMT_FLUENTBIT;
	}
	if (vec_src)
		return RT_FMT_VECTOR;
	if (pk[LK_P] || pk[LK_LOGTAG])
		return RT_FMT_FLUENTBIT;
	if (ing_is_docker_js(doc, root))
		return RT_FMT_DOCKER;
	return RT_FMT_JSON;
}

/* A docker object read as one record, not joined with its stream's
 * pieces: an element of an array, where no file's stream is known. */
static int docker_record(struct dec_ctx *d, struct rt_record *rec,
			 const struct js_doc *doc, const struct js_node *root)
{
	struct rt_str log = chomp(js_str(d->arena, js_get(doc, root, "log")));
	int rc;

	ing_docker_fields_js(d, rec, doc, root);
	rc = ing_log_emit(d, rec, RT_FMT_DOCKER, log);
	return rc ? rc : DEC_YES;
}

int ing_log_json_js(struct dec_ctx *d, const struct js_doc *doc,
		    const struct js_node *root, bool after_kube)
{
	const struct js_node *pk[LK_N], *kp[K8_N];
	struct rt_record rec = *d->base;
	enum rt_format f;
	int rc;

	if (!js_is(root, JS_OBJ))
		return DEC_NO;
	call_once(&log_sets_built, build_log_sets);
	js_pick(doc, root, &log_set, pk);
	for (int i = LK_KUBE; i < LK_N && !after_kube; i++)
		if (pk[i])
			return DEC_NO;
	js_pick(doc, pk[LK_K8S], &k8s_set, kp);
	f = shape_js(d, doc, root, pk, kp);
	if (f == RT_FMT_UNKNOWN)
		return DEC_NO;
	rec.format = f;
	if (f == RT_FMT_DOCKER)
		return docker_record(d, &rec, doc, root);
	common_fields_js(d, &rec, doc, pk);
	if (f == RT_FMT_FLUENTBIT && js_is(pk[LK_K8S], JS_OBJ))
		fluentbit_js(d, &rec, doc, kp);
	else if (f == RT_FMT_VECTOR)
		vector_js(d, &rec, doc, pk[LK_FILE], kp);
	rc = dec_emit(d, &rec);
	return rc ? rc : DEC_YES;
}
