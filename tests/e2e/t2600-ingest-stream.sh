#!/bin/sh
# ingest on an endless pipe (tail -F): it commits as records arrive, not
# only at EOF, and SIGTERM / SIGINT flush the last batch and exit 0.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race

for sig in TERM INT; do
	db=$T/$sig.db
	mkfifo "$T/fifo$sig"
	"$REVTRAIL" ingest --db "$db" < "$T/fifo$sig" > "$T/out$sig" 2> "$T/err$sig" &
	pid=$!
	exec 3> "$T/fifo$sig"
	cat "$SC/events.ndjson" >&3
	ok wait_events "$db" 6
	# the pipe stays open and quiet: a signal must still end it cleanly
	kill -$sig $pid
	rc=0
	wait $pid || rc=$?
	exec 3>&-
	is "$rc" 0 "SIG$sig: exit 0"
	like "$(cat "$T/err$sig")" 'ingest: [0-9]+ records' "SIG$sig: summary printed"
	run_rt query --db "$db" -o json "SELECT count(*) AS n FROM events"
	is "$(jq -r '.[0].n' "$OUT")" 6 "SIG$sig: all events stored"
done

# Records that arrive after a pause are committed too.
db=$T/pause.db
mkfifo "$T/fifo"
"$REVTRAIL" ingest --db "$db" < "$T/fifo" 2> "$T/err" &
pid=$!
exec 3> "$T/fifo"
cat "$SC/events.ndjson" >&3
ok wait_events "$db" 6
cat "$SC/fluentbit.ndjson" >&3
ok wait_events "$db" 15
exec 3>&-
rc=0
wait $pid || rc=$?
is "$rc" 0 "EOF ends the stream with exit 0"
done_testing
