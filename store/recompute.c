/*
 * recompute.c: the SQL of what changes when the registry learns
 * something (revisions, workload mappings, events that change release)
 * and of recomputing a release's incidents from its stored events. The
 * decisions (which events move, where windows split, which revision an
 * event shows) are the correlator's; these read its context and write
 * its answers.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* Appends one element of size to a growing array in the scratch arena
 * (reset per commit): the lists below live until the commit ends. */
static void *vec_push(struct store *st, void **v, size_t *n, size_t *cap,
		      size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		void *q = rt_arena_alloc(&st->scratch, c * size);

		if (!q)
			return NULL;
		if (*n)
			memcpy(q, *v, *n * size);
		*v = q;
		*cap = c;
	}
	return (char *)*v + (*n)++ * size;
}

/* One text column of a statement's rows. */
static int collect(struct store *st, sqlite3_stmt *s, const char ***out,
		   size_t *n)
{
	size_t cap = 0;
	int rc, err = 0;

	*out = NULL;
	*n = 0;
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *t = store_col_text(s, 0);
		const char **slot = vec_push(st, (void **)out, n, &cap,
					     sizeof(**out));

		if (!slot || !(*slot = store_scratch_dup(st, t, strlen(t))))
			err = RT_ENOMEM;
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "release keys");
	sqlite3_reset(s);
	return err;
}

static void json_list(struct rt_buf *b, const char *csv)
{
	rt_buf_reset(b);
	rt_buf_addc(b, '[');
	for (const char *p = csv; p && *p;) {
		size_t n = strcspn(p, ",");

		if (p != csv)
			rt_buf_addc(b, ',');
		store_buf_json_str(b, p, n);
		p += n + (p[n] == ',');
	}
	rt_buf_addc(b, ']');
}

int store_write_revision(struct store *st, const struct plan_revision *r)
{
	sqlite3_stmt *s = store_stmt(st, S_REV_UPSERT);
	char ev[64], updated[RT_TIME_BUFSZ];
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
	hooks = store_buf_str(&st->buf);
	if (!hooks)
		return RT_ENOMEM;
	store_bind_cstr(s, 1, r->ns);
	store_bind_cstr(s, 2, r->rel);
	sqlite3_bind_int(s, 3, r->revision);
	store_bind_cstr(s, 4, r->status);
	store_bind_cstr(s, 5, r->chart);
	store_bind_cstr(s, 6, r->app_version);
	store_bind_iso(s, 7, r->updated_ns, updated);
	store_bind_cstr(s, 8, r->description);
	store_bind_cstr(s, 9, ev);
	store_bind_cstr(s, 10, hooks);
	sqlite3_bind_int64(s, 11, r->updated_ns);
	sqlite3_bind_int(s, 12, (int)r->evidence);
	sqlite3_bind_int64(s, 13, r->ranks);
	sqlite3_bind_int(s, 14, r->life > 0 ? r->life : 1);
	st->pending.revisions++;
	return store_db_done(st, s, "revision");
}

int store_write_alias(struct store *st, const struct plan_alias *a)
{
	sqlite3_stmt *s = store_stmt(st, S_ALIAS_SET);

	store_bind_rts(s, 1, a->ns);
	store_bind_rts(s, 2, a->workload);
	store_bind_rts(s, 3, a->rel_ns);
	store_bind_rts(s, 4, a->rel);
	sqlite3_bind_int(s, 5, a->via);
	sqlite3_bind_int64(s, 6, a->since_ns > 0 ? a->since_ns : 0);
	return store_db_done(st, s, "workload release");
}

int store_keys_of_name(struct store *st, const char *rel, const char ***ns,
		       size_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_KEY_OF_NAME);

	store_bind_cstr(s, 1, rel);
	return collect(st, s, ns, n);
}

int store_key_namespaces(struct store *st, const char ***ns, size_t *n)
{
	return collect(st, store_stmt(st, S_KEY_NAMESPACES), ns, n);
}

int store_all_keys(struct store *st, struct store_key **keys, size_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_KEY_ALL);
	size_t cap = 0;
	int rc, err = 0;

	*keys = NULL;
	*n = 0;
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct store_key *k = vec_push(st, (void **)keys, n, &cap,
					       sizeof(**keys));

		if (!k || !(k->ns = store_scratch_dup(st, store_col_text(s, 0),
						strlen(store_col_text(s, 0)))) ||
		    !(k->rel = store_scratch_dup(st, store_col_text(s, 1),
					   strlen(store_col_text(s, 1)))))
			err = RT_ENOMEM;
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "release keys");
	sqlite3_reset(s);
	return err;
}

