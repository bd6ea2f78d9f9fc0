/*
 * cmd_show.c: `revtrail show [--db PATH] [-o text|json] ID`: one incident,
 * its diagnosis with evidence and remedy, the affected pods and the
 * timeline of its events and revisions, times relative to the revision that
 * opened it.
 */
#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rows.h"
#include "revtrail/store_read.h"

#define TIMELINE_MAX 200

static const char usage_text[] =
	"usage: revtrail show [--db PATH] [-o text|json] ID\n";

static const struct option long_opts[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const json_cols[] = {
	"tags", "later_revisions", "evidence", "pods", NULL,
};

/* Columns of SQL_INCIDENT (store/sql.h). */
enum { I_ID, I_NS, I_REL, I_REV, I_STATUS, I_SEV, I_OPENED, I_LAST, I_CLOSED,
       I_EVENTS, I_OCC, I_TAGS, I_DIAG, I_TITLE, I_REVSTATUS, I_LATER,
       I_ATTR, I_EVIDENCE, I_REMEDY, I_PODS, I_OPENED_NS, I_LAST_NS,
       I_NCOLS };

struct show {
	FILE *f;
	bool json;
	bool found;
	char *col[I_NCOLS];       /* the incident row as text */
	int64_t id, rev, base_ns, opened_ns;
	char *rev_status, *rev_desc;
	size_t n, total;          /* list items printed / seen */
};

static char *value_dup(const struct store_value *v)
{
	char num[32];

	switch (v->type) {
	case STORE_INT:
		snprintf(num, sizeof(num), "%" PRId64, v->i);
		return strdup(num);
	case STORE_TEXT:
		return strdup(v->p);
	default:
		return NULL;
	}
}

static int on_incident(void *ctx, int n, const char *const *names,
		       const struct store_value *v)
{
	struct show *s = ctx;

	s->found = true;
	if (s->json) {
		fputs("{\"incident\":", s->f);
		rows_json_object(s->f, n, names, v, json_cols);
	}
	for (int i = 0; i < n && i < I_NCOLS; i++)
		s->col[i] = value_dup(&v[i]);
	s->rev = v[I_REV].i;
	s->opened_ns = v[I_OPENED_NS].i;
	return 0;
}

static int on_revision(void *ctx, int n, const char *const *names,
		       const struct store_value *v)
{
	struct show *s = ctx;

	(void)n;
	(void)names;
	if (v[0].type == STORE_INT && v[0].i > 0)
		s->base_ns = v[0].i;
	s->rev_status = value_dup(&v[1]);
	s->rev_desc = value_dup(&v[2]);
	return 0;
}

/* "+2m05s", "-1h03m", "+0s" */
static void rel_time(int64_t ns, int64_t base, char *out, size_t size)
{
	int64_t d = ns - base, s;
	char sign = d < 0 ? '-' : '+';

	s = (d < 0 ? -d : d) / 1000000000;
	if (s >= 86400)
		snprintf(out, size, "%c%" PRId64 "d%02" PRId64 "h", sign,
			 s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(out, size, "%c%" PRId64 "h%02" PRId64 "m", sign,
			 s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(out, size, "%c%" PRId64 "m%02" PRId64 "s", sign,
			 s / 60, s % 60);
	else
		snprintf(out, size, "%c%" PRId64 "s", sign, s);
}

static int on_object(void *ctx, int n, const char *const *names,
		     const struct store_value *v)
{
	struct show *s = ctx;
	char a[32], b[32];

	if (s->json) {
		fputs(s->n++ ? ",\n  " : "\n  ", s->f);
		rows_json_object(s->f, n, names, v, json_cols);
		return 0;
	}
	if (v[0].type != STORE_TEXT || strcmp(v[0].p, "Pod") != 0)
		return 0;
	rel_time(v[5].i, s->base_ns, a, sizeof(a));
	rel_time(v[6].i, s->base_ns, b, sizeof(b));
	fprintf(s->f, "  %-50s %8s .. %-8s %6" PRId64 " event%s\n",
		v[1].type == STORE_TEXT ? v[1].p : "", a, b, v[4].i,
		v[4].i == 1 ? "" : "s");
	s->n++;
	return 0;
}

static int on_timeline(void *ctx, int n, const char *const *names,
		       const struct store_value *v)
{
	struct show *s = ctx;
	char when[32];
	const char *entry = v[1].type == STORE_TEXT ? v[1].p : "";

	s->total++;
	if (s->json) {
		fputs(s->n++ ? ",\n  " : "\n  ", s->f);
		rows_json_object(s->f, n, names, v, json_cols);
		return 0;
	}
	if (s->n >= TIMELINE_MAX)
		return 0;
	s->n++;
	rel_time(v[10].i, s->base_ns, when, sizeof(when));
	if (!strcmp(entry, "revision")) {
		fprintf(s->f, "  %9s  revision %" PRId64 " %s: %s\n", when,
			v[2].i, v[5].type == STORE_TEXT ? v[5].p : "?",
			v[6].type == STORE_TEXT ? v[6].p : "");
		return 0;
	}
	fprintf(s->f, "  %9s  %s/%s  %s  %s", when,
		v[3].type == STORE_TEXT ? v[3].p : "-",
		v[4].type == STORE_TEXT ? v[4].p : "-",
		v[5].type == STORE_TEXT ? v[5].p : "-",
		v[8].type == STORE_TEXT ? v[8].p : "");
	if (v[9].type == STORE_INT && v[9].i > 1)
		fprintf(s->f, " x%" PRId64, v[9].i);
	if (v[6].type == STORE_TEXT) {
		/* first line of the message, bounded */
		size_t len = strcspn(v[6].p, "\n");

		fprintf(s->f, "\n  %9s  %.*s%s", "",
			(int)(len > 200 ? 200 : len), v[6].p,
			len > 200 || v[6].p[len] ? " ..." : "");
	}
	fputc('\n', s->f);
	return 0;
}

static void print_list(FILE *f, const char *json, const char *prefix)
{
	cJSON *a = json ? cJSON_Parse(json) : NULL, *it;

	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it))
			fprintf(f, "%s%s\n", prefix, it->valuestring);
	cJSON_Delete(a);
}

/* A JSON array of strings as "a, b, c" and a newline. */
static void print_csv(FILE *f, const char *json)
{
	cJSON *a = json ? cJSON_Parse(json) : NULL, *it;
	bool first = true;

	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it)) {
			fprintf(f, "%s%s", first ? "" : ", ", it->valuestring);
			first = false;
		}
	fputs(first ? "-\n" : "\n", f);
	cJSON_Delete(a);
}

