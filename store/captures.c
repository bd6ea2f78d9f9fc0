/*
 * captures.c: what a diagnosis reads of an incident's events -- the values
 * its rules captured (configmap, path, image ...) and its tags, each with
 * its pods and occurrences -- and the revisions of its release that had
 * incidents of their own. Bounded: the first 4096 rows, the most frequent
 * values.
 *
 * Both reads run at every commit for every incident the batch touched, so
 * they are aggregated here, in C, over plain rows: SQLite's json_each and
 * its sorter, over the same rows, were a third of the writer thread's time
 * on a busy stream. The statements that aggregate in SQL (INC_CAPTURES,
 * INC_TAG_COUNTS) stay the reference: a row this file does not read as
 * plain JSON (an escape, a value that is not a string) hands the whole
 * incident to them, and the unit tests hold both to the same answers.
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* The rows a diagnosis reads of an incident: INC_CAPTURE_ROWS's and
 * INC_TAG_ROWS's LIMIT. */
#define FIRST_ROWS 4096

/* The rows of s as captures: (tag, field, value, pods, times) when
 * withfield, else (tag, pods, times) with field and value NULL. */
static int capture_rows(struct store *st, sqlite3_stmt *s, bool withfield,
			struct corr_capture *c, size_t max, size_t *n)
{
	int rc, k = withfield ? 3 : 1;

	while (*n < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct corr_capture *x = &c[*n];
		const char *tag = store_col_text(s, 0);

		memset(x, 0, sizeof(*x));
		x->tag = store_scratch_dup(st, tag, strlen(tag));
		if (withfield) {
			x->field = store_scratch_dup(st, store_col_text(s, 1),
					       strlen(store_col_text(s, 1)));
			x->value = store_scratch_dup(st, store_col_text(s, 2),
					       strlen(store_col_text(s, 2)));
			if (!x->field || !x->value)
				break;
		}
		x->pods = sqlite3_column_int64(s, k);
		x->times = sqlite3_column_int64(s, k + 1);
		if (!x->tag)
			break;
		(*n)++;
	}
	sqlite3_reset(s);
	return *n < max && rc != SQLITE_DONE ? store_db_fail(st, "captures") : 0;
}

/* ---- captures (INC_CAPTURES, without json_each) ---------------------- */

static int nullcmp(const char *a, const char *b)
{
	return !a || !b ? (a != NULL) - (b != NULL) : strcmp(a, b);
}

/* One (tag, field, value) of a row, with the row's pod and count. */
struct capitem {
	struct rt_str tag, key, val;
	const char *pod;                /* NULL: none */
	double count;
};