int store_job_namespaces(struct store *st, const char *keyns, const char *rel,
			 int via, const char ***ns, size_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_JOB_NS);

	store_bind_cstr(s, 1, keyns);
	store_bind_cstr(s, 2, rel);
	sqlite3_bind_int(s, 3, via);
	return collect(st, s, ns, n);
}

int store_move_jobs(struct store *st, const char *target, const char *keyns,
		    const char *rel, int via, const char *jobns, bool *moved)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_REATTR_JOB);
	int err;

	store_bind_cstr(s, 1, target);
	store_bind_cstr(s, 2, keyns);
	store_bind_cstr(s, 3, rel);
	sqlite3_bind_int(s, 4, via);
	store_bind_cstr(s, 5, jobns);
	if ((err = store_db_done(st, s, "reattribution")))
		return err;
	*moved = sqlite3_changes(st->db) > 0;
	return *moved ? store_key_add_str(st, target, rel) : 0;
}

int store_key_add_str(struct store *st, const char *ns, const char *rel)
{
	sqlite3_stmt *s = store_stmt(st, S_KEY_ADD);

	store_bind_cstr(s, 1, ns);
	store_bind_cstr(s, 2, rel);
	return store_db_done(st, s, "release key");
}

static int evrow_rows(struct store *st, sqlite3_stmt *s, struct plan_evrow **v,
		      size_t *n, size_t *cap)
{
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct plan_evrow *r = vec_push(st, (void **)v, n, cap,
						sizeof(**v));
		const char *t[6];

		if (!r) {
			err = RT_ENOMEM;
			break;
		}
		r->id = sqlite3_column_int64(s, 0);
		r->via = sqlite3_column_int(s, 4);
		for (int i = 0; i < 6; i++) {
			int c = i < 3 ? i + 1 : i + 2;

			t[i] = store_scratch_dup(st, store_col_text(s, c),
					   strlen(store_col_text(s, c)));
			if (!t[i])
				err = RT_ENOMEM;
		}
		r->kind = t[0];
		r->name = t[1];
		r->pod = t[2];
		r->rel_ns = t[3];
		r->rel = t[4];
		r->workload = t[5];
		r->first_ns = sqlite3_column_int64(s, 8);
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "reattribution lookup");
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
int store_claimable(struct store *st, const char *ns, const char *name,
		    struct plan_evrow **rows, size_t *n)
{
	size_t len = strlen(name), cap = 0;
	char *hi = (char *)store_scratch_dup(st, name, len + 1);
	sqlite3_stmt *s;
	int err = 0;

	*rows = NULL;
	*n = 0;
	if (!hi)
		return RT_ENOMEM;
	for (size_t k = 1; k <= len && !err; k++) {
		if (k < len && name[k] != '-')
			continue;
		s = store_stmt(st, S_EV_OF_WORKLOAD);
		store_bind_cstr(s, 1, ns);
		sqlite3_bind_text(s, 2, name, (int)k, SQLITE_STATIC);
		err = evrow_rows(st, s, rows, n, &cap);
	}
	if (err)
		return err;
	/* "name-" <= workload < "name." ('.' follows '-') */
	memcpy(hi, name, len);
	hi[len] = '-';
	s = store_stmt(st, S_EV_OF_WORKLOADS);
	store_bind_cstr(s, 1, ns);
	sqlite3_bind_text(s, 2, hi, (int)len + 1, SQLITE_TRANSIENT);
	hi[len] = '.';
	sqlite3_bind_text(s, 3, hi, (int)len + 1, SQLITE_TRANSIENT);
	return evrow_rows(st, s, rows, n, &cap);
}

int store_mapped(struct store *st, const char *ns, const char *workload,
		 const char *rel_ns, const char *rel, struct plan_evrow **rows,
		 size_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_OF_MAPPED);
	size_t cap = 0;

	*rows = NULL;
	*n = 0;
	store_bind_cstr(s, 1, ns);
	store_bind_cstr(s, 2, workload);
	store_bind_cstr(s, 3, rel_ns);
	store_bind_cstr(s, 4, rel);
	return evrow_rows(st, s, rows, n, &cap);
}

int store_write_move(struct store *st, const struct plan_move *m)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_REATTR);
	int err;

	sqlite3_bind_text(s, 1, m->rel_ns, -1, SQLITE_STATIC);
	store_bind_cstr(s, 2, m->rel);
	sqlite3_bind_text(s, 3, m->via_name, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 4, m->via);
	sqlite3_bind_int64(s, 5, m->id);
	if ((err = store_db_done(st, s, "reattribution")))
		return err;
	return store_key_add_str(st, m->rel_ns, m->rel);
}

