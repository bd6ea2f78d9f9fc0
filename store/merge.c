/*
 * merge.c: several databases read as one (incidents, show, query with
 * --db repeated or a glob). Scaled-out consumers each hold part of the
 * picture, and after a rebalance a partition's messages between two
 * owners' offsets are in both databases.
 *
 * The files are attached read-only (db1, db2, ... in the order given) to
 * an in-memory connection, and TEMP objects named like the contract
 * tables give the merged view, which unqualified names find first:
 *   - events: one row per event key (ukey), the version with the highest
 *     count, then the latest, then the first database's; id = its id * 100
 *     + the database's position;
 *   - incidents: those of one release and revision whose windows overlap
 *     or lie within the gap of each other are one, whose id is the first
 *     member's (by database position, then id) id * 100 + position; the
 *     counts, pods and objects are counted again from the merged events,
 *     tags, later revisions and evidence are unions, the diagnosis, title
 *     and remedy are those of the member with the most events;
 *   - revisions: one per key, the one with the most advanced status;
 *     timeline, meta, sources, release_keys, workload_releases over those.
 * Every key holds the cluster (events: ukey and cluster; incidents and
 * revisions: cluster, namespace, release, revision), '' for a file from
 * before clusters (version 4 and older).
 * Members, counts and objects are small and read by every command, so
 * they are tables built once at open; events stay a view.
 *
 * Only schema names (db1...) and integers are ever put into SQL text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define GAP "coalesce((SELECT value FROM temp.meta WHERE key = 'gap_ns')," \
	" 900000000000)"
#define WATERMARK "coalesce((SELECT value FROM temp.meta" \
	" WHERE key = 'watermark_ns'), 0)"
#define SEV_RANK(X) "CASE " X " WHEN 'critical' THEN 4 WHEN 'error' THEN 3" \
	" WHEN 'warning' THEN 2 WHEN 'info' THEN 1 ELSE 0 END"
#define STATUS_RANK(X) "CASE WHEN " X " LIKE 'pending%' THEN 1 ELSE CASE " X \
	" WHEN 'deployed' THEN 2 WHEN 'failed' THEN 3 WHEN 'superseded' THEN 4" \
	" WHEN 'uninstalling' THEN 5 WHEN 'uninstalled' THEN 6 ELSE 0 END END"
#define POD_SENTENCE(X) "(" X " GLOB '[0-9]* pod affected' OR " X \
	" GLOB '[0-9]* pods affected')"
#define POD_COUNT "(SELECT count(*) FROM temp.incident_objects o" \
	" WHERE o.incident_id = g.mid AND o.object_kind = 'Pod')"

/* Columns of the events view after id and incident_id; one missing from
 * an older file reads NULL. */
static const char *const event_cols[] = {
	"ts", "first_seen", "namespace", "object_kind", "object_name", "pod",
	"container", "reason", "type", "message", "tags", "fields", "severity",
	"release", "release_namespace", "attribution", "revision", "format",
	"origin", "count", "ukey", "first_ns", "ts_ns", "via", "workload",
	"cluster", "times",
};
static const char *const revision_cols[] = {
	"namespace", "release", "revision", "status", "chart", "app_version",
	"updated_at", "description", "evidence", "hooks", "updated_ns",
	"evidence_bits", "merge_ranks",
};
/* Copied from each database's incidents into rt_members. */
#define MEMBER_COLS "id, namespace, release, revision, opened_ns, last_ns," \
	" severity, event_count, tags, diagnosis, title, revision_status," \
	" later_revisions, attribution, evidence, remedy, pods, via"

#define STR(x) #x
#define XSTR(x) STR(x)
#define CORR_MAX_PODS_SQL XSTR(PLAN_MAX_PODS)

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct merge {
	struct store *st;
	struct rt_buf b;
	int n;              /* databases attached: db1..dbN */
	FILE *log;
};

static void add(struct merge *m, const char *sql)
{
	rt_buf_add(&m->b, sql, strlen(sql));
}

/* Runs what was built in m->b. */
static int run(struct merge *m, const char *what)
{
	const char *sql = store_buf_str(&m->b);
	int rc;

	if (!sql) {
		snprintf(m->st->errmsg, sizeof(m->st->errmsg), "out of memory");
		return RT_ENOMEM;
	}
	rc = sqlite3_exec(m->st->db, sql, NULL, NULL, NULL);
	rt_buf_reset(&m->b);
	if (rc == SQLITE_OK)
		return 0;
	rc = store_read_fail(m->st, rc);
	if (!strncmp(m->st->errmsg, "query: ", 7))
		store_db_fail(m->st, what);
	return rc;
}

