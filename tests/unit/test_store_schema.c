/*
 * test_store_schema.c: creating and migrating a database (user_version 0 ->
 * current), refusing a newer one, the read-only handle (never creates a
 * file, refuses writes), store_query rows, source positions.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/store.h"
#include "../../store/sql.h"
#include "db_path.h"
#include "tap.h"


static int exec(const char *sql)
{
	sqlite3 *h;
	int rc;

	sqlite3_open(path, &h);
	rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
	sqlite3_close(h);
	return rc;
}

static int version(void)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	int v = -1;

	sqlite3_open(path, &h);
	sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &s, NULL);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return v;
}

struct collect {
	char text[1024];
	int rows;
};

static int on_row(void *ctx, int n, const char *const *names,
		  const struct store_value *v)
{
	struct collect *c = ctx;
	size_t len = strlen(c->text);

	c->rows++;
	for (int i = 0; i < n; i++) {
		char cell[64];

		if (v[i].type == STORE_INT)
			snprintf(cell, sizeof(cell), "%lld", (long long)v[i].i);
		else if (v[i].type == STORE_TEXT)
			snprintf(cell, sizeof(cell), "%s", v[i].p);
		else if (v[i].type == STORE_NULL)
			snprintf(cell, sizeof(cell), "null");
		else
			snprintf(cell, sizeof(cell), "?");
		len += (size_t)snprintf(c->text + len, sizeof(c->text) - len,
					"%s=%s;", names[i], cell);
	}
	return 0;
}

static void test_create_and_migrate(void)
{
	struct store *st;
	char err[512];

	fresh();
	ok(exec("CREATE TABLE unrelated(x); DROP TABLE unrelated;") == 0,
	   "an empty file with user_version 0");
	is_int(version(), 0, "version 0 before");
	is_int(store_open(path, 0, NULL, &st, err, sizeof(err)), 0,
	       "writer opens and migrates");
	store_close(st);
	is_int(version(), STORE_SCHEMA_VERSION, "migrated to the current version");
	/* The file, not the macro: docs/schema.md documents the number
	 * ("currently 16"), and a migrate that stopped short or wrote
	 * another would pass a comparison of STORE_SCHEMA_VERSION with
	 * itself. */
	is_int(version(), 16, "the file says 16, as docs/schema.md documents");
	ok(exec("SELECT id, namespace, release, revision, status, severity,"
		" opened_at, last_seen_at, closed_at, event_count, tags,"
		" diagnosis, title FROM incidents;"
		"SELECT id, incident_id, ts, namespace, object_kind, object_name,"
		" pod, container, reason, message, tags, severity, release,"
		" revision, format, origin, count FROM events;"
		"SELECT incident_id, object_kind, object_name, first_seen,"
		" last_seen, events FROM incident_objects;"
		"SELECT namespace, release, revision, status, chart, app_version,"
		" updated_at, description FROM revisions;"
		"SELECT * FROM timeline;") == 0,
	   "the contract's tables, columns and view exist");
	is_int(store_open(path, 0, NULL, &st, err, sizeof(err)), 0,
	       "reopening a current database");
	store_close(st);
	is_int(version(), 16, "still version 16");
	exec("PRAGMA user_version = 99");
	ok(store_open(path, 0, NULL, &st, err, sizeof(err)) != 0,
	   "a newer schema is refused");
	ok(strstr(err, "newer") != NULL, "with a clear message: %s", err);
	ok(store_open_read(path, NULL, &st, err, sizeof(err)) != 0,
	   "also read-only");
	fresh();
}

/* A version 1 file (the first release) gains workload_releases and keeps
 * its rows. */
static void test_migrate_v1(void)
{
	struct store *st;
	struct collect c = { "", 0 };
	char err[512] = "";

	fresh();
	ok(exec(store_migrations[0]) == 0, "a version 1 schema");
	ok(exec("PRAGMA user_version = 1;"
		"INSERT INTO events(ukey, namespace, release) VALUES(7, 'lb', 'x');"
		"INSERT INTO revisions(namespace, release, revision, status)"
		" VALUES('lb', 'edge', 3, 'deployed');") == 0, "with rows");
	is_int(store_open(path, 0, NULL, &st, err, sizeof(err)), 0,
	       "the writer migrates it: %s", err);
	store_close(st);
	is_int(version(), STORE_SCHEMA_VERSION, "to the current version");
	ok(exec("SELECT namespace, workload, release_namespace, release"
		" FROM workload_releases") == 0, "workload_releases exists");
	is_int(store_open_read(path, NULL, &st, err, sizeof(err)), 0,
	       "readable");
	store_query(st, "SELECT (SELECT count(*) FROM events) AS e,"
		    " (SELECT status FROM revisions) AS s", NULL, on_row, &c,
		    err, sizeof(err));
	is_str(c.text, "e=1;s=deployed;", "rows kept");
	store_close(st);
	fresh();
}

