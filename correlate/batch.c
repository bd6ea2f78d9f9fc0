/*
 * batch.c: the records of one batch, waiting for the store's transaction.
 *
 * Events are deduplicated here already (a `-w` stream repeats an event many
 * times within seconds), so the store sees each identity once per batch.
 * What the batch keeps (events, revisions, mappings) it copies into its own
 * arena, so the records themselves can live in a scratch arena that the
 * caller resets per chunk: most records are untagged and kept nowhere, and
 * recycling their memory at once keeps it in cache (measured: the 16 MiB a
 * batch of untagged CRI lines used to fill cost page faults and 100
 * commits per 10M lines instead of a handful).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"
#include "revtrail/rt_kit.h"

void corr_record_times(const struct rt_record *rec, int64_t *first,
		       int64_t *last)
{
	int64_t l = rec->ts_ns, f = rec->first_ns;

	if (l <= 0)
		l = f > 0 ? f : 0;
	if (f <= 0 || f > l)
		f = l;
	*first = f;
	*last = l;
}

uint64_t corr_event_key(const struct rt_record *rec)
{
	int64_t first, last;
	uint64_t h;

	if (rec->uid.n) {
		h = rt_hash64(0, "uid", 3);
		if (rec->cluster.n)
			h = rt_hash_str(h, rec->cluster);
		h = rt_hash_str(h, rec->ns);
		return rt_hash_str(h, rec->uid);
	}
	corr_record_times(rec, &first, &last);
	h = rt_hash64(0, "rec", 3);
	if (rec->cluster.n)
		h = rt_hash_str(h, rec->cluster);
	h = rt_hash_str(h, rec->ns);
	h = rt_hash_str(h, rec->kind);
	h = rt_hash_str(h, rec->name);
	h = rt_hash_str(h, rec->pod);
	h = rt_hash_str(h, rec->container);
	h = rt_hash_str(h, rec->stream);
	h = rt_hash_str(h, rec->reason);
	h = rt_hash_str(h, rec->message);
	h = rt_hash_u64(h, (uint64_t)first);
	if (first == 0 && rec->pos.source) {
		/* no time: the position is all that tells two lines apart */
		h = rt_hash64(h, rec->pos.source, strlen(rec->pos.source));
		h = rt_hash_u64(h, rec->pos.offset);
		h = rt_hash_u64(h, (uint64_t)rec->pos.kafka_offset);
	}
	return h;
}

struct corr_batch *corr_batch_new(bool keep_untagged)
{
	struct corr_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	rt_arena_init(&b->arena);
	b->keep_untagged = keep_untagged;
	b->repeat_ns = CORR_REPEAT_NS;
	if (rt_map_reserve(&b->evmap, 512)) {
		free(b);
		return NULL;
	}
	return b;
}

void corr_batch_free(struct corr_batch *b)
{
	if (!b)
		return;
	free(b->ev);
	rt_map_release(&b->evmap);
	free(b->revs);
	free(b->pos);
	free(b->aliases);
	rt_map_release(&b->aliasmap);
	rt_arena_release(&b->arena);
	free(b);
}

void corr_batch_reset(struct corr_batch *b)
{
	rt_map_clear(&b->evmap);
	rt_map_clear(&b->aliasmap);
	b->nev = 0;
	b->nrevs = 0;
	b->npos = 0;
	b->naliases = 0;
	b->alias_last = 0;
	b->max_ts = 0;
	b->newest.top.n = 0;
	b->newest.nrun = 0;
	rt_arena_reset(&b->arena);
}

/* A copy of s in the batch arena; sets *err on allocation failure. */
static struct rt_str keep(struct corr_batch *b, struct rt_str s, int *err)
{
	struct rt_str c;

	if (!s.n)
		return RT_STR_NULL;
	c = rt_arena_strdup(&b->arena, s.p, s.n);
	if (!c.p)
		*err = RT_ENOMEM;
	return c;
}

struct ukey_ctx {
	const struct plan_event *ev;
	uint64_t key;
};

