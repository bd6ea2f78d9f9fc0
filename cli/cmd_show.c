/*
 * cmd_show.c: `revtrail show [--db PATH] [-o text|json|html] ID`: one
 * incident, its diagnosis with evidence and remedy, the affected pods and
 * the timeline of its events and revisions: times of day under a date line,
 * and offsets from the first event (an old opening revision would put
 * +103d19h on every row). Text is escaped and wrapped to the terminal.
 * The cluster is named (a line, a JSON key) only when it is not the
 * default one, so one-cluster output never changed. --watch goes on with
 * each new or changed timeline entry and each change of status or
 * diagnosis as the writer commits (cli/watch.c).
 */
#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "changes.h"
#include "fleet_show.h"
#include "html.h"
#include "watch.h"
#include "rows.h"
#include "revtrail/store_read.h"

#define TIMELINE_MAX 200
/* under the time and offset columns: "  14:41:12  -103d19h  " */
#define TIMELINE_INDENT "                      "


enum { OPT_COLOR = CLI_OPT_FIRST_FREE, OPT_CLUSTER };

static const struct cli_opt opts[] = {
	CLI_READ_DB_OPT,
	{ "output", 'o', "text|json|html", "html: one page with an SVG "
	  "timeline", "text" },
	{ "color", OPT_COLOR, "auto|always|never", "colour severity and "
	  "status", "auto: a terminal, without NO_COLOR" },
	{ "cluster", OPT_CLUSTER, "NAME", "the incident only if it is of "
	  "cluster NAME", NULL },
	{ "watch", 'w', NULL, "then each new timeline entry and change of "
	  "status or diagnosis as they are committed, until Ctrl-C; with -o "
	  "json one object a line", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"show", "[OPTIONS] ID",
	"  One incident: the opening revision, diagnosis, evidence, remedy,\n"
	"  affected pods and the timeline.\n",
	opts,
	"  revtrail show --db incidents.db 3\n"
	"  revtrail show --db incidents.db --watch 3\n",
};

static const char *const json_cols[] = {
	"tags", "later_revisions", "evidence", "pods", NULL,
};

/* Columns of SQL_INCIDENT (store/sql.h). */
enum { I_ID, I_NS, I_REL, I_REV, I_STATUS, I_SEV, I_OPENED, I_LAST, I_CLOSED,
       I_EVENTS, I_OCC, I_TAGS, I_DIAG, I_TITLE, I_REVSTATUS, I_LATER,
       I_ATTR, I_EVIDENCE, I_REMEDY, I_PODS, I_OPENED_NS, I_LAST_NS,
       I_CLUSTER, I_NCOLS };

struct show {
	FILE *f;
	const char *db;           /* the first --db, for pasted commands */
	bool json;
	bool found;
	const char *cluster;      /* --cluster: the incident must be of it */
	const char *db_hint;      /* " --db PATH"..., for pasted hints */
	char *col[I_NCOLS];       /* the incident row as text */
	int64_t id, rev, base_ns, opened_ns;
	int64_t rev_ns;           /* when the opening revision was updated */
	char *rev_status, *rev_desc;
	int64_t life, lives;      /* the revision's install, of how many */
	char guess[512];          /* "app, cache": namespaces guessed among */
	char guessns[8][64];      /* the same, one by one (the first 8) */
	size_t nguess;
	size_t n, total;          /* list items printed / seen */
	int width;                /* of the terminal, for wrapping */
	char day[11];             /* the timeline's current date */
	struct changes changes;   /* what the revision changed */
	struct cli_watch *w;      /* --watch, else NULL */
	uint64_t head;            /* --watch: status and diagnosis, hashed */
	bool fleet;               /* of a fleet database: no history hint */
};

static char *value_dup(const struct store_value *v)
{
	char num[32];

	switch (v->type) {
	case STORE_INT:
		snprintf(num, sizeof(num), "%" PRId64, v->i);
		return strdup(num);
	case STORE_TEXT:
		return strdup(v->p);
	default:
		return NULL;
	}
}

/* A timeline row's key to a watcher: its event, or its revision. */
static int64_t timeline_key(int n, const struct store_value *v)
{
	if (n > 11 && v[11].type == STORE_INT)
		return v[11].i;
	return -1 - (v[2].type == STORE_INT ? v[2].i : 0);
}

/* --watch -o json: {"change":CHANGE,"KIND":{row}}, one a line. */
static void json_line(struct show *s, const char *change, const char *kind,
		      int n, const char *const *names,
		      const struct store_value *v)
{
	fprintf(s->f, "{\"change\":\"%s\",\"%s\":", change, kind);
	rows_json_object(s->f, n, names, v, json_cols);
	fputs("}\n", s->f);
}

static int on_incident(void *ctx, int n, const char *const *names,
		       const struct store_value *v)
{
	struct show *s = ctx;
	const char *cl = n > I_CLUSTER && v[I_CLUSTER].type == STORE_TEXT ?
		v[I_CLUSTER].p : "";

	if (s->cluster && strcmp(cl, s->cluster))
		return 0;                 /* another cluster's: not found */
	s->found = true;
	if (s->w) {
		struct store_value hv[3] = { v[I_STATUS], v[I_DIAG],
					     v[I_TITLE] };

		s->head = cli_watch_fingerprint(3, hv);
	}
	if (s->json && s->w) {
		json_line(s, "listed", "incident", *cl ? n : I_CLUSTER, names,
			  v);
	} else if (s->json) {
		fputs("{\"incident\":", s->f);
		rows_json_object(s->f, *cl ? n : I_CLUSTER, names, v,
				 json_cols);
	}
	for (int i = 0; i < n && i < I_NCOLS; i++)
		s->col[i] = value_dup(&v[i]);
	s->rev = v[I_REV].i;
	s->opened_ns = v[I_OPENED_NS].i;
	return 0;
}

static int on_revision(void *ctx, int n, const char *const *names,
		       const struct store_value *v)
{
	struct show *s = ctx;

	(void)n;
	(void)names;
	if (v[0].type == STORE_INT && v[0].i > 0)
		s->rev_ns = v[0].i;
	s->rev_status = value_dup(&v[1]);
	s->rev_desc = value_dup(&v[2]);
	return 0;
}

static int on_life(void *ctx, int n, const char *const *names,
		   const struct store_value *v)
{
	struct show *s = ctx;

	(void)names;
	if (n >= 2 && v[0].type == STORE_INT && v[1].type == STORE_INT) {
		s->life = v[0].i;
		s->lives = v[1].i;
	}
	return 0;
}

static int on_guess(void *ctx, int n, const char *const *names,
		    const struct store_value *v)
{
	struct show *s = ctx;
	size_t len = strlen(s->guess);

	(void)names;
	if (n < 1 || v[0].type != STORE_TEXT || len + 2 >= sizeof(s->guess))
		return 0;
	snprintf(s->guess + len, sizeof(s->guess) - len, "%s%s",
		 len ? ", " : "", v[0].p);
	if (s->nguess < 8)
		snprintf(s->guessns[s->nguess++], sizeof(s->guessns[0]), "%s",
			 v[0].p);
	return 0;
}

static const char *text(const struct store_value *v)
{
	return v->type == STORE_TEXT ? v->p : NULL;
}

static int on_object(void *ctx, int n, const char *const *names,
		     const struct store_value *v)
{
	struct show *s = ctx;
	char a[32], b[32];

	if (s->json) {
		fputs(s->n++ ? ",\n  " : "\n  ", s->f);
		rows_json_object(s->f, n, names, v, json_cols);
		return 0;
	}
	if (!text(&v[0]) || strcmp(v[0].p, "Pod") != 0)
		return 0;
	cli_format_offset(v[5].i - s->base_ns, a, sizeof(a));
	cli_format_offset(v[6].i - s->base_ns, b, sizeof(b));
	fputs("  ", s->f);
	cli_put_text(s->f, text(&v[1]) ? v[1].p : "");
	fprintf(s->f, "  (%s .. %s, %" PRId64 " event%s)\n", a, b, v[4].i,
		v[4].i == 1 ? "" : "s");
	s->n++;
	return 0;
}

/* A JSON array of strings as "a, b, c" (escaped); "-" when empty. */
static void put_words(FILE *f, const char *json, const char *sep)
{
	cJSON *a = json ? cJSON_Parse(json) : NULL, *it;
	bool first = true;

	cJSON_ArrayForEach(it, a) {
		if (cJSON_IsString(it)) {
			fputs(first ? "" : sep, f);
			cli_put_text(f, it->valuestring);
			first = false;
		} else if (cJSON_IsNumber(it)) {
			fprintf(f, "%s%.0f", first ? "" : sep, it->valuedouble);
			first = false;
		}
	}
	if (first)
		fputc('-', f);
	cJSON_Delete(a);
}

/* The date line when the day changes, then "  14:41:12  -103d19h  " into
 * prefix: every timeline row starts with its time of day and offset. */
static void row_prefix(struct show *s, int64_t ns, char *prefix, size_t size)
{
	char iso[RT_TIME_BUFSZ], when[32];

	rt_time_format(ns, iso);
	if (strncmp(iso, s->day, 10)) {
		memcpy(s->day, iso, 10);
		fprintf(s->f, "  %.10s\n", iso);
	}
	cli_format_offset(ns - s->base_ns, when, sizeof(when));
	snprintf(prefix, size, "  %.8s %9s  ", iso + 11, when);
}

static void timeline_event(struct show *s, const struct store_value *v,
			   const char *prefix)
{
	char line[2048], tags[512] = "";
	size_t len = 0;
	cJSON *a = text(&v[8]) ? cJSON_Parse(v[8].p) : NULL, *it;

	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it) && len < sizeof(tags) - 1)
			len += (size_t)snprintf(tags + len, sizeof(tags) - len,
						"%s%s", len ? " " : "",
						it->valuestring);
	cJSON_Delete(a);
	len = (size_t)snprintf(line, sizeof(line), "%s/%s%s%s  %s",
			       text(&v[3]) ? v[3].p : "-",
			       text(&v[4]) ? v[4].p : "-",
			       text(&v[5]) ? "  " : "",
			       text(&v[5]) ? v[5].p : "", *tags ? tags : "-");
	if (v[9].type == STORE_INT && v[9].i > 1 && len < sizeof(line))
		snprintf(line + len, sizeof(line) - len, " x%" PRId64, v[9].i);
	cli_wrap(s->f, line, strlen(line), prefix, TIMELINE_INDENT, s->width);
	if (!text(&v[6]))
		return;
	/* the message's first line, bounded, under the event's line */
	len = strcspn(v[6].p, "\n");
	snprintf(line, sizeof(line), "%.*s%s", (int)(len < 900 ? len : 900),
		 v[6].p, len > 900 || v[6].p[len] ? " ..." : "");
	cli_wrap(s->f, line, strlen(line), TIMELINE_INDENT "  ",
		 TIMELINE_INDENT "  ", s->width);
}

