/*
 * changes.c: see changes.h. A summary is "Kind/name\tfield\tvalue\n"
 * lines; two are compared as sorted sets of (object, field) keys.
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "changes.h"
#include "cli.h"
#include "revtrail/correlate.h"

struct line {
	const char *obj, *field, *value;   /* into a copy of the text */
};

struct side {
	int rev;
	char *text;
	struct line *l;
	size_t n;
};

struct reading {
	struct side s[2];
	int rows;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	int c = strcmp(x->obj, y->obj);

	return c ? c : strcmp(x->field, y->field);
}

/* Splits text (owned) into sorted lines. */
static int side_parse(struct side *sd)
{
	size_t cap = 1;

	for (const char *p = sd->text; *p; p++)
		cap += *p == '\n';
	if (!(sd->l = calloc(cap, sizeof(*sd->l))))
		return RT_ENOMEM;
	for (char *p = sd->text, *nl; *p; p = nl + 1) {
		char *t1, *t2;

		if (!(nl = strchr(p, '\n')))
			nl = p + strlen(p) - 1;
		*nl = '\0';
		if ((t1 = strchr(p, '\t')) && (t2 = strchr(t1 + 1, '\t'))) {
			*t1 = *t2 = '\0';
			sd->l[sd->n++] = (struct line){ p, t1 + 1, t2 + 1 };
		}
		if (!nl[1])
			break;
	}
	qsort(sd->l, sd->n, sizeof(*sd->l), line_cmp);
	return 0;
}

static int on_summary(void *ctx, int n, const char *const *names,
		      const struct store_value *v)
{
	struct reading *r = ctx;
	struct side *sd;

	(void)names;
	if (n < 2 || r->rows >= 2 || v[1].type != STORE_TEXT)
		return 0;
	sd = &r->s[r->rows++];
	sd->rev = (int)v[0].i;
	return (sd->text = strdup(v[1].p)) ? 0 : RT_ENOMEM;
}

/* The workloads of the incident's pods ("checkout-api"), a JSON array. */
static cJSON *workloads(const char *pods_json)
{
	cJSON *pods = cJSON_Parse(pods_json ? pods_json : "[]"), *w, *it;

	if (!(w = cJSON_CreateArray())) {
		cJSON_Delete(pods);
		return NULL;
	}
	cJSON_ArrayForEach(it, pods) {
		struct rt_str s;
		char buf[256];

		if (!cJSON_IsString(it))
			continue;
		s = corr_workload_name(RT_STR_LIT("Pod"),
				       rt_str_make(it->valuestring,
						   strlen(it->valuestring)),
				       RT_STR_NULL);
		snprintf(buf, sizeof(buf), "%.*s", (int)s.n, s.p);
		cJSON_AddItemToArray(w, cJSON_CreateString(buf));
	}
	cJSON_Delete(pods);
	return w;
}

static bool in_list(const cJSON *a, const char *s, size_t n)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it) && strlen(it->valuestring) == n &&
		    !strncmp(it->valuestring, s, n))
			return true;
	return false;
}

/* Whether obj ("Kind/name") is a workload the incident hit; any
 * workload when the pods name none the summaries know. */
static bool hit(const char *obj, const cJSON *w, bool any)
{
	const char *slash = strchr(obj, '/');

	if (!slash || !strcmp(obj, "") || !(strncmp(obj, "Deployment/", 11) == 0 ||
	    !strncmp(obj, "StatefulSet/", 12) || !strncmp(obj, "DaemonSet/", 10) ||
	    !strncmp(obj, "Job/", 4) || !strncmp(obj, "CronJob/", 8)))
		return false;
	return any || in_list(w, slash + 1, strlen(slash + 1));
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void add(struct changes *ch, const char *obj, const char *field,
		const char *before, const char *after)
{
	const char *slash = strchr(obj, '/');
	struct change *c;

	if (ch->n == CHANGES_MAX) {
		ch->more++;
		return;
	}
	c = &ch->c[ch->n++];
	c->kind = strndup(obj, slash ? (size_t)(slash - obj) : strlen(obj));
	c->name = strdup(slash ? slash + 1 : "");
	c->field = strdup(field);
	c->before = dup_or_null(before);
	c->after = dup_or_null(after);
}

/* Walks both sorted sides; calls keep on each differing key. pass 0:
 * the workloads hit (noting the names their values hold in refs), pass
 * 1: config objects whose presence changed and that refs names. */
static void diff(struct changes *ch, const struct side *a,
		 const struct side *b, const cJSON *w, bool any, int pass,
		 cJSON *refs)
{
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		const struct line *x = i < a->n ? &a->l[i] : NULL;
		const struct line *y = j < b->n ? &b->l[j] : NULL;
		int c = !x ? 1 : !y ? -1 : line_cmp(x, y);
		const struct line *k = c <= 0 ? x : y;
		const char *before = c <= 0 ? x->value : NULL;
		const char *after = c >= 0 ? y->value : NULL;

		i += c <= 0;
		j += c >= 0;
		if (before && after && !strcmp(before, after))
			continue;
		if (pass == 0 && hit(k->obj, w, any)) {
			add(ch, k->obj, k->field, before, after);
			cJSON_AddItemToArray(refs, cJSON_CreateString(
				before ? before : ""));
			cJSON_AddItemToArray(refs, cJSON_CreateString(
				after ? after : ""));
		} else if (pass == 1 && !strcmp(k->field, "object") &&
			   strchr(k->obj, '/') &&
			   in_list(refs, strchr(k->obj, '/') + 1,
				   strlen(strchr(k->obj, '/') + 1))) {
			add(ch, k->obj, k->field, before, after);
		}
	}
}

