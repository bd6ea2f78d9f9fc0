#!/bin/sh
# Crash safety: kill -9 in the middle of a large ingest leaves a
# consistent database, and re-running the same ingest then gives exactly
# what an uninterrupted run gives (one transaction per batch + dedupe).
# The kill is placed, not timed: the third input is a FIFO, so ingest is
# known to be alive, with batches committed, and busy on the bytes just
# written into it when the kill lands -- on any machine, however fast.
. "$(dirname "$0")/lib.sh"

# ~200k log lines over four pods of two releases, a third failing: two
# lines each pod repeats (a repeat's row counts them), one that differs
# every time (a row each, so the first two files fill a batch).
for p in payments-api-7d9c8f4b6-4kx2m payments-api-7d9c8f4b6-9jvpd \
	orders-5c7d9f8b4-k2x9z orders-5c7d9f8b4-q7x2c; do
	awk -v pod="$p" -v n=50000 'BEGIN {
		for (i = 0; i < n; i++) {
			t = 1730640000 + int(i / 20) + length(pod)
			# a quiet hour in the middle splits the incidents
			if (i >= n / 2) t += 3600
			m = i % 6
			if (m == 0) msg = "FATAL:  password authentication failed for user \"app\""
			else if (m == 1) msg = "dial tcp 10.0.3.4:6379: connect: connection refused"
			else if (m == 2) msg = "dial tcp 10.0.3.4:6379: connect: connection refused (attempt " i ")"
			else msg = "GET /healthz 200 " i
			printf "%s.%06dZ stderr F %s\n", strftime("%Y-%m-%dT%H:%M:%S", t, 1), (i % 20) * 50000, msg
		} }' > "$T/${p}_prod_app-$(printf '%064d' ${#p}).log"
done
ls "$T"/*.log > "$T/files"
nfiles=$(wc -l < "$T/files")
is "$nfiles" 4 "generated four log files"

INC="SELECT namespace, release, revision, status, opened_at, last_seen_at, closed_at,
 event_count, occurrences, tags, diagnosis, pods FROM incidents ORDER BY namespace, release, opened_at"
EVT="SELECT count(*) AS n, sum(count) AS c, count(DISTINCT incident_id) AS i, min(ts) AS a, max(ts) AS b FROM events"

run_rt ingest --db "$T/ref.db" $(cat "$T/files")
is "$RC" 0 "uninterrupted run"
run_rt query --db "$T/ref.db" -o json "$INC"
cp "$OUT" "$T/ref.inc"
run_rt query --db "$T/ref.db" -o json "$EVT"
cp "$OUT" "$T/ref.evt"
is "$(jq length "$T/ref.inc")" 4 "four incidents (two releases, two windows each)"

total=$(jq -r '.[0].n' "$T/ref.evt")
third=$(sed -n 3p "$T/files")
for round in 1 2 3; do
	db=$T/crash$round.db d=$T/r$round
	mkdir "$d"
	for f in $(cat "$T/files"); do
		[ "$f" = "$third" ] && mkfifo "$d/${f##*/}" || cp "$f" "$d/"
	done
	"$REVTRAIL" ingest --db "$db" "$d"/*.log > /dev/null 2>&1 &
	pid=$!
	# The first two files make two batches or more; then ingest waits
	# for the FIFO's writer.
	ok wait_events "$db" 1
	if ! kill -0 $pid 2>/dev/null; then   # opening the FIFO would hang
		_result 1 "round $round: ingest alive, waiting at the FIFO"
		continue
	fi
	exec 3>"$d/${third##*/}"
	# The pipe takes 64 KiB ahead of the reader: the rest of these bytes
	# have been read when head returns, and ingest works on them.
	head -c $((round * 1500000)) "$third" >&3
	ok kill -9 $pid
	wait $pid 2>/dev/null
	exec 3>&-
	rm "$d/${third##*/}"
	cp "$third" "$d/"
	run_rt query --db "$db" -o json "PRAGMA integrity_check"
	is "$(jq -r '.[0].integrity_check' "$OUT")" ok "round $round: killed mid-file, database consistent"
	run_rt query --db "$db" -o json "SELECT count(*) AS n FROM events"
	n=$(jq -r '.[0].n' "$OUT")
	ok test "$n" -gt 0 -a "$n" -lt "$total"
	diag "round $round: $n of $total events committed when killed"
	run_rt query --db "$db" -o json "SELECT count(*) AS n FROM events WHERE incident_id IS NULL"
	is "$(jq -r '.[0].n' "$OUT")" 0 "round $round: no half-written batch (every event in an incident)"
	run_rt ingest --db "$db" "$d"/*.log
	is "$RC" 0 "round $round: re-run"
	run_rt query --db "$db" -o json "$INC"
	ok cmp "$T/ref.inc" "$OUT"
	run_rt query --db "$db" -o json "$EVT"
	ok cmp "$T/ref.evt" "$OUT"
done
done_testing
