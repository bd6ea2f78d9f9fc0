#!/bin/sh
# A release upgraded cleanly makes no incident: Normal events (exporter),
# access logs and lines that use the words of errors ("configmap/x
# created", "Happy Helming!", "Readiness probe succeeded", "no error in
# configuration file"), `helm status -o json` and the history table. Also
# with --keep-untagged, which stores the records but opens nothing.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/quiet-release
LOGS=$(find "$V/var" -type f | sort)

run_rt ingest --db "$T/q.db" --release shop/web "$V/helm-status.json" "$V/history.txt" "$V/exporter.ndjson" $LOGS
is "$RC" 0 "ingest"
like "$(cat "$ERR")" ' 0 tagged' "nothing tagged"
run_rt query --db "$T/q.db" -o json "SELECT (SELECT count(*) FROM incidents) AS i,
 (SELECT count(*) FROM events) AS e, (SELECT count(*) FROM incident_objects) AS o"
is "$(jq -c '.[0]' "$OUT")" '{"i":0,"e":0,"o":0}' "no incident, no event"
run_rt query --db "$T/q.db" -o json "SELECT revision, status, chart, description FROM revisions ORDER BY revision"
is "$(jq -c 'map([.revision, .status, .chart])' "$OUT")" \
	'[[1,"superseded","web-1.4.0"],[2,"superseded","web-1.4.1"],[3,"deployed","web-1.5.0"]]' \
	"the history is kept all the same"
run_rt query --db "$T/q.db" -o json "SELECT evidence FROM revisions WHERE revision = 3"
is "$(jq -r '.[0].evidence' "$OUT")" '["payload"]' "helm status payload: a checksum annotation, no hook"
run_rt incidents --db "$T/q.db"
is "$RC" 0 "incidents on an empty table"
is "$(wc -c < "$OUT" | tr -d ' ')" 0 "nothing on stdout"
like "$(cat "$ERR")" 'No incidents' "kubectl-like note on stderr"

run_rt ingest --db "$T/k.db" --keep-untagged "$V/exporter.ndjson" $LOGS
is "$RC" 0 "--keep-untagged"
run_rt query --db "$T/k.db" -o json "SELECT (SELECT count(*) FROM incidents) AS i,
 (SELECT count(*) FROM events) AS e, (SELECT count(*) FROM events WHERE incident_id IS NOT NULL) AS a,
 (SELECT count(*) FROM events WHERE tags <> '[]') AS t"
is "$(jq -c '.[0]' "$OUT")" '{"i":0,"e":9,"a":0,"t":0}' "records stored untagged, in no incident"
run_rt query --db "$T/k.db" -o json "SELECT DISTINCT release FROM events WHERE release IS NOT NULL"
is "$(jq -c 'map(.release)' "$OUT")" '["web"]' "they are still attributed"
done_testing
