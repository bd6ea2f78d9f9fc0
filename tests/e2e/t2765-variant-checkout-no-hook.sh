#!/bin/sh
# A failed upgrade with the symptoms of the hook race (a key missing from
# a ConfigMap, CreateContainerConfigError on some pods), but the decoded
# release payload of that revision shows hooks = [] and the ConfigMap as a
# regular resource whose keys changed. Not hook_configmap_race (whose
# remedy would remove hook annotations that do not exist): the config
# diagnosis that fits, with evidence saying why not the race.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/checkout-no-hook

run_rt ingest --db "$T/a.db" "$V/release-secrets.json" "$V/events.ndjson"
is "$RC" 0 "ingest"
run_rt query --db "$T/a.db" -o json "SELECT release, revision, revision_status, diagnosis, evidence, remedy FROM incidents"
is "$(jq length "$OUT")" 1 "one incident"
is "$(jq -c '.[0] | [.release, .revision, .revision_status, .diagnosis]' "$OUT")" \
	'["checkout",6,"failed","stale_config_mount"]' "checkout revision 6: the config diagnosis"
like "$(jq -r '.[0].evidence' "$OUT")" \
	'not hook_configmap_race: the release payload of revision 6 templates no ConfigMap/Secret as a Helm hook' \
	"evidence: why not the hook race"
unlike "$(jq -r '.[0].remedy' "$OUT")" 'remove the helm.sh/hook' "no advice about hooks that do not exist"

# The events alone: no revision known, so neither diagnosis applies.
run_rt ingest --db "$T/b.db" "$V/events.ndjson"
run_rt query --db "$T/b.db" -o json "SELECT diagnosis FROM incidents"
is "$(jq -r '.[0].diagnosis' "$OUT")" null "no revision known: no diagnosis that needs one"
done_testing
