/*
 * test_ingest_fast.c: every JSON frame is read by json_scan.h; Events are
 * still read two ways, by fast_event.c and, in Lists and arrays, by
 * dec_kube.c from cJSON, and both must give the same records. Generated
 * lines (every optional member, escapes, odd numbers, duplicates,
 * envelopes, exporter events, docker and log records, broken JSON) go
 * through two ingests, one sending Events to dec_kube.c, and every record
 * field and counter is compared. Also: the scanner reads what cJSON reads
 * and refuses what it refuses, and text cleaning (SSE2 in text.c) flags
 * exactly the bytes it should.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../ingest/frame.h"
#include "record_dump.h"
#include "tap.h"

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

/* ---- generated lines ---- */

static const char *pick(unsigned *seed, const char *const *v, size_t n)
{
	return v[rnd(seed) % n];
}
#define PICK(seed, v) pick(seed, v, sizeof(v) / sizeof((v)[0]))

static void add(struct dump *t, const char *s)
{
	put(t, s, strlen(s));
}

/* A member "key":value, or nothing, after a separator. */
static void member(struct dump *t, bool *first, const char *key,
		   const char *val)
{
	if (!val)
		return;
	add(t, *first ? "" : t->n % 3 ? "," : ", ");
	add(t, "\"");
	add(t, key);
	add(t, "\":");
	add(t, val);
	*first = false;
}

static const char *const strings[] = {
	"\"web-7d9c8b6f5-x2k4p\"", "\"\"", "\"shop\"", "\"a\\\"b\\\\c\\/d\"",
	"\"tab\\there\\nnewline\"", "\"caf\xc3\xa9\"", "\"\\u00e9\"", "null",
	"3", "true", "{}", "[]", "\"Pod\"", "\"ReplicaSet\"",
	"\"\\\"edge\\\\\"", "\"\\n\"", "\"a\\t\\r\\b\\f\\/z\"",
};
static const char *const times[] = {
	"\"2024-11-03T10:15:13Z\"", "\"2024-11-03T10:15:13.123456Z\"",
	"\"2024-11-03T12:15:13+02:00\"", "\"\"", "null", "\"yesterday\"",
	"\"2024-11-03 10:15:13\"", "1730628913", "\"2024-11-03T10:15:13\\/Z\"",
	/* ing_rfc3339's edges: what only rt_time_parse reads, or reads
	 * differently, must still come out as rt_time_parse reads it. */
	"\"2024-11-03T10:15:13.Z\"", "\"2024-11-03T10:15:13+24:00\"",
	"\"2024-11-03t10:15:13.123456789123z\"",
	"\"2024-11-03T10:15:13+05:30x\"",
	"\"2024-11-03T10:15:13,5Z\"", "\" 2024-11-03T10:15:13Z\"",
	"\"2024-02-30T23:59:60-00:01\"", "\"1677-01-01T00:00:00Z\"",
	/* The epoch (1 ns: 0 is "unknown"), a fraction past it, and the
	 * offsets that bring a time on its first day before it. */
	"\"1970-01-01T00:00:00Z\"", "\"1970-01-01T00:00:00.5Z\"",
	"\"1970-01-01T01:00:00+01:00\"", "\"1970-01-01T00:30:00+01:00\"",
	"\"1970-01-01T00:00:00.25-00:30\"",
};
static const char *const counts[] = {
	"1", "2", "0", "-3", "1.5", "1e3", "\"4\"", "null", "007", "2.9999",
	"1E+2", "12345678901234567", "-0",
};
static const char *const messages[] = {
	"\"Back-off restarting failed container web in pod web-1_shop(u)\"",
	"\"MountVolume.SetUp failed for volume \\\"cfg\\\" : configmap "
	"\\\"cfg\\\" not found\"",
	"\"(combined from similar events): Readiness probe failed: HTTP "
	"probe failed with statuscode: 503\"",
	"\"\"", "\"Successfully assigned shop/web to node-1\"", "null",
	"\"line one\\nline two\\ttabbed \\\"quoted\\\" \\\\ back\"",
	"\"Error: configmap \\\"x\\\" not found\"",
};
static const char *const reasons[] = {
	"\"BackOff\"", "\"FailedMount\"", "\"Unhealthy\"", "\"\"", "null",
	"\"Pulled\"", "7",
};
static const char *const fieldpaths[] = {
	"\"spec.containers{web}\"", "\"spec.initContainers{init}\"",
	"\"spec.containers[2]\"", "\"spec.containers{}\"", "\"\"",
	"\"spec.ephemeralContainers{dbg}\"",
};

