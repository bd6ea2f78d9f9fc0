/* test_correlate_repeat.c: a repeat's set of times (encoding, union,
 * difference, bounds), its identity, and its placement in a bucket's rows
 * past a row's cap. */
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"
#include "tap.h"

#define SEC 1000000000LL
#define T0 (1730640000LL * SEC)
#define S(x) rt_str_make((x), strlen(x))

static int same(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
	return na == nb && (na == 0 || !memcmp(a, b, na * sizeof(*a)));
}

static void test_codec(void)
{
	int64_t t[CORR_REPEAT_CAP], back[CORR_REPEAT_CAP];
	uint8_t buf[CORR_TIMES_BYTES(CORR_REPEAT_CAP)];
	size_t n;
	long m;

	for (int i = 0; i < CORR_REPEAT_CAP; i++)
		t[i] = T0 + i * 234567891LL;
	n = corr_times_encode(t, CORR_REPEAT_CAP, buf);
	ok(n < CORR_REPEAT_CAP * 5 + 10, "256 times in %zu bytes", n);
	m = corr_times_decode(buf, n, back, CORR_REPEAT_CAP);
	is_int(m, CORR_REPEAT_CAP, "decoded back");
	ok(same(t, CORR_REPEAT_CAP, back, (size_t)m), "the same times");
	is_int(corr_times_decode(buf, n, back, CORR_REPEAT_CAP - 1), -1,
	       "more times than the cap: refused");
	is_int(corr_times_decode(buf, n - 1, back, CORR_REPEAT_CAP), -1,
	       "a cut varint: refused");
	is_int(corr_times_decode(buf, 0, back, CORR_REPEAT_CAP), 0,
	       "no bytes: no times");
	/* a zero delta is a time twice: not a set */
	n = corr_times_encode(t, 2, buf);
	buf[n++] = 0;
	is_int(corr_times_decode(buf, n, back, CORR_REPEAT_CAP), -1,
	       "a repeated time: refused");
	memset(buf, 0xff, 20);
	is_int(corr_times_decode(buf, 20, back, CORR_REPEAT_CAP), -1,
	       "an endless varint: refused");
}

static void test_union(void)
{
	const int64_t a[] = { 1, 3, 5, 7 }, b[] = { 2, 3, 8 };
	const int64_t want[] = { 1, 2, 3, 5, 7, 8 };
	int64_t u[8], v[8], w[8], d[4] = { 1, 3, 5, 7 };
	size_t n, m;

	n = corr_times_union(a, 4, b, 3, u);
	ok(same(u, n, want, 6), "union: sorted, each time once");
	m = corr_times_union(b, 3, a, 4, v);
	ok(same(u, n, v, m), "union commutes");
	m = corr_times_union(u, n, a, 4, w);
	ok(same(u, n, w, m), "union again adds nothing");
	m = corr_times_union(u, n, NULL, 0, w);
	ok(same(u, n, w, m), "union with nothing");
	n = corr_times_minus(d, 4, b, 3);
	ok(same(d, n, (const int64_t[]){ 1, 5, 7 }, 3), "minus drops 3");
}

static struct rt_record line(const char *pod, const char *msg, int64_t t)
{
	struct rt_record r;

	rt_record_init(&r);
	r.format = RT_FMT_CRI;
	r.ns = S("prod");
	r.pod = S(pod);
	r.container = S("app");
	r.stream = S("stderr");
	r.message = S(msg);
	r.ts_ns = t;
	return r;
}

