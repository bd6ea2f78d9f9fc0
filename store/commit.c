/*
 * commit.c: one batch, one transaction (store_commit), and the event path.
 *
 * Each pending event is looked up by its identity (ukey): a stored row is
 * merged (count = max, first = min, last = max, tags = union), a new one is
 * inserted. Events are then grouped by release and, for each release, laid
 * over the stored incidents near them (corr_cluster): an event extends the
 * incident it falls within the gap of, opens a new one, or bridges two,
 * which merge into the older id. Incident aggregates (counts, severity,
 * tags, objects) are sums and maxima, so extending them needs only the
 * batch's deltas -- the cost of a batch does not grow with the size of the
 * incidents it extends. A release whose events changed hands (recompute.c)
 * is instead recomputed from its stored events.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define NEAR_BIT ((size_t)1 << (sizeof(size_t) * 8 - 1))

static bool rts_is(struct rt_str a, const char *b)
{
	size_t n = b ? strlen(b) : 0;

	return a.n == n && (n == 0 || memcmp(a.p, b, n) == 0);
}

static void add_tag(struct corr_event *e, const char *tag)
{
	for (unsigned i = 0; i < e->ntags; i++)
		if (strcmp(e->tags[i], tag) == 0)
			return;
	if (e->ntags < RULES_MAX_TAGS)
		e->tags[e->ntags++] = tag;
}

/* Which key a re-seen event keeps: the better attribution, ties by key. */
static bool stored_key_wins(const struct corr_event *e, int via,
			    const char *rns, const char *rel)
{
	int c;

	if (e->attr.via == CORR_VIA_NONE || via < e->attr.via)
		return true;
	if (via > e->attr.via)
		return false;
	c = strncmp(rns, e->attr.release_ns.p ? e->attr.release_ns.p : "",
		    e->attr.release_ns.n);
	if (c == 0 && strlen(rns) != e->attr.release_ns.n)
		c = 1;
	if (c == 0) {
		c = strncmp(rel, e->attr.release.p, e->attr.release.n);
		if (c == 0 && strlen(rel) != e->attr.release.n)
			c = 1;
	}
	return c < 0;
}

static struct rt_str col_rts(sqlite3_stmt *s, int i)
{
	const char *t = col_text(s, i);

	return rt_str_make(t, strlen(t));
}

