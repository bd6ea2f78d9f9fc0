/*
 * text.c: byte hygiene and time stamps for the framer and decoders.
 *
 * Every frame is copied into the arena once; that copy is where invalid
 * UTF-8 and binary junk are replaced by U+FFFD, so nothing downstream (the
 * JSON parser, PCRE2 in UTF mode, SQLite, JSON output) ever sees them. The
 * common clean line costs one scan and one memcpy.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>      /* plain_run256, chosen when the CPU has AVX2 */
#endif

#include "frame.h"

/* Printable ASCII. */
static inline bool byte_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* Tab, CR, LF (inside documents) and ESC (colour codes) are text. */
static inline bool byte_ok(unsigned char c)
{
	return byte_plain(c) || c == '\t' || c == '\r' || c == '\n' ||
	       c == 0x1b;
}

#ifdef __SSE2__
/* Bit i set: byte i of the 16 at v is not printable ASCII (a control
 * byte, DEL, or >= 0x80, which the signed compare puts below the blank). */
static inline unsigned unplain_mask(__m128i v)
{
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(
		_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
		_mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))));
}

/* Bit i set: byte i of the 16 at p is not plain text. A block of printable
 * ASCII (nearly all of them) costs two compares; only the others sort out
 * the control bytes that are text. */
static inline unsigned bad_mask(const char *p)
{
	const __m128i v = _mm_loadu_si128((const __m128i *)p);
	unsigned m = unplain_mask(v), ok;

	if (!m)
		return 0;
	ok = (unsigned)_mm_movemask_epi8(_mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')),
			     _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))),
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')),
			     _mm_cmpeq_epi8(v, _mm_set1_epi8(0x1b)))));
	return m & ~ok;
}
#endif

/* Length of the run of text bytes at p: 16 at a time with SSE2 (every
 * frame passes here, and most are all text); the last block overlaps the
 * one before it rather than falling back to bytes. */
static size_t clean_prefix(const char *p, size_t n)
{
	size_t i = 0;

#ifdef __SSE2__
	unsigned mask;

	for (; i + 16 <= n; i += 16)
		if ((mask = bad_mask(p + i)))
			return i + (unsigned)__builtin_ctz(mask);
	if (n >= 16 && i < n) {
		mask = bad_mask(p + n - 16) >> (16 - (n - i));
		return mask ? i + (unsigned)__builtin_ctz(mask) : n;
	}
#endif
	while (i < n && byte_ok((unsigned char)p[i]))
		i++;
	return i;
}

/* From i on, 16 bytes a step, then byte by byte. */
static inline size_t plain_run128(const char *p, size_t n, size_t i)
{
#ifdef __SSE2__
	for (; i + 16 <= n; i += 16) {
		unsigned m = unplain_mask(_mm_loadu_si128(
			(const __m128i *)(p + i)));

		if (m)
			return i + (unsigned)__builtin_ctz(m);
	}
#endif
	while (i < n && byte_plain((unsigned char)p[i]))
		i++;
	return i;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The bytes of the 32 at p that are not printable ASCII, all ones. */
static inline __attribute__((target("avx2"))) __m256i unplain256(
	const char *p)
{
	const __m256i v = _mm256_loadu_si256((const __m256i *)p);

	return _mm256_or_si256(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v),
			       _mm256_cmpeq_epi8(v, _mm256_set1_epi8(0x7f)));
}

/* 32 bytes a step where the CPU has AVX2: this is the first pass over
 * every byte read, and most lines are done in one step fewer. Two blocks
 * share a test, which halves the loop's own cost on a long line. */
static __attribute__((target("avx2"))) size_t plain_run256(const char *p,
							   size_t n)
{
	size_t i = 0;

	for (; i + 64 <= n; i += 64) {
		__m256i a = unplain256(p + i), b = unplain256(p + i + 32);

		if (!_mm256_testz_si256(_mm256_or_si256(a, b),
					_mm256_or_si256(a, b)))
			return i + (unsigned)__builtin_ctzll(
				(uint32_t)_mm256_movemask_epi8(a) |
				(uint64_t)(uint32_t)_mm256_movemask_epi8(b) << 32);
	}
	for (; i + 32 <= n; i += 32) {
		unsigned m = (unsigned)_mm256_movemask_epi8(unplain256(p + i));

		if (m)
			return i + (unsigned)__builtin_ctz(m);
	}
	return plain_run128(p, n, i);
}
#endif

