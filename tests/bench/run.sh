#!/usr/bin/env bash
# run.sh BINARY: `make bench`. Generates the corpora once (deterministic),
# then runs ripgrep with the default packs' patterns, revtrail classify and
# revtrail ingest (a fresh SQLite file each run) on the same file, one after
# the other, BENCH_RUNS rounds of the three, and prints medians, lines/s,
# MB/s, peak RSS and the ratio to ripgrep within each round: the machine
# is shared, and a ratio of neighbouring runs holds up where absolute
# times swing. It reports; it never fails on speed.
#
#   BENCH_SIZES="1000000 10000000"  CRI corpus sizes in lines
#   BENCH_EVENTS=1000000            Event JSON corpus size
#   BENCH_RUNS=5
#   BENCH_CHUNK=100000              Events per chunk, three chunks into one db;
#                                   also the Events ingested twice (again)
#   BENCH_RELEASE=1000000           stored events of the release new pods join
#   BENCH_CG_LINES=100000           callgrind slice (0: no callgrind)
#   BENCH_REPEATS=1000000           tagged CRI corpus size (0: not run)
#
# Beside the packs' own patterns, ripgrep also runs tests/bench/patterns.small:
# 26 patterns for the error kinds a person greps for by hand. revtrail runs
# all its rules either way; the second table is its CPU against that small
# set, and callgrind's instructions per line on a slice of each CRI corpus
# (repeatable where times on a shared machine are not).
set -euo pipefail
bin=${1:?usage: run.sh BINARY}
cd "$(dirname "$0")/../.."
dir=build/bench
mkdir -p "$dir"
sizes=${BENCH_SIZES:-1000000 10000000}
events=${BENCH_EVENTS:-1000000}
runs=${BENCH_RUNS:-5}
cg_lines=${BENCH_CG_LINES:-100000}
small=tests/bench/patterns.small
command -v valgrind >/dev/null || cg_lines=0

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

# The awk function every report takes medians with: med(v, n) of v[1..n].
MED='
function med(v, n,   i, j, x) {
	for (i = 2; i <= n; i++) { x = v[i]
		for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]
		v[j + 1] = x }
	return v[int((n + 1) / 2)]
}'

# measure CMD...: prints "seconds peak_kib cpu_seconds" of one run (cpu:
# user + system, of every thread).
measure() {
	/usr/bin/time -f '%e %M %U %S' -o "$dir/time.out" "$@" > /dev/null 2> "$dir/cmd.err" || {
		echo "bench: failed: $*" >&2; tail -3 "$dir/cmd.err" >&2; return 1; }
	awk '{ print $1, $2, $3 + $4 }' "$dir/time.out"
}

# warm FILE: read it once, untimed. This machine's page cache is small and
# shrinks under its neighbours, so a case that found the file evicted paid
# seconds of reads the case before it did not; now every case starts alike.
warm() {
	cat "$1" > /dev/null
}

# round FILE [pipe]: one run of each case on FILE, in a fixed order, so
# that a burst of load from the machine's neighbours hits every case alike;
# with pipe, also ingest of the same file read from a pipe (`cat FILE |
# revtrail ingest`), which should batch as the file does.
# Appends "case seconds peak_kib cpu_seconds" lines to $dir/rounds.
round() {
	local file=$1
	warm "$file"
	echo "rg $(measure rg -c -i -f "$dir/patterns" "$file")" >> "$dir/rounds"
	warm "$file"
	echo "rgsmall $(measure rg -c -i -f "$small" "$file")" >> "$dir/rounds"
	warm "$file"
	echo "classify $(measure "$bin" classify "$file")" >> "$dir/rounds"
	rm -f "$dir/bench.db" "$dir/bench.db-wal" "$dir/bench.db-shm"
	warm "$file"
	echo "ingest $(measure "$bin" ingest --db "$dir/bench.db" "$file")" \
		>> "$dir/rounds"
	[ "${2:-}" = pipe ] || return 0
	rm -f "$dir/bench.db" "$dir/bench.db-wal" "$dir/bench.db-shm"
	warm "$file"
	echo "pipe $(cat "$file" | measure "$bin" ingest --db "$dir/bench.db")" \
		>> "$dir/rounds"
}

