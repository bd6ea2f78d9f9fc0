/*
 * cmd_consume.c: `revtrail consume -b BROKERS -t TOPIC... -G GROUP [-X k=v]
 * [-F FILE] [--db PATH] ...`: the long-lived service. A Kafka consumer in a
 * group (ingest/src_kafka.c) feeds the same pipeline as `ingest`: decode,
 * classify, batch, then correlate and store one batch per SQLite
 * transaction, with the partitions' next offsets in that same transaction.
 *
 * This file only wires the source's hooks to the pipeline: stored offsets
 * on assignment (store_position), records into the batch, and the commit,
 * which goes to the writer thread through the batches `ingest` uses too
 * (pipeline/batches.c): this thread decodes and classifies the next batch
 * while the writer correlates and stores the last one, after checking the
 * fence. The source tells Kafka of a batch only once the writer reports it
 * written (the durable hook). It also prints the periodic
 * status line and writes --stats-json, and with --http publishes its
 * figures for the server's thread (cli/http.c, cli/metrics.c). SIGINT/SIGTERM
 * only set a flag; the loop then commits, leaves the group and returns 0.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"
#include "metrics.h"
#include "incidents_topic.h"
#include "rows.h"
#include "revtrail/rt_kit.h"
#include "revtrail/batches.h"
#include "revtrail/kafka.h"
#include "revtrail/log.h"

#define POLL_MS 100
#define STATUS_DEFAULT_S 10
#define MAX_PROPS 256
#define MAX_LAGS METRICS_MAX_PARTS
/* --http: the figures are published this often, open incidents counted
 * (a query) at most this often. */