/* What kubernetes-event-exporter adds to the involved object. */
static const char *const labels[] = {
	"{\"app.kubernetes.io/instance\":\"web\",\"pod-template-hash\":"
	"\"7d9c8b6f5\",\"helm.sh/chart\":\"web-1.0\"}",
	"{\"release\":\"\",\"helm.sh/release\":\"w\\\"eb\"}",
	"{\"helmcharts.helm.cattle.io/chart\":\"traefik\"}",
	"{\"app.kubernetes.io/instance\":\"\",\"release\":\"old\","
	"\"release\":\"dup\"}",
	"{}", "null", "[]", "{\"pod-template-hash\":5}",
};
static const char *const annotations[] = {
	("{\"meta.helm.sh/release-name\":\"web-a\","
	 "\"meta.helm.sh/release-namespace\":\"shop\"}"),
	"{\"meta.helm.sh/release-name\":\"\"}", "{}", "\"x\"",
};
static const char *const owners[] = {
	"[{\"kind\":\"ReplicaSet\",\"name\":\"web-7d9c8b6f5\","
	"\"controller\":true}]",
	"[{\"kind\":\"Job\",\"name\":\"a\"},{\"kind\":\"StatefulSet\","
	"\"name\":\"b\",\"controller\":true}]",
	"[{\"kind\":\"Job\",\"name\":\"first\",\"controller\":false}]",
	"[]", "[3,{\"kind\":\"Job\"}]", "{}", "null",
};
static const char *const names[] = {
	"\"helm-install-traefik\"", "\"helm-delete-traefik-x2k4p\"",
	"\"helm-install-traefikx\"", "\"helm-install-\"",
	"\"web-7d9c8b6f5-x2k4p\"",
};

static void exporter_ref(struct dump *t, bool *first, unsigned *seed)
{
	if (!(rnd(seed) % 3)) {    /* a k3s helm-controller job's pod */
		member(t, first, "name", PICK(seed, names));
		member(t, first, "kind", rnd(seed) % 2 ? "\"Job\"" : "\"Pod\"");
		member(t, first, "labels", rnd(seed) % 4 ? labels[2] :
		       PICK(seed, labels));
		return;
	}
	if (rnd(seed) % 2)
		member(t, first, "name", PICK(seed, names));
	if (rnd(seed) % 2)
		member(t, first, "kind", rnd(seed) % 2 ? "\"Job\"" : "\"Pod\"");
	if (rnd(seed) % 3)
		member(t, first, "labels", PICK(seed, labels));
	if (rnd(seed) % 3)
		member(t, first, "annotations", PICK(seed, annotations));
	if (rnd(seed) % 3)
		member(t, first, "ownerReferences", PICK(seed, owners));
	if (!(rnd(seed) % 3))
		member(t, first, "deleted", rnd(seed) % 2 ? "false" : "true");
}

static void ref(struct dump *t, unsigned *seed)
{
	bool first = true;

	add(t, "{");
	if (!(rnd(seed) % 5))   /* first, so that its kind and name count */
		exporter_ref(t, &first, seed);
	if (rnd(seed) % 5)
		member(t, &first, "kind", PICK(seed, strings));
	if (rnd(seed) % 5)
		member(t, &first, "name", PICK(seed, strings));
	if (rnd(seed) % 3)
		member(t, &first, "namespace", PICK(seed, strings));
	if (rnd(seed) % 2)
		member(t, &first, "fieldPath", PICK(seed, fieldpaths));
	if (rnd(seed) % 2)
		member(t, &first, "uid", "\"0f3c\"");
	if (!(rnd(seed) % 12))
		member(t, &first, "labels", "{\"app.kubernetes.io/instance\":"
		       "\"web\",\"helm.sh/chart\":\"web-1.0\"}");
	if (!(rnd(seed) % 20))
		member(t, &first, "kind", "\"Job\"");
	add(t, "}");
}

static void event(struct dump *t, unsigned *seed)
{
	bool first = true;
	unsigned shape = rnd(seed) % 10;

	if (shape == 0)
		add(t, rnd(seed) % 2 ? "{\"type\":\"ADDED\",\"object\":" :
		    "{\"type\":\"MODIFIED\", \"object\" : ");
	if (shape == 1)
		add(t, "{\"type\":\"BOOKMARK\",\"object\":");
	add(t, rnd(seed) % 8 ? "{" : " { ");
	if (rnd(seed) % 4)
		member(t, &first, "apiVersion", rnd(seed) % 2 ? "\"v1\"" :
		       "\"events.k8s.io/v1\"");
	if (rnd(seed) % 4)     /* exporter payloads have no kind */
		member(t, &first, "kind", rnd(seed) % 12 ? "\"Event\"" :
		       PICK(seed, strings));
	if (rnd(seed) % 3)
		member(t, &first, "count", PICK(seed, counts));
	if (rnd(seed) % 3)
		member(t, &first, "eventTime", PICK(seed, times));
	if (rnd(seed) % 2)
		member(t, &first, "firstTimestamp", PICK(seed, times));
	if (rnd(seed) % 4) {
		add(t, first ? "\"" : ",\"");
		add(t, rnd(seed) % 5 ? "involvedObject\":" : "regarding\":");
		first = false;
		ref(t, seed);
	}
	if (rnd(seed) % 2)
		member(t, &first, "lastTimestamp", PICK(seed, times));
	if (rnd(seed) % 8)
		member(t, &first, rnd(seed) % 6 ? "message" : "note",
		       PICK(seed, messages));
	if (rnd(seed) % 4) {
		char meta[256];

		snprintf(meta, sizeof(meta), "{\"name\":%s,\"namespace\":%s%s%s}",
			 PICK(seed, strings), PICK(seed, strings),
			 rnd(seed) % 2 ? ",\"uid\":" : "",
			 rnd(seed) % 2 ? PICK(seed, strings) : "");
		if (strstr(meta, ",\"uid\":}"))
			strcpy(strstr(meta, ",\"uid\":}"), "}");
		member(t, &first, "metadata", meta);
	}
	if (rnd(seed) % 4)
		member(t, &first, "reason", PICK(seed, reasons));
	if (rnd(seed) % 3)
		member(t, &first, "reportingComponent", PICK(seed, strings));
	if (!(rnd(seed) % 4))
		member(t, &first, "reportingController", "\"kubelet\"");
	if (rnd(seed) % 3)
		member(t, &first, rnd(seed) % 4 ? "source" : "deprecatedSource",
		       rnd(seed) % 2 ? "{\"component\":\"kubelet\",\"host\":"
		       "\"node-1\"}" : "{\"host\":\"\"}");
	if (!(rnd(seed) % 4))
		member(t, &first, "series", rnd(seed) % 2 ?
		       "{\"count\":5,\"lastObservedTime\":\"2024-11-03T11:00:00"
		       ".5Z\"}" : "{\"count\":\"x\"}");
	if (!(rnd(seed) % 6))
		member(t, &first, "deprecatedCount", PICK(seed, counts));
	if (!(rnd(seed) % 10))
		member(t, &first, "deprecatedLastTimestamp", PICK(seed, times));
	if (rnd(seed) % 4)
		member(t, &first, "type", rnd(seed) % 2 ? "\"Warning\"" :
		       "\"Normal\"");
	if (!(rnd(seed) % 15))
		member(t, &first, "clusterName", "\"prod\"");
	if (!(rnd(seed) % 10))
		member(t, &first, "reason", "\"Duplicate\"");
	if (!(rnd(seed) % 10))
		member(t, &first, "extra", "[1,2,{\"a\":[true,false,null]},"
		       "-1.5e-3]");
	add(t, "}");
	if (shape <= 1)
		add(t, "}");
	if (!(rnd(seed) % 30))
		add(t, ",");    /* trailing junk: not JSON */
}

