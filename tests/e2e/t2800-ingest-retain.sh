#!/bin/sh
# --retain: 60 simulated days ingested in 12 chunks of 5 keep the last 7
# days (and the incidents that reach into them), the file stops growing,
# events outside incidents age out too, a record from a clock years ahead
# deletes nothing, and `revtrail prune` does at once what ingest does a
# share of per commit.
. "$(dirname "$0")/lib.sh"
DB=$T/r.db
DAY=86400000000000
q() { sqlite3 "$1" "$2"; }

# chunk C: 5 days from 2024-01-01 + 5C days, a BackOff Event every 10
# minutes (pods crash-loop an hour each, 120 incidents a chunk) and a tagged plain line of no
# release every hour.
python3 - "$T" <<'PY'
import datetime, json, sys
base = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
for c in range(12):
    with open("%s/c%02d.json" % (sys.argv[1], c), "w") as out, \
         open("%s/c%02d.log" % (sys.argv[1], c), "w") as log:
        for i in range(720):
            t = base + datetime.timedelta(days=5 * c, minutes=10 * i)
            ts = t.strftime("%Y-%m-%dT%H:%M:%SZ")
            pod = "web-%d-%d-abcde" % (c, i // 6)
            out.write(json.dumps({"apiVersion": "v1", "kind": "Event",
                "type": "Warning", "reason": "BackOff", "count": 1,
                "message": "Back-off restarting failed container web in pod " + pod,
                "firstTimestamp": ts, "lastTimestamp": ts,
                "involvedObject": {"kind": "Pod", "name": pod, "namespace": "shop"},
                "metadata": {"name": "%s.%d" % (pod, i), "namespace": "shop",
                             "uid": "e-%d-%d" % (c, i)}}) + "\n")
            if i % 6 == 0:
                log.write("%s error: open /etc/app/%d.yaml: permission denied\n"
                          % (ts, 720 * c + i))
PY

size3=0
for c in 00 01 02 03 04 05 06 07 08 09 10 11; do
	run_rt ingest --db "$DB" --retain 7d "$T/c$c.json" "$T/c$c.log"
	[ "$RC" = 0 ] || { is "$RC" 0 "chunk $c ingested"; diag "$(cat "$ERR")"; }
	[ "$c" = 03 ] && size3=$(stat -c %s "$DB")
done
is "$RC" 0 "the last chunk ingested"
like "$(cat "$ERR")" 'retain 7d: [0-9]+ events and [0-9]+ closed incidents deleted' \
	"the summary says what retention deleted"
newest=$(q "$DB" "SELECT max(ts_ns) FROM events")
# An incident reaching into the last 7 days keeps its events: the data's
# incidents last 8 hours, so nothing older than 7 days and 8 hours stays.
is "$(q "$DB" "SELECT count(*) FROM events WHERE ts_ns < $newest - 7 * $DAY - $DAY / 3")" 0 \
	"nothing older than the last 7 days (and the incidents reaching into them) is left"
is "$(q "$DB" "SELECT count(*) FROM events WHERE incident_id IS NULL AND ts_ns < $newest - 7 * $DAY - $DAY / 2")" 0 \
	"events outside incidents age out too"
ok test "$(q "$DB" "SELECT count(*) FROM events WHERE ts_ns >= $newest - 6 * $DAY")" -gt 800
is "$(q "$DB" "SELECT count(*) FROM incidents WHERE last_ns < $newest - 7 * $DAY - $DAY / 3")" 0 \
	"and no incident last seen before them"
size12=$(stat -c %s "$DB")
ok test "$size12" -le $((size3 * 3 / 2))
diag "file after chunk 3: $size3 bytes; after chunk 12: $size12 bytes"
is "$(q "$DB" "PRAGMA integrity_check")" ok "integrity_check"

# A node whose clock is years ahead: alone in its run, and among others.
before=$(q "$DB" "SELECT count(*) FROM events")
printf '2031-06-01T00:00:00Z error: open /etc/app/x.yaml: permission denied\n' >"$T/ahead.log"
run_rt ingest --db "$DB" --retain 7d "$T/ahead.log"
is "$(q "$DB" "SELECT count(*) FROM events")" $((before + 1)) \
	"one record from a clock years ahead deletes nothing"
run_rt ingest --db "$DB" --retain 1d "$T/c11.json" "$T/ahead.log"
ok test "$(q "$DB" "SELECT count(*) FROM events WHERE ts_ns >= $newest - $DAY / 2")" -gt 0

# prune: the same at once, on a database that kept everything
P=$T/p.db
run_rt ingest --db "$P" "$T"/c*.json "$T"/c*.log
all=$(q "$P" "SELECT count(*) FROM events")
run_rt prune --db "$P" --retain 7d
is "$RC" 0 "prune exits 0"
like "$(cat "$OUT")" '^[0-9]+ events and [0-9]+ closed incidents deleted$' "prune says what it deleted"
is "$(q "$P" "SELECT count(*) FROM events WHERE ts_ns < $newest - 7 * $DAY - $DAY / 3")" 0 \
	"prune leaves nothing older"
ok test "$(q "$P" "SELECT count(*) FROM events")" -lt "$all"
ok test "$(q "$P" "SELECT count(*) FROM revisions")" -ge 0
is "$(q "$P" "PRAGMA integrity_check")" ok "integrity_check after prune"

run_rt prune --db "$P"
is "$RC" 2 "prune without --retain is a usage error"
run_rt ingest --db "$P" --retain 10s "$T/c00.log"
is "$RC" 2 "--retain under a minute is refused"
like "$(cat "$ERR")" 'revtrail ingest: --retain wants a duration' "with a message naming the option"
done_testing
