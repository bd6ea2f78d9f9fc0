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

int main(void)
{
	test_merge_order();
	test_no_hooks();
	test_changed_flags();
	test_revision_at();
	test_names();
	test_long_names();
	return done_testing();
}
