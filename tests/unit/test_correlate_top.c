/* The newest times of a batch (corr_newest): whatever order the times
 * come in (a log in time order, two sources interleaved, a clock that
 * steps back, equal times), the set read is the CORR_RETAIN_WINDOW
 * largest positive times added, as corr_top_add alone keeps them, and
 * its first time is the smallest. */
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"
#include "tap.h"

#define K CORR_RETAIN_WINDOW
#define MAXN 5000

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Whether corr_newest read after each of n times in ts holds what
 * corr_top_add keeps of the same times, as sets, with its smallest
 * first; after every time when each, else at the end. */
static bool same(const int64_t *ts, size_t n, bool each)
{
	static struct corr_newest nw;
	struct corr_top ref = { .n = 0 }, got;
	int64_t a[K], b[K];

	memset(&nw, 0, sizeof(nw));
	for (size_t i = 0; i < n; i++) {
		corr_newest_add(&nw, ts[i]);
		corr_top_add(&ref, ts[i], K);
		if (!each && i + 1 < n)
			continue;
		corr_newest_get(&nw, &got);
		if (got.n != ref.n)
			return false;
		memcpy(a, got.t, got.n * sizeof(a[0]));
		memcpy(b, ref.t, ref.n * sizeof(b[0]));
		qsort(a, got.n, sizeof(a[0]), cmp);
		qsort(b, ref.n, sizeof(b[0]), cmp);
		if (memcmp(a, b, got.n * sizeof(a[0])) ||
		    (got.n && got.t[0] != a[0]))
			return false;
	}
	return true;
}

int main(void)
{
	static int64_t ts[MAXN];
	size_t i;

	for (i = 0; i < MAXN; i++)
		ts[i] = 1000 + (int64_t)i;
	ok(same(ts, MAXN, true), "ascending: each window the last times");
	ok(same(ts, K - 1, true), "fewer than a window");
	ok(same(ts, K, true) && same(ts, 2 * K, true), "one and two windows");
	for (i = 0; i < MAXN; i++)
		ts[i] = 1000000 - (int64_t)i;
	ok(same(ts, MAXN, true), "descending: the first window stays");
	for (i = 0; i < MAXN; i++)
		ts[i] = 1000 + (int64_t)(i / 7);
	ok(same(ts, MAXN, true), "runs of equal times");
	for (i = 0; i < MAXN; i++)
		ts[i] = 5000;
	ok(same(ts, MAXN, true), "one time throughout");
	for (i = 0; i < MAXN; i++)
		ts[i] = i % 2 ? 100000 + (int64_t)i : 1000 + (int64_t)i;
	ok(same(ts, MAXN, true), "two sources interleaved, one far ahead");
	for (i = 0; i < MAXN; i++)
		ts[i] = 1000 + (int64_t)i - (i % 150 == 149 ? 300 : 0);
	ok(same(ts, MAXN, true), "ascending, a time now and then steps back");
	for (i = 0; i < MAXN; i++)
		ts[i] = 1000 + (int64_t)i + (i % 101 == 0 ? 100000 : 0);
	ok(same(ts, MAXN, true), "ascending, a time now and then far ahead");
	/* A full run whose first time is below the heap's largest: the
	 * window is the largest of both, not the run. */
	for (i = 0; i < K; i++) {
		ts[i] = 1000 + 2 * (int64_t)i;
		ts[K + i] = 1001 + 2 * (int64_t)i;
	}
	ok(same(ts, 2 * K, true), "a run among the heap's times");
	for (i = 0; i < K; i++) {
		ts[i] = i < K / 2 ? 1000 + (int64_t)i : 9000 + (int64_t)i;
		ts[K + i] = 2000 + (int64_t)i;
	}
	ok(same(ts, 2 * K, false), "a run above most, not all, of the heap");
	srand(7);
	for (i = 0; i < MAXN; i++)
		ts[i] = 1000 + rand() % 3000;
	ok(same(ts, MAXN, true), "random order");
	for (i = 0; i < MAXN; i++)
		ts[i] = i % 3 ? 1000 + (int64_t)i : -(int64_t)i;
	ok(same(ts, MAXN, true), "unknown times (<= 0) are never kept");
	return done_testing();
}
