/*
 * follow.c: files and globs followed as tail -F and Fluent Bit's tail
 * input do (ingest --follow). Every FOLLOW_MS a stat scan: each pattern
 * is expanded again (a new file is read from its start); a file that grew
 * is read on; one whose name now leads to another file (rotated: renamed,
 * a new one created) is read to its end, then the new one from its start;
 * one shorter than the offset reached (truncated) from 0. A stat scan
 * rather than inotify: it sees the same changes through symlinks such as
 * /var/log/containers' and on any file system, and costs a few stat
 * calls per file and scan.
 *
 * Positions: each record notes its end in the batch (corr_batch_add), the
 * `sources` row (path, -1); the file's identity, its inode, goes beside it
 * as (path, -2), so that a restart resumes the same file at its offset
 * and reads a file that replaced it from its start. A batch holds one
 * file per name: at a rotation or truncation the batch is committed
 * before the new file's first record.
 *
 * A followed name that leads nowhere any more (a pod's log removed) is
 * freed, its state with it, once the writer committed the batch that
 * carried its last position: a node's pods come and go for months, and
 * the names held stay those of the files there now.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver_int.h"

/* The stored position of a followed name, read while the writer idles. */
struct stored_pos {
	struct store *st;
	const char *name;
	int64_t off, ino;
	bool have_off, have_ino;
};

static void read_stored(void *ctx)
{
	struct stored_pos *q = ctx;

	q->have_off = store_position(q->st, q->name, -1, &q->off) == 0;
	q->have_ino = store_position(q->st, q->name, -2, &q->ino) == 0;
}

/* Where to start the file just opened as s: its stored offset when the
 * store knows this very file and it is not shorter, else 0. */
static int resume(struct pipeline_driver *d, struct drv_src *s, off_t size)
{
	struct stored_pos q = { pipeline_db_store(d->db), s->name, 0, 0,
				false, false };
	off_t off = 0;

	pipeline_writer_wait(d->w);
	if (pipeline_writer_try_read(d->w, read_stored, &q) != 1)
		return 0;
	if (q.have_off && q.off > 0 && q.off <= size &&
	    (!q.have_ino || q.ino == (int64_t)s->ino))
		off = (off_t)q.off;
	if (!off || lseek(s->fd, off, SEEK_SET) < 0)
		return 0;
	s->off = off;
	return ingest_set_offset(d->in, s->name, (uint64_t)off);
}

/* Opens the file the name s leads to now, from its start (or, at_start,
 * from its stored position). A file that took the place of another one
 * starts a new batch, with its offset 0 stated, so that no batch carries
 * the offsets of two files under one name. 0, 1 (no file there now), or
 * an error that stops the run. */
static int tail_open(struct pipeline_driver *d, struct drv_src *s,
		     bool at_start)
{
	struct stat sb;
	int fd = open(s->name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int rc;

	if (fd < 0)
		return 1;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return 1;
	}
	if (s->ino && (rc = drv_flush(d))) {
		close(fd);
		return rc;
	}
	s->fd = fd;
	s->dev = sb.st_dev;
	s->ino = sb.st_ino;
	s->off = 0;
	if (at_start)
		return resume(d, s, sb.st_size);
	s->dirty = true;
	return corr_batch_position(d->b, s->name, -1, 0);
}

/* Reads s from its offset to its end. */
static int tail_read(struct pipeline_driver *d, struct drv_src *s)
{
	int rc;
	off_t at;

	d->cur = s;
	rc = ingest_read_file(d->in, s->name, s->fd, &d->arena, drv_on_record,
			      drv_file_hook, d);
	d->cur = NULL;
	if ((at = lseek(s->fd, 0, SEEK_CUR)) >= 0)
		s->off = at;
	if (rc == RT_EIO) {
		d->status = RT_EIO;
		rc = 0;
	}
	return rc;
}

/* The file s had is done with (rotated away, removed, truncated): its
 * rest read, what its framer holds emitted. */
static int tail_close(struct pipeline_driver *d, struct drv_src *s)
{
	int rc = tail_read(d, s);

	d->cur = s;
	if (!rc)
		rc = ingest_finish(d->in, s->name, &d->arena, drv_on_record, d);
	d->cur = NULL;
	rt_arena_reset(&d->arena);
	close(s->fd);
	s->fd = -1;
	return rc;
}

/* One followed name at a scan: reopened, read on, or started over. */
static int tail_check(struct pipeline_driver *d, struct drv_src *s)
{
	struct stat ps, fs;
	bool named = stat(s->name, &ps) == 0;
	int rc;

	s->gone = !named;
	if (s->fd >= 0 && (!named || ps.st_ino != s->ino ||
			   ps.st_dev != s->dev)) {
		if ((rc = tail_close(d, s)))
			return rc;
	} else if (s->fd >= 0 && fstat(s->fd, &fs) == 0 && fs.st_size < s->off) {
		if ((rc = tail_close(d, s)))       /* truncated */
			return rc;
	}
	if (s->fd < 0 && named && (rc = tail_open(d, s, false)))
		return rc < 0 ? rc : 0;
	if (s->fd < 0)
		return 0;
	if (fstat(s->fd, &fs) == 0 && fs.st_size == s->off)
		return 0;
	return tail_read(d, s);
}

