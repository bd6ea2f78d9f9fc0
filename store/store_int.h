/*
 * store_int.h (private to store/): the store object, its prepared
 * statements and the small helpers the store's files share.
 */
#ifndef REVTRAIL_STORE_INT_H
#define REVTRAIL_STORE_INT_H

#include <sqlite3.h>

#include "revtrail/store.h"
#include "sql.h"

#define X(name, sql) S_##name,
enum store_stmt { STORE_WRITE_STMTS(X) S_COUNT };
#undef X

/* A release key: (namespace, release). Strings in the store's scratch
 * arena or the registry. */
struct store_key {
	const char *ns, *rel;
};

struct store_keyset {
	struct store_key *k;
	size_t n, cap;
};

/* Interned strings (tag names): one copy each for the store's lifetime. */
struct store_intern {
	char **slot;
	size_t nslots, count;
};

/* A growable text buffer for JSON values. */
struct store_buf {
	char *p;
	size_t n, cap;
	bool oom;
};

/* Per affected object of one incident: the deltas a batch adds. */
struct store_obj {
	const char *kind, *name;
	int64_t first_ns, last_ns, events;
};
struct store_objmap {
	struct store_obj *o;
	size_t n, cap;
	uint32_t *slot;      /* open addressing: index + 1 */
	size_t nslots;
};

/* What the store knows of each pending event of the batch being written. */
struct store_evstate {
	int64_t id;          /* existing row, 0 = new */
	int64_t inc;         /* incident the row is counted in, 0 = none */
	int64_t old_count;
	bool newer;          /* this batch's version is the greater: its
	                      * text and object replace the row's */
	bool cluster;        /* forms incidents: tagged, attributed, timed */
	int64_t target;      /* incident it goes to */
};

/* A cluster's own release registry (cluster.c). */
struct store_cluster {
	char *name;                       /* "" for the default cluster */
	struct corr_registry *reg;
};

struct store {
	sqlite3 *db;
	unsigned flags;
	sqlite3_stmt *st[S_COUNT];
	int cluster_param[S_COUNT];       /* index of :cluster, or 0 */
	struct corr_registry *reg;        /* the current cluster's */
	const char *cluster;              /* the current cluster (its name) */
	struct store_cluster *clusters;
	size_t nclusters;
	struct corr_event *sub_ev;        /* cluster.c: one cluster's share */
	size_t sub_evcap;
	struct rt_revision *sub_revs;     /* of a batch of several */
	size_t sub_revcap;
	struct corr_alias *sub_aliases;
	size_t sub_aliascap;
	struct corr_opts copts;
	const struct rules *rules;
	FILE *log;
	int64_t gap_ns, watermark_ns;
	int64_t regapped_from;            /* the gap before a regap, or 0 */
	bool rebuild_all;
	int wal_frames;                   /* in the WAL after the last commit */
	char errmsg[512];
	struct store_reader *rd;          /* read.c: limits of a reader */
	struct store_lock *lock;          /* lock.c: this writer's, or NULL */
	struct store_changes *chg;        /* changes.c: this transaction's
	                                   * changed incidents, or NULL */
	bool chg_oom;

	struct rt_arena scratch;          /* reset per commit */
	struct store_intern intern;
	struct store_buf buf, buf2;
	struct corr_text remedy;
	/* per-commit work */
	struct store_evstate *evs;
	size_t evscap;
	size_t *order;
	size_t ordercap;
	struct store_keyset rebuild, revdirty;
	int64_t *touched;
	size_t ntouched, touchedcap;
	/* this commit's counters: added to the caller's only once the
	 * transaction committed, so a rolled-back batch counts nothing */
	struct store_stats pending;
	struct store_objmap objs;
};

/* lock.c: one writer per database (a flock on PATH.lock). 0, or RT_EIO /
 * RT_ENOMEM / RT_EDB (another writer holds it) with err set; *out stays
 * NULL when the path is not a file. store_unlock accepts NULL. */
