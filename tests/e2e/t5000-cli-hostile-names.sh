#!/bin/sh
# Names from the cluster are hostile input: a pod named with a quote, a
# command substitution and terminal control sequences reaches the remedy's
# shell command as one quoted word.
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
WANT="kubectl delete pod -n prod 'payments-api-7d9c8f4b6-4kx2m'\\''$CTL"'$(id)'"' payments-api-7d9c8f4b6-9jvpd"
case $REM in
*"$WANT"*) _result 0 "the hostile pod name is one quoted shell word" ;;
*) _result 1 "the hostile pod name is one quoted shell word"; diag "got: $REM" ;;
esac
like "$REM" "kubectl get configmap payments-api-config -n prod -o yaml" "plain names stay unquoted"
done_testing
