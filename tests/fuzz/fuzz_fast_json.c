/*
 * fuzz_fast_json.c: libFuzzer harness of the JSON reader (json_scan.h,
 * which every JSON frame goes through) and of the one shape still read two
 * ways: Events, by fast_event.c and by dec_kube.c from cJSON. The input
 * goes through two ingests, one sending Events to dec_kube.c; every field
 * of every record and every counter must agree, else abort() with both
 * dumps (the sanitizers watch the reader meanwhile). The first byte of the
 * input chooses the chunk size, so framing is fuzzed along.
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
