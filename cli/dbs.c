/*
 * dbs.c: the databases a read command reads. --db repeats, and a
 * pattern is expanded here with glob(3), sorted, so a quoted
 * '/var/lib/revtrail/NAME-*.db' works wherever no shell expands it (a
 * Kubernetes exec, a systemd unit); several files are read as one
 * (store_open_read_many).
 */
#include <glob.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rows.h"

int cli_dbs_add(const char *cmd, struct cli_dbs *d, const char *arg)
{
	if (d->n == STORE_READ_MAX_DBS)
		return cli_usage_error(cmd, "--db given more than %d times: at "
				       "most %d databases are read together",
				       STORE_READ_MAX_DBS, STORE_READ_MAX_DBS);
	d->arg[d->n++] = arg;
	return CLI_OK;
}

static void put(char *out, size_t size, size_t *n, const char *s)
{
	for (; *s; s++, (*n)++)
		if (*n + 1 < size)
			out[*n] = *s;
}

size_t cli_shell_quote(const char *s, char *out, size_t size)
{
	size_t n = 0;
	char c[2] = "";

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			  "0123456789_./:=@%+,-") == strlen(s))
		put(out, size, &n, s);
	else {
		put(out, size, &n, "'");
		for (; *s; s++) {
			c[0] = *s;
			/* 'it'\''s': a quote closes, is escaped, reopens */
			put(out, size, &n, *s == '\'' ? "'\\''" : c);
		}
		put(out, size, &n, "'");
	}
	if (size)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

char *cli_dbs_hint(const struct cli_dbs *d)
{
	size_t size = 1, n = 0;
	char *out;

	for (int i = 0; d && i < d->n; i++)
		size += 6 + cli_shell_quote(d->arg[i], NULL, 0);
	if (!(out = malloc(size)))
		return NULL;
	out[0] = '\0';
	for (int i = 0; d && i < d->n; i++) {
		n += (size_t)snprintf(out + n, size - n, " --db ");
		n += cli_shell_quote(d->arg[i], out + n, size - n);
	}
	return out;
}

struct paths {
	char *p[STORE_READ_MAX_DBS];
	struct stat sb[STORE_READ_MAX_DBS];
	size_t n;
};

static void paths_free(struct paths *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->p[i]);
	ps->n = 0;
}

/* Adds one file, once (the same file through two names counts once). */
static int paths_add(const char *cmd, struct paths *ps, const char *path)
{
	struct stat sb;

	if (stat(path, &sb) != 0) {
		char *q = malloc(cli_shell_quote(path, NULL, 0) + 1);

		if (q)
			cli_shell_quote(path, q, cli_shell_quote(path, NULL,
								 0) + 1);
		fprintf(stderr, "revtrail %s: %s: no such database (run "
			"revtrail ingest --db %s first)\n", cmd, path,
			q ? q : path);
		free(q);
		return CLI_FAIL;
	}
	for (size_t i = 0; i < ps->n; i++)
		if (ps->sb[i].st_dev == sb.st_dev &&
		    ps->sb[i].st_ino == sb.st_ino)
			return CLI_OK;
	if (ps->n == STORE_READ_MAX_DBS) {
		fprintf(stderr, "revtrail %s: more than %d databases: at most "
			"%d are read together\n", cmd, STORE_READ_MAX_DBS,
			STORE_READ_MAX_DBS);
		return CLI_USAGE;
	}
	if (!(ps->p[ps->n] = strdup(path))) {
		fprintf(stderr, "revtrail %s: out of memory\n", cmd);
		return CLI_FAIL;
	}
	ps->sb[ps->n++] = sb;
	return CLI_OK;
}

static bool is_pattern(const char *arg)
{
	return strpbrk(arg, "*?[") && access(arg, F_OK) != 0;
}

static int expand(const char *cmd, struct paths *ps, const char *arg)
{
	glob_t g;
	int rc;

	if (!is_pattern(arg))
		return paths_add(cmd, ps, arg);
	rc = glob(arg, 0, NULL, &g);
	if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
		fprintf(stderr, "revtrail %s: --db %s matches no file\n", cmd,
			arg);
		rc = CLI_FAIL;
	} else if (rc) {
		fprintf(stderr, "revtrail %s: --db %s: %s\n", cmd, arg,
			rc == GLOB_NOSPACE ? "out of memory" :
			"a directory cannot be read");
		rc = CLI_FAIL;
	}
	for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
		rc = paths_add(cmd, ps, g.gl_pathv[i]);
	globfree(&g);
	return rc;
}

int cli_open_read(const char *cmd, struct cli_dbs *d,
		  const struct store_read_opts *o, struct store **st)
{
	struct paths ps = { .n = 0 };
	char err[RT_ERRLEN];
	int rc = CLI_OK;

	if (!d || d->n == 0)
		rc = paths_add(cmd, &ps, cli_db_path(NULL));
	for (int i = 0; d && i < d->n && rc == CLI_OK; i++)
		rc = expand(cmd, &ps, d->arg[i]);
	if (d)
		d->opened = ps.n;
	if (rc == CLI_OK &&
	    store_open_read_many((const char *const *)ps.p, ps.n, o, st, err,
				 sizeof(err))) {
		fprintf(stderr, "revtrail %s: %s\n", cmd, err);
		rc = CLI_FAIL;
	}
	paths_free(&ps);
	return rc;
}

int cli_open_readonly(const char *cmd, struct cli_dbs *d,
		      struct store **st)
{
	struct store_read_opts o = {
		.timeout_ns = STORE_READ_TIMEOUT_NS,
		.heap_bytes = STORE_READ_HEAP_BYTES,
		.log = stderr,
	};

	return cli_open_read(cmd, d, &o, st);
}

void cli_no_incident(const char *cmd, const struct cli_dbs *d,
		     const char *id)
{
	char *end, *hint;
	long long v = strtoll(id, &end, 10);

	if (!d || d->opened < 2 || v <= 0 || v > INT64_MAX / 100 - 10) {
		fprintf(stderr, "revtrail %s: no incident %s\n", cmd, id);
		return;
	}
	/* store/merge.c: a merged incident's id is its first part's id
	 * times 100 plus that database's position */
	fprintf(stderr, "revtrail %s: no incident %s among the %zu databases "
		"read as one: their ids are an incident's id times 100 plus "
		"its database's position (incident %lld of the first --db is "
		"%lld, of the second %lld)", cmd, id, d->opened, v, v * 100 + 1,
		v * 100 + 2);
	if ((hint = cli_dbs_hint(d)))
		fprintf(stderr, "; revtrail incidents%s lists them", hint);
	fputs("\n", stderr);
	free(hint);
}
