/*
 * test_pipeline_order.c: the incidents after all input do not depend on the
 * order records arrive in, nor on how they are cut into batches, nor on
 * whether a writer thread commits them, nor on a re-run of the same input
 * (dedupe); a gap change recomputes them.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "revtrail/writer.h"
#include "tap.h"

#define SEC 1000000000LL
#define T0 (1730640000LL * SEC)     /* 2024-11-03T13:20:00Z */
#define S(x) rt_str_make((x), strlen(x))

struct rec {
	struct rt_record r;
	struct rt_class c;
	struct rt_revision rv[3];
};

static struct rec recs[64];
static size_t nrecs;
static struct rules *rules;

static struct rec *add(const char *ns, const char *kind, const char *name,
		       const char *pod, const char *uid, const char *msg,
		       int64_t first, int64_t last, int64_t count,
		       const char *tag, enum rt_severity sev)
{
	struct rec *x = &recs[nrecs++];

	rt_record_init(&x->r);
	x->r.format = uid ? RT_FMT_K8S_EVENT : RT_FMT_CRI;
	x->r.ns = S(ns);
	if (kind)
		x->r.kind = S(kind);
	if (name)
		x->r.name = S(name);
	if (pod)
		x->r.pod = S(pod);
	if (uid)
		x->r.uid = S(uid);
	x->r.message = S(msg);
	x->r.first_ns = first ? T0 + first * SEC : 0;
	x->r.ts_ns = T0 + last * SEC;
	x->r.count = count;
	x->r.pos.source = "test";
	memset(&x->c, 0, sizeof(x->c));
	if (tag) {
		x->c.ntags = 1;
		x->c.tags[0] = tag;
		x->c.severity = sev;
	}
	return x;
}

static void history(const char *ns, const char *rel, int n,
		    const int *revs, const char *const *status,
		    const char *const *desc, const int64_t *t)
{
	struct rec *x = &recs[nrecs++];

	rt_record_init(&x->r);
	x->r.format = RT_FMT_HELM_HISTORY;
	x->r.ts_ns = T0 + t[n - 1] * SEC;
	memset(&x->c, 0, sizeof(x->c));
	for (int i = 0; i < n; i++) {
		memset(&x->rv[i], 0, sizeof(x->rv[i]));
		x->rv[i].ns = S(ns);
		x->rv[i].release = S(rel);
		x->rv[i].revision = revs[i];
		x->rv[i].status = S(status[i]);
		x->rv[i].description = S(desc[i]);
		x->rv[i].updated_ns = T0 + t[i] * SEC;
	}
	x->r.revs = x->rv;
	x->r.nrevs = (size_t)n;
}

static void build(void)
{
	static const int pr[] = { 47, 48, 49 };
	static const char *const ps[] = { "superseded", "failed", "deployed" };
	static const char *const pd[] = { "Upgrade complete",
		"Upgrade \"payments-api\" failed", "Rollback to 47" };
	static const int64_t pt[] = { 1000, 2000, 2200 };
	static const int rr[] = { 2 };
	static const char *const rs[] = { "superseded" };
	static const char *const rd[] = { "Upgrade complete" };
	static const int64_t rt[] = { 100 };
	static const char *const p1 = "payments-api-7d9c8f4b6-4kx2m";

	nrecs = 0;
	history("prod", "payments-api", 3, pr, ps, pd, pt);
	add("prod", "Pod", p1, NULL, "u1", "configmap \"payments-api-config\" "
	    "not found", 2010, 2010, 1, "configmap_not_found", RT_SEV_ERROR);
	/* the same event re-sent by a watch, count and last seen moved */
	add("prod", "Pod", p1, NULL, "u1", "configmap \"payments-api-config\" "
	    "not found", 2010, 2040, 4, "configmap_not_found", RT_SEV_ERROR);
	add("prod", "ConfigMap", "payments-api-config", NULL, "u2",
	    "configmap deleted by hook", 2015, 2015, 1, "configmap_not_found",
	    RT_SEV_WARNING);
	add("prod", NULL, NULL, "payments-api-7d9c8f4b6-nq7wr", NULL,
	    "password authentication failed", 0, 2050, 1, "db_auth_failed",
	    RT_SEV_ERROR);
	add("prod", NULL, NULL, "payments-api-7d9c8f4b6-nq7wr", NULL,
	    "password authentication failed", 0, 2080, 1, "db_auth_failed",
	    RT_SEV_ERROR);
	add("prod", "Pod", "payments-api-7d9c8f4b6-9jvpd", NULL, "u3",
	    "Back-off restarting failed container", 2100, 2600, 17, "crashloop",
	    RT_SEV_CRITICAL);
	/* 16 minutes later: a second window, bridged by the u5 event */
	add("prod", "Pod", "payments-api-7d9c8f4b6-9jvpd", NULL, "u4",
	    "Back-off restarting failed container", 3600, 3700, 3, "crashloop",
	    RT_SEV_CRITICAL);
	add("prod", "Pod", "payments-api-7d9c8f4b6-zz9xk", NULL, "u5",
	    "Liveness probe failed", 3100, 3100, 1, "probe_failed",
	    RT_SEV_WARNING);
	/* a release known only by its workload name */
	add("shop", "Pod", "orders-5c7d9f8b4-k2x9z", NULL, "u6",
	    "Back-off restarting", 2000, 2000, 1, "crashloop", RT_SEV_CRITICAL);
	/* a third window, far away */
	add("prod", "Pod", "payments-api-7d9c8f4b6-4kx2m", NULL, "u7",
	    "OOMKilled", 9000, 9000, 1, "oom_killed", RT_SEV_CRITICAL);
	/* helm-controller job of a release whose history says superseded */
	history("kube-system", "rke2-ingress-nginx", 1, rr, rs, rd, rt);
	add("kube-system", NULL, NULL, "helm-install-rke2-ingress-nginx-xk2p9",
	    NULL, "Error: INSTALLATION FAILED: cannot re-use a name that is "
	    "still in use", 0, 5000, 1, "helm_name_in_use", RT_SEV_ERROR);
	add("kube-system", "Pod", "helm-install-rke2-ingress-nginx-xk2p9", NULL,
	    "u8", "Back-off restarting failed container helm", 5001, 5300, 9,
	    "crashloop", RT_SEV_CRITICAL);
	/* an untagged record: counted, not stored */
	add("prod", NULL, NULL, "payments-api-7d9c8f4b6-nq7wr", NULL,
	    "GET /healthz 200", 0, 9500, 1, NULL, RT_SEV_NONE);
}

