/*
 * fleet_show.h (private to cli/): what `show` prints of an incident of a
 * fleet database (revtrail fleet), which holds the instances' incidents
 * and none of their events. See fleet_show.c.
 */
#ifndef REVTRAIL_CLI_FLEET_SHOW_H
#define REVTRAIL_CLI_FLEET_SHOW_H

#include <stdint.h>
#include <stdio.h>

#include "revtrail/store_read.h"

/*
 * The parts of incident id, when st is a fleet database: the instances
 * holding it, its pods (pods_json, the incident's pods column) and why
 * there is no timeline, as text; or, with json, a "fleet_parts" member
 * (",\n\"fleet_parts\":[...]"). Prints nothing for an incident of any
 * other database. Returns the number of parts (0: not a fleet
 * incident), or a negative RT_E*.
 */
int fleet_show(FILE *f, struct store *st, int64_t id, const char *pods_json,
	       bool json);

/* The number of parts of incident id (0: not a fleet incident), or a
 * negative RT_E*. */
int fleet_show_count(struct store *st, int64_t id);

#endif
