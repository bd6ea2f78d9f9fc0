#!/bin/sh
# An incident without a revision says which input would give it: show
# prints (and -o json carries) the two commands, quoted for the shell; the
# first, run as printed, gives the incident its revision. ingest's summary
# says it once per run.
. "$(dirname "$0")/lib.sh"
D=$DATA/answers
DB="$T/it's.db"

run_rt ingest --db "$DB" "$D/crash-soon.ndjson"
is "$RC" 0 "ingest events alone"
is "$(grep -c 'no release history' "$ERR")" 1 "ingest says it once"
like "$(cat "$ERR")" "helm history checkout-api -n shop -o json \| revtrail ingest --db '.*it'\\\\''s.db' --release shop/checkout-api" \
	"with the command, the database path quoted"
run_rt show --db "$DB" 1
like "$(cat "$OUT")" '^History: ' "show: a History line"
like "$(cat "$OUT")" "kubectl get secret -n shop -l owner=helm,name=checkout-api -o json \| revtrail ingest --db " \
	"show: the release Secrets command"
run_rt show --db "$DB" -o json 1
is "$(jq '.history_commands | length' "$OUT")" 2 "show -o json: history_commands"
cmd=$(jq -r '.history_commands[0]' "$OUT")
# paste it: helm is the fixture's history, revtrail the binary under test
helm() { cat "$D/history.json"; }
revtrail() { "$REVTRAIL" "$@"; }
eval "$cmd" 2>"$T/paste.err"
is "$?" 0 "the pasted command runs"
run_rt show --db "$DB" 1
like "$(head -n 1 "$OUT")" 'revision 4 \(deployed' "and the incident has its revision"
unlike "$(cat "$OUT")" '^History: ' "no History line once it has one"
run_rt ingest --db "$DB" "$D/crash-soon.ndjson"
unlike "$(cat "$ERR")" 'no release history' "ingest says nothing when every incident has one"
done_testing
