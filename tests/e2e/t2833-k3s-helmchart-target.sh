#!/bin/sh
# Evidence over name order (issue 32): k3s helm-controller, one release
# name in two namespaces (`helm list -A`: app/redis 3 deployed, cache/redis
# 5 failed) and the failing helm-install-redis job's events, with no log
# line naming its namespace. The HelmChart kube-system/redis says
# `targetNamespace: cache` (`kubectl get helmcharts.helm.cattle.io -A -o
# json`): the incident is cache/redis 5, whatever the order of the list,
# the events and the HelmCharts, in one run or a run per file, and from
# the one object (`kubectl get helmchart redis -o json`) as from the List.
. "$(dirname "$0")/lib.sh"
D=$DATA/k3s-two-ns
LIST=$D/helm-list.json
EV=$D/events-watch.ndjson
HC=$D/helmcharts.json

check() {   # check DB WHAT
	run_rt query --db "$1" -o json "SELECT id, namespace, release, revision FROM incidents"
	is "$(jq -r 'map("\(.namespace)/\(.release) \(.revision)") | join(";")' "$OUT")" \
		"cache/redis 5" "$2: one incident, cache/redis revision 5"
	id=$(jq -r '.[0].id' "$OUT")
	run_rt query --db "$1" -o csv "SELECT DISTINCT release_namespace FROM events"
	is "$(tail -n +2 "$OUT" | tr '\n' ' ')" "cache " "$2: every event of the job in cache"
	run_rt show --db "$1" "$id"
	unlike "$(cat "$OUT")" "guess" "$2: show makes no guess"
}

in_every_order order check "$LIST" "$EV" "$HC"

# One object, as `kubectl get helmchart -n kube-system redis -o json`
# prints it, and in a watch envelope; last, after the job's events.
jq '.items[0]' "$HC" > "$T/redis.json"
run_rt ingest --db "$T/one.db" "$EV" "$LIST" "$T/redis.json"
is "$RC" 0 "one object: ingest"
check "$T/one.db" "one object"
jq -c '{type: "ADDED", object: .items[0]}' "$HC" > "$T/watch.ndjson"
run_rt ingest --db "$T/watch.db" "$EV" "$LIST" "$T/watch.ndjson"
check "$T/watch.db" "a watch envelope"

# A HelmChart without targetNamespace installs into its own namespace:
# that is evidence too, not the name order.
jq '.items[0] | del(.spec.targetNamespace)' "$HC" > "$T/own.json"
run_rt ingest --db "$T/own.db" "$EV" "$LIST" "$T/own.json"
run_rt query --db "$T/own.db" -o json "SELECT namespace FROM incidents"
is "$(jq -r 'map(.namespace) | join(";")' "$OUT")" "kube-system" \
	"no targetNamespace: the HelmChart's own namespace"

# The HelmCharts are evidence, not events: nothing of theirs is stored.
run_rt ingest --db "$T/alone.db" "$HC"
is "$RC" 0 "HelmCharts alone: ingest"
run_rt query --db "$T/alone.db" -o csv "SELECT count(*) FROM events"
is "$(tail -n 1 "$OUT")" 0 "HelmCharts alone: no event"

done_testing
