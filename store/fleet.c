/*
 * fleet.c: the fleet database (revtrail/store_fleet.h): the incidents
 * topic of many instances folded into fleet_parts, one row per key with
 * its latest value, and the incidents table recomputed from the parts.
 *
 * A put marks the (cluster, namespace, release, revision) the key had and
 * has in temp.fleet_dirty; the fold deletes those releases' incidents and
 * makes them again from their parts in window order: a part that opens
 * within the gap after the island's last sighting joins it, the rule that
 * splits incidents in one database and merges them across databases read
 * as one (store/merge.c). So the fleet database is a function of the
 * latest value of each key, whatever order or how often they arrive.
 *
 * A merged incident's id is its first part's id (fleet_parts.id, given
 * when the key first arrived and kept while it lives), so it stays while
 * that part does. Its counts are the parts' sums (instances hold distinct
 * events but for a rebalance's overlap), its window spans them, its tags,
 * evidence, pods and later revisions are unions, its severity the worst;
 * diagnosis, title, remedy, attribution and revision status are those of
 * the part with the most events, as the merged read takes them. Open
 * while any part is.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/store_fleet.h"
#include "store_int.h"

static const char fleet_temp[] =
	"CREATE TEMP TABLE IF NOT EXISTS fleet_dirty(cluster TEXT NOT NULL,"
	" namespace TEXT NOT NULL, release TEXT NOT NULL,"
	" revision INTEGER NOT NULL,"
	" PRIMARY KEY(cluster, namespace, release, revision)) WITHOUT ROWID;";

#define DIRTY_OF_KEY \
	"INSERT OR IGNORE INTO temp.fleet_dirty SELECT cluster, namespace," \
	" release, revision FROM fleet_parts WHERE key = ?1"

/* What a value must hold to be an incident's part. */
#define IS_PART(V) \
	" json_valid(" V ") AND json_type(" V ") = 'object'" \
	" AND json_type(" V ", '$.namespace') = 'text'" \
	" AND json_type(" V ", '$.release') = 'text'" \
	" AND json_type(" V ", '$.revision') = 'integer'" \
	" AND json_type(" V ", '$.opened_ns') = 'integer'" \
	" AND json_type(" V ", '$.last_ns') = 'integer'" \
	" AND coalesce(json_type(" V ", '$.cluster'), 'text') = 'text'"

static const char part_put[] =
	"INSERT INTO fleet_parts(key, instance, cluster, namespace, release,"
	" revision, opened_ns, last_ns, fields)"
	" SELECT ?1, ?2, coalesce(json_extract(?3, '$.cluster'), ''),"
	" json_extract(?3, '$.namespace'), json_extract(?3, '$.release'),"
	" json_extract(?3, '$.revision'), json_extract(?3, '$.opened_ns'),"
	" json_extract(?3, '$.last_ns'), json(?3) WHERE" IS_PART("?3")
	" ON CONFLICT(key) DO UPDATE SET cluster = excluded.cluster,"
	" namespace = excluded.namespace, release = excluded.release,"
	" revision = excluded.revision, opened_ns = excluded.opened_ns,"
	" last_ns = excluded.last_ns, fields = excluded.fields";

static const char incident_put[] =
	"INSERT INTO incidents(id, cluster, namespace, release, revision,"
	" status, severity, opened_at, last_seen_at, closed_at, closed_ns,"
	" event_count, occurrences, tags, diagnosis, title, revision_status,"
	" later_revisions, attribution, evidence, remedy, pods, pod_count,"
	" opened_ns, last_ns)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
	" ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)";

int store_fleet_init(struct store *st)
{
	if (sqlite3_exec(st->db, fleet_temp, NULL, NULL, NULL))
		return store_db_fail(st, "the fleet's scratch table");
	return 0;
}

/* Runs sql with ?1 = key (and ?2, ?3 when given): changes, or RT_EDB. */
static int run_key(struct store *st, const char *sql, const char *key,
		   size_t klen, const char *inst, size_t ilen,
		   const char *value, size_t vlen)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store_db_fail(st, "folding the incidents topic");
	sqlite3_bind_text(s, 1, key, (int)klen, SQLITE_STATIC);
	if (inst)
		sqlite3_bind_text(s, 2, inst, (int)ilen, SQLITE_STATIC);
	if (value)
		sqlite3_bind_text(s, 3, value, (int)vlen, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_db_fail(st, "folding the incidents topic");
	return sqlite3_changes(st->db);
}

/* The INSTANCE of CLUSTER/NAMESPACE/RELEASE/INSTANCE/ID: the field before
 * the last; "" for a key of the older four-field form. */
