#!/bin/sh
# classify --all over one sample of every input format: the format each
# record is detected as, the normalised fields, and the tags the default
# packs give.
. "$(dirname "$0")/lib.sh"
F=$DATA/formats

# q FILE JQ: one jq query over classify's JSON Lines, compact output.
q() { jq -c -s "$2" "$1"; }

run_rt classify --all "$F/events-watch.json"
is "$RC" 0 "classify exits 0 on pretty-printed watch output"
cp "$OUT" "$T/watch.jsonl"
is "$(q "$T/watch.jsonl" '[.[].format]')" '["k8s-event","k8s-event","k8s-event"]' \
	"three pretty-printed Events back to back are three k8s-event records"
is "$(q "$T/watch.jsonl" '.[0].tags | sort')" '["configmap_not_found","volume_mount_failed"]' \
	"FailedMount for a missing ConfigMap carries both tags"
is "$(q "$T/watch.jsonl" '.[0].fields | [.configmap, .namespace, .pod, .container, .reason]')" \
	'["haproxy-config","ingress","haproxy-ingress-6b7f9c8d5-x2k4p","haproxy","FailedMount"]' \
	"event fields: capture, namespace, pod, container from fieldPath, reason"
is "$(q "$T/watch.jsonl" '[.[0].ts, .[0].count]')" '["2024-11-03T14:43:02.000000Z",3]' \
	"event time is lastTimestamp and count is kept"
is "$(q "$T/watch.jsonl" '.[1].tags')" '[]' "Successfully assigned is not tagged"
is "$(q "$T/watch.jsonl" '.[1].ts')" '"2024-11-03T14:41:13.123456Z"' \
	"scheduler-style event falls back to eventTime"
like "$(q "$T/watch.jsonl" '.[2].tags')" 'crashloop' "BackOff restarting is crashloop"

run_rt classify --all "$F/watch-envelopes.ndjson"
cp "$OUT" "$T/env.jsonl"
is "$(q "$T/env.jsonl" 'length')" 2 "BOOKMARK and ERROR envelopes are not records"
is "$(q "$T/env.jsonl" '.[0] | [.fields.pod, .ts, .count]')" \
	'["payments-api-5f6d7c8b9-abcde","2024-11-03T14:42:10.500000Z",4]' \
	"events.k8s.io/v1: regarding, series.lastObservedTime, series.count"
like "$(q "$T/env.jsonl" '.[0].tags')" 'configmap_not_found' "note is classified"
like "$(q "$T/env.jsonl" '.[1].tags')" 'probe_failed' "readiness probe failure is tagged"

run_rt classify --all "$F/containerd.log"
cp "$OUT" "$T/cri.jsonl"
is "$(q "$T/cri.jsonl" '[.[] | select(.format != "cri")] | length')" 0 "every containerd line is cri"
like "$(q "$T/cri.jsonl" '.[0].tags')" 'config_file_missing' "HAProxy cannot open its config file"
is "$(q "$T/cri.jsonl" '[.[] | select(.message | startswith("panic:"))][0].message')" \
	'"panic: runtime error: index out of range [5] with length 3"' \
	"P partial joined with its F line on the same stream, across another stream's line"
is "$(q "$T/cri.jsonl" '[.[] | select(.message == "interleaved stdout line")] | length')" 1 \
	"the other stream's line stays whole"
is "$(q "$T/cri.jsonl" '[.[] | select(.tags | index("db_auth_failed"))][0].message')" \
	'"pq: password authentication failed for user \"payments\""' \
	"JSON log content: the message is its msg field"
is "$(q "$T/cri.jsonl" '[.[] | select(.tags | index("dependency_refused"))][0].message')" \
	'"cannot connect to database: dial tcp 10.0.0.5:5432: connect: connection refused"' \
	"JSON log content: an error member beside msg is joined to the message"

run_rt classify --all "$F/crio.log"
cp "$OUT" "$T/crio.jsonl"
is "$(q "$T/crio.jsonl" '[.[].ts]')" '["2024-11-03T14:41:21.000000Z","2024-11-03T14:41:22.123456Z"]' \
	"CRI-O nine-digit times with offsets"
like "$(q "$T/crio.jsonl" '.[0].tags')" 'permission_denied' "permission denied on the config"