static void put_timeline_row(struct show *s, const struct store_value *v)
{
	char prefix[64], line[2048];
	const char *entry = text(&v[1]) ? v[1].p : "";

	row_prefix(s, v[10].i, prefix, sizeof(prefix));
	if (strcmp(entry, "revision")) {
		timeline_event(s, v, prefix);
		return;
	}
	snprintf(line, sizeof(line), "%srevision %" PRId64 " %s%s%s",
		 v[2].i == s->rev ? "opening " : "", v[2].i,
		 text(&v[5]) ? v[5].p : "?",
		 text(&v[6]) && *v[6].p ? ": " : "",
		 text(&v[6]) ? v[6].p : "");
	cli_wrap(s->f, line, strlen(line), prefix, TIMELINE_INDENT, s->width);
}

static int on_timeline(void *ctx, int n, const char *const *names,
		       const struct store_value *v)
{
	struct show *s = ctx;

	s->total++;
	if (s->w)        /* the entries listed are not told again */
		cli_watch_key(s->w, timeline_key(n, v),
			      cli_watch_fingerprint(n, v));
	if (s->w && s->json) {
		json_line(s, "listed", "timeline", n, names, v);
		return 0;
	}
	if (s->json) {
		fputs(s->n++ ? ",\n  " : "\n  ", s->f);
		rows_json_object(s->f, n, names, v, json_cols);
		return 0;
	}
	if (s->n >= TIMELINE_MAX)
		return 0;
	s->n++;
	put_timeline_row(s, v);
	return 0;
}

