/* test_correlate_window.c: gap splitting in any input order, tag sets, the
 * batch's dedupe and event identities. */
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"
#include "assert_child.h"
#include "tap.h"

#define MIN (60LL * 1000000000LL)
#define S(x) rt_str_make((x), strlen(x))

/* Windows as "start-end;..." in time order, for comparison. */
static void windows(struct corr_item *it, size_t n, size_t k, char *out,
		    size_t size)
{
	size_t len = 0;

	for (size_t c = 0; c < k; c++) {
		int64_t lo = INT64_MAX, hi = 0;

		for (size_t i = 0; i < n; i++)
			if (it[i].cluster == c) {
				if (it[i].start < lo)
					lo = it[i].start;
				if (it[i].end > hi)
					hi = it[i].end;
			}
		len += (size_t)snprintf(out + len, size - len, "%lld-%lld;",
					(long long)(lo / MIN), (long long)(hi / MIN));
	}
}

static void test_gap(void)
{
	/* events (minutes): 0, 5, 19 (gap 14: same), 40 (gap 21: new),
	 * 41..50 as an interval, 66 (gap 16 > 15: new), 81 (gap 15: same) */
	static const int64_t ev[][2] = {
		{ 0, 0 }, { 5, 5 }, { 19, 19 }, { 40, 40 }, { 41, 50 },
		{ 66, 66 }, { 81, 81 },
	};
	const size_t n = sizeof(ev) / sizeof(ev[0]);
	struct corr_item it[sizeof(ev) / sizeof(ev[0])];
	char want[256] = "", got[256];
	unsigned seed = 1;
	int differ = 0;

	for (int round = 0; round < 50; round++) {
		size_t k;

		for (size_t i = 0; i < n; i++)
			it[i] = (struct corr_item){ ev[i][0] * MIN, ev[i][1] * MIN,
						    i, 0, 0 };
		/* shuffle: the input order must not matter */
		for (size_t i = n - 1; round && i > 0; i--) {
			size_t j = (seed = seed * 1103515245u + 12345u) % (i + 1);
			struct corr_item t = it[i];

			it[i] = it[j];
			it[j] = t;
		}
		k = corr_cluster(it, n, 15 * MIN);
		windows(it, n, k, got, sizeof(got));
		if (round == 0) {
			strcpy(want, got);
			is_str(got, "0-19;40-50;66-81;", "split exactly where the "
			       "gap exceeds 15m");
		} else if (strcmp(got, want)) {
			printf("#   shuffle %d: %s, want %s\n", round, got,
			       want);
			differ++;
		}
	}
	is_int(differ, 0, "49 shuffles give the windows of the first");
	/* a long event bridges: [0, 30] keeps 10 and 44 together */
	{
		struct corr_item b[3] = {
			{ 44 * MIN, 44 * MIN, 0, 0, 0 }, { 0, 30 * MIN, 1, 0, 0 },
			{ 10 * MIN, 10 * MIN, 2, 0, 0 },
		};

		is_int(corr_cluster(b, 3, 15 * MIN), 1, "an interval bridges");
	}
	is_int(corr_cluster(it, 0, MIN), 0, "no items, no windows");
}

/* A revision's own new pods (class 6) and the pods from before it (class
 * 0) overlap in time and still make two runs; each class its own gaps. */
static void test_classes(void)
{
	struct corr_item it[] = {
		{ 0, 1 * MIN, 0, 0, 0 },
		{ 1 * MIN, 10 * MIN, 1, 0, 6 },
		{ 5 * MIN, 5 * MIN, 2, 0, 0 },
		{ 30 * MIN, 31 * MIN, 3, 0, 6 },
		{ 12 * MIN, 12 * MIN, 4, 0, 0 },
	};
	size_t cl[5];

	is_int(corr_cluster(it, 5, 15 * MIN), 3, "three runs: two classes");
	for (size_t i = 0; i < 5; i++)
		cl[it[i].idx] = it[i].cluster;
	ok(cl[0] == cl[2] && cl[2] == cl[4], "class 0 is one run");
	ok(cl[1] != cl[0] && cl[1] != cl[3], "class 6 splits at its own gap");
}

