/*
 * rules_int.h: the rule engine's private types, shared by the pack parser
 * (parse.c), the compiler (compile.c), literal derivation (literal.c), the
 * prefilter (prefilter.c), the classifier (classify.c) and the catalog
 * accessors (catalog.c). Unit tests include it for the internal switches.
 */
#ifndef REVTRAIL_RULES_INT_H
#define REVTRAIL_RULES_INT_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "revtrail/rules.h"

#define LIT_CONJ 3      /* required literal sets derived per pattern */

/* The record fields a rule can read, in the order they are tried. */
enum { FIELD_MESSAGE, FIELD_REASON, FIELD_RAW, FIELD_COUNT };

/* A prefilter payload: pattern << PAY_SHIFT | PAY_RAW? | literal set. */
#define PAY_SHIFT 3
#define PAY_RAW 4u      /* in the message's prefilter for the raw field */
#define PAY_SET 3u

/* PCRE2 options every pattern gets; see compile.c for why. */
#define RULES_PCRE2_OPTIONS (PCRE2_CASELESS | PCRE2_UTF | PCRE2_UCP | \
			     PCRE2_MATCH_INVALID_UTF)
#define RULES_MAX_PATTERN 8192     /* bytes; keeps compile time bounded */
#define RULES_MAX_UNLESS 8         /* `unless` lines per rule */

/* An example or counterexample and the line it came from. */
struct rules_text {
	const char *text;
	int line;
};

struct rules_capname {
	const char *name;
	size_t len;
	uint32_t group;
};

struct rules_pattern {
	const char *src;
	int line;
	uint32_t rule;                  /* index into rules.rules */
	pcre2_code *code;
	bool jitted;                    /* JIT compiled, at its first run */
	struct rules_capname *caps;     /* named groups (pool), after compile */
	uint32_t ncaps;
	const char **lits;              /* prefilter literals, lower case */
	uint32_t nlits;                 /* 0: always a candidate */
	bool derived;                   /* lits come from the regex itself */
	/* Further required sets, when lits alone is weak: a candidate holds
	 * a literal of lits and one of each of these. */
	const char **more[LIT_CONJ - 1];
	uint32_t nmore[LIT_CONJ - 1];
	uint32_t nconj;                 /* sets in all: 1 + those in more */
	/* Required sets the prefilter leaves out (not worth a scan, see
	 * compile.c): a member of each is looked for in the text before
	 * PCRE2 runs on it, which costs a tenth of a failed match. */
	const char **check[LIT_CONJ - 1];
	uint32_t ncheck[LIT_CONJ - 1];
	uint32_t nchecks;
};

struct rules_rule {
	const char *id, *file, *explain;
	int line;
	enum rt_severity severity;
	unsigned fields;                /* 1 << FIELD_* */
	unsigned first_field;           /* where examples are put */
	uint32_t *tags;                 /* indexes into rules.tags */
	uint32_t ntags;
	uint32_t pat0, npats;           /* range in rules.pats */
	const char **lits;              /* declared `literal` lines */
	uint32_t nlits;
	/* `unless` lines, lower case ASCII without k or s: a field value
	 * holding one in any ASCII case is not matched. */
	const char **unless;
	uint32_t nunless;
	struct rules_text *examples, *counters;
	uint32_t nexamples, ncounters;
};

struct rules_pool;
struct pf;

/* FNV-1a: the literal index's and the reason memo's slots. */
static inline uint32_t rules_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

#define REASON_MEMO_SLOTS 64     /* a power of two */
#define REASON_MEMO_LEN 40
#define REASON_MEMO_CANDS 8
struct rules {
	struct rules_pool *pool;        /* every string and small array */
	struct rules_rule *rules;
	size_t nrules, caprules;
	struct rules_pattern *pats;
	size_t npats, cappats;
	struct rules_diagnosis *diags;
	size_t ndiags, capdiags;
	const char **tags;              /* catalog order: first load wins */
	size_t ntags, captags;
	pcre2_compile_context *cctx;

	/* Built by rules_compile, released by compile_release. */
	bool compiled;
	bool prefilter_off;             /* test switch: every pattern runs */
	pcre2_match_context *mctx;
	pcre2_jit_stack *jit;
	pcre2_match_data *md;
	/* One prefilter per field, holding only the literals of the patterns
	 * that read it; a literal's payload is pattern << 3 | PAY_* | its set.
	 * The message's also holds the raw field's literals (PAY_RAW, added
	 * whole): when the message is a span of the raw text (a CRI or plain
	 * text line), one scan of the raw text with it serves both fields. */
	struct pf *pf[FIELD_COUNT];
	unsigned field_mask;            /* fields some rule reads */
	uint32_t *always[FIELD_COUNT];  /* patterns with no literal */
	size_t nalways[FIELD_COUNT];
	uint32_t *lit_stamp, lit_gen;   /* per prefilter literal */
	uint32_t *hits;                 /* literal ids of one scan */
	uint32_t *cand_stamp, gen;      /* per pattern x field */
	uint32_t *conj_stamp;           /* ... sets seen this record: */
	unsigned char *conj_seen;       /* bit k: a literal of set k */
	uint32_t *rule_stamp;           /* per rule: hit this record */
	uint32_t *cands;                /* pattern * FIELD_COUNT + field */
	/* The reason field's candidates by its text (classify.c): an Event's
	 * reason is one of a few dozen words, and a scan of one cost 400
	 * instructions an Event. Cleared by rules_compile. */
	struct reason_memo {
		unsigned char n;        /* text length; 0: empty slot */
		unsigned char ncands;
		char text[REASON_MEMO_LEN];
		uint32_t only;
		uint32_t cands[REASON_MEMO_CANDS];
	} reason_memo[REASON_MEMO_SLOTS];
};

