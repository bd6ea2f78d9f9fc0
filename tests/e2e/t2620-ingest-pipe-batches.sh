#!/bin/sh
# ingest from a pipe: batches are cut by size and time as for a file (not
# one per chunk read), and a record on a quiet pipe is still committed
# within about a second, while the pipe stays open.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race

# ~5 MB of distinct Events (each copy gets its own uids): some 80 reads of
# a 64 KiB pipe buffer, which used to be 80 batches.
awk 'BEGIN { for (i = 0; i < 500; i++) print i }' > "$T/copies"
while read -r i; do
	sed "s/\"uid\":\"/\"uid\":\"c$i-/g" "$SC/events.ndjson"
done < "$T/copies" > "$T/big.ndjson"

run_rt ingest --db "$T/file.db" "$T/big.ndjson"
is "$RC" 0 "file ingest exits 0"
file_events=$(grep -oE 'events [0-9]+ new' "$ERR")

RC=0
cat "$T/big.ndjson" | "$REVTRAIL" ingest --db "$T/pipe.db" 2> "$ERR" || RC=$?
is "$RC" 0 "pipe ingest exits 0"
is "$(grep -oE 'events [0-9]+ new' "$ERR")" "$file_events" \
	"the pipe stores what the file stores"
batches=$(sed -n 's/.* \([0-9][0-9]*\) batches$/\1/p' "$ERR")
ok test "${batches:-999}" -le 10
diag "pipe batches: ${batches:-none}"

# One record into a pipe that then stays open and quiet.
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
mkfifo "$T/fifo"
"$REVTRAIL" ingest --db "$T/quiet.db" < "$T/fifo" 2> "$T/err" &
pid=$!
exec 3> "$T/fifo"
head -n 1 "$SC/events.ndjson" >&3
t0=$(now_ms)
i=0
while [ "$(events_committed "$T/quiet.db")" -lt 1 ] && [ $i -lt 100 ]; do
	sleep 0.05      # a poll interval: the loop waits on the row
	i=$((i + 1))
done
waited=$(( $(now_ms) - t0 ))
is "$(events_committed "$T/quiet.db")" 1 "the record is committed while the pipe is open"
ok test "$waited" -lt 2500
diag "committed after ${waited} ms (promise: about a second)"
ok kill -0 "$pid"
exec 3>&-
rc=0
wait $pid || rc=$?
is "$rc" 0 "EOF ends the stream with exit 0"
done_testing
