/*
 * sql.h (private to store/): every SQL text of the store, in one place.
 *
 * The schema is a user contract (docs/schema.md): tables incidents, events,
 * incident_objects, revisions, the view timeline; times ISO-8601 UTC with
 * microseconds and Z; tags/fields/evidence/pods are JSON text. Columns
 * ending in _ns are the same times as integers, for the store's own range
 * queries. Statements take bound parameters only: no SQL is ever built from
 * data.
 *
 * Releases are keyed by (cluster, namespace, release). A write statement
 * names its cluster as the parameter :cluster, which store_stmt() binds to the
 * cluster being written (store_use_cluster), so the statements below read
 * as if there were one cluster; :cluster is always the last parameter.
 */
#ifndef REVTRAIL_STORE_SQL_H
#define REVTRAIL_STORE_SQL_H

/* PRAGMA user_version after the last migration. */
#define STORE_SCHEMA_VERSION 16

/* ISO-8601 of an _ns integer expression X, in SQL (microseconds, Z). */
#define SQL_ISO(X) "(strftime('%Y-%m-%dT%H:%M:%S', (" X ") / 1000000000, " \
	"'unixepoch') || printf('.%06dZ', ((" X ") / 1000) % 1000000))"

/* The timeline view (also made over merged databases, store/merge.c). */
/* What every version of the timeline's SELECT shares: its event rows,
 * and its revision rows up to the join on the release and after the
 * conditions on revisions; a view's text must stay as it was written. */
#define SQL_TIMELINE_HEAD \
	" SELECT e.incident_id AS incident_id, e.first_seen AS ts," \
	"  'event' AS entry, e.id AS event_id, e.revision AS revision," \
	"  e.object_kind AS object_kind, e.object_name AS object_name," \
	"  e.reason AS reason, e.message AS message, e.severity AS severity," \
	"  e.tags AS tags, e.count AS count, e.ts AS last_seen," \
	"  e.first_ns AS ts_ns" \
	" FROM events e WHERE e.incident_id IS NOT NULL" \
	" UNION ALL" \
	" SELECT i.id, r.updated_at, 'revision', NULL, r.revision, 'Release'," \
	"  i.release, r.status, r.description, NULL, NULL, NULL, r.updated_at," \
	"  r.updated_ns" \
	" FROM incidents i JOIN revisions r ON r.release = i.release"
#define SQL_TIMELINE_TAIL \
	"  AND r.updated_ns <= i.last_ns" \
	"   + coalesce((SELECT value FROM meta WHERE key = 'gap_ns'), 900000000000)" \
	" ORDER BY 1, ts_ns, entry DESC, event_id"
/* The timeline's SELECT. RC and OC join revisions of the incident's own
 * cluster (empty before version 5, which had none). */
#define SQL_TIMELINE_SELECT_OF(RC, OC) \
	SQL_TIMELINE_HEAD RC \
	"  AND (r.namespace = i.namespace OR (r.namespace = '' AND NOT EXISTS" \
	"   (SELECT 1 FROM revisions o WHERE" OC " o.namespace = i.namespace" \
	"    AND o.release = i.release)))" \
	" WHERE r.updated_ns > 0 AND r.revision >= i.revision" \
	"  AND (r.revision = i.revision OR r.updated_ns + 1000000000 > i.opened_ns)" \
	SQL_TIMELINE_TAIL
#define SQL_TIMELINE_SELECT SQL_TIMELINE_SELECT_OF("", "")
/* Schema 11 on: of the rows of the incident's own revision number, the
 * one of the install (life) in force when it opened; a reinstall's
 * revision 1 is not the old life's. */
#define SQL_TIMELINE_SELECT_LIVES \
	SQL_TIMELINE_HEAD \
	"  AND r.cluster = i.cluster" \
	"  AND (r.namespace = i.namespace OR (r.namespace = '' AND NOT EXISTS" \
	"   (SELECT 1 FROM revisions o WHERE o.cluster = i.cluster AND" \
	"    o.namespace = i.namespace AND o.release = i.release)))" \
	" WHERE r.updated_ns > 0 AND r.revision >= i.revision" \
	"  AND ((r.revision = i.revision AND NOT EXISTS (SELECT 1 FROM" \
	"    revisions n WHERE n.cluster = r.cluster AND" \
	"    n.namespace = r.namespace AND n.release = r.release AND" \
	"    n.revision = r.revision AND n.life > r.life AND" \
	"    n.updated_ns <= i.opened_ns + 1000000000))" \
	"   OR r.updated_ns + 1000000000 > i.opened_ns)" \
	SQL_TIMELINE_TAIL
#define SQL_TIMELINE_SELECT_CLUSTER SQL_TIMELINE_SELECT_OF( \
	" AND r.cluster = i.cluster", " o.cluster = i.cluster AND")

/* 10 -> 11, whole: revisions keyed by life too; a workload mapped to
 * each release it was seen in, from its first sighting. */
#define SQL_MIGRATE_LIVES \
	"DROP VIEW timeline;" \
	"CREATE TABLE revisions_v11(" \
	" namespace TEXT NOT NULL, release TEXT NOT NULL," \
	" revision INTEGER NOT NULL, status TEXT, chart TEXT, app_version TEXT," \
	" updated_at TEXT, description TEXT," \
	" evidence TEXT NOT NULL DEFAULT '[]', hooks TEXT NOT NULL DEFAULT '[]'," \
	" updated_ns INTEGER NOT NULL DEFAULT 0," \
	" evidence_bits INTEGER NOT NULL DEFAULT 0," \
	" merge_ranks INTEGER NOT NULL DEFAULT 0," \
	" cluster TEXT NOT NULL DEFAULT '', manifest_summary TEXT," \
	" life INTEGER NOT NULL DEFAULT 1," \
	" PRIMARY KEY(cluster, namespace, release, revision, life));" \
	"INSERT INTO revisions_v11(namespace, release, revision, status, chart," \
	" app_version, updated_at, description, evidence, hooks, updated_ns," \
	" evidence_bits, merge_ranks, cluster, manifest_summary)" \
	" SELECT namespace, release, revision, status, chart, app_version," \
	" updated_at, description, evidence, hooks, updated_ns, evidence_bits," \
	" merge_ranks, cluster, manifest_summary FROM revisions;" \
	"DROP TABLE revisions;" \
	"ALTER TABLE revisions_v11 RENAME TO revisions;" \
	"CREATE VIEW timeline AS" SQL_TIMELINE_SELECT_LIVES ";" \
	"CREATE TABLE workload_releases_v11(namespace TEXT NOT NULL," \
	" workload TEXT NOT NULL, release_namespace TEXT NOT NULL," \
	" release TEXT NOT NULL, cluster TEXT NOT NULL DEFAULT ''," \
	" via INTEGER NOT NULL DEFAULT 1, since_ns INTEGER NOT NULL DEFAULT 0," \
	" PRIMARY KEY(cluster, namespace, workload, release_namespace, release))" \
	" WITHOUT ROWID;" \
	"INSERT INTO workload_releases_v11(namespace, workload," \
	" release_namespace, release, cluster, via) SELECT namespace, workload," \
	" release_namespace, release, cluster, via FROM workload_releases;" \
	"DROP TABLE workload_releases;" \
	"ALTER TABLE workload_releases_v11 RENAME TO workload_releases;"
