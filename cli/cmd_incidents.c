/*
 * cmd_incidents.c: `revtrail incidents [--db PATH] [-o table|wide|json|csv]
 * [--open] [-n NS | -A] [--release [NS/]NAME] [--cluster NAME] [--since WHEN]
 * [--no-headers] [--color WHEN]`: one line per incident, newest first. The
 * table fits the terminal: when last seen as an age (SEEN), the release as
 * NS/NAME, and the diagnosis and release cut before anything else; -o wide
 * has every column at full width. The cluster (a column in every format)
 * only when the database has a named one: one-cluster output never
 * changed.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rows.h"
#include "revtrail/store_read.h"


enum {
	OPT_OPEN = CLI_OPT_FIRST_FREE, OPT_SINCE, OPT_RELEASE, OPT_NO_HEADERS,
	OPT_COLOR, OPT_CLUSTER,
};

static const struct cli_opt opts[] = {
	CLI_READ_DB_OPT,
	{ "output", 'o', "table|wide|json|csv|csv-raw", "wide: every column "
	  "at full width; csv quotes a cell a spreadsheet would run", "table" },
	{ "open", OPT_OPEN, NULL, "open incidents only", NULL },
	{ "namespace", 'n', "NS", "one namespace", NULL },
	{ "all-namespaces", 'A', NULL, "every namespace", "yes" },
	{ "release", OPT_RELEASE, "[NS/]NAME", "one release", NULL },
	{ "cluster", OPT_CLUSTER, "NAME", "one cluster; \"\" is the default "
	  "one", "all" },
	{ "since", OPT_SINCE, "DATE|TIME|DURATION", "last seen at or after "
	  "2024-11-03, 2024-11-03T14:00:00Z or 2h ago", NULL },
	{ "no-headers", OPT_NO_HEADERS, NULL, "rows only", NULL },
	{ "color", OPT_COLOR, "auto|always|never", "colour severity and "
	  "status", "auto: a terminal, without NO_COLOR" },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"incidents", "[OPTIONS]",
	"  One line per incident, newest first. On a terminal the table fits\n"
	"  its width; into a pipe or a file nothing is cut.\n",
	opts,
	"  revtrail incidents --db incidents.db --open -n shop\n",
};

/* Columns of SQL_INCIDENTS (store/sql.h). */
enum { C_ID, C_NS, C_REL, C_REV, C_STATUS, C_SEV, C_OPENED, C_LAST,
       C_CLOSED, C_EVENTS, C_TAGS, C_DIAG, C_TITLE, C_REVSTATUS, C_ATTR,
       C_PODS, C_CLUSTER };

enum { OUT_WIDE = 100 };      /* -o wide: the table with every column */

struct listing {
	struct rows *rows;
	int fmt;
	bool one_ns;              /* -n: the namespace goes without saying */
	bool clusters;            /* a CLUSTER column (store_has_clusters) */
	int64_t now_ns;
	size_t n;
};

static const char *text_of(const struct store_value *v)
{
	return v->type == STORE_TEXT ? v->p : NULL;
}

/* "2024-11-03T14:41:30.123456Z" -> "2024-11-03T14:41:30Z" */
static void short_time(const struct store_value *v, char *out, size_t size)
{
	const char *t = text_of(v);

	if (!t || strlen(t) < 19)
		snprintf(out, size, "-");
	else
		snprintf(out, size, "%.19sZ", t);
}

/* Time since t, as kubectl prints ages: 45s, 12m, 5h, 395d, 2y. */
static void age(const struct listing *l, const struct store_value *v,
		char *out, size_t size)
{
	int64_t ns, s;

	if (!text_of(v) || rt_time_parse(v->p, v->n, &ns)) {
		snprintf(out, size, "-");
		return;
	}
	s = (l->now_ns - ns) / 1000000000;
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(out, size, "%llds", (long long)s);
	else if (s < 3 * 3600)
		snprintf(out, size, "%lldm", (long long)(s / 60));
	else if (s < 48 * 3600)
		snprintf(out, size, "%lldh", (long long)(s / 3600));
	else if (s < 730 * 86400)
		snprintf(out, size, "%lldd", (long long)(s / 86400));
	else
		snprintf(out, size, "%lldy", (long long)(s / (365 * 86400)));
}

/* The default cluster, in a table of several: "-". */
static const char *cluster_cell(const struct store_value *v)
{
	return text_of(&v[C_CLUSTER]) && v[C_CLUSTER].n ? v[C_CLUSTER].p : "-";
}

