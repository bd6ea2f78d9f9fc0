#!/bin/sh
# Helm tables without their header: `helm list --no-headers` (TAB-separated
# as helm prints it, or copied from a terminal with spaces), and `helm
# history` rows whose header line was lost. Every cell must look as Helm
# prints it, so log lines of a similar shape stay plain text.
. "$(dirname "$0")/lib.sh"

printf 'web   \tshop     \t2       \t2024-01-02 10:00:00.123456789 +0100 CET\tdeployed\tweb-1.5.0\t1.5.0      \n' > "$T/list.txt"
printf 'cache \tdata     \t7       \t2024-01-03 08:30:00.5 +0000 UTC        \tfailed  \tredis-18.1.2\t7.2.3      \n' >> "$T/list.txt"
printf 'api    shop    4    2024-01-02 11:00:00.25 +0100 CET    pending-upgrade    api-0.3.1    \n' > "$T/spaces.txt"
printf '1       \tTue Jan  2 08:00:00 2024\tsuperseded\tweb-1.4.0\t1.4.0      \tInstall complete\n' > "$T/hist.txt"
printf '2       \tTue Jan  2 10:00:00 2024\tdeployed  \tweb-1.5.0\t1.5.0      \tUpgrade complete\n' >> "$T/hist.txt"

run_rt ingest --db "$T/l.db" "$T/list.txt" "$T/spaces.txt"
is "$RC" 0 "ingest list rows without a header"
run_rt query --db "$T/l.db" -o json "SELECT namespace, release, revision, status, chart, app_version, updated_at FROM revisions ORDER BY release"
is "$(jq -c 'map([.namespace, .release, .revision, .status, .chart, .app_version, .updated_at])' "$OUT")" \
	'[["shop","api",4,"pending-upgrade","api-0.3.1",null,"2024-01-02T10:00:00.250000Z"],["data","cache",7,"failed","redis-18.1.2","7.2.3","2024-01-03T08:30:00.500000Z"],["shop","web",2,"deployed","web-1.5.0","1.5.0","2024-01-02T09:00:00.123456Z"]]' \
	"each row a revision of its release"

run_rt ingest --db "$T/h.db" --release shop/web "$T/hist.txt"
is "$RC" 0 "ingest history rows without a header"
run_rt query --db "$T/h.db" -o json "SELECT revision, status, chart, description, updated_at FROM revisions ORDER BY revision"
is "$(jq -c 'map([.revision, .status, .chart, .description, .updated_at])' "$OUT")" \
	'[[1,"superseded","web-1.4.0","Install complete","2024-01-02T08:00:00.000000Z"],[2,"deployed","web-1.5.0","Upgrade complete","2024-01-02T10:00:00.000000Z"]]' \
	"history rows, read in the zone of TZ"

# Counterexamples: log lines with some of the shape, none with all of it.
cat > "$T/logs.txt" <<'X'
web shop 2 2024-01-02 10:00:00 deployed to production by ci
worker-1 default 12 2024-01-02T10:00:00Z failed job-7 1
GET /api 200 2024-01-02 10:00:00 deployed web-1.5.0 1.5.0
3 Tue Jan 2 08:00:00 2024 request took 5ms
1 Tue Jan  2 08:00:00 2024 deployed
web-5d8f-x1   1/1     Running   0          5m
X
run_rt classify --all "$T/logs.txt"
is "$RC" 0 "classify log lines"
is "$(jq -r '.format' "$OUT" | sort -u | tr '\n' ' ')" "text " "every one stays a text line"
is "$(jq -s 'length' "$OUT")" 6 "none lost"
done_testing
