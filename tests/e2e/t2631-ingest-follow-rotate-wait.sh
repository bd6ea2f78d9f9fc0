#!/bin/sh
# ingest --follow '*.log': a file rotated out of the glob's reach
# (app.log renamed app.log.1) is still read for a grace, as Fluent Bit's
# rotate_wait: a line its writer appends through the fd it still holds,
# after the new app.log was already read, is stored, once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/follow.sh"
db=$T/f.db
f=$L/web-1_shop_app-$ID.log
line "$f"
"$REVTRAIL" ingest --follow --db "$db" "$L/*.log" 2> "$T/err" &
pid=$!
ok wait_events "$db" 1
exec 3>> "$f"         # the writer's fd, kept across the rename
mv "$f" "$f.1"
line "$f"
ok wait_events "$db" 2
n=$((n + 1))
echo "2026-12-01T10:00:00.000000001Z stderr F Error: configmap \"cfg-$n\" not found" >&3
exec 3>&-
ok wait_events "$db" 3
kill -TERM $pid
rc=0
wait $pid || rc=$?
is "$rc" 0 "SIGTERM: exit 0"
is "$(records "$T/err")" "$n" \
	"every line read once"
run_rt query --db "$db" -o csv "SELECT count(*), sum(count) FROM events"
is "$(tail -n 1 "$OUT")" "$n,$n" "every line stored once"
run_rt query --db "$db" -o csv "SELECT DISTINCT pod FROM events"
is "$(tail -n +2 "$OUT" | tr '\n' ' ')" "web-1 " "the rotated file's lines keep their pod"
done_testing
