/*
 * classes.c: the revision class of each event of a release's group
 * (correlate/revclass.c), from the ReplicaSets the store remembers
 * (store/classes.c), so that a batch puts an event in its class's
 * incident without a rescan of the release.
 *
 * A ReplicaSet stored keeps its class. One met for the first time is
 * decided as revclass.c decides it: revision R's when R was in force at
 * its first sighting and an incident of class 0 was open at R's deploy
 * (stored, or among the group's events before it), else 0; then stored.
 * A sighting earlier than the stored first one may change that class:
 * the release is recomputed (a rescan of that release, once). So is a
 * release stored before classes were (its row named '', from the
 * migration), the first time one of its ReplicaSets is not found, and a
 * release whose batch shows for the first time that a revision was
 * deployed while an incident of class 0 was open, when a ReplicaSet first
 * seen in that revision's reign is stored as of class 0.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline_int.h"

struct rs_seen {
	struct rt_str name;
	int cls;
};

struct classify {
	struct pipeline_db *db;
	const struct corr_batch *b;
	const struct corr_group *g;
	const struct corr_release *rel;
	struct rs_seen *seen;
	size_t nseen;
	struct rt_map map;
	bool unknown_checked;
	int64_t *last0;     /* last0[i]: latest end of a class-0 event of
	                     * the group's first i, 0 when none */
};

static bool seen_eq(const void *ctx, uint32_t idx)
{
	const struct classify *c = ((const void *const *)ctx)[0];
	const struct rt_str *name = ((const void *const *)ctx)[1];
	struct rt_str s = c->seen[idx].name;

	return s.n == name->n && memcmp(s.p, name->p, s.n) == 0;
}

/* A class-0 event of the group's first n that began before start and
 * whose gap reaches t. */
static bool batch_open0(const struct classify *c, size_t n, int64_t start,
			int64_t t)
{
	size_t k = 0;

	while (k < n && c->b->ev[c->g->cl[k]].first_ns < start)
		k++;
	return k && c->last0[k] && c->last0[k] + c->db->plan.opts.gap_ns >= t;
}

/* The class of a ReplicaSet first seen at event i (time ts). */
static int new_class(struct classify *c, size_t i, int64_t ts, int *cls)
{
	const struct corr_rev *r = corr_release_at(c->rel, ts);
	int64_t t, start;
	int open;

	*cls = 0;
	if (!r || r->updated_ns <= 0)
		return 0;
	t = r->updated_ns;
	start = t - CORR_SKEW_NS;
	open = batch_open0(c, i, start, t);
	if (!open && (open = store_open0_at(c->db->st, c->g->ns, c->g->rel,
					    start, t,
					    c->db->plan.opts.gap_ns)) < 0)
		return open;
	*cls = open ? r->revision : 0;
	return 0;
}

/* A release whose classes were never stored (a database migrated from
 * before them) is recomputed. Asked once a group. */
static int classes_unknown(struct classify *c)
{
	struct corr_plan *p = &c->db->plan;
	int64_t first;
	int cls, found;

	if (c->unknown_checked)
		return 0;
	c->unknown_checked = true;
	found = store_read_replicaset(c->db->st, c->g->ns, c->g->rel,
				      rt_str_make("", 0), &first, &cls);
	if (found <= 0)
		return found;
	return corr_keyset_add(p, &p->rebuild, c->g->ns, c->g->rel);
}

/* A ReplicaSet met for the first time: its class, stored. Past
 * CORR_REVCLASS_SETS a release, as the rescan does, it stays in class 0
 * and is not stored. */
static int rs_new(struct classify *c, size_t i, struct rt_str rs, int *cls)
{
	const struct plan_event *e = &c->b->ev[c->g->cl[i]];
	int64_t n = store_count_replicasets(c->db->st, c->g->ns, c->g->rel);
	int err;

	*cls = 0;
	if (n < 0)
		return (int)n;
	if (n >= CORR_REVCLASS_SETS)
		return 0;
	if ((err = new_class(c, i, e->first_ns, cls)))
		return err;
	return store_write_replicaset(c->db->st, c->g->ns, c->g->rel, rs,
				      e->first_ns, *cls);
}

