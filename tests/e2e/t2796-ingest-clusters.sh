#!/bin/sh
# ingest --cluster: the cluster is part of every release key. The same
# field reports from two clusters make two sets of incidents with the same
# diagnoses; a release's Helm history in one cluster says nothing of the
# release of that name in another; bad names are refused.
. "$(dirname "$0")/lib.sh"
S=$DATA/scenarios
DB=$T/c.db
run_rt ingest --db "$DB" --cluster prod-eu "$S"/*/*
is "$RC" 0 "ingest --cluster prod-eu"
run_rt ingest --db "$DB" --cluster prod-us "$S"/*/*
is "$RC" 0 "the same input with --cluster prod-us"
like "$(cat "$ERR")" 'events 30 new, 0 updated; revisions 7; incidents 3 opened' \
	"the second cluster's events are new events (uids of another cluster)"
run_rt ingest --db "$DB" --cluster prod-us "$S"/*/*
like "$(cat "$ERR")" 'events 0 new' "again into prod-us: nothing new"
run_rt ingest --db "$T/one.db" "$S"/*/*
is "$RC" 0 "and without --cluster into another database"

q() {   # q DB SQL: rows as JSON
	run_rt query --db "$1" -o json "$2"
	cat "$OUT"
}
SET="SELECT namespace, release, revision, status, event_count, occurrences,
 tags, diagnosis, evidence, remedy, pods FROM incidents WHERE cluster = ?
 ORDER BY namespace, release"
EU=$(q "$DB" "$(echo "$SET" | sed "s/?/'prod-eu'/")")
US=$(q "$DB" "$(echo "$SET" | sed "s/?/'prod-us'/")")
ONE=$(q "$T/one.db" "$(echo "$SET" | sed "s/?/''/")")
is "$(printf '%s' "$EU" | jq length)" 3 "three incidents in prod-eu"
is "$EU" "$US" "prod-us has the same incidents"
is "$EU" "$ONE" "as one cluster alone has"
is "$(q "$DB" "SELECT count(*) AS n FROM incidents" | jq '.[0].n')" 6 "six in all"
is "$(q "$DB" "SELECT group_concat(cluster || ':' || n) AS c FROM (SELECT cluster,
 count(*) AS n FROM revisions GROUP BY cluster ORDER BY cluster)" | jq -r '.[0].c')" \
	"prod-eu:6,prod-us:6" "each cluster its own revisions"
is "$(q "$DB" "SELECT count(*) AS n FROM timeline t JOIN incidents i ON i.id = t.incident_id
 WHERE t.entry = 'revision'" | jq '.[0].n')" \
	"$(q "$T/one.db" "SELECT 2 * count(*) AS n FROM timeline WHERE entry = 'revision'" | jq '.[0].n')" \
	"each incident's timeline shows its own cluster's revisions only"

# what the read commands show: the cluster only where one is named
run_rt incidents --db "$T/one.db"
like "$(head -1 "$OUT")" '^ID +RELEASE +REV ' "one cluster: no CLUSTER column"
run_rt incidents --db "$T/one.db" -o json
is "$(jq -c 'map(has("cluster")) | unique' "$OUT")" "[false]" "nor a cluster key"
run_rt incidents --db "$DB"
like "$(head -1 "$OUT")" '^ID +CLUSTER +RELEASE +REV ' "two: a CLUSTER column"
run_rt incidents --db "$DB" --cluster prod-eu -o wide
like "$(head -1 "$OUT")" '^ID +CLUSTER +NAMESPACE +RELEASE ' "wide too"
is "$(awk 'NR > 1 { print $2 }' "$OUT" | sort | uniq -c | awk '{ print $1, $2 }')" "3 prod-eu" \
	"incidents --cluster prod-eu: prod-eu's three only"
run_rt incidents --db "$DB" --cluster prod-us -o csv
like "$(head -1 "$OUT")" ',cluster$' "CSV has the cluster column"
is "$(tail -n +2 "$OUT" | grep -c ',prod-us$')" 3 "three prod-us rows"
run_rt incidents --db "$DB" --cluster '' -o json
is "$(jq length "$OUT")" 0 "--cluster '': the default cluster has none here"
run_rt incidents --db "$DB" --cluster 'a/b'
is "$RC" 2 "incidents --cluster a/b is refused"
like "$(cat "$ERR")" "^revtrail incidents: --cluster: '/'" "with the reason"
EU=$(q "$DB" "SELECT id FROM incidents WHERE cluster = 'prod-eu' AND release = 'payments-api'" | jq '.[0].id')
run_rt show --db "$DB" "$EU"
is "$(grep -A1 '^Cluster:' "$OUT" | cut -c1-19 | tr '\n' '|')" "Cluster:    prod-eu|Status:     open, s|" \
	"show names the cluster, above the status"
