/*
 * writer.h: the writing end of the pipeline (docs/architecture.md "One way
 * through"): a database open for writing together with the correlator
 * state that decides what goes into it, one batch committed per
 * transaction, and a thread that commits while the caller fills the next
 * batch. Commands that only read include revtrail/store_read.h instead.
 */
#ifndef REVTRAIL_WRITER_H
#define REVTRAIL_WRITER_H

#include "revtrail/correlate.h"
#include "revtrail/store.h"

struct pipeline_opts {
	int64_t gap_ns;               /* 0 = the database's (default 15m) */
	bool regap;                   /* a gap_ns other than the database's
	                               * recomputes all incidents; without
	                               * regap it is refused (RT_EINVAL) */
	const struct rules *rules;    /* diagnosis rules (kept by pointer) */
	const char *release_ns;       /* ingest --release, for records with */
	const char *release_name;     /* no object at all; may be NULL */
	FILE *log;                    /* -v: recomputations, re-attributions */
	size_t registry_bytes;        /* each cluster's release registry's
	                               * budget; 0 = CORR_REGISTRY_BYTES */
	int64_t retain_ns;            /* --retain: 0 keeps everything */
};

/* A store open for writing and the correlator's registry, loaded from it. */
struct pipeline_db;

/*
 * Opens (creates, migrates) the database and loads its registry; a gap
 * change (with regap) recomputes every incident before this returns. On
 * failure RT_EDB / RT_EIO / RT_ENOMEM / RT_EINVAL with a message in err.
 */
int pipeline_db_open(const char *path, const struct pipeline_opts *o,
		     struct pipeline_db **out, char *err, size_t errlen);
/* The store (positions, error messages, regapped_from). */
struct store *pipeline_db_store(struct pipeline_db *db);
/* Accepts NULL. */
void pipeline_db_close(struct pipeline_db *db);

/*
 * Writes one batch in one transaction (registry, attribution, events,
 * incidents, diagnosis, positions). Does not reset b. On error the
 * transaction is rolled back and RT_EDB / RT_ENOMEM returned; the message
 * is in store_errmsg(). Counters in stats (may be NULL) are added to,
 * once the transaction committed: a rolled-back batch counts nothing.
 * After a failed commit the registry may be ahead of the database:
 * callers stop there.
 */
int pipeline_commit(struct pipeline_db *db, struct corr_batch *b,
		    struct store_stats *stats);
/*
 * Deletes everything aged past opts.retain_ns (revtrail prune), in
 * transactions of a bounded size, measured by the clock of the stored data
 * (corr_retain_clock at open). 0 or RT_EDB with store_errmsg().
 */
int pipeline_prune(struct pipeline_db *db, struct store_stats *stats);

/*
 * A writer thread: pipeline_commit in the background, so the caller fills
 * the next batch while the last one is written. Between
 * pipeline_writer_submit(b) and the next submit or wait, the writer owns
 * the database, b and stats: the caller touches none of them.
 */
struct pipeline_writer;

/* Starts the thread, which blocks every signal. Returns 0 or RT_ENOMEM. */
int pipeline_writer_new(struct pipeline_db *db, struct store_stats *stats,
			struct pipeline_writer **out);
/* Waits for the batch in flight, then hands b over and returns 0 -- unless
 * a commit failed: then b is not taken and that commit's error is returned
 * (and is again by every later call: callers stop at a failed commit). */
int pipeline_writer_submit(struct pipeline_writer *w, struct corr_batch *b);
/* Waits for the batch in flight; returns the error of the last commit. */
int pipeline_writer_wait(struct pipeline_writer *w);
/* Without waiting: 1 when no batch is in flight (every submitted batch is
 * committed), 0 while one is, or the error of a failed commit. */
int pipeline_writer_done(struct pipeline_writer *w);
/* Runs fn(ctx) while the writer leaves SQLite alone -- at once if it is
 * idle, returning 1 -- or returns 0 without running it while a commit or
 * idle work is in flight. SQLite is configured single-threaded, so any
 * other connection is used only this way while a writer lives. */
int pipeline_writer_try_read(struct pipeline_writer *w, void (*fn)(void *),
			     void *ctx);
/* A copy of the counters, safe while a commit runs. */
void pipeline_writer_stats(struct pipeline_writer *w, struct store_stats *out);
/* Runs on the writer thread before each commit, with the store (e.g. to
 * check that the database is where the batch expects it); an error fails
 * that commit as pipeline_commit's would. Set it before the first submit. */
typedef int (*pipeline_writer_check_fn)(void *ctx, struct store *st,
					struct corr_batch *b);
void pipeline_writer_set_check(struct pipeline_writer *w,
			       pipeline_writer_check_fn fn, void *ctx);
/* Runs on the writer thread after each commit (check included), with its
 * result and the nanoseconds it took (consume's metrics). Set it before
 * the first submit. */
typedef void (*pipeline_writer_done_fn)(void *ctx, int err, int64_t ns);
void pipeline_writer_set_done(struct pipeline_writer *w,
			      pipeline_writer_done_fn fn, void *ctx);
/* The changed incidents (store_changes, revtrail/store.h): track them
 * (before the first submit), and take every change of the batches
 * committed since the last take (*out emptied first). */
int pipeline_writer_track_incidents(struct pipeline_writer *w);
void pipeline_writer_take_changes(struct pipeline_writer *w,
				  struct store_changes *out);
/* Waits, ends the thread, frees. Accepts NULL. */
void pipeline_writer_free(struct pipeline_writer *w);

#endif
