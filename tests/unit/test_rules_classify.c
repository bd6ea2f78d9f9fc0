/*
 * test_rules_classify.c: rules_classify on real patterns: captures, caseless
 * matching, several rules and tags per record, severity, field selection,
 * the raw fallback, invalid UTF-8, a catastrophic pattern hitting the match
 * limit, unless-literals, and rules_test reporting misses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../rules/rules_int.h"
#include "tap.h"

static char err[512];
static struct rt_arena arena;

static struct rules *load(const char *path)
{
	struct rules *r = rules_new();

	if (rules_load_path(r, path, err, sizeof(err)) ||
	    rules_compile(r, err, sizeof(err))) {
		printf("# %s\n", err);
		rules_free(r);
		return NULL;
	}
	return r;
}

static struct rules *load_text(const char *text)
{
	struct rules *r = rules_new();

	if (rules_load_buffer(r, "t.rules", text, strlen(text), err,
			      sizeof(err)) || rules_compile(r, err, sizeof(err))) {
		printf("# %s\n", err);
		rules_free(r);
		return NULL;
	}
	return r;
}

static unsigned classify(struct rules *r, const char *msg, const char *reason,
			 const char *raw, struct rt_class *c)
{
	struct rt_record rec;

	rt_record_init(&rec);
	if (msg)
		rec.message = rt_str_make(msg, strlen(msg));
	if (reason)
		rec.reason = rt_str_make(reason, strlen(reason));
	if (raw)
		rec.raw = rt_str_make(raw, strlen(raw));
	return rules_classify(r, &rec, &arena, c);
}

static const char *field(const struct rt_class *c, const char *key)
{
	static char buf[256];

	for (unsigned k = 0; k < c->nfields; k++)
		if (rt_str_eq(c->fields[k].key, key)) {
			snprintf(buf, sizeof(buf), "%.*s",
				 (int)c->fields[k].val.n, c->fields[k].val.p);
			return buf;
		}
	return NULL;
}

static void captures_and_case(struct rules *r)
{
	struct rt_class c;
	const char *msg = "MountVolume.SetUp failed for volume \"cfg\" : "
			  "configmap \"haproxy-config\" not found";

	is_int(classify(r, msg, NULL, NULL, &c), 2, "configmap line: 2 tags");
	is_int(c.nrules, 1, "one rule");
	is_str(c.rules[0], "t.configmap.missing", "rule id");
	is_str(c.tags[0], "configmap_not_found", "first tag");
	is_str(c.tags[1], "volume_mount_failed", "second tag");
	is_int(c.nfields, 1, "one capture");
	is_str(field(&c, "configmap"), "haproxy-config", "named capture value");
	ok(c.fields[0].val.p < msg || c.fields[0].val.p > msg + strlen(msg),
	   "capture copied into the arena, not a view of the record");
	is_int(c.severity, RT_SEV_ERROR, "severity");
	is_int(c.limit_hits, 0, "no limit hits");

	classify(r, "Error: couldn't get configMap shop/web-config", NULL,
		 NULL, &c);
	is_str(field(&c, "namespace"), "shop", "second pattern: namespace");
	is_str(field(&c, "configmap"), "web-config", "second pattern: name");

	is_int(classify(r, "BACK-OFF RESTARTING FAILED CONTAINER WEB", NULL,
			NULL, &c), 1, "caseless by default");
	is_str(c.tags[0], "crashloop", "caseless tag");
	is_int(classify(r, "backoff Restarting Failed Container", NULL, NULL,
			&c), 1, "optional hyphen, mixed case");
	is_int(classify(r, "Readiness probe succeeded", NULL, NULL, &c), 0,
	       "benign line: no tags");
	is_int(c.nrules, 0, "benign line: no rules");
	is_int(c.severity, RT_SEV_NONE, "benign line: severity none");
	is_int(classify(r, "Liveness probe failed: timeout", NULL, NULL, &c), 1,
	       "probe");
	is_str(field(&c, "probe"), "Liveness", "capture keeps the text's case");
}

static void several(struct rules *r)
{
	struct rt_class c;

	is_int(classify(r, "MountVolume.SetUp failed for volume \"x\" : "
			"configmap \"x\" not found", "FailedMount", NULL, &c), 2,
	       "message rule + reason rule: tags deduplicated");
	is_int(c.nrules, 2, "two rules");
	is_str(c.rules[0], "t.configmap.missing", "catalog order 1");
	is_str(c.rules[1], "t.mount.failed", "catalog order 2");
	is_int(c.severity, RT_SEV_ERROR, "max of error and warning");

	is_int(classify(r, "OOMKilled; then dial tcp 1.2.3.4:80: connect: "
			"connection refused; Readiness probe failed", NULL,
			NULL, &c), 3, "three rules on one line");
	is_int(c.severity, RT_SEV_CRITICAL, "critical wins");
	is_str(c.tags[0], "oom_killed", "tags in catalog order, not line order");
	is_str(c.tags[1], "probe_failed", "tag 2");
	is_str(c.tags[2], "dependency_refused", "tag 3");
}

static void fields(struct rules *r)
{
	struct rt_class c;

	is_int(classify(r, "FailedMount", NULL, NULL, &c), 0,
	       "reason rule ignores the message");
	is_int(classify(r, "something", "FailedMount", NULL, &c), 1,
	       "reason rule reads the reason");
	is_str(c.rules[0], "t.mount.failed", "reason rule id");
	is_int(c.severity, RT_SEV_WARNING, "reason rule severity");
	is_int(classify(r, "{\"level\":\"error\"}", NULL, NULL, &c), 0,
	       "raw rule ignores the message");
	is_int(classify(r, "boom", NULL, "{\"level\": \"error\",\"msg\":\"boom\"}",
			&c), 1, "raw rule reads the raw record");
	is_str(c.rules[0], "t.raw.json", "raw rule id");
	is_int(classify(r, NULL, NULL, "E0501 Back-off restarting failed "
			"container", &c), 1, "empty message: message rules read raw");
	is_str(c.tags[0], "crashloop", "raw fallback tag");
	is_int(classify(r, "fine", NULL, "Back-off restarting failed container",
			&c), 0, "non-empty message: raw not read by message rules");
	is_int(classify(r, "0/3 nodes are available: 3 Insufficient cpu.",
			"FailedScheduling", NULL, &c), 1,
	       "rule reading message and reason fires once");
	is_int(c.nrules, 1, "counted once");
	is_int(classify(r, "x", "FailedScheduling", NULL, &c), 1,
	       "message,reason rule on the reason alone");
}

static void order_and_first_capture(void)
{
	struct rules *r = load_text(
		"rule r1\n  tags alpha\n  pattern one (?<x>\\w+)\n"
		"  example one a\n"
		"rule r2\n  tags beta alpha gamma\n  pattern two (?<x>\\w+)"
		"(?: (?<y>\\w+))?\n  example two b\n");
	struct rt_class c;

	if (!ok(r != NULL, "order pack"))
		return;
	is_int(classify(r, "two zz", NULL, NULL, &c), 3, "r2 only");
	is_str(c.tags[0], "alpha", "first-loaded tag first");
	is_str(c.tags[1], "beta", "then beta");
	is_str(c.tags[2], "gamma", "then gamma");
	is_int(c.nfields, 1, "unset group is not a field");
	is_int(classify(r, "two zz one yy", NULL, NULL, &c), 3, "both rules");
	is_str(field(&c, "x"), "yy", "same key twice: first rule's value");
	is_int(c.nfields, 2, "x once (from r1), y from r2");
	is_str(field(&c, "y"), "one", "r2's other capture");
	rules_free(r);
}

static void bad_utf8(struct rules *r)
{
	struct rt_class c;
	char junk[300];

	is_int(classify(r, "\xff\xfe dial tcp: connect: connection refused \xc3",
			NULL, NULL, &c), 1, "invalid UTF-8 around a match");
	is_str(c.tags[0], "dependency_refused", "tag despite junk bytes");
	for (size_t k = 0; k < sizeof(junk) - 1; k++)
		junk[k] = (char)(0x80 + (k * 37) % 128);
	junk[sizeof(junk) - 1] = '\0';
	is_int(classify(r, junk, junk, junk, &c), 0, "pure junk: no tags");
	is_int(c.limit_hits, 0, "pure junk: no errors counted");
	is_int(classify(r, "OOM\xe2\x84\xaailled", NULL, NULL, &c), 1,
	       "KELVIN SIGN matches k caselessly (prefilter must not drop)");
}

static void catastrophic(void)
{
	struct rules *r = load_text("rule evil\n  tags evil\n"
				    "  pattern (a+)+$\n  example aaa\n"
				    "rule good\n  tags good\n"
				    "  pattern aaaa\n  example aaaa\n");
	struct rt_class c;
	size_t n = 5000;
	char *line = malloc(n + 2);
	struct timespec t0, t1;
	double secs;

	if (!ok(r != NULL, "evil pack"))
		return;
	memset(line, 'a', n);
	line[n] = 'b';
	line[n + 1] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	classify(r, line, NULL, NULL, &c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	is_int(c.limit_hits, 1, "(a+)+$ on aaaa...b hits a limit");
	ok(secs < 2.0, "and returns quickly (%.3f s)", secs);
	is_int(c.nrules, 1, "the other rule still matched");
	is_str(c.rules[0], "good", "good rule id");
	is_int(rules_test(r, stdout), 0, "evil rule's own example passes");
	free(line);
	rules_free(r);
}

static void test_report(void)
{
	struct rules *r = load("tests/data/rules/fail_example.rules");
	char *out = NULL;
	size_t n = 0;
	FILE *f;

	if (!ok(r != NULL, "fail_example pack"))
		return;
	f = open_memstream(&out, &n);
	is_int(rules_test(r, f), 2, "two misses");
	fclose(f);
	is_str(out, "tests/data/rules/fail_example.rules:11: rule f.bad: "
	       "example did not match: the disk was full\n"
	       "tests/data/rules/fail_example.rules:13: rule f.bad: "
	       "counterexample matched: disk full of data\n",
	       "misses reported as file:line: rule ID: ...");
	free(out);
	rules_free(r);

	/* A declared literal that the example lacks: only the prefilter path
	 * misses it, and rules_test says so. */
	r = load_text("rule lit\n  tags t\n  pattern (?:a|b)\\d+\n"
		      "  literal nope\n  example a12\n");
	if (!ok(r != NULL, "wrong literal pack"))
		return;
	out = NULL;
	f = open_memstream(&out, &n);
	is_int(rules_test(r, f), 1, "prefilter miss counted");
	fclose(f);
	ok(strstr(out, "t.rules:5: rule lit: example missed by the prefilter")
	   == out, "prefilter miss reported: %s", out);
	free(out);
	rules_free(r);
}

