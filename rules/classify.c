/*
 * classify.c: tags one record. The prefilter scan of each field a rule reads
 * (with that field's own literals) yields candidate (pattern, field) pairs:
 * patterns one of whose literals of each required set occurs. PCRE2 runs
 * only on those whose rule's unless-literals the field lacks, in catalog
 * order, and the first match of a rule adds its
 * id, tags, severity and named captures. A line that holds no literal costs
 * one scan per field and no PCRE2 call at all.
 */
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"

struct texts {
	struct rt_str f[FIELD_COUNT];
};

/* Generation counters stamp arrays instead of clearing them per record. */
static uint32_t next_gen(uint32_t *gen, uint32_t *stamp, size_t n)
{
	if (++*gen == 0) {
		memset(stamp, 0, n * sizeof(*stamp));
		*gen = 1;
	}
	return *gen;
}

static void add_cand(struct rules *r, size_t *nc, uint32_t pat, unsigned f,
		     uint32_t only)
{
	uint32_t key = pat * FIELD_COUNT + f;

	if (only != RULES_ALL && r->pats[pat].rule != only)
		return;
	if (!(r->rules[r->pats[pat].rule].fields & 1u << f) ||
	    r->cand_stamp[key] == r->gen)
		return;
	r->cand_stamp[key] = r->gen;
	r->cands[(*nc)++] = key;
}

static void add_all(struct rules *r, size_t *nc, unsigned f, uint32_t only)
{
	for (uint32_t p = 0; p < r->npats; p++)
		add_cand(r, nc, p, f, only);
}

/* A literal of set k of pattern pat was found in field f; the pattern is
 * a candidate once every one of its sets has been seen. */
static void add_conj(struct rules *r, size_t *nc, uint32_t pat, unsigned k,
		     unsigned f, uint32_t only)
{
	uint32_t key = pat * FIELD_COUNT + f;
	unsigned all = (1u << r->pats[pat].nconj) - 1;

	if (all == 1) {
		add_cand(r, nc, pat, f, only);
		return;
	}
	if (r->conj_stamp[key] != r->gen) {
		r->conj_stamp[key] = r->gen;
		r->conj_seen[key] = 0;
	}
	r->conj_seen[key] |= (unsigned char)(1u << k);
	if (r->conj_seen[key] == all)
		add_cand(r, nc, pat, f, only);
}

/* Candidates from the nh literals of pf a scan of field f found. raw_too:
 * the text was a span of the raw text or the raw text itself, so the raw
 * field's literals in the message's prefilter count for it as well; a
 * literal found outside the message's span counts for the raw field only. */
static void add_hits(struct rules *r, size_t *nc, const struct pf *pf,
		     int nh, unsigned f, bool raw_too, uint32_t only)
{
	for (int h = 0; h < nh; h++) {
		bool out = r->hits[h] & PF_HIT_OUT;
		size_t np;
		const uint32_t *pays = pf_lit_pats(pf, r->hits[h] & ~PF_HIT_OUT,
						   &np);

		for (size_t k = 0; k < np; k++) {
			unsigned pf_field = pays[k] & PAY_RAW ? FIELD_RAW : f;

			if (pf_field != f ? !raw_too : out)
				continue;
			add_conj(r, nc, pays[k] >> PAY_SHIFT, pays[k] & PAY_SET,
				 pf_field, only);
		}
	}
}

static void add_always(struct rules *r, size_t *nc, unsigned f, uint32_t only)
{
	for (size_t k = 0; k < r->nalways[f]; k++)
		add_cand(r, nc, r->always[f][k], f, only);
}

/* Candidates of field f from one scan of s with the field's prefilter.
 * Returns whether the text made every pattern of f a candidate. */
static bool field_cands(struct rules *r, size_t *nc, struct rt_str s,
			unsigned f, uint32_t only)
{
	const struct pf *pf = r->pf[f];
	uint32_t gen = next_gen(&r->lit_gen, r->lit_stamp, pf_nlits(pf) + 1);
	int nh = pf_scan(pf, s.p, s.n, r->lit_stamp, gen, r->hits);

	if (nh < 0)
		add_all(r, nc, f, only);
	else
		add_hits(r, nc, pf, nh, f, false, only);
	add_always(r, nc, f, only);
	return nh < 0;
}

/* field_cands of the reason field, remembered by its text: the same
 * text and rule selection give the same candidates. A replay skips only
 * the scan. Only this scan adds keys of the reason field, once a record,
 * so they are appended without add_cand's test for one added already. */
