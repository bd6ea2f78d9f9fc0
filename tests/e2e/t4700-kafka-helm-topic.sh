#!/usr/bin/env bash
# --helm-topic: Helm state on every instance of a consumer group, as a
# global table. Against a real broker, instances A and B in one group on
# a 2-partition events topic, and a 2-partition Helm topic:
#   - the Helm history of release shop/web-0 lands in both databases
#     (each instance reads the Helm topic in full, outside the group);
#     a record there without Helm state is counted and skipped;
#   - A leaves, a FRESH instance C (empty database) joins and takes a
#     partition from B: the events it gets next are attributed to
#     revision 2, not revision 0 (without the option C would have no
#     history: revision 0);
#   - B is killed (-9) and restarted while a new revision lands: it
#     resumes the Helm topic at its stored positions and no revision is
#     stored twice;
#   - a partition added to the Helm topic is found and read by C.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start
KD=$(dirname "$0")/../kafka

kafka_topic ev 2
kafka_topic helm 2

# helm list -o json, one revision a message, keyed by the release.
helm_rev() {   # REVISION STATUS UPDATED
	printf 'shop/web-0\t[{"name":"web-0","namespace":"shop","revision":"%s","updated":"%s","status":"%s","chart":"web-1.2.%s","app_version":"1.2.%s"}]\n' \
		"$1" "$3" "$2" "$1" "$1"
}
{
	helm_rev 1 superseded "2024-11-03 12:00:00.0 +0000 UTC"
	helm_rev 2 deployed "2024-11-03 13:30:00.0 +0000 UTC"
	# Not Helm state: every instance would store it.
	"$KD/fixtures.sh" fluentbit 1 99999
} >"$T/helm1.tsv"
kafka_produce helm "$T/helm1.tsv"

A=$T/a.db B=$T/b.db C=$T/c.db
# The records are of cluster prod-eu: the Helm topic's by --cluster (A, B)
# or by its own @CLUSTER (C).
common=(-G hg --batch-messages 50 --batch-ms 50 --status-interval 1)
args=(-t ev --helm-topic helm --cluster prod-eu "${common[@]}")
cargs=(-t ev@prod-eu --helm-topic helm@prod-eu "${common[@]}")
revs() { db_count "$1" "SELECT count(*) FROM revisions WHERE release = 'web-0' AND cluster = 'prod-eu'"; }
revs_ge() { [ "$(revs "$1")" -ge "$2" ]; }
helm_pos() { db_count "$1" "SELECT coalesce(sum(offset), 0) FROM sources WHERE path = 'global:helm'"; }
union() { sqlite3 "$B" "ATTACH '$C' AS c; SELECT count(*) FROM (SELECT ukey FROM main.events UNION SELECT ukey FROM c.events)" 2>/dev/null || echo 0; }
union_ge() { [ "$(union)" -ge "$1" ]; }

consume_bg a "${args[@]}" --db "$A" --stats-json "$T/a.json" --http 127.0.0.1:0
consume_bg b "${args[@]}" --db "$B"
wait_until 60 revs_ge "$A" 2
wait_until 60 revs_ge "$B" 2
is "$(revs "$A")" 2 "A holds web-0's two revisions, of cluster prod-eu"
is "$(revs "$B")" 2 "B holds them too: the Helm topic is read in full by each"
is "$(helm_pos "$B")" 3 "B's Helm positions are in sources, under global:helm"
# /metrics: the Helm topic's partitions, and its lag once A stored all.
metric() {   # NAME: its value in A's /metrics
	curl -s --max-time 5 "http://127.0.0.1:$(sed -n 's/.* http: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/a.err")/metrics" |
		sed -n "s/^$1 //p"
}
helm_lag_0() { [ "$(metric revtrail_helm_topic_lag)" = 0 ]; }
wait_until 30 helm_lag_0
is "$(metric revtrail_helm_topic_partitions):$(metric revtrail_helm_topic_lag)" 2:0 \
	"/metrics: the Helm topic's 2 partitions, read to their end (lag 0)"
is "$(metric revtrail_helm_topic_skipped_total)" 1 \
	"/metrics counts the record without Helm state, skipped"
is "$(db_count "$B" "SELECT count(*) FROM sources WHERE path = 'helm'")" 0 \
	"no row under the bare topic name: a group partition's are never confused with them"
wait_until 60 grep -q 'assigned [1-9] partition' "$T/a.err"
wait_until 60 grep -q 'assigned [1-9] partition' "$T/b.err"
like "$(cat "$T/b.err")" 'global topics read to their end: joining the group' \
	"B joins the group once the Helm topic is read"

