/*
 * The List streamer (ingest/json_stream.c) and the framer around it: a
 * List's items come out one by one, compacted, at their own offsets,
 * whatever the order of the root's members and however the bytes were
 * split across reads; an item or document over the bound is skipped and
 * counted, and what follows it is still read.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../ingest/json_stream.h"
#include "revtrail/ingest.h"
#include "tap.h"
#include "ingest_collect.h"

static struct collect C;

/* ---- the streamer alone ---- */

struct seen {
	char text[4096];        /* items as "OFF:TEXT|", oversize "OFF:!|" */
	size_t n;
};

static void seen_add(struct seen *s, uint64_t off, const char *p, size_t n)
{
	int k = snprintf(s->text + s->n, sizeof(s->text) - s->n, "%llu:%.*s|",
			 (unsigned long long)off, (int)n, p);

	if (k > 0 && (size_t)k < sizeof(s->text) - s->n)
		s->n += (size_t)k;
}

static int on_item(void *ctx, const char *p, size_t n, uint64_t off)
{
	seen_add(ctx, off, p, n);
	return 0;
}

static int on_over(void *ctx, uint64_t off)
{
	seen_add(ctx, off, "!", 1);
	return 0;
}

static const struct js_stream_ops ops = { on_item, on_over };

/* Feeds doc split at cut (cut == len: at once); *done as the streamer
 * ended. */
static void stream2(struct seen *s, const char *doc, size_t len, size_t cut,
		    size_t max, bool arrays, bool *done)
{
	struct js_stream js;
	size_t used;

	memset(s, 0, sizeof(*s));
	js_stream_init(&js, &ops, s, max, arrays);
	js_stream_feed(&js, doc, cut, 0, &used);
	if (!js.done)
		js_stream_feed(&js, doc + cut, len - cut, cut, &used);
	*done = js.done;
	js_stream_release(&js);
}

/* The same answer fed at once, split at every byte, and a byte a time. */
static void stream_every(const char *name, const char *doc, size_t max,
			 bool arrays, const char *want)
{
	size_t len = strlen(doc);
	struct seen once, s;
	struct js_stream js;
	int bad = 0;
	bool done;

	stream2(&once, doc, len, len, max, arrays, &done);
	is_str(once.text, want, "%s: items and offsets", name);
	ok(done, "%s: the document ends", name);
	for (size_t cut = 0; cut <= len; cut++) {
		stream2(&s, doc, len, cut, max, arrays, &done);
		bad += strcmp(s.text, once.text) != 0 || !done;
	}
	memset(&s, 0, sizeof(s));
	js_stream_init(&js, &ops, &s, max, arrays);
	for (size_t i = 0; i < len && !js.done; i++) {
		size_t used;

		js_stream_feed(&js, doc + i, 1, i, &used);
	}
	bad += strcmp(s.text, once.text) != 0;
	js_stream_release(&js);
	is_int(bad, 0, "%s: split at every byte, the same", name);
}

static void test_stream_kinds(void)
{
	/* kubectl's order (sorted keys: items before kind), its indent. */
	stream_every("kubectl List",
		     "{\n"
		     "    \"apiVersion\": \"v1\",\n"
		     "    \"items\": [\n"
		     "        {\n"
		     "            \"a\": \"x y\",\n"
		     "            \"b\": [1, {\"c\": \"]}\"}]\n"
		     "        },\n"
		     "        {\"d\": \"\\\"{\"}\n"
		     "    ],\n"
		     "    \"kind\": \"List\",\n"
		     "    \"metadata\": {\"resourceVersion\": \"\"}\n"
		     "}\n", 1 << 20, false,
		     "49:{\"a\":\"x y\",\"b\":[1,{\"c\":\"]}\"}]}|"
		     "128:{\"d\":\"\\\"{\"}|");
	/* The API server's order: kind first. */
	stream_every("EventList",
		     "{\"kind\":\"EventList\",\"apiVersion\":\"v1\","
		     "\"metadata\":{},\"items\":[{\"x\":1},{\"y\":[2]}]}",
		     1 << 20, false, "61:{\"x\":1}|69:{\"y\":[2]}|");
	stream_every("kind not a List",
		     "{\"kind\":\"Thing\",\"items\":[{\"x\":1}]}", 1 << 20,
		     false, "");
	stream_every("items not at the root",
		     "{\"metadata\":{\"items\":[{\"x\":1}]},\"v\":\"items\","
		     "\"items\":\"[{}]\"}", 1 << 20, false, "");
	stream_every("an escaped key is not items",
		     "{\"it\\u0065ms\":[{\"x\":1}]}", 1 << 20, false, "");
	stream_every("root array, asked",
		     "[ {\"x\": 1}, 2, \"s\", [3, 4] ]", 1 << 20, true,
		     "2:{\"x\":1}|20:[3,4]|");
	stream_every("root array, not asked", "[{\"x\":1}]", 1 << 20, false,
		     "");
}

