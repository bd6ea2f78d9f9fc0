#!/bin/sh
# classify's output is whole or it fails: a full disk (/dev/full) exits 1
# with a message instead of 0 with every record lost; and "fields" holds
# each key once, a rule's capture winning over the field the decoder set
# (two rules that capture the same name: the first rule's).
. "$(dirname "$0")/lib.sh"
jq -nc '{kind: "Event", type: "Warning", reason: "Failed",
	message: "Error: UPGRADE FAILED: release x failed, and has been rolled back due to atomic being set: timed out",
	involvedObject: {kind: "Pod", name: "payments-api-1", namespace: "prod",
		labels: {"app.kubernetes.io/instance": "payments-api"}}}' > "$T/in.ndjson"

run_rt classify "$T/in.ndjson"
is "$RC" 0 "classify"
like "$(cat "$OUT")" '"release":"x"' "the rule's capture is in fields"
ok python3 -c '
import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "repeated keys: %r" % keys
    return dict(pairs)
for line in open(sys.argv[1]):
    rec = json.loads(line, object_pairs_hook=once)
    assert rec["fields"]["release"] == "x", rec["fields"]
' "$OUT"

if [ -w /dev/full ]; then
	RC=0
	"$REVTRAIL" classify --all "$T/in.ndjson" >/dev/full 2>"$ERR" || RC=$?
	is "$RC" 1 "classify > /dev/full exits 1"
	like "$(cat "$ERR")" '^revtrail classify: .*(No space left on device|writing)' "and says why"
	# a large output fails the same way while it is written, not at exit
	for i in $(seq 2000); do cat "$T/in.ndjson"; done > "$T/big.ndjson"
	RC=0
	"$REVTRAIL" classify --all "$T/big.ndjson" >/dev/full 2>"$ERR" || RC=$?
	is "$RC" 1 "a large classify > /dev/full exits 1"
else
	echo "ok 99 # skip no /dev/full"
fi
done_testing
