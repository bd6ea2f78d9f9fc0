/*
 * store.h: the SQLite store's writer side (docs/architecture.md "Who owns
 * what", "Batches and transactions").
 *
 * One writer per database file. A batch is written in ONE transaction
 * (store_begin .. store_end) -- Helm revisions, events, the incidents they
 * form, their diagnosis and the source positions -- so a crash leaves
 * either all of a batch or none of it, and re-reading the same input
 * afterwards (dedupe by event identity) ends exactly where an
 * uninterrupted run would. In between, the store only reads context rows
 * and writes plan rows (revtrail/plan.h); what to write is the
 * correlator's decision, and pipeline/ (pipeline_commit) runs the turns.
 * Schema: docs/schema.md; SQL text: store/sql.h.
 */
#ifndef REVTRAIL_STORE_H
#define REVTRAIL_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "revtrail/plan.h"
#include "revtrail/store_read.h"

enum {
	STORE_READONLY = 1u << 0,   /* store_open_read(path, NULL, ...) */
};

struct store_opts {
	int64_t gap_ns;               /* 0 = the database's (default 15m) */
	bool regap;                   /* a gap_ns other than the database's
	                               * recomputes all incidents; without
	                               * regap it is refused (RT_EINVAL) */
	FILE *log;                    /* -v: recomputations */
	/* The workload an object belongs to (the correlator's naming), for
	 * the migration that fills events.workload; NULL leaves it empty. */
	struct rt_str (*workload)(struct rt_str kind, struct rt_str name);
};

/*
 * Opens (and for a writer creates and migrates) the database. On failure
 * returns RT_EDB / RT_EIO / RT_ENOMEM, or RT_EINVAL for a gap change
 * without regap, with a message in err. A gap change (with regap) leaves
 * store_gap_changed true until the next store_end: the first commit then
 * recomputes every release.
 */
int store_open(const char *path, unsigned flags, const struct store_opts *o,
	       struct store **out, char *err, size_t errlen);
/* The gap the incidents had before this open recomputed them (regap),
 * else 0. */
int64_t store_regapped_from(const struct store *st);
/* The gap incidents are cut by (the database's, or the new one). */
int64_t store_gap(const struct store *st);
bool store_gap_changed(const struct store *st);

struct store_stats {
	uint64_t batches;
	uint64_t events_new, events_updated;
	uint64_t revisions;            /* revision rows written */
	uint64_t incidents_opened, incidents_updated, incidents_merged;
	uint64_t recomputed;           /* releases recomputed from events */
	uint64_t events_no_release;    /* new tagged events no release names
	                                * (yet): they join no incident */
	uint64_t registry_refused;     /* the pipeline's: revisions and
	                                * workload mappings past the release
	                                * registry's bounds (correlate.h) */
	uint64_t watermark_ignored;    /* the pipeline's: records too far
	                                * ahead to move the watermark
	                                * (corr_watermark) */
	uint64_t events_expired;       /* deleted by retention (--retain) */
	uint64_t incidents_expired;
};
/* Adds every counter of d to to (the store's per-commit counters into a
 * caller's, the writer thread's into its owner's). */
void store_stats_add(struct store_stats *to, const struct store_stats *d);

/* ---- one batch's transaction ----------------------------------------- */

/*
 * Releases are keyed by (cluster, namespace, release). Every read and
 * write below that names a release is of the current cluster (at open:
 * the default one, ""), so a batch holding several clusters is written
 * one cluster at a time. 0 or RT_ENOMEM.
 */
int store_use_cluster(struct store *st, const char *name);
/* Every cluster the database holds a release key of (strings valid until
 * store_end). */
int store_clusters(struct store *st, const char ***names, size_t *n);

/* BEGIN IMMEDIATE, this commit's counters at zero. Strings the reads
 * below hand out live until store_end or store_abort. */
int store_begin(struct store *st);
/* COMMIT; then adds this commit's counters to stats (may be NULL). On
 * error the transaction is rolled back. */
int store_end(struct store *st, struct store_stats *stats);
void store_abort(struct store *st);

/*
 * Retention, inside the batch's transaction: deletes at most about budget
 * rows of what aged out before horizon_ns: events outside any incident
 * whose last sighting is older (events of unknown time are kept), and
 * closed incidents last seen before it, with their events and objects.
 * Sets *more when aged rows were left for the next call. 0 or RT_EDB.
 */
int store_retain(struct store *st, int64_t horizon_ns, int64_t budget,
		 bool *more);
/* The median time of the events stored last (0 when none): the retention
 * clock of a writer before its first batch. 0 or RT_EDB. */
int store_recent_time(struct store *st, int64_t *ns);
/* Every stored event's known time, to fn (prune's clock reads them all). */
int store_each_event_time(struct store *st, void (*fn)(void *, int64_t),
			  void *ctx);

/* The current cluster's stored revisions and workload mappings, each row
 * to a callback (e.g. into the correlator's registry); a callback's error
 * stops the read. */
