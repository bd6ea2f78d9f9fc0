#!/bin/sh
# The release of unlabelled Kubernetes events learned from the labels on
# container log records, untagged ones included: release `secrets`
# (namespace vault) runs StatefulSet `vault`; only Fluent Bit records
# (classic cri parser: `message`, `logtag`) carry app.kubernetes.io/instance.
# History as `helm status -o json` (no chart) and release Secrets with only
# createdAt or modifiedAt.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/vault-fluentbit-labels
INC="SELECT namespace, release, revision, status, opened_at, last_seen_at, event_count,
 tags, diagnosis, revision_status, attribution, pods FROM incidents ORDER BY opened_at"

run_rt ingest --db "$T/a.db" "$V/release-secrets.json" "$V/helm-status.json" "$V/events-watch.json" "$V/fluentbit.ndjson"
is "$RC" 0 "ingest"
run_rt query --db "$T/a.db" -o json "$INC"
cp "$OUT" "$T/ref.inc"
is "$(jq length "$OUT")" 1 "one incident"
is "$(jq -r '.[0] | [.namespace, .release, .revision, .diagnosis, .attribution] | join(" ")' "$OUT")" \
	"vault secrets 2 stale_config_mount label" "vault/secrets revision 2, stale_config_mount, by label"
is "$(jq -c '.[0].pods | fromjson' "$OUT")" '["vault-1"]' "only vault-1"
is "$(jq -c '.[0].tags | fromjson' "$OUT")" '["config_file_missing","crashloop","secret_not_found","volume_mount_failed"]' "tags"
run_rt query --db "$T/a.db" -o json "SELECT revision, status, chart, updated_at FROM revisions ORDER BY revision"
is "$(jq -c 'map([.revision, .status, .chart, .updated_at])' "$OUT")" \
	'[[1,"superseded","vault-0.28.0","2024-09-01T08:00:00.500000Z"],[2,"deployed","vault-0.28.1","2024-09-03T07:45:10.750000Z"]]' \
	"revisions: the chart from the Secret, the time from the payload"

# Events alone: the StatefulSet's name is all there is.
run_rt ingest --db "$T/b.db" "$V/release-secrets.json" "$V/events-watch.json"
run_rt query --db "$T/b.db" -o json "SELECT release, attribution, revision FROM incidents"
is "$(jq -c '.[0] | [.release, .attribution, .revision]' "$OUT")" '["vault","workload",0]' \
	"without labels: workload vault, no history of that name"
# vault-0's two untagged lines alone teach vault -> secrets
grep vault-0 "$V/fluentbit.ndjson" > "$T/healthy.ndjson"
run_rt ingest --db "$T/b.db" "$T/healthy.ndjson"
like "$(cat "$ERR")" ' 0 tagged' "the healthy pod's lines are untagged"
run_rt query --db "$T/b.db" -o json "SELECT release, attribution, revision, pods FROM incidents"
is "$(jq -c 'map([.release, .attribution, .revision])' "$OUT")" '[["secrets","label",2]]' \
	"the events move to secrets, revision 2"
run_rt ingest --db "$T/b.db" "$V/fluentbit.ndjson" "$V/helm-status.json"
run_rt query --db "$T/b.db" -o json "$INC"
ok cmp "$T/ref.inc" "$OUT"
run_rt query --db "$T/b.db" -o json "SELECT count(*) AS n FROM events WHERE release <> 'secrets'"
is "$(jq -r '.[0].n' "$OUT")" 0 "no event left under the workload name"
done_testing
