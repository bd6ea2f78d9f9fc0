/*
 * diag.c: what a diagnosis reads of an incident (its row, a bounded set
 * of its objects) and the row it writes back. The diagnosis itself is the
 * correlator's (corr_plan_diag).
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store_int.h"

static bool objlist_has(const struct objlist *l, const char *kind,
			const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->o[i].kind, kind) && !strcmp(l->o[i].name, name))
			return true;
	return false;
}

/* Appends the row s is on (kind, name, first, last, events). */
static int objlist_push(struct store *st, sqlite3_stmt *s, struct objlist *l)
{
	const char *kind = store_col_text(s, 0), *name = store_col_text(s, 1);
	struct plan_object *o;

	if (RT_GROW(l->o, l->n + 1, l->cap))
		return RT_ENOMEM;
	o = &l->o[l->n++];
	o->kind = store_scratch_dup(st, kind, strlen(kind));
	o->name = store_scratch_dup(st, name, strlen(name));
	o->first_ns = sqlite3_column_int64(s, 2);
	o->last_ns = sqlite3_column_int64(s, 3);
	o->events = sqlite3_column_int64(s, 4);
	return o->kind && o->name ? 0 : RT_ENOMEM;
}

/* Appends every row of s. */
static int objlist_rows(struct store *st, sqlite3_stmt *s, struct objlist *l)
{
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW)
		err = objlist_push(st, s, l);
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "incident objects");
	sqlite3_reset(s);
	return err;
}

/* One object of kind matching glob (fnmatch, as diagnose.c matches). The
 * glob's literal head bounds the names read: "helm-install-*" reads those
 * from "helm-install-" to "helm-install." only, by the table's key. (A
 * GLOB in the SQL would re-prepare the statement at every new pattern.) */
static int glob_kind(struct store *st, int64_t id, const char *kind,
		     const char *glob, struct objlist *l)
{
	sqlite3_stmt *s = store_stmt(st, S_OBJ_GLOB);
	size_t head = strcspn(glob, "*?[\\");
	char hi[256];
	int rc;

	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, glob, (int)head, SQLITE_STATIC);
	/* the first string past every name starting with the head */
	while (head > 0 && (unsigned char)glob[head - 1] == 0xff)
		head--;
	if (head == 0 || head >= sizeof(hi)) {
		sqlite3_bind_text(s, 4, "\xff", 1, SQLITE_STATIC);
	} else {
		memcpy(hi, glob, head);
		hi[head - 1]++;
		sqlite3_bind_text(s, 4, hi, (int)head, SQLITE_TRANSIENT);
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = store_col_text(s, 1);
		int err = 0;

		if (fnmatch(glob, name, 0) != 0)
			continue;
		if (!objlist_has(l, kind, name))
			err = objlist_push(st, s, l);
		sqlite3_reset(s);
		return err;
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : store_db_fail(st, "incident objects");
}

/* Kubernetes kinds are CamelCase; a rule may write them in any case. */
static const char *canonical_kind(const char *k, size_t n, char *buf,
				  size_t size)
{
	static const char *const kinds[] = {
		"Pod", "Job", "ConfigMap", "Secret", "Deployment", "ReplicaSet",
		"StatefulSet", "DaemonSet", "CronJob", "HelmChart",
		"HelmChartConfig", "Service", "PersistentVolumeClaim", "Node",
		"Ingress", "HorizontalPodAutoscaler",
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i]) == n && !strncasecmp(kinds[i], k, n))
			return kinds[i];
	snprintf(buf, size, "%.*s", (int)n, k);
	return buf;
}

/* One object matching "Kind/glob", or "glob" of any kind (each kind of
 * the incident in turn, found by seeks). */
static int objlist_glob(struct store *st, int64_t id, const char *g,
			struct objlist *l)
{
	const char *slash = strchr(g, '/');
	char kbuf[128], prev[128] = "";
	int err = 0;

	if (slash)
		return glob_kind(st, id, canonical_kind(g, (size_t)(slash - g),
							kbuf, sizeof(kbuf)),
				 slash + 1, l);
	for (;;) {
		sqlite3_stmt *s = store_stmt(st, S_OBJ_NEXT_KIND);
		int rc;

		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, prev, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(s);
		if (rc != SQLITE_ROW || sqlite3_column_type(s, 0) == SQLITE_NULL) {
			sqlite3_reset(s);
			return rc == SQLITE_ROW ? 0 : store_db_fail(st, "object kinds");
		}
		snprintf(prev, sizeof(prev), "%s", store_col_text(s, 0));
		sqlite3_reset(s);
		if ((err = glob_kind(st, id, prev, g, l)))
			return err;
	}
}

