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

/*
 * A string's value as far as its first NUL byte, a view (json_scan.h's
 * js_str); "" for anything else. The text reads as cJSON's C strings did,
 * a raw NUL byte of a payload included.
 */
static struct rt_str helm_view(struct dec_ctx *d, const struct js_node *it)
{
	struct rt_str s;
	const char *nul;

	if (!js_is(it, JS_STR))
		return RT_STR_LIT("");
	s = js_str(d->arena, it);
	if ((nul = memchr(s.p, '\0', s.n)))
		s.n = (size_t)(nul - s.p);
	return s;
}

/* helm_view copied into the arena, NUL-terminated: a revision outlives
 * the payload's text. */
static struct rt_str helm_str(struct dec_ctx *d, const struct js_node *it)
{
	struct rt_str v = helm_view(d, it), s;

	if (!v.n)
		return RT_STR_LIT("");
	s = rt_arena_strdup(d->arena, v.p, v.n);
	return s.p ? s : RT_STR_LIT("");
}

/* it when it is a string with a first character, else NULL. */
static const struct js_node *helm_nonempty(struct dec_ctx *d,
					   const struct js_node *it)
{
	return js_is(it, JS_STR) && helm_view(d, it).n ? it : NULL;
}

static bool helm_is(struct dec_ctx *d, const struct js_node *it,
		    const char *lit)
{
	return js_is(it, JS_STR) && rt_str_eq(helm_view(d, it), lit);
}

/* A time as rt_time_parse reads it; 0 for absent, empty or unparseable. */
static int64_t helm_time(struct dec_ctx *d, const struct js_node *it)
{
	struct rt_str s = helm_view(d, it);
	int64_t ns = 0;

	if (!s.n)
		return 0;
	return dec_time(d, rt_time_parse(s.p, s.n, &ns), &ns);
}

