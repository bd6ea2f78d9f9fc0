/*
 * commit.c: one batch through the correlator into the store, in one
 * transaction (pipeline_commit).
 *
 * This is the only place that talks to both: it asks the store for the
 * context a decision needs, hands it to the correlator (corr_plan_*), and
 * gives the store the rows the correlator answered. In order:
 *
 *   1. revisions and workload mappings into the registry; the stored
 *      events a new release or mapping claims move (both their releases
 *      are then recomputed);
 *   2. the batch's events attributed, met with the stored rows of their
 *      identities, and laid, per release, over the incidents near them;
 *   3. releases whose events changed hands recomputed from their events;
 *   4. events' revisions after a release's revisions changed;
 *   5. incidents closed by the watermark; every incident touched
 *      diagnosed again; the sources' positions;
 *   6. with --retain, a share of what aged out deleted (store/retain.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline_int.h"

static struct rt_str str(const char *s)
{
	return rt_str_make(s, strlen(s));
}

/* ---- 1. the registry ------------------------------------------------- */

/* Events of namespace ns whose release was only inferred are attributed
 * again when name (a new release, a new workload mapping) is learned. */
static int claim(struct pipeline_db *db, const char *ns, const char *name)
{
	struct corr_plan *p = &db->plan;
	struct plan_evrow *rows;
	struct plan_move *m;
	size_t n, nm;
	int err;

	if ((err = store_claimable(db->st, ns, name, &rows, &n)) ||
	    (err = corr_plan_moves(p, rows, n, &m, &nm)))
		return err;
	for (size_t i = 0; i < nm && !err; i++) {
		err = store_write_move(db->st, &m[i]);
		if (!err)
			err = corr_keyset_add(p, &p->rebuild, str(m[i].old_ns),
					      str(m[i].old_rel));
		if (!err)
			err = corr_keyset_add(p, &p->rebuild, str(m[i].rel_ns),
					      str(m[i].rel));
	}
	if (!err && nm && db->log)
		fprintf(db->log, "revtrail: %zu events of %s in %s attributed "
			"again\n", nm, name, ns);
	return err;
}

/* The events a mapping of workload w gave (via label) may belong to a
 * mapping that begins later (or earlier) than the one they got: each is
 * attributed again at its time. Only a change of release moves one: an
 * event whose own labels named its release keeps them. */
static int claim_mapped(struct pipeline_db *db, const char *ns, const char *w)
{
	struct corr_plan *p = &db->plan;
	const char *rns[CORR_ALIAS_RELEASES], *rel[CORR_ALIAS_RELEASES];
	size_t nr = corr_registry_alias_releases(p->reg, str(ns), str(w), rns,
						 rel, CORR_ALIAS_RELEASES);
	int err = 0;

	for (size_t i = 0; i < nr && nr > 1 && !err; i++) {
		struct plan_evrow *rows;
		struct plan_move *m;
		size_t n, nm;

		if ((err = store_mapped(db->st, ns, w, rns[i], rel[i], &rows,
					&n)) ||
		    (err = corr_plan_moves(p, rows, n, &m, &nm)))
			return err;
		for (size_t j = 0; j < nm && !err; j++) {
			if (!strcmp(m[j].old_ns, m[j].rel_ns) &&
			    !strcmp(m[j].old_rel, m[j].rel))
				continue;
			err = store_write_move(db->st, &m[j]);
			if (!err)
				err = corr_keyset_add(p, &p->rebuild,
						      str(m[j].old_ns),
						      str(m[j].old_rel));
			if (!err)
				err = corr_keyset_add(p, &p->rebuild,
						      str(m[j].rel_ns),
						      str(m[j].rel));
		}
	}
	return err;
}

/* helm-install-R job events: keyed by the job's namespace unless R is only
 * known elsewhere (HelmChart targetNamespace). */
