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
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "decode.h"

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
		if (!(grown = realloc(out, cap)))
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
			if (!(next = malloc(len + 1)))
				break;
			memcpy(next, p, len);
			next[len] = '\0';
			free(buf);
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
