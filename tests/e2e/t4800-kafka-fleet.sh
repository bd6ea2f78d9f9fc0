#!/usr/bin/env bash
# The fleet view against a real broker: twelve consume instances, each with
# its own database, produce their incidents to one compacted topic
# (--incidents-topic), and `revtrail fleet` folds that topic into one
# database that `incidents` and `show` read like any other, past the ten
# files that --db can read as one.
#
# Instances come in pairs whose windows of the same releases lie within
# the gap of each other, so each pair's incidents of a release are one
# incident in the fleet, as `incidents --db A --db B` merges them; pairs
# lie hours apart. The keys of the topic name the instance, so incident 1
# of twelve instances is twelve keys, not one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka
N=12

kafka_topic incidents 3
# Instance i reads topic k8s-i: 60 Events of web-0..9, 1 s apart; its pair
# mate 100 s later (the windows lie within the 15m gap: one incident), the
# next pair 3 h later. Event numbers, and so uids and pods, differ.
for i in $(seq 0 $((N - 1))); do
	kafka_topic "k8s-$i" 1
	"$KD/fixtures.sh" exporter 60 $(((i / 2) * 10800 + (i % 2) * 100)) >"$T/k8s-$i.tsv"
	kafka_produce "k8s-$i" "$T/k8s-$i.tsv"
done
total=0
instances() {   # FIRST LAST: consume runs, with --incidents-topic
	local i
	for i in $(seq "$1" "$2"); do
		# Small batches: each incident changes, and is produced, many times.
		run_rt consume -b "$BS" -t "k8s-$i" -G "inst-$i" --db "$T/i$i.db" -e \
			--batch-messages 7 --incidents-topic incidents
		[ "$RC" = 0 ] || diag "instance $i: $(cat "$ERR")"
		total=$((total + $(db_count "$T/i$i.db" "SELECT count(*) FROM incidents")))
	done
}
FDB=$T/fleet.db
fleet_bg() {
	rm -f "$T/fleet.pid" "$T/fleet.rc"
	(
		"$REVTRAIL" fleet -b "$BS" -t incidents --db "$FDB" "$@" >"$T/fleet.out" 2>"$T/fleet.err" &
		echo $! >"$T/fleet.pid"
		rc=0
		wait $! || rc=$?
		echo $rc >"$T/fleet.rc"
	) 2>/dev/null &
	wait_until 5 test -s "$T/fleet.pid"
}
offs_ge() { [ "$(db_offsets "$FDB" incidents)" -ge "$1" ]; }

# The first six instances; the fold follows them, and is killed (-9) once
# it folded all, as it waits for more.
instances 0 5
ends=$(kafka_ends incidents)
fleet_bg --batch-messages 3
ok wait_until 60 offs_ge "$ends"
consume_kill fleet KILL
consume_wait fleet 10
is "$RC" 137 "the fold was killed (-9) while following the topic"
# The other six; the fold, in batches of one message, killed mid-way.
instances 6 $((N - 1))
diag "the twelve instances have $total incidents"
ok test "$total" -ge $((N * 4))
half=$ends
ends=$(kafka_ends incidents)
fleet_bg --batch-messages 1
ok wait_until 60 offs_ge $((half + 5))
consume_kill fleet KILL
consume_wait fleet 10
is "$RC" 137 "the fold was killed (-9) again"
diag "killed at offset $(db_offsets "$FDB" incidents) of $ends"

read_topic() {   # the incidents topic from the start: KEY<TAB>VALUE lines
	timeout 30 kcat -C -b "$BS" -t incidents -e -q -Z -K '	' -D '\n' \
		>"$T/topic.tsv" 2>"$T/kcat.err"
}
read_topic
live=$(awk -F'\t' '{ last[$1] = $2 } END { for (k in last) if (last[k] != "NULL") n++; print n + 0 }' "$T/topic.tsv")
is "$live" "$total" "one live key per incident of every instance: keys do not collide across instances"
like "$(head -1 "$T/topic.tsv" | cut -f1)" '^/shop/web-[0-9]/[0-9a-f]{16}/[0-9]+$' \
	"a key is CLUSTER/NAMESPACE/RELEASE/INSTANCE/ID"
inst=$(sqlite3 "$T/i0.db" "SELECT value FROM meta WHERE key = 'instance_id'")
like "$inst" '^[0-9a-f]{16}$' "an instance's id is in its database's meta"
is "$(cut -f1 "$T/topic.tsv" | awk -F/ '{ print $4 }' | sort -u | wc -l)" "$N" "twelve instances name themselves"