/* The fields INC_CAPTURES names: the words a remedy is made of. */
static bool capture_key(struct rt_str k)
{
	static const char *const keys[] = {
		"configmap", "secret", "path", "key", "volume", "image",
		"user", "host", "probe", "container", "storageclass",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		if (strlen(keys[i]) == k.n && !memcmp(keys[i], k.p, k.n))
			return true;
	return false;
}

/* A JSON string without escapes at *p (past it after); false: not one. */
static bool plain_string(const char **p, struct rt_str *out)
{
	const char *q;

	if (**p != '"' || !(q = strchr(*p + 1, '"')))
		return false;
	*out = rt_str_make(*p + 1, (size_t)(q - *p - 1));
	*p = q + 1;
	return true;
}

/* The strings of a JSON array of strings, or the names and string values
 * of an object (obj), as the store writes them: no spaces, no escapes.
 * Returns how many (at most max), -1 for anything else. */
static int plain_json(const char *p, bool obj, struct rt_str *k,
		      struct rt_str *v, int max)
{
	int n = 0;

	if (strchr(p, '\\') || *p++ != (obj ? '{' : '['))
		return -1;
	if (*p == (obj ? '}' : ']'))
		return p[1] ? -1 : 0;
	for (;; p++) {
		if (n == max || !plain_string(&p, &k[n]) ||
		    (obj && (*p++ != ':' || !plain_string(&p, &v[n]))))
			return -1;
		n++;
		if (*p != ',')
			break;
	}
	return *p == (obj ? '}' : ']') && !p[1] ? n : -1;
}

/* SQLite's BINARY collation. */
static int str_cmp(struct rt_str a, struct rt_str b)
{
	int c = memcmp(a.p, b.p, a.n < b.n ? a.n : b.n);

	return c ? c : (a.n > b.n) - (a.n < b.n);
}

/* GROUP BY tag, field, value; within a group, by pod (count DISTINCT). */
static int capitem_cmp(const void *x, const void *y)
{
	const struct capitem *a = x, *b = y;
	int c = str_cmp(a->tag, b->tag);

	if (!c)
		c = str_cmp(a->key, b->key);
	if (!c)
		c = str_cmp(a->val, b->val);
	return c ? c : nullcmp(a->pod, b->pod);
}

/* A group: its first item, distinct pods and total. */
struct capsum {
	const struct capitem *it;
	int64_t pods, times;
	double total;
};

/* ORDER BY times DESC, field, value; ties (one value under two tags) by
 * tag descending, as SQLite hands them over. */
static int capsum_cmp(const void *x, const void *y)
{
	const struct capsum *a = x, *b = y;
	int c;

	if (a->times != b->times)
		return a->times > b->times ? -1 : 1;
	if ((c = str_cmp(a->it->key, b->it->key)) ||
	    (c = str_cmp(a->it->val, b->it->val)))
		return c;
	return str_cmp(b->it->tag, a->it->tag);
}

/* A column's text copied to the scratch arena (the row's strings live
 * until the next step). */
static const char *col_dup(struct store *st, sqlite3_stmt *s, int i)
{
	return store_scratch_dup(st, store_col_text(s, i),
				 (size_t)sqlite3_column_bytes(s, i));
}

/* Appends row s's items (tags x captured fields); 1: not plain JSON, or
 * more items than MAX_ITEMS (SQLite's sorter takes any number). */
static int capitem_add(struct store *st, sqlite3_stmt *s, struct capitem **it,
		       size_t *n, size_t *cap)
{
	enum { MAX_TAGS = 64, MAX_FIELDS = 64, MAX_ITEMS = 1 << 16 };
	struct rt_str tag[MAX_TAGS], key[MAX_FIELDS], val[MAX_FIELDS];
	bool nopod = sqlite3_column_type(s, 2) == SQLITE_NULL;
	const char *tags = col_dup(st, s, 0), *fields = col_dup(st, s, 1);
	const char *pod = nopod ? NULL : col_dup(st, s, 2);
	int nt, nf;

	if (!tags || !fields || (!nopod && !pod))
		return RT_ENOMEM;
	nt = plain_json(tags, false, tag, NULL, MAX_TAGS);
	nf = plain_json(fields, true, key, val, MAX_FIELDS);
	if (nt < 0 || nf < 0)
		return 1;
	for (int f = 0; f < nf; f++) {
		if (!capture_key(key[f]))
			continue;
		if (*n + (size_t)nt > MAX_ITEMS)
			return 1;
		for (int t = 0; t < nt; t++) {
			if (RT_GROW(*it, *n + 1, *cap))
				return RT_ENOMEM;
			(*it)[(*n)++] = (struct capitem){
				.tag = tag[t], .key = key[f], .val = val[f],
				.pod = pod, .count = sqlite3_column_double(s, 3),
			};
		}
	}
	return 0;
}

/* The items of the incident's first rows with captures; 1: a row is not
 * plain JSON. */
static int capitem_rows(struct store *st, int64_t id, struct capitem **it,
			size_t *n, bool *full)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_CAPTURE_ROWS);
	size_t cap = 0, rows = 0;
	int rc, err = 0;

	*it = NULL;
	*n = 0;
	sqlite3_bind_int64(s, 1, id);
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		err = capitem_add(st, s, it, n, &cap);
		rows++;
	}
	sqlite3_reset(s);
	*full = rows == FIRST_ROWS;
	return err ? err : rc != SQLITE_DONE ? store_db_fail(st, "captures") : 0;
}

/* The items grouped, counted and ordered; the first 48 become captures. */
static int capsum_emit(struct store *st, struct capitem *it, size_t n,
		       struct corr_capture *c, size_t max, size_t *nc)
{
	struct capsum *g;
	size_t ng = 0;
	int err = 0;