static void docker(struct dump *t, unsigned *seed)
{
	static const char *const logs[] = {
		"\"connection refused\\n\"", "\"partial piece \"",
		"\"end of it\\n\"", "\"\"", ("\"{\\\"level\\\":\\\"error\\\","
		"\\\"msg\\\":\\\"db down\\\"}\\n\""), "null", "\"\\t\\r\\n\"",
		"\"caf\xc3\xa9 \\u0041\\n\"",
	};
	bool first = true;

	add(t, "{");
	if (rnd(seed) % 10)
		member(t, &first, "log", PICK(seed, logs));
	if (rnd(seed) % 6)
		member(t, &first, "stream", rnd(seed) % 2 ? "\"stderr\"" :
		       rnd(seed) % 2 ? "\"stdout\"" : "\"other\"");
	if (rnd(seed) % 10)
		member(t, &first, "time", PICK(seed, times));
	if (!(rnd(seed) % 4))
		member(t, &first, "attrs", "{\"io.kubernetes.pod.name\":\"p-1\","
		       "\"io.kubernetes.pod.namespace\":\"\","
		       "\"io.kubernetes.container.name\":\"c\"}");
	if (!(rnd(seed) % 12))
		member(t, &first, "kubernetes", "{\"pod_name\":\"x\"}");
	add(t, "}");
}

/* ---- JSON log records: Fluent Bit, Vector, structured app logs ---- */

static const char *const log_texts[] = {
	"\"dial tcp 10.0.3.4:5432: connect: connection refused\"", "\"\"",
	"\"a\\\"b\\\\c\\/d\"", "\"line one\\n\"", "\"caf\xc3\xa9\"",
	"\"\\u00e9\"", "null", "3", "true", "{}", "[]", "\"timeout\\r\\n\"",
	("\"{\\\"level\\\":\\\"error\\\",\\\"msg\\\":\\\"db down\\\","
	 "\\\"error\\\":\\\"timeout\\\"}\""), "\"{\\\"msg\\\":\\\"x\\\"\"",
	"\"connection refused\"", "\"{\\\"lvl\\\":40,\\\"err\\\":\\\"e\\\"}\"",
};
static const char *const error_objs[] = {
	"{\"type\":\"IOError\",\"message\":\"disk full\\n\"}",
	"{\"name\":\"E\",\"stack\":\"at x\",\"class\":\"C\"}",
	"{\"kind\":\"\",\"msg\":\"m\",\"msg\":\"n\"}", "{}",
	"{\"message\":\"connection refused\"}", "{\"type\":3,\"reason\":\"r\"}",
};
static const char *const levels[] = {
	"\"error\"", "\"\"", "50", "null", "\"WARN\"", "25", "\"e\\\"rr\"",
	"65.5", "true", "39.5", "19.5",
};
static const char *const log_times[] = {
	"\"2024-11-03T14:00:04Z\"", "\"2024-11-03T14:00:04.5+01:00\"", "\"\"",
	"1730642404.031676", "1730642404031", "1730642404031676000", "-5",
	"0", "1e30", "\"yesterday\"", "\"03/Nov/2024:14:00:04 +0000\"", "null",
	"\"2024-11-03T14:00:04\\/Z\"",
};
static const char *const streams[] = {
	"\"stderr\"", "\"stdout\"", "\"other\"", "3", "\"\"", "\"std\\\"out\"",
};
static const char *const files[] = {
	"\"/var/log/pods/shop_web-7-7d9c8b6f5-p00000_p7/web/0.log\"",
	"\"/var/log/containers/x.log\"", "\"\"", "3",
	"\"\\/var\\/log\\/pods\\/ns_pod_uid\\/c\\/1.log\"",
};
static const char *const vec_owners[] = {
	"\"ReplicaSet/web-7d9c8b6f5\"", "\"noslash\"", "\"\"", "3",
	"\"Job\\/x\"", "\"/lead\"",
};
/* Members of the kubernetes map, Fluent Bit's and Vector's. */
static const char *const k8s_names[] = {
	"pod_name", "namespace_name", "container_name", "host", "labels",
	"annotations", "owner_references", "pod_namespace", "pod_node_name",
	"pod_labels", "pod_annotations", "pod_owner", "pod_id",
};

