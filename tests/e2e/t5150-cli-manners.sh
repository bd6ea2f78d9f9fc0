#!/bin/sh
# kubectl manners: nothing cut into a pipe (a terminal's table still fits
# it); -n=NS and --namespace=NS; every error "revtrail CMD:", getopt's own
# silenced; "did you mean" for commands and long options; `help COMMAND`;
# --help with one line per option, its default and an example; hints that
# work when pasted (--db, shell-quoted); merged ids explained when an id
# is not found.
. "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../examples/field-reports" && pwd)
DB=$T/o.db
unset COLUMNS NO_COLOR

# display columns: the ellipsis is one (awk may count bytes)
longest() { sed 's/…/./g' "$1" | awk '{ n = length($0); if (n > m) m = n } END { print m + 0 }'; }

run_rt ingest --db "$DB" "$EX"/*/*
is "$RC" 0 "ingest the field reports"

# ---- width: a pipe or a file gets whole values ---------------------------
COLUMNS=40 run_rt incidents --db "$DB"
is "$RC" 0 "incidents into a file"
like "$(cat "$OUT")" ' kube-system/rke2-ingress-nginx +2 ' "incidents | cat carries whole values"
unlike "$(cat "$OUT")" '…' "nothing cut into a pipe, whatever COLUMNS says"
# a table of more rows than are measured: later wide cells push their line
run_rt query --db "$DB" "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1200)
	SELECT i, CASE WHEN i = 1200 THEN 'a-value-wider-than-its-column' ELSE 'x' END AS v FROM c"
like "$(tail -n 1 "$OUT")" '^1200 +a-value-wider-than-its-column$' "a streamed row is not cut"
if command -v script >/dev/null 2>&1; then
	# script's terminal has no size here: COLUMNS stands for it
	COLUMNS=60 TERM=xterm script -qec "'$REVTRAIL' incidents --db '$DB' --color never" /dev/null </dev/null >"$T/tty" 2>&1
	sed 's/\r$//' "$T/tty" >"$OUT"
	ok test "$(longest "$OUT")" -le 60
	like "$(cat "$OUT")" '…' "a terminal's table is still fitted to its width"
else
	echo "ok $((_n + 1)) # SKIP no script(1) for a terminal"; _n=$((_n + 1))
fi

# ---- -n=NS, --namespace=NS -------------------------------------------------
run_rt incidents --db "$DB" -n prod -o json
want=$(jq -r 'map(.id) | join(",")' "$OUT")
is "$want" 3 "-n prod"
for form in "-n=prod" "--namespace=prod" "-nprod" "--namespace prod" "-An=prod"; do
	# shellcheck disable=SC2086
	run_rt incidents --db "$DB" $form -o json
	if [ "$form" = "-An=prod" ]; then
		is "$RC" 2 "$form: -A and -n still exclude each other"
		continue
	fi
	is "$RC:$(jq -r 'map(.id) | join(",")' "$OUT")" "0:$want" "$form is -n prod"
done
run_rt incidents --db "$DB" -o=json -n=prod
is "$(jq -r 'map(.id) | join(",")' "$OUT")" "$want" "-o=json: every short option with a value"
run_rt incidents --db "$DB" -n==prod -o json
is "$RC:$(jq -r 'length' "$OUT")" "0:0" "-n==prod is the namespace '=prod'"
run_rt incidents --db "$DB" -n=
is "$RC" 2 "-n= (no value) is a usage error"
like "$(cat "$ERR")" "^revtrail incidents: option '-n' needs a value" "and says so"

# ---- errors: one prefix, getopt silenced -----------------------------------
errors_prefixed() {   # every stderr line is ours: the prefix, or the --help hint
	is "$(grep -vE "^(revtrail $1: |run 'revtrail $1 --help' for its options$)" "$ERR")" "" "$2: every line prefixed"
}
run_rt incidents --db "$DB" --bogus
is "$RC" 2 "an unknown option: usage error"
like "$(head -n 1 "$ERR")" "^revtrail incidents: unknown option '--bogus'$" "named, with the prefix"
errors_prefixed incidents "--bogus"
run_rt show --db "$DB" -Z 1
like "$(head -n 1 "$ERR")" "^revtrail show: unknown option '-Z'$" "an unknown short option"
errors_prefixed show "-Z"
run_rt query --db
like "$(head -n 1 "$ERR")" "^revtrail query: option '--db' needs a value$" "a missing value"
errors_prefixed query "--db"
run_rt ingest --db "$T/e.db" -d
like "$(head -n 1 "$ERR")" "^revtrail ingest: option '-d' needs a value$" "a missing value of a short option"
run_rt incidents --db "$DB" --open=yes
like "$(head -n 1 "$ERR")" "^revtrail incidents: option '--open' takes no value$" "an unwanted value"
errors_prefixed incidents "--open=yes"
run_rt ingest --db "$T/e.db" --re x </dev/null
like "$(head -n 1 "$ERR")" "^revtrail ingest: option '--re' is ambiguous: --regap, --retain, --release$" "an ambiguous abbreviation"
run_rt consume -b 127.0.0.1:1 -t x -G g --bach-ms 5
like "$(head -n 1 "$ERR")" "^revtrail consume: unknown option '--bach-ms' \\(did you mean '--batch-ms'\\?\\)$" "consume's options too"

# ---- did you mean ----------------------------------------------------------
run_rt ingst
is "$RC" 2 "an unknown command: usage error"
like "$(head -n 1 "$ERR")" "^revtrail: unknown command 'ingst': did you mean 'ingest'\\?$" "did you mean 'ingest'"
run_rt incdients
like "$(head -n 1 "$ERR")" "did you mean 'incidents'\\?" "a swap of two letters is one edit"
run_rt frobnicate
like "$(head -n 1 "$ERR")" "^revtrail: unknown command 'frobnicate'$" "nothing near: no suggestion"
run_rt incidents --db "$DB" --nmespace prod
like "$(head -n 1 "$ERR")" "unknown option '--nmespace' \\(did you mean '--namespace'\\?\\)" "did you mean '--namespace'"
run_rt incidents --db "$DB" --oepn
like "$(head -n 1 "$ERR")" "did you mean '--open'\\?" "a transposition"
run_rt ingest --db "$T/e.db" --gpa=15m </dev/null
like "$(head -n 1 "$ERR")" "unknown option '--gpa' \\(did you mean '--gap'\\?\\)" "a value after = is not part of the name"
run_rt incidents --db "$DB" --zzzzzzzz
like "$(head -n 1 "$ERR")" "^revtrail incidents: unknown option '--zzzzzzzz'$" "nothing within two edits: no suggestion"

# ---- help ------------------------------------------------------------------
run_rt help
like "$(cat "$OUT")" "^usage: revtrail COMMAND" "help: the commands"
for cmd in ingest incidents show report query consume classify rules; do
	run_rt "$cmd" --help
	is "$RC" 0 "$cmd --help exits 0"
	cp "$OUT" "$T/help.$cmd"
	run_rt help "$cmd"
	is "$RC:$(cat "$OUT")" "0:$(cat "$T/help.$cmd")" "revtrail help $cmd is $cmd --help"
	# one line per option: a long option, then what it does
	bare=$(grep -E '^  (-[a-zA-Z], )?--[a-z]' "$OUT" | grep -vE '^  (-[a-zA-Z], |    )?--[a-z-]+( [^ ]+)?  +[a-z"]' || true)
	is "$bare" "" "$cmd --help: every option with a description"
	like "$(sed -n '/^example:$/{n;p;}' "$OUT")" "^  (.*\\| )?revtrail $cmd " "$cmd --help: an example"
done
like "$(cat "$T/help.ingest")" "^      --gap DURATION +the quiet gap .*\\(default: 15m" "ingest --help: a default"
like "$(cat "$T/help.show")" "^  -o, --output text\\|json\\|html +.*\\(default: text\\)" "show --help: -o and its default"
like "$(cat "$T/help.classify")" "^      --max-record BYTES +.*\\(default: 4M\\)" "classify --help: --max-record's default"
run_rt help ingst
like "$(head -n 1 "$ERR")" "did you mean 'ingest'\\?" "help ingst: did you mean"

# ---- hints work when pasted ------------------------------------------------
paste_run() {   # paste_run LINE: the revtrail command in LINE, run by sh
	cmd=$(printf '%s\n' "$1" | sed -n "s/.*(\\(revtrail .*\\))\$/\\1/p; s/.*(run \\(revtrail .*\\) first)\$/\\1/p; s/.*; \\(revtrail .*\\) lists them\$/\\1/p")
	[ -n "$cmd" ] || { _result 1 "a command in: $1"; return; }
	RC=0
	(cd "$T/elsewhere" && sh -c "REVTRAIL=\$1; shift; $(printf '%s' "$cmd" | sed 's/^revtrail/"$REVTRAIL"/')" sh "$REVTRAIL") >"$OUT" 2>"$ERR" </dev/null || RC=$?
}
mkdir -p "$T/elsewhere" "$T/it's here"
Q="$T/it's here/long timeline.db"
L=$(ls "$EX"/stale-config-mount/haproxy-ingress-5f4d7c9b6-p7k4n_*.log)
mkdir "$T/long" && cp "$EX"/stale-config-mount/* "$T/long/"
i=100
while [ $i -lt 660 ]; do   # past show's 200 and the page's 500
	printf '2024-09-05T12:%02d:%02d.000000Z stderr F [ALERT]    (1) : Error opening configuration file /etc/haproxy/h-%d.cfg: No such file or directory\n' \
		$((3 + i / 60 % 2)) $((i % 60)) $i
	i=$((i + 1))
done >>"$T/long/$(basename "$L")"
run_rt ingest --db "$Q" "$T/long"/*
is "$RC" 0 "ingest a long timeline into a path with a quote and a space"
run_rt show --db "$Q" 1
like "$(tail -n 1 "$OUT")" "more \\(revtrail query --db " "the timeline's hint names the database"
n=$(tail -n 1 "$OUT" | sed -n 's/^  \.\.\. \([0-9]*\) more.*/\1/p')
paste_run "$(tail -n 1 "$OUT")"
is "$RC" 0 "the hint runs when pasted"
ok test "$(grep -c . "$OUT")" -gt "$n"
run_rt show --db "$Q" -o html 1
like "$(cat "$OUT")" "more entries: revtrail query --db &#39;[^<]*long timeline.db" "the HTML page's hint names the database too (quoted, as HTML)"
run_rt incidents --db "$T/it's here/missing.db"
is "$RC" 1 "a missing database"
paste_run "$(cat "$ERR")"
is "$RC" 0 "its hint (ingest --db PATH) runs when pasted"
ok test -s "$T/it's here/missing.db"

# ---- merged ids --------------------------------------------------------------
run_rt show --db "$DB" --db "$Q" 1
is "$RC" 1 "show 1 of two databases: not found"
like "$(cat "$ERR")" "^revtrail show: no incident 1 among the 2 databases read as one: .*incident 1 of the first --db is 101, of the second 102" "merged ids explained"
paste_run "$(cat "$ERR")"
like "$(cat "$OUT")" "^101 " "the listing it names has 101"
run_rt show --db "$DB" --db "$Q" 101
is "$RC" 0 "show 101 finds it"
run_rt show --db "$DB" 9
is "$(cat "$ERR")" "revtrail show: no incident 9" "one database: no talk of merged ids"
done_testing
