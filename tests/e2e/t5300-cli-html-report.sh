#!/bin/sh
# show -o html and report: one self-contained page (no script, no fetch, a
# CSP that forbids any), an inline SVG timeline with a marker per revision,
# a lane per object and a dot per event, every name HTML-escaped. Headless
# Chromium renders it: the DOM has the timeline and the console no error;
# a page that does fetch something is caught by the same check.
. "$(dirname "$0")/lib.sh"
DB=$T/h.db
EX=$(cd "$(dirname "$0")/../../examples/field-reports" && pwd)
mkdir "$T/in"
cp "$EX"/hook-configmap-race/* "$EX"/superseded-release-install/* "$T/in/"
# a pod name that is markup
sed -i 's/7d9c8f4b6-4kx2m/7d9c8f4b6-4kx2m<img src=x onerror=alert(1)>/g' "$T/in/events.ndjson"

run_rt ingest --db "$DB" "$T/in"/*
is "$RC" 0 "ingest"
run_rt query --db "$DB" -o json "SELECT id FROM incidents WHERE release = 'payments-api'"
ID=$(jq -r '.[0].id' "$OUT")

run_rt show --db "$DB" -o html "$ID"
is "$RC" 0 "show -o html"
cp "$OUT" "$T/show.html"
like "$(head -n 1 "$OUT")" '^<!DOCTYPE html>' "an HTML page"
like "$(cat "$OUT")" "Content-Security-Policy\" content=\"default-src 'none'" "a CSP that forbids fetches"
unlike "$(cat "$OUT")" '<script|<link|<img|<iframe|https?://|<[a-z]+[^>]* (src|href)=' "nothing to fetch or run"
like "$(cat "$OUT")" '&lt;img src=x onerror=alert\(1\)&gt;' "names are HTML-escaped"
like "$(cat "$OUT")" '<svg class="timeline"' "an inline SVG timeline"
is "$(grep -o '<g class="rev[^"]*">' "$OUT" | wc -l | tr -d ' ')" 2 "a marker per revision (48, 49)"
is "$(grep -c '<g class="rev opening">' "$OUT")" 1 "the opening one marked"
is "$(grep -o '<circle class="ev"' "$OUT" | wc -l | tr -d ' ')" 15 "a dot per event"
is "$(grep -o 'class="lanelabel"' "$OUT" | wc -l | tr -d ' ')" 4 "a lane per object (the renamed pod and its log lines differ)"
like "$(cat "$OUT")" 'Diagnosis: hook_configmap_race' "the diagnosis"
like "$(cat "$OUT")" '<h3>Evidence</h3>' "the evidence"
like "$(cat "$OUT")" '<ol><li>' "the remedy's steps"
like "$(cat "$OUT")" "<code>kubectl delete pod -n prod &#39;payments-api-7d9c8f4b6-4kx2m&lt;img" "the remedy quotes the name for the shell, escaped for HTML"
run_rt show --db "$DB" -o html 999
is "$RC" 1 "no such incident: exit 1"
is "$(cat "$OUT")" "" "and no page"
run_rt show --db "$DB" -o yaml "$ID"
is "$RC" 2 "-o wants text, json or html"

run_rt report --db "$DB"
is "$RC" 0 "report"
cp "$OUT" "$T/report.html"
is "$(grep -c '<section class="incident"' "$OUT")" 1 "report: the open incidents"
run_rt report --db "$DB" --all
is "$(grep -c '<section class="incident"' "$OUT")" 2 "report --all: every incident"
run_rt report --db "$T/missing.db"
is "$RC" 1 "report of a missing database"

CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
	echo "ok $((_n + 1)) # SKIP no chromium (apt-get install chromium) to render the page"
	_n=$((_n + 1))
	done_testing
	exit $?
fi
# Renders a page: the DOM into $1.dom, a screenshot into $1.png, the
# browser's log (console messages, refused loads) into $1.log.
render() {
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$T/chrome" --enable-logging=stderr \
		--v=0 --hide-scrollbars --window-size=1000,1400 \
		--screenshot="$1.png" "file://$1" 2>"$1.log" >/dev/null
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$T/chrome" --enable-logging=stderr \
		--v=0 --dump-dom "file://$1" 2>>"$1.log" >"$1.dom"
}
console_errors() { grep -E 'CONSOLE|Refused to|Content Security Policy|Uncaught' "$1.log"; }

render "$T/show.html"
ok test -s "$T/show.html.png"
is "$(head -c 4 "$T/show.html.png" | od -An -c | tr -d ' ')" '211PNG' "a PNG screenshot"
is "$(grep -o '<circle class="ev"' "$T/show.html.dom" | wc -l | tr -d ' ')" 15 "the rendered DOM has the timeline's events"
like "$(cat "$T/show.html.dom")" '<svg class="timeline"' "and its SVG"
unlike "$(cat "$T/show.html.dom")" '<img' "the escaped markup stayed text"
is "$(console_errors "$T/show.html")" "" "no console errors"
render "$T/report.html"
is "$(console_errors "$T/report.html")" "" "report: no console errors"
# the check can fail: the same CSP refuses a page that fetches
sed 's|<footer>|<img src="http://127.0.0.1:9/x.png"><footer>|' "$T/show.html" >"$T/bad.html"
render "$T/bad.html"
like "$(console_errors "$T/bad.html")" "." "a fetching page is caught"
done_testing
