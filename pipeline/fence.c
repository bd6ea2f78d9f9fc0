/*
 * fence.c: the database must hold what this process last committed for
 * each partition of a batch; anything else means another writer has
 * moved it on (two instances pointed at one file, or this one kept a
 * partition after a rebalance gave it away): refuse rather than apply the
 * batch twice or leave a gap. Run on the writer thread, right before the
 * commit, so nothing can move the position between check and commit.
 */
#include <inttypes.h>

#include "revtrail/fence.h"
#include "revtrail/log.h"

static int check_part(struct store *st, const struct ingest_kafka_part *p)
{
	int64_t cur = -1;
	int rc;

	if (p->start < 0)
		return 0;           /* no expectation: the first batch */
	rc = store_position(st, p->topic, p->partition, &cur);
	if (rc < 0)
		return rc;
	if (rc == 0 && cur == p->start)
		return 0;
	rt_log(RT_LOG_ERROR, "store", "%s[%d]: the database holds offset %"
	       PRId64 ", this consumer expected %" PRId64 "; another writer "
	       "uses this database", p->topic, p->partition, cur, p->start);
	return RT_EDB;
}

int pipeline_fence_check(struct store *st,
			 const struct ingest_kafka_part *parts, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++)
		rc = check_part(st, &parts[i]);
	return rc;
}