static const char *k8s_value(unsigned *seed, const char *name)
{
	if (strstr(name, "labels"))
		return PICK(seed, labels);
	if (strstr(name, "annotations"))
		return PICK(seed, annotations);
	if (!strcmp(name, "owner_references"))
		return PICK(seed, owners);
	if (!strcmp(name, "pod_owner"))
		return PICK(seed, vec_owners);
	return PICK(seed, strings);
}

static void k8s_map(struct dump *t, unsigned *seed, bool vector)
{
	bool first = true;

	add(t, "{");
	for (size_t i = 0; i < sizeof(k8s_names) / sizeof(k8s_names[0]); i++) {
		/* Each side's own names mostly, the other's now and then. */
		bool own = vector ? i == 0 || i == 2 || i >= 7 : i < 7 || i == 12;

		if (rnd(seed) % (own ? 4 : 12) == 0)
			continue;
		if (!own && rnd(seed) % 3)
			continue;
		member(t, &first, k8s_names[i], k8s_value(seed, k8s_names[i]));
	}
	add(t, "}");
}

/* Root names dec_log_json reads, the ones that make it dec_kube_json's,
 * and some it ignores. */
static const char *const log_names[] = {
	"msg", "message", "log", "MESSAGE", "Message", "@m", "@mt",
	"error", "err", "error.type", "error.message", "exception", "exc_info",
	"reason", "stack_trace", "error.stack_trace", "stack", "@x", "thrown",
	"level", "severity", "lvl", "levelname", "loglevel", "log.level", "@l",
	"time", "ts", "timestamp", "@timestamp", "time_local", "date",
	"stream", "file", "_p", "logtag", "request_id", "n",
};

static const char *log_value(unsigned *seed, size_t i)
{
	if (i < 7)
		return PICK(seed, log_texts);
	if (i < 19)
		return rnd(seed) % 3 ? PICK(seed, log_texts) :
		       PICK(seed, error_objs);
	if (i < 26)
		return PICK(seed, levels);
	if (i < 32)
		return PICK(seed, log_times);
	if (i == 32)
		return PICK(seed, streams);
	if (i == 33)
		return PICK(seed, files);
	if (i < 36)
		return rnd(seed) % 2 ? "\"F\"" : "\"P\"";
	return PICK(seed, strings);
}

static void log_record(struct dump *t, unsigned *seed)
{
	static const char *const kube[] = { "kind", "metadata", "object",
					    "info", "involvedObject" };
	unsigned shape = rnd(seed) % 10, members = 2 + rnd(seed) % 9;
	bool first = true;

	add(t, rnd(seed) % 8 ? "{" : " { ");
	for (unsigned k = 0; k < members; k++) {
		size_t i = rnd(seed) % (sizeof(log_names) / sizeof(log_names[0]));

		member(t, &first, log_names[i], log_value(seed, i));
	}
	if (shape < 4 || shape == 9) {
		add(t, first ? "\"kubernetes\":" : ",\"kubernetes\":");
		first = false;
		if (shape == 9)
			add(t, rnd(seed) % 2 ? "\"x\"" : "[]");
		else
			k8s_map(t, seed, shape >= 2);
	}
	if (shape == 2 || shape == 4 || !(rnd(seed) % 20))
		member(t, &first, "source_type", rnd(seed) % 4 ?
		       "\"kubernetes_logs\"" : "\"file\"");
	if (!(rnd(seed) % 25))
		member(t, &first, PICK(seed, kube), rnd(seed) % 2 ? "{}" :
		       "\"Event\"");
	add(t, "}");
	if (!(rnd(seed) % 40))
		add(t, "]");    /* trailing junk: not JSON */
}

static void differential(void)
{
	unsigned seed = 5, differ = 0;
	struct dump text = { 0 };

	for (int i = 0; i < 6000; i++) {
		unsigned kind = rnd(&seed) % 6;

		if (kind < 3)
			event(&text, &seed);
		else if (kind < 4)
			docker(&text, &seed);
		else
			log_record(&text, &seed);
		add(&text, rnd(&seed) % 10 ? "\n" : "\r\n");
	}
	for (size_t chunk = 1 << 20; chunk; chunk = chunk > 1000 ? 777 : 0) {
		struct dump fast = { 0 }, slow = { 0 };

		dump_run(text.p, text.n, chunk, true, NULL, &fast);
		dump_run(text.p, text.n, chunk, false, NULL, &slow);
		if (fast.n != slow.n || memcmp(fast.p, slow.p, fast.n)) {
			size_t k = 0;

			while (k < fast.n && k < slow.n && fast.p[k] == slow.p[k])
				k++;
			while (k && fast.p[k - 1] != '\n')
				k--;
			printf("# fast: %.300s\n# slow: %.300s\n", fast.p + k,
			       slow.p + k);
			differ++;
		}
		if (chunk > 1000)
			ok(fast.events > 1000 && fast.docker > 300 &&
			   fast.logs > 1500,
			   "the lines are a real test: %u events, %u docker "
			   "and %u JSON log records of %u", fast.events,
			   fast.docker, fast.logs, fast.records);
		free(fast.p);
		free(slow.p);
	}
	is_int(differ, 0, "json_scan and cJSON give the same records");
	free(text.p);
}

