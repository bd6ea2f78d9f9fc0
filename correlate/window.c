/*
 * window.c: incident windows and tag sets.
 *
 * An incident is a maximal run of one release's tagged events in which no
 * quiet gap exceeds gap_ns. corr_cluster computes those runs for a set of
 * intervals (events, and incidents already stored, which are runs too).
 * Adding events only ever merges runs, never splits them, which is why the
 * store can extend incidents incrementally and still end, after all input,
 * where a from-scratch computation over the same events would. Items of
 * different revision classes (correlate/revclass.c) are never one run.
 */
#include <stdlib.h>
#include <string.h>

#include "revtrail/correlate.h"

static int item_cmp(const void *a, const void *b)
{
	const struct corr_item *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

size_t corr_cluster(struct corr_item *items, size_t n, int64_t gap_ns)
{
	size_t k = 0;
	int64_t end = 0;

	if (n == 0)
		return 0;
	qsort(items, n, sizeof(*items), item_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && (items[i].cls != items[i - 1].cls ||
			      items[i].start - end > gap_ns))
			k++;
		if (i == 0 || items[i].end > end)
			end = items[i].end;
		items[i].cluster = k;
	}
	return k + 1;
}

/* Sorted and unique: what corr_tagset_add's search and the stored JSON
 * arrays (compared as text) rely on. A loop over at most 64 names, run
 * only where asserts are on. */
static inline bool tagset_sorted(const struct plan_tagset *s)
{
	for (unsigned i = 1; i < s->n; i++)
		if (strcmp(s->t[i - 1], s->t[i]) >= 0)
			return false;
	return s->n <= PLAN_MAX_TAGS;
}

bool corr_tagset_add(struct plan_tagset *s, const char *tag)
{
	unsigned lo = 0, hi = s->n;

	RT_ASSERT(tagset_sorted(s));

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		int c = strcmp(s->t[mid], tag);

		if (c == 0)
			return false;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->n == PLAN_MAX_TAGS)
		return false;
	memmove(&s->t[lo + 1], &s->t[lo], (s->n - lo) * sizeof(s->t[0]));
	s->t[lo] = tag;
	s->n++;
	return true;
}

int corr_tagset_parse(struct plan_tagset *s, const char *json,
		      const char *(*intern)(void *ctx, const char *p, size_t n),
		      void *ctx)
{
	const char *p = json;

	if (!p)
		return 0;
	while (*p == ' ')
		p++;
	if (*p != '[')
		return RT_EPARSE;
	/* Tag names are [a-z0-9_.-]: no escapes to undo. */
	while (*p) {
		const char *q, *name;

		p = strchr(p, '"');
		if (!p)
			break;
		q = strchr(p + 1, '"');
		if (!q)
			return RT_EPARSE;
		name = intern(ctx, p + 1, (size_t)(q - p - 1));
		if (name)
			corr_tagset_add(s, name);
		p = q + 1;
	}
	return 0;
}

int corr_tagset_json(const struct plan_tagset *s, char *buf, size_t size)
{
	size_t len = 0;

	RT_ASSERT(tagset_sorted(s));
	if (size < 3)
		return -1;
	buf[len++] = '[';
	for (unsigned i = 0; i < s->n; i++) {
		size_t n = strlen(s->t[i]);

		if (len + n + 4 >= size)
			return -1;
		if (i)
			buf[len++] = ',';
		buf[len++] = '"';
		memcpy(buf + len, s->t[i], n);
		len += n;
		buf[len++] = '"';
	}
	buf[len++] = ']';
	buf[len] = '\0';
	return (int)len;
}
