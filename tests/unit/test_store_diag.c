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

/* A fresh database's writer in a transaction holding incident(st, 0):
 * the store, its id in *id; NULL when a step failed. */
static struct store *open_incident(int64_t *id)
{
	struct store *st = NULL;
	char err[256];

	fresh();
	*id = 0;
	if (store_open(path, 0, NULL, &st, err, sizeof(err)) == 0 &&
	    store_begin(st) == 0 && (*id = incident(st, 0)) > 0)
		return st;
	printf("# %s\n", st ? store_errmsg(st) : err);
	store_close(st);
	return NULL;
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
	s = store_stmt(st, S_INC_CAPTURE_ROWS);
	sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 1);
	ok(store_read_captures(st, id, &row) == 0, "its captures read");
	steps = sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 0);
	ok(steps > 0 && steps < 2000, "the read of captures steps over the "
	   "rows that captured, not the others");
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

/* What SQLite's statement computes, in its order: INC_CAPTURES (tag,
 * field, value, pods, times) when withfield, else INC_TAG_COUNTS (tag,
 * pods, times), as store_read_captures gives them. */
static size_t sql_caps(struct store *st, int64_t id, bool withfield,
		       struct corr_capture *c, size_t max)
{
	sqlite3_stmt *s = store_stmt(st, withfield ? S_INC_CAPTURES :
				     S_INC_TAG_COUNTS);
	int k = withfield ? 3 : 1;
	size_t n = 0;

	sqlite3_bind_int64(s, 1, id);
	while (n < max && sqlite3_step(s) == SQLITE_ROW) {
		memset(&c[n], 0, sizeof(c[n]));
		c[n].tag = strdup((const char *)sqlite3_column_text(s, 0));
		if (withfield) {
			c[n].field = strdup((const char *)
					    sqlite3_column_text(s, 1));
			c[n].value = strdup((const char *)
					    sqlite3_column_text(s, 2));
		}
		c[n].pods = sqlite3_column_int64(s, k);
		c[n].times = sqlite3_column_int64(s, k + 1);
		n++;
	}
	sqlite3_reset(s);
	return n;
}

static void free_caps(struct corr_capture *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)c[i].tag);
		free((char *)c[i].field);
		free((char *)c[i].value);
	}
}

static bool nullsame(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static void print_cap(const char *who, const struct corr_capture *c)
{
	printf("%s%s %s=%s %lld %lld", who, c->tag, c->field ? c->field : "-",
	       c->value ? c->value : "-", (long long)c->pods,
	       (long long)c->times);
}

/* The row's captures of one kind (with a field, or tag counts) against
 * SQLite's, in order; prints the first difference. */
static bool caps_match(const struct plan_incrow *row, bool withfield,
		       const struct corr_capture *want, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < row->ncaps; i++) {
		const struct corr_capture *c = &row->caps[i];

		if (!c->field != !withfield)
			continue;
		if (k >= n || strcmp(c->tag, want[k].tag) ||
		    !nullsame(c->field, want[k].field) ||
		    !nullsame(c->value, want[k].value) ||
		    c->pods != want[k].pods || c->times != want[k].times) {
			printf("# %zu: ", k);
			print_cap("", c);
			if (k < n)
				print_cap(", SQLite ", &want[k]);
			printf("\n");
			return false;
		}
		k++;
	}
	if (k != n)
		printf("# %zu read, SQLite %zu\n", k, n);
	return k == n;
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
	int64_t id = 0;
	size_t n;
	bool same = true;

	if (!ok((st = open_incident(&id)) != NULL, "an incident"))
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
	n = sql_caps(st, id, false, want, 64);
	ok(n == 9, "SQLite counts 9 tags (the incident's first two rows' too)");
	ok(store_read_captures(st, id, &row) == 0, "the captures read");
	ok(caps_match(&row, false, want, n), "each tag's pods and "
	   "occurrences, in SQLite's order, ties included");
	free_caps(want, n);
	store_abort(st);
	store_close(st);
}

/* A row (count count) capturing field=value: the captures read are
 * SQLite's, the value first by count, as SQLite reads it. */
static void escaped_value(struct store *st, int64_t id, uint64_t ukey,
			  const char *field, const char *value, int64_t count)
{
	struct plan_incrow row = { .ns = "prod", .rel = "web" };
	struct plan_evstate x = { .tags = "[\"a\"]", .via = "label",
				  .cluster = true };
	struct plan_event e = event(ukey, T0 + 700, "web-4", "x");
	struct rt_field f = { S(field), S(value) };
	struct corr_capture want[64];
	size_t n;

	e.fields = &f;
	e.nfields = 1;
	e.count = count;
	ok(store_write_event(st, &e, &x, id) == 0, "a row capturing %s=%s",
	   field, value);
	n = sql_caps(st, id, true, want, 64);
	ok(store_read_captures(st, id, &row) == 0 &&
	   caps_match(&row, true, want, n) && n && row.caps[0].field &&
	   !strcmp(row.caps[0].value, value),
	   "%s is read as SQLite reads it, first by count", value);
	free_caps(want, n);
}

/* Rows of several tags and captured fields (and fields no capture
 * names), one value under two tags at the same count, pods shared and
 * none, more groups than the 48 kept, and then a row whose JSON has an
 * escape: the captures read are SQLite's, in its order, ties included. */
