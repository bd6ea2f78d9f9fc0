/*
 * helm_summary.c: what `revtrail show` compares between two revisions of
 * a release, read from the rendered manifest Helm stores: per object a
 * line "Kind/name\tobject\tpresent", and per workload the fields that
 * break pods when they change -- the pod template's images, envFrom and
 * env references, volume mounts and subPaths, probes, resources, and the
 * ConfigMap/Secret/claim names its volumes name -- plus the Helm hook
 * annotations of any object, one "Kind/name\tpath\tvalue" line each:
 *
 *   Deployment/checkout-api	volumes[config].configMap.name	checkout-config
 *   Deployment/checkout-api	containers[web].image	shop/checkout:2.7.3
 *
 * List items are keyed by their name when the item starts with one, else
 * by their index. Like helm_manifest.c it reads indentation, not YAML:
 * flow style and anchors are not followed. One pass over the manifest;
 * the text is bounded (SUMMARY_MAX, values cut at VALUE_MAX), so a
 * 1.4 MB release costs one scan and 64 KB at most.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"

#define SUMMARY_MAX ((size_t)64 << 10)
#define DOC_MAX ((size_t)16 << 10)
#define VALUE_MAX 160
#define DEPTH_MAX 24
#define KEY_MAX 96

struct level {
	int indent;
	bool item;               /* a list item ("[name]"), not a key */
	int items;               /* a key's list items so far */
	char key[KEY_MAX];
};

struct doc {
	char kind[64], name[256];
	char lines[DOC_MAX];     /* "path\tvalue\n" until the name is known */
	size_t len;
	struct level st[DEPTH_MAX];
	int depth;
	int block;               /* inside a block scalar deeper than this */
};

/* The part of a path that matters, or NULL: under a pod spec (after its
 * last "spec."), the fields listed in the file comment; the hook
 * annotations of the object's own metadata. */
static const char *kept(const char *path)
{
	static const char *const cfields[] = {
		"image", "envFrom", "volumeMounts", "livenessProbe",
		"readinessProbe", "startupProbe", "resources",
	};
	const char *p = path, *s, *f;

	if (!strncmp(path, "metadata.annotations.helm.sh/hook", 33))
		return path + 21;
	for (s = strstr(path, "spec."); s; s = strstr(s + 1, "spec."))
		p = s + 5;
	if (p == path)
		return NULL;
	if (!strncmp(p, "volumes[", 8))
		return strstr(p, ".configMap.") || strstr(p, ".secret.") ||
		       strstr(p, ".persistentVolumeClaim.") ||
		       strstr(p, ".projected.") ? p : NULL;
	if (strncmp(p, "containers[", 11) && strncmp(p, "initContainers[", 15))
		return NULL;
	if (!(f = strstr(p, "].")))
		return NULL;
	f += 2;
	if (!strncmp(f, "env[", 4))
		return strstr(f, ".valueFrom.") ? p : NULL;
	for (size_t i = 0; i < sizeof(cfields) / sizeof(cfields[0]); i++) {
		size_t n = strlen(cfields[i]);

		if (!strncmp(f, cfields[i], n) && (f[n] == '.' || f[n] == '[' ||
						   !f[n]))
			return p;
	}
	return NULL;
}

static void doc_add(struct doc *d, const char *path, const char *v, size_t n)
{
	const char *k = kept(path);
	size_t kl = k ? strlen(k) : 0;

	if (n > VALUE_MAX)
		n = VALUE_MAX;
	if (!k || d->len + kl + n + 2 > DOC_MAX)
		return;
	memcpy(d->lines + d->len, k, kl);
	d->len += kl;
	d->lines[d->len++] = '\t';
	for (size_t i = 0; i < n; i++)
		d->lines[d->len++] = v[i] == '\t' ? ' ' : v[i];
	d->lines[d->len++] = '\n';
}

/* The path of the levels, then key. */
static void path_of(const struct doc *d, const char *key, char *buf,
		    size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < d->depth && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					d->st[i].item || !len ? "" : ".",
					d->st[i].key);
	if (key && len < size)
		snprintf(buf + len, size - len, "%s%s", len ? "." : "", key);
}

/* [p, e) without surrounding blanks and quotes. */
static void trim(const char **p, const char **e)
{
	while (*p < *e && (**p == ' ' || **p == '\t'))
		(*p)++;
	while (*e > *p && ((*e)[-1] == ' ' || (*e)[-1] == '\t' ||
			   (*e)[-1] == '\r'))
		(*e)--;
	if (*e - *p >= 2 && (**p == '"' || **p == '\'') && (*e)[-1] == **p) {
		(*p)++;
		(*e)--;
	}
}

/* "key: value" at [p, e): the key (quotes stripped) into key, the value's
 * bounds; false when the line is no mapping entry. */
