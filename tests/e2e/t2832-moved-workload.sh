#!/bin/sh
# Mappings with time (issue 32): Deployment prod/payments belonged to
# release billing (its pods labelled app.kubernetes.io/instance=billing in
# October) and is its own release payments from 11-03 on (revision 1, pods
# labelled instance=payments). Today's crash loop, kubelet events without
# labels, goes to payments 1; October's probe failures stay with billing
# 12. In every order of the four inputs, in one run and a run per file;
# and the same move stated by the two releases' manifests.
. "$(dirname "$0")/lib.sh"
D=$DATA/moved-workload
FILES="$D/helm-list.json $D/exporter-billing.ndjson $D/exporter-payments.ndjson $D/events.ndjson"
WANT="billing 12 2026-10-25T08:00:05.000000Z;payments 1 2026-11-04T12:00:00.000000Z"

check() {   # check DB WHAT
	run_rt query --db "$1" -o json "SELECT release, revision, opened_at FROM incidents ORDER BY opened_at"
	is "$(jq -r 'map("\(.release) \(.revision) \(.opened_at)") | join(";")' "$OUT")" \
		"$WANT" "$2: October's failures with billing 12, today's crash loop with payments 1"
	run_rt query --db "$1" -o csv "SELECT count(*) FROM events WHERE first_ns >= 1793700000000000000 AND release <> 'payments'"
	is "$(tail -n 1 "$OUT")" 0 "$2: no event since the move left with billing"
}

# every permutation of the four files
perms() {
	python3 -c '
import itertools, sys
for p in itertools.permutations(sys.argv[1:]):
    print(" ".join(p))' $FILES
}

n=0
perms > "$T/perms"
while read -r order; do
	n=$((n + 1))
	run_rt ingest --db "$T/o$n.db" $order
	is "$RC" 0 "order $n: ingest"
	check "$T/o$n.db" "order $n"
	if [ $((n % 3)) = 1 ]; then
		for f in $order; do
			run_rt ingest --db "$T/r$n.db" "$f"
			[ "$RC" = 0 ] || is "$RC" 0 "order $n: ingest $f alone"
		done
		check "$T/r$n.db" "order $n, a run per file"
	fi
done < "$T/perms"
is "$n" 24 "all 24 orders"

# The same move stated by the releases' manifests (release Secrets):
# billing 12 lists Deployment payments (a fullnameOverride), payments 1
# lists it from 11-03 on.
SB=$D/secrets-billing.json SP=$D/secrets-payments.json EV=$D/events.ndjson
n=0
for order in "$SB $SP $EV" "$SB $EV $SP" "$SP $SB $EV" "$SP $EV $SB" \
	     "$EV $SB $SP" "$EV $SP $SB"; do
	n=$((n + 1))
	run_rt ingest --db "$T/m$n.db" $order
	run_rt query --db "$T/m$n.db" -o json "SELECT release, revision FROM incidents"
	is "$(jq -r 'map("\(.release) \(.revision)") | join(";")' "$OUT")" \
		"payments 1" "manifests, order $n: the crash loop with payments 1"
	for f in $order; do
		run_rt ingest --db "$T/mr$n.db" "$f"
	done
	run_rt query --db "$T/mr$n.db" -o json "SELECT release, revision FROM incidents"
	is "$(jq -r 'map("\(.release) \(.revision)") | join(";")' "$OUT")" \
		"payments 1" "manifests, order $n, a run per file: payments 1"
done
done_testing
