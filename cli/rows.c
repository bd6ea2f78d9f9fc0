/*
 * rows.c: the result printer of query, incidents and show.
 *
 * A table needs column widths before its first line: the first TABLE_BUFFER
 * rows are held to measure them, later rows stream with those widths (a
 * wider cell just pushes its line), so a huge result never sits in memory.
 * JSON and CSV stream from the first row.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

#define TABLE_BUFFER 1000
#define MAX_COLS 256

struct rows {
	FILE *f;
	int fmt;
	int ncols;
	char *hdr[MAX_COLS];
	size_t width[MAX_COLS];
	char ***buf;          /* buffered table rows */
	size_t nbuf;
	bool streaming;       /* widths fixed, header printed */
	bool any_json;        /* a JSON row was printed */
	bool json_open;
	const char *const *json_cols;
};

struct rows *rows_new(FILE *out, int fmt)
{
	struct rows *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->f = out;
	r->fmt = fmt;
	return r;
}

void rows_json_columns(struct rows *r, const char *const *names)
{
	r->json_cols = names;
}

static void free_cells(char **cells, int n)
{
	for (int i = 0; cells && i < n; i++)
		free(cells[i]);
	free(cells);
}

static void flush_table(struct rows *r);

int rows_header(void *ctx, int ncols, const char *const *names)
{
	struct rows *r = ctx;

	if (r->fmt == CLI_OUT_TABLE && r->ncols)
		flush_table(r);   /* a new statement: a new table */
	for (int i = 0; i < r->ncols; i++)
		free(r->hdr[i]);
	if (ncols > MAX_COLS)
		ncols = MAX_COLS;
	r->ncols = ncols;
	r->streaming = false;
	for (int i = 0; i < ncols; i++) {
		r->hdr[i] = strdup(names[i]);
		if (!r->hdr[i])
			return RT_ENOMEM;
		if (r->fmt == CLI_OUT_TABLE)
			for (char *p = r->hdr[i]; *p; p++)
				*p = (*p >= 'a' && *p <= 'z') ? *p - 32 :
					*p == '_' ? ' ' : *p;
		r->width[i] = strlen(r->hdr[i]);
	}
	if (r->fmt == CLI_OUT_CSV) {
		for (int i = 0; i < ncols; i++)
			fprintf(r->f, "%s%s", i ? "," : "", r->hdr[i]);
		fputc('\n', r->f);
	}
	return 0;
}

static void csv_cell(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	putc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', f);
		putc(*s, f);
	}
	putc('"', f);
}

