/*
 * rt_time.c: the time forms Kubernetes, container runtimes and Helm print,
 * parsed without libc's locale- and TZ-dependent functions (strptime and
 * mktime read the process time zone; every time here carries its own).
 * The one exception is rt_time_parse_local, for the times Helm's tables
 * print without a zone: those are wall times of the zone helm ran in.
 */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "revtrail/rt.h"

#define NS_PER_SEC 1000000000LL

/* Howard Hinnant's days_from_civil: proleptic Gregorian, any year. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)((int64_t)yoe + era * 400 + (*m <= 2));
}

struct cursor {
	const char *p, *end;
};

static bool at_end(const struct cursor *c)
{
	return c->p >= c->end;
}

static bool take_char(struct cursor *c, char ch)
{
	if (at_end(c) || *c->p != ch)
		return false;
	c->p++;
	return true;
}

/* Exactly `digits` decimal digits. */
static bool take_num(struct cursor *c, int digits, int *out)
{
	int v = 0;

	if (c->end - c->p < digits)
		return false;
	for (int i = 0; i < digits; i++) {
		if (!isdigit((unsigned char)c->p[i]))
			return false;
		v = v * 10 + (c->p[i] - '0');
	}
	c->p += digits;
	*out = v;
	return true;
}

static void skip_spaces(struct cursor *c)
{
	while (!at_end(c) && *c->p == ' ')
		c->p++;
}

/* ".123456789" (any number of digits; beyond 9 ignored) -> ns. */
static int64_t take_fraction(struct cursor *c)
{
	int64_t ns = 0, scale = 100000000;

	if (!take_char(c, '.') && !take_char(c, ','))
		return 0;
	while (!at_end(c) && isdigit((unsigned char)*c->p)) {
		ns += (*c->p - '0') * scale;
		scale /= 10;
		c->p++;
	}
	return ns;
}

/* "Z", "+hh:mm", "+hhmm", "+hh", " +0200 CEST", " UTC", or nothing (UTC,
 * and *zoned false). */
static bool take_zone(struct cursor *c, int64_t *offset_s, bool *zoned)
{
	int hh = 0, mm = 0, sign;

	*offset_s = 0;
	skip_spaces(c);
	*zoned = !at_end(c);
	if (at_end(c) || take_char(c, 'Z') || take_char(c, 'z'))
		return true;
	if (*c->p != '+' && *c->p != '-') {
		/* A bare zone name: only UTC/GMT are unambiguous. */
		return (c->end - c->p >= 3 && (strncmp(c->p, "UTC", 3) == 0 ||
					       strncmp(c->p, "GMT", 3) == 0));
	}
	sign = *c->p++ == '-' ? -1 : 1;
	if (!take_num(c, 2, &hh))
		return false;
	take_char(c, ':');
	if (!at_end(c) && isdigit((unsigned char)*c->p) && !take_num(c, 2, &mm))
		return false;
	*offset_s = sign * (hh * 3600 + mm * 60);
	return true;
}

/* Go's zero time.Time, what tools print for "never": unknown, and no
 * more out of range than an empty field. */
static bool go_zero(int y, int mo, int d, int h, int mi, int s, int64_t f)
{
	return y == 1 && mo == 1 && d == 1 && !h && !mi && !s && !f;
}

/* The epoch is a real time, but 0 means "unknown" in every record and in
 * the store's ts_ns/first_ns: it is read as 1 ns after, which keeps every
 * order (no time here lies between them) and prints as the epoch, to the
 * microsecond. Applied where a time leaves this file, so that a local
 * zone's offset is added to the epoch itself. */
static int64_t past_epoch(int64_t v)
{
	return v ? v : 1;
}

/* RT_ERANGE rather than RT_EPARSE for a real date int64 nanoseconds since
 * 1970 cannot hold (or that is negative): the decoder counts it, where it
 * leaves an unreadable time unknown. */
static int civil(int y, int mo, int d, int h, int mi, int s,
		 int64_t frac_ns, int64_t offset_s, int64_t *ns)
{
	int64_t v;

	if (mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60 ||
	    frac_ns < 0 || frac_ns >= NS_PER_SEC ||
	    offset_s < -86400 || offset_s > 86400)
		return RT_EPARSE;
	if (y < 1678 || y > 2261)
		return go_zero(y, mo, d, h, mi, s, frac_ns) ? RT_EPARSE :
							       RT_ERANGE;
	v = (days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 +
	     h * 3600 + mi * 60 + s - offset_s) * NS_PER_SEC + frac_ns;
	if (v < 0)
		return RT_ERANGE;
	*ns = v;
	return RT_OK;
}

