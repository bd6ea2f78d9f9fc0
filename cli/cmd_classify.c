/*
 * cmd_classify.c: `revtrail classify [--all] [FILE...]`: the first half of
 * the pipeline alone. One JSON object per tagged record (every record with
 * --all) on stdout, in input order; a summary of counts on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cli.h"
#include "revtrail/log.h"

/* Output is built in a buffer and written in large pieces: a tagged event
 * printed field by field through stdio cost more than classifying it.
 * Not an rt_buf: out_put's inline fast path is a bare memcpy (no NUL
 * kept, no error to check per piece), and without memory the output goes
 * on through stdio rather than failing. */
struct outbuf {
	char *p;
	size_t n, cap;
	bool failed;            /* out of memory: the rest goes to stdio */
	int werr;               /* errno of a failed write to stdout, or 0 */
};

#define OUT_FLUSH (64 * 1024)

struct classify {
	struct rules *rules;
	struct rt_arena arena;
	bool all;
	uint64_t tagged, limit_hits;
	struct outbuf out;
};

/* A failed write (a full disk, a closed pipe) is kept in werr, so the
 * command stops and fails instead of exiting 0 with records lost. */
static void out_flush(struct outbuf *o)
{
	if (o->n && fwrite(o->p, 1, o->n, stdout) != o->n && !o->werr)
		o->werr = errno ? errno : EIO;
	o->n = 0;
}

/* Room for n more bytes; false (and stdio from then on) without memory. */
static bool out_room(struct outbuf *o, size_t n)
{
	size_t cap = o->cap ? o->cap : OUT_FLUSH * 2;
	char *q;

	if (o->failed)
		return false;
	if (o->cap - o->n >= n)
		return true;
	while (cap - o->n < n)
		cap *= 2;
	if (!(q = realloc(o->p, cap))) {
		out_flush(o);
		o->failed = true;
		return false;
	}
	o->p = q;
	o->cap = cap;
	return true;
}

static void out_put_slow(struct outbuf *o, const char *p, size_t n)
{
	if (!out_room(o, n)) {
		if (fwrite(p, 1, n, stdout) != n && !o->werr)
			o->werr = errno ? errno : EIO;
		return;
	}
	memcpy(o->p + o->n, p, n);
	o->n += n;
}

/* Inline: a tagged Event is about 100 pieces of a few bytes, and calling
 * out_put and out_room for each cost 3,300 instructions of it. */
static inline void out_put(struct outbuf *o, const char *p, size_t n)
{
	if (o->cap - o->n >= n && !o->failed) {
		memcpy(o->p + o->n, p, n);
		o->n += n;
		return;
	}
	out_put_slow(o, p, n);
}

/* Inline, so that a literal's length is counted when compiled. */
static inline void out_str(struct outbuf *o, const char *s)
{
	out_put(o, s, strlen(s));
}

/* A string literal and its length, for put_field. */
#define LIT(s) s, sizeof(s) - 1

static void out_u64(struct outbuf *o, uint64_t v)
{
	char buf[RT_U64_DIGITS];

	out_put(o, buf, rt_u64_dec(buf, v));
}

static void out_i64(struct outbuf *o, int64_t v)
{
	if (v < 0) {
		out_put(o, "-", 1);
		out_u64(o, (uint64_t)0 - (uint64_t)v);
		return;
	}
	out_u64(o, (uint64_t)v);
}

static bool json_plain(unsigned char c)
{
	return c >= 0x20 && c != 0x7f && c != '"' && c != '\\';
}

#ifdef __SSE2__
/* Which of 16 bytes a JSON string must escape: below 0x20, DEL, quote,
 * backslash. */
static inline unsigned escape_mask(__m128i v)
{
	__m128i low = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
	__m128i del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f));
	__m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
	__m128i bs = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));

	low = _mm_or_si128(low, del);
	q = _mm_or_si128(q, bs);
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(low, q));
}
#endif

/* Index of the first byte in p[i..n) that a JSON string must escape, or
 * n; 16 bytes at a time, as byte by byte this cost 1,700 instructions a
 * tagged Event (350 an Event of the bench corpus). */
static size_t plain_run(const char *p, size_t i, size_t n)
{
#ifdef __SSE2__
	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + i));
		unsigned m = escape_mask(v);

		if (m)
			return i + (unsigned)__builtin_ctz(m);
	}
#endif
	while (i < n && json_plain((unsigned char)p[i]))
		i++;
	return i;
}

/* A JSON string, escaped as cli_json_str does: runs of plain bytes are
 * copied whole. */
static void out_json(struct outbuf *o, const char *p, size_t n)
{
	size_t i = 0;

	out_put(o, "\"", 1);
	while (i < n) {
		size_t k = plain_run(p, i, n);
		unsigned char c;
		char esc[8];

		out_put(o, p + i, k - i);
		if (k == n)
			break;
		switch ((c = (unsigned char)p[k])) {
		case '"': out_put(o, "\\\"", 2); break;
		case '\\': out_put(o, "\\\\", 2); break;
		case '\n': out_put(o, "\\n", 2); break;
		case '\r': out_put(o, "\\r", 2); break;
		case '\t': out_put(o, "\\t", 2); break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			out_put(o, esc, 6);
		}
		i = k + 1;
	}
	out_put(o, "\"", 1);
}