/* A message that is a span of its raw text gets the same candidates
 * whether one scan of the raw text serves both fields (a few bytes around
 * the message) or each field is scanned (many): a KELVIN SIGN anywhere in
 * the raw text makes every message pattern a candidate either way, also
 * when the raw field's own literals hold no 'k' or 's' (which is when its
 * scan does not look for one). rules_classify_deferred tells: -1 when a
 * message pattern is a candidate. */
static void sign_outside_span(void)
{
	static const char *const packs[] = {
		"rule m\n  tags t\n  pattern   zzq sqzzq\n  example zzq sqzzq\n"
		"rule w\n  tags t\n  field raw\n  pattern   \\b50[234] xx\n"
		"  example 503 xx\n",
		"rule m\n  tags t\n  pattern   zzq sqzzq\n  example zzq sqzzq\n"
		"rule w\n  tags t\n  field raw\n  pattern   \\b50[234] sx\n"
		"  example 503 sx\n",
	};
	char pad[200];

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (size_t i = 0; i < sizeof(packs) / sizeof(*packs); i++) {
		struct rules *r = load_text(packs[i]);

		ok(r != NULL, "pack %zu loads", i);
		for (int sign = 0; r && sign < 2; sign++) {
			for (int wide = 0; wide < 2; wide++) {
				char raw[400];
				struct rt_record rec;
				struct rt_class c;
				int n = snprintf(raw, sizeof(raw),
						 "{\"a\":\"%s\",\"pad\":\"%s\","
						 "\"msg\":\"", sign ? "\xe2\x84\xaa" : "k",
						 wide ? pad : "");

				snprintf(raw + n, sizeof(raw) - (size_t)n, "hello\"}");
				rt_record_init(&rec);
				rec.raw = rt_str_make(raw, strlen(raw));
				rec.message = rt_str_make(raw + n, 5);
				is_int(rules_classify_deferred(r, &rec, &arena, &c),
				       sign ? -1 : 0, "pack %zu, %s, %s around the "
				       "message: %s", i, sign ? "KELVIN SIGN" : "k",
				       wide ? "many bytes" : "a few",
				       sign ? "every pattern runs" : "none runs");
			}
		}
		rules_free(r);
	}
}