/* Whether database k has table (col NULL) or its column col. */
static bool has(struct merge *m, int k, const char *table, const char *col)
{
	sqlite3_stmt *s;
	char schema[16];
	bool found = false;

	snprintf(schema, sizeof(schema), "db%d", k);
	if (sqlite3_prepare_v2(m->st->db, "SELECT count(*) FROM"
			       " pragma_table_info(?1, ?2)"
			       " WHERE ?3 IS NULL OR name = ?3", -1, &s, NULL))
		return false;
	store_bind_cstr(s, 1, table);
	store_bind_cstr(s, 2, schema);
	store_bind_cstr(s, 3, col);
	found = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) > 0;
	sqlite3_finalize(s);
	return found;
}

/* A missing cluster is the default one, any other column unknown. */
static void add_cols(struct merge *m, int k, const char *table,
		     const char *alias, const char *const *cols, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (has(m, k, table, cols[i]))
			rt_buf_addf(&m->b, ", %s.%s AS %s", alias, cols[i],
				 cols[i]);
		else
			rt_buf_addf(&m->b, ", %s AS %s", strcmp(cols[i],
				 "cluster") ? "NULL" : "''", cols[i]);
}

/* Database k's alias.cluster of table, or '' when it has none. */
static void add_cluster(struct merge *m, int k, const char *table,
			const char *alias)
{
	if (has(m, k, table, "cluster"))
		rt_buf_addf(&m->b, "%s.cluster", alias);
	else
		add(m, "''");
}

/* ---- attaching -------------------------------------------------------- */

static int user_version(sqlite3 *db, int k, int *v)
{
	sqlite3_stmt *s;
	char sql[48];
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA db%d.user_version", k);
	if ((rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL)))
		return rc;
	rc = sqlite3_step(s);
	*v = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static int attach_as(sqlite3 *db, const char *path, const char *how, int k)
{
	char *uri = store_file_uri(path, how), sql[48];
	sqlite3_stmt *s;
	int rc;

	if (!uri)
		return SQLITE_NOMEM;
	snprintf(sql, sizeof(sql), "ATTACH ?1 AS db%d", k);
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(s, 1, uri, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(s);
		sqlite3_finalize(s);
		if (rc == SQLITE_DONE)
			rc = SQLITE_OK;
	}
	free(uri);
	return rc;
}

/* Attaches path as db<k>, read-only; immutable when its directory is not
 * writable (as store_open_read does). */
static int attach(struct merge *m, const char *path, int k, char *err,
		  size_t errlen)
{
	sqlite3 *db = m->st->db;
	int rc, v = 0;

	rc = attach_as(db, path, "mode=ro", k);
	if (rc == SQLITE_OK && (rc = user_version(db, k, &v)) &&
	    store_needs_write_access(rc)) {
		char sql[32];

		snprintf(sql, sizeof(sql), "DETACH db%d", k);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		rc = attach_as(db, path, "immutable=1", k);
		if (rc == SQLITE_OK && (rc = user_version(db, k, &v)) == 0 &&
		    m->log)
			fprintf(m->log, "revtrail: %s: the directory "
				"is not writable, so the database is read as "
				"of its last checkpoint\n", path);
	}
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 sqlite3_errmsg(db));
		return RT_EDB;
	}
	if ((rc = store_check_schema(m->st, v)))
		snprintf(err, errlen, "%s: %s", path, m->st->errmsg);
	return rc;
}

/* ---- the merged objects ----------------------------------------------- */

static int build_meta(struct merge *m)
{
	rt_buf_addf(&m->b, "CREATE TEMP VIEW meta AS SELECT key, CASE key"
		 " WHEN 'gap_ns' THEN min(value) ELSE max(value) END AS value"
		 " FROM (");
	for (int k = 1; k <= m->n; k++)
		rt_buf_addf(&m->b, "%sSELECT key, value FROM db%d.meta",
			 k > 1 ? " UNION ALL " : "", k);
	rt_buf_addf(&m->b, ") GROUP BY key;");
	return run(m, "meta");
}

/* Every database's incidents, grouped: mid is the merged id, lead marks
 * the member whose diagnosis the merged incident shows. */
