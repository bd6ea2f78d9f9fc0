/*
 * dec_helm.c: Helm documents (FORMATS.md §3) as JSON: `helm history -o
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
 * The text forms come after: `helm history` and `helm list` tables, the
 * `helm install/upgrade/status` block, and helm/kubectl CLI lines.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

#define HOOK_NAMES_MAX 1024

/* A positive decimal of at most 9 digits, else 0. */
static int helm_parse_int(const char *p, size_t n)
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
		return helm_parse_int(it->valuestring, strlen(it->valuestring));
	return 0;
}

/* Status as Helm 3 writes it: lower case with hyphens, so Tiller's
 * "PENDING_UPGRADE" and a table's "deployed" compare equal. */
static struct rt_str helm_status_str(struct dec_ctx *d, const char *p,
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
	return helm_status_str(d, it->valuestring, strlen(it->valuestring));
}

static struct rt_revision *helm_revs_alloc(struct dec_ctx *d, size_t n)
{
	struct rt_revision *r = rt_arena_alloc(d->arena, n * sizeof(*r));

	if (r)
		memset(r, 0, n * sizeof(*r));
	return r;
}

static struct rt_str opt_str(struct dec_ctx *d, const char *s)
{
	return s && *s ? rt_arena_strdup(d->arena, s, strlen(s)) : RT_STR_NULL;
}

/* History inputs do not name their release: --release NS/NAME may. */
static void helm_opts_release(struct dec_ctx *d, struct rt_revision *rev)
{
	if (!d->opts)
		return;
	rev->ns = opt_str(d, d->opts->release_ns);
	rev->release = opt_str(d, d->opts->release_name);
}

/*
 * Fills the record-level fields from the revisions it states (time and
 * message from the newest; release, namespace and chart when there is only
 * one, or for a history, which is one release) and emits it. A single
 * revision without a number still names its release, but is not stated as
 * a revision (revs[] entries have revision > 0). Returns DEC_YES or the
 * emit error.
 */
static int helm_emit_revs(struct dec_ctx *d, struct rt_record *rec,
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
	rev->updated_ns = dec_json_time(dec_json_get(info, "last_deployed"));
	if (!rev->updated_ns)
		rev->updated_ns = dec_json_time(dec_json_get(info, "first_deployed"));
	rev->chart = chart_string(d, meta);
	rev->app_version = dec_json_str(d, dec_json_get(meta, "appVersion"));
	release_evidence(d, rel, rev);
}

static bool is_release(const cJSON *o)
{
	return dec_json_nonempty(dec_json_get(o, "name")) && cJSON_IsObject(dec_json_get(o, "info")) &&
	       (cJSON_IsNumber(dec_json_get(o, "version")) || dec_json_get(o, "manifest") ||
		dec_json_get(o, "chart"));
}

static int helm_status(struct dec_ctx *d, const cJSON *rel)
{
	struct rt_record rec = *d->base;
	struct rt_revision *rev = helm_revs_alloc(d, 1);

	if (!rev)
		return RT_ENOMEM;
	release_fill(d, rel, rev);
	rec.format = RT_FMT_HELM_STATUS;
	return helm_emit_revs(d, &rec, rev, 1);
}

