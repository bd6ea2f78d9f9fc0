/*
 * record_dump.h: every field of every record an ingest emits, and its
 * counters, as text, so that two readings of one input (the fast JSON path
 * and cJSON) can be compared byte for byte. Shared by test_ingest_fast.c
 * and the fuzz harness fuzz_fast_json.c.
 */
#ifndef REVTRAIL_TEST_RECORD_DUMP_H
#define REVTRAIL_TEST_RECORD_DUMP_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ingest/frame.h"

struct dump {
	char *p;
	size_t n, cap;
	unsigned records, events, docker, logs;
};

static void put(struct dump *d, const char *s, size_t n)
{
	if (d->n + n + 1 > d->cap) {
		d->cap = (d->n + n + 1) * 2;
		if (!(d->p = realloc(d->p, d->cap)))
			abort();
	}
	memcpy(d->p + d->n, s, n);
	d->n += n;
	d->p[d->n] = '\0';
}

static void put_str(struct dump *d, const char *key, struct rt_str s)
{
	put(d, " ", 1);
	put(d, key, strlen(key));
	put(d, s.p ? "=[" : "=NULL[", s.p ? 2 : 6);
	if (s.n)
		put(d, s.p, s.n);
	put(d, "]", 1);
}

static int on_rec(void *ctx, struct rt_record *r)
{
	struct dump *d = ctx;
	char head[256];
	/* cJSON keeps no number's text, so the slow path reads a count past
	 * 2^53 through a double; the fast path reads it exactly (t2066).
	 * Compared as the double rounds them. */
	int64_t count = r->count > ((int64_t)1 << 53) ?
		rt_count_of_double((double)r->count) : r->count;

	snprintf(head, sizeof(head), "n=%llu fmt=%d fl=%u ts=%lld first=%lld "
		 "count=%lld off=%llu nrevs=%zu", (unsigned long long)r->n,
		 r->format, r->flags, (long long)r->ts_ns, (long long)r->first_ns,
		 (long long)count, (unsigned long long)r->pos.offset, r->nrevs);
	put(d, head, strlen(head));
	put_str(d, "ns", r->ns);
	put_str(d, "kind", r->kind);
	put_str(d, "name", r->name);
	put_str(d, "pod", r->pod);
	put_str(d, "ctr", r->container);
	put_str(d, "stream", r->stream);
	put_str(d, "fp", r->field_path);
	put_str(d, "reason", r->reason);
	put_str(d, "type", r->type);
	put_str(d, "msg", r->message);
	put_str(d, "raw", r->raw);
	put_str(d, "uid", r->uid);
	put_str(d, "comp", r->component);
	put_str(d, "host", r->host);
	put_str(d, "rel", r->release);
	put_str(d, "relns", r->release_ns);
	put_str(d, "ok", r->owner_kind);
	put_str(d, "on", r->owner_name);
	put_str(d, "th", r->template_hash);
	put_str(d, "chart", r->chart);
	put(d, "\n", 1);
	d->records++;
	d->events += r->format == RT_FMT_K8S_EVENT;
	d->docker += r->format == RT_FMT_DOCKER;
	d->logs += r->format == RT_FMT_FLUENTBIT ||
		   r->format == RT_FMT_VECTOR || r->format == RT_FMT_JSON;
	return 0;
}

/* Feeds text in pieces of chunk bytes, with the fast JSON path on or off;
 * the dump gets the ingest's counters last. */
static void dump_run(const char *text, size_t n, size_t chunk, bool fast,
		     const struct ingest_opts *o, struct dump *d)
{
	struct ingest *in = ingest_new(o);
	struct rt_arena a;
	const struct ingest_stats *st;
	char tail[256];

	if (!in)
		abort();
	rt_arena_init(&a);
	ing_set_fast_json(in, fast);
	for (size_t i = 0; i < n; i += chunk) {
		ingest_feed(in, "pods/shop_web-1_u/web/0.log", text + i,
			    i + chunk <= n ? chunk : n - i, &a, on_rec, d);
		rt_arena_reset(&a);
	}
	ingest_finish(in, "pods/shop_web-1_u/web/0.log", &a, on_rec, d);
	st = ingest_stats(in);
	snprintf(tail, sizeof(tail), "stats %llu %llu %llu %llu %llu %llu %llu\n",
		 (unsigned long long)st->records, (unsigned long long)st->rejects,
		 (unsigned long long)st->truncated,
		 (unsigned long long)st->bad_utf8,
		 (unsigned long long)st->binary,
		 (unsigned long long)st->skipped,
		 (unsigned long long)st->times_out_of_range);
	put(d, tail, strlen(tail));
	rt_arena_release(&a);
	ingest_free(in);
}

#endif
