#!/bin/sh
# query runs anyone's SQL on data from anyone's logs: every read is
# bounded. Endless or huge computations stop at --timeout (CPU time),
# memory at --max-memory, one value at an eighth of it, and whatever is
# not a read of this database is refused before it runs: ATTACH, a
# PRAGMA that sets, fts3_tokenizer (C pointers in and out). Refusals exit
# 2, a limit reached exits 1, each with a message that names the cause.
. "$(dirname "$0")/lib.sh"
DB=$T/q.db

run_rt ingest --db "$DB" "$DATA/scenarios/superseded-release-install"/*
is "$RC" 0 "ingest"

stops() {   # stops EXIT REGEX NAME -- query args
	want=$1 re=$2 name=$3
	shift 4
	run_rt query --db "$DB" "$@"
	is "$RC" "$want" "$name: exit $want"
	like "$(cat "$ERR")" "$re" "$name: says why"
}

stops 1 'stopped after 0.5 s of CPU time \(--timeout\)' "endless recursive CTE" -- \
	--timeout 500ms "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
stops 1 'stopped after 0.5 s of CPU time' "triple cross join" -- \
	--timeout 500ms "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 100000) SELECT count(*) FROM n a, n b, n c"
stops 1 'stopped: a value would be longer than 33554432 bytes' "randomblob(1e9)" -- \
	"SELECT length(randomblob(1e9))"
stops 1 'stopped: a value would be longer' "printf of a 1e9 %c precision" -- \
	"SELECT length(printf('%.*c', 999999999, 'x'))"
stops 1 'stopped: a value would be longer' "format with a literal precision" -- \
	"SELECT length(format('%.999999999c', 'x'))"
stops 1 'stopped: needs more than 8 MiB of memory \(--max-memory\)' "a row over --max-memory" -- \
	--max-memory 8M "SELECT $(for i in 1 2 3 4 5 6 7 8 9 10; do printf 'randomblob(900000) AS c%s, ' "$i"; done) 1"
stops 2 'fts3_tokenizer\(\) is not allowed: query is read-only' "fts3_tokenizer, one argument (returns a pointer)" -- \
	"SELECT fts3_tokenizer('simple')"
stops 2 'fts3_tokenizer\(\) is not allowed' "fts3_tokenizer, two arguments (takes one)" -- \
	"SELECT fts3_tokenizer('mine', X'4141414141414141')"
stops 2 'ATTACH is not allowed: query is read-only' "ATTACH of an existing file" -- \
	"ATTACH '$DB' AS other"
stops 2 'PRAGMA writable_schema = ON is not allowed' "PRAGMA writable_schema=ON" -- \
	"PRAGMA writable_schema=ON"
stops 2 'PRAGMA journal_mode = delete is not allowed' "a PRAGMA that sets" -- \
	"PRAGMA journal_mode=delete"
stops 2 'load_extension\(\) is not allowed' "load_extension" -- \
	"SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')"
stops 2 'writable_schema is not allowed' "a setting pragma as a table-valued function" -- \
	"SELECT * FROM pragma_writable_schema"

# What reads stays allowed, and printf still formats.
run_rt query --db "$DB" -o json "SELECT printf('%5.2f|%-3d|%q|%.*c', 3.14159, 7, 'it''s', 3, 'x') AS p"
is "$(jq -r '.[0].p' "$OUT")" " 3.14|7  |it''s|xxx" "printf formats as SQLite's"
run_rt query --db "$DB" -o json "PRAGMA table_info(incidents)"
is "$RC" 0 "PRAGMA table_info reads"
run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM pragma_table_info('events')"
is "$(jq -r '.[0].n' "$OUT")" 29 "pragma_table_info() reads"
run_rt query --db "$DB" -o json "PRAGMA integrity_check"
is "$(jq -r '.[0].integrity_check' "$OUT")" ok "PRAGMA integrity_check reads"
run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM timeline"
is "$RC" 0 "the timeline view reads under the authorizer"

run_rt query --db "$DB" --timeout 0s "SELECT 1"
is "$RC" 2 "--timeout 0s is a usage error"
run_rt query --db "$DB" --max-memory 1M "SELECT 1"
is "$RC" 2 "--max-memory under 8M is a usage error"
like "$(cat "$ERR")" '--max-memory wants a size' "and says what it wants"
done_testing
