#!/bin/sh
# The three field reports (tests/data/scenarios, composed from the seeds in
# several input formats) each become one incident with the right release,
# revision, diagnosis and affected pods; together they stay three.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios

# scenario release revision diagnosis pods(json)
check() {
	db=$T/$1.db
	run_rt ingest --db "$db" "$SC/$1"/*
	is "$RC" 0 "$1: ingest exits 0"
	like "$(cat "$ERR")" 'incidents 1 opened' "$1: summary on stderr"
	run_rt query --db "$db" -o json "SELECT namespace || '/' || release AS rel, revision, diagnosis, pods FROM incidents"
	is "$RC" 0 "$1: query"
	is "$(jq -r length "$OUT")" 1 "$1: one incident"
	is "$(jq -r '.[0].rel' "$OUT")" "$2" "$1: release"
	is "$(jq -r '.[0].revision' "$OUT")" "$3" "$1: revision"
	is "$(jq -r '.[0].diagnosis' "$OUT")" "$4" "$1: diagnosis"
	is "$(jq -c '.[0].pods | fromjson | sort' "$OUT")" "$5" "$1: affected pods"
}

check stale-config-mount ingress/haproxy-ingress 4 stale_config_mount \
	'["haproxy-ingress-5f4d7c9b6-p7k4n","haproxy-ingress-5f4d7c9b6-xq2lz"]'
check hook-configmap-race prod/payments-api 48 hook_configmap_race \
	'["payments-api-7d9c8f4b6-4kx2m","payments-api-7d9c8f4b6-9jvpd","payments-api-7d9c8f4b6-nq7wr"]'
check superseded-release-install kube-system/rke2-ingress-nginx 2 superseded_release_install \
	'["helm-install-rke2-ingress-nginx-k8v2x","helm-install-rke2-ingress-nginx-tq4zm"]'

# The stale mount's remedy restarts the Deployment, not the ConfigMap.
run_rt query --db "$T/stale-config-mount.db" -o json "SELECT remedy FROM incidents"
like "$(jq -r '.[0].remedy' "$OUT")" 'rollout restart deployment/haproxy-ingress -n ingress' "remedy names the workload"

# The hook race cites the release payload and the rollback that followed.
run_rt query --db "$T/hook-configmap-race.db" -o json "SELECT evidence, later_revisions, revision_status, remedy FROM incidents"
like "$(jq -r '.[0].evidence' "$OUT")" 'payments-api-config is a Helm hook with before-hook-creation' "hook ConfigMap named as evidence"
is "$(jq -r '.[0].later_revisions' "$OUT")" "[49]" "rollback 49 on the incident"
is "$(jq -r '.[0].revision_status' "$OUT")" failed "opening revision failed"
like "$(jq -r '.[0].remedy' "$OUT")" 'kubectl delete pod -n prod payments-api-7d9c8f4b6-4kx2m' "remedy lists the pods to delete"
run_rt query --db "$T/hook-configmap-race.db" -o json "SELECT count(*) AS n FROM events WHERE pod IN ('payments-api-7d9c8f4b6-x8r2t','payments-api-7d9c8f4b6-m5wq7')"
is "$(jq -r '.[0].n' "$OUT")" 0 "healthy pods' lines are not stored"

# All of them in one database, the README's main job.
run_rt ingest --db "$T/all.db" "$SC"/*/*
is "$RC" 0 "all scenarios in one run"
run_rt incidents --db "$T/all.db"
is "$RC" 0 "incidents table"
like "$(head -n 1 "$OUT")" '^ID +RELEASE +REV +STATUS +SEVERITY +SEEN +DIAGNOSIS$' "kubectl-like header"
is "$(grep -c -E 'hook_configmap_race|stale_config_mount|superseded_release_install' "$OUT")" 3 "three diagnosed incidents"
like "$(sed -n 2p "$OUT")" 'payments-api +48 ' "newest first"
run_rt incidents --db "$T/all.db" -o json --namespace kube-system
is "$(jq -r 'length' "$OUT")" 1 "--namespace filters"
is "$(jq -r '.[0].tags | index("helm_name_in_use") != null' "$OUT")" true "tags are a JSON array in -o json"
run_rt incidents --db "$T/all.db" -o csv --release haproxy-ingress
like "$(head -n 1 "$OUT")" '^id,namespace,release,revision' "csv header"
is "$(wc -l < "$OUT" | tr -d ' ')" 2 "--release filters"
run_rt incidents --db "$T/all.db" --open -o json
is "$(jq -r 'map(.status) | unique | join(",")' "$OUT")" open "--open lists open incidents only"
run_rt incidents --db "$T/all.db" --since 2024-10-01T00:00:00Z -o json
is "$(jq -r 'map(.release) | join(",")' "$OUT")" payments-api "--since"

id=$(jq -r '.[0].id' "$OUT")
run_rt show --db "$T/all.db" "$id"
is "$RC" 0 "show"
like "$(cat "$OUT")" 'Incident [0-9]+: prod/payments-api, revision 48 \(failed' "show: head line"
like "$(cat "$OUT")" 'Diagnosis: +hook_configmap_race' "show: diagnosis"
like "$(cat "$OUT")" 'Remedy:' "show: remedy"
like "$(cat "$OUT")" 'payments-api-7d9c8f4b6-nq7wr' "show: affected pods"
like "$(cat "$OUT")" '14:43:52 +\+2m40s +revision 49 deployed: Rollback to 47' "show: timeline, time of day and offset from the first event"
run_rt show --db "$T/all.db" -o json "$id"
is "$(jq -r '.incident.diagnosis' "$OUT")" hook_configmap_race "show -o json"
is "$(jq -r '[.timeline[] | select(.entry == "revision") | .revision] | join(",")' "$OUT")" "48,49" "timeline holds the revisions"
run_rt show --db "$T/all.db" 9999
is "$RC" 1 "show of a missing incident exits 1"
run_rt show --db "$T/all.db" abc
is "$RC" 2 "bad id is a usage error"
done_testing
