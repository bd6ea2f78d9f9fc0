/*
 * cmd_incidents.c: `revtrail incidents [--db PATH] [-o table|wide|json|csv]
 * [--open] [-n NS | -A] [--release [NS/]NAME] [--cluster NAME] [--since WHEN]
 * [--no-headers] [--color WHEN] [--watch]`: one line per incident, newest
 * first; --watch goes on with a line per change (watch.c). The
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
#include "watch.h"
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
	{ "watch", 'w', NULL, "then one line per incident opened, changed or "
	  "closed as the database is written, until interrupted (-o json: "
	  "one object a line)", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"incidents", "[OPTIONS]",
	"  One line per incident, newest first. On a terminal the table fits\n"
	"  its width; into a pipe or a file nothing is cut. --watch goes on\n"
	"  with a line per incident opened, changed or closed (a CHANGE\n"
	"  column) as the writer commits, until SIGINT or SIGTERM.\n",
	opts,
	"  revtrail incidents --db incidents.db --open -n shop\n"
	"  revtrail incidents --db incidents.db --watch -o json\n",
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
	struct cli_watch *w;      /* --watch, else NULL */
	bool listing;             /* --watch: the table before the changes */
};

/* Columns holding JSON, embedded as JSON values by -o json. */
static const char *const json_cols[] = { "tags", "pods", NULL };

static const char *const change_name[] = {
	[CLI_LISTED] = "listed", [CLI_OPENED] = "opened",
	[CLI_CHANGED] = "changed", [CLI_CLOSED] = "closed",
};

