#!/bin/sh
# Issue 32, item 5, on the incremental path. Revision 6 deploys 30 s
# into revision 5's failure; its own new pods are a class of their own
# (correlate/revclass.c). Two cases a batch alone cannot see without the
# classes remembered in the store:
#  restart: a rollout restart late in revision 6's reign (a new ReplicaSet
#    at 10:40, revision 6's first incident over at 10:10) while revision
#    5's old pod fails again (from 10:35, an incident of the old class
#    opened after revision 6's deploy): the restart's pods are revision
#    6's, their own incident, not folded into the old pod's.
#  oldpod: revision 5's old pod fails once more, alone, at 10:25, next to
#    revision 6's incident and 25 min after its own last failure: it is an
#    incident of the old class, not a part of revision 6's.
# Every order of the three files, in one run and a run per file (the late
# file then a batch of its own, over incidents already stored), gives what
# one run over all of them gives.
. "$(dirname "$0")/lib.sh"

INC="SELECT revision, pods FROM incidents ORDER BY opened_at, id"

check_restart() {   # check_restart DB NAME
	run_rt query --db "$1" -o json "$INC"
	is "$(jq -c '[.[] | "\(.revision) \(.pods)"]' "$OUT")" \
	   '["5 [\"web-5b8c7d9f4-abcde\"]","6 [\"web-6d9f8c7b5-fghij\"]","6 [\"web-5b8c7d9f4-abcde\"]","6 [\"web-7f4e8d2c6-pqrst\"]"]' \
	   "$2: the old pod's two, revision 6's and the restart's incidents"
}

check_oldpod() {    # check_oldpod DB NAME
	run_rt query --db "$1" -o json "$INC"
	is "$(jq -c '[.[] | "\(.revision) \(.pods)"]' "$OUT")" \
	   '["5 [\"web-5b8c7d9f4-abcde\"]","6 [\"web-6d9f8c7b5-fghij\"]","6 [\"web-5b8c7d9f4-abcde\"]"]' \
	   "$2: the old pod's two incidents apart from revision 6's"
}

D=$DATA/class-restart
in_every_order restart check_restart "$D/helm-history.txt" \
	"$D/before.ndjson" "$D/restart.ndjson"
D=$DATA/class-oldpod
in_every_order oldpod check_oldpod "$D/helm-history.txt" \
	"$D/before.ndjson" "$D/oldpod.ndjson"

# The late file once more, its events known already: nothing moves.
run_rt ingest --db "$T/oldpod-1-runs.db" "$D/oldpod.ndjson"
check_oldpod "$T/oldpod-1-runs.db" "oldpod again"
D=$DATA/class-restart
run_rt ingest --db "$T/restart-1-runs.db" "$D/restart.ndjson"
check_restart "$T/restart-1-runs.db" "restart again"

# The ReplicaSets remembered are bounded: 4100 of one release, 4096 kept
# (the rest stay in class 0, as a rescan leaves them).
awk 'BEGIN { for (i = 0; i < 4100; i++) printf "{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"e%d\",\"namespace\":\"prod\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"web-%dc%07d-abcde\",\"namespace\":\"prod\"},\"reason\":\"BackOff\",\"message\":\"Back-off restarting failed container web\",\"type\":\"Warning\",\"firstTimestamp\":\"2024-11-05T10:00:00Z\",\"lastTimestamp\":\"2024-11-05T10:00:00Z\",\"count\":1}\n", i, i % 9 + 1, i }' > "$T/many.ndjson"
run_rt ingest --db "$T/many.db" "$D/helm-history.txt" "$T/many.ndjson"
is "$RC" 0 "4100 ReplicaSets"
run_rt query --db "$T/many.db" -o json "SELECT count(*) AS n FROM replicasets"
is "$(jq '.[0].n' "$OUT")" 4096 "4096 of them remembered"
run_rt query --db "$T/many.db" -o json "SELECT event_count FROM incidents"
is "$(jq -c '[.[] | .event_count]' "$OUT")" '[4100]' "every event in the one incident"
done_testing
