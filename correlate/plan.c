/*
 * plan.c: what a batch's events do to the stored ones, decided in memory.
 *
 * Each pending event meets the stored row of its identity (ukey), read by
 * the store: the row is merged (count = max, first = min, last = max, tags
 * = union), or the event is new. Events are then grouped by release and,
 * for each release, laid over the stored incidents near them
 * (corr_cluster): an event extends the incident it falls within the gap
 * of, opens a new one, or bridges two, which merge into the older id.
 * Incident aggregates (counts, severity, tags, objects) are sums and
 * maxima, so extending them needs only the batch's deltas -- the cost of
 * a batch does not grow with the size of the incidents it extends. A
 * release whose events changed hands is instead recomputed from its
 * stored events (rebuild.c). The answers are plan rows (revtrail/plan.h)
 * that the store writes.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"

#define NEAR_BIT ((size_t)1 << (sizeof(size_t) * 8 - 1))

/* ---- containers ----------------------------------------------------- */

/* An element of a string table compared with the bytes (p, n). */
struct bytes_ctx {
	const void *base;
	const char *p;
	size_t n;
};

static bool cstr_is(const char *s, const char *p, size_t n)
{
	return strlen(s) == n && (n == 0 || memcmp(s, p, n) == 0);
}

static bool intern_eq(const void *ctx, uint32_t idx)
{
	const struct bytes_ctx *c = ctx;
	char *const *s = c->base;

	return cstr_is(s[idx], c->p, c->n);
}

const char *corr_intern(struct corr_intern *in, const char *p, size_t n)
{
	uint64_t h = rt_hash64(0, p, n);
	struct bytes_ctx c = { in->s, p, n };
	uint32_t i = rt_map_find(&in->map, h, intern_eq, &c);
	char *s;

	if (i != RT_MAP_NONE)
		return in->s[i];
	if (RT_GROW(in->s, in->n + 1, in->cap) || !(s = malloc(n + 1)))
		return NULL;
	memcpy(s, p, n);
	s[n] = '\0';
	if (rt_map_insert(&in->map, h, (uint32_t)in->n)) {
		free(s);
		return NULL;
	}
	return in->s[in->n++] = s;
}

const char *corr_intern_cb(void *ctx, const char *p, size_t n)
{
	return corr_intern(ctx, p, n);
}

void corr_intern_release(struct corr_intern *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->s[i]);
	free(in->s);
	rt_map_release(&in->map);
	memset(in, 0, sizeof(*in));
}

static const char *dup(struct corr_plan *p, const char *s, size_t n)
{
	return rt_arena_strdup(&p->arena, s ? s : "", s ? n : 0).p;
}

struct key_ctx {
	const struct corr_key *k;
	struct rt_str ns, rel;
};

static bool key_eq(const void *ctx, uint32_t idx)
{
	const struct key_ctx *c = ctx;
	const struct corr_key *k = &c->k[idx];

	return cstr_is(k->ns, c->ns.p, c->ns.n) &&
	       cstr_is(k->rel, c->rel.p, c->rel.n);
}

static uint64_t key_hash(struct rt_str ns, struct rt_str rel)
{
	return rt_hash64(rt_hash64(0, ns.p, ns.n), rel.p, rel.n);
}

static uint32_t key_find(const struct corr_keyset *ks, struct rt_str ns,
			 struct rt_str rel, uint64_t h)
{
	struct key_ctx c = { ks->k, ns, rel };

	return rt_map_find(&ks->map, h, key_eq, &c);
}

bool corr_keyset_has(const struct corr_keyset *ks, struct rt_str ns,
		     struct rt_str rel)
{
	return ks->n && key_find(ks, ns, rel, key_hash(ns, rel)) != RT_MAP_NONE;
}

int corr_keyset_add(struct corr_plan *p, struct corr_keyset *ks,
		    struct rt_str ns, struct rt_str rel)
{
	struct corr_key k;
	uint64_t h = key_hash(ns, rel);
	int err;

	if (rel.n == 0 || key_find(ks, ns, rel, h) != RT_MAP_NONE)
		return 0;
	if (RT_GROW(ks->k, ks->n + 1, ks->cap))
		return RT_ENOMEM;
	k.ns = dup(p, ns.p, ns.n);
	k.rel = dup(p, rel.p, rel.n);
	if (!k.ns || !k.rel)
		return RT_ENOMEM;
	if ((err = rt_map_insert(&ks->map, h, (uint32_t)ks->n)))
		return err;
	ks->k[ks->n++] = k;
	return 0;
}

void corr_keyset_clear(struct corr_keyset *ks)
{
	rt_map_clear(&ks->map);
	ks->n = 0;
}

void corr_keyset_free(struct corr_keyset *ks)
{
	free(ks->k);
	rt_map_release(&ks->map);
	memset(ks, 0, sizeof(*ks));
}

int corr_plan_touch(struct corr_plan *p, int64_t id)
{
	if (p->ntouched && p->touched[p->ntouched - 1] == id)
		return 0;
	if (RT_GROW(p->touched, p->ntouched + 1, p->touchedcap))
		return RT_ENOMEM;
	p->touched[p->ntouched++] = id;
	return 0;
}

