/*
 * test_core_assert.c: RT_ASSERT, ALWAYS and NEVER (revtrail/rt_assert.h)
 * fire where asserts are on and cost nothing but their value where they
 * are off; the arena refuses to serve after it was released and poisons
 * what a reset took back.
 */
#include <stdio.h>
#include <string.h>

#include "revtrail/rt.h"
#include "assert_child.h"
#include "tap.h"

static void assert_false(void *ctx)
{
	int *two = ctx;

	RT_ASSERT(*two + 1 == 4);
}

static void always_false(void *ctx)
{
	int *two = ctx;

	if (ALWAYS(*two == 3))
		return;
	fprintf(stderr, "recovered\n");
}

static void never_true(void *ctx)
{
	int *two = ctx;

	if (NEVER(*two == 2))
		fprintf(stderr, "recovered\n");
}

static void arena_after_release(void *ctx)
{
	struct rt_arena a;

	(void)ctx;
	rt_arena_init(&a);
	rt_arena_strdup(&a, "x", 1);
	rt_arena_release(&a);
	rt_arena_alloc(&a, 16);
}

/* Released, then initialised again: a legal second life. */
static void arena_reinit(void *ctx)
{
	struct rt_arena a;

	(void)ctx;
	rt_arena_init(&a);
	rt_arena_release(&a);
	rt_arena_init(&a);
	if (!rt_arena_alloc(&a, 16))
		_exit(2);
	rt_arena_release(&a);
}

static void macros(void)
{
	int two = 2;

	dies_of_assert(assert_false, &two, "*two + 1 == 4", "RT_ASSERT");
	dies_of_assert(assert_false, &two, "test_core_assert.c:",
		       "RT_ASSERT says where");
	dies_of_assert(always_false, &two, "*two == 3", "ALWAYS(false)");
	dies_of_assert(never_true, &two, "*two == 2", "NEVER(true)");
	is_int(ALWAYS(two == 2), 1, "ALWAYS(true) is 1");
	is_int(NEVER(two == 3), 0, "NEVER(false) is 0");
	if (RT_ASSERTS_ON) {
		tap_skip("ALWAYS(false) is 0 in a release build", "asserts on");
		tap_skip("NEVER(true) is 1 in a release build", "asserts on");
	} else {
		/* The defensive branch stays where asserts are off. */
		is_int(ALWAYS(two == 3), 0, "ALWAYS(false) is 0 in a release "
		       "build");
		is_int(NEVER(two == 2), 1, "NEVER(true) is 1 in a release "
		       "build");
	}
}

static void arena(void)
{
	struct rt_arena a;
	struct rt_str s;

	dies_of_assert(arena_after_release, NULL, "ARENA_RELEASED",
		       "an arena allocates nothing once released");
	lives(arena_reinit, NULL, "a released arena initialised again "
	      "allocates");
	rt_arena_init(&a);
	s = rt_arena_strdup(&a, "hello", 5);
	rt_arena_reset(&a);
	if (RT_ASSERTS_ON)
		ok(memcmp(s.p, "\xa5\xa5\xa5\xa5\xa5", 5) == 0,
		   "a view that outlived its arena's reset reads poison");
	else
		tap_skip("a view that outlived its arena's reset reads poison",
			 "asserts are compiled out in this build");
	rt_arena_release(&a);
}

int main(void)
{
	macros();
	arena();
	return done_testing();
}
