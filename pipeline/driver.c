/*
 * driver.c: the loop of `revtrail ingest` (revtrail/driver.h). Every input
 * is open at once. Regular files are read a slice at a time (mapped, see
 * ingest/src_file.c), one after another, for each is finite and never
 * waits; after each slice the tick runs, which also reads whatever the
 * streams (pipes, FIFOs, stdin) have ready, so a stream is never held up
 * by a long file. Then the streams alone are polled until each ends. Every
 * source has its own framing state in the ingest object, keyed by its
 * name, and all feed the same batch.
 *
 * The tick, after each chunk, resets the scratch arena the chunk's
 * records lived in (the batch copied what it keeps), and when the batch
 * is over its bound (records, bytes kept, one second since its first
 * record, or a pause: no record since the last tick, which a quiet poll
 * also runs) hands it to the writer thread, which correlates and stores it
 * in one transaction while the loop fills the other batch. A stream is
 * thus batched like a file while it flows, and a record on a quiet
 * `tail -F` pipe is still committed within a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "revtrail/log.h"
#include "driver_int.h"

/* Events a batch holds before its commit. A commit rewrites every page it
 * touched, and the identity index is random, so larger batches write
 * fewer pages; past this size the pages a larger batch spared no longer
 * paid for the memory it held.
 *
 * These caps, with the store's page cache (16 MiB), are what bounds ingest's
 * memory: two batches live at once (one filling, one committing), each up
 * to BATCH_EVENTS events of 488 bytes (8 MiB) plus their text in its arena
 * (at most BATCH_BYTES). Peak RSS thus climbs with input only until both
 * batches are full and the database outgrows the cache, then stays flat
 * (figures: docs/benchmarks.md). */
#define BATCH_EVENTS PIPELINE_BATCH_EVENTS
#define BATCH_BYTES (16u << 20)
#define BATCH_NS 1000000000LL

/* A quiet poll still ticks this often, so a paused stream's batch is
 * committed and a signal is seen. */
#define QUIET_MS 250

/* A stream's read: large enough that syscalls vanish from profiles, small
 * enough to stay in L2 between the kernel's copy and the scan (as
 * ingest/src_file.c's). */
#define READ_CHUNK (1u << 17)

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* "revtrail: NAME: problem", or a log line under --log-format. */
void drv_error(const char *name, const char *msg)
{
	if (rt_log_active())
		rt_log(RT_LOG_ERROR, "ingest", "%s: %s", name, msg);
	else
		fprintf(stderr, "%s: %s: %s\n", rt_prog, name, msg);
}

int pipeline_driver_new(struct pipeline_db *db, struct rules *rules,
			struct ingest *in, const struct pipeline_driver_opts *o,
			struct store_stats *stats, struct pipeline_driver **out)
{
	struct pipeline_driver *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return RT_ENOMEM;
	d->o = *o;
	d->db = db;
	d->rules = rules;
	d->in = in;
	rt_arena_init(&d->arena);
	rt_map_init(&d->by_name);
	rt_map_init(&d->by_ino);
	if (!(d->buf = malloc(READ_CHUNK)) ||
	    pipeline_batches_new(db, o->keep_untagged, stats, &d->bt)) {
		pipeline_driver_free(d);
		return RT_ENOMEM;
	}
	d->w = pipeline_batches_writer(d->bt);
	*out = d;
	return 0;
}

void pipeline_driver_free(struct pipeline_driver *d)
{
	if (!d)
		return;
	pipeline_batches_free(d->bt);
	for (size_t i = 0; i < d->nsrcs; i++) {
		if (d->srcs[i].fd > 0)
			close(d->srcs[i].fd);
		free(d->srcs[i].name);
	}
	free(d->srcs);
	free(d->globs);
	rt_map_release(&d->by_name);
	rt_map_release(&d->by_ino);
	free(d->pfd);
	free(d->pidx);
	free(d->buf);
	rt_arena_release(&d->arena);
	free(d);
}

void pipeline_driver_counts(const struct pipeline_driver *d,
			    struct pipeline_driver_counts *out)
{
	struct pipeline_batches_counts c;

