/*
 * helm_yaml.c: `helm history -o yaml`, `helm list -o yaml` and `helm status
 * -o yaml`, read a line at a time as the framer hands text lines over.
 *
 * Helm writes them with sigs.k8s.io/yaml: its JSON structs marshalled
 * through go-yaml, so keys come sorted, maps indent by two, a sequence in
 * a map is not indented, long plain or quoted scalars fold onto indented
 * continuation lines, and multi-line strings (notes, manifest) are block
 * scalars (`|`, `|-`). Only these shapes are read: a sequence of maps of
 * scalars whose first key is `app_version` (history, list), and a release
 * map that opens with `chart:` then a member of Helm's chart struct (the
 * `chart:` line is held until that next line says so), and whose scalars
 * of interest sit at known
 * depths (chart.metadata.{name,version,appVersion}, info.{status,
 * description,last_deployed,first_deployed}, name, namespace, version).
 * A small reader for that subset, not libyaml: libyaml wants a whole
 * document to build events from, while lines arrive one by one with
 * other text between documents; and the subset needs no anchors, tags,
 * flow collections or multi-documents, which are libyaml's reason to be.
 *
 * An item is emitted at `updated`, its last key, or when the next item or
 * another line comes; a release at `version`, its last key, or (without
 * one: Go omits a zero version) as a record without revision, counted.
 * What the end of the stream cuts off is counted (dec_helm_yaml_end).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "helm_text.h"

enum { DEC_YAML_NONE, DEC_YAML_ITEMS, DEC_YAML_CHART, DEC_YAML_STATUS };
enum { SEC_OTHER, SEC_CHART, SEC_INFO };
enum { F_RELEASE, F_NS, F_STATUS, F_CHART, F_CHART_VERSION, F_APP_VERSION,
       F_DESCRIPTION, F_UPDATED, F_FIRST, F_REVISION, F_NONE = -1 };

/* One line: its indent (after a "- ", the item's), key and value. */
struct yline {
	int indent;
	bool dash;
	struct span key, val;
};

static bool parse_line(const char *raw, size_t n, struct yline *l)
{
	const char *p = raw, *e = raw + n, *k;

	while (e > p && ing_is_space(e[-1]))
		e--;
	while (p < e && *p == ' ')
		p++;
	l->indent = (int)(p - raw);
	l->dash = e - p >= 2 && p[0] == '-' && p[1] == ' ';
	if (l->dash) {
		p += 2;
		l->indent += 2;
	}
	for (k = p; k < e && (isalnum((unsigned char)*k) || *k == '_'); k++)
		;
	if (k == p || k == e || *k != ':' || (k + 1 < e && k[1] != ' '))
		return false;
	l->key = (struct span){ p, (size_t)(k - p) };
	l->val = trim(k + 1, (size_t)(e - k - 1));
	return true;
}

static char *field(struct dec_helm_yaml *y, int f, size_t *cap)
{
	struct { char *p; size_t n; } b[] = {
		{ y->release, sizeof(y->release) }, { y->ns, sizeof(y->ns) },
		{ y->status, sizeof(y->status) }, { y->chart, sizeof(y->chart) },
		{ y->chart_version, sizeof(y->chart_version) },
		{ y->app_version, sizeof(y->app_version) },
		{ y->description, sizeof(y->description) },
		{ y->updated, sizeof(y->updated) }, { y->first, sizeof(y->first) },
	};

	if (f < 0 || f >= (int)(sizeof(b) / sizeof(b[0])))
		return NULL;
	*cap = b[f].n;
	return b[f].p;
}

static void set_field(struct dec_helm_yaml *y, int f, struct span v)
{
	size_t cap;
	char *p;

	y->last_key = f;
	y->any = true;
	if (f == F_REVISION) {
		if (v.n >= 2 && (*v.p == '"' || *v.p == '\''))
			v = (struct span){ v.p + 1, v.n - 2 };
		y->revision = dec_helm_parse_int(v.p, v.n);
		return;
	}
	if ((p = field(y, f, &cap)))
		keep(p, cap, v);
}

/* A folded continuation: joined with a space, as YAML folds it. */
static void add_field(struct dec_helm_yaml *y, struct span v)
{
	size_t cap, len;
	char *p = field(y, y->last_key, &cap);

	if (!p || !v.n || (len = strlen(p)) + 2 >= cap)
		return;
	p[len++] = ' ';
	keep(p + len, cap - len, v);
}

/* The scalar's text: quotes off, '' and \" \\ undone (the rest of the
 * escapes are not in what Helm writes here). */
static struct rt_str scalar(struct dec_ctx *d, const char *s)
{
	size_t n = strlen(s), o = 0;
	char q = n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0] ?
		 s[0] : 0;
	char *p;

	if (!n || !(p = rt_arena_alloc(d->arena, n + 1)))
		return RT_STR_NULL;
	if (q) {
		s++;
		n -= 2;
	}
	for (size_t i = 0; i < n; i++) {
		if (q == '"' && s[i] == '\\' && i + 1 < n)
			i++;
		else if (q == '\'' && s[i] == '\'' && i + 1 < n && s[i + 1] == '\'')
			i++;
		p[o++] = s[i];
	}
	p[o] = '\0';
	return rt_str_make(p, o);
}

