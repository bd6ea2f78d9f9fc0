/*
 * test_ingest_kube.c: dec_kube_json on Kubernetes Events (docs/formats.md §1,
 * §5, §6 items 1 and 7): both event APIs, both recorder styles, watch
 * envelopes, Lists and exporter hints. Calls the decoder directly with a
 * collecting emit callback, so it does not depend on the framer.
 */
#include <stdlib.h>

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
static int64_t hint_ts;

static int collect(void *ctx, struct rt_record *r)
{
	(void)ctx;
	if (nrecs < MAX_RECS)
		recs[nrecs++] = *r;
	return 0;
}

/* Decodes one JSON document; the records land in recs[0..nrecs). */
static struct js_doc doc;

static int run(const char *json)
{
	struct dec_ctx d = {
		.arena = &arena, .opts = &opts, .stats = &stats, .base = &base,
		.hint_ts_ns = hint_ts, .emit = collect, .emit_ctx = NULL,
	};

	nrecs = 0;
	if (js_parse(&doc, json, strlen(json)))
		return -100;
	return dec_kube_json(&d, &doc, &doc.node[0]);
}

static const char *tfmt(int64_t ns)
{
	static char buf[4][RT_TIME_BUFSZ];
	static int i;

	i = (i + 1) % 4;
	rt_time_format(ns, buf[i]);
	return buf[i];
}

static void test_legacy_kubelet(void)
{
	int rc = run("{\"apiVersion\":\"v1\",\"kind\":\"Event\","
		"\"metadata\":{\"name\":\"web-7d9c8b6f5-x2k4p.17cb6a0f2e3d4c5b\","
		"\"namespace\":\"shop\",\"uid\":\"9b2e-1\",\"creationTimestamp\":\"2024-05-01T10:00:00Z\"},"
		"\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"shop\","
		"\"name\":\"web-7d9c8b6f5-x2k4p\",\"fieldPath\":\"spec.containers{web}\"},"
		"\"reason\":\"BackOff\",\"message\":\"Back-off restarting failed container web \\u003cx\\u003e\\nline2\","
		"\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},"
		"\"firstTimestamp\":\"2024-05-01T10:15:13Z\",\"lastTimestamp\":\"2024-05-01T10:20:13Z\","
		"\"count\":5,\"type\":\"Warning\",\"eventTime\":null,"
		"\"reportingComponent\":\"\",\"reportingInstance\":\"\"}");

	is_int(rc, DEC_YES, "legacy: recognised");
	is_int(nrecs, 1, "legacy: one record");
	is_int(recs[0].format, RT_FMT_K8S_EVENT, "legacy: format k8s-event");
	is_rts(recs[0].ns, "shop", "legacy: ns");
	is_rts(recs[0].kind, "Pod", "legacy: kind");
	is_rts(recs[0].name, "web-7d9c8b6f5-x2k4p", "legacy: name");
	is_rts(recs[0].pod, "web-7d9c8b6f5-x2k4p", "legacy: pod = name for Pod");
	is_rts(recs[0].container, "web", "legacy: container from fieldPath");
	is_rts(recs[0].field_path, "spec.containers{web}", "legacy: field_path");
	is_rts(recs[0].reason, "BackOff", "legacy: reason");
	is_rts(recs[0].type, "Warning", "legacy: type");
	is_rts(recs[0].message, "Back-off restarting failed container web <x>\nline2",
	       "legacy: message unescaped, multi-line kept");
	is_rts(recs[0].component, "kubelet",
	       "legacy: reportingComponent \"\" falls back to source.component");
	is_rts(recs[0].host, "node-1", "legacy: host");
	is_rts(recs[0].uid, "9b2e-1", "legacy: uid = metadata.uid");
	is_str(tfmt(recs[0].ts_ns), "2024-05-01T10:20:13.000000Z", "legacy: ts = lastTimestamp");
	is_str(tfmt(recs[0].first_ns), "2024-05-01T10:15:13.000000Z", "legacy: first = firstTimestamp");
	is_int(recs[0].count, 5, "legacy: count");
	is_int(recs[0].nrevs, 0, "legacy: no revisions");
}

