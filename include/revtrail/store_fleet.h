/*
 * store_fleet.h: the fleet database (store/fleet.c, `revtrail fleet`).
 *
 * A fleet database folds the incidents topic of many consume instances
 * (consume --incidents-topic) into one revtrail database: each key of the
 * topic (CLUSTER/NAMESPACE/RELEASE/INSTANCE/ID) is one row of fleet_parts
 * holding its latest value, and the incidents table is recomputed from
 * the parts of every (cluster, namespace, release, revision) a batch
 * touched: parts whose windows overlap or lie within the gap of each
 * other are one incident, as `incidents --db A --db B` merges them. The
 * topic carries no events, so a fleet database has incidents and no
 * timeline; `show` says so and names the parts (store_fleet_parts).
 *
 * Writing goes through the writer's transaction (store_begin, the puts,
 * store_fleet_fold, store_write_positions, store_end), so a batch's parts,
 * incidents and offsets are committed together: a restart resumes after
 * the last committed batch and folds each message once.
 */
#ifndef REVTRAIL_STORE_FLEET_H
#define REVTRAIL_STORE_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "revtrail/store_read.h"

/* A value larger than this is refused (an incident is a few KiB). */
#define STORE_FLEET_MAX_VALUE (1u << 20)
/* Entries of a merged incident's tags, evidence, pods, later revisions. */
#define STORE_FLEET_MAX_LIST 256

/* Once per writer, before the first put: the connection's scratch table
 * of touched releases. 0 or RT_EDB. */
int store_fleet_init(struct store *st);

/*
 * One message of the incidents topic, inside the writer's transaction:
 * the key's part becomes value, or goes with a tombstone (value NULL or
 * empty). Returns 0, 1 when the message is refused (a key or value that
 * is not one of an incident: the part stays as it was), or RT_EDB.
 */
int store_fleet_put(struct store *st, const char *key, size_t klen,
		    const char *value, size_t vlen);

/* Recomputes the incidents of every release and revision the puts since
 * the last fold touched, and adds to *incidents (unless NULL) how many
 * it wrote. 0, RT_EDB or RT_ENOMEM. */
int store_fleet_fold(struct store *st, uint64_t *incidents);

/*
 * The parts of incident id of a fleet database, earliest first: columns
 * instance, incident (the instance's id), status, opened_at, last_seen_at,
 * event_count. No rows (0) when the database is not a fleet database.
 */
int store_fleet_parts(struct store *st, int64_t id, store_row_fn fn,
		      void *ctx);

#endif