static int64_t yaml_time(struct dec_ctx *d, const char *s)
{
	struct rt_str t = scalar(d, s);
	int64_t ns = 0;
	bool local;
	int rc;

	if (!t.n)
		return 0;
	if ((rc = rt_time_parse_local(t.p, t.n, &ns, &local)) != RT_OK)
		return dec_time(d, rc, &ns);
	if (local)
		dec_count(d, &d->stats->times_local, d->stats->first_local);
	return ns;
}

static void yaml_reset(struct dec_helm_yaml *y, int mode)
{
	*y = (struct dec_helm_yaml){ .mode = mode, .scalar_indent = -1,
				     .last_key = F_NONE };
}

static int emit(struct dec_ctx *d, struct dec_helm_state *st, bool status)
{
	struct dec_helm_yaml *y = &st->yaml;
	struct rt_record rec = *d->base;
	struct rt_revision *rev = dec_helm_revs_alloc(d, 1);
	char chart[sizeof(y->chart) + sizeof(y->chart_version) + 1];
	bool list = !status && y->release[0];

	if (!rev)
		return RT_ENOMEM;
	y->any = false;
	rev->revision = y->revision;
	rev->status = dec_helm_status_str(d, y->status, strlen(y->status));
	rev->description = scalar(d, y->description);
	rev->app_version = scalar(d, y->app_version);
	snprintf(chart, sizeof(chart), "%s%s%s", y->chart,
		 y->chart_version[0] ? "-" : "", y->chart_version);
	rev->chart = scalar(d, chart);
	rev->updated_ns = yaml_time(d, y->updated);
	if (!rev->updated_ns)
		rev->updated_ns = yaml_time(d, y->first);
	if (status || list) {
		rev->release = scalar(d, y->release);
		rev->ns = scalar(d, y->ns);
	} else {
		dec_helm_opts_release(d, rev);
	}
	if (status && rev->revision <= 0)
		dec_count(d, &d->stats->helm_status_incomplete,
			  d->stats->first_incomplete);
	rec.format = status ? RT_FMT_HELM_STATUS : list ? RT_FMT_HELM_LIST :
		     RT_FMT_HELM_HISTORY;
	return dec_helm_emit_revs(d, &rec, rev, 1);
}

