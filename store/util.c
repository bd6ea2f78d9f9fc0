/*
 * util.c: JSON text into an rt_buf, and the writing of an incident's object
 * deltas.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* JSON string: quotes, escapes control bytes, passes UTF-8 through. */
void store_buf_json_str(struct rt_buf *b, const char *p, size_t n)
{
	rt_buf_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		size_t run = i;

		/* copy a run of plain bytes at once */
		while (run < n && (unsigned char)p[run] >= 0x20 &&
		       p[run] != '"' && p[run] != '\\' && p[run] != 0x7f)
			run++;
		if (run > i) {
			rt_buf_add(b, p + i, run - i);
			i = run - 1;
			continue;
		}
		if (c == '"' || c == '\\') {
			rt_buf_addc(b, '\\');
			rt_buf_addc(b, (char)c);
		} else if (c == '\n') {
			rt_buf_add(b, "\\n", 2);
		} else if (c == '\t') {
			rt_buf_add(b, "\\t", 2);
		} else if (c == '\r') {
			rt_buf_add(b, "\\r", 2);
		} else if (c < 0x20 || c == 0x7f) {
			rt_buf_addf(b, "\\u%04x", c);
		} else {
			rt_buf_addc(b, (char)c);
		}
	}
	rt_buf_addc(b, '"');
}

const char *store_buf_str(struct rt_buf *b)
{
	if (!b->p)
		rt_buf_add(b, "", 0);
	return b->err ? NULL : b->p;
}

const char *store_scratch_dup(struct store *st, const char *p, size_t n)
{
	return rt_arena_strdup(&st->scratch, p ? p : "", p ? n : 0).p;
}

/*
 * Writes one object's delta: inserts it, or adds to the stored row. *added
 * is set when the row is new. The touch changes only what is not key: an
 * upsert names first_ns, a key column, in its SET, so SQLite deletes and
 * reinserts the row and its name index entry even when the time stays,
 * and it is left for an object seen earlier than its row says. A failed
 * insert or touch costs about what a successful one does, and objects come
 * in runs (new pods of a rollout, or a crash loop's pods seen again), so
 * the step that worked for the last object goes first. Its names and times
 * outlive the steps below, so SQLite copies none of them.
 */
static int object_write(struct store *st, const struct plan_object *o,
			int64_t incident, bool *added)
{
	enum store_stmt seq[] = { S_OBJ_NEW, S_OBJ_TOUCH, S_OBJ_UPSERT };
	char first[RT_TIME_BUFSZ], last[RT_TIME_BUFSZ];
	int err;

	if (st->obj_stored) {
		seq[0] = S_OBJ_TOUCH;
		seq[1] = S_OBJ_NEW;
	}
	*added = false;
	for (size_t k = 0; k < 3; k++) {
		sqlite3_stmt *s = store_stmt(st, seq[k]);

		sqlite3_bind_int64(s, 1, incident);
		sqlite3_bind_text(s, 2, o->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, o->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, o->first_ns);
		sqlite3_bind_int64(s, 5, o->last_ns);
		sqlite3_bind_int64(s, 6, o->events);
		/* formatted here: SQLite's strftime + printf per row cost more
		 * than the upsert itself */
		store_bind_iso(s, 7, o->first_ns, first);
		store_bind_iso(s, 8, o->last_ns, last);
		if ((err = store_db_done(st, s, "object upsert")))
			return err;
		if (sqlite3_changes(st->db) > 0) {
			*added = seq[k] == S_OBJ_NEW;
			break;
		}
	}
	st->obj_stored = !*added;
	return 0;
}

int store_objects_write(struct store *st, const struct plan_object *o, size_t n,
		  int64_t incident)
{
	int64_t pods = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		bool added;

		if ((err = object_write(st, &o[i], incident, &added)))
			return err;
		pods += added && !strcmp(o[i].kind, "Pod");
	}
	if (pods) {
		sqlite3_stmt *s = store_stmt(st, S_INC_PODS_ADD);

		sqlite3_bind_int64(s, 1, incident);
		sqlite3_bind_int64(s, 2, pods);
		return store_db_done(st, s, "incident pods");
	}
	return 0;
}

int store_incident_count_pods(struct store *st, int64_t incident)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_PODS_COUNT);

	sqlite3_bind_int64(s, 1, incident);
	return store_db_done(st, s, "incident pods");
}
