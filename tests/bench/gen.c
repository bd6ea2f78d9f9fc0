/*
 * gen.c: deterministic benchmark corpora for `make bench`.
 *
 *   gen cri LINES [SEED]     container logs in CRI format: application noise
 *                            (access logs, JSON logs, multi-line stack traces,
 *                            decoys that use the words of errors) with about
 *                            1% real error lines
 *   gen events LINES [SEED]  compact core/v1 Event JSON, about 20% Warning
 *   gen release LINES        one release's Warning Events (all tagged), as an
 *                            event exporter writes them: pods of workload
 *                            shop-api labelled app.kubernetes.io/instance=shop
 *   gen newpods N START      N more of them, each the first pod of a new
 *                            workload shop-wNNNN of that release, timed after
 *                            line START of `gen release`
 *   gen again LINES          the same Events as `gen release LINES`, each
 *                            re-emitted five minutes later with its count
 *                            up by 5 (an Event's update in a watch stream)
 *   gen crirep LINES [NGINX] one container's CRI log (name the file
 *                            POD_NS_CONTAINER-ID.log) with about 2.5% tagged
 *                            lines: nginx 5xx access lines (NGINX per mille
 *                            of all lines, 15 by default; each differs in
 *                            its client and time) and a crash loop's lines,
 *                            the same few errors repeated; the rest noise
 *
 * The same arguments always give the same bytes, so runs compare.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

/* xorshift64*: fast, deterministic, good enough for a corpus. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static unsigned pick(unsigned n)
{
	return (unsigned)(rnd() % n);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const paths[] = {
	"/api/v1/orders", "/api/v1/payments", "/healthz", "/metrics",
	"/api/v2/users/profile", "/static/app.js", "/v1/predict",
};
static const char *const methods[] = { "GET", "POST", "PUT", "DELETE" };
static const int statuses[] = { 200, 200, 200, 200, 201, 204, 301, 304, 404 };

/* Lines that share words with errors but are not errors. */
static const char *const decoys[] = {
	"level=info msg=\"retrying after error cleared\" attempt=1",
	"error_count=0 warnings=0 checks passed",
	"Readiness probe succeeded for container web",
	"connection established to redis:6379 after 1 attempt",
	"configmap/app-config created",
	"no error in configuration file /etc/app/config.yaml",
	"permission check passed for user app on /data",
	"Successfully pulled image \"registry.local/web:1.4.2\" in 1.2s",
	"Release \"web\" has been upgraded. Happy Helming!",
	"helm.sh/chart=web-1.4.2 app.kubernetes.io/managed-by=Helm",
};

/* Real failures, in the wording the default packs tag. */
static const char *const errors[] = {
	"MountVolume.SetUp failed for volume \"haproxy-config\" : configmap \"haproxy-config\" not found",
	"[ALERT]    (1) : config : Cannot open configuration file/directory /etc/haproxy/haproxy.cfg : No such file or directory",
	"open /etc/app/config.yaml: permission denied",
	"Error: INSTALLATION FAILED: cannot re-use a name that is still in use",
	"Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress",
	"Back-off restarting failed container web in pod web-7d9c8b6f5-x2k4p_shop(3f0c)",
	"Error 111 connecting to redis:6379. Connection refused.",
	"FATAL:  password authentication failed for user \"payments\"",
	"error: Dirty database version 23. Fix and force version.",
	"dial tcp: lookup pg-primary.prod.svc on 10.96.0.10:53: no such host",
	"Liveness probe failed: HTTP probe failed with statuscode: 503",
	"exec /app/server: exec format error",
	"nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)",
	"Memory cgroup out of memory: Killed process 4242 (java) total-vm:4194304kB",
	"Failed to pull image \"registry.local/web:9.9.9\": rpc error: code = NotFound desc = manifest unknown",
};

static void ts(char *out, size_t n, uint64_t i)
{
	unsigned s = (unsigned)(i / 2000), us = (unsigned)(i % 2000) * 500;

	snprintf(out, n, "2024-11-03T%02u:%02u:%02u.%06uZ", 10 + s / 3600 % 12,
		 s / 60 % 60, s % 60, us);
}