/* A rule does not match a field value holding one of its unless-literals,
 * in any ASCII case, with or without the prefilter; the other fields it
 * reads are judged on their own. */
static void unless_clause(void)
{
	static const char *const cases[][2] = {
		{ "Back-off restarting failed container", "u" },
		{ "Back-off pulling image \"web:1\"", "" },
		{ "BACK-OFF PULLING IMAGE", "" },
		{ "back-off: ErrImagePull", "" },
		{ "errimage back-off", "" },
		{ "back-off eRRiMAGE", "" },
		{ "back-off pulling  image", "u" },
		{ "back-off pulling imag", "u" },
		{ "back-off err image", "u" },
	};
	struct rules *r = load_text("rule u\n  tags u\n  field message, raw\n"
				    "  pattern back-?off\n"
				    "  unless Pulling Image\n  unless errimage\n"
				    "  example back-off\n");
	struct rt_class c;
	char *out = NULL;
	size_t n = 0;
	FILE *f;

	if (!ok(r != NULL, "unless pack"))
		return;
	for (int pf = 1; pf >= 0; pf--) {
		rules_set_prefilter(r, pf);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			classify(r, cases[i][0], NULL, NULL, &c);
			is_str(c.nrules ? c.rules[0] : "", cases[i][1],
			       "%s: %s", pf ? "prefilter" : "every pattern",
			       cases[i][0]);
		}
		classify(r, "back-off", NULL, "x pulling image back-off", &c);
		is_int(c.nrules, 1, "the message matches though raw holds one");
		classify(r, "pulling image back-off", NULL, "back-off x", &c);
		is_int(c.nrules, 1, "the raw text matches though the message "
		       "holds one");
	}
	rules_free(r);

	r = load_text("rule u\n  tags u\n  pattern back-?off\n"
		      "  unless errimage\n  example back-off ErrImage\n"
		      "  counterexample back-off errimage\n");
	if (!ok(r != NULL, "unless test pack"))
		return;
	f = open_memstream(&out, &n);
	is_int(rules_test(r, f), 1, "an example holding an unless-literal "
	       "is a miss, a counterexample holding one passes");
	fclose(f);
	is_str(out, "t.rules:5: rule u: example did not match: back-off "
	       "ErrImage\n", "and reported at the example's line");
	free(out);
	rules_free(r);
}

