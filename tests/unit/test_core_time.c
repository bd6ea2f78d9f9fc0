/* Times in every form docs/formats.md lists, and the arena that holds
 * records. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "revtrail/rt.h"
#include "tap.h"

static void check(const char *in, const char *want)
{
	int64_t ns = 0;
	char out[RT_TIME_BUFSZ] = "";
	int rc = rt_time_parse(in, strlen(in), &ns);

	if (rc == RT_OK)
		rt_time_format(ns, out);
	if (!want) {
		ok(rc == RT_EPARSE || rc == RT_ERANGE, "rejects '%s'", in);
		return;
	}
	is_str(out, want, "parses '%s'", in);
}

/* A date the int64 span cannot hold is RT_ERANGE, so the decoder can
 * count it; Go's zero time and a bad date are RT_EPARSE: unknown, not
 * counted. rt_time_from_civil says the same of the same date. */
static void check_range(const char *in, bool out_of_range)
{
	int want = out_of_range ? RT_ERANGE : RT_EPARSE;
	int64_t ns = 0;
	bool local;

	is_int(rt_time_parse(in, strlen(in), &ns), want, "'%s' is %s", in,
	       out_of_range ? "out of range" : "unknown");
	is_int(rt_time_parse_local(in, strlen(in), &ns, &local), want,
	       "'%s' local too", in);
}

static void civil_range(void)
{
	int64_t ns = 0;

	is_int(rt_time_from_civil(1969, 12, 31, 23, 59, 59, 0, 0, &ns),
	       RT_ERANGE, "from_civil: 1969 is out of range");
	is_int(rt_time_from_civil(1, 1, 1, 0, 0, 0, 0, 0, &ns), RT_EPARSE,
	       "from_civil: Go's zero time is unknown");
	ok(strcmp(rt_strerror(RT_ERANGE), rt_strerror(RT_EPARSE)) != 0,
	   "RT_ERANGE has its own message");
}

/* The epoch is a time: read as 1 ns, since 0 means unknown, and shown as
 * itself; the nanosecond after it is no earlier. */
static void epoch_zero(void)
{
	static const char *const forms[] = {
		"1970-01-01T00:00:00Z", "1970-01-01T01:00:00+01:00",
		"Thu Jan  1 00:00:00 1970", "1970-01-01 00:00:00 +0000 UTC",
		"0000000000",
	};
	int64_t ns = 0, next = 0;
	bool local;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		ns = 0;
		is_int(rt_time_parse(forms[i], strlen(forms[i]), &ns), RT_OK,
		       "the epoch parses: '%s'", forms[i]);
		is_int(ns, 1, "as 1 ns: '%s'", forms[i]);
	}
	check("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000000Z");
	rt_time_parse("1970-01-01T00:00:00.000000001Z", 30, &next);
	ok(next >= ns && next == 1, "the nanosecond after it: no earlier");
	rt_time_parse("1970-01-01T00:00:00.5Z", 22, &next);
	is_int(next, 500000000, "a fraction past the epoch: exact");
	is_int(rt_time_parse_local("1970-01-01T00:00:00Z", 20, &ns, &local),
	       RT_OK, "local: the epoch with its zone");
	/* A zoneless midnight is the epoch only in UTC: no nanosecond of
	 * the nudge carried into another zone's time. */
	setenv("TZ", "America/New_York", 1);
	tzset();
	is_int(rt_time_parse_local("Thu Jan  1 00:00:00 1970", 24, &ns, &local),
	       RT_OK, "local: midnight in New York, 1970");
	is_int(ns, 18000LL * 1000000000, "local: exactly 05:00:00Z");
	setenv("TZ", "UTC", 1);
	tzset();
	is_int(rt_time_parse_local("Thu Jan  1 00:00:00 1970", 24, &ns, &local),
	       RT_OK, "local: midnight in UTC, 1970");
	is_int(ns, 1, "local: the epoch, as 1 ns");
	is_int(rt_time_from_civil(1970, 1, 1, 0, 0, 0, 0, 0, &ns), RT_OK,
	       "from_civil: the epoch");
	is_int(ns, 1, "from_civil: as 1 ns");
}

/* rt_time_format writes its digits by hand: the edges snprintf got right. */
static void check_format(int64_t ns, const char *want)
{
	char out[RT_TIME_BUFSZ];

	rt_time_format(ns, out);
	is_str(out, want, "formats %lld", (long long)ns);
}

/* rt_time_parse_local in zone tz: want, and whether it read the time as
 * local (a time naming its zone is not). */
static void check_local(const char *tz, const char *in, const char *want,
			bool local)
{
	int64_t ns = 0;
	bool was = !local;
	char out[RT_TIME_BUFSZ] = "";

	setenv("TZ", tz, 1);
	tzset();
	if (rt_time_parse_local(in, strlen(in), &ns, &was) == RT_OK)
		rt_time_format(ns, out);
	is_str(out, want, "%s: '%s'", tz, in);
	ok(was == local, "%s: '%s' %s", tz, in, local ? "local" : "zoned");
}

