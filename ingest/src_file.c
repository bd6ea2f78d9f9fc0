/*
 * src_file.c: the file, FIFO and stdin source: large reads fed to the
 * framer, with a hook between chunks where callers commit batches.
 *
 * A regular file is mapped rather than read: the kernel's copy into a
 * buffer was 14% of ingest's time, and a line that needs no cleaning is
 * then decoded where it lies in the page cache. The mapping is fed in
 * slices cut at newlines, so the hook still runs every megabyte and no
 * line is copied to be joined across a slice edge. A window at a time is
 * mapped, and its pages are dropped behind the scan, so resident memory
 * does not grow with the file. Pipes, FIFOs and special files are read().
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "revtrail/ingest.h"
#include "revtrail/log.h"

/* "revtrail CMD: NAME: problem", or a log line when the command logs
 * that way (ingest --log-format). */
static void file_error(enum rt_log_level level, const char *name,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void file_error(enum rt_log_level level, const char *name,
		       const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rt_log_active())
		rt_log(level, "ingest", "%s: %s", name, msg);
	else
		fprintf(stderr, "%s: %s: %s\n", rt_prog, name, msg);
}

/* 128 KiB reads: large enough that syscalls vanish from profiles, small
 * enough that the buffer stays in L2 between the kernel's copy and the
 * scan (1 MiB reads doubled the copy's system time on the 10M bench file
 * and slowed the scan after it). A `tail -F` pipe still flushes promptly:
 * read returns early. */
#define READ_CHUNK (1u << 17)

/* A mapped file is fed a slice at a time (the between hook runs after
 * each) from a window mapped at a time. */
#define MAP_SLICE (1u << 20)
#define MAP_WINDOW (16u << 20)

struct feed {
	struct ingest *in;
	const char *name;
	struct rt_arena *arena;
	ingest_emit_fn emit;
	ingest_chunk_fn between;
	void *ctx;
	char *buf;              /* READ_CHUNK bytes, for read() */
};

static int feed_bytes(const struct feed *f, const char *p, size_t n)
{
	int rc = ingest_feed(f->in, f->name, p, n, f->arena, f->emit, f->ctx);

	if (!rc && f->between)
		rc = f->between(f->ctx);
	return rc;
}

/* A pipe or terminal may go quiet with records still in the caller's
 * batch: when nothing arrives for this long, the hook runs anyway, so the
 * caller can commit by time without committing every chunk. */
#define QUIET_MS 250

/* Waits until fd has data, running between after each QUIET_MS of
 * silence and after a signal (where the caller checks its stop flag).
 * Returns 0 when a read will not block, else what between returned. */
static int wait_readable(const struct feed *f, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n, rc;

	while ((n = poll(&pfd, 1, QUIET_MS)) == 0 ||
	       (n < 0 && errno == EINTR))
		if ((rc = f->between(f->ctx)))
			return rc;
	return 0;       /* readable, EOF or an error: read tells */
}

/* read() to EOF: pipes, FIFOs, special files, and what a mapped file
 * gained while it was read. */
static int feed_fd(const struct feed *f, int fd)
{
	struct stat sb;
	bool quiet_ticks = f->between && fstat(fd, &sb) == 0 &&
			   !S_ISREG(sb.st_mode);

	for (;;) {
		ssize_t n;
		int rc;

		if (quiet_ticks && (rc = wait_readable(f, fd)))
			return rc;
		n = read(fd, f->buf, READ_CHUNK);

		/* A signal: the caller's hook is where it checks its stop
		 * flag, or a quiet pipe would hold it until its next line. */
		if (n < 0 && errno == EINTR) {
			if (f->between && (rc = f->between(f->ctx)))
				return rc;
			continue;
		}
		if (n < 0) {
			file_error(RT_LOG_ERROR, f->name, "%s", strerror(errno));
			return RT_EIO;
		}
		if (n == 0)
			return 0;
		if ((rc = feed_bytes(f, f->buf, (size_t)n)))
			return rc;
	}
}

