#!/bin/sh
# A reinstall reuses revision numbers (issue 32): prod/web had revisions
# 1-5, was uninstalled and installed again as a new revision 1; its pods
# then fail to pull their image. The incident is the new install's
# revision 1 (deployed), never the old life's 5, and no remedy rolls back
# to a revision of the dead install. Through `helm list` records and
# through release Secrets, in every order of the old history, the new
# history and the events, in one run and one file per run.
. "$(dirname "$0")/lib.sh"
L=$DATA/lives

INC="SELECT namespace, release, revision, revision_status, diagnosis, remedy,
 opened_at, event_count FROM incidents ORDER BY opened_at"
REV="SELECT revision, life, status, updated_at FROM revisions
 WHERE release = 'web' ORDER BY life, revision"

check() {   # check DB WHAT
	run_rt query --db "$1" -o json "$INC"
	is "$(jq -r 'map([.namespace, .release, .revision, .revision_status] | join(" ")) | join(";")' "$OUT")" \
		"prod web 1 deployed" "$2: one incident on the reinstall's revision 1, deployed"
	unlike "$(jq -r '.[0].remedy // ""' "$OUT")" "helm rollback web" "$2: no rollback to the old install"
	run_rt query --db "$1" -o csv "SELECT DISTINCT revision FROM events"
	is "$(tail -n +2 "$OUT" | tr '\n' ' ')" "1 " "$2: every event on revision 1"
	run_rt query --db "$1" -o json "$REV"
	is "$(jq -r 'map("\(.life).\(.revision):\(.status)") | join(" ")' "$OUT")" \
		"1.1:superseded 1.2:superseded 1.3:superseded 1.4:superseded 1.5:deployed 2.1:deployed" \
		"$2: both lives readable, the old one first"
	run_rt query --db "$1" -o csv "SELECT id FROM incidents"
	run_rt show --db "$1" "$(tail -n 1 "$OUT")"
	like "$(cat "$OUT")" "opening revision 1 deployed" "$2: show's timeline opens on the new revision 1"
	unlike "$(cat "$OUT")" "revision [1-5] superseded" "$2: and shows none of the old life"
	like "$(cat "$OUT")" "^Install: +2 of 2 " "$2: show says which install"
}

for fam in helm-list secrets; do
	case $fam in
	helm-list) old=$L/helm-list-old.json new=$L/helm-list-new.json ;;
	secrets) old=$L/secrets-old.json new=$L/secrets-new.json ;;
	esac
	ev=$L/events.ndjson
	in_every_order "$fam order" check "$old" "$new" "$ev"
done
done_testing
