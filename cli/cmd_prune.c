/*
 * cmd_prune.c: `revtrail prune --retain DURATION [--db PATH]`: what
 * `ingest --retain` and `consume --retain` delete a share of in each
 * commit, deleted now, at once, by a writer of its own (so not while
 * another writes). Age is measured by the stored data's own clock (see
 * correlate/retain.c), never by a later wall clock than now.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "revtrail/store.h"
#include "revtrail/writer.h"

enum { OPT_RETAIN = CLI_OPT_FIRST_FREE };

static const struct cli_opt opts[] = {
	{ "db", 'd', "PATH", "the database",
	  "$REVTRAIL_DB, else ./revtrail.db" },
	{ "retain", OPT_RETAIN, "DURATION", "what to keep (7d, 12h, 2w; at "
	  "least 1m); required", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"prune", "--retain DURATION [--db PATH]",
	"  Deletes events last seen, and closed incidents last seen, more than\n"
	"  DURATION before the newest stored data (never later than now), as\n"
	"  ingest --retain does a share of per commit. Revisions, release\n"
	"  mappings and positions stay.\n",
	opts,
	"  revtrail prune --db incidents.db --retain 30d\n",
};

int cmd_prune(int argc, char **argv)
{
	struct pipeline_opts so = { 0 };
	struct store_stats stats = { 0 };
	struct pipeline_db *db;
	const char *path = NULL;
	char err[RT_ERRLEN];
	int opt, rc;

	optind = 1;
	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		switch (opt) {
		case 'd':
			path = optarg;
			break;
		case OPT_RETAIN:
			if (cli_retain_opt("prune", optarg, &so.retain_ns))
				return CLI_USAGE;
			break;
		case 'h':
			cli_help(stdout, &cmd);
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (optind < argc || !so.retain_ns)
		return cli_usage_error("prune", optind < argc ? "unexpected "
				       "argument '%s'" : "--retain is required",
				       argv[optind < argc ? optind : 0]);
	if ((rc = pipeline_db_open(cli_db_path(path), &so, &db, err,
				   sizeof(err)))) {
		fprintf(stderr, "revtrail prune: %s\n", err);
		return rc == RT_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	rc = pipeline_prune(db, &stats);
	if (rc)
		fprintf(stderr, "revtrail prune: %s\n",
			store_errmsg(pipeline_db_store(db)));
	pipeline_db_close(db);
	if (rc)
		return CLI_FAIL;
	printf("%" PRIu64 " events and %" PRIu64 " closed incidents deleted\n",
	       stats.events_expired, stats.incidents_expired);
	return fflush(stdout) ? CLI_FAIL : CLI_OK;
}
