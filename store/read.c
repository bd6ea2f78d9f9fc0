/*
 * read.c: the read side of the store -- opening a database so that nothing
 * is ever written, the bounds every read runs under, the user's SQL
 * (query) and the fixed queries of incidents and show.
 *
 * query runs SQL from whoever types it against data from whoever wrote the
 * logs: a read may spend a bounded CPU time (progress handler), heap
 * (sqlite3_hard_heap_limit64) and string length (sqlite3_limit), and an
 * authorizer admits reads only -- no ATTACH, no PRAGMA that sets
 * anything, no fts3_tokenizer (which hands out and takes C pointers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"

/* VM instructions between two looks at the clock (about 0.1 ms). */
#define PROGRESS_OPS 10000
/* Columns of a result (more are refused, not cut), and the least a value
 * may be long whatever the heap. */
#define STORE_READ_MAX_COLUMNS 256
#define STORE_READ_MIN_LENGTH (1 << 20)

struct store_reader {
	int64_t timeout_ns;     /* CPU time per call; 0 = none */
	int64_t deadline_ns;    /* thread CPU clock; 0 = no call running */
	int64_t heap_bytes;     /* 0 = none */
	int length;             /* SQLITE_LIMIT_LENGTH set */
	bool timed_out;
	int cluster_col;        /* incidents.cluster: 0 unknown, 1 no, 2 yes */
	FILE *log;
	char refused[160];      /* what the authorizer turned down */
};

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * CPU time, not wall time: rows wait for whoever reads them (`| less`
 * may sit for minutes), and that must not stop the query; a query that
 * computes is stopped however slowly its rows are read.
 */
static int on_progress(void *ctx)
{
	struct store_reader *rd = ctx;

	if (rd->deadline_ns && cpu_ns() > rd->deadline_ns) {
		rd->timed_out = true;
		return 1;
	}
	return 0;
}

static void reader_start(struct store *st)
{
	struct store_reader *rd = st->rd;

	if (!rd)
		return;
	rd->timed_out = false;
	rd->refused[0] = '\0';
	rd->deadline_ns = rd->timeout_ns ? cpu_ns() + rd->timeout_ns : 0;
}

/* Bounds the CPU time of what runs from now on (a merged open's build). */
void store_reader_watch(struct store *st)
{
	reader_start(st);
	sqlite3_progress_handler(st->db, PROGRESS_OPS, on_progress, st->rd);
}

/* ---- the authorizer --------------------------------------------------- */

/* Pragmas that only report; those of the first list take an argument that
 * names what to report on, the others set something when given one. */
static const char *const pragma_query[] = {
	"table_info", "table_xinfo", "table_list", "index_list", "index_info",
	"index_xinfo", "foreign_key_list", "integrity_check", "quick_check",
};
static const char *const pragma_get[] = {
	"user_version", "application_id", "schema_version", "data_version",
	"page_count", "page_size", "freelist_count", "encoding",
	"journal_mode", "compile_options", "function_list", "pragma_list",
	"module_list", "collation_list", "database_list", "query_only",
};

static bool in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(list[i], name))
			return true;
	return false;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool pragma_reads(const char *name, const char *arg)
{
	if (!name)
		return false;
	if (in_list(pragma_query, COUNT(pragma_query), name))
		return true;
	return !arg && in_list(pragma_get, COUNT(pragma_get), name);
}

/* fts3_tokenizer() returns a C pointer as a blob and, given one, calls
 * through it; load_extension() loads code. */
static bool function_allowed(const char *name)
{
	return name && strcasecmp(name, "fts3_tokenizer") &&
		strcasecmp(name, "load_extension");
}

static int refuse(struct store_reader *rd, const char *fmt, const char *a,
		  const char *b)
{
	snprintf(rd->refused, sizeof(rd->refused), fmt, a ? a : "",
		 b ? b : "");
	return SQLITE_DENY;
}

