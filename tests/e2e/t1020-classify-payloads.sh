#!/bin/sh
# The JSON payload of a log line (CRI content, a docker `log`, a Fluent Bit
# `log`, a plain line that opens with `{`), read by json_scan.h as every
# JSON input is: each corpus file in tests/data/payloads decodes, record
# by record, to [format, message, type] as its expect/ file says. strict.*
# holds what common loggers write (zap, logrus, slog, bunyan, pino,
# logstash-logback, Spring's ECS, klog, Python, Serilog, log4j2) with
# escapes, surrogate pairs, nesting and numbers; lenient.* what is not
# JSON: a complete object with a tail is read, anything else stays a text
# line, whole (docs/formats.md §2.6).
. "$(dirname "$0")/lib.sh"
P=$DATA/payloads

for f in strict.cri.log lenient.cri.log docker.log fluentbit.ndjson \
	 lenient.txt; do
	run_rt classify --all "$P/$f"
	is "$RC" 0 "$f: classify exits 0"
	jq -c '[.format, .message, .fields.type]' "$OUT" > "$T/$f.got"
	ok diff "$P/expect/$f.jsonl" "$T/$f.got"
done

# No record is lost, whichever way its payload went.
run_rt classify --all "$P/lenient.cri.log"
is "$(jq -s length "$OUT")" "$(wc -l < "$P/lenient.cri.log" | tr -d ' ')" \
	"every lenient line is a record"

done_testing
