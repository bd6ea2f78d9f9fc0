/*
 * fleet_show.c: `show` of an incident of a fleet database. The incidents
 * topic carries each instance's incident (its fields, evidence, pods and
 * remedy) and none of its events, so a fleet incident has no timeline
 * and no per-pod times: show prints the parts it was merged from, which
 * instance holds each and that instance's incident id, so the timeline
 * is one `show --db INSTANCE.db ID` away.
 */
#include <cJSON.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fleet_show.h"
#include "rows.h"
#include "revtrail/store_fleet.h"

#define MAX_SHOWN 64            /* parts kept for the text page */

struct parts {
	FILE *f;
	bool json;
	int n;
	char line[MAX_SHOWN][512];
};

static const char *text_of(const struct store_value *v)
{
	return v->type == STORE_TEXT ? v->p : "";
}

static int on_part(void *ctx, int n, const char *const *names,
		   const struct store_value *v)
{
	struct parts *p = ctx;

	if (p->json) {
		fputs(p->n ? ",\n" : ",\n\"fleet_parts\":[", p->f);
		rows_json_object(p->f, n, names, v, NULL);
	} else if (p->n < MAX_SHOWN) {
		snprintf(p->line[p->n], sizeof(p->line[p->n]), "  instance %s"
			 " incident %s: %s, %s .. %s, %" PRId64 " events",
			 text_of(&v[0]), text_of(&v[1]), text_of(&v[2]),
			 text_of(&v[3]), text_of(&v[4]), v[5].i);
	}
	p->n++;
	return 0;
}

static void print_pods(FILE *f, const char *pods_json)
{
	cJSON *pods = cJSON_Parse(pods_json ? pods_json : "[]");
	const cJSON *e;
	int n = 0;

	fputs("\nAffected pods (as the instances listed them; a fleet "
	      "database has no per-pod times):\n", f);
	cJSON_ArrayForEach(e, pods) {
		if (!cJSON_IsString(e))
			continue;
		fputs("  ", f);
		cli_put_text(f, e->valuestring);
		fputc('\n', f);
		n++;
	}
	if (!n)
		fputs("  (none)\n", f);
	cJSON_Delete(pods);
}

static void print_text(struct parts *p, const char *pods_json)
{
	fprintf(p->f, "\nHeld by %d instance%s (incidents topic parts, "
		"merged):\n", p->n, p->n == 1 ? "" : "s");
	for (int i = 0; i < p->n && i < MAX_SHOWN; i++) {
		cli_put_text(p->f, p->line[i]);
		fputc('\n', p->f);
	}
	if (p->n > MAX_SHOWN)
		fprintf(p->f, "  ... %d more (revtrail query \"SELECT * FROM "
			"fleet_parts\")\n", p->n - MAX_SHOWN);
	print_pods(p->f, pods_json);
	fputs("\nTimeline: none: there is no timeline in a fleet database "
	      "(the incidents\n  topic carries incidents, not their events); "
	      "revtrail show --db INSTANCE.db ID\n  on an instance's own "
	      "database has it, with the incident id above.\n", p->f);
}

int fleet_show(FILE *f, struct store *st, int64_t id, const char *pods_json,
	       bool json)
{
	struct parts *p = calloc(1, sizeof(*p));
	int rc, n;

	if (!p)
		return RT_ENOMEM;
	p->f = f, p->json = json;
	rc = store_fleet_parts(st, id, on_part, p);
	if (json && p->n)
		fputs("]", f);
	else if (!rc && p->n)
		print_text(p, pods_json);
	n = p->n;
	free(p);
	return rc ? rc : n;
}

static int count_part(void *ctx, int n, const char *const *names,
		      const struct store_value *v)
{
	(void)n, (void)names, (void)v;
	(*(int *)ctx)++;
	return 0;
}

int fleet_show_count(struct store *st, int64_t id)
{
	int n = 0, rc = store_fleet_parts(st, id, count_part, &n);

	return rc ? rc : n;
}
