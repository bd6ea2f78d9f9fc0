#!/bin/sh
# A Helm statement without a time (here a `helm install` block cut
# before LAST DEPLOYED) states revision 1 of prod/web, which has two
# lives with a revision 1 (issue 32, release lifecycles). It belongs to
# the newest life whose revision 1 exists, whatever arrives first: the
# old life's records, the new life's or the timeless block, in one run
# and one file per run. Its description lands on the new install's
# revision 1 only, and it makes no revision of its own.
. "$(dirname "$0")/lib.sh"
L=$DATA/lives

REV="SELECT life, revision, status, coalesce(description, '') AS d
 FROM revisions WHERE release = 'web' ORDER BY life, revision"

check() {   # check DB WHAT
	run_rt query --db "$1" -o json "$REV"
	is "$(jq -r 'map("\(.life).\(.revision):\(.status):\(.d)") | join(" ")' "$OUT")" \
		"1.1:superseded: 1.2:superseded: 1.3:superseded: 1.4:superseded: 1.5:deployed: 2.1:deployed:Install complete" \
		"$2: the timeless statement is the new life's revision 1"
	run_rt ingest --db "$1" "$L/events.ndjson"
	run_rt query --db "$1" -o csv \
		"SELECT revision, revision_status FROM incidents"
	is "$(tail -n +2 "$OUT" | tr '\n' ' ')" "1,deployed " \
		"$2: the pods' incident, ingested last, is on the new revision 1"
}

for fam in helm-list secrets; do
	case $fam in
	helm-list) old=$L/helm-list-old.json new=$L/helm-list-new.json ;;
	secrets) old=$L/secrets-old.json new=$L/secrets-new.json ;;
	esac
	in_every_order "$fam order" check "$old" "$L/status-timeless.txt" \
		"$new"
done
done_testing
