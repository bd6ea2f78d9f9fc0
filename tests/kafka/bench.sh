#!/usr/bin/env bash
# bench.sh: consume throughput, one revtrail instance, real Kafka broker on
# loopback. Not part of the test suite.
#
#   tests/kafka/bench.sh [REVTRAIL] [N] [PARTITIONS] [KIND]
#   BENCH_ARGS="--batch-messages 20000" tests/kafka/bench.sh   (extra options)
#   BENCH_FLEET=2 tests/kafka/bench.sh   (then also K instances in one group, K <= 10)
#
# Starts a broker, produces N (default 1,000,000) fixtures.sh KIND (default
# mixed: exporter Events, Fluent Bit and Vector logs, 30% of the logs
# untagged) messages with kcat, then times `revtrail consume -e` from start
# to exit (the group join included; the delay to the first assignment is
# printed apart), into a fresh SQLite database.
# Prints messages/s and MB/s, then runs `revtrail ingest` on the same
# message values from a file (one per line) and prints consume's rate as a
# ratio of ingest's; the broker is stopped at exit.
# With BENCH_FLEET=K (K >= 2), K instances then read the topic again in a
# group of their own, one database each, as a fleet runs when one writer is
# not enough: their combined rate, and the messages stored twice (0
# expected: -e stops each at the end of its partitions, nobody is killed).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REVTRAIL=${1:-$ROOT/revtrail}
N=${2:-1000000}
PARTS=${3:-4}
KIND=${4:-mixed}
W=$(mktemp -d "${TMPDIR:-/tmp}/revtrail-bench.XXXXXX")
trap '"$HERE/broker.sh" stop "$W/broker" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT

echo "bench: $N $KIND messages, $PARTS partitions, $(nproc) cores"
BS=$("$HERE/broker.sh" start "$W/broker")
"$HERE/broker.sh" topic "$W/broker" bench "$PARTS"
"$HERE/fixtures.sh" "$KIND" "$N" >"$W/msgs.tsv"
echo "bench: $(du -m "$W/msgs.tsv" | cut -f1) MB of messages"
t0=$(date +%s.%N)
timeout 900 kcat -P -b "$BS" -t bench -K '	' -X linger.ms=50 \
	-X batch.num.messages=10000 -X queue.buffering.max.messages=500000 \
	-X compression.codec=lz4 -l "$W/msgs.tsv"
t1=$(date +%s.%N)
echo "bench: produced in $(echo "$t1 - $t0" | bc) s"
cut -f2- "$W/msgs.tsv" >"$W/values.ndjson"
rm -f "$W/msgs.tsv"

# The reference: kcat reading the topic once as a group consumer, as
# consume does. It also warms the broker (its fetch path, and the group
# coordinator with its offsets topic, made at the first join), so that the
# broker's start-up is not charged to consume.
t0=$(date +%s.%N)
n=$(timeout 900 kcat -b "$BS" -G bench-kcat -o beginning -e -q -f '\n' bench | wc -l)
t1=$(date +%s.%N)
ksecs=$(echo "$t1 - $t0" | bc)
printf 'bench: kcat read %s messages in %.2f s: %.0f msg/s (reference)\n' \
	"$n" "$ksecs" "$(echo "$n / $ksecs" | bc -l)"

# Each timed run starts with no writes pending (the broker has just
# written the topic), so that neither shares the disk with the writeback
# of what came before it. On a quiet machine this changes nothing
# measurable; a busy one moves both figures far more (docs/benchmarks.md).
sync
t0=$(date +%s.%N)
/usr/bin/time -f '%U %S %M' -o "$W/consume.cpu" \
timeout 1800 "$REVTRAIL" consume -b "$BS" -t bench -G bench --db "$W/bench.db" \
	-e --status-interval 10 --stats-json "$W/stats.json" ${BENCH_ARGS:-} \
	2>"$W/consume.err"