static int claim_jobs(struct pipeline_db *db, const char *r)
{
	struct corr_plan *p = &db->plan;
	const char **keyns, **jobns;
	size_t nk, nj;
	int err;

	if ((err = store_keys_of_name(db->st, r, &keyns, &nk)))
		return err;
	for (size_t i = 0; i < nk && !err; i++) {
		err = store_job_namespaces(db->st, keyns[i], r, PLAN_VIA_JOB,
					   &jobns, &nj);
		for (size_t j = 0; j < nj && !err; j++) {
			const char *target = corr_job_target(p->reg, jobns[j], r);
			bool moved;

			if (strcmp(target, keyns[i]) == 0)
				continue;
			err = store_move_jobs(db->st, target, keyns[i], r,
					      PLAN_VIA_JOB, jobns[j], &moved);
			if (!err && moved)
				err = corr_keyset_add(p, &p->rebuild,
						      str(keyns[i]), str(r));
			if (!err && moved)
				err = corr_keyset_add(p, &p->rebuild,
						      str(target), str(r));
		}
	}
	return err;
}

/* A release without a namespace stands for it in every namespace that has
 * none of its own: its changes concern every key of that name, and it
 * may claim events in each. */
static int anyns_dirty(struct pipeline_db *db, const char *r)
{
	const char **ns;
	size_t n;
	int err = store_keys_of_name(db->st, r, &ns, &n);

	for (size_t i = 0; i < n && !err; i++)
		err = corr_keyset_add(&db->plan, &db->plan.revdirty, str(ns[i]),
				      str(r));
	return err;
}

static int anyns_claim(struct pipeline_db *db, const char *r)
{
	const char **ns;
	size_t n;
	int err = store_key_namespaces(db->st, &ns, &n);

	for (size_t i = 0; i < n && !err; i++)
		if (corr_anyns_claims(db->plan.reg, ns[i], r))
			err = claim(db, ns[i], r);
	return err;
}

/* Every revision of rel, its lives numbered again. */
static int lives_write(struct pipeline_db *db, const struct corr_release *rel)
{
	struct plan_revision *rows = malloc(rel->nrevs * sizeof(*rows));
	int err;

	if (!rows)
		return RT_ENOMEM;
	for (size_t i = 0; i < rel->nrevs; i++)
		corr_revision_row(rel, &rel->revs[i], &rows[i]);
	err = store_write_lives(db->st, rows, rel->nrevs, CORR_LIFE_SLACK_NS);
	free(rows);
	return err;
}

/* The timeless statements of rel's number n, and the fields of the
 * revision holding them without them. */
static int timeless_write(struct pipeline_db *db,
			  const struct corr_release *rel, int n)
{
	const struct corr_loose *l = corr_release_loose(rel, n);
	struct plan_revision u, own;

	if (!l)
		return 0;
	corr_revision_row(rel, &l->u, &u);
	corr_revision_row(rel, &l->own, &own);
	return store_write_timeless(db->st, &u,
				    l->own.updated_ns ? &own : NULL);
}

/* A revision deployed while an incident of its release was open: the
 * pods it made since may be failures of its own (correlate/revclass.c),
 * which only a rebuild tells apart. */
static int deployed_open(struct pipeline_db *db, const struct corr_release *rel,
			 const struct corr_rev *r)
{
	struct corr_plan *p = &db->plan;
	const struct plan_near *near;
	size_t n;
	int err;

	if (r->updated_ns <= 0)
		return 0;
	if ((err = store_read_near(db->st, str(rel->ns), str(rel->name),
				   r->updated_ns - p->opts.gap_ns,
				   r->updated_ns - CORR_SKEW_NS - 1, NULL, 0,
				   &near, &n)) || !n)
		return err;
	return corr_keyset_add(p, &p->rebuild, str(rel->ns), str(rel->name));
}

