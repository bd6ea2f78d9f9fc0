/* rt_buf (core/rt_kit.c): appends, the sticky error, the bound, detach. */
#include <stdlib.h>
#include <string.h>

#include "revtrail/rt_kit.h"
#include "tap.h"

int main(void)
{
	struct rt_buf b = RT_BUF_INIT;
	char *p;
	size_t n;

	rt_buf_add(&b, "ab", 2);
	rt_buf_addstr(&b, "cd");
	rt_buf_addc(&b, '-');
	rt_buf_addf(&b, "%d/%s", 42, "x");
	is_str(b.p, "abcd-42/x", "appends");
	is_int(b.n, 9, "length");
	is_int(b.err, 0, "no error");

	for (int i = 0; i < 1000; i++)
		rt_buf_addf(&b, "%04d", i);
	is_int(b.n, 9 + 4000, "grows past its first block");
	ok(memcmp(b.p + b.n - 4, "0999", 4) == 0 && b.p[b.n] == '\0',
	   "the last piece, NUL-terminated");

	rt_buf_reset(&b);
	is_str(b.p, "", "reset empties");
	p = rt_buf_detach(&b, &n);
	ok(p && n == 0 && !b.p && !b.n, "detach hands the bytes over");
	free(p);

	rt_buf_init(&b, 8);
	rt_buf_addstr(&b, "12345678");
	is_int(b.err, 0, "up to the bound");
	is_int(rt_buf_addc(&b, '9'), RT_ELIMIT, "one past it is refused");
	is_int(rt_buf_addstr(&b, ""), RT_ELIMIT, "and the error sticks");
	is_str(b.p, "12345678", "the text before it stays");
	rt_buf_reset(&b);
	is_int(rt_buf_addf(&b, "%s", "123456789"), RT_ELIMIT,
	       "printf past the bound");
	rt_buf_reset(&b);
	is_int(rt_buf_add(&b, "x", SIZE_MAX), RT_ENOMEM,
	       "a length that overflows");
	rt_buf_release(&b);
	ok(!b.p && b.max == 8, "release frees and keeps the bound");

	p = rt_buf_detach(&b, &n);
	is_str(p, "", "detach of nothing is an empty string");
	free(p);
	return done_testing();
}
