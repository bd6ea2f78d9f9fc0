/*
 * decode.h (private to ingest/): the contract between the framer/dispatcher
 * (ingest.c, detect.c) and the format decoders (dec_*.c).
 *
 * The framer cuts bytes into frames (a line, or a whole pretty-printed JSON
 * document), fills a base record (raw text, position, flags, and what the
 * file name or `tail -F` header says about pod/namespace/container), then
 * asks the decoders in turn. A decoder either does not recognise the frame
 * (returns DEC_NO) or emits zero or more records built from the base and
 * returns DEC_YES (or a negative RT_E* / the callback's return).
 */
#ifndef REVTRAIL_INGEST_DECODE_H
#define REVTRAIL_INGEST_DECODE_H

#include <stddef.h>

#include "revtrail/ingest.h"
#include "json_scan.h"

enum { DEC_NO = 0, DEC_YES = 1 };

/* helm_yaml.c: a `helm history/list/status -o yaml` being read. */
struct dec_helm_yaml {
	int mode;             /* DEC_YAML_* */
	int section;          /* status: the top-level key being read */
	bool meta;            /* status: inside chart.metadata */
	int scalar_indent;    /* inside a block scalar of a key at this
	                       * indent; -1 when not */
	int last_key;         /* the key a continuation line adds to; -1 */
	bool any;             /* an item or status has a key */
	char release[64], ns[64], status[32], chart[128], chart_version[64];
	char app_version[64], description[512], updated[80], first[80];
	int revision;
	struct rt_pos pos;    /* where the item or status began */
};

/* Per-source state the line decoders keep between lines. */
struct dec_helm_state {
	int table;            /* DEC_TABLE_*: inside a helm table */
	int ncols;
	signed char col[12];  /* column index -> DEC_COL_* */
	/* kubectl tables: column start offsets from the header */
	short at[12];
	/* The fields above are all a header's reading fills in: the header
	 * readers zero only them (DEC_HELM_HEAD), not the whole state, whose
	 * bulk is text buffers, for every line they see. */
	int indent;           /* header's leading blanks */
	int tabbed, desc_at;  /* header TAB-separated; else DESCRIPTION offset */
	int rows, cont;       /* rows since the header, continuation lines */
	/* `$ helm history NAME -n NS` seen just before a history table */
	char cmd_release[64], cmd_ns[64];
	/* `helm install/upgrade/status` text block: NAME:, NAMESPACE:, ... */
	char name[128], ns[128], status[32], when[64];
	int revision;
	/* CHART:, VERSION:, APP_VERSION: (helm status --show-metadata) */
	char chart[128], chart_version[64], app_version[64];
	bool block_rev;       /* its revision was emitted: DESCRIPTION adds */
	bool block_counted;   /* counted as without a usable REVISION */
	struct rt_pos block_pos;  /* where its NAME: line was */
	/* The object a `kubectl describe` is about (Name:, Namespace:,
	 * Node:). */
	char obj_name[128], obj_ns[64];
	int obj_pod;
	/* The release the last `helm install/upgrade/...` command of a
	 * stream (pod and container) named: the lines that follow in that
	 * stream are about it (dec_helm_op_apply). */
	char op_release[64], op_ns[64], op_pod[128], op_container[64];
	bool op_set;
	struct dec_helm_yaml yaml;
};

#define DEC_HELM_HEAD offsetof(struct dec_helm_state, indent)

enum {
	DEC_TABLE_NONE = 0, DEC_TABLE_HISTORY, DEC_TABLE_LIST,
	DEC_TABLE_EVENTS,     /* kubectl get events */
	DEC_TABLE_DESCRIBE,   /* the Events: section of kubectl describe */
};

struct dec_ctx {
	struct rt_arena *arena;
	const struct ingest_opts *opts;
	struct ingest_stats *stats;
	const struct rt_record *base;   /* copy it, then fill in */
	int64_t hint_ts_ns;             /* Kafka timestamp or 0 */
	ingest_emit_fn emit;
	void *emit_ctx;
	/* The source's line state, for the release a helm command named in
	 * the stream; NULL where there is none (Kafka values). */
	struct dec_helm_state *helm;
	/* A time out of range (RT_ERANGE) was read since the last record was
	 * emitted: dec_emit counts that record once and clears it. */
	bool time_range;
	/* Where a log line's JSON payload is parsed (dec_logs.c), apart from
	 * the frame's own nodes, which a record's decoder still reads; NULL:
	 * a js_doc of the call's own. */
	struct js_doc *payload;
};

/* Counts one fallback: ++*count, and where[] names the record being
 * decoded (dec_count) or pos (dec_count_at) when it is the first
 * (ingest_stats' first_* fields). */
void dec_count(struct dec_ctx *d, uint64_t *count, char *where);
void dec_count_at(const struct rt_pos *pos, uint64_t *count, char *where);

/* The end of a source's stream: a helm status block still open there is
 * counted as incomplete when it had no usable REVISION. */
void dec_helm_text_end(struct ingest_stats *stats, struct dec_helm_state *st);

/* Emits a record: counts it, assigns rec->n, calls the callback. */
int dec_emit(struct dec_ctx *d, struct rt_record *rec);

/* A time parser's answer (rc, and *ns when rc is 0: a pointer, read after
 * the parser that fills it has run) as a record's time: 0
 * for "unknown" unless rc is 0; RT_ERANGE also marks the record for
 * dec_emit's count of times out of range. */
int64_t dec_time(struct dec_ctx *d, int rc, const int64_t *ns);

