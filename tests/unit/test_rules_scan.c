/*
 * test_rules_scan.c: the multi-literal scan against a plain reference (a
 * caseless search for every literal), in both of its modes (sampled windows
 * for many literals, the byte-pair pass alone for a few); literals of every
 * length at every alignment; and the required literal sets derived from a
 * pattern, which let the classifier skip a pattern unless a text holds a
 * literal of each.
 */
#include <stdlib.h>
#include <string.h>

#include "../../rules/rules_int.h"
#include "tap.h"

#define MAXLITS 96

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

static unsigned char low(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c | 0x20 : c;
}

/* The reference: does t hold lit, ignoring ASCII case? */
static bool holds(const char *t, size_t n, const char *lit, size_t len)
{
	for (size_t i = 0; i + len <= n; i++) {
		size_t k = 0;

		while (k < len && low((unsigned char)t[i + k]) ==
				  low((unsigned char)lit[k]))
			k++;
		if (k == len)
			return true;
	}
	return false;
}

struct set {
	char lit[MAXLITS][LIT_LEN + 1];
	bool whole[MAXLITS];    /* pf_add_whole: found outside a span too */
	size_t n;
	struct pf *pf;
};

static void set_build(struct set *s)
{
	s->pf = pf_new();
	for (size_t i = 0; i < s->n; i++)
		(s->whole[i] ? pf_add_whole : pf_add)(s->pf, s->lit[i],
						      strlen(s->lit[i]),
						      (uint32_t)i);
	pf_build(s->pf);
}

/* Scans t and compares the literals found (through their payloads) with
 * the reference; returns the number of disagreements. The scan reads a
 * copy of exactly n bytes, so that a sanitizer build sees a read past
 * the end. */
static unsigned check(const struct set *s, const char *t, size_t n)
{
	static uint32_t stamp[MAXLITS + 1], gen, hits[MAXLITS + 1];
	bool found[MAXLITS] = { false };
	unsigned bad = 0;
	char *copy = malloc(n ? n : 1);
	int nh;

	memcpy(copy, t, n);
	nh = pf_scan(s->pf, copy, n, stamp, ++gen, hits);
	free(copy);
	if (nh < 0)
		return 0;       /* every pattern runs: nothing to lose */
	for (int h = 0; h < nh; h++) {
		size_t np;
		const uint32_t *p = pf_lit_pats(s->pf, hits[h], &np);

		for (size_t k = 0; k < np; k++)
			found[p[k]] = true;
	}
	for (size_t i = 0; i < s->n; i++) {
		bool want = holds(t, n, s->lit[i], strlen(s->lit[i]));

		if (want != found[i]) {
			if (bad++ < 3)
				printf("# '%s' in '%.*s': scan %d, reference %d\n",
				       s->lit[i], (int)n, t, found[i], want);
		}
	}
	return bad;
}

/* Bytes that stress the scan: letters in both cases, the pairs "| 0x20"
 * folds together ('@' and '`', '[' and '{', tab and ')'), digits, blanks,
 * UTF-8 (not the two sequences that fold to k and s). */
static const char alphabet[] = "abcdeKSXyz0123456789 -_./:@`[{\t)\"\\";
static const char *const utf8[] = { "\xc3\xa9", "\xe2\x82\xac", "\xff" };

static void random_lit(char *out, size_t len, unsigned *seed)
{
	for (size_t k = 0; k < len; k++)
		out[k] = alphabet[rnd(seed) % (sizeof(alphabet) - 1)];
	out[len] = '\0';
}

