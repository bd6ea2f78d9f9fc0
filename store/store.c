/*
 * store.c: opening a database for writing (WAL, schema migrations by PRAGMA
 * user_version, statements prepared once, the release registry loaded).
 * Reading is store/read.c; the statement helpers every file of the
 * store uses are store/stmt.c, closing either kind of store conn.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"

static const char *const write_sql[S_COUNT] = {
#define X(name, sql) sql,
	STORE_WRITE_STMTS(X)
#undef X
};

const char *store_errmsg(const struct store *st)
{
	return st->errmsg;
}

static int exec(struct store *st, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(st->errmsg, sizeof(st->errmsg), "%s", msg ? msg :
			 sqlite3_errmsg(st->db));
		sqlite3_free(msg);
		return RT_EDB;
	}
	return 0;
}

/* The value of a PRAGMA that reads an integer (a constant of ours). */
static int pragma_int(struct store *st, const char *pragma, int64_t *v)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, pragma, -1, &s, NULL))
		return store_db_fail(st, pragma);
	rc = sqlite3_step(s);
	*v = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : store_db_fail(st, pragma);
}

/* Brings the schema to STORE_SCHEMA_VERSION, one migration at a time, all
 * in one transaction: an interrupted migration leaves the old version. */
static int migrate(struct store *st)
{
	char pragma[64];
	int64_t v;
	int err;

	if ((err = exec(st, "BEGIN IMMEDIATE")))
		return err;
	if ((err = pragma_int(st, "PRAGMA user_version", &v)))
		goto rollback;
	if (v > STORE_SCHEMA_VERSION) {
		snprintf(st->errmsg, sizeof(st->errmsg),
			 "database schema version %lld is newer than this "
			 "revtrail understands (%d)", (long long)v,
			 STORE_SCHEMA_VERSION);
		err = RT_EDB;
		goto rollback;
	}
	for (; v < STORE_SCHEMA_VERSION; v++)
		if ((err = exec(st, store_migrations[v])))
			goto rollback;
	/* an integer constant of ours, not data */
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d",
		 STORE_SCHEMA_VERSION);
	if ((err = exec(st, pragma)))
		goto rollback;
	return exec(st, "COMMIT");
rollback:
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

static int meta_get_int(struct store *st, const char *key, int64_t *v)
{
	sqlite3_stmt *s = store_stmt(st, S_META_GET);
	int rc, found = 0;

	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*v = sqlite3_column_int64(s, 0);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		sqlite3_reset(s);
		return store_db_fail(st, "meta");
	}
	sqlite3_reset(s);
	return found;
}

int store_meta_set_int(struct store *st, const char *key, int64_t v)
{
	sqlite3_stmt *s = store_stmt(st, S_META_SET);

	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, v);
	return store_db_done(st, s, "meta");
}

/* "a","b" JSON array back to the registry's "a,b". */
static void hooks_csv(const char *json, char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	while (json && (json = strchr(json, '"'))) {
		const char *end = strchr(json + 1, '"');
		size_t k;

		if (!end)
			break;
		k = (size_t)(end - json - 1);
		if (n + k + 2 >= size)
			break;
		if (n)
			out[n++] = ',';
		memcpy(out + n, json + 1, k);
		n += k;
		out[n] = '\0';
		json = end + 1;
	}
}

static struct rt_str col_rts(sqlite3_stmt *s, int i)
{
	const char *t = store_col_text(s, i);

	return rt_str_make(t, strlen(t));
}

static int read_aliases(struct store *st,
			int (*fn)(void *ctx, const struct plan_alias *a),
			void *ctx)
{
	sqlite3_stmt *s = store_stmt(st, S_ALIAS_ALL);
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct plan_alias a = { col_rts(s, 0), col_rts(s, 1),
					col_rts(s, 2), col_rts(s, 3), RT_STR_NULL,
					sqlite3_column_int(s, 4),
					sqlite3_column_int64(s, 5) };

		err = fn(ctx, &a);
	}
	sqlite3_reset(s);
	if (err)
		return err;
	return rc == SQLITE_DONE ? 0 : store_db_fail(st, "loading workload releases");
}

