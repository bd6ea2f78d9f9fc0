#!/bin/sh
# ingest reads its inputs at once: two FIFOs kept open and written in
# turn are both stored while both stay open, and a file named beside an
# endless FIFO is read too.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race

# <> opens a FIFO without waiting for its reader, and keeps it open.
db=$T/two.db
mkfifo "$T/a" "$T/b"
exec 3<>"$T/a" 4<>"$T/b"
"$REVTRAIL" ingest --db "$db" "$T/a" "$T/b" > "$T/out" 2> "$T/err" &
pid=$!
cat "$SC/events.ndjson" >&4
ok wait_events "$db" 6
cat "$SC/fluentbit.ndjson" >&3
ok wait_events "$db" 15
kill -TERM $pid
rc=0
wait $pid || rc=$?
exec 3>&- 4>&-
is "$rc" 0 "SIGTERM: exit 0"
like "$(cat "$T/err")" 'ingest: [0-9]+ records' "summary printed"

# A regular file after an endless FIFO: read while the FIFO stays open.
db=$T/mixed.db
mkfifo "$T/c"
exec 3<>"$T/c"
"$REVTRAIL" ingest --db "$db" "$T/c" "$SC/events.ndjson" 2> "$T/err" &
pid=$!
ok wait_events "$db" 6
cat "$SC/fluentbit.ndjson" >&3
ok wait_events "$db" 15
kill -TERM $pid
rc=0
wait $pid || rc=$?
exec 3>&-
is "$rc" 0 "file beside a FIFO: exit 0"
done_testing
