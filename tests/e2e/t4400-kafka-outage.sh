#!/usr/bin/env bash
# A broker outage under a running revtrail consume: the broker is killed
# (SIGKILL) mid-stream and started again on the same port and data. The
# consumer reports the outage, keeps retrying with librdkafka's backoff,
# resumes by itself, and the database ends with every message exactly once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka

kafka_topic out 2
"$KD/fixtures.sh" exporter 3000 0 >"$T/p1.tsv"
"$KD/fixtures.sh" exporter 3000 3000 >"$T/p2.tsv"
kafka_produce out "$T/p1.tsv"

DB=$T/out.db
offs_ge() { [ "$(db_offsets "$DB" out)" -ge "$1" ]; }
alive() { kill -0 "$(cat "$T/svc.pid")" 2>/dev/null; }
consume_bg svc -t out -G out-group --db "$DB" --status-interval 1 \
	--stats-json "$T/svc.json" -X reconnect.backoff.max.ms=1000
wait_until 60 offs_ge 3000
is "$(db_offsets "$DB" out)" 3000 "the first 3000 messages are stored"

"$KD/broker.sh" kill "$BROKER_DIR"
wait_until 60 grep -q 'all brokers are down' "$T/svc.err"
like "$(cat "$T/svc.err")" 'all brokers are down' "the outage is reported on stderr"
wait_until 10 grep -q 'brokers DOWN' "$T/svc.err"
like "$(cat "$T/svc.err")" 'brokers DOWN' "the status line shows it"
is "$(jq -r .brokers_down "$T/svc.json")" true "--stats-json shows it"
# Three status lines (one a second) into the outage, it is still there.
down_lines() { [ "$(grep -c 'brokers DOWN' "$T/svc.err")" -ge 3 ]; }
ok wait_until 30 down_lines
ok alive
# The session times out with the brokers still down, and the group's revoke
# is no sign of a broker: the state stays down until one answers.
rebalanced() { [ "$(jq -r .rebalances "$T/svc.json" 2>/dev/null)" -ge 2 ]; }
ok wait_until 60 rebalanced
is "$(jq -r .brokers_down "$T/svc.json")" true "still down after the session timed out"
unlike "$(cat "$T/svc.err")" 'brokers reachable again' "and not reported back while the broker is dead"

if ! timeout 180 "$KD/broker.sh" resume "$BROKER_DIR" >"$T/resume.log" 2>&1; then
	_result 1 "broker restarts"
	diag "$(tail -20 "$T/resume.log")"
fi
kafka_produce out "$T/p2.tsv"
wait_until 120 offs_ge 6000
is "$(db_offsets "$DB" out)" 6000 "after the outage every message is stored"
is "$(db_count "$DB" "SELECT count(*) FROM events")" 6000 "one event per message: nothing lost"
is "$(db_count "$DB" "SELECT count(*) FROM events WHERE count <> 1")" 0 "nothing applied twice"
like "$(cat "$T/svc.err")" 'brokers reachable again' "the recovery is reported"
ok alive

# SIGTERM while every broker is down: the batch is in the database, and
# nobody can be told, so it exits at once.
# The recovery may itself have seen the brokers drop once more, so only a
# report after this kill says the consumer knows they are down.
outages=$(grep -c 'all brokers are down' "$T/svc.err")
"$KD/broker.sh" kill "$BROKER_DIR"
new_outage() { [ "$(grep -c 'all brokers are down' "$T/svc.err")" -gt "$outages" ]; }
ok wait_until 60 new_outage
start=$(date +%s%N)
consume_kill svc TERM
consume_wait svc 30
ms=$((($(date +%s%N) - start) / 1000000))
is "$RC" 0 "SIGTERM with the brokers down: exit 0"
diag "SIGTERM to exit with the brokers down: $ms ms"
ok test "$ms" -lt 5000
[ "$ms" -lt 5000 ] || diag "$(tail -15 "$T/svc.err")"
is "$(db_offsets "$DB" out)" 6000 "the offsets stay in the database"
ok consume_clean svc
done_testing