	if (!n)
		return 0;        /* qsort takes no NULL, even of none */
	if (!(g = calloc(n, sizeof(*g))))
		return RT_ENOMEM;
	qsort(it, n, sizeof(*it), capitem_cmp);
	for (size_t i = 0; i < n; i++) {
		bool same = i && !str_cmp(it[i].tag, it[i - 1].tag) &&
			    !str_cmp(it[i].key, it[i - 1].key) &&
			    !str_cmp(it[i].val, it[i - 1].val);
		struct capsum *x = same ? &g[ng - 1] : &g[ng++];

		if (!same)
			x->it = &it[i];
		x->total += it[i].count;
		x->pods += it[i].pod && (!same || nullcmp(it[i].pod,
							  it[i - 1].pod));
	}
	for (size_t i = 0; i < ng; i++)
		g[i].times = g[i].total >= 9223372036854775807.0 ? INT64_MAX :
			(int64_t)g[i].total;
	qsort(g, ng, sizeof(*g), capsum_cmp);
	for (size_t i = 0; !err && i < ng && i < 48 && *nc < max; i++) {
		struct corr_capture *x = &c[(*nc)++];

		memset(x, 0, sizeof(*x));
		x->tag = store_scratch_dup(st, g[i].it->tag.p, g[i].it->tag.n);
		x->field = store_scratch_dup(st, g[i].it->key.p, g[i].it->key.n);
		x->value = store_scratch_dup(st, g[i].it->val.p, g[i].it->val.n);
		x->pods = g[i].pods;
		x->times = g[i].times;
		if (!x->tag || !x->field || !x->value)
			err = RT_ENOMEM;
	}
	free(g);
	return err;
}

/* INC_CAPTURES's rows, aggregated here; 1: a row is not plain JSON.
 * *full: the read reached FIRST_ROWS. */
static int captures(struct store *st, int64_t id, struct corr_capture *c,
		    size_t max, size_t *nc, bool *full)
{
	struct capitem *it;
	size_t n;
	int err = capitem_rows(st, id, &it, &n, full);

	if (!err)
		err = capsum_emit(st, it, n, c, max, nc);
	free(it);
	return err;
}

/* ---- tag counts (INC_TAG_COUNTS, without json_each) ------------------ */

/* One of an incident's first rows: its tags' JSON, its pod (NULL: none). */
struct tagrow {
	const char *tags, *pod;
	double count;
};

/* One tag's count: its distinct pods and occurrences (as total()). */
struct tagsum {
	const char *tag;
	size_t n;
	int64_t pods, times;
	double total;
	size_t group;                   /* the last pod group counted + 1 */
};

static int tagrow_cmp(const void *x, const void *y)
{
	const struct tagrow *a = x, *b = y;
	int c = nullcmp(a->pod, b->pod);

	return c ? c : strcmp(a->tags, b->tags);
}

/* ORDER BY times DESC, as SQLite orders INC_TAG_COUNTS: ties by tag
 * descending, the reverse of the order GROUP BY hands them over in. */
static int tagsum_cmp(const void *x, const void *y)
{
	const struct tagsum *a = x, *b = y;
	size_t n = a->n < b->n ? a->n : b->n;
	int c;

	if (a->times != b->times)
		return a->times > b->times ? -1 : 1;
	c = memcmp(b->tag, a->tag, n);
	return c ? c : (b->n > a->n) - (b->n < a->n);
}

/* The rows, grouped by pod; 1 when a row's tags need a JSON parser. */
static int tag_rows(struct store *st, int64_t id, struct tagrow **out,
		    size_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_TAG_ROWS);
	struct tagrow *r = rt_arena_alloc(&st->scratch,
					  FIRST_ROWS * sizeof(*r));
	int rc, err = 0;

	if (!r)
		return RT_ENOMEM;
	*n = 0;
	sqlite3_bind_int64(s, 1, id);
	while (!err && *n < FIRST_ROWS &&
	       (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *tags = store_col_text(s, 0);
		struct tagrow *x = &r[(*n)++];

		if (strchr(tags, '\\'))
			err = 1;
		x->tags = store_scratch_dup(st, tags, strlen(tags));
		x->pod = sqlite3_column_type(s, 1) == SQLITE_NULL ? NULL :
			store_scratch_dup(st, store_col_text(s, 1),
					  (size_t)sqlite3_column_bytes(s, 1));
		x->count = sqlite3_column_double(s, 2);
		if (!x->tags || (sqlite3_column_type(s, 1) != SQLITE_NULL &&
				 !x->pod))
			err = RT_ENOMEM;
	}
	sqlite3_reset(s);
	if (!err && *n < FIRST_ROWS && rc != SQLITE_DONE)
		err = store_db_fail(st, "tag counts");
	qsort(r, *n, sizeof(*r), tagrow_cmp);
	*out = r;
	return err;
}