static uint64_t name_hash(const char *name)
{
	return rt_hash64(0, name, strlen(name));
}

struct name_key {
	const struct pipeline_driver *d;
	const char *name;
};

static bool name_eq(const void *ctx, uint32_t i)
{
	const struct name_key *k = ctx;

	return !strcmp(k->d->srcs[i].name, k->name);
}

/* The followed names, indexed once a scan: each match is then one probe,
 * however many files churn. */
static int index_sources(struct pipeline_driver *d)
{
	int rc = 0;

	rt_map_clear(&d->by_name);
	for (size_t i = 0; i < d->nsrcs && !rc; i++) {
		struct drv_src *s = &d->srcs[i];

		if (!s->followed)
			continue;
		rc = rt_map_insert(&d->by_name, name_hash(s->name),
				   (uint32_t)i);
	}
	return rc;
}

/* A new followed name, indexed. NULL on allocation failure. */
static struct drv_src *follow_add(struct pipeline_driver *d, const char *name)
{
	struct drv_src *s = drv_src_add(d, name);

	if (!s)
		return NULL;
	s->followed = true;
	if (++d->followed > d->followed_peak)
		d->followed_peak = d->followed;
	if (rt_map_insert(&d->by_name, name_hash(name),
			  (uint32_t)(d->nsrcs - 1)))
		return NULL;
	return s;
}

/* One name a pattern matches now: new or followed already. */
static int expand_one(struct pipeline_driver *d, const char *name,
		      bool at_start)
{
	struct name_key k = { d, name };
	struct drv_src *s;
	int rc;

	if (rt_map_find(&d->by_name, name_hash(name), name_eq, &k) !=
	    RT_MAP_NONE)
		return 0;
	if (!(s = follow_add(d, name)))
		return RT_ENOMEM;
	rc = tail_open(d, s, at_start);
	return rc < 0 ? rc : 0;
}

/* The names every pattern matches now that are not followed yet. */
static int expand(struct pipeline_driver *d, bool at_start)
{
	int rc = index_sources(d);

	for (int i = 0; i < d->nglobs && !rc; i++) {
		glob_t g;

		if (glob(d->globs[i], 0, NULL, &g)) {
			if (at_start)
				drv_error(d->globs[i], "no such file yet; "
					  "following the name");
			continue;
		}
		for (size_t k = 0; k < g.gl_pathc && !rc; k++)
			rc = expand_one(d, g.gl_pathv[k], at_start);
		globfree(&g);
	}
	return rc;
}

/* Whether a batch not yet committed may still point to s's name. */
static bool referenced(struct pipeline_driver *d, const struct drv_src *s)
{
	if (s->dirty)
		return true;
	if (s->gen < 0 || s->gen + 1 < d->nflush)
		return false;         /* the next submit waited for its commit */
	return s->gen + 1 > d->nflush || pipeline_writer_done(d->w) != 1;
}

/* Frees the followed names that are gone, once no batch the writer has
 * not committed points to them: a node's pods come and go for months. */
static void sweep(struct pipeline_driver *d)
{
	size_t k = 0;

	for (size_t i = 0; i < d->nsrcs; i++) {
		struct drv_src *s = &d->srcs[i];

		if (s->followed && s->fd < 0 && s->gone && !referenced(d, s)) {
			free(s->name);
			d->followed--;
			continue;
		}
		d->srcs[k++] = *s;
	}
	d->nsrcs = k;
}

int follow_start(struct pipeline_driver *d, char **paths, int n)
{
	char **streams = calloc((size_t)n + 1, sizeof(*streams));
	int nstreams = 0, rc;

	if (!streams || !(d->globs = calloc((size_t)n + 1, sizeof(char *)))) {
		free(streams);
		return RT_ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct stat sb;

		if (!strcmp(paths[i], "-") || (stat(paths[i], &sb) == 0 &&
		    !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)))
			streams[nstreams++] = paths[i];
		else
			d->globs[d->nglobs++] = paths[i];
	}
	rc = nstreams ? drv_open_all(d, streams, nstreams) : 0;
	free(streams);
	if (!rc)
		rc = expand(d, true);
	for (size_t i = 0; i < d->nsrcs && !rc; i++)
		if (d->srcs[i].followed && d->srcs[i].fd >= 0)
			rc = tail_read(d, &d->srcs[i]);
	return rc;
}

int follow_scan(struct pipeline_driver *d)
{
	int rc = expand(d, false);
	struct timespec t;

	for (size_t i = 0; i < d->nsrcs && !rc; i++)
		if (d->srcs[i].followed)
			rc = tail_check(d, &d->srcs[i]);
	if (!rc)
		sweep(d);
	clock_gettime(CLOCK_MONOTONIC, &t);
	d->scan_ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	return rc;
}

int follow_positions(struct pipeline_driver *d)
{
	for (size_t i = 0; i < d->nsrcs; i++) {
		struct drv_src *s = &d->srcs[i];
		int rc;

		if (!s->followed || !s->dirty)
			continue;
		s->dirty = false;
		s->gen = d->nflush;
		if ((rc = corr_batch_position(d->b, s->name, -2,
					      (int64_t)s->ino)))
			return rc;
	}
	return 0;
}