/* key (keyn bytes) is written as it is: a capture name or a literal. */
static void put_field(struct outbuf *o, bool *first, const char *key,
		      size_t keyn, struct rt_str v)
{
	if (!v.n)
		return;
	if (*first)
		out_put(o, "\"", 1);
	else
		out_put(o, ",\"", 2);
	out_put(o, key, keyn);
	out_put(o, "\":", 2);
	out_json(o, v.p, v.n);
	*first = false;
}

static void put_names(struct outbuf *o, const char *key,
		      const char *const *names, unsigned n)
{
	out_str(o, ",\"");
	out_str(o, key);
	out_put(o, "\":[", 3);
	for (unsigned i = 0; i < n; i++) {
		if (i)
			out_put(o, ",", 1);
		out_json(o, names[i], strlen(names[i]));
	}
	out_put(o, "]", 1);
}

/* Whether one of the first n captures is named key. */
static bool captured(const struct rt_class *c, unsigned n, const char *key,
		     size_t keyn)
{
	for (unsigned i = 0; i < n; i++) {
		size_t k = c->fields[i].key.n < 63 ? c->fields[i].key.n : 63;

		if (c->fields[i].val.n && k == keyn &&
		    !memcmp(c->fields[i].key.p, key, k))
			return true;
	}
	return false;
}

/* A record field, unless a capture of that name was printed. */
static void put_record_field(struct outbuf *o, bool *first,
			     const struct rt_class *c, const char *key,
			     size_t keyn, struct rt_str v)
{
	if (!captured(c, c->nfields, key, keyn))
		put_field(o, first, key, keyn, v);
}

/* Named captures first, then the normalised Kubernetes fields the record
 * carries; each key once (JSON readers keep one of a repeated key, which
 * one varies): the first rule's capture wins over a later rule's, and a
 * capture over the record field of its name, as it is what the rule
 * read in the message. */
static void put_fields(struct outbuf *o, const struct rt_record *r,
		       const struct rt_class *c)
{
	bool first = true;

	out_str(o, ",\"fields\":{");
	for (unsigned i = 0; i < c->nfields; i++) {
		size_t n = c->fields[i].key.n < 63 ? c->fields[i].key.n : 63;

		if (!captured(c, i, c->fields[i].key.p, n))
			put_field(o, &first, c->fields[i].key.p, n,
				  c->fields[i].val);
	}
	put_record_field(o, &first, c, LIT("namespace"), r->ns);
	put_record_field(o, &first, c, LIT("kind"), r->kind);
	put_record_field(o, &first, c, LIT("name"), r->name);
	put_record_field(o, &first, c, LIT("pod"), r->pod);
	put_record_field(o, &first, c, LIT("container"), r->container);
	put_record_field(o, &first, c, LIT("stream"), r->stream);
	put_record_field(o, &first, c, LIT("reason"), r->reason);
	put_record_field(o, &first, c, LIT("type"), r->type);
	put_record_field(o, &first, c, LIT("component"), r->component);
	put_record_field(o, &first, c, LIT("release"), r->release);
	put_record_field(o, &first, c, LIT("release_namespace"), r->release_ns);
	put_record_field(o, &first, c, LIT("owner"), r->owner_name);
	put_record_field(o, &first, c, LIT("chart"), r->chart);
	out_put(o, "}", 1);
}

static void put_revisions(struct outbuf *o, const struct rt_record *r)
{
	out_str(o, ",\"revisions\":[");
	for (size_t i = 0; i < r->nrevs; i++) {
		const struct rt_revision *v = &r->revs[i];
		char when[RT_TIME_BUFSZ] = "";
		bool first = true;

		if (v->updated_ns)
			rt_time_format(v->updated_ns, when);
		out_str(o, i ? ",{\"revision\":" : "{\"revision\":");
		out_i64(o, v->revision);
		first = false;
		put_field(o, &first, LIT("namespace"), v->ns);
		put_field(o, &first, LIT("release"), v->release);
		put_field(o, &first, LIT("status"), v->status);
		put_field(o, &first, LIT("chart"), v->chart);
		put_field(o, &first, LIT("app_version"), v->app_version);
		put_field(o, &first, LIT("description"), v->description);
		put_field(o, &first, LIT("updated"),
			  rt_str_make(when, strlen(when)));
		out_put(o, "}", 1);
	}
	out_put(o, "]", 1);
}

