/*
 * registry.c: the release registry, per (namespace, release) its revisions.
 *
 * Helm states a revision many times and the statements disagree over time: a
 * storage Secret says "deployed", a later `helm history` says "superseded".
 * Input order must not matter, so a merge is a max, never "last write wins":
 * every field keeps the value stated with the most advanced status (its rank,
 * kept per field in corr_rev.ranks), ties broken by the larger value. Max is
 * commutative, so any arrival order gives the same registry.
 *
 * Small by nature (releases x revisions, Helm keeps 10 by default): loaded
 * whole from the store at start, strings malloc'ed. Its names come from
 * cluster data, so it is bounded all the same: a byte budget over
 * everything it allocates (corr_registry_set_budget) and at most
 * CORR_RELEASE_REVS revisions per release, the highest numbers. What does
 * not fit is refused (RT_ELIMIT) and counted (corr_registry_refused):
 * the registry stops growing, nothing held is dropped for a newcomer,
 * except a release's lowest revision for a higher one.
 */
#include <ctype.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>
#include <strings.h>

#include "revtrail/correlate.h"
#include "revtrail/rt_kit.h"

/* One release a workload was mapped to, from its first sighting on. */
struct alias_ent {
	char *rel_ns, *rel;
	int via;                       /* PLAN_VIA_LABEL or PLAN_VIA_MANIFEST */
	int64_t since;                 /* first sighting; 0: unknown, always */
};

/* A learned workload -> release mapping (see correlate.h): every release
 * it was seen in, each with when that began. */
struct alias {
	char *ns, *workload;
	struct alias_ent *ents;
	size_t nents;
};

struct corr_registry {
	struct corr_release **rels;    /* count of them, room for relcap */
	size_t count, relcap;
	struct rt_map bykey;           /* (ns, name) -> index into rels */
	struct rt_map byname;          /* name alone -> the smallest ns's */
	uint64_t lens;                 /* len_bit of every release's name */
	struct alias **aliases;        /* acount of them, room for acap */
	size_t acount, acap;
	struct rt_map amap;            /* (ns, workload) -> index */
	size_t bytes, budget;          /* allocated (estimated), the limit */
	uint64_t refused;              /* merges refused for the budget */
};

enum { F_STATUS, F_CHART, F_APPVER, F_DESC, F_UPDATED };

#define REVS_FIRST 8                   /* a new release's room for revisions */
#define REL_SLOTS_FIRST 64             /* the release tables' first size */

static unsigned rank_get(uint32_t ranks, int f)
{
	return (ranks >> (4 * f)) & 15u;
}

static void rank_set(uint32_t *ranks, int f, unsigned r)
{
	*ranks = (*ranks & ~(15u << (4 * f))) | ((r & 15u) << (4 * f));
}

unsigned corr_status_rank(const char *s, size_t n)
{
	static const struct { const char *name; unsigned rank; } tab[] = {
		{ "unknown", 1 }, { "pending-install", 2 },
		{ "pending-upgrade", 2 }, { "pending-rollback", 2 },
		{ "deployed", 3 }, { "failed", 4 }, { "superseded", 5 },
		{ "uninstalling", 6 }, { "uninstalled", 7 },
	};

	if (!s || n == 0)
		return 0;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].name) == n && strncasecmp(s, tab[i].name, n) == 0)
			return tab[i].rank;
	return 1;
}

static uint64_t key_hash(struct rt_str ns, struct rt_str name)
{
	uint64_t h = rt_hash64(0, ns.p, ns.n);

	h = rt_hash64(h, "", 1);
	return rt_hash64(h, name.p, name.n);
}

static bool str_is(const char *s, struct rt_str v)
{
	return strlen(s) == v.n && (v.n == 0 || memcmp(s, v.p, v.n) == 0);
}

/* ---- the budget ------------------------------------------------------ */

/* What malloc takes for n bytes, about: its header, 16-byte rounding. */
static size_t cost(size_t n)
{
	return (n + 8 + 15) & ~(size_t)15;
}

static size_t str_cost(const char *s)
{
	return s ? cost(strlen(s) + 1) : 0;
}

/* What the release tables of n slots take: two maps and the array of
 * the n / 2 releases they index. */
static size_t rel_tables_cost(size_t n)
{
	return 2 * cost(n * sizeof(uint64_t)) +
	       cost(n / 2 * sizeof(struct corr_release *));
}

/* The same for the mappings: one map and its array. */
static size_t alias_tables_cost(size_t n)
{
	return cost(n * sizeof(uint64_t)) +
	       cost(n / 2 * sizeof(struct alias *));
}

/* Takes n more bytes, or refuses (RT_ELIMIT, counted) past the budget. */
static int charge(struct corr_registry *reg, size_t n)
{
	if (reg->bytes > reg->budget || n > reg->budget - reg->bytes) {
		reg->refused++;
		return RT_ELIMIT;
	}
	reg->bytes += n;
	return 0;
}

/* Replaces *dst by p (both owned), charging the difference. */
static int swap_str(struct corr_registry *reg, char **dst, char *p)
{
	size_t old = str_cost(*dst), add = str_cost(p);

	if (add > old && charge(reg, add - old)) {
		free(p);
		return RT_ELIMIT;
	}
	reg->bytes -= add > old ? 0 : old - add;
	free(*dst);
	*dst = p;
	return 0;
}

