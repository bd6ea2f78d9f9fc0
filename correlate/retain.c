/*
 * retain.c: the clocks of the input: the one retention (--retain) measures
 * age by, and the watermark that closes incidents (below).
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
	c->pending.n = 0;
	c->now = start_ns;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* A min-heap of the k largest times added: its root is the smallest
 * kept. Shared by the retention clock and the watermark below. */
void corr_top_add(struct corr_top *top, int64_t t, unsigned k)
{
	int64_t *h = top->t;
	unsigned i;

	if (t <= 0 || k == 0)
		return;
	if (top->n < k) {
		for (i = top->n++; i && h[(i - 1) / 2] > t; i = (i - 1) / 2)
			h[i] = h[(i - 1) / 2];
		h[i] = t;
		return;
	}
	if (t <= h[0])
		return;
	for (i = 0;;) {
		unsigned l = 2 * i + 1, m = l;

		if (l >= k)
			break;
		if (l + 1 < k && h[l + 1] < h[l])
			m = l + 1;
		if (h[m] >= t)
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = t;
}

/* Each line of a log read in time order would sift from the heap's root
 * to a leaf; in a run it costs a store, and a full run that starts at or
 * above the heap's largest is the window whole (ascending is a min-heap).
 * A time out of order folds the run in one by one. */
static void newest_fold(struct corr_newest *nw)
{
	struct corr_top *h = &nw->top;
	int64_t max = INT64_MIN;

	for (unsigned i = 0; i < h->n; i++)
		if (h->t[i] > max)
			max = h->t[i];
	if (nw->nrun == CORR_RETAIN_WINDOW && nw->run[0] >= max) {
		memcpy(h->t, nw->run, sizeof(h->t));
		h->n = CORR_RETAIN_WINDOW;
	} else {
		for (unsigned i = 0; i < nw->nrun; i++)
			corr_top_add(h, nw->run[i], CORR_RETAIN_WINDOW);
	}
	nw->nrun = 0;
}

void corr_newest_add(struct corr_newest *nw, int64_t t)
{
	const struct corr_top *h = &nw->top;

	/* The heap stays as full, its smallest as large, until the run
	 * folds in: a time not above it cannot enter. */
	if (t <= 0 || (h->n == CORR_RETAIN_WINDOW && t <= h->t[0]))
		return;
	if (nw->nrun && t < nw->run[nw->nrun - 1]) {
		newest_fold(nw);
		corr_top_add(&nw->top, t, CORR_RETAIN_WINDOW);
		return;
	}
	nw->run[nw->nrun++] = t;
	if (nw->nrun == CORR_RETAIN_WINDOW)
		newest_fold(nw);
}

void corr_newest_get(const struct corr_newest *nw, struct corr_top *out)
{
	*out = nw->top;
	for (unsigned i = 0; i < nw->nrun; i++)
		corr_top_add(out, nw->run[i], CORR_RETAIN_WINDOW);
}

void corr_retain_add(struct corr_retain_clock *c, int64_t t)
{
	corr_top_add(&c->pending, t, CORR_RETAIN_WINDOW);
}

/* The newest times added join the window: where the input ends in time,
 * whatever the order its sources interleaved in, and no further than the
 * window's majority agrees. */
void corr_retain_settle(struct corr_retain_clock *c, int64_t wall_ns)
{
	int64_t s[CORR_RETAIN_WINDOW], m;

	for (unsigned i = 0; i < c->pending.n; i++) {
		c->t[c->next] = c->pending.t[i];
		c->next = (c->next + 1) % CORR_RETAIN_WINDOW;
	}
	c->pending.n = 0;
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

/*
 * The watermark: how far the input has come, which closes the incidents
 * quiet for longer than the gap before it. Not the newest record's time
 * as such: one line from a node whose clock is months ahead, or a Helm
 * revision time, would close every incident, and the failures that go on
 * would stay closed. Not the median above either: a database fed the logs
 * of several clusters or months at once has its newest input in a
 * minority of records, and closing must still follow it. As stream
 * processors bound out-of-orderness, a record moves the watermark to its
 * time unless it lies more than CORR_WATERMARK_AHEAD_NS past the
 * reference -- the watermark, or the time the CORR_WATERMARK_QUORUM
 * newest records seen have all reached, whichever is later (in a new
 * database, before the quorum, the oldest seen) -- or more than CORR_WATERMARK_SKEW_NS past the wall
 * clock. So a few records far ahead of the others move nothing, a quorum
 * of them does (a replay of a later month), and a source that falls
 * silent holds nothing back. A record far ahead with no other record
 * yet to judge it by (the first of a new database, alone in its batch)
 * cannot be told from the input's own time: only the wall clock bounds
 * it.
 * A watermark found past the wall clock (stored by an older revtrail)
 * comes back to it, so the incidents it closed reopen as their failures
 * go on.
 */
void corr_watermark_start(struct corr_watermark *w, int64_t stored_ns)
{
	w->newest.n = 0;
	w->ns = stored_ns > 0 ? stored_ns : 0;
	w->ignored = 0;
}

void corr_watermark_observe(struct corr_watermark *w,
			    const struct corr_batch *b, int64_t wall_ns)
{
	int64_t limit = wall_ns + CORR_WATERMARK_SKEW_NS, ref = w->ns, to;
	const struct corr_top *h = &w->newest;
	struct corr_top bt;

	corr_newest_get(&b->newest, &bt);
	for (unsigned i = 0; i < bt.n; i++)
		if (bt.t[i] <= limit)
			corr_top_add(&w->newest, bt.t[i],
				     CORR_WATERMARK_QUORUM);
	/* The oldest seen stands in for the quorum only where nothing
	 * else is known: a new database's first records. */
	if (h->n && h->t[0] > ref &&
	    (h->n == CORR_WATERMARK_QUORUM || !ref))
		ref = h->t[0];
	to = ref + CORR_WATERMARK_AHEAD_NS;
	/* Over the newest ever seen, not the batch's: a record that came
	 * before the others it is judged by counts once they are here, so
	 * the order of the input does not matter. */
	for (unsigned i = 0; i < h->n; i++)
		if (h->t[i] <= to && h->t[i] > w->ns)
			w->ns = h->t[i];
	for (unsigned i = 0; i < bt.n; i++)
		if (bt.t[i] > limit || bt.t[i] > to)
			w->ignored++;
	if (w->ns > limit)
		w->ns = limit;
}