/* The columns S_REV_ALL and S_TL_ALL share, in the same places; the
 * hooks (9) are read by each, the revisions table's being JSON. */
static void rev_cols(sqlite3_stmt *s, struct plan_revision *r)
{
	r->ns = store_col_text(s, 0);
	r->rel = store_col_text(s, 1);
	r->revision = sqlite3_column_int(s, 2);
	r->status = store_col_text(s, 3);
	r->chart = store_col_text(s, 4);
	r->app_version = store_col_text(s, 5);
	r->description = store_col_text(s, 6);
	r->updated_ns = sqlite3_column_int64(s, 7);
	r->evidence = (unsigned)sqlite3_column_int(s, 8);
	r->ranks = (uint32_t)sqlite3_column_int64(s, 10);
}

/* The halves of the releases' corr_loose (revision_timeless), to rev as
 * plan_revision.loose rows. */
static int read_timeless(struct store *st,
			 int (*rev)(void *ctx, const struct plan_revision *r),
			 void *ctx)
{
	sqlite3_stmt *s = store_stmt(st, S_TL_ALL);
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct plan_revision r = { .loose = true };

		rev_cols(s, &r);
		r.hooks = store_col_text(s, 9);
		err = rev(ctx, &r);
	}
	sqlite3_reset(s);
	if (err)
		return err;
	return rc == SQLITE_DONE ? 0 :
	       store_db_fail(st, "loading timeless revisions");
}

int store_read_registry(struct store *st,
			int (*rev)(void *ctx, const struct plan_revision *r),
			int (*alias)(void *ctx, const struct plan_alias *a),
			void *ctx)
{
	sqlite3_stmt *s = store_stmt(st, S_REV_ALL);
	char hooks[4096];
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct plan_revision r = { 0 };

		rev_cols(s, &r);
		hooks_csv(store_col_text(s, 9), hooks, sizeof(hooks));
		r.hooks = hooks;
		r.life = sqlite3_column_int(s, 11);
		err = rev(ctx, &r);
	}
	sqlite3_reset(s);
	if (err)
		return err;
	if (rc != SQLITE_DONE)
		return store_db_fail(st, "loading revisions");
	if ((err = read_timeless(st, rev, ctx)))
		return err;
	return read_aliases(st, alias, ctx);
}

/* A WAL hook replaces SQLite's automatic checkpoint, and keeps the count
 * of frames that store_idle reads. The bounds are in bytes, whatever the
 * database's page size: 64 MiB and 4 MiB (16384 and 1024 pages of 4 KiB,
 * 4096 and 256 of 16 KiB). The first is also open_writer's
 * journal_size_limit. */
#define WAL_CHECKPOINT_BYTES ((int64_t)64 << 20)
#define WAL_IDLE_BYTES ((int64_t)4 << 20)

/* Copies the WAL back into the database as far as readers allow. PASSIVE:
 * it never waits for them. */
static void copy_back(struct store *st)
{
	int log = 0, done = 0;

	if (sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
				      &log, &done) == SQLITE_OK)
		st->wal_frames = log - done;
}

static int on_wal(void *ctx, sqlite3 *db, const char *name, int frames)
{
	struct store *st = ctx;

	(void)db;
	(void)name;
	st->wal_frames = frames;
	if (frames * st->page_size >= WAL_CHECKPOINT_BYTES)
		copy_back(st);
	return SQLITE_OK;
}

/*
 * Copying the WAL back into the database is the last thing close does,
 * and after a long ingest it kept the command running past its last
 * batch, while the reader sat idle. A writer thread with no batch
 * waiting calls this instead, so close finds little left to copy.
 */
void store_idle(struct store *st)
{
	if (st && st->wal_frames * st->page_size >= WAL_IDLE_BYTES)
		copy_back(st);
}

