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
