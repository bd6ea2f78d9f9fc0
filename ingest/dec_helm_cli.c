/*
 * dec_helm_cli.c: helm and kubectl CLI output lines (docs/formats.md §3.7,
 * klipper-helm job traces), and dec_helm_text_line, the entry point that
 * offers each plain text line to the tables first.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>      /* helm_or_elease256, when the CPU has AVX2 */
#endif

#include "helm_text.h"

/*
 * Helm and kubectl CLI lines. Only lines that are clearly CLI output are
 * claimed (an app's own "Error: ..." stays plain text); the record carries
 * the line as its message and, when the line names it, the release.
 */
static const char *const helm_error_marks[] = {
	"INSTALLATION FAILED", "UPGRADE FAILED", "ROLLBACK FAILED",
	"UNINSTALLATION FAILED", "cannot re-use a name", "cannot reuse a name",
	"another operation (install/upgrade/rollback)",
	"has no deployed releases", "release: not found",
	"Kubernetes cluster unreachable", "rendered manifests contain",
	"nable to continue with install", "invalid ownership metadata",
	"failed pre-install", "failed post-install", "hooks failed",
	"timed out waiting for the condition", "context deadline exceeded",
	"has been rolled back", "Release not loaded", "release ", "Release ",
	"chart ", "helm", "YAML parse error", "execution error at",
	"unable to build kubernetes objects", "resource mapping not found",
};

static bool is_release_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* A plausible release name: DNS-ish, at most 63 characters. */
static struct span release_span(const char *p, const char *e)
{
	const char *q = p;

	while (q < e && is_release_char(*q))
		q++;
	if (q == p || q - p > 63)
		return (struct span){ 0 };
	return (struct span){ p, (size_t)(q - p) };
}

/* `<marker>X"` anywhere in the line: X. */
static struct span quoted_after(struct span s, const char *marker)
{
	const char *m = memmem(s.p, s.n, marker, strlen(marker));
	const char *e = s.p + s.n, *v, *q;

	if (!m)
		return (struct span){ 0 };
	v = m + strlen(marker);
	q = memchr(v, '"', (size_t)(e - v));
	if (!q)
		return (struct span){ 0 };
	struct span r = release_span(v, q);
	return r.n == (size_t)(q - v) ? r : (struct span){ 0 };
}

/* The release a helm error or success line names, if any. */
static struct span named_release(struct span s)
{
	static const char *const quoted[] = {
		"Release \"", "release \"", "Upgrade \"", "Rollback \"",
		"Install \"", "Uninstall \"", "upgrade \"",
	};
	static const char *const plain[] = {
		"release ", "Release not loaded: ",
	};
	struct span r = { 0 };
	const char *m;

	for (size_t i = 0; i < sizeof(quoted) / sizeof(quoted[0]) && !r.n; i++)
		r = quoted_after(s, quoted[i]);
	if (r.n)
		return r;
	/* `"X" has no deployed releases` */
	if ((m = memmem(s.p, s.n, "\" has no deployed releases", 26))) {
		const char *q = m;

		while (q > s.p && q[-1] != '"')
			q--;
		if (q > s.p && (r = release_span(q, m)).n == (size_t)(m - q))
			return r;
	}
	/* `release X failed, and has been rolled back`, `Release not loaded:
	 * X: release: not found` */
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		const char *v;

		if (!(m = memmem(s.p, s.n, plain[i], strlen(plain[i]))))
			continue;
		v = m + strlen(plain[i]);
		r = release_span(v, s.p + s.n);
		if (r.n && (line_starts((struct span){ v + r.n,
				(size_t)(s.p + s.n - v - r.n) }, " failed") ||
			    i == 1))
			return r;
	}
	return (struct span){ 0 };
}

