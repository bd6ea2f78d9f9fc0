/*
 * test_ingest_fast.c: every JSON frame is read by json_scan.h; Events are
 * still read two ways, by fast_event.c and, in Lists and arrays, by
 * dec_kube.c from cJSON, and both must give the same records. Generated
 * lines (every optional member, escapes, odd numbers, duplicates,
 * envelopes, exporter events, docker and log records, broken JSON) go
 * through two ingests, one sending Events to dec_kube.c, and every record
 * field and counter is compared. Also: the scanner reads what cJSON reads
 * and refuses what it refuses, and text cleaning (SSE2 in text.c) flags
 * exactly the bytes it should.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../ingest/frame.h"
#include "json_same.h"
#include "tap.h"

static void add(struct dump *t, const char *s)
{
	put(t, s, strlen(s));
}

static void scanner(void)
{
	static const struct { const char *json; bool ok; } cases[] = {
		{ "{}", true }, { " { } ", true }, { "[]", true },
		{ "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}", true },
		{ "{\"a\":01}", true }, { "{\"a\":-0.5e+3}", true },
		{ "{\"a\":\"x\\u0041\"}", true }, { "{\"a\":\"x\\q\"}", false },
		{ "{\"a\\n\":1}", true }, { "{\"a\":1,}", false },
		{ "{\"a\":1", false }, { "{\"a\":\"x}", false },
		{ "{\"a\":tru}", false }, { "{\"a\":nul}", false },
		{ "{\"a\":-}", false }, { "{\"a\":.5}", false },
		{ "{\"a\":1.2.3}", false }, { "{\"a\":+1}", false },
		{ "{a:1}", false }, { "{\"a\" 1}", false }, { "{} x", false },
		{ "{\"a\":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}", false },
		{ "{\"a\":\"tab\there\"}", true }, { "{\"\":2}", true },
		{ "{\"a\\\"b\":1}", true }, { "{\"a\\\\\":1}", true },
		{ "{\"abc", false }, { "{\"a\"", false }, { "{\"a\":", false },
		{ "[\"a\",[\"b\",{}],\"c\\\"\"]", true },
		{ " { \"a\" : \"b\" , \"c\" : [ \"d\" , 1 ] , \"e\":{ } } ",
		  true },
		{ "{\"a\": \"b\", \"c\": [1, \"d\"]}", true },
		{ "{\"a\":\"b\" ,\"c\":\t1 ,\n\"d\" :2}", true },
		{ "{\"a\":\"b\" \"c\":1}", false }, { "[1 2]", false },
		{ "[\"a\":1]", false }, { "{\"a\":1]", false },
		{ "[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]", true },
		{ "[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct js_doc *doc = calloc(1, sizeof(*doc));
		const char *j = cases[i].json;
		int rc = js_parse(doc, j, strlen(j));
		cJSON *c = cJSON_ParseWithLengthOpts(j, strlen(j) + 1, NULL, 1);

		is_int(rc == 0, cases[i].ok, "js_parse %s", j);
		if (rc == 0)
			ok(c != NULL, "cJSON agrees it is JSON: %s", j);
		cJSON_Delete(c);
		js_doc_release(doc);
	free(doc);
	}
	{
		struct js_doc *doc = calloc(1, sizeof(*doc));
		const char *j = "{\"n\":[0.1,1e-7,123456789012345678,-2.5E3,"
				"007,1e999]}";
		cJSON *c = cJSON_Parse(j);
		const cJSON *it = cJSON_GetObjectItem(c, "n")->child;
		unsigned same = 0, k = 0;

		js_parse(doc, j, strlen(j));
		for (uint32_t i = js_get(doc, &doc->node[0], "n")->child; i && it;
		     i = doc->node[i].next, it = it->next, k++)
			same += doc->node[i].num == it->valuedouble ||
				(isinf(doc->node[i].num) && isinf(it->valuedouble));
		is_int(same, 6, "numbers read as cJSON reads them (%u)", k);
		cJSON_Delete(c);
		js_doc_release(doc);
	free(doc);
	}
	{
		struct js_doc *doc = calloc(1, sizeof(*doc));
		struct dump big = { 0 };

		/* More values than the nodes first made: the array grows. */
		add(&big, "[0");
		for (int i = 0; i < 5000; i++)
			add(&big, ",{\"k\":1}");
		add(&big, "]");
		is_int(js_parse(doc, big.p, big.n), 0,
		       "10,001 values: parsed");
		is_int(doc->count, 10002, "a node each");
		is_int(doc->node[doc->node[0].child].next ?
		       js_get(doc, &doc->node[doc->node[doc->node[0].child]
				.next], "k")->type : 0, JS_NUM,
		       "nodes made before the array grew still read");
		free(big.p);
		js_doc_release(doc);
	free(doc);
	}
}