static void test_scheduler_style(void)
{
	run("{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"action\":\"Scheduling\","
	    "\"eventTime\":\"2024-05-01T10:15:13.123456Z\",\"firstTimestamp\":null,\"lastTimestamp\":null,"
	    "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"shop\",\"name\":\"web-1\",\"uid\":\"3f0c\",\"apiVersion\":\"v1\"},"
	    "\"message\":\"0/3 nodes are available: 3 Insufficient memory.\",\"reason\":\"FailedScheduling\","
	    "\"metadata\":{\"name\":\"web-1.17cb\",\"namespace\":\"shop\",\"uid\":\"u-2\"},"
	    "\"reportingComponent\":\"default-scheduler\",\"reportingInstance\":\"default-scheduler-cp-1\","
	    "\"source\":{},\"type\":\"Warning\"}");
	is_int(nrecs, 1, "scheduler: one record");
	is_str(tfmt(recs[0].ts_ns), "2024-05-01T10:15:13.123456Z", "scheduler: ts = eventTime when timestamps null");
	is_str(tfmt(recs[0].first_ns), "2024-05-01T10:15:13.123456Z", "scheduler: first = eventTime");
	is_int(recs[0].count, 1, "scheduler: absent count = 1");
	is_rts(recs[0].component, "default-scheduler", "scheduler: component = reportingComponent");
	is_rts(recs[0].host, "", "scheduler: empty source has no host");
	is_rts(recs[0].container, "", "scheduler: no fieldPath, no container");
}

static void test_series_only(void)
{
	run("{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"db-0.1\",\"namespace\":\"shop\"},"
	    "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"db-0\",\"namespace\":\"shop\"},"
	    "\"reason\":\"FailedMount\",\"message\":\"MountVolume.SetUp failed\",\"type\":\"Warning\","
	    "\"eventTime\":\"2024-05-01T10:00:00.000000Z\",\"firstTimestamp\":null,\"lastTimestamp\":null,"
	    "\"series\":{\"count\":7,\"lastObservedTime\":\"2024-05-01T10:30:00.500000Z\"},"
	    "\"reportingComponent\":\"kubelet\",\"source\":{}}");
	is_int(nrecs, 1, "series: one record");
	is_int(recs[0].count, 7, "series: count = series.count");
	is_str(tfmt(recs[0].ts_ns), "2024-05-01T10:30:00.500000Z", "series: ts = lastObservedTime");
	is_str(tfmt(recs[0].first_ns), "2024-05-01T10:00:00.000000Z", "series: first = eventTime");
	is_rts(recs[0].uid, "shop/db-0.1", "series: uid = namespace/name without metadata.uid");
}

