#!/bin/sh
# The schema contract (docs/schema.md, issue 3): every table,
# view and column named there exists with that exact name, and the values
# have the promised types: integers, ISO-8601 UTC times with microseconds
# and Z, valid JSON text in the JSON columns, NULL for unknown.
. "$(dirname "$0")/lib.sh"
DB=$T/c.db
run_rt ingest --db "$DB" "$DATA"/scenarios/*/*
is "$RC" 0 "ingest the field reports"
run_rt ingest --db "$DB" "$DATA"/variants/checkout-hook-race/events/*
is "$RC" 0 "ingest a variant's events"
run_rt ingest --db "$DB" --release shop/checkout "$DATA"/variants/checkout-hook-race/history/*
is "$RC" 0 "and its history"

cols() {   # cols TABLE: its column names, comma separated, in order
	run_rt query --db "$DB" -o json "SELECT name FROM pragma_table_info('$1')"
	jq -r 'map(.name) | join(",")' "$OUT"
}
has() {    # has TABLE COLUMN...
	t=$1; shift
	got=",$(cols "$t"),"
	missing=
	for c in "$@"; do
		case "$got" in *",$c,"*) ;; *) missing="$missing $c" ;; esac
	done
	is "$missing" "" "$t has $*"
}
has incidents id namespace release revision status severity opened_at last_seen_at \
	closed_at event_count tags diagnosis title
has incidents occurrences revision_status later_revisions attribution evidence remedy pods
has events id incident_id ts namespace object_kind object_name pod container reason \
	message tags severity release revision format origin count
has events first_seen type fields release_namespace attribution
has incident_objects incident_id object_kind object_name first_seen last_seen events
has revisions namespace release revision status chart app_version updated_at description
has revisions evidence hooks
has timeline incident_id ts entry event_id revision object_kind object_name reason \
	message severity tags count last_seen ts_ns
has sources path partition offset updated_at
has release_keys namespace release
# since version 5: the cluster of every release key, '' by default
has incidents cluster
has events cluster
has revisions cluster
has release_keys cluster
has workload_releases namespace workload release_namespace release cluster via
has meta key value
run_rt query --db "$DB" -o json "SELECT type FROM sqlite_master WHERE name = 'timeline'"
is "$(jq -r '.[0].type' "$OUT")" view "timeline is a view"

# one query per check: the count of rows that break it must be 0
ISO="'____-__-__T__:__:__.______Z'"
zero() {   # zero NAME SQL
	run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM ($2)"
	is "$(jq -r '.[0].n' "$OUT")" 0 "$1"
}
run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM incidents"
is "$(jq -r '.[0].n' "$OUT")" 4 "four incidents to check"
zero "incidents: integer id, revision, event_count" \
	"SELECT 1 FROM incidents WHERE typeof(id) <> 'integer' OR typeof(revision) <> 'integer'
	 OR typeof(event_count) <> 'integer' OR typeof(occurrences) <> 'integer' OR event_count < 1"
zero "incidents: status open/closed, a severity name" \
	"SELECT 1 FROM incidents WHERE status NOT IN ('open', 'closed')
	 OR severity NOT IN ('critical', 'error', 'warning', 'info')"
zero "incidents: ISO-8601 UTC times with microseconds" \
	"SELECT 1 FROM incidents WHERE opened_at NOT LIKE $ISO OR last_seen_at NOT LIKE $ISO
	 OR (closed_at IS NOT NULL AND closed_at NOT LIKE $ISO) OR last_seen_at < opened_at"
zero "cluster: text, the default '' without --cluster" \
	"SELECT 1 FROM (SELECT cluster AS c FROM incidents UNION ALL SELECT cluster FROM events
	 UNION ALL SELECT cluster FROM revisions) WHERE c IS NOT '' OR typeof(c) <> 'text'"
zero "incidents: closed_at set exactly when closed" \
	"SELECT 1 FROM incidents WHERE (status = 'closed') <> (closed_at IS NOT NULL)"
zero "incidents: JSON columns are valid JSON arrays" \
	"SELECT 1 FROM incidents WHERE NOT json_valid(tags) OR json_type(tags) <> 'array'
	 OR NOT json_valid(pods) OR json_type(pods) <> 'array' OR NOT json_valid(evidence)
	 OR NOT json_valid(later_revisions)"
zero "incidents: tags sorted, non-empty" \
	"SELECT 1 FROM incidents WHERE json_array_length(tags) = 0 OR tags <>
	 (SELECT json_group_array(value) FROM (SELECT value FROM json_each(incidents.tags) ORDER BY value))"
zero "incidents: a diagnosis is a diagnosis id" \
	"SELECT 1 FROM incidents WHERE diagnosis IS NOT NULL AND diagnosis NOT GLOB '[a-z]*'
	 OR title IS NULL OR title = ''"
run_rt query --db "$DB" -o json "SELECT t.value AS tag FROM incidents, json_each(incidents.tags) t
 WHERE incidents.release = 'checkout' ORDER BY 1"
is "$(jq -r 'map(.tag) | join(",")' "$OUT")" "config_key_missing,configmap_not_found,crashloop,db_auth_failed" \
	"json_each(incidents.tags) works"
run_rt query --db "$DB" -o json "SELECT strftime('%H', opened_at) AS h FROM incidents WHERE release = 'checkout'"
is "$(jq -r '.[0].h' "$OUT")" 13 "SQLite date functions read the times"
run_rt query --db "$DB" -o json "SELECT diagnosis FROM incidents ORDER BY opened_ns"
is "$(jq -c 'map(.diagnosis)' "$OUT")" \
	'["superseded_release_install","hook_configmap_race","stale_config_mount","hook_configmap_race"]' \
	"diagnoses"

zero "events: types" \
	"SELECT 1 FROM events WHERE typeof(id) <> 'integer' OR typeof(revision) <> 'integer'
	 OR typeof(count) <> 'integer' OR count < 1 OR (incident_id IS NOT NULL AND typeof(incident_id) <> 'integer')"
zero "events: times" \
	"SELECT 1 FROM events WHERE ts NOT LIKE $ISO OR first_seen NOT LIKE $ISO OR ts < first_seen"
zero "events: tags and fields are JSON" \
	"SELECT 1 FROM events WHERE NOT json_valid(tags) OR json_type(tags) <> 'array'
	 OR NOT json_valid(fields) OR json_type(fields) <> 'object'"
zero "events: format names, origin source:offset" \
	"SELECT 1 FROM events WHERE format NOT IN ('k8s-event', 'exporter', 'cri', 'docker',
	 'fluentbit', 'vector', 'json', 'text', 'helm-text') OR origin NOT LIKE '%:%'"
zero "events: an incident's events are of its release" \
	"SELECT 1 FROM events e JOIN incidents i ON i.id = e.incident_id
	 WHERE e.release <> i.release OR e.release_namespace <> i.namespace"
zero "attribution: one of the documented names, via its number" \
	"SELECT 1 FROM (SELECT attribution AS a, via AS v FROM events WHERE release IS NOT NULL
	 UNION ALL SELECT attribution, via FROM incidents) WHERE a IS NOT CASE v
	 WHEN 1 THEN 'label' WHEN 2 THEN 'job' WHEN 3 THEN 'option' WHEN 4 THEN 'manifest'
	 WHEN 5 THEN 'owner' WHEN 6 THEN 'prefix' WHEN 7 THEN 'workload' END"
zero "events: severity names" \
	"SELECT 1 FROM events WHERE severity NOT IN ('critical', 'error', 'warning', 'info')"
zero "incident_objects: types and times" \
	"SELECT 1 FROM incident_objects WHERE typeof(incident_id) <> 'integer'
	 OR typeof(events) <> 'integer' OR events < 1 OR first_seen NOT LIKE $ISO
	 OR last_seen NOT LIKE $ISO OR last_seen < first_seen"
zero "incident_objects: every pod of incidents.pods" \
	"SELECT 1 FROM incidents i, json_each(i.pods) p WHERE NOT EXISTS
	 (SELECT 1 FROM incident_objects o WHERE o.incident_id = i.id AND o.object_kind = 'Pod'
	  AND o.object_name = p.value)"
zero "incidents: event_count matches its events" \
	"SELECT 1 FROM incidents i WHERE event_count <> (SELECT count(*) FROM events e WHERE e.incident_id = i.id)"
zero "revisions: types and times" \
	"SELECT 1 FROM revisions WHERE typeof(revision) <> 'integer' OR revision < 1
	 OR (updated_at IS NOT NULL AND updated_at NOT LIKE $ISO) OR NOT json_valid(evidence)
	 OR NOT json_valid(hooks)"
zero "revisions: Helm status names" \
	"SELECT 1 FROM revisions WHERE status NOT IN ('unknown', 'deployed', 'uninstalled',
	 'superseded', 'failed', 'uninstalling', 'pending-install', 'pending-upgrade', 'pending-rollback')"
zero "timeline: entries, ordered by time within an incident" \
	"SELECT 1 FROM timeline WHERE entry NOT IN ('event', 'revision') OR ts NOT LIKE $ISO"
run_rt query --db "$DB" -o json "SELECT incident_id, ts FROM timeline"
is "$(jq -c 'group_by(.incident_id) | map(map(.ts) | . == sort) | unique' "$OUT")" '[true]' \
	"the timeline view comes in time order per incident"
run_rt query --db "$DB" -o json "SELECT * FROM incidents WHERE status = 'open'"
is "$(jq -r '.[0] | [(.revision | type), (.event_count | type), (.tags | type), (.closed_at | type)] | join(",")' "$OUT")" \
	"number,number,string,null" "query -o json: integers as numbers, JSON text as strings, NULL as null"
# A new database gets 16 KiB pages (store/store.c says why); the pages of
# an existing one are its own (t2795).
run_rt query --db "$DB" -o csv "PRAGMA page_size"
is "$(tail -n 1 "$OUT")" 16384 "a new database has 16 KiB pages"
done_testing