static int on_authorize(void *ctx, int action, const char *a1, const char *a2,
			const char *db, const char *trigger)
{
	struct store_reader *rd = ctx;

	(void)db;
	(void)trigger;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		return function_allowed(a2) ? SQLITE_OK :
			refuse(rd, "%s%s()", NULL, a2);
	case SQLITE_PRAGMA:
		if (pragma_reads(a1, a2))
			return SQLITE_OK;
		return a2 ? refuse(rd, "PRAGMA %s = %s", a1, a2) :
			refuse(rd, "PRAGMA %s%s", a1, NULL);
	case SQLITE_ATTACH:
		return refuse(rd, "ATTACH%s%s", NULL, NULL);
	case SQLITE_DETACH:
		return refuse(rd, "DETACH%s%s", NULL, NULL);
	case SQLITE_INSERT:
		return refuse(rd, "INSERT INTO %s%s", a1, NULL);
	case SQLITE_UPDATE:
		/* A pragma_*() table-valued function declares itself with an
		 * UPDATE of sqlite_master's columns, in memory. A real one
		 * cannot run: the connection is read-only and query_only. */
		if (a1 && !strcmp(a1, "sqlite_master"))
			return SQLITE_OK;
		return refuse(rd, "UPDATE of %s.%s", a1, a2);
	case SQLITE_DELETE:
		return refuse(rd, "DELETE FROM %s%s", a1, NULL);
	default:
		return refuse(rd, "this statement%s%s", NULL, NULL);
	}
}

/* ---- opening ---------------------------------------------------------- */

static int schema_version(struct store *st, int *v)
{
	sqlite3_stmt *s;
	int rc;

	if ((rc = sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s,
				     NULL)))
		return rc;
	rc = sqlite3_step(s);
	*v = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SQLITE_OK : rc;
}

int store_check_schema(struct store *st, int v)
{
	if (v == 0) {
		snprintf(st->errmsg, sizeof(st->errmsg),
			 "not a revtrail database (no schema); run revtrail "
			 "ingest first");
		return RT_EDB;
	}
	/* Migrations only add: every contract table and column a reader
	 * queries exists since version 1, so an older file reads as is. */
	if (v > STORE_SCHEMA_VERSION) {
		snprintf(st->errmsg, sizeof(st->errmsg),
			 "database schema version %d is newer than this "
			 "revtrail understands (%d)", v, STORE_SCHEMA_VERSION);
		return RT_EDB;
	}
	return 0;
}

static size_t uri_add(char *out, const char *p)
{
	static const char safe[] = "-._~/";
	size_t k = 0;

	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr(safe, c))
			out[k++] = (char)c;
		else
			k += (size_t)sprintf(out + k, "%%%02X", c);
	}
	return k;
}

/* "file:" URI of path, percent-encoded and absolute, with query q
 * ("immutable=1", "mode=ro"). */
char *store_file_uri(const char *path, const char *q)
{
	char cwd[4096] = "";
	char *uri;
	size_t k;

	if (path[0] != '/' && (!getcwd(cwd, sizeof(cwd) - 1) ||
			       !strcat(cwd, "/")))
		return NULL;
	uri = malloc(3 * (strlen(cwd) + strlen(path)) + strlen(q) + 8);
	if (!uri)
		return NULL;
	k = (size_t)sprintf(uri, "file:");
	k += uri_add(uri + k, cwd);
	k += uri_add(uri + k, path);
	sprintf(uri + k, "?%s", q);
	return uri;
}

/* Bounds on what one value and one statement may grow to. The length
 * follows the heap: a value is copied a few times on its way out. */
static void set_limits(sqlite3 *db, const struct store_reader *rd)
{
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, rd->length);
	sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
	sqlite3_limit(db, SQLITE_LIMIT_COLUMN, STORE_READ_MAX_COLUMNS);
	sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 200);
	sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 64);
	sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 1000000);
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 10000);
	sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
}

