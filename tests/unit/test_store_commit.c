/*
 * test_store_commit.c: store/commit.c's contracts as its head comment and
 * revtrail/store.h state them: one batch, one transaction (committed
 * writes stay, rolled-back ones and their counters vanish); an event
 * written is read back by its identity, and an identity never written or
 * rolled back reads as not found; a window opens an incident or extends
 * its target, folding merged incidents' events into it; store_read_near
 * finds exactly the incidents overlapping [lo, hi]; store_close_windows
 * closes what is quiet for longer than the gap. And the store belongs to
 * the thread inside its transaction: another thread using it aborts where
 * asserts are on.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/store.h"
#include "assert_child.h"
#include "db_path.h"
#include "tap.h"

#define SEC 1000000000LL
#define MIN (60 * SEC)
#define T0 (1730640000LL * SEC)
#define S(x) rt_str_make((x), strlen(x))


static struct store *open_store(void)
{
	struct store *st = NULL;
	char err[256];

	if (store_open(path, 0, NULL, &st, err, sizeof(err)))
		printf("# open: %s\n", err);
	return st;
}

/* One integer of a query on a second connection (what another reader
 * of the file sees), or -1. */
static int64_t count_of(const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	int64_t v = -1;

	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(h);
	return v;
}

static struct plan_event event(uint64_t ukey, int64_t t, const char *msg)
{
	struct plan_event e;

	memset(&e, 0, sizeof(e));
	e.ukey = ukey;
	e.first_ns = e.last_ns = t;
	e.count = 1;
	e.format = RT_FMT_K8S_EVENT;
	e.severity = RT_SEV_ERROR;
	e.ns = S("prod");
	e.kind = e.attr.kind = S("Pod");
	e.name = e.attr.name = e.pod = S("web-1");
	e.reason = S("BackOff");
	e.type = S("Warning");
	e.message = S(msg);
	e.ntags = 1;
	e.tags[0] = "crashloop";
	e.attr.via = PLAN_VIA_LABEL;
	e.attr.release = S("web");
	e.attr.release_ns = S("prod");
	return e;
}

static const struct plan_evstate new_state = {
	.tags = "[\"crashloop\"]", .via = "label", .cluster = true,
};

static int write_one(struct store *st, uint64_t ukey, int64_t t,
		     const char *msg)
{
	struct plan_event e = event(ukey, t, msg);

	return store_write_event(st, &e, &new_state, 0);
}

static void transactions(void)
{
	struct store *st = open_store();
	struct store_stats stats = { 0 };
	struct plan_stored got;

	if (!ok(st != NULL, "a writer opens"))
		return;
	ok(store_begin(st) == 0 && write_one(st, 1, T0, "one") == 0,
	   "an event written inside a transaction");
	is_int(count_of("SELECT count(*) FROM events"), 0,
	   "another connection sees nothing before store_end");
	ok(store_end(st, &stats) == 0, "store_end commits");
	is_int(count_of("SELECT count(*) FROM events"), 1,
	       "another connection sees it after");
	is_int(stats.batches, 1, "one batch counted");
	is_int(stats.events_new, 1, "one new event counted");

	ok(store_begin(st) == 0 && write_one(st, 2, T0 + SEC, "two") == 0,
	   "a second event written");
	ok(store_read_event(st, 2, &got) == 0 && got.found,
	   "the transaction reads its own write");
	store_abort(st);
	is_int(count_of("SELECT count(*) FROM events"), 1,
	       "store_abort drops the write");
	ok(store_begin(st) == 0, "a transaction after an abort");
	ok(store_read_event(st, 2, &got) == 0 && !got.found,
	   "a rolled-back identity reads as not found");
	ok(store_read_event(st, 1, &got) == 0 && got.found,
	   "the committed one is found");
	ok(store_end(st, &stats) == 0, "an empty transaction commits");
	is_int(stats.events_new, 1, "the rolled-back event was not counted");
	is_int(stats.batches, 2, "nor its batch");
	store_close(st);

	st = open_store();
	if (!ok(st != NULL, "the writer opens again"))
		return;
	ok(store_begin(st) == 0, "begin");
	ok(store_read_event(st, 1, &got) == 0 && got.found && got.count == 1 &&
	   got.first_ns == T0 && got.last_ns == T0 && got.id > 0,
	   "a later run reads the event back: identity, times, count");
	is_rts(got.message, "one", "and its text");
	ok(store_read_event(st, 3, &got) == 0 && !got.found,
	   "an identity never written is not found");
	store_abort(st);
	store_close(st);
}

/* A window of events ev[0..n) to target (0: a new incident). */
static int window(struct store *st, struct plan_event *ev, size_t n,
		  int64_t target, const int64_t *merged, size_t nmerged,
		  int64_t *id)
{
	struct plan_evstate xs[4];
	size_t idx[4];
	struct plan_window w = {
		.ns = "prod", .rel = "web", .target = target,
		.merged = merged, .nmerged = nmerged,
		.events = idx, .nevents = n,
	};

	w.agg.opened = ev[0].first_ns;
	w.agg.last = ev[n - 1].last_ns;
	w.agg.count = (int64_t)n;
	w.agg.occ = (int64_t)n;
	w.agg.sev = RT_SEV_ERROR;
	w.agg.via = PLAN_VIA_LABEL;
	w.agg.via_name = "label";
	w.agg.tags = "[\"crashloop\"]";
	for (size_t i = 0; i < n; i++) {
		xs[i] = new_state;
		idx[i] = i;
	}
	return store_write_window(st, ev, xs, &w, id);
}