static int wide_row(struct listing *l, const struct store_value *v,
		    const char *id, const char *rev)
{
	char opened[32], last[32], events[24];
	const char *cells[12], **c = cells;

	short_time(&v[C_OPENED], opened, sizeof(opened));
	short_time(&v[C_LAST], last, sizeof(last));
	snprintf(events, sizeof(events), "%lld", (long long)v[C_EVENTS].i);
	*c++ = id;
	if (l->clusters)
		*c++ = cluster_cell(v);
	*c++ = text_of(&v[C_NS]);
	*c++ = text_of(&v[C_REL]);
	*c++ = rev;
	*c++ = text_of(&v[C_STATUS]);
	*c++ = text_of(&v[C_SEV]);
	*c++ = opened;
	*c++ = last;
	*c++ = events;
	*c++ = text_of(&v[C_TAGS]);
	*c++ = text_of(&v[C_DIAG]) ? text_of(&v[C_DIAG]) : "-";
	return rows_cells(l->rows, (int)(c - cells), cells);
}

static int on_row(void *ctx, int n, const char *const *names,
		  const struct store_value *v)
{
	struct listing *l = ctx;
	char id[24], rev[24], when[16], release[600];
	const char *cells[8], **c = cells;

	l->n++;
	if (l->fmt != CLI_OUT_TABLE && l->fmt != OUT_WIDE)
		return rows_row(l->rows, l->clusters ? n : C_CLUSTER, names, v);
	snprintf(id, sizeof(id), "%lld", (long long)v[C_ID].i);
	if (v[C_REV].i > 0)
		snprintf(rev, sizeof(rev), "%lld", (long long)v[C_REV].i);
	else
		snprintf(rev, sizeof(rev), "?");
	if (l->fmt == OUT_WIDE)
		return wide_row(l, v, id, rev);
	snprintf(release, sizeof(release), "%s%s%s", l->one_ns ? "" :
		 text_of(&v[C_NS]) ? v[C_NS].p : "-", l->one_ns ? "" : "/",
		 text_of(&v[C_REL]) ? v[C_REL].p : "-");
	age(l, &v[C_LAST], when, sizeof(when));
	*c++ = id;
	if (l->clusters)
		*c++ = cluster_cell(v);
	*c++ = release;
	*c++ = rev;
	*c++ = text_of(&v[C_STATUS]);
	*c++ = text_of(&v[C_SEV]);
	*c++ = when;
	*c++ = text_of(&v[C_DIAG]) ? text_of(&v[C_DIAG]) : "-";
	return rows_cells(l->rows, (int)(c - cells), cells);
}

static int on_header(void *ctx, int n, const char *const *names)
{
	/* [1] is CLUSTER: skipped unless the database has clusters */
	static const char *const table[] = {
		"ID", "CLUSTER", "RELEASE", "REV", "STATUS", "SEVERITY",
		"SEEN", "DIAGNOSIS",
	};
	static const char *const wide[] = {
		"ID", "CLUSTER", "NAMESPACE", "RELEASE", "REVISION", "STATUS",
		"SEVERITY", "OPENED", "LAST SEEN", "EVENTS", "TAGS", "DIAGNOSIS",
	};
	struct listing *l = ctx;
	const char *cells[12];
	const char *const *h = l->fmt == OUT_WIDE ? wide : table;
	int k = l->fmt == OUT_WIDE ? 12 : 8, m = 0;

	if (l->fmt != CLI_OUT_TABLE && l->fmt != OUT_WIDE)
		return rows_header(l->rows, l->clusters ? n : C_CLUSTER,
				   names);
	for (int i = 0; i < k; i++)
		if (i != 1 || l->clusters)
			cells[m++] = h[i];
	return rows_header(l->rows, m, cells);
}

/* --release NS/NAME is -n NS --release NAME; a bare NAME, any namespace. */
static int parse_release(const char *arg, struct store_filter *f)
{
	const char *slash = strchr(arg, '/');
	static char ns[256];

	if (!slash) {
		f->release = arg;
		return *arg ? 0 : -1;
	}
	if (slash == arg || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - arg) >= sizeof(ns))
		return -1;
	memcpy(ns, arg, (size_t)(slash - arg));
	ns[slash - arg] = '\0';
	if (f->ns && strcmp(f->ns, ns))
		return -2;
	f->ns = ns;
	f->release = slash + 1;
	return 0;
}