consume_kill a TERM
consume_wait a 20
is "$RC" 0 "A exits 0 on SIGTERM"
is "$(jq .helm_topic_skipped "$T/a.json")" 1 "the record without Helm state is counted"
is "$(jq .helm_partitions "$T/a.json")" 2 "every partition of the Helm topic was read"
is "$(db_count "$A" "SELECT count(*) FROM events WHERE message LIKE '%99999%'")" 0 \
	"and not stored"
b_has_all() { [ "$(grep -c 'assigned [1-9] partition' "$T/b.err")" -ge 2 ]; }
wait_until 60 b_has_all

# C: a fresh database. It reads the Helm topic, then joins and takes a
# partition from B.
consume_bg c "${cargs[@]}" --db "$C"
wait_until 60 grep -q 'assigned [1-9] partition' "$T/c.err"
wait_until 30 grep -q 'revoked [1-9] partition' "$T/b.err"
like "$(cat "$T/c.err")" 'ev\[[01]\]@' "C, with an empty database, got a partition of ev"
is "$(revs "$C")" 2 "C had web-0's history before its first partition"

# web-0's next events, on both partitions: whichever C owns carries some.
"$KD/fixtures.sh" exporter 100 1000 >"$T/ev.tsv"
awk -F'\t' 'NR % 2' "$T/ev.tsv" >"$T/ev0.tsv"
awk -F'\t' '!(NR % 2)' "$T/ev.tsv" >"$T/ev1.tsv"
timeout 60 kcat -P -b "$BS" -t ev -p 0 -K '	' -l "$T/ev0.tsv"
timeout 60 kcat -P -b "$BS" -t ev -p 1 -K '	' -l "$T/ev1.tsv"
wait_until 60 union_ge 100
is "$(union)" 100 "every new event is in B or C"
web0() { db_count "$1" "SELECT count(*) FROM events WHERE release = 'web-0' AND cluster = 'prod-eu' AND revision $2"; }
ok test "$(web0 "$C" ">= 0")" -gt 0
is "$(web0 "$C" "!= 2")" 0 "C attributes its web-0 events to revision 2, none to revision 0"
is "$(web0 "$B" "!= 2")" 0 "B too"

# kill -9 B while a new revision lands; B restarts from its own positions.
consume_kill b KILL
consume_wait b 20
helm_rev 3 deployed "2024-11-03 15:00:00.0 +0000 UTC" >"$T/helm2.tsv"
kafka_produce helm "$T/helm2.tsv"
wait_until 60 revs_ge "$C" 3
stored=$(db_count "$B" "SELECT 'global:helm[' || partition || ']@' || offset FROM sources WHERE path = 'global:helm' ORDER BY partition")
consume_bg b2 "${args[@]}" --db "$B"
wait_until 60 revs_ge "$B" 3
wait_until 60 grep -q 'assigned [1-9] partition' "$T/b2.err"
is "$(revs "$B")" 3 "B, restarted after kill -9, got revision 3, each revision once"
is "$(helm_pos "$B")" 4 "its Helm positions are the topic's end"
for pos in $stored; do
	like "$(cat "$T/b2.err")" "$(printf '%s' "$pos" | sed 's/[][]/\\&/g')\$" "B resumed $pos, its stored position"
done
consume_kill b2 TERM
consume_wait b2 20
is "$RC" 0 "B exits 0 on SIGTERM"
is "$(revs "$B")" 3 "the revisions row count is stable"
# A partition added to the Helm topic is found (within 30 s) and read.
timeout 180 "$KD/broker.sh" partitions "$BROKER_DIR" helm 3 || _result 1 "helm gets 3 partitions"
helm_rev 4 deployed "2024-11-03 16:00:00.0 +0000 UTC" >"$T/helm3.tsv"
timeout 60 kcat -P -b "$BS" -t helm -p 2 -K '	' -l "$T/helm3.tsv"
wait_until 60 revs_ge "$C" 4
is "$(revs "$C")" 4 "C reads the Helm topic's new partition: revision 4"
like "$(cat "$T/c.err")" 'global:helm\[2\]@beginning' "from its beginning"
is "$(helm_pos "$C")" 5 "and the old partitions, assigned again, go on where they were"
consume_kill c TERM
consume_wait c 20
is "$RC" 0 "C exits 0 on SIGTERM"
ok consume_clean a
ok consume_clean b
ok consume_clean b2
ok consume_clean c
done_testing