/* history says 3, list says "3". */
static int helm_json_revision(struct dec_ctx *d, const struct js_node *it)
{
	struct rt_str s;

	if (js_is(it, JS_NUM))
		return it->num >= 1 && it->num <= INT_MAX ? (int)it->num : 0;
	if (!js_is(it, JS_STR))
		return 0;
	s = helm_view(d, it);
	return dec_helm_parse_int(s.p, s.n);
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

static struct rt_str helm_json_status(struct dec_ctx *d,
				      const struct js_node *it)
{
	struct rt_str s = helm_view(d, it);

	if (!s.n)
		return RT_STR_NULL;
	return dec_helm_status_str(d, s.p, s.n);
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

/* A release's manifest member: present (of any type), and its text when
 * it is a string. */
struct helm_manifest {
	bool present;
	const char *text;       /* NUL-terminated, or NULL */
};

/*
 * A ConfigMap or Secret hook that Helm deletes before re-creating it on the
 * next run of its hook: before-hook-creation, explicitly or as the default
 * when no delete policy is set.
 */
static bool is_config_hook(struct dec_ctx *d, const struct js_doc *doc,
			   const struct js_node *h)
{
	const struct js_node *kind = js_get(doc, h, "kind");
	const struct js_node *pol = js_get(doc, h, "delete_policies");
	struct rt_str m = helm_view(d, js_get(doc, h, "manifest")), k;
	const char *v;
	size_t vn;

	if (helm_nonempty(d, kind)) {
		k = helm_view(d, kind);
		if (!is_config_kind(k.p, k.n))
			return false;
	} else if (!(v = yaml_value(m.p, m.p + m.n, "kind", true, &vn)) ||
		   !is_config_kind(v, vn)) {
		return false;
	}
	if (js_is(pol, JS_ARR) && pol->child) {
		for (uint32_t i = pol->child; i; i = doc->node[i].next)
			if (helm_is(d, &doc->node[i], "before-hook-creation"))
				return true;
		return false;
	}
	v = yaml_value(m.p, m.p + m.n, "helm.sh/hook-delete-policy", false,
		       &vn);
	return !v || vn == 0 || memmem(v, vn, "before-hook-creation", 20);
}

static void append_name(char *buf, size_t *len, struct rt_str name)
{
	if (!name.n || *len + name.n + 2 > HOOK_NAMES_MAX)
		return;
	if (*len)
		buf[(*len)++] = ',';
	memcpy(buf + *len, name.p, name.n);
	*len += name.n;
}

/* Hook and manifest evidence of a release; see the file comment. */
static void release_evidence(struct dec_ctx *d, const struct js_doc *doc,
			     const struct js_node *rel,
			     const struct helm_manifest *man,
			     struct rt_revision *rev)
{
	const struct js_node *hooks = js_get(doc, rel, "hooks");
	char names[HOOK_NAMES_MAX];
	size_t len = 0;

	if (!hooks && !man->present)
		return;
	rev->evidence |= RT_REV_PAYLOAD;
	for (uint32_t i = js_is(hooks, JS_ARR) ? hooks->child : 0; i;
	     i = doc->node[i].next) {
		if (!is_config_hook(d, doc, &doc->node[i]))
			continue;
		rev->evidence |= RT_REV_HOOK_CONFIG;
		append_name(names, &len,
			    helm_view(d, js_get(doc, &doc->node[i], "name")));
	}
	if (len)
		rev->hook_configmaps = rt_arena_strdup(d->arena, names, len);
	if (man->text) {
		rev->manifest_objects = dec_manifest_objects(d->arena,
							     man->text);
		rev->manifest_summary = dec_manifest_summary(d->arena,
							     man->text);
	}
	if ((rev->evidence & RT_REV_HOOK_CONFIG) && man->text &&
	    workload_without_checksum(man->text))
		rev->evidence |= RT_REV_NO_CHECKSUM;
}

/* "<name>-<version>", as `helm list` and `helm history` print the chart. */
static struct rt_str chart_string(struct dec_ctx *d, const struct js_doc *doc,
				  const struct js_node *meta)
{
	struct rt_str name = helm_view(d, js_get(doc, meta, "name"));
	struct rt_str ver = helm_view(d, js_get(doc, meta, "version"));
	char *p;

	if (!name.n)
		return RT_STR_NULL;
	if (!ver.n)
		return helm_str(d, js_get(doc, meta, "name"));
	if (!(p = rt_arena_alloc(d->arena, name.n + ver.n + 2)))
		return RT_STR_NULL;
	memcpy(p, name.p, name.n);
	p[name.n] = '-';
	memcpy(p + name.n + 1, ver.p, ver.n);
	p[name.n + 1 + ver.n] = '\0';
	return rt_str_make(p, name.n + 1 + ver.n);
}

/* A release object: helm status -o json, or a storage payload. */
static void release_fill(struct dec_ctx *d, const struct js_doc *doc,
			 const struct js_node *rel,
			 const struct helm_manifest *man,
			 struct rt_revision *rev)
{
	const struct js_node *info = js_get(doc, rel, "info");
	const struct js_node *meta = js_get(doc, js_get(doc, rel, "chart"),
					    "metadata");

	rev->release = helm_str(d, js_get(doc, rel, "name"));
	rev->ns = helm_str(d, js_get(doc, rel, "namespace"));
	rev->revision = helm_json_revision(d, js_get(doc, rel, "version"));
	rev->status = helm_json_status(d, js_get(doc, info, "status"));
	rev->description = helm_str(d, js_get(doc, info, "description"));
	/* Helm 3 writes zero times as "": helm_time reads that as unknown. */
	rev->updated_ns = helm_time(d, js_get(doc, info, "last_deployed"));
	if (!rev->updated_ns)
		rev->updated_ns = helm_time(d, js_get(doc, info,
						      "first_deployed"));
	rev->chart = chart_string(d, doc, meta);
	rev->app_version = helm_str(d, js_get(doc, meta, "appVersion"));
	release_evidence(d, doc, rel, man, rev);
}

/* A release: a name and an info, and one more thing only Helm writes
 * there. Go leaves out a zero `version` (omitempty), and a trimmed status
 * may lack manifest and chart: info's own `status` is enough then. */
static bool is_release(struct dec_ctx *d, const struct js_doc *doc,
		       const struct js_node *o)
{
	const struct js_node *info = js_get(doc, o, "info");

	return helm_nonempty(d, js_get(doc, o, "name")) &&
	       js_is(info, JS_OBJ) &&
	       (js_is(js_get(doc, o, "version"), JS_NUM) ||
		js_get(doc, o, "manifest") || js_get(doc, o, "chart") ||
		helm_nonempty(d, js_get(doc, info, "status")));
}

static int helm_status(struct dec_ctx *d, const struct js_doc *doc,
		       const struct js_node *rel)
{
	struct rt_record rec = *d->base;
	struct rt_revision *rev = dec_helm_revs_alloc(d, 1);
	const struct js_node *m = js_get(doc, rel, "manifest");
	struct helm_manifest man = { m != NULL, NULL };

	if (!rev)
		return RT_ENOMEM;
	if (js_is(m, JS_STR))
		man.text = helm_str(d, m).p;
	release_fill(d, doc, rel, &man, rev);
	rec.format = RT_FMT_HELM_STATUS;
	/* no revision: the record keeps its release and description */
	if (rev->revision <= 0)
		dec_count(d, &d->stats->helm_status_incomplete,
			  d->stats->first_incomplete);
	return dec_helm_emit_revs(d, &rec, rev, 1);
}

/* One element of a history or list array; false when it has no revision. */
static bool array_rev(struct dec_ctx *d, const struct js_doc *doc,
		      const struct js_node *e, bool list,
		      struct rt_revision *rev)
{
	rev->revision = helm_json_revision(d, js_get(doc, e, "revision"));
	if (rev->revision <= 0)
		return false;
	/* `helm list` prints "-" for an unset time: helm_time gives 0. */
	rev->updated_ns = helm_time(d, js_get(doc, e, "updated"));
	rev->status = helm_json_status(d, js_get(doc, e, "status"));
	rev->chart = helm_str(d, js_get(doc, e, "chart"));
	rev->app_version = helm_str(d, js_get(doc, e, "app_version"));
	rev->description = helm_str(d, js_get(doc, e, "description"));
	if (list) {
		rev->release = helm_str(d, js_get(doc, e, "name"));
		rev->ns = helm_str(d, js_get(doc, e, "namespace"));
	} else {
		dec_helm_opts_release(d, rev);
	}
	return true;
}

/* `helm history -o json` (no names: the release comes from --release or
 * the correlator) or `helm list -o json` (a name per element). */
static int helm_array(struct dec_ctx *d, const struct js_doc *doc,
		      const struct js_node *arr)
{
	struct rt_record rec = *d->base;
	const struct js_node *first = arr->child ? &doc->node[arr->child] :
				      NULL;
	struct rt_revision *revs;
	size_t n = 0, k = 0;
	bool list;

	for (uint32_t i = arr->child; i; i = doc->node[i].next)
		n++;
	if (n == 0) {   /* `helm list` with no releases: nothing to say */
		d->stats->skipped++;
		return DEC_YES;
	}
	if (!js_is(first, JS_OBJ) || !js_get(doc, first, "revision"))
		return DEC_NO;
	list = js_get(doc, first, "name") != NULL;
	if (!(revs = dec_helm_revs_alloc(d, n)))
		return RT_ENOMEM;
	for (uint32_t i = arr->child; i; i = doc->node[i].next)
		if (js_is(&doc->node[i], JS_OBJ) &&
		    array_rev(d, doc, &doc->node[i], list, &revs[k]))
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
static int storage_generation(struct dec_ctx *d, const struct js_doc *doc,
			      const struct js_node *obj)
{
	const struct js_node *meta = js_get(doc, obj, "metadata");
	const struct js_node *labels = js_get(doc, meta, "labels");
	const struct js_node *kind = js_get(doc, obj, "kind");
	struct rt_str name = helm_str(d, js_get(doc, meta, "name")), rel;
	int rev;

	if (helm_is(d, js_get(doc, labels, "OWNER"), "TILLER"))
		return 2;
	if (helm_is(d, js_get(doc, labels, "owner"), "helm") &&
	    (js_get(doc, labels, "name") || js_get(doc, labels, "version")))
		return 3;
	return name.n && storage_name(name.p, &rel, &rev) &&
	       (helm_is(d, kind, "Secret") || helm_is(d, kind, "ConfigMap")) ?
	       3 : 0;
}

/* The release JSON of a payload read: p filled from it, as a release. */
static bool payload_fill(struct dec_ctx *d, const struct rt_revision *rev,
			 char *json, size_t len, struct rt_revision *p)
{
	struct dec_helm_release r;
	struct helm_manifest man;
	const struct js_node *root;

	if (dec_helm_payload_release(json, len, &r) != 0)
		return false;
	if (r.dropped && d->opts->verbose)
		fprintf(d->opts->verbose, "helm: %.*s: release payload members "
			"over %zu MiB as a tree were left out\n",
			(int)rev->release.n, rev->release.p,
			DEC_HELM_TREE_MAX >> 20);
	root = &r.doc.node[0];
	man = (struct helm_manifest){ r.manifest != NULL, r.manifest };
	/* Valid JSON that is not a release is as good as no payload. */
	if (!js_is(js_get(&r.doc, root, "info"), JS_OBJ) && !man.text) {
		dec_helm_release_free(&r);
		return false;
	}
	release_fill(d, &r.doc, root, &man, p);
	dec_helm_release_free(&r);
	return true;
}

/* data.release of a Helm 3 object: fills what the labels do not say.
 * Returns the payload's last_deployed time (0 when none). */
static int64_t storage_payload(struct dec_ctx *d, const struct js_doc *doc,
			       const struct js_node *obj,
			       struct rt_revision *rev)
{
	struct rt_str val = helm_view(d, js_get(doc, js_get(doc, obj, "data"),
						"release"));
	struct rt_revision p = { 0 };
	char *json;
	size_t len;
	bool ok;

	if (!val.n)
		return 0;
	if (dec_helm_payload_unwrap(val.p, val.n, &json, &len) != 0) {
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
	ok = payload_fill(d, rev, json, len, &p);
	free(json);
	if (!ok) {
		dec_count(d, &d->stats->helm_payload_fallback,
			  d->stats->first_fallback);
		return 0;
	}
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

static int64_t label_time(struct dec_ctx *d, const struct js_doc *doc,
			  const struct js_node *labels, const char *k3,
			  const char *k2)
{
	int64_t ns = helm_time(d, js_get(doc, labels, k3));

	return ns ? ns : helm_time(d, js_get(doc, labels, k2));
}

/*
 * A storage Secret/ConfigMap. Updated time: the payload's last_deployed
 * (what `helm history` prints as UPDATED), else createdAt, else
 * modifiedAt. modifiedAt is last: Helm moves it when a revision is later
 * superseded, which would date the revision long after it took effect.
 */
static int helm_storage(struct dec_ctx *d, const struct js_doc *doc,
			const struct js_node *obj, int gen)
{
	struct rt_record rec = *d->base;
	const struct js_node *meta = js_get(doc, obj, "metadata");
	const struct js_node *labels = js_get(doc, meta, "labels");
	struct rt_str oname = helm_str(d, js_get(doc, meta, "name"));
	struct rt_revision *rev = dec_helm_revs_alloc(d, 1);
	struct rt_str nrel = RT_STR_NULL;
	int nrev = 0;
	int64_t deployed = 0;

	if (!rev)
		return RT_ENOMEM;
	if (oname.n)
		storage_name(oname.p, &nrel, &nrev);
	rev->release = helm_str(d, js_get(doc, labels,
					  gen == 2 ? "NAME" : "name"));
	if (!rev->release.n && nrel.n)
		rev->release = rt_arena_strdup(d->arena, nrel.p, nrel.n);
	rev->revision = helm_json_revision(d, js_get(doc, labels,
					gen == 2 ? "VERSION" : "version"));
	if (rev->revision <= 0)
		rev->revision = nrev;
	rev->status = helm_json_status(d, js_get(doc, labels,
					gen == 2 ? "STATUS" : "status"));
	/* Tiller kept every release's record in its own namespace. */
	if (gen == 3) {
		rev->ns = helm_str(d, js_get(doc, meta, "namespace"));
		deployed = storage_payload(d, doc, obj, rev);
	}
	rev->updated_ns = deployed ? deployed :
		gen == 2 ? label_time(d, doc, labels, "CREATED_AT", "MODIFIED_AT") :
			   label_time(d, doc, labels, "createdAt", "modifiedAt");
	rec.format = RT_FMT_HELM_STORAGE;
	rec.kind = helm_str(d, js_get(doc, obj, "kind"));
	rec.name = oname;
	if (helm_nonempty(d, js_get(doc, meta, "namespace")))
		rec.ns = helm_str(d, js_get(doc, meta, "namespace"));
	return dec_helm_emit_revs(d, &rec, rev, 1);
}

int dec_helm_json(struct dec_ctx *d, const struct js_doc *doc,
		  const struct js_node *root)
{
	int gen;

	if (js_is(root, JS_ARR))
		return helm_array(d, doc, root);
	if (!js_is(root, JS_OBJ))
		return DEC_NO;
	if ((gen = storage_generation(d, doc, root)))
		return helm_storage(d, doc, root, gen);
	if (is_release(d, doc, root))
		return helm_status(d, doc, root);
	return DEC_NO;
}
