/*
 * test_pipeline_diag.c: the diagnosis of a large incident reads a bounded
 * view of its objects (the first pods, their total, one match per object
 * condition) and still decides as over the full list: the pod count in the
 * evidence, the first 64 pods in `pods`, a helm-install pod seen after
 * hundreds of others still fires superseded_release_install. Also the
 * workload -> release mappings of the batch, persisted and reloaded.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/writer.h"
#include "db_path.h"
#include "tap.h"

#define SEC 1000000000LL
#define T0 (1730640000LL * SEC)
#define S(x) rt_str_make((x), strlen(x))
#define NPODS 300

static struct rules *rules;
static char names[NPODS + 8][64];

static void event(struct corr_batch *b, const char *ns, const char *kind,
		  const char *name, const char *pod, const char *release,
		  const char *tag, int64_t t)
{
	struct rt_record r;
	struct rt_class c;

	rt_record_init(&r);
	r.format = RT_FMT_K8S_EVENT;
	r.ns = S(ns);
	if (kind)
		r.kind = S(kind);
	if (name)
		r.name = S(name);
	if (pod)
		r.pod = S(pod);
	if (release)
		r.release = S(release);
	r.message = S("Back-off restarting failed container");
	r.ts_ns = T0 + t * SEC;
	r.pos.source = "test";
	memset(&c, 0, sizeof(c));
	if (tag) {
		c.ntags = 1;
		c.tags[0] = tag;
		c.severity = RT_SEV_ERROR;
	}
	corr_batch_add(b, &r, &c);
}

static void history(struct corr_batch *b, const char *ns, const char *rel,
		    int rev, const char *status, int64_t t)
{
	struct rt_record r;
	struct rt_revision rv;
	struct rt_class c;

	rt_record_init(&r);
	memset(&rv, 0, sizeof(rv));
	memset(&c, 0, sizeof(c));
	rv.ns = S(ns);
	rv.release = S(rel);
	rv.revision = rev;
	rv.status = S(status);
	rv.updated_ns = T0 + t * SEC;
	r.format = RT_FMT_HELM_LIST;
	r.revs = &rv;
	r.nrevs = 1;
	corr_batch_add(b, &r, &c);
}

static sqlite3_stmt *q(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *s = NULL;

	sqlite3_prepare_v2(h, sql, -1, &s, NULL);
	sqlite3_step(s);
	return s;
}

static void test_large_incident(void)
{
	struct pipeline_opts o = { .rules = rules };
	struct corr_batch *b = corr_batch_new(false);
	struct pipeline_db *st;
	char err[512];
	sqlite3 *h;
	sqlite3_stmt *s;

	fresh();
	is_int(pipeline_db_open(path, &o, &st, err, sizeof(err)), 0, "open");
	history(b, "kube-system", "traefik", 3, "superseded", 0);
	for (int i = 0; i < NPODS; i++) {
		snprintf(names[i], sizeof(names[i]), "traefik-7d9c8f4b6-p%04d", i);
		event(b, "kube-system", "Pod", names[i], NULL, NULL, "crashloop",
		      10 + i);
	}
	is_int(pipeline_commit(st, b, NULL), 0, "first batch: %d pods", NPODS);
	corr_batch_reset(b);
	/* a later batch: the helm-install pod, last of all */
	event(b, "kube-system", "Pod", "helm-install-traefik-x7fqb", NULL, NULL,
	      "helm_name_in_use", 10 + NPODS);
	is_int(pipeline_commit(st, b, NULL), 0, "second batch: the helm-install pod");
	corr_batch_free(b);
	pipeline_db_close(st);

	sqlite3_open(path, &h);
	s = q(h, "SELECT count(*) FROM incidents");
	is_int(sqlite3_column_int(s, 0), 1, "one incident: the pods by prefix, "
	       "the job's pod by its name");
	sqlite3_finalize(s);
	s = q(h, "SELECT diagnosis, json_array_length(pods), evidence,"
	      " json_extract(pods, '$[0]') FROM incidents"
	      " WHERE release = 'traefik'");
	is_str((const char *)sqlite3_column_text(s, 0),
	       "superseded_release_install",
	       "the helm-install pod after 300 others still matches Pod/helm-install-*");
	is_int(sqlite3_column_int(s, 1), 64, "pods lists the first 64");
	ok(strstr((const char *)sqlite3_column_text(s, 2), "301 pods affected") != NULL,
	   "the evidence counts all 301 pods: %s", sqlite3_column_text(s, 2));
	ok(strstr((const char *)sqlite3_column_text(s, 2),
		  "Pod/helm-install-traefik-x7fqb matches Pod/helm-install-*") != NULL,
	   "the object condition is evidence");
	is_str((const char *)sqlite3_column_text(s, 3), "traefik-7d9c8f4b6-p0000",
	       "first seen first");
	sqlite3_finalize(s);
	s = q(h, "SELECT count(*) FROM incident_objects");
	is_int(sqlite3_column_int(s, 0), NPODS + 1, "every object is stored");
	sqlite3_finalize(s);
	sqlite3_close(h);
	fresh();
}

