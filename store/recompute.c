/*
 * recompute.c: what changes when the registry learns something.
 *
 *  - revisions_merge: Helm revisions of the batch go into the registry and
 *    the revisions table. A release name seen for the first time may claim
 *    events stored earlier under a workload name or a shorter release
 *    (pod payments-api-7d9c8f4b6-4kx2m stored as "payments-api" before
 *    "payments-api" history arrived is fine; ConfigMap payments-api-config
 *    stored as "payments-api-config" is not), and helm-install job events
 *    may move to the namespace the release lives in. Both keys of a moved
 *    event are then recomputed, which is what makes attribution
 *    independent of whether history came first or last.
 *  - rebuild_key: a release's incidents recomputed from its stored events,
 *    streaming in time order, reusing incident ids where they overlap.
 *  - revisions_apply: events.revision and the incidents' revision and
 *    diagnosis after a release's revisions changed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

int key_add_str(struct store *st, const char *ns, const char *rel)
{
	sqlite3_stmt *s = stmt(st, S_KEY_ADD);

	bind_cstr(s, 1, ns);
	bind_cstr(s, 2, rel);
	return db_done(st, s, "release key");
}

static void json_list(struct store_buf *b, const char *csv)
{
	buf_reset(b);
	buf_addc(b, '[');
	for (const char *p = csv; p && *p;) {
		size_t n = strcspn(p, ",");

		if (p != csv)
			buf_addc(b, ',');
		buf_json_str(b, p, n);
		p += n + (p[n] == ',');
	}
	buf_addc(b, ']');
}

static int write_revision(struct store *st, const struct corr_release *rel,
			  const struct corr_rev *r)
{
	sqlite3_stmt *s = stmt(st, S_REV_UPSERT);
	char ev[64];
	const char *hooks;

	snprintf(ev, sizeof(ev), "[%s%s%s%s%s]",
		 r->evidence & RT_REV_HOOK_CONFIG ? "\"hook_config\"" : "",
		 (r->evidence & RT_REV_HOOK_CONFIG) &&
		 (r->evidence & RT_REV_NO_CHECKSUM) ? "," : "",
		 r->evidence & RT_REV_NO_CHECKSUM ? "\"no_checksum\"" : "",
		 (r->evidence & (RT_REV_HOOK_CONFIG | RT_REV_NO_CHECKSUM)) &&
		 (r->evidence & RT_REV_PAYLOAD) ? "," : "",
		 r->evidence & RT_REV_PAYLOAD ? "\"payload\"" : "");
	json_list(&st->buf, r->hooks);
	hooks = buf_str(&st->buf);
	if (!hooks)
		return RT_ENOMEM;
	bind_cstr(s, 1, rel->ns);
	bind_cstr(s, 2, rel->name);
	sqlite3_bind_int(s, 3, r->revision);
	bind_cstr(s, 4, r->status);
	bind_cstr(s, 5, r->chart);
	bind_cstr(s, 6, r->app_version);
	bind_iso(s, 7, r->updated_ns);
	bind_cstr(s, 8, r->description);
	bind_cstr(s, 9, ev);
	bind_cstr(s, 10, hooks);
	sqlite3_bind_int64(s, 11, r->updated_ns);
	sqlite3_bind_int(s, 12, (int)r->evidence);
	sqlite3_bind_int64(s, 13, r->ranks);
	st->pending.revisions++;
	return db_done(st, s, "revision");
}

/* Collects one text column of a statement's rows into the scratch arena. */
static int collect(struct store *st, sqlite3_stmt *s, const char ***out,
		   size_t *n)
{
	size_t cap = 0;
	int rc, err = 0;

	*out = NULL;
	*n = 0;
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t = col_text(s, 0);

		if (*n == cap) {
			const char **p;

			cap = cap ? cap * 2 : 16;
			p = realloc(*out, cap * sizeof(*p));
			if (!p) {
				err = RT_ENOMEM;
				break;
			}
			*out = p;
		}
		(*out)[(*n)++] = scratch_dup(st, t, strlen(t));
	}
	if (!err && rc != SQLITE_DONE)
		err = db_fail(st, "release keys");
	sqlite3_reset(s);
	return err;
}