/* ---- the scanner's own answers ---- */

static void scanner(void)
{
	static const struct { const char *json; bool ok; } cases[] = {
		{ "{}", true }, { " { } ", true }, { "[]", true },
		{ "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}", true },
		{ "{\"a\":01}", true }, { "{\"a\":-0.5e+3}", true },
		{ "{\"a\":\"x\\u0041\"}", true }, { "{\"a\":\"x\\q\"}", false },
		{ "{\"a\\n\":1}", true }, { "{\"a\":1,}", false },
		{ "{\"a\":1", false }, { "{\"a\":\"x}", false },
		{ "{\"a\":tru}", false }, { "{\"a\":nul}", false },
		{ "{\"a\":-}", false }, { "{\"a\":.5}", false },
		{ "{\"a\":1.2.3}", false }, { "{\"a\":+1}", false },
		{ "{a:1}", false }, { "{\"a\" 1}", false }, { "{} x", false },
		{ "{\"a\":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}", false },
		{ "{\"a\":\"tab\there\"}", true }, { "{\"\":2}", true },
		{ "{\"a\\\"b\":1}", true }, { "{\"a\\\\\":1}", true },
		{ "{\"abc", false }, { "{\"a\"", false }, { "{\"a\":", false },
		{ "[\"a\",[\"b\",{}],\"c\\\"\"]", true },
		{ " { \"a\" : \"b\" , \"c\" : [ \"d\" , 1 ] , \"e\":{ } } ",
		  true },
		{ "{\"a\": \"b\", \"c\": [1, \"d\"]}", true },
		{ "{\"a\":\"b\" ,\"c\":\t1 ,\n\"d\" :2}", true },
		{ "{\"a\":\"b\" \"c\":1}", false }, { "[1 2]", false },
		{ "[\"a\":1]", false }, { "{\"a\":1]", false },
		{ "[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]", true },
		{ "[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct js_doc *doc = calloc(1, sizeof(*doc));
		const char *j = cases[i].json;
		int rc = js_parse(doc, j, strlen(j));
		cJSON *c = cJSON_ParseWithLengthOpts(j, strlen(j) + 1, NULL, 1);

		is_int(rc == 0, cases[i].ok, "js_parse %s", j);
		if (rc == 0)
			ok(c != NULL, "cJSON agrees it is JSON: %s", j);
		cJSON_Delete(c);
		js_doc_release(doc);
	free(doc);
	}
	{
		struct js_doc *doc = calloc(1, sizeof(*doc));
		const char *j = "{\"n\":[0.1,1e-7,123456789012345678,-2.5E3,"
				"007,1e999]}";
		cJSON *c = cJSON_Parse(j);
		const cJSON *it = cJSON_GetObjectItem(c, "n")->child;
		unsigned same = 0, k = 0;

		js_parse(doc, j, strlen(j));
		for (uint32_t i = js_get(doc, &doc->node[0], "n")->child; i && it;
		     i = doc->node[i].next, it = it->next, k++)
			same += doc->node[i].num == it->valuedouble ||
				(isinf(doc->node[i].num) && isinf(it->valuedouble));
		is_int(same, 6, "numbers read as cJSON reads them (%u)", k);
		cJSON_Delete(c);
		js_doc_release(doc);
	free(doc);
	}
	{
		struct js_doc *doc = calloc(1, sizeof(*doc));
		struct dump big = { 0 };

		/* More values than the nodes first made: the array grows. */
		add(&big, "[0");
		for (int i = 0; i < 5000; i++)
			add(&big, ",{\"k\":1}");
		add(&big, "]");
		is_int(js_parse(doc, big.p, big.n), 0,
		       "10,001 values: parsed");
		is_int(doc->count, 10002, "a node each");
		is_int(doc->node[doc->node[0].child].next ?
		       js_get(doc, &doc->node[doc->node[doc->node[0].child]
				.next], "k")->type : 0, JS_NUM,
		       "nodes made before the array grew still read");
		free(big.p);
		js_doc_release(doc);
	free(doc);
	}
}

/* Whether node k of doc is the value cJSON read as c: same type, same
 * names, same strings as C strings (cut at a NUL as cJSON's are), same
 * numbers, same members in the same order. */
static bool same_tree(const struct js_doc *doc, uint32_t k, const cJSON *c)
{
	const struct js_node *nd = &doc->node[k];
	char buf[256];
	uint32_t i;

	if (nd->key && (!c->string || strlen(c->string) != nd->keyn ||
			memcmp(c->string, nd->key, nd->keyn)))
		return false;
	switch (nd->type) {
	case JS_STR:
		return cJSON_IsString(c) &&
		       js_decode(nd, buf, sizeof(buf)) >= 0 &&
		       strcmp(buf, c->valuestring) == 0;
	case JS_NUM:
		return cJSON_IsNumber(c) && nd->num == c->valuedouble;
	case JS_TRUE:
		return cJSON_IsTrue(c);
	case JS_FALSE:
		return cJSON_IsFalse(c);
	case JS_NULL:
		return cJSON_IsNull(c);
	}
	if (nd->type == JS_OBJ ? !cJSON_IsObject(c) : !cJSON_IsArray(c))
		return false;
	for (i = nd->child, c = c->child; i && c; i = doc->node[i].next,
	     c = c->next)
		if (!same_tree(doc, i, c))
			return false;
	return !i && !c;
}

/*
 * What only cJSON read before: \u escapes (surrogate pairs, bytes that are
 * no hex digit, which cJSON reads as a NUL ending its string), escaped
 * names, numbers at cJSON's 63-byte cut, 1,000 nested values. The scanner
 * takes what cJSON takes and reads the same from it; \u0000 alone it
 * refuses, for the caller to reject.
 */
static void as_cjson_reads(void)
{
	static const char *const cases[] = {
		"{\"a\":\"\\u0041\"}", "{\"a\":\"caf\\u00e9 \\u20ac\"}",
		"{\"a\":\"\\ud83d\\ude00!\"}", "{\"a\":\"\\uD83D\\uDE00\"}",
		"{\"a\":\"\\ud83d\"}", "{\"a\":\"\\ude00\"}",
		"{\"a\":\"\\ud83dx\\ude00\"}", "{\"a\":\"\\ud83d\\u0041\"}",
		"{\"a\":\"\\ud83d\\ud83d\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":\"\\u123\"}", "{\"a\":\"x\\uZZZZy\"}",
		"{\"a\":\"x\\u00G0y\"}", "{\"a\":\"\\u1\\\"23\"}",
		"{\"a\\u0041\":1,\"b\\n\":\"\\u0062\"}",
		"{\"a\\uZZZZb\":1}", "{\"\\u00e9t\\u00e9\":[\"\\/\\b\\f\"]}",
		"{\"a\":\"\\u0000\"}", "[\"\\\\u0000\"]",
		"[\"\\ud800\\udc00\\udbff\\udfff\"]", "[\"\\u007f\\u0080\\u07ff"
		"\\u0800\\uffff\"]", "{\"a\":\"\\u\"}", "{\"a\":\"\\ux123\"}",
	};
	struct js_doc *doc = calloc(1, sizeof(*doc));
	unsigned wrong = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *j = cases[i];
		cJSON *c = cJSON_ParseWithLengthOpts(j, strlen(j) + 1, NULL, 1);
		int rc = js_parse(doc, j, strlen(j));
		bool nul = js_has_nul_escape(j, strlen(j));

		if (nul ? rc != RT_EPARSE : (rc == 0) != (c != NULL) ||
		    (c && !same_tree(doc, 0, c))) {
			printf("# read otherwise than cJSON: %s\n", j);
			wrong++;
		}
		cJSON_Delete(c);
	}
	is_int(wrong, 0, "escapes read as cJSON reads them");

	/* Numbers around the 64 bytes cJSON once copied them into (Debian's
	 * takes any length), and nesting around its limit of 1,000. */
	wrong = 0;
	for (size_t len = 60; len <= 80; len += len < 66 ? 1 : 14)
		for (int form = 0; form < 3; form++) {
			char j[128];
			cJSON *c;
			int rc;

			memset(j, '1', len + 1);
			j[0] = '[';
			if (form == 1)
				j[len / 2] = '.';
			if (form == 2)
				j[len - 1] = 'e';
			memcpy(j + len + 1, "]", 2);
			c = cJSON_ParseWithLengthOpts(j, strlen(j) + 1, NULL, 1);
			rc = js_parse(doc, j, strlen(j));
			if ((rc == 0) != (c != NULL) ||
			    (c && !same_tree(doc, 0, c))) {
				printf("# number read otherwise than cJSON: %s\n", j);
				wrong++;
			}
			cJSON_Delete(c);
		}
	is_int(wrong, 0, "numbers of 60 to 80 bytes as cJSON reads them");
	for (int depth = 999; depth <= 1001; depth++) {
		struct dump t = { 0 };
		cJSON *c;

		for (int k = 0; k < depth; k++)
			add(&t, k % 2 ? "{\"k\":" : "[");
		add(&t, "1");
		for (int k = depth - 1; k >= 0; k--)
			add(&t, k % 2 ? "}" : "]");
		c = cJSON_ParseWithLengthOpts(t.p, t.n + 1, NULL, 1);
		is_int(js_parse(doc, t.p, t.n) == 0, c != NULL,
		       "%d nested values: as cJSON (%s)", depth,
		       c ? "read" : "refused");
		cJSON_Delete(c);
		free(t.p);
	}
	js_doc_release(doc);
	free(doc);
}

