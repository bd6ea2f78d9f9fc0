/*
 * test_ingest_jsprint.c: js_print (json_print.c) against
 * cJSON_PrintUnformatted, the printer whose bytes an Event item of a List
 * kept as its raw text: every value json_scan.h reads, printed from its
 * nodes, must be what cJSON prints from its own tree of the same text.
 * Hand-picked corners, then generated values (numbers of every shape,
 * strings with every escape, raw control and UTF-8 bytes, names, nesting).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_same.h"
#include "tap.h"

static struct rt_arena arena;
static struct js_doc doc;

/* NULL when cJSON does not read text; else what it prints (free it). */
static char *cjson_print(const char *text, size_t n)
{
	cJSON *c = cJSON_ParseWithLength(text, n);
	char *s = c ? cJSON_PrintUnformatted(c) : NULL;

	cJSON_Delete(c);
	return s;
}

/* Whether js_print of text is cJSON's print; true when js refuses it. */
static bool same_print(const char *text, size_t n, bool *read)
{
	char *want;
	struct rt_str got;
	bool same;

	*read = js_parse(&doc, text, n) == 0;
	if (!*read)
		return true;
	want = cjson_print(text, n);
	got = js_print(&arena, &doc, &doc.node[0]);
	same = want && got.p && strlen(want) == got.n &&
	       memcmp(want, got.p, got.n) == 0;
	if (!same)
		printf("# %.*s\n#  cJSON: %s\n#  js:    %.*s\n", (int)n, text,
		       want ? want : "(none)", (int)got.n,
		       got.p ? got.p : "");
	free(want);
	rt_arena_reset(&arena);
	return same;
}

static void corners(void)
{
	static const char *const cases[] = {
		"{}", "[]", "[[],{},[{}]]", "null", "true", "false", "0",
		"-0", "-0.0", "1", "-1", "2147483647", "2147483648",
		"-2147483648", "-2147483649", "3000000000", "1.5", "0.1",
		"1e300", "1e999", "-1e999", "123456789012345678",
		"9007199254740993", "1.7976931348623157e308", "5e-324",
		"0.30000000000000004", "1E2", "1e+2", "100e-2", "01", "-01.5",
		"\"\"", "\"a\\\"b\\\\c\\/d\"", "\"\\b\\f\\n\\r\\t\"",
		"\"\\u0001\\u001f\\u007f\\u0080\"", "\"\\u00e9\\u2603\"",
		"\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\ude00x\"",
		"\"\\u00zzab\"", "\"a\\u12\"", "\"caf\xc3\xa9 \xff\"",
		"\"tab\there\"", "\"\x01\x1f\"",
		"{\"a\":1,\"a\":2}", "{\"\":\"\"}", "{\"k\\u00e9y\":[1,\"x\"]}",
		"{\"q\\\"\\n\":null}", " { \"a\" : [ 1 , 2 ] } ",
		("{\"kind\":\"Event\",\"count\":3,\"lastTimestamp\":"
		 "\"2026-11-01T10:00:00Z\",\"message\":\"Back-off \\\"x\\\"\"}"),
	};
	int bad = 0, read = 0;
	bool r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!same_print(cases[i], strlen(cases[i]), &r))
			bad++;
		read += r;
	}
	is_int(bad, 0, "corners: js_print is cJSON_PrintUnformatted");
	ok(read >= 45, "corners: nearly all read (%d)", read);
	/* a raw NUL in a string: cJSON's C string ends there */
	ok(same_print("[\"a\0b\",\"c\"]", 11, &r) && r,
	   "corners: a raw NUL cuts the string as cJSON's C string");
}

static unsigned rnd_state = 2026;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

static void gen_number(struct dump *t)
{
	static const char *const parts[] = {
		"0", "1", "7", "42", "-", "-1", "999999999", "2147483647",
		"4294967296", "123456789012345678901234567890", ".5", ".0",
		".25", ".1", ".333333333333333333", "e", "E", "e+", "e-", "1",
		"308", "309", "-324", "17", "0000",
	};
	char tmp[64];

	if (rnd(4) == 0) {      /* a double's own digits */
		double d = (double)rnd(1u << 30) / (double)(1 + rnd(1000)) *
			   (rnd(2) ? 1e-10 : 1e10);

		snprintf(tmp, sizeof(tmp), rnd(2) ? "%.17g" : "%.6g",
			 rnd(2) ? d : -d);
		put(t, tmp, strlen(tmp));
		return;
	}
	for (unsigned k = 1 + rnd(4); k; k--) {
		/* the last part a digit run, so most are numbers */
		const char *p = parts[k == 1 ? rnd(4) :
				      rnd(sizeof(parts) / sizeof(parts[0]))];

		put(t, p, strlen(p));
	}
}

static void gen_string(struct dump *t)
{
	static const char *const parts[] = {
		"a", "Z", " ", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n",
		"\\r", "\\t", "\\u0041", "\\u00e9", "\\u0001", "\\u001F",
		"\\u007f", "\\u2603", "\\ud83d\\ude00", "\\ud83d", "\\udc00",
		"\\u00zz", "\xc3\xa9", "\xe2\x98\x83", "\xff", "\x01", "\t",
		"\x1f", "\x7f", "%", "{", "]",
	};

	put(t, "\"", 1);
	for (unsigned k = rnd(6); k; k--) {
		const char *p = parts[rnd(sizeof(parts) / sizeof(parts[0]))];

		put(t, p, strlen(p));
	}
	put(t, "\"", 1);
}

static void gen_value(struct dump *t, int depth)
{
	unsigned kind = depth > 4 ? rnd(5) : rnd(7);

	switch (kind) {
	case 0: gen_number(t); break;
	case 1: case 2: gen_string(t); break;
	case 3: put(t, rnd(2) ? "true" : "null", 4); break;
	case 4: put(t, "false", 5); break;
	default:
		put(t, kind == 5 ? "[" : "{", 1);
		for (unsigned k = rnd(5), i = 0; i < k; i++) {
			if (i && rnd(8))
				put(t, ",", 1);
			else if (i)
				put(t, " , ", 3);
			if (kind == 6) {
				gen_string(t);
				put(t, ":", 1);
			}
			gen_value(t, depth + 1);
		}
		put(t, kind == 5 ? "]" : "}", 1);
	}
}

static void generated(void)
{
	struct dump t = { 0 };
	int bad = 0, read = 0;
	bool r;

	for (int i = 0; i < 30000; i++) {
		t.n = 0;
		gen_value(&t, 0);
		if (!same_print(t.p, t.n, &r) && ++bad > 5)
			break;
		read += r;
	}
	is_int(bad, 0, "generated: js_print is cJSON_PrintUnformatted");
	ok(read > 10000, "generated: most values read (%d)", read);
	free(t.p);
}

int main(void)
{
	rt_arena_init(&arena);
	corners();
	generated();
	js_doc_release(&doc);
	rt_arena_release(&arena);
	return done_testing();
}
