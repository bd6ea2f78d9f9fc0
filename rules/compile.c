/*
 * compile.c: turns loaded rules into something fast to run: PCRE2 JIT code,
 * one match context with limits, one shared match data, the named-capture
 * tables and the literal prefilter (prefilter.c) that decides which
 * patterns a text can possibly match.
 *
 * Options: patterns are caseless, UTF with Unicode classes, and
 * PCRE2_MATCH_INVALID_UTF so raw junk bytes are simply never matched
 * instead of making pcre2_match fail. Limits keep a catastrophic pattern
 * from stalling ingestion: the match is abandoned and counted.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"

#define MATCH_LIMIT 100000
#define DEPTH_LIMIT 5000
#define HEAP_LIMIT_KIB 20000
#define JIT_STACK_MIN (32 * 1024)
#define JIT_STACK_MAX (1024 * 1024)
#define CHECK_MAX 8     /* members of a set checked before PCRE2 runs */

pcre2_code *rules_pcre2_compile(struct rules *r, const char *src, size_t n,
				size_t *erroff, char *msg, size_t msglen)
{
	pcre2_code *code;
	int errcode;

	if (!r->cctx) {
		if (!(r->cctx = pcre2_compile_context_create(NULL))) {
			snprintf(msg, msglen, "out of memory");
			*erroff = 0;
			return NULL;
		}
		pcre2_set_max_pattern_length(r->cctx, RULES_MAX_PATTERN);
	}
	code = pcre2_compile((PCRE2_SPTR)src, n, RULES_PCRE2_OPTIONS,
			     &errcode, erroff, r->cctx);
	if (!code) {
		PCRE2_UCHAR buf[256];

		if (pcre2_get_error_message(errcode, buf, sizeof(buf)) < 0)
			snprintf((char *)buf, sizeof(buf), "error %d", errcode);
		snprintf(msg, msglen, "%s", (const char *)buf);
	}
	return code;
}

void rules_compile_release(struct rules *r)
{
	pcre2_match_data_free(r->md);
	pcre2_jit_stack_free(r->jit);
	pcre2_match_context_free(r->mctx);
	for (int f = 0; f < FIELD_COUNT; f++) {
		pf_free(r->pf[f]);
		r->pf[f] = NULL;
		free(r->always[f]);
		r->always[f] = NULL;
		r->nalways[f] = 0;
	}
	free(r->lit_stamp);
	free(r->hits);
	free(r->cand_stamp);
	free(r->conj_stamp);
	free(r->conj_seen);
	free(r->rule_stamp);
	free(r->cands);
	r->md = NULL;
	r->jit = NULL;
	r->mctx = NULL;
	r->lit_stamp = r->hits = r->cand_stamp = r->rule_stamp = r->cands = NULL;
	r->conj_stamp = NULL;
	r->conj_seen = NULL;
	r->compiled = false;
}

static int make_match_state(struct rules *r, uint32_t maxcap)
{
	if (!(r->mctx = pcre2_match_context_create(NULL)))
		return RT_ENOMEM;
	pcre2_set_match_limit(r->mctx, MATCH_LIMIT);
	pcre2_set_depth_limit(r->mctx, DEPTH_LIMIT);
	pcre2_set_heap_limit(r->mctx, HEAP_LIMIT_KIB);
	/* Without a JIT stack JIT code uses 32 KiB of machine stack; a stack
	 * of its own lets deep but legitimate matches finish. */
	if ((r->jit = pcre2_jit_stack_create(JIT_STACK_MIN, JIT_STACK_MAX,
					     NULL)))
		pcre2_jit_stack_assign(r->mctx, NULL, r->jit);
	if (!(r->md = pcre2_match_data_create(maxcap + 1, NULL)))
		return RT_ENOMEM;
	return 0;
}

/* Named groups, so classify copies captures without parsing the table. */
static int load_capnames(struct rules *r, struct rules_pattern *p)
{
	uint32_t count = 0, size = 0;
	PCRE2_SPTR table;

	pcre2_pattern_info(p->code, PCRE2_INFO_NAMECOUNT, &count);
	pcre2_pattern_info(p->code, PCRE2_INFO_NAMEENTRYSIZE, &size);
	pcre2_pattern_info(p->code, PCRE2_INFO_NAMETABLE, &table);
	p->ncaps = 0;
	if (!count)
		return 0;
	if (!(p->caps = rules_alloc(r, count * sizeof(*p->caps))))
		return RT_ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		PCRE2_SPTR e = table + (size_t)i * size;
		const char *name = (const char *)e + 2;

		p->caps[i].group = (uint32_t)e[0] << 8 | e[1];
		p->caps[i].len = strlen(name);
		if (!(p->caps[i].name = rules_strndup(r, name, p->caps[i].len)))
			return RT_ENOMEM;
	}
	p->ncaps = count;
	return 0;
}

