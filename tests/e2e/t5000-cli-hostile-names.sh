#!/bin/sh
# Names from the cluster are hostile input: a pod named with a quote, a
# command substitution and terminal control sequences reaches the remedy's
# shell command as one quoted word, and the terminal (show, incidents,
# query tables) only as escapes (\x1b, \r); JSON and CSV stay exact.
. "$(dirname "$0")/lib.sh"
DB=$T/h.db
SRC=$(cd "$(dirname "$0")/../../examples/field-reports/hook-configmap-race" && pwd)
mkdir "$T/in"
cp "$SRC"/* "$T/in/"
# JSON escapes: ESC ] 0 ; ... BEL sets a terminal's title, CR rewrites a line
sed -i "s/7d9c8f4b6-4kx2m/7d9c8f4b6-4kx2m'\\\\u001b]0;owned\\\\u0007\\\\r\$(id)/g" "$T/in/events.ndjson"

run_rt ingest --db "$DB" "$T/in"/*
is "$RC" 0 "ingest"
run_rt query --db "$DB" -o json "SELECT remedy FROM incidents"
REM=$(jq -r '.[0].remedy' "$OUT")
CTL=$(printf '\033]0;owned\007\r')
# in $'...' with C escapes: control characters would reach the terminal
# raw, or a newline break the command's line, in plain quotes
WANT="kubectl delete pod -n prod \$'payments-api-7d9c8f4b6-4kx2m\\'\\x1b]0;owned\\x07\\r\$(id)' payments-api-7d9c8f4b6-9jvpd"
case $REM in
*"$WANT"*) _result 0 "the hostile pod name is one quoted shell word" ;;
*) _result 1 "the hostile pod name is one quoted shell word"; diag "got: $REM" ;;
esac
like "$REM" "kubectl get configmap payments-api-config -n prod -o yaml" "plain names stay unquoted"

# no raw control byte reaches a terminal (tab and newline are layout)
has_ctl() { LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$1"; }
run_rt show --db "$DB" 1
is "$RC" 0 "show"
if has_ctl "$OUT"; then _result 1 "show: no control characters"; else _result 0 "show: no control characters"; fi
like "$(cat "$OUT")" "4kx2m'\\\\x1b\]0;owned\\\\x07\\\\r\\\$\(id\)" "show: ESC, BEL and CR escaped"
run_rt incidents --db "$DB" -o wide
if has_ctl "$OUT"; then _result 1 "incidents: no control characters"; else _result 0 "incidents: no control characters"; fi
run_rt query --db "$DB" "SELECT object_name, remedy FROM incident_objects, incidents"
if has_ctl "$OUT"; then _result 1 "query table: no control characters"; else _result 0 "query table: no control characters"; fi
like "$(cat "$OUT")" '4kx2m.\\x1b' "query table: escaped"
run_rt query --db "$DB" "SELECT 'a' || char(10) || 'b' AS x"
is "$(cat "$OUT")" 'x
a\nb' "a newline in a cell is escaped: one line per row"
run_rt query --db "$DB" -o json "SELECT object_name FROM incident_objects WHERE object_name LIKE '%owned%'"
is "$(jq -r '.[0].object_name' "$OUT")" "payments-api-7d9c8f4b6-4kx2m'$CTL\$(id)" "JSON is exact"
run_rt query --db "$DB" -o csv "SELECT object_name FROM incident_objects WHERE object_name LIKE '%owned%'"
ok grep -q "$(printf '\033')" "$OUT"
done_testing
