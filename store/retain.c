/*
 * retain.c: retention (--retain), a bounded share of the deletion in each
 * batch's transaction.
 *
 * What goes: an event outside any incident once its last sighting is older
 * than the horizon, and a closed incident once it was last seen before
 * the horizon, with every event and object of it. An event of an open or
 * a recent incident stays as long as its incident does, so an incident is
 * never left with part of its events: a recomputation from the events
 * (a new revision, a moved workload) gives the same incident back.
 * Revisions, workload mappings and source positions are never deleted:
 * they are small, and attribution and exactly-once need them.
 *
 * Deleting a little per commit keeps a commit's latency flat where one
 * big DELETE would stall the writer for as long as it took; SQLite reuses
 * the freed pages for new rows, so the file stops growing once deletion
 * keeps up with what comes in. The caller sizes the budget so it does.
 */
#include <stdlib.h>

#include "store_int.h"

static int64_t step_changes(struct store *st, sqlite3_stmt *s,
			    const char *what, int *err)
{
	*err = store_db_done(st, s, what);
	return *err ? 0 : sqlite3_changes64(st->db);
}

/* Events of no incident, oldest first. */
static int retain_orphans(struct store *st, int64_t horizon,
			  int64_t *budget, bool *more)
{
	sqlite3_stmt *s = store_stmt(st, S_RET_ORPHANS);
	int64_t n;
	int err;

	sqlite3_bind_int64(s, 1, horizon);
	sqlite3_bind_int64(s, 2, *budget);
	n = step_changes(st, s, "retention: events", &err);
	st->pending.events_expired += (uint64_t)n;
	if (n == *budget)
		*more = true;
	*budget -= n;
	return err;
}

/* One aged incident: its events (as many as the budget allows), then,
 * when none is left, its objects and itself. */
static int retain_incident(struct store *st, int64_t id, int64_t *budget,
			   bool *more)
{
	sqlite3_stmt *s = store_stmt(st, S_RET_INC_EVENTS);
	int64_t n;
	int err;

	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, *budget);
	n = step_changes(st, s, "retention: incident events", &err);
	if (err)
		return err;
	st->pending.events_expired += (uint64_t)n;
	*budget -= n;
	if (*budget <= 0) {
		*more = true;
		return 0;
	}
	s = store_stmt(st, S_RET_INC_OBJECTS);
	sqlite3_bind_int64(s, 1, id);
	if ((err = store_db_done(st, s, "retention: incident objects")))
		return err;
	s = store_stmt(st, S_RET_INC_DELETE);
	sqlite3_bind_int64(s, 1, id);
	n = step_changes(st, s, "retention: incidents", &err);
	st->pending.incidents_expired += (uint64_t)n;
	*budget -= 1;
	return err;
}

/* The ids are read before any is deleted: a statement that reads a table
 * while another deletes from it sees an undefined mix. */
#define RETAIN_INC_BATCH 64

static int retain_incidents(struct store *st, int64_t horizon,
			    int64_t *budget, bool *more)
{
	int64_t ids[RETAIN_INC_BATCH];
	sqlite3_stmt *s = store_stmt(st, S_RET_INCIDENTS);
	int n = 0, rc, err = 0;

	sqlite3_bind_int64(s, 1, horizon);
	sqlite3_bind_int64(s, 2, RETAIN_INC_BATCH);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		ids[n++] = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_db_fail(st, "retention: aged incidents");
	*more = n == RETAIN_INC_BATCH;
	for (int i = 0; i < n && !err; i++) {
		if (*budget <= 0) {
			*more = true;
			break;
		}
		err = retain_incident(st, ids[i], budget, more);
	}
	return err;
}

int store_retain(struct store *st, int64_t horizon_ns, int64_t budget,
		 bool *more)
{
	int err;

	*more = true;
	while (*more && budget > 0)
		if ((err = retain_incidents(st, horizon_ns, &budget, more)))
			return err;
	if (budget <= 0) {
		*more = true;
		return 0;
	}
	return retain_orphans(st, horizon_ns, &budget, more);
}

/* Where the stored data stands in time, for a writer that starts (or
 * prune) before any batch has told it: the median of the newest incident
 * openings, or of the newest events outside incidents, whichever is
 * later. Both are read from an index's end; a median, so a few rows from
 * a clock far ahead do not count. */
#define RETAIN_RECENT 21

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int recent_median(struct store *st, enum store_stmt id, int64_t *ns)
{
	int64_t t[RETAIN_RECENT];
	sqlite3_stmt *s = store_stmt(st, id);
	int n = 0, rc = SQLITE_DONE;

	*ns = 0;
	sqlite3_bind_int64(s, 1, RETAIN_RECENT);
	while (n < RETAIN_RECENT && (rc = sqlite3_step(s)) == SQLITE_ROW)
		t[n++] = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (n < RETAIN_RECENT && rc != SQLITE_DONE)
		return store_db_fail(st, "retention: recent times");
	if (n) {
		qsort(t, (size_t)n, sizeof(*t), cmp_i64);
		*ns = t[(n - 1) / 2];
	}
	return 0;
}

int store_recent_time(struct store *st, int64_t *ns)
{
	int64_t a, b;
	int err;

	if ((err = recent_median(st, S_RET_RECENT_INC, &a)) ||
	    (err = recent_median(st, S_RET_RECENT_EV, &b)))
		return err;
	*ns = a > b ? a : b;
	return 0;
}

int store_each_event_time(struct store *st, void (*fn)(void *, int64_t),
			  void *ctx)
{
	sqlite3_stmt *s = store_stmt(st, S_RET_TIMES);
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		fn(ctx, sqlite3_column_int64(s, 0));
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : store_db_fail(st, "retention: event times");
}