#define PUBLISH_MS 1000
#define INCIDENTS_MS 5000
/* How long exit waits for the incidents topic's last messages. */
#define ITOPIC_FLUSH_MS 5000

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct consume {
	size_t max_record;          /* --max-record, 0 for the default */
	struct rules *rules;
	struct pipeline_db *db;
	struct store *st;           /* db's: the writer's, but for assignments */
	struct store *ro;           /* read-only handle for the status line */
	bool ro_tried;
	const char *db_path;
	char *wal_path;             /* db_path-wal, for /metrics */
	struct pipeline_batches *bt; /* one filling, one with the writer */
	struct pipeline_writer *w;  /* bt's */
	bool reported;              /* a failed commit was printed */
	struct rt_arena arena;
	struct store_stats stats;   /* the writer's: read through it */
	struct ingest *in;
	struct ingest_kafka *k;
	uint64_t limit_hits;
	struct cli_topics *topics;  /* each record's cluster, by its topic */
	struct cli_topics *helm_topics;   /* --helm-topic's, the same */
	struct itopic *itopic;      /* --incidents-topic, or NULL */
	const char *itopic_name;
	struct store_changes changes;
	struct itopic_stats istats; /* its figures, kept at close */
	bool lags_kept;             /* after the last commit: the final
	                             * figures show these partitions */
	size_t kept_assigned;

	/* status */
	unsigned status_ms;
	const char *stats_path;
	int64_t started_ms, last_ms;
	uint64_t last_msgs;
	double rate;
	int64_t open_incidents;     /* -1 = unknown */
	bool registry_warned;       /* its first refusal was logged */
	FILE *vlog[2];              /* -v: the decoder's and the store's lines */

	/* --http */
	struct metrics *m;
	struct http *http;
	struct metrics_snap *snap;  /* filled here, copied by publish */
	int64_t next_publish_ms, next_incidents_ms;
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- source hooks ---------------------------------------------------- */

/* A failed commit, met by whichever call waits for the writer first. */
static int writer_failed(struct consume *c, int err)
{
	if (!c->reported)
		rt_log(RT_LOG_ERROR, "store", "%s", store_errmsg(c->st)[0] ?
		       store_errmsg(c->st) : rt_strerror(err));
	c->reported = true;
	return err;
}

static int hook_stored_offset(void *ctx, const char *topic, int32_t part,
			      int64_t *next)
{
	struct consume *c = ctx;
	int rc = pipeline_writer_wait(c->w);   /* the store is ours again */

	if (rc)
		return writer_failed(c, rc);
	rc = store_position(c->st, topic, part, next);

	if (rc == 1)
		*next = -1;
	if (rc < 0)
		rt_log(RT_LOG_ERROR, "store", "%s", store_errmsg(c->st));
	return rc < 0 ? rc : 0;
}

/* A record of a --helm-topic: the source names its partitions with the
 * global prefix. */
static bool helm_source(const char *source)
{
	return source && !strncmp(source, INGEST_KAFKA_GLOBAL_PREFIX,
				  INGEST_KAFKA_GLOBAL_PREFIX_LEN);
}

static int hook_record(void *ctx, struct rt_record *rec)
{
	struct consume *c = ctx;
	struct rt_class cls;
	int err;

	rec->cluster = helm_source(rec->pos.source) ?
		cli_topics_cluster(c->helm_topics, rec->pos.source +
				   INGEST_KAFKA_GLOBAL_PREFIX_LEN) :
		cli_topics_cluster(c->topics, rec->pos.source);
	err = pipeline_batches_add(c->bt, c->rules, rec, &c->arena, &cls);

	c->limit_hits += cls.limit_hits;
	return err;
}

/* Hands the batch to the writer (which first finishes the one before) and
 * goes on filling the other. */
static int hook_commit(void *ctx, const struct ingest_kafka_part *parts,
		       size_t n)
{
	struct consume *c = ctx;
	int rc = pipeline_batches_fence(c->bt, parts, n);

	if (rc)
		return rc;
	if ((rc = pipeline_batches_submit(c->bt)))
		return writer_failed(c, rc);
	rt_arena_reset(&c->arena);
	return 0;
}

/* A batch is as large as ingest's in stored events, whatever the share of
 * messages that store none (untagged logs): each commit re-diagnoses the
 * incidents it touched and rewrites the pages of a random index, so more,
 * smaller batches of the same events cost more. */
static bool hook_full(void *ctx)
{
	struct consume *c = ctx;

	return pipeline_batches_pending(c->bt) >= PIPELINE_BATCH_EVENTS;
}

static struct store *reader(struct consume *c);

/* The incidents the batches committed so far changed, to the incidents
 * topic: after their commit, and never waiting for Kafka. The rows are
 * read once the writer is idle (SQLite runs single-threaded: one thread
 * in it at a time), which with no batch in flight is at most the end of
 * a WAL copy. */
static void produce_changes(struct consume *c)
{
	if (!c->itopic)
		return;
	pipeline_writer_take_changes(c->w, &c->changes);
	if (!c->changes.n && !itopic_wants(c->itopic))
		return;
	pipeline_writer_wait(c->w);
	itopic_publish(c->itopic, reader(c), c->st, &c->changes);
}

static int hook_durable(void *ctx, bool wait)
{
	struct consume *c = ctx;
	int rc = wait ? pipeline_writer_wait(c->w) : pipeline_writer_done(c->w);

	if (rc < 0)
		return writer_failed(c, rc);
	if (wait || rc == 1)
		produce_changes(c);
	return wait ? 1 : rc;
}

/* The group took the partitions away before this batch was handed to the
 * writer: its records are forgotten, the next owner stores them. */
static void hook_drop(void *ctx)
{
	struct consume *c = ctx;

	pipeline_batches_drop(c->bt);
	rt_arena_reset(&c->arena);
}

static uint64_t tagged(const struct consume *c)
{
	struct pipeline_batches_counts n = { 0 };

	if (c->bt)
		pipeline_batches_counts(c->bt, &n);
	return n.tagged;
}

/* ---- status ---------------------------------------------------------- */

static int count_row(void *ctx, int ncols, const char *const *names,
		     const struct store_value *vals)
{
	(void)names;
	if (ncols > 0 && vals[0].type == STORE_INT)
		*(int64_t *)ctx = vals[0].i;
	return 0;
}

/* A second, read-only connection (WAL lets it read while the writer
 * commits, and it sees committed data only). NULL when it cannot be had. */
static struct store *reader(struct consume *c)
{
	char err[RT_ERRLEN];

	if (!c->ro && !c->ro_tried) {
		c->ro_tried = true;
		if (store_open_read(c->db_path, NULL, &c->ro, err, sizeof(err)))
			c->ro = NULL;
	}
	return c->ro;
}

/* Open incidents; -1 when they cannot be read. */
static void count_open(void *ctx)
{
	struct consume *c = ctx;
	int64_t n = -1;
	char err[RT_ERRLEN];

	if (reader(c) && store_query(c->ro, "SELECT count(*) FROM incidents "
				     "WHERE status = 'open'", NULL, count_row,
				     &n, err, sizeof(err)))
		n = -1;
	c->open_incidents = n;
}

/* SQLite runs single-threaded (store_sqlite_config): the second
 * connection is opened and read only while the writer is idle. A busy
 * writer keeps the last count, which the next report refreshes. */
static void refresh_open_incidents(struct consume *c)
{
	pipeline_writer_try_read(c->w, count_open, c);
}

static void status_text(FILE *f, struct consume *c,
			const struct ingest_kafka_lag *lag, size_t nlag,
			size_t assigned)
{
	const struct ingest_kafka_stats *s = ingest_kafka_stats(c->k);
	int64_t total = 0;
	bool known = false;

	fprintf(f, "%.0f msg/s, %" PRIu64 " messages, %" PRIu64
		" records, %" PRIu64 " tagged, %" PRIu64 " rejects, ",
		c->rate, s->messages, s->records, tagged(c), s->rejects);
	if (c->open_incidents >= 0)
		fprintf(f, "%" PRId64 " incidents open, ",
			c->open_incidents);
	for (size_t i = 0; i < nlag; i++)
		if (lag[i].lag >= 0) {
			total += lag[i].lag;
			known = true;
		}
	if (known)
		fprintf(f, "lag %" PRId64, total);
	else
		fputs("lag ?", f);
	for (size_t i = 0; i < nlag && i < 8; i++) {
		if (lag[i].lag >= 0)
			fprintf(f, " %s[%d]=%" PRId64, lag[i].topic,
				lag[i].partition, lag[i].lag);
		else
			fprintf(f, " %s[%d]=?", lag[i].topic,
				lag[i].partition);
	}
	if (assigned > 8)
		fprintf(f, " (+%zu more)", assigned - 8);
	fprintf(f, ", %zu partitions, brokers %s", assigned,
		s->brokers_down ? "DOWN" : "up");
}

/* One status line, written whole. */
static void status_line(struct consume *c, const struct ingest_kafka_lag *lag,
			size_t nlag, size_t assigned)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	status_text(f, c, lag, nlag, assigned);
	if (fclose(f) == 0)
		rt_log(RT_LOG_INFO, "consume", "%s", text);
	free(text);
}