static void test_batch(void)
{
	static const char *const tag[] = { "db_auth_failed" };
	struct corr_batch *b = corr_batch_new(false);
	struct rt_class c = { 0 };
	struct rt_record r;
	struct plan_stored last = { 0 };
	uint64_t group;

	c.ntags = 1;
	c.tags[0] = tag[0];
	c.severity = RT_SEV_ERROR;
	for (int i = 0; i < 3; i++)   /* the same line, each time twice */
		for (int k = 0; k < 2; k++) {
			r = line("web-1", "auth failed", T0 + i * SEC);
			corr_batch_add(b, &r, &c);
		}
	r = line("web-2", "auth failed", T0);
	corr_batch_add(b, &r, &c);
	r = line("web-1", "auth failed", T0 + CORR_REPEAT_NS);
	corr_batch_add(b, &r, &c);
	is_int(b->nev, 3, "a bucket per pod and minute");
	ok(b->ev[0].repeat, "a line without a uid is a repeat");
	is_int(b->ev[0].count, 3, "three distinct times counted");
	is_int(b->ev[0].ntimes, 3, "and held");
	is_int(b->ev[0].last_ns, T0 + 2 * SEC, "last time");
	r = line("web-1", "auth failed", T0 + 5 * SEC);
	r.uid = S("u1");
	corr_batch_add(b, &r, &c);
	ok(!b->ev[3].repeat, "an Event (uid) is no repeat");
	corr_batch_reset(b);

	/* 600 times of one bucket, nothing stored: rows of 256, 256, 88 */
	for (int i = 599; i >= 0; i--) {
		r = line("web-1", "auth failed", T0 + i * (SEC / 20));
		corr_batch_add(b, &r, &c);
	}
	is_int(b->nev, 1, "one bucket");
	group = b->ev[0].ukey;
	is_int(corr_batch_repeat_place(b, 0, 0, &last), 0, "placed");
	is_int(b->nev, 3, "in three rows");
	is_int(b->ev[0].count + b->ev[1].count + b->ev[2].count, 600,
	       "every time once");
	is_int(b->ev[1].count, 256, "a full row holds 256");
	ok(b->ev[0].ukey == group && b->ev[1].ukey == corr_repeat_row(group, 1)
	   && b->ev[2].ukey == corr_repeat_row(group, 2), "rows 0, 1, 2");
	ok(b->ev[0].last_ns < b->ev[1].first_ns, "the smallest times first");
	corr_batch_reset(b);

	/* stored: row 0 full, row 1 with 250; 10 new times fill row 1 */
	for (int i = 0; i < 10; i++) {
		r = line("web-1", "auth failed", T0 + i * SEC);
		corr_batch_add(b, &r, &c);
	}
	last.found = true;
	last.count = 250;
	is_int(corr_batch_repeat_place(b, 0, 2, &last), 0, "placed again");
	is_int(b->nev, 2, "row 1 takes 6, row 2 the rest");
	ok(b->ev[0].ukey == corr_repeat_row(group, 1) && b->ev[0].count == 6,
	   "row 1: 6 more");
	ok(b->ev[1].ukey == corr_repeat_row(group, 2) && b->ev[1].count == 4,
	   "row 2: 4");
	corr_batch_free(b);
}

static uint64_t key_of(const char *msg, const struct rt_class *c,
		       enum rt_format f)
{
	struct rt_record r = line("web-1", msg, T0);

	r.format = f;
	return corr_repeat_key(&r, c, T0, CORR_REPEAT_NS);
}

#define NGINX(IP, ST, B) IP " - - [03/Nov/2024:10:00:00 +0000] " \
	"\"GET /api/v1/orders/80027 HTTP/1.1\" " ST " " B " \"-\""

/* A runtime's line that differs only in its digits is the same repeat;
 * what the rules tagged and captured stays part of it, exactly. */
static void test_fold_key(void)
{
	static const char *const tag[] = { "upstream_unavailable", "other" };
	struct rt_class c = { 0 }, c2, d = { 0 };
	uint64_t k = 0;

	c.ntags = 1;
	c.tags[0] = tag[0];
	c.nfields = 1;
	c.fields[0] = (struct rt_field){ S("status"), S("503") };
	d = c;
	d.fields[0].val = S("502");
	c2 = c;
	c2.ntags = 2;
	c2.tags[1] = tag[1];
	k = key_of(NGINX("10.1.2.3", "503", "224"), &c, RT_FMT_CRI);
	ok(k == key_of(NGINX("10.43.112.188", "503", "98"), &c, RT_FMT_CRI),
	   "CRI: another client and size, the same repeat");
	ok(k == key_of(NGINX("10.43.112.188", "503", "98"), &c,
		       RT_FMT_DOCKER), "docker: the same");
	ok(k != key_of(NGINX("10.1.2.3", "502", "224"), &d, RT_FMT_CRI),
	   "another captured status: another repeat");
	ok(k != key_of(NGINX("10.1.2.3", "503", "224"), &c2, RT_FMT_CRI),
	   "another tag: another repeat");
	ok(key_of(NGINX("10.1.2.3", "503", "224"), &c, RT_FMT_TEXT) !=
	   key_of(NGINX("10.1.2.4", "503", "224"), &c, RT_FMT_TEXT),
	   "a plain line's digits stay exact (its times may be coarse)");
	ok(key_of("retry 1 of 3", &c, RT_FMT_CRI) ==
	   key_of("retry 10 of 30", &c, RT_FMT_CRI), "a number's length folds");
	ok(key_of("retry 1 of 3", &c, RT_FMT_CRI) !=
	   key_of("retry 1 of x", &c, RT_FMT_CRI), "a number is no letter");
	ok(key_of("retry 12", &c, RT_FMT_CRI) !=
	   key_of("retry 1.2", &c, RT_FMT_CRI), "nor are the digits' dot");
	ok(key_of("abc", &c, RT_FMT_CRI) != key_of("ab1c", &c, RT_FMT_CRI),
	   "a number where there was none: another repeat");
	ok(key_of("ab\xff\x01c", &c, RT_FMT_CRI) != key_of("ab1c", &c, RT_FMT_CRI),
	   "no text spells the digits' mark");
}