struct corr_registry *corr_registry_new(void)
{
	struct corr_registry *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	if (rt_map_reserve(&reg->bykey, REL_SLOTS_FIRST / 2) ||
	    rt_map_reserve(&reg->byname, REL_SLOTS_FIRST / 2) ||
	    RT_GROW(reg->rels, REL_SLOTS_FIRST / 2, reg->relcap)) {
		corr_registry_free(reg);
		return NULL;
	}
	reg->budget = CORR_REGISTRY_BYTES;
	reg->bytes = cost(sizeof(*reg)) + rel_tables_cost(REL_SLOTS_FIRST);
	return reg;
}

void corr_registry_set_budget(struct corr_registry *reg, size_t bytes)
{
	reg->budget = bytes;
}

size_t corr_registry_bytes(const struct corr_registry *reg)
{
	return reg->bytes;
}

uint64_t corr_registry_refused(const struct corr_registry *reg)
{
	return reg->refused;
}

static void rev_release(struct corr_registry *reg, struct corr_rev *r)
{
	char *s[] = { r->status, r->chart, r->app_version, r->description,
		      r->hooks };

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		reg->bytes -= str_cost(s[i]);
		free(s[i]);
	}
}

static void alias_free(struct alias *a)
{
	if (!a)
		return;
	free(a->ns);
	free(a->workload);
	for (size_t i = 0; i < a->nents; i++) {
		free(a->ents[i].rel_ns);
		free(a->ents[i].rel);
	}
	free(a->ents);
	free(a);
}

void corr_registry_free(struct corr_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->acount; i++)
		alias_free(reg->aliases[i]);
	free(reg->aliases);
	rt_map_release(&reg->amap);
	for (size_t i = 0; i < reg->count; i++) {
		struct corr_release *rel = reg->rels[i];

		for (size_t j = 0; j < rel->nrevs; j++)
			rev_release(reg, &rel->revs[j]);
		for (size_t j = 0; j < rel->nloose; j++) {
			rev_release(reg, &rel->loose[j].u);
			rev_release(reg, &rel->loose[j].own);
		}
		free(rel->revs);
		free(rel->loose);
		free(rel->ns);
		free(rel->name);
		free(rel);
	}
	free(reg->rels);
	rt_map_release(&reg->bykey);
	rt_map_release(&reg->byname);
	free(reg);
}

size_t corr_registry_count(const struct corr_registry *reg)
{
	return reg->count;
}

struct rel_ctx {
	struct corr_release *const *rels;
	struct rt_str ns, name;
};

static bool rel_is(const void *ctx, uint32_t i)
{
	const struct rel_ctx *c = ctx;

	return str_is(c->rels[i]->ns, c->ns) &&
	       str_is(c->rels[i]->name, c->name);
}

static struct corr_release *rel_lookup(const struct corr_registry *reg,
				       struct rt_str ns, struct rt_str name)
{
	struct rel_ctx c = { reg->rels, ns, name };
	uint32_t i = rt_map_find(&reg->bykey, key_hash(ns, name), rel_is, &c);

	return i == RT_MAP_NONE ? NULL : reg->rels[i];
}

/* The index of the by-name table's release of this name, or RT_MAP_NONE;
 * it leaves *it at that slot. */
static uint32_t name_find(const struct corr_registry *reg, struct rt_str name,
			  struct rt_map_iter *it)
{
	uint32_t i;

	rt_map_iter_init(&reg->byname, it, rt_hash64(0, name.p, name.n));
	while ((i = rt_map_next(&reg->byname, it)) != RT_MAP_NONE &&
	       !str_is(reg->rels[i]->name, name))
		;
	return i;
}

/* rels[idx] into the by-name table, where the smallest namespace stays.
 * The table has room (grow). */
static void byname_put(struct corr_registry *reg, uint32_t idx)
{
	const struct corr_release *rel = reg->rels[idx];
	struct rt_str name = rt_str_make(rel->name, strlen(rel->name));
	struct rt_map_iter it;
	uint32_t i = name_find(reg, name, &it);

	if (i == RT_MAP_NONE)
		rt_map_insert(&reg->byname, rt_hash64(0, name.p, name.n), idx);
	else if (strcmp(rel->ns, reg->rels[i]->ns) < 0)
		rt_map_replace(&reg->byname, &it, idx);
}

/* Bit min(n, 63) of a name's length n. */
static uint64_t len_bit(size_t n)
{
	return (uint64_t)1 << (n < 63 ? n : 63);
}

/* Most names asked about are no release's: every stored event's pod name
 * and each of its '-' prefixes (corr_registry_longest_prefix), its
 * inferred workload. The lengths of the names held answer most of those
 * without hashing anything: on the bench's Events, where no release is
 * known, that was 30 hashes a stored event, 1.3% of ingest's
 * instructions. */
const struct corr_release *corr_registry_find(const struct corr_registry *reg,
					      struct rt_str ns,
					      struct rt_str name)
{
	const struct corr_release *rel;

	if (name.n == 0 || !(reg->lens & len_bit(name.n)))
		return NULL;
	rel = rel_lookup(reg, ns, name);
	/* History stated without a namespace (`helm history NAME` with no
	 * -n) stands for the release in any namespace that has no own. */
	if (!rel && ns.n)
		rel = rel_lookup(reg, RT_STR_LIT(""), name);
	return rel;
}

/* Room for the releases of a table of n slots, charged before it is
 * taken (n / 2 releases at most: half full). */
static int grow(struct corr_registry *reg)
{
	size_t n = reg->bykey.nslots * 2;
	int err;

	if ((err = charge(reg, rel_tables_cost(n))))
		return err;
	if (rt_map_reserve(&reg->bykey, n / 2) ||
	    rt_map_reserve(&reg->byname, n / 2) ||
	    RT_GROW(reg->rels, n / 2, reg->relcap))
		return RT_ENOMEM;
	reg->bytes -= rel_tables_cost(n / 2);
	return 0;
}

