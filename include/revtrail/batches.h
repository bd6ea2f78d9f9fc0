/*
 * batches.h: the double-buffered batches of a pipeline run
 * (pipeline/batches.c), shared by the ingest driver (revtrail/driver.h)
 * and consume. The reading thread fills one batch while the writer thread
 * commits the other; each hand-over swaps them. A batch carries the
 * positions its transaction stores and, for a Kafka consumer, the fence:
 * where the database must stand for it (revtrail/fence.h), which the
 * writer checks right before the commit.
 */
#ifndef REVTRAIL_BATCHES_H
#define REVTRAIL_BATCHES_H

#include "revtrail/kafka.h"
#include "revtrail/pipeline.h"
#include "revtrail/writer.h"

/* Stored events a batch holds before its commit, for ingest and consume
 * alike (pipeline/driver.c says why this many). */
#define PIPELINE_BATCH_EVENTS 16384

struct pipeline_batches;

/* Two batches (keep_untagged: untagged records are stored too) and the
 * writer thread (stats as pipeline_writer_new's), its fence check set.
 * Keeps db by pointer. 0 or RT_ENOMEM. */
int pipeline_batches_new(struct pipeline_db *db, bool keep_untagged,
			 struct store_stats *stats,
			 struct pipeline_batches **out);
/* Ends the writer thread (what was committed is readable), then frees
 * the batches. Accepts NULL. */
void pipeline_batches_free(struct pipeline_batches *p);
/* The writer: waits, idle reads, counters, changes. Not for submits. */
struct pipeline_writer *pipeline_batches_writer(struct pipeline_batches *p);

/* pipeline_add into the filling batch (keeps what pipeline_add keeps). */
int pipeline_batches_add(struct pipeline_batches *p, struct rules *r,
			 struct rt_record *rec, struct rt_arena *scratch,
			 struct rt_class *cls);
/* The filling batch's records pending, and the bytes it copied. */
size_t pipeline_batches_pending(const struct pipeline_batches *p);
size_t pipeline_batches_bytes(const struct pipeline_batches *p);
/* True when the filling batch holds neither a record nor a position. */
bool pipeline_batches_empty(const struct pipeline_batches *p);
/* Notes a source's end position in the filling batch (as
 * corr_batch_position; keeps source by pointer). 0 or RT_ENOMEM. */
int pipeline_batches_position(struct pipeline_batches *p, const char *source,
			      int32_t partition, int64_t offset);
/* The Kafka partitions the filling batch read: their next offsets become
 * its positions, and their starts its fence (copied; topics kept by
 * pointer). 0 or RT_ENOMEM. */
int pipeline_batches_fence(struct pipeline_batches *p,
			   const struct ingest_kafka_part *parts, size_t n);
/* Hands the filling batch to the writer (which first finishes the one
 * before) and makes the other, emptied, the filling one. 0, or the error
 * of a failed commit (pipeline_writer_submit's), after which the caller
 * stops. */
int pipeline_batches_submit(struct pipeline_batches *p);
/* Empties the filling batch without committing it. */
void pipeline_batches_drop(struct pipeline_batches *p);

/* Counters of both batches since pipeline_batches_new. */
struct pipeline_batches_counts {
	uint64_t tagged, untagged, helm;
};
void pipeline_batches_counts(const struct pipeline_batches *p,
			     struct pipeline_batches_counts *out);

#endif
