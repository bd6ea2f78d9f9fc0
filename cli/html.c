/*
 * html.c: incidents as one self-contained HTML page (show -o html, report):
 * inline CSS and an inline SVG timeline -- revisions as markers, one lane
 * of events per object, events coloured by tag -- then the diagnosis,
 * evidence, remedy and the timeline as a table. Nothing is fetched: a
 * Content-Security-Policy forbids it, so the page reads the same offline,
 * attached to a ticket or mailed. Every text from the database is escaped
 * twice: control characters as for a terminal (\x1b), then HTML.
 */
#include <cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "changes.h"
#include "html.h"

#define MAX_EVENTS 2000       /* drawn; the table lists the first 500 */
#define MAX_ROWS 500
#define MAX_LANES 40
#define MAX_REVS 64
#define SVG_W 960
#define LABEL_W 250
#define PLOT_X0 (LABEL_W + 10)
#define PLOT_X1 (SVG_W - 20)
#define LANE_H 24
#define TOP 46                /* revision labels above the lanes */

/* Columns of SQL_INCIDENT (store/sql.h). */
enum { I_ID, I_NS, I_REL, I_REV, I_STATUS, I_SEV, I_OPENED, I_LAST, I_CLOSED,
       I_EVENTS, I_OCC, I_TAGS, I_DIAG, I_TITLE, I_REVSTATUS, I_LATER,
       I_ATTR, I_EVIDENCE, I_REMEDY, I_PODS, I_OPENED_NS, I_LAST_NS,
       I_CLUSTER, I_NCOLS };

struct ev {
	int64_t ns, count;
	int lane;                 /* -1: a revision */
	int64_t revision;
	char *kind, *name, *reason, *message, *tags, *severity;
};

struct page {
	FILE *f;
	const char *db_hint;      /* " --db PATH"..., for the pasted query */
	bool found;
	char *col[I_NCOLS];
	int64_t rev, opened_ns;
	struct ev *ev;
	size_t nev, total;
	char *lane[MAX_LANES];
	int nlanes;
	bool lanes_full;
};

static const char *const palette[] = {
	"#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
	"#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
};

/* ---- escaping ----------------------------------------------------------- */

void html_text(FILE *f, const char *s)
{
	char *t;

	if (!s)
		return;
	if (!(t = cli_escape(s, strlen(s))))
		return;
	for (const char *p = t; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: putc(*p, f);
		}
	}
	free(t);
}

/* Text with `code` spans as <code>. */
static void html_code_text(FILE *f, const char *s, size_t n)
{
	char *t = strndup(s, n), *p, *q;
	bool code = false;

	if (!t)
		return;
	for (p = t; p; p = q) {
		if ((q = strchr(p, '`')))
			*q++ = '\0';
		if (code)
			fputs("<code>", f);
		html_text(f, p);
		if (code)
			fputs("</code>", f);
		code = !code;
	}
	free(t);
}

/* ---- loading ------------------------------------------------------------ */

static char *dup_value(const struct store_value *v)
{
	char num[32];

	if (v->type == STORE_INT) {
		snprintf(num, sizeof(num), "%" PRId64, v->i);
		return strdup(num);
	}
	return v->type == STORE_TEXT ? strdup(v->p) : NULL;
}

static int on_incident(void *ctx, int n, const char *const *names,
		       const struct store_value *v)
{
	struct page *pg = ctx;

	(void)names;
	pg->found = true;
	for (int i = 0; i < n && i < I_NCOLS; i++)
		pg->col[i] = dup_value(&v[i]);
	pg->rev = v[I_REV].i;
	pg->opened_ns = v[I_OPENED_NS].i;
	return 0;
}

static int lane_of(struct page *pg, const char *kind, const char *name)
{
	char key[600];

	snprintf(key, sizeof(key), "%s/%s", kind ? kind : "-",
		 name ? name : "-");
	for (int i = 0; i < pg->nlanes; i++)
		if (!strcmp(pg->lane[i], key))
			return i;
	if (pg->nlanes == MAX_LANES) {
		pg->lanes_full = true;
		return MAX_LANES - 1;     /* the last lane takes the rest */
	}
	pg->lane[pg->nlanes] = strdup(key);
	return pg->lane[pg->nlanes] ? pg->nlanes++ : 0;
}

