/*
 * kafka_handover.h: how a partition changes hands between the instances of
 * a group without landing in two databases (ingest/kafka_handover.c), for
 * src_kafka.c.
 *
 * An instance's database may be ahead of the group's committed offset (the
 * Kafka commit follows the database's), and the group's offset may be ahead
 * of an instance's database (another instance owned the partition since).
 * The next owner starts at the later of the two; the source keeps the first
 * gap to one batch by confirming each Kafka commit before it hands the next
 * batch to the database, and by holding its batches when the group says the
 * assignment moved on.
 */
#ifndef REVTRAIL_KAFKA_HANDOVER_H
#define REVTRAIL_KAFKA_HANDOVER_H

#include <stdbool.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

/* The partitions of parts the database has an offset for (>= 0), with
 * it; the caller destroys the list. */
rd_kafka_topic_partition_list_t *
ingest_kafka_stored_only(const rd_kafka_topic_partition_list_t *parts);

/* The group's answer to a commit says this member may no longer own its
 * partitions: it has moved to a new generation or is rebalancing. */
bool ingest_kafka_moved_on(rd_kafka_resp_err_t err);

/*
 * Replaces each offset >= 0 of parts (a database's next offsets) by the
 * group's committed offset where that is later, and sets skipped[i] to the
 * offsets jumped over (0 where the database's stands). Asks the group
 * coordinator, waiting up to timeout_ms. Returns 0, or the lookup's error
 * (parts are then left as they were).
 */
rd_kafka_resp_err_t ingest_kafka_group_ahead(rd_kafka_t *rk,
					     rd_kafka_topic_partition_list_t *parts,
					     int64_t *skipped, int timeout_ms);

/*
 * Commits parts and waits up to timeout_ms for the group's answer: its
 * error, or RD_KAFKA_RESP_ERR__TIMED_OUT when none came in time (the commit
 * may still be taken later; the consumer's offset_commit_cb hears of it
 * either way). A coordinator that went away would otherwise hold a
 * synchronous commit, and the poll loop, for socket.timeout.ms.
 */
rd_kafka_resp_err_t ingest_kafka_commit_wait(rd_kafka_t *rk,
					     const rd_kafka_topic_partition_list_t *parts,
					     int timeout_ms);

/* Pauses (or resumes) every partition assigned now. */
void ingest_kafka_pause_assigned(rd_kafka_t *rk, bool pause);

#endif