static void captures_same_as_sql(void)
{
	static const char *const tagsets[] = {
		"[\"b\"]", "[\"a\",\"b\"]", "[\"c\"]", "[]",
		"[\"a\",\"c\",\"d\"]", "[\"e\"]",
	};
	static const char *const pods[] = { "web-1", "web-2", "", "web-3" };
	struct store *st = NULL;
	struct plan_incrow row = { .ns = "prod", .rel = "web" };
	struct corr_capture want[64];
	char val[3][32];
	int64_t id = 0;
	size_t n;
	bool same = true;

	if (!ok((st = open_incident(&id)) != NULL, "an incident"))
		return;
	for (int i = 0; i < 600 && same; i++) {
		struct plan_evstate x = { .tags = tagsets[i % 6],
					  .via = "label", .cluster = true };
		struct plan_event e = event(2000 + (uint64_t)i, T0 + i,
					    pods[i % 4], "x");
		struct rt_field f[5];

		snprintf(val[0], sizeof(val[0]), "cfg-%d", i % 70);
		snprintf(val[1], sizeof(val[1]), "/etc/%d", i % 3);
		snprintf(val[2], sizeof(val[2]), "img:%d", i % 2);
		f[0] = (struct rt_field){ S("configmap"), S(val[0]) };
		f[1] = (struct rt_field){ S("path"), S(val[1]) };
		f[2] = (struct rt_field){ S("code"), S("502") };
		f[3] = (struct rt_field){ S("image"), S(val[2]) };
		f[4] = (struct rt_field){ S("container"), S("web") };
		e.fields = &f[i / 6 % 3];
		e.nfields = 1 + (unsigned)(i / 6 % 3);
		e.count = 1 + i % 4;
		same = store_write_event(st, &e, &x, id) == 0;
	}
	ok(same, "600 rows of 6 tag sets and 3 field sets written");
	n = sql_caps(st, id, true, want, 64);
	if (!ok(n == 48, "SQLite keeps 48 captures of more"))
		printf("# %zu\n", n);
	ok(store_read_captures(st, id, &row) == 0 &&
	   caps_match(&row, true, want, n),
	   "each capture's pods and occurrences, in SQLite's order, ties "
	   "included");
	free_caps(want, n);

	/* a value with a backslash, then one with a quote: their JSON has
	 * escapes */
	escaped_value(st, id, 9000, "path", "C:\\web", 100000);
	escaped_value(st, id, 9001, "configmap", "say \"hi\"", 200000);
	store_abort(st);
	store_close(st);
}

/* The captures read equal SQLite's, both kinds. */
static bool read_as_sql(struct store *st, int64_t id)
{
	struct plan_incrow row = { .ns = "prod", .rel = "web" };
	bool same = store_read_captures(st, id, &row) == 0;

	for (int k = 0; k < 2; k++) {
		struct corr_capture want[64];
		size_t n = sql_caps(st, id, k == 0, want, 64);

		same = same && caps_match(&row, k == 0, want, n);
		free_caps(want, n);
	}
	return same;
}

/* Steps of INC_CAPTURE_ROWS in a read of the incident's captures. */
static int capture_steps(struct store *st, int64_t id)
{
	struct plan_incrow row = { .ns = "prod", .rel = "web" };
	sqlite3_stmt *s = store_stmt(st, S_INC_CAPTURE_ROWS);

	sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 1);
	store_read_captures(st, id, &row);
	return sqlite3_stmt_status(s, SQLITE_STMTSTATUS_VM_STEP, 0);
}

/* An incident past the 4096 rows a diagnosis reads: the second read is
 * kept from the first, a later row does not enter it, and an early row
 * updated, or a rollback, is read again. */
static void cached(void)
{
	struct store *st = NULL;
	struct rt_field f = { S("configmap"), S("cfg") };
	struct plan_evstate x = { .tags = "[\"a\"]", .via = "label",
				  .cluster = true };
	char sql[160];
	int64_t id = 0;
	bool same = true;

	if (!ok((st = open_incident(&id)) != NULL, "an incident"))
		return;
	for (int i = 0; i < 4200 && same; i++) {
		struct plan_event e = event(3000 + (uint64_t)i, T0 + i,
					    i % 3 ? "web-1" : "web-2", "x");

		e.fields = &f;
		e.nfields = 1;
		same = store_write_event(st, &e, &x, id) == 0;
	}
	ok(same && store_end(st, NULL) == 0 && store_begin(st) == 0,
	   "4200 more rows committed");
	ok(read_as_sql(st, id), "the first read is SQLite's");
	is_int(capture_steps(st, id), 0, "the second read is kept");
	{
		struct plan_event e = event(9999, T0 + 9999, "web-9", "x");

		e.fields = &f;
		e.nfields = 1;
		e.count = 1000000;
		ok(store_write_event(st, &e, &x, id) == 0 &&
		   read_as_sql(st, id) && capture_steps(st, id) == 0,
		   "a later row (count 1000000) leaves it as SQLite reads it");
	}
	snprintf(sql, sizeof(sql), "UPDATE events SET count = 5000000 WHERE"
		 " id = (SELECT min(id) FROM events WHERE incident_id = %lld)",
		 (long long)id);
	ok(sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK &&
	   read_as_sql(st, id), "after an update of its first row, the read "
	   "is SQLite's");
	store_abort(st);
	ok(store_begin(st) == 0 && read_as_sql(st, id),
	   "after the update is rolled back, the read is SQLite's");
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
	int64_t id = 0;
	bool found = false;

	if (!ok((st = open_incident(&id)) != NULL &&
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
	captures_same_as_sql();
	cached();
	escaped();
	fresh();
	return done_testing();
}
