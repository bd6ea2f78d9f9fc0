/*
 * rt.h: the types every stage shares: string views, the per-batch arena,
 * times, error codes and the normalised record that flows from a source to
 * SQLite (see docs/architecture.md "The record").
 */
#ifndef REVTRAIL_RT_H
#define REVTRAIL_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "revtrail/rt_assert.h"

/* Action functions return 0 or one of these. */
enum {
	RT_OK = 0,
	RT_ENOMEM = -1,
	RT_EIO = -2,
	RT_EINVAL = -3,  /* bad option, rule file or argument */
	RT_EPARSE = -4,  /* input that cannot be decoded */
	RT_ELIMIT = -5,  /* a size, match or depth limit was hit */
	RT_EDB = -6,     /* SQLite failure */
	RT_EKAFKA = -7,  /* librdkafka failure */
	RT_ERANGE = -8,  /* a real time revtrail cannot hold */
};

/* Never NULL; a static string. */
const char *rt_strerror(int err);
/* Bytes of every buffer an error message is written into (the err,
 * errlen pairs of store_open, rules_load_path, ingest_open, ...): one
 * size, so a message that fits one fits all of them. */
#define RT_ERRLEN 1024
/* What messages on stderr start with: "revtrail", or "revtrail ingest"
 * once the command is known (set by main). */
extern const char *rt_prog;

/* A view into memory someone else owns (usually the batch arena). */
struct rt_str {
	const char *p;
	size_t n;
};

#define RT_STR_NULL ((struct rt_str){ NULL, 0 })
#define RT_STR_LIT(lit) ((struct rt_str){ (lit), sizeof(lit) - 1 })

static inline struct rt_str rt_str_make(const char *p, size_t n)
{
	return (struct rt_str){ p, n };
}

/* True when s holds exactly the NUL-terminated string lit. */
bool rt_str_eq(struct rt_str s, const char *lit);
/* v in decimal into out, which holds RT_U64_DIGITS bytes; no NUL. Its
 * length. Written by hand where a per-record snprintf showed in profiles. */
#define RT_U64_DIGITS 20
size_t rt_u64_dec(char *out, uint64_t v);
/* Whether s starts with lit. Inline, so that a literal's length is counted
 * when compiled (an Event's field path is tried against three). */
static inline bool rt_str_has_prefix(struct rt_str s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n >= n && (n == 0 || memcmp(s.p, lit, n) == 0);
}

/*
 * Bump allocator: the strings a stage makes (decoded fields, a batch's
 * copies) live here and are freed together with one rt_arena_reset().
 */
struct rt_arena_block;
struct rt_arena {
	struct rt_arena_block *head;
	size_t used;    /* bytes handed out since the last reset */
};

void rt_arena_init(struct rt_arena *a);
/* Aligned to 16 bytes. Returns NULL only when malloc fails. */
void *rt_arena_alloc(struct rt_arena *a, size_t n);
/* Copies n bytes and adds a NUL after them (not counted in .n). */
struct rt_str rt_arena_strdup(struct rt_arena *a, const char *p, size_t n);
/* Frees all but the first block, so a steady stream allocates nothing. */
void rt_arena_reset(struct rt_arena *a);
void rt_arena_release(struct rt_arena *a);

/*
 * Times are int64 nanoseconds since the Unix epoch, UTC; 0 means unknown,
 * so the parsers read the epoch itself as 1 ns (order-preserving: no time
 * lies between; it prints as the epoch).
 * rt_time_parse accepts RFC 3339 with 0-9 fraction digits and Z or +hh:mm
 * (also "+hhmm" and a space instead of T), Go's Time.String()
 * "2024-05-01 12:15:13.1 +0200 CEST", ANSIC "Wed May  1 12:00:02 2024"
 * (taken as UTC) and epoch seconds "1714558513" / "1714558513.25".
 * Returns 0, RT_EPARSE (not a time, or Go's zero time
 * 0001-01-01T00:00:00Z, what tools print for "never": unknown) or
 * RT_ERANGE (a real date a time here cannot hold: before
 * 1970-01-01T00:00:00Z or after 2261; also unknown, but a decoder
 * counts the records holding one, dec_emit). *ns is set only on 0.
 */
int rt_time_parse(const char *s, size_t n, int64_t *ns);
/*
 * rt_time_parse, but a time that names no zone (ANSIC, or a date and time
 * without Z or offset) is a wall time of the process's local zone (TZ, as
 * tzset read it), as Helm's tables print them; *local says it was read so.
 * A wall time the clocks skipped reads with the offset before the skip; one
 * they repeated, as its first occurrence. Thread-safe (localtime_r).
 */