int store_read_registry(struct store *st,
			int (*rev)(void *ctx, const struct plan_revision *r),
			int (*alias)(void *ctx, const struct plan_alias *a),
			void *ctx);

/* -- context: reads -- */
int store_read_event(struct store *st, uint64_t ukey, struct plan_stored *out);
/* Incidents of (ns, rel) with last >= lo and opened <= hi, plus those of
 * incs; valid until the next call. */
int store_read_near(struct store *st, struct rt_str ns, struct rt_str rel,
		    int64_t lo, int64_t hi, const int64_t *incs, size_t nincs,
		    const struct plan_near **out, size_t *n);
/* Revision classes (correlate/revclass.c, store/classes.c). A
 * ReplicaSet of release (ns, rel): 1 and its first sighting and class,
 * 0 when none is stored, or an error. */
int store_read_replicaset(struct store *st, struct rt_str ns,
			  struct rt_str rel, struct rt_str name,
			  int64_t *first, int *cls);
int store_write_replicaset(struct store *st, struct rt_str ns,
			   struct rt_str rel, struct rt_str name,
			   int64_t first, int cls);
/* How many rows the release has (or an error). */
int64_t store_count_replicasets(struct store *st, struct rt_str ns,
				struct rt_str rel);
/* Every ReplicaSet of the release forgotten (a rebuild writes them anew). */
int store_clear_replicasets(struct store *st, struct rt_str ns,
			    struct rt_str rel);
/* 1 when a ReplicaSet of the release of class 0 was first seen in
 * [from, to), 0 when none, or an error. */
int store_class0_in(struct store *st, struct rt_str ns, struct rt_str rel,
		    int64_t from, int64_t to);
/* 1 when an incident of class 0 of the release opened before start and
 * its gap reaches t (a deploy at t joined it), 0 when none, or an error. */
int store_open0_at(struct store *st, struct rt_str ns, struct rt_str rel,
		   int64_t start, int64_t t, int64_t gap_ns);
struct store_key {
	const char *ns, *rel;
};
int store_all_keys(struct store *st, struct store_key **keys, size_t *n);
int store_keys_of_name(struct store *st, const char *rel, const char ***ns,
		       size_t *n);
int store_key_namespaces(struct store *st, const char ***ns, size_t *n);
/* Namespaces of the events of key (keyns, rel) attributed by via. */
int store_job_namespaces(struct store *st, const char *keyns, const char *rel,
			 int via, const char ***ns, size_t *n);
/* Events of namespace ns with an inferred release whose workload is
 * name, a '-' boundary prefix of it, or below it ("name-..."). */
int store_claimable(struct store *st, const char *ns, const char *name,
		    struct plan_evrow **rows, size_t *n);
int store_incidents_of_key(struct store *st, const char *ns, const char *rel,
			   int64_t **ids, size_t *n);
/* A release's clustering events in time order: store_key_next gives 1
 * and a row (valid until the next call), 0 at the end, or an error.
 * Writes may go on between calls. */
void store_key_scan(struct store *st, const char *ns, const char *rel);
/* The same scan again (another pass of one rebuild: not counted twice). */
void store_key_rescan(struct store *st, const char *ns, const char *rel);
int store_key_next(struct store *st, struct plan_keyrow *row);
void store_key_scan_end(struct store *st);
/* 1 and row, or 0 when the incident is gone (merged, dropped). */
int store_read_incident(struct store *st, int64_t id, struct plan_incrow *row);
/* The incident's first pods and one object per glob ("Kind/glob" or
 * "glob"), sorted by kind and name; valid until the next call. The pods
 * come without last_ns and events (0), which no diagnosis reads. */
int store_read_objects(struct store *st, int64_t id, const char *const *globs,
		       size_t nglobs, const struct plan_object **out,
		       size_t *n);
/* The incident's captures and the revisions of its release with other
 * incidents, into row (plan.h, struct corr_capture); valid until the
 * commit ends. */
int store_read_captures(struct store *st, int64_t id, struct plan_incrow *row);
int64_t store_watermark(const struct store *st);

/* -- plan: writes -- */
/* A revision's manifest summary (ingest/helm_summary.c) onto its stored
 * row; nothing when the row is not there. */
int store_write_summary(struct store *st, const char *ns, const char *rel,
			int revision, int life, struct rt_str summary);
int store_write_revision(struct store *st, const struct plan_revision *r);
/* A number's timeless statements (correlate.h corr_loose) in place of
 * what revision_timeless held of it: u (updated_ns 0) and own, the fields
 * of the revision holding u without it (NULL: none holds it). */
int store_write_timeless(struct store *st, const struct plan_revision *u,
			 const struct plan_revision *own);
/* Every revision of one release (revs[0].ns, .rel), after its lives were
 * numbered again (CORR_REG_RELIFE): stored rows move to their revision's
 * new life, matched by number and a time within slack_ns (their manifest
 * summaries with them), rows no revision matches are dropped, and each
 * revision is written. */
