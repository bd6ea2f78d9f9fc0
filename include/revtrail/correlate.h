/*
 * correlate.h: the decisions of the correlator, as plain functions over plain
 * structs (docs/architecture.md "Correlation"):
 *
 *   - the release registry: per (namespace, release) its revisions, merged
 *     from every Helm record whatever order they arrive in;
 *   - object -> release attribution (labels, helm-install jobs, the longest
 *     known release name prefix, the workload name, in that order);
 *   - event -> revision: the latest revision updated at or before the event;
 *   - event identity for dedupe, the batch of pending events;
 *   - incident windows (gap splitting) and tag sets;
 *   - diagnosis rules evaluated over an incident.
 *
 * correlate/ holds no database: it decides over plain rows (revtrail/plan.h)
 * that the store read, and answers with rows the store writes; pipeline/
 * runs those turns inside one transaction per batch, so a stored incident
 * is always a deterministic function of the stored events and revisions.
 */
#ifndef REVTRAIL_CORRELATE_H
#define REVTRAIL_CORRELATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "revtrail/rt.h"
#include "revtrail/rt_kit.h"
#include "revtrail/plan.h"
#include "revtrail/rules.h"

/*
 * Kubernetes times are whole seconds while Helm's carry nanoseconds: an event
 * stamped 14:41:07 may have happened at 14:41:07.9, after an upgrade stamped
 * 14:41:07.8. A revision counts as in force this much before its time.
 */
#define CORR_SKEW_NS 1000000000LL
/* Two statements of one revision number this far apart in time are two
 * installs of the release (a reinstall starts again at 1): further than
 * a second's text from a payload's nanoseconds, nearer than an uninstall
 * and install again (registry.c "relife"). */
#define CORR_LIFE_SLACK_NS (60 * 1000000000LL)

/* ---- release registry ------------------------------------------------ */

/* One revision as merged from every record that stated it. Owned strings. */
struct corr_rev {
	int revision;
	char *status, *chart, *app_version, *description;
	int64_t updated_ns;
	unsigned evidence;          /* RT_REV_* bits, OR of all records */
	char *hooks;                /* sorted "a,b": hook ConfigMaps/Secrets */
	uint32_t ranks;             /* per-field merge ranks, see registry.c */
	int life;                   /* 1 = the oldest install known: a
	                             * reinstall reuses the numbers */
};

/*
 * The statements of one revision number that carry no time (a `helm
 * status` block cut before LAST DEPLOYED, a release Secret without a
 * creation time): their join u is a fact of its own, applied to the
 * number's newest life only (its timed revision of the latest time, else
 * a revision of u alone). own keeps that revision's fields without u, so
 * that a newer life's revision, however late it is learnt, takes u over
 * and the older one goes back to own: every arrival order gives the same
 * revisions.
 */
struct corr_loose {
	struct corr_rev u;          /* u.revision: the number; no time */
	struct corr_rev own;        /* own.updated_ns: the holder's time,
	                             * 0 while no timed revision holds u */
};

struct corr_release {
	char *ns, *name;
	struct corr_rev *revs;      /* sorted by (life, revision number) */
	size_t nrevs, cap;
	struct corr_loose *loose;   /* per number stated without a time */
	size_t nloose;
	bool by_time;               /* every revision has a time, and they
	                             * never go down: corr_release_at may
	                             * search rather than scan */
};

struct corr_registry;

/*
 * The registry's names come from cluster data, so what it holds is
 * bounded: at most CORR_RELEASE_REVS revisions per release (the highest
 * numbers; a lower one is refused, a higher one displaces the lowest) and
 * a byte budget over all of it (CORR_REGISTRY_BYTES unless set; ingest
 * and consume --max-registry). A merge past either is refused with
 * RT_ELIMIT and counted: the registry stops growing, and events get no
 * revision from what it could not take (nor is that stored).
 */
#define CORR_RELEASE_REVS 1024
#define CORR_REGISTRY_BYTES ((size_t)64 << 20)

struct corr_registry *corr_registry_new(void);
void corr_registry_free(struct corr_registry *reg);
void corr_registry_set_budget(struct corr_registry *reg, size_t bytes);
/* Bytes held (an estimate of what malloc gave), and merges and loads
 * refused for the bounds, since the registry was made. */
size_t corr_registry_bytes(const struct corr_registry *reg);
uint64_t corr_registry_refused(const struct corr_registry *reg);

enum {
	CORR_REG_CHANGED = 1u << 0,      /* a field of the revision changed */
	CORR_REG_NEW_RELEASE = 1u << 1,  /* first revision of this release */
	CORR_REG_RELIFE = 1u << 2,       /* a revision held changed life:
	                                  * every revision is written again */
	CORR_REG_TIMELESS = 1u << 3,     /* the number's corr_loose changed */
};

