/*
 * rebuild.c: what changes when the registry learns something, and what an
 * incident row says, decided over rows the store read.
 *
 *  - corr_plan_moves: a release name seen for the first time, or a new
 *    workload mapping, may claim events stored earlier under a workload
 *    name or a shorter release (pod payments-api-7d9c8f4b6-4kx2m stored as
 *    "payments-api" before "payments-api" history arrived is fine;
 *    ConfigMap payments-api-config stored as "payments-api-config" is
 *    not). Both keys of a moved event are then recomputed, which is what
 *    makes attribution independent of whether history came first or last.
 *  - corr_job_target: helm-install job events may move to the namespace
 *    the release lives in.
 *  - corr_plan_revranges: which revision each stored event of a release
 *    shows after its revisions changed.
 *  - corr_plan_diag: an incident's opening revision, the revisions
 *    deployed while it was open, its status (closed once the newest record
 *    seen anywhere is more than the gap past its last event) and its
 *    diagnosis with evidence, remedy and the affected pods, all from the
 *    stored row, so the result depends only on the stored events and
 *    revisions.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"

static const char *dup(struct corr_plan *p, const char *s, size_t n)
{
	return rt_arena_strdup(&p->arena, s ? s : "", s ? n : 0).p;
}

static bool rts_is(struct rt_str a, const char *b)
{
	size_t n = strlen(b);

	return a.n == n && (n == 0 || memcmp(a.p, b, n) == 0);
}

static struct rt_str str(const char *s)
{
	return rt_str_make(s, strlen(s));
}

/* The row attributed again with what the registry knows now; a move when
 * that changes its release. */
static int move_row(struct corr_plan *p, const struct plan_evrow *r,
		    struct plan_move *m, bool *moved)
{
	struct plan_attr a;

	*moved = false;
	corr_attribute_at(p->reg, &p->opts, str(r->rel_ns), str(r->kind),
			  str(r->name), str(r->pod), RT_STR_NULL, RT_STR_NULL,
			  RT_STR_NULL, str(r->workload), r->first_ns, &a);
	if (a.via == PLAN_VIA_NONE ||
	    (a.via == r->via && rts_is(a.release_ns, r->rel_ns) &&
	     rts_is(a.release, r->rel)))
		return 0;
	m->id = r->id;
	m->old_ns = dup(p, r->rel_ns, strlen(r->rel_ns));
	m->old_rel = dup(p, r->rel, strlen(r->rel));
	m->rel_ns = dup(p, a.release_ns.p, a.release_ns.n);
	m->rel = dup(p, a.release.p, a.release.n);
	m->via = a.via;
	m->via_name = corr_via_name(a.via);
	if (!m->old_ns || !m->old_rel || !m->rel_ns || !m->rel)
		return RT_ENOMEM;
	*moved = true;
	return 0;
}

int corr_plan_moves(struct corr_plan *p, const struct plan_evrow *rows,
		    size_t n, struct plan_move **out, size_t *nout)
{
	struct plan_move *m = rt_arena_alloc(&p->arena,
					     (n ? n : 1) * sizeof(*m));
	int err = 0;

	*out = m;
	*nout = 0;
	if (!m)
		return RT_ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		bool moved;

		err = move_row(p, &rows[i], &m[*nout], &moved);
		*nout += moved;
	}
	return err;
}

bool corr_anyns_claims(const struct corr_registry *reg, const char *ns,
		       const char *r)
{
	const struct corr_release *rel;

	if (!*ns)
		return false;
	rel = corr_registry_find(reg, str(ns), str(r));
	return rel && !rel->ns[0];
}

static int rev_cmp(const void *a, const void *b)
{
	const struct corr_rev *x = *(const struct corr_rev *const *)a;
	const struct corr_rev *y = *(const struct corr_rev *const *)b;

	if (x->updated_ns != y->updated_ns)
		return x->updated_ns < y->updated_ns ? -1 : 1;
	return x->revision - y->revision;
}

int corr_plan_revranges(struct corr_plan *p, const struct corr_key *k,
			struct plan_revrange **out, size_t *nout)
{
	const struct corr_release *rel = corr_registry_find(p->reg,
		str(k->ns), str(k->rel));
	const struct corr_rev **v = NULL;
	struct plan_revrange *r;
	int64_t from = INT64_MIN;
	size_t n = 0, nr = 0;
	int prev = 0;

	if (rel && rel->nrevs) {
		v = malloc(rel->nrevs * sizeof(*v));
		if (!v)
			return RT_ENOMEM;
		for (size_t i = 0; i < rel->nrevs; i++)
			if (rel->revs[i].updated_ns > 0)
				v[n++] = &rel->revs[i];
		qsort(v, n, sizeof(*v), rev_cmp);
	}
	r = rt_arena_alloc(&p->arena, (n + 1) * sizeof(*r));
	if (!r) {
		free(v);
		return RT_ENOMEM;
	}
	/* the same intervals corr_release_at() decides by */
	for (size_t i = 0; i < n; i++) {
		int64_t start = v[i]->updated_ns - CORR_SKEW_NS;

		if (from < start)
			r[nr++] = (struct plan_revrange){ prev, from, start };
		from = start;
		prev = v[i]->revision;
	}
	free(v);
	r[nr++] = (struct plan_revrange){ prev, from, INT64_MAX };
	*out = r;
	*nout = nr;
	return 0;
}

int corr_plan_diag(struct corr_plan *p, const struct plan_incrow *row,
		   const struct plan_object *objs, size_t nobjs,
		   int64_t watermark, struct plan_diag *out)
{
	struct plan_tagset tags = { 0 };
	struct corr_incview v = { 0 };
	struct corr_diagnosis *d = p->diag;
	int64_t gap = p->opts.gap_ns;

	corr_tagset_parse(&tags, row->tags, corr_intern_cb, &p->intern);
	v.ns = row->ns;
	v.release = row->rel;
	v.tags = &tags;
	v.objects = objs;
	v.nobjects = nobjs;
	v.gap_ns = gap;
	v.opened_ns = row->opened;
	v.last_ns = row->last;
	v.pods_total = (size_t)row->pods_total;
	v.caps = row->caps;
	v.ncaps = row->ncaps;
	v.sick = row->sick;
	v.nsick = row->nsick;
	v.rel = corr_registry_find(p->reg, str(row->ns), str(row->rel));
	v.opening = corr_release_at(v.rel, v.opened_ns);
	corr_diagnose_rules(p->rules, &v, d);
	memset(out, 0, sizeof(*out));
	corr_later_json(&v, p->later, sizeof(p->later));
	out->later = p->later;
	out->revision = v.opening ? v.opening->revision : 0;
	out->rev_status = v.opening ? v.opening->status : NULL;
	out->closed = v.last_ns + gap < watermark;
	out->closed_ns = v.last_ns + gap;
	if (d->rule) {
		out->diagnosis = d->rule->id;
		out->title = d->rule->title;
		if (d->rule->remedy) {
			out->remedy = corr_remedy(&p->remedy, d->rule->remedy,
						  &v, d);
			if (!out->remedy)
				return RT_ENOMEM;
		}
	} else {
		/* undiagnosed: the tags say what happened */
		corr_untitled(&v, p->title, sizeof(p->title));
		out->title = p->title;
	}
	for (unsigned i = 0; i < d->nevidence; i++)
		p->evidence[i] = d->evidence[i];
	out->evidence = p->evidence;
	out->nevidence = d->nevidence;
	out->pods = d->pods;
	out->npods = d->npods;
	return 0;
}
