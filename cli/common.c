/*
 * common.c: what several subcommands share: loading rules, the database
 * path, option values, output-format names, JSON strings.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

struct rules *cli_load_rules(const struct cli_rules_opts *o)
{
	char err[512] = "";
	struct rules *r = rules_new();

	if (!r) {
		fputs("revtrail: out of memory\n", stderr);
		return NULL;
	}
	if (!o->no_default && rules_load_builtin(r, err, sizeof(err)))
		goto fail;
	for (int i = 0; i < o->npaths; i++)
		if (rules_load_path(r, o->paths[i], err, sizeof(err)))
			goto fail;
	if (rules_compile(r, err, sizeof(err)))
		goto fail;
	return r;
fail:
	fprintf(stderr, "revtrail: %s\n", err);
	rules_free(r);
	return NULL;
}

const char *cli_db_path(const char *flag)
{
	const char *env = getenv("REVTRAIL_DB");

	if (flag)
		return flag;
	if (env && *env)
		return env;
	return "revtrail.db";
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "revtrail %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_USAGE;
}

int cli_parse_release(const char *arg, struct ingest_opts *io)
{
	static char buf[512];
	char *slash;

	if (!*arg || strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	if (!(slash = strchr(buf, '/'))) {
		/* as `helm history NAME` without -n: any namespace */
		io->release_ns = NULL;
		io->release_name = buf;
		return 0;
	}
	if (slash == buf || !slash[1] || strchr(slash + 1, '/'))
		return -1;
	*slash = '\0';
	io->release_ns = buf;
	io->release_name = slash + 1;
	return 0;
}

int cli_parse_size(const char *arg, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);

	if (end == arg || v == 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v > (1ull << 30))
		return -1;
	*out = (size_t)v;
	return 0;
}

int cli_input_opt(const char *cmd, int opt, const char *arg,
		   struct ingest_opts *io, struct cli_rules_opts *ro)
{
	switch (opt) {
	case CLI_OPT_FORMAT:
		io->force = rt_format_from_name(arg);
		if (io->force == RT_FMT_UNKNOWN)
			return cli_usage_error(cmd, "unknown format '%s'", arg);
		return 1;
	case CLI_OPT_MAX_RECORD:
		if (cli_parse_size(arg, &io->max_record))
			return cli_usage_error(cmd, "bad --max-record '%s'",
					       arg);
		return 1;
	case CLI_OPT_RULES:
		if (ro->npaths == (int)(sizeof(ro->paths) / sizeof(ro->paths[0])))
			return cli_usage_error(cmd, "too many --rules");
		ro->paths[ro->npaths++] = arg;
		return 1;
	case CLI_OPT_NO_DEFAULT:
		ro->no_default = true;
		return 1;
	case CLI_OPT_RELEASE:
		if (cli_parse_release(arg, io))
			return cli_usage_error(cmd, "--release wants NAME or NAMESPACE/NAME, got '%s'", arg);
		return 1;
	case 'v':
		io->verbose = stderr;
		return 1;
	}
	return 0;
}

int cli_output_from_name(const char *name)
{
	static const char *const names[] = { "table", "json", "csv", "text" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

void cli_json_str(FILE *f, const char *p, size_t n)
{
	putc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				putc(c, f);
		}
	}
	putc('"', f);
}
