/* test_correlate_plan.c: the decisions of a commit, over plain rows and no
 * database: a stored row met again, windows laid over stored incidents,
 * a release rebuilt from its events, revision ranges. */
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"
#include "tap.h"

#define MIN (60LL * 1000000000LL)
#define SEC (1000000000LL)
#define S(x) rt_str_make((x), strlen(x))

static struct corr_plan plan;

static void setup(void)
{
	struct corr_opts o = { .gap_ns = 15 * MIN };

	is_int(corr_plan_init(&plan, corr_registry_new(), &o, NULL), 0,
	       "a plan");
}

static struct plan_event pod_event(uint64_t key, const char *pod,
				   int64_t first, int64_t last,
				   const char *tag)
{
	struct plan_event e = { 0 };

	e.ukey = key;
	e.first_ns = first;
	e.last_ns = last;
	e.count = 1;
	e.severity = RT_SEV_ERROR;
	e.ns = S("shop");
	e.kind = e.attr.kind = S("Pod");
	e.name = e.pod = e.attr.name = S(pod);
	e.message = S("Back-off restarting failed container");
	e.attr.release_ns = S("shop");
	e.attr.release = S("web");
	e.attr.via = PLAN_VIA_PREFIX;
	e.tags[e.ntags++] = tag;
	return e;
}

/* Two new events bridge stored incidents 7 and 3: one window, into the
 * older id, with the sums of both and the events' deltas. */
static void test_windows(void)
{
	struct plan_event ev[2] = {
		pod_event(1, "web-7d9c8f4b6-aaaaa", 20 * MIN, 20 * MIN,
			  "crashloop"),
		pod_event(2, "web-7d9c8f4b6-bbbbb", 30 * MIN, 31 * MIN,
			  "oom_killed"),
	};
	struct corr_batch b = { .ev = ev, .nev = 2 };
	struct plan_near near[] = {
		{ 7, 0, 10 * MIN, 4, 9, RT_SEV_WARNING, PLAN_VIA_PREFIX,
		  "[\"crashloop\"]", 0 },
		{ 3, 40 * MIN, 50 * MIN, 2, 2, RT_SEV_CRITICAL, PLAN_VIA_LABEL,
		  "[\"image_pull\"]", 0 },
	};
	struct plan_stored none = { 0 };
	struct plan_window *w;
	struct corr_group g;
	size_t nw;

	corr_plan_begin(&plan);
	is_int(corr_plan_events(&plan, 2), 0, "room for two events");
	for (size_t i = 0; i < 2; i++)
		is_int(corr_plan_event(&plan, &ev[i], &none, &plan.evs[i]), 0,
		       "event %zu planned", i);
	ok(plan.evs[0].cluster && plan.evs[1].cluster, "both form incidents");
	is_str(plan.evs[0].via, "prefix", "attribution named");
	corr_plan_order(&plan, &b);
	is_int(corr_plan_group_end(&plan, &b, 0), 2, "one release, one group");
	is_int(corr_plan_group(&plan, &b, plan.order, 2, &g), 0, "grouped");
	is_int(g.ncl, 2, "both cluster here");
	ok(g.lo == 5 * MIN && g.hi == 46 * MIN, "near means within the gap");
	is_int(corr_plan_windows(&plan, &b, &g, near, 2, &w, &nw), 0,
	       "windows planned");
	is_int(nw, 1, "one window: the events bridge both incidents");
	is_int(w[0].target, 3, "it keeps the older id");
	ok(w[0].nmerged == 1 && w[0].merged[0] == 7, "the other merges in");
	is_int(w[0].agg.count, 8, "event count: 4 + 2 stored, 2 new");
	is_int(w[0].agg.occ, 13, "occurrences summed");
	is_int(w[0].agg.sev, RT_SEV_CRITICAL, "severity: the maximum");
	is_str(w[0].agg.via_name, "label", "attribution: the best");
	is_str(w[0].agg.tags, "[\"crashloop\",\"image_pull\",\"oom_killed\"]",
	       "tags: the union, sorted");
	ok(w[0].agg.opened == 0 && w[0].agg.last == 50 * MIN, "the hull");
	is_int(w[0].nevents, 2, "both events go to it");
	is_int(w[0].nobjs, 2, "two pods as object deltas");
	ok(w[0].recount, "a merge counts its pods again");
}

/* A stored row met again: the greater version's text, the widest times
 * and count, the union of tags; the better attribution's release. */
