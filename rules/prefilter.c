/*
 * prefilter.c: finds which of many literals occur in a text, caselessly, in
 * one pass. Most log lines match no rule, so this scan is the whole cost of
 * classifying them.
 *
 * Design: sampled windows behind a gate. The scan looks at the text only at
 * every 4th position. The 4 bytes there, folded with "| 0x20" (ASCII upper
 * to lower case, plus a few collisions that verification removes), are
 * hashed into the gate, one bitmap that holds the first 4 bytes of every
 * anchor; with SSE2 the four positions of 16 bytes are hashed at once. The
 * gate rejects almost every position of ordinary text; what passes is
 * checked per kind of literal:
 *
 *  - long literals (LONG_LEN bytes and more, most of them) by the 8-byte
 *    window at the position. A literal occurrence starts at some p; for each
 *    of the 4 possible p mod 4 the literal contributes one anchor: an
 *    aligned 8-byte window inside it, whose first 4 bytes are rare in logs
 *    (common.c). Windows of ordinary text that pass the gate ("econ" of
 *    "second") rarely match 8 bytes, so a second bitmap of the whole 8-byte
 *    windows stops them before the table of exact keys and the compare.
 *  - mid-size literals (SHORT_LEN to LONG_LEN - 1 bytes) by 4-byte windows,
 *    in bitmaps of their own under a second hash (a text window colliding
 *    with an anchor in the gate rarely collides in both). Such a window may
 *    stick out of its literal by one byte, the wildcard, which sets 128 bits
 *    (every folded byte value); literals of 7 bytes or more never need it.
 *    A hit is looked up in a small hash table of anchors and checked with
 *    one 8-byte masked compare before the literal.
 *
 * Positions are independent (no automaton state), so the CPU overlaps them:
 * four positions per step and one branch for all four gate tests. Shorter
 * literals (3-4 bytes, e.g. "503") would need more wildcards, so they are
 * found differently: each has an anchor pair of adjacent bytes (its rarest,
 * or one another literal already uses), and a second pass looks for those
 * pairs 16 positions at a time with SSE2 compares. A field with only a few
 * literals on a few pairs (the raw field's in the default packs) is scanned
 * by that pass alone.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
/* An AVX2 byte pass where the compiler can build one and the CPU runs it
 * (pf_build asks); the SSE2 pass otherwise. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PF_AVX2 1
#endif

#include "revtrail/rt_kit.h"
#include "rules_int.h"

#define FOLD32 0x20202020u
#define FOLD64 0x2020202020202020ull
#define HIGH64 0x8080808080808080ull
#define MUL32 0x9E3779B1u
#define MUL32B 0x85EBCA77u      /* a second, independent hash */
#define MUL64 0x9E3779B97F4A7C15ull
/* 32 KiB a bitmap; fixed, so shifts are constants. The gate holds a bit
 * for each window of the default packs' literals: at half this size too
 * many text positions passed it by chance, and the fewer passes of this
 * size beat the L1 the gate no longer has to itself; twice this size
 * gained little more (figures: docs/benchmarks.md). */
#define BITS_LG 18
#define WC_LEAD 0xffffff00u     /* key mask: the window's first byte is free */
#define WC_TAIL 0x00ffffffu     /* the window's last byte is free */
#define STRIDE 4
#define SHORT_LEN 5             /* shorter literals use the byte pass */
#define LONG_LEN 11             /* from here every residue has an aligned
				 * 8-byte window inside the literal */
#define MAX_SPAIRS 8            /* anchor pairs the SSE2 pass compares */
#define PAIR_MODE_LITS 64       /* at most this many literals ... */
#define PAIR_MODE_PAIRS 4       /* ... on this many pairs: byte pass only */

struct pf_lit {
	char *s;                /* lower case */
	uint32_t len;
	uint32_t pat0, npats;   /* range in pf.litpats */
	bool whole;             /* looked for outside a span too */
};

struct pf_pair {
	uint32_t lit, pat;
};

/* An anchor of a mid-size literal: a 4-byte window. */
struct pf_anchor {
	uint32_t key;           /* folded window; a wildcard byte is 0 */
	uint32_t lit;
	int32_t off;            /* window start minus literal start */
	/* The literal's first 8 bytes (fewer when shorter), folded: one
	 * compare rejects most hits of common windows ("ompl" of "request
	 * completed" against "incomplete"). From the literal's start rather
	 * than the window's, since the window was chosen as the literal's
	 * rarest part and text that shares it differs elsewhere. */
	uint64_t pre, premask;
};

/* An anchor of a long literal: an 8-byte window inside it. */
struct pf_lanchor {
	uint64_t key;           /* folded window */
	uint32_t lit;
	uint32_t off;           /* window start minus literal start */
};

struct pf_slot {
	uint32_t key, start, count;     /* range in pf.anchors; key 0: empty */
};

/* A literal of the byte pass: where its anchor pair is, and its folded
 * bytes from the pair on (mask: the ones inside it), which one compare
 * checks before the whole literal. */
struct pf_short {
	uint32_t lit, off;
	uint16_t pair;
	uint32_t key, mask;
};

/* The literals sharing an anchor pair, and the bytes that may follow the
 * pair in one of them (folded; all when the pair ends one): "50" then a
 * '2', '3' or '4', not the '0' of a timestamp's ".500". */
struct pf_sgroup {
	uint16_t pair;
	uint32_t start, count;          /* range in pf.shorts */
	uint64_t third[4];
};

struct pf_lslot {
	uint64_t key;           /* 0: empty (no folded window is 0) */
	uint32_t start, count;  /* range in pf.lanchors */
};

struct pf {
	struct pf_lit *lits;
	size_t nlits, caplits;
	uint32_t *lit_index;    /* open addressing over lits, while adding */
	size_t lit_index_cap;
	struct pf_pair *pairs;
	size_t npairs, cappairs;
	uint32_t *litpats;

	uint64_t *gate;         /* the first 4 bytes of any anchor's window */
	uint64_t *lbits;        /* long tier: by the whole 8-byte window */
	struct pf_lanchor *lanchors;
	size_t nlanchors;
	struct pf_lslot *lslots;
	uint32_t lslotmask;

	uint64_t *bits;         /* mid tier: some anchor below might match */
	uint64_t *exact_bits;   /* ... an anchor without a free byte */
	uint64_t *lead_bits;    /* ... one whose first byte is free */
	uint64_t *tail_bits;    /* ... one whose last byte is free */
	struct pf_anchor *anchors;
	size_t nanchors;
	struct pf_slot *slots;
	uint32_t slotmask;

	struct pf_short *shorts;        /* literals the byte pass finds, by
					 * pair after pf_build */
	size_t nshorts;
	struct pf_sgroup *sgroups;      /* one per anchor pair */
	size_t nsgroups;
	uint16_t spairs[MAX_SPAIRS];
	/* Each pair's first and second byte, 16 times: the SSE2 pass's
	 * compare operands, built once rather than per text. */
	_Alignas(16) unsigned char spair_lo[MAX_SPAIRS][16];
	_Alignas(16) unsigned char spair_hi[MAX_SPAIRS][16];
	/* The same 32 times, for the AVX2 pass: its compares read them from
	 * memory, where broadcasting the 16-byte ones cost an instruction a
	 * pair and step. */
	unsigned char spair_lo32[MAX_SPAIRS][32];
	unsigned char spair_hi32[MAX_SPAIRS][32];
	/* The AVX2 pass's nibble tables, twice over (a shuffle looks up
	 * each 16-byte half in its own): bit k of entry x of nib[2j] when
	 * byte j from a place may have low nibble x in the group of anchor
	 * pair k, of nib[2j + 1] the high nibble; byte 2 is the group's
	 * third (build_nibbles). */
	unsigned char nib[6][32];
	unsigned nspairs;       /* > MAX_SPAIRS: no SSE2 pass */
	uint64_t spair_tab[65536 / 64];         /* folded pair values */
	bool caseless_k_s;      /* some literal holds a 'k' or an 's' */
	/* The byte pass finds every whole literal (pf_add_whole), so the
	 * windows of pf_scan_span need only cover its span. */
	bool span_windows;
	bool avx2;              /* the byte pass 32 bytes at a time */
	bool gather;            /* the AVX2 gate bits by vpgatherdd */
};

