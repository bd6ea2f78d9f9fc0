/*
 * The JSON payload of a log line (docs/formats.md §2.6), read by
 * json_scan.h: what is decoded, what stays a text line, and that both the
 * ingest's own payload document and ingest_undefer's (a js_doc of the
 * call's own) read alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ingest/frame.h"
#include "tap.h"
#include "ingest_collect.h"

static struct collect C;

/* One CRI line with content payload: its record's message and type. */
static void decode(const char *payload, struct ingest_opts *o, char *msg,
		   size_t msgcap, char *type, size_t typecap)
{
	char line[8192];
	int n = snprintf(line, sizeof(line),
			 "2024-05-01T10:15:13Z stdout F %s\n", payload);

	collect_reset(&C);
	ingest_free(collect_run(&C, o, "-", line, (size_t)n, 0));
	snprintf(msg, msgcap, "%s", C.n == 1 ? C.rec[0].message : "(no record)");
	snprintf(type, typecap, "%s", C.n == 1 ? C.rec[0].type : "");
}

#define CHECK(payload, want_msg, want_type, name) do { \
	char m_[4096], t_[64]; \
	decode(payload, NULL, m_, sizeof(m_), t_, sizeof(t_)); \
	is_str(m_, want_msg, "%s: message", name); \
	is_str(t_, want_type, "%s: type", name); \
} while (0)

/* Kept whole: a text line whose message is the payload itself. */
#define TEXT(payload, name) CHECK(payload, payload, "", name)

static void test_decoded(void)
{
	CHECK("{\"level\":\"error\",\"msg\":\"db down\",\"error\":\"refused\"}",
	      "db down: refused", "error", "zap");
	CHECK("{\"level\":50,\"msg\":\"x\",\"err\":{\"type\":\"Error\","
	      "\"message\":\"boom\"}}", "x: Error: boom", "error",
	      "pino: numeric level, error object");
	CHECK("{\"msg\":\"caf\\u00e9 \\ud83d\\udd25\"}",
	      "caf\xc3\xa9 \xf0\x9f\x94\xa5", "", "\\u escapes, a surrogate pair");
	CHECK("{\"msg\":\"with a tail\"} trailing words", "with a tail", "",
	      "the leading object of a text with a tail");
	CHECK("{\"msg\":\"first\"}{\"msg\":\"second\"}", "first", "",
	      "the first of two objects");
	CHECK("{\"msg\":\"tab\traw\"}", "tab\traw", "",
	      "a raw control byte in a string, as cJSON reads it");
}

/* What changed from the member scanner on strict JSON: one rule with the
 * JSON records' (js_pick: a member's first occurrence, levels by rank). */
static void test_strict_changes(void)
{
	CHECK("{\"m\\u0073g\":\"escaped key\"}", "escaped key", "",
	      "a name with an escape is read decoded");
	CHECK("{\"severity\":\"WARNING\",\"level\":\"info\",\"msg\":\"x\"}",
	      "x", "info", "level before severity, whatever the order");
	CHECK("{\"level\":\"\",\"severity\":\"ERROR\",\"msg\":\"x\"}",
	      "x", "ERROR", "an empty level gives way to the next key");
	CHECK("{\"msg\":\"x\",\"error\":\"first\",\"error\":\"second\"}",
	      "x: first", "", "a repeated cause: its first");
	CHECK("{\"msg\":\"\\n\",\"level\":\"info\"}",
	      "{\"msg\":\"\\n\",\"level\":\"info\"}", "info",
	      "a message of line ends only: the payload stays the message");
}

static void test_kept_as_text(void)
{
	char deep[2100];
	size_t at = 0;

	TEXT("{\"level\":\"error\",\"msg\":\"trailing comma\",}", "trailing comma");
	TEXT("{\"level\":error,\"msg\":\"bare word\"}", "bare word");
	TEXT("{\"a\":,\"msg\":\"empty value\"}", "empty value");
	TEXT("{\"data\":[1,2},\"msg\":\"mismatched\"}", "mismatched brackets");
	TEXT("{\"msg\":\"bad \\q escape\"}", "an escape JSON has not");
	TEXT("{\"msg\":\"lone \\ud800 surrogate\"}", "a lone surrogate");
	TEXT("{\"msg\":\"bad \\u12G4 hex\"}", "a \\u escape with no hex digits");
	TEXT("{\"msg\":\"nul \\u0000 inside\"}", "a \\u0000");
	TEXT("{\"level\":0x32,\"msg\":\"hex\"}", "a hex number");
	TEXT("{\"n\":NaN,\"msg\":\"nan\"}", "NaN");
	TEXT("{\"level\":\"error\",\"msg\":\"cut", "cut in a string");
	TEXT("{'msg':'single quoted'}", "single quotes");
	at += (size_t)snprintf(deep, sizeof(deep), "{\"msg\":\"deep\",\"d\":");
	for (int i = 0; i < 1000; i++)
		deep[at++] = '[';
	for (int i = 0; i < 1000; i++)
		deep[at++] = ']';
	deep[at++] = '}';
	deep[at] = '\0';
	TEXT(deep, "nested past json_scan.h's depth");
	/* An escaped backslash before "u" is text, not an escape. */
	CHECK("{\"msg\":\"C:\\\\u12G4\"}", "C:\\u12G4", "",
	      "\\\\u is a backslash, then text");
	/* A bad escape in the tail is not the object's. */
	CHECK("{\"msg\":\"x\"} \\u12G4", "x", "", "a \\u in the tail");
}