static const char *col(const struct show *s, int i)
{
	return s->col[i] ? s->col[i] : "";
}

/* Each line of a stored list or paragraph, wrapped; numbered steps
 * ("3. ...") continue under their text. */
static void put_paragraphs(struct show *s, const char *txt, const char *lead)
{
	char first[16], rest[32];

	for (const char *p = txt; *p;) {
		size_t n = strcspn(p, "\n"), k = 0;

		while (k < n && k < 3 && p[k] >= '0' && p[k] <= '9')
			k++;
		k = k && p[k] == '.' && p[k + 1] == ' ' ? k + 2 : 0;
		snprintf(first, sizeof(first), "%s", lead);
		snprintf(rest, sizeof(rest), "%s%*s", lead, (int)k, "");
		cli_wrap(s->f, p, n, first, rest, s->width);
		p += n + (p[n] == '\n');
	}
}

static void put_evidence(struct show *s)
{
	cJSON *a = cJSON_Parse(col(s, I_EVIDENCE)), *it;

	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it))
			cli_wrap(s->f, it->valuestring,
				 strlen(it->valuestring), "  - ", "    ",
				 s->width);
	cJSON_Delete(a);
}

/* No revision: the input that would give one, as commands to paste. */
static void print_history_hint(struct show *s)
{
	char cmd[2][CLI_HINT_MAX];

	cli_history_commands(s->db, col(s, I_NS), col(s, I_REL), cmd);
	fputs("History:    none for this release; either command gives "
	      "revtrail its revisions:\n", s->f);
	for (int i = 0; i < 2; i++) {
		fputs("  ", s->f);
		cli_put_text(s->f, cmd[i]);
		fputc('\n', s->f);
	}
}