static void test_stream_bound(void)
{
	/* {"n":"0123456789"} is 18 bytes compacted: over a bound of 17. */
	stream_every("an item over the bound",
		     "{\"items\":[{\"a\":1},\n  {\"n\" : \"0123456789\"},"
		     "{\"b\":2}]}", 17, false,
		     "10:{\"a\":1}|21:!|42:{\"b\":2}|");
	stream_every("an item at the bound",
		     "{\"items\":[{\"n\":\"012345678\"}]}", 17, false,
		     "10:{\"n\":\"012345678\"}|");
}

/* ---- through the framer ---- */

static const char event_list[] =
	"{\n"
	"    \"apiVersion\": \"v1\",\n"
	"    \"items\": [\n"
	"        {\n"
	"            \"apiVersion\": \"v1\",\n"
	"            \"involvedObject\": {\"kind\": \"Pod\", \"name\": \"web-1\","
	" \"namespace\": \"prod\"},\n"
	"            \"kind\": \"Event\",\n"
	"            \"lastTimestamp\": \"2024-05-01T10:15:13Z\",\n"
	"            \"message\": \"Back-off restarting failed container\",\n"
	"            \"metadata\": {\"name\": \"e1\", \"namespace\": \"prod\","
	" \"uid\": \"u1\"},\n"
	"            \"reason\": \"BackOff\",\n"
	"            \"type\": \"Warning\"\n"
	"        },\n"
	"        {\n"
	"            \"apiVersion\": \"v1\",\n"
	"            \"involvedObject\": {\"kind\": \"Pod\", \"name\": \"web-2\","
	" \"namespace\": \"prod\"},\n"
	"            \"kind\": \"Event\",\n"
	"            \"lastTimestamp\": \"2024-05-01T10:15:14Z\",\n"
	"            \"message\": \"Readiness probe failed\",\n"
	"            \"metadata\": {\"name\": \"e2\", \"namespace\": \"prod\","
	" \"uid\": \"u2\"},\n"
	"            \"reason\": \"Unhealthy\",\n"
	"            \"type\": \"Warning\"\n"
	"        }\n"
	"    ],\n"
	"    \"kind\": \"List\",\n"
	"    \"metadata\": {\"resourceVersion\": \"\"}\n"
	"}\n"
	"plain line after\n";

/* The records of a run, one line each, for comparisons. */
static char *run_text(const struct ingest_opts *o, const char *in, size_t n,
		      size_t cut)
{
	struct ingest *ing = ingest_new(o);
	struct rt_arena arena;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	rt_arena_init(&arena);
	ingest_feed(ing, "l.json", in, cut, &arena, collect_cb, &C);
	ingest_feed(ing, "l.json", in + cut, n - cut, &arena, collect_cb, &C);
	ingest_finish(ing, "l.json", &arena, collect_cb, &C);
	for (int i = 0; i < C.n; i++)
		fprintf(f, "%s\n", C.rec[i].line);
	fprintf(f, "oversize %llu\n",
		(unsigned long long)ingest_stats(ing)->oversize);
	fclose(f);
	rt_arena_release(&arena);
	ingest_free(ing);
	collect_reset(&C);
	return out;
}