static struct store_stats total;

static int run(const char *db, const size_t *order, size_t n, size_t batch,
	       int64_t gap)
{
	struct pipeline_opts o = { .gap_ns = gap, .rules = rules, .regap = true };
	struct corr_batch *b = corr_batch_new(false);
	struct pipeline_db *st;
	char err[512];
	int rc;

	if ((rc = pipeline_db_open(db, &o, &st, err, sizeof(err)))) {
		printf("# open: %s\n", err);
		corr_batch_free(b);
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		corr_batch_add(b, &recs[order[i]].r, &recs[order[i]].c);
		if ((i + 1) % batch == 0 || i + 1 == n) {
			if ((rc = pipeline_commit(st, b, &total)))
				break;
			corr_batch_reset(b);
		}
	}
	if (rc)
		printf("# commit: %s\n", store_errmsg(pipeline_db_store(st)));
	corr_batch_free(b);
	pipeline_db_close(st);
	return rc;
}

/* As run, but batches alternate between two and go to a writer thread,
 * as ingest does: one is filled while the other is committed. */
static int run_writer(const char *db, const size_t *order, size_t n,
		      size_t batch)
{
	struct corr_batch *b[2] = { corr_batch_new(false),
				    corr_batch_new(false) };
	struct pipeline_writer *w = NULL;
	struct pipeline_db *st;
	unsigned cur = 0;
	char err[512];
	int rc;

	if ((rc = pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules },
			     &st, err, sizeof(err))) ||
	    (rc = pipeline_writer_new(st, &total, &w)))
		goto out;
	for (size_t i = 0; i < n && !rc; i++) {
		corr_batch_add(b[cur], &recs[order[i]].r, &recs[order[i]].c);
		if ((i + 1) % batch && i + 1 != n)
			continue;
		if ((rc = pipeline_writer_submit(w, b[cur])))
			break;
		cur ^= 1;
		corr_batch_reset(b[cur]);   /* committed: the submit waited */
	}
	if (!rc)
		rc = pipeline_writer_wait(w);
out:
	pipeline_writer_free(w);
	pipeline_db_close(st);
	corr_batch_free(b[0]);
	corr_batch_free(b[1]);
	return rc;
}

/* A failed commit is returned by the next submit, which does not take its
 * batch, and by every wait after it. */
static void fresh(const char *db);

/* The outbox in id order: "KEY KEY ...", and its first id. */
struct outbox_seen {
	char keys[512];
	int64_t first, last;
};