/* helm flags that take the next word as their value. */
static bool flag_takes_value(struct span f)
{
	static const char *const flags[] = {
		"-n", "-f", "-o", "-l", "-m", "--namespace", "--values", "--set",
		"--set-string", "--set-file", "--set-json", "--set-literal",
		"--version", "--timeout", "--repo", "--description",
		"--kube-context", "--kubeconfig", "--post-renderer",
		"--post-renderer-args", "--username", "--password", "--ca-file",
		"--cert-file", "--key-file", "--history-max", "--max", "--output",
		"--labels", "--kube-apiserver", "--kube-as-user",
		"--kube-as-group", "--kube-token", "--kube-ca-file",
		"--registry-config", "--repository-cache", "--repository-config",
		"--burst-limit", "--qps", "--filter", "--selector",
		"--name-template", "--keyring", "--revision", "--driver",
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (span_is(f, flags[i]))
			return true;
	return false;
}

static struct span unquote(struct span t)
{
	if (t.n >= 2 && (t.p[0] == '\'' || t.p[0] == '"') &&
	    t.p[t.n - 1] == t.p[0])
		return (struct span){ t.p + 1, t.n - 2 };
	return t;
}

static bool is_helm_binary(struct span t)
{
	const char *slash = memrchr(t.p, '/', t.n);

	if (slash) {
		t.n -= (size_t)(slash + 1 - t.p);
		t.p = slash + 1;
	}
	/* helm, helm3, helm_v3 (klipper-helm), helm.exe */
	return line_starts(t, "helm") &&
	       (t.n == 4 || t.p[4] == '_' || t.p[4] == '.' ||
		isdigit((unsigned char)t.p[4]));
}

static bool names_release(struct span cmd)
{
	static const char *const cmds[] = {
		"install", "upgrade", "rollback", "uninstall", "delete", "del",
		"un", "status", "history", "hist", "test", "mapkubeapis",
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (span_is(cmd, cmds[i]))
			return true;
	return false;
}

/*
 * A helm command line: `+ helm_v3 upgrade --namespace x web chart` as
 * klipper-helm traces it with set -x, or `$ helm install web ./chart` as
 * pasted from a terminal. The release is the first positional argument
 * after the subcommand (after `get <what>` for helm get).
 */
static bool helm_command(struct span s, struct span *rel, struct span *ns,
			 struct span *cmdp)
{
	struct span tok[MAX_TOKENS], cmd = { 0 };
	int n, i = 0, skip_pos = 0;
	bool generated = false, seen_pos = false;

	while (s.n && (*s.p == '+' || *s.p == ' ' || *s.p == '$')) {
		s.p++;
		s.n--;
	}
	/* Most lines are not helm commands: look at the first word first. */
	if (dec_span_tokenize(s, tok, 1) != 1 || !is_helm_binary(tok[0]))
		return false;
	if ((n = dec_span_tokenize(s, tok, MAX_TOKENS)) < 2)
		return false;
	for (i = 1; i < n; i++) {
		struct span t = tok[i];

		if (t.p[0] == '-') {
			const char *eq = memchr(t.p, '=', t.n);

			if (span_is(t, "--generate-name") || span_is(t, "-g"))
				generated = true;
			if (eq && line_starts(t, "--namespace="))
				*ns = unquote((struct span){ eq + 1,
					(size_t)(t.p + t.n - eq - 1) });
			if (!eq && flag_takes_value(t) && i + 1 < n) {
				if (span_is(t, "-n") || span_is(t, "--namespace"))
					*ns = unquote(tok[i + 1]);
				i++;
			}
			continue;
		}
		if (!cmd.n) {
			cmd = t;
			skip_pos = span_is(t, "get") ? 1 : 0;
			continue;
		}
		if (skip_pos) {
			skip_pos--;
			continue;
		}
		/* Only the first positional; flags after it still count. */
		if (!seen_pos && (names_release(cmd) || span_is(cmd, "get")))
			*rel = unquote(t);
		seen_pos = true;
	}
	if (generated)
		*rel = (struct span){ 0 };
	if (rel->n && release_span(rel->p, rel->p + rel->n).n != rel->n)
		*rel = (struct span){ 0 };
	*cmdp = cmd;
	return true;
}

/* klipper-helm job script lines: `Upgrading web`, `Already installed web`. */
static bool klipper_line(struct span s, struct span *rel)
{
	static const char *const pre[] = {
		"Upgrading ", "Installing ", "Uninstalling ", "Already installed ",
		"Retrying upgrade of ", "Deleting ",
	};
	static const char *const whole[] = {
		"Previous helm job was interrupted", "Release status is '",
	};

	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		if (line_starts(s, whole[i]))
			return true;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t pl = strlen(pre[i]);
		struct span r;

		if (!line_starts(s, pre[i]))
			continue;
		r = release_span(s.p + pl, s.p + s.n);
		if (r.n && r.n == s.n - pl) {
			*rel = r;
			return true;
		}
	}
	return false;
}

/* `upgrade.go:144: [debug] ...` and friends from helm --debug. */
static bool helm_debug_line(struct span s)
{
	const char *m = memmem(s.p, s.n, ".go:", 4);

	return m && m - s.p < 40 && line_has(s, ": [debug] ");
}

/* Commands whose release the output that follows is about. */
static bool runs_operation(struct span cmd)
{
	static const char *const cmds[] = {
		"install", "upgrade", "rollback", "uninstall", "delete", "del",
		"un", "test",
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (span_is(cmd, cmds[i]))
			return true;
	return false;
}

static struct span str_span(struct rt_str s)
{
	return (struct span){ s.p ? s.p : "", s.n };
}

static bool same_str(const char *kept, struct rt_str s)
{
	return strlen(kept) == s.n && (!s.n || memcmp(kept, s.p, s.n) == 0);
}

/* Remembers the operation's release for the stream rec is from. */
static void op_remember(struct dec_helm_state *st, const struct rt_record *rec,
			struct span rel, struct span ns)
{
	keep(st->op_release, sizeof(st->op_release), rel);
	keep(st->op_ns, sizeof(st->op_ns), ns);
	keep(st->op_pod, sizeof(st->op_pod), str_span(rec->pod));
	keep(st->op_container, sizeof(st->op_container),
	     str_span(rec->container));
	st->op_set = true;
}

static bool same_stream(const struct dec_helm_state *st,
			const struct rt_record *rec)
{
	return same_str(st->op_pod, rec->pod) &&
	       same_str(st->op_container, rec->container);
}

/* The remembered release, when rec is from the same stream. Whether there
 * is one is asked first and inline: every container line asks, nearly
 * always of nothing, and comparing the stream takes a call. */
static inline bool op_recall(const struct dec_helm_state *st,
			     const struct rt_record *rec, struct span *rel,
			     struct span *ns)
{
	if (!st->op_set || !same_stream(st, rec))
		return false;
	*rel = (struct span){ st->op_release, strlen(st->op_release) };
	*ns = (struct span){ st->op_ns, strlen(st->op_ns) };
	return true;
}

/* `key=value` or `key="value"` in a logfmt line. */
static struct span kv_value(struct span s, const char *key)
{
	size_t kl = strlen(key);
	const char *p = s.p, *e = s.p + s.n, *v, *q;

	while ((p = memmem(p, (size_t)(e - p), key, kl))) {
		if ((p == s.p || p[-1] == ' ') && p + kl < e && p[kl] == '=')
			break;
		p += kl;
	}
	if (!p)
		return (struct span){ 0 };
	v = p + kl + 1;
	if (v < e && *v == '"') {
		v++;
		q = memchr(v, '"', (size_t)(e - v));
		return q ? (struct span){ v, (size_t)(q - v) } : (struct span){ 0 };
	}
	for (q = v; q < e && *q != ' '; q++)
		;
	return (struct span){ v, (size_t)(q - v) };
}

/* `"key":"value"` after from in a JSON line (no escapes in value). */
static struct span json_value_after(struct span s, const char *from,
				    const char *key)
{
	const char *e = s.p + s.n, *v, *q;

	if (!(v = memmem(from, (size_t)(e - from), key, strlen(key))))
		return (struct span){ 0 };
	v += strlen(key);
	if (!(q = memchr(v, '"', (size_t)(e - v))))
		return (struct span){ 0 };
	return (struct span){ v, (size_t)(q - v) };
}

/*
 * The release a controller's log line is about: helm-operator's
 * `release=X targetNamespace=Y`, Flux helm-controller's HelmRelease object
 * (`"HelmRelease":{"name":"X","namespace":"Y"}`, older versions
 * `"reconciler kind":"HelmRelease","name":"X","namespace":"Y"`).
 */
static bool controller_release(struct span s, struct span *rel,
			       struct span *ns)
{
	const char *hr;

	*rel = kv_value(s, "release");
	if (rel->n && release_span(rel->p, rel->p + rel->n).n == rel->n) {
		*ns = kv_value(s, "targetNamespace");
		return true;
	}
	hr = memmem(s.p, s.n, "\"HelmRelease\"", 13);
	if (!hr)
		return false;
	*rel = json_value_after(s, hr, "\"name\":\"");
	*ns = json_value_after(s, hr, "\"namespace\":\"");
	return rel->n && release_span(rel->p, rel->p + rel->n).n == rel->n;
}

/* k3s helm-controller's jobs: the correlator knows their release and
 * where it lives (the HelmChart's targetNamespace), better than the
 * --namespace of the command the job traces. */
static bool helm_controller_job(const struct rt_record *rec)
{
	/* Every container line asks: the first byte answers most. */
	if (rec->pod.n < 12 || rec->pod.p[0] != 'h')
		return false;
	return rt_str_has_prefix(rec->pod, "helm-install-") ||
	       rt_str_has_prefix(rec->pod, "helm-delete-");
}

static bool helm_or_elease_at(const char *p, size_t n, size_t i)
{
	return (i && i + 3 <= n && p[i - 1] == 'h' && p[i + 2] == 'm') ||
	       (i + 6 <= n && memcmp(p + i, "elease", 6) == 0);
}

/* Positions [i, i + 16) of p where "el" starts. */
#ifdef __SSE2__
static inline unsigned el_mask(const char *p)
{
	const __m128i e = _mm_set1_epi8('e'), l = _mm_set1_epi8('l');

	return (unsigned)_mm_movemask_epi8(_mm_and_si128(
		_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), e),
		_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 1)), l)));
}
#endif

