/*
 * follow.c: files and globs followed as tail -F does (ingest --follow).
 */
#include "driver_int.h"

int follow_start(struct pipeline_driver *d, char **globs, int n)
{
	(void)d; (void)globs; (void)n;
	return RT_EINVAL;
}

int follow_scan(struct pipeline_driver *d)
{
	(void)d;
	return 0;
}

int follow_positions(struct pipeline_driver *d)
{
	(void)d;
	return 0;
}
