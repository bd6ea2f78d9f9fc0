#!/bin/sh
# Failures of the families real reports name, each in its own release of
# namespace shop known from `helm list -o json`: a database refusing its
# data directory's ownership, HAProxy's termination flags on 503s, a
# Flyway validation failure, nslookup's NXDOMAIN in an init container with
# nginx's [emerg] open() of a snippet, supervisord giving up. One incident
# per release, at the revision in force, attributed by the release prefix.
. "$(dirname "$0")/lib.sh"
V=$DATA/variants/field-families
LOGS=$(find "$V/var" -type f | sort)

run_rt ingest --db "$T/a.db" "$V/helm-list.json" $LOGS
is "$RC" 0 "ingest"
run_rt query --db "$T/a.db" -o json "SELECT release, revision, attribution, tags FROM incidents ORDER BY release"
is "$(jq -c 'map([.release, .revision, .attribution, (.tags | fromjson)])' "$OUT")" \
	'[["catalog",8,"prefix",["migration_failed"]],["edge",3,"prefix",["upstream_unavailable"]],["orders-db",5,"prefix",["permission_denied"]],["search",2,"prefix",["config_file_missing","dns_failure"]],["worker",14,"prefix",["crashloop"]]]' \
	"one incident per release, its revision and family"
run_rt query --db "$T/a.db" -o json "SELECT count(*) AS n FROM events WHERE message LIKE '%200 918%'
 OR message LIKE '%Successfully validated%' OR message LIKE '%spawned:%'"
is "$(jq -c '.[0].n' "$OUT")" 0 "benign lines of the same programs stay out"
done_testing
