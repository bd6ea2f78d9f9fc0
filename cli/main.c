/*
 * main.c: the revtrail front end. A table of subcommands, each in its own
 * cli/cmd_NAME.c; this file only dispatches and owns the process exit.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <cJSON.h>
#include <librdkafka/rdkafka.h>
#include <pcre2.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef REVTRAIL_VERSION
#define REVTRAIL_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "ingest", cmd_ingest, "read inputs into incidents in SQLite" },
	{ "incidents", cmd_incidents, "list incidents, newest first" },
	{ "show", cmd_show, "one incident: timeline, diagnosis, remedy" },
	{ "report", cmd_report, "open incidents as one HTML page" },
	{ "query", cmd_query, "read-only SQL on the database" },
	{ "consume", cmd_consume, "Kafka consumer service: topics into incidents" },
	{ "classify", cmd_classify, "tag records, print JSON Lines" },
	{ "rules", cmd_rules, "list, check or test rule packs" },
	{ "prune", cmd_prune, "delete what aged past --retain, now" },
};

/* The libraries' own versions, as loaded: a bug report needs them. */
static void version(void)
{
	char pcre[64] = "?";

	pcre2_config(PCRE2_CONFIG_VERSION, pcre);
	printf("revtrail %s\n", REVTRAIL_VERSION);
	printf("PCRE2 %s, SQLite %s, librdkafka %s, cJSON %s\n", pcre,
	       sqlite3_libversion(), rd_kafka_version_str(), cJSON_Version());
}

static void usage(FILE *f)
{
	fputs("usage: revtrail COMMAND [OPTIONS] [ARGS]\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name,
			commands[i].summary);
	fputs("\nrevtrail COMMAND --help shows a command's options; man revtrail "
	      "has them all.\nrevtrail --version names this build and its "
	      "libraries.\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		version();
		return fflush(stdout) ? CLI_FAIL : CLI_OK;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			static char prog[32];

			snprintf(prog, sizeof(prog), "revtrail %s",
				 commands[i].name);
			rt_prog = prog;
			return commands[i].run(argc - 1, argv + 1);
		}
	fprintf(stderr, "revtrail: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return CLI_USAGE;
}