static const unsigned char lower_tab[256] = {
#define L4(c) ((c) >= 'A' && (c) <= 'Z' ? (c) | 0x20 : (c)), \
	((c) + 1 >= 'A' && (c) + 1 <= 'Z' ? ((c) + 1) | 0x20 : (c) + 1), \
	((c) + 2 >= 'A' && (c) + 2 <= 'Z' ? ((c) + 2) | 0x20 : (c) + 2), \
	((c) + 3 >= 'A' && (c) + 3 <= 'Z' ? ((c) + 3) | 0x20 : (c) + 3)
#define L16(c) L4(c), L4((c) + 4), L4((c) + 8), L4((c) + 12)
	L16(0), L16(16), L16(32), L16(48), L16(64), L16(80), L16(96),
	L16(112), L16(128), L16(144), L16(160), L16(176), L16(192), L16(208),
	L16(224), L16(240),
#undef L16
#undef L4
};

struct pf *pf_new(void)
{
	return calloc(1, sizeof(struct pf));
}

void pf_free(struct pf *pf)
{
	if (!pf)
		return;
	for (size_t i = 0; i < pf->nlits; i++)
		free(pf->lits[i].s);
	free(pf->lits);
	free(pf->lit_index);
	free(pf->pairs);
	free(pf->litpats);
	free(pf->gate);
	free(pf->lbits);
	free(pf->lanchors);
	free(pf->lslots);
	free(pf->bits);
	free(pf->exact_bits);
	free(pf->lead_bits);
	free(pf->tail_bits);
	free(pf->anchors);
	free(pf->slots);
	free(pf->shorts);
	free(pf->sgroups);
	free(pf);
}

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* ---- literals: a hash index keeps adding hundreds of them linear ---- */

/* Slot of s in the index: where it is, or the empty slot it would take. */
static uint32_t *index_slot(const struct pf *pf, const char *s, size_t n)
{
	size_t mask = pf->lit_index_cap - 1, h = rules_hash(s, n) & mask;

	while (pf->lit_index[h]) {
		const struct pf_lit *l = &pf->lits[pf->lit_index[h] - 1];

		if (l->len == n && !memcmp(l->s, s, n))
			break;
		h = (h + 1) & mask;
	}
	return &pf->lit_index[h];
}

/* Keeps the index at most half full; entries are literal index + 1. */
static int index_grow(struct pf *pf)
{
	size_t cap = pf->lit_index_cap ? pf->lit_index_cap * 2 : 64;

	if ((pf->nlits + 1) * 2 <= pf->lit_index_cap)
		return 0;
	free(pf->lit_index);
	if (!(pf->lit_index = calloc(cap, sizeof(uint32_t))))
		return RT_ENOMEM;
	pf->lit_index_cap = cap;
	for (size_t i = 0; i < pf->nlits; i++)
		*index_slot(pf, pf->lits[i].s, pf->lits[i].len) =
			(uint32_t)i + 1;
	return 0;
}

static int add(struct pf *pf, const char *s, size_t n, uint32_t pat,
	       bool whole)
{
	char low[LIT_LEN];
	uint32_t *slot;

	if (n < LIT_MIN)
		return RT_EINVAL;
	if (n > LIT_LEN)
		n = LIT_LEN;    /* a piece of a required literal is required */
	for (size_t k = 0; k < n; k++)
		low[k] = (char)lower_tab[(unsigned char)s[k]];
	if (index_grow(pf))
		return RT_ENOMEM;
	slot = index_slot(pf, low, n);
	if (!*slot) {
		struct pf_lit *l;

		if (RT_GROW(pf->lits, pf->nlits + 1, pf->caplits))
			return RT_ENOMEM;
		l = &pf->lits[pf->nlits];
		/* Zero padded: eq_lower reads it 8 bytes at a time. */
		if (!(l->s = calloc(1, n + 8)))
			return RT_ENOMEM;
		memcpy(l->s, low, n);
		l->len = (uint32_t)n;
		l->pat0 = l->npats = 0;
		l->whole = false;
		*slot = (uint32_t)++pf->nlits;
	}
	pf->lits[*slot - 1].whole |= whole;
	if (RT_GROW(pf->pairs, pf->npairs + 1, pf->cappairs))
		return RT_ENOMEM;
	pf->pairs[pf->npairs++] = (struct pf_pair){ *slot - 1, pat };
	return 0;
}

int pf_add(struct pf *pf, const char *s, size_t n, uint32_t pat)
{
	return add(pf, s, n, pat, false);
}

int pf_add_whole(struct pf *pf, const char *s, size_t n, uint32_t pat)
{
	return add(pf, s, n, pat, true);
}

bool pf_has(const struct pf *pf, const char *s, size_t n)
{
	char low[LIT_LEN];

	if (n < LIT_MIN || !pf->lit_index)
		return false;
	if (n > LIT_LEN)
		n = LIT_LEN;
	for (size_t k = 0; k < n; k++)
		low[k] = (char)lower_tab[(unsigned char)s[k]];
	return *index_slot(pf, low, n) != 0;
}

/* Intel's Gather Data Sampling microcode (Skylake to Tiger Lake, when
 * the kernel reports "Mitigation: Microcode") makes vpgatherdd several
 * times slower; there the gate bits are tested one at a time. */
static bool gathers_slow(void)
{
	static int slow = -1;
	char line[128] = "";
	FILE *f;

	if (slow < 0) {
		f = fopen("/sys/devices/system/cpu/vulnerabilities/"
			  "gather_data_sampling", "r");
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = '\0';
			fclose(f);
		}
		slow = strncmp(line, "Mitigation: Microcode", 21) == 0;
	}
	return slow;
}

bool pf_set_avx2(struct pf *pf, bool on)
{
#ifdef PF_AVX2
	pf->avx2 = on && __builtin_cpu_supports("avx2");
#else
	(void)on;
#endif
	pf->gather = pf->avx2 && !gathers_slow();
	return pf->avx2;
}

void pf_set_gather(struct pf *pf, bool on)
{
	pf->gather = pf->avx2 && on;
}

bool pf_windowed(const struct pf *pf)
{
	return pf->nanchors || pf->nlanchors;
}

bool pf_span_windows(const struct pf *pf)
{
	return pf->span_windows;
}

bool pf_caseless(const struct pf *pf)
{
	return pf->caseless_k_s;
}

size_t pf_nlits(const struct pf *pf)
{
	return pf->nlits;
}

const uint32_t *pf_lit_pats(const struct pf *pf, uint32_t lit, size_t *n)
{
	*n = pf->lits[lit].npats;
	return pf->litpats + pf->lits[lit].pat0;
}

/* ---- bitmaps ---- */

static inline uint32_t hash32(uint32_t key)
{
	return (key * MUL32) >> (32 - BITS_LG);
}

/* The mid tier's own bitmaps are indexed by another hash than the gate, so
 * a text window ("2024") whose hash happens to collide with an anchor's in
 * one does not pass both. */
static inline uint32_t hash32b(uint32_t key)
{
	return (key * MUL32B) >> (32 - BITS_LG);
}

static inline uint32_t hash64(uint64_t key)
{
	return (uint32_t)((key * MUL64) >> (64 - BITS_LG));
}

static inline uint64_t test_bit(const uint64_t *bits, uint32_t h)
{
	return bits[h >> 6] >> (h & 63) & 1;
}

static void set_bit(uint64_t *bits, uint32_t h)
{
	bits[h >> 6] |= 1ull << (h & 63);
}

/* ---- choosing anchors ---- */

/* Rarity of l's bytes [e, e + w) (w is 4 or 8), 0 for bytes only common
 * words cover ("ques" of "request" hits all day). Bytes outside l count as
 * free. Returns the number of free bytes; *key is the folded window with 0
 * for free bytes (w = 4). */
