/*
 * read_printf.c: printf() and format() for readers, with the width and
 * precision bounded before SQLite's own printf sees them.
 *
 * SQLite stops a printf result at SQLITE_LIMIT_LENGTH, but it still walks
 * a %c precision one character at a time: printf('%.*c', 999999999, 'x')
 * spends 7-16 s inside one function call, where no progress handler can
 * stop it. These replacements refuse any width or precision longer than a
 * value may be (SQLITE_TOOBIG) and hand everything else to the real
 * printf, run by a private in-memory connection with the same limit.
 */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define MAX_ARGS 128

struct guard {
	sqlite3 *aux;                   /* runs the real printf */
	sqlite3_stmt *st[MAX_ARGS + 1]; /* "SELECT printf(?1..?n)" by n */
	int64_t max;                    /* SQLITE_LIMIT_LENGTH */
};

static void guard_free(void *p)
{
	struct guard *g = p;

	for (int i = 0; i <= MAX_ARGS; i++)
		sqlite3_finalize(g->st[i]);
	sqlite3_close(g->aux);
	free(g);
}

/* The next argument as an integer, as SQLite's printf takes a '*'. */
static int64_t star(sqlite3_value **argv, int argc, int *i)
{
	int64_t v = *i < argc ? sqlite3_value_int64(argv[*i]) : 0;

	(*i)++;
	return v < 0 ? (v == INT64_MIN ? INT64_MAX : -v) : v;
}

static int64_t digits(const char **p)
{
	int64_t v = 0;

	for (; **p >= '0' && **p <= '9'; (*p)++)
		if (v < INT64_MAX / 10)
			v = v * 10 + (**p - '0');
	return v;
}

/* True when every width and precision of fmt, literal or '*', is at most
 * max. Follows the conversion syntax of SQLite's printf. */
static bool sizes_fit(const char *fmt, sqlite3_value **argv, int argc,
		      int64_t max)
{
	int i = 1;

	for (const char *p = fmt; (p = strchr(p, '%')); ) {
		int64_t w, prec = 0;

		p++;
		if (*p == '%') {
			p++;
			continue;
		}
		while (*p && strchr("-+ #!0,", *p))
			p++;
		w = *p == '*' ? (p++, star(argv, argc, &i)) : digits(&p);
		if (*p == '.') {
			p++;
			prec = *p == '*' ? (p++, star(argv, argc, &i)) :
				digits(&p);
		}
		if (w > max || prec > max)
			return false;
		while (*p == 'l')
			p++;
		if (!*p)
			break;
		p++;
		i++;
	}
	return true;
}

static sqlite3_stmt *delegate(struct guard *g, int argc)
{
	char sql[16 + 5 * MAX_ARGS];
	size_t k;

	if (g->st[argc])
		return g->st[argc];
	k = (size_t)snprintf(sql, sizeof(sql), "SELECT printf(");
	for (int i = 1; i <= argc; i++)
		k += (size_t)snprintf(sql + k, sizeof(sql) - k, "%s?%d",
				      i > 1 ? "," : "", i);
	snprintf(sql + k, sizeof(sql) - k, ")");
	if (sqlite3_prepare_v3(g->aux, sql, -1, SQLITE_PREPARE_PERSISTENT,
			       &g->st[argc], NULL) != SQLITE_OK)
		return NULL;
	return g->st[argc];
}

static void guarded_printf(sqlite3_context *ctx, int argc,
			   sqlite3_value **argv)
{
	struct guard *g = sqlite3_user_data(ctx);
	const char *fmt;
	sqlite3_stmt *s;

	if (argc < 1 || !(fmt = (const char *)sqlite3_value_text(argv[0])))
		return;              /* NULL, as SQLite's printf */
	if (!sizes_fit(fmt, argv, argc, g->max)) {
		sqlite3_result_error_toobig(ctx);
		return;
	}
	if (argc > MAX_ARGS || !(s = delegate(g, argc))) {
		sqlite3_result_error(ctx, "printf: too many arguments", -1);
		return;
	}
	for (int i = 0; i < argc; i++)
		sqlite3_bind_value(s, i + 1, argv[i]);
	if (sqlite3_step(s) == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(s, 0));
	else
		sqlite3_result_error_code(ctx, sqlite3_errcode(g->aux));
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

int store_read_printf(sqlite3 *db, int max_length)
{
	static const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC |
		SQLITE_INNOCUOUS;
	struct guard *g = calloc(1, sizeof(*g));

	if (!g)
		return SQLITE_NOMEM;
	g->max = max_length;
	if (sqlite3_open_v2(":memory:", &g->aux, SQLITE_OPEN_READWRITE,
			    NULL) != SQLITE_OK) {
		guard_free(g);
		return SQLITE_NOMEM;
	}
	sqlite3_limit(g->aux, SQLITE_LIMIT_LENGTH, max_length);
	/* format() is printf's other name; the last registration owns g */
	if (sqlite3_create_function_v2(db, "format", -1, flags, g,
				       guarded_printf, NULL, NULL, NULL) ||
	    sqlite3_create_function_v2(db, "printf", -1, flags, g,
				       guarded_printf, NULL, NULL,
				       guard_free)) {
		guard_free(g);
		return SQLITE_NOMEM;
	}
	return SQLITE_OK;
}
