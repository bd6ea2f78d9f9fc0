/*
 * read.c: the read side of the store -- opening a database read-only, the
 * user's SQL (query) and the fixed queries of incidents and show.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

static int schema_version(struct store *st, int *v)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL))
		return db_fail(st, "schema version");
	rc = sqlite3_step(s);
	*v = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : db_fail(st, "schema version");
}

static int open_reader(struct store *st)
{
	int v, err;

	if (sqlite3_exec(st->db, "PRAGMA query_only = 1", NULL, NULL, NULL))
		return db_fail(st, "query_only");
	if ((err = schema_version(st, &v)))
		return err;
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

int store_open_read(const char *path, const struct store_read_opts *o,
		    struct store **out, char *err, size_t errlen)
{
	struct store *st = calloc(1, sizeof(*st));
	int rc;

	(void)o;
	*out = NULL;
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return RT_ENOMEM;
	}
	st->flags = STORE_READONLY;
	rt_arena_init(&st->scratch);
	store_sqlite_config();
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 st->db ? sqlite3_errmsg(st->db) : "out of memory");
		store_close(st);
		return RT_EDB;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, 10000);
	if ((rc = open_reader(st))) {
		snprintf(err, errlen, "%s: %s", path, st->errmsg[0] ?
			 st->errmsg : rt_strerror(rc));
		store_close(st);
		return rc;
	}
	*out = st;
	return 0;
}

static int run_rows(sqlite3_stmt *s,
		    int (*header)(void *, int, const char *const *),
		    store_row_fn fn, void *ctx, struct store *st)
{
	int n = sqlite3_column_count(s), rc, ret = 0;
	const char *names[256];
	struct store_value vals[256];

	if (n > 256)
		n = 256;
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
		return db_fail(st, "query");
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

	/* Prepare all first: nothing runs if any statement would write. */
	while (tail && *tail) {
		sqlite3_stmt *s = NULL;

		if (sqlite3_prepare_v2(st->db, tail, -1, &s, &tail) != SQLITE_OK) {
			snprintf(err, errlen, "%s", sqlite3_errmsg(st->db));
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
		if (ret == RT_EDB)
			snprintf(err, errlen, "%s", st->errmsg);
	}
out:
	for (size_t i = 0; i < n; i++)
		sqlite3_finalize(list[i]);
	return ret;
}

int store_incidents(struct store *st, const struct store_filter *f,
		    int (*header)(void *ctx, int ncols,
				  const char *const *names),
		    store_row_fn fn, void *ctx)
{
	sqlite3_stmt *s;
	int ret;

	if (sqlite3_prepare_v2(st->db, SQL_INCIDENTS, -1, &s, NULL))
		return db_fail(st, "incidents");
	sqlite3_bind_int(s, 1, f && f->open_only);
	bind_cstr(s, 2, f ? f->ns : NULL);
	bind_cstr(s, 3, f ? f->release : NULL);
	if (f && f->since_ns)
		sqlite3_bind_int64(s, 4, f->since_ns);
	ret = run_rows(s, header, fn, ctx, st);
	sqlite3_finalize(s);
	return ret;
}

int store_incident_part(struct store *st, int64_t id, enum store_part part,
			store_row_fn fn, void *ctx)
{
	static const char *const sql[] = {
		[STORE_PART_INCIDENT] = SQL_INCIDENT,
		[STORE_PART_OBJECTS] = SQL_INCIDENT_OBJECTS,
		[STORE_PART_TIMELINE] = SQL_INCIDENT_TIMELINE,
		[STORE_PART_REVISION] = SQL_INCIDENT_REVISION,
	};
	sqlite3_stmt *s;
	int ret;

	if (sqlite3_prepare_v2(st->db, sql[part], -1, &s, NULL))
		return db_fail(st, "incident");
	sqlite3_bind_int64(s, 1, id);
	ret = run_rows(s, NULL, fn, ctx, st);
	sqlite3_finalize(s);
	return ret;
}
