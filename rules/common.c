/*
 * common.c: a rough model of ordinary log text, so the prefilter prefers
 * literals and anchors that rarely occur in it. Picking "status" or "code"
 * as the literal of an HTTP 503 rule would run the pattern on every access
 * log line; "503" is the better choice even though it is shorter.
 *
 * The model: a rarity per byte (letter frequency) and a set of the 3- and
 * 4-byte windows of very common log words. It only steers choices; any
 * choice is correct.
 *
 * It also hosts the rules object's pool (rules_alloc), below the files
 * that allocate from it.
 */
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "rules_int.h"

#define COMMON_SLOTS 4096

/* Lower case, one space between words; the windows include the spaces
 * around each word. */
static const char common_words[] =
	" the and for with from that this not are was has have will can"
	" info debug warn warning error errors err fatal trace level message"
	" msg time timestamp status code request response method path user"
	" name namespace value true false null none default service server"
	" client http https get post put content type json application"
	" started starting stopped running ready update updated create"
	" created delete deleted version config container pod node kube"
	" kubernetes event events reason object duration latency size bytes"
	" port host address session uid source controller handler process"
	" failed success successfully completed total count unknown api org"
	" com www localhost data result results key id ok done new old all"
	" accept accepted exception execute executing exec operation"
	" attempt attempted state request requests handled handling"
	" connect connected connecting close closed closing open opened"
	" read write send sent receive received check checking found"
	" login logout auth token cache hit miss query select insert table"
	" thread worker task job queue retry retrying next after before"
	" start stop end begin finish finished load loaded loading"
	" caller call called reconcile reconciler reconciling reconciled"
	" duration generation configuration deployment replicaset attempt"
	" health healthy"
	/* an access log's request line */
	" \"get / \"post / \"put / \"delete / \"patch / \"head / \"options /"
	" http/1.0\" http/1.1\" http/2\" ";

static uint32_t slots[COMMON_SLOTS];     /* 0: empty */
static unsigned char rarity[256];       /* lit_rarity, by byte */
static once_flag built = ONCE_FLAG_INIT;

static uint32_t slot_of(uint32_t key)
{
	return (key * 0x9E3779B1u) >> 20;       /* 12 bits: COMMON_SLOTS */
}

static uint32_t gram(const unsigned char *p, size_t n)
{
	uint32_t key = 0;

	for (size_t i = 0; i < n; i++)
		key |= (uint32_t)p[i] << (8 * i);
	return key;
}

static void insert(uint32_t key)
{
	uint32_t h = slot_of(key);

	while (slots[h] && slots[h] != key)
		h = (h + 1) & (COMMON_SLOTS - 1);
	slots[h] = key;
}

/* Byte rarity in log text, 1 (everywhere) to 7 (rare): letter frequency,
 * and digits and the punctuation of timestamps, paths, key=value pairs and
 * JSON are common too; 3 for control bytes and non-ASCII. */
static void build_rarity(void)
{
	static const char *const tiers[] = {
		" etaoinsr",                    /* 1 */
		"hldcum0123456789.:-/=\",_",   /* 2 */
		"fpgwyb",                       /* 4 */
		"vk[](){}'@#$%&*+!?<>;|\\`~^",  /* 5 */
		"xjqz",                         /* 7 */
	};
	static const unsigned char score[] = { 1, 2, 4, 5, 7 };

	memset(rarity, 3, sizeof(rarity));
	for (unsigned t = 0; t < 5; t++)
		for (const char *c = tiers[t]; *c; c++)
			if (rarity[(unsigned char)*c] == 3)
				rarity[(unsigned char)*c] = score[t];
}

static void build(void)
{
	const unsigned char *w = (const unsigned char *)common_words;
	size_t n = sizeof(common_words) - 1;

	for (size_t i = 0; i + 3 <= n; i++) {
		insert(gram(w + i, 3));
		if (i + 4 <= n)
			insert(gram(w + i, 4));
	}
	build_rarity();
}

/* The tables once built: lit_score asks for every window of every
 * candidate, and a call_once each time cost more than the look-up. */
static bool common_in(const unsigned char *p, size_t n)
{
	uint32_t key = gram(p, n), h = slot_of(key);

	while (slots[h]) {
		if (slots[h] == key)
			return true;
		h = (h + 1) & (COMMON_SLOTS - 1);
	}
	return false;
}

/* p: 3 or 4 lower-case bytes. */
bool lit_common(const unsigned char *p, size_t n)
{
	call_once(&built, build);
	return common_in(p, n);
}

/* A table rather than a search of the tiers: pf_build and the literal
 * derivation ask about half a million times at start. */
unsigned lit_rarity(unsigned char c)
{
	call_once(&built, build);
	return rarity[c];
}

/* Sum of the byte rarities, counting only bytes that some uncommon window
 * covers: "code" and "status" score 0, "503" scores 6. */
unsigned lit_score(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned score = 0;
	size_t covered = 0;     /* bytes [0, covered) are counted */

	call_once(&built, build);
	if (n < 4) {
		if (n == 3 && common_in(u, n))
			return 0;
		for (size_t k = 0; k < n; k++)
			score += rarity[u[k]];
		return score;
	}
	for (size_t i = 0; i + 4 <= n; i++) {
		if (common_in(u + i, 4))
			continue;
		for (size_t k = i > covered ? i : covered; k < i + 4; k++)
			score += rarity[u[k]];
		covered = i + 4;
	}
	return score;
}

/* ---- the pool ------------------------------------------------------- */

/* Here, below catalog.c, parse.c and compile.c, which all allocate from
 * it: none of them calls another's file for memory. */
#define POOL_CHUNK (16 * 1024)

struct rules_pool {
	struct rules_pool *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

void *rules_alloc(struct rules *r, size_t n)
{
	struct rules_pool *p = r->pool;

	n = (n + 15) & ~(size_t)15;
	if (!p || p->size - p->used < n) {
		size_t size = n > POOL_CHUNK ? n : POOL_CHUNK;

		if (!(p = malloc(sizeof(*p) + size)))
			return NULL;
		p->size = size;
		p->used = 0;
		p->next = r->pool;
		r->pool = p;
	}
	p->used += n;
	return p->data + p->used - n;
}

char *rules_strndup(struct rules *r, const char *s, size_t n)
{
	char *d = rules_alloc(r, n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

void rules_pool_free(struct rules *r)
{
	while (r->pool) {
		struct rules_pool *next = r->pool->next;

		free(r->pool);
		r->pool = next;
	}
}