static void json_history_hint(struct show *s)
{
	char cmd[2][CLI_HINT_MAX];
	cJSON *a;
	char *txt;

	if (s->rev > 0 || s->fleet)
		return;
	cli_history_commands(s->db, col(s, I_NS), col(s, I_REL), cmd);
	if (!(a = cJSON_CreateArray()))
		return;
	for (int i = 0; i < 2; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(cmd[i]));
	if ((txt = cJSON_PrintUnformatted(a)))
		fprintf(s->f, ",\n\"history_commands\":%s", txt);
	free(txt);
	cJSON_Delete(a);
}

static void put_status(struct show *s)
{
	fputs("Status:     ", s->f);
	cli_put_colored(s->f, col(s, I_STATUS));
	fputs(", severity ", s->f);
	cli_put_colored(s->f, col(s, I_SEV));
	fprintf(s->f, ", %s events (%s occurrences)\n", col(s, I_EVENTS),
		col(s, I_OCC));
}

static void put_diagnosis(struct show *s)
{
	fputs("Diagnosis:  ", s->f);
	cli_put_text(s->f, s->col[I_DIAG] ? col(s, I_DIAG) : "none");
	fputc('\n', s->f);
	cli_wrap(s->f, col(s, I_TITLE), strlen(col(s, I_TITLE)),
		 "            ", "            ", s->width);
}

