/*
 * cmd_fleet.c: `revtrail fleet -b BROKERS -t TOPIC --db FLEET.db`: the
 * incidents topic that consume instances write (--incidents-topic) folded
 * into one database, which incidents, show, report and query read like
 * any other, however many instances there are (--db reads ten at most).
 *
 * One folder reads every partition of the topic (assigned, no group: the
 * database's lock already keeps a second folder out), from the offsets
 * its database stored, else from the beginning; the partitions are looked
 * up again every FLEET_REFRESH_MS, so one added to the topic is read
 * without a restart (from its beginning). Each batch -- its
 * messages put into fleet_parts, the touched releases refolded, the next
 * offsets in sources -- is one transaction (store/fleet.c), so a kill at
 * any point resumes exactly after the last committed batch and every
 * message counts once. Kafka's committed offsets are not used.
 *
 * With --http it serves /metrics, /healthz and /readyz as consume does
 * (cli/http.c), from figures the loop publishes: the fold's counters and
 * each partition's stored offset, high watermark and lag.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "cli.h"
#include "http.h"
#include "metrics.h"
#include "revtrail/kafka.h"
#include "revtrail/log.h"
#include "revtrail/store.h"
#include "revtrail/store_fleet.h"

#define MAX_PROPS 64
#define MAX_PARTITIONS 4096
#define POLL_MS 100
#define REFUSED_LOGGED 10           /* refused messages named in the log */
#define STATS_MS 1000               /* --stats-json at most this often */
/* How often the topic's partitions are looked up again, and how long a
 * lookup may take then (the first one, at start, may take 30 s). */
#define FLEET_REFRESH_MS 30000
#define FLEET_LOOKUP_MS 500
#define PUBLISH_MS 1000             /* --http: figures at most this often */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* What the fold knows of one partition of the topic. */
struct fpart {
	int64_t next;                   /* next offset to fold */
	int64_t stored;                 /* next offset in the database */
	bool eof;                       /* read to its end */
	bool moved;                     /* read in the open batch */
};

struct fleet {
	const char *brokers, *topic, *db, *stats_path;
	char prop_kind[MAX_PROPS];
	const char *prop[MAX_PROPS];
	int nprops;
	bool exit_at_end;
	long batch_messages, batch_ms;
	int64_t gap_ns;

	rd_kafka_t *rk;
	struct store *st;
	int nparts;
	struct fpart *part;             /* nparts of them */
	long pending;                   /* messages in the open batch */
	int64_t batch_start_ms, stats_ms, refresh_ms;
	uint64_t messages, parts, tombstones, refused, batches, recomputed;

	const char *http_addr;          /* --http */
	long ready_lag;                 /* -1: twice --batch-messages */
	struct http *http;
	struct metrics *m;
	struct metrics_snap *snap;
	char *wal_path;
	int64_t publish_ms;
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- the client -------------------------------------------------------- */

static int set_prop(void *ctx, const char *key, const char *val, char *err,
		    size_t errsz)
{
	if (rd_kafka_conf_set(ctx, key, val, err, errsz) != RD_KAFKA_CONF_OK)
		return RT_EINVAL;
	return 0;
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac,
		   const char *buf)
{
	(void)rk;
	rt_log_fac(rt_log_level_from_syslog(level), "librdkafka", fac, buf);
}

/* Properties in command-line order, then ours, which none may undo. */
static rd_kafka_conf_t *client_conf(const struct fleet *f, char *err,
				    size_t errsz)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	int rc = set_prop(conf, "bootstrap.servers", f->brokers, err, errsz);