static char *dup_str(struct rt_str s)
{
	char *p = malloc(s.n + 1);

	if (p) {
		if (s.n)
			memcpy(p, s.p, s.n);
		p[s.n] = '\0';
	}
	return p;
}

/* Finds or creates the release into *out; *created tells which. Returns
 * 0, RT_ENOMEM or RT_ELIMIT. */
static int release_get(struct corr_registry *reg, struct rt_str ns,
		       struct rt_str name, struct corr_release **out,
		       bool *created)
{
	struct corr_release *rel;
	int err;

	*created = false;
	if ((*out = rel_lookup(reg, ns, name)))
		return 0;
	if ((reg->count + 1) * 2 > reg->bykey.nslots && (err = grow(reg)))
		return err;
	/* With room for its first revisions: a release is never held
	 * without one. */
	if ((err = charge(reg, cost(sizeof(*rel)) + cost(ns.n + 1) +
			  cost(name.n + 1) + REVS_FIRST * sizeof(*rel->revs))))
		return err;
	rel = calloc(1, sizeof(*rel));
	if (!rel)
		return RT_ENOMEM;
	rel->ns = dup_str(ns);
	rel->name = dup_str(name);
	rel->revs = malloc(REVS_FIRST * sizeof(*rel->revs));
	rel->cap = REVS_FIRST;
	if (!rel->ns || !rel->name || !rel->revs) {
		free(rel->ns);
		free(rel->name);
		free(rel->revs);
		free(rel);
		return RT_ENOMEM;
	}
	/* no allocation: grow made room */
	reg->rels[reg->count] = rel;
	rt_map_insert(&reg->bykey, key_hash(ns, name), (uint32_t)reg->count);
	byname_put(reg, (uint32_t)reg->count);
	reg->count++;
	reg->lens |= len_bit(name.n);
	*created = true;
	*out = rel;
	return 0;
}

static int revs_grow(struct corr_registry *reg, struct corr_release *rel)
{
	size_t cap = rel->cap * 2;
	struct corr_rev *p;
	int err;

	if ((err = charge(reg, (cap - rel->cap) * sizeof(*p))))
		return err;
	if (!(p = realloc(rel->revs, cap * sizeof(*p))))
		return RT_ENOMEM;
	rel->revs = p;
	rel->cap = cap;
	return 0;
}

/* Whether a statement of revision n at time t is entry r: the same
 * number, and times that agree (a second's text against a payload's
 * nanoseconds, a Secret's creation against its last_deployed) or one of
 * them unknown. Two statements of a number further apart are two
 * installs of the release: an uninstall and install again start over at
 * revision 1. */
static bool same_instance(const struct corr_rev *r, int n, int64_t t)
{
	int64_t d;

	if (r->revision != n)
		return false;
	if (!t || !r->updated_ns)
		return true;
	d = r->updated_ns > t ? r->updated_ns - t : t - r->updated_ns;
	return d <= CORR_LIFE_SLACK_NS;
}

/* The entry of revision n at time t: a timed statement takes the entry
 * whose time agrees (or the number's untimed one), an untimed statement
 * the number's newest entry. -1 when none. */
static ssize_t rev_find(const struct corr_release *rel, int n, int64_t t)
{
	ssize_t best = -1;

	for (size_t i = 0; i < rel->nrevs; i++) {
		const struct corr_rev *r = &rel->revs[i];

		if (!same_instance(r, n, t))
			continue;
		if (t && r->updated_ns)
			return (ssize_t)i;
		if (best < 0 || r->updated_ns > rel->revs[best].updated_ns)
			best = (ssize_t)i;
	}
	return best;
}

/* Finds or appends the entry of revision n at time t into *out (relife
 * puts it in place); a full release gives up its oldest entry for a
 * newer one, and refuses an older one (RT_ELIMIT). *created tells
 * whether the entry is new. */
static int rev_get(struct corr_registry *reg, struct corr_release *rel, int n,
		   int64_t t, struct corr_rev **out, bool *created)
{
	ssize_t i = rev_find(rel, n, t);
	int err;

	*created = false;
	if (i >= 0) {
		*out = &rel->revs[i];
		return 0;
	}
	if (rel->nrevs == CORR_RELEASE_REVS) {
		const struct corr_rev *old = &rel->revs[0];

		if (t && old->updated_ns ? t < old->updated_ns ||
		    (t == old->updated_ns && n < old->revision) :
		    n < old->revision) {
			reg->refused++;
			return RT_ELIMIT;
		}
		rev_release(reg, &rel->revs[0]);
		memmove(&rel->revs[0], &rel->revs[1],
			--rel->nrevs * sizeof(*rel->revs));
	} else if (rel->nrevs == rel->cap && (err = revs_grow(reg, rel))) {
		return err;
	}
	*out = &rel->revs[rel->nrevs++];
	memset(*out, 0, sizeof(**out));
	(*out)->revision = n;
	*created = true;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct corr_rev *x = *(const struct corr_rev *const *)a;
	const struct corr_rev *y = *(const struct corr_rev *const *)b;

	if (x->updated_ns != y->updated_ns)
		return x->updated_ns < y->updated_ns ? -1 : 1;
	return (x->revision > y->revision) - (x->revision < y->revision);
}

static int by_life(const void *a, const void *b)
{
	const struct corr_rev *x = a, *y = b;

	if (x->life != y->life)
		return x->life < y->life ? -1 : 1;
	if (x->revision != y->revision)
		return x->revision < y->revision ? -1 : 1;
	return (x->updated_ns > y->updated_ns) - (x->updated_ns < y->updated_ns);
}