static bool rts_same(struct rt_str a, struct rt_str b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

static struct rt_str keep_col(struct store *st, sqlite3_stmt *s, int i)
{
	struct rt_str v = col_rts(s, i);

	return v.n ? rt_str_make(scratch_dup(st, v.p, v.n), v.n) : RT_STR_NULL;
}

/*
 * The stored version is the greater one (corr_version_cmp): the event
 * shows its text and object again, and the row keeps them. The captures
 * stay those of the row, so the batch's are dropped.
 */
static int keep_stored_text(struct store *st, sqlite3_stmt *s,
			    struct corr_event *e)
{
	e->message = keep_col(st, s, 10);
	e->reason = keep_col(st, s, 11);
	e->kind = e->attr.kind = keep_col(st, s, 12);
	e->name = e->attr.name = keep_col(st, s, 13);
	e->pod = keep_col(st, s, 14);
	e->container = keep_col(st, s, 15);
	e->type = keep_col(st, s, 16);
	e->nfields = 0;
	return (sqlite3_column_bytes(s, 10) && !e->message.p) ||
	       (sqlite3_column_bytes(s, 13) && !e->name.p) ? RT_ENOMEM : 0;
}

static int take_stored_key(struct store *st, struct corr_event *e, int via,
			   const char *rns, const char *rel)
{
	e->attr.release_ns = rt_str_make(scratch_dup(st, rns, strlen(rns)),
					 strlen(rns));
	e->attr.release = rt_str_make(scratch_dup(st, rel, strlen(rel)),
				      strlen(rel));
	e->attr.via = via;
	return e->attr.release_ns.p && e->attr.release.p ? 0 : RT_ENOMEM;
}

/*
 * A stored row of the event's identity, merged: count = max, first = min,
 * last = max, tags = union, the greater version's text. The release: of
 * one object, the better attribution (ties by key); when the versions
 * name different objects, the greater version's, and both releases are
 * recomputed from their events (objects counted, incidents). Either way
 * the row does not depend on which version came first.
 */
static int merge_stored(struct store *st, sqlite3_stmt *s,
			struct corr_event *e, struct store_evstate *x)
{
	struct corr_tagset old = { 0 };
	struct corr_version mine, theirs;
	int64_t of = sqlite3_column_int64(s, 2), ol = sqlite3_column_int64(s, 3);
	int64_t oc = sqlite3_column_int64(s, 4);
	int sev = rt_severity_from_name(col_text(s, 6), strlen(col_text(s, 6)));
	int via = sqlite3_column_int(s, 7);
	const char *rns = col_text(s, 8), *rel = col_text(s, 9);
	bool same_obj = rts_same(col_rts(s, 12), e->attr.kind) &&
			rts_same(col_rts(s, 13), e->attr.name);
	int err;

	x->id = sqlite3_column_int64(s, 0);
	x->inc = sqlite3_column_int64(s, 1);
	x->old_count = oc;
	corr_event_version(e, &mine);
	theirs = (struct corr_version){ ol, col_rts(s, 10), col_rts(s, 11),
					col_rts(s, 12), col_rts(s, 13),
					col_rts(s, 14), col_rts(s, 15),
					col_rts(s, 16) };
	x->newer = corr_version_cmp(&mine, &theirs) > 0;
	if (!x->newer && (err = keep_stored_text(st, s, e)))
		return err;
	if (of > 0 && (e->first_ns <= 0 || of < e->first_ns))
		e->first_ns = of;
	if (ol > e->last_ns)
		e->last_ns = ol;
	if (oc > e->count)
		e->count = oc;
	if (sev > (int)e->severity)
		e->severity = (enum rt_severity)sev;
	corr_tagset_parse(&old, col_text(s, 5), store_intern_cb, &st->intern);
	for (unsigned i = 0; i < old.n; i++)
		add_tag(e, old.t[i]);
	if (via == CORR_VIA_NONE)
		return 0;
	if (!same_obj) {
		if (!x->newer && (err = take_stored_key(st, e, via, rns, rel)))
			return err;
	} else if (rts_is(e->attr.release_ns, rns) &&
		   rts_is(e->attr.release, rel)) {
		return 0;
	} else if (stored_key_wins(e, via, rns, rel)) {
		return take_stored_key(st, e, via, rns, rel);
	}
	/* The event changes release or object: both keys are recomputed. */
	if ((err = keyset_add(st, &st->rebuild, rt_str_make(rns, strlen(rns)),
			      rt_str_make(rel, strlen(rel)))))
		return err;
	return keyset_add(st, &st->rebuild, e->attr.release_ns, e->attr.release);
}

static int lookup(struct store *st, struct corr_event *e,
		  struct store_evstate *x)
{
	sqlite3_stmt *s = stmt(st, S_EV_LOOKUP);
	const struct corr_rev *r;
	int rc, err = 0;

	memset(x, 0, sizeof(*x));
	sqlite3_bind_int64(s, 1, (int64_t)e->ukey);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = merge_stored(st, s, e, x);
	else if (rc != SQLITE_DONE)
		err = db_fail(st, "event lookup");
	sqlite3_reset(s);
	if (err)
		return err;
	r = corr_release_at(corr_registry_find(st->reg, e->attr.release_ns,
					       e->attr.release), e->first_ns);
	e->revision = r ? r->revision : 0;
	x->cluster = e->ntags > 0 && e->attr.via != CORR_VIA_NONE &&
		     e->attr.release.n > 0 && e->first_ns > 0;
	return 0;
}

static void tags_json(const struct corr_event *e, char *buf, size_t size)
{
	struct corr_tagset t = { 0 };

	for (unsigned i = 0; i < e->ntags; i++)
		corr_tagset_add(&t, e->tags[i]);
	if (corr_tagset_json(&t, buf, size) < 0)
		snprintf(buf, size, "[]");
}

static const char *fields_json(struct store *st, const struct corr_event *e)
{
	struct store_buf *b = &st->buf2;

	buf_reset(b);
	buf_addc(b, '{');
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
			buf_addc(b, ',');
		buf_json_str(b, e->fields[i].key.p, e->fields[i].key.n);
		buf_addc(b, ':');
		buf_json_str(b, e->fields[i].val.p, e->fields[i].val.n);
	}
	buf_addc(b, '}');
	return buf_str(b);
}

