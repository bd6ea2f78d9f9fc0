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
 * correlate/ holds no database: store/ persists its results and calls these
 * functions inside one transaction per batch, so a stored incident is always
 * a deterministic function of the stored events and revisions.
 */
#ifndef REVTRAIL_CORRELATE_H
#define REVTRAIL_CORRELATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "revtrail/rt.h"
#include "revtrail/rules.h"

#define CORR_DEFAULT_GAP_NS (15LL * 60 * 1000000000LL)
/*
 * Kubernetes times are whole seconds while Helm's carry nanoseconds: an event
 * stamped 14:41:07 may have happened at 14:41:07.9, after an upgrade stamped
 * 14:41:07.8. A revision counts as in force this much before its time.
 */
#define CORR_SKEW_NS 1000000000LL

/* ---- release registry ------------------------------------------------ */

/* One revision as merged from every record that stated it. Owned strings. */
struct corr_rev {
	int revision;
	char *status, *chart, *app_version, *description;
	int64_t updated_ns;
	unsigned evidence;          /* RT_REV_* bits, OR of all records */
	char *hooks;                /* sorted "a,b": hook ConfigMaps/Secrets */
	uint32_t ranks;             /* per-field merge ranks, see registry.c */
};

struct corr_release {
	char *ns, *name;
	struct corr_rev *revs;      /* sorted by revision number */
	size_t nrevs, cap;
};

struct corr_registry;

struct corr_registry *corr_registry_new(void);
void corr_registry_free(struct corr_registry *reg);

enum {
	CORR_REG_CHANGED = 1u << 0,      /* a field of the revision changed */
	CORR_REG_NEW_RELEASE = 1u << 1,  /* first revision of this release */
};

/*
 * Merges one stated revision. The result does not depend on the order in
 * which records arrive: per field, the value stated with the most advanced
 * status wins (pending < deployed < failed < superseded < uninstall...), ties
 * broken by the larger value. *changed gets CORR_REG_* bits; *out (may be
 * NULL) points at the merged revision (valid until the next merge).
 * Returns 0, RT_EINVAL (no namespace/name or revision <= 0) or RT_ENOMEM.
 */
int corr_registry_merge(struct corr_registry *reg, const struct rt_revision *rv,
			unsigned *changed, const struct corr_release **rel,
			const struct corr_rev **out);
/* Restores a stored revision verbatim (ranks included). */
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
 * lists (via CORR_VIA_MANIFEST): its workloads by name, its other objects
 * (ConfigMap, Service, ...) as "Kind/name", which no workload name can
 * be. Keyed by (namespace, workload name); when records disagree a label
 * beats a manifest, then the smallest (release namespace, release) wins,
 * so arrival order does not matter. Bounded by the number of workloads.
 *
 * corr_registry_alias_merge sets *changed when the mapping of (ns, workload)
 * is new or changed. Returns 0, RT_EINVAL (an empty field) or RT_ENOMEM.
 */
int corr_registry_alias_merge(struct corr_registry *reg, struct rt_str ns,
			      struct rt_str workload, struct rt_str rel_ns,
			      struct rt_str rel, int via, bool *changed);
/* The release of workload in ns; false when none was learned. The views
 * point into the registry (valid until its next change); *via (may be
 * NULL) gets how it was learned. */
bool corr_registry_alias_find(const struct corr_registry *reg,
			      struct rt_str ns, struct rt_str workload,
			      struct rt_str *rel_ns, struct rt_str *rel, int *via);
size_t corr_registry_alias_count(const struct corr_registry *reg);

/* The revision in force at ts: the latest (by updated time, then number) with
 * updated_ns <= ts + CORR_SKEW_NS. NULL when none (or rel is NULL). */
const struct corr_rev *corr_release_at(const struct corr_release *rel,
				       int64_t ts);
const struct corr_rev *corr_release_rev(const struct corr_release *rel,
					int revision);
/* Status rank used by the merge (0 for unknown/empty). */
unsigned corr_status_rank(const char *status, size_t n);

/* ---- attribution ----------------------------------------------------- */

/* How a release was found, best first. A stored event keeps the best. */
enum corr_via {
	CORR_VIA_NONE = 0,      /* no release: stored, never in an incident */
	CORR_VIA_LABEL,         /* label/annotation hint on the record, or on
	                         * another record of the same workload */
	CORR_VIA_JOB,           /* helm-install-X / helm-delete-X, HelmChart X */
	CORR_VIA_OPTION,        /* ingest --release for records with no object */
	/* From here on the release was found, not stated, and a name learned
	 * later may claim the event (store: via >= CORR_VIA_MANIFEST). */
	CORR_VIA_MANIFEST,      /* the object, or its workload, is listed in a
	                         * release's decoded manifest */
	CORR_VIA_OWNER,         /* the workload its owner reference names is */
	CORR_VIA_PREFIX,        /* longest known release prefixing the name */
	CORR_VIA_WORKLOAD,      /* workload name: inferred */
};
const char *corr_via_name(int via);   /* "label", ..., "none" */
int corr_via_from_name(const char *s);

struct corr_opts {
	int64_t gap_ns;                  /* 0 = CORR_DEFAULT_GAP_NS */
	const char *release_ns;          /* ingest --release NS/NAME, or NULL */
	const char *release_name;
	bool keep_untagged;
};

struct corr_attr {
	struct rt_str kind, name;        /* the subject object ("Pod", pod) */
	struct rt_str release_ns, release;
	int via;                         /* CORR_VIA_* */
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
		    struct rt_str owner, struct corr_attr *out);

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
/* For helm-install-X / helm-delete-X objects: X (job pod suffix removed,
 * preferring a known release of namespace ns); empty otherwise. */
