/*
 * batches.c: the two batches of a run and their hand-over to the writer
 * thread (revtrail/batches.h). A batch never changes hands between the
 * two slots, so the writer's check finds a batch's fence by comparing
 * pointers; a slot's fence does not change while the writer has its
 * batch, for only the filling slot is ever written.
 */
#include <stdlib.h>
#include <string.h>

#include "revtrail/batches.h"
#include "revtrail/fence.h"
#include "revtrail/rt_kit.h"

/* A batch and the positions it expects the database at (its fence). */
struct slot {
	struct corr_batch *b;
	struct ingest_kafka_part *parts;
	size_t nparts, cap;
};

struct pipeline_batches {
	struct slot slot[2];
	int cur;                          /* the one being filled */
	struct pipeline_writer *w;
};

/* On the writer thread, right before b's commit. */
static int check_fence(void *ctx, struct store *st, struct corr_batch *b)
{
	struct pipeline_batches *p = ctx;

	for (int s = 0; s < 2; s++)
		if (p->slot[s].b == b)
			return pipeline_fence_check(st, p->slot[s].parts,
						    p->slot[s].nparts);
	return 0;
}

int pipeline_batches_new(struct pipeline_db *db, bool keep_untagged,
			 struct store_stats *stats,
			 struct pipeline_batches **out)
{
	struct pipeline_batches *p = calloc(1, sizeof(*p));
	int64_t repeat;

	*out = NULL;
	if (!p)
		return RT_ENOMEM;
	if (!(p->slot[0].b = corr_batch_new(keep_untagged)) ||
	    !(p->slot[1].b = corr_batch_new(keep_untagged)) ||
	    pipeline_writer_new(db, stats, &p->w)) {
		pipeline_batches_free(p);
		return RT_ENOMEM;
	}
	repeat = corr_repeat_window(store_gap(pipeline_db_store(db)));
	p->slot[0].b->repeat_ns = p->slot[1].b->repeat_ns = repeat;
	pipeline_writer_set_check(p->w, check_fence, p);
	*out = p;
	return 0;
}

void pipeline_batches_free(struct pipeline_batches *p)
{
	if (!p)
		return;
	pipeline_writer_free(p->w);
	for (int s = 0; s < 2; s++) {
		corr_batch_free(p->slot[s].b);
		free(p->slot[s].parts);
	}
	free(p);
}

struct pipeline_writer *pipeline_batches_writer(struct pipeline_batches *p)
{
	return p->w;
}

int pipeline_batches_add(struct pipeline_batches *p, struct rules *r,
			 struct rt_record *rec, struct rt_arena *scratch,
			 struct rt_class *cls)
{
	return pipeline_add(r, p->slot[p->cur].b, rec, scratch, cls);
}

size_t pipeline_batches_pending(const struct pipeline_batches *p)
{
	return corr_batch_pending(p->slot[p->cur].b);
}

size_t pipeline_batches_bytes(const struct pipeline_batches *p)
{
	return p->slot[p->cur].b->arena.used;
}

bool pipeline_batches_empty(const struct pipeline_batches *p)
{
	const struct corr_batch *b = p->slot[p->cur].b;

	return !corr_batch_pending(b) && !b->npos;
}

int pipeline_batches_position(struct pipeline_batches *p, const char *source,
			      int32_t partition, int64_t offset)
{
	return corr_batch_position(p->slot[p->cur].b, source, partition,
				   offset);
}

int pipeline_batches_fence(struct pipeline_batches *p,
			   const struct ingest_kafka_part *parts, size_t n)
{
	struct slot *s = &p->slot[p->cur];
	int rc = 0;

	if (RT_GROW(s->parts, n, s->cap))
		return RT_ENOMEM;
	if (n)
		memcpy(s->parts, parts, n * sizeof(*parts));
	s->nparts = n;
	for (size_t i = 0; i < n && !rc; i++)
		rc = corr_batch_position(s->b, parts[i].topic,
					 parts[i].partition, parts[i].next);
	return rc;
}

/* The filling slot emptied: no record, no position, no fence. */
static void empty_slot(struct slot *s)
{
	corr_batch_reset(s->b);
	s->nparts = 0;
}

int pipeline_batches_submit(struct pipeline_batches *p)
{
	int rc = pipeline_writer_submit(p->w, p->slot[p->cur].b);

	if (rc)
		return rc;
	p->cur ^= 1;
	empty_slot(&p->slot[p->cur]);
	return 0;
}

void pipeline_batches_drop(struct pipeline_batches *p)
{
	empty_slot(&p->slot[p->cur]);
}

void pipeline_batches_counts(const struct pipeline_batches *p,
			     struct pipeline_batches_counts *out)
{
	const struct corr_batch *a = p->slot[0].b, *b = p->slot[1].b;

	out->tagged = a->tagged + b->tagged;
	out->untagged = a->untagged + b->untagged;
	out->helm = a->helm + b->helm;
}