static void key_instance(const char *key, size_t klen, const char **inst,
			 size_t *ilen)
{
	size_t end = klen, slashes = 0;

	*inst = "", *ilen = 0;
	for (size_t i = 0; i < klen; i++)
		slashes += key[i] == '/';
	while (end > 0 && key[end - 1] != '/')
		end--;
	if (slashes < 4 || end < 2)
		return;
	for (size_t b = end - 1; b > 0; b--)
		if (key[b - 1] == '/') {
			*inst = key + b, *ilen = end - 1 - b;
			return;
		}
}

int store_fleet_put(struct store *st, const char *key, size_t klen,
		    const char *value, size_t vlen)
{
	const char *inst;
	size_t ilen;
	int rc;

	if (!key || !klen || klen > 1024 || memchr(key, '\0', klen) ||
	    vlen > STORE_FLEET_MAX_VALUE ||
	    (value && memchr(value, '\0', vlen)))
		return 1;
	/* The release the key had, whether it changes or goes. */
	if ((rc = run_key(st, DIRTY_OF_KEY, key, klen, NULL, 0, NULL, 0)) < 0)
		return rc;
	if (!value || !vlen) {
		rc = run_key(st, "DELETE FROM fleet_parts WHERE key = ?1", key,
			     klen, NULL, 0, NULL, 0);
		return rc < 0 ? rc : 0;
	}
	key_instance(key, klen, &inst, &ilen);
	if ((rc = run_key(st, part_put, key, klen, inst, ilen, value,
			  vlen)) <= 0)
		return rc < 0 ? rc : 1;
	rc = run_key(st, DIRTY_OF_KEY, key, klen, NULL, 0, NULL, 0);
	return rc < 0 ? rc : 0;
}

/* ---- the fold -------------------------------------------------------- */

/* One merged incident, made of the parts of one island. */
struct island {
	int64_t id;                     /* its first part's */
	cJSON *best;                    /* the part with the most events */
	int64_t best_events;
	int64_t opened_ns, last_ns, events, occurrences, pod_count;
	char *opened_at, *last_seen_at, *closed_at;
	int severity;
	bool open;
	cJSON *lists[4];                /* unions, as list_names */
	int64_t *parts;                 /* fleet_parts ids */
	size_t nparts, cap;
};

static const char *const list_names[4] = {
	"tags", "later_revisions", "evidence", "pods",
};

static void island_release(struct island *is)
{
	cJSON_Delete(is->best);
	free(is->opened_at);
	free(is->last_seen_at);
	free(is->closed_at);
	for (int i = 0; i < 4; i++)
		cJSON_Delete(is->lists[i]);
	free(is->parts);
	memset(is, 0, sizeof(*is));
}

static const char *str_of(const cJSON *o, const char *name)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, name));

	return v ? v : "";
}

static int64_t int_of(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItem(o, name);

	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

/* Replaces *dst by a copy of src when keep says so. */
static int take(char **dst, const char *src, bool keep)
{
	char *p;

	if (!keep)
		return 0;
	if (!(p = strdup(src)))
		return RT_ENOMEM;
	free(*dst);
	*dst = p;
	return 0;
}

/* Adds the entries of from that to lacks, up to the bound. */
static int list_union(cJSON **to, const cJSON *from)
{
	const cJSON *e;

	if (!*to && !(*to = cJSON_CreateArray()))
		return RT_ENOMEM;
	cJSON_ArrayForEach(e, from) {
		const cJSON *have;
		bool found = false;
		cJSON *copy;

		if (cJSON_GetArraySize(*to) >= STORE_FLEET_MAX_LIST)
			break;
		cJSON_ArrayForEach(have, *to)
			if ((found = cJSON_Compare(have, e, true)))
				break;
		if (found)
			continue;
		if (!(copy = cJSON_Duplicate(e, true)))
			return RT_ENOMEM;
		cJSON_AddItemToArray(*to, copy);
	}
	return 0;
}

/* Part part of window [o, l] (from the row: a double holds no _ns). */
static int island_add(struct island *is, int64_t part, int64_t o, int64_t l,
		      const cJSON *v)
{
	int64_t events = int_of(v, "event_count");
	const char *sev = str_of(v, "severity");
	int rank = rt_severity_from_name(sev, strlen(sev)), err;
	bool first = !is->nparts;

	if (RT_GROW(is->parts, is->nparts + 1, is->cap))
		return RT_ENOMEM;
	is->parts[is->nparts++] = part;
	if (first || part < is->id)
		is->id = part;
	if ((err = take(&is->opened_at, str_of(v, "opened_at"),
			first || o < is->opened_ns)) ||
	    (err = take(&is->last_seen_at, str_of(v, "last_seen_at"),
			first || l > is->last_ns)))
		return err;
	if (first || o < is->opened_ns)
		is->opened_ns = o;
	if (first || l > is->last_ns)
		is->last_ns = l;
	if (strcmp(str_of(v, "status"), "closed"))
		is->open = true;
	else if ((err = take(&is->closed_at, str_of(v, "closed_at"),
			     !is->closed_at || strcmp(str_of(v, "closed_at"),
						      is->closed_at) > 0)))
		return err;
	is->events += events;
	is->occurrences += int_of(v, "occurrences");
	if (int_of(v, "pod_count") > is->pod_count)
		is->pod_count = int_of(v, "pod_count");
	if (first || rank > is->severity)
		is->severity = rank;
	for (int i = 0; i < 4; i++)
		if ((err = list_union(&is->lists[i],
				      cJSON_GetObjectItem(v, list_names[i]))))
			return err;
	if (!first && events <= is->best_events)
		return 0;
	cJSON_Delete(is->best);
	is->best_events = events;
	return (is->best = cJSON_Duplicate(v, true)) ? 0 : RT_ENOMEM;
}

static void bind_list(sqlite3_stmt *s, int i, const cJSON *list)
{
	char *p = cJSON_PrintUnformatted(list);

	if (p)
		sqlite3_bind_text(s, i, p, -1, free);
	else
		sqlite3_bind_text(s, i, "[]", -1, SQLITE_STATIC);
}

/* A text field of the best part, or NULL when it has none. */
static void bind_best(sqlite3_stmt *s, int i, const struct island *is,
		      const char *name)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(is->best,
								  name));

	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
}

