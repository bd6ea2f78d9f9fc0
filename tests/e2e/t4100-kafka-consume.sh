#!/usr/bin/env bash
# revtrail consume against a real Apache Kafka broker (KRaft, loopback):
# kubernetes-event-exporter, Fluent Bit and Vector messages on two topics
# are decoded, tagged and stored with their offsets; empty values are
# counted rejects that still advance the offsets; Kafka's group offsets
# follow the database (lag tools work); SIGTERM commits, leaves the group
# and exits 0 promptly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka

kafka_topic k8s-events 3
kafka_topic k8s-logs 2
"$KD/fixtures.sh" exporter 300 >"$T/events.tsv"
{
	"$KD/fixtures.sh" fluentbit 200 1000
	"$KD/fixtures.sh" vector 200 2000
	# Empty values (a key and nothing else): rejects, never a stop.
	for i in 1 2 3 4 5; do printf 'junk-%d\t\n' "$i"; done
} >"$T/logs.tsv"
kafka_produce k8s-events "$T/events.tsv"
kafka_produce k8s-logs "$T/logs.tsv"
is "$(kafka_ends k8s-events)" 300 "300 exporter messages on k8s-events"
is "$(kafka_ends k8s-logs)" 405 "405 log messages on k8s-logs"

DB=$T/a.db
run_rt consume -b "$BS" -t k8s-events -t k8s-logs -G revtrail-test --db "$DB" \
	-e --stats-json "$T/stats.json" --status-interval 1
is "$RC" 0 "consume -e reads both topics to the end and exits 0"
like "$(cat "$ERR")" 'assigned 5 partition' "all five partitions assigned"
is "$(db_offsets "$DB" k8s-events)" 300 "k8s-events offsets stored in the database"
is "$(db_offsets "$DB" k8s-logs)" 405 "k8s-logs offsets stored, past the empty values"
is "$(db_count "$DB" "SELECT format || ':' || count(*) FROM events GROUP BY format ORDER BY format" | tr '\n' ' ')" \
	"exporter:300 fluentbit:200 vector:200 " "every tagged message is one event, by format"
is "$(db_count "$DB" "SELECT count(DISTINCT substr(origin, 1, instr(origin, ':') - 1)) FROM events WHERE origin LIKE 'k8s-%'")" 2 \
	"events name their topic as origin"
# 60 of the exporter events are OOM kills on Nodes: no release.
is "$(db_count "$DB" "SELECT count(*) FROM events WHERE namespace = 'shop' AND release LIKE 'web-%'")" 640 \
	"namespace and release come from the exporter labels and the kubernetes maps"
is "$(db_count "$DB" "SELECT count(*) FROM events WHERE reason = 'BackOff' AND tags LIKE '%crashloop%'")" 60 \
	"BackOff events are tagged crashloop"
is "$(db_count "$DB" "SELECT count(*) FROM events WHERE format = 'fluentbit' AND ts LIKE '2024-11-03T14:%'")" 200 \
	"Fluent Bit @timestamp doubles become event times"
like "$(db_count "$DB" "SELECT count(*) FROM incidents WHERE release LIKE 'web-%'")" '^[1-9][0-9]*$' \
	"incidents are opened for the web releases"
is "$(jq -r '[.messages, .records, .rejects, .tagged] | join(" ")' "$T/stats.json")" "705 700 5 700" \
	"--stats-json: messages, records, rejects, tagged"
is "$(jq -r '[.partitions[] | .lag] | add' "$T/stats.json")" 0 "--stats-json: no lag at the end"
is "$(jq -r '.partitions | length' "$T/stats.json")" 5 "--stats-json lists every partition"
like "$(cat "$ERR")" 'msg/s.*tagged.*rejects.*incidents open.*lag' "the status line has rate, tags, rejects, incidents, lag"

# Lag tools see the group's offsets: Kafka got them after the database.
group_lag() {   # GROUP: "partitions lag" as kafka-consumer-groups shows them
	timeout 60 java -Xmx256m -XX:TieredStopAtLevel=1 -cp "$KAFKA_LIB_DIR/*" \
		-Dorg.slf4j.simpleLogger.defaultLogLevel=error \
		org.apache.kafka.tools.consumer.group.ConsumerGroupCommand \
		--bootstrap-server "$BS" --describe --group "$1" >"$T/describe.txt" 2>&1
	awk -v g="$1" '$1 == g && $6 ~ /^[0-9]+$/ { lag += $6; n++ } END { print n + 0, lag + 0 }' "$T/describe.txt"
}
is "$(group_lag revtrail-test)" "5 0" \
	"kafka-consumer-groups shows five partitions with lag 0"

