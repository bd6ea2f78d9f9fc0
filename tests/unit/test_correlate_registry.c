/* test_correlate_registry.c: the release registry merges revisions in any
 * order to the same result; revision in force at a time; name lookups. */
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"
#include "tap.h"

#define S(x) rt_str_make((x), strlen(x))
#define SEC 1000000000LL

static struct rt_revision rev(const char *ns, const char *name, int n,
			      const char *status, const char *desc,
			      int64_t updated)
{
	struct rt_revision r;

	memset(&r, 0, sizeof(r));
	r.ns = S(ns);
	r.release = S(name);
	r.revision = n;
	r.status = S(status);
	r.description = S(desc);
	r.updated_ns = updated;
	return r;
}

/* Statements about revision 48 as different sources make them over time. */
static struct rt_revision stmts[4];

static void fill_stmts(void)
{
	stmts[0] = rev("prod", "payments-api", 48, "pending-upgrade",
		       "Preparing upgrade", 1000 * SEC);
	stmts[1] = rev("prod", "payments-api", 48, "failed",
		       "Upgrade \"payments-api\" failed", 1002 * SEC);
	stmts[1].chart = S("payments-api-3.5.0");
	stmts[2] = rev("prod", "payments-api", 48, "", "", 0);
	stmts[2].evidence = RT_REV_HOOK_CONFIG | RT_REV_PAYLOAD;
	stmts[2].hook_configmaps = S("payments-api-config");
	stmts[3] = rev("prod", "payments-api", 48, "deployed", "", 1001 * SEC);
	stmts[3].hook_configmaps = S("zz-secret,payments-api-config");
}

static void snapshot(const struct corr_rev *r, char *out, size_t n)
{
	snprintf(out, n, "%s|%s|%s|%lld|%u|%s", r->status ? r->status : "-",
		 r->chart ? r->chart : "-",
		 r->description ? r->description : "-",
		 (long long)r->updated_ns, r->evidence,
		 r->hooks ? r->hooks : "-");
}

static void test_merge_order(void)
{
	static const int perms[][4] = {
		{ 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 2, 0, 3, 1 }, { 1, 3, 0, 2 },
		{ 3, 0, 2, 1 }, { 2, 3, 1, 0 },
	};
	char first[512] = "", got[512];

	fill_stmts();
	for (size_t p = 0; p < sizeof(perms) / sizeof(perms[0]); p++) {
		struct corr_registry *reg = corr_registry_new();
		const struct corr_release *rel;
		unsigned chg;

		for (int i = 0; i < 4; i++)
			corr_registry_merge(reg, &stmts[perms[p][i]], &chg, NULL,
					    NULL);
		rel = corr_registry_find(reg, S("prod"), S("payments-api"));
		ok(rel && rel->nrevs == 1, "perm %zu: one revision", p);
		if (!rel)
			continue;
		snapshot(&rel->revs[0], got, sizeof(got));
		if (p == 0) {
			strcpy(first, got);
			is_str(got, "failed|payments-api-3.5.0|Upgrade \"payments-api\" "
			       "failed|1002000000000|5|payments-api-config,zz-secret",
			       "most advanced status wins per field");
		} else {
			is_str(got, first, "perm %zu gives the same revision", p);
		}
		corr_registry_free(reg);
	}
}

static void test_changed_flags(void)
{
	struct corr_registry *reg = corr_registry_new();
	struct rt_revision r = rev("prod", "web", 1, "deployed", "Install complete",
				   10 * SEC);
	unsigned chg;

	ok(corr_registry_merge(reg, &r, &chg, NULL, NULL) == 0, "merge ok");
	is_int(chg, CORR_REG_CHANGED | CORR_REG_NEW_RELEASE, "new release");
	corr_registry_merge(reg, &r, &chg, NULL, NULL);
	is_int(chg, 0, "same statement again changes nothing");
	r.status = S("superseded");
	corr_registry_merge(reg, &r, &chg, NULL, NULL);
	is_int(chg, CORR_REG_CHANGED, "status advance is a change");
	r.status = S("deployed");
	corr_registry_merge(reg, &r, &chg, NULL, NULL);
	is_int(chg, 0, "an older status does not go back");
	r.release = RT_STR_NULL;
	is_int(corr_registry_merge(reg, &r, &chg, NULL, NULL), RT_EINVAL,
	       "no release name is refused");
	corr_registry_free(reg);
}

