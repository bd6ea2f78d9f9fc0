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

static int nullcmp(const char *a, const char *b)
{
	return !a || !b ? (a != NULL) - (b != NULL) : strcmp(a, b);
}

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
	enum { MAX_ROWS = 4096 };
	sqlite3_stmt *s = store_stmt(st, S_INC_TAG_ROWS);
	struct tagrow *r = rt_arena_alloc(&st->scratch, MAX_ROWS * sizeof(*r));
	int rc, err = 0;

	if (!r)
		return RT_ENOMEM;
	*n = 0;
	sqlite3_bind_int64(s, 1, id);
	while (!err && *n < MAX_ROWS && (rc = sqlite3_step(s)) == SQLITE_ROW) {
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
	if (!err && *n < MAX_ROWS && rc != SQLITE_DONE)
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
		      size_t max, size_t *nc)
{
	struct tagsum *t = NULL;
	struct tagrow *r;
	size_t n, nt = 0, cap = 0, group = 0;
	int err = tag_rows(st, id, &r, &n);

	for (size_t i = 0; !err && i < n; i++) {
		if (r[i].pod && (!i || nullcmp(r[i].pod, r[i - 1].pod)))
			group++;
		err = tag_add(&t, &nt, &cap, &r[i], r[i].pod ? group : 0);
	}
	for (size_t i = 0; i < nt; i++)
		t[i].times = t[i].total >= 9223372036854775807.0 ? INT64_MAX :
			(int64_t)t[i].total;
	if (!err)
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
	sqlite3_stmt *s;
	size_t n = 0;
	int err;

	if (!c)
		return RT_ENOMEM;
	s = store_stmt(st, S_INC_CAPTURES);
	sqlite3_bind_int64(s, 1, id);
	if ((err = capture_rows(st, s, true, c, MAX_CAPS, &n)))
		return err;
	err = tag_counts(st, id, c, MAX_CAPS, &n);
	if (err == 1) {   /* escaped tags: SQLite's JSON reads them */
		s = store_stmt(st, S_INC_TAG_COUNTS);
		sqlite3_bind_int64(s, 1, id);
		err = capture_rows(st, s, false, c, MAX_CAPS, &n);
	}
	if (err)
		return err;
	row->caps = c;
	row->ncaps = n;
	return sick_revisions(st, id, row);
}
