#!/bin/sh
# A CSV cell that starts with =, +, -, @, a tab or a CR is a formula to a
# spreadsheet (=HYPERLINK(...) in a pod name or message): -o csv guards
# text cells with a leading single quote (OWASP's advice), numbers stay
# numbers, and -o csv-raw writes every cell exactly.
. "$(dirname "$0")/lib.sh"
DB=$T/c.db
SRC=$(cd "$(dirname "$0")/../../examples/field-reports/hook-configmap-race" && pwd)
mkdir "$T/in"
cp "$SRC"/* "$T/in/"
sed -i 's/"name":"payments-api-7d9c8f4b6-4kx2m"/"name":"=HYPERLINK(\\"http:\/\/evil.example\\")"/' "$T/in/events.ndjson"
run_rt ingest --db "$DB" "$T/in"/*
is "$RC" 0 "ingest"

Q="SELECT '=1+2' AS eq, '+1+2' AS plus, '-2+3' AS minus, '@SUM(A1)' AS at,
 char(9) || '=1' AS tab, char(13) || '=1' AS cr, -3 AS n, 2.5 AS r,
 '-3' AS t, 'a=b' AS mid, '' AS empty"
run_rt query --db "$DB" -o csv --no-headers "$Q"
is "$RC" 0 "query -o csv"
is "$(cat "$OUT")" "'=1+2,'+1+2,'-2+3,'@SUM(A1),'	=1,\"'$(printf '\r')=1\",-3,2.5,-3,a=b," \
	"csv: formula cells guarded, numbers and other text as they are"
run_rt query --db "$DB" -o csv-raw --no-headers "$Q"
is "$RC" 0 "query -o csv-raw"
is "$(cat "$OUT")" "=1+2,+1+2,-2+3,@SUM(A1),	=1,\"$(printf '\r')=1\",-3,2.5,-3,a=b," \
	"csv-raw: every cell exact"

run_rt query --db "$DB" -o csv --no-headers \
	"SELECT object_name FROM incident_objects WHERE object_name LIKE '=%'"
is "$(cat "$OUT")" "\"'=HYPERLINK(\"\"http://evil.example\"\")\"" "a pod name from the cluster, guarded"
run_rt incidents --db "$DB" -o csv
is "$RC" 0 "incidents -o csv"
like "$(cat "$OUT")" "'=HYPERLINK" "incidents -o csv: guarded"
unlike "$(cat "$OUT")" "(^|,)\"?=HYPERLINK" "incidents -o csv: no cell starts with ="
run_rt incidents --db "$DB" -o csv-raw
like "$(cat "$OUT")" ",\"=HYPERLINK" "incidents -o csv-raw: exact"
done_testing