/* "attribution_guess": the namespaces, when the release was guessed. */
static void json_guess(struct show *s)
{
	cJSON *a;
	char *txt;

	if (!s->nguess || !(a = cJSON_CreateArray()))
		return;
	for (size_t i = 0; i < s->nguess; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(s->guessns[i]));
	if ((txt = cJSON_PrintUnformatted(a)))
		fprintf(s->f, ",\n\"attribution_guess\":%s", txt);
	free(txt);
	cJSON_Delete(a);
}

static void print_head(struct show *s)
{
	FILE *f = s->f;
	char rel[32], head[2048];

	if (s->rev > 0)
		snprintf(head, sizeof(head), "Incident %s: %s/%s, revision %"
			 PRId64 " (%s%s%s)", col(s, I_ID), col(s, I_NS),
			 col(s, I_REL), s->rev, s->rev_status ? s->rev_status :
			 "?", s->rev_desc && *s->rev_desc ? ": " : "",
			 s->rev_desc ? s->rev_desc : "");
	else
		snprintf(head, sizeof(head), "Incident %s: %s/%s, revision "
			 "unknown (no release history)", col(s, I_ID),
			 col(s, I_NS), col(s, I_REL));
	cli_wrap(f, head, strlen(head), "", "    ", s->width);
	if (s->rev <= 0 && !s->fleet)
		print_history_hint(s);
	if (s->guess[0]) {
		char g[1024];

		snprintf(g, sizeof(g), "Attribution: a guess: no record of the "
			 "job names the namespace its release lives in, and "
			 "release %s is known in %s; the first by name was "
			 "taken", col(s, I_REL), s->guess);
		cli_wrap(f, g, strlen(g), "", "             ", s->width);
	}
	if (s->rev > 0 && s->lives > 1)
		fprintf(f, "Install:    %" PRId64 " of %" PRId64 " (the release "
			"was uninstalled and installed again; each install "
			"numbers its revisions from 1)\n", s->life, s->lives);
	if (s->col[I_CLUSTER] && *s->col[I_CLUSTER]) {
		fputs("Cluster:    ", f);
		cli_put_text(f, s->col[I_CLUSTER]);
		fputc('\n', f);
	}
	put_status(s);
	fprintf(f, "Opened:     %s", col(s, I_OPENED));
	if (s->rev > 0 && s->rev_ns) {
		cli_format_offset(s->opened_ns - s->rev_ns, rel, sizeof(rel));
		fprintf(f, " (%s %s revision %" PRId64 ")", rel + 1,
			rel[0] == '-' ? "before" : "after", s->rev);
	}
	fprintf(f, "\nLast seen:  %s\n", col(s, I_LAST));
	if (s->col[I_CLOSED])
		fprintf(f, "Closed:     %s\n", col(s, I_CLOSED));
	fputs("Tags:       ", f);
	put_words(f, s->col[I_TAGS], ", ");
	fputc('\n', f);
	if (s->col[I_LATER] && strcmp(col(s, I_LATER), "[]")) {
		fputs("Followed by revisions: ", f);
		put_words(f, s->col[I_LATER], ", ");
		fputc('\n', f);
	}
	if (!strcmp(col(s, I_ATTR), "workload"))
		fputs("Release:    inferred from the workload name\n", f);
	else if (!strcmp(col(s, I_ATTR), "manifest"))
		fputs("Release:    its objects are listed in the release's "
		      "manifest\n", f);
	else if (!strcmp(col(s, I_ATTR), "owner"))
		fputs("Release:    its pods' owner references name a workload "
		      "of the release\n", f);
	fputc('\n', f);
	put_diagnosis(s);
	if (s->col[I_EVIDENCE] && strcmp(col(s, I_EVIDENCE), "[]")) {
		fputs("Evidence:\n", f);
		put_evidence(s);
	}
	if (s->col[I_REMEDY]) {
		fputs("Remedy:\n", f);
		put_paragraphs(s, col(s, I_REMEDY), "  ");
	}
}