static const char *intern_same(void *ctx, const char *p, size_t n)
{
	static char pool[16][32];
	static int used;

	(void)ctx;
	for (int i = 0; i < used; i++)
		if (strlen(pool[i]) == n && !memcmp(pool[i], p, n))
			return pool[i];
	if (used == 16 || n >= 32)
		return NULL;
	memcpy(pool[used], p, n);
	pool[used][n] = '\0';
	return pool[used++];
}

static void test_tagset(void)
{
	struct plan_tagset s = { 0 };
	char buf[128];

	ok(corr_tagset_add(&s, "crashloop"), "add");
	ok(corr_tagset_add(&s, "a_first"), "add");
	ok(!corr_tagset_add(&s, "crashloop"), "no duplicates");
	corr_tagset_json(&s, buf, sizeof(buf));
	is_str(buf, "[\"a_first\",\"crashloop\"]", "sorted JSON");
	ok(corr_tagset_parse(&s, "[\"zeta\",\"crashloop\"]", intern_same, NULL) == 0,
	   "parse");
	corr_tagset_json(&s, buf, sizeof(buf));
	is_str(buf, "[\"a_first\",\"crashloop\",\"zeta\"]", "union");
	ok(corr_tagset_parse(&s, "nope", intern_same, NULL) == RT_EPARSE,
	   "not an array");
	ok(corr_tagset_json(&s, buf, 8) < 0, "too small a buffer");
}

/* A set out of order, as a caller filling .t by hand would make: the
 * search of corr_tagset_add would then miss and duplicate names. */
static void add_to_unsorted(void *ctx)
{
	struct plan_tagset s = { 2, { "oom", "crashloop" } };

	(void)ctx;
	corr_tagset_add(&s, "probe_failed");
}

static void add_to_sorted(void *ctx)
{
	struct plan_tagset s = { 2, { "crashloop", "oom" } };
	char buf[64];

	(void)ctx;
	if (!corr_tagset_add(&s, "probe_failed") ||
	    corr_tagset_json(&s, buf, sizeof(buf)) < 0)
		_exit(2);
}

static void json_of_duplicates(void *ctx)
{
	struct plan_tagset s = { 2, { "oom", "oom" } };
	char buf[64];

	(void)ctx;
	corr_tagset_json(&s, buf, sizeof(buf));
}

static void test_tagset_invariant(void)
{
	dies_of_assert(add_to_unsorted, NULL, "tagset_sorted(s)",
		       "an unsorted tag set passed to corr_tagset_add");
	dies_of_assert(json_of_duplicates, NULL, "tagset_sorted(s)",
		       "a tag set holding a name twice written as JSON");
	lives(add_to_sorted, NULL, "a sorted tag set takes a name");
}

static struct rt_record event(const char *uid, const char *msg, int64_t first,
			      int64_t last, int64_t count)
{
	struct rt_record r;

	rt_record_init(&r);
	r.format = RT_FMT_K8S_EVENT;
	r.ns = S("prod");
	r.kind = S("Pod");
	r.name = S("payments-api-7d9c8f4b6-4kx2m");
	r.message = S(msg);
	r.uid = uid ? S(uid) : RT_STR_NULL;
	r.first_ns = first;
	r.ts_ns = last;
	r.count = count;
	r.pos.source = "events.json";
	return r;
}