/* The same payloads deferred, then undeferred with no ingest at hand. */
static int undefer_cb(void *ctx, struct rt_record *rec)
{
	struct collect *c = ctx;
	struct rt_arena a;

	rt_arena_init(&a);
	ingest_undefer(rec, &a);
	collect_cb(c, rec);
	rt_arena_release(&a);
	return 0;
}

static void test_undefer(void)
{
	static const char text[] =
		"2024-05-01T10:15:13Z stdout F {\"level\":\"warn\",\"msg\":\"plain\"}\n"
		"2024-05-01T10:15:14Z stdout F {\"level\":warn,\"msg\":\"bare\"}\n"
		"2024-05-01T10:15:15Z stdout F {\"msg\":\"tail\"} and more\n";
	struct ingest_opts o = { .defer_payload = true };
	struct ingest *in = ingest_new(&o);
	struct rt_arena a;

	collect_reset(&C);
	rt_arena_init(&a);
	ingest_feed(in, "x.log", text, sizeof(text) - 1, &a, undefer_cb, &C);
	ingest_finish(in, "x.log", &a, undefer_cb, &C);
	is_int(C.n, 3, "undefer: three records");
	is_str(C.rec[0].message, "plain", "undefer: decoded");
	is_str(C.rec[0].type, "warn", "undefer: its level");
	is_str(C.rec[1].message, "{\"level\":warn,\"msg\":\"bare\"}",
	       "undefer: not JSON, kept whole");
	is_str(C.rec[2].message, "tail", "undefer: a tail after the object");
	ingest_free(in);
	rt_arena_release(&a);
}

/* js_str_cut: a string json_scan.h reads only up to a \u escape that is
 * not one. */
static void test_str_cut(void)
{
	static const struct {
		const char *s;
		bool cut;
	} cases[] = {
		{ "\"a\\u00e9\"", false }, { "\"a\\uD83D\\uDD25\"", false },
		{ "\"a\\u12G4\"", true }, { "\"\\u00e9 then \\u12G4\"", true },
		{ "\"a\\\\u12G4\"", false }, { "\"a\\\\\\u12G4\"", true },
		{ "\"no escape\"", false }, { "\"\\n\\t\\\"\"", false },
	};
	struct js_doc doc = { 0 };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = js_parse(&doc, cases[i].s, strlen(cases[i].s));

		is_int(rc, 0, "%s parses", cases[i].s);
		is_int(!rc && js_str_cut(&doc.node[0]), cases[i].cut,
		       "js_str_cut(%s)", cases[i].s);
	}
	js_doc_release(&doc);
}

/* Numbers read by json_scan.h's fast path for decimals are strtod's, bit
 * for bit: random ones of every length and point position, and the edges
 * of the path (2^53, 22 places, a sign, a zero). */
static bool same_as_strtod(const char *num)
{
	struct js_doc doc = { 0 };
	double want = strtod(num, NULL);
	bool same = js_parse(&doc, num, strlen(num)) == 0 &&
		    doc.node[0].type == JS_NUM &&
		    !memcmp(&doc.node[0].num, &want, sizeof(want));

	js_doc_release(&doc);
	return same;
}

static void test_decimals(void)
{
	static const char *const edges[] = {
		"0.1", "-0.0", "0.0000000000000000000001", "9007199254740992.0",
		"900719925474099.3", "9007199254740993.0", "1714558513.123456",
		"1714558513.1234567", "-1.5", "00.5", "12345678901234567.89",
		"0.30000000000000004", "1797693134862315.7",
	};
	unsigned seed = 7, bad = 0;
	char num[40];

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		ok(same_as_strtod(edges[i]), "%s as strtod reads it", edges[i]);
	for (int t = 0; t < 20000; t++) {
		int len, dot, at = 0;

		seed = seed * 1103515245u + 12345u;
		len = 2 + (int)(seed >> 16) % 19;
		dot = 1 + (int)(seed >> 8) % (len - 1);
		if (seed & 1)
			num[at++] = '-';
		for (int d = 0; d < len; d++) {
			seed = seed * 1103515245u + 12345u;
			if (d == dot)
				num[at++] = '.';
			num[at++] = (char)('0' + (seed >> 16) % 10);
		}
		num[at] = '\0';
		bad += !same_as_strtod(num);
	}
	is_int(bad, 0, "20000 random decimals as strtod reads them");
}

int main(void)
{
	test_decoded();
	test_strict_changes();
	test_kept_as_text();
	test_undefer();
	test_str_cut();
	test_decimals();
	collect_reset(&C);
	return done_testing();
}
