/*
 * changes.h: what the incident's revision changed against the one before,
 * from the manifest summaries stored per revision (ingest/helm_summary.c):
 * the fields of the workloads the incident hit, and the config objects
 * those fields name. Used by show (text, JSON) and the HTML report.
 */
#ifndef REVTRAIL_CLI_CHANGES_H
#define REVTRAIL_CLI_CHANGES_H

#include <stdio.h>

#include "revtrail/store_read.h"

#define CHANGES_MAX 40

struct change {
	char *kind, *name, *field, *before, *after;  /* NULL: absent */
};

struct changes {
	int from, to;              /* revisions; 0 when nothing to compare */
	struct change c[CHANGES_MAX];
	size_t n, more;            /* listed, and left off past the bound */
};

/* Reads and compares; pods_json is the incident's pods (a JSON array),
 * whose workloads say which objects matter. Returns 0 (ch->from = 0
 * when there is nothing to compare) or an error of store_incident_part. */
int changes_read(struct store *st, int64_t id, const char *pods_json,
		 struct changes *ch);
void changes_release(struct changes *ch);
/* "What changed (revision 3 -> 4):" and a line a change, escaped. */
void changes_print(FILE *f, const struct changes *ch);
/* ",\n\"changes\":[{kind,name,field,before,after}...]" */
void changes_json(FILE *f, const struct changes *ch);

#endif
