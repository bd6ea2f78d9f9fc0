/*
 * rt_log.c: diagnostic lines with time, level and component, as text or
 * JSON, with repeated warnings and errors folded into a count (log.h).
 *
 * One mutex orders everything: the line is formatted into a buffer and
 * written with one fwrite + fflush while it is held, so lines of
 * different threads never interleave. Messages are escaped with
 * rt_escape_terminal in both formats (JSON then only needs its quote and
 * backslash escaped): a decoded JSON message is as safe to print as a
 * text line, and bytes that are not UTF-8 cannot make the JSON invalid.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "revtrail/log.h"
#include "revtrail/rt.h"

/* Distinct repeated lines tracked at once; the oldest gives way. */
#define REPEAT_SLOTS 32
#define LINE_MAX_BYTES (RT_LOG_MAX_MSG * 8 + 512)

struct repeat {
	char *msg;              /* NULL: free slot */
	char component[24], fac[24];
	enum rt_log_level level;
	int64_t start_ns;       /* the window began: the line was written */
	uint64_t count;         /* repeats held back since */
};

static struct {
	pthread_mutex_t mu;
	enum rt_log_format fmt;
	bool active;
	FILE *out;              /* NULL: stderr */
	int64_t (*clock)(void);
	struct repeat rep[REPEAT_SLOTS];
	char line[LINE_MAX_BYTES];
} L = { .mu = PTHREAD_MUTEX_INITIALIZER };

static const char *const level_text[] = { "ERROR", "WARN", "INFO", "DEBUG" };
static const char *const level_json[] = { "error", "warn", "info", "debug" };

static int64_t real_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ns(void)
{
	return L.clock ? L.clock() : real_now_ns();
}

int rt_log_format_from_name(const char *name)
{
	if (!strcmp(name, "text"))
		return RT_LOG_TEXT;
	if (!strcmp(name, "json"))
		return RT_LOG_JSON;
	return -1;
}

enum rt_log_level rt_log_level_from_syslog(int level)
{
	if (level <= 3)
		return RT_LOG_ERROR;
	if (level == 4)
		return RT_LOG_WARN;
	return level <= 6 ? RT_LOG_INFO : RT_LOG_DEBUG;
}

/* ---- formatting ------------------------------------------------------ */

/* A bounded writer: what does not fit is dropped, one byte is kept for
 * the newline. Not an rt_buf: a log line is written into the caller's
 * stack array without malloc (a log call must work when memory is out),
 * and a long line is cut, not refused. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + 1 >= b->cap)
		return;
	if (n > b->cap - 1 - b->len)
		n = b->cap - 1 - b->len;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void puts_(struct sbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* s escaped for a terminal; json: then for a JSON string too. */
static void put_text(struct sbuf *b, const char *s, bool json)
{
	size_t n = strlen(s), cut = n;
	char esc[6 * 64];

	if (cut > RT_LOG_MAX_MSG) {
		cut = RT_LOG_MAX_MSG;
		/* Not in the middle of a UTF-8 sequence. */
		while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	}
	/* 64 bytes at a time: a sequence cut at a piece's end is escaped
	 * as bytes, so pieces end at a sequence's start. */
	for (size_t i = 0; i < cut;) {
		size_t k = cut - i < 64 ? cut - i : 64, e;

		while (i + k < cut && k > 1 &&
		       ((unsigned char)s[i + k] & 0xc0) == 0x80)
			k--;
		e = rt_escape_terminal(s + i, k, esc);
		for (size_t j = 0; j < e; j++) {
			if (json && (esc[j] == '"' || esc[j] == '\\'))
				put(b, "\\", 1);
			put(b, esc + j, 1);
		}
		i += k;
	}
	if (cut < n)
		puts_(b, "...");
}

static void put_time(struct sbuf *b, int64_t ns)
{
	time_t secs = (time_t)(ns / 1000000000);
	struct tm tm;
	char t[40];
	int w;

	gmtime_r(&secs, &tm);
	w = snprintf(t, sizeof(t), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec, (int)(ns / 1000000 % 1000));
	if (w > 0)
		put(b, t, (size_t)w < sizeof(t) ? (size_t)w : sizeof(t) - 1);
}

static void put_repeated(struct sbuf *b, uint64_t repeated)
{
	char t[64];
	int w = snprintf(t, sizeof(t), " (repeated %llu time%s)",
			 (unsigned long long)repeated, repeated == 1 ? "" : "s");

	put(b, t, (size_t)w);
}

