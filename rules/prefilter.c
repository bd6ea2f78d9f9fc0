/*
 * prefilter.c: finds which of many literals occur in a text, caselessly, in
 * one pass. Most log lines match no rule, so this scan is the whole cost of
 * classifying them.
 *
 * Design: a sampled 4-byte window filter. The scan looks at the 4-byte
 * window starting at every 4th position, folds it with "| 0x20" (ASCII
 * upper to lower case, plus a few collisions that verification removes),
 * hashes it and tests one bit of a 32 KiB bitmap. Only on a set bit does it
 * look the window up in a small hash table of anchors and compare the
 * candidate literals for real (an 8-byte masked compare first, which
 * rejects most hits of windows that only look like a literal's).
 *
 * A literal occurrence starts at some position p; for each of the 4
 * possible p mod 4 the literal contributes one anchor: a sampled window
 * that overlaps it, chosen for rare bytes (common.c). A window may stick
 * out of the literal by one byte, the wildcard, which sets 128 bits (every
 * folded byte value); literals of 5 bytes or more never need more.
 * Positions are independent (no automaton state), so the CPU overlaps
 * them: a 200-byte line costs 50 window tests.
 *
 * Shorter literals (3-4 bytes, e.g. "503") would need more wildcards, so
 * they are found differently: each has an anchor byte (its rarest), and a
 * second pass looks for those bytes 16 at a time with SSE2 compares,
 * verifying the short literals around each hit.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "rules_int.h"

#define FOLD32 0x20202020u
#define FOLD64 0x2020202020202020ull
#define HIGH32 0x80808080u
#define BITS_LG 18              /* 2^18 bits: 32 KiB */
#define WC_LEAD 0xffffff00u     /* key mask: the window's first byte is free */
#define WC_TAIL 0x00ffffffu     /* the window's last byte is free */
#define STRIDE 4
#define SHORT_LEN 5             /* shorter literals use the byte pass */
#define MAX_SBYTES 16           /* anchor bytes the SSE2 pass compares */

struct pf_lit {
	char *s;                /* lower case */
	uint32_t len;
	uint32_t pat0, npats;   /* range in pf.litpats */
};

struct pf_pair {
	uint32_t lit, pat;
};

struct pf_anchor {
	uint32_t key;           /* folded window; a wildcard byte is 0 */
	uint32_t lit;
	int32_t off;            /* window start minus literal start */
	/* The literal's folded bytes over the 8 bytes from the window: one
	 * compare rejects most hits of common windows ("tion"). */
	uint64_t pre, premask;
};

struct pf_slot {
	uint32_t key, start, count;     /* range in pf.anchors; key 0: empty */
};

struct pf {
	struct pf_lit *lits;
	size_t nlits, caplits;
	struct pf_pair *pairs;
	size_t npairs, cappairs;
	uint32_t *litpats;
	uint64_t *bits;         /* any anchor might start here */
	uint64_t *wc_bits;      /* ... one with a free byte: worth 2 lookups */
	uint32_t *shorts;       /* literals shorter than SHORT_LEN */
	uint32_t *short_off;    /* their anchor byte's offset */
	size_t nshorts;
	uint64_t short_mask[256];       /* shorts (< 64) anchored on a byte */
	uint32_t *short_key, *short_keymask;    /* folded 4-byte prefix test */
	unsigned char sbytes[MAX_SBYTES];
	unsigned nsbytes;       /* > MAX_SBYTES: use sbyte_tab */
	bool sbyte_tab[256];
	struct pf_anchor *anchors;
	size_t nanchors;
	struct pf_slot *slots;
	uint32_t slotmask;
	bool lead, tail;        /* some anchor has a wildcard there */
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
	free(pf->pairs);
	free(pf->litpats);
	free(pf->bits);
	free(pf->wc_bits);
	free(pf->anchors);
	free(pf->slots);
	free(pf->shorts);
	free(pf->short_off);
	free(pf->short_key);
	free(pf->short_keymask);
	free(pf);
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 16;
	void *q;