/* A text of pieces of the literals (whole, cut, case flipped) and noise. */
static size_t random_text(const struct set *s, char *t, size_t cap,
			  unsigned *seed)
{
	size_t n = 0;

	while (n + LIT_LEN + 8 < cap && rnd(seed) % 12) {
		unsigned pick = rnd(seed) % 6;

		if (pick < 3 && s->n) {
			const char *l = s->lit[rnd(seed) % s->n];
			size_t len = strlen(l), from = 0, to = len;

			if (pick == 1)
				from = rnd(seed) % len;
			if (pick == 2)
				to = 1 + rnd(seed) % len;
			for (size_t k = from; k < to; k++) {
				char c = l[k];

				if (rnd(seed) % 2 && c >= 'a' && c <= 'z')
					c = (char)(c - 32);
				else if (rnd(seed) % 2 && c >= 'A' && c <= 'Z')
					c = (char)(c + 32);
				t[n++] = c;
			}
		} else if (pick == 3) {
			const char *u = utf8[rnd(seed) % 3];

			memcpy(t + n, u, strlen(u));
			n += strlen(u);
		} else {
			size_t k = 1 + rnd(seed) % 6;

			while (k--)
				t[n++] = alphabet[rnd(seed) % (sizeof(alphabet) - 1)];
		}
	}
	return n;
}

/* Up to maxn random literals, built: most no longer than LIT_MIN + span
 * - 1, one in odds up to LIT_LEN. */
static struct set *random_set(unsigned *seed, size_t maxn, unsigned odds,
			      unsigned span)
{
	struct set *s = calloc(1, sizeof(*s));

	s->n = 1 + rnd(seed) % maxn;
	for (size_t i = 0; i < s->n; i++)
		random_lit(s->lit[i], LIT_MIN + rnd(seed) %
			   (rnd(seed) % odds ? span : LIT_LEN - LIT_MIN + 1),
			   seed);
	set_build(s);
	return s;
}

/* Random literal sets of every size against random texts: the scan finds
 * exactly what the reference finds, in window mode and in pair mode, with
 * the AVX2 loops (the gate's eight bits from one gather) and without. */
static void differential(void)
{
	unsigned seed = 11, bad = 0, texts = 0, windowed = 0, paired = 0;
	bool avx2 = false;

	for (int round = 0; round < 300; round++) {
		struct set *s = random_set(&seed, round % 3 ? 8 : MAXLITS, 4, 12);
		char t[600];

		if (pf_windowed(s->pf))
			windowed++;
		else
			paired++;
		for (int k = 0; k < 60; k++, texts++) {
			size_t n = random_text(s, t, sizeof(t), &seed);

			for (int simd = 0; simd < 3; simd++) {
				avx2 |= pf_set_avx2(s->pf, simd > 0);
				pf_set_gather(s->pf, simd == 2);
				bad += check(s, t, n);
			}
		}
		pf_free(s->pf);
		free(s);
	}
	ok(windowed > 50 && paired > 50, "both scan modes tried (%u windowed, "
	   "%u pair-only)", windowed, paired);
	is_int(bad, 0, "scan equals the reference over %u texts, SSE2 and "
	       "AVX2 with and without gathers", texts);
	if (!avx2)
		printf("# this CPU has no AVX2: its loops were not tried\n");
}

/* One literal of each length among many others (so the windows are used),
 * at every start alignment and distance from the end, in random case;
 * one byte short of it is no hit. */
static void alignments(void)
{
	static const char base[] = "QuxzJvkwPyfgbQjzx.:!@#ZqmwvXjkqpz;%&Wyq"
				   "vmZkxjQpwy";
	unsigned misses = 0, tries = 0, seed = 3;

	for (size_t len = LIT_MIN; len <= LIT_LEN; len++) {
		struct set *s = calloc(1, sizeof(*s));

		memcpy(s->lit[0], base, len);
		s->lit[0][len] = '\0';
		for (s->n = 1; s->n < 60; s->n++)
			random_lit(s->lit[s->n], 5 + rnd(&seed) % 20, &seed);
		set_build(s);
		if (!pf_windowed(s->pf))
			misses++;
		for (size_t pre = 0; pre < 9; pre++)
			for (size_t post = 0; post < 9; post++) {
				char text[128];
				size_t n = pre;

				memset(text, '-', sizeof(text));
				for (size_t k = 0; k < len; k++) {
					char ch = base[k];

					if (rnd(&seed) & 1 && ch >= 'a' && ch <= 'z')
						ch = (char)(ch - 32);
					text[n++] = ch;
				}
				n += post;
				tries++;
				misses += check(s, text, n);
				misses += check(s, text + pre + 1, len - 1);
				misses += check(s, text + pre, len - 1);
			}
		pf_free(s->pf);
		free(s);
	}
	is_int(misses, 0, "every length at every alignment (%u texts)", tries);
}