/*
 * What only cJSON read before: \u escapes (surrogate pairs, bytes that are
 * no hex digit, which cJSON reads as a NUL ending its string), escaped
 * names, numbers at cJSON's 63-byte cut, 1,000 nested values. The scanner
 * takes what cJSON takes and reads the same from it; \u0000 alone it
 * refuses, for the caller to reject.
 */
static void as_cjson_reads(void)
{
	static const char *const cases[] = {
		"{\"a\":\"\\u0041\"}", "{\"a\":\"caf\\u00e9 \\u20ac\"}",
		"{\"a\":\"\\ud83d\\ude00!\"}", "{\"a\":\"\\uD83D\\uDE00\"}",
		"{\"a\":\"\\ud83d\"}", "{\"a\":\"\\ude00\"}",
		"{\"a\":\"\\ud83dx\\ude00\"}", "{\"a\":\"\\ud83d\\u0041\"}",
		"{\"a\":\"\\ud83d\\ud83d\"}", "{\"a\":\"\\u12\"}",
		"{\"a\":\"\\u123\"}", "{\"a\":\"x\\uZZZZy\"}",
		"{\"a\":\"x\\u00G0y\"}", "{\"a\":\"\\u1\\\"23\"}",
		"{\"a\\u0041\":1,\"b\\n\":\"\\u0062\"}",
		"{\"a\\uZZZZb\":1}", "{\"\\u00e9t\\u00e9\":[\"\\/\\b\\f\"]}",
		"{\"a\":\"\\u0000\"}", "[\"\\\\u0000\"]",
		"[\"\\ud800\\udc00\\udbff\\udfff\"]",
		"[\"\\u007f\\u0080\\u07ff\\u0800\\uffff\"]",
		"{\"a\":\"\\u\"}", "{\"a\":\"\\ux123\"}",
		/* Found by fuzz_json_scan: digits that swallow the backslash
		 * of an escaped quote, and a \u0000 right after them. */
		"{\"a\":\"x \\u20g\\\" y\\n\",\"b\":1}",
		"{\"a\":\"\\u1\\u0000\"}",
	};
	struct js_doc *doc = calloc(1, sizeof(*doc));
	unsigned wrong = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *j = cases[i];
		cJSON *c = cJSON_ParseWithLengthOpts(j, strlen(j) + 1, NULL, 1);
		int rc = js_parse(doc, j, strlen(j));
		bool nul = js_has_nul_escape(j, strlen(j));

		if (nul ? rc != RT_EPARSE : (rc == 0) != (c != NULL) ||
		    (c && !same_tree(doc, 0, c))) {
			printf("# read otherwise than cJSON: %s\n", j);
			wrong++;
		}
		cJSON_Delete(c);
	}
	is_int(wrong, 0, "escapes read as cJSON reads them");

	/* Numbers around the 64 bytes cJSON once copied them into (Debian's
	 * takes any length), and nesting around its limit of 1,000. */
	wrong = 0;
	for (size_t len = 60; len <= 80; len += len < 66 ? 1 : 14)
		for (int form = 0; form < 3; form++) {
			char j[128];
			cJSON *c;
			int rc;

			memset(j, '1', len + 1);
			j[0] = '[';
			if (form == 1)
				j[len / 2] = '.';
			if (form == 2)
				j[len - 1] = 'e';
			memcpy(j + len + 1, "]", 2);
			c = cJSON_ParseWithLengthOpts(j, strlen(j) + 1, NULL, 1);
			rc = js_parse(doc, j, strlen(j));
			if ((rc == 0) != (c != NULL) ||
			    (c && !same_tree(doc, 0, c))) {
				printf("# number read otherwise than cJSON: %s\n", j);
				wrong++;
			}
			cJSON_Delete(c);
		}
	is_int(wrong, 0, "numbers of 60 to 80 bytes as cJSON reads them");
	for (int depth = 999; depth <= 1001; depth++) {
		struct dump t = { 0 };
		cJSON *c;

		for (int k = 0; k < depth; k++)
			add(&t, k % 2 ? "{\"k\":" : "[");
		add(&t, "1");
		for (int k = depth - 1; k >= 0; k--)
			add(&t, k % 2 ? "}" : "]");
		c = cJSON_ParseWithLengthOpts(t.p, t.n + 1, NULL, 1);
		is_int(js_parse(doc, t.p, t.n) == 0, c != NULL,
		       "%d nested values: as cJSON (%s)", depth,
		       c ? "read" : "refused");
		cJSON_Delete(c);
		free(t.p);
	}
	js_doc_release(doc);
	free(doc);
}

