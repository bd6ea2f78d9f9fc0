/*
 * term.c: what text output needs to be read at 3am: control characters
 * from the cluster escaped (a pod name must not set the terminal's title or
 * forge a line), the terminal's width, colour only on a terminal and never
 * with NO_COLOR, and paragraphs wrapped without breaking a `command`.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

static int color_mode = -1;      /* -1 auto, 0 never, 1 always */

int cli_color_opt(const char *cmd, const char *arg)
{
	if (!strcmp(arg, "auto"))
		color_mode = -1;
	else if (!strcmp(arg, "always"))
		color_mode = 1;
	else if (!strcmp(arg, "never"))
		color_mode = 0;
	else
		return cli_usage_error(cmd, "--color wants auto, always or "
				       "never, got '%s'", arg);
	return 0;
}

bool cli_color(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (color_mode >= 0)
		return color_mode == 1;
	if (no && *no)
		return false;
	if (term && !strcmp(term, "dumb"))
		return false;
	return isatty(fileno(f));
}

const char *cli_color_of(const char *word)
{
	static const struct { const char *word, *sgr; } map[] = {
		{ "critical", "\033[1;31m" }, { "error", "\033[31m" },
		{ "warning", "\033[33m" }, { "info", "\033[36m" },
		{ "open", "\033[1;33m" }, { "closed", "\033[32m" },
	};

	for (size_t i = 0; word && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(word, map[i].word))
			return map[i].sgr;
	return NULL;
}

void cli_put_colored(FILE *f, const char *word)
{
	const char *sgr = cli_color(f) ? cli_color_of(word) : NULL;

	if (sgr)
		fprintf(f, "%s%s\033[0m", sgr, word);
	else
		cli_put_text(f, word);
}

int cli_width(FILE *f)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");
	long v;

	if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col >= 20)
		return ws.ws_col;
	if (cols && (v = strtol(cols, NULL, 10)) >= 20 && v <= 1000)
		return (int)v;
	return 80;
}

char *cli_escape(const char *s, size_t n)
{
	char *out = malloc(rt_escape_terminal(s, n, NULL) + 1);

	if (out)
		out[rt_escape_terminal(s, n, out)] = '\0';
	return out;
}

void cli_put_textn(FILE *f, const char *s, size_t n)
{
	char buf[6 * 256];

	/* in pieces, so no allocation; a cut UTF-8 sequence would read as
	 * invalid, so pieces end before a lead or continuation byte */
	while (n) {
		size_t k = n < 256 ? n : 256;

		while (k < n && k > 1 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		fwrite(buf, 1, rt_escape_terminal(s, k, buf), f);
		s += k, n -= k;
	}
}

void cli_put_text(FILE *f, const char *s)
{
	if (s)
		cli_put_textn(f, s, strlen(s));
}

size_t cli_text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* The next unit of a paragraph: a word, or a whole `command` with its
 * spaces (a command split over two lines runs as two when pasted). */
static size_t unit_len(const char *p)
{
	const char *q = p;
	bool code = false;

	for (; *q && (code || *q != ' '); q++)
		if (*q == '`')
			code = !code;
	return (size_t)(q - p);
}

void cli_wrap(FILE *f, const char *s, size_t len, const char *first,
	      const char *rest, int width)
{
	char *esc = cli_escape(s, len), *p;
	size_t col = cli_text_width(first), indent = cli_text_width(rest);
	size_t gap = 0;             /* the spaces before this unit */
	bool empty = true;          /* nothing on this line after the prefix */

	if (!esc)
		return;
	fputs(first, f);
	for (p = esc; *p == ' '; p++)
		;
	while (*p) {
		size_t n = unit_len(p), w;
		char save = p[n];

		p[n] = '\0';
		w = cli_text_width(p);
		p[n] = save;
		if (!empty && col + gap + w > (size_t)width) {
			fprintf(f, "\n%s", rest);
			col = indent;
			empty = true;
		}
		/* a run of spaces stays as written within a line (columns
		 * like "Pod/x  Reason  tags"), and vanishes at a wrap */
		for (; !empty && gap; gap--, col++)
			putc(' ', f);
		fwrite(p, 1, n, f);
		col += w;
		empty = false;
		for (p += n, gap = 0; *p == ' '; p++)
			gap++;
	}
	putc('\n', f);
	free(esc);
}
