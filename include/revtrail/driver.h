/*
 * driver.h: the loop that runs the pipeline over local inputs (revtrail
 * ingest): it owns the sources, read at once and multiplexed with poll(2)
 * into the same batches, the batch cadence, and the positions committed
 * with each batch; the double buffering and the hand-off to the writer
 * thread are revtrail/batches.h's, which consume shares. The command keeps
 * its options and its output.
 */
#ifndef REVTRAIL_DRIVER_H
#define REVTRAIL_DRIVER_H

#include <signal.h>

#include "revtrail/ingest.h"
#include "revtrail/writer.h"

struct pipeline_driver_opts {
	bool keep_untagged;           /* store untagged records too */
	struct rt_str cluster;        /* every record's cluster */
	bool follow;                  /* paths are files or globs followed
	                               * as tail -F does, never at an end */
	volatile sig_atomic_t *stop;  /* set (by a signal handler): the run
	                               * commits what it read and returns */
	/* Each classified record (counters, -v lines), and each tick between
	 * chunks (a progress line); either may be NULL. */
	void (*on_record)(void *ctx, const struct rt_record *rec,
			  const struct rt_class *cls);
	void (*on_tick)(void *ctx);
	void *ctx;
};

struct pipeline_driver;

/* Keeps db, rules and in by pointer; stats is the writer's (see
 * pipeline_writer_new). 0 or RT_ENOMEM. */
int pipeline_driver_new(struct pipeline_db *db, struct rules *rules,
			struct ingest *in, const struct pipeline_driver_opts *o,
			struct store_stats *stats, struct pipeline_driver **out);
/*
 * Reads the paths ("-", or none at all, is stdin) at once until each
 * ends (with follow: until *stop), commits the last batch and waits for
 * the writer. Returns 0; RT_EIO when an input could not be opened or read
 * (reported; the others were read); RT_ENOMEM; or the error of a failed
 * commit (RT_EDB, message in store_errmsg()), after which it stops.
 */
int pipeline_driver_run(struct pipeline_driver *d, char **paths, int npaths);
/* Counters of both batches (corr_batch's records ... dups), and with
 * follow the files whose names the driver holds now and at most. */
struct pipeline_driver_counts {
	uint64_t tagged, untagged, helm;
	uint64_t followed, followed_peak;
};
void pipeline_driver_counts(const struct pipeline_driver *d,
			    struct pipeline_driver_counts *out);
/* The writer's counters, safe while it commits (a progress line). */
void pipeline_driver_stats(struct pipeline_driver *d, struct store_stats *out);
/* Ends the writer thread (what was committed is readable); accepts NULL. */
void pipeline_driver_free(struct pipeline_driver *d);

#endif