static void test_events_k8s_io(void)
{
	run("{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\","
	    "\"metadata\":{\"name\":\"job-x.1\",\"namespace\":\"batch\",\"uid\":\"e-3\"},"
	    "\"eventTime\":null,\"reportingController\":\"kubelet\",\"reportingInstance\":\"node-2\","
	    "\"reason\":\"Failed\",\"regarding\":{\"kind\":\"Pod\",\"namespace\":\"batch\",\"name\":\"job-x\","
	    "\"fieldPath\":\"spec.initContainers{migrate}\"},"
	    "\"note\":\"(combined from similar events): Error: ImagePullBackOff\",\"type\":\"Warning\","
	    "\"deprecatedSource\":{\"component\":\"kubelet\",\"host\":\"node-2\"},"
	    "\"deprecatedFirstTimestamp\":\"2024-05-01T09:00:00Z\",\"deprecatedLastTimestamp\":\"2024-05-01T09:05:00Z\","
	    "\"deprecatedCount\":3}");
	is_int(nrecs, 1, "events.k8s.io: one record");
	is_rts(recs[0].kind, "Pod", "events.k8s.io: kind from regarding");
	is_rts(recs[0].pod, "job-x", "events.k8s.io: pod from regarding");
	is_rts(recs[0].container, "migrate", "events.k8s.io: initContainers fieldPath");
	is_rts(recs[0].message, "Error: ImagePullBackOff", "events.k8s.io: note, combined prefix stripped");
	is_rts(recs[0].component, "kubelet", "events.k8s.io: reportingController");
	is_rts(recs[0].host, "node-2", "events.k8s.io: host from deprecatedSource");
	is_int(recs[0].count, 3, "events.k8s.io: deprecatedCount");
	is_str(tfmt(recs[0].ts_ns), "2024-05-01T09:05:00.000000Z", "events.k8s.io: deprecatedLastTimestamp");
	is_str(tfmt(recs[0].first_ns), "2024-05-01T09:00:00.000000Z", "events.k8s.io: deprecatedFirstTimestamp");

	run("{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\","
	    "\"metadata\":{\"name\":\"n.1\",\"namespace\":\"default\",\"creationTimestamp\":\"2024-05-02T00:00:01Z\"},"
	    "\"eventTime\":\"2024-05-02T00:00:00.000001Z\",\"series\":{\"count\":2,\"lastObservedTime\":\"2024-05-02T00:10:00.000000Z\"},"
	    "\"regarding\":{\"kind\":\"Node\",\"name\":\"node-3\"},\"reason\":\"SystemOOM\","
	    "\"note\":\"System OOM encountered, victim process: java, pid: 42\",\"type\":\"Warning\","
	    "\"reportingController\":\"kubelet\"}");
	is_int(recs[0].count, 2, "events.k8s.io series: count");
	is_str(tfmt(recs[0].ts_ns), "2024-05-02T00:10:00.000000Z", "events.k8s.io series: ts");
	is_rts(recs[0].ns, "default", "node event: ns from metadata");
	is_rts(recs[0].pod, "", "node event: no pod");
	is_rts(recs[0].kind, "Node", "node event: kind");
}

static void test_fallback_times(void)
{
	run("{\"kind\":\"Event\",\"metadata\":{\"name\":\"a.1\",\"namespace\":\"x\","
	    "\"creationTimestamp\":\"2024-05-03T01:02:03Z\"},\"involvedObject\":{\"kind\":\"Deployment\",\"name\":\"a\"},"
	    "\"reason\":\"ScalingReplicaSet\",\"message\":\"Scaled up\",\"firstTimestamp\":null,\"lastTimestamp\":null,"
	    "\"eventTime\":null,\"reportingComponent\":\"\",\"source\":{\"component\":\"deployment-controller\"}}");
	is_str(tfmt(recs[0].ts_ns), "2024-05-03T01:02:03.000000Z", "null times: ts = creationTimestamp");
	is_int(recs[0].first_ns, 0, "null times: first unknown");
	is_int(recs[0].count, 1, "null times: count 1");
	is_rts(recs[0].pod, "", "deployment event: no pod");

	hint_ts = 1714558513LL * 1000000000LL;
	run("{\"kind\":\"Event\",\"metadata\":{\"name\":\"a.2\",\"namespace\":\"x\"},"
	    "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"a\"},\"reason\":\"Killing\",\"message\":\"Stopping container a\","
	    "\"count\":0}");
	is_int(recs[0].ts_ns, hint_ts, "no times at all: Kafka timestamp");
	is_int(recs[0].count, 1, "count 0 means absent");
	hint_ts = 0;
}

static void test_base_copied(void)
{
	const char *raw = "{raw}";

	base.raw = rt_str_make(raw, 5);
	base.pos.source = "events.json";
	base.pos.offset = 77;
	base.pod = RT_STR_LIT("exporter-abc");
	base.flags = RT_REC_TRUNCATED;
	run("{\"kind\":\"Event\",\"metadata\":{\"name\":\"a.3\",\"namespace\":\"x\"},"
	    "\"involvedObject\":{\"kind\":\"Service\",\"name\":\"svc\"},\"reason\":\"X\",\"message\":\"m\"}");
	ok(recs[0].raw.p == raw && recs[0].raw.n == 5, "base: raw kept");
	is_str(recs[0].pos.source, "events.json", "base: source kept");
	is_int(recs[0].pos.offset, 77, "base: offset kept");
	is_int(recs[0].flags, RT_REC_TRUNCATED, "base: flags kept");
	is_rts(recs[0].pod, "", "base: path pod replaced by the event's object");
	rt_record_init(&base);
}

