/*
 * kafka_handover.c: the group's side of a partition's handover (see
 * kafka_handover.h).
 */
#include "kafka_handover.h"

bool ingest_kafka_moved_on(rd_kafka_resp_err_t err)
{
	switch (err) {
	case RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION:
	case RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID:
	case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
	case RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID:
		return true;
	default:
		return false;
	}
}

rd_kafka_topic_partition_list_t *
ingest_kafka_stored_only(const rd_kafka_topic_partition_list_t *parts)
{
	rd_kafka_topic_partition_list_t *l =
		rd_kafka_topic_partition_list_new(parts->cnt);

	for (int i = 0; i < parts->cnt; i++)
		if (parts->elems[i].offset >= 0)
			rd_kafka_topic_partition_list_add(
				l, parts->elems[i].topic,
				parts->elems[i].partition)->offset =
				parts->elems[i].offset;
	return l;
}

rd_kafka_resp_err_t ingest_kafka_group_ahead(rd_kafka_t *rk,
					     rd_kafka_topic_partition_list_t *parts,
					     int64_t *skipped, int timeout_ms)
{
	rd_kafka_topic_partition_list_t *l = ingest_kafka_stored_only(parts);
	rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;

	for (int i = 0; i < parts->cnt; i++)
		skipped[i] = 0;
	if (l->cnt)
		e = rd_kafka_committed(rk, l, timeout_ms);
	for (int i = 0; !e && i < parts->cnt; i++) {
		rd_kafka_topic_partition_t *tp = &parts->elems[i];
		const rd_kafka_topic_partition_t *g;

		if (tp->offset < 0)
			continue;
		/* Each partition by its own name: never another's row. */
		g = rd_kafka_topic_partition_list_find(l, tp->topic,
						       tp->partition);
		if (!g || g->err || g->offset <= tp->offset)
			continue;
		skipped[i] = g->offset - tp->offset;
		tp->offset = g->offset;
	}
	rd_kafka_topic_partition_list_destroy(l);
	return e;
}

rd_kafka_resp_err_t ingest_kafka_commit_wait(rd_kafka_t *rk,
					     const rd_kafka_topic_partition_list_t *parts,
					     int timeout_ms)
{
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_event_t *ev;
	rd_kafka_resp_err_t e;

	if (!q)
		return RD_KAFKA_RESP_ERR__CRIT_SYS_RESOURCE;
	e = rd_kafka_commit_queue(rk, parts, q, NULL, NULL);
	if (!e) {
		ev = rd_kafka_queue_poll(q, timeout_ms);
		e = ev ? rd_kafka_event_error(ev) : RD_KAFKA_RESP_ERR__TIMED_OUT;
		if (ev)
			rd_kafka_event_destroy(ev);
	}
	rd_kafka_queue_destroy(q);
	return e;
}

void ingest_kafka_pause_assigned(rd_kafka_t *rk, bool pause)
{
	rd_kafka_topic_partition_list_t *l = NULL;

	if (rd_kafka_assignment(rk, &l) || !l)
		return;
	if (l->cnt) {
		if (pause)
			rd_kafka_pause_partitions(rk, l);
		else
			rd_kafka_resume_partitions(rk, l);
	}
	rd_kafka_topic_partition_list_destroy(l);
}