static void test_revision_at(void)
{
	struct corr_registry *reg = corr_registry_new();
	const struct corr_release *rel;
	struct rt_revision r[3] = {
		rev("prod", "payments-api", 47, "superseded", "Upgrade complete",
		    1000 * SEC),
		rev("prod", "payments-api", 48, "failed", "Upgrade failed",
		    2000 * SEC + SEC / 2),
		rev("prod", "payments-api", 49, "deployed", "Rollback to 47",
		    3000 * SEC),
	};
	const struct corr_rev *at;
	unsigned chg;

	for (int i = 2; i >= 0; i--)
		corr_registry_merge(reg, &r[i], &chg, NULL, NULL);
	rel = corr_registry_find(reg, S("prod"), S("payments-api"));
	ok(rel != NULL, "release found");
	ok(corr_release_at(rel, 998 * SEC) == NULL, "nothing before the first");
	at = corr_release_at(rel, 999 * SEC);
	is_int(at ? at->revision : 0, 47, "within the one second skew");
	at = corr_release_at(rel, 1500 * SEC);
	is_int(at ? at->revision : 0, 47, "47 in force between");
	at = corr_release_at(rel, 2000 * SEC);
	is_int(at ? at->revision : 0, 48,
	       "whole-second event time just before a sub-second upgrade is 48");
	at = corr_release_at(rel, 2999 * SEC - 1);
	is_int(at ? at->revision : 0, 48, "48 until the rollback");
	at = corr_release_at(rel, 5000 * SEC);
	is_int(at ? at->revision : 0, 49, "49 after the rollback");
	ok(corr_release_rev(rel, 48) && !strcmp(corr_release_rev(rel, 48)->status,
						  "failed"), "by number");
	corr_registry_free(reg);
}

static void test_names(void)
{
	struct corr_registry *reg = corr_registry_new();
	struct rt_revision r[4] = {
		rev("prod", "payments", 1, "deployed", "", SEC),
		rev("prod", "payments-api", 1, "deployed", "", SEC),
		rev("kube-system", "rke2-ingress-nginx", 2, "superseded", "", SEC),
		rev("ingress", "rke2-ingress-nginx", 1, "deployed", "", SEC),
	};
	const struct corr_release *rel;
	unsigned chg;

	for (int i = 0; i < 4; i++)
		corr_registry_merge(reg, &r[i], &chg, NULL, NULL);
	is_int(corr_registry_count(reg), 4, "four releases");
	rel = corr_registry_longest_prefix(reg, S("prod"),
					   S("payments-api-7d9c8f4b6-4kx2m"));
	is_str(rel ? rel->name : "", "payments-api", "longest prefix wins");
	rel = corr_registry_longest_prefix(reg, S("prod"), S("payments-worker-1"));
	is_str(rel ? rel->name : "", "payments", "shorter prefix when longer fails");
	ok(!corr_registry_longest_prefix(reg, S("prod"), S("paymentsx-1")),
	   "prefix only at a '-' boundary");
	ok(!corr_registry_longest_prefix(reg, S("other"), S("payments-api-1")),
	   "prefix only in the same namespace");
	rel = corr_registry_longest_prefix(reg, S("prod"), S("payments-api"));
	is_str(rel ? rel->name : "", "payments-api", "exact name matches");
	is_str(corr_registry_first_ns(reg, S("rke2-ingress-nginx")), "ingress",
	       "smallest namespace of a name");
	ok(!corr_registry_first_ns(reg, S("nope")), "unknown name");
	/* grow the table past its first size */
	for (int i = 0; i < 200; i++) {
		char name[32];
		struct rt_revision x;

		snprintf(name, sizeof(name), "rel-%d", i);
		x = rev("ns", name, 1, "deployed", "", SEC);
		x.release = rt_str_make(name, strlen(name));
		corr_registry_merge(reg, &x, &chg, NULL, NULL);
	}
	rel = corr_registry_find(reg, S("ns"), S("rel-137"));
	is_str(rel ? rel->name : "", "rel-137", "found after growth");
	rel = corr_registry_find(reg, S("prod"), S("payments-api"));
	is_str(rel ? rel->name : "", "payments-api", "old entries survive growth");
	ok(!corr_registry_find(reg, S("prod"), S("payments-ap")),
	   "a name of no release's length");
	ok(!corr_registry_find(reg, S("prod"), S("payments-apx")),
	   "a name of a release's length");
	corr_registry_free(reg);
}

