/* test_correlate_diagnose.c: diagnosis rules over hand-built incidents, and
 * the three seed diagnoses of the built-in packs. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"
#include "tap.h"

#define S(x) rt_str_make((x), strlen(x))
#define SEC 1000000000LL

static struct corr_registry *reg;

static void add_rev(const char *rel, int n, const char *status,
		    const char *desc, int64_t t, unsigned ev, const char *hooks)
{
	struct rt_revision r;
	unsigned chg;

	memset(&r, 0, sizeof(r));
	r.ns = S("prod");
	r.release = S(rel);
	r.revision = n;
	r.status = S(status);
	r.description = S(desc);
	r.updated_ns = t;
	r.evidence = ev;
	r.hook_configmaps = hooks ? S(hooks) : RT_STR_NULL;
	corr_registry_merge(reg, &r, &chg, NULL, NULL);
}

struct inc {
	struct plan_tagset tags;
	struct plan_object obj[8];
	struct corr_incview v;
};

static void make(struct inc *i, const char *rel, int64_t opened,
		 int64_t last, const char *const *tags,
		 const char *const *objs)
{
	memset(i, 0, sizeof(*i));
	for (; tags && *tags; tags++)
		corr_tagset_add(&i->tags, *tags);
	for (size_t k = 0; objs && objs[2 * k]; k++) {
		i->obj[k].kind = objs[2 * k];
		i->obj[k].name = objs[2 * k + 1];
		i->obj[k].first_ns = opened + (int64_t)k * SEC;
		i->obj[k].events = 1;
		i->v.nobjects = k + 1;
	}
	i->v.ns = "prod";
	i->v.release = rel;
	i->v.tags = &i->tags;
	i->v.objects = i->obj;
	i->v.rel = corr_registry_find(reg, S("prod"), S(rel));
	i->v.opening = corr_release_at(i->v.rel, opened);
	i->v.opened_ns = opened;
	i->v.last_ns = last;
	i->v.gap_ns = 900 * SEC;
}

static bool has_evidence(const struct corr_diagnosis *d, const char *needle)
{
	for (unsigned i = 0; i < d->nevidence; i++)
		if (strstr(d->evidence[i], needle))
			return true;
	return false;
}

static void test_hand_rules(void)
{
	static const char *const all_cm[] = { "configmap_not_found" };
	static const char *const any1[] = { "crashloop", "db_auth_failed" };
	static const char *const *const anyg[] = { any1 };
	static const size_t nany[] = { 2 };
	static const char *const st_failed[] = { "failed" };
	static const char *const none_oom[] = { "oom_killed" };
	struct rules_diagnosis race = {
		.id = "race", .title = "race", .priority = 90,
		.all = all_cm, .nall = 1, .any = anyg, .nany = nany,
		.nanygroups = 1, .revision_status = st_failed,
		.nrevision_status = 1, .opened_by = RULES_OPENED_UPGRADE,
		.followed_by_rollback = true,
	};
	struct rules_diagnosis generic = {
		.id = "generic", .title = "generic", .priority = 10,
		.all = all_cm, .nall = 1, .none = none_oom, .nnone = 1,
	};
	struct rules_diagnosis tie = generic;
	const struct rules_diagnosis *list[] = { &generic, &race, &tie };
	static const char *const tags[] = { "configmap_not_found",
					    "db_auth_failed", NULL };
	static const char *const tags_oom[] = { "configmap_not_found",
						"oom_killed", NULL };
	static const char *const objs[] = {
		"Pod", "payments-api-7d9c8f4b6-4kx2m", "Pod",
		"payments-api-7d9c8f4b6-9jvpd", "ConfigMap",
		"payments-api-config", NULL };
	struct corr_diagnosis d;
	struct inc i;

	tie.id = "aaa_tie";
	add_rev("payments-api", 47, "superseded", "Upgrade complete", 1000 * SEC,
		0, NULL);
	add_rev("payments-api", 48, "failed", "Upgrade \"payments-api\" failed",
		2000 * SEC, RT_REV_HOOK_CONFIG | RT_REV_PAYLOAD,
		"payments-api-config");
	add_rev("payments-api", 49, "deployed", "Rollback to 47", 2200 * SEC, 0,
		NULL);

	make(&i, "payments-api", 2010 * SEC, 2500 * SEC, tags, objs);
	corr_diagnose(list, 3, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "race", "highest priority wins");
	ok(has_evidence(&d, "revision 48 status failed"), "revision evidence");
	ok(has_evidence(&d, "followed by revision 49: Rollback to 47"),
	   "rollback evidence");
	ok(has_evidence(&d, "payments-api-config is a Helm hook"),
	   "payload evidence names the hook ConfigMap");
	is_int(d.npods, 2, "two affected pods");
	is_str(d.npods ? d.pods[0] : "", "payments-api-7d9c8f4b6-4kx2m",
	       "pods in first-seen order");

	/* the rollback after the window does not count */
	make(&i, "payments-api", 2010 * SEC, 2050 * SEC, tags, objs);
	i.v.gap_ns = 60 * SEC;
	corr_diagnose(list, 3, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "aaa_tie",
	       "no rollback in the window: equal priorities tie by id");

	make(&i, "payments-api", 2010 * SEC, 2500 * SEC, tags_oom, objs);
	corr_diagnose(list, 3, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "none",
	       "'none' and a missing 'any' tag exclude both");

	/* opened before the failed upgrade: revision 47, superseded */
	make(&i, "payments-api", 1500 * SEC, 1600 * SEC, tags, objs);
	ok(!corr_diag_matches(&race, &i.v, NULL), "revision status must match");
	/* unknown history */
	make(&i, "unknown-rel", 1500 * SEC, 1600 * SEC, tags, objs);
	ok(!corr_diag_matches(&race, &i.v, NULL), "no history: no revision match");
	{
		static const char *const unk[] = { "unknown" };
		struct rules_diagnosis u = generic;

		u.revision_status = unk;
		u.nrevision_status = 1;
		ok(corr_diag_matches(&u, &i.v, NULL), "'unknown' matches no history");
	}
}