# A second run over the same database reads nothing again.
run_rt consume -b "$BS" -t k8s-events -t k8s-logs -G other-group --db "$DB" -e \
	--stats-json "$T/other.json"
is "$RC" 0 "a second run with another group exits 0"
like "$(cat "$ERR")" 'consume: 0 messages' "it starts at the database's offsets: nothing re-read"
like "$(cat "$ERR")" 'k8s-events\[0\]@[0-9]' "assignment names the stored offsets"
# No batch was committed, yet the new group's offsets are the database's,
# committed at the assignment: Kafka's lag is revtrail's.
other=$(group_lag other-group)
is "$other" "5 $(jq -r '[.partitions[] | .lag] | add' "$T/other.json")" \
	"kafka-consumer-groups and revtrail agree on the lag of a group that read nothing"
is "$other" "5 0" "and it is 0"

# SIGTERM while running: the pending batch is committed, exit 0, promptly.
consume_bg svc -t k8s-events -t k8s-logs -G revtrail-test --db "$DB" \
	--batch-ms 60000 --batch-messages 100000 --status-interval 1 \
	--stats-json "$T/svc.json"
wait_until 30 grep -q 'assigned 5 partition' "$T/svc.err"
"$KD/fixtures.sh" exporter 100 5000 >"$T/more.tsv"
kafka_produce k8s-events "$T/more.tsv"
# The batch stays open (60 s, 100000 messages): only the shutdown commits it.
read_all() { [ "$(jq -r .messages "$T/svc.json" 2>/dev/null)" = 100 ]; }
ok wait_until 60 read_all
is "$(db_offsets "$DB" k8s-events)" 300 "the open batch, all read, is not committed yet"
start=$(date +%s%N)
consume_kill svc TERM
consume_wait svc 20
is "$RC" 0 "SIGTERM: exit 0"
ms=$((($(date +%s%N) - start) / 1000000))
diag "SIGTERM to exit: $ms ms"
ok test "$ms" -lt 10000
is "$(db_offsets "$DB" k8s-events)" 400 "the batch was committed on SIGTERM"
is "$(db_count "$DB" "SELECT count(*) FROM events WHERE format = 'exporter'")" 400 "with its events"
like "$(cat "$T/svc.err")" 'signal received' "the shutdown is logged"
like "$(cat "$T/svc.err")" 'revoked 5 partition' "it left the group (partitions revoked)"
ok consume_clean svc

# A topic of Helm listings naming more releases than --max-registry holds:
# the rest is refused, counted in --stats-json and warned about, and the
# consumer goes on to the end.
kafka_topic helm 1
awk 'BEGIN { for (i = 0; i < 4000; i++) printf "r%d\t[{\"name\":\"rel-%05d\",\"namespace\":\"bulk\",\"revision\":\"1\",\"updated\":\"2024-11-03 14:00:00 +0000 UTC\",\"status\":\"deployed\",\"chart\":\"c-1.0\",\"app_version\":\"1\"}]\n", i, i }' >"$T/helm.tsv"
kafka_produce helm "$T/helm.tsv"
run_rt consume -b "$BS" -t helm -G revtrail-helm --db "$T/h.db" -e \
	--max-registry 1M --stats-json "$T/helm.json" --status-interval 0
is "$RC" 0 "a full registry does not stop consume"
held=$(db_count "$T/h.db" "SELECT count(*) FROM revisions")
is "$(jq -r '.messages + 0' "$T/helm.json")" 4000 "every message read"
is "$(jq -r '.registry_refused + 0' "$T/helm.json")" "$((4000 - held))" \
	"--stats-json counts what the registry refused ($held kept)"
like "$(cat "$ERR")" "WARN consume: $((4000 - held)) Helm revisions or workload mappings past the release registry's bounds" \
	"and the log says it"
done_testing
