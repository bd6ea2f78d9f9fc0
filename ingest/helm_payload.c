/*
 * helm_payload.c: unwraps the `release` payload of a Helm storage object
 * down to the release JSON text.
 *
 * Helm stores base64(gzip(json)); the API server adds one more base64 for a
 * Secret's data, and very old records are not gzipped at all. Rather than
 * trust the object kind, peel layers until JSON shows up: base64 while the
 * text is not JSON, gunzip when the gzip magic appears. Every step is
 * bounded, and any malformed layer ends the attempt with an error so the
 * caller falls back to the storage labels.
 *
 * The JSON is then read without a tree of all of it: 64 KB of gzip can
 * inflate to 63 MB of "0,0,0,...", which cJSON made a 2.65 GB tree of.
 * A scan steps over the values the decoder never reads (chart templates,
 * values, config) and only the members it does are parsed (json_scan.h),
 * each under a budget that counts what their tree may cost.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "decode.h"
#include "frame.h"
#include "json_scan.h"

#define PAYLOAD_MAX_LAYERS 4

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/*
 * Standard or URL alphabet, padding optional, whitespace ignored (kubectl
 * never wraps, but a hand-made fixture might). Returns a malloc'd buffer or
 * NULL on a character outside the alphabet or a dangling sextet.
 */
static unsigned char *b64_decode(const unsigned char *s, size_t n,
				 size_t *outlen)
{
	unsigned char *out = malloc(n / 4 * 3 + 4);
	unsigned acc = 0;
	int bits = 0, v;
	size_t o = 0, i;

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '=')
			break;
		if (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')
			continue;
		if ((v = b64_value(s[i])) < 0)
			goto bad;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	for (; i < n; i++)   /* only padding and whitespace may follow '=' */
		if (s[i] != '=' && s[i] != '\n' && s[i] != '\r' && s[i] != ' ')
			goto bad;
	if (bits >= 6)
		goto bad;
	*outlen = o;
	return out;
bad:
	free(out);
	return NULL;
}

/* Returns a malloc'd buffer or NULL (bad stream, or over the bound). */
static unsigned char *gunzip(const unsigned char *s, size_t n,
			     size_t *outlen)
{
	z_stream zs;
	size_t cap = n * 4 + 4096, used = 0;
	unsigned char *out = NULL, *grown;
	int rc;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return NULL;
	zs.next_in = (unsigned char *)s;
	zs.avail_in = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
	do {
		if (cap > DEC_HELM_PAYLOAD_MAX + 1)
			cap = DEC_HELM_PAYLOAD_MAX + 1;
		if (!(grown = realloc(out, cap + 1)))   /* + the NUL */
			goto bad;
		out = grown;
		zs.next_out = out + used;
		zs.avail_out = (uInt)(cap - used);
		rc = inflate(&zs, Z_NO_FLUSH);
		used = cap - zs.avail_out;
		if (rc == Z_STREAM_END)
			break;
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			goto bad;
		if (rc == Z_BUF_ERROR && zs.avail_out != 0)
			goto bad;   /* truncated input: no progress possible */
		if (used > DEC_HELM_PAYLOAD_MAX)
			goto bad;
		cap *= 2;
	} while (1);
	if (used > DEC_HELM_PAYLOAD_MAX)
		goto bad;
	inflateEnd(&zs);
	*outlen = used;
	return out;
bad:
	inflateEnd(&zs);
	free(out);
	return NULL;
}

static const unsigned char *skip_ws(const unsigned char *p, size_t *n)
{
	while (*n && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
		p++;
		(*n)--;
	}
	return p;
}

int dec_helm_payload_unwrap(const char *s, size_t n, char **json,
			    size_t *jsonlen)
{
	unsigned char *buf = NULL, *next;
	const unsigned char *p = (const unsigned char *)s;
	size_t len = n, nextlen = 0;

	*json = NULL;
	*jsonlen = 0;
	for (int layer = 0; layer < PAYLOAD_MAX_LAYERS; layer++) {
		p = skip_ws(p, &len);
		if (len == 0)
			break;
		if (*p == '{') {
			/* A decoded layer has room for the NUL (b64_decode,
			 * gunzip): no second copy of up to 64 MiB. */
			if (buf)
				next = memmove(buf, p, len);
			else if (!(next = malloc(len + 1)))
				break;
			else
				memcpy(next, p, len);
			next[len] = '\0';
			*json = (char *)next;
			*jsonlen = len;
			return 0;
		}
		if (len >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 0x08)
			next = gunzip(p, len, &nextlen);
		else
			next = b64_decode(p, len, &nextlen);
		if (!next)
			break;
		free(buf);
		buf = next;
		p = buf;
		len = nextlen;
	}
	free(buf);
	return RT_EPARSE;
}