/*
 * Merges one stated revision. The result does not depend on the order in
 * which records arrive: per field, the value stated with the most advanced
 * status wins (pending < deployed < failed < superseded < uninstall...), ties
 * broken by the larger value. *changed gets CORR_REG_* bits; *out (may be
 * NULL) points at the merged revision (valid until the next merge).
 * Returns 0, RT_EINVAL (no namespace/name or revision <= 0), RT_ELIMIT
 * (refused for the bounds above; fields merged before the refusal stay) or
 * RT_ENOMEM.
 */
int corr_registry_merge(struct corr_registry *reg, const struct rt_revision *rv,
			unsigned *changed, const struct corr_release **rel,
			const struct corr_rev **out);
/* Restores a stored revision verbatim (ranks included); errors as for
 * corr_registry_merge. */
int corr_registry_load(struct corr_registry *reg, const char *ns,
		       const char *name, const struct corr_rev *rev);

/* The release (ns, name); a release stated without a namespace answers
 * for any namespace that has none of its own. NULL when unknown. */
const struct corr_release *corr_registry_find(const struct corr_registry *reg,
					      struct rt_str ns,
					      struct rt_str name);
/* The longest known release of namespace ns equal to name or prefixing it at
 * a '-' boundary; NULL when none. */
const struct corr_release *
corr_registry_longest_prefix(const struct corr_registry *reg, struct rt_str ns,
			     struct rt_str name);
/* The smallest namespace (bytewise) in which release name is known, or NULL. */
const char *corr_registry_first_ns(const struct corr_registry *reg,
				   struct rt_str name);
size_t corr_registry_count(const struct corr_registry *reg);

/*
 * Workload -> release, learned from records that carry a release label or
 * annotation (docs/formats.md §3.5): pods of Deployment `haproxy` labelled
 * app.kubernetes.io/instance=edge make every record of a `haproxy-*` pod
 * of that namespace belong to release edge, also the log lines that carry
 * no labels at all; and from the objects a decoded release manifest
 * lists (via PLAN_VIA_MANIFEST): its workloads by name, its other objects
 * (ConfigMap, Service, ...) as "Kind/name", which no workload name can
 * be. Keyed by (namespace, workload name); a workload that moves to
 * another release keeps both, each from its first sighting (the earliest
 * time stated, so arrival order does not matter): see
 * corr_registry_alias_find. At most CORR_ALIAS_RELEASES releases a
 * workload, and bounded by the budget above.
 *
 * corr_registry_alias_merge sets *changed when the mapping of (ns, workload)
 * is new or changed. Returns 0, RT_EINVAL (an empty field), RT_ELIMIT
 * (refused for the budget; the mapping is left as it was) or RT_ENOMEM.
 */
int corr_registry_alias_merge(struct corr_registry *reg, struct rt_str ns,
			      struct rt_str workload, struct rt_str rel_ns,
			      struct rt_str rel, int via, int64_t since,
			      bool *changed);
/* The releases a workload was mapped to, at most this many. */
#define CORR_ALIAS_RELEASES 16
/* Up to max of them, (rel_ns[i], rel[i]), views into the registry; how
 * many. */
size_t corr_registry_alias_releases(const struct corr_registry *reg,
				    struct rt_str ns, struct rt_str workload,
				    const char **rel_ns, const char **rel,
				    size_t max);
/* The release of workload in ns at time ts; false when none was learned.
 * A mapping holds from its first sighting (a labelled record's time, the
 * manifest's revision's) on: at ts, the latest begun (a label before a
 * manifest, then the smallest pair, of two begun together); before
 * every one, the earliest; ts <= 0, the latest. The views point into
 * the registry (valid until its next change); *via (may be NULL) gets
 * how it was learned. */
bool corr_registry_alias_find(const struct corr_registry *reg,
			      struct rt_str ns, struct rt_str workload,
			      int64_t ts, struct rt_str *rel_ns,
			      struct rt_str *rel, int *via);
size_t corr_registry_alias_count(const struct corr_registry *reg);

/* The revision in force at ts: the latest (by updated time, then number) with
 * updated_ns <= ts + CORR_SKEW_NS. NULL when none (or rel is NULL). */
const struct corr_rev *corr_release_at(const struct corr_release *rel,
				       int64_t ts);
/* The timeless statements of number revision, NULL when none. */
const struct corr_loose *corr_release_loose(const struct corr_release *rel,
					    int revision);
/* Restores a stored corr_loose half: src->updated_ns 0 is u, else own.
 * Errors as for corr_registry_load. */
int corr_registry_load_loose(struct corr_registry *reg, const char *ns,
			     const char *name, const struct corr_rev *src);
/* Revision number revision of the newest life that has one, or of life
 * life (0: any). NULL when none. */
const struct corr_rev *corr_release_rev(const struct corr_release *rel,
					int revision);
const struct corr_rev *corr_release_rev_life(const struct corr_release *rel,
					     int revision, int life);
/* Status rank used by the merge (0 for unknown/empty). */
unsigned corr_status_rank(const char *status, size_t n);

