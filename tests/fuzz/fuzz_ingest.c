/*
 * fuzz_ingest.c: libFuzzer harness for the framer and every decoder. The
 * input is split at a byte chosen by the input itself so chunk boundaries
 * are fuzzed too; records are classified with the built-in packs so the
 * rule engine sees decoder output as well, with JSON payloads deferred or
 * not as the input's second byte says.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/ingest.h"
#include "revtrail/rules.h"
#include "revtrail/pipeline.h"

static struct rules *rules;

static int on_record(void *ctx, struct rt_record *r)
{
	struct rt_class c;

	pipeline_classify(rules, r, ctx, &c);
	/* Touch every view so ASan sees a dangling one. */
	volatile size_t sink = r->message.n + r->raw.n;
	for (size_t i = 0; i < r->message.n; i++)
		sink += (unsigned char)r->message.p[i];
	(void)sink;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[512];

	(void)argc;
	(void)argv;
	rules = rules_new();
	if (!rules || rules_load_builtin(rules, err, sizeof(err)) ||
	    rules_compile(rules, err, sizeof(err)))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ingest_opts o = { .max_record = 4096,
				 .defer_payload = size > 1 && (data[1] & 1) };
	struct rt_arena arena;
	struct ingest *in = ingest_new(&o);
	size_t cut = size ? data[0] % (size + 1) : 0;
	struct rt_pos pos = { "kafka", 0, 0, 7 };

	if (!in)
		return 0;
	rt_arena_init(&arena);
	ingest_feed(in, "f", (const char *)data, cut, &arena, on_record, &arena);
	ingest_feed(in, "f", (const char *)data + cut, size - cut, &arena,
		    on_record, &arena);
	ingest_finish(in, "f", &arena, on_record, &arena);
	ingest_decode_message(in, (const char *)data, size, NULL, 0, 0, &pos,
			      &arena, on_record, &arena);
	rt_arena_release(&arena);
	ingest_free(in);
	return 0;
}
