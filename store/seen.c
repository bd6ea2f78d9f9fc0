/*
 * seen.c: which event identities the database may already hold.
 *
 * Before writing an event the correlator needs its identity's stored row,
 * and most identities have none: every container log line is new, and so
 * is the first sight of each Event. Asking events_ukey for each took a
 * statement and a descent of a random-key index, 7% of the writer thread's
 * CPU time on the Kafka bench's messages. A Bloom filter of every stored
 * ukey answers "not stored" from memory for nearly all new identities;
 * only its "maybe" goes to SQLite.
 *
 * It is exact only while this connection is the database's one writer
 * (store_lock): it is filled from the table at the first lookup, then by
 * each insert. A key it holds that the table does not (a batch rolled
 * back) costs a lookup, never a wrong answer.
 *
 * Bounds: 16 bits a key, 3 of them in one 64-bit word; about 1% of new
 * identities are looked up anyway. It starts at SEEN_MIN_BITS or the size
 * the table asks for and doubles, refilled from the table, as keys come;
 * at SEEN_MAX_BITS (16 MiB, 8M keys) it stops growing and says "maybe"
 * more often as it fills.
 */
#include <stdlib.h>

#include "store_int.h"

#define BITS_PER_KEY 16
#define PROBES 3

/* The ukeys are hashes already. One more finaliser (splitmix64's) keeps
 * the word, picked by the low bits, and the bits set in it, by the high
 * ones, independent of each other whatever hash made the keys. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The word of a key and its PROBES bits in it: one cache line touched per
 * key, where bits spread over the whole filter cost a miss each. */
static uint64_t *word_of(const struct seen *f, uint64_t ukey, uint64_t *bits)
{
	uint64_t h = mix(ukey);

	*bits = 0;
	for (int i = 0; i < PROBES; i++)
		*bits |= 1ULL << (h >> (64 - 6 * (i + 1)) & 63);
	return &f->w[h & f->mask];
}

bool store_seen_holds(const struct seen *f, uint64_t ukey)
{
	uint64_t bits, *w = word_of(f, ukey, &bits);

	return (*w & bits) == bits;
}

void store_seen_add(struct seen *f, uint64_t ukey)
{
	uint64_t bits, *w;

	if (!f->w)
		return;
	w = word_of(f, ukey, &bits);
	*w |= bits;
	f->keys++;
	RT_ASSERT(store_seen_holds(f, ukey));    /* no false "not stored", ever */
}

static uint64_t bits_of(const struct seen *f)
{
	return (f->mask + 1) * 64;
}

/* Bits for n keys: a power of two in [min_bits, SEEN_MAX_BITS]. */
static uint64_t size_for(const struct seen *f, int64_t n)
{
	uint64_t bits = f->min_bits ? f->min_bits : SEEN_MIN_BITS;

	while (bits < SEEN_MAX_BITS && bits < (uint64_t)n * BITS_PER_KEY)
		bits <<= 1;
	return bits;
}

int store_seen_alloc(struct seen *f, int64_t n)
{
	uint64_t bits = size_for(f, n);

	free(f->w);
	f->keys = 0;
	f->mask = bits / 64 - 1;
	f->w = calloc(bits / 64, sizeof(*f->w));
	return f->w ? 0 : RT_ENOMEM;
}

/* (Re)builds the filter for n keys from the table. Out of memory, it
 * is left off: every lookup goes to SQLite, as without one. */
static int build(struct store *st, int64_t n)
{
	struct seen *f = &st->seen;
	sqlite3_stmt *s;
	int rc;

	f->built = true;
	if (store_seen_alloc(f, n))
		return 0;
	s = store_stmt(st, S_EV_UKEYS);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		store_seen_add(f, (uint64_t)sqlite3_column_int64(s, 0));
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return 0;
	store_seen_free(f);
	return store_db_fail(st, "reading event identities");
}

/* The table's row count, from its largest id (rows are never fewer). */
static int rows(struct store *st, int64_t *n)
{
	sqlite3_stmt *s = store_stmt(st, S_EV_MAX_ID);
	int rc = sqlite3_step(s);

	*n = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	return rc == SQLITE_ROW ? 0 : store_db_fail(st, "counting events");
}

int store_seen_check(struct store *st, uint64_t ukey, bool *maybe)
{
	struct seen *f = &st->seen;
	int64_t n;
	int err;

	if (!f->built) {
		if ((err = rows(st, &n)) || (err = build(st, n)))
			return err;
	} else if (f->w && (uint64_t)f->keys * BITS_PER_KEY > bits_of(f) &&
		   bits_of(f) < SEEN_MAX_BITS &&
		   (err = build(st, f->keys * 2)))
		return err;
	*maybe = !f->w || store_seen_holds(f, ukey);
	return 0;
}

void store_seen_free(struct seen *f)
{
	free(f->w);
	f->w = NULL;
	f->built = false;
	f->keys = 0;
}
