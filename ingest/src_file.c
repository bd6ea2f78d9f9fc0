/*
 * src_file.c: the file, FIFO and stdin source: large reads fed to the
 * framer, with a hook between chunks where callers commit batches.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/ingest.h"

/* 128 KiB reads: large enough that syscalls vanish from profiles, small
 * enough that the buffer stays in L2 between the kernel's copy and the
 * scan (1 MiB reads doubled the copy's system time on the 10M bench file
 * and slowed the scan after it). A `tail -F` pipe still flushes promptly:
 * read returns early. */
#define READ_CHUNK (1u << 17)

static int feed_fd(struct ingest *in, int fd, const char *name, char *buf,
		   struct rt_arena *arena, ingest_emit_fn emit,
		   ingest_chunk_fn between, void *ctx)
{
	for (;;) {
		ssize_t n = read(fd, buf, READ_CHUNK);
		int rc;

		/* A signal: the caller's hook is where it checks its stop
		 * flag, or a quiet pipe would hold it until its next line. */
		if (n < 0 && errno == EINTR) {
			if (between && (rc = between(ctx)))
				return rc;
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "revtrail: %s: %s\n", name,
				strerror(errno));
			return RT_EIO;
		}
		if (n == 0)
			break;
		rc = ingest_feed(in, name, buf, (size_t)n, arena, emit, ctx);
		if (!rc && between)
			rc = between(ctx);
		if (rc)
			return rc;
	}
	return ingest_finish(in, name, arena, emit, ctx);
}

int ingest_read_paths(struct ingest *in, char **paths, int npaths,
		      struct rt_arena *arena, ingest_emit_fn emit,
		      ingest_chunk_fn between, void *ctx)
{
	static char *stdin_only[] = { "-" };
	char *buf = malloc(READ_CHUNK);
	int status = 0;

	if (!buf)
		return RT_ENOMEM;
	if (npaths == 0) {
		paths = stdin_only;
		npaths = 1;
	}
	for (int i = 0; i < npaths; i++) {
		bool is_stdin = !strcmp(paths[i], "-");
		int fd = is_stdin ? 0 : open(paths[i], O_RDONLY);
		int rc;

		if (fd < 0) {
			fprintf(stderr, "revtrail: %s: %s\n", paths[i],
				strerror(errno));
			status = RT_EIO;
			continue;
		}
		rc = feed_fd(in, fd, paths[i], buf, arena, emit, between, ctx);
		if (!is_stdin)
			close(fd);
		if (rc == RT_EIO) {
			status = RT_EIO;
			continue;
		}
		if (rc) {
			status = rc;
			break;
		}
	}
	free(buf);
	return status;
}