static void test_object_and_install(void)
{
	static const char *const name_in_use[] = { "helm_name_in_use" };
	struct rules_diagnosis sup = {
		.id = "sup", .title = "sup", .all = name_in_use, .nall = 1,
		.object_glob = "Pod/helm-install-*",
		.opened_by = RULES_OPENED_INSTALL,
	};
	static const char *const tags[] = { "helm_name_in_use", "crashloop", NULL };
	static const char *const job[] = { "Pod",
		"helm-install-rke2-ingress-nginx-xk2p9", NULL };
	static const char *const other[] = { "Pod", "rke2-ingress-nginx-x", NULL };
	const struct rules_diagnosis *list[] = { &sup };
	struct corr_diagnosis d;
	struct inc i;

	add_rev("rke2-ingress-nginx", 2, "superseded", "Upgrade complete",
		100 * SEC, 0, NULL);
	make(&i, "rke2-ingress-nginx", 5000 * SEC, 5100 * SEC, tags, job);
	corr_diagnose(list, 1, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "sup", "object glob and install job");
	ok(has_evidence(&d, "Pod/helm-install-rke2-ingress-nginx-xk2p9 matches "
			"Pod/helm-install-*"), "object evidence");
	ok(has_evidence(&d, "install attempt by Pod/helm-install-"),
	   "install evidence");
	make(&i, "rke2-ingress-nginx", 5000 * SEC, 5100 * SEC, tags, other);
	corr_diagnose(list, 1, &i.v, &d);
	ok(d.rule == NULL, "no helm-install pod: no match");

	/* An object line with several globs: any one may match. */
	static const char *const job_only[] = { "Job",
		"helm-install-rke2-ingress-nginx", NULL };
	sup.object_glob = "Pod/helm-install-*  Job/helm-install-*";
	make(&i, "rke2-ingress-nginx", 5000 * SEC, 5100 * SEC, tags, job_only);
	corr_diagnose(list, 1, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "sup", "second glob of an object line");
	ok(has_evidence(&d, "Job/helm-install-rke2-ingress-nginx matches "
			"Job/helm-install-*"), "evidence names the glob that matched");
	make(&i, "rke2-ingress-nginx", 5000 * SEC, 5100 * SEC, tags, other);
	corr_diagnose(list, 1, &i.v, &d);
	ok(d.rule == NULL, "no glob of the line matches: no match");
}