/* From i on, 16 bytes a step; the last positions from the block that
 * ends with the text (looking at a position twice finds nothing new), or
 * byte by byte in a text shorter than a block. */
static bool helm_or_elease_from(const char *p, size_t n, size_t i)
{
#ifdef __SSE2__
	for (; i + 17 <= n; i += 16)
		for (unsigned m = el_mask(p + i); m; m &= m - 1)
			if (helm_or_elease_at(p, n, i + (unsigned)__builtin_ctz(m)))
				return true;
	if (n >= 17) {
		for (unsigned m = i + 1 < n ? el_mask(p + n - 17) : 0; m;
		     m &= m - 1)
			if (helm_or_elease_at(p, n,
					      n - 17 + (unsigned)__builtin_ctz(m)))
				return true;
		return false;
	}
#endif
	for (; i + 1 < n; i++)
		if (p[i] == 'e' && p[i + 1] == 'l' && helm_or_elease_at(p, n, i))
			return true;
	return false;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* 32 bytes a step where the CPU has AVX2: this runs on every line. The
 * last block overlaps the one before it, as in helm_or_elease_from; a text
 * shorter than a block goes there before any 256-bit register is used.
 * Never hand over to that SSE2 code after the loop: GCC clears no upper
 * halves (vzeroupper) before such a tail call, and on Intel each SSE2
 * instruction after them pays for the mixed state; the line's tail handed
 * over that way cost classify a third of its CPU time. */
static __attribute__((target("avx2"))) bool helm_or_elease256(const char *p,
							     size_t n)
{
	const __m256i e = _mm256_set1_epi8('e'), l = _mm256_set1_epi8('l');
	size_t i = 0;

	if (n < 33)
		return helm_or_elease_from(p, n, 0);
	while (i < n - 1) {
		size_t at = i + 33 <= n ? i : n - 33;
		unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(
			_mm256_cmpeq_epi8(_mm256_loadu_si256(
				(const __m256i *)(p + at)), e),
			_mm256_cmpeq_epi8(_mm256_loadu_si256(
				(const __m256i *)(p + at + 1)), l)));

		for (; m; m &= m - 1)
			if (helm_or_elease_at(p, n, at + (unsigned)__builtin_ctz(m)))
				return true;
		i = at + 32;
	}
	return false;
}
#endif

