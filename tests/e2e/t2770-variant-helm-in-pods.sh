#!/bin/sh
# Helm run from inside pods names the release its output is about: two
# Rancher helm-operation pods upgrading fleet and rancher-monitoring, a CI
# job running `helm upgrade --install storefront -n shop`, and helm-operator
# lines with release=/targetNamespace=. Each error lands on its real
# release and revision (from `helm list -o json`), none on a release named
# after the pod that ran helm.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/helm-in-pods
LOGS=$(find "$V/var" -type f | sort)

run_rt ingest --db "$T/a.db" "$V/helm-list.json" $LOGS
is "$RC" 0 "ingest"
run_rt query --db "$T/a.db" -o json "SELECT namespace, release, revision, revision_status, pods
 FROM incidents ORDER BY namespace, release"
is "$(jq -c 'map([.namespace, .release, .revision, .revision_status])' "$OUT")" \
	'[["cattle-monitoring-system","rancher-monitoring",7,"failed"],["demo","podinfo",3,"failed"],["fleet-system","fleet",4,"pending-upgrade"],["shop","storefront",12,"failed"]]' \
	"one incident per real release, at the revision in force"
is "$(jq -c 'map(.pods | fromjson)' "$OUT")" \
	'[["helm-operation-k9m4t"],["helm-operator-6c9f8d7b5-tq4wz"],["helm-operation-7xq2b"],["deploy-shop-28571430-p2x8z"]]' \
	"each from the pod that ran it"
run_rt query --db "$T/a.db" -o json "SELECT count(*) AS n FROM incidents
 WHERE release LIKE 'helm-operation%' OR release LIKE 'deploy-shop%' OR release LIKE 'helm-operator%'"
is "$(jq -c '.[0].n' "$OUT")" 0 "no release named after a pod"
run_rt query --db "$T/a.db" -o json "SELECT diagnosis FROM incidents WHERE release = 'fleet'"
is "$(jq -r '.[0].diagnosis' "$OUT")" helm_release_stuck_pending "fleet: stuck in pending-upgrade"

# The logs alone: the same releases, revision unknown.
run_rt ingest --db "$T/b.db" $LOGS
run_rt query --db "$T/b.db" -o json "SELECT release, revision FROM incidents ORDER BY release"
is "$(jq -c 'map([.release, .revision])' "$OUT")" \
	'[["fleet",0],["podinfo",0],["rancher-monitoring",0],["storefront",0]]' \
	"without history: the releases the commands named"
done_testing
