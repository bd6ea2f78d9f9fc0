#!/bin/sh
# The block `helm status` (and install/upgrade) prints, of any completeness.
# A whole block gives its revision with the DESCRIPTION printed after
# REVISION; a block cut before REVISION, or with `REVISION: 0`, gives no
# revision but is counted and warned (never silently lost), and its
# DESCRIPTION is kept as a Helm text record of the release, not a stray
# line. A lone NAME: line of some other tool is no block.
. "$(dirname "$0")/lib.sh"

cat > "$T/whole.txt" <<'X'
NAME: web
LAST DEPLOYED: Tue Jan  2 10:00:00 2024
NAMESPACE: shop
STATUS: failed
REVISION: 3
CHART: web
VERSION: 1.6.0
APP_VERSION: 1.6.0
DESCRIPTION: Upgrade "web" failed: context deadline exceeded
TEST SUITE: None
X
run_rt ingest --db "$T/w.db" "$T/whole.txt"
is "$RC" 0 "ingest a whole block"
unlike "$(cat "$ERR")" 'without a usable revision' "nothing to warn of"
run_rt query --db "$T/w.db" -o json "SELECT namespace, release, revision, status, chart, app_version, description, updated_at FROM revisions"
is "$(jq -c '.' "$OUT")" '[{"namespace":"shop","release":"web","revision":3,"status":"failed","chart":"web-1.6.0","app_version":"1.6.0","description":"Upgrade \"web\" failed: context deadline exceeded","updated_at":"2024-01-02T10:00:00.000000Z"}]' \
	"the revision carries its description and chart"

# cut off before REVISION (at the end of the file, and before other text)
printf 'NAME: api\nLAST DEPLOYED: Tue Jan  2 10:00:00 2024\nNAMESPACE: shop\nSTATUS: deployed\n' > "$T/cut.txt"
printf 'NAME: db\nNAMESPACE: data\nSTATUS: pending-upgrade\nsome other line\n' > "$T/cut2.txt"
# REVISION 0, its DESCRIPTION after it
printf 'NAME: cache\nLAST DEPLOYED: Tue Jan  2 10:00:00 2024\nNAMESPACE: shop\nSTATUS: failed\nREVISION: 0\nDESCRIPTION: Release "cache" failed: timed out waiting for the condition\n' > "$T/zero.txt"
run_rt ingest --db "$T/c.db" "$T/cut.txt" "$T/cut2.txt" "$T/zero.txt"
is "$RC" 0 "ingest incomplete blocks"
like "$(cat "$ERR")" 'ingest: warning: 3 helm status outputs without a usable revision \(first at .*cut\.txt:0\)' \
	"each counted, the first named"
run_rt query --db "$T/c.db" -o json "SELECT count(*) AS n FROM revisions"
is "$(jq -r '.[0].n' "$OUT")" 0 "no revision made up"

run_rt classify --all "$T/zero.txt"
is "$RC" 0 "classify"
is "$(jq -c 'select(.message | test("DESCRIPTION")) | [.format, .fields.release, .fields.release_namespace]' "$OUT")" \
	'["helm-text","cache","shop"]' "the DESCRIPTION is kept as the release's Helm text"
like "$(cat "$ERR")" 'classify: warning: 1 helm status output without a usable revision' "classify counts it too"

printf 'NAME: not-helm\nall good here\n' > "$T/other.txt"
run_rt classify --all "$T/other.txt"
unlike "$(cat "$ERR")" 'usable revision' "a lone NAME: line is no block"

# helm status -o json of a release whose version Go left out (omitempty):
# still a release, its description kept, counted as without a revision.
printf '{"name":"web","info":{"first_deployed":"2024-01-02T09:00:00.123+01:00","last_deployed":"2024-01-02T10:00:00.123+01:00","deleted":"","description":"Upgrade \\"web\\" failed: timed out","status":"failed"},"namespace":"shop"}\n' > "$T/st.json"
run_rt classify --all "$T/st.json"
is "$RC" 0 "classify status JSON without version"
is "$(jq -c '[.format, .fields.release, .fields.release_namespace, .message, .ts]' "$OUT")" \
	'["helm-status","web","shop","Upgrade \"web\" failed: timed out","2024-01-02T09:00:00.123000Z"]' \
	"recognised as helm status, not a JSON log"
like "$(cat "$ERR")" '1 helm status output without a usable revision' "counted"
done_testing
