#!/bin/sh
# SIGTERM / SIGINT stop ingest within a second whatever it reads: a FIFO
# named as a path and a pipe named as a path (as `ingest <(kubectl get
# events -w -o json)` gives), each left open and quiet after its first
# lines. The read blocked in the kernel must not outlive the signal.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race

exited() {   # exited PID: until PID is gone, 3 s max (polled every 50 ms)
	i=0
	while [ $i -lt 60 ]; do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# stop KIND SIG PID DB: the ingest at PID has committed its events; signal
# it and see it gone, with exit 0 and every event kept.
stop() {
	ok wait_events "$4" 6
	kill -"$2" "$3"
	ok exited "$3"
	exec 3>&-       # the writer closes: a stuck ingest sees EOF now
	rc=0
	wait "$3" || rc=$?
	is "$rc" 0 "$1 SIG$2: exit 0"
	run_rt query --db "$4" -o json "SELECT count(*) AS n FROM events"
	is "$(jq -r '.[0].n' "$OUT")" 6 "$1 SIG$2: all events stored"
}

for sig in TERM INT; do
	# A FIFO given as the input path.
	mkfifo "$T/fifo$sig"
	"$REVTRAIL" ingest --db "$T/f$sig.db" "$T/fifo$sig" 2> "$T/err$sig" &
	pid=$!
	exec 3> "$T/fifo$sig"
	cat "$SC/events.ndjson" >&3
	stop fifo $sig $pid "$T/f$sig.db"

	# A pipe given as a path: /dev/stdin opens a second descriptor of the
	# pipe, so pointing fd 0 elsewhere does not end the read.
	mkfifo "$T/feed$sig"
	cat "$T/feed$sig" | "$REVTRAIL" ingest --db "$T/p$sig.db" /dev/stdin \
		2> "$T/perr$sig" &
	pid=$!
	exec 3> "$T/feed$sig"
	cat "$SC/events.ndjson" >&3
	stop pipe $sig $pid "$T/p$sig.db"
done
done_testing
