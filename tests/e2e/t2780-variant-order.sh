#!/bin/sh
# Order independence on every variant scenario: the same records give the
# same incidents, events and objects whatever order they come in: files
# reversed, lines shuffled, one file per run.
. "$(dirname "$0")/lib.sh"
VD=$DATA/variants

INC="SELECT namespace, release, revision, status, severity, opened_at, last_seen_at,
 closed_at, event_count, occurrences, tags, diagnosis, title, revision_status,
 later_revisions, attribution, pods, evidence, remedy FROM incidents
 ORDER BY namespace, release, opened_at"
EVT="SELECT e.first_seen, e.ts, e.object_kind, e.object_name, e.release,
 e.release_namespace, e.attribution, e.revision, e.count, e.tags, i.opened_at AS incident
 FROM events e LEFT JOIN incidents i ON i.id = e.incident_id ORDER BY e.ukey"
OBJ="SELECT i.release, i.opened_at, o.object_kind, o.object_name, o.first_seen,
 o.last_seen, o.events FROM incident_objects o JOIN incidents i ON i.id = o.incident_id
 ORDER BY 1, 2, 3, 4"

snapshot() {   # snapshot DB NAME
	: > "$T/$2.snap"
	for q in "$INC" "$EVT" "$OBJ"; do
		run_rt query --db "$1" -o json "$q"
		cat "$OUT" >> "$T/$2.snap"
	done
}

option() {   # the --release a scenario's history needs
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
	is "$RC" 0 "$v: reference run"
	snapshot "$T/$v-ref.db" "$v-ref"

	run_rt ingest --db "$T/$v-rev.db" "$@" $(printf '%s\n' $files | sort -r)
	snapshot "$T/$v-rev.db" "$v-rev"
	ok cmp "$T/$v-ref.snap" "$T/$v-rev.snap"

	for f in $(printf '%s\n' $files | sort -r); do
		run_rt ingest --db "$T/$v-each.db" "$@" "$f"
	done
	snapshot "$T/$v-each.db" "$v-each"
	ok cmp "$T/$v-ref.snap" "$T/$v-each.snap"

	# lines shuffled within the line-per-record files; the file names
	# (pod paths) are kept, so the copies live under the same layout.
	# Not where the order inside one container's log is its meaning: the
	# helm command a pod ran names the release of the output after it.
	case $v in helm-in-pods) continue ;; esac
	for seed in 1; do
		sd=$T/$v-shuf$seed
		for f in $files; do
			out=$sd/${f#"$dir"}
			mkdir -p "$(dirname "$out")"
			case "$f" in
			*.ndjson|*.log) awk -v s=$seed 'BEGIN{srand(s)} {print rand() "\t" $0}' "$f" |
				sort | cut -f2- > "$out" ;;
			*) cp "$f" "$out" ;;
			esac
		done
		run_rt ingest --db "$T/$v-shuf$seed.db" "$@" $(find "$sd" -type f | sort -r)
		snapshot "$T/$v-shuf$seed.db" "$v-shuf$seed"
		ok cmp "$T/$v-ref.snap" "$T/$v-shuf$seed.snap"
	done
done

# reused-uid-label: one uid, two pods, the release label on the lesser
# copy only. The row is the greater copy's pod with that pod's own
# attribution, also when the other copy comes in a later batch of the
# same run (a FIFO whose second half is written once the first half's
# batch is committed), in either order.
V=$VD/reused-uid-label
for first in thumbs encoder; do
	second=thumbs n=1
	[ $first = thumbs ] && second=encoder n=2
	db=$T/reused-$first.db
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	exec 3<>"$T/fifo"
	"$REVTRAIL" ingest --db "$db" "$V/helm-list.json" "$T/fifo" > /dev/null 2>&1 3>&- &
	pid=$!
	cat "$V/exporter-$first.ndjson" >&3
	ok wait_events "$db" $n
	cat "$V/exporter-$second.ndjson" >&3
	exec 3>&-
	wait $pid
	is "$?" 0 "reused uid, $first first: ingest"
	snapshot "$db" "reused-$first"
	ok cmp "$T/reused-uid-label-ref.snap" "$T/reused-$first.snap"
done
run_rt query --db "$T/reused-uid-label-ref.db" -o csv \
	"SELECT object_name, release, attribution, revision FROM events ORDER BY object_name"
is "$(tail -n +2 "$OUT" | tr '\n' ' ')" \
	"encoder-6d8f7c9b5-t4k9x,encoder,workload,0 thumbs-5f7c9d8b6-q2w8z,gallery,label,4 " \
	"the greater copy's pod, attributed by its own labels (none)"
done_testing