static bool ukey_eq(const void *ctx, uint32_t idx)
{
	const struct ukey_ctx *c = ctx;

	return c->ev[idx].ukey == c->key;
}

/* The index of the pending event of identity key, or RT_MAP_NONE. */
static uint32_t event_find(const struct corr_batch *b, uint64_t key)
{
	struct ukey_ctx c = { b->ev, key };

	return rt_map_find(&b->evmap, key, ukey_eq, &c);
}

static void add_tags(struct plan_event *e, const char *const *tags, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned j;

		for (j = 0; j < e->ntags; j++)
			if (strcmp(e->tags[j], tags[i]) == 0)
				break;
		if (j == e->ntags && e->ntags < RULES_MAX_TAGS)
			e->tags[e->ntags++] = tags[i];
	}
}

static int fill_event(struct corr_batch *b, struct plan_event *e,
		      const struct rt_record *rec, const struct rt_class *cls)
{
	int err = 0;

	e->format = rec->format;
	e->severity = cls->severity;
	e->ns = keep(b, rec->ns, &err);
	e->kind = keep(b, rec->kind, &err);
	e->name = keep(b, rec->name, &err);
	e->pod = keep(b, rec->pod, &err);
	e->container = keep(b, rec->container, &err);
	e->reason = keep(b, rec->reason, &err);
	e->type = keep(b, rec->type, &err);
	e->message = keep(b, rec->message.n ? rec->message : rec->raw, &err);
	e->hint_release = keep(b, rec->release, &err);
	e->hint_ns = keep(b, rec->release_ns, &err);
	e->template_hash = keep(b, rec->template_hash, &err);
	e->owner = keep(b, corr_owner_workload(rec->owner_kind,
					       rec->owner_name,
					       rec->template_hash), &err);
	e->cluster = keep(b, rec->cluster, &err);
	e->source = rec->pos.source;
	e->offset = rec->pos.kafka_offset >= 0 ? (uint64_t)rec->pos.kafka_offset :
		rec->pos.offset;
	e->nfields = cls->nfields < RULES_MAX_FIELDS ? cls->nfields :
		RULES_MAX_FIELDS;
	e->fields = NULL;
	if (e->nfields && !(e->fields = rt_arena_alloc(&b->arena,
			e->nfields * sizeof(*e->fields)))) {
		e->nfields = 0;
		return RT_ENOMEM;
	}
	for (unsigned i = 0; i < e->nfields; i++) {
		e->fields[i].key = cls->fields[i].key;  /* the rules' own */
		e->fields[i].val = keep(b, cls->fields[i].val, &err);
	}
	return err;
}

static int cmp_str(struct rt_str a, struct rt_str b)
{
	size_t n = a.n < b.n ? a.n : b.n;
	int c = n ? memcmp(a.p, b.p, n) : 0;

	return c ? c : (a.n < b.n ? -1 : a.n > b.n);
}

int corr_version_cmp(const struct corr_version *a,
		     const struct corr_version *b)
{
	const struct rt_str *x = &a->message, *y = &b->message;
	int c;

	if (a->last_ns != b->last_ns)
		return a->last_ns < b->last_ns ? -1 : 1;
	for (int i = 0; i < 7; i++)
		if ((c = cmp_str(x[i], y[i])))
			return c;
	return 0;
}

void corr_event_version(const struct plan_event *e, struct corr_version *v)
{
	*v = (struct corr_version){ e->text_ns ? e->text_ns : e->last_ns,
				    e->message, e->reason, e->kind,
				    e->name, e->pod, e->container, e->type };
}

static void record_version(const struct rt_record *rec, int64_t last,
			   struct corr_version *v)
{
	*v = (struct corr_version){ last, rec->message.n ? rec->message :
				    rec->raw, rec->reason, rec->kind, rec->name,
				    rec->pod, rec->container, rec->type };
}

/* Of two release hints, the smaller (namespace, release): any order of
 * the versions gives the same. An empty hint loses. */
