/*
 * diagnose.c: diagnosis rules over an incident (docs/rules.md, "Diagnosis
 * rules"). A rule holds when every condition it lists holds; the
 * highest priority rule that holds names the incident (ties: smaller id, so
 * the result never depends on pack order). The conditions that held are
 * kept as evidence, with what the release payload says (a ConfigMap templated
 * as a hook, a workload without a checksum annotation) and the pods hit.
 */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "revtrail/correlate.h"

__attribute__((format(printf, 2, 3)))
static void evidence(struct corr_diagnosis *out, const char *fmt, ...)
{
	va_list ap;

	if (!out || out->nevidence == CORR_MAX_EVIDENCE)
		return;
	va_start(ap, fmt);
	vsnprintf(out->evidence[out->nevidence++], sizeof(out->evidence[0]),
		  fmt, ap);
	va_end(ap);
}

static bool has_tag(const struct corr_incview *v, const char *tag)
{
	if (!v->tags)
		return false;
	for (unsigned i = 0; i < v->tags->n; i++)
		if (strcmp(v->tags->t[i], tag) == 0)
			return true;
	return false;
}

static bool starts_with(const char *s, const char *p)
{
	return s && strncasecmp(s, p, strlen(p)) == 0;
}

size_t corr_later_revisions(const struct corr_incview *v,
			    const struct corr_rev **out, size_t max)
{
	size_t n = 0;
	int64_t end = v->last_ns + v->gap_ns;

	if (!v->rel)
		return 0;
	/* revs are sorted by (life, number): the timeline order */
	for (size_t i = 0; i < v->rel->nrevs; i++) {
		const struct corr_rev *r = &v->rel->revs[i];

		if (r == v->opening || !r->updated_ns)
			continue;
		if (r->updated_ns + CORR_SKEW_NS <= v->opened_ns ||
		    r->updated_ns > end)
			continue;
		if (v->opening && (r->life < v->opening->life ||
				   (r->life == v->opening->life &&
				    r->revision < v->opening->revision)))
			continue;
		if (n < max)
			out[n] = r;
		n++;
	}
	return n;
}

/* How an engineer says what a captured value means, by field (and tag:
 * a path is missing, unreadable or a failed subPath). */
static const struct phrase {
	const char *field, *tag, *pre, *post;
} phrases[] = {
	{ "configmap", "config_key_missing", "ConfigMap ", " lacks a key" },
	{ "configmap", NULL, "ConfigMap ", " not found" },
	{ "secret", "config_key_missing", "Secret ", " lacks a key" },
	{ "secret", NULL, "Secret ", " not found" },
	{ "key", NULL, "key ", " missing" },
	{ "path", "config_file_missing", "", ": no such file" },
	{ "path", "permission_denied", "", ": permission denied" },
	{ "path", "subpath_mount", "", ": subPath mount failed" },
	{ "path", "config_invalid", "", ": invalid configuration" },
	{ "volume", NULL, "volume ", " cannot be mounted" },
	{ "image", NULL, "image ", " cannot be pulled or run" },
	{ "user", NULL, "database user ", " rejected" },
	{ "host", "dns_failure", "", " does not resolve" },
	{ "host", "tls_error", "TLS to ", " fails" },
	{ "host", NULL, "", " unreachable" },
	{ "probe", NULL, "", " probe failing" },
	{ "container", "crashloop", "container ", " crash-looping" },
	{ "container", "oom_killed", "container ", " OOM-killed" },
	{ "storageclass", NULL, "StorageClass ", " cannot provision" },
};

static const struct phrase *phrase_of(const char *tag, const char *field)
{
	for (size_t i = 0; i < sizeof(phrases) / sizeof(phrases[0]); i++)
		if (!strcmp(phrases[i].field, field) &&
		    (!phrases[i].tag || !strcmp(phrases[i].tag, tag)))
			return &phrases[i];
	return NULL;
}

/* " (2 pods, 7 times)" */
static const char *counted(const struct corr_capture *c, char *buf,
			   size_t size)
{
	if (c->pods > 0)
		snprintf(buf, size, " (%lld pod%s, %lld time%s)",
			 (long long)c->pods, c->pods == 1 ? "" : "s",
			 (long long)c->times, c->times == 1 ? "" : "s");
	else
		snprintf(buf, size, " (%lld time%s)", (long long)c->times,
			 c->times == 1 ? "" : "s");
	return buf;
}