static int revisions_merge(struct pipeline_db *db, const struct corr_batch *b)
{
	struct corr_plan *p = &db->plan;
	struct corr_keyset fresh = { 0 };
	int err = 0;

	for (size_t i = 0; i < b->nrevs && !err; i++) {
		const struct corr_release *rel;
		const struct corr_rev *r;
		struct plan_revision row;
		unsigned chg;

		err = corr_registry_merge(p->reg, &b->revs[i], &chg, &rel, &r);
		/* No release name: nothing to key. Past the registry's
		 * bounds: counted there (cluster_refused), not stored. */
		if (err == RT_EINVAL || err == RT_ELIMIT) {
			err = 0;
			continue;
		}
		if (err)
			continue;
		if (chg & CORR_REG_RELIFE) {
			err = lives_write(db, rel);
		} else if (chg & CORR_REG_CHANGED) {
			corr_revision_row(rel, r, &row);
			err = store_write_revision(db->st, &row);
		}
		if (!err && (chg & CORR_REG_TIMELESS))
			err = timeless_write(db, rel, r->revision);
		if (!err && b->revs[i].manifest_summary.n)
			err = store_write_summary(db->st, rel->ns, rel->name,
						  r->revision, r->life,
						  b->revs[i].manifest_summary);
		if (err || !(chg & CORR_REG_CHANGED))
			continue;
		err = corr_keyset_add(p, &p->revdirty, str(rel->ns),
				      str(rel->name));
		if (!err)
			err = deployed_open(db, rel, r);
		if (!err && !rel->ns[0])
			err = anyns_dirty(db, rel->name);
		if (!err && (chg & CORR_REG_NEW_RELEASE))
			err = corr_keyset_add(p, &fresh, str(rel->ns),
				      str(rel->name));
	}
	for (size_t i = 0; i < fresh.n && !err; i++) {
		err = claim(db, fresh.k[i].ns, fresh.k[i].rel);
		if (!err && !fresh.k[i].ns[0])
			err = anyns_claim(db, fresh.k[i].rel);
		if (!err)
			err = claim_jobs(db, fresh.k[i].rel);
	}
	corr_keyset_free(&fresh);
	return err;
}

static int aliases_merge(struct pipeline_db *db, const struct corr_batch *b)
{
	struct corr_plan *p = &db->plan;
	int err = 0;

	for (size_t i = 0; i < b->naliases && !err; i++) {
		const struct plan_alias *a = &b->aliases[i];
		struct rt_str ns, w;
		bool chg;

		err = corr_registry_alias_merge(p->reg, a->ns, a->workload,
						a->rel_ns, a->rel, a->via,
						a->since_ns, &chg);
		if (err == RT_EINVAL || err == RT_ELIMIT)
			err = 0;
		if (err || !chg)
			continue;
		ns = rt_arena_strdup(&p->arena, a->ns.p, a->ns.n);
		w = rt_arena_strdup(&p->arena, a->workload.p, a->workload.n);
		err = ns.p && w.p ? store_write_alias(db->st, a) : RT_ENOMEM;
		/* "ConfigMap/x": the events of object x may move */
		if (!err)
			err = claim(db, ns.p, strchr(w.p, '/') ?
				    strchr(w.p, '/') + 1 : w.p);
		if (!err && !strchr(w.p, '/'))
			err = claim_mapped(db, ns.p, w.p);
		/* "HelmChart/r": where its job's events belong */
		if (!err && !strncmp(w.p, "HelmChart/", 10)) {
			struct rt_str r = rt_arena_strdup(&p->arena, a->rel.p,
							  a->rel.n);

			err = r.p ? claim_jobs(db, r.p) : RT_ENOMEM;
		}
	}
	return err;
}

/* ---- 2. events and windows ------------------------------------------ */

/* Repeat i (its bucket's row 0 key) against the bucket's stored rows:
 * the times they hold already are dropped from it, then it is placed in
 * the last row or new ones (corr_batch_repeat_place). */
