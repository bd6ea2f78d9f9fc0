/*
 * test_ingest_kafka_global.c: the Kafka source's global topics
 * (ingest/src_kafka_global.c) against librdkafka's mock cluster. A Helm
 * topic named in global_topics is read in full, outside the group, before
 * the group is joined; its positions come from and go to the same fake
 * database as the group's partitions (under "global:TOPIC"), fenced the
 * same way; Kafka never hears of them; a record there without Helm state
 * is counted and skipped; a restart resumes at the stored positions.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "revtrail/kafka.h"
#include "tap.h"

#define EVENTS "events"
#define HELM "helm"
#define GHELM INGEST_KAFKA_GLOBAL_PREFIX HELM
#define LATE "helm-late"                /* created while a consumer waits */
#define GLATE INGEST_KAFKA_GLOBAL_PREFIX LATE
#define NPART 2

struct db {
	int64_t ev[NPART], helm[NPART], late[NPART];   /* next offsets,
	                                                * -1 none */
	int fenced, misnamed, commits;
};

struct consumer {
	struct db *db;
	struct ingest *in;
	struct rt_arena arena;
	struct ingest_kafka *k;
	int seq;                          /* records emitted, in order */
	int helm_recs, ev_recs, no_revs, other;
	int last_helm, first_ev;          /* seq of each, 0 = none */
};

static const char *bootstraps;

static int on_record(void *ctx, struct rt_record *rec)
{
	struct consumer *c = ctx;

	c->seq++;
	if (rec->pos.source && (!strcmp(rec->pos.source, GHELM) ||
				!strcmp(rec->pos.source, GLATE))) {
		c->helm_recs++;
		c->no_revs += !rec->nrevs;
		c->last_helm = c->seq;
	} else if (rec->pos.source && !strcmp(rec->pos.source, EVENTS)) {
		c->ev_recs++;
		if (!c->first_ev)
			c->first_ev = c->seq;
	} else {
		c->other++;
	}
	return 0;
}

static int64_t *row(struct db *db, const char *topic, int32_t part)
{
	if (part < 0 || part >= NPART)
		return NULL;
	if (!strcmp(topic, EVENTS))
		return &db->ev[part];
	if (!strcmp(topic, GHELM))
		return &db->helm[part];
	if (!strcmp(topic, GLATE))
		return &db->late[part];
	return NULL;
}

static int stored_offset(void *ctx, const char *topic, int32_t part,
			 int64_t *next)
{
	struct consumer *c = ctx;
	int64_t *r = row(c->db, topic, part);

	*next = r ? *r : -1;
	return 0;
}

/* As a store: every part's start must be what it holds, then all the
 * positions move in one step. */
static int commit(void *ctx, const struct ingest_kafka_part *parts, size_t n)
{
	struct consumer *c = ctx;

	for (size_t i = 0; i < n; i++) {
		int64_t *r = row(c->db, parts[i].topic, parts[i].partition);

		if (!r || parts[i].global != !!strncmp(parts[i].topic, EVENTS,
						       strlen(EVENTS) + 1)) {
			c->db->misnamed++;
			return RT_EDB;
		}
		if (parts[i].start >= 0 && parts[i].start != *r) {
			c->db->fenced++;
			return RT_EDB;
		}
	}
	for (size_t i = 0; i < n; i++)
		*row(c->db, parts[i].topic, parts[i].partition) = parts[i].next;
	c->db->commits++;
	rt_arena_reset(&c->arena);
	return 0;
}

static int start(struct consumer *c, struct db *db, const char **global)
{
	static const char *topics[] = { EVENTS };
	struct ingest_opts io = { 0 };
	struct ingest_kafka_opts o = {
		.brokers = bootstraps, .group = "g", .topics = topics,
		.ntopics = 1, .global_topics = global, .nglobal = 1,
		.batch_messages = 4, .batch_ms = 50, .exit_at_end = true,
		.start = INGEST_KAFKA_START_EARLIEST,  /* a fresh database */
	};
	char err[256];

	memset(c, 0, sizeof(*c));
	c->db = db;
	rt_arena_init(&c->arena);
	c->in = ingest_new(&io);
	o.in = c->in;
	o.arena = &c->arena;
	o.hooks = (struct ingest_kafka_hooks){ c, stored_offset, on_record,
					       commit, NULL, NULL, NULL };
	if (!(c->k = ingest_kafka_new(&o, err, sizeof(err))) ||
	    ingest_kafka_set(c->k, "heartbeat.interval.ms", "100", err,
			     sizeof(err)) ||
	    ingest_kafka_set(c->k, "session.timeout.ms", "3000", err,
			     sizeof(err)) ||
	    ingest_kafka_set(c->k, "log_level", "3", err, sizeof(err)) ||
	    ingest_kafka_start(c->k, err, sizeof(err))) {
		printf("# start: %s\n", err);
		return -1;
	}
	return 0;
}

