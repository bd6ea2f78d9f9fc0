/*
 * writer.c: pipeline_commit on a thread of its own, so that reading and
 * classifying the next batch overlaps the commit of the last one.
 *
 * The commits are much of ingest's time when many of its records are
 * stored, and some of it even when few are; in line with each other the
 * two stages take their sum, side by side their maximum.
 *
 * The store belongs to one thread at a time: to the writer from a submit
 * until the wait after it returns, to the caller otherwise. The mutex
 * hand-off orders every access, which is what SQLite's single-thread mode
 * asks (store/store.c): never two threads in it at once. Between batches the
 * writer also does the store's idle work (store_idle: copying the WAL back
 * into the database), which a wait waits for too.
 *
 * A commit's counters go to a local store_stats first and are added to the
 * caller's under the mutex, so pipeline_writer_stats can read them while a
 * commit runs (consume's status line does).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "revtrail/writer.h"

struct pipeline_writer {
	struct pipeline_db *db;
	struct store *st;
	struct store_stats *stats;
	pipeline_writer_check_fn check;    /* before each commit, or NULL */
	void *check_ctx;
	pipeline_writer_done_fn done;      /* after each commit, or NULL */
	void *done_ctx;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct corr_batch *job;         /* in flight: submitted, not done */
	int err;                        /* of the last commit; sticky */
	bool idle_due;                  /* store_idle after the last commit */
	bool idle_busy;                 /* ... running now */
	unsigned waiting;               /* callers blocked for the writer */
	bool quit;
	bool track;                     /* store_track_incidents is on */
	struct store_changes changes;   /* of committed batches, not taken */
};

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* With w->mu held: the job, or else the idle work, outside the lock. */
static void writer_step(struct pipeline_writer *w)
{
	if (w->job) {
		struct store_stats s = { 0 };
		int64_t start = mono_ns();
		int err = 0;

		pthread_mutex_unlock(&w->mu);
		if (w->check)
			err = w->check(w->check_ctx, w->st, w->job);
		if (!err)
			err = pipeline_commit(w->db, w->job, &s);
		if (w->done)
			w->done(w->done_ctx, err, mono_ns() - start);
		pthread_mutex_lock(&w->mu);
		if (w->track) {
			int e = store_changes_settle(w->st, err ? NULL :
						     &w->changes);

			err = err ? err : e;
		}
		if (!err)
			store_stats_add(w->stats, &s);
		w->err = err;
		w->job = NULL;
		/* Idle only when nobody waits: a reader blocked on this
		 * commit has its next batch ready, which comes first. */
		w->idle_due = !err && !w->waiting;
	} else {
		/* A batch submitted meanwhile waits for this; the reader
		 * does not, unless it fills the next one first. */
		w->idle_due = false;
		w->idle_busy = true;
		pthread_mutex_unlock(&w->mu);
		store_idle(w->st);
		pthread_mutex_lock(&w->mu);
		w->idle_busy = false;
	}
	pthread_cond_broadcast(&w->cv);
}

static void *writer_main(void *arg)
{
	struct pipeline_writer *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->job && !w->quit && !w->idle_due)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->job && w->quit)
			break;
		writer_step(w);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int pipeline_writer_new(struct pipeline_db *db, struct store_stats *stats,
			struct pipeline_writer **out)
{
	struct pipeline_writer *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int rc;

	*out = NULL;
	if (!w)
		return RT_ENOMEM;
	w->db = db;
	w->st = pipeline_db_store(db);
	w->stats = stats;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	/* Signals stay with the caller's thread, whose handlers expect to
	 * interrupt its reads; the writer inherits a full mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return RT_ENOMEM;
	}
	*out = w;
	return 0;
}

/* With w->mu held: until no batch is in flight (and, when all, no idle
 * work either: the caller then has the store back). */
static int idle_locked(struct pipeline_writer *w, bool all)
{
	w->waiting++;
	while (w->job || (all && w->idle_busy))
		pthread_cond_wait(&w->cv, &w->mu);
	w->waiting--;
	if (all)
		w->idle_due = false;
	return w->err;
}

int pipeline_writer_wait(struct pipeline_writer *w)
{
	int err;

	pthread_mutex_lock(&w->mu);
	err = idle_locked(w, true);
	pthread_mutex_unlock(&w->mu);
	return err;
}

void pipeline_writer_set_done(struct pipeline_writer *w,
			      pipeline_writer_done_fn fn, void *ctx)
{
	pthread_mutex_lock(&w->mu);
	w->done = fn;
	w->done_ctx = ctx;
	pthread_mutex_unlock(&w->mu);
}

void pipeline_writer_set_check(struct pipeline_writer *w,
			       pipeline_writer_check_fn fn, void *ctx)
{
	pthread_mutex_lock(&w->mu);
	w->check = fn;
	w->check_ctx = ctx;
	pthread_mutex_unlock(&w->mu);
}

int pipeline_writer_done(struct pipeline_writer *w)
{
	int rc;

	pthread_mutex_lock(&w->mu);
	rc = w->err ? w->err : !w->job;
	pthread_mutex_unlock(&w->mu);
	return rc;
}

/* Holding w->mu keeps the writer out of writer_step: it needs the mutex
 * to take a job or start idle work. */
int pipeline_writer_try_read(struct pipeline_writer *w, void (*fn)(void *),
			     void *ctx)
{
	bool idle;

	pthread_mutex_lock(&w->mu);
	idle = !w->job && !w->idle_busy;
	if (idle)
		fn(ctx);
	pthread_mutex_unlock(&w->mu);
	return idle;
}

void pipeline_writer_stats(struct pipeline_writer *w, struct store_stats *out)
{
	pthread_mutex_lock(&w->mu);
	*out = *w->stats;
	pthread_mutex_unlock(&w->mu);
}

int pipeline_writer_submit(struct pipeline_writer *w, struct corr_batch *b)
{
	int err;

	pthread_mutex_lock(&w->mu);
	err = idle_locked(w, false);
	if (!err) {
		w->job = b;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return err;
}

int pipeline_writer_track_incidents(struct pipeline_writer *w)
{
	int err;

	pthread_mutex_lock(&w->mu);
	idle_locked(w, true);
	if (!(err = store_track_incidents(w->st)))
		w->track = true;
	pthread_mutex_unlock(&w->mu);
	return err;
}

void pipeline_writer_take_changes(struct pipeline_writer *w,
			       struct store_changes *out)
{
	struct store_changes none = { 0 };

	store_changes_free(out);
	pthread_mutex_lock(&w->mu);
	*out = w->changes;
	w->changes = none;
	pthread_mutex_unlock(&w->mu);
}

void pipeline_writer_free(struct pipeline_writer *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	idle_locked(w, true);
	w->quit = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	store_changes_free(&w->changes);
	free(w);
}
