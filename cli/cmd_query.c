/*
 * cmd_query.c: `revtrail query [--db PATH] [-o table|json|csv] SQL`.
 * The database is opened read-only (never created); a statement that would
 * write, attach or set a pragma is refused before anything runs, and the
 * rest runs under a CPU time and a memory limit (store/read.c).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rows.h"
#include "revtrail/store_read.h"


enum { OPT_TIMEOUT = CLI_OPT_FIRST_FREE, OPT_MAX_MEMORY, OPT_NO_HEADERS };

static const struct cli_opt opts[] = {
	CLI_READ_DB_OPT,
	{ "output", 'o', "table|json|csv|csv-raw", "the output format; csv "
	  "quotes a cell a spreadsheet would run, csv-raw is exact", "table" },
	{ "no-headers", OPT_NO_HEADERS, NULL, "rows only", NULL },
	{ "timeout", OPT_TIMEOUT, "DURATION", "CPU time the SQL may take",
	  "30s" },
	{ "max-memory", OPT_MAX_MEMORY, "SIZE", "SQLite's memory, 8M to 1024M",
	  "256M" },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"query", "[OPTIONS] SQL",
	"  Runs read-only SQL on the database (tables incidents, events,\n"
	"  incident_objects, revisions; view timeline).\n",
	opts,
	"  revtrail query --db incidents.db -o json \"SELECT id, release, "
	"diagnosis FROM incidents\"\n",
};

int cmd_query(int argc, char **argv)
{
	struct store_read_opts ro = {
		.timeout_ns = STORE_READ_TIMEOUT_NS,
		.heap_bytes = STORE_READ_HEAP_BYTES,
		.log = stderr,
	};
	struct cli_dbs dbs = { .n = 0 };
	size_t heap;
	int fmt = CLI_OUT_TABLE, opt, rc;
	bool no_headers = false;
	char err[RT_ERRLEN] = "";
	struct store *st;
	struct rows *rows;
	struct cli_spool sp;

	optind = 1;
	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		switch (opt) {
		case 'd':
			if (cli_dbs_add("query", &dbs, optarg))
				return CLI_USAGE;
			break;
		case 'o':
			fmt = cli_output_from_name(optarg);
			if (fmt < 0 || fmt == CLI_OUT_TEXT)
				return cli_usage_error("query", "-o wants table, "
						       "json, csv or csv-raw, "
						       "got '%s'", optarg);
			break;
		case OPT_TIMEOUT:
			if (cli_parse_duration(optarg, &ro.timeout_ns))
				return cli_usage_error("query", "--timeout wants "
						       "a duration like 10s, "
						       "got '%s'", optarg);
			break;
		case OPT_MAX_MEMORY:
			if (cli_parse_size(optarg, &heap) || heap < (8u << 20))
				return cli_usage_error("query", "--max-memory "
						       "wants a size from 8M "
						       "to 1024M, got '%s'",
						       optarg);
			ro.heap_bytes = (int64_t)heap;
			break;
		case OPT_NO_HEADERS:
			no_headers = true;
			break;
		case 'h':
			cli_help(stdout, &cmd);
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (optind != argc - 1) {
		return cli_usage_error("query", "expected one SQL argument");
	}
	if ((rc = cli_open_read("query", &dbs, &ro, &st)))
		return rc;
	rows = rows_new(stdout, fmt);
	if (!rows) {
		store_close(st);
		return CLI_FAIL;
	}
	cli_spool_begin(&sp);   /* no snapshot waits on a stalled reader */
	if (no_headers)
		rows_no_headers(rows);
	rc = store_query(st, argv[optind], rows_header, rows_row, rows, err,
			 sizeof(err));
	if (rc == 0)
		rows_finish(rows);
	rows_free(rows);
	store_close(st);
	if (cli_spool_end(&sp) && !rc)
		return CLI_FAIL;
	if (rc) {
		fprintf(stderr, "revtrail query: %s\n", err[0] ? err :
			rt_strerror(rc));
		return rc == RT_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	return CLI_OK;
}
