/*
 * commit.c: one batch, one transaction, and the event path's SQL.
 *
 * The store decides nothing here: it reads the stored row of an event's
 * identity and the incidents near a group of events (plan.h's context
 * rows), and writes what the correlator planned -- events with their
 * incident, incident aggregates, merges of incidents, object deltas.
 * pipeline/ runs the turns between them inside store_begin/store_end.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* ---- context -------------------------------------------------------- */

static struct rt_str keep_col(struct store *st, sqlite3_stmt *s, int i)
{
	const char *t = store_col_text(s, i);
	size_t n = strlen(t);

	return n ? rt_str_make(store_scratch_dup(st, t, n), n) : RT_STR_NULL;
}

static const char *keep_text(struct store *st, sqlite3_stmt *s, int i)
{
	const char *t = store_col_text(s, i);

	return store_scratch_dup(st, t, strlen(t));
}

static int stored_row(struct store *st, sqlite3_stmt *s, struct plan_stored *o)
{
	const char *sev = store_col_text(s, 6);

	o->found = true;
	o->id = sqlite3_column_int64(s, 0);
	o->inc = sqlite3_column_int64(s, 1);
	o->first_ns = sqlite3_column_int64(s, 2);
	o->last_ns = sqlite3_column_int64(s, 3);
	o->count = sqlite3_column_int64(s, 4);
	o->tags = keep_text(st, s, 5);
	o->sev = rt_severity_from_name(sev, strlen(sev));
	o->via = sqlite3_column_int(s, 7);
	o->rel_ns = keep_text(st, s, 8);
	o->rel = keep_text(st, s, 9);
	o->message = keep_col(st, s, 10);
	o->reason = keep_col(st, s, 11);
	o->kind = keep_col(st, s, 12);
	o->name = keep_col(st, s, 13);
	o->pod = keep_col(st, s, 14);
	o->container = keep_col(st, s, 15);
	o->type = keep_col(st, s, 16);
	if ((o->times_bytes = (size_t)sqlite3_column_bytes(s, 17)) &&
	    !(o->times = store_scratch_dup(st, (const char *)sqlite3_column_blob(s, 17),
				     o->times_bytes)))
		return RT_ENOMEM;
	if (!o->tags || !o->rel_ns || !o->rel ||
	    (sqlite3_column_bytes(s, 10) && !o->message.p) ||
	    (sqlite3_column_bytes(s, 13) && !o->name.p))
		return RT_ENOMEM;
	return 0;
}

int store_read_event(struct store *st, uint64_t ukey, struct plan_stored *out)
{
	sqlite3_stmt *s;
	bool maybe;
	int rc, err;

	memset(out, 0, sizeof(*out));
	if ((err = store_seen_check(st, ukey, &maybe)) || !maybe)
		return err;
	s = store_stmt(st, S_EV_LOOKUP);
	sqlite3_bind_int64(s, 1, (int64_t)ukey);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = stored_row(st, s, out);
	else if (rc != SQLITE_DONE)
		err = store_db_fail(st, "event lookup");
	sqlite3_reset(s);
	return err;
}

static int near_add_row(struct store *st, sqlite3_stmt *s)
{
	struct plan_near *p;
	const char *sev = store_col_text(s, 5);

	for (size_t i = 0; i < st->nnear; i++)
		if (st->near[i].id == sqlite3_column_int64(s, 0))
			return 0;
	if (RT_GROW(st->near, st->nnear + 1, st->nearcap))
		return RT_ENOMEM;
	p = &st->near[st->nnear++];
	p->id = sqlite3_column_int64(s, 0);
	p->opened = sqlite3_column_int64(s, 1);
	p->last = sqlite3_column_int64(s, 2);
	p->count = sqlite3_column_int64(s, 3);
	p->occ = sqlite3_column_int64(s, 4);
	p->sev = rt_severity_from_name(sev, strlen(sev));
	p->via = sqlite3_column_int(s, 7);
	p->tags = keep_text(st, s, 6);
	p->cls = sqlite3_column_int(s, 8);
	return p->tags ? 0 : RT_ENOMEM;
}

static int near_query(struct store *st, sqlite3_stmt *s)
{
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW)
		err = near_add_row(st, s);
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "incident lookup");
	sqlite3_reset(s);
	return err;
}

