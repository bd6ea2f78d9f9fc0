/*
 * rt_kit.c: the growth helper, the byte builder, the hash and the index
 * map of revtrail/rt_kit.h. Small on purpose: what the modules' own
 * tables and buffers did, once, with the overflow checks each of them
 * left out or repeated.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/rt_kit.h"

/* ---- growth -------------------------------------------------------- */

int rt_grow_(void *pptr, void *old, size_t *alloc, size_t nr, size_t size)
{
	size_t cap = *alloc < 8 ? 16 : *alloc > SIZE_MAX / 2 ? nr : *alloc * 2;
	void *q;

	if (cap < nr)
		cap = nr;
	if (size && cap > SIZE_MAX / size)
		return RT_ENOMEM;
	if (!(q = realloc(old, cap * size)))
		return RT_ENOMEM;
	memcpy(pptr, &q, sizeof(q));
	*alloc = cap;
	return 0;
}

/* ---- bytes --------------------------------------------------------- */

void rt_buf_init(struct rt_buf *b, size_t max)
{
	*b = (struct rt_buf)RT_BUF_INIT;
	b->max = max;
}

void rt_buf_release(struct rt_buf *b)
{
	size_t max = b->max;

	free(b->p);
	rt_buf_init(b, max);
}

void rt_buf_reset(struct rt_buf *b)
{
	b->n = 0;
	b->err = 0;
	if (b->p)
		b->p[0] = '\0';
}

int rt_buf_reserve(struct rt_buf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->err)
		return b->err;
	if (n > SIZE_MAX - 1 - b->n)
		return b->err = RT_ENOMEM;
	need = b->n + n + 1;
	if (b->max && need - 1 > b->max)
		return b->err = RT_ELIMIT;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (!(p = realloc(b->p, cap)))
		return b->err = RT_ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int rt_buf_add(struct rt_buf *b, const void *p, size_t n)
{
	if (rt_buf_reserve(b, n))
		return b->err;
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

int rt_buf_addstr(struct rt_buf *b, const char *s)
{
	return rt_buf_add(b, s, strlen(s));
}

int rt_buf_addc(struct rt_buf *b, char c)
{
	if (b->n + 1 < b->cap && !b->err && (!b->max || b->n < b->max)) {
		b->p[b->n++] = c;
		b->p[b->n] = '\0';
		return 0;
	}
	return rt_buf_add(b, &c, 1);
}

int rt_buf_addf(struct rt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return b->err;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return b->err = RT_EINVAL;
	if (rt_buf_reserve(b, (size_t)n))
		return b->err;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
	return 0;
}

char *rt_buf_detach(struct rt_buf *b, size_t *n)
{
	char *p = b->p ? b->p : calloc(1, 1);

	if (n)
		*n = b->p ? b->n : 0;
	rt_buf_init(b, b->max);
	return p;
}

/* ---- hashing ------------------------------------------------------- */

uint64_t rt_hash64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	if (h == 0)
		h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h ? h : 1;
}

uint64_t rt_hash_field(uint64_t h, const void *p, size_t n)
{
	uint64_t len = n;

	h = rt_hash64(h, &len, sizeof(len));
	return n ? rt_hash64(h, p, n) : h;
}

/* ---- the index map ------------------------------------------------- */

/* Past this many slots, a table would need more than 32 bits of hash to
 * place its entries. */
#define MAP_MAX_SLOTS ((size_t)1 << 31)

void rt_map_init(struct rt_map *m)
{
	*m = (struct rt_map)RT_MAP_INIT;
}

void rt_map_release(struct rt_map *m)
{
	free(m->slot);
	rt_map_init(m);
}

void rt_map_clear(struct rt_map *m)
{
	if (m->n)
		memset(m->slot, 0, m->nslots * sizeof(*m->slot));
	m->n = 0;
}

static void place(uint64_t *slot, size_t nslots, uint64_t v)
{
	size_t mask = nslots - 1, i = (uint32_t)(v >> 32) & mask;

	while (slot[i])
		i = (i + 1) & mask;
	slot[i] = v;
}

int rt_map_reserve(struct rt_map *m, size_t n)
{
	size_t nslots = m->nslots ? m->nslots : 16;
	uint64_t *s;

	while (n > nslots / 2) {
		if (nslots >= MAP_MAX_SLOTS)
			return RT_ELIMIT;
		nslots *= 2;
	}
	if (nslots == m->nslots)
		return 0;
	if (!(s = calloc(nslots, sizeof(*s))))
		return RT_ENOMEM;
	for (size_t i = 0; i < m->nslots; i++)
		if (m->slot[i])
			place(s, nslots, m->slot[i]);
	free(m->slot);
	m->slot = s;
	m->nslots = nslots;
	return 0;
}

int rt_map_insert(struct rt_map *m, uint64_t hash, uint32_t idx)
{
	int err;

	if (idx == RT_MAP_NONE)
		return RT_ELIMIT;
	if ((err = rt_map_reserve(m, m->n + 1)))
		return err;
	place(m->slot, m->nslots, (hash << 32) | ((uint64_t)idx + 1));
	m->n++;
	RT_ASSERT(m->n * 2 <= m->nslots);     /* probes stay short */
	return 0;
}
