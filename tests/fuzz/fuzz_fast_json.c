/*
 * fuzz_fast_json.c: libFuzzer harness comparing the two readings of JSON
 * lines: json_scan.h / fast_event.c / dec_logs.c (one-line Events, docker
 * json-file, Fluent Bit, Vector and other JSON log records) against the
 * cJSON decoders. The input goes through two ingests, one
 * with the fast path off; every field of every record and every counter
 * must agree, else abort() with both dumps. The first byte of the input
 * chooses the chunk size, so framing is fuzzed along.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/record_dump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ingest_opts o = { .max_record = 4096 };
	struct dump fast = { 0 }, slow = { 0 };
	size_t chunk = size ? (size_t)data[0] * 16 + 1 : 1;

	dump_run((const char *)data, size, chunk, true, &o, &fast);
	dump_run((const char *)data, size, chunk, false, &o, &slow);
	if (fast.n != slow.n || (fast.n && memcmp(fast.p, slow.p, fast.n))) {
		fprintf(stderr, "fast and cJSON readings differ\n--- fast\n%s"
			"--- cJSON\n%s", fast.p, slow.p);
		abort();
	}
	free(fast.p);
	free(slow.p);
	return 0;
}
