/*
 * parse.c: the rule pack parser (format in docs/rules.md). Line based:
 * a `rule ID` or `diagnosis ID` line in column 0 opens a block, indented
 * `keyword value` lines fill it, `#` lines are comments. The first problem
 * stops the pack with "file:line: problem"; a pack that fails adds nothing,
 * so the rules loaded before it stay usable.
 *
 * Patterns are compiled here, not in rules_compile, so a regex error is
 * reported at the line of the pattern that caused it.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/rt_kit.h"
#include "rules_int.h"

#define MAX_RULE_TAGS RULES_MAX_TAGS
#define ECHO_MAX 48     /* bytes of user text quoted in an error */

struct strvec {
	const char **v;
	size_t n, cap;
};

struct anygroup {
	size_t start, n;        /* range in build.anyflat */
};

/* The block being parsed; committed to struct rules at its end. */
struct build {
	enum { BLOCK_NONE, BLOCK_RULE, BLOCK_DIAG } kind;
	int line;
	const char *id;
	struct rules_rule rule;
	struct rules_diagnosis diag;
	uint32_t tags[MAX_RULE_TAGS];
	size_t ntags;
	bool has_severity, has_field, has_priority, has_opened, has_followed;
	bool has_payload, has_within;
	struct strvec lits, unless, explain, remedy, all, none, status, anyflat;
	struct rules_text *ex, *ce;
	size_t nex, capex, nce, capce;
	struct anygroup *any;
	size_t nany, capany;
};

struct parser {
	struct rules *r;
	const char *file;
	int line;
	char *err;
	size_t errlen;
	struct build b;
};

typedef int (*kw_fn)(struct parser *ps, const char *v, size_t n);

struct keyword {
	const char *name;
	kw_fn fn;
};

/* Copies user text into an error message: bounded, control bytes as '?'. */
static const char *echo(char *buf, size_t size, const char *s, size_t n)
{
	size_t k, max = n < ECHO_MAX ? n : ECHO_MAX;

	for (k = 0; k < max && k + 4 < size; k++)
		buf[k] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
	if (max < n && k + 4 < size) {
		memcpy(buf + k, "...", 3);
		k += 3;
	}
	buf[k] = '\0';
	return buf;
}

static int fail_at(struct parser *ps, int line, const char *fmt, ...)
{
	va_list ap;
	int k;

	k = snprintf(ps->err, ps->errlen, "%s:%d: ", ps->file, line);
	if (k >= 0 && (size_t)k < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + k, ps->errlen - k, fmt, ap);
		va_end(ap);
	}
	return RT_EINVAL;
}

#define fail(ps, ...) fail_at((ps), (ps)->line, __VA_ARGS__)

static int oom(struct parser *ps)
{
	fail(ps, "out of memory");
	return RT_ENOMEM;
}

static int vec_push(struct strvec *v, const char *s)
{
	if (RT_GROW(v->v, v->n + 1, v->cap))
		return RT_ENOMEM;
	v->v[v->n++] = s;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '-';
}

static bool valid_id(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (!is_id_char(s[k]))
			return false;
	return true;
}

/* Next token of a list separated by blanks and commas. */
static bool next_token(const char **s, const char *end, const char **tok,
		       size_t *n)
{
	const char *p = *s;

	while (p < end && (is_blank(*p) || *p == ','))
		p++;
	*tok = p;
	while (p < end && !is_blank(*p) && *p != ',')
		p++;
	*n = (size_t)(p - *tok);
	*s = p;
	return *n > 0;
}

static bool tok_is(const char *t, size_t n, const char *word)
{
	return strlen(word) == n && !memcmp(t, word, n);
}

