/* rt_hash64 (core/rt_kit.c): its values are the stored identities of
 * events (events.ukey), so they are pinned here as the correlator's
 * former corr_hash computed them; a changed hash fails this test before it
 * makes a database take re-read input for new events. */
#include <string.h>

#include "revtrail/rt_kit.h"
#include "tap.h"

static void pinned(const char *s, uint64_t want)
{
	ok(rt_hash64(0, s, strlen(s)) == want, "rt_hash64(\"%s\") as stored",
	   s);
}

int main(void)
{
	uint64_t h;

	pinned("", 0xf52a15e9a9b5e89bULL);
	pinned("a", 0x2c0bdbf481420f8ULL);
	pinned("revtrail", 0xd98780763049433aULL);
	pinned("payments-api", 0x69a5c374bd046675ULL);

	/* an Event's identity: "uid", then namespace and uid as fields */
	h = rt_hash64(0, "uid", 3);
	h = rt_hash_str(h, RT_STR_LIT("default"));
	h = rt_hash_field(h, "0b1e0c9e-8f5e-4b1c-9a53-5f8e8e2b6f43", 36);
	ok(h == 0x8a401e27649aa23bULL, "a chain of fields as stored");

	ok(rt_hash_field(rt_hash_field(0, "ab", 2), "c", 1) !=
	   rt_hash_field(rt_hash_field(0, "a", 1), "bc", 2),
	   "fields keep their bounds");
	ok(rt_hash_u64(0, 1) != rt_hash_u64(0, 2), "numbers differ");
	ok(rt_hash64(7, "x", 1) != rt_hash64(8, "x", 1), "the seed counts");
	return done_testing();
}