static const char **pool_lits(struct rules *r, const struct lit_set *set)
{
	const char **v = rules_alloc(r, set->n * sizeof(*v));

	for (unsigned k = 0; v && k < set->n; k++)
		if (!(v[k] = rules_strndup(r, set->s[k], set->len[k])))
			return NULL;
	return v;
}

/* A further set is worth scanning for only when the best one is weak
 * (common words, a 3-digit status code: "HTTP/" alone is in every access
 * log line), when it is too large to check (a small set is checked
 * instead, further_sets: ranked below the best, it is weak too, and a
 * set holding "version ", "failed", "28000" or " in /" is found in line
 * after line, one holding "incomplete" has every "request completed"
 * pass the scan's windows, each find costing more than checking the few
 * candidates the best set leaves), and when it adds no short literal the
 * field's scan does not look for anyway (those are found at a higher
 * cost than long ones). */
static bool worth_adding(const struct rules *r, unsigned fields,
			 const struct lit_set *best, const struct lit_set *set)
{
	if (lit_set_score(best) >= LIT_WEAK_SCORE || set->n <= CHECK_MAX)
		return false;
	if (fields & 1u << FIELD_RAW)   /* the message's scan holds them too */
		fields |= 1u << FIELD_MESSAGE;
	for (unsigned k = 0; k < set->n; k++) {
		if (set->len[k] >= LIT_CONJ_MIN)
			continue;
		for (int f = 0; f < FIELD_COUNT; f++)
			if ((fields & 1u << f) &&
			    !pf_has(r->pf[f], set->s[k], set->len[k]))
				return false;
	}
	return true;
}

/* The literals of set k of p (0: lits, then more). */
static const char *const *conj_lits(const struct rules_pattern *p, unsigned k,
				    uint32_t *n)
{
	*n = k ? p->nmore[k - 1] : p->nlits;
	return k ? p->more[k - 1] : p->lits;
}

/* Adds set k of pattern i to the prefilter of each field it reads, and a
 * raw field's literals to the message's too (see struct rules). */
static int add_set(struct rules *r, uint32_t i, unsigned k)
{
	const struct rules_pattern *p = &r->pats[i];
	unsigned fields = r->rules[p->rule].fields;
	uint32_t n, pay = i << PAY_SHIFT | k;
	const char *const *lits = conj_lits(p, k, &n);

	for (uint32_t j = 0; j < n; j++) {
		size_t len = strlen(lits[j]);

		for (int f = 0; f < FIELD_COUNT; f++)
			if ((fields & 1u << f) && pf_add(r->pf[f], lits[j], len, pay))
				return RT_ENOMEM;
		if ((fields & 1u << FIELD_RAW) &&
		    pf_add_whole(r->pf[FIELD_MESSAGE], lits[j], len,
				 pay | PAY_RAW))
			return RT_ENOMEM;
	}
	return 0;
}

/* Derived literals when the regex yields some, else the rule's declared
 * ones, else none: the pattern then runs on every record. */
static int first_set(struct rules *r, uint32_t i, struct lit_cnf *cnf)
{
	struct rules_pattern *p = &r->pats[i];
	const struct rules_rule *ru = &r->rules[p->rule];
	unsigned fields = ru->fields;

	p->derived = cnf->n > 0;
	p->nconj = 1;
	p->nchecks = 0;
	if (!cnf->n) {
		p->lits = ru->lits;
		p->nlits = ru->nlits;
		p->nconj = ru->nlits ? 1 : 0;
	} else {
		if (!(p->lits = pool_lits(r, &cnf->set[0])))
			return RT_ENOMEM;
		p->nlits = cnf->set[0].n;
	}
	for (int f = 0; f < FIELD_COUNT; f++)
		if (!p->nconj && (fields & 1u << f))
			r->always[f][r->nalways[f]++] = i;
	return p->nconj ? add_set(r, i, 0) : 0;
}

/* Further required sets, once every first set is in: those tell which
 * short literals the scans look for anyway. A set not worth scanning for
 * is still checked, in the text of a candidate only, if it is small:
 * "configuration file" finds the candidates of
 * "configuration file (\S+) test failed", and " test failed" then spares
 * PCRE2 most of them. */
static int further_sets(struct rules *r, uint32_t i, struct lit_cnf *cnf)
{
	struct rules_pattern *p = &r->pats[i];
	unsigned fields = r->rules[p->rule].fields;
	int rc;

	if (!p->derived)
		return 0;
	for (unsigned k = 1; k < cnf->n; k++) {
		if (!worth_adding(r, fields, &cnf->set[0], &cnf->set[k])) {
			if (cnf->set[k].n > CHECK_MAX)
				continue;
			if (!(p->check[p->nchecks] = pool_lits(r, &cnf->set[k])))
				return RT_ENOMEM;
			p->ncheck[p->nchecks++] = cnf->set[k].n;
			continue;
		}
		if (!(p->more[p->nconj - 1] = pool_lits(r, &cnf->set[k])))
			return RT_ENOMEM;
		p->nmore[p->nconj - 1] = cnf->set[k].n;
		if ((rc = add_set(r, i, p->nconj++)))
			return rc;
	}
	return 0;
}

