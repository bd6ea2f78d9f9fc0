# lib.sh: the helper every end-to-end test sources. TAP output for prove.
#   . "$(dirname "$0")/lib.sh"
#   run_rt classify x.log      # runs $REVTRAIL, stdout -> $OUT, stderr -> $ERR, exit -> $RC
#   ok CMD...                   passes when CMD exits 0
#   is GOT WANT NAME            string equality
#   like GOT REGEX NAME         grep -E on GOT
#   unlike GOT REGEX NAME
#   wait_events DB MIN         polls until MIN events are committed (10 s max)
#   done_testing
# Never pipe the binary into another command inside an assertion: a pipe
# hides crashes. Capture with run_rt, then assert on the files.
set -u
# Helm's tables print times in the zone helm ran in, which revtrail reads
# from TZ: every test runs in UTC unless it names a zone itself.
TZ=UTC
export TZ
: "${REVTRAIL:=$(cd "$(dirname "$0")/../.." && pwd)/revtrail}"
DATA=$(cd "$(dirname "$0")/../data" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/revtrail-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
OUT=$T/stdout ERR=$T/stderr RC=0
_n=0 _failed=0

_result() {   # _result STATUS NAME
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_n - $2"
	else
		echo "not ok $_n - $2"
		_failed=$((_failed + 1))
	fi
	return "$1"
}

diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

run_rt() {
	RC=0
	"$REVTRAIL" "$@" >"$OUT" 2>"$ERR" || RC=$?
	# A sanitizer report or a crash fails the test that caused it.
	if [ "$RC" -ge 128 ] || grep -qE '(ERROR|WARNING): (Address|Leak|Undefined|Thread|Memory)Sanitizer|runtime error:' "$ERR"; then
		_result 1 "revtrail $* ran cleanly (exit $RC)"
		diag "$(head -c 3000 "$ERR")"
	fi
	return 0
}

ok() {
	local name="$*" rc=0
	"$@" >"$T/ok.out" 2>&1 || rc=$?
	_result $rc "$name" || diag "$(head -c 2000 "$T/ok.out")"
}

is() {
	if [ "$1" = "$2" ]; then _result 0 "$3"; else
		_result 1 "$3"; diag "got:  $1" "want: $2"; fi
}

like() {
	if printf '%s\n' "$1" | grep -qE -- "$2"; then _result 0 "$3"; else
		_result 1 "$3"; diag "got:  $(printf '%s' "$1" | head -c 2000)" "want match: $2"; fi
}

unlike() {
	if printf '%s\n' "$1" | grep -qE -- "$2"; then
		_result 1 "$3"; diag "got:  $(printf '%s' "$1" | head -c 2000)" "want no match: $2"; else _result 0 "$3"; fi
}

# JSON output is read with jq (installed by .ci/run, a test-only tool).
events_committed() {   # events_committed DB: events committed so far, or -1
	"$REVTRAIL" query --db "$1" -o csv "SELECT count(*) FROM events" \
		> "$T/n" 2>/dev/null && tail -n 1 "$T/n" || echo -1
}

wait_events() {   # wait_events DB MIN: polls until MIN events are committed, 10 s max
	_i=0
	while [ "$(events_committed "$1")" -lt "$2" ]; do
		[ $_i -ge 100 ] && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
}

# in_every_order NAME CHECK A B C: ingests the files A, B and C in each of
# their six orders, once in one run and once a run per file, and calls
# CHECK DB "NAME N" (and "NAME N, a run per file") on each database: the
# attribution a test expects must not depend on what arrives first.
in_every_order() {
	_name=$1 _check=$2 _k=0
	shift 2
	for _order in "$1 $2 $3" "$1 $3 $2" "$2 $1 $3" "$2 $3 $1" \
		      "$3 $1 $2" "$3 $2 $1"; do
		_k=$((_k + 1))
		_db="$T/$(printf '%s' "$_name" | tr ' /' '__')-$_k"
		run_rt ingest --db "$_db.db" $_order
		is "$RC" 0 "$_name $_k: ingest"
		"$_check" "$_db.db" "$_name $_k"
		for _f in $_order; do
			run_rt ingest --db "$_db-runs.db" "$_f"
			[ "$RC" = 0 ] || is "$RC" 0 "$_name $_k: ingest $_f alone"
		done
		"$_check" "$_db-runs.db" "$_name $_k, a run per file"
	done
}

# wait_line FILE REGEX: polls until a line of FILE matches, 2 s at most
wait_line() {
	_i=0
	until grep -qE -- "$2" "$1"; do
		[ $_i -ge 40 ] && return 1
		sleep 0.05
		_i=$((_i + 1))
	done
}

done_testing() {
	echo "1..$_n"
	[ "$_failed" -eq 0 ]
}
