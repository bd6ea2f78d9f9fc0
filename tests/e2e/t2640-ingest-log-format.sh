#!/bin/sh
# ingest --log-format: every stderr line (summary, warnings, -v lines, a
# file it cannot open) carries time, level and component, as text or as
# one JSON object per line; text from the input stays escaped. Without the
# option ingest keeps its plain lines (t5400).
. "$(dirname "$0")/lib.sh"
cat >"$T/history.json" <<'JSON'
[{"revision":1,"updated":"2024-11-03T14:00:00Z","status":"superseded","chart":"web-1.0","app_version":"1","description":"Install complete"}]
JSON
# A tagged line without a time, from a file whose name holds an escape.
name=$(printf 'no\033[2Jtime.log')
printf 'plain error line: connection refused\n' >"$T/$name"

run_rt ingest --log-format yaml --db "$T/x.db" "$T/history.json"
is "$RC" 2 "--log-format yaml is a usage error"

run_rt ingest --log-format json -v --db "$T/j.db" "$T/history.json" "$T/$name" "$T/missing.log"
is "$RC" 1 "a missing input: exit 1, the others read"
ok jq -e . "$ERR"
is "$(jq -c 'select((.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$")) and .level and .component and .msg) | 1' "$ERR" | wc -l | tr -d ' ')" \
	"$(wc -l <"$ERR" | tr -d ' ')" "every line: time, level, component, msg"
like "$(jq -r 'select(.level == "error") | .msg' "$ERR")" 'missing\.log: No such file' "the missing file, as an error"
like "$(jq -r 'select(.level == "warn") | .msg' "$ERR")" '^1 Helm history record names no release' "the summary's warnings, as warnings"
like "$(jq -r 'select(.level == "info" and (.msg | test("^[0-9]+ records"))) | .component' "$ERR")" '^ingest$' "the summary, as info"
like "$(jq -r 'select(.msg | test("^warning: .*without a time")) | .msg' "$ERR")" 'no\\x1b\[2Jtime\.log' "-v lines, the file name escaped"
unlike "$(cat "$ERR")" "$(printf '\033')" "no raw escape anywhere"

run_rt ingest --log-format text --db "$T/t.db" "$T/history.json"
is "$RC" 0 "text: exit 0"
is "$(grep -cvE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (ERROR|WARN|INFO|DEBUG) [a-z]+: ' "$ERR")" 0 \
	"text: every line starts with time, level and component"
like "$(cat "$ERR")" ' WARN ingest: 1 Helm history record names no release' "text: the warning"
done_testing
