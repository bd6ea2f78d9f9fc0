/*
 * test_store_merge.c: store/merge.c's contract as its head comment states
 * it, on two databases written by the store itself: an event key counts
 * once, as the version with the highest count, id = its id * 100 + the
 * database's position; incidents of one release whose windows overlap
 * are one, whose id is the first member's id * 100 + position and whose
 * count is recounted from the merged events; incidents further apart
 * than the gap stay apart; the order the files are named in decides only
 * the ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/store.h"
#include "revtrail/store_read.h"
#include "tap.h"

#define SEC 1000000000LL
#define MIN (60 * SEC)
#define T0 (1730640000LL * SEC)
#define S(x) rt_str_make((x), strlen(x))

static char pa[128], pb[128];

static void unlink_db(const char *path)
{
	static const char *const ext[] = { "", "-wal", "-shm", ".lock" };
	char p[160];

	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s%s", path, ext[i]);
		unlink(p);
	}
}

struct ev {
	uint64_t ukey;
	int64_t t, count;
	const char *msg;
};

/* One window of events into a new incident of prod/web; its id. */
static int64_t window(struct store *st, const struct ev *v, size_t n)
{
	struct plan_event ev[4];
	struct plan_evstate xs[4];
	size_t idx[4];
	struct plan_window w = {
		.ns = "prod", .rel = "web", .events = idx, .nevents = n,
	};
	int64_t id = 0;

	memset(ev, 0, sizeof(ev));
	for (size_t i = 0; i < n; i++) {
		ev[i].ukey = v[i].ukey;
		ev[i].first_ns = ev[i].last_ns = v[i].t;
		ev[i].count = v[i].count;
		ev[i].format = RT_FMT_K8S_EVENT;
		ev[i].severity = RT_SEV_ERROR;
		ev[i].ns = S("prod");
		ev[i].attr.kind = S("Pod");
		ev[i].attr.name = ev[i].pod = S("web-1");
		ev[i].reason = S("BackOff");
		ev[i].message = S(v[i].msg);
		ev[i].ntags = 1;
		ev[i].tags[0] = "crashloop";
		ev[i].attr.via = PLAN_VIA_LABEL;
		ev[i].attr.release = S("web");
		ev[i].attr.release_ns = S("prod");
		xs[i] = (struct plan_evstate){ .tags = "[\"crashloop\"]",
					       .via = "label", .cluster = true };
		idx[i] = i;
	}
	w.agg = (struct plan_agg){
		.opened = v[0].t, .last = v[n - 1].t, .count = (int64_t)n,
		.occ = (int64_t)n, .sev = RT_SEV_ERROR, .via = PLAN_VIA_LABEL,
		.via_name = "label", .tags = "[\"crashloop\"]",
	};
	if (store_write_window(st, ev, xs, &w, &id))
		return -1;
	return id;
}

/* A database of the given windows (0-terminated groups); the ids. */
static int build(const char *path, const struct ev *const *groups,
		 const size_t *sizes, size_t ngroups, int64_t *ids)
{
	struct store *st;
	char err[RT_ERRLEN];

	unlink_db(path);
	if (store_open(path, 0, NULL, &st, err, sizeof(err))) {
		printf("# %s\n", err);
		return -1;
	}
	if (store_begin(st))
		return -1;
	for (size_t i = 0; i < ngroups; i++)
		if ((ids[i] = window(st, groups[i], sizes[i])) <= 0)
			return -1;
	if (store_end(st, NULL))
		return -1;
	store_close(st);
	return 0;
}

struct collect {
	char text[2048];
};

/* Each row as "cell,cell;": integers in decimal, NULL as "null". */
static int on_row(void *ctx, int n, const char *const *names,
		  const struct store_value *v)
{
	struct collect *c = ctx;
	size_t len = strlen(c->text);

	(void)names;
	for (int i = 0; i < n && len < sizeof(c->text) - 1; i++) {
		if (v[i].type == STORE_INT)
			snprintf(c->text + len, sizeof(c->text) - len, "%s%lld",
				 i ? "," : "", (long long)v[i].i);
		else
			snprintf(c->text + len, sizeof(c->text) - len, "%s%.64s",
				 i ? "," : "", v[i].type == STORE_TEXT ?
				 v[i].p : "null");
		len = strlen(c->text);
	}
	if (len < sizeof(c->text) - 1)
		strcat(c->text, ";");
	return 0;
}