static bool hint_wins(struct rt_str ns, struct rt_str rel,
		      const struct plan_event *e)
{
	int c;

	if (!rel.n)
		return false;
	if (!e->hint_release.n)
		return true;
	c = cmp_str(ns, e->hint_ns);
	return c ? c < 0 : cmp_str(rel, e->hint_release) < 0;
}

/* Whether a version names the object e does: a release hint is a label
 * of its own object, and says nothing of another one a reused uid names. */
static bool same_object(const struct plan_event *e, const struct rt_record *rec)
{
	return !cmp_str(e->kind, rec->kind) && !cmp_str(e->name, rec->name) &&
	       !cmp_str(e->pod, rec->pod);
}

/* A duplicate within the batch: the greatest version's text, the widest
 * times and count, every tag; release hints of the versions that name its
 * object. As across batches (store/commit.c), so the row does not depend
 * on whether the versions came in one batch or two. */
static int merge_dup(struct corr_batch *b, struct plan_event *e,
		     const struct rt_record *rec, const struct rt_class *cls,
		     int64_t first, int64_t last)
{
	struct corr_version mine, theirs;
	int err = 0;

	record_version(rec, last, &theirs);
	corr_event_version(e, &mine);
	if (corr_version_cmp(&theirs, &mine) > 0) {
		struct plan_event old = *e;
		bool same = same_object(&old, rec);

		err = fill_event(b, e, rec, cls);
		e->severity = old.severity > cls->severity ? old.severity :
			cls->severity;
		if (same && hint_wins(old.hint_ns, old.hint_release, e)) {
			e->hint_release = old.hint_release;
			e->hint_ns = old.hint_ns;
		}
		e->last_ns = last;
	} else {
		if (cls->severity > e->severity)
			e->severity = cls->severity;
		if (same_object(e, rec) &&
		    hint_wins(rec->release_ns, rec->release, e)) {
			e->hint_release = keep(b, rec->release, &err);
			e->hint_ns = keep(b, rec->release_ns, &err);
		}
	}
	if (first > 0 && (e->first_ns == 0 || first < e->first_ns))
		e->first_ns = first;
	if (rec->count > e->count)
		e->count = rec->count;
	add_tags(e, cls->tags, cls->ntags);
	return err;
}

/* A repeat's time t into its set (in the batch's arena, grown by
 * doubling: the arena's size is what caps a batch). */
static int times_add(struct corr_batch *b, struct plan_event *e, int64_t t)
{
	bool found;
	size_t i = corr_times_find(e->times, e->ntimes, t, &found);

	if (found)
		return 0;
	if (e->ntimes == e->timescap) {
		uint32_t cap = e->timescap ? e->timescap * 2 : 4;
		int64_t *p;

		if (cap > UINT32_MAX / 2 ||
		    !(p = rt_arena_alloc(&b->arena, cap * sizeof(*p))))
			return RT_ENOMEM;
		if (e->ntimes)
			memcpy(p, e->times, e->ntimes * sizeof(*p));
		e->times = p;
		e->timescap = cap;
	}
	memmove(e->times + i + 1, e->times + i,
		(e->ntimes - i) * sizeof(*e->times));
	e->times[i] = t;
	e->count = ++e->ntimes;
	return 0;
}

static int note_position(struct corr_batch *b, const struct rt_record *rec)
{
	struct plan_batch_pos *last = b->npos ? &b->pos[b->npos - 1] : NULL;
	int64_t next;
	int32_t part = rec->pos.partition;

	if (!rec->pos.source)
		return 0;
	next = rec->pos.kafka_offset >= 0 ? rec->pos.kafka_offset + 1 :
		(int64_t)(rec->pos.offset + rec->raw.n);
	/* Every record of a file in turn: the last position noted is
	 * nearly always its own, and a line costs no search. */
	if (last && last->source == rec->pos.source && last->partition == part) {
		if (next > last->offset)
			last->offset = next;
		return 0;
	}
	return corr_batch_position(b, rec->pos.source, part, next);
}

