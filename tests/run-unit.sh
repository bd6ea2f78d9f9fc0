#!/bin/sh
# Runs every C unit test binary as one TAP stream, so prove counts them with
# the end-to-end scripts. UNIT_DIR is set by `make test`.
n=0 failed=0
for t in "$UNIT_DIR"/test_*; do
	[ -x "$t" ] || continue
	case "$t" in *.o|*.d) continue ;; esac
	n=$((n + 1))
	out=$("$t" 2>&1); rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok $n - $(basename "$t")"
	else
		echo "not ok $n - $(basename "$t") (exit $rc)"
		printf '%s\n' "$out" | grep -v '^ok ' | sed 's/^/# /'
		failed=1
	fi
done
# No binaries (a wrong UNIT_DIR, a build that made none) is a failure, not
# an empty pass.
if [ "$n" -eq 0 ]; then
	echo "not ok 1 - no unit test binaries in '${UNIT_DIR:-}'"
	echo "1..1"
	exit 1
fi
echo "1..$n"
exit $failed