static void show_release(struct show *s)
{
	for (int i = 0; i < I_NCOLS; i++)
		free(s->col[i]);
	free(s->rev_status);
	free(s->rev_desc);
	changes_release(&s->changes);
}

/* The incident's row, through fn (which sets s->found): 0, 1 when there
 * is none, or an error. */
static int incident_row(struct store *st, struct show *s, store_row_fn fn)
{
	int rc = store_incident_part(st, s->id, STORE_PART_INCIDENT, fn, s);

	return rc ? rc : s->found ? 0 : 1;
}

static int run(struct store *st, struct show *s)
{
	char when[RT_TIME_BUFSZ];
	int rc;

	if ((rc = incident_row(st, s, on_incident)))
		return rc;
	s->base_ns = s->opened_ns;
	if ((rc = store_incident_part(st, s->id, STORE_PART_REVISION,
				      on_revision, s)) ||
	    (rc = store_incident_part(st, s->id, STORE_PART_LIFE, on_life, s)) ||
	    (rc = store_incident_part(st, s->id, STORE_PART_GUESS, on_guess,
				      s)))
		return rc;
	if ((rc = changes_read(st, s->id, s->col[I_PODS], &s->changes)))
		return rc;
	/* A fleet incident's revisions are in its instances' databases. */
	if ((rc = fleet_show_count(st, s->id)) < 0)
		return rc;
	s->fleet = rc > 0;
	if (s->json) {
		json_history_hint(s);
		json_guess(s);
		if (s->lives > 1)
			fprintf(s->f, ",\n\"install\":{\"life\":%" PRId64
				",\"lives\":%" PRId64 "}", s->life, s->lives);
		changes_json(s->f, &s->changes);
		if ((rc = fleet_show(s->f, st, s->id, NULL, true)) < 0)
			return rc;
		fputs(",\n\"objects\":[", s->f);
		s->n = 0;
		if ((rc = store_incident_part(st, s->id, STORE_PART_OBJECTS,
					      on_object, s)))
			return rc;
		fputs("],\n\"timeline\":[", s->f);
		s->n = 0;
		rc = store_incident_part(st, s->id, STORE_PART_TIMELINE,
					 on_timeline, s);
		fputs("]}\n", s->f);
		return rc;
	}
	print_head(s);
	changes_print(s->f, &s->changes);
	/* A fleet database's incident: its parts, and no timeline. */
	if ((rc = fleet_show(s->f, st, s->id, s->col[I_PODS], false)))
		return rc < 0 ? rc : 0;
	fputs("\nAffected pods (first .. last seen, from the first event):\n",
	      s->f);
	s->n = 0;
	if ((rc = store_incident_part(st, s->id, STORE_PART_OBJECTS,
				      on_object, s)))
		return rc;
	if (!s->n)
		fputs("  (none)\n", s->f);
	rt_time_format(s->base_ns, when);
	fprintf(s->f, "\nTimeline (UTC; offsets from the first event, %s):\n",
		when);
	s->n = 0;
	rc = store_incident_part(st, s->id, s->w ? STORE_PART_TIMELINE_KEYED :
				 STORE_PART_TIMELINE, on_timeline, s);
	if (!rc && s->total > s->n)
		fprintf(s->f, "  ... %zu more (revtrail query%s \"SELECT * "
			"FROM timeline WHERE incident_id = %s\")\n",
			s->total - s->n, s->db_hint ? s->db_hint : "",
			col(s, I_ID));
	return rc;
}

/* --watch -o json: the incident, then its timeline, a line each. */
static int run_json_lines(struct store *st, struct show *s)
{
	int rc;

	if ((rc = incident_row(st, s, on_incident)))
		return rc;
	return store_incident_part(st, s->id, STORE_PART_TIMELINE_KEYED,
				   on_timeline, s);
}

/* After a commit: the incident's status and diagnosis when they changed
 * (its counts with them), or nothing. */