/* The raw-field literals of the default packs are few and share "50":
 * found by the pair pass alone. */
static void pair_mode(void)
{
	static const char *const lits[] = {
		"502", "503", "504", " 503 ", "http 503", "http/",
		"\"backoff\"", "503 server error",
	};
	struct set *s = calloc(1, sizeof(*s));
	static const char *const texts[] = {
		"GET /x HTTP/1.1\" 503 12", "{\"reason\":\"BackOff\"}",
		"status=5030", "HTTP 503 Server Error", "5 0 3", "50", "",
		"2024-11-03T10:50:03.503Z", "\"BACKOFF\"",
	};
	unsigned bad = 0;

	for (s->n = 0; s->n < sizeof(lits) / sizeof(lits[0]); s->n++)
		strcpy(s->lit[s->n], lits[s->n]);
	set_build(s);
	ok(!pf_windowed(s->pf), "a few literals on a few pairs: pair pass");
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		bad += check(s, texts[i], strlen(texts[i]));
	is_int(bad, 0, "pair pass finds what the reference finds");
	{
		static uint32_t stamp[MAXLITS + 1], gen, hits[MAXLITS + 1];
		static const char kelvin[] = "x \"bac\xe2\x84\xaaoff\" after "
					     "the sign, a long text to pass 16";

		is_int(pf_scan(s->pf, kelvin, sizeof(kelvin) - 1, stamp, ++gen,
			       hits), -1, "pair pass: KELVIN SIGN runs every "
		       "pattern");
		is_int(pf_scan(s->pf, kelvin + 20, sizeof(kelvin) - 21, stamp,
			       ++gen, hits), 0, "... but not after it");
	}
	pf_free(s->pf);
	free(s);
}

/* Required sets as "a|b & c|d", best (rarest in ordinary logs) first. */
static const char *cnf(const char *re)
{
	static char buf[4096];
	struct lit_cnf *c = malloc(sizeof(*c));
	size_t k = 0;

	lit_derive_cnf(re, strlen(re), c);
	buf[0] = '\0';
	for (unsigned i = 0; i < c->n; i++) {
		if (i)
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, " & ");
		for (unsigned j = 0; j < c->set[i].n; j++)
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%.*s",
					      j ? "|" : "", c->set[i].len[j],
					      c->set[i].s[j]);
	}
	free(c);
	return buf;
}

