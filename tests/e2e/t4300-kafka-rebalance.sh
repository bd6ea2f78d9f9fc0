#!/usr/bin/env bash
# Two revtrail consume instances in one consumer group, each with its own
# database (one writer per file), against a real broker:
#   - the second instance joins: cooperative-sticky moves half of the
#     partitions; the first commits its batch (database, then Kafka,
#     synchronously) before letting them go, so the second starts exactly
#     after it;
#   - new messages split between the two;
#   - the first leaves on SIGTERM: the second takes every partition and
#     continues from the first's committed offsets.
# Nothing is lost (the union of both databases is every message) and
# nothing is doubled (no message is in both).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka

kafka_topic rb 4
"$KD/fixtures.sh" exporter 4000 0 >"$T/p1.tsv"
"$KD/fixtures.sh" exporter 4000 4000 >"$T/p2.tsv"
"$KD/fixtures.sh" exporter 2000 8000 >"$T/p3.tsv"
kafka_produce rb "$T/p1.tsv"

A=$T/a.db B=$T/b.db
args=(-t rb -G rb-group --batch-messages 200 --batch-ms 50 --status-interval 2)
offs_ge() { [ "$(db_offsets "$1" rb)" -ge "$2" ]; }
union_ge() {
	[ "$(sqlite3 "$A" "ATTACH '$B' AS b; SELECT count(*) FROM (SELECT ukey FROM main.events UNION SELECT ukey FROM b.events)" 2>/dev/null || echo 0)" -ge "$1" ]
}
both() { sqlite3 "$A" "ATTACH '$B' AS b; SELECT count(*) FROM main.events JOIN b.events USING (ukey)"; }
union() { sqlite3 "$A" "ATTACH '$B' AS b; SELECT count(*) FROM (SELECT ukey FROM main.events UNION SELECT ukey FROM b.events)"; }

consume_bg a "${args[@]}" --db "$A"
wait_until 60 offs_ge "$A" 4000
is "$(db_offsets "$A" rb)" 4000 "instance A alone reads the first 4000"

consume_bg b "${args[@]}" --db "$B"
wait_until 60 grep -q 'assigned [1-9] partition' "$T/b.err"
wait_until 30 grep -q 'revoked [1-9] partition' "$T/a.err"
like "$(cat "$T/b.err")" 'assigned 2 partition' "B joins and gets two partitions"
like "$(cat "$T/a.err")" 'revoked 2 partition' "A gives up two (cooperative: it keeps the others)"
unlike "$(cat "$T/a.err")" 'revoked 4 partition' "A is never stripped of all its partitions"
like "$(cat "$T/b.err")" 'rb\[[0-3]\]@group' "B, with an empty database, starts at the group's offsets"

kafka_produce rb "$T/p2.tsv"
wait_until 60 union_ge 8000
is "$(union)" 8000 "after the rebalance: every message is in one of the databases"
is "$(both)" 0 "and none in both"
ok test "$(db_count "$B" "SELECT count(*) FROM events")" -gt 0

start=$(date +%s%N)
consume_kill a TERM
consume_wait a 20
is "$RC" 0 "A exits 0 on SIGTERM"
diag "A: SIGTERM to exit $((($(date +%s%N) - start) / 1000000)) ms"
b_has_all() { [ "$(grep -c 'assigned 2 partition' "$T/b.err")" -ge 2 ]; }
wait_until 60 b_has_all
kafka_produce rb "$T/p3.tsv"
wait_until 60 union_ge 10000
is "$(union)" 10000 "after A left, B took its partitions: every message stored"
is "$(both)" 0 "and none in both databases"
is "$(db_count "$B" "SELECT count(*) FROM sources WHERE path = 'rb'")" 4 "B now tracks all four partitions"
consume_kill b TERM
consume_wait b 20
is "$RC" 0 "B exits 0 on SIGTERM"
ok consume_clean a
ok consume_clean b
diag "A stored $(db_count "$A" "SELECT count(*) FROM events"), B stored $(db_count "$B" "SELECT count(*) FROM events")"
done_testing