/*
 * A file truncated under its mapping raises SIGBUS where the scan touches
 * a page past the new end. fstat before each slice makes that rare; this
 * handler makes it harmless: it maps a page of zeros over the fault (no
 * newline there, so the framer only holds it as part of a line) and notes
 * it, and the slice loop then stops at the file's new size. A fault
 * anywhere else is not ours: the default action runs.
 */
static const char *volatile bus_lo, *volatile bus_hi;
static volatile sig_atomic_t bus_hit;
static uintptr_t bus_page;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	const char *a = si->si_addr;

	(void)uc;
	if (a >= bus_lo && a < bus_hi &&
	    mmap((void *)((uintptr_t)a & ~(bus_page - 1)), bus_page, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
		bus_hit = 1;
		return;
	}
	signal(sig, SIG_DFL);   /* the fault repeats, and is fatal */
}

/* The bytes to feed from p: a slice that ends at a newline, or the rest
 * of the window at the end of the file. 0: the window holds no newline
 * before its end, which is not the file's; map the next one from p. */
static size_t slice_len(const char *p, const char *end, bool file_end)
{
	size_t n = (size_t)(end - p) < MAP_SLICE ? (size_t)(end - p) :
		   MAP_SLICE;
	const char *nl;

	if (p + n == end && file_end)
		return n;
	if ((nl = memrchr(p, '\n', n)))
		return (size_t)(nl + 1 - p);
	return p + n == end ? 0 : n;   /* a line longer than a slice */
}

static off_t file_size(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 ? sb.st_size : 0;
}

/* The pages before p are done with: out of the resident set now, not
 * when the window is unmapped. */
static void drop_behind(const char *map, const char *p)
{
	size_t n = (size_t)(p - map) & ~(bus_page - 1);

	if (n)
		madvise((void *)map, n, MADV_DONTNEED);
}

/* Feeds [*off, size) of the window mapped at base; advances *off. */
static int feed_window(const struct feed *f, int fd, off_t base,
		       const char *map, size_t len, off_t *off)
{
	const char *p = map + (*off - base), *end = map + len;
	int rc = 0;

	while (p < end && !bus_hit) {
		off_t size = file_size(fd);
		size_t n;

		if (size < base + (off_t)len) {   /* it shrank */
			if (size <= base + (p - map))
				break;
			end = map + (size - base);
		}
		if (!(n = slice_len(p, end, base + (off_t)(end - map) >= size)))
			break;
		rc = feed_bytes(f, p, n);
		p += n;
		if (rc)
			break;
		drop_behind(map, p);
	}
	*off = base + (p - map);
	return rc;
}

/*
 * Maps and feeds [off, size) of a regular file, size as fstat first gave
 * it, then read()s from where that stopped: bytes appended meanwhile are
 * read, a file cut shorter ends where it now ends. Falls back to read()
 * where mmap fails (a file system without it).
 */
static int feed_mapped(const struct feed *f, int fd, off_t off, off_t size)
{
	off_t page = (off_t)sysconf(_SC_PAGESIZE);
	struct sigaction sa = { .sa_sigaction = on_sigbus,
				.sa_flags = SA_SIGINFO }, old;
	int rc = 0;

	bus_page = (uintptr_t)page;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	bus_hit = 0;
	while (off < size && !rc && !bus_hit) {
		off_t base = off & ~(page - 1);
		size_t len = size - base < (off_t)MAP_WINDOW ?
			     (size_t)(size - base) : MAP_WINDOW;
		char *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, base);
		off_t was = off;

		if (map == MAP_FAILED)
			break;
		madvise(map, len, MADV_SEQUENTIAL);
		bus_lo = map;
		bus_hi = map + len;
		rc = feed_window(f, fd, base, map, len, &off);
		bus_lo = bus_hi = NULL;
		munmap(map, len);
		if (off == was && !rc)  /* it shrank to off, or the rest is
					 * one line the read() loop takes */
			break;
	}
	sigaction(SIGBUS, &old, NULL);
	if (bus_hit)
		file_error(RT_LOG_WARN, f->name, "the file shrank while it was "
			   "read");
	if (rc || lseek(fd, off, SEEK_SET) < 0)
		return rc;
	return feed_fd(f, fd);
}