/* What the events of tag say, in words: the objects and paths their
 * rules captured ("ConfigMap x not found (2 pods, 7 times)"), else the
 * tag's words and counts, else the tag. */
static void tag_evidence(struct corr_diagnosis *out,
			 const struct corr_incview *v, const char *tag)
{
	char cnt[64], words[64];
	const char *field = NULL;     /* one field a tag: its most frequent */
	unsigned said = 0;

	if (!out)
		return;
	for (size_t i = 0; i < v->ncaps && said < 2; i++) {
		const struct corr_capture *c = &v->caps[i];
		const struct phrase *ph;

		if (!c->field || strcmp(c->tag, tag) ||
		    (field && strcmp(field, c->field)) ||
		    !(ph = phrase_of(tag, c->field)))
			continue;
		field = c->field;
		evidence(out, "%s%.120s%s%s", ph->pre, c->value, ph->post,
			 counted(c, cnt, sizeof(cnt)));
		said++;
	}
	for (size_t i = 0; i < v->ncaps && !said; i++) {
		const struct corr_capture *c = &v->caps[i];

		if (c->field || strcmp(c->tag, tag))
			continue;
		snprintf(words, sizeof(words), "%s", tag);
		for (char *p = words; *p; p++)
			*p = *p == '_' ? ' ' : *p;
		evidence(out, "%s%s", words, counted(c, cnt, sizeof(cnt)));
		said++;
	}
	if (!said)
		evidence(out, "tag %s", tag);
}

static bool check_tags(const struct rules_diagnosis *d,
		       const struct corr_incview *v, struct corr_diagnosis *out)
{
	for (size_t i = 0; i < d->nall; i++)
		if (!has_tag(v, d->all[i]))
			return false;
	for (size_t i = 0; i < d->nnone; i++)
		if (has_tag(v, d->none[i]))
			return false;
	for (size_t i = 0; i < d->nall; i++)
		tag_evidence(out, v, d->all[i]);
	for (size_t g = 0; g < d->nanygroups; g++) {
		size_t k;

		for (k = 0; k < d->nany[g]; k++)
			if (has_tag(v, d->any[g][k]))
				break;
		if (k == d->nany[g])
			return false;
		tag_evidence(out, v, d->any[g][k]);
	}
	return true;
}

static bool check_revision(const struct rules_diagnosis *d,
			   const struct corr_incview *v,
			   struct corr_diagnosis *out)
{
	const char *status = v->opening && v->opening->status ?
		v->opening->status : "unknown";
	size_t i;

	if (d->nrevision_status == 0)
		return true;
	for (i = 0; i < d->nrevision_status; i++)
		if (strcasecmp(d->revision_status[i], status) == 0 ||
		    d->revision_status[i][0] == '\0')
			break;
	if (i == d->nrevision_status)
		return false;
	if (v->opening)
		evidence(out, "revision %d status %s%s%s%s", v->opening->revision,
			 status, v->opening->description ? " (" : "",
			 v->opening->description ? v->opening->description : "",
			 v->opening->description ? ")" : "");
	else
		evidence(out, "revision unknown: no release history");
	return true;
}

static const struct plan_object *install_job(const struct corr_incview *v)
{
	for (size_t i = 0; i < v->nobjects; i++)
		if (strncmp(v->objects[i].name, "helm-install-", 13) == 0)
			return &v->objects[i];
	return NULL;
}

/* "3m", "2h", "5d": a duration as an engineer says it. */
static const char *span(int64_t ns, char *buf, size_t size)
{
	int64_t s = ns / 1000000000LL;

	if (s < 120)
		snprintf(buf, size, "%llds", (long long)s);
	else if (s < 2 * 3600)
		snprintf(buf, size, "%lldm", (long long)(s / 60));
	else if (s < 2 * 86400)
		snprintf(buf, size, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, size, "%lldd", (long long)(s / 86400));
	return buf;
}

static bool check_opened_by(const struct rules_diagnosis *d,
			    const struct corr_incview *v,
			    struct corr_diagnosis *out)
{
	const struct corr_rev *r = v->opening;
	const struct plan_object *job;
	char buf[32];