	pipeline_batches_counts(d->bt, &c);
	out->tagged = c.tagged;
	out->untagged = c.untagged;
	out->helm = c.helm;
	out->followed = d->followed;
	out->followed_peak = d->followed_peak;
}

void pipeline_driver_stats(struct pipeline_driver *d, struct store_stats *out)
{
	pipeline_writer_stats(d->w, out);
}

struct drv_src *drv_src_add(struct pipeline_driver *d, const char *name)
{
	struct drv_src *s;
	char *copy = strdup(name);

	if (!copy || RT_GROW(d->srcs, d->nsrcs + 1, d->srccap)) {
		free(copy);
		return NULL;
	}
	s = &d->srcs[d->nsrcs++];
	*s = (struct drv_src){ .name = copy, .fd = -1, .gen = -1 };
	return s;
}

int drv_on_record(void *ctx, struct rt_record *rec)
{
	struct pipeline_driver *d = ctx;
	struct rt_class cls;
	int err;

	rec->cluster = d->o.cluster;
	err = pipeline_batches_add(d->bt, d->rules, rec, &d->arena, &cls);
	if (d->o.on_record)
		d->o.on_record(d->o.ctx, rec, &cls);
	d->fresh = true;
	if (d->cur)
		d->cur->dirty = true;
	return err;
}

int drv_flush(struct pipeline_driver *d)
{
	int err;

	d->batch_ns = 0;
	if (d->failed)
		return RT_EDB;
	if ((err = follow_positions(d)))
		return err;
	if (pipeline_batches_empty(d->bt)) {
		pipeline_batches_drop(d->bt);
		return 0;
	}
	if ((err = pipeline_batches_submit(d->bt))) {
		d->failed = true;
		return err;
	}
	d->nflush++;
	return 0;
}

/* A paused input may stay quiet for long, and committing while it is idle
 * costs nothing, so a batch waits for more only while records flow. */
int drv_tick(void *ctx)
{
	struct pipeline_driver *d = ctx;
	size_t pending = pipeline_batches_pending(d->bt);
	bool paused = !d->fresh;
	int64_t now;

	rt_arena_reset(&d->arena);
	d->fresh = false;
	if (d->o.stop && *d->o.stop)
		return DRV_STOPPED;
	if (d->o.on_tick)
		d->o.on_tick(d->o.ctx);
	if (!pending)
		return 0;
	now = now_ns();
	if (!d->batch_ns)
		d->batch_ns = now;
	if (paused || pending >= BATCH_EVENTS ||
	    pipeline_batches_bytes(d->bt) >= BATCH_BYTES ||
	    now - d->batch_ns >= BATCH_NS)
		return drv_flush(d);
	return 0;
}

/* A stream at its end: what its framer holds is emitted, then it closes. */
static int stream_end(struct pipeline_driver *d, struct drv_src *s)
{
	int rc = ingest_finish(d->in, s->name, &d->arena, drv_on_record, d);

	if (s->fd > 0)
		close(s->fd);
	s->fd = -1;
	return rc;
}

/* One read of each stream that poll found ready; timeout_ms as poll's.
 * Returns 0 or an error that stops the run. */
static int service_streams(struct pipeline_driver *d, int timeout_ms)
{
	struct pollfd *pfd;
	size_t *idx;
	int n = 0, ready;

	if (RT_GROW(d->pfd, d->nsrcs, d->pfdcap) ||
	    RT_GROW(d->pidx, d->nsrcs, d->pidxcap))
		return RT_ENOMEM;
	pfd = d->pfd;
	idx = d->pidx;
	for (size_t i = 0; i < d->nsrcs; i++)
		if (d->srcs[i].stream && d->srcs[i].fd >= 0) {
			pfd[n] = (struct pollfd){ .fd = d->srcs[i].fd,
						  .events = POLLIN };
			idx[n++] = i;
		}
	if (!n)
		return 0;
	ready = poll(pfd, (nfds_t)n, timeout_ms);
	for (int k = 0; k < n && ready > 0; k++) {
		struct drv_src *s = &d->srcs[idx[k]];
		size_t got;
		int rc;

		if (!pfd[k].revents)
			continue;
		d->cur = s;
		rc = ingest_read_some(d->in, s->name, s->fd, d->buf, READ_CHUNK,
				      &d->arena, drv_on_record, d, &got);
		d->cur = NULL;
		rt_arena_reset(&d->arena);
		if (rc == RT_EIO)
			d->status = RT_EIO;
		else if (rc < 0 || rc > 1)
			return rc;
		if ((rc == 0 && got == 0) || rc == RT_EIO)
			if ((rc = stream_end(d, s)))
				return rc;
	}
	return 0;
}