static void required_sets(void)
{
	static const struct { const char *re, *want; } cases[] = {
		{ "HTTP/\\d(?:\\.\\d)?\"?\\s+50[234]\\b",
		  "502|503|504 & http/" },
		{ "connection refused.*dial tcp", "connection refused & dial tcp" },
		{ "(?:foo.*bar)baz", "baz & foo & bar" },
		{ "(?:foo.*bar)?bazqux", "bazqux" },
		{ "abc(?=defg)hij", "hij & abc" },
		{ "(?:abc.*def|ghi.*jkl)", "abc|jkl" },
		{ "configmaps? \"[^\"]+\" not found",
		  "configmaps \"|configmap \" & \" not found" },
		{ "a.b.c", "" },
		{ "(?:one.*two){2}x", "two & one" },
		{ "(?:lost.*)*found", "found" },
		{ "x(?!never)yz", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_str(cnf(cases[i].re), cases[i].want, "required sets of %s",
		       cases[i].re);
}

/* The rules of pack, compiled; NULL (a failed test) when they do not. */
static struct rules *load_pack(const char *pack, size_t n)
{
	struct rules *r = rules_new();
	char err[256] = "";

	if (ok(!rules_load_buffer(r, "c.rules", pack, n, err, sizeof(err)) &&
	       !rules_compile(r, err, sizeof(err)), "pack: %s", err))
		return r;
	rules_free(r);
	return NULL;
}

/* Classifies each line with the prefilter and without: the lines whose
 * rules differ; *matched counts the rules matched with it. */
static unsigned on_off(struct rules *r, const char *const *lines, size_t n,
		       unsigned *matched)
{
	struct rt_arena a;
	unsigned differ = 0;

	rt_arena_init(&a);
	for (size_t i = 0; i < n; i++) {
		struct rt_record rec;
		struct rt_class on, off;

		rt_record_init(&rec);
		rec.message = rt_str_make(lines[i], strlen(lines[i]));
		rules_set_prefilter(r, true);
		rules_classify(r, &rec, &a, &on);
		rules_set_prefilter(r, false);
		rules_classify(r, &rec, &a, &off);
		differ += on.nrules != off.nrules;
		*matched += on.nrules;
		rt_arena_reset(&a);
	}
	rules_set_prefilter(r, true);
	rt_arena_release(&a);
	return differ;
}

/* Through the classifier: a pattern with two weak required sets, the
 * further one too large to check, runs only when both are there, and
 * matches just as without the prefilter. */
static void conjunction(void)
{
	static const char pack[] =
		"rule t.api503\n  tags t\n  field message\n"
		"  pattern (?:rest|soap|grpc|json|yaml|toml|html|text|atom)/"
		"\\d\\S*\" 50[234]\n"
		"  example \"GET / REST/1.1\" 503 12\n"
		"rule t.filler\n  tags t\n  field message\n"
		"  pattern \\b50[234] \\d+ms\\b\n  example 503 12ms\n";
	static const char *const lines[] = {
		"\"GET / REST/1.1\" 503 12", "\"GET / json/1.1\" 200 12",
		"took \" 503ms", "ATOM/1.0\" 502", "503 77 toml/", "x",
		"\" 504 Html/2\" 504",
	};
	struct rules *r = load_pack(pack, sizeof(pack) - 1);
	unsigned matched = 0;

	if (!r)
		return;
	is_int(r->pats[0].nconj, 2, "502|503|504 is weak, and nine words too "
	       "many to check: two sets required");
	is_int(on_off(r, lines, sizeof(lines) / sizeof(lines[0]), &matched), 0,
	       "two required sets: prefilter on == off");
	is_int(rules_test(r, stdout), 0, "examples pass through the prefilter");
	rules_free(r);
}

/* A further set small enough to check ("REST/" beside a status code,
 * "28000" beside "SQLSTATE") would be found, or brush against the scan's
 * windows, in line after line: it is checked in a candidate's text
 * instead of scanned for, and the patterns still match just as without
 * the prefilter. */
static void weak_further_set(void)
{
	static const char pack[] =
		"rule t.rest503\n  tags t\n  field message\n"
		"  pattern REST/\\d\\S*\" 50[234]\n"
		"  example \"GET / REST/1.1\" 503 12\n"
		"rule t.pgauth\n  tags t\n  field message\n"
		"  pattern SQLSTATE\\W+28000\n"
		"  example FATAL: SQLSTATE: 28000\n";
	static const char *const lines[] = {
		"\"GET / REST/1.1\" 503 12", "REST/1.0\" 502", "503 77 REST/",
		"sqlstate = 28000", "SQLSTATE 28P01", "28000 sqlstate",
		"at 10:28:00.280001 sqlstate: 28000", "\" 504 REST/2\" 504",
	};
	struct rules *r = load_pack(pack, sizeof(pack) - 1);
	unsigned differ, matched = 0;

	if (!r)
		return;
	for (int k = 0; k < 2; k++)
		ok(r->pats[k].nconj == 1 && r->pats[k].nchecks == 1,
		   "%s: the further set checked, not scanned for (%u "
		   "sets, %u checks)", r->pats[k].src, r->pats[k].nconj,
		   r->pats[k].nchecks);
	differ = on_off(r, lines, sizeof(lines) / sizeof(lines[0]), &matched);
	ok(matched == 5 && !differ, "checked sets: prefilter on == off (%u "
	   "matched, %u differ)", matched, differ);
	rules_free(r);
}

/* A further set of common words ("version ") finds almost every text the
 * scan looks at anyway: it is checked in a candidate's text instead of
 * scanned for, and the pattern still matches just as without the
 * prefilter. */
static void common_further_set(void)
{
	static const char pack[] =
		"rule t.dirty\n  tags t\n  field message\n"
		"  pattern version (\\d+) is dirty\n"
		"  example version 3 is dirty\n";
	static const char *const lines[] = {
		"version 3 is dirty", "VERSION 12 IS DIRTY", "the tree is dirty",
		"version 3 is clean", "dirty version 3 is", "x",
	};
	struct rules *r = load_pack(pack, sizeof(pack) - 1);
	unsigned differ, matched = 0;

	if (!r)
		return;
	ok(r->pats[0].nconj == 1 && r->pats[0].nchecks == 1,
	   "\"version \" checked, not scanned for (%u sets, %u checks)",
	   r->pats[0].nconj, r->pats[0].nchecks);
	differ = on_off(r, lines, sizeof(lines) / sizeof(lines[0]), &matched);
	ok(matched == 2 && !differ, "checked set: prefilter on == off (%u "
	   "matched, %u differ)", matched, differ);
	rules_free(r);
}

/* pf_scan_span against the reference: a literal inside the span is found
 * plain, whatever the span's start modulo the stride (the positions
 * sampled follow it); a whole one (pf_add_whole) only outside it (or
 * across its edges) flagged, and any other one there flagged or not at
 * all. */
static unsigned check_span(const struct set *s, const char *t, size_t n,
			   size_t lo, size_t hi)
{
	static uint32_t stamp[MAXLITS + 1], gen, hits[2 * MAXLITS + 2];
	bool in[MAXLITS] = { false }, any[MAXLITS] = { false };
	unsigned bad = 0;
	uint32_t gen_out = ++gen;
	int nh = pf_scan_span(s->pf, t, n, lo, hi, stamp, ++gen, gen_out,
			      hits);

	if (nh < 0)
		return 0;
	for (int h = 0; h < nh; h++) {
		size_t np;
		const uint32_t *p = pf_lit_pats(s->pf, hits[h] & ~PF_HIT_OUT,
						&np);

		for (size_t k = 0; k < np; k++) {
			any[p[k]] = true;
			in[p[k]] |= !(hits[h] & PF_HIT_OUT);
		}
	}
	for (size_t i = 0; i < s->n; i++) {
		size_t len = strlen(s->lit[i]);
		bool want_in = holds(t + lo, hi - lo, s->lit[i], len),
		     want_any = holds(t, n, s->lit[i], len);

		if (want_in != in[i] ||
		    (s->whole[i] ? want_any != any[i] : any[i] && !want_any)) {
			if (bad++ < 3)
				printf("# '%s' in '%.*s' [%zu, %zu): scan %d/%d, "
				       "reference %d/%d\n", s->lit[i], (int)n, t,
				       lo, hi, in[i], any[i], want_in, want_any);
		}
	}
	return bad;
}

/* Random sets, one literal in eight of them whole: the byte pass finds
 * those, and the windows then sample the span alone, unless they take
 * more anchor pairs than it compares. */
static void spans(void)
{
	unsigned seed = 17, bad = 0, texts = 0, late = 0, inside = 0;

	for (int round = 0; round < 200; round++) {
		struct set *s = random_set(&seed, round % 2 ? 12 : MAXLITS, 3, 9);
		char t[600];

		pf_free(s->pf);
		for (size_t i = 0; i < s->n; i++)
			s->whole[i] = i % 8 == 0;
		set_build(s);
		inside += pf_windowed(s->pf) && pf_span_windows(s->pf);

		for (int k = 0; k < 60; k++, texts++) {
			size_t n = random_text(s, t, sizeof(t), &seed);
			size_t lo = n ? rnd(&seed) % (n + 1) : 0;
			size_t hi = lo + (n > lo ? rnd(&seed) % (n - lo + 1) : 0);

			late += lo % 4 == 3;
			bad += check_span(s, t, n, lo, hi);
		}
		pf_free(s->pf);
		free(s);
	}
	ok(late > 100, "spans starting at every residue (%u at 3)", late);
	ok(inside > 20, "windows inside the span only (%u sets)", inside);
	is_int(bad, 0, "span scan equals the reference over %u texts", texts);
}

int main(void)
{
	differential();
	alignments();
	spans();
	pair_mode();
	required_sets();
	conjunction();
	weak_further_set();
	common_further_set();
	return done_testing();
}
