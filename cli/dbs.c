/*
 * dbs.c: the databases a read command reads. --db repeats, and a
 * pattern is expanded here with glob(3), sorted, so a quoted
 * '/var/lib/revtrail/NAME-*.db' works wherever no shell expands it (a
 * Kubernetes exec, a systemd unit); several files are read as one
 * (store_open_read_many).
 */
#include <glob.h>
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
		fprintf(stderr, "revtrail %s: %s: no such database (run "
			"revtrail ingest --db %s first)\n", cmd, path, path);
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

int cli_open_read(const char *cmd, const struct cli_dbs *d,
		  const struct store_read_opts *o, struct store **st)
{
	struct paths ps = { .n = 0 };
	char err[1024];
	int rc = CLI_OK;

	if (!d || d->n == 0)
		rc = paths_add(cmd, &ps, cli_db_path(NULL));
	for (int i = 0; d && i < d->n && rc == CLI_OK; i++)
		rc = expand(cmd, &ps, d->arg[i]);
	if (rc == CLI_OK &&
	    store_open_read_many((const char *const *)ps.p, ps.n, o, st, err,
				 sizeof(err))) {
		fprintf(stderr, "revtrail %s: %s\n", cmd, err);
		rc = CLI_FAIL;
	}
	paths_free(&ps);
	return rc;
}

int cli_open_readonly(const char *cmd, const struct cli_dbs *d,
		      struct store **st)
{
	struct store_read_opts o = {
		.timeout_ns = STORE_READ_TIMEOUT_NS,
		.heap_bytes = STORE_READ_HEAP_BYTES,
		.log = stderr,
	};

	return cli_open_read(cmd, d, &o, st);
}
