/*
 * metrics.c: the figures `consume --http` and `fleet --http` serve
 * (metrics.h): the snapshot the loop publishes, the commit-duration
 * histogram, their
 * Prometheus text exposition, and the health and readiness verdicts.
 *
 * Every metric has its # HELP and # TYPE, counters end in _total, and the
 * only labels are fixed words (reason, flag, result) and the assigned
 * partitions (at most METRICS_MAX_PARTS), so a scrape stays bounded
 * whatever the messages hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "metrics.h"

/* From a millisecond to ten seconds: a batch's transaction is a few ms
 * when small, a second or more when it recomputes large incidents. */
const double metrics_bounds[METRICS_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
	10, 30,
};

void metrics_init(struct metrics *m, int64_t ready_lag)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->mu, NULL);
	m->snap.incidents_open = -1;
	m->snap.wal_bytes = -1;
	m->snap.helm_lag = -1;
	m->ready_lag = ready_lag;
}

int64_t metrics_file_bytes(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return (int64_t)st.st_size;
	return errno == ENOENT ? 0 : -1;
}

void metrics_release(struct metrics *m)
{
	pthread_mutex_destroy(&m->mu);
}

struct metrics *metrics_new(int64_t ready_lag, int64_t now_ms)
{
	struct metrics *m = malloc(sizeof(*m));

	if (m) {
		metrics_init(m, ready_lag);
		metrics_progress(m, now_ms);
	}
	return m;
}

void metrics_free(struct metrics *m)
{
	if (m) {
		metrics_release(m);
		free(m);
	}
}

char *metrics_wal_path(const char *db)
{
	size_t n = strlen(db) + sizeof("-wal");
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s-wal", db);
	return p;
}

void metrics_publish(struct metrics *m, const struct metrics_snap *s)
{
	enum metrics_state state;
	int64_t progress;

	pthread_mutex_lock(&m->mu);
	state = m->snap.state;
	progress = m->snap.progress_ms;
	m->snap = *s;
	m->snap.state = state;
	m->snap.progress_ms = progress;
	pthread_mutex_unlock(&m->mu);
}

void metrics_progress(struct metrics *m, int64_t now_ms)
{
	pthread_mutex_lock(&m->mu);
	m->snap.progress_ms = now_ms;
	pthread_mutex_unlock(&m->mu);
}

bool metrics_turn(struct metrics *m, int64_t now_ms, int64_t *next_ms,
		  int64_t every_ms)
{
	metrics_progress(m, now_ms);
	if (now_ms < *next_ms)
		return false;
	*next_ms = now_ms + every_ms;
	return true;
}

void metrics_set_state(struct metrics *m, enum metrics_state state)
{
	pthread_mutex_lock(&m->mu);
	m->snap.state = state;
	pthread_mutex_unlock(&m->mu);
}

void metrics_observe_commit(struct metrics *m, double secs)
{
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < METRICS_BUCKETS; i++)
		if (secs <= metrics_bounds[i])
			m->commit.le[i]++;
	m->commit.count++;
	m->commit.sum += secs;
	pthread_mutex_unlock(&m->mu);
}

void metrics_copy(struct metrics *m, struct metrics_snap *s,
		  struct metrics_hist *h, int64_t *ready_lag)
{
	pthread_mutex_lock(&m->mu);
	*s = m->snap;
	*h = m->commit;
	*ready_lag = m->ready_lag;
	pthread_mutex_unlock(&m->mu);
}

/* ---- rendering ------------------------------------------------------- */

