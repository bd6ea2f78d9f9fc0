#!/bin/sh
# incidents, show and query read several databases as one: the databases
# of scaled-out instances, which overlap where a rebalance handed a
# partition over (the new owner re-reads from the group's committed
# offset what the old one had already stored). Merged, they must tell
# what one database of everything tells: each event once, the halves of an
# incident one incident, counts, pods and objects counted again.
. "$(dirname "$0")/lib.sh"
S=$DATA/scenarios
H=$S/hook-configmap-race C=$S/stale-config-mount
mkdir "$T/a" "$T/b"

# Instance a read a stream up to line $2, instance b from line $3 <= $2.
cut_at() {   # FILE A_END B_START NAME
	sed -n "1,$2p" "$1" >"$T/a/$4"
	sed -n "$3,\$p" "$1" >"$T/b/$4"
}
jq -c . "$C/events-watch.json" >"$T/stale-events.ndjson"
n=$(wc -l <"$T/stale-events.ndjson")
cut_at "$H/events.ndjson" 8 6 hook-events.ndjson
cut_at "$H/fluentbit.ndjson" 9 7 hook-fluentbit.ndjson
cut_at "$T/stale-events.ndjson" $((n * 2 / 3)) $((n / 3)) stale-events.ndjson
for f in "$C"/*.log; do cut_at "$f" 2 2 "$(basename "$f")"; done
for d in a b; do
	cp "$H/helm-history.txt" "$H/release-secret-v48.json" \
		"$C/release-secrets.json" "$T/$d/"
done
cp "$S/superseded-release-install"/* "$T/b/"     # b's partitions only

run_rt ingest --db "$T/part-a.db" "$T/a"/*
is "$RC" 0 "ingest of instance a's records"
run_rt ingest --db "$T/part-b.db" "$T/b"/*
is "$RC" 0 "ingest of instance b's records"
run_rt ingest --db "$T/all.db" "$H"/* "$T/stale-events.ndjson" "$C"/*.log \
	"$C/release-secrets.json" "$S/superseded-release-install"/*
is "$RC" 0 "ingest of everything into one database"
run_rt query --db "$T/part-a.db" -o csv --no-headers \
	"SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM incidents)"
a_counts=$(cat "$OUT")
run_rt query --db "$T/part-b.db" -o csv --no-headers \
	"SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM incidents)"
b_counts=$(cat "$OUT")
diag "events, incidents: a $a_counts, b $b_counts"

M="--db $T/part-a.db --db $T/part-b.db"

# incidents: the same list, but for the ids.
run_rt incidents --db "$T/all.db" -o json
jq -S 'map(del(.id))' "$OUT" >"$T/all.json"
run_rt incidents $M -o json
is "$RC" 0 "incidents over two databases exits 0"
jq -S 'map(del(.id))' "$OUT" >"$T/merged.json"
is "$(jq length "$T/merged.json")" 3 "three incidents, the split one once"
is "$(cat "$T/merged.json")" "$(cat "$T/all.json")" \
	"incidents -o json: merged = one database of everything"
run_rt incidents --db "$T/all.db" -o wide --no-headers
sed 's/^[0-9]* *//' "$OUT" >"$T/all.txt"
run_rt incidents $M -o wide --no-headers
is "$(sed 's/^[0-9]* *//' "$OUT")" "$(cat "$T/all.txt")" \
	"incidents -o wide: the same rows"

# show: every incident, text and JSON, but for its id and its evidence:
# an evidence line counts what its own database saw ("(2 pods, 9
# times)"), so a merged read lists each database's line.
id_of() {   # DBARGS RELEASE
	run_rt query $1 -o csv --no-headers \
		"SELECT id FROM incidents WHERE release = '$2'"
	cat "$OUT"
}
for rel in payments-api haproxy-ingress rke2-ingress-nginx; do
	one=$(id_of "--db $T/all.db" "$rel") many=$(id_of "$M" "$rel")
	run_rt show --db "$T/all.db" -o json "$one"
	jq -S 'del(.incident.id, .incident.evidence)' "$OUT" >"$T/show1.json"
	run_rt show $M -o json "$many"
	is "$RC" 0 "$rel: show $many over two databases exits 0"
	jq -S 'del(.incident.id, .incident.evidence)' "$OUT" >"$T/show2.json"
	is "$(cat "$T/show2.json")" "$(cat "$T/show1.json")" \
		"$rel: show -o json (events, objects, timeline) the same"
	run_rt show --db "$T/all.db" "$one"
	sed '1d; /^Evidence:/,/^Remedy:/d' "$OUT" >"$T/show1.txt"
	run_rt show $M "$many"
	sed '1d; /^Evidence:/,/^Remedy:/d' "$OUT" >"$T/show2.txt"
	is "$(cat "$T/show2.txt")" "$(cat "$T/show1.txt")" "$rel: show text the same"
done
is "$(id_of "$M" payments-api)" "$(($(id_of "--db $T/part-a.db" payments-api) * 100 + 1))" \
	"a merged id: the first member's id * 100 + its database's position"
