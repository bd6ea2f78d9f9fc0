/*
 * helm_text.h (private to ingest/): what the Helm decoders share. dec_helm.c
 * reads Helm JSON and owns the revision helpers; dec_table.c reads tables
 * (helm history/list, kubectl get events, describe) and the helm status
 * block; dec_helm_cli.c reads helm/kubectl CLI lines and is the entry point
 * for every plain text line (dec_helm_text_line).
 */
#ifndef REVTRAIL_INGEST_HELM_TEXT_H
#define REVTRAIL_INGEST_HELM_TEXT_H

#include <string.h>

#include "decode.h"

/* Words a text line is split into at most. */
#define MAX_TOKENS 48

/* A view into the line being read; never owns memory. */
struct span {
	const char *p;
	size_t n;
};


static inline bool span_is(struct span s, const char *lit)
{
	return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

/* Copies a value into a fixed state buffer, cut to fit. */
static inline void keep(char *dst, size_t cap, struct span v)
{
	size_t n = v.n < cap - 1 ? v.n : cap - 1;

	if (n)
		memcpy(dst, v.p, n);
	dst[n] = '\0';
}

static inline bool line_has(struct span s, const char *lit)
{
	return memmem(s.p, s.n, lit, strlen(lit)) != NULL;
}

static inline bool line_starts(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n >= n && memcmp(s.p, lit, n) == 0;
}

static inline struct span trim(const char *p, size_t n)
{
	while (n && ing_is_space(*p)) {
		p++;
		n--;
	}
	while (n && ing_is_space(p[n - 1]))
		n--;
	return (struct span){ p, n };
}

/* dec_helm.c: revisions and the records that carry them. */
int dec_helm_parse_int(const char *p, size_t n);
struct rt_str dec_helm_status_str(struct dec_ctx *d, const char *p,
				     size_t n);
struct rt_revision *dec_helm_revs_alloc(struct dec_ctx *d, size_t n);
struct rt_str dec_helm_opt_str(struct dec_ctx *d, const char *s);
void dec_helm_opts_release(struct dec_ctx *d, struct rt_revision *rev);
int dec_helm_emit_revs(struct dec_ctx *d, struct rt_record *rec,
			  struct rt_revision *revs, size_t n);

/* dec_table.c: tables and the status block. */
int dec_span_tokenize(struct span s, struct span *tok, int max);
struct rt_str dec_span_dup(struct dec_ctx *d, struct span s);
bool dec_table_header(struct dec_helm_state *st, const char *raw,
			 struct span line);
bool dec_kube_header(struct dec_helm_state *st, const char *raw,
			struct span line);
void dec_describe_observe(struct dec_helm_state *st, const char *raw,
			     struct span s);
int dec_table_line(struct dec_ctx *d, struct dec_helm_state *st,
		      const char *raw, struct span line);
int dec_status_block(struct dec_ctx *d, struct dec_helm_state *st,
			struct span line);
/* A blank line: the status block ends there (counted when incomplete). */
void dec_status_block_end(struct ingest_stats *stats,
			  struct dec_helm_state *st);
int dec_headless_row(struct dec_ctx *d, const struct dec_helm_state *st,
		     struct span line);

/* helm_yaml.c: `helm history/list/status -o yaml`, a line at a time (raw:
 * the line with its indentation). DEC_YES when the line was YAML of one of
 * them. dec_helm_yaml_end: the stream ended (counts what was cut off). */
int dec_helm_yaml_line(struct dec_ctx *d, struct dec_helm_state *st,
		       const char *raw, size_t n);
void dec_helm_yaml_end(struct ingest_stats *stats, struct dec_helm_yaml *y);

#endif
