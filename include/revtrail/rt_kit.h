/*
 * rt_kit.h: the containers every module used to write by hand -- a byte
 * builder (rt_buf), a growth macro (RT_GROW), one 64-bit hash (rt_hash64)
 * and an index map (rt_map) -- built once in core/rt_kit.c.
 *
 * A header of its own, not rt.h: rt.h is the record and the types that
 * flow between stages, read by everyone who reads a record; these are
 * tools a file picks up when it builds something, and a file that only
 * passes records along need not see them. Like rt.h it is core/, below
 * every stage, and none of it ever exits: each failure is a return code.
 */
#ifndef REVTRAIL_RT_KIT_H
#define REVTRAIL_RT_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "revtrail/rt.h"

/* ---- growth -------------------------------------------------------- */

/*
 * RT_GROW(ptr, nr, alloc): room for nr elements of *ptr, in the manner of
 * git's ALLOC_GROW. alloc (a size_t lvalue) is the capacity, and grows to
 * at least nr, doubling from 16. 0, or RT_ENOMEM when realloc fails or
 * the size overflows; then ptr and alloc are unchanged.
 */
#define RT_GROW(ptr, nr, alloc)                                        \
	((size_t)(nr) <= (alloc) ? 0 :                                 \
	 rt_grow_((void *)&(ptr), (ptr), &(alloc), (nr), sizeof(*(ptr))))
int rt_grow_(void *pptr, void *old, size_t *alloc, size_t nr, size_t size);

/* ---- bytes --------------------------------------------------------- */

/*
 * A growing byte string, always NUL-terminated once anything was added
 * (p is NULL before). Errors are sticky, as in a stdio stream: the first
 * failed append sets err (RT_ENOMEM, or RT_ELIMIT past max) and every
 * later append does nothing, so a builder of many pieces checks once at
 * the end. max (0: none) bounds n, for text a record can make grow.
 */
struct rt_buf {
	char *p;
	size_t n, cap;
	size_t max;
	int err;
};

#define RT_BUF_INIT { NULL, 0, 0, 0, 0 }
/* An empty builder of at most max bytes (0: unbounded). */
void rt_buf_init(struct rt_buf *b, size_t max);
/* Frees the bytes; b is empty and usable again. */
void rt_buf_release(struct rt_buf *b);
/* Empties b and clears its error; keeps the memory. */
void rt_buf_reset(struct rt_buf *b);
/* Room for n more bytes (and the NUL). 0 or b->err. */
int rt_buf_reserve(struct rt_buf *b, size_t n);
/* Each returns 0 or b->err. */
int rt_buf_add(struct rt_buf *b, const void *p, size_t n);
int rt_buf_addstr(struct rt_buf *b, const char *s);
int rt_buf_addc(struct rt_buf *b, char c);
int rt_buf_addf(struct rt_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The bytes, NUL-terminated (an empty string when none; NULL when that
 * allocation fails), now the caller's to free; b is empty. */
char *rt_buf_detach(struct rt_buf *b, size_t *n);

/* ---- hashing ------------------------------------------------------- */

/*
 * 64-bit FNV-1a over p[0..n), then splitmix64's finaliser, so that the
 * low bits serve as table slots and the whole as an identity; never 0.
 * seed 0 starts; a previous result chains. This is the hash an event's
 * stored identity (events.ukey) is made of: its values must never change,
 * or a database would take re-read input for new events. A faster mix
 * (wyhash's) would need a migration of every stored key to pay off.
 */
uint64_t rt_hash64(uint64_t seed, const void *p, size_t n);
/* One field of a chain: its length, then its bytes, so that ("ab", "c")
 * and ("a", "bc") differ. */
uint64_t rt_hash_field(uint64_t h, const void *p, size_t n);
static inline uint64_t rt_hash_str(uint64_t h, struct rt_str s)
{
	return rt_hash_field(h, s.p, s.n);
}
static inline uint64_t rt_hash_u64(uint64_t h, uint64_t v)
{
	return rt_hash64(h, &v, sizeof(v));
}

/* ---- the index map ------------------------------------------------- */

/*
 * An open-addressing set of uint32 indexes into the caller's own array,
 * keyed by the hash of the element. A slot holds the hash's low 32 bits
 * beside the index, so a probe compares an element only when those agree;
 * the caller says what equal means. Linear probing, at most half full
 * (insert doubles the table past that and places every slot again from
 * the bits it stored, without asking the caller). Indexes are below
 * RT_MAP_NONE; elements are never removed one by one, only all at once.
 */
struct rt_map {
	uint64_t *slot;     /* (hash low 32 bits << 32) | (index + 1); 0 free */
	size_t nslots;      /* 0 or a power of two */
	size_t n;
};

#define RT_MAP_NONE UINT32_MAX
#define RT_MAP_INIT { NULL, 0, 0 }
void rt_map_init(struct rt_map *m);
void rt_map_release(struct rt_map *m);
/* Forgets every index; keeps the slots. */
void rt_map_clear(struct rt_map *m);
/* Room for n indexes without growing. 0, RT_ENOMEM or RT_ELIMIT. */
int rt_map_reserve(struct rt_map *m, size_t n);
/* Adds idx under hash; the caller made sure no equal element is there.
 * 0, RT_ENOMEM, or RT_ELIMIT (idx == RT_MAP_NONE, or 2^30 indexes). */
int rt_map_insert(struct rt_map *m, uint64_t hash, uint32_t idx);

/* Walks the indexes stored under hash (the candidates a lookup compares):
 * rt_map_iter_init, then rt_map_next until RT_MAP_NONE. */
struct rt_map_iter {
	size_t i;
	uint32_t tag;
};
static inline void rt_map_iter_init(const struct rt_map *m,
				    struct rt_map_iter *it, uint64_t hash)
{
	it->tag = (uint32_t)hash;
	it->i = m->nslots ? (size_t)hash & (m->nslots - 1) : 0;
}
static inline uint32_t rt_map_next(const struct rt_map *m,
				   struct rt_map_iter *it)
{
	if (!m->n)
		return RT_MAP_NONE;
	for (;;) {
		uint64_t v = m->slot[it->i];

		if (!v)
			return RT_MAP_NONE;
		it->i = (it->i + 1) & (m->nslots - 1);
		if ((uint32_t)(v >> 32) == it->tag)
			return (uint32_t)v - 1;
	}
}

/* Puts idx in the slot of the index rt_map_next returned last (a table
 * that keeps one element of several equal ones, by a rule of its own). */
static inline void rt_map_replace(struct rt_map *m,
				  const struct rt_map_iter *it, uint32_t idx)
{
	size_t i = (it->i - 1) & (m->nslots - 1);

	m->slot[i] = (m->slot[i] & ~(uint64_t)0xffffffffu) |
		     ((uint64_t)idx + 1);
}

/* The index under hash that eq(ctx, index) accepts, or RT_MAP_NONE.
 * Inline, so that a constant eq is inlined into the probe loop. */
static inline uint32_t rt_map_find(const struct rt_map *m, uint64_t hash,
				   bool (*eq)(const void *ctx, uint32_t idx),
				   const void *ctx)
{
	struct rt_map_iter it;
	uint32_t idx;

	rt_map_iter_init(m, &it, hash);
	while ((idx = rt_map_next(m, &it)) != RT_MAP_NONE && !eq(ctx, idx))
		;
	return idx;
}

#endif
