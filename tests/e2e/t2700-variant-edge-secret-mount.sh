#!/bin/sh
# stale_config_mount in other formats and another release: release `edge`
# (namespace lb) deploys Deployment `haproxy`, so pod names carry no release
# prefix. Only the kubernetes-event-exporter records carry the pods' labels;
# the CRI-O logs under /var/log/pods name just the pod. History is `helm
# history -o json` (no release name: --release) with +02:00 times. The
# mount failure is a Secret plus a subPath error. Whatever order the inputs
# come in, across runs, it is one incident of lb/edge revision 3.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/edge-secret-mount
LOGS=$(find "$V/var" -type f | sort)

INC="SELECT namespace, release, revision, status, severity, opened_at, last_seen_at,
 event_count, occurrences, tags, diagnosis, title, revision_status, later_revisions,
 attribution, evidence, pods FROM incidents ORDER BY opened_at"
EVT="SELECT e.first_seen, e.object_kind, e.object_name, e.release, e.release_namespace,
 e.attribution, e.revision, e.count, e.tags, i.opened_at AS incident FROM events e
 LEFT JOIN incidents i ON i.id = e.incident_id ORDER BY e.first_seen, e.object_name, e.tags"
snapshot() {   # snapshot DB NAME
	run_rt query --db "$1" -o json "$INC"
	cp "$OUT" "$T/$2.inc"
	run_rt query --db "$1" -o json "$EVT"
	cp "$OUT" "$T/$2.evt"
}

run_rt ingest --db "$T/all.db" --release lb/edge "$V/history.json" "$V/exporter.ndjson" $LOGS
is "$RC" 0 "ingest exits 0"
run_rt query --db "$T/all.db" -o json "SELECT * FROM incidents"
is "$(jq length "$OUT")" 1 "one incident"
is "$(jq -r '.[0] | [.namespace, .release, .revision, .status] | join(" ")' "$OUT")" \
	"lb edge 3 open" "lb/edge, revision 3 (the upgrade at 16:30:05+02:00), open"
is "$(jq -r '.[0].diagnosis' "$OUT")" stale_config_mount "diagnosis"
is "$(jq -r '.[0].revision_status' "$OUT")" deployed "opening revision status"
is "$(jq -c '.[0].tags | fromjson' "$OUT")" \
	'["config_file_missing","crashloop","permission_denied","secret_not_found","subpath_mount","volume_mount_failed"]' \
	"tags: the Secret, the subPath, the log's config error"
is "$(jq -c '.[0].pods | fromjson' "$OUT")" \
	'["haproxy-6c8d9f7b5-w9xqz","haproxy-6c8d9f7b5-r2mtk"]' "pods: the broken ones, first seen first"
is "$(jq -r '.[0].attribution' "$OUT")" label "attributed by label"
is "$(jq -r '.[0].event_count' "$OUT")" 7 "7 events"
like "$(jq -r '.[0].remedy' "$OUT")" 'kubectl rollout restart deployment/haproxy -n lb' "remedy restarts the workload (not the Secret)"

run_rt query --db "$T/all.db" -o json "SELECT DISTINCT release, release_namespace, revision,
 incident_id, attribution FROM events"
is "$(jq -c '.' "$OUT")" '[{"release":"edge","release_namespace":"lb","revision":3,"incident_id":1,"attribution":"label"}]' \
	"every event: edge, revision 3, the incident, by label (also the unlabelled CRI-O lines)"
run_rt query --db "$T/all.db" -o json "SELECT format, count(*) AS n FROM events GROUP BY 1 ORDER BY 1"
is "$(jq -c 'map([.format, .n])' "$OUT")" '[["cri",2],["exporter",5]]' "CRI-O lines stored with their +00:00 times"
run_rt query --db "$T/all.db" -o json "SELECT min(first_seen) AS f FROM events WHERE format = 'cri'"
is "$(jq -r '.[0].f' "$OUT")" 2024-06-12T14:31:02.120031Z "CRI-O time in UTC, microseconds"
run_rt query --db "$T/all.db" -o json "SELECT count(*) AS n FROM events WHERE pod LIKE 'haproxy-74d9c6b8f-%' OR object_name LIKE 'haproxy-74d9c6b8f-%'"
is "$(jq -r '.[0].n' "$OUT")" 0 "the healthy pod left no event"
run_rt query --db "$T/all.db" -o json "SELECT object_kind || '/' || object_name AS o, events
 FROM incident_objects ORDER BY first_seen, object_kind, object_name"
