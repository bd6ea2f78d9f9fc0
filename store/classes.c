/*
 * classes.c: the revision classes a batch needs (correlate/revclass.c),
 * remembered so that it needs no rescan of its release: each incident's
 * class, each ReplicaSet's first sighting and class, and whether a
 * class-0 incident was open at a deploy.
 */
#include "store_int.h"

/* An empty text is '' in these tables, never NULL. */
static void bind_text(sqlite3_stmt *s, int i, struct rt_str v)
{
	sqlite3_bind_text(s, i, v.n ? v.p : "", (int)v.n, SQLITE_STATIC);
}

static void bind_key(sqlite3_stmt *s, struct rt_str ns, struct rt_str rel)
{
	bind_text(s, 1, ns);
	bind_text(s, 2, rel);
}

int store_incident_set_class(struct store *st, int64_t id, int cls)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_SET_CLASS);

	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, cls);
	return store_db_done(st, s, "incident class");
}

int store_read_replicaset(struct store *st, struct rt_str ns,
			  struct rt_str rel, struct rt_str name,
			  int64_t *first, int *cls)
{
	sqlite3_stmt *s = store_stmt(st, S_RS_GET);
	int rc, found = 0;

	bind_key(s, ns, rel);
	bind_text(s, 3, name);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*first = sqlite3_column_int64(s, 0);
		*cls = sqlite3_column_int(s, 1);
		found = 1;
	} else if (rc != SQLITE_DONE) {
		found = store_db_fail(st, "replicaset lookup");
	}
	sqlite3_reset(s);
	return found;
}

int store_write_replicaset(struct store *st, struct rt_str ns,
			   struct rt_str rel, struct rt_str name,
			   int64_t first, int cls)
{
	sqlite3_stmt *s = store_stmt(st, S_RS_PUT);

	bind_key(s, ns, rel);
	bind_text(s, 3, name);
	sqlite3_bind_int64(s, 4, first);
	sqlite3_bind_int(s, 5, cls);
	return store_db_done(st, s, "replicaset");
}

int64_t store_count_replicasets(struct store *st, struct rt_str ns,
				struct rt_str rel)
{
	sqlite3_stmt *s = store_stmt(st, S_RS_COUNT);
	int64_t n;

	bind_key(s, ns, rel);
	n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) :
		store_db_fail(st, "replicaset count");
	sqlite3_reset(s);
	return n;
}

int store_clear_replicasets(struct store *st, struct rt_str ns,
			    struct rt_str rel)
{
	sqlite3_stmt *s = store_stmt(st, S_RS_CLEAR);

	bind_key(s, ns, rel);
	return store_db_done(st, s, "replicasets");
}

/* 1 when bound statement s has a row, 0 when none, < 0 on failure. */
static int any_row(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);
	int found = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 :
		store_db_fail(st, what);        /* its message before reset */

	sqlite3_reset(s);
	return found;
}

int store_class0_in(struct store *st, struct rt_str ns, struct rt_str rel,
		    int64_t from, int64_t to)
{
	sqlite3_stmt *s = store_stmt(st, S_RS_CLASS0_IN);

	bind_key(s, ns, rel);
	sqlite3_bind_int64(s, 3, from);
	sqlite3_bind_int64(s, 4, to);
	return any_row(st, s, "replicaset lookup");
}

int store_open0_at(struct store *st, struct rt_str ns, struct rt_str rel,
		   int64_t start, int64_t t, int64_t gap_ns)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_OPEN0_AT);

	bind_key(s, ns, rel);
	sqlite3_bind_int64(s, 3, start);
	sqlite3_bind_int64(s, 4, t);
	sqlite3_bind_int64(s, 5, gap_ns);
	return any_row(st, s, "open incident lookup");
}
