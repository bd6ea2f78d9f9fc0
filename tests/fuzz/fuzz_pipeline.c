/*
 * fuzz_pipeline.c: libFuzzer harness for the whole way of a record --
 * ingest, pipeline_classify, corr_batch_add (pipeline_add), pipeline_commit
 * into an in-memory SQLite database -- and for its promise: reading the
 * same input again changes nothing. Each input is ingested twice into a
 * fresh database; the incidents, events, objects and revisions after the
 * second pass must be those after the first, else abort() with both.
 * The input's first byte chooses where it is cut in two chunks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/ingest.h"
#include "revtrail/pipeline.h"
#include "revtrail/rules.h"
#include "revtrail/writer.h"

static struct rules *rules;

struct text {
	char *p;
	size_t n, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->n + n + 1 > t->cap) {
		t->cap = (t->n + n + 1) * 2;
		if (!(t->p = realloc(t->p, t->cap)))
			abort();
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = '\0';
}

struct pass {
	struct corr_batch *b;
	struct rt_arena arena;
};

static int on_record(void *ctx, struct rt_record *r)
{
	struct pass *p = ctx;
	struct rt_class c;

	return pipeline_add(rules, p->b, r, &p->arena, &c);
}

static void ingest_once(struct pipeline_db *st, const uint8_t *data, size_t size)
{
	struct ingest_opts o = { .max_record = 4096 };
	struct ingest *in = ingest_new(&o);
	size_t cut = size ? data[0] % (size + 1) : 0;
	struct pass p = { corr_batch_new(false), { 0 } };

	if (!in || !p.b)
		abort();
	rt_arena_init(&p.arena);
	ingest_feed(in, "pods/shop_web-1_u/web/0.log", (const char *)data, cut,
		    &p.arena, on_record, &p);
	ingest_feed(in, "pods/shop_web-1_u/web/0.log", (const char *)data + cut,
		    size - cut, &p.arena, on_record, &p);
	ingest_finish(in, "pods/shop_web-1_u/web/0.log", &p.arena, on_record,
		      &p);
	if (pipeline_commit(st, p.b, NULL) == RT_EDB) {
		fprintf(stderr, "commit: %s\n", store_errmsg(pipeline_db_store(st)));
		abort();
	}
	corr_batch_free(p.b);
	rt_arena_release(&p.arena);
	ingest_free(in);
}

static int on_row(void *ctx, int n, const char *const *names,
		  const struct store_value *v)
{
	struct text *t = ctx;
	char num[64];

	(void)names;
	for (int i = 0; i < n; i++) {
		switch (v[i].type) {
		case STORE_INT:
			snprintf(num, sizeof(num), "%lld|", (long long)v[i].i);
			put(t, num, strlen(num));
			break;
		case STORE_REAL:
			snprintf(num, sizeof(num), "%.17g|", v[i].d);
			put(t, num, strlen(num));
			break;
		case STORE_TEXT:
		case STORE_BLOB:
			put(t, v[i].p, v[i].n);
			put(t, "|", 1);
			break;
		default:
			put(t, "NULL|", 5);
		}
	}
	put(t, "\n", 1);
	return 0;
}

static void snapshot(struct store *st, struct text *t)
{
	char err[512];

	if (store_query(st, "SELECT * FROM incidents ORDER BY id;"
			"SELECT * FROM events ORDER BY id;"
			"SELECT * FROM incident_objects ORDER BY 1, 2, 3;"
			"SELECT * FROM revisions ORDER BY 1, 2, 3;"
			"SELECT * FROM workload_releases ORDER BY 1, 2",
			NULL, on_row, t, err, sizeof(err))) {
		fprintf(stderr, "snapshot: %s\n", err);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];

	(void)argc;
	(void)argv;
	rules = rules_new();
	if (!rules || rules_load_builtin(rules, err, sizeof(err)) ||
	    rules_compile(rules, err, sizeof(err)))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pipeline_opts so = { .rules = rules };
	struct text first = { 0 }, second = { 0 };
	struct pipeline_db *st;
	char err[512];

	if (pipeline_db_open(":memory:", &so, &st, err, sizeof(err))) {
		fprintf(stderr, "open: %s\n", err);
		abort();
	}
	ingest_once(st, data, size);
	snapshot(pipeline_db_store(st), &first);
	ingest_once(st, data, size);
	snapshot(pipeline_db_store(st), &second);
	if (first.n != second.n || (first.n && memcmp(first.p, second.p,
						      first.n))) {
		fprintf(stderr, "the second pass changed the database\n"
			"--- first\n%s--- second\n%s", first.p ? first.p : "",
			second.p ? second.p : "");
		abort();
	}
	free(first.p);
	free(second.p);
	pipeline_db_close(st);
	return 0;
}