static int build_members(struct merge *m)
{
	add(m, "CREATE TEMP TABLE rt_members(db INTEGER NOT NULL,"
		 " id INTEGER NOT NULL, namespace TEXT, release TEXT,"
		 " revision INTEGER, opened_ns INTEGER, last_ns INTEGER,"
		 " severity TEXT, event_count INTEGER, tags TEXT,"
		 " diagnosis TEXT, title TEXT, revision_status TEXT,"
		 " later_revisions TEXT, attribution TEXT, evidence TEXT,"
		 " remedy TEXT, pods TEXT, via INTEGER, mid INTEGER,"
		 " lead INTEGER NOT NULL DEFAULT 0, cluster TEXT NOT NULL,"
		 " PRIMARY KEY(db, id)) WITHOUT ROWID;");
	for (int k = 1; k <= m->n; k++) {
		add(m, "INSERT INTO temp.rt_members(db, " MEMBER_COLS
		       ", cluster)");
		rt_buf_addf(&m->b, " SELECT %d, ", k);
		add(m, MEMBER_COLS ", ");
		add_cluster(m, k, "incidents", "i");
		rt_buf_addf(&m->b, " FROM db%d.incidents i;", k);
	}
	/* Sorted by start within a release and revision, a member starts a
	 * new incident when it begins more than the gap after every one
	 * before it has ended. */
	add(m, "WITH o AS (SELECT db, id, cluster, namespace, release,"
		 " revision, opened_ns, max(last_ns) OVER (PARTITION BY"
		 " cluster, namespace, release, revision ORDER BY opened_ns,"
		 " db, id"
		 " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach"
		 " FROM temp.rt_members),"
		 " s AS (SELECT db, id, cluster, namespace, release, revision,"
		 " sum(reach IS NULL OR opened_ns > reach + " GAP ")"
		 " OVER (PARTITION BY cluster, namespace, release, revision ORDER BY"
		 " opened_ns, db, id ROWS UNBOUNDED PRECEDING) AS grp FROM o),"
		 " g AS (SELECT db, id, first_value(id * 100 + db) OVER"
		 " (PARTITION BY cluster, namespace, release, revision, grp ORDER BY"
		 " db, id) AS mid FROM s)"
		 " UPDATE temp.rt_members SET mid = g.mid FROM g"
		 " WHERE g.db = rt_members.db AND g.id = rt_members.id;"
		 "UPDATE temp.rt_members SET lead = 1 FROM (SELECT db, id,"
		 " row_number() OVER (PARTITION BY mid ORDER BY event_count"
		 " DESC, last_ns DESC, db, id) AS r FROM temp.rt_members) x"
		 " WHERE x.r = 1 AND x.db = rt_members.db"
		 " AND x.id = rt_members.id;"
		 "CREATE INDEX temp.rt_members_mid ON rt_members(mid, db);");
	return run(m, "incidents");
}

/* Database k's events that no other database has a better version of. */
static void events_best(struct merge *m, int k)
{
	for (int j = 1; j <= m->n; j++)
		if (j != k) {
			rt_buf_addf(&m->b, " AND NOT EXISTS (SELECT 1 FROM"
				 " db%d.events o WHERE o.ukey = e.ukey AND"
				 " (o.count, o.ts_ns) %s (e.count, e.ts_ns) AND ",
				 j, j < k ? ">=" : ">");
			add_cluster(m, j, "events", "o");
			add(m, " = ");
			add_cluster(m, k, "events", "e");
			add(m, ")");
		}
}

/* Two arms per database, so that a read by incident goes from the
 * members of the merged incident to each file's events_incident index. */
static int build_events(struct merge *m)
{
	rt_buf_addf(&m->b, "CREATE TEMP VIEW events AS ");
	for (int k = 1; k <= m->n; k++) {
		rt_buf_addf(&m->b, "%sSELECT e.id * 100 + %d AS id,"
			 " r.mid AS incident_id", k > 1 ? " UNION ALL " : "",
			 k);
		add_cols(m, k, "events", "e", event_cols, COUNT(event_cols));
		rt_buf_addf(&m->b, " FROM temp.rt_members r JOIN db%d.events e"
			 " ON e.incident_id = r.id WHERE r.db = %d", k, k);
		events_best(m, k);
		rt_buf_addf(&m->b, " UNION ALL SELECT e.id * 100 + %d, NULL",
			    k);
		add_cols(m, k, "events", "e", event_cols, COUNT(event_cols));
		rt_buf_addf(&m->b, " FROM db%d.events e"
			 " WHERE e.incident_id IS NULL", k);
		events_best(m, k);
	}
	rt_buf_addf(&m->b, ";");
	return run(m, "events");
}