static bool near_has(const struct store *st, int64_t id)
{
	for (size_t i = 0; i < st->nnear; i++)
		if (st->near[i].id == id)
			return true;
	return false;
}

int store_read_near(struct store *st, struct rt_str ns, struct rt_str rel,
		    int64_t lo, int64_t hi, const int64_t *incs, size_t nincs,
		    const struct plan_near **out, size_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_NEAR);
	int err;

	st->nnear = 0;
	store_bind_rts(s, 1, ns);
	if (!ns.n)
		sqlite3_bind_text(s, 1, "", 0, SQLITE_STATIC);
	store_bind_rts(s, 2, rel);
	sqlite3_bind_int64(s, 3, lo);
	sqlite3_bind_int64(s, 4, hi);
	if ((err = near_query(st, s)))
		return err;
	/* An event's own incident is always near it; be robust anyway. */
	for (size_t i = 0; i < nincs; i++) {
		if (near_has(st, incs[i]))
			continue;
		s = store_stmt(st, S_INC_BY_ID);
		sqlite3_bind_int64(s, 1, incs[i]);
		if ((err = near_query(st, s)))
			return err;
	}
	*out = st->near;
	*n = st->nnear;
	return 0;
}

/* ---- events --------------------------------------------------------- */

static const char *fields_json(struct store *st, const struct plan_event *e)
{
	struct rt_buf *b = &st->buf2;

	rt_buf_reset(b);
	rt_buf_addc(b, '{');
	for (unsigned i = 0; i < e->nfields; i++) {
		unsigned j;

		/* two rules may capture the same name: first one wins */
		for (j = 0; j < i; j++)
			if (e->fields[j].key.n == e->fields[i].key.n &&
			    !memcmp(e->fields[j].key.p, e->fields[i].key.p,
				    e->fields[i].key.n))
				break;
		if (j < i)
			continue;
		if (b->n > 1)
			rt_buf_addc(b, ',');
		store_buf_json_str(b, e->fields[i].key.p, e->fields[i].key.n);
		rt_buf_addc(b, ':');
		store_buf_json_str(b, e->fields[i].val.p, e->fields[i].val.n);
	}
	rt_buf_addc(b, '}');
	return store_buf_str(b);
}

static void bind_incident(sqlite3_stmt *s, int i, int64_t id)
{
	if (id)
		sqlite3_bind_int64(s, i, id);
	else
		sqlite3_bind_null(s, i);
}

/* "source:offset" into buf (size bytes), as snprintf("%s:%llu") gives
 * it, and its length (-1: count it). Written by hand: snprintf was a
 * tenth of what binding an event's 26 values cost. */
static int origin_text(char *buf, size_t size, const char *source,
		       uint64_t offset)
{
	size_t n = strlen(source);

	if (n + 1 + RT_U64_DIGITS >= size) {
		snprintf(buf, size, "%s:%llu", source,
			 (unsigned long long)offset);
		return -1;
	}
	memcpy(buf, source, n);
	buf[n++] = ':';
	n += rt_u64_dec(buf + n, offset);
	buf[n] = '\0';
	return (int)n;
}

