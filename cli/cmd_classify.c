/*
 * cmd_classify.c: `revtrail classify [--all] [FILE...]`: the first half of
 * the pipeline alone. One JSON object per tagged record (every record with
 * --all) on stdout, in input order; a summary of counts on stderr.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct classify {
	struct rules *rules;
	struct rt_arena arena;
	bool all;
	uint64_t tagged, limit_hits;
};

static void put_field(FILE *f, bool *first, const char *key, struct rt_str v)
{
	if (!v.n)
		return;
	fprintf(f, "%s\"%s\":", *first ? "" : ",", key);
	cli_json_str(f, v.p, v.n);
	*first = false;
}

static void put_names(FILE *f, const char *key, const char *const *names,
		      unsigned n)
{
	fprintf(f, ",\"%s\":[", key);
	for (unsigned i = 0; i < n; i++) {
		if (i)
			putc(',', f);
		cli_json_str(f, names[i], strlen(names[i]));
	}
	putc(']', f);
}

/* Named captures first, then the normalised Kubernetes fields the record
 * carries; a capture wins over a record field of the same name. */
static void put_fields(FILE *f, const struct rt_record *r,
		       const struct rt_class *c)
{
	bool first = true;

	fputs(",\"fields\":{", f);
	for (unsigned i = 0; i < c->nfields; i++) {
		char key[64];
		size_t n = c->fields[i].key.n < 63 ? c->fields[i].key.n : 63;

		memcpy(key, c->fields[i].key.p, n);
		key[n] = '\0';
		put_field(f, &first, key, c->fields[i].val);
	}
	put_field(f, &first, "namespace", r->ns);
	put_field(f, &first, "kind", r->kind);
	put_field(f, &first, "name", r->name);
	put_field(f, &first, "pod", r->pod);
	put_field(f, &first, "container", r->container);
	put_field(f, &first, "stream", r->stream);
	put_field(f, &first, "reason", r->reason);
	put_field(f, &first, "type", r->type);
	put_field(f, &first, "component", r->component);
	put_field(f, &first, "release", r->release);
	put_field(f, &first, "release_namespace", r->release_ns);
	put_field(f, &first, "owner", r->owner_name);
	put_field(f, &first, "chart", r->chart);
	putc('}', f);
}

static void put_revisions(FILE *f, const struct rt_record *r)
{
	fputs(",\"revisions\":[", f);
	for (size_t i = 0; i < r->nrevs; i++) {
		const struct rt_revision *v = &r->revs[i];
		char when[RT_TIME_BUFSZ] = "";
		bool first = true;

		if (v->updated_ns)
			rt_time_format(v->updated_ns, when);
		fprintf(f, "%s{\"revision\":%d", i ? "," : "", v->revision);
		first = false;
		put_field(f, &first, "namespace", v->ns);
		put_field(f, &first, "release", v->release);
		put_field(f, &first, "status", v->status);
		put_field(f, &first, "chart", v->chart);
		put_field(f, &first, "app_version", v->app_version);
		put_field(f, &first, "description", v->description);
		put_field(f, &first, "updated", rt_str_make(when, strlen(when)));
		putc('}', f);
	}
	putc(']', f);
}

static void print_record(FILE *f, const struct rt_record *r,
			 const struct rt_class *c)
{
	fprintf(f, "{\"n\":%" PRIu64 ",\"format\":\"%s\"", r->n,
		rt_format_name(r->format));
	put_names(f, "tags", c->tags, c->ntags);
	put_names(f, "rules", c->rules, c->nrules);
	fprintf(f, ",\"severity\":\"%s\"", rt_severity_name(c->severity));
	put_fields(f, r, c);
	fputs(",\"message\":", f);
	cli_json_str(f, r->message.p ? r->message.p : "", r->message.n);
	if (r->ts_ns) {
		char when[RT_TIME_BUFSZ];

		rt_time_format(r->ts_ns, when);
		fprintf(f, ",\"ts\":\"%s\"", when);
	}
	if (r->count > 1)
		fprintf(f, ",\"count\":%" PRId64, r->count);
	if (r->nrevs)
		put_revisions(f, r);
	fputs(",\"source\":", f);
	cli_json_str(f, r->pos.source ? r->pos.source : "", r->pos.source ?
		     strlen(r->pos.source) : 0);
	fprintf(f, ",\"offset\":%" PRIu64, r->pos.offset);
	if (r->flags & RT_REC_TRUNCATED)
		fputs(",\"truncated\":true", f);
	fputs("}\n", f);
}

static int on_record(void *ctx, struct rt_record *r)
{
	struct classify *c = ctx;
	struct rt_class cls;

	rules_classify(c->rules, r, &c->arena, &cls);
	c->limit_hits += cls.limit_hits;
	if (cls.ntags)
		c->tagged++;
	if (cls.ntags || c->all)
		print_record(stdout, r, &cls);
	return 0;
}

/* Records do not outlive their chunk here, so the arena stays small. */
static int between_chunks(void *ctx)
{
	struct classify *c = ctx;

	rt_arena_reset(&c->arena);
	return 0;
}

static void print_summary(const struct ingest_stats *s,
			  const struct classify *c)
{
	fprintf(stderr, "classify: %" PRIu64 " records, %" PRIu64 " tagged, "
		"%" PRIu64 " rejected, %" PRIu64 " truncated, %" PRIu64
		" invalid UTF-8, %" PRIu64 " binary, %" PRIu64 " skipped",
		s->records, c->tagged, s->rejects, s->truncated, s->bad_utf8,
		s->binary, s->skipped);
	if (c->limit_hits)
		fprintf(stderr, ", %" PRIu64 " regex limit hits",
			c->limit_hits);
	fputc('\n', stderr);
}

static const char usage_text[] =
	"usage: revtrail classify [--all] [--format NAME] [--max-record BYTES]\n"
	"                         [--rules PATH]... [--no-default-rules]\n"
	"                         [--release NS/NAME] [-v] [FILE...]\n";

static const struct option long_opts[] = {
	{ "all", no_argument, NULL, 'a' },
	CLI_INPUT_LONG_OPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_classify(int argc, char **argv)
{
	struct ingest_opts io = { 0 };
	struct cli_rules_opts ro = { 0 };
	struct classify c = { 0 };
	struct ingest *in;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "avh", long_opts, NULL)) != -1) {
		if (opt == 'a') {
			c.all = true;
		} else if (opt == 'h') {
			fputs(usage_text, stdout);
			return CLI_OK;
		} else if ((rc = cli_input_opt("classify", opt, optarg, &io,
						&ro)) != 1) {
			if (rc == 0)
				fputs(usage_text, stderr);
			return CLI_USAGE;
		}
	}
	if (!(c.rules = cli_load_rules(&ro)))
		return CLI_USAGE;
	if (!(in = ingest_new(&io))) {
		rules_free(c.rules);
		return CLI_FAIL;
	}
	rt_arena_init(&c.arena);
	rc = cli_read_inputs(in, argv + optind, argc - optind, &c.arena,
			     on_record, between_chunks, &c);
	fflush(stdout);
	print_summary(ingest_stats(in), &c);
	rt_arena_release(&c.arena);
	ingest_free(in);
	rules_free(c.rules);
	return rc ? CLI_FAIL : CLI_OK;
}