static void bind_incident(sqlite3_stmt *s, int i, int64_t id)
{
	if (id)
		sqlite3_bind_int64(s, i, id);
	else
		sqlite3_bind_null(s, i);
}

static int insert_event(struct store *st, const struct corr_event *e,
			int64_t incident)
{
	sqlite3_stmt *s = stmt(st, S_EV_INSERT);
	char tags[1024], origin[1024];
	const char *fields = fields_json(st, e);

	if (!fields)
		return RT_ENOMEM;
	tags_json(e, tags, sizeof(tags));
	bind_incident(s, 1, incident);
	bind_iso(s, 2, e->last_ns);
	bind_iso(s, 3, e->first_ns);
	bind_rts(s, 4, e->ns);
	bind_rts(s, 5, e->attr.kind);
	bind_rts(s, 6, e->attr.name);
	bind_rts(s, 7, e->pod);
	bind_rts(s, 8, e->container);
	bind_rts(s, 9, e->reason);
	bind_rts(s, 10, e->type);
	bind_rts(s, 11, e->message);
	sqlite3_bind_text(s, 12, tags, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 13, fields, -1, SQLITE_STATIC);
	if (e->severity != RT_SEV_NONE)
		sqlite3_bind_text(s, 14, rt_severity_name(e->severity), -1,
				  SQLITE_STATIC);
	if (e->attr.via != CORR_VIA_NONE) {
		bind_rts(s, 15, e->attr.release);
		sqlite3_bind_text(s, 16, e->attr.release_ns.p ?
				  e->attr.release_ns.p : "",
				  (int)e->attr.release_ns.n, SQLITE_STATIC);
		sqlite3_bind_text(s, 17, corr_via_name(e->attr.via), -1,
				  SQLITE_STATIC);
	}
	sqlite3_bind_int(s, 18, e->revision);
	sqlite3_bind_text(s, 19, rt_format_name(e->format), -1, SQLITE_STATIC);
	if (e->source) {
		snprintf(origin, sizeof(origin), "%s:%llu", e->source,
			 (unsigned long long)e->offset);
		sqlite3_bind_text(s, 20, origin, -1, SQLITE_STATIC);
	}
	sqlite3_bind_int64(s, 21, e->count);
	sqlite3_bind_int64(s, 22, (int64_t)e->ukey);
	sqlite3_bind_int64(s, 23, e->first_ns);
	sqlite3_bind_int64(s, 24, e->last_ns);
	sqlite3_bind_int(s, 25, e->attr.via);
	bind_rts(s, 26, corr_object_workload(e->attr.kind, e->attr.name,
					     RT_STR_NULL, e->owner));
	st->pending.events_new++;
	if (e->ntags && (e->attr.via == CORR_VIA_NONE || !e->attr.release.n))
		st->pending.events_no_release++;
	return db_done(st, s, "event insert");
}