struct rt_str corr_helm_job_release(const struct corr_registry *reg,
				    struct rt_str ns, struct rt_str kind,
				    struct rt_str name);

/* ---- events ---------------------------------------------------------- */

/* 64-bit FNV-1a with a final mix; h = 0 to start, chain calls. */
uint64_t corr_hash(uint64_t h, const void *p, size_t n);

/* A tagged (or kept) record waiting for the batch commit. Strings live in
 * the batch's own arena; tags and field names are the rules'. */
struct corr_event {
	uint64_t ukey;                 /* identity: same key = same event */
	int64_t first_ns, last_ns, count;
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
	struct corr_attr attr;         /* set by corr_batch_attribute */
	int revision;                  /* ditto; 0 = unknown */
};

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
void corr_event_version(const struct corr_event *e, struct corr_version *v);

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

/* A workload -> release mapping a record stated. Views into the record (or,
 * once in a batch, into the batch's arena). */
struct corr_alias {
	struct rt_str ns, workload, rel_ns, rel;
	struct rt_str cluster;         /* the record's: its own registry */
	int via;                       /* CORR_VIA_LABEL or CORR_VIA_MANIFEST */
};

/* The mapping a record states, if any: a release hint on a pod, or on a
 * workload object. False when the record teaches nothing (no hint, no
 * namespace, or the workload is named like the release already). */
bool corr_record_alias(const struct rt_record *rec, struct corr_alias *out);

struct corr_batch_pos {
	const char *source;
	int32_t partition;
	int64_t offset;                /* next byte / next Kafka offset */
};

/* The records of one batch: deduped events and the Helm revisions stated. */
struct corr_batch {
	struct corr_event *ev;
	size_t nev, evcap;
	uint32_t *slots;               /* open addressing: ukey -> index + 1 */
	size_t nslots;
	struct rt_revision *revs;
	size_t nrevs, revcap;
	struct corr_batch_pos *pos;
	size_t npos, poscap;
	struct corr_alias *aliases;    /* distinct mappings stated */
	size_t naliases, aliascap;
	uint64_t *alias_slots;         /* open addressing: hash of a mapping */
	size_t nalias_slots;
	size_t alias_last;             /* index + 1 of the last one seen */
	bool keep_untagged;
	int64_t max_ts;                /* newest time of any record */
	struct rt_arena arena;         /* copies of what the batch keeps */
	/* counters since corr_batch_new, never reset */
	uint64_t records, tagged, untagged, helm, dups;
};

struct corr_batch *corr_batch_new(bool keep_untagged);
void corr_batch_free(struct corr_batch *b);
/* Forgets the pending records and their copies (call after the commit). */
void corr_batch_reset(struct corr_batch *b);
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

/* A small set of tag names, kept sorted (bytewise) and unique. */
#define CORR_MAX_TAGS 64
struct corr_tagset {
	unsigned n;
	const char *t[CORR_MAX_TAGS];   /* not owned: see corr_intern */
};
bool corr_tagset_add(struct corr_tagset *s, const char *tag);
/* Parses a JSON array of strings ("[\"a\",\"b\"]") into s, interning each
 * name with intern(ctx, name, len). Returns 0 or RT_EPARSE. */
int corr_tagset_parse(struct corr_tagset *s, const char *json,
		      const char *(*intern)(void *ctx, const char *p, size_t n),
		      void *ctx);
/* Writes s as a JSON array into buf; returns the length or -1 if too small. */
int corr_tagset_json(const struct corr_tagset *s, char *buf, size_t size);

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
};
size_t corr_cluster(struct corr_item *items, size_t n, int64_t gap_ns);

/* ---- diagnosis ------------------------------------------------------- */

struct corr_object {
	const char *kind, *name;
	int64_t first_ns, last_ns;
	int64_t events;
};

/* What a diagnosis rule reads: one incident and its release's revisions. */
struct corr_incview {
	const char *ns, *release;
	const struct corr_tagset *tags;
	const struct corr_object *objects;
	size_t nobjects;
	const struct corr_release *rel;   /* may be NULL: no history */
	const struct corr_rev *opening;   /* revision in force at opening */
	int64_t opened_ns, last_ns, gap_ns;
	/* Pods of the incident when objects lists only some of them (the
	 * first by first seen); 0: count the Pod objects listed. */
	size_t pods_total;
};

#define CORR_MAX_EVIDENCE 16
#define CORR_MAX_PODS 64
struct corr_diagnosis {
	const struct rules_diagnosis *rule;   /* NULL: none matched */
	unsigned nevidence;
	char evidence[CORR_MAX_EVIDENCE][256];
	unsigned npods;
	const char *pods[CORR_MAX_PODS];      /* into view->objects */
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

/* A growable text; free with corr_text_free. */
struct corr_text {
	char *p;
	size_t n, cap;
	bool oom;
};
void corr_text_free(struct corr_text *t);
/*
 * The remedy template tpl (rules/packs/diagnoses.rules) with its
 * placeholders filled into t: <ns>, <release>, <rev>, <previous-rev>, <N>
 * (the newest revision of the release), <name> (the config object the
 * incident is about; after "deployment/" and the like, the workload),
 * <workload>, <pod> (the first affected pod; "<pod> ..." lists them all).
 * Unknown ones stay as written. Every name goes in quoted for the shell:
 * remedies are commands. Returns t's text, or NULL when out of memory.
 */
const char *corr_remedy(struct corr_text *t, const char *tpl,
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

#endif
