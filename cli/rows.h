/*
 * rows.h (private to cli/): prints result rows as a kubectl-like table,
 * one JSON array of objects, or CSV. Used by query, incidents and show.
 */
#ifndef REVTRAIL_CLI_ROWS_H
#define REVTRAIL_CLI_ROWS_H

#include <stdio.h>

#include "cli.h"
#include "revtrail/store_read.h"

struct rows;

/* fmt is CLI_OUT_TABLE, CLI_OUT_JSON or CLI_OUT_CSV. NULL on OOM. */
struct rows *rows_new(FILE *out, int fmt);
/* JSON only: columns with these names hold JSON text and are embedded as
 * JSON values, not strings (NULL-terminated list, kept by pointer). */
void rows_json_columns(struct rows *r, const char *const *names);
/* Table: colours as cli_color(f) says, not as the output file would have
 * them (a watcher writes through a temporary file). Before rows_header. */
void rows_color_as(struct rows *r, FILE *f);
/* Table: column col at least width wide, for the cells that stream after
 * the widths are set (a watcher's). Before rows_header. */
void rows_min_width(struct rows *r, int col, size_t width);
/* Table and CSV: no header line. Before rows_header. */
void rows_no_headers(struct rows *r);
/* Table: gutter spaces between columns (default 3); fit in width columns
 * by narrowing shrink[0..n-1], in that order, each down to its min; cut
 * cells end in "…". */
struct rows_shrink { int col, min; };
void rows_fit(struct rows *r, int width, int gutter,
	      const struct rows_shrink *shrink, int n);
/* store_query/store_incidents callbacks (ctx is the struct rows). */
int rows_header(void *ctx, int ncols, const char *const *names);
int rows_row(void *ctx, int ncols, const char *const *names,
	     const struct store_value *vals);
/* Plain string cells (NULL = none), after a rows_header. */
int rows_cells(struct rows *r, int ncols, const char *const *cells);
/* One row as a JSON object; json_cols as in rows_json_columns. */
void rows_json_object(FILE *f, int n, const char *const *names,
		      const struct store_value *vals,
		      const char *const *json_cols);
/* Prints what is buffered and closes the JSON array. */
void rows_finish(struct rows *r);
void rows_free(struct rows *r);

/* dbs.c: the --db of the read commands, repeatable; each a path or a
 * glob revtrail expands (so a quoted pattern works), read together. */
struct cli_dbs {
	const char *arg[STORE_READ_MAX_DBS];
	int n;
	size_t opened;      /* files cli_open_read opened, globs expanded */
};
/* Adds one --db argument; prints the error and returns CLI_USAGE past
 * STORE_READ_MAX_DBS of them. */
int cli_dbs_add(const char *cmd, struct cli_dbs *d, const char *arg);

/* s quoted for a POSIX shell (as is when only safe characters, else in
 * single quotes) into out, cut to size; returns the quoted length, so
 * (NULL, 0) measures it. */
size_t cli_shell_quote(const char *s, char *out, size_t size);
/* " --db 'PATH'" for every --db given, quoted, so a command printed as a
 * hint reads the same databases when pasted; "" when none was given.
 * malloc'd, NULL when out of memory. */
char *cli_dbs_hint(const struct cli_dbs *d);
/* "no incident ID" with, when several databases were read as one, how
 * merged ids are made and the command that lists them. */
void cli_no_incident(const char *cmd, const struct cli_dbs *d,
		     const char *id);

/* Opens the databases (none given: cli_db_path) read-only for a read
 * command, merged when there are several; prints the error and returns
 * CLI_FAIL when one does not exist, a glob matches nothing or a file is
 * not a revtrail database, CLI_USAGE for too many files.
 * cli_open_readonly reads under the default limits. */
int cli_open_readonly(const char *cmd, struct cli_dbs *d,
		      struct store **st);
int cli_open_read(const char *cmd, struct cli_dbs *d,
		  const struct store_read_opts *o, struct store **st);

#endif
