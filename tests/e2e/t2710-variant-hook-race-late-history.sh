#!/bin/sh
# hook_configmap_race from kubernetes-event-exporter JSON and Vector
# records, with the history arriving in a later run: first the incident has
# no revision (0) and no hook diagnosis; `helm history -o json` (--release)
# and the revision 12 release Secret (its `hooks` hold the ConfigMap) then
# fill in events.revision, the incident's revision 12, the rollback "Rollback
# to 11" that followed while it stayed open, and the diagnosis. Only two of
# the four pods broke: the incident lists those two.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/checkout-hook-race
DB=$T/c.db

run_rt ingest --db "$DB" "$V"/events/*
is "$RC" 0 "run 1: events and logs, no history"
run_rt query --db "$DB" -o json "SELECT namespace, release, revision, diagnosis, revision_status, pods FROM incidents"
is "$(jq length "$OUT")" 1 "one incident"
is "$(jq -r '.[0] | [.namespace, .release, .revision] | join(" ")' "$OUT")" "shop checkout 0" \
	"shop/checkout, revision 0 (no history yet)"
unlike "$(jq -r '.[0].diagnosis' "$OUT")" hook_configmap_race "no hook diagnosis without history"
is "$(jq -r '.[0].revision_status' "$OUT")" null "revision status unknown"
run_rt query --db "$DB" -o json "SELECT DISTINCT revision FROM events"
is "$(jq -c 'map(.revision)' "$OUT")" '[0]' "events.revision 0"

run_rt ingest --db "$DB" --release shop/checkout "$V"/history/*
is "$RC" 0 "run 2: the history"
run_rt query --db "$DB" -o json "SELECT * FROM incidents"
is "$(jq length "$OUT")" 1 "still one incident"
is "$(jq -r '.[0] | [.namespace, .release, .revision, .status, .diagnosis] | join(" ")' "$OUT")" \
	"shop checkout 12 open hook_configmap_race" "revision 12, open, hook_configmap_race"
is "$(jq -r '.[0].revision_status' "$OUT")" failed "opening revision failed"
is "$(jq -r '.[0].later_revisions' "$OUT")" "[13]" "the rollback 13 followed"
is "$(jq -c '.[0].pods | fromjson' "$OUT")" \
	'["checkout-web-5d8f7c6b9-b7xkq","checkout-web-5d8f7c6b9-lq9vn"]' "only the two broken pods"
is "$(jq -c '.[0].tags | fromjson' "$OUT")" \
	'["config_key_missing","configmap_not_found","crashloop","db_auth_failed"]' "tags"
like "$(jq -r '.[0].evidence' "$OUT")" 'checkout-env is a Helm hook with before-hook-creation in revision 12' \
	"the hook ConfigMap from the Secret's payload is evidence"
like "$(jq -r '.[0].evidence' "$OUT")" 'revision 12 status failed' "the failed upgrade is evidence"
unlike "$(jq -r '.[0].evidence' "$OUT")" 'checkout-migrate' "a hook Job is no config evidence"
like "$(jq -r '.[0].remedy' "$OUT")" 'kubectl delete pod -n shop checkout-web-5d8f7c6b9-b7xkq checkout-web-5d8f7c6b9-lq9vn`' \
	"remedy deletes exactly the broken pods"
like "$(jq -r '.[0].remedy' "$OUT")" 'kubectl get configmap checkout-env -n shop' "remedy names the ConfigMap"
is "$(jq -r '.[0].last_seen_at' "$OUT")" 2024-07-02T13:21:40.000000Z "stays open past the rollback"

run_rt query --db "$DB" -o json "SELECT revision, count(*) AS n FROM events GROUP BY 1 ORDER BY 1"
is "$(jq -c 'map([.revision, .n])' "$OUT")" '[[12,5],[13,2]]' \
	"events.revision filled in: 12 before the rollback, 13 after"
run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM events WHERE object_name IN
 ('checkout-web-5d8f7c6b9-h2mzp', 'checkout-web-5d8f7c6b9-t4wrc')"
is "$(jq -r '.[0].n' "$OUT")" 0 "the healthy pods' lines are not stored"
run_rt query --db "$DB" -o json "SELECT entry, revision, reason FROM timeline WHERE incident_id = 1"
is "$(jq -c '[.[] | select(.entry == "revision") | .revision]' "$OUT")" '[12,13]' "timeline: revisions 12 and 13"
is "$(jq -r '.[0].entry + " " + (.[0].revision | tostring)' "$OUT")" "revision 12" "timeline opens with the failed upgrade"
run_rt query --db "$DB" -o json "SELECT object_kind, object_name, events FROM incident_objects
 WHERE object_kind = 'ConfigMap'"
is "$(jq -c 'map([.object_name, .events])' "$OUT")" '[["checkout-env",2]]' "the ConfigMap is an incident object"
run_rt query --db "$DB" -o json "SELECT revision, status, description FROM revisions ORDER BY revision"
is "$(jq -c 'map([.revision, .status])' "$OUT")" '[[11,"superseded"],[12,"failed"],[13,"deployed"]]' "revisions"
is "$(jq -r '.[2].description' "$OUT")" "Rollback to 11" "the rollback's description"
cp "$OUT" "$T/rev.json"

# History first, all in one run: the same incident.
run_rt ingest --db "$T/one.db" --release shop/checkout "$V"/history/* "$V"/events/*
run_rt query --db "$T/one.db" -o json "SELECT namespace, release, revision, status, tags, diagnosis,
 later_revisions, pods, evidence, opened_at, last_seen_at, event_count FROM incidents"
cp "$OUT" "$T/one.json"
run_rt query --db "$DB" -o json "SELECT namespace, release, revision, status, tags, diagnosis,
 later_revisions, pods, evidence, opened_at, last_seen_at, event_count FROM incidents"
ok cmp "$T/one.json" "$OUT"
done_testing