/* A repeat's times (NULL for any other row). */
static void bind_times(sqlite3_stmt *s, int i, const struct plan_evstate *x)
{
	if (x->times)
		sqlite3_bind_blob(s, i, x->times, (int)x->times_bytes,
				  SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

static int insert_event(struct store *st, const struct plan_event *e,
			const struct plan_evstate *x, int64_t incident)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_INSERT);
	char origin[1024], last[RT_TIME_BUFSZ], first[RT_TIME_BUFSZ];
	const char *fields = fields_json(st, e);

	if (!fields)
		return RT_ENOMEM;
	bind_incident(s, 1, incident);
	store_bind_iso(s, 2, e->last_ns, last);
	store_bind_iso(s, 3, e->first_ns, first);
	store_bind_rts(s, 4, e->ns);
	store_bind_rts(s, 5, e->attr.kind);
	store_bind_rts(s, 6, e->attr.name);
	store_bind_rts(s, 7, e->pod);
	store_bind_rts(s, 8, e->container);
	store_bind_rts(s, 9, e->reason);
	store_bind_rts(s, 10, e->type);
	store_bind_rts(s, 11, e->message);
	sqlite3_bind_text(s, 12, x->tags, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 13, fields, -1, SQLITE_STATIC);
	if (e->severity != RT_SEV_NONE)
		sqlite3_bind_text(s, 14, rt_severity_name(e->severity), -1,
				  SQLITE_STATIC);
	if (e->attr.via != PLAN_VIA_NONE) {
		store_bind_rts(s, 15, e->attr.release);
		sqlite3_bind_text(s, 16, e->attr.release_ns.p ?
				  e->attr.release_ns.p : "",
				  (int)e->attr.release_ns.n, SQLITE_STATIC);
		sqlite3_bind_text(s, 17, x->via, -1, SQLITE_STATIC);
	}
	sqlite3_bind_int(s, 18, e->revision);
	sqlite3_bind_text(s, 19, rt_format_name(e->format), -1, SQLITE_STATIC);
	if (e->source)
		sqlite3_bind_text(s, 20, origin, origin_text(origin,
				  sizeof(origin), e->source, e->offset),
				  SQLITE_STATIC);
	sqlite3_bind_int64(s, 21, e->count);
	sqlite3_bind_int64(s, 22, (int64_t)e->ukey);
	sqlite3_bind_int64(s, 23, e->first_ns);
	sqlite3_bind_int64(s, 24, e->last_ns);
	sqlite3_bind_int(s, 25, e->attr.via);
	store_bind_rts(s, 26, x->workload);
	bind_times(s, 27, x);
	st->pending.events_new++;
	if (e->ntags && (e->attr.via == PLAN_VIA_NONE || !e->attr.release.n))
		st->pending.events_no_release++;
	store_seen_add(&st->seen, e->ukey);
	return store_db_done(st, s, "event insert");
}

static void bind_update(sqlite3_stmt *s, const struct plan_event *e,
			const struct plan_evstate *x, int64_t incident,
			const char *fields, char last[RT_TIME_BUFSZ],
			char first[RT_TIME_BUFSZ])
{
	bind_incident(s, 1, incident);
	store_bind_iso(s, 2, e->last_ns, last);
	store_bind_iso(s, 3, e->first_ns, first);
	sqlite3_bind_int64(s, 4, e->count);
	sqlite3_bind_text(s, 5, x->tags, -1, SQLITE_STATIC);
	if (e->severity != RT_SEV_NONE)
		sqlite3_bind_text(s, 6, rt_severity_name(e->severity), -1,
				  SQLITE_STATIC);
	if (e->attr.via != PLAN_VIA_NONE) {
		store_bind_rts(s, 7, e->attr.release);
		sqlite3_bind_text(s, 8, e->attr.release_ns.p ?
				  e->attr.release_ns.p : "",
				  (int)e->attr.release_ns.n, SQLITE_STATIC);
		sqlite3_bind_text(s, 9, x->via, -1, SQLITE_STATIC);
	}
	sqlite3_bind_int(s, 10, e->attr.via);
	sqlite3_bind_int(s, 11, e->revision);
	sqlite3_bind_int64(s, 12, e->first_ns);
	sqlite3_bind_int64(s, 13, e->last_ns);
	sqlite3_bind_int(s, 14, x->newer);
	if (x->newer) {       /* this batch's version is the greater */
		store_bind_rts(s, 15, e->message);
		store_bind_rts(s, 16, e->reason);
		store_bind_rts(s, 17, e->attr.kind);
		store_bind_rts(s, 18, e->attr.name);
		store_bind_rts(s, 19, e->pod);
		store_bind_rts(s, 20, e->container);
		store_bind_rts(s, 21, e->type);
		sqlite3_bind_text(s, 22, fields, -1, SQLITE_STATIC);
		store_bind_rts(s, 23, x->workload);
	}
	sqlite3_bind_int64(s, 24, x->id);
	bind_times(s, 25, x);
}

/*
 * An Event seen again (a higher count, a later time) mostly keeps its
 * incident, release, attribution, first time and workload, the columns
 * its index entries hold. The first statement writes the rest, and only
 * where the row already holds those keys as the full update would write
 * them (so a row another statement of this commit moved, or a key that
 * changes, falls through to the full update). On 60k updated Events the
 * full update's index rewrites were most of its cost.
 */