static void local_times(void)
{
	const char *b = "Europe/Berlin", *la = "America/Los_Angeles";

	check_local(b, "Tue Jan  2 10:00:00 2024", "2024-01-02T09:00:00.000000Z",
		    true);
	check_local(b, "Wed May  1 12:00:02 2024", "2024-05-01T10:00:02.000000Z",
		    true);
	check_local(b, "2024-01-02 10:00:00.5", "2024-01-02T09:00:00.500000Z",
		    true);
	/* the skipped hour: the offset before it; the repeated: its first */
	check_local(b, "Sun Mar 31 02:30:00 2024", "2024-03-31T01:30:00.000000Z",
		    true);
	check_local(b, "Sun Oct 27 02:30:00 2024", "2024-10-27T00:30:00.000000Z",
		    true);
	check_local(b, "2024-05-01 12:15:13.1 +0200 CEST",
		    "2024-05-01T10:15:13.100000Z", false);
	check_local(b, "2024-05-01T12:15:13Z", "2024-05-01T12:15:13.000000Z",
		    false);
	check_local(b, "1714558513", "2024-05-01T10:15:13.000000Z", false);
	check_local(la, "Tue Jan  2 10:00:00 2024", "2024-01-02T18:00:00.000000Z",
		    true);
	check_local(la, "Sun Mar 10 02:30:00 2024", "2024-03-10T10:30:00.000000Z",
		    true);
	check_local(la, "Sun Nov  3 01:30:00 2024", "2024-11-03T08:30:00.000000Z",
		    true);
	check_local("UTC", "Tue Jan  2 10:00:00 2024",
		    "2024-01-02T10:00:00.000000Z", true);
	/* before the epoch once read in Berlin: unknown, not local */
	check_local(b, "Thu Jan  1 00:30:00 1970", "", false);
	setenv("TZ", "UTC", 1);
	tzset();
}

int main(void)
{
	local_times();
	check("2024-05-01T10:15:13Z", "2024-05-01T10:15:13.000000Z");
	check("2024-05-01T10:15:13.123456Z", "2024-05-01T10:15:13.123456Z");
	check("2024-05-01T10:15:13.5Z", "2024-05-01T10:15:13.500000Z");
	check("2024-05-01T12:15:14.000000001+02:00", "2024-05-01T10:15:14.000000Z");
	check("2024-05-01T10:15:13.123456789+00:00", "2024-05-01T10:15:13.123456Z");
	check("2024-05-01T12:15:13.1-05:30", "2024-05-01T17:45:13.100000Z");
	check("2024-05-01 12:15:13.123456789 +0200 CEST", "2024-05-01T10:15:13.123456Z");
	check("2024-05-01 12:15:13.1 +0200 +0200", "2024-05-01T10:15:13.100000Z");
	check("2024-11-03 14:22:11 UTC", "2024-11-03T14:22:11.000000Z");
	check("Wed May  1 12:00:02 2024", "2024-05-01T12:00:02.000000Z");
	check("Sun Nov 3 14:41:07 2024", "2024-11-03T14:41:07.000000Z");
	check("1714558513", "2024-05-01T10:15:13.000000Z");
	check("1714558513.25", "2024-05-01T10:15:13.250000Z");
	check("  2024-02-29T23:59:59Z ", "2024-02-29T23:59:59.000000Z");
	check("1969-12-31T23:59:59.5Z", NULL);
	check("55555555555", NULL);
	check("9999999999", NULL);
	check("9999-12-31T23:59:59Z", NULL);
	check("0001-01-01T00:00:00Z", NULL);
	check_range("0001-05-03T10:00:00Z", true);
	check_range("1969-12-31T23:59:59Z", true);
	check_range("1969-12-31T23:59:59.999999999Z", true);
	check_range("9999-01-01T00:00:00Z", true);
	check_range("2263-01-01T00:00:00.5+02:00", true);
	check_range("Fri Jan  1 00:00:00 9999", true);
	check_range("0001-01-01T00:00:00Z", false);
	check_range("2024-13-01T00:00:00Z", false);
	civil_range();
	epoch_zero();
	check("2261-12-31T23:59:59Z", "2261-12-31T23:59:59.000000Z");
	check("", NULL);
	check("-", NULL);
	check("2024-13-01T00:00:00Z", NULL);
	check("not a time", NULL);
	check("2024-05-01T10:15", NULL);

	check_format(0, "1970-01-01T00:00:00.000000Z");
	check_format(-1, "1969-12-31T23:59:59.999999Z");
	check_format(-1001, "1969-12-31T23:59:59.999998Z");
	check_format(951782400123456789LL, "2000-02-29T00:00:00.123456Z");
	check_format(INT64_MIN, "1677-09-21T00:12:43.145224Z");
	check_format(INT64_MAX, "2262-04-11T23:47:16.854775Z");

	struct rt_arena a;
	rt_arena_init(&a);
	struct rt_str s = rt_arena_strdup(&a, "hello", 5);
	is_rts(s, "hello", "arena strdup");
	ok(s.p[5] == '\0', "arena strdup terminates");
	void *big = rt_arena_alloc(&a, 3u << 20);
	ok(big != NULL, "arena serves a block larger than its default");
	ok(((uintptr_t)big & 15) == 0, "arena aligns to 16");
	rt_arena_reset(&a);
	is_int(a.used, 0, "reset clears usage");
	ok(rt_arena_alloc(&a, 10) != NULL, "arena usable after reset");
	rt_arena_release(&a);

	is_str(rt_format_name(rt_format_from_name("helm-history")), "helm-history", "format names round trip");
	is_int(rt_severity_from_name("Critical", 8), RT_SEV_CRITICAL, "severity names are case-insensitive");
	is_int(rt_severity_from_name("fatal", 5), -1, "unknown severity");
	return done_testing();
}
