/*
 * opts.c: one options table per command (struct cli_cmd), from which both
 * getopt_long's arrays and the --help text are made, so an option cannot
 * be parsed without being described. Errors are revtrail's own, with the
 * "revtrail COMMAND:" prefix (getopt's are silenced), and a mistyped
 * option or command gets a "did you mean".
 */
#include <getopt.h>
#include <string.h>

#include "cli.h"

#define MAX_OPTS 64

/* getopt_long's view of the table, made once per command. */
static struct option long_opts[MAX_OPTS + 2];
static char short_opts[3 * MAX_OPTS + 4];
static const struct cli_cmd *built;

static void build(const struct cli_cmd *c)
{
	size_t n = 0, s = 0;

	short_opts[s++] = ':';    /* a missing value returns ':' */
	for (const struct cli_opt *o = c->opts; o->val && n < MAX_OPTS; o++) {
		if (o->name)
			long_opts[n++] = (struct option){ o->name,
				o->arg ? required_argument : no_argument,
				NULL, o->val };
		if (o->val < 256) {
			short_opts[s++] = (char)o->val;
			if (o->arg)
				short_opts[s++] = ':';
		}
	}
	long_opts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	long_opts[n] = (struct option){ NULL, 0, NULL, 0 };
	short_opts[s++] = 'h';
	short_opts[s] = '\0';
	built = c;
}

int cli_edit_distance(const char *a, size_t m, const char *b, size_t n)
{
	/* optimal string alignment: Levenshtein plus swapped neighbours */
	unsigned d[CLI_EDIT_MAX + 1][CLI_EDIT_MAX + 1];

	if (m > CLI_EDIT_MAX || n > CLI_EDIT_MAX)
		return CLI_EDIT_MAX + 1;
	for (size_t i = 0; i <= m; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= n; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= m; i++)
		for (size_t j = 1; j <= n; j++) {
			unsigned cost = a[i - 1] != b[j - 1], v;

			v = d[i - 1][j - 1] + cost;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return (int)d[m][n];
}

const char *cli_nearest(const char *word, size_t len,
			const char *const *names, size_t n)
{
	const char *best = NULL;
	int best_d = CLI_SUGGEST_MAX + 1;

	for (size_t i = 0; i < n; i++) {
		int d = cli_edit_distance(word, len, names[i],
					  strlen(names[i]));

		if (d < best_d)
			best = names[i], best_d = d;
	}
	return best;
}

/* "--nam=x": the name, "nam", and its length. */
static size_t long_name(const char *arg, const char **name)
{
	*name = strncmp(arg, "--", 2) ? arg : arg + 2;
	return strcspn(*name, "=");
}

static void unknown_long(const struct cli_cmd *c, const char *arg)
{
	const char *names[MAX_OPTS + 1], *name, *near;
	char both[2 * MAX_OPTS * 24] = "";
	size_t len = long_name(arg, &name), n = 0, prefixed = 0;

	for (const struct option *o = long_opts; o->name; o++) {
		names[n++] = o->name;
		if (!strncmp(o->name, name, len) && len &&
		    strlen(both) + strlen(o->name) + 5 < sizeof(both)) {
			strcat(strcat(both, prefixed++ ? ", --" : "--"),
			       o->name);
		}
	}
	if (prefixed > 1) {
		cli_usage_error(c->name, "option '--%.*s' is ambiguous: %s",
				(int)len, name, both);
		return;
	}
	near = cli_nearest(name, len, names, n);
	if (near)
		cli_usage_error(c->name, "unknown option '--%.*s' (did you mean "
				"'--%s'?)", (int)len, name, near);
	else
		cli_usage_error(c->name, "unknown option '--%.*s'", (int)len,
				name);
}

/* Whether word, the last one getopt read, is the long option of optopt
 * (a cluster "-xv" may still be in reading with a long one before it). */
static bool long_of(const char *word)
{
	const char *name;
	size_t len;

	if (strncmp(word, "--", 2) || !word[2])
		return false;
	len = long_name(word, &name);
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == optopt && !strncmp(o->name, name, len))
			return true;
	return false;
}

/* getopt said '?' (bad) or ':' (no value). */
static void bad_option(const struct cli_cmd *c, int why, char **argv)
{
	const char *word = optind > 0 ? argv[optind - 1] : "", *name;
	size_t len = long_name(word, &name);

	if (why == '?' && !optopt)
		unknown_long(c, word);
	else if (long_of(word) && why == ':')
		cli_usage_error(c->name, "option '--%.*s' needs a value",
				(int)len, name);
	else if (long_of(word))
		cli_usage_error(c->name, "option '--%.*s' takes no value",
				(int)len, name);
	else if (why == ':')
		cli_usage_error(c->name, "option '-%c' needs a value", optopt);
	else
		cli_usage_error(c->name, "unknown option '-%c'", optopt);
	fprintf(stderr, "run 'revtrail %s --help' for its options\n",
		c->name);
}

/* `-n=shop` as kubectl reads it: the value of a short option written
 * against it with '=' starts after the '=' (`-n==x` for a value "=x",
 * or `-n '=x'` as two words). A long option's '=' is getopt's already. */
static bool attached_equals(int opt, char **argv)
{
	const char *word = argv[optind - 1];

	return opt < 256 && optarg && optarg != word && optarg > word &&
	       optarg[-1] == opt && optarg[0] == '=' && word[1] != '-';
}

int cli_getopt(int argc, char **argv, const struct cli_cmd *c)
{
	int opt;

	if (built != c)
		build(c);
	opterr = 0;
	opt = getopt_long(argc, argv, short_opts, long_opts, NULL);
	if (opt == '?' || opt == ':') {
		bad_option(c, opt, argv);
		return '?';
	}
	if (opt != -1 && attached_equals(opt, argv) && !*++optarg) {
		cli_usage_error(c->name, "option '-%c' needs a value", opt);
		return '?';
	}
	return opt;
}

/* "-d, --db PATH": what the option looks like on a command line. */
static int option_head(const struct cli_opt *o, char *head, size_t size)
{
	int n;

	if (o->val < 256 && o->name)
		n = snprintf(head, size, "-%c, --%s", o->val, o->name);
	else if (o->val < 256)
		n = snprintf(head, size, "-%c", o->val);
	else
		n = snprintf(head, size, "    --%s", o->name);
	if (o->arg && n > 0 && (size_t)n < size)
		n += snprintf(head + n, size - (size_t)n, " %s", o->arg);
	return n;
}

static void put_option(FILE *f, const struct cli_opt *o, int width)
{
	char head[96];

	option_head(o, head, sizeof(head));
	fprintf(f, "  %-*s  %s", width, head, o->help);
	if (o->dflt)
		fprintf(f, " (default: %s)", o->dflt);
	putc('\n', f);
}

void cli_help(FILE *f, const struct cli_cmd *c)
{
	static const struct cli_opt help = { "help", 'h', NULL,
		"this help", NULL };
	char head[96];
	int width = 10;

	for (const struct cli_opt *o = c->opts; o->val; o++)
		if (option_head(o, head, sizeof(head)) > width)
			width = option_head(o, head, sizeof(head));
	fprintf(f, "usage: revtrail %s %s\n", c->name, c->synopsis);
	if (c->about)
		fputs(c->about, f);
	fputs("\noptions:\n", f);
	for (const struct cli_opt *o = c->opts; o->val; o++)
		put_option(f, o, width);
	put_option(f, &help, width);
	fprintf(f, "\nexample:\n%s", c->example);
}