/* The class of ReplicaSet rs, met at event i of the group. */
static int rs_class(struct classify *c, size_t i, struct rt_str rs, int *cls)
{
	struct corr_plan *p = &c->db->plan;
	const struct plan_event *e = &c->b->ev[c->g->cl[i]];
	const void *ctx[2] = { c, &rs };
	uint64_t h = rt_hash64(0, rs.p, rs.n);
	uint32_t k = rt_map_find(&c->map, h, seen_eq, ctx);
	int64_t first;
	int err, found;

	if (k != RT_MAP_NONE) {
		*cls = c->seen[k].cls;
		return 0;
	}
	found = store_read_replicaset(c->db->st, c->g->ns, c->g->rel, rs,
				      &first, cls);
	if (found < 0)
		return found;
	if (found)
		err = e->first_ns < first ?   /* its class may change */
		      corr_keyset_add(p, &p->rebuild, c->g->ns, c->g->rel) : 0;
	else if (!(err = classes_unknown(c)))
		err = rs_new(c, i, rs, cls);
	if (err)
		return err;
	c->seen[c->nseen] = (struct rs_seen){ rs, *cls };
	return rt_map_insert(&c->map, h, (uint32_t)c->nseen++);
}

static int classify_events(struct classify *c)
{
	struct corr_plan *p = &c->db->plan;
	int err;

	c->last0[0] = 0;
	for (size_t i = 0; i < c->g->ncl; i++) {
		const struct plan_event *e = &c->b->ev[c->g->cl[i]];
		struct plan_evstate *x = &p->evs[c->g->cl[i]];
		struct rt_str rs = corr_pod_replicaset(e->pod);
		int64_t last = e->last_ns > e->first_ns ? e->last_ns :
			       e->first_ns;

		x->cls = 0;
		if (rs.n && (err = rs_class(c, i, rs, &x->cls)))
			return err;
		c->last0[i + 1] = c->last0[i];
		if (!x->cls && last > c->last0[i + 1])
			c->last0[i + 1] = last;
	}
	return 0;
}

/* The deploy after t, or INT64_MAX. */
static int64_t next_deploy(const struct corr_release *rel, int64_t t)
{
	int64_t next = INT64_MAX;

	for (size_t i = 0; i < rel->nrevs; i++)
		if (rel->revs[i].updated_ns > t && rel->revs[i].updated_ns < next)
			next = rel->revs[i].updated_ns;
	return next;
}

/* Deploy t of the group's span found open by the group's class-0 events
 * but not by the stored incidents: the ReplicaSets stored of class 0 in
 * its reign are its revision's, which a rescan of the release tells. */
static int deploy_opened(struct classify *c, int64_t t)
{
	struct corr_plan *p = &c->db->plan;
	int64_t start = t - CORR_SKEW_NS;
	int found;

	if (!batch_open0(c, c->g->ncl, start, t))
		return 0;
	found = store_open0_at(c->db->st, c->g->ns, c->g->rel, start, t,
			       p->opts.gap_ns);
	if (found)   /* known open: its ReplicaSets were classed so */
		return found < 0 ? found : 0;
	found = store_class0_in(c->db->st, c->g->ns, c->g->rel, start,
				next_deploy(c->rel, t) - CORR_SKEW_NS);
	if (found <= 0)
		return found;
	return corr_keyset_add(p, &p->rebuild, c->g->ns, c->g->rel);
}

static int deploys_opened(struct classify *c)
{
	int err = 0;

	for (size_t i = 0; c->rel && i < c->rel->nrevs && !err; i++) {
		int64_t t = c->rel->revs[i].updated_ns;

		if (t > 0 && t >= c->g->lo && t - CORR_SKEW_NS <= c->g->hi)
			err = deploy_opened(c, t);
	}
	return err;
}

int pipe_classify(struct pipeline_db *db, const struct corr_batch *b,
		  const struct corr_group *g)
{
	struct corr_plan *p = &db->plan;
	struct classify c = { db, b, g, NULL, NULL, 0, { 0 }, false, NULL };
	int err;

	c.rel = corr_registry_find(p->reg, g->ns, g->rel);
	c.seen = rt_arena_alloc(&p->arena, (g->ncl + 1) * sizeof(*c.seen));
	c.last0 = rt_arena_alloc(&p->arena, (g->ncl + 1) * sizeof(*c.last0));
	if (!c.seen || !c.last0)
		return RT_ENOMEM;
	rt_map_init(&c.map);
	err = classify_events(&c);
	rt_map_release(&c.map);
	if (!err)
		err = deploys_opened(&c);
	return err;
}

int pipe_classes_store(struct pipeline_db *db, const struct corr_key *k,
		       const struct corr_revclass *rc)
{
	struct rt_str ns = rt_str_make(k->ns, strlen(k->ns));
	struct rt_str rel = rt_str_make(k->rel, strlen(k->rel));
	int err = store_clear_replicasets(db->st, ns, rel);

	for (size_t i = 0; i < rc->nsets && !err; i++)
		err = store_write_replicaset(db->st, ns, rel,
					     rt_str_make(rc->sets[i].name,
						 strlen(rc->sets[i].name)),
					     rc->sets[i].first,
					     rc->sets[i].cls);
	return err;
}