static void test_stored(void)
{
	struct plan_event e = pod_event(5, "web-7d9c8f4b6-aaaaa", 20 * MIN,
					 21 * MIN, "crashloop");
	struct plan_stored s = {
		.found = true, .id = 11, .inc = 4, .first_ns = 10 * MIN,
		.last_ns = 30 * MIN, .count = 6, .sev = RT_SEV_WARNING,
		.via = PLAN_VIA_LABEL, .tags = "[\"oom_killed\"]",
		.rel_ns = "shop", .rel = "storefront",
		.message = S("OOMKilled"), .kind = S("Pod"),
		.name = S("web-7d9c8f4b6-aaaaa"),
	};
	struct plan_evstate x;

	corr_plan_begin(&plan);
	is_int(corr_plan_event(&plan, &e, &s, &x), 0, "planned");
	ok(x.id == 11 && x.inc == 4 && x.old_count == 6, "the row's state");
	ok(!x.newer, "the stored version is the later one");
	ok(rt_str_eq(e.message, "OOMKilled"), "its text is kept");
	ok(e.first_ns == 10 * MIN && e.last_ns == 30 * MIN && e.count == 6,
	   "times widened, count the maximum");
	is_str(x.tags, "[\"crashloop\",\"oom_killed\"]", "tags: the union");
	ok(rt_str_eq(e.attr.release, "storefront") &&
	   e.attr.via == PLAN_VIA_LABEL, "the label's release wins");
	is_int(plan.rebuild.n, 0, "same object, better key: nothing rebuilt");

	/* the same identity names another object now: both releases are
	 * recomputed from their events */
	e = pod_event(5, "api-5c6d7f8b9-k2xwz", 20 * MIN, 40 * MIN, "crashloop");
	e.attr.release = S("api");
	is_int(corr_plan_event(&plan, &e, &s, &x), 0, "planned");
	ok(x.newer, "the batch's version is the later one");
	is_int(plan.rebuild.n, 2, "both releases rebuilt");
}

/* A release's stored events in time order: windows cut at the gap, old
 * ids reused where they overlap, the others dropped. */
static void test_rebuild(void)
{
	static const int64_t old[] = { 2, 5, 9 };
	struct plan_keyrow rows[] = {
		{ 5, 0, 1 * MIN, 1, RT_SEV_ERROR, PLAN_VIA_PREFIX,
		  "[\"crashloop\"]", "Pod", "web-1", "{}", "web-1", 1 },
		{ 2, 10 * MIN, 12 * MIN, 3, RT_SEV_ERROR, PLAN_VIA_PREFIX,
		  "[\"crashloop\"]", "Pod", "web-2",
		  "{\"configmap\":\"web-config\"}", "web-2", 2 },
		{ 0, 40 * MIN, 40 * MIN, 1, RT_SEV_WARNING, PLAN_VIA_LABEL,
		  "[\"probe_failed\"]", "Pod", "web-1", "{}", "web-1", 3 },
	};
	struct corr_key k = { "shop", "web" };
	struct plan_rebuilt done[3];
	struct corr_rebuild rb;
	int64_t unused[3];
	size_t nd = 0, nu;

	corr_plan_begin(&plan);
	is_int(corr_rebuild_begin(&plan, &rb, &k, old, 3), 0, "begun");
	for (size_t i = 0; i < 3; i++) {
		int r = corr_rebuild_row(&plan, &rb, &rows[i], &done[nd]);

		ok(r == 0 || r == 1, "row %zu fed", i);
		nd += r == 1;
	}
	nd += corr_rebuild_end(&plan, &rb, &done[nd]) == 1;
	is_int(nd, 2, "two windows: the gap of 28 minutes splits");
	is_int(done[0].id, 2, "the first reuses the smaller old id");
	ok(done[0].first_min == 0 && done[0].first_max == 10 * MIN,
	   "it takes the events first seen in [0, 10m]");
	is_int(done[0].agg.count, 2, "two events");
	is_int(done[0].nobjs, 3, "two pods and the ConfigMap they name");
	is_int(done[1].id, 0, "the second is new");
	nu = corr_rebuild_unused(&rb, unused);
	ok(nu == 2 && unused[0] == 5 && unused[1] == 9, "5 and 9 dropped");
}

/* Revision 6 deployed 30 s into revision 5's failure; its own new pods
 * fail: the first pass stops at them, then one pass per class, each
 * window taking its events by id, the old incident going to class 0. */