static const char *col(const struct show *s, int i)
{
	return s->col[i] ? s->col[i] : "";
}

static void print_head(struct show *s)
{
	FILE *f = s->f;
	char rel[32];

	fprintf(f, "Incident %s: %s/%s", col(s, I_ID), col(s, I_NS),
		col(s, I_REL));
	if (s->rev > 0)
		fprintf(f, ", revision %" PRId64 " (%s%s%s)", s->rev,
			s->rev_status ? s->rev_status : "?",
			s->rev_desc ? ": " : "", s->rev_desc ? s->rev_desc : "");
	else
		fputs(", revision unknown (no release history)", f);
	fprintf(f, "\nStatus:     %s, severity %s, %s events (%s occurrences)\n",
		col(s, I_STATUS), col(s, I_SEV), col(s, I_EVENTS),
		col(s, I_OCC));
	rel_time(s->opened_ns, s->base_ns, rel, sizeof(rel));
	fprintf(f, "Opened:     %s (%s)\nLast seen:  %s\n", col(s, I_OPENED),
		rel, col(s, I_LAST));
	if (s->col[I_CLOSED])
		fprintf(f, "Closed:     %s\n", col(s, I_CLOSED));
	fputs("Tags:       ", f);
	print_csv(f, s->col[I_TAGS]);
	if (s->col[I_LATER] && strcmp(col(s, I_LATER), "[]"))
		fprintf(f, "Followed by revisions: %s\n", col(s, I_LATER));
	if (!strcmp(col(s, I_ATTR), "workload"))
		fputs("Release:    inferred from the workload name\n", f);
	fprintf(f, "\nDiagnosis:  %s\n            %s\n",
		s->col[I_DIAG] ? col(s, I_DIAG) : "none", col(s, I_TITLE));
	if (s->col[I_EVIDENCE] && strcmp(col(s, I_EVIDENCE), "[]")) {
		fputs("Evidence:\n", f);
		print_list(f, s->col[I_EVIDENCE], "  - ");
	}
	if (s->col[I_REMEDY])
		fprintf(f, "Remedy:\n%s\n", col(s, I_REMEDY));
}

