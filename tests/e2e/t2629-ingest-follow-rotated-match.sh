#!/bin/sh
# ingest --follow 'app.log*': a rotated name that still matches the glob
# (app.log renamed app.log.1, a new app.log created) is the same file, by
# its inode, as Fluent Bit's tail knows it: read on from its offset, not
# again from its start. Every line is read once (the run's record count:
# the store's dedupe would hide a second reading) and stored once.
. "$(dirname "$0")/lib.sh"
ID=$(printf '%064d' 7)
L=$T/logs
mkdir "$L"
db=$T/f.db
n=0
line() {   # line FILE: appends the next distinct tagged line to FILE
	n=$((n + 1))
	echo "2026-12-01T10:00:00.000000001Z stderr F Error: configmap \"cfg-$n\" not found" >> "$1"
}
f=$L/web-1_shop_app-$ID.log
line "$f"
line "$f"
"$REVTRAIL" ingest --follow --db "$db" "$f*" 2> "$T/err" &
pid=$!
ok wait_events "$db" 2
mv "$f" "$f.1"
line "$f"
ok wait_events "$db" 3
line "$f.1"           # a writer that still holds the rotated file
line "$f"
ok wait_events "$db" 5
mv "$f.1" "$f.2"      # rotated on: still the same file
mv "$f" "$f.1"
line "$f.1"
line "$f"
ok wait_events "$db" 7
kill -TERM $pid
rc=0
wait $pid || rc=$?
is "$rc" 0 "SIGTERM: exit 0"
is "$(sed -n 's/^ingest: \([0-9]*\) records.*/\1/p' "$T/err")" "$n" \
	"every line read once"
run_rt query --db "$db" -o csv "SELECT count(*), sum(count) FROM events"
is "$(tail -n 1 "$OUT")" "$n,$n" "every line stored once"
done_testing
