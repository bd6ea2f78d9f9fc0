/*
 * pipeline_int.h (private to pipeline/): a database open for writing, the
 * correlator's state beside it, and the clusters' registries.
 */
#ifndef REVTRAIL_PIPELINE_INT_H
#define REVTRAIL_PIPELINE_INT_H

#include "revtrail/writer.h"

/* A cluster's own release registry. */
struct pipeline_cluster {
	char *name;                       /* "" for the default cluster */
	struct corr_registry *reg;
};

struct pipeline_db {
	struct store *st;
	struct corr_plan plan;            /* plan.reg: the current cluster's */
	FILE *log;
	struct pipeline_cluster *clusters;
	size_t nclusters;
	const char *cluster;              /* the current one's name */
	size_t registry_bytes;            /* a registry's budget */
	uint64_t refused_counted;         /* registry refusals in stats */
	int64_t retain_ns;                /* --retain, or 0 */
	struct corr_retain_clock retain_clock;
	struct corr_watermark watermark;  /* closes incidents */
	uint64_t ignored_counted;         /* watermark.ignored in stats */
	struct plan_event *sub_ev;        /* cluster.c: one cluster's share */
	size_t sub_evcap;
	struct rt_revision *sub_revs;     /* of a batch of several */
	size_t sub_revcap;
	struct plan_alias *sub_aliases;
	size_t sub_aliascap;
};

/* commit.c: one cluster's share of a batch, inside the transaction. */
int commit_steps(struct pipeline_db *db, struct corr_batch *b);
/* A repeat of the batch placed in its bucket's stored rows (commit.c). */
/* classes.c: the revision class of each of g's events (evs[].cls),
 * ReplicaSets met for the first time stored with theirs. */
int pipe_classify(struct pipeline_db *db, const struct corr_batch *b,
		  const struct corr_group *g);
/* The ReplicaSets of a rebuilt release, as its last scan classed them. */
int pipe_classes_store(struct pipeline_db *db, const struct corr_key *k,
		       const struct corr_revclass *rc);
int place_repeat(struct pipeline_db *db, struct corr_batch *b, size_t i);

/* cluster.c */
/* Makes name the current cluster of the correlator and the store, loading
 * its registry on first use. 0 or RT_ENOMEM / RT_EDB. */
int cluster_use(struct pipeline_db *db, struct rt_str name);
/* commit_steps for each cluster the batch (or, recomputing all, the
 * database) holds, the source positions with the last. */
int cluster_commit(struct pipeline_db *db, struct corr_batch *b);
void cluster_release(struct pipeline_db *db);
/* The refusals of every cluster's registry (corr_registry_refused). */
uint64_t cluster_refused(const struct pipeline_db *db);

#endif