/* rt_workload(kind, name): the correlator's workload name (given by the
 * opener), as re-attribution computes it, for the migration that fills
 * events.workload. */
static void sql_workload(sqlite3_context *c, int argc, sqlite3_value **v)
{
	const char *k = (const char *)sqlite3_value_text(v[0]);
	const char *n = (const char *)sqlite3_value_text(v[1]);
	struct store *st = sqlite3_user_data(c);
	struct rt_str w;

	(void)argc;
	if (!n || !st->workload) {
		sqlite3_result_null(c);
		return;
	}
	w = st->workload(rt_str_make(k ? k : "", k ? strlen(k) : 0),
			 rt_str_make(n, strlen(n)));
	if (w.n)
		sqlite3_result_text(c, w.p, (int)w.n, SQLITE_TRANSIENT);
	else
		sqlite3_result_null(c);
}

static int prepare_all(struct store *st)
{
	for (int i = 0; i < S_COUNT; i++) {
		sqlite3_stmt *s;
		int k;

		if (sqlite3_prepare_v3(st->db, write_sql[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &st->st[i],
				       NULL) != SQLITE_OK)
			return store_db_fail(st, "preparing statements");
		s = st->st[i];
		k = sqlite3_bind_parameter_index(s, ":cluster");
		/* A name takes the number after the largest one seen so
		 * far: first in the text it would be ?1's twin. */
		if (k && k != sqlite3_bind_parameter_count(s)) {
			snprintf(st->errmsg, sizeof(st->errmsg), "statement %d:"
				 " :cluster is not its last parameter", i);
			return RT_EDB;
		}
		st->cluster_param[i] = k;
	}
	return 0;
}

static int open_writer(struct store *st, const struct store_opts *o)
{
	int64_t v;
	int err, found;

	/* A 16 MiB page cache: the writes of a batch touch the right edge of
	 * the tables and scattered index pages, which the OS cache holds as
	 * well. A larger cache was measured slower, and it raised peak RSS
	 * by its size.
	 *
	 * 16 KiB pages, for a new database only (an existing one keeps its
	 * own): a commit writes each page it touched to the WAL and copies
	 * it back later, a system call each way per page, and the identity
	 * and object keys are random, so a batch touches pages all over;
	 * with 4 KiB pages those calls were a large share of ingest's CPU
	 * time. Pages four times as large move the same bytes in about a
	 * quarter of the calls.
	 *
	 * secure_delete off: Debian's SQLite turns it on by default, so that
	 * every cell moved in a page split had its old bytes zeroed. The
	 * rows this store deletes (incidents merged or recomputed) are its
	 * own aggregates of events that stay.
	 *
	 * journal_size_limit: the -wal file is reused from its start after a
	 * checkpoint, never shrunk; a WAL that once grew past the checkpoint
	 * bound (a reader held a snapshot, a regap's one transaction) would
	 * keep that size on disk for as long as the writer runs. With the
	 * limit, the reset truncates it back to the checkpoint bound. */
	if ((err = exec(st, "PRAGMA page_size = 16384;"
			"PRAGMA journal_mode = WAL;"
			"PRAGMA journal_size_limit = 67108864;"
			"PRAGMA synchronous = NORMAL;"
			"PRAGMA temp_store = MEMORY;"
			"PRAGMA secure_delete = OFF;"
			"PRAGMA cache_size = -16384;")))
		return err;
	sqlite3_wal_hook(st->db, on_wal, st);
	store_watch_rows(st);
	if (sqlite3_create_function(st->db, "rt_workload", 2,
				    SQLITE_UTF8 | SQLITE_DETERMINISTIC, st,
				    sql_workload, NULL, NULL) != SQLITE_OK)
		return store_db_fail(st, "rt_workload");
	if ((err = migrate(st)) ||
	    (err = pragma_int(st, "PRAGMA page_size", &st->page_size)))
		return err;
	if ((err = prepare_all(st)))
		return err;
	if ((err = store_use_cluster(st, "")))
		return err;
	if ((found = meta_get_int(st, "watermark_ns", &v)) < 0)
		return found;
	st->watermark_ns = found ? v : 0;
	if ((found = meta_get_int(st, "gap_ns", &v)) < 0)
		return found;
	st->gap_ns = o && o->gap_ns > 0 ? o->gap_ns :
		found ? v : PLAN_DEFAULT_GAP_NS;
	/* A new gap changes every window: recompute them all once, but only
	 * when asked to (a typo must not rewrite every incident). */
	st->rebuild_all = found && v != st->gap_ns;
	if (st->rebuild_all && !o->regap) {
		snprintf(st->errmsg, sizeof(st->errmsg), "its incidents were "
			 "made with --gap %llds; a new gap (%llds) recomputes "
			 "all of them: add --regap to do that",
			 (long long)(v / 1000000000),
			 (long long)(st->gap_ns / 1000000000));
		return RT_EINVAL;
	}
	st->regapped_from = st->rebuild_all ? v : 0;
	if (!found || st->rebuild_all)
		if ((err = store_meta_set_int(st, "gap_ns", st->gap_ns)))
			return err;
	return 0;
}

int store_open(const char *path, unsigned flags, const struct store_opts *o,
	       struct store **out, char *err, size_t errlen)
{
	struct store *st;
	int rc;

	if (flags & STORE_READONLY)
		return store_open_read(path, NULL, out, err, errlen);
	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return RT_ENOMEM;
	}
	st->flags = flags;
	rt_arena_init(&st->scratch);
	if ((rc = store_lock(path, &st->lock, err, errlen))) {
		store_close(st);
		return rc;
	}
	if (o) {
		st->log = o->log;
		st->workload = o->workload;
	}
	store_sqlite_config(false);
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		store_close(st);
		return RT_EDB;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, 10000);
	if ((rc = open_writer(st, o))) {
		snprintf(err, errlen, "%s: %s", path, st->errmsg[0] ?
			 st->errmsg : rt_strerror(rc));
		store_close(st);
		return rc;
	}
	/* With -v: the moment a second writer would be refused. */
	if (st->log && st->lock)
		fprintf(st->log, "revtrail: %s: this writer (pid %ld) holds "
			"the database\n", path, (long)getpid());
	*out = st;
	return 0;
}

