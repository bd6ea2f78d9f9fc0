/*
 * json_stream.c: the List streamer (json_stream.h). A state machine over
 * bytes: depth, whether a string is open, and, for the members of a root
 * object, which key a value belongs to, so that `items` is found whatever
 * the order of the members (kubectl sorts them: items comes before kind).
 * String bodies are skipped 16 bytes at a time (js_find_special), since a
 * release Secret is mostly one long base64 string.
 */
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"
#include "json_stream.h"

/* Where a member of the root object stands. */
enum { JS_M_KEY, JS_M_IN_KEY, JS_M_COLON, JS_M_VALUE, JS_M_IN_VALUE };

void js_stream_reset(struct js_stream *s, bool arrays)
{
	char *buf = s->buf;
	size_t cap = s->cap, max = s->max;
	const struct js_stream_ops *ops = s->ops;
	void *ctx = s->ctx;

	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->ctx = ctx;
	s->max = max;
	s->arrays = arrays;
	s->buf = buf;
	s->cap = cap;
}

void js_stream_init(struct js_stream *s, const struct js_stream_ops *ops,
		    void *ctx, size_t max, bool arrays)
{
	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->ctx = ctx;
	s->max = max;
	s->arrays = arrays;
}

void js_stream_release(struct js_stream *s)
{
	free(s->buf);
	s->buf = NULL;
	s->n = s->cap = 0;
}

/* Keeps p[0..n) of the element in progress, up to the bound. */
static int item_put(struct js_stream *s, const char *p, size_t n)
{
	if (!s->in_item || s->item_over)
		return 0;
	if (n > s->max - s->n) {
		s->item_over = true;
		return 0;
	}
	if (s->n + n > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *b;

		while (cap < s->n + n)
			cap *= 2;
		if (cap > s->max)
			cap = s->max;
		if (!(b = realloc(s->buf, cap)))
			return RT_ENOMEM;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->n, p, n);
	s->n += n;
	return 0;
}

static int item_end(struct js_stream *s)
{
	bool over = s->item_over;
	int rc;

	s->in_item = s->item_over = false;
	if (over) {
		s->skipped++;
		rc = s->ops->oversize(s->ctx, s->item_off);
	} else {
		s->items++;
		rc = s->ops->item(s->ctx, s->buf, s->n, s->item_off);
	}
	s->n = 0;
	return rc;
}

/* The bytes of a string body that a root member's key or kind may need:
 * keys we look for are short, and of kind only the end counts. */
static void member_text(struct js_stream *s, const char *p, size_t n)
{
	if (s->member == JS_M_IN_KEY) {
		if (s->keyn + n <= sizeof(s->key))
			memcpy(s->key + s->keyn, p, n);
		s->keyn += n;
	} else if (s->kind_value) {
		size_t keep = sizeof(s->kind);

		if (n >= keep) {
			memcpy(s->kind, p + n - keep, keep);
			s->kindn = keep;
			return;
		}
		if (s->kindn + n > keep) {
			size_t drop = s->kindn + n - keep;

			memmove(s->kind, s->kind + drop, s->kindn - drop);
			s->kindn -= drop;
		}
		memcpy(s->kind + s->kindn, p, n);
		s->kindn += n;
	}
}

static bool key_is(const struct js_stream *s, const char *lit, size_t n)
{
	return s->keyn == n && memcmp(s->key, lit, n) == 0;
}

/* A string closed: a root member's key is read, or its kind. */
static void string_end(struct js_stream *s)
{
	if (s->depth != 1 || s->root != '{')
		return;
	if (s->member == JS_M_IN_KEY) {
		s->member = JS_M_COLON;
	} else if (s->kind_value) {
		s->kind_value = false;
		/* kubectl prints "List"; the API server "EventList" etc. */
		if (!s->listed)
			s->not_list = s->kindn < 4 ||
				      memcmp(s->kind + s->kindn - 4, "List", 4);
	}
}

/* Inside a string at p[i]: consumes a run of its body, or one special
 * byte. Returns the bytes consumed or a negative error. */