/* One element of a history or list array; false when it has no revision. */
static bool array_rev(struct dec_ctx *d, const cJSON *e, bool list,
		      struct rt_revision *rev)
{
	if ((rev->revision = helm_json_revision(dec_json_get(e, "revision"))) <= 0)
		return false;
	/* `helm list` prints "-" for an unset time: json_time gives 0. */
	rev->updated_ns = dec_json_time(dec_json_get(e, "updated"));
	rev->status = helm_json_status(d, dec_json_get(e, "status"));
	rev->chart = dec_json_str(d, dec_json_get(e, "chart"));
	rev->app_version = dec_json_str(d, dec_json_get(e, "app_version"));
	rev->description = dec_json_str(d, dec_json_get(e, "description"));
	if (list) {
		rev->release = dec_json_str(d, dec_json_get(e, "name"));
		rev->ns = dec_json_str(d, dec_json_get(e, "namespace"));
	} else {
		helm_opts_release(d, rev);
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
	if (!(revs = helm_revs_alloc(d, (size_t)n)))
		return RT_ENOMEM;
	cJSON_ArrayForEach(e, arr)
		if (cJSON_IsObject(e) && array_rev(d, e, list, &revs[k]))
			k++;
	if (!k)
		return DEC_NO;
	rec.format = list ? RT_FMT_HELM_LIST : RT_FMT_HELM_HISTORY;
	return helm_emit_revs(d, &rec, revs, k);
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
	*rev = helm_parse_int(v + 2, strlen(v + 2));
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
	cJSON *root;
	char *json;
	size_t len;

	if (!val || dec_helm_payload_unwrap(val->valuestring,
					    strlen(val->valuestring),
					    &json, &len) != 0)
		return 0;
	root = cJSON_ParseWithLength(json, len);
	free(json);
	/* Valid JSON that is not a release is as good as no payload. */
	if (!cJSON_IsObject(dec_json_get(root, "info")) &&
	    !cJSON_IsString(dec_json_get(root, "manifest"))) {
		cJSON_Delete(root);
		return 0;
	}
	release_fill(d, root, &p);
	cJSON_Delete(root);
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
	rev->evidence |= p.evidence | RT_REV_PAYLOAD;
	return p.updated_ns;
}

static int64_t label_time(const cJSON *labels, const char *k3,
			  const char *k2)
{
	int64_t ns = dec_json_time(dec_json_get(labels, k3));

	return ns ? ns : dec_json_time(dec_json_get(labels, k2));
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
	struct rt_revision *rev = helm_revs_alloc(d, 1);
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
		gen == 2 ? label_time(labels, "CREATED_AT", "MODIFIED_AT") :
			   label_time(labels, "createdAt", "modifiedAt");
	rec.format = RT_FMT_HELM_STORAGE;
	rec.kind = dec_json_str(d, dec_json_get(obj, "kind"));
	rec.name = dec_json_str(d, oname);
	if (dec_json_nonempty(dec_json_get(meta, "namespace")))
		rec.ns = dec_json_str(d, dec_json_get(meta, "namespace"));
	return helm_emit_revs(d, &rec, rev, 1);
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

/*
 * Text forms. A table is recognised by its header, which fixes the column
 * order for the rows after it (Helm 4 may insert ROLLBACK; Helm 2's list
 * puts NAMESPACE last). Rows are read by TAB first, as Helm prints them;
 * without TABs (a copy from a terminal) by a best-effort token walk that
 * anchors UPDATED on the STATUS word after it, since UPDATED itself holds
 * single and double spaces ("Wed May  1 12:00:02 2024").
 */
enum {
	DEC_COL_NONE = -1,
	DEC_COL_REVISION,
	DEC_COL_UPDATED,
	DEC_COL_STATUS,
	DEC_COL_CHART,
	DEC_COL_APP_VERSION,
	DEC_COL_DESCRIPTION,
	DEC_COL_ROLLBACK,
	DEC_COL_NAME,
	DEC_COL_NAMESPACE,
	/* kubectl get events / describe */
	DEC_COL_LAST_SEEN,
	DEC_COL_FIRST_SEEN,
	DEC_COL_TYPE,
	DEC_COL_REASON,
	DEC_COL_OBJECT,
	DEC_COL_SUBOBJECT,
	DEC_COL_SOURCE,
	DEC_COL_MESSAGE,
	DEC_COL_COUNT,
	DEC_COL_KIND,
	DEC_COL_AGE,
	DEC_COL_FROM,
	DEC_COL_MAX
};

#define MAX_COLS ((int)sizeof(((struct dec_helm_state *)0)->col))
#define MAX_TOKENS 48

struct span {
	const char *p;
	size_t n;
};

struct row {
	struct span v[DEC_COL_MAX];
};

static bool span_is(struct span s, const char *lit)
{
	return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

/* Copies a value into a fixed state buffer, cut to fit. */
static void keep(char *dst, size_t cap, struct span v)
{
	size_t n = v.n < cap - 1 ? v.n : cap - 1;

	if (n)
		memcpy(dst, v.p, n);
	dst[n] = '\0';
}

static bool line_has(struct span s, const char *lit)
{
	return memmem(s.p, s.n, lit, strlen(lit)) != NULL;
}

static bool line_starts(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n >= n && memcmp(s.p, lit, n) == 0;
}

static struct span trim(const char *p, size_t n)
{
	while (n && isspace((unsigned char)*p)) {
		p++;
		n--;
	}
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	return (struct span){ p, n };
}

/* Splits on runs of spaces and TABs. Returns the number of tokens. */
static int tokenize(struct span s, struct span *tok, int max)
{
	const char *p = s.p, *e = s.p + s.n;
	int n = 0;

	while (p < e && n < max) {
		const char *t;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p == e)
			break;
		t = p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		tok[n++] = (struct span){ t, (size_t)(p - t) };
	}
	return n;
}

static bool is_status_word(struct span s)
{
	static const char *const words[] = {
		"unknown", "deployed", "uninstalled", "superseded", "failed",
		"uninstalling", "pending-install", "pending-upgrade",
		"pending-rollback", "deleted", "deleting", "pending_install",
		"pending_upgrade", "pending_rollback",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (s.n == strlen(words[i]) &&
		    strncasecmp(s.p, words[i], s.n) == 0)
			return true;
	return false;
}

/* A status cell from a TAB row: one word of letters, '-' and '_'. */
static bool is_status_cell(struct span s)
{
	if (!s.n || s.n > 31)
		return false;
	for (size_t i = 0; i < s.n; i++)
		if (!isalpha((unsigned char)s.p[i]) && s.p[i] != '-' &&
		    s.p[i] != '_')
			return false;
	return true;
}

static int header_col(struct span w, struct span next, int *used)
{
	static const struct {
		const char *name;
		int col;
	} cols[] = {
		{ "REVISION", DEC_COL_REVISION }, { "UPDATED", DEC_COL_UPDATED },
		{ "STATUS", DEC_COL_STATUS }, { "CHART", DEC_COL_CHART },
		{ "DESCRIPTION", DEC_COL_DESCRIPTION },
		{ "ROLLBACK", DEC_COL_ROLLBACK }, { "NAME", DEC_COL_NAME },
		{ "NAMESPACE", DEC_COL_NAMESPACE },
	};

	*used = 1;
	if (span_is(w, "APP") && span_is(next, "VERSION")) {
		*used = 2;
		return DEC_COL_APP_VERSION;
	}
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (span_is(w, cols[i].name))
			return cols[i].col;
	return DEC_COL_NONE;
}

static bool header_has(const struct dec_helm_state *st, int col)
{
	for (int i = 0; i < st->ncols; i++)
		if (st->col[i] == col)
			return true;
	return false;
}

/* A `helm history` or `helm list` header: sets st->table and columns. */
static bool table_header(struct dec_helm_state *st, const char *raw,
			 struct span line)
{
	struct span tok[MAX_COLS + 2];
	struct dec_helm_state h = { 0 };
	int n, used;

	if (*line.p != 'R' && *line.p != 'N')   /* REVISION or NAME */
		return false;
	if ((n = tokenize(line, tok, MAX_COLS + 2)) < 3)
		return false;
	for (int i = 0; i < n; i += used) {
		struct span next = i + 1 < n ? tok[i + 1] : (struct span){ 0 };

		if (h.ncols == MAX_COLS)
			return false;
		for (size_t k = 0; k < tok[i].n; k++)
			if (!isupper((unsigned char)tok[i].p[k]) &&
			    tok[i].p[k] != '_')
				return false;
		h.col[h.ncols++] = (signed char)header_col(tok[i], next, &used);
	}
	if (h.ncols < 3)
		return false;
	if (h.col[0] == DEC_COL_REVISION && header_has(&h, DEC_COL_UPDATED) &&
	    header_has(&h, DEC_COL_STATUS))
		h.table = DEC_TABLE_HISTORY;
	else if (h.col[0] == DEC_COL_NAME && header_has(&h, DEC_COL_REVISION) &&
		 header_has(&h, DEC_COL_STATUS))
		h.table = DEC_TABLE_LIST;
	else
		return false;
	st->table = h.table;
	st->ncols = h.ncols;
	memcpy(st->col, h.col, sizeof(st->col));
	st->indent = (int)(line.p - raw);
	st->tabbed = memchr(line.p, '\t', line.n) != NULL;
	st->desc_at = 0;
	for (int i = 0; i < n; i++)
		if (span_is(tok[i], "DESCRIPTION"))
			st->desc_at = (int)(tok[i].p - raw);
	st->rows = st->cont = 0;
	return true;
}

/* Cells joined by TAB, as Helm prints them; the last column takes any
 * TAB left over. */
static void row_by_tab(const struct dec_helm_state *st, struct span line,
		       struct row *r)
{
	const char *p = line.p, *e = line.p + line.n;

	for (int i = 0; i < st->ncols && p <= e; i++) {
		const char *tab = i + 1 < st->ncols ?
				  memchr(p, '\t', (size_t)(e - p)) : NULL;
		const char *ce = tab ? tab : e;

		if (st->col[i] != DEC_COL_NONE)
			r->v[(int)st->col[i]] = trim(p, (size_t)(ce - p));
		if (!tab)
			break;
		p = tab + 1;
	}
}

/* Words Helm starts a description with; an APP VERSION cell left empty
 * shows up as one of these when the row is split on spaces. */
static bool description_start(struct span w)
{
	static const char *const words[] = {
		"Install", "Upgrade", "Rollback", "Initial", "Preparing",
		"superseded", "Deletion", "Uninstallation", "Dry", "failed",
		"Release", "Rolled", "Upgraded",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (span_is(w, words[i]))
			return true;
	return false;
}

static bool all_digits(struct span s)
{
	for (size_t i = 0; i < s.n; i++)
		if (!isdigit((unsigned char)s.p[i]))
			return false;
	return s.n > 0;
}

/* Space-separated row: see the comment above the column enum. */
static bool row_by_words(const struct dec_helm_state *st, struct span line,
			 struct row *r)
{
	struct span tok[MAX_TOKENS];
	int n = tokenize(line, tok, MAX_TOKENS), t = 0;

	for (int i = 0; i < st->ncols && t < n; i++) {
		int c = st->col[i], s;
		bool last = i + 1 == st->ncols;

		if (c == DEC_COL_UPDATED) {
			for (s = t; s < n && !is_status_word(tok[s]); s++)
				;
			if (s == n || s == t)
				return false;
			r->v[c] = (struct span){ tok[t].p, (size_t)(tok[s - 1].p +
						 tok[s - 1].n - tok[t].p) };
			t = s;
		} else if (c == DEC_COL_DESCRIPTION && last) {
			r->v[c] = trim(tok[t].p, (size_t)(line.p + line.n - tok[t].p));
			t = n;
		} else if ((c == DEC_COL_APP_VERSION && !last &&
			    st->col[i + 1] == DEC_COL_DESCRIPTION &&
			    description_start(tok[t])) ||
			   (c == DEC_COL_ROLLBACK && !all_digits(tok[t]))) {
			continue;   /* an empty cell: nothing to consume */
		} else {
			if (c != DEC_COL_NONE)
				r->v[c] = tok[t];
			t++;
		}
	}
	return true;
}

static struct rt_str span_dup(struct dec_ctx *d, struct span s)
{
	return s.n ? rt_arena_strdup(d->arena, s.p, s.n) : RT_STR_NULL;
}

static int64_t span_time(struct span s)
{
	int64_t ns = 0;

	if (!s.n || rt_time_parse(s.p, s.n, &ns) != 0)
		return 0;
	return ns;
}

/* A table row -> one record; DEC_NO when the line is not a row. */
static int table_row(struct dec_ctx *d, const struct dec_helm_state *st,
		     struct span line)
{
	struct rt_record rec = *d->base;
	struct rt_revision *rev;
	struct row r = { 0 };
	bool tabbed = memchr(line.p, '\t', line.n) != NULL;
	bool list = st->table == DEC_TABLE_LIST;
	int revision;

	if (tabbed)
		row_by_tab(st, line, &r);
	else if (!row_by_words(st, line, &r))
		return DEC_NO;
	revision = helm_parse_int(r.v[DEC_COL_REVISION].p,
				  r.v[DEC_COL_REVISION].n);
	if (revision <= 0 || (list && !r.v[DEC_COL_NAME].n) ||
	    !(tabbed ? is_status_cell : is_status_word)(r.v[DEC_COL_STATUS]))
		return DEC_NO;
	if (!(rev = helm_revs_alloc(d, 1)))
		return RT_ENOMEM;
	rev->revision = revision;
	rev->updated_ns = span_time(r.v[DEC_COL_UPDATED]);
	rev->status = helm_status_str(d, r.v[DEC_COL_STATUS].p,
				      r.v[DEC_COL_STATUS].n);
	rev->chart = span_dup(d, r.v[DEC_COL_CHART]);
	rev->app_version = span_dup(d, r.v[DEC_COL_APP_VERSION]);
	rev->description = span_dup(d, r.v[DEC_COL_DESCRIPTION]);
	if (list) {
		rev->release = span_dup(d, r.v[DEC_COL_NAME]);
		rev->ns = span_dup(d, r.v[DEC_COL_NAMESPACE]);
	} else {
		helm_opts_release(d, rev);
		if (!rev->release.n && st->cmd_release[0]) {
			rev->release = opt_str(d, st->cmd_release);
			rev->ns = opt_str(d, st->cmd_ns);
		}
	}
	rec.format = list ? RT_FMT_HELM_LIST : RT_FMT_HELM_HISTORY;
	return helm_emit_revs(d, &rec, rev, 1);
}

/*
 * kubectl event tables (FORMATS.md §1.4): `kubectl get events` (-A adds
 * NAMESPACE, -o wide adds SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME) and
 * the Events: section of `kubectl describe`. kubectl aligns them with
 * tabwriter, so cells are cut at the header's column offsets; a copy whose
 * spaces were collapsed is read word by word when MESSAGE is last. Ages are
 * relative, so the rows carry no time of their own.
 */
static int kube_header_col(struct span w, struct span next, int *used)
{
	static const struct {
		const char *name;
		int col;
	} one[] = {
		{ "NAMESPACE", DEC_COL_NAMESPACE }, { "TYPE", DEC_COL_TYPE },
		{ "REASON", DEC_COL_REASON }, { "OBJECT", DEC_COL_OBJECT },
		{ "SUBOBJECT", DEC_COL_SUBOBJECT }, { "SOURCE", DEC_COL_SOURCE },
		{ "MESSAGE", DEC_COL_MESSAGE }, { "COUNT", DEC_COL_COUNT },
		{ "NAME", DEC_COL_NAME }, { "KIND", DEC_COL_KIND },
		{ "LASTSEEN", DEC_COL_LAST_SEEN },
		{ "FIRSTSEEN", DEC_COL_FIRST_SEEN },
		{ "Type", DEC_COL_TYPE }, { "Reason", DEC_COL_REASON },
		{ "Age", DEC_COL_AGE }, { "From", DEC_COL_FROM },
		{ "Message", DEC_COL_MESSAGE },
	};

	*used = 1;
	if (span_is(next, "SEEN") && (span_is(w, "LAST") || span_is(w, "FIRST"))) {
		*used = 2;
		return w.p[0] == 'L' ? DEC_COL_LAST_SEEN : DEC_COL_FIRST_SEEN;
	}
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
		if (span_is(w, one[i].name))
			return one[i].col;
	return DEC_COL_NONE;
}

static bool kube_header(struct dec_helm_state *st, const char *raw,
			struct span line)
{
	struct span tok[MAX_COLS + 4];
	struct dec_helm_state h = { 0 };
	int n, used, unknown = 0;

	if (!strchr("LNFTK", *line.p))
		return false;
	n = tokenize(line, tok, MAX_COLS + 4);
	for (int i = 0; i < n; i += used) {
		struct span next = i + 1 < n ? tok[i + 1] : (struct span){ 0 };

		if (h.ncols == MAX_COLS)
			return false;
		h.at[h.ncols] = (short)(tok[i].p - raw);
		h.col[h.ncols] = (signed char)kube_header_col(tok[i], next, &used);
		unknown += h.col[h.ncols++] == DEC_COL_NONE;
	}
	if (unknown || !header_has(&h, DEC_COL_TYPE) ||
	    !header_has(&h, DEC_COL_REASON) || !header_has(&h, DEC_COL_MESSAGE))
		return false;
	if (header_has(&h, DEC_COL_AGE) && header_has(&h, DEC_COL_FROM))
		h.table = DEC_TABLE_DESCRIBE;
	else if (header_has(&h, DEC_COL_OBJECT) || header_has(&h, DEC_COL_KIND))
		h.table = DEC_TABLE_EVENTS;
	else
		return false;
	st->table = h.table;
	st->ncols = h.ncols;
	memcpy(st->col, h.col, sizeof(st->col));
	memcpy(st->at, h.at, sizeof(st->at));
	st->indent = (int)(line.p - raw);
	st->tabbed = 0;
	st->rows = st->cont = 0;
	return true;
}

/* Cells at the header's offsets; the last runs to the end of the line. */
static void row_by_offsets(const struct dec_helm_state *st, const char *raw,
			   struct span line, struct row *r)
{
	size_t len = (size_t)(line.p + line.n - raw);

	for (int i = 0; i < st->ncols; i++) {
		size_t a = (size_t)st->at[i];
		size_t b = i + 1 < st->ncols ? (size_t)st->at[i + 1] : len;

		if (b > len)
			b = len;
		if (st->col[i] != DEC_COL_NONE && a < b)
			r->v[(int)st->col[i]] = trim(raw + a, b - a);
	}
}

/* Word by word, MESSAGE last: Age may be "2m (x3 over 5m)", From may be
 * "kubelet, node-1". */
static bool row_by_words_kube(const struct dec_helm_state *st,
			      struct span line, struct row *r)
{
	struct span tok[MAX_TOKENS];
	int n = tokenize(line, tok, MAX_TOKENS), t = 0;

	if (st->col[st->ncols - 1] != DEC_COL_MESSAGE)
		return false;
	for (int i = 0; i < st->ncols && t < n; i++) {
		int c = st->col[i], s = t;

		if (c == DEC_COL_MESSAGE) {
			r->v[c] = trim(tok[t].p, (size_t)(line.p + line.n - tok[t].p));
			return true;
		}
		if (c == DEC_COL_SUBOBJECT || c == DEC_COL_SOURCE)
			return false;   /* may be empty: words cannot tell */
		if (c == DEC_COL_AGE && t + 1 < n && line_starts(tok[t + 1], "(x"))
			for (s = t + 1; s + 1 < n && tok[s].p[tok[s].n - 1] != ')'; s++)
				;
		if (c == DEC_COL_FROM)
			while (s + 1 < n && tok[s].p[tok[s].n - 1] == ',')
				s++;
		r->v[c] = (struct span){ tok[t].p, (size_t)(tok[s].p + tok[s].n - tok[t].p) };
		t = s + 1;
	}
	return false;
}

static bool is_event_type(struct span s)
{
	if (s.n < 2 || s.n > 16 || !isupper((unsigned char)s.p[0]))
		return false;
	for (size_t i = 1; i < s.n; i++)
		if (!islower((unsigned char)s.p[i]))
			return false;
	return true;
}

static bool kube_row_valid(const struct dec_helm_state *st,
			   const struct row *r)
{
	struct span obj = r->v[DEC_COL_OBJECT], reason = r->v[DEC_COL_REASON];

	if (!is_event_type(r->v[DEC_COL_TYPE]) || !reason.n ||
	    memchr(reason.p, ' ', reason.n))
		return false;
	return st->table != DEC_TABLE_EVENTS || header_has(st, DEC_COL_KIND) ||
	       (obj.n > 2 && memchr(obj.p, '/', obj.n) && !memchr(obj.p, ' ', obj.n));
}

/* "pod" -> "Pod", "replicaset.apps" -> "ReplicaSet". */
static struct rt_str kind_of(struct dec_ctx *d, struct span res)
{
	static const char *const kinds[] = {
		"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet",
		"Job", "CronJob", "Node", "Service", "ConfigMap", "Secret",
		"PersistentVolumeClaim", "PersistentVolume", "Ingress",
		"HorizontalPodAutoscaler", "HelmChart", "Endpoints", "Namespace",
		"ServiceAccount", "PodDisruptionBudget", "Event",
	};
	const char *dot = res.n ? memchr(res.p, '.', res.n) : NULL;
	struct rt_str k;

	if (dot)
		res.n = (size_t)(dot - res.p);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (res.n == strlen(kinds[i]) &&
		    strncasecmp(res.p, kinds[i], res.n) == 0)
			return rt_str_make(kinds[i], res.n);
	k = span_dup(d, res);
	if (k.n)
		((char *)k.p)[0] = (char)toupper((unsigned char)k.p[0]);
	return k;
}

/* "spec.containers{web}" -> "web" (the same rule as dec_kube.c). */
static struct rt_str subobject_container(struct rt_str fp)
{
	const char *open = fp.n ? memchr(fp.p, '{', fp.n) : NULL;
	const char *close = open ? memchr(open, '}', fp.n - (size_t)(open - fp.p))
				 : NULL;

	if (!close || close == open + 1 || !rt_str_has_prefix(fp, "spec.") ||
	    !memmem(fp.p, (size_t)(open - fp.p), "ontainers", 9))
		return RT_STR_NULL;
	return rt_str_make(open + 1, (size_t)(close - open - 1));
}

/* "kubelet, node-1" -> component kubelet, host node-1. */
static void source_split(struct dec_ctx *d, struct rt_record *rec,
			 struct span src)
{
	const char *comma = src.n ? memchr(src.p, ',', src.n) : NULL;

	if (!comma) {
		rec->component = span_dup(d, src);
		return;
	}
	rec->component = span_dup(d, trim(src.p, (size_t)(comma - src.p)));
	rec->host = span_dup(d, trim(comma + 1,
				     (size_t)(src.p + src.n - comma - 1)));
}

/* "2m (x3 over 5m)" -> 3; else 0. */
static int64_t age_count(struct span age)
{
	const char *x = age.n ? memmem(age.p, age.n, "(x", 2) : NULL;
	size_t n = 0;

	if (!x)
		return 0;
	x += 2;
	while (x + n < age.p + age.n && isdigit((unsigned char)x[n]))
		n++;
	return helm_parse_int(x, n);
}

static int kube_row_emit(struct dec_ctx *d, const struct dec_helm_state *st,
			 const struct row *r)
{
	struct rt_record rec = *d->base;
	struct span obj = r->v[DEC_COL_OBJECT];
	const char *slash = obj.n ? memchr(obj.p, '/', obj.n) : NULL;
	bool old_style = header_has(st, DEC_COL_KIND);
	int64_t count;
	int rc;

	rec.format = RT_FMT_K8S_EVENT;
	if (r->v[DEC_COL_NAMESPACE].n)
		rec.ns = span_dup(d, r->v[DEC_COL_NAMESPACE]);
	else if (st->table == DEC_TABLE_DESCRIBE && st->obj_ns[0])
		rec.ns = opt_str(d, st->obj_ns);
	if (slash) {
		rec.kind = kind_of(d, (struct span){ obj.p, (size_t)(slash - obj.p) });
		rec.name = span_dup(d, (struct span){ slash + 1,
			(size_t)(obj.p + obj.n - slash - 1) });
	} else if (old_style) {
		rec.kind = kind_of(d, r->v[DEC_COL_KIND]);
		rec.name = span_dup(d, r->v[DEC_COL_NAME]);
	} else if (st->table == DEC_TABLE_DESCRIBE && st->obj_name[0]) {
		rec.name = opt_str(d, st->obj_name);
		rec.kind = st->obj_pod ? RT_STR_LIT("Pod") : RT_STR_NULL;
	}
	rec.pod = rt_str_eq(rec.kind, "Pod") ? rec.name : RT_STR_NULL;
	rec.field_path = span_dup(d, r->v[DEC_COL_SUBOBJECT]);
	rec.container = subobject_container(rec.field_path);
	rec.type = span_dup(d, r->v[DEC_COL_TYPE]);
	rec.reason = span_dup(d, r->v[DEC_COL_REASON]);
	rec.message = span_dup(d, r->v[DEC_COL_MESSAGE]);
	if (rt_str_has_prefix(rec.message, "(combined from similar events): ")) {
		rec.message.p += 32;
		rec.message.n -= 32;
	}
	source_split(d, &rec, r->v[DEC_COL_SOURCE].n ? r->v[DEC_COL_SOURCE]
						      : r->v[DEC_COL_FROM]);
	count = helm_parse_int(r->v[DEC_COL_COUNT].p, r->v[DEC_COL_COUNT].n);
	if (!count)
		count = age_count(r->v[DEC_COL_AGE]);
	rec.count = count > 0 ? count : 1;
	if (!old_style && r->v[DEC_COL_NAME].n && rec.ns.n) {
		/* wide NAME is the event's own name: its identity */
		size_t n = rec.ns.n + 1 + r->v[DEC_COL_NAME].n;
		char *p = rt_arena_alloc(d->arena, n + 1);

		if (p) {
			memcpy(p, rec.ns.p, rec.ns.n);
			p[rec.ns.n] = '/';
			memcpy(p + rec.ns.n + 1, r->v[DEC_COL_NAME].p,
			       r->v[DEC_COL_NAME].n);
			p[n] = '\0';
			rec.uid = rt_str_make(p, n);
		}
	}
	rec.revs = NULL;
	rec.nrevs = 0;
	if ((rc = dec_emit(d, &rec)) != 0)
		return rc;
	return DEC_YES;
}

static int kube_table_line(struct dec_ctx *d, struct dec_helm_state *st,
			   const char *raw, struct span line)
{
	struct row r = { 0 };

	if (st->table == DEC_TABLE_DESCRIBE && !st->rows &&
	    line_starts(line, "----"))
		return DEC_YES;   /* the dashes under the describe header */
	row_by_offsets(st, raw, line, &r);
	if (!kube_row_valid(st, &r)) {
		memset(&r, 0, sizeof(r));
		if (!row_by_words_kube(st, line, &r) || !kube_row_valid(st, &r))
			return DEC_NO;
	}
	return kube_row_emit(d, st, &r);
}

/* `kubectl describe` header lines at column 0 name the object whose
 * Events: section follows. Observed only: the lines stay plain text. */
static void describe_observe(struct dec_helm_state *st, const char *raw,
			     struct span s)
{
	if (s.p != raw)
		return;
	if (line_starts(s, "Name:") && s.n > 5) {
		keep(st->obj_name, sizeof(st->obj_name), trim(s.p + 5, s.n - 5));
		st->obj_ns[0] = '\0';
		st->obj_pod = 0;
	} else if (line_starts(s, "Namespace:") && s.n > 10) {
		keep(st->obj_ns, sizeof(st->obj_ns), trim(s.p + 10, s.n - 10));
	} else if (line_starts(s, "Node:") || line_starts(s, "Containers:")) {
		st->obj_pod = 1;
	}
}

#define MAX_CONTINUATION 16

static int col_index(const struct dec_helm_state *st, int col)
{
	for (int i = 0; i < st->ncols; i++)
		if (st->col[i] == col)
			return i;
	return -1;
}

/*
 * The rest of the previous row's multi-line description: every cell before
 * DESCRIPTION blank (TAB form), or blank up to the DESCRIPTION column (the
 * same table copied from a terminal). Strict on purpose, because the
 * framer drops blank lines, so an indented line long after a table must
 * not be swallowed as a continuation.
 */
static bool continuation(const struct dec_helm_state *st, const char *raw,
			 struct span s)
{
	int di = col_index(st, DEC_COL_DESCRIPTION);
	const char *p = raw, *e = s.p + s.n, *tab;

	if (st->table != DEC_TABLE_HISTORY || di < 0 || !st->rows ||
	    st->cont >= MAX_CONTINUATION)
		return false;
	if (memchr(raw, '\t', (size_t)(e - raw))) {
		for (int i = 0; i < di; i++) {
			if (!(tab = memchr(p, '\t', (size_t)(e - p))) ||
			    trim(p, (size_t)(tab - p)).n)
				return false;
			p = tab + 1;
		}
		return trim(p, (size_t)(e - p)).n > 0;
	}
	return !st->tabbed && s.p - raw > st->indent &&
	       s.p - raw >= st->desc_at - 1;
}

/*
 * Inside a table: a row, a continuation of the previous row's description
 * (consumed, no record), or the end of the table (DEC_NO, and the line is
 * read afresh).
 */
static int table_line(struct dec_ctx *d, struct dec_helm_state *st,
		      const char *raw, struct span line)
{
	int rc;

	if (continuation(st, raw, line)) {
		st->cont++;
		return DEC_YES;
	}
	if (st->table >= DEC_TABLE_EVENTS)
		rc = kube_table_line(d, st, raw, line);
	else
		rc = table_row(d, st, line);
	if (rc != DEC_NO) {
		st->rows++;
		st->cont = 0;
		return rc;
	}
	st->table = DEC_TABLE_NONE;
	st->cmd_release[0] = st->cmd_ns[0] = '\0';
	return DEC_NO;
}


static void block_reset(struct dec_helm_state *st)
{
	st->name[0] = st->ns[0] = st->status[0] = st->when[0] = '\0';
	st->revision = 0;
}

/* The block is complete at REVISION: one RT_FMT_HELM_STATUS record. */
static int block_emit(struct dec_ctx *d, struct dec_helm_state *st)
{
	struct rt_record rec = *d->base;
	struct rt_revision *rev = helm_revs_alloc(d, 1);

	if (!rev)
		return RT_ENOMEM;
	rev->release = opt_str(d, st->name);
	rev->ns = opt_str(d, st->ns);
	rev->revision = st->revision;
	rev->status = helm_status_str(d, st->status, strlen(st->status));
	rev->updated_ns = span_time((struct span){ st->when,
						   strlen(st->when) });
	rec.format = RT_FMT_HELM_STATUS;
	block_reset(st);
	return helm_emit_revs(d, &rec, rev, 1);
}

/* `NAME: web`, `LAST DEPLOYED: ...`, `NAMESPACE:`, `STATUS:`, `REVISION:`
 * as helm install/upgrade/status print them. */
static int status_block(struct dec_ctx *d, struct dec_helm_state *st,
			struct span line)
{
	static const char *const keys[] = {
		"NAME:", "LAST DEPLOYED:", "NAMESPACE:", "STATUS:", "REVISION:",
	};
	size_t k, kl = 0;
	struct span v;

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		kl = strlen(keys[k]);
		if (line.n > kl && memcmp(line.p, keys[k], kl) == 0)
			break;
	}
	if (k == sizeof(keys) / sizeof(keys[0]))
		return DEC_NO;
	v = trim(line.p + kl, line.n - kl);
	if (!v.n || (k > 0 && !st->name[0]))
		return DEC_NO;
	switch (k) {
	case 0:
		block_reset(st);
		keep(st->name, sizeof(st->name), v);
		return DEC_YES;
	case 1:
		keep(st->when, sizeof(st->when), v);
		return DEC_YES;
	case 2:
		keep(st->ns, sizeof(st->ns), v);
		return DEC_YES;
	case 3:
		keep(st->status, sizeof(st->status), v);
		return DEC_YES;
	default:
		if ((st->revision = helm_parse_int(v.p, v.n)) <= 0)
			return DEC_NO;
		return block_emit(d, st);
	}
}

/*
 * Helm and kubectl CLI lines. Only lines that are clearly CLI output are
 * claimed (an app's own "Error: ..." stays plain text); the record carries
 * the line as its message and, when the line names it, the release.
 */
static const char *const helm_error_marks[] = {
	"INSTALLATION FAILED", "UPGRADE FAILED", "ROLLBACK FAILED",
	"UNINSTALLATION FAILED", "cannot re-use a name", "cannot reuse a name",
	"another operation (install/upgrade/rollback)",
	"has no deployed releases", "release: not found",
	"Kubernetes cluster unreachable", "rendered manifests contain",
	"nable to continue with install", "invalid ownership metadata",
	"failed pre-install", "failed post-install", "hooks failed",
	"timed out waiting for the condition", "context deadline exceeded",
	"has been rolled back", "Release not loaded", "release ", "Release ",
	"chart ", "helm", "YAML parse error", "execution error at",
	"unable to build kubernetes objects", "resource mapping not found",
};

static bool is_release_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* A plausible release name: DNS-ish, at most 63 characters. */
static struct span release_span(const char *p, const char *e)
{
	const char *q = p;

	while (q < e && is_release_char(*q))
		q++;
	if (q == p || q - p > 63)
		return (struct span){ 0 };
	return (struct span){ p, (size_t)(q - p) };
}

/* `<marker>X"` anywhere in the line: X. */
static struct span quoted_after(struct span s, const char *marker)
{
	const char *m = memmem(s.p, s.n, marker, strlen(marker));
	const char *e = s.p + s.n, *v, *q;

	if (!m)
		return (struct span){ 0 };
	v = m + strlen(marker);
	q = memchr(v, '"', (size_t)(e - v));
	if (!q)
		return (struct span){ 0 };
	struct span r = release_span(v, q);
	return r.n == (size_t)(q - v) ? r : (struct span){ 0 };
}

/* The release a helm error or success line names, if any. */
static struct span named_release(struct span s)
{
	static const char *const quoted[] = {
		"Release \"", "release \"", "Upgrade \"", "Rollback \"",
		"Install \"", "Uninstall \"", "upgrade \"",
	};
	static const char *const plain[] = {
		"release ", "Release not loaded: ",
	};
	struct span r = { 0 };
	const char *m;

	for (size_t i = 0; i < sizeof(quoted) / sizeof(quoted[0]) && !r.n; i++)
		r = quoted_after(s, quoted[i]);
	if (r.n)
		return r;
	/* `"X" has no deployed releases` */
	if ((m = memmem(s.p, s.n, "\" has no deployed releases", 26))) {
		const char *q = m;

		while (q > s.p && q[-1] != '"')
			q--;
		if (q > s.p && (r = release_span(q, m)).n == (size_t)(m - q))
			return r;
	}
	/* `release X failed, and has been rolled back`, `Release not loaded:
	 * X: release: not found` */
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		const char *v;

		if (!(m = memmem(s.p, s.n, plain[i], strlen(plain[i]))))
			continue;
		v = m + strlen(plain[i]);
		r = release_span(v, s.p + s.n);
		if (r.n && (line_starts((struct span){ v + r.n,
				(size_t)(s.p + s.n - v - r.n) }, " failed") ||
			    i == 1))
			return r;
	}
	return (struct span){ 0 };
}

/* helm flags that take the next word as their value. */
static bool flag_takes_value(struct span f)
{
	static const char *const flags[] = {
		"-n", "-f", "-o", "-l", "-m", "--namespace", "--values", "--set",
		"--set-string", "--set-file", "--set-json", "--set-literal",
		"--version", "--timeout", "--repo", "--description",
		"--kube-context", "--kubeconfig", "--post-renderer",
		"--post-renderer-args", "--username", "--password", "--ca-file",
		"--cert-file", "--key-file", "--history-max", "--max", "--output",
		"--labels", "--kube-apiserver", "--kube-as-user",
		"--kube-as-group", "--kube-token", "--kube-ca-file",
		"--registry-config", "--repository-cache", "--repository-config",
		"--burst-limit", "--qps", "--filter", "--selector",
		"--name-template", "--keyring", "--revision", "--driver",
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (span_is(f, flags[i]))
			return true;
	return false;
}

static struct span unquote(struct span t)
{
	if (t.n >= 2 && (t.p[0] == '\'' || t.p[0] == '"') &&
	    t.p[t.n - 1] == t.p[0])
		return (struct span){ t.p + 1, t.n - 2 };
	return t;
}

static bool is_helm_binary(struct span t)
{
	const char *slash = memrchr(t.p, '/', t.n);

	if (slash) {
		t.n -= (size_t)(slash + 1 - t.p);
		t.p = slash + 1;
	}
	/* helm, helm3, helm_v3 (klipper-helm), helm.exe */
	return line_starts(t, "helm") &&
	       (t.n == 4 || t.p[4] == '_' || t.p[4] == '.' ||
		isdigit((unsigned char)t.p[4]));
}

static bool names_release(struct span cmd)
{
	static const char *const cmds[] = {
		"install", "upgrade", "rollback", "uninstall", "delete", "del",
		"un", "status", "history", "hist", "test", "mapkubeapis",
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (span_is(cmd, cmds[i]))
			return true;
	return false;
}

/*
 * A helm command line: `+ helm_v3 upgrade --namespace x web chart` as
 * klipper-helm traces it with set -x, or `$ helm install web ./chart` as
 * pasted from a terminal. The release is the first positional argument
 * after the subcommand (after `get <what>` for helm get).
 */
static bool helm_command(struct span s, struct span *rel, struct span *ns,
			 struct span *cmdp)
{
	struct span tok[MAX_TOKENS], cmd = { 0 };
	int n, i = 0, skip_pos = 0;
	bool generated = false, seen_pos = false;

	while (s.n && (*s.p == '+' || *s.p == ' ' || *s.p == '$')) {
		s.p++;
		s.n--;
	}
	/* Most lines are not helm commands: look at the first word first. */
	if (tokenize(s, tok, 1) != 1 || !is_helm_binary(tok[0]))
		return false;
	if ((n = tokenize(s, tok, MAX_TOKENS)) < 2)
		return false;
	for (i = 1; i < n; i++) {
		struct span t = tok[i];

		if (t.p[0] == '-') {
			const char *eq = memchr(t.p, '=', t.n);

			if (span_is(t, "--generate-name") || span_is(t, "-g"))
				generated = true;
			if (eq && line_starts(t, "--namespace="))
				*ns = unquote((struct span){ eq + 1,
					(size_t)(t.p + t.n - eq - 1) });
			if (!eq && flag_takes_value(t) && i + 1 < n) {
				if (span_is(t, "-n") || span_is(t, "--namespace"))
					*ns = unquote(tok[i + 1]);
				i++;
			}
			continue;
		}
		if (!cmd.n) {
			cmd = t;
			skip_pos = span_is(t, "get") ? 1 : 0;
			continue;
		}
		if (skip_pos) {
			skip_pos--;
			continue;
		}
		/* Only the first positional; flags after it still count. */
		if (!seen_pos && (names_release(cmd) || span_is(cmd, "get")))
			*rel = unquote(t);
		seen_pos = true;
	}
	if (generated)
		*rel = (struct span){ 0 };
	if (rel->n && release_span(rel->p, rel->p + rel->n).n != rel->n)
		*rel = (struct span){ 0 };
	*cmdp = cmd;
	return true;
}

/* klipper-helm job script lines: `Upgrading web`, `Already installed web`. */
static bool klipper_line(struct span s, struct span *rel)
{
	static const char *const pre[] = {
		"Upgrading ", "Installing ", "Uninstalling ", "Already installed ",
		"Retrying upgrade of ", "Deleting ",
	};
	static const char *const whole[] = {
		"Previous helm job was interrupted", "Release status is '",
	};

	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		if (line_starts(s, whole[i]))
			return true;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t pl = strlen(pre[i]);
		struct span r;

		if (!line_starts(s, pre[i]))
			continue;
		r = release_span(s.p + pl, s.p + s.n);
		if (r.n && r.n == s.n - pl) {
			*rel = r;
			return true;
		}
	}
	return false;
}

/* `upgrade.go:144: [debug] ...` and friends from helm --debug. */
static bool helm_debug_line(struct span s)
{
	const char *m = memmem(s.p, s.n, ".go:", 4);

	return m && m - s.p < 40 && line_has(s, ": [debug] ");
}

/* A helm or kubectl CLI line: true, with the release it names if any. */
static bool cli_line(struct dec_helm_state *st, struct span s,
		     struct span *rel, struct span *ns)
{
	struct span cmd = { 0 };

	if (line_starts(s, "Error: ")) {
		for (size_t i = 0; i < sizeof(helm_error_marks) /
				       sizeof(helm_error_marks[0]); i++)
			if (line_has(s, helm_error_marks[i]))
				goto named;
		return false;
	}
	if (line_starts(s, "Error from server") || line_has(s, "Happy Helming!") ||
	    line_starts(s, "Release \"") || line_starts(s, "release \"") ||
	    line_starts(s, "Rollback was a success") || helm_debug_line(s))
		goto named;
	if (klipper_line(s, rel))
		return true;
	if (!helm_command(s, rel, ns, &cmd))
		return false;
	/* `$ helm history web -n prod` names the table that follows it. */
	keep(st->cmd_release, sizeof(st->cmd_release),
	     span_is(cmd, "history") || span_is(cmd, "hist") ?
	     *rel : (struct span){ "", 0 });
	keep(st->cmd_ns, sizeof(st->cmd_ns), st->cmd_release[0] ?
	     *ns : (struct span){ "", 0 });
	return true;
named:
	*rel = named_release(s);
	return true;
}

static int cli_emit(struct dec_ctx *d, struct span line, struct span rel,
		    struct span ns)
{
	struct rt_record rec = *d->base;
	int rc;

	rec.format = RT_FMT_HELM_TEXT;
	rec.message = span_dup(d, line);
	if (rel.n)
		rec.release = span_dup(d, rel);
	if (ns.n)
		rec.release_ns = span_dup(d, ns);
	rec.revs = NULL;
	rec.nrevs = 0;
	if (!rec.ts_ns && d->hint_ts_ns)
		rec.ts_ns = d->hint_ts_ns;
	if ((rc = dec_emit(d, &rec)) != 0)
		return rc;
	return DEC_YES;
}

int dec_helm_text_line(struct dec_ctx *d, struct dec_helm_state *st,
		       const char *line, size_t n)
{
	struct span s = trim(line, n), rel = { 0 }, ns = { 0 };
	int rc;

	if (!s.n) {   /* a blank line ends a table and a status block */
		st->table = DEC_TABLE_NONE;
		return DEC_NO;
	}
	if (st->table != DEC_TABLE_NONE &&
	    (rc = table_line(d, st, line, s)) != DEC_NO)
		return rc;
	if (table_header(st, line, s) || kube_header(st, line, s))
		return DEC_YES;
	describe_observe(st, line, s);
	/* A remembered `helm history` command names only the table right
	 * after it; cli_line remembers a new one. */
	st->cmd_release[0] = st->cmd_ns[0] = '\0';
	if ((rc = status_block(d, st, s)) != DEC_NO)
		return rc;
	if (cli_line(st, s, &rel, &ns))
		return cli_emit(d, s, rel, ns);
	return DEC_NO;
}