/*
 * Numbers every entry's life and sorts the entries by (life, number).
 * Within one install Helm numbers revisions in time order, so in time
 * order a number that does not rise starts a new life. That is a
 * function of the set of entries, whatever order they came in; an entry
 * added can only split lives, never join two. Untimed entries belong to
 * the newest life. Returns whether an entry held before changed life.
 */
static bool relife(struct corr_release *rel)
{
	struct corr_rev *ord[CORR_RELEASE_REVS];
	size_t n = 0;
	int life = 1, prev = 0;
	bool moved = false;

	for (size_t i = 0; i < rel->nrevs; i++)
		if (rel->revs[i].updated_ns)
			ord[n++] = &rel->revs[i];
	qsort(ord, n, sizeof(*ord), by_time);
	for (size_t i = 0; i < n; i++) {
		if (prev && ord[i]->revision <= prev)
			life++;
		prev = ord[i]->revision;
		moved |= ord[i]->life && ord[i]->life != life;
		ord[i]->life = life;
	}
	for (size_t i = 0; i < rel->nrevs; i++)
		if (!rel->revs[i].updated_ns) {
			moved |= rel->revs[i].life &&
				 rel->revs[i].life != life;
			rel->revs[i].life = life;
		}
	qsort(rel->revs, rel->nrevs, sizeof(*rel->revs), by_life);
	return moved;
}

/* The entry of (n, t) after relife moved it. */
static struct corr_rev *rev_locate(struct corr_release *rel, int n, int64_t t)
{
	for (size_t i = 0; i < rel->nrevs; i++)
		if (rel->revs[i].revision == n && rel->revs[i].updated_ns == t)
			return &rel->revs[i];
	return NULL;
}

/* Compares a stored string with a view bytewise (NULL sorts first). */
static int cmp_str(const char *a, struct rt_str b)
{
	size_t an;
	int c;

	if (!a)
		return -1;
	an = strlen(a);
	c = memcmp(a, b.p, an < b.n ? an : b.n);
	if (c)
		return c;
	return an < b.n ? -1 : an > b.n;
}

/* The max rule for one string field; returns whether it changed. */
static int merge_str(struct corr_registry *reg, char **dst, uint32_t *ranks,
		     int f, struct rt_str v, unsigned rank, bool lower)
{
	unsigned have = rank_get(*ranks, f);
	char *p;

	if (v.n == 0)
		return 0;
	if (*dst && (rank < have || (rank == have && cmp_str(*dst, v) >= 0)))
		return 0;
	p = dup_str(v);
	if (!p)
		return RT_ENOMEM;
	if (lower)
		for (char *q = p; *q; q++)
			*q = (char)tolower((unsigned char)*q);
	if (*dst && strcmp(*dst, p) == 0 && rank == have) {
		free(p);
		return 0;
	}
	if (swap_str(reg, dst, p))
		return RT_ELIMIT;
	rank_set(ranks, f, rank);
	return 1;
}

/* Union of two sorted comma lists into *dst; returns whether it changed. */
static int merge_hooks(struct corr_registry *reg, char **dst,
		       struct rt_str add)
{
	char buf[4096], *out;
	const char *names[128];
	size_t lens[128], n = 0, len = 0;
	struct rt_str lists[2] = { { *dst, *dst ? strlen(*dst) : 0 }, add };

	for (int l = 0; l < 2; l++) {
		const char *p = lists[l].p, *end;

		if (!p)    /* no list: NULL + 0 is undefined behaviour */
			continue;
		end = p + lists[l].n;
		while (p < end && n < 128) {
			const char *c = memchr(p, ',', (size_t)(end - p));
			size_t k = c ? (size_t)(c - p) : (size_t)(end - p);
			size_t j;

			while (k && p[0] == ' ')
				p++, k--;
			while (k && p[k - 1] == ' ')
				k--;
			for (j = 0; j < n; j++)
				if (lens[j] == k && memcmp(names[j], p, k) == 0)
					break;
			if (k && j == n) {
				names[n] = p;
				lens[n++] = k;
			}
			p = c ? c + 1 : end;
		}
	}
	/* insertion sort by name: tiny lists */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0; j--) {
			size_t m = lens[j] < lens[j - 1] ? lens[j] : lens[j - 1];
			int c = memcmp(names[j], names[j - 1], m);

			if (c > 0 || (c == 0 && lens[j] >= lens[j - 1]))
				break;
			const char *tp = names[j]; size_t tl = lens[j];
			names[j] = names[j - 1]; lens[j] = lens[j - 1];
			names[j - 1] = tp; lens[j - 1] = tl;
		}
	for (size_t i = 0; i < n && len + lens[i] + 2 < sizeof(buf); i++) {
		if (i)
			buf[len++] = ',';
		memcpy(buf + len, names[i], lens[i]);
		len += lens[i];
	}
	buf[len] = '\0';
	if (len == 0 || (*dst && strcmp(*dst, buf) == 0))
		return 0;
	out = strdup(buf);
	if (!out)
		return RT_ENOMEM;
	return swap_str(reg, dst, out) ? RT_ELIMIT : 1;
}

/* Helm numbers revisions in time order, so a release's times rise with
 * its numbers; one with hundreds of revisions would otherwise cost every
 * event that many steps (26k instructions an event at 1,000). */
static void note_order(struct corr_release *rel)
{
	rel->by_time = true;
	for (size_t i = 0; i < rel->nrevs && rel->by_time; i++)
		rel->by_time = rel->revs[i].updated_ns &&
			       (i == 0 || rel->revs[i].updated_ns >=
					  rel->revs[i - 1].updated_ns);
}

/* corr_release_at for a by_time release: the last revision in force. On
 * equal times the later one wins, as the scan below decides. */
