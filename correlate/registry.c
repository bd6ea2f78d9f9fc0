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
 * whole from the store at start, strings malloc'ed.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "revtrail/correlate.h"

/* A learned workload -> release mapping (see correlate.h). */
struct alias {
	char *ns, *workload, *rel_ns, *rel;
	int via;                       /* CORR_VIA_LABEL or CORR_VIA_MANIFEST */
};

struct corr_registry {
	struct corr_release **slots;   /* open addressing by (ns, name) */
	size_t nslots, count;
	uint64_t lens;                 /* len_bit of every release's name */
	struct alias **aslots;         /* open addressing by (ns, workload) */
	size_t naslots, acount;
};

enum { F_STATUS, F_CHART, F_APPVER, F_DESC, F_UPDATED };

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
	uint64_t h = corr_hash(0, ns.p, ns.n);

	h = corr_hash(h, "", 1);
	return corr_hash(h, name.p, name.n);
}

static bool str_is(const char *s, struct rt_str v)
{
	return strlen(s) == v.n && (v.n == 0 || memcmp(s, v.p, v.n) == 0);
}

struct corr_registry *corr_registry_new(void)
{
	struct corr_registry *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	reg->nslots = 64;
	reg->slots = calloc(reg->nslots, sizeof(*reg->slots));
	if (!reg->slots) {
		free(reg);
		return NULL;
	}
	return reg;
}

static void rev_release(struct corr_rev *r)
{
	free(r->status);
	free(r->chart);
	free(r->app_version);
	free(r->description);
	free(r->hooks);
}

static void alias_free(struct alias *a)
{
	if (!a)
		return;
	free(a->ns);
	free(a->workload);
	free(a->rel_ns);
	free(a->rel);
	free(a);
}

void corr_registry_free(struct corr_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->naslots; i++)
		alias_free(reg->aslots[i]);
	free(reg->aslots);
	for (size_t i = 0; i < reg->nslots; i++) {
		struct corr_release *rel = reg->slots[i];

		if (!rel)
			continue;
		for (size_t j = 0; j < rel->nrevs; j++)
			rev_release(&rel->revs[j]);
		free(rel->revs);
		free(rel->ns);
		free(rel->name);
		free(rel);
	}
	free(reg->slots);
	free(reg);
}

size_t corr_registry_count(const struct corr_registry *reg)
{
	return reg->count;
}

static size_t slot_of(const struct corr_registry *reg, struct rt_str ns,
		      struct rt_str name)
{
	size_t mask = reg->nslots - 1, i = key_hash(ns, name) & mask;

	while (reg->slots[i] && !(str_is(reg->slots[i]->ns, ns) &&
				  str_is(reg->slots[i]->name, name)))
		i = (i + 1) & mask;
	return i;
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
	rel = reg->slots[slot_of(reg, ns, name)];
	/* History stated without a namespace (`helm history NAME` with no
	 * -n) stands for the release in any namespace that has no own. */
	if (!rel && ns.n)
		rel = reg->slots[slot_of(reg, RT_STR_LIT(""), name)];
	return rel;
}

static int grow(struct corr_registry *reg)
{
	struct corr_registry big = { .slots = NULL, .nslots = reg->nslots * 2,
				     .count = reg->count };

	big.slots = calloc(big.nslots, sizeof(*big.slots));
	if (!big.slots)
		return RT_ENOMEM;
	for (size_t i = 0; i < reg->nslots; i++) {
		struct corr_release *rel = reg->slots[i];

		if (rel)
			big.slots[slot_of(&big, rt_str_make(rel->ns, strlen(rel->ns)),
				 rt_str_make(rel->name, strlen(rel->name)))] = rel;
	}
	free(reg->slots);
	reg->slots = big.slots;
	reg->nslots = big.nslots;
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

/* Finds or creates the release; *created tells which. */
static struct corr_release *release_get(struct corr_registry *reg,
					struct rt_str ns, struct rt_str name,
					bool *created)
{
	struct corr_release *rel;
	size_t i;

	*created = false;
	i = slot_of(reg, ns, name);
	if (reg->slots[i])
		return reg->slots[i];
	if ((reg->count + 1) * 2 > reg->nslots) {
		if (grow(reg))
			return NULL;
		i = slot_of(reg, ns, name);
	}
	rel = calloc(1, sizeof(*rel));
	if (!rel)
		return NULL;
	rel->ns = dup_str(ns);
	rel->name = dup_str(name);
	if (!rel->ns || !rel->name) {
		free(rel->ns);
		free(rel->name);
		free(rel);
		return NULL;
	}
	reg->slots[i] = rel;
	reg->count++;
	reg->lens |= len_bit(name.n);
	*created = true;
	return rel;
}

/* Finds or inserts revision number n, keeping revs sorted. */
static struct corr_rev *rev_get(struct corr_release *rel, int n, bool *created)
{
	size_t lo = 0, hi = rel->nrevs;

	*created = false;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rel->revs[mid].revision < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < rel->nrevs && rel->revs[lo].revision == n)
		return &rel->revs[lo];
	if (rel->nrevs == rel->cap) {
		size_t cap = rel->cap ? rel->cap * 2 : 8;
		struct corr_rev *p = realloc(rel->revs, cap * sizeof(*p));

		if (!p)
			return NULL;
		rel->revs = p;
		rel->cap = cap;
	}
	memmove(&rel->revs[lo + 1], &rel->revs[lo],
		(rel->nrevs - lo) * sizeof(*rel->revs));
	memset(&rel->revs[lo], 0, sizeof(*rel->revs));
	rel->revs[lo].revision = n;
	rel->nrevs++;
	*created = true;
	return &rel->revs[lo];
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
static int merge_str(char **dst, uint32_t *ranks, int f, struct rt_str v,
		     unsigned rank, bool lower)
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
	free(*dst);
	*dst = p;
	rank_set(ranks, f, rank);
	return 1;
}