static const char *find_id(const struct rules *r, const char *id,
			   const char **file, int *line)
{
	for (size_t i = 0; i < r->nrules; i++)
		if (!strcmp(r->rules[i].id, id)) {
			*file = r->rules[i].file;
			*line = r->rules[i].line;
			return id;
		}
	for (size_t i = 0; i < r->ndiags; i++)
		if (!strcmp(r->diags[i].id, id)) {
			*file = r->diags[i].file;
			*line = r->diags[i].line;
			return id;
		}
	return NULL;
}

static int tag_index(struct rules *r, const char *t, size_t n, uint32_t *idx)
{
	for (size_t i = 0; i < r->ntags; i++)
		if (strlen(r->tags[i]) == n && !memcmp(r->tags[i], t, n)) {
			*idx = (uint32_t)i;
			return 0;
		}
	if (RT_GROW(r->tags, r->ntags + 1, r->captags))
		return RT_ENOMEM;
	if (!(r->tags[r->ntags] = rules_strndup(r, t, n)))
		return RT_ENOMEM;
	*idx = (uint32_t)r->ntags++;
	return 0;
}

/* Splits a tag list into v (pool strings), checking each name. */
static int tag_list(struct parser *ps, const char *v, size_t n,
		    struct strvec *out)
{
	const char *end = v + n, *t;
	size_t tn;
	char buf[64];

	while (next_token(&v, end, &t, &tn)) {
		const char *s;

		if (!valid_id(t, tn))
			return fail(ps, "bad tag '%s' (use a-z 0-9 _ . -)",
				    echo(buf, sizeof(buf), t, tn));
		if (!(s = rules_strndup(ps->r, t, tn)) || vec_push(out, s))
			return oom(ps);
	}
	return 0;
}

/* ---- rule keywords ---- */

static int kw_tags(struct parser *ps, const char *v, size_t n)
{
	struct build *b = &ps->b;
	struct strvec names = { 0 };
	int rc = tag_list(ps, v, n, &names);

	for (size_t i = 0; !rc && i < names.n; i++) {
		uint32_t idx;
		bool dup = false;

		if (tag_index(ps->r, names.v[i], strlen(names.v[i]), &idx)) {
			rc = oom(ps);
			break;
		}
		for (size_t k = 0; k < b->ntags; k++)
			dup |= b->tags[k] == idx;
		if (dup)
			continue;
		if (b->ntags == MAX_RULE_TAGS)
			rc = fail(ps, "more than %d tags", MAX_RULE_TAGS);
		else
			b->tags[b->ntags++] = idx;
	}
	free(names.v);
	return rc;
}

static int parse_severity(struct parser *ps, const char *v, size_t n,
			  enum rt_severity *out)
{
	char buf[64];
	int s = rt_severity_from_name(v, n);

	if (s < RT_SEV_INFO)
		return fail(ps, "bad severity '%s' (critical, error, warning, "
			    "info)", echo(buf, sizeof(buf), v, n));
	*out = (enum rt_severity)s;
	return 0;
}

static int kw_severity(struct parser *ps, const char *v, size_t n)
{
	struct build *b = &ps->b;

	if (b->has_severity)
		return fail(ps, "duplicate 'severity'");
	b->has_severity = true;
	return parse_severity(ps, v, n, b->kind == BLOCK_RULE ?
			      &b->rule.severity : &b->diag.severity);
}

static int kw_field(struct parser *ps, const char *v, size_t n)
{
	static const char *const names[FIELD_COUNT] = { "message", "reason",
							"raw" };
	struct build *b = &ps->b;
	const char *end = v + n, *t;
	size_t tn;
	char buf[64];

	if (b->has_field)
		return fail(ps, "duplicate 'field'");
	b->has_field = true;
	b->rule.fields = 0;
	while (next_token(&v, end, &t, &tn)) {
		int f = 0;

		while (f < FIELD_COUNT && !tok_is(t, tn, names[f]))
			f++;
		if (f == FIELD_COUNT)
			return fail(ps, "unknown field '%s' (message, reason, "
				    "raw)", echo(buf, sizeof(buf), t, tn));
		if (!b->rule.fields)
			b->rule.first_field = (unsigned)f;
		b->rule.fields |= 1u << f;
	}
	return 0;
}