static int outbox_row(void *ctx, const struct store_outbox_row *r)
{
	struct outbox_seen *o = ctx;
	size_t n = strlen(o->keys);

	snprintf(o->keys + n, sizeof(o->keys) - n, "%s%s/%s/%s/%lld",
		 n ? " " : "", r->cluster, r->ns, r->release,
		 (long long)r->incident_id);
	if (!o->first)
		o->first = r->id;
	ok(r->id > o->last, "outbox ids ascend (%lld)", (long long)r->id);
	o->last = r->id;
	return 0;
}

static int64_t outbox_is(struct pipeline_db *st, const char *want,
			 const char *what)
{
	struct outbox_seen o = { "", 0, 0 };

	store_outbox_read(pipeline_db_store(st), 0, 100, outbox_row, &o);
	is_str(o.keys, want, "%s", what);
	return o.first;
}

static void writer_failure(const char *db)
{
	struct corr_batch *b = corr_batch_new(false);
	struct store_stats stats = { 0 };
	struct pipeline_writer *w = NULL;
	struct pipeline_db *st = NULL;
	char err[512];
	sqlite3 *h;

	fresh(db);
	if (!ok(pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules },
				 &st, err, sizeof(err)) == 0 &&
		pipeline_writer_new(st, &stats, &w) == 0, "a writer"))
		goto out;
	/* every event refused: each commit fails */
	sqlite3_open(db, &h);
	sqlite3_exec(h, "CREATE TRIGGER nope BEFORE INSERT ON events BEGIN"
		     " SELECT RAISE(ABORT, 'refused'); END", NULL, NULL, NULL);
	sqlite3_close(h);
	corr_batch_add(b, &recs[1].r, &recs[1].c);
	is_int(pipeline_writer_submit(w, b), 0, "the first batch is taken");
	is_int(pipeline_writer_wait(w), RT_EDB, "its commit failed: wait says so");
	is_int(pipeline_writer_submit(w, b), RT_EDB,
	       "the next submit is refused with that error");
	is_int(pipeline_writer_wait(w), RT_EDB, "and so is every wait");
	is_int(stats.batches, 0, "no batch counted as committed");
	ok(strstr(store_errmsg(pipeline_db_store(st)), "refused") != NULL,
	   "the store says why: %s", store_errmsg(pipeline_db_store(st)));
out:
	pipeline_writer_free(w);
	pipeline_db_close(st);
	corr_batch_free(b);
	fresh(db);
}


/* A read beside the writer runs only while it leaves SQLite alone: the
 * check hook holds a commit open until the test lets it go. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool inside, open;
};

static int gate_check(void *ctx, struct store *st, struct corr_batch *b)
{
	struct gate *g = ctx;

	(void)st;
	(void)b;
	pthread_mutex_lock(&g->mu);
	g->inside = true;
	pthread_cond_broadcast(&g->cv);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

static void count_call(void *ctx)
{
	++*(int *)ctx;
}

static void writer_try_read(const char *db)
{
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			  false, false };
	struct corr_batch *b = corr_batch_new(false);
	struct store_stats stats = { 0 };
	struct pipeline_writer *w = NULL;
	struct pipeline_db *st = NULL;
	char err[512];
	int calls = 0;

	fresh(db);
	if (!ok(pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules },
				 &st, err, sizeof(err)) == 0 &&
		pipeline_writer_new(st, &stats, &w) == 0, "a gated writer"))
		goto out;
	pipeline_writer_set_check(w, gate_check, &g);
	is_int(pipeline_writer_try_read(w, count_call, &calls), 1,
	       "an idle writer lets a read run");
	corr_batch_add(b, &recs[1].r, &recs[1].c);
	pipeline_writer_submit(w, b);
	pthread_mutex_lock(&g.mu);
	while (!g.inside)
		pthread_cond_wait(&g.cv, &g.mu);
	pthread_mutex_unlock(&g.mu);
	is_int(pipeline_writer_try_read(w, count_call, &calls), 0,
	       "a commit in flight refuses it");
	pthread_mutex_lock(&g.mu);
	g.open = true;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
	is_int(pipeline_writer_wait(w), 0, "the commit ends");
	is_int(pipeline_writer_try_read(w, count_call, &calls), 1,
	       "after it a read runs again");
	is_int(calls, 2, "the refused read never ran");
out:
	pipeline_writer_free(w);
	pipeline_db_close(st);
	corr_batch_free(b);
	fresh(db);
}


/* A commit that fails half way (a trigger refuses one event after the
 * revisions were written) is rolled back and counts nothing; the next
 * one counts only itself. */
