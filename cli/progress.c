/*
 * progress.c: the live line of a long ingest on a terminal: records, the
 * read rate, tagged records and incidents opened, rewritten in place a few
 * times a second. Only when stderr is a terminal and the input is large
 * (known to be 64 MiB or more, or still running after two seconds); a
 * pipe or a log file never sees it.
 */
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define LARGE_BYTES (64ull << 20)
#define LARGE_NS 2000000000LL
#define EVERY_NS 250000000LL

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void cli_progress_start(struct cli_progress *p, char **paths, int n)
{
	struct stat sb;
	uint64_t total = 0;

	memset(p, 0, sizeof(*p));
	p->on = isatty(2);
	p->start_ns = p->last_ns = mono_ns();
	for (int i = 0; p->on && i < n; i++)
		if (strcmp(paths[i], "-") && !stat(paths[i], &sb) &&
		    S_ISREG(sb.st_mode))
			total += (uint64_t)sb.st_size;
	p->large = total >= LARGE_BYTES;
}

void cli_progress_tick(struct cli_progress *p, uint64_t records,
		       uint64_t bytes, uint64_t tagged, uint64_t incidents)
{
	int64_t now;
	double secs;

	if (!p->on)
		return;
	now = mono_ns();
	if (now - p->last_ns < EVERY_NS)
		return;
	if (!p->large && now - p->start_ns < LARGE_NS)
		return;
	p->last_ns = now;
	p->shown = true;
	secs = (double)(now - p->start_ns) / 1e9;
	fprintf(stderr, "\r%s: %" PRIu64 " records, %.1f MB/s, %" PRIu64
		" tagged, %" PRIu64 " incidents\033[K", rt_prog, records,
		secs > 0 ? (double)bytes / 1e6 / secs : 0.0, tagged, incidents);
	fflush(stderr);
}

void cli_progress_end(struct cli_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}
