/*
 * spool.c: the read commands' output, held until their reading is done.
 *
 * A reader's snapshot pins the WAL: while query, incidents, show or report
 * is inside a read transaction, the writer's checkpoints cannot pass the
 * pages it might still read, and the -wal file grows with everything
 * committed meanwhile. Writing rows while reading them let a stalled
 * consumer of the output (a pipe nobody reads, a pager left open) hold a
 * snapshot for as long as it stalled: the -wal reached 430 MiB. So when
 * stdout is not a terminal, fd 1 points at an unlinked temporary file
 * while the command reads, and the file is copied to the real stdout after
 * the database is closed: a blocked write then holds no snapshot.
 *
 * Why a file and not memory: the output has no bound of its own (query
 * SELECT * on a large database), and a temporary file costs page cache,
 * not heap; a small output never leaves that cache. Why by descriptor:
 * every read command writes to stdout from many places (rows, HTML, the
 * timeline), and redirecting fd 1 spares threading a FILE through them.
 * A terminal is left alone: its reader is a person, and the commands ask
 * it for its width and colours. When no temporary can be made (no
 * writable TMPDIR), output goes straight out as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

void cli_spool_begin(struct cli_spool *sp)
{
	FILE *tmp;

	sp->fd = -1;
	sp->saved = -1;
	if (isatty(1) || !(tmp = tmpfile()))
		return;
	fflush(stdout);
	sp->fd = fcntl(fileno(tmp), F_DUPFD_CLOEXEC, 3);
	fclose(tmp);            /* the dup keeps the unlinked file */
	if (sp->fd < 0)
		return;
	if ((sp->saved = fcntl(1, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    dup2(sp->fd, 1) < 0) {
		if (sp->saved >= 0)
			close(sp->saved);
		close(sp->fd);
		sp->fd = sp->saved = -1;
	}
}

/* write(2) all of buf to fd; -1 on an error (EPIPE included). */
static int write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

int cli_spool_end(struct cli_spool *sp)
{
	char buf[65536];
	ssize_t n;
	int rc = fflush(stdout) ? -1 : 0;

	if (sp->fd < 0)
		return rc;
	if (dup2(sp->saved, 1) < 0 || lseek(sp->fd, 0, SEEK_SET) < 0)
		rc = -1;
	while (rc == 0 && ((n = read(sp->fd, buf, sizeof(buf))) > 0 ||
			   (n < 0 && errno == EINTR)))
		if (n > 0 && write_all(1, buf, (size_t)n))
			rc = -1;
	close(sp->saved);
	close(sp->fd);
	sp->fd = sp->saved = -1;
	return rc;
}