/* Names of 63 bytes and longer share one bit of the length filter. */
static void test_long_names(void)
{
	struct corr_registry *reg = corr_registry_new();
	char name[80], other[96];
	struct rt_revision x;
	const struct corr_release *rel;
	unsigned chg;

	memset(name, 'a', 70);
	name[70] = '\0';
	x = rev("ns", name, 1, "deployed", "", SEC);
	corr_registry_merge(reg, &x, &chg, NULL, NULL);
	rel = corr_registry_find(reg, S("ns"), S(name));
	ok(rel && !strcmp(rel->name, name), "a 70-byte name found");
	memcpy(other, name, 64);
	other[64] = '\0';
	ok(!corr_registry_find(reg, S("ns"), S(other)),
	   "a 64-byte prefix of it is no release");
	snprintf(other, sizeof(other), "%s-7d9c8f4b6-4kx2m", name);
	rel = corr_registry_longest_prefix(reg, S("ns"), S(other));
	ok(rel && !strcmp(rel->name, name), "and the prefix of a pod's name");
	corr_registry_free(reg);
}

/* A history list states no hooks: merging it into a revision that has
 * none either once applied an offset to a NULL list (clang's UBSan). */
static void test_no_hooks(void)
{
	struct corr_registry *reg = corr_registry_new();
	struct rt_revision r = rev("prod", "web", 3, "deployed", "Upgrade", SEC);
	const struct corr_rev *out = NULL;
	unsigned chg;

	r.hook_configmaps = RT_STR_NULL;
	is_int(corr_registry_merge(reg, &r, &chg, NULL, &out), 0,
	       "no hooks: merged");
	ok(out && (!out->hooks || !*out->hooks), "no hooks kept");
	r.status = S("superseded");
	is_int(corr_registry_merge(reg, &r, &chg, NULL, &out), 0,
	       "no hooks again: merged");
	r.hook_configmaps = S("web-config");
	corr_registry_merge(reg, &r, &chg, NULL, &out);
	is_str(out && out->hooks ? out->hooks : "", "web-config",
	       "a later list with hooks adds them");
	corr_registry_free(reg);
}

/* One name in several namespaces, added in no order among enough others
 * to grow the tables: the smallest namespace answers. */
static void test_first_ns_growth(void)
{
	static const char *const nss[] = { "zeta", "mid", "alpha", "beta" };
	struct corr_registry *reg = corr_registry_new();
	unsigned chg;

	for (int i = 0; i < 400; i++) {
		char name[32];
		struct rt_revision x;

		snprintf(name, sizeof(name), "rel-%d", i);
		x = rev(i % 100 == 0 ? nss[i / 100] : "ns", i % 100 ? name : "dup",
			1, "deployed", "", SEC);
		corr_registry_merge(reg, &x, &chg, NULL, NULL);
	}
	is_str(corr_registry_first_ns(reg, S("dup")), "alpha",
	       "smallest namespace of a name, across growth");
	is_str(corr_registry_first_ns(reg, S("rel-399")), "ns",
	       "a name in one namespace");
	ok(!corr_registry_first_ns(reg, S("rel-400")), "an unknown name");
	corr_registry_free(reg);
}

/* The revision numbers a release holds, as "first..last/count". */
static void rev_span(struct corr_registry *reg, char *out, size_t n)
{
	const struct corr_release *rel =
		corr_registry_find(reg, S("prod"), S("web"));

	if (!rel || !rel->nrevs) {
		snprintf(out, n, "none");
		return;
	}
	snprintf(out, n, "%d..%d/%zu", rel->revs[0].revision,
		 rel->revs[rel->nrevs - 1].revision, rel->nrevs);
}