/* common.c: the pool; memory freed by rules_free (rules_pool_free). */
void *rules_alloc(struct rules *r, size_t n);
char *rules_strndup(struct rules *r, const char *p, size_t n);
void rules_pool_free(struct rules *r);

/* compile.c */
void rules_compile_release(struct rules *r);
/* JIT compiles p's code, once; call before each pcre2_match. */
void rules_jit(struct rules_pattern *p);
/* Compiles one pattern with the engine's options; on failure writes
 * "OFFSET: MESSAGE" detail into msg and returns NULL. */
pcre2_code *rules_pcre2_compile(struct rules *r, const char *src, size_t n,
				size_t *erroff, char *msg, size_t msglen);

/* classify.c */
#define RULES_ALL ((uint32_t)-1)
/* Classifies with or without the prefilter, optionally one rule only. */
unsigned rules_classify_opt(struct rules *r, const struct rt_record *rec,
			    struct rt_arena *arena, struct rt_class *out,
			    bool prefilter, uint32_t only_rule);

/* literal.c: required literals of a regex, for the prefilter. */
#define LIT_MAX 16      /* alternatives per pattern */
#define LIT_LEN 48      /* longer runs are cut: a piece is still required */
#define LIT_MIN 3       /* shorter literals do not filter */
struct lit_set {
	unsigned n;     /* 0: no usable literal, the pattern always runs */
	unsigned char len[LIT_MAX];
	char s[LIT_MAX][LIT_LEN];
};
/* Fills out with lower-case strings such that every match of re (as
 * compiled with RULES_PCRE2_OPTIONS) contains at least one of them. */
void lit_derive(const char *re, size_t n, struct lit_set *out);
struct lit_cnf {
	unsigned n;     /* 0: no usable literal */
	struct lit_set set[LIT_CONJ];   /* best first; set[0] is lit_derive's */
};
/* Every match of re contains a member of each set of out. */
void lit_derive_cnf(const char *re, size_t n, struct lit_cnf *out);
/* The lit_score of a set's least selective member. */
unsigned lit_set_score(const struct lit_set *s);
#define LIT_WEAK_SCORE 20       /* below: worth requiring a second set */
#define LIT_CONJ_MIN 5          /* shortest literal of a further set */

/* common.c: how ordinary log text looks, to pick selective literals. */
unsigned lit_rarity(unsigned char c);
bool lit_common(const unsigned char *p, size_t n);      /* n: 3 or 4 */
/* Higher for literals less likely in ordinary logs; 0 for common words. */
unsigned lit_score(const char *s, size_t n);

/* prefilter.c: one multi-literal scan over a text. */
struct pf *pf_new(void);
void pf_free(struct pf *pf);
/* Registers that pattern pat requires literal s (any case). */
int pf_add(struct pf *pf, const char *s, size_t n, uint32_t pat);
/* pf_add, for a literal pf_scan_span must find outside its span too. */
int pf_add_whole(struct pf *pf, const char *s, size_t n, uint32_t pat);
/* Whether literal s (any case) was added; only before pf_build. */
bool pf_has(const struct pf *pf, const char *s, size_t n);
int pf_build(struct pf *pf);
size_t pf_nlits(const struct pf *pf);
/* After pf_build: whether the scan samples windows (false: the literals are
 * few enough for the byte-pair pass alone). For tests. */
bool pf_windowed(const struct pf *pf);
/* After pf_build: whether the byte pass finds every whole literal, so
 * that pf_scan_span samples windows inside its span only. For tests. */
bool pf_span_windows(const struct pf *pf);
const uint32_t *pf_lit_pats(const struct pf *pf, uint32_t lit, size_t *n);
/* The byte pass with AVX2 where the CPU has it (pf_build's choice), or
 * SSE2. Returns whether AVX2 is now used. Tests try both. */
bool pf_set_avx2(struct pf *pf, bool on);
/* With AVX2, whether the gate bits come by gather (pf_set_avx2 decides by
 * the CPU); tests try both. */
void pf_set_gather(struct pf *pf, bool on);
/*
 * Finds the literals present in text. Each literal found (and whose
 * stamp[] != gen) is stamped and appended to hits. Returns the number
 * appended, or -1 when the text holds a character that caseless UTF
 * matching equates with an ASCII letter (every pattern must run).
 */
int pf_scan(const struct pf *pf, const char *text, size_t n, uint32_t *stamp,
	    uint32_t gen, uint32_t *hits);
/*
 * pf_scan, and a literal found in text but not inside its span [lo, hi) is
 * stamped gen_out and appended as its id | PF_HIT_OUT (and again, plain,
 * when it is also found inside). Literals added with pf_add_whole are
 * always so found; others outside the span may be left out. gen_out !=
 * gen; hits then has room for twice the literals.
 */
#define PF_HIT_OUT 0x80000000u
int pf_scan_span(const struct pf *pf, const char *text, size_t n, size_t lo,
		 size_t hi, uint32_t *stamp, uint32_t gen, uint32_t gen_out,
		 uint32_t *hits);

/* After pf_build: whether pf_scan gives up on a text holding one of the
 * characters below (some literal holds a 'k' or an 's'). */
bool pf_caseless(const struct pf *pf);
/* Whether text holds a character that caseless UTF matching equates with
 * an ASCII letter, which byte compares cannot fold: KELVIN SIGN (k) or
 * LONG S (s). Then every pattern must run. */
bool pf_has_k_or_s_sign(const char *text, size_t n);
/* Whether text holds lit (lower case, 2 bytes or more) in any ASCII case,
 * as the scan would find it. */
bool pf_contains(const char *text, size_t n, const char *lit, size_t len);

/* Test switch: false runs every pattern on every record. */
void rules_set_prefilter(struct rules *r, bool on);

#endif