is "$(jq -c 'map(.o)' "$OUT")" '["Pod/haproxy-6c8d9f7b5-w9xqz","Secret/edge-haproxy-tls","Pod/haproxy-6c8d9f7b5-r2mtk"]' \
	"incident objects: pods and the missing Secret"
run_rt query --db "$T/all.db" -o json "SELECT revision, updated_at, status FROM revisions ORDER BY revision"
is "$(jq -c 'map([.revision, .updated_at])' "$OUT")" \
	'[[1,"2024-06-10T09:00:00.500000Z"],[2,"2024-06-11T08:00:00.250000Z"],[3,"2024-06-12T14:30:05.123456Z"]]' \
	"revisions under --release lb/edge, +02:00 read as UTC instants"
run_rt query --db "$T/all.db" -o json "SELECT entry, revision, ts FROM timeline WHERE incident_id = 1"
is "$(jq -r '.[0] | [.entry, .revision] | join(" ")' "$OUT")" "revision 3" "timeline opens with revision 3"
is "$(jq -r 'map(.ts) | . == sort' "$OUT")" true "timeline in time order"
is "$(jq -r '[.[] | select(.entry == "event")] | length' "$OUT")" 7 "timeline holds the events"
run_rt query --db "$T/all.db" -o json "SELECT namespace, workload, release_namespace, release FROM workload_releases"
is "$(jq -c 'map([.namespace, .workload, .release])' "$OUT")" '[["lb","haproxy","edge"]]' \
	"the labels taught haproxy -> edge"
snapshot "$T/all.db" ref

# `helm history edge` run without -n: a bare --release names the release in
# whatever namespace its events show.
run_rt ingest --db "$T/bare.db" --release edge "$V/history.json" "$V/exporter.ndjson" $LOGS
is "$RC" 0 "ingest with a bare --release exits 0"
run_rt query --db "$T/bare.db" -o json "SELECT namespace, release, revision, diagnosis FROM incidents"
is "$(jq -c 'map([.namespace, .release, .revision, .diagnosis])' "$OUT")" \
	'[["lb","edge",3,"stale_config_mount"]]' "a bare --release: the same incident, revision 3"
run_rt query --db "$T/bare.db" -o json "SELECT DISTINCT namespace FROM revisions"
is "$(jq -c 'map(.namespace)' "$OUT")" '[""]' "its history kept without a namespace"

# Logs first, then events, then history: three runs.
for f in $LOGS "$V/exporter.ndjson" "$V/history.json"; do
	run_rt ingest --db "$T/logs-first.db" --release lb/edge "$f"
done
snapshot "$T/logs-first.db" logs-first
ok cmp "$T/ref.inc" "$T/logs-first.inc"
ok cmp "$T/ref.evt" "$T/logs-first.evt"

# History first, then logs, then the labelled events.
run_rt ingest --db "$T/hist-first.db" --release lb/edge "$V/history.json"
run_rt ingest --db "$T/hist-first.db" $LOGS
run_rt query --db "$T/hist-first.db" -o json "SELECT release, attribution FROM incidents"
is "$(jq -c '.' "$OUT")" '[{"release":"haproxy","attribution":"workload"}]' \
	"before any label: the logs alone are inferred to workload haproxy"
run_rt ingest --db "$T/hist-first.db" "$V/exporter.ndjson"
snapshot "$T/hist-first.db" hist-first
ok cmp "$T/ref.inc" "$T/hist-first.inc"
ok cmp "$T/ref.evt" "$T/hist-first.evt"
run_rt query --db "$T/hist-first.db" -o json "SELECT count(*) AS n FROM incidents WHERE release = 'haproxy'"
is "$(jq -r '.[0].n' "$OUT")" 0 "the inferred incident is gone once the labels are known"
done_testing