static int island_write(struct store *st, const struct island *is,
			const char *const key[3], int64_t revision)
{
	sqlite3_stmt *s;
	int64_t closed_ns = 0, pods = cJSON_GetArraySize(is->lists[3]);
	const char *sev = rt_severity_name((enum rt_severity)is->severity);

	if (sqlite3_prepare_v2(st->db, incident_put, -1, &s, NULL))
		return store_db_fail(st, "writing a fleet incident");
	sqlite3_bind_int64(s, 1, is->id);
	for (int i = 0; i < 3; i++)
		sqlite3_bind_text(s, 2 + i, key[i], -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, revision);
	sqlite3_bind_text(s, 6, is->open ? "open" : "closed", -1,
			  SQLITE_STATIC);
	sqlite3_bind_text(s, 7, is->severity >= 0 ? sev : "info", -1,
			  SQLITE_STATIC);
	sqlite3_bind_text(s, 8, is->opened_at, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 9, is->last_seen_at, -1, SQLITE_STATIC);
	if (!is->open && is->closed_at &&
	    !rt_time_parse(is->closed_at, strlen(is->closed_at), &closed_ns)) {
		sqlite3_bind_text(s, 10, is->closed_at, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 11, closed_ns);
	}
	sqlite3_bind_int64(s, 12, is->events);
	sqlite3_bind_int64(s, 13, is->occurrences);
	bind_list(s, 14, is->lists[0]);
	bind_best(s, 15, is, "diagnosis");
	bind_best(s, 16, is, "title");
	bind_best(s, 17, is, "revision_status");
	bind_list(s, 18, is->lists[1]);
	bind_best(s, 19, is, "attribution");
	bind_list(s, 20, is->lists[2]);
	bind_best(s, 21, is, "remedy");
	bind_list(s, 22, is->lists[3]);
	sqlite3_bind_int64(s, 23, pods > is->pod_count ? pods : is->pod_count);
	sqlite3_bind_int64(s, 24, is->opened_ns);
	sqlite3_bind_int64(s, 25, is->last_ns);
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_finalize(s);
		return store_db_fail(st, "writing a fleet incident");
	}
	sqlite3_finalize(s);
	return 0;
}