int store_write_lives(struct store *st, const struct plan_revision *revs,
		      size_t n, int64_t slack_ns);
int store_write_alias(struct store *st, const struct plan_alias *a);
int store_key_add(struct store *st, struct rt_str ns, struct rt_str rel);
int store_write_move(struct store *st, const struct plan_move *m);
/* The events a workload mapping gave (via label) of workload in ns,
 * attributed to (rel_ns, rel): a mapping that begins later may take
 * them. Rows live until the commit ends. */
int store_mapped(struct store *st, const char *ns, const char *workload,
		 const char *rel_ns, const char *rel, struct plan_evrow **rows,
		 size_t *n);
/* Moves key (keyns, rel)'s events of namespace jobns attributed by via
 * to namespace target; *moved when any did. */
int store_move_jobs(struct store *st, const char *target, const char *keyns,
		    const char *rel, int via, const char *jobns, bool *moved);
int store_write_event(struct store *st, const struct plan_event *e,
		      const struct plan_evstate *x, int64_t incident);
/* The window's incident (*id: its id, new or not), its merges, its
 * events (of ev and xs, indexed alike) and objects. */
int store_write_window(struct store *st, const struct plan_event *ev,
		       const struct plan_evstate *xs,
		       const struct plan_window *w, int64_t *id);
int store_write_rebuilt(struct store *st, const struct plan_rebuilt *w,
			int64_t *id);
int store_drop_incident(struct store *st, int64_t id);
int store_write_revrange(struct store *st, const char *ns, const char *rel,
			 const struct plan_revrange *r);
/* Raises the watermark to max_ts and closes the incidents quiet for more
 * than the gap before it. */
int store_close_windows(struct store *st, int64_t max_ts);
/* Lowers the watermark to ns if it is past it (one a bad clock moved):
 * the incidents it closed reopen when their failures go on. */
int store_lower_watermark(struct store *st, int64_t ns);
int store_write_diag(struct store *st, int64_t id, const struct plan_diag *d);
int store_write_positions(struct store *st, const struct plan_batch_pos *pos,
			  size_t n);

/*
 * The incidents committed batches changed (consume --incidents-topic):
 * opened, extended, merged into, diagnosed, closed -- and deleted (merged
 * into another, recomputed), which carry the cluster, namespace and
 * release the row had.
 */
struct store_change {
	int64_t id;
	char *cluster, *ns, *release;   /* a deleted row's key; else NULL */
};
struct store_changes {
	struct store_change *v;
	size_t n, cap;
};
/* Starts collecting the changes of every transaction of this writer. */
int store_track_incidents(struct store *st);
/* After each commit (pipeline_commit): what its transaction changed goes
 * to *to when it committed, is dropped when to is NULL (a failed commit).
 * Returns 0, or RT_ENOMEM when some change could not be kept. */
int store_changes_settle(struct store *st, struct store_changes *to);
/* Appends one change (the key strings copied); 0 or RT_ENOMEM. One
 * change's strings are freed by store_change_free. */
int store_changes_add(struct store_changes *c, int64_t id, const char *cl,
		      const char *ns, const char *rel);
/* Sorts by id, each id once (with the key of a deletion, if one). */
void store_changes_unique(struct store_changes *c);
void store_change_free(struct store_change *e);
void store_changes_free(struct store_changes *c);

/*
 * The incidents outbox (table incident_outbox, store/outbox.c): the keys
 * (cluster, namespace, release, id) of the incidents changed by committed
 * transactions of a writer that tracks incidents, each once, in the order
 * of their last change, until store_outbox_done says a message produced
 * after that change was delivered.
 */
struct store_outbox_row {
	int64_t id;             /* the outbox row: a new one at each change */
	int64_t incident_id;
	const char *cluster, *ns, *release;
};
typedef int (*store_outbox_fn)(void *ctx, const struct store_outbox_row *r);
/* Up to limit rows with ids above after, in id order, to fn (which may
 * read st again). 0, RT_EDB, or fn's non-zero return. */
int store_outbox_read(struct store *st, int64_t after, int limit,
		      store_outbox_fn fn, void *ctx);
/* Removes the rows ids (those no longer there are skipped), in one
 * transaction of the writer's connection, never during a batch. */
int store_outbox_done(struct store *st, const int64_t *ids, size_t n);
/* This database's instance id (meta instance_id: 16 hex digits made when
 * the file was created or migrated to schema 14), which the incidents
 * topic's keys carry so that two instances' incident 3 are two keys. 0,
 * or RT_EDB (none: a file of an older schema read without migration). */
int store_instance_id(struct store *st, char *out, size_t size);

/* Work for a moment with no batch to commit: copies a WAL of more than a
 * few MiB back into the database, so that store_close has little left to
 * do. Never waits; errors are left to the next commit. */
void store_idle(struct store *st);

/* The committed position of a source (Kafka: next offset). Returns 0 and
 * sets *offset, 1 when unknown, or RT_EDB. */
int store_position(struct store *st, const char *source, int32_t partition,
		   int64_t *offset);

#endif
