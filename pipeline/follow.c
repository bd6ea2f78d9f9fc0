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
#include <limits.h>
#include <stdio.h>
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
 * rest read, what its framer holds emitted; its fd left open. */
static int tail_finish(struct pipeline_driver *d, struct drv_src *s)
{
	int rc = tail_read(d, s);

	d->cur = s;
	if (!rc)
		rc = ingest_finish(d->in, s->name, &d->arena, drv_on_record, d);
	d->cur = NULL;
	rt_arena_reset(&d->arena);
	return rc;
}

/* tail_finish, then the file closed. */
static int tail_close(struct pipeline_driver *d, struct drv_src *s)
{
	int rc = tail_finish(d, s);

	close(s->fd);
	s->fd = -1;
	return rc;
}

static uint64_t name_hash(const char *name)
{
	return rt_hash64(0, name, strlen(name));
}

static uint64_t ino_hash(dev_t dev, ino_t ino)
{
	uint64_t k[2] = { (uint64_t)dev, (uint64_t)ino };

	return rt_hash64(1, k, sizeof(k));
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

struct ino_key {
	const struct pipeline_driver *d;
	dev_t dev;
	ino_t ino;
};

static bool ino_eq(const void *ctx, uint32_t i)
{
	const struct ino_key *k = ctx;
	const struct drv_src *s = &k->d->srcs[i];

	return s->fd >= 0 && s->ino == k->ino && s->dev == k->dev;
}

/* The followed names, and the open files by identity, indexed once a
 * scan: each match is then one probe, however many files churn. */
static int index_sources(struct pipeline_driver *d)
{
	int rc = 0;

	rt_map_clear(&d->by_name);
	rt_map_clear(&d->by_ino);
	for (size_t i = 0; i < d->nsrcs && !rc; i++) {
		struct drv_src *s = &d->srcs[i];

		if (!s->followed)
			continue;
		if (!s->drain_ns)
			rc = rt_map_insert(&d->by_name, name_hash(s->name),
					   (uint32_t)i);
		if (!rc && s->fd >= 0)
			rc = rt_map_insert(&d->by_ino, ino_hash(s->dev, s->ino),
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

/* The index of the open file (dev, ino), followed under a name that no
 * longer leads to it (renamed), other than si; RT_MAP_NONE if none. A hard
 * link beside a name that still leads to its file is not one. */
static uint32_t renamed_from(const struct pipeline_driver *d, size_t si,
			     dev_t dev, ino_t ino)
{
	struct ino_key k = { d, dev, ino };
	const struct drv_src *o;
	uint32_t i;

	i = rt_map_find(&d->by_ino, ino_hash(dev, ino), ino_eq, &k);
	if (i == RT_MAP_NONE || i == si)
		return RT_MAP_NONE;
	o = &d->srcs[i];
	if (!o->drain_ns && o->named && o->nino == ino && o->ndev == dev)
		return RT_MAP_NONE;
	return i;
}

/* s, at index si, now reads fd (its stat sb) from off: indexed by
 * identity, its offset stated in the filling batch. */
static int opened(struct pipeline_driver *d, size_t si, int fd,
		  const struct stat *sb, off_t off)
{
	struct drv_src *s = &d->srcs[si];
	int rc;

	s->fd = fd;
	s->dev = sb->st_dev;
	s->ino = sb->st_ino;
	s->off = off;
	s->dirty = true;
	if ((rc = rt_map_insert(&d->by_ino, ino_hash(s->dev, s->ino),
				(uint32_t)si)))
		return rc;
	if (off && (rc = ingest_set_offset(d->in, s->name, (uint64_t)off)))
		return rc;
	return pipeline_batches_position(d->bt, s->name, -1, (int64_t)off);
}

/*
 * The file followed as srcs[oi] is now named as srcs[si] (rotated to a
 * name the patterns match, as app.log to app.log.1 under 'app.log*'): the
 * same file, by (device, inode), so it is read on from its offset under
 * that name rather than again from its start, as Fluent Bit's tail does.
 * Its old name is closed first (its rest read), and reopened by
 * tail_check when a new file takes it. 0, 1 (gone again), or an error.
 */
static int follow_renamed(struct pipeline_driver *d, size_t oi, size_t si)
{
	struct drv_src *s;
	struct stat sb;
	off_t off;
	int rc, fd;

	if ((rc = tail_close(d, &d->srcs[oi])))
		return rc;
	off = d->srcs[oi].off;
	s = &d->srcs[si];
	if (s->ino && (rc = drv_flush(d)))     /* its old file's position */
		return rc;
	if ((fd = open(s->name, O_RDONLY | O_CLOEXEC | O_NOCTTY |
		       O_NONBLOCK)) < 0)
		return 1;
	if (fstat(fd, &sb) < 0 || sb.st_ino != d->srcs[oi].ino ||
	    sb.st_dev != d->srcs[oi].dev || sb.st_size < off)
		off = 0;        /* changed again since the scan's stat */
	if (off && lseek(fd, off, SEEK_SET) < 0)
		off = 0;
	return opened(d, si, fd, &sb, off);
}

/* Opens the file the name s leads to now, from its start (or, at_start,
 * from its stored position). A file that took the
 * place of another one starts a new batch, with its offset stated, so that
 * no batch carries the offsets of two files under one name. 0, 1 (no file
 * there now), or an error that stops the run. */
static int tail_open(struct pipeline_driver *d, struct drv_src *s,
		     bool at_start)
{
	size_t si = (size_t)(s - d->srcs);
	struct stat sb;
	int fd, rc;

	if ((fd = open(s->name, O_RDONLY | O_CLOEXEC | O_NOCTTY |
		       O_NONBLOCK)) < 0)
		return 1;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return 1;
	}
	if (s->ino && (rc = drv_flush(d))) {
		close(fd);
		return rc;
	}
	if (!at_start)
		return opened(d, si, fd, &sb, 0);
	s->fd = fd;
	s->dev = sb.st_dev;
	s->ino = sb.st_ino;
	s->off = 0;
	if ((rc = rt_map_insert(&d->by_ino, ino_hash(s->dev, s->ino),
				(uint32_t)si)))
		return rc;
	return resume(d, s, sb.st_size);
}

/* Where s's name leads at this scan: a regular file, or nothing. */
static void name_stat(struct drv_src *s)
{
	struct stat sb;

	s->named = stat(s->name, &sb) == 0 && S_ISREG(sb.st_mode);
	s->ndev = s->named ? sb.st_dev : 0;
	s->nino = s->named ? sb.st_ino : 0;
}

/* srcs[si]'s name leads to a file followed under a name that no longer
 * leads to it: si takes it on from there (its own file, if open, closed
 * first, unless only_closed). *moved tells that it did. */
static int adopt(struct pipeline_driver *d, size_t si, bool only_closed,
		 bool *moved)
{
	struct drv_src *s = &d->srcs[si];
	uint32_t oi;
	int rc;

	if (!s->followed || s->drain_ns || !s->named ||
	    (only_closed && s->fd >= 0) ||
	    (s->fd >= 0 && s->nino == s->ino && s->ndev == s->dev) ||
	    (oi = renamed_from(d, si, s->ndev, s->nino)) == RT_MAP_NONE)
		return 0;
	*moved = true;
	if (s->fd >= 0 && (rc = tail_close(d, s)))
		return rc;
	rc = follow_renamed(d, oi, si);
	return rc < 0 ? rc : 0;
}

/*
 * Rotations among the names followed (app.log to app.log.1, app.log.1 to
 * app.log.2): each file goes to the name that leads to it now. Names with
 * no file open take theirs first, so that along a chain the oldest moves
 * before the name it left takes the next; a name still holding a file
 * that went elsewhere, out of the patterns' reach, gives it up only when
 * nothing else moves. Each move gives a file to its own name, so this ends.
 */
static int adopt_all(struct pipeline_driver *d)
{
	bool moved;
	int rc = 0;

	do {
		moved = false;
		for (size_t i = 0; i < d->nsrcs && !rc; i++)
			rc = adopt(d, i, true, &moved);
		for (size_t i = 0; i < d->nsrcs && !rc && !moved; i++)
			rc = adopt(d, i, false, &moved);
	} while (moved && !rc);
	return rc;
}

/* The name a rotated file goes on being read under: its old one behind a
 * prefix, which keeps what the path says (pod, namespace, container) and
 * gives it a framer of its own (ingest keeps one per name); NULL when
 * another source has that name already (rotated again within the grace).
 * buf holds PATH_MAX bytes. */
static const char *drain_name(struct pipeline_driver *d, struct drv_src *s,
			      char *buf)
{
	if (snprintf(buf, PATH_MAX, "(rotated) %s", s->name) >= PATH_MAX)
		return NULL;
	for (size_t i = 0; i < d->nsrcs; i++)
		if (!strcmp(d->srcs[i].name, buf))
			return NULL;
	return buf;
}

/*
 * s's name leads to another file now (rotated): what its old file holds
 * is read, and, as Fluent Bit's rotate_wait, the file goes on being read
 * for ROTATE_WAIT_NS under drain_name, so that a line its writer appends
 * through the fd it still holds is not lost. s's name is free for the
 * new file at once. A removed file is closed at once. 0 or an error that
 * stops the run.
 */
#define ROTATE_WAIT_NS (5 * 1000000000LL)
static int rotate_away(struct pipeline_driver *d, size_t si)
{
	char buf[PATH_MAX];
	const char *name = NULL;
	struct drv_src *s = &d->srcs[si], *w = NULL;
	struct timespec t;
	struct stat fs;
	int rc;

	/* A removed file (a pod's, deleted with it) has no writer left. */
	if (!(rc = tail_finish(d, s)) && fstat(s->fd, &fs) == 0 &&
	    fs.st_nlink > 0 && (name = drain_name(d, s, buf)))
		w = follow_add(d, name);
	if (!w) {
		close(d->srcs[si].fd);
		d->srcs[si].fd = -1;
		return rc;
	}
	s = &d->srcs[si];
	clock_gettime(CLOCK_MONOTONIC, &t);
	*w = (struct drv_src){ .name = w->name, .fd = s->fd, .followed = true,
			       .gone = true, .dev = s->dev, .ino = s->ino,
			       .off = s->off, .gen = -1,
			       .drain_ns = (int64_t)t.tv_sec * 1000000000 +
					   t.tv_nsec + ROTATE_WAIT_NS };
	s->fd = -1;
	if (s->off && (rc = ingest_set_offset(d->in, w->name,
					      (uint64_t)s->off)))
		return rc;
	return rt_map_insert(&d->by_ino, ino_hash(w->dev, w->ino),
			     (uint32_t)(d->nsrcs - 1));
}

/* A rotated file in its grace: read on, closed at its end. */
static int drain_check(struct pipeline_driver *d, struct drv_src *s)
{
	struct timespec t;
	struct stat fs;

	if (s->fd < 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if ((int64_t)t.tv_sec * 1000000000 + t.tv_nsec >= s->drain_ns)
		return tail_close(d, s);
	if (fstat(s->fd, &fs) == 0 && fs.st_size == s->off)
		return 0;
	return tail_read(d, s);
}

/* One followed name at a scan: reopened, read on, or started over. */
static int tail_check(struct pipeline_driver *d, size_t si)
{
	struct drv_src *s = &d->srcs[si];
	struct stat fs;
	bool named;
	int rc;

	if (s->drain_ns)
		return drain_check(d, s);
	named = s->named;
	s->gone = !named;
	if (s->fd >= 0 && (!named || s->nino != s->ino ||
			   s->ndev != s->dev)) {
		if ((rc = rotate_away(d, si)))
			return rc;
		s = &d->srcs[si];
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
	if (!at_start)
		return 0;       /* follow_scan's adopt_all, then tail_check */
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
		if (d->srcs[i].followed && !d->srcs[i].drain_ns)
			name_stat(&d->srcs[i]);
	if (!rc)
		rc = adopt_all(d);
	for (size_t i = 0; i < d->nsrcs && !rc; i++)
		if (d->srcs[i].followed)
			rc = tail_check(d, i);
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
		if ((rc = pipeline_batches_position(d->bt, s->name, -2,
					      (int64_t)s->ino)))
			return rc;
	}
	return 0;
}