/* ---- attribution ----------------------------------------------------- */

const char *corr_via_name(int via);   /* "label", ..., "none" */
int corr_via_from_name(const char *s);

struct corr_opts {
	int64_t gap_ns;                  /* 0 = PLAN_DEFAULT_GAP_NS */
	const char *release_ns;          /* ingest --release NS/NAME, or NULL */
	const char *release_name;
	bool keep_untagged;
};


/*
 * Which release an object belongs to (docs/architecture.md, "Correlation"): the
 * record's own label hint; a helm-controller job; the release its workload
 * was labelled with or a decoded manifest lists (corr_registry_alias_*),
 * the workload being the one its owner reference names when owner is
 * set (corr_owner_workload); the longest known release prefixing the name;
 * else the workload name. Views point into the record or the registry.
 * Never fails.
 */
void corr_attribute(const struct corr_registry *reg, const struct corr_opts *o,
		    struct rt_str ns, struct rt_str kind, struct rt_str name,
		    struct rt_str pod, struct rt_str hint_release,
		    struct rt_str hint_ns, struct rt_str template_hash,
		    struct rt_str owner, struct plan_attr *out);
/* corr_attribute for a record of time ts: the workload mappings in force
 * then (corr_registry_alias_find); ts 0, the latest. */
void corr_attribute_at(const struct corr_registry *reg,
		       const struct corr_opts *o, struct rt_str ns,
		       struct rt_str kind, struct rt_str name, struct rt_str pod,
		       struct rt_str hint_release, struct rt_str hint_ns,
		       struct rt_str template_hash, struct rt_str owner,
		       int64_t ts, struct plan_attr *out);

/* The workload an owner reference names: a ReplicaSet's Deployment (the
 * pod-template-hash cut), a CronJob's Job's CronJob, else the owner itself;
 * empty for no owner or an owner outside namespaces (a static pod's
 * Node). */
struct rt_str corr_owner_workload(struct rt_str owner_kind,
				  struct rt_str owner_name,
				  struct rt_str template_hash);
/* The workload key of an object (corr_record_alias, the store's workload
 * column): the owner's workload when known, else corr_workload_name. */
struct rt_str corr_object_workload(struct rt_str kind, struct rt_str name,
				   struct rt_str template_hash,
				   struct rt_str owner);
/* The key a decoded manifest's object is mapped by: a workload's name, a
 * namespaced object's "Kind/name" written into buf (empty when it does not
 * fit); empty for an object outside namespaces. */
struct rt_str corr_object_key(struct rt_str kind, struct rt_str name,
			      char *buf, size_t size);

/* The workload a pod/ReplicaSet name belongs to: strips the ReplicaSet hash
 * and pod suffix, a CronJob's schedule suffix, a StatefulSet ordinal. */
struct rt_str corr_workload_name(struct rt_str kind, struct rt_str name,
				 struct rt_str template_hash);
/* The ReplicaSet of a Deployment's pod, "web-6d9f8c7b5" for
 * "web-6d9f8c7b5-fghij" (the pod suffix cut after a hash-like segment);
 * empty for a pod of any other workload, or no pod. */
struct rt_str corr_pod_replicaset(struct rt_str pod);
/* For helm-install-X / helm-delete-X objects: X (job pod suffix removed,
 * preferring a known release of namespace ns); empty otherwise. */
struct rt_str corr_helm_job_release(const struct corr_registry *reg,
				    struct rt_str ns, struct rt_str kind,
				    struct rt_str name);

/* ---- events ---------------------------------------------------------- */


/*
 * Versions of one event (a Kubernetes event re-sent under the same uid)
 * may disagree, even about the object. The version a stored row shows is
 * the greatest: the latest last seen, then the bytewise greater message,
 * reason, kind, name, pod, container and type, so that it does not
 * depend on the order the versions arrive in. Empty and NULL are equal.
 */
struct corr_version {
	int64_t last_ns;
	struct rt_str message, reason, kind, name, pod, container, type;
};
int corr_version_cmp(const struct corr_version *a,
		     const struct corr_version *b);
/* The version e shows (its own kind and name, as decoded). */
void corr_event_version(const struct plan_event *e, struct corr_version *v);

/* The identity of a record: Kubernetes events by namespace + uid (a re-sent
 * or MODIFIED event is the same event); anything else by its content and
 * time (a re-read log line is the same line), plus its position when it has
 * no time. A non-empty cluster is part of it (the same uid in two clusters
 * is two events); the empty one adds nothing, so keys stored before
 * clusters existed still match. */
uint64_t corr_event_key(const struct rt_record *rec);

/* A record's time range: [first, last], with first = last when unknown. */
void corr_record_times(const struct rt_record *rec, int64_t *first,
		       int64_t *last);

/* ---- repeats (repeat.c) ---------------------------------------------- */

/* A bucket of a repeated line's times, and the times a row holds at most;
 * the rows of one bucket, past which a time is a row of its own. */
