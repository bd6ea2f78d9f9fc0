#!/bin/sh
# `helm history` prints UPDATED in ANSIC without a zone: the wall time of
# the machine helm ran on. Read in TZ (or --helm-tz), an upgrade at 10:00
# in Berlin is 09:00Z, before pod failures at 09:05Z, which are then the
# upgrade's (revision 2), not the healthy revision before it. Read as UTC
# they were charged to revision 1. Los Angeles is the mirror case: an
# upgrade at 01:00 there is 09:00Z, after failures at 08:30Z, which belong
# to revision 1. The summary names the zone it assumed.
. "$(dirname "$0")/lib.sh"

history() {   # history TIME1 TIME2: helm's table, TAB-separated as uitable
	printf 'REVISION\tUPDATED                 \tSTATUS    \tCHART    \tAPP VERSION\tDESCRIPTION     \n'
	printf '1       \t%s\tsuperseded\tweb-1.4.0\t1.4.0      \tInstall complete\n' "$1"
	printf '2       \t%s\tdeployed  \tweb-1.5.0\t1.5.0      \tUpgrade complete\n' "$2"
}
ev() {   # ev N TIME: a pod of release web backing off
	printf '{"apiVersion":"v1","kind":"Event","metadata":{"name":"web-5d8f-x1.%s","namespace":"shop","uid":"u%s"},' "$1" "$1"
	printf '"involvedObject":{"kind":"Pod","name":"web-5d8f-x1","namespace":"shop"},"reason":"BackOff",'
	printf '"message":"Back-off restarting failed container web in pod web-5d8f-x1","type":"Warning",'
	printf '"count":1,"lastTimestamp":"%s"}\n' "$2"
}
history "Tue Jan  2 08:00:00 2024" "Tue Jan  2 10:00:00 2024" > "$T/berlin.txt"
history "Mon Jan  1 20:00:00 2024" "Tue Jan  2 01:00:00 2024" > "$T/la.txt"
{ ev 1 2024-01-02T09:05:00Z; ev 2 2024-01-02T09:06:00Z; } > "$T/after9.json"
{ ev 1 2024-01-02T08:30:00Z; ev 2 2024-01-02T08:31:00Z; } > "$T/before9.json"

charged() {   # charged DB: the incident's revision
	run_rt incidents --db "$1" -o json
	jq -r '.[0].revision' "$OUT"
}

TZ=Europe/Berlin run_rt ingest --db "$T/b.db" --release shop/web "$T/berlin.txt" "$T/after9.json"
is "$RC" 0 "ingest in Berlin"
like "$(cat "$ERR")" '^ingest: 2 Helm table times without a zone read in Europe/Berlin \(first at .*berlin\.txt:[0-9]+\)' \
	"the summary names the zone it assumed, and where"
run_rt query --db "$T/b.db" -o json "SELECT revision, updated_at FROM revisions ORDER BY revision"
is "$(jq -c 'map(.updated_at)' "$OUT")" '["2024-01-02T07:00:00.000000Z","2024-01-02T09:00:00.000000Z"]' \
	"Berlin's 10:00 in winter is 09:00Z"
is "$(charged "$T/b.db")" 2 "the failures after the upgrade are the upgrade's"

TZ=America/Los_Angeles run_rt ingest --db "$T/l.db" --release shop/web "$T/la.txt" "$T/before9.json"
is "$RC" 0 "ingest in Los Angeles"
like "$(cat "$ERR")" 'read in America/Los_Angeles' "names Los Angeles"
is "$(charged "$T/l.db")" 1 "the failures before the upgrade are the revision before"

# --helm-tz wins over TZ: the table came from a machine elsewhere.
TZ=America/Los_Angeles run_rt ingest --db "$T/h.db" --helm-tz Europe/Berlin --release shop/web "$T/berlin.txt" "$T/after9.json"
is "$RC" 0 "--helm-tz"
like "$(cat "$ERR")" 'read in Europe/Berlin' "names --helm-tz's zone"
is "$(charged "$T/h.db")" 2 "--helm-tz's zone is the one used"

run_rt ingest --db "$T/x.db" --helm-tz Mars/Olympus "$T/berlin.txt"
is "$RC" 2 "an unknown zone is a usage error"
like "$(cat "$ERR")" "unknown zone 'Mars/Olympus'" "and says which"

# Times that name their zone (helm list's Go time.String) assume nothing.
printf 'NAME\tNAMESPACE\tREVISION\tUPDATED                                \tSTATUS  \tCHART    \tAPP VERSION\n' > "$T/list.txt"
printf 'web \tshop     \t2       \t2024-01-02 10:00:00.123456789 +0100 CET\tdeployed\tweb-1.5.0\t1.5.0      \n' >> "$T/list.txt"
TZ=America/Los_Angeles run_rt ingest --db "$T/z.db" "$T/list.txt"
is "$RC" 0 "helm list"
unlike "$(cat "$ERR")" 'without a zone' "nothing assumed"
run_rt query --db "$T/z.db" -o json "SELECT updated_at FROM revisions"
is "$(jq -r '.[0].updated_at' "$OUT")" 2024-01-02T09:00:00.123456Z "its own zone is used"
done_testing
