/*
 * ingest.h: bytes in, normalised records out.
 *
 * A caller feeds raw bytes of one or more named streams (files, stdin) as
 * they arrive; ingest frames them into records (lines, pretty-printed JSON
 * objects, joined CRI/docker partials), detects each record's format and
 * decodes it into a struct rt_record whose strings live in the caller's
 * arena. Kafka values, which are already framed, go through
 * ingest_decode_message().
 */
#ifndef REVTRAIL_INGEST_H
#define REVTRAIL_INGEST_H

#include <stdio.h>

#include "revtrail/rt.h"

/* The largest Helm release Secret Kubernetes stores holds 1 MiB of data,
 * which kubectl prints base64-encoded again: 1.4 MB, and a few more for
 * metadata and indentation. 4 MiB takes it with room; each List item is
 * held alone, so memory is a few times this, not a List's size. */
#define INGEST_DEFAULT_MAX_RECORD (4u << 20)

struct ingest_opts {
	size_t max_record;          /* bytes; 0 = INGEST_DEFAULT_MAX_RECORD */
	enum rt_format force;       /* RT_FMT_UNKNOWN = detect per record */
	const char *release_ns;     /* --release [NS/]NAME: names the release of */
	const char *release_name;   /* history inputs that lack it; may be NULL */
	FILE *verbose;              /* -v: rejects are printed here; NULL = quiet */
	/* Leave a container's JSON log payload undecoded when decoding could
	 * only narrow its text (no escapes, no cause to join): the record's
	 * message is the payload's text, flagged RT_REC_DEFERRED. Most such
	 * lines match no rule on that text either, and then never need the
	 * decoding; ingest_undefer() does it for the others. */
	bool defer_payload;
};

/* Where a count of ingest_stats first grew: "FILE:OFFSET" or
 * "TOPIC[PARTITION]@OFFSET", empty while the count is 0. */
#define INGEST_WHERE_MAX 320

struct ingest_stats {
	uint64_t bytes;
	uint64_t records;           /* emitted */
	uint64_t rejects;           /* could not be decoded at all */
	uint64_t truncated;         /* text lines over max_record, cut */
	/* JSON documents and List items over max_record, skipped (counted
	 * in rejects too); where the first one began, "FILE:OFFSET" or
	 * "TOPIC/PARTITION:OFFSET". */
	uint64_t oversize;
	char oversize_at[256];
	uint64_t bad_utf8;          /* records with invalid UTF-8 repaired */
	uint64_t binary;            /* records with NUL/control junk */
	uint64_t skipped;           /* watch ERROR/BOOKMARK envelopes, headers */
	uint64_t times_out_of_range; /* records holding a date before 1970 or
	                              * after 2261: read as absent) */
	uint64_t times_local;       /* Helm table times without a zone, read
	                             * in the local zone (TZ, --helm-tz) */
	uint64_t helm_payload_fallback; /* release payload not decoded: the
	                                 * revision from the object's labels */
	uint64_t bad_times;         /* docker json-file `time` empty or not a
	                             * time: the record has none of its own */
	uint64_t helm_status_incomplete; /* helm status blocks without a
	                                  * usable REVISION: no revision */
	char first_out_of_range[INGEST_WHERE_MAX];
	char first_local[INGEST_WHERE_MAX];
	char first_fallback[INGEST_WHERE_MAX];
	char first_bad_time[INGEST_WHERE_MAX];
	char first_incomplete[INGEST_WHERE_MAX];
	uint64_t by_format[RT_FMT_COUNT];
};

/*
 * Called once per decoded record. The record and its strings are valid
 * until the callback returns (some are views into the bytes fed, the rest
 * live in the arena passed to ingest_feed(), which the callback must not
 * reset). A non-zero return stops the feed and is returned by it.
 */
typedef int (*ingest_emit_fn)(void *ctx, struct rt_record *rec);

struct ingest;