static int update_event(struct store *st, const struct plan_event *e,
			const struct plan_evstate *x, int64_t incident)
{
	static const enum store_stmt seq[] = {
		S_EV_UPDATE_UNKEYED, S_EV_UPDATE
	};
	char last[RT_TIME_BUFSZ], first[RT_TIME_BUFSZ];
	const char *fields = x->newer ? fields_json(st, e) : NULL;
	int err;

	if (x->newer && !fields)
		return RT_ENOMEM;
	st->pending.events_updated++;
	for (size_t k = 0; k < 2; k++) {
		sqlite3_stmt *s = store_stmt(st, seq[k]);

		bind_update(s, e, x, incident, fields, last, first);
		if ((err = store_db_done(st, s, "event update")))
			return err;
		if (sqlite3_changes(st->db) > 0)
			break;
	}
	return 0;
}

int store_write_event(struct store *st, const struct plan_event *e,
		      const struct plan_evstate *x, int64_t incident)
{
	return x->id ? update_event(st, e, x, incident) :
		insert_event(st, e, x, incident);
}

int store_key_add(struct store *st, struct rt_str ns, struct rt_str rel)
{
	sqlite3_stmt *s = store_stmt(st, S_KEY_ADD);

	sqlite3_bind_text(s, 1, ns.p ? ns.p : "", (int)ns.n, SQLITE_STATIC);
	store_bind_rts(s, 2, rel);
	return store_db_done(st, s, "release key");
}

/* ---- incidents ------------------------------------------------------ */

/* Folds incident m into target: its events, objects, then the row. */
static int merge_away(struct store *st, int64_t target, int64_t m)
{
	static const enum store_stmt seq[] = {
		S_EV_MOVE, S_OBJ_MOVE, S_OBJ_DELETE, S_INC_DELETE,
	};

	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		sqlite3_stmt *s = store_stmt(st, seq[i]);
		int err;

		if (seq[i] == S_OBJ_DELETE || seq[i] == S_INC_DELETE) {
			sqlite3_bind_int64(s, 1, m);
		} else {
			sqlite3_bind_int64(s, 1, target);
			sqlite3_bind_int64(s, 2, m);
		}
		if ((err = store_db_done(st, s, "incident merge")))
			return err;
	}
	st->pending.incidents_merged++;
	return 0;
}

int store_incident_write_agg(struct store *st, const char *ns, const char *rel,
		       int64_t *id, const struct plan_agg *a)
{
	char opened[RT_TIME_BUFSZ], last[RT_TIME_BUFSZ];
	sqlite3_stmt *s;
	int err;

	if (!*id) {
		s = store_stmt(st, S_INC_INSERT);
		store_bind_cstr(s, 1, ns);
		store_bind_cstr(s, 2, rel);
		store_bind_iso(s, 3, a->opened, opened);
		store_bind_iso(s, 4, a->last, last);
		sqlite3_bind_int64(s, 5, a->opened);
		sqlite3_bind_int64(s, 6, a->last);
		if ((err = store_db_done(st, s, "incident insert")))
			return err;
		*id = sqlite3_last_insert_rowid(st->db);
		st->pending.incidents_opened++;
	} else {
		st->pending.incidents_updated++;
	}
	s = store_stmt(st, S_INC_AGG);
	store_bind_iso(s, 1, a->opened, opened);
	store_bind_iso(s, 2, a->last, last);
	sqlite3_bind_int64(s, 3, a->opened);
	sqlite3_bind_int64(s, 4, a->last);
	sqlite3_bind_int64(s, 5, a->count);
	sqlite3_bind_int64(s, 6, a->occ);
	sqlite3_bind_text(s, 7, rt_severity_name((enum rt_severity)a->sev), -1,
			  SQLITE_STATIC);
	sqlite3_bind_text(s, 8, a->tags, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 9, a->via);
	sqlite3_bind_text(s, 10, a->via_name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 11, *id);
	return store_db_done(st, s, "incident update");
}