static void json_num(FILE *f, const char *key, int64_t v, bool comma)
{
	fprintf(f, "%s\"%s\":%" PRId64, comma ? "," : "", key, v);
}

/* The same figures as the status line, rewritten whole each time (a
 * fresh temporary beside it renamed over the old one, so readers never see
 * half, and a symlink planted beside it is never followed). */
static void stats_json(struct consume *c, const struct ingest_kafka_lag *lag,
		       size_t nlag, bool final)
{
	const struct ingest_kafka_stats *s = ingest_kafka_stats(c->k);
	const struct ingest_stats *ins = ingest_stats(c->in);
	struct store_stats st;
	char tmp[4096];
	FILE *f;

	pipeline_writer_stats(c->w, &st);
	if (!(f = rt_replace_open(c->stats_path, tmp, sizeof(tmp))))
		return;
	fprintf(f, "{\"time\":%lld,\"uptime_s\":%.1f,\"final\":%s,"
		"\"rate\":%.1f", (long long)time(NULL),
		(now_ms() - c->started_ms) / 1000.0, final ? "true" : "false",
		c->rate);
	json_num(f, "messages", (int64_t)s->messages, true);
	json_num(f, "bytes", (int64_t)s->bytes, true);
	json_num(f, "records", (int64_t)s->records, true);
	json_num(f, "rejects", (int64_t)s->rejects, true);
	json_num(f, "oversize", (int64_t)ingest_stats(c->in)->oversize, true);
	json_num(f, "redelivered_skipped", (int64_t)s->redelivered, true);
	json_num(f, "tagged", (int64_t)tagged(c), true);
	json_num(f, "batches", (int64_t)s->batches, true);
	json_num(f, "events_new", (int64_t)st.events_new, true);
	json_num(f, "events_updated", (int64_t)st.events_updated, true);
	json_num(f, "incidents_opened", (int64_t)st.incidents_opened, true);
	json_num(f, "incidents_open", c->open_incidents, true);
	json_num(f, "registry_refused", (int64_t)st.registry_refused, true);
	json_num(f, "watermark_ignored", (int64_t)st.watermark_ignored, true);
	json_num(f, "events_expired", (int64_t)st.events_expired, true);
	json_num(f, "incidents_expired", (int64_t)st.incidents_expired, true);
	json_num(f, "helm_payload_fallbacks",
		 (int64_t)ins->helm_payload_fallback, true);
	json_num(f, "docker_bad_times", (int64_t)ins->bad_times, true);
	json_num(f, "times_out_of_range", (int64_t)ins->times_out_of_range,
		 true);
	json_num(f, "helm_times_local", (int64_t)ins->times_local, true);
	json_num(f, "helm_status_incomplete",
		 (int64_t)ins->helm_status_incomplete, true);
	json_num(f, "rebalances", (int64_t)s->rebalances, true);
	json_num(f, "kafka_commit_errors", (int64_t)s->kafka_commit_errors,
		 true);
	json_num(f, "errors", (int64_t)s->errors, true);
	if (c->helm_topics->n) {
		json_num(f, "helm_partitions", s->global_assigned, true);
		json_num(f, "helm_topic_skipped", (int64_t)s->global_skipped,
			 true);
	}
	json_num(f, "handover_skipped", (int64_t)s->handover_skipped, true);
	json_num(f, "handover_dropped", (int64_t)s->handover_dropped, true);
	json_num(f, "assignments_lost", (int64_t)s->assignments_lost, true);
	if (c->itopic_name) {
		struct itopic_stats is = c->itopic ? itopic_stats(c->itopic) :
			c->istats;

		json_num(f, "incidents_produced", (int64_t)is.produced, true);
		json_num(f, "incidents_delivered", (int64_t)is.delivered,
			 true);
		json_num(f, "incidents_produce_failed", (int64_t)is.failed,
			 true);
	}
	fprintf(f, ",\"brokers_down\":%s,\"partitions\":[",
		s->brokers_down ? "true" : "false");
	for (size_t i = 0; i < nlag; i++) {
		fprintf(f, "%s{\"topic\":", i ? "," : "");
		cli_json_str(f, lag[i].topic, strlen(lag[i].topic));
		json_num(f, "partition", lag[i].partition, true);
		json_num(f, "committed", lag[i].committed, true);
		json_num(f, "high_watermark", lag[i].high, true);
		json_num(f, "lag", lag[i].lag, true);
		putc('}', f);
	}
	fputs("]}\n", f);
	rt_replace_commit(f, tmp, c->stats_path);
}

/* A service runs for months: the first refusal is said when it happens,
 * the count again at exit. */
static void warn_registry(struct consume *c, bool final)
{
	struct store_stats st;

	pipeline_writer_stats(c->w, &st);
	if (!st.registry_refused || (c->registry_warned && !final))
		return;
	c->registry_warned = true;
	rt_log(RT_LOG_WARN, "consume", CLI_REGISTRY_NOTE, st.registry_refused,
	       st.registry_refused == 1 ? "" : "s",
	       st.registry_refused == 1 ? "" : "s");
}

