#!/bin/sh
# The manual stays navigable and true to the binary: README is short and
# links every docs/*.md; every relative link in README.md and docs/*.md
# names a file that exists and, with #anchor, a heading of that file (by
# GitHub's slug rules); every long option of every command's --help is in
# that command's section of docs/commands.md (consume: docs/kafka.md); every
# table and view of a new database, with each of its columns, is in its
# section of docs/schema.md. DOCS_ROOT checks another copy of the tree (to
# see the test fail on a broken one).
. "$(dirname "$0")/lib.sh"
ROOT=${DOCS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
export LC_ALL=C

# slugs FILE: the anchor of every heading outside code fences, one a line.
# GitHub's rules: the heading's text (a link's text, not its target),
# lower case, punctuation but - and _ dropped, spaces to -, a repeated
# slug suffixed -1, -2...
slugs() {
	awk '/^```/ { fence = !fence; next }
	fence || !/^#+ / { next }
	{
		s = $0; sub(/^#+ +/, "", s); sub(/ +#* *$/, "", s)
		gsub(/\]\([^)]*\)/, "", s)
		s = tolower(s); gsub(/[^a-z0-9 _-]/, "", s); gsub(/ /, "-", s)
		if (s in seen) { n = seen[s]++; print s "-" n } else { seen[s] = 1; print s }
	}' "$1"
}

# links FILE: the target of every inline link and image outside code
# (fences and `spans`), one a line.
links() {
	awk '/^```/ { fence = !fence; next }
	fence { next }
	{
		s = $0; gsub(/`[^`]*`/, "", s)
		while (match(s, /\]\([^)]+\)/)) {
			print substr(s, RSTART + 2, RLENGTH - 3)
			s = substr(s, RSTART + RLENGTH)
		}
	}' "$1"
}

# section FILE HEADING: the lines from "HEADING" (a whole line) to the next
# heading of the same or a higher level.
section() {
	awk -v h="$2" '/^```/ { fence = !fence }
	!fence && $0 == h { on = 1; lvl = index(h, " "); print; next }
	on && !fence && /^#+ / && index($0, " ") <= lvl { exit }
	on' "$1"
}

# README: short, and a door to every page of docs/
n=$(wc -l <"$ROOT/README.md")
[ "$n" -lt 300 ]; _result $? "README.md has $n lines, under 300"
links "$ROOT/README.md" >"$T/readme-links"
for f in "$ROOT"/docs/*.md; do
	name=docs/$(basename "$f")
	grep -qE "^(\./)?$name(#|\$)" "$T/readme-links"
	_result $? "README links $name"
done

# every relative link resolves, to a file and to a heading of it
for f in "$ROOT/README.md" "$ROOT"/docs/*.md; do
	rel=${f#"$ROOT"/}
	dir=$(dirname "$f")
	nl=0 bad=0
	links "$f" >"$T/links"
	while IFS= read -r l; do
		case $l in
		http://* | https://* | mailto:*) continue ;;
		esac
		nl=$((nl + 1))
		path=${l%%#*} anchor=
		case $l in *'#'*) anchor=${l#*#} ;; esac
		target=$f
		[ -n "$path" ] && target=$dir/$path
		if [ ! -e "$target" ]; then
			_result 1 "$rel: link $l: no such file"; bad=1; continue
		fi
		[ -z "$anchor" ] && continue
		slugs "$target" >"$T/slugs"
		grep -qxF -- "$anchor" "$T/slugs" ||
			{ _result 1 "$rel: link $l: no such heading"; bad=1; }
	done <"$T/links"
	[ "$bad" = 0 ] && _result 0 "$rel: its $nl relative links resolve"
done

# every long option of every --help, in its command's section
C=$ROOT/docs/commands.md
section "$C" '### Input options' >"$T/input-options"
for cmd in ingest incidents show report query consume fleet classify rules; do
	if [ "$cmd" = consume ]; then
		cp "$ROOT/docs/kafka.md" "$T/sec"
	else
		section "$C" "## revtrail $cmd" >"$T/sec"
		cat "$T/input-options" >>"$T/sec"
	fi
	like "$(head -n 1 "$T/sec")" . "a section documents revtrail $cmd"
	"$REVTRAIL" "$cmd" --help >"$T/help" 2>&1
	n=0
	for o in $(grep -oE -- '--[a-z][a-z-]+' "$T/help" | sort -u); do
		[ "$o" = --help ] && continue
		n=$((n + 1))
		grep -qE -- "$o([^a-z-]|\$)" "$T/sec" ||
			{ _result 1 "docs: $cmd $o"; n=-1000; }
	done
	[ "$n" -gt 0 ] && _result 0 "docs: the $n long options of $cmd --help"
done

# every table and view of a new database, and each of its columns
S=$ROOT/docs/schema.md
DB=$T/docs.db
run_rt ingest --db "$DB" "$DATA"/scenarios/*/*
is "$RC" 0 "ingest the field reports"
run_rt query --db "$DB" -o csv --no-headers "SELECT name FROM sqlite_master
	WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite%' ORDER BY 1"
cp "$OUT" "$T/tables"
like "$(cat "$T/tables")" '^incidents$' "the database lists its tables"
while IFS= read -r t; do
	h=$(grep -xE "## $t( \(view\))?" "$S" | head -n 1)
	[ -n "$h" ] || { _result 1 "schema.md: a section for $t"; continue; }
	section "$S" "$h" >"$T/sec"
	run_rt query --db "$DB" -o csv --no-headers \
		"SELECT name FROM pragma_table_info('$t')"
	n=0 miss=
	while IFS= read -r c; do
		n=$((n + 1))
		grep -qF -- "\`$c\`" "$T/sec" || miss="$miss $c"
	done <"$OUT"
	is "$miss" "" "schema.md: the $n columns of $t"
done <"$T/tables"
done_testing