size_t ing_plain_run(const char *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("avx2"))
		return plain_run256(p, n);
#endif
	return plain_run128(p, n, 0);
}

/*
 * Length of the valid UTF-8 sequence at p[0] (lead byte >= 0x80): 2..4,
 * 0 when invalid, SIZE_MAX when valid so far but cut by the end.
 */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;	/* no UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (i >= n)
			return SIZE_MAX;
		if (p[i] < lo || p[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

static const char fffd[3] = { (char)0xef, (char)0xbf, (char)0xbd };

/* out must hold 3 * n bytes. Returns the bytes written. */
static size_t clean_into(char *out, const char *p, size_t n, bool cut,
			 unsigned *flags, size_t *junk)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0, o = 0;

	while (i < n) {
		size_t k = clean_prefix(p + i, n - i);

		memcpy(out + o, p + i, k);
		i += k;
		o += k;
		if (i >= n)
			break;
		if (s[i] < 0x80) {
			*flags |= RT_REC_BINARY;
			k = 1;
		} else {
			k = utf8_len(s + i, n - i);
			if (k == SIZE_MAX && cut)
				break;	/* a character cut by truncation */
			if (k != 0 && k != SIZE_MAX) {
				memcpy(out + o, p + i, k);
				i += k;
				o += k;
				continue;
			}
			*flags |= RT_REC_BAD_UTF8;
			k = 1;
		}
		memcpy(out + o, fffd, 3);
		o += 3;
		i += k;
		(*junk)++;
	}
	return o;
}

/* The cleaned copy of a text known to need cleaning. */
static struct rt_str clean_copy(struct rt_arena *a, const char *p, size_t n,
				bool cut, unsigned *flags, size_t *junk)
{
	char *out = rt_arena_alloc(a, 3 * n + 1);
	size_t o;

	if (!out)
		return RT_STR_NULL;
	o = clean_into(out, p, n, cut, flags, junk);
	out[o] = '\0';
	return rt_str_make(out, o);
}

struct rt_str ing_clean(struct rt_arena *a, const char *p, size_t n, bool cut,
			unsigned *flags, size_t *junk)
{
	if (clean_prefix(p, n) == n)
		return rt_arena_strdup(a, p, n);
	return clean_copy(a, p, n, cut, flags, junk);
}

struct rt_str ing_clean_view(struct rt_arena *a, const char *p, size_t n,
			     bool cut, unsigned *flags, size_t *junk)
{
	if (clean_prefix(p, n) == n)
		return rt_str_make(p, n);
	return clean_copy(a, p, n, cut, flags, junk);
}

int ing_clean_buf(struct rt_buf *b, const char *p, size_t n, bool cut,
		  unsigned *flags)
{
	size_t junk = 0;

	if (clean_prefix(p, n) == n)
		return rt_buf_add(b, p, n);
	if (rt_buf_reserve(b, 3 * n) < 0)
		return RT_ENOMEM;
	b->n += clean_into(b->p + b->n, p, n, cut, flags, &junk);
	b->p[b->n] = '\0';
	return 0;
}

static bool digits(const char *p, size_t n, int *out)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return true;
}

/* The date and time to the second, YYYY-MM-DDThh:mm:ss, as ns since the
 * epoch at UTC; false when it is not one. */
static bool rfc3339_seconds(const char *p, int64_t *ns)
{
	int y, mo, d, h, mi, s;

	if (p[4] != '-' || p[7] != '-' || (p[10] != 'T' && p[10] != 't') ||
	    p[13] != ':' || p[16] != ':' || !digits(p, 4, &y) ||
	    !digits(p + 5, 2, &mo) || !digits(p + 8, 2, &d) ||
	    !digits(p + 11, 2, &h) || !digits(p + 14, 2, &mi) ||
	    !digits(p + 17, 2, &s) ||
	    rt_time_from_civil(y, mo, d, h, mi, s, 0, 0, ns) != 0)
		return false;
	/* A whole second is a multiple of 10^9 but for the epoch, which
	 * rt_time_from_civil reads as 1 ns: as a base its fraction and zone
	 * are added to, it is 0 (rfc3339_end nudges the sum). */
	if (*ns == 1)
		*ns = 0;
	return true;
}