static int kw_pattern(struct parser *ps, const char *v, size_t n)
{
	struct rules *r = ps->r;
	struct rules_pattern *p;
	char msg[256];
	size_t off = 0;
	pcre2_code *code;

	if (RT_GROW(r->pats, r->npats + 1, r->cappats))
		return oom(ps);
	code = rules_pcre2_compile(r, v, n, &off, msg, sizeof(msg));
	if (!code)
		return fail(ps, "rule %s: pattern does not compile at offset "
			    "%zu: %s", ps->b.id, off, msg);
	p = &r->pats[r->npats++];
	memset(p, 0, sizeof(*p));
	p->code = code;
	p->line = ps->line;
	p->rule = (uint32_t)r->nrules;
	if (!(p->src = rules_strndup(r, v, n)))
		return oom(ps);
	ps->b.rule.npats++;
	return 0;
}

/* The value of a `literal` or `unless` line (what): verbatim, LIT_MIN
 * bytes or more (shorter ones would filter nothing, or exclude much). */
static int literal_value(struct parser *ps, const char *kw, const char *what,
			 const char *v, size_t n, char **out)
{
	char buf[64];

	if (n < LIT_MIN)
		return fail(ps, "%s '%s' is too short %s(%d bytes or more)", kw,
			    echo(buf, sizeof(buf), v, n), what, LIT_MIN);
	if (!(*out = rules_strndup(ps->r, v, n)))
		return oom(ps);
	return 0;
}

static int kw_literal(struct parser *ps, const char *v, size_t n)
{
	char *s = NULL;
	int rc = literal_value(ps, "literal", "for the prefilter ", v,
				   n, &s);

	if (!rc && vec_push(&ps->b.lits, s))
		return oom(ps);
	return rc;
}

/*
 * An unless-literal is compared in any ASCII case, as patterns match by
 * default. Caseless UTF matching also equates KELVIN SIGN with k, LONG S
 * with s and non-ASCII letters with their other case, which a byte
 * compare cannot: such literals are refused rather than half honoured.
 */
static int unless_chars_ok(struct parser *ps, const char *s, size_t n)
{
	char buf[64];

	echo(buf, sizeof(buf), s, n);
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s[k] | 0x20;

		if ((unsigned char)s[k] >= 0x80)
			return fail(ps, "unless '%s': non-ASCII byte (caseless "
				    "matching folds letters beyond ASCII)", buf);
		if (c == 'k' || c == 's')
			return fail(ps, "unless '%s': holds a%s %c, which "
				    "caseless matching also finds as %s (use a "
				    "literal without k or s)", buf,
				    c == 's' ? "n" : "", s[k], c == 'k' ?
				    "KELVIN SIGN" : "LONG S");
	}
	return 0;
}

static int kw_unless(struct parser *ps, const char *v, size_t n)
{
	char *s = NULL;
	int rc;

	if (ps->b.unless.n == RULES_MAX_UNLESS)
		return fail(ps, "more than %d 'unless' lines", RULES_MAX_UNLESS);
	if ((rc = literal_value(ps, "unless", "", v, n, &s)) ||
	    (rc = unless_chars_ok(ps, s, n)))
		return rc;
	for (size_t k = 0; k < n; k++)
		if (s[k] >= 'A' && s[k] <= 'Z')
			s[k] = (char)(s[k] | 0x20);
	return vec_push(&ps->b.unless, s) ? oom(ps) : 0;
}

static int push_text(struct parser *ps, const char *v, size_t n,
		     struct rules_text **arr, size_t *len, size_t *cap)
{
	const char *s = rules_strndup(ps->r, v, n);

	if (!s || RT_GROW(*arr, *len + 1, *cap))
		return oom(ps);
	(*arr)[(*len)++] = (struct rules_text){ s, ps->line };
	return 0;
}

