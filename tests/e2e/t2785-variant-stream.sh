#!/bin/sh
# Every variant scenario streamed through a pipe one line at a time, the
# way `tail -F ... | revtrail ingest` delivers it: each chunk is its own
# batch and transaction, so a release's story is spread over many commits
# (labels, history and events in different batches). The result equals
# ingesting the files in one run.
. "$(dirname "$0")/lib.sh"
VD=$DATA/variants

INC="SELECT namespace, release, revision, status, severity, opened_at, last_seen_at,
 closed_at, event_count, occurrences, tags, diagnosis, title, revision_status,
 later_revisions, attribution, pods, evidence, remedy FROM incidents
 ORDER BY namespace, release, opened_at"
EVT="SELECT e.first_seen, e.ts, e.object_kind, e.object_name, e.release,
 e.release_namespace, e.attribution, e.revision, e.count, e.tags, i.opened_at AS incident
 FROM events e LEFT JOIN incidents i ON i.id = e.incident_id ORDER BY e.ukey"

snapshot() {   # snapshot DB NAME
	: > "$T/$2.snap"
	for q in "$INC" "$EVT"; do
		run_rt query --db "$1" -o json "$q"
		cat "$OUT" >> "$T/$2.snap"
	done
}

option() {
	case $1 in
	edge-secret-mount) echo lb/edge ;;
	checkout-hook-race) echo shop/checkout ;;
	gaps-and-series) echo jobs/worker ;;
	quiet-release) echo shop/web ;;
	*) echo "" ;;
	esac
}

for dir in "$VD"/*/; do
	v=$(basename "$dir")
	rel=$(option "$v")
	set -- ${rel:+--release "$rel"}
	files=$(find "$dir" -type f | sort)
	run_rt ingest --db "$T/$v-ref.db" "$@" $files
	is "$RC" 0 "$v: the reference run"
	snapshot "$T/$v-ref.db" "$v-ref"
	# tail's "==> FILE <==" headers name the pod of the /var/log lines;
	# the awk writer flushes every line. revtrail is last in the pipe, so
	# $? is its exit status.
	tail -n +1 $files | awk '{ print; fflush(); system("sleep 0.002") }' |
		"$REVTRAIL" ingest --db "$T/$v-pipe.db" "$@" > "$T/pipe.out" 2> "$T/pipe.err"
	rc=$?
	is "$rc" 0 "$v: streamed line by line"
	unlike "$(cat "$T/pipe.err")" 'Sanitizer|runtime error' "$v: cleanly"
	diag "$v: $(sed -n 's/.*; \([0-9]*\) batches$/\1/p' "$T/pipe.err") batches"
	snapshot "$T/$v-pipe.db" "$v-pipe"
	ok cmp "$T/$v-ref.snap" "$T/$v-pipe.snap"
done
done_testing
