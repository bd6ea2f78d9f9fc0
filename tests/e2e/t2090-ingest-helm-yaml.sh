#!/bin/sh
# `helm history/list/status -o yaml` read line by line among other text:
# what follows a document is read afresh, a release cut off before its
# `version` is counted (never silently lost), and YAML that is not Helm's
# (a Deployment, a values file) stays text, line for line.
. "$(dirname "$0")/lib.sh"
H=$DATA/formats/helm

# a history document, then a log line and a blank line, then a list
{
	cat "$H/history.yaml"
	echo "2024-01-02T09:05:00Z ERROR connection refused"
	echo
	cat "$H/list.yaml"
} > "$T/mixed.txt"
run_rt classify --all --release shop/web "$T/mixed.txt"
is "$RC" 0 "classify mixed text"
is "$(jq -c '[.format, (.revisions // [] | map(.revision))]' "$OUT" | tr '\n' ' ')" \
	'["helm-history",[1]] ["helm-history",[2]] ["text",[]] ["helm-list",[2]] ["helm-list",[7]] ' \
	"each item a record, the log line between them kept"

# a release cut off before `version` at the end of the input
sed '/^name: web/,$d' "$H/status.yaml" > "$T/cut.yaml"
run_rt ingest --db "$T/c.db" "$T/cut.yaml"
is "$RC" 0 "ingest a cut-off status"
like "$(cat "$ERR")" 'ingest: warning: 1 helm status output without a usable revision \(first at .*cut\.yaml:0\)' \
	"counted, with where it began"

# Go leaves out version 0: the release is kept without a revision
{ sed '/^version:/d' "$H/status.yaml"; echo "--- next document"; } > "$T/v0.yaml"
run_rt classify --all "$T/v0.yaml"
is "$(jq -c '[.format, .fields.release, .message]' "$OUT" | tr '\n' ' ')" \
	'["helm-status","web","Upgrade complete"] ["text",null,"--- next document"] ' \
	"a record of the release, and the line after it"
like "$(cat "$ERR")" '1 helm status output without a usable revision' "counted"

# YAML that is not Helm's output stays text, line for line
cat > "$T/other.yaml" <<'X'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
chart:
  name: web
  version: 1.5.0
- name: item
  status: deployed
X
run_rt classify --all "$T/other.yaml"
is "$(jq -s 'map(.format) | unique' "$OUT" | tr -d ' \n')" '["text"]' "all text"
is "$(jq -s 'length' "$OUT")" 9 "every line a record"
done_testing