run_rt show --db "$DB" -o json "$EU"
is "$(jq -r '.incident.cluster' "$OUT")" prod-eu "and so does show -o json"
run_rt show --db "$DB" --cluster prod-us "$EU"
is "$RC" 1 "show --cluster of another cluster: not found"
like "$(cat "$ERR")" "^revtrail show: no incident $EU in cluster 'prod-us'" "it says so"
run_rt show --db "$DB" --cluster prod-us -o html "$EU"
is "$RC:$(wc -c <"$OUT")" "1:0" "nor as HTML, and writes nothing"
run_rt show --db "$DB" --cluster prod-eu -o html "$EU"
like "$(grep -o '<h2>Incident [0-9]*: [^,]*' "$OUT")" "Incident $EU: prod-eu:prod/payments-api" "HTML names it"
run_rt show --db "$T/one.db" 1
unlike "$(cat "$OUT")" '^Cluster:' "one cluster: show has no Cluster line"
run_rt show --db "$T/one.db" -o json 1
is "$(jq -c '.incident | has("cluster")' "$OUT")" false "nor a cluster key"
run_rt report --db "$DB" --all --cluster prod-us
is "$(grep -c '<section class="incident"' "$OUT")" 3 "report --cluster prod-us: three incidents"
is "$(grep -c '<h2>Incident [0-9]*: prod-us:' "$OUT")" 3 "all of prod-us"

# several databases read as one keep the clusters apart: c.db's two and
# one.db's default cluster are three sets, and a copy of c.db overlaps
cp "$DB" "$T/copy.db"
run_rt incidents --db "$DB" --db "$T/one.db" --db "$T/copy.db" -o json
is "$RC" 0 "incidents over three databases"
is "$(jq -r 'group_by(.cluster) | map("\(.[0].cluster):\(length)") | join(",")' "$OUT")" \
	":3,prod-eu:3,prod-us:3" "merged: three incidents per cluster, the copy counted once"
run_rt incidents --db "$DB" --db "$T/one.db" --cluster prod-us -o json
is "$(jq -r 'map(.cluster) | unique | join(",")' "$OUT")" prod-us "merged --cluster prod-us"
run_rt query --db "$DB" --db "$T/copy.db" -o json "SELECT cluster, count(*) AS n FROM events GROUP BY 1 ORDER BY 1"
is "$(jq -c 'map([.cluster, .n])' "$OUT")" '[["prod-eu",30],["prod-us",30]]' \
	"merged events: one per cluster and key"
run_rt query --db "$DB" --db "$T/copy.db" -o json "SELECT count(*) AS n FROM timeline t JOIN incidents i
 ON i.id = t.incident_id WHERE t.entry = 'revision'"
is "$(jq '.[0].n' "$OUT")" "$(q "$DB" "SELECT count(*) AS n FROM timeline WHERE entry = 'revision'" | jq '.[0].n')" \
	"merged timeline: each incident its own cluster's revisions"

# Helm history in one cluster only: the other's release has none
H=$S/hook-configmap-race
run_rt ingest --db "$T/h.db" --cluster a "$H/events.ndjson" "$H/fluentbit.ndjson"
run_rt ingest --db "$T/h.db" --cluster b "$H"/*
is "$(q "$T/h.db" "SELECT group_concat(cluster || ':' || revision || ':' || diagnosis) AS d
 FROM (SELECT * FROM incidents ORDER BY cluster)" | jq -r '.[0].d')" \
	"a:0:db_credentials_rejected,b:48:hook_configmap_race" \
	"b's history leaves a's prod/payments-api without revisions"
is "$(q "$T/h.db" "SELECT count(*) AS n FROM timeline t JOIN incidents i ON i.id = t.incident_id
 WHERE i.cluster = 'a' AND t.entry = 'revision'" | jq '.[0].n')" 0 "nor any in its timeline"

# A workload's release learned from labels in one cluster (vault-fluentbit-
# labels: Fluent Bit records name release secrets for StatefulSet vault)
# does not name the workload of that name in another
V=$DATA/variants/vault-fluentbit-labels
run_rt ingest --db "$T/w.db" --cluster a "$V"/*
run_rt ingest --db "$T/w.db" --cluster b "$V/release-secrets.json" "$V/events-watch.json"
is "$(q "$T/w.db" "SELECT group_concat(cluster || ':' || release || ':' || attribution) AS d
 FROM (SELECT * FROM incidents ORDER BY cluster)" | jq -r '.[0].d')" \
	"a:secrets:label,b:vault:workload" "a's labels leave b's StatefulSet to its own name"
is "$(q "$T/w.db" "SELECT group_concat(DISTINCT cluster) AS c FROM workload_releases" | jq -r '.[0].c')" \
	"a" "the mapping is a's"

# bad names: a clear error naming the option, exit 2, nothing written
for bad in "a/b" "eu@1" "" "with space" "$(printf 'tab\tx')" \
	"$(printf '%064d' 0)"; do
	run_rt ingest --db "$T/bad.db" --cluster "$bad" "$S"/*/*
	is "$RC" 2 "--cluster '$bad' is refused"
	like "$(cat "$ERR")" '^revtrail ingest: --cluster: ' "with the option named"
done
ok test ! -e "$T/bad.db"
run_rt ingest --db "$T/ok.db" --cluster "$(printf '%063d' 0)" "$H/events.ndjson"
is "$RC" 0 "63 characters are accepted"
done_testing
