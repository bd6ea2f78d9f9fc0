#!/usr/bin/env bash
# consume -t TOPIC@CLUSTER against a real broker: the same
# kubernetes-event-exporter messages (same Event uids) on topics of three
# clusters, read in the same batches, are three sets of events and
# incidents; --cluster names the cluster of a topic without its own; bad
# names are refused before anything connects.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require

# refused at once: no broker needed
for bad in "eu-events@" "eu-events@a/b" "eu-events@x@y"; do
	run_rt consume -b 127.0.0.1:1 -t "$bad" -G g --db "$T/bad.db" -e
	is "$RC" 2 "-t $bad is refused"
	like "$(cat "$ERR")" '^revtrail consume: -t TOPIC@CLUSTER: ' "naming the option"
done
run_rt consume -b 127.0.0.1:1 -t eu-events --cluster 'a b' -G g --db "$T/bad.db" -e
is "$RC" 2 "--cluster 'a b' is refused"
like "$(cat "$ERR")" '^revtrail consume: --cluster: ' "naming the option"
ok test ! -e "$T/bad.db"

kafka_start
KD=$(dirname "$0")/../kafka
kafka_topic eu-events 2
kafka_topic us-events 1
kafka_topic ap-events 1
"$KD/fixtures.sh" exporter 300 >"$T/events.tsv"
for t in eu-events us-events ap-events; do kafka_produce "$t" "$T/events.tsv"; done
is "$(kafka_ends us-events)" 300 "300 messages on each topic"

DB=$T/c.db
run_rt consume -b "$BS" -t eu-events@prod-eu -t us-events@prod-us -t ap-events \
	--cluster prod-ap -G clusters --db "$DB" -e --batch-messages 500
is "$RC" 0 "consume -e reads the three topics and exits 0"
is "$(db_count "$DB" "SELECT cluster || ':' || count(*) FROM events GROUP BY cluster ORDER BY cluster" | tr '\n' ' ')" \
	"prod-ap:300 prod-eu:300 prod-us:300 " "one Event uid in three clusters is three events"
is "$(db_count "$DB" "SELECT count(*) FROM events WHERE cluster <> CASE substr(origin, 1, 2)
 WHEN 'eu' THEN 'prod-eu' WHEN 'us' THEN 'prod-us' ELSE 'prod-ap' END")" 0 \
	"each event in its topic's cluster"
SET="SELECT namespace || '/' || release || ' ' || revision || ' ' || event_count || ' ' || tags
 || ' ' || coalesce(diagnosis, '-') FROM incidents WHERE cluster = '@CL@' ORDER BY namespace, release, opened_ns"
eu=$(db_count "$DB" "${SET/@CL@/prod-eu}")
like "$eu" 'web-' "prod-eu has the web releases' incidents"
is "$(db_count "$DB" "${SET/@CL@/prod-us}")" "$eu" "prod-us has the same incidents"
is "$(db_count "$DB" "${SET/@CL@/prod-ap}")" "$eu" "and so has prod-ap (--cluster)"

# the same topic alone, no cluster, into another database: the same set
run_rt consume -b "$BS" -t us-events -G plain --db "$T/one.db" -e
is "$(db_count "$T/one.db" "${SET/@CL@/}")" "$eu" "as one cluster alone makes them"
run_rt incidents --db "$DB" --cluster prod-us -o json
is "$(jq -r 'map(.cluster) | unique | join(",")' "$OUT")" prod-us "incidents --cluster prod-us lists prod-us's only"
is "$(jq length "$OUT")" "$(db_count "$DB" "SELECT count(*) FROM incidents WHERE cluster = 'prod-us'")" "all of them"
done_testing
