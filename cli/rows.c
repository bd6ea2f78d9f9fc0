/*
 * rows.c: the result printer of query, incidents and show.
 *
 * A table needs column widths before its first line: the first TABLE_BUFFER
 * rows are held to measure them, later rows stream with those widths (a
 * wider cell just pushes its line), so a huge result never sits in memory.
 * JSON and CSV stream from the first row.
 */
#include <cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
	bool no_headers;
	bool csv_raw;         /* -o csv-raw: no formula guard */
	bool color;
	FILE *tty;            /* colours as if printed here (rows_color_as) */
	int min_col;          /* rows_min_width: this column is at least */
	size_t min_width;     /* so wide; 0: no such column */
	int fit_width;        /* 0: no limit */
	size_t gutter;        /* spaces between columns */
	int nshrink;
	struct rows_shrink shrink[8];   /* give way to fit, first first */
	const char *const *json_cols;
};

struct rows *rows_new(FILE *out, int fmt)
{
	struct rows *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->f = out;
	r->fmt = fmt == CLI_OUT_CSV_RAW ? CLI_OUT_CSV : fmt;
	r->csv_raw = fmt == CLI_OUT_CSV_RAW;
	r->gutter = 3;
	return r;
}

void rows_json_columns(struct rows *r, const char *const *names)
{
	r->json_cols = names;
}

void rows_color_as(struct rows *r, FILE *f)
{
	r->tty = f;
}

void rows_min_width(struct rows *r, int col, size_t width)
{
	r->min_col = col;
	r->min_width = width;
}

void rows_no_headers(struct rows *r)
{
	r->no_headers = true;
}

void rows_fit(struct rows *r, int width, int gutter,
	      const struct rows_shrink *shrink, int n)
{
	r->fit_width = width;
	r->gutter = (size_t)gutter;
	r->nshrink = n < 8 ? n : 8;
	memcpy(r->shrink, shrink, sizeof(*shrink) * (size_t)r->nshrink);
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
	r->color = r->fmt == CLI_OUT_TABLE &&
		cli_color(r->tty ? r->tty : r->f);
	for (int i = 0; i < ncols; i++) {
		r->hdr[i] = r->fmt == CLI_OUT_TABLE ?
			cli_escape(names[i], strlen(names[i])) :
			strdup(names[i]);
		if (!r->hdr[i])
			return RT_ENOMEM;
		r->width[i] = r->no_headers ? 0 : cli_text_width(r->hdr[i]);
		if (i == r->min_col && r->width[i] < r->min_width)
			r->width[i] = r->min_width;
	}
	if (r->fmt == CLI_OUT_CSV && !r->no_headers) {
		for (int i = 0; i < ncols; i++)
			fprintf(r->f, "%s%s", i ? "," : "", r->hdr[i]);
		fputc('\n', r->f);
	}
	return 0;
}

/* A text cell a spreadsheet would run as a formula: one that starts with
 * =, +, -, @, a tab or a CR, unless it is a plain number ("-3"). */
static bool csv_formula(const char *s, size_t n)
{
	char *end;

	if (!n || !strchr("=+-@\t\r", *s))
		return false;
	if (*s != '+' && *s != '-')
		return true;
	strtod(s, &end);
	return end == s || end != s + n;
}

/* A cell that needs quotes: a separator, a quote, a line break, or a NUL
 * (carried as the byte itself, inside the quotes). */
static bool csv_quoted(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strchr(",\"\n\r", s[i]))   /* '\0' matches too */
			return true;
	return false;
}

/* guard: a formula cell gets a leading single quote (OWASP's advice),
 * which a spreadsheet shows as text and does not display. */
static void csv_cell(FILE *f, const char *s, size_t n, bool guard)
{
	bool quoted;

	if (!s)
		return;
	quoted = csv_quoted(s, n);
	if (quoted)
		putc('"', f);
	if (guard && csv_formula(s, n))
		putc('\'', f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			putc('"', f);
		putc(s[i], f);
	}
	if (quoted)
		putc('"', f);
}

