#!/bin/sh
# A reader whose output nobody reads holds no snapshot: query writing into
# a FIFO that is open but never read blocks on its write, and while it is
# blocked four ingests commit about 30 MB; the -wal file stays within one
# ingest's worth (12 MiB) instead of growing with all of it, every record
# is stored, and the query's output is whole once someone reads it.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race
DB=$T/w.db
BOUND=$((12 * 1024 * 1024))

# 10,000 distinct Events per chunk, from one of the scenario's.
head -n 1 "$SC/events.ndjson" > "$T/tpl"
for k in 0 1 2 3; do
	python3 - "$T/tpl" $((k * 10000)) 10000 > "$T/g$k.ndjson" <<'PY'
import sys
tpl = open(sys.argv[1]).readline().rstrip("\n")
start, n = int(sys.argv[2]), int(sys.argv[3])
for i in range(start, start + n):
    print(tpl.replace("eac8-ee4986bb1049", "eac8-%012d" % i)
          .replace("4kx2m.ae20a8bed371f7fe", "4kx2m.%d" % i)
          .replace('4kx2m","namespace', '4kx2m%d","namespace' % (i % 500)))
PY
done

run_rt ingest --db "$DB" "$SC/events.ndjson"
is "$RC" 0 "the database has its first events"

# The reader: 200,000 rows (about 2 MB) into a FIFO held open, unread.
mkfifo "$T/out"
exec 4<> "$T/out"
"$REVTRAIL" query --db "$DB" -o csv "WITH RECURSIVE c(x) AS (SELECT 1
	UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
	SELECT x, (SELECT count(*) FROM events) AS n FROM c" \
	> "$T/out" 2> "$T/q.err" &
q=$!
i=0
until grep -q pipe "/proc/$q/wchan" 2>/dev/null || [ $i -ge 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
like "$(cat "/proc/$q/wchan" 2>/dev/null)" pipe "the query is blocked on its output"

max=0
for k in 0 1 2 3; do
	run_rt ingest --db "$DB" "$T/g$k.ndjson"
	is "$RC" 0 "chunk $k ingested while the query is blocked"
	w=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
	[ "$w" -gt "$max" ] && max=$w
done
ok test "$max" -le "$BOUND"
diag "largest -wal seen: $max bytes (bound $BOUND)"

# Swap the read-write descriptor for a read-only one (a reader stays
# open throughout), so the reader sees EOF when the query ends.
exec 5< "$T/out"
exec 4<&-
cat <&5 > "$T/rows" &
c=$!
exec 5<&-
rc=0
wait $q || rc=$?
is "$rc" 0 "the query ends once its output is read"
wait $c
is "$(wc -l < "$T/rows")" 200001 "its output is whole"
is "$(sed -n 2p "$T/rows")" "1,6" "and from the snapshot it started with"
is "$(events_committed "$DB")" 40006 "every record is stored"
done_testing