static void reason_cands(struct rules *r, size_t *nc, struct rt_str s,
			 uint32_t only)
{
	struct reason_memo *m;
	size_t from = *nc;

	if (s.n > REASON_MEMO_LEN) {
		field_cands(r, nc, s, FIELD_REASON, only);
		return;
	}
	m = &r->reason_memo[rules_hash(s.p, s.n) & (REASON_MEMO_SLOTS - 1)];
	if (m->n == s.n && m->only == only && !memcmp(m->text, s.p, s.n)) {
		for (unsigned k = 0; k < m->ncands; k++) {
			r->cand_stamp[m->cands[k]] = r->gen;
			r->cands[(*nc)++] = m->cands[k];
		}
		return;
	}
	field_cands(r, nc, s, FIELD_REASON, only);
	m->n = 0;
	if (*nc - from > REASON_MEMO_CANDS)
		return;
	m->n = (unsigned char)s.n;
	m->only = only;
	m->ncands = (unsigned char)(*nc - from);
	memcpy(m->text, s.p, s.n);
	memcpy(m->cands, r->cands + from, m->ncands * sizeof(*m->cands));
}

/* Whether inner lies within outer: the message is then a span of raw. */
static bool is_span(struct rt_str inner, struct rt_str outer)
{
	return inner.p && outer.p && inner.p >= outer.p &&
	       inner.p + inner.n <= outer.p + outer.n;
}

/*
 * The message and raw fields when the message is a span of the raw text
 * (a CRI or plain text line, a JSON log's msg): one scan of the raw text
 * with the message's prefilter, which holds the raw field's literals too
 * (whole, for its byte pass: its windows then sample the message alone).
 * It costs the byte pass a few more bytes than a scan of the message
 * alone, where a second scan of the raw bytes around the span cost a call
 * and a byte pass of their own.
 */
static void span_cands(struct rules *r, size_t *nc, struct rt_str raw,
		       struct rt_str msg, uint32_t only)
{
	const struct pf *pf = r->pf[FIELD_MESSAGE];
	size_t nl = pf_nlits(pf) + 1, lo = (size_t)(msg.p - raw.p);
	uint32_t gen_out = next_gen(&r->lit_gen, r->lit_stamp, nl);
	uint32_t gen = next_gen(&r->lit_gen, r->lit_stamp, nl);
	int nh = pf_scan_span(pf, raw.p, raw.n, lo, lo + msg.n, r->lit_stamp,
			      gen, gen_out, r->hits);

	if (nh < 0) {
		add_all(r, nc, FIELD_MESSAGE, only);
		add_all(r, nc, FIELD_RAW, only);
	} else {
		add_hits(r, nc, pf, nh, FIELD_MESSAGE, true, only);
	}
	add_always(r, nc, FIELD_MESSAGE, only);
	add_always(r, nc, FIELD_RAW, only);
}

/*
 * The message and raw fields when the message is a span of the raw text
 * but a small part of it (a Kubernetes Event's message in its JSON): a
 * scan of each with its own prefilter, since the span scan would read
 * the raw bytes around the message with the message's (hundreds of
 * literals, windows and their verification) where the raw field's few
 * literals take the byte pass alone. Every pattern of both fields is a
 * candidate exactly when span_cands would make it one: when the raw text
 * holds a KELVIN SIGN or LONG S and the message's prefilter looks for
 * them (it holds the raw field's literals too).
 */
static __attribute__((noinline)) void
split_cands(struct rules *r, size_t *nc, struct rt_str raw,
			struct rt_str msg, uint32_t only)
{
	bool all = field_cands(r, nc, msg, FIELD_MESSAGE, only);

	all |= field_cands(r, nc, raw, FIELD_RAW, only);
	if (!all && raw.n >= LIT_MIN && pf_caseless(r->pf[FIELD_MESSAGE]) &&
	    !pf_caseless(r->pf[FIELD_RAW]))
		all = pf_has_k_or_s_sign(raw.p, raw.n);
	if (all) {
		add_all(r, nc, FIELD_MESSAGE, only);
		add_all(r, nc, FIELD_RAW, only);
	}
}

/* Whether one scan of the raw text serves the message span better than
 * a scan of each: the raw bytes around the message cost the span scan
 * some 4 instructions each when its windows sample them too (the raw
 * field's literals too many for the byte pass), a scan of its own costs
 * a call and the byte pass over all of the raw text. A CRI line's prefix
 * is short; an Event's JSON around its message is not. */
#define SPAN_SLACK 96
static bool span_pays(struct rt_str msg, struct rt_str raw)
{
	return raw.n - msg.n <= SPAN_SLACK;
}

/* Candidates from every field a rule reads: a scan each, but one for the
 * message and raw fields together when the message is a span of raw that
 * covers most of it. */
