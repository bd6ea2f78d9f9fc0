/*
 * cluster.c: one release registry per cluster, and a batch written one
 * cluster at a time.
 *
 * Releases are keyed by (cluster, namespace, release): `prod/api` of two
 * clusters are two releases, with their own revisions, workload mappings
 * and incidents. Rather than carry the cluster through every decision of
 * the correlator, each cluster has a registry of its own and a batch's
 * share of each cluster is committed in turn (commit_steps), with the
 * store's current cluster (store_use_cluster) bound to it in every
 * statement. The correlator then sees one cluster at a time, exactly as
 * it did before clusters existed, and a database with only the default
 * cluster '' is written as it always was.
 *
 * A batch of `ingest` holds one cluster; one of `consume` may hold the
 * records of several topics, hence several. All of them go in the same
 * transaction, with the source positions written once, after the last.
 * The watermark that closes incidents is shared: the clusters' clocks are
 * the same wall clock.
 */
#include <stdlib.h>
#include <string.h>

#include "revtrail/rt_kit.h"
#include "pipeline_int.h"

static bool name_is(const char *s, struct rt_str v)
{
	return strlen(s) == v.n && (v.n == 0 || memcmp(s, v.p, v.n) == 0);
}

static int cluster_add(struct pipeline_db *db, struct rt_str name)
{
	struct pipeline_cluster *c;
	size_t n = db->nclusters;

	c = realloc(db->clusters, (n + 1) * sizeof(*c));
	if (!c)
		return RT_ENOMEM;
	db->clusters = c;
	c[n].name = malloc(name.n + 1);
	c[n].reg = corr_registry_new();
	if (!c[n].name || !c[n].reg) {
		free(c[n].name);
		corr_registry_free(c[n].reg);
		return RT_ENOMEM;
	}
	corr_registry_set_budget(c[n].reg, db->registry_bytes);
	if (name.n)
		memcpy(c[n].name, name.p, name.n);
	c[n].name[name.n] = '\0';
	db->nclusters++;
	return 0;
}

static int load_rev(void *ctx, const struct plan_revision *r)
{
	return corr_registry_load_row(ctx, r) == RT_ENOMEM ? RT_ENOMEM : 0;
}

static int load_alias(void *ctx, const struct plan_alias *a)
{
	bool chg;

	return corr_registry_alias_merge(ctx, a->ns, a->workload, a->rel_ns,
					 a->rel, a->via, a->since_ns,
					 &chg) == RT_ENOMEM ?
		RT_ENOMEM : 0;
}

int cluster_use(struct pipeline_db *db, struct rt_str name)
{
	struct pipeline_cluster *c;
	size_t i;
	bool created;
	int err;

	if (db->cluster && name_is(db->cluster, name))
		return 0;
	for (i = 0; i < db->nclusters; i++)
		if (name_is(db->clusters[i].name, name))
			break;
	created = i == db->nclusters;
	if (created && (err = cluster_add(db, name)))
		return err;
	c = &db->clusters[i];
	if ((err = store_use_cluster(db->st, c->name)))
		return err;
	db->cluster = c->name;
	db->plan.reg = c->reg;
	if (!created)
		return 0;
	/* new: what the database holds of it */
	if ((err = store_read_registry(db->st, load_rev, load_alias,
				       c->reg))) {
		corr_registry_free(c->reg);
		free(c->name);
		db->nclusters--;
		db->cluster = NULL;
		db->plan.reg = NULL;
	}
	return err;
}

void cluster_release(struct pipeline_db *db)
{
	for (size_t i = 0; i < db->nclusters; i++) {
		free(db->clusters[i].name);
		corr_registry_free(db->clusters[i].reg);
	}
	free(db->clusters);
	free(db->sub_ev);
	free(db->sub_revs);
	free(db->sub_aliases);
}

uint64_t cluster_refused(const struct pipeline_db *db)
{
	uint64_t n = 0;

	for (size_t i = 0; i < db->nclusters; i++)
		n += corr_registry_refused(db->clusters[i].reg);
	return n;
}