/* After each slice of a regular file: the tick, then what the streams
 * have ready, without waiting. */
int drv_file_hook(void *ctx)
{
	struct pipeline_driver *d = ctx;
	struct drv_src *cur = d->cur;
	int rc = drv_tick(d);

	if (!rc)
		rc = service_streams(d, 0);
	d->cur = cur;
	return rc;
}

/* Opens path: a FIFO without blocking until its writer comes (poll then
 * waits for it), anything else as it is. -1 with errno on failure. */
static int open_input(const char *path, bool *stream)
{
	struct stat sb;
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY, fd;

	if (stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode))
		flags |= O_NONBLOCK;
	if ((fd = open(path, flags)) < 0)
		return -1;
	*stream = fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode);
	return fd;
}


int drv_open_all(struct pipeline_driver *d, char **paths, int n)
{
	static char *stdin_only[] = { "-" };

	if (n == 0) {
		paths = stdin_only;
		n = 1;
	}
	for (int i = 0; i < n; i++) {
		struct drv_src *s = drv_src_add(d, paths[i]);
		struct stat sb;

		if (!s)
			return RT_ENOMEM;
		if (!strcmp(paths[i], "-")) {
			s->fd = 0;
			s->stream = fstat(0, &sb) < 0 || !S_ISREG(sb.st_mode);
		} else if ((s->fd = open_input(paths[i], &s->stream)) < 0) {
			drv_error(paths[i], strerror(errno));
			d->status = RT_EIO;
		}
	}
	return 0;
}

static int read_files(struct pipeline_driver *d)
{
	for (size_t i = 0; i < d->nsrcs; i++) {
		struct drv_src *s = &d->srcs[i];
		int rc;

		if (s->stream || s->followed || s->fd < 0)
			continue;
		d->cur = s;
		rc = ingest_read_file(d->in, s->name, s->fd, &d->arena,
				      drv_on_record, drv_file_hook, d);
		d->cur = NULL;
		if (rc == RT_EIO) {
			d->status = RT_EIO;
			rc = 0;
		}
		if (rc || (rc = stream_end(d, s)))
			return rc;
	}
	return 0;
}

static bool streams_open(const struct pipeline_driver *d)
{
	for (size_t i = 0; i < d->nsrcs; i++)
		if (d->srcs[i].stream && d->srcs[i].fd >= 0)
			return true;
	return false;
}

static int run_loop(struct pipeline_driver *d, char **paths, int n)
{
	int rc;

	if (d->o.follow)
		rc = follow_start(d, paths, n);
	else if (!(rc = drv_open_all(d, paths, n)))
		rc = read_files(d);
	while (!rc && (d->o.follow || streams_open(d))) {
		rc = service_streams(d, QUIET_MS);
		if (!rc)
			rc = drv_tick(d);
		if (!rc && d->o.follow &&
		    now_ns() - d->scan_ns >= FOLLOW_MS * 1000000LL)
			rc = follow_scan(d);
		if (!rc && !d->o.follow && !streams_open(d))
			break;
		if (!rc && d->o.follow && !streams_open(d))
			poll(NULL, 0, FOLLOW_MS);
	}
	return rc;
}

int pipeline_driver_run(struct pipeline_driver *d, char **paths, int npaths)
{
	int rc = run_loop(d, paths, npaths), err;

	if (rc == DRV_STOPPED)
		rc = 0;
	/* EOF, a signal, or an input that failed: keep what was read. A
	 * failed commit stops here: the registry may be ahead of the store. */
	if (!d->failed && (err = drv_flush(d)) && !rc)
		rc = err;
	if (!d->failed && (err = pipeline_writer_wait(d->w))) {
		d->failed = true;
		if (!rc)
			rc = err;
	}
	if (d->failed && !rc)
		rc = RT_EDB;
	return rc ? rc : d->status;
}
