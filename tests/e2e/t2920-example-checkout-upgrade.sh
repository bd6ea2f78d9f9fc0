#!/bin/sh
# The bundled example examples/checkout-upgrade: revision 4 of shop/checkout
# mounts ConfigMap checkout-api-config (revision 3: checkout-config) and
# moves the image 2.7.3 -> 2.8.0; its pods cannot mount it and crash-loop.
# show names the missing object and the path in the engineer's words,
# rolls back to revision 3 first, and says what revision 4 changed (text,
# -o json `changes`, -o html). A 1.4 MB release Secret stays cheap.
. "$(dirname "$0")/lib.sh"
E=$(cd "$(dirname "$0")/../../examples/checkout-upgrade" && pwd)

run_rt ingest --db "$T/a.db" "$E"/release-secrets.json "$E"/events.ndjson "$E"/*.log
is "$RC" 0 "ingest the example"
run_rt show --db "$T/a.db" 1
show=$(cat "$OUT")
like "$show" '^Diagnosis:  stale_config_mount' "stale_config_mount"
like "$show" 'ConfigMap checkout-api-config not found \(2 pods, 7 times\)' \
	"evidence: the missing ConfigMap, its pods and times"
like "$show" '/etc/app/config.yaml: no such file \(1 pod, 3 times\)' \
	"evidence: the path the log names"
like "$show" 'Mitigate first: `helm rollback checkout 3 -n shop`' "the rollback to revision 3 first"
like "$show" 'kubectl get configmap checkout-api-config -n shop' "the remedy names the object"
unlike "$show" 'haproxy' "and nothing of another incident"
like "$show" '^What changed \(revision 3 -> 4\):' "a What changed section"
like "$show" 'volumes\[config\]\.configMap\.name: checkout-config -> checkout-api-config' \
	"both ConfigMap names"
like "$show" 'containers\[web\]\.image: .*:2\.7\.3 -> .*:2\.8\.0' "the image"
run_rt show --db "$T/a.db" -o json 1
is "$(jq -c '[.changes[] | select(.field == "volumes[config].configMap.name") | [.kind, .name, .before, .after]]' "$OUT")" \
	'[["Deployment","checkout-api","checkout-config","checkout-api-config"]]' "-o json: changes"
is "$(jq -c '.changes_revisions' "$OUT")" '[3,4]' "-o json: between revisions 3 and 4"
run_rt show --db "$T/a.db" -o html 1
like "$(cat "$OUT")" 'What changed \(revision 3 -&gt; 4\)' "-o html: the block"
like "$(cat "$OUT")" '<code>checkout-api-config</code>' "-o html: the new name"

# Events alone: no changes to compare, and nothing claims one.
run_rt ingest --db "$T/b.db" "$E"/events.ndjson
run_rt show --db "$T/b.db" -o json 1
is "$(jq -c '[.changes, .changes_revisions]' "$OUT")" '[[],null]' "no history: no changes"

# A 1.4 MB manifest: a summary bounded, ingest quick.
python3 - "$E" "$T/big.json" <<'PY'
import base64, gzip, json, sys
src = json.load(open(sys.argv[1] + "/release-secrets.json"))
item = src["items"][1]
inner = base64.b64decode(item["data"]["release"])
rel = json.loads(gzip.decompress(base64.b64decode(inner)))
filler = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: filler-{i}\ndata:\n  k: |\n" + "    x: y\n" * 40 for i in range(3000))
rel["manifest"] += filler
inner = base64.b64encode(gzip.compress(json.dumps(rel).encode()))
item["data"]["release"] = base64.b64encode(inner).decode()
json.dump({"kind": "List", "apiVersion": "v1", "items": [item]}, open(sys.argv[2], "w"))
PY
run_rt ingest --db "$T/c.db" "$T/big.json"
is "$RC" 0 "a release with a 1.4 MB manifest ingests"
run_rt query --db "$T/c.db" -o csv "SELECT length(manifest_summary) <= 65536, manifest_summary LIKE '%checkout-api-config%' FROM revisions"
is "$(tail -n 1 "$OUT")" "1,1" "its summary is bounded and keeps the workload"
done_testing