/* --watch -o json|csv: the row behind a "change" column. */
static int change_row(struct listing *l, int n, const char *const *names,
		      const struct store_value *v, const char *change)
{
	const char *nm[C_CLUSTER + 2];
	struct store_value cv[C_CLUSTER + 2];

	if (n > C_CLUSTER + 1)
		n = C_CLUSTER + 1;
	nm[0] = "change";
	cv[0] = (struct store_value){ .type = STORE_TEXT, .p = change,
				      .n = strlen(change) };
	memcpy(&nm[1], names, (size_t)n * sizeof(*names));
	memcpy(&cv[1], v, (size_t)n * sizeof(*v));
	if (l->fmt == CLI_OUT_JSON) {
		FILE *f = l->w->buf;

		rows_json_object(f, n + 1, nm, cv, json_cols);
		putc('\n', f);
		return ferror(f) ? RT_EIO : 0;
	}
	return rows_row(l->rows, n + 1, nm, cv);
}

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
		    const char *id, const char *rev, const char *change)
{
	char opened[32], last[32], events[24];
	const char *cells[13], **c = cells;

	if (change)
		*c++ = l->listing ? "" : change;
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
	const char *cells[9], **c = cells, *change = NULL;

	l->n++;
	if (l->w) {
		enum cli_change k = l->listing ?
			cli_watch_row(l->w, n, v, true) : l->w->change;

		change = change_name[k];
	}
	if (l->fmt != CLI_OUT_TABLE && l->fmt != OUT_WIDE)
		return change ? change_row(l, l->clusters ? n : C_CLUSTER,
					   names, v, change) :
			rows_row(l->rows, l->clusters ? n : C_CLUSTER, names, v);
	/* the table's own rows go without saying */
	if (change)
		*c++ = l->listing ? "" : change;
	snprintf(id, sizeof(id), "%lld", (long long)v[C_ID].i);
	if (v[C_REV].i > 0)
		snprintf(rev, sizeof(rev), "%lld", (long long)v[C_REV].i);
	else
		snprintf(rev, sizeof(rev), "?");
	if (l->fmt == OUT_WIDE)
		return wide_row(l, v, id, rev, change);
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
	const char *cells[13], *nm[C_CLUSTER + 2];
	const char *const *h = l->fmt == OUT_WIDE ? wide : table;
	int k = l->fmt == OUT_WIDE ? 12 : 8, m = 0;

	if (l->fmt != CLI_OUT_TABLE && l->fmt != OUT_WIDE) {
		n = l->clusters ? n : C_CLUSTER;
		if (!l->w || n > C_CLUSTER + 1)
			return rows_header(l->rows, n, names);
		nm[0] = "change";
		memcpy(&nm[1], names, (size_t)n * sizeof(*names));
		return rows_header(l->rows, n + 1, nm);
	}
	if (l->w)
		cells[m++] = "CHANGE";
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

/* The printer of l->fmt, writing to out. 0, or -1 when out of memory. */
static int listing_new(struct listing *l, FILE *out, bool no_headers)
{
	/* NS/NAME gives way first (its start names it), then the
	 * diagnosis; a watcher's CHANGE column comes first */
	static const struct rows_shrink shrink[3][4] = {
		{ { 1, 18 }, { 6, 19 }, { 1, 12 }, { 6, 10 } },
		{ { 2, 18 }, { 7, 19 }, { 2, 12 }, { 7, 10 } },
		{ { 3, 18 }, { 8, 19 }, { 3, 12 }, { 8, 10 } },
	};

	l->rows = rows_new(out, l->fmt == OUT_WIDE ? CLI_OUT_TABLE : l->fmt);
	if (!l->rows)
		return -1;
	rows_json_columns(l->rows, json_cols);
	rows_color_as(l->rows, stdout);
	if (l->w)
		rows_min_width(l->rows, 0, strlen("changed"));
	if (no_headers)
		rows_no_headers(l->rows);
	/* into a pipe or a file nothing is cut, as with kubectl:
	 * `incidents | grep NAME` must find whole names */
	if (l->fmt == CLI_OUT_TABLE && isatty(fileno(stdout)))
		rows_fit(l->rows, cli_width(stdout), 2,
			 shrink[l->clusters + (l->w != NULL)], 4);
	return 0;
}

static void set_now(struct listing *l)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	l->now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* The table (or JSON, CSV) of the incidents under f. 0 or an RT_E*. */
static int list(struct listing *l, struct store *st,
		const struct store_filter *f)
{
	bool table = l->fmt == CLI_OUT_TABLE || l->fmt == OUT_WIDE;
	int rc;

	set_now(l);
	l->listing = true;
	rc = store_incidents(st, f, on_header, on_row, l);
	l->listing = false;
	/* a watcher's JSON is one object a line, no array */
	if (!rc && (l->n || !table) && !(l->w && l->fmt == CLI_OUT_JSON))
		rows_finish(l->rows);
	if (rc)
		fprintf(stderr, "revtrail incidents: %s\n", store_errmsg(st));
	else if (!l->n && table)
		fputs("No incidents found.\n", stderr);
	return rc;
}

/* --watch: the listing, then a round after each commit until a signal.
 * Every round's lines are written out after its reads (watch.c). */
static int watch(struct listing *l, struct store *st,
		 const struct store_filter *f, bool no_headers)
{
	struct cli_watch w;
	int rc;

	if (cli_watch_init(&w, st, "incidents"))
		return CLI_FAIL;
	l->w = &w;
	if (listing_new(l, w.buf, no_headers)) {
		cli_watch_release(&w);
		return CLI_FAIL;
	}
	if (!(rc = list(l, st, f))) {
		for (;;) {
			if (cli_watch_flush(&w)) {
				rc = RT_EIO;    /* stdout closed: no message */
				break;
			}
			if ((rc = cli_watch_wait(&w, st)) != 1)
				break;
			set_now(l);
			if ((rc = cli_watch_round(&w, st, f, on_row, l)))
				break;
			if (l->fmt != CLI_OUT_JSON)
				rows_finish(l->rows);
		}
		if (rc < 0 && rc != RT_EIO)
			fprintf(stderr, "revtrail incidents: %s\n",
				store_errmsg(st));
	}
	rows_free(l->rows);
	cli_watch_release(&w);
	return rc ? CLI_FAIL : CLI_OK;
}

int cmd_incidents(int argc, char **argv)
{
	struct store_filter f = { 0 };
	struct listing l = { 0 };
	const char *release = NULL;
	struct cli_dbs dbs = { .n = 0 };
	bool all_ns = false, no_headers = false, watching = false;
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
		case 'w':
			watching = true;
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
	if (watching && dbs.opened > 1) {
		store_close(st);
		return cli_usage_error("incidents", "--watch reads one "
				       "database, not %zu", dbs.opened);
	}
	if ((rc = store_has_clusters(st)) < 0) {
		fprintf(stderr, "revtrail incidents: %s\n", store_errmsg(st));
		store_close(st);
		return CLI_FAIL;
	}
	l.clusters = rc == 1;
	l.one_ns = f.ns != NULL;
	if (watching) {
		rc = watch(&l, st, &f, no_headers);
		store_close(st);
		return rc;
	}
	cli_spool_begin(&sp);   /* no snapshot waits on a stalled reader */
	if (listing_new(&l, stdout, no_headers)) {
		store_close(st);
		cli_spool_end(&sp);
		return CLI_FAIL;
	}
	rc = list(&l, st, &f);
	rows_free(l.rows);
	store_close(st);
	if (cli_spool_end(&sp))
		return CLI_FAIL;
	return rc ? CLI_FAIL : CLI_OK;
}