static const struct corr_rev *at_by_time(const struct corr_release *rel,
					 int64_t ts)
{
	size_t lo = 0, hi = rel->nrevs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rel->revs[mid].updated_ns > ts + CORR_SKEW_NS)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo ? &rel->revs[lo - 1] : NULL;
}

/* Every field of rv into r by the max rule; returns whether one changed,
 * or an error. */
static int merge_fields(struct corr_registry *reg, struct corr_rev *r,
			const struct rt_revision *rv)
{
	unsigned rank = corr_status_rank(rv->status.p, rv->status.n);
	int c, any = 0;

	if ((c = merge_str(reg, &r->status, &r->ranks, F_STATUS, rv->status,
			   rank, true)) < 0)
		return c;
	any |= c;
	if ((c = merge_str(reg, &r->chart, &r->ranks, F_CHART, rv->chart, rank,
			   false)) < 0)
		return c;
	any |= c;
	if ((c = merge_str(reg, &r->app_version, &r->ranks, F_APPVER,
			   rv->app_version, rank, false)) < 0)
		return c;
	any |= c;
	if ((c = merge_str(reg, &r->description, &r->ranks, F_DESC,
			   rv->description, rank, false)) < 0)
		return c;
	any |= c;
	if (rv->updated_ns) {
		unsigned have = rank_get(r->ranks, F_UPDATED);

		if (!r->updated_ns || rank > have ||
		    (rank == have && rv->updated_ns > r->updated_ns)) {
			any |= r->updated_ns != rv->updated_ns || rank != have;
			r->updated_ns = rv->updated_ns;
			rank_set(&r->ranks, F_UPDATED, rank);
		}
	}
	if ((rv->evidence | r->evidence) != r->evidence) {
		r->evidence |= rv->evidence;
		any = 1;
	}
	if ((c = merge_hooks(reg, &r->hooks, rv->hook_configmaps)) < 0)
		return c;
	return any | c;
}


/* ---- statements without a time ------------------------------------- */

static int load_str(struct corr_registry *reg, char **dst, const char *s)
{
	char *p;

	if (!s || !*s)
		return 0;
	if (!(p = strdup(s)))
		return RT_ENOMEM;
	return swap_str(reg, dst, p);
}

/* *dst becomes a copy of src; its life stays. */
static int rev_copy(struct corr_registry *reg, struct corr_rev *dst,
		    const struct corr_rev *src)
{
	int life = dst->life, err;

	rev_release(reg, dst);
	memset(dst, 0, sizeof(*dst));
	dst->revision = src->revision;
	dst->updated_ns = src->updated_ns;
	dst->evidence = src->evidence;
	dst->ranks = src->ranks;
	dst->life = life;
	if ((err = load_str(reg, &dst->status, src->status)) ||
	    (err = load_str(reg, &dst->chart, src->chart)) ||
	    (err = load_str(reg, &dst->app_version, src->app_version)) ||
	    (err = load_str(reg, &dst->description, src->description)))
		return err;
	return load_str(reg, &dst->hooks, src->hooks);
}

static struct corr_loose *loose_find(const struct corr_release *rel, int n)
{
	for (size_t i = 0; i < rel->nloose; i++)
		if (rel->loose[i].u.revision == n)
			return &rel->loose[i];
	return NULL;
}

const struct corr_loose *corr_release_loose(const struct corr_release *rel,
					    int revision)
{
	return rel ? loose_find(rel, revision) : NULL;
}

/* The corr_loose of number n, made when missing (at most one a revision
 * the release may hold). */
static int loose_get(struct corr_registry *reg, struct corr_release *rel,
		     int n, struct corr_loose **out, bool *created)
{
	struct corr_loose *p;
	int err;

	*created = false;
	if ((*out = loose_find(rel, n)))
		return 0;
	if (rel->nloose == CORR_RELEASE_REVS) {
		reg->refused++;
		return RT_ELIMIT;
	}
	if ((err = charge(reg, sizeof(*p))))
		return err;
	if (!(p = realloc(rel->loose, (rel->nloose + 1) * sizeof(*p))))
		return RT_ENOMEM;
	rel->loose = p;
	*out = &p[rel->nloose++];
	memset(*out, 0, sizeof(**out));
	(*out)->u.revision = (*out)->own.revision = n;
	*created = true;
	return 0;
}

/* The revision number n's timeless statements go to: its timed entry of
 * the latest time, else its untimed one. NULL when none. */
static struct corr_rev *holder(struct corr_release *rel, int n)
{
	struct corr_rev *best = NULL;

	for (size_t i = 0; i < rel->nrevs; i++) {
		struct corr_rev *r = &rel->revs[i];

		if (r->revision == n &&
		    (!best || r->updated_ns > best->updated_ns))
			best = r;
	}
	return best;
}

/* src's fields into dst, each with the rank src holds it with (the max
 * rule of merge_fields, for a join rather than one statement). */
static int merge_rev(struct corr_registry *reg, struct corr_rev *dst,
		     const struct corr_rev *src)
{
	char *const *from[] = { &src->status, &src->chart, &src->app_version,
				&src->description };
	char **to[] = { &dst->status, &dst->chart, &dst->app_version,
			&dst->description };
	int c, any = 0;

	for (int f = F_STATUS; f <= F_DESC; f++) {
		const char *v = *from[f];

		c = merge_str(reg, to[f], &dst->ranks, f,
			      rt_str_make(v, v ? strlen(v) : 0),
			      rank_get(src->ranks, f), f == F_STATUS);
		if (c < 0)
			return c;
		any |= c;
	}
	if ((src->evidence | dst->evidence) != dst->evidence) {
		dst->evidence |= src->evidence;
		any = 1;
	}
	c = merge_hooks(reg, &dst->hooks,
			rt_str_make(src->hooks, src->hooks ?
				    strlen(src->hooks) : 0));
	return c < 0 ? c : any | c;
}