int store_reader_harden(struct store *st)
{
	sqlite3 *db = st->db;

	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, 10000);
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	if (sqlite3_exec(db, "PRAGMA query_only = 1", NULL, NULL, NULL))
		return store_db_fail(st, "query_only");
	set_limits(db, st->rd);
	if (store_read_printf(db, st->rd->length))
		return store_db_fail(st, "printf");
	sqlite3_set_authorizer(db, on_authorize, st->rd);
	sqlite3_progress_handler(db, PROGRESS_OPS, on_progress, st->rd);
	return 0;
}

/* Opens path read-only, and reads the schema version: the first read is
 * what finds out whether the -shm of a WAL database can be had. */
static int open_plain(struct store *st, const char *path, int *v)
{
	int rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READONLY, NULL);

	if (rc == SQLITE_OK)
		rc = store_reader_harden(st) ? SQLITE_ERROR : schema_version(st, v);
	return rc;
}

/* The directory is not ours to write: no -shm can be made beside the
 * file, so SQLite cannot read a WAL database the ordinary way. immutable
 * reads the database file alone -- and whatever a stopped writer left
 * in the -wal is not in it, which is said. */
static int open_immutable(struct store *st, const char *path, int *v)
{
	char *uri = store_file_uri(path, "immutable=1"), wal[4096];
	struct stat sb;
	int rc;

	if (!uri)
		return SQLITE_NOMEM;
	sqlite3_close(st->db);
	st->db = NULL;
	rc = sqlite3_open_v2(uri, &st->db, SQLITE_OPEN_READONLY |
			     SQLITE_OPEN_URI, NULL);
	free(uri);
	if (rc == SQLITE_OK)
		rc = store_reader_harden(st) ? SQLITE_ERROR : schema_version(st, v);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (rc == SQLITE_OK && stat(wal, &sb) == 0 && sb.st_size > 0 &&
	    st->rd->log)
		fprintf(st->rd->log, "revtrail: %s: the directory is not "
			"writable, so the database is read as of its last "
			"checkpoint: changes still in %s are not shown\n",
			path, wal);
	return rc;
}

bool store_needs_write_access(int rc)
{
	return (rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN;
}

int store_reader_new(struct store *st, const struct store_read_opts *o)
{
	struct store_reader *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return RT_ENOMEM;
	st->rd = rd;
	st->flags = STORE_READONLY;
	rt_arena_init(&st->scratch);
	rd->length = 1000000000;          /* SQLite's own default */
	if (o) {
		rd->timeout_ns = o->timeout_ns;
		rd->heap_bytes = o->heap_bytes;
		rd->log = o->log;
	}
	if (rd->heap_bytes) {
		rd->length = (int)(rd->heap_bytes / 8 < rd->length ?
				   rd->heap_bytes / 8 : rd->length);
		if (rd->length < STORE_READ_MIN_LENGTH)
			rd->length = STORE_READ_MIN_LENGTH;
	}
	store_sqlite_config(rd->heap_bytes > 0);
	if (rd->heap_bytes)
		sqlite3_hard_heap_limit64(rd->heap_bytes);
	return 0;
}

int store_open_read(const char *path, const struct store_read_opts *o,
		    struct store **out, char *err, size_t errlen)
{
	struct store *st = calloc(1, sizeof(*st));
	int rc, v = 0;

	*out = NULL;
	if (!st || store_reader_new(st, o)) {
		snprintf(err, errlen, "out of memory");
		store_close(st);
		return RT_ENOMEM;
	}
	rc = open_plain(st, path, &v);
	if (store_needs_write_access(rc))
		rc = open_immutable(st, path, &v);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 st->errmsg[0] ? st->errmsg : st->db ?
			 sqlite3_errmsg(st->db) : "out of memory");
		store_close(st);
		return RT_EDB;
	}
	if ((rc = store_check_schema(st, v))) {
		snprintf(err, errlen, "%s: %s", path, st->errmsg);
		store_close(st);
		return rc;
	}
	*out = st;
	return 0;
}

/* ---- reading ---------------------------------------------------------- */

