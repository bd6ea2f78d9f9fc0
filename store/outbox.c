/*
 * outbox.c: the incidents outbox of consume --incidents-topic.
 *
 * TEMP triggers on the writer's connection (store_track_incidents) put
 * the key of every incident row a transaction inserts, updates or deletes
 * into incident_outbox, in that same transaction: a committed change is
 * in the file even if revtrail stops before the producer delivered it,
 * and a rolled-back batch leaves nothing there. One row per key, given a
 * new id each time the key changes again (INSERT OR REPLACE, ids never
 * reused), so the outbox is bounded by the incidents and their deleted
 * keys however long the brokers are away, and read in id order it is the
 * queue of keys to produce. The producer reads the incident as it is when
 * it produces; a row goes only once the brokers acknowledged a message
 * produced after its last change (store_outbox_done of its id: a key
 * changed again meanwhile has a newer id and stays). The keys name this
 * database's instance id (meta instance_id), since incident ids are only
 * unique within one database.
 */
#include <stdio.h>
#include <stdlib.h>

#include "store_int.h"

/* The key of a row: its cluster, namespace, release and id. */
#define OUTBOX_PUT(R) \
	"INSERT OR REPLACE INTO incident_outbox(cluster, namespace," \
	" release, incident_id) VALUES(coalesce(" R ".cluster, '')," \
	" coalesce(" R ".namespace, ''), coalesce(" R ".release, '')," \
	" " R ".id);"

static const char outbox_triggers[] =
	"CREATE TEMP TRIGGER IF NOT EXISTS rt_outbox_ins AFTER INSERT ON"
	" main.incidents BEGIN " OUTBOX_PUT("new") " END;"
	"CREATE TEMP TRIGGER IF NOT EXISTS rt_outbox_upd AFTER UPDATE ON"
	" main.incidents BEGIN " OUTBOX_PUT("new") " END;"
	/* A row whose key changed: the old key needs its tombstone. */
	"CREATE TEMP TRIGGER IF NOT EXISTS rt_outbox_rekey AFTER UPDATE ON"
	" main.incidents WHEN old.cluster IS NOT new.cluster OR"
	" old.namespace IS NOT new.namespace OR old.release IS NOT new.release"
	" BEGIN " OUTBOX_PUT("old") " END;"
	"CREATE TEMP TRIGGER IF NOT EXISTS rt_outbox_del AFTER DELETE ON"
	" main.incidents BEGIN " OUTBOX_PUT("old") " END;";

int store_outbox_track(struct store *st)
{
	if (sqlite3_exec(st->db, outbox_triggers, NULL, NULL, NULL))
		return store_db_fail(st, "filling the incidents outbox");
	return 0;
}

static const char *text(sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	return v ? v : "";
}

int store_outbox_read(struct store *st, int64_t after, int limit,
		      store_outbox_fn fn, void *ctx)
{
	sqlite3_stmt *s;
	int rc, err = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT id, cluster, namespace,"
			       " release, incident_id FROM incident_outbox"
			       " WHERE id > ?1 ORDER BY id LIMIT ?2", -1, &s,
			       NULL))
		return store_db_fail(st, "reading the incidents outbox");
	sqlite3_bind_int64(s, 1, after);
	sqlite3_bind_int(s, 2, limit);
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct store_outbox_row r = {
			sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 4),
			text(s, 1), text(s, 2), text(s, 3),
		};

		err = fn(ctx, &r);
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "reading the incidents outbox");
	sqlite3_finalize(s);
	return err;
}

int store_outbox_done(struct store *st, const int64_t *ids, size_t n)
{
	sqlite3_stmt *s;
	int err = 0;

	if (!n)
		return 0;
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL))
		return store_db_fail(st, "emptying the incidents outbox");
	if (sqlite3_prepare_v2(st->db, "DELETE FROM incident_outbox"
			       " WHERE id = ?1", -1, &s, NULL)) {
		err = store_db_fail(st, "emptying the incidents outbox");
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return err;
	}
	for (size_t i = 0; i < n && !err; i++) {
		sqlite3_bind_int64(s, 1, ids[i]);
		if (sqlite3_step(s) != SQLITE_DONE)
			err = store_db_fail(st, "emptying the incidents outbox");
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	if (err || sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL)) {
		err = err ? err : store_db_fail(st, "emptying the incidents "
						"outbox");
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	}
	return err;
}

int store_instance_id(struct store *st, char *out, size_t size)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "SELECT value FROM meta WHERE key ="
			       " 'instance_id'", -1, &s, NULL))
		return store_db_fail(st, "reading the instance id");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(out, size, "%s", sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW) {
		snprintf(st->errmsg, sizeof(st->errmsg), "no instance id in "
			 "meta");
		return RT_EDB;
	}
	return 0;
}
