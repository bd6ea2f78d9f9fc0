#!/bin/sh
# Precision and recall of the default packs over a labelled corpus kept apart
# from the rules' own examples: tests/data/classify/corpus.tsv, one
# "TAGS<TAB>line" per row (TAGS comma-separated, "-" for a benign line).
# Goal from the foundation issue: >= 95% of error lines get all their
# expected tags; <= 2% of benign lines get any tag.
. "$(dirname "$0")/lib.sh"
C=$DATA/classify/corpus.tsv

cut -f2- "$C" > "$T/lines"
cut -f1 "$C" > "$T/want"
run_rt classify --all --format text "$T/lines"
is "$RC" 0 "classify the corpus"
jq -r -s '.[] | (.tags | sort | join(","))' "$OUT" > "$T/got"
is "$(wc -l < "$T/got")" "$(wc -l < "$T/want")" "one output per corpus line"

paste "$T/want" "$T/got" "$T/lines" | awk -F'\t' '
	$1 == "-" { benign++; if ($2 != "") { fp++; print "# false positive [" $2 "]: " $3 } ; next }
	{
		errors++; n = split($1, w, ","); missing = ""
		for (i = 1; i <= n; i++) if (index("," $2 ",", "," w[i] ",") == 0) missing = missing " " w[i]
		if (missing == "") hit++; else print "# missed" missing " [" $2 "]: " $3
	}
	END {
		printf "recall %d %d\nfp %d %d\n", hit, errors, fp, benign > "/dev/stderr"
	}' 2> "$T/score"
cat "$T/score" | sed 's/^/# /'
set -- $(awk '/^recall/ { print $2, $3 } /^fp/ { print $2, $3 }' "$T/score")
hit=$1 errors=$2 fp=$3 benign=$4
ok test "$errors" -gt 100 -a "$benign" -gt 50
ok test $((hit * 100)) -ge $((errors * 95))
ok test $((fp * 100)) -le $((benign * 2))
done_testing