static struct tagsum *tagsum_of(struct tagsum **t, size_t *n, size_t *cap,
				const char *tag, size_t len)
{
	for (size_t i = 0; i < *n; i++)
		if ((*t)[i].n == len && !memcmp((*t)[i].tag, tag, len))
			return &(*t)[i];
	if (RT_GROW(*t, *n + 1, *cap))
		return NULL;
	memset(&(*t)[*n], 0, sizeof(**t));
	(*t)[*n].tag = tag;
	(*t)[*n].n = len;
	return &(*t)[(*n)++];
}

/* Adds a row to each tag of its JSON array (tag names are [a-z0-9_.-]:
 * no escapes); group: its pod's, 0 for none. */
static int tag_add(struct tagsum **t, size_t *n, size_t *cap,
		   const struct tagrow *r, size_t group)
{
	const char *p = r->tags, *q;

	while ((p = strchr(p, '"')) && (q = strchr(p + 1, '"'))) {
		struct tagsum *x = tagsum_of(t, n, cap, p + 1,
					     (size_t)(q - p - 1));

		if (!x)
			return RT_ENOMEM;
		x->total += r->count;
		if (group && x->group != group) {
			x->group = group;
			x->pods++;
		}
		p = q + 1;
	}
	return 0;
}

/* Each tag of the incident's first rows: count(DISTINCT pod), the
 * saturated total of count, the most first (INC_TAG_COUNTS). */
static int tag_counts(struct store *st, int64_t id, struct corr_capture *c,
		      size_t max, size_t *nc, bool *full)
{
	struct tagsum *t = NULL;
	struct tagrow *r;
	size_t n, nt = 0, cap = 0, group = 0;
	int err = tag_rows(st, id, &r, &n);

	*full = n == FIRST_ROWS;
	for (size_t i = 0; !err && i < n; i++) {
		if (r[i].pod && (!i || nullcmp(r[i].pod, r[i - 1].pod)))
			group++;
		err = tag_add(&t, &nt, &cap, &r[i], r[i].pod ? group : 0);
	}
	for (size_t i = 0; i < nt; i++)
		t[i].times = t[i].total >= 9223372036854775807.0 ? INT64_MAX :
			(int64_t)t[i].total;
	if (!err && nt)
		qsort(t, nt, sizeof(*t), tagsum_cmp);
	for (size_t i = 0; !err && i < nt && i < 64 && *nc < max; i++) {
		struct corr_capture *x = &c[(*nc)++];

		memset(x, 0, sizeof(*x));
		x->tag = store_scratch_dup(st, t[i].tag, t[i].n);
		x->pods = t[i].pods;
		x->times = t[i].times;
		if (!x->tag)
			err = RT_ENOMEM;
	}
	free(t);
	return err;
}

/* The revisions of the release that opened another incident. */
static int sick_revisions(struct store *st, int64_t id,
			  struct plan_incrow *row)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_SICK_REVS);
	int *v = rt_arena_alloc(&st->scratch, 64 * sizeof(*v));
	int rc;

	if (!v)
		return RT_ENOMEM;
	row->sick = v;
	row->nsick = 0;
	sqlite3_bind_text(s, 1, row->ns, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, row->rel, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, id);
	while (row->nsick < 64 && (rc = sqlite3_step(s)) == SQLITE_ROW)
		v[row->nsick++] = sqlite3_column_int(s, 0);
	sqlite3_reset(s);
	return row->nsick < 64 && rc != SQLITE_DONE ?
		store_db_fail(st, "incident revisions") : 0;
}

/* ---- the cache ----------------------------------------------------- */

/*
 * Once an incident has FIRST_ROWS rows, a diagnosis reads the same ones at
 * every commit: new rows get larger ids and never enter them. Only an
 * events row updated or deleted (a repeat counted, a move, a merge, a
 * deletion) or a rollback can change them, and each of those moves
 * st->ev_changes. So a part read in full is kept, per incident, until
 * then. Bounded: CACHE_SLOTS incidents (direct-mapped by id), a part of
 * more than CACHE_BYTES not kept.
 */
#define CACHE_SLOTS 64
#define CACHE_BYTES 65536

enum { PART_CAPTURES, PART_TAGS, PARTS };

struct capslot {
	int64_t id;
	uint64_t changes;               /* st->ev_changes when read */
	size_t n;
	struct corr_capture *c;         /* n, and their strings after */
};

struct capcache {
	struct capslot slot[CACHE_SLOTS][PARTS];
};

void store_capcache_free(struct store *st)
{
	if (!st->capcache)
		return;
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		for (size_t k = 0; k < PARTS; k++)
			free(st->capcache->slot[i][k].c);
	free(st->capcache);
	st->capcache = NULL;
}