	if (n < *cap)
		return 0;
	if (!(q = realloc(*p, ncap * size)))
		return RT_ENOMEM;
	*p = q;
	*cap = ncap;
	return 0;
}

static uint32_t find_lit(const struct pf *pf, const char *s, size_t n)
{
	for (size_t i = 0; i < pf->nlits; i++)
		if (pf->lits[i].len == n && !memcmp(pf->lits[i].s, s, n))
			return (uint32_t)i;
	return UINT32_MAX;
}

int pf_add(struct pf *pf, const char *s, size_t n, uint32_t pat)
{
	char low[LIT_LEN];
	uint32_t lit;

	if (n < LIT_MIN)
		return RT_EINVAL;
	if (n > LIT_LEN)
		n = LIT_LEN;    /* a piece of a required literal is required */
	for (size_t k = 0; k < n; k++)
		low[k] = (char)lower_tab[(unsigned char)s[k]];
	lit = find_lit(pf, low, n);
	if (lit == UINT32_MAX) {
		if (grow((void **)&pf->lits, &pf->caplits, pf->nlits,
			 sizeof(*pf->lits)))
			return RT_ENOMEM;
		if (!(pf->lits[pf->nlits].s = malloc(n)))
			return RT_ENOMEM;
		memcpy(pf->lits[pf->nlits].s, low, n);
		pf->lits[pf->nlits].len = (uint32_t)n;
		pf->lits[pf->nlits].pat0 = pf->lits[pf->nlits].npats = 0;
		lit = (uint32_t)pf->nlits++;
	}
	if (grow((void **)&pf->pairs, &pf->cappairs, pf->npairs,
		 sizeof(*pf->pairs)))
		return RT_ENOMEM;
	pf->pairs[pf->npairs++] = (struct pf_pair){ lit, pat };
	return 0;
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

static inline uint32_t load32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t load64(const unsigned char *p)
{
	return (uint64_t)load32(p) | (uint64_t)load32(p + 4) << 32;
}

static void set_prefix(const struct pf_lit *l, struct pf_anchor *a)
{
	a->pre = a->premask = 0;
	for (int i = 0; i < 8; i++) {
		int j = a->off + i;

		if (j < 0 || j >= (int)l->len)
			continue;
		a->pre |= (uint64_t)((unsigned char)l->s[j] | 0x20) << (8 * i);
		a->premask |= 0xffull << (8 * i);
	}
}

static inline uint32_t hash_bit(uint32_t key)
{
	return (key * 0x9E3779B1u) >> (32 - BITS_LG);
}

static inline uint64_t test_bit(const struct pf *pf, uint32_t key)
{
	uint32_t h = hash_bit(key);

	return pf->bits[h >> 6] >> (h & 63) & 1;
}

static void set_bit(uint64_t *bits, uint32_t key)
{
	uint32_t h = hash_bit(key);

	bits[h >> 6] |= 1ull << (h & 63);
}

/* The window of l at offset e (may start before or end after l): its
 * folded key with 0 for free bytes; returns how many bytes are free. */
static unsigned window(const struct pf_lit *l, int e, uint32_t *key,
		       unsigned *score)
{
	unsigned wc = 0, lo = 4, hi = 0;

	*key = 0;
	*score = 0;
	for (int i = 0; i < 4; i++) {
		int j = e + i;

		if (j < 0 || j >= (int)l->len) {
			wc++;
			continue;
		}
		lo = (unsigned)i < lo ? (unsigned)i : lo;
		hi = (unsigned)i + 1;
		*key |= (uint32_t)((unsigned char)l->s[j] | 0x20) << (8 * i);
		*score += lit_rarity((unsigned char)l->s[j]);
	}
	/* Windows of common words ("ques" of "request") hit all day. */
	if (hi - lo >= 3 &&
	    lit_common((const unsigned char *)l->s + e + lo, hi - lo))
		*score = 0;
	return wc;
}

/* Best window for occurrences starting at p = r (mod stride): the window
 * then starts at p + e with p + e = 0 (mod stride) and e >= -r, so it
 * never starts before the text. At most one free byte (it costs 128 bits),
 * then the rarest bytes; a free byte is worth it when the only windows
 * without one are common text ("stat" of "sqlstate"). Returns the number
 * of free bytes, 99 when no window qualifies. */
static unsigned choose(const struct pf_lit *l, unsigned stride, unsigned r,
		       struct pf_anchor *a)
{
	unsigned best_wc = 99;
	int best_score = -100;

	for (int e = -(int)r; e < (int)l->len; e += (int)stride) {
		uint32_t key;
		unsigned score, wc = window(l, e, &key, &score);
		int adj = (int)score - 6 * (int)wc;

		if (wc > 1 || adj <= best_score)
			continue;
		best_wc = wc;
		best_score = adj;
		a->key = key;
		a->off = e;
	}
	return best_wc;
}

/* A short literal's anchor: its rarest byte, both cases for a letter. */
static void add_short(struct pf *pf, uint32_t lit)
{
	const struct pf_lit *l = &pf->lits[lit];
	unsigned best = 0;

	for (unsigned k = 1; k < l->len; k++)
		if (lit_rarity((unsigned char)l->s[k]) >
		    lit_rarity((unsigned char)l->s[best]))
			best = k;
	pf->shorts[pf->nshorts] = lit;
	pf->short_off[pf->nshorts] = best;
	pf->short_keymask[pf->nshorts] = l->len == 3 ? 0xffffffu : 0xffffffffu;
	pf->short_key[pf->nshorts] = 0;
	for (unsigned k = 0; k < l->len; k++)
		pf->short_key[pf->nshorts] |=
			(uint32_t)((unsigned char)l->s[k] | 0x20) << (8 * k);
	for (int upper = 0; upper < 2; upper++) {
		unsigned char c = (unsigned char)l->s[best];

		if (upper && !(c >= 'a' && c <= 'z'))
			break;
		if (upper)
			c -= 32;
		if (pf->nshorts < 64)
			pf->short_mask[c] |= 1ull << pf->nshorts;
		if (pf->sbyte_tab[c])
			continue;
		pf->sbyte_tab[c] = true;
		if (pf->nsbytes < MAX_SBYTES)
			pf->sbytes[pf->nsbytes] = c;
		pf->nsbytes++;
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

/* One anchor per literal and residue (duplicates of one literal with the
 * same key and offset are dropped); short literals go to the byte pass. */
static int make_anchors(struct pf *pf)
{
	pf->anchors = calloc(pf->nlits * STRIDE + 1, sizeof(*pf->anchors));
	pf->shorts = malloc((pf->nlits + 1) * sizeof(uint32_t));
	pf->short_off = malloc((pf->nlits + 1) * sizeof(uint32_t));
	pf->short_key = malloc((pf->nlits + 1) * sizeof(uint32_t));
	pf->short_keymask = malloc((pf->nlits + 1) * sizeof(uint32_t));
	if (!pf->anchors || !pf->shorts || !pf->short_off || !pf->short_key ||
	    !pf->short_keymask)
		return RT_ENOMEM;
	for (size_t i = 0; i < pf->nlits; i++) {
		if (pf->lits[i].len < SHORT_LEN) {
			add_short(pf, (uint32_t)i);
			continue;
		}
		for (unsigned r = 0; r < STRIDE; r++) {
			struct pf_anchor a = { 0, (uint32_t)i, 0, 0, 0 };
			bool dup = false;

			choose(&pf->lits[i], STRIDE, r, &a);
			set_prefix(&pf->lits[i], &a);
			for (size_t k = 0; k < pf->nanchors && !dup; k++)
				dup = pf->anchors[k].lit == a.lit &&
				      pf->anchors[k].key == a.key &&
				      pf->anchors[k].off == a.off;
			if (dup)
				continue;
			pf->lead |= !(a.key & 0xffu);
			pf->tail |= !(a.key >> 24);
			pf->anchors[pf->nanchors++] = a;
		}
	}
	qsort(pf->anchors, pf->nanchors, sizeof(*pf->anchors), cmp_anchor);
	return 0;
}

static int build_bitmap(struct pf *pf)
{
	pf->bits = calloc((1u << BITS_LG) / 64, sizeof(uint64_t));
	pf->wc_bits = calloc((1u << BITS_LG) / 64, sizeof(uint64_t));
	if (!pf->bits || !pf->wc_bits)
		return RT_ENOMEM;
	for (size_t i = 0; i < pf->nanchors; i++) {
		uint32_t key = pf->anchors[i].key;
		unsigned shift = !(key & 0xffu) ? 0 : !(key >> 24) ? 24 : 32;

		if (shift == 32) {
			set_bit(pf->bits, key);
			continue;
		}
		for (uint32_t x = 0; x < 256; x++) {
			set_bit(pf->bits, key | (x | 0x20) << shift);
			set_bit(pf->wc_bits, key | (x | 0x20) << shift);
		}
	}
	return 0;
}

static inline uint32_t slot_of(const struct pf *pf, uint32_t key)
{
	return ((key * 0x85EBCA6Bu) ^ (key >> 13)) & pf->slotmask;
}

static int build_slots(struct pf *pf)
{
	size_t size = 16;

	while (size < pf->nanchors * 2)
		size <<= 1;
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

int pf_build(struct pf *pf)
{
	int rc;

	if ((rc = build_litpats(pf)) || (rc = make_anchors(pf)) ||
	    (rc = build_bitmap(pf)))
		return rc;
	return build_slots(pf);
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

static bool eq_lower(const unsigned char *t, const char *lit, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (lower_tab[t[k]] != (unsigned char)lit[k])
			return false;
	return true;
}

struct scan {
	const struct pf *pf;
	const unsigned char *t;
	size_t n;
	uint32_t *stamp, gen, *hits;
	int nhits;
};

static void verify_key(struct scan *s, size_t pos, uint32_t key)
{
	const struct pf_slot *slot = lookup(s->pf, key);

	if (!slot)
		return;
	for (uint32_t k = 0; k < slot->count; k++) {
		const struct pf_anchor *a = &s->pf->anchors[slot->start + k];
		const struct pf_lit *l = &s->pf->lits[a->lit];
		size_t start = pos - (size_t)(ptrdiff_t)a->off;

		if ((a->off > 0 && pos < (size_t)a->off) ||
		    start + l->len > s->n)
			continue;
		if (pos + 8 <= s->n &&
		    ((load64(s->t + pos) | FOLD64) & a->premask) != a->pre)
			continue;
		if (s->stamp[a->lit] == s->gen ||
		    !eq_lower(s->t + start, l->s, l->len))
			continue;
		s->stamp[a->lit] = s->gen;
		s->hits[s->nhits++] = a->lit;
	}
}

static void verify(struct scan *s, size_t pos, uint32_t key)
{
	uint32_t h = hash_bit(key);

	verify_key(s, pos, key);
	if (!(s->pf->wc_bits[h >> 6] >> (h & 63) & 1))
		return;
	if (s->pf->lead)
		verify_key(s, pos, key & WC_LEAD);
	if (s->pf->tail)
		verify_key(s, pos, key & WC_TAIL);
}

static inline void verify_one_short(struct scan *s, size_t i, size_t k)
{
	const struct pf *pf = s->pf;
	uint32_t lit = pf->shorts[k], off = pf->short_off[k];
	const struct pf_lit *l = &pf->lits[lit];
	size_t start = i - off;

	if (i < off || start + l->len > s->n)
		return;
	/* Most anchor-byte hits fail here, on one folded 4-byte compare. */
	if (start + 4 <= s->n &&
	    ((load32(s->t + start) | FOLD32) & pf->short_keymask[k]) !=
	    pf->short_key[k])
		return;
	if (s->stamp[lit] == s->gen || !eq_lower(s->t + start, l->s, l->len))
		return;
	s->stamp[lit] = s->gen;
	s->hits[s->nhits++] = lit;
}

/* The short literals whose anchor byte sits at text position i. */
static inline void verify_short(struct scan *s, size_t i)
{
	uint64_t m = s->pf->short_mask[s->t[i]];

	while (m) {
		verify_one_short(s, i, (size_t)__builtin_ctzll(m));
		m &= m - 1;
	}
	for (size_t k = 64; k < s->pf->nshorts; k++)
		verify_one_short(s, i, k);
}

static void scan_short(struct scan *s)
{
	const struct pf *pf = s->pf;
	size_t i = 0;

#ifdef __SSE2__
	if (pf->nsbytes <= MAX_SBYTES) {
		__m128i want[MAX_SBYTES];

		for (unsigned k = 0; k < pf->nsbytes; k++)
			want[k] = _mm_set1_epi8((char)pf->sbytes[k]);
		for (; i + 16 <= s->n; i += 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(s->t + i));
			__m128i eq = _mm_setzero_si128();
			unsigned mask;

			for (unsigned k = 0; k < pf->nsbytes; k++)
				eq = _mm_or_si128(eq, _mm_cmpeq_epi8(v, want[k]));
			mask = (unsigned)_mm_movemask_epi8(eq);
			while (mask) {
				verify_short(s, i + (unsigned)__builtin_ctz(mask));
				mask &= mask - 1;
			}
		}
	}
#endif
	for (; i < s->n; i++)
		if (pf->sbyte_tab[s->t[i]])
			verify_short(s, i);
}

int pf_scan(const struct pf *pf, const char *text, size_t n, uint32_t *stamp,
	    uint32_t gen, uint32_t *hits)
{
	struct scan s = { pf, (const unsigned char *)text, n, stamp, gen,
			  hits, 0 };
	uint32_t high = 0;
	size_t q = 0;

	if (n < LIT_MIN || !pf->nlits)
		return 0;
	/* Four windows per step and one branch for all four: most steps
	 * find nothing, and a predictable branch is what makes this fast. */
	for (; q + 3 * STRIDE + 4 <= n; q += 4 * STRIDE) {
		uint32_t w0 = load32(s.t + q), w1 = load32(s.t + q + STRIDE),
			 w2 = load32(s.t + q + 2 * STRIDE),
			 w3 = load32(s.t + q + 3 * STRIDE);

		high |= w0 | w1 | w2 | w3;
		w0 |= FOLD32;
		w1 |= FOLD32;
		w2 |= FOLD32;
		w3 |= FOLD32;
		if (!(test_bit(pf, w0) | test_bit(pf, w1) | test_bit(pf, w2) |
		      test_bit(pf, w3)))
			continue;
		if (test_bit(pf, w0))
			verify(&s, q, w0);
		if (test_bit(pf, w1))
			verify(&s, q + STRIDE, w1);
		if (test_bit(pf, w2))
			verify(&s, q + 2 * STRIDE, w2);
		if (test_bit(pf, w3))
			verify(&s, q + 3 * STRIDE, w3);
	}
	/* The last windows; those running past the end are padded with 0,
	 * which folds to a blank, one of the values a free byte accepts. */
	for (; q < n; q += STRIDE) {
		uint32_t w = 0;

		for (size_t i = 0; i < 4 && q + i < n; i++)
			w |= (uint32_t)s.t[q + i] << (8 * i);
		high |= w;
		w |= FOLD32;
		if (test_bit(pf, w))
			verify(&s, q, w);
	}
	if (pf->nshorts)
		scan_short(&s);
	/* Caseless UTF matching equates KELVIN SIGN with k and LONG S with s;
	 * the byte fold cannot see that, so such texts run every pattern.
	 * Both start with a byte >= 0x80, rare in logs. */
	if ((high & HIGH32) && (memmem(text, n, "\xe2\x84\xaa", 3) ||
				memmem(text, n, "\xc5\xbf", 2)))
		return -1;
	return s.nhits;
}
