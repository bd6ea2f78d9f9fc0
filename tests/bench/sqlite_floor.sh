#!/usr/bin/env bash
# sqlite_floor.sh SRC.db [ROWS]: what SQLite alone takes to store the rows
# revtrail stored in SRC.db, the lower bound of a writer that stores them.
# A fresh database gets SRC's own tables events and incident_objects with
# their indexes (so it follows the schema's migrations) and the writer's
# pragmas (store/store.c), then the sqlite3 shell copies the rows with
# INSERT ... SELECT, ROWS (default 16384, a batch's stored events) a
# transaction: no statement per row, no parsing, no correlation. Printed:
# wall and CPU seconds for the events alone, then for events and their
# object rows together. Not part of the suite; needs sqlite3 and GNU time.
set -euo pipefail
src=$(realpath "${1:?usage: sqlite_floor.sh SRC.db [ROWS]}")
rows=${2:-16384}
W=$(mktemp -d "${TMPDIR:-/tmp}/revtrail-floor.XXXXXX")
trap 'rm -rf "$W"' EXIT

# The CREATE statements of a table and its indexes, as SRC holds them.
schema() {
	sqlite3 "$src" "SELECT sql || ';' FROM sqlite_schema WHERE tbl_name IN
		($1) AND sql IS NOT NULL ORDER BY type DESC, name"
}
n=$(sqlite3 "$src" "SELECT coalesce(max(id), 0) FROM events")

# SQL copying the rows in transactions of $rows; objects in first-seen
# order, as a writer adds them.
copy() {   # TABLES
	echo "PRAGMA page_size = 16384; PRAGMA journal_mode = WAL;"
	echo "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384;"
	schema "$1"
	echo "ATTACH '$src' AS src;"
	case $1 in
	*incident_objects*)
		echo "CREATE TEMP TABLE o AS SELECT * FROM src.incident_objects ORDER BY first_ns;" ;;
	esac
	for ((lo = 0; lo < n; lo += rows)); do
		echo "BEGIN;"
		echo "INSERT INTO events SELECT * FROM src.events WHERE id > $lo AND id <= $((lo + rows));"
		case $1 in
		*incident_objects*)
			echo "INSERT INTO incident_objects SELECT * FROM temp.o WHERE rowid > $lo AND rowid <= $((lo + rows));" ;;
		esac
		echo "COMMIT;"
	done
}

for tables in "'events'" "'events', 'incident_objects'"; do
	copy "$tables" >"$W/copy.sql"
	rm -f "$W/new.db" "$W/new.db-wal" "$W/new.db-shm"
	# The source in the page cache: the copy, not the disk, is timed.
	cat "$src" >/dev/null
	sync
	/usr/bin/time -f '%e %U %S' -o "$W/time" sqlite3 "$W/new.db" <"$W/copy.sql" >/dev/null
	read -r e u s <"$W/time"
	printf 'floor: %s: %d events, %.2f s wall, %.2f s CPU\n' "$tables" "$n" \
		"$e" "$(echo "$u + $s" | bc)"
done