int rt_time_parse_local(const char *s, size_t n, int64_t *ns, bool *local);
/*
 * A UTC civil time plus a fraction and a zone offset -> nanoseconds. Returns
 * RT_EPARSE when a field is out of range, RT_ERANGE (as rt_time_parse) when
 * the year lies outside 1678..2261, the span int64 nanoseconds hold, or the
 * time is before 1970 (the epoch is 1 ns). The one place dates become
 * numbers.
 */
int rt_time_from_civil(int y, int mo, int d, int h, int mi, int s,
		       int64_t frac_ns, int64_t offset_s, int64_t *ns);
#define RT_TIME_BUFSZ 48
/* Writes "2024-11-03T14:41:07.123456Z" (microseconds, always Z). */
void rt_time_format(int64_t ns, char out[RT_TIME_BUFSZ]);

/*
 * Text for a shell and for a terminal. Both write to out (NULL: only
 * measure) and return the length written; neither adds a NUL.
 * rt_shell_quote: s as one shell word: unchanged when made of characters
 * no shell treats specially (every Kubernetes name), else in single quotes
 * ('it'\''s'), and in $'...' with C escapes ($'a\nb') when it holds a
 * control character, so the word is one line; the empty string is ''.
 * At most 4n+3 bytes.
 * rt_escape_terminal: control characters as \x1b, \n, \r, \t, C1 controls
 * as \u009b, bidi controls (U+061C, U+200E/F, U+202A..E, U+2066..9) as
 * \u202e, bytes that are not UTF-8 as \xff; printable text unchanged.
 * At most 6n bytes.
 */
size_t rt_shell_quote(const char *s, size_t n, char *out);
size_t rt_escape_terminal(const char *s, size_t n, char *out);
/* Length of the valid UTF-8 sequence at s (n > 0 bytes available), 0 when
 * none starts there (a stray continuation, an overlong form, a surrogate,
 * a sequence cut short). */
size_t rt_utf8_len(const unsigned char *s, size_t n);

enum rt_format {
	RT_FMT_UNKNOWN = 0,
	RT_FMT_K8S_EVENT,      /* core/v1 or events.k8s.io/v1 Event, any framing */
	RT_FMT_EXPORTER,       /* kubernetes-event-exporter JSON */
	RT_FMT_CRI,            /* containerd / CRI-O log line */
	RT_FMT_DOCKER,         /* docker json-file line */
	RT_FMT_FLUENTBIT,      /* Fluent Bit record with a kubernetes map */
	RT_FMT_VECTOR,         /* Vector kubernetes_logs record */
	RT_FMT_HELM_HISTORY,   /* helm history -o json, or its table */
	RT_FMT_HELM_LIST,      /* helm list -o json, or its table */
	RT_FMT_HELM_STATUS,    /* helm status -o json (a release) */
	RT_FMT_HELM_STORAGE,   /* sh.helm.release.v1.* Secret or ConfigMap */
	RT_FMT_HELM_TEXT,      /* helm / kubectl CLI output line */
	RT_FMT_JSON,           /* any other JSON object (app structured log) */
	RT_FMT_TEXT,           /* plain text line */
	RT_FMT_COUNT
};

/* "k8s-event", "exporter", "cri", "docker", "fluentbit", "vector",
 * "helm-history", "helm-list", "helm-status", "helm-storage", "helm-text",
 * "json", "text"; "unknown" for RT_FMT_UNKNOWN. */
const char *rt_format_name(enum rt_format f);
/* RT_FMT_UNKNOWN when name is not one of the above. */
enum rt_format rt_format_from_name(const char *name);

enum rt_severity {
	RT_SEV_NONE = 0,
	RT_SEV_INFO,
	RT_SEV_WARNING,
	RT_SEV_ERROR,
	RT_SEV_CRITICAL,
};

const char *rt_severity_name(enum rt_severity s);    /* "none", "info", ... */
/* Returns -1 when name is not a severity. */
int rt_severity_from_name(const char *name, size_t n);

/* Where a record came from: a file and byte offset, or a Kafka message. */
struct rt_pos {
	const char *source;    /* path, "-", or topic; outlives the batch */
	uint64_t offset;       /* byte offset of the record's first byte */
	int32_t partition;     /* Kafka only, else -1 */
	int64_t kafka_offset;  /* Kafka only, else -1 */
};

/*
 * One revision of a Helm release, as a Helm record states it. History and
 * list documents carry several; the correlator merges them by
 * (ns, release, revision). Fields empty when the input lacks them.
 */
