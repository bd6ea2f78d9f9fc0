/*
 * Container log shapes (docs/formats.md §2, §5, §6 items 3, 4, 7, 8): CRI
 * lines
 * and their P/F joins, docker json-file pieces, Fluent Bit, Vector, and any
 * other JSON object; leading timestamps of text lines.
 */
#include <string.h>

#include "revtrail/ingest.h"
#include "tap.h"
#include "ingest_collect.h"

static struct collect C;

#define RUN(opts, src, text) \
	collect_run(&C, (opts), (src), (text), sizeof(text) - 1, 0)

static int64_t T(const char *s)
{
	int64_t ns = 0;

	rt_time_parse(s, strlen(s), &ns);
	return ns;
}

static void test_cri_times(void)
{
	static const char in[] =
		"2024-05-01T10:15:13.123456789Z stdout F {\"level\":\"error\",\"msg\":\"db timeout\"}\n"
		"2024-05-01T10:15:13.5Z stderr F containerd trimmed\n"
		"2024-05-01T10:15:13Z stdout F no fraction\n"
		"2024-05-01T12:15:14.000000001+02:00 stdout F listening on :8080\n"
		"2024-05-01T10:15:13.123456789+00:00 stdout F cri-o\n"
		"2024-05-01T10:15:15Z stdout F \n"
		"2024-05-01T10:15:16Z stdout F\n"
		"2024-05-01T10:15:17Z stdout F:x:y tagged\n"
		"2024-05-01T10:15:18Z stdin F not cri\n"
		"2024-05-01T10:15:19Z stdout X not cri\n";
	struct ingest *ing = RUN(NULL, "-", in);

	is_int(C.n, 10, "cri: ten records");
	is_int(C.rec[0].r.format, RT_FMT_CRI, "cri: JSON content keeps cri");
	is_str(C.rec[0].message, "db timeout", "cri: message from msg");
	is_str(C.rec[0].type, "error", "cri: level");
	is_int(C.rec[0].r.ts_ns, T("2024-05-01T10:15:13Z") + 123456789,
	       "cri: 9 fraction digits");
	is_str(C.rec[0].stream, "stdout", "cri: stream");
	is_int(C.rec[1].r.ts_ns, T("2024-05-01T10:15:13Z") + 500000000,
	       "cri: trimmed fraction");
	is_str(C.rec[1].stream, "stderr", "cri: stderr");
	is_str(C.rec[1].message, "containerd trimmed", "cri: content");
	is_int(C.rec[2].r.ts_ns, T("2024-05-01T10:15:13Z"), "cri: no fraction");
	is_int(C.rec[3].r.ts_ns, T("2024-05-01T10:15:14Z") + 1,
	       "cri: +02:00 offset to UTC");
	is_int(C.rec[4].r.ts_ns, T("2024-05-01T10:15:13Z") + 123456789,
	       "cri: CRI-O +00:00");
	is_str(C.rec[4].message, "cri-o", "cri: CRI-O content");
	is_int(C.rec[5].r.format, RT_FMT_CRI, "cri: empty content is a record");
	is_str(C.rec[5].message, "", "cri: empty content");
	is_int(C.rec[6].r.format, RT_FMT_CRI, "cri: no space after tag");
	is_str(C.rec[6].message, "", "cri: no space, empty content");
	is_str(C.rec[7].message, "tagged", "cri: extra tags ignored");
	is_int(C.rec[8].r.format, RT_FMT_TEXT, "cri: bad stream is text");
	is_int(C.rec[8].r.ts_ns, T("2024-05-01T10:15:18Z"),
	       "text: leading timestamp");
	is_int(C.rec[9].r.format, RT_FMT_TEXT, "cri: bad tag is text");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_cri_join(void)
{
	static const char in[] =
		"2024-05-01T10:15:13.1Z stderr P panic: runtime error: \n"
		"2024-05-01T10:15:13.2Z stdout P out one \n"
		"2024-05-01T10:15:13.3Z stderr P index out of range [5]\n"
		"2024-05-01T10:15:13.4Z stdout F out two\n"
		"2024-05-01T10:15:13.5Z stderr F  with len 3\n"
		"2024-05-01T10:15:14Z stdout F single\n"
		"2024-05-01T10:15:15Z stderr P dangling at eof";
	struct ingest *ing = RUN(NULL, "/var/log/pods/shop_web-1_uid/web/0.log", in);

	is_int(C.n, 4, "join: four logical lines");
	is_str(C.rec[0].message, "out one out two", "join: stdout joined");
	is_int(C.rec[0].r.pos.offset, strstr(in, "2024-05-01T10:15:13.2Z") - in,
	       "join: offset of the first piece");
	is_int(C.rec[0].r.ts_ns, T("2024-05-01T10:15:13.2Z"),
	       "join: time of the first piece");
	ok(C.rec[0].r.flags & RT_REC_MULTILINE, "join: flagged multiline");
	is_str(C.rec[1].message,
	       "panic: runtime error: index out of range [5] with len 3",
	       "join: stderr P/P/F joined around stdout");
	is_str(C.rec[1].stream, "stderr", "join: stream");
	is_str(C.rec[1].pod, "web-1", "join: pod from /var/log/pods path");
	is_str(C.rec[1].ns, "shop", "join: namespace from path");
	is_str(C.rec[1].container, "web", "join: container from path");
	is_str(C.rec[2].message, "single", "join: plain F line");
	is_int(C.rec[2].r.flags, 0, "join: single line not multiline");
	is_str(C.rec[3].message, "dangling at eof", "join: P flushed at finish");
	is_int(C.rec[3].r.n, 4, "join: n in emission order");
	ingest_free(ing);
	collect_reset(&C);

	/* Bounded: a P run over max_record is cut, and the F still ends it. */
	{
		struct ingest_opts o = { .max_record = 80 };
		static const char big[] =
			"2024-05-01T10:15:13Z stdout P aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
			"2024-05-01T10:15:13Z stdout P bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n"
			"2024-05-01T10:15:13Z stdout F cccc\n"
			"2024-05-01T10:15:14Z stdout F next\n";

		ing = RUN(&o, "-", big);
		is_int(C.n, 2, "join bound: two records");
		ok(C.rec[0].r.flags & RT_REC_TRUNCATED, "join bound: flagged");
		ok(strlen(C.rec[0].message) <= 80, "join bound: message bounded");
		ok(strlen(C.rec[0].raw) <= 80, "join bound: raw bounded");
		is_str(C.rec[1].message, "next", "join bound: next line fine");
		is_int(ingest_stats(ing)->truncated, 1, "join bound: counted");
		ingest_free(ing);
		collect_reset(&C);
	}
}

static void test_docker(void)
{
	static const char in[] =
		"{\"log\":\"GET /healthz 200\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:13.12345Z\"}\n"
		"{\"log\":\"first piece \",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:15:14Z\"}\n"
		"{\"log\":\"other stream\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:14.1Z\"}\n"
		"{\"log\":\"second piece \",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:15:14.2Z\"}\n"
		"{\"log\":\"end\\n\",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:15:14.3Z\"}\n"
		"{\"log\":\"with attrs\\r\\n\",\"stream\":\"stdout\",\"attrs\":{\"io.kubernetes.pod.name\":\"web-1\",\"io.kubernetes.pod.namespace\":\"shop\",\"io.kubernetes.container.name\":\"web\"},\"time\":\"2024-05-01T10:15:15Z\"}\n"
		"{\"log\":\"\\u003chtml\\u003e \\u0026 line one\\nline two\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:16Z\"}\n"
		"{\"log\":\"{\\\"level\\\":\\\"warn\\\",\\\"message\\\":\\\"slow query\\\"}\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:17Z\"}\n";
	struct ingest *ing = RUN(NULL, "-", in);

	is_int(C.n, 6, "docker: six records");
	is_int(C.rec[0].r.format, RT_FMT_DOCKER, "docker: format");
	is_str(C.rec[0].message, "GET /healthz 200", "docker: newline stripped");
	is_int(C.rec[0].r.ts_ns, T("2024-05-01T10:15:13Z") + 123450000,
	       "docker: time");
	is_str(C.rec[1].message, "other stream", "docker: other stream first");
	is_str(C.rec[2].message, "first piece second piece end",
	       "docker: pieces joined per stream");
	is_str(C.rec[2].stream, "stderr", "docker: joined stream");
	is_int(C.rec[2].r.ts_ns, T("2024-05-01T10:15:14Z"),
	       "docker: joined time of the first piece");
	ok(C.rec[2].r.flags & RT_REC_MULTILINE, "docker: joined flagged");
	is_str(C.rec[3].message, "with attrs", "docker: CRLF stripped");
	is_str(C.rec[3].pod, "web-1", "docker: pod from attrs");
	is_str(C.rec[3].ns, "shop", "docker: namespace from attrs");
	is_str(C.rec[3].container, "web", "docker: container from attrs");
	is_str(C.rec[4].message, "<html> & line one\nline two",
	       "docker: escapes and inner newline");
	is_str(C.rec[5].message, "slow query", "docker: JSON payload message");
	is_str(C.rec[5].type, "warn", "docker: JSON payload level");
	is_int(C.rec[5].r.format, RT_FMT_DOCKER, "docker: JSON payload keeps docker");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_fluentbit(void)
{
	static const char in[] =
		"{\"time\":\"2024-05-01T10:15:13.123456789Z\",\"stream\":\"stderr\",\"_p\":\"F\",\"log\":\"db timeout\","
		"\"kubernetes\":{\"pod_name\":\"web-7d9c8b6f5-x2k4p\",\"namespace_name\":\"shop\",\"pod_id\":\"3f0c\","
		"\"labels\":{\"app.kubernetes.io/instance\":\"web\",\"pod-template-hash\":\"7d9c8b6f5\",\"helm.sh/chart\":\"web-1.5.0\"},"
		"\"annotations\":{},\"host\":\"node-1\",\"container_name\":\"web\",\"docker_id\":\"ab12\",\"container_image\":\"nginx:1.25\"}}\n"
		"{\"@timestamp\":1714558513.25,\"message\":\"classic parser\",\"logtag\":\"F\",\"stream\":\"stdout\","
		"\"kubernetes\":{\"pod_name\":\"db-0\",\"namespace_name\":\"data\",\"container_name\":\"pg\","
		"\"labels\":{\"release\":\"db\"},\"annotations\":{\"meta.helm.sh/release-name\":\"database\",\"meta.helm.sh/release-namespace\":\"data\"},"
		"\"owner_references\":[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]}}\n"
		"{\"@timestamp\":\"2024-05-01T10:15:13.000001Z\",\"log\":\"{\\\"msg\\\":\\\"inner\\\",\\\"level\\\":\\\"error\\\"}\","
		"\"kubernetes\":{\"pod_name\":\"x\",\"namespace_name\":\"y\"}}\n";
	struct ingest *ing = RUN(NULL, "-", in);

	is_int(C.n, 3, "fluentbit: three records");
	is_int(C.rec[0].r.format, RT_FMT_FLUENTBIT, "fluentbit: format");
	is_str(C.rec[0].message, "db timeout", "fluentbit: log");
	is_str(C.rec[0].pod, "web-7d9c8b6f5-x2k4p", "fluentbit: pod");
	is_str(C.rec[0].ns, "shop", "fluentbit: namespace");
	is_str(C.rec[0].container, "web", "fluentbit: container");
	is_str(C.rec[0].release, "web", "fluentbit: release from instance");
	is_str(C.rec[0].template_hash, "7d9c8b6f5", "fluentbit: template hash");
	is_str(C.rec[0].chart, "web-1.5.0", "fluentbit: chart");
	is_str(C.rec[0].host, "node-1", "fluentbit: host");
	is_str(C.rec[0].stream, "stderr", "fluentbit: stream");
	is_int(C.rec[0].r.ts_ns, T("2024-05-01T10:15:13Z") + 123456789,
	       "fluentbit: time");
	is_str(C.rec[1].message, "classic parser", "fluentbit: message key");
	is_int(C.rec[1].r.ts_ns, T("2024-05-01T10:15:13Z") + 250000000,
	       "fluentbit: @timestamp double");
	is_str(C.rec[1].release, "database", "fluentbit: annotation wins");
	is_str(C.rec[1].release_ns, "data", "fluentbit: release namespace");
	is_str(C.rec[1].owner_kind, "StatefulSet", "fluentbit: owner kind");
	is_str(C.rec[1].owner_name, "db", "fluentbit: owner name");
	is_str(C.rec[2].message, "inner", "fluentbit: JSON in log");
	is_str(C.rec[2].type, "error", "fluentbit: level in log");
	is_int(C.rec[2].r.ts_ns, T("2024-05-01T10:15:13Z") + 1000,
	       "fluentbit: ISO @timestamp");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_vector(void)
{
	static const char in[] =
		"{\"file\":\"/var/log/pods/shop_web-7d9c8b6f5-x2k4p_3f0c/web/0.log\",\"message\":\"upstream timed out\","
		"\"source_type\":\"kubernetes_logs\",\"stream\":\"stdout\",\"timestamp\":\"2024-05-01T10:15:13.123Z\","
		"\"kubernetes\":{\"container_id\":\"containerd://abc\",\"container_name\":\"web\",\"pod_name\":\"web-7d9c8b6f5-x2k4p\","
		"\"pod_namespace\":\"shop\",\"pod_node_name\":\"node-2\",\"pod_owner\":\"ReplicaSet/web-7d9c8b6f5\","
		"\"pod_labels\":{\"app.kubernetes.io/instance\":\"web\",\"pod-template-hash\":\"7d9c8b6f5\"}}}\n"
		"{\"file\":\"/var/log/pods/data_db-0_uid/pg/1.log\",\"message\":\"path only\",\"source_type\":\"kubernetes_logs\","
		"\"timestamp\":\"2024-05-01T10:15:14Z\"}\n";
	struct ingest *ing = RUN(NULL, "-", in);

	is_int(C.n, 2, "vector: two records");
	is_int(C.rec[0].r.format, RT_FMT_VECTOR, "vector: format");
	is_str(C.rec[0].message, "upstream timed out", "vector: message");
	is_str(C.rec[0].pod, "web-7d9c8b6f5-x2k4p", "vector: pod");
	is_str(C.rec[0].ns, "shop", "vector: namespace");
	is_str(C.rec[0].container, "web", "vector: container");
	is_str(C.rec[0].owner_kind, "ReplicaSet", "vector: owner kind");
	is_str(C.rec[0].owner_name, "web-7d9c8b6f5", "vector: owner name");
	is_str(C.rec[0].release, "web", "vector: release");
	is_str(C.rec[0].template_hash, "7d9c8b6f5", "vector: template hash");
	is_str(C.rec[0].host, "node-2", "vector: node");
	is_int(C.rec[0].r.ts_ns, T("2024-05-01T10:15:13Z") + 123000000,
	       "vector: timestamp");
	is_int(C.rec[1].r.format, RT_FMT_VECTOR, "vector: no kubernetes map");
	is_str(C.rec[1].pod, "db-0", "vector: pod from file");
	is_str(C.rec[1].container, "pg", "vector: container from file");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_generic_json(void)
{
	static const char in[] =
		"{\"ts\":1714558513.5,\"level\":\"error\",\"msg\":\"payment failed\",\"error\":\"card declined\"}\n"
		"{\"time\":\"2024-05-01T10:15:13Z\",\"severity\":\"WARNING\",\"message\":\"disk 91%\"}\n"
		"{\"timestamp\":\"2024-05-01 12:15:13.5 +0200 CEST\",\"err\":\"boom\"}\n"
		"{\"time_local\":\"01/May/2024:10:15:13 +0000\",\"status\":502,\"request\":\"GET / HTTP/1.1\"}\n"
		"{\"level\":50,\"time\":1714558513000,\"msg\":\"pino\"}\n"
		"{\"error\":{\"code\":1},\"log\":\"log key\\n\"}\n"
		"{\"msg\":\"multi\\nline \\u003cb\\u003e \\ud83d\\ude00\"}\n";
	struct ingest *ing = RUN(NULL, "-", in);

	is_int(C.n, 7, "json: seven records");
	is_int(C.rec[0].r.format, RT_FMT_JSON, "json: format");
	is_str(C.rec[0].message, "payment failed: card declined", "json: msg joined with the error beside it");
	is_str(C.rec[0].type, "error", "json: level");
	is_int(C.rec[0].r.ts_ns, T("2024-05-01T10:15:13Z") + 500000000,
	       "json: epoch seconds");
	is_str(C.rec[1].message, "disk 91%", "json: message key");
	is_str(C.rec[1].type, "WARNING", "json: severity");
	is_int(C.rec[1].r.ts_ns, T("2024-05-01T10:15:13Z"), "json: time");
	is_str(C.rec[2].message, "boom", "json: err key");
	is_int(C.rec[2].r.ts_ns, T("2024-05-01T10:15:13Z") + 500000000,
	       "json: Go Time.String()");
	is_str(C.rec[3].message, C.rec[3].raw, "json: no message key, raw");
	is_int(C.rec[3].r.ts_ns, T("2024-05-01T10:15:13Z"), "json: time_local");
	is_str(C.rec[4].type, "error", "json: numeric level");
	is_int(C.rec[4].r.ts_ns, T("2024-05-01T10:15:13Z"), "json: epoch ms");
	is_str(C.rec[5].message, "log key", "json: log key, object error skipped");
	is_str(C.rec[6].message, "multi\nline <b> \xf0\x9f\x98\x80",
	       "json: escapes, surrogate pair");
	ingest_free(ing);
	collect_reset(&C);
}

/* An array of log objects (jq output, an exporter's batch): each element
 * read alone, as the root objects above are; a docker element is one
 * record, with no stream to join, and an object with a Kubernetes-like
 * member that is no Kubernetes object is still a log record. */
static void test_json_array(void)
{
	static const char in[] =
		"[{\"log\":\"piece \",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:15:14Z\"},"
		"{\"log\":\"caf\\u00e9\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:15Z\"},"
		"{\"log\":\"x\",\"kubernetes\":{\"pod_name\":\"web-1\",\"namespace_name\":\"shop\"}},"
		"{\"kind\":\"Widget\",\"msg\":\"not kube\",\"level\":\"warn\"}, 7]\n"
		"{\"kind\":\"Widget\",\"metadata\":{},\"msg\":\"alone\"}\n";
	struct ingest *ing = RUN(NULL, "-", in);

	is_int(C.n, 5, "array: a record per object, and the lone object");
	is_int(C.rec[0].r.format, RT_FMT_DOCKER, "array: docker element");
	is_str(C.rec[0].message, "piece ", "array: a docker piece alone");
	is_str(C.rec[0].stream, "stderr", "array: docker stream");
	is_int(C.rec[0].r.ts_ns, T("2024-05-01T10:15:14Z"), "array: docker time");
	is_str(C.rec[1].message, "caf\xc3\xa9", "array: docker log chomped, \\u read");
	is_int(C.rec[2].r.format, RT_FMT_FLUENTBIT, "array: Fluent Bit element");
	is_str(C.rec[2].pod, "web-1", "array: Fluent Bit pod");
	is_int(C.rec[3].r.format, RT_FMT_JSON, "array: kind but no Kubernetes");
	is_str(C.rec[3].message, "not kube", "array: its message");
	is_str(C.rec[3].type, "warn", "array: its level");
	is_str(C.rec[4].message, "alone", "object with kind and metadata: a log");
	ingest_free(ing);
	collect_reset(&C);
}

/* The fields structured loggers put errors in, beside the message. */
static void test_json_causes(void)
{
	static const char in[] =
		"{\"level\":\"error\",\"msg\":\"Reconciler error\",\"reason\":\"configmap \\\"web\\\" not found\"}\n"
		"{\"message\":\"request failed\",\"error\":{\"type\":\"java.net.UnknownHostException\",\"message\":\"db\"}}\n"
		"{\"levelname\":\"ERROR\",\"message\":\"db down\",\"exc_info\":\"Traceback (most recent call last):\\nOperationalError: refused\"}\n"
		"{\"log.level\":\"error\",\"message\":\"query failed\",\"error.type\":\"PSQLException\",\"error.message\":\"auth failed\"}\n"
		"{\"level\":50,\"msg\":\"boom\",\"err\":{\"type\":\"Error\",\"message\":\"connect ECONNREFUSED\",\"stack\":\"Error: connect ECONNREFUSED\\n at x\"}}\n"
		"{\"level\":\"info\",\"msg\":\"retry ok\",\"error\":\"\",\"reason\":\"retry ok\"}\n"
		"{\"@mt\":\"Request failed\",\"@l\":\"Error\",\"@x\":\"SocketException (111): Connection refused\"}\n"
		"{\"reason\":\"BackOff\",\"error\":\"dial tcp: refused\",\"exception\":\"dial tcp: refused\"}\n"
		"2024-05-01T10:15:13Z stderr F {\"msg\":\"sync failed\",\"reason\":\"secret \\\"tls\\\" not found\"}\n";
	struct ingest *ing = RUN(NULL, "-", in);

	is_int(C.n, 9, "causes: nine records");
	is_str(C.rec[0].message, "Reconciler error: configmap \"web\" not found",
	       "causes: reason joined");
	is_str(C.rec[1].message,
	       "request failed: java.net.UnknownHostException: db",
	       "causes: error object, type and message");
	is_str(C.rec[2].message,
	       "db down: Traceback (most recent call last):\nOperationalError: refused",
	       "causes: exc_info");
	is_str(C.rec[3].message, "query failed: PSQLException: auth failed",
	       "causes: ECS flat keys, type first");
	is_str(C.rec[4].message, "boom: Error: connect ECONNREFUSED",
	       "causes: pino err object, its message before its stack");
	is_str(C.rec[4].type, "error", "causes: level kept");
	is_str(C.rec[5].message, "retry ok",
	       "causes: empty and repeated ones dropped");
	is_str(C.rec[6].message,
	       "Request failed: SocketException (111): Connection refused",
	       "causes: Serilog template and exception");
	is_str(C.rec[6].type, "Error", "causes: Serilog level");
	is_str(C.rec[7].message, "dial tcp: refused: BackOff",
	       "causes: no message, causes best first, each once");
	is_str(C.rec[8].message, "sync failed: secret \"tls\" not found",
	       "causes: a CRI payload's reason");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_text_times(void)
{
	static const char in[] =
		"2024-05-01T10:15:13.25Z INFO started\n"
		"[2024-05-01 10:15:13,500] ERROR boom\n"
		"E0501 10:15:13.123456    1 reflector.go:138] failed\n"
		"no time here\n"
		"[pod/web-7d9c8b6f5-x2k4p/web] 2024-05-01T10:15:14Z {\"msg\":\"prefixed\"}\n"
		"[pod/x] not a prefix\n";
	struct ingest *ing = RUN(NULL, "-", in);

	is_int(C.n, 6, "text: six records");
	is_str(C.rec[4].pod, "web-7d9c8b6f5-x2k4p", "text: kubectl --prefix pod");
	is_str(C.rec[4].container, "web", "text: kubectl --prefix container");
	is_int(C.rec[4].r.ts_ns, T("2024-05-01T10:15:14Z"),
	       "text: time after the prefix");
	is_str(C.rec[4].message, "2024-05-01T10:15:14Z {\"msg\":\"prefixed\"}",
	       "text: message after the prefix");
	is_str(C.rec[5].pod, "", "text: malformed prefix ignored");
	is_str(C.rec[5].message, "[pod/x] not a prefix", "text: line kept");
	is_int(C.rec[0].r.ts_ns, T("2024-05-01T10:15:13Z") + 250000000,
	       "text: RFC 3339 prefix");
	is_int(C.rec[1].r.ts_ns, T("2024-05-01T10:15:13Z") + 500000000,
	       "text: python logging prefix");
	is_int(C.rec[3].r.ts_ns, 0, "text: none");
	is_str(C.rec[2].message, "E0501 10:15:13.123456    1 reflector.go:138] failed",
	       "text: message is the line");
	ingest_free(ing);
	collect_reset(&C);
}

/* defer_payload: which JSON payloads wait, and what undeferring gives. */
struct deferred {
	int n, deferred;
	char msg[10][128], type[10][16];
};

static int undefer_cb(void *ctx, struct rt_record *rec)
{
	struct deferred *d = ctx;
	struct rt_arena a;

	if (d->n == 10)
		return 0;
	rt_arena_init(&a);
	if (rec->flags & RT_REC_DEFERRED) {
		d->deferred |= 1 << d->n;
		ok(rec->message.n && rec->message.p[0] == '{',
		   "record %d: a deferred message is the payload's text", d->n);
	}
	ingest_undefer(rec, &a);
	ok(!(rec->flags & RT_REC_DEFERRED), "record %d: undeferred", d->n);
	snprintf(d->msg[d->n], sizeof(d->msg[0]), "%.*s", (int)rec->message.n,
		 rec->message.p);
	snprintf(d->type[d->n], sizeof(d->type[0]), "%.*s", (int)rec->type.n,
		 rec->type.p ? rec->type.p : "");
	d->n++;
	rt_arena_release(&a);
	return 0;
}

static void test_deferred(void)
{
	static const char text[] =
		"2024-05-01T10:15:13Z stderr F {\"level\":\"error\",\"msg\":\"dial tcp: connection refused\"}\n"
		"2024-05-01T10:15:14Z stderr F {\"msg\":\"cannot connect\",\"error\":\"dial tcp: connection refused\"}\n"
		"2024-05-01T10:15:15Z stderr F {\"msg\":\"configmap \\\"x\\\" not found\",\"lvl\":\"warn\"}\n"
		"2024-05-01T10:15:16Z stdout F plain text, nothing to defer\n"
		"2024-05-01T10:15:16Z stdout F {\"level\":\"error\",\"msg\":\"cannot connect\",\"err\" : \"refused\"}\n"
		"2024-05-01T10:15:16Z stdout F {\"msg\":\"sync failed\",\"stream\":\"a\",\"reason\":\"timeout\"}\n"
		"2024-05-01T10:15:16Z stdout F {\"msg\":\"ok\",\"stream\":\"a\",\"source\":\"b\",\"type\":\"c\"}\n"
		"{\"log\":\"{\\\"level\\\":\\\"info\\\",\\\"message\\\":\\\"ready\\\"}\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:17Z\"}\n";
	struct ingest_opts o = { .defer_payload = true };
	struct ingest *in = ingest_new(&o);
	struct deferred d = { 0 };
	struct rt_arena a;

	rt_arena_init(&a);
	ingest_feed(in, "x.log", text, sizeof(text) - 1, &a, undefer_cb, &d);
	ingest_finish(in, "x.log", &a, undefer_cb, &d);
	is_int(d.n, 8, "eight records");
	is_int(d.deferred, 1 << 0 | 1 << 6 | 1 << 7, "deferred: the plain "
	       "payloads (a cause to join, an escape or no JSON decode at once)");
	is_str(d.msg[0], "dial tcp: connection refused", "undeferred message");
	is_str(d.type[0], "error", "undeferred level");
	is_str(d.msg[1], "cannot connect: dial tcp: connection refused",
	       "msg and error joined at once");
	is_str(d.msg[2], "configmap \"x\" not found", "escapes decoded at once");
	is_str(d.type[2], "warn", "its level");
	is_str(d.msg[3], "plain text, nothing to defer", "text as it was");
	is_str(d.msg[4], "cannot connect: refused", "a spaced cause key too");
	is_str(d.msg[5], "sync failed: timeout", "a reason joined at once");
	is_str(d.msg[6], "ok", "keys that only look like causes wait");
	is_str(d.msg[7], "ready", "a docker line's payload, undeferred");
	is_str(d.type[7], "info", "and its level");
	ingest_free(in);
	rt_arena_release(&a);
}

/* How many of the records of lines, a CRI line per payload, were
 * deferred. */
static int deferred_of(char payloads[][96], int n)
{
	struct ingest_opts o = { .defer_payload = true };
	static char text[COLLECT_MAX * 128];
	size_t at = 0;
	int deferred = 0;

	for (int i = 0; i < n; i++)
		at += (size_t)snprintf(text + at, sizeof(text) - at,
				       "2024-05-01T10:15:13Z stdout F %s\n",
				       payloads[i]);
	collect_reset(&C);
	ingest_free(collect_run(&C, &o, "-", text, at, 0));
	for (int i = 0; i < C.n; i++)
		deferred += !!(C.rec[i].r.flags & RT_REC_DEFERRED);
	return C.n == n ? deferred : -1;
}

/*
 * Every cause key stops a payload from waiting, wherever it falls among
 * the scan's blocks (the message's length moves it over every offset of
 * two blocks, the value's length into the last block or not); a string
 * that differs from it in any of the first bytes the scan sorts by, or
 * runs on past it, does not.
 */
static void test_deferred_keys(void)
{
	static const char *const keys[] = {
		"error", "err", "error.type", "error.message", "exception",
		"exc_info", "reason", "stack_trace", "error.stack_trace",
		"stack", "@x", "thrown",
	};
	static char yes[2 * 34][96], no[4 * 34][96];

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *key = keys[k];
		int ny = 0, nn = 0;

		for (int pad = 0; pad < 34; pad++) {
			for (int lv = 0; lv < 2; lv++)
				snprintf(yes[ny++], sizeof(yes[0]),
					 "{\"msg\":\"%.*s\",\"%s\":\"%s\"}",
					 pad, "abcdefghijklmnopqrstuvwxyzabcdefgh",
					 key, lv ? "a value long enough" : "v");
			for (size_t j = 0; j < 3 && key[j]; j++) {
				char alt[24];

				snprintf(alt, sizeof(alt), "%s", key);
				alt[j] = 'Q';
				snprintf(no[nn++], sizeof(no[0]),
					 "{\"msg\":\"%.*s\",\"%s\":1}", pad,
					 "abcdefghijklmnopqrstuvwxyzabcdefgh", alt);
			}
			snprintf(no[nn++], sizeof(no[0]),
				 "{\"msg\":\"%.*s\",\"%sq\":1}", pad,
				 "abcdefghijklmnopqrstuvwxyzabcdefgh", key);
		}
		is_int(deferred_of(yes, ny), 0, "cause key %s: never deferred",
		       key);
		is_int(deferred_of(no, nn), nn, "near %s: always deferred", key);
	}
	/* An escape anywhere, the last byte too, is decoded at once. */
	for (int pad = 0; pad < 34; pad++)
		snprintf(yes[pad], sizeof(yes[0]), "{\"msg\":\"%.*s\"}\\", pad,
			 "abcdefghijklmnopqrstuvwxyzabcdefgh");
	is_int(deferred_of(yes, 34), 0, "a backslash last: never deferred");
	collect_reset(&C);
}

int main(void)
{
	test_cri_times();
	test_cri_join();
	test_docker();
	test_fluentbit();
	test_vector();
	test_generic_json();
	test_json_array();
	test_json_causes();
	test_text_times();
	test_deferred();
	test_deferred_keys();
	return done_testing();
}