/* The time a second's base, its fraction and its zone make, ending at k:
 * as rt_time_from_civil has it, none before 1970 (RT_ERANGE there: 0, so
 * that rt_time_parse reads it) and the epoch itself as 1 ns. */
static size_t rfc3339_end(int64_t v, size_t k, int64_t *ns)
{
	if (v < 0)
		return 0;
	*ns = v ? v : 1;
	return k;
}

/*
 * The leading digits of the 8 bytes at p (at least one, at most 8): their
 * count, and their value in *out. Branch-free on the eight bytes: the
 * fraction of a CRI line's timestamp, 6 to 9 digits on every line, took a
 * tenth of the line's decoding one digit at a time.
 */
static size_t digits8(const char *p, int64_t *out)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full, high = 0x8080808080808080ull;
	uint64_t w, v, bad;
	size_t m;

	memcpy(&w, p, 8);
	v = w ^ 0x3030303030303030ull;           /* a digit's byte: 0..9 */
	bad = (((v & low7) + 0x7676767676767676ull) | v) & high;
	m = bad ? (size_t)__builtin_ctzll(bad) / 8 : 8;
	/* Little-endian: the first digit is the lowest byte. Shifting the
	 * others out of the top leaves zeros, leading ones, at the bottom. */
	v = m ? v << (8 * (8 - m)) : 0;
	v = (v * 10 + (v >> 8)) & 0x00ff00ff00ff00ffull;
	v = (v * 100 + (v >> 16)) & 0x0000ffff0000ffffull;
	v = (v * 10000 + (v >> 32)) & 0xffffffffull;
	*out = (int64_t)v;
	return m;
}

/*
 * The layout containerd writes (RFC3339Nano: 1 to 9 digits, trailing
 * zeros dropped, then 'Z') after a second already read as base, with at
 * least 10 bytes from p + 20 to read: the time's length, or 0 for any other
 * form, which the general reading below then takes whole.
 */
static size_t rfc3339_nano_z(const char *p, int64_t base, int64_t *ns)
{
	static const int64_t scale[10] = { 0, 100000000, 10000000, 1000000,
		100000, 10000, 1000, 100, 10, 1 };
	int64_t frac;
	size_t m = digits8(p + 20, &frac);

	if (m == 8 && p[28] >= '0' && p[28] <= '9') {
		frac = frac * 10 + (p[28] - '0');
		m = 9;
	}
	if (!m || p[20 + m] != 'Z')
		return 0;
	return rfc3339_end(base + frac * scale[m], 21 + m, ns);
}

/*
 * YYYY-MM-DDThh:mm:ss[.f](Z|+hh:mm). Written here rather than calling
 * rt_time_parse because it sits on the CRI hot path: no locale, no
 * scanning for alternatives, and consecutive lines mostly share their
 * second, so the last one is remembered (per thread).
 */
size_t ing_rfc3339(const char *p, size_t n, int64_t *ns)
{
	static _Thread_local struct {
		char key[19];
		bool set, ok;
		int64_t ns;
	} last;
	int oh, om;
	static const int64_t pow10[10] = { 1, 10, 100, 1000, 10000, 100000,
		1000000, 10000000, 100000000, 1000000000 };
	int64_t frac = 0, base;
	size_t k = 19;

	if (n < 20)
		return 0;
	if (!last.set || memcmp(p, last.key, 19) != 0) {
		memcpy(last.key, p, 19);
		last.set = true;
		last.ok = rfc3339_seconds(p, &last.ns);
	}
	if (!last.ok)
		return 0;
	base = last.ns;
	if (n >= 30 && p[k] == '.' && (k = rfc3339_nano_z(p, base, ns)) != 0)
		return k;
	k = 19;
	if (p[k] == '.') {
		size_t d = ++k;

		if (k >= n || p[k] < '0' || p[k] > '9')
			return 0;
		if (n - k >= 8)
			k += digits8(p + k, &frac);
		/* Nanoseconds: digits past the ninth are read and dropped. */
		for (; k < n && p[k] >= '0' && p[k] <= '9'; k++)
			if (k - d < 9)
				frac = frac * 10 + (p[k] - '0');
		frac *= pow10[k - d < 9 ? 9 - (k - d) : 0];
	}
	if (k >= n)
		return 0;
	if (p[k] == 'Z' || p[k] == 'z')
		return rfc3339_end(base + frac, k + 1, ns);
	if ((p[k] != '+' && p[k] != '-') || n - k < 6 || p[k + 3] != ':' ||
	    !digits(p + k + 1, 2, &oh) || !digits(p + k + 4, 2, &om) ||
	    oh > 23 || om > 59)
		return 0;
	/* As rt_time_from_civil computes it: the offset is within a day. */
	return rfc3339_end(base - (int64_t)((p[k] == '+' ? 1 : -1) *
					    (oh * 3600 + om * 60)) *
				  1000000000 + frac, k + 6, ns);
}