static void show_release(struct show *s)
{
	for (int i = 0; i < I_NCOLS; i++)
		free(s->col[i]);
	free(s->rev_status);
	free(s->rev_desc);
}

static int run(struct store *st, struct show *s)
{
	char when[RT_TIME_BUFSZ];
	int rc;

	if ((rc = store_incident_part(st, s->id, STORE_PART_INCIDENT,
				      on_incident, s)))
		return rc;
	if (!s->found)
		return 1;
	s->base_ns = s->opened_ns;
	if ((rc = store_incident_part(st, s->id, STORE_PART_REVISION,
				      on_revision, s)))
		return rc;
	if (s->json) {
		fputs(",\n\"objects\":[", s->f);
		s->n = 0;
		if ((rc = store_incident_part(st, s->id, STORE_PART_OBJECTS,
					      on_object, s)))
			return rc;
		fputs("],\n\"timeline\":[", s->f);
		s->n = 0;
		rc = store_incident_part(st, s->id, STORE_PART_TIMELINE,
					 on_timeline, s);
		fputs("]}\n", s->f);
		return rc;
	}
	print_head(s);
	fputs("\nAffected pods:\n", s->f);
	s->n = 0;
	if ((rc = store_incident_part(st, s->id, STORE_PART_OBJECTS,
				      on_object, s)))
		return rc;
	if (!s->n)
		fputs("  (none)\n", s->f);
	rt_time_format(s->base_ns, when);
	fprintf(s->f, "\nTimeline (relative to %s%s at %s):\n",
		s->rev > 0 ? "revision " : "the first event",
		s->rev > 0 ? col(s, I_REV) : "", when);
	s->n = 0;
	rc = store_incident_part(st, s->id, STORE_PART_TIMELINE, on_timeline, s);
	if (!rc && s->total > s->n)
		fprintf(s->f, "  ... %zu more (revtrail query \"SELECT * FROM "
			"timeline WHERE incident_id = %s\")\n", s->total - s->n,
			col(s, I_ID));
	return rc;
}

int cmd_show(int argc, char **argv)
{
	struct show s = { .f = stdout };
	const char *db = NULL;
	struct store *st;
	char *end;
	int opt, rc, fmt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:o:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			db = optarg;
			break;
		case 'o':
			fmt = cli_output_from_name(optarg);
			if (fmt != CLI_OUT_TEXT && fmt != CLI_OUT_JSON)
				return cli_usage_error("show", "-o wants text or "
						       "json, got '%s'", optarg);
			s.json = fmt == CLI_OUT_JSON;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:
			fputs(usage_text, stderr);
			return CLI_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_text, stderr);
		return cli_usage_error("show", "expected one incident ID");
	}
	s.id = strtoll(argv[optind], &end, 10);
	if (*end || end == argv[optind] || s.id <= 0)
		return cli_usage_error("show", "bad incident ID '%s'",
				       argv[optind]);
	if ((rc = cli_open_readonly("show", cli_db_path(db), &st)))
		return rc;
	rc = run(st, &s);
	if (rc == 1)
		fprintf(stderr, "revtrail show: no incident %s\n", argv[optind]);
	else if (rc)
		fprintf(stderr, "revtrail show: %s\n", store_errmsg(st));
	show_release(&s);
	store_close(st);
	return rc ? CLI_FAIL : fflush(stdout) ? CLI_FAIL : CLI_OK;
}