static void test_batch(void)
{
	static const char *const tag_cm[] = { "configmap_not_found" };
	static const char *const tag_mount[] = { "volume_mount_failed" };
	struct corr_batch *b = corr_batch_new(false);
	struct rt_class c1 = { 0 }, c2 = { 0 }, none = { 0 };
	struct rt_record r;

	c1.ntags = 1;
	c1.tags[0] = tag_cm[0];
	c1.severity = RT_SEV_ERROR;
	c2.ntags = 1;
	c2.tags[0] = tag_mount[0];
	c2.severity = RT_SEV_WARNING;
	r = event("u1", "configmap \"x\" not found", 10 * MIN, 10 * MIN, 1);
	corr_batch_add(b, &r, &c1);
	r = event("u1", "configmap \"x\" not found", 10 * MIN, 14 * MIN, 5);
	corr_batch_add(b, &r, &c2);
	r = event("u1", "configmap \"x\" not found", 10 * MIN, 12 * MIN, 3);
	corr_batch_add(b, &r, &c1);
	is_int(b->nev, 1, "one uid, one pending event");
	is_int(b->dups, 2, "two duplicates merged");
	is_int(b->ev[0].count, 5, "count is the max");
	is_int(b->ev[0].last_ns, 14 * MIN, "last seen is the max");
	is_int(b->ev[0].first_ns, 10 * MIN, "first seen kept");
	is_int(b->ev[0].ntags, 2, "tags are the union");
	is_int(b->ev[0].severity, RT_SEV_ERROR, "severity is the max");
	r = event(NULL, "plain line", 20 * MIN, 20 * MIN, 1);
	corr_batch_add(b, &r, &none);
	is_int(b->nev, 1, "untagged records are not kept");
	is_int(b->untagged, 1, "but counted");
	ok(b->max_ts == 20 * MIN, "newest time of any record");
	for (int i = 0; i < 3000; i++) {
		char uid[32];

		snprintf(uid, sizeof(uid), "uid-%d", i);
		r = event(uid, "m", (i + 1) * MIN, (i + 1) * MIN, 1);
		r.uid = rt_str_make(uid, strlen(uid));
		corr_batch_add(b, &r, &c1);
	}
	is_int(b->nev, 3001, "distinct uids stay distinct across table growth");
	corr_batch_reset(b);
	is_int(corr_batch_pending(b), 0, "reset empties");
	corr_batch_free(b);

	b = corr_batch_new(true);
	r = event(NULL, "plain line", 20 * MIN, 20 * MIN, 1);
	corr_batch_add(b, &r, &none);
	is_int(b->nev, 1, "--keep-untagged keeps them");
	corr_batch_free(b);
}

/* The batch copies what it keeps: ingest reuses the records' memory after
 * every chunk, long before the batch is stored. */
static struct rt_str put(char *buf, size_t *used, const char *s)
{
	size_t n = strlen(s);
	struct rt_str v = rt_str_make(buf + *used, n);

	memcpy(buf + *used, s, n);
	*used += n;
	return v;
}

static void test_batch_copies(void)
{
	static const char *const tag_cm[] = { "configmap_not_found" };
	struct corr_batch *b = corr_batch_new(false);
	struct rt_class c = { 0 };
	struct rt_record r;
	struct rt_revision rev = { 0 };
	char mem[512];
	size_t used = 0;

	c.ntags = 1;
	c.tags[0] = tag_cm[0];
	c.nfields = 1;
	c.fields[0].key = S("configmap");
	c.fields[0].val = put(mem, &used, "payments-config");
	r = event("u9", "", MIN, MIN, 1);
	r.ns = put(mem, &used, "prod");
	r.message = put(mem, &used, "configmap \"payments-config\" not found");
	r.pod = put(mem, &used, "payments-api-7d9c8f4b6-4kx2m");
	r.release = put(mem, &used, "payments-api");
	corr_batch_add(b, &r, &c);
	rev.ns = put(mem, &used, "prod");
	rev.release = put(mem, &used, "payments-api");
	rev.revision = 48;
	rev.status = put(mem, &used, "failed");
	r = event(NULL, "", MIN, MIN, 1);
	r.revs = &rev;
	r.nrevs = 1;
	corr_batch_add(b, &r, &c);
	memset(mem, 'X', sizeof(mem));  /* the next chunk's records */
	is_int(b->nev, 1, "the event is pending");
	is_rts(b->ev[0].ns, "prod", "namespace copied");
	is_rts(b->ev[0].message, "configmap \"payments-config\" not found",
	       "message copied");
	is_rts(b->ev[0].pod, "payments-api-7d9c8f4b6-4kx2m", "pod copied");
	is_rts(b->ev[0].hint_release, "payments-api", "release hint copied");
	is_rts(b->ev[0].fields[0].val, "payments-config", "capture copied");
	is_int(b->nrevs, 1, "the revision is pending");
	is_rts(b->revs[0].release, "payments-api", "revision release copied");
	is_rts(b->revs[0].status, "failed", "revision status copied");
	ok(b->arena.used > 0, "copies live in the batch's arena");
	corr_batch_reset(b);
	is_int(b->arena.used, 0, "reset frees them");
	corr_batch_free(b);
}