	switch (d->opened_by) {
	case RULES_OPENED_UPGRADE:
		if (!r || !(r->revision > 1 ||
			    starts_with(r->description, "Upgrade")))
			return false;
		/* an upgrade is blamed only for what fails soon after it */
		if (d->within_ns && r->updated_ns &&
		    v->opened_ns - r->updated_ns > d->within_ns)
			return false;
		if (r->updated_ns && v->opened_ns >= r->updated_ns)
			evidence(out, "opened %s after the upgrade to revision "
				 "%d", span(v->opened_ns - r->updated_ns, buf,
					     sizeof(buf)), r->revision);
		else
			evidence(out, "opened after the upgrade to revision %d",
				 r->revision);
		return true;
	case RULES_OPENED_INSTALL:
		if (r && (r->revision == 1 ||
			  starts_with(r->description, "Install"))) {
			evidence(out, "opened after the install (revision %d)",
				 r->revision);
			return true;
		}
		job = install_job(v);
		if (!job)
			return false;
		evidence(out, "install attempt by %s/%s", job->kind, job->name);
		return true;
	default:
		return true;
	}
}

static bool check_followed(const struct rules_diagnosis *d,
			   const struct corr_incview *v,
			   struct corr_diagnosis *out)
{
	const struct corr_rev *later[32];
	size_t n;

	if (!d->followed_by_rollback)
		return true;
	n = corr_later_revisions(v, later, 32);
	for (size_t i = 0; i < n && i < 32; i++)
		if (starts_with(later[i]->description, "Rollback to")) {
			evidence(out, "followed by revision %d: %s%s%s%s",
				 later[i]->revision, later[i]->description,
				 later[i]->status ? " (" : "",
				 later[i]->status ? later[i]->status : "",
				 later[i]->status ? ")" : "");
			return true;
		}
	return false;
}

/* One "Kind/name-glob" (glob[0..n)) against the affected objects. */
static bool object_matches(const char *glob, size_t n,
			   const struct corr_incview *v,
			   struct corr_diagnosis *out)
{
	char pat[256];
	const char *slash;
	size_t klen;

	snprintf(pat, sizeof(pat), "%.*s", (int)n, glob);
	slash = strchr(pat, '/');
	klen = slash ? (size_t)(slash - pat) : 0;
	for (size_t i = 0; i < v->nobjects; i++) {
		const struct plan_object *o = &v->objects[i];

		if (slash && (strlen(o->kind) != klen ||
			      strncasecmp(o->kind, pat, klen) != 0))
			continue;
		if (fnmatch(slash ? slash + 1 : pat, o->name, 0) == 0) {
			evidence(out, "%s/%s matches %s", o->kind, o->name, pat);
			return true;
		}
	}
	return false;
}

/* The object line lists globs separated by blanks; any one may match. */
static bool check_object(const struct rules_diagnosis *d,
			 const struct corr_incview *v,
			 struct corr_diagnosis *out)
{
	const char *g = d->object_glob;
	bool any = false;

	if (!g || !*g)
		return true;
	while (*(g += strspn(g, " \t"))) {
		size_t n = strcspn(g, " \t");

		any = true;
		if (object_matches(g, n, v, out))
			return true;
		g += n;
	}
	return !any;
}

/* The opening revision, when its release payload was decoded. */
static const struct corr_rev *decoded_opening(const struct corr_incview *v)
{
	const struct corr_rev *r = v->opening;

	return r && (r->evidence & RT_REV_PAYLOAD) ? r : NULL;
}

/* payload hook-config: a decoded payload must template a config hook;
 * without one decoded there is nothing to contradict the diagnosis. */
static bool check_payload(const struct rules_diagnosis *d,
			  const struct corr_incview *v)
{
	const struct corr_rev *r = decoded_opening(v);

	return !d->payload_hook_config || !r ||
	       (r->evidence & RT_REV_HOOK_CONFIG);
}

static bool matches_but_payload(const struct rules_diagnosis *d,
				const struct corr_incview *v,
				struct corr_diagnosis *out)
{
	return check_tags(d, v, out) && check_revision(d, v, out) &&
	       check_opened_by(d, v, out) && check_followed(d, v, out) &&
	       check_object(d, v, out);
}

