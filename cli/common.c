/*
 * common.c: what several subcommands share: loading rules, reading inputs in
 * large chunks, the database path, output-format names, JSON strings.
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

unsigned cli_classify(struct rules *r, struct rt_record *rec,
		      struct rt_arena *arena, struct rt_class *cls)
{
	int n;

	if (rec->flags & RT_REC_DEFERRED) {
		n = rules_classify_deferred(r, rec, arena, cls);
		if (n >= 0) {
			if (n > 0)      /* kept: with its real message */
				ingest_undefer(rec, arena);
			return (unsigned)n;
		}
		ingest_undefer(rec, arena);
	}
	return rules_classify(r, rec, arena, cls);
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

/* 128 KiB reads: large enough that syscalls vanish from profiles, small
 * enough that the buffer stays in L2 between the kernel's copy and the
 * scan (1 MiB reads doubled the copy's system time on the 10M bench file
 * and slowed the scan after it). A `tail -F` pipe still flushes promptly:
 * read returns early. */
#define READ_CHUNK (1u << 17)

static int feed_fd(struct ingest *in, int fd, const char *name, char *buf,
		   struct rt_arena *arena, ingest_emit_fn emit,
		   cli_chunk_fn between, void *ctx)
{
	for (;;) {
		ssize_t n = read(fd, buf, READ_CHUNK);
		int rc;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "revtrail: %s: %s\n", name,
				strerror(errno));
			return CLI_FAIL;
		}
		if (n == 0)
			break;
		rc = ingest_feed(in, name, buf, (size_t)n, arena, emit, ctx);
		if (!rc && between)
			rc = between(ctx);
		if (rc)
			return rc;
	}
	return ingest_finish(in, name, arena, emit, ctx);
}

int cli_read_inputs(struct ingest *in, char **paths, int npaths,
		    struct rt_arena *arena, ingest_emit_fn emit,
		    cli_chunk_fn between, void *ctx)
{
	static char *stdin_only[] = { "-" };
	char *buf = malloc(READ_CHUNK);
	int status = CLI_OK;

	if (!buf)
		return CLI_FAIL;
	if (npaths == 0) {
		paths = stdin_only;
		npaths = 1;
	}
	for (int i = 0; i < npaths; i++) {
		bool is_stdin = !strcmp(paths[i], "-");
		int fd = is_stdin ? 0 : open(paths[i], O_RDONLY);
		int rc;

		if (fd < 0) {
			fprintf(stderr, "revtrail: %s: %s\n", paths[i],
				strerror(errno));
			status = CLI_FAIL;
			continue;
		}
		rc = feed_fd(in, fd, paths[i], buf, arena, emit, between, ctx);
		if (!is_stdin)
			close(fd);
		if (rc == CLI_FAIL) {
			status = CLI_FAIL;
			continue;
		}
		if (rc) {
			status = rc;
			break;
		}
	}
	free(buf);
	return status;
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