/* Returns NULL on allocation failure. Copies what it needs from opts. */
struct ingest *ingest_new(const struct ingest_opts *opts);
void ingest_free(struct ingest *in);

/*
 * Feeds the next n bytes of the stream named source (kept by pointer: it
 * must outlive the ingest). Framing state (a partial line, an open JSON
 * object, CRI partials, the current `tail -F` header) is kept per source.
 * Records complete within these bytes are emitted now. Returns 0, RT_ENOMEM,
 * or the callback's non-zero return.
 */
int ingest_feed(struct ingest *in, const char *source, const char *buf,
		size_t n, struct rt_arena *arena, ingest_emit_fn emit, void *ctx);

/* End of the stream: emits what is pending (a last line without newline,
 * unterminated partials) and forgets the source's state. */
int ingest_finish(struct ingest *in, const char *source,
		  struct rt_arena *arena, ingest_emit_fn emit, void *ctx);

/*
 * Decodes one already-framed message (a Kafka value). key may be NULL;
 * kafka_ts_ns is the message timestamp (0 = none), used when the payload
 * carries no time. A List or history document may emit several records.
 */
int ingest_decode_message(struct ingest *in, const char *buf, size_t n,
			  const char *key, size_t keylen, int64_t kafka_ts_ns,
			  const struct rt_pos *pos, struct rt_arena *arena,
			  ingest_emit_fn emit, void *ctx);

const struct ingest_stats *ingest_stats(const struct ingest *in);

/*
 * Decodes a deferred payload (RT_REC_DEFERRED) in place: the message
 * becomes the payload's msg-like member and the type its level, as if
 * decoded at once (on allocation failure the message stays the payload's
 * text). A record not deferred is left alone.
 */
void ingest_undefer(struct rt_record *rec, struct rt_arena *arena);

/*
 * The file source: reads every path ("-", or none at all, is stdin) in
 * large chunks and feeds them to in. After each chunk between (may be
 * NULL) runs: that is where callers commit a batch and reset the arena
 * the chunk's records lived in. It also runs when a signal interrupts a
 * read, so a caller that checks a stop flag there stops a quiet pipe or
 * FIFO at once (a signal handler installed without SA_RESTART). Stops at the first non-zero return of
 * emit or between and returns it; a path that cannot be opened or read is
 * reported on stderr and the others are still read, then RT_EIO is
 * returned (RT_ENOMEM without a buffer).
 */
typedef int (*ingest_chunk_fn)(void *ctx);
int ingest_read_paths(struct ingest *in, char **paths, int npaths,
		      struct rt_arena *arena, ingest_emit_fn emit,
		      ingest_chunk_fn between, void *ctx);

/*
 * The pieces of the file source, for a caller that multiplexes several
 * inputs (pipeline/driver.c). ingest_read_file feeds a regular file from
 * its offset to its end (mapped, then read() for what it gained), running
 * between after each slice as ingest_read_paths does; it does not finish
 * the source (a followed file goes on growing). 0, RT_EIO (reported),
 * RT_ENOMEM, or the first non-zero return of emit or between.
 */
int ingest_read_file(struct ingest *in, const char *name, int fd,
		     struct rt_arena *arena, ingest_emit_fn emit,
		     ingest_chunk_fn between, void *ctx);
/*
 * One read() of at most cap bytes of fd into buf, fed as the source name:
 * 0 with *nread the bytes read (0: end of input), 1 when nothing was read
 * (EAGAIN, EINTR), RT_EIO (reported), or what ingest_feed returned.
 */
int ingest_read_some(struct ingest *in, const char *name, int fd, char *buf,
		     size_t cap, struct rt_arena *arena, ingest_emit_fn emit,
		     void *ctx, size_t *nread);
/* The stream offset of the next byte of the source name (a file resumed
 * at a stored position), before its first feed. 0 or RT_ENOMEM. */
int ingest_set_offset(struct ingest *in, const char *name, uint64_t off);

#endif
