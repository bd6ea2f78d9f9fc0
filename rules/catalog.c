/*
 * catalog.c: the rules object's lifecycle and everything that reads the
 * catalog as a whole: loading built-in packs and pack files, `rules test`
 * (examples through both the plain and the prefiltered path), `rules list`
 * and the diagnosis accessors correlate/ uses.
 *
 * Strings and small arrays live in a pool (common.c) freed at once by
 * rules_free, so the parser has no per-string cleanup paths.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rules_int.h"

#define MAX_PACK_BYTES (64u * 1024 * 1024)

/* The generated table from tools/embed.c (build/.../builtin_packs.c). */
extern const struct {
	const char *name, *text;
} rules_builtin_packs[];

struct rules *rules_new(void)
{
	return calloc(1, sizeof(struct rules));
}

void rules_free(struct rules *r)
{
	if (!r)
		return;
	rules_compile_release(r);
	for (size_t i = 0; i < r->npats; i++)
		pcre2_code_free(r->pats[i].code);
	pcre2_compile_context_free(r->cctx);
	free(r->rules);
	free(r->pats);
	free(r->diags);
	free(r->tags);
	rules_pool_free(r);
	free(r);
}

int rules_load_builtin(struct rules *r, char *err, size_t errlen)
{
	for (size_t i = 0; rules_builtin_packs[i].name; i++) {
		const char *t = rules_builtin_packs[i].text;
		int rc = rules_load_buffer(r, rules_builtin_packs[i].name, t,
					   strlen(t), err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

static int load_file(struct rules *r, const char *path, char *err,
		     size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!f)
		goto io_error;
	for (;;) {
		if (cap - n < 65536) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			if (cap > MAX_PACK_BYTES || !(nb = realloc(buf, cap))) {
				snprintf(err, errlen, "%s: pack too large",
					 path);
				rc = RT_EINVAL;
				goto out;
			}
			buf = nb;
		}
		n += fread(buf + n, 1, cap - n, f);
		if (ferror(f))
			goto io_error;
		if (feof(f))
			break;
	}
	rc = rules_load_buffer(r, path, buf, n, err, errlen);
	goto out;
io_error:
	snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
	rc = RT_EIO;
out:
	if (f)
		fclose(f);
	free(buf);
	return rc;
}

static int select_pack(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 6 &&
	       !strcmp(d->d_name + n - 6, ".rules");
}

int rules_load_path(struct rules *r, const char *path, char *err,
		    size_t errlen)
{
	struct dirent **list;
	struct stat st;
	int n, rc = 0;

	if (stat(path, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return RT_EIO;
	}
	if (!S_ISDIR(st.st_mode))
		return load_file(r, path, err, errlen);
	if ((n = scandir(path, &list, select_pack, alphasort)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return RT_EIO;
	}
	for (int i = 0; i < n; i++) {
		char full[4096];

		if (!rc) {
			snprintf(full, sizeof(full), "%s/%s", path,
				 list[i]->d_name);
			rc = load_file(r, full, err, errlen);
		}
		free(list[i]);
	}
	free(list);
	return rc;
}

/* ---- rules test ---- */

static void example_record(struct rt_record *rec, unsigned field,
			   const char *text)
{
	struct rt_str s = rt_str_make(text, strlen(text));

	rt_record_init(rec);
	if (field == FIELD_REASON)
		rec->reason = s;
	else if (field == FIELD_RAW)
		rec->raw = s;
	else
		rec->message = s;
}

static bool has_tags(const struct rules *r, const struct rules_rule *ru,
		     const struct rt_class *c)
{
	for (uint32_t k = 0; k < ru->ntags; k++) {
		bool found = false;

		for (unsigned j = 0; j < c->ntags && !found; j++)
			found = c->tags[j] == r->tags[ru->tags[k]];
		if (!found)
			return false;
	}
	return true;
}

/* One example: matches its rule with its tags, also through the
 * prefilter (which catches a wrong derived or declared literal). */
static unsigned test_example(struct rules *r, uint32_t i,
			     const struct rules_text *ex, struct rt_arena *a,
			     FILE *out)
{
	const struct rules_rule *ru = &r->rules[i];
	struct rt_record rec;
	struct rt_class c;

	example_record(&rec, ru->first_field, ex->text);
	if (!rules_classify_opt(r, &rec, a, &c, false, i) || !c.nrules) {
		fprintf(out, "%s:%d: rule %s: example did not match%s: %s\n",
			ru->file, ex->line, ru->id, c.limit_hits ?
			" (PCRE2 match limit hit)" : "", ex->text);
		return 1;
	}
	if (!has_tags(r, ru, &c)) {
		fprintf(out, "%s:%d: rule %s: example lacks the rule's tags: "
			"%s\n", ru->file, ex->line, ru->id, ex->text);
		return 1;
	}
	if (!rules_classify_opt(r, &rec, a, &c, true, i) || !c.nrules) {
		fprintf(out, "%s:%d: rule %s: example missed by the prefilter "
			"(see rules list -v literals): %s\n", ru->file,
			ex->line, ru->id, ex->text);
		return 1;
	}
	return 0;
}

static unsigned test_counter(struct rules *r, uint32_t i,
			     const struct rules_text *ce, struct rt_arena *a,
			     FILE *out)
{
	const struct rules_rule *ru = &r->rules[i];
	struct rt_record rec;
	struct rt_class c;

	example_record(&rec, ru->first_field, ce->text);
	rules_classify_opt(r, &rec, a, &c, false, i);
	if (!c.nrules)
		return 0;
	fprintf(out, "%s:%d: rule %s: counterexample matched: %s\n",
		ru->file, ce->line, ru->id, ce->text);
	return 1;
}

unsigned rules_test(struct rules *r, FILE *out)
{
	struct rt_arena a;
	unsigned misses = 0;

	if (!r->compiled) {
		fprintf(out, "rules: not compiled\n");
		return 1;
	}
	rt_arena_init(&a);
	for (uint32_t i = 0; i < r->nrules; i++) {
		const struct rules_rule *ru = &r->rules[i];

		for (uint32_t k = 0; k < ru->nexamples; k++)
			misses += test_example(r, i, &ru->examples[k], &a, out);
		for (uint32_t k = 0; k < ru->ncounters; k++)
			misses += test_counter(r, i, &ru->counters[k], &a, out);
		rt_arena_reset(&a);
	}
	rt_arena_release(&a);
	return misses;
}

/* ---- rules list ---- */

/* Prints one condition item, blank-separated from the previous one. */
static void list_item(FILE *out, bool *first, const char *label,
		      const char *const *v, size_t n, const char *sep)
{
	fprintf(out, "%s%s", *first ? "" : " ", label);
	for (size_t k = 0; k < n; k++)
		fprintf(out, "%s%s", k ? sep : "", v[k]);
	*first = false;
}

static void list_diagnosis(const struct rules_diagnosis *d, FILE *out)
{
	static const char *const opened[] = { "any", "upgrade", "install" };
	bool first = true;

	fprintf(out, "diagnosis %s\t", d->id);
	if (d->nall)
		list_item(out, &first, "all:", d->all, d->nall, ",");
	for (size_t g = 0; g < d->nanygroups; g++)
		list_item(out, &first, "any:", d->any[g], d->nany[g], "|");
	if (d->nnone)
		list_item(out, &first, "none:", d->none, d->nnone, ",");
	if (d->nrevision_status)
		list_item(out, &first, "revision:", d->revision_status,
			  d->nrevision_status, ",");
	if (d->opened_by > RULES_OPENED_ANY &&
	    d->opened_by <= RULES_OPENED_INSTALL)
		list_item(out, &first, "opened-by:", &opened[d->opened_by], 1,
			  "");
	if (d->within_ns) {
		char w[32];
		const char *wp = w;

		snprintf(w, sizeof(w), "%lldh",
			 (long long)(d->within_ns / 3600000000000LL));
		if (d->within_ns % 3600000000000LL)
			snprintf(w, sizeof(w), "%llds",
				 (long long)(d->within_ns / 1000000000LL));
		list_item(out, &first, "within:", &wp, 1, "");
	}
	if (d->followed_by_rollback)
		list_item(out, &first, "followed-by:rollback", NULL, 0, "");
	if (d->object_glob)
		list_item(out, &first, "object:", &d->object_glob, 1, "");
	if (d->payload_hook_config)
		list_item(out, &first, "payload:hook-config", NULL, 0, "");
	fprintf(out, "\t%s\t%s\n", rt_severity_name(d->severity), d->title);
}

void rules_list(const struct rules *r, FILE *out)
{
	for (size_t i = 0; i < r->nrules; i++) {
		const struct rules_rule *ru = &r->rules[i];

		fprintf(out, "%s\t", ru->id);
		for (uint32_t k = 0; k < ru->ntags; k++)
			fprintf(out, "%s%s", k ? "," : "", r->tags[ru->tags[k]]);
		fprintf(out, "\t%s\t%s\n", rt_severity_name(ru->severity),
			ru->explain);
	}
	for (size_t i = 0; i < r->ndiags; i++)
		list_diagnosis(&r->diags[i], out);
}

/* "a" | "b", in parentheses when other sets are required too. */
static void list_set(FILE *out, const char *const *lits, uint32_t n,
		     bool paren)
{
	if (paren)
		fputc('(', out);
	for (uint32_t k = 0; k < n; k++) {
		fputs(k ? " | \"" : "\"", out);
		for (const char *c = lits[k]; *c; c++)
			fprintf(out, *c == '"' || *c == '\\' ? "\\%c" : "%c",
				*c);
		fputc('"', out);
	}
	if (paren)
		fputc(')', out);
}

void rules_list_prefilter(const struct rules *r, FILE *out)
{
	if (!r->compiled)
		return;
	for (size_t i = 0; i < r->npats; i++) {
		const struct rules_pattern *p = &r->pats[i];
		bool paren = p->nconj > 1;

		fprintf(out, "%s\t%s:%d\t", r->rules[p->rule].id,
			r->rules[p->rule].file, p->line);
		if (!p->nlits)
			fputs("(always runs)", out);
		list_set(out, p->lits, p->nlits, paren);
		for (uint32_t k = 1; k < p->nconj; k++) {
			fputs(" & ", out);
			list_set(out, p->more[k - 1], p->nmore[k - 1], paren);
		}
		for (uint32_t k = 0; k < p->nchecks; k++) {
			fputs(" check ", out);
			list_set(out, p->check[k], p->ncheck[k], true);
		}
		if (r->rules[p->rule].nunless) {
			fputs(" unless ", out);
			list_set(out, r->rules[p->rule].unless,
				 r->rules[p->rule].nunless, true);
		}
		fprintf(out, "%s\n", p->nlits && !p->derived ? " (declared)" :
			"");
	}
}

size_t rules_count(const struct rules *r)
{
	return r->nrules;
}

size_t rules_diagnosis_count(const struct rules *r)
{
	return r->ndiags;
}

const struct rules_diagnosis *rules_diagnosis_at(const struct rules *r,
						 size_t i)
{
	return i < r->ndiags ? &r->diags[i] : NULL;
}
