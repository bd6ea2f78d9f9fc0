/*
 * dec_helm.c: Helm documents (docs/formats.md §3) as JSON: `helm history -o
 * json`, `helm list -o json`, a release (`helm status -o json`, the decoded
 * storage payload) and release storage Secrets/ConfigMaps, Helm 3 and the
 * Helm 2 Tiller ConfigMaps. Each becomes one record whose revs[] states the
 * revisions; the correlator merges them by (ns, release, revision).
 *
 * A release's hooks and manifest are also read for the evidence the
 * hook_configmap_race diagnosis needs: config objects templated as hooks
 * that Helm deletes and recreates on every upgrade, and workloads with no
 * checksum annotation to roll them when that config changes.
 *
 * The text forms live beside it: tables and the status block in
 * dec_table.c, CLI lines in dec_helm_cli.c.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "helm_text.h"
#include "json_scan.h"

#define HOOK_NAMES_MAX 1024

/* A positive decimal of at most 9 digits, else 0. */
int dec_helm_parse_int(const char *p, size_t n)
{
	int v = 0;

	if (n == 0 || n > 9)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return 0;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

/* history says 3, list says "3". */
static int helm_json_revision(const cJSON *it)
{
	if (cJSON_IsNumber(it))
		return it->valuedouble >= 1 && it->valuedouble <= INT_MAX ?
		       (int)it->valuedouble : 0;
	if (cJSON_IsString(it) && it->valuestring)
		return dec_helm_parse_int(it->valuestring, strlen(it->valuestring));
	return 0;
}

/* Status as Helm 3 writes it: lower case with hyphens, so Tiller's
 * "PENDING_UPGRADE" and a table's "deployed" compare equal. */
struct rt_str dec_helm_status_str(struct dec_ctx *d, const char *p,
				     size_t n)
{
	struct rt_str s = rt_arena_strdup(d->arena, p, n);
	char *w = (char *)s.p;

	for (size_t i = 0; w && i < s.n; i++)
		w[i] = w[i] == '_' ? '-' : (char)tolower((unsigned char)w[i]);
	return s;
}

static struct rt_str helm_json_status(struct dec_ctx *d, const cJSON *it)
{
	if (!dec_json_nonempty(it))
		return RT_STR_NULL;
	return dec_helm_status_str(d, it->valuestring, strlen(it->valuestring));
}

struct rt_revision *dec_helm_revs_alloc(struct dec_ctx *d, size_t n)
{
	struct rt_revision *r = rt_arena_alloc(d->arena, n * sizeof(*r));

	if (r)
		memset(r, 0, n * sizeof(*r));
	return r;
}

struct rt_str dec_helm_opt_str(struct dec_ctx *d, const char *s)
{
	return s && *s ? rt_arena_strdup(d->arena, s, strlen(s)) : RT_STR_NULL;
}

/* History inputs do not name their release: --release [NS/]NAME may. */
void dec_helm_opts_release(struct dec_ctx *d, struct rt_revision *rev)
{
	if (!d->opts)
		return;
	rev->ns = dec_helm_opt_str(d, d->opts->release_ns);
	rev->release = dec_helm_opt_str(d, d->opts->release_name);
}

/*
 * Fills the record-level fields from the revisions it states (time and
 * message from the newest; release, namespace and chart when there is only
 * one, or for a history, which is one release) and emits it. A single
 * revision without a number still names its release, but is not stated as
 * a revision (revs[] entries have revision > 0). Returns DEC_YES or the
 * emit error.
 */
int dec_helm_emit_revs(struct dec_ctx *d, struct rt_record *rec,
			  struct rt_revision *revs, size_t n)
{
	const struct rt_revision *last = n ? &revs[0] : NULL;
	int rc;

	for (size_t i = 1; i < n; i++)
		if (revs[i].revision > last->revision)
			last = &revs[i];
	if (last && (n == 1 || rec->format == RT_FMT_HELM_HISTORY)) {
		if (last->release.n)
			rec->release = last->release;
		if (last->ns.n) {
			rec->release_ns = last->ns;
			rec->ns = last->ns;
		}
		if (last->chart.n)
			rec->chart = last->chart;
	}
	if (last) {
		rec->ts_ns = last->updated_ns;
		rec->message = last->description;
	}
	if (n == 1 && revs[0].revision <= 0)
		n = 0;
	rec->revs = n ? revs : NULL;
	rec->nrevs = n;
	if (!rec->ts_ns)
		rec->ts_ns = d->hint_ts_ns ? d->hint_ts_ns : d->base->ts_ns;
	if ((rc = dec_emit(d, rec)) != 0)
		return rc;
	return DEC_YES;
}

static bool is_config_kind(const char *p, size_t n)
{
	return (n == 9 && memcmp(p, "ConfigMap", 9) == 0) ||
	       (n == 6 && memcmp(p, "Secret", 6) == 0);
}

static bool is_workload_kind(const char *p, size_t n)
{
	return (n == 10 && memcmp(p, "Deployment", 10) == 0) ||
	       (n == 11 && memcmp(p, "StatefulSet", 11) == 0) ||
	       (n == 9 && memcmp(p, "DaemonSet", 9) == 0);
}

/*
 * Value of a `key: value` line of YAML text [p, end), quotes stripped.
 * top: only at column 0 (a document's own kind, not a nested one).
 * Good enough for the rendered manifests Helm stores; not a YAML parser.
 */
static const char *yaml_value(const char *p, const char *end,
			      const char *key, bool top, size_t *vn)
{
	size_t kl = strlen(key);

	for (const char *line = p; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *s = line, *v, *ve;

		if (!eol)
			eol = end;
		if (!top)
			while (s < eol && (*s == ' ' || *s == '\t' || *s == '-'))
				s++;
		if (s < eol && (*s == '"' || *s == '\''))
			s++;
		if ((size_t)(eol - s) > kl && memcmp(s, key, kl) == 0) {
			v = s + kl;
			if (v < eol && (*v == '"' || *v == '\''))
				v++;
			if (v < eol && *v == ':') {
				v++;
				while (v < eol && (*v == ' ' || *v == '\t'))
					v++;
				ve = eol;
				while (ve > v && isspace((unsigned char)ve[-1]))
					ve--;
				if (ve - v >= 2 && (*v == '"' || *v == '\'') &&
				    ve[-1] == *v) {
					v++;
					ve--;
				}
				*vn = (size_t)(ve - v);
				return v;
			}
		}
		line = eol + 1;
	}
	return NULL;
}

/* True when a Deployment/StatefulSet/DaemonSet of the manifest has no
 * checksum/ annotation, i.e. a config change does not roll its pods. */
static bool workload_without_checksum(const char *m)
{
	const char *end = m + strlen(m);
	const char *doc = m;

	while (doc < end) {
		const char *next = doc, *kind;
		size_t kn;

		/* Documents are separated by lines that start with "---". */
		do {
			next = memchr(next, '\n', (size_t)(end - next));
			next = next ? next + 1 : end;
		} while (next < end && strncmp(next, "---", 3) != 0);
		kind = yaml_value(doc, next, "kind", true, &kn);
		if (kind && is_workload_kind(kind, kn) &&
		    !memmem(doc, (size_t)(next - doc), "checksum/", 9))
			return true;
		doc = next;
	}
	return false;
}

/*
 * A ConfigMap or Secret hook that Helm deletes before re-creating it on the
 * next run of its hook: before-hook-creation, explicitly or as the default
 * when no delete policy is set.
 */
static bool is_config_hook(const cJSON *h)
{
	const cJSON *kind = dec_json_get(h, "kind"), *pol = dec_json_get(h, "delete_policies");
	const cJSON *man = dec_json_get(h, "manifest"), *it;
	const char *ms = cJSON_IsString(man) ? man->valuestring : "";
	const char *me = ms + strlen(ms), *v;
	size_t vn;

	if (dec_json_nonempty(kind)) {
		if (!is_config_kind(kind->valuestring,
				    strlen(kind->valuestring)))
			return false;
	} else if (!(v = yaml_value(ms, me, "kind", true, &vn)) ||
		   !is_config_kind(v, vn)) {
		return false;
	}
	if (cJSON_IsArray(pol) && cJSON_GetArraySize(pol) > 0) {
		cJSON_ArrayForEach(it, pol)
			if (dec_json_is(it, "before-hook-creation"))
				return true;
		return false;
	}
	v = yaml_value(ms, me, "helm.sh/hook-delete-policy", false, &vn);
	return !v || vn == 0 || memmem(v, vn, "before-hook-creation", 20);
}

static void append_name(char *buf, size_t *len, const char *name)
{
	size_t n = strlen(name);

	if (!n || *len + n + 2 > HOOK_NAMES_MAX)
		return;
	if (*len)
		buf[(*len)++] = ',';
	memcpy(buf + *len, name, n);
	*len += n;
}

/* Hook and manifest evidence of a release; see the file comment. */
static void release_evidence(struct dec_ctx *d, const cJSON *rel,
			     struct rt_revision *rev)
{
	const cJSON *hooks = dec_json_get(rel, "hooks"), *man = dec_json_get(rel, "manifest");
	const cJSON *h;
	char names[HOOK_NAMES_MAX];
	size_t len = 0;

	if (!hooks && !man)
		return;
	rev->evidence |= RT_REV_PAYLOAD;
	if (cJSON_IsArray(hooks)) {
		cJSON_ArrayForEach(h, hooks) {
			if (!is_config_hook(h))
				continue;
			rev->evidence |= RT_REV_HOOK_CONFIG;
			if (dec_json_nonempty(dec_json_get(h, "name")))
				append_name(names, &len,
					    dec_json_get(h, "name")->valuestring);
		}
	}
	if (len)
		rev->hook_configmaps = rt_arena_strdup(d->arena, names, len);
	if (cJSON_IsString(man)) {
		rev->manifest_objects = dec_manifest_objects(d->arena,
							     man->valuestring);
		rev->manifest_summary = dec_manifest_summary(d->arena,
							     man->valuestring);
	}
	if ((rev->evidence & RT_REV_HOOK_CONFIG) && cJSON_IsString(man) &&
	    workload_without_checksum(man->valuestring))
		rev->evidence |= RT_REV_NO_CHECKSUM;
}

/* "<name>-<version>", as `helm list` and `helm history` print the chart. */
static struct rt_str chart_string(struct dec_ctx *d, const cJSON *meta)
{
	const cJSON *name = dec_json_nonempty(dec_json_get(meta, "name"));
	const cJSON *ver = dec_json_nonempty(dec_json_get(meta, "version"));
	size_t nn, vn;
	char *p;

	if (!name)
		return RT_STR_NULL;
	if (!ver)
		return dec_json_str(d, name);
	nn = strlen(name->valuestring);
	vn = strlen(ver->valuestring);
	if (!(p = rt_arena_alloc(d->arena, nn + vn + 2)))
		return RT_STR_NULL;
	memcpy(p, name->valuestring, nn);
	p[nn] = '-';
	memcpy(p + nn + 1, ver->valuestring, vn + 1);
	return rt_str_make(p, nn + 1 + vn);
}

/* A release object: helm status -o json, or a storage payload. */
static void release_fill(struct dec_ctx *d, const cJSON *rel,
			 struct rt_revision *rev)
{
	const cJSON *info = dec_json_get(rel, "info");
	const cJSON *meta = dec_json_get(dec_json_get(rel, "chart"), "metadata");

	rev->release = dec_json_str(d, dec_json_get(rel, "name"));
	rev->ns = dec_json_str(d, dec_json_get(rel, "namespace"));
	rev->revision = helm_json_revision(dec_json_get(rel, "version"));
	rev->status = helm_json_status(d, dec_json_get(info, "status"));
	rev->description = dec_json_str(d, dec_json_get(info, "description"));
	/* Helm 3 writes zero times as "": json_time reads that as unknown. */
	rev->updated_ns = dec_json_time(d, dec_json_get(info, "last_deployed"));
	if (!rev->updated_ns)
		rev->updated_ns = dec_json_time(d, dec_json_get(info,
							   "first_deployed"));
	rev->chart = chart_string(d, meta);
	rev->app_version = dec_json_str(d, dec_json_get(meta, "appVersion"));
	release_evidence(d, rel, rev);
}

/* A release: a name and an info, and one more thing only Helm writes
 * there. Go leaves out a zero `version` (omitempty), and a trimmed status
 * may lack manifest and chart: info's own `status` is enough then. */
static bool is_release(const cJSON *o)
{
	const cJSON *info = dec_json_get(o, "info");

	return dec_json_nonempty(dec_json_get(o, "name")) && cJSON_IsObject(info) &&
	       (cJSON_IsNumber(dec_json_get(o, "version")) || dec_json_get(o, "manifest") ||
		dec_json_get(o, "chart") ||
		dec_json_nonempty(dec_json_get(info, "status")));
}

static int helm_status(struct dec_ctx *d, const cJSON *rel)
{
	struct rt_record rec = *d->base;
	struct rt_revision *rev = dec_helm_revs_alloc(d, 1);

	if (!rev)
		return RT_ENOMEM;
	release_fill(d, rel, rev);
	rec.format = RT_FMT_HELM_STATUS;
	/* no revision: the record keeps its release and description */
	if (rev->revision <= 0)
		dec_count(d, &d->stats->helm_status_incomplete,
			  d->stats->first_incomplete);
	return dec_helm_emit_revs(d, &rec, rev, 1);
}

/* One element of a history or list array; false when it has no revision. */
static bool array_rev(struct dec_ctx *d, const cJSON *e, bool list,
		      struct rt_revision *rev)
{
	if ((rev->revision = helm_json_revision(dec_json_get(e, "revision"))) <= 0)
		return false;
	/* `helm list` prints "-" for an unset time: json_time gives 0. */
	rev->updated_ns = dec_json_time(d, dec_json_get(e, "updated"));
	rev->status = helm_json_status(d, dec_json_get(e, "status"));
	rev->chart = dec_json_str(d, dec_json_get(e, "chart"));
	rev->app_version = dec_json_str(d, dec_json_get(e, "app_version"));
	rev->description = dec_json_str(d, dec_json_get(e, "description"));
	if (list) {
		rev->release = dec_json_str(d, dec_json_get(e, "name"));
		rev->ns = dec_json_str(d, dec_json_get(e, "namespace"));
	} else {
		dec_helm_opts_release(d, rev);
	}
	return true;
}

/* `helm history -o json` (no names: the release comes from --release or
 * the correlator) or `helm list -o json` (a name per element). */
static int helm_array(struct dec_ctx *d, const cJSON *arr)
{
	struct rt_record rec = *d->base;
	const cJSON *first = cJSON_GetArrayItem(arr, 0), *e;
	int n = cJSON_GetArraySize(arr);
	struct rt_revision *revs;
	size_t k = 0;
	bool list;

	if (n == 0) {   /* `helm list` with no releases: nothing to say */
		d->stats->skipped++;
		return DEC_YES;
	}
	if (!cJSON_IsObject(first) || !dec_json_get(first, "revision"))
		return DEC_NO;
	list = dec_json_get(first, "name") != NULL;
	if (!(revs = dec_helm_revs_alloc(d, (size_t)n)))
		return RT_ENOMEM;
	cJSON_ArrayForEach(e, arr)
		if (cJSON_IsObject(e) && array_rev(d, e, list, &revs[k]))
			k++;
	if (!k)
		return DEC_NO;
	rec.format = list ? RT_FMT_HELM_LIST : RT_FMT_HELM_HISTORY;
	return dec_helm_emit_revs(d, &rec, revs, k);
}

/* "sh.helm.release.v1.<release>.v<N>": release and revision from a name. */
static bool storage_name(const char *name, struct rt_str *rel, int *rev)
{
	static const char pre[] = "sh.helm.release.v1.";
	const char *v;

	if (strncmp(name, pre, sizeof(pre) - 1) != 0)
		return false;
	name += sizeof(pre) - 1;
	if (!(v = strrchr(name, '.')) || v == name || v[1] != 'v')
		return false;
	*rel = rt_str_make(name, (size_t)(v - name));
	*rev = dec_helm_parse_int(v + 2, strlen(v + 2));
	return true;
}

/* 0 when obj is not Helm storage, 3 for Helm 3, 2 for Helm 2 (Tiller). */
static int storage_generation(const cJSON *obj)
{
	const cJSON *meta = dec_json_get(obj, "metadata");
	const cJSON *labels = dec_json_get(meta, "labels");
	const cJSON *name = dec_json_nonempty(dec_json_get(meta, "name"));
	struct rt_str rel;
	int rev;

	if (dec_json_is(dec_json_get(labels, "OWNER"), "TILLER"))
		return 2;
	if (dec_json_is(dec_json_get(labels, "owner"), "helm") &&
	    (dec_json_get(labels, "name") || dec_json_get(labels, "version")))
		return 3;
	return name && storage_name(name->valuestring, &rel, &rev) &&
	       (dec_json_is(dec_json_get(obj, "kind"), "Secret") ||
		dec_json_is(dec_json_get(obj, "kind"), "ConfigMap")) ? 3 : 0;
}

/* data.release of a Helm 3 object: fills what the labels do not say.
 * Returns the payload's last_deployed time (0 when none). */
static int64_t storage_payload(struct dec_ctx *d, const cJSON *obj,
			       struct rt_revision *rev)
{
	const cJSON *val = dec_json_nonempty(dec_json_get(dec_json_get(obj, "data"), "release"));
	struct rt_revision p = { 0 };
	bool dropped;
	cJSON *root;
	char *json;
	size_t len;

	if (!val)
		return 0;
	if (dec_helm_payload_unwrap(val->valuestring, strlen(val->valuestring),
				    &json, &len) != 0) {
		dec_count(d, &d->stats->helm_payload_fallback,
			  d->stats->first_fallback);
		return 0;
	}
	if (js_has_nul_escape(json, len)) {
		/* cJSON would cut a name at the NUL: the labels only */
		if (d->opts->verbose)
			fprintf(d->opts->verbose, "helm: %.*s: release payload "
				"with a \\u0000 (NUL) in a string not read\n",
				(int)rev->release.n, rev->release.p);
		dec_count(d, &d->stats->helm_payload_fallback,
			  d->stats->first_fallback);
		free(json);
		return 0;
	}
	root = dec_helm_payload_release(json, len, &dropped);
	if (dropped && d->opts->verbose)
		fprintf(d->opts->verbose, "helm: %.*s: release payload members "
			"over %zu MiB as a tree were left out\n",
			(int)rev->release.n, rev->release.p,
			DEC_HELM_TREE_MAX >> 20);
	/* Valid JSON that is not a release is as good as no payload. */
	if (!cJSON_IsObject(dec_json_get(root, "info")) &&
	    !cJSON_IsString(dec_json_get(root, "manifest"))) {
		dec_count(d, &d->stats->helm_payload_fallback,
			  d->stats->first_fallback);
		cJSON_Delete(root);
		free(json);
		return 0;
	}
	release_fill(d, root, &p);
	cJSON_Delete(root);
	free(json);
	if (!rev->ns.n)
		rev->ns = p.ns;
	if (!rev->release.n)
		rev->release = p.release;
	if (rev->revision <= 0)
		rev->revision = p.revision;
	if (!rev->status.n)
		rev->status = p.status;
	rev->chart = p.chart;
	rev->app_version = p.app_version;
	rev->description = p.description;
	rev->hook_configmaps = p.hook_configmaps;
	rev->manifest_objects = p.manifest_objects;
	rev->manifest_summary = p.manifest_summary;
	rev->evidence |= p.evidence | RT_REV_PAYLOAD;
	return p.updated_ns;
}

static int64_t label_time(struct dec_ctx *d, const cJSON *labels,
			  const char *k3, const char *k2)
{
	int64_t ns = dec_json_time(d, dec_json_get(labels, k3));

	return ns ? ns : dec_json_time(d, dec_json_get(labels, k2));
}

/*
 * A storage Secret/ConfigMap. Updated time: the payload's last_deployed
 * (what `helm history` prints as UPDATED), else createdAt, else
 * modifiedAt. modifiedAt is last: Helm moves it when a revision is later
 * superseded, which would date the revision long after it took effect.
 */
static int helm_storage(struct dec_ctx *d, const cJSON *obj, int gen)
{
	struct rt_record rec = *d->base;
	const cJSON *meta = dec_json_get(obj, "metadata");
	const cJSON *labels = dec_json_get(meta, "labels");
	const cJSON *oname = dec_json_nonempty(dec_json_get(meta, "name"));
	struct rt_revision *rev = dec_helm_revs_alloc(d, 1);
	struct rt_str nrel = RT_STR_NULL;
	int nrev = 0;
	int64_t deployed = 0;

	if (!rev)
		return RT_ENOMEM;
	if (oname)
		storage_name(oname->valuestring, &nrel, &nrev);
	rev->release = dec_json_str(d, dec_json_get(labels, gen == 2 ? "NAME" : "name"));
	if (!rev->release.n && nrel.n)
		rev->release = rt_arena_strdup(d->arena, nrel.p, nrel.n);
	rev->revision = helm_json_revision(dec_json_get(labels,
						gen == 2 ? "VERSION" : "version"));
	if (rev->revision <= 0)
		rev->revision = nrev;
	rev->status = helm_json_status(d, dec_json_get(labels,
					     gen == 2 ? "STATUS" : "status"));
	/* Tiller kept every release's record in its own namespace. */
	if (gen == 3) {
		rev->ns = dec_json_str(d, dec_json_get(meta, "namespace"));
		deployed = storage_payload(d, obj, rev);
	}
	rev->updated_ns = deployed ? deployed :
		gen == 2 ? label_time(d, labels, "CREATED_AT", "MODIFIED_AT") :
			   label_time(d, labels, "createdAt", "modifiedAt");
	rec.format = RT_FMT_HELM_STORAGE;
	rec.kind = dec_json_str(d, dec_json_get(obj, "kind"));
	rec.name = dec_json_str(d, oname);
	if (dec_json_nonempty(dec_json_get(meta, "namespace")))
		rec.ns = dec_json_str(d, dec_json_get(meta, "namespace"));
	return dec_helm_emit_revs(d, &rec, rev, 1);
}

int dec_helm_json(struct dec_ctx *d, const cJSON *root)
{
	int gen;

	if (cJSON_IsArray(root))
		return helm_array(d, root);
	if (!cJSON_IsObject(root))
		return DEC_NO;
	if ((gen = storage_generation(root)))
		return helm_storage(d, root, gen);
	if (is_release(root))
		return helm_status(d, root);
	return DEC_NO;
}
