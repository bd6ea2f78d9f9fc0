#!/usr/bin/env bash
# kill -9 of revtrail consume mid-stream, three times, against a real broker,
# with more messages produced while it is down; then a restart to the end.
#
# Every message is a distinct tagged Event (its own uid), so:
#   - after each kill, events stored == sum of the stored next offsets:
#     effects and offsets were committed together, nothing half-applied;
#   - at the end, events == messages produced: nothing lost;
#   - the messages each run processed add up to the messages produced, and
#     no run re-read a message the database already had: nothing doubled.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka

N1=30000 N2=6000
kafka_topic crash 4
"$KD/fixtures.sh" exporter $N1 0 >"$T/p1.tsv"
"$KD/fixtures.sh" exporter $N2 $N1 >"$T/p2.tsv"
kafka_produce crash "$T/p1.tsv"
is "$(kafka_ends crash)" $N1 "$N1 messages produced"

DB=$T/crash.db
events() { db_count "$DB" "SELECT count(*) FROM events"; }
offsets_at_least() { [ "$(db_offsets "$DB" crash)" -ge "$1" ]; }
# Small batches: many commits, so a kill lands between and inside them.
# Static membership (group.instance.id): a restarted instance takes its
# partitions back at once instead of waiting for the session timeout.
args=(-t crash -G crash-group --db "$DB" --batch-messages 300 --batch-ms 50
	-X group.instance.id=revtrail-0)

prev=0
for round in 1 2 3; do
	consume_bg "run$round" "${args[@]}"
	target=$((prev + 2500))
	wait_until 60 offsets_at_least "$target"
	consume_kill "run$round" KILL
	consume_wait "run$round" 10
	is "$RC" 137 "round $round: consume was killed with SIGKILL"
	off=$(db_offsets "$DB" crash)
	ev=$(events)
	diag "round $round: killed at $off committed offsets, $ev events"
	ok test "$off" -gt "$prev"
	ok test "$off" -lt $N1
	is "$ev" "$off" "round $round: events stored == offsets committed (one transaction)"
	ok consume_clean "run$round"
	prev=$off
	[ "$round" = 2 ] && kafka_produce crash "$T/p2.tsv"
done

total=$((N1 + N2))
before=$(db_offsets "$DB" crash)
run_rt consume "${args[@]}" -b "$BS" -e --stats-json "$T/final.json"
is "$RC" 0 "the restart reads to the end and exits 0"
processed=$(jq -r .messages "$T/final.json")
redelivered=$(jq -r .redelivered_skipped "$T/final.json")
stored=$(events)
offsets=$(db_offsets "$DB" crash)
dups=$((before + processed - total))
lost=$((total - stored))
diag "crash test: produced $total, stored $stored events, restart began at offset sum $before and processed $processed"
diag "crash test: duplicates $dups, losses $lost, redelivered-and-skipped $redelivered"
is "$offsets" "$total" "final offsets cover every message"
is "$stored" "$total" "nothing lost: one event per message produced"
is "$((before + processed))" "$total" "nothing doubled: the restart processed exactly what was not committed"
is "$(db_count "$DB" "SELECT count(*) FROM events WHERE count <> 1")" 0 "no event was applied twice"
like "$(cat "$ERR")" 'crash\[[0-3]\]@[1-9]' "the restart starts at the database's offsets"
done_testing
