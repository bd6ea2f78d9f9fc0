#!/bin/sh
# Evidence over name order (issue 32): k3s helm-controller, one release
# name in two namespaces (`helm list -A`: app/redis 3 deployed, cache/redis
# 5 failed). The failing helm-install-redis job's own trace says
# `helm_v3 upgrade --namespace cache ... redis`: the incident is
# cache/redis 5, whatever the order of the list, the events and the job's
# logs, in one run or a run per file. Without the logs nothing names the
# namespace: the smallest name is taken, and show says it was a guess and
# between which namespaces.
. "$(dirname "$0")/lib.sh"
D=$DATA/k3s-two-ns
LOGS=$(find "$D/var" -type f | sort)
LIST=$D/helm-list.json
EV=$D/events-watch.ndjson

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

in_every_order order check "$LIST" "$EV" "$LOGS"

# No record names the namespace: a guess, said as one.
run_rt ingest --db "$T/guess.db" "$EV" "$LIST"
is "$RC" 0 "without the logs: ingest"
run_rt query --db "$T/guess.db" -o json "SELECT id, namespace FROM incidents"
is "$(jq -r '.[0].namespace' "$OUT")" app "without the logs: the smallest namespace by name"
id=$(jq -r '.[0].id' "$OUT")
run_rt show --db "$T/guess.db" "$id"
like "$(cat "$OUT")" "^Attribution: a guess" "show says the attribution was a guess"
like "$(tr '\n' ' ' < "$OUT" | tr -s ' ')" "known in app, cache; the first by name" \
	"and between which namespaces"
run_rt show --db "$T/guess.db" -o json "$id"
is "$(jq -c '.attribution_guess' "$OUT")" '["app","cache"]' "show -o json: attribution_guess"
done_testing