# report LABEL FILE LINES: the table rows of the rounds just run. The
# ratio is the median over rounds of rg's time / this case's time in the
# same round; the wall and CPU times are medians over rounds. ingest's
# writer thread runs beside its reader, so its CPU time can exceed its
# wall time: lines per CPU second is the per-core figure.
report() {
	local label=$1 file=$2 lines=$3
	local mb=$(( $(stat -L -c %s "$file") / 1048576 ))
	awk -v label="$label" -v l="$lines" -v mb="$mb" "$MED"'
	{ k = ++n[$1]; t[$1, k] = $2 > 0 ? $2 : 0.001
	  cpu[$1, k] = $4 > 0 ? $4 : 0.001
	  if ($3 > rss[$1]) rss[$1] = $3 }
	END {
		nc = split(n["pipe"] ? "rg classify ingest pipe" : "rg classify ingest", cases, " ")
		for (c = 1; c <= nc; c++) {
			name = cases[c]; delete v; delete r; delete u
			for (k = 1; k <= n[name]; k++) {
				v[k] = t[name, k]; u[k] = cpu[name, k]
				r[k] = t["rg", k] / t[name, k] }
			m = med(v, n[name]); mc = med(u, n[name])
			ratio = name == "rg" ? "reference" : sprintf("%.2fx", med(r, n[name]))
			printf "%-30s %8.2f s %12.0f lines/s %8.0f MB/s %8.1f MiB %8.2f s %12.0f %10s\n",
				(name == "rg" ? "rg -c -f" : name) " (" label ")", m, l / m,
				mb / m, rss[name] / 1024, mc, l / mc, ratio
		}
		if (n["pipe"]) {
			for (k = 1; k <= n["pipe"]; k++) r[k] = cpu["pipe", k] / cpu["ingest", k]
			printf "%-30s %8.2fx ingest CPU (median per round; target <= 1.3x)\n",
				"pipe (" label ")", med(r, n["pipe"])
		}
	}' "$dir/rounds"
}

# report_small LABEL LINES: against ripgrep with the small set, from the
# same rounds: each case's CPU time over rg's in the same round (median;
# < 1: revtrail spent less CPU than ripgrep).
report_small() {
	awk -v label="$1" -v l="$2" "$MED"'
	{ k = ++n[$1]; cpu[$1, k] = $4 > 0 ? $4 : 0.001
	  if ($3 > rss[$1]) rss[$1] = $3 }
	END {
		split("rgsmall classify ingest", cases, " ")
		for (c = 1; c <= 3; c++) {
			name = cases[c]; delete u; delete r
			for (k = 1; k <= n[name]; k++) {
				u[k] = cpu[name, k]; r[k] = cpu[name, k] / cpu["rgsmall", k] }
			what = name == "rgsmall" ? "rg -c -f small set" : name " (all rules)"
			ratio = name == "rgsmall" ? "reference" : sprintf("%.2fx", med(r, n[name]))
			printf "%-40s %8.2f s %12.0f %8.1f MiB %10s\n", what " (" label ")",
				med(u, n[name]), l / med(u, n[name]), rss[name] / 1024, ratio
		}
	}' "$dir/rounds"
}

# callgrind_lines FILE: instructions per line of each case on the first
# $cg_lines lines of FILE (every thread's, so ingest's writer counts), less
# those of the same command on an empty file (loading rules, compiling
# patterns): what a line costs, which a short slice would otherwise hide.
callgrind_lines() {
	local slice=$dir/cg-slice.log empty=$dir/cg-empty.log
	head -n "$cg_lines" "$1" > "$slice"
	: > "$empty"
	instr() {   # instr CMD...: instructions callgrind counts
		rm -f "$dir/cg.out" "$dir/bench.db" "$dir/bench.db-wal" "$dir/bench.db-shm"
		# rg exits 1 when nothing matches: only a missing profile fails
		valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$@" \
			> /dev/null 2> "$dir/cg.err" || true
		[ -s "$dir/cg.out" ] || { echo "bench: callgrind failed: $*" >&2; echo 0; return; }
		awk '/^(summary|totals):/ { print $2; exit }' "$dir/cg.out"
	}
	cg() {   # cg NAME CMD...: CMD on the slice, less CMD on nothing
		local name=$1 all start
		shift
		all=$(instr "$@" "$slice")
		start=$(instr "$@" "$empty")
		printf '%-40s %10d instructions/line (start: %d M)\n' "$name" \
			"$(( (all - start) / cg_lines ))" "$(( start / 1000000 ))"
	}
	echo "callgrind, first $cg_lines lines of $(basename "$1"):"
	cg "rg -c -f small set" rg -c -i -f "$small"
	cg "classify (all rules)" "$bin" classify
	cg "ingest (all rules)" "$bin" ingest --db "$dir/bench.db"
}

