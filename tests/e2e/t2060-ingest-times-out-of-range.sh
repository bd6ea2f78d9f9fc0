#!/bin/sh
# Times a record holds but revtrail cannot (year 0001, 1969, 9999, past
# 2261: int64 nanoseconds after 1970 hold 1970..2262) are read as absent:
# the record's next time in the usual order (an Event's
# metadata.creationTimestamp after its lastTimestamp), else unknown -- and
# counted in the summary with the first place, never without a word. Go's
# zero time (0001-01-01T00:00:00Z), what tools print for "never", is
# unknown and not counted. The records themselves are kept.
. "$(dirname "$0")/lib.sh"

ev() {   # ev N TIME: a Warning Event whose only time is lastTimestamp
	printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"web-1.%s","namespace":"prod","uid":"u%s"},' "$1" "$1"
	printf '"involvedObject":{"kind":"Pod","name":"web-1","namespace":"prod"},"reason":"BackOff",'
	printf '"message":"Back-off restarting failed container web in pod web-1 (%s)","type":"Warning",' "$1"
	printf '"count":1,"firstTimestamp":null,"eventTime":null,"lastTimestamp":"%s"}\n' "$2"
}
created() {   # created N TIME: out of range, with a creationTimestamp
	printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"web-1.%s","namespace":"prod","uid":"u%s",' "$1" "$1"
	printf '"creationTimestamp":"2024-11-03T14:40:00Z"},"involvedObject":{"kind":"Pod","name":"web-1","namespace":"prod"},'
	printf '"reason":"BackOff","message":"Back-off restarting failed container web in pod web-1 (%s)",' "$1"
	printf '"type":"Warning","count":1,"lastTimestamp":"%s"}\n' "$2"
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
like "$(cat "$ERR")" 'classify: warning: 4 records with a time out of range \(before 1970 or after 2261; first at .*ev\.json:[0-9]+\)' \
	"classify counts the four records, not Go's zero time"
is "$(wc -l < "$OUT")" 6 "every record is kept"

run_rt ingest --db "$T/e.db" "$T/ev.json"
is "$RC" 0 "ingest"
like "$(cat "$ERR")" 'ingest: warning: 4 records with a time out of range \(before 1970 or after 2261; first at .*ev\.json:[0-9]+\): stored, that time read as absent \(the record.s next time, else unknown\)' \
	"ingest says so in its summary, and where the first was"
run_rt query --db "$T/e.db" -o json "SELECT count(*) AS n, count(ts) AS t FROM events"
is "$(jq -c '.[0]' "$OUT")" '{"n":6,"t":1}' "six events stored, one with a time"

created 8 "9999-01-01T00:00:00Z" > "$T/created.json"
run_rt ingest --db "$T/c.db" "$T/created.json"
like "$(cat "$ERR")" '1 record with a time out of range' "counted"
run_rt query --db "$T/c.db" -o json "SELECT ts FROM events"
is "$(jq -r '.[0].ts' "$OUT")" 2024-11-03T14:40:00.000000Z "the next time the Event holds is its time"

ev 7 "2024-11-03T14:41:09Z" > "$T/ok.json"
run_rt ingest --db "$T/e.db" "$T/ok.json"
unlike "$(cat "$ERR")" 'out of range' "no count when every time is in range"
done_testing
