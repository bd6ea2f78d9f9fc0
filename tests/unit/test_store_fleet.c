/*
 * test_store_fleet.c: store/fleet.c's contract as its head comment states
 * it: each key of the incidents topic is one part holding its latest
 * value; parts of one release and revision whose windows overlap or lie
 * within the gap are one incident (sums, unions, the worst severity, the
 * busiest part's diagnosis, open while any part is), with the earliest
 * part's id; a tombstone removes a part; a moved revision leaves its old
 * incident; a refused message changes nothing; a rolled-back batch leaves
 * nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/store.h"
#include "revtrail/store_fleet.h"
#include "db_path.h"
#include "tap.h"

#define SEC ((int64_t)1000000000)
#define MIN (60 * SEC)
#define T0 ((int64_t)1730642400 * SEC)

static struct store *st;

struct part {
	int64_t rev, opened, last, events;
	const char *status, *sev, *diag, *tag, *pod;
};

/* The value consume --incidents-topic produces, trimmed to what counts. */
static char *value(const struct part *p)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf), "{\"id\":1,\"namespace\":\"shop\","
		 "\"release\":\"web\",\"revision\":%" PRId64 ",\"status\":\"%s\","
		 "\"severity\":\"%s\",\"opened_at\":\"o%" PRId64 "\","
		 "\"last_seen_at\":\"l%" PRId64 "\",\"closed_at\":%s,"
		 "\"event_count\":%" PRId64 ",\"occurrences\":%" PRId64 ","
		 "\"tags\":[\"%s\"],\"diagnosis\":\"%s\",\"title\":\"t-%s\","
		 "\"later_revisions\":[],\"evidence\":[\"e-%s\"],"
		 "\"remedy\":\"r-%s\",\"pods\":[\"%s\"],\"opened_ns\":%" PRId64
		 ",\"last_ns\":%" PRId64 ",\"cluster\":\"\",\"pod_count\":1}",
		 p->rev, p->status, p->sev, (p->opened - T0) / MIN,
		 (p->last - T0) / MIN, strcmp(p->status, "closed") ? "null" :
		 "\"2024-11-03T15:00:00.000000Z\"", p->events, p->events * 2,
		 p->tag, p->diag, p->diag, p->diag, p->diag, p->pod, p->opened,
		 p->last);
	return buf;
}

/* One batch: the puts (value NULL: a tombstone), then the fold. */
static int batch(const char *const *keys, const char *const *vals, size_t n)
{
	int rc = store_begin(st);

	for (size_t i = 0; i < n && !rc; i++)
		rc = store_fleet_put(st, keys[i], strlen(keys[i]), vals[i],
				     vals[i] ? strlen(vals[i]) : 0);
	if (!rc)
		rc = store_fleet_fold(st, NULL);
	if (rc) {
		store_abort(st);
		return rc;
	}
	return store_end(st, NULL);
}

static int put1(const char *key, const char *val)
{
	return batch(&key, &val, 1);
}

/* The answer of one query as "a|b;c|d" (rows by ';', columns by '|'). */
static int on_row(void *ctx, int n, const char *const *names,
		  const struct store_value *v)
{
	char *out = ctx;
	size_t len = strlen(out);

	(void)names;
	if (len)
		out[len++] = ';';
	for (int i = 0; i < n; i++) {
		char cell[256];

		if (v[i].type == STORE_INT)
			snprintf(cell, sizeof(cell), "%" PRId64, v[i].i);
		else
			snprintf(cell, sizeof(cell), "%s", v[i].type ==
				 STORE_TEXT ? v[i].p : "NULL");
		len += (size_t)snprintf(out + len, 4096 - len, "%s%s",
					i ? "|" : "", cell);
	}
	return 0;
}

static const char *q(const char *sql)
{
	static char out[4096];
	char err[RT_ERRLEN];
	struct store *rd;

	out[0] = '\0';
	if (store_open_read(path, NULL, &rd, err, sizeof(err))) {
		snprintf(out, sizeof(out), "%s", err);
		return out;
	}
	if (store_query(rd, sql, NULL, on_row, out, err, sizeof(err)))
		snprintf(out, sizeof(out), "%s", err);
	store_close(rd);
	return out;
}

