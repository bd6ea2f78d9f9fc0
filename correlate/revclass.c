/*
 * revclass.c: which failures of a release belong to a revision of their
 * own (issue 32, item 5).
 *
 * A revision deployed while an incident of its release is open joins that
 * incident (a rollback, a retry), and so do the pods that were failing
 * before it: the seed's pods of revision 48, failing on after the rollback
 * to 47, are one incident. But the pods a revision creates are its own:
 * revision 6, deployed 30 s into revision 5's failure, whose new pods
 * crash-loop, is a failure of revision 6. A Deployment's pods are told
 * apart by their ReplicaSet, and a ReplicaSet belongs to the revision in
 * force when it was first seen.
 *
 * So every event gets a class: revision R when its pod's ReplicaSet was
 * first seen while R was in force and a class-0 window was open when R
 * was deployed; else 0. Incidents are then runs of one class. The classes
 * are decided over a release's events in time order, the order the
 * rebuild scans them in, which makes them a function of the stored events
 * and revisions alone: a ReplicaSet's first sighting is its first row, and
 * whether a class-0 window was open at R's deploy is known once the scan
 * reaches R's time (rows at or after it cannot change it).
 */
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"

static int deploy_cmp(const void *a, const void *b)
{
	const struct corr_deploy *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->rev - y->rev;
}

int corr_revclass_init(struct corr_revclass *c, const struct corr_release *rel,
		       int64_t gap_ns)
{
	memset(c, 0, sizeof(*c));
	rt_map_init(&c->map);
	c->gap_ns = gap_ns;
	if (!rel || !rel->nrevs)
		return 0;
	c->dep = malloc(rel->nrevs * sizeof(*c->dep));
	if (!c->dep)
		return RT_ENOMEM;
	for (size_t i = 0; i < rel->nrevs; i++)
		if (rel->revs[i].updated_ns > 0)
			c->dep[c->ndep++] = (struct corr_deploy){
				rel->revs[i].updated_ns, rel->revs[i].revision,
				false };
	qsort(c->dep, c->ndep, sizeof(*c->dep), deploy_cmp);
	return 0;
}

void corr_revclass_release(struct corr_revclass *c)
{
	for (size_t i = 0; i < c->nsets; i++)
		free(c->sets[i].name);
	free(c->sets);
	free(c->dep);
	rt_map_release(&c->map);
	memset(c, 0, sizeof(*c));
}

/* Whether a class-0 window was open at each deploy the scan has passed:
 * every row before the deploy's skewed time is in. */
static void pass_deploys(struct corr_revclass *c, int64_t first)
{
	while (c->next < c->ndep &&
	       c->dep[c->next].t - CORR_SKEW_NS <= first) {
		struct corr_deploy *d = &c->dep[c->next++];

		d->open = c->have0 && c->last0 + c->gap_ns >= d->t;
	}
}

/* The revision in force at ts among the deploys passed: the same choice
 * as corr_release_at. */
static const struct corr_deploy *deploy_at(const struct corr_revclass *c)
{
	return c->next ? &c->dep[c->next - 1] : NULL;
}

struct set_key {
	const struct corr_revclass *c;
	struct rt_str name;
};

static bool set_eq(const void *ctx, uint32_t idx)
{
	const struct set_key *k = ctx;
	const char *n = k->c->sets[idx].name;

	return strlen(n) == k->name.n && memcmp(n, k->name.p, k->name.n) == 0;
}

/* A ReplicaSet seen for the first time: its class, remembered. */
static int new_set(struct corr_revclass *c, struct rt_str rs, uint64_t h,
		   int64_t first, int *cls)
{
	const struct corr_deploy *d = deploy_at(c);
	char *name;
	int err;

	*cls = d && d->open ? d->rev : 0;
	if (c->nsets == CORR_REVCLASS_SETS) {
		c->refused++;   /* bounded: its pods stay in class 0 */
		*cls = 0;
		return 0;
	}
	if ((err = RT_GROW(c->sets, c->nsets + 1, c->alloc)))
		return err;
	name = malloc(rs.n + 1);
	if (!name)
		return RT_ENOMEM;
	memcpy(name, rs.p, rs.n);
	name[rs.n] = '\0';
	if ((err = rt_map_insert(&c->map, h, (uint32_t)c->nsets))) {
		free(name);
		return err;
	}
	c->sets[c->nsets++] = (struct corr_set){ name, *cls, first };
	return 0;
}

int corr_revclass_next(struct corr_revclass *c, struct rt_str pod,
		       int64_t first, int64_t last, int *cls)
{
	struct rt_str rs = corr_pod_replicaset(pod);
	int err;

	RT_ASSERT(!c->scanned || first >= c->scanned_to);
	c->scanned = true;
	c->scanned_to = first;
	pass_deploys(c, first);
	*cls = 0;
	if (rs.n) {
		struct set_key k = { c, rs };
		uint64_t h = rt_hash64(0, rs.p, rs.n);
		uint32_t i = rt_map_find(&c->map, h, set_eq, &k);

		if (i != RT_MAP_NONE)
			*cls = c->sets[i].cls;
		else if ((err = new_set(c, rs, h, first, cls)))
			return err;
	}
	if (*cls == 0) {
		if (last < first)
			last = first;
		if (!c->have0 || last > c->last0)
			c->last0 = last;
		c->have0 = true;
	}
	return 0;
}
