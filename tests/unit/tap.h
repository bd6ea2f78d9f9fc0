/*
 * tap.h: a minimal TAP producer for the C unit tests, run through prove.
 *   ok(cond, "name %d", x);   is_int(got, want, name);   is_str(got, want, name);
 *   return done_testing();
 */
#ifndef REVTRAIL_TAP_H
#define REVTRAIL_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line,
			 const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond) {
		printf("#   failed at %s:%d\n", file, line);
		tap_failed++;
	}
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (!ok(g_ == w_, __VA_ARGS__)) \
		printf("#   got %lld, want %lld\n", g_, w_); \
} while (0)

#define is_str(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__)) \
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

/* Compares a struct rt_str with a C string. */
#define is_rts(got, want, ...) do { \
	struct rt_str s_ = (got); const char *w_ = (want); \
	int m_ = s_.n == strlen(w_) && (s_.n == 0 || memcmp(s_.p, w_, s_.n) == 0); \
	if (!ok(m_, __VA_ARGS__)) \
		printf("#   got '%.*s', want '%s'\n", (int)s_.n, s_.p ? s_.p : "", w_); \
} while (0)

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