static void test_framer_list(void)
{
	/* Bound under the List's size, over an item's. */
	struct ingest_opts o = { .max_record = 700 };
	size_t n = sizeof(event_list) - 1;
	const char *first = strstr(event_list, "        {") + 8;
	const char *second = strstr(first + 1, "        {") + 8;
	struct ingest *ing = collect_run(&C, &o, "l.json", event_list, n, 0);
	char *once;
	int bad = 0;

	is_int(C.n, 3, "list: two Events and the line after");
	is_int(C.rec[0].r.format, RT_FMT_K8S_EVENT, "list: an Event");
	is_str(C.rec[0].message, "Back-off restarting failed container", "list: the first");
	is_str(C.rec[1].message, "Readiness probe failed", "list: the second");
	is_int(C.rec[0].r.pos.offset, first - event_list,
	       "list: the first item at its own offset");
	is_int(C.rec[1].r.pos.offset, second - event_list,
	       "list: the second item at its own offset");
	ok(C.rec[0].raw && !strchr(C.rec[0].raw, '\n') &&
	   !strncmp(C.rec[0].raw, "{\"apiVersion\":\"v1\",\"involvedObject\"",
		    35), "list: an item's raw is its own JSON, compacted");
	is_str(C.rec[2].message, "plain line after", "list: then the line");
	is_int(ingest_stats(ing)->oversize, 0, "list: nothing over");
	ingest_free(ing);
	collect_reset(&C);

	once = run_text(&o, event_list, n, n);
	for (size_t cut = 0; cut < n; cut++) {
		char *s = run_text(&o, event_list, n, cut);

		bad += strcmp(s, once) != 0;
		free(s);
	}
	is_int(bad, 0, "list: split across two reads at every byte, the same");
	free(once);
}

static void test_framer_compact(void)
{
	/* The List on one line, over the bound: streamed, not cut. */
	struct ingest_opts o = { .max_record = 400 };
	char in[4096];
	size_t n = 0;
	struct ingest *ing;
	char *once;
	int bad = 0;

	for (const char *p = event_list; *p; p++)
		if (*p != '\n' && !(*p == ' ' && p[1] == ' ') &&
		    !(*p == ' ' && p > event_list && p[-1] == ' '))
			in[n++] = *p;
	/* "plain line after" lost its newline too: put the lines back. */
	n = (size_t)(strstr(in, "}plain") + 1 - in);
	n += (size_t)sprintf(in + n, "\nplain line after\n");
	ok(n > 400, "compact: over the bound (%zu bytes)", n);
	ing = collect_run(&C, &o, "c.json", in, n, 0);
	is_int(C.n, 3, "compact: two Events and the line after");
	is_str(C.rec[1].message, "Readiness probe failed", "compact: the second Event");
	is_int(C.rec[0].r.pos.offset, strstr(in, "[{") + 1 - in,
	       "compact: the first item at its own offset");
	is_int(ingest_stats(ing)->truncated, 0, "compact: nothing cut");
	ingest_free(ing);
	collect_reset(&C);

	once = run_text(&o, in, n, n);
	for (size_t cut = 0; cut < n; cut++) {
		char *s = run_text(&o, in, n, cut);

		bad += strcmp(s, once) != 0;
		free(s);
	}
	is_int(bad, 0, "compact: split at every byte, the same");
	free(once);
}