static int kw_example(struct parser *ps, const char *v, size_t n)
{
	return push_text(ps, v, n, &ps->b.ex, &ps->b.nex, &ps->b.capex);
}

static int kw_counter(struct parser *ps, const char *v, size_t n)
{
	return push_text(ps, v, n, &ps->b.ce, &ps->b.nce, &ps->b.capce);
}

static int kw_explain(struct parser *ps, const char *v, size_t n)
{
	const char *s = rules_strndup(ps->r, v, n);

	return !s || vec_push(&ps->b.explain, s) ? oom(ps) : 0;
}

/* ---- diagnosis keywords ---- */

static int kw_title(struct parser *ps, const char *v, size_t n)
{
	if (ps->b.diag.title)
		return fail(ps, "duplicate 'title'");
	if (!(ps->b.diag.title = rules_strndup(ps->r, v, n)))
		return oom(ps);
	return 0;
}

static int kw_priority(struct parser *ps, const char *v, size_t n)
{
	char buf[64], *end;
	long p;

	if (ps->b.has_priority)
		return fail(ps, "duplicate 'priority'");
	ps->b.has_priority = true;
	echo(buf, sizeof(buf), v, n);
	p = strtol(buf, &end, 10);
	if (n > 12 || end == buf || *end || p < -1000000 || p > 1000000)
		return fail(ps, "bad priority '%s' (an integer)", buf);
	ps->b.diag.priority = (int)p;
	return 0;
}

static int kw_all(struct parser *ps, const char *v, size_t n)
{
	return tag_list(ps, v, n, &ps->b.all);
}

static int kw_none(struct parser *ps, const char *v, size_t n)
{
	return tag_list(ps, v, n, &ps->b.none);
}

static int kw_any(struct parser *ps, const char *v, size_t n)
{
	struct build *b = &ps->b;
	size_t start = b->anyflat.n;
	int rc = tag_list(ps, v, n, &b->anyflat);

	if (rc)
		return rc;
	if (RT_GROW(b->any, b->nany + 1, b->capany))
		return oom(ps);
	b->any[b->nany++] = (struct anygroup){ start, b->anyflat.n - start };
	return 0;
}

static int kw_revision(struct parser *ps, const char *v, size_t n)
{
	static const char *const known[] = {
		"unknown", "deployed", "uninstalled", "superseded", "failed",
		"uninstalling", "pending-install", "pending-upgrade",
		"pending-rollback", NULL,
	};
	const char *end = v + n, *t, *s;
	size_t tn;
	char buf[64];

	while (next_token(&v, end, &t, &tn)) {
		int k = 0;

		while (known[k] && !tok_is(t, tn, known[k]))
			k++;
		if (!known[k])
			return fail(ps, "unknown revision status '%s' (deployed,"
				    " failed, superseded, pending-upgrade, "
				    "...)", echo(buf, sizeof(buf), t, tn));
		if (!(s = rules_strndup(ps->r, t, tn)) ||
		    vec_push(&ps->b.status, s))
			return oom(ps);
	}
	return 0;
}

static int kw_opened_by(struct parser *ps, const char *v, size_t n)
{
	char buf[64];

	if (ps->b.has_opened)
		return fail(ps, "duplicate 'opened-by'");
	ps->b.has_opened = true;
	if (tok_is(v, n, "upgrade"))
		ps->b.diag.opened_by = RULES_OPENED_UPGRADE;
	else if (tok_is(v, n, "install"))
		ps->b.diag.opened_by = RULES_OPENED_INSTALL;
	else if (tok_is(v, n, "any"))
		ps->b.diag.opened_by = RULES_OPENED_ANY;
	else
		return fail(ps, "bad opened-by '%s' (upgrade, install, any)",
			    echo(buf, sizeof(buf), v, n));
	return 0;
}

