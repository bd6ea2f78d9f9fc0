/*
 * test_pipeline_fence.c: the exactly-once fence of consume. Batches go
 * through a writer thread whose check is the fence, as in pipeline/batches.c;
 * a batch that expects the database at an offset another writer has since
 * moved on is refused before its commit, and nothing of it is stored.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/batches.h"
#include "revtrail/fence.h"
#include "revtrail/log.h"
#include "revtrail/writer.h"
#include "tap.h"

#define SEC 1000000000LL
#define T0 (1730640000LL * SEC)     /* 2024-11-03T13:20:00Z */
#define S(x) rt_str_make((x), strlen(x))
#define TOPIC "events"

static struct rules *rules;
static FILE *logf;

/* The parts the batch in flight expects (consume's slot). */
struct expect {
	struct ingest_kafka_part p[2];
	size_t n;
};

static int fence(void *ctx, struct store *st, struct corr_batch *b)
{
	struct expect *e = ctx;

	(void)b;
	return pipeline_fence_check(st, e->p, e->n);
}

/* A tagged Warning of pod NAME at T0 + sec. */
static void add_event(struct corr_batch *b, const char *name, int sec)
{
	struct rt_record r;
	struct rt_class c;

	rt_record_init(&r);
	r.format = RT_FMT_K8S_EVENT;
	r.ns = S("shop");
	r.kind = S("Pod");
	r.name = S(name);
	r.pod = S(name);
	r.uid = S(name);
	r.message = S("Back-off restarting failed container");
	r.first_ns = r.ts_ns = T0 + (int64_t)sec * SEC;
	r.count = 1;
	r.pos.source = TOPIC;
	memset(&c, 0, sizeof(c));
	c.ntags = 1;
	c.tags[0] = "crashloop";
	c.severity = RT_SEV_ERROR;
	corr_batch_add(b, &r, &c);
}

/* One batch of partition 0 from start to next, through the writer. */
static int batch(struct pipeline_writer *w, struct corr_batch *b,
		 struct expect *e, int64_t start, int64_t next,
		 const char *name)
{
	int rc;

	corr_batch_reset(b);
	e->p[0] = (struct ingest_kafka_part){ .topic = TOPIC, .partition = 0,
					      .start = start, .next = next };
	e->n = 1;
	add_event(b, name, (int)next);
	if ((rc = corr_batch_position(b, TOPIC, 0, next)) ||
	    (rc = pipeline_writer_submit(w, b)))
		return rc;
	return pipeline_writer_wait(w);
}

static int64_t scalar(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	int64_t v = -1;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(h);
	return v;
}

static bool logged(const char *what)
{
	char buf[4096];
	size_t n;

	fflush(logf);
	rewind(logf);
	n = fread(buf, 1, sizeof(buf) - 1, logf);
	buf[n] = '\0';
	return strstr(buf, what) != NULL;
}

/* Two batches follow each other; then one that expects offset 10 while
 * the database holds 20 (another writer stored 10..19) is refused. */
static void stale_batch(const char *db)
{
	struct corr_batch *b = corr_batch_new(false);
	struct store_stats stats = { 0 };
	struct pipeline_writer *w = NULL;
	struct pipeline_db *pdb = NULL;
	struct expect e = { .n = 0 };
	char err[512];

	if (!ok(pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules },
				 &pdb, err, sizeof(err)) == 0 &&
		pipeline_writer_new(pdb, &stats, &w) == 0, "a writer: %s", err))
		goto out;
	pipeline_writer_set_check(w, fence, &e);
	is_int(batch(w, b, &e, -1, 10, "a-1"), 0,
	       "the first batch expects nothing: committed");
	is_int(batch(w, b, &e, 10, 20, "a-2"), 0,
	       "the next expects where the first left the database: committed");
	is_int(batch(w, b, &e, 10, 20, "a-3"), RT_EDB,
	       "a batch expecting offset 10 where the database holds 20 is "
	       "refused");
	ok(logged(TOPIC "[0]: the database holds offset 20, this consumer "
		  "expected 10"), "the log names the partition and both offsets");
out:
	pipeline_writer_free(w);
	pipeline_db_close(pdb);
	corr_batch_free(b);
	is_int(scalar(db, "SELECT count(*) FROM events"), 2,
	       "nothing of the refused batch is stored");
	is_int(scalar(db, "SELECT count(*) FROM events WHERE pod = 'a-3'"), 0,
	       "its event is not there");
	is_int(stats.batches, 2, "two batches counted as committed");
}

