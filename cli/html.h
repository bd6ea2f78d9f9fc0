/*
 * html.h (private to cli/): incidents as one self-contained HTML page, for
 * `show -o html` and `report`.
 */
#ifndef REVTRAIL_CLI_HTML_H
#define REVTRAIL_CLI_HTML_H

#include <stdio.h>

#include "cli.h"
#include "revtrail/store_read.h"

/* The page up to its first section, and its end. */
void html_begin(FILE *f, const char *title);
void html_end(FILE *f);
/* One incident as a <section>: head, diagnosis, evidence, remedy, the SVG
 * timeline and the timeline table. db_hint (cli_dbs_hint, NULL for none)
 * goes into the query a long timeline points to. Returns 0, 1 when there
 * is no such incident, or the store's error. */
int html_incident_section(struct store *st, int64_t id, const char *db_hint,
			  FILE *f);
/* s escaped for a terminal (\x1b), then for HTML. */
void html_text(FILE *f, const char *s);

#endif