static void test_keys(void)
{
	struct rt_record a = event("u1", "m", MIN, MIN, 1);
	struct rt_record b = event("u1", "other text", 2 * MIN, 3 * MIN, 7);
	struct rt_record c = event("u1", "m", MIN, MIN, 1);
	uint64_t ka, kb;

	c.ns = S("staging");
	ok(corr_event_key(&a) == corr_event_key(&b),
	   "same uid: same identity whatever changed");
	ok(corr_event_key(&a) != corr_event_key(&c), "uid is per namespace");
	a = event(NULL, "FATAL: auth failed", MIN, MIN, 1);
	b = event(NULL, "FATAL: auth failed", MIN, MIN, 1);
	b.pos.offset = 999;
	ka = corr_event_key(&a);
	kb = corr_event_key(&b);
	ok(ka == kb, "a log line is its content and time, not its position");
	b.ts_ns = b.first_ns = MIN + 1;
	ok(corr_event_key(&b) != ka, "another time is another line");
	a.ts_ns = a.first_ns = 0;
	b = a;
	b.pos.offset = 10;
	ok(corr_event_key(&a) != corr_event_key(&b),
	   "without a time the position tells lines apart");
}

/*
 * The cluster is part of an event's identity and of a workload mapping:
 * the same uid, line or mapping from two clusters is two of them, also in
 * one batch. The default (empty) cluster adds nothing: these keys are
 * what revtrail computed before clusters existed, so databases stored
 * then still dedupe.
 */
static void test_cluster_keys(void)
{
	static const char *const tag[] = { "crashloop" };
	struct corr_batch *b = corr_batch_new(false);
	struct rt_record r = event("u1", "m", MIN, MIN, 1), eu, us;
	struct rt_class c = { 0 };

	is_int(corr_event_key(&r), 0xbe82e013123a2b65ULL,
	       "an Event's key in the default cluster is the one of before");
	r.uid = RT_STR_NULL;
	is_int(corr_event_key(&r), 0xf0d44409c3008906ULL,
	       "a line's too");
	r = event("u1", "m", MIN, MIN, 1);
	eu = us = r;
	eu.cluster = S("prod-eu");
	us.cluster = S("prod-us");
	ok(corr_event_key(&eu) != corr_event_key(&r) &&
	   corr_event_key(&eu) != corr_event_key(&us),
	   "one uid in three clusters: three keys");
	r.uid = eu.uid = RT_STR_NULL;
	ok(corr_event_key(&eu) != corr_event_key(&r),
	   "one log line in two clusters: two keys");

	c.ntags = 1;
	c.tags[0] = tag[0];
	eu = us = event("u1", "m", MIN, MIN, 1);
	eu.cluster = S("prod-eu");
	us.cluster = S("prod-us");
	eu.release = us.release = S("payments");
	corr_batch_add(b, &eu, &c);
	corr_batch_add(b, &us, &c);
	corr_batch_add(b, &eu, &c);
	is_int(b->nev, 2, "a batch of two clusters: one event each");
	is_int(b->dups, 1, "the repeat in prod-eu merged");
	ok(rt_str_eq(b->ev[0].cluster, "prod-eu") &&
	   rt_str_eq(b->ev[1].cluster, "prod-us"), "each keeps its cluster");
	is_int(b->naliases, 2, "the same workload mapping, once per cluster");
	ok(b->naliases == 2 && rt_str_eq(b->aliases[1].cluster, "prod-us"),
	   "with its cluster");
	corr_batch_free(b);
}

int main(void)
{
	test_gap();
	test_classes();
	test_tagset();
	test_tagset_invariant();
	test_batch();
	test_batch_copies();
	test_keys();
	test_cluster_keys();
	return done_testing();
}