static void refusal(struct store *st, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s is not allowed: query is read-only (reads "
		 "of this database only)", st->rd->refused);
}

/* Says which bound a read ran into, if one. */
int store_read_fail(struct store *st, int rc)
{
	struct store_reader *rd = st->rd;

	if (rd && rd->refused[0]) {       /* a pragma_*() function, run */
		refusal(st, st->errmsg, sizeof(st->errmsg));
		return RT_EINVAL;
	}
	if (rd && rd->timed_out)
		snprintf(st->errmsg, sizeof(st->errmsg), "stopped after %.3g "
			 "s of CPU time (--timeout)", rd->timeout_ns / 1e9);
	else if (rd && rd->heap_bytes && (rc & 0xff) == SQLITE_NOMEM)
		snprintf(st->errmsg, sizeof(st->errmsg), "stopped: needs more "
			 "than %lld MiB of memory (--max-memory)",
			 (long long)(rd->heap_bytes >> 20));
	else if (rd && (rc & 0xff) == SQLITE_TOOBIG)
		snprintf(st->errmsg, sizeof(st->errmsg), "stopped: a value "
			 "would be longer than %d bytes (an eighth of "
			 "--max-memory)", rd->length);
	else
		return store_db_fail(st, "query");
	return RT_EDB;
}

static int run_rows(sqlite3_stmt *s,
		    int (*header)(void *, int, const char *const *),
		    store_row_fn fn, void *ctx, struct store *st)
{
	int n = sqlite3_column_count(s), rc, ret = 0;
	const char *names[STORE_READ_MAX_COLUMNS];
	struct store_value vals[STORE_READ_MAX_COLUMNS];

	if (n > STORE_READ_MAX_COLUMNS)     /* not with set_limits */
		n = STORE_READ_MAX_COLUMNS;
	for (int i = 0; i < n; i++)
		names[i] = sqlite3_column_name(s, i);
	if (header && n > 0 && (ret = header(ctx, n, names)))
		return ret;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++) {
			struct store_value *v = &vals[i];

			memset(v, 0, sizeof(*v));
			switch (sqlite3_column_type(s, i)) {
			case SQLITE_INTEGER:
				v->type = STORE_INT;
				v->i = sqlite3_column_int64(s, i);
				break;
			case SQLITE_FLOAT:
				v->type = STORE_REAL;
				v->d = sqlite3_column_double(s, i);
				break;
			case SQLITE_TEXT:
				v->type = STORE_TEXT;
				v->p = (const char *)sqlite3_column_text(s, i);
				v->n = (size_t)sqlite3_column_bytes(s, i);
				break;
			case SQLITE_BLOB:
				v->type = STORE_BLOB;
				v->p = sqlite3_column_blob(s, i);
				v->n = (size_t)sqlite3_column_bytes(s, i);
				break;
			default:
				v->type = STORE_NULL;
			}
		}
		if ((ret = fn(ctx, n, names, vals)))
			return ret;
	}
	if (rc != SQLITE_DONE)
		return store_read_fail(st, rc);
	return 0;
}

int store_query(struct store *st, const char *sql,
		int (*header)(void *ctx, int ncols, const char *const *names),
		store_row_fn fn, void *ctx, char *err, size_t errlen)
{
	sqlite3_stmt *list[64];
	const char *tail = sql;
	size_t n = 0;
	int ret = 0;

	reader_start(st);
	/* Prepare all first: nothing runs if any statement would write. */
	while (tail && *tail) {
		sqlite3_stmt *s = NULL;

		if (sqlite3_prepare_v2(st->db, tail, -1, &s, &tail) != SQLITE_OK) {
			if (st->rd && st->rd->refused[0])
				refusal(st, err, errlen);
			else
				snprintf(err, errlen, "%s",
					 sqlite3_errmsg(st->db));
			ret = RT_EINVAL;
			goto out;
		}
		if (!s)
			continue;   /* whitespace or a comment */
		if (n == 64 || !sqlite3_stmt_readonly(s)) {
			snprintf(err, errlen, n == 64 ? "too many statements" :
				 "attempt to write a readonly database: query "
				 "runs read-only statements only");
			sqlite3_finalize(s);
			ret = RT_EINVAL;
			goto out;
		}
		list[n++] = s;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		ret = run_rows(list[i], header, fn, ctx, st);
		if (ret == RT_EDB || ret == RT_EINVAL)
			snprintf(err, errlen, "%s", st->errmsg);
	}
out:
	for (size_t i = 0; i < n; i++)
		sqlite3_finalize(list[i]);
	return ret;
}

