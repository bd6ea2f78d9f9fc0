#!/bin/sh
# ingest --follow on a quoted glob, as tail -F: a new file, appended lines,
# a rotation (renamed, a new one created) and a truncation are each stored
# once within a second; SIGTERM exits 0, and a restart resumes at the
# stored positions: no line lost, none read twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/follow.sh"
db=$T/f.db
within() {   # within DB N WHAT: N events committed within 1.5 s
	_i=0
	while [ "$(events_committed "$1")" -lt "$2" ] && [ $_i -lt 15 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	is "$(events_committed "$1")" "$2" "$3"
}
f1=$L/web-1_shop_app-$ID.log
f2=$L/api-2_shop_api-$ID.log
line "$f1"
"$REVTRAIL" ingest --follow --db "$db" "$L/*.log" 2> "$T/err1" &
pid=$!
ok wait_events "$db" 1
line "$f2"
within "$db" 2 "a new file matching the glob"
line "$f1"
line "$f2"
within "$db" 4 "appended lines"
line "$f1"
mv "$f1" "$f1.1"
line "$f1"
within "$db" 6 "rotated: the old file's end and the new file"
: > "$f2"
line "$f2"
within "$db" 7 "truncated: read from its start"
kill -TERM $pid
rc=0
wait $pid || rc=$?
is "$rc" 0 "SIGTERM: exit 0"
line "$f1"
line "$f2"
"$REVTRAIL" ingest -f --db "$db" "$L/*.log" 2> "$T/err2" &
pid=$!
within "$db" 9 "restart: the lines written while it was down"
line "$f1"
within "$db" 10 "restart: followed on"
kill -TERM $pid
rc=0
wait $pid || rc=$?
is "$rc" 0 "second SIGTERM: exit 0"
# Rotated while stopped, the new file already longer than the stored
# offset: it is another file (inode), read from its start.
mv "$f1" "$f1.2"
for k in 1 2 3 4; do line "$f1"; done
"$REVTRAIL" ingest -f --db "$db" "$L/*.log" 2> "$T/err3" &
pid=$!
within "$db" "$n" "a file replaced while stopped: read from its start"
kill -TERM $pid
rc=0
wait $pid || rc=$?
is "$rc" 0 "third SIGTERM: exit 0"
is "$(( $(records "$T/err1") + $(records "$T/err2") + $(records "$T/err3") ))" \
	"$n" "every line read once over the three runs"
run_rt query --db "$db" -o csv "SELECT count(*), sum(count) FROM events"
is "$(tail -n 1 "$OUT")" "$n,$n" "every line stored once"
run_rt query --db "$db" -o csv "SELECT DISTINCT pod, namespace, container FROM events ORDER BY 1"
is "$(tail -n +2 "$OUT" | tr '\n' ' ')" "api-2,shop,api web-1,shop,app " \
	"pod, namespace and container from the kubelet's names"
done_testing