static bool same(struct rt_str a, struct rt_str b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* The distinct clusters a batch names, in order of appearance (views). */
struct names {
	struct rt_str *v;
	size_t n, cap, last;
	int err;
};

static void names_add(struct names *l, struct rt_str s)
{
	if (l->n && same(l->v[l->last], s))
		return;                   /* the usual case: the last one */
	for (size_t i = 0; i < l->n; i++)
		if (same(l->v[i], s)) {
			l->last = i;
			return;
		}
	if (RT_GROW(l->v, l->n + 1, l->cap)) {
		l->err = RT_ENOMEM;
		return;
	}
	l->last = l->n;
	l->v[l->n++] = s;
}

/* Recomputing every incident (a new gap) covers every stored cluster. The
 * names are copied into clusters of the store (cluster_use). */
static int names_stored(struct pipeline_db *db, struct names *l)
{
	const char *keep = db->cluster, **names;
	size_t n;
	int err = store_clusters(db->st, &names, &n);

	for (size_t i = 0; i < n && !err; i++) {
		if ((err = cluster_use(db, rt_str_make(names[i],
						       strlen(names[i])))))
			break;
		names_add(l, rt_str_make(db->cluster, strlen(db->cluster)));
	}
	if (!err && keep)
		err = cluster_use(db, rt_str_make(keep, strlen(keep)));
	return err ? err : l->err;
}

static int batch_names(struct pipeline_db *db, const struct corr_batch *b,
		       struct names *l)
{
	for (size_t i = 0; i < b->nev; i++)
		names_add(l, b->ev[i].cluster);
	for (size_t i = 0; i < b->nrevs; i++)
		names_add(l, b->revs[i].cluster);
	for (size_t i = 0; i < b->naliases; i++)
		names_add(l, b->aliases[i].cluster);
	if (!l->err && db->plan.rebuild_all)
		return names_stored(db, l);
	return l->err;
}

static int reserve(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n <= *cap)
		return 0;
	q = realloc(*p, n * size);
	if (!q)
		return RT_ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* sub: b's share of cluster c (copies of its events, revisions and
 * mappings, in the store's buffers), no positions. */
static int share_of(struct pipeline_db *db, const struct corr_batch *b,
		    struct rt_str c, struct corr_batch *sub)
{
	*sub = *b;
	if (reserve((void **)&db->sub_ev, &db->sub_evcap, b->nev,
		    sizeof(*db->sub_ev)) ||
	    reserve((void **)&db->sub_revs, &db->sub_revcap, b->nrevs,
		    sizeof(*db->sub_revs)) ||
	    reserve((void **)&db->sub_aliases, &db->sub_aliascap, b->naliases,
		    sizeof(*db->sub_aliases)))
		return RT_ENOMEM;
	sub->ev = db->sub_ev;
	sub->revs = db->sub_revs;
	sub->aliases = db->sub_aliases;
	sub->nev = sub->nrevs = sub->naliases = sub->npos = 0;
	for (size_t i = 0; i < b->nev; i++)
		if (same(b->ev[i].cluster, c))
			sub->ev[sub->nev++] = b->ev[i];
	for (size_t i = 0; i < b->nrevs; i++)
		if (same(b->revs[i].cluster, c))
			sub->revs[sub->nrevs++] = b->revs[i];
	for (size_t i = 0; i < b->naliases; i++)
		if (same(b->aliases[i].cluster, c))
			sub->aliases[sub->naliases++] = b->aliases[i];
	return 0;
}

/* The batch's repeats of cluster c (all: of any) in their buckets' rows,
 * before its share is copied: a bucket past a row's cap adds events. */
static int place_repeats(struct pipeline_db *db, struct corr_batch *b,
			 struct rt_str c, bool all)
{
	size_t n = b->nev;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		if (b->ev[i].repeat && (all || same(b->ev[i].cluster, c)))
			err = place_repeat(db, b, i);
	return err;
}

int cluster_commit(struct pipeline_db *db, struct corr_batch *b)
{
	struct names l = { 0 };
	struct corr_batch sub;
	int err;

	if ((err = batch_names(db, b, &l)))
		goto out;
	if (l.n <= 1) {                   /* all of it: no copies */
		if ((l.n && (err = cluster_use(db, l.v[0]))) ||
		    (err = place_repeats(db, b, RT_STR_NULL, true)))
			goto out;
		err = commit_steps(db, b);
		goto out;
	}
	for (size_t i = 0; i < l.n && !err; i++) {
		if ((err = cluster_use(db, l.v[i])) ||
		    (err = place_repeats(db, b, l.v[i], false)) ||
		    (err = share_of(db, b, l.v[i], &sub)))
			break;
		if (i + 1 == l.n)
			sub.npos = b->npos;
		err = commit_steps(db, &sub);
	}
out:
	free(l.v);
	return err;
}
