/*
 * store_int.h (private to store/): the store object, its prepared
 * statements and the small helpers the store's files share.
 */
#ifndef REVTRAIL_STORE_INT_H
#define REVTRAIL_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "revtrail/rt_kit.h"
#include "revtrail/store.h"
#include "sql.h"

#define X(name, sql) S_##name,
enum store_stmt { STORE_WRITE_STMTS(X) S_COUNT };
#undef X

/* The objects a diagnosis reads of one incident. */
struct objlist {
	struct plan_object *o;
	size_t n, cap;
};

/* seen.c: a Bloom filter of the event identities stored. */
#define SEEN_MIN_BITS ((uint64_t)1 << 24)      /* 2 MiB, 1M keys */
#define SEEN_MAX_BITS ((uint64_t)1 << 27)      /* 16 MiB, 8M keys */
struct seen {
	uint64_t *w;                      /* NULL: off, every key "maybe" */
	uint64_t mask;                    /* words - 1 */
	uint64_t min_bits;                /* 0: SEEN_MIN_BITS (tests: less) */
	int64_t keys;                     /* added since the last build */
	bool built;                       /* filled from the table */
};

struct store {
	sqlite3 *db;
	unsigned flags;
	sqlite3_stmt *st[S_COUNT];
	int cluster_param[S_COUNT];       /* index of :cluster, or 0 */
	char *cluster;                    /* the current cluster (its name) */
	FILE *log;
	int64_t gap_ns, watermark_ns;
	int64_t regapped_from;            /* the gap before a regap, or 0 */
	bool rebuild_all;                 /* the gap changed: recompute all */
	int wal_frames;                   /* in the WAL after the last commit */
	int64_t page_size;                /* bytes, of a WAL frame's page */
	char errmsg[RT_ERRLEN];
	struct store_reader *rd;          /* read.c: limits of a reader */
	struct store_lock *lock;          /* lock.c: this writer's, or NULL */
	struct store_changes *chg;        /* changes.c: this transaction's
	                                   * changed incidents, or NULL */
	bool chg_oom;
	bool obj_stored;                  /* util.c: the last object written
	                                   * was in the table already */
	struct seen seen;                 /* seen.c */
	/* captures.c: what a diagnosis read of incidents whose first rows
	 * can no longer change, and the count of events rows updated or
	 * deleted (the row hook, changes.c), which retires it */
	struct capcache *capcache;
	uint64_t ev_changes;
	/* events.workload for the migration that fills it */
	struct rt_str (*workload)(struct rt_str kind, struct rt_str name);

	struct rt_arena scratch;          /* reset per commit */
	struct rt_buf buf, buf2;
	struct plan_near *near;           /* store_read_near's answer */
	size_t nnear, nearcap;
	struct objlist objlist;           /* store_read_objects' answer */
	/* this commit's counters: added to the caller's only once the
	 * transaction committed, so a rolled-back batch counts nothing */
	struct store_stats pending;
	bool txn_open;                    /* between store_begin and its end */
	pthread_t txn_thread;             /* ... the thread that began it */
	/* merge.c: the data_version read before the merge was built, which
	 * store_data_version answers once, so that a watcher sees a commit
	 * made while the merge was built as one after it */
	int64_t open_version;
	bool open_version_set;
};

/* The thread that began a transaction is the only one that may use the
 * store until it ends: SQLite runs single-threaded (store.c), and
 * pipeline/writer.c hands the store over between transactions only. */
static inline bool store_owned(const struct store *st)
{
	return !st->txn_open || pthread_equal(st->txn_thread, pthread_self());
}

/* lock.c: one writer per database (an OFD lock on the file). 0, or RT_EIO /
 * RT_ENOMEM / RT_EDB (another writer holds it) with err set; *out stays
 * NULL when the path is not a file. store_unlock accepts NULL. */
struct store_lock;
int store_lock(const char *path, struct store_lock **out, char *err,
	       size_t errlen);
void store_unlock(struct store_lock *l);

/* util.c */
void store_buf_json_str(struct rt_buf *b, const char *p, size_t n);
const char *store_buf_str(struct rt_buf *b);    /* NUL-terminated, or NULL */
/* Upserts every object's delta into incident_objects and adds the new
 * pods to the incident's pod_count. */
int store_objects_write(struct store *st, const struct plan_object *o, size_t n,
		  int64_t incident);
/* Counts the incident's pods again (after a merge or a rebuild, when the
 * objects of two incidents overlap or were all replaced). */
int store_incident_count_pods(struct store *st, int64_t incident);
const char *store_scratch_dup(struct store *st, const char *p, size_t n);
void store_capcache_free(struct store *st);
void store_watch_rows(struct store *st);

/* seen.c. store_seen_check: *maybe is false only when the database holds no
 * event of that identity (the filter is built at the first call). */
int store_seen_check(struct store *st, uint64_t ukey, bool *maybe);
void store_seen_add(struct seen *f, uint64_t ukey);
bool store_seen_holds(const struct seen *f, uint64_t ukey);
int store_seen_alloc(struct seen *f, int64_t n);       /* for n keys, empty */
void store_seen_free(struct seen *f);

/* stmt.c */
/* Statement id, reset, its bindings cleared but :cluster's. */
sqlite3_stmt *store_stmt(struct store *st, enum store_stmt id);
int store_db_fail(struct store *st, const char *what);
/* outbox.c: the triggers that fill incident_outbox. */
int store_outbox_track(struct store *st);
int store_db_done(struct store *st, sqlite3_stmt *s, const char *what);
void store_bind_rts(sqlite3_stmt *s, int i, struct rt_str v);
void store_bind_cstr(sqlite3_stmt *s, int i, const char *v);
/* Binds time ns as ISO text formatted into buf, which must outlive the
 * statement's step (no copy is made); NULL for ns <= 0. */
void store_bind_iso(sqlite3_stmt *s, int i, int64_t ns, char buf[RT_TIME_BUFSZ]);
const char *store_col_text(sqlite3_stmt *s, int i);    /* "" for NULL */

/* store.c */
int store_meta_set_int(struct store *st, const char *key, int64_t v);

/* conn.c (and store_close, in store_read.h) */
/* Process-wide SQLite settings, before the first connection. */
void store_sqlite_config(bool memstatus);

/* read.c: the pieces of opening for reading that merge.c shares */
int store_reader_new(struct store *st, const struct store_read_opts *o);
/* Defensive, read-only (query_only), limits, authorizer: after this the
 * connection runs reads of what is attached and nothing else. */
int store_reader_harden(struct store *st);
int store_check_schema(struct store *st, int v);    /* errmsg set */
/* Starts the CPU time bound of a call (store_read_opts.timeout_ns). */
void store_reader_watch(struct store *st);
/* Says which bound a read ran into, if one (errmsg set). */
int store_read_fail(struct store *st, int rc);
bool store_needs_write_access(int rc);
char *store_file_uri(const char *path, const char *q);    /* malloc'd */

/* read_printf.c: printf() and format() with bounded widths, on db. */
int store_read_printf(sqlite3 *db, int max_length);

/* commit.c: writes a's aggregates to incident *id, inserting it when
 * *id is 0 (and then setting *id). */
int store_incident_write_agg(struct store *st, const char *ns, const char *rel,
		       int64_t *id, const struct plan_agg *a);
/* classes.c: incident id's revision class. */
int store_incident_set_class(struct store *st, int64_t id, int cls);
/* recompute.c */
int store_key_add_str(struct store *st, const char *ns, const char *rel);

#endif
