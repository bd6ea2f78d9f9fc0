#!/bin/sh
# Read commands never write: a user who may only read the database file,
# in a directory they cannot write (so no -shm can be made beside a WAL
# database), still runs query, incidents and show, and the file is left
# byte for byte as it was. A -wal that a stopped writer left behind cannot
# be read that way: the reader says so. As root (who ignores permissions)
# the readers run as nobody through setpriv.
. "$(dirname "$0")/lib.sh"
D=$T/ro DB=$T/ro/x.db
mkdir -p "$D"

run_rt ingest --db "$DB" "$DATA/scenarios/superseded-release-install"/*
is "$RC" 0 "ingest"

if [ "$(id -u)" = 0 ]; then
	if ! command -v setpriv >/dev/null 2>&1; then
		echo "1..0 # SKIP setpriv missing: cannot drop root's privileges"
		exit 0
	fi
	chmod 755 "$T"
	as_reader() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	if ! as_reader test -x "$REVTRAIL"; then
		echo "1..0 # SKIP nobody cannot run $REVTRAIL"
		exit 0
	fi
else
	as_reader() { "$@"; }
fi
chmod 555 "$D"
chmod 444 "$DB"
sum() { sha256sum "$DB" | cut -d' ' -f1; }
before=$(sum)

run_reader() {   # like run_rt, as the reader
	RC=0
	as_reader "$REVTRAIL" "$@" >"$OUT" 2>"$ERR" || RC=$?
	if [ "$RC" -ge 128 ] || grep -qE 'Sanitizer|runtime error:' "$ERR"; then
		_result 1 "revtrail $* ran cleanly (exit $RC)"
		diag "$(head -c 3000 "$ERR")"
	fi
}

run_reader query --db "$DB" -o json "SELECT count(*) AS n FROM incidents"
is "$RC" 0 "query as a user who can only read"
is "$(cat "$ERR")" "" "no error, no warning"
is "$(jq -r '.[0].n' "$OUT")" 1 "and it reads the incident"
id=$(jq -r '.[0].n' "$OUT")
run_reader incidents --db "$DB"
is "$RC" 0 "incidents as that user"
like "$(cat "$OUT")" 'kube-system/rke2-' "lists the incident"
run_reader show --db "$DB" "$id"
is "$RC" 0 "show as that user"
like "$(cat "$OUT")" 'rke2-ingress-nginx' "shows the incident"
run_reader query --db "$DB" "DELETE FROM incidents"
is "$RC" 2 "a write is still refused"
is "$(sum)" "$before" "the database file is unchanged"
is "$(ls -A "$D")" "x.db" "and nothing was created beside it"

# A writer that stopped without a checkpoint leaves its last commits in
# the -wal, and the -shm: SQLite reads both without writing them.
chmod 755 "$D"
chmod 644 "$DB"
python3 - "$DB" <<'PY'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_autocheckpoint = 0")
c.execute("UPDATE incidents SET status = 'closed'")
c.commit()
os._exit(0)   # no close: the -wal stays, as after a crash
PY
ok test -s "$DB-wal"
chmod 555 "$D"
run_reader query --db "$DB" -o json "SELECT status FROM incidents"
is "$RC" 0 "a leftover -wal reads"
is "$(jq -r '.[0].status' "$OUT")" closed "with the commits in it"
# Without its -shm, the -wal cannot be read by whoever cannot make one.
chmod 755 "$D"
rm -f "$DB-shm"
chmod 555 "$D"
run_reader query --db "$DB" -o json "SELECT status FROM incidents"
is "$RC" 0 "a -wal without -shm: the file still reads"
is "$(jq -r '.[0].status' "$OUT")" open "as of the last checkpoint"
like "$(cat "$ERR")" 'not writable.*x.db-wal are not shown' "and says what it cannot show"
chmod 755 "$D"
run_rt query --db "$DB" -o json "SELECT status FROM incidents"
is "$(jq -r '.[0].status' "$OUT")" closed "whoever may write the directory sees the -wal"
done_testing
