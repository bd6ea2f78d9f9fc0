/* The watermark that closes incidents: the newest record time, but for
 * records far ahead of what a quorum of records reached or of the wall
 * clock; Helm revision times and a few records far ahead move nothing,
 * and are counted. */
#include "revtrail/correlate.h"
#include "tap.h"

#define MIN 60000000000LL
#define DAY (1440 * MIN)
#define T0 (1704067200LL * 1000000000)   /* 2024-01-01 */
#define S(s) rt_str_make(s, sizeof(s) - 1)

static void line(struct corr_batch *b, int64_t t)
{
	struct rt_class none = { 0 };
	struct rt_record r;

	rt_record_init(&r);
	r.format = RT_FMT_FLUENTBIT;
	r.ns = S("prod");
	r.kind = S("Pod");
	r.name = S("web-7d9c8f4b6-4kx2m");
	r.message = S("GET /healthz 200");
	r.ts_ns = t;
	corr_batch_add(b, &r, &none);
}

static void helm(struct corr_batch *b, int64_t t)
{
	struct rt_class none = { 0 };
	struct rt_revision rev = { 0 };
	struct rt_record r;

	rt_record_init(&r);
	r.format = RT_FMT_HELM_HISTORY;
	rev.ns = S("prod");
	rev.release = S("web");
	rev.revision = 5;
	rev.updated_ns = t;
	rev.status = S("deployed");
	r.revs = &rev;
	r.nrevs = 1;
	r.ts_ns = t;
	corr_batch_add(b, &r, &none);
}

int main(void)
{
	struct corr_batch *b = corr_batch_new(false);
	int64_t wall = T0 + 365 * DAY;
	struct corr_watermark w;
	int64_t before;

	corr_watermark_start(&w, 0);
	for (int i = 0; i < 3; i++)
		line(b, T0 + i * MIN);
	line(b, T0 + 120 * DAY);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 2 * MIN, "before the quorum, the oldest records "
	       "judge: one far ahead of three moves nothing");
	is_int(w.ignored, 1, "and is counted");
	corr_batch_reset(b);
	line(b, T0 + 3 * MIN);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 3 * MIN, "nor once the quorum is there");
	corr_batch_reset(b);

	for (int i = 4; i < 10; i++)
		line(b, T0 + i * MIN);
	line(b, T0 + 120 * DAY);                 /* a node 4 months ahead */
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 9 * MIN, "the newest record: one line far ahead, "
	       "in the batch, moves nothing");
	is_int(w.ignored, 2, "and is counted");
	corr_batch_reset(b);

	line(b, T0 + 121 * DAY);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 9 * MIN, "nor alone, in a batch of its own");
	is_int(w.ignored, 3, "counted too");
	corr_batch_reset(b);

	helm(b, T0 + 200 * DAY);
	corr_watermark_observe(&w, b, wall);
	is_int(b->newest.top.n + b->newest.nrun, 0, "a Helm revision time is no record time");
	is_int(w.ns, T0 + 9 * MIN, "it moves nothing");
	corr_batch_reset(b);

	line(b, T0 + 2 * DAY);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 2 * DAY, "one record two days on moves it: a "
	       "later failure closes the one before");
	corr_batch_reset(b);

	line(b, T0 + 30 * DAY);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 2 * DAY, "one record a month on alone does not");
	corr_batch_reset(b);
	for (int i = 1; i < 5; i++)
		line(b, T0 + 30 * DAY + i * MIN);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 30 * DAY + 4 * MIN, "a quorum a month on moves it: "
	       "a replay of a later month, a quiet source left behind");
	is_int(w.ignored, 4, "none of it ignored but the one that came "
	       "alone");
	corr_batch_reset(b);

	before = w.ns;
	for (int i = 0; i < 20; i++)
		line(b, wall + DAY + i);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, before, "records past the wall clock move nothing, "
	       "however many");
	is_int(w.ignored, 24, "each counted");

	corr_watermark_start(&w, 0);
	line(b, T0 + 10 * MIN);
	corr_watermark_observe(&w, b, wall);
	corr_batch_reset(b);
	line(b, T0);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 10 * MIN, "the newest first, alone: it stands, as "
	       "in any order");
	corr_batch_reset(b);
	corr_batch_reset(b);

	corr_watermark_start(&w, wall + 120 * DAY);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, wall + CORR_WATERMARK_SKEW_NS, "a stored watermark past "
	       "the wall clock comes back");
	corr_batch_free(b);
	return done_testing();
}
