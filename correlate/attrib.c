/*
 * attrib.c: which Helm release an object belongs to, best evidence first
 * (docs/architecture.md, "Correlation"):
 *   1. a release hint the decoder found in labels/annotations;
 *   2. helm-controller objects: Job/Pod helm-install-X, helm-delete-X, and
 *      the HelmChart X itself;
 *   3. the release another record of the same workload was labelled with
 *      (a CRI log line of pod haproxy-6c8d9f7b5-w9xqz belongs to release
 *      edge when the exporter's events of that Deployment's pods say so),
 *      else the release whose decoded manifest lists the object or its
 *      workload -- the workload its owner reference names when the input
 *      carries one (via owner when that is not what the name gives);
 *   4. the longest release known in the namespace that is the object's name
 *      or prefixes it at a '-' boundary (payments-api-7d9c8f4b6-4kx2m);
 *   5. the workload name (the owner's, or pod suffixes stripped), marked
 *      inferred.
 * A record without any object falls back to `ingest --release NS/NAME`.
 */
#include <string.h>

#include "revtrail/correlate.h"

static const char *const via_names[] = {
	"none", "label", "job", "option", "manifest", "owner", "prefix",
	"workload",
};

const char *corr_via_name(int via)
{
	if (via < 0 || via > PLAN_VIA_WORKLOAD)
		return "none";
	return via_names[via];
}

int corr_via_from_name(const char *s)
{
	for (int i = 0; i <= PLAN_VIA_WORKLOAD; i++)
		if (s && strcmp(s, via_names[i]) == 0)
			return i;
	return PLAN_VIA_NONE;
}

static bool is_alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/*
 * Kubernetes generates suffixes from "bcdfghjklmnpqrstvwxz2456789" (no
 * vowels). People writing examples by hand use any letters, so accept
 * [a-z0-9] with a digit, or without vowels: "4kx2m" and "abc12" are
 * suffixes, "admin" and "worker" are not.
 */
static bool looks_generated(const char *p, size_t n, size_t min, size_t max)
{
	bool digit = false, vowel = false;

	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!is_alnum_lower(p[i]))
			return false;
		if (p[i] >= '0' && p[i] <= '9')
			digit = true;
		else if (strchr("aeiouy", p[i]))
			vowel = true;
	}
	return digit || !vowel;
}

static bool all_alnum(struct rt_str s)
{
	for (size_t i = 0; i < s.n; i++)
		if (!is_alnum_lower(s.p[i]))
			return false;
	return true;
}

