/*
 * store_read.h: reading a revtrail database (query, incidents, show).
 *
 * A reader never writes: the file is opened read-only, and when the
 * directory is not writable (no -shm can be made next to a WAL database)
 * it is opened immutable instead. Everything a read can make revtrail
 * spend is bounded (store_read_opts). This header needs nothing of the
 * correlator; the writer's API is revtrail/store.h, which includes it.
 */
#ifndef REVTRAIL_STORE_READ_H
#define REVTRAIL_STORE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct store;

/* Defaults of the read commands (query --timeout, --max-memory). */
#define STORE_READ_TIMEOUT_NS (30 * 1000000000LL)
#define STORE_READ_HEAP_BYTES (256LL << 20)

struct store_read_opts {
	int64_t timeout_ns;   /* CPU time per store_query, store_incidents,
	                       * store_incident_part call; 0 = no limit */
	int64_t heap_bytes;   /* SQLite's heap, process-wide, set at open;
	                       * also bounds a value to heap_bytes / 8
	                       * (at least 1 MiB); 0 = no limit */
	FILE *log;            /* warnings (a -wal it cannot read); may be NULL */
};

/*
 * Opens an existing database for reading: read-only, or immutable when its
 * directory is not writable; defensive, under an authorizer that admits
 * reads only (no ATTACH, no PRAGMA that sets, no fts3_tokenizer) and
 * sqlite3_limit bounds. o may be NULL (no time or heap limit).
 * Returns 0, or RT_EDB / RT_ENOMEM with a message in err.
 */
int store_open_read(const char *path, const struct store_read_opts *o,
		    struct store **out, char *err, size_t errlen);
void store_close(struct store *st);

/* Databases store_open_read_many reads together (SQLite's attach limit). */
#define STORE_READ_MAX_DBS 10

/*
 * Opens n databases (1..STORE_READ_MAX_DBS) as one, for reading: each is
 * attached read-only as db1, db2, ... (in this order), and TEMP objects
 * named like the contract tables (incidents, events, incident_objects,
 * revisions, timeline, ...) merge them: an event key counts once, and
 * incidents of one release and revision whose windows overlap or lie
 * within the gap are one, with id = the first member's id * 100 + its
 * database's position (store/merge.c). Everything store_open_read bounds
 * is bounded the same, the building of the merge included. n == 1 is
 * store_open_read.
 */
int store_open_read_many(const char *const *paths, size_t n,
			 const struct store_read_opts *o, struct store **out,
			 char *err, size_t errlen);
/* The last SQLite error message of this store. */
const char *store_errmsg(const struct store *st);

enum store_type { STORE_NULL, STORE_INT, STORE_REAL, STORE_TEXT, STORE_BLOB };

struct store_value {
	enum store_type type;
	int64_t i;
	double d;
	const char *p;     /* TEXT (NUL-terminated) and BLOB */
	size_t n;
};

/* One result row; names and values valid during the call only. A non-zero
 * return stops the query and is returned by it. */
typedef int (*store_row_fn)(void *ctx, int ncols, const char *const *names,
			    const struct store_value *vals);

/*
 * Runs user SQL on a store opened for reading: every statement of sql must
 * be a read (the authorizer, sqlite3_stmt_readonly), else nothing runs and
 * RT_EINVAL is returned with "... is not allowed: query is read-only" or
 * "attempt to write a readonly database" in err. Rows of every statement
 * go to fn; header (may be NULL) is called before each statement's rows
 * with its column names. Returns 0, RT_EINVAL (bad SQL, a refusal), RT_EDB
 * (also a bound reached: "stopped ..." in err), or fn's non-zero return.
 */
int store_query(struct store *st, const char *sql,
		int (*header)(void *ctx, int ncols, const char *const *names),
		store_row_fn fn, void *ctx, char *err, size_t errlen);

struct store_filter {
	bool open_only;
	const char *ns, *release;     /* NULL = any */
	const char *cluster;          /* NULL = any; "" the default one */
	int64_t since_ns;             /* last seen at or after; 0 = any */
};

/* 1 when some incident belongs to a named cluster (the read commands show
 * clusters only then, so a one-cluster database reads as before), 0 when
 * none does or the file predates clusters, or RT_EDB. */
int store_has_clusters(struct store *st);

/* Incidents newest first. Columns: see SQL_INCIDENTS in store/sql.h; the
 * last, cluster, is '' in a file that predates clusters. */
int store_incidents(struct store *st, const struct store_filter *f,
		    int (*header)(void *ctx, int ncols,
				  const char *const *names),
		    store_row_fn fn, void *ctx);

/*
 * Watching a database another connection writes (incidents --watch).
 * store_data_version: SQLite's data_version of the main database (of
 * every database read as one, folded), which changes when another
 * connection commits; one short read, so a watcher can ask every few
 * hundred milliseconds and hold no snapshot between. On several
 * databases read as one its first answer is the version from before the
 * merge was built: a commit made meanwhile reads as a change.
 * store_incidents_watch: what may have changed since a commit, in the
 * columns of store_incidents, by id: the open incidents under f and those
 * after after_id, not the closed ones of before (indexed reads only).
 * store_incident_row: incident id in those columns (no row: gone).
 * Each returns 0, RT_EDB, or fn's non-zero return.
 */
int store_data_version(struct store *st, int64_t *v);
int store_incidents_watch(struct store *st, const struct store_filter *f,
			  int64_t after_id, store_row_fn fn, void *ctx);
int store_incident_row(struct store *st, int64_t id, store_row_fn fn,
		       void *ctx);

enum store_part {
	STORE_PART_INCIDENT,    /* one row: the incident */
	STORE_PART_OBJECTS,     /* affected objects, first seen first */
	STORE_PART_TIMELINE,    /* events and revisions in time order */
	STORE_PART_REVISION,    /* the opening revision: updated_ns, status.. */
	STORE_PART_EXPORT,      /* the incident and its pod_count (a database
	                         * of the current schema only) */
	STORE_PART_CHANGES,     /* (revision, manifest_summary) of its revision
	                         * and the one before with one, newest first;
	                         * none before schema 9 */
	STORE_PART_TIMELINE_KEYED,  /* the timeline with event_id last (NULL
	                         * for a revision): show --watch */
	STORE_PART_LIFE,        /* (life, lives): the opening revision's life
	                         * and how many the release has; none before
	                         * schema 11 */
	STORE_PART_GUESS,       /* the namespaces a job's release was guessed
	                         * among by name (none when evidence said) */
};
/* Rows of one part of incident id. Returns 0 (also when no rows). */
int store_incident_part(struct store *st, int64_t id, enum store_part part,
			store_row_fn fn, void *ctx);

#endif