/* A release keeps its CORR_RELEASE_REVS highest revisions whatever the
 * order they come in; a lower one than all it holds is refused. */
static void test_revision_cap(void)
{
	static const char *const what[] = { "ascending", "descending",
					    "shuffled" };
	const int total = CORR_RELEASE_REVS + 76;
	char got[3][64], want[64];

	for (int dir = 0; dir < 3; dir++) {
		struct corr_registry *reg = corr_registry_new();
		unsigned chg;
		int refused = 0;

		for (int i = 1; i <= total; i++) {
			int n = dir == 0 ? i : dir == 1 ? total + 1 - i :
				1 + (i * 7919) % total;
			struct rt_revision x = rev("prod", "web", n, "deployed",
						   "d", SEC);

			refused += corr_registry_merge(reg, &x, &chg, NULL,
						       NULL) == RT_ELIMIT;
		}
		rev_span(reg, got[dir], sizeof(got[dir]));
		is_int((int)corr_registry_refused(reg), refused,
		       "each RT_ELIMIT is counted");
		if (dir < 2)
			is_int(refused, dir ? 76 : 0, dir ?
			       "descending: the 76 lowest refused" :
			       "ascending: the highest displace the lowest");
		corr_registry_free(reg);
	}
	snprintf(want, sizeof(want), "77..%d/%d", total, CORR_RELEASE_REVS);
	for (int dir = 0; dir < 3; dir++)
		is_str(got[dir], want, what[dir]);
}

/* The revision in force by the rule corr_release_at documents, the slow
 * way: the latest time not after ts + skew, then the highest number. */
static const struct corr_rev *at_ref(const struct corr_release *rel,
				     int64_t ts)
{
	const struct corr_rev *best = NULL;

	for (size_t i = 0; i < rel->nrevs; i++) {
		const struct corr_rev *r = &rel->revs[i];

		if (r->updated_ns && r->updated_ns <= ts + CORR_SKEW_NS &&
		    (!best || r->updated_ns > best->updated_ns ||
		     (r->updated_ns == best->updated_ns &&
		      r->revision > best->revision)))
			best = r;
	}
	return best;
}

/* Releases whose times rise with their numbers are searched, the others
 * scanned: both answer as the rule says, in every kind of history. */
static void test_revision_at_search(void)
{
	static const char *const kinds[] = { "rising", "rising with ties",
					     "one out of order", "the first untimed" };
	unsigned seed = 12345;

	for (int kind = 0; kind < 4; kind++) {
		struct corr_registry *reg = corr_registry_new();
		const struct corr_release *rel;
		int wrong = 0, n = 300;
		unsigned chg;

		for (int i = 0; i < n; i++) {
			int k = (i * 7919) % n;   /* merged out of order */
			int64_t t = (int64_t)(k + 1) * 10 * SEC;
			struct rt_revision x;

			if (kind == 1)
				t = (int64_t)(k / 3 + 1) * 10 * SEC;
			if (kind == 2 && k == 150)
				t = 5 * SEC;
			if (kind == 3 && k == 0)
				t = 0;
			x = rev("prod", "web", k + 1, "superseded", "d", t);
			corr_registry_merge(reg, &x, &chg, NULL, NULL);
		}
		rel = corr_registry_find(reg, S("prod"), S("web"));
		/* one revision dated before revision 1 is a life of its
		 * own, sorted first: the rest still rise */
		ok(rel && rel->by_time == (kind < 3), "%s: %s", kinds[kind],
		   kind < 3 ? "searched" : "scanned");
		for (int i = 0; rel && i < 4000; i++) {
			int64_t ts;

			seed = seed * 1103515245 + 12345;
			ts = (int64_t)(seed % 3200000u) * (SEC / 1000);
			if (ts > 0 && corr_release_at(rel, ts) != at_ref(rel, ts))
				wrong++;
		}
		is_int(wrong, 0, "%s: the revision in force at 4000 times",
		       kinds[kind]);
		corr_registry_free(reg);
	}
}

/* Past its byte budget the registry refuses what is new and keeps what it
 * holds. */
