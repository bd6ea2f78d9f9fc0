/*
 * main.c: the revtrail front end. A table of subcommands, each in its own
 * cli/cmd_NAME.c; this file only dispatches and owns the process exit.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <pcre2.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	{ "fleet", cmd_fleet, "fold the instances' incidents topic into one database" },
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
	fputs("\nrevtrail help COMMAND shows a command's options; man revtrail "
	      "has them all.\nrevtrail --version names this build and its "
	      "libraries.\n", f);
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static int unknown(const char *name)
{
	const char *names[sizeof(commands) / sizeof(commands[0])], *near;
	size_t n = sizeof(commands) / sizeof(commands[0]);

	for (size_t i = 0; i < n; i++)
		names[i] = commands[i].name;
	near = cli_nearest(name, strlen(name), names, n);
	if (near)
		fprintf(stderr, "revtrail: unknown command '%s': did you mean "
			"'%s'?\n", name, near);
	else
		fprintf(stderr, "revtrail: unknown command '%s'\n", name);
	fputs("run 'revtrail help' for the commands\n", stderr);
	return CLI_USAGE;
}

static int run(const struct command *c, int argc, char **argv)
{
	static char prog[32];

	snprintf(prog, sizeof(prog), "revtrail %s", c->name);
	rt_prog = prog;
	return c->run(argc, argv);
}

/* `revtrail help COMMAND` is `revtrail COMMAND --help`. */
static int help(int argc, char **argv)
{
	static char dash_help[] = "--help";
	const struct command *c;
	char *args[3];

	if (argc < 3) {
		usage(stdout);
		return CLI_OK;
	}
	if (!(c = find(argv[2])))
		return unknown(argv[2]);
	args[0] = argv[2], args[1] = dash_help, args[2] = NULL;
	return run(c, 2, args);
}

/* Run with stdin, stdout or stderr closed (`ingest <&-`), the next file
 * opened would take that number: the database read as input, or error
 * lines written into it. /dev/null takes every closed one first, before
 * anything else opens a file; open returns the lowest free number, so
 * filling them in order puts each where it belongs. */
static void std_fds_open(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", fd ? O_WRONLY : O_RDONLY) < 0)
			exit(CLI_FAIL);
}

int main(int argc, char **argv)
{
	const struct command *c;


	std_fds_open();
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		version();
		return fflush(stdout) ? CLI_FAIL : CLI_OK;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!(c = find(argv[1])))
		return unknown(argv[1]);
	return run(c, argc - 1, argv + 1);
}