static void print_record(struct outbuf *o, const struct rt_record *r,
			 const struct rt_class *c)
{
	out_str(o, "{\"n\":");
	out_u64(o, r->n);
	out_str(o, ",\"format\":\"");
	out_str(o, rt_format_name(r->format));
	out_put(o, "\"", 1);
	put_names(o, "tags", c->tags, c->ntags);
	put_names(o, "rules", c->rules, c->nrules);
	out_str(o, ",\"severity\":\"");
	out_str(o, rt_severity_name(c->severity));
	out_put(o, "\"", 1);
	put_fields(o, r, c);
	out_str(o, ",\"message\":");
	out_json(o, r->message.p ? r->message.p : "", r->message.n);
	if (r->ts_ns) {
		char when[RT_TIME_BUFSZ];

		rt_time_format(r->ts_ns, when);
		out_str(o, ",\"ts\":\"");
		out_str(o, when);
		out_put(o, "\"", 1);
	}
	if (r->count > 1) {
		out_str(o, ",\"count\":");
		out_i64(o, r->count);
	}
	if (r->nrevs)
		put_revisions(o, r);
	out_str(o, ",\"source\":");
	out_json(o, r->pos.source ? r->pos.source : "", r->pos.source ?
		 strlen(r->pos.source) : 0);
	out_str(o, ",\"offset\":");
	out_u64(o, r->pos.offset);
	if (r->flags & RT_REC_TRUNCATED)
		out_str(o, ",\"truncated\":true");
	out_put(o, "}\n", 2);
	if (o->n >= OUT_FLUSH)
		out_flush(o);
}

static int on_record(void *ctx, struct rt_record *r)
{
	struct classify *c = ctx;
	struct rt_class cls;

	if (c->out.werr)
		return RT_EIO;

	pipeline_classify(c->rules, r, &c->arena, &cls);
	c->limit_hits += cls.limit_hits;
	if (cls.ntags)
		c->tagged++;
	if (cls.ntags || c->all)
		print_record(&c->out, r, &cls);
	return 0;
}

/* Records do not outlive their chunk here, so the arena stays small. */
static int between_chunks(void *ctx)
{
	struct classify *c = ctx;

	rt_arena_reset(&c->arena);
	return 0;
}

static void note(void *ctx, int level, const char *line)
{
	(void)ctx;
	fprintf(stderr, "classify: %s%s\n", level == RT_LOG_WARN ?
		"warning: " : "", line);
}

static void print_summary(const struct ingest_stats *s,
			  const struct classify *c, size_t max_record)
{
	char over[512];

	fprintf(stderr, "classify: %" PRIu64 " records, %" PRIu64 " tagged, "
		"%" PRIu64 " rejected, %" PRIu64 " truncated, %" PRIu64
		" invalid UTF-8, %" PRIu64 " binary, %" PRIu64 " skipped",
		s->records, c->tagged, s->rejects, s->truncated, s->bad_utf8,
		s->binary, s->skipped);
	if (c->limit_hits)
		fprintf(stderr, ", %" PRIu64 " regex limit hits",
			c->limit_hits);
	fputc('\n', stderr);
	cli_input_notes(s, note, NULL);
	if (cli_oversize_note(over, sizeof(over), s, max_record))
		fprintf(stderr, "classify: warning: %s\n", over);
}

static const struct cli_opt opts[] = {
	{ "all", 'a', NULL, "print every record, tagged or not", NULL },
	CLI_INPUT_OPTS,
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"classify", "[OPTIONS] [FILE...]",
	"  Tag records (the FILEs, else stdin) and print one JSON object per\n"
	"  tagged record. No database.\n",
	opts,
	"  revtrail classify --all /var/log/containers/web-*.log\n",
};

int cmd_classify(int argc, char **argv)
{
	struct ingest_opts io = { 0 };
	struct cli_rules_opts ro = { 0 };
	struct classify c = { 0 };
	struct ingest *in;
	int opt, rc;

	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		if (opt == 'a') {
			c.all = true;
		} else if (opt == 'h') {
			cli_help(stdout, &cmd);
			return CLI_OK;
		} else if (cli_input_opt("classify", opt, optarg, &io,
					 &ro) != 1) {
			return CLI_USAGE;
		}
	}
	if (!(c.rules = cli_load_rules(&ro)))
		return CLI_USAGE;
	io.defer_payload = !c.all;      /* --all prints every message */
	if (!(in = ingest_new(&io))) {
		rules_free(c.rules);
		return CLI_FAIL;
	}
	rt_arena_init(&c.arena);
	rc = ingest_read_paths(in, argv + optind, argc - optind, &c.arena,
			       on_record, between_chunks, &c);
	out_flush(&c.out);
	free(c.out.p);
	if ((fflush(stdout) || ferror(stdout)) && !c.out.werr)
		c.out.werr = errno ? errno : EIO;
	if (c.out.werr) {
		fprintf(stderr, "revtrail classify: writing the output: %s\n",
			strerror(c.out.werr));
		rc = RT_EIO;
	}
	print_summary(ingest_stats(in), &c, io.max_record);
	rt_arena_release(&c.arena);
	ingest_free(in);
	rules_free(c.rules);
	return rc ? CLI_FAIL : CLI_OK;
}
