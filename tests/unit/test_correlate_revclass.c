/* test_correlate_revclass.c: a revision's own new pods get its class; the
 * pods failing before it, and a revision deployed outside any window,
 * stay in class 0 (issue 32, item 5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"
#include "tap.h"

#define SEC 1000000000LL
#define MIN (60 * SEC)
#define GAP (15 * MIN)
#define S(x) rt_str_make((x), strlen(x))

static void test_replicaset(void)
{
	struct rt_str r = corr_pod_replicaset(S("web-6d9f8c7b5-fghij"));

	ok(r.n == 13 && memcmp(r.p, "web-6d9f8c7b5", 13) == 0,
	   "a Deployment's pod: its ReplicaSet");
	r = corr_pod_replicaset(S("payments-api-7d9c8f4b6-4kx2m"));
	ok(r.n == 22 && memcmp(r.p, "payments-api-7d9c8f4b6", 22) == 0,
	   "a dashed Deployment name keeps its dashes");
	ok(corr_pod_replicaset(S("db-0")).n == 0, "a StatefulSet pod: none");
	ok(corr_pod_replicaset(S("migrate-x7k2p")).n == 0, "a Job pod: none");
	ok(corr_pod_replicaset(S("web-server-abcde")).n == 0,
	   "a word before the suffix is no hash");
	ok(corr_pod_replicaset(RT_STR_NULL).n == 0, "no pod: none");
}

struct row {
	const char *pod;
	int64_t first, last;
	int want;
};

/* Classes of rows (already in time order) under revisions rev[i] at t[i]. */
static int classes(const int *rev, const int64_t *t, size_t nrev,
		   const struct row *rows, size_t n, char *got, size_t size)
{
	struct corr_rev revs[8] = { 0 };
	struct corr_release rel = { .revs = revs, .nrevs = nrev };
	struct corr_revclass c;
	size_t len = 0;
	int mismatch = 0;

	for (size_t i = 0; i < nrev; i++)
		revs[i] = (struct corr_rev){ .revision = rev[i],
					     .updated_ns = t[i] };
	if (corr_revclass_init(&c, &rel, GAP))
		return -1;
	for (size_t i = 0; i < n; i++) {
		int cls = -1;

		if (corr_revclass_next(&c, S(rows[i].pod), rows[i].first,
				       rows[i].last, &cls))
			cls = -1;
		mismatch += cls != rows[i].want;
		len += (size_t)snprintf(got + len, size - len, "%d ", cls);
	}
	corr_revclass_release(&c);
	return mismatch;
}

static void test_retry(void)
{
	/* revision 5 fails on its image at 10:00; 6 deploys 30 s later and
	 * its own ReplicaSet crash-loops for ten minutes */
	static const int rev[] = { 4, 5, 6 };
	static const int64_t t[] = { 1 * MIN, 100 * MIN, 100 * MIN + 30 * SEC };
	static const struct row rows[] = {
		{ "web-5b8c7d9f4-abcde", 100 * MIN + 5 * SEC, 100 * MIN + 5 * SEC, 0 },
		{ "web-5b8c7d9f4-abcde", 100 * MIN + 10 * SEC, 100 * MIN + 25 * SEC, 0 },
		{ "web-6d9f8c7b5-fghij", 101 * MIN + 10 * SEC, 110 * MIN, 6 },
		{ "web-5b8c7d9f4-abcde", 102 * MIN, 102 * MIN, 0 },
		{ "web-6d9f8c7b5-fghij", 111 * MIN, 111 * MIN, 6 },
		{ "web-6d9f8c7b5-zzzzz", 112 * MIN, 112 * MIN, 6 },
	};
	char got[128];

	ok(classes(rev, t, 3, rows, 6, got, sizeof(got)) == 0,
	   "the retry's own pods: class 6, the old pod stays 0");
	printf("# classes: %s\n", got);
}

static void test_rollback(void)
{
	/* the seed: 48's pods fail from 14:41:12, the rollback to 47 (49)
	 * deploys at 14:43:52 and they fail on; a ReplicaSet first seen
	 * after the rollback is the rollback's own */
	static const int rev[] = { 47, 48, 49 };
	static const int64_t t[] = { 862 * MIN, 881 * MIN + 7 * SEC,
				     883 * MIN + 52 * SEC };
	static const struct row rows[] = {
		{ "payments-api-7d9c8f4b6-4kx2m", 881 * MIN + 12 * SEC, 881 * MIN + 12 * SEC, 0 },
		{ "payments-api-7d9c8f4b6-9jvpd", 881 * MIN + 21 * SEC, 882 * MIN + 25 * SEC, 0 },
		{ "payments-api-7d9c8f4b6-x8r2t", 884 * MIN + 1 * SEC, 884 * MIN + 1 * SEC, 0 },
		{ "payments-api", 884 * MIN + 5 * SEC, 884 * MIN + 5 * SEC, 0 },
		{ "payments-api-5c7d8f9b6-m2x4p", 885 * MIN, 885 * MIN, 49 },
	};
	char got[128];

	ok(classes(rev, t, 3, rows, 5, got, sizeof(got)) == 0,
	   "pods of 48 failing after the rollback stay in class 0");
	printf("# classes: %s\n", got);
}

static void test_no_window(void)
{
	/* no failure open when 5 or 6 deploys: their pods are class 0, and
	 * a window that ended more than the gap before 6 does not count */
	static const int rev[] = { 5, 6 };
	static const int64_t t[] = { 100 * MIN, 130 * MIN };
	static const struct row rows[] = {
		{ "web-5b8c7d9f4-abcde", 101 * MIN, 101 * MIN, 0 },
		{ "web-5b8c7d9f4-abcde", 110 * MIN, 114 * MIN, 0 },
		{ "web-6d9f8c7b5-fghij", 131 * MIN, 131 * MIN, 0 },
	};
	char got[128];

	ok(classes(rev, t, 2, rows, 3, got, sizeof(got)) == 0,
	   "a revision deployed outside any window: class 0");
	printf("# classes: %s\n", got);
	ok(classes(rev, t, 0, rows, 3, got, sizeof(got)) == 0,
	   "no revisions: class 0");
}

static void test_bound(void)
{
	struct corr_rev revs[2] = { { .revision = 1, .updated_ns = MIN },
				    { .revision = 2, .updated_ns = 2 * MIN } };
	struct corr_release rel = { .revs = revs, .nrevs = 2 };
	struct corr_revclass c;
	char pod[64];
	int cls = 0, last = 0, err = 0;

	corr_revclass_init(&c, &rel, GAP);
	corr_revclass_next(&c, S("web-1111aaaa-abcde"), MIN + SEC, MIN + SEC,
			   &cls);
	for (int i = 0; i < CORR_REVCLASS_SETS && !err; i++) {
		snprintf(pod, sizeof(pod), "web-%08x-abcde", 0x10000000u + i);
		err = corr_revclass_next(&c, S(pod), 3 * MIN, 3 * MIN, &last);
	}
	ok(!err && c.nsets == CORR_REVCLASS_SETS && c.refused == 1 &&
	   last == 0, "ReplicaSets past the bound: refused, class 0");
	corr_revclass_release(&c);
}

int main(void)
{
	test_replicaset();
	test_retry();
	test_rollback();
	test_no_window();
	test_bound();
	done_testing();
}
