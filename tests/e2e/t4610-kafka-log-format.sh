#!/usr/bin/env bash
# revtrail consume's diagnostics: every stderr line has a time (UTC, RFC
# 3339, milliseconds), a level and a component, as text or as one JSON
# object per line (--log-format json); librdkafka's own lines come through
# the same way instead of raw "%3|...|FAIL|" lines; and a broker outage
# under a backlog is said once: the consumer holds its batch (the group
# cannot hear of it) rather than store, and fail to commit, batch after
# batch.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
KD=$(dirname "$0")/../kafka

TIME_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'

run_rt consume -b 127.0.0.1:1 -t t -G g --db "$T/x.db" --log-format xml
is "$RC" 2 "--log-format xml is a usage error"
like "$(cat "$ERR")" 'text or json' "and names the choices"

# Nothing listens on port 1: librdkafka logs its connection failures.
BS=127.0.0.1:1
consume_bg dead -t t -G g --db "$T/dead.db" --log-format json \
	--status-interval 1 -X reconnect.backoff.max.ms=500
wait_until 20 grep -q '"component":"librdkafka"' "$T/dead.err"
wait_until 10 grep -q 'brokers DOWN' "$T/dead.err"
consume_kill dead TERM
consume_wait dead 15
is "$RC" 0 "SIGTERM: exit 0"
ok consume_clean dead
ok test -s "$T/dead.err"
ok jq -e . "$T/dead.err"
is "$(jq -c --arg re "$TIME_RE" 'select((.time | test($re)) and
	(.level | test("^(error|warn|info|debug)$")) and
	(.component | test("^[a-z]+$")) and (.msg | type == "string")) | 1' \
	"$T/dead.err" | wc -l)" "$(wc -l <"$T/dead.err")" \
	"every line is a JSON object with time, level, component and msg"
like "$(jq -r 'select(.component == "librdkafka") | .fac + " " + .msg' "$T/dead.err")" \
	'^FAIL .*Connection refused' "librdkafka's connection failures, with their facility"
is "$(jq -r 'select(.component == "librdkafka") | .level' "$T/dead.err" | sort -u | head -1)" \
	error "at librdkafka's level"
like "$(jq -r 'select(.component == "kafka") | .msg' "$T/dead.err")" \
	'all brokers are down' "revtrail's own outage line"
like "$(jq -r 'select(.component == "consume") | .msg' "$T/dead.err")" \
	'signal received' "the shutdown"
unlike "$(cat "$T/dead.err")" '%[0-9]\|' "no raw librdkafka lines"

# The same as text.
consume_bg dtext -t t -G g --db "$T/dead.db" --status-interval 1 \
	-X reconnect.backoff.max.ms=500
wait_until 20 grep -q ' librdkafka: ' "$T/dtext.err"
consume_kill dtext TERM
consume_wait dtext 15
is "$RC" 0 "text: SIGTERM: exit 0"
is "$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (ERROR|WARN|INFO|DEBUG) [a-z]+: ' "$T/dtext.err")" 0 \
	"text: every line starts with time, level and component"
like "$(cat "$T/dtext.err")" 'ERROR librdkafka: \[FAIL\] .*Connection refused' \
	"text: librdkafka's lines with their facility"
unlike "$(cat "$T/dtext.err")" '%[0-9]\|' "text: no raw librdkafka lines"

# A broker outage with a prefetched backlog: the consumer stores at most
# the batch it was writing (one batch past what the group knows), says
# once that it holds the next, and commits nothing more to Kafka.
kafka_start
kafka_topic backlog 1
"$KD/fixtures.sh" exporter 30000 0 >"$T/p.tsv"
kafka_produce backlog "$T/p.tsv"
DB=$T/backlog.db
offs_ge() { [ "$(db_offsets "$DB" backlog)" -ge "$1" ]; }
consume_bg out -t backlog -G out-group --db "$DB" --batch-messages 20 \
	--batch-ms 50 --log-format json --status-interval 1 \
	--stats-json "$T/out.json" -X reconnect.backoff.max.ms=1000 \
	-X fetch.wait.max.ms=10
wait_until 60 offs_ge 2000
"$KD/broker.sh" kill "$BROKER_DIR"
wait_until 60 grep -q 'all brokers are down' "$T/out.err"
holding() { grep -q 'holding the batch until the group answers' "$T/out.err"; }
ok wait_until 60 holding
at_hold=$(db_offsets "$DB" backlog)
# Long enough for a consumer that went on to store most of the backlog.
wait_until 3 offs_ge $((at_hold + 200)) || true
consume_kill out TERM
consume_wait out 30
is "$RC" 0 "SIGTERM during the outage: exit 0"
ok consume_clean out
ok jq -e . "$T/out.err"
errors=$(jq -r .kafka_commit_errors "$T/out.json")
lines=$(jq -r 'select(.msg | test("offset commit failed")) | select(.repeated == null) | .msg' "$T/out.err" | wc -l)
diag "$errors failed offset commits, $lines lines for them" \
	"$(jq -r 'select(.msg | test("offset commit failed")) | .msg' "$T/out.err" | sort | uniq -c)"
ok test "$lines" -le 3
final=$(db_offsets "$DB" backlog)
diag "offsets stored at the hold: $at_hold, at exit: $final"
ok test "$final" -le $((at_hold + 20))
ok test "$final" -lt 30000
# Once, or again after a late answer let a batch through: not once a batch.
holds=$(jq -r 'select(.msg | test("holding the batch")) | .msg' "$T/out.err" | wc -l)
diag "hold lines: $holds"
ok test "$holds" -ge 1
ok test "$holds" -le 3
done_testing