static struct capslot *slot_of(struct store *st, int64_t id, int part)
{
	if (!st->capcache && !(st->capcache = calloc(1, sizeof(*st->capcache))))
		return NULL;
	return &st->capcache->slot[(uint64_t)id % CACHE_SLOTS][part];
}

static size_t strsize(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static char *keep(char **to, const char *s)
{
	size_t n = strsize(s);

	if (!s)
		return NULL;
	memcpy(*to, s, n);
	*to += n;
	return *to - n;
}

static void cache_put(struct store *st, int64_t id, int part,
		      const struct corr_capture *c, size_t n)
{
	struct capslot *x = slot_of(st, id, part);
	size_t bytes = n * sizeof(*c);
	char *p;

	for (size_t i = 0; i < n; i++)
		bytes += strsize(c[i].tag) + strsize(c[i].field) +
			 strsize(c[i].value);
	if (!x || bytes > CACHE_BYTES)
		return;
	free(x->c);
	if (!(x->c = malloc(bytes ? bytes : 1)))
		return;
	x->id = id;
	x->changes = st->ev_changes;
	x->n = n;
	p = (char *)(x->c + n);
	for (size_t i = 0; i < n; i++) {
		x->c[i] = c[i];
		x->c[i].tag = keep(&p, c[i].tag);
		x->c[i].field = keep(&p, c[i].field);
		x->c[i].value = keep(&p, c[i].value);
	}
}

static const char *dup(struct store *st, const char *s)
{
	return s ? store_scratch_dup(st, s, strlen(s)) : NULL;
}

/* The part kept for the incident, appended to c; false: none. */
static bool cache_get(struct store *st, int64_t id, int part,
		      struct corr_capture *c, size_t max, size_t *nc)
{
	struct capslot *x = slot_of(st, id, part);

	if (!x || !x->c || x->id != id || x->changes != st->ev_changes ||
	    *nc + x->n > max)
		return false;
	for (size_t i = 0; i < x->n; i++) {
		struct corr_capture *y = &c[*nc + i];

		*y = x->c[i];     /* its strings: the commit's, as if read */
		y->tag = dup(st, x->c[i].tag);
		y->field = dup(st, x->c[i].field);
		y->value = dup(st, x->c[i].value);
		if ((x->c[i].tag && !y->tag) || (x->c[i].field && !y->field) ||
		    (x->c[i].value && !y->value))
			return false;
	}
	*nc += x->n;
	return true;
}

/* One part (captures or tag counts) into c: kept, or read and then kept
 * if the read was in full. A row that is not plain JSON hands the part
 * to its SQL statement. */
static int read_part(struct store *st, int64_t id, int part,
		     struct corr_capture *c, size_t max, size_t *nc)
{
	size_t from = *nc;
	bool full = false;
	int err;

	if (cache_get(st, id, part, c, max, nc))
		return 0;
	err = part == PART_CAPTURES ? captures(st, id, c, max, nc, &full) :
		tag_counts(st, id, c, max, nc, &full);
	if (err == 1) {
		sqlite3_stmt *s = store_stmt(st, part == PART_CAPTURES ?
					     S_INC_CAPTURES : S_INC_TAG_COUNTS);

		sqlite3_bind_int64(s, 1, id);
		*nc = from;
		full = false;
		err = capture_rows(st, s, part == PART_CAPTURES, c, max, nc);
	}
	if (!err && full)
		cache_put(st, id, part, c + from, *nc - from);
	return err;
}

/*
 * What an incident's events captured (the objects and paths its rules
 * named), per tag, and the revisions of its release that had incidents
 * of their own: the words of its evidence and remedy. Bounded: the first
 * events of the incident, the most frequent values.
 */
int store_read_captures(struct store *st, int64_t id, struct plan_incrow *row)
{
	enum { MAX_CAPS = 48 + 64 };
	struct corr_capture *c = rt_arena_alloc(&st->scratch,
						MAX_CAPS * sizeof(*c));
	size_t n = 0;
	int err;

	if (!c)
		return RT_ENOMEM;
	if ((err = read_part(st, id, PART_CAPTURES, c, MAX_CAPS, &n)) ||
	    (err = read_part(st, id, PART_TAGS, c, MAX_CAPS, &n)))
		return err;
	row->caps = c;
	row->ncaps = n;
	return sick_revisions(st, id, row);
}