static void all_cands(struct rules *r, size_t *nc, const struct texts *t,
		      uint32_t only)
{
	bool raw_on = (r->field_mask & 1u << FIELD_RAW) && t->f[FIELD_RAW].n;
	bool span = raw_on && (r->field_mask & 1u << FIELD_MESSAGE) &&
		    t->f[FIELD_MESSAGE].n &&
		    is_span(t->f[FIELD_MESSAGE], t->f[FIELD_RAW]);

	if (span && span_pays(t->f[FIELD_MESSAGE], t->f[FIELD_RAW]))
		span_cands(r, nc, t->f[FIELD_RAW], t->f[FIELD_MESSAGE], only);
	else if (span)
		split_cands(r, nc, t->f[FIELD_RAW], t->f[FIELD_MESSAGE], only);
	else if ((r->field_mask & 1u << FIELD_MESSAGE) && t->f[FIELD_MESSAGE].n)
		field_cands(r, nc, t->f[FIELD_MESSAGE], FIELD_MESSAGE, only);
	if ((r->field_mask & 1u << FIELD_REASON) && t->f[FIELD_REASON].n)
		reason_cands(r, nc, t->f[FIELD_REASON], only);
	if (raw_on && !span)
		field_cands(r, nc, t->f[FIELD_RAW], FIELD_RAW, only);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void sort_cands(uint32_t *c, size_t n)
{
	if (n > 16) {
		qsort(c, n, sizeof(*c), cmp_u32);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		uint32_t v = c[i];
		size_t j = i;

		for (; j && c[j - 1] > v; j--)
			c[j] = c[j - 1];
		c[j] = v;
	}
}

static bool has_field(const struct rt_class *out, const struct rules_capname *cn)
{
	for (unsigned k = 0; k < out->nfields; k++)
		if (out->fields[k].key.n == cn->len &&
		    !memcmp(out->fields[k].key.p, cn->name, cn->len))
			return true;
	return false;
}

static void add_captures(struct rules *r, const struct rules_pattern *p,
			 struct rt_str text, struct rt_arena *arena,
			 struct rt_class *out)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
	uint32_t novec = pcre2_get_ovector_count(r->md);

	for (uint32_t k = 0; k < p->ncaps && out->nfields < RULES_MAX_FIELDS;
	     k++) {
		const struct rules_capname *cn = &p->caps[k];
		PCRE2_SIZE s, e;
		struct rt_str val;

		if (cn->group >= novec)
			continue;
		s = ov[2 * cn->group];
		e = ov[2 * cn->group + 1];
		if (s == PCRE2_UNSET || e <= s || e > text.n || has_field(out, cn))
			continue;
		val = arena ? rt_arena_strdup(arena, text.p + s, e - s) :
			      rt_str_make(text.p + s, e - s);
		if (!val.p)
			continue;
		out->fields[out->nfields].key = rt_str_make(cn->name, cn->len);
		out->fields[out->nfields++].val = val;
	}
}

/* Tags in catalog order: the rule's tag indexes merged into a sorted,
 * duplicate-free list. */
static void add_tags(struct rules *r, const struct rules_rule *ru,
		     uint32_t *idx, unsigned *n)
{
	for (uint32_t k = 0; k < ru->ntags; k++) {
		uint32_t t = ru->tags[k];
		unsigned j = 0;

		while (j < *n && idx[j] < t)
			j++;
		if ((j < *n && idx[j] == t) || *n == RULES_MAX_TAGS)
			continue;
		memmove(idx + j + 1, idx + j, (*n - j) * sizeof(*idx));
		idx[j] = t;
		(*n)++;
	}
	(void)r;
}

/* The sets the prefilter left out (rules_int.h): a member of each is in
 * s, or the pattern cannot match it -- unless s holds a character the
 * byte compare cannot fold (pf_scan gives up on those likewise). */
static bool checks_pass(const struct rules_pattern *p, struct rt_str s)
{
	for (uint32_t k = 0; k < p->nchecks; k++) {
		bool found = false;

		for (uint32_t j = 0; j < p->ncheck[k] && !found; j++)
			found = pf_contains(s.p, s.n, p->check[k][j],
					    strlen(p->check[k][j]));
		if (!found)
			return pf_has_k_or_s_sign(s.p, s.n);
	}
	return true;
}

/* Whether s holds one of the rule's unless-literals: ASCII without k or
 * s (parse.c), so the byte compare in any ASCII case is what caseless UTF
 * matching would find. Not a prefilter shortcut: it holds without one. */