bool corr_diag_matches(const struct rules_diagnosis *d,
		       const struct corr_incview *v, struct corr_diagnosis *out)
{
	return matches_but_payload(d, v, out) && check_payload(d, v);
}

/* What the decoded release payload says about the config objects. */
static void payload_evidence(const struct corr_incview *v,
			     struct corr_diagnosis *out)
{
	const struct corr_rev *r = v->opening;

	if (!r && v->rel) {
		/* no opening revision known: the newest with a payload */
		for (size_t i = v->rel->nrevs; i > 0 && !r; i--)
			if (v->rel->revs[i - 1].evidence & RT_REV_PAYLOAD)
				r = &v->rel->revs[i - 1];
	}
	if (!r)
		return;
	if ((r->evidence & RT_REV_HOOK_CONFIG) && r->hooks) {
		const char *p = r->hooks;

		while (*p) {
			size_t n = strcspn(p, ",");

			evidence(out, "%.*s is a Helm hook with before-hook-creation "
				 "in revision %d: it is deleted and recreated on "
				 "every upgrade", (int)n, p, r->revision);
			p += n + (p[n] == ',');
		}
	} else if (r->evidence & RT_REV_HOOK_CONFIG)
		evidence(out, "revision %d templates a ConfigMap/Secret as a "
			 "Helm hook with before-hook-creation", r->revision);
	if (r->evidence & RT_REV_NO_CHECKSUM)
		evidence(out, "revision %d: the workload's pod template has no "
			 "checksum annotation, so a config change restarts no pod",
			 r->revision);
}

static int pod_cmp(const void *a, const void *b)
{
	const struct plan_object *x = *(const struct plan_object *const *)a;
	const struct plan_object *y = *(const struct plan_object *const *)b;

	if (x->first_ns != y->first_ns)
		return x->first_ns < y->first_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void affected_pods(const struct corr_incview *v,
			  struct corr_diagnosis *out)
{
	const struct plan_object *pods[PLAN_MAX_PODS];
	size_t n = 0;

	out->pods_total = 0;
	for (size_t i = 0; i < v->nobjects; i++) {
		if (strcmp(v->objects[i].kind, "Pod") != 0)
			continue;
		out->pods_total++;
		if (n < PLAN_MAX_PODS)
			pods[n++] = &v->objects[i];
	}
	if (v->pods_total > out->pods_total)
		out->pods_total = v->pods_total;
	qsort(pods, n, sizeof(pods[0]), pod_cmp);
	for (size_t i = 0; i < n; i++)
		out->pods[i] = pods[i]->name;
	out->npods = (unsigned)n;
}

void corr_diagnose(const struct rules_diagnosis *const *rules, size_t n,
		   const struct corr_incview *v, struct corr_diagnosis *out)
{
	const struct rules_diagnosis *best = NULL, *ruled_out = NULL;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const struct rules_diagnosis *d = rules[i];

		if (!d || !matches_but_payload(d, v, NULL))
			continue;
		if (!check_payload(d, v)) {
			if (!ruled_out || d->priority > ruled_out->priority)
				ruled_out = d;
			continue;
		}
		if (!best || d->priority > best->priority ||
		    (d->priority == best->priority && strcmp(d->id, best->id) < 0))
			best = d;
	}
	affected_pods(v, out);
	if (!best)
		return;
	out->rule = best;
	corr_diag_matches(best, v, out);
	payload_evidence(v, out);
	/* Say why the diagnosis its symptoms suggest was not taken. */
	if (ruled_out && ruled_out->priority > best->priority)
		evidence(out, "not %s: the release payload of revision %d "
			 "templates no ConfigMap/Secret as a Helm hook that is "
			 "deleted before it is re-created", ruled_out->id,
			 decoded_opening(v)->revision);
	if (out->pods_total)
		evidence(out, "%zu pod%s affected", out->pods_total,
			 out->pods_total == 1 ? "" : "s");
}

void corr_diagnose_rules(const struct rules *r, const struct corr_incview *v,
			 struct corr_diagnosis *out)
{
	const struct rules_diagnosis *list[256];
	size_t n = r ? rules_diagnosis_count(r) : 0;

	if (n > 256)
		n = 256;
	for (size_t i = 0; i < n; i++)
		list[i] = rules_diagnosis_at(r, i);
	corr_diagnose(list, n, v, out);
}