static int obj_cmp(const void *a, const void *b)
{
	const struct plan_object *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);

	return c ? c : strcmp(x->name, y->name);
}

/*
 * What the diagnosis reads of an incident's objects, bounded whatever the
 * incident's size: the first PLAN_MAX_PODS pods (the first rows of the
 * table, which keeps them in that order) and, for each of the globs the
 * correlator asks for, one matching object. The pod total is the incident's
 * pod_count, kept as objects are written. Conditions see the same answers
 * as over the full list, and the cost of a batch does not grow with the
 * objects of the incidents it touches.
 */
int store_read_objects(struct store *st, int64_t id, const char *const *globs,
		       size_t nglobs, const struct plan_object **out, size_t *n)
{
	struct objlist *l = &st->objlist;
	sqlite3_stmt *s;
	int err;

	l->n = 0;
	s = store_stmt(st, S_OBJ_PODS);
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, PLAN_MAX_PODS);
	if ((err = objlist_rows(st, s, l)))
		return err;
	for (size_t i = 0; i < nglobs && !err; i++)
		err = objlist_glob(st, id, globs[i], l);
	/* the order a full scan of the table gives: kind, then name */
	if (!err && l->n > 1)
		qsort(l->o, l->n, sizeof(*l->o), obj_cmp);
	*out = l->o;
	*n = l->n;
	return err;
}

int store_read_incident(struct store *st, int64_t id, struct plan_incrow *row)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_GET);
	int rc;

	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		/* merged into another or dropped in this batch */
		return rc == SQLITE_DONE ? 0 : store_db_fail(st, "incident");
	}
	row->ns = store_scratch_dup(st, store_col_text(s, 0), strlen(store_col_text(s, 0)));
	row->rel = store_scratch_dup(st, store_col_text(s, 1), strlen(store_col_text(s, 1)));
	row->opened = sqlite3_column_int64(s, 2);
	row->last = sqlite3_column_int64(s, 3);
	row->tags = store_scratch_dup(st, store_col_text(s, 4), strlen(store_col_text(s, 4)));
	row->pods_total = sqlite3_column_int64(s, 5);
	row->caps = NULL;
	row->ncaps = 0;
	row->sick = NULL;
	row->nsick = 0;
	sqlite3_reset(s);
	return row->ns && row->rel && row->tags ? 1 : RT_ENOMEM;
}

static void json_strings(struct rt_buf *b, const char *const *v, size_t n)
{
	rt_buf_reset(b);
	rt_buf_addc(b, '[');
	for (size_t i = 0; i < n; i++) {
		const char *s = v[i];

		if (i)
			rt_buf_addc(b, ',');
		store_buf_json_str(b, s, strlen(s));
	}
	rt_buf_addc(b, ']');
}

int store_write_diag(struct store *st, int64_t id, const struct plan_diag *d)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_DIAG);
	char closed[RT_TIME_BUFSZ];

	sqlite3_bind_int(s, 1, d->revision);
	store_bind_cstr(s, 2, d->rev_status);
	sqlite3_bind_text(s, 3, d->later, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 4, d->closed ? "closed" : "open", -1,
			  SQLITE_STATIC);
	if (d->closed) {
		store_bind_iso(s, 5, d->closed_ns, closed);
		sqlite3_bind_int64(s, 6, d->closed_ns);
	}
	store_bind_cstr(s, 7, d->diagnosis);
	store_bind_cstr(s, 8, d->title);
	store_bind_cstr(s, 10, d->remedy);
	json_strings(&st->buf, d->evidence, d->nevidence);
	json_strings(&st->buf2, d->pods, d->npods);
	if (!store_buf_str(&st->buf) || !store_buf_str(&st->buf2))
		return RT_ENOMEM;
	sqlite3_bind_text(s, 9, store_buf_str(&st->buf), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 11, store_buf_str(&st->buf2), -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 12, id);
	return store_db_done(st, s, "diagnosis");
}

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