	for (int i = 0; i < f->nprops && !rc; i++)
		rc = f->prop_kind[i] == 'X' ?
			ingest_kafka_prop_kv(f->prop[i], set_prop, conf, err,
					     errsz) :
			ingest_kafka_props_file(f->prop[i], set_prop, conf,
						err, errsz);
	if (!rc)
		rc = set_prop(conf, "group.id", "revtrail-fleet", err, errsz) ||
			set_prop(conf, "enable.auto.commit", "false", err,
				 errsz) ||
			set_prop(conf, "enable.auto.offset.store", "false",
				 err, errsz) ||
			set_prop(conf, "enable.partition.eof", "true", err,
				 errsz) ||
			/* An offset retention deleted: the topic's state is
			 * each key's latest value, so reading from the first
			 * kept message loses nothing a compacted topic has. */
			set_prop(conf, "auto.offset.reset", "earliest", err,
				 errsz);
	if (rc) {
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	rd_kafka_conf_set_log_cb(conf, on_log);
	return conf;
}

/* The topic's partition count, from the brokers, in *n. */
static int partitions(struct fleet *f, int timeout_ms, int *n, char *err,
		      size_t errsz)
{
	const struct rd_kafka_metadata *md;
	rd_kafka_topic_t *t = rd_kafka_topic_new(f->rk, f->topic, NULL);
	rd_kafka_resp_err_t e;

	if (!t) {
		snprintf(err, errsz, "topic %s: %s", f->topic,
			 rd_kafka_err2str(rd_kafka_last_error()));
		return RT_EKAFKA;
	}
	e = rd_kafka_metadata(f->rk, 0, t, &md, timeout_ms);
	rd_kafka_topic_destroy(t);
	if (e) {
		snprintf(err, errsz, "topic %s: %s", f->topic,
			 rd_kafka_err2str(e));
		return RT_EKAFKA;
	}
	if (md->topic_cnt != 1 || md->topics[0].err ||
	    md->topics[0].partition_cnt < 1) {
		snprintf(err, errsz, "topic %s: %s", f->topic,
			 md->topic_cnt == 1 && md->topics[0].err ?
			 rd_kafka_err2str(md->topics[0].err) : "no partitions");
		rd_kafka_metadata_destroy(md);
		return RT_EKAFKA;
	}
	*n = md->topics[0].partition_cnt;
	if (*n > MAX_PARTITIONS)
		*n = MAX_PARTITIONS;
	rd_kafka_metadata_destroy(md);
	return 0;
}

/*
 * Partitions up to n: the new ones start where the database stored, else
 * at the first offset; then all are assigned at once (a consumer without
 * a group has no incremental assign), each one already read at its next
 * offset, so a re-assign neither skips nor repeats a message.
 */
static int assign(struct fleet *f, int n, char *err, size_t errsz)
{
	rd_kafka_topic_partition_list_t *l;
	rd_kafka_resp_err_t e;
	int rc;

	struct fpart *part = realloc(f->part, (size_t)n * sizeof(*part));

	if (!part) {
		snprintf(err, errsz, "out of memory");
		return RT_ENOMEM;
	}
	f->part = part;
	for (; f->nparts < n; f->nparts++) {
		struct fpart *fp = &f->part[f->nparts];

		*fp = (struct fpart){ 0 };
		rc = store_position(f->st, f->topic, f->nparts, &fp->next);
		if (rc < 0) {
			snprintf(err, errsz, "%s", store_errmsg(f->st));
			return rc;
		}
		if (rc == 1)
			fp->next = 0;
		fp->stored = fp->next;
	}
	l = rd_kafka_topic_partition_list_new(f->nparts);
	for (int p = 0; p < f->nparts; p++)
		rd_kafka_topic_partition_list_add(l, f->topic, p)->offset =
			f->part[p].next ? f->part[p].next :
			RD_KAFKA_OFFSET_BEGINNING;
	e = rd_kafka_assign(f->rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	if (e) {
		snprintf(err, errsz, "assign: %s", rd_kafka_err2str(e));
		return RT_EKAFKA;
	}
	f->refresh_ms = now_ms() + FLEET_REFRESH_MS;
	return 0;
}

/* When due: partitions added to the topic since the last look, assigned.
 * A lookup that fails (no broker now) is tried again when next due. */
static int refresh(struct fleet *f)
{
	char err[RT_ERRLEN];
	int n, was = f->nparts, rc;

	if (now_ms() < f->refresh_ms)
		return 0;
	f->refresh_ms = now_ms() + FLEET_REFRESH_MS;
	if (partitions(f, FLEET_LOOKUP_MS, &n, err, sizeof(err)) ||
	    n <= f->nparts)
		return 0;
	if ((rc = assign(f, n, err, sizeof(err)))) {
		rt_log(RT_LOG_ERROR, "kafka", "%s", err);
		return rc;
	}
	rt_log(RT_LOG_INFO, "kafka", "%s has %d partitions now (%d before): "
	       "the new ones are read from their beginning", f->topic, n, was);
	return 0;
}

static int start(struct fleet *f, char *err, size_t errsz)
{
	struct store_opts so = { .gap_ns = f->gap_ns };
	char sub[512];
	rd_kafka_conf_t *conf;
	int rc, n;

	if ((rc = store_open(f->db, 0, &so, &f->st, err, errsz)) ||
	    (rc = store_fleet_init(f->st))) {
		if (f->st)
			snprintf(err, errsz, "%s", store_errmsg(f->st));
		return rc;
	}
	if (!(conf = client_conf(f, sub, sizeof(sub)))) {
		snprintf(err, errsz, "%s", sub);
		return RT_EINVAL;
	}
	if (!(f->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, sub,
				   sizeof(sub)))) {
		rd_kafka_conf_destroy(conf);
		snprintf(err, errsz, "%s", sub);
		return RT_EKAFKA;
	}
	if ((rc = partitions(f, 30000, &n, err, errsz)))
		return rc;
	return assign(f, n, err, errsz);
}

/* ---- --stats-json ------------------------------------------------------ */

static void json_num(FILE *out, const char *key, uint64_t v)
{
	fprintf(out, ",\"%s\":%" PRIu64, key, v);
}

/* The counters and each partition's next offset (0: never read), after a
 * commit, written whole as consume writes its own: a fresh temporary
 * beside the file, created exclusively and never through a symlink,
 * renamed over it, so a reader never sees half. */
static void stats_json(struct fleet *f, bool final)
{
	char tmp[4096];
	FILE *out;

	f->stats_ms = now_ms();
	if (!f->stats_path ||
	    !(out = rt_replace_open(f->stats_path, tmp, sizeof(tmp))))
		return;
	fprintf(out, "{\"time\":%lld,\"final\":%s,\"topic\":",
		(long long)time(NULL), final ? "true" : "false");
	cli_json_str(out, f->topic, strlen(f->topic));
	json_num(out, "messages", f->messages);
	json_num(out, "parts_stored", f->parts);
	json_num(out, "tombstones", f->tombstones);
	json_num(out, "refused", f->refused);
	json_num(out, "incidents_recomputed", f->recomputed);
	json_num(out, "batches", f->batches);
	fputs(",\"partitions\":[", out);
	for (int p = 0; p < f->nparts; p++)
		fprintf(out, "%s{\"partition\":%d,\"next_offset\":%" PRId64
			"}", p ? "," : "", p, f->part[p].next);
	fputs("]}\n", out);
	rt_replace_commit(out, tmp, f->stats_path);
}

/* ---- --http ------------------------------------------------------------ */

/* A partition as /metrics and /readyz see it: the offset the database
 * holds, the high watermark librdkafka last fetched (-1 before a fetch),
 * and the messages between; a partition never read counts from its first
 * kept offset. */
static void fill_part(struct fleet *f, int p, struct metrics_part *mp)
{
	int64_t lo = -1, hi = -1, from;

	snprintf(mp->topic, sizeof(mp->topic), "%s", f->topic);
	mp->partition = p;
	mp->committed = f->part[p].stored;
	mp->high = mp->lag = -1;
	if (rd_kafka_get_watermark_offsets(f->rk, f->topic, p, &lo, &hi) ||
	    hi < 0)
		return;
	from = f->part[p].stored || lo < 0 ? f->part[p].stored : lo;
	mp->high = hi;
	mp->lag = hi > from ? hi - from : 0;
}

/* The figures, for the server's thread to copy; the WAL's size is read
 * here, so a scrape never touches the database's files. */
static void publish(struct fleet *f)
{
	struct metrics_snap *m = f->snap;

	*m = (struct metrics_snap){
		.fleet = true, .messages = f->messages, .batches = f->batches,
		.fleet_parts = f->parts, .fleet_tombstones = f->tombstones,
		.fleet_refused = f->refused,
		.fleet_recomputed = f->recomputed,
		.wal_bytes = f->wal_path ? metrics_file_bytes(f->wal_path) : -1,
		.incidents_open = -1, .helm_lag = -1,
		.assigned = (size_t)f->nparts,
	};
	m->nparts = f->nparts < METRICS_MAX_PARTS ? (size_t)f->nparts :
		METRICS_MAX_PARTS;
	for (size_t i = 0; i < m->nparts; i++)
		fill_part(f, (int)i, &m->parts[i]);
	metrics_publish(f->m, m);
}

/* Each turn of the loop: the heartbeat /healthz reads, and now and then
 * the figures. */
static void metrics_tick(struct fleet *f)
{
	if (f->m && metrics_turn(f->m, now_ms(), &f->publish_ms, PUBLISH_MS))
		publish(f);
}

/* Before the database opens (a migration can take a while): /healthz
 * answers while the fold starts. */
static int start_http(struct fleet *f, char *err, size_t errsz)
{
	if (!(f->m = metrics_new(f->ready_lag >= 0 ? f->ready_lag :
				 2 * f->batch_messages, now_ms())) ||
	    !(f->snap = malloc(sizeof(*f->snap))) ||
	    !(f->wal_path = metrics_wal_path(f->db))) {
		snprintf(err, errsz, "out of memory");
		return RT_ENOMEM;
	}
	return http_start(f->http_addr, f->m, &f->http, err, errsz);
}

static void set_state(struct fleet *f, enum metrics_state state)
{
	if (f->m) {
		if (state == METRICS_RUNNING)
			publish(f);
		metrics_set_state(f->m, state);
	}
}

/* ---- batches ----------------------------------------------------------- */

/* The open batch: its releases refolded, the offsets of the partitions
 * it read (one never read keeps no row, and starts at the beginning),
 * one commit. */
static int commit(struct fleet *f)
{
	struct plan_batch_pos pos[64];
	size_t n = 0;
	int64_t start = now_ms();
	int err = store_fleet_fold(f->st, &f->recomputed);

	for (int p = 0; p < f->nparts && !err; p++) {
		if (f->part[p].moved)
			pos[n++] = (struct plan_batch_pos){ f->topic, p,
							    f->part[p].next };
		if (n && (n == sizeof(pos) / sizeof(*pos) ||
			  p == f->nparts - 1)) {
			err = store_write_positions(f->st, pos, n);
			n = 0;
		}
	}
	if (!err)
		err = store_end(f->st, NULL);
	else
		store_abort(f->st);
	if (err) {
		rt_log(RT_LOG_ERROR, "store", "%s", store_errmsg(f->st));
		return err;
	}
	f->pending = 0;
	f->batches++;
	for (int p = 0; p < f->nparts; p++)
		if (f->part[p].moved) {
			f->part[p].stored = f->part[p].next;
			f->part[p].moved = false;
		}
	if (f->m)
		metrics_observe_commit(f->m, (double)(now_ms() - start) / 1e3);
	if (now_ms() - f->stats_ms >= STATS_MS)
		stats_json(f, false);
	return 0;
}

static void refused(struct fleet *f, const rd_kafka_message_t *m)
{
	if (f->refused++ < REFUSED_LOGGED)
		rt_log(RT_LOG_WARN, "fleet", "%s[%" PRId32 "]@%" PRId64 ": not "
		       "an incident of the incidents topic (a key and a JSON "
		       "object with namespace, release, revision, opened_ns "
		       "and last_ns); skipped", f->topic, m->partition,
		       m->offset);
}

static int message(struct fleet *f, const rd_kafka_message_t *m)
{
	int rc;

	if (m->partition < 0 || m->partition >= f->nparts ||
	    m->offset < f->part[m->partition].next)
		return 0;               /* not ours, or folded already */
	if (!f->pending && (rc = store_begin(f->st))) {
		rt_log(RT_LOG_ERROR, "store", "%s", store_errmsg(f->st));
		return rc;
	}
	if (!f->pending)
		f->batch_start_ms = now_ms();
	f->pending++;
	f->messages++;
	f->part[m->partition].eof = false;
	f->part[m->partition].moved = true;
	f->part[m->partition].next = m->offset + 1;
	if (!m->payload || !m->len)
		f->tombstones++;
	rc = store_fleet_put(f->st, m->key, m->key_len, m->payload, m->len);
	if (rc == 1)
		refused(f, m);
	else if (!rc && m->payload && m->len)
		f->parts++;
	return rc < 0 ? rc : 0;
}

static bool all_eof(const struct fleet *f)
{
	for (int p = 0; p < f->nparts; p++)
		if (!f->part[p].eof)
			return false;
	return true;
}

/* One poll: 0 to go on, 1 at the end (-e), or an error. */
static int step(struct fleet *f)
{
	rd_kafka_message_t *m = rd_kafka_consumer_poll(f->rk, POLL_MS);
	int rc = 0;

	metrics_tick(f);
	if (m && m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		if (m->partition >= 0 && m->partition < f->nparts)
			f->part[m->partition].eof = true;
	} else if (m && m->err) {
		rt_log(RT_LOG_WARN, "kafka", "%s", rd_kafka_message_errstr(m));
	} else if (m) {
		rc = message(f, m);
	}
	if (m)
		rd_kafka_message_destroy(m);
	if (!rc && f->pending && (f->pending >= f->batch_messages ||
				  now_ms() - f->batch_start_ms >= f->batch_ms ||
				  all_eof(f)))
		rc = commit(f);
	if (!rc && f->exit_at_end && !f->pending && all_eof(f))
		return 1;
	return rc ? rc : refresh(f);
}

static int run(struct fleet *f)
{
	int rc = 0;

	while (!stop_flag && !(rc = step(f)))
		;
	if (rc < 0) {
		if (f->pending)
			store_abort(f->st);
		return CLI_FAIL;
	}
	if (f->pending && commit(f))
		return CLI_FAIL;
	return CLI_OK;
}

static void release(struct fleet *f)
{
	if (f->rk) {
		rd_kafka_consumer_close(f->rk);
		rd_kafka_destroy(f->rk);
	}
	store_close(f->st);
	free(f->part);
	free(f->wal_path);
	free(f->snap);
	metrics_free(f->m);
}

/* ---- options ----------------------------------------------------------- */

enum { OPT_BATCH_MSGS = CLI_OPT_FIRST_FREE, OPT_BATCH_MS, OPT_GAP,
       OPT_STATS_JSON, OPT_HTTP, OPT_READY_LAG };

static const struct cli_opt opts[] = {
	{ "brokers", 'b', "BROKERS", "bootstrap.servers (required)", NULL },
	{ "topic", 't', "TOPIC", "the instances' --incidents-topic "
	  "(required)", NULL },
	{ "property", 'X', "PROP=VALUE", "a librdkafka property (TLS, SASL)",
	  NULL },
	{ "properties-file", 'F', "FILE", "key=value lines; -X and -F apply "
	  "in order", NULL },
	{ "db", 'd', "PATH", "the fleet database, created as needed",
	  "$REVTRAIL_DB, else ./revtrail.db" },
	{ "exit-at-end", 'e', NULL, "exit once every partition is read", NULL },
	{ "batch-messages", OPT_BATCH_MSGS, "N", "commit at N messages",
	  "16384" },
	{ "batch-ms", OPT_BATCH_MS, "MS", "commit MS after a batch's first "
	  "message", "1000" },
	{ "gap", OPT_GAP, "DURATION", "parts within the gap of each other "
	  "are one incident (as the instances')", "15m, or the database's" },
	{ "stats-json", OPT_STATS_JSON, "FILE", "the counters and each "
	  "partition's next offset as JSON, rewritten after commits and at "
	  "exit", NULL },
	{ "http", OPT_HTTP, "ADDR:PORT", "serve /metrics, /healthz and "
	  "/readyz (as consume --http)", NULL },
	{ "ready-lag", OPT_READY_LAG, "N", "the most lag /readyz answers 200 "
	  "to", "twice --batch-messages" },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"fleet", "-b BROKERS -t TOPIC [--db PATH] [OPTIONS]",
	"  Folds the incidents topic of consume instances (--incidents-topic)\n"
	"  into one database: each instance's incidents once, the parts of\n"
	"  one incident held by several instances merged. Offsets live in\n"
	"  the database: a restart resumes after the last committed batch.\n",
	opts,
	"  revtrail fleet -b kafka:9092 -t revtrail-incidents "
	"--db /var/lib/revtrail/fleet.db\n",
};

static int parse_long(const char *name, const char *s, long min, long max,
		      long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || end == s || *end || *out < min || *out > max)
		return cli_usage_error("fleet", "%s wants a number from %ld to "
				       "%ld, got '%s'", name, min, max, s);
	return 0;
}