/* Columns that hold JSON arrays of names (tags, pods): plain words in a
 * table. */
static bool is_list_column(const char *name)
{
	static const char *const lists[] = {
		"tags", "pods", "later_revisions", "rules", "evidence",
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		if (!strcasecmp(name, lists[i]))
			return true;
	return false;
}

/* ["a","b",3] -> "a, b, 3"; NULL when s is not an array of scalars. */
static char *plain_words(const char *s)
{
	cJSON *a = s[0] == '[' ? cJSON_Parse(s) : NULL, *it;
	size_t len = 1;
	char *out, *p;

	if (!cJSON_IsArray(a))
		goto fail;
	cJSON_ArrayForEach(it, a) {
		if (cJSON_IsString(it))
			len += strlen(it->valuestring) + 2;
		else if (cJSON_IsNumber(it))
			len += 24 + 2;
		else
			goto fail;
	}
	if (!(out = p = malloc(len)))
		goto fail;
	*p = '\0';
	cJSON_ArrayForEach(it, a) {
		if (p != out)
			p = stpcpy(p, ", ");
		if (cJSON_IsString(it))
			p = stpcpy(p, it->valuestring);
		else
			p += sprintf(p, "%.17g", it->valuedouble);
	}
	cJSON_Delete(a);
	return out;
fail:
	cJSON_Delete(a);
	return NULL;
}

/* Table cells stay on one line, control characters (a NUL too)
 * escaped. */
static char *table_text(const struct rows *r, int col, const char *s,
			size_t n)
{
	char *words, *t;

	if (!s)
		return strdup("<none>");
	if (is_list_column(r->hdr[col]) && (words = plain_words(s))) {
		t = cli_escape(words, strlen(words));
		free(words);
		return t;
	}
	return cli_escape(s, n);
}

/* The first max columns of s, ending in "…" when it had more. */
static void put_cut(FILE *f, const char *s, size_t max)
{
	const char *p = s;

	if (cli_text_width(s) <= max || max == 0) {
		fputs(s, f);
		return;
	}
	for (size_t w = 0; *p && w + 1 < max; w++)
		for (p++; ((unsigned char)*p & 0xc0) == 0x80; p++)
			;
	fwrite(s, 1, (size_t)(p - s), f);
	fputs("\xe2\x80\xa6", f);
}

static void print_line(struct rows *r, char *const *cells, bool header)
{
	for (int i = 0; i < r->ncols; i++) {
		const char *c = cells[i];
		size_t w = cli_text_width(c);
		const char *sgr = !header && r->color &&
			(!strcasecmp(r->hdr[i], "severity") ||
			 !strcasecmp(r->hdr[i], "status")) ?
			cli_color_of(c) : NULL;

		if (sgr)
			fputs(sgr, r->f);
		/* only a table fitted to a terminal is cut: a streamed cell
		 * wider than its column pushes its line */
		put_cut(r->f, c, r->fit_width ? r->width[i] : 0);
		if (sgr)
			fputs("\033[0m", r->f);
		if (w > r->width[i])
			w = r->width[i];
		if (i + 1 < r->ncols)
			for (size_t k = w; k < r->width[i] + r->gutter; k++)
				putc(' ', r->f);
	}
	putc('\n', r->f);
}

/* Narrows the shrinkable columns, in order, until the table fits. */
static void fit(struct rows *r)
{
	size_t total = 0;

	if (!r->fit_width)
		return;
	for (int i = 0; i < r->ncols; i++)
		total += r->width[i] + (i + 1 < r->ncols ? r->gutter : 0);
	for (int k = 0; k < r->nshrink && total > (size_t)r->fit_width; k++) {
		int c = r->shrink[k].col;
		size_t over = total - (size_t)r->fit_width;
		size_t min = (size_t)r->shrink[k].min;

		if (c >= r->ncols || r->width[c] <= min)
			continue;
		if (over > r->width[c] - min)
			over = r->width[c] - min;
		r->width[c] -= over;
		total -= over;
	}
}

static void flush_table(struct rows *r)
{
	if (!r->ncols)
		return;
	if (!r->streaming) {
		fit(r);
		if (!r->no_headers)
			print_line(r, r->hdr, true);
		r->streaming = true;
	}
	for (size_t i = 0; i < r->nbuf; i++) {
		print_line(r, r->buf[i], false);
		free_cells(r->buf[i], r->ncols);
	}
	r->nbuf = 0;
}

static int table_cells(struct rows *r, int n, const char *const *cells,
		       const size_t *lens)
{
	char **row = calloc((size_t)r->ncols, sizeof(*row));

	if (!row)
		return RT_ENOMEM;
	for (int i = 0; i < r->ncols; i++) {
		row[i] = i < n ? table_text(r, i, cells[i], lens[i]) :
			table_text(r, i, NULL, 0);
		if (!row[i]) {
			free_cells(row, r->ncols);
			return RT_ENOMEM;
		}
		if (!r->streaming && cli_text_width(row[i]) > r->width[i])
			r->width[i] = cli_text_width(row[i]);
	}
	if (r->streaming) {
		print_line(r, row, false);
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

/* vals: the cells' types (NULL: all text). */
static void csv_line(struct rows *r, int ncols, const char *const *cells,
		     const size_t *lens, const struct store_value *vals)
{
	for (int i = 0; i < r->ncols && i < ncols; i++) {
		bool text = !vals || vals[i].type == STORE_TEXT;

		if (i)
			putc(',', r->f);
		csv_cell(r->f, cells[i], lens[i], text && !r->csv_raw);
	}
	for (int i = ncols > 0 ? ncols : 1; i < r->ncols; i++)
		putc(',', r->f);
	putc('\n', r->f);
}

/* cells with their lengths: a NUL inside a value does not cut it. */
static int cells_out(struct rows *r, int ncols, const char *const *cells,
		     const size_t *lens, const struct store_value *vals)
{
	if (r->fmt == CLI_OUT_CSV) {
		csv_line(r, ncols, cells, lens, vals);
		return 0;
	}
	return table_cells(r, ncols, cells, lens);
}

int rows_cells(struct rows *r, int ncols, const char *const *cells)
{
	size_t lens[MAX_COLS];

	if (ncols > MAX_COLS)
		ncols = MAX_COLS;
	for (int i = 0; i < ncols; i++)
		lens[i] = cells[i] ? strlen(cells[i]) : 0;
	return cells_out(r, ncols, cells, lens, NULL);
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
		       const char **out, size_t *len)
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
		*len = v->n;
		return;
	case STORE_BLOB:
		snprintf(num, size, "<blob %zu bytes>", v->n);
		*out = num;
		break;
	default:
		*out = NULL;
	}
	*len = *out ? strlen(*out) : 0;
}

int rows_row(void *ctx, int ncols, const char *const *names,
	     const struct store_value *vals)
{
	struct rows *r = ctx;
	char nums[MAX_COLS][48];
	const char *cells[MAX_COLS];
	size_t lens[MAX_COLS];

	if (ncols > MAX_COLS)
		ncols = MAX_COLS;
	if (r->fmt == CLI_OUT_JSON) {
		fputs(r->any_json ? ",\n  " : "[\n  ", r->f);
		r->any_json = true;
		rows_json_object(r->f, ncols, names, vals, r->json_cols);
		return ferror(r->f) ? RT_EIO : 0;
	}
	for (int i = 0; i < ncols; i++)
		value_text(&vals[i], nums[i], sizeof(nums[i]), &cells[i],
			   &lens[i]);
	return cells_out(r, ncols, cells, lens, vals);
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
