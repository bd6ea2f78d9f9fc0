#!/usr/bin/env bash
# SIGTERM to revtrail consume in the middle of a backlog, three times,
# against a real broker: librdkafka has prefetched messages that will not
# be processed when the signal comes, and the consumer must still commit
# its batch, leave the group and exit 0 within a few seconds. Every message
# is a distinct tagged Event, so after each stop the events stored equal
# the offsets stored (one transaction), and the last run to the end leaves
# every message stored exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka

N=40000
kafka_topic backlog 4
"$KD/fixtures.sh" exporter $N 0 >"$T/p.tsv"
kafka_produce backlog "$T/p.tsv"
is "$(kafka_ends backlog)" $N "$N messages produced"

DB=$T/backlog.db
events() { db_count "$DB" "SELECT count(*) FROM events"; }
offsets_at_least() { [ "$(db_offsets "$DB" backlog)" -ge "$1" ]; }
# Small batches, so the signal finds a backlog behind a committed batch;
# the default prefetch, so librdkafka holds messages nobody will read.
args=(-t backlog -G backlog-group --db "$DB" --batch-messages 500
	--batch-ms 100 -X group.instance.id=revtrail-0)

prev=0
for round in 1 2 3; do
	consume_bg "run$round" "${args[@]}"
	wait_until 120 offsets_at_least $((prev + 2000))
	start=$(date +%s%N)
	consume_kill "run$round" TERM
	consume_wait "run$round" 30
	ms=$((($(date +%s%N) - start) / 1000000))
	is "$RC" 0 "round $round: SIGTERM mid-backlog exits 0"
	diag "round $round: SIGTERM to exit $ms ms"
	ok test "$ms" -lt 5000
	off=$(db_offsets "$DB" backlog)
	ok test "$off" -gt "$prev"
	ok test "$off" -lt $N
	is "$(events)" "$off" "round $round: events stored == offsets stored"
	like "$(cat "$T/run$round.err")" 'revoked 4 partition' \
		"round $round: it left the group"
	unlike "$(cat "$T/run$round.err")" 'Assertion|assert' \
		"round $round: no librdkafka assertion"
	ok consume_clean "run$round"
	prev=$off
done

run_rt consume "${args[@]}" -b "$BS" -e --stats-json "$T/final.json"
is "$RC" 0 "the last run reads to the end"
is "$(db_offsets "$DB" backlog)" $N "final offsets cover every message"
is "$(events)" $N "nothing lost: one event per message"
is "$((prev + $(jq -r .messages "$T/final.json")))" $N \
	"nothing doubled: the last run processed exactly what was not stored"
is "$(db_count "$DB" "SELECT count(*) FROM events WHERE count <> 1")" 0 \
	"no event was applied twice"
done_testing