static int kw_followed_by(struct parser *ps, const char *v, size_t n)
{
	char buf[64];

	if (ps->b.has_followed)
		return fail(ps, "duplicate 'followed-by'");
	ps->b.has_followed = true;
	if (!tok_is(v, n, "rollback"))
		return fail(ps, "bad followed-by '%s' (rollback)",
			    echo(buf, sizeof(buf), v, n));
	ps->b.diag.followed_by_rollback = true;
	return 0;
}

/* within DURATION: a number and a unit, s, m, h or d ("24h"), at most
 * a year; the bound of an opened-by upgrade diagnosis. */
static int kw_within(struct parser *ps, const char *v, size_t n)
{
	static const struct { char unit; int64_t ns; } units[] = {
		{ 's', 1000000000LL }, { 'm', 60000000000LL },
		{ 'h', 3600000000000LL }, { 'd', 86400000000000LL },
	};
	char buf[64];
	int64_t num = 0;
	size_t i = 0;

	if (ps->b.has_within)
		return fail(ps, "duplicate 'within'");
	ps->b.has_within = true;
	while (i < n && v[i] >= '0' && v[i] <= '9' && num < 1000000)
		num = num * 10 + (v[i++] - '0');
	for (size_t u = 0; i && i + 1 == n && u < 4; u++)
		if (v[i] == units[u].unit && num > 0 &&
		    num * (units[u].ns / 1000000000LL) <= 366LL * 86400) {
			ps->b.diag.within_ns = num * units[u].ns;
			return 0;
		}
	return fail(ps, "bad within '%s' (a duration such as 24h, 90m, 7d; "
		    "at most a year)", echo(buf, sizeof(buf), v, n));
}

/* What the opening revision's decoded release payload must show, when
 * one was decoded: hook-config, a ConfigMap/Secret hook that Helm deletes
 * before re-creating it. */
static int kw_payload(struct parser *ps, const char *v, size_t n)
{
	char buf[64];

	if (ps->b.has_payload)
		return fail(ps, "duplicate 'payload'");
	ps->b.has_payload = true;
	if (!tok_is(v, n, "hook-config"))
		return fail(ps, "bad payload '%s' (hook-config)",
			    echo(buf, sizeof(buf), v, n));
	ps->b.diag.payload_hook_config = true;
	return 0;
}

/* One "Kind/name-glob" of an object line. */
static bool object_glob_ok(const char *v, size_t n)
{
	const char *slash = memchr(v, '/', n);
	bool ok = slash && slash > v && slash + 1 < v + n;

	for (const char *p = v; ok && p < slash; p++)
		ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		     (p > v && *p >= '0' && *p <= '9');
	for (const char *p = slash ? slash + 1 : v; ok && p < v + n; p++)
		ok = *p != '/';
	return ok;
}

/* "Pod/helm-install-* Job/helm-install-*": any one of the globs. */
static int kw_object(struct parser *ps, const char *v, size_t n)
{
	char buf[64];

	if (ps->b.diag.object_glob)
		return fail(ps, "duplicate 'object'");
	for (size_t i = 0, len; i < n; i += len) {
		while (i < n && is_blank(v[i]))
			i++;
		for (len = 0; i + len < n && !is_blank(v[i + len]); len++)
			;
		if (len && !object_glob_ok(v + i, len))
			return fail(ps, "bad object '%s' (Kind/name-glob, e.g. "
				    "Pod/helm-install-*)",
				    echo(buf, sizeof(buf), v + i, len));
	}
	if (!(ps->b.diag.object_glob = rules_strndup(ps->r, v, n)))
		return oom(ps);
	return 0;
}

static int kw_remedy(struct parser *ps, const char *v, size_t n)
{
	const char *s = rules_strndup(ps->r, v, n);

	return !s || vec_push(&ps->b.remedy, s) ? oom(ps) : 0;
}