int rt_time_from_civil(int y, int mo, int d, int h, int mi, int s,
		       int64_t frac_ns, int64_t offset_s, int64_t *ns)
{
	int rc = civil(y, mo, d, h, mi, s, frac_ns, offset_s, ns);

	if (rc == RT_OK)
		*ns = past_epoch(*ns);
	return rc;
}

/* 2024-05-01T10:15:13.5Z and the space-separated relatives. */
static int parse_iso(struct cursor c, int64_t *ns, bool *zoned)
{
	int y, mo, d, h, mi, s;
	int64_t frac, off;

	if (!take_num(&c, 4, &y) || !take_char(&c, '-') ||
	    !take_num(&c, 2, &mo) || !take_char(&c, '-') ||
	    !take_num(&c, 2, &d))
		return RT_EPARSE;
	if (!take_char(&c, 'T') && !take_char(&c, 't') && !take_char(&c, ' '))
		return RT_EPARSE;
	if (!take_num(&c, 2, &h) || !take_char(&c, ':') ||
	    !take_num(&c, 2, &mi) || !take_char(&c, ':') ||
	    !take_num(&c, 2, &s))
		return RT_EPARSE;
	frac = take_fraction(&c);
	if (!take_zone(&c, &off, zoned))
		return RT_EPARSE;
	return civil(y, mo, d, h, mi, s, frac, off, ns);
}

static int month_from_name(const char *p)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

	for (int i = 0; i < 12; i++)
		if (strncasecmp(p, names + 3 * i, 3) == 0)
			return i + 1;
	return 0;
}

/* Go ANSIC "Mon Jan  2 15:04:05 2006" (and UnixDate with a zone before
 * the year): taken as UTC unless a numeric zone is given; *zoned says
 * whether any zone was. */
static int parse_ansic(struct cursor c, int64_t *ns, bool *zoned)
{
	int mo, d = 0, h, mi, s, y;
	int64_t frac, off = 0;

	if (c.end - c.p < 8 || !isalpha((unsigned char)c.p[0]))
		return RT_EPARSE;
	c.p += 3;
	skip_spaces(&c);
	if (c.end - c.p < 3 || !(mo = month_from_name(c.p)))
		return RT_EPARSE;
	c.p += 3;
	skip_spaces(&c);
	while (!at_end(&c) && isdigit((unsigned char)*c.p) && d < 100)
		d = d * 10 + (*c.p++ - '0');
	skip_spaces(&c);
	if (!take_num(&c, 2, &h) || !take_char(&c, ':') ||
	    !take_num(&c, 2, &mi) || !take_char(&c, ':') ||
	    !take_num(&c, 2, &s))
		return RT_EPARSE;
	frac = take_fraction(&c);
	skip_spaces(&c);
	*zoned = false;
	if (!at_end(&c) && !isdigit((unsigned char)*c.p)) {
		/* "MST 2006" or "+0200 2006": zone before the year. */
		struct cursor z = c;

		*zoned = true;
		if (*c.p == '+' || *c.p == '-')
			take_zone(&z, &off, zoned);
		while (!at_end(&c) && *c.p != ' ')
			c.p++;
		skip_spaces(&c);
	}
	if (!take_num(&c, 4, &y))
		return RT_EPARSE;
	return civil(y, mo, d, h, mi, s, frac, off, ns);
}

/* "1714558513" or "1714558513.25": Unix seconds (helm labels, Fluent Bit). */
static int parse_epoch(struct cursor c, int64_t *ns)
{
	int64_t secs = 0;
	int digits = 0;

	while (!at_end(&c) && isdigit((unsigned char)*c.p) && digits < 11) {
		secs = secs * 10 + (*c.p++ - '0');
		digits++;
	}
	/* 9 or 10 digits: 1973..2255; more would overflow int64 nanoseconds. */
	if (digits < 9 || digits > 10 || secs >= 9000000000LL)
		return RT_EPARSE;
	int64_t frac = take_fraction(&c);
	if (!at_end(&c))
		return RT_EPARSE;
	*ns = secs * NS_PER_SEC + frac;
	return RT_OK;
}