static int update_event(struct store *st, const struct corr_event *e,
			const struct store_evstate *x, int64_t incident)
{
	sqlite3_stmt *s = stmt(st, S_EV_UPDATE);
	char tags[1024];

	tags_json(e, tags, sizeof(tags));
	bind_incident(s, 1, incident);
	bind_iso(s, 2, e->last_ns);
	bind_iso(s, 3, e->first_ns);
	sqlite3_bind_int64(s, 4, e->count);
	sqlite3_bind_text(s, 5, tags, -1, SQLITE_STATIC);
	if (e->severity != RT_SEV_NONE)
		sqlite3_bind_text(s, 6, rt_severity_name(e->severity), -1,
				  SQLITE_STATIC);
	if (e->attr.via != CORR_VIA_NONE) {
		bind_rts(s, 7, e->attr.release);
		sqlite3_bind_text(s, 8, e->attr.release_ns.p ?
				  e->attr.release_ns.p : "",
				  (int)e->attr.release_ns.n, SQLITE_STATIC);
		sqlite3_bind_text(s, 9, corr_via_name(e->attr.via), -1,
				  SQLITE_STATIC);
	}
	sqlite3_bind_int(s, 10, e->attr.via);
	sqlite3_bind_int(s, 11, e->revision);
	sqlite3_bind_int64(s, 12, e->first_ns);
	sqlite3_bind_int64(s, 13, e->last_ns);
	sqlite3_bind_int(s, 14, x->newer);
	if (x->newer) {       /* this batch's version is the greater */
		const char *fields = fields_json(st, e);

		if (!fields)
			return RT_ENOMEM;
		bind_rts(s, 15, e->message);
		bind_rts(s, 16, e->reason);
		bind_rts(s, 17, e->attr.kind);
		bind_rts(s, 18, e->attr.name);
		bind_rts(s, 19, e->pod);
		bind_rts(s, 20, e->container);
		bind_rts(s, 21, e->type);
		sqlite3_bind_text(s, 22, fields, -1, SQLITE_STATIC);
		bind_rts(s, 23, corr_object_workload(e->attr.kind, e->attr.name,
						     RT_STR_NULL, e->owner));
	}
	sqlite3_bind_int64(s, 24, x->id);
	st->pending.events_updated++;
	return db_done(st, s, "event update");
}

static int write_event(struct store *st, const struct corr_event *e,
		       const struct store_evstate *x, int64_t incident)
{
	return x->id ? update_event(st, e, x, incident) :
		insert_event(st, e, incident);
}

/* ---- incremental windows -------------------------------------------- */

struct near_inc {
	int64_t id, opened, last, count, occ;
	int sev, via;
	const char *tags;
};

struct near_list {
	struct near_inc *v;
	size_t n, cap;
};

static int near_add_row(struct store *st, struct near_list *l,
			sqlite3_stmt *s)
{
	struct near_inc *p;
	const char *sev = col_text(s, 5), *tags = col_text(s, 6);

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].id == sqlite3_column_int64(s, 0))
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;

		p = realloc(l->v, cap * sizeof(*p));
		if (!p)
			return RT_ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	p = &l->v[l->n++];
	p->id = sqlite3_column_int64(s, 0);
	p->opened = sqlite3_column_int64(s, 1);
	p->last = sqlite3_column_int64(s, 2);
	p->count = sqlite3_column_int64(s, 3);
	p->occ = sqlite3_column_int64(s, 4);
	p->sev = rt_severity_from_name(sev, strlen(sev));
	p->via = sqlite3_column_int(s, 7);
	p->tags = scratch_dup(st, tags, strlen(tags));
	return p->tags ? 0 : RT_ENOMEM;
}

static int near_query(struct store *st, struct near_list *l, sqlite3_stmt *s)
{
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW)
		err = near_add_row(st, l, s);
	if (!err && rc != SQLITE_DONE)
		err = db_fail(st, "incident lookup");
	sqlite3_reset(s);
	return err;
}

/* Stored incidents the group's events may touch. */
static int load_near(struct store *st, struct corr_batch *b, const size_t *idx,
		     size_t n, struct near_list *l)
{
	const struct corr_event *e0 = &b->ev[idx[0]];
	int64_t lo = INT64_MAX, hi = 0;
	sqlite3_stmt *s;
	int err;

	for (size_t i = 0; i < n; i++) {
		const struct corr_event *e = &b->ev[idx[i]];

		if (e->first_ns < lo)
			lo = e->first_ns;
		if (e->last_ns > hi)
			hi = e->last_ns;
	}
	s = stmt(st, S_INC_NEAR);
	bind_rts(s, 1, e0->attr.release_ns);
	if (!e0->attr.release_ns.n)
		sqlite3_bind_text(s, 1, "", 0, SQLITE_STATIC);
	bind_rts(s, 2, e0->attr.release);
	sqlite3_bind_int64(s, 3, lo - st->gap_ns);
	sqlite3_bind_int64(s, 4, hi + st->gap_ns);
	if ((err = near_query(st, l, s)))
		return err;
	/* An event's own incident is always near it; be robust anyway. */
	for (size_t i = 0; i < n; i++) {
		const struct store_evstate *x = &st->evs[idx[i]];
		size_t j;

		if (!x->inc)
			continue;
		for (j = 0; j < l->n && l->v[j].id != x->inc; j++)
			;
		if (j < l->n)
			continue;
		s = stmt(st, S_INC_BY_ID);
		sqlite3_bind_int64(s, 1, x->inc);
		if ((err = near_query(st, l, s)))
			return err;
	}
	return 0;
}

