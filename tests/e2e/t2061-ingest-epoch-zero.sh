#!/bin/sh
# 1970-01-01T00:00:00Z is a time, not "no time": revtrail holds 0 as
# "unknown", so the epoch is read as 1 ns after it (docs/formats.md), which
# keeps every order and shows as the epoch. An Event at the epoch gets that
# time -- not its creationTimestamp, not a count of times out of range --
# and `show` prints it.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race

# at TIME: the scenario's first Event, last and first seen at TIME, its
# object created a day later (the time it would fall back to).
at() {
	head -n 1 "$SC/events.ndjson" | sed \
		-e "s/\"lastTimestamp\":\"[^\"]*\"/\"lastTimestamp\":\"$1\"/" \
		-e "s/\"firstTimestamp\":\"[^\"]*\"/\"firstTimestamp\":\"$1\"/" \
		-e 's/"creationTimestamp":"[^"]*"/"creationTimestamp":"1970-01-02T00:00:00Z"/'
}
at 1970-01-01T00:00:00Z > "$T/epoch.json"
run_rt ingest --db "$T/e.db" "$T/epoch.json"
is "$RC" 0 "ingest"
unlike "$(cat "$ERR")" 'out of range|without a time' "the epoch is neither out of range nor absent"
run_rt query --db "$T/e.db" -o json "SELECT ts, first_seen, ts_ns, first_ns FROM events"
is "$(jq -c '.[0]' "$OUT")" \
	'{"ts":"1970-01-01T00:00:00.000000Z","first_seen":"1970-01-01T00:00:00.000000Z","ts_ns":1,"first_ns":1}' \
	"last and first seen at the epoch (1 ns)"

run_rt incidents --db "$T/e.db" -o json
id=$(jq -r '.[0].id' "$OUT")
run_rt show --db "$T/e.db" "$id"
is "$RC" 0 "show"
like "$(cat "$OUT")" 'Opened: +1970-01-01T00:00:00\.000000Z' "show: opened at the epoch"
like "$(cat "$OUT")" 'offsets from the first event, 1970-01-01T00:00:00\.000000Z' \
	"show: the timeline starts at the epoch"

# Another Event a second later sorts after it.
at 1970-01-01T00:00:01Z | sed 's/"uid":"\([0-9a-f-]*\)eac8-ee4986bb1049"/"uid":"\1eac8-000000000002"/' \
	> "$T/later.json"
run_rt ingest --db "$T/e.db" "$T/later.json"
run_rt query --db "$T/e.db" -o csv --no-headers "SELECT ts FROM events ORDER BY ts_ns"
is "$(cat "$OUT" | tr -d '\r' | tr '\n' ' ')" \
	"1970-01-01T00:00:00.000000Z 1970-01-01T00:00:01.000000Z " \
	"the epoch sorts before the second after it"
done_testing
