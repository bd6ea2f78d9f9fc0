#!/bin/sh
# Repeats: a line one container repeats is a counter and its times, not a
# row per line. One pod's error, 500 times over 20 minutes, is a row per
# minute whose counts sum to 500; `show` prints its count as it does an
# Event's; the same file again adds nothing; the lines in another order
# give the same events and incidents. A burst past a row's 256 times
# fills further rows, every time counted once, in any order.
. "$(dirname "$0")/lib.sh"
ID=$(printf '%064d' 7)
mkdir "$T/containers" "$T/shuf"
LOG=$T/containers/payments-api-7d9c8f4b6-4kx2m_prod_app-$ID.log
# every 2.4 s for 20 minutes, a healthz line between them
awk 'BEGIN {
	for (i = 0; i < 500; i++) {
		ns = i * 2400000000 + 123456789
		t = 1730640000 + int(ns / 1000000000)
		printf "%s.%09dZ stderr F FATAL:  password authentication failed for user \"app\"\n", strftime("%Y-%m-%dT%H:%M:%S", t, 1), ns % 1000000000
		printf "%s.%09dZ stdout F GET /healthz 200\n", strftime("%Y-%m-%dT%H:%M:%S", t, 1), ns % 1000000000
	} }' > "$LOG"
shuf --random-source="$LOG" "$LOG" > "$T/shuf/${LOG##*/}"

EVT="SELECT ukey, incident_id, count, first_ns, ts_ns, hex(times) AS times, message, tags FROM events ORDER BY ukey"
INC="SELECT id, namespace, release, opened_at, last_seen_at, event_count, occurrences, tags, diagnosis, pods FROM incidents ORDER BY id"

run_rt ingest --db "$T/a.db" "$LOG"
is "$RC" 0 "ingest of 500 repeats"
run_rt query --db "$T/a.db" -o json "SELECT count(*) AS n, sum(count) AS c FROM events"
n=$(jq -r '.[0].n' "$OUT")
is "$(jq -r '.[0].c' "$OUT")" 500 "500 occurrences counted"
ok test "$n" -ge 20 -a "$n" -le 21
diag "$n rows for 500 lines"
run_rt query --db "$T/a.db" -o json "SELECT max(ts_ns - first_ns) AS w, min(count) AS lo, max(count) AS hi FROM events"
ok test "$(jq -r '.[0].w' "$OUT")" -lt 60000000000
is "$(jq -r '.[0].hi' "$OUT")" 25 "a minute's 25 lines in one row"
run_rt query --db "$T/a.db" -o json "$INC"
is "$(jq -r '.[0].occurrences' "$OUT")" 500 "the incident counts every line"
is "$(jq -r '.[0].event_count' "$OUT")" "$n" "and a row per minute"
cp "$OUT" "$T/a.inc"
run_rt query --db "$T/a.db" -o json "$EVT"
cp "$OUT" "$T/a.evt"

run_rt show --db "$T/a.db" 1
is "$RC" 0 "show"
like "$(cat "$OUT")" 'Pod/payments-api-7d9c8f4b6-4kx2m  db_auth_failed x25' "the timeline shows a row's count, as an Event's"

run_rt ingest --db "$T/a.db" "$LOG"
is "$RC" 0 "the same file again"
like "$(cat "$ERR")" 'events 0 new' "nothing new"
run_rt query --db "$T/a.db" -o json "$EVT"
ok cmp "$T/a.evt" "$OUT"
run_rt query --db "$T/a.db" -o json "$INC"
ok cmp "$T/a.inc" "$OUT"

run_rt ingest --db "$T/b.db" "$T/shuf/${LOG##*/}"
is "$RC" 0 "the lines shuffled, into another database"
run_rt query --db "$T/b.db" -o json "$EVT"
ok cmp "$T/a.evt" "$OUT"
run_rt query --db "$T/b.db" -o json "$INC"
ok cmp "$T/a.inc" "$OUT"

# In five parts, last part first, one ingest each: the rows are met again
# across commits, and come out the same.
split -n l/5 -d "$T/shuf/${LOG##*/}" "$T/part."
for p in 4 3 2 1 0; do
	cp "$T/part.0$p" "$T/shuf/${LOG##*/}"
	run_rt ingest --db "$T/c.db" "$T/shuf/${LOG##*/}"
	is "$RC" 0 "part $p"
done
run_rt query --db "$T/c.db" -o json "$EVT"
ok cmp "$T/a.evt" "$OUT"
run_rt query --db "$T/c.db" -o json "SELECT opened_at, last_seen_at, event_count, occurrences, tags, diagnosis, pods FROM incidents"
is "$(jq -c . "$OUT")" "$(jq -c '[.[] | {opened_at, last_seen_at, event_count, occurrences, tags, diagnosis, pods}]' "$T/a.inc")" "the same incident"

# A gap under a minute: the bucket is the gap, so a row never spans one.
# Two lines 45 s apart in one minute are two incidents with --gap 30s.
GAP=$T/containers/web-6d8f7c9b5-q2w3e_shop_app-$ID.log
printf '%s stderr F FATAL:  password authentication failed for user "app"\n' \
	2024-11-03T15:00:01.000000000Z 2024-11-03T15:00:46.000000000Z > "$GAP"
run_rt ingest --db "$T/gap.db" --gap 30s "$GAP"
is "$RC" 0 "ingest with --gap 30s"
run_rt query --db "$T/gap.db" -o json "SELECT count(*) AS n FROM incidents"
is "$(jq -r '.[0].n' "$OUT")" 2 "two incidents, 45 s apart"

# A burst: 600 distinct times within one minute, in two halves.
BURST=$T/containers/orders-5c7d9f8b4-k2x9z_shop_app-$ID.log
awk 'BEGIN {
	for (i = 0; i < 600; i++)
		printf "2024-11-03T14:00:%02d.%09dZ stderr F dial tcp 10.0.3.4:6379: connect: connection refused\n", int(i / 20), (i % 20) * 50000000 + 7
	}' > "$BURST"
head -n 300 "$BURST" > "$T/first.log"
tail -n 300 "$BURST" > "$T/second.log"
BQ="SELECT count(*) AS n, sum(count) AS c, max(count) AS hi, min(first_ns) AS a, max(ts_ns) AS b FROM events"
for order in "first second" "second first"; do
	db=$T/burst-${order% *}.db
	for half in $order; do
		cp "$T/$half.log" "$BURST"
		run_rt ingest --db "$db" "$BURST"
		is "$RC" 0 "burst: $half half"
	done
	run_rt query --db "$db" -o json "$BQ"
	is "$(jq -r '.[0].c' "$OUT")" 600 "burst ($order): 600 occurrences"
	is "$(jq -r '.[0].n' "$OUT")" 3 "in three rows"
	is "$(jq -r '.[0].hi' "$OUT")" 256 "none past 256 times"
	cp "$OUT" "$T/burst-${order% *}.sum"
	run_rt query --db "$db" -o json "$INC"
	cp "$OUT" "$T/burst-${order% *}.inc"
	cat "$T/first.log" "$T/second.log" > "$BURST"
	run_rt ingest --db "$db" "$BURST"
	like "$(cat "$ERR")" 'events 0 new' "burst ($order): all of it again adds nothing"
	run_rt query --db "$db" -o json "$BQ"
	ok cmp "$T/burst-${order% *}.sum" "$OUT"
done
ok cmp "$T/burst-first.sum" "$T/burst-second.sum"
ok cmp "$T/burst-first.inc" "$T/burst-second.inc"
done_testing