int place_repeat(struct pipeline_db *db, struct corr_batch *b, size_t i)
{
	uint64_t group = b->ev[i].ukey;
	struct plan_stored s, last = { 0 };
	int64_t held[CORR_REPEAT_CAP];
	uint32_t j;
	int err;

	for (j = 0; j < CORR_REPEAT_ROWS; j++) {
		struct plan_event *e = &b->ev[i];
		long n;

		if ((err = store_read_event(db->st, corr_repeat_row(group, j),
					    &s)))
			return err;
		if (!s.found)
			break;
		n = s.times ? corr_times_decode(s.times, s.times_bytes, held,
						CORR_REPEAT_CAP) : -1;
		if (n > 0)
			e->ntimes = (uint32_t)corr_times_minus(e->times,
						e->ntimes, held, (size_t)n);
		last = s;
	}
	return corr_batch_repeat_place(b, i, j, &last);
}


/* One release's events: extend its incidents, or leave them to rebuild. */
static int write_group(struct pipeline_db *db, const struct corr_batch *b,
		       const size_t *idx, size_t n)
{
	struct corr_plan *p = &db->plan;
	const struct plan_near *near;
	struct plan_window *w;
	struct corr_group g;
	size_t nnear, nw;
	int err;

	if ((err = corr_plan_group(p, b, idx, n, &g)))
		return err;
	if (g.keyed && (err = store_key_add(db->st, g.ns, g.rel)))
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		const struct plan_evstate *x = &p->evs[idx[i]];

		if (!x->cluster || g.deferred)   /* rebuild assigns it */
			err = store_write_event(db->st, &b->ev[idx[i]], x,
						x->cluster ? x->inc : 0);
	}
	if (err || !g.ncl)
		return err;
	if ((err = pipe_classify(db, b, &g)))
		return err;
	if ((err = store_read_near(db->st, g.ns, g.rel, g.lo, g.hi, g.incs,
				   g.nincs, &near, &nnear)))
		return err;
	/* the windows first all the same: the rebuild then reuses their
	 * ids, and where no class is non-zero it changes nothing */
	if (corr_plan_classy(p, b, &g, near, nnear) &&
	    (err = corr_keyset_add(p, &p->rebuild, g.ns, g.rel)))
		return err;
	if ((err = corr_plan_windows(p, b, &g, near, nnear, &w, &nw)))
		return err;
	for (size_t k = 0; k < nw && !err; k++) {
		int64_t id;

		err = store_write_window(db->st, b->ev, p->evs, &w[k], &id);
		if (!err)
			err = corr_plan_touch(p, id);
	}
	return err;
}

static int commit_events(struct pipeline_db *db, struct corr_batch *b)
{
	struct corr_plan *p = &db->plan;
	int err;

	if (b->nev == 0)
		return 0;
	if ((err = corr_plan_events(p, b->nev)))
		return err;
	for (size_t i = 0; i < b->nev; i++) {
		struct plan_stored s;

		if ((err = store_read_event(db->st, b->ev[i].ukey, &s)) ||
		    (err = corr_plan_event(p, &b->ev[i], &s, &p->evs[i])))
			return err;
	}
	corr_plan_order(p, b);
	for (size_t a = 0, z; a < b->nev; a = z) {
		z = corr_plan_group_end(p, b, a);
		if ((err = write_group(db, b, p->order + a, z - a)))
			return err;
	}
	return 0;
}

/* ---- 3. rebuilds, 4. revisions ---------------------------------------- */

static int write_rebuilt(struct pipeline_db *db, struct corr_rebuild *rb,
			 const struct plan_rebuilt *w)
{
	int64_t id;
	int err = store_write_rebuilt(db->st, w, &id);

	if (!err && !w->id)
		err = corr_rebuild_made(rb, id);
	return err ? err : corr_plan_touch(&db->plan, id);
}

/* One scan of a release's events: the windows of the pass, written as
 * they close. A first pass that meets a revision class stops early. */