static int count(const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	int n = -1;

	sqlite3_open(path, &h);
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return n;
}

/* Version 3 keeps events without an incident or a release out of the two
 * lookup indexes; the lookups by incident and by release still use them. */
static void test_migrate_v2(void)
{
	struct store *st;
	char err[512] = "";

	fresh();
	ok(exec(store_migrations[0]) == 0 && exec(store_migrations[1]) == 0,
	   "a version 2 schema");
	ok(exec("PRAGMA user_version = 2;"
		"INSERT INTO events(ukey, incident_id, release_namespace, release,"
		" first_ns) VALUES(1, 4, 'lb', 'x', 10), (2, NULL, NULL, NULL, 20),"
		" (3, NULL, 'lb', 'x', 30);") == 0, "with rows");
	is_int(store_open(path, 0, NULL, &st, err, sizeof(err)), 0,
	       "the writer migrates it: %s", err);
	store_close(st);
	is_int(version(), STORE_SCHEMA_VERSION, "to the current version");
	is_int(count("SELECT count(*) FROM sqlite_master WHERE name IN"
		     " ('events_incident', 'events_release')"
		     " AND sql LIKE '% WHERE % IS NOT NULL'"), 2,
	       "both indexes are partial");
	is_int(count("SELECT count(*) FROM events INDEXED BY events_incident"
		     " WHERE incident_id = 4"), 1, "lookup by incident");
	is_int(count("SELECT count(*) FROM events INDEXED BY events_release"
		     " WHERE release_namespace = 'lb' AND release = 'x'"), 2,
	       "lookup by release");
	is_int(count("SELECT count(*) FROM events"), 3, "rows kept");
	fresh();
}

/* The correlator's workload naming, as far as this test needs it: a
 * pod's name without its ReplicaSet hash and suffix. */
static struct rt_str workload_of(struct rt_str kind, struct rt_str name)
{
	size_t n = name.n;

	if (rt_str_eq(kind, "Pod"))
		for (int cut = 0; cut < 2; cut++)
			while (n && name.p[--n] != '-')
				;
	return rt_str_make(name.p, n);
}

/* Version 4 fills events.workload (what re-attribution looks events up
 * by, named by the function the opener gives) and incidents.pod_count
 * from the rows already there. */
