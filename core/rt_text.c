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
	/* 'it'\''s': close the quote, an escaped quote, reopen */
#define PUT(str, k) do { if (out) memcpy(out + len, (str), (k)); \
		len += (k); } while (0)
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

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
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

size_t rt_escape_terminal(const char *s, size_t n, char *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = 0;

	for (size_t i = 0; i < n;) {
		size_t k = utf8_len(u + i, n - i);
		char esc[8];
		size_t e = 0;

		if (k == 1 && u[i] >= 0x20 && u[i] != 0x7f) {
			if (out)
				out[len] = s[i];
			len++, i++;
			continue;
		}
		/* C1 controls (U+0080..U+009F) start sequences on many
		 * terminals, like ESC does: escaped as well */
		if (k > 1 && !(k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			if (out)
				memcpy(out + len, s + i, k);
			len += k, i += k;
			continue;
		}
		if (k == 2)     /* a C1 control */
			e = (size_t)snprintf(esc, sizeof(esc), "\\u%04x",
					     u[i + 1]);
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