/* A statement without a time: into its number's join, and into the
 * revision that holds it (made untimed when the number has none); own
 * takes the holder's fields first when the join is new. */
static int merge_timeless(struct corr_registry *reg, struct corr_release *rel,
			  const struct rt_revision *rv, struct corr_rev **out,
			  bool *new_rev)
{
	struct corr_loose *l;
	struct corr_rev *h;
	bool created;
	int c, err;

	if ((err = loose_get(reg, rel, rv->revision, &l, &created)))
		return err;
	h = holder(rel, rv->revision);
	if (created && h && h->updated_ns &&
	    (err = rev_copy(reg, &l->own, h)))
		return err;
	if ((c = merge_fields(reg, &l->u, rv)) < 0)
		return c;
	*new_rev = false;
	if (!h && (err = rev_get(reg, rel, rv->revision, 0, &h, new_rev)))
		return err;
	*out = h;
	return merge_fields(reg, h, rv);
}

/* The holder of l (time held) goes back to its own fields. */
static int loose_unhold(struct corr_registry *reg, struct corr_release *rel,
			struct corr_loose *l, const struct corr_rev *r,
			int64_t held)
{
	for (size_t i = 0; held && i < rel->nrevs; i++) {
		struct corr_rev *a = &rel->revs[i];

		if (a != r && a->revision == r->revision && a->updated_ns == held)
			return rev_copy(reg, a, &l->own);
	}
	return 0;
}

/* A timed statement rv merged into r (was_ns: r's time before, 0 for an
 * entry made or untimed until now) of a number with timeless statements
 * l, whose holder had the time held (0: none). Keeps own the holder's
 * fields without l->u: a revision newer than the holder takes l->u over
 * and the holder goes back to its own fields (*moved). */
static int merge_loose(struct corr_registry *reg, struct corr_release *rel,
		       struct corr_loose *l, struct corr_rev *r,
		       const struct rt_revision *rv, int64_t was_ns,
		       bool new_rev, int64_t held, bool *moved)
{
	int err, c;

	*moved = false;
	if (was_ns)
		return was_ns == held ? merge_fields(reg, &l->own, rv) : 0;
	if (new_rev && held && r->updated_ns <= held)
		return 0;    /* an older life's revision: its own fields */
	if (new_rev) {
		if ((err = loose_unhold(reg, rel, l, r, held)))
			return err;
		*moved = held != 0;
	}
	rev_release(reg, &l->own);
	memset(&l->own, 0, sizeof(l->own));
	l->own.revision = r->revision;
	if ((c = merge_fields(reg, &l->own, rv)) < 0)
		return c;
	return new_rev ? merge_rev(reg, r, &l->u) : 0;
}

/* rv into its entry *out of rel: a timeless statement through its
 * number's join, a timed one keeping the join's holder. *flags gets
 * CORR_REG_TIMELESS when the number has timeless statements, and
 * CORR_REG_RELIFE when another revision gave their join up. Returns
 * whether a field changed, or an error (*out NULL when none was found). */
static int merge_into(struct corr_registry *reg, struct corr_release *rel,
		      const struct rt_revision *rv, struct corr_rev **out,
		      bool *new_rev, unsigned *flags)
{
	struct corr_loose *l;
	struct corr_rev *h;
	int64_t was, held;
	bool moved;
	int c, k;

	*flags = 0;
	if (!rv->updated_ns) {
		*flags = CORR_REG_TIMELESS;
		return merge_timeless(reg, rel, rv, out, new_rev);
	}
	l = loose_find(rel, rv->revision);
	h = l ? holder(rel, rv->revision) : NULL;
	held = h ? h->updated_ns : 0;
	if ((c = rev_get(reg, rel, rv->revision, rv->updated_ns, out,
			 new_rev)))
		return c;
	was = *new_rev ? 0 : (*out)->updated_ns;
	if ((c = merge_fields(reg, *out, rv)) < 0 || !l)
		return c;
	if ((k = merge_loose(reg, rel, l, *out, rv, was, *new_rev, held,
			     &moved)) < 0)
		return k;
	*flags = CORR_REG_TIMELESS | (moved ? CORR_REG_RELIFE : 0);
	return c | k;
}

int corr_registry_merge(struct corr_registry *reg, const struct rt_revision *rv,
			unsigned *changed, const struct corr_release **relp,
			const struct corr_rev **out)
{
	struct corr_release *rel;
	struct corr_rev *r = NULL;
	bool new_rel, new_rev = false;
	unsigned flags;
	int64_t t;
	int c;

	*changed = 0;
	if (rv->release.n == 0 || rv->revision <= 0)
		return RT_EINVAL;
	if ((c = release_get(reg, rv->ns, rv->release, &rel, &new_rel)))
		return c;
	c = merge_into(reg, rel, rv, &r, &new_rev, &flags);
	if (!r)
		return c;
	*changed |= flags;
	t = r->updated_ns;
	if (relife(rel))
		*changed |= CORR_REG_RELIFE;
	r = rev_locate(rel, rv->revision, t);
	note_order(rel);
	if (c < 0)
		return c;
	if (c || new_rev)
		*changed |= CORR_REG_CHANGED;
	if (new_rel)
		*changed |= CORR_REG_NEW_RELEASE;
	if (relp)
		*relp = rel;
	if (out)
		*out = r;
	return 0;
}