/* Writes the island and names it in its parts' rows. */
static int island_end(struct store *st, struct island *is,
		      const char *const key[3], int64_t revision)
{
	sqlite3_stmt *s;
	int err = 0;

	if (!is->nparts)
		return 0;
	if ((err = island_write(st, is, key, revision)))
		goto out;
	if (sqlite3_prepare_v2(st->db, "UPDATE fleet_parts SET incident_id ="
			       " ?1 WHERE id = ?2", -1, &s, NULL)) {
		err = store_db_fail(st, "writing a fleet incident");
		goto out;
	}
	sqlite3_bind_int64(s, 1, is->id);
	for (size_t i = 0; i < is->nparts && !err; i++) {
		sqlite3_bind_int64(s, 2, is->parts[i]);
		if (sqlite3_step(s) != SQLITE_DONE)
			err = store_db_fail(st, "writing a fleet incident");
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
out:
	island_release(is);
	return err;
}

/* The parts of one release and revision, in window order, into islands. */
static int fold_release(struct store *st, const char *const key[3],
			int64_t revision, uint64_t *written)
{
	struct island is = { 0 };
	sqlite3_stmt *s;
	int rc, err = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT id, fields, opened_ns, last_ns"
			       " FROM fleet_parts WHERE cluster = ?1 AND"
			       " namespace = ?2 AND release = ?3 AND"
			       " revision = ?4 ORDER BY opened_ns, id", -1, &s,
			       NULL))
		return store_db_fail(st, "folding the incidents topic");
	for (int i = 0; i < 3; i++)
		sqlite3_bind_text(s, 1 + i, key[i], -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, revision);
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		cJSON *v = cJSON_Parse((const char *)sqlite3_column_text(s, 1));

		if (!v) {
			err = RT_ENOMEM;    /* stored by json(): it parses */
			break;
		}
		if (is.nparts &&
		    sqlite3_column_int64(s, 2) > is.last_ns + st->gap_ns) {
			(*written)++;
			err = island_end(st, &is, key, revision);
		}
		if (!err)
			err = island_add(&is, sqlite3_column_int64(s, 0),
					 sqlite3_column_int64(s, 2),
					 sqlite3_column_int64(s, 3), v);
		cJSON_Delete(v);
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "folding the incidents topic");
	sqlite3_finalize(s);
	if (!err && is.nparts) {
		(*written)++;
		err = island_end(st, &is, key, revision);
	}
	island_release(&is);
	return err;
}

/* Deletes a release's incidents and makes them again from its parts. */
static int refold(struct store *st, const char *const key[3],
		  int64_t revision, uint64_t *written)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "DELETE FROM incidents WHERE"
			       " cluster = ?1 AND namespace = ?2 AND"
			       " release = ?3 AND revision = ?4", -1, &s, NULL))
		return store_db_fail(st, "folding the incidents topic");
	for (int i = 0; i < 3; i++)
		sqlite3_bind_text(s, 1 + i, key[i], -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, revision);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_db_fail(st, "folding the incidents topic");
	return fold_release(st, key, revision, written);
}

int store_fleet_fold(struct store *st, uint64_t *incidents)
{
	uint64_t written = 0;
	sqlite3_stmt *s;
	int rc, err = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT cluster, namespace, release,"
			       " revision FROM temp.fleet_dirty", -1, &s, NULL))
		return store_db_fail(st, "folding the incidents topic");
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *key[3];

		for (int i = 0; i < 3; i++)
			key[i] = (const char *)sqlite3_column_text(s, i);
		err = refold(st, key, sqlite3_column_int64(s, 3), &written);
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "folding the incidents topic");
	sqlite3_finalize(s);
	if (!err && sqlite3_exec(st->db, "DELETE FROM temp.fleet_dirty", NULL,
				 NULL, NULL))
		err = store_db_fail(st, "folding the incidents topic");
	if (!err && incidents)
		*incidents += written;
	return err;
}

/* ---- reading --------------------------------------------------------- */

int store_fleet_parts(struct store *st, int64_t id, store_row_fn fn,
		      void *ctx)
{
	static const char *const names[] = {
		"instance", "incident", "status", "opened_at", "last_seen_at",
		"event_count",
	};
	struct store_value v[6];
	sqlite3_stmt *s;
	int rc, err = 0;

	/* Not a fleet database (or several read as one): no parts. */
	if (sqlite3_prepare_v2(st->db, "SELECT instance,"
			       " replace(key, rtrim(key, replace(key, '/', '')),"
			       " ''), json_extract(fields, '$.status'),"
			       " json_extract(fields, '$.opened_at'),"
			       " json_extract(fields, '$.last_seen_at'),"
			       " json_extract(fields, '$.event_count')"
			       " FROM main.fleet_parts WHERE incident_id = ?1"
			       " ORDER BY opened_ns, id", -1, &s, NULL))
		return 0;
	sqlite3_bind_int64(s, 1, id);
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < 6; i++) {
			const char *t = (const char *)sqlite3_column_text(s, i);

			v[i] = (struct store_value){ .type = t ? STORE_TEXT :
						     STORE_NULL, .p = t };
			if (i == 5) {
				v[i].type = STORE_INT;
				v[i].i = sqlite3_column_int64(s, i);
			}
		}
		err = fn(ctx, 6, names, v);
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "reading the fleet's parts");
	sqlite3_finalize(s);
	return err;
}