static int rebuild_pass(struct pipeline_db *db, struct corr_rebuild *rb)
{
	struct corr_plan *p = &db->plan;
	struct plan_rebuilt done;
	struct plan_keyrow row;
	bool stop = false;
	int rc, err = 0;

	while (!err && !stop && (rc = store_key_next(db->st, &row)) == 1) {
		err = corr_rebuild_row(p, rb, &row, &done);
		if (err == 1)
			err = write_rebuilt(db, rb, &done);
		stop = rb->classy && rb->pass == CORR_PASS_ALL;
	}
	if (err || stop)
		store_key_scan_end(db->st);
	else if (rc < 0)
		err = rc;
	if (!err && !stop && (err = corr_rebuild_end(p, rb, &done)) == 1)
		err = write_rebuilt(db, rb, &done);
	return err;
}

/* A release's incidents recomputed from its stored events, streaming in
 * time order, reusing incident ids where they overlap; once per revision
 * class when a revision's own new pods fail (correlate/revclass.c). */
static int rebuild_key(struct pipeline_db *db, const struct corr_key *k)
{
	struct corr_plan *p = &db->plan;
	struct corr_rebuild rb;
	int64_t *old, *unused;
	size_t nold, nun;
	int err;

	if ((err = store_incidents_of_key(db->st, k->ns, k->rel, &old, &nold)) ||
	    (err = corr_rebuild_begin(p, &rb, k, old, nold)))
		return err;
	store_key_scan(db->st, k->ns, k->rel);
	err = rebuild_pass(db, &rb);
	while (!err && corr_rebuild_next_pass(p, &rb, &err)) {
		store_key_rescan(db->st, k->ns, k->rel);
		err = rebuild_pass(db, &rb);
	}
	if (!err)
		err = pipe_classes_store(db, k, rb.rc);
	unused = rt_arena_alloc(&p->arena, (rb.nold + 1) * sizeof(*unused));
	nun = corr_rebuild_unused(&rb, unused);
	if (!err && !unused)
		err = RT_ENOMEM;
	for (size_t i = 0; i < nun && !err; i++)
		err = store_drop_incident(db->st, unused[i]);
	return err;
}

/* events.revision and the incidents to diagnose again after a release's
 * revisions changed. */
static int revisions_apply(struct pipeline_db *db, const struct corr_key *k)
{
	struct plan_revrange *r;
	int64_t *ids;
	size_t n, nids;
	int err = corr_plan_revranges(&db->plan, k, &r, &n);

	for (size_t i = 0; i < n && !err; i++)
		err = store_write_revrange(db->st, k->ns, k->rel, &r[i]);
	if (err || (err = store_incidents_of_key(db->st, k->ns, k->rel, &ids,
						 &nids)))
		return err;
	for (size_t i = 0; !err && i < nids; i++)
		err = corr_plan_touch(&db->plan, ids[i]);
	return err;
}

/* ---- 5. diagnosis ----------------------------------------------------- */

static int id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int diagnose_touched(struct pipeline_db *db)
{
	struct corr_plan *p = &db->plan;
	int err = 0;

	if (p->ntouched)
		qsort(p->touched, p->ntouched, sizeof(*p->touched), id_cmp);
	for (size_t i = 0; i < p->ntouched && !err; i++) {
		const struct plan_object *objs;
		struct plan_incrow row;
		struct plan_diag d;
		size_t n;
		int64_t id = p->touched[i];

		if (i && id == p->touched[i - 1])
			continue;
		if ((err = store_read_incident(db->st, id, &row)) <= 0)
			continue;   /* gone: merged or dropped */
		err = store_read_objects(db->st, id, p->globs, p->nglobs,
					 &objs, &n);
		if (!err)
			err = store_read_captures(db->st, id, &row);
		if (!err)
			err = corr_plan_diag(p, &row, objs, n,
					     store_watermark(db->st), &d);
		if (!err)
			err = store_write_diag(db->st, id, &d);
	}
	return err;
}

/* ---- the transaction ------------------------------------------------ */