/* The incidents outbox (store/outbox.c): the keys of the incidents
 * topic whose latest state is not yet known delivered, one row per key,
 * moved to the end (a new id) each time the key changes again. Self-
 * contained, so that it can take whichever number it lands as. */
#define SQL_MIGRATE_OUTBOX \
	"CREATE TABLE incident_outbox(" \
	" id INTEGER PRIMARY KEY AUTOINCREMENT," \
	" cluster TEXT NOT NULL, namespace TEXT NOT NULL," \
	" release TEXT NOT NULL, incident_id INTEGER NOT NULL," \
	" UNIQUE(cluster, namespace, release, incident_id));"

/* The fleet view (store/fleet.c) and the instance's own name in the
 * incidents topic's keys (store/outbox.c): a random id made once, when the
 * file is created or first migrated here; and the parts of the fleet's
 * incidents, one row per key of the incidents topic, its latest value.
 * Self-contained, so that it can take whichever number it lands as. */
#define SQL_MIGRATE_FLEET \
	"INSERT OR IGNORE INTO meta(key, value)" \
	" VALUES('instance_id', lower(hex(randomblob(8))));" \
	"CREATE TABLE fleet_parts(" \
	" id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE," \
	" instance TEXT NOT NULL, cluster TEXT NOT NULL," \
	" namespace TEXT NOT NULL, release TEXT NOT NULL," \
	" revision INTEGER NOT NULL, opened_ns INTEGER NOT NULL," \
	" last_ns INTEGER NOT NULL, incident_id INTEGER," \
	" fields TEXT NOT NULL);" \
	"CREATE INDEX fleet_parts_release ON fleet_parts(cluster, namespace," \
	" release, revision, opened_ns);"

/* Revision classes (correlate/revclass.c) remembered, so that a batch
 * puts an event in its class's incident without a rescan: the class of
 * each incident, and each ReplicaSet of a release with its first
 * sighting and class. Self-contained, so that it can take whichever
 * number it lands as. Each release already stored gets a row named ''
 * that says its classes are unknown: the first batch that meets one of
 * its ReplicaSets recomputes it, which fills both (not the migration:
 * it leaves every incident as it was). */
#define SQL_MIGRATE_CLASSES \
	"ALTER TABLE incidents ADD COLUMN class INTEGER NOT NULL DEFAULT 0;" \
	"CREATE TABLE replicasets(cluster TEXT NOT NULL DEFAULT ''," \
	" namespace TEXT NOT NULL, release TEXT NOT NULL, name TEXT NOT NULL," \
	" first_ns INTEGER NOT NULL, class INTEGER NOT NULL DEFAULT 0," \
	" PRIMARY KEY(cluster, namespace, release, name)) WITHOUT ROWID;" \
	"INSERT INTO replicasets(cluster, namespace, release, name, first_ns)" \
	" SELECT DISTINCT cluster, namespace, release, '', 0 FROM release_keys;"

