/*
 * frame.h (private to ingest/): the state shared by the framer (frame.c),
 * the public entry points and source table (ingest.c), the dispatcher
 * (detect.c), the log decoders (dec_logs.c) and the text helpers (text.c).
 *
 * Bytes of a source become lines; lines become frames (a line, or a whole
 * pretty-printed JSON document); frames are sanitised into the arena and
 * dispatched. CRI `P` lines and docker split pieces wait in a per
 * (source, file context, stream) buffer until their final piece arrives.
 */
#ifndef REVTRAIL_INGEST_FRAME_H
#define REVTRAIL_INGEST_FRAME_H

#include "revtrail/rt_kit.h"
#include "decode.h"
#include "json_scan.h"
#include "json_stream.h"

/* Pending partial pieces of one stream (CRI P lines, docker pieces). */
struct ing_part {
	struct rt_buf raw;     /* physical lines, '\n'-joined, sanitised */
	struct rt_buf text;    /* content so far, sanitised */
	uint64_t off;           /* stream offset of the first piece */
	int64_t ts_ns;          /* time of the first piece */
	unsigned flags;         /* RT_REC_* of all pieces so far */
	bool time_range;        /* a piece's time was out of range (dec_emit) */
	unsigned pieces;
	enum rt_format fmt;     /* RT_FMT_CRI or RT_FMT_DOCKER */
	bool open;
};

/*
 * What the file a line came from says: the source's own path, or the file
 * named by the last `tail -F` header. Strings point into path.
 */
struct ing_ctx {
	char *path;                     /* malloc'd; NULL for the source path */
	struct rt_str pod, ns, container;
	struct ing_part part[2];        /* stdout, stderr */
	uint64_t used;                  /* LRU tick */
	/* Arena copies, valid during one ingest call (generation gen). */
	uint64_t gen;
	struct rt_str apod, ans, acontainer;
};

#define ING_MAX_CTX 8

struct ing_src {
	struct ing_src *next;
	const char *name;
	uint64_t off;                   /* stream offset of the next byte */

	/* A line that spans chunks; capped at max_record + 1 bytes. */
	struct rt_buf line;
	uint64_t line_off;
	bool line_over;                 /* bytes beyond the cap were dropped */

	/*
	 * An open JSON document: pretty-printed (from a line that is just
	 * `{` or `[`), or compact on one line over the bound (doc_line). The
	 * streamer follows it; while doc_whole it is also kept whole in doc,
	 * up to max_record, to be decoded as one frame. spill: the current
	 * line is over the bound and goes to the streamer as it arrives.
	 */
	bool in_doc, doc_whole, doc_line, spill;
	uint64_t doc_off;
	struct rt_buf doc;
	struct js_stream js;
	struct ingest *in;

	struct ing_ctx ctx[ING_MAX_CTX];   /* [0]: the source's own path */
	int nctx, cur;

	struct dec_helm_state helm;
};

struct ingest {
	struct ingest_opts opts;
	struct ingest_stats stats;
	struct ing_src *srcs;
	uint64_t gen, tick;
	struct dec_helm_state msg_helm;    /* Kafka values */
	struct js_stream msg_js;           /* a Kafka value over the bound */
	const struct ing_frame *msg;       /* the value msg_js reads */
	int64_t hint_ts_ns;                /* Kafka timestamp of this call */

	/* The current call's arena and callback; stop keeps the callback's
	 * non-zero return so it is never mistaken for DEC_YES. */
	struct rt_arena *arena;
	ingest_emit_fn emit;
	void *emit_ctx;
	int stop;

	/* Every JSON frame is read with json_scan.h into jdoc. */
	struct js_doc jdoc;
	/* and the JSON payload of a log line into pdoc (dec_ctx.payload). */
	struct js_doc pdoc;
};

/* One frame on its way to the decoders. */
struct ing_frame {
	const char *p;          /* raw bytes, not sanitised, no newline */
	size_t n;
	struct rt_pos pos;
	unsigned flags;         /* RT_REC_TRUNCATED from the framer */
	bool doc;               /* a multi-line JSON document */
	bool plain;             /* all printable ASCII: nothing to clean */
	struct ing_src *src;    /* NULL for Kafka values: no joins, no context */
	struct dec_helm_state *helm;
};

/* path.c: views into path: pod, namespace and container for a kubelet
 * log path. */
bool ing_path_parse(const char *path, size_t n, struct rt_str *pod,
		    struct rt_str *ns, struct rt_str *container);

/* ctx.c: a source's file contexts. */
int ing_set_header(struct ingest *in, struct ing_src *src, const char *path,
		   size_t n);
/* What path (a source's name or a header) says into ctx's pod fields. */
void ing_ctx_parse(struct ing_ctx *ctx, const char *path, size_t n);
void ing_ctx_release(struct ing_ctx *ctx);

/* frame.c: bytes of a source to frames. ing_doc_init readies a new
 * source's document streamer. */
void ing_doc_init(struct ingest *in, struct ing_src *src);
int ing_frame_bytes(struct ingest *in, struct ing_src *src, const char *buf,
		    size_t n);
int ing_frame_finish(struct ingest *in, struct ing_src *src);