/* -1 to go on, else the exit code. */
static int parse_opt(struct fleet *f, int opt, const char *arg)
{
	switch (opt) {
	case 'b': f->brokers = arg; return -1;
	case 't': f->topic = arg; return -1;
	case 'd': f->db = arg; return -1;
	case 'e': f->exit_at_end = true; return -1;
	case OPT_STATS_JSON: f->stats_path = arg; return -1;
	case 'X':
	case 'F':
		if (f->nprops == MAX_PROPS)
			return cli_usage_error("fleet", "too many -X/-F");
		f->prop_kind[f->nprops] = (char)opt;
		f->prop[f->nprops++] = arg;
		return -1;
	case OPT_BATCH_MSGS:
		return parse_long("--batch-messages", arg, 1, 1000000,
				  &f->batch_messages) ? CLI_USAGE : -1;
	case OPT_BATCH_MS:
		return parse_long("--batch-ms", arg, 1, 3600000,
				  &f->batch_ms) ? CLI_USAGE : -1;
	case OPT_GAP:
		return cli_gap_opt("fleet", arg, &f->gap_ns) ? CLI_USAGE : -1;
	case OPT_HTTP: f->http_addr = arg; return -1;
	case OPT_READY_LAG:
		return parse_long("--ready-lag", arg, 0, 1000000000,
				  &f->ready_lag) ? CLI_USAGE : -1;
	case 'h':
		cli_help(stdout, &cmd);
		return CLI_OK;
	default:
		return CLI_USAGE;
	}
}

