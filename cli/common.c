/*
 * common.c: what several subcommands share: loading rules, the database
 * path, option values, output-format names, JSON strings.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "revtrail/ingest.h"
#include "revtrail/log.h"
#include "revtrail/store.h"

/* Errors go through rt_log once the command logs that way (consume). */
static void rules_error(const char *err)
{
	if (rt_log_active())
		rt_log(RT_LOG_ERROR, "rules", "%s", err);
	else
		fprintf(stderr, "%s: %s\n", rt_prog, err);
}

struct rules *cli_load_rules(const struct cli_rules_opts *o)
{
	char err[RT_ERRLEN] = "";
	struct rules *r = rules_new();

	if (!r) {
		rules_error("out of memory");
		return NULL;
	}
	if (!o->no_default && rules_load_builtin(r, err, sizeof(err)))
		goto fail;
	for (int i = 0; i < o->npaths; i++)
		if (rules_load_path(r, o->paths[i], err, sizeof(err)))
			goto fail;
	if (rules_compile(r, err, sizeof(err)))
		goto fail;
	return r;
fail:
	rules_error(err);
	rules_free(r);
	return NULL;
}

const char *cli_db_path(const char *flag)
{
	const char *env = getenv("REVTRAIL_DB");

	if (flag)
		return flag;
	if (env && *env)
		return env;
	return "revtrail.db";
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rt_log_active())
		rt_log(RT_LOG_ERROR, cmd, "%s", msg);
	else
		fprintf(stderr, "revtrail %s: %s\n", cmd, msg);
	return CLI_USAGE;
}

int cli_parse_release(const char *arg, struct ingest_opts *io)
{
	static char buf[512];
	char *slash;

	if (!*arg || strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	if (!(slash = strchr(buf, '/'))) {
		/* as `helm history NAME` without -n: any namespace */
		io->release_ns = NULL;
		io->release_name = buf;
		return 0;
	}
	if (slash == buf || !slash[1] || strchr(slash + 1, '/'))
		return -1;
	*slash = '\0';
	io->release_ns = buf;
	io->release_name = slash + 1;
	return 0;
}

int cli_parse_size(const char *arg, size_t *out)
{
	const char *p = arg;
	unsigned long long v = 0;
	unsigned shift = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > (1ull << 30))       /* before it can wrap */
			return -1;
	}
	if (*p == 'k' || *p == 'K')
		shift = 10, p++;
	else if (*p == 'm' || *p == 'M')
		shift = 20, p++;
	if (*p || v == 0 || v > (1ull << 30) >> shift)
		return -1;
	*out = (size_t)(v << shift);
	return 0;
}

/* One "<digits>[.<digits>]" into *v; the end, or NULL when there is none.
 * Only digits: strtod would take "nan", "inf", "1e999" and hex. */
static const char *parse_decimal(const char *s, double *v)
{
	double scale = 0.1;
	const char *p = s;

	*v = 0;
	for (; *p >= '0' && *p <= '9' && p - s < 15; p++)
		*v = *v * 10 + (*p - '0');
	if (p == s || (*p >= '0' && *p <= '9'))
		return NULL;              /* none, or too many digits */
	if (*p != '.')
		return p;
	for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
		*v += (*p - '0') * scale;
	return p[-1] == '.' ? NULL : p;
}