static bool in_near(const struct near_list *l, int64_t id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].id == id)
			return true;
	return false;
}

/* Folds incident m into target: its events, objects, then the row. */
static int merge_away(struct store *st, int64_t target, int64_t m)
{
	static const enum store_stmt seq[] = {
		S_EV_MOVE, S_OBJ_MOVE, S_OBJ_DELETE, S_INC_DELETE,
	};

	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		sqlite3_stmt *s = stmt(st, seq[i]);
		int err;

		if (seq[i] == S_OBJ_DELETE || seq[i] == S_INC_DELETE) {
			sqlite3_bind_int64(s, 1, m);
		} else {
			sqlite3_bind_int64(s, 1, target);
			sqlite3_bind_int64(s, 2, m);
		}
		if ((err = db_done(st, s, "incident merge")))
			return err;
	}
	st->pending.incidents_merged++;
	return 0;
}

int incident_write_agg(struct store *st, const struct store_key *k,
		       int64_t *id, const struct agg *a)
{
	char tags[2048];
	sqlite3_stmt *s;
	int err;

	if (!*id) {
		s = stmt(st, S_INC_INSERT);
		bind_cstr(s, 1, k->ns);
		bind_cstr(s, 2, k->rel);
		bind_iso(s, 3, a->opened);
		bind_iso(s, 4, a->last);
		sqlite3_bind_int64(s, 5, a->opened);
		sqlite3_bind_int64(s, 6, a->last);
		if ((err = db_done(st, s, "incident insert")))
			return err;
		*id = sqlite3_last_insert_rowid(st->db);
		st->pending.incidents_opened++;
	} else {
		st->pending.incidents_updated++;
	}
	if (corr_tagset_json(&a->tags, tags, sizeof(tags)) < 0)
		snprintf(tags, sizeof(tags), "[]");
	s = stmt(st, S_INC_AGG);
	bind_iso(s, 1, a->opened);
	bind_iso(s, 2, a->last);
	sqlite3_bind_int64(s, 3, a->opened);
	sqlite3_bind_int64(s, 4, a->last);
	sqlite3_bind_int64(s, 5, a->count);
	sqlite3_bind_int64(s, 6, a->occ);
	sqlite3_bind_text(s, 7, rt_severity_name((enum rt_severity)a->sev), -1,
			  SQLITE_STATIC);
	sqlite3_bind_text(s, 8, tags, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, 9, a->via);
	sqlite3_bind_text(s, 10, corr_via_name(a->via), -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 11, *id);
	if ((err = db_done(st, s, "incident update")))
		return err;
	return touched_add(st, *id);
}

void agg_init(struct agg *a)
{
	memset(a, 0, sizeof(*a));
	a->opened = INT64_MAX;
	a->via = CORR_VIA_WORKLOAD + 1;
}

void agg_span(struct agg *a, int64_t first, int64_t last, int sev, int via)
{
	if (first < a->opened)
		a->opened = first;
	if (last > a->last)
		a->last = last;
	if (sev > a->sev)
		a->sev = sev;
	if (via < a->via)
		a->via = via;
}

/* A ConfigMap or Secret an event names (a "configmap"/"secret" capture)
 * is an affected object of the incident too. */
static int config_objects(struct store *st, const struct corr_event *e,
			  int64_t events)
{
	for (unsigned i = 0; i < e->nfields; i++) {
		const char *kind = NULL;

		if (rt_str_eq(e->fields[i].key, "configmap"))
			kind = "ConfigMap";
		else if (rt_str_eq(e->fields[i].key, "secret"))
			kind = "Secret";
		if (kind && e->fields[i].val.n) {
			int err = objmap_add(st, &st->objs, kind, strlen(kind),
					     e->fields[i].val.p,
					     e->fields[i].val.n, e->first_ns,
					     e->last_ns, events);
			if (err)
				return err;
		}
	}
	return 0;
}