/* nginx $time_local / common log format: 01/May/2024:10:15:13 +0000 */
static int clf_time(const char *p, size_t n, int64_t *ns)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	int d, y, h, mi, s, oh, om, mo = 0;

	if (n != 26 || p[2] != '/' || p[6] != '/' || p[11] != ':' ||
	    p[14] != ':' || p[17] != ':' || p[20] != ' ' ||
	    (p[21] != '+' && p[21] != '-'))
		return RT_EPARSE;
	for (int i = 0; i < 12; i++)
		if (memcmp(p + 3, months + 3 * i, 3) == 0)
			mo = i + 1;
	if (!mo || !digits(p, 2, &d) || !digits(p + 7, 4, &y) ||
	    !digits(p + 12, 2, &h) || !digits(p + 15, 2, &mi) ||
	    !digits(p + 18, 2, &s) || !digits(p + 22, 2, &oh) ||
	    !digits(p + 24, 2, &om))
		return RT_EPARSE;
	return rt_time_from_civil(y, mo, d, h, mi, s, 0,
				  (p[21] == '+' ? 1 : -1) * (oh * 3600 + om * 60),
				  ns);
}

int ing_time_parse(const char *p, size_t n, int64_t *ns)
{
	if (n && ing_rfc3339(p, n, ns) == n)
		return 0;
	if (clf_time(p, n, ns) == 0)
		return 0;
	return rt_time_parse(p, n, ns);
}

/*
 * "2024-05-01T10:15:13Z msg", "[2024-05-01 10:15:13,123] msg" (Python's
 * comma fraction). klog's "E0501 10:15:13.123456" has no year: left to the
 * caller's context, so not parsed here.
 */
int ing_leading_time(const char *p, size_t n, int64_t *ns)
{
	char tmp[40];
	size_t k, len;

	if (n && p[0] == '[') {
		p++;
		n--;
	}
	if (n < 19 || p[4] != '-' || p[0] < '0' || p[0] > '9')
		return RT_EPARSE;
	k = ing_rfc3339(p, n, ns);
	if (k && (k == n || ing_is_space(p[k]) || p[k] == ']' || p[k] == ','))
		return RT_OK;
	if (p[10] != ' ')
		return RT_EPARSE;
	/* Date, space, time (up to the next space or bracket). */
	for (len = 11; len < n && len < sizeof(tmp) - 1 && p[len] != ' ' &&
		       p[len] != ']';
	     len++)
		;
	memcpy(tmp, p, len);
	tmp[len] = '\0';
	if (len > 19 && tmp[19] == ',')
		tmp[19] = '.';
	return rt_time_parse(tmp, len, ns);
}

static int hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* \uXXXX at p (p[0] == '\\', p[1] == 'u'), with a surrogate pair. */
static unsigned json_u(const char *p, size_t n, size_t *used)
{
	int hi = n >= 6 ? hex4(p + 2) : -1, lo;

	*used = n >= 6 ? 6 : n;
	if (hi < 0)
		return 0xfffd;
	if (hi < 0xd800 || hi > 0xdfff)
		return (unsigned)hi;
	if (hi >= 0xdc00 || n < 12 || p[6] != '\\' || p[7] != 'u' ||
	    (lo = hex4(p + 8)) < 0xdc00 || lo > 0xdfff)
		return 0xfffd;
	*used = 12;
	return 0x10000 + (((unsigned)hi - 0xd800) << 10) + ((unsigned)lo - 0xdc00);
}

size_t ing_json_unescape_to(char *out, const char *p, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		size_t used = 2;
		char c;

		if (p[i] != '\\' || i + 1 >= n) {
			out[o++] = p[i++];
			continue;
		}
		switch ((c = p[i + 1])) {
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u': o += put_utf8(out + o, json_u(p + i, n - i, &used)); break;
		default: out[o++] = c; break;
		}
		i += used;
	}
	out[o] = '\0';
	return o;
}