/* Member names of every length up to 24, each with siblings that differ
 * in one byte or in length: js_get and js_pick compare names inline, in
 * 8- and 4-byte pieces, and must still find exactly the first equal one. */
static void member_names(void)
{
	struct js_doc *doc = calloc(1, sizeof(*doc));
	unsigned wrong = 0;

	for (size_t len = 0; len <= 24; len++) {
		char name[32], json[1024];
		size_t o = 0;

		memset(name, 'k', len);
		name[len] = '\0';
		o += (size_t)snprintf(json + o, sizeof(json) - o, "{");
		for (size_t at = 0; at < len; at++) {
			char twin[32];

			memcpy(twin, name, len + 1);
			twin[at] = 'x';
			o += (size_t)snprintf(json + o, sizeof(json) - o,
					      "\"%s\":0,", twin);
		}
		o += (size_t)snprintf(json + o, sizeof(json) - o,
				      "\"%sk\":1,\"%s\":2,\"%s\":3}", name,
				      name, name);
		if (js_parse(doc, json, o)) {
			wrong++;
			continue;
		}
		const struct js_node *got = js_get(doc, &doc->node[0], name);
		struct js_key key = { name, len };
		struct js_keyset set;
		const struct js_node *picked = NULL;

		/* js_pick wants no empty names (it hashes the first byte). */
		if (len) {
			js_keyset_init(&set, &key, 1);
			js_pick(doc, &doc->node[0], &set, &picked);
		}
		wrong += !got || got->num != 2 || (len && picked != got);
	}
	is_int(wrong, 0, "names of 0 to 24 bytes found exactly");
	js_doc_release(doc);
	free(doc);
}

/* Names and strings of every length up to 40, with an escape at every
 * place or none, at several distances from the end of the text: where
 * each ends is found 16 bytes at a time, the first 16 apart. */