/* One window of a group: stored incidents and batch events in it. */
static int write_window(struct store *st, struct corr_batch *b,
			const struct store_key *k, struct corr_item *it,
			size_t n, const struct near_list *near)
{
	struct agg a;
	int64_t target = 0;
	bool merged = false;
	int err;

	agg_init(&a);
	for (size_t i = 0; i < n; i++) {
		if (it[i].idx & NEAR_BIT) {
			const struct near_inc *p = &near->v[it[i].idx & ~NEAR_BIT];

			agg_span(&a, p->opened, p->last, p->sev, p->via);
			a.count += p->count;
			a.occ += p->occ;
			corr_tagset_parse(&a.tags, p->tags, store_intern_cb,
					  &st->intern);
			if (!target || p->id < target)
				target = p->id;
		} else {
			const struct corr_event *e = &b->ev[it[i].idx];
			const struct store_evstate *x = &st->evs[it[i].idx];
			bool counted = x->inc && in_near(near, x->inc);

			agg_span(&a, e->first_ns, e->last_ns, (int)e->severity,
				 e->attr.via);
			a.count += !counted;
			a.occ += counted ? (e->count > x->old_count ?
					    e->count - x->old_count : 0) : e->count;
			for (unsigned t = 0; t < e->ntags; t++) {
				const char *tag = store_intern(&st->intern,
					e->tags[t], strlen(e->tags[t]));

				if (tag)
					corr_tagset_add(&a.tags, tag);
			}
		}
	}
	if ((err = incident_write_agg(st, k, &target, &a)))
		return err;
	for (size_t i = 0; i < n; i++) {
		if (it[i].idx & NEAR_BIT) {
			int64_t id = near->v[it[i].idx & ~NEAR_BIT].id;

			if (id == target)
				continue;
			if ((err = merge_away(st, target, id)))
				return err;
			merged = true;
			continue;
		}
		const struct corr_event *e = &b->ev[it[i].idx];
		const struct store_evstate *x = &st->evs[it[i].idx];
		bool counted = x->inc && in_near(near, x->inc);

		if ((err = write_event(st, e, x, target)))
			return err;
		if (e->attr.name.n &&
		    (err = objmap_add(st, &st->objs, e->attr.kind.p ?
				      e->attr.kind.p : "", e->attr.kind.n,
				      e->attr.name.p, e->attr.name.n,
				      e->first_ns, e->last_ns, !counted)))
			return err;
		if ((err = config_objects(st, e, !counted)))
			return err;
	}
	if ((err = objmap_write(st, &st->objs, target)))
		return err;
	return merged ? incident_count_pods(st, target) : 0;
}

static int group_incremental(struct store *st, struct corr_batch *b,
			     const struct store_key *k, const size_t *idx,
			     size_t n)
{
	struct near_list near = { 0 };
	struct corr_item *it;
	size_t ni, a;
	int err;

	if ((err = load_near(st, b, idx, n, &near)))
		goto out;
	ni = n + near.n;
	it = malloc(ni * sizeof(*it));
	err = RT_ENOMEM;
	if (!it)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct corr_event *e = &b->ev[idx[i]];

		it[i] = (struct corr_item){ e->first_ns, e->last_ns, idx[i], 0 };
	}
	for (size_t j = 0; j < near.n; j++)
		it[n + j] = (struct corr_item){ near.v[j].opened, near.v[j].last,
						j | NEAR_BIT, 0 };
	corr_cluster(it, ni, st->gap_ns);
	err = 0;
	for (a = 0; a < ni && !err;) {
		size_t z = a;

		while (z < ni && it[z].cluster == it[a].cluster)
			z++;
		err = write_window(st, b, k, it + a, z - a, &near);
		a = z;
	}
	free(it);
out:
	free(near.v);
	return err;
}

/* ---- grouping ------------------------------------------------------- */

