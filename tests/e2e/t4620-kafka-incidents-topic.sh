#!/usr/bin/env bash
# consume --incidents-topic against a real broker: every incident change is
# produced, after the SQLite commit that made it, as one JSON object keyed
# CLUSTER/NAMESPACE/RELEASE/INSTANCE/ID, so the last message of each key (what a
# compacted topic keeps) is the incident as `incidents -o json` and
# `show -o json` print it. A batch whose transaction fails produces nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka
FR=$DATA/scenarios

kafka_topic k8s 2
kafka_topic incidents 1
# A field report as its shippers would send it (one Event or log record
# per message, keyed by namespace), and the generated web releases.
{
	jq -c . "$FR/hook-configmap-race/events.ndjson" "$FR/hook-configmap-race/fluentbit.ndjson" \
		"$FR/hook-configmap-race/release-secret-v48.json" | sed 's/^/prod\t/'
	jq -c . "$FR/stale-config-mount/events-watch.json" "$FR/stale-config-mount/release-secrets.json" |
		sed 's/^/ingress\t/'
	"$KD/fixtures.sh" mixed 400
	# web-0 again 2000 s later: past the 15m gap, a second incident.
	"$KD/fixtures.sh" exporter 1 2000
} >"$T/k8s.tsv"
kafka_produce k8s "$T/k8s.tsv"

DB=$T/svc.db
# Small batches: an incident changes in many of them, and each change is
# produced again; only the last message of a key must tell its state.
run_rt consume -b "$BS" -t k8s -G itopic --db "$DB" -e --batch-messages 40 \
	--incidents-topic incidents --stats-json "$T/stats.json"
is "$RC" 0 "consume -e --incidents-topic exits 0"
like "$(cat "$ERR")" 'incidents topic incidents: [0-9]+ messages produced, [0-9]+ delivered, 0 failed' \
	"the summary counts the messages, none failed"
summary=$(grep -o 'incidents topic incidents: .*' "$ERR")
produced=$(printf '%s' "$summary" | awk '{ print $4 }')
is "$(printf '%s' "$summary" | awk '{ print $7 }')" "$produced" "every message produced was delivered before exit"
is "$(jq .incidents_produced "$T/stats.json")" "$produced" "--stats-json counts them too"
# The final --stats-json is written after the producer's last flush.
is "$(jq .incidents_delivered "$T/stats.json")" "$produced" "and counts them delivered"
is "$(jq .rebalances "$T/stats.json")" "$(grep -o '[0-9]* rebalances' "$ERR" | awk '{ print $1 }')" \
	"and as many rebalances as the summary"

read_topic() {   # the incidents topic from the start: KEY<TAB>VALUE lines
	timeout 30 kcat -C -b "$BS" -t incidents -e -q -Z -K '	' -D '\n' \
		>"$T/topic.tsv" 2>"$T/kcat.err"
}
read_topic
is "$(wc -l <"$T/topic.tsv")" "$produced" "kcat reads back every message produced"
diag "incidents topic: $produced messages; the first:" \
	"$(head -3 "$T/topic.tsv" | cut -c1-200)"