static int mark_moved(struct store *st, const char *ns1, const char *rel1,
		      const char *ns2, const char *rel2)
{
	int err = keyset_add(st, &st->rebuild, rt_str_make(ns1, strlen(ns1)),
			     rt_str_make(rel1, strlen(rel1)));

	if (!err)
		err = keyset_add(st, &st->rebuild, rt_str_make(ns2, strlen(ns2)),
				 rt_str_make(rel2, strlen(rel2)));
	if (!err)
		err = key_add_str(st, ns2, rel2);
	return err;
}

static bool rts_is(struct rt_str a, const char *b)
{
	size_t n = strlen(b);

	return a.n == n && (n == 0 || memcmp(a.p, b, n) == 0);
}

/* One stored event whose inferred release changes. */
struct moved {
	int64_t id;
	const char *old_ns, *old_rel;
	struct corr_attr a;
};

struct moves {
	struct moved *v;
	size_t n, cap;
};

/* The row s is on (id, kind, name, pod, via, release_ns, release),
 * attributed again with what the registry knows now; kept when that
 * changes its release. */
static int move_row(struct store *st, sqlite3_stmt *s, struct moves *m)
{
	const char *kind = col_text(s, 1), *name = col_text(s, 2);
	const char *pod = col_text(s, 3);
	const char *ons = col_text(s, 5), *orel = col_text(s, 6);
	const char *w = col_text(s, 7);
	struct corr_attr a;
	struct moved *x;

	corr_attribute(st->reg, &st->copts, rt_str_make(ons, strlen(ons)),
		       rt_str_make(kind, strlen(kind)),
		       rt_str_make(name, strlen(name)),
		       rt_str_make(pod, strlen(pod)), RT_STR_NULL, RT_STR_NULL,
		       RT_STR_NULL, rt_str_make(w, strlen(w)), &a);
	if (a.via == CORR_VIA_NONE ||
	    (a.via == sqlite3_column_int(s, 4) && rts_is(a.release_ns, ons) &&
	     rts_is(a.release, orel)))
		return 0;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;

		x = realloc(m->v, cap * sizeof(*x));
		if (!x)
			return RT_ENOMEM;
		m->v = x;
		m->cap = cap;
	}
	x = &m->v[m->n];
	x->id = sqlite3_column_int64(s, 0);
	/* the views die with the row: keep copies */
	x->old_ns = scratch_dup(st, ons, strlen(ons));
	x->old_rel = scratch_dup(st, orel, strlen(orel));
	x->a = a;
	x->a.release_ns = rt_str_make(scratch_dup(st, a.release_ns.p,
						  a.release_ns.n), a.release_ns.n);
	x->a.release = rt_str_make(scratch_dup(st, a.release.p, a.release.n),
				   a.release.n);
	if (!x->old_ns || !x->old_rel || !x->a.release_ns.p || !x->a.release.p)
		return RT_ENOMEM;
	m->n++;
	return 0;
}

static int move_rows(struct store *st, sqlite3_stmt *s, struct moves *m)
{
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW)
		err = move_row(st, s, m);
	if (!err && rc != SQLITE_DONE)
		err = db_fail(st, "reattribution lookup");
	sqlite3_reset(s);
	return err;
}

/*
 * The inferred events of namespace ns that learning name (a release, a
 * workload's release) may claim: those of objects the name is, or
 * prefixes at a '-' boundary. Such an object's workload name (its name,
 * pod suffixes cut) is then name itself, a name below it ("name-..."),
 * or a boundary prefix of name; each is a lookup in events_workload, so
 * the cost follows the events that may move, not the size of the
 * releases they sit in.
 */
static int collect_moves(struct store *st, const char *ns, const char *name,
			 struct moves *m)
{
	size_t n = strlen(name);
	char *hi = (char *)scratch_dup(st, name, n + 1);
	sqlite3_stmt *s;
	int err = 0;

