/*
 * driver_int.h (private to pipeline/): the driver's sources and state,
 * shared by driver.c (the loop, the batches) and follow.c (files and
 * globs followed as tail -F does).
 */
#ifndef REVTRAIL_DRIVER_INT_H
#define REVTRAIL_DRIVER_INT_H

#include <poll.h>
#include <sys/types.h>

#include "revtrail/batches.h"
#include "revtrail/driver.h"
#include "revtrail/pipeline.h"

/* One input. Its name outlives every batch that points to it: a followed
 * file that is gone is freed only once the batch that carried its last
 * position is committed (follow.c); the others live as long as the driver,
 * and the array may move, the names not. */
struct drv_src {
	char *name;
	int fd;                   /* -1: closed (ended, or a followed name
	                           * that is gone for now) */
	bool stream;              /* pipe, FIFO, terminal: polled */
	bool followed;            /* a followed regular file */
	bool dirty;               /* a record of it is in the filling batch */
	bool gone;                /* followed: its name led nowhere at the
	                           * last scan */
	bool named;               /* followed: its name led to a file at */
	dev_t ndev;               /* this scan, this one (one stat a scan */
	ino_t nino;               /* serves adopt and tail_check) */
	int64_t drain_ns;         /* a rotated file read on until then
	                           * (monotonic), under the name it has
	                           * now; 0: not one */
	int64_t gen;              /* the flush that carried its last position
	                           * (d->nflush then), -1: none yet */
	dev_t dev;                /* followed: the file read, and the */
	ino_t ino;                /* offset reached in it */
	off_t off;
};

struct pipeline_driver {
	struct pipeline_driver_opts o;
	struct pipeline_db *db;
	struct rules *rules;
	struct ingest *in;
	struct pipeline_batches *bt;      /* one filling, one committing */
	struct pipeline_writer *w;        /* bt's */
	struct rt_arena arena;            /* the current chunk's records */
	struct drv_src *srcs;
	size_t nsrcs, srccap;
	struct drv_src *cur;              /* being fed */
	char **globs;                     /* follow: the patterns */
	int nglobs;
	struct rt_map by_name;            /* follow: srcs by name, */
	struct rt_map by_ino;             /* open ones by (dev, inode) */
	size_t followed, followed_peak;   /* follow: the names held */
	int64_t nflush;                   /* batches handed to the writer */
	char *buf;                        /* a read() of a stream */
	struct pollfd *pfd;               /* the streams polled */
	size_t *pidx;                     /* pfd[k] is srcs[pidx[k]] */
	size_t pfdcap, pidxcap;
	int64_t batch_ns;                 /* when b got its first record */
	int64_t scan_ns;                  /* follow: the last stat scan */
	bool fresh;                       /* a record came since the last tick */
	bool failed;                      /* a commit failed */
	int status;                       /* RT_EIO once an input failed */
};

/* driver.c */
/* After a chunk: the arena reset, the stop flag, the batch cadence. 0,
 * DRV_STOPPED, or the error of a commit. */
#define DRV_STOPPED 3
int drv_tick(void *ctx);
/* Hands the filling batch to the writer (follow.c at a rotation). */
int drv_flush(struct pipeline_driver *d);
int drv_on_record(void *ctx, struct rt_record *rec);
/* After each slice of a file: the tick, then what the streams have ready,
 * without waiting (ingest_read_file's between). */
int drv_file_hook(void *ctx);
/* Every input open (none: stdin); those that fail are reported (the run
 * then returns RT_EIO) and skipped. 0 or RT_ENOMEM. */
int drv_open_all(struct pipeline_driver *d, char **paths, int n);
/* "revtrail: NAME: MSG" on stderr, or a log line. */
void drv_error(const char *name, const char *msg);
/* A new source named name (copied); NULL on allocation failure. */
struct drv_src *drv_src_add(struct pipeline_driver *d, const char *name);

/* follow.c */
/* Expands the patterns, resumes every file at its stored position and
 * reads each to its end. 0 or an error that stops the run. */
int follow_start(struct pipeline_driver *d, char **globs, int n);
/* Every FOLLOW_MS: new files, growth, rotation, truncation. */
#define FOLLOW_MS 250
int follow_scan(struct pipeline_driver *d);
/* Before a batch goes to the writer: each followed file's identity beside
 * its offset. 0 or RT_ENOMEM. */
int follow_positions(struct pipeline_driver *d);

#endif
