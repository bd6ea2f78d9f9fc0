/*
 * fence.h: the exactly-once fence of a consumer (pipeline/fence.c). A
 * batch read from Kafka says, per partition, where the database must
 * stand for the batch to follow what this process committed before; the
 * writer checks it right before the commit, in the batch's transaction.
 */
#ifndef REVTRAIL_FENCE_H
#define REVTRAIL_FENCE_H

#include <stddef.h>

#include "revtrail/kafka.h"
#include "revtrail/store.h"

/*
 * 0 when, for each of the n parts with a known start (>= 0), the
 * database's stored position of its partition is that start; else
 * RT_EDB after logging which partition (the batch would apply records
 * another writer has already stored, or skip some), or the store's
 * error. On the thread that owns st (a pipeline_writer check).
 */
int pipeline_fence_check(struct store *st,
			 const struct ingest_kafka_part *parts, size_t n);

#endif