static void format_text(struct sbuf *b, enum rt_log_level level,
			const char *component, const char *fac,
			const char *msg, uint64_t repeated)
{
	put(b, " ", 1);
	puts_(b, level_text[level]);
	put(b, " ", 1);
	put_text(b, component, false);
	put(b, ": ", 2);
	if (fac && *fac) {
		put(b, "[", 1);
		put_text(b, fac, false);
		put(b, "] ", 2);
	}
	put_text(b, msg, false);
	if (repeated)
		put_repeated(b, repeated);
}

static void format_json(struct sbuf *b, enum rt_log_level level,
			const char *component, const char *fac,
			const char *msg, uint64_t repeated)
{
	char t[48];

	puts_(b, "\",\"level\":\"");
	puts_(b, level_json[level]);
	puts_(b, "\",\"component\":\"");
	put_text(b, component, true);
	if (fac && *fac) {
		puts_(b, "\",\"fac\":\"");
		put_text(b, fac, true);
	}
	puts_(b, "\",\"msg\":\"");
	put_text(b, msg, true);
	if (repeated) {
		put_repeated(b, repeated);
		snprintf(t, sizeof(t), "\",\"repeated\":%llu}",
			 (unsigned long long)repeated);
		puts_(b, t);
	} else {
		puts_(b, "\"}");
	}
}

/* A JSON line cut at the buffer's end: still one object, not ending in
 * half an escape. */
static void close_cut_json(char *out, size_t *len)
{
	size_t cut = *len - 3, bs = 0;   /* room for "}, newline, NUL */

	while (bs < cut && out[cut - 1 - bs] == '\\')
		bs++;
	if (bs % 2)
		cut--;
	memcpy(out + cut, "\"}", 2);
	*len = cut + 2;
}

size_t rt_log_format_line(char *out, size_t size, enum rt_log_format fmt,
			  int64_t time_ns, enum rt_log_level level,
			  const char *component, const char *fac,
			  const char *msg, uint64_t repeated)
{
	struct sbuf b = { out, 0, size };

	if (size < 2)
		return 0;
	if ((unsigned)level > RT_LOG_DEBUG)
		level = RT_LOG_ERROR;
	if (fmt == RT_LOG_JSON) {
		puts_(&b, "{\"time\":\"");
		put_time(&b, time_ns);
		format_json(&b, level, component, fac, msg, repeated);
		if (b.len == size - 1 && size > 64)
			close_cut_json(out, &b.len);
	} else {
		put_time(&b, time_ns);
		format_text(&b, level, component, fac, msg, repeated);
	}
	out[b.len++] = '\n';
	out[b.len] = '\0';
	return b.len;
}

/* ---- writing, with repeats folded ------------------------------------ */

/* With L.mu held. */
static void emit(int64_t now, enum rt_log_level level, const char *component,
		 const char *fac, const char *msg, uint64_t repeated)
{
	FILE *f = L.out ? L.out : stderr;
	size_t n = rt_log_format_line(L.line, sizeof(L.line), L.fmt, now,
				      level, component, fac, msg, repeated);

	fwrite(L.line, 1, n, f);
	fflush(f);
}

static void slot_free(struct repeat *r)
{
	free(r->msg);
	r->msg = NULL;
	r->count = 0;
}

/* With L.mu held: the summary of r's window, which then starts again (a
 * line still repeating keeps being folded). */
static void summarize(struct repeat *r, int64_t now)
{
	emit(now, r->level, r->component, r->fac, r->msg, r->count);
	r->count = 0;
	r->start_ns = now;
}

/* With L.mu held: summaries of ended windows; quiet slots freed. */
static void sweep(int64_t now, bool all)
{
	for (int i = 0; i < REPEAT_SLOTS; i++) {
		struct repeat *r = &L.rep[i];

		if (!r->msg || (!all && now - r->start_ns <
				(int64_t)RT_LOG_REPEAT_MS * 1000000))
			continue;
		if (r->count)
			summarize(r, now);
		else
			slot_free(r);
	}
	if (all)
		for (int i = 0; i < REPEAT_SLOTS; i++)
			slot_free(&L.rep[i]);
}

static bool same(const struct repeat *r, enum rt_log_level level,
		 const char *component, const char *fac, const char *msg)
{
	return r->msg && r->level == level &&
		!strncmp(r->component, component, sizeof(r->component) - 1) &&
		!strncmp(r->fac, fac ? fac : "", sizeof(r->fac) - 1) &&
		!strcmp(r->msg, msg);
}

/* With L.mu held: true when the line is a repeat to hold back (and
 * counts it); else remembers it as the first of a window. */