#define CORR_REPEAT_NS (60LL * 1000000000LL)
#define CORR_REPEAT_CAP 256
#define CORR_REPEAT_ROWS 1024
/* Encoded, a set of n times takes at most this many bytes. */
#define CORR_TIMES_BYTES(n) ((n) * 10)

/* The bucket width for a database of gap gap_ns: CORR_REPEAT_NS, or the
 * gap when it is smaller, so that a row never spans a quiet gap. */
int64_t corr_repeat_window(int64_t gap_ns);
/* Whether a record is a repeat: no uid, no count of its own, one time. */
bool corr_repeat_is(const struct rt_record *rec, int64_t first, int64_t last);
/* A repeat's identity: its content and the bucket of first (row 0). The
 * line's digits fold when its time is the container runtime's (CRI,
 * docker): then what cls tagged and captured is part of it instead. */
uint64_t corr_repeat_key(const struct rt_record *rec,
			 const struct rt_class *cls, int64_t first,
			 int64_t window);
/* The key of row `row` of a bucket whose row 0 is group; of a time past
 * the bucket's rows. */
uint64_t corr_repeat_row(uint64_t group, uint32_t row);
uint64_t corr_repeat_single(uint64_t group, int64_t t);

/* A sorted set of distinct times (> 0) as delta varints: out needs
 * CORR_TIMES_BYTES(n). decode: at most cap times; -1 when the bytes are
 * not such a set. union: out needs na + nb; minus: a without b's, in
 * place. find: where t is or would go. All return sizes. */
size_t corr_times_encode(const int64_t *t, size_t n, uint8_t *out);
long corr_times_decode(const void *p, size_t n, int64_t *out, size_t cap);
size_t corr_times_union(const int64_t *a, size_t na, const int64_t *b,
			size_t nb, int64_t *out);
size_t corr_times_minus(int64_t *a, size_t na, const int64_t *b, size_t nb);
size_t corr_times_find(const int64_t *a, size_t n, int64_t t, bool *found);


/* The mapping a record states, if any: a release hint on a pod, or on a
 * workload object. False when the record teaches nothing (no hint, no
 * namespace, or the workload is named like the release already). */
bool corr_record_alias(const struct rt_record *rec, struct plan_alias *out);
/* A line of a helm-controller job (pod helm-install-r-...) whose helm
 * command names release r and its --namespace, or the HelmChart r itself
 * with its targetNamespace as release hint: the mapping "HelmChart/r" of
 * the job's namespace to that namespace, its key in buf. False for any
 * other record. */
bool corr_record_job_alias(const struct rt_record *rec, char *buf,
			   size_t size, struct plan_alias *out);


#define CORR_RETAIN_WINDOW 101
/* The k (<= CORR_RETAIN_WINDOW) largest times added (<= 0: ignored), a
 * min-heap: t[0] is the smallest kept once n == k. */
struct corr_top {
	int64_t t[CORR_RETAIN_WINDOW];
	unsigned n;
};
void corr_top_add(struct corr_top *top, int64_t t, unsigned k);
/*
 * The CORR_RETAIN_WINDOW largest times added, as corr_top, for a reader
 * that needs them as a set (their order in the heap may differ from
 * corr_top_add's): times in ascending order wait in a run that replaces
 * the heap whole once it holds a window of times not below any in it.
 * A zeroed struct is empty; get: the times, into *out.
 */
struct corr_newest {
	struct corr_top top;
	int64_t run[CORR_RETAIN_WINDOW];
	unsigned nrun;
};
void corr_newest_add(struct corr_newest *nw, int64_t t);
void corr_newest_get(const struct corr_newest *nw, struct corr_top *out);

/* The records of one batch: deduped events and the Helm revisions stated. */
struct corr_batch {
	struct plan_event *ev;
	size_t nev, evcap;
	struct rt_map evmap;           /* ukey -> index into ev */
	struct rt_revision *revs;
	size_t nrevs, revcap;
	struct plan_batch_pos *pos;
	size_t npos, poscap;
	struct plan_alias *aliases;    /* distinct mappings stated */
	size_t naliases, aliascap;
	struct rt_map aliasmap;        /* a mapping's hash -> index */
	size_t alias_last;             /* index + 1 of the last one seen */
	bool keep_untagged;
	int64_t repeat_ns;             /* corr_repeat_window of the database */
	int64_t max_ts;                /* newest time of any record */
	struct corr_newest newest;     /* the newest times of records not
	                                * Helm's (corr_watermark) */
	struct rt_arena arena;         /* copies of what the batch keeps */
	/* counters since corr_batch_new, never reset */
	uint64_t records, tagged, untagged, helm, dups;
};

struct corr_batch *corr_batch_new(bool keep_untagged);
/*
 * Repeat i of the batch (a bucket's row 0 key, its times less those the
 * bucket's rows hold already) placed in the bucket's nrows stored rows,
 * the last of which is *last: it fills the last row, then new ones after
 * it (copies of event i at the end of the batch), the smallest times
 * first (correlate/repeat.c). Call it once, before the plan.
 */