int corr_batch_position(struct corr_batch *b, const char *source,
			int32_t partition, int64_t offset)
{
	for (size_t i = 0; i < b->npos; i++)
		if (b->pos[i].partition == partition &&
		    (b->pos[i].source == source ||
		     strcmp(b->pos[i].source, source) == 0)) {
			if (offset > b->pos[i].offset)
				b->pos[i].offset = offset;
			return 0;
		}
	if (RT_GROW(b->pos, b->npos + 1, b->poscap))
		return RT_ENOMEM;
	b->pos[b->npos++] = (struct plan_batch_pos){ source, partition, offset };
	return 0;
}

static int put_alias(struct corr_batch *b, struct plan_alias *a);

/*
 * The objects a release's manifest creates belong to it, whatever their
 * names and labels: each "Kind/ns/name" line becomes a mapping to the
 * release (corr_object_key: a workload by its name, so its pods follow,
 * any other namespaced object as "Kind/name"), from the revision's time
 * on.
 */
static int add_manifest_aliases(struct corr_batch *b,
				const struct rt_revision *r,
				struct rt_str cluster)
{
	const char *p = r->manifest_objects.p, *e;
	int err = 0;

	if (!p)    /* no manifest: NULL + 0 is undefined behaviour */
		return 0;
	e = p + r->manifest_objects.n;
	while (p < e && !err) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *s1 = memchr(p, '/', (size_t)((nl ? nl : e) - p));
		const char *s2 = s1 ? memchr(s1 + 1, '/',
					     (size_t)((nl ? nl : e) - s1 - 1)) : NULL;
		struct plan_alias a = { .rel_ns = r->ns, .rel = r->release,
					.cluster = cluster,
					.via = PLAN_VIA_MANIFEST,
					.since_ns = r->updated_ns };
		char buf[512];

		if (!nl)
			nl = e;
		if (s2) {
			a.ns = s2 > s1 + 1 ?
				rt_str_make(s1 + 1, (size_t)(s2 - s1 - 1)) : r->ns;
			a.workload = corr_object_key(
				rt_str_make(p, (size_t)(s1 - p)),
				rt_str_make(s2 + 1, (size_t)(nl - s2 - 1)),
				buf, sizeof(buf));
			/* named like its release too: from then on its
			 * own (corr_registry_alias_find) */
			if (a.workload.n)
				err = put_alias(b, &a);
		}
		p = nl + 1;
	}
	return err;
}

static int add_revs(struct corr_batch *b, const struct rt_record *rec)
{
	if (RT_GROW(b->revs, b->nrevs + rec->nrevs, b->revcap))
		return RT_ENOMEM;
	for (size_t i = 0; i < rec->nrevs; i++) {
		const struct rt_revision *r = &rec->revs[i];
		struct rt_revision *c = &b->revs[b->nrevs + i];
		int err = 0;

		*c = *r;
		c->ns = keep(b, r->ns, &err);
		c->release = keep(b, r->release, &err);
		c->status = keep(b, r->status, &err);
		c->chart = keep(b, r->chart, &err);
		c->app_version = keep(b, r->app_version, &err);
		c->description = keep(b, r->description, &err);
		c->hook_configmaps = keep(b, r->hook_configmaps, &err);
		c->manifest_objects = RT_STR_NULL;
		c->manifest_summary = keep(b, r->manifest_summary, &err);
		c->cluster = keep(b, rec->cluster, &err);
		if (err || (r->release.n && r->ns.n &&
			    (err = add_manifest_aliases(b, r, rec->cluster))))
			return err;
	}
	b->nrevs += rec->nrevs;
	b->helm++;
	return 0;
}

static uint64_t alias_hash(const struct plan_alias *a)
{
	uint64_t h = rt_hash_str(rt_hash64(0, "alias", 5), a->ns);

	h = rt_hash_str(h, a->workload);
	h = rt_hash_str(h, a->rel_ns);
	h = rt_hash_str(h, a->rel);
	h = rt_hash64(h, &a->via, sizeof(a->via));
	return rt_hash_str(h, a->cluster);
}