static bool string_end(struct js_doc *doc, size_t len, size_t esc,
		       size_t post)
{
	char body[64], json[160];
	const struct js_node *m;
	size_t bn = len;
	int o;

	memset(body, 'x', len);
	if (esc > len) {
		o = snprintf(json, sizeof(json), "{\"%.*s\":\"%.*s\"}%*s",
			     (int)len, body, (int)len, body, (int)post, "");
		return js_parse(doc, json, (size_t)o) == 0 &&
		       (m = &doc->node[1])->keyn == len && m->n == len &&
		       !m->esc;
	}
	memmove(body + esc + 2, body + esc, len - esc);
	memcpy(body + esc, "\\\"", 2);
	bn += 2;
	o = snprintf(json, sizeof(json), "{\"%.*s\":1}%*s", (int)bn, body,
		     (int)post, "");
	if (js_parse(doc, json, (size_t)o) != 0 ||
	    (m = &doc->node[1])->keyn != len + 1 || m->key[esc] != '"')
		return false;   /* an escaped name is read decoded */
	o = snprintf(json, sizeof(json), "{\"k\":\"%.*s\"}%*s", (int)bn, body,
		     (int)post, "");
	return js_parse(doc, json, (size_t)o) == 0 &&
	       (m = &doc->node[1])->n == bn && m->esc;
}

static void string_ends(void)
{
	struct js_doc *doc = calloc(1, sizeof(*doc));
	unsigned wrong = 0, tries = 0;

	for (size_t len = 0; len <= 40; len++)
		for (size_t esc = 0; esc <= len + 1; esc++)
			for (size_t post = 0; post <= 18; post += 6, tries++)
				wrong += !string_end(doc, len, esc, post);
	is_int(wrong, 0, "names and strings end where they end (%u texts)",
	       tries);
	js_doc_release(doc);
	free(doc);
}

/* Which documents the fast path takes as Events: a refusal there is no
 * error the differential test could see (cJSON then reads the line the
 * same way), only the cost the fast path exists to save. */
static void events_told(void)
{
	static const struct { const char *json; bool event; } cases[] = {
		{ "{\"kind\":\"Event\",\"reason\":\"X\"}", true },
		{ "{\"kind\":\"Pod\",\"involvedObject\":{},\"reason\":\"X\"}",
		  false },
		{ "{\"involvedObject\":{},\"note\":\"x\"}", true },
		{ "{\"regarding\":{},\"message\":\"x\"}", true },
		{ "{\"involvedObject\":{},\"type\":\"Normal\"}", false },
		{ "{\"involvedObject\":[],\"reason\":\"X\"}", false },
		{ "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Event\"}}",
		  true },
		{ "{\"type\":\"DELETED\",\"object\":{\"regarding\":{},"
		  "\"reason\":\"X\"}}", true },
		{ "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Event\"}}",
		  false },
		{ "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\"}}",
		  false },
		{ "{\"type\":\"Warning\",\"object\":{\"kind\":\"Event\"},"
		  "\"kind\":\"Event\"}", true },
		{ "[{\"kind\":\"Event\"}]", false },
	};
	struct js_doc *doc = calloc(1, sizeof(*doc));

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *j = cases[i].json;
		struct ing_event ev;

		if (js_parse(doc, j, strlen(j))) {
			ok(0, "js_parse %s", j);
			continue;
		}
		is_int(ing_event_at(doc, &doc->node[0], true, &ev), cases[i].event,
		       "an Event or not: %s", j);
	}
	js_doc_release(doc);
	free(doc);
}

/* ---- text cleaning ---- */

static bool plain(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\r' || c == '\n' ||
	       c == 0x1b;
}

/* A bad byte at every position of lines of every length up to 70: the
 * SSE2 run finder and the byte loop must agree with plain(). */
static void cleaning(void)
{
	static const unsigned char bad[] = { 0x00, 0x01, 0x08, 0x0b, 0x1f, 0x7f,
					     0x80, 0xc3, 0xff };
	unsigned wrong = 0, tries = 0;
	struct rt_arena a;

	rt_arena_init(&a);
	for (size_t len = 1; len <= 70; len++)
		for (size_t at = 0; at <= len; at++)
			for (size_t b = 0; b < sizeof(bad); b++) {
				char line[80];
				unsigned flags = 0;
				size_t junk = 0;
				struct rt_str out;

				memset(line, 'x', len);
				line[len / 3] = '\t';
				if (at < len)
					line[at] = (char)bad[b];
				out = ing_clean(&a, line, len, false, &flags, &junk);
				tries++;
				if (at == len || plain(bad[b]))
					wrong += flags != 0 || out.n != len;
				else
					wrong += flags == 0 || junk != 1 ||
						 out.n != len + 2;
				rt_arena_reset(&a);
			}
	rt_arena_release(&a);
	is_int(wrong, 0, "text cleaning flags exactly the bad byte (%u lines)",
	       tries);
}