int cli_parse_duration(const char *s, int64_t *ns)
{
	/* longer units first so "ms" is not read as "m" */
	static const struct { const char *unit; double ns; } units[] = {
		{ "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
		{ "d", 86400e9 }, { "w", 7 * 86400e9 },
	};
	double total = 0;

	if (!s || !*s)
		return -1;
	while (*s) {
		double v;
		size_t k, n = 0;

		if (!(s = parse_decimal(s, &v)))
			return -1;
		for (k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
			n = strlen(units[k].unit);
			if (!strncmp(s, units[k].unit, n))
				break;
		}
		if (k == sizeof(units) / sizeof(units[0]))
			return -1;    /* no unit: 15 seconds or 15 minutes? */
		total += v * units[k].ns;
		s += n;
	}
	if (total < 1 || total > CLI_DURATION_MAX_NS)
		return -2;
	*ns = (int64_t)total;
	return 0;
}

int cli_gap_opt(const char *cmd, const char *arg, int64_t *ns)
{
	int rc = cli_parse_duration(arg, ns);

	if (rc == -1)
		return cli_usage_error(cmd, "--gap wants a duration with a "
				       "unit (15m, 1h30m, 90s), got '%s'", arg);
	if (rc || *ns < CLI_GAP_MIN_NS || *ns > CLI_GAP_MAX_NS)
		return cli_usage_error(cmd, "--gap %s is out of range (1s to "
				       "30d)", arg);
	return 0;
}

void cli_format_duration(int64_t ns, char *out, size_t size)
{
	int64_t s = ns / 1000000000;
	size_t n = 0;

	out[0] = '\0';
	if (s >= 86400)
		n += (size_t)snprintf(out + n, size - n, "%lldd",
				      (long long)(s / 86400));
	if (s % 86400 >= 3600 && n < size)
		n += (size_t)snprintf(out + n, size - n, "%lldh",
				      (long long)(s % 86400 / 3600));
	if (s % 3600 >= 60 && n < size)
		n += (size_t)snprintf(out + n, size - n, "%lldm",
				      (long long)(s % 3600 / 60));
	if ((s % 60 || !n) && n < size)
		snprintf(out + n, size - n, "%llds", (long long)(s % 60));
}

void cli_format_offset(int64_t d, char *out, size_t size)
{
	int64_t s = (d < 0 ? -d : d) / 1000000000;
	char sign = d < 0 ? '-' : '+';

	if (s >= 86400)
		snprintf(out, size, "%c%" PRId64 "d%02" PRId64 "h", sign,
			 s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(out, size, "%c%" PRId64 "h%02" PRId64 "m", sign,
			 s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(out, size, "%c%" PRId64 "m%02" PRId64 "s", sign,
			 s / 60, s % 60);
	else
		snprintf(out, size, "%c%" PRId64 "s", sign, s);
}

int cli_retain_opt(const char *cmd, const char *arg, int64_t *ns)
{
	if (cli_parse_duration(arg, ns) || *ns < 60 * 1000000000LL)
		return cli_usage_error(cmd, "--retain wants a duration of at "
				       "least 1m with a unit (7d, 12h, 2w), "
				       "got '%s'", arg);
	return 0;
}

void cli_note_retained(const char *cmd, const struct store_stats *s,
		       int64_t retain_ns)
{
	char d[64];

	if (!s->events_expired && !s->incidents_expired)
		return;
	cli_format_duration(retain_ns, d, sizeof(d));
	if (rt_log_active())
		rt_log(RT_LOG_INFO, cmd, "--retain %s: %" PRIu64 " events and %"
		       PRIu64 " closed incidents deleted", d,
		       s->events_expired, s->incidents_expired);
	else
		fprintf(stderr, "revtrail %s: --retain %s: %" PRIu64 " events "
			"and %" PRIu64 " closed incidents deleted\n", cmd, d,
			s->events_expired, s->incidents_expired);
}

int cli_registry_opt(const char *cmd, const char *arg, size_t *bytes)
{
	if (cli_parse_size(arg, bytes) || *bytes < ((size_t)1 << 20))
		return cli_usage_error(cmd, "bad --max-registry '%s' (1M to "
				       "1024M)", arg);
	return 0;
}

void cli_note_regap(const char *cmd, int64_t old_ns, int64_t new_ns)
{
	char a[32], b[32];

	cli_format_duration(old_ns, a, sizeof(a));
	cli_format_duration(new_ns, b, sizeof(b));
	if (rt_log_active())
		rt_log(RT_LOG_INFO, cmd, "--regap: every incident recomputed "
		       "for the gap %s (was %s)", b, a);
	else
		fprintf(stderr, "%s: --regap: every incident recomputed for "
			"the gap %s (was %s)\n", cmd, b, a);
}

/* "2024-11-03": midnight UTC that day. */
static int parse_date(const char *s, int64_t *ns)
{
	int f[3] = { 0, 0, 0 };

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	for (int i = 0, k = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			k++;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			return -1;
		f[k] = f[k] * 10 + (s[i] - '0');
	}
	return rt_time_from_civil(f[0], f[1], f[2], 0, 0, 0, 0, 0, ns) ? -1 : 0;
}

int cli_parse_since(const char *arg, int64_t *ns)
{
	struct timespec now;
	int64_t d;

	if (parse_date(arg, ns) == 0 || rt_time_parse(arg, strlen(arg), ns) == 0)
		return 0;
	if (cli_parse_duration(arg, &d))
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	*ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - d;
	return 0;
}

bool cli_oversize_note(char *buf, size_t n, const struct ingest_stats *s,
		       size_t max)
{
	char *at;

	if (!s->oversize)
		return false;
	at = cli_escape(s->oversize_at, strlen(s->oversize_at));
	snprintf(buf, n, "%" PRIu64 " JSON document%s or List item%s over "
		 "--max-record (%zu bytes) skipped, the first at %s: raise "
		 "--max-record to read %s", s->oversize,
		 s->oversize == 1 ? "" : "s", s->oversize == 1 ? "" : "s",
		 max ? max : (size_t)INGEST_DEFAULT_MAX_RECORD,
		 at ? at : "?", s->oversize == 1 ? "it" : "them");
	free(at);
	return true;
}

/* A zone glibc would read: a POSIX rule ("CET-1CEST"), or a name the tz
 * database has. glibc takes a name it cannot find as UTC without a word,
 * and a wrong zone here moves every revision. */
static bool tz_known(const char *z)
{
	const char *dir = getenv("TZDIR");
	char path[4096];

	if (*z == ':')
		z++;
	if (!*z || strstr(z, ".."))
		return false;
	if (!strcmp(z, "UTC") || strpbrk(z, "0123456789") || *z == '/')
		return *z != '/' || access(z, R_OK) == 0;
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir :
		 "/usr/share/zoneinfo", z);
	return access(path, R_OK) == 0;
}

static const char *helm_tz;

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

void cli_input_notes(const struct ingest_stats *is, cli_note_fn fn,
		     void *ctx)
{
	char line[1024];

	if (is->times_local) {
		snprintf(line, sizeof(line), "%" PRIu64 " Helm table time%s "
			 "without a zone read in %s (first at %s); --helm-tz "
			 "ZONE names the zone helm ran in", is->times_local,
			 plural(is->times_local), cli_helm_tz(),
			 is->first_local);
		fn(ctx, RT_LOG_INFO, line);
	}
	if (is->helm_payload_fallback) {
		snprintf(line, sizeof(line), "%" PRIu64 " Helm release "
			 "payload%s could not be decoded (first at %s): "
			 "revisions from the object's labels alone, without "
			 "chart, description or hooks", is->helm_payload_fallback,
			 plural(is->helm_payload_fallback), is->first_fallback);
		fn(ctx, RT_LOG_WARN, line);
	}
	if (is->helm_status_incomplete) {
		snprintf(line, sizeof(line), "%" PRIu64 " helm status "
			 "output%s without a usable revision (first at %s): no "
			 "revision from %s; a description is kept as a record of "
			 "the release", is->helm_status_incomplete,
			 plural(is->helm_status_incomplete), is->first_incomplete,
			 is->helm_status_incomplete == 1 ? "it" : "them");
		fn(ctx, RT_LOG_WARN, line);
	}
	if (is->bad_times) {
		snprintf(line, sizeof(line), "%" PRIu64 " docker json-file "
			 "line%s with an empty or bad time (first at %s): "
			 "stored without a time of their own", is->bad_times,
			 plural(is->bad_times), is->first_bad_time);
		fn(ctx, RT_LOG_WARN, line);
	}
	if (is->times_out_of_range) {
		snprintf(line, sizeof(line), "%" PRIu64 " record%s with a time "
			 "out of range (before 1970 or after 2261; first at %s): "
			 "stored, that time read as absent (the record's next "
			 "time, else unknown)", is->times_out_of_range,
			 plural(is->times_out_of_range), is->first_out_of_range);
		fn(ctx, RT_LOG_WARN, line);
	}
}

const char *cli_helm_tz(void)
{
	const char *tz = getenv("TZ");

	if (helm_tz)
		return helm_tz;
	return tz && *tz ? tz : "the system zone (/etc/localtime)";
}

/* --helm-tz: the process's zone from now on. Options are parsed before any
 * thread starts, so setenv cannot race a getenv; nothing else revtrail
 * prints or stores reads the local zone (every time it writes is UTC). */
static int helm_tz_opt(const char *cmd, const char *arg)
{
	if (!tz_known(arg))
		return cli_usage_error(cmd, "--helm-tz: unknown zone '%s' (a tz "
				       "database name such as Europe/Berlin, "
				       "or UTC)", arg);
	if (setenv("TZ", arg, 1))
		return cli_usage_error(cmd, "--helm-tz: out of memory");
	tzset();
	helm_tz = arg;
	return 1;
}

int cli_input_opt(const char *cmd, int opt, const char *arg,
		   struct ingest_opts *io, struct cli_rules_opts *ro)
{
	switch (opt) {
	case CLI_OPT_FORMAT:
		io->force = rt_format_from_name(arg);
		if (io->force == RT_FMT_UNKNOWN)
			return cli_usage_error(cmd, "unknown format '%s'", arg);
		return 1;
	case CLI_OPT_MAX_RECORD:
		if (cli_parse_size(arg, &io->max_record))
			return cli_usage_error(cmd, "bad --max-record '%s'",
					       arg);
		return 1;
	case CLI_OPT_RULES:
		if (ro->npaths == (int)(sizeof(ro->paths) / sizeof(ro->paths[0])))
			return cli_usage_error(cmd, "too many --rules");
		ro->paths[ro->npaths++] = arg;
		return 1;
	case CLI_OPT_NO_DEFAULT:
		ro->no_default = true;
		return 1;
	case CLI_OPT_RELEASE:
		if (cli_parse_release(arg, io))
			return cli_usage_error(cmd, "--release wants NAME or NAMESPACE/NAME, got '%s'", arg);
		return 1;
	case CLI_OPT_HELM_TZ:
		return helm_tz_opt(cmd, arg);
	case 'v':
		io->verbose = stderr;
		return 1;
	}
	return 0;
}

int cli_output_from_name(const char *name)
{
	static const char *const names[] = {
		"table", "json", "csv", "text", "csv-raw",
	};

	for (int i = 0; i < 5; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/* A UTF-8 sequence as it is; a byte that starts none as U+FFFD, the
 * replacement character, so the output is JSON any parser reads (an
 * escape \u00ff would read back as a different, valid character). Returns
 * the bytes consumed. */
static size_t json_utf8(FILE *f, const unsigned char *s, size_t n)
{
	size_t k = rt_utf8_len(s, n);

	if (!k) {
		fputs("\\ufffd", f);
		return 1;
	}
	fwrite(s, 1, k, f);
	return k;
}

void cli_json_str(FILE *f, const char *p, size_t n)
{
	putc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else if (c < 0x80)
				putc(c, f);
			else
				i += json_utf8(f, (const unsigned char *)p + i,
					       n - i) - 1;
		}
	}
	putc('"', f);
}

/* s quoted as one shell word, appended at buf + *len. */
static void add_quoted(char *buf, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + 4 * n + 3 >= size)
		return;
	*len += rt_shell_quote(s, n, buf + *len);
	buf[*len] = '\0';
}

static void add_text(char *buf, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 1 >= size)
		return;
	memcpy(buf + *len, s, n + 1);
	*len += n;
}