static const struct keyword rule_keywords[] = {
	{ "tags", kw_tags }, { "severity", kw_severity },
	{ "field", kw_field }, { "pattern", kw_pattern },
	{ "literal", kw_literal }, { "unless", kw_unless },
	{ "example", kw_example },
	{ "counterexample", kw_counter }, { "explain", kw_explain },
	{ NULL, NULL },
};

static const struct keyword diag_keywords[] = {
	{ "title", kw_title }, { "severity", kw_severity },
	{ "priority", kw_priority }, { "all", kw_all }, { "any", kw_any },
	{ "none", kw_none }, { "revision", kw_revision },
	{ "opened-by", kw_opened_by }, { "followed-by", kw_followed_by },
	{ "object", kw_object }, { "payload", kw_payload },
	{ "within", kw_within },
	{ "remedy", kw_remedy }, { "explain", kw_explain },
	{ NULL, NULL },
};

/* ---- committing a block ---- */

static const char **pool_vec(struct rules *r, const struct strvec *v)
{
	const char **a = rules_alloc(r, (v->n + 1) * sizeof(*a));

	if (a && v->n)
		memcpy(a, v->v, v->n * sizeof(*a));
	return a;
}

static const char *pool_join(struct rules *r, const struct strvec *v,
			     char sep)
{
	size_t len = 0, k = 0;
	char *s;

	for (size_t i = 0; i < v->n; i++)
		len += strlen(v->v[i]) + 1;
	if (!(s = rules_alloc(r, len + 1)))
		return NULL;
	for (size_t i = 0; i < v->n; i++) {
		size_t l = strlen(v->v[i]);

		if (i)
			s[k++] = sep;
		memcpy(s + k, v->v[i], l);
		k += l;
	}
	s[k] = '\0';
	return s;
}

static void *pool_copy(struct rules *r, const void *p, size_t n)
{
	void *q = rules_alloc(r, n ? n : 1);

	if (q && n)
		memcpy(q, p, n);
	return q;
}

static int commit_rule(struct parser *ps)
{
	struct rules *r = ps->r;
	struct build *b = &ps->b;
	struct rules_rule *ru = &b->rule;

	if (!b->ntags)
		return fail_at(ps, b->line, "rule %s: missing 'tags'", b->id);
	if (!ru->npats)
		return fail_at(ps, b->line, "rule %s: missing 'pattern'", b->id);
	if (!b->nex)
		return fail_at(ps, b->line, "rule %s: missing 'example'", b->id);
	if (RT_GROW(r->rules, r->nrules + 1, r->caprules))
		return oom(ps);
	ru->tags = pool_copy(r, b->tags, b->ntags * sizeof(*b->tags));
	ru->ntags = (uint32_t)b->ntags;
	ru->lits = pool_vec(r, &b->lits);
	ru->nlits = (uint32_t)b->lits.n;
	ru->unless = pool_vec(r, &b->unless);
	ru->nunless = (uint32_t)b->unless.n;
	ru->examples = pool_copy(r, b->ex, b->nex * sizeof(*b->ex));
	ru->nexamples = (uint32_t)b->nex;
	ru->counters = pool_copy(r, b->ce, b->nce * sizeof(*b->ce));
	ru->ncounters = (uint32_t)b->nce;
	ru->explain = pool_join(r, &b->explain, ' ');
	if (!ru->tags || !ru->lits || !ru->unless || !ru->examples ||
	    !ru->counters || !ru->explain)
		return oom(ps);
	r->rules[r->nrules++] = *ru;
	return 0;
}

static int commit_any(struct parser *ps, struct rules_diagnosis *d)
{
	struct rules *r = ps->r;
	struct build *b = &ps->b;
	const char *const **groups;
	size_t *sizes;

	groups = rules_alloc(r, (b->nany + 1) * sizeof(*groups));
	sizes = rules_alloc(r, (b->nany + 1) * sizeof(*sizes));
	if (!groups || !sizes)
		return oom(ps);
	for (size_t i = 0; i < b->nany; i++) {
		groups[i] = pool_copy(r, b->anyflat.v + b->any[i].start,
				      b->any[i].n * sizeof(char *));
		sizes[i] = b->any[i].n;
		if (!groups[i])
			return oom(ps);
	}
	d->any = groups;
	d->nany = sizes;
	d->nanygroups = b->nany;
	return 0;
}

