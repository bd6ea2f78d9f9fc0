/* RT_GROW (core/rt_kit.c): room for nr elements, or an error code with
 * the array left as it was. */
#include <stdint.h>
#include <stdlib.h>

#include "revtrail/rt_kit.h"
#include "tap.h"

int main(void)
{
	int *v = NULL;
	size_t alloc = 0, i;
	int ok_all = 1;

	for (i = 0; i < 1000; i++) {
		if (RT_GROW(v, i + 1, alloc)) {
			ok_all = 0;
			break;
		}
		v[i] = (int)i;
	}
	ok(ok_all && alloc >= 1000, "grows to 1000 (alloc %zu)", alloc);
	for (i = 0; i < 1000 && v[i] == (int)i; i++)
		;
	is_int(i, 1000, "keeps what it held");
	ok(alloc < 4000, "grows geometrically, not past twice the need");
	is_int(RT_GROW(v, 10, alloc), 0, "a smaller need is no change");

	{
		int *before = v;
		size_t a = alloc;

		is_int(RT_GROW(v, SIZE_MAX / 2, alloc), RT_ENOMEM,
		       "a size that overflows is refused");
		ok(v == before && alloc == a, "and leaves the array alone");
	}
	free(v);

	{
		char *c = NULL;
		size_t ca = 0;

		is_int(RT_GROW(c, 1, ca), 0, "a first element");
		ok(c && ca >= 16, "starts at 16 (%zu)", ca);
		free(c);
	}
	return done_testing();
}
