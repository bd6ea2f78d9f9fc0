/*
 * test_store_diag.c: what a diagnosis reads of an incident is bounded by
 * what it keeps (store_read_captures): an incident of many rows that
 * captured nothing (nginx 5xx lines, each its own row) and a few that
 * did costs a read of the few, however many the others are, and gives
 * the same captures and tag counts.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../store/store_int.h"
#include "db_path.h"
#include "tap.h"

#define SEC 1000000000LL
#define T0 (1730640000LL * SEC)
#define S(x) rt_str_make((x), strlen(x))


static struct plan_event event(uint64_t ukey, int64_t t, const char *pod,
			       const char *msg)
{
	struct plan_event e;

	memset(&e, 0, sizeof(e));
	e.ukey = ukey;
	e.first_ns = e.last_ns = t;
	e.count = 1;
	e.format = RT_FMT_CRI;
	e.severity = RT_SEV_ERROR;
	e.ns = S("prod");
	e.kind = e.attr.kind = S("Pod");
	e.name = e.attr.name = e.pod = S(pod);
	e.message = S(msg);
	e.attr.via = PLAN_VIA_LABEL;
	e.attr.release = S("web");
	e.attr.release_ns = S("prod");
	return e;
}

/* An incident of nbare rows without captures and one row (count 7) that
 * captured configmap=cfg; returns its id. */
static int64_t incident(struct store *st, int nbare)
{
	struct rt_field f = { .key = S("configmap"), .val = S("cfg") };
	struct plan_evstate x = { .tags = "[\"upstream\"]", .via = "label",
				  .cluster = true };
	struct plan_event e = event(1, T0, "web-1", "first");
	size_t idx = 0;
	struct plan_window w = {
		.ns = "prod", .rel = "web", .events = &idx, .nevents = 1,
	};
	int64_t id = 0;
	int err;

	w.agg.opened = w.agg.last = T0;
	w.agg.count = w.agg.occ = 1;
	w.agg.sev = RT_SEV_ERROR;
	w.agg.via = PLAN_VIA_LABEL;
	w.agg.via_name = "label";
	w.agg.tags = x.tags;
	if ((err = store_write_window(st, &e, &x, &w, &id)))
		return err;
	for (int i = 0; i < nbare && !err; i++) {
		e = event(100 + (uint64_t)i, T0 + i, i % 2 ? "web-1" : "web-2",
			  "502");
		err = store_write_event(st, &e, &x, id);
	}
	e = event(2, T0 + nbare, "web-3", "configmap \"cfg\" not found");
	e.count = 7;
	e.fields = &f;
	e.nfields = 1;
	x.tags = "[\"config_missing\",\"upstream\"]";
	return err ? err : (err = store_write_event(st, &e, &x, id)) ? err : id;
}

static void bounded(void)
{
	struct store *st = NULL;
	struct plan_incrow row = { .ns = "prod", .rel = "web" };
	char err[256];
	sqlite3_stmt *s;
	int64_t id = 0;
	int steps;

	fresh();
	if (!ok(store_open(path, 0, NULL, &st, err, sizeof(err)) == 0,
		"a writer opens"))
		return;
	ok(store_begin(st) == 0 && (id = incident(st, 5000)) > 0,
	   "an incident of 5000 rows without captures and one with");
	s = store_stmt(st, S_INC_CAPTURES);
	sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 1);
	ok(store_read_captures(st, id, &row) == 0, "its captures read");
	steps = sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 0);
	ok(steps < 2000, "the read of captures steps over the rows that "
	   "captured, not the others");
	if (steps >= 2000)
		printf("# %d steps\n", steps);
	for (size_t i = 0; i < row.ncaps; i++) {
		const struct corr_capture *c = &row.caps[i];

		if (c->field)
			ok(!strcmp(c->field, "configmap") &&
			   !strcmp(c->value, "cfg") && c->pods == 1 && c->times == 7,
			   "a capture of %s: field, value, pods, times", c->tag);
		else
			ok(strcmp(c->tag, "upstream") ? c->times == 7 && c->pods == 1 :
			   c->times == 4096 && c->pods == 2,
			   "the count of tag %s", c->tag);
	}
	/* the tag counts are of the first 4096 rows: the last is not */
	is_int(row.ncaps, 3, "captures under both tags, the first rows' tag");
	store_abort(st);
	store_close(st);
}