/* Member names of every length up to 24, each with siblings that differ
 * in one byte or in length: js_get and js_pick compare names inline, in
 * 8- and 4-byte pieces, and must still find exactly the first equal one. */
static void member_names(void)
{
	struct js_doc *doc = calloc(1, sizeof(*doc));
	unsigned wrong = 0;

	for (size_t len = 0; len <= 24; len++) {
		char name[32], json[1024];
		size_t o = 0;

		memset(name, 'k', len);
		name[len] = '\0';
		o += (size_t)snprintf(json + o, sizeof(json) - o, "{");
		for (size_t at = 0; at < len; at++) {
			char twin[32];

			memcpy(twin, name, len + 1);
			twin[at] = 'x';
			o += (size_t)snprintf(json + o, sizeof(json) - o,
					      "\"%s\":0,", twin);
		}
		o += (size_t)snprintf(json + o, sizeof(json) - o,
				      "\"%sk\":1,\"%s\":2,\"%s\":3}", name,
				      name, name);
		if (js_parse(doc, json, o)) {
			wrong++;
			continue;
		}
		const struct js_node *got = js_get(doc, &doc->node[0], name);
		struct js_key key = { name, len };
		struct js_keyset set;
		const struct js_node *picked = NULL;

		/* js_pick wants no empty names (it hashes the first byte). */
		if (len) {
			js_keyset_init(&set, &key, 1);
			js_pick(doc, &doc->node[0], &set, &picked);
		}
		wrong += !got || got->num != 2 || (len && picked != got);
	}
	is_int(wrong, 0, "names of 0 to 24 bytes found exactly");
	js_doc_release(doc);
	free(doc);
}

