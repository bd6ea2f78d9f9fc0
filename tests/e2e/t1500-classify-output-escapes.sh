#!/bin/sh
# classify writes its JSON strings 16 bytes at a time with a byte loop for
# the tail: messages holding a quote, a backslash or a control byte at
# every position around the 16-byte steps come back through jq unchanged.
. "$(dirname "$0")/lib.sh"

base='Back-off restarting failed container web in pod web-1'
for pos in 0 1 14 15 16 17 31 32 33 47 48 53; do
	for c in '"' '\' "$(printf '\001')" "$(printf '\037')" \
		 "$(printf '\177')" "$(printf '\t')" "$(printf '\r')" 'é'; do
		jq -nc --arg b "$base" --arg c "$c" --argjson at $pos '{
			kind: "Event", type: "Warning", reason: "BackOff",
			message: ($b[:$at] + $c + $b[$at:]),
			involvedObject: {kind: "Pod", name: "web-1",
					 namespace: "shop"}}'
	done
done > "$T/in.ndjson"

run_rt classify --all "$T/in.ndjson"
is "$RC" 0 "classify exits 0"
cp "$OUT" "$T/out.jsonl"
is "$(jq -c -s 'length' "$T/out.jsonl")" 96 "one record a line"
is "$(jq -c -s 'map(.message)' "$T/out.jsonl")" \
	"$(jq -c -s 'map(.message)' "$T/in.ndjson")" \
	"every message comes back as it went in"
# jq takes a raw DEL; cli_json_str's form escapes it, as all below 0x20.
is "$(LC_ALL=C grep -c "$(printf '[\001-\037\177]')" "$T/out.jsonl")" 0 \
	"no raw control byte or DEL in the output"
is "$(grep -o '\\u00[0-7][0-9a-f]' "$T/out.jsonl" | sort | uniq -c | tr -s ' ')" \
	"$(printf ' 12 %s\n' '\u0001' '\u001f' '\u007f')" \
	"controls without a short escape and DEL as \\u00XX"
done_testing