/* The fence on its own, against the database the test above left at 20. */
static void parts(const char *db)
{
	struct pipeline_db *pdb = NULL;
	struct ingest_kafka_part p[2] = {
		{ .topic = TOPIC, .partition = 0, .start = 20, .next = 30 },
		{ .topic = TOPIC, .partition = 1, .start = 5, .next = 9 },
	};
	char err[512];
	struct store *st;

	if (!ok(pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules },
				 &pdb, err, sizeof(err)) == 0, "reopened: %s",
		err))
		return;
	st = pipeline_db_store(pdb);
	is_int(pipeline_fence_check(st, p, 1), 0, "where the database is: passes");
	is_int(pipeline_fence_check(st, p, 2), RT_EDB,
	       "a partition the database has no offset of, expected at 5: "
	       "refused");
	p[1].start = -1;
	is_int(pipeline_fence_check(st, p, 2), 0,
	       "expected nowhere (a first batch): passes");
	p[0].start = 30;
	is_int(pipeline_fence_check(st, p, 2), RT_EDB,
	       "a database behind the batch (a gap): refused");
	is_int(pipeline_fence_check(st, p, 0), 0, "no parts: passes");
	pipeline_db_close(pdb);
}

/* Through pipeline/batches.c, as consume and ingest hand their batches
 * over: one batch of partition 0 from start to next (a fence), or with
 * start -2 a batch with a file's position and no fence (ingest's). */
static int shared_batch(struct pipeline_batches *bt, int64_t start,
			int64_t next, const char *name)
{
	struct ingest_kafka_part p = { .topic = TOPIC, .partition = 0,
				       .start = start, .next = next };
	struct rt_arena scratch;
	struct rt_record r;
	struct rt_class c;
	int rc;

	rt_arena_init(&scratch);
	rt_record_init(&r);
	r.format = RT_FMT_K8S_EVENT;
	r.ns = S("shop");
	r.kind = S("Pod");
	r.name = r.pod = r.uid = rt_str_make(name, strlen(name));
	r.message = S("Back-off restarting failed container");
	r.first_ns = r.ts_ns = T0 + next * SEC;
	r.count = 1;
	r.pos.source = start == -2 ? "file.log" : TOPIC;
	rc = pipeline_batches_add(bt, rules, &r, &scratch, &c);
	if (!rc)
		rc = start == -2 ?
			pipeline_batches_position(bt, "file.log", -1, next) :
			pipeline_batches_fence(bt, &p, 1);
	if (!rc)
		rc = pipeline_batches_submit(bt);
	if (!rc)
		rc = pipeline_writer_wait(pipeline_batches_writer(bt));
	rt_arena_release(&scratch);
	return rc;
}

/* The batches alternate; each carries its own fence, and a batch without
 * one (ingest's) is not held to the fence its slot's batch had before. */
static void shared(const char *db)
{
	struct store_stats stats = { 0 };
	struct pipeline_batches *bt = NULL;
	struct pipeline_batches_counts n = { 0 };
	struct pipeline_db *pdb = NULL;
	char err[512] = "";

	if (!ok(pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules },
				 &pdb, err, sizeof(err)) == 0 &&
		pipeline_batches_new(pdb, false, &stats, &bt) == 0,
		"shared batches: %s", err))
		goto out;
	is_int(shared_batch(bt, -1, 10, "b-1"), 0, "a first batch: committed");
	is_int(shared_batch(bt, 10, 20, "b-2"), 0, "the next: committed");
	is_int(shared_batch(bt, 20, 30, "b-3"), 0,
	       "the next, in the first batch again: committed");
	is_int(shared_batch(bt, -2, 40, "b-4"), 0,
	       "a batch with no fence, in the slot that expected 10: "
	       "committed");
	is_int(shared_batch(bt, 20, 40, "b-5"), RT_EDB,
	       "a batch expecting 20 where the database holds 30: refused");
	pipeline_batches_counts(bt, &n);
	is_int((long long)n.tagged, 5, "both batches' records counted");
out:
	pipeline_batches_free(bt);
	pipeline_db_close(pdb);
	is_int(scalar(db, "SELECT count(*) FROM events"), 4,
	       "the four committed batches' events are stored");
	is_int(scalar(db, "SELECT count(*) FROM events WHERE pod = 'b-5'"), 0,
	       "the refused one's is not");
	is_int(scalar(db, "SELECT offset FROM sources WHERE path = '"
		      TOPIC "' AND partition = 0"), 30,
	       "the partition's position is the last committed batch's");
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

int main(void)
{
	char dir[] = "/tmp/revtrail-test-fence-XXXXXX";
	char db[64], err[256];

	if (!ok(mkdtemp(dir) != NULL, "a temporary directory"))
		return done_testing();
	snprintf(db, sizeof(db), "%s/f.db", dir);
	rules = rules_new();
	if (rules_load_builtin(rules, err, sizeof(err)) ||
	    rules_compile(rules, err, sizeof(err))) {
		ok(0, "built-in rules: %s", err);
		return done_testing();
	}
	logf = tmpfile();
	rt_log_setup(RT_LOG_TEXT, logf);
	stale_batch(db);
	parts(db);
	fresh(db);
	shared(db);
	fresh(db);
	rmdir(dir);
	rules_free(rules);
	fclose(logf);
	return done_testing();
}
