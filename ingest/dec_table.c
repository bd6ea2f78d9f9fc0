/*
 * dec_table.c: text tables (docs/formats.md §3.3): `helm history` and `helm
 * list`, `kubectl get events` and the Events of `kubectl describe`, and the
 * block `helm install/upgrade/status` prints (NAME:, NAMESPACE:, STATUS:,
 * REVISION:). State lives in struct dec_helm_state, one per source.
 */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helm_text.h"

/*
 * A table is recognised by its header, which fixes the column
 * order for the rows after it (Helm 4 may insert ROLLBACK; Helm 2's list
 * puts NAMESPACE last). Rows are read by TAB first, as Helm prints them;
 * without TABs (a copy from a terminal) by a best-effort token walk that
 * anchors UPDATED on the STATUS word after it, since UPDATED itself holds
 * single and double spaces ("Wed May  1 12:00:02 2024").
 */
enum {
	DEC_COL_NONE = -1,
	DEC_COL_REVISION,
	DEC_COL_UPDATED,
	DEC_COL_STATUS,
	DEC_COL_CHART,
	DEC_COL_APP_VERSION,
	DEC_COL_DESCRIPTION,
	DEC_COL_ROLLBACK,
	DEC_COL_NAME,
	DEC_COL_NAMESPACE,
	/* kubectl get events / describe */
	DEC_COL_LAST_SEEN,
	DEC_COL_FIRST_SEEN,
	DEC_COL_TYPE,
	DEC_COL_REASON,
	DEC_COL_OBJECT,
	DEC_COL_SUBOBJECT,
	DEC_COL_SOURCE,
	DEC_COL_MESSAGE,
	DEC_COL_COUNT,
	DEC_COL_KIND,
	DEC_COL_AGE,
	DEC_COL_FROM,
	DEC_COL_MAX
};

#define MAX_COLS ((int)sizeof(((struct dec_helm_state *)0)->col))

struct row {
	struct span v[DEC_COL_MAX];
};

/* Splits on runs of spaces and TABs. Returns the number of tokens. */
int dec_span_tokenize(struct span s, struct span *tok, int max)
{
	const char *p = s.p, *e = s.p + s.n;
	int n = 0;

	while (p < e && n < max) {
		const char *t;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p == e)
			break;
		t = p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		tok[n++] = (struct span){ t, (size_t)(p - t) };
	}
	return n;
}

