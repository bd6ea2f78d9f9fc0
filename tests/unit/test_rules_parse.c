/*
 * test_rules_parse.c: the rule pack parser: every error as file:line:
 * problem, atomic packs, directories, diagnoses, rules list, and junk input
 * that must never crash.
 */
#include <stdlib.h>
#include <string.h>

#include "revtrail/rules.h"
#include "tap.h"

static char err[512];

/* Loads text as "t.rules" into a fresh rules object; returns the code. */
static int load(const char *text)
{
	struct rules *r = rules_new();
	int rc;

	err[0] = 'X';
	err[1] = '\0';
	rc = rules_load_buffer(r, "t.rules", text, strlen(text), err,
			       sizeof(err));
	if (!rc)
		rc = rules_compile(r, err, sizeof(err));
	rules_free(r);
	return rc;
}

#define RULE_HEAD "rule a.b\n  tags x\n"
#define RULE_OK "rule a.b\n  tags x\n  pattern foo\n  example foo\n"

static void errors(void)
{
	is_int(load(RULE_OK), 0, "a minimal rule loads");
	is_int(load("rule a.b\n  pattrn foo\n"), RT_EINVAL, "unknown keyword");
	ok(!strncmp(err, "t.rules:2: unknown keyword 'pattrn' in rule (", 45),
	   "unknown keyword message: %s", err);
	load("  tags x\n");
	is_str(err, "t.rules:1: 'tags' outside a rule or diagnosis block",
	       "indented keyword before any block");
	load("# hello\n\ntags x\n");
	is_str(err, "t.rules:3: 'tags' must be indented under a rule or "
	       "diagnosis line", "keyword in column 0");
	load("rul a\n");
	is_str(err, "t.rules:1: unknown keyword 'rul' (a block starts with "
	       "'rule ID' or 'diagnosis ID')", "typo in block line");
	load("# c\nrule a.b\n  pattern foo\n  example foo\n");
	is_str(err, "t.rules:2: rule a.b: missing 'tags'", "missing tags");
	load(RULE_HEAD "  example foo\n\nrule c\n");
	is_str(err, "t.rules:1: rule a.b: missing 'pattern'",
	       "missing pattern (reported at the rule line)");
	load(RULE_HEAD "  pattern foo\n");
	is_str(err, "t.rules:1: rule a.b: missing 'example'",
	       "missing example at end of file");
	load("diagnosis d1\n  all x\n");
	is_str(err, "t.rules:1: diagnosis d1: missing 'title'",
	       "diagnosis without title");
	load(RULE_OK "rule a.b\n");
	is_str(err, "t.rules:5: duplicate id 'a.b' (first defined at "
	       "t.rules:1)", "duplicate id in one pack");
	load(RULE_OK "diagnosis a.b\n  title t\n");
	is_str(err, "t.rules:5: duplicate id 'a.b' (first defined at "
	       "t.rules:1)", "rule and diagnosis share one id space");
	load(RULE_HEAD "  severity fatal\n");
	is_str(err, "t.rules:3: bad severity 'fatal' (critical, error, "
	       "warning, info)", "bad severity");
	load(RULE_HEAD "  severity error\n  severity info\n");
	is_str(err, "t.rules:4: duplicate 'severity'", "severity twice");
	load("diagnosis d\n  title t\n  priority high\n");
	is_str(err, "t.rules:3: bad priority 'high' (an integer)",
	       "bad priority");
	load("diagnosis d\n  title t\n  priority 12x\n");
	is_str(err, "t.rules:3: bad priority '12x' (an integer)",
	       "priority with trailing junk");
	is_int(load(RULE_HEAD "  pattern foo(bar\n"), RT_EINVAL,
	       "regex error is EINVAL");
	is_str(err, "t.rules:3: rule a.b: pattern does not compile at offset "
	       "7: missing closing parenthesis",
	       "regex error: PCRE2 message and offset at the pattern line");
	load(RULE_HEAD "  field message, msg\n");
	is_str(err, "t.rules:3: unknown field 'msg' (message, reason, raw)",
	       "unknown field name");
	load("diagnosis d\n  title t\n  opened-by upgrades\n");
	is_str(err, "t.rules:3: bad opened-by 'upgrades' (upgrade, install, "
	       "any)", "bad opened-by");
	load("diagnosis d\n  title t\n  followed-by upgrade\n");
	is_str(err, "t.rules:3: bad followed-by 'upgrade' (rollback)",
	       "bad followed-by");
	load("diagnosis d\n  title t\n  payload hooks\n");
	is_str(err, "t.rules:3: bad payload 'hooks' (hook-config)", "bad payload");
	load("diagnosis d\n  title t\n  payload hook-config\n  payload hook-config\n");
	is_str(err, "t.rules:4: duplicate 'payload'", "payload twice");
	load("diagnosis d\n  title t\n  object helm-install-*\n");
	is_str(err, "t.rules:3: bad object 'helm-install-*' (Kind/name-glob, "
	       "e.g. Pod/helm-install-*)", "object without a kind");
	load("diagnosis d\n  title t\n  object Pod/a-* Job\n");
	is_str(err, "t.rules:3: bad object 'Job' (Kind/name-glob, "
	       "e.g. Pod/helm-install-*)", "every glob of an object line is checked");
	load("diagnosis d\n  title t\n  object Pod/\n");
	ok(!strncmp(err, "t.rules:3: bad object 'Pod/'", 28),
	   "object without a glob: %s", err);
	load("diagnosis d\n  title t\n  revision deployed faild\n");
	ok(!strncmp(err, "t.rules:3: unknown revision status 'faild'", 42),
	   "unknown revision status: %s", err);
	load("rule Bad_Id\n");
	is_str(err, "t.rules:1: bad id 'Bad_Id' (use a-z 0-9 _ . -)",
	       "bad id");
	load("rule\n");
	is_str(err, "t.rules:1: 'rule' without an id", "rule without id");
	load(RULE_HEAD "  literal ab\n");
	is_str(err, "t.rules:3: literal 'ab' is too short for the prefilter "
	       "(3 bytes or more)", "short declared literal");
	load("rule a.b\n  tags Foo\n");
	is_str(err, "t.rules:2: bad tag 'Foo' (use a-z 0-9 _ . -)",
	       "bad tag name");
	load("rule a.b\n  tags\n");
	is_str(err, "t.rules:2: 'tags' needs a value", "keyword without value");
}

