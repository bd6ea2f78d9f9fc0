#!/bin/sh
# The release registry (every release and revision a writer keeps in
# memory) is bounded: past --max-registry, new releases are refused,
# counted and warned about, while the releases held go on attributing their
# events; a larger budget takes the rest later. A Helm listing of thousands
# of releases costs time in proportion to its size.
. "$(dirname "$0")/lib.sh"
DB=$T/r.db
N=6000
helm_list() {   # helm_list NS NAME: a one-release `helm list -o json` line
	printf '[{"name":"%s","namespace":"%s","revision":"1","updated":"2024-11-03 14:00:00 +0000 UTC","status":"deployed","chart":"%s-1.0","app_version":"1"}]\n' "$2" "$1" "$2"
}
{
	helm_list prod web
	i=0
	while [ "$i" -lt "$N" ]; do
		helm_list bulk "$(printf 'rel-%05d' "$i")"
		i=$((i + 1))
	done
} >"$T/list.json"
backoff() {   # backoff NS POD: a kubelet BackOff Event at 14:42:20
	printf '{"apiVersion":"v1","kind":"Event","count":1,"firstTimestamp":"2024-11-03T14:42:20Z","lastTimestamp":"2024-11-03T14:42:20Z","involvedObject":{"kind":"Pod","name":"%s","namespace":"%s"},"metadata":{"name":"%s.1","namespace":"%s","uid":"%s"},"reason":"BackOff","message":"Back-off restarting failed container app in pod %s","type":"Warning"}\n' \
		"$2" "$1" "$2" "$1" "$2" "$2"
}
{
	backoff prod web-7d9c8f4b6-4kx2m
	backoff bulk rel-05999-7d9c8f4b6-4kx2m
} >"$T/events.json"

run_rt ingest --db "$DB" --max-registry 1M "$T/list.json" "$T/events.json"
is "$RC" 0 "a full registry is no failure"
cp "$ERR" "$T/full.err"
run_rt query --db "$DB" -o csv --no-headers "SELECT count(*) FROM revisions"
held=$(cat "$OUT")
is "$([ "$held" -gt 100 ] && [ "$held" -lt "$N" ] && echo some)" some \
	"1M holds some releases ($held), not all $((N + 1))"
like "$(cat "$T/full.err")" "^ingest: warning: $((N + 1 - held)) Helm revisions or workload mappings past the release registry's bounds \(--max-registry" \
	"the refused ones are counted and named with the option"
run_rt query --db "$DB" -o csv --no-headers \
	"SELECT release || ':' || revision FROM incidents ORDER BY release"
is "$(cat "$OUT")" "rel-05999:0
web:1" "a held release's events join its revision; a refused one's get none"

run_rt ingest --db "$DB" "$T/list.json"
is "$RC" 0 "the default budget"
unlike "$(cat "$ERR")" "warning" "takes them all"
run_rt query --db "$DB" -o csv --no-headers "SELECT count(*) FROM revisions"
is "$(cat "$OUT")" "$((N + 1))" "every release is kept now"

# A registry loaded from a database larger than the budget keeps what fits.
run_rt ingest --db "$DB" --max-registry 1M "$T/events.json"
is "$RC" 0 "reopened with a smaller budget"
like "$(cat "$ERR")" "past the release registry's bounds" "the loaded rows past it are counted"

run_rt ingest --db "$T/bad.db" --max-registry 100k /dev/null
is "$RC" 2 "a budget under 1M is a usage error"
like "$(cat "$ERR")" "bad --max-registry '100k' \(1M to 1024M\)" "naming the option and its range"
done_testing