/* The built-in packs' three seed diagnoses on the seed shapes. */
static void test_builtin(void)
{
	struct rules *r = rules_new();
	char err[256] = "";
	static const char *const race_tags[] = { "configmap_not_found",
		"db_auth_failed", "crashloop", NULL };
	static const char *const race_objs[] = { "Pod",
		"payments-api-7d9c8f4b6-4kx2m", NULL };
	static const char *const stale_tags[] = { "configmap_not_found",
		"volume_mount_failed", "config_file_missing", "crashloop",
		"upstream_unavailable", NULL };
	static const char *const sup_tags[] = { "helm_name_in_use",
		"helm_upgrade_failed", "crashloop", NULL };
	static const char *const sup_objs[] = { "Pod",
		"helm-install-rke2-ingress-nginx-xk2p9", NULL };
	static const char *const nohook_tags[] = { "config_key_missing",
		"create_container_config_error", NULL };
	struct corr_diagnosis d;
	struct inc i;

	if (rules_load_builtin(r, err, sizeof(err)) ||
	    rules_compile(r, err, sizeof(err))) {
		ok(0, "built-in packs load: %s", err);
		rules_free(r);
		return;
	}
	ok(rules_diagnosis_count(r) >= 3, "built-in diagnoses present");
	make(&i, "payments-api", 2010 * SEC, 2500 * SEC, race_tags, race_objs);
	corr_diagnose_rules(r, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "hook_configmap_race",
	       "seed 2: hook_configmap_race");
	add_rev("haproxy-ingress", 3, "superseded", "Install complete", 10 * SEC,
		0, NULL);
	add_rev("haproxy-ingress", 4, "deployed", "Upgrade complete", 3000 * SEC,
		0, NULL);
	make(&i, "haproxy-ingress", 3010 * SEC, 3300 * SEC, stale_tags, NULL);
	corr_diagnose_rules(r, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "stale_config_mount",
	       "seed 1: stale_config_mount");
	make(&i, "rke2-ingress-nginx", 5000 * SEC, 5100 * SEC, sup_tags, sup_objs);
	corr_diagnose_rules(r, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "superseded_release_install",
	       "seed 3: superseded_release_install");

	/* The race's symptoms after a failed upgrade, but revision 6's
	 * payload templates no config hook (hooks = []): the config
	 * diagnosis that fits, saying why not the race. */
	add_rev("router", 5, "superseded", "Install complete", 6000 * SEC,
		RT_REV_PAYLOAD, NULL);
	add_rev("router", 6, "failed", "Upgrade \"router\" failed",
		7000 * SEC, RT_REV_PAYLOAD, NULL);
	make(&i, "router", 7010 * SEC, 7300 * SEC, nohook_tags, NULL);
	corr_diagnose_rules(r, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "stale_config_mount",
	       "payload without a config hook: not the hook race");
	ok(has_evidence(&d, "not hook_configmap_race: the release payload of "
			"revision 6 templates no ConfigMap/Secret"),
	   "evidence says why not");
	ok(!has_evidence(&d, "is a Helm hook"), "and names no hook");
	/* Same symptoms without a decoded payload: the race, as before. */
	add_rev("router2", 5, "superseded", "Install complete", 6000 * SEC,
		0, NULL);
	add_rev("router2", 6, "failed", "Upgrade \"router2\" failed",
		7000 * SEC, 0, NULL);
	make(&i, "router2", 7010 * SEC, 7300 * SEC, nohook_tags, NULL);
	corr_diagnose_rules(r, &i.v, &d);
	is_str(d.rule ? d.rule->id : "none", "hook_configmap_race",
	       "hooks unknown: the race still fits");
	rules_free(r);
}