/* ing_plain_run, the framer's one pass: it stops at the first byte that
 * is not printable ASCII (newline and tab included), at every position of
 * lines up to 70 bytes, and runs to the end when there is none. */
static void plain_runs(void)
{
	static const unsigned char stop[] = { '\n', '\t', '\r', 0x00, 0x1b,
					      0x1f, 0x7f, 0x80, 0xc3, 0xff };
	unsigned wrong = 0, tries = 0;

	for (size_t len = 0; len <= 70; len++)
		for (size_t at = 0; at <= len; at++)
			for (size_t b = 0; b < sizeof(stop); b++) {
				char line[80];

				memset(line, 'a' + (char)(len % 26), len);
				line[0] = len ? ' ' : line[0];
				if (at < len)
					line[at] = (char)stop[b];
				tries++;
				wrong += ing_plain_run(line, len) != at;
			}
	is_int(wrong, 0, "the plain run ends at the first other byte (%u lines)",
	       tries);
	is_int(ing_plain_run(" ~ 0123 Zz", 10), 10, "blank to tilde is plain");
}

/* ing_rfc3339 remembers the last second it parsed: repeated and changed
 * prefixes, fractions and zones give what rt_time_parse gives (on the
 * strict forms both accept; ".Z" and "+24:00" only rt_time_parse takes). */
static void remembered_second(void)
{
	static const char *const ts[] = {
		"2024-11-03T10:15:13Z", "2024-11-03T10:15:13.5Z",
		"2024-11-03T10:15:13.123456789Z", "2024-11-03T10:15:13+02:00",
		"2024-11-03T10:15:13-05:30", "2024-11-03T10:15:13.25+01:00",
		"2024-11-03T10:15:14Z", "2024-13-03T10:15:14Z",
		"2024-13-03T10:15:14Z", "2024-11-03T10:15:14Z",
		"2024-11-03t10:15:14z", "2024-11-03T10:15:14+23:59",
		"2024-11-03T10:15:14-00:01", "1600-01-01T00:00:00Z",
		"2024-02-30T10:15:14Z", "2024-11-03T10:15:14.000001Z",
		"1970-01-01T00:00:00Z", "1970-01-01T00:00:00.5Z",
		"1970-01-01T01:00:00+01:00", "1970-01-01T00:30:00+01:00",
		"1970-01-01T00:00:00.25-00:30", "1970-01-01T00:00:00Z",
	};
	unsigned wrong = 0;

	for (int rep = 0; rep < 2; rep++)
		for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
			int64_t a = 0, b = 0;
			size_t n = strlen(ts[i]), k = ing_rfc3339(ts[i], n, &a);
			bool ref = rt_time_parse(ts[i], n, &b) == 0;

			if ((k == n) != ref || (ref && a != b)) {
				printf("# %s: %zu %lld, rt_time_parse %d %lld\n",
				       ts[i], k, (long long)a, ref, (long long)b);
				wrong++;
			}
		}
	is_int(wrong, 0, "RFC 3339 times with a remembered second");
}

/* Fractions of every length from 1 to 12 digits, each with text after the
 * time (so that eight bytes are there to read at any digit), the way a CRI
 * line has it: the length read and the time are rt_time_parse's. The
 * bytes next to the digits, '/' and ':', end a fraction and spoil it. */