int corr_batch_repeat_place(struct corr_batch *b, size_t i, uint32_t nrows,
			    const struct plan_stored *last);
void corr_batch_free(struct corr_batch *b);
/* Forgets the pending records and their copies (call after the commit). */
void corr_batch_reset(struct corr_batch *b);
/*
 * The clock retention measures age by (correlate/retain.c says why): the
 * median of the last event times seen, never past the wall clock, never
 * back. start fills the window with the database's clock; observe adds a
 * batch's event times and moves now.
 */
struct corr_retain_clock {
	int64_t t[CORR_RETAIN_WINDOW];    /* a ring of event times */
	unsigned next;
	struct corr_top pending;          /* the newest added */
	int64_t now;
};
void corr_retain_start(struct corr_retain_clock *c, int64_t start_ns);
/* add: one event time (<= 0: unknown, ignored); settle: the newest added
 * join the window, and now moves; observe: a batch's, then settle. */
void corr_retain_add(struct corr_retain_clock *c, int64_t t);
void corr_retain_settle(struct corr_retain_clock *c, int64_t wall_ns);
void corr_retain_observe(struct corr_retain_clock *c,
			 const struct corr_batch *b, int64_t wall_ns);
/*
 * The watermark that closes incidents (correlate/retain.c says why): the
 * newest record time seen, but for records more than
 * CORR_WATERMARK_AHEAD_NS past the later of the watermark and the time
 * the CORR_WATERMARK_QUORUM newest records have reached, or more than
 * CORR_WATERMARK_SKEW_NS past the wall clock: those are counted in
 * ignored. start: from the database's watermark; observe: a batch's
 * records (not Helm's), and ns moves.
 */
#define CORR_WATERMARK_QUORUM 5
#define CORR_WATERMARK_SKEW_NS (INT64_C(5) * 60 * 1000000000)
#define CORR_WATERMARK_AHEAD_NS (INT64_C(7) * 24 * 3600 * 1000000000)
struct corr_watermark {
	struct corr_top newest;           /* the quorum's newest times */
	int64_t ns;
	uint64_t ignored;                 /* records ahead, never reset */
};
void corr_watermark_start(struct corr_watermark *w, int64_t stored_ns);
void corr_watermark_observe(struct corr_watermark *w,
			    const struct corr_batch *b, int64_t wall_ns);
/*
 * Adds one classified record. Helm records (rec->nrevs > 0) give their
 * revisions; any record with a release label on a pod or workload gives a
 * workload -> release mapping; tagged records (and untagged ones when
 * keep_untagged) become
 * pending events, merged with a pending duplicate (count = max, first = min,
 * last = max, tags = union). Copies the strings it keeps, so the record
 * may die when this returns; keeps pointers into rules and to
 * rec->pos.source. Returns 0 or RT_ENOMEM.
 */
int corr_batch_add(struct corr_batch *b, const struct rt_record *rec,
		   const struct rt_class *cls);
/* Notes the end position of a source (byte offset or next Kafka offset). */
int corr_batch_position(struct corr_batch *b, const char *source,
			int32_t partition, int64_t offset);
static inline size_t corr_batch_pending(const struct corr_batch *b)
{
	return b->nev + b->nrevs;
}
/* Attributes every pending event (release + revision) with reg. */
void corr_batch_attribute(struct corr_batch *b,
			  const struct corr_registry *reg,
			  const struct corr_opts *o);

/* ---- incidents ------------------------------------------------------- */

bool corr_tagset_add(struct plan_tagset *s, const char *tag);
/* Parses a JSON array of strings ("[\"a\",\"b\"]") into s, interning each
 * name with intern(ctx, name, len). Returns 0 or RT_EPARSE. */
int corr_tagset_parse(struct plan_tagset *s, const char *json,
		      const char *(*intern)(void *ctx, const char *p, size_t n),
		      void *ctx);
/* Writes s as a JSON array into buf; returns the length or -1 if too small. */
int corr_tagset_json(const struct plan_tagset *s, char *buf, size_t size);

/*
 * One time interval of the clustering: an event [first, last] or an existing
 * incident [opened, last]. corr_cluster sorts items by start and gives each
 * the index of its window in ->cluster: items whose hulls are closer than
 * gap_ns (a quiet gap > gap_ns splits) share a window. Returns the number of
 * windows. The result is the same for any order of the input items.
 */
struct corr_item {
	int64_t start, end;
	size_t idx;                    /* caller's index */
	size_t cluster;
	int cls;                       /* revision class: runs of one only */
};
size_t corr_cluster(struct corr_item *items, size_t n, int64_t gap_ns);

/* ---- diagnosis ------------------------------------------------------- */


