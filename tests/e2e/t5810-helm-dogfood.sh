#!/bin/sh
# revtrail reading its own release: the chart's install (revision 1) and an
# upgrade to secured Kafka (revision 2), stored as Helm stores them
# (Secrets sh.helm.release.v1.revtrail.vN whose data.release is
# base64(gzip(JSON)) with the manifest helm template renders), listed as
# `kubectl get secret -n revtrail -l owner=helm,name=revtrail -o json`
# prints them and piped into `revtrail ingest`, then the upgraded pod's
# failure: its CA Secret is not in revtrail's namespace. `show` on the
# incident names revtrail at revision 2.
#
# Needs the chart's helm (tests/chart/tools.sh): skips without go, unless
# REVTRAIL_REQUIRE_HELM=1.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CHART=$ROOT/deploy/helm/revtrail

if ! command -v "${GO:-go}" >/dev/null 2>&1; then
	if [ "${REVTRAIL_REQUIRE_HELM:-0}" = 1 ]; then
		_result 1 "go builds helm (REVTRAIL_REQUIRE_HELM=1)"
		done_testing
		exit
	fi
	echo "1..0 # SKIP no go to build helm"
	exit 0
fi
if ! "$ROOT/tests/chart/tools.sh" "$ROOT/build/chart" >"$T/tools.log" 2>&1; then
	_result 1 "tests/chart/tools.sh builds helm"
	diag "$(tail -c 3000 "$T/tools.log")"
	done_testing
	exit
fi
H=$ROOT/build/chart/helm

# release REV STATUS DEPLOYED DESCRIPTION HELM-ARGS...: the storage Secret
# of revision REV, its manifest rendered by the chart.
release() {
	rev=$1 status=$2 at=$3 desc=$4
	shift 4
	"$H" template revtrail "$CHART" --namespace revtrail "$@" >"$T/m$rev.yaml" ||
		_result 1 "helm template for revision $rev"
	jq -n --rawfile m "$T/m$rev.yaml" --arg at "$at" --arg st "$status" \
		--arg desc "$desc" --argjson rev "$rev" '{
		name: "revtrail", namespace: "revtrail", version: $rev,
		info: {first_deployed: "2026-11-02T09:00:00Z", last_deployed: $at,
		       deleted: "", description: $desc, status: $st, notes: ""},
		chart: {metadata: {name: "revtrail", version: "0.1.0",
		                   appVersion: "0.1.0", apiVersion: "v2"}},
		config: {}, manifest: $m, hooks: []}' >"$T/r$rev.json"
	payload=$(gzip -9n <"$T/r$rev.json" | base64 -w0 | base64 -w0)
	jq -n --arg d "$payload" --arg at "$at" --arg st "$status" \
		--argjson rev "$rev" '{
		apiVersion: "v1", kind: "Secret", type: "helm.sh/release.v1",
		data: {release: $d},
		metadata: {name: "sh.helm.release.v1.revtrail.v\($rev)",
		           namespace: "revtrail", creationTimestamp: $at,
		           labels: {name: "revtrail", owner: "helm", status: $st,
		                    version: "\($rev)"}}}'
}

{
	release 1 superseded 2026-11-02T09:00:00Z "Install complete"
	release 2 deployed 2026-11-03T14:00:00Z "Upgrade complete" \
		-f "$CHART/ci/secure-values.yaml" \
		--set kafka.ca.existingSecret=my-cluster-cluster-ca-cert
} | jq -s '{apiVersion: "v1", kind: "List", items: .}' >"$T/secrets.json"
like "$(jq -r '.items[1].data.release' "$T/secrets.json" | base64 -d | base64 -d | gzip -d | jq -r .manifest)" \
	'kind: StatefulSet' "the stored release holds the chart's manifest"

# Before the upgrade revtrail-0 restarts; after it, revtrail-0 cannot
# mount the CA: Strimzi made that Secret in Kafka's namespace.
ev() {   # ev N REASON MESSAGE FIRST LAST COUNT
	jq -nc --argjson n "$1" --arg r "$2" --arg m "$3" --arg f "$4" \
		--arg l "$5" --argjson c "$6" '{type: "ADDED", object: {
		apiVersion: "v1", kind: "Event", type: "Warning", reason: $r,
		message: $m, count: $c, firstTimestamp: $f, lastTimestamp: $l,
		involvedObject: {apiVersion: "v1", kind: "Pod", name: "revtrail-0",
		                 namespace: "revtrail", uid: "5e1f0000-0000-4000-8000-00000000000\($n)"},
		metadata: {name: "revtrail-0.18b0000\($n)", namespace: "revtrail",
		           uid: "7a2e0000-0000-4000-8000-00000000000\($n)"},
		source: {component: "kubelet", host: "node-1"}}}'
}
{
	ev 0 BackOff 'Back-off restarting failed container revtrail in pod revtrail-0_revtrail(5e1f0000)' \
		2026-11-02T11:00:00Z 2026-11-02T11:03:00Z 4
	ev 1 FailedMount 'MountVolume.SetUp failed for volume "kafka-ca" : secret "my-cluster-cluster-ca-cert" not found' \
		2026-11-03T14:00:20Z 2026-11-03T14:04:30Z 6
	ev 2 FailedMount 'Unable to attach or mount volumes: unmounted volumes=[kafka-ca], unattached volumes=[db tmp kafka kafka-ca kafka-user]: timed out waiting for the condition' \
		2026-11-03T14:02:20Z 2026-11-03T14:04:20Z 2
} >"$T/events.ndjson"

# As the README shows it: the Secrets piped in, then the events.
run_rt ingest --db "$T/rt.db" - <"$T/secrets.json"
is "$RC" 0 "ingest the release Secrets from stdin"
run_rt ingest --db "$T/rt.db" "$T/events.ndjson"
is "$RC" 0 "ingest the pod's events"
run_rt incidents --db "$T/rt.db" -o json
is "$RC" 0 "incidents"
is "$(jq -c 'map([.namespace, .release, .revision]) | sort' "$OUT")" \
	'[["revtrail","revtrail",1],["revtrail","revtrail",2]]' \
	"an incident of revtrail at revision 1, one at revision 2"
id=$(jq -r 'map(select(.revision == 2))[0].id' "$OUT")
run_rt show --db "$T/rt.db" "$id"
is "$RC" 0 "show $id"
like "$(head -n 1 "$OUT")" '^Incident [0-9]+: revtrail/revtrail, revision 2 \(deployed: Upgrade complete\)' \
	"show names the release and the revision"
like "$(cat "$OUT")" 'my-cluster-cluster-ca-cert" not found' "and the failure"
done_testing
