/*
 * rt_core.c: the shared rt_* helpers every stage uses: error strings, string
 * views, the batch arena, format and severity names, record init. They live
 * in core/, below every stage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "revtrail/rt.h"

const char *rt_prog = "revtrail";

const char *rt_strerror(int err)
{
	switch (err) {
	case RT_OK: return "success";
	case RT_ENOMEM: return "out of memory";
	case RT_EIO: return "I/O error";
	case RT_EINVAL: return "invalid argument or configuration";
	case RT_EPARSE: return "input cannot be decoded";
	case RT_ELIMIT: return "limit exceeded";
	case RT_EDB: return "database error";
	case RT_EKAFKA: return "Kafka error";
	case RT_ERANGE: return "time out of range (before 1970 or after 2261)";
	}
	return "unknown error";
}

_Noreturn void rt_assert_fail(const char *expr, const char *file, int line)
{
	fprintf(stderr, "%s: %s:%d: assertion failed: %s\n", rt_prog, file,
		line, expr);
	fflush(stderr);
	abort();
}

bool rt_str_eq(struct rt_str s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n == n && (n == 0 || memcmp(s.p, lit, n) == 0);
}

size_t rt_u64_dec(char *out, uint64_t v)
{
	char tmp[RT_U64_DIGITS];
	size_t k = sizeof(tmp), n;

	do
		tmp[--k] = (char)('0' + v % 10);
	while ((v /= 10));
	n = sizeof(tmp) - k;
	memcpy(out, tmp + k, n);
	return n;
}

/* Blocks grow geometrically so a giant record costs one block, not many. */
#define ARENA_MIN_BLOCK (64u * 1024)
/* .used of a released arena where asserts are on: rt_arena_init before
 * allocating again. */
#define ARENA_RELEASED SIZE_MAX
/* What a reset arena's kept block holds where asserts are on: a view that
 * outlived its arena's reset then reads this, not yesterday's text. */
#define ARENA_POISON 0xa5

struct rt_arena_block {
	struct rt_arena_block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

void rt_arena_init(struct rt_arena *a)
{
	a->head = NULL;
	a->used = 0;
}

static struct rt_arena_block *arena_grow(struct rt_arena *a, size_t need)
{
	size_t size = a->head ? a->head->size * 2 : ARENA_MIN_BLOCK;
	struct rt_arena_block *b;

	if (size > 16u * 1024 * 1024)
		size = 16u * 1024 * 1024;
	if (size < need)
		size = need;
	b = malloc(sizeof(*b) + size);
	if (!b)
		return NULL;
	b->size = size;
	b->used = 0;
	b->next = a->head;
	a->head = b;
	return b;
}

void *rt_arena_alloc(struct rt_arena *a, size_t n)
{
	struct rt_arena_block *b = a->head;
	size_t at;

	RT_ASSERT(a->used != ARENA_RELEASED);
	n = (n + 15) & ~(size_t)15;
	if (!b || b->size - b->used < n) {
		b = arena_grow(a, n);
		if (!b)
			return NULL;
	}
	at = b->used;
	b->used += n;
	a->used += n;
	return b->data + at;
}

struct rt_str rt_arena_strdup(struct rt_arena *a, const char *p, size_t n)
{
	char *d = rt_arena_alloc(a, n + 1);

	if (!d)
		return RT_STR_NULL;
	if (n)
		memcpy(d, p, n);
	d[n] = '\0';
	return rt_str_make(d, n);
}

/* Keeps the newest (largest) block: a steady stream then allocates nothing. */
void rt_arena_reset(struct rt_arena *a)
{
	struct rt_arena_block *keep = a->head, *b;

	if (!keep)
		return;
	b = keep->next;
	while (b) {
		struct rt_arena_block *next = b->next;

		free(b);
		b = next;
	}
	keep->next = NULL;
	if (RT_ASSERTS_ON)
		memset(keep->data, ARENA_POISON, keep->used);
	keep->used = 0;
	a->used = 0;
}

void rt_arena_release(struct rt_arena *a)
{
	rt_arena_reset(a);
	free(a->head);
	a->head = NULL;
	if (RT_ASSERTS_ON)
		a->used = ARENA_RELEASED;
}

static const char *const format_names[RT_FMT_COUNT] = {
	[RT_FMT_UNKNOWN] = "unknown",
	[RT_FMT_K8S_EVENT] = "k8s-event",
	[RT_FMT_EXPORTER] = "exporter",
	[RT_FMT_CRI] = "cri",
	[RT_FMT_DOCKER] = "docker",
	[RT_FMT_FLUENTBIT] = "fluentbit",
	[RT_FMT_VECTOR] = "vector",
	[RT_FMT_HELM_HISTORY] = "helm-history",
	[RT_FMT_HELM_LIST] = "helm-list",
	[RT_FMT_HELM_STATUS] = "helm-status",
	[RT_FMT_HELM_STORAGE] = "helm-storage",
	[RT_FMT_HELM_TEXT] = "helm-text",
	[RT_FMT_JSON] = "json",
	[RT_FMT_TEXT] = "text",
};

const char *rt_format_name(enum rt_format f)
{
	if ((unsigned)f >= RT_FMT_COUNT)
		return "unknown";
	return format_names[f];
}

enum rt_format rt_format_from_name(const char *name)
{
	for (int f = 1; f < RT_FMT_COUNT; f++)
		if (strcmp(format_names[f], name) == 0)
			return (enum rt_format)f;
	return RT_FMT_UNKNOWN;
}

static const char *const severity_names[] = {
	"none", "info", "warning", "error", "critical",
};

const char *rt_severity_name(enum rt_severity s)
{
	if ((unsigned)s > RT_SEV_CRITICAL)
		return "none";
	return severity_names[s];
}

int rt_severity_from_name(const char *name, size_t n)
{
	for (int s = RT_SEV_INFO; s <= RT_SEV_CRITICAL; s++)
		if (strlen(severity_names[s]) == n &&
		    strncasecmp(severity_names[s], name, n) == 0)
			return s;
	return -1;
}

/* Every line starts here. GCC inlines a constant-size memset as rep stosq,
 * which takes about 18 ns for these 408 bytes on AMD cores; libc's vector
 * memset takes 6. The volatile pointer keeps the call a call. */
static void *(*volatile zero_fill)(void *, int, size_t) = memset;

void rt_record_init(struct rt_record *r)
{
	zero_fill(r, 0, sizeof(*r));
	r->count = 1;
	r->pos.partition = -1;
	r->pos.kafka_offset = -1;
}