/* The tag counts as INC_TAG_COUNTS computes them, in its order. */
static size_t sql_tag_counts(struct store *st, int64_t id,
			     struct corr_capture *c, size_t max)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_TAG_COUNTS);
	size_t n = 0;

	sqlite3_bind_int64(s, 1, id);
	while (n < max && sqlite3_step(s) == SQLITE_ROW) {
		c[n].tag = strdup((const char *)sqlite3_column_text(s, 0));
		c[n].pods = sqlite3_column_int64(s, 1);
		c[n].times = sqlite3_column_int64(s, 2);
		n++;
	}
	sqlite3_reset(s);
	return n;
}

/* Rows of several tags, ties of counts, pods shared, rows without a
 * pod, rows without tags: the counts read are SQLite's, in its order. */
static void same_as_sql(void)
{
	static const char *const tagsets[] = {
		"[\"b\"]", "[\"a\",\"b\"]", "[\"c\"]", "[]",
		"[\"a\",\"c\",\"d\"]", "[\"e\"]", "[\"ee\",\"f\"]",
	};
	static const char *const pods[] = { "web-1", "web-2", "", "web-3" };
	struct store *st = NULL;
	struct plan_incrow row = { .ns = "prod", .rel = "web" };
	struct corr_capture want[64];
	char err[256];
	int64_t id = 0;
	size_t n, k = 0;
	bool same = true;

	fresh();
	if (!ok(store_open(path, 0, NULL, &st, err, sizeof(err)) == 0 &&
		store_begin(st) == 0 && (id = incident(st, 0)) > 0,
		"an incident"))
		return;
	for (int i = 0; i < 300; i++) {
		struct plan_evstate x = { .tags = tagsets[i % 7],
					  .via = "label", .cluster = true };
		struct plan_event e = event(1000 + (uint64_t)i, T0 + i,
					    pods[i % 4], "x");

		/* e, ee and f tie: each 3 rows of count 1 */
		if (i % 7 >= 5 && i >= 21)
			continue;
		e.count = i % 7 >= 5 ? 1 : 1 + i % 5;
		if (store_write_event(st, &e, &x, id))
			same = false;
	}
	ok(same, "300 rows of 7 tag sets written");
	n = sql_tag_counts(st, id, want, 64);
	ok(n == 9, "SQLite counts 9 tags (the incident's first two rows' too)");
	ok(store_read_captures(st, id, &row) == 0, "the captures read");
	for (size_t i = 0; i < row.ncaps; i++) {
		const struct corr_capture *c = &row.caps[i];

		if (c->field)
			continue;
		same = same && k < n && !strcmp(c->tag, want[k].tag) &&
		       c->pods == want[k].pods && c->times == want[k].times;
		if (k < n && (strcmp(c->tag, want[k].tag) ||
			      c->pods != want[k].pods ||
			      c->times != want[k].times))
			printf("# %zu: %s %lld %lld, SQLite %s %lld %lld\n", k,
			       c->tag, (long long)c->pods, (long long)c->times,
			       want[k].tag, (long long)want[k].pods,
			       (long long)want[k].times);
		k++;
	}
	ok(same && k == n, "each tag's pods and occurrences, in SQLite's "
	   "order, ties included");
	for (size_t i = 0; i < n; i++)
		free((char *)want[i].tag);
	store_abort(st);
	store_close(st);
}

/* A tag with an escape in its JSON (no rule names one so, but a file
 * may hold it): counted under its unescaped name, as SQLite reads it. */
static void escaped(void)
{
	struct store *st = NULL;
	struct plan_incrow row = { .ns = "prod", .rel = "web" };
	struct plan_evstate x = { .tags = "[\"a\\\\b\"]", .via = "label",
				  .cluster = true };
	struct plan_event e = event(5000, T0 + SEC, "web-9", "x");
	char err[256];
	int64_t id = 0;
	bool found = false;

	fresh();
	if (!ok(store_open(path, 0, NULL, &st, err, sizeof(err)) == 0 &&
		store_begin(st) == 0 && (id = incident(st, 0)) > 0 &&
		store_write_event(st, &e, &x, id) == 0,
		"an incident with a row tagged [\"a\\\\b\"]"))
		return;
	ok(store_read_captures(st, id, &row) == 0, "its captures read");
	for (size_t i = 0; i < row.ncaps; i++)
		if (!row.caps[i].field && !strcmp(row.caps[i].tag, "a\\b"))
			found = row.caps[i].times == 1 && row.caps[i].pods == 1;
	ok(found, "the tag counted as a\\b");
	store_abort(st);
	store_close(st);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/rt_store_diag_%d.db",
		 (int)getpid());
	bounded();
	same_as_sql();
	escaped();
	fresh();
	return done_testing();
}