/* Migration N brings user_version N-1 to N. Append, never edit. */
static const char *const store_migrations[STORE_SCHEMA_VERSION] = {
	/* 0 -> 1: the first schema */
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
	"CREATE TABLE revisions("
	" namespace TEXT NOT NULL, release TEXT NOT NULL,"
	" revision INTEGER NOT NULL, status TEXT, chart TEXT, app_version TEXT,"
	" updated_at TEXT, description TEXT,"
	" evidence TEXT NOT NULL DEFAULT '[]', hooks TEXT NOT NULL DEFAULT '[]',"
	" updated_ns INTEGER NOT NULL DEFAULT 0,"
	" evidence_bits INTEGER NOT NULL DEFAULT 0,"
	" merge_ranks INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY(namespace, release, revision));"
	"CREATE TABLE incidents("
	" id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, release TEXT NOT NULL,"
	" revision INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL DEFAULT 'open',"
	" severity TEXT NOT NULL DEFAULT 'info', opened_at TEXT NOT NULL,"
	" last_seen_at TEXT NOT NULL, closed_at TEXT,"
	" event_count INTEGER NOT NULL DEFAULT 0,"
	" occurrences INTEGER NOT NULL DEFAULT 0,"
	" tags TEXT NOT NULL DEFAULT '[]', diagnosis TEXT, title TEXT,"
	" revision_status TEXT, later_revisions TEXT NOT NULL DEFAULT '[]',"
	" attribution TEXT, evidence TEXT NOT NULL DEFAULT '[]', remedy TEXT,"
	" pods TEXT NOT NULL DEFAULT '[]',"
	" opened_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL, closed_ns INTEGER,"
	" via INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX incidents_release ON incidents(namespace, release, last_ns);"
	"CREATE INDEX incidents_opened ON incidents(opened_ns);"
	"CREATE INDEX incidents_open ON incidents(last_ns) WHERE status = 'open';"
	"CREATE TABLE events("
	" id INTEGER PRIMARY KEY, incident_id INTEGER, ts TEXT, first_seen TEXT,"
	" namespace TEXT, object_kind TEXT, object_name TEXT, pod TEXT,"
	" container TEXT, reason TEXT, type TEXT, message TEXT,"
	" tags TEXT NOT NULL DEFAULT '[]', fields TEXT NOT NULL DEFAULT '{}',"
	" severity TEXT, release TEXT, release_namespace TEXT, attribution TEXT,"
	" revision INTEGER NOT NULL DEFAULT 0, format TEXT, origin TEXT,"
	" count INTEGER NOT NULL DEFAULT 1, ukey INTEGER NOT NULL,"
	" first_ns INTEGER NOT NULL DEFAULT 0, ts_ns INTEGER NOT NULL DEFAULT 0,"
	" via INTEGER NOT NULL DEFAULT 0);"
	"CREATE UNIQUE INDEX events_ukey ON events(ukey);"
	"CREATE INDEX events_incident ON events(incident_id);"
	"CREATE INDEX events_release ON events(release_namespace, release, first_ns);"
	"CREATE TABLE incident_objects("
	" incident_id INTEGER NOT NULL, object_kind TEXT NOT NULL,"
	" object_name TEXT NOT NULL, first_seen TEXT, last_seen TEXT,"
	" events INTEGER NOT NULL DEFAULT 0, first_ns INTEGER, last_ns INTEGER,"
	" PRIMARY KEY(incident_id, object_kind, object_name)) WITHOUT ROWID;"
	"CREATE TABLE release_keys(namespace TEXT NOT NULL, release TEXT NOT NULL,"
	" PRIMARY KEY(namespace, release)) WITHOUT ROWID;"
	"CREATE TABLE sources(path TEXT NOT NULL, partition INTEGER NOT NULL,"
	" offset INTEGER NOT NULL, updated_at TEXT,"
	" PRIMARY KEY(path, partition)) WITHOUT ROWID;"
	"CREATE VIEW timeline AS" SQL_TIMELINE_SELECT ";",
	/* 1 -> 2: workloads whose pods' labels name their release */
	"CREATE TABLE workload_releases(namespace TEXT NOT NULL,"
	" workload TEXT NOT NULL, release_namespace TEXT NOT NULL,"
	" release TEXT NOT NULL, PRIMARY KEY(namespace, workload)) WITHOUT ROWID;",
	/* 2 -> 3: every lookup by incident or release names one, so events
	 * outside any (most container-log errors) stay out of both indexes */
	"DROP INDEX events_incident;"
	"CREATE INDEX events_incident ON events(incident_id)"
	" WHERE incident_id IS NOT NULL;"
	"DROP INDEX events_release;"
	"CREATE INDEX events_release ON events(release_namespace, release,"
	" first_ns) WHERE release IS NOT NULL;",
	/* 3 -> 4: what a batch reads kept at hand rather than counted. The
	 * events an inferred attribution may lose to a newly learned name,
	 * by their workload (rt_workload: corr_workload_name, registered on
	 * the writer connection; via >= 4 is PLAN_VIA_PREFIX and
	 * PLAN_VIA_WORKLOAD); an incident's pod count; its pods in first
	 * seen order. */
	"ALTER TABLE events ADD COLUMN workload TEXT;"
	"UPDATE events SET workload = rt_workload(object_kind, object_name)"
	" WHERE object_name IS NOT NULL;"
	"CREATE INDEX events_workload ON events(namespace, workload)"
	" WHERE via >= 4;"
	"ALTER TABLE incidents ADD COLUMN pod_count INTEGER NOT NULL DEFAULT 0;"
	"UPDATE incidents SET pod_count = (SELECT count(*) FROM incident_objects"
	" o WHERE o.incident_id = incidents.id AND o.object_kind = 'Pod');"
	"CREATE INDEX incident_objects_first ON incident_objects(incident_id,"
	" object_kind, first_ns, object_name);",
	/* 4 -> 5: the cluster a row came from (ingest/consume --cluster),
	 * part of every release key: (cluster, namespace, release). What
	 * was stored before belongs to the default cluster ''. In indexes
	 * the cluster comes after the names, so that a query by release
	 * alone (docs/schema.md, "Indexes") still uses them. Keys in a
	 * primary key mean a new table; the view names revisions, so it goes
	 * first (a rename checks the views) and comes back joining on the
	 * cluster too. */
	"DROP VIEW timeline;"
	"ALTER TABLE events ADD COLUMN cluster TEXT NOT NULL DEFAULT '';"
	"DROP INDEX events_ukey;"
	"CREATE UNIQUE INDEX events_ukey ON events(ukey, cluster);"
	"DROP INDEX events_release;"
	"CREATE INDEX events_release ON events(release_namespace, release,"
	" cluster, first_ns) WHERE release IS NOT NULL;"
	"DROP INDEX events_workload;"
	"CREATE INDEX events_workload ON events(namespace, workload, cluster)"
	" WHERE via >= 4;"
	"ALTER TABLE incidents ADD COLUMN cluster TEXT NOT NULL DEFAULT '';"
	"DROP INDEX incidents_release;"
	"CREATE INDEX incidents_release ON incidents(namespace, release,"
	" cluster, last_ns);"
	"CREATE TABLE revisions_v5("
	" namespace TEXT NOT NULL, release TEXT NOT NULL,"
	" revision INTEGER NOT NULL, status TEXT, chart TEXT, app_version TEXT,"
	" updated_at TEXT, description TEXT,"
	" evidence TEXT NOT NULL DEFAULT '[]', hooks TEXT NOT NULL DEFAULT '[]',"
	" updated_ns INTEGER NOT NULL DEFAULT 0,"
	" evidence_bits INTEGER NOT NULL DEFAULT 0,"
	" merge_ranks INTEGER NOT NULL DEFAULT 0,"
	" cluster TEXT NOT NULL DEFAULT '',"
	" PRIMARY KEY(cluster, namespace, release, revision));"
	"INSERT INTO revisions_v5(namespace, release, revision, status, chart,"
	" app_version, updated_at, description, evidence, hooks, updated_ns,"
	" evidence_bits, merge_ranks) SELECT namespace, release, revision,"
	" status, chart, app_version, updated_at, description, evidence, hooks,"
	" updated_ns, evidence_bits, merge_ranks FROM revisions;"
	"DROP TABLE revisions;"
	"ALTER TABLE revisions_v5 RENAME TO revisions;"
	"CREATE TABLE release_keys_v5(namespace TEXT NOT NULL,"
	" release TEXT NOT NULL, cluster TEXT NOT NULL DEFAULT '',"
	" PRIMARY KEY(cluster, namespace, release)) WITHOUT ROWID;"
	"INSERT INTO release_keys_v5(namespace, release)"
	" SELECT namespace, release FROM release_keys;"
	"DROP TABLE release_keys;"
	"ALTER TABLE release_keys_v5 RENAME TO release_keys;"
	"CREATE TABLE workload_releases_v5(namespace TEXT NOT NULL,"
	" workload TEXT NOT NULL, release_namespace TEXT NOT NULL,"
	" release TEXT NOT NULL, cluster TEXT NOT NULL DEFAULT '',"
	" PRIMARY KEY(cluster, namespace, workload)) WITHOUT ROWID;"
	"INSERT INTO workload_releases_v5(namespace, workload,"
	" release_namespace, release) SELECT namespace, workload,"
	" release_namespace, release FROM workload_releases;"
	"DROP TABLE workload_releases;"
	"ALTER TABLE workload_releases_v5 RENAME TO workload_releases;"
	"CREATE VIEW timeline AS" SQL_TIMELINE_SELECT_CLUSTER ";",
	/* 5 -> 6: attributions manifest (4) and owner (5) come before prefix
	 * and workload, which move to 6 and 7; via >= 4 (events_workload)
	 * is now every release that was found rather than stated. A
	 * workload's mapping says whether a label or a manifest gave it. */
	"UPDATE events SET via = via + 2 WHERE via >= 4;"
	"UPDATE incidents SET via = via + 2 WHERE via >= 4;"
	"ALTER TABLE workload_releases ADD COLUMN via INTEGER NOT NULL"
	" DEFAULT 1;",
	/* 6 -> 7: an incident's objects stored in first-seen order, found
	 * by name through a unique index. Keyed by name, the rows of a big
	 * incident took new pods at random places (pod names end in random
	 * letters), so each batch rewrote nearly every page of the table;
	 * in time order new pods go to the end, and only the narrow name
	 * index takes them at random. The old first-seen index is the table
	 * itself now. */
	"CREATE TABLE incident_objects_v7("
	" incident_id INTEGER NOT NULL, object_kind TEXT NOT NULL,"
	" object_name TEXT NOT NULL, first_seen TEXT, last_seen TEXT,"
	" events INTEGER NOT NULL DEFAULT 0, first_ns INTEGER NOT NULL,"
	" last_ns INTEGER,"
	" PRIMARY KEY(incident_id, object_kind, first_ns, object_name))"
	" WITHOUT ROWID;"
	"INSERT INTO incident_objects_v7 SELECT incident_id, object_kind,"
	" object_name, first_seen, last_seen, events, coalesce(first_ns, 0),"
	" last_ns FROM incident_objects;"
	"DROP TABLE incident_objects;"
	"ALTER TABLE incident_objects_v7 RENAME TO incident_objects;"
	"CREATE UNIQUE INDEX incident_objects_name ON incident_objects("
	" incident_id, object_kind, object_name);",
	/* 7 -> 8: retention (--retain) finds the aged events outside any
	 * incident in time order without reading the table; the events of
	 * an incident go with it, found through events_incident. */
	"CREATE INDEX events_orphan_ts ON events(ts_ns)"
	" WHERE incident_id IS NULL;",
	/* 8 -> 9: what a revision's manifest sets that breaks pods when it
	 * changes (ingest/helm_summary.c), which show compares with the
	 * revision before. NULL: no manifest decoded. */
	"ALTER TABLE revisions"
	" ADD COLUMN manifest_summary TEXT;",
	/* 9 -> 10: a line repeated by one container is one row per time
	 * bucket, which keeps the distinct times it counted (correlate/
	 * repeat.c): count is their number. NULL for every other row. */
	"ALTER TABLE events"
	" ADD COLUMN times BLOB;",
	/* 10 -> 11: an uninstall and install again starts the numbers over
	 * at 1, so a revision is its number and its life (which install,
	 * 1 = the oldest known: correlate/registry.c "relife"). A key
	 * column means a new table; the view goes first and comes back
	 * choosing the life in force. A workload that moves to another
	 * release keeps a row per release, since its first sighting. */
	SQL_MIGRATE_LIVES,
	/* 11 -> 12 */
	SQL_MIGRATE_OUTBOX,
	/* 12 -> 13: a diagnosis reads the first rows of an incident that
	 * captured something (INC_CAPTURES); through events_incident it
	 * stepped over every row that did not, an nginx 5xx line each, at
	 * every commit that touched the incident. Only the rows with
	 * captures are in this index, in the same order. */
	"CREATE INDEX events_incident_fields ON events(incident_id)"
	" WHERE fields <> '{}';",
	/* 13 -> 14 */
	SQL_MIGRATE_FLEET,
	/* 14 -> 15 */
	SQL_MIGRATE_CLASSES,
	/* 15 -> 16: statements of a revision without a time, kept apart
	 * (correlate.h corr_loose); a revision stored before holds them
	 * merged in, as it did */
	"CREATE TABLE revision_timeless("
	" cluster TEXT NOT NULL DEFAULT '', namespace TEXT NOT NULL,"
	" release TEXT NOT NULL, revision INTEGER NOT NULL,"
	" updated_ns INTEGER NOT NULL,"
	" status TEXT, chart TEXT, app_version TEXT, description TEXT,"
	" evidence_bits INTEGER NOT NULL DEFAULT 0,"
	" hooks TEXT NOT NULL DEFAULT '',"
	" merge_ranks INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY(cluster, namespace, release, revision, updated_ns))"
	" WITHOUT ROWID;",
};