static bool has_rule(const struct rt_class *c, const char *id)
{
	for (unsigned k = 0; k < c->nrules; k++)
		if (!strcmp(c->rules[k], id))
			return true;
	return false;
}

/* crashloop.backoff_event on a BackOff Event of 60 KB: the lookahead it
 * had (read the whole text for the image words first) ran into the match
 * limit there and missed it; with unless-literals it matches. */
static void backoff_event_big(void)
{
	static const char head[] = "{\"kind\":\"Event\",\"involvedObject\":"
		"{\"kind\":\"Pod\",\"name\":\"web-1\",\"namespace\":\"shop\"},"
		"\"message\":\"Back-off restarting failed container\",\"x\":\"";
	static const char tail[] = "\",\"reason\":\"BackOff\",\"type\":"
		"\"Warning\"}";
	struct rules *old = load_text("rule old\n  tags crashloop\n"
		"  field raw\n  pattern (?s)^(?!.*?[pie](?:(?<=p)ulling image|"
		"(?<=i)magePull|(?<=e)rrImage)).*?\"reason\"\\s*:\\s*\"BackOff\"\n"
		"  literal \"backoff\"\n  example \"reason\":\"BackOff\"\n");
	struct rules *r = rules_new();
	size_t n = 60000, k = strlen(head);
	char *raw = malloc(n + 1);
	struct rt_class c;

	if (!ok(old && raw && !rules_load_builtin(r, err, sizeof(err)) &&
		!rules_compile(r, err, sizeof(err)), "packs: %s", err))
		goto out;
	memcpy(raw, head, k);
	for (; k < n - strlen(tail); k++)
		raw[k] = 'x';
	memcpy(raw + k, tail, sizeof(tail));
	classify(old, NULL, NULL, raw, &c);
	ok(c.nrules == 0 && c.limit_hits == 1,
	   "the lookahead hits the match limit (%u)", c.limit_hits);
	classify(r, NULL, "BackOff", raw, &c);
	ok(has_rule(&c, "crashloop.backoff_event"),
	   "crashloop.backoff_event matches the 60 KB Event");
	is_int(c.limit_hits, 0, "without a limit hit");
	memcpy(raw + 200, "ImagePull", 9);
	classify(r, NULL, "BackOff", raw, &c);
	ok(!has_rule(&c, "crashloop.backoff_event"),
	   "and not once it says ImagePull");
out:
	rules_free(old);
	rules_free(r);
	free(raw);
}

