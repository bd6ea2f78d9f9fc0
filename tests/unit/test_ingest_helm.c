/*
 * test_ingest_helm.c: the Helm decoders (docs/formats.md §3, §6 items 5
 * and 6):
 * history/list/status JSON, storage Secrets/ConfigMaps with their payload
 * layers (fixtures made here with zlib), hook evidence, and the text forms
 * (tables, the status block, CLI lines) through dec_helm_text_line.
 */
#include <stdlib.h>

#include <zlib.h>

#include "../../ingest/decode.h"
#include "../../ingest/json_scan.h"
#include "tap.h"

#define MAX_RECS 32

static struct rt_arena arena;
static struct ingest_stats stats;
static struct ingest_opts opts;
static struct rt_record base;
static struct rt_record recs[MAX_RECS];
static int nrecs;
static struct dec_helm_state hst;

static int collect(void *ctx, struct rt_record *r)
{
	(void)ctx;
	if (nrecs < MAX_RECS)
		recs[nrecs++] = *r;
	return 0;
}

static struct dec_ctx ctx(void)
{
	return (struct dec_ctx){
		.arena = &arena, .opts = &opts, .stats = &stats, .base = &base,
		.emit = collect,
	};
}

static struct js_doc doc;

static int run(const char *json)
{
	struct dec_ctx d = ctx();

	nrecs = 0;
	if (js_parse(&doc, json, strlen(json)))
		return -100;
	return dec_kube_json(&d, &doc, &doc.node[0]);
}

/* One text line through the Helm line decoder; records accumulate until
 * the caller resets nrecs. */
static int line(const char *s)
{
	struct dec_ctx d = ctx();

	return dec_helm_text_line(&d, &hst, s, strlen(s));
}

static const char *tfmt(int64_t ns)
{
	static char buf[4][RT_TIME_BUFSZ];
	static int i;

	i = (i + 1) % 4;
	rt_time_format(ns, buf[i]);
	return buf[i];
}

/* ---- fixture makers ---- */