echo "revtrail bench: $(nproc) cores, $runs interleaved rounds, medians;" \
	"ratio = median of ripgrep time / this time in the same round (>1: faster than ripgrep)"
echo "patterns: $(wc -l < "$dir/patterns") in ripgrep syntax ($dropped PCRE-only left out)"
printf '%-30s %10s %18s %13s %12s %10s %12s %10s\n' case wall throughput bandwidth \
	"peak RSS" cpu "lines/cpu-s" ratio
small_table() {   # small_table LABEL LINES: the rounds bench_file just ran
	printf '%-40s %10s %12s %12s %10s\n' "against $(wc -l < "$small") hand-written patterns" \
		cpu lines/cpu-s "peak RSS" "cpu / rg"
	report_small "$1" "$2"
}
bench_file() {   # bench_file LABEL FILE LINES [pipe]
	: > "$dir/rounds"
	for _ in $(seq "$runs"); do
		round "$2" "${4:-}"
	done
	report "$1" "$2" "$3"
}
for n in $sizes; do
	bench_file "$n CRI" "$(corpus cri "$n")" "$n"
	small_table "$n CRI" "$n"
	[ "$cg_lines" -gt 0 ] && callgrind_lines "$(corpus cri "$n")"
done
bench_file "$events events" "$(corpus events "$events")" "$events" pipe

# ---- the correlator's growth: cases of their own (no ripgrep to compare) --

# into_one DB FILE...: $runs rounds, each ingesting the FILEs one after the
# other into a fresh DB; a round's CPU times, in file order, make a line of
# $dir/rounds.
into_one() {
	local db=$1 f line
	shift
	: > "$dir/rounds"
	for _ in $(seq "$runs"); do
		rm -f "$db" "$db-wal" "$db-shm"
		line=""
		for f in "$@"; do
			warm "$f"
			line="$line $(measure "$bin" ingest --db "$db" "$f" | awk '{ print $3 }')"
		done
		echo "$line" >> "$dir/rounds"
	done
}

# chunks: three successive chunks of Events into one database. A chunk
# should cost the same however much the database already holds: the ratio
# is the third chunk's CPU time over the first's, median over rounds.
bench_chunks() {
	local n=${BENCH_CHUNK:-100000} f="$dir/events-chunks-${BENCH_CHUNK:-100000}"
	[ -s "$f.2" ] || { "$dir/gen" events $((3 * n)) | split -l "$n" -d -a 1 - "$f."; }
	into_one "$dir/chunks.db" "$f.0" "$f.1" "$f.2"
	awk -v n="$n" "$MED"'
	{ k++; a[k] = $1; b[k] = $2; c[k] = $3; r[k] = $3 / ($1 > 0 ? $1 : 0.001) }
	END {
		printf "%-30s cpu %.2f / %.2f / %.2f s, %.0f events/cpu-s first; third/first %.2fx (target <= 1.15x)\n",
			"ingest " n " Events x3 (one db)", med(a, k), med(b, k), med(c, k),
			n / med(a, k), med(r, k)
	}' "$dir/rounds"
}