/* Labels of one batch name the release of unlabelled records of another,
 * across pipeline_db_close/pipeline_db_open. */
static void test_aliases(void)
{
	struct pipeline_opts o = { .rules = rules };
	struct corr_batch *b = corr_batch_new(false);
	struct pipeline_db *st;
	char err[512];
	sqlite3 *h;
	sqlite3_stmt *s;

	fresh();
	is_int(pipeline_db_open(path, &o, &st, err, sizeof(err)), 0, "open");
	event(b, "lb", NULL, NULL, "haproxy-6c8d9f7b5-w9xqz", NULL, "crashloop",
	      100);
	is_int(pipeline_commit(st, b, NULL), 0, "an unlabelled log line");
	corr_batch_reset(b);
	pipeline_db_close(st);
	is_int(pipeline_db_open(path, &o, &st, err, sizeof(err)), 0, "reopen");
	/* an untagged, labelled line of another pod of the workload */
	event(b, "lb", NULL, NULL, "haproxy-6c8d9f7b5-r2mtk", "edge", NULL, 50);
	is_int(pipeline_commit(st, b, NULL), 0, "a labelled untagged line");
	corr_batch_reset(b);
	pipeline_db_close(st);
	is_int(pipeline_db_open(path, &o, &st, err, sizeof(err)), 0, "reopen");
	event(b, "lb", "Pod", "haproxy-6c8d9f7b5-w9xqz", NULL, NULL, "crashloop",
	      200);
	is_int(pipeline_commit(st, b, NULL), 0, "an unlabelled event after reopening");
	corr_batch_free(b);
	pipeline_db_close(st);

	sqlite3_open(path, &h);
	s = q(h, "SELECT group_concat(release || '/' || attribution, ' ')"
	      " FROM (SELECT release, attribution FROM events ORDER BY id)");
	is_str((const char *)sqlite3_column_text(s, 0), "edge/label edge/label",
	       "both events: edge, by the workload's label");
	sqlite3_finalize(s);
	s = q(h, "SELECT count(*), min(release) FROM incidents");
	is_int(sqlite3_column_int(s, 0), 1, "one incident");
	is_str((const char *)sqlite3_column_text(s, 1), "edge", "of edge");
	sqlite3_finalize(s);
	s = q(h, "SELECT workload || '>' || release FROM workload_releases");
	is_str((const char *)sqlite3_column_text(s, 0), "haproxy>edge",
	       "the mapping is stored");
	sqlite3_finalize(s);
	sqlite3_close(h);
	fresh();
}

int main(void)
{
	char err[512];

	snprintf(path, sizeof(path), "/tmp/test_pipeline_diag.%d.db", (int)getpid());
	rules = rules_new();
	if (rules_load_builtin(rules, err, sizeof(err)) ||
	    rules_compile(rules, err, sizeof(err))) {
		ok(0, "built-in rules: %s", err);
		return done_testing();
	}
	test_large_incident();
	test_aliases();
	rules_free(rules);
	return done_testing();
}
