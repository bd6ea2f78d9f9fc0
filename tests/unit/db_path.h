/*
 * db_path.h: a unit test's database file, and fresh(), which removes it
 * with the -wal and -shm files SQLite keeps beside it. The test fills path
 * (snprintf into it) before calling fresh().
 */
#ifndef REVTRAIL_TEST_DB_PATH_H
#define REVTRAIL_TEST_DB_PATH_H

#include <stdio.h>
#include <unistd.h>

static char path[128];

static void fresh(void)
{
	char p[160];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

#endif