struct store_lock;
int store_lock(const char *path, struct store_lock **out, char *err,
	       size_t errlen);
void store_unlock(struct store_lock *l);

/* util.c */
const char *store_intern(struct store_intern *in, const char *p, size_t n);
void store_intern_release(struct store_intern *in);
const char *store_intern_cb(void *ctx, const char *p, size_t n);
void buf_reset(struct store_buf *b);
void buf_add(struct store_buf *b, const char *p, size_t n);
void buf_addc(struct store_buf *b, char c);
void buf_addf(struct store_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_json_str(struct store_buf *b, const char *p, size_t n);
const char *buf_str(struct store_buf *b);    /* NUL-terminated, or NULL */
int keyset_add(struct store *st, struct store_keyset *ks, struct rt_str ns,
	       struct rt_str rel);
bool keyset_has(const struct store_keyset *ks, struct rt_str ns,
		struct rt_str rel);
int touched_add(struct store *st, int64_t id);
int objmap_add(struct store *st, struct store_objmap *m, const char *kind,
	       size_t kn, const char *name, size_t nn, int64_t first,
	       int64_t last, int64_t events);
/* Upserts every object into incident_objects, adds the new pods to the
 * incident's pod_count, and empties the map. */
int objmap_write(struct store *st, struct store_objmap *m, int64_t incident);
/* Counts the incident's pods again (after a merge or a rebuild, when the
 * objects of two incidents overlap or were all replaced). */
int incident_count_pods(struct store *st, int64_t incident);
void objmap_release(struct store_objmap *m);
const char *scratch_dup(struct store *st, const char *p, size_t n);

/* store.c */
/* Statement id, reset, its bindings cleared but :cluster's. */
sqlite3_stmt *stmt(struct store *st, enum store_stmt id);
int db_fail(struct store *st, const char *what);
int db_done(struct store *st, sqlite3_stmt *s, const char *what);
void bind_rts(sqlite3_stmt *s, int i, struct rt_str v);
void bind_cstr(sqlite3_stmt *s, int i, const char *v);
void bind_iso(sqlite3_stmt *s, int i, int64_t ns);
const char *col_text(sqlite3_stmt *s, int i);    /* "" for NULL */
int meta_set_int(struct store *st, const char *key, int64_t v);
/* The stored revisions and workload mappings of the current cluster into
 * st->reg. */
int load_registry(struct store *st);
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

/* commit.c */
int commit_events(struct store *st, struct corr_batch *b);
/* An incident's aggregates: sums and maxima of its events. */
struct agg {
	int64_t opened, last, count, occ;
	int sev, via;
	struct corr_tagset tags;
};
void agg_init(struct agg *a);
void agg_span(struct agg *a, int64_t first, int64_t last, int sev, int via);
/* Writes a's aggregates to incident *id, inserting it when *id is 0 (and
 * then setting *id); marks it touched. */
int incident_write_agg(struct store *st, const struct store_key *k,
		       int64_t *id, const struct agg *a);
int key_add_str(struct store *st, const char *ns, const char *rel);

/* recompute.c */
int revisions_merge(struct store *st, struct corr_batch *b);
/* Workload -> release mappings of the batch into the registry and the
 * workload_releases table; events they claim are attributed again. */
int aliases_merge(struct store *st, struct corr_batch *b);
int rebuild_key(struct store *st, const struct store_key *k);
int revisions_apply(struct store *st, const struct store_key *k);

/* commit.c: one cluster's share of a batch, inside the transaction. */
int commit_steps(struct store *st, struct corr_batch *b);

/* cluster.c */
/* Makes name the current cluster (st->cluster, st->reg), loading its
 * registry on first use. 0 or RT_ENOMEM / RT_EDB. */
int cluster_use(struct store *st, struct rt_str name);
/* commit_steps for each cluster the batch (or, recomputing all, the
 * database) holds, the source positions with the last. */
int cluster_commit(struct store *st, struct corr_batch *b);
void cluster_release(struct store *st);

/* diag.c */
int diagnose_touched(struct store *st);

#endif
