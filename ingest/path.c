/*
 * path.c: what a kubelet log path says -- pod, namespace and container,
 * from /var/log/pods/NS_POD_UID/CONTAINER/N.log or
 * /var/log/containers/POD_NS_CONTAINER-ID.log. A pure function of the
 * path, at the bottom of ingest/: the contexts (ctx.c) and the log
 * decoders (dec_logs.c) both ask it.
 */
#include <string.h>

#include "frame.h"

/* Splits s at its first two '_' into a, b and the rest. */
static bool split3(const char *s, size_t n, struct rt_str *a, struct rt_str *b,
		   struct rt_str *rest)
{
	const char *u1 = memchr(s, '_', n), *u2;

	if (!u1 || u1 == s)
		return false;
	u2 = memchr(u1 + 1, '_', n - (size_t)(u1 + 1 - s));
	if (!u2 || u2 == u1 + 1 || u2 + 1 == s + n)
		return false;
	*a = rt_str_make(s, (size_t)(u1 - s));
	*b = rt_str_make(u1 + 1, (size_t)(u2 - u1 - 1));
	*rest = rt_str_make(u2 + 1, n - (size_t)(u2 + 1 - s));
	return true;
}

static bool all_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

static bool all_digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return n > 0;
}

/* Path component that ends just before end (end points at a '/'). */
static struct rt_str dir_before(const char *path, const char *end)
{
	const char *s = end;

	while (s > path && s[-1] != '/')
		s--;
	return rt_str_make(s, (size_t)(end - s));
}

/* /var/log/pods/<ns>_<pod>_<uid>/<container>/<N>.log[.<rotation>] */
static bool pods_path(const char *path, const char *base, size_t bn,
		      struct rt_str *pod, struct rt_str *ns, struct rt_str *ctr)
{
	const char *dot = memchr(base, '.', bn);
	struct rt_str c, d, uid;

	if (!dot || !all_digits(base, (size_t)(dot - base)) ||
	    (size_t)(base + bn - dot) < 4 || memcmp(dot, ".log", 4) != 0 ||
	    (dot + 4 != base + bn && dot[4] != '.') || base - path < 4)
		return false;
	c = dir_before(path, base - 1);
	if (!c.n || c.p - path < 2)
		return false;
	d = dir_before(path, c.p - 1);
	if (!split3(d.p, d.n, ns, pod, &uid))
		return false;
	*ctr = c;
	return true;
}

/*
 * /var/log/containers/<pod>_<ns>_<container>-<id>.log. The kubelet cuts
 * the name to 251 bytes, so the id may be short: accept it when it is 64
 * hex digits, when the name was cut, or in a directory named containers.
 */
static bool containers_path(const char *path, const char *base, size_t bn,
			    struct rt_str *pod, struct rt_str *ns,
			    struct rt_str *ctr)
{
	struct rt_str rest, dir;
	const char *dash;
	size_t stem = bn - 4, idn;

	if (bn < 5 || memcmp(base + stem, ".log", 4) != 0 ||
	    !split3(base, stem, pod, ns, &rest))
		return false;
	dash = memrchr(rest.p, '-', rest.n);
	if (!dash || dash == rest.p)
		return false;
	idn = rest.n - (size_t)(dash + 1 - rest.p);
	if (!all_hex(dash + 1, idn))
		return false;
	dir = base > path ? dir_before(path, base - 1) : RT_STR_NULL;
	if (idn != 64 && stem != 251 && !rt_str_eq(dir, "containers"))
		return false;
	*ctr = rt_str_make(rest.p, (size_t)(dash - rest.p));
	return true;
}

bool ing_path_parse(const char *path, size_t n, struct rt_str *pod,
		    struct rt_str *ns, struct rt_str *container)
{
	const char *base = path;

	if (!path)
		return false;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '/')
			base = path + i + 1;
	if (pods_path(path, base, n - (size_t)(base - path), pod, ns, container))
		return true;
	return containers_path(path, base, n - (size_t)(base - path), pod, ns,
			       container);
}