/* A pattern's further required sets, kept from the one derivation that
 * first_set made until further_sets needs them: deriving is most of what
 * compiling the rules costs. */
static int keep_further(struct lit_cnf **kept, const struct lit_cnf *cnf)
{
	size_t size;

	*kept = NULL;
	if (cnf->n < 2)
		return 0;
	size = offsetof(struct lit_cnf, set) + cnf->n * sizeof(cnf->set[0]);
	if (!(*kept = malloc(size)))
		return RT_ENOMEM;
	memcpy(*kept, cnf, size);
	return 0;
}

static void free_kept(struct lit_cnf **kept, size_t n)
{
	for (size_t i = 0; kept && i < n; i++)
		free(kept[i]);
	free(kept);
}

static int derive_first_sets(struct rules *r, struct lit_cnf **kept)
{
	struct lit_cnf *cnf = malloc(sizeof(*cnf));
	int rc = 0;

	if (!cnf)
		return RT_ENOMEM;
	for (uint32_t i = 0; i < r->npats && !rc; i++) {
		const char *src = r->pats[i].src;

		lit_derive_cnf(src, strlen(src), cnf);
		if (!(rc = first_set(r, i, cnf)))
			rc = keep_further(&kept[i], cnf);
		r->field_mask |= r->rules[r->pats[i].rule].fields;
	}
	free(cnf);
	return rc;
}

static int build_prefilter(struct rules *r)
{
	size_t n = r->npats;
	struct lit_cnf **kept = calloc(n + 1, sizeof(*kept));
	int rc = RT_ENOMEM;

	if (!kept)
		return RT_ENOMEM;
	for (int f = 0; f < FIELD_COUNT; f++)
		if (!(r->pf[f] = pf_new()) ||
		    !(r->always[f] = malloc((n + 1) * sizeof(uint32_t))))
			goto out;
	if ((rc = derive_first_sets(r, kept)))
		goto out;
	for (uint32_t i = 0; i < n; i++)
		if (kept[i] && (rc = further_sets(r, i, kept[i])))
			goto out;
	for (int f = 0; f < FIELD_COUNT; f++)
		if ((rc = pf_build(r->pf[f])))
			goto out;
out:
	free_kept(kept, n);
	return rc;
}

static int alloc_scratch(struct rules *r)
{
	size_t nl = 1, nc = r->npats * FIELD_COUNT + 1;

	for (int f = 0; f < FIELD_COUNT; f++)
		nl = pf_nlits(r->pf[f]) + 1 > nl ? pf_nlits(r->pf[f]) + 1 : nl;
	r->lit_stamp = calloc(nl, sizeof(uint32_t));
	r->hits = malloc(2 * nl * sizeof(uint32_t));    /* pf_scan_span */
	r->cand_stamp = calloc(nc, sizeof(uint32_t));
	r->conj_stamp = calloc(nc, sizeof(uint32_t));
	r->conj_seen = calloc(nc, 1);
	r->cands = malloc(nc * sizeof(uint32_t));
	r->rule_stamp = calloc(r->nrules + 1, sizeof(uint32_t));
	if (!r->lit_stamp || !r->hits || !r->cand_stamp || !r->conj_stamp ||
	    !r->conj_seen || !r->cands || !r->rule_stamp)
		return RT_ENOMEM;
	r->gen = r->lit_gen = 0;
	memset(r->reason_memo, 0, sizeof(r->reason_memo));
	return 0;
}

int rules_compile(struct rules *r, char *err, size_t errlen)
{
	uint32_t maxcap = 0;
	int rc;

	rules_compile_release(r);
	r->field_mask = 0;
	for (size_t i = 0; i < r->npats; i++) {
		struct rules_pattern *p = &r->pats[i];
		uint32_t cap = 0;

		p->jitted = false;      /* at its first run: rules_jit */
		pcre2_pattern_info(p->code, PCRE2_INFO_CAPTURECOUNT, &cap);
		maxcap = cap > maxcap ? cap : maxcap;
		if ((rc = load_capnames(r, p)))
			goto fail;
	}
	if ((rc = make_match_state(r, maxcap)) || (rc = build_prefilter(r)) ||
	    (rc = alloc_scratch(r)))
		goto fail;
	r->compiled = true;
	return 0;
fail:
	snprintf(err, errlen, "rules: %s", rt_strerror(rc));
	rules_compile_release(r);
	return rc;
}

/* JIT compiling all 500-odd patterns took 60M instructions, half of
 * revtrail's start, and most of them never run on a given input. A JIT
 * failure (no JIT on this CPU, or out of executable memory) is fine:
 * pcre2_match then interprets. */
void rules_jit(struct rules_pattern *p)
{
	if (p->jitted)
		return;
	pcre2_jit_compile(p->code, PCRE2_JIT_COMPLETE);
	p->jitted = true;
}

void rules_set_prefilter(struct rules *r, bool on)
{
	r->prefilter_off = !on;
}