static int commit_diag(struct parser *ps)
{
	struct rules *r = ps->r;
	struct build *b = &ps->b;
	struct rules_diagnosis *d = &b->diag;

	if (!d->title)
		return fail_at(ps, b->line, "diagnosis %s: missing 'title'",
			       b->id);
	if (b->has_within && d->opened_by != RULES_OPENED_UPGRADE)
		return fail_at(ps, b->line, "diagnosis %s: 'within' bounds "
			       "'opened-by upgrade' only", b->id);
	if (d->opened_by == RULES_OPENED_UPGRADE && !d->within_ns)
		d->within_ns = RULES_WITHIN_DEFAULT_NS;
	if (RT_GROW(r->diags, r->ndiags + 1, r->capdiags))
		return oom(ps);
	d->all = pool_vec(r, &b->all);
	d->nall = b->all.n;
	d->none = pool_vec(r, &b->none);
	d->nnone = b->none.n;
	d->revision_status = pool_vec(r, &b->status);
	d->nrevision_status = b->status.n;
	d->remedy = pool_join(r, &b->remedy, '\n');
	d->explain = pool_join(r, &b->explain, ' ');
	if (!d->all || !d->none || !d->revision_status || !d->remedy ||
	    !d->explain || commit_any(ps, d))
		return oom(ps);
	r->diags[r->ndiags++] = *d;
	return 0;
}

static void build_reset(struct build *b)
{
	free(b->lits.v);
	free(b->unless.v);
	free(b->explain.v);
	free(b->remedy.v);
	free(b->all.v);
	free(b->none.v);
	free(b->status.v);
	free(b->anyflat.v);
	free(b->ex);
	free(b->ce);
	free(b->any);
	memset(b, 0, sizeof(*b));
}

static int finish_block(struct parser *ps)
{
	int rc = 0;

	if (ps->b.kind == BLOCK_RULE)
		rc = commit_rule(ps);
	else if (ps->b.kind == BLOCK_DIAG)
		rc = commit_diag(ps);
	build_reset(&ps->b);
	return rc;
}

/* ---- lines ---- */

static int start_block(struct parser *ps, bool rule, const char *v, size_t n)
{
	struct build *b = &ps->b;
	const char *id, *file;
	char buf[64];
	int rc, line;

	if ((rc = finish_block(ps)))
		return rc;
	if (!n)
		return fail(ps, "'%s' without an id", rule ? "rule" :
			    "diagnosis");
	if (!valid_id(v, n))
		return fail(ps, "bad id '%s' (use a-z 0-9 _ . -)",
			    echo(buf, sizeof(buf), v, n));
	if (!(id = rules_strndup(ps->r, v, n)))
		return oom(ps);
	if (find_id(ps->r, id, &file, &line))
		return fail(ps, "duplicate id '%s' (first defined at %s:%d)",
			    id, file, line);
	b->kind = rule ? BLOCK_RULE : BLOCK_DIAG;
	b->line = ps->line;
	b->id = id;
	if (rule) {
		b->rule = (struct rules_rule){ .id = id, .file = ps->file,
			.line = ps->line, .severity = RT_SEV_ERROR,
			.fields = 1u << FIELD_MESSAGE,
			.first_field = FIELD_MESSAGE,
			.pat0 = (uint32_t)ps->r->npats };
	} else {
		b->diag = (struct rules_diagnosis){ .id = id, .file = ps->file,
			.line = ps->line, .severity = RT_SEV_ERROR,
			.opened_by = RULES_OPENED_ANY };
	}
	return 0;
}