int cmd_incidents(int argc, char **argv)
{
	static const char *const json_cols[] = { "tags", "pods", NULL };
	struct store_filter f = { 0 };
	struct listing l = { 0 };
	const char *release = NULL;
	struct cli_dbs dbs = { .n = 0 };
	bool all_ns = false, no_headers = false;
	struct timespec now;
	struct store *st;
	struct cli_spool sp;
	int opt, rc;

	l.fmt = CLI_OUT_TABLE;
	optind = 1;
	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		switch (opt) {
		case 'd':
			if (cli_dbs_add("incidents", &dbs, optarg))
				return CLI_USAGE;
			break;
		case 'o':
			l.fmt = !strcmp(optarg, "wide") ? OUT_WIDE :
				cli_output_from_name(optarg);
			if (l.fmt < 0 || l.fmt == CLI_OUT_TEXT)
				return cli_usage_error("incidents", "-o wants "
						       "table, wide, json, "
						       "csv or csv-raw, got "
						       "'%s'", optarg);
			break;
		case 'A':
			all_ns = true;
			break;
		case OPT_NO_HEADERS:
			no_headers = true;
			break;
		case OPT_COLOR:
			if (cli_color_opt("incidents", optarg))
				return CLI_USAGE;
			break;
		case OPT_OPEN:
			f.open_only = true;
			break;
		case 'n':
			f.ns = optarg;
			break;
		case OPT_RELEASE:
			release = optarg;
			break;
		case OPT_CLUSTER:
			if (cli_cluster_filter("incidents", optarg))
				return CLI_USAGE;
			f.cluster = optarg;
			break;
		case OPT_SINCE:
			if (cli_parse_since(optarg, &f.since_ns))
				return cli_usage_error("incidents", "--since "
						       "wants a date, a time or "
						       "a duration (2024-11-03, "
						       "2024-11-03T14:00:00Z, "
						       "2h), got '%s'", optarg);
			break;
		case 'h':
			cli_help(stdout, &cmd);
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (optind != argc) {
		return cli_usage_error("incidents", "unexpected argument '%s'",
				       argv[optind]);
	}
	if (all_ns && f.ns)
		return cli_usage_error("incidents", "-A and -n exclude each "
				       "other");
	if (release && (rc = parse_release(release, &f)))
		return cli_usage_error("incidents", rc == -2 ? "--release %s "
				       "names another namespace than -n" :
				       "--release wants NAME or NAMESPACE/NAME, "
				       "got '%s'", release);
	if ((rc = cli_open_readonly("incidents", &dbs, &st)))
		return rc;
	if ((rc = store_has_clusters(st)) < 0) {
		fprintf(stderr, "revtrail incidents: %s\n", store_errmsg(st));
		store_close(st);
		return CLI_FAIL;
	}
	cli_spool_begin(&sp);   /* no snapshot waits on a stalled reader */
	l.clusters = rc == 1;
	l.rows = rows_new(stdout, l.fmt == OUT_WIDE ? CLI_OUT_TABLE : l.fmt);
	if (!l.rows) {
		store_close(st);
		cli_spool_end(&sp);
		return CLI_FAIL;
	}
	rows_json_columns(l.rows, json_cols);
	if (no_headers)
		rows_no_headers(l.rows);
	if (l.fmt == CLI_OUT_TABLE) {
		/* NS/NAME gives way first (its start names it), then the
		 * diagnosis */
		static const struct rows_shrink shrink[2][4] = {
			{ { 1, 18 }, { 6, 19 }, { 1, 12 }, { 6, 10 } },
			{ { 2, 18 }, { 7, 19 }, { 2, 12 }, { 7, 10 } },
		};

		/* into a pipe or a file nothing is cut, as with kubectl:
		 * `incidents | grep NAME` must find whole names */
		if (isatty(fileno(stdout)))
			rows_fit(l.rows, cli_width(stdout), 2,
				 shrink[l.clusters], 4);
	}
	l.one_ns = f.ns != NULL;
	clock_gettime(CLOCK_REALTIME, &now);
	l.now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	rc = store_incidents(st, &f, on_header, on_row, &l);
	if (!rc && (l.n || (l.fmt != CLI_OUT_TABLE && l.fmt != OUT_WIDE)))
		rows_finish(l.rows);
	rows_free(l.rows);
	if (rc)
		fprintf(stderr, "revtrail incidents: %s\n", store_errmsg(st));
	else if (!l.n && (l.fmt == CLI_OUT_TABLE || l.fmt == OUT_WIDE))
		fputs("No incidents found.\n", stderr);
	store_close(st);
	if (cli_spool_end(&sp))
		return CLI_FAIL;
	return rc ? CLI_FAIL : CLI_OK;
}
