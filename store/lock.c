/*
 * lock.c: one writer per database file.
 *
 * A writer keeps the incident registry it loaded at open in memory and
 * applies every batch against it, so a second writer on the same file
 * would attribute its events with a stale registry (and two consumers
 * would fight over the offsets; two ingests through a hard link once
 * corrupted a database). store_open locks the database file itself before
 * it reads anything, and refuses when another process holds it, naming
 * that process. Readers take no lock: WAL lets them read while the writer
 * commits.
 *
 * The lock is on the file, not on its name: a lock file "DB.lock" keyed by
 * the path let a second writer in through a hard link, a symlink or a bind
 * mount, and followed a symlink planted at its own name. A lock on an
 * open descriptor of the database belongs to its inode, which every name
 * of the file reaches; and revtrail creates no file beside it.
 *
 * It is an open file description (OFD) lock, fcntl(F_OFD_SETLK): SQLite
 * takes POSIX fcntl locks on the same file, and a POSIX lock of our own
 * would be dropped when SQLite closes any descriptor of the file; an OFD
 * lock lives until its own descriptor is closed, and the kernel drops it
 * when the holder dies, kill -9 included. It covers bytes far above
 * SQLite's (PENDING, RESERVED and SHARED bytes sit at 1 GiB), so the two
 * never meet, and two stores opened by one process exclude each other.
 *
 * The holder's pid is in the lock itself: the range starts at LOCK_BASE
 * and is 1 + pid bytes long. Every writer asks for a range starting at
 * LOCK_BASE, so any two overlap; F_OFD_GETLK gives no pid (it reports
 * -1), but it gives the conflicting range, whose length names the
 * holder. Nothing to write, nothing to clean up, nothing a planted
 * symlink can redirect, and it is found by inode like the lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"

/* 2^62: far above SQLite's lock bytes (1 GiB) and any real file. */
#define LOCK_BASE ((off_t)1 << 62)
/* Wider than any pid (pid_max is at most 2^22). */
#define LOCK_SPAN ((off_t)1 << 32)

struct store_lock {
	int fd;
};

/* SQLite names that are not files: nothing to share, nothing to lock. */
static bool is_file_path(const char *path)
{
	return path[0] && strcmp(path, ":memory:") &&
	       strncmp(path, "file:", 5);
}

static int ofd_lock(int fd, int cmd, struct flock *fl)
{
	int rc;

	while ((rc = fcntl(fd, cmd, fl)) != 0 && errno == EINTR)
		;
	return rc;
}

/* The pid whose range overlaps ours; 0 when the holder is gone or
 * unknown. */
static long holder_pid(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = LOCK_BASE, .l_len = LOCK_SPAN };

	if (ofd_lock(fd, F_OFD_GETLK, &fl) || fl.l_type == F_UNLCK ||
	    fl.l_start != LOCK_BASE || fl.l_len < 2 || fl.l_len > LOCK_SPAN)
		return 0;
	return (long)(fl.l_len - 1);
}

static void refused(const char *path, int fd, char *err, size_t errlen)
{
	long holder = holder_pid(fd);

	if (holder > 0)
		snprintf(err, errlen, "%s: another revtrail (pid %ld) is "
			 "writing to this database; one writer per database, "
			 "try again when it has finished", path, holder);
	else
		snprintf(err, errlen, "%s: another revtrail is writing to "
			 "this database; one writer per database, try again "
			 "when it has finished", path);
}

/* The database, created empty when absent (SQLite takes an empty file for
 * a new database). O_NONBLOCK: a FIFO at the path must not hang the open;
 * anything but a regular file is refused. */
static int open_db_file(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK |
		      O_NOCTTY, 0644);

	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "cannot open %s: not a regular file",
			 path);
		close(fd);
		return -1;
	}
	return fd;
}

int store_lock(const char *path, struct store_lock **out, char *err,
	       size_t errlen)
{
	struct store_lock *l;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = LOCK_BASE };
	int fd;

	*out = NULL;
	if (!is_file_path(path))
		return 0;
	if ((fd = open_db_file(path, err, errlen)) < 0)
		return RT_EIO;
	fl.l_len = 1 + (off_t)getpid();
	if (ofd_lock(fd, F_OFD_SETLK, &fl)) {
		if (errno == EAGAIN || errno == EACCES)
			refused(path, fd, err, errlen);
		else
			snprintf(err, errlen, "cannot lock %s: %s", path,
				 strerror(errno));
		close(fd);
		return RT_EDB;
	}
	if (!(l = malloc(sizeof(*l)))) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return RT_ENOMEM;
	}
	l->fd = fd;
	*out = l;
	return 0;
}

void store_unlock(struct store_lock *l)
{
	if (!l)
		return;
	close(l->fd);           /* drops the OFD lock */
	free(l);
}
