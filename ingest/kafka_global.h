/*
 * kafka_global.h: the global topics of the Kafka source
 * (ingest/src_kafka_global.c), private to ingest/. A second consumer
 * handle, outside the group's assignment, reads every partition of the
 * global topics (the Helm topics of `consume --helm-topic`) from the
 * positions the caller stored, as Kafka Streams reads a global table:
 * every instance of a group holds all of it. It never subscribes, never
 * joins the group and never commits offsets to Kafka.
 */
#ifndef INGEST_KAFKA_GLOBAL_H
#define INGEST_KAFKA_GLOBAL_H

#include <stdbool.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

/* How often the global topics' partitions are looked up again, so a
 * partition added to a global topic is read without a restart. */
#define KGLOBAL_REFRESH_MS 30000
/* Before the first assignment (a topic not there yet, no broker): */
#define KGLOBAL_RETRY_MS 1000
#define KGLOBAL_METADATA_TIMEOUT_MS 500

/* Where a global partition starts: *offset is set to an offset >= 0 or
 * a logical one (RD_KAFKA_OFFSET_BEGINNING). 0 or a negative RT_E*. */
typedef int (*kglobal_start_fn)(void *ctx, const char *topic,
				int32_t partition, int64_t *offset);

struct kglobal;

/* The handle, from conf (taken, even on failure; its group.id is kept:
 * librdkafka's consumer API wants one, and assign() never joins it).
 * Keeps topics by pointer. NULL with err filled on failure. */
struct kglobal *kglobal_new(rd_kafka_conf_t *conf, const char *const *topics,
			    int ntopics, char *err, size_t errsz);
/* Destroys the handle without a group close (there is none). NULL ok. */
void kglobal_free(struct kglobal *g);

/*
 * When due (now_ms), looks the topics' partitions up and, if there are
 * more than were assigned, assigns them all, each at the offset start
 * gives. Returns how many partitions are assigned now (0 while none is
 * known), or a negative RT_E* from start.
 */
int kglobal_refresh(struct kglobal *g, int64_t now_ms, kglobal_start_fn start,
		    void *ctx);
/* The next message or event, waiting up to timeout_ms; NULL if none.
 * The caller destroys it. */
rd_kafka_message_t *kglobal_poll(struct kglobal *g, int timeout_ms);
/* Partitions assigned (0 before the first refresh that found any). */
int kglobal_assigned(const struct kglobal *g);
rd_kafka_t *kglobal_handle(struct kglobal *g);

#endif
