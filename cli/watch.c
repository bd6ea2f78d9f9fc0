/*
 * watch.c: `incidents --watch` -- after the table, one line per incident
 * opened, changed or closed as the writer commits -- and `show --watch`
 * -- after the incident, each new or changed timeline entry.
 *
 * A commit is seen by PRAGMA data_version on the read connection, asked
 * every 200 ms: one short read, no table touched. After one, only what
 * can have changed is read: the open incidents and those newer than the
 * newest known (each by its index), then, by id, each incident that was
 * open and is no longer among them. What was printed is remembered as a
 * fingerprint of its row, so that a commit which left an incident as it
 * was prints nothing.
 *
 * No read transaction outlives a read: each statement is finalized before
 * the next, and a round's lines go to a temporary file that is copied to
 * stdout after the round's reads, so a stalled consumer of the output
 * never pins the WAL (see spool.c). Unlike spool.c this copies every
 * round: the output streams, it is not held until the end.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "watch.h"

#define POLL_NS 200000000L

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int cli_watch_init(struct cli_watch *w, struct store *st, const char *cmd)
{
	struct sigaction sa;

	memset(w, 0, sizeof(*w));
	w->cmd = cmd;
	w->what = "open incidents";
	if (store_data_version(st, &w->version)) {
		fprintf(stderr, "revtrail %s: %s\n", cmd, store_errmsg(st));
		return CLI_FAIL;
	}
	/* no temporary (no writable TMPDIR): lines go straight out */
	w->buf = tmpfile();
	if (!w->buf)
		w->buf = stdout;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);    /* no SA_RESTART: the sleep ends */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return 0;
}

void cli_watch_release(struct cli_watch *w)
{
	if (w->buf && w->buf != stdout)
		fclose(w->buf);
	free(w->e);
	memset(w, 0, sizeof(*w));
}

/* FNV-1a over every value of the row. */
uint64_t cli_watch_fingerprint(int n, const struct store_value *v)
{
	uint64_t h = 14695981039346656037ULL;

	for (int i = 0; i < n; i++) {
		const unsigned char *p = (const unsigned char *)&v[i].i;
		size_t len = sizeof(v[i].i);

		if (v[i].type == STORE_TEXT || v[i].type == STORE_BLOB) {
			p = (const unsigned char *)v[i].p;
			len = v[i].n;
		} else if (v[i].type == STORE_REAL) {
			p = (const unsigned char *)&v[i].d;
			len = sizeof(v[i].d);
		}
		h = (h ^ (uint64_t)v[i].type) * 1099511628211ULL;
		for (size_t k = 0; k < len; k++)
			h = (h ^ p[k]) * 1099511628211ULL;
	}
	return h;
}

/* The index of id in w->e, or where it would go. */
static size_t find(const struct cli_watch *w, int64_t id)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void forget(struct cli_watch *w, size_t i)
{
	memmove(&w->e[i], &w->e[i + 1], (w->n - i - 1) * sizeof(*w->e));
	w->n--;
}

/* false when there is no room (said once). */
static bool remember(struct cli_watch *w, size_t i, int64_t id, uint64_t fp)
{
	if (w->n == CLI_WATCH_MAX) {
		if (!w->full)
			fprintf(stderr, "revtrail %s: more than %d %s: "
				"changes of the others are not shown\n",
				w->cmd, CLI_WATCH_MAX, w->what);
		w->full = true;
		return false;
	}
	if (!w->e && !(w->e = malloc(CLI_WATCH_MAX * sizeof(*w->e))))
		return false;
	memmove(&w->e[i + 1], &w->e[i], (w->n - i) * sizeof(*w->e));
	w->e[i] = (struct cli_watch_entry){ id, fp, true };
	w->n++;
	return true;
}

enum cli_change cli_watch_row(struct cli_watch *w, int n,
			      const struct store_value *v, bool listing)
{
	int64_t id = v[0].i;
	bool open = n > 4 && v[4].type == STORE_TEXT &&
		!strcmp(v[4].p, "open");
	uint64_t fp = cli_watch_fingerprint(n, v);
	size_t i = find(w, id);
	bool known = i < w->n && w->e[i].id == id;
	bool is_new = id > w->max_id;

	if (is_new)
		w->max_id = id;
	if (known) {
		w->e[i].seen = true;
		if (w->e[i].print == fp)
			return CLI_SAME;
		w->e[i].print = fp;
		if (open)
			return CLI_CHANGED;
		forget(w, i);
		return CLI_CLOSED;
	}
	/* an incident open and unknown (not new) fits no longer in the
	 * memory of a full watcher: printing it at every commit would be
	 * noise */
	if (open && !remember(w, i, id, fp) && !is_new && !listing)
		return CLI_SAME;
	return listing ? CLI_LISTED : is_new ? CLI_OPENED : CLI_CHANGED;
}

enum cli_change cli_watch_key(struct cli_watch *w, int64_t key,
			      uint64_t fp)
{
	size_t i = find(w, key);

	if (i < w->n && w->e[i].id == key) {
		if (w->e[i].print == fp)
			return CLI_SAME;
		w->e[i].print = fp;
		return CLI_CHANGED;
	}
	/* past the bound, an entry never seen is not told as new at every
	 * commit: it is not told at all */
	return remember(w, i, key, fp) ? CLI_OPENED : CLI_SAME;
}

int cli_watch_wait(struct cli_watch *w, struct store *st)
{
	struct timespec ts = { 0, POLL_NS };
	int64_t v;
	int rc;

	while (!stop) {
		nanosleep(&ts, NULL);   /* a signal ends it early */
		if (stop)
			break;
		if ((rc = store_data_version(st, &v)))
			return rc;
		if (v != w->version) {
			w->version = v;
			return 1;
		}
	}
	return 0;
}

static int on_round_row(void *ctx, int n, const char *const *names,
			const struct store_value *v)
{
	struct cli_watch *w = ctx;

	w->change = cli_watch_row(w, n, v, false);
	return w->change == CLI_SAME ? 0 : w->fn(w->ctx, n, names, v);
}

int cli_watch_round(struct cli_watch *w, struct store *st,
		    const struct store_filter *f, store_row_fn fn, void *ctx)
{
	int rc;

	w->fn = fn;
	w->ctx = ctx;
	for (size_t i = 0; i < w->n; i++)
		w->e[i].seen = false;
	if ((rc = store_incidents_watch(st, f, w->max_id, on_round_row, w)))
		return rc;
	/* backwards: a closed one is forgotten, which moves only those
	 * after it */
	for (size_t i = w->n; i-- > 0;) {
		size_t before = w->n;

		if (w->e[i].seen)
			continue;
		if ((rc = store_incident_row(st, w->e[i].id, on_round_row, w)))
			return rc;
		if (w->n == before && i < w->n && !w->e[i].seen)
			forget(w, i);        /* gone (pruned) */
	}
	return 0;
}

int cli_watch_flush(struct cli_watch *w)
{
	char buf[65536];
	size_t n;
	int rc = 0;

	if (w->buf == stdout)
		return fflush(stdout) ? -1 : 0;
	if (fflush(w->buf) || fseek(w->buf, 0, SEEK_SET))
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), w->buf)) > 0)
		if (fwrite(buf, 1, n, stdout) != n)
			rc = -1;
	if (ferror(w->buf) || fflush(stdout))
		rc = -1;
	if (fseek(w->buf, 0, SEEK_SET) || ftruncate(fileno(w->buf), 0))
		rc = -1;
	return rc;
}
