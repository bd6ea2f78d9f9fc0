/*
 * metrics.h (private to cli/): what `consume --http` and `fleet --http`
 * serve, kept apart
 * from the server (http.c) so a unit test can render it without a socket.
 *
 * The consume loop publishes a snapshot of its figures (metrics_publish)
 * and a heartbeat each turn (metrics_progress); the writer thread adds
 * each commit's duration (metrics_observe_commit). The HTTP thread only
 * copies them out under the mutex (metrics_copy) and renders the copy: it
 * never touches librdkafka or SQLite.
 */
#ifndef REVTRAIL_CLI_METRICS_H
#define REVTRAIL_CLI_METRICS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Partitions listed with labels: the assignment bounds them, this bounds
 * the assignment's share of a scrape (the rest are summed, not listed). */
#define METRICS_MAX_PARTS 256
#define METRICS_TOPIC_MAX 256       /* Kafka allows 249 bytes */
/* /healthz fails when the consume loop has not come round for this long:
 * a stuck database or a callback that never returns, not a slow batch. */
#define METRICS_STALL_MS 60000
#define METRICS_BUCKETS 14

enum metrics_state { METRICS_STARTING, METRICS_RUNNING, METRICS_STOPPING };

struct metrics_part {
	char topic[METRICS_TOPIC_MAX];
	int32_t partition;
	int64_t committed;      /* next offset in the database, -1 unknown */
	int64_t high;           /* high watermark, -1 unknown */
	int64_t lag;            /* -1 unknown */
};

/* The consume loop's figures at one moment, or the fleet fold's (fleet:
 * then only messages, batches, the fleet_* counters, the partitions and
 * wal_bytes are set, and only those are rendered). */
struct metrics_snap {
	enum metrics_state state;
	bool fleet;
	int64_t progress_ms;    /* CLOCK_MONOTONIC ms of the loop's last turn */
	uint64_t messages, bytes, records, tagged, batches, redelivered;
	uint64_t rejects_empty, rejects_undecodable;
	uint64_t truncated, bad_utf8, binary;
	/* fallbacks ingest_stats counts: payload -> labels, docker time,
	 * time out of range; and Helm times read in the local zone */
	uint64_t fb_helm_payload, fb_docker_time, fb_out_of_range, times_local;
	uint64_t fb_helm_status;        /* status blocks without a revision */
	uint64_t oversize;              /* over --max-record, skipped (in the
	                                 * rejects too) */
	uint64_t events_expired, incidents_expired;   /* --retain */
	uint64_t events_new, events_updated, incidents_opened;
	uint64_t registry_refused;
	uint64_t watermark_ignored;
	uint64_t rebalances, kafka_commit_errors, kafka_errors;
	uint64_t handover_skipped, handover_dropped, assignments_lost;
	int64_t incidents_open; /* -1 unknown */
	int64_t wal_bytes;      /* the database's -wal file, -1 unknown */
	bool brokers_down;
	int helm_partitions;    /* the --helm-topic's partitions read */
	int64_t helm_lag;       /* theirs summed, -1 unknown */
	uint64_t helm_topic_skipped;  /* their records without Helm state */
	uint64_t fleet_parts, fleet_tombstones, fleet_refused;
	uint64_t fleet_recomputed;
	size_t assigned;        /* may exceed nparts */
	size_t nparts;
	struct metrics_part parts[METRICS_MAX_PARTS];
};

/* Commit durations, cumulative per upper bound as Prometheus has them. */
struct metrics_hist {
	uint64_t le[METRICS_BUCKETS];   /* observations <= metrics_bounds[i] */
	uint64_t count;
	double sum;
};
extern const double metrics_bounds[METRICS_BUCKETS];

/* What the binary is, for revtrail_build_info. */
struct metrics_build {
	const char *version, *librdkafka, *sqlite;
	double start_time;      /* Unix seconds */
};

struct metrics {
	pthread_mutex_t mu;
	struct metrics_snap snap;
	struct metrics_hist commit;
	int64_t ready_lag;      /* /readyz: most messages behind, in all */
};

void metrics_init(struct metrics *m, int64_t ready_lag);
void metrics_release(struct metrics *m);
/* metrics_init'ed on the heap, its heartbeat at now_ms: a server started
 * now answers /healthz before the loop's first turn. NULL without memory.
 * metrics_free accepts NULL. */
struct metrics *metrics_new(int64_t ready_lag, int64_t now_ms);
void metrics_free(struct metrics *m);

/* The loop's side. publish copies s (not state or progress). */
void metrics_publish(struct metrics *m, const struct metrics_snap *s);
void metrics_progress(struct metrics *m, int64_t now_ms);
/* Each turn of a loop: its heartbeat at now_ms (what /healthz reads);
 * true when its figures are due, every every_ms (*next_ms keeps when). */
bool metrics_turn(struct metrics *m, int64_t now_ms, int64_t *next_ms,
		  int64_t every_ms);
void metrics_set_state(struct metrics *m, enum metrics_state state);
/* The writer thread's: one batch's transaction took secs. */
void metrics_observe_commit(struct metrics *m, double secs);

/* The size of the file at path (the database's -wal, stat'd by the
 * consume loop when it publishes, never by the server's thread): 0 when
 * there is none, -1 when it cannot be read. */
int64_t metrics_file_bytes(const char *path);
/* DB-wal, where SQLite keeps the WAL of db: malloc'd, NULL without
 * memory. */
char *metrics_wal_path(const char *db);

/* The server's side: a consistent copy of everything. */
void metrics_copy(struct metrics *m, struct metrics_snap *s,
		  struct metrics_hist *h, int64_t *ready_lag);

/* The Prometheus text exposition (format 0.0.4) of s and h: malloc'd,
 * NUL-terminated, length in *len; NULL when out of memory. */
char *metrics_render(const struct metrics_snap *s, const struct metrics_hist *h,
		     const struct metrics_build *b, size_t *len);

/* /healthz and /readyz: true for 200, false for 503, with a one-line
 * reason (no newline) in why. */
bool metrics_healthy(const struct metrics_snap *s, int64_t now_ms, char *why,
		     size_t size);
bool metrics_ready(const struct metrics_snap *s, int64_t now_ms,
		   int64_t ready_lag, char *why, size_t size);

#endif
