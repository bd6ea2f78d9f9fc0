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

static const char usage_text[] =
	"usage: revtrail prune --retain DURATION [--db PATH]\n"
	"  Deletes events last seen, and closed incidents last seen, more than\n"
	"  DURATION (7d, 12h, 2w) before the newest stored data (never later\n"
	"  than now). Revisions, release mappings and positions stay.\n"
	"  --db PATH        the database (default revtrail.db)\n"
	"  --retain DURATION  what to keep; required, at least 1m\n"
	"  example: revtrail prune --db incidents.db --retain 30d\n";

static const struct option long_opts[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "retain", required_argument, NULL, 'r' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_prune(int argc, char **argv)
{
	struct pipeline_opts so = { 0 };
	struct store_stats stats = { 0 };
	struct pipeline_db *db;
	const char *path = NULL;
	char err[1024];
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			path = optarg;
			break;
		case 'r':
			if (cli_retain_opt("prune", optarg, &so.retain_ns))
				return CLI_USAGE;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:
			fputs(usage_text, stderr);
			return CLI_USAGE;
		}
	}
	if (optind < argc || !so.retain_ns) {
		fputs(usage_text, stderr);
		return cli_usage_error("prune", optind < argc ? "unexpected "
				       "argument '%s'" : "--retain is required",
				       argv[optind < argc ? optind : 0]);
	}
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