/* `unless` lines: like `literal` values, ASCII without k or s, at most
 * RULES_MAX_UNLESS of them; rules list -v shows them. */
static void unless_lines(void)
{
	static const char listed[] = RULE_OK "  unless Err \"Image\n";
	struct rules *r;
	char *out = NULL, text[1024];
	size_t n = 0, k;
	FILE *f;

	is_int(load(RULE_OK "  unless pulling image\n  unless ErrImage\n"), 0,
	       "a rule with two unless lines loads");
	is_int(load(RULE_HEAD "  unless ab\n"), RT_EINVAL, "short unless");
	is_str(err, "t.rules:3: unless 'ab' is too short (3 bytes or more)",
	       "short unless: file, line and problem");
	load(RULE_HEAD "  unless\n");
	is_str(err, "t.rules:3: 'unless' needs a value", "unless without value");
	load(RULE_HEAD "  unless backoff\n");
	is_str(err, "t.rules:3: unless 'backoff': holds a k, which caseless "
	       "matching also finds as KELVIN SIGN (use a literal without k "
	       "or s)", "a k is refused");
	load(RULE_HEAD "  unless Pull Secret\n");
	is_str(err, "t.rules:3: unless 'Pull Secret': holds an S, which "
	       "caseless matching also finds as LONG S (use a literal without "
	       "k or s)", "an S is refused");
	load(RULE_HEAD "  unless caf\xc3\xa9\n");
	is_str(err, "t.rules:3: unless 'caf\xc3\xa9': non-ASCII byte (caseless "
	       "matching folds letters beyond ASCII)", "non-ASCII is refused");
	k = (size_t)snprintf(text, sizeof(text), RULE_OK);
	for (int i = 0; i < 9; i++)
		k += (size_t)snprintf(text + k, sizeof(text) - k,
				      "  unless word%d\n", i);
	load(text);
	is_str(err, "t.rules:13: more than 8 'unless' lines",
	       "a ninth unless line is refused at its line");
	r = rules_new();
	if (rules_load_buffer(r, "t.rules", listed, strlen(listed), err,
			      sizeof(err)) ||
	    rules_compile(r, err, sizeof(err))) {
		ok(0, "unless pack: %s", err);
		rules_free(r);
		return;
	}
	f = open_memstream(&out, &n);
	rules_list_prefilter(r, f);
	fclose(f);
	is_str(out, "a.b\tt.rules:3\t\"foo\" unless (\"err \\\"image\")\n",
	       "rules list -v shows the unless literals, lower case, escaped");
	free(out);
	rules_free(r);
}

