/* The retention clock: the median of the newest event times, never past
 * the wall clock, never back, and no few records move it. */
#include <stdlib.h>

#include "revtrail/correlate.h"
#include "tap.h"

#define DAY 86400000000000LL
#define T0 (1704067200LL * 1000000000)   /* 2024-01-01 */

/* A batch of n events, times from t every step, plus bad at t_bad. */
static struct corr_batch *batch(size_t n, int64_t t, int64_t step,
				size_t bad, int64_t t_bad)
{
	struct corr_batch *b = calloc(1, sizeof(*b));

	b->ev = calloc(n + bad, sizeof(*b->ev));
	for (size_t i = 0; i < n; i++)
		b->ev[b->nev++].last_ns = t + (int64_t)i * step;
	for (size_t i = 0; i < bad; i++)
		b->ev[b->nev++].last_ns = t_bad;
	return b;
}

static void batch_free(struct corr_batch *b)
{
	free(b->ev);
	free(b);
}

int main(void)
{
	struct corr_retain_clock c;
	int64_t wall = T0 + 3 * 365 * DAY, far = T0 + 6 * 365 * DAY;
	struct corr_batch *b;

	corr_retain_start(&c, 0);
	b = batch(1000, T0, 60000000000LL, 0, 0);      /* a minute apart */
	corr_retain_observe(&c, b, wall);
	batch_free(b);
	ok(c.now > T0 + 998 * 60000000000LL - 60 * 60000000000LL &&
	   c.now <= T0 + 999 * 60000000000LL,
	   "a batch moves the clock to near its newest time");

	int64_t before = c.now;
	b = batch(0, 0, 0, 1, far);
	corr_retain_observe(&c, b, wall);
	batch_free(b);
	/* it displaces the window's oldest: the median steps to the next
	 * of the good times, no further */
	ok(c.now >= before && c.now <= before + 60000000000LL,
	   "one record years ahead, alone, does not move it past the others");

	b = batch(500, T0 + DAY, 1000000000LL, 50, far);
	corr_retain_observe(&c, b, wall);
	batch_free(b);
	ok(c.now < T0 + 2 * DAY, "nor 50 among 500 in a batch");

	b = batch(0, 0, 0, 200, far);
	corr_retain_observe(&c, b, wall);
	batch_free(b);
	ok(c.now == wall, "a majority ahead moves it no further than the wall "
	   "clock");

	before = c.now;
	b = batch(200, T0, 1, 0, 0);
	corr_retain_observe(&c, b, wall);
	batch_free(b);
	ok(c.now == before, "it never goes back");

	corr_retain_start(&c, T0);
	corr_retain_add(&c, 0);
	corr_retain_add(&c, -5);
	corr_retain_settle(&c, wall);
	ok(c.now == T0, "unknown times are ignored; start holds");
	for (int i = 0; i < 50; i++)
		corr_retain_add(&c, T0 + DAY + i);
	corr_retain_settle(&c, wall);
	ok(c.now == T0, "50 of a 101-window are not a majority");
	corr_retain_add(&c, T0 + 2 * DAY);
	corr_retain_settle(&c, wall);
	ok(c.now > T0 + DAY - 1, "51 are");
	return done_testing();
}