/* What a diagnosis rule reads: one incident and its release's revisions. */
struct corr_incview {
	const char *ns, *release;
	const struct plan_tagset *tags;
	const struct plan_object *objects;
	size_t nobjects;
	const struct corr_release *rel;   /* may be NULL: no history */
	const struct corr_rev *opening;   /* revision in force at opening */
	int64_t opened_ns, last_ns, gap_ns;
	/* Pods of the incident when objects lists only some of them (the
	 * first by first seen); 0: count the Pod objects listed. */
	size_t pods_total;
	/* What its events captured, per tag (plan.h); may be none. */
	const struct corr_capture *caps;
	size_t ncaps;
	/* Revisions of the release that opened other incidents. */
	const int *sick;
	size_t nsick;
};

#define CORR_MAX_EVIDENCE 16
struct corr_diagnosis {
	const struct rules_diagnosis *rule;   /* NULL: none matched */
	unsigned nevidence;
	char evidence[CORR_MAX_EVIDENCE][256];
	unsigned npods;
	const char *pods[PLAN_MAX_PODS];      /* into view->objects */
	size_t pods_total;
};

/* True when the condition list of d holds for v; when out is not NULL, the
 * conditions that held are appended to out->evidence. */
bool corr_diag_matches(const struct rules_diagnosis *d,
		       const struct corr_incview *v, struct corr_diagnosis *out);
/*
 * Evaluates the rules (highest priority wins, ties by id) and fills out: the
 * rule, the evidence (conditions that held, plus release payload evidence
 * such as a hook ConfigMap), and the affected pods. Never fails.
 */
void corr_diagnose(const struct rules_diagnosis *const *rules, size_t n,
		   const struct corr_incview *v, struct corr_diagnosis *out);
/* The same over every diagnosis rule of r. */
void corr_diagnose_rules(const struct rules *r, const struct corr_incview *v,
			 struct corr_diagnosis *out);
/* ---- what an incident row says (remedy.c) ---------------------------- */

/*
 * The remedy template tpl (rules/packs/diagnoses.rules) with its
 * placeholders filled into t: <ns>, <release>, <rev>, <previous-rev>, <N>
 * (the newest revision of the release), <name> (the config object the
 * incident is about; after "deployment/" and the like, the workload),
 * <workload>, <pod> (the first affected pod; "<pod> ..." lists them all).
 * Unknown ones stay as written. Every name goes in quoted for the shell:
 * remedies are commands. Returns t's text, or NULL when out of memory.
 */
const char *corr_remedy(struct rt_buf *t, const char *tpl,
			const struct corr_incview *v,
			const struct corr_diagnosis *d);
/* The title of an undiagnosed incident: its tags, then " in RELEASE". */
void corr_untitled(const struct corr_incview *v, char *buf, size_t size);
/* corr_later_revisions as a JSON array of numbers ("[49]"). size >= 32. */
void corr_later_json(const struct corr_incview *v, char *buf, size_t size);

/* Revisions deployed while the incident was open: updated in
 * (opened, last + gap], other than the opening one. Fills up to max
 * pointers, returns the total. */
size_t corr_later_revisions(const struct corr_incview *v,
			    const struct corr_rev **out, size_t max);


/* ---- planning a batch's writes (plan.c, rebuild.c) ------------------- */

/* Interned strings (tag names): one copy each for the intern's lifetime. */
struct corr_intern {
	char **s;
	size_t n, cap;
	struct rt_map map;          /* hash -> index into s */
};
const char *corr_intern(struct corr_intern *in, const char *p, size_t n);
const char *corr_intern_cb(void *ctx, const char *p, size_t n);
void corr_intern_release(struct corr_intern *in);

/* A release key (namespace, release) and a set of them, in order of
 * addition; strings in the plan's arena. Hashed: one `helm list -A` or
 * Secret listing names every release of a cluster. */
struct corr_key {
	const char *ns, *rel;
};
struct corr_keyset {
	struct corr_key *k;
	size_t n, cap;
	struct rt_map map;          /* hash -> index into k */
};

/* Per affected object of one incident: the deltas a window adds. */
struct corr_objmap {
	struct plan_object *o;
	size_t n, cap;
	struct rt_map map;   /* hash of kind and name -> index into o */
};

/* An incident's aggregates while they are summed. */
struct corr_aggr {
	int64_t opened, last, count, occ;
	int sev, via;
	struct plan_tagset tags;
};

/*
 * The correlator's side of one commit: what it decided so far, in plain
 * memory. pipeline/ reads context from the store, hands it to the
 * corr_plan_* functions and writes what they return; nothing here touches
 * the database.
 */