struct obj_ctx {
	const struct plan_object *o;
	const char *kind, *name;
	size_t kn, nn;
};

static bool obj_eq(const void *ctx, uint32_t idx)
{
	const struct obj_ctx *c = ctx;
	const struct plan_object *o = &c->o[idx];

	return cstr_is(o->name, c->name, c->nn) &&
	       cstr_is(o->kind, c->kind, c->kn);
}

/* Adds an object's deltas: the earliest first, the latest last, a count. */
static int objmap_add(struct corr_plan *p, const char *kind, size_t kn,
		      const char *name, size_t nn, int64_t first, int64_t last,
		      int64_t events)
{
	struct corr_objmap *m = &p->objs;
	struct plan_object *o;
	uint64_t h = rt_hash64(rt_hash64(0, kind, kn), name, nn);
	struct obj_ctx c = { m->o, kind, name, kn, nn };
	uint32_t i = rt_map_find(&m->map, h, obj_eq, &c);

	if (i != RT_MAP_NONE) {
		o = &m->o[i];
		if (first < o->first_ns)
			o->first_ns = first;
		if (last > o->last_ns)
			o->last_ns = last;
		o->events += events;
		return 0;
	}
	if (RT_GROW(m->o, m->n + 1, m->cap))
		return RT_ENOMEM;
	o = &m->o[m->n];
	o->kind = dup(p, kind, kn);
	o->name = dup(p, name, nn);
	if (!o->kind || !o->name)
		return RT_ENOMEM;
	o->first_ns = first;
	o->last_ns = last;
	o->events = events;
	if (rt_map_insert(&m->map, h, (uint32_t)m->n))
		return RT_ENOMEM;
	m->n++;
	return 0;
}

/* The map's objects into the plan's arena, and the map emptied. */
static int objmap_take(struct corr_plan *p, const struct plan_object **out,
		       size_t *n)
{
	struct corr_objmap *m = &p->objs;
	struct plan_object *v = NULL;

	if (m->n) {
		v = rt_arena_alloc(&p->arena, m->n * sizeof(*v));
		if (!v)
			return RT_ENOMEM;
		memcpy(v, m->o, m->n * sizeof(*v));
	}
	*out = v;
	*n = m->n;
	m->n = 0;
	rt_map_clear(&m->map);
	return 0;
}

/* A ConfigMap or Secret an event names (a "configmap"/"secret" capture)
 * is an affected object of the incident too. */
static int config_objects(struct corr_plan *p, const struct plan_event *e,
			  int64_t events)
{
	for (unsigned i = 0; i < e->nfields; i++) {
		const char *kind = NULL;

		if (rt_str_eq(e->fields[i].key, "configmap"))
			kind = "ConfigMap";
		else if (rt_str_eq(e->fields[i].key, "secret"))
			kind = "Secret";
		if (kind && e->fields[i].val.n) {
			int err = objmap_add(p, kind, strlen(kind),
					     e->fields[i].val.p,
					     e->fields[i].val.n, e->first_ns,
					     e->last_ns, events);
			if (err)
				return err;
		}
	}
	return 0;
}

/* As config_objects, from the stored fields JSON: capture values are
 * Kubernetes names, so a plain scan reads them. */
