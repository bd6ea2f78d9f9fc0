#!/bin/sh
# One writer per database file, whatever its name: while an ingest writes
# x.db, a second writer through a hard link, a symlink or sub/../x.db is
# refused with the first one's pid, and the database stays sound. A
# symlink planted where the old lock file lived (x.db.lock) is left alone.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race
DB=$T/x.db
mkdir "$T/sub" "$T/other"

mkfifo "$T/fifo"
"$REVTRAIL" ingest -v --db "$DB" < "$T/fifo" 2> "$T/a.err" &
a=$!
exec 3> "$T/fifo"
i=0
until grep -q "pid $a) holds the database" "$T/a.err" || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
like "$(cat "$T/a.err")" "this writer \\(pid $a\\) holds the database" \
	"the first writer says when it holds the database"
cat "$SC/events.ndjson" >&3
ok wait_events "$DB" 6

ln "$DB" "$T/other/hard.db"
ln -s "$DB" "$T/sym.db"
for name in "$T/other/hard.db" "$T/sym.db" "$T/sub/../x.db"; do
	run_rt ingest --db "$name" "$SC/fluentbit.ndjson"
	is "$RC" 1 "a second writer through $name is refused"
	like "$(cat "$ERR")" "another revtrail \\(pid $a\\) is writing" \
		"its error names the first writer's pid"
done
is "$(events_committed "$DB")" 6 "the refused writers wrote nothing"

exec 3>&-
rc=0
wait $a || rc=$?
is "$rc" 0 "the first writer ends normally"
run_rt query --db "$DB" -o csv "PRAGMA integrity_check"
is "$(tail -n 1 "$OUT")" ok "integrity_check is ok"
run_rt ingest --db "$T/other/hard.db" "$SC/fluentbit.ndjson"
is "$RC" 0 "once the first has finished, a writer through the link runs"
is "$(events_committed "$DB")" 15 "and adds its events to the one file"

# A symlink planted at the name of the old lock file, and one at the
# database's -wal, must not make revtrail write through them.
printf 'precious\n' > "$T/target"
ln -s "$T/target" "$T/y.db.lock"
run_rt ingest --db "$T/y.db" "$SC/events.ndjson"
is "$RC" 0 "an ingest beside a planted lock symlink runs"
is "$(cat "$T/target")" precious "the symlink's target is untouched"
ok test -L "$T/y.db.lock"
done_testing
