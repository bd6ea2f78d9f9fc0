#!/bin/sh
# rules check / test / list: the built-in packs pass their own examples, every
# catalog tag has rules, and a broken pack is reported as file:line: problem.
. "$(dirname "$0")/lib.sh"

run_rt rules test
is "$RC" 0 "every built-in example and counterexample holds"
cat "$OUT" | tail -n 3 | while read -r l; do diag "$l"; done

run_rt rules list
is "$RC" 0 "rules list"
cp "$OUT" "$T/list"
for tag in configmap_not_found secret_not_found volume_mount_failed permission_denied \
	config_file_missing subpath_mount helm_name_in_use helm_operation_in_progress \
	helm_no_deployed_releases helm_resource_conflict helm_upgrade_failed crashloop \
	image_pull oom_killed probe_failed failed_scheduling dependency_refused \
	db_auth_failed migration_dirty exec_error upstream_unavailable \
	create_container_config_error config_key_missing config_invalid bind_failed \
	dns_failure migration_failed pvc_provisioning_failed; do
	grep -q "$tag" "$T/list" || echo "$tag" >> "$T/missing"
done
is "$(cat "$T/missing" 2>/dev/null)" "" "every catalog tag has at least one rule"
for d in stale_config_mount hook_configmap_race superseded_release_install; do
	like "$(cat "$T/list")" "$d" "diagnosis $d is in the catalog"
done

# docs/tags.md is the catalog's contract: every tag a built-in rule gives and
# every built-in diagnosis has a row there (the list's second column, or the
# diagnosis id).
DOC=$(dirname "$0")/../../docs/tags.md
grep -v '^diagnosis ' "$T/list" | cut -f2 | tr ',' '\n' | sort -u > "$T/tags"
grep '^diagnosis ' "$T/list" | cut -f1 | cut -d' ' -f2 >> "$T/tags"
: > "$T/undocumented"
while read -r name; do
	grep -q "^| \`$name\` |" "$DOC" || echo "$name" >> "$T/undocumented"
done < "$T/tags"
like "$(wc -l < "$T/tags")" '^[0-9]*[1-9][0-9]+$' "the packs give tags and diagnoses to check"
is "$(cat "$T/undocumented")" "" "every built-in tag and diagnosis is in docs/tags.md"

cat > "$T/bad.rules" <<'R'
# a pack with a broken regex on line 5
rule ok.one
  tags      crashloop
  example   CrashLoopBackOff here
  pattern   (unclosed
R
run_rt rules check "$T/bad.rules"
is "$RC" 2 "a pack with a bad regex exits 2"
like "$(cat "$ERR")" 'bad\.rules:5:' "the error names the file and line"

printf 'rule x\n  tags crashloop\n  colour red\n' > "$T/kw.rules"
run_rt rules check "$T/kw.rules"
is "$RC" 2 "an unknown keyword exits 2"
like "$(cat "$ERR")" 'kw\.rules:3:.*colour' "and names the keyword and line"

cat > "$T/miss.rules" <<'R'
rule demo.miss
  tags      crashloop
  pattern   CrashLoopBackOff
  example   this example does not match
  counterexample  CrashLoopBackOff
R
run_rt rules test "$T/miss.rules"
is "$RC" 1 "rules test fails on a miss"
like "$(cat "$OUT")" 'miss\.rules:4:' "the missed example is reported with its line"

run_rt classify --rules "$T/bad.rules" /dev/null
is "$RC" 2 "classify with a broken --rules pack exits 2"
run_rt rules frobnicate
is "$RC" 2 "an unknown rules verb exits 2"
done_testing
