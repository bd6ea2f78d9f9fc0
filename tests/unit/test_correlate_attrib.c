/* test_correlate_attrib.c: object -> release (labels, helm-install jobs,
 * known release prefixes, workload names) and the workload name rules. */
#include <string.h>

#include "revtrail/correlate.h"
#include "tap.h"

#define S(x) rt_str_make((x), strlen(x))
#define N RT_STR_NULL

static struct corr_registry *reg;

static void known(const char *ns, const char *name)
{
	struct rt_revision r;
	unsigned chg;

	memset(&r, 0, sizeof(r));
	r.ns = S(ns);
	r.release = S(name);
	r.revision = 1;
	r.updated_ns = 1;
	corr_registry_merge(reg, &r, &chg, NULL, NULL);
}

static void attr(const char *ns, const char *kind, const char *name,
		 const char *pod, const char *hint, struct plan_attr *a)
{
	struct corr_opts o = { 0 };

	corr_attribute(reg, &o, S(ns), kind ? S(kind) : N, name ? S(name) : N,
		       pod ? S(pod) : N, hint ? S(hint) : N, N, N, N, a);
}

static void check(const char *what, const char *ns, const char *kind,
		  const char *name, const char *pod, const char *hint,
		  const char *want_ns, const char *want_rel, int want_via)
{
	struct plan_attr a;

	attr(ns, kind, name, pod, hint, &a);
	is_rts(a.release, want_rel, "%s: release", what);
	is_rts(a.release_ns, want_ns, "%s: namespace", what);
	is_int(a.via, want_via, "%s: via %s", what, corr_via_name(want_via));
}