/* The objects of an incident, as the writer finds them: each event's
 * object and the ConfigMap/Secret its fields name. */
static int build_objects(struct merge *m)
{
	add(m, "CREATE TEMP TABLE rt_counts(mid INTEGER PRIMARY KEY,"
		 " n INTEGER, occ INTEGER);"
		 "INSERT INTO temp.rt_counts SELECT incident_id, count(*),"
		 " " SAT_SUM("count") " FROM temp.events"
		 " WHERE incident_id IS NOT NULL"
		 " GROUP BY 1;"
		 "CREATE TEMP TABLE incident_objects(incident_id INTEGER NOT"
		 " NULL, object_kind TEXT NOT NULL, object_name TEXT NOT NULL,"
		 " first_seen TEXT, last_seen TEXT,"
		 " events INTEGER NOT NULL DEFAULT 0, first_ns INTEGER,"
		 " last_ns INTEGER, PRIMARY KEY(incident_id, object_kind,"
		 " object_name)) WITHOUT ROWID;"
		 "INSERT INTO temp.incident_objects SELECT i, k, n,"
		 " " SQL_ISO("min(f)") ", " SQL_ISO("max(l)") ", count(*),"
		 " min(f), max(l) FROM ("
		 "SELECT incident_id AS i, coalesce(object_kind, '') AS k,"
		 " object_name AS n, first_ns AS f, ts_ns AS l FROM temp.events"
		 " WHERE incident_id IS NOT NULL AND object_name <> ''"
		 " UNION ALL SELECT incident_id, 'ConfigMap',"
		 " fields ->> '$.configmap', first_ns, ts_ns FROM temp.events"
		 " WHERE incident_id IS NOT NULL"
		 " AND fields ->> '$.configmap' <> ''"
		 " UNION ALL SELECT incident_id, 'Secret',"
		 " fields ->> '$.secret', first_ns, ts_ns FROM temp.events"
		 " WHERE incident_id IS NOT NULL AND fields ->> '$.secret' <> ''"
		 ") GROUP BY 1, 2, 3;");
	return run(m, "objects");
}

/* The lead's evidence with its pod count made the merged one, then the
 * other members' sentences it lacks. */
#define EVIDENCE \
	"(SELECT json_group_array(v) FROM (SELECT v FROM (" \
	"SELECT CASE WHEN " POD_SENTENCE("j.value") " THEN printf('%d pod%s" \
	" affected', " POD_COUNT ", CASE " POD_COUNT " WHEN 1 THEN '' ELSE" \
	" 's' END) ELSE j.value END AS v, printf('0%03d%020d%06d', 0, 0," \
	" j.key) AS o FROM json_each(l.evidence) j" \
	" UNION ALL SELECT j.value, printf('1%03d%020d%06d', x.db, x.id," \
	" j.key) FROM temp.rt_members x, json_each(x.evidence) j" \
	" WHERE x.mid = g.mid AND NOT x.lead" \
	" AND NOT " POD_SENTENCE("j.value") \
	") GROUP BY v ORDER BY min(o)))"
/* The merged incident's first pods (as the writer keeps them), and the
 * lead's remedy with the list of its pods made that list. */
#define PODS(SEL) "(SELECT " SEL " FROM (SELECT object_name FROM" \
	" temp.incident_objects o WHERE o.incident_id = g.mid" \
	" AND o.object_kind = 'Pod' ORDER BY first_ns, object_name LIMIT " \
	CORR_MAX_PODS_SQL "))"
#define REMEDY "CASE WHEN json_array_length(l.pods) > 1 THEN" \
	" replace(l.remedy, (SELECT group_concat(value, ' ') FROM" \
	" json_each(l.pods)), " PODS("group_concat(object_name, ' ')") ")" \
	" ELSE l.remedy END"
#define UNION_SORTED(COL) \
	"(SELECT json_group_array(value) FROM (SELECT DISTINCT j.value" \
	" FROM temp.rt_members x, json_each(x." COL ") j" \
	" WHERE x.mid = g.mid ORDER BY 1))"

