#!/bin/sh
# ingest refuses its own database files as input, whether they exist yet
# or not: SQLite creates -wal and -shm when the database opens, after the
# inputs were checked, and a -journal while a transaction runs; reading
# one of them would feed the database into itself.
. "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../examples/field-reports/hook-configmap-race" && pwd)
cd "$T" || exit 1
run_rt ingest --db x.db "$EX"/*
is "$RC" 0 "ingest"
for f in x.db x.db-wal x.db-shm x.db-journal ./x.db-wal "$T/x.db-wal"; do
	run_rt ingest --db x.db "$f"
	is "$RC" 2 "ingest --db x.db $f: refused"
	like "$(cat "$ERR")" "^revtrail ingest: .*is the database" "$f: says why"
done
mkdir sub
run_rt ingest --db sub/../x.db x.db-wal
is "$RC" 2 "the same file through another path: refused"
run_rt ingest --db x.db y.db-wal
is "$RC" 1 "another database's name is an input (missing here)"
done_testing
