#!/bin/sh
# Two releases with overlapping names in one namespace, api and
# api-gateway, both failing at about the same time. The pods carry no
# labels, so the longest known release prefix decides; it must never mix
# them, whatever arrives first. Events are events.k8s.io/v1 objects (series,
# note, regarding); history is Helm release storage ConfigMaps
# (HELM_DRIVER=configmap: base64(gzip(json)), one base64 layer).
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/prefix-siblings
LOGS=$(find "$V/var" -type f | sort)

INC="SELECT namespace, release, revision, status, opened_at, last_seen_at, event_count,
 occurrences, tags, diagnosis, attribution, pods FROM incidents ORDER BY release"
OBJ="SELECT i.release, o.object_kind, o.object_name, o.events FROM incident_objects o
 JOIN incidents i ON i.id = o.incident_id ORDER BY 1, 2, 3"

run_rt ingest --db "$T/ref.db" "$V/release-configmaps.json" "$V/events-v1.json" $LOGS
is "$RC" 0 "history first"
run_rt query --db "$T/ref.db" -o json "$INC"
cp "$OUT" "$T/ref.inc"
is "$(jq length "$OUT")" 2 "two incidents"
is "$(jq -c 'map([.namespace, .release, .revision])' "$OUT")" \
	'[["platform","api",7],["platform","api-gateway",4]]' "api 7 and api-gateway 4"
is "$(jq -c '.[0].pods | fromjson' "$OUT")" '["api-5c6d7f8b9-k2xwz","api-5c6d7f8b9-p8rtn"]' "api: its pods only"
is "$(jq -c '.[1].pods | fromjson' "$OUT")" '["api-gateway-7f9d8c6b5-m4hqd","api-gateway-7f9d8c6b5-zz9xl"]' \
	"api-gateway: its pods only"
is "$(jq -c '.[0].tags | fromjson' "$OUT")" '["crashloop","dependency_refused"]' "api: tags"
is "$(jq -r '.[0].diagnosis' "$OUT")" dependency_unreachable "api: connection refused diagnosis"
is "$(jq -c '.[1].tags | fromjson' "$OUT")" '["configmap_not_found","image_pull","volume_mount_failed"]' "api-gateway: tags"
is "$(jq -r 'map(.attribution) | unique | join(",")' "$OUT")" prefix "attributed by prefix"
run_rt query --db "$T/ref.db" -o json "$OBJ"
cp "$OUT" "$T/ref.obj"
is "$(jq -c 'map(select(.object_kind == "ConfigMap")) | map([.release, .object_name])' "$OUT")" \
	'[["api-gateway","api-gateway-routes"]]' "the missing ConfigMap belongs to api-gateway"
run_rt query --db "$T/ref.db" -o json "SELECT count(*) AS n FROM events
 WHERE (release = 'api' AND object_name LIKE 'api-gateway-%')
 OR (release = 'api-gateway' AND object_name NOT LIKE 'api-gateway-%')"
is "$(jq -r '.[0].n' "$OUT")" 0 "no event attributed across"
run_rt query --db "$T/ref.db" -o json "SELECT object_name, first_seen, ts, count FROM events
 WHERE object_name = 'api-gateway-7f9d8c6b5-zz9xl'"
is "$(jq -c 'map([.first_seen, .ts, .count])' "$OUT")" \
	'[["2024-04-10T10:02:12.000000Z","2024-04-10T10:04:40.000000Z",6]]' \
	"series event: eventTime first, series.lastObservedTime last, series.count"
run_rt query --db "$T/ref.db" -o json "SELECT release, revision, status, updated_at FROM revisions ORDER BY release, revision"
is "$(jq -c 'map([.release, .revision, .status])' "$OUT")" \
	'[["api",6,"superseded"],["api",7,"deployed"],["api-gateway",3,"superseded"],["api-gateway",4,"deployed"]]' \
	"revisions from the storage ConfigMaps"
is "$(jq -r '.[1].updated_at' "$OUT")" 2024-04-10T10:00:00.250000Z "api 7: payload's last_deployed (+02:00) as UTC"

# History last, in its own run.
run_rt ingest --db "$T/late.db" "$V/events-v1.json" $LOGS
run_rt ingest --db "$T/late.db" "$V/release-configmaps.json"
run_rt query --db "$T/late.db" -o json "$INC"
ok cmp "$T/ref.inc" "$OUT"
run_rt query --db "$T/late.db" -o json "$OBJ"
ok cmp "$T/ref.obj" "$OUT"

# Only api's history known at first: api-gateway's pods go to api by prefix
# until api-gateway's own history claims them back.
jq '.items |= map(select(.metadata.labels.name == "api"))' "$V/release-configmaps.json" > "$T/api.json"
jq '.items |= map(select(.metadata.labels.name == "api-gateway"))' "$V/release-configmaps.json" > "$T/gw.json"
run_rt ingest --db "$T/split.db" "$T/api.json" "$V/events-v1.json" $LOGS
run_rt query --db "$T/split.db" -o json "SELECT release, pods FROM incidents"
is "$(jq -c 'map(.release)' "$OUT")" '["api"]' "with api alone, api-gateway's pods fall to api"
run_rt ingest --db "$T/split.db" "$T/gw.json"
run_rt query --db "$T/split.db" -o json "$INC"
ok cmp "$T/ref.inc" "$OUT"
run_rt query --db "$T/split.db" -o json "$OBJ"
ok cmp "$T/ref.obj" "$OUT"
# and the other way round
run_rt ingest --db "$T/split2.db" "$T/gw.json" "$V/events-v1.json"
run_rt ingest --db "$T/split2.db" $LOGS
run_rt ingest --db "$T/split2.db" "$T/api.json"
run_rt query --db "$T/split2.db" -o json "$INC"
ok cmp "$T/ref.inc" "$OUT"
done_testing
