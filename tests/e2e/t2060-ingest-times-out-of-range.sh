#!/bin/sh
# Times a record holds but revtrail cannot (year 0001, 1969, 9999, past
# 2261: int64 nanoseconds after 1970 hold 1970..2262) are unknown -- and
# counted in the summary, never dropped to NULL without a word. Go's zero
# time (0001-01-01T00:00:00Z), what tools print for "never", is unknown
# and not counted. The records themselves are kept.
. "$(dirname "$0")/lib.sh"

ev() {   # ev N TIME: a Warning Event whose only time is lastTimestamp
	printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"web-1.%s","namespace":"prod","uid":"u%s"},' "$1" "$1"
	printf '"involvedObject":{"kind":"Pod","name":"web-1","namespace":"prod"},"reason":"BackOff",'
	printf '"message":"Back-off restarting failed container web in pod web-1 (%s)","type":"Warning",' "$1"
	printf '"count":1,"firstTimestamp":null,"eventTime":null,"lastTimestamp":"%s"}\n' "$2"
}
{
	ev 1 "2024-11-03T14:41:07Z"
	ev 2 "0001-05-03T10:00:00Z"
	ev 3 "1969-12-31T23:59:59Z"
	ev 4 "9999-01-01T00:00:00Z"
	ev 5 "2263-01-01T00:00:00.5+02:00"
	ev 6 "0001-01-01T00:00:00Z"
} > "$T/ev.json"

run_rt classify "$T/ev.json"
is "$RC" 0 "classify"
like "$(cat "$ERR")" ', 4 with a time out of range \(before 1970 or after 2261: unknown\)' \
	"classify counts the four records, not Go's zero time"
is "$(wc -l < "$OUT")" 6 "every record is kept"

run_rt ingest --db "$T/e.db" "$T/ev.json"
is "$RC" 0 "ingest"
like "$(cat "$ERR")" 'ingest: warning: 4 records with a time out of range \(before 1970 or after 2261\): stored, the time as unknown' \
	"ingest says so in its summary"
run_rt query --db "$T/e.db" -o json "SELECT count(*) AS n, count(ts) AS t FROM events"
is "$(jq -c '.[0]' "$OUT")" '{"n":6,"t":1}' "six events stored, one with a time"

ev 7 "2024-11-03T14:41:09Z" > "$T/ok.json"
run_rt ingest --db "$T/e.db" "$T/ok.json"
unlike "$(cat "$ERR")" 'out of range' "no count when every time is in range"
done_testing