#define INCIDENTS "SELECT id, revision, status, severity, opened_at," \
	" last_seen_at, event_count, occurrences, tags, diagnosis, evidence," \
	" pods, pod_count, opened_ns = %" PRId64 ", last_ns FROM incidents" \
	" ORDER BY opened_ns"

static const char *incidents(void)
{
	static char sql[512];

	snprintf(sql, sizeof(sql), INCIDENTS, T0);
	return q(sql);
}

static void test_merge(void)
{
	const struct part a = { 0, T0, T0 + 5 * MIN, 4, "open", "warning",
				"crash", "x", "p1" };
	const struct part b = { 0, T0 + 10 * MIN, T0 + 12 * MIN, 6, "closed",
				"error", "oom", "y", "p2" };
	const struct part c = { 0, T0 + 180 * MIN, T0 + 181 * MIN, 1, "open",
				"info", "late", "x", "p3" };
	char va[2048], vb[2048];
	const char *keys[] = { "/shop/web/aaaa/1", "/shop/web/bbbb/1" };
	const char *vals[] = { va, vb };

	snprintf(va, sizeof(va), "%s", value(&a));
	snprintf(vb, sizeof(vb), "%s", value(&b));
	is_int(batch(keys, vals, 2), 0, "two instances' parts of web, 5 min "
	       "apart, in one batch");
	is_str(incidents(), "1|0|open|error|o0|l12|10|20|[\"x\",\"y\"]|oom|"
	       "[\"e-crash\",\"e-oom\"]|[\"p1\",\"p2\"]|2|1|" "1730643120000000000",
	       "one incident: the earliest part's id, open as one part is, the "
	       "worst severity, the window spanned, counts summed, unions, the "
	       "busiest part's diagnosis");
	is_str(q("SELECT key, instance, incident_id FROM fleet_parts ORDER BY id"),
	       "/shop/web/aaaa/1|aaaa|1;/shop/web/bbbb/1|bbbb|1",
	       "each key is a part, named by its instance, in incident 1");
	is_int(put1("/shop/web/cccc/7", value(&c)), 0, "a part 3 h later");
	is_str(q("SELECT id, event_count FROM incidents ORDER BY id"),
	       "1|10;3|1", "is an incident of its own, with its part's id");
}

static void test_latest_and_tombstone(void)
{
	const struct part a2 = { 0, T0, T0 + 30 * MIN, 9, "open", "warning",
				 "crash", "x", "p1" };

	is_int(put1("/shop/web/aaaa/1", value(&a2)), 0, "a newer value of a key");
	is_str(q("SELECT id, last_seen_at, event_count FROM incidents ORDER BY id"),
	       "1|l30|15;3|l181|1", "replaces its part: the latest value wins, the id stays");
	is_int(put1("/shop/web/aaaa/1", NULL), 0, "a tombstone of the first part");
	is_str(q("SELECT id, opened_at, event_count, diagnosis FROM incidents"
		 " ORDER BY id"), "2|o10|6|oom;3|o180|1|late",
	       "removes it: the incident is the other part's, under its id");
	is_str(q("SELECT count(*) FROM fleet_parts"), "2", "two parts left");
	is_int(put1("/shop/web/zzzz/9", NULL), 0, "a tombstone of a key never seen");
	is_str(q("SELECT count(*) FROM incidents"), "2", "changes nothing");
}

static void test_revision_moves(void)
{
	const struct part c2 = { 2, T0 + 180 * MIN, T0 + 181 * MIN, 1, "open",
				 "info", "late", "x", "p3" };

	is_int(put1("/shop/web/cccc/7", value(&c2)), 0, "a part re-attributed "
	       "to revision 2");
	is_str(q("SELECT id, revision FROM incidents ORDER BY id"), "2|0;3|2",
	       "leaves revision 0's incidents and joins revision 2's");
}

