/*
 * helm_manifest.c: the objects a release's rendered manifest creates, read
 * cheaply from the YAML Helm stores (documents separated by `---` lines,
 * `kind:` at column 0, `name:`/`namespace:` one level under `metadata:`).
 * The correlator maps them to the release (workloads by name, other
 * objects by kind and name), so a chart whose workloads carry no release
 * label and no release-name prefix (a Deployment `router` of release
 * `fission`) still finds its release, and so do its Services, claims...
 * Not a YAML parser: flow style and anchors are not read, and are rare in
 * rendered manifests.
 */
#include <string.h>

#include "decode.h"

/* At most this many objects and bytes of "Kind/ns/name\n" lines: a chart
 * with thousands of objects keeps its first ones. */
#define MANIFEST_OBJECTS_MAX 1024
#define MANIFEST_TEXT_MAX ((size_t)64 << 10)

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == ':';
}

/* The value of "key: value" when line [p, e) is exactly that at indent
 * ind (quotes and a trailing comment stripped); n = 0 when it is not. */
static const char *line_value(const char *p, const char *e, int ind,
			      const char *key, size_t *n)
{
	size_t kl = strlen(key);
	const char *v, *ve;

	*n = 0;
	for (int i = 0; i < ind; i++, p++)
		if (p >= e || *p != ' ')
			return NULL;
	if ((size_t)(e - p) <= kl || memcmp(p, key, kl) != 0 || p[kl] != ':')
		return NULL;
	for (v = p + kl + 1; v < e && *v == ' '; v++)
		;
	if (v < e && (*v == '"' || *v == '\''))
		v++;
	for (ve = v; ve < e && is_name_char(*ve); ve++)
		;
	*n = (size_t)(ve - v);
	return v;
}

struct obj {
	const char *kind, *name, *ns;
	size_t kn, nn, sn;
	int meta_ind;            /* indent of metadata's members, 0 = outside */
};

static void put(char *buf, size_t *len, const struct obj *o, unsigned *count)
{
	size_t need = o->kn + o->sn + o->nn + 3;

	if (!o->kn || !o->nn || *count >= MANIFEST_OBJECTS_MAX ||
	    *len + need > MANIFEST_TEXT_MAX)
		return;
	memcpy(buf + *len, o->kind, o->kn);
	*len += o->kn;
	buf[(*len)++] = '/';
	if (o->sn)
		memcpy(buf + *len, o->ns, o->sn);
	*len += o->sn;
	buf[(*len)++] = '/';
	memcpy(buf + *len, o->name, o->nn);
	*len += o->nn;
	buf[(*len)++] = '\n';
	(*count)++;
}

/* One line of a document: its kind, metadata's name and namespace. */
static void read_line(struct obj *o, const char *p, const char *e)
{
	const char *v;
	size_t n;
	int ind = 0;

	while (p + ind < e && p[ind] == ' ')
		ind++;
	if (p + ind == e || p[ind] == '#')
		return;
	if (ind == 0) {
		o->meta_ind = 0;
		if ((v = line_value(p, e, 0, "kind", &n)) && n) {
			o->kind = v;
			o->kn = n;
		} else if (e - p >= 9 && !memcmp(p, "metadata:", 9)) {
			o->meta_ind = -1;       /* its first member sets it */
		}
		return;
	}
	if (o->meta_ind == -1)
		o->meta_ind = ind;
	if (ind != o->meta_ind)
		return;
	if ((v = line_value(p, e, ind, "name", &n)) && n && !o->nn) {
		o->name = v;
		o->nn = n;
	} else if ((v = line_value(p, e, ind, "namespace", &n)) && n) {
		o->ns = v;
		o->sn = n;
	}
}

struct rt_str dec_manifest_objects(struct rt_arena *a, const char *m)
{
	const char *end = m + strlen(m), *line = m;
	struct obj o = { 0 };
	unsigned count = 0;
	size_t len = 0;
	char *buf = NULL;

	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));

		if (!eol)
			eol = end;
		if (eol - line >= 3 && !memcmp(line, "---", 3)) {
			if (!buf && o.kn && o.nn &&
			    !(buf = rt_arena_alloc(a, MANIFEST_TEXT_MAX)))
				return RT_STR_NULL;
			if (buf)
				put(buf, &len, &o, &count);
			memset(&o, 0, sizeof(o));
		} else {
			read_line(&o, line, eol);
		}
		line = eol + 1;
	}
	if (!buf && o.kn && o.nn && !(buf = rt_arena_alloc(a, MANIFEST_TEXT_MAX)))
		return RT_STR_NULL;
	if (buf)
		put(buf, &len, &o, &count);
	return len ? rt_str_make(buf, len) : RT_STR_NULL;
}