static bool held_back(int64_t now, enum rt_log_level level,
		      const char *component, const char *fac, const char *msg)
{
	struct repeat *r = NULL;

	if (level > RT_LOG_WARN)
		return false;
	for (int i = 0; i < REPEAT_SLOTS; i++)
		if (same(&L.rep[i], level, component, fac, msg)) {
			L.rep[i].count++;
			return true;
		}
	for (int i = 0; i < REPEAT_SLOTS && !r; i++)
		if (!L.rep[i].msg)
			r = &L.rep[i];
	if (!r) {               /* all taken: the oldest gives way */
		r = &L.rep[0];
		for (int i = 1; i < REPEAT_SLOTS; i++)
			if (L.rep[i].start_ns < r->start_ns)
				r = &L.rep[i];
		if (r->count)
			summarize(r, now);
		slot_free(r);
	}
	if (!(r->msg = strdup(msg)))
		return false;
	snprintf(r->component, sizeof(r->component), "%s", component);
	snprintf(r->fac, sizeof(r->fac), "%s", fac ? fac : "");
	r->level = level;
	r->start_ns = now;
	r->count = 0;
	return false;
}

static void log_line(enum rt_log_level level, const char *component,
		     const char *fac, const char *msg)
{
	int64_t now = now_ns();

	pthread_mutex_lock(&L.mu);
	sweep(now, false);
	if (!held_back(now, level, component, fac, msg))
		emit(now, level, component, fac, msg, 0);
	pthread_mutex_unlock(&L.mu);
}

void rt_logv(enum rt_log_level level, const char *component, const char *fmt,
	     va_list ap)
{
	char msg[RT_LOG_MAX_MSG + 4];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_line(level, component, NULL, msg);
}

void rt_log(enum rt_log_level level, const char *component, const char *fmt,
	    ...)
{
	va_list ap;

	va_start(ap, fmt);
	rt_logv(level, component, fmt, ap);
	va_end(ap);
}

void rt_log_fac(enum rt_log_level level, const char *component,
		const char *fac, const char *msg)
{
	log_line(level, component, fac, msg);
}

void rt_log_tick(void)
{
	int64_t now = now_ns();

	pthread_mutex_lock(&L.mu);
	sweep(now, false);
	pthread_mutex_unlock(&L.mu);
}

void rt_log_flush(void)
{
	int64_t now = now_ns();

	pthread_mutex_lock(&L.mu);
	sweep(now, true);
	pthread_mutex_unlock(&L.mu);
}

void rt_log_setup(enum rt_log_format fmt, FILE *out)
{
	int64_t now = now_ns();

	pthread_mutex_lock(&L.mu);
	sweep(now, true);
	L.fmt = fmt;
	L.out = out;
	L.active = true;
	pthread_mutex_unlock(&L.mu);
}

bool rt_log_active(void)
{
	bool on;

	pthread_mutex_lock(&L.mu);
	on = L.active;
	pthread_mutex_unlock(&L.mu);
	return on;
}

void rt_log_set_clock(int64_t (*fn)(void))
{
	pthread_mutex_lock(&L.mu);
	L.clock = fn;
	pthread_mutex_unlock(&L.mu);
}

/* ---- a FILE * that logs ---------------------------------------------- */

struct cookie {
	enum rt_log_level level;
	char component[24];
	size_t len;
	char buf[RT_LOG_MAX_MSG + 1];
};

static void cookie_line(struct cookie *c)
{
	c->buf[c->len] = '\0';
	log_line(c->level, c->component, NULL, c->buf);
	c->len = 0;
}

static ssize_t cookie_write(void *p, const char *s, size_t n)
{
	struct cookie *c = p;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n') {
			cookie_line(c);
			continue;
		}
		if (c->len == RT_LOG_MAX_MSG)   /* a very long line: in pieces */
			cookie_line(c);
		c->buf[c->len++] = s[i];
	}
	return (ssize_t)n;
}

static int cookie_close(void *p)
{
	struct cookie *c = p;

	if (c->len)
		cookie_line(c);
	free(c);
	return 0;
}

FILE *rt_log_stream(enum rt_log_level level, const char *component)
{
	struct cookie *c = calloc(1, sizeof(*c));
	FILE *f;

	if (!c)
		return NULL;
	c->level = level;
	snprintf(c->component, sizeof(c->component), "%s", component);
	f = fopencookie(c, "w", (cookie_io_functions_t){
		.write = cookie_write, .close = cookie_close });
	if (!f) {
		free(c);
		return NULL;
	}
	setvbuf(f, NULL, _IOLBF, 0);    /* a line as soon as it is whole */
	return f;
}