static void test_workload(void)
{
	static const struct { const char *kind, *name, *want; } cases[] = {
		{ "Pod", "payments-api-7d9c8f4b6-4kx2m", "payments-api" },
		{ "Pod", "web-5d8f7c9b6d-x2k4p", "web" },
		{ "Pod", "db-0", "db" },
		{ "Pod", "redis-master-12", "redis-master" },
		{ "Pod", "helm-install-traefik-abc12", "helm-install-traefik" },
		{ "Pod", "backup-28391234-qwxzp", "backup" },
		{ "Pod", "node-exporter-7xkvp", "node-exporter" },
		{ "Pod", "payments-api-admin", "payments-api-admin" },
		{ "Pod", "standalone", "standalone" },
		{ "Pod", "payments-api-5f6d7c8b9-abcde", "payments-api" },
		{ "Pod", "api-server-admin", "api-server-admin" },
		{ "ReplicaSet", "payments-api-7d9c8f4b6", "payments-api" },
		{ "Deployment", "payments-api", "payments-api" },
		{ "ConfigMap", "payments-api-config", "payments-api-config" },
		{ "Job", "backup-28391234", "backup" },
		{ "", "worker-6f9d8c7b5-zzp2q", "worker" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_rts(corr_workload_name(S(cases[i].kind), S(cases[i].name), N),
		       cases[i].want, "workload of %s/%s", cases[i].kind,
		       cases[i].name);
	is_rts(corr_workload_name(S("Pod"), S("api-v2-abcdef-12345"), S("abcdef")),
	       "api-v2", "pod-template-hash cuts exactly");
}

static void test_attribution(void)
{
	known("prod", "payments-api");
	known("prod", "payments");
	known("ingress", "rke2-ingress-nginx");

	check("label hint", "prod", "Pod", "x-1", NULL, "billing",
	      "prod", "billing", PLAN_VIA_LABEL);
	check("prefix pod", "prod", "Pod", "payments-api-7d9c8f4b6-4kx2m", NULL,
	      NULL, "prod", "payments-api", PLAN_VIA_PREFIX);
	check("prefix configmap", "prod", "ConfigMap", "payments-api-config",
	      NULL, NULL, "prod", "payments-api", PLAN_VIA_PREFIX);
	check("log pod, no kind", "prod", NULL, NULL,
	      "payments-api-7d9c8f4b6-9jvpd", NULL, "prod", "payments-api",
	      PLAN_VIA_PREFIX);
	check("workload fallback", "prod", "Pod", "orders-5c7d9f8b4-k2x9z", NULL,
	      NULL, "prod", "orders", PLAN_VIA_WORKLOAD);
	check("other namespace is not a prefix", "staging", "Pod",
	      "payments-api-7d9c8f4b6-4kx2m", NULL, NULL, "staging",
	      "payments-api", PLAN_VIA_WORKLOAD);
	check("helm-install pod, unknown release", "kube-system", "Pod",
	      "helm-install-traefik-abc12", NULL, NULL, "kube-system", "traefik",
	      PLAN_VIA_JOB);
	check("helm-install job", "kube-system", "Job",
	      "helm-install-rke2-ingress-nginx", NULL, NULL, "ingress",
	      "rke2-ingress-nginx", PLAN_VIA_JOB);
	check("helm-install pod of a release known elsewhere", "kube-system",
	      "Pod", "helm-install-rke2-ingress-nginx-xk2p9", NULL, NULL,
	      "ingress", "rke2-ingress-nginx", PLAN_VIA_JOB);
	check("helm-delete pod", "kube-system", "Pod", "helm-delete-foo-bar-q7x2c",
	      NULL, NULL, "kube-system", "foo-bar", PLAN_VIA_JOB);
	check("HelmChart object", "kube-system", "HelmChart", "traefik", NULL,
	      NULL, "kube-system", "traefik", PLAN_VIA_JOB);
	check("node events have no release", "", "Node", "node-1", NULL, NULL,
	      "", "", PLAN_VIA_NONE);
	known("", "billing");
	check("history without a namespace answers for any", "prod", "Pod",
	      "billing-6f9d8c7b5-zzp2q", NULL, NULL, "prod", "billing",
	      PLAN_VIA_PREFIX);
	ok(corr_registry_find(reg, S("prod"), S("billing")) != NULL,
	   "find falls back to the namespace-less release");
	ok(corr_registry_find(reg, S("prod"), S("payments-api")) ==
	   corr_registry_find(reg, S("prod"), S("payments-api")) &&
	   corr_registry_find(reg, S("prod"), S("payments-api"))->ns[0] == 'p',
	   "an own namespace wins over the fallback");
	known("kube-system", "rke2-ingress-nginx");
	check("job namespace preferred once known there", "kube-system", "Pod",
	      "helm-install-rke2-ingress-nginx-xk2p9", NULL, NULL, "kube-system",
	      "rke2-ingress-nginx", PLAN_VIA_JOB);
}

static void alias(const char *ns, const char *w, const char *rns,
		  const char *rel, bool want_chg, const char *what)
{
	bool chg = !want_chg;

	is_int(corr_registry_alias_merge(reg, S(ns), S(w), S(rns), S(rel),
					 PLAN_VIA_LABEL, 0, &chg),
	       0, "%s: merged", what);
	is_int(chg, want_chg, "%s: changed %d", what, want_chg);
}

/* A workload that moves to another release (issue 32): billing's from
 * 10-20, its own payments from 11-03. Each event takes the mapping in
 * force at its time, whichever was merged first. */
static void test_alias_time(void)
{
	const int64_t day = 86400LL * 1000000000LL, oct20 = 20 * day,
		      nov3 = 34 * day;

	for (int order = 0; order < 2; order++) {
		struct corr_registry *r = corr_registry_new();
		struct rt_str rns, rel;
		bool chg;

		for (int i = 0; i < 2; i++) {
			bool bill = (i == 0) == (order == 0);

			corr_registry_alias_merge(r, S("prod"), S("payments"),
				S("prod"), S(bill ? "billing" : "payments"),
				bill ? PLAN_VIA_MANIFEST : PLAN_VIA_LABEL,
				bill ? oct20 : nov3, &chg);
		}
		ok(corr_registry_alias_find(r, S("prod"), S("payments"),
					    25 * day, &rns, &rel, NULL) &&
		   rt_str_eq(rel, "billing"), "order %d: 10-25 billing", order);
		ok(corr_registry_alias_find(r, S("prod"), S("payments"),
					    35 * day, &rns, &rel, NULL) &&
		   rt_str_eq(rel, "payments"), "order %d: 11-04 payments",
		   order);
		ok(corr_registry_alias_find(r, S("prod"), S("payments"),
					    day, &rns, &rel, NULL) &&
		   rt_str_eq(rel, "billing"),
		   "order %d: before every sighting, the earliest", order);
		corr_registry_free(r);
	}
}

/* Workload -> release mappings learned from labels, and their place in
 * the order of evidence. */
static void test_alias(void)
{
	struct rt_str rns, rel;
	bool chg;

	ok(!corr_registry_alias_find(reg, S("lb"), S("haproxy"), 0, &rns, &rel, NULL),
	   "nothing learned yet");
	check("before: inferred from the workload", "lb", "Pod",
	      "haproxy-6c8d9f7b5-w9xqz", NULL, NULL, "lb", "haproxy",
	      PLAN_VIA_WORKLOAD);
	alias("lb", "haproxy", "lb", "edge", true, "haproxy -> edge");
	alias("lb", "haproxy", "lb", "edge", false, "stated again");
	alias("lb", "haproxy", "lb", "zulu", true,
	      "another release is kept beside it, from its own time");
	ok(corr_registry_alias_find(reg, S("lb"), S("haproxy"), 0, &rns, &rel, NULL) &&
	   rt_str_eq(rel, "edge") && rt_str_eq(rns, "lb"), "edge kept");
	alias("lb", "haproxy", "lb", "alpha", true, "a smaller one wins: any order");
	alias("lb", "haproxy", "lb", "edge", false, "edge again: no change");
	is_int((int)corr_registry_alias_count(reg), 1, "one mapping");
	is_int(corr_registry_alias_merge(reg, S("lb"), N, S("lb"), S("x"),
					 PLAN_VIA_LABEL, 0, &chg),
	       RT_EINVAL, "an empty workload is refused");
	alias("lb", "haproxy", "lb", "edge", false, "restore order: edge > alpha");
	/* start over with a fresh registry for the precedence checks */
	corr_registry_free(reg);
	reg = corr_registry_new();
	alias("lb", "haproxy", "lb", "edge", true, "haproxy -> edge again");
	check("a log line of a pod of the workload", "lb", NULL, NULL,
	      "haproxy-6c8d9f7b5-w9xqz", NULL, "lb", "edge", PLAN_VIA_LABEL);
	check("an event on a pod of another ReplicaSet", "lb", "Pod",
	      "haproxy-74d9c6b8f-bq4nl", NULL, NULL, "lb", "edge", PLAN_VIA_LABEL);
	check("the Deployment", "lb", "Deployment", "haproxy", NULL, NULL, "lb",
	      "edge", PLAN_VIA_LABEL);
	check("its ReplicaSet", "lb", "ReplicaSet", "haproxy-6c8d9f7b5", NULL,
	      NULL, "lb", "edge", PLAN_VIA_LABEL);
	check("another namespace learned nothing", "lb2", "Pod",
	      "haproxy-6c8d9f7b5-w9xqz", NULL, NULL, "lb2", "haproxy",
	      PLAN_VIA_WORKLOAD);
	check("another workload with that prefix", "lb", "Pod",
	      "haproxy-exporter-5d6f7c8b9-abcde", NULL, NULL, "lb",
	      "haproxy-exporter", PLAN_VIA_WORKLOAD);
	check("the record's own label still wins", "lb", "Pod",
	      "haproxy-6c8d9f7b5-w9xqz", NULL, "other", "lb", "other",
	      PLAN_VIA_LABEL);
	known("lb", "haproxy");
	check("over a known release of the workload's name", "lb", "Pod",
	      "haproxy-6c8d9f7b5-w9xqz", NULL, NULL, "lb", "edge", PLAN_VIA_LABEL);
	alias("lb", "helm-install-edge", "lb", "zzz", true, "a job mapping");
	check("helm-install jobs stay jobs", "lb", "Job", "helm-install-edge",
	      NULL, NULL, "lb", "edge", PLAN_VIA_JOB);
}

/* What a record teaches: a label on a pod or workload object. */
static void test_record_alias(void)
{
	struct rt_record r;
	struct plan_alias a;

	rt_record_init(&r);
	r.ns = S("lb");
	r.kind = S("Pod");
	r.name = S("haproxy-6c8d9f7b5-w9xqz");
	ok(!corr_record_alias(&r, &a), "no label, no mapping");
	r.release = S("edge");
	r.template_hash = S("6c8d9f7b5");
	ok(corr_record_alias(&r, &a), "a labelled pod event");
	is_rts(a.workload, "haproxy", "its workload");
	is_rts(a.rel, "edge", "its release");
	is_rts(a.rel_ns, "lb", "release namespace defaults to the record's");
	r.release_ns = S("infra");
	ok(corr_record_alias(&r, &a) && rt_str_eq(a.rel_ns, "infra"),
	   "meta.helm.sh/release-namespace kept");
	rt_record_init(&r);
	r.ns = S("shop");
	r.pod = S("checkout-web-5d8f7c6b9-lq9vn");
	r.release = S("checkout");
	ok(corr_record_alias(&r, &a) && rt_str_eq(a.workload, "checkout-web"),
	   "a labelled log line (Fluent Bit, Vector): the pod's workload");
	r.pod = S("checkout-5d8f7c6b9-lq9vn");
	ok(corr_record_alias(&r, &a) && rt_str_eq(a.workload, "checkout"),
	   "workload named like the release: kept, it ends an earlier "
	   "release's mapping");
	rt_record_init(&r);
	r.ns = S("shop");
	r.kind = S("ConfigMap");
	r.name = S("checkout-env");
	r.release = S("checkout");
	ok(!corr_record_alias(&r, &a), "not a workload object");
	r.kind = S("Pod");
	r.name = S("helm-install-traefik-x7fqb");
	ok(!corr_record_alias(&r, &a), "helm-controller pods are jobs, not workloads");
	r.kind = S("StatefulSet");
	r.name = S("checkout-db");
	ok(corr_record_alias(&r, &a) && rt_str_eq(a.workload, "checkout-db"),
	   "a labelled StatefulSet");
	r.ns = RT_STR_NULL;
	ok(!corr_record_alias(&r, &a), "no namespace, no mapping");
}

/* helm-install-X-<sfx>: the Job controller's suffix is cut exactly, even
 * when a shorter release is known. */
static void test_job_pods(void)
{
	corr_registry_free(reg);
	reg = corr_registry_new();
	known("kube-system", "traefik");
	check("traefik-crd's pod with only traefik known", "kube-system", "Pod",
	      "helm-install-traefik-crd-x7fqb", NULL, NULL, "kube-system",
	      "traefik-crd", PLAN_VIA_JOB);
	check("traefik's pod", "kube-system", "Pod", "helm-install-traefik-9cwmt",
	      NULL, NULL, "kube-system", "traefik", PLAN_VIA_JOB);
	known("traefik", "traefik-lb");
	check("a job pod labelled with its chart follows the targetNamespace",
	      "kube-system", "Pod", "helm-install-traefik-lb-x7fqb", NULL,
	      "traefik-lb", "traefik", "traefik-lb", PLAN_VIA_JOB);
	check("a label naming another release wins", "kube-system", "Pod",
	      "helm-install-traefik-lb-x7fqb", NULL, "other", "kube-system",
	      "other", PLAN_VIA_LABEL);
	known("kube-system", "traefik-crd");
	check("a known release named like the whole rest", "kube-system", "Pod",
	      "helm-install-traefik-crd", NULL, NULL, "kube-system", "traefik-crd",
	      PLAN_VIA_JOB);
}

static void test_option(void)
{
	struct corr_opts o = { 0 };
	struct plan_attr a;

	o.release_ns = "prod";
	o.release_name = "payments-api";
	corr_attribute(reg, &o, N, N, N, N, N, N, N, N, &a);
	is_rts(a.release, "payments-api", "--release names objectless records");
	is_int(a.via, PLAN_VIA_OPTION, "via option");
	corr_attribute(reg, &o, S("prod"), S("Pod"), S("orders-1-x"), N, N, N, N,
		       N, &a);
	ok(a.via != PLAN_VIA_OPTION, "--release does not override an object");
	corr_attribute(reg, NULL, N, N, N, N, N, N, N, N, &a);
	is_int(a.via, PLAN_VIA_NONE, "no object, no option: no release");
	is_str(corr_via_name(PLAN_VIA_WORKLOAD), "workload", "via names");
	is_int(corr_via_from_name("prefix"), PLAN_VIA_PREFIX, "via from name");
}

/* Owner references and a manifest's objects: the workload an owner names,
 * "Kind/name" keys for objects that are not workloads, and the order of
 * evidence labels > manifest > owner > prefix. */
static void test_manifest_owner(void)
{
	static const char cut[] = "reconciliation-engine-settlement-controller-"
				  "manager-7b9c8dx2k4p";
	struct corr_opts o = { 0 };
	struct plan_attr a;
	char buf[64];
	bool chg;

	is_rts(corr_owner_workload(S("ReplicaSet"), S("web-7d9c8f4b6"),
				   S("7d9c8f4b6")), "web", "ReplicaSet: hash cut");
	is_rts(corr_owner_workload(S("ReplicaSet"), S("web-7d9c8f4b6"), N),
	       "web", "ReplicaSet: a hash-like segment cut");
	is_rts(corr_owner_workload(S("StatefulSet"), S("journal"), N),
	       "journal", "StatefulSet: itself");
	is_rts(corr_owner_workload(S("Job"), S("nightly-28571430"), N),
	       "nightly", "a CronJob's Job: the CronJob");
	is_rts(corr_owner_workload(S("Node"), S("node-1"), N), "",
	       "a static pod's Node: no workload");
	is_rts(corr_object_key(S("ConfigMap"), S("router-config"), buf,
			       sizeof(buf)), "ConfigMap/router-config",
	       "a ConfigMap's key");
	is_rts(corr_object_key(S("Deployment"), S("router"), buf, sizeof(buf)),
	       "router", "a Deployment's key: its name");
	is_rts(corr_object_key(S("ClusterRole"), S("router"), buf, sizeof(buf)),
	       "", "a cluster-scoped object: none");

	corr_registry_free(reg);
	reg = corr_registry_new();
	is_int(corr_registry_alias_merge(reg, S("pay"), S("reconciliation-engine-"
		"settlement-controller-manager"), S("pay"), S("ledger"),
		PLAN_VIA_MANIFEST, 0, &chg), 0, "a manifest's Deployment");
	is_int(corr_registry_alias_merge(reg, S("pay"), S("PersistentVolumeClaim/"
		"archive"), S("pay"), S("clearing"), PLAN_VIA_MANIFEST, 0, &chg), 0,
	       "a manifest's claim");
	corr_attribute(reg, &o, S("pay"), S("Pod"), S(cut), N, N, N,
		       S("7b9c8d6f54"), N, &a);
	is_int(a.via, PLAN_VIA_WORKLOAD, "a cut pod name alone: inferred");
	corr_attribute(reg, &o, S("pay"), S("Pod"), S(cut), N, N, N,
		       S("7b9c8d6f54"), S("reconciliation-engine-settlement-"
		       "controller-manager"), &a);
	ok(rt_str_eq(a.release, "ledger") && a.via == PLAN_VIA_OWNER,
	   "its owner's workload: ledger, via owner");
	check("the claim itself", "pay", "PersistentVolumeClaim", "archive",
	      NULL, NULL, "pay", "clearing", PLAN_VIA_MANIFEST);
	check("a pod named like the claim is not it", "pay", "Pod",
	      "archive-7d9c8f4b6-4kx2m", NULL, NULL, "pay", "archive",
	      PLAN_VIA_WORKLOAD);
	alias("pay", "journal", "pay", "zzz", true, "journal labelled zzz");
	is_int(corr_registry_alias_merge(reg, S("pay"), S("journal"), S("pay"),
		S("aaa"), PLAN_VIA_MANIFEST, 0, &chg), 0, "and listed by aaa");
	is_int(chg, 1, "kept beside the label, from the same (unknown) time");
	check("journal-0", "pay", "Pod", "journal-0", NULL, NULL, "pay", "zzz",
	      PLAN_VIA_LABEL);
	check("labels first", "pay", "PersistentVolumeClaim", "archive", NULL,
	      "other", "pay", "other", PLAN_VIA_LABEL);
	is_str(corr_via_name(PLAN_VIA_MANIFEST), "manifest", "manifest's name");
	is_str(corr_via_name(PLAN_VIA_OWNER), "owner", "owner's name");
}

int main(void)
{
	reg = corr_registry_new();
	test_alias_time();
	test_workload();
	test_attribution();
	test_option();
	test_alias();
	test_record_alias();
	test_job_pods();
	test_manifest_owner();
	corr_registry_free(reg);
	return done_testing();
}
