/*
 * rt_text.c: text made safe for where it goes. Names from the cluster
 * (pods, namespaces, messages) are attacker-controlled: a terminal must not
 * see their control sequences, a shell must not see their metacharacters.
 */
#include <stdio.h>

#include "revtrail/rt.h"

/* Bytes a shell never treats specially, and Kubernetes names are made of. */
static bool shell_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
		c == '/' || c == ':' || c == '=' || c == '@' || c == '%' ||
		c == '+' || c == ',';
}

static bool has_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

/* One byte inside $'...'. */
static size_t ansi_c(char c, char esc[8])
{
	unsigned char u = (unsigned char)c;

	if (c == '\'' || c == '\\')
		return (size_t)snprintf(esc, 8, "\\%c", c);
	if (c == '\n')
		return (size_t)snprintf(esc, 8, "\\n");
	if (c == '\t')
		return (size_t)snprintf(esc, 8, "\\t");
	if (c == '\r')
		return (size_t)snprintf(esc, 8, "\\r");
	if (u < 0x20 || u == 0x7f)
		return (size_t)snprintf(esc, 8, "\\x%02x", u);
	esc[0] = c;
	return 1;
}

/* $'...' (bash, zsh, ksh, POSIX.1-2024 sh): every control character as
 * an escape, so the word is one line of printable text. */
static size_t quote_ansi_c(const char *s, size_t n, char *out)
{
	size_t len = 2;
	char esc[8];

	if (out)
		memcpy(out, "$'", 2);
	for (size_t i = 0; i < n; i++) {
		size_t e = ansi_c(s[i], esc);

		if (out)
			memcpy(out + len, esc, e);
		len += e;
	}
	if (out)
		out[len] = '\'';
	return len + 1;
}

size_t rt_shell_quote(const char *s, size_t n, char *out)
{
	size_t len = 0;
	bool plain = n > 0;

	for (size_t i = 0; i < n && plain; i++)
		plain = shell_safe((unsigned char)s[i]);
	if (plain) {
		if (out)
			memcpy(out, s, n);
		return n;
	}
#define PUT(str, k) do { if (out) memcpy(out + len, (str), (k)); \
		len += (k); } while (0)
	/* a newline or ESC in plain quotes would break a remedy's line in
	 * two (a forged step) or reach the terminal raw */
	if (has_control(s, n))
		return quote_ansi_c(s, n, out);
	/* 'it'\''s': close the quote, an escaped quote, reopen */
	PUT("'", 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'')
			PUT("'\\''", 4);
		else
			PUT(s + i, 1);
	}
	PUT("'", 1);
#undef PUT
	return len;
}

size_t rt_utf8_len(const unsigned char *s, size_t n)
{
	size_t k;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return k;
}

static unsigned code_point(const unsigned char *s, size_t k)
{
	unsigned cp = s[0] & (k == 2 ? 0x1f : k == 3 ? 0x0f : 0x07);

	for (size_t i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* The invisible controls of the bidirectional algorithm: U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069 ("Trojan Source"). */
static bool is_bidi(const unsigned char *s, size_t k)
{
	unsigned cp = code_point(s, k);

	return cp == 0x061c || cp == 0x200e || cp == 0x200f ||
		(cp >= 0x202a && cp <= 0x202e) ||
		(cp >= 0x2066 && cp <= 0x2069);
}

size_t rt_escape_terminal(const char *s, size_t n, char *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = 0;

	for (size_t i = 0; i < n;) {
		size_t k = rt_utf8_len(u + i, n - i);
		char esc[8];
		size_t e = 0;

		if (k == 1 && u[i] >= 0x20 && u[i] != 0x7f) {
			if (out)
				out[len] = s[i];
			len++, i++;
			continue;
		}
		/* C1 controls (U+0080..U+009F) start sequences on many
		 * terminals, like ESC does, and bidi controls reorder what
		 * follow them: escaped as well */
		if (k > 1 && !(k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) &&
		    !is_bidi(u + i, k)) {
			if (out)
				memcpy(out + len, s + i, k);
			len += k, i += k;
			continue;
		}
		if (k > 1)      /* a C1 or bidi control */
			e = (size_t)snprintf(esc, sizeof(esc), "\\u%04x",
					     code_point(u + i, k));
		else if (u[i] == '\n')
			memcpy(esc, "\\n", 2), e = 2;
		else if (u[i] == '\r')
			memcpy(esc, "\\r", 2), e = 2;
		else if (u[i] == '\t')
			memcpy(esc, "\\t", 2), e = 2;
		else
			e = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", u[i]);
		if (out)
			memcpy(out + len, esc, e);
		len += e;
		i += k ? k : 1;
	}
	return len;
}