# What the fleet must hold: each pair read as one by --db (two files).
proj='[.[] | {release, revision, status, opened_at, last_seen_at, event_count}] | sort_by(.release, .opened_at)'
for p in $(seq 0 $((N / 2 - 1))); do
	run_rt incidents --db "$T/i$((2 * p)).db" --db "$T/i$((2 * p + 1)).db" -o json
	jq -c "$proj | .[]" "$OUT"
done | jq -s -c "sort_by(.release, .opened_at)" >"$T/want.json"
want=$(jq length "$T/want.json")
diag "pairs read as one: $want incidents of $total parts"
ok test "$want" -lt "$total"

run_rt incidents --db "$T/i0.db" --db "$T/i1.db" --db "$T/i2.db" --db "$T/i3.db" \
	--db "$T/i4.db" --db "$T/i5.db" --db "$T/i6.db" --db "$T/i7.db" --db "$T/i8.db" \
	--db "$T/i9.db" --db "$T/i10.db"
is "$RC" 2 "eleven files are past --db's limit"

before=$(db_offsets "$FDB" incidents)
run_rt fleet -b "$BS" -t incidents --db "$FDB" -e --stats-json "$T/fstats.json"
is "$RC" 0 "restarted with -e, it folds the rest and exits"
is "$(db_offsets "$FDB" incidents)" "$ends" "every message folded"
# --stats-json: what this run read, and where each partition stands.
is "$(jq -c '[.final, .topic, .messages, ([.partitions[].next_offset] | add), (.partitions | length)]' "$T/fstats.json")" \
	"[true,\"incidents\",$((ends - before)),$ends,3]" \
	"--stats-json: final, the messages of this run, each partition's next offset"
is "$(jq '.parts_stored + .tombstones + .refused - .messages' "$T/fstats.json")" 0 \
	"each message a part, a tombstone or refused"
ok test "$(jq .incidents_recomputed "$T/fstats.json")" -gt 0
run_rt incidents --db "$FDB" -o json
cp "$OUT" "$T/fleet.json"
jq -c "$proj" "$OUT" >"$T/got.json"
is "$(jq length "$T/got.json")" "$want" "incidents lists each fleet incident once"
is "$(cat "$T/got.json")" "$(cat "$T/want.json")" \
	"as --db merges each pair: release, revision, status, window, events"
is "$(db_count "$FDB" "SELECT count(*) FROM fleet_parts")" "$total" "one part per instance's incident"
is "$(db_count "$FDB" "SELECT count(*) FROM fleet_parts WHERE incident_id IS NULL OR incident_id NOT IN (SELECT id FROM incidents)")" 0 \
	"each part is in a fleet incident"

run_rt query --db "$FDB" -o json "SELECT count(*) AS n FROM incidents"
is "$(jq '.[0].n' "$OUT")" "$want" "SQL reads the fleet database like any other"
run_rt report --db "$FDB"
is "$(grep -c '<h2>Incident [0-9]*: shop/web-1 ' "$OUT")" \
	"$(jq '[.[] | select(.release == "web-1")] | length' "$T/want.json")" \
	"report shows each web-1 incident once"

# show prints a fleet incident: its fields, the instances that hold it,
# and says why there is no timeline.
id=$(jq -r '[.[] | select(.release == "web-1")][0].id' "$T/fleet.json")
run_rt show --db "$FDB" "$id"
is "$RC" 0 "show reads a fleet incident"
like "$(cat "$OUT")" 'Held by 2 instances' "it names the instances holding it"
like "$(cat "$OUT")" 'no timeline in a fleet database' "and says there is no timeline"
unlike "$(cat "$OUT")" 'revtrail ingest' "and does not ask for Helm history in the fleet database"
run_rt show --db "$FDB" -o json "$id"
is "$(jq -r '.incident.release' "$OUT")" web-1 "show -o json reads it too"
is "$(jq -r '.fleet_parts | length' "$OUT")" 2 "with its two parts"
is "$(jq -r '.timeline | length' "$OUT")" 0 "and an empty timeline"
run_rt show --db "$T/i0.db" -o json 1
is "$(jq -r '.fleet_parts' "$OUT")" null "an instance's incident has no fleet parts"

# A tombstone removes that instance's part: web-1 of the first pair is
# then instance 0's incident alone.
k1=$(awk -F'\t' '$1 ~ "^/shop/web-1/" && $2 != "NULL" { last[$1] = $2 } END { for (k in last) print k }' "$T/topic.tsv" |
	grep "/$(sqlite3 "$T/i1.db" "SELECT value FROM meta WHERE key = 'instance_id'")/")
