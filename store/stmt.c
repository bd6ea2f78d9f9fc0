/*
 * stmt.c: the statement helpers every file of the store uses -- a
 * prepared statement reset and bound to the cluster, the error message of
 * a failed step, binding strings and times, reading text columns. Below
 * store.c, so that the store's files call down to it and store.c calls
 * none of them back.
 */
#include <stdio.h>
#include <string.h>

#include "store_int.h"

sqlite3_stmt *store_stmt(struct store *st, enum store_stmt id)
{
	sqlite3_stmt *s = st->st[id];

	RT_ASSERT(store_owned(st));
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (st->cluster_param[id])
		sqlite3_bind_text(s, st->cluster_param[id], st->cluster, -1,
				  SQLITE_STATIC);
	return s;
}

int store_db_fail(struct store *st, const char *what)
{
	snprintf(st->errmsg, sizeof(st->errmsg), "%s: %s", what,
		 sqlite3_errmsg(st->db));
	return RT_EDB;
}

/* Steps a statement that returns no rows worth reading, then resets it. */
int store_db_done(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE) {
		store_db_fail(st, what);
		sqlite3_reset(s);
		return RT_EDB;
	}
	sqlite3_reset(s);
	return 0;
}

/* Empty strings are stored as NULL: "unknown" reads better in SQL. The
 * views outlive the step (batch arena, registry), so no copy. */
void store_bind_rts(sqlite3_stmt *s, int i, struct rt_str v)
{
	if (v.n == 0)
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_text(s, i, v.p, (int)v.n, SQLITE_STATIC);
}

void store_bind_cstr(sqlite3_stmt *s, int i, const char *v)
{
	if (!v)
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
}

/*
 * Two times per event made rt_time_format a visible part of a commit
 * (when it still used snprintf). Event times of a batch share their
 * second often: the formatted seconds are cached and only the
 * microseconds are written per call, which also spares the calendar
 * arithmetic. The text goes into the
 * caller's buffer, which outlives the statement's step, and is bound
 * without a copy: SQLite copying each time text cost a malloc and a free
 * per bound time.
 */
void store_bind_iso(sqlite3_stmt *s, int i, int64_t ns, char buf[RT_TIME_BUFSZ])
{
	static _Thread_local int64_t cached_sec = -1;
	static _Thread_local char cached[RT_TIME_BUFSZ];
	int64_t sec = ns / 1000000000, us = ns % 1000000000 / 1000;

	if (ns <= 0) {
		sqlite3_bind_null(s, i);
		return;
	}
	if (sec > 253402300799LL) {       /* past year 9999: not fixed width */
		rt_time_format(ns, buf);
		sqlite3_bind_text(s, i, buf, -1, SQLITE_STATIC);
		return;
	}
	if (sec != cached_sec) {
		rt_time_format(sec * 1000000000, cached);
		cached_sec = sec;
	}
	memcpy(buf, cached, 20);          /* "2024-11-03T14:41:07." */
	for (int k = 25; k >= 20; k--, us /= 10)
		buf[k] = (char)('0' + us % 10);
	buf[26] = 'Z';
	sqlite3_bind_text(s, i, buf, 27, SQLITE_STATIC);
}

const char *store_col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? (const char *)t : "";
}
