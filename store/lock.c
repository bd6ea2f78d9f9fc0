/*
 * lock.c: one writer per database file.
 *
 * A writer keeps the incident registry it loaded at open in memory and
 * applies every batch against it, so a second writer on the same file
 * would attribute its events with a stale registry (and two consumers
 * would fight over the offsets). store_open takes an exclusive flock(2) on
 * "DB.lock" beside the database before it reads anything, and refuses when
 * another process holds it, naming that process. Readers take no lock:
 * WAL lets them read while the writer commits.
 *
 * flock, not fcntl: an fcntl lock belongs to the process and is dropped
 * when any descriptor of the file is closed, and two stores opened by one
 * process would not exclude each other. The kernel drops a flock when its
 * holder dies, kill -9 included, so a lock file left by a killed writer is
 * harmless. A writer that closes removes the file while it still holds
 * it; a writer that locked a file which is no longer the one at the path
 * (removed meanwhile) tries again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"

struct store_lock {
	int fd;
	char *path;
};

/* SQLite names that are not files: nothing to share, nothing to lock. */
static bool is_file_path(const char *path)
{
	return path[0] && strcmp(path, ":memory:") &&
	       strncmp(path, "file:", 5);
}

/* The pid the holder wrote, for the message; 0 when unreadable. */
static long holder_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* Opens and locks lock_path. 0 and *fd set, 1 when the file was removed
 * or replaced between the open and the lock (try again), else an error. */
static int lock_once(const char *path, const char *lock_path, int *fd_out,
		     char *err, size_t errlen)
{
	struct stat held, named;
	int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	int rc;

	if (fd < 0) {
		snprintf(err, errlen, "cannot create the writer lock %s: %s",
			 lock_path, strerror(errno));
		return RT_EIO;
	}
	while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
		;
	if (rc != 0) {
		long holder = errno == EWOULDBLOCK ? holder_pid(fd) : 0;

		if (errno != EWOULDBLOCK)
			snprintf(err, errlen, "cannot lock %s: %s", lock_path,
				 strerror(errno));
		else if (holder > 0)
			snprintf(err, errlen, "%s: another revtrail (pid %ld) "
				 "is writing to this database; one writer per "
				 "database, try again when it has finished",
				 path, holder);
		else
			snprintf(err, errlen, "%s: another revtrail is writing "
				 "to this database; one writer per database, "
				 "try again when it has finished", path);
		close(fd);
		return RT_EDB;
	}
	/* The last holder unlinks the file before it lets go: a lock on a
	 * file no longer at lock_path excludes nobody. */
	if (fstat(fd, &held) || stat(lock_path, &named) ||
	    held.st_dev != named.st_dev || held.st_ino != named.st_ino) {
		close(fd);
		return 1;
	}
	*fd_out = fd;
	return 0;
}

int store_lock(const char *path, struct store_lock **out, char *err,
	       size_t errlen)
{
	struct store_lock *l;
	char pid[32];
	int rc = 1, n;

	*out = NULL;
	if (!is_file_path(path))
		return 0;
	if (!(l = malloc(sizeof(*l))) ||
	    asprintf(&l->path, "%s.lock", path) < 0) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return RT_ENOMEM;
	}
	for (int i = 0; i < 100 && rc == 1; i++)
		rc = lock_once(path, l->path, &l->fd, err, errlen);
	if (rc) {
		if (rc == 1)
			snprintf(err, errlen, "%s: the writer lock keeps being "
				 "replaced", l->path);
		free(l->path);
		free(l);
		return rc == 1 ? RT_EDB : rc;
	}
	/* Who holds it, for the next one's message; best effort. */
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(l->fd, 0) == 0 && pwrite(l->fd, pid, (size_t)n, 0) != n)
		(void)0;
	*out = l;
	return 0;
}

void store_unlock(struct store_lock *l)
{
	if (!l)
		return;
	unlink(l->path);        /* while still held: see lock_once */
	close(l->fd);
	free(l->path);
	free(l);
}
