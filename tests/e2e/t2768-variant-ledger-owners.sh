#!/bin/sh
# Attribution by owner references and by a manifest's other objects. In
# namespace payments, release ledger runs a Deployment whose 51-character
# name left its pods' names cut short (generateName keeps 58 characters:
# most of the pod-template-hash and the dash before the suffix are gone),
# so only the exporter's ownerReferences (ReplicaSet, cut at the hash)
# lead to the Deployment its manifest lists; release clearing's failing
# objects are a PersistentVolumeClaim and a Service of its manifest, no
# workload. One incident per release, at the revision in force, whatever
# the order of the files, in one run or two.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/ledger-owners
INC="SELECT namespace, release, revision, attribution FROM incidents ORDER BY release"
EVT="SELECT object_kind, release, revision, attribution FROM events ORDER BY object_kind, object_name"
WANT_INC='[["payments","clearing",5,"manifest"],["payments","ledger",2,"manifest"]]'
WANT_EVT='[["PersistentVolumeClaim","clearing",5,"manifest"],["Pod","ledger",2,"manifest"],["Pod","ledger",2,"owner"],["Pod","ledger",2,"owner"],["Service","clearing",5,"manifest"]]'

check() {   # check DB WHAT
	run_rt query --db "$1" -o json "$INC"
	is "$(jq -c 'map([.namespace, .release, .revision, .attribution])' "$OUT")" \
		"$WANT_INC" "$2: one incident per release, at its revision"
	run_rt query --db "$1" -o json "$EVT"
	is "$(jq -c 'map([.object_kind, .release, .revision, .attribution])' "$OUT")" \
		"$WANT_EVT" "$2: the cut pods by their owner, the rest by the manifest"
}

run_rt ingest --db "$T/a.db" "$V/release-secrets.json" "$V/exporter.ndjson"
is "$RC" 0 "ingest, history first"
check "$T/a.db" "history first"
run_rt ingest --db "$T/b.db" "$V/exporter.ndjson" "$V/release-secrets.json"
is "$RC" 0 "ingest, history last"
check "$T/b.db" "history last"
run_rt ingest --db "$T/c.db" "$V/exporter.ndjson"
run_rt ingest --db "$T/c.db" "$V/release-secrets.json"
is "$RC" 0 "history in a later run"
check "$T/c.db" "history in a later run"
run_rt query --db "$T/c.db" -o json \
	"SELECT pods FROM incidents WHERE release = 'ledger'"
is "$(jq -r '.[0].pods | fromjson | length' "$OUT")" 3 "ledger's three pods"

# incidents and show say how the release was found
run_rt incidents --db "$T/a.db" -o json
is "$(jq -c 'map([.release, .attribution])' "$OUT")" \
	'[["ledger","manifest"],["clearing","manifest"]]' "incidents -o json: attribution"
id=$(jq -r 'map(select(.release == "ledger"))[0].id' "$OUT")
run_rt show --db "$T/a.db" "$id"
like "$(cat "$OUT")" "Release: +its objects are listed in the release's manifest" \
	"show says where the release came from"

# Without the release payloads nothing leads to the releases: the cut pod
# names stay as they are, the objects are releases of their own.
run_rt ingest --db "$T/d.db" "$V/exporter.ndjson"
run_rt query --db "$T/d.db" -o json "SELECT DISTINCT release FROM incidents ORDER BY 1"
is "$(jq -r 'map(.release) | join(" ")' "$OUT")" \
	"archive-store journal reconciliation-engine-settlement-controller-manager settle-gateway" \
	"events alone: no ledger, no clearing"
done_testing
