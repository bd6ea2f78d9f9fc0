#!/bin/sh
# show --watch: the incident, then each new or changed timeline entry and
# each change of status or diagnosis as another process commits, each
# within 2 s of its commit, until SIGINT (exit 0); -o json is one object a
# line with "change"; with --db twice the merged ids are watched.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race

# An event of pod NAME in NAMESPACE at TIME with MESSAGE (JSON-escaped).
event() {   # event NAMESPACE NAME TIME UID REASON MESSAGE
	printf '{"type":"ADDED","object":{"kind":"Event","apiVersion":"v1","count":1,"firstTimestamp":"%s","lastTimestamp":"%s","involvedObject":{"kind":"Pod","name":"%s","namespace":"%s"},"metadata":{"name":"%s.x","namespace":"%s","uid":"%s"},"reason":"%s","message":"%s","type":"Warning"}}\n' "$3" "$3" "$2" "$1" "$2" "$1" "$4" "$5" "$6"
}

# start_watch NAME ARGS...: show --watch in the background
start_watch() {
	_name=$1
	shift
	"$REVTRAIL" show --watch "$@" >"$T/$_name.out" 2>"$T/$_name.err" &
	WPID=$!
}

stop_watch() {   # stop_watch SIG: sends it, the exit code into WRC
	kill -"$1" "$WPID"
	WRC=0
	wait "$WPID" || WRC=$?
}

# ingest_line DB N: the Nth event of the scenario
ingest_line() {
	sed -n "$2p" "$SC/events.ndjson" >"$T/line.json"
	run_rt ingest --db "$1" "$T/line.json"
}

# two days after, another release's event moves the watermark past the gap
later() {
	event shop orders-6d9c8f4b6-abcde 2024-11-05T14:41:15Z u-late BackOff \
		'Back-off restarting failed container' >"$T/later.json"
	run_rt ingest --db "$1" "$T/later.json"
}

# ---- text: the incident, then its new entries and its closing -------------
DB=$T/w.db
ingest_line "$DB" 1
is "$RC" 0 "a database with one incident"
start_watch text --db "$DB" 1
ok wait_line "$T/text.out" 'Pod/payments-api-7d9c8f4b6-4kx2m +Failed'
ingest_line "$DB" 3
ok wait_line "$T/text.out" 'BackOff +crashloop'
# a message with a terminal escape: printed escaped
event prod payments-api-7d9c8f4b6-4kx2m 2024-11-03T14:43:00Z u-esc \
	Unhealthy 'probe \u001b[31mfailed\u001b[0m' >"$T/esc.json"
run_rt ingest --db "$DB" "$T/esc.json"
ok wait_line "$T/text.out" 'probe \\x1b\[31mfailed\\x1b\[0m'
later "$DB"
ok wait_line "$T/text.out" '^Status: +closed, '
ok wait_line "$T/text.out" '^Closed: +2024-11-0'
stop_watch INT
is "$WRC" 0 "SIGINT ends the watch with exit 0"
is "$(cat "$T/text.err")" "" "nothing on stderr"
is "$(grep -c 'BackOff  crashloop' "$T/text.out")" 1 "a new entry is printed once"
grep '^Status:' "$T/text.out" >"$T/status"
like "$(head -n 1 "$T/status")" '^Status: +open, severity error, 1 events' "the status at the start"
like "$(tail -n 1 "$T/status")" '^Status: +closed, severity critical, 3 events' "and at the end"
is "$(uniq -d "$T/status")" "" "a status is printed when it changed, not at every commit"
is "$(tr -d -c '\033' <"$T/text.out" | wc -c)" 0 "no raw escape reaches the terminal"

# ---- -o json: JSON Lines ----------------------------------------------------
DB=$T/j.db
ingest_line "$DB" 1
start_watch json --db "$DB" -o json 1
ok wait_line "$T/json.out" '^\{"change":"listed","timeline":'
ingest_line "$DB" 2        # the first event again, count 2
ok wait_line "$T/json.out" '^\{"change":"changed","timeline":\{.*"count":2,'
ingest_line "$DB" 3
ok wait_line "$T/json.out" '^\{"change":"added","timeline":\{.*"reason":"BackOff"'
later "$DB"
ok wait_line "$T/json.out" '^\{"change":"changed","incident":\{.*"status":"closed"'
stop_watch INT
is "$WRC" 0 "SIGINT ends the json watch with exit 0"
is "$(cat "$T/json.err")" "" "nothing on stderr (a sanitizer's report would be)"
ok jq -e . "$T/json.out"
is "$(jq -c '[.change, (.incident // {}).status, (.timeline // {}).reason, (.timeline // {}).count]' "$T/json.out" | tr '\n' ' ')" \
	'["listed","open",null,null] ["listed",null,"Failed",1] ["changed",null,"Failed",2] ["changed","open",null,null] ["added",null,"BackOff",1] ["changed","closed",null,null] ' \
	"each change once, in the order committed"
run_rt show --db "$DB" -o json 1
jq -c '.incident' "$OUT" >"$T/inc1"
jq -c 'select(.incident.status == "closed") | .incident' "$T/json.out" >"$T/watched1"
is "$(cat "$T/watched1")" "$(cat "$T/inc1")" "a change's incident is the one show -o json prints"

# ---- two databases read as one: merged ids ----------------------------------
D1=$T/m1.db D2=$T/m2.db
ingest_line "$D1" 1
cp "$D1" "$D2"
run_rt show --db "$D1" --db "$D2" --watch 1
is "$RC" 1 "incident 1 is no merged id"
like "$(cat "$ERR")" "incident 1 of the first --db is 101" "and says which is"
start_watch merged --db "$D1" --db "$D2" 101
ok wait_line "$T/merged.out" '^Incident 101: prod/payments-api'
ingest_line "$D2" 3
ok wait_line "$T/merged.out" 'BackOff +crashloop'
later "$D1"
ok wait_line "$T/merged.out" '^Status: +closed, '
stop_watch INT
is "$WRC" 0 "SIGINT ends the merged watch with exit 0"
is "$(cat "$T/merged.err")" "" "nothing on stderr"

# ---- usage ------------------------------------------------------------------
run_rt show --db "$DB" --watch -o html 1
is "$RC" 2 "--watch -o html is a usage error"
like "$(cat "$ERR")" "^revtrail show: --watch prints text or json" "and says so"
done_testing