static void failed_commit(const char *db)
{
	struct corr_batch *b = corr_batch_new(false);
	struct store_stats stats = { 0 };
	struct pipeline_db *st = NULL;
	struct rec boom;
	sqlite3 *h;
	char err[512];

	fresh(db);
	if (!ok(pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules }, &st,
			   err, sizeof(err)) == 0, "open for the failure check"))
		goto out;
	sqlite3_open(db, &h);
	is_int(sqlite3_exec(h, "CREATE TRIGGER boom BEFORE INSERT ON events"
			    " WHEN NEW.message = 'boom' BEGIN"
			    " SELECT RAISE(ABORT, 'refused'); END", NULL, NULL,
			    NULL), SQLITE_OK, "a trigger refuses one event: %s",
	       sqlite3_errmsg(h));
	sqlite3_close(h);
	boom = recs[1];
	boom.r.message = S("boom");
	boom.r.uid = S("u-boom");
	corr_batch_add(b, &recs[0].r, &recs[0].c);      /* history */
	corr_batch_add(b, &recs[2].r, &recs[2].c);
	corr_batch_add(b, &boom.r, &boom.c);
	is_int(pipeline_commit(st, b, &stats), RT_EDB, "the commit fails");
	is_int(stats.batches + stats.events_new + stats.revisions +
	       stats.incidents_opened + stats.incidents_updated, 0,
	       "a rolled-back batch counts nothing");
	corr_batch_reset(b);
	corr_batch_add(b, &recs[2].r, &recs[2].c);
	is_int(pipeline_commit(st, b, &stats), 0, "the next commit succeeds");
	is_int(stats.batches, 1, "one batch counted");
	is_int(stats.events_new, 1, "one event counted");
	is_int(stats.revisions, 0, "the rolled-back revisions are not");
out:
	pipeline_db_close(st);
	corr_batch_free(b);
	fresh(db);
}

/* One batch through a tracking writer: the changes it reports. */
static int submit_take(struct pipeline_writer *w, struct corr_batch *b,
		       const size_t *idx, size_t n, struct store_changes *c)
{
	int rc;

	corr_batch_reset(b);
	for (size_t i = 0; i < n; i++)
		corr_batch_add(b, &recs[idx[i]].r, &recs[idx[i]].c);
	if (!(rc = pipeline_writer_submit(w, b)))
		rc = pipeline_writer_wait(w);
	pipeline_writer_take_changes(w, c);
	store_changes_unique(c);
	return rc;
}

/* consume --incidents-topic reads which incidents each committed batch
 * changed: opened, extended, merged away (with the key it had), and none
 * of a batch whose transaction was rolled back. */
static void changes_tracked(const char *db)
{
	static const size_t first[] = { 0, 1, 6 }, later[] = { 7 },
		bridge[] = { 8 };
	struct corr_batch *b = corr_batch_new(false);
	struct store_changes c = { 0 };
	struct store_stats stats = { 0 };
	struct pipeline_writer *w = NULL;
	struct pipeline_db *st = NULL;
	struct rec boom;
	sqlite3 *h;
	char err[512];

	fresh(db);
	if (!ok(pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules },
				 &st, err, sizeof(err)) == 0 &&
		pipeline_writer_new(st, &stats, &w) == 0 &&
		pipeline_writer_track_incidents(w) == 0, "a tracking writer"))
		goto out;
	is_int(submit_take(w, b, first, 3, &c), 0, "history and two events");
	ok(c.n == 1 && c.v[0].id == 1 && !c.v[0].ns, "incident 1 opened");
	outbox_is(st, "/prod/payments-api/1", "the outbox has its key, "
		  "written in the batch's transaction");
	is_int(submit_take(w, b, later, 1, &c), 0, "an event 16 minutes on");
	ok(c.n == 2 && c.v[0].id == 1 && c.v[1].id == 2 && !c.v[1].ns,
	   "incident 2 opened, and incident 1 closed (the records moved on "
	   "past its gap)");
	{
		int64_t gone[] = { 0, 1000000 };

		gone[0] = outbox_is(st, "/prod/payments-api/1 "
				    "/prod/payments-api/2", "the outbox has "
				    "each key once, in the order of its last "
				    "change");
		is_int(store_outbox_done(pipeline_db_store(st), gone, 2), 0,
		       "a delivered row is removed (one no longer there too)");
	}
	outbox_is(st, "/prod/payments-api/2", "the other stays");
	is_int(submit_take(w, b, first, 3, &c), 0, "the first batch again");
	ok(c.n == 1 && c.v[0].id == 1, "reports the one incident it touched "
	   "(its state, produced again, is the same)");
	is_int(submit_take(w, b, bridge, 1, &c), 0, "an event between them");
	ok(c.n == 2 && c.v[0].id == 1 && !c.v[0].ns, "incident 1 extended");
	ok(c.n == 2 && c.v[1].id == 2 && c.v[1].ns &&
	   !strcmp(c.v[1].ns, "prod") && !strcmp(c.v[1].release,
						 "payments-api"),
	   "incident 2 merged into it: deleted, with the key it had");
	outbox_is(st, "/prod/payments-api/2 /prod/payments-api/1",
		  "the outbox keeps the deleted key, for its tombstone, and "
		  "moved the key changed again to the end");

	sqlite3_open(db, &h);
	is_int(sqlite3_exec(h, "CREATE TRIGGER boom BEFORE INSERT ON events"
			    " WHEN NEW.message = 'boom' BEGIN"
			    " SELECT RAISE(ABORT, 'refused'); END", NULL, NULL,
			    NULL), SQLITE_OK, "a trigger refuses one event");
	sqlite3_close(h);
	boom = recs[9];
	boom.r.message = S("boom");
	boom.r.uid = S("u-boom");
	recs[nrecs] = boom;
	{
		const size_t failing[] = { 9, nrecs };

		is_int(submit_take(w, b, failing, 2, &c), RT_EDB,
		       "a batch whose commit fails after opening an incident");
		is_int((long long)c.n, 0, "reports no change");
		outbox_is(st, "/prod/payments-api/2 "
			  "/prod/payments-api/1", "and adds nothing to the "
			  "outbox");
	}