	if (!hi)
		return RT_ENOMEM;
	for (size_t k = 1; k <= n && !err; k++) {
		if (k < n && name[k] != '-')
			continue;
		s = stmt(st, S_EV_OF_WORKLOAD);
		bind_cstr(s, 1, ns);
		sqlite3_bind_text(s, 2, name, (int)k, SQLITE_STATIC);
		err = move_rows(st, s, m);
	}
	if (err)
		return err;
	/* "name-" <= workload < "name." ('.' follows '-') */
	memcpy(hi, name, n);
	hi[n] = '-';
	s = stmt(st, S_EV_OF_WORKLOADS);
	bind_cstr(s, 1, ns);
	sqlite3_bind_text(s, 2, hi, (int)n + 1, SQLITE_TRANSIENT);
	hi[n] = '.';
	sqlite3_bind_text(s, 3, hi, (int)n + 1, SQLITE_TRANSIENT);
	return move_rows(st, s, m);
}

/*
 * Events of namespace ns whose release was only inferred are attributed
 * again when name (a new release, a new workload mapping) is learned. Each
 * key that gains or loses events is recomputed, so the result is what
 * attributing them with today's registry in the first place gives.
 */
static int reattribute_related(struct store *st, const char *ns,
			       const char *name)
{
	struct moves m = { 0 };
	int err;

	err = collect_moves(st, ns, name, &m);
	for (size_t i = 0; i < m.n && !err; i++) {
		sqlite3_stmt *s = stmt(st, S_EV_REATTR);
		const struct corr_attr *a = &m.v[i].a;

		sqlite3_bind_text(s, 1, a->release_ns.p, (int)a->release_ns.n,
				  SQLITE_STATIC);
		bind_rts(s, 2, a->release);
		sqlite3_bind_text(s, 3, corr_via_name(a->via), -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 4, a->via);
		sqlite3_bind_int64(s, 5, m.v[i].id);
		if ((err = db_done(st, s, "reattribution")))
			break;
		err = mark_moved(st, m.v[i].old_ns, m.v[i].old_rel,
				 a->release_ns.p, a->release.p);
	}
	if (!err && m.n && st->log)
		fprintf(st->log, "revtrail: %zu events of %s in %s attributed "
			"again\n", m.n, name, ns);
	free(m.v);
	return err;
}

static int claim_by_prefix(struct store *st, const char *ns, const char *r)
{
	return reattribute_related(st, ns, r);
}

/* helm-install-R job events: keyed by the job's namespace unless R is only
 * known elsewhere (HelmChart targetNamespace). */
static int claim_jobs(struct store *st, const char *r)
{
	struct rt_str rs = rt_str_make(r, strlen(r));
	const char **keyns = NULL, **jobns = NULL;
	size_t nk, nj;
	int err;

	sqlite3_stmt *s = stmt(st, S_KEY_OF_NAME);
	bind_cstr(s, 1, r);
	if ((err = collect(st, s, &keyns, &nk)))
		goto out;
	for (size_t i = 0; i < nk && !err; i++) {
		s = stmt(st, S_EV_JOB_NS);
		bind_cstr(s, 1, keyns[i]);
		bind_cstr(s, 2, r);
		sqlite3_bind_int(s, 3, CORR_VIA_JOB);
		free(jobns);
		if ((err = collect(st, s, &jobns, &nj)))
			break;
		for (size_t j = 0; j < nj && !err; j++) {
			struct rt_str jn = rt_str_make(jobns[j], strlen(jobns[j]));
			const char *target = jobns[j];

			if (!corr_registry_find(st->reg, jn, rs)) {
				const char *other = corr_registry_first_ns(st->reg, rs);

				if (other)
					target = other;
			}
			if (strcmp(target, keyns[i]) == 0)
				continue;
			s = stmt(st, S_EV_REATTR_JOB);
			bind_cstr(s, 1, target);
			bind_cstr(s, 2, keyns[i]);
			bind_cstr(s, 3, r);
			sqlite3_bind_int(s, 4, CORR_VIA_JOB);
			bind_cstr(s, 5, jobns[j]);
			if ((err = db_done(st, s, "reattribution")))
				break;
			if (sqlite3_changes(st->db) > 0)
				err = mark_moved(st, keyns[i], r, target, r);
		}
	}
out:
	free(keyns);
	free(jobns);
	return err;
}

/* A release without a namespace stands for it in every namespace: its
 * changes concern every key of that name. */
