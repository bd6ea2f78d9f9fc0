#!/bin/sh
# Every signal keeps what was read: SIGHUP right after two records left a
# pipe commits both; a stderr nobody reads any more (ingest -v 2>&1 | head
# -1) does not kill the writer before its commit; closed stdin, stdout or
# stderr get nothing of revtrail's own (the database is neither read as
# input nor written to by an error line); SIGTERM while an ingest waits
# for a FIFO's writer exits 0.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race

exited() {   # exited PID: until PID is gone, 3 s max (polled every 50 ms)
	i=0
	while [ $i -lt 60 ]; do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# Bytes still in the pipe behind descriptor 3, from its write end.
unread() {
	python3 -c 'import fcntl, struct, termios
print(struct.unpack("i", fcntl.ioctl(3, termios.FIONREAD, b"\0\0\0\0"))[0])'
}

# Two Events of two objects: the reference count from a file.
sed -n '1p;3p' "$SC/events.ndjson" > "$T/two.ndjson"
run_rt ingest --db "$T/ref.db" "$T/two.ndjson"
want=$(events_committed "$T/ref.db")
is "$want" 2 "the two records are two events"

# SIGHUP as soon as the two records have left the pipe: before the quiet
# pipe's commit (a quarter of a second later) would have stored them.
mkfifo "$T/hup"
"$REVTRAIL" ingest --db "$T/hup.db" < "$T/hup" 2> "$T/hup.err" &
pid=$!
exec 3> "$T/hup"
cat "$T/two.ndjson" >&3
i=0
while [ "$(unread)" != 0 ] && [ $i -lt 100 ]; do
	sleep 0.01
	i=$((i + 1))
done
kill -HUP $pid
ok exited $pid
exec 3>&-
rc=0
wait $pid || rc=$?
is "$rc" 0 "SIGHUP: exit 0"
is "$(events_committed "$T/hup.db")" "$want" "SIGHUP: 2 of 2 records stored"

# A dead stderr: its reader takes the first line and goes; the -v
# warnings of the records that follow meet a pipe nobody reads.
printf 'Back-off restarting failed container\nerror: OOMKilled\n' \
	> "$T/notime.log"
mkfifo "$T/in" "$T/errp"
timeout 10 head -n 1 "$T/errp" > "$T/first" &
hpid=$!
"$REVTRAIL" ingest -v --db "$T/pipe.db" < "$T/in" 2> "$T/errp" &
pid=$!
exec 3> "$T/in"
head -n 1 "$T/notime.log" >&3
wait $hpid
like "$(cat "$T/first")" "." "stderr's reader read one line and left"
tail -n 1 "$T/notime.log" >&3
exec 3>&-
rc=0
wait $pid || rc=$?
is "$rc" 0 "dead stderr: exit 0"
is "$(events_committed "$T/pipe.db")" 2 "dead stderr: the records are stored"

# Closed descriptors.
run_rt ingest --db "$T/c0.db" "$T/notime.log" <&-
is "$RC" 0 "ingest <&- FILE runs"
like "$(cat "$ERR")" "2 records, 2 tagged, 0 rejected" \
	"and reads only its file"
run_rt ingest --db "$T/c1.db" <&-
is "$RC" 0 "ingest <&- without a file runs"
like "$(cat "$ERR")" "0 records, 0 tagged, 0 rejected" \
	"and reads nothing: not its own database"
RC=0
"$REVTRAIL" ingest -v --db "$T/c2.db" "$T/notime.log" 2>&- >&- || RC=$?
is "$RC" 0 "ingest 2>&- >&- runs"
run_rt query --db "$T/c2.db" -o csv "PRAGMA integrity_check"
is "$(tail -n 1 "$OUT")" ok "no line was written into the database"
is "$(events_committed "$T/c2.db")" 2 "and its records are stored"

# SIGTERM while the open of a FIFO waits for a writer.
mkfifo "$T/nowriter"
"$REVTRAIL" ingest --db "$T/f.db" "$T/nowriter" 2> "$T/f.err" &
pid=$!
i=0
until [ "$(cat /proc/$pid/wchan 2>/dev/null)" = wait_for_partner ] ||
	[ $i -ge 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
kill -TERM $pid
ok exited $pid
rc=0
wait $pid || rc=$?
is "$rc" 0 "SIGTERM while opening a FIFO: exit 0"
unlike "$(cat "$T/f.err")" "Interrupted" "and no error"
done_testing
