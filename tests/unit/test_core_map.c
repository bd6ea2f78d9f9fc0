/* rt_map (core/rt_kit.c): indexes into the caller's array, found by hash
 * and the caller's equality, across growth and clear. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/rt_kit.h"
#include "tap.h"

#define N 5000

static char names[N][16];

static bool eq(const void *ctx, uint32_t idx)
{
	return strcmp(names[idx], ctx) == 0;
}

static uint64_t h(const char *s)
{
	return rt_hash64(0, s, strlen(s));
}

static uint32_t find(const struct rt_map *m, const char *s)
{
	return rt_map_find(m, h(s), eq, s);
}

int main(void)
{
	struct rt_map m = RT_MAP_INIT;
	struct rt_map_iter it;
	uint32_t i, bad = 0, seen = 0;

	is_int(find(&m, "x"), RT_MAP_NONE, "an empty map finds nothing");
	for (i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "name-%u", i);
		if (rt_map_insert(&m, h(names[i]), i))
			bad++;
	}
	is_int(bad, 0, "%d inserts", N);
	is_int(m.n, N, "counted");
	ok(m.n * 2 <= m.nslots, "at most half full (%zu of %zu)", m.n,
	   m.nslots);
	for (i = 0; i < N; i++)
		if (find(&m, names[i]) != i)
			bad++;
	is_int(bad, 0, "each found at its index after growing");
	is_int(find(&m, "name-5000"), RT_MAP_NONE, "a stranger is not");

	/* colliding hashes: the iterator yields both, eq tells them apart */
	rt_map_clear(&m);
	is_int(find(&m, "name-1"), RT_MAP_NONE, "clear forgets");
	rt_map_insert(&m, 42, 1);
	rt_map_insert(&m, 42, 2);
	rt_map_insert(&m, 42 + ((uint64_t)1 << 20), 3);   /* same slot */
	rt_map_iter_init(&m, &it, 42);
	while ((i = rt_map_next(&m, &it)) != RT_MAP_NONE)
		seen |= 1u << i;
	is_int(seen, 6, "the iterator yields the indexes of one hash only");
	is_int(rt_map_find(&m, 42, eq, "name-2"), 2, "eq picks the equal one");
	rt_map_iter_init(&m, &it, 42);
	while ((i = rt_map_next(&m, &it)) != RT_MAP_NONE && i != 2)
		;
	rt_map_replace(&m, &it, 7);
	is_int(rt_map_find(&m, 42, eq, "name-7"), 7,
	       "replace puts another index");
	is_int(rt_map_find(&m, 42, eq, "name-2"), RT_MAP_NONE,
	       "in place of the one it found");
	is_int(rt_map_find(&m, 42, eq, "name-1"), 1, "and nothing else");
	is_int(rt_map_insert(&m, 1, RT_MAP_NONE), RT_ELIMIT,
	       "RT_MAP_NONE is no index");
	rt_map_release(&m);
	ok(!m.slot && !m.n && !m.nslots, "release");
	return done_testing();
}