int commit_steps(struct pipeline_db *db, struct corr_batch *b)
{
	struct corr_plan *p = &db->plan;
	int err;

	corr_plan_begin(p);
	if ((err = revisions_merge(db, b)) || (err = aliases_merge(db, b)))
		return err;
	corr_batch_attribute(b, p->reg, &p->opts);
	if (p->rebuild_all) {
		struct store_key *keys;
		size_t n;

		if ((err = store_all_keys(db->st, &keys, &n)))
			return err;
		for (size_t i = 0; i < n && !err; i++)
			err = corr_keyset_add(p, &p->rebuild, str(keys[i].ns),
					      str(keys[i].rel));
		if (err)
			return err;
	}
	if ((err = commit_events(db, b)))
		return err;
	for (size_t i = 0; i < p->rebuild.n; i++) {
		const struct corr_key *k = &p->rebuild.k[i];

		if ((err = rebuild_key(db, k)) ||
		    (err = corr_keyset_add(p, &p->revdirty, str(k->ns),
					   str(k->rel))))
			return err;
	}
	for (size_t i = 0; i < p->revdirty.n; i++)
		if ((err = revisions_apply(db, &p->revdirty.k[i])))
			return err;
	if ((err = store_close_windows(db->st, db->watermark.ns)) ||
	    (err = diagnose_touched(db)))
		return err;
	return store_write_positions(db->st, b->pos, b->npos);
}

static int64_t wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The batch moves the watermark that closes incidents in every cluster's
 * share (correlate/retain.c says how); one a bad clock had moved past the
 * wall clock comes back. */
static int watermark(struct pipeline_db *db, const struct corr_batch *b)
{
	corr_watermark_observe(&db->watermark, b, wall_ns());
	return store_lower_watermark(db->st, db->watermark.ns);
}

/* ---- 6. retention ---------------------------------------------------- */

/* Twice the batch's events, so deletion outruns what comes in and the file
 * stops growing; the floor lets a quiet stream catch up on a backlog. */
#define RETAIN_BUDGET_FLOOR 1024

static int retain(struct pipeline_db *db, const struct corr_batch *b)
{
	int64_t budget = RETAIN_BUDGET_FLOOR + 2 * (int64_t)b->nev;
	bool more;

	corr_retain_observe(&db->retain_clock, b, wall_ns());
	if (db->retain_clock.now <= db->retain_ns)
		return 0;
	return store_retain(db->st, db->retain_clock.now - db->retain_ns,
			    budget, &more);
}

/* Before its first batch a writer's clock is where the stored data
 * stands, so a restart (or prune) goes on where the last run was. */
static int retain_start(struct pipeline_db *db)
{
	int64_t t;
	int err = store_recent_time(db->st, &t);

	if (!err)
		corr_retain_start(&db->retain_clock, t < wall_ns() ? t :
				  wall_ns());
	return err;
}

#define PRUNE_BUDGET 20000

static void clock_add(void *c, int64_t t)
{
	corr_retain_add(c, t);
}

/* A writer starts from a quick estimate that errs on the late side; prune,
 * run once, reads every stored time for the clock a writer would have. */
int pipeline_prune(struct pipeline_db *db, struct store_stats *stats)
{
	struct corr_retain_clock *c = &db->retain_clock;
	bool more = true;
	int64_t horizon;
	int err;

	if (!db->retain_ns)
		return 0;
	if ((err = store_each_event_time(db->st, clock_add, c)))
		return err;
	corr_retain_settle(c, wall_ns());
	if ((horizon = c->now - db->retain_ns) <= 0)
		return 0;
	while (more && !err) {
		if ((err = store_begin(db->st)))
			break;
		err = store_retain(db->st, horizon, PRUNE_BUDGET, &more);
		if (err)
			store_abort(db->st);
		else
			err = store_end(db->st, stats);
	}
	return err;
}

int pipeline_commit(struct pipeline_db *db, struct corr_batch *b,
		    struct store_stats *stats)
{
	int err = store_begin(db->st);
	uint64_t refused;

