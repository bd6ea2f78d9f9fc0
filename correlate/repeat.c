/*
 * repeat.c: a line repeated by one container is a counter, not a row.
 *
 * A record without a uid and with one time of its own (a container log
 * line, a plain line) is a repeat: its identity is its content and a time
 * bucket (corr_repeat_key), not its exact time, and the row of that
 * identity keeps the set of distinct times it has counted (the times
 * column, delta-varint encoded). count is the size of the set, so merging
 * two versions is a set union: the same line read again adds nothing, and
 * any order of the lines gives the same set.
 *
 * The bucket is no wider than the smallest gap (corr_repeat_window), so
 * two times of one row are less than a gap apart and a row never joins
 * windows that its lines would have kept apart.
 *
 * A row takes at most CORR_REPEAT_CAP times. Past that, the times of the
 * bucket fill rows 1, 2, ... (keys corr_repeat_row) in the order they
 * arrive, the smallest of a batch first. Every time is still counted once
 * (a time already in any row of the bucket is not counted again), so the
 * counts, times, incidents and objects do not depend on the order; only
 * which row holds which time does, and only in a bucket past the cap.
 *
 * A runtime-stamped line's digits fold (docs/schema.md, "Folded
 * repeats"): lines that differ only in them are one repeat, what the
 * rules tagged and captured kept exact in its identity; the row's text is
 * its latest line's (corr_version_cmp, as for any two versions).
 */
#include <string.h>

#include "revtrail/correlate.h"

int64_t corr_repeat_window(int64_t gap_ns)
{
	return gap_ns > 0 && gap_ns < CORR_REPEAT_NS ? gap_ns : CORR_REPEAT_NS;
}

bool corr_repeat_is(const struct rt_record *rec, int64_t first, int64_t last)
{
	return !rec->uid.n && rec->count <= 1 && first > 0 && first == last &&
	       !rec->nrevs;
}

static uint64_t hash_str(uint64_t h, struct rt_str s)
{
	uint64_t n = s.n;

	h = rt_hash64(h, &n, sizeof(n));
	return s.n ? rt_hash64(h, s.p, s.n) : h;
}

/* FNV-1a as rt_hash64 is, without its final mix: a folded key is one
 * pass over its bytes, mixed once (a call per field and per run of
 * digits cost more than the bytes). */
#define FNV_PRIME 0x100000001b3ULL

#define FNV_STEP(h, c) ((h) = ((h) ^ (c)) * FNV_PRIME)

/* Four bytes a step: the loop's own count and test cost as much as a
 * byte's hashing. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		FNV_STEP(h, s[i]);
		FNV_STEP(h, s[i + 1]);
		FNV_STEP(h, s[i + 2]);
		FNV_STEP(h, s[i + 3]);
	}
	for (; i < n; i++)
		FNV_STEP(h, s[i]);
	return h;
}

static uint64_t fnv_str(uint64_t h, struct rt_str s)
{
	uint64_t n = s.n;

	return fnv(fnv(h, &n, sizeof(n)), s.p, s.n);
}

static bool is_digit(unsigned char c)
{
	return (unsigned)c - '0' < 10u;
}

/* s with each run of digits as one mark: "10.0.0.1 503 224" and
 * "10.43.112.188 503 98" hash the same. The mark is 0xff 1, a byte 0xff
 * of the text 0xff 2, so no two texts meet but by their digits. */
static uint64_t fnv_folded(uint64_t h, struct rt_str s)
{
	const unsigned char *p = (const unsigned char *)s.p, *e = p + s.n;

	while (p < e) {
		unsigned char c = *p++;

		if (is_digit(c)) {
			while (p < e && is_digit(*p))
				p++;
			FNV_STEP(h, 0xff);
			FNV_STEP(h, 1);
		} else if (c == 0xff) {
			FNV_STEP(h, 0xff);
			FNV_STEP(h, 2);
		} else {
			FNV_STEP(h, c);
		}
	}
	return h;
}

/* What the rules made of a folded line, in their order: its tags and
 * its captures, exactly. */