/* The partitions' lags now, or those kept after the last commit (the
 * consumer closed since has none assigned). */
static struct ingest_kafka_lag lags[MAX_LAGS];

static size_t read_lags(struct consume *c)
{
	if (!c->lags_kept)
		c->kept_assigned = ingest_kafka_lags(c->k, lags, MAX_LAGS);
	return c->kept_assigned;
}

static void report(struct consume *c, bool final)
{
	struct ingest_kafka_lag *lag = lags;
	int64_t now = now_ms();
	const struct ingest_kafka_stats *s = ingest_kafka_stats(c->k);
	size_t assigned = read_lags(c);
	size_t nlag = assigned < MAX_LAGS ? assigned : MAX_LAGS;

	if (now > c->last_ms)
		c->rate = (double)(s->messages - c->last_msgs) * 1000.0 /
			  (double)(now - c->last_ms);
	c->last_ms = now;
	c->last_msgs = s->messages;
	refresh_open_incidents(c);
	if (c->status_ms)
		status_line(c, lag, nlag, assigned);
	if (c->stats_path)
		stats_json(c, lag, nlag, final);
}

static void note(void *ctx, int level, const char *line)
{
	(void)ctx;
	rt_log((enum rt_log_level)level, "consume", "%s", line);
}

static void summary(struct consume *c, double secs)
{
	const struct ingest_kafka_stats *s = ingest_kafka_stats(c->k);
	struct store_stats stv;
	const struct store_stats *st = &stv;
	char over[512];

	pipeline_writer_stats(c->w, &stv);
	rt_log(RT_LOG_INFO, "consume", "%" PRIu64 " messages in %.1f s "
	       "(%.0f/s), %" PRIu64 " records, %" PRIu64 " tagged, %" PRIu64
	       " rejected, %" PRIu64 " redelivered and skipped", s->messages,
	       secs, secs > 0 ? s->messages / secs : 0.0, s->records,
	       tagged(c), s->rejects, s->redelivered);
	rt_log(RT_LOG_INFO, "consume", "events %" PRIu64 " new, %" PRIu64
	       " updated; incidents %" PRIu64 " opened, %" PRIu64
	       " updated; %" PRIu64 " batches; %" PRIu64 " rebalances",
	       st->events_new, st->events_updated, st->incidents_opened,
	       st->incidents_updated, s->batches, s->rebalances);
	if (c->limit_hits)
		rt_log(RT_LOG_WARN, "consume", "%" PRIu64 " regex limit hits",
		       c->limit_hits);
	warn_registry(c, true);
	if (s->global_skipped)
		rt_log(RT_LOG_WARN, "consume", "%" PRIu64 " record(s) of the "
		       "--helm-topic topics carried no Helm state: skipped",
		       s->global_skipped);
	cli_input_notes(ingest_stats(c->in), note, NULL);
	if (cli_oversize_note(over, sizeof(over), ingest_stats(c->in),
			      c->max_record))
		rt_log(RT_LOG_WARN, "consume", "%s", over);
	if (c->itopic_name)
		rt_log(RT_LOG_INFO, "consume", "incidents topic %s: %" PRIu64
		       " messages produced, %" PRIu64 " delivered, %" PRIu64
		       " failed", c->itopic_name, c->istats.produced,
		       c->istats.delivered, c->istats.failed);
}

/* ---- --http ---------------------------------------------------------- */

/* On the writer thread, after each commit. */
static void writer_done(void *ctx, int err, int64_t ns)
{
	struct consume *c = ctx;

	if (!err)
		metrics_observe_commit(c->m, (double)ns / 1e9);
}

static void fill_parts(struct metrics_snap *m, struct consume *c)
{
	const struct ingest_kafka_lag *lag = lags;
	size_t assigned = read_lags(c);

	m->assigned = assigned;
	m->nparts = assigned < MAX_LAGS ? assigned : MAX_LAGS;
	for (size_t i = 0; i < m->nparts; i++) {
		struct metrics_part *p = &m->parts[i];

		snprintf(p->topic, sizeof(p->topic), "%s", lag[i].topic);
		p->partition = lag[i].partition;
		p->committed = lag[i].committed;
		p->high = lag[i].high;
		p->lag = lag[i].lag;
	}
}

/* The figures, for the server's thread to copy. The WAL's size is read
 * here, in the loop's thread, so a scrape never touches the database's
 * files. */