/*
 * Whether s holds "helm" or "elease": a helm command's first word holds
 * the one (is_helm_binary), a controller's release= or "HelmRelease" the
 * other (controller_release); most container lines hold neither. One pass
 * for the "el" both share, where trying each costs a tokenizing and three
 * memmem calls on every line.
 */
static bool may_name_release(struct span s)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("avx2"))
		return helm_or_elease256(s.p, s.n);
#endif
	return helm_or_elease_from(s.p, s.n, 0);
}

/* The helm command a helm-controller job traces names the namespace its
 * release lives in (`+ helm_v3 upgrade --namespace cache ... redis`):
 * evidence the correlator prefers to any guess from the registry. Only
 * for the job's own release, and only that line carries it. */
static void job_namespace(struct dec_ctx *d, struct rt_record *rec,
			  struct span s)
{
	struct span rel = { 0 }, ns = { 0 }, cmd;
	size_t k = rt_str_has_prefix(rec->pod, "helm-install-") ? 13 : 12;

	if (!may_name_release(s) || !helm_command(s, &rel, &ns, &cmd) ||
	    !rel.n || !ns.n || !runs_operation(cmd) ||
	    rec->pod.n <= k + rel.n || rec->pod.p[k + rel.n] != '-' ||
	    memcmp(rec->pod.p + k, rel.p, rel.n))
		return;
	rec->release = dec_span_dup(d, rel);
	rec->release_ns = dec_span_dup(d, ns);
}

void dec_helm_op_apply(struct dec_ctx *d, struct dec_helm_state *st,
		       struct rt_record *rec, struct rt_str line)
{
	struct span s = { line.p, line.n }, rel = { 0 }, ns = { 0 }, cmd;
	bool named;

