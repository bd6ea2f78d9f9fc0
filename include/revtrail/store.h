/*
 * store.h: the SQLite store (docs/architecture.md "Batches and transactions").
 *
 * One writer per database file. store_commit() writes one batch -- Helm
 * revisions, events, the incidents they form, their diagnosis and the
 * source positions -- in ONE transaction, so a crash leaves either all of a
 * batch or none of it, and re-reading the same input afterwards (dedupe by
 * event identity) ends exactly where an uninterrupted run would.
 *
 * Incidents are a deterministic function of the stored events and
 * revisions: a batch extends or merges the incidents its events touch
 * (adding events only ever merges windows), and a release whose events
 * changed hands (a release name learned later) is recomputed from its
 * stored events. Hence the incidents after all input do not depend on the
 * order it arrived in. Schema: README.md "Database schema"; SQL text: store/sql.h.
 */
#ifndef REVTRAIL_STORE_H
#define REVTRAIL_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "revtrail/correlate.h"
#include "revtrail/rules.h"
#include "revtrail/store_read.h"

enum {
	STORE_READONLY = 1u << 0,   /* store_open_read(path, NULL, ...) */
};

struct store_opts {
	int64_t gap_ns;               /* 0 = the database's (default 15m) */
	bool regap;                   /* a gap_ns other than the database's
	                               * recomputes all incidents; without
	                               * regap it is refused (RT_EINVAL) */
	const struct rules *rules;    /* diagnosis rules (kept by pointer) */
	const char *release_ns;       /* ingest --release, for records with */
	const char *release_name;     /* no object at all; may be NULL */
	FILE *log;                    /* -v: evictions, recomputations */
};

/*
 * Opens (and for a writer creates and migrates) the database. On failure
 * returns RT_EDB / RT_EIO / RT_ENOMEM, or RT_EINVAL for a gap change
 * without regap, with a message in err.
 */
int store_open(const char *path, unsigned flags, const struct store_opts *o,
	       struct store **out, char *err, size_t errlen);
/* The gap the incidents had before this open recomputed them (regap),
 * else 0. */
int64_t store_regapped_from(const struct store *st);

struct store_stats {
	uint64_t batches;
	uint64_t events_new, events_updated;
	uint64_t revisions;            /* revision rows written */
	uint64_t incidents_opened, incidents_updated, incidents_merged;
	uint64_t recomputed;           /* releases recomputed from events */
	uint64_t events_no_release;    /* new tagged events no release names
	                                * (yet): they join no incident */
};

/*
 * Writes one batch in one transaction (registry, attribution, events,
 * incidents, diagnosis, positions). Does not reset b. On error the
 * transaction is rolled back and RT_EDB / RT_ENOMEM returned; the message
 * is in store_errmsg(). Counters in stats (may be NULL) are added to,
 * once the transaction committed: a rolled-back batch counts nothing.
 */
int store_commit(struct store *st, struct corr_batch *b,
		 struct store_stats *stats);

/*
 * A writer thread: store_commit in the background, so the caller fills the
 * next batch while the last one is written. Between store_writer_submit(b)
 * and the next submit or wait, the writer owns the store, b and stats:
 * the caller touches none of them.
 */
struct store_writer;

/* Starts the thread, which blocks every signal. Returns 0 or RT_ENOMEM. */
int store_writer_new(struct store *st, struct store_stats *stats,
		     struct store_writer **out);
/* Waits for the batch in flight, then hands b over and returns 0 -- unless
 * a commit failed: then b is not taken and that commit's error is returned
 * (and is again by every later call: callers stop at a failed commit). */
int store_writer_submit(struct store_writer *w, struct corr_batch *b);
/* Waits for the batch in flight; returns the error of the last commit. */
int store_writer_wait(struct store_writer *w);
/* Without waiting: 1 when no batch is in flight (every submitted batch is
 * committed), 0 while one is, or the error of a failed commit. */
int store_writer_done(struct store_writer *w);
/* A copy of the counters, safe while a commit runs. */
void store_writer_stats(struct store_writer *w, struct store_stats *out);
/* Runs on the writer thread before each commit, with the store (e.g. to
 * check that the database is where the batch expects it); an error fails
 * that commit as store_commit's would. Set it before the first submit. */
typedef int (*store_writer_check_fn)(void *ctx, struct store *st,
				     struct corr_batch *b);
void store_writer_set_check(struct store_writer *w, store_writer_check_fn fn,
			    void *ctx);
/* Runs on the writer thread after each commit (check included), with its
 * result and the nanoseconds it took (consume's metrics). Set it before
 * the first submit. */
typedef void (*store_writer_done_fn)(void *ctx, int err, int64_t ns);
void store_writer_set_done(struct store_writer *w, store_writer_done_fn fn,
			   void *ctx);
/* Waits, ends the thread, frees. Accepts NULL. */
void store_writer_free(struct store_writer *w);

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
/* After each store_commit: what its transaction changed goes to *to when
 * it committed, is dropped when to is NULL (a failed commit). Returns 0,
 * or RT_ENOMEM when some change could not be kept. */
int store_changes_settle(struct store *st, struct store_changes *to);
/* Sorts by id, each id once (with the key of a deletion, if one). */
void store_changes_unique(struct store_changes *c);
void store_changes_free(struct store_changes *c);
/* The writer's: track (before the first submit), and take every change
 * of the batches committed since the last take (*out emptied first). */
int store_writer_track_incidents(struct store_writer *w);
void store_writer_take_changes(struct store_writer *w,
			       struct store_changes *out);

/* Work for a moment with no batch to commit: copies a WAL of more than a
 * few MiB back into the database, so that store_close has little left to
 * do. Never waits; errors are left to the next commit. */
void store_idle(struct store *st);

/* The committed position of a source (Kafka: next offset). Returns 0 and
 * sets *offset, 1 when unknown, or RT_EDB. */
int store_position(struct store *st, const char *source, int32_t partition,
		   int64_t *offset);

#endif
