#!/bin/sh
# A container's JSON log payload is decoded only when some rule may match
# its text (ingest_opts.defer_payload); `classify --all` prints every
# message and so decodes every payload at once. Both must tag the same
# records the same way, over the labelled lines wrapped in the JSON shapes
# Go, zap, pino and Python loggers write: a msg alone, a msg with the error
# beside it (joined, never deferred), the line split over two members,
# status codes outside the message, and escapes (never deferred).
. "$(dirname "$0")/lib.sh"

grep -h -v -e '^#' -e '^[[:space:]]*$' "$DATA/classify/real.tsv" \
	"$DATA/classify/corpus.tsv" | cut -f2- > "$T/lines"
jq -R -r '
	# a time of its own for every line, a minute for each kind of
	# payload: two kinds may decode to the same message, and a
	# line a container repeats within a minute is one event (a repeat)
	def cri(k): "2024-11-03T10:0" + (k | tostring) + ":00." +
		((1000000000 + input_line_number * 10 + k) | tostring | .[1:]) +
		"Z stderr F " + tojson;
	({level: "error", msg: .} | cri(1)),
	({msg: "request failed", path: "/x", detail: .} | cri(2)),
	({ts: 1.5, message: ., status: 503} | cri(3)),
	({level: "warn", msg: "call failed", error: .} | cri(4)),
	({lvl: "info", log: .[0:40], rest: .[40:]} | cri(5))' \
	"$T/lines" > "$T/payloads.log"
ok test "$(wc -l < "$T/payloads.log")" -gt 4000

run_rt classify "$T/payloads.log"
is "$RC" 0 "classify, payloads deferred"
cp "$OUT" "$T/deferred"
run_rt classify --all "$T/payloads.log"
is "$RC" 0 "classify --all, payloads decoded at once"
jq -c 'select(.tags != [])' "$OUT" > "$T/eager"
jq -c '.' "$T/deferred" > "$T/deferred.c"
ok test "$(wc -l < "$T/eager")" -gt 1000
ok cmp "$T/deferred.c" "$T/eager"

# The decoded message, not the payload's text, is what ingest stores.
run_rt ingest --db "$T/a.db" "$T/payloads.log"
is "$RC" 0 "ingest, payloads deferred"
run_rt ingest --keep-untagged --db "$T/b.db" "$T/payloads.log"
is "$RC" 0 "ingest --keep-untagged, payloads decoded at once"
# What was stored, not in how many rows: with --keep-untagged, the
# untagged lines of a repeated message ("request failed", every kind 2
# line) count in its rows too.
q='SELECT DISTINCT message, type, tags, fields FROM events WHERE tags <> '"'[]'"' ORDER BY 1, 2, 3, 4'
run_rt query --db "$T/a.db" -o csv "$q"
cp "$OUT" "$T/a.rows"
run_rt query --db "$T/b.db" -o csv "$q"
ok cmp "$T/a.rows" "$OUT"
unlike "$(cat "$T/a.rows")" '"level":' "no stored message is a payload's raw text"
done_testing