/* Table cells stay on one line. */
static char *table_text(const char *s)
{
	char *t = strdup(s ? s : "<none>");

	for (char *p = t; p && *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return t;
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t width_of(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void print_line(struct rows *r, char *const *cells)
{
	for (int i = 0; i < r->ncols; i++) {
		const char *c = cells[i];
		size_t w = width_of(c);

		fputs(c, r->f);
		if (i + 1 < r->ncols)
			for (size_t k = w; k < r->width[i] + 3; k++)
				putc(' ', r->f);
	}
	putc('\n', r->f);
}

static void flush_table(struct rows *r)
{
	if (!r->ncols)
		return;
	if (!r->streaming) {
		print_line(r, r->hdr);
		r->streaming = true;
	}
	for (size_t i = 0; i < r->nbuf; i++) {
		print_line(r, r->buf[i]);
		free_cells(r->buf[i], r->ncols);
	}
	r->nbuf = 0;
}

static int table_cells(struct rows *r, int n, const char *const *cells)
{
	char **row = calloc((size_t)r->ncols, sizeof(*row));

	if (!row)
		return RT_ENOMEM;
	for (int i = 0; i < r->ncols; i++) {
		row[i] = table_text(i < n ? cells[i] : NULL);
		if (!row[i]) {
			free_cells(row, r->ncols);
			return RT_ENOMEM;
		}
		if (!r->streaming && width_of(row[i]) > r->width[i])
			r->width[i] = width_of(row[i]);
	}
	if (r->streaming) {
		print_line(r, row);
		free_cells(row, r->ncols);
		return 0;
	}
	if (!r->buf) {
		r->buf = calloc(TABLE_BUFFER, sizeof(*r->buf));
		if (!r->buf) {
			free_cells(row, r->ncols);
			return RT_ENOMEM;
		}
	}
	r->buf[r->nbuf++] = row;
	if (r->nbuf == TABLE_BUFFER)
		flush_table(r);
	return 0;
}

int rows_cells(struct rows *r, int ncols, const char *const *cells)
{
	if (r->fmt == CLI_OUT_CSV) {
		for (int i = 0; i < r->ncols; i++) {
			if (i)
				putc(',', r->f);
			csv_cell(r->f, i < ncols ? cells[i] : NULL);
		}
		putc('\n', r->f);
		return 0;
	}
	return table_cells(r, ncols, cells);
}

static bool is_json_name(const char *const *cols, const char *name)
{
	for (const char *const *p = cols; p && *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

/* The shortest text that reads back as d (0.1, not 0.10000000000000001). */
static const char *real_text(double d, char *buf, size_t size)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return buf;
}

static void json_value(FILE *f, const char *const *cols, const char *name,
		       const struct store_value *v)
{
	char num[40];

	switch (v->type) {
	case STORE_INT:
		fprintf(f, "%" PRId64, v->i);
		break;
	case STORE_REAL:
		if (v->d != v->d || v->d > 1e308 || v->d < -1e308)
			fputs("null", f);
		else
			fputs(real_text(v->d, num, sizeof(num)), f);
		break;
	case STORE_TEXT:
		if (is_json_name(cols, name) && v->n && (v->p[0] == '[' ||
						     v->p[0] == '{'))
			fwrite(v->p, 1, v->n, f);
		else
			cli_json_str(f, v->p, v->n);
		break;
	case STORE_BLOB:
		putc('"', f);
		for (size_t i = 0; i < v->n; i++)
			fprintf(f, "%02x", (unsigned char)v->p[i]);
		putc('"', f);
		break;
	default:
		fputs("null", f);
	}
}

void rows_json_object(FILE *f, int n, const char *const *names,
		      const struct store_value *vals, const char *const *json_cols)
{
	putc('{', f);
	for (int i = 0; i < n; i++) {
		if (i)
			putc(',', f);
		cli_json_str(f, names[i], strlen(names[i]));
		putc(':', f);
		json_value(f, json_cols, names[i], &vals[i]);
	}
	putc('}', f);
}

static void value_text(const struct store_value *v, char *num, size_t size,
		       const char **out)
{
	switch (v->type) {
	case STORE_INT:
		snprintf(num, size, "%" PRId64, v->i);
		*out = num;
		break;
	case STORE_REAL:
		real_text(v->d, num, size);
		*out = num;
		break;
	case STORE_TEXT:
		*out = v->p;
		break;
	case STORE_BLOB:
		snprintf(num, size, "<blob %zu bytes>", v->n);
		*out = num;
		break;
	default:
		*out = NULL;
	}
}

int rows_row(void *ctx, int ncols, const char *const *names,
	     const struct store_value *vals)
{
	struct rows *r = ctx;
	char nums[MAX_COLS][48];
	const char *cells[MAX_COLS];

	if (ncols > MAX_COLS)
		ncols = MAX_COLS;
	if (r->fmt == CLI_OUT_JSON) {
		fputs(r->any_json ? ",\n  " : "[\n  ", r->f);
		r->any_json = true;
		rows_json_object(r->f, ncols, names, vals, r->json_cols);
		return ferror(r->f) ? RT_EIO : 0;
	}
	for (int i = 0; i < ncols; i++)
		value_text(&vals[i], nums[i], sizeof(nums[i]), &cells[i]);
	return rows_cells(r, ncols, cells);
}

void rows_finish(struct rows *r)
{
	if (r->fmt == CLI_OUT_JSON)
		fputs(r->any_json ? "\n]\n" : "[]\n", r->f);
	else if (r->fmt == CLI_OUT_TABLE)
		flush_table(r);
}

void rows_free(struct rows *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nbuf; i++)
		free_cells(r->buf[i], r->ncols);
	free(r->buf);
	for (int i = 0; i < r->ncols; i++)
		free(r->hdr[i]);
	free(r);
}
