/* Names for the shell and text for the terminal (core/rt_text.c), and
 * decimal numbers (core/rt_core.c). */
#include <stdio.h>
#include <string.h>

#include "revtrail/rt.h"
#include "tap.h"

static void quote(const char *in, const char *want)
{
	char out[256];
	size_t n = rt_shell_quote(in, strlen(in), out);

	out[n] = '\0';
	is_str(out, want, "shell word for '%s'", in);
	ok(rt_shell_quote(in, strlen(in), NULL) == n, "measure = write");
}

static void esc(const char *in, size_t len, const char *want)
{
	char out[256];
	size_t n = rt_escape_terminal(in, len, out);

	out[n] = '\0';
	is_str(out, want, "terminal text for '%s'", want);
	ok(rt_escape_terminal(in, len, NULL) == n, "measure = write");
}

/* rt_u64_dec against printf at every digit count's edges. */
static void u64_dec(void)
{
	char got[RT_U64_DIGITS + 1], want[32];
	uint64_t p = 1;
	int bad = 0;

	for (int d = 0; d < 20; d++, p *= 10)
		for (uint64_t v = p - 1; v <= p + 1; v++) {
			size_t n = rt_u64_dec(got, v);

			got[n] = '\0';
			snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
			bad += strcmp(got, want) != 0;
		}
	ok(bad == 0, "rt_u64_dec agrees with printf at 10^k-1..10^k+1");
	got[rt_u64_dec(got, UINT64_MAX)] = '\0';
	is_str(got, "18446744073709551615", "rt_u64_dec of UINT64_MAX");
	got[rt_u64_dec(got, 0)] = '\0';
	is_str(got, "0", "rt_u64_dec of 0");
}

int main(void)
{
	u64_dec();
	quote("payments-api-7d9c8f4b6-4kx2m", "payments-api-7d9c8f4b6-4kx2m");
	quote("prod", "prod");
	quote("", "''");
	quote("x'; DROP TABLE incidents; --", "'x'\\''; DROP TABLE incidents; --'");
	quote("$(reboot)", "'$(reboot)'");
	quote("a b", "'a b'");
	quote("`id`", "'`id`'");
	quote("a\nb", "$'a\\nb'");
	quote("x'\x1b]0;t\x07\r\\", "$'x\\'\\x1b]0;t\\x07\\r\\\\'");
	quote("tab\there", "$'tab\\there'");
	esc("plain text", 10, "plain text");
	esc("\x1b]0;owned\x07", 10, "\\x1b]0;owned\\x07");
	esc("line\nforged\r", 12, "line\\nforged\\r");
	esc("tab\there", 8, "tab\\there");
	esc("caf\xc3\xa9 \xe2\x9c\x93", 9, "caf\xc3\xa9 \xe2\x9c\x93");
	esc("\xc2\x9b" "31m", 5, "\\u009b31m");
	esc("\x9b" "31m", 4, "\\x9b31m");
	esc("\xff\xfe", 2, "\\xff\\xfe");
	esc("\xed\xa0\x80", 3, "\\xed\\xa0\\x80");
	esc("a\0b", 3, "a\\x00b");
	esc("del\x7f", 4, "del\\x7f");
	esc("a\xe2\x80\xae" "b", 5, "a\\u202eb");
	esc("\xe2\x80\xaa\xe2\x80\xad\xe2\x81\xa6\xe2\x81\xa9", 12,
	    "\\u202a\\u202d\\u2066\\u2069");
	esc("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 8, "\\u200e\\u200f\\u061c");
	esc("\xe2\x80\xaf\xe2\x81\xa5", 6, "\xe2\x80\xaf\xe2\x81\xa5");
	return done_testing();
}
