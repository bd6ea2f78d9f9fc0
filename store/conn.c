/*
 * conn.c: what the writer (store.c) and the readers (read.c) share of a
 * connection's life: SQLite's process-wide setting and store_close.
 * Below both, so that store.c may open a read-only store through read.c
 * without read.c calling back into store.c.
 */
#include <stdlib.h>

#include "store_int.h"

/*
 * revtrail calls SQLite from one thread at a time (librdkafka's callbacks
 * run inside our own poll calls; ingest's writer thread has the store only
 * between a submit and the wait after it, writer.c), so its mutexes guard
 * nothing here: they cost about 60 lock pairs per stored event. Memory
 * statistics cost a little per allocation and are kept only for a reader
 * that bounds SQLite's heap (sqlite3_hard_heap_limit64 counts through
 * them). sqlite3_config only works before the library initialises, hence
 * once: the first store opened decides. Two threads using stores at the
 * same time would need MULTITHREAD instead.
 */
void store_sqlite_config(bool memstatus)
{
	static bool done;

	if (done)
		return;
	done = true;
	sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, memstatus ? 1 : 0);
}

void store_close(struct store *st)
{
	if (!st)
		return;
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(st->st[i]);
	if (st->db)
		sqlite3_close(st->db);
	store_unlock(st->lock);           /* after the last write */
	free(st->cluster);
	rt_arena_release(&st->scratch);
	rt_buf_release(&st->buf);
	rt_buf_release(&st->buf2);
	free(st->near);
	free(st->objlist.o);
	store_seen_free(&st->seen);
	store_capcache_free(st);
	if (st->chg) {
		store_changes_free(st->chg);
		free(st->chg);
	}
	free(st->rd);
	free(st);
}