static void nul_and_endings(void)
{
	static const char nul[] = "rule a.b\n  tags x\n  pattern f\0o\n";
	static const char crlf[] = "rule a.b\r\n  tags x\r\n  pattern foo$\r\n"
				   "  example a foo\r\n";
	struct rules *r = rules_new();

	is_int(rules_load_buffer(r, "n.rules", nul, sizeof(nul) - 1, err,
				 sizeof(err)), RT_EINVAL, "NUL byte rejected");
	is_str(err, "n.rules:3: NUL byte in line", "NUL byte message");
	is_int(rules_load_buffer(r, "c.rules", crlf, strlen(crlf), err,
				 sizeof(err)), 0, "CRLF pack loads");
	is_int(rules_compile(r, err, sizeof(err)), 0, "CRLF pack compiles");
	is_int(rules_test(r, stderr), 0,
	       "CR is trimmed: pattern foo$ matches its example");
	rules_free(r);
	is_int(load(RULE_HEAD "  pattern foo\n  example foo"), 0,
	       "no trailing newline");
	is_int(load("# only a comment"), 0, "comment-only pack");
	is_int(load(""), 0, "empty pack");
}

static void atomic_packs(void)
{
	struct rules *r = rules_new();
	char *out = NULL;
	size_t outn = 0;
	FILE *f;

	is_int(rules_load_buffer(r, "one.rules", RULE_OK, strlen(RULE_OK), err,
				 sizeof(err)), 0, "first pack");
	is_int(rules_load_buffer(r, "two.rules", RULE_OK, strlen(RULE_OK), err,
				 sizeof(err)), RT_EINVAL, "same id again");
	is_str(err, "two.rules:1: duplicate id 'a.b' (first defined at "
	       "one.rules:1)", "duplicate across packs names both files");
	static const char half[] = "rule c.d\n  tags newtag\n  pattern bar\n"
				   "  example bar\nrule e\n  tags y\n  pattern (\n";
	is_int(rules_load_buffer(r, "half.rules", half, strlen(half), err,
				 sizeof(err)), RT_EINVAL, "pack failing half way");
	is_int(rules_count(r), 1, "a failed pack adds no rule");
	is_int(rules_compile(r, err, sizeof(err)), 0, "still compiles");
	f = open_memstream(&out, &outn);
	rules_list(r, f);
	fclose(f);
	is_str(out, "a.b\tx\terror\t\n", "list shows only the first pack");
	free(out);
	rules_free(r);
}

static void paths(void)
{
	struct rules *r = rules_new();
	char *out = NULL;
	size_t outn = 0;
	FILE *f;

	is_int(rules_load_path(r, "tests/data/rules/dir", err, sizeof(err)), 0,
	       "directory of packs");
	is_int(rules_count(r), 2, "two packs, README ignored");
	is_int(rules_load_path(r, "tests/data/rules/bad/dup.rules", err,
			       sizeof(err)), RT_EINVAL, "dup across files");
	is_str(err, "tests/data/rules/bad/dup.rules:1: duplicate id 'd.first' "
	       "(first defined at tests/data/rules/dir/10-first.rules:1)",
	       "duplicate id names both files");
	is_int(rules_load_path(r, "tests/data/rules/nope.rules", err,
			       sizeof(err)), RT_EIO, "missing file is EIO");
	is_str(err, "tests/data/rules/nope.rules: No such file or directory",
	       "EIO message names the path");
	is_int(rules_compile(r, err, sizeof(err)), 0, "compile");
	f = open_memstream(&out, &outn);
	rules_list(r, f);
	fclose(f);
	is_str(out, "d.first\tfirst_tag\terror\t\n"
	       "d.second\tsecond_tag,first_tag\terror\t\n",
	       "name order, tags in rule order");
	free(out);
	rules_free(r);
}