static void test_refused(void)
{
	static const char nul_key[] = "/shop/web/a\0b/1";
	const char *before = NULL;
	char keep[4096];
	uint64_t n = 0;
	int rc;

	before = incidents();
	snprintf(keep, sizeof(keep), "%s", before);
	ok(store_begin(st) == 0, "a batch of bad messages");
	is_int(store_fleet_put(st, "/shop/web/bbbb/1", 16, "not json", 8), 1,
	       "a value that is not JSON is refused");
	is_int(store_fleet_put(st, "/shop/web/bbbb/1", 16, "[1]", 3), 1,
	       "an array is refused");
	is_int(store_fleet_put(st, "/shop/web/bbbb/1", 16,
			       "{\"namespace\":\"shop\",\"revision\":0}", 33), 1,
	       "an object without release and window is refused");
	is_int(store_fleet_put(st, nul_key, sizeof(nul_key) - 1, "{}", 2), 1,
	       "a key with a NUL is refused");
	is_int(store_fleet_put(st, "", 0, "{}", 2), 1, "an empty key is refused");
	rc = store_fleet_fold(st, &n);
	is_int(rc, 0, "the fold after them");
	/* A refused message still names the release its key held: that
	 * release's one incident is written again, as it was. */
	is_int((long long)n, 1, "which rewrote the key's release's incident");
	is_int(store_end(st, NULL), 0, "commits");
	is_str(incidents(), keep, "and the parts and incidents are as they were");
}

static void test_rollback(void)
{
	const struct part d = { 0, T0 + 600 * MIN, T0 + 601 * MIN, 1, "open",
				"info", "d", "x", "p4" };
	const char *v = value(&d);
	uint64_t n = 0;

	ok(store_begin(st) == 0, "a batch");
	is_int(store_fleet_put(st, "/shop/web/dddd/1", 16, v, strlen(v)), 0,
	       "a new part");
	is_int(store_fleet_fold(st, &n), 0, "folded");
	is_int((long long)n, 2, "two incidents recomputed: the release's "
	       "and the new part's, hours later");
	store_abort(st);
	is_str(q("SELECT count(*) FROM incidents"), "2", "rolled back: no incident");
	is_str(q("SELECT count(*) FROM fleet_parts"), "2", "and no part");
	/* The scratch table went with the transaction: the next batch
	 * folds only what it touched. */
	is_int(put1("/shop/web/bbbb/1", NULL), 0, "the next batch");
	is_str(q("SELECT id FROM incidents"), "3", "folds its own release only");
}

static int on_part(void *ctx, int n, const char *const *names,
		   const struct store_value *v)
{
	return on_row(ctx, n, names, v);
}

static void test_parts_read(void)
{
	char out[4096] = "", err[RT_ERRLEN];
	struct store *rd;

	ok(store_open_read(path, NULL, &rd, err, sizeof(err)) == 0, "a reader");
	is_int(store_fleet_parts(rd, 3, on_part, out), 0, "reads incident 3's parts");
	is_str(out, "cccc|7|open|o180|l181|1", "instance, its incident id, "
	       "state, window, events");
	out[0] = '\0';
	is_int(store_fleet_parts(rd, 99, on_part, out), 0, "an unknown id");
	is_str(out, "", "has none");
	store_close(rd);
}

int main(void)
{
	char err[RT_ERRLEN] = "";

	snprintf(path, sizeof(path), "/tmp/rt_test_fleet_%d.db", (int)getpid());
	fresh();
	if (!ok(store_open(path, 0, NULL, &st, err, sizeof(err)) == 0,
		"a fleet database %s", err) ||
	    !ok(store_fleet_init(st) == 0, "its scratch table"))
		return done_testing();
	test_merge();
	test_latest_and_tombstone();
	test_revision_moves();
	test_refused();
	test_rollback();
	store_close(st);
	test_parts_read();
	fresh();
	return done_testing();
}