/* An event update's columns that no index holds (EV_UPDATE*). An UPDATE
 * that names an indexed column deletes and reinserts the row's entry in
 * that index, changed or not. */
#define SQL_EV_SET_UNKEYED \
	" ts = ?2, first_seen = ?3, count = ?4, tags = ?5, severity = ?6," \
	" attribution = ?9, revision = ?11, ts_ns = ?13," \
	" message = CASE WHEN ?14 THEN ?15 ELSE message END," \
	" reason = CASE WHEN ?14 THEN ?16 ELSE reason END," \
	" object_kind = CASE WHEN ?14 THEN ?17 ELSE object_kind END," \
	" object_name = CASE WHEN ?14 THEN ?18 ELSE object_name END," \
	" pod = CASE WHEN ?14 THEN ?19 ELSE pod END," \
	" container = CASE WHEN ?14 THEN ?20 ELSE container END," \
	" type = CASE WHEN ?14 THEN ?21 ELSE type END," \
	" fields = CASE WHEN ?14 THEN ?22 ELSE fields END, times = ?25"

/* A sum of occurrence counts that saturates at INT64_MAX as the writer's
 * does (rt_count_add): sum() raises "integer overflow" past it. total()
 * adds in floating point: exact up to 2^53, near beyond. */
#define SAT_SUM(X) "CASE WHEN total(" X ") >= 9223372036854775807.0" \
	" THEN 9223372036854775807 ELSE CAST(total(" X ") AS INTEGER) END"