static void test_container_index(void)
{
	run("{\"kind\":\"Event\",\"metadata\":{\"name\":\"p.1\",\"namespace\":\"x\"},"
	    "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"fieldPath\":\"spec.containers[2]\"},"
	    "\"reason\":\"Failed\",\"message\":\"m\"}");
	is_rts(recs[0].container, "", "fieldPath index form: no container name");
	run("{\"kind\":\"Event\",\"metadata\":{\"name\":\"p.2\",\"namespace\":\"x\"},"
	    "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"fieldPath\":\"spec.ephemeralContainers{debugger}\"},"
	    "\"reason\":\"Started\",\"message\":\"m\"}");
	is_rts(recs[0].container, "debugger", "ephemeralContainers fieldPath");
}

#define WATCH_OBJ(count) \
	"{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"db-0.17cb\",\"namespace\":\"shop\"}," \
	"\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"db-0\",\"namespace\":\"shop\"},\"reason\":\"BackOff\"," \
	"\"message\":\"Back-off restarting failed container db\",\"count\":" #count "," \
	"\"lastTimestamp\":\"2024-05-01T10:1" #count ":00Z\",\"type\":\"Warning\"}"

static void test_watch(void)
{
	struct rt_str uid1;
	uint64_t skipped = stats.skipped;
	int rc;

	run("{\"type\":\"ADDED\",\"object\":" WATCH_OBJ(1) "}");
	is_int(nrecs, 1, "watch ADDED: record");
	uid1 = recs[0].uid;
	run("{\"type\":\"MODIFIED\",\"object\":" WATCH_OBJ(4) "}");
	is_int(nrecs, 1, "watch MODIFIED: record");
	is_int(recs[0].count, 4, "watch MODIFIED: higher count");
	ok(uid1.n && recs[0].uid.n == uid1.n &&
	   memcmp(recs[0].uid.p, uid1.p, uid1.n) == 0,
	   "watch MODIFIED: same uid as ADDED");
	is_str(tfmt(recs[0].ts_ns), "2024-05-01T10:14:00.000000Z", "watch MODIFIED: moved lastTimestamp");
	run("{\"type\":\"DELETED\",\"object\":" WATCH_OBJ(5) "}");
	is_int(nrecs, 1, "watch DELETED: record");

	rc = run("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		 "\"status\":\"Failure\",\"message\":\"too old resource version: 1200 (1500)\",\"reason\":\"Expired\",\"code\":410}}");
	is_int(rc, DEC_YES, "watch ERROR: consumed");
	is_int(nrecs, 0, "watch ERROR: no record");
	rc = run("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"12345\"}}}");
	is_int(rc, DEC_YES, "watch BOOKMARK: consumed");
	is_int(nrecs, 0, "watch BOOKMARK: no record");
	is_int(stats.skipped - skipped, 2, "watch ERROR+BOOKMARK counted as skipped");
}