static uint64_t fnv_class(uint64_t h, const struct rt_class *cls)
{
	h = fnv(h, &cls->ntags, sizeof(cls->ntags));
	for (unsigned i = 0; i < cls->ntags; i++)
		h = fnv_str(h, rt_str_make(cls->tags[i], strlen(cls->tags[i])));
	h = fnv(h, &cls->nfields, sizeof(cls->nfields));
	for (unsigned i = 0; i < cls->nfields; i++)
		h = fnv_str(fnv_str(h, cls->fields[i].key), cls->fields[i].val);
	return h;
}

/* Whether a line's digits fold: its time is the container runtime's,
 * stamped line by line to the nanosecond, so two lines that meet in one
 * set of times are one line read twice. A plain line's time may be a
 * whole second that many lines share. */
static bool folds(const struct rt_record *rec, const struct rt_class *cls)
{
	return cls && (rec->format == RT_FMT_CRI ||
		       rec->format == RT_FMT_DOCKER);
}

uint64_t corr_repeat_key(const struct rt_record *rec,
			 const struct rt_class *cls, int64_t first,
			 int64_t window)
{
	const struct rt_str *f[] = {
		&rec->cluster, &rec->ns, &rec->kind, &rec->name, &rec->pod,
		&rec->container, &rec->stream, &rec->reason,
	};
	const size_t nf = sizeof(f) / sizeof(f[0]);
	int64_t bucket = first / window;
	uint64_t h;

	if (folds(rec, cls)) {
		h = fnv(0xcbf29ce484222325ULL, "folded", 6);
		for (size_t i = 0; i < nf; i++)
			h = fnv_str(h, *f[i]);
		h = fnv_class(fnv_folded(h, rec->message), cls);
		h = fnv(fnv(h, &window, sizeof(window)), &bucket,
			sizeof(bucket));
		return rt_hash64(h, "", 0);
	}
	h = rt_hash64(0, "repeat", 6);
	for (size_t i = 0; i < nf; i++)
		h = hash_str(h, *f[i]);
	h = hash_str(h, rec->message);
	h = rt_hash64(h, &window, sizeof(window));
	return rt_hash64(h, &bucket, sizeof(bucket));
}

uint64_t corr_repeat_row(uint64_t group, uint32_t row)
{
	return row ? rt_hash64(group, &row, sizeof(row)) : group;
}

uint64_t corr_repeat_single(uint64_t group, int64_t t)
{
	return rt_hash64(rt_hash64(group, "single", 6), &t, sizeof(t));
}

/* ---- the set of times ------------------------------------------------ */

static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t corr_times_encode(const int64_t *t, size_t n, uint8_t *out)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += put_varint(out + len, (uint64_t)(i ? t[i] - t[i - 1] :
							 t[i]));
	return len;
}

long corr_times_decode(const void *p, size_t n, int64_t *out, size_t cap)
{
	const uint8_t *s = p, *e = s + n;
	int64_t prev = 0;
	size_t k = 0;

	while (s < e) {
		uint64_t v = 0;
		unsigned shift = 0;

		do {
			if (s == e || shift > 63)
				return -1;
			v |= (uint64_t)(*s & 0x7f) << shift;
			shift += 7;
		} while (*s++ & 0x80);
		/* strictly increasing, positive, no overflow, bounded */
		if (v == 0 || v > (uint64_t)(INT64_MAX - prev) || k == cap)
			return -1;
		prev += (int64_t)v;
		out[k++] = prev;
	}
	return (long)k;
}

size_t corr_times_union(const int64_t *a, size_t na, const int64_t *b,
			size_t nb, int64_t *out)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i] < b[j]))
			out[k++] = a[i++];
		else if (i == na || b[j] < a[i])
			out[k++] = b[j++];
		else {
			out[k++] = a[i++];
			j++;
		}
	}
	return k;
}

size_t corr_times_minus(int64_t *a, size_t na, const int64_t *b, size_t nb)
{
	size_t i, j = 0, k = 0;

	for (i = 0; i < na; i++) {
		while (j < nb && b[j] < a[i])
			j++;
		if (j == nb || b[j] != a[i])
			a[k++] = a[i];
	}
	return k;
}

size_t corr_times_find(const int64_t *a, size_t n, int64_t t, bool *found)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < n && a[lo] == t;
	return lo;
}
