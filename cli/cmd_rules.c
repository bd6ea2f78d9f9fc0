/*
 * cmd_rules.c: `revtrail rules list|check|test [PATH...]`. With PATHs the
 * command acts on those packs alone; without, on the built-in packs plus any
 * --rules PATH.
 */
#include <getopt.h>
#include <string.h>

#include "cli.h"


static const struct cli_opt opts[] = {
	{ "rules", CLI_OPT_RULES, "PATH", "add a rule pack or a directory of "
	  "*.rules (repeatable)", NULL },
	{ "no-default-rules", CLI_OPT_NO_DEFAULT, NULL, "drop the built-in "
	  "packs", NULL },
	{ "verbose", 'v', NULL, "list: each pattern's prefilter and unless "
	  "literals too", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"rules", "list|check|test [OPTIONS] [PATH...]",
	"  list   print every rule and diagnosis: id, tags, severity\n"
	"  check  load and compile; errors as FILE:LINE: problem, exit 2\n"
	"  test   run every example and counterexample; exit 1 on a miss\n"
	"  With PATHs, those packs alone.\n",
	opts,
	"  revtrail rules test my.rules\n",
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

	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		if (opt == 'h') {
			cli_help(stdout, &cmd);
			return CLI_OK;
		}
		if (opt == 'v') {
			verbose = true;
			continue;
		}
		if (cli_input_opt("rules", opt, optarg, &unused, &ro) != 1) {
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