struct rt_revision {
	struct rt_str ns, release;
	int revision;                 /* > 0 */
	struct rt_str status;         /* lower case: deployed, failed, ... */
	struct rt_str chart, app_version, description;
	int64_t updated_ns;           /* 0 when unknown */
	/* From a decoded release payload (helm status, storage Secret). */
	unsigned evidence;            /* RT_REV_* bits */
	struct rt_str hook_configmaps;   /* "name1,name2": ConfigMap/Secret hooks
	                                  * with before-hook-creation */
	struct rt_str manifest_objects;  /* "Kind/ns/name\n" per object of the
	                                  * manifest (ns empty: the release's) */
	struct rt_str manifest_summary;  /* what show compares between two
	                                  * revisions (ingest/helm_summary.c) */
	struct rt_str cluster;        /* the record's, set by corr_batch_add */
};

enum {
	RT_REV_HOOK_CONFIG = 1u << 0,   /* config object templated as a hook */
	RT_REV_NO_CHECKSUM = 1u << 1,   /* workload without checksum/config */
	RT_REV_PAYLOAD = 1u << 2,       /* payload was decoded at all */
};

enum {
	RT_REC_TRUNCATED = 1u << 0,   /* cut at the record size limit */
	RT_REC_BAD_UTF8 = 1u << 1,    /* invalid UTF-8 replaced by U+FFFD */
	RT_REC_BINARY = 1u << 2,      /* NUL or other control bytes seen */
	RT_REC_MULTILINE = 1u << 3,   /* joined from partial lines */
	RT_REC_DEFERRED = 1u << 4,    /* message is a JSON payload's text,
	                               * not yet decoded: ingest_undefer() */
};

/*
 * The normalised record. Every rt_str is a view into the arena it was
 * decoded into, into the input bytes it was framed from, or into static
 * storage: a record lives until its emit callback returns, and whoever
 * keeps one copies it (corr_batch_add does). Strings need not be
 * NUL-terminated. Empty fields have .n == 0.
 */
struct rt_record {
	uint64_t n;                  /* 1-based record number in this run */
	enum rt_format format;
	unsigned flags;              /* RT_REC_* */
	int64_t ts_ns;               /* event time (last seen), 0 = unknown */
	int64_t first_ns;            /* first seen, events only */
	int64_t count;               /* occurrences, >= 1 */

	struct rt_str ns;            /* namespace */
	struct rt_str kind, name;    /* involved/regarding object */
	struct rt_str pod, container, stream;
	struct rt_str field_path;    /* spec.containers{web} */
	struct rt_str reason, type;  /* type: Normal / Warning */
	struct rt_str message;       /* the text rules read by default */
	struct rt_str raw;           /* the whole input record */
	struct rt_str uid;           /* event identity for dedupe, else empty */
	struct rt_str component;     /* source.component / reportingController */
	struct rt_str host;

	/* Hints for the correlator. */
	struct rt_str release;       /* app.kubernetes.io/instance,
	                              * meta.helm.sh/release-name, helm-install-X */
	struct rt_str release_ns;    /* meta.helm.sh/release-namespace */
	struct rt_str owner_kind, owner_name;
	struct rt_str template_hash; /* pod-template-hash */
	struct rt_str chart;         /* helm.sh/chart */

	struct rt_revision *revs;    /* Helm records: revisions stated */
	size_t nrevs;

	/* The cluster the record came from (--cluster, or its topic's):
	 * set by the command, never by a decoder; empty = the default. Part
	 * of every release key and of the event identity. */
	struct rt_str cluster;

	struct rt_pos pos;
};

/* Sets every field to empty, count to 1, partition/offsets to -1. */
void rt_record_init(struct rt_record *r);

/* Occurrence counts come from the input (an Event's count), so their sums
 * saturate at INT64_MAX instead of wrapping: a count of 9e18 seen twice is
 * "at least INT64_MAX", never negative. Counts are >= 0. */
static inline int64_t rt_count_add(int64_t a, int64_t b)
{
	int64_t s;

	return __builtin_add_overflow(a, b, &s) ? INT64_MAX : s;
}

/* A count as a JSON number gives it: 0 for none or below 1 (Go omits a
 * zero count), INT64_MAX for 2^63 and above, else the number cut to an
 * integer. The cast is only done in range, where it is defined. */
static inline int64_t rt_count_of_double(double d)
{
	if (!(d >= 1))          /* NaN included */
		return 0;
	if (d >= 9223372036854775808.0)
		return INT64_MAX;
	return (int64_t)d;
}

/* A file written whole and renamed over target, so readers never see half
 * (core/rt_file.c). rt_replace_open creates a new temporary beside target
 * (same directory, so the rename is atomic), with O_EXCL, O_NOFOLLOW and
 * O_CLOEXEC, mode 0644, and names it in tmp (tmplen bytes); NULL and errno
 * on failure. rt_replace_commit closes f and renames it over target, or
 * removes the temporary when a write or the close failed; 0 or -1. */
FILE *rt_replace_open(const char *target, char *tmp, size_t tmplen);
int rt_replace_commit(FILE *f, const char *tmp, const char *target);

#endif