/* Statements prepared once per writer connection. */
#define STORE_WRITE_STMTS(X) \
	X(META_GET, "SELECT value FROM meta WHERE key = ?1") \
	X(META_SET, "INSERT INTO meta(key, value) VALUES(?1, ?2)" \
		" ON CONFLICT(key) DO UPDATE SET value = excluded.value") \
	X(REV_ALL, "SELECT namespace, release, revision, status, chart," \
		" app_version, description, updated_ns, evidence_bits, hooks," \
		" merge_ranks, life FROM revisions WHERE cluster = :cluster") \
	X(REV_UPSERT, "INSERT INTO revisions(namespace, release, revision," \
		" status, chart, app_version, updated_at, description, evidence," \
		" hooks, updated_ns, evidence_bits, merge_ranks, life, cluster)" \
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13," \
		" ?14, :cluster)" \
		" ON CONFLICT(cluster, namespace, release, revision, life)" \
		" DO UPDATE SET" \
		" status = excluded.status, chart = excluded.chart," \
		" app_version = excluded.app_version," \
		" updated_at = excluded.updated_at," \
		" description = excluded.description," \
		" evidence = excluded.evidence, hooks = excluded.hooks," \
		" updated_ns = excluded.updated_ns," \
		" evidence_bits = excluded.evidence_bits," \
		" merge_ranks = excluded.merge_ranks") \
	X(REV_SUMMARY, "UPDATE revisions SET manifest_summary = ?4" \
		" WHERE namespace = ?1 AND release = ?2 AND revision = ?3" \
		" AND life = ?5 AND cluster = :cluster") \
	/* A release's lives renumbered: its rows step aside (negative),
	 * each comes back to its new life by number and time, and what no
	 * revision held claims is dropped; then every row is written. */ \
	X(REV_ASIDE, "UPDATE revisions SET life = -life WHERE namespace = ?1" \
		" AND release = ?2 AND life > 0 AND cluster = :cluster") \
	X(REV_RELIFE, "UPDATE revisions SET life = ?4 WHERE namespace = ?1" \
		" AND release = ?2 AND revision = ?3 AND life < 0" \
		" AND abs(updated_ns - ?5) <= ?6" \
		" AND cluster = :cluster") \
	X(REV_DROP_ASIDE, "DELETE FROM revisions WHERE namespace = ?1" \
		" AND release = ?2 AND life < 0 AND cluster = :cluster") \
	X(TL_ALL, "SELECT namespace, release, revision, status, chart," \
		" app_version, description, updated_ns, evidence_bits, hooks," \
		" merge_ranks FROM revision_timeless" \
		" WHERE cluster = :cluster") \
	X(TL_CLEAR, "DELETE FROM revision_timeless WHERE namespace = ?1" \
		" AND release = ?2 AND revision = ?3 AND cluster = :cluster") \
	X(TL_PUT, "INSERT INTO revision_timeless(namespace, release," \
		" revision, status, chart, app_version, description," \
		" updated_ns, evidence_bits, hooks, merge_ranks, cluster)" \
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11," \
		" :cluster)") \
	X(EV_LOOKUP, "SELECT id, incident_id, first_ns, ts_ns, count, tags," \
		" severity, via, release_namespace, release, message, reason," \
		" object_kind, object_name, pod, container, type, times" \
		" FROM events WHERE ukey = ?1 AND cluster = :cluster") \
	X(EV_UKEYS, "SELECT ukey FROM events") \
	X(EV_MAX_ID, "SELECT coalesce(max(id), 0) FROM events") \
	X(EV_INSERT, "INSERT INTO events(incident_id, ts, first_seen," \
		" namespace, object_kind, object_name, pod, container, reason," \
		" type, message, tags, fields, severity, release," \
		" release_namespace, attribution, revision, format, origin, count," \
		" ukey, first_ns, ts_ns, via, workload, times, cluster)" \
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13," \
		" ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25," \
		" ?26, ?27, :cluster)") \
	X(EV_UPDATE, "UPDATE events SET" SQL_EV_SET_UNKEYED "," \
		" incident_id = ?1, release = ?7, release_namespace = ?8," \
		" via = ?10, first_ns = ?12," \
		" workload = CASE WHEN ?14 THEN ?23 ELSE workload END" \
		" WHERE id = ?24") \
	X(EV_UPDATE_UNKEYED, "UPDATE events SET" SQL_EV_SET_UNKEYED \
		" WHERE id = ?24 AND incident_id IS ?1 AND release IS ?7" \
		" AND release_namespace IS ?8 AND via = ?10 AND first_ns = ?12" \
		" AND (NOT ?14 OR workload IS ?23)") \
	X(EV_MOVE, "UPDATE events SET incident_id = ?1 WHERE incident_id = ?2") \
	X(EV_ASSIGN, "UPDATE events SET incident_id = ?1" \
		" WHERE release_namespace = ?2 AND release = ?3" \
		" AND first_ns >= ?4 AND first_ns <= ?5 AND tags <> '[]'" \
		" AND incident_id IS NOT ?1 AND cluster = :cluster") \
	X(EV_ASSIGN_ID, "UPDATE events SET incident_id = ?1" \
		" WHERE id = ?2 AND incident_id IS NOT ?1") \
	X(EV_UNASSIGN, "UPDATE events SET incident_id = NULL" \
		" WHERE incident_id = ?1") \
	X(EV_KEY_SCAN, "SELECT incident_id, first_ns, ts_ns, count, tags," \
		" severity, object_kind, object_name, via, fields, id, pod" \
		" FROM events" \
		" WHERE release_namespace = ?1 AND release = ?2 AND first_ns > 0" \
		" AND tags <> '[]' AND cluster = :cluster ORDER BY first_ns") \
	X(EV_REV_RANGE, "UPDATE events SET revision = ?1" \
		" WHERE release_namespace = ?2 AND release = ?3" \
		" AND first_ns >= ?4 AND first_ns < ?5 AND revision <> ?1" \
		" AND cluster = :cluster") \
	X(EV_OF_WORKLOAD, "SELECT id, object_kind, object_name, pod, via," \
		" release_namespace, release, workload, first_ns FROM events" \
		" WHERE namespace = ?1" \
		" AND workload = ?2 AND via >= 4 AND cluster = :cluster") \
	X(EV_OF_WORKLOADS, "SELECT id, object_kind, object_name, pod, via," \
		" release_namespace, release, workload, first_ns FROM events" \
		" WHERE namespace = ?1" \
		" AND workload >= ?2 AND workload < ?3 AND via >= 4" \
		" AND cluster = :cluster") \
	X(EV_REATTR, "UPDATE events SET release_namespace = ?1, release = ?2," \
		" attribution = ?3, via = ?4 WHERE id = ?5") \
	X(ALIAS_ALL, "SELECT namespace, workload, release_namespace, release," \
		" via, since_ns FROM workload_releases WHERE cluster = :cluster") \
	/* the earliest sighting and the best via, as the registry keeps */ \
	X(ALIAS_SET, "INSERT INTO workload_releases(namespace, workload," \
		" release_namespace, release, via, since_ns, cluster)" \
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, :cluster)" \
		" ON CONFLICT(cluster, namespace, workload, release_namespace," \
		" release) DO UPDATE SET via = min(via, excluded.via)," \
		" since_ns = CASE WHEN since_ns = 0 THEN excluded.since_ns" \
		" WHEN excluded.since_ns = 0 THEN since_ns" \
		" ELSE min(since_ns, excluded.since_ns) END") \
	/* Events a mapping gave (via label) of a workload, by the release
	 * it gave: a mapping that begins later may take them. */ \
	X(EV_OF_MAPPED, "SELECT id, object_kind, object_name, pod, via," \
		" release_namespace, release, workload, first_ns FROM events" \
		" WHERE release_namespace = ?3 AND release = ?4" \
		" AND cluster = :cluster AND via = 1 AND namespace = ?1" \
		" AND workload = ?2") \
	X(EV_JOB_NS, "SELECT DISTINCT namespace FROM events" \
		" WHERE release_namespace = ?1 AND release = ?2 AND via = ?3" \
		" AND cluster = :cluster") \
	X(EV_REATTR_JOB, "UPDATE events SET release_namespace = ?1" \
		" WHERE release_namespace = ?2 AND release = ?3 AND via = ?4" \
		" AND namespace = ?5 AND cluster = :cluster") \
	X(RET_ORPHANS, "DELETE FROM events WHERE id IN (SELECT id FROM events" \
		" WHERE incident_id IS NULL AND ts_ns > 0 AND ts_ns < ?1" \
		" ORDER BY ts_ns LIMIT ?2)") \
	X(RET_INCIDENTS, "SELECT id FROM incidents WHERE opened_ns < ?1" \
		" AND status = 'closed' AND last_ns < ?1 ORDER BY opened_ns" \
		" LIMIT ?2") \
	X(RET_INC_EVENTS, "DELETE FROM events WHERE id IN (SELECT id" \
		" FROM events WHERE incident_id = ?1 LIMIT ?2)") \
	X(RET_INC_OBJECTS, "DELETE FROM incident_objects" \
		" WHERE incident_id = ?1") \
	X(RET_INC_DELETE, "DELETE FROM incidents WHERE id = ?1") \
	X(RET_TIMES, "SELECT ts_ns FROM events WHERE ts_ns > 0") \
	X(RET_RECENT_INC, "SELECT opened_ns FROM incidents" \
		" ORDER BY opened_ns DESC LIMIT ?1") \
	X(RET_RECENT_EV, "SELECT ts_ns FROM events WHERE incident_id IS NULL" \
		" AND ts_ns > 0 ORDER BY ts_ns DESC LIMIT ?1") \
	X(INC_NEAR, "SELECT id, opened_ns, last_ns, event_count, occurrences," \
		" severity, tags, via, class FROM incidents" \
		" WHERE namespace = ?1 AND release = ?2 AND last_ns >= ?3" \
		" AND opened_ns <= ?4 AND cluster = :cluster") \
	X(INC_BY_ID, "SELECT id, opened_ns, last_ns, event_count, occurrences," \
		" severity, tags, via, class FROM incidents WHERE id = ?1") \
	X(INC_SET_CLASS, "UPDATE incidents SET class = ?2 WHERE id = ?1") \
	/* an incident of class 0 open at a deploy: begun before ?3 (the \
	 * deploy's skewed start), its gap reaching ?4 (the deploy) */ \
	X(INC_OPEN0_AT, "SELECT 1 FROM incidents WHERE namespace = ?1" \
		" AND release = ?2 AND last_ns >= ?4 - ?5 AND opened_ns < ?3" \
		" AND class = 0 AND cluster = :cluster LIMIT 1") \
	X(RS_GET, "SELECT first_ns, class FROM replicasets" \
		" WHERE namespace = ?1 AND release = ?2 AND name = ?3" \
		" AND cluster = :cluster") \
	X(RS_PUT, "INSERT INTO replicasets(namespace, release, name," \
		" first_ns, class, cluster) VALUES(?1, ?2, ?3, ?4, ?5, :cluster)" \
		" ON CONFLICT DO UPDATE SET first_ns = excluded.first_ns," \
		" class = excluded.class") \
	/* a ReplicaSet of class 0 first seen in [?3, ?4) */ \
	X(RS_CLASS0_IN, "SELECT 1 FROM replicasets WHERE namespace = ?1" \
		" AND release = ?2 AND name <> '' AND class = 0" \
		" AND first_ns >= ?3 AND first_ns < ?4 AND cluster = :cluster" \
		" LIMIT 1") \
	X(RS_COUNT, "SELECT count(*) FROM replicasets WHERE namespace = ?1" \
		" AND release = ?2 AND cluster = :cluster") \
	X(RS_CLEAR, "DELETE FROM replicasets WHERE namespace = ?1" \
		" AND release = ?2 AND cluster = :cluster") \
	X(INC_OF_KEY, "SELECT id FROM incidents WHERE namespace = ?1" \
		" AND release = ?2 AND cluster = :cluster ORDER BY id") \
	X(INC_INSERT, "INSERT INTO incidents(namespace, release, opened_at," \
		" last_seen_at, opened_ns, last_ns, cluster)" \
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, :cluster)") \
	X(INC_AGG, "UPDATE incidents SET opened_at = ?1, last_seen_at = ?2," \
		" opened_ns = ?3, last_ns = ?4, event_count = ?5, occurrences = ?6," \
		" severity = ?7, tags = ?8, via = ?9, attribution = ?10" \
		" WHERE id = ?11") \
	X(INC_DELETE, "DELETE FROM incidents WHERE id = ?1") \
	X(INC_GET, "SELECT namespace, release, opened_ns, last_ns, tags," \
		" pod_count FROM incidents WHERE id = ?1") \
	/* what the events of an incident captured, per tag (the first
	 * events of a big incident only: a bounded read) */ \
	X(INC_CAPTURES, "SELECT t.value, f.key, f.value, count(DISTINCT e.pod)," \
		" " SAT_SUM("e.count") " FROM (SELECT tags, fields, pod, count FROM events" \
		" WHERE incident_id = ?1 AND fields <> '{}' LIMIT 4096) e," \
		" json_each(e.tags) t, json_each(e.fields) f WHERE f.key IN" \
		" ('configmap', 'secret', 'path', 'key', 'volume', 'image'," \
		" 'user', 'host', 'probe', 'container', 'storageclass')" \
		" AND f.type = 'text' GROUP BY 1, 2, 3 ORDER BY 5 DESC, 2, 3 LIMIT 48") \
	X(INC_TAG_COUNTS, "SELECT t.value, count(DISTINCT e.pod)," \
		" " SAT_SUM("e.count") " FROM (SELECT tags, pod, count FROM events" \
		" WHERE incident_id = ?1 LIMIT 4096) e, json_each(e.tags) t" \
		" GROUP BY 1 ORDER BY 3 DESC LIMIT 64") \
	/* the rows INC_TAG_COUNTS aggregates, which store_read_captures
	 * aggregates itself: json_each of every row's tags was most of a
	 * diagnosis's read */ \
	X(INC_TAG_ROWS, "SELECT tags, pod, count FROM events" \
		" WHERE incident_id = ?1 LIMIT 4096") \
	/* the rows INC_CAPTURES aggregates, which store_read_captures
	 * aggregates itself (captures.c) */ \
	X(INC_CAPTURE_ROWS, "SELECT tags, fields, pod, count FROM events" \
		" WHERE incident_id = ?1 AND fields <> '{}' LIMIT 4096") \
	X(INC_SICK_REVS, "SELECT DISTINCT revision FROM incidents" \
		" WHERE namespace = ?1 AND release = ?2 AND id <> ?3" \
		" AND revision > 0 AND cluster = :cluster" \
		" ORDER BY revision DESC LIMIT 64") \
	X(INC_PODS_ADD, "UPDATE incidents SET pod_count = pod_count + ?2" \
		" WHERE id = ?1") \
	X(INC_PODS_COUNT, "UPDATE incidents SET pod_count = (SELECT count(*)" \
		" FROM incident_objects WHERE incident_id = ?1" \
		" AND object_kind = 'Pod') WHERE id = ?1") \
	X(INC_DIAG, "UPDATE incidents SET revision = ?1, revision_status = ?2," \
		" later_revisions = ?3, status = ?4, closed_at = ?5," \
		" closed_ns = ?6, diagnosis = ?7, title = ?8, evidence = ?9," \
		" remedy = ?10, pods = ?11 WHERE id = ?12") \
	X(INC_CLOSE, "UPDATE incidents SET status = 'closed'," \
		" closed_ns = last_ns + ?1, closed_at = " SQL_ISO("last_ns + ?1") \
		" WHERE status = 'open' AND last_ns + ?1 < ?2") \
	X(OBJ_UPSERT, "INSERT INTO incident_objects(incident_id, object_kind," \
		" object_name, first_seen, last_seen, events, first_ns, last_ns)" \
		" VALUES(?1, ?2, ?3, ?7, ?8, ?6, ?4, ?5)" \
		" ON CONFLICT(incident_id, object_kind, object_name)" \
		" DO UPDATE SET" \
		" first_seen = CASE WHEN excluded.first_ns < first_ns" \
		"  THEN excluded.first_seen ELSE first_seen END," \
		" last_seen = CASE WHEN excluded.last_ns > last_ns" \
		"  THEN excluded.last_seen ELSE last_seen END," \
		" first_ns = min(first_ns, excluded.first_ns)," \
		" last_ns = max(last_ns, excluded.last_ns)," \
		" events = events + excluded.events") \
	X(OBJ_NEW, "INSERT INTO incident_objects(incident_id, object_kind," \
		" object_name, first_seen, last_seen, events, first_ns, last_ns)" \
		" VALUES(?1, ?2, ?3, ?7, ?8, ?6, ?4, ?5)" \
		" ON CONFLICT(incident_id, object_kind, object_name) DO NOTHING") \
	X(OBJ_TOUCH, "UPDATE incident_objects SET" \
		" last_seen = CASE WHEN ?5 > last_ns THEN ?8 ELSE last_seen END," \
		" last_ns = max(last_ns, ?5), events = events + ?6" \
		" WHERE incident_id = ?1 AND object_kind = ?2" \
		" AND object_name = ?3 AND first_ns <= ?4") \
	X(OBJ_MOVE, "INSERT INTO incident_objects(incident_id, object_kind," \
		" object_name, first_seen, last_seen, events, first_ns, last_ns)" \
		" SELECT ?1, object_kind, object_name, first_seen, last_seen," \
		" events, first_ns, last_ns FROM incident_objects" \
		" WHERE incident_id = ?2 AND true" \
		" ON CONFLICT(incident_id, object_kind, object_name) DO UPDATE SET" \
		" first_seen = CASE WHEN excluded.first_ns < first_ns" \
		"  THEN excluded.first_seen ELSE first_seen END," \
		" last_seen = CASE WHEN excluded.last_ns > last_ns" \
		"  THEN excluded.last_seen ELSE last_seen END," \
		" first_ns = min(first_ns, excluded.first_ns)," \
		" last_ns = max(last_ns, excluded.last_ns)," \
		" events = events + excluded.events") \
	X(OBJ_DELETE, "DELETE FROM incident_objects WHERE incident_id = ?1") \
	/* In key order (schema 7): the first pods are the first rows. */ \
	X(OBJ_PODS, "SELECT object_kind, object_name, first_ns, 0, 0" \
		" FROM incident_objects WHERE incident_id = ?1" \
		" AND object_kind = 'Pod' ORDER BY first_ns, object_name LIMIT ?2") \
	X(OBJ_NEXT_KIND, "SELECT min(object_kind) FROM incident_objects" \
		" WHERE incident_id = ?1 AND object_kind > ?2") \
	X(OBJ_GLOB, "SELECT object_kind, object_name, first_ns, last_ns, events" \
		" FROM incident_objects WHERE incident_id = ?1 AND object_kind = ?2" \
		" AND object_name >= ?3 AND object_name < ?4 ORDER BY object_name") \
	X(KEY_ADD, "INSERT OR IGNORE INTO release_keys(namespace, release," \
		" cluster) VALUES(?1, ?2, :cluster)") \
	X(KEY_OF_NAME, "SELECT namespace FROM release_keys WHERE release = ?1" \
		" AND cluster = :cluster") \
	X(KEY_ALL, "SELECT namespace, release FROM release_keys" \
		" WHERE cluster = :cluster") \
	X(KEY_NAMESPACES, "SELECT DISTINCT namespace FROM release_keys" \
		" WHERE cluster = :cluster") \
	X(KEY_CLUSTERS, "SELECT DISTINCT cluster FROM release_keys") \
	X(POS_SET, "INSERT INTO sources(path, partition, offset, updated_at)" \
		" VALUES(?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%fZ'))" \
		" ON CONFLICT(path, partition) DO UPDATE SET" \
		" offset = excluded.offset, updated_at = excluded.updated_at") \
	X(POS_GET, "SELECT offset FROM sources WHERE path = ?1 AND partition = ?2")

