/*
 * test_pipeline_seen.c: the store's filter of stored event identities
 * (store/seen.c) never calls a stored identity new, spares the lookup of
 * nearly every new one, and stays whole as it grows and when a later run
 * refills it from the table.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/writer.h"
#include "../../store/store_int.h"
#include "tap.h"

#define SEC 1000000000LL
#define T0 (1730640000LL * SEC)
#define S(x) rt_str_make((x), strlen(x))
#define SMALL_BITS 1024                 /* 64 keys before the first growth */

static struct rules *rules;

static uint64_t next_key(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void filter_alone(void)
{
	struct seen f = { .min_bits = SMALL_BITS };
	uint64_t s = 1, keys[1000];
	int missing = 0, false_maybe = 0;

	if (!ok(store_seen_alloc(&f, 1000) == 0, "a filter for 1000 keys"))
		return;
	ok((f.mask + 1) * 64 >= 1000 * 16, "of at least 16 bits a key");
	for (int i = 0; i < 1000; i++)
		store_seen_add(&f, keys[i] = next_key(&s));
	for (int i = 0; i < 1000; i++)
		missing += !store_seen_holds(&f, keys[i]);
	is_int(missing, 0, "every key added is held");
	for (int i = 0; i < 100000; i++)
		false_maybe += store_seen_holds(&f, next_key(&s));
	ok(false_maybe < 2000, "under 2%% of other keys are a maybe (%d of "
	   "100000)", false_maybe);
	store_seen_free(&f);
}

/* n Pod Events with uids from first on, in one commit. */
static int commit_events(struct pipeline_db *st, int first, int n,
			 struct store_stats *stats)
{
	struct corr_batch *b = corr_batch_new(false);
	char uid[32], pod[64];
	int rc;

	for (int i = first; i < first + n; i++) {
		struct rt_record r;
		struct rt_class c = { .ntags = 1, .tags = { "crashloop" },
				      .severity = RT_SEV_CRITICAL };

		rt_record_init(&r);
		snprintf(uid, sizeof(uid), "seen-%d", i);
		snprintf(pod, sizeof(pod), "web-7d9c8f4b6-%05d", i);
		r.format = RT_FMT_K8S_EVENT;
		r.ns = S("prod");
		r.kind = S("Pod");
		r.name = r.pod = S(pod);
		r.uid = S(uid);
		r.message = S("Back-off restarting failed container");
		r.first_ns = r.ts_ns = T0 + i * SEC;
		r.count = 1;
		r.pos.source = "test";
		corr_batch_add(b, &r, &c);
	}
	memset(stats, 0, sizeof(*stats));
	rc = pipeline_commit(st, b, stats);
	corr_batch_free(b);
	return rc;
}

/* Runs of the identity lookup statement since the store was opened. */
static int lookups(struct pipeline_db *st)
{
	return sqlite3_stmt_status(pipeline_db_store(st)->st[S_EV_LOOKUP],
				   SQLITE_STMTSTATUS_RUN, 0);
}

/* Every ukey in the table is held by the filter. */
static int unheld(struct pipeline_db *st)
{
	struct store *s = pipeline_db_store(st);
	sqlite3_stmt *q;
	int n = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT ukey FROM events", -1, &q, NULL))
		return -1;
	while (sqlite3_step(q) == SQLITE_ROW)
		n += !store_seen_holds(&s->seen, (uint64_t)sqlite3_column_int64(q, 0));
	sqlite3_finalize(q);
	return n;
}

static struct pipeline_db *open_small(const char *db)
{
	struct pipeline_db *st = NULL;
	char err[512];

	if (pipeline_db_open(db, &(struct pipeline_opts){ .rules = rules }, &st,
			     err, sizeof(err))) {
		printf("# open: %s\n", err);
		return NULL;
	}
	pipeline_db_store(st)->seen.min_bits = SMALL_BITS;
	return st;
}

static void in_the_store(const char *db)
{
	struct pipeline_db *st = open_small(db);
	struct store_stats stats;
	int looked;

	if (!ok(st != NULL, "open"))
		return;
	/* 500 new identities in five commits: the filter grows past 64 keys
	 * three times, refilled from the table each time */
	for (int k = 0; k < 5; k++)
		is_int(commit_events(st, k * 100, 100, &stats), 0, "commit %d", k);
	is_int(stats.events_new, 100, "the last commit's events are new");
	looked = lookups(st);
	ok(looked < 25, "new identities went to SQLite %d times of 500",
	   looked);
	ok((pipeline_db_store(st)->seen.mask + 1) * 64 >= 500 * 16,
	   "the filter grew with its keys");
	is_int(unheld(st), 0, "it holds every stored identity");
	is_int(commit_events(st, 0, 500, &stats), 0, "the same 500 again");
	is_int(stats.events_updated, 500, "all found stored");
	is_int(stats.events_new, 0, "none new");
	pipeline_db_close(st);

	/* a later run fills it from the table at its first lookup */
	if (!ok((st = open_small(db)) != NULL, "reopen"))
		return;
	is_int(commit_events(st, 250, 500, &stats), 0, "250 stored, 250 new");
	is_int(stats.events_updated, 250, "the stored ones found");
	is_int(stats.events_new, 250, "the others new");
	is_int(unheld(st), 0, "it holds all 750");
	pipeline_db_close(st);
}

int main(void)
{
	char db[] = "/tmp/revtrail-test-seen-XXXXXX";
	char err[256], p[64];
	int fd = mkstemp(db);

	close(fd);
	rules = rules_new();
	if (rules_load_builtin(rules, err, sizeof(err)) ||
	    rules_compile(rules, err, sizeof(err))) {
		ok(0, "built-in rules: %s", err);
		return done_testing();
	}
	filter_alone();
	unlink(db);
	in_the_store(db);
	unlink(db);
	snprintf(p, sizeof(p), "%s-wal", db);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", db);
	unlink(p);
	snprintf(p, sizeof(p), "%s.lock", db);
	unlink(p);
	rules_free(rules);
	return done_testing();
}