/* What an incident row says: remedy placeholders (names quoted for the
 * shell), the title of an undiagnosed one, later revisions. */
static void test_remedy(void)
{
	static const char *const tags[] = { "crashloop", "oom_killed", NULL };
	static const char *const objs[] = { "Pod", "web-7d9c8f4b6-4kx2m",
		"ConfigMap", "web config", "Job", "web-migrate", NULL };
	struct rt_buf t = RT_BUF_INIT;
	struct corr_diagnosis d = { 0 };
	struct inc i;
	char buf[600];

	add_rev("web", 6, "superseded", "Upgrade complete", 1000 * SEC, 0, NULL);
	add_rev("web", 7, "failed", "Upgrade failed", 2000 * SEC, 0, NULL);
	add_rev("web", 8, "deployed", "Rollback to 6", 2300 * SEC, 0, NULL);
	make(&i, "web", 2001 * SEC, 2200 * SEC, tags, objs);
	d.npods = 1;
	d.pods[0] = "web-7d9c8f4b6-4kx2m";
	is_str(corr_remedy(&t, "helm rollback <release> <previous-rev> -n <ns>"
			   " # from <rev>, newest <N>", &i.v, &d),
	       "helm rollback web 6 -n prod # from 7, newest 8", "revisions");
	is_str(corr_remedy(&t, "kubectl rollout restart deployment/<name>;"
			   " kubectl get cm <name>; kubectl logs job/<name>"
			   " <pod> ...", &i.v, &d),
	       "kubectl rollout restart deployment/web; kubectl get cm "
	       "'web config'; kubectl logs job/web-migrate "
	       "web-7d9c8f4b6-4kx2m", "names, quoted for the shell");
	is_str(corr_remedy(&t, "<unknown> <workload>", &i.v, &d),
	       "<unknown> web", "an unknown placeholder stays");
	corr_untitled(&i.v, buf, sizeof(buf));
	is_str(buf, "crashloop, oom_killed in web", "untitled");
	corr_later_json(&i.v, buf, sizeof(buf));
	is_str(buf, "[8]", "the rollback deployed while it was open");
	rt_buf_release(&t);
}

/* A token of a remedy that names a file or an object: a path, a file
 * name, or a Kubernetes-style name of three or more dashed parts. */
static bool names_something(const char *w)
{
	const char *dot = strrchr(w, '.');
	int dashes = 0;

	if (w[0] == '/' && isalpha((unsigned char)w[1]))
		return true;
	if (dot && (!strcmp(dot, ".cfg") || !strcmp(dot, ".conf") ||
		    !strcmp(dot, ".yaml") || !strcmp(dot, ".yml") ||
		    !strcmp(dot, ".json") || !strcmp(dot, ".toml")))
		return true;
	for (const char *p = w; *p; p++)
		if (*p == '-')
			dashes++;
		else if (!islower((unsigned char)*p) &&
			 !isdigit((unsigned char)*p))
			return false;
	return dashes >= 2;
}

/*
 * Every diagnosis of the default packs rendered against an incident whose
 * names all carry "zq": a path or name in a remedy is the incident's own
 * (it carries zq) or is written in the rule's text, and a path or file
 * name never comes from the rule's text (that would be another
 * incident's). Helm's own template path convention is allowed.
 */
