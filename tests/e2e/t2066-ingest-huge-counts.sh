#!/bin/sh
# Counts from the input are numbers anyone can write: two Events with
# count 9e18 in one incident store occurrences saturated at INT64_MAX, not
# wrapped negative; a count of 2^63 or more is INT64_MAX; a count beyond
# 2^53 is stored exactly; a negative or fractional one is "not stated" (1).
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race
MAX=9223372036854775807
head -n 1 "$SC/events.ndjson" > "$T/tpl"

# ev UID COUNT: the template Event with its own uid and count.
ev() {
	sed -e "s/eac8-ee4986bb1049/eac8-$1/" -e "s/\"count\":1,/\"count\":$2,/" \
		"$T/tpl"
}
{
	ev 000000000001 9000000000000000000
	ev 000000000002 9000000000000000000
} > "$T/two.ndjson"
run_rt ingest --db "$T/a.db" "$T/two.ndjson"
is "$RC" 0 "two Events of count 9e18 ingest"
run_rt query --db "$T/a.db" -o csv --no-headers \
	"SELECT event_count, occurrences FROM incidents"
is "$(cat "$OUT")" "2,$MAX" "their incident's occurrences saturate at INT64_MAX"
run_rt incidents --db "$T/a.db" -o json
is "$RC" 0 "incidents reads it"

{
	ev 000000000003 9223372036854775808
	ev 000000000004 100000000000000000000
	ev 000000000005 9007199254740993
	ev 000000000006 -5
	ev 000000000007 2.5
	ev 000000000008 1e300
} > "$T/odd.ndjson"
run_rt ingest --db "$T/b.db" "$T/odd.ndjson"
is "$RC" 0 "odd counts ingest"
run_rt query --db "$T/b.db" -o csv --no-headers \
	"SELECT count FROM events ORDER BY count"
is "$(tr '\n' ' ' < "$OUT")" \
	"1 2 9007199254740993 $MAX $MAX $MAX " \
	"2^63 and above saturate, 2^53+1 is exact, negative is 1, 2.5 is 2"
run_rt query --db "$T/b.db" -o csv --no-headers \
	"SELECT occurrences FROM incidents"
is "$(cat "$OUT")" "$MAX" "and their incident's sum saturates"

# The same odd counts in the Events of a List are read as the one-line
# Events were: one Event reader (a List's items were read by another).
# (sed, not jq, which would round 2^53+1.)
{
	printf '{"apiVersion":"v1","kind":"List","items":['
	sed -e 's/^{"type":"ADDED","object"://' -e 's/}$//' -e '$!s/$/,/' \
		"$T/odd.ndjson"
	echo ']}'
} | tr -d '\n' > "$T/list.json"
run_rt ingest --db "$T/c.db" "$T/list.json"
is "$RC" 0 "the List ingests"
run_rt query --db "$T/c.db" -o csv --no-headers \
	"SELECT count FROM events ORDER BY count"
is "$(tr '\n' ' ' < "$OUT")" \
	"1 2 9007199254740993 $MAX $MAX $MAX " \
	"a List's items: the same counts, 2^53+1 exact"
done_testing