# newpods: N pods of N new workloads (labelled with their release) join a
# release that holds BENCH_RELEASE events; each new workload is a name
# the stored events are looked up by. The release's database is built
# once, untimed, and copied before each run.
bench_newpods() {
	local big=${BENCH_RELEASE:-1000000} n=1000
	local rel="$dir/release-$big.log" pods="$dir/newpods-$big.log"
	local db="$dir/release-$big.db"
	[ -s "$rel" ] || "$dir/gen" release "$big" > "$rel"
	[ -s "$pods" ] || "$dir/gen" newpods "$n" "$big" > "$pods"
	if [ ! -s "$db" ]; then
		rm -f "$db"*
		"$bin" ingest --db "$db.tmp" "$rel" > /dev/null 2>&1
		mv "$db.tmp" "$db"; rm -f "$db.tmp-wal" "$db.tmp-shm"
	fi
	: > "$dir/rounds"
	for _ in $(seq "$runs"); do
		rm -f "$dir/newpods.db-wal" "$dir/newpods.db-shm"
		cp "$db" "$dir/newpods.db"
		warm "$pods"
		measure "$bin" ingest --db "$dir/newpods.db" "$pods" >> "$dir/rounds"
	done
	awk -v n="$n" -v big="$big" "$MED"'
	{ k++; t[k] = $1; c[k] = $3 }
	END {
		printf "%-30s %.2f s wall, %.2f s cpu (target < 1 s)\n",
			n " new pods into " big " events", med(t, k), med(c, k)
	}' "$dir/rounds"
}

# again: BENCH_CHUNK Events of one release, then the same Events
# re-emitted five minutes later with higher counts (a watch stream's
# updates), into one database. An update should cost no more than the
# first write of its Event: the ratio is the second ingest's CPU time over
# the first's, median over rounds.
bench_again() {
	local n=${BENCH_CHUNK:-100000}
	local rel="$dir/release-$n.log" again="$dir/again-$n.log"
	[ -s "$rel" ] || "$dir/gen" release "$n" > "$rel"
	[ -s "$again" ] || "$dir/gen" again "$n" > "$again"
	into_one "$dir/again.db" "$rel" "$again"
	awk -v n="$n" "$MED"'
	{ k++; a[k] = $1; b[k] = $2; r[k] = $2 / ($1 > 0 ? $1 : 0.001) }
	END {
		printf "%-30s cpu %.2f / %.2f s; again/first %.2fx\n",
			"ingest " n " Events, again", med(a, k), med(b, k), med(r, k)
	}' "$dir/rounds"
}

# repeats: one container's CRI log (named as the kubelet names it, so
# its lines have a pod and container) with about 2.5% tagged lines: nginx
# 5xx access lines, each different, and a crash loop's few lines repeated
# (`gen crirep`); then the same log with the crash lines only. Prints the
# database's bytes per tagged line (file size after ingest, WAL
# checkpointed, over the tagged lines ingest counted) and ingest's CPU
# over `rg -c -f patterns.small` on the same file, median over rounds.
bench_repeats() {
	local n=${BENCH_REPEATS:-1000000} nginx f db=$dir/repeats.db
	[ "$n" -gt 0 ] || return 0
	for nginx in 15 0; do
		f=$dir/crirep-$n-$nginx/web-7d9c8b6f5-x2k4p_shop_web-$(printf '%064d' "$nginx").log
		mkdir -p "$(dirname "$f")"
		[ -s "$f" ] || "$dir/gen" crirep "$n" "$nginx" > "$f"
		: > "$dir/rounds"
		for _ in $(seq "$runs"); do
			warm "$f"
			echo "rgsmall $(measure rg -c -i -f "$small" "$f")" >> "$dir/rounds"
			rm -f "$db" "$db-wal" "$db-shm"
			warm "$f"
			echo "ingest $(measure "$bin" ingest --db "$db" "$f")" >> "$dir/rounds"
			tagged=$(sed -n 's/.* \([0-9]*\) tagged.*/\1/p' "$dir/cmd.err" | head -1)
			echo "bytes $(stat -c %s "$db") $tagged" >> "$dir/rounds"
		done
		awk -v n="$n" -v what="$([ "$nginx" -gt 0 ] && echo "nginx 5xx + crash loop" || echo "crash loop only")" "$MED"'
		$1 == "rgsmall" { k++; rg[k] = $4 > 0 ? $4 : 0.001 }
		$1 == "ingest" { r[k] = $4 / rg[k]; cpu[k] = $4 }
		$1 == "bytes" { size = $2; tagged = $3 }
		END {
			printf "%-40s %d tagged, %.0f bytes per tagged line; ingest cpu %.2f s, %.2fx rg -c -f small set\n",
				"repeats " n " CRI (" what ")", tagged, size / (tagged > 0 ? tagged : 1),
				med(cpu, k), med(r, k)
		}' "$dir/rounds"
	done
}

bench_chunks
bench_newpods
bench_again
bench_repeats