static int config_fields(struct corr_plan *p, const char *fields,
			 int64_t first, int64_t last)
{
	static const char *const keys[][2] = {
		{ "\"configmap\":\"", "ConfigMap" }, { "\"secret\":\"", "Secret" },
	};

	for (size_t i = 0; i < 2; i++) {
		const char *s = strstr(fields, keys[i][0]), *end;
		int err;

		if (!s)
			continue;
		s += strlen(keys[i][0]);
		end = strchr(s, '"');
		if (!end || end == s)
			continue;
		err = objmap_add(p, keys[i][1], strlen(keys[i][1]), s,
				 (size_t)(end - s), first, last, 1);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the plan's life ------------------------------------------------- */

static int add_glob(struct corr_plan *p, const char *g, size_t n, size_t *cap)
{
	char *s;

	if (RT_GROW(p->globs, p->nglobs + 1, *cap))
		return RT_ENOMEM;
	s = malloc(n + 1);
	if (!s)
		return RT_ENOMEM;
	memcpy(s, g, n);
	s[n] = '\0';
	p->globs[p->nglobs++] = s;
	return 0;
}

/*
 * What a diagnosis reads of an incident's objects besides its first pods:
 * the first ConfigMap, Secret and Job (what remedies name), what the
 * helm-install check looks for, and one object per glob of the rules'
 * `object` conditions.
 */
static int plan_globs(struct corr_plan *p)
{
	static const char *const fixed[] = {
		"ConfigMap/*", "Secret/*", "Job/*", "Pod/helm-install-*",
		"Job/helm-install-*",
	};
	size_t nd = p->rules ? rules_diagnosis_count(p->rules) : 0, cap = 0;
	int err = 0;

	for (size_t i = 0; i < 5 && !err; i++)
		err = add_glob(p, fixed[i], strlen(fixed[i]), &cap);
	for (size_t i = 0; i < nd && !err; i++) {
		const char *g = rules_diagnosis_at(p->rules, i)->object_glob;

		/* an object line may list several globs, blank-separated */
		while (g && !err && *(g += strspn(g, " \t"))) {
			size_t n = strcspn(g, " \t");

			err = add_glob(p, g, n < 255 ? n : 255, &cap);
			g += n;
		}
	}
	return err;
}

int corr_plan_init(struct corr_plan *p, struct corr_registry *reg,
		   const struct corr_opts *o, const struct rules *rules)
{
	memset(p, 0, sizeof(*p));
	p->reg = reg;
	p->opts = *o;
	if (p->opts.gap_ns <= 0)
		p->opts.gap_ns = PLAN_DEFAULT_GAP_NS;
	p->rules = rules;
	rt_arena_init(&p->arena);
	p->diag = malloc(sizeof(*p->diag));
	if (!p->diag)
		return RT_ENOMEM;
	return plan_globs(p);
}

void corr_plan_release(struct corr_plan *p)
{
	for (size_t i = 0; i < p->nglobs; i++)
		free((char *)p->globs[i]);
	free(p->globs);
	rt_arena_release(&p->arena);
	corr_intern_release(&p->intern);
	corr_keyset_free(&p->rebuild);
	corr_keyset_free(&p->revdirty);
	free(p->evs);
	free(p->order);
	free(p->objs.o);
	rt_map_release(&p->objs.map);
	free(p->touched);
	rt_buf_release(&p->remedy);
	free(p->diag);
	memset(p, 0, sizeof(*p));
}

void corr_plan_begin(struct corr_plan *p)
{
	rt_arena_reset(&p->arena);
	corr_keyset_clear(&p->rebuild);
	corr_keyset_clear(&p->revdirty);
	p->ntouched = 0;
	p->objs.n = 0;
	rt_map_clear(&p->objs.map);
}

/* ---- revisions as rows ----------------------------------------------- */

void corr_revision_row(const struct corr_release *rel, const struct corr_rev *r,
		       struct plan_revision *out)
{
	*out = (struct plan_revision){
		rel->ns, rel->name, r->revision, r->status, r->chart,
		r->app_version, r->description, r->updated_ns, r->evidence,
		r->hooks, r->ranks, r->life, false,
	};
}

int corr_registry_load_row(struct corr_registry *reg,
			   const struct plan_revision *row)
{
	struct corr_rev r = {
		.revision = row->revision,
		.status = (char *)row->status,
		.chart = (char *)row->chart,
		.app_version = (char *)row->app_version,
		.description = (char *)row->description,
		.updated_ns = row->updated_ns,
		.evidence = row->evidence,
		.hooks = (char *)row->hooks,
		.ranks = row->ranks,
		.life = row->life,
	};

	if (row->loose)
		return corr_registry_load_loose(reg, row->ns, row->rel, &r);
	return corr_registry_load(reg, row->ns, row->rel, &r);
}

/* ---- events ---------------------------------------------------------- */

static bool rts_is(struct rt_str a, const char *b)
{
	size_t n = b ? strlen(b) : 0;

	return a.n == n && (n == 0 || memcmp(a.p, b, n) == 0);
}

static bool rts_same(struct rt_str a, struct rt_str b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

static void add_tag(struct plan_event *e, const char *tag)
{
	for (unsigned i = 0; i < e->ntags; i++)
		if (strcmp(e->tags[i], tag) == 0)
			return;
	if (e->ntags < RULES_MAX_TAGS)
		e->tags[e->ntags++] = tag;
}

/* Which key a re-seen event keeps: the better attribution, ties by key. */
static bool stored_key_wins(const struct plan_event *e, int via,
			    const char *rns, const char *rel)
{
	int c;

	if (e->attr.via == PLAN_VIA_NONE || via < e->attr.via)
		return true;
	if (via > e->attr.via)
		return false;
	c = strncmp(rns, e->attr.release_ns.p ? e->attr.release_ns.p : "",
		    e->attr.release_ns.n);
	if (c == 0 && strlen(rns) != e->attr.release_ns.n)
		c = 1;
	if (c == 0) {
		c = strncmp(rel, e->attr.release.p, e->attr.release.n);
		if (c == 0 && strlen(rel) != e->attr.release.n)
			c = 1;
	}
	return c < 0;
}

/*
 * The stored version is the greater one (corr_version_cmp): the event
 * shows its text and object again, and the row keeps them. The captures
 * stay those of the row, so the batch's are dropped.
 */
static void keep_stored_text(struct plan_event *e, const struct plan_stored *s)
{
	e->message = s->message;
	e->reason = s->reason;
	e->kind = e->attr.kind = s->kind;
	e->name = e->attr.name = s->name;
	e->pod = s->pod;
	e->container = s->container;
	e->type = s->type;
	e->nfields = 0;
}

static int take_stored_key(struct corr_plan *p, struct plan_event *e, int via,
			   const char *rns, const char *rel)
{
	e->attr.release_ns = rt_str_make(dup(p, rns, strlen(rns)), strlen(rns));
	e->attr.release = rt_str_make(dup(p, rel, strlen(rel)), strlen(rel));
	e->attr.via = via;
	return e->attr.release_ns.p && e->attr.release.p ? 0 : RT_ENOMEM;
}

/* A repeat's times: the union of the batch's and the stored row's, in the
 * plan's arena; count is its size. Unreadable stored times count as
 * none, and the count never falls below the stored one. */
static int merge_times(struct corr_plan *p, struct plan_event *e,
		       const struct plan_stored *s)
{
	int64_t old[CORR_REPEAT_CAP], *u;
	long n = s->times ? corr_times_decode(s->times, s->times_bytes, old,
					      CORR_REPEAT_CAP) : 0;

	if (n < 0)
		n = 0;
	u = rt_arena_alloc(&p->arena, ((size_t)n + e->ntimes + 1) * sizeof(*u));
	if (!u)
		return RT_ENOMEM;
	e->ntimes = (uint32_t)corr_times_union(e->times, e->ntimes, old,
					       (size_t)n, u);
	e->times = u;
	e->timescap = e->ntimes;
	e->count = e->ntimes > s->count ? e->ntimes : s->count;
	return 0;
}

/* What the row's times column says: the set, encoded. */
static int encode_times(struct corr_plan *p, const struct plan_event *e,
			struct plan_evstate *x)
{
	uint8_t *out = rt_arena_alloc(&p->arena,
				      CORR_TIMES_BYTES((size_t)e->ntimes) + 1);

	if (!out)
		return RT_ENOMEM;
	x->times = out;
	x->times_bytes = corr_times_encode(e->times, e->ntimes, out);
	return 0;
}

/*
 * A stored row of the event's identity, merged. The release: of one
 * object, the better attribution (ties by key); when the versions name
 * different objects, the greater version's, and both releases are
 * recomputed from their events (objects counted, incidents). Either way
 * the row does not depend on which version came first.
 */
static int merge_stored(struct corr_plan *p, struct plan_event *e,
			const struct plan_stored *s, struct plan_evstate *x)
{
	struct plan_tagset old = { 0 };
	struct corr_version mine, theirs;
	bool same_obj = rts_same(s->kind, e->attr.kind) &&
			rts_same(s->name, e->attr.name);
	int err;

	x->id = s->id;
	x->inc = s->inc;
	x->old_count = s->count;
	corr_event_version(e, &mine);
	theirs = (struct corr_version){ s->last_ns, s->message, s->reason,
					s->kind, s->name, s->pod,
					s->container, s->type };
	x->newer = corr_version_cmp(&mine, &theirs) > 0;
	if (!x->newer)
		keep_stored_text(e, s);
	if (s->first_ns > 0 && (e->first_ns <= 0 || s->first_ns < e->first_ns))
		e->first_ns = s->first_ns;
	if (s->last_ns > e->last_ns)
		e->last_ns = s->last_ns;
	if (e->repeat && (err = merge_times(p, e, s)))
		return err;
	if (s->count > e->count)
		e->count = s->count;
	if (s->sev > (int)e->severity)
		e->severity = (enum rt_severity)s->sev;
	corr_tagset_parse(&old, s->tags, corr_intern_cb, &p->intern);
	for (unsigned i = 0; i < old.n; i++)
		add_tag(e, old.t[i]);
	if (s->via == PLAN_VIA_NONE)
		return 0;
	if (!same_obj) {
		if (!x->newer &&
		    (err = take_stored_key(p, e, s->via, s->rel_ns, s->rel)))
			return err;
	} else if (rts_is(e->attr.release_ns, s->rel_ns) &&
		   rts_is(e->attr.release, s->rel)) {
		return 0;
	} else if (stored_key_wins(e, s->via, s->rel_ns, s->rel)) {
		return take_stored_key(p, e, s->via, s->rel_ns, s->rel);
	}
	/* The event changes release or object: both keys are recomputed. */
	if ((err = corr_keyset_add(p, &p->rebuild,
				   rt_str_make(s->rel_ns, strlen(s->rel_ns)),
				   rt_str_make(s->rel, strlen(s->rel)))))
		return err;
	return corr_keyset_add(p, &p->rebuild, e->attr.release_ns,
			       e->attr.release);
}

static const char *tags_json(struct corr_plan *p, const struct plan_tagset *t,
			     size_t size)
{
	char buf[2048];

	if (size > sizeof(buf))
		size = sizeof(buf);
	if (corr_tagset_json(t, buf, size) < 0)
		snprintf(buf, sizeof(buf), "[]");
	return dup(p, buf, strlen(buf));
}

int corr_plan_events(struct corr_plan *p, size_t n)
{
	if (n <= p->evscap)
		return 0;
	free(p->evs);
	free(p->order);
	p->evs = malloc(n * sizeof(*p->evs));
	p->order = malloc(n * sizeof(*p->order));
	p->evscap = p->evs && p->order ? n : 0;
	return p->evscap ? 0 : RT_ENOMEM;
}

int corr_plan_event(struct corr_plan *p, struct plan_event *e,
		    const struct plan_stored *s, struct plan_evstate *x)
{
	struct plan_tagset t = { 0 };
	const struct corr_rev *r;
	int err;

	memset(x, 0, sizeof(*x));
	if (s->found && (err = merge_stored(p, e, s, x)))
		return err;
	if (e->repeat && (err = encode_times(p, e, x)))
		return err;
	r = corr_release_at(corr_registry_find(p->reg, e->attr.release_ns,
					       e->attr.release), e->first_ns);
	e->revision = r ? r->revision : 0;
	x->cluster = e->ntags > 0 && e->attr.via != PLAN_VIA_NONE &&
		     e->attr.release.n > 0 && e->first_ns > 0;
	for (unsigned i = 0; i < e->ntags; i++)
		corr_tagset_add(&t, e->tags[i]);
	x->tags = tags_json(p, &t, 1024);
	x->via = corr_via_name(e->attr.via);
	x->workload = corr_object_workload(e->attr.kind, e->attr.name,
					   RT_STR_NULL, e->owner);
	return x->tags ? 0 : RT_ENOMEM;
}

/* ---- grouping ------------------------------------------------------- */

static int cmp_rts(struct rt_str a, struct rt_str b)
{
	size_t n = a.n < b.n ? a.n : b.n;
	int c = n ? memcmp(a.p, b.p, n) : 0;

	return c ? c : (a.n < b.n ? -1 : a.n > b.n);
}

static int order_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct corr_batch *b = ctx;
	const struct plan_event *x = &b->ev[*(const size_t *)pa];
	const struct plan_event *y = &b->ev[*(const size_t *)pb];
	int c = cmp_rts(x->attr.release_ns, y->attr.release_ns);

	if (!c)
		c = cmp_rts(x->attr.release, y->attr.release);
	if (!c && x->first_ns != y->first_ns)
		c = x->first_ns < y->first_ns ? -1 : 1;
	if (!c)
		c = *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
	return c;
}

void corr_plan_order(struct corr_plan *p, const struct corr_batch *b)
{
	for (size_t i = 0; i < b->nev; i++)
		p->order[i] = i;
	qsort_r(p->order, b->nev, sizeof(*p->order), order_cmp, (void *)b);
}

size_t corr_plan_group_end(const struct corr_plan *p,
			   const struct corr_batch *b, size_t a)
{
	const struct plan_event *e = &b->ev[p->order[a]];
	size_t z = a + 1;

	while (z < b->nev &&
	       !cmp_rts(b->ev[p->order[z]].attr.release_ns,
			e->attr.release_ns) &&
	       !cmp_rts(b->ev[p->order[z]].attr.release, e->attr.release))
		z++;
	return z;
}

int corr_plan_group(struct corr_plan *p, const struct corr_batch *b,
		    const size_t *idx, size_t n, struct corr_group *g)
{
	const struct plan_event *e0 = &b->ev[idx[0]];

	memset(g, 0, sizeof(*g));
	g->ns = e0->attr.release_ns;
	g->rel = e0->attr.release;
	g->keyed = e0->attr.via != PLAN_VIA_NONE;
	g->deferred = p->rebuild_all ||
		corr_keyset_has(&p->rebuild, g->ns, g->rel);
	g->cl = rt_arena_alloc(&p->arena, n * sizeof(*g->cl));
	g->incs = rt_arena_alloc(&p->arena, n * sizeof(*g->incs));
	if (!g->cl || !g->incs)
		return RT_ENOMEM;
	g->lo = INT64_MAX;
	g->hi = 0;
	for (size_t i = 0; i < n; i++) {
		const struct plan_evstate *x = &p->evs[idx[i]];
		const struct plan_event *e = &b->ev[idx[i]];

		if (!x->cluster || g->deferred)
			continue;
		g->cl[g->ncl++] = idx[i];
		if (e->first_ns < g->lo)
			g->lo = e->first_ns;
		if (e->last_ns > g->hi)
			g->hi = e->last_ns;
		if (x->inc)
			g->incs[g->nincs++] = x->inc;
	}
	g->lo -= p->opts.gap_ns;
	g->hi += p->opts.gap_ns;
	return 0;
}

/* Something of class 0 open at deploy time t (revclass.c's test: a row
 * before t's skewed start whose gap reaches t), among the group's events
 * and the incidents near it. */
static bool open_at(const struct corr_plan *p, const struct corr_batch *b,
		    const struct corr_group *g, const struct plan_near *near,
		    size_t nnear, int64_t t)
{
	int64_t gap = p->opts.gap_ns, start = t - CORR_SKEW_NS;

	for (size_t i = 0; i < nnear; i++)
		if (near[i].opened < start && near[i].last + gap >= t)
			return true;
	for (size_t i = 0; i < g->ncl; i++) {
		const struct plan_event *e = &b->ev[g->cl[i]];

		int64_t last = e->last_ns > e->first_ns ? e->last_ns :
			       e->first_ns;

		if (e->first_ns < start && last + gap >= t)
			return true;
	}
	return false;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rs_hash(const struct plan_event *e)
{
	struct rt_str rs = corr_pod_replicaset(e->pod);

	return rs.n ? rt_hash64(0, rs.p, rs.n) | 1 : 0;
}

/* A ReplicaSet of the group first met at or after t's skewed start: none
 * of the group's events before (they come in time order) names it. With
 * no memory to tell, assumed. */
static bool new_replicaset(struct corr_plan *p, const struct corr_batch *b,
			   const struct corr_group *g, int64_t t)
{
	uint64_t *before = rt_arena_alloc(&p->arena,
					  (g->ncl + 1) * sizeof(*before));
	int64_t start = t - CORR_SKEW_NS;
	size_t n = 0, i = 0;

	if (!before)
		return true;
	for (; i < g->ncl && b->ev[g->cl[i]].first_ns < start; i++)
		if ((before[n] = rs_hash(&b->ev[g->cl[i]])))
			n++;
	qsort(before, n, sizeof(*before), u64_cmp);
	for (; i < g->ncl; i++) {
		uint64_t h = rs_hash(&b->ev[g->cl[i]]);

		if (h && !bsearch(&h, before, n, sizeof(*before), u64_cmp))
			return true;
	}
	return false;
}

/* Two stored incidents of one class within the gap of each other: a
 * window would merge them, so their classes are not what the store says
 * (a database made before classes were stored). */
static bool near_overlap(const struct corr_plan *p,
			 const struct plan_near *near, size_t nnear)
{
	if (nnear > CORR_CLASSY_NEAR)
		return true;
	for (size_t i = 0; i < nnear; i++)
		for (size_t j = i + 1; j < nnear; j++)
			if (near[i].cls == near[j].cls &&
			    near[i].opened <= near[j].last + p->opts.gap_ns &&
			    near[j].opened <= near[i].last + p->opts.gap_ns)
				return true;
	return false;
}

bool corr_plan_classy(struct corr_plan *p, const struct corr_batch *b,
		      const struct corr_group *g, const struct plan_near *near,
		      size_t nnear)
{
	const struct corr_release *rel = corr_registry_find(p->reg, g->ns,
							    g->rel);
	int64_t lo = g->lo, hi = g->hi;

	if (!rel || !rel->nrevs)
		return false;
	if (near_overlap(p, near, nnear))
		return true;
	for (size_t i = 0; i < nnear; i++)
		if (near[i].opened < lo)
			lo = near[i].opened;
	for (size_t i = 0; i < rel->nrevs; i++) {
		int64_t t = rel->revs[i].updated_ns;

		if (t > 0 && t >= lo && t - CORR_SKEW_NS <= hi &&
		    open_at(p, b, g, near, nnear, t) &&
		    new_replicaset(p, b, g, t))
			return true;
	}
	return false;
}

/* ---- windows -------------------------------------------------------- */

static void aggr_init(struct corr_aggr *a)
{
	memset(a, 0, sizeof(*a));
	a->opened = INT64_MAX;
	a->via = PLAN_VIA_WORKLOAD + 1;
}

static void aggr_span(struct corr_aggr *a, int64_t first, int64_t last,
		      int sev, int via)
{
	if (first < a->opened)
		a->opened = first;
	if (last > a->last)
		a->last = last;
	if (sev > a->sev)
		a->sev = sev;
	if (via < a->via)
		a->via = via;
}

static int aggr_row(struct corr_plan *p, const struct corr_aggr *a,
		    struct plan_agg *out)
{
	*out = (struct plan_agg){ a->opened, a->last, a->count, a->occ, a->sev,
				  a->via, corr_via_name(a->via),
				  tags_json(p, &a->tags, 2048) };
	return out->tags ? 0 : RT_ENOMEM;
}

static bool in_near(const struct plan_near *near, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (near[i].id == id)
			return true;
	return false;
}

/* The aggregates of one window: stored incidents and batch events. */
static void window_aggr(struct corr_plan *p, const struct corr_batch *b,
			const struct corr_item *it, size_t n,
			const struct plan_near *near, size_t nnear,
			struct corr_aggr *a, int64_t *target)
{
	aggr_init(a);
	*target = 0;
	for (size_t i = 0; i < n; i++) {
		if (it[i].idx & NEAR_BIT) {
			const struct plan_near *q = &near[it[i].idx & ~NEAR_BIT];

			aggr_span(a, q->opened, q->last, q->sev, q->via);
			a->count += q->count;
			a->occ = rt_count_add(a->occ, q->occ);
			corr_tagset_parse(&a->tags, q->tags, corr_intern_cb,
					  &p->intern);
			if (!*target || q->id < *target)
				*target = q->id;
			continue;
		}
		const struct plan_event *e = &b->ev[it[i].idx];
		const struct plan_evstate *x = &p->evs[it[i].idx];
		bool counted = x->inc && in_near(near, nnear, x->inc);

		aggr_span(a, e->first_ns, e->last_ns, (int)e->severity,
			  e->attr.via);
		a->count += !counted;
		a->occ = rt_count_add(a->occ, counted ?
				      (e->count > x->old_count ?
				       e->count - x->old_count : 0) : e->count);
		for (unsigned t = 0; t < e->ntags; t++) {
			const char *tag = corr_intern(&p->intern, e->tags[t],
						      strlen(e->tags[t]));

			if (tag)
				corr_tagset_add(&a->tags, tag);
		}
	}
}

static int plan_window(struct corr_plan *p, const struct corr_batch *b,
		       const struct corr_group *g, const struct corr_item *it,
		       size_t n, const struct plan_near *near, size_t nnear,
		       struct plan_window *w)
{
	struct corr_aggr a;
	int64_t *merged = rt_arena_alloc(&p->arena, n * sizeof(*merged));
	size_t *events = rt_arena_alloc(&p->arena, n * sizeof(*events));
	int err;

	if (!merged || !events)
		return RT_ENOMEM;
	memset(w, 0, sizeof(*w));
	window_aggr(p, b, it, n, near, nnear, &a, &w->target);
	w->ns = dup(p, g->ns.p, g->ns.n);
	w->rel = dup(p, g->rel.p, g->rel.n);
	if (!w->ns || !w->rel || (err = aggr_row(p, &a, &w->agg)))
		return RT_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (it[i].idx & NEAR_BIT) {
			int64_t id = near[it[i].idx & ~NEAR_BIT].id;

			if (id != w->target)
				merged[w->nmerged++] = id;
			continue;
		}
		const struct plan_event *e = &b->ev[it[i].idx];
		const struct plan_evstate *x = &p->evs[it[i].idx];
		bool counted = x->inc && in_near(near, nnear, x->inc);

		events[w->nevents++] = it[i].idx;
		if (e->attr.name.n &&
		    (err = objmap_add(p, e->attr.kind.p ? e->attr.kind.p : "",
				      e->attr.kind.n, e->attr.name.p,
				      e->attr.name.n, e->first_ns, e->last_ns,
				      !counted)))
			return err;
		if ((err = config_objects(p, e, !counted)))
			return err;
	}
	w->merged = merged;
	w->events = events;
	w->cls = it[0].cls;
	w->recount = w->nmerged > 0;
	return objmap_take(p, &w->objs, &w->nobjs);
}

int corr_plan_windows(struct corr_plan *p, const struct corr_batch *b,
		      const struct corr_group *g, const struct plan_near *near,
		      size_t nnear, struct plan_window **out, size_t *nout)
{
	size_t ni = g->ncl + nnear, nw, a, k = 0;
	struct corr_item *it = malloc(ni * sizeof(*it));
	struct plan_window *w = NULL;
	int err = RT_ENOMEM;

	*out = NULL;
	*nout = 0;
	if (!it)
		return err;
	for (size_t i = 0; i < g->ncl; i++) {
		const struct plan_event *e = &b->ev[g->cl[i]];

		it[i] = (struct corr_item){ e->first_ns, e->last_ns, g->cl[i],
					    0, p->evs[g->cl[i]].cls };
	}
	for (size_t j = 0; j < nnear; j++)
		it[g->ncl + j] = (struct corr_item){ near[j].opened, near[j].last,
						     j | NEAR_BIT, 0,
						     near[j].cls };
	nw = corr_cluster(it, ni, p->opts.gap_ns);
	w = rt_arena_alloc(&p->arena, (nw ? nw : 1) * sizeof(*w));
	if (!w)
		goto out;
	err = 0;
	for (a = 0; a < ni && !err; k++) {
		size_t z = a;

		while (z < ni && it[z].cluster == it[a].cluster)
			z++;
		err = plan_window(p, b, g, it + a, z - a, near, nnear, &w[k]);
		a = z;
	}
	*out = w;
	*nout = k;
out:
	free(it);
	return err;
}

/* ---- rebuild: a release's windows from its stored events ------------- */

static const struct corr_release *key_release(const struct corr_plan *p,
					      const struct corr_key *k)
{
	return corr_registry_find(p->reg, rt_str_make(k->ns, strlen(k->ns)),
				  rt_str_make(k->rel, strlen(k->rel)));
}

int corr_rebuild_begin(struct corr_plan *p, struct corr_rebuild *rb,
		       const struct corr_key *k, const int64_t *old,
		       size_t nold)
{
	int err = RT_ENOMEM;

	memset(rb, 0, sizeof(*rb));
	rb->k = *k;
	rb->nold = rb->oldcap = nold;
	rb->pass = CORR_PASS_ALL;
	rb->old = malloc((nold + 1) * sizeof(*rb->old));
	rb->used = calloc(nold + 1, sizeof(*rb->used));
	rb->rc = malloc(sizeof(*rb->rc));
	if (rb->old && nold)
		memcpy(rb->old, old, nold * sizeof(*old));
	if (rb->old && rb->used && rb->rc &&
	    !(err = corr_revclass_init(rb->rc, key_release(p, k),
				       p->opts.gap_ns)))
		return 0;
	if (rb->rc)
		corr_revclass_release(rb->rc);
	free(rb->rc);
	free(rb->used);
	free(rb->old);
	memset(rb, 0, sizeof(*rb));
	return err;
}

int corr_rebuild_made(struct corr_rebuild *rb, int64_t id)
{
	size_t cap = rb->oldcap;
	int err;

	if (rb->pass != CORR_PASS_ALL)
		return 0;
	for (size_t i = 0; i < rb->nold; i++)
		if (rb->old[i] == id)
			return 0;
	if ((err = RT_GROW(rb->old, rb->nold + 1, rb->oldcap)))
		return err;
	if (rb->oldcap != cap) {
		bool *u = realloc(rb->used, rb->oldcap * sizeof(*u));

		if (!u)
			return RT_ENOMEM;
		rb->used = u;
	}
	rb->old[rb->nold] = id;
	rb->used[rb->nold++] = true;
	return 0;
}

static int rebuild_finish(struct corr_plan *p, struct corr_rebuild *rb,
			  struct plan_rebuilt *done)
{
	int err;

	rb->open = false;
	for (size_t i = 0; i < rb->nold; i++)
		if (rb->old[i] == rb->cand)
			rb->used[i] = true;
	memset(done, 0, sizeof(*done));
	done->ns = rb->k.ns;
	done->rel = rb->k.rel;
	done->id = rb->cand;
	done->first_min = rb->first_min;
	done->first_max = rb->first_max;
	done->byid = rb->pass != CORR_PASS_ALL;
	done->cls = done->byid ? rb->pass : 0;
	if (done->byid && rb->nids) {
		int64_t *ids = rt_arena_alloc(&p->arena,
					      rb->nids * sizeof(*ids));

		if (!ids)
			return RT_ENOMEM;
		memcpy(ids, rb->ids, rb->nids * sizeof(*ids));
		done->ids = ids;
		done->nids = rb->nids;
		rb->nids = 0;
	}
	if ((err = aggr_row(p, &rb->a, &done->agg)))
		return err;
	return objmap_take(p, &done->objs, &done->nobjs);
}

static int add_class(struct corr_rebuild *rb, int cls)
{
	int err;

	for (size_t i = 0; i < rb->nclasses; i++)
		if (rb->classes[i] == cls)
			return 0;
	if ((err = RT_GROW(rb->classes, rb->nclasses + 1, rb->classcap)))
		return err;
	rb->classes[rb->nclasses++] = cls;
	return 0;
}

/* The row's class against the pass: 1 when the pass takes it. */
static int rebuild_class(struct corr_rebuild *rb, const struct plan_keyrow *row)
{
	const char *pod = row->pod ? row->pod : "";
	int cls, err;

	if ((err = corr_revclass_next(rb->rc, rt_str_make(pod, strlen(pod)),
				      row->first, row->last, &cls)))
		return err;
	if (rb->pass == CORR_PASS_ALL) {
		rb->classy |= cls != 0;
		return cls == 0;
	}
	if (rb->pass == 0 && cls && (err = add_class(rb, cls)))
		return err;
	return cls == rb->pass;
}

int corr_rebuild_row(struct corr_plan *p, struct corr_rebuild *rb,
		     const struct plan_keyrow *row, struct plan_rebuilt *done)
{
	int64_t first = row->first, last = row->last;
	int fin = 0, err;

	if ((err = rebuild_class(rb, row)) <= 0)
		return err;
	if (last < first)
		last = first;
	if (rb->open && first - rb->a.last > p->opts.gap_ns) {
		if ((err = rebuild_finish(p, rb, done)))
			return err;
		fin = 1;
	}
	if (!rb->open) {
		aggr_init(&rb->a);
		rb->open = true;
		rb->first_min = first;
		rb->cand = 0;
	}
	if (rb->pass != CORR_PASS_ALL) {
		if ((err = RT_GROW(rb->ids, rb->nids + 1, rb->idscap)))
			return err;
		rb->ids[rb->nids++] = row->id;
	}
	rb->first_max = first;
	aggr_span(&rb->a, first, last, row->sev, row->via);
	rb->a.count++;
	rb->a.occ = rt_count_add(rb->a.occ, row->count);
	corr_tagset_parse(&rb->a.tags, row->tags, corr_intern_cb, &p->intern);
	for (size_t i = 0; row->inc && i < rb->nold; i++)
		if (rb->old[i] == row->inc && !rb->used[i] &&
		    (!rb->cand || row->inc < rb->cand))
			rb->cand = row->inc;
	if (*row->name && (err = objmap_add(p, row->kind, strlen(row->kind),
					    row->name, strlen(row->name),
					    first, last, 1)))
		return err;
	if ((err = config_fields(p, row->fields, first, last)))
		return err;
	return fin;
}

bool corr_rebuild_next_pass(struct corr_plan *p, struct corr_rebuild *rb,
			    int *err)
{
	*err = 0;
	if (!rb->classy || rb->passno > rb->nclasses)
		return false;
	/* the first pass's windows are all made again */
	if (rb->pass == CORR_PASS_ALL)
		memset(rb->used, 0, rb->nold * sizeof(*rb->used));
	rb->pass = rb->passno ? rb->classes[rb->passno - 1] : 0;
	rb->passno++;
	rb->open = false;
	rb->nids = 0;
	p->objs.n = 0;
	rt_map_clear(&p->objs.map);
	corr_revclass_release(rb->rc);
	*err = corr_revclass_init(rb->rc, key_release(p, &rb->k),
				  p->opts.gap_ns);
	return !*err;
}

int corr_rebuild_end(struct corr_plan *p, struct corr_rebuild *rb,
		     struct plan_rebuilt *done)
{
	int err;

	if (!rb->open)
		return 0;
	if ((err = rebuild_finish(p, rb, done)))
		return err;
	return 1;
}

size_t corr_rebuild_unused(struct corr_rebuild *rb, int64_t *out)
{
	size_t n = 0;

	for (size_t i = 0; out && i < rb->nold; i++)
		if (!rb->used[i])
			out[n++] = rb->old[i];
	free(rb->used);
	free(rb->old);
	rb->used = NULL;
	rb->old = NULL;
	if (rb->rc)
		corr_revclass_release(rb->rc);
	free(rb->rc);
	free(rb->classes);
	free(rb->ids);
	rb->rc = NULL;
	rb->classes = NULL;
	rb->ids = NULL;
	return n;
}