/* Whether the incidents read have a cluster column: a file of version 5
 * on, or the merged view of several (merge.c). Asked once. */
static bool clustered(struct store *st)
{
	sqlite3_stmt *s;

	if (!st->rd)
		return true;
	if (!st->rd->cluster_col) {
		st->rd->cluster_col = 1;
		if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM"
				       " pragma_table_info('incidents')"
				       " WHERE name = 'cluster'", -1, &s,
				       NULL) == SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW &&
			    sqlite3_column_int(s, 0))
				st->rd->cluster_col = 2;
			sqlite3_finalize(s);
		}
	}
	return st->rd->cluster_col == 2;
}

int store_has_clusters(struct store *st)
{
	sqlite3_stmt *s;
	int rc, has;

	if (!clustered(st))
		return 0;
	reader_start(st);
	if (sqlite3_prepare_v2(st->db, SQL_HAS_CLUSTERS, -1, &s, NULL))
		return store_db_fail(st, "clusters");
	rc = sqlite3_step(s);
	has = rc == SQLITE_ROW && sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? has : store_read_fail(st, rc);
}

static void bind_filter(sqlite3_stmt *s, const struct store_filter *f);

int store_incidents(struct store *st, const struct store_filter *f,
		    int (*header)(void *ctx, int ncols,
				  const char *const *names),
		    store_row_fn fn, void *ctx)
{
	sqlite3_stmt *s;
	int ret;

	reader_start(st);
	if (sqlite3_prepare_v2(st->db, clustered(st) ? SQL_INCIDENTS :
			       SQL_INCIDENTS_V4, -1, &s, NULL))
		return store_db_fail(st, "incidents");
	bind_filter(s, f);
	ret = run_rows(s, header, fn, ctx, st);
	sqlite3_finalize(s);
	return ret;
}

int store_incident_part(struct store *st, int64_t id, enum store_part part,
			store_row_fn fn, void *ctx)
{
	static const char *const sql[2][STORE_PART_GUESS + 1] = { {
		[STORE_PART_INCIDENT] = SQL_INCIDENT_V4,
		[STORE_PART_OBJECTS] = SQL_INCIDENT_OBJECTS,
		[STORE_PART_TIMELINE] = SQL_INCIDENT_TIMELINE,
		[STORE_PART_REVISION] = SQL_INCIDENT_REVISION_V4,
		[STORE_PART_EXPORT] = SQL_INCIDENT_EXPORT,
		[STORE_PART_CHANGES] = SQL_INCIDENT_CHANGES,
		[STORE_PART_TIMELINE_KEYED] = SQL_INCIDENT_TIMELINE_KEYED,
		[STORE_PART_LIFE] = SQL_INCIDENT_LIFE,
		[STORE_PART_GUESS] = NULL,
	}, {
		[STORE_PART_INCIDENT] = SQL_INCIDENT,
		[STORE_PART_OBJECTS] = SQL_INCIDENT_OBJECTS,
		[STORE_PART_TIMELINE] = SQL_INCIDENT_TIMELINE,
		[STORE_PART_REVISION] = SQL_INCIDENT_REVISION,
		[STORE_PART_EXPORT] = SQL_INCIDENT_EXPORT,
		[STORE_PART_CHANGES] = SQL_INCIDENT_CHANGES,
		[STORE_PART_TIMELINE_KEYED] = SQL_INCIDENT_TIMELINE_KEYED,
		[STORE_PART_LIFE] = SQL_INCIDENT_LIFE,
		[STORE_PART_GUESS] = SQL_INCIDENT_GUESS,
	} };
	sqlite3_stmt *s;
	int ret;

	reader_start(st);
	if (!sql[clustered(st)][part])     /* nothing to say before clusters */
		return 0;
	if (sqlite3_prepare_v2(st->db, sql[clustered(st)][part], -1, &s,
			       NULL) &&
	    (part != STORE_PART_CHANGES ||   /* before lives: one install */
	     sqlite3_prepare_v2(st->db, SQL_INCIDENT_CHANGES_V9, -1, &s,
				NULL)))
		/* a database from before manifest summaries (lives) has
		 * none */
		return part == STORE_PART_CHANGES || part == STORE_PART_LIFE ?
		       0 : store_db_fail(st, "incident");
	sqlite3_bind_int64(s, 1, id);
	ret = run_rows(s, NULL, fn, ctx, st);
	sqlite3_finalize(s);
	return ret;
}

