/*
 * incidents_topic.h (private to cli/): consume --incidents-topic, a Kafka
 * producer of incident changes. See incidents_topic.c.
 */
#ifndef REVTRAIL_CLI_INCIDENTS_TOPIC_H
#define REVTRAIL_CLI_INCIDENTS_TOPIC_H

#include <stddef.h>
#include <stdint.h>

#include "revtrail/store.h"

struct itopic;

struct itopic_stats {
	uint64_t produced;      /* handed to the producer (tombstones too) */
	uint64_t delivered;     /* acknowledged by the brokers */
	uint64_t failed;        /* refused, not delivered, or not read */
	uint64_t pending;       /* changes waiting to be produced again */
};

/* A client property (-X, -F) for the producer: those only a consumer
 * reads are left out. */
struct itopic_prop {
	char kind;              /* 'X' (key=value) or 'F' (a file) */
	const char *arg;
};

/*
 * An idempotent producer (enable.idempotence=true, acks=all, whatever the
 * properties say) to topic, with the connection and security properties
 * of the consumer. NULL with err set (a bad property, a bad topic).
 */
struct itopic *itopic_new(const char *topic, const char *brokers,
			  const struct itopic_prop *props, int nprops,
			  char *err, size_t errsz);

/*
 * Produces every change (each committed: the caller takes them from the
 * store's writer), read through ro, a read-only connection: the incident
 * as it is now, or a tombstone for one deleted. Never blocks: what the
 * producer's queue cannot take now is kept and tried at the next call.
 * Takes the entries of c (emptied).
 */
void itopic_publish(struct itopic *t, struct store *ro,
		    struct store_changes *c);
/* Serves delivery reports; never blocks. */
void itopic_poll(struct itopic *t);
/* Flushes for up to timeout_ms, counts what was left undelivered, frees
 * and returns the final figures. Accepts NULL. */
struct itopic_stats itopic_close(struct itopic *t, struct store *ro,
				 int timeout_ms);
struct itopic_stats itopic_stats(const struct itopic *t);

#endif
