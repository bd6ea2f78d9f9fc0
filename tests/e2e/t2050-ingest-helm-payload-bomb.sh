#!/bin/sh
# A Helm release Secret is small on the wire and may be anything once
# inflated: 64 KB of gzip becomes 63 MB of JSON (just under the 64 MiB
# inflate cap), which as one cJSON tree took 2.65 GB. Only the members
# the decoder reads are parsed, under a budget, so peak RSS stays under
# 256 MiB for any such record, the revision still comes out of the
# payload's info, and the records around it are kept.
. "$(dirname "$0")/lib.sh"

# bomb KIND NAME: a release Secret as `kubectl get secret -l owner=helm
# -o json` prints it, data.release = base64(base64(gzip(release JSON))).
bomb() {
	python3 - "$1" "$2" <<'PY'
import base64, gzip, json, sys
kind, name = sys.argv[1], sys.argv[2]
n = 63 << 20
head = ('{"name":"%s","namespace":"prod","version":3,"info":{"status":'
        '"deployed","description":"Upgrade complete","last_deployed":'
        '"2024-11-03T14:41:07.512874Z"},"chart":{"metadata":{"name":"%s",'
        '"version":"1.0.0","appVersion":"2"}},' % (name, name))
if kind == "tree":       # a dense tree of tiny values
    body = '"config":{"a":[' + "0," * ((n - len(head)) // 2) + '0]},"manifest":""}'
elif kind == "hooks":    # the same inside a member the decoder reads
    body = '"hooks":[{"name":"h","x":[' + "0," * ((n - len(head)) // 2) + '0]}],"manifest":""}'
elif kind == "manifest": # one long string
    body = '"manifest":"' + "a" * (n - len(head)) + '"}'
else:                    # an ordinary small release
    body = '"hooks":[],"manifest":"kind: Deployment\\n"}'
inner = base64.b64encode(gzip.compress((head + body).encode(), 9))
print(json.dumps({"apiVersion": "v1", "kind": "Secret",
    "type": "helm.sh/release.v1",
    "metadata": {"name": "sh.helm.release.v1.%s.v3" % name,
                 "namespace": "prod",
                 "labels": {"owner": "helm", "name": name,
                            "status": "deployed", "version": "3"}},
    "data": {"release": base64.b64encode(inner).decode()}}))
PY
}

bomb small before >"$T/before.json"
bomb small after >"$T/after.json"
for kind in tree hooks manifest; do
	bomb "$kind" "bomb-$kind" >"$T/bomb.json"
	size=$(wc -c <"$T/bomb.json")
	ok test "$size" -lt 200000
	DB=$T/$kind.db
	RC=0
	/usr/bin/time -f %M -o "$T/rss" "$REVTRAIL" ingest --db "$DB" -v \
		"$DATA/formats/events-watch.json" "$T/before.json" \
		"$T/bomb.json" "$T/after.json" >"$OUT" 2>"$ERR" || RC=$?
	is "$RC" 0 "$kind: ingest of a ${size}-byte line that inflates to 63 MB"
	if [ "$kind" = hooks ]; then
		like "$(cat "$ERR")" 'helm: bomb-hooks: release payload members over 64 MiB as a tree were left out' \
			"hooks: -v says what was left out"
	fi
	rss=$(cat "$T/rss")
	ok test "$rss" -lt $((256 * 1024))
	diag "$kind: peak RSS ${rss} KiB"
	run_rt query --db "$DB" -o json "SELECT release, chart, status, updated_at FROM revisions ORDER BY release"
	is "$(jq -r 'map(.release) | join(",")' "$OUT")" "after,before,bomb-$kind" \
		"$kind: the records around it are kept"
	is "$(jq -r ".[] | select(.release == \"bomb-$kind\") | \"\(.chart) \(.updated_at)\"" "$OUT")" \
		"bomb-$kind-1.0.0 2024-11-03T14:41:07.512874Z" \
		"$kind: the bomb's revision is read from its payload"
	run_rt query --db "$DB" -o json "SELECT count(*) AS n FROM events"
	ok test "$(jq -r '.[0].n' "$OUT")" -gt 0
done
done_testing