/* Names and strings of every length up to 40, with an escape at every
 * place or none, at several distances from the end of the text: where
 * each ends is found 16 bytes at a time, the first 16 apart. */
static bool string_end(struct js_doc *doc, size_t len, size_t esc,
		       size_t post)
{
	char body[64], json[160];
	const struct js_node *m;
	size_t bn = len;
	int o;

	memset(body, 'x', len);
	if (esc > len) {
		o = snprintf(json, sizeof(json), "{\"%.*s\":\"%.*s\"}%*s",
			     (int)len, body, (int)len, body, (int)post, "");
		return js_parse(doc, json, (size_t)o) == 0 &&
		       (m = &doc->node[1])->keyn == len && m->n == len &&
		       !m->esc;
	}
	memmove(body + esc + 2, body + esc, len - esc);
	memcpy(body + esc, "\\\"", 2);
	bn += 2;
	o = snprintf(json, sizeof(json), "{\"%.*s\":1}%*s", (int)bn, body,
		     (int)post, "");
	if (js_parse(doc, json, (size_t)o) != 0 ||
	    (m = &doc->node[1])->keyn != len + 1 || m->key[esc] != '"')
		return false;   /* an escaped name is read decoded */
	o = snprintf(json, sizeof(json), "{\"k\":\"%.*s\"}%*s", (int)bn, body,
		     (int)post, "");
	return js_parse(doc, json, (size_t)o) == 0 &&
	       (m = &doc->node[1])->n == bn && m->esc;
}

static void string_ends(void)
{
	struct js_doc *doc = calloc(1, sizeof(*doc));
	unsigned wrong = 0, tries = 0;

	for (size_t len = 0; len <= 40; len++)
		for (size_t esc = 0; esc <= len + 1; esc++)
			for (size_t post = 0; post <= 18; post += 6, tries++)
				wrong += !string_end(doc, len, esc, post);
	is_int(wrong, 0, "names and strings end where they end (%u texts)",
	       tries);
	js_doc_release(doc);
	free(doc);
}

/* Which documents the fast path takes as Events: a refusal there is no
 * error the differential test could see (cJSON then reads the line the
 * same way), only the cost the fast path exists to save. */
static void events_told(void)
{
	static const struct { const char *json; bool event; } cases[] = {
		{ "{\"kind\":\"Event\",\"reason\":\"X\"}", true },
		{ "{\"kind\":\"Pod\",\"involvedObject\":{},\"reason\":\"X\"}",
		  false },
		{ "{\"involvedObject\":{},\"note\":\"x\"}", true },
		{ "{\"regarding\":{},\"message\":\"x\"}", true },
		{ "{\"involvedObject\":{},\"type\":\"Normal\"}", false },
		{ "{\"involvedObject\":[],\"reason\":\"X\"}", false },
		{ "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Event\"}}",
		  true },
		{ "{\"type\":\"DELETED\",\"object\":{\"regarding\":{},"
		  "\"reason\":\"X\"}}", true },
		{ "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Event\"}}",
		  false },
		{ "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\"}}",
		  false },
		{ "{\"type\":\"Warning\",\"object\":{\"kind\":\"Event\"},"
		  "\"kind\":\"Event\"}", true },
		{ "[{\"kind\":\"Event\"}]", false },
	};
	struct js_doc *doc = calloc(1, sizeof(*doc));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *j = cases[i].json;
		struct ing_event ev;

		if (js_parse(doc, j, strlen(j))) {
			ok(0, "js_parse %s", j);
			continue;
		}
		is_int(ing_event_of(doc, &ev), cases[i].event,
		       "an Event or not: %s", j);
	}
	js_doc_release(doc);
	free(doc);
}

/* ---- text cleaning ---- */

static bool plain(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\r' || c == '\n' ||
	       c == 0x1b;
}

/* A bad byte at every position of lines of every length up to 70: the
 * SSE2 run finder and the byte loop must agree with plain(). */
