/*
 * src_kafka_global.c: the global topics of the Kafka source
 * (kafka_global.h): a consumer handle of its own that reads every
 * partition of the Helm topics, whichever partitions of the event topics
 * the group gave this instance.
 *
 * Why it is built this way:
 * - A second handle, with manual assign(): the group's handle cannot hold
 *   partitions outside its assignment, and a rebalance must neither move
 *   nor revoke these. Nothing is committed to Kafka from it: its positions
 *   live in the caller's database only, as the group's do first.
 * - rd_kafka_assign with the whole list whenever partitions were added:
 *   incremental_assign wants a cooperative group protocol, which a handle
 *   that never joins does not have. Each partition already read is given
 *   its next offset again, so a re-assign neither skips nor repeats.
 * - Partitions are looked up with a metadata request per topic, bounded
 *   by a short timeout, every KGLOBAL_REFRESH_MS (every KGLOBAL_RETRY_MS
 *   until some are found): a partition added to a Helm topic is read
 *   within that time, and the lookup costs one small request.
 */
#include <stdlib.h>
#include <string.h>

#include "revtrail/rt_kit.h"
#include "revtrail/log.h"
#include "kafka_global.h"

struct kglobal {
	rd_kafka_t *rk;
	rd_kafka_topic_t **rkt;         /* one per topic, for metadata */
	const char *const *topics;
	int ntopics;
	int assigned;
	int64_t next_ms;                /* next lookup */
};

static void on_log(const rd_kafka_t *rk, int level, const char *fac,
		   const char *buf)
{
	(void)rk;
	rt_log_fac(rt_log_level_from_syslog(level), "librdkafka", fac, buf);
}

/* Errors of this handle are the group handle's too (the same brokers):
 * the group's source reports the outage; these only say what failed. */
static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	(void)rk;
	(void)opaque;
	rt_log(err == RD_KAFKA_RESP_ERR__FATAL ? RT_LOG_ERROR : RT_LOG_WARN,
	       "kafka", "global topics: %s: %s",
	       rd_kafka_err2name((rd_kafka_resp_err_t)err), reason);
}

struct kglobal *kglobal_new(rd_kafka_conf_t *conf, const char *const *topics,
			    int ntopics, char *err, size_t errsz)
{
	struct kglobal *g = calloc(1, sizeof(*g));
	char errstr[512];

	if (!g || !(g->rkt = calloc((size_t)ntopics, sizeof(*g->rkt)))) {
		snprintf(err, errsz, "out of memory");
		rd_kafka_conf_destroy(conf);
		kglobal_free(g);
		return NULL;
	}
	g->topics = topics;
	g->ntopics = ntopics;
	rd_kafka_conf_set_log_cb(conf, on_log);
	rd_kafka_conf_set_error_cb(conf, on_error);
	rd_kafka_conf_set_rebalance_cb(conf, NULL);
	rd_kafka_conf_set_offset_commit_cb(conf, NULL);
	if (!(g->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr,
				   sizeof(errstr)))) {
		snprintf(err, errsz, "global topics: %s", errstr);
		rd_kafka_conf_destroy(conf);
		kglobal_free(g);
		return NULL;
	}
	rd_kafka_poll_set_consumer(g->rk);
	for (int i = 0; i < ntopics; i++)
		if (!(g->rkt[i] = rd_kafka_topic_new(g->rk, topics[i], NULL))) {
			snprintf(err, errsz, "global topic %s: %s", topics[i],
				 rd_kafka_err2str(rd_kafka_last_error()));
			kglobal_free(g);
			return NULL;
		}
	return g;
}

void kglobal_free(struct kglobal *g)
{
	if (!g)
		return;
	for (int i = 0; g->rkt && i < g->ntopics; i++)
		if (g->rkt[i])
			rd_kafka_topic_destroy(g->rkt[i]);
	free(g->rkt);
	if (g->rk)
		rd_kafka_destroy_flags(g->rk,
				       RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
	free(g);
}

/* Adds topic i's partitions to l, as metadata gives them now. */
static void list_topic(struct kglobal *g, int i,
		       rd_kafka_topic_partition_list_t *l)
{
	const struct rd_kafka_metadata *md = NULL;

	if (rd_kafka_metadata(g->rk, 0, g->rkt[i], &md,
			      KGLOBAL_METADATA_TIMEOUT_MS) || !md)
		return;
	for (int t = 0; t < md->topic_cnt; t++) {
		const struct rd_kafka_metadata_topic *mt = &md->topics[t];

		if (mt->err || strcmp(mt->topic, g->topics[i]))
			continue;
		for (int p = 0; p < mt->partition_cnt; p++)
			rd_kafka_topic_partition_list_add(
				l, g->topics[i], mt->partitions[p].id);
	}
	rd_kafka_metadata_destroy(md);
}

static int assign(struct kglobal *g, rd_kafka_topic_partition_list_t *l,
		  kglobal_start_fn start, void *ctx)
{
	rd_kafka_resp_err_t e;
	int rc;

	for (int i = 0; i < l->cnt; i++)
		if ((rc = start(ctx, l->elems[i].topic, l->elems[i].partition,
				&l->elems[i].offset)))
			return rc;
	if ((e = rd_kafka_assign(g->rk, l))) {
		rt_log(RT_LOG_ERROR, "kafka", "global topics: assign: %s",
		       rd_kafka_err2str(e));
		return RT_EKAFKA;
	}
	g->assigned = l->cnt;
	rt_log(RT_LOG_INFO, "kafka", "global topics: reading %d partition(s) "
	       "in full", l->cnt);
	return 0;
}

int kglobal_refresh(struct kglobal *g, int64_t now_ms, kglobal_start_fn start,
		    void *ctx)
{
	rd_kafka_topic_partition_list_t *l;
	int rc = 0;

	if (now_ms < g->next_ms)
		return g->assigned;
	l = rd_kafka_topic_partition_list_new(16);
	for (int i = 0; i < g->ntopics; i++)
		list_topic(g, i, l);
	/* Partitions are never removed from a topic: more is all that
	 * can change. */
	if (l->cnt > g->assigned)
		rc = assign(g, l, start, ctx);
	rd_kafka_topic_partition_list_destroy(l);
	g->next_ms = now_ms + (g->assigned ? KGLOBAL_REFRESH_MS :
			       KGLOBAL_RETRY_MS);
	return rc < 0 ? rc : g->assigned;
}

rd_kafka_message_t *kglobal_poll(struct kglobal *g, int timeout_ms)
{
	return rd_kafka_consumer_poll(g->rk, timeout_ms);
}

int kglobal_assigned(const struct kglobal *g)
{
	return g ? g->assigned : 0;
}

rd_kafka_t *kglobal_handle(struct kglobal *g)
{
	return g ? g->rk : NULL;
}
