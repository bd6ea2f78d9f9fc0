/*
 * retain.c: the clock retention (--retain) measures age by.
 *
 * Not the newest record's time: one line from a node whose clock is months
 * ahead would make everything else look old and delete it. Not the wall
 * clock alone: a dump of last month replayed today would be deleted as it
 * is read. The clock is the median of a window of CORR_RETAIN_WINDOW event
 * times (each batch's newest join it), never later than the wall clock,
 * and it never goes back.
 * The window starts full of the clock the database had, so it takes more
 * than half a window of later times to move it: no few records can,
 * whatever their batches.
 */
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"

void corr_retain_start(struct corr_retain_clock *c, int64_t start_ns)
{
	for (unsigned i = 0; i < CORR_RETAIN_WINDOW; i++)
		c->t[i] = start_ns;
	c->next = 0;
	c->npending = 0;
	c->now = start_ns;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* pending is a min-heap of the k largest times added: its root is the
 * smallest kept. */
void corr_retain_add(struct corr_retain_clock *c, int64_t t)
{
	int64_t *h = c->pending;
	unsigned i;

	if (t <= 0)
		return;
	if (c->npending < CORR_RETAIN_WINDOW) {
		for (i = c->npending++; i && h[(i - 1) / 2] > t; i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = t;
		return;
	}
	if (t <= h[0])
		return;
	for (i = 0;;) {
		unsigned l = 2 * i + 1, m = l;

		if (l >= CORR_RETAIN_WINDOW)
			break;
		if (l + 1 < CORR_RETAIN_WINDOW && h[l + 1] < h[l])
			m = l + 1;
		if (h[m] >= t)
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = t;
}

/* The newest times added join the window: where the input ends in time,
 * whatever the order its sources interleaved in, and no further than the
 * window's majority agrees. */
void corr_retain_settle(struct corr_retain_clock *c, int64_t wall_ns)
{
	int64_t s[CORR_RETAIN_WINDOW], m;

	for (unsigned i = 0; i < c->npending; i++) {
		c->t[c->next] = c->pending[i];
		c->next = (c->next + 1) % CORR_RETAIN_WINDOW;
	}
	c->npending = 0;
	memcpy(s, c->t, sizeof(s));
	qsort(s, CORR_RETAIN_WINDOW, sizeof(s[0]), cmp_i64);
	m = s[CORR_RETAIN_WINDOW / 2];
	if (m > wall_ns)
		m = wall_ns;
	if (m > c->now)
		c->now = m;
}

void corr_retain_observe(struct corr_retain_clock *c,
			 const struct corr_batch *b, int64_t wall_ns)
{
	for (size_t i = 0; i < b->nev; i++)
		corr_retain_add(c, b->ev[i].last_ns);
	corr_retain_settle(c, wall_ns);
}