static int parse_any(const char *s, size_t n, int64_t *ns, bool *zoned)
{
	struct cursor c = { s, s + n };
	int rc;

	*zoned = true;
	while (c.p < c.end && isspace((unsigned char)*c.p))
		c.p++;
	while (c.end > c.p && isspace((unsigned char)c.end[-1]))
		c.end--;
	if (at_end(&c))
		return RT_EPARSE;
	/* At most one form can match a string: its answer is the answer. */
	if ((rc = parse_iso(c, ns, zoned)) != RT_EPARSE ||
	    (rc = parse_epoch(c, ns)) != RT_EPARSE)
		return rc;
	return parse_ansic(c, ns, zoned);
}

int rt_time_parse(const char *s, size_t n, int64_t *ns)
{
	bool zoned;
	int rc = parse_any(s, n, ns, &zoned);

	if (rc == RT_OK)
		*ns = past_epoch(*ns);
	return rc;
}

/* The local zone's offset from UTC at instant t, in seconds. */
static int64_t local_offset(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm))
		return 0;
	return tm.tm_gmtoff;
}

/*
 * The instant a local wall time (given as if it were UTC seconds) names.
 * localtime_r arithmetic rather than mktime: mktime's answer in a gap or
 * an overlap depends on tm_isdst and differs between libcs, and it
 * normalises the struct it is given. The offsets a day before and a day
 * after bracket any transition; an offset is right when the instant it
 * gives has that offset. In an overlap (the hour repeated when the clocks
 * go back) both are right and the earlier instant is taken, the first
 * time the wall clock showed it; in a gap (the hour skipped when they go
 * forward) neither is, and the offset before the gap is taken, as if the
 * clock had not been moved yet.
 */
static int64_t local_to_utc(int64_t wall)
{
	int64_t before = local_offset(wall - 86400);
	int64_t after = local_offset(wall + 86400);
	bool ok_before = local_offset(wall - before) == before;
	bool ok_after = local_offset(wall - after) == after;

	if (ok_before && ok_after)
		return wall - (before > after ? before : after);
	if (ok_after)
		return wall - after;
	return wall - before;
}

int rt_time_parse_local(const char *s, size_t n, int64_t *ns, bool *local)
{
	bool zoned;
	int64_t v, secs, frac;
	int rc = parse_any(s, n, &v, &zoned);

	*local = false;
	if (rc != RT_OK)
		return rc;
	if (!zoned) {
		secs = v / NS_PER_SEC;
		frac = v % NS_PER_SEC;
		v = local_to_utc(secs) * NS_PER_SEC + frac;
		if (v < 0)
			return RT_ERANGE;
		*local = true;
	}
	*ns = past_epoch(v);
	return RT_OK;
}

/* Writes v as exactly `digits` decimal digits, right to left. */
static char *put_digits(char *p, unsigned v, int digits)
{
	for (int i = digits - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + digits;
}

/*
 * What snprintf("%04d-%02u-%02uT%02d:%02d:%02d.%06dZ") printed, by hand:
 * snprintf cost 3,500 instructions a call, a sixth of a tagged Event's
 * output in `revtrail classify`. int64 nanoseconds span the years 1677 to
 * 2262, so every field has its fixed width.
 */
void rt_time_format(int64_t ns, char out[RT_TIME_BUFSZ])
{
	int64_t secs = ns / NS_PER_SEC, frac = ns % NS_PER_SEC;
	int64_t days, rem;
	unsigned mo, d;
	char *p = out;
	int y;

	if (frac < 0) {
		frac += NS_PER_SEC;
		secs--;
	}
	days = secs / 86400;
	rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	civil_from_days(days, &y, &mo, &d);
	p = put_digits(p, (unsigned)y, 4);
	*p++ = '-';
	p = put_digits(p, mo, 2);
	*p++ = '-';
	p = put_digits(p, d, 2);
	*p++ = 'T';
	p = put_digits(p, (unsigned)(rem / 3600), 2);
	*p++ = ':';
	p = put_digits(p, (unsigned)(rem / 60 % 60), 2);
	*p++ = ':';
	p = put_digits(p, (unsigned)(rem % 60), 2);
	*p++ = '.';
	p = put_digits(p, (unsigned)(frac / 1000), 6);
	*p++ = 'Z';
	*p = '\0';
}