static void fraction_digits(void)
{
	static const char *const zones[] = { "Z", "+02:00", "-05:30", "z",
					     ":00Z", "/Z" };
	static const char *const after[] = { " stdout F x", "", " 12345678",
					     "Z" };
	unsigned wrong = 0, tries = 0;

	for (int len = 1; len <= 12; len++)
		for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++)
			for (size_t a = 0; a < 4; a++) {
				char ts[64], line[96];
				int64_t got = 0, want = 0;
				int n = snprintf(ts, sizeof(ts),
						 "2024-11-03T10:15:13.%.*s%s", len,
						 "908172635445", zones[z]);
				size_t k;

				snprintf(line, sizeof(line), "%s%s", ts, after[a]);
				bool valid = rt_time_parse(ts, (size_t)n, &want) == 0;

				k = ing_rfc3339(line, strlen(line), &got);
				tries++;
				if (valid != (k == (size_t)n) ||
				    (valid && got != want)) {
					printf("# %s: %zu %lld, want %d %d %lld\n",
					       line, k, (long long)got, valid, n,
					       (long long)want);
					wrong++;
				}
			}
	is_int(wrong, 0, "RFC 3339 fractions of 1 to 12 digits (%u times)",
	       tries);
}

/*
 * CRI lines with random times: seconds repeated and changed, fractions of
 * 0 to 12 digits, and after them 'Z', 'z', a zone, another digit or a
 * stray byte, then the line's text: what ing_rfc3339 reads (its fast path
 * for containerd's layout, or the general one) is what rt_time_parse reads
 * of the time alone.
 */
static void random_cri_times(void)
{
	static const char *const ends[] = { "Z", "z", "+02:00", "-05:30", "",
					    ".", "Z0", "/Z", " Z", "ZZ" };
	unsigned wrong = 0, tries = 0, nano = 0, seed = 12345;

	for (int i = 0; i < 20000; i++) {
		bool nanoz;
		char ts[64], line[128];
		int64_t got = 0, want = 0;
		unsigned r;
		int n, digits;
		size_t k, tn, end;

		seed = seed * 1103515245u + 12345u;
		r = seed >> 8;
		digits = (int)(r % 13);
		end = (seed * 2654435761u) >> 28 & 7;
		end += end == 7 ? (r >> 20) % 3 : 0;
		n = snprintf(ts, sizeof(ts), "19%02u-0%u-1%uT0%u:0%u:%02u",
			     70 + (r >> 4) % 30, 1 + (r >> 9) % 9, (r >> 13) % 9,
			     (r >> 16) % 3, (r >> 18) % 2, (r >> 19) % 3);
		if (digits)
			n += snprintf(ts + n, sizeof(ts) - (size_t)n, ".%.*u",
				      digits, seed * 2654435761u);
		while (n < 20 + digits && digits)
			ts[n++] = '0', ts[n] = '\0';
		n += snprintf(ts + n, sizeof(ts) - (size_t)n, "%s",
			      ends[end]);
		tn = strcspn(ts, " ");
		snprintf(line, sizeof(line), "%s stdout F message %u", ts, r);
		bool valid = rt_time_parse(ts, tn, &want) == 0;

		k = ing_rfc3339(line, strlen(line), &got);
		tries++;
		/* Forms only rt_time_parse takes are left to it; containerd's
		 * own must be read here. */
		nano += nanoz = digits && digits <= 9 && end == 0;
		if (k && k != tn)       /* "Z0": the time before the 0 */
			valid = rt_time_parse(ts, k, &want) == 0;
		if ((k && (!valid || got != want)) || (nanoz && k != tn)) {
			printf("# %s: %zu %lld, want %d %zu %lld\n", line, k,
			       (long long)got, valid, tn, (long long)want);
			wrong++;
		}
	}
	is_int(wrong, 0, "random CRI times read as rt_time_parse reads them "
	       "(%u lines, %u in containerd's layout)", tries, nano);
}

int main(void)
{
	scanner();
	as_cjson_reads();
	member_names();
	string_ends();
	events_told();
	cleaning();
	plain_runs();
	remembered_second();
	fraction_digits();
	random_cri_times();
	return done_testing();
}
