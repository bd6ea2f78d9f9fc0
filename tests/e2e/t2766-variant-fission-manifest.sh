#!/bin/sh
# A chart whose workloads carry no release label and whose names do not
# start with the release name: Deployments `router` and `executor` of
# release `fission`. The release's storage Secrets hold the manifest; the
# workloads it lists are the release's, so both pods' events make one
# incident of fission at revision 3, in whichever order the files come.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/fission-manifest
INC="SELECT namespace, release, revision, attribution, pods FROM incidents"

for order in "$V/release-secrets.json $V/events.ndjson" "$V/events.ndjson $V/release-secrets.json"; do
	rm -f "$T"/a.db*
	run_rt ingest --db "$T/a.db" $order
	is "$RC" 0 "ingest"
	run_rt query --db "$T/a.db" -o json "$INC"
	is "$(jq -c 'map([.namespace, .release, .revision, .attribution])' "$OUT")" \
		'[["fission","fission",3,"manifest"]]' "one incident: fission revision 3 ($(basename "${order%% *}") first)"
	is "$(jq -c '.[0].pods | fromjson' "$OUT")" \
		'["router-6f8b9d7c5-x2k4p","executor-7c9d5b8f6-m3n8q"]' "both workloads' pods"
done

# Without the manifest only the workload names are left.
run_rt ingest --db "$T/b.db" "$V/events.ndjson"
run_rt query --db "$T/b.db" -o json "SELECT release, revision FROM incidents ORDER BY release"
is "$(jq -c 'map([.release, .revision])' "$OUT")" '[["executor",0],["router",0]]' \
	"events alone: inferred from the workloads"
done_testing