struct corr_plan {
	struct corr_registry *reg;
	struct corr_opts opts;           /* gap_ns set */
	const struct rules *rules;
	const char **globs;              /* objects a diagnosis may read */
	size_t nglobs;
	struct rt_arena arena;           /* reset per commit */
	struct corr_intern intern;
	struct corr_keyset rebuild;      /* releases recomputed from events */
	struct corr_keyset revdirty;     /* releases whose revisions changed */
	bool rebuild_all;                /* a new gap: every release */
	struct plan_evstate *evs;        /* per batch event */
	size_t *order;                   /* batch events by release, time */
	size_t evscap;
	struct corr_objmap objs;
	int64_t *touched;                /* incidents to diagnose */
	size_t ntouched, touchedcap;
	struct rt_buf remedy;
	struct corr_diagnosis *diag;     /* corr_plan_diag's answer */
	const char *evidence[CORR_MAX_EVIDENCE];
	char later[400], title[600];
};

/* reg stays the caller's, and may change between commits (one registry
 * per cluster). Returns 0 or RT_ENOMEM. */
int corr_plan_init(struct corr_plan *p, struct corr_registry *reg,
		   const struct corr_opts *o, const struct rules *rules);
void corr_plan_release(struct corr_plan *p);
/* Forgets the last commit's decisions. */
void corr_plan_begin(struct corr_plan *p);

int corr_keyset_add(struct corr_plan *p, struct corr_keyset *ks,
		    struct rt_str ns, struct rt_str rel);
bool corr_keyset_has(const struct corr_keyset *ks, struct rt_str ns,
		     struct rt_str rel);
/* Empties the set, keeping its memory; _free releases it. */
void corr_keyset_clear(struct corr_keyset *ks);
void corr_keyset_free(struct corr_keyset *ks);
int corr_plan_touch(struct corr_plan *p, int64_t id);

/* A revision row of the registry (to write), and one read back. */
void corr_revision_row(const struct corr_release *rel, const struct corr_rev *r,
		       struct plan_revision *out);
int corr_registry_load_row(struct corr_registry *reg,
			   const struct plan_revision *row);

/* Sizes the per-event state for n events. 0 or RT_ENOMEM. */
int corr_plan_events(struct corr_plan *p, size_t n);
/*
 * Event e of the batch against its stored row s (s->found false: none):
 * count = max, first = min, last = max, tags = union, the greater
 * version's text; the release of the better attribution, or both
 * releases recomputed when the event changes release or object. Fills
 * x. Returns 0 or RT_ENOMEM.
 */
int corr_plan_event(struct corr_plan *p, struct plan_event *e,
		    const struct plan_stored *s, struct plan_evstate *x);
/* Sorts the batch's events by release, then time, into p->order. */
void corr_plan_order(struct corr_plan *p, const struct corr_batch *b);
/* The end of the group of one release starting at p->order[a]. */
size_t corr_plan_group_end(const struct corr_plan *p,
			   const struct corr_batch *b, size_t a);

/* A group of one release's events, split: the events that go into
 * incidents here (cl), and the span of stored incidents they may touch. */
struct corr_group {
	struct rt_str ns, rel;
	bool keyed;                 /* attributed: its release key exists */
	bool deferred;              /* the release is recomputed instead */
	size_t *cl;                 /* batch indices that cluster here */
	size_t ncl;
	int64_t lo, hi;             /* stored incidents with last >= lo and
	                             * opened <= hi */
	int64_t *incs;              /* incidents those events sit in */
	size_t nincs;
};
int corr_plan_group(struct corr_plan *p, const struct corr_batch *b,
		    const size_t *idx, size_t n, struct corr_group *g);
/*
 * Whether a group's events may belong to a revision class of their own
 * (revclass.c), which the windows below do not tell apart: a deploy of the
 * release while something of it was open, after which the group names a
 * ReplicaSet none of its earlier events did; or two incidents near it
 * within the gap of each other (more than CORR_CLASSY_NEAR: assumed).
 * The release is then rebuilt after its windows are written.
 */
#define CORR_CLASSY_NEAR 64
bool corr_plan_classy(struct corr_plan *p, const struct corr_batch *b,
		      const struct corr_group *g, const struct plan_near *near,
		      size_t nnear);
/*
 * The windows a group's clustering events make with the stored incidents
 * near them: each extends the incident it falls within the gap of, opens
 * one, or bridges several, which merge into the oldest id. Aggregates
 * are sums and maxima of the deltas. Returns 0 or RT_ENOMEM.
 */
int corr_plan_windows(struct corr_plan *p, const struct corr_batch *b,
		      const struct corr_group *g, const struct plan_near *near,
		      size_t nnear, struct plan_window **out, size_t *nout);

/* A release recomputed from its stored events, streamed in time order. */
#define CORR_PASS_ALL (-1)
struct corr_rebuild {
	struct corr_key k;
	int64_t *old;               /* its incidents before, and the first
	                             * pass's new ones (corr_rebuild_made) */
	bool *used;
	size_t nold, oldcap;
	bool open;
	struct corr_aggr a;
	int64_t first_min, first_max, cand;
	/* Revision classes (revclass.c). The first pass takes every row and
	 * stops at the first of a non-zero class (classy); the release is
	 * then rebuilt in one pass per class, class 0's first, each window
	 * taking its events by id. */
	struct corr_revclass *rc;
	int pass;                   /* CORR_PASS_ALL or the class taken */
	size_t passno;              /* passes after the first: the next
	                             * takes class 0, then classes[passno-1] */
	bool classy;
	int *classes;               /* the non-zero classes, met in pass 0 */
	size_t nclasses, classcap;
	int64_t *ids;               /* the open window's events, by class */
	size_t nids, idscap;
};
int corr_rebuild_begin(struct corr_plan *p, struct corr_rebuild *rb,
		       const struct corr_key *k, const int64_t *old,
		       size_t nold);