void cli_history_commands(const char *db, const char *ns, const char *rel,
			  char cmd[2][CLI_HINT_MAX])
{
	size_t n = 0;

	cmd[0][0] = cmd[1][0] = '\0';
	add_text(cmd[0], CLI_HINT_MAX, &n, "helm history ");
	add_quoted(cmd[0], CLI_HINT_MAX, &n, rel);
	add_text(cmd[0], CLI_HINT_MAX, &n, " -n ");
	add_quoted(cmd[0], CLI_HINT_MAX, &n, ns);
	add_text(cmd[0], CLI_HINT_MAX, &n, " -o json | revtrail ingest --db ");
	add_quoted(cmd[0], CLI_HINT_MAX, &n, db);
	add_text(cmd[0], CLI_HINT_MAX, &n, " --release ");
	{
		char nsrel[600];

		snprintf(nsrel, sizeof(nsrel), "%s/%s", ns, rel);
		add_quoted(cmd[0], CLI_HINT_MAX, &n, nsrel);
	}
	n = 0;
	add_text(cmd[1], CLI_HINT_MAX, &n, "kubectl get secret -n ");
	add_quoted(cmd[1], CLI_HINT_MAX, &n, ns);
	add_text(cmd[1], CLI_HINT_MAX, &n, " -l ");
	{
		char sel[600];

		snprintf(sel, sizeof(sel), "owner=helm,name=%s", rel);
		add_quoted(cmd[1], CLI_HINT_MAX, &n, sel);
	}
	add_text(cmd[1], CLI_HINT_MAX, &n, " -o json | revtrail ingest --db ");
	add_quoted(cmd[1], CLI_HINT_MAX, &n, db);
}