static void test_list(void)
{
	uint64_t skipped = stats.skipped;
	int rc = run("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\",\"selfLink\":\"\"},\"items\":["
		WATCH_OBJ(2) ","
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"shop\"}},"
		"{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"helm.sh/release.v1\","
		"\"metadata\":{\"name\":\"sh.helm.release.v1.web.v3\",\"namespace\":\"shop\","
		"\"labels\":{\"name\":\"web\",\"owner\":\"helm\",\"status\":\"deployed\",\"version\":\"3\",\"modifiedAt\":\"1714558513\"}}},"
		"{\"metadata\":{\"name\":\"x.1\",\"namespace\":\"shop\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"x\"},"
		"\"reason\":\"Pulled\",\"message\":\"ok\",\"type\":\"Normal\"}"
		"]}");

	is_int(rc, DEC_YES, "List: recognised");
	is_int(nrecs, 3, "List: two events and one storage secret");
	is_int(recs[0].format, RT_FMT_K8S_EVENT, "List item 1: event");
	is_int(recs[1].format, RT_FMT_HELM_STORAGE, "List item 3: storage secret");
	is_int(recs[1].nrevs, 1, "List storage: one rev");
	is_rts(recs[1].revs[0].release, "web", "List storage: release");
	is_int(recs[1].revs[0].revision, 3, "List storage: revision");
	is_rts(recs[2].reason, "Pulled", "List item 4: kind-less event");
	is_int(stats.skipped - skipped, 1, "List: the Pod is skipped and counted");
	ok(recs[2].raw.n && memmem(recs[2].raw.p, recs[2].raw.n, "Pulled", 6) &&
	   !memmem(recs[2].raw.p, recs[2].raw.n, "sh.helm.release", 15),
	   "List item: raw is the item's own JSON, not the whole List");

	rc = run("{\"kind\":\"EventList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[" WATCH_OBJ(1) "]}");
	is_int(nrecs, 1, "EventList from the API server");
	rc = run("[" WATCH_OBJ(1) "," WATCH_OBJ(3) "]");
	is_int(nrecs, 2, "bare array of Events (jq .items)");
	is_int(recs[1].count, 3, "bare array: second event");
	rc = run("{\"kind\":\"List\",\"items\":[]}");
	is_int(rc, DEC_YES, "empty List: consumed");
	is_int(nrecs, 0, "empty List: no records");
}

static void test_exporter(void)
{
	run("{\"metadata\":{\"name\":\"web-7d9c8b6f5-x2k4p.17cb\",\"namespace\":\"shop\",\"uid\":\"9b2e\"},"
	    "\"reason\":\"BackOff\",\"message\":\"Back-off restarting failed container web in pod web-7d9c8b6f5-x2k4p_shop(3f0c)\","
	    "\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},\"firstTimestamp\":\"2024-05-01T10:15:13Z\","
	    "\"lastTimestamp\":\"2024-05-01T10:15:13Z\",\"count\":1,\"type\":\"Warning\",\"eventTime\":null,"
	    "\"reportingComponent\":\"kubelet\",\"reportingInstance\":\"node-1\",\"clusterName\":\"prod\","
	    "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"shop\",\"name\":\"web-7d9c8b6f5-x2k4p\","
	    "\"fieldPath\":\"spec.containers{web}\",\"labels\":{\"app.kubernetes.io/instance\":\"web\","
	    "\"pod-template-hash\":\"7d9c8b6f5\",\"helm.sh/chart\":\"web-1.5.0\"},"
	    "\"ownerReferences\":[{\"kind\":\"Node\",\"name\":\"n\"},{\"kind\":\"ReplicaSet\",\"name\":\"web-7d9c8b6f5\",\"controller\":true}],"
	    "\"deleted\":false}}");
	is_int(nrecs, 1, "exporter: one record");
	is_int(recs[0].format, RT_FMT_EXPORTER, "exporter: format");
	is_rts(recs[0].release, "web", "exporter: release from instance label");
	is_rts(recs[0].template_hash, "7d9c8b6f5", "exporter: pod-template-hash");
	is_rts(recs[0].chart, "web-1.5.0", "exporter: helm.sh/chart");
	is_rts(recs[0].owner_kind, "ReplicaSet", "exporter: controller owner kind");
	is_rts(recs[0].owner_name, "web-7d9c8b6f5", "exporter: controller owner name");
	is_rts(recs[0].container, "web", "exporter: container");
	is_rts(recs[0].uid, "9b2e", "exporter: uid");

	run("{\"metadata\":{\"name\":\"cfg.1\",\"namespace\":\"shop\"},\"reason\":\"X\",\"message\":\"m\",\"clusterName\":\"\","
	    "\"involvedObject\":{\"kind\":\"Deployment\",\"name\":\"payments-api\",\"namespace\":\"shop\","
	    "\"labels\":{\"app.kubernetes.io/instance\":\"wrong\",\"release\":\"wrong2\"},"
	    "\"annotations\":{\"meta.helm.sh/release-name\":\"payments-api\",\"meta.helm.sh/release-namespace\":\"prod\"},"
	    "\"ownerReferences\":[{\"kind\":\"HelmRelease\",\"name\":\"hr\"}]}}");
	is_int(recs[0].format, RT_FMT_EXPORTER, "exporter (clusterName \"\"): format");
	is_rts(recs[0].release, "payments-api", "exporter: annotation release-name wins");
	is_rts(recs[0].release_ns, "prod", "exporter: release-namespace");
	is_rts(recs[0].owner_kind, "HelmRelease", "exporter: first owner when no controller");

	run("{\"metadata\":{\"name\":\"r.1\",\"namespace\":\"shop\"},\"reason\":\"X\",\"message\":\"m\",\"clusterName\":\"c\","
	    "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"r-1\",\"labels\":{\"release\":\"legacy\"}}}");
	is_rts(recs[0].release, "legacy", "exporter: `release` label");
}

