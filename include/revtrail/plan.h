/*
 * plan.h: the plain rows that pass between the correlator and the store
 * (docs/architecture.md "Who owns what").
 *
 * A batch is committed in turns of read -> decide -> write, all in one
 * transaction: the store reads the context a decision needs (the stored
 * row of an event's identity, the incidents near a group of events, a
 * release's stored events) into the rows below; the correlator decides
 * over them, in memory, and answers with rows of what to write (events
 * with their incident, incident aggregates, merges, objects, moves,
 * revisions, diagnoses); the store writes those. Neither calls the other:
 * pipeline/ runs the turns. These are data only -- no function here, so
 * the store links nothing of the correlator.
 */
#ifndef REVTRAIL_PLAN_H
#define REVTRAIL_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "revtrail/rt.h"
#include "revtrail/rules.h"

/* Incidents split at a quiet gap longer than this, unless told otherwise. */
#define PLAN_DEFAULT_GAP_NS (15LL * 60 * 1000000000LL)
/* The pods an incident row lists, and a diagnosis reads, at most. */
#define PLAN_MAX_PODS 64

/* ---- the correlator's records ---------------------------------------- */

/* How a release was found, best first. A stored event keeps the best. */
enum plan_via {
	PLAN_VIA_NONE = 0,      /* no release: stored, never in an incident */
	PLAN_VIA_LABEL,         /* label/annotation hint on the record, or on
	                         * another record of the same workload */
	PLAN_VIA_JOB,           /* helm-install-X / helm-delete-X, HelmChart X */
	PLAN_VIA_OPTION,        /* ingest --release for records with no object */
	/* From here on the release was found, not stated, and a name learned
	 * later may claim the event (store: via >= PLAN_VIA_MANIFEST). */
	PLAN_VIA_MANIFEST,      /* the object, or its workload, is listed in a
	                         * release's decoded manifest */
	PLAN_VIA_OWNER,         /* the workload its owner reference names is */
	PLAN_VIA_PREFIX,        /* longest known release prefixing the name */
	PLAN_VIA_WORKLOAD,      /* workload name: inferred */
};

struct plan_attr {
	struct rt_str kind, name;        /* the subject object ("Pod", pod) */
	struct rt_str release_ns, release;
	int via;                         /* PLAN_VIA_* */
};

/* A tagged (or kept) record waiting for the batch commit. Strings live in
 * the batch's own arena; tags and field names are the rules'. */
struct plan_event {
	uint64_t ukey;                 /* identity: same key = same event */
	int64_t first_ns, last_ns, count;
	/* A repeat (correlate/repeat.c): its distinct times, sorted, in the
	 * batch's or the plan's arena; count is their number. */
	bool repeat;
	uint32_t ntimes, timescap;
	int64_t *times;
	/* Once its times are placed in its bucket's rows (which moves
	 * last_ns), the time of the line whose text it holds: a folded
	 * repeat's lines differ, and the latest line's text is the row's.
	 * 0: last_ns is that time. */
	int64_t text_ns;
	enum rt_format format;
	enum rt_severity severity;
	struct rt_str ns, kind, name, pod, container, reason, type, message;
	struct rt_str hint_release, hint_ns, template_hash;
	struct rt_str owner;           /* corr_owner_workload, or empty */
	struct rt_str cluster;         /* rt_record.cluster */
	const char *source;            /* origin: path or topic */
	uint64_t offset;
	unsigned ntags, nfields;
	const char *tags[RULES_MAX_TAGS];
	struct rt_field *fields;       /* nfields, in the batch's arena */
	struct plan_attr attr;         /* set by corr_batch_attribute */
	int revision;                  /* ditto; 0 = unknown */
};

/* A workload -> release mapping a record stated. Views into the record (or,
 * once in a batch, into the batch's arena). */
struct plan_alias {
	struct rt_str ns, workload, rel_ns, rel;
	struct rt_str cluster;         /* the record's: its own registry */
	int via;                       /* PLAN_VIA_LABEL or PLAN_VIA_MANIFEST */
	int64_t since_ns;              /* when it was seen: the record's
	                                * time, the manifest's revision's */
};

struct plan_batch_pos {
	const char *source;
	int32_t partition;
	int64_t offset;                /* next byte / next Kafka offset */
};

/* A small set of tag names, kept sorted (bytewise) and unique. */
#define PLAN_MAX_TAGS 64
struct plan_tagset {
	unsigned n;
	const char *t[PLAN_MAX_TAGS];   /* not owned: see corr_intern */
};

/* An affected object of an incident: stored, or a batch's delta. */
struct plan_object {
	const char *kind, *name;
	int64_t first_ns, last_ns;
	int64_t events;
};

/* ---- context the store reads ---------------------------------------- */

/* The stored row of a batch event's identity. Strings (empty = NULL
 * views) live until the commit ends. */
