/*
 * cmd_rules.c: `revtrail rules list|check|test [PATH...]`. With PATHs the
 * command acts on those packs alone; without, on the built-in packs plus any
 * --rules PATH.
 */
#include <getopt.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
	"usage: revtrail rules list|check|test [--rules PATH]... "
	"[--no-default-rules] [-v] [PATH...]\n"
	"  list   print every rule and diagnosis: id, tags, severity, explanation\n"
	"         (-v: then each pattern's prefilter and unless literals)\n"
	"  check  load and compile; errors as FILE:LINE: problem, exit 2\n"
	"  test   run every example and counterexample; exit 1 on a miss\n";

static const struct option long_opts[] = {
	{ "rules", required_argument, NULL, CLI_OPT_RULES },
	{ "no-default-rules", no_argument, NULL, CLI_OPT_NO_DEFAULT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int run(const char *verb, struct rules *r, bool verbose)
{
	unsigned misses;

	if (!strcmp(verb, "list")) {
		rules_list(r, stdout);
		if (verbose)
			rules_list_prefilter(r, stdout);
		return CLI_OK;
	}
	if (!strcmp(verb, "check")) {
		printf("ok: %zu rules, %zu diagnoses\n", rules_count(r),
		       rules_diagnosis_count(r));
		return CLI_OK;
	}
	misses = rules_test(r, stdout);
	printf("%zu rules tested, %u misses\n", rules_count(r), misses);
	return misses ? CLI_FAIL : CLI_OK;
}

int cmd_rules(int argc, char **argv)
{
	struct ingest_opts unused = { 0 };
	struct cli_rules_opts ro = { 0 };
	const char *verb;
	struct rules *r;
	int opt, rc;
	bool verbose = false;

	while ((opt = getopt_long(argc, argv, "hv", long_opts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return CLI_OK;
		}
		if (opt == 'v') {
			verbose = true;
			continue;
		}
		if (cli_input_opt("rules", opt, optarg, &unused, &ro) != 1) {
			fputs(usage_text, stderr);
			return CLI_USAGE;
		}
	}
	if (optind >= argc)
		return cli_usage_error("rules", "missing verb: list, check or test");
	verb = argv[optind++];
	if (strcmp(verb, "list") && strcmp(verb, "check") && strcmp(verb, "test"))
		return cli_usage_error("rules", "unknown verb '%s'", verb);
	if (argc - optind > 32)
		return cli_usage_error("rules", "at most 32 packs at once");
	if (optind < argc) {
		ro.no_default = true;
		ro.npaths = 0;
		for (; optind < argc; optind++)
			ro.paths[ro.npaths++] = argv[optind];
	}
	if (!(r = cli_load_rules(&ro)))
		return CLI_USAGE;
	rc = run(verb, r, verbose);
	rules_free(r);
	return rc;
}