out:
	store_changes_free(&c);
	pipeline_writer_free(w);
	pipeline_db_close(st);
	corr_batch_free(b);
	fresh(db);
}

static const char *const dump_sql[] = {
	"SELECT namespace, release, revision, status, severity, opened_at,"
	" last_seen_at, closed_at, event_count, occurrences, tags, diagnosis,"
	" revision_status, later_revisions, pods, attribution FROM incidents"
	" ORDER BY namespace, release, opened_ns",
	"SELECT i.namespace, i.release, i.opened_at, o.object_kind,"
	" o.object_name, o.first_seen, o.last_seen, o.events"
	" FROM incident_objects o JOIN incidents i ON i.id = o.incident_id"
	" ORDER BY 1, 2, 3, 4, 5",
	"SELECT e.ts, e.first_seen, e.object_kind, e.object_name, e.release,"
	" e.release_namespace, e.attribution, e.revision, e.count, e.tags,"
	" i.opened_at FROM events e LEFT JOIN incidents i"
	" ON i.id = e.incident_id ORDER BY e.ukey",
};

/* The database's incidents, objects and events, without ids. */
static char *dump(const char *db)
{
	sqlite3 *h;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
	for (size_t q = 0; q < 3; q++) {
		sqlite3_stmt *s;

		sqlite3_prepare_v2(h, dump_sql[q], -1, &s, NULL);
		while (sqlite3_step(s) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(s); c++)
				fprintf(f, "%s|", sqlite3_column_text(s, c) ?
					(const char *)sqlite3_column_text(s, c) :
					"NULL");
			fputc('\n', f);
		}
		sqlite3_finalize(s);
		fputs("--\n", f);
	}
	sqlite3_close(h);
	fclose(f);
	return out;
}

static char *query1(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	char *r = NULL;

	sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
	if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		r = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(h);
	return r ? r : strdup("NULL");
}

static void fresh(const char *db)
{
	char p[512];

	unlink(db);
	snprintf(p, sizeof(p), "%s-wal", db);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", db);
	unlink(p);
}

static long file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* store_idle copies a WAL of more than a few MiB back into the database
 * (what a writer thread does between batches), and leaves a small one. */
static void idle_checkpoint(const char *db)
{
	struct corr_batch *b = corr_batch_new(false);
	struct store_stats stats = { 0 };
	struct pipeline_db *st = NULL;
	char err[512], uid[32], pod[64];
	long before;

	fresh(db);
	if (!ok(pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules }, &st,
			   err, sizeof(err)) == 0, "open for the idle check"))
		goto out;
	store_idle(pipeline_db_store(st));
	before = file_size(db);
	is_int(before < 64 * 1024, 1, "a new database is small (%ld bytes)",
	       before);
	for (int i = 0; i < 20000; i++) {
		struct rec x = recs[1];         /* a tagged Pod event */

		snprintf(uid, sizeof(uid), "bulk-%d", i);
		snprintf(pod, sizeof(pod), "web-7d9c8f4b6-%05d", i);
		x.r.uid = S(uid);
		x.r.name = x.r.pod = S(pod);
		corr_batch_add(b, &x.r, &x.c);
	}
	is_int(pipeline_commit(st, b, &stats), 0, "one commit");
	is_int(stats.events_new, 20000, "of 20000 events");
	is_int(file_size(db), before, "the commit went to the WAL");
	store_idle(pipeline_db_store(st));
	ok(file_size(db) > 4 * 1024 * 1024, "store_idle copied it into the "
	   "database (%ld bytes)", file_size(db));