/* The release a stored row names, made if new. */
static int load_release(struct corr_registry *reg, const char *ns,
			const char *name, const struct corr_rev *src,
			struct corr_release **rel)
{
	bool created;

	if (!name || !*name || src->revision <= 0)
		return RT_EINVAL;
	return release_get(reg, rt_str_make(ns, strlen(ns)),
			   rt_str_make(name, strlen(name)), rel, &created);
}

int corr_registry_load(struct corr_registry *reg, const char *ns,
		       const char *name, const struct corr_rev *src)
{
	struct corr_release *rel;
	struct corr_rev *r;
	bool created;
	int err;

	if ((err = load_release(reg, ns, name, src, &rel)) ||
	    (err = rev_get(reg, rel, src->revision, src->updated_ns, &r,
			   &created)) ||
	    (err = rev_copy(reg, r, src)))
		return err;
	/* As stored; relife numbers the lives again from the whole set. */
	r->life = src->life;
	relife(rel);
	note_order(rel);
	return 0;
}

int corr_registry_load_loose(struct corr_registry *reg, const char *ns,
			     const char *name, const struct corr_rev *src)
{
	struct corr_release *rel;
	struct corr_loose *l;
	bool created;
	int err;

	if ((err = load_release(reg, ns, name, src, &rel)) ||
	    (err = loose_get(reg, rel, src->revision, &l, &created)))
		return err;
	return rev_copy(reg, src->updated_ns ? &l->own : &l->u, src);
}

const struct corr_release *
corr_registry_longest_prefix(const struct corr_registry *reg, struct rt_str ns,
			     struct rt_str name)
{
	/* Try the whole name, then each '-' boundary from the right. */
	for (size_t n = name.n; n > 0; n--) {
		const struct corr_release *rel;

		if (n != name.n && name.p[n] != '-')
			continue;
		rel = corr_registry_find(reg, ns, rt_str_make(name.p, n));
		if (rel)
			return rel;
	}
	return NULL;
}

const char *corr_registry_first_ns(const struct corr_registry *reg,
				   struct rt_str name)
{
	struct rt_map_iter it;
	uint32_t i;

	if (name.n == 0 || !(reg->lens & len_bit(name.n)))
		return NULL;
	i = name_find(reg, name, &it);
	return i == RT_MAP_NONE ? NULL : reg->rels[i]->ns;
}

const struct corr_rev *corr_release_at(const struct corr_release *rel,
				       int64_t ts)
{
	const struct corr_rev *best = NULL;

	if (!rel || ts <= 0)
		return NULL;
	if (rel->by_time)
		return at_by_time(rel, ts);
	for (size_t i = 0; i < rel->nrevs; i++) {
		const struct corr_rev *r = &rel->revs[i];

		if (!r->updated_ns || r->updated_ns > ts + CORR_SKEW_NS)
			continue;
		if (!best || r->updated_ns > best->updated_ns ||
		    (r->updated_ns == best->updated_ns &&
		     r->revision > best->revision))
			best = r;
	}
	return best;
}

const struct corr_rev *corr_release_rev(const struct corr_release *rel,
					int revision)
{
	return corr_release_rev_life(rel, revision, 0);
}

const struct corr_rev *corr_release_rev_life(const struct corr_release *rel,
					     int revision, int life)
{
	const struct corr_rev *best = NULL;

	for (size_t i = 0; rel && i < rel->nrevs; i++)
		if (rel->revs[i].revision == revision &&
		    (!life || rel->revs[i].life == life))
			best = &rel->revs[i];
	return best;
}

/* ---- workload -> release ------------------------------------------- */

struct alias_ctx {
	struct alias *const *a;
	struct rt_str ns, w;
};

static bool alias_is(const void *ctx, uint32_t i)
{
	const struct alias_ctx *c = ctx;

	return str_is(c->a[i]->ns, c->ns) && str_is(c->a[i]->workload, c->w);
}

static struct alias *alias_lookup(const struct corr_registry *reg,
				  struct rt_str ns, struct rt_str w)
{
	struct alias_ctx c = { reg->aliases, ns, w };
	uint32_t i = rt_map_find(&reg->amap, key_hash(ns, w), alias_is, &c);

	return i == RT_MAP_NONE ? NULL : reg->aliases[i];
}

/* A table of n slots and room for n / 2 mappings, charged first. */
static int alias_grow(struct corr_registry *reg)
{
	size_t old = reg->amap.nslots, n = old ? old * 2 : 64;
	int err;

	if ((err = charge(reg, alias_tables_cost(n))))
		return err;
	if (rt_map_reserve(&reg->amap, n / 2) ||
	    RT_GROW(reg->aliases, n / 2, reg->acap))
		return RT_ENOMEM;
	if (old)
		reg->bytes -= alias_tables_cost(old);
	return 0;
}

/* Of two entries in force from the same time: a label beats a manifest,
 * then the smaller (ns, rel) pair wins. */
static int ent_cmp(const struct alias_ent *x, const struct alias_ent *y)
{
	int c;

	if (x->via != y->via)
		return x->via < y->via ? -1 : 1;
	c = strcmp(x->rel_ns, y->rel_ns);
	return c ? c : strcmp(x->rel, y->rel);
}

/* The entry in force at ts: the latest first sighting not after it (an
 * unknown one counts as the earliest), else -- ts before every sighting
 * -- the earliest; ts <= 0 (unknown) takes the latest. */
