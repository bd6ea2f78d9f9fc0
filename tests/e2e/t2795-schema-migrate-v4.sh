#!/bin/sh
# A database of schema version 4 (tests/data/schema/v4.sql, written by the
# revtrail before clusters) migrates to version 5, then 6 (attributions
# renumbered), then 7 (incident objects in first-seen order): its
# incidents, events, objects and revisions are unchanged and belong to the default cluster '', its
# event identities still dedupe, and a new ingest continues its incidents
# exactly as if everything had been ingested into a new database.
. "$(dirname "$0")/lib.sh"
S=$DATA/scenarios
DB=$T/v4.db
sqlite3 "$DB" <"$DATA/schema/v4.sql"
sqlite3 "$T/v4copy.db" <"$DATA/schema/v4.sql"
is "$(sqlite3 "$DB" 'PRAGMA user_version')" 4 "the fixture is version 4"

INC="SELECT id, namespace, release, revision, status, severity, opened_at,
 last_seen_at, closed_at, event_count, occurrences, tags, diagnosis, title,
 revision_status, later_revisions, attribution, evidence, remedy, pods,
 pod_count FROM incidents ORDER BY id"
EV="SELECT id, incident_id, ukey, first_ns, ts_ns, count, tags, release,
 release_namespace, revision, workload FROM events ORDER BY id"
TL="SELECT * FROM timeline"
OBJ="SELECT * FROM incident_objects ORDER BY incident_id, object_kind,
 object_name"
sqlite3 -json "$DB" "$INC" >"$T/inc.before"
sqlite3 -json "$DB" "$OBJ" >"$T/obj.before"
sqlite3 -json "$DB" "$EV" >"$T/ev.before"
sqlite3 -json "$DB" "$TL" >"$T/tl.before"

# the read commands read a version 4 file as it is
run_rt incidents --db "$DB" -o json
is "$RC" 0 "incidents reads version 4"
is "$(jq -c 'map(.id)' "$OUT")" "[2,1]" "both incidents"
is "$(jq -c 'map(has("cluster")) | unique' "$OUT")" "[false]" "no cluster key"
run_rt incidents --db "$DB" --cluster prod-eu -o json
is "$(jq length "$OUT")" 0 "none of them in a named cluster"
run_rt show --db "$DB" 2
is "$RC" 0 "show reads version 4"
like "$(head -1 "$OUT")" '^Incident 2: prod/payments-api, revision 48 ' "its head line"
run_rt show --db "$DB" --cluster '' -o json 2
is "$(jq -r '.incident.release' "$OUT")" payments-api "show --cluster '' finds it"
is "$(sqlite3 "$DB" 'PRAGMA user_version')" 4 "and they leave it at version 4"

run_rt ingest --db "$DB" </dev/null
is "$RC" 0 "ingest of nothing migrates"
is "$(sqlite3 "$DB" 'PRAGMA user_version')" 16 "to the current version, 16"
sqlite3 -json "$DB" "$INC" >"$T/inc.after"
sqlite3 -json "$DB" "$EV" >"$T/ev.after"
sqlite3 -json "$DB" "$TL" >"$T/tl.after"
sqlite3 -json "$DB" "$OBJ" >"$T/obj.after"
ok cmp "$T/inc.before" "$T/inc.after"
ok cmp "$T/obj.before" "$T/obj.after"
ok test "$(jq length "$T/obj.after")" -gt 2
ok cmp "$T/ev.before" "$T/ev.after"
ok cmp "$T/tl.before" "$T/tl.after"
is "$(jq length "$T/inc.after")" 2 "two incidents"
is "$(sqlite3 "$DB" "SELECT
 (SELECT count(*) FROM incidents WHERE cluster <> '') +
 (SELECT count(*) FROM events WHERE cluster <> '') +
 (SELECT count(*) FROM revisions WHERE cluster <> '') +
 (SELECT count(*) FROM release_keys WHERE cluster <> '') +
 (SELECT count(*) FROM workload_releases WHERE cluster <> '')")" 0 \
	"every row in the default cluster"
