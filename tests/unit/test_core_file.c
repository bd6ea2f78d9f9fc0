/* Files written whole and renamed into place (core/rt_file.c): the
 * temporary never follows a symlink planted beside the target, and a
 * commit replaces the target's content. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "revtrail/rt.h"
#include "tap.h"

static void slurp(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t got = f ? fread(buf, 1, n - 1, f) : 0;

	buf[got] = '\0';
	if (f)
		fclose(f);
}

int main(void)
{
	char dir[] = "/tmp/rt-file-XXXXXX", target[256], victim[256],
	     planted[256], tmp[300], buf[64];
	struct stat st;
	FILE *f;

	if (!mkdtemp(dir))
		return 1;
	snprintf(target, sizeof(target), "%s/stats.json", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(planted, sizeof(planted), "%s/stats.json.tmp", dir);
	f = fopen(victim, "w");
	fputs("precious\n", f);
	fclose(f);
	ok(symlink(victim, planted) == 0, "a symlink planted at TARGET.tmp");

	f = rt_replace_open(target, tmp, sizeof(tmp));
	ok(f != NULL, "a temporary beside the target");
	ok(f && strncmp(tmp, target, strlen(target)) == 0 &&
	   strcmp(tmp, planted) != 0, "named after the target, not fixed: %s",
	   tmp);
	ok(lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) &&
	   (st.st_mode & 0777) == 0644, "a regular file, mode 0644");
	fputs("{\"a\":1}\n", f);
	ok(rt_replace_commit(f, tmp, target) == 0, "committed");
	slurp(target, buf, sizeof(buf));
	is_str(buf, "{\"a\":1}\n", "the target has the new content");
	slurp(victim, buf, sizeof(buf));
	is_str(buf, "precious\n", "the planted symlink's target is untouched");
	ok(access(tmp, F_OK) != 0, "no temporary left");
	ok(rt_replace_open("/nonexistent-dir/x", tmp, sizeof(tmp)) == NULL,
	   "a directory that does not exist: NULL");

	unlink(planted);
	unlink(victim);
	unlink(target);
	rmdir(dir);
	return done_testing();
}
