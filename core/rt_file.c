/*
 * rt_file.c: files revtrail writes whole and renames into place (the
 * consume --stats-json file).
 *
 * The temporary is created beside its target, never opened: a fixed name
 * such as "TARGET.tmp" opened with fopen(, "w") follows a symlink planted
 * there by anyone who can write the directory, and a root-run revtrail
 * would truncate whatever it points to. mkostemp gives a fresh name,
 * created with O_CREAT|O_EXCL (which refuses any existing name, symlinks
 * included); O_NOFOLLOW and O_CLOEXEC are asked for on top, so no child
 * inherits it either.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "revtrail/rt.h"

FILE *rt_replace_open(const char *target, char *tmp, size_t tmplen)
{
	FILE *f;
	int fd, n = snprintf(tmp, tmplen, "%s.tmp.XXXXXX", target);

	if (n < 0 || (size_t)n >= tmplen) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW)) < 0)
		return NULL;
	/* mkostemp creates 0600; the file is for other readers */
	if (fchmod(fd, 0644) || !(f = fdopen(fd, "w"))) {
		int e = errno;

		close(fd);
		unlink(tmp);
		errno = e;
		return NULL;
	}
	return f;
}

int rt_replace_commit(FILE *f, const char *tmp, const char *target)
{
	bool bad = ferror(f) != 0;

	if (fclose(f) != 0 || bad || rename(tmp, target) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}