static bool alias_eq(const struct plan_alias *x, const struct plan_alias *y)
{
	const struct rt_str *a = &x->ns, *b = &y->ns;

	if (x->via != y->via)
		return false;
	for (int i = 0; i < 5; i++)     /* ns .. cluster */
		if (a[i].n != b[i].n ||
		    (a[i].n && memcmp(a[i].p, b[i].p, a[i].n) != 0))
			return false;
	return true;
}

struct alias_ctx {
	const struct plan_alias *aliases, *a;
};

static bool alias_is(const void *ctx, uint32_t idx)
{
	const struct alias_ctx *c = ctx;

	return alias_eq(&c->aliases[idx], c->a);
}

/* Keeps each distinct workload -> release mapping of the batch once. */
/* A mapping seen again keeps its first sighting. */
static void alias_since(struct plan_alias *a, int64_t t)
{
	if (t > 0 && (a->since_ns <= 0 || t < a->since_ns))
		a->since_ns = t;
}

static int put_alias(struct corr_batch *b, struct plan_alias *ap)
{
	struct plan_alias a = *ap;
	uint64_t h;
	uint32_t i;
	int err = 0;

	/* a log stream repeats one pod's mapping line after line */
	if (b->alias_last && b->alias_last <= b->naliases &&
	    alias_eq(&b->aliases[b->alias_last - 1], &a)) {
		alias_since(&b->aliases[b->alias_last - 1], a.since_ns);
		return 0;
	}
	h = alias_hash(&a);
	i = rt_map_find(&b->aliasmap, h, alias_is,
			&(struct alias_ctx){ b->aliases, &a });
	if (i != RT_MAP_NONE) {
		b->alias_last = (size_t)i + 1;
		alias_since(&b->aliases[i], a.since_ns);
		return 0;
	}
	if (RT_GROW(b->aliases, b->naliases + 1, b->aliascap))
		return RT_ENOMEM;
	a.ns = keep(b, a.ns, &err);
	a.workload = keep(b, a.workload, &err);
	a.rel_ns = keep(b, a.rel_ns, &err);
	a.rel = keep(b, a.rel, &err);
	a.cluster = keep(b, a.cluster, &err);
	if (err)
		return err;
	if ((err = rt_map_insert(&b->aliasmap, h, (uint32_t)b->naliases)))
		return err;
	b->aliases[b->naliases++] = a;
	b->alias_last = b->naliases;
	return 0;
}

static int add_alias(struct corr_batch *b, const struct rt_record *rec)
{
	struct plan_alias a;
	char buf[512];

	if (corr_record_job_alias(rec, buf, sizeof(buf), &a))
		return put_alias(b, &a);
	return corr_record_alias(rec, &a) ? put_alias(b, &a) : 0;
}

int corr_batch_add(struct corr_batch *b, const struct rt_record *rec,
		   const struct rt_class *cls)
{
	struct plan_event *e;
	int64_t first, last;
	uint64_t key;
	uint32_t i;
	bool repeat;
	int err;

	b->records++;
	if (rec->ts_ns > b->max_ts)
		b->max_ts = rec->ts_ns;
	if ((err = note_position(b, rec)))
		return err;
	/* Helm records feed the registry; the revisions table and the
	 * timeline show them, so they are not events. */
	if (rec->nrevs && rec->revs)
		return add_revs(b, rec);
	/* A revision's time is when it was deployed, not how far the
	 * input has come: it moves no watermark. */
	corr_newest_add(&b->newest, rec->ts_ns);
	/* An untagged record's labels teach as much as a tagged one's. */
	if (rec->release.n && (err = add_alias(b, rec)))
		return err;
	if (cls->ntags)
		b->tagged++;
	else {
		b->untagged++;
		if (!b->keep_untagged)
			return 0;
	}
	corr_record_times(rec, &first, &last);
	repeat = b->repeat_ns > 0 && corr_repeat_is(rec, first, last);
	key = repeat ? corr_repeat_key(rec, cls, first, b->repeat_ns) :
		corr_event_key(rec);
	i = event_find(b, key);
	if (i != RT_MAP_NONE) {
		e = &b->ev[i];
		b->dups++;
		if ((err = merge_dup(b, e, rec, cls, first, last)))
			return err;
		return e->repeat ? times_add(b, e, first) : 0;
	}
	if (RT_GROW(b->ev, b->nev + 1, b->evcap))
		return RT_ENOMEM;
	e = &b->ev[b->nev];
	memset(e, 0, offsetof(struct plan_event, tags));
	e->ukey = key;
	e->first_ns = first;
	e->last_ns = last;
	e->count = rec->count > 0 ? rec->count : 1;
	if ((err = fill_event(b, e, rec, cls)))
		return err;
	add_tags(e, cls->tags, cls->ntags);
	e->repeat = repeat;
	if (repeat && (err = times_add(b, e, first)))
		return err;
	if ((err = rt_map_insert(&b->evmap, key, (uint32_t)b->nev)))
		return err;
	b->nev++;
	return 0;
}