static int on_timeline(void *ctx, int n, const char *const *names,
		       const struct store_value *v)
{
	struct page *pg = ctx;
	struct ev *e;

	(void)n;
	(void)names;
	pg->total++;
	if (pg->nev == MAX_EVENTS)
		return 0;
	e = &pg->ev[pg->nev++];
	memset(e, 0, sizeof(*e));
	e->ns = v[10].i;
	e->count = v[9].type == STORE_INT ? v[9].i : 1;
	e->revision = v[2].i;
	e->reason = dup_value(&v[5]);
	e->message = dup_value(&v[6]);
	e->severity = dup_value(&v[7]);
	e->tags = dup_value(&v[8]);
	if (v[1].type == STORE_TEXT && !strcmp(v[1].p, "revision")) {
		e->lane = -1;
		return 0;
	}
	e->kind = dup_value(&v[3]);
	e->name = dup_value(&v[4]);
	e->lane = lane_of(pg, e->kind, e->name);
	return 0;
}

static void page_free(struct page *pg)
{
	for (int i = 0; i < I_NCOLS; i++)
		free(pg->col[i]);
	for (size_t i = 0; i < pg->nev; i++) {
		struct ev *e = &pg->ev[i];

		free(e->kind), free(e->name), free(e->reason);
		free(e->message), free(e->tags), free(e->severity);
	}
	free(pg->ev);
	for (int i = 0; i < pg->nlanes; i++)
		free(pg->lane[i]);
}

/* ---- tags and colours --------------------------------------------------- */

struct tagset {
	char *name[32];
	int n;
};

/* The first tag of a JSON array (the colour of an event). */
static void first_tag(const char *json, char *out, size_t size)
{
	cJSON *a = json ? cJSON_Parse(json) : NULL;
	cJSON *it = cJSON_GetArrayItem(a, 0);

	snprintf(out, size, "%s", cJSON_IsString(it) ? it->valuestring : "");
	cJSON_Delete(a);
}

static int tag_index(struct tagset *ts, const char *tag)
{
	for (int i = 0; i < ts->n; i++)
		if (!strcmp(ts->name[i], tag))
			return i;
	if (ts->n == 32)
		return 31;
	ts->name[ts->n] = strdup(tag);
	return ts->name[ts->n] ? ts->n++ : 0;
}

static const char *tag_color(int i)
{
	return palette[i % (int)(sizeof(palette) / sizeof(palette[0]))];
}

/* ---- the SVG timeline --------------------------------------------------- */

struct scale {
	int64_t t0, t1;
};

static double x_of(const struct scale *sc, int64_t ns)
{
	double span = (double)(sc->t1 - sc->t0);

	if (ns <= sc->t0)
		return PLOT_X0;
	if (ns >= sc->t1)
		return PLOT_X1;
	return PLOT_X0 + (PLOT_X1 - PLOT_X0) * (double)(ns - sc->t0) / span;
}

/* Events set the span; revisions outside it sit at an edge, labelled with
 * how far away they are. */
static void make_scale(const struct page *pg, struct scale *sc)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN, pad;

	for (size_t i = 0; i < pg->nev; i++) {
		if (pg->ev[i].lane < 0)
			continue;
		if (pg->ev[i].ns < lo)
			lo = pg->ev[i].ns;
		if (pg->ev[i].ns > hi)
			hi = pg->ev[i].ns;
	}
	if (lo > hi)
		lo = hi = pg->opened_ns;
	pad = (hi - lo) / 20 + 1000000000LL;
	sc->t0 = lo - pad;
	sc->t1 = hi + pad;
}