/*
 * Event normalisation (fast_event.c, the one Event reader).
 * dec_event_container: "spec.containers{web}" (also init/ephemeral) ->
 * "web", a view into fp; the "spec.containers[2]" form names none.
 * dec_event_message: drops the recorder's "(combined from similar events): "
 * prefix.
 */
struct rt_str dec_event_container(struct rt_str fp);
struct rt_str dec_event_message(struct rt_str msg);

/*
 * dec_kube.c, dec_helm.c: Kubernetes API objects and Helm documents.
 * Handles Event (core/v1, events.k8s.io/v1), exporter events, watch
 * envelopes {"type","object"} (ERROR/BOOKMARK counted as skipped), List
 * documents (each item dispatched), Helm storage Secrets/ConfigMaps, helm
 * status/history/list JSON. DEC_NO for any other JSON value. root is a
 * node of doc (json_scan.h).
 */
struct js_doc;
struct js_node;
int dec_kube_json(struct dec_ctx *d, const struct js_doc *doc,
		  const struct js_node *root);

/*
 * dec_helmchart.c: a k3s/RKE2 helm-controller HelmChart (helm.cattle.io),
 * the namespace its release is installed in as one record's release hint.
 * dec_helmchart_is: whether obj is one. dec_helmchart: DEC_YES, DEC_NO
 * for one without a usable name or namespace, or the callback's return.
 */
bool dec_helmchart_is(const struct js_doc *doc, const struct js_node *obj);
int dec_helmchart(struct dec_ctx *d, const struct js_doc *doc,
		  const struct js_node *obj);

/*
 * dec_helm.c: the Helm half of dec_kube_json (which calls it for arrays and
 * for objects that are not Events): history/list arrays, a release (helm
 * status -o json), storage Secrets/ConfigMaps. DEC_NO when not Helm.
 */
int dec_helm_json(struct dec_ctx *d, const struct js_doc *doc,
		  const struct js_node *root);

/*
 * helm_payload.c: peels base64 layers and gzip off a storage object's
 * `release` value until JSON appears. On success *json is a malloc'd,
 * NUL-terminated copy the caller frees; returns RT_EPARSE on malformed or
 * over-limit input (decompressed size bounded by DEC_HELM_PAYLOAD_MAX).
 */
#define DEC_HELM_PAYLOAD_MAX ((size_t)64 << 20)

/* helm_manifest.c: "Kind/ns/name\n" for each object of a rendered
 * manifest (ns empty when the document names none), in the arena;
 * bounded in count and size. */
struct rt_str dec_manifest_objects(struct rt_arena *a, const char *manifest);
/* What a revision's manifest sets that breaks pods when it changes, as
 * "Kind/name\tpath\tvalue\n" lines (helm_summary.c); bounded. */
struct rt_str dec_manifest_summary(struct rt_arena *a, const char *manifest);
int dec_helm_payload_unwrap(const char *s, size_t n, char **json,
			    size_t *jsonlen);
/*
 * The members of release JSON (n bytes) that dec_helm.c reads -- name,
 * namespace, version, info, chart.metadata, hooks -- as one object parsed
 * by json_scan.h (node 0 of doc), the rest stepped over unparsed. Members
 * whose tree would take the total past DEC_HELM_TREE_MAX (text plus a
 * bound per item) are left out and dropped set. The manifest, when it is
 * a string, is decoded inside json and pointed to: free json after the
 * release. 0, RT_EPARSE when json is not an object, or RT_ENOMEM;
 * dec_helm_release_free after a 0.
 */
#define DEC_HELM_TREE_MAX ((size_t)64 << 20)
struct dec_helm_release {
	struct js_doc doc;
	char *text;             /* what doc's nodes point into */
	const char *manifest;   /* NUL-terminated, or NULL */
	bool dropped;
};
int dec_helm_payload_release(char *json, size_t n, struct dec_helm_release *r);
void dec_helm_release_free(struct dec_helm_release *r);

/*
 * Helm table rows and helm/kubectl CLI text. Called for every plain text
 * frame (not for the content of CRI or docker lines). Returns DEC_YES when
 * the line was consumed (a table header or row, a status block line) and
 * records were emitted as needed.
 */
int dec_helm_text_line(struct dec_ctx *d, struct dec_helm_state *st,
		       const char *line, size_t n);

/*
 * A log line run by or about a Helm operation names its release: a helm
 * install/upgrade/rollback/uninstall/test command line (remembered for the
 * stream's later lines, which are that operation's output), helm-operator's
 * `release=X targetNamespace=Y`, Flux's `"HelmRelease":{"name":..}`. Sets
 * rec's release hint from the line itself, else from the stream's last
 * command when rec has none (its pod's labels win over a memory).
 */
void dec_helm_op_apply(struct dec_ctx *d, struct dec_helm_state *st,
		       struct rt_record *rec, struct rt_str line);

/*
 * dec_logs.c: container log shapes, read from json_scan.h nodes
 * (ing_log_json_js, frame.h): docker json-file, Fluent Bit, Vector and any
 * other JSON object (structured app logs: the message is msg/message/log,
 * joined with the causes beside it: error, err, reason, exception,
 * exc_info, stack_trace, ...; else the raw text). CRI lines are parsed by
 * ing_cri_parse (frame.h); partial joining lives in detect.c.
 */

/* isspace() in the C locale, which revtrail runs in (it never calls
 * setlocale), without the table lookup: the decoders trim every line. */
static inline bool ing_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
	       c == '\v';
}

#endif