static int anyns_dirty(struct store *st, const char *r)
{
	const char **ns;
	size_t n;
	int err;

	sqlite3_stmt *s = stmt(st, S_KEY_OF_NAME);
	bind_cstr(s, 1, r);
	if ((err = collect(st, s, &ns, &n)))
		return err;
	for (size_t i = 0; i < n && !err; i++)
		err = keyset_add(st, &st->revdirty, rt_str_make(ns[i], strlen(ns[i])),
				 rt_str_make(r, strlen(r)));
	free(ns);
	return err;
}

static int anyns_claim(struct store *st, const char *r)
{
	const char **ns;
	size_t n;
	int err;

	if ((err = collect(st, stmt(st, S_KEY_NAMESPACES), &ns, &n)))
		return err;
	for (size_t i = 0; i < n && !err; i++)
		if (*ns[i] && !corr_registry_find(st->reg,
			rt_str_make(ns[i], strlen(ns[i])), rt_str_make(r, strlen(r)))->ns[0])
			err = claim_by_prefix(st, ns[i], r);
	free(ns);
	return err;
}

static int write_alias(struct store *st, const struct corr_alias *a)
{
	sqlite3_stmt *s = stmt(st, S_ALIAS_SET);

	bind_rts(s, 1, a->ns);
	bind_rts(s, 2, a->workload);
	bind_rts(s, 3, a->rel_ns);
	bind_rts(s, 4, a->rel);
	sqlite3_bind_int(s, 5, a->via);
	return db_done(st, s, "workload release");
}

int aliases_merge(struct store *st, struct corr_batch *b)
{
	int err = 0;

	for (size_t i = 0; i < b->naliases && !err; i++) {
		const struct corr_alias *a = &b->aliases[i];
		const char *ns, *w;
		bool chg;

		err = corr_registry_alias_merge(st->reg, a->ns, a->workload,
						a->rel_ns, a->rel, a->via, &chg);
		if (err == RT_EINVAL)
			err = 0;
		if (err || !chg)
			continue;
		ns = scratch_dup(st, a->ns.p, a->ns.n);
		w = scratch_dup(st, a->workload.p, a->workload.n);
		err = ns && w ? write_alias(st, a) : RT_ENOMEM;
		/* "ConfigMap/x": the events of object x may move */
		if (!err)
			err = reattribute_related(st, ns, strchr(w, '/') ?
						  strchr(w, '/') + 1 : w);
	}
	return err;
}

int revisions_merge(struct store *st, struct corr_batch *b)
{
	struct store_keyset fresh = { 0 };
	int err = 0;

	for (size_t i = 0; i < b->nrevs && !err; i++) {
		const struct corr_release *rel;
		const struct corr_rev *r;
		unsigned chg;

		err = corr_registry_merge(st->reg, &b->revs[i], &chg, &rel, &r);
		if (err == RT_EINVAL) {   /* no release name: nothing to key */
			err = 0;
			continue;
		}
		if (err || !(chg & CORR_REG_CHANGED))
			continue;
		err = write_revision(st, rel, r);
		if (!err)
			err = keyset_add(st, &st->revdirty,
					 rt_str_make(rel->ns, strlen(rel->ns)),
					 rt_str_make(rel->name, strlen(rel->name)));
		if (!err && !rel->ns[0])
			err = anyns_dirty(st, rel->name);
		if (!err && (chg & CORR_REG_NEW_RELEASE))
			err = keyset_add(st, &fresh,
					 rt_str_make(rel->ns, strlen(rel->ns)),
					 rt_str_make(rel->name, strlen(rel->name)));
	}
	for (size_t i = 0; i < fresh.n && !err; i++) {
		err = claim_by_prefix(st, fresh.k[i].ns, fresh.k[i].rel);
		if (!err && !fresh.k[i].ns[0])
			err = anyns_claim(st, fresh.k[i].rel);
		if (!err)
			err = claim_jobs(st, fresh.k[i].rel);
	}
	free(fresh.k);
	return err;
}

/* ---- rebuild -------------------------------------------------------- */

struct rebuild {
	const struct store_key *k;
	int64_t *old;
	bool *used;
	size_t nold;
	bool open;
	struct agg a;
	int64_t first_min, first_max, cand;
};