int64_t store_regapped_from(const struct store *st)
{
	return st->regapped_from;
}

int store_use_cluster(struct store *st, const char *name)
{
	char *c;

	if (st->cluster && strcmp(st->cluster, name) == 0)
		return 0;
	c = strdup(name);
	if (!c)
		return RT_ENOMEM;
	free(st->cluster);
	st->cluster = c;
	return 0;
}

int store_clusters(struct store *st, const char ***names, size_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_KEY_CLUSTERS);
	size_t cap = 0;
	int rc, err = 0;

	*names = NULL;
	*n = 0;
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *c = store_col_text(s, 0);

		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 4;
			const char **q = rt_arena_alloc(&st->scratch,
							nc * sizeof(*q));

			if (!q) {
				err = RT_ENOMEM;
				break;
			}
			if (*n)
				memcpy(q, *names, *n * sizeof(*q));
			*names = q;
			cap = nc;
		}
		if (!((*names)[(*n)++] = store_scratch_dup(st, c, strlen(c))))
			err = RT_ENOMEM;
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "clusters");
	sqlite3_reset(s);
	return err;
}

int64_t store_gap(const struct store *st)
{
	return st->gap_ns;
}

bool store_gap_changed(const struct store *st)
{
	return st->rebuild_all;
}

int store_position(struct store *st, const char *source, int32_t partition,
		   int64_t *offset)
{
	sqlite3_stmt *s = store_stmt(st, S_POS_GET);
	int rc;

	sqlite3_bind_text(s, 1, source, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, partition);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*offset = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? 1 : store_db_fail(st, "source position");
}
