/*
 * kafka.h: the Kafka source (ingest/src_kafka.c) of `revtrail consume`, a
 * librdkafka high-level consumer in a consumer group.
 *
 * The source owns the consumer and the per-partition positions; the caller
 * owns the database. Exactly-once effects come from the hooks below: the
 * caller writes the effects of a batch and the next offset of every
 * partition in it in one transaction (commit), and on assignment the source
 * starts each partition at the offset the caller stored (stored_offset).
 * Kafka's own committed offsets are written only after that transaction, for
 * lag tools and for instances that keep separate databases. The caller may
 * run the transaction on a writer thread (commit hands the batch over,
 * durable says when it is written): Kafka still hears only of written
 * batches, and a rebalance or close waits for the writer first.
 *
 * Lifecycle: ingest_kafka_new, ingest_kafka_set / ingest_kafka_load_file
 * (librdkafka properties), ingest_kafka_start, then ingest_kafka_poll in a
 * loop, ingest_kafka_close (commit, leave the group), ingest_kafka_free.
 * State changes and errors, and librdkafka's own log lines, go to rt_log
 * (log.h) as components "kafka" and "librdkafka".
 */
#ifndef REVTRAIL_KAFKA_H
#define REVTRAIL_KAFKA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "revtrail/ingest.h"

/* As ingest's batches: every batch re-diagnoses the incidents it touches,
 * so smaller or shorter batches cost more CPU, even with the commit on a
 * writer thread. The caller's full hook closes a batch at ingest's count
 * of stored events; the message count is twice that, so messages that
 * store nothing (untagged logs) do not cut a batch short, yet a batch of
 * them stays bounded. */
#define INGEST_KAFKA_BATCH_MESSAGES 32768
#define INGEST_KAFKA_BATCH_MS 1000
#define INGEST_KAFKA_BATCH_BYTES (32u << 20)

/* Where a partition starts when the database has no offset for it. */
enum ingest_kafka_start {
	INGEST_KAFKA_START_GROUP = 0,   /* the group's committed offset, else
	                                 * auto.offset.reset (earliest) */
	INGEST_KAFKA_START_EARLIEST,
	INGEST_KAFKA_START_LATEST,
};

/* A partition's position in a batch. */
struct ingest_kafka_part {
	const char *topic;      /* interned: valid until ingest_kafka_free */
	int32_t partition;
	int64_t start;          /* next offset when the batch began: what the
	                         * database holds when this batch is applied
	                         * (after the one before it; -1 = unknown),
	                         * so a store can fence a stale writer */
	int64_t next;           /* next offset to read after this batch */
	bool global;            /* a global topic's partition (opts'
	                         * global_topics): topic is then its name
	                         * behind INGEST_KAFKA_GLOBAL_PREFIX, and Kafka
	                         * is never told of it */
};

/* The name of a global topic's partitions in the hooks (stored_offset,
 * commit's parts, the records' rt_pos.source): a ':' is never in a Kafka
 * topic name, so their stored positions never meet a group partition's,
 * even one of the same topic. */
#define INGEST_KAFKA_GLOBAL_PREFIX "global:"
#define INGEST_KAFKA_GLOBAL_PREFIX_LEN 7

struct ingest_kafka_hooks {
	void *ctx;
	/*
	 * The next offset stored for a partition, or *next = -1 when the
	 * database has none (the source then starts at the group's committed
	 * offset, else at auto.offset.reset). Called from the rebalance
	 * callback, inside ingest_kafka_poll. Returns 0 or a negative RT_E*,
	 * which stops the source.
	 */
	int (*stored_offset)(void *ctx, const char *topic, int32_t partition,
			     int64_t *next);
	/* Each record decoded from a message value (ingest's contract; its
	 * rt_pos names topic, partition and offset). Required. */
	ingest_emit_fn emit;
	/*
	 * Makes the batch durable: the effects of every record emitted since
	 * the last commit, and parts[] (the partitions that advanced), in one
	 * transaction. Called with nparts > 0 only. The caller may reset its
	 * arena here. With durable set, it may only hand the batch over (to a
	 * writer thread), having waited for the batch handed over before.
	 * Returns 0 or a negative RT_E* (its own, or that of the batch before):
	 * then nothing more is committed to Kafka and the source stops (a
	 * restart resumes from the database).
	 */
	int (*commit)(void *ctx, const struct ingest_kafka_part *parts,
		      size_t nparts);
	/*
	 * NULL when commit is durable on return. Else: 1 when every batch
	 * handed to commit is written, 0 while one is still in flight (never
	 * with wait, which blocks until it is written), or the negative RT_E*
	 * of a failed commit.
	 */
	int (*durable)(void *ctx, bool wait);
	/*
	 * NULL, or true when the batch's records are as many as a batch
	 * should hold (the caller's measure, e.g. stored events): the batch
	 * is then committed before the message count says so. Asked after
	 * each message.
	 */
	bool (*full)(void *ctx);
	/*
	 * Optional: forgets every record emitted since the last commit. Called
	 * when the group took the partitions away (a lost assignment) before
	 * the pending batch was committed: the next owner reads them, and the
	 * database must not hold them too. Without it that batch is committed.
	 */
	void (*drop)(void *ctx);
};