static int feed_any(const struct feed *f, int fd)
{
	struct stat sb;
	off_t off;
	int rc;

	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (off = lseek(fd, 0, SEEK_CUR)) >= 0)
		rc = feed_mapped(f, fd, off, sb.st_size);
	else
		rc = feed_fd(f, fd);
	if (rc)
		return rc;
	return ingest_finish(f->in, f->name, f->arena, f->emit, f->ctx);
}

/* Opening a FIFO blocks until a writer comes. A signal interrupts it
 * (the caller's handlers have no SA_RESTART): the hook then says whether
 * to stop, as it does for a blocked read. -2 and *status set when it does,
 * else the descriptor or -1 with errno. */
static int open_input(const struct feed *f, const char *path, int *status)
{
	int fd, rc;

	while ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0 &&
	       errno == EINTR)
		if (f->between && (rc = f->between(f->ctx))) {
			*status = rc;
			return -2;
		}
	return fd;
}

int ingest_read_file(struct ingest *in, const char *name, int fd,
		     struct rt_arena *arena, ingest_emit_fn emit,
		     ingest_chunk_fn between, void *ctx)
{
	struct feed f = { .in = in, .name = name, .arena = arena, .emit = emit,
			  .between = between, .ctx = ctx };
	struct stat sb;
	off_t off;
	int rc;

	if (fstat(fd, &sb) < 0 || (off = lseek(fd, 0, SEEK_CUR)) < 0) {
		file_error(RT_LOG_ERROR, name, "%s", strerror(errno));
		return RT_EIO;
	}
	if (!(f.buf = malloc(READ_CHUNK)))
		return RT_ENOMEM;
	rc = feed_mapped(&f, fd, off, sb.st_size);
	free(f.buf);
	return rc;
}

int ingest_read_some(struct ingest *in, const char *name, int fd, char *buf,
		     size_t cap, struct rt_arena *arena, ingest_emit_fn emit,
		     void *ctx, size_t *nread)
{
	ssize_t n = read(fd, buf, cap);

	*nread = 0;
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n < 0) {
		file_error(RT_LOG_ERROR, name, "%s", strerror(errno));
		return RT_EIO;
	}
	*nread = (size_t)n;
	return n ? ingest_feed(in, name, buf, (size_t)n, arena, emit, ctx) : 0;
}

int ingest_read_paths(struct ingest *in, char **paths, int npaths,
		      struct rt_arena *arena, ingest_emit_fn emit,
		      ingest_chunk_fn between, void *ctx)
{
	static char *stdin_only[] = { "-" };
	struct feed f = { .in = in, .arena = arena, .emit = emit,
			  .between = between, .ctx = ctx };
	int status = 0;

	if (!(f.buf = malloc(READ_CHUNK)))
		return RT_ENOMEM;
	if (npaths == 0) {
		paths = stdin_only;
		npaths = 1;
	}
	for (int i = 0; i < npaths; i++) {
		bool is_stdin = !strcmp(paths[i], "-");
		int fd = is_stdin ? 0 : open_input(&f, paths[i], &status);
		int rc;

		if (fd == -2)           /* the hook asked to stop */
			break;
		if (fd < 0) {
			file_error(RT_LOG_ERROR, paths[i], "%s",
				   strerror(errno));
			status = RT_EIO;
			continue;
		}
		f.name = paths[i];
		rc = feed_any(&f, fd);
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
	free(f.buf);
	return status;
}
