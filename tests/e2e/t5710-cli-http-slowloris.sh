#!/bin/sh
# /healthz stays answerable behind a slowloris flood: 32 connections from
# six addresses (127.0.0.2..7, all loopback on Linux) that send half a
# request header and never finish it. A kubelet probe (from 127.0.0.1)
# must get its 200 within 2 s, else it restarts a healthy pod; the
# half-open connections are closed after a few seconds. consume runs
# without a broker (127.0.0.1:1 refuses): its HTTP server serves anyway.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "1..0 # skip no python3"; exit 0; }

"$REVTRAIL" consume -b 127.0.0.1:1 -t t -G g --db "$T/x.db" \
	--http 127.0.0.1:0 --status-interval 0 >"$T/c.out" 2>"$T/c.err" &
PID=$!
python3 - "$T/c.err" >"$T/flood.out" 2>&1 <<'PY'
import re, socket, sys, time

def wait_port(path, bound=20):
    end = time.time() + bound
    while time.time() < end:
        m = re.search(r"http: listening on 127\.0\.0\.1:(\d+)", open(path).read())
        if m:
            return int(m.group(1))
        time.sleep(0.05)
    sys.exit("no 'listening on' line")

def probe(port, bound):
    t0 = time.time()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=bound)
        s.settimeout(bound)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while not data.startswith(b"HTTP/") or b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        return data.split(b"\r\n", 1)[0].decode(errors="replace"), time.time() - t0
    except OSError as e:
        return "error: %s" % e, time.time() - t0

port = wait_port(sys.argv[1])
print("before:", probe(port, 2)[0])
held = []
for i in range(32):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (2 + i % 6), 0))
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        held.append(s)
    except OSError:
        pass
time.sleep(0.2)     # let the server take them in
status, took = probe(port, 2)
print("during:", status, "%.2f" % took)
# the half-open ones are closed by the server (after 5 s idle; 15 s
# leaves room for a loaded machine)
end, closed = time.time() + 15, 0
for s in held:
    s.settimeout(max(0.01, end - time.time()))
    try:
        if s.recv(1) == b"":
            closed += 1
    except ConnectionResetError:    # closed with a reset: closed as well
        closed += 1
    except OSError as e:
        print("open:", e)
print("closed: %d of %d" % (closed, len(held)))
PY
kill -TERM "$PID" 2>/dev/null
wait "$PID"
RC=$?
diag "$(cat "$T/flood.out")"
like "$(cat "$T/flood.out")" '^before: HTTP/1.1 200' "/healthz answers"
like "$(cat "$T/flood.out")" '^during: HTTP/1.1 200 ' "/healthz answers behind 32 half-open connections"
like "$(cat "$T/flood.out")" '^closed: ([0-9]+) of \1$' "the half-open connections are closed within 15 s"
is "$RC" 0 "consume exits 0 on SIGTERM"
unlike "$(cat "$T/c.err")" 'Sanitizer|runtime error' "consume ran cleanly"
done_testing