struct ingest_kafka_opts {
	const char *brokers;            /* bootstrap.servers; may be NULL if
	                                 * set as a property */
	const char *group;              /* group.id */
	const char *const *topics;      /* names or ^regex; kept by pointer */
	int ntopics;
	unsigned batch_messages;        /* 0 = INGEST_KAFKA_BATCH_MESSAGES */
	unsigned batch_ms;              /* 0 = INGEST_KAFKA_BATCH_MS */
	size_t batch_bytes;             /* value bytes; 0 = INGEST_KAFKA_BATCH_BYTES */
	enum ingest_kafka_start start;
	bool exit_at_end;               /* stop once every assigned partition
	                                 * reached its end (tests, backfills) */
	/* Topics read in full by this instance outside the group's
	 * assignment (kafka_global.h), before it joins the group; only
	 * their records that carry Helm state (ingest_kafka_helm_state) are
	 * emitted. Kept by pointer; no patterns. */
	const char *const *global_topics;
	int nglobal;
	struct ingest *in;              /* decoder; not owned */
	struct rt_arena *arena;         /* records' strings; not owned */
	struct ingest_kafka_hooks hooks;
};

struct ingest_kafka_stats {
	uint64_t messages;      /* consumed and processed */
	uint64_t bytes;         /* value bytes */
	uint64_t records;       /* records decoded from them */
	uint64_t rejects;       /* messages that gave no record */
	uint64_t empty;         /* ... of them empty values (tombstones) */
	uint64_t redelivered;   /* below the stored offset: skipped */
	uint64_t batches;       /* committed to the database */
	uint64_t kafka_commit_errors;
	uint64_t errors;        /* consumer errors reported */
	uint64_t rebalances;
	uint64_t handover_skipped;  /* offsets another owner stored: the group
	                             * was ahead of the database at assignment */
	uint64_t handover_dropped;  /* messages read, then left to the next
	                             * owner: the assignment was lost first */
	uint64_t assignments_lost;  /* revokes of a lost assignment */
	bool brokers_down;      /* all brokers unreachable right now */
	int assigned;           /* partitions assigned now */
	int global_assigned;    /* global topics' partitions read */
	uint64_t global_skipped;  /* their records without Helm state */
};

/* One assigned partition, for status lines and --stats-json. */
struct ingest_kafka_lag {
	const char *topic;
	int32_t partition;
	int64_t committed;      /* next offset stored by the last commit, -1 */
	int64_t high;           /* high watermark last seen, -1 = unknown */
	int64_t lag;            /* high - committed, -1 when unknown */
};

struct ingest_kafka;

/* True when rec carries Helm state: revisions (history, list, status,
 * storage Secrets, helm output) or a HelmChart's release hints. */
bool ingest_kafka_helm_state(const struct rt_record *rec);

/* Builds the configuration (revtrail's defaults, then opts). Keeps opts'
 * pointers (topics, in, arena). NULL with err filled on failure. */
struct ingest_kafka *ingest_kafka_new(const struct ingest_kafka_opts *opts,
				      char *err, size_t errsz);
void ingest_kafka_free(struct ingest_kafka *k);

/*
 * Sets one librdkafka property (as kcat -X). Properties that would break
 * the exactly-once contract (enable.auto.commit, enable.auto.offset.store)
 * are refused. Returns 0 or RT_EINVAL with err naming the key.
 */
int ingest_kafka_set(struct ingest_kafka *k, const char *key, const char *val,
		     char *err, size_t errsz);
/* "key=value" as one string (the -X argument). */
int ingest_kafka_set_kv(struct ingest_kafka *k, const char *kv, char *err,
			size_t errsz);
/* A Java-style properties file: key=value lines, '#' or '!' comments,
 * blank lines. Errors name file:line and the key. */
int ingest_kafka_load_file(struct ingest_kafka *k, const char *path,
			   char *err, size_t errsz);

/* The same file read for another client (consume's incidents producer):
 * fn gets each key and value; its error (in err) stops the read. */
typedef int (*ingest_kafka_prop_fn)(void *ctx, const char *key,
				    const char *val, char *err, size_t errsz);
int ingest_kafka_props_file(const char *path, ingest_kafka_prop_fn fn,
			    void *ctx, char *err, size_t errsz);
/* One "key=value" (an -X argument) for another client, the same way. */
int ingest_kafka_prop_kv(const char *kv, ingest_kafka_prop_fn fn, void *ctx,
			 char *err, size_t errsz);

/* Creates the consumer and subscribes. Returns 0 or RT_EKAFKA/RT_EINVAL. */
int ingest_kafka_start(struct ingest_kafka *k, char *err, size_t errsz);

/*
 * Polls for up to timeout_ms, processing messages and committing a batch
 * when it is full or old enough. Returns 0, 1 when exit_at_end was asked
 * and every assigned partition is at its end (all committed), or a
 * negative RT_E* after which the source must be freed without close.
 */
int ingest_kafka_poll(struct ingest_kafka *k, int timeout_ms);

/* Commits the pending batch now (database, then Kafka). */
int ingest_kafka_flush(struct ingest_kafka *k);

/* Commits the pending batch, leaves the group (revoking every partition)
 * and closes the consumer. Returns 0 or the first error. */
int ingest_kafka_close(struct ingest_kafka *k);

const struct ingest_kafka_stats *ingest_kafka_stats(const struct ingest_kafka *k);
/* Fills up to max entries for the partitions assigned now; returns how many
 * are assigned. Watermarks are those cached from fetches (no round trip). */
size_t ingest_kafka_lags(struct ingest_kafka *k, struct ingest_kafka_lag *out,
			 size_t max);

/* The global topics' (opts' global_topics) partitions read, and in *lag
 * their messages behind the high watermarks the global handle last
 * fetched, from the next offset of each, summed; -1 while one of them is
 * not known. */
int ingest_kafka_global_lag(struct ingest_kafka *k, int64_t *lag);

/* The rd_kafka_t, for tests (NULL before start). */
struct rd_kafka_s *ingest_kafka_handle(struct ingest_kafka *k);

#endif