/* ---- rebuild -------------------------------------------------------- */

int store_incidents_of_key(struct store *st, const char *ns, const char *rel,
			   int64_t **ids, size_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_INC_OF_KEY);
	size_t cap = 0;
	int rc, err = 0;

	*ids = NULL;
	*n = 0;
	store_bind_cstr(s, 1, ns);
	store_bind_cstr(s, 2, rel);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t *v = vec_push(st, (void **)ids, n, &cap, sizeof(**ids));

		if (!v) {
			err = RT_ENOMEM;
			break;
		}
		*v = sqlite3_column_int64(s, 0);
	}
	if (!err && rc != SQLITE_DONE)
		err = store_db_fail(st, "incidents of release");
	sqlite3_reset(s);
	return err;
}

/* Writes below touch rows the scan has passed, not its index. */
void store_key_scan(struct store *st, const char *ns, const char *rel)
{
	st->pending.recomputed++;
	store_key_rescan(st, ns, rel);
}

void store_key_rescan(struct store *st, const char *ns, const char *rel)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_KEY_SCAN);

	store_bind_cstr(s, 1, ns);
	store_bind_cstr(s, 2, rel);
}

int store_key_next(struct store *st, struct plan_keyrow *row)
{
	sqlite3_stmt *s = st->st[S_EV_KEY_SCAN];   /* bound: no store_stmt() */
	const char *sev;
	int rc = sqlite3_step(s);

	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		return rc == SQLITE_DONE ? 0 : store_db_fail(st, "rebuild scan");
	}
	sev = store_col_text(s, 5);
	row->inc = sqlite3_column_int64(s, 0);
	row->first = sqlite3_column_int64(s, 1);
	row->last = sqlite3_column_int64(s, 2);
	row->count = sqlite3_column_int64(s, 3);
	row->tags = store_col_text(s, 4);
	row->sev = rt_severity_from_name(sev, strlen(sev));
	row->kind = store_col_text(s, 6);
	row->name = store_col_text(s, 7);
	row->via = sqlite3_column_int(s, 8);
	row->fields = store_col_text(s, 9);
	row->id = sqlite3_column_int64(s, 10);
	row->pod = store_col_text(s, 11);
	return 1;
}

void store_key_scan_end(struct store *st)
{
	sqlite3_reset(st->st[S_EV_KEY_SCAN]);
}

static int assign_span(struct store *st, const struct plan_rebuilt *w,
		       int64_t id)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_ASSIGN);

	sqlite3_bind_int64(s, 1, id);
	store_bind_cstr(s, 2, w->ns);
	store_bind_cstr(s, 3, w->rel);
	sqlite3_bind_int64(s, 4, w->first_min);
	sqlite3_bind_int64(s, 5, w->first_max);
	return store_db_done(st, s, "rebuild events");
}

/* A window of a revision class: its events are told by id, since another
 * class's window may span the same time. */
static int assign_ids(struct store *st, const struct plan_rebuilt *w,
		      int64_t id)
{
	int err = 0;

	for (size_t i = 0; i < w->nids && !err; i++) {
		sqlite3_stmt *s = store_stmt(st, S_EV_ASSIGN_ID);

		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int64(s, 2, w->ids[i]);
		err = store_db_done(st, s, "rebuild events");
	}
	return err;
}

int store_write_rebuilt(struct store *st, const struct plan_rebuilt *w,
			int64_t *id)
{
	sqlite3_stmt *s;
	int err;

	*id = w->id;
	if (*id) {
		s = store_stmt(st, S_OBJ_DELETE);
		sqlite3_bind_int64(s, 1, *id);
		if ((err = store_db_done(st, s, "rebuild objects")))
			return err;
	}
	if ((err = store_incident_write_agg(st, w->ns, w->rel, id, &w->agg)) ||
	    (err = store_incident_set_class(st, *id, w->cls)))
		return err;
	if (w->byid)
		err = assign_ids(st, w, *id);
	else
		err = assign_span(st, w, *id);
	if (err)
		return err;
	if ((err = store_objects_write(st, w->objs, w->nobjs, *id)))
		return err;
	return store_incident_count_pods(st, *id);
}