	if (helm_controller_job(rec)) {
		job_namespace(d, rec, trim(s.p, s.n));
		return;
	}
	/* No space is part of "helm" or "elease": the line holds one exactly
	 * when its trimmed text does, and only the few that do are trimmed. */
	named = may_name_release(s);
	if (named)
		s = trim(s.p, s.n);
	if (named && helm_command(s, &rel, &ns, &cmd)) {
		if (!rel.n || !runs_operation(cmd))
			return;
		op_remember(st, rec, rel, ns);
	} else if (!(named && controller_release(s, &rel, &ns)) &&
		   (rec->release.n || !op_recall(st, rec, &rel, &ns))) {
		return;
	}
	rec->release = dec_span_dup(d, rel);
	rec->release_ns = ns.n ? dec_span_dup(d, ns) : RT_STR_NULL;
}

/* A helm or kubectl CLI line: true, with the release it names if any. */
static bool cli_line(struct dec_ctx *d, struct dec_helm_state *st,
		     struct span s, struct span *rel, struct span *ns)
{
	struct span cmd = { 0 };

	if (line_starts(s, "Error: ")) {
		for (size_t i = 0; i < sizeof(helm_error_marks) /
				       sizeof(helm_error_marks[0]); i++)
			if (line_has(s, helm_error_marks[i]))
				goto named;
		return false;
	}
	if (line_starts(s, "Error from server") || line_has(s, "Happy Helming!") ||
	    line_starts(s, "Release \"") || line_starts(s, "release \"") ||
	    line_starts(s, "Rollback was a success") || helm_debug_line(s))
		goto named;
	if (klipper_line(s, rel))
		return true;
	if (!helm_command(s, rel, ns, &cmd))
		return false;
	if (rel->n && runs_operation(cmd) && !helm_controller_job(d->base))
		op_remember(st, d->base, *rel, *ns);
	/* `$ helm history web -n prod` names the table that follows it. */
	keep(st->cmd_release, sizeof(st->cmd_release),
	     span_is(cmd, "history") || span_is(cmd, "hist") ?
	     *rel : (struct span){ "", 0 });
	keep(st->cmd_ns, sizeof(st->cmd_ns), st->cmd_release[0] ?
	     *ns : (struct span){ "", 0 });
	return true;
named:
	*rel = named_release(s);
	/* Output without a name belongs to the operation the stream ran. */
	if (!rel->n)
		op_recall(st, d->base, rel, ns);
	return true;
}

static int cli_emit(struct dec_ctx *d, struct span line, struct span rel,
		    struct span ns)
{
	struct rt_record rec = *d->base;
	int rc;

	rec.format = RT_FMT_HELM_TEXT;
	rec.message = dec_span_dup(d, line);
	if (rel.n)
		rec.release = dec_span_dup(d, rel);
	if (ns.n)
		rec.release_ns = dec_span_dup(d, ns);
	rec.revs = NULL;
	rec.nrevs = 0;
	if (!rec.ts_ns && d->hint_ts_ns)
		rec.ts_ns = d->hint_ts_ns;
	if ((rc = dec_emit(d, &rec)) != 0)
		return rc;
	return DEC_YES;
}

int dec_helm_text_line(struct dec_ctx *d, struct dec_helm_state *st,
		       const char *line, size_t n)
{
	struct span s = trim(line, n), rel = { 0 }, ns = { 0 };
	int rc;

	if ((rc = dec_helm_yaml_line(d, st, line, n)) != DEC_NO)
		return rc;
	if (!s.n) {   /* a blank line ends a table and a status block */
		st->table = DEC_TABLE_NONE;
		dec_status_block_end(d->stats, st);
		return DEC_NO;
	}
	if (st->table != DEC_TABLE_NONE &&
	    (rc = dec_table_line(d, st, line, s)) != DEC_NO)
		return rc;
	if (dec_table_header(st, line, s) || dec_kube_header(st, line, s))
		return DEC_YES;
	if ((rc = dec_headless_row(d, st, s)) != DEC_NO)
		return rc;
	dec_describe_observe(st, line, s);
	/* A remembered `helm history` command names only the table right
	 * after it; cli_line remembers a new one. */
	st->cmd_release[0] = st->cmd_ns[0] = '\0';
	if ((rc = dec_status_block(d, st, s)) != DEC_NO)
		return rc;
	if (cli_line(d, st, s, &rel, &ns))
		return cli_emit(d, s, rel, ns);
	return DEC_NO;
}
