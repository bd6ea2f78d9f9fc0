#!/bin/sh
# ingest --follow 'app.log*': a rotated name that still matches the glob
# (app.log renamed app.log.1, a new app.log created) is the same file, by
# its inode, as Fluent Bit's tail knows it: read on from its offset, not
# again from its start. Every line is read once (the run's record count:
# the store's dedupe would hide a second reading) and stored once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/follow.sh"
db=$T/f.db
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
is "$(records "$T/err")" "$n" \
	"every line read once"
run_rt query --db "$db" -o csv "SELECT count(*), sum(count) FROM events"
is "$(tail -n 1 "$OUT")" "$n,$n" "every line stored once"
done_testing
