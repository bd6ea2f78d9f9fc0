/*
 * test_rules_packs.c: the built-in packs (rules/packs, compiled in) load,
 * compile and pass their own examples, and on their examples and variants
 * of them (case changes, pieces, concatenations, other fields) the
 * prefilter never changes a classification.
 */
#include <stdlib.h>
#include <string.h>

#include "../../rules/rules_int.h"
#include "tap.h"

static bool same(const struct rt_class *a, const struct rt_class *b)
{
	if (a->ntags != b->ntags || a->nrules != b->nrules ||
	    a->nfields != b->nfields || a->severity != b->severity)
		return false;
	for (unsigned k = 0; k < a->nrules; k++)
		if (a->rules[k] != b->rules[k])
			return false;
	for (unsigned k = 0; k < a->nfields; k++)
		if (a->fields[k].key.p != b->fields[k].key.p ||
		    a->fields[k].val.n != b->fields[k].val.n ||
		    memcmp(a->fields[k].val.p, b->fields[k].val.p,
			   a->fields[k].val.n))
			return false;
	return true;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

/* Collects every example and counterexample text of the packs. */
static const char **texts(const struct rules *r, size_t *n)
{
	size_t cap = 0;
	const char **v;

	for (size_t i = 0; i < r->nrules; i++)
		cap += r->rules[i].nexamples + r->rules[i].ncounters;
	v = malloc((cap + 1) * sizeof(*v));
	*n = 0;
	for (size_t i = 0; v && i < r->nrules; i++) {
		for (uint32_t k = 0; k < r->rules[i].nexamples; k++)
			v[(*n)++] = r->rules[i].examples[k].text;
		for (uint32_t k = 0; k < r->rules[i].ncounters; k++)
			v[(*n)++] = r->rules[i].counters[k].text;
	}
	return v;
}

static void variant(char *out, size_t cap, const char **v, size_t n,
		    unsigned *seed)
{
	const char *a = v[rnd(seed) % n], *b = v[rnd(seed) % n];
	size_t la = strlen(a), lb = strlen(b), cut;

	switch (rnd(seed) % 5) {
	case 0:
		snprintf(out, cap, "%s", a);
		break;
	case 1:
		snprintf(out, cap, "%s | %s", a, b);
		break;
	case 2:         /* a piece from the middle */
		cut = la ? rnd(seed) % la : 0;
		snprintf(out, cap, "%.*s", (int)(rnd(seed) % (la - cut + 1)),
			 a + cut);
		break;
	case 3:
		snprintf(out, cap, "%.*s%s", (int)(la / 2), a, b + lb / 2);
		break;
	default:
		snprintf(out, cap, "{\"log\":\"%s\",\"stream\":\"stderr\"}", a);
	}
	for (char *p = out; *p; p++) {
		unsigned x = rnd(seed) % 8;

		if (x == 0 && *p >= 'a' && *p <= 'z')
			*p = (char)(*p - 32);
		else if (x == 1 && *p >= 'A' && *p <= 'Z')
			*p = (char)(*p + 32);
	}
}

/* The path each runtime's missing-file wording names: the remedies quote
 * the capture, so it must be the path and nothing around it. */
static void missing_file_paths(struct rules *r, struct rt_arena *a)
{
	static const char *const cases[][3] = {
		{ "FileNotFoundError: [Errno 2] No such file or directory: "
		  "'/models/model.pkl'", "file_not_found", "/models/model.pkl" },
		{ "java.io.FileNotFoundException: /data/in put.csv (No such "
		  "file or directory)", "file_not_found", "/data/in put.csv" },
		{ "java.nio.file.NoSuchFileException: /var/lib/app/state.db",
		  "file_not_found", "/var/lib/app/state.db" },
		{ "Error: open /run/secrets/token: no such file or directory",
		  "file_not_found", "/run/secrets/token" },
		{ "Error: ENOENT: no such file or directory, open "
		  "'/app/dist/index.js'", "file_not_found", "/app/dist/index.js" },
		{ "[emerg] 1#1: open() \"/etc/nginx/mime.types\" failed (2: No "
		  "such file or directory)", "config_file_missing",
		  "/etc/nginx/mime.types" },
		{ "cat: /etc/app/app.conf: Datei oder Verzeichnis nicht "
		  "gefunden", "config_file_missing", "/etc/app/app.conf" },
		{ "/etc/myapp/config.yaml: Aucun fichier ou dossier de ce type",
		  "config_file_missing", "/etc/myapp/config.yaml" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_record rec;
		struct rt_class c;
		const char *got = NULL;
		bool tag = false;

		rt_record_init(&rec);
		rec.message = rt_str_make(cases[i][0], strlen(cases[i][0]));
		rules_classify(r, &rec, a, &c);
		for (unsigned k = 0; k < c.ntags; k++)
			tag |= strcmp(c.tags[k], cases[i][1]) == 0;
		for (unsigned k = 0; k < c.nfields && !got; k++)
			if (rt_str_eq(c.fields[k].key, "path"))
				got = strndup(c.fields[k].val.p,
					      c.fields[k].val.n);
		ok(tag, "%s: %s", cases[i][1], cases[i][0]);
		is_str(got ? got : "(none)", cases[i][2], "path captured");
		free((void *)got);
		rt_arena_reset(a);
	}
}

int main(void)
{
	struct rules *r = rules_new();
	char err[512], text[1200];
	unsigned differ = 0, tagged = 0, seed = 5, lines = 20000;
	const char **v;
	size_t n;
	struct rt_arena a;

	if (!ok(rules_load_builtin(r, err, sizeof(err)) == 0,
		"built-in packs load: %s", err) ||
	    !ok(rules_compile(r, err, sizeof(err)) == 0, "and compile")) {
		rules_free(r);
		return done_testing();
	}
	ok(rules_count(r) > 0, "%zu rules, %zu diagnoses", rules_count(r),
	   rules_diagnosis_count(r));
	is_int(rules_test(r, stdout), 0, "every example and counterexample");
	v = texts(r, &n);
	rt_arena_init(&a);
	for (unsigned i = 0; v && n && i < lines; i++) {
		struct rt_record rec;
		struct rt_class on, off;
		struct rt_str s;

		variant(text, sizeof(text), v, n, &seed);
		s = rt_str_make(text, strlen(text));
		rt_record_init(&rec);
		switch (rnd(&seed) % 4) {
		case 0: rec.raw = s; break;
		case 1: rec.reason = s; break;
		case 2: rec.message = s; rec.raw = s; break;
		default: rec.message = s;
		}
		rules_set_prefilter(r, true);
		rules_classify(r, &rec, &a, &on);
		rules_set_prefilter(r, false);
		rules_classify(r, &rec, &a, &off);
		tagged += off.ntags > 0;
		if (!same(&on, &off) && differ++ < 5)
			printf("# differs (%u vs %u rules): %s\n", on.nrules,
			       off.nrules, text);
		rt_arena_reset(&a);
	}
	is_int(differ, 0, "prefilter on == off over %u variants", lines);
	rules_set_prefilter(r, true);
	missing_file_paths(r, &a);
	ok(tagged > lines / 4, "%u of them tagged", tagged);
	free(v);
	rt_arena_release(&a);
	rules_free(r);
	return done_testing();
}
