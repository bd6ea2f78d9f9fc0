/*
 * Framing (docs/formats.md §6 item 2): lines,
 * pretty-printed documents, bounds, byte hygiene, tail -F headers, file
 * paths, chunk boundaries, forced formats, Kafka values.
 */
#include <string.h>

#include "revtrail/ingest.h"
#include "tap.h"
#include "ingest_collect.h"

static struct collect C;

#define RUN(opts, src, text, chunk) \
	collect_run(&C, (opts), (src), (text), sizeof(text) - 1, (chunk))

static void test_ndjson(void)
{
	static const char in[] =
		"{\"level\":\"info\",\"msg\":\"started\"}\n"
		"{\"level\":\"error\",\"msg\":\"db timeout\"}\n";
	struct ingest *ing = RUN(NULL, "app.log", in, 0);

	is_int(C.n, 2, "ndjson: two records");
	is_str(C.rec[0].message, "started", "ndjson: first message");
	is_str(C.rec[1].message, "db timeout", "ndjson: second message");
	is_int(C.rec[1].r.format, RT_FMT_JSON, "ndjson: json format");
	is_int(C.rec[1].r.pos.offset, strchr(in, '\n') + 1 - in,
	       "ndjson: offset of second line");
	is_int(C.rec[0].r.n, 1, "ndjson: n starts at 1");
	is_int(C.rec[1].r.n, 2, "ndjson: n counts");
	is_str(C.rec[1].raw, "{\"level\":\"error\",\"msg\":\"db timeout\"}",
	       "ndjson: raw is the line");
	is_int(ingest_stats(ing)->records, 2, "ndjson: stats.records");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_pretty(void)
{
	static const char in[] =
		"{\n"
		"    \"message\": \"Back-off restarting failed container\",\n"
		"    \"nested\": {\"a\": \"}\", \"b\": [1, 2]},\n"
		"    \"note\": \"brace \\\" { in string\"\n"
		"}\n"
		"{\n"
		"    \"message\": \"second\"\n"
		"}\n"
		"  [\n"
		"    {\"msg\": \"in array\"}\n"
		"  ]\n"
		"plain after\n";
	struct ingest *ing = RUN(NULL, "events.json", in, 0);

	is_int(C.n, 4, "pretty: back to back documents, then a line");
	is_str(C.rec[0].message, "Back-off restarting failed container",
	       "pretty: first document decoded");
	ok(strchr(C.rec[0].raw, '\n') != NULL, "pretty: raw keeps the lines");
	is_int(C.rec[0].r.pos.offset, 0, "pretty: first offset");
	is_str(C.rec[1].message, "second", "pretty: second document");
	is_int(C.rec[1].r.pos.offset, strstr(in, "{\n    \"message\": \"second")
		       - in, "pretty: second offset");
	is_str(C.rec[2].message, "in array", "pretty: array document");
	is_str(C.rec[3].message, "plain after", "pretty: line after");
	is_int(ingest_stats(ing)->rejects, 0, "pretty: no rejects");
	ingest_free(ing);
	collect_reset(&C);
}

/* Only a line that is a bracket and blanks opens a document: "{ \t" does,
 * "{}" and "[x" do not. */
static void test_doc_open(void)
{
	static const char in[] =
		" { \t\n"
		"    \"message\": \"blank around the bracket\"\n"
		"}\n"
		"{}\n"
		"[x\n";
	struct ingest *ing = RUN(NULL, "events.json", in, 0);

	is_int(C.n, 3, "doc open: a document, then two lines");
	is_str(C.rec[0].message, "blank around the bracket",
	       "doc open: blanks around the bracket");
	is_str(C.rec[1].raw, "{}", "doc open: {} is a line");
	is_str(C.rec[2].raw, "[x", "doc open: [x is a line");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_unterminated(void)
{
	static const char in[] =
		"{\n"
		"2024-05-01T10:15:13Z stdout F hello\n"
		"{\n"
		"    \"a\": 1,\n"
		"good line\n"
		"{not json at all\n"
		"{\"half\": \n"
		"  {\n"
		"    \"never\": \"closed\"\n";
	struct ingest *ing = RUN(NULL, "mixed.log", in, 0);

	is_int(C.n, 7, "unterminated: nothing swallowed");
	is_str(C.rec[0].message, "{", "unterminated: lone brace is text");
	is_int(C.rec[0].r.format, RT_FMT_TEXT, "unterminated: text format");
	is_str(C.rec[1].message, "hello", "unterminated: CRI line after it");
	is_int(C.rec[1].r.format, RT_FMT_CRI, "unterminated: CRI format");
	is_str(C.rec[2].raw, "{\n    \"a\": 1,",
	       "unterminated: open document ends at a non-JSON line");
	is_str(C.rec[3].message, "good line", "unterminated: good line");
	is_str(C.rec[4].message, "{not json at all", "unterminated: {text");
	is_str(C.rec[5].message, "{\"half\": ", "unterminated: half JSON");
	is_int(C.rec[5].r.format, RT_FMT_TEXT, "unterminated: half JSON text");
	is_str(C.rec[6].raw, "  {\n    \"never\": \"closed\"",
	       "unterminated: open at EOF flushed by finish");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_giant(void)
{
	struct ingest_opts o = { .max_record = 64 };
	char in[600];
	struct ingest *ing;
	size_t n = 0;

	memset(in, 'x', 200);
	n = 200;
	n += (size_t)sprintf(in + n, "\ngood line\n{\n");
	for (int i = 0; i < 10; i++)
		n += (size_t)sprintf(in + n, "    \"k%d\": \"vvvvvvvvvv\",\n", i);
	n += (size_t)sprintf(in + n, "    \"end\": 1\n}\nafter doc\n");
	ing = collect_run(&C, &o, "big.log", in, n, 0);
	is_int(C.n, 3, "giant: line, good line, line after; no document");
	is_int(strlen(C.rec[0].raw), 64, "giant: line cut at max_record");
	ok(C.rec[0].r.flags & RT_REC_TRUNCATED, "giant: line flagged");
	is_str(C.rec[1].message, "good line", "giant: next line decoded");
	is_int(C.rec[1].r.pos.offset, 201, "giant: next line offset");
	is_str(C.rec[2].message, "after doc", "giant: document skipped whole");
	is_int(ingest_stats(ing)->truncated, 1, "giant: the line counted cut");
	is_int(ingest_stats(ing)->oversize, 1,
	       "giant: the document counted over the bound");
	is_int(ingest_stats(ing)->rejects, 1, "giant: and as a reject");
	is_str(ingest_stats(ing)->oversize_at, "big.log:211",
	       "giant: where it began");
	ingest_free(ing);
	collect_reset(&C);

	/* A line of exactly max_record bytes plus CR is not truncated. */
	memset(in, 'y', 64);
	memcpy(in + 64, "\r\nz\n", 4);
	ing = collect_run(&C, &o, "crlf.log", in, 68, 1);
	is_int(C.n, 2, "giant: CRLF at the limit");
	is_int(C.rec[0].r.flags & RT_REC_TRUNCATED, 0, "giant: CR not a cut");
	is_int(strlen(C.rec[0].raw), 64, "giant: CR stripped");
	ingest_free(ing);
	collect_reset(&C);

	/* A line that starts with a digit goes a shorter way: one byte over
	 * the limit is a cut there too. */
	memset(in, '7', 65);
	memcpy(in + 65, "\n", 1);
	ing = collect_run(&C, &o, "digits.log", in, 66, 0);
	is_int(C.n, 1, "giant: digit-led line");
	is_int(strlen(C.rec[0].raw), 64, "giant: digit-led line cut");
	ok(C.rec[0].r.flags & RT_REC_TRUNCATED, "giant: digit-led line flagged");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_junk(void)
{
	static const char in[] =
		"good one\n"
		"bad \xff\xfe utf8\n"
		"nul\0in the middle\n"
		"\0\0\0\0\0\0\n"
		"caf\xc3\xa9 ok \xe2\x82\xac\n"
		"cut \xe2\x82\n"
		"good two\n";
	char *verbose = NULL;
	size_t vlen = 0;
	FILE *vf = open_memstream(&verbose, &vlen);
	struct ingest_opts o = { .verbose = vf };
	struct ingest *ing = RUN(&o, "junk.log", in, 0);

	fclose(vf);
	is_int(C.n, 6, "junk: all but the pure binary line are records");
	is_str(C.rec[0].message, "good one", "junk: before");
	is_str(C.rec[1].message, "bad \xef\xbf\xbd\xef\xbf\xbd utf8",
	       "junk: invalid bytes replaced by U+FFFD");
	ok(C.rec[1].r.flags & RT_REC_BAD_UTF8, "junk: bad utf8 flagged");
	is_str(C.rec[2].message, "nul\xef\xbf\xbdin the middle",
	       "junk: NUL replaced");
	ok(C.rec[2].r.flags & RT_REC_BINARY, "junk: binary flagged");
	is_str(C.rec[3].message, "caf\xc3\xa9 ok \xe2\x82\xac",
	       "junk: valid UTF-8 kept");
	is_int(C.rec[3].r.flags, 0, "junk: valid UTF-8 not flagged");
	is_str(C.rec[4].message, "cut \xef\xbf\xbd\xef\xbf\xbd",
	       "junk: incomplete sequence replaced");
	is_str(C.rec[5].message, "good two", "junk: after");
	is_int(ingest_stats(ing)->bad_utf8, 2, "junk: bad utf8 counted");
	is_int(ingest_stats(ing)->binary, 2, "junk: binary counted");
	is_int(ingest_stats(ing)->rejects, 1, "junk: binary line rejected");
	ok(verbose && strstr(verbose, "reject: junk.log:39: binary data"),
	   "junk: reject printed with source and offset");
	free(verbose);
	ingest_free(ing);
	collect_reset(&C);
}

static void test_skip_and_finish(void)
{
	static const char in[] = "\n   \n\r\nfirst\n\nlast without newline";
	struct ingest *ing = RUN(NULL, "-", in, 0);

	is_int(C.n, 2, "finish: two records");
	is_str(C.rec[1].message, "last without newline",
	       "finish: last line flushed");
	is_int(ingest_stats(ing)->skipped, 4, "finish: empty lines skipped");
	is_int(C.rec[0].r.pos.offset, 7, "finish: offset after empties");
	ingest_free(ing);
	collect_reset(&C);
}

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_tail_headers(void)
{
	static const char in[] =
		"==> /var/log/containers/web-7d9c8b6f5-x2k4p_shop_web-" HEX64 ".log <==\n"
		"2024-05-01T10:15:13Z stderr P part one \n"
		"2024-05-01T10:15:13Z stdout F from web\n"
		"\n"
		"==> /var/log/containers/db-0_data_postgres-exporter-" HEX64 ".log <==\n"
		"2024-05-01T10:15:14Z stderr F from db\n"
		"\n"
		"==> /var/log/containers/web-7d9c8b6f5-x2k4p_shop_web-" HEX64 ".log <==\n"
		"2024-05-01T10:15:15Z stderr F and two\n"
		"==> /tmp/other.log <==\n"
		"plain\n";
	struct ingest *ing = RUN(NULL, "-", in, 0);

	is_int(C.n, 4, "tail: headers are not records");
	is_str(C.rec[0].pod, "web-7d9c8b6f5-x2k4p", "tail: pod from header");
	is_str(C.rec[0].ns, "shop", "tail: namespace from header");
	is_str(C.rec[0].container, "web", "tail: container from header");
	is_str(C.rec[1].pod, "db-0", "tail: second header");
	is_str(C.rec[1].container, "postgres-exporter",
	       "tail: container with dashes");
	is_str(C.rec[2].message, "part one and two",
	       "tail: partial joined across other files' lines");
	is_str(C.rec[2].pod, "web-7d9c8b6f5-x2k4p", "tail: joined keeps its file");
	is_str(C.rec[3].pod, "", "tail: unknown file clears the context");
	is_int(ingest_stats(ing)->skipped, 6, "tail: headers and blanks skipped");
	ingest_free(ing);
	collect_reset(&C);
}

static void test_paths(void)
{
	char trunc[300];
	size_t n;
	struct { const char *path, *pod, *ns, *ctr; } cases[] = {
		{ "/var/log/containers/web-7d9c8b6f5-x2k4p_shop_web-" HEX64 ".log",
		  "web-7d9c8b6f5-x2k4p", "shop", "web" },
		{ "/var/log/containers/a_b_c-d-e-abc.log", "a", "b", "c-d-e" },
		{ "web-1_shop_side-car-" HEX64 ".log", "web-1", "shop", "side-car" },
		{ "/var/log/pods/shop_web-7d9c8b6f5-x2k4p_3f0c1d2e/web/0.log",
		  "web-7d9c8b6f5-x2k4p", "shop", "web" },
		{ "/var/log/pods/shop_db-0_uid/postgres/3.log.20240501-101513",
		  "db-0", "shop", "postgres" },
		{ "/var/log/app.log", "", "", "" },
		{ "my_app_log-2024.log", "", "", "" },
		{ "/var/log/pods/x/0.log", "", "", "" },
		{ "-", "", "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].path;

		ingest_free(collect_run(&C, NULL, p, "line\n", 5, 0));
		is_str(C.rec[0].pod, cases[i].pod, "path %s: pod", p);
		is_str(C.rec[0].ns, cases[i].ns, "path %s: namespace", p);
		is_str(C.rec[0].container, cases[i].ctr, "path %s: container", p);
		collect_reset(&C);
	}
	/* The kubelet cuts names to 251 bytes: a long pod name, short id. */
	n = (size_t)sprintf(trunc, "/var/log/containers/");
	{
		size_t base = n;

		memset(trunc + n, 'p', 200);
		n += 200;
		n += (size_t)sprintf(trunc + n, "_shop_web-" HEX64);
		n = base + 251;
		memcpy(trunc + n, ".log", 5);
	}
	{
		struct ingest *ing = collect_run(&C, NULL, trunc, "x\n", 2, 0);

		is_int(strlen(C.rec[0].pod), 200, "path: truncated id, pod");
		is_str(C.rec[0].container, "web", "path: truncated id, container");
		ingest_free(ing);
		collect_reset(&C);
	}
	/* Same name elsewhere, not cut and id short: not trusted. */
	{
		struct ingest *ing = collect_run(&C, NULL, "/tmp/a_b_c-12.log",
						 "x\n", 2, 0);

		is_str(C.rec[0].pod, "", "path: short id outside containers/");
		ingest_free(ing);
		collect_reset(&C);
	}
}

/* Everything at once vs byte by byte vs random chunks. */
static void test_chunking(void)
{
	static const char in[] =
		"==> /var/log/containers/web-1_shop_web-" HEX64 ".log <==\n"
		"2024-05-01T10:15:13.5Z stderr P panic: runtime error: \n"
		"2024-05-01T10:15:13.5Z stdout F interleaved\n"
		"2024-05-01T10:15:13.5Z stderr F index out of range\r\n"
		"{\"log\":\"long \",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:13Z\"}\n"
		"{\"log\":\"line\\n\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:14Z\"}\n"
		"{\n  \"msg\": \"pretty\",\n  \"level\": \"warn\"\n}\n"
		"bad \xff utf8 and \x01 control\n"
		"{\n"
		"not json\n"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
		"\n"
		"2024-05-01T10:15:15Z stdout F \n"
		"tail";
	struct ingest_opts o = { .max_record = 48 };
	char *once[COLLECT_MAX];
	int n_once, same = 1;
	long chunks[] = { 1, 2, 3, 7, 64, -1 };

	ingest_free(RUN(&o, "c.log", in, 0));
	n_once = C.n;
	for (int i = 0; i < C.n; i++)
		once[i] = strdup(C.rec[i].line);
	collect_reset(&C);
	ok(n_once >= 10, "chunking: reference run has %d records", n_once);
	for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		ingest_free(RUN(&o, "c.log", in, chunks[k]));
		same = C.n == n_once;
		for (int i = 0; same && i < C.n; i++)
			if (strcmp(C.rec[i].line, once[i]) != 0) {
				same = 0;
				printf("# chunk %ld record %d:\n#  %s\n#  %s\n",
				       chunks[k], i, once[i], C.rec[i].line);
			}
		ok(same, "chunking: chunks of %ld equal one feed", chunks[k]);
		collect_reset(&C);
	}
	for (int i = 0; i < n_once; i++)
		free(once[i]);
}

/* Random streams of framing-relevant fragments: chunking never matters
 * and every byte offset a record names starts a line. */
static void test_random_chunks(void)
{
	static const char *const frag[] = {
		"{", "}", "[", "]", "\"", "\\", "\n", "  ", "\t", "x", "\r\n",
		"2024-05-01T10:15:13Z stdout P ", "2024-05-01T10:15:13Z stderr F ",
		"{\"log\":\"a\",\"stream\":\"stdout\",\"time\":\"2024-05-01T10:15:13Z\"}",
		"{\"msg\":\"m\"}", "==> /var/log/containers/a_b_c-" HEX64 ".log <==",
		"\xff", "\xe2\x82", "\0", "\x01", "msg ",
	};
	struct ingest_opts o = { .max_record = 40 };
	unsigned seed = 7;
	char buf[2048];
	int bad = 0;

	for (int round = 0; round < 60; round++) {
		char *once[COLLECT_MAX];
		int n_once;
		size_t n = 0;

		while (n < sizeof(buf) - 200) {
			const char *f;
			size_t fl;

			seed = seed * 1103515245u + 12345u;
			f = frag[(seed >> 16) % (sizeof(frag) / sizeof(frag[0]))];
			fl = strcmp(f, "") == 0 ? 1 : strlen(f);
			if (f[0] == '\0')
				fl = 1;
			memcpy(buf + n, f, fl);
			n += fl;
		}
		ingest_free(collect_run(&C, &o, "r.log", buf, n, 0));
		n_once = C.n;
		for (int i = 0; i < C.n; i++) {
			uint64_t off = C.rec[i].r.pos.offset;

			once[i] = strdup(C.rec[i].line);
			/* or a streamed List item's bracket */
			if (off >= n || (off > 0 && buf[off - 1] != '\n' &&
					 buf[off] != '{' && buf[off] != '['))
				bad++;
		}
		collect_reset(&C);
		ingest_free(collect_run(&C, &o, "r.log", buf, n,
					round % 2 ? 1 : -1));
		if (C.n != n_once)
			bad++;
		for (int i = 0; i < C.n && i < n_once; i++)
			if (strcmp(C.rec[i].line, once[i]) != 0)
				bad++;
		for (int i = 0; i < n_once; i++)
			free(once[i]);
		collect_reset(&C);
	}
	is_int(bad, 0, "random: chunking invariant, offsets at line starts");
}

static void test_force(void)
{
	static const char in[] =
		"{\"msg\":\"json as text\"}\n"
		"2024-05-01T10:15:13Z stdout F cri line\n";
	char *verbose = NULL;
	size_t vlen = 0;
	FILE *vf;
	struct ingest_opts o = { .force = RT_FMT_TEXT };
	struct ingest *ing = RUN(&o, "f.log", in, 0);

	is_int(C.n, 2, "force text: two records");
	is_int(C.rec[0].r.format, RT_FMT_TEXT, "force text: JSON line is text");
	is_str(C.rec[0].message, "{\"msg\":\"json as text\"}",
	       "force text: message is the line");
	is_int(C.rec[1].r.format, RT_FMT_TEXT, "force text: CRI line is text");
	ingest_free(ing);
	collect_reset(&C);

	vf = open_memstream(&verbose, &vlen);
	o = (struct ingest_opts){ .force = RT_FMT_CRI, .verbose = vf };
	ing = RUN(&o, "f.log", in, 0);
	fclose(vf);
	is_int(C.n, 1, "force cri: one record");
	is_int(C.rec[0].r.format, RT_FMT_CRI, "force cri: CRI decoded");
	is_int(ingest_stats(ing)->rejects, 1, "force cri: JSON line rejected");
	ok(verbose && strstr(verbose, "reject: f.log:0: not a CRI log line"),
	   "force cri: reason printed");
	free(verbose);
	ingest_free(ing);
	collect_reset(&C);
}

static void test_message(void)
{
	static const char pretty[] = "{\n  \"msg\": \"from kafka\"\n}\n";
	static const char text[] = "plain kafka value\n";
	static const char timed[] =
		"{\"ts\":\"2024-05-01T10:15:13Z\",\"msg\":\"x\"}";
	struct ingest *ing = ingest_new(NULL);
	struct rt_pos pos = { "events", 0, 3, 42 };
	struct rt_arena a;

	rt_arena_init(&a);
	ingest_decode_message(ing, pretty, sizeof(pretty) - 1, NULL, 0,
			      1714558513000000000, &pos, &a, collect_cb, &C);
	ingest_decode_message(ing, text, sizeof(text) - 1, "k", 1,
			      1714558514000000000, &pos, &a, collect_cb, &C);
	ingest_decode_message(ing, timed, sizeof(timed) - 1, NULL, 0,
			      1, &pos, &a, collect_cb, &C);
	is_int(C.n, 3, "message: three records");
	is_str(C.rec[0].message, "from kafka", "message: pretty value decoded");
	is_int(C.rec[0].r.ts_ns, 1714558513000000000,
	       "message: Kafka time when the payload has none");
	is_int(C.rec[0].r.pos.partition, 3, "message: partition kept");
	is_int(C.rec[0].r.pos.kafka_offset, 42, "message: offset kept");
	is_str(C.rec[1].message, "plain kafka value", "message: text value");
	is_int(C.rec[2].r.ts_ns, 1714558513000000000,
	       "message: payload time wins");
	rt_arena_release(&a);
	ingest_free(ing);
	collect_reset(&C);
}

static void test_stop(void)
{
	static const char in[] = "a\nb\nc\n";
	struct ingest *ing = ingest_new(NULL);
	struct rt_arena a;
	int rc;

	rt_arena_init(&a);
	C.stop_at = 2;
	rc = ingest_feed(ing, "s", in, sizeof(in) - 1, &a, collect_cb, &C);
	is_int(rc, 7, "stop: callback's return comes back");
	is_int(C.n, 2, "stop: no record after the stop");
	rt_arena_release(&a);
	ingest_free(ing);
	collect_reset(&C);
}

int main(void)
{
	test_ndjson();
	test_pretty();
	test_doc_open();
	test_unterminated();
	test_giant();
	test_junk();
	test_skip_and_finish();
	test_tail_headers();
	test_paths();
	test_chunking();
	test_random_chunks();
	test_force();
	test_message();
	test_stop();
	return done_testing();
}