static unsigned window(const struct pf_lit *l, int e, unsigned w,
		       uint64_t *key, unsigned *score)
{
	unsigned wc = 0, lo = w, hi = 0;

	*key = 0;
	*score = 0;
	for (unsigned i = 0; i < w; i++) {
		int j = e + (int)i;

		if (j < 0 || j >= (int)l->len) {
			wc++;
			continue;
		}
		lo = i < lo ? i : lo;
		hi = i + 1;
		*key |= (uint64_t)((unsigned char)l->s[j] | 0x20) << (8 * i);
	}
	if (hi > lo)
		*score = lit_score(l->s + e + lo, hi - lo);
	return wc;
}

/* Best 4-byte window for occurrences starting at p = r (mod stride): the
 * window then starts at p + e with p + e = 0 (mod stride) and e >= -r, so
 * it never starts before the text. At most one free byte (it costs 128
 * bits), then the rarest bytes; a free byte is worth it when the only
 * windows without one are common text ("stat" of "sqlstate"). Between
 * windows the model scores alike (both common text, say), the rarer bytes:
 * "fig" and a free byte rather than a free byte and "con" for "config",
 * which " connection" and " controller" would pass. */
static void choose(const struct pf_lit *l, unsigned r, struct pf_anchor *a)
{
	int best_score = -100;
	unsigned best_bytes = 0;

	for (int e = -(int)r; e < (int)l->len; e += STRIDE) {
		uint64_t key;
		unsigned score, wc = window(l, e, 4, &key, &score), bytes = 0;
		int adj = (int)score - 6 * (int)wc;

		for (unsigned i = 0; i < 4; i++)
			bytes += lit_rarity((unsigned char)(key >> (8 * i)));
		if (wc > 1 || adj < best_score ||
		    (adj == best_score && bytes <= best_bytes))
			continue;
		best_score = adj;
		best_bytes = bytes;
		a->key = (uint32_t)key;
		a->off = e;
	}
}

/* Best 8-byte window inside l for occurrences starting at p = r (mod
 * stride): e = -r (mod stride), 0 <= e <= len - 8. Its first 4 bytes pass
 * the scan's gate, so they should be rare above all; then the rest. */
static void choose_long(const struct pf_lit *l, unsigned r,
			struct pf_lanchor *a)
{
	int best_score = -1;

	for (int e = (STRIDE - (int)r) % STRIDE; e + 8 <= (int)l->len;
	     e += STRIDE) {
		uint64_t key, key4;
		unsigned score, score4;

		window(l, e, 4, &key4, &score4);
		window(l, e, 8, &key, &score);
		score += 64 * score4;
		if ((int)score <= best_score)
			continue;
		best_score = (int)score;
		a->key = key;
		a->off = (uint32_t)e;
	}
}

static void set_prefix(const struct pf_lit *l, struct pf_anchor *a)
{
	a->pre = a->premask = 0;
	for (unsigned i = 0; i < 8 && i < l->len; i++) {
		a->pre |= (uint64_t)((unsigned char)l->s[i] | 0x20) << (8 * i);
		a->premask |= 0xffull << (8 * i);
	}
}

static uint16_t pair_at(const struct pf_lit *l, unsigned i)
{
	return (uint16_t)(((unsigned char)l->s[i] | 0x20) |
			  ((unsigned char)l->s[i + 1] | 0x20) << 8);
}

static bool pair_known(const struct pf *pf, uint16_t pair)
{
	return pf->spair_tab[pair >> 6] >> (pair & 63) & 1;
}

/* How many of pf's literals hold pair. */
static unsigned pair_uses(const struct pf *pf, uint16_t pair)
{
	unsigned n = 0;

	for (size_t i = 0; i < pf->nlits; i++) {
		const struct pf_lit *l = &pf->lits[i];
		bool has = false;

		for (unsigned k = 0; k + 1 < l->len && !has; k++)
			has = pair_at(l, k) == pair;
		n += has;
	}
	return n;
}

/* Where l's anchor pair is: one the byte pass already looks for when l
 * has one ("50" of " 503 " once "503" chose it); else, when share, the one
 * most other literals hold (" /" of "get /", "post /", "put /"...); else
 * l's rarest pair of adjacent bytes ("50" of "503": a '5' alone is
 * everywhere in timestamps). */
static unsigned choose_pair(const struct pf *pf, const struct pf_lit *l,
			    bool share)
{
	unsigned best = 0, best_score = 0, best_uses = 0;

	for (unsigned i = 0; i + 1 < l->len; i++)
		if (pair_known(pf, pair_at(l, i)))
			return i;
	for (unsigned i = 0; i + 1 < l->len; i++) {
		unsigned sc = lit_rarity((unsigned char)l->s[i]) +
			      lit_rarity((unsigned char)l->s[i + 1]);
		unsigned uses = share ? pair_uses(pf, pair_at(l, i)) : 0;

		if (uses > best_uses || (uses == best_uses && sc > best_score)) {
			best_uses = uses;
			best_score = sc;
			best = i;
		}
	}
	return best;
}

/* A literal found by the byte pass, anchored on a pair of bytes. */
static void add_short(struct pf *pf, uint32_t lit, bool share)
{
	const struct pf_lit *l = &pf->lits[lit];
	unsigned off = choose_pair(pf, l, share);
	uint16_t pair = pair_at(l, off);
	struct pf_short *sh = &pf->shorts[pf->nshorts];

	sh->lit = lit;
	sh->off = off;
	sh->pair = pair;
	sh->key = sh->mask = 0;
	for (unsigned i = 0; i < 4 && off + i < l->len; i++) {
		sh->key |= (uint32_t)((unsigned char)l->s[off + i] | 0x20) << (8 * i);
		sh->mask |= 0xffu << (8 * i);
	}
	if (!pair_known(pf, pair)) {
		pf->spair_tab[pair >> 6] |= 1ull << (pair & 63);
		if (pf->nspairs < MAX_SPAIRS)
			pf->spairs[pf->nspairs] = pair;
		pf->nspairs++;
	}
	pf->nshorts++;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct pf_pair *x = a, *y = b;

	if (x->lit != y->lit)
		return x->lit < y->lit ? -1 : 1;
	return x->pat < y->pat ? -1 : x->pat > y->pat;
}

static int cmp_anchor(const void *a, const void *b)
{
	const struct pf_anchor *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->lit < y->lit ? -1 : x->lit > y->lit;
}

static int cmp_lanchor(const void *a, const void *b)
{
	const struct pf_lanchor *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->lit < y->lit ? -1 : x->lit > y->lit;
}

static int build_litpats(struct pf *pf)
{
	size_t k = 0;

	if (pf->npairs)
		qsort(pf->pairs, pf->npairs, sizeof(*pf->pairs), cmp_pair);
	if (!(pf->litpats = malloc((pf->npairs + 1) * sizeof(uint32_t))))
		return RT_ENOMEM;
	for (size_t i = 0; i < pf->npairs; i++) {
		struct pf_lit *l = &pf->lits[pf->pairs[i].lit];

		if (i && pf->pairs[i].lit == pf->pairs[i - 1].lit &&
		    pf->pairs[i].pat == pf->pairs[i - 1].pat)
			continue;
		if (!l->npats)
			l->pat0 = (uint32_t)k;
		l->npats++;
		pf->litpats[k++] = pf->pairs[i].pat;
	}
	return 0;
}

static void add_long(struct pf *pf, uint32_t lit)
{
	size_t first = pf->nlanchors;

	for (unsigned r = 0; r < STRIDE; r++) {
		struct pf_lanchor a = { 0, lit, 0 };
		bool dup = false;

		choose_long(&pf->lits[lit], r, &a);
		for (size_t k = first; k < pf->nlanchors && !dup; k++)
			dup = pf->lanchors[k].key == a.key &&
			      pf->lanchors[k].off == a.off;
		if (!dup)
			pf->lanchors[pf->nlanchors++] = a;
	}
}

