#!/usr/bin/env bash
# revtrail consume --http against a real broker: /healthz answers 200 while
# the loop turns; /readyz is 503 with no partition assigned and while the
# committed offsets are behind, 200 once the backlog is in the database;
# /metrics is Prometheus text whose counters match what was produced and
# whose lag gauges are 0 when caught up; other paths are 404, other
# methods 405, and a bad --http is refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
if ! command -v curl >/dev/null 2>&1; then
	echo "ok 1 # SKIP no curl"
	echo "1..1"
	exit 0
fi

run_rt consume -b 127.0.0.1:1 -t t -G g --db "$T/x.db" --http nonsense
is "$RC" 2 "--http without a port is a usage error"
like "$(cat "$ERR")" 'ADDR:PORT' "and says what it wants"
run_rt consume -b 127.0.0.1:1 -t t -G g --db "$T/x.db" --http 127.0.0.1:65536
is "$RC" 2 "a port over 65535 too"
run_rt consume -b 127.0.0.1:1 -t t -G g --db "$T/x.db" --ready-lag many
is "$RC" 2 "a bad --ready-lag too"

kafka_start
KD=$(dirname "$0")/../kafka

# GET (or another method) on the server of consumer NAME: prints the
# status, the body is in $T/body.
port_of() {
	sed -n 's/.* http: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/$1.err"
}
get() {   # NAME PATH [curl args]
	local name=$1 path=$2
	shift 2
	curl -s -o "$T/body" -w '%{http_code}' --max-time 5 "$@" \
		"http://127.0.0.1:$(port_of "$name")$path"
}
says() {   # NAME PATH STATUS REGEX: the answer is STATUS with REGEX in it
	[ "$(get "$1" "$2")" = "$3" ] && grep -qE -- "$4" "$T/body"
}
listening() { [ -n "$(port_of "$1")" ]; }

# Nothing matches the pattern: nothing is assigned.
consume_bg idle -t '^nothing-yet.*' -G idle-group --db "$T/idle.db" \
	--http 127.0.0.1:0 --status-interval 0
ok wait_until 30 listening idle
ok wait_until 30 says idle /readyz 503 'no partitions assigned'
is "$(get idle /healthz)" 200 "/healthz 200 while nothing is assigned"
# The port is taken: a second server cannot listen, a runtime failure.
run_rt consume -t t -G g --db "$T/y.db" -b "$BS" --http "127.0.0.1:$(port_of idle)"
is "$RC" 1 "--http on a port in use exits 1"
like "$(cat "$ERR")" 'cannot listen' "and says so"
consume_kill idle TERM
consume_wait idle 15
is "$RC" 0 "SIGTERM: exit 0"

# The database knows the partitions (a first run to the end), so lag is
# counted from its offsets.
kafka_topic late 2
"$KD/fixtures.sh" exporter 100 0 >"$T/p0.tsv"
"$KD/fixtures.sh" exporter 500 1000 >"$T/p1.tsv"
"$KD/fixtures.sh" exporter 500 2000 >"$T/p2.tsv"
kafka_produce late "$T/p0.tsv"
DB=$T/late.db
run_rt consume -b "$BS" -t late -G late-group --db "$DB" -e
is "$RC" 0 "a first run reads the 100 messages"

# One batch of 1000 messages, open for a minute: only the 1000th commits.
consume_bg svc -t late -G late-group --db "$DB" --http 127.0.0.1:0 \
	--ready-lag 0 --batch-messages 1000 --batch-ms 60000 \
	--status-interval 0
ok wait_until 30 listening svc
ok wait_until 60 says svc /readyz 200 'ready: 2 partitions, lag 0'
is "$(get svc /healthz)" 200 "/healthz 200"
like "$(cat "$T/body")" '^ok$' "/healthz says ok"
kafka_produce late "$T/p1.tsv"
ok wait_until 60 says svc /metrics 200 '^revtrail_messages_total 500$'
ok wait_until 10 says svc /readyz 503 'lag 500 > 0'
like "$(cat "$T/body")" 'not ready: lag 500 > 0' "/readyz 503 while 500 messages are not committed"
kafka_produce late "$T/p2.tsv"
ok wait_until 60 says svc /readyz 200 'lag 0'
is "$(db_offsets "$DB" late)" 1100 "the backlog is in the database"