static void test_budget(void)
{
	struct corr_registry *reg = corr_registry_new();
	struct rt_revision x;
	const struct corr_rev *out = NULL;
	struct rt_str rns, rel;
	unsigned chg;
	bool achg;
	int i, err = 0;

	corr_registry_set_budget(reg, 64 << 10);
	for (i = 0; i < 10000 && !err; i++) {
		char name[32];

		snprintf(name, sizeof(name), "rel-%d", i);
		x = rev("ns", name, 1, "deployed", "Install complete", SEC);
		err = corr_registry_merge(reg, &x, &chg, NULL, NULL);
	}
	is_int(err, RT_ELIMIT, "a new release past the budget: RT_ELIMIT");
	ok(i > 50 && i < 1000, "after some releases");
	ok(corr_registry_bytes(reg) <= 64 << 10, "held bytes within budget");
	is_int((int)corr_registry_refused(reg), 1, "the refusal is counted");
	ok(corr_registry_find(reg, S("ns"), S("rel-0")) != NULL,
	   "what was held stays");
	ok(!corr_registry_find(reg, S("ns"), S("rel-9999")), "the new is not");
	x = rev("ns", "rel-0", 1, "superseded", "Install complete", SEC);
	is_int(corr_registry_merge(reg, &x, &chg, NULL, &out), 0,
	       "a held revision still merges in place");
	is_str(out ? out->status : "", "superseded", "its status advances");
	is_int(corr_registry_alias_merge(reg, S("ns"), S("api"), S("ns"),
					 S("rel-0"), PLAN_VIA_LABEL, 0, &achg),
	       RT_ELIMIT, "a new workload mapping is refused too");
	ok(!corr_registry_alias_find(reg, S("ns"), S("api"), 0, &rns, &rel, NULL),
	   "and not held");
	is_int((int)corr_registry_refused(reg), 2, "both refusals counted");
	corr_registry_set_budget(reg, CORR_REGISTRY_BYTES);
	is_int(corr_registry_alias_merge(reg, S("ns"), S("api"), S("ns"),
					 S("rel-0"), PLAN_VIA_LABEL, 0, &achg),
	       0, "with room again it is taken");
	corr_registry_free(reg);
}

/* prod/web: revisions 1-5 of a first install, then uninstalled and
 * installed again as a new revision 1 (issue 32). In every order the
 * registry holds both lives, and the new revision 1 is in force. */
#define DAY (86400 * SEC)
static struct rt_revision lives[7];

static void fill_lives(void)
{
	for (int i = 0; i < 5; i++)
		lives[i] = rev("prod", "web", i + 1,
			       i == 4 ? "deployed" : "superseded", "Upgrade",
			       (int64_t)(i + 1) * DAY);
	lives[5] = rev("prod", "web", 1, "deployed", "Install complete",
		       7 * DAY);
	lives[5].chart = S("web-2.0.0");
	lives[6] = rev("prod", "web", 1, "pending-install", "Installing",
		       7 * DAY + 2 * SEC);
}

static void lives_snapshot(const struct corr_release *rel, char *out,
			   size_t n)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; rel && i < rel->nrevs && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%d.%d:%s:%lld ",
					rel->revs[i].life,
					rel->revs[i].revision,
					rel->revs[i].status,
					(long long)(rel->revs[i].updated_ns /
						    SEC));
}

static bool next_perm(int *a, int n)
{
	int i = n - 2, j = n - 1;

	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return false;
	while (a[j] <= a[i])
		j--;
	int t = a[i]; a[i] = a[j]; a[j] = t;
	for (int l = i + 1, r = n - 1; l < r; l++, r--) {
		t = a[l]; a[l] = a[r]; a[r] = t;
	}
	return true;
}

