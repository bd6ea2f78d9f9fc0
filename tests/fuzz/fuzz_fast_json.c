/*
 * fuzz_fast_json.c: libFuzzer harness comparing the two readings of JSON
 * lines: json_scan.h / fast_event.c (one-line Events, docker json-file)
 * against the cJSON decoders. The input goes through two ingests, one
 * with the fast path off; every field of every record and every counter
 * must agree, else abort() with both dumps. The first byte of the input
 * chooses the chunk size, so framing is fuzzed along.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ingest/frame.h"

struct dump {
	char *p;
	size_t n, cap;
	unsigned records, events, docker;
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

	snprintf(head, sizeof(head), "n=%llu fmt=%d fl=%u ts=%lld first=%lld "
		 "count=%lld off=%llu nrevs=%zu", (unsigned long long)r->n,
		 r->format, r->flags, (long long)r->ts_ns, (long long)r->first_ns,
		 (long long)r->count, (unsigned long long)r->pos.offset, r->nrevs);
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
	return 0;
}

static void run(const uint8_t *data, size_t n, size_t chunk, bool fast,
		struct dump *d)
{
	struct ingest_opts o = { .max_record = 4096 };
	struct ingest *in = ingest_new(&o);
	const struct ingest_stats *st;
	struct rt_arena a;
	char stats[256];

	if (!in)
		abort();
	rt_arena_init(&a);
	ing_set_fast_json(in, fast);
	for (size_t i = 0; i < n; i += chunk) {
		ingest_feed(in, "pods/shop_web-1_u/web/0.log",
			    (const char *)data + i, i + chunk <= n ? chunk : n - i,
			    &a, on_rec, d);
		rt_arena_reset(&a);
	}
	ingest_finish(in, "pods/shop_web-1_u/web/0.log", &a, on_rec, d);
	st = ingest_stats(in);
	snprintf(stats, sizeof(stats), "stats %llu %llu %llu %llu %llu %llu %llu\n",
		 (unsigned long long)st->records, (unsigned long long)st->rejects,
		 (unsigned long long)st->truncated,
		 (unsigned long long)st->bad_utf8,
		 (unsigned long long)st->binary,
		 (unsigned long long)st->skipped,
		 (unsigned long long)st->times_out_of_range);
	put(d, stats, strlen(stats));
	rt_arena_release(&a);
	ingest_free(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dump fast = { 0 }, slow = { 0 };
	size_t chunk = size ? (size_t)data[0] * 16 + 1 : 1;

	run(data, size, chunk, true, &fast);
	run(data, size, chunk, false, &slow);
	if (fast.n != slow.n || (fast.n && memcmp(fast.p, slow.p, fast.n))) {
		fprintf(stderr, "fast and cJSON readings differ\n--- fast\n%s"
			"--- cJSON\n%s", fast.p, slow.p);
		abort();
	}
	free(fast.p);
	free(slow.p);
	return 0;
}