static void test_framer_oversize(void)
{
	/* An item over the bound, a whole document over it, good records
	 * around both. */
	struct ingest_opts o = { .max_record = 120 };
	char in[2048], big[200];
	struct ingest *ing;
	size_t n;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = (size_t)snprintf(in, sizeof(in),
		"{\"msg\":\"before\"}\n"
		"{\n"
		"  \"items\": [\n"
		"    {\"msg\": \"item one\"},\n"
		"    {\"msg\": \"%s\"},\n"
		"    {\"msg\": \"item three\"}\n"
		"  ],\n"
		"  \"kind\": \"List\"\n"
		"}\n"
		"{\n"
		"  \"kind\": \"Secret\",\n"
		"  \"data\": {\"release\": \"%s\"}\n"
		"}\n"
		"{\"msg\":\"after\"}\n", big, big);
	ing = collect_run(&C, &o, "o.json", in, n, 0);
	is_int(C.n, 4, "oversize: the good records all read");
	is_str(C.rec[0].message, "before", "oversize: before");
	is_str(C.rec[1].message, "item one", "oversize: item one");
	is_str(C.rec[2].message, "item three", "oversize: item three");
	is_str(C.rec[3].message, "after", "oversize: after");
	is_int(ingest_stats(ing)->oversize, 2, "oversize: item and document");
	is_int(ingest_stats(ing)->rejects, 2, "oversize: both rejects");
	is_int(ingest_stats(ing)->truncated, 0, "oversize: no cut record");
	{
		char want[64];

		snprintf(want, sizeof(want), "o.json:%ld",
			 (long)(strstr(in, "{\"msg\": \"xx") - in));
		is_str(ingest_stats(ing)->oversize_at, want,
		       "oversize: the first one's place");
	}
	ingest_free(ing);
	collect_reset(&C);
}

/* A real pipe, written in small pieces by a child: the file source's
 * read loop with its chunk boundaries wherever the kernel puts them. */
static void test_pipe(void)
{
	struct ingest_opts o = { .max_record = 700 };
	struct ingest *ing = ingest_new(&o);
	struct rt_arena arena;
	char path[32];
	char *paths[1] = { path };
	int fd[2];
	pid_t pid;

	if (pipe(fd)) {
		ok(0, "pipe");
		return;
	}
	if ((pid = fork()) == 0) {
		close(fd[0]);
		for (size_t i = 0; i < sizeof(event_list) - 1; i += 7) {
			size_t k = sizeof(event_list) - 1 - i;

			if (write(fd[1], event_list + i, k < 7 ? k : 7) < 0)
				_exit(1);
			usleep(200);
		}
		_exit(0);
	}
	close(fd[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fd[0]);
	rt_arena_init(&arena);
	is_int(ingest_read_paths(ing, paths, 1, &arena, collect_cb, NULL, &C),
	       0, "pipe: read");
	close(fd[0]);
	waitpid(pid, NULL, 0);
	is_int(C.n, 3, "pipe: two Events and the line");
	is_str(C.rec[1].message, "Readiness probe failed", "pipe: the second Event");
	rt_arena_release(&arena);
	ingest_free(ing);
	collect_reset(&C);
}

/* Kafka: a value over the bound holding a List is read item by item. */
static void test_message(void)
{
	struct ingest_opts o = { .max_record = 700 };
	struct ingest *ing = ingest_new(&o);
	struct rt_pos pos = { "events", 0, 3, 42 };
	struct rt_arena arena;
	char big[800];

	rt_arena_init(&arena);
	ingest_decode_message(ing, event_list, sizeof(event_list) - 18, NULL,
			      0, 0, &pos, &arena, collect_cb, &C);
	is_int(C.n, 2, "message: the List's two Events");
	is_str(C.rec[0].message, "Back-off restarting failed container", "message: the first");
	is_int(C.rec[1].r.pos.kafka_offset, 42, "message: at the value's offset");
	memset(big, 'x', sizeof(big));
	memcpy(big, "{\"data\":\"", 9);
	memcpy(big + sizeof(big) - 2, "\"}", 2);
	ingest_decode_message(ing, big, sizeof(big), NULL, 0, 0, &pos, &arena,
			      collect_cb, &C);
	is_int(C.n, 2, "message: an object over the bound is no record");
	is_int(ingest_stats(ing)->oversize, 1, "message: it is counted");
	is_str(ingest_stats(ing)->oversize_at, "events/3:42",
	       "message: its place");
	rt_arena_release(&arena);
	ingest_free(ing);
	collect_reset(&C);
}

int main(void)
{
	test_stream_kinds();
	test_stream_bound();
	test_framer_list();
	test_framer_compact();
	test_framer_oversize();
	test_pipe();
	test_message();
	return done_testing();
}