static void test_migrate_v3(void)
{
	struct store_opts o = { .workload = workload_of };
	struct store *st;
	char err[512] = "";

	fresh();
	ok(exec(store_migrations[0]) == 0 && exec(store_migrations[1]) == 0 &&
	   exec(store_migrations[2]) == 0, "a version 3 schema");
	ok(exec("PRAGMA user_version = 3;"
		"INSERT INTO events(ukey, namespace, object_kind, object_name, via)"
		" VALUES(1, 'shop', 'Pod', 'web-7d9c8f4b6-4kx2m', 5),"
		" (2, 'shop', 'ConfigMap', 'web-config', 4), (3, 'shop', NULL,"
		" NULL, 0);"
		"INSERT INTO incidents(id, namespace, release, opened_at,"
		" last_seen_at, opened_ns, last_ns) VALUES(9, 'shop', 'web', 'a',"
		" 'b', 1, 2);"
		"INSERT INTO incident_objects(incident_id, object_kind,"
		" object_name) VALUES(9, 'Pod', 'p1'), (9, 'Pod', 'p2'),"
		" (9, 'ConfigMap', 'c');") == 0, "with rows");
	is_int(store_open(path, 0, &o, &st, err, sizeof(err)), 0,
	       "the writer migrates it: %s", err);
	store_close(st);
	is_int(version(), STORE_SCHEMA_VERSION, "to the current version");
	is_int(count("SELECT count(*) FROM events WHERE"
		     " (ukey = 1 AND workload = 'web') OR"
		     " (ukey = 2 AND workload = 'web-config') OR"
		     " (ukey = 3 AND workload IS NULL)"), 3,
	       "workloads filled: pod suffixes cut");
	is_int(count("SELECT count(*) FROM events INDEXED BY events_workload"
		     " WHERE namespace = 'shop' AND workload = 'web'"
		     " AND via >= 4"), 1, "lookup by workload");
	is_int(count("SELECT pod_count FROM incidents WHERE id = 9"), 2,
	       "pods counted");
	is_int(count("SELECT count(*) FROM incident_objects INDEXED BY"
		     " incident_objects_name WHERE incident_id = 9"
		     " AND object_kind = 'Pod' AND object_name = 'p2'"), 1,
	       "objects found by name");
	is_int(count("SELECT count(*) FROM pragma_index_list("
		     "'incident_objects') WHERE name = 'incident_objects_name'"
		     " AND \"unique\" = 1"), 1, "the name is unique per incident");
	is_int(count("SELECT count(*) FROM pragma_index_info("
		     "'incident_objects_name') WHERE (seqno, name) IN (VALUES"
		     "(0, 'incident_id'), (1, 'object_kind'), (2, 'object_name'))"),
	       3, "keyed by incident, kind and name");
	is_int(count("SELECT count(*) FROM pragma_index_info("
		     "'sqlite_autoindex_incident_objects_1') WHERE"
		     " (seqno, name) IN (VALUES(0, 'incident_id'),"
		     " (1, 'object_kind'), (2, 'first_ns'), (3, 'object_name'))"),
	       4, "pods kept in first seen order");
	is_int(count("SELECT count(*) FROM incident_objects"
		     " WHERE first_ns = 0"), 3, "a missing first time reads 0");
	fresh();
}

static void test_readonly(void)
{
	struct store *st, *rw;
	struct collect c = { "", 0 };
	char err[512] = "";

	fresh();
	ok(store_open_read(path, NULL, &st, err, sizeof(err)) != 0,
	   "read-only open of a missing file fails");
	ok(access(path, F_OK) != 0, "and does not create it");
	is_int(store_open(path, 0, NULL, &rw, err, sizeof(err)), 0, "writer");
	is_int(store_open_read(path, NULL, &st, err, sizeof(err)), 0,
	       "reader next to a writer");
	is_int(store_query(st, "SELECT 1 AS one, 'x' AS two, NULL AS three;"
			   " SELECT count(*) AS n FROM incidents", NULL, on_row,
			   &c, err, sizeof(err)), 0, "two read statements");
	is_str(c.text, "one=1;two=x;three=null;n=0;", "rows of both");
	c.text[0] = '\0';
	is_int(store_query(st, "SELECT 1; DELETE FROM incidents", NULL, on_row,
			   &c, err, sizeof(err)), RT_EINVAL, "a write is refused");
	ok(strstr(err, "read-only") != NULL, "clear error: %s", err);
	is_str(c.text, "", "and nothing ran, not even the SELECT");
	is_int(store_query(st, "PRAGMA user_version = 5", NULL, on_row, &c, err,
			   sizeof(err)), RT_EINVAL, "a writing pragma is refused");
	is_int(store_query(st, "SELEKT", NULL, on_row, &c, err, sizeof(err)),
	       RT_EINVAL, "bad SQL is an error");
	store_close(st);
	{
		struct plan_batch_pos pos = { "topic-a", 3, 1234 };
		int64_t off = 0;

		is_int(store_begin(rw), 0, "a transaction");
		is_int(store_write_positions(rw, &pos, 1), 0, "a position");
		is_int(store_end(rw, NULL), 0, "committed");
		is_int(store_position(rw, "topic-a", 3, &off), 0, "known");
		is_int(off, 1234, "position kept");
		is_int(store_position(rw, "topic-a", 4, &off), 1,
		       "unknown partition");
	}
	store_close(rw);
	fresh();
}

int main(void)
{
	char tmpl[] = "/tmp/revtrail-test-schema-XXXXXX";
	int fd = mkstemp(tmpl);

	close(fd);
	unlink(tmpl);
	snprintf(path, sizeof(path), "%s.db", tmpl);
	test_create_and_migrate();
	test_migrate_v1();
	test_migrate_v2();
	test_migrate_v3();
	test_readonly();
	return done_testing();
}
