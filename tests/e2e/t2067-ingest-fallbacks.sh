#!/bin/sh
# Fallbacks are counted, never silent: a Helm release Secret whose payload
# cannot be decoded gives its revision from the labels alone, a docker
# json-file line whose `time` is empty or not a time is stored without a
# time of its own. Each is one warning line with the count and the place of
# the first; the records themselves are kept.
. "$(dirname "$0")/lib.sh"

secret() {   # secret VERSION PAYLOAD: a release Secret as kubectl prints it
	printf '{"apiVersion":"v1","kind":"Secret","type":"helm.sh/release.v1",'
	printf '"metadata":{"name":"sh.helm.release.v1.web.v%s","namespace":"shop",' "$1"
	printf '"labels":{"name":"web","owner":"helm","status":"deployed","version":"%s","modifiedAt":"1704186000"}},' "$1"
	printf '"data":{"release":"%s"}}\n' "$2"
}
# base64 of "not a payload", and of base64 of "{\"x\":1}" (JSON, no release)
secret 3 bm90IGEgcGF5bG9hZA== > "$T/secrets.json"
secret 4 ZXlKNElqb3hmUT09 >> "$T/secrets.json"
run_rt ingest --db "$T/s.db" "$T/secrets.json"
is "$RC" 0 "ingest"
like "$(cat "$ERR")" 'ingest: warning: 2 Helm release payloads could not be decoded \(first at .*secrets\.json:0\): revisions from the object.s labels alone' \
	"undecodable payloads counted, the first named"
run_rt query --db "$T/s.db" -o json "SELECT revision, status FROM revisions ORDER BY revision"
is "$(jq -c 'map([.revision, .status])' "$OUT")" '[[3,"deployed"],[4,"deployed"]]' \
	"the revisions come from the labels"

D=$T/web-5d8f-x1_shop_web-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.log
{
	printf '{"log":"starting\\n","stream":"stdout","time":"2024-01-02T09:00:00.000000001Z"}\n'
	printf '{"log":"Error: dial tcp 10.0.0.7:5432: connect: connection refused\\n","stream":"stderr","time":""}\n'
	printf '{"log":"Error: dial tcp 10.0.0.7:5432: connect: connection refused\\n","stream":"stderr","time":"yesterday"}\n'
	printf '{"log":"far future\\n","stream":"stdout","time":"9999-01-01T00:00:00Z"}\n'
} > "$D"
run_rt ingest --db "$T/d.db" --keep-untagged "$D"
is "$RC" 0 "ingest docker lines"
like "$(cat "$ERR")" 'ingest: warning: 2 docker json-file lines with an empty or bad time \(first at .*\.log:[1-9][0-9]*\): stored without a time' \
	"empty and bad times counted, the first named"
like "$(cat "$ERR")" '1 record with a time out of range' "a time out of range is counted as such, not twice"
run_rt query --db "$T/d.db" -o json "SELECT count(*) AS n, count(ts) AS t FROM events"
is "$(jq -c '.[0]' "$OUT")" '{"n":4,"t":1}' "every line stored, one with a time"

run_rt ingest --db "$T/ok.db" "$DATA/formats/docker.log"
unlike "$(cat "$ERR")" 'could not be decoded|bad time' "no warning for good input"
done_testing