static int build_incidents(struct merge *m)
{
	add(m, "CREATE TEMP TABLE incidents(id INTEGER PRIMARY KEY,"
		 " namespace TEXT NOT NULL, release TEXT NOT NULL,"
		 " revision INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL,"
		 " severity TEXT NOT NULL, opened_at TEXT NOT NULL,"
		 " last_seen_at TEXT NOT NULL, closed_at TEXT,"
		 " event_count INTEGER NOT NULL, occurrences INTEGER NOT NULL,"
		 " tags TEXT NOT NULL, diagnosis TEXT, title TEXT,"
		 " revision_status TEXT, later_revisions TEXT NOT NULL,"
		 " attribution TEXT, evidence TEXT NOT NULL, remedy TEXT,"
		 " pods TEXT NOT NULL, opened_ns INTEGER NOT NULL,"
		 " last_ns INTEGER NOT NULL, closed_ns INTEGER,"
		 " via INTEGER NOT NULL, pod_count INTEGER NOT NULL,"
		 " cluster TEXT NOT NULL);");
	add(m, "INSERT INTO temp.incidents SELECT g.mid,"
		 " l.namespace, l.release, l.revision,"
		 " CASE WHEN g.closed THEN 'closed' ELSE 'open' END,"
		 " g.severity, " SQL_ISO("g.opened_ns") ", "
		 SQL_ISO("g.last_ns") ", CASE WHEN g.closed THEN "
		 SQL_ISO("g.last_ns + " GAP) " END,"
		 " coalesce(c.n, 0), coalesce(c.occ, 0), "
		 UNION_SORTED("tags") ", l.diagnosis, l.title,"
		 " l.revision_status, " UNION_SORTED("later_revisions") ","
		 " l.attribution, " EVIDENCE ", " REMEDY ", "
		 PODS("json_group_array(object_name)") ", g.opened_ns, g.last_ns,"
		 " CASE WHEN g.closed THEN g.last_ns + " GAP " END, l.via, "
		 POD_COUNT ", l.cluster"
		 " FROM (SELECT mid, min(opened_ns) AS opened_ns,"
		 " max(last_ns) AS last_ns,"
		 " max(last_ns) + " GAP " < " WATERMARK " AS closed,"
		 " (SELECT severity FROM temp.rt_members s WHERE s.mid = r.mid"
		 " ORDER BY " SEV_RANK("s.severity") " DESC LIMIT 1)"
		 " AS severity FROM temp.rt_members r GROUP BY mid) g"
		 " JOIN temp.rt_members l ON l.mid = g.mid AND l.lead"
		 " LEFT JOIN temp.rt_counts c ON c.mid = g.mid;");
	return run(m, "incidents");
}

static int build_revisions(struct merge *m)
{
	rt_buf_addf(&m->b, "CREATE TEMP VIEW revisions AS ");
	for (int k = 1; k <= m->n; k++) {
		const char *sep = "";

		rt_buf_addf(&m->b, "%sSELECT ", k > 1 ? " UNION ALL " : "");
		for (size_t i = 0; i < COUNT(revision_cols); i++, sep = ", ")
			rt_buf_addf(&m->b, "%sr.%s AS %s", sep,
				    revision_cols[i], revision_cols[i]);
		/* manifest summaries since version 9 */
		add(m, has(m, k, "revisions", "manifest_summary") ?
		    ", r.manifest_summary AS manifest_summary, " :
		    ", NULL AS manifest_summary, ");
		add_cluster(m, k, "revisions", "r");
		/* lives since version 11: before, each revision had one */
		add(m, has(m, k, "revisions", "life") ?
		    " AS cluster, r.life AS life" : " AS cluster, 1 AS life");
		rt_buf_addf(&m->b, " FROM db%d.revisions r WHERE 1", k);
		for (int j = 1; j <= m->n; j++)
			if (j != k)
			{
				rt_buf_addf(&m->b, " AND NOT EXISTS (SELECT 1"
					 " FROM db%d.revisions o WHERE"
					 " o.namespace = r.namespace AND"
					 " o.release = r.release AND"
					 " o.revision = r.revision AND ", j);
				add(m, has(m, j, "revisions", "life") ?
				    "o.life" : "1");
				add(m, " = ");
				add(m, has(m, k, "revisions", "life") ?
				    "r.life AND " : "1 AND ");
				add_cluster(m, j, "revisions", "o");
				add(m, " = ");
				add_cluster(m, k, "revisions", "r");
				add(m, " AND ");
				add(m, STATUS_RANK("o.status"));
				add(m, j < k ? " >= " : " > ");
				add(m, STATUS_RANK("r.status") ")");
			}
	}
	rt_buf_addf(&m->b, ";");
	return run(m, "revisions");
}