static int item_key(struct span k)
{
	static const struct { const char *k; int f; } keys[] = {
		{ "app_version", F_APP_VERSION }, { "chart", F_CHART },
		{ "description", F_DESCRIPTION }, { "name", F_RELEASE },
		{ "namespace", F_NS }, { "revision", F_REVISION },
		{ "status", F_STATUS }, { "updated", F_UPDATED },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (span_is(k, keys[i].k))
			return keys[i].f;
	return F_NONE;
}

/* A line of history/list items; DEC_NO ends them (the line is read
 * afresh by the other decoders). */
static int items_line(struct dec_ctx *d, struct dec_helm_state *st,
		      const struct yline *l, bool is_key)
{
	struct dec_helm_yaml *y = &st->yaml;
	int rc, f;

	if (is_key && l->indent == 2) {
		if (l->dash && y->any && (rc = emit(d, st, false)) != DEC_YES)
			return rc;
		if (l->dash)
			yaml_reset(y, DEC_YAML_ITEMS);
		if ((f = item_key(l->key)) != F_NONE)
			set_field(y, f, l->val);
		else
			y->last_key = F_NONE;
		/* `updated` is an item's last key (sorted; Helm 4's
		 * rollback_revision comes before it) */
		return f == F_UPDATED ? emit(d, st, false) : DEC_YES;
	}
	if (!is_key && !l->dash && l->indent > 2 && y->any) {
		add_field(y, (struct span){ l->key.p, l->key.n });
		return DEC_YES;
	}
	rc = y->any ? emit(d, st, false) : DEC_YES;
	yaml_reset(y, DEC_YAML_NONE);
	return rc != DEC_YES ? rc : DEC_NO;
}

static int status_key(const struct dec_helm_yaml *y, const struct yline *l)
{
	if (l->indent == 0)
		return span_is(l->key, "name") ? F_RELEASE :
		       span_is(l->key, "namespace") ? F_NS :
		       span_is(l->key, "version") ? F_REVISION : F_NONE;
	if (y->section == SEC_INFO && l->indent == 2)
		return span_is(l->key, "status") ? F_STATUS :
		       span_is(l->key, "description") ? F_DESCRIPTION :
		       span_is(l->key, "last_deployed") ? F_UPDATED :
		       span_is(l->key, "first_deployed") ? F_FIRST : F_NONE;
	if (y->section == SEC_CHART && y->meta && l->indent == 4)
		return span_is(l->key, "name") ? F_CHART :
		       span_is(l->key, "version") ? F_CHART_VERSION :
		       span_is(l->key, "appVersion") ? F_APP_VERSION : F_NONE;
	return F_NONE;
}

static void status_section(struct dec_helm_yaml *y, const struct yline *l)
{
	if (l->indent == 0) {
		y->section = span_is(l->key, "chart") ? SEC_CHART :
			     span_is(l->key, "info") ? SEC_INFO : SEC_OTHER;
		y->meta = false;
	} else if (y->section == SEC_CHART && l->indent == 2 && !l->dash) {
		y->meta = span_is(l->key, "metadata");
	}
}

/* A line of a release map. Every line is the release's until a line at
 * column 0 that is no key ends it. */
static int status_line(struct dec_ctx *d, struct dec_helm_state *st,
		       const struct yline *l, bool is_key, bool blank)
{
	struct dec_helm_yaml *y = &st->yaml;
	int f, rc = DEC_YES;

	if (blank || (y->scalar_indent >= 0 && l->indent > y->scalar_indent))
		return DEC_YES;     /* inside notes or manifest */
	y->scalar_indent = -1;
	if (l->indent == 0 && (!is_key || l->dash)) {
		if (y->release[0])
			rc = emit(d, st, true);
		else
			dec_count_at(&y->pos, &d->stats->helm_status_incomplete,
				     d->stats->first_incomplete);
		yaml_reset(y, DEC_YAML_NONE);
		return rc != DEC_YES ? rc : DEC_NO;
	}
	if (!is_key) {
		if (y->last_key != F_NONE && l->indent > 0 && !l->dash)
			add_field(y, l->key);
		return DEC_YES;
	}
	status_section(y, l);
	/* its text is every line indented more than the key */
	if (l->val.n && (l->val.p[0] == '|' || l->val.p[0] == '>'))
		y->scalar_indent = l->indent;
	if ((f = status_key(y, l)) == F_NONE) {
		y->last_key = F_NONE;
		return DEC_YES;
	}
	set_field(y, f, l->val);
	if (f != F_REVISION)
		return DEC_YES;
	rc = emit(d, st, true);     /* `version`, the release's last key */
	yaml_reset(y, DEC_YAML_NONE);
	return rc;
}

/* The keys of Helm's chart struct, one of which follows `chart:` */
static bool chart_member(const struct yline *l)
{
	static const char *const keys[] = {
		"files", "lock", "metadata", "schema", "templates", "values",
		"dependencies",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (l->indent == 2 && !l->dash && span_is(l->key, keys[i]))
			return true;
	return false;
}

/* The line after `chart:`: a member of Helm's chart struct makes the
 * document a release; anything else (a values file's `chart:`) makes the
 * held line the text record it would have been, and the line is read
 * afresh. */
static int chart_confirm(struct dec_ctx *d, struct dec_helm_state *st,
			 const struct yline *l, bool is_key)
{
	struct dec_helm_yaml *y = &st->yaml;
	struct rt_record rec = *d->base;
	int rc;

	if (is_key && chart_member(l)) {
		y->mode = DEC_YAML_STATUS;
		return status_line(d, st, l, is_key, false);
	}
	rec.format = RT_FMT_TEXT;
	rec.message = RT_STR_LIT("chart:");
	rec.pos = y->pos;
	yaml_reset(y, DEC_YAML_NONE);
	rc = dec_emit(d, &rec);
	return rc ? rc : DEC_NO;
}

int dec_helm_yaml_line(struct dec_ctx *d, struct dec_helm_state *st,
		       const char *raw, size_t n)
{
	struct dec_helm_yaml *y = &st->yaml;
	struct yline l = { 0 };
	bool is_key, blank = trim(raw, n).n == 0;

	if (y->mode == DEC_YAML_NONE) {
		/* the first line of each: cheap to rule out */
		if (n < 6 || (raw[0] != '-' && raw[0] != 'c'))
			return DEC_NO;
		if (!parse_line(raw, n, &l))
			return DEC_NO;
		if (l.dash && l.indent == 2 && span_is(l.key, "app_version"))
			yaml_reset(y, DEC_YAML_ITEMS);
		else if (!l.dash && l.indent == 0 && span_is(l.key, "chart") &&
			 !l.val.n)
			yaml_reset(y, DEC_YAML_CHART);
		else
			return DEC_NO;
		y->pos = d->base->pos;
		y->section = SEC_CHART;
		if (y->mode == DEC_YAML_CHART)
			return DEC_YES;     /* held until the next line */
	}
	is_key = !blank && parse_line(raw, n, &l);
	if (!is_key) {   /* a continuation: its whole text */
		struct span t = trim(raw, n);

		l.key = t;
	}
	if (y->mode == DEC_YAML_ITEMS)
		return items_line(d, st, &l, is_key);
	if (y->mode == DEC_YAML_CHART)
		return chart_confirm(d, st, &l, is_key);
	return status_line(d, st, &l, is_key, blank);
}

void dec_helm_yaml_end(struct ingest_stats *stats, struct dec_helm_yaml *y)
{
	if (y->mode == DEC_YAML_STATUS || (y->mode == DEC_YAML_ITEMS && y->any))
		dec_count_at(&y->pos, &stats->helm_status_incomplete,
			     stats->first_incomplete);
	else if (y->mode == DEC_YAML_CHART)   /* a last line `chart:` */
		stats->skipped++;
	yaml_reset(y, DEC_YAML_NONE);
}