static void add_mid(struct pf *pf, uint32_t lit)
{
	size_t first = pf->nanchors;

	for (unsigned r = 0; r < STRIDE; r++) {
		struct pf_anchor a = { 0, lit, 0, 0, 0 };
		bool dup = false;

		choose(&pf->lits[lit], r, &a);
		set_prefix(&pf->lits[lit], &a);
		for (size_t k = first; k < pf->nanchors && !dup; k++)
			dup = pf->anchors[k].key == a.key &&
			      pf->anchors[k].off == a.off;
		if (dup)
			continue;
		pf->anchors[pf->nanchors++] = a;
	}
}

/* Gives the byte pass the literals of SHORT_LEN bytes and more (the
 * whole ones only, when whole), anchored on pairs others share when
 * share; takes them back, and returns false, when that makes more than
 * max anchor pairs. */
static bool try_shorts(struct pf *pf, bool whole, bool share, unsigned max)
{
	size_t nshorts = pf->nshorts;
	unsigned nspairs = pf->nspairs;
	uint64_t *tab;
	bool ok;

	if (!(tab = malloc(sizeof(pf->spair_tab))))
		return false;
	memcpy(tab, pf->spair_tab, sizeof(pf->spair_tab));
	for (size_t i = 0; i < pf->nlits && pf->nspairs <= max; i++)
		if (pf->lits[i].len >= SHORT_LEN &&
		    (!whole || pf->lits[i].whole))
			add_short(pf, (uint32_t)i, share);
	ok = pf->nspairs <= max;
	if (!ok) {
		pf->nshorts = nshorts;
		pf->nspairs = nspairs;
		memcpy(pf->spair_tab, tab, sizeof(pf->spair_tab));
	}
	free(tab);
	return ok;
}

/*
 * A few literals that share a few pairs ("503", " 503 ", "http 503": the
 * raw-field literals of the default packs) are all found by the byte pass,
 * which then costs fewer instructions a byte than the windows. Tried
 * after the short literals took their pairs: the longer ones join them,
 * and go back when that takes too many pairs.
 */
static bool pair_mode(struct pf *pf)
{
	return pf->nlits <= PAIR_MODE_LITS &&
	       try_shorts(pf, false, true, PAIR_MODE_PAIRS);
}

/* Up to one anchor per literal and residue; short literals go to the byte
 * pass. */
static int make_anchors(struct pf *pf)
{
	size_t n = pf->nlits + 1;

	pf->anchors = calloc(n * STRIDE, sizeof(*pf->anchors));
	pf->lanchors = calloc(n * STRIDE, sizeof(*pf->lanchors));
	pf->shorts = malloc(n * sizeof(*pf->shorts));
	pf->sgroups = malloc(n * sizeof(*pf->sgroups));
	if (!pf->anchors || !pf->lanchors || !pf->shorts || !pf->sgroups)
		return RT_ENOMEM;
	for (size_t i = 0; i < pf->nlits; i++) {
		const struct pf_lit *l = &pf->lits[i];

		pf->caseless_k_s |= memchr(l->s, 'k', l->len) ||
				    memchr(l->s, 's', l->len);
		if (l->len < SHORT_LEN)
			add_short(pf, (uint32_t)i, false);
	}
	if (pair_mode(pf))
		return 0;
	/* The whole literals of a span scan (the raw field's, in the
	 * message's prefilter) to the byte pass, on their rarest pairs, which
	 * reads all of the text anyway: the windows then skip what lies
	 * outside the span (a CRI line's timestamp, stream and tag). */
	pf->span_windows = try_shorts(pf, true, false, MAX_SPAIRS);
	for (size_t i = 0; i < pf->nlits; i++) {
		if (pf->lits[i].len < SHORT_LEN ||
		    (pf->lits[i].whole && pf->span_windows))
			continue;
		if (pf->lits[i].len < LONG_LEN)
			add_mid(pf, (uint32_t)i);
		else
			add_long(pf, (uint32_t)i);
	}
	qsort(pf->anchors, pf->nanchors, sizeof(*pf->anchors), cmp_anchor);
	qsort(pf->lanchors, pf->nlanchors, sizeof(*pf->lanchors), cmp_lanchor);
	return 0;
}

static int cmp_short(const void *a, const void *b)
{
	const struct pf_short *x = a, *y = b;

	if (x->pair != y->pair)
		return x->pair < y->pair ? -1 : 1;
	return x->lit < y->lit ? -1 : x->lit > y->lit;
}

/* Sorts the byte pass's literals by pair and groups them. */
static void group_shorts(struct pf *pf)
{
	qsort(pf->shorts, pf->nshorts, sizeof(*pf->shorts), cmp_short);
	for (size_t i = 0; i < pf->nshorts; i++) {
		const struct pf_short *sh = &pf->shorts[i];
		const struct pf_lit *l = &pf->lits[sh->lit];
		struct pf_sgroup *g;

		if (!i || sh->pair != pf->shorts[i - 1].pair)
			pf->sgroups[pf->nsgroups++] = (struct pf_sgroup){
				.pair = sh->pair, .start = (uint32_t)i };
		g = &pf->sgroups[pf->nsgroups - 1];
		g->count++;
		if (sh->off + 2 < l->len) {
			unsigned c = (unsigned char)l->s[sh->off + 2] | 0x20;

			g->third[c >> 6] |= 1ull << (c & 63);
		} else {
			memset(g->third, 0xff, sizeof(g->third));
		}
	}
}

/* Sets bit g of the entries of nib[2j] and nib[2j + 1] (both halves)
 * for the low and high nibbles of folded byte c at place j of group g.
 * Folded, a text byte's high nibble may lack bit 1 ("| 0x20" sets it). */
static void nibble_set(struct pf *pf, unsigned j, unsigned c, unsigned g)
{
	for (unsigned x = 0; x < 16; x++)
		if ((x | 2) == c >> 4)
			pf->nib[2 * j + 1][x] = pf->nib[2 * j + 1][x + 16] |=
				(unsigned char)(1u << g);
	pf->nib[2 * j][c & 15] = pf->nib[2 * j][(c & 15) + 16] |=
		(unsigned char)(1u << g);
}

/* The AVX2 byte pass's tables: a bucket per anchor pair (group), exact for
 * the pair; the third byte's nibbles may admit a few more. */
static void build_nibbles(struct pf *pf)
{
	memset(pf->nib, 0, sizeof(pf->nib));
	for (unsigned g = 0; g < pf->nsgroups && g < MAX_SPAIRS; g++) {
		const struct pf_sgroup *gr = &pf->sgroups[g];

		nibble_set(pf, 0, gr->pair & 0xffu, g);
		nibble_set(pf, 1, gr->pair >> 8, g);
		for (unsigned c = 0; c < 256; c++)
			if (gr->third[c >> 6] >> (c & 63) & 1)
				nibble_set(pf, 2, c, g);
	}
}

static int build_bitmaps(struct pf *pf)
{
	size_t words = (1u << BITS_LG) / 64;

	pf->gate = calloc(words, sizeof(uint64_t));
	pf->lbits = calloc(words, sizeof(uint64_t));
	pf->bits = calloc(words, sizeof(uint64_t));
	pf->exact_bits = calloc(words, sizeof(uint64_t));
	pf->lead_bits = calloc(words, sizeof(uint64_t));
	pf->tail_bits = calloc(words, sizeof(uint64_t));
	if (!pf->gate || !pf->lbits || !pf->bits || !pf->exact_bits ||
	    !pf->lead_bits || !pf->tail_bits)
		return RT_ENOMEM;
	for (size_t i = 0; i < pf->nlanchors; i++) {
		set_bit(pf->lbits, hash64(pf->lanchors[i].key));
		set_bit(pf->gate, hash32((uint32_t)pf->lanchors[i].key));
	}
	for (size_t i = 0; i < pf->nanchors; i++) {
		uint32_t key = pf->anchors[i].key;
		unsigned shift = !(key & 0xffu) ? 0 : !(key >> 24) ? 24 : 32;

		if (shift == 32) {
			set_bit(pf->gate, hash32(key));
			set_bit(pf->bits, hash32b(key));
			set_bit(pf->exact_bits, hash32b(key));
			continue;
		}
		for (uint32_t x = 0; x < 256; x++) {
			uint32_t k = key | (x | 0x20) << shift;

			set_bit(pf->gate, hash32(k));
			set_bit(pf->bits, hash32b(k));
			set_bit(shift ? pf->tail_bits : pf->lead_bits, hash32b(k));
		}
	}
	return 0;
}

