/*
 * diag.c: the last step of a batch. Every incident the batch touched gets
 * its opening revision, the revisions deployed while it was open, its
 * status (closed once the newest record seen anywhere is more than the gap
 * past its last event) and its diagnosis with evidence, remedy and the
 * affected pods, all recomputed from the stored row, so the result depends
 * only on the stored events and revisions.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store_int.h"

static int id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

struct objlist {
	struct corr_object *o;
	size_t n, cap;
};

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
	const char *kind = col_text(s, 0), *name = col_text(s, 1);
	struct corr_object *o;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct corr_object *p = realloc(l->o, cap * sizeof(*p));

		if (!p)
			return RT_ENOMEM;
		l->o = p;
		l->cap = cap;
	}
	o = &l->o[l->n++];
	o->kind = scratch_dup(st, kind, strlen(kind));
	o->name = scratch_dup(st, name, strlen(name));
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
		err = db_fail(st, "incident objects");
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
	sqlite3_stmt *s = stmt(st, S_OBJ_GLOB);
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
		const char *name = col_text(s, 1);
		int err = 0;

		if (fnmatch(glob, name, 0) != 0)
			continue;
		if (!objlist_has(l, kind, name))
			err = objlist_push(st, s, l);
		sqlite3_reset(s);
		return err;
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : db_fail(st, "incident objects");
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
		sqlite3_stmt *s = stmt(st, S_OBJ_NEXT_KIND);
		int rc;

		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, prev, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(s);
		if (rc != SQLITE_ROW || sqlite3_column_type(s, 0) == SQLITE_NULL) {
			sqlite3_reset(s);
			return rc == SQLITE_ROW ? 0 : db_fail(st, "object kinds");
		}
		snprintf(prev, sizeof(prev), "%s", col_text(s, 0));
		sqlite3_reset(s);
		if ((err = glob_kind(st, id, prev, g, l)))
			return err;
	}
}

static int obj_cmp(const void *a, const void *b)
{
	const struct corr_object *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);

	return c ? c : strcmp(x->name, y->name);
}

/*
 * What the diagnosis reads of an incident's objects, bounded whatever the
 * incident's size: the first CORR_MAX_PODS pods (read in order off the
 * incident_objects_first index), the first ConfigMap, Secret and Job
 * (what remedies name), and for every `object` condition of the rules and
 * the helm-install check one matching object. The pod total is the
 * incident's pod_count, kept as objects are written. Conditions see the
 * same answers as over the full list, and the cost of a batch does not
 * grow with the objects of the incidents it touches.
 */
static int load_objects(struct store *st, int64_t id, struct objlist *l)
{
	size_t nd = st->rules ? rules_diagnosis_count(st->rules) : 0;
	sqlite3_stmt *s;
	int err;

	l->n = 0;
	s = stmt(st, S_OBJ_PODS);
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, CORR_MAX_PODS);
	if ((err = objlist_rows(st, s, l)))
		return err;
	/* what the remedy names (config_name, workload_name): the first
	 * ConfigMap, Secret and Job; what the install check looks for */
	if ((err = objlist_glob(st, id, "ConfigMap/*", l)) ||
	    (err = objlist_glob(st, id, "Secret/*", l)) ||
	    (err = objlist_glob(st, id, "Job/*", l)) ||
	    (err = objlist_glob(st, id, "Pod/helm-install-*", l)) ||
	    (err = objlist_glob(st, id, "Job/helm-install-*", l)))
		return err;
	for (size_t i = 0; i < nd && !err; i++) {
		const char *g = rules_diagnosis_at(st->rules, i)->object_glob;
		char one[256];

		/* an object line may list several globs, blank-separated */
		while (g && !err && *(g += strspn(g, " \t"))) {
			size_t n = strcspn(g, " \t");

			snprintf(one, sizeof(one), "%.*s", (int)n, g);
			err = objlist_glob(st, id, one, l);
			g += n;
		}
	}
	/* the order a full scan of the table gives: kind, then name */
	if (!err && l->n > 1)
		qsort(l->o, l->n, sizeof(*l->o), obj_cmp);
	return err;
}

static void json_strings(struct store_buf *b, const char *const *v, size_t n,
			 size_t stride)
{
	buf_reset(b);
	buf_addc(b, '[');
	for (size_t i = 0; i < n; i++) {
		const char *s = *(const char *const *)((const char *)v + i * stride);

		if (i)
			buf_addc(b, ',');
		buf_json_str(b, s, strlen(s));
	}
	buf_addc(b, ']');
}