static const struct alias_ent *ent_at(const struct alias *a, int64_t ts)
{
	const struct alias_ent *best = NULL;
	bool in_force = false;

	for (size_t i = 0; i < a->nents; i++) {
		const struct alias_ent *e = &a->ents[i];
		bool on = ts <= 0 || e->since <= ts + CORR_SKEW_NS;

		if (best && in_force && !on)
			continue;
		if (!best || (on && !in_force) ||
		    (on ? e->since > best->since : e->since < best->since) ||
		    (e->since == best->since && ent_cmp(e, best) < 0)) {
			best = e;
			in_force = on;
		}
	}
	return best;
}

/* The earlier of two first sightings (0: unknown). */
static int64_t since_min(int64_t a, int64_t b)
{
	if (!a || !b)
		return a ? a : b;
	return a < b ? a : b;
}

/* A new entry on a, charged first. */
static int ent_add(struct corr_registry *reg, struct alias *a,
		   struct rt_str rel_ns, struct rt_str rel, int via,
		   int64_t since)
{
	struct alias_ent *p, *e;
	int err;

	if (a->nents >= CORR_ALIAS_RELEASES) {
		reg->refused++;
		return RT_ELIMIT;
	}
	if ((err = charge(reg, cost((a->nents + 1) * sizeof(*p)) -
			  (a->nents ? cost(a->nents * sizeof(*p)) : 0) +
			  cost(rel_ns.n + 1) + cost(rel.n + 1))))
		return err;
	if (!(p = realloc(a->ents, (a->nents + 1) * sizeof(*p))))
		return RT_ENOMEM;
	a->ents = p;
	e = &p[a->nents];
	e->rel_ns = dup_str(rel_ns);
	e->rel = dup_str(rel);
	if (!e->rel_ns || !e->rel) {
		free(e->rel_ns);
		free(e->rel);
		return RT_ENOMEM;
	}
	e->via = via;
	e->since = since;
	a->nents++;
	return 0;
}

/* A new mapping without entries, charged whole before anything is
 * allocated. */
static int alias_new(struct corr_registry *reg, struct rt_str ns,
		     struct rt_str workload, struct alias **out)
{
	struct alias *a;
	int err;

	if ((err = charge(reg, cost(sizeof(*a)) + cost(ns.n + 1) +
			  cost(workload.n + 1))))
		return err;
	if (!(a = calloc(1, sizeof(*a))) || !(a->ns = dup_str(ns)) ||
	    !(a->workload = dup_str(workload))) {
		alias_free(a);
		return RT_ENOMEM;
	}
	*out = a;
	return 0;
}

/* The sighting into a's entry of its pair: the earliest time and the
 * best via, so any order gives the same entry. */
static int ent_merge(struct corr_registry *reg, struct alias *a,
		     struct rt_str rel_ns, struct rt_str rel, int via,
		     int64_t since, bool *changed)
{
	for (size_t i = 0; i < a->nents; i++) {
		struct alias_ent *e = &a->ents[i];
		int64_t t;

		if (!str_is(e->rel_ns, rel_ns) || !str_is(e->rel, rel))
			continue;
		t = since_min(e->since, since);
		*changed = t != e->since || via < e->via;
		e->since = t;
		e->via = via < e->via ? via : e->via;
		return 0;
	}
	*changed = true;
	return ent_add(reg, a, rel_ns, rel, via, since);
}

int corr_registry_alias_merge(struct corr_registry *reg, struct rt_str ns,
			      struct rt_str workload, struct rt_str rel_ns,
			      struct rt_str rel, int via, int64_t since,
			      bool *changed)
{
	struct alias *a;
	int err;

	*changed = false;
	if (!ns.n || !workload.n || !rel_ns.n || !rel.n)
		return RT_EINVAL;
	if (via != PLAN_VIA_MANIFEST)
		via = PLAN_VIA_LABEL;
	if ((a = alias_lookup(reg, ns, workload)))
		return ent_merge(reg, a, rel_ns, rel, via, since, changed);
	if ((reg->acount + 1) * 2 > reg->amap.nslots && (err = alias_grow(reg)))
		return err;
	if ((err = alias_new(reg, ns, workload, &a)))
		return err;
	if ((err = ent_add(reg, a, rel_ns, rel, via, since))) {
		alias_free(a);
		return err;
	}
	/* no allocation: alias_grow made room */
	reg->aliases[reg->acount] = a;
	rt_map_insert(&reg->amap, key_hash(ns, workload),
		      (uint32_t)reg->acount);
	reg->acount++;
	*changed = true;
	return 0;
}

bool corr_registry_alias_find(const struct corr_registry *reg,
			      struct rt_str ns, struct rt_str workload,
			      int64_t ts, struct rt_str *rel_ns,
			      struct rt_str *rel, int *via)
{
	const struct alias *a;
	const struct alias_ent *e;

	if (!reg || !reg->acount || !ns.n || !workload.n)
		return false;
	a = alias_lookup(reg, ns, workload);
	if (!a || !(e = ent_at(a, ts)))
		return false;
	*rel_ns = rt_str_make(e->rel_ns, strlen(e->rel_ns));
	*rel = rt_str_make(e->rel, strlen(e->rel));
	if (via)
		*via = e->via;
	return true;
}

size_t corr_registry_alias_releases(const struct corr_registry *reg,
				    struct rt_str ns, struct rt_str workload,
				    const char **rel_ns, const char **rel,
				    size_t max)
{
	const struct alias *a;
	size_t n = 0;

	if (!reg || !reg->acount || !ns.n || !workload.n ||
	    !(a = alias_lookup(reg, ns, workload)))
		return 0;
	for (size_t i = 0; i < a->nents && n < max; i++, n++) {
		rel_ns[n] = a->ents[i].rel_ns;
		rel[n] = a->ents[i].rel;
	}
	return n;
}

size_t corr_registry_alias_count(const struct corr_registry *reg)
{
	return reg->acount;
}