static int cmp_rts(struct rt_str a, struct rt_str b)
{
	size_t n = a.n < b.n ? a.n : b.n;
	int c = n ? memcmp(a.p, b.p, n) : 0;

	return c ? c : (a.n < b.n ? -1 : a.n > b.n);
}

static int order_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct corr_batch *b = ctx;
	const struct corr_event *x = &b->ev[*(const size_t *)pa];
	const struct corr_event *y = &b->ev[*(const size_t *)pb];
	int c = cmp_rts(x->attr.release_ns, y->attr.release_ns);

	if (!c)
		c = cmp_rts(x->attr.release, y->attr.release);
	if (!c && x->first_ns != y->first_ns)
		c = x->first_ns < y->first_ns ? -1 : 1;
	if (!c)
		c = *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
	return c;
}

static int key_add(struct store *st, const struct corr_event *e)
{
	sqlite3_stmt *s = stmt(st, S_KEY_ADD);

	sqlite3_bind_text(s, 1, e->attr.release_ns.p ? e->attr.release_ns.p : "",
			  (int)e->attr.release_ns.n, SQLITE_STATIC);
	bind_rts(s, 2, e->attr.release);
	return db_done(st, s, "release key");
}

/* One release's events: extend its incidents, or leave them to rebuild. */
static int write_group(struct store *st, struct corr_batch *b,
		       const size_t *idx, size_t n)
{
	const struct corr_event *e0 = &b->ev[idx[0]];
	struct store_key k;
	size_t *cl, ncl = 0;
	int err = 0;

	if (e0->attr.via != CORR_VIA_NONE && (err = key_add(st, e0)))
		return err;
	bool deferred = keyset_has(&st->rebuild, e0->attr.release_ns,
				   e0->attr.release) || st->rebuild_all;
	cl = malloc(n * sizeof(*cl));
	if (!cl)
		return RT_ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		const struct store_evstate *x = &st->evs[idx[i]];

		if (x->cluster && !deferred)
			cl[ncl++] = idx[i];
		else   /* deferred: rebuild_key assigns the incident */
			err = write_event(st, &b->ev[idx[i]], x,
					  x->cluster ? x->inc : 0);
	}
	if (!err && ncl) {
		k.ns = scratch_dup(st, e0->attr.release_ns.p,
				   e0->attr.release_ns.n);
		k.rel = scratch_dup(st, e0->attr.release.p, e0->attr.release.n);
		err = k.ns && k.rel ? group_incremental(st, b, &k, cl, ncl) :
			RT_ENOMEM;
	}
	free(cl);
	return err;
}

static int reserve(struct store *st, size_t n)
{
	if (n <= st->evscap)
		return 0;
	free(st->evs);
	free(st->order);
	st->evs = malloc(n * sizeof(*st->evs));
	st->order = malloc(n * sizeof(*st->order));
	st->evscap = st->evs && st->order ? n : 0;
	return st->evscap ? 0 : RT_ENOMEM;
}

int commit_events(struct store *st, struct corr_batch *b)
{
	size_t a;
	int err;

	if (b->nev == 0)
		return 0;
	if ((err = reserve(st, b->nev)))
		return err;
	for (size_t i = 0; i < b->nev; i++) {
		if ((err = lookup(st, &b->ev[i], &st->evs[i])))
			return err;
		st->order[i] = i;
	}
	qsort_r(st->order, b->nev, sizeof(*st->order), order_cmp, b);
	for (a = 0; a < b->nev;) {
		const struct corr_event *e = &b->ev[st->order[a]];
		size_t z = a + 1;

		while (z < b->nev &&
		       !cmp_rts(b->ev[st->order[z]].attr.release_ns,
				e->attr.release_ns) &&
		       !cmp_rts(b->ev[st->order[z]].attr.release,
				e->attr.release))
			z++;
		if ((err = write_group(st, b, st->order + a, z - a)))
			return err;
		a = z;
	}
	return 0;
}

/* ---- the transaction ------------------------------------------------ */

static int exec_simple(struct store *st, const char *sql)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(st, sql);
	return 0;
}