static void test_helm_controller(void)
{
	run("{\"metadata\":{\"name\":\"j.1\",\"namespace\":\"kube-system\"},\"reason\":\"BackOff\",\"message\":\"m\","
	    "\"clusterName\":\"k3s\",\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"helm-install-traefik-7xk2p\","
	    "\"namespace\":\"kube-system\",\"labels\":{\"helmcharts.helm.cattle.io/chart\":\"traefik\","
	    "\"job-name\":\"helm-install-traefik\"}}}");
	is_rts(recs[0].release, "traefik", "helm-install pod with chart label: release");
	run("{\"metadata\":{\"name\":\"j.2\",\"namespace\":\"kube-system\"},\"reason\":\"Completed\",\"message\":\"m\","
	    "\"clusterName\":\"k3s\",\"involvedObject\":{\"kind\":\"Job\",\"name\":\"helm-delete-traefik\","
	    "\"labels\":{\"helmcharts.helm.cattle.io/chart\":\"traefik\"}}}");
	is_rts(recs[0].release, "traefik", "helm-delete job with chart label: release");
	run("{\"metadata\":{\"name\":\"j.3\",\"namespace\":\"kube-system\"},\"reason\":\"BackOff\",\"message\":\"m\","
	    "\"clusterName\":\"k3s\",\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"helm-install-traefik-7xk2p\","
	    "\"labels\":{\"job-name\":\"helm-install-traefik\"}}}");
	is_rts(recs[0].release, "", "helm-install pod without chart label: left to the correlator");
	run("{\"metadata\":{\"name\":\"j.4\",\"namespace\":\"kube-system\"},\"reason\":\"BackOff\",\"message\":\"m\","
	    "\"clusterName\":\"k3s\",\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"helm-install-coredns-x2k\","
	    "\"labels\":{\"helmcharts.helm.cattle.io/chart\":\"traefik\"}}}");
	is_rts(recs[0].release, "", "label names another chart than the pod: no release");
}

#define HC(meta, spec) "{\"apiVersion\":\"helm.cattle.io/v1\",\"kind\":\"HelmChart\"," \
	"\"metadata\":{" meta "},\"spec\":{" spec "}}"
#define HC_REDIS HC("\"name\":\"redis\",\"namespace\":\"kube-system\"," \
	"\"creationTimestamp\":\"2024-02-01T09:00:00Z\"", \
	"\"chart\":\"redis\",\"version\":\"18.1.0\",\"targetNamespace\":\"cache\"")

