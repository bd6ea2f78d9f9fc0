#!/bin/sh
# Readable at 3am in 80 columns: incidents fits a terminal (-o wide has
# every column, tags as words; a pipe gets whole values, t5150), colour only on a terminal and never with
# NO_COLOR or --color never, --no-headers; show has times of day and offsets
# from the first event, names the opening revision, leaves no placeholder
# and wraps its remedy; errors start with "revtrail CMD:"; ingest refuses
# the database as input and says when it reads a terminal.
. "$(dirname "$0")/lib.sh"
DB=$T/o.db
EX=$(cd "$(dirname "$0")/../../examples/field-reports" && pwd)
unset COLUMNS NO_COLOR
ESC=$(printf '\033')

# display columns: the ellipsis is one (awk may count bytes)
longest() { sed 's/…/./g' "$1" | awk '{ n = length($0); if (n > m) m = n } END { print m + 0 }'; }

run_rt ingest --db "$DB" "$EX"/*/*
is "$RC" 0 "ingest the field reports"

run_rt incidents --db "$DB"
is "$RC" 0 "incidents"
like "$(head -n 1 "$OUT")" '^ID +RELEASE +REV +STATUS +SEVERITY +SEEN +DIAGNOSIS$' "default columns"
like "$(cat "$OUT")" 'prod/payments-api +48 +open +critical +[0-9]+[smhdy] +hook_configmap_race' "a row: NS/NAME, revision, status, severity, age, diagnosis"
unlike "$(cat "$OUT")" "$ESC" "no colour into a pipe"

run_rt incidents --db "$DB" -o wide
like "$(head -n 1 "$OUT")" '^ID +NAMESPACE +RELEASE +REVISION +STATUS +SEVERITY +OPENED +LAST SEEN +EVENTS +TAGS +DIAGNOSIS$' "-o wide: every column"
like "$(cat "$OUT")" 'configmap_not_found, crashloop, db_auth_failed' "tags as plain words"
unlike "$(cat "$OUT")" '\["' "no JSON arrays in a table"
run_rt incidents --db "$DB" --no-headers -n prod
is "$(cat "$OUT" | wc -l | tr -d ' ')" 1 "--no-headers: rows only"
like "$(cat "$OUT")" '^3 +payments-api +48 ' "-n: the namespace goes without saying"
run_rt incidents --db "$DB" -A -o json
is "$(jq -r 'length' "$OUT")" 3 "-A: all namespaces"
run_rt incidents --db "$DB" -A -n prod
is "$RC" 2 "-A and -n exclude each other"

run_rt incidents --db "$DB" --color always
like "$(cat "$OUT")" "${ESC}\\[1;31mcritical${ESC}\\[0m" "--color always colours severity"
like "$(cat "$OUT")" "${ESC}\\[1;33mopen" "and status"
run_rt incidents --db "$DB" --color sometimes
is "$RC" 2 "--color wants auto, always or never"
if command -v script >/dev/null 2>&1; then
	# a terminal that takes colour, whatever TERM the suite runs under
	tty_run() { TERM=xterm script -qec "$*" /dev/null </dev/null >"$OUT" 2>&1; }
	tty_run "$REVTRAIL" incidents --db "$DB"
	like "$(cat "$OUT")" "${ESC}\\[1;31mcritical" "a terminal gets colour"
	# script's terminal tells no size: 80 columns, or COLUMNS
	tty_run "$REVTRAIL" incidents --db "$DB" --color never
	sed -i 's/\r$//' "$OUT"
	ok test "$(longest "$OUT")" -le 80
	COLUMNS=60 tty_run "$REVTRAIL" incidents --db "$DB" --color never
	sed -i 's/\r$//' "$OUT"
	ok test "$(longest "$OUT")" -le 60
	like "$(cat "$OUT")" '…' "cut cells end in an ellipsis"
	NO_COLOR=1 tty_run "$REVTRAIL" incidents --db "$DB"
	unlike "$(cat "$OUT")" "$ESC" "NO_COLOR turns it off"
	tty_run "$REVTRAIL" incidents --db "$DB" --color never
	unlike "$(cat "$OUT")" "$ESC" "--color never turns it off"
	tty_run "$REVTRAIL" ingest --db "$T/tty.db"
	like "$(cat "$OUT")" "^revtrail ingest: reading stdin" "ingest at a terminal says it reads stdin"
	run_rt ingest --db "$T/tty.db" </dev/null
	unlike "$(cat "$ERR")" "reading stdin" "not when stdin is not a terminal"
else
	echo "ok $((_n + 1)) # SKIP no script(1) for a terminal"; _n=$((_n + 1))
fi

run_rt show --db "$DB" 2
is "$RC" 0 "show"
like "$(cat "$OUT")" "Timeline \\(UTC; offsets from the first event, 2024-02-08T10:09:03" "timeline header names its base"
like "$(cat "$OUT")" "^  2023-10-27$" "a date line"
like "$(cat "$OUT")" "^  14:30:00  -103d19h  opening revision 2 superseded$" "the old opening revision: its own offset, named, nothing dangling"
like "$(cat "$OUT")" "^  10:09:03 +\\+0s  Pod/helm-install-rke2-ingress-nginx-k8v2x$" "the first event at +0s"
like "$(cat "$OUT")" "^ {22}helm_name_in_use helm_upgrade_failed$" "its tags as words, wrapped under it"
like "$(cat "$OUT")" "^ {24}Error: INSTALLATION FAILED: cannot re-use a name that is$" "the message under the event"
unlike "$(cat "$OUT")" "\\+103d" "no +103d19h on every row"
unlike "$(cat "$OUT")" "superseded: $" "no empty description"
unlike "$(cat "$OUT")" "<N>|<rev>|<ns>|<release>|<pod>" "no placeholder left"
like "$(cat "$OUT")" "sh\\.helm\\.release\\.v1\\.rke2-ingress-nginx\\.v2" "<N> is the newest revision"
# lines over 80 columns are only unbreakable: commands, event lines, words
over=$(awk 'length($0) > 80 && !/`/ && !/^                        [^ ]+$/' "$OUT")
is "$over" "" "show wraps its text at 80 columns"
like "$(cat "$OUT")" "^  2\\. Inspect what Helm still knows:$" "numbered remedy steps"
like "$(cat "$OUT")" "^     \`helm history rke2-ingress-nginx -n kube-system\` and$" "continued under their text"
COLUMNS=120 run_rt show --db "$DB" 2
like "$(cat "$OUT")" "^  2\\. Inspect what Helm still knows: \`helm history rke2-ingress-nginx -n kube-system\` and$" "wrapped to the width"
like "$(cat "$OUT")" "^  10:09:40 +\\+36s  Pod/helm-install-rke2-ingress-nginx-k8v2x  BackOff  crashloop x11$" "an event on one line when it fits"
run_rt show --db "$DB" 3
like "$(cat "$OUT")" "Opened: +2024-11-03T14:41:12.000000Z \\(4s after revision 48\\)" "opened: after its revision"
like "$(cat "$OUT")" "^  14:41:07 +-4s  opening revision 48 failed: Upgrade" "the opening revision before the first event"

run_rt query --db "$DB" --no-headers "SELECT id FROM incidents ORDER BY id"
is "$(cat "$OUT")" "1
2
3" "query --no-headers"
run_rt query --db "$DB" "SELECT id AS incident_id, tags FROM incidents WHERE id = 3"
like "$(head -n 1 "$OUT")" "^incident_id +tags$" "query headers are the SQL column names"
like "$(cat "$OUT")" "configmap_not_found, crashloop, db_auth_failed" "tags as words in a query table"

# errors: one prefix
run_rt ingest --db "$DB" "$T/missing.log"
like "$(cat "$ERR")" "^revtrail ingest: $T/missing.log: No such file" "input errors: revtrail ingest:"
run_rt classify --rules "$T/missing.rules" /dev/null
like "$(cat "$ERR")" "^revtrail classify: " "rule errors: revtrail classify:"
run_rt incidents --db "$T/missing.db"
like "$(cat "$ERR")" "^revtrail incidents: " "database errors: revtrail incidents:"
run_rt ingest --db "$DB" "$DB"
is "$RC" 2 "ingest refuses the database as input"
like "$(cat "$ERR")" "^revtrail ingest: .*o\\.db is the database, not an input" "and says why"
done_testing
