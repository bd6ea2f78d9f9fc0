/*
 * diag.c: the last step of a batch. Every incident the batch touched gets
 * its opening revision, the revisions deployed while it was open, its
 * status (closed once the newest record seen anywhere is more than the gap
 * past its last event) and its diagnosis with evidence, remedy and the
 * affected pods, all recomputed from the stored row, so the result depends
 * only on the stored events and revisions.
 */
#include <stdlib.h>
#include <string.h>

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

static int load_objects(struct store *st, int64_t id, struct objlist *l)
{
	sqlite3_stmt *s = stmt(st, S_OBJ_LIST);
	int rc, err = 0;

	l->n = 0;
	sqlite3_bind_int64(s, 1, id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct corr_object *o;
		const char *kind = col_text(s, 0), *name = col_text(s, 1);

		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 32;
			struct corr_object *p = realloc(l->o, cap * sizeof(*p));

			if (!p) {
				err = RT_ENOMEM;
				break;
			}
			l->o = p;
			l->cap = cap;
		}
		o = &l->o[l->n++];
		o->kind = scratch_dup(st, kind, strlen(kind));
		o->name = scratch_dup(st, name, strlen(name));
		o->first_ns = sqlite3_column_int64(s, 2);
		o->last_ns = sqlite3_column_int64(s, 3);
		o->events = sqlite3_column_int64(s, 4);
		if (!o->kind || !o->name) {
			err = RT_ENOMEM;
			break;
		}
	}
	if (!err && rc != SQLITE_DONE)
		err = db_fail(st, "incident objects");
	sqlite3_reset(s);
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

/* The last successful revision before the opening one. */
static int previous_rev(const struct corr_incview *v)
{
	int best = 0;

	if (!v->opening)
		return 0;
	for (size_t i = 0; v->rel && i < v->rel->nrevs; i++) {
		const struct corr_rev *r = &v->rel->revs[i];

		if (r->revision < v->opening->revision && r->status &&
		    (!strcmp(r->status, "superseded") ||
		     !strcmp(r->status, "deployed")))
			best = r->revision;
	}
	return best ? best : v->opening->revision - 1;
}

/* The config object the incident is about: a hook ConfigMap of the
 * opening revision, else an affected ConfigMap or Secret. */
static const char *config_name(const struct corr_incview *v, char *buf,
			       size_t size)
{
	if (v->opening && v->opening->hooks && *v->opening->hooks) {
		snprintf(buf, size, "%.*s", (int)strcspn(v->opening->hooks, ","),
			 v->opening->hooks);
		return buf;
	}
	for (size_t i = 0; i < v->nobjects; i++)
		if (!strcmp(v->objects[i].kind, "ConfigMap") ||
		    !strcmp(v->objects[i].kind, "Secret"))
			return v->objects[i].name;
	return NULL;
}

/*
 * Remedies name things with placeholders (rules/packs/diagnoses.rules):
 * <ns>, <release>, <rev>, <previous-rev>, <name>, and <pod> (the first
 * affected pod; "<pod> ..." lists them all). Unknown ones stay as written.
 */
static const char *expand_remedy(struct store *st, const char *tpl,
				 const struct corr_incview *v,
				 const struct corr_diagnosis *d)
{
	struct store_buf *b = &st->buf;
	char num[24], name[256];

	buf_reset(b);
	for (const char *p = tpl; *p;) {
		const char *rep = NULL;
		size_t skip = 0;

		if (*p != '<') {
			buf_addc(b, *p++);
			continue;
		}
		if (!strncmp(p, "<ns>", 4)) {
			rep = v->ns, skip = 4;
		} else if (!strncmp(p, "<release>", 9)) {
			rep = v->release, skip = 9;
		} else if (!strncmp(p, "<rev>", 5) && v->opening) {
			snprintf(num, sizeof(num), "%d", v->opening->revision);
			rep = num, skip = 5;
		} else if (!strncmp(p, "<previous-rev>", 14) &&
			   previous_rev(v) > 0) {
			snprintf(num, sizeof(num), "%d", previous_rev(v));
			rep = num, skip = 14;
		} else if (!strncmp(p, "<name>", 6)) {
			rep = config_name(v, name, sizeof(name)), skip = 6;
		} else if (!strncmp(p, "<pod> ...", 9) && d->npods) {
			for (unsigned i = 0; i < d->npods; i++)
				buf_addf(b, "%s%s", i ? " " : "", d->pods[i]);
			p += 9;
			continue;
		} else if (!strncmp(p, "<pod>", 5) && d->npods) {
			rep = d->pods[0], skip = 5;
		}
		if (!rep) {
			buf_addc(b, *p++);
			continue;
		}
		buf_add(b, rep, strlen(rep));
		p += skip;
	}
	return buf_str(b);
}

static int write_diag(struct store *st, int64_t id,
		      const struct corr_incview *v,
		      const struct corr_diagnosis *d)
{
	sqlite3_stmt *s = stmt(st, S_INC_DIAG);
	const struct corr_rev *later[32];
	size_t nlater = corr_later_revisions(v, later, 32);
	bool closed = v->last_ns + st->gap_ns < st->watermark_ns;
	const char *evp[CORR_MAX_EVIDENCE];
	char lat[400], title[600];
	size_t len = 0;

	lat[len++] = '[';
	for (size_t i = 0; i < nlater && i < 32 && len < sizeof(lat) - 16; i++)
		len += (size_t)snprintf(lat + len, sizeof(lat) - len, "%s%d",
					i ? "," : "", later[i]->revision);
	lat[len++] = ']';
	lat[len] = '\0';
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
			const char *rem = expand_remedy(st, d->rule->remedy, v, d);

			if (!rem)
				return RT_ENOMEM;
			bind_cstr(s, 10, rem);
		}
	} else {
		/* undiagnosed: the tags say what happened */
		len = 0;
		title[0] = '\0';
		for (unsigned i = 0; i < v->tags->n && len < sizeof(title) - 70; i++)
			len += (size_t)snprintf(title + len, sizeof(title) - len,
						"%s%s", i ? ", " : "", v->tags->t[i]);
		snprintf(title + len, sizeof(title) - len, " in %s", v->release);
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