/* The small tables: every database's rows (sources keeps each file's
 * positions; the others are sets). */
static int build_rest(struct merge *m)
{
	static const struct {
		const char *name, *cols, *glue;
		bool cluster;
	} t[] = {
		{ "sources", "path, partition, offset, updated_at",
		  " UNION ALL ", false },
		{ "release_keys", "namespace, release", " UNION ", true },
		{ "workload_releases", "namespace, workload, release_namespace,"
		  " release", " UNION ", true },
	};
	static const char none[] = "SELECT NULL AS namespace, NULL AS"
		" workload, NULL AS release_namespace, NULL AS release,"
		" NULL AS cluster WHERE 0";

	for (size_t i = 0; i < COUNT(t); i++) {
		const char *sep = "";

		rt_buf_addf(&m->b, "CREATE TEMP VIEW %s AS SELECT %s%s FROM (",
			 t[i].name, t[i].cols, t[i].cluster ? ", cluster" : "");
		for (int k = 1; k <= m->n; k++)
			if (has(m, k, t[i].name, NULL)) {
				rt_buf_addf(&m->b, "%sSELECT %s", sep,
					    t[i].cols);
				if (t[i].cluster) {
					add(m, ", ");
					add_cluster(m, k, t[i].name, t[i].name);
					add(m, " AS cluster");
				}
				rt_buf_addf(&m->b, " FROM db%d.%s", k,
					    t[i].name);
				sep = t[i].glue;
			}
		if (!*sep)      /* workload_releases: version 1 files only */
			rt_buf_addf(&m->b, "%s", none);
		rt_buf_addf(&m->b, ");");
	}
	add(m, "CREATE TEMP VIEW timeline AS" SQL_TIMELINE_SELECT_LIVES ";");
	return run(m, "views");
}

static int build(struct merge *m)
{
	int err;

	store_reader_watch(m->st);
	if ((err = build_meta(m)) || (err = build_members(m)) ||
	    (err = build_events(m)) || (err = build_objects(m)) ||
	    (err = build_incidents(m)) || (err = build_revisions(m)) ||
	    (err = build_rest(m)))
		return err;
	return 0;
}

int store_open_read_many(const char *const *paths, size_t n,
			 const struct store_read_opts *o, struct store **out,
			 char *err, size_t errlen)
{
	struct merge m = { 0 };
	int rc = 0;

	if (n == 1)
		return store_open_read(paths[0], o, out, err, errlen);
	*out = NULL;
	if (n == 0 || n > STORE_READ_MAX_DBS) {
		snprintf(err, errlen, "%zu databases: from 1 to %d can be read "
			 "together", n, STORE_READ_MAX_DBS);
		return RT_EINVAL;
	}
	m.st = calloc(1, sizeof(*m.st));
	m.n = (int)n;
	m.log = o ? o->log : NULL;
	if (!m.st || store_reader_new(m.st, o) ||
	    sqlite3_open_v2(":memory:", &m.st->db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_URI, NULL)) {
		snprintf(err, errlen, "out of memory");
		store_close(m.st);
		return RT_ENOMEM;
	}
	sqlite3_extended_result_codes(m.st->db, 1);
	sqlite3_busy_timeout(m.st->db, 10000);
	sqlite3_limit(m.st->db, SQLITE_LIMIT_ATTACHED, STORE_READ_MAX_DBS);
	for (size_t i = 0; i < n && !rc; i++)
		rc = attach(&m, paths[i], (int)i + 1, err, errlen);
	/* a file that cannot be read fails the build, which says why */
	if (!rc && !store_data_version(m.st, &m.st->open_version))
		m.st->open_version_set = true;
	if (!rc && (rc = build(&m)))
		snprintf(err, errlen, "merging the databases: %s",
			 m.st->errmsg);
	if (!rc && (rc = store_reader_harden(m.st)))
		snprintf(err, errlen, "%s", m.st->errmsg);
	rt_buf_release(&m.b);
	if (rc) {
		store_close(m.st);
		return rc;
	}
	*out = m.st;
	return 0;
}