is "$(id_of "$M" rke2-ingress-nginx)" "$(($(id_of "--db $T/part-b.db" rke2-ingress-nginx) * 100 + 2))" \
	"an incident of the second database only: id * 100 + 2"

# query: the merged tables, each event once.
sql="SELECT (SELECT count(*) FROM events) AS events,
 (SELECT sum(count) FROM events) AS occurrences,
 (SELECT count(DISTINCT ukey) FROM events) AS keys,
 (SELECT count(*) FROM timeline) AS timeline,
 (SELECT count(*) FROM incident_objects) AS objects,
 (SELECT count(*) FROM revisions) AS revisions"
run_rt query --db "$T/all.db" -o json "$sql"
want=$(cat "$OUT")
run_rt query $M -o json "$sql"
is "$(cat "$OUT")" "$want" "query: events, occurrences, timeline, objects, revisions as in one database"
run_rt query $M -o csv --no-headers \
	"SELECT (SELECT count(*) FROM db1.events) + (SELECT count(*) FROM db2.events) > (SELECT count(*) FROM events)"
is "$(cat "$OUT")" 1 "the parts overlap (db1, db2 read one file each), the merge counts it once"

# A quoted glob, expanded by revtrail, sorted: the same as the two --db.
run_rt incidents --db "$T/part-*.db" -o json
is "$(jq -S 'map(del(.id))' "$OUT")" "$(cat "$T/merged.json")" "--db 'part-*.db' merges the files it matches"
run_rt incidents --db "$T/part-*.db" --db "$T/part-a.db" -o json
is "$(jq length "$OUT")" 3 "a file named twice is read once"

# Clusters: the same release and events from two clusters are not the
# overlap of one; they stay apart, each with its cluster.
run_rt ingest --db "$T/eu.db" --cluster eu-1 "$H"/*
run_rt ingest --db "$T/us.db" --cluster us-1 "$H"/*
run_rt incidents --db "$T/eu.db" --db "$T/us.db" -o json
is "$(jq -r 'map(.cluster + ":" + .release) | sort | join(" ")' "$OUT")" \
	"eu-1:payments-api us-1:payments-api" "one incident per cluster, named"
run_rt incidents --db "$T/eu.db" --db "$T/us.db" --cluster us-1 -o json
is "$(jq -r 'map(.cluster) | join(" ")' "$OUT")" us-1 "--cluster filters the merged incidents"
run_rt query --db "$T/eu.db" --db "$T/us.db" -o csv --no-headers \
	"SELECT (SELECT count(*) FROM events) - 2 * (SELECT count(*) FROM db1.events), (SELECT count(DISTINCT cluster) FROM revisions)"
is "$(cat "$OUT")" "0,2" "events and revisions of both clusters, none taken for the other's"
run_rt incidents --db "$T/eu.db" --db "$T/us.db" -o json
run_rt show --db "$T/eu.db" --db "$T/us.db" -o json "$(jq -r '.[0].id' "$OUT")"
is "$(jq -r '[.incident.event_count, (.timeline | map(select(.entry == "revision")) | length)] | join(" ")' "$OUT")" \
	"15 2" "show of a merged cluster's incident: its events, its cluster's revisions"

# Errors: clear, non-zero.
run_rt incidents --db "$T/nothing-*.db"
is "$RC" 1 "a glob that matches nothing: exit 1"
like "$(cat "$ERR")" "revtrail incidents: --db $T/nothing-\*.db matches no file" "and says so"
printf 'not a database at all\n' >"$T/junk.db"
run_rt query --db "$T/part-a.db" --db "$T/junk.db" "SELECT 1"
is "$RC" 1 "a file that is not SQLite: exit 1"
like "$(cat "$ERR")" "cannot open $T/junk.db: file is not a database" "and names it"
sqlite3 "$T/other.db" "CREATE TABLE t(x)"
run_rt show --db "$T/part-a.db" --db "$T/other.db" 101
is "$RC" 1 "an SQLite file that is not revtrail's: exit 1"
like "$(cat "$ERR")" "other.db: not a revtrail database" "and says so"
for i in 1 2 3 4 5 6 7 8 9 10 11; do cp "$T/part-a.db" "$T/many-$i.db"; done
run_rt incidents --db "$T/many-*.db"
is "$RC" 2 "more than 10 databases: exit 2"
like "$(cat "$ERR")" "at most 10 are read together" "and says the bound"

# The merged view is as read-only and bounded as one database.
run_rt query $M "ATTACH '$T/all.db' AS x"
is "$RC" 2 "ATTACH stays refused"
run_rt query $M "DELETE FROM incidents"
is "$RC" 2 "a write to the merged tables is refused"
run_rt query $M --timeout 200ms "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
like "$(cat "$ERR")" "stopped after 0.2 s of CPU time" "--timeout bounds the merged query"
run_rt report $M --all
is "$RC" 0 "report reads merged databases"
like "$(cat "$OUT")" "payments-api" "and shows their incidents"

done_testing