is "$(sqlite3 "$DB" "SELECT count(*) FROM revisions")" 5 "revisions kept"
# version 6 numbers attributions manifest 4, owner 5, prefix 6, workload 7
is "$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT via, attribution FROM events
 UNION ALL SELECT via, attribution FROM incidents) WHERE attribution IS NOT NULL
 AND via <> CASE attribution WHEN 'label' THEN 1 WHEN 'job' THEN 2
 WHEN 'option' THEN 3 WHEN 'prefix' THEN 6 WHEN 'workload' THEN 7 END")" 0 \
	"every via renumbered as its attribution says"
is "$(sqlite3 "$DB" "SELECT count(*) FROM events WHERE via >= 6")" \
	"$(sqlite3 "$DB" "SELECT count(*) FROM events WHERE attribution IN ('prefix', 'workload')")" \
	"inferred events stay inferred"
is "$(sqlite3 "$DB" "SELECT group_concat(name) FROM (SELECT name FROM
 pragma_index_info('events_ukey'))")" "ukey,cluster" "the event identity index holds the cluster"
is "$(sqlite3 "$DB" "SELECT group_concat(name) FROM (SELECT name FROM
 pragma_index_info('incident_objects_name'))")" \
	"incident_id,object_kind,object_name" "objects are found by name"
is "$(sqlite3 "$DB" "SELECT group_concat(name) FROM pragma_index_list('incident_objects')
 WHERE name LIKE '%first%'")" "" "the first-seen index is the table now"
is "$(sqlite3 "$DB" "PRAGMA integrity_check")" ok "integrity_check"
# version 14: classes unknown for every stored release, none made up
is "$(sqlite3 "$DB" "SELECT count(*) FROM replicasets WHERE name = ''")" \
	"$(sqlite3 "$DB" "SELECT count(DISTINCT cluster || '/' || namespace || '/' || release) FROM release_keys")" \
	"each stored release's classes marked unknown"
is "$(sqlite3 "$DB" "SELECT count(*) FROM replicasets WHERE name <> ''")" 0 \
	"and no ReplicaSet classed by the migration"

# the same input again: the identities stored by version 4 still match
run_rt ingest --db "$DB" "$S/hook-configmap-race/events.ndjson"
like "$(cat "$ERR")" 'events 0 new' "re-read events are the stored ones"
# (the words of a diagnosis are those of the packs that last diagnosed
# the incident: a re-diagnosis may word its evidence and remedy anew)
WORDS="SELECT id, revision, status, event_count, occurrences, tags,
 diagnosis, title, pods, pod_count FROM incidents ORDER BY id"
sqlite3 -json "$DB" "$WORDS" >"$T/inc.again"
sqlite3 -json "$T/v4copy.db" "$WORDS" >"$T/inc.before.words"
ok cmp "$T/inc.before.words" "$T/inc.again"

# the rest continues the incidents as one ingest of all would have made them
run_rt ingest --db "$DB" "$S/hook-configmap-race/fluentbit.ndjson" \
	"$S/hook-configmap-race/release-secret-v48.json" "$S"/superseded-release-install/*
is "$RC" 0 "a new ingest after the migration"
run_rt ingest --db "$T/fresh.db" "$S"/*/*
is "$RC" 0 "everything into a new database"
SAME="SELECT namespace, release, revision, status, opened_at, last_seen_at,
 event_count, occurrences, tags, diagnosis, pods, cluster
 FROM incidents ORDER BY namespace, release, opened_ns"
sqlite3 -json "$DB" "$SAME" >"$T/cont"
sqlite3 -json "$T/fresh.db" "$SAME" >"$T/fresh"
ok cmp "$T/cont" "$T/fresh"
is "$(jq length "$T/cont")" 3 "three incidents"
is "$(jq -r '[.[] | .diagnosis] | join(",")' "$T/cont")" \
	"stale_config_mount,superseded_release_install,hook_configmap_race" "their diagnoses"
is "$(sqlite3 "$DB" "SELECT id FROM incidents WHERE release = 'payments-api'")" 2 \
	"the migrated incident went on (same id)"
is "$(sqlite3 "$DB" "SELECT group_concat(name || ':' || class) FROM replicasets
 WHERE release = 'payments-api'")" "payments-api-7d9c8f4b6:0" \
	"the first batch that met its pods classed the release anew"
is "$(sqlite3 "$DB" 'PRAGMA page_size')" 4096 "a migrated database keeps its 4 KiB pages"
is "$(sqlite3 "$T/fresh.db" 'PRAGMA page_size')" 16384 "where a new one has 16 KiB"
done_testing
