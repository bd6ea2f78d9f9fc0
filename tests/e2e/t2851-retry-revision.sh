#!/bin/sh
# Issue 32, item 5. Revision 5 fails on a missing image; revision 6
# deploys 30 s later and its own new pods (ReplicaSet web-6d9f8c7b5,
# first seen after that deploy) crash-loop for ten minutes. Wanted: two
# incidents, revision 5's (bad_image_after_upgrade, its one pod) and
# revision 6's (the crash loop), in every arrival order, not revision 6's
# failure folded into revision 5's incident as "later [6]". The seed's
# rollback case (pods of revision 48 failing on after the rollback to 47)
# must keep its single incident: t2000 and make demo hold that.
. "$(dirname "$0")/lib.sh"
D=$DATA/retry-revision

INC="SELECT revision, diagnosis, later_revisions, pods FROM incidents ORDER BY opened_at"

check() {   # check DB NAME
	run_rt query --db "$1" -o json "$INC"
	cp "$OUT" "$T/$2.json"
	is "$(jq length "$OUT")" 2 "$2: two incidents"
	is "$(jq -r '.[0] | "\(.revision) \(.diagnosis) \(.pods)"' "$OUT")" \
		'5 bad_image_after_upgrade ["web-5b8c7d9f4-abcde"]' \
		"$2: revision 5's, its own pod"
	is "$(jq -r '.[1].revision' "$OUT")" 6 \
		"$2: revision 6's new pods, their own incident"
}

run_rt ingest --db "$T/files.db" "$D/events.ndjson" "$D/helm-history.txt"
is "$RC" 0 "history last"
check "$T/files.db" files

run_rt ingest --db "$T/first.db" "$D/helm-history.txt" "$D/events.ndjson"
check "$T/first.db" first
ok cmp "$T/files.json" "$T/first.json"

tac "$D/events.ndjson" > "$T/reversed.ndjson"
run_rt ingest --db "$T/rev.db" "$T/reversed.ndjson" "$D/helm-history.txt"
check "$T/rev.db" reversed
ok cmp "$T/files.json" "$T/reversed.json"

for f in "$D/events.ndjson" "$D/helm-history.txt"; do
	run_rt ingest --db "$T/runs.db" "$f"
done
check "$T/runs.db" runs
ok cmp "$T/files.json" "$T/runs.json"

# Revision 6 learned after the events: it was deployed while revision 5's
# incident was open.
head -4 "$D/helm-history.txt" > "$T/hist45.txt"
for f in "$T/hist45.txt" "$D/events.ndjson" "$D/helm-history.txt"; do
	run_rt ingest --db "$T/late.db" "$f"
done
check "$T/late.db" late
ok cmp "$T/files.json" "$T/late.json"

# Revision 6's pods in a batch of their own, after revision 5's incident
# is stored; then revision 5's once more, near both incidents (they stay
# apart).
grep -v 6d9f8c7b5 "$D/events.ndjson" > "$T/ev5.ndjson"
grep 6d9f8c7b5 "$D/events.ndjson" > "$T/ev6.ndjson"
for f in "$D/helm-history.txt" "$T/ev5.ndjson" "$T/ev6.ndjson"; do
	run_rt ingest --db "$T/split.db" "$f"
done
check "$T/split.db" split
ok cmp "$T/files.json" "$T/split.json"
run_rt ingest --db "$T/split.db" "$T/ev5.ndjson"
check "$T/split.db" again
ok cmp "$T/files.json" "$T/again.json"

# Revision 6's pods first, then revision 5's failure from before the
# deploy: only then is it known that revision 6 was deployed into an open
# incident, and its ReplicaSet, stored as of the old class, is revision 6's.
for f in "$D/helm-history.txt" "$T/ev6.ndjson" "$T/ev5.ndjson"; do
	run_rt ingest --db "$T/late5.db" "$f"
done
check "$T/late5.db" oldlast
ok cmp "$T/files.json" "$T/oldlast.json"

# The rebuild's first pass writes a window of new events (a revision 4
# pod's failure the day before) before it meets revision 6's pods; the
# passes by class make that window again under the same id: no incident
# is left without events.
sed -e 's/2024-11-05T10:00/2024-11-04T10:00/g' \
    -e 's/web-5b8c7d9f4-abcde/web-4c7b6a5d3-vwxyz/g' "$T/ev5.ndjson" \
    > "$T/ev4.ndjson"
for f in "$T/hist45.txt" "$T/ev5.ndjson"; do
	run_rt ingest --db "$T/day.db" "$f"
done
run_rt ingest --db "$T/day.db" "$D/helm-history.txt" "$T/ev4.ndjson" \
	"$T/ev6.ndjson"
run_rt query --db "$T/day.db" -o json "SELECT revision, (SELECT count(*)
	FROM events e WHERE e.incident_id = i.id) AS n FROM incidents i
	ORDER BY opened_at"
is "$(jq -c '[.[] | .revision]' "$OUT")" '[4,5,6]' \
	"day before: revision 4's, 5's and 6's incidents"
is "$(jq '[.[] | select(.n == 0)] | length' "$OUT")" 0 \
	"day before: none without events"
done_testing