/* Round ticks, 4 to 10 of them: 1s .. 1d apart. */
static void svg_axis(FILE *f, const struct scale *sc, int y)
{
	static const int64_t steps[] = {
		1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
		10800, 21600, 43200, 86400, 172800, 604800,
	};
	int64_t span = (sc->t1 - sc->t0) / 1000000000, step = steps[0], t;
	char iso[RT_TIME_BUFSZ];

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		step = steps[i];
		if (span / step <= 8)
			break;
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
		"y2=\"%d\"/>\n", PLOT_X0, y, PLOT_X1, y);
	t = (sc->t0 / 1000000000 / step + 1) * step;
	for (; t * 1000000000 < sc->t1; t += step) {
		double x = x_of(sc, t * 1000000000);

		rt_time_format(t * 1000000000, iso);
		fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" "
			"x2=\"%.1f\" y2=\"%d\"/><text class=\"ticklabel\" "
			"x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.*s</text>"
			"\n", x, y, x, y + 5, x, y + 18, step < 60 ? 8 : 5,
			step >= 86400 ? iso + 5 : iso + 11);
	}
}

static void svg_revision(FILE *f, const struct page *pg,
			 const struct scale *sc, const struct ev *e, int h)
{
	double x = x_of(sc, e->ns);
	char off[32] = "";
	const char *cls = e->revision == pg->rev ? "rev opening" : "rev";
	bool out = e->ns < sc->t0 || e->ns > sc->t1;

	if (out)
		cli_format_offset(e->ns - (e->ns < sc->t0 ? sc->t0 : sc->t1), off,
			   sizeof(off));
	fprintf(f, "<g class=\"%s\"><title>revision %" PRId64 " ", cls,
		e->revision);
	html_text(f, e->reason ? e->reason : "");
	if (e->message && *e->message) {
		fputs(": ", f);
		html_text(f, e->message);
	}
	fprintf(f, "</title><line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
		"<path d=\"M%.1f %d l-6 -9 h12 z\"/><text x=\"%.1f\" y=\"%d\" "
		"text-anchor=\"%s\">rev %" PRId64 " ", x, TOP - 8, x,
		TOP + h, x, TOP - 8, x, TOP - 22, x > PLOT_X1 - 90 ? "end" :
		x < PLOT_X0 + 90 ? "start" : "middle", e->revision);
	html_text(f, e->reason);
	fprintf(f, "%s%s%s</text></g>\n", out ? " (" : "", off, out ? ")" : "");
}

static void svg_event(FILE *f, const struct scale *sc, const struct ev *e,
		      struct tagset *ts)
{
	char tag[128], iso[RT_TIME_BUFSZ];
	double r = 4 + (e->count > 1 ? 2 * (double)(e->count > 20 ? 20 :
						    e->count) / 10 : 0);
	int y = TOP + e->lane * LANE_H + LANE_H / 2;

	first_tag(e->tags, tag, sizeof(tag));
	rt_time_format(e->ns, iso);
	fprintf(f, "<circle class=\"ev\" cx=\"%.1f\" cy=\"%d\" r=\"%.1f\" "
		"fill=\"%s\"><title>", x_of(sc, e->ns), y, r,
		*tag ? tag_color(tag_index(ts, tag)) : "#999");
	html_text(f, iso);
	fputs(" ", f);
	html_text(f, e->reason);
	fputs(" [", f);
	html_text(f, tag);
	fprintf(f, "] x%" PRId64 "\n", e->count);
	html_text(f, e->message);
	fputs("</title></circle>\n", f);
}

static void svg_lanes(FILE *f, const struct page *pg)
{
	for (int i = 0; i < pg->nlanes; i++) {
		int y = TOP + i * LANE_H;
		const char *label = pg->lane[i];
		size_t len = strlen(label);

		fprintf(f, "<rect class=\"lane%s\" x=\"0\" y=\"%d\" width=\"%d\" "
			"height=\"%d\"/><text class=\"lanelabel\" x=\"%d\" "
			"y=\"%d\"><title>", i % 2 ? " odd" : "", y, SVG_W,
			LANE_H, LABEL_W, y + LANE_H / 2 + 4);
		html_text(f, label);
		fputs("</title>", f);
		if (len > 38) {
			/* keep the end: pod names differ in their suffix */
			fputs("\xe2\x80\xa6", f);
			label += len - 37;
			while (((unsigned char)*label & 0xc0) == 0x80)
				label++;
		}
		html_text(f, label);
		fputs("</text>\n", f);
	}
}