/* detect.c: one frame to records; emits or rejects. */
int ing_dispatch(struct ingest *in, const struct ing_frame *f);
/* Emits what a context still holds (EOF, eviction). */
int ing_flush_parts(struct ingest *in, struct ing_src *src,
		    struct ing_ctx *ctx);
/* Counts a rejected record, and says why on opts.verbose. */
void ing_reject(struct ingest *in, const struct rt_pos *pos,
		const char *reason);
/* A document or List item over max_record, skipped: a reject, counted
 * apart too, the first one's place kept for the summary's warning. */
void ing_oversize(struct ingest *in, const struct rt_pos *pos);

/* dec_logs.c */
struct ing_cri {
	int64_t ts_ns;
	int stream;             /* 0 stdout, 1 stderr */
	bool partial;
	size_t content;         /* offset of the content in the line */
};
/* 0 when the line is a CRI log line, else -1. Allocation free. */
int ing_cri_parse(const char *p, size_t n, struct ing_cri *c);
/* A docker json-file object (obj, a node of doc): keys only from log,
 * stream, time, attrs. */
bool ing_is_docker_js(const struct js_doc *doc, const struct js_node *obj);
/* A docker line's time, stream and attrs (io.kubernetes.* labels). */
void ing_docker_fields_js(struct dec_ctx *d, struct rt_record *rec,
			  const struct js_doc *doc, const struct js_node *obj);
/*
 * A JSON object as a log record (docs/formats.md §2): Fluent Bit, Vector,
 * docker json-file (one record, not joined), any other object. DEC_YES,
 * the callback's return, or DEC_NO (before emitting anything) for what is
 * not an object or not of a forced format; and, until after_kube (the
 * Kubernetes and Helm decoders had their turn), for what they may read.
 */
int ing_log_json_js(struct dec_ctx *d, const struct js_doc *doc,
		    const struct js_node *obj, bool after_kube);

/* fast_event.c: Events, from json_scan.h nodes. The members the decoder
 * reads are picked in the same walk of the object that tells an Event, so
 * it is walked once. */
#define ING_EVENT_MEMBERS 24
struct ing_event {
	const struct js_node *m[ING_EVENT_MEMBERS];
};
/* Whether obj (a node of doc) is an Event (bare, or with envelope in an
 * ADDED/MODIFIED/DELETED envelope), its members then in ev. */
bool ing_event_at(const struct js_doc *doc, const struct js_node *obj,
		  bool envelope, struct ing_event *ev);
/* Emits the Event ev: DEC_YES or the callback's return. */
int ing_event_fast(struct dec_ctx *d, const struct js_doc *doc,
		   const struct ing_event *ev);

/* Sets message (unwrapping a JSON payload's msg/message/error and level),
 * format and emits. content must live in the arena. */
int ing_log_emit(struct dec_ctx *d, struct rt_record *rec,
		 enum rt_format fmt, struct rt_str content);
extern const struct rt_str ing_stream_names[2];

/* text.c */
/* Copies p into the arena with invalid UTF-8 and control bytes replaced by
 * U+FFFD; ORs RT_REC_BAD_UTF8/RT_REC_BINARY into *flags, adds the number of
 * bad bytes to *junk. cut: the input was truncated, so an incomplete last
 * character is dropped rather than flagged. .p is NULL on ENOMEM. */
struct rt_str ing_clean(struct rt_arena *a, const char *p, size_t n, bool cut,
			unsigned *flags, size_t *junk);
/* Like ing_clean, but a text that needs no change is returned as it lies,
 * not copied: for frames whose record dies with the emit callback and that
 * nothing parses as a C string. */
/* Length of the run of printable ASCII at p (no control byte, not even a
 * newline or tab, no DEL, nothing >= 0x80). */
size_t ing_plain_run(const char *p, size_t n);
struct rt_str ing_clean_view(struct rt_arena *a, const char *p, size_t n,
			     bool cut, unsigned *flags, size_t *junk);
/* Same into b (appended). Returns 0 or RT_ENOMEM. */
int ing_clean_buf(struct rt_buf *b, const char *p, size_t n, bool cut,
		  unsigned *flags);
/* RFC 3339 at p (no trailing text checks): bytes consumed, 0 if none. */
size_t ing_rfc3339(const char *p, size_t n, int64_t *ns);
/* Any time form found in logs: RFC 3339, rt_time_parse's forms, and the
 * nginx time_local "01/May/2024:10:15:13 +0000". 0, RT_EPARSE or, as
 * rt_time_parse says, RT_ERANGE. */
int ing_time_parse(const char *p, size_t n, int64_t *ns);
/* A timestamp leading a text line: 0 with *ns, RT_EPARSE when there is
 * none, or RT_ERANGE (one rt_time_parse holds out of range). */
int ing_leading_time(const char *p, size_t n, int64_t *ns);
/* A JSON string body (between the quotes) decoded into out (n + 4 bytes,
 * NUL-terminated), returning the length.
 * It writes no further than it has read plus one, so out may be p - 1:
 * a string decoded in place of its opening quote. */
size_t ing_json_unescape_to(char *out, const char *p, size_t n);

#endif