/* Union of two sorted comma lists into *dst; returns whether it changed. */
static int merge_hooks(char **dst, struct rt_str add)
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
	free(*dst);
	*dst = out;
	return 1;
}

int corr_registry_merge(struct corr_registry *reg, const struct rt_revision *rv,
			unsigned *changed, const struct corr_release **relp,
			const struct corr_rev **out)
{
	struct corr_release *rel;
	struct corr_rev *r;
	unsigned rank;
	bool new_rel, new_rev;
	int c, any = 0;

	*changed = 0;
	if (rv->release.n == 0 || rv->revision <= 0)
		return RT_EINVAL;
	rel = release_get(reg, rv->ns, rv->release, &new_rel);
	if (!rel)
		return RT_ENOMEM;
	r = rev_get(rel, rv->revision, &new_rev);
	if (!r)
		return RT_ENOMEM;
	rank = corr_status_rank(rv->status.p, rv->status.n);
	if ((c = merge_str(&r->status, &r->ranks, F_STATUS, rv->status, rank, true)) < 0)
		return c;
	any |= c;
	if ((c = merge_str(&r->chart, &r->ranks, F_CHART, rv->chart, rank, false)) < 0)
		return c;
	any |= c;
	if ((c = merge_str(&r->app_version, &r->ranks, F_APPVER, rv->app_version,
			   rank, false)) < 0)
		return c;
	any |= c;
	if ((c = merge_str(&r->description, &r->ranks, F_DESC, rv->description,
			   rank, false)) < 0)
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
	if ((c = merge_hooks(&r->hooks, rv->hook_configmaps)) < 0)
		return c;
	any |= c;
	if (any || new_rev)
		*changed |= CORR_REG_CHANGED;
	if (new_rel)
		*changed |= CORR_REG_NEW_RELEASE;
	if (relp)
		*relp = rel;
	if (out)
		*out = r;
	return 0;
}

static int load_str(char **dst, const char *s)
{
	if (!s || !*s)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : RT_ENOMEM;
}

int corr_registry_load(struct corr_registry *reg, const char *ns,
		       const char *name, const struct corr_rev *src)
{
	struct corr_release *rel;
	struct corr_rev *r;
	bool created;

	if (!name || !*name || src->revision <= 0)
		return RT_EINVAL;
	rel = release_get(reg, rt_str_make(ns, strlen(ns)),
			  rt_str_make(name, strlen(name)), &created);
	if (!rel)
		return RT_ENOMEM;
	r = rev_get(rel, src->revision, &created);
	if (!r)
		return RT_ENOMEM;
	rev_release(r);
	memset(r, 0, sizeof(*r));
	r->revision = src->revision;
	r->updated_ns = src->updated_ns;
	r->evidence = src->evidence;
	r->ranks = src->ranks;
	if (load_str(&r->status, src->status) || load_str(&r->chart, src->chart) ||
	    load_str(&r->app_version, src->app_version) ||
	    load_str(&r->description, src->description) ||
	    load_str(&r->hooks, src->hooks))
		return RT_ENOMEM;
	return 0;
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
	const char *best = NULL;

	for (size_t i = 0; i < reg->nslots; i++) {
		const struct corr_release *rel = reg->slots[i];

		if (rel && str_is(rel->name, name) &&
		    (!best || strcmp(rel->ns, best) < 0))
			best = rel->ns;
	}
	return best;
}

