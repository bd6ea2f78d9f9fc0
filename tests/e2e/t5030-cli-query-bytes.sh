#!/bin/sh
# What SQL can put in a cell reaches every format whole and valid: bytes
# that are not UTF-8 become U+FFFD in -o json (so any JSON parser reads
# it), a NUL inside a value no longer cuts it (table: \x00, csv: the byte
# itself, in a quoted cell; json: \u0000).
. "$(dirname "$0")/lib.sh"
DB=$T/q.db
run_rt ingest --db "$DB" "$DATA"/../../examples/field-reports/hook-configmap-race/*
is "$RC" 0 "ingest"

run_rt query --db "$DB" -o json \
	"SELECT CAST(x'61ff62c3' AS TEXT) AS bad, 'caf' || char(233) AS good, 'a' || char(0) || 'b' AS nul"
is "$RC" 0 "query -o json"
ok python3 -c '
import json, sys
rows = json.load(open(sys.argv[1], encoding="utf-8"))
assert rows == [{"bad": "a\ufffdb\ufffd", "good": "caf\u00e9", "nul": "a\u0000b"}], rows
' "$OUT"

run_rt query --db "$DB" "SELECT 'a' || char(0) || 'b' AS x, 'tail' AS y"
is "$(cat "$OUT")" 'x        y
a\x00b   tail' "table: a NUL shows as \\x00, the rest of the cell stays"
run_rt query --db "$DB" -o csv --no-headers "SELECT 'a' || char(0) || 'b' AS x, 'tail' AS y"
is "$(od -An -c "$OUT" | tr -s ' ')" ' " a \0 b " , t a i l \n' "csv: the NUL carried, its cell quoted"
run_rt query --db "$DB" -o csv-raw --no-headers "SELECT 'a' || char(0) || 'b' AS x"
is "$(od -An -c "$OUT" | tr -s ' ')" ' " a \0 b " \n' "csv-raw: the same"
done_testing