static int rebuild_all_keys(struct store *st)
{
	sqlite3_stmt *s = stmt(st, S_KEY_ALL);
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *ns = col_text(s, 0), *rel = col_text(s, 1);

		err = keyset_add(st, &st->rebuild, rt_str_make(ns, strlen(ns)),
				 rt_str_make(rel, strlen(rel)));
	}
	if (!err && rc != SQLITE_DONE)
		err = db_fail(st, "release keys");
	sqlite3_reset(s);
	return err;
}

static int close_windows(struct store *st, int64_t max_ts)
{
	sqlite3_stmt *s;
	int err;

	if (max_ts > st->watermark_ns) {
		if ((err = meta_set_int(st, "watermark_ns", max_ts)))
			return err;
		st->watermark_ns = max_ts;
	}
	s = stmt(st, S_INC_CLOSE);
	sqlite3_bind_int64(s, 1, st->gap_ns);
	sqlite3_bind_int64(s, 2, st->watermark_ns);
	return db_done(st, s, "closing incidents");
}

static int write_positions(struct store *st, const struct corr_batch *b)
{
	for (size_t i = 0; i < b->npos; i++) {
		sqlite3_stmt *s = stmt(st, S_POS_SET);
		int err;

		sqlite3_bind_text(s, 1, b->pos[i].source, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 2, b->pos[i].partition);
		sqlite3_bind_int64(s, 3, b->pos[i].offset);
		if ((err = db_done(st, s, "source position")))
			return err;
	}
	return 0;
}

int commit_steps(struct store *st, struct corr_batch *b)
{
	int err;

	rt_arena_reset(&st->scratch);
	st->rebuild.n = st->revdirty.n = st->ntouched = 0;
	st->objs.n = 0;
	if (st->objs.nslots)
		memset(st->objs.slot, 0, st->objs.nslots * sizeof(*st->objs.slot));
	if ((err = revisions_merge(st, b)))
		return err;
	if ((err = aliases_merge(st, b)))
		return err;
	corr_batch_attribute(b, st->reg, &st->copts);
	if (st->rebuild_all && (err = rebuild_all_keys(st)))
		return err;
	if ((err = commit_events(st, b)))
		return err;
	for (size_t i = 0; i < st->rebuild.n; i++) {
		const struct store_key *k = &st->rebuild.k[i];

		if ((err = rebuild_key(st, k)))
			return err;
		if ((err = keyset_add(st, &st->revdirty,
				      rt_str_make(k->ns, strlen(k->ns)),
				      rt_str_make(k->rel, strlen(k->rel)))))
			return err;
	}
	for (size_t i = 0; i < st->revdirty.n; i++)
		if ((err = revisions_apply(st, &st->revdirty.k[i])))
			return err;
	if ((err = close_windows(st, b->max_ts)))
		return err;
	if ((err = diagnose_touched(st)))
		return err;
	return write_positions(st, b);
}

static void stats_add(struct store_stats *to, const struct store_stats *d)
{
	to->batches += d->batches;
	to->events_new += d->events_new;
	to->events_updated += d->events_updated;
	to->revisions += d->revisions;
	to->incidents_opened += d->incidents_opened;
	to->incidents_updated += d->incidents_updated;
	to->incidents_merged += d->incidents_merged;
	to->recomputed += d->recomputed;
	to->events_no_release += d->events_no_release;
}

int store_commit(struct store *st, struct corr_batch *b,
		 struct store_stats *stats)
{
	int err;

	if (st->flags & STORE_READONLY) {
		snprintf(st->errmsg, sizeof(st->errmsg),
			 "the database is open read-only");
		return RT_EINVAL;
	}
	memset(&st->pending, 0, sizeof(st->pending));
	if ((err = exec_simple(st, "BEGIN IMMEDIATE")))
		return err;
	err = cluster_commit(st, b);
	if (!err)
		err = exec_simple(st, "COMMIT");
	if (err) {
		/* The in-memory registry may now be ahead of the database:
		 * callers stop at a failed commit (see store.h). */
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return err;
	}
	st->rebuild_all = false;
	st->pending.batches++;
	if (stats)
		stats_add(stats, &st->pending);
	return 0;
}