static void test_lives(void)
{
	int ord[7] = { 0, 1, 2, 3, 4, 5, 6 };
	char first[512] = "", got[512];
	int orders = 0, same = 0, right = 0;

	fill_lives();
	do {
		struct corr_registry *reg = corr_registry_new();
		const struct corr_release *rel;
		const struct corr_rev *at, *r1;
		unsigned chg;

		for (int i = 0; i < 7; i++)
			corr_registry_merge(reg, &lives[ord[i]], &chg, NULL,
					    NULL);
		rel = corr_registry_find(reg, S("prod"), S("web"));
		lives_snapshot(rel, got, sizeof(got));
		if (!orders)
			snprintf(first, sizeof(first), "%s", got);
		same += !strcmp(first, got);
		at = corr_release_at(rel, 9 * DAY);
		r1 = corr_release_rev_life(rel, 1, 1);
		right += at && at->revision == 1 && at->life == 2 &&
			 !strcmp(at->status, "deployed") && at->chart &&
			 !strcmp(at->chart, "web-2.0.0") &&
			 corr_release_rev(rel, 1) == at &&
			 r1 && !strcmp(r1->status, "superseded") &&
			 !r1->chart && corr_release_at(rel, 6 * DAY) &&
			 corr_release_at(rel, 6 * DAY)->revision == 5;
		orders++;
		corr_registry_free(reg);
	} while (next_perm(ord, 7));
	is_int(same, orders, "a reinstall: the same two lives in every order");
	is_int(right, orders, "events after the reinstall: its revision 1, "
	       "deployed; before it: the old life's 5");
	is_str(first, "1.1:superseded:86400 1.2:superseded:172800 "
	       "1.3:superseded:259200 1.4:superseded:345600 "
	       "1.5:deployed:432000 2.1:deployed:604800 ",
	       "old life readable, numbered apart");
}

/* The same histories and a statement of revision 1 without a time (a
 * `helm status` block cut before LAST DEPLOYED): in every order it is
 * the newest life's revision 1 only, and no revision of its own. */
static void test_timeless(void)
{
	int ord[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct rt_revision all[8];
	char first[512] = "", got[512];
	int orders = 0, same = 0, right = 0;

	fill_lives();
	memcpy(all, lives, sizeof(lives));
	all[7] = rev("prod", "web", 1, "failed", "Timeless note", 0);
	do {
		struct corr_registry *reg = corr_registry_new();
		const struct corr_release *rel;
		const struct corr_rev *r1, *r2;
		unsigned chg;

		for (int i = 0; i < 8; i++)
			corr_registry_merge(reg, &all[ord[i]], &chg, NULL,
					    NULL);
		rel = corr_registry_find(reg, S("prod"), S("web"));
		lives_snapshot(rel, got, sizeof(got));
		if (!orders)
			snprintf(first, sizeof(first), "%s", got);
		same += !strcmp(first, got);
		r1 = corr_release_rev_life(rel, 1, 1);
		r2 = corr_release_rev_life(rel, 1, 2);
		right += r1 && r2 && !strcmp(r1->description, "Upgrade") &&
			 !strcmp(r2->description, "Timeless note");
		orders++;
		corr_registry_free(reg);
	} while (next_perm(ord, 8));
	is_int(same, orders, "a timeless statement: the same revisions in "
	       "every order");
	is_int(right, orders, "its fields on the new life's revision 1 only");
	is_str(first, "1.1:superseded:86400 1.2:superseded:172800 "
	       "1.3:superseded:259200 1.4:superseded:345600 "
	       "1.5:deployed:432000 2.1:failed:604800 ",
	       "two lives, the timeless failure on the new revision 1");
}

static void test_relife_flag(void)
{
	struct corr_registry *reg = corr_registry_new();
	unsigned chg;

	fill_lives();
	corr_registry_merge(reg, &lives[5], &chg, NULL, NULL);
	ok(!(chg & CORR_REG_RELIFE), "a first revision starts no life");
	corr_registry_merge(reg, &lives[2], &chg, NULL, NULL);
	ok(chg & CORR_REG_RELIFE, "an older life found later renumbers");
	corr_registry_merge(reg, &lives[3], &chg, NULL, NULL);
	ok(!(chg & CORR_REG_RELIFE), "a revision of a known life does not");
	corr_registry_free(reg);
}

int main(void)
{
	test_lives();
	test_timeless();
	test_relife_flag();
	test_first_ns_growth();
	test_revision_cap();
	test_budget();
	test_merge_order();
	test_no_hooks();
	test_changed_flags();
	test_revision_at();
	test_revision_at_search();
	test_names();
	test_long_names();
	return done_testing();
}