int store_drop_incident(struct store *st, int64_t id)
{
	static const enum store_stmt seq[] = {
		S_EV_UNASSIGN, S_OBJ_DELETE, S_INC_DELETE,
	};

	for (size_t i = 0; i < 3; i++) {
		sqlite3_stmt *s = store_stmt(st, seq[i]);
		int err;

		sqlite3_bind_int64(s, 1, id);
		if ((err = store_db_done(st, s, "dropping incident")))
			return err;
	}
	return 0;
}

int store_write_revrange(struct store *st, const char *ns, const char *rel,
			 const struct plan_revrange *r)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_REV_RANGE);

	if (r->from >= r->to)
		return 0;
	sqlite3_bind_int(s, 1, r->rev);
	store_bind_cstr(s, 2, ns);
	store_bind_cstr(s, 3, rel);
	sqlite3_bind_int64(s, 4, r->from);
	sqlite3_bind_int64(s, 5, r->to);
	return store_db_done(st, s, "event revisions");
}

/* A release's revisions after its lives were numbered again: the stored
 * rows (and the manifest summaries only they hold) follow their revision
 * to its new life, matched by number and time as the registry matches
 * statements; then every revision is written. */
int store_write_lives(struct store *st, const struct plan_revision *revs,
		      size_t n, int64_t slack_ns)
{
	sqlite3_stmt *s;
	int err;

	if (!n)
		return 0;
	s = store_stmt(st, S_REV_ASIDE);
	store_bind_cstr(s, 1, revs[0].ns);
	store_bind_cstr(s, 2, revs[0].rel);
	if ((err = store_db_done(st, s, "revision lives")))
		return err;
	for (size_t i = 0; i < n; i++) {
		s = store_stmt(st, S_REV_RELIFE);
		store_bind_cstr(s, 1, revs[i].ns);
		store_bind_cstr(s, 2, revs[i].rel);
		sqlite3_bind_int(s, 3, revs[i].revision);
		sqlite3_bind_int(s, 4, revs[i].life > 0 ? revs[i].life : 1);
		sqlite3_bind_int64(s, 5, revs[i].updated_ns);
		sqlite3_bind_int64(s, 6, slack_ns);
		if ((err = store_db_done(st, s, "revision lives")))
			return err;
	}
	s = store_stmt(st, S_REV_DROP_ASIDE);
	store_bind_cstr(s, 1, revs[0].ns);
	store_bind_cstr(s, 2, revs[0].rel);
	if ((err = store_db_done(st, s, "revision lives")))
		return err;
	for (size_t i = 0; i < n && !err; i++)
		err = store_write_revision(st, &revs[i]);
	return err;
}

static int timeless_put(struct store *st, const struct plan_revision *r)
{
	sqlite3_stmt *s = store_stmt(st, S_TL_PUT);

	store_bind_cstr(s, 1, r->ns);
	store_bind_cstr(s, 2, r->rel);
	sqlite3_bind_int(s, 3, r->revision);
	store_bind_cstr(s, 4, r->status);
	store_bind_cstr(s, 5, r->chart);
	store_bind_cstr(s, 6, r->app_version);
	store_bind_cstr(s, 7, r->description);
	sqlite3_bind_int64(s, 8, r->updated_ns);
	sqlite3_bind_int(s, 9, (int)r->evidence);
	store_bind_cstr(s, 10, r->hooks ? r->hooks : "");
	sqlite3_bind_int64(s, 11, r->ranks);
	return store_db_done(st, s, "timeless revision");
}

int store_write_timeless(struct store *st, const struct plan_revision *u,
			 const struct plan_revision *own)
{
	sqlite3_stmt *s = store_stmt(st, S_TL_CLEAR);
	int err;

	store_bind_cstr(s, 1, u->ns);
	store_bind_cstr(s, 2, u->rel);
	sqlite3_bind_int(s, 3, u->revision);
	if ((err = store_db_done(st, s, "timeless revision")) ||
	    (err = timeless_put(st, u)))
		return err;
	return own ? timeless_put(st, own) : 0;
}

int store_write_summary(struct store *st, const char *ns, const char *rel,
			int revision, int life, struct rt_str summary)
{
	sqlite3_stmt *s = store_stmt(st, S_REV_SUMMARY);

	store_bind_cstr(s, 1, ns);
	store_bind_cstr(s, 2, rel);
	sqlite3_bind_int(s, 3, revision);
	sqlite3_bind_int(s, 5, life > 0 ? life : 1);
	sqlite3_bind_text(s, 4, summary.p, (int)summary.n, SQLITE_STATIC);
	return store_db_done(st, s, "revision summary");
}