/* What the read commands run (incidents, show). They read a file of an
 * older version as it is: before version 5 there is no cluster column,
 * and CL is '' (the cluster every row of such a file belongs to). */
#define SQL_INCIDENTS_COLS(CL) \
	"SELECT id, namespace, release, revision, status, severity, opened_at," \
	" last_seen_at, closed_at, event_count, tags, diagnosis, title," \
	" revision_status, attribution, pods, " CL " AS cluster FROM incidents"
#define SQL_INCIDENTS_FILTER(CL) \
	" (?1 = 0 OR status = 'open')" \
	" AND (?2 IS NULL OR namespace = ?2) AND (?3 IS NULL OR release = ?3)" \
	" AND (?4 IS NULL OR last_ns >= ?4) AND (?5 IS NULL OR " CL " = ?5)"
#define SQL_INCIDENTS_OF(CL) \
	SQL_INCIDENTS_COLS(CL) " WHERE" SQL_INCIDENTS_FILTER(CL) \
	" ORDER BY opened_ns DESC, id DESC"
#define SQL_INCIDENTS SQL_INCIDENTS_OF("cluster")
#define SQL_INCIDENTS_V4 SQL_INCIDENTS_OF("''")
/* What a watcher re-reads after a commit: the open incidents (the partial
 * index incidents_open) and the closed ones after the last id it knows
 * (the rowid), never the whole table. Two SELECTs, so that each finds its
 * index, and no ORDER BY: by id, the planner would scan the table. */
