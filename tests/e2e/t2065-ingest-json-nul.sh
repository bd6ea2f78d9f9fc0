#!/bin/sh
# A \u0000 inside a JSON string cut it where cJSON decoded it: an Event's
# involvedObject.name "a\u0000b" was stored as the pod "a" and joined that
# pod's incidents. Such a record is rejected and counted (a NUL is in no
# Kubernetes name, and a cut one would be a different name), the records
# around it are kept, and an escaped backslash before u0000 is plain text.
. "$(dirname "$0")/lib.sh"
DB=$T/n.db
ev() {   # ev NAME-JSON-TEXT REASON
	printf '{"kind":"Event","type":"Warning","reason":"%s","message":"Back-off restarting failed container api in pod x","firstTimestamp":"2024-11-03T14:41:12Z","lastTimestamp":"2024-11-03T14:41:12Z","involvedObject":{"kind":"Pod","name":"%s","namespace":"prod"}}\n' "$2" "$1"
}
{
	ev 'payments-api-1' BackOff
	ev 'payments-api-1\u0000evil' BackOff
	ev 'payments-api-2\\u0000' BackOff
	ev 'payments-api-3' BackOff
} > "$T/in.ndjson"
run_rt ingest --db "$DB" -v "$T/in.ndjson"
is "$RC" 0 "ingest"
like "$(cat "$ERR")" '3 records, .*1 rejected' "the record with a NUL: rejected and counted"
like "$(cat "$ERR")" 'reject: .*in\.ndjson:[0-9]+: .*NUL' "and -v says why"
run_rt query --db "$DB" -o csv --no-headers \
	"SELECT DISTINCT object_name FROM events ORDER BY 1"
is "$(cat "$OUT")" 'payments-api-1
payments-api-2\u0000
payments-api-3' "no name was cut; the escaped backslash kept its text"

# classify reads the same way
run_rt classify --all "$T/in.ndjson"
like "$(cat "$ERR")" '3 records, .*1 rejected' "classify: rejected and counted"
is "$(jq -s 'map(select(.fields.name == "payments-api-1")) | length' "$OUT")" 1 \
	"classify: no cut name reads as payments-api-1"
done_testing