static void test_remedy_words(void)
{
	static const struct corr_capture caps[] = {
		{ "configmap_not_found", "configmap", "zq-cfg", 2, 7 },
		{ "config_file_missing", "path", "/zq/app/zq.yaml", 2, 3 },
		{ "configmap_not_found", NULL, NULL, 2, 7 },
	};
	static const char *const objs[] = { "Pod", "zq-api-7d9c8f4b6-zq4kx",
		NULL };
	static const char *const tags[] = { "configmap_not_found", NULL };
	struct rules *r = rules_new();
	struct rt_buf t = RT_BUF_INIT;
	struct corr_diagnosis d = { 0 };
	struct inc i;
	char err[256];
	unsigned bad = 0, tokens = 0;

	if (rules_load_builtin(r, err, sizeof(err))) {
		ok(0, "built-in packs load: %s", err);
		rules_free(r);
		return;
	}
	add_rev("zq-rel", 6, "superseded", "Upgrade complete", 1000 * SEC, 0,
		NULL);
	add_rev("zq-rel", 7, "deployed", "Upgrade complete", 2000 * SEC, 0,
		NULL);
	make(&i, "zq-rel", 2001 * SEC, 2200 * SEC, tags, objs);
	i.v.ns = "zq-ns";
	i.v.rel = corr_registry_find(reg, S("prod"), S("zq-rel"));
	i.v.caps = caps;
	i.v.ncaps = 3;
	d.npods = 1;
	d.pods[0] = "zq-api-7d9c8f4b6-zq4kx";
	for (size_t k = 0; k < rules_diagnosis_count(r); k++) {
		const struct rules_diagnosis *rd = rules_diagnosis_at(r, k);
		const char *out;
		char *copy, *save = NULL;

		d.rule = rd;
		if (!rd->remedy || !(out = corr_remedy(&t, rd->remedy, &i.v, &d)))
			continue;
		copy = strdup(out);
		for (char *w = strtok_r(copy, " \t\n`(),;:\"'", &save); w;
		     w = strtok_r(NULL, " \t\n`(),;:\"'", &save)) {
			size_t n = strlen(w);

			while (n && (w[n - 1] == '.' || w[n - 1] == ']'))
				w[--n] = '\0';
			if (!names_something(w) || strstr(w, "zq"))
				continue;
			tokens++;
			if (!strcmp(w, "/configmap.yaml"))
				continue;     /* Helm's template convention */
			if (w[0] != '/' && !strchr(w, '.') &&
			    strstr(rd->remedy, w))
				continue;     /* a name the rule writes */
			printf("# %s: '%s' is not the incident's\n", rd->id, w);
			bad++;
		}
		free(copy);
	}
	ok(bad == 0, "no remedy names a path or object of another incident "
	   "(%u of %u names)", bad, tokens);
	d.rule = NULL;
	for (size_t k = 0; k < rules_diagnosis_count(r); k++)
		if (!strcmp(rules_diagnosis_at(r, k)->id, "stale_config_mount"))
			d.rule = rules_diagnosis_at(r, k);
	ok(d.rule != NULL, "stale_config_mount is a default diagnosis");
	if (d.rule) {
		const char *out = corr_remedy(&t, d.rule->remedy, &i.v, &d);

		ok(out && strstr(out, "kubectl get configmap zq-cfg -n zq-ns"),
		   "the missing ConfigMap is named");
		ok(out && strstr(out, "mountPath /zq/app/zq.yaml"),
		   "the path its logs name");
		ok(out && !strncmp(out, "Mitigate first: `helm rollback zq-rel 6 "
				   "-n zq-ns`", 40), "the rollback comes first");
	}
	rt_buf_release(&t);
	rules_free(r);
}

int main(void)
{
	reg = corr_registry_new();
	test_remedy();
	test_hand_rules();
	test_object_and_install();
	test_builtin();
	test_remedy_words();
	corr_registry_free(reg);
	return done_testing();
}
