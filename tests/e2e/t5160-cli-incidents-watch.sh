#!/bin/sh
# incidents --watch: the table, then a line per incident opened, changed or
# closed as another process commits, each within 2 s of its commit, until
# SIGINT or SIGTERM (exit 0); -o json is one object a line with "change".
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race
DB=$T/w.db

# A Warning event of pod NAME at TIME (a crashloop of release orders).
event() {   # event NAME TIME UID
	printf '{"type":"ADDED","object":{"kind":"Event","apiVersion":"v1","count":1,"firstTimestamp":"%s","lastTimestamp":"%s","involvedObject":{"kind":"Pod","name":"%s","namespace":"shop"},"metadata":{"name":"%s.x","namespace":"shop","uid":"%s"},"reason":"BackOff","message":"Back-off restarting failed container","type":"Warning"}}\n' "$2" "$2" "$1" "$1" "$3"
}

# start_watch NAME ARGS...: incidents --watch in the background
start_watch() {
	_name=$1
	shift
	"$REVTRAIL" incidents --db "$DB" --watch "$@" >"$T/$_name.out" 2>"$T/$_name.err" &
	WPID=$!
}

stop_watch() {   # stop_watch SIG: sends it, the exit code into WRC
	kill -"$1" "$WPID"
	WRC=0
	wait "$WPID" || WRC=$?
}

head -n 1 "$SC/events.ndjson" >"$T/first.json"
run_rt ingest --db "$DB" "$T/first.json"
is "$RC" 0 "a database with one incident"

# ---- the table, then one line per change -----------------------------------
start_watch table
ok wait_line "$T/table.out" '^ +1 +prod/payments-api +\? +open '
event orders-6d9c8f4b6-abcde 2024-11-03T14:41:15Z u-1 >"$T/open.json"
run_rt ingest --db "$DB" "$T/open.json"
ok wait_line "$T/table.out" '^opened +2 +shop/orders +\? +open +critical '
# the second event of payments-api extends incident 1
sed -n 3p "$SC/events.ndjson" >"$T/extend.json"
run_rt ingest --db "$DB" "$T/extend.json"
ok wait_line "$T/table.out" '^changed +1 +prod/payments-api '
stop_watch INT
is "$WRC" 0 "SIGINT ends the watch with exit 0"
is "$(grep -c . "$T/table.out")" 4 "the header, one listed row, two changes: no line twice"
is "$(cat "$T/table.err")" "" "nothing on stderr"

# ---- -o json: JSON Lines ----------------------------------------------------
start_watch json -o json
ok wait_line "$T/json.out" '"change":"listed","id":2,'
event orders-6d9c8f4b6-abcde 2024-11-05T14:41:15Z u-2 >"$T/later.json"
run_rt ingest --db "$DB" "$T/later.json"
# two days on, the incidents of the 3rd close and a new one opens
ok wait_line "$T/json.out" '"change":"opened","id":3,'
ok wait_line "$T/json.out" '"change":"closed","id":1,'
ok wait_line "$T/json.out" '"change":"closed","id":2,'
stop_watch TERM
is "$WRC" 0 "SIGTERM ends the watch with exit 0"
is "$(cat "$T/json.err")" "" "nothing on stderr (a sanitizer's report would be)"
ok jq -e . "$T/json.out"
is "$(jq -c '[.change, .id, .status]' "$T/json.out" | sort | tr '\n' ' ')" \
	'["closed",1,"closed"] ["closed",2,"closed"] ["listed",1,"open"] ["listed",2,"open"] ["opened",3,"open"] ' \
	"each change once, with the incident's status"
run_rt incidents --db "$DB" -o json
jq -c '.[] | select(.id == 1)' "$OUT" >"$T/row1"
jq -c 'select(.change == "closed" and .id == 1) | del(.change)' "$T/json.out" >"$T/watched1"
is "$(cat "$T/watched1")" "$(cat "$T/row1")" "a change's object is the row incidents -o json prints, plus change"
is "$(jq -r '.tags | type' "$T/watched1")" array "tags are JSON, as in incidents -o json"

# ---- usage ------------------------------------------------------------------
cp "$DB" "$T/w2.db"
run_rt incidents --db "$DB" --db "$T/w2.db" --watch
is "$RC" 2 "--watch of several databases is a usage error"
like "$(cat "$ERR")" "^revtrail incidents: --watch reads one database" "and says so"
done_testing