int store_write_window(struct store *st, const struct plan_event *ev,
		       const struct plan_evstate *xs,
		       const struct plan_window *w, int64_t *id)
{
	int err;

	*id = w->target;
	if ((err = store_incident_write_agg(st, w->ns, w->rel, id, &w->agg)))
		return err;
	/* a window only takes incidents of its own class */
	if (w->cls && (err = store_incident_set_class(st, *id, w->cls)))
		return err;
	for (size_t i = 0; i < w->nmerged; i++)
		if ((err = merge_away(st, *id, w->merged[i])))
			return err;
	for (size_t i = 0; i < w->nevents; i++) {
		size_t k = w->events[i];

		if ((err = store_write_event(st, &ev[k], &xs[k], *id)))
			return err;
	}
	if ((err = store_objects_write(st, w->objs, w->nobjs, *id)))
		return err;
	return w->recount ? store_incident_count_pods(st, *id) : 0;
}

/* ---- the transaction ------------------------------------------------ */

static int exec_simple(struct store *st, const char *sql)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_db_fail(st, sql);
	return 0;
}

int store_close_windows(struct store *st, int64_t max_ts)
{
	sqlite3_stmt *s;
	int err;

	if (max_ts > st->watermark_ns) {
		if ((err = store_meta_set_int(st, "watermark_ns", max_ts)))
			return err;
		st->watermark_ns = max_ts;
	}
	s = store_stmt(st, S_INC_CLOSE);
	sqlite3_bind_int64(s, 1, st->gap_ns);
	sqlite3_bind_int64(s, 2, st->watermark_ns);
	return store_db_done(st, s, "closing incidents");
}

int store_lower_watermark(struct store *st, int64_t ns)
{
	int err;

	if (ns >= st->watermark_ns)
		return 0;
	if ((err = store_meta_set_int(st, "watermark_ns", ns)))
		return err;
	st->watermark_ns = ns;
	return 0;
}

int64_t store_watermark(const struct store *st)
{
	return st->watermark_ns;
}

int store_write_positions(struct store *st, const struct plan_batch_pos *pos,
			  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *s = store_stmt(st, S_POS_SET);
		int err;

		sqlite3_bind_text(s, 1, pos[i].source, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 2, pos[i].partition);
		sqlite3_bind_int64(s, 3, pos[i].offset);
		if ((err = store_db_done(st, s, "source position")))
			return err;
	}
	return 0;
}

void store_stats_add(struct store_stats *to, const struct store_stats *d)
{
	_Static_assert(sizeof(*to) == 13 * sizeof(uint64_t),
		       "a new store_stats counter is added here too");
	to->batches += d->batches;
	to->events_new += d->events_new;
	to->events_updated += d->events_updated;
	to->revisions += d->revisions;
	to->incidents_opened += d->incidents_opened;
	to->incidents_updated += d->incidents_updated;
	to->incidents_merged += d->incidents_merged;
	to->recomputed += d->recomputed;
	to->events_no_release += d->events_no_release;
	to->registry_refused += d->registry_refused;
	to->watermark_ignored += d->watermark_ignored;
	to->events_expired += d->events_expired;
	to->incidents_expired += d->incidents_expired;
}

int store_begin(struct store *st)
{
	int err;

	if (st->flags & STORE_READONLY) {
		snprintf(st->errmsg, sizeof(st->errmsg),
			 "the database is open read-only");
		return RT_EINVAL;
	}
	memset(&st->pending, 0, sizeof(st->pending));
	rt_arena_reset(&st->scratch);
	if ((err = exec_simple(st, "BEGIN IMMEDIATE")))
		return err;
	st->txn_thread = pthread_self();
	st->txn_open = true;
	return 0;
}

int store_end(struct store *st, struct store_stats *stats)
{
	int err;

	RT_ASSERT(store_owned(st));
	err = exec_simple(st, "COMMIT");
	if (err) {
		store_abort(st);
		return err;
	}
	st->txn_open = false;
	st->rebuild_all = false;
	st->pending.batches++;
	if (stats)
		store_stats_add(stats, &st->pending);
	return 0;
}

void store_abort(struct store *st)
{
	RT_ASSERT(store_owned(st));
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	st->ev_changes++;          /* what the batch read may be undone */
	st->txn_open = false;
}
