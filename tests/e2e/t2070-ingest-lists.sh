#!/bin/sh
# Documents of any size: a List (kubectl get events|secret -o json, pretty
# or compact) is read item by item, each item bounded by --max-record, so
# no List is too large and memory stays flat in its size. A document or
# item over the bound is counted and warned about, never cut into a text
# record, and the records around it are read.
. "$(dirname "$0")/lib.sh"

# gen KIND N [ARGS]: writes kubectl's JSON of N objects to stdout.
#   events N [compact]    a List of N Warning Events, ~900 bytes each
#   secrets N             a List of N Helm release Secrets, ~9 KB each
#   secret SIZE           one release Secret of about SIZE bytes
#   normal N              a List of N Normal Events, untagged (not stored)
gen() {
	python3 - "$@" <<'PY'
import base64, gzip, json, random, sys
kind, n = sys.argv[1], int(sys.argv[2])
out = sys.stdout
def event(i, typ="Warning", reason="BackOff",
          msg="Back-off restarting failed container web in pod web-%d_prod"):
    return {"apiVersion": "v1", "kind": "Event", "count": 3,
        "firstTimestamp": "2024-11-03T14:00:00Z",
        "lastTimestamp": "2024-11-03T14:%02d:%02dZ" % (i // 60 % 60, i % 60),
        "involvedObject": {"apiVersion": "v1", "kind": "Pod",
            "name": "web-%d" % i, "namespace": "prod", "uid": "p%d" % i,
            "fieldPath": "spec.containers{web}"},
        "message": msg % i,
        "metadata": {"name": "web-%d.17f%06d" % (i, i), "namespace": "prod",
            "uid": "u-%08d" % i, "resourceVersion": str(1000 + i),
            "creationTimestamp": "2024-11-03T14:00:00Z"},
        "reason": reason, "reportingComponent": "",
        "source": {"component": "kubelet", "host": "node-1"}, "type": typ}
def release(name, rev, pad):
    rnd = random.Random(rev * 7919 + len(name))
    rel = {"name": name, "namespace": "prod", "version": rev,
        "info": {"status": "superseded" if rev > 1 else "deployed",
            "description": "Upgrade complete",
            "first_deployed": "2024-11-03T10:00:00Z",
            "last_deployed": "2024-11-03T%02d:00:00Z" % (10 + rev % 12)},
        "chart": {"metadata": {"name": name, "version": "1.%d.0" % rev,
            "appVersion": "2"}},
        "hooks": [], "manifest": "kind: Deployment\n# " +
            base64.b64encode(rnd.randbytes(pad)).decode() + "\n"}
    inner = base64.b64encode(gzip.compress(json.dumps(rel).encode(), 9, mtime=0))
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "data": {"release": base64.b64encode(inner).decode()},
        "metadata": {"name": "sh.helm.release.v1.%s.v%d" % (name, rev),
            "namespace": "prod", "creationTimestamp": "2024-11-03T10:00:00Z",
            "labels": {"name": name, "owner": "helm", "status": "deployed",
                "version": str(rev)}}}
def lst(items, compact=False):
    # kubectl: keys sorted (items before kind), four-space indent
    doc = {"apiVersion": "v1", "items": items, "kind": "List",
           "metadata": {"resourceVersion": ""}}
    if compact:
        return json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return json.dumps(doc, sort_keys=True, indent=4)
if kind == "events":
    out.write(lst([event(i) for i in range(n)], len(sys.argv) > 3) + "\n")
elif kind == "secrets":
    out.write(lst([release("app-%d" % (i // 10), i % 10 + 1, 4300)
                   for i in range(n)]) + "\n")
elif kind == "secret":
    out.write(json.dumps(release("big", 7, n * 4 // 7), sort_keys=True,
                         indent=4) + "\n")
elif kind == "normal":
    # Written item by item from one text: fast, and the generator's
    # memory stays small too.
    item = json.dumps(event(999999999, "Normal", "Scheduled",
                            "Successfully assigned prod/web-%d to node-1"),
                      sort_keys=True, indent=4)
    item = "\n".join("        " + l for l in item.split("\n"))
    out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
    for i in range(n):
        out.write((",\n" if i else "") + item.replace("999999999", str(i)))
    out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
PY
}
size() { wc -c <"$1" | tr -d ' '; }

# 5,000 Warning Events in one pretty List of 4.5 MB.
gen events 5000 >"$T/events.json"
like "$(size "$T/events.json")" '^[45][0-9]{6}$' "the Events List is over 4 MB"
run_rt ingest --db "$T/e.db" "$T/events.json"
is "$RC" 0 "the Events List is read"
like "$(cat "$ERR")" '^ingest: 5000 records, 5000 tagged, 0 rejected' "every Event is a record"
like "$(cat "$ERR")" 'events 5000 new' "and every one is stored"
unlike "$(cat "$ERR")" "over --max-record|truncated|rejected: [1-9]" "nothing over the bound, nothing cut"
run_rt query --db "$T/e.db" -o json "SELECT count(DISTINCT object_name) AS n FROM events"
is "$(jq -r '.[0].n' "$OUT")" 5000 "each row is its own Event"
run_rt ingest --db "$T/e.db" "$T/events.json"
like "$(cat "$ERR")" 'events 0 new' "the List read again adds nothing"

# The same List compact on one line: streamed as well, not cut.
gen events 5000 compact >"$T/compact.json"
run_rt ingest --db "$T/c.db" "$T/compact.json"
like "$(cat "$ERR")" 'events 5000 new' "a compact List of 4 MB: every Event stored"

# 200 release Secrets, `kubectl get secret -A -l owner=helm -o json`.
gen secrets 200 >"$T/secrets.json"
like "$(size "$T/secrets.json")" '^1[0-9]{6}$' "the Secrets List is over 1 MB"
run_rt ingest --db "$T/s.db" "$T/secrets.json"
is "$RC" 0 "the Secrets List is read"
like "$(cat "$ERR")" 'revisions 200;' "200 of 200 revisions"

# One Secret of 1.2 MB as kubectl prints it.
gen secret 1200000 >"$T/secret.json"
like "$(size "$T/secret.json")" '^1[2-3][0-9]{5}$' "the Secret is 1.2 MB"
run_rt ingest --db "$T/b.db" "$T/secret.json"
like "$(cat "$ERR")" 'revisions 1;' "its revision is read"
run_rt query --db "$T/b.db" -o json "SELECT release, revision FROM revisions"
is "$(jq -r '.[0].release + " " + (.[0].revision|tostring)' "$OUT")" "big 7" "the release's own"

# Over the bound: a List item and a whole document, good records around.
gen events 3 | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["items"][1]["message"] = "y" * 70000
print(json.dumps(d, sort_keys=True, indent=4))' >"$T/mixed.json"
head -n 20 "$T/secret.json" | grep -q '"data"' || true
cat "$T/secret.json" >>"$T/mixed.json"
gen events 2 | python3 -c '
import json, sys
for e in json.load(sys.stdin)["items"]:
    e["metadata"]["uid"] += "-after"
    print(json.dumps(e))' >>"$T/mixed.json"
item_off=$(grep -b -o '"message": "yyy' "$T/mixed.json" | head -n 1 | cut -d: -f1)
run_rt ingest --db "$T/m.db" --max-record 64k "$T/mixed.json"
is "$RC" 0 "documents over the bound do not fail the run"
like "$(cat "$ERR")" '^ingest: 4 records, 4 tagged, 2 rejected' "the good records around them are read, no text record"
like "$(cat "$ERR")" "^ingest: warning: 2 JSON documents or List items over --max-record \\(65536 bytes\\) skipped, the first at $T/mixed.json:[0-9]+: raise --max-record to read them" "counted and warned, with the file and the bound"
first=$(sed -n 's/.*skipped, the first at [^:]*:\([0-9]*\):.*/\1/p' "$ERR")
ok test "$first" -lt "$item_off"
ok test "$(dd if="$T/mixed.json" bs=1 skip="$first" count=1 2>/dev/null)" = "{"
run_rt ingest --db "$T/m.db" "$T/mixed.json"
like "$(cat "$ERR")" 'revisions 1;' "within the default bound, the Secret is read"
run_rt ingest -v --db "$T/v.db" --max-record 64k "$T/mixed.json"
like "$(cat "$ERR")" "reject: $T/mixed.json:$first: over --max-record" "-v names each one"

# Memory is flat in a List's size: 200 MB of Events, against 2 MB.
gen normal 2000 >"$T/small.json"
gen normal 200000 >"$T/huge.json"
like "$(size "$T/huge.json")" '^2[0-9]{8}$' "the large List is 200 MB"
/usr/bin/time -f %M -o "$T/rss.small" "$REVTRAIL" ingest --db "$T/r1.db" \
	"$T/small.json" >"$OUT" 2>"$ERR"
/usr/bin/time -f %M -o "$T/rss.huge" "$REVTRAIL" ingest --db "$T/r2.db" \
	"$T/huge.json" >"$OUT" 2>"$ERR"
like "$(cat "$ERR")" '^ingest: 200000 records, 0 tagged' "every item of the large List read"
small=$(tail -n 1 "$T/rss.small") huge=$(tail -n 1 "$T/rss.huge")
diag "peak RSS: 2 MB List $small KiB, 200 MB List $huge KiB"
ok test "$huge" -le $((small * 2))
done_testing
