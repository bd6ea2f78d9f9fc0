#!/bin/sh
# show's "What changed" compares the incident's revision with the one
# before it in the same install (issue 32, item 1): after an uninstall
# and install again, the new revision 1 has no revision before it, and
# the old install's revision 1 (or 5) is not it.
. "$(dirname "$0")/lib.sh"
L=$DATA/lives

run_rt ingest --db "$T/a.db" "$L/secrets-old.json" "$L/secrets-new.json" \
	"$L/events.ndjson"
is "$RC" 0 "both installs and the events"
# The manifests' summaries, as a decoded manifest would have left them:
# the old install's revisions 1 and 5, the new install's 1 (and later 2).
sum() {   # sum REVISION LIFE IMAGE
	sqlite3 "$T/a.db" "UPDATE revisions SET manifest_summary =
	 'Deployment/web' || char(9) || 'containers[web].image' || char(9) ||
	 '$3' || char(10) WHERE release = 'web' AND revision = $1 AND life = $2"
}
sum 1 1 web:1.0.0
sum 5 1 web:5.0.0
sum 1 2 web:9.0.0
run_rt query --db "$T/a.db" -o csv "SELECT id FROM incidents"
ID=$(tail -n 1 "$OUT")
run_rt show --db "$T/a.db" "$ID"
is "$RC" 0 "show"
unlike "$(cat "$OUT")" 'What changed' \
	"no What changed: revision 1 of the new install has none before it"
unlike "$(cat "$OUT")" 'web:1\.0\.0|web:5\.0\.0' "nothing of the old install"
run_rt show --db "$T/a.db" -o json "$ID"
is "$(jq -c '.changes_revisions // null' "$OUT")" null "-o json: no changes"

# A revision 2 of the new install, with the incident on it: compared
# with the new install's revision 1, not the old one's.
sqlite3 "$T/a.db" "INSERT INTO revisions(namespace, release, revision,
 status, updated_ns, life, cluster) SELECT namespace, release, 2,
 'deployed', updated_ns + 1, 2, cluster FROM revisions WHERE release = 'web'
 AND revision = 1 AND life = 2; UPDATE incidents SET revision = 2"
sum 2 2 web:9.1.0
run_rt show --db "$T/a.db" "$ID"
like "$(cat "$OUT")" 'What changed \(revision 1 -> 2\)' "revision 1 -> 2"
like "$(cat "$OUT")" 'web:9\.0\.0 -> web:9\.1\.0' "within the new install"
done_testing
