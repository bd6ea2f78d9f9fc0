#!/bin/sh
# Options that cannot hurt: durations carry units, NaN/inf/overflow/negative
# values are usage errors (exit 2), a gap change needs --regap and says so,
# --since takes a date, --release NS/NAME filters incidents.
. "$(dirname "$0")/lib.sh"
DB=$T/o.db
EX=$(cd "$(dirname "$0")/../../examples/field-reports" && pwd)

run_rt ingest --db "$DB" "$EX"/*/*
is "$RC" 0 "ingest the field reports"
run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM incidents"
N0=$(jq -r '.[0].n' "$OUT")

for gap in 15 nan inf -5m +5m 1e3s 0x10s 15x 1.s "" 5m3 1ms 0.5s 999999999999999d 31d; do
	run_rt ingest --db "$DB" --gap "$gap" /dev/null
	is "$RC" 2 "--gap '$gap' is a usage error"
done
like "$(cat "$ERR")" "revtrail ingest: --gap 31d is out of range" "the range is named"
run_rt ingest --db "$DB" --gap 15 /dev/null
like "$(cat "$ERR")" "^revtrail ingest: --gap wants a duration with a unit" "a bare number says a unit is needed"

for size in nan -1 0 17592186044417m 18446744073709551617 2G 1025M 1.5M 1Mx ""; do
	run_rt classify --max-record "$size" /dev/null
	is "$RC" 2 "--max-record '$size' is a usage error"
done
run_rt classify --max-record 1024M /dev/null
is "$RC" 0 "--max-record 1024M (1 GiB) is the largest"

for since in nan inf -2h 2 1e9h 2024-13-01 2024-11-3 "2024-11-03 junk"; do
	run_rt incidents --db "$DB" --since "$since"
	is "$RC" 2 "--since '$since' is a usage error"
done
run_rt incidents --db "$DB" --since 2024-11-03 -o json
is "$RC" 0 "--since takes a date"
is "$(jq -r 'map(.release) | join(",")' "$OUT")" "payments-api" "--since 2024-11-03: the incident of that day"
run_rt incidents --db "$DB" --since 2024-09-05T12:05:00Z -o json
is "$(jq -r 'length' "$OUT")" 2 "--since takes a time"
run_rt incidents --db "$DB" --since 1h -o json
is "$(jq -r 'length' "$OUT")" 0 "--since takes a duration"

run_rt incidents --db "$DB" --release prod/payments-api -o json
is "$(jq -r 'map(.namespace + "/" + .release) | join(",")' "$OUT")" "prod/payments-api" "--release NS/NAME"
run_rt incidents --db "$DB" --release payments-api -o json
is "$(jq -r 'length' "$OUT")" 1 "--release NAME: any namespace"
run_rt incidents --db "$DB" --release staging/payments-api -o json
is "$(jq -r 'length' "$OUT")" 0 "--release NS/NAME: another namespace finds nothing"
run_rt incidents --db "$DB" -n staging --release prod/payments-api
is "$RC" 2 "-n and --release NS/NAME that disagree"
run_rt incidents --db "$DB" --release prod/
is "$RC" 2 "--release NS/ is malformed"

# the gap of an existing database changes only with --regap
run_rt ingest --db "$DB" --gap 1m /dev/null
is "$RC" 2 "a new gap without --regap is refused"
like "$(cat "$ERR")" "add --regap" "the refusal says how"
run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM incidents"
is "$(jq -r '.[0].n' "$OUT")" "$N0" "nothing was recomputed"
run_rt ingest --db "$DB" --gap 15m /dev/null
is "$RC" 0 "the same gap again is fine"
run_rt ingest --db "$DB" --gap 30s --regap /dev/null
is "$RC" 0 "--regap recomputes"
like "$(cat "$ERR")" "^ingest: --regap: every incident recomputed for the gap 30s \(was 15m\)" "the summary reports the recomputation"
run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM incidents"
ok test "$(jq -r '.[0].n' "$OUT")" -gt "$N0"
run_rt ingest --db "$DB" /dev/null
is "$RC" 0 "later runs keep the new gap"
unlike "$(cat "$ERR")" "regap" "no recomputation without a change"

# consume shares the parsers (no broker needed: options fail first)
for opt in "--gap 15" "--gap nan" "--batch-ms nan" "--batch-ms -1" "--batch-ms 99999999999999999999" \
	"--status-interval inf" "--status-interval -5" "--batch-messages 0" "--max-record 17592186044417m" \
	"--max-registry 512k" "--max-registry 2G"; do
	# shellcheck disable=SC2086
	run_rt consume -b 127.0.0.1:1 -t x -G g --db "$T/c.db" $opt
	is "$RC" 2 "consume $opt is a usage error"
done
done_testing