static void cleaning(void)
{
	static const unsigned char bad[] = { 0x00, 0x01, 0x08, 0x0b, 0x1f, 0x7f,
					     0x80, 0xc3, 0xff };
	unsigned wrong = 0, tries = 0;
	struct rt_arena a;

	rt_arena_init(&a);
	for (size_t len = 1; len <= 70; len++)
		for (size_t at = 0; at <= len; at++)
			for (size_t b = 0; b < sizeof(bad); b++) {
				char line[80];
				unsigned flags = 0;
				size_t junk = 0;
				struct rt_str out;

				memset(line, 'x', len);
				line[len / 3] = '\t';
				if (at < len)
					line[at] = (char)bad[b];
				out = ing_clean(&a, line, len, false, &flags, &junk);
				tries++;
				if (at == len || plain(bad[b]))
					wrong += flags != 0 || out.n != len;
				else
					wrong += flags == 0 || junk != 1 ||
						 out.n != len + 2;
				rt_arena_reset(&a);
			}
	rt_arena_release(&a);
	is_int(wrong, 0, "text cleaning flags exactly the bad byte (%u lines)",
	       tries);
}

/* ing_plain_run, the framer's one pass: it stops at the first byte that
 * is not printable ASCII (newline and tab included), at every position of
 * lines up to 70 bytes, and runs to the end when there is none. */
static void plain_runs(void)
{
	static const unsigned char stop[] = { '\n', '\t', '\r', 0x00, 0x1b,
					      0x1f, 0x7f, 0x80, 0xc3, 0xff };
	unsigned wrong = 0, tries = 0;

	for (size_t len = 0; len <= 70; len++)
		for (size_t at = 0; at <= len; at++)
			for (size_t b = 0; b < sizeof(stop); b++) {
				char line[80];

				memset(line, 'a' + (char)(len % 26), len);
				line[0] = len ? ' ' : line[0];
				if (at < len)
					line[at] = (char)stop[b];
				tries++;
				wrong += ing_plain_run(line, len) != at;
			}
	is_int(wrong, 0, "the plain run ends at the first other byte (%u lines)",
	       tries);
	is_int(ing_plain_run(" ~ 0123 Zz", 10), 10, "blank to tilde is plain");
}

/* ing_rfc3339 remembers the last second it parsed: repeated and changed
 * prefixes, fractions and zones give what rt_time_parse gives (on the
 * strict forms both accept; ".Z" and "+24:00" only rt_time_parse takes). */
static void remembered_second(void)
{
	static const char *const ts[] = {
		"2024-11-03T10:15:13Z", "2024-11-03T10:15:13.5Z",
		"2024-11-03T10:15:13.123456789Z", "2024-11-03T10:15:13+02:00",
		"2024-11-03T10:15:13-05:30", "2024-11-03T10:15:13.25+01:00",
		"2024-11-03T10:15:14Z", "2024-13-03T10:15:14Z",
		"2024-13-03T10:15:14Z", "2024-11-03T10:15:14Z",
		"2024-11-03t10:15:14z", "2024-11-03T10:15:14+23:59",
		"2024-11-03T10:15:14-00:01", "1600-01-01T00:00:00Z",
		"2024-02-30T10:15:14Z", "2024-11-03T10:15:14.000001Z",
		"1970-01-01T00:00:00Z", "1970-01-01T00:00:00.5Z",
		"1970-01-01T01:00:00+01:00", "1970-01-01T00:30:00+01:00",
		"1970-01-01T00:00:00.25-00:30", "1970-01-01T00:00:00Z",
	};
	unsigned wrong = 0;

	for (int rep = 0; rep < 2; rep++)
		for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
			int64_t a = 0, b = 0;
			size_t n = strlen(ts[i]), k = ing_rfc3339(ts[i], n, &a);
			bool ref = rt_time_parse(ts[i], n, &b) == 0;

			if ((k == n) != ref || (ref && a != b)) {
				printf("# %s: %zu %lld, rt_time_parse %d %lld\n",
				       ts[i], k, (long long)a, ref, (long long)b);
				wrong++;
			}
		}
	is_int(wrong, 0, "RFC 3339 times with a remembered second");
}

/* Fractions of every length from 1 to 12 digits, each with text after the
 * time (so that eight bytes are there to read at any digit), the way a CRI
 * line has it: the length read and the time are rt_time_parse's. The
 * bytes next to the digits, '/' and ':', end a fraction and spoil it. */
static void fraction_digits(void)
{
	static const char *const zones[] = { "Z", "+02:00", "-05:30", "z",
					     ":00Z", "/Z" };
	static const char *const after[] = { " stdout F x", "", " 12345678",
					     "Z" };
	unsigned wrong = 0, tries = 0;

	for (int len = 1; len <= 12; len++)
		for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++)
			for (size_t a = 0; a < 4; a++) {
				char ts[64], line[96];
				int64_t got = 0, want = 0;
				int n = snprintf(ts, sizeof(ts),
						 "2024-11-03T10:15:13.%.*s%s", len,
						 "908172635445", zones[z]);
				size_t k;

				snprintf(line, sizeof(line), "%s%s", ts, after[a]);
				bool valid = rt_time_parse(ts, (size_t)n, &want) == 0;

				k = ing_rfc3339(line, strlen(line), &got);
				tries++;
				if (valid != (k == (size_t)n) ||
				    (valid && got != want)) {
					printf("# %s: %zu %lld, want %d %d %lld\n",
					       line, k, (long long)got, valid, n,
					       (long long)want);
					wrong++;
				}
			}
	is_int(wrong, 0, "RFC 3339 fractions of 1 to 12 digits (%u times)",
	       tries);
}

int main(void)
{
	differential();
	scanner();
	as_cjson_reads();
	member_names();
	string_ends();
	events_told();
	cleaning();
	plain_runs();
	remembered_second();
	fraction_digits();
	return done_testing();
}