/* One schema's data_version, folded into *v. */
static int fold_version(struct store *st, const char *schema, int64_t *v)
{
	char sql[64];
	sqlite3_stmt *s;
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA %s.data_version", schema);
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store_db_fail(st, "data_version");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = (int64_t)((uint64_t)*v * 1000003u +
			       (uint64_t)sqlite3_column_int64(s, 0));
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : store_read_fail(st, rc);
}

/* Only "main" and the merge's own names (db1, db2...) reach SQL text. */
static bool schema_name_ok(const char *name)
{
	if (!strcmp(name, "main"))
		return true;
	return !strncmp(name, "db", 2) && name[2] &&
		strspn(name + 2, "0123456789") == strlen(name + 2);
}

int store_data_version(struct store *st, int64_t *v)
{
	const char *name;
	int rc = 0;

	reader_start(st);
	if (st->open_version_set) {
		st->open_version_set = false;
		*v = st->open_version;
		return 0;
	}
	*v = 0;
	for (int i = 0; !rc && (name = sqlite3_db_name(st->db, i)); i++)
		if (schema_name_ok(name))
			rc = fold_version(st, name, v);
	return rc;
}

static void bind_filter(sqlite3_stmt *s, const struct store_filter *f)
{
	sqlite3_bind_int(s, 1, f && f->open_only);
	store_bind_cstr(s, 2, f ? f->ns : NULL);
	store_bind_cstr(s, 3, f ? f->release : NULL);
	if (f && f->since_ns)
		sqlite3_bind_int64(s, 4, f->since_ns);
	store_bind_cstr(s, 5, f ? f->cluster : NULL);
}

int store_incidents_watch(struct store *st, const struct store_filter *f,
			  int64_t after_id, store_row_fn fn, void *ctx)
{
	sqlite3_stmt *s;
	int ret;

	reader_start(st);
	if (sqlite3_prepare_v2(st->db, clustered(st) ? SQL_INCIDENTS_WATCH :
			       SQL_INCIDENTS_WATCH_V4, -1, &s, NULL))
		return store_db_fail(st, "incidents");
	bind_filter(s, f);
	sqlite3_bind_int64(s, 6, after_id);
	ret = run_rows(s, NULL, fn, ctx, st);
	sqlite3_finalize(s);
	return ret;
}

int store_incident_row(struct store *st, int64_t id, store_row_fn fn,
		       void *ctx)
{
	sqlite3_stmt *s;
	int ret;

	reader_start(st);
	if (sqlite3_prepare_v2(st->db, clustered(st) ? SQL_INCIDENTS_ONE :
			       SQL_INCIDENTS_ONE_V4, -1, &s, NULL))
		return store_db_fail(st, "incident");
	sqlite3_bind_int64(s, 1, id);
	ret = run_rows(s, NULL, fn, ctx, st);
	sqlite3_finalize(s);
	return ret;
}
