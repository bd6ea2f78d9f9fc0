#!/bin/sh
# superseded_release_install on k3s: HelmChart traefik in kube-system, the
# helm-install-traefik Job's docker json-file logs under
# /var/log/containers, raw API watch lines (helm-controller JobFailed on
# the HelmChart, BackoffLimitExceeded on the Job, BackOff on its pods), and
# `helm list -A -a -o json` showing revision 3 superseded; one more BackOff
# from kubernetes-event-exporter whose pod labels name the chart. With a
# targetNamespace the release lives there, and the job's events follow it
# wherever the history arrives: first, last, in another run.
. "$(dirname "$0")/lib.sh"

INC="SELECT namespace, release, revision, status, severity, opened_at, last_seen_at,
 event_count, occurrences, tags, diagnosis, revision_status, attribution, evidence, pods
 FROM incidents ORDER BY opened_at"

check() {   # check SCENARIO NAMESPACE
	V=$DATA/variants/$1
	LOGS=$(find "$V/var" -type f | sort)
	db=$T/$1.db
	run_rt ingest --db "$db" "$V/helm-list.json" "$V/events-watch.ndjson" "$V/exporter.ndjson" $LOGS
	is "$RC" 0 "$1: ingest"
	run_rt query --db "$db" -o json "SELECT * FROM incidents"
	is "$(jq length "$OUT")" 1 "$1: one incident"
	is "$(jq -r '.[0] | [.namespace, .release, .revision, .diagnosis] | join(" ")' "$OUT")" \
		"$2 traefik 3 superseded_release_install" "$1: $2/traefik revision 3, superseded_release_install"
	is "$(jq -r '.[0].revision_status' "$OUT")" superseded "$1: revision status superseded"
	is "$(jq -c '.[0].pods | fromjson' "$OUT")" '["helm-install-traefik-x7fqb","helm-install-traefik-9cwmt"]' \
		"$1: the helm-install pods"
	is "$(jq -r '.[0].tags | fromjson | map(select(. == "helm_name_in_use" or . == "crashloop")) | join(",")' "$OUT")" \
		"crashloop,helm_name_in_use" "$1: name in use and crash loop"
	is "$(jq -r '.[0].attribution' "$OUT")" job "$1: attributed by the job name"
	is "$(jq -r '.[0].severity' "$OUT")" critical "$1: severity"
	like "$(jq -r '.[0].remedy' "$OUT")" "helm history traefik -n $2" "$1: remedy names the release and namespace"
	run_rt query --db "$db" -o json "SELECT DISTINCT namespace, release_namespace, release, revision, format FROM events ORDER BY format"
	is "$(jq -c 'map([.namespace, .release_namespace, .release, .revision, .format])' "$OUT")" \
		"[[\"kube-system\",\"$2\",\"traefik\",3,\"docker\"],[\"kube-system\",\"$2\",\"traefik\",3,\"exporter\"],[\"kube-system\",\"$2\",\"traefik\",3,\"k8s-event\"]]" \
		"$1: events stay in kube-system, keyed by the release's namespace (labelled ones too)"
	run_rt query --db "$db" -o json "SELECT message FROM events WHERE format = 'docker' ORDER BY first_seen"
	is "$(jq -r '.[0].message' "$OUT")" "Error: INSTALLATION FAILED: cannot re-use a name that is still in use" \
		"$1: the docker line, newline stripped"
	run_rt query --db "$db" -o json "SELECT count(*) AS n FROM events WHERE object_name LIKE 'coredns%'"
	is "$(jq -r '.[0].n' "$OUT")" 0 "$1: unrelated Normal events are not stored"
	run_rt query --db "$db" -o json "SELECT namespace, release, revision, status, updated_at FROM revisions ORDER BY release"
	is "$(jq -c 'map([.namespace, .release, .revision, .status, .updated_at])' "$OUT")" \
		"[[\"$2\",\"traefik\",3,\"superseded\",\"2024-02-20T09:12:44.123456Z\"],[\"$2\",\"traefik-crd\",1,\"deployed\",\"2024-01-10T09:00:01.500000Z\"]]" \
		"$1: helm list JSON: string revisions, Go Time.String() times"
	run_rt query --db "$db" -o json "$INC"
	cp "$OUT" "$T/$1.ref"

	# the history last, in a run of its own
	run_rt ingest --db "$T/$1-late.db" "$V/events-watch.ndjson" "$V/exporter.ndjson" $LOGS
	run_rt query --db "$T/$1-late.db" -o json "SELECT namespace, revision, diagnosis FROM incidents"
	# the job's trace (`helm_v3 install --namespace $2 ...`) names where
	# the release lives, before any history does
	is "$(jq -c 'map([.namespace, .revision])' "$OUT")" "[[\"$2\",0]]" \
		"$1: before the history: the namespace the job's helm command names, revision 0"
	run_rt ingest --db "$T/$1-late.db" "$V/helm-list.json"
	run_rt query --db "$T/$1-late.db" -o json "$INC"
	ok cmp "$T/$1.ref" "$OUT"
	# logs, then history, then events
	run_rt ingest --db "$T/$1-mixed.db" $LOGS
	run_rt ingest --db "$T/$1-mixed.db" "$V/helm-list.json"
	run_rt ingest --db "$T/$1-mixed.db" "$V/events-watch.ndjson" "$V/exporter.ndjson"
	run_rt query --db "$T/$1-mixed.db" -o json "$INC"
	ok cmp "$T/$1.ref" "$OUT"
}

check traefik-superseded kube-system
check traefik-target-ns traefik
done_testing
