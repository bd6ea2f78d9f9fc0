#!/bin/sh
# Issue 32, item 5 (not done yet: the checks marked TODO fail today).
# Revision 5 fails on a missing image; revision 6 deploys 30 s later and
# its own new pods (ReplicaSet web-6d9f8c7b5, first seen after that
# deploy) crash-loop for ten minutes. Wanted: two incidents, revision 5's
# (bad_image_after_upgrade, its one pod) and revision 6's (the crash
# loop), in every arrival order. Today revision 6's failure is folded into
# revision 5's incident as "later [6]". The seed's rollback case (pods of
# revision 48 failing on after the rollback to 47) must keep its single
# incident: t2000 and make demo hold that.
. "$(dirname "$0")/lib.sh"
D=$DATA/retry-revision

todo() {   # todo NAME EXPECTED GOT: a check of the unfinished item
	_n=$((_n + 1))
	if [ "$2" = "$3" ]; then echo "ok $_n - $1 # TODO issue 32 item 5"
	else echo "not ok $_n - $1 # TODO issue 32 item 5"; diag "got:  $3" "want: $2"; fi
}

INC="SELECT revision, diagnosis, later_revisions, pods FROM incidents ORDER BY opened_at"

check() {   # check DB NAME
	run_rt query --db "$1" -o json "$INC"
	cp "$OUT" "$T/$2.json"
	todo "$2: two incidents" 2 "$(jq length "$OUT")"
	todo "$2: revision 5's, its own pod" \
		'5 bad_image_after_upgrade ["web-5b8c7d9f4-abcde"]' \
		"$(jq -r '.[0] | "\(.revision) \(.diagnosis) \(.pods)"' "$OUT")"
	todo "$2: revision 6's new pods, their own incident" 6 \
		"$(jq -r '.[1].revision' "$OUT")"
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
done_testing