static bool is_status_word(struct span s)
{
	static const char *const words[] = {
		"unknown", "deployed", "uninstalled", "superseded", "failed",
		"uninstalling", "pending-install", "pending-upgrade",
		"pending-rollback", "deleted", "deleting", "pending_install",
		"pending_upgrade", "pending_rollback",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (s.n == strlen(words[i]) &&
		    strncasecmp(s.p, words[i], s.n) == 0)
			return true;
	return false;
}

/* A status cell from a TAB row: one word of letters, '-' and '_'. */
static bool is_status_cell(struct span s)
{
	if (!s.n || s.n > 31)
		return false;
	for (size_t i = 0; i < s.n; i++)
		if (!isalpha((unsigned char)s.p[i]) && s.p[i] != '-' &&
		    s.p[i] != '_')
			return false;
	return true;
}

static int header_col(struct span w, struct span next, int *used)
{
	static const struct {
		const char *name;
		int col;
	} cols[] = {
		{ "REVISION", DEC_COL_REVISION }, { "UPDATED", DEC_COL_UPDATED },
		{ "STATUS", DEC_COL_STATUS }, { "CHART", DEC_COL_CHART },
		{ "DESCRIPTION", DEC_COL_DESCRIPTION },
		{ "ROLLBACK", DEC_COL_ROLLBACK }, { "NAME", DEC_COL_NAME },
		{ "NAMESPACE", DEC_COL_NAMESPACE },
	};

	*used = 1;
	if (span_is(w, "APP") && span_is(next, "VERSION")) {
		*used = 2;
		return DEC_COL_APP_VERSION;
	}
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (span_is(w, cols[i].name))
			return cols[i].col;
	return DEC_COL_NONE;
}

static bool header_has(const struct dec_helm_state *st, int col)
{
	for (int i = 0; i < st->ncols; i++)
		if (st->col[i] == col)
			return true;
	return false;
}

/* A `helm history` or `helm list` header: sets st->table and columns. */
bool dec_table_header(struct dec_helm_state *st, const char *raw,
			 struct span line)
{
	struct span tok[MAX_COLS + 2];
	struct dec_helm_state h;
	int n, used;

	if (*line.p != 'R' && *line.p != 'N')   /* REVISION or NAME */
		return false;
	memset(&h, 0, DEC_HELM_HEAD);
	if ((n = dec_span_tokenize(line, tok, MAX_COLS + 2)) < 3)
		return false;
	for (int i = 0; i < n; i += used) {
		struct span next = i + 1 < n ? tok[i + 1] : (struct span){ 0 };

		if (h.ncols == MAX_COLS)
			return false;
		for (size_t k = 0; k < tok[i].n; k++)
			if (!isupper((unsigned char)tok[i].p[k]) &&
			    tok[i].p[k] != '_')
				return false;
		h.col[h.ncols++] = (signed char)header_col(tok[i], next, &used);
	}
	if (h.ncols < 3)
		return false;
	if (h.col[0] == DEC_COL_REVISION && header_has(&h, DEC_COL_UPDATED) &&
	    header_has(&h, DEC_COL_STATUS))
		h.table = DEC_TABLE_HISTORY;
	else if (h.col[0] == DEC_COL_NAME && header_has(&h, DEC_COL_REVISION) &&
		 header_has(&h, DEC_COL_STATUS))
		h.table = DEC_TABLE_LIST;
	else
		return false;
	st->table = h.table;
	st->ncols = h.ncols;
	memcpy(st->col, h.col, sizeof(st->col));
	st->indent = (int)(line.p - raw);
	st->tabbed = memchr(line.p, '\t', line.n) != NULL;
	st->desc_at = 0;
	for (int i = 0; i < n; i++)
		if (span_is(tok[i], "DESCRIPTION"))
			st->desc_at = (int)(tok[i].p - raw);
	st->rows = st->cont = 0;
	return true;
}

/* Cells joined by TAB, as Helm prints them; the last column takes any
 * TAB left over. */
static void row_by_tab(const struct dec_helm_state *st, struct span line,
		       struct row *r)
{
	const char *p = line.p, *e = line.p + line.n;

	for (int i = 0; i < st->ncols && p <= e; i++) {
		const char *tab = i + 1 < st->ncols ?
				  memchr(p, '\t', (size_t)(e - p)) : NULL;
		const char *ce = tab ? tab : e;

		if (st->col[i] != DEC_COL_NONE)
			r->v[(int)st->col[i]] = trim(p, (size_t)(ce - p));
		if (!tab)
			break;
		p = tab + 1;
	}
}

/* Words Helm starts a description with; an APP VERSION cell left empty
 * shows up as one of these when the row is split on spaces. */
static bool description_start(struct span w)
{
	static const char *const words[] = {
		"Install", "Upgrade", "Rollback", "Initial", "Preparing",
		"superseded", "Deletion", "Uninstallation", "Dry", "failed",
		"Release", "Rolled", "Upgraded",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (span_is(w, words[i]))
			return true;
	return false;
}

static bool all_digits(struct span s)
{
	for (size_t i = 0; i < s.n; i++)
		if (!isdigit((unsigned char)s.p[i]))
			return false;
	return s.n > 0;
}

/* Space-separated row: see the comment above the column enum. */
static bool row_by_words(const struct dec_helm_state *st, struct span line,
			 struct row *r)
{
	struct span tok[MAX_TOKENS];
	int n = dec_span_tokenize(line, tok, MAX_TOKENS), t = 0;

	for (int i = 0; i < st->ncols && t < n; i++) {
		int c = st->col[i], s;
		bool last = i + 1 == st->ncols;

		if (c == DEC_COL_UPDATED) {
			for (s = t; s < n && !is_status_word(tok[s]); s++)
				;
			if (s == n || s == t)
				return false;
			r->v[c] = (struct span){ tok[t].p, (size_t)(tok[s - 1].p +
						 tok[s - 1].n - tok[t].p) };
			t = s;
		} else if (c == DEC_COL_DESCRIPTION && last) {
			r->v[c] = trim(tok[t].p, (size_t)(line.p + line.n - tok[t].p));
			t = n;
		} else if ((c == DEC_COL_APP_VERSION && !last &&
			    st->col[i + 1] == DEC_COL_DESCRIPTION &&
			    description_start(tok[t])) ||
			   (c == DEC_COL_ROLLBACK && !all_digits(tok[t]))) {
			continue;   /* an empty cell: nothing to consume */
		} else {
			if (c != DEC_COL_NONE)
				r->v[c] = tok[t];
			t++;
		}
	}
	return true;
}

struct rt_str dec_span_dup(struct dec_ctx *d, struct span s)
{
	return s.n ? rt_arena_strdup(d->arena, s.p, s.n) : RT_STR_NULL;
}

/* A time helm printed in a table or status block: history's and status's
 * ANSIC names no zone, and is the zone helm ran in (TZ, --helm-tz); list's
 * Go time.String names its own. Zoneless ones are counted for the summary,
 * which says which zone it assumed. */
static int64_t span_time(struct dec_ctx *d, struct span s)
{
	int64_t ns = 0;
	bool local;
	int rc;

	if (!s.n)
		return 0;
	if ((rc = rt_time_parse_local(s.p, s.n, &ns, &local)) != RT_OK)
		return dec_time(d, rc, &ns);
	if (local)
		dec_count(d, &d->stats->times_local, d->stats->first_local);
	return ns;
}

static bool name_chars(struct span s, size_t max)
{
	if (!s.n || s.n > max)
		return false;
	for (size_t i = 0; i < s.n; i++)
		if (!isalnum((unsigned char)s.p[i]) && s.p[i] != '-' &&
		    s.p[i] != '.' && s.p[i] != '_')
			return false;
	return true;
}

static size_t count_tabs(struct span s)
{
	size_t n = 0;

	for (const char *p = s.p; (p = memchr(p, '\t', (size_t)(s.p + s.n - p)));
	     p++)
		n++;
	return n;
}

/* "web-1.5.0": a chart as Helm prints it, NAME-SEMVER. */
static bool chart_cell(struct span c)
{
	const char *dash, *e;

	if (!c.n)
		return false;
	dash = memrchr(c.p, '-', c.n);
	e = c.p + c.n;
	while (dash && dash > c.p &&
	       (dash + 1 == e || !isdigit((unsigned char)dash[1])))
		dash = memrchr(c.p, '-', (size_t)(dash - c.p));
	return dash && dash > c.p && dash + 1 < e &&
	       memchr(dash + 1, '.', (size_t)(e - dash - 1)) != NULL;
}

/*
 * A row with no header above it (`helm list --no-headers`, a paste that
 * lost its header) has only its own shape to go by, so every cell must
 * look as Helm prints it: a known status word, a time that parses (list
 * may say "-"), a chart NAME-SEMVER, a DNS-like name and namespace, and with TABs
 * exactly one cell per column; without TABs nothing after the last
 * column. An ordinary log line never has all of these.
 */
static bool headless_ok(const struct dec_helm_state *st, struct span line,
			const struct row *r, bool tabbed)
{
	bool list = st->table == DEC_TABLE_LIST;
	struct span u = r->v[DEC_COL_UPDATED], last;
	int64_t ns;

	if (!is_status_word(r->v[DEC_COL_STATUS]) ||
	    !chart_cell(r->v[DEC_COL_CHART]) ||
	    (tabbed && count_tabs(line) != (size_t)st->ncols - 1))
		return false;
	if (!(list && span_is(u, "-")) && rt_time_parse(u.p, u.n, &ns) != 0)
		return false;
	if (!list)
		return true;
	if (!name_chars(r->v[DEC_COL_NAME], 53) ||
	    !name_chars(r->v[DEC_COL_NAMESPACE], 63))
		return false;
	last = r->v[DEC_COL_APP_VERSION].n ? r->v[DEC_COL_APP_VERSION] :
	       r->v[DEC_COL_CHART];
	return tabbed || last.p + last.n == line.p + line.n;
}

/* A table row -> one record; DEC_NO when the line is not a row. headless:
 * no header said it is one (headless_ok). */
static int table_row(struct dec_ctx *d, const struct dec_helm_state *st,
		     struct span line, bool headless)
{
	struct rt_record rec = *d->base;
	struct rt_revision *rev;
	struct row r = { 0 };
	bool tabbed = memchr(line.p, '\t', line.n) != NULL;
	bool list = st->table == DEC_TABLE_LIST;
	int revision;

	if (tabbed)
		row_by_tab(st, line, &r);
	else if (!row_by_words(st, line, &r))
		return DEC_NO;
	revision = dec_helm_parse_int(r.v[DEC_COL_REVISION].p,
				  r.v[DEC_COL_REVISION].n);
	if (revision <= 0 || (list && !r.v[DEC_COL_NAME].n) ||
	    !(tabbed ? is_status_cell : is_status_word)(r.v[DEC_COL_STATUS]))
		return DEC_NO;
	if (headless && !headless_ok(st, line, &r, tabbed))
		return DEC_NO;
	if (!(rev = dec_helm_revs_alloc(d, 1)))
		return RT_ENOMEM;
	rev->revision = revision;
	rev->updated_ns = span_time(d, r.v[DEC_COL_UPDATED]);
	rev->status = dec_helm_status_str(d, r.v[DEC_COL_STATUS].p,
				      r.v[DEC_COL_STATUS].n);
	rev->chart = dec_span_dup(d, r.v[DEC_COL_CHART]);
	rev->app_version = dec_span_dup(d, r.v[DEC_COL_APP_VERSION]);
	rev->description = dec_span_dup(d, r.v[DEC_COL_DESCRIPTION]);
	if (list) {
		rev->release = dec_span_dup(d, r.v[DEC_COL_NAME]);
		rev->ns = dec_span_dup(d, r.v[DEC_COL_NAMESPACE]);
	} else {
		dec_helm_opts_release(d, rev);
		if (!rev->release.n && st->cmd_release[0]) {
			rev->release = dec_helm_opt_str(d, st->cmd_release);
			rev->ns = dec_helm_opt_str(d, st->cmd_ns);
		}
	}
	rec.format = list ? RT_FMT_HELM_LIST : RT_FMT_HELM_HISTORY;
	return dec_helm_emit_revs(d, &rec, rev, 1);
}

/*
 * kubectl event tables (docs/formats.md §1.4): `kubectl get events` (-A adds
 * NAMESPACE, -o wide adds SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME) and
 * the Events: section of `kubectl describe`. kubectl aligns them with
 * tabwriter, so cells are cut at the header's column offsets; a copy whose
 * spaces were collapsed is read word by word when MESSAGE is last. Ages are
 * relative, so the rows carry no time of their own.
 */
static int kube_header_col(struct span w, struct span next, int *used)
{
	static const struct {
		const char *name;
		int col;
	} one[] = {
		{ "NAMESPACE", DEC_COL_NAMESPACE }, { "TYPE", DEC_COL_TYPE },
		{ "REASON", DEC_COL_REASON }, { "OBJECT", DEC_COL_OBJECT },
		{ "SUBOBJECT", DEC_COL_SUBOBJECT }, { "SOURCE", DEC_COL_SOURCE },
		{ "MESSAGE", DEC_COL_MESSAGE }, { "COUNT", DEC_COL_COUNT },
		{ "NAME", DEC_COL_NAME }, { "KIND", DEC_COL_KIND },
		{ "LASTSEEN", DEC_COL_LAST_SEEN },
		{ "FIRSTSEEN", DEC_COL_FIRST_SEEN },
		{ "Type", DEC_COL_TYPE }, { "Reason", DEC_COL_REASON },
		{ "Age", DEC_COL_AGE }, { "From", DEC_COL_FROM },
		{ "Message", DEC_COL_MESSAGE },
	};

	*used = 1;
	if (span_is(next, "SEEN") && (span_is(w, "LAST") || span_is(w, "FIRST"))) {
		*used = 2;
		return w.p[0] == 'L' ? DEC_COL_LAST_SEEN : DEC_COL_FIRST_SEEN;
	}
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
		if (span_is(w, one[i].name))
			return one[i].col;
	return DEC_COL_NONE;
}

bool dec_kube_header(struct dec_helm_state *st, const char *raw,
			struct span line)
{
	struct span tok[MAX_COLS + 4];
	struct dec_helm_state h;
	int n, used, unknown = 0;

	if (!strchr("LNFTK", *line.p))
		return false;
	memset(&h, 0, DEC_HELM_HEAD);
	n = dec_span_tokenize(line, tok, MAX_COLS + 4);
	for (int i = 0; i < n; i += used) {
		struct span next = i + 1 < n ? tok[i + 1] : (struct span){ 0 };

		if (h.ncols == MAX_COLS)
			return false;
		h.at[h.ncols] = (short)(tok[i].p - raw);
		h.col[h.ncols] = (signed char)kube_header_col(tok[i], next, &used);
		unknown += h.col[h.ncols++] == DEC_COL_NONE;
	}
	if (unknown || !header_has(&h, DEC_COL_TYPE) ||
	    !header_has(&h, DEC_COL_REASON) || !header_has(&h, DEC_COL_MESSAGE))
		return false;
	if (header_has(&h, DEC_COL_AGE) && header_has(&h, DEC_COL_FROM))
		h.table = DEC_TABLE_DESCRIBE;
	else if (header_has(&h, DEC_COL_OBJECT) || header_has(&h, DEC_COL_KIND))
		h.table = DEC_TABLE_EVENTS;
	else
		return false;
	st->table = h.table;
	st->ncols = h.ncols;
	memcpy(st->col, h.col, sizeof(st->col));
	memcpy(st->at, h.at, sizeof(st->at));
	st->indent = (int)(line.p - raw);
	st->tabbed = 0;
	st->rows = st->cont = 0;
	return true;
}

/* Cells at the header's offsets; the last runs to the end of the line. */
static void row_by_offsets(const struct dec_helm_state *st, const char *raw,
			   struct span line, struct row *r)
{
	size_t len = (size_t)(line.p + line.n - raw);

	for (int i = 0; i < st->ncols; i++) {
		size_t a = (size_t)st->at[i];
		size_t b = i + 1 < st->ncols ? (size_t)st->at[i + 1] : len;

		if (b > len)
			b = len;
		if (st->col[i] != DEC_COL_NONE && a < b)
			r->v[(int)st->col[i]] = trim(raw + a, b - a);
	}
}

/* Word by word, MESSAGE last: Age may be "2m (x3 over 5m)", From may be
 * "kubelet, node-1". */
static bool row_by_words_kube(const struct dec_helm_state *st,
			      struct span line, struct row *r)
{
	struct span tok[MAX_TOKENS];
	int n = dec_span_tokenize(line, tok, MAX_TOKENS), t = 0;

	if (st->col[st->ncols - 1] != DEC_COL_MESSAGE)
		return false;
	for (int i = 0; i < st->ncols && t < n; i++) {
		int c = st->col[i], s = t;

		if (c == DEC_COL_MESSAGE) {
			r->v[c] = trim(tok[t].p, (size_t)(line.p + line.n - tok[t].p));
			return true;
		}
		if (c == DEC_COL_SUBOBJECT || c == DEC_COL_SOURCE)
			return false;   /* may be empty: words cannot tell */
		if (c == DEC_COL_AGE && t + 1 < n && line_starts(tok[t + 1], "(x"))
			for (s = t + 1; s + 1 < n && tok[s].p[tok[s].n - 1] != ')'; s++)
				;
		if (c == DEC_COL_FROM)
			while (s + 1 < n && tok[s].p[tok[s].n - 1] == ',')
				s++;
		r->v[c] = (struct span){ tok[t].p, (size_t)(tok[s].p + tok[s].n - tok[t].p) };
		t = s + 1;
	}
	return false;
}

static bool is_event_type(struct span s)
{
	if (s.n < 2 || s.n > 16 || !isupper((unsigned char)s.p[0]))
		return false;
	for (size_t i = 1; i < s.n; i++)
		if (!islower((unsigned char)s.p[i]))
			return false;
	return true;
}

static bool kube_row_valid(const struct dec_helm_state *st,
			   const struct row *r)
{
	struct span obj = r->v[DEC_COL_OBJECT], reason = r->v[DEC_COL_REASON];

	if (!is_event_type(r->v[DEC_COL_TYPE]) || !reason.n ||
	    memchr(reason.p, ' ', reason.n))
		return false;
	return st->table != DEC_TABLE_EVENTS || header_has(st, DEC_COL_KIND) ||
	       (obj.n > 2 && memchr(obj.p, '/', obj.n) && !memchr(obj.p, ' ', obj.n));
}

/* "pod" -> "Pod", "replicaset.apps" -> "ReplicaSet". */
static struct rt_str kind_of(struct dec_ctx *d, struct span res)
{
	static const char *const kinds[] = {
		"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet",
		"Job", "CronJob", "Node", "Service", "ConfigMap", "Secret",
		"PersistentVolumeClaim", "PersistentVolume", "Ingress",
		"HorizontalPodAutoscaler", "HelmChart", "Endpoints", "Namespace",
		"ServiceAccount", "PodDisruptionBudget", "Event",
	};
	const char *dot = res.n ? memchr(res.p, '.', res.n) : NULL;
	struct rt_str k;

	if (dot)
		res.n = (size_t)(dot - res.p);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (res.n == strlen(kinds[i]) &&
		    strncasecmp(res.p, kinds[i], res.n) == 0)
			return rt_str_make(kinds[i], res.n);
	k = dec_span_dup(d, res);
	if (k.n)
		((char *)k.p)[0] = (char)toupper((unsigned char)k.p[0]);
	return k;
}

/* "spec.containers{web}" -> "web" (the same rule as dec_kube.c). */
static struct rt_str subobject_container(struct rt_str fp)
{
	const char *open = fp.n ? memchr(fp.p, '{', fp.n) : NULL;
	const char *close = open ? memchr(open, '}', fp.n - (size_t)(open - fp.p))
				 : NULL;

	if (!close || close == open + 1 || !rt_str_has_prefix(fp, "spec.") ||
	    !memmem(fp.p, (size_t)(open - fp.p), "ontainers", 9))
		return RT_STR_NULL;
	return rt_str_make(open + 1, (size_t)(close - open - 1));
}

/* "kubelet, node-1" -> component kubelet, host node-1. */
static void source_split(struct dec_ctx *d, struct rt_record *rec,
			 struct span src)
{
	const char *comma = src.n ? memchr(src.p, ',', src.n) : NULL;

	if (!comma) {
		rec->component = dec_span_dup(d, src);
		return;
	}
	rec->component = dec_span_dup(d, trim(src.p, (size_t)(comma - src.p)));
	rec->host = dec_span_dup(d, trim(comma + 1,
				     (size_t)(src.p + src.n - comma - 1)));
}

/* "2m (x3 over 5m)" -> 3; else 0. */
static int64_t age_count(struct span age)
{
	const char *x = age.n ? memmem(age.p, age.n, "(x", 2) : NULL;
	size_t n = 0;

	if (!x)
		return 0;
	x += 2;
	while (x + n < age.p + age.n && isdigit((unsigned char)x[n]))
		n++;
	return dec_helm_parse_int(x, n);
}

static int kube_row_emit(struct dec_ctx *d, const struct dec_helm_state *st,
			 const struct row *r)
{
	struct rt_record rec = *d->base;
	struct span obj = r->v[DEC_COL_OBJECT];
	const char *slash = obj.n ? memchr(obj.p, '/', obj.n) : NULL;
	bool old_style = header_has(st, DEC_COL_KIND);
	int64_t count;
	int rc;

	rec.format = RT_FMT_K8S_EVENT;
	if (r->v[DEC_COL_NAMESPACE].n)
		rec.ns = dec_span_dup(d, r->v[DEC_COL_NAMESPACE]);
	else if (st->table == DEC_TABLE_DESCRIBE && st->obj_ns[0])
		rec.ns = dec_helm_opt_str(d, st->obj_ns);
	if (slash) {
		rec.kind = kind_of(d, (struct span){ obj.p, (size_t)(slash - obj.p) });
		rec.name = dec_span_dup(d, (struct span){ slash + 1,
			(size_t)(obj.p + obj.n - slash - 1) });
	} else if (old_style) {
		rec.kind = kind_of(d, r->v[DEC_COL_KIND]);
		rec.name = dec_span_dup(d, r->v[DEC_COL_NAME]);
	} else if (st->table == DEC_TABLE_DESCRIBE && st->obj_name[0]) {
		rec.name = dec_helm_opt_str(d, st->obj_name);
		rec.kind = st->obj_pod ? RT_STR_LIT("Pod") : RT_STR_NULL;
	}
	rec.pod = rt_str_eq(rec.kind, "Pod") ? rec.name : RT_STR_NULL;
	rec.field_path = dec_span_dup(d, r->v[DEC_COL_SUBOBJECT]);
	rec.container = subobject_container(rec.field_path);
	rec.type = dec_span_dup(d, r->v[DEC_COL_TYPE]);
	rec.reason = dec_span_dup(d, r->v[DEC_COL_REASON]);
	rec.message = dec_span_dup(d, r->v[DEC_COL_MESSAGE]);
	if (rt_str_has_prefix(rec.message, "(combined from similar events): ")) {
		rec.message.p += 32;
		rec.message.n -= 32;
	}
	source_split(d, &rec, r->v[DEC_COL_SOURCE].n ? r->v[DEC_COL_SOURCE]
						      : r->v[DEC_COL_FROM]);
	count = dec_helm_parse_int(r->v[DEC_COL_COUNT].p, r->v[DEC_COL_COUNT].n);
	if (!count)
		count = age_count(r->v[DEC_COL_AGE]);
	rec.count = count > 0 ? count : 1;
	if (!old_style && r->v[DEC_COL_NAME].n && rec.ns.n) {
		/* wide NAME is the event's own name: its identity */
		size_t n = rec.ns.n + 1 + r->v[DEC_COL_NAME].n;
		char *p = rt_arena_alloc(d->arena, n + 1);

		if (p) {
			memcpy(p, rec.ns.p, rec.ns.n);
			p[rec.ns.n] = '/';
			memcpy(p + rec.ns.n + 1, r->v[DEC_COL_NAME].p,
			       r->v[DEC_COL_NAME].n);
			p[n] = '\0';
			rec.uid = rt_str_make(p, n);
		}
	}
	rec.revs = NULL;
	rec.nrevs = 0;
	if ((rc = dec_emit(d, &rec)) != 0)
		return rc;
	return DEC_YES;
}

static int kube_table_line(struct dec_ctx *d, struct dec_helm_state *st,
			   const char *raw, struct span line)
{
	struct row r = { 0 };

	if (st->table == DEC_TABLE_DESCRIBE && !st->rows &&
	    line_starts(line, "----"))
		return DEC_YES;   /* the dashes under the describe header */
	row_by_offsets(st, raw, line, &r);
	if (!kube_row_valid(st, &r)) {
		memset(&r, 0, sizeof(r));
		if (!row_by_words_kube(st, line, &r) || !kube_row_valid(st, &r))
			return DEC_NO;
	}
	return kube_row_emit(d, st, &r);
}

/* `kubectl describe` header lines at column 0 name the object whose
 * Events: section follows. Observed only: the lines stay plain text. */
void dec_describe_observe(struct dec_helm_state *st, const char *raw,
			     struct span s)
{
	if (s.p != raw)
		return;
	if (line_starts(s, "Name:") && s.n > 5) {
		keep(st->obj_name, sizeof(st->obj_name), trim(s.p + 5, s.n - 5));
		st->obj_ns[0] = '\0';
		st->obj_pod = 0;
	} else if (line_starts(s, "Namespace:") && s.n > 10) {
		keep(st->obj_ns, sizeof(st->obj_ns), trim(s.p + 10, s.n - 10));
	} else if (line_starts(s, "Node:") || line_starts(s, "Containers:")) {
		st->obj_pod = 1;
	}
}

#define MAX_CONTINUATION 16

static int col_index(const struct dec_helm_state *st, int col)
{
	for (int i = 0; i < st->ncols; i++)
		if (st->col[i] == col)
			return i;
	return -1;
}

/*
 * The rest of the previous row's multi-line description: every cell before
 * DESCRIPTION blank (TAB form), or blank up to the DESCRIPTION column (the
 * same table copied from a terminal). Strict on purpose, because the
 * framer drops blank lines, so an indented line long after a table must
 * not be swallowed as a continuation.
 */
static bool continuation(const struct dec_helm_state *st, const char *raw,
			 struct span s)
{
	int di = col_index(st, DEC_COL_DESCRIPTION);
	const char *p = raw, *e = s.p + s.n, *tab;

	if (st->table != DEC_TABLE_HISTORY || di < 0 || !st->rows ||
	    st->cont >= MAX_CONTINUATION)
		return false;
	if (memchr(raw, '\t', (size_t)(e - raw))) {
		for (int i = 0; i < di; i++) {
			if (!(tab = memchr(p, '\t', (size_t)(e - p))) ||
			    trim(p, (size_t)(tab - p)).n)
				return false;
			p = tab + 1;
		}
		return trim(p, (size_t)(e - p)).n > 0;
	}
	return !st->tabbed && s.p - raw > st->indent &&
	       s.p - raw >= st->desc_at - 1;
}

/*
 * Inside a table: a row, a continuation of the previous row's description
 * (consumed, no record), or the end of the table (DEC_NO, and the line is
 * read afresh).
 */
int dec_table_line(struct dec_ctx *d, struct dec_helm_state *st,
		      const char *raw, struct span line)
{
	int rc;

	if (continuation(st, raw, line)) {
		st->cont++;
		return DEC_YES;
	}
	if (st->table >= DEC_TABLE_EVENTS)
		rc = kube_table_line(d, st, raw, line);
	else
		rc = table_row(d, st, line, false);
	if (rc != DEC_NO) {
		st->rows++;
		st->cont = 0;
		return rc;
	}
	st->table = DEC_TABLE_NONE;
	st->cmd_release[0] = st->cmd_ns[0] = '\0';
	return DEC_NO;
}


/*
 * The block helm install/upgrade/status print (pkg/cmd/status.go):
 *   NAME: web / LAST DEPLOYED: Tue Jan  2 10:00:00 2024 (absent when never)
 *   NAMESPACE: shop / STATUS: deployed / REVISION: 2
 *   CHART: / VERSION: / APP_VERSION: (with --show-metadata)
 *   DESCRIPTION: Upgrade complete
 * The revision is emitted at REVISION, so a paste cut right after it still
 * counts; DESCRIPTION, printed after it, emits the same revision again with
 * the description and chart (the store keeps the fuller one). A block that
 * ends without a usable REVISION (cut off, `REVISION: 0`) is counted and
 * warned, and its DESCRIPTION is kept as a Helm text record of the release.
 */
/* The words of a line up to the first blank after [p, e). */
static const char *skip_word(const char *p, const char *e)
{
	while (p < e && *p != ' ' && *p != '\t')
		p++;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Before any tokenizing: a history row starts with a number and a blank;
 * a list row's third word is a number. Most lines fail within a few
 * bytes. */
static bool headless_start(struct span s)
{
	const char *p = s.p, *e = s.p + s.n, *q;

	for (q = p; q < e && isdigit((unsigned char)*q); q++)
		;
	if (q > p && q < e && (*q == ' ' || *q == '\t'))
		return true;
	p = skip_word(skip_word(p, e), e);
	for (q = p; q < e && isdigit((unsigned char)*q); q++)
		;
	return q > p && q < e && (*q == ' ' || *q == '\t');
}

/* ANSIC's first word, as history's UPDATED starts. */
static bool is_weekday(struct span w)
{
	static const char days[] = "MonTueWedThuFriSatSun";

	for (int i = 0; i < 7 && w.n == 3; i++)
		if (memcmp(w.p, days + 3 * i, 3) == 0)
			return true;
	return false;
}

/* "2024-01-02", as Go's time.String starts (list's UPDATED). */
static bool is_date(struct span w)
{
	return w.n == 10 && w.p[4] == '-' && w.p[7] == '-' &&
	       isdigit((unsigned char)w.p[0]) && isdigit((unsigned char)w.p[9]);
}

/*
 * `helm list --no-headers` rows (NAME NAMESPACE REVISION UPDATED STATUS
 * CHART APP VERSION), and `helm history` rows whose header was lost
 * (REVISION UPDATED STATUS CHART APP VERSION DESCRIPTION): read in the
 * column order Helm prints, under headless_ok's checks. The first words
 * decide cheaply which to try, since this sees every plain text line: a
 * number and a weekday (ANSIC), or a name, a namespace, a number and a
 * date as Go's time.String prints it (a list printed with --time-format
 * needs its header).
 */
int dec_headless_row(struct dec_ctx *d, const struct dec_helm_state *st,
		     struct span line)
{
	static const signed char list_cols[] = {
		DEC_COL_NAME, DEC_COL_NAMESPACE, DEC_COL_REVISION,
		DEC_COL_UPDATED, DEC_COL_STATUS, DEC_COL_CHART,
		DEC_COL_APP_VERSION,
	};
	static const signed char hist_cols[] = {
		DEC_COL_REVISION, DEC_COL_UPDATED, DEC_COL_STATUS,
		DEC_COL_CHART, DEC_COL_APP_VERSION, DEC_COL_DESCRIPTION,
	};
	struct dec_helm_state h;   /* the fields table_row reads: below */
	struct span tok[4];
	bool hist;

	if (!headless_start(line))
		return DEC_NO;
	if (dec_span_tokenize(line, tok, 4) < 4)
		return DEC_NO;
	hist = all_digits(tok[0]) && tok[0].n < 10 && is_weekday(tok[1]);
	if (!hist && !(all_digits(tok[2]) && tok[2].n < 10 &&
		       (is_date(tok[3]) || span_is(tok[3], "-"))))
		return DEC_NO;
	/* the head, and the command's release table_row reads */
	memset(&h, 0, DEC_HELM_HEAD);
	h.table = hist ? DEC_TABLE_HISTORY : DEC_TABLE_LIST;
	h.ncols = hist ? (int)sizeof(hist_cols) : (int)sizeof(list_cols);
	memcpy(h.col, hist ? hist_cols : list_cols, (size_t)h.ncols);
	memcpy(h.cmd_release, st->cmd_release, sizeof(h.cmd_release));
	memcpy(h.cmd_ns, st->cmd_ns, sizeof(h.cmd_ns));
	return table_row(d, &h, line, true);
}

static void block_reset(struct dec_helm_state *st)
{
	st->name[0] = st->ns[0] = st->status[0] = st->when[0] = '\0';
	st->chart[0] = st->chart_version[0] = st->app_version[0] = '\0';
	st->revision = 0;
	st->block_rev = st->block_counted = false;
}

/* The block ends (a NAME:, a line not of it, a blank, the stream's end).
 * A NAME: line alone is no block: some other tool's line. */
static void block_end(struct ingest_stats *stats, struct dec_helm_state *st)
{
	if (st->name[0] && !st->block_rev && !st->block_counted &&
	    (st->ns[0] || st->status[0] || st->when[0]))
		dec_count_at(&st->block_pos, &stats->helm_status_incomplete,
			     stats->first_incomplete);
	block_reset(st);
}

void dec_status_block_end(struct ingest_stats *stats,
			  struct dec_helm_state *st)
{
	block_end(stats, st);
}

void dec_helm_text_end(struct ingest_stats *stats, struct dec_helm_state *st)
{
	block_end(stats, st);
	dec_helm_yaml_end(stats, &st->yaml);
}

/* "web" and "1.5.0" -> "web-1.5.0", as helm list prints a chart. */
static struct rt_str block_chart(struct dec_ctx *d,
				 const struct dec_helm_state *st)
{
	char buf[sizeof(st->chart) + sizeof(st->chart_version) + 1];

	if (!st->chart[0])
		return RT_STR_NULL;
	snprintf(buf, sizeof(buf), "%s%s%s", st->chart,
		 st->chart_version[0] ? "-" : "", st->chart_version);
	return dec_helm_opt_str(d, buf);
}

/* One RT_FMT_HELM_STATUS record of the block's revision. */
static int block_emit(struct dec_ctx *d, struct dec_helm_state *st,
		      struct span desc)
{
	struct rt_record rec = *d->base;
	struct rt_revision *rev = dec_helm_revs_alloc(d, 1);
	bool local;

	if (!rev)
		return RT_ENOMEM;
	rev->release = dec_helm_opt_str(d, st->name);
	rev->ns = dec_helm_opt_str(d, st->ns);
	rev->revision = st->revision;
	rev->status = dec_helm_status_str(d, st->status, strlen(st->status));
	if (!st->block_rev)     /* counted once, though emitted twice */
		rev->updated_ns = span_time(d, (struct span){ st->when,
							      strlen(st->when) });
	else if (rt_time_parse_local(st->when, strlen(st->when),
				     &rev->updated_ns, &local) != RT_OK)
		rev->updated_ns = 0;    /* and not counted again */
	rev->chart = block_chart(d, st);
	rev->app_version = dec_helm_opt_str(d, st->app_version);
	rev->description = dec_span_dup(d, desc);
	rec.format = RT_FMT_HELM_STATUS;
	st->block_rev = true;
	return dec_helm_emit_revs(d, &rec, rev, 1);
}

/* DESCRIPTION of a block without a revision: kept, as the release's text. */
static int block_text(struct dec_ctx *d, struct dec_helm_state *st,
		      struct span line)
{
	struct rt_record rec = *d->base;

	rec.format = RT_FMT_HELM_TEXT;
	rec.message = dec_span_dup(d, line);
	rec.release = dec_helm_opt_str(d, st->name);
	rec.release_ns = dec_helm_opt_str(d, st->ns);
	rec.revs = NULL;
	rec.nrevs = 0;
	return dec_emit(d, &rec);
}

enum { K_NAME, K_WHEN, K_NS, K_STATUS, K_REVISION, K_CHART, K_VERSION,
       K_APP_VERSION, K_DESCRIPTION, K_MAX };

static int block_key(struct span line, struct span *v)
{
	static const char *const keys[K_MAX] = {
		"NAME:", "LAST DEPLOYED:", "NAMESPACE:", "STATUS:", "REVISION:",
		"CHART:", "VERSION:", "APP_VERSION:", "DESCRIPTION:",
	};

	if (!line.n || !strchr("NLSRCVAD", line.p[0]))   /* most lines */
		return -1;
	for (int k = 0; k < K_MAX; k++) {
		size_t kl = strlen(keys[k]);

		if (line.n > kl && memcmp(line.p, keys[k], kl) == 0) {
			*v = trim(line.p + kl, line.n - kl);
			return v->n ? k : -1;
		}
	}
	return -1;
}

static int block_revision(struct dec_ctx *d, struct dec_helm_state *st,
			  struct span v)
{
	if ((st->revision = dec_helm_parse_int(v.p, v.n)) > 0)
		return block_emit(d, st, (struct span){ 0 });
	if (!st->block_counted)
		dec_count_at(&st->block_pos, &d->stats->helm_status_incomplete,
			     d->stats->first_incomplete);
	st->block_counted = true;
	return DEC_YES;
}

static int block_description(struct dec_ctx *d, struct dec_helm_state *st,
			     struct span line, struct span v)
{
	int rc = st->block_rev ? block_emit(d, st, v) : block_text(d, st, line);

	block_end(d->stats, st);
	return rc ? rc : DEC_YES;
}

int dec_status_block(struct dec_ctx *d, struct dec_helm_state *st,
			struct span line)
{
	struct span v;
	int k = block_key(line, &v);
	int rc;

	if (k < 0 || (k > K_NAME && !st->name[0])) {
		if (st->name[0])
			block_end(d->stats, st);
		return DEC_NO;
	}
	switch (k) {
	case K_NAME:
		block_end(d->stats, st);
		keep(st->name, sizeof(st->name), v);
		st->block_pos = d->base->pos;
		return DEC_YES;
	case K_WHEN:
		keep(st->when, sizeof(st->when), v);
		return DEC_YES;
	case K_NS:
		keep(st->ns, sizeof(st->ns), v);
		return DEC_YES;
	case K_STATUS:
		keep(st->status, sizeof(st->status), v);
		return DEC_YES;
	case K_REVISION:
		rc = block_revision(d, st, v);
		return rc ? rc : DEC_YES;
	case K_CHART:
		keep(st->chart, sizeof(st->chart), v);
		return DEC_YES;
	case K_VERSION:
		keep(st->chart_version, sizeof(st->chart_version), v);
		return DEC_YES;
	case K_APP_VERSION:
		keep(st->app_version, sizeof(st->app_version), v);
		return DEC_YES;
	default:
		return block_description(d, st, line, v);
	}
}