static void publish(struct consume *c, int64_t now)
{
	const struct ingest_kafka_stats *s = ingest_kafka_stats(c->k);
	const struct ingest_stats *is = ingest_stats(c->in);
	struct metrics_snap *m = c->snap;
	struct store_stats st;

	pipeline_writer_stats(c->w, &st);
	if (now >= c->next_incidents_ms) {
		refresh_open_incidents(c);
		c->next_incidents_ms = now + INCIDENTS_MS;
	}
	*m = (struct metrics_snap){
		.messages = s->messages, .bytes = s->bytes,
		.records = s->records, .tagged = tagged(c),
		.batches = s->batches, .redelivered = s->redelivered,
		.rejects_empty = s->empty,
		.rejects_undecodable = s->rejects - s->empty,
		.truncated = is->truncated, .bad_utf8 = is->bad_utf8,
		.binary = is->binary, .events_new = st.events_new,
		.fb_helm_payload = is->helm_payload_fallback,
		.fb_docker_time = is->bad_times,
		.fb_out_of_range = is->times_out_of_range,
		.times_local = is->times_local,
		.fb_helm_status = is->helm_status_incomplete,
		.oversize = is->oversize,
		.events_expired = st.events_expired,
		.incidents_expired = st.incidents_expired,
		.events_updated = st.events_updated,
		.incidents_opened = st.incidents_opened,
		.registry_refused = st.registry_refused,
		.watermark_ignored = st.watermark_ignored,
		.rebalances = s->rebalances,
		.kafka_commit_errors = s->kafka_commit_errors,
		.kafka_errors = s->errors, .incidents_open = c->open_incidents,
		.handover_skipped = s->handover_skipped,
		.handover_dropped = s->handover_dropped,
		.assignments_lost = s->assignments_lost,
		.helm_topic_skipped = s->global_skipped,
		.wal_bytes = c->wal_path ? metrics_file_bytes(c->wal_path) : -1,
		.brokers_down = s->brokers_down,
	};
	m->helm_lag = -1;
	if (c->helm_topics->n)
		m->helm_partitions = ingest_kafka_global_lag(c->k,
							     &m->helm_lag);
	fill_parts(m, c);
	metrics_publish(c->m, m);
}

/* Each turn of the loop: the heartbeat /healthz reads, and now and then
 * the figures. */
static void metrics_tick(struct consume *c)
{
	int64_t now = now_ms();

	if (c->m && metrics_turn(c->m, now, &c->next_publish_ms, PUBLISH_MS))
		publish(c, now);
}

/* Before anything slow (rules, the database's migration): /healthz
 * answers while revtrail starts. */
