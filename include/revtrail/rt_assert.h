/*
 * rt_assert.h: invariants that run, in SQLite's manner (sqliteInt.h).
 *
 * RT_ASSERT(x)  states what is true; checked only under RT_DEBUG.
 * ALWAYS(x)     around a condition the code believes always true but still
 * NEVER(x)      handles (a defensive branch): under RT_DEBUG a false
 *               ALWAYS or a true NEVER aborts, so tests find the broken
 *               belief; in a release build they are (x), so the branch
 *               stays and the program recovers.
 *
 * RT_DEBUG is set by the Makefile for sanitizer builds (whose unit tests
 * run the asserts too), never for the binary that ships. A failure prints
 * "FILE:LINE: assertion failed: EXPR" on stderr and aborts.
 *
 * Keep what they evaluate cheap, and keep them out of per-byte loops.
 */
#ifndef REVTRAIL_RT_ASSERT_H
#define REVTRAIL_RT_ASSERT_H

#include <stdbool.h>

/* Prints where and what, then abort(). Defined in every build, so objects
 * built with and without RT_DEBUG link together. */
_Noreturn void rt_assert_fail(const char *expr, const char *file, int line);

#ifdef RT_DEBUG
#define RT_ASSERTS_ON 1
#define RT_ASSERT(x) \
	((x) ? (void)0 : rt_assert_fail(#x, __FILE__, __LINE__))
#define ALWAYS(x) ((x) ? 1 : (rt_assert_fail(#x, __FILE__, __LINE__), 0))
#define NEVER(x) ((x) ? (rt_assert_fail(#x, __FILE__, __LINE__), 1) : 0)
#else
#define RT_ASSERTS_ON 0
/* x is type-checked and the names it uses count as used (no warning for
 * a helper only asserts call), but 0 && never evaluates it. */
#define RT_ASSERT(x) ((void)(0 && (x)))
#define ALWAYS(x) (x)
#define NEVER(x) (x)
#endif

#endif