static const char *helm[] = { HELM }, *late[] = { LATE };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Polls until exit_at_end says every partition was read: 1, else the
 * error or 0 on timeout. */
static int run(struct consumer *c, double max_s)
{
	double end = now_s() + max_s;
	int rc = 0;

	while (now_s() < end && !(rc = ingest_kafka_poll(c->k, 50)))
		;
	return rc;
}

static void stop(struct consumer *c)
{
	ingest_kafka_close(c->k);
	ingest_kafka_free(c->k);
	ingest_free(c->in);
	rt_arena_release(&c->arena);
}

static void produce(rd_kafka_t *p, const char *topic, int32_t part,
		    const char *val)
{
	rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part),
			  RD_KAFKA_V_VALUE((void *)val, strlen(val)),
			  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
			  RD_KAFKA_V_END);
	rd_kafka_flush(p, 10000);
}

static void produce_rev(rd_kafka_t *p, const char *topic, int32_t part,
			int rev)
{
	char v[512];

	snprintf(v, sizeof(v), "[{\"name\":\"web\",\"namespace\":\"shop\","
		 "\"revision\":\"%d\",\"updated\":\"2024-11-03 1%d:00:00.0 "
		 "+0000 UTC\",\"status\":\"deployed\",\"chart\":\"web-1.%d\","
		 "\"app_version\":\"1.%d\"}]", rev, rev, rev, rev);
	produce(p, topic, part, v);
}

/* Kafka's committed offset of topic's partition part for the group. */
static int64_t kafka_committed(struct consumer *c, const char *topic,
			       int32_t part)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
	int64_t off = -2;

	rd_kafka_topic_partition_list_add(l, topic, part);
	if (rd_kafka_committed(ingest_kafka_handle(c->k), l, 5000) == 0)
		off = l->elems[0].offset;
	rd_kafka_topic_partition_list_destroy(l);
	return off;
}

static void test_first_run(rd_kafka_t *p, struct db *db)
{
	struct consumer c;
	const struct ingest_kafka_stats *s;

	produce_rev(p, HELM, 0, 1);
	produce_rev(p, HELM, 1, 2);
	produce(p, HELM, 0, "a text line is no Helm state");
	for (int i = 0; i < 10; i++) {
		char v[64];

		snprintf(v, sizeof(v), "event %d", i);
		produce(p, EVENTS, i % NPART, v);
	}
	if (start(&c, db, helm)) {
		ok(0, "consumer starts");
		return;
	}
	ok(run(&c, 30) == 1, "the group's and the global partitions are read");
	s = ingest_kafka_stats(c.k);
	ok(c.helm_recs == 2 && c.no_revs == 0, "both Helm records, named "
	   GHELM " (%d, %d without revisions)", c.helm_recs, c.no_revs);
	ok(s->global_skipped == 1, "the text line there is counted and "
	   "skipped (%llu)", (unsigned long long)s->global_skipped);
	ok(c.ev_recs == 10 && c.other == 0, "the events, named " EVENTS
	   " (%d, %d others)", c.ev_recs, c.other);
	ok(c.last_helm && c.first_ev > c.last_helm, "the Helm topic is read "
	   "before the group's first event (last Helm record %d, first "
	   "event %d)", c.last_helm, c.first_ev);
	ok(s->global_assigned == NPART, "every partition of the Helm topic "
	   "is read (%d)", s->global_assigned);
	ok(db->helm[0] == 2 && db->helm[1] == 1, "their positions are stored "
	   "(%lld, %lld)", (long long)db->helm[0], (long long)db->helm[1]);
	ok(db->fenced == 0 && db->misnamed == 0, "no commit fenced or "
	   "misnamed (%d, %d)", db->fenced, db->misnamed);
	ok(kafka_committed(&c, EVENTS, 0) == db->ev[0], "the group's "
	   "offsets reach Kafka (%lld)",
	   (long long)kafka_committed(&c, EVENTS, 0));
	ok(kafka_committed(&c, HELM, 0) < 0 && kafka_committed(&c, HELM, 1) < 0,
	   "the Helm topic's never do");
	stop(&c);
}