static int start_http(struct consume *c, const char *addr, int64_t ready_lag)
{
	char err[RT_ERRLEN];
	int rc;

	if (!(c->m = metrics_new(ready_lag, now_ms())) ||
	    !(c->snap = malloc(sizeof(*c->snap))))
		goto nomem;
	if ((rc = http_start(addr, c->m, &c->http, err, sizeof(err)))) {
		rt_log(RT_LOG_ERROR, "http", "%s", err);
		return rc == RT_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	return 0;
nomem:
	rt_log(RT_LOG_ERROR, "http", "out of memory");
	return CLI_FAIL;
/* How long exit waits for the incidents topic's last messages. */
#define ITOPIC_FLUSH_MS 5000
}

/* ---- options --------------------------------------------------------- */

enum {
	OPT_GAP = CLI_OPT_FIRST_FREE, OPT_KEEP, OPT_START, OPT_BATCH_MSGS,
	OPT_BATCH_MS, OPT_STATUS, OPT_STATS_JSON, OPT_REGAP, OPT_CLUSTER,
	OPT_LOG_FORMAT, OPT_HTTP, OPT_READY_LAG, OPT_ITOPIC, OPT_MAX_REGISTRY,
	OPT_RETAIN, OPT_HELM_TOPIC,
};

static const struct cli_opt opts[] = {
	{ "brokers", 'b', "BROKERS", "bootstrap.servers (required)", NULL },
	{ "topic", 't', "TOPIC[@CLUSTER]", "a topic (repeatable; ^regex "
	  "subscribes by pattern)", NULL },
	{ "helm-topic", OPT_HELM_TOPIC, "TOPIC[@CLUSTER]", "a topic of Helm "
	  "records every instance reads in full, outside the group "
	  "(repeatable)", NULL },
	{ "group", 'G', "GROUP", "the consumer group (required)", NULL },
	{ "property", 'X', "PROP=VALUE", "a librdkafka property (TLS, SASL)",
	  NULL },
	{ "properties-file", 'F', "FILE", "key=value lines; -X and -F apply "
	  "in order", NULL },
	{ "db", 'd', "PATH", "the database, created as needed",
	  "$REVTRAIL_DB, else ./revtrail.db" },
	{ "exit-at-end", 'e', NULL, "exit once every partition is read", NULL },
	{ "start", OPT_START, "group|earliest|latest", "where a partition the "
	  "database never saw starts", "group" },
	{ "batch-messages", OPT_BATCH_MSGS, "N", "commit at N messages "
	  "(and at 16384 stored events)", "32768" },
	{ "batch-ms", OPT_BATCH_MS, "MS", "commit MS after a batch's first "
	  "message", "1000" },
	{ "status-interval", OPT_STATUS, "SECONDS", "a status line every "
	  "SECONDS, 0 = off", "10" },
	{ "stats-json", OPT_STATS_JSON, "FILE", "the status figures as JSON, "
	  "rewritten every interval", NULL },
	{ "incidents-topic", OPT_ITOPIC, "TOPIC", "produce the latest state "
	  "of each incident a commit changed, as JSON, at least once", NULL },
	{ "gap", OPT_GAP, "DURATION", "the quiet gap that splits incidents "
	  "(1s to 30d)", "15m, or the database's" },
	{ "regap", OPT_REGAP, NULL, "accept a --gap other than the "
	  "database's and recompute its incidents", NULL },
	{ "keep-untagged", OPT_KEEP, NULL, "store untagged records too", NULL },
	{ "cluster", OPT_CLUSTER, "NAME", "the cluster of topics without "
	  "@CLUSTER", "the default one, \"\"" },
	{ "log-format", OPT_LOG_FORMAT, "text|json", "stderr lines as text or "
	  "JSON", "text" },
	{ "http", OPT_HTTP, "ADDR:PORT", "serve /metrics, /healthz and "
	  "/readyz", NULL },
	{ "ready-lag", OPT_READY_LAG, "N", "the most lag /readyz answers 200 "
	  "to", "twice --batch-messages" },
	{ "max-registry", OPT_MAX_REGISTRY, "SIZE", "memory of each cluster's "
	  "release registry (1M to 1024M)", "64M" },
	{ "retain", OPT_RETAIN, "DURATION", "delete, a share per commit, what "
	  "aged past DURATION (at least 1m)", "keep everything" },
	CLI_INPUT_OPTS,
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"consume", "-b BROKERS -t TOPIC[@CLUSTER]... -G GROUP [OPTIONS]",
	"  A Kafka consumer-group service: topics into incidents. Offsets\n"
	"  live in the database: a restart resumes exactly after the last\n"
	"  committed batch. -F keeps secrets off the command line.\n",
	opts,
	"  revtrail consume -b kafka:9092 -t k8s-events -t k8s-logs "
	"-G revtrail \\\n"
	"      --db /var/lib/revtrail/revtrail.db --http :8080\n",
};

struct consume_args {
	struct ingest_opts io;
	struct cli_rules_opts ro;
	struct pipeline_opts so;
	struct ingest_kafka_opts ko;
	struct cli_topics topics;    /* -t TOPIC[@CLUSTER], --cluster */
	struct cli_topics helm;      /* --helm-topic TOPIC[@CLUSTER] */
	/* -X and -F in command-line order: 'X' or 'F', then the argument. */
	char prop_kind[MAX_PROPS];
	const char *prop[MAX_PROPS];
	int nprops;
	const char *db;
	const char *itopic;         /* --incidents-topic */
	bool keep;
	long status_s;
	int log_format;         /* enum rt_log_format */
	const char *http;       /* --http ADDR:PORT */
	long ready_lag;         /* -1: twice the batch */
};

static int parse_uint(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Returns -1 to go on, else the exit code. */
static int parse_opt(struct consume_args *a, int opt, const char *arg)
{
	long v;
	int rc;

	switch (opt) {
	case 'b': a->ko.brokers = arg; return -1;
	case 'G': a->ko.group = arg; return -1;
	case 'd': a->db = arg; return -1;
	case OPT_ITOPIC: a->itopic = arg; return -1;
	case 'e': a->ko.exit_at_end = true; return -1;
	case OPT_KEEP: a->keep = true; return -1;
	case OPT_STATS_JSON: return -1;   /* parse_args keeps the path */
	case 't':
		return cli_topics_add(&a->topics, "-t", arg) ? CLI_USAGE : -1;
	case OPT_HELM_TOPIC:
		if (arg[0] == '^')
			return cli_usage_error("consume", "--helm-topic takes "
					       "a topic name, not a pattern");
		return cli_topics_add(&a->helm, "--helm-topic", arg) ? CLI_USAGE : -1;
	case OPT_CLUSTER:
		if (cli_cluster_check("consume", "--cluster", arg))
			return CLI_USAGE;
		a->topics.dflt = arg;
		return -1;
	case 'X':
	case 'F':
		if (a->nprops == MAX_PROPS)
			return cli_usage_error("consume", "too many -X/-F");
		a->prop_kind[a->nprops] = (char)opt;
		a->prop[a->nprops++] = arg;
		return -1;
	case OPT_START:
		if (!strcmp(arg, "group"))
			a->ko.start = INGEST_KAFKA_START_GROUP;
		else if (!strcmp(arg, "earliest"))
			a->ko.start = INGEST_KAFKA_START_EARLIEST;
		else if (!strcmp(arg, "latest"))
			a->ko.start = INGEST_KAFKA_START_LATEST;
		else
			return cli_usage_error("consume", "--start wants group, "
					       "earliest or latest, got '%s'",
					       arg);
		return -1;
	case OPT_BATCH_MSGS:
		if (parse_uint(arg, 1000000, &v) || !v)
			return cli_usage_error("consume", "bad --batch-messages "
					       "'%s'", arg);
		a->ko.batch_messages = (unsigned)v;
		return -1;
	case OPT_BATCH_MS:
		if (parse_uint(arg, 600000, &v) || !v)
			return cli_usage_error("consume", "bad --batch-ms '%s'",
					       arg);
		a->ko.batch_ms = (unsigned)v;
		return -1;
	case OPT_STATUS:
		if (parse_uint(arg, 86400, &v))
			return cli_usage_error("consume", "bad --status-interval"
					       " '%s' (seconds, 0 = off)", arg);
		a->status_s = v ? v : -2;   /* -2: explicitly off */
		return -1;
	case OPT_GAP:
		return cli_gap_opt("consume", arg, &a->so.gap_ns) ? CLI_USAGE :
			-1;
	case OPT_REGAP:
		a->so.regap = true;
		return -1;
	case OPT_MAX_REGISTRY:
		return cli_registry_opt("consume", arg, &a->so.registry_bytes) ?
			CLI_USAGE : -1;
	case OPT_RETAIN:
		return cli_retain_opt("consume", arg, &a->so.retain_ns) ?
			CLI_USAGE : -1;
	case OPT_HTTP:
		a->http = arg;
		return -1;
	case OPT_READY_LAG:
		if (parse_uint(arg, 1000000000, &a->ready_lag))
			return cli_usage_error("consume", "bad --ready-lag '%s' "
					       "(messages)", arg);
		return -1;
	case OPT_LOG_FORMAT:
		if ((a->log_format = rt_log_format_from_name(arg)) < 0)
			return cli_usage_error("consume", "--log-format wants "
					       "text or json, got '%s'", arg);
		return -1;
	case 'h':
		cli_help(stdout, &cmd);
		return CLI_OK;
	}
	rc = cli_input_opt("consume", opt, arg, &a->io, &a->ro);
	return rc == 1 ? -1 : CLI_USAGE;
}

/* A --helm-topic is read whole by every instance: the group must not
 * also split it. Its cluster is --cluster's unless it names one. */
static int check_helm_topics(struct consume_args *a)
{
	for (int i = 0; i < a->helm.n; i++)
		for (int j = 0; j < a->topics.n; j++)
			if (!strcmp(a->helm.name[i], a->topics.name[j]))
				return cli_usage_error("consume", "%s is both a "
						       "-t and a --helm-topic",
						       a->helm.name[i]);
	a->helm.dflt = a->topics.dflt;
	a->ko.global_topics = a->helm.names;
	a->ko.nglobal = a->helm.n;
	return -1;
}

static int parse_args(struct consume_args *a, const char **stats_path,
		      int argc, char **argv)
{
	int opt, rc;

	a->ready_lag = -1;
	optind = 1;
	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		if (opt == OPT_STATS_JSON)
			*stats_path = optarg;
		if ((rc = parse_opt(a, opt, optarg)) >= 0)
			return rc;
	}
	if (optind < argc)
		return cli_usage_error("consume", "unexpected argument '%s'",
				       argv[optind]);
	if (a->topics.n == 0)
		return cli_usage_error("consume", "at least one -t TOPIC is "
				       "required");
	a->ko.topics = a->topics.names;
	a->ko.ntopics = a->topics.n;
	return check_helm_topics(a);
}

/* -X and -F, in order, after revtrail's defaults. */
static int apply_props(struct ingest_kafka *k, const struct consume_args *a)
{
	char err[RT_ERRLEN];

	for (int i = 0; i < a->nprops; i++) {
		int rc = a->prop_kind[i] == 'X' ?
			ingest_kafka_set_kv(k, a->prop[i], err, sizeof(err)) :
			ingest_kafka_load_file(k, a->prop[i], err, sizeof(err));

		if (rc)
			return cli_usage_error("consume", "%s %s", a->prop_kind[i]
					       == 'X' ? "-X" : "-F", err);
	}
	return 0;
}

/* ---- the loop -------------------------------------------------------- */

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* A second signal kills as usual, for a stuck shutdown. */
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed terminal stops it as SIGTERM does; a dead stderr must
	 * not kill it between a commit and its offsets (EPIPE is ignored). */
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The last committed changes, then a bounded flush. */
static void close_itopic(struct consume *c)
{
	if (!c->itopic)
		return;
	pipeline_writer_wait(c->w);
	produce_changes(c);
	c->istats = itopic_close(c->itopic, reader(c), c->st,
				 ITOPIC_FLUSH_MS);
	c->itopic = NULL;
}

static int run(struct consume *c)
{
	int64_t next_report;
	int rc = 0;
	char err[RT_ERRLEN];

	if (ingest_kafka_start(c->k, err, sizeof(err))) {
		rt_log(RT_LOG_ERROR, "consume", "%s", err);
		return CLI_USAGE;
	}
	c->started_ms = c->last_ms = now_ms();
	next_report = c->started_ms + (c->status_ms ? c->status_ms : 10000);
	if (c->m)
		metrics_set_state(c->m, METRICS_RUNNING);
	while (!stop_flag) {
		rc = ingest_kafka_poll(c->k, POLL_MS);
		rt_log_tick();
		metrics_tick(c);
		if (rc)
			break;
		if (c->itopic) {
			itopic_poll(c->itopic);
			/* The outbox's rows the producer had no room for,
			 * those to produce again, those delivered. */
			if (itopic_wants(c->itopic) &&
			    pipeline_writer_done(c->w) == 1)
				produce_changes(c);
		}
		if (now_ms() >= next_report) {
			if (c->status_ms || c->stats_path)
				report(c, false);
			warn_registry(c, false);
			next_report = now_ms() + (c->status_ms ? c->status_ms :
						  10000);
		}
	}
	if (c->m)
		metrics_set_state(c->m, METRICS_STOPPING);
	if (rc < 0) {
		rt_log(RT_LOG_ERROR, "consume", "stopping: %s", rt_strerror(rc));
		ingest_kafka_close(c->k);
		close_itopic(c);
		return CLI_FAIL;
	}
	if (stop_flag)
		rt_log(RT_LOG_INFO, "consume", "signal received: committing and "
		       "leaving the group");
	/* Commit first so the final figures show the partitions caught up;
	 * they are kept, as leaving the group unassigns them. */
	rc = ingest_kafka_flush(c->k);
	read_lags(c);
	c->lags_kept = true;
	if (ingest_kafka_close(c->k) && !rc)
		rc = RT_EKAFKA;
	close_itopic(c);
	/* Last, so they count what the close and the producer's flush did
	 * (the revoke at leaving, the last deliveries). */
	if (c->stats_path)
		report(c, true);
	if (c->m)
		publish(c, now_ms());
	return rc ? CLI_FAIL : CLI_OK;
}

/* The producer gets the consumer's connection and security properties. */
static int setup_itopic(struct consume *c, const struct consume_args *a)
{
	struct itopic_prop props[MAX_PROPS];
	char err[RT_ERRLEN];

	for (int i = 0; i < a->nprops; i++)
		props[i] = (struct itopic_prop){ a->prop_kind[i], a->prop[i] };
	if (!(c->itopic = itopic_new(a->itopic, a->ko.brokers, props,
				     a->nprops, err, sizeof(err)))) {
		rt_log(RT_LOG_ERROR, "consume", "%s", err);
		return CLI_USAGE;
	}
	c->itopic_name = a->itopic;
	if (pipeline_writer_track_incidents(c->w)) {
		rt_log(RT_LOG_ERROR, "store", "%s", store_errmsg(c->st));
		return CLI_FAIL;
	}
	return 0;
}

static int setup(struct consume *c, struct consume_args *a)
{
	char err[RT_ERRLEN];
	int rc;

	if (!(c->rules = cli_load_rules(&a->ro)))
		return CLI_USAGE;
	a->so.rules = c->rules;
	a->so.release_ns = a->io.release_ns;
	a->so.release_name = a->io.release_name;
	if (a->io.verbose) {        /* -v lines are log lines too */
		c->vlog[0] = rt_log_stream(RT_LOG_INFO, "ingest");
		c->vlog[1] = rt_log_stream(RT_LOG_INFO, "store");
		a->io.verbose = c->vlog[0] ? c->vlog[0] : stderr;
		a->so.log = c->vlog[1] ? c->vlog[1] : stderr;
	}
	c->db_path = cli_db_path(a->db);
	if ((rc = pipeline_db_open(c->db_path, &a->so, &c->db, err,
				   sizeof(err)))) {
		rt_log(RT_LOG_ERROR, "store", "%s", err);
		return rc == RT_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	c->st = pipeline_db_store(c->db);
	if (c->m && !(c->wal_path = metrics_wal_path(c->db_path)))
		return CLI_FAIL;
	if (store_regapped_from(c->st))
		cli_note_regap("consume", store_regapped_from(c->st),
			       a->so.gap_ns);
	a->io.defer_payload = !a->keep; /* an untagged kept event needs its
					 * message */
	c->max_record = a->io.max_record;
	if (!(c->in = ingest_new(&a->io)) ||
	    pipeline_batches_new(c->db, a->keep, &c->stats, &c->bt)) {
		rt_log(RT_LOG_ERROR, "consume", "out of memory");
		return CLI_FAIL;
	}
	c->w = pipeline_batches_writer(c->bt);
	c->topics = &a->topics;
	c->helm_topics = &a->helm;
	if (c->m)
		pipeline_writer_set_done(c->w, writer_done, c);
	a->ko.in = c->in;
	a->ko.arena = &c->arena;
	a->ko.hooks = (struct ingest_kafka_hooks){
		c, hook_stored_offset, hook_record, hook_commit, hook_durable,
		hook_full, hook_drop };
	if (!(c->k = ingest_kafka_new(&a->ko, err, sizeof(err)))) {
		rt_log(RT_LOG_ERROR, "consume", "%s", err);
		return CLI_USAGE;
	}
	if ((rc = apply_props(c->k, a)))
		return rc;
	return a->itopic ? setup_itopic(c, a) : 0;
}

int cmd_consume(int argc, char **argv)
{
	struct consume_args a = { 0 };
	struct consume c = { 0 };
	int rc;

	if ((rc = parse_args(&a, &c.stats_path, argc, argv)) >= 0)
		return rc;
	rt_log_setup((enum rt_log_format)a.log_format, NULL);
	if (a.ready_lag < 0)
		a.ready_lag = 2L * (a.ko.batch_messages ? a.ko.batch_messages :
				    INGEST_KAFKA_BATCH_MESSAGES);
	c.status_ms = a.status_s == -2 ? 0 : a.status_s > 0 ?
		(unsigned)a.status_s * 1000 : STATUS_DEFAULT_S * 1000;
	c.open_incidents = -1;
	rt_arena_init(&c.arena);
	stop_flag = 0;
	if ((!a.http || !(rc = start_http(&c, a.http, a.ready_lag))) &&
	    !(rc = setup(&c, &a))) {
		catch_signals();
		rc = run(&c);
		if (c.started_ms)
			summary(&c, (now_ms() - c.started_ms) / 1000.0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
	}
	http_stop(c.http);              /* it reads c.m */
	itopic_close(c.itopic, NULL, NULL, 0);    /* a setup that failed */
	store_changes_free(&c.changes);
	/* The writer ends first: its batches name the source's topics. */
	pipeline_batches_free(c.bt);
	ingest_kafka_free(c.k);
	ingest_free(c.in);
	rt_arena_release(&c.arena);
	store_close(c.ro);
	pipeline_db_close(c.db);
	rules_free(c.rules);
	for (int i = 0; i < 2; i++)
		if (c.vlog[i])
			fclose(c.vlog[i]);
	metrics_free(c.m);
	free(c.snap);
	free(c.wal_path);
	rt_log_flush();
	return rc;
}
