/*
 * pipeline.c: a decoded record's way through the rules into the
 * correlator's batch (see pipeline.h).
 */
#include "revtrail/correlate.h"
#include "revtrail/pipeline.h"

unsigned pipeline_classify(struct rules *r, struct rt_record *rec,
			   struct rt_arena *arena, struct rt_class *cls)
{
	int n;

	if (rec->flags & RT_REC_DEFERRED) {
		n = rules_classify_deferred(r, rec, arena, cls);
		if (n >= 0) {
			if (n > 0)      /* kept: with its real message */
				ingest_undefer(rec, arena);
			return (unsigned)n;
		}
		ingest_undefer(rec, arena);
	}
	return rules_classify(r, rec, arena, cls);
}

int pipeline_add(struct rules *r, struct corr_batch *b, struct rt_record *rec,
		 struct rt_arena *arena, struct rt_class *cls)
{
	pipeline_classify(r, rec, arena, cls);
	return corr_batch_add(b, rec, cls);
}