static char *b64(const unsigned char *p, size_t n)
{
	static const char a[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc(n / 3 * 4 + 8), *o = out;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];

		*o++ = a[v >> 18];
		*o++ = a[(v >> 12) & 63];
		*o++ = a[(v >> 6) & 63];
		*o++ = a[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0);

		*o++ = a[v >> 18];
		*o++ = a[(v >> 12) & 63];
		*o++ = i + 1 < n ? a[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

static unsigned char *gz(const char *s, size_t n, size_t *outlen)
{
	z_stream zs = { 0 };
	size_t cap = n + 1024;
	unsigned char *out = malloc(cap);

	deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	zs.next_in = (unsigned char *)s;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	deflate(&zs, Z_FINISH);
	*outlen = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}

/* layers: 'g' gzip, 'b' base64, applied left to right. */
static char *wrap(const char *json, const char *layers)
{
	char *cur = strdup(json);
	size_t n = strlen(cur);

	for (const char *l = layers; *l; l++) {
		if (*l == 'g') {
			unsigned char *z = gz(cur, n, &n);

			free(cur);
			cur = malloc(n + 1);
			memcpy(cur, z, n);
			cur[n] = '\0';
			free(z);
		} else {
			char *e = b64((unsigned char *)cur, n);

			free(cur);
			cur = e;
			n = strlen(cur);
		}
	}
	return cur;
}

static const char release_json[] =
	"{\"name\":\"payments-api\",\"namespace\":\"prod\",\"version\":48,"
	"\"info\":{\"first_deployed\":\"2024-11-01T10:00:00.123456789+01:00\","
	"\"last_deployed\":\"2024-11-03T15:41:07.5+01:00\",\"deleted\":\"\","
	"\"description\":\"Upgrade \\\"payments-api\\\" failed: context deadline exceeded\","
	"\"status\":\"failed\",\"notes\":\"\"},"
	"\"chart\":{\"metadata\":{\"name\":\"payments-api\",\"version\":\"3.5.0\",\"appVersion\":\"3.5.0\"}},"
	"\"config\":{},"
	"\"manifest\":\"---\\n# Source: payments-api/templates/svc.yaml\\napiVersion: v1\\nkind: Service\\n"
	"metadata:\\n  name: payments-api\\n---\\n# Source: payments-api/templates/deploy.yaml\\n"
	"apiVersion: apps/v1\\nkind: Deployment\\nmetadata:\\n  name: payments-api\\nspec:\\n  template:\\n"
	"    metadata:\\n      labels:\\n        app: payments-api\\n    spec:\\n      containers:\\n"
	"      - name: api\\n        envFrom:\\n        - configMapRef:\\n            name: payments-api-config\\n\","
	"\"hooks\":["
	"{\"name\":\"payments-api-config\",\"kind\":\"ConfigMap\",\"path\":\"payments-api/templates/cm.yaml\","
	"\"manifest\":\"apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: payments-api-config\\n  annotations:\\n"
	"    \\\"helm.sh/hook\\\": pre-install,pre-upgrade\\n    \\\"helm.sh/hook-delete-policy\\\": before-hook-creation\\n\","
	"\"events\":[\"pre-install\",\"pre-upgrade\"],\"last_run\":{\"started_at\":\"\",\"completed_at\":\"\",\"phase\":\"\"}},"
	"{\"name\":\"db-creds\",\"kind\":\"Secret\",\"manifest\":\"kind: Secret\\nmetadata:\\n  name: db-creds\\n"
	"  annotations:\\n    helm.sh/hook: pre-upgrade\\n\",\"events\":[\"pre-upgrade\"]},"
	"{\"name\":\"kept-cm\",\"kind\":\"ConfigMap\",\"manifest\":\"kind: ConfigMap\\n\","
	"\"delete_policies\":[\"hook-succeeded\"]},"
	"{\"name\":\"migrate\",\"kind\":\"Job\",\"manifest\":\"kind: Job\\n\",\"delete_policies\":[\"before-hook-creation\"]}"
	"]}";

static char *storage(const char *kind, const char *payload, const char *extra_labels)
{
	static const char fmt[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"%s\",\"type\":\"helm.sh/release.v1\","
		"\"metadata\":{\"name\":\"sh.helm.release.v1.payments-api.v48\",\"namespace\":\"prod\","
		"\"labels\":{\"name\":\"payments-api\",\"owner\":\"helm\",\"status\":\"failed\",\"version\":\"48\"%s}},"
		"\"data\":{\"release\":\"%s\"}}";
	size_t n = sizeof(fmt) + strlen(kind) + strlen(payload) + strlen(extra_labels);
	char *out = malloc(n);

	snprintf(out, n, fmt, kind, extra_labels, payload);
	return out;
}

/* ---- JSON ---- */

static void test_history_json(void)
{
	int rc = run("[{\"revision\":1,\"updated\":\"2024-05-01T12:00:02.5+02:00\",\"status\":\"superseded\","
		"\"chart\":\"web-1.4.0\",\"app_version\":\"2.1\",\"description\":\"Install complete\"},"
		"{\"revision\":2,\"updated\":\"2024-05-01T12:15:13.123456789+02:00\",\"status\":\"failed\",\"chart\":\"web-1.5.0\","
		"\"app_version\":\"2.2\",\"description\":\"Upgrade \\\"web\\\" failed: context deadline exceeded\"},"
		"{\"revision\":3,\"status\":\"deployed\",\"chart\":\"web-1.4.0\",\"app_version\":\"MISSING\","
		"\"description\":\"Rollback to 1\",\"rollback_revision\":1}]");

	is_int(rc, DEC_YES, "history json: recognised");
	is_int(nrecs, 1, "history json: one record");
	is_int(recs[0].format, RT_FMT_HELM_HISTORY, "history json: format");
	is_int(recs[0].nrevs, 3, "history json: three revisions");
	is_int(recs[0].revs[0].revision, 1, "history json: revision int");
	is_str(tfmt(recs[0].revs[0].updated_ns), "2024-05-01T10:00:02.500000Z", "history json: RFC 3339 local offset");
	is_str(tfmt(recs[0].revs[1].updated_ns), "2024-05-01T10:15:13.123456Z", "history json: 9 digits");
	is_int(recs[0].revs[2].updated_ns, 0, "history json: Helm 4 omitted updated");
	is_rts(recs[0].revs[1].status, "failed", "history json: status");
	is_rts(recs[0].revs[1].chart, "web-1.5.0", "history json: chart");
	is_rts(recs[0].revs[1].app_version, "2.2", "history json: app version");
	is_rts(recs[0].revs[1].description, "Upgrade \"web\" failed: context deadline exceeded", "history json: description");
	is_rts(recs[0].revs[0].release, "", "history json: no release without --release");
	is_rts(recs[0].message, "Rollback to 1", "history json: message = newest description");

	opts.release_ns = "shop";
	opts.release_name = "web";
	run("[{\"revision\":7,\"updated\":\"2024-05-01T12:00:02Z\",\"status\":\"deployed\",\"chart\":\"web-1.4.0\","
	    "\"app_version\":\"2.1\",\"description\":\"Upgrade complete\"}]");
	is_rts(recs[0].revs[0].release, "web", "history json: release from opts");
	is_rts(recs[0].revs[0].ns, "shop", "history json: ns from opts");
	is_rts(recs[0].release, "web", "history json: record release");
	is_str(tfmt(recs[0].ts_ns), "2024-05-01T12:00:02.000000Z", "history json: record ts = newest updated");
	opts.release_ns = opts.release_name = NULL;
}

static void test_list_json(void)
{
	uint64_t skipped = stats.skipped;
	int rc = run("[{\"name\":\"web\",\"namespace\":\"shop\",\"revision\":\"2\","
		"\"updated\":\"2024-05-01 12:15:13.1 +0200 CEST\",\"status\":\"failed\",\"chart\":\"web-1.5.0\",\"app_version\":\"2.2\"},"
		"{\"name\":\"db\",\"namespace\":\"data\",\"revision\":\"11\",\"updated\":\"-\",\"status\":\"deployed\","
		"\"chart\":\"postgresql-12.1.0\",\"app_version\":\"15.2\"}]");

	is_int(rc, DEC_YES, "list json: recognised");
	is_int(recs[0].format, RT_FMT_HELM_LIST, "list json: format");
	is_int(recs[0].nrevs, 2, "list json: two releases");
	is_int(recs[0].revs[0].revision, 2, "list json: revision string \"2\"");
	is_int(recs[0].revs[1].revision, 11, "list json: revision string \"11\"");
	is_str(tfmt(recs[0].revs[0].updated_ns), "2024-05-01T10:15:13.100000Z", "list json: Go Time.String()");
	is_int(recs[0].revs[1].updated_ns, 0, "list json: \"-\" is unknown");
	is_rts(recs[0].revs[0].release, "web", "list json: name");
	is_rts(recs[0].revs[1].ns, "data", "list json: namespace");

	rc = run("[]");
	is_int(rc, DEC_YES, "empty list json: consumed");
	is_int(nrecs, 0, "empty list json: no record");
	is_int(stats.skipped - skipped, 1, "empty list json: counted as skipped");
	is_int(run("[{\"a\":1}]"), DEC_NO, "array of other objects: DEC_NO");
	is_int(run("[{\"revision\":\"x\"}]"), DEC_NO, "array with no valid revision: DEC_NO");
}

static void test_status_json(void)
{
	const struct rt_revision *r;
	int rc = run(release_json);

	is_int(rc, DEC_YES, "status json: recognised");
	is_int(nrecs, 1, "status json: one record");
	is_int(recs[0].format, RT_FMT_HELM_STATUS, "status json: format");
	is_int(recs[0].nrevs, 1, "status json: one rev");
	r = &recs[0].revs[0];
	is_rts(r->release, "payments-api", "status json: release");
	is_rts(r->ns, "prod", "status json: ns");
	is_int(r->revision, 48, "status json: version");
	is_rts(r->status, "failed", "status json: status");
	is_rts(r->chart, "payments-api-3.5.0", "status json: chart name-version");
	is_rts(r->app_version, "3.5.0", "status json: appVersion");
	is_str(tfmt(r->updated_ns), "2024-11-03T14:41:07.500000Z", "status json: last_deployed with offset");
	ok(r->evidence & RT_REV_HOOK_CONFIG, "status json: config hook evidence");
	ok(r->evidence & RT_REV_NO_CHECKSUM, "status json: deployment without checksum");
	ok(r->evidence & RT_REV_PAYLOAD, "status json: payload inspected");
	is_rts(r->hook_configmaps, "payments-api-config,db-creds",
	       "status json: before-hook-creation and default-policy hooks, not hook-succeeded or Jobs");
	is_rts(recs[0].release, "payments-api", "status json: record release");
	is_rts(recs[0].ns, "prod", "status json: record ns");
	is_rts(recs[0].message, "Upgrade \"payments-api\" failed: context deadline exceeded", "status json: message");

	/* helm status drops chart; Helm 4 omits zero times; a checksum rolls. */
	run("{\"name\":\"web\",\"namespace\":\"shop\",\"version\":3,\"info\":{\"status\":\"deployed\","
	    "\"first_deployed\":\"2024-05-01T12:00:02+02:00\",\"last_deployed\":\"\",\"deleted\":\"\",\"description\":\"Upgrade complete\"},"
	    "\"manifest\":\"kind: Deployment\\nspec:\\n  template:\\n    metadata:\\n      annotations:\\n        checksum/config: abc\\n\","
	    "\"hooks\":[{\"name\":\"web-cfg\",\"kind\":\"ConfigMap\",\"manifest\":\"kind: ConfigMap\\n\"}]}");
	r = &recs[0].revs[0];
	is_str(tfmt(r->updated_ns), "2024-05-01T10:00:02.000000Z", "status json: \"\" last_deployed -> first_deployed");
	is_rts(r->chart, "", "status json: no chart");
	ok(r->evidence & RT_REV_HOOK_CONFIG, "status json: default delete policy counts");
	ok(!(r->evidence & RT_REV_NO_CHECKSUM), "status json: checksum annotation present");

	run("{\"name\":\"api\",\"namespace\":\"shop\",\"info\":{\"status\":\"failed\"},\"chart\":{}}");
	is_int(nrecs, 1, "release without version: still a record");
	is_int(recs[0].nrevs, 0, "release without version: no revision stated");
	is_rts(recs[0].release, "api", "release without version: names the release");

	run("{\"name\":\"web\",\"namespace\":\"shop\",\"version\":4,\"info\":{\"status\":\"deployed\"},"
	    "\"manifest\":\"kind: StatefulSet\\n\"}");
	r = &recs[0].revs[0];
	ok(r->evidence == RT_REV_PAYLOAD, "status json: no hooks, no hook evidence, no checksum flag");
	is_rts(r->hook_configmaps, "", "status json: no hook names");
}

static void check_payload_rec(const char *what, const char *kind)
{
	const struct rt_revision *r;

	is_int(nrecs, 1, "%s: one record", what);
	is_int(recs[0].format, RT_FMT_HELM_STORAGE, "%s: format", what);
	is_rts(recs[0].kind, kind, "%s: kind", what);
	is_rts(recs[0].name, "sh.helm.release.v1.payments-api.v48", "%s: object name", what);
	is_int(recs[0].nrevs, 1, "%s: one rev", what);
	r = &recs[0].revs[0];
	is_rts(r->release, "payments-api", "%s: release", what);
	is_int(r->revision, 48, "%s: revision", what);
	is_rts(r->status, "failed", "%s: status", what);
	is_rts(r->ns, "prod", "%s: ns", what);
	is_rts(r->chart, "payments-api-3.5.0", "%s: chart from payload", what);
	is_rts(r->description, "Upgrade \"payments-api\" failed: context deadline exceeded",
	       "%s: description from payload", what);
	is_str(tfmt(r->updated_ns), "2024-11-03T14:41:07.500000Z", "%s: updated = last_deployed", what);
	ok(r->evidence == (RT_REV_PAYLOAD | RT_REV_HOOK_CONFIG | RT_REV_NO_CHECKSUM),
	   "%s: payload + hook evidence", what);
	is_rts(r->hook_configmaps, "payments-api-config,db-creds", "%s: hook names", what);
}

static void test_storage_payloads(void)
{
	char *p, *obj;

	p = wrap(release_json, "gbb");
	obj = storage("Secret", p, ",\"createdAt\":\"1730644800\"");
	run(obj);
	check_payload_rec("secret base64(base64(gzip))", "Secret");
	free(p);
	free(obj);

	p = wrap(release_json, "gb");
	obj = storage("ConfigMap", p, "");
	run(obj);
	check_payload_rec("configmap base64(gzip)", "ConfigMap");
	free(p);
	free(obj);

	p = wrap(release_json, "bb");
	obj = storage("Secret", p, "");
	run(obj);
	check_payload_rec("secret plain base64 (no gzip)", "Secret");
	free(p);
	free(obj);
}

static void check_labels_only(const char *what, int64_t want_updated)
{
	const struct rt_revision *r = &recs[0].revs[0];

	is_int(nrecs, 1, "%s: still one record", what);
	is_rts(r->release, "payments-api", "%s: release from label", what);
	is_int(r->revision, 48, "%s: revision from label", what);
	is_rts(r->status, "failed", "%s: status from label", what);
	is_rts(r->chart, "", "%s: no chart", what);
	is_int(r->evidence, 0, "%s: no payload evidence", what);
	is_int(r->updated_ns, want_updated, "%s: updated from labels", what);
}

static void test_storage_broken(void)
{
	static const char *const bad[] = {
		"%%%not-base64%%%", "aGVsbG8gd29ybGQ=", "H4sIAAAAAAAA/w==",
		"SDRzSUFBQUFBQUFBLzJ4UUFBQUFBQUFB", "e30=", "",
	};
	int64_t created = 1730644800LL * 1000000000LL;
	char *p, *obj;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		obj = storage("Secret", bad[i], ",\"createdAt\":\"1730644800\",\"modifiedAt\":\"1730648400\"");
		run(obj);
		check_labels_only(bad[i], created);
		free(obj);
	}

	/* Truncated gzip stream at every length: never a crash, always labels. */
	p = wrap(release_json, "g");
	{
		size_t zl = 0;
		unsigned char *z = gz(release_json, strlen(release_json), &zl);
		int fine = 1;

		for (size_t cut = 1; cut < zl; cut += 7) {
			char *e1 = b64(z, cut), *e2 = b64((unsigned char *)e1, strlen(e1));

			obj = storage("Secret", e2, "");
			run(obj);
			if (nrecs != 1 || recs[0].revs[0].revision != 48 ||
			    (recs[0].revs[0].evidence & RT_REV_PAYLOAD))
				fine = 0;
			free(obj);
			free(e1);
			free(e2);
		}
		ok(fine, "truncated gzip payloads fall back to labels");
		free(z);
	}
	free(p);

	obj = storage("Secret", "", ",\"modifiedAt\":\"1730648400\"");
	run(obj);
	is_int(recs[0].revs[0].updated_ns, 1730648400LL * 1000000000LL, "no payload: updated from modifiedAt alone");
	free(obj);
}

static void test_payload_bound(void)
{
	size_t big = DEC_HELM_PAYLOAD_MAX + 4096, zl = 0;
	char *s = malloc(big + 1), *json = NULL, *enc;
	unsigned char *z;
	size_t jl = 99;

	memset(s, ' ', big);
	s[0] = '{';
	s[big] = '\0';
	z = gz(s, big, &zl);
	enc = b64(z, zl);
	is_int(dec_helm_payload_unwrap(enc, strlen(enc), &json, &jl), RT_EPARSE,
	       "gzip bomb over the bound: refused");
	ok(json == NULL, "gzip bomb: no output");
	free(enc);
	free(z);
	free(s);

	enc = b64((const unsigned char *)"{\"a\":1}", 7);
	is_int(dec_helm_payload_unwrap(enc, strlen(enc), &json, &jl), 0, "tiny plain payload");
	is_str(json, "{\"a\":1}", "tiny plain payload: text");
	free(json);
	free(enc);
}

/* A picked member of r by a path of names. */
static const struct js_node *pick_at(const struct dec_helm_release *r,
				     const char *a, const char *b)
{
	const struct js_node *v = js_get(&r->doc, &r->doc.node[0], a);

	return b ? js_get(&r->doc, v, b) : v;
}

static bool pick_is(const struct dec_helm_release *r, const char *a,
		    const char *b, const char *lit)
{
	return js_str_is(pick_at(r, a, b), lit);
}

/* Only the members the decoder reads are parsed; the manifest is
 * decoded in place; a member too costly as a tree is left out. */
static void test_payload_pick(void)
{
	char js[] = "{\"chart\":{\"templates\":[1,2],\"metadata\":{\"name\":"
		"\"c\",\"version\":\"1\"}},\"config\":{\"x\":[[],{}]},"
		"\"name\":\"r\",\"name\":\"second\",\"info\":{\"status\":"
		"\"deployed\"},\"manifest\":\"a: \\\"b\\\"\\nc: \\u0026\\u00e9\"}";
	struct dec_helm_release r;
	size_t n = 20000;
	char *big = malloc(n * 2 + 64), *p = big;

	is_int(dec_helm_payload_release(js, strlen(js), &r), 0, "pick: an object");
	ok(!r.dropped, "pick: nothing dropped");
	ok(pick_is(&r, "name", NULL, "r"), "pick: the first of a name");
	ok(js_str_is(js_get(&r.doc, pick_at(&r, "chart", "metadata"), "name"), "c"),
	   "pick: chart.metadata");
	ok(js_get(&r.doc, pick_at(&r, "chart", NULL), "templates") == NULL,
	   "pick: not the templates");
	ok(pick_at(&r, "config", NULL) == NULL, "pick: not the values");
	is_str(r.manifest, "a: \"b\"\nc: &\xc3\xa9",
	       "pick: the manifest decoded, \\u escapes too");
	dec_helm_release_free(&r);

	p += sprintf(p, "{\"name\":\"r\",\"hooks\":[");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s", i ? ",0" : "0");
	sprintf(p, "]}");
	/* 20000 items, 2.5 MB as a tree: well within the budget */
	is_int(dec_helm_payload_release(big, strlen(big), &r), 0, "pick: hooks");
	ok(js_is(pick_at(&r, "hooks", NULL), JS_ARR) && !r.dropped,
	   "pick: hooks within the budget");
	dec_helm_release_free(&r);
	free(big);

	/* Each member is read alone as cJSON_ParseWithLength read it: a
	 * scalar whatever follows it, and one that is not JSON is left out
	 * without the others. */
	char lax[] = "{\"name\":\"r\",\"version\":7x,\"namespace\":nul,"
		"\"info\":{\"status\":\"deployed\",\"a\":tru}}";
	is_int(dec_helm_payload_release(lax, strlen(lax), &r), 0, "pick: lax members");
	ok(js_is(pick_at(&r, "version", NULL), JS_NUM) &&
	   pick_at(&r, "version", NULL)->num == 7, "pick: 7x reads as 7, as cJSON reads it");
	ok(pick_at(&r, "namespace", NULL) == NULL && pick_at(&r, "info", NULL) == NULL,
	   "pick: members that are not JSON are left out");
	ok(pick_is(&r, "name", NULL, "r"), "pick: the rest is kept");
	dec_helm_release_free(&r);

	char bad[] = "{\"name\":\"r\",\"info\":{]}";
	is_int(dec_helm_payload_release(bad, strlen(bad), &r), RT_EPARSE,
	       "pick: unbalanced brackets are not a release");
	char notobj[] = "[1,2]";
	is_int(dec_helm_payload_release(notobj, strlen(notobj), &r), RT_EPARSE,
	       "pick: an array is not a release");
}

static void test_storage_helm2(void)
{
	run("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"web.v3\",\"namespace\":\"kube-system\","
	    "\"labels\":{\"NAME\":\"web\",\"OWNER\":\"TILLER\",\"STATUS\":\"PENDING_UPGRADE\",\"VERSION\":\"3\","
	    "\"CREATED_AT\":\"1714558513\"}},\"data\":{\"release\":\"H4sIAAAAAAAC/+opaW\"}}");
	is_int(nrecs, 1, "helm2 configmap: one record");
	is_int(recs[0].format, RT_FMT_HELM_STORAGE, "helm2 configmap: format");
	is_rts(recs[0].revs[0].release, "web", "helm2 configmap: release");
	is_int(recs[0].revs[0].revision, 3, "helm2 configmap: revision");
	is_rts(recs[0].revs[0].status, "pending-upgrade", "helm2 configmap: status lowercased");
	is_rts(recs[0].revs[0].ns, "", "helm2 configmap: release ns unknown");
	is_rts(recs[0].ns, "kube-system", "helm2 configmap: object ns");
	is_int(recs[0].revs[0].evidence, 0, "helm2 configmap: protobuf payload not read");
	is_str(tfmt(recs[0].revs[0].updated_ns), "2024-05-01T10:15:13.000000Z", "helm2: CREATED_AT");

	run("{\"kind\":\"Secret\",\"metadata\":{\"name\":\"sh.helm.release.v1.my.app.v12\",\"namespace\":\"n\"}}");
	is_rts(recs[0].revs[0].release, "my.app", "label-less storage secret: release from object name");
	is_int(recs[0].revs[0].revision, 12, "label-less storage secret: revision from object name");
	is_int(run("{\"kind\":\"Secret\",\"metadata\":{\"name\":\"db-creds\",\"namespace\":\"n\",\"labels\":{\"owner\":\"me\"}}}"),
	       DEC_NO, "ordinary Secret: DEC_NO");
}

/* ---- text ---- */

static void test_history_table(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	is_int(line("REVISION\tUPDATED                 \tSTATUS    \tCHART    \tAPP VERSION\tDESCRIPTION     "),
	       DEC_YES, "history table: header consumed");
	is_int(nrecs, 0, "history table: header emits nothing");
	is_int(line("1       \tWed May  1 12:00:02 2024\tsuperseded\tweb-1.4.0\t2.1        \tInstall complete"),
	       DEC_YES, "history table: row 1");
	is_int(line("2       \tThu May  2 09:03:04 2024\tfailed    \tweb-1.5.0\t           \tUpgrade \"web\" failed: timed out"),
	       DEC_YES, "history table: row 2, empty app version");
	is_int(line("        \t                        \t          \t         \t           \twaiting for the condition"),
	       DEC_YES, "history table: description continuation consumed");
	is_int(line("3       \tThu May  2 09:10:00 2024\tdeployed  \tweb-1.4.0\t2.1        \tRollback to 1"),
	       DEC_YES, "history table: row 3 after continuation");
	is_int(nrecs, 3, "history table: three records, no junk");
	is_int(recs[0].format, RT_FMT_HELM_HISTORY, "history table: format");
	is_int(recs[0].revs[0].revision, 1, "history table: revision");
	is_str(tfmt(recs[0].revs[0].updated_ns), "2024-05-01T12:00:02.000000Z", "history table: ANSIC double space");
	is_rts(recs[0].revs[0].status, "superseded", "history table: status trimmed");
	is_rts(recs[0].revs[0].chart, "web-1.4.0", "history table: chart");
	is_rts(recs[0].revs[0].app_version, "2.1", "history table: app version trimmed");
	is_rts(recs[0].revs[0].description, "Install complete", "history table: description");
	is_rts(recs[1].revs[0].app_version, "", "history table: empty app version cell");
	is_rts(recs[1].message, "Upgrade \"web\" failed: timed out", "history table: message = description");
	is_int(recs[2].revs[0].revision, 3, "history table: row after continuation");
	is_int(line(""), DEC_NO, "blank line ends the table");
	is_int(line("3       \tThu May  2 09:10:00 2024\tdeployed"), DEC_NO,
	       "after the table, rows are no longer read");
	is_int(hst.table, DEC_TABLE_NONE, "table closed");

	/* Helm 4 with --show-rollback-revision. */
	nrecs = 0;
	line("REVISION\tUPDATED                 \tSTATUS    \tCHART    \tAPP VERSION\tROLLBACK\tDESCRIPTION");
	line("4       \tSun Nov  3 14:43:52 2024\tdeployed  \tweb-1.4.0\t2.1        \t2       \tRollback to 2");
	is_int(nrecs, 1, "helm4 history table: row");
	is_rts(recs[0].revs[0].description, "Rollback to 2", "helm4 history table: description after ROLLBACK");
	is_rts(recs[0].revs[0].status, "deployed", "helm4 history table: status");
	is_int(line("    at Object.<anonymous> (/app/index.js:1:1)"), DEC_NO,
	       "indented non-TAB line after a TAB table is not a continuation");
	is_int(hst.table, DEC_TABLE_NONE, "indented stray line closed the table");
	line("REVISION\tUPDATED                 \tSTATUS    \tCHART    \tAPP VERSION\tROLLBACK\tDESCRIPTION");
	is_int(line("some other output"), DEC_NO, "a line that does not fit ends the table");
	is_int(hst.table, DEC_TABLE_NONE, "non-fitting line closed the table");
	line("");
}

static void test_history_table_spaces(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	opts.release_ns = "prod";
	opts.release_name = "payments-api";
	is_int(line("REVISION UPDATED STATUS CHART APP VERSION DESCRIPTION"), DEC_YES, "collapsed header");
	line("47 2024-11-03 14:22:11 UTC superseded payments-api-3.4.1 3.4.1 Upgrade complete");
	line("48 2024-11-03 14:41:07 UTC failed payments-api-3.5.0 3.5.0 Upgrade \"payments-api\" failed");
	line("49 2024-11-03 14:43:52 UTC deployed payments-api-3.4.1 3.4.1 Rollback to 47");
	is_int(nrecs, 3, "collapsed history: three rows");
	is_int(recs[1].revs[0].revision, 48, "collapsed history: revision");
	is_str(tfmt(recs[1].revs[0].updated_ns), "2024-11-03T14:41:07.000000Z", "collapsed history: `UTC` time");
	is_rts(recs[1].revs[0].status, "failed", "collapsed history: status");
	is_rts(recs[1].revs[0].chart, "payments-api-3.5.0", "collapsed history: chart");
	is_rts(recs[1].revs[0].app_version, "3.5.0", "collapsed history: app version");
	is_rts(recs[1].revs[0].description, "Upgrade \"payments-api\" failed", "collapsed history: description");
	is_rts(recs[2].revs[0].description, "Rollback to 47", "collapsed history: rollback description");
	is_rts(recs[2].revs[0].release, "payments-api", "collapsed history: release from opts");
	is_rts(recs[2].revs[0].ns, "prod", "collapsed history: ns from opts");
	opts.release_ns = opts.release_name = NULL;
	line("");

	nrecs = 0;
	line("REVISION    UPDATED                     STATUS          CHART             APP VERSION     DESCRIPTION");
	line("1           Mon Oct  3 10:15:13 2016     superseded      alpine-0.1.0      1.0             Initial install");
	line("2           Mon Oct  3 10:16:13 2016     deployed        alpine-0.1.0                      Upgrade complete");
	is_int(nrecs, 2, "terminal-copied history: two rows");
	is_str(tfmt(recs[0].revs[0].updated_ns), "2016-10-03T10:15:13.000000Z", "terminal-copied history: ANSIC");
	is_rts(recs[0].revs[0].description, "Initial install", "terminal-copied history: description");
	is_rts(recs[1].revs[0].app_version, "", "terminal-copied history: empty app version guessed");
	is_rts(recs[1].revs[0].description, "Upgrade complete", "terminal-copied history: description kept whole");
	{
		char cont[128];

		/* DESCRIPTION starts at column 90 of that header. */
		snprintf(cont, sizeof(cont), "%*s%s", 90, "", "and more text");
		is_int(line(cont), DEC_YES,
		       "terminal-copied history: continuation at the DESCRIPTION column");
	}
	is_int(nrecs, 2, "terminal-copied history: continuation makes no record");
	line("3           Mon Oct  3 10:17:13 2016     failed          alpine-0.2.0      1.1             Upgrade \"x\" failed");
	is_int(nrecs, 3, "terminal-copied history: row after continuation");
	is_int(line("    kubectl get pods"), DEC_NO, "shallow indented line ends the table");
	line("");
}

static void test_history_after_command(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	line("$ helm history payments-api -n prod");
	line("REVISION\tUPDATED                 \tSTATUS    \tCHART    \tAPP VERSION\tDESCRIPTION");
	line("48      \tSun Nov  3 14:41:07 2024\tfailed    \tpa-3.5.0 \t3.5.0      \tUpgrade \"payments-api\" failed");
	is_int(nrecs, 2, "command + row: two records");
	is_rts(recs[1].revs[0].release, "payments-api", "history table after `helm history X`: release");
	is_rts(recs[1].revs[0].ns, "prod", "history table after `helm history X -n NS`: ns");
	line("");

	nrecs = 0;
	line("$ helm history payments-api -n prod");
	line("Error: release: not found");
	line("REVISION\tUPDATED                 \tSTATUS    \tCHART    \tAPP VERSION\tDESCRIPTION");
	line("1       \tSun Nov  3 14:41:07 2024\tdeployed  \tpa-3.5.0 \t3.5.0      \tInstall complete");
	is_int(nrecs, 3, "command, error, row: three records");
	is_rts(recs[2].revs[0].release, "", "a command not directly before the table does not name it");
	line("");
}

static void test_list_table(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	is_int(line("NAME\tNAMESPACE\tREVISION\tUPDATED                                \tSTATUS  \tCHART          \tAPP VERSION"),
	       DEC_YES, "list table: header");
	line("web \tshop     \t2       \t2024-05-01 12:15:13.1 +0200 CEST       \tfailed  \tweb-1.5.0      \t2.2");
	line("rke2-ingress-nginx      kube-system     2               2023-10-27 14:30:00.123456789 +0000 UTC superseded      ingress-nginx-4.5.2             1.9.0");
	is_int(nrecs, 2, "list table: two rows (TAB and spaces)");
	is_int(recs[0].format, RT_FMT_HELM_LIST, "list table: format");
	is_rts(recs[0].revs[0].release, "web", "list table: name");
	is_rts(recs[0].revs[0].ns, "shop", "list table: namespace");
	is_int(recs[0].revs[0].revision, 2, "list table: revision");
	is_str(tfmt(recs[0].revs[0].updated_ns), "2024-05-01T10:15:13.100000Z", "list table: Go Time.String()");
	is_rts(recs[0].revs[0].status, "failed", "list table: status");
	is_rts(recs[0].revs[0].app_version, "2.2", "list table: app version");
	is_rts(recs[0].release, "web", "list table: record release");
	is_rts(recs[1].revs[0].release, "rke2-ingress-nginx", "list table (spaces): name");
	is_rts(recs[1].revs[0].status, "superseded", "list table (spaces): status");
	is_rts(recs[1].revs[0].chart, "ingress-nginx-4.5.2", "list table (spaces): chart");
	is_rts(recs[1].revs[0].app_version, "1.9.0", "list table (spaces): app version");
	is_str(tfmt(recs[1].revs[0].updated_ns), "2023-10-27T14:30:00.123456Z", "list table (spaces): time");
	line("");
	is_int(line("NAME READY STATUS RESTARTS AGE"), DEC_NO, "kubectl get pods header is not a helm table");
}

static void test_status_block(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	is_int(line("Release \"web\" has been upgraded. Happy Helming!"), DEC_YES, "upgrade banner");
	is_int(line("NAME: web"), DEC_YES, "status block: NAME");
	is_int(line("LAST DEPLOYED: Mon Nov  3 14:41:07 2024"), DEC_YES, "status block: LAST DEPLOYED");
	is_int(line("NAMESPACE: prod"), DEC_YES, "status block: NAMESPACE");
	is_int(line("STATUS: deployed"), DEC_YES, "status block: STATUS");
	is_int(nrecs, 1, "status block: nothing until REVISION (only the banner)");
	is_int(line("REVISION: 48"), DEC_YES, "status block: REVISION");
	is_int(nrecs, 2, "status block: one record at REVISION");
	is_int(recs[1].format, RT_FMT_HELM_STATUS, "status block: format");
	is_rts(recs[1].revs[0].release, "web", "status block: release");
	is_rts(recs[1].revs[0].ns, "prod", "status block: ns");
	is_rts(recs[1].revs[0].status, "deployed", "status block: status");
	is_int(recs[1].revs[0].revision, 48, "status block: revision");
	is_str(tfmt(recs[1].revs[0].updated_ns), "2024-11-03T14:41:07.000000Z", "status block: ANSIC time");
	is_int(line("TEST SUITE: None"), DEC_NO, "after the block: plain text");
	is_int(line("STATUS: deployed"), DEC_NO, "STATUS without NAME: not a block line");
	is_int(line("REVISION: 5"), DEC_NO, "REVISION without NAME: not a block");
	is_int(nrecs, 2, "no stray records");
}

static void test_kubectl_events_table(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	is_int(line("LAST SEEN   TYPE      REASON        OBJECT                            MESSAGE"), DEC_YES,
	       "kubectl events: header");
	is_int(line("44m         Warning   FailedMount   pod/haproxy-7c9d-x2k4p            MountVolume.SetUp failed for volume \"haproxy-config\" : configmap \"haproxy-config\" not found"),
	       DEC_YES, "kubectl events: row");
	line("2m          Normal    Pulled        pod/haproxy-7c9d-x2k4p            Container image \"haproxy:2.9\" already present on machine");
	line("5s Warning BackOff deployment.apps/web Back-off restarting failed container");
	is_int(nrecs, 3, "kubectl events: three rows (aligned and collapsed)");
	is_int(recs[0].format, RT_FMT_K8S_EVENT, "kubectl events: format");
	is_rts(recs[0].type, "Warning", "kubectl events: type");
	is_rts(recs[0].reason, "FailedMount", "kubectl events: reason");
	is_rts(recs[0].kind, "Pod", "kubectl events: kind from pod/");
	is_rts(recs[0].pod, "haproxy-7c9d-x2k4p", "kubectl events: pod");
	is_rts(recs[0].message, "MountVolume.SetUp failed for volume \"haproxy-config\" : configmap \"haproxy-config\" not found",
	       "kubectl events: message");
	is_int(recs[0].count, 1, "kubectl events: count 1");
	is_rts(recs[2].kind, "Deployment", "kubectl events: deployment.apps kind");
	is_rts(recs[2].name, "web", "kubectl events: deployment name");
	is_rts(recs[2].message, "Back-off restarting failed container", "kubectl events (collapsed): message");
	is_int(line("error: the server doesn't have a resource type \"evnts\""), DEC_NO, "kubectl events: table ends");
	line("");

	nrecs = 0;
	line("NAMESPACE   LAST SEEN   TYPE      REASON    OBJECT          SUBOBJECT              SOURCE             MESSAGE                      FIRST SEEN   COUNT   NAME");
	line("shop        3m          Warning   BackOff   pod/web-1       spec.containers{web}   kubelet, node-1    Back-off restarting failed   10m          7       web-1.17cb6a0f");
	is_int(nrecs, 1, "kubectl events wide -A: row");
	is_rts(recs[0].ns, "shop", "wide: namespace");
	is_rts(recs[0].container, "web", "wide: container from SUBOBJECT");
	is_rts(recs[0].component, "kubelet", "wide: component from SOURCE");
	is_rts(recs[0].host, "node-1", "wide: host from SOURCE");
	is_int(recs[0].count, 7, "wide: COUNT");
	is_rts(recs[0].uid, "shop/web-1.17cb6a0f", "wide: uid from NAME");
	is_rts(recs[0].message, "Back-off restarting failed", "wide: message cut at FIRST SEEN");
	line("");
}

static void test_kubectl_describe(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	is_int(line("Name:             haproxy-xxxx"), DEC_NO, "describe: Name: stays text");
	is_int(line("Namespace:        ingress"), DEC_NO, "describe: Namespace: stays text");
	is_int(line("Node:             node-1/10.0.0.1"), DEC_NO, "describe: Node: stays text");
	is_int(line("Events:"), DEC_NO, "describe: Events: stays text");
	is_int(line("  Type     Reason       Age                 From               Message"), DEC_YES, "describe: header");
	is_int(line("  ----     ------       ----                ----               -------"), DEC_YES, "describe: dashes");
	line("  Warning  FailedMount  2m (x3 over 5m)     kubelet, node-1    MountVolume.SetUp failed for volume \"haproxy-config\": configmap \"haproxy-config\" not found");
	line("  Normal   Killing      1m                  kubelet            Container haproxy failed liveness probe, will be restarted");
	line("  Warning  Unhealthy 30s (x12 over 4m) kubelet Liveness probe failed: HTTP probe failed with statuscode: 503");
	is_int(nrecs, 3, "describe: three rows");
	is_rts(recs[0].pod, "haproxy-xxxx", "describe: pod from Name:");
	is_rts(recs[0].ns, "ingress", "describe: ns from Namespace:");
	is_rts(recs[0].reason, "FailedMount", "describe: reason");
	is_int(recs[0].count, 3, "describe: count from (x3 over 5m)");
	is_rts(recs[0].component, "kubelet", "describe: component");
	is_rts(recs[0].host, "node-1", "describe: host");
	is_rts(recs[0].message, "MountVolume.SetUp failed for volume \"haproxy-config\": configmap \"haproxy-config\" not found",
	       "describe: message");
	is_rts(recs[1].message, "Container haproxy failed liveness probe, will be restarted", "describe: row 2 message");
	is_int(recs[2].count, 12, "describe (collapsed): count");
	is_rts(recs[2].message, "Liveness probe failed: HTTP probe failed with statuscode: 503", "describe (collapsed): message");
	is_int(line("Some footer"), DEC_NO, "describe: table ends");
	line("");
}

static void cli(const char *s, const char *release, const char *what)
{
	int before = nrecs;

	is_int(line(s), DEC_YES, "%s: claimed", what);
	is_int(nrecs - before, 1, "%s: one record", what);
	if (nrecs > before) {
		is_int(recs[nrecs - 1].format, RT_FMT_HELM_TEXT, "%s: format", what);
		is_rts(recs[nrecs - 1].message, s, "%s: message = line", what);
		is_rts(recs[nrecs - 1].release, release, "%s: release", what);
	}
}

static void test_cli_lines(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	cli("Error: UPGRADE FAILED: release web failed, and has been rolled back due to atomic being set: timed out waiting for the condition",
	    "web", "atomic rollback");
	cli("Error: INSTALLATION FAILED: cannot re-use a name that is still in use", "", "name in use");
	cli("Error: UPGRADE FAILED: \"payments-api\" has no deployed releases", "payments-api", "no deployed releases");
	cli("Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress", "", "in progress");
	cli("Error: UPGRADE FAILED: pre-upgrade hooks failed: job migrate failed: BackoffLimitExceeded", "", "hooks failed");
	cli("Error: UPGRADE FAILED: Upgrade \"web\" failed: context deadline exceeded", "web", "Upgrade \"x\" failed");
	cli("Release \"web\" has been upgraded. Happy Helming!", "web", "upgraded");
	cli("Release \"traefik\" does not exist. Installing it now.", "traefik", "installing now");
	cli("Rollback was a success! Happy Helming!", "", "rollback success");
	cli("release \"web\" uninstalled", "web", "uninstalled");
	cli("+ helm_v3 upgrade --set-string global.systemDefaultRegistry= --namespace kube-system traefik https://10.43.0.1:443/static/charts/traefik.tgz --values /config/values-10_HelmChart.yaml",
	    "traefik", "klipper upgrade trace");
	is_rts(recs[nrecs - 1].release_ns, "kube-system", "klipper trace: --namespace");
	cli("+ helm_v3 install --set-string global.systemDefaultRegistry= traefik https://10.43.0.1:443/static/charts/traefik.tgz",
	    "traefik", "klipper install trace");
	cli("+ helm_v3 ls --all -f '^traefik$' --namespace kube-system --output json", "", "klipper ls trace");
	cli("$ helm history payments-api -n prod", "payments-api", "pasted helm history command");
	cli("helm install --generate-name ./chart", "", "generate-name");
	cli("Upgrading web", "web", "klipper Upgrading");
	cli("Already installed web", "web", "klipper Already installed");
	cli("Previous helm job was interrupted, updating status from pending-upgrade to failed", "", "klipper interrupted");
	cli("upgrade.go:444: [debug] warning: Upgrade \"web\" failed: context deadline exceeded", "web", "helm debug");
	cli("Error from server (NotFound): configmaps \"payments-api-config\" not found", "traefik",
	    "kubectl error after a helm upgrade: its release");
	memset(&hst, 0, sizeof(hst));
	cli("Error from server (NotFound): configmaps \"payments-api-config\" not found", "", "kubectl error");

	nrecs = 0;
	is_int(line("Error: connect ECONNREFUSED 127.0.0.1:5432"), DEC_NO, "app Error: line not claimed");
	is_int(line("hello world"), DEC_NO, "plain line not claimed");
	is_int(line("Upgrading the database schema now"), DEC_NO, "sentence starting Upgrading not claimed");
	is_int(line("helmet on"), DEC_NO, "helmet is not helm");
	is_int(nrecs, 0, "no records for unclaimed lines");
}

/* Output after `helm upgrade X` is about X, in the same stream only. */
static void test_operation_memory(void)
{
	memset(&hst, 0, sizeof(hst));
	nrecs = 0;
	cli("$ helm upgrade --install storefront ./charts/storefront -n shop --atomic", "storefront",
	    "operation command");
	cli("Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress",
	    "storefront", "unnamed error after it");
	is_rts(recs[nrecs - 1].release_ns, "shop", "and its namespace");
	cli("Error: UPGRADE FAILED: \"payments-api\" has no deployed releases", "payments-api",
	    "a name in the line wins");
	cli("$ helm status other -n shop", "other", "helm status runs nothing");
	cli("Error: UPGRADE FAILED: timed out waiting for the condition", "storefront",
	    "still the operation's release");
	base.pod = RT_STR_LIT("web-1");
	cli("Error: UPGRADE FAILED: timed out waiting for the condition", "",
	    "another stream does not inherit it");
	base.pod = RT_STR_NULL;
}

/* The release a command line names, as dec_helm_op_apply reads it from a
 * container line: through the whitespace around the command, and in a pod
 * that is a helm-controller job only when the job is its release's. */
static const char *op_release(const char *pod, const char *text)
{
	static char out[64];
	struct dec_ctx d = ctx();
	struct rt_record rec;

	memset(&hst, 0, sizeof(hst));
	rt_record_init(&rec);
	rec.pod = rt_str_make(pod, strlen(pod));
	dec_helm_op_apply(&d, &hst, &rec, rt_str_make(text, strlen(text)));
	snprintf(out, sizeof(out), "%.*s/%.*s", (int)rec.release.n,
		 rec.release.p ? rec.release.p : "", (int)rec.release_ns.n,
		 rec.release_ns.p ? rec.release_ns.p : "");
	return out;
}

static void test_operation_line(void)
{
	const char *up = "\t  $ helm upgrade --install web ./c -n shop \r\n";
	const char *job = "  + helm_v3 upgrade --namespace cache cache /c.tgz\n";

	is_str(op_release("shop-7d9c8b6f5-x2k4p", up), "web/shop",
	       "op: a command with whitespace around it");
	is_str(op_release("h", up), "web/shop", "op: a one-byte pod");
	is_str(op_release("helm-instal", up), "web/shop",
	       "op: a pod one byte short of a job's prefix");
	is_str(op_release("helm-delete-", up), "/",
	       "op: the shortest job pod is a job, not the release's");
	is_str(op_release("helm-install-cache-x7k2p", job), "cache/cache",
	       "op: a job's command names its namespace, spaces around");
	is_str(op_release("helm-install-cache-x7k2p", up), "/",
	       "op: a job's command for another release names nothing");
	is_str(op_release("web-1", "   \t\r\n"), "/", "op: whitespace only");
	is_str(op_release("web-1", "  the helm chart  "), "/",
	       "op: helm in a sentence names nothing");
}

/* The objects of a rendered manifest: kind, metadata name and namespace
 * only, not names nested deeper or inside data. */
static void test_manifest_objects(void)
{
	struct rt_str o = dec_manifest_objects(&arena,
		"---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\n"
		"metadata:\n  labels:\n    name: not-this\n  name: \"cfg\"\n"
		"data:\n  name: nor-this\n---\nkind: Deployment\nmetadata:\n"
		"  namespace: other\n  name: router # the router\nspec:\n"
		"  template:\n    metadata:\n      name: nested\n---\n"
		"kind: Service\n---\nmetadata:\n  name: no-kind\n---\n"
		"kind: Job\nmetadata:\n    name: four-spaces\n");

	is_rts(o, "ConfigMap//cfg\nDeployment/other/router\nJob//four-spaces\n",
	       "manifest: kind/namespace/name of each complete document");
	o = dec_manifest_objects(&arena, "");
	is_int((long)o.n, 0, "manifest: empty");
}

/*
 * A controller's `release=X` found wherever its "elease" falls: the scan
 * for it takes blocks, the last one overlapping the one before, and a text
 * shorter than a block goes another way; the padding moves the name over
 * every offset of both block sizes and across that length.
 */
static void test_release_anywhere(void)
{
	static const char pad[] = "abcdfghijkmnopqrstuvwxyzabcdfghijkmnopqrstuvwxyz"
				  "abcdfghijkmnopqrstuvwxyzabcdfghijkmnopqrstuvwxyz";
	int found = 0, tries = 0;

	for (int n = 0; n < 80; n++) {
		char text[128];
		struct dec_ctx d = ctx();
		struct rt_record rec;

		memset(&hst, 0, sizeof(hst));
		rt_record_init(&rec);
		snprintf(text, sizeof(text), "%.*s release=web", n, pad);
		for (int tail = 0; tail < 2; tail++, tries++) {
			if (tail)
				strcat(text, " ok");
			rec.release = RT_STR_NULL;
			dec_helm_op_apply(&d, &hst, &rec,
					  rt_str_make(text, strlen(text)));
			found += rt_str_eq(rec.release, "web");
		}
	}
	is_int(found, tries, "release= found at every offset and length");
}

int main(void)
{
	rt_arena_init(&arena);
	rt_record_init(&base);
	test_history_json();
	test_list_json();
	test_status_json();
	test_storage_payloads();
	test_storage_broken();
	test_payload_bound();
	test_payload_pick();
	test_storage_helm2();
	test_history_table();
	test_history_table_spaces();
	test_history_after_command();
	test_list_table();
	test_status_block();
	test_kubectl_events_table();
	test_kubectl_describe();
	test_cli_lines();
	test_operation_memory();
	test_operation_line();
	test_release_anywhere();
	test_manifest_objects();
	rt_arena_release(&arena);
	return done_testing();
}