static void test_rebuild_classes(void)
{
	static const int64_t old[] = { 3 };
	struct rt_revision r5 = { 0 }, r6 = { 0 };
	struct plan_keyrow rows[] = {
		{ 3, 5 * SEC, 25 * SEC, 3, RT_SEV_ERROR, PLAN_VIA_PREFIX,
		  "[\"image_pull\"]", "Pod", "web-5b8c7d9f4-abcde", "{}",
		  "web-5b8c7d9f4-abcde", 11 },
		{ 3, 70 * SEC, 10 * MIN, 10, RT_SEV_ERROR, PLAN_VIA_PREFIX,
		  "[\"crashloop\"]", "Pod", "web-6d9f8c7b5-fghij", "{}",
		  "web-6d9f8c7b5-fghij", 12 },
	};
	struct corr_key k = { "retry", "web" };
	struct plan_rebuilt done[3];
	struct corr_rebuild rb;
	int64_t unused[1];
	size_t nd = 0, passes = 1;
	unsigned chg;
	int err = 0;

	r5.ns = r6.ns = S("retry");
	r5.release = r6.release = S("web");
	r5.revision = 5;
	r5.updated_ns = 1;
	r5.status = S("failed");
	r6.revision = 6;
	r6.updated_ns = 30 * SEC;
	r6.status = S("deployed");
	corr_plan_begin(&plan);
	ok(!corr_registry_merge(plan.reg, &r5, &chg, NULL, NULL) &&
	   !corr_registry_merge(plan.reg, &r6, &chg, NULL, NULL),
	   "two revisions");
	is_int(corr_rebuild_begin(&plan, &rb, &k, old, 1), 0, "begun");
	is_int(corr_rebuild_row(&plan, &rb, &rows[0], &done[0]), 0, "row 0");
	is_int(corr_rebuild_row(&plan, &rb, &rows[1], &done[0]), 0, "row 1");
	ok(rb.classy, "the first pass meets revision 6's own pod");
	while (corr_rebuild_next_pass(&plan, &rb, &err) && nd < 2) {
		passes++;
		for (size_t i = 0; i < 2; i++)
			nd += corr_rebuild_row(&plan, &rb, &rows[i],
					       &done[nd]) == 1;
		nd += corr_rebuild_end(&plan, &rb, &done[nd]) == 1;
	}
	is_int(err, 0, "no error");
	is_int(passes, 3, "the first, class 0's, class 6's");
	is_int(nd, 2, "two windows over the same time");
	ok(done[0].byid && done[0].nids == 1 && done[0].ids[0] == 11 &&
	   done[0].id == 3, "class 0: revision 5's pod, the old id");
	ok(done[1].byid && done[1].nids == 1 && done[1].ids[0] == 12 &&
	   done[1].id == 0, "class 6: its new pod, a new incident");
	is_int(corr_rebuild_unused(&rb, unused), 0, "nothing dropped");
}

/* Revisions by update time, one second of slack: the ranges of first_ns
 * each revision number is stamped on. */
static void test_revranges(void)
{
	struct rt_revision r1 = { 0 }, r2 = { 0 };
	struct corr_key k = { "shop", "web" };
	struct plan_revrange *r;
	unsigned chg;
	size_t n;

	r1.ns = r2.ns = S("shop");
	r1.release = r2.release = S("web");
	r1.revision = 1;
	r1.updated_ns = 10 * MIN;
	r1.status = S("superseded");
	r2.revision = 2;
	r2.updated_ns = 20 * MIN;
	r2.status = S("deployed");
	corr_plan_begin(&plan);
	ok(!corr_registry_merge(plan.reg, &r2, &chg, NULL, NULL) &&
	   !corr_registry_merge(plan.reg, &r1, &chg, NULL, NULL),
	   "two revisions");
	is_int(corr_plan_revranges(&plan, &k, &r, &n), 0, "ranges");
	is_int(n, 3, "before the first, between, after the last");
	ok(r[0].rev == 0 && r[0].to == 10 * MIN - CORR_SKEW_NS,
	   "no revision before the first (less the slack)");
	ok(r[1].rev == 1 && r[1].from == r[0].to &&
	   r[1].to == 20 * MIN - CORR_SKEW_NS, "revision 1 until 2");
	ok(r[2].rev == 2 && r[2].to == INT64_MAX, "revision 2 since");
}

/* A key set takes each (namespace, release) once, in order of addition,
 * through growth and after being emptied. */
static void test_keyset(void)
{
	struct corr_keyset ks = { 0 };
	char ns[16], rel[32];
	int bad = 0;

	corr_plan_begin(&plan);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 3000; i++) {
			snprintf(ns, sizeof(ns), "ns%d", i % 1000 % 3);
			snprintf(rel, sizeof(rel), "rel-%d", i % 1000);
			bad |= corr_keyset_add(&plan, &ks, S(ns), S(rel));
		}
		is_int((int)ks.n, 1000, "3000 adds of 1000 keys: 1000 held");
		for (int i = 0; i < 1000; i++) {
			snprintf(ns, sizeof(ns), "ns%d", i % 3);
			snprintf(rel, sizeof(rel), "rel-%d", i);
			bad |= !corr_keyset_has(&ks, S(ns), S(rel)) ||
			       strcmp(ks.k[i].ns, ns) || strcmp(ks.k[i].rel, rel);
		}
		ok(!bad, "each held, in order of addition");
		ok(!corr_keyset_has(&ks, S("ns1"), S("rel-0")) &&
		   !corr_keyset_has(&ks, S("ns0"), S("rel-1000")),
		   "other pairs are not");
		corr_keyset_clear(&ks);
		ok(ks.n == 0 && !corr_keyset_has(&ks, S("ns0"), S("rel-0")),
		   "emptied");
	}
	corr_keyset_free(&ks);
}

int main(void)
{
	setup();
	test_keyset();
	test_windows();
	test_stored();
	test_rebuild();
	test_rebuild_classes();
	test_revranges();
	corr_registry_free(plan.reg);   /* the caller's */
	corr_plan_release(&plan);
	return done_testing();
}