/* ---- picking the release's members ---------------------------------- */

/* A value's place in the text, and what its tree may cost. */
struct span {
	const char *p;
	size_t n;
	size_t cost;
};

/* cJSON's own nesting limit: deeper text would not parse anyway. */
#define SCAN_MAX_DEPTH 1000
/* Bytes a cJSON item may take beyond its text: the 64-byte node, a key
 * and a value string, each with malloc's overhead. An upper bound per
 * ',', ':', '[' or '{', so "0,0,0" costs 64 bytes a byte. */
#define SCAN_ITEM_COST 128

static size_t skip_blank(const char *p, size_t i, size_t n)
{
	while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' ||
			 p[i] == '\t'))
		i++;
	return i;
}

/* The end of the string that opens at p[i] (a '"'), or 0. */
static size_t string_end(const char *p, size_t i, size_t n)
{
	for (i++; (i = js_find_special(p, i, n)) < n; i += 2)
		if (p[i] == '"')
			return i + 1;
	return 0;
}

/*
 * The end of the value at p[i], or 0 when brackets do not match. Scalars
 * end at a delimiter; they are checked when a picked value is parsed.
 * *items counts what a tree of it would hold.
 */
static size_t value_end(const char *p, size_t i, size_t n, size_t *items)
{
	unsigned char open[SCAN_MAX_DEPTH / 8 + 1];   /* 1 bit: '{' */
	size_t depth = 0;

	*items = 1;
	if (i < n && p[i] != '"' && p[i] != '{' && p[i] != '[') {
		while (i < n && !strchr(",:]} \n\r\t", p[i]))
			i++;
		return i;
	}
	do {
		if (i >= n)
			return 0;
		switch (p[i]) {
		case '"':
			if (!(i = string_end(p, i, n)))
				return 0;
			continue;
		case '{':
		case '[':
			if (depth == SCAN_MAX_DEPTH)
				return 0;
			open[depth / 8] = (unsigned char)(p[i] == '{' ?
				open[depth / 8] | 1u << depth % 8 :
				open[depth / 8] & ~(1u << depth % 8));
			depth++;
			(*items)++;
			break;
		case '}':
		case ']':
			if (!depth || ((open[(depth - 1) / 8] >>
					(depth - 1) % 8 & 1) != (p[i] == '}')))
				return 0;
			depth--;
			break;
		case ',':
		case ':':
			(*items)++;
			break;
		default:
			break;
		}
		i++;
	} while (depth);
	return i;
}

/*
 * The members named keys[] of the object at p[0..n), the first of each
 * name as cJSON_GetObjectItemCaseSensitive finds it (raw names compared:
 * an escaped name is none of ours). 0, or -1 when p is not an object.
 */
static int members(const char *p, size_t n, const char *const *keys,
		   size_t nkeys, struct span *out)
{
	size_t i = skip_blank(p, 0, n), ks, ke, ve, items;

	memset(out, 0, nkeys * sizeof(*out));
	if (i >= n || p[i] != '{')
		return -1;
	i = skip_blank(p, i + 1, n);
	if (i < n && p[i] == '}')
		return skip_blank(p, i + 1, n) == n ? 0 : -1;
	for (;;) {
		ks = i + 1;
		if (i >= n || p[i] != '"' || !(ke = string_end(p, i, n)))
			return -1;
		i = skip_blank(p, ke, n);
		if (i >= n || p[i] != ':')
			return -1;
		i = skip_blank(p, i + 1, n);
		if (!(ve = value_end(p, i, n, &items)))
			return -1;
		for (size_t k = 0; k < nkeys; k++)
			if (!out[k].p && strlen(keys[k]) == ke - 1 - ks &&
			    !memcmp(keys[k], p + ks, ke - 1 - ks)) {
				out[k].p = p + i;
				out[k].n = ve - i;
				out[k].cost = ve - i + items * SCAN_ITEM_COST;
			}
		i = skip_blank(p, ve, n);
		if (i < n && p[i] == ',') {
			i = skip_blank(p, i + 1, n);
			continue;
		}
		if (i < n && p[i] == '}')
			return skip_blank(p, i + 1, n) == n ? 0 : -1;
		return -1;
	}
}