/* A repeat's key is its stored identity: a database written before
 * must see the same lines as the same repeats when they are read again,
 * so the key of a text is what it was when folding began (these values
 * are those of its first release). */
static void test_fold_key_stable(void)
{
	static const struct {
		const char *msg;
		enum rt_format f;
		uint64_t key;
	} k[] = {
		{ NGINX("10.1.2.3", "503", "224"), RT_FMT_CRI,
		  0x8396c8b1686e6d96ULL },
		{ "retry 1 of 3", RT_FMT_CRI, 0xaecac65dfc17b964ULL },
		{ "ab\xff\x01c", RT_FMT_CRI, 0xbc49413586b52efeULL },
		{ "", RT_FMT_CRI, 0xcfa07813d11f18e2ULL },
		{ "12345", RT_FMT_CRI, 0x11857627fa03f8dfULL },
		{ "x9\xff", RT_FMT_DOCKER, 0x9c3c1c8f61cca6c8ULL },
		{ "panic: runtime error: index out of range [5] with length 3",
		  RT_FMT_CRI, 0xfb87c311d32fcd26ULL },
		{ "retry 1 of 3", RT_FMT_TEXT, 0xed8281a78d1b3209ULL },
	};
	struct rt_class c = { 0 };

	c.ntags = 1;
	c.tags[0] = "upstream_unavailable";
	c.nfields = 1;
	c.fields[0] = (struct rt_field){ S("status"), S("503") };
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		uint64_t got = key_of(k[i].msg, &c, k[i].f);

		ok(got == k[i].key, "the key of text %zu is as it was", i);
	}
}

/* Three lines that fold into one row, in each of their six orders: the
 * same count, times and message (the latest line's). */
static void test_fold_orders(void)
{
	static const char *const tag[] = { "upstream_unavailable" };
	static const char *const msg[] = {
		NGINX("10.0.0.1", "503", "10"), NGINX("10.0.0.22", "503", "7"),
		NGINX("10.0.0.3", "503", "999"),
	};
	static const int perm[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					{ 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	struct corr_batch *b = corr_batch_new(false);
	struct rt_class c = { 0 };
	struct rt_record r;
	int good = 0;

	c.ntags = 1;
	c.tags[0] = tag[0];
	c.severity = RT_SEV_ERROR;
	for (int p = 0; p < 6; p++) {
		for (int i = 0; i < 3; i++) {
			int j = perm[p][i];

			r = line("web-1", msg[j], T0 + j * SEC);
			corr_batch_add(b, &r, &c);
		}
		/* one of them again: a replay adds nothing */
		r = line("web-1", msg[1], T0 + SEC);
		corr_batch_add(b, &r, &c);
		good += b->nev == 1 && b->ev[0].count == 3 &&
			b->ev[0].first_ns == T0 && b->ev[0].last_ns == T0 + 2 * SEC &&
			b->ev[0].message.n == strlen(msg[2]) &&
			!memcmp(b->ev[0].message.p, msg[2], strlen(msg[2]));
		corr_batch_reset(b);
	}
	is_int(good, 6, "every order: one row of 3, the latest line's text");
	corr_batch_free(b);
}

int main(void)
{
	test_codec();
	test_union();
	test_batch();
	test_fold_key();
	test_fold_key_stable();
	test_fold_orders();
	is_int(corr_repeat_window(30 * SEC), 30 * SEC, "a gap under a minute");
	is_int(corr_repeat_window(15 * 60 * SEC), CORR_REPEAT_NS,
	       "a minute at most");
	return done_testing();
}
