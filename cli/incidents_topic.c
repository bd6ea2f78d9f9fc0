/*
 * incidents_topic.c: consume --incidents-topic. Each incident a committed
 * batch changed (opened, extended, merged into, diagnosed, closed) is
 * produced as one JSON object -- show -o json's incident plus pod_count --
 * keyed CLUSTER/NAMESPACE/RELEASE/INSTANCE/ID, so a compacted topic keeps
 * each incident's current state; an incident deleted (merged into
 * another) gets a tombstone under the key it had. INSTANCE is the
 * database's instance id (store_instance_id): ids are only unique within
 * one database, and instances of a fleet share the topic (revtrail fleet
 * folds it, cli/cmd_fleet.c).
 *
 * Only committed changes reach here (the store's writer hands over those
 * of batches whose transaction committed), and the row is read through a
 * read-only connection, which sees committed data only: nothing is ever
 * produced of a batch that failed. What is produced is the state now, so
 * a change produced twice, or late, is harmless: the last message of a key
 * is its current state. The producer is idempotent (acks=all), so a retry
 * neither duplicates nor reorders a key's messages.
 *
 * The changes to produce are those of the outbox (store/outbox.c): one
 * row per key, written in the transaction that changed the incident, and
 * removed once a message produced after that change is delivered, so what
 * was not delivered at exit, or during an outage, is produced at the next
 * start or once the brokers are back: each key's latest state at least
 * once.
 *
 * Never blocking the consumer: a key the producer's queue cannot take now
 * waits in the outbox for the next call, one whose delivery failed is
 * produced again (and counted), and errors are logged at most once every
 * 10 s with a count.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "incidents_topic.h"
#include "rows.h"
#include "revtrail/kafka.h"
#include "revtrail/log.h"
#include "revtrail/rt_kit.h"

#define LOG_EVERY_MS 10000
#define MAX_DONE 1000000           /* delivered ids not yet removed */
#define READ_ROWS 500               /* outbox rows read at a time */
#define RETRY_MS 1000
#define NO_RETRY INT64_MAX

struct itopic {
	rd_kafka_t *rk;
	char *topic;
	char instance[32];              /* the database's, read once */
	struct itopic_stats st;
	bool closing;
	int64_t logged_ms;
	uint64_t unlogged;              /* errors since the last line */
	struct store *ro;               /* during a publish */
	int64_t cursor;                 /* the last outbox id produced */
	bool more;                      /* rows may lie past cursor */
	int64_t retry_from, retry_ms;   /* the lowest id not delivered */
	int64_t *done;                  /* ids delivered, to remove */
	size_t ndone, cap;
};

static const char *const json_cols[] = {
	"tags", "later_revisions", "evidence", "pods", NULL,
};