static inline uint32_t slot_of(const struct pf *pf, uint32_t key)
{
	return ((key * 0x85EBCA6Bu) ^ (key >> 13)) & pf->slotmask;
}

static inline uint32_t lslot_of(const struct pf *pf, uint64_t key)
{
	return (uint32_t)((key * 0xC2B2AE3D27D4EB4Full) >> 32) & pf->lslotmask;
}

static size_t table_size(size_t n)
{
	size_t size = 16;

	while (size < n * 2)
		size <<= 1;
	return size;
}

static int build_slots(struct pf *pf)
{
	size_t size = table_size(pf->nanchors);

	if (!(pf->slots = calloc(size, sizeof(*pf->slots))))
		return RT_ENOMEM;
	pf->slotmask = (uint32_t)size - 1;
	for (size_t i = 0; i < pf->nanchors;) {
		uint32_t key = pf->anchors[i].key, h = slot_of(pf, key);
		size_t j = i;

		while (j < pf->nanchors && pf->anchors[j].key == key)
			j++;
		while (pf->slots[h].key)
			h = (h + 1) & pf->slotmask;
		pf->slots[h] = (struct pf_slot){ key, (uint32_t)i,
						 (uint32_t)(j - i) };
		i = j;
	}
	return 0;
}

static int build_lslots(struct pf *pf)
{
	size_t size = table_size(pf->nlanchors);

	if (!(pf->lslots = calloc(size, sizeof(*pf->lslots))))
		return RT_ENOMEM;
	pf->lslotmask = (uint32_t)size - 1;
	for (size_t i = 0; i < pf->nlanchors;) {
		uint64_t key = pf->lanchors[i].key;
		uint32_t h = lslot_of(pf, key);
		size_t j = i;

		while (j < pf->nlanchors && pf->lanchors[j].key == key)
			j++;
		while (pf->lslots[h].key)
			h = (h + 1) & pf->lslotmask;
		pf->lslots[h] = (struct pf_lslot){ key, (uint32_t)i,
						   (uint32_t)(j - i) };
		i = j;
	}
	return 0;
}

int pf_build(struct pf *pf)
{
	int rc;

	free(pf->lit_index);    /* only needed while adding */
	pf->lit_index = NULL;
	pf->lit_index_cap = 0;
	if ((rc = build_litpats(pf)) || (rc = make_anchors(pf)))
		return rc;
	group_shorts(pf);
	for (unsigned k = 0; k < pf->nspairs && k < MAX_SPAIRS; k++) {
		memset(pf->spair_lo[k], pf->spairs[k] & 0xff, 16);
		memset(pf->spair_hi[k], pf->spairs[k] >> 8, 16);
		memset(pf->spair_lo32[k], pf->spairs[k] & 0xff, 32);
		memset(pf->spair_hi32[k], pf->spairs[k] >> 8, 32);
	}
	build_nibbles(pf);
	if ((rc = build_bitmaps(pf)) || (rc = build_slots(pf)))
		return rc;
	pf_set_avx2(pf, true);
	return build_lslots(pf);
}

/* ---- the scan ---- */

static bool eq_lower(const unsigned char *t, const char *lit, size_t n)
{
	const unsigned char *u = (const unsigned char *)lit;

	/* Folded 8 bytes at a time first (the last chunk overlaps the one
	 * before), the exact byte compare only when that agrees. */
	if (n >= 8) {
		for (size_t k = 0; k + 8 <= n; k += 8)
			if ((load64(t + k) | FOLD64) != (load64(u + k) | FOLD64))
				return false;
		if ((load64(t + n - 8) | FOLD64) != (load64(u + n - 8) | FOLD64))
			return false;
	}
	for (size_t k = 0; k < n; k++)
		if (lower_tab[t[k]] != u[k])
			return false;
	return true;
}

/* memchr, since glibc's memmem spends more setting up a call than it
 * saves on lines this short. */
bool pf_has_k_or_s_sign(const char *text, size_t n)
{
	const char *end = text + n, *q;

	for (q = text; (q = memchr(q, '\xe2', (size_t)(end - q))); q++)
		if (end - q >= 3 && q[1] == '\x84' && q[2] == '\xaa')
			return true;
	for (q = text; (q = memchr(q, '\xc5', (size_t)(end - q))); q++)
		if (end - q >= 2 && q[1] == '\xbf')
			return true;
	return false;
}

bool pf_contains(const char *text, size_t n, const char *lit, size_t len)
{
	const unsigned char *t = (const unsigned char *)text;
	unsigned char a = (unsigned char)lit[0] | 0x20;
	unsigned char b = (unsigned char)lit[1] | 0x20;
	size_t i = 0, last;

	if (len > n)
		return false;
	last = n - len;         /* the last place it can start */
#ifdef __SSE2__
	const __m128i fold = _mm_set1_epi8(0x20), va = _mm_set1_epi8((char)a),
		      vb = _mm_set1_epi8((char)b);

	for (; i + 17 <= n && i <= last; i += 16) {
		__m128i x = _mm_or_si128(fold,
			_mm_loadu_si128((const __m128i *)(t + i)));
		__m128i y = _mm_or_si128(fold,
			_mm_loadu_si128((const __m128i *)(t + i + 1)));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(
			_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(y, vb)));

		for (; m; m &= m - 1) {
			size_t p = i + (unsigned)__builtin_ctz(m);

			if (p <= last && eq_lower(t + p, lit, len))
				return true;
		}
	}
#endif
	for (; i <= last; i++)
		if ((t[i] | 0x20) == a && (t[i + 1] | 0x20) == b &&
		    eq_lower(t + i, lit, len))
			return true;
	return false;
}

struct scan {
	const struct pf *pf;
	const unsigned char *t;
	size_t n;
	size_t lo, hi;          /* the span: hits outside it are flagged */
	uint32_t *stamp, gen, gen_out, *hits;
	int nhits;
};

/* The literal lit starts at text position start: compare, record. One
 * found outside the span is recorded flagged, and again if it turns up
 * inside the span later. */
static inline void confirm(struct scan *s, uint32_t lit, size_t start)
{
	const struct pf_lit *l = &s->pf->lits[lit];

	if (start + l->len > s->n || s->stamp[lit] == s->gen ||
	    !eq_lower(s->t + start, l->s, l->len))
		return;
	if (start < s->lo || start + l->len > s->hi) {
		if (s->stamp[lit] == s->gen_out)
			return;
		s->stamp[lit] = s->gen_out;
		s->hits[s->nhits++] = lit | PF_HIT_OUT;
		return;
	}
	s->stamp[lit] = s->gen;
	s->hits[s->nhits++] = lit;
}

static void verify_long(struct scan *s, size_t pos, uint64_t key)
{
	const struct pf *pf = s->pf;
	uint32_t h = lslot_of(pf, key);

	while (pf->lslots[h].key && pf->lslots[h].key != key)
		h = (h + 1) & pf->lslotmask;
	for (uint32_t k = 0; k < pf->lslots[h].count; k++) {
		const struct pf_lanchor *a = &pf->lanchors[pf->lslots[h].start + k];

		if (pos >= a->off)
			confirm(s, a->lit, pos - a->off);
	}
}

static const struct pf_slot *lookup(const struct pf *pf, uint32_t key)
{
	uint32_t h = slot_of(pf, key);

	while (pf->slots[h].key) {
		if (pf->slots[h].key == key)
			return &pf->slots[h];
		h = (h + 1) & pf->slotmask;
	}
	return NULL;
}

