/* The watermark that closes incidents: the time a quorum of records has
 * reached, never past the wall clock; Helm revision times and a few
 * records far ahead move nothing, and are counted. */
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
	for (int i = 0; i < 10; i++)
		line(b, T0 + i * MIN);
	line(b, T0 + 120 * DAY);                 /* a node 4 months ahead */
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, T0 + 6 * MIN, "the fifth newest: one line far ahead, "
	       "in the batch, moves nothing");
	is_int(w.ignored, 1, "and is counted");
	corr_batch_reset(b);

	line(b, T0 + 121 * DAY);
	corr_watermark_observe(&w, b, wall);
	ok(w.ns > T0 && w.ns < T0 + 10 * MIN, "nor alone, in a batch of its "
	   "own: it holds a place of the quorum, no more");
	is_int(w.ignored, 2, "counted too");
	corr_batch_reset(b);

	helm(b, T0 + 200 * DAY);
	before = w.ns;
	corr_watermark_observe(&w, b, wall);
	is_int(b->newest.n, 0, "a Helm revision time is no record time");
	is_int(w.ns, before, "it moves nothing");
	corr_batch_reset(b);

	for (int i = 0; i < 5; i++)
		line(b, T0 + DAY + i * MIN);
	corr_watermark_observe(&w, b, wall);
	ok(w.ns >= T0 + DAY && w.ns < T0 + DAY + 5 * MIN, "five newer "
	   "records move it: a day ahead in a replay, a quiet source behind, "
	   "nothing holds it");
	before = w.ns;
	corr_batch_reset(b);

	for (int i = 0; i < 20; i++)
		line(b, wall + DAY + i);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, before, "records past the wall clock move nothing, "
	       "however many");
	is_int(w.ignored, 22, "each counted");
	corr_batch_reset(b);

	corr_watermark_start(&w, wall + 120 * DAY);
	corr_watermark_observe(&w, b, wall);
	is_int(w.ns, wall + CORR_WATERMARK_SKEW_NS, "a stored watermark past "
	       "the wall clock comes back");
	corr_batch_free(b);
	return done_testing();
}