static int write_diag(struct store *st, int64_t id,
		      const struct corr_incview *v,
		      const struct corr_diagnosis *d)
{
	sqlite3_stmt *s = stmt(st, S_INC_DIAG);
	bool closed = v->last_ns + st->gap_ns < st->watermark_ns;
	const char *evp[CORR_MAX_EVIDENCE];
	char lat[400], title[600];

	corr_later_json(v, lat, sizeof(lat));
	sqlite3_bind_int(s, 1, v->opening ? v->opening->revision : 0);
	bind_cstr(s, 2, v->opening ? v->opening->status : NULL);
	sqlite3_bind_text(s, 3, lat, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 4, closed ? "closed" : "open", -1, SQLITE_STATIC);
	if (closed) {
		bind_iso(s, 5, v->last_ns + st->gap_ns);
		sqlite3_bind_int64(s, 6, v->last_ns + st->gap_ns);
	}
	if (d->rule) {
		bind_cstr(s, 7, d->rule->id);
		bind_cstr(s, 8, d->rule->title);
		if (d->rule->remedy) {
			const char *rem = corr_remedy(&st->remedy, d->rule->remedy,
						      v, d);

			if (!rem)
				return RT_ENOMEM;
			bind_cstr(s, 10, rem);
		}
	} else {
		/* undiagnosed: the tags say what happened */
		corr_untitled(v, title, sizeof(title));
		bind_cstr(s, 8, title);
	}
	for (unsigned i = 0; i < d->nevidence; i++)
		evp[i] = d->evidence[i];
	json_strings(&st->buf, evp, d->nevidence, sizeof(evp[0]));
	json_strings(&st->buf2, d->pods, d->npods, sizeof(d->pods[0]));
	if (!buf_str(&st->buf) || !buf_str(&st->buf2))
		return RT_ENOMEM;
	sqlite3_bind_text(s, 9, buf_str(&st->buf), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 11, buf_str(&st->buf2), -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 12, id);
	return db_done(st, s, "diagnosis");
}

static int diagnose_one(struct store *st, int64_t id, struct objlist *objs)
{
	sqlite3_stmt *s = stmt(st, S_INC_GET);
	struct corr_tagset tags = { 0 };
	struct corr_incview v = { 0 };
	struct corr_diagnosis *d;
	const char *ns, *rel;
	int rc, err;

	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		/* merged into another or dropped in this batch */
		return rc == SQLITE_DONE ? 0 : db_fail(st, "incident");
	}
	ns = scratch_dup(st, col_text(s, 0), strlen(col_text(s, 0)));
	rel = scratch_dup(st, col_text(s, 1), strlen(col_text(s, 1)));
	v.opened_ns = sqlite3_column_int64(s, 2);
	v.last_ns = sqlite3_column_int64(s, 3);
	v.pods_total = (size_t)sqlite3_column_int64(s, 5);
	corr_tagset_parse(&tags, col_text(s, 4), store_intern_cb, &st->intern);
	sqlite3_reset(s);
	if (!ns || !rel)
		return RT_ENOMEM;
	if ((err = load_objects(st, id, objs)))
		return err;
	v.ns = ns;
	v.release = rel;
	v.tags = &tags;
	v.objects = objs->o;
	v.nobjects = objs->n;
	v.gap_ns = st->gap_ns;
	v.rel = corr_registry_find(st->reg, rt_str_make(ns, strlen(ns)),
				   rt_str_make(rel, strlen(rel)));
	v.opening = corr_release_at(v.rel, v.opened_ns);
	d = malloc(sizeof(*d));
	if (!d)
		return RT_ENOMEM;
	corr_diagnose_rules(st->rules, &v, d);
	err = write_diag(st, id, &v, d);
	free(d);
	return err;
}

int diagnose_touched(struct store *st)
{
	struct objlist objs = { 0 };
	int err = 0;

	if (st->ntouched)
		qsort(st->touched, st->ntouched, sizeof(*st->touched), id_cmp);
	for (size_t i = 0; i < st->ntouched && !err; i++) {
		if (i && st->touched[i] == st->touched[i - 1])
			continue;
		err = diagnose_one(st, st->touched[i], &objs);
	}
	free(objs.o);
	return err;
}