static long string_step(struct js_stream *s, const char *p, size_t i,
			size_t n)
{
	size_t j;
	int rc;

	if (s->esc) {
		s->esc = false;
		if (s->depth == 1 && s->member == JS_M_IN_KEY)
			s->keyn = sizeof(s->key) + 1;   /* escaped: not ours */
		return (rc = item_put(s, p + i, 1)) ? rc : 1;
	}
	j = js_find_special(p, i, n);
	if (j > i) {
		if (s->depth == 1)
			member_text(s, p + i, j - i);
		return (rc = item_put(s, p + i, j - i)) ? rc : (long)(j - i);
	}
	if (p[i] == '\\')
		s->esc = true;
	else {
		s->str = false;
		string_end(s);
	}
	return (rc = item_put(s, p + i, 1)) ? rc : 1;
}

static void string_open(struct js_stream *s)
{
	s->str = true;
	if (s->depth != 1 || s->root != '{')
		return;
	if (s->member == JS_M_KEY) {
		s->member = JS_M_IN_KEY;
		s->keyn = 0;
	} else if (s->member == JS_M_VALUE) {
		s->member = JS_M_IN_VALUE;
		s->kind_value = key_is(s, "kind", 4);
		s->kindn = 0;
	}
}

static int open_bracket(struct js_stream *s, char c, uint64_t at)
{
	if (!s->root) {
		s->root = c;
		s->depth = 1;
		if (c == '[' && s->arrays) {
			s->list_depth = 1;
			s->listed = true;
		}
		return 0;
	}
	if (s->depth == 1 && s->root == '{' && s->member == JS_M_VALUE) {
		s->member = JS_M_IN_VALUE;
		if (c == '[' && key_is(s, "items", 5) && !s->not_list &&
		    !s->list_depth) {
			s->list_depth = 2;
			s->listed = true;
		}
	} else if (s->list_depth && s->depth == s->list_depth && !s->in_item) {
		s->in_item = true;
		s->item_off = at;
		s->n = 0;
	}
	s->depth++;
	return item_put(s, &c, 1);
}

static int close_bracket(struct js_stream *s, char c)
{
	int rc;

	if ((rc = item_put(s, &c, 1)))
		return rc;
	s->depth--;
	if (s->in_item && s->depth == s->list_depth)
		return item_end(s);
	if (s->list_depth && s->depth < s->list_depth)
		s->list_depth = 0;
	if (s->depth <= 0)
		s->done = true;
	return 0;
}

/* One byte outside strings. */
static int structure(struct js_stream *s, char c, uint64_t at)
{
	bool member = s->depth == 1 && s->root == '{';

	if ((unsigned char)c <= ' ')    /* blanks, and control bytes as */
		return 0;               /* cJSON takes them: between tokens */
	switch (c) {
	case '"':
		string_open(s);
		return item_put(s, &c, 1);
	case '{': case '[':
		return open_bracket(s, c, at);
	case '}': case ']':
		if (!s->root)
			break;
		return close_bracket(s, c);
	case ':':
		if (member && s->member == JS_M_COLON)
			s->member = JS_M_VALUE;
		return item_put(s, &c, 1);
	case ',':
		if (member)
			s->member = JS_M_KEY;
		return item_put(s, &c, 1);
	default:
		if (member && s->member == JS_M_VALUE)
			s->member = JS_M_IN_VALUE;
		if (s->root)
			return item_put(s, &c, 1);
	}
	s->done = true;         /* not a document: nothing to read */
	return 0;
}

int js_stream_feed(struct js_stream *s, const char *p, size_t n,
		   uint64_t off, size_t *used)
{
	size_t i = 0;
	int rc = 0;

	while (i < n && !s->done && rc == 0) {
		if (s->str) {
			long k = string_step(s, p, i, n);

			if (k < 0)
				rc = (int)k;
			else
				i += (size_t)k;
			continue;
		}
		rc = structure(s, p[i], off + i);
		i++;
	}
	*used = i;
	return rc;
}
