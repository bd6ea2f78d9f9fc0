/*
 * watch.h (private to cli/): what `incidents --watch` and `show --watch`
 * remember between two commits of the writer, and the wait for the next
 * one.
 */
#ifndef REVTRAIL_CLI_WATCH_H
#define REVTRAIL_CLI_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "revtrail/store_read.h"

/* Open incidents remembered at most; past it the others' changes are not
 * shown (said once on stderr). */
#define CLI_WATCH_MAX 65536

enum cli_change { CLI_SAME, CLI_LISTED, CLI_OPENED, CLI_CHANGED,
		  CLI_CLOSED };

struct cli_watch_entry {
	int64_t id;
	uint64_t print;       /* a fingerprint of the row as printed */
	bool seen;            /* read again this round */
};

struct cli_watch {
	struct cli_watch_entry *e;   /* the open incidents, by id */
	size_t n;
	int64_t max_id;              /* the newest incident known */
	int64_t version;             /* PRAGMA data_version last read */
	bool full;                   /* CLI_WATCH_MAX reached (said) */
	FILE *buf;                   /* a round's lines, until its reads end */
	enum cli_change change;      /* of the row cli_watch_round hands on */
	const char *cmd;             /* "incidents": messages' prefix */
	const char *what;            /* what CLI_WATCH_MAX counts, plural */
	store_row_fn fn;             /* cli_watch_round's */
	void *ctx;
};

/* Catches SIGINT and SIGTERM (a flag; cli_watch_wait returns 0) and makes
 * the round buffer. 0, or CLI_FAIL after printing why, as command cmd. */
int cli_watch_init(struct cli_watch *w, struct store *st, const char *cmd);
void cli_watch_release(struct cli_watch *w);
/* What row (columns of store_incidents: id first, status fifth) is to the
 * watcher, remembered: CLI_LISTED while listing, then CLI_SAME when it
 * printed this row already. */
enum cli_change cli_watch_row(struct cli_watch *w, int n,
			      const struct store_value *v, bool listing);
/* A fingerprint of a row's values (FNV-1a). */
uint64_t cli_watch_fingerprint(int n, const struct store_value *v);
/* What the entry key whose row has fingerprint fp is to the watcher,
 * remembered: CLI_OPENED the first time, CLI_CHANGED when its row
 * changed, else CLI_SAME (also past CLI_WATCH_MAX entries, said once).
 * The entries are those of one kind: not mixed with cli_watch_row's. */
enum cli_change cli_watch_key(struct cli_watch *w, int64_t key,
			      uint64_t fp);
/* Waits for a commit by another connection, polling data_version every
 * 200 ms: 1 after one, 0 when a signal asks to stop, RT_EDB. */
int cli_watch_wait(struct cli_watch *w, struct store *st);
/* One round after a commit: the open and new incidents, then each
 * remembered one that was not among them (closed, or gone), one read
 * each; fn gets the rows whose cli_watch_row is not CLI_SAME, with
 * w->change saying how. */
int cli_watch_round(struct cli_watch *w, struct store *st,
		    const struct store_filter *f, store_row_fn fn, void *ctx);
/* Writes the round's lines to stdout, after its reads: 0, or -1. */
int cli_watch_flush(struct cli_watch *w);

#endif