	if (err)
		return err;
	db->plan.rebuild_all = store_gap_changed(db->st);
	if ((err = watermark(db, b)) || (err = cluster_commit(db, b)) ||
	    (db->retain_ns && (err = retain(db, b)))) {
		/* The in-memory registry may now be ahead of the database:
		 * callers stop at a failed commit (see writer.h). */
		store_abort(db->st);
		return err;
	}
	if ((err = store_end(db->st, stats)))
		return err;
	refused = cluster_refused(db);
	if (stats)
		stats->registry_refused += refused - db->refused_counted;
	db->refused_counted = refused;
	if (stats)
		stats->watermark_ignored += db->watermark.ignored -
			db->ignored_counted;
	db->ignored_counted = db->watermark.ignored;
	return 0;
}

/* ---- open and close ------------------------------------------------- */

static struct rt_str workload_of(struct rt_str kind, struct rt_str name)
{
	return corr_workload_name(kind, name, RT_STR_NULL);
}

/* The plan, and the default cluster's registry as stored. */
static int open_plan(struct pipeline_db *db, const struct pipeline_opts *o)
{
	struct corr_opts co = { 0 };
	int err;

	co.gap_ns = store_gap(db->st);
	co.release_ns = o ? o->release_ns : NULL;
	co.release_name = o ? o->release_name : NULL;
	if ((err = corr_plan_init(&db->plan, NULL, &co, o ? o->rules : NULL)))
		return err;
	return cluster_use(db, RT_STR_NULL);
}

int pipeline_db_open(const char *path, const struct pipeline_opts *o,
		     struct pipeline_db **out, char *err, size_t errlen)
{
	struct store_opts so = { 0 };
	struct pipeline_db *db;
	int rc;

	*out = NULL;
	db = calloc(1, sizeof(*db));
	if (!db) {
		snprintf(err, errlen, "out of memory");
		return RT_ENOMEM;
	}
	db->registry_bytes = CORR_REGISTRY_BYTES;
	if (o) {
		so.gap_ns = o->gap_ns;
		so.regap = o->regap;
		so.log = o->log;
		db->log = o->log;
		if (o->registry_bytes)
			db->registry_bytes = o->registry_bytes;
		db->retain_ns = o->retain_ns;
	}
	so.workload = workload_of;
	if ((rc = store_open(path, 0, &so, &db->st, err, errlen))) {
		free(db);
		return rc;
	}
	if ((rc = open_plan(db, o))) {
		snprintf(err, errlen, "%s: %s", path, rc == RT_ENOMEM ?
			 rt_strerror(rc) : store_errmsg(db->st));
		pipeline_db_close(db);
		return rc;
	}
	corr_watermark_start(&db->watermark, store_watermark(db->st));
	if (db->retain_ns && (rc = retain_start(db))) {
		snprintf(err, errlen, "%s: %s", path, store_errmsg(db->st));
		pipeline_db_close(db);
		return rc;
	}
	/* A new gap changes every window: recompute them now, in one
	 * transaction (an empty batch). */
	if (store_gap_changed(db->st)) {
		struct corr_batch *b = corr_batch_new(false);

		if (db->log)
			fprintf(db->log, "revtrail: gap changed, recomputing "
				"all incidents\n");
		rc = b ? pipeline_commit(db, b, NULL) : RT_ENOMEM;
		corr_batch_free(b);
		if (rc) {
			snprintf(err, errlen, "%s: recomputing incidents for "
				 "the new gap: %s", path, store_errmsg(db->st));
			pipeline_db_close(db);
			return rc;
		}
	}
	*out = db;
	return 0;
}

struct store *pipeline_db_store(struct pipeline_db *db)
{
	return db->st;
}

void pipeline_db_close(struct pipeline_db *db)
{
	if (!db)
		return;
	store_close(db->st);
	corr_plan_release(&db->plan);
	cluster_release(db);
	free(db);
}
