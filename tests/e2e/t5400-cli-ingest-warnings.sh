#!/bin/sh
# Input that can never join an incident is counted in ingest's summary
# (and named by -v): Helm history without a release, tagged records without
# a time, tagged events of no known release. A long ingest shows a live
# progress line, only when stderr is a terminal.
. "$(dirname "$0")/lib.sh"
DB=$T/w.db
# `helm history web -o json`: one line, and no release in it
cat >"$T/history.json" <<'JSON'
[{"revision":1,"updated":"2024-11-03T14:00:00Z","status":"superseded","chart":"web-1.0","app_version":"1","description":"Install complete"},{"revision":2,"updated":"2024-11-03T15:00:00Z","status":"deployed","chart":"web-1.1","app_version":"1","description":"Upgrade complete"}]
JSON
printf 'plain error line: connection refused\nOOMKilled something\n' >"$T/notime.log"

run_rt ingest --db "$DB" "$T/history.json"
is "$RC" 0 "helm history without a release still exits 0"
like "$(cat "$ERR")" "^ingest: warning: 1 Helm history record names no release: its revisions are dropped; pass --release NAMESPACE/NAME" "but warns, and says what to do"
run_rt ingest --db "$DB" --release prod/web "$T/history.json"
unlike "$(cat "$ERR")" "warning" "no warning with --release"
like "$(cat "$ERR")" "revisions 2" "and the revisions are kept"

run_rt ingest --db "$DB" "$T/notime.log"
like "$(cat "$ERR")" "^ingest: warning: 2 tagged records without a time: stored, but they join no incident" "records without time"
like "$(cat "$ERR")" "^ingest: warning: 2 tagged events of no known release" "records of no known release"
run_rt ingest -v --db "$T/v.db" "$T/notime.log" "$T/history.json"
like "$(cat "$ERR")" "^warning: $T/notime.log:37: a tagged record without a time joins no incident" "-v names each record"
like "$(cat "$ERR")" "^warning: $T/history.json:0: Helm history that names no release" "-v names the helm record"

EX=$(cd "$(dirname "$0")/../../examples/field-reports" && pwd)
run_rt ingest --db "$T/ok.db" "$EX"/*/*
unlike "$(cat "$ERR")" "warning" "the field reports join their incidents: no warning"
unlike "$(cat "$ERR")" "$(printf '\r')" "no progress line when stderr is not a terminal"

if ! command -v script >/dev/null 2>&1; then
	echo "ok $((_n + 1)) # SKIP no script(1) for a terminal"; _n=$((_n + 1))
	done_testing; exit $?
fi
# A stream that goes on: the line appears once it has run two seconds
# (it is redrawn as input arrives, so the input keeps coming until then).
mkfifo "$T/fifo"
script -qec "$REVTRAIL ingest --db $T/p.db $T/fifo" /dev/null </dev/null >"$T/prog.out" 2>&1 &
pid=$!
exec 3>"$T/fifo"
line=$(head -n 1 "$EX/hook-configmap-race/events.ndjson")
i=0
until grep -q "records, " "$T/prog.out" || [ $i -ge 600 ]; do
	printf '%s\n' "$line" >&3
	sleep 0.05
	i=$((i + 1))
done
exec 3>&-
wait $pid
like "$(cat "$T/prog.out")" "revtrail ingest: [0-9]+ records, [0-9.]+ MB/s, [0-9]+ tagged, [0-9]+ incidents" "a live progress line on a terminal"
like "$(cat "$T/prog.out")" "ingest: events [0-9]+ new" "then the summary"
done_testing
