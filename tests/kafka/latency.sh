#!/usr/bin/env bash
# latency.sh: the time from producing a message to its rows being committed
# and visible in the database, at a steady rate, for each --batch-ms asked.
# Run by `make bench` after its own cases; not part of the test suite.
#
#   tests/kafka/latency.sh [REVTRAIL]
#   LAT_RATE=200 LAT_SECONDS=20 LAT_BATCH_MS="1000 200 50"   (the defaults)
#
# Starts a broker on loopback (as bench.sh does), then for each --batch-ms:
# a fresh single-partition topic and database, `revtrail consume` running,
# lat_produce.c (built here) producing kubernetes-event-exporter Events
# (fixtures.sh) at LAT_RATE a second for LAT_SECONDS, while latency.py reads
# the database every 5 ms for the committed offset. Prints per --batch-ms the
# p50, p99 and largest latency and consume's CPU seconds over the run (what
# the shorter wait costs). Without java, mvn, kcat, python3 or sqlite3 (or
# when the broker cannot start) it says so and exits 0: a bench without a
# broker still runs the rest.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REVTRAIL=${1:-$ROOT/revtrail}
RATE=${LAT_RATE:-200}
SECS=${LAT_SECONDS:-20}
BATCH_MS=${LAT_BATCH_MS:-1000 200 50}

for c in java mvn kcat python3 sqlite3 cc pkg-config; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "latency: skipped: no $c (a Kafka broker needs java, mvn and kcat)"
		exit 0
	fi
done
W=$(mktemp -d "${TMPDIR:-/tmp}/revtrail-latency.XXXXXX")
PID=
cleanup() {
	[ -z "$PID" ] || kill -KILL "$PID" 2>/dev/null || true
	"$HERE/broker.sh" kill "$W/broker" >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT
if ! timeout 900 "$HERE/broker.sh" fetch >"$W/fetch.log" 2>&1 ||
   ! BS=$("$HERE/broker.sh" start "$W/broker" 2>"$W/start.log"); then
	echo "latency: skipped: the Kafka broker did not start:"
	tail -5 "$W/fetch.log" "$W/start.log" 2>/dev/null | sed 's/^/latency:   /'
	exit 0
fi
N=$(echo "$RATE * $SECS / 1" | bc)
"$HERE/fixtures.sh" exporter "$N" >"$W/msgs.tsv"
# shellcheck disable=SC2046
cc -O2 -o "$W/lat_produce" "$HERE/lat_produce.c" $(pkg-config --cflags --libs rdkafka)

# cpu PID: user + system seconds of the process so far.
cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"
}

# wait_line FILE REGEX SECS: until a line of FILE matches, bounded.
wait_line() {
	local i
	for i in $(seq 1 $(($3 * 10))); do
		grep -q -E "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

echo "latency: $RATE msg/s for $SECS s, one partition, $(nproc) cores; produce to committed row"
printf 'latency: %-10s %8s %8s %8s %8s %10s\n' --batch-ms n p50_ms p99_ms max_ms cpu_s
for ms in $BATCH_MS; do
	t=lat$ms
	"$HERE/broker.sh" topic "$W/broker" "$t" 1
	"$REVTRAIL" consume -b "$BS" -t "$t" -G "$t" --db "$W/$t.db" \
		--batch-ms "$ms" --status-interval 0 2>"$W/$t.err" &
	PID=$!
	if ! wait_line "$W/$t.err" 'kafka: assigned' 60; then
		echo "latency: consume never got its partition:"; tail -5 "$W/$t.err"
		exit 1
	fi
	"$W/lat_produce" "$BS" "$t" "$RATE" "$N" "$W/msgs.tsv" "$W/$t.sent" &
	ppid=$!
	res=$(python3 "$HERE/latency.py" "$W/$t.db" "$t" "$N" "$W/$t.sent" \
		$((SECS + 60)))
	wait "$ppid"
	c=$(cpu "$PID")
	kill -TERM "$PID"
	wait "$PID" || { echo "latency: consume failed:"; tail -5 "$W/$t.err"; exit 1; }
	PID=
	read -r n p50 p99 max <<<"$res"
	stored=$(sqlite3 "$W/$t.db" 'SELECT count(*) FROM events')
	[ "$stored" = "$n" ] || { echo "latency: $n produced, $stored stored"; exit 1; }
	printf 'latency: %-10s %8s %8s %8s %8s %10s\n' "$ms" "$n" "$p50" "$p99" \
		"$max" "$c"
done