/* A restart reads what came since, from the stored positions. */
static void test_resume(rd_kafka_t *p, struct db *db)
{
	struct consumer c;

	produce_rev(p, HELM, 1, 3);
	produce(p, EVENTS, 0, "event 10");
	if (start(&c, db, helm)) {
		ok(0, "consumer restarts");
		return;
	}
	ok(run(&c, 30) == 1, "restarted, everything read again");
	ok(c.helm_recs == 1, "only the new Helm record (%d)", c.helm_recs);
	ok(c.ev_recs == 1, "only the new event (%d)", c.ev_recs);
	ok(db->helm[0] == 2 && db->helm[1] == 2, "positions moved on "
	   "(%lld, %lld)", (long long)db->helm[0], (long long)db->helm[1]);
	ok(db->fenced == 0 && db->misnamed == 0, "no commit fenced");
	stop(&c);
}

/* A database that already holds part of the Helm topic (the rows of an
 * earlier life) is resumed from, not read from the beginning. */
static void test_stored_start(struct db *db)
{
	struct consumer c;

	db->helm[1] = 1;        /* revision 2 is in; revision 3 is not */
	if (start(&c, db, helm)) {
		ok(0, "consumer starts");
		return;
	}
	ok(run(&c, 30) == 1, "read to the end");
	ok(c.helm_recs == 1, "from the stored offset: revision 3 only (%d)",
	   c.helm_recs);
	stop(&c);
}

/*
 * A Helm topic that cannot be read yet (its partitions' leader, broker 2,
 * is down; the group's coordinator and the events are on broker 1): the
 * group is not joined, no event read, until the Helm topic is read.
 */
static void test_helm_first(void)
{
	char errstr[256];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *host, *p;
	rd_kafka_mock_cluster_t *mc;
	const char *saved = bootstraps;
	struct db db;
	struct consumer c;
	double end;

	rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
	host = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	mc = rd_kafka_mock_cluster_new(host, 2);
	rd_kafka_mock_topic_create(mc, EVENTS, NPART, 1);
	rd_kafka_mock_topic_create(mc, LATE, NPART, 1);
	for (int i = 0; i < NPART; i++) {
		rd_kafka_mock_partition_set_leader(mc, EVENTS, i, 1);
		rd_kafka_mock_partition_set_leader(mc, LATE, i, 2);
	}
	rd_kafka_mock_coordinator_set(mc, "group", "g", 1);
	bootstraps = rd_kafka_mock_cluster_bootstraps(mc);
	conf = rd_kafka_conf_new();
	rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps, errstr,
			  sizeof(errstr));
	rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
	p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	produce_rev(p, LATE, 1, 7);
	produce(p, EVENTS, 0, "event 1");
	produce(p, EVENTS, 1, "event 2");
	rd_kafka_mock_broker_set_down(mc, 2);

	memset(&db, 0, sizeof(db));
	for (int i = 0; i < NPART; i++)
		db.ev[i] = db.helm[i] = db.late[i] = -1;
	if (start(&c, &db, late)) {
		ok(0, "consumer starts");
		goto out;
	}
	for (end = now_s() + 3; now_s() < end;)
		ingest_kafka_poll(c.k, 50);
	ok(c.ev_recs == 0 && ingest_kafka_stats(c.k)->assigned == 0,
	   "while its Helm topic cannot be read, the group is not joined "
	   "(%d events, %d partitions)", c.ev_recs,
	   ingest_kafka_stats(c.k)->assigned);
	rd_kafka_mock_broker_set_up(mc, 2);
	ok(run(&c, 30) == 1, "once it can, it is read and the group joined");
	ok(c.helm_recs == 1 && c.ev_recs == 2 && c.first_ev > c.last_helm,
	   "the Helm record first, then the events (%d, %d)", c.helm_recs,
	   c.ev_recs);
	ok(db.late[1] == 1, "its position is stored (%lld)",
	   (long long)db.late[1]);
	stop(&c);
out:
	bootstraps = saved;
	rd_kafka_destroy(p);
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(host);
}

int main(void)
{
	char errstr[256];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *host, *p;
	rd_kafka_mock_cluster_t *mc;
	struct db db;

	for (int i = 0; i < NPART; i++)
		db.ev[i] = db.helm[i] = db.late[i] = -1;
	db.fenced = db.misnamed = db.commits = 0;
	rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr));
	host = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	mc = rd_kafka_mock_cluster_new(host, 1);
	rd_kafka_mock_topic_create(mc, EVENTS, NPART, 1);
	rd_kafka_mock_topic_create(mc, HELM, NPART, 1);
	bootstraps = rd_kafka_mock_cluster_bootstraps(mc);
	conf = rd_kafka_conf_new();
	rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps, errstr,
			  sizeof(errstr));
	rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr));
	p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));

	test_first_run(p, &db);
	test_resume(p, &db);
	test_stored_start(&db);
	test_helm_first();

	rd_kafka_destroy(p);
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(host);
	return done_testing();
}