static int rebuild_finish(struct store *st, struct rebuild *rb)
{
	int64_t id = rb->cand;
	sqlite3_stmt *s;
	int err;

	if (!rb->open)
		return 0;
	rb->open = false;
	for (size_t i = 0; i < rb->nold; i++)
		if (rb->old[i] == id)
			rb->used[i] = true;
	if (id) {
		s = stmt(st, S_OBJ_DELETE);
		sqlite3_bind_int64(s, 1, id);
		if ((err = db_done(st, s, "rebuild objects")))
			return err;
	}
	if ((err = incident_write_agg(st, rb->k, &id, &rb->a)))
		return err;
	s = stmt(st, S_EV_ASSIGN);
	sqlite3_bind_int64(s, 1, id);
	bind_cstr(s, 2, rb->k->ns);
	bind_cstr(s, 3, rb->k->rel);
	sqlite3_bind_int64(s, 4, rb->first_min);
	sqlite3_bind_int64(s, 5, rb->first_max);
	if ((err = db_done(st, s, "rebuild events")))
		return err;
	if ((err = objmap_write(st, &st->objs, id)))
		return err;
	return incident_count_pods(st, id);
}

/* As commit.c's config_objects, from the stored fields JSON: capture
 * values are Kubernetes names, so a plain scan reads them. */
static int config_fields(struct store *st, const char *fields, int64_t first,
			 int64_t last)
{
	static const char *const keys[][2] = {
		{ "\"configmap\":\"", "ConfigMap" }, { "\"secret\":\"", "Secret" },
	};

	for (size_t i = 0; i < 2; i++) {
		const char *p = strstr(fields, keys[i][0]), *end;
		int err;

		if (!p)
			continue;
		p += strlen(keys[i][0]);
		end = strchr(p, '"');
		if (!end || end == p)
			continue;
		err = objmap_add(st, &st->objs, keys[i][1], strlen(keys[i][1]),
				 p, (size_t)(end - p), first, last, 1);
		if (err)
			return err;
	}
	return 0;
}

static int rebuild_row(struct store *st, struct rebuild *rb, sqlite3_stmt *s)
{
	int64_t inc = sqlite3_column_int64(s, 0);
	int64_t first = sqlite3_column_int64(s, 1), last = sqlite3_column_int64(s, 2);
	const char *sev = col_text(s, 5), *kind = col_text(s, 6);
	const char *name = col_text(s, 7);
	int err;

	if (last < first)
		last = first;
	if (rb->open && first - rb->a.last > st->gap_ns &&
	    (err = rebuild_finish(st, rb)))
		return err;
	if (!rb->open) {
		agg_init(&rb->a);
		rb->open = true;
		rb->first_min = first;
		rb->cand = 0;
	}
	rb->first_max = first;
	agg_span(&rb->a, first, last, rt_severity_from_name(sev, strlen(sev)),
		 sqlite3_column_int(s, 8));
	rb->a.count++;
	rb->a.occ += sqlite3_column_int64(s, 3);
	corr_tagset_parse(&rb->a.tags, col_text(s, 4), store_intern_cb,
			  &st->intern);
	for (size_t i = 0; inc && i < rb->nold; i++)
		if (rb->old[i] == inc && !rb->used[i] &&
		    (!rb->cand || inc < rb->cand))
			rb->cand = inc;
	if (*name && (err = objmap_add(st, &st->objs, kind, strlen(kind), name,
				       strlen(name), first, last, 1)))
		return err;
	return config_fields(st, col_text(s, 9), first, last);
}

static int drop_incident(struct store *st, int64_t id)
{
	static const enum store_stmt seq[] = {
		S_EV_UNASSIGN, S_OBJ_DELETE, S_INC_DELETE,
	};

	for (size_t i = 0; i < 3; i++) {
		sqlite3_stmt *s = stmt(st, seq[i]);
		int err;

		sqlite3_bind_int64(s, 1, id);
		if ((err = db_done(st, s, "dropping incident")))
			return err;
	}
	return 0;
}

