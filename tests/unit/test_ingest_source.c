/*
 * The file source (ingest/src_file.c): a regular file read through its
 * mapping gives the records a read() of it gives, across slice and window
 * edges and a line longer than a slice; a file that grows while read is
 * read to its new end; a file cut shorter while read ends there without
 * a crash, and the records before the cut are intact.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "revtrail/ingest.h"
#include "tap.h"

struct run {
	const char *text;       /* the file as written */
	size_t n;
	uint64_t next;          /* offset the next record should start at */
	size_t records, intact, between;
	int fd;                 /* the file, for the callbacks to change */
	size_t cut_at;          /* truncate the file at this record ... */
	off_t cut_to;           /* ... to this size */
	const char *append;     /* written to the file at the first hook */
};

static int on_rec(void *ctx, struct rt_record *rec)
{
	struct run *r = ctx;

	r->records++;
	if (rec->pos.offset == r->next && r->next + rec->raw.n <= r->n &&
	    !memcmp(r->text + r->next, rec->raw.p, rec->raw.n) &&
	    !(rec->flags & RT_REC_TRUNCATED))
		r->intact++;
	r->next = rec->pos.offset + rec->raw.n + 1;
	if (r->records == r->cut_at && ftruncate(r->fd, r->cut_to))
		return 1;
	return 0;
}

static int on_between(void *ctx)
{
	struct run *r = ctx;

	if (r->between++ == 0 && r->append &&
	    write(r->fd, r->append, strlen(r->append)) < 0)
		return 1;
	return 0;
}

/* About 20 MiB of lines of varied length, so lines straddle every slice
 * and the first window's end, and one 2.5 MiB line past 16 MiB. */
static char *make_text(size_t *n, size_t *lines)
{
	size_t cap = 24u << 20, len = 0, k = 0;
	char *p = malloc(cap);

	while (len < (20u << 20)) {
		size_t w = (k * 7919) % 300;

		if (len > (15u << 20) + (1u << 19) && len < (16u << 20))
			w = (5u << 19) - 40;    /* crosses 16 MiB */
		len += (size_t)sprintf(p + len, "line %zu ", k);
		memset(p + len, 'a' + (int)(k % 26), w);
		len += w;
		p[len++] = '\n';
		k++;
	}
	*n = len;
	*lines = k;
	return p;
}

static int write_file(char *path, const char *p, size_t n)
{
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, p, n) != (ssize_t)n)
		return -1;
	return fd;
}

static int read_path(struct run *r, char *path)
{
	struct ingest_opts o = { .max_record = 4u << 20 };
	struct ingest *in = ingest_new(&o);
	struct rt_arena a;
	int rc;

	rt_arena_init(&a);
	rc = ingest_read_paths(in, &path, 1, &a, on_rec, on_between, r);
	rt_arena_release(&a);
	ingest_free(in);
	return rc;
}

static void test_mapped(const char *text, size_t n, size_t lines)
{
	char path[] = "/tmp/revtrail-src-XXXXXX";
	struct run r = { .text = text, .n = n };

	r.fd = write_file(path, text, n);
	ok(r.fd >= 0, "mapped: test file written");
	is_int(read_path(&r, path), 0, "mapped: read to the end");
	is_int(r.records, lines, "mapped: one record a line");
	is_int(r.intact, lines, "mapped: every record whole, in order");
	ok(r.between >= n >> 20, "mapped: the hook ran every slice (%zu)",
	   r.between);
	close(r.fd);
	unlink(path);
}

static void test_grows(const char *text, size_t n, size_t lines)
{
	char path[] = "/tmp/revtrail-src-XXXXXX";
	static const char more[] = "appended one\nappended two\n";
	char *all = malloc(n + sizeof(more));
	struct run r = { .text = all, .n = n + sizeof(more) - 1,
			 .append = more };

	memcpy(all, text, n);
	memcpy(all + n, more, sizeof(more));
	r.fd = write_file(path, text, n);
	is_int(read_path(&r, path), 0, "grows: read to the end");
	is_int(r.records, lines + 2, "grows: the appended lines are read");
	is_int(r.intact, lines + 2, "grows: every record whole");
	close(r.fd);
	unlink(path);
	free(all);
}

/* Cut mid-slice by the emit callback, while the framer still has the
 * slice's later pages to scan: they fault, and read as zeros. */
static void test_shrinks(const char *text, size_t n)
{
	char path[] = "/tmp/revtrail-src-XXXXXX";
	struct run r = { .text = text, .n = n, .cut_at = 1000 };
	const char *p = text;

	for (size_t i = 0; i < r.cut_at + 100; i++)
		p = strchr(p, '\n') + 1;
	r.cut_to = p - text;    /* 100 whole lines after the cut record */
	r.fd = write_file(path, text, n);
	read_path(&r, path);
	is_int(r.intact, r.cut_at + 100, "shrinks: the lines before the cut");
	ok(r.records <= r.cut_at + 101, "shrinks: at most one record after "
	   "(%zu)", r.records - r.intact);
	close(r.fd);
	unlink(path);
}

int main(void)
{
	size_t n, lines;
	char *text = make_text(&n, &lines);

	test_mapped(text, n, lines);
	test_grows(text, n, lines);
	test_shrinks(text, n);
	free(text);
	return done_testing();
}