static void noise_line(char *msg, size_t n)
{
	switch (pick(4)) {
	case 0:
		snprintf(msg, n, "10.%u.%u.%u - - [03/Nov/2024:14:41:07 +0000] \"%s %s/%u HTTP/1.1\" %d %u \"-\" \"Go-http-client/1.1\" rt=0.%03u uid=%016" PRIx64,
			 pick(255), pick(255), pick(255), methods[pick(COUNT(methods))],
			 paths[pick(COUNT(paths))], pick(100000),
			 statuses[pick(COUNT(statuses))], pick(50000), pick(1000), rnd());
		break;
	case 1:
		snprintf(msg, n, "{\"level\":\"info\",\"ts\":1730644867.%06u,\"caller\":\"server/handler.go:%u\",\"msg\":\"request completed\",\"path\":\"%s\",\"duration_ms\":%u,\"request_id\":\"%016" PRIx64 "\"}",
			 pick(1000000), pick(900), paths[pick(COUNT(paths))], pick(400), rnd());
		break;
	case 2:
		snprintf(msg, n, "I1103 14:41:07.%06u       1 reconciler.go:%u] \"Reconciled object\" controller=\"deployment\" namespace=\"shop\" name=\"web-%u\" generation=%u took=%ums",
			 pick(1000000), pick(500), pick(50), pick(90), pick(300));
		break;
	default:
		snprintf(msg, n, "%s", decoys[pick(COUNT(decoys))]);
	}
}

static void gen_cri(uint64_t lines)
{
	char when[40], msg[512];

	for (uint64_t i = 0; i < lines; i++) {
		const char *stream = "stdout";
		unsigned r = pick(1000);

		ts(when, sizeof(when), i);
		if (r < 10) {
			snprintf(msg, sizeof(msg), "%s", errors[pick(COUNT(errors))]);
			stream = "stderr";
		} else if (r < 40 && i + 4 < lines) {
			/* A stack trace: several lines that match nothing. */
			printf("%s stderr F java.lang.IllegalStateException: order %u in state SHIPPED\n", when, pick(100000));
			printf("%s stderr F \tat com.example.orders.OrderService.transition(OrderService.java:%u)\n", when, pick(900));
			printf("%s stderr F \tat com.example.orders.OrderController.update(OrderController.java:%u)\n", when, pick(900));
			i += 2;
			continue;
		} else {
			noise_line(msg, sizeof(msg));
		}
		printf("%s %s F %s\n", when, stream, msg);
	}
}

/* A crash loop: the same few lines, again and again. */
static const char *const crash_lines[] = {
	"Error 111 connecting to redis:6379. Connection refused.",
	"dial tcp: lookup pg-primary.prod.svc on 10.96.0.10:53: no such host",
	"FATAL:  password authentication failed for user \"payments\"",
};

static void gen_crirep(uint64_t lines, unsigned nginx)
{
	char when[40], msg[512];

	for (uint64_t i = 0; i < lines; i++) {
		unsigned r = pick(1000);
		const char *stream = "stdout";

		ts(when, sizeof(when), i);
		if (r < nginx) {
			snprintf(msg, sizeof(msg), "10.%u.%u.%u - - [03/Nov/2024:%.8s +0000] \"%s %s/%u HTTP/1.1\" %d %u \"-\" \"Go-http-client/1.1\"",
				 pick(255), pick(255), pick(255), when + 11,
				 methods[pick(COUNT(methods))],
				 paths[pick(COUNT(paths))], pick(100000),
				 502 + (int)pick(3), pick(500));
		} else if (r < 25) {
			snprintf(msg, sizeof(msg), "%s", crash_lines[pick(COUNT(crash_lines))]);
			stream = "stderr";
		} else {
			noise_line(msg, sizeof(msg));
		}
		printf("%s %s F %s\n", when, stream, msg);
	}
}

static const char *const normal_events[][2] = {
	{ "Scheduled", "Successfully assigned shop/%s to node-%u" },
	{ "Pulled", "Container image \"registry.local/web:1.4.2\" already present on machine (pod %s, node %u)" },
	{ "Created", "Created container web in %s on node-%u" },
	{ "Started", "Started container web in %s on node-%u" },
};

static const char *const warning_events[][2] = {
	{ "FailedMount", "MountVolume.SetUp failed for volume \"cfg\" : configmap \"%s-config\" not found (node-%u)" },
	{ "BackOff", "Back-off restarting failed container web in pod %s_shop(node-%u)" },
	{ "Unhealthy", "Readiness probe failed: Get \"http://10.1.2.3:8080/healthz\": dial tcp 10.1.2.3:8080: connect: connection refused (%s, node-%u)" },
	{ "Failed", "Error: configmap \"%s-env\" not found (node-%u)" },
	{ "FailedScheduling", "0/%2$u nodes are available: 3 Insufficient memory. preemption: pod %1$s" },
};

