/*
 * remedy.c: the words an incident row shows besides its aggregates -- the
 * diagnosis remedy with its placeholders filled, the title of an
 * undiagnosed incident, the revisions deployed while it was open. Plain
 * text from a corr_incview and its corr_diagnosis; the store writes it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "revtrail/correlate.h"
#include "revtrail/rt_kit.h"

/* The last successful revision before the opening one, of the opening
 * one's life: a reinstall's numbers start again, and the old life's
 * revisions are gone from Helm's storage. */
static int previous_rev(const struct corr_incview *v)
{
	int best = 0;

	if (!v->opening)
		return 0;
	for (size_t i = 0; v->rel && i < v->rel->nrevs; i++) {
		const struct corr_rev *r = &v->rel->revs[i];

		if (r->life == v->opening->life &&
		    r->revision < v->opening->revision && r->status &&
		    (!strcmp(r->status, "superseded") ||
		     !strcmp(r->status, "deployed")))
			best = r->revision;
	}
	return best ? best : v->opening->revision - 1;
}

/* The most frequent value its events captured for field (of the
 * fields listed, the first one that has a value), or NULL. *which gets
 * the field. */
static const char *captured(const struct corr_incview *v,
			    const char *const *fields, size_t n,
			    const char **which)
{
	const struct corr_capture *best = NULL;

	for (size_t f = 0; f < n && !best; f++)
		for (size_t i = 0; i < v->ncaps; i++)
			if (v->caps[i].field &&
			    !strcmp(v->caps[i].field, fields[f]) &&
			    (!best || v->caps[i].times > best->times))
				best = &v->caps[i];
	if (which)
		*which = best ? best->field : NULL;
	return best ? best->value : NULL;
}

static const char *const config_fields[] = { "configmap", "secret" };

/* The config object the incident is about: a hook ConfigMap of the
 * opening revision, else one its events name missing, else an affected
 * ConfigMap or Secret. */
static const char *config_name(const struct corr_incview *v, char *buf,
			       size_t size)
{
	const char *c;

	if (v->opening && v->opening->hooks && *v->opening->hooks) {
		snprintf(buf, size, "%.*s", (int)strcspn(v->opening->hooks, ","),
			 v->opening->hooks);
		return buf;
	}
	if ((c = captured(v, config_fields, 2, NULL)))
		return c;
	for (size_t i = 0; i < v->nobjects; i++)
		if (!strcmp(v->objects[i].kind, "ConfigMap") ||
		    !strcmp(v->objects[i].kind, "Secret"))
			return v->objects[i].name;
	return NULL;
}

/* The workload the incident's pods belong to (haproxy for
 * haproxy-6c8d9f7b5-w9xqz), a Job of the incident for kind "job", else
 * the release. */
static const char *workload_name(const struct corr_incview *v,
				 const struct corr_diagnosis *d, bool job,
				 char *buf, size_t size)
{
	struct rt_str w;

	for (size_t i = 0; job && i < v->nobjects; i++)
		if (!strcmp(v->objects[i].kind, "Job"))
			return v->objects[i].name;
	if (!d->npods)
		return v->release;
	w = corr_workload_name(RT_STR_LIT("Pod"),
			       rt_str_make(d->pods[0], strlen(d->pods[0])),
			       RT_STR_NULL);
	snprintf(buf, size, "%.*s", (int)w.n, w.p);
	return buf;
}

/* "deployment/<name>": a workload kind right before the placeholder. */
static int kind_before(const char *start, const char *p)
{
	static const char *const kinds[] = {
		"deployment/", "deploy/", "statefulset/", "sts/", "daemonset/",
		"ds/", "job/",
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i]);

		if ((size_t)(p - start) >= n && !strncasecmp(p - n, kinds[i], n))
			return strcmp(kinds[i], "job/") == 0 ? 2 : 1;
	}
	return 0;
}

/* The newest revision the release history holds, of the opening one's
 * life (the newest life without one): <N> in a remedy. */
static int newest_rev(const struct corr_incview *v)
{
	int best = v->opening ? v->opening->revision : 0;
	int life = v->opening ? v->opening->life :
		   v->rel && v->rel->nrevs ?
		   v->rel->revs[v->rel->nrevs - 1].life : 0;

	for (size_t i = 0; v->rel && i < v->rel->nrevs; i++)
		if (v->rel->revs[i].life == life &&
		    v->rel->revs[i].revision > best)
			best = v->rel->revs[i].revision;
	return best;
}

/* A name pasted into a remedy's shell command, as one shell word. */
static void add_word(struct rt_buf *t, const char *s)
{
	size_t n = strlen(s);
	char tmp[1024];

	if (4 * n + 3 > sizeof(tmp)) {
		rt_buf_add(t, "''", 2);    /* longer than any Kubernetes name */
		return;
	}
	rt_buf_add(t, tmp, rt_shell_quote(s, n, tmp));
}

static bool is_sick(const struct corr_incview *v, int rev)
{
	for (size_t i = 0; i < v->nsick; i++)
		if (v->sick[i] == rev)
			return true;
	return false;
}

/* The revision a rollback returns to: the one before the opening one,
 * when it was deployed (superseded or deployed) and opened no incident
 * of its own, and the opening one is still the newest (not rolled back
 * or upgraded since); NULL otherwise. */
