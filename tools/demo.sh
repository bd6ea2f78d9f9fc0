#!/bin/sh
# demo.sh: the Quick start's main job: ingest the three bundled field reports
# into a fresh database and print the incidents found, with the diagnosis of
# each.
set -eu
bin=${1:-./revtrail}
cd "$(dirname "$0")/.."
db=build/demo.db
mkdir -p build
rm -f "$db" "$db-wal" "$db-shm"
"$bin" ingest --db "$db" examples/field-reports/*/*
"$bin" incidents --db "$db"
echo
"$bin" query --db "$db" "SELECT id, namespace || '/' || release AS release, revision, diagnosis, pods FROM incidents ORDER BY id"
