/*
 * rules.h: rule packs, the classifier and the diagnosis rule catalog.
 *
 * A struct rules holds classifier rules (PCRE2 patterns that tag records) and
 * diagnosis rules (conditions over an incident, evaluated by correlate/).
 * Load packs, compile once, then classify records. Not thread-safe: match
 * data is shared.
 */
#ifndef REVTRAIL_RULES_H
#define REVTRAIL_RULES_H

#include <stdio.h>

#include "revtrail/rt.h"

#define RULES_MAX_TAGS 16
#define RULES_MAX_HITS 16
#define RULES_MAX_FIELDS 16

struct rt_field {
	struct rt_str key, val;
};

/*
 * The classification of one record. Tag and rule names point into the rules
 * object (valid until rules_free); field values into the arena given to
 * rules_classify. Tags are unique and in catalog order.
 */
struct rt_class {
	unsigned ntags, nrules, nfields;
	const char *tags[RULES_MAX_TAGS];
	const char *rules[RULES_MAX_HITS];
	struct rt_field fields[RULES_MAX_FIELDS];   /* named captures */
	enum rt_severity severity;                  /* highest of the hits */
	unsigned limit_hits;    /* patterns that hit a PCRE2 limit: skipped */
};

/* Incident-level rule; its keywords: docs/rules.md, "Diagnosis rules". */
struct rules_diagnosis {
	const char *id, *title, *remedy, *explain;
	const char *file;
	int line;
	enum rt_severity severity;
	int priority;                 /* higher wins when several match */
	const char *const *all;       /* every one of these tags present */
	size_t nall;
	const char *const *none;      /* none of these tags present */
	size_t nnone;
	/* Each "any" line is a group; every group needs one tag present. */
	const char *const *const *any;
	const size_t *nany;
	size_t nanygroups;
	const char *const *revision_status;  /* opening revision's status is
	                                      * one of these ("" list = any) */
	size_t nrevision_status;
	int opened_by;                /* RULES_OPENED_* */
	bool followed_by_rollback;    /* a later revision is "Rollback to N" */
	const char *object_glob;      /* "Kind/name-glob ...": an affected object
	                               * matches, or NULL */
	bool payload_hook_config;     /* a decoded payload of the opening
	                               * revision must show a config hook */
	int64_t within_ns;            /* opened-by upgrade: the incident opens
	                               * at most this long after the revision
	                               * (RULES_WITHIN_DEFAULT_NS unless set) */
};

/* How long after an upgrade its failures may be blamed on it, unless a
 * rule says `within`: a day covers a rollout, a slow canary and the
 * first daily job; a crash loop weeks later has another cause. */
#define RULES_WITHIN_DEFAULT_NS (24LL * 3600 * 1000000000LL)

enum {
	RULES_OPENED_ANY = 0,
	RULES_OPENED_UPGRADE,   /* revision > 1 (or "Upgrade" description) */
	RULES_OPENED_INSTALL,   /* revision 1 or an install attempt */
};

struct rules;

struct rules *rules_new(void);
void rules_free(struct rules *r);

/*
 * Adds the packs compiled into the binary. Returns 0 or RT_EINVAL (a bug in
 * a built-in pack; err says file:line: problem).
 */
int rules_load_builtin(struct rules *r, char *err, size_t errlen);
/* Adds a pack file, or every *.rules file of a directory in name order.
 * On error, err holds "file:line: problem" and RT_EINVAL/RT_EIO is returned. */
int rules_load_path(struct rules *r, const char *path, char *err,
		    size_t errlen);
/* Adds a pack from memory; name is used in error messages. */
int rules_load_buffer(struct rules *r, const char *name, const char *text,
		      size_t n, char *err, size_t errlen);

/* Compiles patterns (JIT when available) and builds the prefilter. Must be
 * called once after loading and before classify. Errors as above. */
int rules_compile(struct rules *r, char *err, size_t errlen);

/*
 * Classifies rec. out is fully overwritten (entries past the counts are
 * unspecified). Returns the number of tags (0 for most lines). Never
 * fails: a pattern that hits a match or depth limit is skipped and counted
 * in out->limit_hits. Rules reading `message` read rec->raw when the
 * message is empty; empty fields are never matched. Capture values are
 * copied into arena (views into rec when arena is NULL); a capture that is
 * empty or whose name an earlier hit already set is dropped.
 */
unsigned rules_classify(struct rules *r, const struct rt_record *rec,
			struct rt_arena *arena, struct rt_class *out);
/*
 * rules_classify for a record whose message is a text that holds the real
 * message (RT_REC_DEFERRED: a JSON payload not yet decoded). When no rule
 * reading the message has a literal in that text, none can match the real
 * message either: the other fields are classified and their tag count
 * returned. Otherwise returns -1 having done nothing: the caller decodes
 * the message and calls rules_classify.
 */
int rules_classify_deferred(struct rules *r, const struct rt_record *rec,
			    struct rt_arena *arena, struct rt_class *out);

/* Runs every example and counterexample; prints each miss to out as
 * "file:line: rule ID: ..." and returns the number of misses. */
unsigned rules_test(struct rules *r, FILE *out);
/* One line per rule and diagnosis: id, tags, severity, explanation. */
void rules_list(const struct rules *r, FILE *out);
/* After rules_compile: one line per pattern, "ID<TAB>file:line<TAB>" then
 * the prefilter literals ("a" | "b", "(declared)" when from `literal`
 * lines; ("a" | "b") & ("c" | "d") when a text needs one of each set) or
 * "(always runs)" when none could be derived; then " unless (...)" with
 * the rule's unless-literals, when it has some. For rules list -v. */
void rules_list_prefilter(const struct rules *r, FILE *out);

size_t rules_count(const struct rules *r);
size_t rules_diagnosis_count(const struct rules *r);
const struct rules_diagnosis *rules_diagnosis_at(const struct rules *r,
						 size_t i);

#endif