#define SQL_INCIDENTS_WATCH_OF(CL) \
	SQL_INCIDENTS_COLS(CL) " WHERE status = 'open' AND" \
	SQL_INCIDENTS_FILTER(CL) " UNION ALL " \
	SQL_INCIDENTS_COLS(CL) " WHERE id > ?6 AND status <> 'open' AND" \
	SQL_INCIDENTS_FILTER(CL)
#define SQL_INCIDENTS_WATCH SQL_INCIDENTS_WATCH_OF("cluster")
#define SQL_INCIDENTS_WATCH_V4 SQL_INCIDENTS_WATCH_OF("''")
/* One incident in the columns of SQL_INCIDENTS. */
#define SQL_INCIDENTS_ONE SQL_INCIDENTS_COLS("cluster") " WHERE id = ?1"
#define SQL_INCIDENTS_ONE_V4 SQL_INCIDENTS_COLS("''") " WHERE id = ?1"
#define SQL_INCIDENT_OF(CL) \
	"SELECT id, namespace, release, revision, status, severity, opened_at," \
	" last_seen_at, closed_at, event_count, occurrences, tags, diagnosis," \
	" title, revision_status, later_revisions, attribution, evidence," \
	" remedy, pods, opened_ns, last_ns, " CL " AS cluster FROM incidents" \
	" WHERE id = ?1"