static const struct corr_rev *rollback_target(const struct corr_incview *v)
{
	const struct corr_rev *r;
	int prev = previous_rev(v);

	if (!v->opening || prev <= 0 || prev >= v->opening->revision ||
	    newest_rev(v) != v->opening->revision ||
	    !(r = corr_release_rev_life(v->rel, prev, v->opening->life)) || !r->status ||
	    (strcmp(r->status, "superseded") && strcmp(r->status, "deployed")) ||
	    is_sick(v, prev))
		return NULL;
	return r;
}

/* After an upgrade, the first mitigation: back to a revision that ran
 * well, and what that does not undo. */
static void rollback_line(struct rt_buf *t, const struct corr_incview *v,
			  const struct corr_rev *r)
{
	char buf[512];

	rt_buf_add(t, "Mitigate first: `helm rollback ", 31);
	add_word(t, v->release);
	snprintf(buf, sizeof(buf), " %d -n ", r->revision);
	rt_buf_add(t, buf, strlen(buf));
	add_word(t, v->ns);
	snprintf(buf, sizeof(buf), "` returns the release to revision %d "
		 "(%s, no incident while it was in force). A rollback does "
		 "not undo what revision %d did beyond its manifests: hooks "
		 "that ran, CRDs (Helm never rolls them back), data and "
		 "schema migrations stay as they are.\n", r->revision,
		 r->status, v->opening->revision);
	rt_buf_add(t, buf, strlen(buf));
}

/* "configmap 'x'" for `kubectl get <object>`: the object the events name
 * missing, else both kinds. */
static void add_object(struct rt_buf *t, const struct corr_incview *v)
{
	const char *field, *name = captured(v, config_fields, 2, &field);

	if (!name) {
		rt_buf_add(t, "configmap,secret", 16);
		return;
	}
	rt_buf_add(t, field, strlen(field));
	rt_buf_add(t, " ", 1);
	add_word(t, name);
}

const char *corr_remedy(struct rt_buf *t, const char *tpl,
			const struct corr_incview *v,
			const struct corr_diagnosis *d)
{
	static const char *const path_field[] = { "path" };
	const struct corr_rev *back;
	char num[24], name[256];

	rt_buf_reset(t);
	rt_buf_add(t, "", 0);
	if (d && d->rule && d->rule->opened_by == RULES_OPENED_UPGRADE &&
	    (back = rollback_target(v)))
		rollback_line(t, v, back);
	for (const char *p = tpl; *p;) {
		const char *rep = NULL;
		size_t skip = 0;

		if (*p != '<') {
			rt_buf_add(t, p++, 1);
			continue;
		}
		if (!strncmp(p, "<ns>", 4)) {
			rep = v->ns, skip = 4;
		} else if (!strncmp(p, "<release>", 9)) {
			rep = v->release, skip = 9;
		} else if (!strncmp(p, "<rev>", 5) && v->opening) {
			snprintf(num, sizeof(num), "%d", v->opening->revision);
			rep = num, skip = 5;
		} else if (!strncmp(p, "<N>", 3) && newest_rev(v) > 0) {
			snprintf(num, sizeof(num), "%d", newest_rev(v));
			rep = num, skip = 3;
		} else if (!strncmp(p, "<previous-rev>", 14) &&
			   previous_rev(v) > 0) {
			snprintf(num, sizeof(num), "%d", previous_rev(v));
			rep = num, skip = 14;
		} else if (!strncmp(p, "<object>", 8)) {
			add_object(t, v);
			p += 8;
			continue;
		} else if (!strncmp(p, "<path>", 6)) {
			rep = captured(v, path_field, 1, NULL), skip = 6;
			if (!rep) {
				rt_buf_add(t, "the file's path", 15);
				p += 6;
				continue;
			}
		} else if (!strncmp(p, "<name>", 6) && kind_before(tpl, p)) {
			rep = workload_name(v, d, kind_before(tpl, p) == 2, name,
					    sizeof(name)), skip = 6;
		} else if (!strncmp(p, "<workload>", 10)) {
			rep = workload_name(v, d, false, name, sizeof(name)),
			skip = 10;
		} else if (!strncmp(p, "<name>", 6)) {
			rep = config_name(v, name, sizeof(name)), skip = 6;
		} else if (!strncmp(p, "<pod> ...", 9) && d->npods) {
			for (unsigned i = 0; i < d->npods; i++) {
				if (i)
					rt_buf_add(t, " ", 1);
				add_word(t, d->pods[i]);
			}
			p += 9;
			continue;
		} else if (!strncmp(p, "<pod>", 5) && d->npods) {
			rep = d->pods[0], skip = 5;
		}
		if (!rep) {
			rt_buf_add(t, p++, 1);
			continue;
		}
		add_word(t, rep);
		p += skip;
	}
	return t->err ? NULL : t->p;
}

void corr_untitled(const struct corr_incview *v, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; v->tags && i < v->tags->n && len + 70 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					i ? ", " : "", v->tags->t[i]);
	snprintf(buf + len, size - len, " in %s", v->release);
}

void corr_later_json(const struct corr_incview *v, char *buf, size_t size)
{
	const struct corr_rev *later[32];
	size_t n = corr_later_revisions(v, later, 32), len = 0;

	buf[len++] = '[';
	for (size_t i = 0; i < n && i < 32 && len + 16 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%d",
					i ? "," : "", later[i]->revision);
	buf[len++] = ']';
	buf[len] = '\0';
}
