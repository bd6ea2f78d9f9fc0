#!/bin/sh
# ingest --follow over a glob whose files come and go, as pods do under
# /var/log/containers: 2,000 files created and removed in turn are each
# read once and stored once, and the names the driver holds stay bounded
# (a gone file's name is freed once its last position is committed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/follow.sh"
db=$T/churn.db
ROUNDS=20 PER=100
"$REVTRAIL" ingest --follow --db "$db" "$L/*.log" 2> "$T/err" &
pid=$!
r=0
stored=yes
while [ $r -lt $ROUNDS ]; do
	k=0
	while [ $k -lt $PER ]; do
		n=$((n + 1))
		echo "2026-12-01T10:00:00.000000001Z stderr F Error: configmap \"cfg-$n\" not found" \
			> "$L/web-$n-x_shop_app-$ID.log"
		k=$((k + 1))
	done
	wait_events "$db" $n || { stored="no: round $r"; break; }
	rm -f "$L"/*.log
	r=$((r + 1))
done
is "$stored" yes "each round's files committed"
kill -TERM $pid
rc=0
wait $pid || rc=$?
is "$rc" 0 "SIGTERM: exit 0"
is "$(records "$T/err")" "$n" \
	"every line read once"
run_rt query --db "$db" -o csv "SELECT count(*), sum(count) FROM events"
is "$(tail -n 1 "$OUT")" "$n,$n" "every line stored once"
peak=$(sed -n 's/^ingest: followed files: [0-9]* held at the end, \([0-9]*\) at most$/\1/p' "$T/err")
like "$peak" '^[0-9]+$' "the summary says how many names were held"
is "$([ "${peak:-$n}" -le $((PER * 4)) ] && echo bounded || echo "$peak of $n")" \
	bounded "the names held stay bounded (at most 4 rounds' worth)"
diag "at most $peak of $n names held at once"
done_testing