/* Properties of a consumer only: a producer would warn about each. */
static const char *const consumer_only[] = {
	"group.", "partition.assignment.", "session.timeout.", "heartbeat.",
	"coordinator.", "max.poll.", "enable.auto.", "auto.commit.",
	"auto.offset.", "queued.", "fetch.", "isolation.level", "consume.",
	"enable.partition.eof", "check.crcs", "offset.store.",
	"allow.auto.create.topics",
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void failed(struct itopic *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Counts a failure; says so at most once per LOG_EVERY_MS (the messages
 * name incidents, so the log's own folding of repeats would not). */
static void failed(struct itopic *t, const char *fmt, ...)
{
	int64_t now = now_ms();
	char msg[512];
	va_list ap;

	t->st.failed++;
	if (t->logged_ms && now - t->logged_ms < LOG_EVERY_MS) {
		t->unlogged++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (t->unlogged)
		rt_log(RT_LOG_WARN, "incidents", "topic %s: %s (and %" PRIu64
		       " more failures since the last report)", t->topic, msg,
		       t->unlogged);
	else
		rt_log(RT_LOG_WARN, "incidents", "topic %s: %s", t->topic, msg);
	t->logged_ms = now;
	t->unlogged = 0;
}

/* ---- delivery -------------------------------------------------------- */

/* A delivered outbox row, to remove at the next publish. Past the bound
 * it stays, and is produced again at the next start: harmless. */
static void delivered(struct itopic *t, int64_t oid)
{
	if (t->ndone == MAX_DONE || RT_GROW(t->done, t->ndone + 1, t->cap))
		return;
	t->done[t->ndone++] = oid;
}

/* An outbox row not delivered is read and produced again, from the
 * lowest such id on, once RETRY_MS have passed. */
static void retry(struct itopic *t, int64_t oid)
{
	if (t->retry_from == NO_RETRY)
		t->retry_ms = now_ms() + RETRY_MS;
	if (oid < t->retry_from)
		t->retry_from = oid;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m,
			void *opaque)
{
	struct itopic *t = opaque;
	int64_t oid = (int64_t)(intptr_t)m->_private;

	(void)rk;
	if (!m->err) {
		t->st.delivered++;
		delivered(t, oid);
		return;
	}
	failed(t, "not delivered: %s", rd_kafka_err2str(m->err));
	if (!t->closing)
		retry(t, oid);
}

/* librdkafka's own lines, as the consumer's (ingest/src_kafka.c). */
static void on_log(const rd_kafka_t *rk, int level, const char *fac,
		   const char *buf)
{
	(void)rk;
	rt_log_fac(rt_log_level_from_syslog(level), "librdkafka", fac, buf);
}

static void on_error(rd_kafka_t *rk, int err, const char *reason,
		     void *opaque)
{
	struct itopic *t = opaque;
	char fatal[512];

	if (err == RD_KAFKA_RESP_ERR__FATAL) {
		rd_kafka_fatal_error(rk, fatal, sizeof(fatal));
		rt_log(RT_LOG_ERROR, "incidents", "topic %s: the producer "
		       "failed for good: %s; incidents are no longer produced "
		       "(the database has them)", t->topic, fatal);
	}
	/* Others (brokers down, retried) show as undelivered messages. */
	(void)reason;
}

/* ---- setup ----------------------------------------------------------- */

static bool for_consumer(const char *key)
{
	for (size_t i = 0; i < sizeof(consumer_only) / sizeof(*consumer_only);
	     i++)
		if (!strncmp(key, consumer_only[i], strlen(consumer_only[i])))
			return true;
	return false;
}

static int set_prop(void *ctx, const char *key, const char *val, char *err,
		    size_t errsz)
{
	if (for_consumer(key))
		return 0;
	if (rd_kafka_conf_set(ctx, key, val, err, errsz) != RD_KAFKA_CONF_OK)
		return RT_EINVAL;
	return 0;
}

static rd_kafka_conf_t *producer_conf(struct itopic *t, const char *brokers,
				      const struct itopic_prop *props,
				      int nprops, char *err, size_t errsz)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char sub[512];
	int rc = 0;

	if (brokers)
		rc = set_prop(conf, "bootstrap.servers", brokers, sub,
			      sizeof(sub));
	for (int i = 0; i < nprops && !rc; i++)
		rc = props[i].kind == 'X' ?
			ingest_kafka_prop_kv(props[i].arg, set_prop, conf, sub,
					     sizeof(sub)) :
			ingest_kafka_props_file(props[i].arg, set_prop, conf,
						sub, sizeof(sub));
	/* Last, so no property undoes them. */
	if (!rc)
		rc = set_prop(conf, "enable.idempotence", "true", sub,
			      sizeof(sub)) ||
			set_prop(conf, "acks", "all", sub, sizeof(sub)) ||
			set_prop(conf, "client.id", "revtrail-incidents", sub,
				 sizeof(sub));
	if (rc) {
		snprintf(err, errsz, "--incidents-topic producer: %s", sub);
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_error_cb(conf, on_error);
	rd_kafka_conf_set_log_cb(conf, on_log);
	rd_kafka_conf_set_opaque(conf, t);
	return conf;
}

struct itopic *itopic_new(const char *topic, const char *brokers,
			  const struct itopic_prop *props, int nprops,
			  char *err, size_t errsz)
{
	struct itopic *t = calloc(1, sizeof(*t));
	rd_kafka_conf_t *conf;

	if (!t || !(t->topic = strdup(topic))) {
		snprintf(err, errsz, "out of memory");
		free(t);
		return NULL;
	}
	if (!*topic || strlen(topic) > 249) {
		snprintf(err, errsz, "--incidents-topic wants a topic name, got "
			 "'%s'", topic);
		itopic_close(t, NULL, NULL, 0);
		return NULL;
	}
	if (!(conf = producer_conf(t, brokers, props, nprops, err, errsz))) {
		itopic_close(t, NULL, NULL, 0);
		return NULL;
	}
	if (!(t->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, errsz))) {
		rd_kafka_conf_destroy(conf);
		itopic_close(t, NULL, NULL, 0);
		return NULL;
	}
	t->more = true;         /* what an earlier run left undelivered */
	t->retry_from = NO_RETRY;
	return t;
}

/* ---- producing ------------------------------------------------------- */

/* One incident read back: its JSON and the columns of its key. */
struct row {
	char *json;
	size_t len;
	char key[1024];
	const char *instance;
	bool found;
};

static const char *col_text(int n, const char *const *names,
			    const struct store_value *v, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return v[i].type == STORE_TEXT ? v[i].p : "";
	return "";
}

static int on_row(void *ctx, int n, const char *const *names,
		  const struct store_value *v)
{
	struct row *r = ctx;
	FILE *f = open_memstream(&r->json, &r->len);

	if (!f)
		return RT_ENOMEM;
	rows_json_object(f, n, names, v, json_cols);
	if (fclose(f))
		return RT_ENOMEM;
	snprintf(r->key, sizeof(r->key), "%s/%s/%s/%s/%" PRId64,
		 col_text(n, names, v, "cluster"),
		 col_text(n, names, v, "namespace"),
		 col_text(n, names, v, "release"), r->instance, v[0].i);
	r->found = true;
	return 0;
}

/* 0 when handed over, 1 when the queue is full (try later), -1 failed. */
static int produce(struct itopic *t, int64_t id, const char *key,
		   const char *json, size_t len)
{
	rd_kafka_resp_err_t err = rd_kafka_producev(
		t->rk, RD_KAFKA_V_TOPIC(t->topic),
		RD_KAFKA_V_KEY(key, strlen(key)),
		RD_KAFKA_V_VALUE((void *)json, json ? len : 0),
		RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
		RD_KAFKA_V_OPAQUE((void *)(intptr_t)id), RD_KAFKA_V_END);

	if (!err) {
		t->st.produced++;
		return 0;
	}
	if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		return 1;
	failed(t, "incident %" PRId64 " not produced: %s", id,
	       rd_kafka_err2str(err));
	return -1;
}

/* One outbox row: the incident as it is now under that key, or a
 * tombstone when no incident has the key any more (deleted, merged into
 * another). 1 stops the read: the queue is full, try later. */
static int produce_row(void *ctx, const struct store_outbox_row *o)
{
	struct itopic *t = ctx;
	struct row r = { .instance = t->instance };
	char key[1024];
	int rc;

	snprintf(key, sizeof(key), "%s/%s/%s/%s/%" PRId64, o->cluster, o->ns,
		 o->release, t->instance, o->incident_id);
	if (store_incident_part(t->ro, o->incident_id, STORE_PART_EXPORT,
				on_row, &r)) {
		free(r.json);
		failed(t, "incident %" PRId64 " not read: %s", o->incident_id,
		       store_errmsg(t->ro));
		return 1;
	}
	if (r.found && strcmp(r.key, key))
		r.found = false;
	rc = produce(t, o->id, key, r.found ? r.json : NULL, r.len);
	free(r.json);
	if (rc == 1)
		return 1;
	t->cursor = o->id;
	if (rc < 0)
		retry(t, o->id);
	return 0;
}

/* Removes the delivered rows; kept for the next call when it fails. */
static void remove_done(struct itopic *t, struct store *rw)
{
	if (!t->ndone || !rw)
		return;
	if (store_outbox_done(rw, t->done, t->ndone)) {
		failed(t, "delivered incidents not removed from the outbox: %s",
		       store_errmsg(rw));
		return;
	}
	t->ndone = 0;
}

/* The outbox past the cursor, until the queue is full or it is read. */
static void drain(struct itopic *t, struct store *ro)
{
	if (t->retry_from != NO_RETRY && now_ms() >= t->retry_ms) {
		if (t->cursor >= t->retry_from)
			t->cursor = t->retry_from - 1;
		t->retry_from = NO_RETRY;
		t->more = true;
	}
	if (ro && !t->instance[0] &&
	    store_instance_id(ro, t->instance, sizeof(t->instance))) {
		failed(t, "instance id not read: %s", store_errmsg(ro));
		return;
	}
	t->ro = ro;
	while (t->more && ro) {
		int64_t before = t->cursor;
		int rc = store_outbox_read(ro, t->cursor, READ_ROWS,
					   produce_row, t);

		if (rc)
			break;          /* full, or not read: next time */
		if (t->cursor == before)
			t->more = false;
	}
	t->ro = NULL;
}

void itopic_publish(struct itopic *t, struct store *ro, struct store *rw,
		    struct store_changes *c)
{
	if (!t)
		return;
	if (c->n)
		t->more = true;
	store_changes_free(c);
	remove_done(t, rw);
	drain(t, ro);
	rd_kafka_poll(t->rk, 0);
}

bool itopic_wants(const struct itopic *t)
{
	return t && (t->more || t->ndone || t->retry_from != NO_RETRY);
}

void itopic_poll(struct itopic *t)
{
	if (t)
		rd_kafka_poll(t->rk, 0);
}

struct itopic_stats itopic_stats(const struct itopic *t)
{
	struct itopic_stats none = { 0 };

	return t ? t->st : none;
}

struct itopic_stats itopic_close(struct itopic *t, struct store *ro,
				 struct store *rw, int timeout_ms)
{
	struct store_changes none = { 0 };
	struct itopic_stats st = { 0 };

	if (!t)
		return st;
	if (t->rk) {
		itopic_publish(t, ro, rw, &none);
		rd_kafka_flush(t->rk, timeout_ms);
		t->closing = true;
		if (rd_kafka_outq_len(t->rk) > 0 || t->more ||
		    t->retry_from != NO_RETRY)
			rt_log(RT_LOG_WARN, "incidents", "topic %s: %d messages "
			       "not delivered in %d ms%s; the outbox keeps "
			       "them for the next start", t->topic,
			       rd_kafka_outq_len(t->rk), timeout_ms,
			       t->more || t->retry_from != NO_RETRY ?
			       ", others failed or not produced" : "");
		t->logged_ms = now_ms();        /* said: the purge is quiet */
		rd_kafka_purge(t->rk, RD_KAFKA_PURGE_F_QUEUE |
			       RD_KAFKA_PURGE_F_INFLIGHT);
		rd_kafka_poll(t->rk, 0);
		remove_done(t, rw);
		rd_kafka_destroy(t->rk);
	}
	st = t->st;
	free(t->done);
	free(t->topic);
	free(t);
	return st;
}