# The topic as compaction leaves it against the database: one live key
# per incident, whose last message holds what incidents -o json prints.
check_topic() {   # NAME
	read_topic
	awk -F'\t' '{ last[$1] = $2 } END { for (k in last) print k "\t" last[k] }' "$T/topic.tsv" |
		sort >"$T/last.tsv"
	run_rt incidents --db "$DB" -o json
	cp "$OUT" "$T/incidents.json"
	n=$(jq length "$T/incidents.json")
	like "$n" '^[1-9][0-9]*$' "$1: the database has incidents ($n)"
	is "$(awk -F'\t' '$2 != "NULL"' "$T/last.tsv" | wc -l)" "$n" \
		"$1: one live key per incident in the database"
	match=$(jq -n --arg inst "$INST" --slurpfile inc "$T/incidents.json" --rawfile last "$T/last.tsv" '
		($last | split("\n") | map(select(length > 0) | split("\t") |
			{ key: .[0], value: (if .[1] == "NULL" then null else (.[1] | fromjson) end) }) |
			from_entries) as $m
		| [$inc[0][] | . as $i | $m["/\(.namespace)/\(.release)/\($inst)/\(.id)"] as $msg
		   | select($msg != null and ($msg | with_entries(select(.key as $k | $i | has($k)))) == $i)]
		| length')
	is "$match" "$n" "$1: every incident's latest message, keyed /NAMESPACE/RELEASE/INSTANCE/ID, holds what incidents -o json prints"
}
INST=$(sqlite3 "$DB" "SELECT value FROM meta WHERE key = 'instance_id'")
like "$INST" '^[0-9a-f]{16}$' "the database has an instance id"
check_topic "first run"

id=$(jq -r '[.[] | select(.release == "payments-api")][0].id' "$T/incidents.json")
run_rt show --db "$DB" -o json "$id"
want=$(jq -cS '.incident' "$OUT")
msg=$(awk -F'\t' -v k="/prod/payments-api/$INST/$id" '$1 == k { print $2 }' "$T/last.tsv")
# show names the cluster only when some incident has one; the message always.
is "$(printf '%s' "$msg" | jq -cS 'del(.pod_count) | if .cluster == "" then del(.cluster) else . end')" \
	"$want" "payments-api: the message is show -o json's incident"
is "$(printf '%s' "$msg" | jq -r '[.diagnosis, .pod_count, .status] | join(" ")')" \
	"hook_configmap_race 3 open" "with its diagnosis, pod count and state"

# An Event between web-0's two incidents joins them: the later one is
# merged into the first and deleted, and its key gets a tombstone.
web0=$(jq -r '[.[] | select(.release == "web-0") | .id] | sort | join(" ")' "$T/incidents.json")
like "$web0" '^[0-9]+ [0-9]+$' "web-0 has two incidents ($web0)"
"$KD/fixtures.sh" exporter 1 1200 >"$T/bridge.tsv"
kafka_produce k8s "$T/bridge.tsv"
run_rt consume -b "$BS" -t k8s -G itopic --db "$DB" -e --incidents-topic incidents
is "$RC" 0 "the bridging Event is consumed"
gone=${web0#* }
check_topic "after the merge"
is "$(jq -r '[.[] | select(.release == "web-0")] | length' "$T/incidents.json")" 1 "web-0 has one incident"
is "$(awk -F'\t' -v k="/shop/web-0/$INST/$gone" '$1 == k { v = $2 } END { print v }' "$T/topic.tsv")" NULL \
	"the merged-away incident's key ends in a tombstone"
produced=$(wc -l <"$T/topic.tsv")

# A batch whose transaction fails after its incidents were written (a
# trigger refuses the source position, the transaction's last step) is
# rolled back: consume stops, and nothing of it reaches the topic.
sqlite3 "$DB" "CREATE TRIGGER fail_victims BEFORE INSERT ON sources
	WHEN EXISTS (SELECT 1 FROM incidents WHERE release LIKE 'victim-%')
	BEGIN SELECT RAISE(ABORT, 'provoked commit failure'); END;"
"$KD/fixtures.sh" exporter 30 5000 | sed 's/web-/victim-/g' >"$T/victims.tsv"
kafka_produce k8s "$T/victims.tsv"
run_rt consume -b "$BS" -t k8s -G itopic --db "$DB" -e --incidents-topic incidents
is "$RC" 1 "the failed commit stops consume (exit 1)"
like "$(cat "$ERR")" 'provoked commit failure' "and says why"
is "$(db_count "$DB" "SELECT count(*) FROM incidents WHERE release LIKE 'victim-%'")" 0 \
	"the batch was rolled back"
read_topic
is "$(grep -c '/victim-' "$T/topic.tsv")" 0 "nothing of the failed batch was produced"
is "$(wc -l <"$T/topic.tsv")" "$produced" "nothing at all was produced"

# With --cluster, the key starts with it.
kafka_topic incidents-eu 1
run_rt consume -b "$BS" -t k8s -G itopic-eu --db "$T/eu.db" -e --cluster eu-1 \
	--incidents-topic incidents-eu
is "$RC" 0 "a consumer with --cluster eu-1"
timeout 30 kcat -C -b "$BS" -t incidents-eu -e -q -Z -K '	' -D '\n' >"$T/eu.tsv" 2>/dev/null
like "$(grep '^eu-1/prod/payments-api/' "$T/eu.tsv" | tail -1)" '^eu-1/prod/payments-api/[0-9a-f]{16}/[0-9]+	\{.*"cluster":"eu-1"' \
	"its keys and messages name the cluster"
is "$(grep -vc '^eu-1/' "$T/eu.tsv")" 0 "every key does"

run_rt consume --incidents-topic '' -b "$BS" -t k8s -G x --db "$T/other.db" -e
is "$RC" 2 "an empty --incidents-topic is a usage error"

done_testing