static void windows(void)
{
	struct store *st;
	struct plan_event a[1] = { event(10, T0, "a") };
	struct plan_event b[1] = { event(11, T0 + 60 * MIN, "b") };
	struct plan_event c[1] = { event(12, T0 + 30 * MIN, "c") };
	const struct plan_near *near;
	int64_t ia = 0, ib = 0, ic = 0, merged[1];
	size_t n = 9;
	char sql[128];

	fresh();
	if (!ok((st = open_store()) != NULL, "a fresh writer"))
		return;
	ok(store_begin(st) == 0 && window(st, a, 1, 0, NULL, 0, &ia) == 0 &&
	   window(st, b, 1, 0, NULL, 0, &ib) == 0, "two windows written");
	ok(ia > 0 && ib > 0 && ia != ib, "each opened an incident of its own");
	ok(store_read_near(st, S("prod"), S("web"), T0 + 50 * MIN,
			   T0 + 70 * MIN, NULL, 0, &near, &n) == 0 && n == 1 &&
	   near[0].id == ib, "near [50m, 70m]: the second only");
	ok(store_read_near(st, S("prod"), S("web"), T0 - MIN, T0 + 70 * MIN,
			   NULL, 0, &near, &n) == 0 && n == 2,
	   "near [-1m, 70m]: both");
	ok(store_read_near(st, S("prod"), S("web"), T0 + 10 * MIN,
			   T0 + 20 * MIN, &ia, 1, &near, &n) == 0 && n == 1 &&
	   near[0].id == ia, "near a gap between them: none but one named");
	ok(store_read_near(st, S("prod"), S("api"), T0 - MIN, T0 + 70 * MIN,
			   NULL, 0, &near, &n) == 0 && n == 0,
	   "another release's range holds none of them");
	/* c bridges a and b: the window extends a and folds b into it. */
	merged[0] = ib;
	ok(window(st, c, 1, ia, merged, 1, &ic) == 0 && ic == ia,
	   "a window extends its target");
	ok(store_end(st, NULL) == 0, "committed");
	is_int(count_of("SELECT count(*) FROM incidents"), 1,
	       "the merged incident is gone");
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE "
		 "incident_id = %lld", (long long)ia);
	is_int(count_of(sql), 3, "its event and the new one joined the target");
	snprintf(sql, sizeof(sql), "SELECT last_ns FROM incidents WHERE id = "
		 "%lld", (long long)ia);
	is_int(count_of(sql), T0 + 30 * MIN, "the target's aggregates are "
	       "the window's");

	/* Closing: quiet for longer than the gap (15m) before the mark. */
	ok(store_begin(st) == 0 && store_close_windows(st, T0 + 45 * MIN) == 0
	   && store_end(st, NULL) == 0, "close at last + 15m");
	is_int(count_of("SELECT count(*) FROM incidents WHERE status = "
			"'closed'"), 0, "a gap of exactly 15m keeps it open");
	ok(store_begin(st) == 0 &&
	   store_close_windows(st, T0 + 45 * MIN + 1) == 0 &&
	   store_end(st, NULL) == 0, "close a nanosecond later");
	is_int(count_of("SELECT count(*) FROM incidents WHERE status = "
			"'closed'"), 1, "closed once quiet for longer");
	ok(store_begin(st) == 0 && store_close_windows(st, T0) == 0 &&
	   store_end(st, NULL) == 0, "a mark back in time");
	is_int(store_watermark(st), T0 + 45 * MIN + 1,
	       "never lowers the watermark");
	store_close(st);
}

/* ---- one thread in a transaction ------------------------------------ */

struct owner {
	struct store *st;
	int rc;
};

static void *write_from_thread(void *arg)
{
	struct owner *o = arg;

	o->rc = write_one(o->st, 99, T0, "from another thread");
	return NULL;
}

/* Begins on this thread, then writes from another one. */
static void second_thread(void *ctx)
{
	struct owner o = { open_store(), 0 };
	pthread_t t;

	(void)ctx;
	if (!o.st || store_begin(o.st))
		_exit(2);
	pthread_create(&t, NULL, write_from_thread, &o);
	pthread_join(t, NULL);
	_exit(o.rc ? 3 : 0);
}

/* The hand-off pipeline/writer.c makes: the other thread begins, writes
 * and ends, then this one uses the store again. */
static void *txn_on_thread(void *arg)
{
	struct owner *o = arg;

	o->rc = store_begin(o->st) || write_one(o->st, 98, T0, "w") ||
		store_end(o->st, NULL);
	return NULL;
}

static void handed_over(void *ctx)
{
	struct owner o = { open_store(), 0 };
	pthread_t t;

	(void)ctx;
	if (!o.st)
		_exit(2);
	pthread_create(&t, NULL, txn_on_thread, &o);
	pthread_join(t, NULL);
	if (o.rc || store_begin(o.st) || write_one(o.st, 97, T0, "m") ||
	    store_end(o.st, NULL))
		_exit(3);
	store_close(o.st);
}

static void ownership(void)
{
	fresh();
	dies_of_assert(second_thread, NULL, "store_owned(st)",
		       "a store written from a second thread mid-transaction");
	fresh();
	lives(handed_over, NULL, "a store handed over between transactions");
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/rt_store_commit_%d.db",
		 (int)getpid());
	fresh();
	transactions();
	windows();
	ownership();
	fresh();
	return done_testing();
}
