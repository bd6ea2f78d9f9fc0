#!/bin/sh
# State survives restarts: a second ingest into the same database continues
# the open incident, knows the release history, and fills in the revision of
# events stored before the history arrived.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race
Q="SELECT namespace, release, revision, status, opened_at, last_seen_at, event_count,
 occurrences, tags, diagnosis, later_revisions, pods FROM incidents ORDER BY opened_at"

run_rt ingest --db "$T/one.db" "$SC"/*
run_rt query --db "$T/one.db" -o json "$Q"
cp "$OUT" "$T/one.json"

# Run 1: events only. No history yet: revision unknown, no diagnosis that
# needs one.
run_rt ingest --db "$T/two.db" "$SC/events.ndjson"
is "$RC" 0 "run 1: events"
run_rt query --db "$T/two.db" -o json "SELECT revision, diagnosis, event_count FROM incidents"
is "$(jq -r '.[0].revision' "$OUT")" 0 "revision unknown without history"
is "$(jq -r '.[0].event_count' "$OUT")" 6 "six kubelet events"
run_rt query --db "$T/two.db" -o json "SELECT DISTINCT revision FROM events"
is "$(jq -r 'map(.revision) | join(",")' "$OUT")" 0 "events' revision unknown"

# Run 2: the history arrives: revisions filled in, diagnosis re-evaluated.
run_rt ingest --db "$T/two.db" "$SC/helm-history.txt" "$SC/release-secret-v48.json"
is "$RC" 0 "run 2: history"
run_rt query --db "$T/two.db" -o json "SELECT revision, diagnosis FROM incidents"
is "$(jq -r '.[0].revision' "$OUT")" 48 "revision filled in later"
is "$(jq -r '.[0].diagnosis' "$OUT")" hook_configmap_race "diagnosis re-evaluated"
run_rt query --db "$T/two.db" -o json "SELECT DISTINCT revision FROM events ORDER BY 1"
is "$(jq -r 'map(.revision) | join(",")' "$OUT")" 48 "events' revision updated"

# Run 3: the container logs continue the same incident.
run_rt ingest --db "$T/two.db" "$SC/fluentbit.ndjson"
is "$RC" 0 "run 3: logs"
like "$(cat "$ERR")" 'incidents 0 opened, 1 updated' "the open incident continues"
run_rt query --db "$T/two.db" -o json "$Q"
ok cmp "$T/one.json" "$OUT"

# A file cut in two, ingested in two runs, equals one run.
n=$(wc -l < "$SC/fluentbit.ndjson")
head -n $((n / 2)) "$SC/fluentbit.ndjson" > "$T/a.ndjson"
tail -n +$((n / 2 + 1)) "$SC/fluentbit.ndjson" > "$T/b.ndjson"
run_rt ingest --db "$T/cut.db" "$SC/helm-history.txt" "$SC/release-secret-v48.json" "$SC/events.ndjson" "$T/a.ndjson"
run_rt ingest --db "$T/cut.db" "$T/b.ndjson"
run_rt query --db "$T/cut.db" -o json "$Q"
ok cmp "$T/one.json" "$OUT"

# `helm history NAME` without -n names no namespace: it answers for the
# release in any namespace, first or last.
sed 's/ -n prod//' "$SC/helm-history.txt" > "$T/history-nons.txt"
run_rt ingest --db "$T/nons.db" "$SC/events.ndjson" "$SC/fluentbit.ndjson"
run_rt ingest --db "$T/nons.db" "$T/history-nons.txt"
run_rt query --db "$T/nons.db" -o json "SELECT namespace, release, revision, diagnosis, later_revisions FROM incidents"
is "$(jq -c '.[0]' "$OUT")" '{"namespace":"prod","release":"payments-api","revision":48,"diagnosis":"hook_configmap_race","later_revisions":"[49]"}' "namespace-less history, arriving last"

# A later failure after the gap opens a second incident, on the rollback's
# revision; the first is then closed.
cat > "$T/later.ndjson" <<'J'
{"type":"ADDED","object":{"apiVersion":"v1","kind":"Event","metadata":{"name":"payments-api-7d9c8f4b6-x8r2t.99","namespace":"prod","uid":"later-1"},"involvedObject":{"kind":"Pod","namespace":"prod","name":"payments-api-7d9c8f4b6-x8r2t"},"reason":"BackOff","message":"Back-off restarting failed container api in pod payments-api-7d9c8f4b6-x8r2t_prod(1)","source":{"component":"kubelet"},"firstTimestamp":"2024-11-03T16:30:00Z","lastTimestamp":"2024-11-03T16:30:00Z","count":1,"type":"Warning","reportingComponent":"kubelet","reportingInstance":""}}
J
run_rt ingest --db "$T/two.db" "$T/later.ndjson"
run_rt query --db "$T/two.db" -o json "SELECT revision, status, closed_at FROM incidents ORDER BY opened_at"
is "$(jq -r 'length' "$OUT")" 2 "a second incident after the gap"
is "$(jq -r '.[0].status + " " + .[0].closed_at' "$OUT")" "closed 2024-11-03T15:10:02.000000Z" "the first is closed one gap after its last event"
is "$(jq -r '.[1].revision' "$OUT")" 49 "the second is on revision 49"
done_testing
