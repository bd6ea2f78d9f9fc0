#!/usr/bin/env python3
"""latency.py: the watching half of latency.sh.

    latency.py DB TOPIC N SENT TIMEOUT

Reads DB (read-only, every 5 ms) for the next offset of partition 0 of
TOPIC in `sources`, which `consume` writes in the same transaction as the
message's rows, and notes when each of the N messages was first seen
committed. SENT is lat_produce's "i monotonic_ns" lines, the time each
message was handed to the producer (the same clock as time.monotonic). A
message's latency is the time from its hand-over to that first sight.
Prints one line: "n p50_ms p99_ms max_ms".
"""
import sqlite3
import sys
import time


def committed(db, topic):
    """The partition's next offset in the database; 0 before any commit."""
    try:
        row = db.execute("SELECT offset FROM sources WHERE path = ? AND"
                         " partition = 0", (topic,)).fetchone()
    except sqlite3.OperationalError:   # no database or schema yet
        return 0
    return row[0] if row else 0


def main():
    path, topic, n, sent_path, timeout = sys.argv[1:6]
    n, deadline = int(n), time.monotonic() + float(timeout)
    seen, done, db = [None] * n, 0, None
    while done < n and time.monotonic() < deadline:
        if db is None:
            try:
                db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
            except sqlite3.OperationalError:
                db = None
        upto = min(committed(db, topic), n) if db else 0
        now = time.monotonic()
        while done < upto:
            seen[done] = now
            done += 1
        time.sleep(0.005)
    if done < n:
        sys.exit("latency.py: %d of %d messages committed in time" % (done, n))
    sent = {}
    while len(sent) < n and time.monotonic() < deadline:
        time.sleep(0.1)       # the producer writes SENT out as it exits
        with open(sent_path, encoding="ascii") as f:
            sent = dict((int(i), int(ns) / 1e9) for i, ns in
                        (line.split() for line in f if line.endswith("\n")))
    if len(sent) < n:
        sys.exit("latency.py: %d of %d send times written" % (len(sent), n))
    ms = sorted((seen[i] - sent[i]) * 1000 for i in range(n))
    print("%d %.0f %.0f %.0f" % (n, ms[len(ms) // 2],
                                 ms[min(n - 1, int(0.99 * n))], ms[-1]))


if __name__ == "__main__":
    main()
