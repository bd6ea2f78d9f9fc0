#!/bin/sh
# Every form Helm prints a release's revisions in, as helm writes it
# (tests/data/formats/helm/: history, list and status as tables, with and
# without headers, JSON, YAML and the status text), ingested in Berlin's
# zone, gives the revisions its FILE.expect holds (one JSON array of
# [namespace, release, revision, status, chart, app_version, description,
# updated_at] rows). No line of a table, JSON or YAML form is left over as
# a text record.
. "$(dirname "$0")/lib.sh"
H=$DATA/formats/helm

for f in "$H"/*; do
	case $f in *.expect) continue ;; esac
	b=$(basename "$f")
	rm -f "$T/c.db"*
	TZ=Europe/Berlin run_rt ingest --db "$T/c.db" --release shop/web "$f"
	is "$RC" 0 "$b: ingest"
	unlike "$(cat "$ERR")" 'warning' "$b: no warning"
	run_rt query --db "$T/c.db" -o json "SELECT namespace, release, revision, status, chart, app_version, description, updated_at FROM revisions ORDER BY namespace, release, revision"
	is "$(jq -c 'map([.namespace, .release, .revision, .status, .chart, .app_version, .description, .updated_at])' "$OUT")" \
		"$(cat "$f.expect")" "$b: the revisions expected"
	TZ=Europe/Berlin run_rt classify --all --release shop/web "$f"
	case $b in
	status.txt) want=4 ;;   # TEST SUITE, NOTES: and the notes' two lines
	*) want=0 ;;
	esac
	is "$(jq -s 'map(select(.format == "text")) | length' "$OUT")" "$want" "$b: $want text records"
done
done_testing
