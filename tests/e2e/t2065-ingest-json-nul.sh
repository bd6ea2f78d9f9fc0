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

# A Helm release payload (base64(base64(gzip(JSON))) in a Secret) is JSON
# of its own: a \u0000 in it would cut the chart's name the same way, so
# the payload is not read and the Secret's labels give the revision.
python3 - >"$T/secret.json" <<'PY'
import base64, gzip, json
rel = ('{"name":"shop","namespace":"prod","version":3,"info":{"status":'
       '"deployed","description":"Upgrade complete","last_deployed":'
       '"2024-11-03T14:41:07.512874Z"},"chart":{"metadata":{"name":'
       '"shop\\u0000evil","version":"1.0.0","appVersion":"2"}},'
       '"hooks":[],"manifest":"kind: Deployment\\n"}')
inner = base64.b64encode(gzip.compress(rel.encode(), 9))
print(json.dumps({"apiVersion": "v1", "kind": "Secret",
    "type": "helm.sh/release.v1",
    "metadata": {"name": "sh.helm.release.v1.shop.v3", "namespace": "prod",
                 "labels": {"owner": "helm", "name": "shop",
                            "status": "deployed", "version": "3"}},
    "data": {"release": base64.b64encode(inner).decode()}}))
PY
python3 -c 'import base64,gzip,json,sys; d=json.load(open(sys.argv[1])); print(gzip.decompress(base64.b64decode(base64.b64decode(d["data"]["release"]))).decode())' "$T/secret.json" > "$T/payload.txt"
like "$(cat "$T/payload.txt")" 'shop\\u0000evil' "the fixture's payload holds the escape"
run_rt ingest --db "$T/h.db" -v "$T/secret.json"
is "$RC" 0 "ingest the Secret"
like "$(cat "$ERR")" 'helm: shop: .*\\u0000' "-v says the payload was not read"
run_rt query --db "$T/h.db" -o json "SELECT release, revision, status, chart FROM revisions"
is "$(jq -c '.[0] | [.release, .revision, .status]' "$OUT")" '["shop",3,"deployed"]' "the revision from the labels"
unlike "$(jq -r '.[0].chart' "$OUT")" '^shop-1\.0\.0$' "no chart name cut at the NUL"
done_testing