static bool unless_hit(const struct rules_rule *ru, struct rt_str s)
{
	for (uint32_t k = 0; k < ru->nunless; k++)
		if (pf_contains(s.p, s.n, ru->unless[k], strlen(ru->unless[k])))
			return true;
	return false;
}

static bool limit_error(int rc)
{
	return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	       rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT;
}

/* prefilter: candidates failing their checks are skipped, too. */
static void run_cands(struct rules *r, size_t nc, const struct texts *t,
		      struct rt_arena *arena, struct rt_class *out,
		      bool prefilter)
{
	uint32_t tagidx[RULES_MAX_TAGS];
	unsigned ntag = 0;

	for (size_t i = 0; i < nc; i++) {
		uint32_t pat = r->cands[i] / FIELD_COUNT;
		unsigned f = r->cands[i] % FIELD_COUNT;
		struct rules_pattern *p = &r->pats[pat];
		const struct rules_rule *ru = &r->rules[p->rule];
		struct rt_str s = t->f[f];
		int rc;

		if (r->rule_stamp[p->rule] == r->gen ||
		    (prefilter && !checks_pass(p, s)) || unless_hit(ru, s))
			continue;
		rules_jit(p);
		rc = pcre2_match(p->code, (PCRE2_SPTR)s.p, s.n, 0, 0, r->md,
				 r->mctx);
		if (limit_error(rc))
			out->limit_hits++;
		if (rc < 0)
			continue;
		r->rule_stamp[p->rule] = r->gen;
		if (out->nrules < RULES_MAX_HITS)
			out->rules[out->nrules++] = ru->id;
		if (ru->severity > out->severity)
			out->severity = ru->severity;
		add_tags(r, ru, tagidx, &ntag);
		add_captures(r, p, s, arena, out);
	}
	for (unsigned k = 0; k < ntag; k++)
		out->tags[k] = r->tags[tagidx[k]];
	out->ntags = ntag;
}

/* The candidate (pattern, field) pairs of rec, into r->cands. */
static size_t candidates(struct rules *r, const struct rt_record *rec,
			 struct texts *t, bool prefilter, uint32_t only)
{
	size_t nc = 0;

	t->f[FIELD_MESSAGE] = rec->message.n ? rec->message : rec->raw;
	t->f[FIELD_REASON] = rec->reason;
	t->f[FIELD_RAW] = rec->raw;
	next_gen(&r->gen, r->cand_stamp, r->npats * FIELD_COUNT + 1);
	if (r->gen == 1) {      /* the stamps were just cleared */
		memset(r->rule_stamp, 0, (r->nrules + 1) * sizeof(uint32_t));
		memset(r->conj_stamp, 0,
		       (r->npats * FIELD_COUNT + 1) * sizeof(uint32_t));
	}
	/* Candidates are sorted afterwards, so the field order is free. */
	if (prefilter)
		all_cands(r, &nc, t, only);
	else
		for (unsigned f = 0; f < FIELD_COUNT; f++)
			if ((r->field_mask & 1u << f) && t->f[f].n)
				add_all(r, &nc, f, only);
	return nc;
}

/* deferred: rec's message only holds the real one; -1 when a candidate
 * reads it (see rules_classify_deferred). */
static int classify(struct rules *r, const struct rt_record *rec,
		    struct rt_arena *arena, struct rt_class *out,
		    bool prefilter, uint32_t only, bool deferred)
{
	struct texts t;
	size_t nc;

	out->ntags = out->nrules = out->nfields = out->limit_hits = 0;
	out->severity = RT_SEV_NONE;
	if (!r || !r->compiled || !rec)
		return 0;
	if (!(nc = candidates(r, rec, &t, prefilter, only)))
		return 0;
	for (size_t i = 0; deferred && i < nc; i++)
		if (r->cands[i] % FIELD_COUNT == FIELD_MESSAGE)
			return -1;
	sort_cands(r->cands, nc);
	run_cands(r, nc, &t, arena, out, prefilter);
	return (int)out->ntags;
}

unsigned rules_classify_opt(struct rules *r, const struct rt_record *rec,
			    struct rt_arena *arena, struct rt_class *out,
			    bool prefilter, uint32_t only)
{
	return (unsigned)classify(r, rec, arena, out, prefilter, only, false);
}

int rules_classify_deferred(struct rules *r, const struct rt_record *rec,
			    struct rt_arena *arena, struct rt_class *out)
{
	return classify(r, rec, arena, out, r && !r->prefilter_off, RULES_ALL,
			true);
}

unsigned rules_classify(struct rules *r, const struct rt_record *rec,
			struct rt_arena *arena, struct rt_class *out)
{
	return rules_classify_opt(r, rec, arena, out, r && !r->prefilter_off,
				  RULES_ALL);
}