static void verify_key(struct scan *s, size_t pos, uint32_t key)
{
	const struct pf_slot *slot = lookup(s->pf, key);

	if (!slot)
		return;
	for (uint32_t k = 0; k < slot->count; k++) {
		const struct pf_anchor *a = &s->pf->anchors[slot->start + k];
		size_t start = pos - (size_t)(ptrdiff_t)a->off;

		if (a->off > 0 && pos < (size_t)a->off)
			continue;
		if (start + 8 <= s->n &&
		    ((load64(s->t + start) | FOLD64) & a->premask) != a->pre)
			continue;
		confirm(s, a->lit, start);
	}
}

/* Text windows that look like common words ("?con" of "config" against
 * " connection") pass the mid bitmap often; a bitmap per kind of anchor
 * saves the lookups that cannot succeed. */
static void verify_mid(struct scan *s, size_t pos, uint32_t key)
{
	const struct pf *pf = s->pf;
	uint32_t h = hash32b(key);

	if (test_bit(pf->exact_bits, h))
		verify_key(s, pos, key);
	if (test_bit(pf->lead_bits, h))
		verify_key(s, pos, key & WC_LEAD);
	if (test_bit(pf->tail_bits, h))
		verify_key(s, pos, key & WC_TAIL);
}

/* The literals anchored on the pair at text position i (i + 1 < n). */
static void verify_short(struct scan *s, size_t i)
{
	const struct pf *pf = s->pf;
	uint16_t pair = (uint16_t)((s->t[i] | 0x20) | (s->t[i + 1] | 0x20) << 8);
	const struct pf_sgroup *g = pf->sgroups;
	const struct pf_sgroup *end = g + pf->nsgroups;
	unsigned c;
	uint32_t w = 0;

	while (g < end && g->pair != pair)
		g++;
	if (g == end)
		return;
	/* Past the end the third byte reads as a blank only groups that
	 * allow anything accept; their literals fail the bounds below. */
	c = i + 2 < s->n ? s->t[i + 2] | 0x20u : 0x20u;
	if (!(g->third[c >> 6] >> (c & 63) & 1))
		return;
	for (size_t k = 0; k < 4 && i + k < s->n; k++)
		w |= (uint32_t)s->t[i + k] << (8 * k);
	w |= FOLD32;
	for (uint32_t k = g->start; k < g->start + g->count; k++) {
		const struct pf_short *sh = &pf->shorts[k];

		if ((w & sh->mask) == sh->key && i >= sh->off)
			confirm(s, sh->lit, i - sh->off);
	}
}

#ifdef __SSE2__
/* Positions [i, i + 16) of t whose pair is one of np anchor pairs. np is a
 * constant where this is inlined, so the pair loop unrolls. */
static inline __attribute__((always_inline)) unsigned
pair_mask(const unsigned char *t, const __m128i *lo, const __m128i *hi,
	  unsigned np, __m128i *seen)
{
	const __m128i fold = _mm_set1_epi8(0x20);
	__m128i raw = _mm_loadu_si128((const __m128i *)t);
	__m128i v0 = _mm_or_si128(fold, raw);
	__m128i v1 = _mm_or_si128(fold, _mm_loadu_si128((const __m128i *)(t + 1)));
	__m128i eq = _mm_setzero_si128();

	*seen = _mm_or_si128(*seen, raw);
#pragma GCC unroll 8
	for (unsigned k = 0; k < np; k++)
		eq = _mm_or_si128(eq, _mm_and_si128(_mm_cmpeq_epi8(v0, lo[k]),
						    _mm_cmpeq_epi8(v1, hi[k])));
	return (unsigned)_mm_movemask_epi8(eq);
}

/* From position i on (the AVX2 pass may have done those before). Returns
 * HIGH64 when some byte of the text from i is >= 0x80, else 0. */
static inline __attribute__((always_inline)) uint64_t
scan_pairs(struct scan *s, const __m128i *lo, const __m128i *hi, unsigned np,
	   size_t i)
{
	unsigned char pad[48] = { 0 };
	__m128i seen = _mm_setzero_si128();
	size_t rest;
	unsigned mask;

	for (; i + 17 <= s->n; i += 16)
		for (mask = pair_mask(s->t + i, lo, hi, np, &seen); mask;
		     mask &= mask - 1)
			verify_short(s, i + (unsigned)__builtin_ctz(mask));
	/* The last positions (those with a byte after them) from the block
	 * that ends with the text, less the ones looked at; a text shorter
	 * than a block from a copy padded with 0, which no pair holds. */
	rest = s->n - i;
	if (s->n >= 17) {
		mask = pair_mask(s->t + s->n - 17, lo, hi, np, &seen) >>
		       (17 - rest);
	} else {
		memcpy(pad, s->t + i, rest);
		mask = pair_mask(pad, lo, hi, np, &seen) &
		       (rest ? (1u << (rest - 1)) - 1 : 0);
	}
	for (; mask; mask &= mask - 1)
		verify_short(s, i + (unsigned)__builtin_ctz(mask));
	return _mm_movemask_epi8(seen) ? HIGH64 : 0;
}
#endif

#ifdef PF_AVX2
/* Byte j from each of 32 places looked up in nib[2j] and nib[2j + 1]:
 * the groups whose anchor pair (and third byte, j = 2) it may belong to. */
static inline __attribute__((always_inline, target("avx2"))) __m256i
nibbles256(const struct pf *pf, const unsigned char *t, unsigned j)
{
	const __m256i low = _mm256_set1_epi8(0x0f);
	__m256i v = _mm256_loadu_si256((const __m256i *)t);
	__m256i lo_tab = _mm256_loadu_si256((const __m256i *)pf->nib[2 * j]);
	__m256i hi_tab = _mm256_loadu_si256(
		(const __m256i *)pf->nib[2 * j + 1]);

	return _mm256_and_si256(
		_mm256_shuffle_epi8(lo_tab, _mm256_and_si256(v, low)),
		_mm256_shuffle_epi8(hi_tab,
			_mm256_and_si256(_mm256_srli_epi16(v, 4), low)));
}

/* pair_mask over 32 places, against np pairs (a constant where this is
 * inlined, at most PAIR_MODE_PAIRS). */
static inline __attribute__((always_inline, target("avx2"))) unsigned
cmp_mask256(const struct pf *pf, const unsigned char *t, unsigned np,
	    __m256i *seen)
{
	const __m256i fold = _mm256_set1_epi8(0x20);
	__m256i raw = _mm256_loadu_si256((const __m256i *)t);
	__m256i v0 = _mm256_or_si256(fold, raw);
	__m256i v1 = _mm256_or_si256(fold, _mm256_loadu_si256(
		(const __m256i *)(t + 1)));
	__m256i eq = _mm256_setzero_si256();

	*seen = _mm256_or_si256(*seen, raw);
#pragma GCC unroll 4
	for (unsigned k = 0; k < np; k++)
		eq = _mm256_or_si256(eq, _mm256_and_si256(
			_mm256_cmpeq_epi8(v0, _mm256_loadu_si256(
				(const __m256i *)pf->spair_lo32[k])),
			_mm256_cmpeq_epi8(v1, _mm256_loadu_si256(
				(const __m256i *)pf->spair_hi32[k]))));
	return (unsigned)_mm256_movemask_epi8(eq);
}

/* The places of t[0, 32) whose two bytes are an anchor pair, and, when
 * third, whose next byte may follow it. With np pairs, a compare against
 * each; with np 0, Hyperscan's Teddy, a bucket per pair: the same cost for
 * five pairs or eight, and the third byte spares verify_short the
 * timestamps' "50" of ".000500Z". The compares cost less for a few pairs
 * (the raw field's, over an Event's 600 bytes of JSON). */
static inline __attribute__((always_inline, target("avx2"))) unsigned
pair_mask256(const struct pf *pf, const unsigned char *t, bool third,
	     unsigned np, __m256i *seen)
{
	__m256i m;

	if (np)
		return cmp_mask256(pf, t, np, seen);
	m = _mm256_and_si256(nibbles256(pf, t, 0), nibbles256(pf, t + 1, 1));
	*seen = _mm256_or_si256(*seen, _mm256_loadu_si256((const __m256i *)t));
	if (third)
		m = _mm256_and_si256(m, nibbles256(pf, t + 2, 2));
	return ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m,
		_mm256_setzero_si256()));
}

