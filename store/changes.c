/*
 * changes.c: which incidents a batch changed, for consume --incidents-topic.
 *
 * SQLite says it, so no step of the commit has to: the update hook (set
 * for every writer, store_watch_rows) sees
 * every row of incidents a transaction inserts or updates (opened,
 * extended, merged into, diagnosed, closed), and a TEMP trigger on the
 * writer's connection (nothing is added to the file) hands over the key of
 * each row deleted (an incident merged into another, or recomputed), which
 * a reader of the topic needs to forget it. What a transaction collected
 * becomes a change only once pipeline_commit succeeded (the writer settles
 * it); a rolled-back batch's list is dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

void store_change_free(struct store_change *e)
{
	free(e->cluster);
	free(e->ns);
	free(e->release);
}

int store_changes_add(struct store_changes *c, int64_t id, const char *cl,
		      const char *ns, const char *rel)
{
	struct store_change *e;

	if (RT_GROW(c->v, c->n + 1, c->cap))
		return RT_ENOMEM;
	e = &c->v[c->n];
	e->id = id;
	e->cluster = cl ? strdup(cl) : NULL;
	e->ns = ns ? strdup(ns) : NULL;
	e->release = rel ? strdup(rel) : NULL;
	if ((cl && !e->cluster) || (ns && !e->ns) || (rel && !e->release)) {
		store_change_free(e);
		return RT_ENOMEM;
	}
	c->n++;
	return 0;
}

static int changes_add(struct store_changes *c, int64_t id, const char *cl,
		       const char *ns, const char *rel)
{
	/* A batch updates one row many times: once is enough. */
	if (!ns && c->n && c->v[c->n - 1].id == id && !c->v[c->n - 1].ns)
		return 0;
	return store_changes_add(c, id, cl, ns, rel);
}

/* Every row a writer's statement inserts, updates or deletes in a rowid
 * table (SQLite's update hook; one per connection, so one for both its
 * uses): an events row changed or gone retires the captures cached of
 * incidents' first rows (captures.c), which new rows never enter; an
 * incidents row inserted or updated is a change to publish. */
static void on_update(void *ctx, int op, const char *db, const char *table,
		      sqlite3_int64 rowid)
{
	struct store *st = ctx;

	if (strcmp(db, "main"))
		return;
	if (op != SQLITE_INSERT && !strcmp(table, "events"))
		st->ev_changes++;
	else if (st->chg && op != SQLITE_DELETE &&
		 !strcmp(table, "incidents") &&
		 changes_add(st->chg, rowid, NULL, NULL, NULL))
		st->chg_oom = true;
}

void store_watch_rows(struct store *st)
{
	sqlite3_update_hook(st->db, on_update, st);
}

/* rt_incident_gone(id, cluster, namespace, release), from the trigger. */
static void sql_gone(sqlite3_context *cx, int argc, sqlite3_value **v)
{
	struct store *st = sqlite3_user_data(cx);
	const char *cl = (const char *)sqlite3_value_text(v[1]);
	const char *ns = (const char *)sqlite3_value_text(v[2]);
	const char *rel = (const char *)sqlite3_value_text(v[3]);

	(void)argc;
	if (changes_add(st->chg, sqlite3_value_int64(v[0]), cl ? cl : "",
			ns ? ns : "", rel ? rel : ""))
		st->chg_oom = true;
	sqlite3_result_null(cx);
}

int store_track_incidents(struct store *st)
{
	if (st->chg)
		return 0;
	if (!(st->chg = calloc(1, sizeof(*st->chg))))
		return RT_ENOMEM;
	if (sqlite3_create_function(st->db, "rt_incident_gone", 4, SQLITE_UTF8,
				    st, sql_gone, NULL, NULL) ||
	    sqlite3_exec(st->db, "CREATE TEMP TRIGGER IF NOT EXISTS"
			 " rt_incident_gone AFTER DELETE ON main.incidents"
			 " BEGIN SELECT rt_incident_gone(old.id, old.cluster,"
			 " old.namespace, old.release); END", NULL, NULL, NULL))
		return store_db_fail(st, "tracking incidents");
	return store_outbox_track(st) ? RT_EDB : 0;
}

int store_changes_settle(struct store *st, struct store_changes *to)
{
	struct store_changes *c = st->chg;
	int err = 0;

	if (!c)
		return 0;
	if (st->chg_oom)
		err = RT_ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		struct store_change *e = &c->v[i];

		if (to && !err)
			err = changes_add(to, e->id, e->cluster, e->ns,
					  e->release);
		store_change_free(e);
	}
	c->n = 0;
	st->chg_oom = false;
	return err;
}

static int by_id(const void *a, const void *b)
{
	const struct store_change *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (y->ns != NULL) - (x->ns != NULL);   /* deleted ones first */
}

void store_changes_unique(struct store_changes *c)
{
	size_t k = 0;

	if (!c->n)
		return;
	qsort(c->v, c->n, sizeof(*c->v), by_id);
	for (size_t i = 0; i < c->n; i++) {
		if (k && c->v[k - 1].id == c->v[i].id) {
			store_change_free(&c->v[i]);
			continue;
		}
		c->v[k++] = c->v[i];
	}
	c->n = k;
}

void store_changes_free(struct store_changes *c)
{
	for (size_t i = 0; i < c->n; i++)
		store_change_free(&c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}