is "$(get svc /metrics)" 200 "/metrics 200"
M=$T/metrics.txt
cp "$T/body" "$M"
ok grep -q '^# TYPE revtrail_messages_total counter$' "$M"
# Every sample's metric has its # TYPE (a histogram's _bucket, _sum and
# _count belong to it); every sample line is "name[{labels}] number".
untyped=$(awk '
	/^# TYPE / { type[$3] = $4; next }
	/^#/ || /^$/ { next }
	{
		name = $1; sub(/\{.*/, "", name); base = name
		sub(/_(bucket|sum|count)$/, "", base)
		if (!(name in type) && type[base] != "histogram") print
	}' "$M")
is "$untyped" "" "every sample's metric has a # TYPE"
is "$(grep -vE '^#|^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [-+0-9.eEInfa]+$' "$M")" "" \
	"every sample line parses as text format 0.0.4"
is "$(sed -n 's/^revtrail_messages_total //p' "$M")" 1000 "messages_total: the 1000 produced"
is "$(sed -n 's/^revtrail_records_total //p' "$M")" 1000 "records_total"
like "$(sed -n 's/^revtrail_records_tagged_total //p' "$M")" '^[1-9][0-9]*$' "records_tagged_total"
is "$(sed -n 's/^revtrail_rejects_total{reason="undecodable"} //p' "$M")" 0 "rejects_total by reason"
is "$(sed -n 's/^revtrail_batches_total //p' "$M")" 1 "batches_total: one batch"
is "$(grep -c '^revtrail_partition_lag{topic="late",partition="[01]"} 0$' "$M")" 2 \
	"a lag gauge per partition, 0 when caught up"
is "$(sed -n 's/^revtrail_brokers_down //p' "$M")" 0 "brokers_down 0"
is "$(sed -n 's/^revtrail_partitions_assigned //p' "$M")" 2 "partitions_assigned"
like "$(sed -n 's/^revtrail_incidents_open //p' "$M")" '^[0-9]+$' "incidents_open"
# The -wal as the loop last saw it: the one batch is committed and nothing
# is written since, so the file keeps its size.
like "$(sed -n 's/^revtrail_wal_bytes //p' "$M")" '^[1-9][0-9]*$' "wal_bytes: the batch is in the WAL"
ok wait_until 10 says svc /metrics 200 "^revtrail_wal_bytes $(stat -c %s "$DB-wal")\$"
is "$(sed -n 's/^revtrail_commit_duration_seconds_count //p' "$M")" 1 "commit latency: one commit observed"
is "$(sed -n 's/^revtrail_commit_duration_seconds_bucket{le="+Inf"} //p' "$M")" 1 "in the +Inf bucket"
like "$(cat "$M")" 'revtrail_build_info\{version="[0-9.]+",librdkafka="[0-9.]+",sqlite="[0-9.]+"\} 1' "build_info"
diag "a scrape, the samples:" "$(grep -v '^#' "$M" | head -60)"

# What the port answers to anything else.
is "$(get svc /nope)" 404 "an unknown path: 404"
is "$(get svc /metrics -X POST -d x=1)" 405 "POST: 405"
is "$(get svc /healthz -X DELETE)" 405 "DELETE: 405"
is "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -I "http://127.0.0.1:$(port_of svc)/readyz")" 200 "HEAD: 200"
like "$(curl -s -D - -o /dev/null --max-time 5 -X PUT "http://127.0.0.1:$(port_of svc)/metrics")" \
	'Allow: GET, HEAD' "405 names the methods"
big=$(head -c 40000 /dev/zero | tr '\0' a)
like "$(get svc /metrics -H "X-Big: $big")" '^(4[0-9][0-9]|000)$' \
	"a 40 kB header is refused"
is "$(get svc /healthz)" 200 "and the server goes on"

consume_kill svc TERM
consume_wait svc 20
is "$RC" 0 "SIGTERM: exit 0"
ok consume_clean svc
unlike "$(cat "$T/svc.err")" 'MHD|microhttpd' "libmicrohttpd wrote nothing of its own"
done_testing
