#!/bin/sh
# An "after upgrade" diagnosis blames the upgrade only for an incident that
# opens within the rule's `within` bound (24h in the default packs) of the
# revision's deploy time: the same crash loop 5 minutes after revision 4 is
# crashloop_after_upgrade; 20 days after it, no diagnosis blames the
# upgrade and the incident is named by its cause (its tags).
. "$(dirname "$0")/lib.sh"
D=$DATA/answers

run_rt ingest --db "$T/soon.db" --release shop/checkout "$D/history.json" "$D/crash-soon.ndjson"
is "$RC" 0 "ingest: a crash loop 5 minutes after the upgrade"
run_rt query --db "$T/soon.db" -o json "SELECT revision, diagnosis, evidence FROM incidents"
is "$(jq -c '[.[] | [.revision, .diagnosis]]' "$OUT")" '[[4,"crashloop_after_upgrade"]]' \
	"soon after the upgrade: crashloop_after_upgrade"
like "$(jq -r '.[0].evidence' "$OUT")" 'opened 5m after the upgrade to revision 4' \
	"the evidence says how long after the upgrade"

run_rt ingest --db "$T/late.db" --release shop/checkout "$D/history.json" "$D/crash-late.ndjson"
is "$RC" 0 "ingest: the same crash loop 20 days later"
run_rt query --db "$T/late.db" -o json "SELECT revision, diagnosis, title FROM incidents"
is "$(jq -c '[.[] | [.revision, .diagnosis, .title]]' "$OUT")" '[[4,null,"crashloop in checkout"]]' \
	"20 days after the upgrade: no after-upgrade diagnosis, the cause names it"

# within is a rule field: a pack may set its own bound, and bad values fail.
cat > "$T/w.rules" <<'RULES'
diagnosis slow_crash_after_upgrade
  title     crash loop within 30 days of an upgrade
  priority  1000
  opened-by upgrade
  within    30d
  any       crashloop
RULES
run_rt ingest --db "$T/late30.db" --rules "$T/w.rules" --release shop/checkout "$D/history.json" "$D/crash-late.ndjson"
run_rt query --db "$T/late30.db" -o csv "SELECT diagnosis FROM incidents"
is "$(tail -n 1 "$OUT")" slow_crash_after_upgrade "a rule's own within 30d holds 20 days later"
printf 'diagnosis x\n  title t\n  opened-by upgrade\n  within 3 weeks\n' > "$T/bad.rules"
run_rt rules check "$T/bad.rules"
is "$RC" 2 "a bad within is refused"
like "$(cat "$ERR")" "bad within '3 weeks'" "and named"
printf 'diagnosis x\n  title t\n  within 2h\n' > "$T/bad2.rules"
run_rt rules check "$T/bad2.rules"
like "$(cat "$ERR")" "'within' bounds 'opened-by upgrade' only" "within without opened-by upgrade is refused"
done_testing