static bool all_digits(const char *p, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

/* Splits name at its last '-': *seg is what follows. False when none. */
static bool last_segment(struct rt_str name, struct rt_str *head,
			 struct rt_str *seg)
{
	for (size_t i = name.n; i > 1; i--)
		if (name.p[i - 1] == '-') {
			*head = rt_str_make(name.p, i - 1);
			*seg = rt_str_make(name.p + i, name.n - i);
			return seg->n > 0;
		}
	return false;
}

static struct rt_str strip_pod(struct rt_str name, struct rt_str hash)
{
	struct rt_str head, seg, head2, seg2;

	/* pod-template-hash known: cut at "-<hash>-" */
	if (hash.n) {
		for (size_t i = 0; i + hash.n + 2 <= name.n; i++)
			if (name.p[i] == '-' &&
			    memcmp(name.p + i + 1, hash.p, hash.n) == 0 &&
			    name.p[i + 1 + hash.n] == '-' && i > 0)
				return rt_str_make(name.p, i);
	}
	if (!last_segment(name, &head, &seg))
		return name;
	/* Deployment: <name>-<rs hash>-<sfx>; CronJob: <name>-<min>-<sfx>.
	 * After a hash-like segment any 5 characters are the pod suffix
	 * ("-abcde" in hand-written examples too). */
	if (all_alnum(seg) && seg.n == 5 && last_segment(head, &head2, &seg2) &&
	    (looks_generated(seg2.p, seg2.n, 6, 10) ||
	     (all_digits(seg2.p, seg2.n) && seg2.n >= 6)))
		return head2;
	if (looks_generated(seg.p, seg.n, 5, 5))
		return head;   /* Job, DaemonSet, bare ReplicaSet pod */
	if (all_digits(seg.p, seg.n))
		return head;   /* StatefulSet ordinal */
	return name;
}

struct rt_str corr_pod_replicaset(struct rt_str pod)
{
	struct rt_str head, seg, head2, seg2;

	/* strip_pod's Deployment case, cut once: <name>-<rs hash>-<sfx> */
	if (pod.n && last_segment(pod, &head, &seg) && seg.n == 5 &&
	    all_alnum(seg) && last_segment(head, &head2, &seg2) &&
	    looks_generated(seg2.p, seg2.n, 6, 10))
		return head;
	return RT_STR_NULL;
}

struct rt_str corr_workload_name(struct rt_str kind, struct rt_str name,
				 struct rt_str template_hash)
{
	struct rt_str head, seg;

	if (kind.n == 0 || rt_str_eq(kind, "Pod"))
		return strip_pod(name, template_hash);
	if (rt_str_eq(kind, "ReplicaSet") && last_segment(name, &head, &seg) &&
	    looks_generated(seg.p, seg.n, 5, 10))
		return head;
	if (rt_str_eq(kind, "Job") && last_segment(name, &head, &seg) &&
	    all_digits(seg.p, seg.n) && seg.n >= 6)
		return head;   /* CronJob's job */
	return name;
}

struct rt_str corr_helm_job_release(const struct corr_registry *reg,
				    struct rt_str ns, struct rt_str kind,
				    struct rt_str name)
{
	static const char *const prefixes[] = { "helm-install-", "helm-delete-" };
	struct rt_str rest = RT_STR_NULL, head, seg;

	for (size_t i = 0; i < 2; i++)
		if (rt_str_has_prefix(name, prefixes[i])) {
			size_t k = strlen(prefixes[i]);

			rest = rt_str_make(name.p + k, name.n - k);
		}
	if (rest.n == 0)
		return RT_STR_NULL;
	if (rt_str_eq(kind, "Job") || rt_str_eq(kind, "HelmChart"))
		return rest;
	/* A pod: helm-install-<release>-<sfx>, the suffix the Job controller
	 * adds. Cutting it is exact; a known release prefix would give
	 * "traefik" for helm-install-traefik-crd-x7fqb. */
	if (reg && corr_registry_first_ns(reg, rest))
		return rest;
	if (last_segment(rest, &head, &seg) && seg.n == 5 &&
	    looks_generated(seg.p, seg.n, 5, 5))
		return head;
	if (reg) {
		const struct corr_release *rel =
			corr_registry_longest_prefix(reg, ns, rest);

		if (rel)
			return rt_str_make(rest.p, strlen(rel->name));
		for (size_t n = rest.n; n > 0; n--)
			if ((n == rest.n || rest.p[n] == '-') &&
			    corr_registry_first_ns(reg, rt_str_make(rest.p, n)))
				return rt_str_make(rest.p, n);
	}
	return rest;
}

static bool rts_same(struct rt_str a, struct rt_str b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* Kinds whose name is, or leads to, a workload name. */
static bool workload_kind(struct rt_str kind)
{
	static const char *const kinds[] = {
		"Pod", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet",
		"Job", "CronJob",
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (rt_str_eq(kind, kinds[i]))
			return true;
	return false;
}

/* Objects outside any namespace belong to no release. */
static bool cluster_scoped(struct rt_str kind)
{
	static const char *const kinds[] = {
		"Node", "PersistentVolume", "Namespace", "StorageClass",
		"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
		"APIService", "PriorityClass", "CSIDriver", "CSINode",
		"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (rt_str_eq(kind, kinds[i]))
			return true;
	return false;
}

struct rt_str corr_owner_workload(struct rt_str owner_kind,
				  struct rt_str owner_name,
				  struct rt_str template_hash)
{
	if (!owner_name.n || cluster_scoped(owner_kind) ||
	    rt_str_eq(owner_kind, "Node"))
		return RT_STR_NULL;
	/* <deployment>-<pod-template-hash>: the hash is exact when the
	 * pod's labels gave it */
	if (rt_str_eq(owner_kind, "ReplicaSet") && template_hash.n &&
	    owner_name.n > template_hash.n + 1 &&
	    owner_name.p[owner_name.n - template_hash.n - 1] == '-' &&
	    !memcmp(owner_name.p + owner_name.n - template_hash.n,
		    template_hash.p, template_hash.n))
		return rt_str_make(owner_name.p, owner_name.n - template_hash.n - 1);
	return corr_workload_name(owner_kind, owner_name, RT_STR_NULL);
}

struct rt_str corr_object_workload(struct rt_str kind, struct rt_str name,
				   struct rt_str template_hash,
				   struct rt_str owner)
{
	return owner.n ? owner : corr_workload_name(kind, name, template_hash);
}

struct rt_str corr_object_key(struct rt_str kind, struct rt_str name,
			      char *buf, size_t size)
{
	if (!name.n || cluster_scoped(kind))
		return RT_STR_NULL;
	if (!kind.n || workload_kind(kind))
		return corr_workload_name(kind, name, RT_STR_NULL);
	if (kind.n + 1 + name.n > size)
		return RT_STR_NULL;
	memcpy(buf, kind.p, kind.n);
	buf[kind.n] = '/';
	memcpy(buf + kind.n + 1, name.p, name.n);
	return rt_str_make(buf, kind.n + 1 + name.n);
}

/* The release a learned mapping gives: the object itself as a decoded
 * manifest lists it ("ConfigMap/x"), else its workload -- the one its
 * owner reference names when known, then via PLAN_VIA_OWNER unless the
 * name says the same. */
static bool alias_attr(const struct corr_registry *reg, struct rt_str ns,
		       struct rt_str template_hash, struct rt_str owner,
		       int64_t ts, struct plan_attr *out)
{
	char buf[512];
	struct rt_str key, own, w;
	int via = PLAN_VIA_LABEL;

	if (!reg)
		return false;
	if (out->kind.n && !workload_kind(out->kind)) {
		key = corr_object_key(out->kind, out->name, buf, sizeof(buf));
		if (key.n && corr_registry_alias_find(reg, ns, key, ts,
				&out->release_ns, &out->release, &via)) {
			out->via = via;
			return true;
		}
	}
	own = corr_workload_name(out->kind, out->name, template_hash);
	w = corr_object_workload(out->kind, out->name, template_hash, owner);
	if (!corr_registry_alias_find(reg, ns, w, ts, &out->release_ns,
				      &out->release, &via))
		return false;
	/* In force: the workload's own release, named like it. The name
	 * says so below, as it did before the mapping was kept. */
	if (rts_same(w, out->release) && rts_same(ns, out->release_ns)) {
		out->release = out->release_ns = RT_STR_NULL;
		return false;
	}
	out->via = rts_same(w, own) ? via : PLAN_VIA_OWNER;
	return true;
}

/* The mapping key of HelmChart r's target: "HelmChart/r" into buf. */
static struct rt_str chart_key(struct rt_str r, char *buf, size_t size)
{
	static const char pre[] = "HelmChart/";

	if (sizeof(pre) - 1 + r.n > size)
		return RT_STR_NULL;
	memcpy(buf, pre, sizeof(pre) - 1);
	memcpy(buf + sizeof(pre) - 1, r.p, r.n);
	return rt_str_make(buf, sizeof(pre) - 1 + r.n);
}

/*
 * helm-controller jobs run in the HelmChart's namespace; the release
 * lives where a record of the job says (the --namespace of the helm
 * command it traces, kept as the mapping "HelmChart/r" of the job's
 * namespace), else there, else where the registry knows it -- of several
 * namespaces, the smallest by name: a guess, which show names
 * (docs/architecture.md "Evidence over name order").
 */
static struct rt_str job_ns(const struct corr_registry *reg, struct rt_str ns,
			    struct rt_str release)
{
	const char *other;
	char buf[512];
	struct rt_str key = chart_key(release, buf, sizeof(buf)), rns, rel;

	if (reg && key.n &&
	    corr_registry_alias_find(reg, ns, key, 0, &rns, &rel, NULL) &&
	    rel.n == release.n && !memcmp(rel.p, release.p, rel.n))
		return rns;
	if (!reg || corr_registry_find(reg, ns, release))
		return ns;
	other = corr_registry_first_ns(reg, release);
	return other ? rt_str_make(other, strlen(other)) : ns;
}

const char *corr_job_target(const struct corr_registry *reg,
			    const char *jobns, const char *r)
{
	struct rt_str t = job_ns(reg, rt_str_make(jobns, strlen(jobns)),
				 rt_str_make(r, strlen(r)));

	/* every answer is a string of the registry's or jobns itself */
	return t.p ? t.p : jobns;
}

bool corr_record_job_alias(const struct rt_record *rec, char *buf,
			   size_t size, struct plan_alias *out)
{
	struct rt_str name = rec->pod.n ? rec->pod : rec->name, r;

	if (!rec->release.n || !rec->release_ns.n || !rec->ns.n || !name.n)
		return false;
	/* a HelmChart object names its own release and target */
	if (!rec->pod.n && rt_str_eq(rec->kind, "HelmChart"))
		r = rec->name;
	else
		r = corr_helm_job_release(NULL, rec->ns, rec->pod.n ?
					  RT_STR_LIT("Pod") : rec->kind, name);
	if (r.n != rec->release.n || memcmp(r.p, rec->release.p, r.n))
		return false;
	memset(out, 0, sizeof(*out));
	out->ns = rec->ns;
	out->workload = chart_key(r, buf, size);
	out->rel_ns = rec->release_ns;
	out->rel = rec->release;
	out->cluster = rec->cluster;
	out->via = PLAN_VIA_LABEL;
	out->since_ns = rec->first_ns > 0 ? rec->first_ns : rec->ts_ns;
	return out->workload.n > 0;
}

void corr_attribute(const struct corr_registry *reg, const struct corr_opts *o,
		    struct rt_str ns, struct rt_str kind, struct rt_str name,
		    struct rt_str pod, struct rt_str hint_release,
		    struct rt_str hint_ns, struct rt_str template_hash,
		    struct rt_str owner, struct plan_attr *out)
{
	corr_attribute_at(reg, o, ns, kind, name, pod, hint_release, hint_ns,
			  template_hash, owner, 0, out);
}

void corr_attribute_at(const struct corr_registry *reg,
		       const struct corr_opts *o, struct rt_str ns,
		       struct rt_str kind, struct rt_str name, struct rt_str pod,
		       struct rt_str hint_release, struct rt_str hint_ns,
		       struct rt_str template_hash, struct rt_str owner,
		       int64_t ts, struct plan_attr *out)
{
	const struct corr_release *rel;
	struct rt_str r;

	memset(out, 0, sizeof(*out));
	out->kind = kind.n ? kind : (pod.n ? RT_STR_LIT("Pod") : RT_STR_NULL);
	out->name = name.n ? name : pod;
	if (rt_str_eq(out->kind, "Pod") && pod.n && !name.n)
		out->name = pod;
	/* A helm-controller job labelled with its own chart is still a job:
	 * it runs in the HelmChart's namespace, its release may live in the
	 * targetNamespace, like the unlabelled records of the same job. */
	if (hint_release.n && !hint_ns.n && out->name.n) {
		r = corr_helm_job_release(reg, ns, out->kind, out->name);
		if (r.n == hint_release.n &&
		    memcmp(r.p, hint_release.p, r.n) == 0) {
			out->release = r;
			out->release_ns = job_ns(reg, ns, r);
			out->via = PLAN_VIA_JOB;
			return;
		}
	}
	if (hint_release.n) {
		out->release = hint_release;
		out->release_ns = hint_ns.n ? hint_ns : ns;
		out->via = PLAN_VIA_LABEL;
		return;
	}
	if (out->name.n == 0) {
		if (o && o->release_name && *o->release_name) {
			out->release = rt_str_make(o->release_name,
						   strlen(o->release_name));
			out->release_ns = o->release_ns ?
				rt_str_make(o->release_ns, strlen(o->release_ns)) :
				ns;
			out->via = PLAN_VIA_OPTION;
		}
		return;
	}
	if (cluster_scoped(out->kind))
		return;
	if (rt_str_eq(out->kind, "HelmChart") ||
	    rt_str_eq(out->kind, "HelmChartConfig"))
		r = out->name;
	else
		r = corr_helm_job_release(reg, ns, out->kind, out->name);
	if (r.n) {
		out->release = r;
		out->release_ns = job_ns(reg, ns, r);
		out->via = PLAN_VIA_JOB;
		return;
	}
	if (alias_attr(reg, ns, template_hash, owner, ts, out))
		return;
	rel = reg ? corr_registry_longest_prefix(reg, ns, out->name) : NULL;
	if (rel) {
		out->release = rt_str_make(out->name.p, strlen(rel->name));
		out->release_ns = ns;
		out->via = PLAN_VIA_PREFIX;
		return;
	}
	out->release = corr_object_workload(out->kind, out->name, template_hash,
					    owner);
	out->release_ns = ns;
	out->via = out->release.n ? PLAN_VIA_WORKLOAD : PLAN_VIA_NONE;
}

bool corr_record_alias(const struct rt_record *rec, struct plan_alias *out)
{
	struct rt_str kind = rec->kind, name = rec->name;

	if (!rec->release.n || !rec->ns.n)
		return false;
	if (!kind.n && rec->pod.n) {
		kind = RT_STR_LIT("Pod");
		name = rec->pod;
	}
	if (!name.n || !workload_kind(kind) ||
	    rt_str_has_prefix(name, "helm-install-") ||
	    rt_str_has_prefix(name, "helm-delete-") ||
	    /* Rancher runs each helm operation in a pod of its own: one
	     * operation's release says nothing of the next one's. */
	    rt_str_has_prefix(name, "helm-operation-"))
		return false;
	out->ns = rec->ns;
	out->workload = corr_object_workload(kind, name, rec->template_hash,
		corr_owner_workload(rec->owner_kind, rec->owner_name,
				    rec->template_hash));
	out->via = PLAN_VIA_LABEL;
	out->rel_ns = rec->release_ns.n ? rec->release_ns : rec->ns;
	out->rel = rec->release;
	out->cluster = rec->cluster;
	out->since_ns = rec->first_ns > 0 ? rec->first_ns : rec->ts_ns;
	/* A workload named like its release in its own namespace is kept
	 * too: from then on it is its own, whatever it was before. */
	return out->workload.n > 0;
}