like "$k1" '^/shop/web-1/' "instance 1 has a web-1 incident"
# and a message that is no incident, refused.
printf '%s\t\nnot/an/incident\tnot json\n' "$k1" >"$T/tomb.tsv"
timeout 30 kcat -P -b "$BS" -t incidents -K '	' -Z -l "$T/tomb.tsv"
run_rt fleet -b "$BS" -t incidents --db "$FDB" -e --stats-json "$T/fstats.json"
is "$RC" 0 "the tombstone is folded"
# The fold rewrites every incident of the release and revision the
# tombstone touched: web-1's of every pair.
rev1=$(sqlite3 "$T/i1.db" "SELECT revision FROM incidents WHERE id = ${k1##*/}")
web1=$(db_count "$FDB" "SELECT count(*) FROM incidents WHERE namespace = 'shop' AND release = 'web-1' AND revision = ${rev1:-0}")
ok test "$web1" -gt 1
is "$(jq -c '[.messages, .parts_stored, .tombstones, .refused, .incidents_recomputed]' "$T/fstats.json")" \
	"[2,0,1,1,$web1]" "--stats-json: two messages, a tombstone and one refused, web-1's incidents recomputed"
is "$(find "$T" -name 'fstats.json.tmp*' | wc -l)" 0 "no temporary left beside it"
run_rt incidents --db "$T/i0.db" -o json
jq -c "$proj | map(select(.release == \"web-1\"))" "$OUT" >"$T/want1.json"
run_rt incidents --db "$FDB" -o json
jq -c "$proj | map(select(.release == \"web-1\" and .opened_at < \"2024-11-03T15\"))" "$OUT" >"$T/got1.json"
is "$(cat "$T/got1.json")" "$(cat "$T/want1.json")" "after a tombstone, web-1 of the first pair is instance 0's alone"
is "$(jq length "$OUT")" "$want" "and no incident more or less"

# A partition added to the topic while the fold follows it is found
# (within 30 s) and read from its beginning: there, an incident of an
# instance not seen before (a live value of the topic under a new key).
# The fold serves /healthz, /readyz and /metrics (--http) meanwhile.
fleet_bg --http 127.0.0.1:0
port() { sed -n 's/.* http: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/fleet.err"; }
says() {   # PATH STATUS REGEX: the fold answers STATUS with REGEX in it
	[ "$(curl -s -o "$T/body" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$(port)$1")" = "$2" ] &&
		grep -qE -- "$3" "$T/body"
}
ok wait_until 60 offs_ge "$(kafka_ends incidents)"
ok wait_until 30 says /readyz 200 '^ready: 3 partitions, lag 0'
ok says /healthz 200 '^ok'
ok says /metrics 200 '^revtrail_fleet_parts_stored_total 0$'
ok says /metrics 200 '^revtrail_partition_lag\{topic="incidents",partition="2"\} 0$'
unlike "$(cat "$T/body")" 'revtrail_records_total' "/metrics: the fold's figures, not consume's"
timeout 180 "$KD/broker.sh" partitions "$BROKER_DIR" incidents 4 ||
	_result 1 "the incidents topic gets a fourth partition"
newkey=/shop/web-2/00000000000000ff/1
val=$(awk -F'\t' '$1 ~ "^/shop/web-2/" && $2 != "NULL" { v = $2 } END { print v }' "$T/topic.tsv")
printf '%s\t%s\n' "$newkey" "$val" >"$T/new.tsv"
timeout 60 kcat -P -b "$BS" -t incidents -p 3 -K '	' -l "$T/new.tsv"
new_part() { [ "$(db_count "$FDB" "SELECT count(*) FROM fleet_parts WHERE key = '$newkey'")" = 1 ]; }
ok wait_until 90 new_part
like "$(cat "$T/fleet.err")" 'incidents has 4 partitions now \(3 before\)' \
	"the fold says it found the new partition"
is "$(db_count "$FDB" "SELECT offset FROM sources WHERE path = 'incidents' AND partition = 3")" 1 \
	"the new partition is folded from its beginning, its position stored"
ok wait_until 10 says /metrics 200 '^revtrail_partition_committed_offset\{topic="incidents",partition="3"\} 1$'
ok says /metrics 200 '^revtrail_partitions_assigned 4$'
ok says /metrics 200 '^revtrail_fleet_parts_stored_total 1$'
ok says /metrics 200 '^revtrail_messages_total 1$'
consume_kill fleet TERM
consume_wait fleet 20
is "$RC" 0 "the fold exits 0 on SIGTERM"

run_rt fleet -b "$BS" --db "$FDB" -e
is "$RC" 2 "fleet without -t is a usage error"
run_rt fleet -b "$BS" -t incidents --db "$T/other.db" -e --http 127.0.0.1:70000
is "$RC" 2 "a port over 65535 for --http too"
like "$(cat "$ERR")" '70000' "named in the error"

done_testing