/* Feeds one row. Returns 1 when the row closed the window before it,
 * which is then in *done (to write before the next call), else 0, or
 * RT_ENOMEM. In the first pass, once classy is set the scan stops (no
 * corr_rebuild_end) and the passes corr_rebuild_next_pass names follow. */
int corr_rebuild_row(struct corr_plan *p, struct corr_rebuild *rb,
		     const struct plan_keyrow *row, struct plan_rebuilt *done);
/* The id the store gave a window of no old incident: in the first pass,
 * one the passes by class, remaking that window, reuse (or drop). 0 or
 * RT_ENOMEM. */
int corr_rebuild_made(struct corr_rebuild *rb, int64_t id);
/* Closes the last window: 1 with *done, or 0 when there was none. */
int corr_rebuild_end(struct corr_plan *p, struct corr_rebuild *rb,
		     struct plan_rebuilt *done);
/* After a pass: true with the next pass begun (the scan runs again),
 * false when the release is done. 0 or RT_ENOMEM in *err. */
bool corr_rebuild_next_pass(struct corr_plan *p, struct corr_rebuild *rb,
			    int *err);
/* The old incidents no window reused (to drop) into out, room for nold
 * (NULL: none told); frees rb. */
size_t corr_rebuild_unused(struct corr_rebuild *rb, int64_t *out);

/* The stored events rows that the registry now attributes elsewhere
 * (rows whose via is inferred). Returns 0 or RT_ENOMEM. */
int corr_plan_moves(struct corr_plan *p, const struct plan_evrow *rows,
		    size_t n, struct plan_move **out, size_t *nout);
/* The namespace helm-install-R job events of namespace jobns belong to:
 * jobns, unless R is known only elsewhere (HelmChart targetNamespace). */
const char *corr_job_target(const struct corr_registry *reg,
			    const char *jobns, const char *r);
/* True when release r, stated without a namespace, stands for it in
 * namespace ns (which has no release r of its own). */
bool corr_anyns_claims(const struct corr_registry *reg, const char *ns,
		       const char *r);
/* The revision intervals of a release's events, as corr_release_at
 * decides them. Returns 0 or RT_ENOMEM. */
int corr_plan_revranges(struct corr_plan *p, const struct corr_key *k,
			struct plan_revrange **out, size_t *n);
/* Diagnoses incident row with the objects read for p->globs (sorted by
 * kind, name) into out (valid until the next call). Returns 0 or
 * RT_ENOMEM. */
int corr_plan_diag(struct corr_plan *p, const struct plan_incrow *row,
		   const struct plan_object *objs, size_t nobjs,
		   int64_t watermark, struct plan_diag *out);

/* ---- revision classes (revclass.c) ----------------------------------- */

/*
 * The class of each event of one release, fed in time order (first seen):
 * revision R when its pod's ReplicaSet was first seen while R was in force
 * and a class-0 window of the release was open when R was deployed (the
 * revision's own new pods, failing in an incident it joined), else 0.
 * At most CORR_REVCLASS_SETS ReplicaSets are told apart; the pods of any
 * beyond stay in class 0 (counted in refused).
 */
#define CORR_REVCLASS_SETS 4096

struct corr_deploy {
	int64_t t;
	int rev;
	bool open;                  /* a class-0 window was open at t */
};

struct corr_set {
	char *name;                 /* the ReplicaSet */
	int cls;
	int64_t first;              /* its first sighting */
};

struct corr_revclass {
	int64_t gap_ns;
	struct corr_deploy *dep;    /* the release's deploys, by time */
	size_t ndep, next;          /* next: deploys the scan has passed */
	struct corr_set *sets;
	size_t nsets, alloc;
	struct rt_map map;          /* ReplicaSet name -> sets index */
	bool have0, scanned;
	int64_t last0;              /* latest end of a class-0 event */
	int64_t scanned_to;
	uint64_t refused;
};

/* rel may be NULL (no revisions: every class is 0). 0 or RT_ENOMEM. */
int corr_revclass_init(struct corr_revclass *c, const struct corr_release *rel,
		       int64_t gap_ns);
void corr_revclass_release(struct corr_revclass *c);
/* The class of the next event (pod: its pod, or empty) into *cls; events
 * come in order of first. 0, RT_ENOMEM or RT_ELIMIT. */
int corr_revclass_next(struct corr_revclass *c, struct rt_str pod,
		       int64_t first, int64_t last, int *cls);

#endif