out:
	pipeline_db_close(st);
	corr_batch_free(b);
	fresh(db);
}

static void check_reference(const char *db)
{
	char *v;

	v = query1(db, "SELECT count(*) FROM incidents");
	is_str(v, "4", "four incidents: two payments-api windows, orders, "
	       "rke2-ingress-nginx");
	free(v);
	v = query1(db, "SELECT revision || ' ' || diagnosis || ' ' ||"
		   " later_revisions || ' ' || event_count FROM incidents"
		   " WHERE release = 'payments-api' ORDER BY opened_ns LIMIT 1");
	/* 6 rows: the pod's two "password authentication failed" lines,
	 * 30 s apart, are one repeat row counting 2 */
	is_str(v, "48 hook_configmap_race [49] 6",
	       "payments-api: revision 48, rollback on the timeline, bridged");
	free(v);
	v = query1(db, "SELECT count(*) FROM events WHERE release ="
		   " 'payments-api-config'");
	is_str(v, "0", "the ConfigMap's event belongs to payments-api");
	free(v);
	v = query1(db, "SELECT attribution || ' ' || revision FROM incidents"
		   " WHERE release = 'orders'");
	is_str(v, "workload 0", "orders: inferred, no history");
	free(v);
	v = query1(db, "SELECT namespace || ' ' || diagnosis || ' ' || revision ||"
		   " ' ' || revision_status || ' ' || pods FROM incidents"
		   " WHERE release = 'rke2-ingress-nginx'");
	is_str(v, "kube-system superseded_release_install 2 superseded "
	       "[\"helm-install-rke2-ingress-nginx-xk2p9\"]",
	       "helm-install job: superseded release install");
	free(v);
	v = query1(db, "SELECT count(*) || ' ' || sum(count) FROM events WHERE"
		   " ukey IS NOT NULL");
	is_str(v, "10 40", "10 rows (a repeated line is one), counts kept");
	free(v);
	v = query1(db, "SELECT status FROM incidents WHERE release ="
		   " 'payments-api' ORDER BY opened_ns LIMIT 1");
	is_str(v, "closed", "closed: later records passed its gap");
	free(v);
	v = query1(db, "SELECT group_concat(entry || ':' || coalesce(revision, ''),"
		   " ',') FROM timeline WHERE incident_id = (SELECT id FROM"
		   " incidents WHERE release = 'payments-api' ORDER BY opened_ns"
		   " LIMIT 1) AND entry = 'revision'");
	is_str(v, "revision:48,revision:49", "timeline holds 48 and 49");
	free(v);
}

/* Names learned after the events they claim, found by the events'
 * workloads: a release equal to a workload, one below it, one above it
 * (a workload named by a boundary prefix of the release). */
static void late_names(const char *db)
{
	static const int r1[] = { 1 };
	static const char *const st1[] = { "deployed" };
	static const char *const d1[] = { "Install complete" };
	static const int64_t t1[] = { 10 };
	char *v;

	nrecs = 0;
	add("shop", "Pod", "cart-7d9c8f4b6-4kx2m", NULL, "c1", "OOMKilled", 100,
	    100, 1, "oom_killed", RT_SEV_CRITICAL);
	add("shop", "Pod", "cart-api-5c6d7f8b9-k2xwz", NULL, "c2", "OOMKilled",
	    110, 110, 1, "oom_killed", RT_SEV_CRITICAL);
	add("shop", "Pod", "web-7d9c8f4b6-zz9xk", NULL, "c3", "OOMKilled", 120,
	    120, 1, "oom_killed", RT_SEV_CRITICAL);
	history("shop", "cart", 1, r1, st1, d1, t1);
	history("shop", "web-7d9c8f4b6", 1, r1, st1, d1, t1);
	fresh(db);
	is_int(run(db, (size_t[]){ 0, 1, 2, 3, 4 }, 5, 3, 0), 0,
	       "events first, then the release names");
	v = query1(db, "SELECT group_concat(object_name || '=' || release ||"
		   " '/' || attribution, ' ') FROM (SELECT * FROM events"
		   " ORDER BY object_name)");
	is_str(v, "cart-7d9c8f4b6-4kx2m=cart/prefix "
	       "cart-api-5c6d7f8b9-k2xwz=cart/prefix "
	       "web-7d9c8f4b6-zz9xk=web-7d9c8f4b6/prefix",
	       "each claimed by the release learned later");
	free(v);
	v = query1(db, "SELECT group_concat(release || ':' || event_count, ' ')"
		   " FROM (SELECT * FROM incidents ORDER BY release)");
	is_str(v, "cart:2 web-7d9c8f4b6:1", "their incidents recomputed");
	free(v);
	fresh(db);
}

