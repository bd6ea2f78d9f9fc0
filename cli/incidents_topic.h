/*
 * incidents_topic.h (private to cli/): consume --incidents-topic, a Kafka
 * producer of incident changes. See incidents_topic.c.
 */
#ifndef REVTRAIL_CLI_INCIDENTS_TOPIC_H
#define REVTRAIL_CLI_INCIDENTS_TOPIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "revtrail/store.h"

struct itopic;

struct itopic_stats {
	uint64_t produced;      /* handed to the producer (tombstones too) */
	uint64_t delivered;     /* acknowledged by the brokers */
	uint64_t failed;        /* refused, not delivered, or not read */
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
 * Produces the incidents outbox (store_outbox_read, through ro, a
 * read-only connection): each key's incident as it is now, or a tombstone
 * for a key no incident has any more. Removes, through rw (the writer's
 * connection, idle), the rows whose messages were delivered. Never blocks:
 * what the producer's queue cannot take now is produced at a later call.
 * c (the changes the writer reported) only says the outbox has new rows;
 * it is emptied.
 */
void itopic_publish(struct itopic *t, struct store *ro, struct store *rw,
		    struct store_changes *c);
/* Whether a publish has work: rows to produce, to remove or to retry. */
bool itopic_wants(const struct itopic *t);
/* Serves delivery reports; never blocks. */
void itopic_poll(struct itopic *t);
/* Produces what it can and flushes for up to timeout_ms, removes what was
 * delivered (the rest stays in the outbox for the next start), frees and
 * returns the final figures. Accepts NULL. */
struct itopic_stats itopic_close(struct itopic *t, struct store *ro,
				 struct store *rw, int timeout_ms);
struct itopic_stats itopic_stats(const struct itopic *t);

#endif
