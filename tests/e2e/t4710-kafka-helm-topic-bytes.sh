#!/usr/bin/env bash
# --helm-topic and the 32 MiB bound of a batch: records of the Helm topic
# run to megabytes (a release's Secret holds its whole manifest), and a
# batch takes them in bursts of what librdkafka fetched. Against a real
# broker, 40 records of 900,000 bytes (36 MB) on the Helm topic, fetched
# in one go (a fetch of up to 50 MB that waits for 36 MB): the batch that
# reads them stops at 32 MiB of values as a batch of the group's messages
# does, and the rest go into the next one. Every record is read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../kafka/lib.sh"
kafka_require
kafka_start

kafka_topic ev 1
kafka_topic helm 1
pad=$(head -c 900000 /dev/zero | tr '\0' x)
for i in $(seq 1 40); do
	printf 'big/%d\t%s\n' "$i" "$pad"
done >"$T/big.tsv"
kafka_produce helm "$T/big.tsv"
is "$(kafka_ends helm)" 40 "the Helm topic holds 40 records"

consume_bg big -t ev --helm-topic helm -G hb -e --db "$T/big.db" \
	--stats-json "$T/big.json" -X fetch.min.bytes=36000000 \
	-X fetch.wait.max.ms=5000 -X max.partition.fetch.bytes=52428800 \
	-X fetch.max.bytes=52428800
consume_wait big 120
is "$RC" 0 "consume -e reads the Helm topic to its end and exits 0"
is "$(jq .helm_topic_skipped "$T/big.json")" 40 \
	"each of the 40 records was read (none is Helm state: skipped)"
is "$(jq .bytes "$T/big.json")" 36000000 "36,000,000 bytes of values"
batches=$(jq .batches "$T/big.json")
diag "batches: $batches"
ok test "$batches" -ge 2
is "$(db_count "$T/big.db" "SELECT offset FROM sources WHERE path = 'global:helm'")" 40 \
	"the Helm topic's position is stored after its last record"
ok consume_clean big
done_testing