/* Two Events with one namespace + uid but different involvedObject (pods
 * of two workloads, so two releases): the stored row is the same in
 * either order, in one batch or two. */
static void reused_uid(const char *db)
{
	static const size_t orders[2][2] = { { 0, 1 }, { 1, 0 } };
	char *ref = NULL;
	int same = 0;

	nrecs = 0;
	add("shop", "Pod", "cart-7d9c8f4b6-4kx2m", NULL, "dup", "OOMKilled",
	    100, 200, 2, "oom_killed", RT_SEV_CRITICAL);
	add("shop", "Pod", "web-5c6d7f8b9-k2xwz", NULL, "dup", "OOMKilled", 100,
	    200, 3, "oom_killed", RT_SEV_CRITICAL);
	for (size_t o = 0; o < 2; o++)
		for (size_t batch = 1; batch <= 2; batch++) {
			char *got;

			fresh(db);
			run(db, orders[o], 2, batch, 0);
			got = dump(db);
			if (!ref)
				ref = got;
			else
				same += !strcmp(got, ref), free(got);
		}
	is_int(same, 3, "one row whatever the order and the batches");
	ok(ref && strstr(ref, "web-5c6d7f8b9-k2xwz|web|shop|workload|") &&
	   !strstr(ref, "cart"), "the greater version's pod and release, "
	   "its incident only:\n%s", ref ? ref : "");
	free(ref);
	fresh(db);
}

/* Keeps only cluster keep's rows (the others' deleted), then dump. */
static char *dump_cluster(const char *db, const char *keep)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	static const char *const del[] = {
		("DELETE FROM incident_objects WHERE incident_id IN"
		 " (SELECT id FROM incidents WHERE cluster <> ?1)"),
		"DELETE FROM incidents WHERE cluster <> ?1",
		"DELETE FROM events WHERE cluster <> ?1",
	};

	sqlite3_open(db, &h);
	for (size_t i = 0; i < 3; i++) {
		sqlite3_prepare_v2(h, del[i], -1, &s, NULL);
		sqlite3_bind_text(s, 1, keep, -1, SQLITE_STATIC);
		sqlite3_step(s);
		sqlite3_finalize(s);
	}
	sqlite3_close(h);
	return dump(db);
}

/*
 * consume reads topics of several clusters into one batch. Each cluster
 * gets exactly the incidents its records make alone (the same releases,
 * event uids and workloads in both: every key holds the cluster),
 * whatever the batches; a gap change recomputes every cluster's.
 */
static void clusters(const char *db)
{
	static const char *const names[2] = { "prod-eu", "prod-us" };
	size_t n0 = nrecs, own[2][32], mixed[64];
	char *ref[2][2];

	if (!ok(3 * n0 <= sizeof(recs) / sizeof(recs[0]) && n0 <= 32,
		"room for two clusters' copies"))
		return;
	for (size_t c = 0; c < 2; c++)
		for (size_t i = 0; i < n0; i++) {
			size_t k = (c + 1) * n0 + i;

			recs[k] = recs[i];
			recs[k].r.cluster = S(names[c]);
			own[c][i] = k;
			mixed[2 * i + c] = k;
		}
	for (size_t c = 0; c < 2; c++)
		for (size_t g = 0; g < 2; g++) {
			fresh(db);
			run(db, own[c], n0, n0, g ? 200 * SEC : 0);
			ref[c][g] = dump(db);
		}
	ok(strcmp(ref[0][0], ref[1][0]) != 0, "cluster copies differ "
	   "(their event keys)");
	for (size_t c = 0; c < 2; c++) {
		char *got;

		fresh(db);
		is_int(run(db, mixed, 2 * n0, 5, 0), 0, "two clusters "
		       "interleaved, batches of 5");
		got = query1(db, "SELECT count(*) FROM incidents");
		is_str(got, "8", "four incidents each");
		free(got);
		got = dump_cluster(db, names[c]);
		is_str(got, ref[c][0], "%s's as if alone", names[c]);
		free(got);
		fresh(db);
		run(db, mixed, 2 * n0, 7, 0);
		is_int(run(db, mixed, 0, 1, 200 * SEC), 0, "regap");
		got = dump_cluster(db, names[c]);
		is_str(got, ref[c][1], "%s's recomputed as if alone",
		       names[c]);
		free(got);
	}
	for (size_t c = 0; c < 2; c++)
		for (size_t g = 0; g < 2; g++)
			free(ref[c][g]);
	nrecs = n0;
	fresh(db);
}