static uint64_t scan_pairs_sse2(struct scan *s, size_t i);

/* The whole 32-position blocks (with the byte after them, for the third),
 * then the block that ends with the text (scan_pairs for a text shorter
 * than one): a Kubernetes Event's raw JSON (600 bytes, scanned for the
 * raw field's pairs) takes half the blocks, and a CRI line's, where the
 * SSE2 pass took up to two 16-byte blocks more, one block fewer. */
static inline __attribute__((always_inline, target("avx2"))) uint64_t
scan_pairs256(struct scan *s, unsigned np)
{
	__m256i seen = _mm256_setzero_si256();
	size_t i = 0;
	unsigned mask;

	for (; i + 34 <= s->n; i += 32)
		for (mask = pair_mask256(s->pf, s->t + i, true, np, &seen);
		     mask; mask &= mask - 1)
			verify_short(s, i + (unsigned)__builtin_ctz(mask));
	if (i < 32)     /* a text shorter than a block and two bytes */
		return scan_pairs_sse2(s, i);
	/* The positions left (those with a byte after them) from the block
	 * that ends with the text, less the ones looked at, as scan_pairs
	 * ends; its bytes are the text's last but one, all a K or S sign's
	 * first byte can be at. */
	mask = i + 1 < s->n ? pair_mask256(s->pf, s->t + s->n - 33, false, np,
					   &seen) >> (33 - (s->n - i)) : 0;
	for (; mask; mask &= mask - 1)
		verify_short(s, i + (unsigned)__builtin_ctz(mask));
	return _mm256_movemask_epi8(seen) ? HIGH64 : 0;
}

/* Each its own function: a dispatch among them would pay, on every call,
 * for the stack the compares' registers need. */
static __attribute__((target("avx2"))) uint64_t scan_nibbles256(struct scan *s)
{
	return scan_pairs256(s, 0);
}

static __attribute__((target("avx2"))) uint64_t scan_cmp256(struct scan *s)
{
	switch (s->pf->nspairs) {
	case 1: return scan_pairs256(s, 1);
	case 2: return scan_pairs256(s, 2);
	case 3: return scan_pairs256(s, 3);
	default: return scan_pairs256(s, PAIR_MODE_PAIRS);
	}
}
#endif

#ifdef __SSE2__
/* scan_pairs from place i, for the pf's number of pairs. */
static uint64_t scan_pairs_sse2(struct scan *s, size_t i)
{
	const __m128i *lo = (const __m128i *)s->pf->spair_lo,
		      *hi = (const __m128i *)s->pf->spair_hi;

	switch (s->pf->nspairs) {
	case 1: return scan_pairs(s, lo, hi, 1, i);
	case 2: return scan_pairs(s, lo, hi, 2, i);
	case 3: return scan_pairs(s, lo, hi, 3, i);
	case 4: return scan_pairs(s, lo, hi, 4, i);
	case 5: return scan_pairs(s, lo, hi, 5, i);
	case 6: return scan_pairs(s, lo, hi, 6, i);
	case 7: return scan_pairs(s, lo, hi, 7, i);
	default: return scan_pairs(s, lo, hi, MAX_SPAIRS, i);
	}
}
#endif

/* The byte pass. Returns true when it also looked at every byte for
 * *high (the SSE2 pass does, for free). */
static bool scan_short(struct scan *s, uint64_t *high)
{
	const struct pf *pf = s->pf;

#ifdef __SSE2__
	if (pf->nspairs <= MAX_SPAIRS) {
#ifdef PF_AVX2
		if (pf->avx2) {
			*high |= pf->nspairs > PAIR_MODE_PAIRS ?
				 scan_nibbles256(s) : scan_cmp256(s);
			return true;
		}
#endif
		*high |= scan_pairs_sse2(s, 0);
		return true;
	}
#endif
	for (size_t i = 0; i + 1 < s->n; i++) {
		unsigned pair = (s->t[i] | 0x20u) | (s->t[i + 1] | 0x20u) << 8;

		if (pf->spair_tab[pair >> 6] >> (pair & 63) & 1)
			verify_short(s, i);
	}
	(void)high;
	return false;
}

/* One position whose first 4 bytes passed the gate: w holds the folded 8
 * bytes from pos (padded with blanks past the end: a long window must lie
 * inside the text, so it is only tested when long_ok). */
static inline void check_pos(struct scan *s, size_t pos, uint64_t w,
			     bool long_ok)
{
	const struct pf *pf = s->pf;

	if (long_ok && test_bit(pf->lbits, hash64(w)))
		verify_long(s, pos, w);
	if (test_bit(pf->bits, hash32b((uint32_t)w)))
		verify_mid(s, pos, (uint32_t)w);
}

/* The positions q + 4 * i for each bit i of m, which passed the gate. */
static inline __attribute__((always_inline)) void
gate_passed(struct scan *s, size_t q, unsigned m)
{
	for (; m; m &= m - 1) {
		size_t pos = q + 4 * (unsigned)__builtin_ctz(m);

		check_pos(s, pos, load64(s->t + pos) | FOLD64, true);
	}
}

/* Positions q, q + 4... whose window hashes h[0..k) pass the gate: one
 * branch for the k tests, after which the passes are known. k is a
 * constant where this is inlined. */
static inline __attribute__((always_inline)) void
gate_passes(struct scan *s, size_t q, const uint32_t *h, unsigned k)
{
	unsigned m = 0;

#pragma GCC unroll 8
	for (unsigned i = 0; i < k; i++)
		m |= (unsigned)test_bit(s->pf->gate, h[i]) << i;
	gate_passed(s, q, m);
}

/* Positions q, q + 4, q + 8... while 20 bytes remain: four per step, one
 * branch for the four gate tests. With SSE2 the four 4-byte windows are the
 * four lanes of one 16-byte load, hashed together. Returns the first
 * position not looked at; *high collects the bytes seen. */
static size_t scan_main(struct scan *s, size_t q, uint64_t *high)
{
	const unsigned char *t = s->t;
#ifdef __SSE2__
	const __m128i fold = _mm_set1_epi8(0x20), mul = _mm_set1_epi32((int)MUL32),
		      low = _mm_set_epi32(0, -1, 0, -1);
	__m128i hi = _mm_setzero_si128();
	uint32_t h[4];

	for (; q + 20 <= s->n; q += 4 * STRIDE) {
		__m128i v = _mm_loadu_si128((const __m128i *)(t + q));
		__m128i w = _mm_or_si128(v, fold);
		/* Lanes 0 and 2, then 1 and 3: the low half of each 64-bit
		 * product is the 32-bit product hash32 takes its top bits of. */
		__m128i even = _mm_srli_epi32(_mm_mul_epu32(w, mul), 32 - BITS_LG);
		__m128i odd = _mm_srli_epi32(_mm_mul_epu32(_mm_srli_epi64(w, 32),
							   mul), 32 - BITS_LG);

		hi = _mm_or_si128(hi, v);
		_mm_storeu_si128((__m128i *)h, _mm_or_si128(
			_mm_and_si128(even, low), _mm_slli_epi64(odd, 32)));
		gate_passes(s, q, h, 4);
	}
	*high |= (unsigned)_mm_movemask_epi8(hi) ? HIGH64 : 0;
#else
	const uint64_t *gate = s->pf->gate;
	uint64_t hi = 0;

	for (; q + 20 <= s->n; q += 4 * STRIDE) {
		uint64_t r0 = load64(t + q), r1 = load64(t + q + 4),
			 r2 = load64(t + q + 8), r3 = load64(t + q + 12);
		uint64_t w0 = r0 | FOLD64, w1 = r1 | FOLD64, w2 = r2 | FOLD64,
			 w3 = r3 | FOLD64;

		hi |= r0 | r2;
		if (!(test_bit(gate, hash32((uint32_t)w0)) |
		      test_bit(gate, hash32((uint32_t)w1)) |
		      test_bit(gate, hash32((uint32_t)w2)) |
		      test_bit(gate, hash32((uint32_t)w3))))
			continue;
		check_pos(s, q, w0, true);
		check_pos(s, q + 4, w1, true);
		check_pos(s, q + 8, w2, true);
		check_pos(s, q + 12, w3, true);
	}
	*high |= hi;
#endif
	return q;
}