static void head(FILE *f, const char *name, const char *type,
		 const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type, const char *help,
		uint64_t v)
{
	head(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* A label value: backslash, quote and newline escaped, as the format
 * asks; other bytes as they are (topic names are [a-zA-Z0-9._-]). */
static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void part_labels(FILE *f, const char *name,
			const struct metrics_part *p)
{
	fprintf(f, "%s{topic=\"", name);
	label_value(f, p->topic);
	fprintf(f, "\",partition=\"%" PRId32 "\"}", p->partition);
}

static int64_t part_lag(const struct metrics_part *p)
{
	return p->lag;
}

static int64_t part_committed(const struct metrics_part *p)
{
	return p->committed;
}

static int64_t part_high(const struct metrics_part *p)
{
	return p->high;
}

/* One gauge per partition; unknown values (-1) are left out. */
static void part_gauge(FILE *f, const struct metrics_snap *s,
		       const char *name, const char *help,
		       int64_t (*value)(const struct metrics_part *))
{
	head(f, name, "gauge", help);
	for (size_t i = 0; i < s->nparts; i++) {
		const struct metrics_part *p = &s->parts[i];
		int64_t v = value(p);

		if (v < 0)
			continue;
		part_labels(f, name, p);
		fprintf(f, " %" PRId64 "\n", v);
	}
}

static void counters(FILE *f, const struct metrics_snap *s)
{
	one(f, "revtrail_messages_total", "counter",
	    "Kafka messages consumed and processed.", s->messages);
	one(f, "revtrail_message_bytes_total", "counter",
	    "Bytes of those messages' values.", s->bytes);
	one(f, "revtrail_records_total", "counter",
	    "Records decoded from the messages.", s->records);
	one(f, "revtrail_records_tagged_total", "counter",
	    "Records a rule tagged.", s->tagged);
	head(f, "revtrail_rejects_total", "counter",
	     "Messages that gave no record, by reason.");
	fprintf(f, "revtrail_rejects_total{reason=\"empty\"} %" PRIu64 "\n"
		"revtrail_rejects_total{reason=\"undecodable\"} %" PRIu64 "\n",
		s->rejects_empty, s->rejects_undecodable);
	head(f, "revtrail_records_flagged_total", "counter",
	     "Records kept with a defect, by flag.");
	fprintf(f, "revtrail_records_flagged_total{flag=\"truncated\"} %"
		PRIu64 "\nrevtrail_records_flagged_total{flag=\"bad_utf8\"} %"
		PRIu64 "\nrevtrail_records_flagged_total{flag=\"binary\"} %"
		PRIu64 "\n", s->truncated, s->bad_utf8, s->binary);
	head(f, "revtrail_input_fallbacks_total", "counter",
	     "Records decoded with a fallback, by kind.");
	fprintf(f, "revtrail_input_fallbacks_total{kind=\"helm_payload\"} %"
		PRIu64 "\nrevtrail_input_fallbacks_total{kind=\"docker_time\"} %"
		PRIu64 "\nrevtrail_input_fallbacks_total{kind=\"time_out_of_range"
		"\"} %" PRIu64 "\nrevtrail_input_fallbacks_total{kind=\""
		"helm_status_incomplete\"} %" PRIu64 "\n", s->fb_helm_payload,
		s->fb_docker_time, s->fb_out_of_range, s->fb_helm_status);
	one(f, "revtrail_oversize_skipped_total", "counter",
	    "JSON documents and List items over --max-record, skipped (also "
	    "rejects).", s->oversize);
	head(f, "revtrail_retention_deleted_total", "counter",
	     "Rows --retain deleted, by kind.");
	fprintf(f, "revtrail_retention_deleted_total{kind=\"events\"} %"
		PRIu64 "\nrevtrail_retention_deleted_total{kind=\"incidents\"} %"
		PRIu64 "\n", s->events_expired, s->incidents_expired);
	one(f, "revtrail_helm_times_local_total", "counter",
	    "Helm table times without a zone, read in the local zone.",
	    s->times_local);
	one(f, "revtrail_redelivered_skipped_total", "counter",
	    "Messages below the database's offset, skipped.", s->redelivered);
	one(f, "revtrail_batches_total", "counter",
	    "Batches committed to the database.", s->batches);
	head(f, "revtrail_events_stored_total", "counter",
	     "Events written, new or updated (a repeat of a stored one).");
	fprintf(f, "revtrail_events_stored_total{result=\"new\"} %" PRIu64
		"\nrevtrail_events_stored_total{result=\"updated\"} %" PRIu64
		"\n", s->events_new, s->events_updated);
	one(f, "revtrail_incidents_opened_total", "counter",
	    "Incidents opened.", s->incidents_opened);
	one(f, "revtrail_registry_refused_total", "counter",
	    "Helm revisions and workload mappings past --max-registry.",
	    s->registry_refused);
	one(f, "revtrail_watermark_ignored_total", "counter",
	    "Records too far ahead of the others or of the wall clock to "
	    "close incidents.", s->watermark_ignored);
	one(f, "revtrail_rebalances_total", "counter",
	    "Consumer group rebalances seen.", s->rebalances);
	one(f, "revtrail_kafka_commit_errors_total", "counter",
	    "Offset commits to Kafka that failed (the database has them).",
	    s->kafka_commit_errors);
	one(f, "revtrail_kafka_errors_total", "counter",
	    "Errors librdkafka reported.", s->kafka_errors);
	one(f, "revtrail_handover_skipped_total", "counter",
	    "Offsets another instance stored, skipped at an assignment.",
	    s->handover_skipped);
	one(f, "revtrail_handover_dropped_total", "counter",
	    "Messages read, then left to the next owner of a lost "
	    "assignment.", s->handover_dropped);
	one(f, "revtrail_assignments_lost_total", "counter",
	    "Assignments the group took away before they were revoked.",
	    s->assignments_lost);
	one(f, "revtrail_helm_topic_skipped_total", "counter",
	    "Records of the --helm-topic topics without Helm state, skipped.",
	    s->helm_topic_skipped);
}

/* The fleet fold's: what it read and what the folds did. */
static void fleet_counters(FILE *f, const struct metrics_snap *s)
{
	one(f, "revtrail_messages_total", "counter",
	    "Messages of the incidents topic folded.", s->messages);
	one(f, "revtrail_batches_total", "counter",
	    "Batches committed to the database.", s->batches);
	one(f, "revtrail_fleet_parts_stored_total", "counter",
	    "Messages that became an instance's part of an incident.",
	    s->fleet_parts);
	one(f, "revtrail_fleet_tombstones_total", "counter",
	    "Tombstones folded (an instance's part removed).",
	    s->fleet_tombstones);
	one(f, "revtrail_fleet_refused_total", "counter",
	    "Messages that are no instance's incident, skipped.",
	    s->fleet_refused);
	one(f, "revtrail_fleet_incidents_recomputed_total", "counter",
	    "Fleet incidents written again by the folds.",
	    s->fleet_recomputed);
}

static void histogram(FILE *f, const struct metrics_hist *h)
{
	const char *name = "revtrail_commit_duration_seconds";

	head(f, name, "histogram",
	     "Time one batch's database transaction took.");
	for (int i = 0; i < METRICS_BUCKETS; i++)
		fprintf(f, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name,
			metrics_bounds[i], h->le[i]);
	fprintf(f, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.6f\n"
		"%s_count %" PRIu64 "\n", name, h->count, name, h->sum, name,
		h->count);
}

/* Both commands': the partitions, the WAL, what the binary is. */
static void common_gauges(FILE *f, const struct metrics_snap *s,
			  const struct metrics_build *b)
{
	part_gauge(f, s, "revtrail_partition_lag", "Messages behind the "
		   "high watermark, from the database's offset.",
		   part_lag);
	part_gauge(f, s, "revtrail_partition_committed_offset", "Next offset "
		   "the database holds.",
		   part_committed);
	part_gauge(f, s, "revtrail_partition_high_watermark", "High "
		   "watermark last fetched.",
		   part_high);
	one(f, "revtrail_partitions_assigned", "gauge",
	    "Partitions assigned to this instance.", s->assigned);
	head(f, "revtrail_wal_bytes", "gauge", "Bytes of the database's "
	     "write-ahead log (-wal), read when the figures were published.");
	if (s->wal_bytes >= 0)
		fprintf(f, "revtrail_wal_bytes %" PRId64 "\n", s->wal_bytes);
	head(f, "revtrail_build_info", "gauge",
	     "The version and the libraries it runs with.");
	fputs("revtrail_build_info{version=\"", f);
	label_value(f, b->version);
	fputs("\",librdkafka=\"", f);
	label_value(f, b->librdkafka);
	fputs("\",sqlite=\"", f);
	label_value(f, b->sqlite);
	fputs("\"} 1\n", f);
	head(f, "process_start_time_seconds", "gauge",
	     "Start time of the process since the Unix epoch in seconds.");
	fprintf(f, "process_start_time_seconds %.3f\n", b->start_time);
}

static void gauges(FILE *f, const struct metrics_snap *s)
{
	head(f, "revtrail_incidents_open", "gauge", "Incidents open.");
	if (s->incidents_open >= 0)
		fprintf(f, "revtrail_incidents_open %" PRId64 "\n",
			s->incidents_open);
	one(f, "revtrail_helm_topic_partitions", "gauge",
	    "Partitions of the --helm-topic topics read in full.",
	    (uint64_t)s->helm_partitions);
	head(f, "revtrail_helm_topic_lag", "gauge", "Messages of the "
	     "--helm-topic topics behind their high watermarks, summed.");
	if (s->helm_lag >= 0)
		fprintf(f, "revtrail_helm_topic_lag %" PRId64 "\n",
			s->helm_lag);
	one(f, "revtrail_brokers_down", "gauge",
	    "1 while every broker is unreachable.", s->brokers_down);
}

char *metrics_render(const struct metrics_snap *s, const struct metrics_hist *h,
		     const struct metrics_build *b, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	if (s->fleet)
		fleet_counters(f, s);
	else
		counters(f, s);
	histogram(f, h);
	common_gauges(f, s, b);
	if (!s->fleet)
		gauges(f, s);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- health ---------------------------------------------------------- */

bool metrics_healthy(const struct metrics_snap *s, int64_t now_ms, char *why,
		     size_t size)
{
	int64_t idle = now_ms - s->progress_ms;

	switch (s->state) {
	case METRICS_STARTING:
		snprintf(why, size, "ok: starting");
		return true;
	case METRICS_STOPPING:
		snprintf(why, size, "ok: shutting down");
		return true;
	case METRICS_RUNNING:
		break;
	}
	if (idle > METRICS_STALL_MS) {
		snprintf(why, size, "stuck: the %s loop has not come round "
			 "for %" PRId64 " s", s->fleet ? "fold" : "consume",
			 idle / 1000);
		return false;
	}
	snprintf(why, size, "ok");
	return true;
}

bool metrics_ready(const struct metrics_snap *s, int64_t now_ms,
		   int64_t ready_lag, char *why, size_t size)
{
	int64_t total = 0;

	if (s->state != METRICS_RUNNING) {
		snprintf(why, size, "not ready: %s", s->state ==
			 METRICS_STARTING ? "starting" : "shutting down");
		return false;
	}
	if (!metrics_healthy(s, now_ms, why, size))
		return false;
	if (s->brokers_down) {
		snprintf(why, size, "not ready: all brokers are down");
		return false;
	}
	if (!s->assigned) {
		snprintf(why, size, "not ready: no partitions assigned");
		return false;
	}
	for (size_t i = 0; i < s->nparts; i++) {
		if (s->parts[i].lag < 0) {
			snprintf(why, size, "not ready: lag of %s[%" PRId32 "] "
				 "not known yet", s->parts[i].topic,
				 s->parts[i].partition);
			return false;
		}
		total += s->parts[i].lag;
	}
	if (total > ready_lag) {
		snprintf(why, size, "not ready: lag %" PRId64 " > %" PRId64
			 " (--ready-lag)", total, ready_lag);
		return false;
	}
	snprintf(why, size, "ready: %zu partitions, lag %" PRId64, s->assigned,
		 total);
	return true;
}