static int on_watch_incident(void *ctx, int n, const char *const *names,
			     const struct store_value *v)
{
	struct show *s = ctx;
	const char *cl = n > I_CLUSTER && v[I_CLUSTER].type == STORE_TEXT ?
		v[I_CLUSTER].p : "";
	struct store_value hv[3] = { v[I_STATUS], v[I_DIAG], v[I_TITLE] };
	uint64_t head = cli_watch_fingerprint(3, hv);

	if (s->cluster && strcmp(cl, s->cluster))
		return 0;
	s->found = true;
	if (head == s->head)
		return 0;
	s->head = head;
	for (int i = 0; i < n && i < I_NCOLS; i++) {
		free(s->col[i]);
		s->col[i] = value_dup(&v[i]);
	}
	if (s->json) {
		json_line(s, "changed", "incident", *cl ? n : I_CLUSTER, names,
			  v);
		return 0;
	}
	put_status(s);
	if (s->col[I_CLOSED])
		fprintf(s->f, "Closed:     %s\n", col(s, I_CLOSED));
	put_diagnosis(s);
	return 0;
}

static int on_watch_timeline(void *ctx, int n, const char *const *names,
			     const struct store_value *v)
{
	struct show *s = ctx;
	enum cli_change k = cli_watch_key(s->w, timeline_key(n, v),
					  cli_watch_fingerprint(n, v));

	if (k == CLI_SAME)
		return 0;
	if (s->json)
		json_line(s, k == CLI_OPENED ? "added" : "changed", "timeline",
			  n, names, v);
	else
		put_timeline_row(s, v);
	return 0;
}

/* One round after a commit: 0, 1 when the incident is gone, or an error. */
static int watch_round(struct store *st, struct show *s)
{
	int rc;

	s->found = false;
	if ((rc = incident_row(st, s, on_watch_incident)))
		return rc;
	return store_incident_part(st, s->id, STORE_PART_TIMELINE_KEYED,
				   on_watch_timeline, s);
}

/* Databases read as one are merged when opened: after a commit to any of
 * them, they are opened anew, which merges what it committed. */
static int reopen(struct store **st, struct cli_dbs *dbs, struct cli_watch *w)
{
	store_close(*st);
	*st = NULL;
	if (cli_open_readonly("show", dbs, st))
		return RT_EIO;             /* said */
	if (store_data_version(*st, &w->version)) {
		fprintf(stderr, "revtrail show: %s\n", store_errmsg(*st));
		return RT_EIO;
	}
	return 0;
}

/* The incident, then a round after each commit until a signal: 0, 1 when
 * there is no such incident (nothing written), or RT_EIO after saying
 * why. */
static int show_watch(struct show *s, struct store **st, struct cli_dbs *dbs)
{
	struct cli_watch w;
	int rc;

	if (cli_watch_init(&w, *st, "show"))
		return RT_EIO;
	w.what = "timeline entries";
	s->w = &w;
	s->f = w.buf;
	rc = s->json ? run_json_lines(*st, s) : run(*st, s);
	while (!rc) {
		if (cli_watch_flush(&w)) {
			rc = RT_EIO;    /* stdout closed: no message */
			break;
		}
		if ((rc = cli_watch_wait(&w, *st)) != 1)
			break;
		if (dbs->opened > 1 && (rc = reopen(st, dbs, &w)))
			break;
		if ((rc = watch_round(*st, s)) == 1) {
			fprintf(stderr, "revtrail show: incident %" PRId64
				" is gone (pruned, or merged anew)\n", s->id);
			rc = RT_EIO;
		}
	}
	if (rc < 0 && rc != RT_EIO)
		fprintf(stderr, "revtrail show: %s\n", store_errmsg(*st));
	cli_watch_release(&w);
	s->w = NULL;
	s->f = stdout;
	return rc < 0 ? RT_EIO : rc;
}

/* Whether the incident is there (of s->cluster): 0, 1 when not, or an
 * error. Writes nothing. */
static int run_found(struct store *st, struct show *s)
{
	bool json = s->json;
	int rc;

	s->json = false;
	rc = incident_row(st, s, on_incident);
	s->json = json;
	return rc;
}

