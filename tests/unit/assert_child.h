/*
 * assert_child.h: breaks an invariant on purpose in a child process and
 * sees the assert fire: the child must die of SIGABRT with "assertion
 * failed: " and the expected expression on its stderr. Where the build
 * has no asserts (no RT_DEBUG: the plain build's unit tests) the test is
 * skipped, saying so.
 */
#ifndef REVTRAIL_ASSERT_CHILD_H
#define REVTRAIL_ASSERT_CHILD_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "revtrail/rt.h"
#include "tap.h"

/* fn(ctx) in a child, its stderr read into buf (NUL-terminated, cut at
 * size - 1). The child's wait status, or -1 when it could not run. */
static inline int child_run(void (*fn)(void *), void *ctx, char *buf,
			    size_t size)
{
	int fd[2], status;
	size_t n = 0;
	ssize_t r;
	char sink[256];
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fd))
		return -1;
	if ((pid = fork()) < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], 2);
		close(fd[1]);
		fn(ctx);
		_exit(0);
	}
	close(fd[1]);
	while ((r = read(fd[0], n + 1 < size ? buf + n : sink,
			 n + 1 < size ? size - 1 - n : sizeof(sink))) > 0)
		if (n + 1 < size)
			n += (size_t)r;
	buf[n] = '\0';
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static inline void tap_skip(const char *name, const char *why)
{
	printf("ok %d - %s # SKIP %s\n", ++tap_n, name, why);
}

/* fn(ctx) breaks an invariant: its child must abort naming expr. */
static inline void dies_of_assert(void (*fn)(void *), void *ctx,
				  const char *expr, const char *name)
{
	char err[4096];
	int st;

	if (!RT_ASSERTS_ON) {
		tap_skip(name, "asserts are compiled out in this build (on "
			 "under SANITIZE or ASSERTS=1)");
		return;
	}
	st = child_run(fn, ctx, err, sizeof(err));
	if (!ok(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
		"%s: the child dies of SIGABRT", name))
		printf("#   wait status %#x, stderr: %s\n", st, err);
	if (!ok(strstr(err, "assertion failed: ") && strstr(err, expr),
		"%s: its stderr names '%s'", name, expr))
		printf("#   stderr: %s\n", err);
}

/* fn(ctx) keeps the invariant: its child must exit 0 (the control of a
 * dies_of_assert, so that a child that always dies proves nothing). */
static inline void lives(void (*fn)(void *), void *ctx, const char *name)
{
	char err[4096];
	int st = child_run(fn, ctx, err, sizeof(err));

	if (!ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		"%s: the child exits 0", name))
		printf("#   wait status %#x, stderr: %s\n", st, err);
}

#endif