t1=$(date +%s.%N)
grep -E 'consume: ([0-9]+ messages in|events)' "$W/consume.err" || true
secs=$(echo "$t1 - $t0" | bc)
# Where the wall time went: to the first assignment (process start, group
# join) and to the end of the process.
first=$(sed -n 's/^\([^ ]*\) INFO kafka: assigned.*/\1/p' "$W/consume.err" | head -1)
if [ -n "$first" ]; then
	printf 'bench: first assignment %.2f s after start\n' \
		"$(echo "$(date -d "$first" +%s.%N) - $t0" | bc -l)"
fi
msgs=$(jq -r .messages "$W/stats.json")
bytes=$(jq -r .bytes "$W/stats.json")
printf 'bench: %s messages in %.1f s (wall, incl. group join): %.0f msg/s, %.1f MB/s\n' \
	"$msgs" "$secs" "$(echo "$msgs / $secs" | bc -l)" \
	"$(echo "$bytes / $secs / 1048576" | bc -l)"
echo "bench: events $(sqlite3 "$W/bench.db" 'SELECT count(*) FROM events'), incidents $(sqlite3 "$W/bench.db" 'SELECT count(*) FROM incidents'), db $(du -m "$W/bench.db" | cut -f1) MB"

# The same values from a file: the target is consume >= 0.9x ingest.
sync
/usr/bin/time -f '%e %U %S %M' -o "$W/ingest.time" \
	"$REVTRAIL" ingest --db "$W/file.db" "$W/values.ndjson" 2>"$W/ingest.err"
read -r isecs iu is irss <"$W/ingest.time"
read -r cu cs crss <"$W/consume.cpu"
printf 'bench: ingest of the same values from a file: %.1f s, %.0f msg/s\n' \
	"$isecs" "$(echo "$msgs / $isecs" | bc -l)"
printf 'bench: consume/ingest: %.2fx msg/s (wall), cpu %.1f s vs %.1f s\n' \
	"$(echo "$isecs / $secs" | bc -l)" "$(echo "$cu + $cs" | bc -l)" \
	"$(echo "$iu + $is" | bc -l)"
# What the read-ahead adds to ingest's memory (docs/kafka.md, Memory).
printf 'bench: peak RSS consume %d MiB, ingest %d MiB\n' $((crss / 1024)) \
	$((irss / 1024))

# The fleet: K writers side by side, each with its own database.
K=${BENCH_FLEET:-1}
[ "$K" -ge 2 ] || exit 0
sync
t0=$(date +%s.%N)
for i in $(seq 1 "$K"); do
	timeout 1800 "$REVTRAIL" consume -b "$BS" -t bench -G bench-fleet \
		--db "$W/fleet$i.db" -e --stats-json "$W/fleet$i.json" \
		${BENCH_ARGS:-} 2>"$W/fleet$i.err" &
done
wait
t1=$(date +%s.%N)
first=$(sed -n 's/^\([^ ]*\) INFO kafka: assigned.*/\1/p' "$W"/fleet*.err | sort | head -1)
fsecs=$(echo "$t1 - $(date -d "$first" +%s.%N)" | bc -l)
fmsgs=$(jq -s 'map(.messages) | add' "$W"/fleet*.json)
union="SELECT count(*) FROM (SELECT ukey FROM events"
for i in $(seq 2 "$K"); do
	union="$union UNION ALL SELECT ukey FROM f$i.events"
done
attach=$(for i in $(seq 2 "$K"); do printf "ATTACH '%s' AS f%d; " "$W/fleet$i.db" "$i"; done)
stored=$(sqlite3 "$W/fleet1.db" "$attach $union)")
distinct=$(sqlite3 "$W/fleet1.db" "$attach ${union//UNION ALL/UNION})")
printf 'bench: fleet of %d: %s messages in %.1f s (wall, incl. group join): %.0f msg/s; from the first assignment %.1f s: %.0f msg/s\n' \
	"$K" "$fmsgs" "$(echo "$t1 - $t0" | bc)" \
	"$(echo "$fmsgs / ($t1 - $t0)" | bc -l)" "$fsecs" \
	"$(echo "$fmsgs / $fsecs" | bc -l)"
printf 'bench: fleet: per instance %s messages; events stored %s, distinct %s\n' \
	"$(jq -s -r 'map(.messages | tostring) | join(" + ")' "$W"/fleet*.json)" \
	"$stored" "$distinct"