run_rt classify --all "$F/docker.log"
cp "$OUT" "$T/docker.jsonl"
is "$(q "$T/docker.jsonl" '[.[].format] | unique')" '["docker"]' "docker json-file lines"
like "$(q "$T/docker.jsonl" '.[0].tags')" 'dependency_refused' "redis connection refused"
is "$(q "$T/docker.jsonl" '[.[] | select(.message | startswith("a line split"))][0].message')" \
	'"a line split by the daemon, part one; part two"' "docker split pieces are joined"

run_rt classify --all "$F/fluentbit-vector.ndjson"
cp "$OUT" "$T/fv.jsonl"
is "$(q "$T/fv.jsonl" '[.[].format]')" '["fluentbit","vector"]' "Fluent Bit and Vector records"
is "$(q "$T/fv.jsonl" '.[0] | [.fields.pod, .fields.namespace, .fields.container, .fields.release]')" \
	'["payments-api-5f6d7c8b9-abcde","prod","api","payments-api"]' "Fluent Bit kubernetes map"
like "$(q "$T/fv.jsonl" '.[0].tags')" 'migration_dirty' "dirty schema version"
like "$(q "$T/fv.jsonl" '.[1].tags')" 'dns_failure' "no such host"
is "$(q "$T/fv.jsonl" '.[1].fields.namespace')" '"prod"' "Vector pod_namespace"

# Structured loggers keep the error beside the message: reason, an error
# object, ECS's error.* keys, a Python traceback.
run_rt classify --all "$F/json-causes.ndjson"
cp "$OUT" "$T/causes.jsonl"
is "$(q "$T/causes.jsonl" '[.[].format] | unique')" '["json"]' "JSON application logs"
is "$(q "$T/causes.jsonl" '[.[] | .tags | join(",")]')" \
	'["configmap_not_found","dns_failure","db_auth_failed","dependency_refused","",""]' \
	"errors in reason, error.*, an error object, exc_info; not in benign ones"
is "$(q "$T/causes.jsonl" '.[0].message')" \
	'"Reconciler error: configmap \"orders-config\" not found"' "the reason joins the message"

run_rt classify --all --release prod/payments-api "$F/helm-history.json"
cp "$OUT" "$T/hist.jsonl"
is "$(q "$T/hist.jsonl" '[.[0].format, (.[0].revisions | map(.revision))]')" '["helm-history",[47,48,49]]' \
	"helm history JSON: one record, three revisions"
is "$(q "$T/hist.jsonl" '.[0].revisions[2] | [.release, .namespace, .status, .description]')" \
	'["payments-api","prod","deployed","Rollback to 47"]' "--release names the history's release"

run_rt classify --all --release prod/payments-api "$F/helm-history.table"
cp "$OUT" "$T/table.jsonl"
is "$(q "$T/table.jsonl" '[.[].revisions[]? | [.revision, .status, .updated]]')" \
	'[[47,"superseded","2024-11-03T14:22:11.000000Z"],[48,"failed","2024-11-03T14:41:07.000000Z"]]' \
	"helm history table: TAB cells, ANSIC dates with a padded day"

run_rt classify --all "$F/helm-list.json"
cp "$OUT" "$T/list.jsonl"
is "$(q "$T/list.jsonl" '.[0].revisions[0] | [.release, .namespace, .revision, .status]')" \
	'["rke2-ingress-nginx","kube-system",2,"superseded"]' "helm list: revision as a string"

# k3s/RKE2 helm-controller HelmCharts (`kubectl get helmcharts -A -o
# json`): where each chart's release is installed.
run_rt classify --all "$F/helmcharts.json"
cp "$OUT" "$T/hc.jsonl"
is "$(q "$T/hc.jsonl" '[.[] | .fields | "\(.kind) \(.namespace)/\(.name) -> \(.release_namespace)/\(.release)"]')" \
	'["HelmChart kube-system/rke2-ingress-nginx -> kube-system/rke2-ingress-nginx","HelmChart kube-system/grafana -> monitoring/grafana"]' \
	"HelmCharts: the release in targetNamespace, else the chart's own"
is "$(q "$T/hc.jsonl" '[.[].tags | length] | add')" 0 "HelmCharts are not tagged"

run_rt classify "$F/helm-cli.txt"
cp "$OUT" "$T/cli.jsonl"
is "$(q "$T/cli.jsonl" 'length')" 2 "the success line is not tagged"
like "$(q "$T/cli.jsonl" '.[0].tags')" 'helm_name_in_use' "cannot re-use a name"
like "$(q "$T/cli.jsonl" '.[1].tags')" 'helm_operation_in_progress' "another operation in progress"

done_testing
