#!/bin/sh
# consume --http without a broker (127.0.0.1:1 refuses): the HTTP server
# runs all the same. A port in use gives revtrail's one error line, not
# libmicrohttpd's own "Failed to bind to port 0" before it.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "1..0 # skip no python3"; exit 0; }

# a port held by another listener
python3 -c '
import socket, sys, time, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
' "$T/held" &
HOLDER=$!
i=0
while [ ! -s "$T/held" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
run_rt consume -b 127.0.0.1:1 -t t -G g --db "$T/x.db" --http "127.0.0.1:$(cat "$T/held")"
kill "$HOLDER" 2>/dev/null
is "$RC" 1 "--http on a port in use exits 1"
like "$(cat "$ERR")" "ERROR http: --http 127.0.0.1:[0-9]+: cannot listen: Address already in use" "revtrail's error"
unlike "$(cat "$ERR")" "Failed to bind|port 0" "no libmicrohttpd line of its own"
is "$(grep -c http "$ERR")" 1 "one line about it"
done_testing
