/*
 * fuzz_rules.c: libFuzzer harness for the rule-pack parser and compiler: any
 * bytes must give 0 or a clean file:line error, never a crash or a leak.
 * A pack that compiles is exercised on its own text as a record.
 */
#include <stdint.h>
#include <string.h>

#include "revtrail/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct rules *r = rules_new();

	if (!r)
		return 0;
	if (rules_load_buffer(r, "fuzz.rules", (const char *)data, size, err,
			      sizeof(err)) == 0 &&
	    rules_compile(r, err, sizeof(err)) == 0) {
		struct rt_record rec;
		struct rt_class c;
		struct rt_arena arena;

		rt_arena_init(&arena);
		rt_record_init(&rec);
		rec.message = rt_str_make((const char *)data, size);
		rec.raw = rec.message;
		rules_classify(r, &rec, &arena, &c);
		rt_arena_release(&arena);
	}
	rules_free(r);
	return 0;
}