#define SQL_INCIDENT SQL_INCIDENT_OF("cluster")
#define SQL_INCIDENT_V4 SQL_INCIDENT_OF("''")
/* Whether any incident has a named cluster (the read commands show the
 * cluster only then). */
#define SQL_HAS_CLUSTERS \
	"SELECT EXISTS (SELECT 1 FROM incidents WHERE cluster <> '')"
/* SQL_INCIDENT and the pod count: one incident as consume publishes it
 * (a writer's database: always the current schema). */
#define SQL_INCIDENT_EXPORT \
	"SELECT id, namespace, release, revision, status, severity, opened_at," \
	" last_seen_at, closed_at, event_count, occurrences, tags, diagnosis," \
	" title, revision_status, later_revisions, attribution, evidence," \
	" remedy, pods, opened_ns, last_ns, cluster, pod_count FROM incidents" \
	" WHERE id = ?1"
#define SQL_INCIDENT_OBJECTS \
	"SELECT object_kind, object_name, first_seen, last_seen, events," \
	" first_ns, last_ns FROM incident_objects WHERE incident_id = ?1" \
	" ORDER BY first_ns, object_kind, object_name"
#define SQL_INCIDENT_TIMELINE \
	"SELECT ts, entry, revision, object_kind, object_name, reason, message," \
	" severity, tags, count, ts_ns FROM timeline WHERE incident_id = ?1"
/* The same with event_id last: what a watcher tells entries apart by. */
#define SQL_INCIDENT_TIMELINE_KEYED \
	"SELECT ts, entry, revision, object_kind, object_name, reason, message," \
	" severity, tags, count, ts_ns, event_id FROM timeline" \
	" WHERE incident_id = ?1"
/* The revision an incident's times are shown relative to. */
#define SQL_INCIDENT_REVISION_OF(SAME_CLUSTER) \
	"SELECT r.updated_ns, r.status, r.description FROM incidents i" \
	" JOIN revisions r ON r.release = i.release AND r.revision = i.revision" \
	SAME_CLUSTER " AND (r.namespace = i.namespace OR r.namespace = '')" \
	" WHERE i.id = ?1 ORDER BY r.namespace DESC," \
	" r.updated_ns <= i.opened_ns + 1000000000 DESC, r.updated_ns DESC" \
	" LIMIT 1"
#define SQL_INCIDENT_REVISION \
	SQL_INCIDENT_REVISION_OF(" AND r.cluster = i.cluster")
#define SQL_INCIDENT_REVISION_V4 SQL_INCIDENT_REVISION_OF("")
/* The namespaces an incident's release was guessed among: a helm-
 * controller job's incident (attribution job) whose release is known in
 * several namespaces, none of them the job's own, and no record of the
 * job named one ("HelmChart/<release>" in workload_releases). None when
 * evidence decided. */
#define SQL_INCIDENT_GUESS \
	"SELECT DISTINCT r.namespace FROM incidents i JOIN revisions r" \
	" ON r.release = i.release AND r.cluster = i.cluster" \
	" WHERE i.id = ?1 AND i.attribution = 'job' AND r.namespace <> ''" \
	" AND (SELECT count(DISTINCT o.namespace) FROM revisions o" \
	"  WHERE o.release = i.release AND o.cluster = i.cluster" \
	"  AND o.namespace <> '') > 1" \
	" AND NOT EXISTS (SELECT 1 FROM events e WHERE e.incident_id = i.id" \
	"  AND e.attribution = 'job' AND (EXISTS (SELECT 1 FROM" \
	"  workload_releases w WHERE w.namespace = e.namespace" \
	"  AND w.workload = 'HelmChart/' || i.release" \
	"  AND w.cluster = i.cluster) OR EXISTS (SELECT 1 FROM revisions x" \
	"  WHERE x.namespace = e.namespace AND x.release = i.release" \
	"  AND x.cluster = i.cluster)))" \
	" ORDER BY 1"
/* The life of the incident's revision (the one in force when it opened)
 * and the release's number of lives (schema 11 on). */
#define SQL_INCIDENT_LIFE \
	"SELECT r.life, (SELECT max(o.life) FROM revisions o" \
	" WHERE o.cluster = r.cluster AND o.namespace = r.namespace" \
	" AND o.release = r.release) FROM incidents i" \
	" JOIN revisions r ON r.release = i.release AND r.revision = i.revision" \
	" AND r.cluster = i.cluster AND (r.namespace = i.namespace" \
	" OR r.namespace = '') WHERE i.id = ?1 ORDER BY r.namespace DESC," \
	" r.updated_ns <= i.opened_ns + 1000000000 DESC, r.updated_ns DESC" \
	" LIMIT 1"
/* The manifest summaries of the incident's revision and the one before
 * it that has one, newest first, of one install (the life in force when
 * it opened, as SQL_INCIDENT_LIFE finds it: schema 11 on); _V9 for the
 * files from before lives (schema 9 and 10). */
#define SQL_INCIDENT_CHANGES_OF(WITH, SAME_LIFE) \
	WITH "SELECT r.revision, r.manifest_summary FROM incidents i" \
	" JOIN revisions r ON r.release = i.release AND r.cluster = i.cluster" \
	" AND (r.namespace = i.namespace OR r.namespace = '')" \
	" WHERE i.id = ?1 AND i.revision > 0 AND r.revision <= i.revision" \
	SAME_LIFE \
	" AND r.manifest_summary IS NOT NULL ORDER BY r.revision DESC LIMIT 2"
#define SQL_INCIDENT_CHANGES SQL_INCIDENT_CHANGES_OF( \
	"WITH l(life) AS (SELECT r.life FROM incidents i" \
	" JOIN revisions r ON r.release = i.release AND r.revision = i.revision" \
	" AND r.cluster = i.cluster AND (r.namespace = i.namespace" \
	" OR r.namespace = '') WHERE i.id = ?1 ORDER BY r.namespace DESC," \
	" r.updated_ns <= i.opened_ns + 1000000000 DESC, r.updated_ns DESC" \
	" LIMIT 1) ", " AND r.life = (SELECT life FROM l)")
#define SQL_INCIDENT_CHANGES_V9 SQL_INCIDENT_CHANGES_OF("", "")

#endif