static void svg_legend(FILE *f, const struct tagset *ts, int y)
{
	int x = PLOT_X0;

	for (int i = 0; i < ts->n; i++) {
		int w = 18 + 7 * (int)strlen(ts->name[i]);

		if (x + w > SVG_W) {
			x = PLOT_X0;
			y += 18;
		}
		fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"%s\"/>"
			"<text class=\"legend\" x=\"%d\" y=\"%d\">", x + 5,
			y - 4, tag_color(i), x + 14, y);
		html_text(f, ts->name[i]);
		fputs("</text>\n", f);
		x += w + 10;
	}
}

static void svg_timeline(FILE *f, const struct page *pg)
{
	struct scale sc;
	struct tagset ts = { .n = 0 };
	int h = (pg->nlanes ? pg->nlanes : 1) * LANE_H;
	int legend_rows = 1, x = PLOT_X0;

	make_scale(pg, &sc);
	/* colours in order of first appearance, before any is drawn */
	for (size_t i = 0; i < pg->nev; i++) {
		char tag[128];

		if (pg->ev[i].lane < 0)
			continue;
		first_tag(pg->ev[i].tags, tag, sizeof(tag));
		if (*tag)
			tag_index(&ts, tag);
	}
	for (int i = 0; i < ts.n; i++) {
		int w = 28 + 7 * (int)strlen(ts.name[i]);

		if (x + w > SVG_W)
			legend_rows++, x = PLOT_X0;
		x += w;
	}
	fprintf(f, "<svg class=\"timeline\" role=\"img\" viewBox=\"0 0 %d %d\" "
		"preserveAspectRatio=\"xMinYMin meet\">\n<title>Timeline"
		"</title>\n", SVG_W, TOP + h + 40 + 18 * legend_rows);
	svg_lanes(f, pg);
	svg_axis(f, &sc, TOP + h);
	for (size_t i = 0; i < pg->nev; i++)
		if (pg->ev[i].lane < 0)
			svg_revision(f, pg, &sc, &pg->ev[i], h);
	for (size_t i = 0; i < pg->nev; i++)
		if (pg->ev[i].lane >= 0)
			svg_event(f, &sc, &pg->ev[i], &ts);
	svg_legend(f, &ts, TOP + h + 40);
	fputs("</svg>\n", f);
	for (int i = 0; i < ts.n; i++)
		free(ts.name[i]);
}

/* ---- the page ----------------------------------------------------------- */

static const char *col(const struct page *pg, int i)
{
	return pg->col[i] ? pg->col[i] : "";
}

static void html_list(FILE *f, const char *json, bool code)
{
	cJSON *a = json ? cJSON_Parse(json) : NULL, *it;

	fputs("<ul>", f);
	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it)) {
			fputs("<li>", f);
			if (code)
				html_code_text(f, it->valuestring,
					       strlen(it->valuestring));
			else
				html_text(f, it->valuestring);
			fputs("</li>", f);
		}
	fputs("</ul>\n", f);
	cJSON_Delete(a);
}

static void html_words(FILE *f, const char *json, const char *cls)
{
	cJSON *a = json ? cJSON_Parse(json) : NULL, *it;

	cJSON_ArrayForEach(it, a) {
		if (cJSON_IsString(it)) {
			fprintf(f, "<span class=\"%s\">", cls);
			html_text(f, it->valuestring);
			fputs("</span> ", f);
		} else if (cJSON_IsNumber(it)) {
			fprintf(f, "<span class=\"%s\">%.0f</span> ", cls,
				it->valuedouble);
		}
	}
	cJSON_Delete(a);
}

