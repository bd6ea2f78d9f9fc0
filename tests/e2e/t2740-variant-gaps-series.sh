#!/bin/sh
# Time: events.k8s.io/v1 events with only series (no lastTimestamp) or only
# eventTime, Helm 4 history JSON with +02:00 offsets, an omitted `updated`
# and rollback_revision. Two bursts of one release more than the gap (15m)
# apart are two incidents, each under the revision in force at its UTC
# instant; the second stays open across a rollback. A workload with no
# history at all keeps revision 0 and is inferred from its name.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/gaps-and-series

INC="SELECT namespace, release, revision, status, opened_at, last_seen_at, closed_at,
 event_count, occurrences, tags, diagnosis, revision_status, later_revisions, attribution,
 pods FROM incidents ORDER BY release, opened_at"

run_rt ingest --db "$T/a.db" --release jobs/worker "$V/history.json" "$V/events-watch.ndjson"
is "$RC" 0 "ingest"
run_rt query --db "$T/a.db" -o json "$INC"
cp "$OUT" "$T/ref.inc"
is "$(jq length "$OUT")" 3 "three incidents"
is "$(jq -c 'map([.release, .revision, .status])' "$OUT")" \
	'[["report-cron",0,"closed"],["worker",5,"closed"],["worker",6,"open"]]' \
	"report-cron (no history) and two of worker, split by the gap"
is "$(jq -c '.[1] | [.opened_at, .last_seen_at, .closed_at]' "$OUT")" \
	'["2024-05-02T08:00:10.000000Z","2024-05-02T08:06:00.000000Z","2024-05-02T08:21:00.000000Z"]' \
	"burst 1: eventTime to series.lastObservedTime, closed at last + gap"
is "$(jq -r '.[1].occurrences' "$OUT")" 16 "series counts add up"
is "$(jq -c '.[2] | [.opened_at, .last_seen_at, .closed_at]' "$OUT")" \
	'["2024-05-02T08:59:30.000000Z","2024-05-02T09:03:00.000000Z",null]' "burst 2"
is "$(jq -r '.[2].revision_status' "$OUT")" superseded \
	"burst 2 opened under revision 6 (10:58:00+02:00 is 08:58:00Z)"
is "$(jq -r '.[2].later_revisions' "$OUT")" "[7]" "the rollback 7 (09:01:30Z) is on it, it stays open"
is "$(jq -r '.[2].diagnosis' "$OUT")" oom_after_upgrade "burst 2 diagnosis"
is "$(jq -r '.[1].later_revisions' "$OUT")" "[]" "burst 1 saw no later revision"
is "$(jq -c '.[0] | [.attribution, .diagnosis, .revision_status]' "$OUT")" '["workload",null,null]' \
	"report-cron: inferred from the CronJob pod name, undiagnosed"
like "$(jq -r '.[0].pods' "$OUT")" 'report-cron-28571460-b8xkw' "report-cron: its pod"
run_rt query --db "$T/a.db" -o json "SELECT title FROM incidents WHERE release = 'report-cron'"
is "$(jq -r '.[0].title' "$OUT")" "crashloop in report-cron" "undiagnosed title: tags and release"
run_rt query --db "$T/a.db" -o json "SELECT object_name, revision, first_seen, ts FROM events
 WHERE release = 'worker' ORDER BY first_seen"
is "$(jq -c 'map(.revision)' "$OUT")" '[5,5,6,6]' "events.revision by UTC instant"
is "$(jq -c '.[2] | [.first_seen, .ts]' "$OUT")" \
	'["2024-05-02T08:59:30.000000Z","2024-05-02T08:59:30.000000Z"]' "eventTime only: first = last"
run_rt query --db "$T/a.db" -o json "SELECT revision, updated_at FROM revisions ORDER BY revision"
is "$(jq -c 'map([.revision, .updated_at])' "$OUT")" \
	'[[4,null],[5,"2024-05-02T07:55:00.500000Z"],[6,"2024-05-02T08:58:00.250000Z"],[7,"2024-05-02T09:01:30.000000Z"]]' \
	"Helm 4 history: the omitted time is NULL, offsets read as UTC"
run_rt query --db "$T/a.db" -o json "SELECT entry, revision, reason FROM timeline
 WHERE incident_id = (SELECT id FROM incidents WHERE revision = 6)"
is "$(jq -c 'map([.entry, .revision])' "$OUT")" \
	'[["revision",6],["event",6],["event",6],["revision",7]]' "timeline by first seen: 6, OOM, back-off (09:00:05), rollback 7"

# The events first, history in a later run: the same incidents, revisions
# filled in.
run_rt ingest --db "$T/b.db" "$V/events-watch.ndjson"
run_rt query --db "$T/b.db" -o json "SELECT DISTINCT revision FROM incidents"
is "$(jq -c 'map(.revision)' "$OUT")" '[0]' "without history every revision is 0"
run_rt ingest --db "$T/b.db" --release jobs/worker "$V/history.json"
run_rt query --db "$T/b.db" -o json "$INC"
ok cmp "$T/ref.inc" "$OUT"

# A shorter gap splits more, a longer one merges: recomputed on the stored events.
run_rt ingest --db "$T/a.db" --gap 1h --regap
run_rt query --db "$T/a.db" -o json "SELECT release, revision, later_revisions FROM incidents ORDER BY release, opened_at"
is "$(jq -c 'map([.release, .revision, .later_revisions])' "$OUT")" \
	'[["report-cron",0,"[]"],["worker",5,"[6,7]"]]' "--gap 1h: one worker incident from revision 5"
done_testing