static int load_ids(struct store *st, const struct store_key *k,
		    int64_t **ids, size_t *n)
{
	sqlite3_stmt *s = stmt(st, S_INC_OF_KEY);
	size_t cap = 0;
	int rc, err = 0;

	*ids = NULL;
	*n = 0;
	bind_cstr(s, 1, k->ns);
	bind_cstr(s, 2, k->rel);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			int64_t *p;

			cap = cap ? cap * 2 : 16;
			p = realloc(*ids, cap * sizeof(*p));
			if (!p) {
				err = RT_ENOMEM;
				break;
			}
			*ids = p;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(s, 0);
	}
	if (!err && rc != SQLITE_DONE)
		err = db_fail(st, "incidents of release");
	sqlite3_reset(s);
	return err;
}

int rebuild_key(struct store *st, const struct store_key *k)
{
	struct rebuild rb = { .k = k };
	sqlite3_stmt *s;
	int rc, err;

	if ((err = load_ids(st, k, &rb.old, &rb.nold)))
		return err;
	rb.used = calloc(rb.nold + 1, sizeof(*rb.used));
	if (!rb.used) {
		free(rb.old);
		return RT_ENOMEM;
	}
	st->pending.recomputed++;
	/* Writes below touch rows the scan has passed, not its index. */
	s = stmt(st, S_EV_KEY_SCAN);
	bind_cstr(s, 1, k->ns);
	bind_cstr(s, 2, k->rel);
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW)
		err = rebuild_row(st, &rb, s);
	if (!err && rc != SQLITE_DONE)
		err = db_fail(st, "rebuild scan");
	sqlite3_reset(s);
	if (!err)
		err = rebuild_finish(st, &rb);
	for (size_t i = 0; i < rb.nold && !err; i++)
		if (!rb.used[i])
			err = drop_incident(st, rb.old[i]);
	free(rb.old);
	free(rb.used);
	return err;
}

/* ---- revisions ------------------------------------------------------ */

static int rev_cmp(const void *a, const void *b)
{
	const struct corr_rev *x = *(const struct corr_rev *const *)a;
	const struct corr_rev *y = *(const struct corr_rev *const *)b;

	if (x->updated_ns != y->updated_ns)
		return x->updated_ns < y->updated_ns ? -1 : 1;
	return x->revision - y->revision;
}

static int rev_range(struct store *st, const struct store_key *k, int rev,
		     int64_t from, int64_t to)
{
	sqlite3_stmt *s = stmt(st, S_EV_REV_RANGE);

	if (from >= to)
		return 0;
	sqlite3_bind_int(s, 1, rev);
	bind_cstr(s, 2, k->ns);
	bind_cstr(s, 3, k->rel);
	sqlite3_bind_int64(s, 4, from);
	sqlite3_bind_int64(s, 5, to);
	return db_done(st, s, "event revisions");
}

int revisions_apply(struct store *st, const struct store_key *k)
{
	const struct corr_release *rel = corr_registry_find(st->reg,
		rt_str_make(k->ns, strlen(k->ns)),
		rt_str_make(k->rel, strlen(k->rel)));
	const struct corr_rev **v = NULL;
	int64_t from = INT64_MIN, *ids;
	size_t n = 0, nids;
	int prev = 0, err = 0;

	if (rel && rel->nrevs) {
		v = malloc(rel->nrevs * sizeof(*v));
		if (!v)
			return RT_ENOMEM;
		for (size_t i = 0; i < rel->nrevs; i++)
			if (rel->revs[i].updated_ns > 0)
				v[n++] = &rel->revs[i];
		qsort(v, n, sizeof(*v), rev_cmp);
	}
	/* the same intervals corr_release_at() decides by */
	for (size_t i = 0; i < n && !err; i++) {
		int64_t start = v[i]->updated_ns - CORR_SKEW_NS;

		err = rev_range(st, k, prev, from, start);
		from = start;
		prev = v[i]->revision;
	}
	free(v);
	if (!err)
		err = rev_range(st, k, prev, from, INT64_MAX);
	if (err || (err = load_ids(st, k, &ids, &nids)))
		return err;
	for (size_t i = 0; !err && i < nids; i++)
		err = touched_add(st, ids[i]);
	free(ids);
	return err;
}
