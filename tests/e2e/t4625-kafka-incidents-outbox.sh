#!/usr/bin/env bash
# consume --incidents-topic loses no incident change to an outage or a
# restart: a change is written to the outbox (incident_outbox) in its
# batch's transaction and leaves it only once delivered. Here the topic
# cannot be written while a consumer changes incidents (it does not exist
# yet, and the broker creates none), then the broker is killed and the
# consumer stopped with nothing delivered; restarted once the broker and
# the topic are there, it produces each incident's latest state.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka

kafka_topic k8s 2
{
	"$KD/fixtures.sh" mixed 400
	# web-0 again 2000 s later: past the 15m gap, a second incident.
	"$KD/fixtures.sh" exporter 1 2000
} >"$T/k8s.tsv"
kafka_produce k8s "$T/k8s.tsv"
ends=$(kafka_ends k8s)
DB=$T/svc.db
offs_ge() { [ "$(db_offsets "$DB" k8s)" -ge "$1" ]; }
failed_ge() { [ "$(jq -r '.incidents_produce_failed // 0' "$T/svc.json" 2>/dev/null)" -ge "$1" ]; }

# Small batches: each incident changes many times during the outage.
# A message not delivered in 2 s fails (then is produced again), so the
# outage shows as failures long before the test ends.
consume_bg svc -t k8s -G outbox --db "$DB" --batch-messages 40 \
	--incidents-topic incidents --status-interval 1 \
	--stats-json "$T/svc.json" -X message.timeout.ms=2000 \
	-X reconnect.backoff.max.ms=1000
ok wait_until 120 offs_ge "$ends"
n=$(db_count "$DB" "SELECT count(*) FROM incidents")
like "$n" '^[1-9][0-9]*$' "the batches opened incidents ($n)"
ok wait_until 60 failed_ge 1
diag "$(jq -c '{incidents_produced, incidents_delivered, incidents_produce_failed}' "$T/svc.json")"
is "$(jq -r .incidents_delivered "$T/svc.json")" 0 "nothing was delivered: the topic is missing"
missing="SELECT count(*) FROM incidents i WHERE NOT EXISTS (SELECT 1 FROM
	incident_outbox o WHERE o.incident_id = i.id AND o.namespace = i.namespace
	AND o.release = i.release AND o.cluster = i.cluster)"
is "$(db_count "$DB" "$missing")" 0 "the outbox holds every incident's key"
keys=$(db_count "$DB" "SELECT count(*) FROM incident_outbox")
diag "outbox: $keys keys for $n incidents"

# The broker goes away and the consumer stops: nothing can be delivered.
"$KD/broker.sh" kill "$BROKER_DIR"
ok wait_until 60 grep -q 'all brokers are down' "$T/svc.err"
consume_kill svc TERM
consume_wait svc 60
is "$RC" 0 "SIGTERM with the broker down: exit 0"
like "$(cat "$T/svc.err")" 'not delivered in [0-9]+ ms.*the outbox keeps them for the next start' \
	"it says the outbox keeps what was not delivered"
is "$(db_count "$DB" "$missing")" 0 "the outbox still holds every incident's key"
ok consume_clean svc

# The broker is back; a restarted consumer, with no new message to read,
# produces what the outbox kept: first into the still missing topic (its
# deliveries fail and are retried while it runs), then into the topic.
if ! timeout 180 "$KD/broker.sh" resume "$BROKER_DIR" >"$T/resume.log" 2>&1; then
	_result 1 "broker restarts"
	diag "$(tail -20 "$T/resume.log")"
fi
empty() { [ "$(db_count "$DB" "SELECT count(*) FROM incident_outbox")" = 0 ]; }
again_failed() { [ "$(jq -r '.incidents_produce_failed // 0' "$T/again.json" 2>/dev/null)" -ge 1 ]; }
consume_bg again -t k8s -G outbox --db "$DB" --incidents-topic incidents \
	--status-interval 1 --stats-json "$T/again.json" \
	-X message.timeout.ms=2000 -X reconnect.backoff.max.ms=1000
ok wait_until 120 again_failed
is "$(db_count "$DB" "$missing")" 0 "failed deliveries leave the outbox as it was"
kafka_topic incidents 1
ok wait_until 120 empty
is "$(db_count "$DB" "SELECT count(*) FROM incident_outbox")" 0 \
	"after the restart every key was delivered and left the outbox"
consume_kill again TERM
consume_wait again 60
is "$RC" 0 "the restarted consumer exits 0"
ok consume_clean again

timeout 30 kcat -C -b "$BS" -t incidents -e -q -Z -K '	' -D '\n' >"$T/topic.tsv" 2>"$T/kcat.err"
awk -F'\t' '{ last[$1] = $2 } END { for (k in last) print k "\t" last[k] }' "$T/topic.tsv" |
	sort >"$T/last.tsv"
run_rt incidents --db "$DB" -o json
cp "$OUT" "$T/incidents.json"
is "$(jq length "$T/incidents.json")" "$n" "the database has its $n incidents"
is "$(awk -F'\t' '$2 != "NULL"' "$T/last.tsv" | wc -l)" "$n" "the topic has one live key per incident"
inst=$(sqlite3 "$DB" "SELECT value FROM meta WHERE key = 'instance_id'")
match=$(jq -n --arg inst "$inst" --slurpfile inc "$T/incidents.json" --rawfile last "$T/last.tsv" '
	($last | split("\n") | map(select(length > 0) | split("\t") |
		{ key: .[0], value: (if .[1] == "NULL" then null else (.[1] | fromjson) end) }) |
		from_entries) as $m
	| [$inc[0][] | . as $i | $m["/\(.namespace)/\(.release)/\($inst)/\(.id)"] as $msg
	   | select($msg != null and ($msg | with_entries(select(.key as $k | $i | has($k)))) == $i)]
	| length')
is "$match" "$n" "every incident's latest state arrived, as incidents -o json prints it"

# The final --stats-json is written after the producer's last flush.
summary=$(grep -o 'incidents topic incidents: .*' "$T/again.err")
like "$summary" '[0-9]+ messages produced, [0-9]+ delivered' "the summary counts the messages"
is "$(jq -r .final "$T/again.json")" true "the last --stats-json is the final one"
is "$(jq -r .incidents_delivered "$T/again.json")" "$(printf '%s' "$summary" | awk '{ print $7 }')" \
	"its incidents_delivered is the summary's"
is "$(jq -r .incidents_produced "$T/again.json")" "$(printf '%s' "$summary" | awk '{ print $4 }')" \
	"its incidents_produced too"

done_testing
