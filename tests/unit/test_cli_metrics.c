/* What consume --http serves (cli/metrics.c), without a socket: the
 * Prometheus text exposition of a snapshot (every sample's metric has its
 * # TYPE, labels escaped, the histogram cumulative) and the /healthz and
 * /readyz verdicts in each state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cli/metrics.h"
#include "tap.h"

static const struct metrics_build build = { "0.1.0", "2.0.2", "3.40.1",
					    1730644867.0 };

/* The value of the sample line that starts with "name " or "name{...} "
 * exactly as given; -1 when there is none. */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (!strncmp(l, series, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	return -1;
}

/* Every sample line's metric (its name up to '{' or ' ', less a
 * histogram's _bucket/_sum/_count) has a # TYPE line before it. */
static int untyped_samples(const char *text)
{
	int bad = 0;
	char *copy = strdup(text), *save = NULL;

	for (char *l = strtok_r(copy, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char name[256], want[300];
		size_t n = strcspn(l, "{ ");

		if (l[0] == '#' || n >= sizeof(name))
			continue;
		memcpy(name, l, n);
		name[n] = '\0';
		for (const char *suf = "_bucket\0_sum\0_count\0"; *suf;
		     suf += strlen(suf) + 1) {
			size_t k = strlen(suf);

			if (n > k && !strcmp(name + n - k, suf) &&
			    strstr(text, "_seconds histogram") &&
			    !strncmp(name, "revtrail_commit_duration_seconds",
				     n - k))
				name[n - k] = '\0';
		}
		snprintf(want, sizeof(want), "# TYPE %s ", name);
		if (!strstr(text, want)) {
			printf("# no TYPE for: %s\n", l);
			bad++;
		}
	}
	free(copy);
	return bad;
}

static void fill(struct metrics_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->state = METRICS_RUNNING;
	s->progress_ms = 100000;
	s->messages = 705;
	s->records = 700;
	s->tagged = 640;
	s->rejects_empty = 5;
	s->batches = 3;
	s->registry_refused = 4;
	s->fb_helm_payload = 6;
	s->fb_docker_time = 7;
	s->fb_out_of_range = 8;
	s->times_local = 9;
	s->fb_helm_status = 10;
	s->oversize = 13;
	s->events_expired = 14;
	s->incidents_expired = 15;
	s->incidents_open = 12;
	s->wal_bytes = 5000000000;      /* past 32 bits */
	s->assigned = 2;
	s->nparts = 2;
	s->parts[0] = (struct metrics_part){ "k8s-events", 0, 300, 310, 10 };
	s->parts[1] = (struct metrics_part){ "we\"ird\\to\npic", 1, 7, -1, -1 };
}

static void test_render(void)
{
	static struct metrics m;
	struct metrics_snap *s = &m.snap;
	struct metrics_hist h;
	int64_t lag;
	size_t len = 0;
	char *text;

	metrics_init(&m, 100);
	fill(s);
	metrics_observe_commit(&m, 0.003);
	metrics_observe_commit(&m, 0.2);
	metrics_observe_commit(&m, 60);
	{
		struct metrics_snap copy;

		metrics_copy(&m, &copy, &h, &lag);
		text = metrics_render(&copy, &h, &build, &len);
	}
	ok(text && len == strlen(text), "rendered, length returned");
	is_int(untyped_samples(text), 0, "every sample's metric has # TYPE");
	ok(text[len - 1] == '\n', "ends in a newline");
	is_int(sample(text, "revtrail_messages_total"), 705, "messages");
	is_int(sample(text, "revtrail_records_tagged_total"), 640, "tagged");
	is_int(sample(text, "revtrail_rejects_total{reason=\"empty\"}"), 5,
	       "rejects by reason");
	is_int(sample(text, "revtrail_batches_total"), 3, "batches");
	is_int(sample(text, "revtrail_input_fallbacks_total{kind=\"helm_payload\"}"),
	       6, "undecodable Helm payloads");
	is_int(sample(text, "revtrail_input_fallbacks_total{kind=\"docker_time\"}"),
	       7, "bad docker times");
	is_int(sample(text, "revtrail_input_fallbacks_total{kind=\"time_out_of_range\"}"),
	       8, "times out of range");
	is_int(sample(text, "revtrail_input_fallbacks_total{kind=\"helm_status_incomplete\"}"),
	       10, "helm status blocks without a revision");
	is_int(sample(text, "revtrail_oversize_skipped_total"), 13,
	       "documents over --max-record");
	is_int(sample(text, "revtrail_retention_deleted_total{kind=\"events\"}"),
	       14, "events --retain deleted");
	is_int(sample(text, "revtrail_retention_deleted_total{kind=\"incidents\"}"),
	       15, "incidents --retain deleted");
	is_int(sample(text, "revtrail_helm_times_local_total"), 9,
	       "Helm times read in the local zone");
	is_int(sample(text, "revtrail_registry_refused_total"), 4,
	       "registry refusals");
	is_int(sample(text, "revtrail_incidents_open"), 12, "incidents open");
	is_int(sample(text, "revtrail_wal_bytes"), 5000000000LL,
	       "the WAL's size");
	is_int(sample(text, "revtrail_brokers_down"), 0, "brokers_down 0");
	is_int(sample(text, "revtrail_partition_lag{topic=\"k8s-events\","
		      "partition=\"0\"}"), 10, "lag of a partition");
	ok(strstr(text, "topic=\"we\\\"ird\\\\to\\npic\"") != NULL,
	   "a label value escaped (quote, backslash, newline)");
	ok(!strstr(text, "partition_lag{topic=\"we"),
	   "an unknown lag is left out, not -1");
	is_int(sample(text, "revtrail_commit_duration_seconds_bucket{le=\"0.001\"}"),
	       0, "histogram: none under 1 ms");
	is_int(sample(text, "revtrail_commit_duration_seconds_bucket{le=\"0.005\"}"),
	       1, "histogram: cumulative 5 ms");
	is_int(sample(text, "revtrail_commit_duration_seconds_bucket{le=\"0.25\"}"),
	       2, "histogram: cumulative 250 ms");
	is_int(sample(text, "revtrail_commit_duration_seconds_bucket{le=\"30\"}"),
	       2, "histogram: a minute is over every bound");
	is_int(sample(text, "revtrail_commit_duration_seconds_bucket{le=\"+Inf\"}"),
	       3, "histogram: +Inf counts all");
	is_int(sample(text, "revtrail_commit_duration_seconds_count"), 3,
	       "histogram: count");
	ok(sample(text, "revtrail_commit_duration_seconds_sum") > 60.2,
	   "histogram: sum");
	ok(strstr(text, "revtrail_build_info{version=\"0.1.0\",librdkafka="
		  "\"2.0.2\",sqlite=\"3.40.1\"} 1\n") != NULL, "build_info");
	free(text);

	s->incidents_open = -1;
	s->wal_bytes = -1;
	s->brokers_down = true;
	text = metrics_render(s, &h, &build, &len);
	ok(sample(text, "revtrail_incidents_open") < 0,
	   "unknown open incidents: no sample");
	ok(sample(text, "revtrail_wal_bytes") < 0 &&
	   strstr(text, "# TYPE revtrail_wal_bytes gauge\n"),
	   "unknown WAL size: typed, no sample");
	is_int(sample(text, "revtrail_brokers_down"), 1, "brokers_down 1");
	is_int(untyped_samples(text), 0, "still every sample typed");
	free(text);
	metrics_release(&m);
}

static void test_probes(void)
{
	static struct metrics_snap s;
	char why[256];

	fill(&s);
	strcpy(s.parts[1].topic, "k8s-logs");
	s.parts[1].lag = 5;
	ok(metrics_healthy(&s, 100000 + METRICS_STALL_MS, why, sizeof(why)),
	   "healthy: the loop came round within the bound (%s)", why);
	ok(!metrics_healthy(&s, 100001 + METRICS_STALL_MS, why, sizeof(why)),
	   "not healthy past it (%s)", why);
	ok(metrics_ready(&s, 100000, 15, why, sizeof(why)),
	   "ready: assigned, lag 15 within 15 (%s)", why);
	ok(!metrics_ready(&s, 100000, 14, why, sizeof(why)) &&
	   strstr(why, "lag 15"), "not ready over the bound (%s)", why);
	ok(!metrics_ready(&s, 100001 + METRICS_STALL_MS, 100, why, sizeof(why)),
	   "not ready when stuck (%s)", why);
	s.parts[1].lag = -1;
	ok(!metrics_ready(&s, 100000, 100, why, sizeof(why)) &&
	   strstr(why, "not known"), "not ready with a lag unknown (%s)", why);
	s.parts[1].lag = 0;
	s.brokers_down = true;
	ok(!metrics_ready(&s, 100000, 100, why, sizeof(why)) &&
	   strstr(why, "brokers"), "not ready with the brokers down (%s)", why);
	ok(metrics_healthy(&s, 100000, why, sizeof(why)),
	   "but healthy: an outage is no reason to restart");
	s.brokers_down = false;
	s.assigned = s.nparts = 0;
	ok(!metrics_ready(&s, 100000, 100, why, sizeof(why)) &&
	   strstr(why, "no partitions"), "not ready unassigned (%s)", why);
	s.state = METRICS_STARTING;
	ok(metrics_healthy(&s, 1 << 30, why, sizeof(why)),
	   "healthy while starting, however long");
	ok(!metrics_ready(&s, 0, 100, why, sizeof(why)), "not ready (%s)", why);
	s.state = METRICS_STOPPING;
	ok(metrics_healthy(&s, 1 << 30, why, sizeof(why)),
	   "healthy while shutting down");
	ok(!metrics_ready(&s, 0, 100, why, sizeof(why)), "not ready (%s)", why);
}

/* What the consume loop publishes as the WAL's size: the file's bytes, 0
 * when there is none (a checkpoint truncated it away, or not WAL mode). */
/* The Helm topics (consume --helm-topic): their partitions, and their lag
 * summed, left out while a partition's is unknown. */
static void test_helm_topic(void)
{
	struct metrics_snap *s = malloc(sizeof(*s));
	struct metrics_hist h = { 0 };
	size_t len;
	char *text;

	fill(s);
	s->helm_partitions = 3;
	s->helm_lag = 41;
	s->helm_topic_skipped = 7;
	text = metrics_render(s, &h, &build, &len);
	is_int(sample(text, "revtrail_helm_topic_partitions"), 3,
	       "the Helm topics' partitions");
	is_int(sample(text, "revtrail_helm_topic_skipped_total"), 7,
	       "their records without Helm state, skipped");
	is_int(sample(text, "revtrail_helm_topic_lag"), 41,
	       "their lag, summed");
	is_int(untyped_samples(text), 0, "each with its TYPE");
	free(text);
	s->helm_partitions = 0;
	s->helm_lag = -1;
	text = metrics_render(s, &h, &build, &len);
	is_int(sample(text, "revtrail_helm_topic_partitions"), 0,
	       "none without --helm-topic");
	ok(sample(text, "revtrail_helm_topic_lag") < 0,
	   "an unknown lag is left out");
	ok(strstr(text, "# TYPE revtrail_helm_topic_lag gauge") != NULL,
	   "its TYPE stays");
	free(text);
	free(s);
}

static void test_wal_bytes(void)
{
	char dir[] = "/tmp/revtrail-metrics.XXXXXX", path[64];
	FILE *f;

	if (!ok(mkdtemp(dir) != NULL, "a directory"))
		return;
	snprintf(path, sizeof(path), "%s/x.db-wal", dir);
	is_int(metrics_file_bytes(path), 0, "no -wal: 0 bytes");
	if (!ok((f = fopen(path, "w")) != NULL, "a -wal written"))
		return;
	for (int i = 0; i < 4129; i++)
		fputs("0123456789", f);
	fclose(f);
	is_int(metrics_file_bytes(path), 41290, "a -wal: its size");
	unlink(path);
	rmdir(dir);
}

/* fleet --http: the fold's own counters, the partitions and what both
 * commands share, and none of consume's (which it has no figures for). */
static void test_fleet(void)
{
	struct metrics_snap *s = malloc(sizeof(*s));
	struct metrics_hist h = { 0 };
	char why[256];
	size_t len;
	char *text;

	fill(s);
	s->fleet = true;
	s->fleet_parts = 40;
	s->fleet_tombstones = 2;
	s->fleet_refused = 1;
	s->fleet_recomputed = 17;
	text = metrics_render(s, &h, &build, &len);
	is_int(untyped_samples(text), 0, "fleet: every sample typed");
	is_int(sample(text, "revtrail_messages_total"), 705, "fleet: messages");
	is_int(sample(text, "revtrail_batches_total"), 3, "fleet: batches");
	is_int(sample(text, "revtrail_fleet_parts_stored_total"), 40,
	       "fleet: parts stored");
	is_int(sample(text, "revtrail_fleet_tombstones_total"), 2,
	       "fleet: tombstones");
	is_int(sample(text, "revtrail_fleet_refused_total"), 1,
	       "fleet: refused");
	is_int(sample(text, "revtrail_fleet_incidents_recomputed_total"), 17,
	       "fleet: incidents recomputed");
	is_int(sample(text, "revtrail_partition_lag{topic=\"k8s-events\","
		      "partition=\"0\"}"), 10, "fleet: a partition's lag");
	is_int(sample(text, "revtrail_wal_bytes"), 5000000000LL,
	       "fleet: the WAL's bytes");
	ok(strstr(text, "revtrail_build_info{") != NULL, "fleet: build_info");
	ok(!strstr(text, "revtrail_records_total") &&
	   !strstr(text, "revtrail_incidents_open") &&
	   !strstr(text, "revtrail_rebalances_total"),
	   "fleet: none of consume's figures");
	free(text);
	ok(!metrics_healthy(s, 100001 + METRICS_STALL_MS, why, sizeof(why)) &&
	   strstr(why, "the fold loop"), "fleet: a stuck fold named (%s)", why);
	free(s);
}

/* A loop's turn: the heartbeat each time, the figures when due. */
static void test_turn(void)
{
	struct metrics *m = metrics_new(10, 50);
	struct metrics_snap *s = malloc(sizeof(*s));
	struct metrics_hist h;
	int64_t next = 0, lag;

	if (!ok(m && s, "metrics_new"))
		return;
	metrics_copy(m, s, &h, &lag);
	ok(s->progress_ms == 50 && lag == 10, "its heartbeat and --ready-lag");
	ok(metrics_turn(m, 100, &next, 1000) && next == 1100,
	   "the first turn publishes");
	ok(!metrics_turn(m, 600, &next, 1000) && next == 1100,
	   "not again before every_ms");
	metrics_copy(m, s, &h, &lag);
	ok(s->progress_ms == 600, "but each turn beats");
	ok(metrics_turn(m, 1100, &next, 1000) && next == 2100,
	   "then again");
	metrics_free(m);
	metrics_free(NULL);
	free(s);
}

int main(void)
{
	test_turn();
	test_wal_bytes();
	test_render();
	test_probes();
	test_helm_topic();
	test_fleet();
	return done_testing();
}