static bool any_hit(const struct side *s, const cJSON *w)
{
	for (size_t i = 0; i < s->n; i++)
		if (hit(s->l[i].obj, w, false))
			return true;
	return false;
}

int changes_read(struct store *st, int64_t id, const char *pods_json,
		 struct changes *ch)
{
	struct reading r = { 0 };
	cJSON *w = NULL, *refs = NULL;
	int rc;

	memset(ch, 0, sizeof(*ch));
	rc = store_incident_part(st, id, STORE_PART_CHANGES, on_summary, &r);
	if (rc || r.rows < 2 || side_parse(&r.s[0]) || side_parse(&r.s[1]))
		goto out;
	if (!(w = workloads(pods_json)) || !(refs = cJSON_CreateArray()))
		goto out;
	ch->from = r.s[1].rev;
	ch->to = r.s[0].rev;
	{
		bool any = !any_hit(&r.s[0], w) && !any_hit(&r.s[1], w);

		diff(ch, &r.s[1], &r.s[0], w, any, 0, refs);
		diff(ch, &r.s[1], &r.s[0], w, any, 1, refs);
	}
out:
	cJSON_Delete(w);
	cJSON_Delete(refs);
	for (int i = 0; i < 2; i++) {
		free(r.s[i].text);
		free(r.s[i].l);
	}
	return rc;
}

void changes_release(struct changes *ch)
{
	for (size_t i = 0; i < ch->n; i++) {
		free(ch->c[i].kind);
		free(ch->c[i].name);
		free(ch->c[i].field);
		free(ch->c[i].before);
		free(ch->c[i].after);
	}
	ch->n = 0;
}

void changes_print(FILE *f, const struct changes *ch)
{
	if (!ch->from)
		return;
	fprintf(f, "\nWhat changed (revision %d -> %d):\n", ch->from, ch->to);
	if (!ch->n)
		fputs("  nothing in the workloads it hit\n", f);
	for (size_t i = 0; i < ch->n; i++) {
		const struct change *c = &ch->c[i];

		fputs("  ", f);
		cli_put_text(f, c->kind);
		fputc('/', f);
		cli_put_text(f, c->name);
		if (!strcmp(c->field, "object")) {
			fputs(c->after ? ": added" : ": removed", f);
		} else {
			fputc(' ', f);
			cli_put_text(f, c->field);
			fputs(": ", f);
			cli_put_text(f, c->before ? c->before : "(none)");
			fputs(" -> ", f);
			cli_put_text(f, c->after ? c->after : "(none)");
		}
		fputc('\n', f);
	}
	if (ch->more)
		fprintf(f, "  ... %zu more\n", ch->more);
}

void changes_json(FILE *f, const struct changes *ch)
{
	cJSON *a;
	char *txt;

	if (!ch->from) {
		fputs(",\n\"changes\":[]", f);
		return;
	}
	a = cJSON_CreateArray();
	for (size_t i = 0; a && i < ch->n; i++) {
		const struct change *c = &ch->c[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "kind", c->kind);
		cJSON_AddStringToObject(o, "name", c->name);
		cJSON_AddStringToObject(o, "field", c->field);
		if (c->before)
			cJSON_AddStringToObject(o, "before", c->before);
		else
			cJSON_AddNullToObject(o, "before");
		if (c->after)
			cJSON_AddStringToObject(o, "after", c->after);
		else
			cJSON_AddNullToObject(o, "after");
		cJSON_AddItemToArray(a, o);
	}
	if (a && (txt = cJSON_PrintUnformatted(a))) {
		fprintf(f, ",\n\"changes_revisions\":[%d,%d],\n\"changes\":%s",
			ch->from, ch->to, txt);
		free(txt);
	}
	cJSON_Delete(a);
}
