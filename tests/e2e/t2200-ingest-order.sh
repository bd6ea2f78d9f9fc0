#!/bin/sh
# Order independence: the same records give the same incidents whatever
# order they arrive in: files in any order, lines shuffled within files,
# history first or last, one file at a time in separate runs.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios

# Everything but ids (which number incidents in the order they were made).
INC="SELECT namespace, release, revision, status, severity, opened_at, last_seen_at,
 closed_at, event_count, occurrences, tags, diagnosis, title, revision_status,
 later_revisions, pods, evidence, remedy FROM incidents ORDER BY namespace, release, opened_at"
EVT="SELECT e.ts, e.first_seen, e.object_kind, e.object_name, e.release, e.revision,
 e.count, e.tags, i.opened_at AS incident FROM events e LEFT JOIN incidents i
 ON i.id = e.incident_id ORDER BY e.ukey"
OBJ="SELECT i.release, i.opened_at, o.object_kind, o.object_name, o.first_seen,
 o.last_seen, o.events FROM incident_objects o JOIN incidents i ON i.id = o.incident_id
 ORDER BY 1, 2, 3, 4"

snapshot() {   # snapshot DB NAME
	run_rt query --db "$1" -o json "$INC"
	cp "$OUT" "$T/$2.inc"
	run_rt query --db "$1" -o json "$EVT"
	cp "$OUT" "$T/$2.evt"
	run_rt query --db "$1" -o json "$OBJ"
	cp "$OUT" "$T/$2.obj"
}

same() {   # same NAME WHAT
	ok cmp "$T/ref.inc" "$T/$1.inc"
	ok cmp "$T/ref.evt" "$T/$1.evt"
	ok cmp "$T/ref.obj" "$T/$1.obj"
}

run_rt ingest --db "$T/ref.db" "$SC"/*/*
is "$RC" 0 "reference run, file order"
snapshot "$T/ref.db" ref
is "$(jq length "$T/ref.inc")" 3 "three incidents"

# History last, events reversed file order.
hist=$(ls "$SC"/*/helm-* "$SC"/*/release-secret*)
evts=$(ls -r "$SC"/*/* | grep -v -e helm- -e release-secret -e '\.py$')
run_rt ingest --db "$T/last.db" $evts $hist
is "$RC" 0 "history last"
snapshot "$T/last.db" last
same last

# Lines shuffled inside every line-per-record file (pretty JSON and tables
# keep their shape), files shuffled, several seeds.
for seed in 1 2 3; do
	d=$T/shuf$seed
	mkdir -p "$d"
	for f in "$SC"/*/*; do
		case "$f" in *.py) continue ;; esac
		b=$(basename "$(dirname "$f")")-$(basename "$f")
		case "$f" in
		*.log) b=$(basename "$f") ;;
		esac
		case "$f" in
		*.ndjson|*.log) awk -v s=$seed 'BEGIN{srand(s)} {print rand() "\t" $0}' "$f" |
			sort | cut -f2- > "$d/$b" ;;
		*) cp "$f" "$d/$b" ;;
		esac
	done
	files=$(ls "$d" | awk -v s=$seed 'BEGIN{srand(s)} {print rand() "\t" $0}' | sort | cut -f2-)
	(cd "$d" && "$REVTRAIL" ingest --db "$T/s$seed.db" $files > /dev/null 2> "$T/s$seed.err")
	is "$?" 0 "shuffle $seed ingest"
	snapshot "$T/s$seed.db" s$seed
	same s$seed
done

# One file per run: the database carries state between runs.
for f in $(ls -r "$SC"/*/* | grep -v '\.py$'); do
	run_rt ingest --db "$T/runs.db" "$f"
	[ "$RC" = 0 ] || is "$RC" 0 "ingest $f alone"
done
snapshot "$T/runs.db" runs
same runs
done_testing