struct plan_stored {
	bool found;
	int64_t id, inc, first_ns, last_ns, count;
	int sev, via;
	const char *tags;                /* JSON array */
	const char *rel_ns, *rel;
	struct rt_str message, reason, kind, name, pod, container, type;
	const void *times;               /* a repeat's set, encoded; or NULL */
	size_t times_bytes;
};

/* A stored incident a group of the batch's events may touch. */
struct plan_near {
	int64_t id, opened, last, count, occ;
	int sev, via;
	const char *tags;                /* JSON array */
	int cls;                         /* incidents.class */
};

/* One stored event of a release, in time order (a rebuild's input). */
struct plan_keyrow {
	int64_t inc, first, last, count;
	int sev, via;
	const char *tags, *kind, *name, *fields;   /* tags, fields: JSON */
	const char *pod;
	int64_t id;                      /* the event's row */
};

/* A stored event whose inferred release may change. */
struct plan_evrow {
	int64_t id;
	int via;
	const char *kind, *name, *pod, *rel_ns, *rel;
	const char *workload;            /* its owner's workload, or name's */
	int64_t first_ns;                /* its time: the mappings then */
};

/* What a diagnosis reads of a stored incident. */
/* What the events of an incident say, aggregated: per tag, one row per
 * value a rule captured (field "configmap", value "checkout-api-config")
 * with the distinct pods and the occurrences, and one row with field
 * NULL for all the events of the tag. Bounded by the store. */
struct corr_capture {
	const char *tag, *field, *value;
	int64_t pods, times;
};

struct plan_incrow {
	const char *ns, *rel, *tags;
	int64_t opened, last, pods_total;
	const struct corr_capture *caps;  /* times descending */
	size_t ncaps;
	const int *sick;                  /* revisions of the release that
	                                   * opened another incident */
	size_t nsick;
};

/* One revision as a row (of the revisions table, or to write there). */
struct plan_revision {
	const char *ns, *rel;
	int revision;
	const char *status, *chart, *app_version, *description;
	int64_t updated_ns;
	unsigned evidence;               /* RT_REV_* */
	const char *hooks;               /* "a,b" */
	uint32_t ranks;
	int life;                        /* corr_rev.life: which install */
	bool loose;                      /* a half of a corr_loose (table
	                                  * revision_timeless), not a row */
};

/* ---- what to write --------------------------------------------------- */

/* A batch event against its stored row. */
struct plan_evstate {
	int64_t id;          /* existing row, 0 = new */
	int64_t inc;         /* incident the row is counted in, 0 = none */
	int64_t old_count;
	bool newer;          /* this batch's version is the greater: its
	                      * text and object replace the row's */
	bool cluster;        /* forms incidents: tagged, attributed, timed */
	const char *tags;    /* JSON array, as written */
	const char *via;     /* attribution name */
	struct rt_str workload;
	const void *times;   /* a repeat's set, encoded, as written; or NULL */
	size_t times_bytes;
	int cls;             /* revision class (correlate/revclass.c) */
};

/* An incident's aggregates: sums and maxima of its events. */
struct plan_agg {
	int64_t opened, last, count, occ;
	int sev, via;
	const char *via_name, *tags;     /* tags: JSON array */
};

/* One window of a group of the batch's events: the incident it extends
 * (target) or opens (target 0), the stored incidents it folds into
 * target, the events it takes and the objects they add. */
struct plan_window {
	const char *ns, *rel;
	struct plan_agg agg;
	int64_t target;
	const int64_t *merged;
	size_t nmerged;
	const size_t *events;            /* indices into the batch */
	size_t nevents;
	const struct plan_object *objs;  /* deltas */
	size_t nobjs;
	bool recount;                    /* count its pods again */
	int cls;                         /* its revision class */
};

/* One window of a release recomputed from its stored events: the events
 * with first_ns in [first_min, first_max] go to incident id (0: new). */
struct plan_rebuilt {
	const char *ns, *rel;
	struct plan_agg agg;
	int64_t id, first_min, first_max;
	const struct plan_object *objs;
	size_t nobjs;
	/* byid: the window takes exactly the events ids (its revision class,
	 * correlate/revclass.c), not every event of its time span */
	bool byid;
	const int64_t *ids;
	size_t nids;
	int cls;                         /* its revision class */
};

/* A stored event that moves to another release. */
struct plan_move {
	int64_t id;
	const char *old_ns, *old_rel, *rel_ns, *rel, *via_name;
	int via;
};

/* Events of a release stamped with revision rev: first_ns in [from, to). */
struct plan_revrange {
	int rev;
	int64_t from, to;
};

/* What an incident row says after its diagnosis. */
struct plan_diag {
	int revision;                    /* opening revision, 0 = none */
	const char *rev_status;          /* or NULL */
	const char *later;               /* JSON array of numbers */
	bool closed;
	int64_t closed_ns;
	const char *diagnosis, *title, *remedy;   /* each may be NULL */
	const char *const *evidence;
	size_t nevidence;
	const char *const *pods;
	size_t npods;
};

#endif