#ifdef PF_AVX2
/* scan_main eight positions a step while 36 bytes remain: the eight
 * windows of one 32-byte load hashed with one multiply (the low half of
 * the product, as hash32 takes), where SSE2 needs two multiplies and the
 * shuffles between them for four. The eight gate bits come from one
 * gather of the 32-bit words holding them, each shifted to its word's
 * sign bit: tested one at a time, the gate bits were most of the loop's
 * work. */
static inline __attribute__((always_inline, target("avx2"))) unsigned
gate256(const struct pf *pf, __m256i v)
{
	__m256i h = _mm256_srli_epi32(_mm256_mullo_epi32(_mm256_or_si256(v,
		_mm256_set1_epi8(0x20)), _mm256_set1_epi32((int)MUL32)),
		32 - BITS_LG);

	if (!pf->gather) {
		uint32_t hv[8];
		unsigned m = 0;

		_mm256_storeu_si256((__m256i *)hv, h);
		for (unsigned i = 0; i < 8; i++)
			m |= (unsigned)test_bit(pf->gate, hv[i]) << i;
		return m;
	}
	/* bit h of the gate is bit h % 32 of 32-bit word h / 32; shifted
	 * left by 31 - h % 32 it is the sign */
	__m256i words = _mm256_i32gather_epi32((const int *)pf->gate,
		_mm256_srli_epi32(h, 5), 4);
	__m256i bits = _mm256_sllv_epi32(words, _mm256_andnot_si256(h,
		_mm256_set1_epi32(31)));

	return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(bits));
}

static __attribute__((target("avx2"))) size_t
scan_main256(struct scan *s, size_t q, uint64_t *high)
{
	__m256i hi = _mm256_setzero_si256(), v;
	size_t back;

	for (; q + 36 <= s->n; q += 8 * STRIDE) {
		v = _mm256_loadu_si256((const __m256i *)(s->t + q));
		hi = _mm256_or_si256(hi, v);
		gate_passed(s, q, gate256(s->pf, v));
	}
	/* The positions left but the last one or two (whose windows run
	 * past the end: scan_tail's) in one more step, moved back by whole
	 * strides to end 36 bytes before the end; its lanes before q were
	 * looked at, where the SSE2 loop and scan_tail would take them one to
	 * four at a time. */
	back = (q + 36 - s->n + STRIDE - 1) / STRIDE;
	if (q < s->n && back < 8 && q >= back * STRIDE) {
		q -= back * STRIDE;
		v = _mm256_loadu_si256((const __m256i *)(s->t + q));
		hi = _mm256_or_si256(hi, v);
		gate_passed(s, q, gate256(s->pf, v) & 0xffu << back);
		q += 8 * STRIDE;
	}
	*high |= (unsigned)_mm256_movemask_epi8(hi) ? HIGH64 : 0;
	return q;
}
#endif

/* The last positions. A window running past the end reads the bytes past
 * it as 0, which folds to a blank, one of the values a mid-size anchor's
 * free byte accepts: shifted in from the text's last 8 bytes, or from a
 * copy padded with 0 when the text is shorter. */
static void scan_tail(struct scan *s, size_t q, uint64_t *high)
{
	unsigned char pad[16] = { 0 };
	const unsigned char *t = s->t;
	bool padded = s->n < 8;

	if (padded) {   /* then scan_main looked at nothing */
		memcpy(pad, s->t, s->n);
		t = pad;
	}
	for (size_t i = q; i < s->n; i += STRIDE) {
		uint64_t w = padded || i + 8 <= s->n ? load64(t + i) :
			     load64(t + s->n - 8) >> 8 * (i + 8 - s->n);

		*high |= w;
		w |= FOLD64;
		if (test_bit(s->pf->gate, hash32((uint32_t)w)))
			check_pos(s, i, w, i + 8 <= s->n);
	}
}

/* Position -1 of scan_head, from a copy of the text behind a 0. */
static void scan_before(struct scan *s)
{
	unsigned char pad[16] = { 0 };
	struct scan sub = *s;
	uint64_t w;

	sub.n = s->n < sizeof(pad) - 1 ? s->n + 1 : sizeof(pad);
	memcpy(pad + 1, s->t, sub.n - 1);
	sub.t = pad;
	sub.lo++;
	sub.hi++;
	w = load64(pad) | FOLD64;
	if (test_bit(s->pf->gate, hash32((uint32_t)w)))
		check_pos(&sub, 0, w, false);
	s->nhits = sub.nhits;
}

/*
 * The positions sampled are those of the span's start modulo STRIDE, so
 * that its text is looked at as a scan of it alone would: which common
 * words brush against an anchor depends on where the windows fall. Every
 * literal is still found, since each has an anchor for every residue;
 * one whose window sticks out before it (a free first byte) may have it
 * at position -1, read from a copy of the first bytes behind a 0 (folded,
 * a blank no literal starts with). Returns the first position; *high
 * collects the bytes before it.
 */
static size_t scan_head(struct scan *s, uint64_t *high)
{
	size_t q = s->lo % STRIDE;

	for (size_t i = 0; i < q && i < s->n; i++)
		*high |= (uint64_t)s->t[i] << 56;
	if (q == STRIDE - 1 && s->n >= 2)
		scan_before(s);
	return q;
}

/* Non-zero when some byte of t is >= 0x80 (HIGH64 bits). */
static uint64_t high_bytes(const unsigned char *t, size_t n)
{
	uint64_t hi = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		hi |= load64(t + i);
	for (; i < n; i++)
		hi |= t[i];
	return hi & HIGH64 ? HIGH64 : hi << 56 & HIGH64;
}

int pf_scan(const struct pf *pf, const char *text, size_t n, uint32_t *stamp,
	    uint32_t gen, uint32_t *hits)
{
	return pf_scan_span(pf, text, n, 0, n, stamp, gen, gen, hits);
}

/* The windowed pass, over s's span alone when the byte pass finds every
 * literal looked for outside it. Returns whether it read all of the text
 * for *high. */
static bool scan_windows(struct scan *s, uint64_t *high)
{
	struct scan sub = *s, *w = s;
	size_t q;

	if (s->pf->span_windows && (s->lo || s->hi < s->n)) {
		sub.t += s->lo;
		sub.n = s->hi - s->lo;
		sub.lo = 0;
		sub.hi = sub.n;
		w = &sub;
	}
	q = scan_head(w, high);
#ifdef PF_AVX2
	if (s->pf->avx2)
		q = scan_main256(w, q, high);
#endif
	scan_tail(w, scan_main(w, q, high), high);
	s->nhits = w->nhits;
	return w == s;
}

int pf_scan_span(const struct pf *pf, const char *text, size_t n, size_t lo,
		 size_t hi, uint32_t *stamp, uint32_t gen, uint32_t gen_out,
		 uint32_t *hits)
{
	struct scan s = { pf, (const unsigned char *)text, n, lo, hi, stamp,
			  gen, gen_out, hits, 0 };
	uint64_t high = 0;
	bool all_seen = false;

	if (n < LIT_MIN || !pf->nlits)
		return 0;
	if (pf->nanchors || pf->nlanchors)
		all_seen = scan_windows(&s, &high);
	if (pf->nshorts && scan_short(&s, &high))
		all_seen = true;
	if (!all_seen && pf->caseless_k_s)
		high = high_bytes(s.t, n);
	/* Caseless UTF matching equates KELVIN SIGN with k and LONG S with s;
	 * the byte fold cannot see that, so such texts run every pattern.
	 * Both start with a byte >= 0x80, rare in logs. */
	if (pf->caseless_k_s && (high & HIGH64) &&
	    pf_has_k_or_s_sign(text, n))
		return -1;
	return s.nhits;
}