/* Classifies reasons Fail000..Fail099 and Pass000..Pass099, interleaved,
 * three times: the number of those whose rules do not match as expected
 * (every rule on a Fail, one more on Fail000..Fail009, none on a Pass). */
static int reason_misses(struct rules *r, unsigned rules)
{
	struct rt_class c;
	char reason[16];
	int bad = 0;

	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < 200; i++) {
			bool fail = i % 2 == 0, zero = i / 2 % 100 < 10;

			snprintf(reason, sizeof(reason), "%s%03d",
				 fail ? "Fail" : "Pass", i / 2 % 100);
			classify(r, NULL, reason, NULL, &c);
			bad += c.nrules != (fail ? rules - !zero : 0u);
		}
	return bad;
}

/* The reason field's candidates are remembered by its text: a reason
 * seen before must give what a first scan gives, whatever shares its
 * slot, for any rule selection, with more candidates than are kept. */
static void reason_memo(void)
{
	static const char rule[] = "rule r%d\n  tags r\n  field reason\n"
		"  pattern Fail\\d+\n  example Fail1\n";
	struct rules *r = load_text(
		"rule a\n  tags a\n  field reason\n  pattern Fail\\d+\n"
		"  example Fail1\n"
		"rule b\n  tags b\n  field reason\n  pattern Fail00\\d\n"
		"  example Fail001\n"
		"rule c\n  tags c\n  field reason\n  pattern l(?:0|1)\n"
		"  example Fail0\n");
	struct rt_record rec;
	struct rt_class c;
	char text[2048];
	size_t n = 0;

	if (!ok(r != NULL, "reason pack"))
		return;
	is_int(reason_misses(r, 3), 0, "reasons seen again classify as at "
	       "first");
	rt_record_init(&rec);
	rec.reason = RT_STR_LIT("Fail001");
	rules_classify_opt(r, &rec, &arena, &c, true, 1);
	is_str(c.nrules == 1 ? c.rules[0] : "", "b", "one rule selected");
	rules_classify_opt(r, &rec, &arena, &c, true, 0);
	is_str(c.nrules == 1 ? c.rules[0] : "", "a",
	       "then another, on the same reason");
	rules_free(r);

	text[0] = '\0';
	for (int k = 0; k < REASON_MEMO_CANDS + 2; k++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, rule, k);
	snprintf(text + n, sizeof(text) - n, "rule z\n  tags z\n"
		 "  field reason\n  pattern Fail00\\d\n  example Fail001\n");
	r = load_text(text);
	if (ok(r != NULL, "pack of more rules than are remembered"))
		is_int(reason_misses(r, REASON_MEMO_CANDS + 3), 0,
		       "a reason with more candidates classifies alike");
	rules_free(r);
}

static void edge_cases(struct rules *r)
{
	struct rt_class c;
	struct rules *empty = rules_new();

	c.ntags = 99;
	is_int(rules_classify(empty, NULL, &arena, &c), 0,
	       "uncompiled rules: 0");
	is_int(c.ntags, 0, "out overwritten");
	rules_free(empty);
	is_int(classify(r, "", "", "", &c), 0, "empty record");
	is_int(classify(r, "ab", NULL, NULL, &c), 0, "tiny record");
	is_int(rules_count(r), 24, "catalog pack has 24 rules");
	is_int(rules_test(r, stdout), 0, "catalog pack passes its examples");
}

int main(void)
{
	struct rules *r;

	rt_arena_init(&arena);
	r = load("tests/data/rules/catalog.rules");
	if (!ok(r != NULL, "catalog pack loads"))
		return done_testing();
	captures_and_case(r);
	several(r);
	fields(r);
	order_and_first_capture();
	bad_utf8(r);
	catastrophic();
	test_report();
	sign_outside_span();
	unless_clause();
	backoff_event_big();
	reason_memo();
	edge_cases(r);
	rules_free(r);
	rt_arena_release(&arena);
	return done_testing();
}
