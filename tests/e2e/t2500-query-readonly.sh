#!/bin/sh
# query opens the database read-only: writes are refused with a clear error
# and change nothing; a missing database is not created; -o json is one
# array of objects keyed by column name; bad usage exits 2.
. "$(dirname "$0")/lib.sh"
DB=$T/q.db

run_rt ingest --db "$DB" "$DATA/scenarios/superseded-release-install"/*
is "$RC" 0 "ingest"

for sql in "DELETE FROM incidents" "DROP TABLE events" \
	"INSERT INTO revisions(namespace, release, revision) VALUES('a','b',1)" \
	"UPDATE incidents SET status = 'closed'" "SELECT 1; DELETE FROM events" \
	"PRAGMA user_version = 16" "CREATE TABLE x(y)"; do
	run_rt query --db "$DB" "$sql"
	is "$RC" 2 "refused: $sql"
	like "$(cat "$ERR")" 'readonly|read-only' "clear error for: $sql"
done
run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM incidents"
is "$(jq -r '.[0].n' "$OUT")" 1 "nothing was deleted"
run_rt query --db "$DB" -o json "PRAGMA user_version"
is "$(jq -r ".[0].user_version" "$OUT")" 16 "schema version 16"

run_rt query --db "$T/missing.db" "SELECT 1"
is "$RC" 1 "a missing database is an error"
ok test ! -e "$T/missing.db"

REVTRAIL_DB=$DB run_rt query -o json "SELECT id, release, revision, tags, closed_at FROM incidents"
is "$RC" 0 "\$REVTRAIL_DB names the database"
is "$(jq -r 'type' "$OUT")" array "one JSON array"
is "$(jq -r '.[0] | keys | join(",")' "$OUT")" "closed_at,id,release,revision,tags" "objects keyed by column name"
is "$(jq -r '.[0].revision | type' "$OUT")" number "integers are numbers"
is "$(jq -r '.[0].tags | fromjson | type' "$OUT")" array "JSON columns hold valid JSON"
run_rt query --db "$DB" -o json "SELECT * FROM incidents WHERE 0"
is "$(cat "$OUT")" "[]" "no rows: an empty array"
run_rt query --db "$DB" -o csv "SELECT release, 'a,b' AS x, NULL AS n FROM incidents"
is "$(cat "$OUT")" "release,x,n
rke2-ingress-nginx,\"a,b\"," "csv quoting"
run_rt query --db "$DB" "SELECT release, revision FROM incidents"
like "$(head -n 1 "$OUT")" '^release +revision$' "table header: the SQL column names"
run_rt query --db "$DB" "SELECT value AS tag FROM incidents, json_each(incidents.tags) ORDER BY 1"
like "$(cat "$OUT")" 'helm_name_in_use' "json_each over tags works"
run_rt query --db "$DB" "SELECT strftime('%Y', opened_at) AS y FROM incidents"
like "$(cat "$OUT")" '2024' "SQLite date functions read the times"
run_rt query --db "$DB" -o json "SELECT entry, revision FROM timeline ORDER BY ts DESC LIMIT 1"
is "$(jq -r '.[0].entry' "$OUT")" event "timeline view"

run_rt query --db "$DB" "SELEC nonsense"
is "$RC" 2 "bad SQL exits 2"
run_rt query --db "$DB"
is "$RC" 2 "missing SQL exits 2"
run_rt query --db "$DB" -o yaml "SELECT 1"
is "$RC" 2 "bad -o exits 2"
run_rt incidents --db "$DB" --since yesterday
is "$RC" 2 "bad --since exits 2"
run_rt incidents --db "$DB" --bogus
is "$RC" 2 "unknown option exits 2"
run_rt ingest --db "$DB" --gap 0s /dev/null
is "$RC" 2 "bad --gap exits 2"
run_rt ingest --db "$DB" --release prod/ /dev/null
is "$RC" 2 "bad --release exits 2"
like "$(cat "$ERR")" "--release wants NAME or NAMESPACE/NAME, got 'prod/'" "and says what it wants"
run_rt ingest --db "$T/nodir/x.db" /dev/null
is "$RC" 1 "unwritable database path exits 1"
like "$(cat "$ERR")" 'x.db' "and names it"
run_rt ingest --db "$T/ok.db" "$T/no-such-file"
is "$RC" 1 "a missing input file exits 1"
done_testing