static void gen_events(uint64_t lines)
{
	char when[40], pod[64], msg[512];

	for (uint64_t i = 0; i < lines; i++) {
		int warn = pick(100) < 20;
		const char *const *ev = warn ? warning_events[pick(COUNT(warning_events))]
					     : normal_events[pick(COUNT(normal_events))];
		unsigned release = pick(40);

		ts(when, sizeof(when), i);
		snprintf(pod, sizeof(pod), "svc%u-7d9c8b6f5-%05u", release, pick(100000));
		snprintf(msg, sizeof(msg), ev[1], pod, 1 + pick(9));
		printf("{\"apiVersion\":\"v1\",\"count\":%u,\"eventTime\":null,"
		       "\"firstTimestamp\":\"%.19sZ\",\"involvedObject\":{\"apiVersion\":\"v1\","
		       "\"fieldPath\":\"spec.containers{web}\",\"kind\":\"Pod\",\"name\":\"%s\","
		       "\"namespace\":\"shop\",\"uid\":\"%016" PRIx64 "\"},\"kind\":\"Event\","
		       "\"lastTimestamp\":\"%.19sZ\",\"message\":\"",
		       1 + pick(5), when, pod, rnd(), when);
		for (const char *p = msg; *p; p++) {
			if (*p == '"' || *p == '\\')
				putchar('\\');
			putchar(*p);
		}
		printf("\",\"metadata\":{\"name\":\"%s.%016" PRIx64 "\",\"namespace\":\"shop\","
		       "\"uid\":\"%016" PRIx64 "\"},\"reason\":\"%s\",\"reportingComponent\":\"kubelet\","
		       "\"reportingInstance\":\"node-1\",\"source\":{\"component\":\"kubelet\",\"host\":\"node-1\"},"
		       "\"type\":\"%s\"}\n", pod, rnd(), rnd(), ev[0], warn ? "Warning" : "Normal");
	}
}

/* One exporter Event of release shop: pod, its template hash, line i;
 * seen again (later) 5 minutes after, with 5 more occurrences. */
static void shop_event(const char *workload, const char *pod, uint64_t i,
		       unsigned later)
{
	char when[40], last[40];

	ts(when, sizeof(when), i);
	ts(last, sizeof(last), i + later * 600000);
	printf("{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
	       "\"%s.%016" PRIx64 "\",\"namespace\":\"shop\",\"uid\":\"%016" PRIx64
	       "\"},\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"shop\","
	       "\"name\":\"%s\",\"labels\":{\"app.kubernetes.io/instance\":\"shop\","
	       "\"app.kubernetes.io/name\":\"%s\",\"pod-template-hash\":\"7d9c8b6f5\"}},"
	       "\"reason\":\"BackOff\",\"message\":\"Back-off restarting failed "
	       "container web in pod %s_shop\",\"firstTimestamp\":\"%.19sZ\","
	       "\"lastTimestamp\":\"%.19sZ\",\"count\":%u,\"type\":\"Warning\"}\n",
	       pod, rnd(), rnd(), pod, workload, pod, when, last,
	       1 + pick(5) + 5 * later);
}

static void gen_release(uint64_t lines, unsigned later)
{
	char pod[64];

	for (uint64_t i = 0; i < lines; i++) {
		snprintf(pod, sizeof(pod), "shop-api-7d9c8b6f5-%05u", pick(100000));
		shop_event("shop-api", pod, i, later);
	}
}

static void gen_newpods(uint64_t n, uint64_t start)
{
	char w[32], pod[64];

	for (uint64_t i = 0; i < n; i++) {
		snprintf(w, sizeof(w), "shop-w%04u", (unsigned)i);
		snprintf(pod, sizeof(pod), "%s-7d9c8b6f5-%05u", w, pick(100000));
		shop_event(w, pod, start + i, 0);
	}
}

int main(int argc, char **argv)
{
	uint64_t lines;

	if (argc < 3) {
		fputs("usage: gen cri|events LINES [SEED] | release LINES |"
		      " again LINES | newpods N START | crirep LINES [NGINX]\n", stderr);
		return 2;
	}
	lines = strtoull(argv[2], NULL, 10);
	rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) | 1 : 0x9e3779b97f4a7c15ULL;
	if (!strcmp(argv[1], "cri"))
		gen_cri(lines);
	else if (!strcmp(argv[1], "events"))
		gen_events(lines);
	else if (!strcmp(argv[1], "release"))
		gen_release(lines, 0);
	else if (!strcmp(argv[1], "again"))
		gen_release(lines, 1);
	else if (!strcmp(argv[1], "crirep")) {
		rng_state = 0x9e3779b97f4a7c15ULL;
		gen_crirep(lines, argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 15);
	} else if (!strcmp(argv[1], "newpods") && argc > 3)
		gen_newpods(lines, strtoull(argv[3], NULL, 10));
	else
		return 2;
	return ferror(stdout) ? 1 : 0;
}
