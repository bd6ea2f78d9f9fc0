/*
 * pipeline.h: the steps between a decoded record and the correlator that
 * every command running the pipeline shares (classify, ingest, consume,
 * and the fuzz harnesses), so a record takes the same path whatever its
 * source.
 */
#ifndef REVTRAIL_PIPELINE_H
#define REVTRAIL_PIPELINE_H

#include "revtrail/ingest.h"
#include "revtrail/rules.h"

/* correlate.h's batch: the read-only commands that see this header through
 * cli.h need nothing else of the correlator. */
struct corr_batch;

/*
 * rules_classify for a decoded record: a deferred JSON payload (see
 * ingest_opts.defer_payload) is decoded only when a rule reading the
 * message may match it, or when the record is tagged, so that it is kept
 * with its real message. Returns the number of tags.
 */
unsigned pipeline_classify(struct rules *r, struct rt_record *rec,
			   struct rt_arena *arena, struct rt_class *cls);

/*
 * A decoded record's whole way to the correlator: pipeline_classify, then
 * corr_batch_add. cls receives the classification (for counters such as
 * limit hits). Returns 0 or RT_ENOMEM.
 */
int pipeline_add(struct rules *r, struct corr_batch *b, struct rt_record *rec,
		 struct rt_arena *arena, struct rt_class *cls);

#endif
