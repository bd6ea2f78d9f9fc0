/*
 * cmd_report.c: `revtrail report [--db PATH] [-o html] [--all] [-n NS]
 * [--cluster NAME]`: every open incident (every incident with --all),
 * newest first, as one self-contained HTML page to attach to a ticket or
 * open offline.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "html.h"
#include "rows.h"


enum { OPT_ALL = CLI_OPT_FIRST_FREE, OPT_CLUSTER };

static const struct cli_opt opts[] = {
	CLI_READ_DB_OPT,
	{ "output", 'o', "html", "the only format", "html" },
	{ "all", OPT_ALL, NULL, "every incident, not only the open ones",
	  NULL },
	{ "namespace", 'n', "NS", "one namespace", NULL },
	{ "cluster", OPT_CLUSTER, "NAME", "one cluster; \"\" is the default "
	  "one", "all" },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"report", "[OPTIONS]",
	"  Open incidents (all with --all) as one self-contained HTML page\n"
	"  on stdout.\n",
	opts,
	"  revtrail report --db incidents.db > report.html\n",
};

#define MAX_INCIDENTS 500     /* a page, not a database dump */

struct ids {
	int64_t id[MAX_INCIDENTS];
	size_t n, total;
};

static int on_id(void *ctx, int n, const char *const *names,
		 const struct store_value *v)
{
	struct ids *ids = ctx;

	(void)n;
	(void)names;
	if (ids->n < MAX_INCIDENTS)
		ids->id[ids->n++] = v[0].i;
	ids->total++;
	return 0;
}

static int write_page(struct store *st, const struct ids *ids, bool all,
		      const char *db_hint)
{
	int rc = 0;

	html_begin(stdout, all ? "revtrail: all incidents" :
		   "revtrail: open incidents");
	if (!ids->n)
		printf("<p>No %sincidents.</p>\n", all ? "" : "open ");
	for (size_t i = 0; i < ids->n && !rc; i++)
		rc = html_incident_section(st, ids->id[i], db_hint,
					   stdout);
	if (ids->total > ids->n)
		printf("<p class=\"more\">%zu more incidents: narrow with -n "
		       "NS.</p>\n", ids->total - ids->n);
	html_end(stdout);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct store_filter f = { .open_only = true };
	struct ids *ids;
	char *hint;
	struct cli_dbs dbs = { .n = 0 };
	struct store *st;
	struct cli_spool sp;
	int opt, rc;

	optind = 1;
	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		switch (opt) {
		case 'd':
			if (cli_dbs_add("report", &dbs, optarg))
				return CLI_USAGE;
			break;
		case 'o':
			if (strcmp(optarg, "html"))
				return cli_usage_error("report", "-o wants html, "
						       "got '%s'", optarg);
			break;
		case OPT_ALL:
			f.open_only = false;
			break;
		case 'n':
			f.ns = optarg;
			break;
		case OPT_CLUSTER:
			if (cli_cluster_filter("report", optarg))
				return CLI_USAGE;
			f.cluster = optarg;
			break;
		case 'h':
			cli_help(stdout, &cmd);
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (optind != argc) {
		return cli_usage_error("report", "unexpected argument '%s'",
				       argv[optind]);
	}
	if ((rc = cli_open_readonly("report", &dbs, &st)))
		return rc;
	if (!(ids = calloc(1, sizeof(*ids)))) {
		store_close(st);
		return CLI_FAIL;
	}
	hint = cli_dbs_hint(&dbs);
	cli_spool_begin(&sp);   /* no snapshot waits on a stalled reader */
	rc = store_incidents(st, &f, NULL, on_id, ids);
	if (!rc)
		rc = write_page(st, ids, !f.open_only, hint);
	if (rc)
		fprintf(stderr, "revtrail report: %s\n", store_errmsg(st));
	free(hint);
	free(ids);
	store_close(st);
	if (cli_spool_end(&sp))
		return CLI_FAIL;
	return rc ? CLI_FAIL : CLI_OK;
}