const struct corr_rev *corr_release_at(const struct corr_release *rel,
				       int64_t ts)
{
	const struct corr_rev *best = NULL;

	if (!rel || ts <= 0)
		return NULL;
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
	if (!rel)
		return NULL;
	for (size_t i = 0; i < rel->nrevs; i++)
		if (rel->revs[i].revision == revision)
			return &rel->revs[i];
	return NULL;
}

/* ---- workload -> release ------------------------------------------- */

static size_t alias_slot(struct alias *const *slots, size_t nslots,
			 struct rt_str ns, struct rt_str w)
{
	size_t mask = nslots - 1, i = key_hash(ns, w) & mask;

	while (slots[i] && !(str_is(slots[i]->ns, ns) &&
			     str_is(slots[i]->workload, w)))
		i = (i + 1) & mask;
	return i;
}

static int alias_grow(struct corr_registry *reg)
{
	size_t n = reg->naslots ? reg->naslots * 2 : 64;
	struct alias **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return RT_ENOMEM;
	for (size_t i = 0; i < reg->naslots; i++) {
		struct alias *a = reg->aslots[i];

		if (a)
			slots[alias_slot(slots, n,
					 rt_str_make(a->ns, strlen(a->ns)),
					 rt_str_make(a->workload,
						     strlen(a->workload)))] = a;
	}
	free(reg->aslots);
	reg->aslots = slots;
	reg->naslots = n;
	return 0;
}

/* A label beats a manifest, then the smaller (ns, rel) pair wins. */
static int pair_cmp(const struct alias *a, struct rt_str ns, struct rt_str rel,
		    int via)
{
	int c;

	if (a->via != via)
		return a->via < via ? -1 : 1;
	c = cmp_str(a->rel_ns, ns);
	return c ? c : cmp_str(a->rel, rel);
}

static int alias_set(struct alias *a, struct rt_str rel_ns, struct rt_str rel,
		     int via)
{
	char *n = dup_str(rel_ns), *r = dup_str(rel);

	if (!n || !r) {
		free(n);
		free(r);
		return RT_ENOMEM;
	}
	free(a->rel_ns);
	free(a->rel);
	a->rel_ns = n;
	a->rel = r;
	a->via = via;
	return 0;
}

int corr_registry_alias_merge(struct corr_registry *reg, struct rt_str ns,
			      struct rt_str workload, struct rt_str rel_ns,
			      struct rt_str rel, int via, bool *changed)
{
	struct alias *a;
	size_t i;

	*changed = false;
	if (!ns.n || !workload.n || !rel_ns.n || !rel.n)
		return RT_EINVAL;
	if (via != CORR_VIA_MANIFEST)
		via = CORR_VIA_LABEL;
	if ((reg->acount + 1) * 2 > reg->naslots && alias_grow(reg))
		return RT_ENOMEM;
	i = alias_slot(reg->aslots, reg->naslots, ns, workload);
	a = reg->aslots[i];
	if (a) {
		if (pair_cmp(a, rel_ns, rel, via) <= 0)
			return 0;
		if (alias_set(a, rel_ns, rel, via))
			return RT_ENOMEM;
		*changed = true;
		return 0;
	}
	a = calloc(1, sizeof(*a));
	if (!a || !(a->ns = dup_str(ns)) || !(a->workload = dup_str(workload)) ||
	    alias_set(a, rel_ns, rel, via)) {
		alias_free(a);
		return RT_ENOMEM;
	}
	reg->aslots[i] = a;
	reg->acount++;
	*changed = true;
	return 0;
}

bool corr_registry_alias_find(const struct corr_registry *reg,
			      struct rt_str ns, struct rt_str workload,
			      struct rt_str *rel_ns, struct rt_str *rel, int *via)
{
	const struct alias *a;

	if (!reg || !reg->acount || !ns.n || !workload.n)
		return false;
	a = reg->aslots[alias_slot(reg->aslots, reg->naslots, ns, workload)];
	if (!a)
		return false;
	*rel_ns = rt_str_make(a->rel_ns, strlen(a->rel_ns));
	*rel = rt_str_make(a->rel, strlen(a->rel));
	if (via)
		*via = a->via;
	return true;
}

size_t corr_registry_alias_count(const struct corr_registry *reg)
{
	return reg->acount;
}
