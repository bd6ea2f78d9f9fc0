#!/bin/sh
# Bad input never crashes classify and never loses the good records around
# it: invalid UTF-8, NUL bytes, binary junk, malformed and unterminated JSON,
# a giant line. Each is counted; the good lines still come out tagged.
. "$(dirname "$0")/lib.sh"

good='Error: INSTALLATION FAILED: cannot re-use a name that is still in use'
{
	echo "$good"
	printf 'bad utf-8 \377\376 then MountVolume.SetUp failed for volume "c" : configmap "c1" not found\n'
	echo "$good"
	printf 'nul \000 byte: Back-off restarting failed container web in pod web-1\n'
	head -c 3000 /dev/urandom | tr -d '\n'; echo
	echo "$good"
	echo '{"message": "malformed json: OOMKilled", '
	echo "$good"
	awk 'BEGIN { s = "x"; while (length(s) < 300000) s = s s; print "giant " s " permission denied" }'
	echo "$good"
	echo '{'
	echo '    "unterminated": "pretty object'
	echo "$good"
} > "$T/junk.txt"

run_rt classify --max-record 65536 "$T/junk.txt"
is "$RC" 0 "classify exits 0 on junk"
jq -c -s '[.[] | select(.message == "'"$good"'")] | length' "$OUT" > "$T/n"
is "$(cat "$T/n")" 6 "all six good lines around the junk are classified"
jq -c -s '[.[] | select(.tags | index("configmap_not_found"))] | length' "$OUT" > "$T/n"
is "$(cat "$T/n")" 1 "a line with invalid UTF-8 is repaired and classified"
jq -c -s '[.[] | select(.tags | index("crashloop"))] | length' "$OUT" > "$T/n"
is "$(cat "$T/n")" 1 "a line with a NUL byte is still classified"
jq -c -s '[.[] | select(.tags | index("oom_killed"))] | length' "$OUT" > "$T/n"
is "$(cat "$T/n")" 1 "a line that only looks like JSON is classified as text"
like "$(cat "$ERR")" ' 1 truncated' "truncation is counted in the summary"
like "$(cat "$ERR")" '[1-9][0-9]* invalid UTF-8' "invalid UTF-8 is counted"
like "$(cat "$ERR")" '[1-9][0-9]* binary' "binary junk is counted"
# The giant line matches nothing once cut (its tail is gone): only --all
# prints it.
run_rt classify --all --max-record 65536 "$T/junk.txt"
jq -r -s '[.[] | select(.truncated) | .message[0:6]] | join(",")' "$OUT" > "$T/n"
is "$(cat "$T/n")" "giant " "the giant line is truncated, not dropped silently"
jq -r -s '[.[] | select(.truncated) | .message | length] | join(",")' "$OUT" > "$T/n"
like "$(cat "$T/n")" '^6[0-9]{4}$' "cut near --max-record"

run_rt classify --max-record nonsense "$T/junk.txt"
is "$RC" 2 "a bad option value exits 2"
like "$(cat "$ERR")" 'max-record' "and names the option"

run_rt classify "$T/does-not-exist.log"
is "$RC" 1 "a missing input file exits 1"
like "$(cat "$ERR")" 'does-not-exist.log' "and names the file"

run_rt classify --format nosuch "$T/junk.txt"
is "$RC" 2 "an unknown --format exits 2"
done_testing