/* The picked members as the text of one object, which js_parse reads. */
struct pick_out {
	char *p;
	size_t n;
	struct js_doc check;    /* each member parsed alone first */
};

/* Appends "key":sp to out when sp's tree fits in *budget and it parses
 * alone, as cJSON_ParseWithLength would (a value, whatever follows it):
 * a member that does not is left out, not the release. */
static void pick(struct pick_out *out, const char *key, const struct span *sp,
		 size_t *budget, bool *dropped)
{
	size_t end;

	if (!sp->p)
		return;
	if (sp->cost > *budget) {
		*dropped = true;
		return;
	}
	if (js_parse_lead(&out->check, sp->p, sp->n, &end))
		return;
	*budget -= sp->cost;
	out->n += (size_t)sprintf(out->p + out->n, "\"%s\":", key);
	memcpy(out->p + out->n, sp->p, end);
	out->n += end;
	out->p[out->n++] = ',';
}

/* chart.metadata alone: templates, values and files stay text. */
static void pick_chart(struct pick_out *out, const struct span *chart,
		       size_t *budget, bool *dropped)
{
	static const char *const keys[] = { "metadata" };
	struct span meta;

	if (!chart->p || members(chart->p, chart->n, keys, 1, &meta))
		return;
	out->n += (size_t)sprintf(out->p + out->n, "\"chart\":{");
	pick(out, "metadata", &meta, budget, dropped);
	if (out->p[out->n - 1] == ',')
		out->n--;
	out->p[out->n++] = '}';
	out->p[out->n++] = ',';
}

/* The manifest is most of a release: decoded where it lies (over its
 * opening quote) and referenced, not copied. The text stays json's. */
static const char *pick_text(const struct span *sp)
{
	char *at = (char *)sp->p;

	if (!sp->p || sp->n < 2 || at[0] != '"')
		return NULL;
	ing_json_unescape_to(at, at + 1, sp->n - 2);
	return at;
}

/* What the object's text may take: the picked spans, their names and
 * punctuation. */
static size_t pick_room(const struct span *sp, size_t n)
{
	size_t room = 64;

	for (size_t k = 0; k < n; k++)
		room += sp[k].n + 32;
	return room;
}

void dec_helm_release_free(struct dec_helm_release *r)
{
	js_doc_release(&r->doc);
	free(r->text);
	r->text = NULL;
	r->manifest = NULL;
}

int dec_helm_payload_release(char *json, size_t n, struct dec_helm_release *r)
{
	/* What release_fill reads, cheapest first: when the budget runs
	 * out, hooks go before the names and times do. The manifest, last,
	 * is decoded in place and spends nothing. */
	static const char *const keys[] = {
		"name", "namespace", "version", "info", "chart", "hooks",
		"manifest",
	};
	enum { K_CHART = 4, K_MANIFEST = 6,
	       K_COUNT = sizeof(keys) / sizeof(keys[0]) };
	struct span sp[K_COUNT];
	size_t budget = DEC_HELM_TREE_MAX;
	struct pick_out out = { 0 };
	int rc;

	*r = (struct dec_helm_release){ 0 };
	if (members(json, n, keys, K_COUNT, sp))
		return RT_EPARSE;
	if (!(out.p = malloc(pick_room(sp, K_MANIFEST))))
		return RT_ENOMEM;
	out.p[out.n++] = '{';
	for (size_t k = 0; k < K_MANIFEST; k++) {
		if (k == K_CHART)
			pick_chart(&out, &sp[k], &budget, &r->dropped);
		else
			pick(&out, keys[k], &sp[k], &budget, &r->dropped);
	}
	js_doc_release(&out.check);
	if (out.p[out.n - 1] == ',')
		out.n--;
	out.p[out.n++] = '}';
	r->text = out.p;
	r->manifest = pick_text(&sp[K_MANIFEST]);
	if ((rc = js_parse(&r->doc, out.p, out.n)))
		dec_helm_release_free(r);
	return rc;
}