static void diagnoses(void)
{
	struct rules *r = rules_new();
	const struct rules_diagnosis *d;
	char *out = NULL;
	size_t outn = 0;
	FILE *f;

	is_int(rules_load_path(r, "tests/data/rules/catalog.rules", err,
			       sizeof(err)), 0, "catalog pack loads: %s", err);
	is_int(rules_compile(r, err, sizeof(err)), 0, "catalog compiles");
	is_int(rules_diagnosis_count(r), 2, "two diagnoses");
	d = rules_diagnosis_at(r, 0);
	is_str(d->id, "stale_config_mount", "id");
	is_str(d->title, "pods mount a ConfigMap that is gone after an upgrade",
	       "title");
	is_int(d->severity, RT_SEV_CRITICAL, "severity");
	is_int(d->priority, 20, "priority");
	is_int(d->nall, 0, "no all");
	is_int(d->nanygroups, 2, "two any groups");
	is_int(d->nany[0], 2, "first any group size");
	is_int(d->nany[1], 3, "second any group size");
	is_str(d->any[1][2], "upstream_unavailable", "any group member");
	is_int(d->nnone, 1, "none");
	is_str(d->none[0], "helm_name_in_use", "none member");
	is_int(d->nrevision_status, 2, "revision statuses");
	is_str(d->revision_status[1], "failed", "revision status");
	is_int(d->opened_by, RULES_OPENED_UPGRADE, "opened-by upgrade");
	ok(!d->followed_by_rollback, "no followed-by");
	ok(d->object_glob == NULL, "no object");
	ok(!d->payload_hook_config, "no payload condition");
	is_str(d->remedy, "Use hashed ConfigMap names or a checksum "
	       "annotation.\nThen restart the rollout.", "remedy lines joined");
	is_str(d->explain, "The upgrade replaced config the pods still mount.",
	       "explain");
	is_str(d->file, "tests/data/rules/catalog.rules", "file");
	d = rules_diagnosis_at(r, 1);
	is_int(d->severity, RT_SEV_ERROR, "default severity");
	is_int(d->nall, 1, "all");
	is_str(d->object_glob, "Pod/helm-install-*", "object glob");
	is_int(d->opened_by, RULES_OPENED_INSTALL, "opened-by install");
	ok(d->followed_by_rollback, "followed-by rollback");
	is_str(d->remedy, "", "absent remedy is empty");
	ok(rules_diagnosis_at(r, 2) == NULL, "out of range is NULL");
	f = open_memstream(&out, &outn);
	rules_list(r, f);
	fclose(f);
	ok(strstr(out, "\nt.configmap.missing\t") == NULL &&
	   !strncmp(out, "t.configmap.missing\tconfigmap_not_found,"
		    "volume_mount_failed\terror\tA ConfigMap the pod mounts or "
		    "references does not exist.\n", 116), "list rule line");
	ok(strstr(out, "\ndiagnosis superseded_release_install\tall:"
		  "helm_name_in_use revision:superseded,unknown "
		  "opened-by:install followed-by:rollback "
		  "object:Pod/helm-install-*\terror\thelm install retried on a "
		  "release whose latest revision is gone\n") != NULL,
	   "list diagnosis line");
	free(out);
	rules_free(r);
}

/* Junk must give 0 or a clean "junk.rules:N: ..." error, never a crash. */
static void junk(void)
{
	static const char *const pieces[] = {
		"rule ", "diagnosis ", "  tags ", "  pattern ", "  example ",
		"  counterexample ", "  field ", "  literal ", "  title ", "a.b",
		"x", "(", ")", "[", "\\", "(?<n>", "\n", "\n", "\r\n", "\xff",
		"\xc3\x28", "#", "  priority 9", "  any a b", "  object P/*",
		"  severity info", "raw", "reason", "  all ", "*+?", "{2,}",
	};
	unsigned seed = 12345, bad = 0, okc = 0;
	char buf[512];

	for (int it = 0; it < 3000; it++) {
		size_t n = 0;
		struct rules *r = rules_new();
		int rc;

		while (n < sizeof(buf) - 32) {
			const char *p;

			seed = seed * 1103515245 + 12345;
			if ((seed >> 16) % 23 == 0)
				break;
			p = pieces[(seed >> 8) % (sizeof(pieces) /
						  sizeof(*pieces))];
			memcpy(buf + n, p, strlen(p));
			n += strlen(p);
			if ((seed >> 20) % 7 == 0)
				buf[n++] = (char)(seed >> 3);
		}
		rc = rules_load_buffer(r, "junk.rules", buf, n, err,
				       sizeof(err));
		if (!rc)
			rc = rules_compile(r, err, sizeof(err));
		if (rc == 0)
			okc++;
		else if (rc == RT_EINVAL && !strncmp(err, "junk.rules:", 11))
			bad++;
		rules_free(r);
	}
	is_int(okc + bad, 3000, "junk: %u loaded, %u clean errors", okc, bad);
}

static void giant(void)
{
	size_t n = 2u << 20;
	char *big = malloc(n + 64);
	struct rules *r = rules_new();

	memcpy(big, "rule a\n  tags x\n  pattern ", 26);
	memset(big + 26, 'a', n - 26);
	is_int(rules_load_buffer(r, "g.rules", big, n, err, sizeof(err)),
	       RT_EINVAL, "2 MiB pattern line is rejected");
	ok(strlen(err) < 200 && !strncmp(err, "g.rules:3: rule a: pattern does "
					 "not compile", 40),
	   "bounded error for a giant pattern: %s", err);
	memset(big, '#', n);
	is_int(rules_load_buffer(r, "g.rules", big, n, err, sizeof(err)), 0,
	       "2 MiB comment line");
	memset(big, 'z', n);
	is_int(rules_load_buffer(r, "g.rules", big, n, err, sizeof(err)),
	       RT_EINVAL, "2 MiB word in column 0");
	ok(strlen(err) < 200, "error echo is bounded (%zu bytes)", strlen(err));
	rules_free(r);
	free(big);
}

int main(void)
{
	errors();
	unless_lines();
	nul_and_endings();
	atomic_packs();
	paths();
	diagnoses();
	junk();
	giant();
	return done_testing();
}