/* The rows of sql as "a,b;" text (integers after the texts). */
static const char *q(struct store *st, const char *sql)
{
	static struct collect c;
	char err[RT_ERRLEN];

	c.text[0] = '\0';
	if (store_query(st, sql, NULL, on_row, &c, err, sizeof(err)))
		snprintf(c.text, sizeof(c.text), "error: %.1000s", err);
	return c.text;
}

int main(void)
{
	/* A: k1, k2 in one incident; k9 three hours later in another.
	 * B: k2 again, counted three times since, and k3, in an incident
	 * that overlaps A's first; k4 14 minutes after k3, in an incident
	 * of its own within the gap (15m) of it. */
	static const struct ev a1[] = {
		{ 1, T0, 1, "k1" }, { 2, T0 + 5 * MIN, 1, "k2 in a" },
	};
	static const struct ev a2[] = { { 9, T0 + 180 * MIN, 1, "k9" } };
	static const struct ev b1[] = {
		{ 2, T0 + 5 * MIN, 3, "k2 in b" }, { 3, T0 + 10 * MIN, 1, "k3" },
	};
	static const struct ev b2[] = { { 4, T0 + 24 * MIN, 1, "k4" } };
	const struct ev *ga[] = { a1, a2 }, *gb[] = { b1, b2 };
	const size_t na[] = { 2, 1 }, nb[] = { 2, 1 };
	int64_t ia[2], ib[2];
	const char *paths[2];
	struct store *st;
	char err[RT_ERRLEN] = "", want[128];

	snprintf(pa, sizeof(pa), "/tmp/rt_merge_a_%d.db", (int)getpid());
	snprintf(pb, sizeof(pb), "/tmp/rt_merge_b_%d.db", (int)getpid());
	if (!ok(build(pa, ga, na, 2, ia) == 0 && build(pb, gb, nb, 2, ib) == 0,
		"two databases written by the store"))
		return done_testing();
	paths[0] = pa;
	paths[1] = pb;
	if (!ok(store_open_read_many(paths, 2, NULL, &st, err, sizeof(err))
		== 0, "opened as one: %s", err))
		return done_testing();
	is_str(q(st, "SELECT count(*) FROM events"), "5;",
	       "an event key in both databases is one event");
	is_str(q(st, "SELECT message, count, id % 100 FROM events "
		 "WHERE ukey = 2"), "k2 in b,3,2;",
	       "the version with the highest count, from its database (2)");
	is_str(q(st, "SELECT count(*) FROM incidents"), "2;",
	       "incidents overlapping or within the gap are one, the distant "
	       "one stays apart");
	snprintf(want, sizeof(want), "%lld,4;",
		 (long long)(ia[0] * 100 + 1));
	is_str(q(st, "SELECT id, event_count FROM incidents "
		 "ORDER BY opened_ns LIMIT 1"), want,
	       "the merged id is the first member's * 100 + 1; its events "
	       "are counted once each");
	snprintf(want, sizeof(want), "%lld;", (long long)(ia[0] * 100 + 1));
	is_str(q(st, "SELECT DISTINCT incident_id FROM events WHERE ukey IN "
		 "(1, 2, 3, 4)"), want, "each merged event names the merged "
	       "incident");
	store_close(st);

	/* Named the other way round: the same merge, B's ids first. */
	paths[0] = pb;
	paths[1] = pa;
	if (ok(store_open_read_many(paths, 2, NULL, &st, err, sizeof(err))
	       == 0, "opened in the other order")) {
		snprintf(want, sizeof(want), "%lld,4;",
			 (long long)(ib[0] * 100 + 1));
		is_str(q(st, "SELECT id, event_count FROM incidents "
			 "ORDER BY opened_ns LIMIT 1"), want,
		       "then B's incident gives the id; the count is the "
		       "same");
		is_str(q(st, "SELECT message, count FROM events "
			 "WHERE ukey = 2"), "k2 in b,3;",
		       "and the same version of the shared event wins");
		store_close(st);
	}
	unlink_db(pa);
	unlink_db(pb);
	return done_testing();
}