static const struct keyword *find_keyword(const struct keyword *set,
					  const char *w, size_t n)
{
	for (; set->name; set++)
		if (tok_is(w, n, set->name))
			return set;
	return NULL;
}

static bool any_keyword(const char *w, size_t n)
{
	return find_keyword(rule_keywords, w, n) ||
	       find_keyword(diag_keywords, w, n);
}

static int keyword_line(struct parser *ps, const char *w, size_t wn,
			const char *v, size_t vn)
{
	const struct keyword *kw;
	char buf[64];
	bool rule = ps->b.kind == BLOCK_RULE;

	if (ps->b.kind == BLOCK_NONE)
		return fail(ps, "'%s' outside a rule or diagnosis block",
			    echo(buf, sizeof(buf), w, wn));
	kw = find_keyword(rule ? rule_keywords : diag_keywords, w, wn);
	if (!kw)
		return fail(ps, rule ? "unknown keyword '%s' in rule (tags, "
			    "severity, field, pattern, literal, unless, "
			    "example, counterexample, explain)" : "unknown keyword '%s' "
			    "in diagnosis (title, severity, priority, all, any, "
			    "none, revision, opened-by, followed-by, object, "
			    "payload, within, remedy, explain)", echo(buf, sizeof(buf), w, wn));
	if (!vn)
		return fail(ps, "'%s' needs a value", kw->name);
	return kw->fn(ps, v, vn);
}

static int parse_line(struct parser *ps, const char *s, size_t n)
{
	size_t k = 0, w;
	char buf[64];

	if (memchr(s, '\0', n))
		return fail(ps, "NUL byte in line");
	while (n && is_blank(s[n - 1]))
		n--;
	while (k < n && is_blank(s[k]))
		k++;
	if (k == n || s[k] == '#')
		return 0;
	for (w = k; w < n && !is_blank(s[w]); w++)
		;
	{
		const char *v = s + w;
		size_t vn = n - w;

		while (vn && is_blank(*v)) {
			v++;
			vn--;
		}
		if (k > 0)
			return keyword_line(ps, s + k, w - k, v, vn);
		if (tok_is(s, w, "rule") || tok_is(s, w, "diagnosis"))
			return start_block(ps, s[0] == 'r', v, vn);
		if (any_keyword(s, w))
			return fail(ps, "'%s' must be indented under a rule or "
				    "diagnosis line", echo(buf, sizeof(buf), s, w));
		return fail(ps, "unknown keyword '%s' (a block starts with "
			    "'rule ID' or 'diagnosis ID')",
			    echo(buf, sizeof(buf), s, w));
	}
}

/* Undoes everything a failed pack added (pool memory stays until free). */
static void rollback(struct rules *r, size_t nrules, size_t npats,
		     size_t ndiags, size_t ntags)
{
	for (size_t i = npats; i < r->npats; i++)
		pcre2_code_free(r->pats[i].code);
	r->nrules = nrules;
	r->npats = npats;
	r->ndiags = ndiags;
	r->ntags = ntags;
}

int rules_load_buffer(struct rules *r, const char *name, const char *text,
		      size_t n, char *err, size_t errlen)
{
	struct parser ps = { .r = r, .err = err, .errlen = errlen };
	size_t nrules = r->nrules, npats = r->npats, ndiags = r->ndiags,
	       ntags = r->ntags;
	const char *p = text, *end = text + n;
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	if (!(ps.file = rules_strndup(r, name ? name : "-",
				      strlen(name ? name : "-"))))
		return RT_ENOMEM;
	r->compiled = false;    /* new rules need rules_compile again */
	while (!rc && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		ps.line++;
		rc = parse_line(&ps, p, (size_t)(le - p));
		p = nl ? nl + 1 : end;
	}
	if (!rc)
		rc = finish_block(&ps);
	build_reset(&ps.b);
	if (rc)
		rollback(r, nrules, npats, ndiags, ntags);
	return rc;
}
