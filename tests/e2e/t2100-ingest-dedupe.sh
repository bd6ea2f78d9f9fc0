#!/bin/sh
# Dedupe: a Kubernetes event re-sent with a higher count (MODIFIED watch
# events, a repeated `-w` stream, the same file ingested again) updates one
# event row; re-ingesting the same log file adds nothing.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race
DB=$T/d.db
Q="SELECT count(*) AS events, sum(count) AS occurrences FROM events"

run_rt ingest --db "$DB" "$SC"/*
is "$RC" 0 "first ingest"
run_rt query --db "$DB" -o json "$Q"
first=$(cat "$OUT")
is "$(jq -r '.[0].events' "$OUT")" 15 "15 events: 6 kubelet events (each sent twice) and 9 log lines"
run_rt query --db "$DB" -o json "SELECT count FROM events WHERE object_name = 'payments-api-7d9c8f4b6-9jvpd' AND reason = 'BackOff'"
is "$(jq -r '.[0].count' "$OUT")" 15 "a MODIFIED re-send keeps the higher count"
run_rt query --db "$DB" -o json "SELECT id, event_count, occurrences FROM incidents"
inc1=$(cat "$OUT")

run_rt ingest --db "$DB" "$SC"/*
is "$RC" 0 "the same files again"
like "$(cat "$ERR")" 'events 0 new' "nothing new"
run_rt query --db "$DB" -o json "$Q"
is "$(cat "$OUT")" "$first" "event rows and counts unchanged"
run_rt query --db "$DB" -o json "SELECT id, event_count, occurrences FROM incidents"
is "$(cat "$OUT")" "$inc1" "incident unchanged, no double count"

# The whole stream twice in one run (a restarted `kubectl get -w`).
cat "$SC/events.ndjson" "$SC/events.ndjson" > "$T/twice.ndjson"
run_rt ingest --db "$T/twice.db" "$T/twice.ndjson" "$SC/fluentbit.ndjson"
run_rt query --db "$T/twice.db" -o json "$Q"
is "$(jq -r '.[0].events' "$OUT")" 15 "a doubled stream stores each event once"

# A later re-send with a higher count and a later last-seen time updates it.
sed -e 's/"count":15/"count":40/' -e 's/"lastTimestamp":"2024-11-03T14:54:01Z"/"lastTimestamp":"2024-11-03T15:01:00Z"/' \
	"$SC/events.ndjson" > "$T/later.ndjson"
run_rt ingest --db "$DB" "$T/later.ndjson"
is "$RC" 0 "ingest of the newer re-send"
like "$(cat "$ERR")" 'events 0 new, [1-9][0-9]* updated' "updated, not inserted"
run_rt query --db "$DB" -o json "SELECT count, ts FROM events WHERE object_name = 'payments-api-7d9c8f4b6-9jvpd' AND reason = 'BackOff'"
is "$(jq -r '.[0].count' "$OUT")" 40 "count raised"
is "$(jq -r '.[0].ts' "$OUT")" 2024-11-03T15:01:00.000000Z "last seen moved"
run_rt query --db "$DB" -o json "SELECT event_count, last_seen_at FROM incidents"
is "$(jq -r '.[0].event_count' "$OUT")" 15 "still 15 events in the incident"
is "$(jq -r '.[0].last_seen_at' "$OUT")" 2024-11-03T15:01:00.000000Z "incident last seen follows"
done_testing
