#!/usr/bin/env bash
# run.sh BINARY: `make bench`. Generates the corpora once (deterministic),
# then runs revtrail classify, revtrail ingest (fresh SQLite file each run)
# and ripgrep with the default packs' patterns on the same files, side by
# side, BENCH_RUNS times each, and prints medians, lines/s, MB/s, peak RSS
# and the ratio to ripgrep. It reports; it never fails on speed.
#
#   BENCH_SIZES="1000000 10000000"  CRI corpus sizes in lines
#   BENCH_EVENTS=1000000            Event JSON corpus size
#   BENCH_RUNS=3
set -euo pipefail
bin=${1:?usage: run.sh BINARY}
cd "$(dirname "$0")/../.."
dir=build/bench
mkdir -p "$dir"
sizes=${BENCH_SIZES:-1000000 10000000}
events=${BENCH_EVENTS:-1000000}
runs=${BENCH_RUNS:-3}

for tool in rg /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench: needs $tool (apt-get install ripgrep time)" >&2; exit 2; }
done
cc -O2 -o "$dir/gen" tests/bench/gen.c

# The default packs' patterns in ripgrep's syntax (captures unnamed: one regex
# set cannot repeat a name); the few it cannot compile
# (PCRE-only constructs) are left out and counted.
awk '/^[ \t]+pattern[ \t]/ { sub(/^[ \t]+pattern[ \t]+/, ""); print }' rules/packs/*.rules |
	sed 's/(?<\([A-Za-z_][A-Za-z0-9_]*\)>/(/g' > "$dir/patterns.all"
: > "$dir/patterns"
dropped=0
while IFS= read -r p; do
	if rg -q -i -e "$p" /dev/null 2>/dev/null || [ $? -eq 1 ]; then
		printf '%s\n' "$p" >> "$dir/patterns"
	else
		dropped=$((dropped + 1))
	fi
done < "$dir/patterns.all"

corpus() {   # corpus KIND LINES -> path
	local f="$dir/$1-$2.log"
	[ -s "$f" ] || "$dir/gen" "$1" "$2" > "$f"
	echo "$f"
}

# measure CMD...: prints "seconds peak_kib" of one run.
measure() {
	/usr/bin/time -f '%e %M' -o "$dir/time.out" "$@" > /dev/null 2> "$dir/cmd.err" || {
		echo "bench: failed: $*" >&2; tail -3 "$dir/cmd.err" >&2; return 1; }
	cat "$dir/time.out"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# row NAME FILE LINES CMD...: runs CMD $runs times, prints one table row.
row() {
	local name=$1 file=$2 lines=$3; shift 3
	local times="" rss=0 t m
	for _ in $(seq "$runs"); do
		rm -f "$dir/bench.db" "$dir/bench.db-wal" "$dir/bench.db-shm"
		read -r t m < <(measure "$@")
		times="$times $t"
		[ "$m" -gt "$rss" ] && rss=$m
	done
	t=$(printf '%s\n' $times | median)
	local mb=$(( $(stat -c %s "$file") / 1048576 ))
	awk -v n="$name" -v t="$t" -v l="$lines" -v mb="$mb" -v rss="$rss" -v ref="${ref:-0}" 'BEGIN {
		if (t <= 0) t = 0.001
		ratio = ref > 0 ? sprintf("%.2fx", ref / t) : "-"
		printf "%-28s %8.2f s %12.0f lines/s %8.0f MB/s %8.1f MiB %8s\n", n, t, l / t, mb / t, rss / 1024, ratio }'
	last=$t
}

echo "revtrail bench: $(nproc) cores, $runs runs each, medians; ratio = ripgrep time / this time (>1 is faster than ripgrep)"
echo "patterns: $(wc -l < "$dir/patterns") in ripgrep syntax ($dropped PCRE-only left out)"
printf '%-28s %10s %18s %13s %12s %8s\n' case wall throughput bandwidth "peak RSS" ratio
for n in $sizes; do
	f=$(corpus cri "$n")
	ref=0
	row "rg -c -f ($n CRI)" "$f" "$n" rg -c -i -f "$dir/patterns" "$f"
	ref=$last
	row "classify ($n CRI)" "$f" "$n" "$bin" classify "$f"
	row "ingest ($n CRI)" "$f" "$n" "$bin" ingest --db "$dir/bench.db" "$f"
done
f=$(corpus events "$events")
ref=0
row "rg -c -f ($events events)" "$f" "$events" rg -c -i -f "$dir/patterns" "$f"
ref=$last
row "classify ($events events)" "$f" "$events" "$bin" classify "$f"
row "ingest ($events events)" "$f" "$events" "$bin" ingest --db "$dir/bench.db" "$f"