/* formats.md §4.1: a HelmChart is its release's target namespace. */
static void test_helmchart(void)
{
	uint64_t skipped;
	int rc = run(HC_REDIS);

	is_int(rc, DEC_YES, "HelmChart: read");
	is_int(nrecs, 1, "HelmChart: one record");
	is_rts(recs[0].kind, "HelmChart", "HelmChart: kind");
	is_rts(recs[0].ns, "kube-system", "HelmChart: its namespace");
	is_rts(recs[0].name, "redis", "HelmChart: name");
	is_rts(recs[0].release, "redis", "HelmChart: release, its name");
	is_rts(recs[0].release_ns, "cache", "HelmChart: release namespace, the target");
	is_str(tfmt(recs[0].ts_ns), "2024-02-01T09:00:00.000000Z", "HelmChart: creation time");
	is_rts(recs[0].message, "HelmChart kube-system/redis: chart redis version 18.1.0 into namespace cache",
	       "HelmChart: message");
	run(HC("\"name\":\"traefik\",\"namespace\":\"kube-system\"", "\"targetNamespace\":\"\""));
	is_rts(recs[0].release_ns, "kube-system", "empty targetNamespace: its own namespace");
	run("{\"type\":\"MODIFIED\",\"object\":" HC_REDIS "}");
	is_rts(recs[0].release_ns, "cache", "HelmChart in a watch envelope");
	run("[" HC_REDIS "," HC_REDIS "]");
	is_int(nrecs, 2, "an array of HelmCharts: each read");
	is_int(run("{\"apiVersion\":\"example.com/v1\",\"kind\":\"HelmChart\",\"metadata\":"
		   "{\"name\":\"x\",\"namespace\":\"y\"}}"), DEC_NO, "another group's HelmChart: DEC_NO");
	skipped = stats.skipped;
	rc = run("{\"kind\":\"List\",\"items\":["
		 HC("\"name\":\"a\",\"namespace\":\"kube-system\"", "\"targetNamespace\":7") ","
		 HC("\"namespace\":\"kube-system\"", "") ","
		 HC("\"name\":\"b\",\"namespace\":\"kube-system\"", "\"targetNamespace\":"
		    "\"" "0123456789012345678901234567890123456789012345678901234567890123" "\"") ","
		 "{\"apiVersion\":\"helm.cattle.io/v1\",\"kind\":\"HelmChart\",\"metadata\":[]},"
		 HC_REDIS "]}");
	is_int(rc, DEC_YES, "bad HelmCharts in a List: read on");
	is_int(nrecs, 1, "bad HelmCharts: only the good one emitted");
	is_rts(recs[0].release_ns, "cache", "bad HelmCharts: the good one after them");
	is_int((int)(stats.skipped - skipped), 4, "bad HelmCharts: each counted as skipped");
}

static void test_not_events(void)
{
	int rc = run("{\"level\":\"error\",\"msg\":\"db timeout\"}");

	is_int(rc, DEC_NO, "app JSON log: DEC_NO");
	is_int(nrecs, 0, "app JSON log: no record");
	is_int(run("42"), DEC_NO, "number: DEC_NO");
	is_int(run("\"x\""), DEC_NO, "string: DEC_NO");
	is_int(run("{\"type\":\"Warning\",\"reason\":\"x\"}"), DEC_NO,
	       "type without involvedObject: DEC_NO");
	is_int(run("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}"), DEC_NO,
	       "bare Pod: DEC_NO");
	is_int(run("[1,2,3]"), DEC_NO, "array of numbers: DEC_NO");
	is_int(run("{\"kind\":\"Event\",\"involvedObject\":[],\"metadata\":7,\"count\":\"x\",\"series\":1}"),
	       DEC_YES, "malformed Event fields: still one record, no crash");
	is_int(recs[0].count, 1, "malformed Event: count 1");
}

static int stop_emit(void *ctx, struct rt_record *r)
{
	(void)ctx;
	(void)r;
	return RT_EIO;
}

static void test_emit_error(void)
{
	const char *json = "{\"kind\":\"List\",\"items\":[" WATCH_OBJ(1) ","
			   WATCH_OBJ(2) "]}";
	struct dec_ctx d = {
		.arena = &arena, .opts = &opts, .stats = &stats, .base = &base,
		.emit = stop_emit,
	};

	js_parse(&doc, json, strlen(json));
	is_int(dec_kube_json(&d, &doc, &doc.node[0]), RT_EIO,
	       "emit error propagates out of a List");
}

int main(void)
{
	rt_arena_init(&arena);
	rt_record_init(&base);
	test_legacy_kubelet();
	test_scheduler_style();
	test_series_only();
	test_events_k8s_io();
	test_fallback_times();
	test_base_copied();
	test_container_index();
	test_watch();
	test_list();
	test_exporter();
	test_helm_controller();
	test_helmchart();
	test_not_events();
	test_emit_error();
	rt_arena_release(&arena);
	return done_testing();
}