static bool split(const char *p, const char *e, char *key, const char **v,
		  const char **ve)
{
	const char *c = p;

	while (c < e && !(*c == ':' && (c + 1 == e || c[1] == ' ')))
		c++;
	if (c == e || c == p)
		return false;
	{
		const char *ks = p, *ke = c;

		trim(&ks, &ke);
		snprintf(key, KEY_MAX, "%.*s", (int)(ke - ks), ks);
	}
	*v = c + 1;
	*ve = e;
	trim(v, ve);
	if (*ve > *v && **v == '#')
		*ve = *v;
	return true;
}

static void pop_to(struct doc *d, int indent, bool dash)
{
	while (d->depth > 0) {
		const struct level *l = &d->st[d->depth - 1];

		if (l->indent > indent || (l->indent == indent &&
					    (!dash || l->item)))
			d->depth--;
		else
			break;
	}
}

static void push(struct doc *d, int indent, bool item, const char *key)
{
	if (d->depth == DEPTH_MAX)
		return;
	{
	d->st[d->depth].indent = indent;
	d->st[d->depth].item = item;
	d->st[d->depth].items = 0;
	size_t n = strnlen(key, KEY_MAX - 1);

	memcpy(d->st[d->depth].key, key, n);
	d->st[d->depth].key[n] = '\0';
	}
	d->depth++;
}

/* A mapping entry at indent: a level when its value is nested, a line
 * when it is a scalar. */
static void entry(struct doc *d, int indent, const char *p, const char *e)
{
	char key[KEY_MAX], path[512];
	const char *v, *ve;

	if (!split(p, e, key, &v, &ve))
		return;
	if (ve == v) {
		push(d, indent, false, key);
		return;
	}
	if (*v == '|' || *v == '>') {
		d->block = indent;
		return;
	}
	if (d->depth == 0 && !strcmp(key, "kind"))
		snprintf(d->kind, sizeof(d->kind), "%.*s", (int)(ve - v), v);
	if (d->depth == 1 && !strcmp(d->st[0].key, "metadata") &&
	    !strcmp(key, "name") && !d->name[0])
		snprintf(d->name, sizeof(d->name), "%.*s", (int)(ve - v), v);
	path_of(d, key, path, sizeof(path));
	doc_add(d, path, v, (size_t)(ve - v));
}

static void line(struct doc *d, const char *p, const char *e)
{
	int ind = 0;

	while (p + ind < e && p[ind] == ' ')
		ind++;
	if (p + ind == e || p[ind] == '#' || p[ind] == '\r')
		return;
	if (d->block >= 0) {
		if (ind > d->block)
			return;
		d->block = -1;
	}
	p += ind;
	if (*p == '-' && (p + 1 == e || p[1] == ' ')) {
		char key[KEY_MAX] = "", label[KEY_MAX + 24];
		const char *v, *ve;
		struct level *parent;

		pop_to(d, ind, true);
		parent = d->depth ? &d->st[d->depth - 1] : NULL;
		if (split(p + 2 < e ? p + 2 : e, e, key, &v, &ve) &&
		    !strcmp(key, "name") && ve > v)
			snprintf(label, sizeof(label), "[%.*s]",
				 (int)(ve - v < 64 ? ve - v : 64), v);
		else
			snprintf(label, sizeof(label), "[%d]",
				 parent ? parent->items : 0);
		if (parent)
			parent->items++;
		push(d, ind, true, label);
		if (p + 2 < e)
			entry(d, ind + 2, p + 2, e);
		return;
	}
	pop_to(d, ind, false);
	entry(d, ind, p, e);
}

/* The document's lines with its "Kind/name\t" before each. */
static void flush(struct doc *d, char *out, size_t *len)
{
	char head[330];
	size_t hn;

	if (!d->kind[0] || !d->name[0])
		goto reset;
	hn = (size_t)snprintf(head, sizeof(head), "%s/%s\t", d->kind,
			      d->name);
	if (hn >= sizeof(head) || *len + hn + 15 > SUMMARY_MAX)
		goto reset;
	memcpy(out + *len, head, hn);
	memcpy(out + *len + hn, "object\tpresent\n", 15);
	*len += hn + 15;
	for (const char *p = d->lines, *e = d->lines + d->len; p < e;) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t n = (size_t)(nl - p) + 1;

		if (*len + hn + n > SUMMARY_MAX)
			break;
		memcpy(out + *len, head, hn);
		memcpy(out + *len + hn, p, n);
		*len += hn + n;
		p += n;
	}
reset:
	memset(d, 0, offsetof(struct doc, lines));
	d->len = 0;
	d->depth = 0;
	d->block = -1;
}

struct rt_str dec_manifest_summary(struct rt_arena *a, const char *m)
{
	static __thread struct doc d;
	const char *end = m + strlen(m), *p = m;
	char *out = rt_arena_alloc(a, SUMMARY_MAX);
	size_t len = 0;

	if (!out)
		return RT_STR_NULL;
	memset(&d, 0, offsetof(struct doc, lines));
	d.len = 0;
	d.depth = 0;
	d.block = -1;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		if (eol - p >= 3 && !memcmp(p, "---", 3))
			flush(&d, out, &len);
		else
			line(&d, p, eol);
		p = eol + 1;
	}
	flush(&d, out, &len);
	return len ? rt_str_make(out, len) : RT_STR_NULL;
}