static void html_remedy(FILE *f, const char *txt)
{
	bool ol = false;

	for (const char *p = txt; *p;) {
		size_t n = strcspn(p, "\n"), k = 0;

		while (k < n && p[k] >= '0' && p[k] <= '9')
			k++;
		if (k && p[k] == '.' && p[k + 1] == ' ') {
			fputs(ol ? "" : "<ol>", f);
			ol = true;
			fputs("<li>", f);
			html_code_text(f, p + k + 2, n - k - 2);
			fputs("</li>\n", f);
		} else {
			fputs(ol ? "</ol>" : "", f);
			ol = false;
			fputs("<p>", f);
			html_code_text(f, p, n);
			fputs("</p>\n", f);
		}
		p += n + (p[n] == '\n');
	}
	fputs(ol ? "</ol>\n" : "", f);
}

static void html_table(FILE *f, const struct page *pg)
{
	char iso[RT_TIME_BUFSZ], off[32];

	fputs("<div class=\"tablebox\"><table class=\"events\"><thead><tr>"
	      "<th>time (UTC)</th>"
	      "<th>offset</th><th>object</th><th>reason</th><th>tags</th>"
	      "<th>count</th><th>message</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < pg->nev && i < MAX_ROWS; i++) {
		const struct ev *e = &pg->ev[i];

		rt_time_format(e->ns, iso);
		cli_format_offset(e->ns - pg->opened_ns, off, sizeof(off));
		fprintf(f, "<tr%s><td>%.10s %.8s</td><td>%s</td><td>",
			e->lane < 0 ? " class=\"revrow\"" : "", iso, iso + 11,
			off);
		if (e->lane < 0) {
			fprintf(f, "revision %" PRId64 "</td><td>", e->revision);
			html_text(f, e->reason);
			fputs("</td><td></td><td></td><td>", f);
		} else {
			html_text(f, e->kind);
			fputc('/', f);
			html_text(f, e->name);
			fputs("</td><td>", f);
			html_text(f, e->reason);
			fputs("</td><td>", f);
			html_words(f, e->tags, "tag");
			fprintf(f, "</td><td>%" PRId64 "</td><td>", e->count);
		}
		html_text(f, e->message);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
	if (pg->total > MAX_ROWS) {
		fprintf(f, "<p class=\"more\">%zu more entries: revtrail query",
			pg->total - MAX_ROWS);
		html_text(f, pg->db_hint ? pg->db_hint : "");
		fprintf(f, " \"SELECT * FROM timeline WHERE incident_id = %s\""
			"</p>\n", col(pg, I_ID));
	}
}

static void html_head(FILE *f, const struct page *pg)
{
	fprintf(f, "<section class=\"incident\" id=\"incident-%s\">\n<h2>"
		"Incident %s: ", col(pg, I_ID), col(pg, I_ID));
	if (*col(pg, I_CLUSTER)) {        /* the default cluster goes unsaid */
		html_text(f, col(pg, I_CLUSTER));
		fputc(':', f);
	}
	html_text(f, col(pg, I_NS));
	fputc('/', f);
	html_text(f, col(pg, I_REL));
	if (pg->rev > 0)
		fprintf(f, ", revision %" PRId64, pg->rev);
	fputs(" <span class=\"badge ", f);
	html_text(f, col(pg, I_STATUS));
	fputs("\">", f);
	html_text(f, col(pg, I_STATUS));
	fputs("</span> <span class=\"badge ", f);
	html_text(f, col(pg, I_SEV));
	fputs("\">", f);
	html_text(f, col(pg, I_SEV));
	fputs("</span></h2>\n<dl>", f);
	fputs("<dt>Revision</dt><dd>", f);
	if (pg->rev > 0) {
		fprintf(f, "%" PRId64 " ", pg->rev);
		html_text(f, col(pg, I_REVSTATUS));
		for (size_t i = 0; i < pg->nev; i++)
			if (pg->ev[i].lane < 0 && pg->ev[i].revision == pg->rev &&
			    pg->ev[i].message && *pg->ev[i].message) {
				fputs(": ", f);
				html_text(f, pg->ev[i].message);
				break;
			}
	} else {
		fputs("unknown (no release history)", f);
	}
	fputs("</dd><dt>Opened</dt><dd>", f);
	html_text(f, col(pg, I_OPENED));
	fputs("</dd><dt>Last seen</dt><dd>", f);
	html_text(f, col(pg, I_LAST));
	if (pg->col[I_CLOSED]) {
		fputs("</dd><dt>Closed</dt><dd>", f);
		html_text(f, col(pg, I_CLOSED));
	}
	fprintf(f, "</dd><dt>Events</dt><dd>%s (%s occurrences)</dd>"
		"<dt>Tags</dt><dd>", col(pg, I_EVENTS), col(pg, I_OCC));
	html_words(f, pg->col[I_TAGS], "tag");
	if (pg->col[I_LATER] && strcmp(col(pg, I_LATER), "[]")) {
		fputs("</dd><dt>Followed by revisions</dt><dd>", f);
		html_words(f, pg->col[I_LATER], "rev");
	}
	fputs("</dd></dl>\n", f);
}

/* What the revision changed, as a table. */
static void html_changes(FILE *f, const struct changes *ch)
{
	if (!ch->from || !ch->n)
		return;
	fprintf(f, "<h3>What changed (revision %d -&gt; %d)</h3>\n<table "
		"class=\"changes\"><tr><th>object</th><th>field</th>"
		"<th>before</th><th>after</th></tr>\n", ch->from, ch->to);
	for (size_t i = 0; i < ch->n; i++) {
		const struct change *c = &ch->c[i];

		fputs("<tr><td>", f);
		html_text(f, c->kind);
		fputc('/', f);
		html_text(f, c->name);
		fputs("</td><td><code>", f);
		html_text(f, c->field);
		fputs("</code></td><td><code>", f);
		html_text(f, c->before ? c->before : "(none)");
		fputs("</code></td><td><code>", f);
		html_text(f, c->after ? c->after : "(none)");
		fputs("</code></td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void html_incident(FILE *f, const struct page *pg,
			  const struct changes *ch)
{
	html_head(f, pg);
	fputs("<h3>Timeline</h3>\n<div class=\"svgbox\">", f);
	svg_timeline(f, pg);
	fputs("</div>\n", f);
	if (pg->lanes_full)
		fprintf(f, "<p class=\"more\">Objects beyond the first %d share "
			"the last lane.</p>\n", MAX_LANES);
	fputs("<h3>Diagnosis: ", f);
	html_text(f, pg->col[I_DIAG] ? col(pg, I_DIAG) : "none");
	fputs("</h3>\n<p class=\"title\">", f);
	html_code_text(f, col(pg, I_TITLE), strlen(col(pg, I_TITLE)));
	fputs("</p>\n", f);
	if (pg->col[I_EVIDENCE] && strcmp(col(pg, I_EVIDENCE), "[]")) {
		fputs("<h3>Evidence</h3>\n", f);
		html_list(f, pg->col[I_EVIDENCE], true);
	}
	if (pg->col[I_REMEDY]) {
		fputs("<h3>Remedy</h3>\n<div class=\"remedy\">", f);
		html_remedy(f, col(pg, I_REMEDY));
		fputs("</div>\n", f);
	}
	html_changes(f, ch);
	fputs("<h3>Events</h3>\n", f);
	html_table(f, pg);
	fputs("</section>\n", f);
}

int html_incident_section(struct store *st, int64_t id, const char *db_hint,
			  FILE *f)
{
	struct page pg = { .f = f, .db_hint = db_hint };
	struct changes ch = { 0 };
	int rc;

	if (!(pg.ev = calloc(MAX_EVENTS, sizeof(*pg.ev))))
		return RT_ENOMEM;
	rc = store_incident_part(st, id, STORE_PART_INCIDENT, on_incident, &pg);
	if (!rc && !pg.found)
		rc = 1;
	if (!rc)
		rc = store_incident_part(st, id, STORE_PART_TIMELINE,
					 on_timeline, &pg);
	if (!rc)
		rc = changes_read(st, id, pg.col[I_PODS], &ch);
	if (!rc)
		html_incident(f, &pg, &ch);
	changes_release(&ch);
	page_free(&pg);
	return rc;
}

void html_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\""
	      "default-src 'none'; style-src 'unsafe-inline'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n"
	      "<title>", f);
	html_text(f, title);
	fputs("</title>\n<style>\n"
	      "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;"
	      "color:#1d2430;background:#f4f6f9;margin:0;padding:24px}\n"
	      "main{max-width:1000px;margin:auto}\n"
	      "h1{font-size:22px;margin:0 0 16px}\n"
	      "section.incident{background:#fff;border:1px solid #d8dee8;"
	      "border-radius:8px;padding:18px 20px;margin-bottom:24px}\n"
	      "h2{font-size:18px;margin:0 0 10px}h3{font-size:15px;"
	      "margin:18px 0 6px}\n"
	      "dl{display:grid;grid-template-columns:max-content auto;"
	      "gap:2px 14px;margin:0}dt{color:#5a6577}dd{margin:0}\n"
	      ".badge{font-size:12px;padding:2px 8px;border-radius:10px;"
	      "vertical-align:middle;background:#e3e7ee}\n"
	      ".badge.critical{background:#c62828;color:#fff}"
	      ".badge.error{background:#ef6c00;color:#fff}"
	      ".badge.warning{background:#f9a825}"
	      ".badge.open{background:#ffe082}.badge.closed{background:#c8e6c9}\n"
	      ".tag{display:inline-block;background:#eef1f6;border-radius:4px;"
	      "padding:0 5px;margin:1px;font-size:12px}\n"
	      "code{font:12px ui-monospace,Menlo,Consolas,monospace;"
	      "background:#f0f2f5;padding:1px 4px;border-radius:3px;"
	      "word-break:break-all}\n"
	      ".title{font-weight:600;margin:0}\n"
	      ".remedy li,.remedy p{margin:4px 0}\n"
	      ".svgbox{overflow-x:auto}\n"
	      "svg.timeline{font:11px system-ui,sans-serif;display:block;"
	      "width:100%;min-width:640px;height:auto}\n"
	      "svg .lane{fill:#fff}svg .lane.odd{fill:#f6f8fb}\n"
	      "svg .lanelabel{text-anchor:end;fill:#344055}\n"
	      "svg .axis{stroke:#8a94a6}svg .tick{stroke:#8a94a6}"
	      "svg .ticklabel{fill:#5a6577}\n"
	      "svg .rev line{stroke:#6a1b9a;stroke-dasharray:4 3}"
	      "svg .rev path{fill:#6a1b9a}svg .rev text{fill:#6a1b9a;"
	      "font-weight:600}\n"
	      "svg .rev.opening line{stroke:#c62828;stroke-dasharray:none;"
	      "stroke-width:2}svg .rev.opening path{fill:#c62828}"
	      "svg .rev.opening text{fill:#c62828}\n"
	      "svg .ev{stroke:#fff;stroke-width:1;fill-opacity:.9}\n"
	      "svg .legend{fill:#344055}\n"
	      "table.events{border-collapse:collapse;width:100%;margin-top:12px;"
	      "font-size:12px}\n"
	      "table.events th,table.events td{border-bottom:1px solid #e6e9ef;"
	      "padding:3px 6px;text-align:left;vertical-align:top}\n"
	      "table.events td:last-child{word-break:break-word}\n"
	      "table.events td:nth-child(-n+2){white-space:nowrap}\n"
	      "table.events td:nth-child(3){word-break:break-all;"
	      "min-width:12em}\n"
	      "table.events td:last-child{min-width:16em}\n"
	      ".tablebox{overflow-x:auto}\n"
	      "tr.revrow td{background:#f3e5f5}\n"
	      ".more{color:#5a6577;font-size:12px}\n"
	      "footer{color:#5a6577;font-size:12px;text-align:center}\n"
	      "</style></head><body><main>\n<h1>", f);
	html_text(f, title);
	fputs("</h1>\n", f);
}

void html_end(FILE *f)
{
	fputs("<footer>revtrail incident report</footer>\n</main></body>"
	      "</html>\n", f);
}