/* One incident as a page; nothing is written before it is found. */
static int show_html(struct store *st, int64_t id, const char *db_hint)
{
	char *buf = NULL, title[64];
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int rc;

	if (!mem)
		return RT_ENOMEM;
	rc = html_incident_section(st, id, db_hint, mem);
	fclose(mem);
	if (!rc) {
		snprintf(title, sizeof(title), "revtrail incident %" PRId64, id);
		html_begin(stdout, title);
		fwrite(buf, 1, len, stdout);
		html_end(stdout);
	}
	free(buf);
	return rc;
}

/* show --watch's end: the watch prints its own errors, but for the
 * incident not found. */
static int show_watched(struct show *s, struct store **st,
			struct cli_dbs *dbs, const char *id, char *hint)
{
	int rc = show_watch(s, st, dbs);

	if (rc == 1 && s->cluster)
		fprintf(stderr, "revtrail show: no incident %s in cluster "
			"'%s'\n", id, s->cluster);
	else if (rc == 1)
		cli_no_incident("show", dbs, id);
	show_release(s);
	free(hint);
	store_close(*st);
	return rc ? CLI_FAIL : CLI_OK;
}

int cmd_show(int argc, char **argv)
{
	struct show s = { .f = stdout, .width = cli_width(stdout) };
	struct cli_dbs dbs = { .n = 0 };
	struct store *st;
	struct cli_spool sp;
	char *end, *hint;
	int opt, rc, fmt;
	bool html = false, watching = false;

	optind = 1;
	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		switch (opt) {
		case 'd':
			if (cli_dbs_add("show", &dbs, optarg))
				return CLI_USAGE;
			break;
		case 'o':
			html = !strcmp(optarg, "html");
			fmt = cli_output_from_name(optarg);
			if (!html && fmt != CLI_OUT_TEXT && fmt != CLI_OUT_JSON)
				return cli_usage_error("show", "-o wants text, "
						       "json or html, got '%s'",
						       optarg);
			s.json = fmt == CLI_OUT_JSON;
			break;
		case OPT_COLOR:
			if (cli_color_opt("show", optarg))
				return CLI_USAGE;
			break;
		case OPT_CLUSTER:
			if (cli_cluster_filter("show", optarg))
				return CLI_USAGE;
			s.cluster = optarg;
			break;
		case 'w':
			watching = true;
			break;
		case 'h':
			cli_help(stdout, &cmd);
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("show", "expected one incident ID");
	s.id = strtoll(argv[optind], &end, 10);
	if (*end || end == argv[optind] || s.id <= 0)
		return cli_usage_error("show", "bad incident ID '%s'",
				       argv[optind]);
	if (watching && html)
		return cli_usage_error("show", "--watch prints text or json, "
				       "not html");
	s.db = dbs.n ? dbs.arg[0] : cli_db_path(NULL);
	if ((rc = cli_open_readonly("show", &dbs, &st)))
		return rc;
	s.db_hint = hint = cli_dbs_hint(&dbs);
	if (watching)
		return show_watched(&s, &st, &dbs, argv[optind], hint);
	cli_spool_begin(&sp);   /* no snapshot waits on a stalled reader */
	if (html && s.cluster)       /* the filter first: nothing else */
		rc = run_found(st, &s);
	if (!rc)
		rc = html ? show_html(st, s.id, s.db_hint) : run(st, &s);
	if (rc == 1 && s.cluster)
		fprintf(stderr, "revtrail show: no incident %s in cluster "
			"'%s'\n", argv[optind], s.cluster);
	else if (rc == 1)
		cli_no_incident("show", &dbs, argv[optind]);
	else if (rc)
		fprintf(stderr, "revtrail show: %s\n", store_errmsg(st));
	show_release(&s);
	free(hint);
	store_close(st);
	if (cli_spool_end(&sp))
		return CLI_FAIL;
	return rc ? CLI_FAIL : CLI_OK;
}
