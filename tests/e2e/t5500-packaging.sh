#!/bin/sh
# make install/uninstall into a DESTDIR (binary, man page, completions,
# systemd unit and its sysusers.d user, example config); --version names the
# libraries; the man page renders and names every command and every long
# option of every command's --help; the completion scripts parse; the
# Kubernetes manifests probe and scrape consume --http.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$T/root

run_rt --version
is "$RC" 0 "--version"
like "$(head -n 1 "$OUT")" '^revtrail [0-9]+\.[0-9]+\.[0-9]+' "names the version"
like "$(sed -n 2p "$OUT")" '^PCRE2 [0-9]+\.[0-9]+.*, SQLite 3\.[0-9.]+, librdkafka [0-9.]+, cJSON [0-9.]+$' "and the libraries"

# -o: the binary under test is the one installed, never rebuilt here
ok make -s -C "$ROOT" -o "$REVTRAIL" install BIN="$REVTRAIL" PREFIX=/usr DESTDIR="$D"
for f in usr/bin/revtrail usr/share/man/man1/revtrail.1 \
	usr/share/bash-completion/completions/revtrail \
	usr/share/zsh/site-functions/_revtrail \
	usr/lib/systemd/system/revtrail-consume@.service \
	usr/lib/sysusers.d/revtrail.conf etc/revtrail/kafka.properties.example; do
	ok test -s "$D/$f"
done
ok test -x "$D/usr/bin/revtrail"
like "$("$D/usr/bin/revtrail" --version)" '^revtrail ' "the installed binary runs"
U=$D/usr/lib/systemd/system/revtrail-consume@.service
like "$(cat "$U")" '^ExecStart=/usr/bin/revtrail consume' "the unit runs the installed binary"
like "$(cat "$U")" '^Documentation=man:revtrail\(1\)$' "and documents itself with the installed man page"
user=$(sed -n 's/^User=//p' "$U")
like "$(cat "$D/usr/lib/sysusers.d/revtrail.conf")" "^u $user " "sysusers.d creates the unit's User="

# the man page
M=$D/usr/share/man/man1/revtrail.1
if command -v groff >/dev/null 2>&1; then
	is "$(groff -man -ww -z "$M" 2>&1)" "" "groff renders it without a warning"
	groff -man -Tutf8 "$M" >"$T/man.txt" 2>/dev/null
elif command -v man >/dev/null 2>&1; then
	man -l "$M" >"$T/man.txt" 2>/dev/null
else
	sed 's/\\-/-/g' "$M" >"$T/man.txt"
	echo "ok $((_n + 1)) # SKIP no groff or man to render the page"; _n=$((_n + 1))
fi
sed -i 's/.\x08//g; s/\xe2\x80\x90/-/g' "$T/man.txt"   # overstrike, hyphens
like "$(cat "$T/man.txt")" '^NAME' "a NAME section"
for cmd in ingest incidents show report query consume fleet classify rules prune; do
	like "$(cat "$T/man.txt")" "revtrail $cmd" "the man page has revtrail $cmd"
	"$REVTRAIL" "$cmd" --help >"$T/help" 2>&1
	for o in $(grep -oE -- '--[a-z][a-z-]+' "$T/help" | sort -u); do
		[ "$o" = --help ] && continue
		grep -qF -- "$o" "$T/man.txt" || { _result 1 "man page: $cmd $o"; continue; }
	done
done
ok grep -q -- '--version' "$T/man.txt"

# completions
ok bash -n "$D/usr/share/bash-completion/completions/revtrail"
words=$(bash -c ". '$D/usr/share/bash-completion/completions/revtrail'
	COMP_WORDS=(revtrail ''); COMP_CWORD=1; _revtrail; echo \"\${COMPREPLY[*]}\"")
like "$words" 'ingest incidents show report query consume classify rules' "bash completes the commands"
words=$(bash -c ". '$D/usr/share/bash-completion/completions/revtrail'
	COMP_WORDS=(revtrail show -o ''); COMP_CWORD=3; _revtrail; echo \"\${COMPREPLY[*]}\"")
is "$words" "text json html" "and each command's -o values"
if command -v zsh >/dev/null 2>&1; then
	ok zsh -n "$D/usr/share/zsh/site-functions/_revtrail"
else
	echo "ok $((_n + 1)) # SKIP no zsh to parse _revtrail"; _n=$((_n + 1))
fi

# the Kubernetes manifests: consume --http, probed and scraped on its port
"$REVTRAIL" consume --help >"$T/consume-help" 2>&1
if python3 -c 'import yaml' 2>/dev/null; then
	is "$(python3 "$ROOT/tests/e2e/manifests.py" "$T/consume-help" "$ROOT"/deploy/kubernetes/*.yaml 2>&1)" "" \
		"manifests: httpGet probes on --http's port, Prometheus annotations, resources, headless Service"
else
	echo "ok $((_n + 1)) # SKIP no python3-yaml to read the manifests"; _n=$((_n + 1))
fi
for f in "$ROOT"/deploy/kubernetes/*.yaml; do
	unlike "$(cat "$f")" 'exec:|stat -c' "$(basename "$f"): no shell probes"
done

ok make -s -C "$ROOT" uninstall PREFIX=/usr DESTDIR="$D"
is "$(find "$D" -type f | wc -l | tr -d ' ')" 0 "uninstall removes every file it installed"

# PREFIX moves everything but the config
ok make -s -C "$ROOT" -o "$REVTRAIL" install BIN="$REVTRAIL" PREFIX=/opt/rt DESTDIR="$T/opt"
ok test -x "$T/opt/opt/rt/bin/revtrail"
like "$(cat "$T/opt/opt/rt/lib/systemd/system/revtrail-consume@.service")" '^ExecStart=/opt/rt/bin/revtrail ' "PREFIX reaches the unit"
ok make -s -C "$ROOT" uninstall PREFIX=/opt/rt DESTDIR="$T/opt"
is "$(find "$T/opt" -type f | wc -l | tr -d ' ')" 0 "and uninstall with the same PREFIX"
done_testing
