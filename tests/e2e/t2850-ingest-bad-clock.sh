#!/bin/sh
# A bad clock closes nothing: one untagged line from a node whose clock is
# four months ahead, in any arrival order, in one run or in several, leaves
# the incidents as they are without it (the crash loop that goes on stays
# open), and the summary counts the line. A watermark an older revtrail
# stored past the wall clock comes back, and the incident it closed reopens
# as its failure goes on.
. "$(dirname "$0")/lib.sh"
SC=$DATA/scenarios/hook-configmap-race

INC="SELECT namespace, release, revision, status, severity, opened_at, last_seen_at,
 closed_at, event_count, occurrences, tags, diagnosis, title, revision_status,
 later_revisions, pods, evidence, remedy FROM incidents ORDER BY namespace, release, opened_at"

snapshot() {   # snapshot DB NAME
	run_rt query --db "$1" -o json "$INC"
	cp "$OUT" "$T/$2.inc"
}

# The failure in two halves, the bad line in between in arrival order.
head -n 6 "$SC/events.ndjson" > "$T/events-1.ndjson"
tail -n +7 "$SC/events.ndjson" > "$T/events-2.ndjson"
cp "$SC/fluentbit.ndjson" "$SC/helm-history.txt" "$SC/release-secret-v48.json" "$T/"
cat > "$T/bad-clock.ndjson" <<'JSON'
{"time":"2025-03-03T14:48:00.000000Z","stream":"stdout","_p":"F","log":"GET /healthz 200","kubernetes":{"pod_name":"node-exporter-x7k2p","namespace_name":"monitoring","labels":{},"host":"node-9","container_name":"exporter"}}
JSON
ALL="$T/events-1.ndjson $T/events-2.ndjson $T/fluentbit.ndjson $T/helm-history.txt $T/release-secret-v48.json"

run_rt ingest --db "$T/ref.db" $ALL
is "$RC" 0 "reference run, no bad clock"
snapshot "$T/ref.db" ref
is "$(jq -r '.[0].status' "$T/ref.inc")" open "the crash loop is open"

check() {   # check NAME: the incidents as without the bad line
	ok cmp "$T/ref.inc" "$T/$1.inc"
	run_rt incidents --db "$T/$1.db" --open
	like "$(cat "$OUT")" "payments-api" "$1: incidents --open lists the crash loop"
}

# One run, the bad line first, between the halves, last.
for order in first middle last; do
	case $order in
	first) files="$T/bad-clock.ndjson $ALL" ;;
	middle) files="$T/events-1.ndjson $T/bad-clock.ndjson $T/events-2.ndjson $T/fluentbit.ndjson $T/helm-history.txt $T/release-secret-v48.json" ;;
	last) files="$ALL $T/bad-clock.ndjson" ;;
	esac
	run_rt ingest --db "$T/$order.db" $files
	is "$RC" 0 "bad line $order: ingest"
	like "$(cat "$ERR")" "1 record far ahead of the others" "bad line $order: counted"
	snapshot "$T/$order.db" $order
	check $order
done

# One file a run, so the bad line is a batch of its own, in each place
# but the very first: the first record of a new database, alone, has no
# other to be judged by, and only the wall clock bounds it (see live).
for order in second middle last; do
	case $order in
	second) files="$T/events-1.ndjson $T/bad-clock.ndjson $T/helm-history.txt $T/events-2.ndjson $T/fluentbit.ndjson $T/release-secret-v48.json" ;;
	middle) files="$T/events-1.ndjson $T/helm-history.txt $T/bad-clock.ndjson $T/events-2.ndjson $T/fluentbit.ndjson $T/release-secret-v48.json" ;;
	last) files="$ALL $T/bad-clock.ndjson" ;;
	esac
	for f in $files; do
		run_rt ingest --db "$T/runs-$order.db" "$f"
		[ "$RC" = 0 ] || is "$RC" 0 "runs $order: ingest $f alone"
	done
	snapshot "$T/runs-$order.db" runs-$order
	check runs-$order
done

# Live: the same crash loop moved to the last ten minutes. A line four
# months past the wall clock, alone in its batch, is counted and moves
# nothing.
python3 - "$SC/fluentbit.ndjson" "$T/live" <<'PY'
import json, sys, time, datetime as dt
rows = [json.loads(l) for l in open(sys.argv[1])]
def ts(s): return dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc).timestamp()
shift = time.time() - 60 - max(ts(r["time"]) for r in rows)
def out(path, rs):
    with open(path, "w") as f:
        for r in rs:
            t = dt.datetime.fromtimestamp(ts(r["time"]) + shift, dt.timezone.utc)
            r["time"] = t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            f.write(json.dumps(r) + "\n")
out(sys.argv[2] + "-1.ndjson", rows[:8])
out(sys.argv[2] + "-2.ndjson", rows[8:])
bad = {"time": dt.datetime.fromtimestamp(time.time() + 120 * 86400, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
       "stream": "stdout", "_p": "F", "log": "GET /healthz 200",
       "kubernetes": {"pod_name": "node-exporter-x7k2p", "namespace_name": "monitoring",
                      "labels": {}, "host": "node-9", "container_name": "exporter"}}
open(sys.argv[2] + "-bad.ndjson", "w").write(json.dumps(bad) + "\n")
PY
run_rt ingest --db "$T/live.db" "$T/live-bad.ndjson"
like "$(cat "$ERR")" "1 record far ahead of the others or of the wall clock" "live: the line past the wall clock is counted"
run_rt ingest --db "$T/live.db" "$T/live-1.ndjson" "$T/helm-history.txt"
run_rt ingest --db "$T/live.db" "$T/live-2.ndjson"
run_rt incidents --db "$T/live.db" --open
like "$(cat "$OUT")" "payments-api" "live: the crash loop is open"

# A watermark past the wall clock (as a bad clock left it before): the
# incident it closed reopens when the failure goes on.
run_rt ingest --db "$T/old.db" "$T/live-1.ndjson" "$T/helm-history.txt"
is "$RC" 0 "old: first half"
ok sqlite3 "$T/old.db" "UPDATE meta SET value = $(( ($(date +%s) + 120 * 86400) * 1000000000 )) WHERE key = 'watermark_ns'; UPDATE incidents SET status = 'closed', closed_ns = last_ns + 900000000000"
run_rt incidents --db "$T/old.db" --open
unlike "$(cat "$OUT")" "payments-api" "old: closed by the bad watermark"
run_rt ingest --db "$T/old.db" "$T/live-2.ndjson"
is "$RC" 0 "old: the failure goes on"
run_rt incidents --db "$T/old.db" --open
like "$(cat "$OUT")" "payments-api" "old: reopened"
done_testing