/* Event e as row `row` of its bucket (group: the bucket's row 0), with
 * the n times at t (a slice of its set, which nothing grows again). */
static void repeat_part(struct plan_event *e, uint64_t group, uint32_t row,
			int64_t *t, size_t n)
{
	if (row >= CORR_REPEAT_ROWS) {   /* past the bucket's rows */
		e->repeat = false;
		e->ukey = corr_repeat_single(group, t[0]);
		e->times = NULL;
		e->ntimes = e->timescap = 0;
		n = 1;
	} else {
		e->ukey = corr_repeat_row(group, row);
		e->times = t;
		e->ntimes = e->timescap = (uint32_t)n;
	}
	e->count = (int64_t)n;
	e->first_ns = t[0];
	e->last_ns = t[n - 1];
}

/* A copy of event i at the end of the batch: index, or -1. */
static long repeat_copy(struct corr_batch *b, size_t i)
{
	if (RT_GROW(b->ev, b->nev + 1, b->evcap))
		return -1;
	b->ev[b->nev] = b->ev[i];
	return (long)b->nev++;
}

int corr_batch_repeat_place(struct corr_batch *b, size_t i, uint32_t nrows,
			    const struct plan_stored *last)
{
	struct plan_event *e = &b->ev[i];
	uint64_t group = e->ukey;
	int64_t *rest = e->times;
	size_t nrest = e->ntimes, room = CORR_REPEAT_CAP, n;
	uint32_t row = nrows;
	long k;

	if (!e->text_ns)
		e->text_ns = e->last_ns;
	if (!nrest) {        /* all counted already: the last row again */
		e->ukey = corr_repeat_row(group, nrows ? nrows - 1 : 0);
		e->first_ns = last->first_ns;
		e->last_ns = last->last_ns;
		e->count = last->count;
		return 0;
	}
	if (nrows && last->count < CORR_REPEAT_CAP) {
		row = nrows - 1;
		room = CORR_REPEAT_CAP - (size_t)last->count;
	}
	n = row < CORR_REPEAT_ROWS ? (nrest < room ? nrest : room) : 1;
	repeat_part(e, group, row, rest, n);
	for (rest += n, nrest -= n; nrest; rest += n, nrest -= n) {
		if (row < CORR_REPEAT_ROWS)
			row++;
		n = row >= CORR_REPEAT_ROWS ? 1 : nrest < CORR_REPEAT_CAP ?
			nrest : CORR_REPEAT_CAP;
		if ((k = repeat_copy(b, i)) < 0)
			return RT_ENOMEM;
		repeat_part(&b->ev[k], group, row, rest, n);
	}
	return 0;
}

void corr_batch_attribute(struct corr_batch *b,
			  const struct corr_registry *reg,
			  const struct corr_opts *o)
{
	for (size_t i = 0; i < b->nev; i++) {
		struct plan_event *e = &b->ev[i];
		const struct corr_rev *r;

		corr_attribute_at(reg, o, e->ns, e->kind, e->name, e->pod,
				  e->hint_release, e->hint_ns, e->template_hash,
				  e->owner, e->first_ns, &e->attr);
		r = corr_release_at(corr_registry_find(reg, e->attr.release_ns,
						       e->attr.release),
				    e->first_ns);
		e->revision = r ? r->revision : 0;
	}
}