int main(void)
{
	char db[] = "/tmp/revtrail-test-order-XXXXXX";
	char path[64], *ref, *got;
	size_t order[64];
	unsigned seed = 7;
	int fd = mkstemp(db), mismatches = 0;
	char err[256];

	close(fd);
	unlink(db);
	snprintf(path, sizeof(path), "%s.db", db);
	rules = rules_new();
	if (rules_load_builtin(rules, err, sizeof(err)) ||
	    rules_compile(rules, err, sizeof(err))) {
		ok(0, "built-in rules: %s", err);
		return done_testing();
	}
	build();
	for (size_t i = 0; i < nrecs; i++)
		order[i] = i;

	changes_tracked(path);
	fresh(path);
	is_int(run(path, order, nrecs, nrecs, 0), 0, "one batch in file order");
	ref = dump(path);
	check_reference(path);

	/* the same again: dedupe leaves everything as it was */
	is_int(run(path, order, nrecs, 3, 0), 0, "re-ingest");
	got = dump(path);
	is_str(got, ref, "re-ingesting the same records changes nothing");
	free(got);

	/* through the writer thread, two batches taking turns */
	for (size_t batch = 1; batch <= 4; batch += 3) {
		fresh(path);
		is_int(run_writer(path, order, nrecs, batch), 0,
		       "writer thread, batches of %zu", batch);
		got = dump(path);
		is_str(got, ref, "the writer thread stores the same (batches of "
		       "%zu)", batch);
		free(got);
	}
	writer_failure(path);
	writer_try_read(path);
	failed_commit(path);
	idle_checkpoint(path);
	late_names(path);
	reused_uid(path);
	build();
	clusters(path);

	/* history last, events reversed, one record per batch */
	for (size_t i = 0; i < nrecs; i++)
		order[i] = nrecs - 1 - i;
	fresh(path);
	run(path, order, nrecs, 1, 0);
	got = dump(path);
	is_str(got, ref, "reversed, one record per batch (history last)");
	free(got);

	for (int round = 0; round < 30; round++) {
		size_t batch;

		for (size_t i = nrecs - 1; i > 0; i--) {
			size_t j = (seed = seed * 1103515245u + 12345u) % (i + 1);
			size_t t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		batch = 1 + (seed >> 8) % nrecs;
		fresh(path);
		run(path, order, nrecs, batch, 0);
		got = dump(path);
		if (strcmp(got, ref)) {
			mismatches++;
			if (mismatches == 1) {
				is_str(got, ref, "shuffle %d (batch %zu)", round,
				       batch);
			}
		}
		free(got);
	}
	is_int(mismatches, 0, "30 shuffles with random batch sizes agree");

	/* two windows, then the event between them: they merge into one */
	{
		size_t bridge[] = { 0, 6, 7, 8 };   /* history, u3, u4, u5 */
		char *v;

		fresh(path);
		memset(&total, 0, sizeof(total));
		run(path, bridge, 4, 1, 0);
		is_int(total.incidents_merged, 1, "the bridging event merged two");
		v = query1(path, "SELECT count(*) || ' ' || min(id) || ' ' ||"
			   " event_count FROM incidents");
		is_str(v, "1 1 3", "one incident left, the older id kept");
		free(v);
		v = query1(path, "SELECT count(DISTINCT incident_id) FROM events");
		is_str(v, "1", "events moved to it");
		free(v);
		v = query1(path, "SELECT group_concat(events) FROM incident_objects"
			   " WHERE object_name = 'payments-api-7d9c8f4b6-9jvpd'");
		is_str(v, "2", "objects merged: one row, both events");
		free(v);
		fresh(path);
		run(path, order, nrecs, 5, 0);
	}

	/* a gap change recomputes every window, only when asked to */
	{
		struct pipeline_opts o = { .gap_ns = 200 * SEC, .rules = rules };
		struct pipeline_db *st = NULL;
		char err[512];

		is_int(pipeline_db_open(path, &o, &st, err, sizeof(err)),
		       RT_EINVAL, "a new gap without regap is refused");
		pipeline_db_close(st);
	}
	is_int(run(path, order, 0, 1, 200 * SEC), 0, "reopen with --gap 200s");
	got = query1(path, "SELECT count(*) FROM incidents");
	is_str(got, "6", "shorter gap: payments-api splits into four windows");
	free(got);
	ref = (free(ref), dump(path));
	fresh(path);
	run(path, order, nrecs, 4, 200 * SEC);
	got = dump(path);
	is_str(got, ref, "recomputed equals a fresh run with that gap");
	free(got);
	free(ref);
	fresh(path);
	rules_free(rules);
	return done_testing();
}
