/*
 * ingest_collect.h: test helper for the ingest unit tests: runs input
 * through an ingest and keeps a copy of every record it emits, plus a
 * one-line rendering of each so whole runs can be compared.
 */
#ifndef REVTRAIL_TEST_INGEST_COLLECT_H
#define REVTRAIL_TEST_INGEST_COLLECT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/ingest.h"

#define COLLECT_MAX 256

struct crec {
	struct rt_record r;     /* strings below replace the arena views */
	char *message, *raw, *pod, *ns, *container, *stream, *type;
	char *release, *release_ns, *template_hash, *chart, *owner_kind,
		*owner_name, *host;
	char *line;             /* everything, for run comparisons */
};

struct collect {
	struct crec rec[COLLECT_MAX];
	int n;
	int stop_at;            /* callback returns 7 at this record (1-based) */
};

static char *cdup(struct rt_str s)
{
	char *p = malloc(s.n + 1);

	if (s.n)
		memcpy(p, s.p, s.n);
	p[s.n] = '\0';
	return p;
}

static int collect_cb(void *ctx, struct rt_record *rec)
{
	struct collect *c = ctx;
	struct crec *r;
	char *line = NULL;
	size_t len = 0;
	FILE *f;

	if (c->n >= COLLECT_MAX)
		return 0;
	r = &c->rec[c->n++];
	r->r = *rec;
	r->message = cdup(rec->message);
	r->raw = cdup(rec->raw);
	r->pod = cdup(rec->pod);
	r->ns = cdup(rec->ns);
	r->container = cdup(rec->container);
	r->stream = cdup(rec->stream);
	r->type = cdup(rec->type);
	r->release = cdup(rec->release);
	r->release_ns = cdup(rec->release_ns);
	r->template_hash = cdup(rec->template_hash);
	r->chart = cdup(rec->chart);
	r->owner_kind = cdup(rec->owner_kind);
	r->owner_name = cdup(rec->owner_name);
	r->host = cdup(rec->host);
	f = open_memstream(&line, &len);
	fprintf(f, "n=%llu fmt=%s fl=%u ts=%lld off=%llu src=%s pod=%s ns=%s "
		"ctr=%s stream=%s type=%s msg=[%s] raw=[%s]",
		(unsigned long long)rec->n, rt_format_name(rec->format),
		rec->flags, (long long)rec->ts_ns,
		(unsigned long long)rec->pos.offset, rec->pos.source,
		r->pod, r->ns, r->container, r->stream, r->type, r->message,
		r->raw);
	fclose(f);
	r->line = line;
	return c->stop_at == c->n ? 7 : 0;
}

static void collect_reset(struct collect *c)
{
	for (int i = 0; i < c->n; i++) {
		struct crec *r = &c->rec[i];

		free(r->message); free(r->raw); free(r->pod); free(r->ns);
		free(r->container); free(r->stream); free(r->type);
		free(r->release); free(r->release_ns); free(r->template_hash);
		free(r->chart); free(r->owner_kind); free(r->owner_name);
		free(r->host); free(r->line);
	}
	memset(c, 0, sizeof(*c));
}

/*
 * Feeds text (len bytes) to a fresh ingest in chunks of `chunk` bytes
 * (0 = all at once; negative = pseudo-random sizes), then finishes.
 * Returns the ingest for stats; the caller frees it.
 */
static struct ingest *collect_run(struct collect *c,
				  const struct ingest_opts *opts,
				  const char *source, const char *text,
				  size_t len, long chunk)
{
	struct ingest *in = ingest_new(opts);
	struct rt_arena arena;
	unsigned seed = 12345;
	size_t at = 0;

	rt_arena_init(&arena);
	while (at < len) {
		size_t k = len - at;

		if (chunk > 0 && (size_t)chunk < k)
			k = (size_t)chunk;
		if (chunk < 0) {
			seed = seed * 1103515245u + 12345u;
			k = 1 + (seed >> 16) % 97;
			if (k > len - at)
				k = len - at;
		}
		ingest_feed(in, source, text + at, k, &arena, collect_cb, c);
		at += k;
	}
	ingest_finish(in, source, &arena, collect_cb, c);
	rt_arena_release(&arena);
	return in;
}

#endif