static int parse_args(struct fleet *f, int argc, char **argv)
{
	int opt, rc;

	optind = 1;
	while ((opt = cli_getopt(argc, argv, &cmd)) != -1)
		if ((rc = parse_opt(f, opt, optarg)) >= 0)
			return rc;
	if (optind < argc)
		return cli_usage_error("fleet", "unexpected argument '%s'",
				       argv[optind]);
	if (!f->brokers || !f->topic || !*f->topic)
		return cli_usage_error("fleet", "-b BROKERS and -t TOPIC are "
				       "required");
	f->db = cli_db_path(f->db);
	return -1;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;     /* a second signal kills */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cmd_fleet(int argc, char **argv)
{
	struct fleet f = { .batch_messages = INGEST_KAFKA_BATCH_MESSAGES,
			   .batch_ms = INGEST_KAFKA_BATCH_MS, .ready_lag = -1 };
	char err[RT_ERRLEN];
	int rc;

	if ((rc = parse_args(&f, argc, argv)) >= 0)
		return rc;
	rt_log_setup(RT_LOG_TEXT, NULL);
	stop_flag = 0;
	catch_signals();
	if ((f.http_addr && (rc = start_http(&f, err, sizeof(err)))) ||
	    (rc = start(&f, err, sizeof(err)))) {
		fprintf(stderr, "revtrail fleet: %s\n", err);
		http_stop(f.http);
		release(&f);
		return rc == RT_EINVAL ? CLI_USAGE : CLI_FAIL;
	}
	set_state(&f, METRICS_RUNNING);
	rc = run(&f);
	set_state(&f, METRICS_STOPPING);
	stats_json(&f, true);
	fprintf(stderr, "revtrail fleet: %" PRIu64 " messages (%" PRIu64
		" tombstones, %" PRIu64 " refused) in %" PRIu64 " batches, %"
		PRIu64 " incidents recomputed\n", f.messages, f.tombstones,
		f.refused, f.batches, f.recomputed);
	http_stop(f.http);              /* it reads f.m */
	release(&f);
	return rc;
}
