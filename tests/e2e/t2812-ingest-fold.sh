#!/bin/sh
# Folded repeats: a container's lines that differ only in their digits
# (a client's address, a size, a path's id) are one repeat row per minute
# and per what the rules tagged and captured: nginx 502s and 503s stay
# apart (the status is captured), so do two users a digit apart (the user
# is captured). The row counts every line once and shows the latest
# line's text, in every arrival order (three files of one container,
# the restarts' logs); the same file again adds nothing.
. "$(dirname "$0")/lib.sh"
mkdir "$T/logs"
POD=web-7d9c8b6f5-x2k4p_shop_web
# 90 lines, 1.3 s apart with a nanosecond part, over two minutes; line i
# goes to file i % 3, so no file holds a minute alone or in time order.
awk -v dir="$T/logs" -v pod="$POD" 'BEGIN {
	for (i = 0; i < 90; i++) {
		ns = i * 1300000000 + i * 7919 + 17
		t = 1730628000 + int(ns / 1000000000)
		if (i % 5 == 0) {
			class = "user" (i % 10 ? "app1" : "app2")
			msg = sprintf("FATAL:  password authentication failed for user \"%s\"", i % 10 ? "app1" : "app2")
		} else {
			st = i % 4 ? 503 : 502
			class = "nginx" st
			msg = sprintf("10.%d.%d.%d - - [03/Nov/2024:10:%02d:%02d +0000] \"GET /api/v1/orders/%d HTTP/1.1\" %d %d \"-\" \"curl/8.%d\"", i % 7, i * 13 % 256, i * 29 % 256, int((t % 3600) / 60), t % 60, 1000 + i * 37, st, 90 + i * 11, i % 3)
		}
		stamp = sprintf("%s.%09dZ", strftime("%Y-%m-%dT%H:%M:%S", t, 1), ns % 1000000000)
		printf "%s stderr F %s\n", stamp, msg > (dir "/" pod "-" sprintf("%064d", i % 3) ".log")
		# the expected row: one per class and minute, the latest line
		k = class " " int(t / 60)
		n[k]++
		last[k] = msg
	}
	for (k in n)
		printf "%d\t%s\n", n[k], last[k] > (dir "/../want")
}'
sort "$T/want" > "$T/want.sorted"
A=$T/logs/$POD-$(printf '%064d' 0).log
B=$T/logs/$POD-$(printf '%064d' 1).log
C=$T/logs/$POD-$(printf '%064d' 2).log
ROWS="SELECT count, message FROM events"
EVT="SELECT ukey, incident_id, count, first_ns, ts_ns, hex(times) AS times, message, tags, fields FROM events ORDER BY ukey"

rows_of() {   # rows_of DB: count<TAB>message per row, sorted
	run_rt query --db "$1" -o json "$ROWS"
	jq -r '.[] | "\(.count)\t\(.message)"' "$OUT" | sort > "$T/got"
}

run_rt ingest --db "$T/a.db" "$A" "$B" "$C"
is "$RC" 0 "ingest of 90 lines in three files"
rows_of "$T/a.db"
ok cmp "$T/want.sorted" "$T/got"
diag "$(wc -l < "$T/got") rows for 90 lines"
run_rt query --db "$T/a.db" -o json "SELECT sum(count) AS c, count(DISTINCT fields) AS f FROM events"
is "$(jq -r '.[0].c' "$OUT")" 90 "every line counted once"
is "$(jq -r '.[0].f' "$OUT")" 4 "captures kept apart: status 502, 503; user app1, app2"
run_rt query --db "$T/a.db" -o json "$EVT"
cp "$OUT" "$T/a.evt"
run_rt query --db "$T/a.db" -o json "SELECT occurrences, event_count FROM incidents"
is "$(jq -r '.[0].occurrences' "$OUT")" 90 "the incident counts every line"
is "$(jq -r '.[0].event_count' "$OUT")" "$(wc -l < "$T/want")" "and a row per class and minute"

run_rt show --db "$T/a.db" 1
like "$(cat "$OUT")" 'upstream_unavailable x[0-9]+' "the timeline shows a folded row's count"

run_rt ingest --db "$T/a.db" "$B"
is "$RC" 0 "one file again"
like "$(cat "$ERR")" 'events 0 new' "nothing new"
run_rt query --db "$T/a.db" -o json "$EVT"
ok cmp "$T/a.evt" "$OUT"

same_rows() {   # same_rows DB NAME
	run_rt query --db "$1" -o json "$EVT"
	ok cmp "$T/a.evt" "$OUT"
	[ -s "$OUT" ] || diag "$2: no rows"
}
in_every_order "fold" same_rows "$A" "$B" "$C"
done_testing
