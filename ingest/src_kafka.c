/*
 * src_kafka.c: the Kafka source (see src_kafka.h): a librdkafka high-level
 * consumer with cooperative-sticky assignment whose offsets live in the
 * caller's database.
 *
 * Why it is built this way:
 * - enable.auto.commit and enable.auto.offset.store are off and cannot be
 *   turned on: the only offsets that count are the ones the caller wrote in
 *   the same transaction as the batch's effects. Kafka commits follow that
 *   transaction and serve lag tools and instances with separate databases.
 * - On assignment each partition starts at the database's next offset, or
 *   at the group's where that is later (another instance stored up to
 *   there: kafka_handover.h); a message below the next expected offset (a
 *   re-fetch after an offset reset, a redelivery) is skipped, so a batch is
 *   never applied twice.
 * - Each batch's Kafka commit is answered before the next batch goes to
 *   the database, so a database is at most one batch ahead of the group;
 *   a refusal that says the group moved on (or no answer) holds the
 *   pending batch until a rebalance or an accepted commit, and a lost
 *   assignment drops it.
 * - The caller may make a batch durable on a thread of its own (the
 *   durable hook): the next batch is read meanwhile, and Kafka hears of a
 *   batch only once the caller reports it written.
 * - On revoke the pending batch is committed before the partitions go,
 *   waiting for the caller's writer, and the Kafka commit is synchronous
 *   then, so the next owner starts exactly after it.
 * - Batches are bounded by messages and by time since their first message,
 *   so a quiet topic still commits promptly.
 * - Global topics (opts' global_topics, consume's --helm-topic) are read
 *   in full by a second handle of their own (src_kafka_global.c) into the
 *   same batches, their positions fenced and stored alike under a name no
 *   group partition can have, never committed to Kafka; the group is
 *   joined once they are read to their end (the block at the end).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "revtrail/rt_kit.h"
#include "revtrail/kafka.h"
#include "revtrail/log.h"
#include "kafka_global.h"

#include "kafka_handover.h"

/* What the source knows of one partition it has seen. */
struct kpart {
	const char *topic;      /* interned */
	int32_t partition;
	bool assigned, at_end, in_batch;
	bool global;            /* a global topic's: topic is prefixed */
	int64_t expected;       /* next offset to process; -1 = unknown */
	int64_t committed;      /* next offset in the database; -1 = unknown */
	int64_t submitted;      /* ... once every batch handed over is written */
	int64_t batch_start;    /* submitted when the batch first touched it */
};

struct ingest_kafka {
	struct ingest_kafka_opts o;
	rd_kafka_conf_t *conf;  /* owned until start hands it to rd_kafka_new */
	rd_kafka_t *rk;

	char **topics;          /* interned topic names */
	size_t ntopics, topcap;
	struct kpart *parts;
	size_t nparts, partcap;
	struct kpart *last;     /* lookup cache: messages come in runs */
	struct ingest_kafka_part *batch;   /* scratch for the commit hook */
	struct ingest_kafka_part *inflight;   /* handed over, not yet durable */
	size_t ninflight;

	size_t batch_msgs, batch_bytes;
	int64_t deadline_ms;    /* commit the batch at this time */
	int fatal;              /* first error that stops the source */
	rd_kafka_resp_err_t last_err;
	int64_t last_err_ms;
	bool suspect;           /* a transport error: probe the brokers */
	bool kafka_behind;      /* commits held back while the brokers were
	                         * down, or failed since */
	bool held;              /* the group moved on (a commit said so): no
	                         * batch is written, the partitions are paused,
	                         * until a rebalance or a commit goes through */
	int64_t retry_ms;       /* catch up again at this time ... */
	int64_t retry_step_ms;  /* ... which backs off while it fails */
	int64_t last_probe_ms;
	bool ever_assigned;     /* an assignment was served (librdkafka#4312) */
	bool leak_handle;       /* see dodge_4312 */
	struct kglobal *g;      /* the global topics' handle, or NULL */
	bool joined;            /* subscribed (at once without g) */
	unsigned gtick;         /* loops since g was last polled */
	int64_t boot_log_ms;
	struct ingest_kafka_stats st;
};

/* The global topics (kafka_global.h), at the end of this file. */
static int start_global(struct ingest_kafka *k, char *err, size_t errsz);
static int global_emit(void *ctx, struct rt_record *rec);
static void global_step(struct ingest_kafka *k, int timeout_ms);
static int take(struct ingest_kafka *k, const rd_kafka_message_t *m,
		struct kpart *p);

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The source's lines (component "kafka"); librdkafka's own come through
 * on_log as "librdkafka". State changes are info, the rest name their
 * level. */
#define logf_(k, ...) log_at((k), RT_LOG_INFO, __VA_ARGS__)
static void log_at(struct ingest_kafka *k, enum rt_log_level level,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void log_at(struct ingest_kafka *k, enum rt_log_level level,
		   const char *fmt, ...)
{
	va_list ap;

	(void)k;
	va_start(ap, fmt);
	rt_logv(level, "kafka", fmt, ap);
	va_end(ap);
}

static void set_err(char *err, size_t errsz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errsz)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
}

/* ---- partitions ------------------------------------------------------ */

static const char *intern_topic(struct ingest_kafka *k, const char *name)
{
	for (size_t i = 0; i < k->ntopics; i++)
		if (!strcmp(k->topics[i], name))
			return k->topics[i];
	if (RT_GROW(k->topics, k->ntopics + 1, k->topcap))
		return NULL;
	if (!(k->topics[k->ntopics] = strdup(name)))
		return NULL;
	return k->topics[k->ntopics++];
}

static struct kpart *part_find(struct ingest_kafka *k, const char *topic,
			       int32_t partition)
{
	if (k->last && k->last->partition == partition &&
	    !strcmp(k->last->topic, topic))
		return k->last;
	for (size_t i = 0; i < k->nparts; i++)
		if (k->parts[i].partition == partition &&
		    !strcmp(k->parts[i].topic, topic))
			return k->last = &k->parts[i];
	return NULL;
}

/* The partition's entry, created on first sight. NULL on ENOMEM. */
static struct kpart *part_get(struct ingest_kafka *k, const char *topic,
			      int32_t partition)
{
	struct kpart *p = part_find(k, topic, partition);
	const char *name;

	if (p)
		return p;
	if (k->nparts == k->partcap) {
		size_t cap = k->partcap ? k->partcap * 2 : 16;
		struct kpart *grown = realloc(k->parts, cap * sizeof(*grown));
		struct ingest_kafka_part *b;

		if (!grown)
			return NULL;
		k->parts = grown;
		k->last = NULL;
		if (!(b = realloc(k->batch, cap * sizeof(*b))))
			return NULL;
		k->batch = b;
		if (!(b = realloc(k->inflight, cap * sizeof(*b))))
			return NULL;
		k->inflight = b;
		k->partcap = cap;
	}
	if (!(name = intern_topic(k, topic)))
		return NULL;
	p = &k->parts[k->nparts++];
	*p = (struct kpart){ .topic = name, .partition = partition,
			     .expected = -1, .committed = -1,
			     .submitted = -1, .batch_start = -1 };
	return k->last = p;
}

/* ---- configuration --------------------------------------------------- */

/* revtrail's defaults; a property set later (-F, -X) overrides them. */
static int conf_defaults(struct ingest_kafka *k, char *err, size_t errsz)
{
	static const char *const defaults[][2] = {
		{ "client.id", "revtrail" },
		{ "partition.assignment.strategy", "cooperative-sticky" },
		{ "enable.auto.commit", "false" },
		{ "enable.auto.offset.store", "false" },
		{ "auto.offset.reset", "earliest" },
		/* A partition read to its end is known to be caught up,
		 * even one nothing was ever read from (lag 0, /readyz). */
		{ "enable.partition.eof", "true" },
		/* A dead peer's partitions move within 10 s, not 45. */
		{ "session.timeout.ms", "10000" },
		{ "heartbeat.interval.ms", "3000" },
	};
	char errstr[512];

	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (rd_kafka_conf_set(k->conf, defaults[i][0], defaults[i][1],
				      errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
			set_err(err, errsz, "%s: %s", defaults[i][0], errstr);
			return RT_EKAFKA;
		}
	return 0;
}

int ingest_kafka_set(struct ingest_kafka *k, const char *key, const char *val,
		     char *err, size_t errsz)
{
	char errstr[512];

	if (!k->conf) {
		set_err(err, errsz, "%s: the consumer is already started", key);
		return RT_EINVAL;
	}
	if (!strcmp(key, "enable.auto.commit") ||
	    !strcmp(key, "enable.auto.offset.store")) {
		set_err(err, errsz, "%s: cannot be set: revtrail commits "
			"offsets itself, after the database transaction", key);
		return RT_EINVAL;
	}
	if (rd_kafka_conf_set(k->conf, key, val, errstr, sizeof(errstr)) !=
	    RD_KAFKA_CONF_OK) {
		set_err(err, errsz, "%s: %s", key, errstr);
		return RT_EINVAL;
	}
	return 0;
}

int ingest_kafka_prop_kv(const char *kv, ingest_kafka_prop_fn fn, void *ctx,
			 char *err, size_t errsz)
{
	const char *eq = strchr(kv, '=');
	char key[256];
	size_t n;

	if (!eq || eq == kv) {
		set_err(err, errsz, "'%s': expected key=value", kv);
		return RT_EINVAL;
	}
	n = (size_t)(eq - kv);
	if (n >= sizeof(key)) {
		set_err(err, errsz, "'%.40s...': key too long", kv);
		return RT_EINVAL;
	}
	memcpy(key, kv, n);
	key[n] = '\0';
	return fn(ctx, key, eq + 1, err, errsz);
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' ||
			 e[-1] == '\n'))
		*--e = '\0';
	return s;
}

int ingest_kafka_props_file(const char *path, ingest_kafka_prop_fn fn,
			    void *ctx, char *err, size_t errsz)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *s, *eq, sub[512];
	size_t cap = 0;
	int lineno = 0, rc = 0;

	if (!f) {
		set_err(err, errsz, "%s: %s", path, strerror(errno));
		return RT_EINVAL;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		s = trim(line);
		if (!*s || *s == '#' || *s == '!')
			continue;
		if (!(eq = strchr(s, '='))) {
			set_err(err, errsz, "%s:%d: expected key=value", path,
				lineno);
			rc = RT_EINVAL;
			break;
		}
		*eq = '\0';
		if ((rc = fn(ctx, trim(s), trim(eq + 1), sub, sizeof(sub)))) {
			set_err(err, errsz, "%s:%d: %s", path, lineno, sub);
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

static int set_prop(void *ctx, const char *key, const char *val, char *err,
		    size_t errsz)
{
	return ingest_kafka_set(ctx, key, val, err, errsz);
}

int ingest_kafka_load_file(struct ingest_kafka *k, const char *path,
			   char *err, size_t errsz)
{
	return ingest_kafka_props_file(path, set_prop, k, err, errsz);
}

int ingest_kafka_set_kv(struct ingest_kafka *k, const char *kv, char *err,
			size_t errsz)
{
	return ingest_kafka_prop_kv(kv, set_prop, k, err, errsz);
}

/* ---- callbacks ------------------------------------------------------- */

/*
 * The group moved to a new generation without this member, or is
 * rebalancing: the partitions may be someone else's already, who starts
 * at the group's offset. Writing more batches would put them in two
 * databases, so none is written until the rebalance callback says what
 * is ours (or a retried commit goes through); the partitions are paused
 * so the pending batch stops growing.
 */
static void hold(struct ingest_kafka *k, const char *why)
{
	if (k->held)
		return;
	k->held = true;
	log_at(k, RT_LOG_WARN, "%s: holding the batch until the group "
	       "answers", why);
	ingest_kafka_pause_assigned(k->rk, true);
}

static void unhold(struct ingest_kafka *k)
{
	if (!k->held)
		return;
	k->held = false;
	ingest_kafka_pause_assigned(k->rk, false);
}

/* Stores nothing in Kafka but the group's offsets; the database has the
 * real ones, so a failed Kafka commit is counted and reported, no more. */
static void on_offset_commit(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			     rd_kafka_topic_partition_list_t *offsets,
			     void *opaque)
{
	struct ingest_kafka *k = opaque;

	(void)rk;
	(void)offsets;
	if (!err || err == RD_KAFKA_RESP_ERR__NO_OFFSET) {
		k->retry_step_ms = 0;
		unhold(k);
		return;
	}
	if (ingest_kafka_moved_on(err))
		hold(k, "the group moved on");
	/* A commit refused while the coordinator is still being found after
	 * an outage would otherwise wait for the next batch or rebalance,
	 * however long a quiet topic takes: the poll loop tells Kafka the
	 * database's positions again, backing off from 1 s to 1 min. */
	k->kafka_behind = true;
	k->retry_step_ms = k->retry_step_ms ? k->retry_step_ms * 2 : 1000;
	if (k->retry_step_ms > 60000)
		k->retry_step_ms = 60000;
	k->retry_ms = now_ms() + k->retry_step_ms;
	k->st.kafka_commit_errors++;
	log_at(k, RT_LOG_WARN, "offset commit failed (database is ahead, no "
	       "loss): %s", rd_kafka_err2str(err));
}

/* One line per distinct error, at most one every 5 s for repeats: a
 * broker outage must be visible without flooding the journal. */
static void report_error(struct ingest_kafka *k, rd_kafka_resp_err_t err,
			 const char *what)
{
	int64_t now = now_ms();

	k->st.errors++;
	/* brokers_down() said it already, in words. */
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
		return;
	if (err == k->last_err && now - k->last_err_ms < 5000)
		return;
	k->last_err = err;
	k->last_err_ms = now;
	log_at(k, RT_LOG_WARN, "%s (%s)", what, rd_kafka_err2name(err));
}

static void brokers_down(struct ingest_kafka *k)
{
	if (k->st.brokers_down)
		return;
	k->st.brokers_down = true;
	log_at(k, RT_LOG_WARN, "all brokers are down; retrying with backoff, "
	       "nothing is committed meanwhile");
}

static void catch_up(struct ingest_kafka *k);

static void brokers_up(struct ingest_kafka *k)
{
	k->suspect = false;
	if (!k->st.brokers_down)
		return;
	k->st.brokers_down = false;
	logf_(k, "brokers reachable again; resuming");
	if (k->kafka_behind)
		catch_up(k);
}

/*
 * With every broker down, Kafka is not told: librdkafka would park the
 * commit until a coordinator answers, and its close (even rd_kafka_destroy)
 * then waits session.timeout.ms for it. The database has the positions;
 * catch_up tells Kafka once a broker answers.
 */
static bool hold_commit(struct ingest_kafka *k)
{
	if (k->st.brokers_down)
		k->kafka_behind = true;
	return k->st.brokers_down;
}

/*
 * librdkafka says _ALL_BROKERS_DOWN only when every connection it knows of
 * is down, which a group coordinator connection can delay for long; so a
 * transport error makes the state suspect and a metadata probe (every 2 s,
 * while nothing else shows life) decides. An idle connection closed by the
 * broker is a transport error too: the probe clears it silently.
 */
#define PROBE_EVERY_MS 2000
#define PROBE_TIMEOUT_MS 500

static void probe(struct ingest_kafka *k)
{
	const struct rd_kafka_metadata *md = NULL;
	int64_t now = now_ms();
	rd_kafka_resp_err_t e;

	if ((!k->suspect && !k->st.brokers_down) ||
	    now - k->last_probe_ms < PROBE_EVERY_MS)
		return;
	k->last_probe_ms = now;
	e = rd_kafka_metadata(k->rk, 0, NULL, &md, PROBE_TIMEOUT_MS);
	if (md)
		rd_kafka_metadata_destroy(md);
	if (!e)
		brokers_up(k);
	else if (k->suspect)
		brokers_down(k);
}

/* librdkafka's own lines, which it would print as "%3|...|FAIL|..." on
 * stderr: the same format, level and escaping as everything else. Called
 * from librdkafka's threads (rt_log is thread-safe). */
static void on_log(const rd_kafka_t *rk, int level, const char *fac,
		   const char *buf)
{
	(void)rk;
	rt_log_fac(rt_log_level_from_syslog(level), "librdkafka", fac, buf);
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	struct ingest_kafka *k = opaque;
	char fatal[512];

	if (err == RD_KAFKA_RESP_ERR__FATAL) {
		rd_kafka_fatal_error(rk, fatal, sizeof(fatal));
		log_at(k, RT_LOG_ERROR, "fatal error: %s", fatal);
		if (!k->fatal)
			k->fatal = RT_EKAFKA;
		return;
	}
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
		brokers_down(k);
	else if (err == RD_KAFKA_RESP_ERR__TRANSPORT ||
		 err == RD_KAFKA_RESP_ERR__RESOLVE)
		k->suspect = true;
	report_error(k, (rd_kafka_resp_err_t)err, reason);
}

/* How a database commit is passed on to Kafka. */
enum kafka_tell { TELL_ASYNC, TELL_SYNC, TELL_NONE };

static int flush(struct ingest_kafka *k, enum kafka_tell tell);
static void settle(struct ingest_kafka *k, enum kafka_tell tell);
static int wait_durable(struct ingest_kafka *k);
static int confirm_inflight(struct ingest_kafka *k, enum kafka_tell tell);

static int64_t start_offset(const struct ingest_kafka *k)
{
	switch (k->o.start) {
	case INGEST_KAFKA_START_EARLIEST:
		return RD_KAFKA_OFFSET_BEGINNING;
	case INGEST_KAFKA_START_LATEST:
		return RD_KAFKA_OFFSET_END;
	default:
		return RD_KAFKA_OFFSET_INVALID;   /* committed, else reset */
	}
}

/* The group's offsets start where the database is: a partition resumed
 * from a database ahead of the group (or the group never saw it) would
 * otherwise show lag in Kafka's tools until its next batch, however long
 * a quiet topic takes to give one. parts' offsets are the stored ones
 * where the database has them (>= 0), else logical ones. */
static void commit_stored(struct ingest_kafka *k,
			  const rd_kafka_topic_partition_list_t *parts)
{
	rd_kafka_topic_partition_list_t *l;

	if (hold_commit(k))
		return;
	l = ingest_kafka_stored_only(parts);
	if (l->cnt)
		rd_kafka_commit(k->rk, l, 1);
	rd_kafka_topic_partition_list_destroy(l);
}

/* The database's positions of the partitions assigned, held back while
 * the brokers were down. */
static void catch_up(struct ingest_kafka *k)
{
	rd_kafka_topic_partition_list_t *l =
		rd_kafka_topic_partition_list_new((int)k->nparts);

	k->kafka_behind = false;
	for (size_t i = 0; i < k->nparts; i++)
		if (k->parts[i].assigned)
			rd_kafka_topic_partition_list_add(
				l, k->parts[i].topic,
				k->parts[i].partition)->offset =
				k->parts[i].committed;
	commit_stored(k, l);
	rd_kafka_topic_partition_list_destroy(l);
}

/* How long an assignment waits for the group's offsets. */
#define GROUP_OFFSETS_MS 5000

/*
 * A partition another instance owned since this database last stored it
 * starts after that instance's commits, the group's offset, not at this
 * database's older row: each database then holds what its instance owned,
 * with a gap where another did, and the fleet holds every message once.
 * The row stays as it is (submitted), so the first batch's fence still
 * finds the database where it left it, and that batch records the jump.
 */
static void resume_after_owner(struct ingest_kafka *k,
			       rd_kafka_topic_partition_list_t *parts)
{
	int64_t *skipped;
	rd_kafka_resp_err_t e;

	if (k->st.brokers_down || !parts->cnt)
		return;
	if (!(skipped = calloc((size_t)parts->cnt, sizeof(*skipped)))) {
		k->fatal = RT_ENOMEM;
		return;
	}
	if ((e = ingest_kafka_group_ahead(k->rk, parts, skipped,
					  GROUP_OFFSETS_MS)))
		log_at(k, RT_LOG_WARN, "the group's offsets: %s; resuming from "
		       "the database's, which may store again what another "
		       "instance stored", rd_kafka_err2str(e));
	for (int i = 0; !e && i < parts->cnt; i++) {
		rd_kafka_topic_partition_t *tp = &parts->elems[i];
		struct kpart *p = part_find(k, tp->topic, tp->partition);

		if (!skipped[i] || !p)
			continue;
		log_at(k, RT_LOG_INFO, "%s[%d]: the group is at %" PRId64
		       ", this database at %" PRId64 ": another instance "
		       "stored those; starting at the group's", p->topic,
		       p->partition, tp->offset, p->submitted);
		p->expected = p->committed = tp->offset;
		k->st.handover_skipped += (uint64_t)skipped[i];
	}
	free(skipped);
}

static void on_assign(struct ingest_kafka *k, rd_kafka_t *rk,
		      rd_kafka_topic_partition_list_t *parts, bool coop)
{
	static const char *const start_name[] = { "group", "earliest",
						  "latest" };
	char line[1024];
	size_t len = 0;

	/* The stored offsets read below must include the batch in flight. */
	if (!k->fatal)
		confirm_inflight(k, TELL_SYNC);
	for (int i = 0; i < parts->cnt; i++) {
		rd_kafka_topic_partition_t *tp = &parts->elems[i];
		struct kpart *p = part_get(k, tp->topic, tp->partition);
		int64_t next = -1;
		int rc = 0;

		if (!p) {
			k->fatal = RT_ENOMEM;
			break;
		}
		if (k->o.hooks.stored_offset)
			rc = k->o.hooks.stored_offset(k->o.hooks.ctx, p->topic,
						      p->partition, &next);
		if (rc) {
			log_at(k, RT_LOG_ERROR, "%s[%d]: cannot read the "
			       "stored offset: %s", p->topic, p->partition,
			       rt_strerror(rc));
			k->fatal = rc;
			next = -1;
		}
		tp->offset = next >= 0 ? next : start_offset(k);
		p->assigned = true;
		p->at_end = p->in_batch = false;
		p->expected = p->committed = p->submitted = next;
	}
	if (!k->fatal)
		resume_after_owner(k, parts);
	for (int i = 0; i < parts->cnt && len < sizeof(line) - 64; i++) {
		const rd_kafka_topic_partition_t *tp = &parts->elems[i];
		int w = tp->offset >= 0 ?
			snprintf(line + len, sizeof(line) - len,
				 " %s[%d]@%" PRId64, tp->topic, tp->partition,
				 tp->offset) :
			snprintf(line + len, sizeof(line) - len, " %s[%d]@%s",
				 tp->topic, tp->partition,
				 start_name[k->o.start]);

		len += w > 0 ? (size_t)w : 0;
	}
	if (coop) {
		rd_kafka_error_t *e = rd_kafka_incremental_assign(rk, parts);

		if (e) {
			log_at(k, RT_LOG_ERROR, "incremental assign: %s",
			       rd_kafka_error_string(e));
			rd_kafka_error_destroy(e);
		}
	} else {
		rd_kafka_assign(rk, parts);
	}
	/* Paused when a hold took them away, they are ours again. */
	rd_kafka_resume_partitions(rk, parts);
	commit_stored(k, parts);
	k->st.assigned += parts->cnt;
	if (parts->cnt)
		logf_(k, "assigned %d partition(s):%s", parts->cnt,
		      len ? line : "");
}

/* The pending batch forgotten (the drop hook): its messages are read
 * again by the partitions' next owner. */
static void drop_pending(struct ingest_kafka *k)
{
	for (size_t i = 0; i < k->nparts; i++) {
		struct kpart *p = &k->parts[i];

		if (p->in_batch) {
			p->expected = p->submitted;
			p->in_batch = false;
		}
	}
	k->st.handover_dropped += k->batch_msgs;
	k->batch_msgs = k->batch_bytes = 0;
	k->o.hooks.drop(k->o.hooks.ctx);
}

/* A lost assignment: the batch in flight is written (the group may not
 * know of it: the one batch two databases can share), the pending one is
 * dropped where the caller can. */
static void give_up_lost(struct ingest_kafka *k)
{
	size_t n = k->batch_msgs;

	if (confirm_inflight(k, TELL_NONE))
		return;
	if (k->o.hooks.drop) {
		drop_pending(k);
		log_at(k, RT_LOG_WARN, "assignment lost; %zu message(s) not "
		       "yet written are left to the next owner", n);
	} else if (!flush(k, TELL_NONE)) {
		log_at(k, RT_LOG_WARN, "assignment lost; batch kept in the "
		       "database only");
	}
}

static void on_revoke(struct ingest_kafka *k, rd_kafka_t *rk,
		      rd_kafka_topic_partition_list_t *parts, bool coop)
{
	bool lost = rd_kafka_assignment_lost(rk);

	k->st.assignments_lost += lost;
	/* The batch's effects go to the database first: whoever gets these
	 * partitions next starts after them. A lost assignment may already
	 * belong to someone else, who starts at the group's offset: Kafka is
	 * not told then, and the batch not yet written is left to them. */
	if (!k->fatal && lost)
		give_up_lost(k);
	else if (!k->fatal)
		flush(k, TELL_SYNC);
	for (int i = 0; i < parts->cnt; i++) {
		struct kpart *p = part_find(k, parts->elems[i].topic,
					    parts->elems[i].partition);

		if (p && p->assigned) {
			p->assigned = false;
			k->st.assigned--;
		}
	}
	if (coop) {
		rd_kafka_error_t *e = rd_kafka_incremental_unassign(rk, parts);

		if (e) {
			log_at(k, RT_LOG_ERROR, "incremental unassign: %s",
			       rd_kafka_error_string(e));
			rd_kafka_error_destroy(e);
		}
	} else {
		rd_kafka_assign(rk, NULL);
	}
	if (parts->cnt)
		logf_(k, "revoked %d partition(s)", parts->cnt);
}

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
			 rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	struct ingest_kafka *k = opaque;
	bool coop = !strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE");
	bool held = k->held;

	/* Not a sign of brokers: a session that timed out with every broker
	 * down revokes too. Only a broker's answer clears brokers_down. */
	k->st.rebalances++;
	k->held = false;
	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		k->ever_assigned = true;
		on_assign(k, rk, parts, coop);
	} else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
		on_revoke(k, rk, parts, coop);
	} else {
		report_error(k, err, "rebalance failed");
		on_revoke(k, rk, parts, coop);
	}
	/* The rebalance said what is ours: what is left goes on, unless a
	 * commit in the callback held it again. */
	if (held && !k->held) {
		k->held = true;
		unhold(k);
	}
}

/* ---- lifecycle ------------------------------------------------------- */

struct ingest_kafka *ingest_kafka_new(const struct ingest_kafka_opts *opts,
				      char *err, size_t errsz)
{
	struct ingest_kafka *k = calloc(1, sizeof(*k));

	if (!k) {
		set_err(err, errsz, "out of memory");
		return NULL;
	}
	k->o = *opts;
	if (!k->o.batch_messages)
		k->o.batch_messages = INGEST_KAFKA_BATCH_MESSAGES;
	if (!k->o.batch_ms)
		k->o.batch_ms = INGEST_KAFKA_BATCH_MS;
	if (!k->o.batch_bytes)
		k->o.batch_bytes = INGEST_KAFKA_BATCH_BYTES;
	if (!(k->conf = rd_kafka_conf_new()) ||
	    conf_defaults(k, err, errsz) ||
	    (opts->brokers &&
	     ingest_kafka_set(k, "bootstrap.servers", opts->brokers, err,
			      errsz)) ||
	    (opts->group &&
	     ingest_kafka_set(k, "group.id", opts->group, err, errsz))) {
		ingest_kafka_free(k);
		return NULL;
	}
	return k;
}

void ingest_kafka_free(struct ingest_kafka *k)
{
	if (!k)
		return;
	if (k->rk && !k->leak_handle)
		rd_kafka_destroy_flags(k->rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
	kglobal_free(k->g);
	if (k->conf)
		rd_kafka_conf_destroy(k->conf);
	for (size_t i = 0; i < k->ntopics; i++)
		free(k->topics[i]);
	free(k->topics);
	free(k->parts);
	free(k->batch);
	free(k->inflight);
	free(k);
}

static int subscribe(struct ingest_kafka *k, char *err, size_t errsz)
{
	rd_kafka_topic_partition_list_t *l =
		rd_kafka_topic_partition_list_new(k->o.ntopics);
	rd_kafka_resp_err_t e;

	for (int i = 0; i < k->o.ntopics; i++)
		rd_kafka_topic_partition_list_add(l, k->o.topics[i],
						  RD_KAFKA_PARTITION_UA);
	e = rd_kafka_subscribe(k->rk, l);
	rd_kafka_topic_partition_list_destroy(l);
	if (e) {
		set_err(err, errsz, "subscribe: %s", rd_kafka_err2str(e));
		return RT_EKAFKA;
	}
	return 0;
}

int ingest_kafka_start(struct ingest_kafka *k, char *err, size_t errsz)
{
	char errstr[512], gid[8];
	size_t n = sizeof(gid);

	if (!k->conf) {
		set_err(err, errsz, "already started");
		return RT_EINVAL;
	}
	if (k->o.ntopics < 1 || !k->o.hooks.emit || !k->o.hooks.commit ||
	    !k->o.in || !k->o.arena) {
		set_err(err, errsz, "no topic, decoder or hooks");
		return RT_EINVAL;
	}
	if (rd_kafka_conf_get(k->conf, "group.id", gid, &n) !=
	    RD_KAFKA_CONF_OK || !gid[0]) {
		set_err(err, errsz, "group.id: a consumer group is required");
		return RT_EINVAL;
	}
	n = sizeof(gid);
	if (rd_kafka_conf_get(k->conf, "bootstrap.servers", gid, &n) !=
	    RD_KAFKA_CONF_OK || n <= 1) {
		set_err(err, errsz, "bootstrap.servers: no brokers given (-b)");
		return RT_EINVAL;
	}
	if (k->o.nglobal && start_global(k, err, errsz))
		return RT_EKAFKA;
	rd_kafka_conf_set_opaque(k->conf, k);
	rd_kafka_conf_set_error_cb(k->conf, on_error);
	rd_kafka_conf_set_log_cb(k->conf, on_log);
	rd_kafka_conf_set_rebalance_cb(k->conf, on_rebalance);
	rd_kafka_conf_set_offset_commit_cb(k->conf, on_offset_commit);
	/* rd_kafka_new owns conf from here on, even when it fails. */
	k->rk = rd_kafka_new(RD_KAFKA_CONSUMER, k->conf, errstr, sizeof(errstr));
	if (!k->rk) {
		set_err(err, errsz, "%s", errstr);
		rd_kafka_conf_destroy(k->conf);
		k->conf = NULL;
		return RT_EKAFKA;
	}
	k->conf = NULL;
	/* Messages and callbacks all come through rd_kafka_consumer_poll. */
	rd_kafka_poll_set_consumer(k->rk);
	/* With global topics, the group is joined once they are read. */
	if (k->g)
		return 0;
	k->joined = true;
	return subscribe(k, err, errsz);
}

/* ---- batches --------------------------------------------------------- */

/* How long a batch's commit waits for the group's answer. */
#define COMMIT_WAIT_MS 3000

/* The group did not answer a commit in time: until it takes one (the poll
 * loop tells it the database's positions again, as after a refusal), no
 * more batches are written. */
static void no_answer(struct ingest_kafka *k)
{
	k->kafka_behind = true;
	if (!k->retry_step_ms)
		k->retry_step_ms = 1000;
	k->retry_ms = now_ms() + k->retry_step_ms;
	hold(k, "the group does not answer");
}

/* Tells Kafka the n positions of parts. */
static void kafka_commit(struct ingest_kafka *k,
			 const struct ingest_kafka_part *parts, size_t n,
			 bool sync)
{
	rd_kafka_topic_partition_list_t *l;
	rd_kafka_resp_err_t e;

	l = rd_kafka_topic_partition_list_new((int)n);
	for (size_t i = 0; i < n; i++)
		if (!parts[i].global)
			rd_kafka_topic_partition_list_add(
				l, parts[i].topic, parts[i].partition)->offset =
				parts[i].next;
	/* A batch of global topics alone has nothing to tell the group, nor
	 * to hold for it. */
	if (!l->cnt || hold_commit(k)) {
		if (l->cnt && sync)
			hold(k, "no broker answers");
		rd_kafka_topic_partition_list_destroy(l);
		return;
	}
	/* A failure is counted and logged by on_offset_commit, which hears
	 * of these commits too; holding cannot wait for it. */
	if (!sync)
		rd_kafka_commit(k->rk, l, 1);
	else if ((e = ingest_kafka_commit_wait(k->rk, l, COMMIT_WAIT_MS)) ==
		 RD_KAFKA_RESP_ERR__TIMED_OUT)
		no_answer(k);
	else if (ingest_kafka_moved_on(e))
		hold(k, "the group moved on");
	rd_kafka_topic_partition_list_destroy(l);
}

static int db_failed(struct ingest_kafka *k, int rc)
{
	log_at(k, RT_LOG_ERROR, "database commit failed: %s; stopping, a "
	       "restart resumes from the last committed batch",
	       rt_strerror(rc));
	return k->fatal = rc;
}

/* The batch in flight is durable: its offsets count as committed, and
 * Kafka may hear of them now. */
static void settle(struct ingest_kafka *k, enum kafka_tell tell)
{
	if (!k->ninflight)
		return;
	for (size_t i = 0; i < k->ninflight; i++) {
		struct kpart *p = part_find(k, k->inflight[i].topic,
					    k->inflight[i].partition);

		if (p)
			p->committed = k->inflight[i].next;
	}
	k->st.batches++;
	if (tell != TELL_NONE)
		kafka_commit(k, k->inflight, k->ninflight, tell == TELL_SYNC);
	k->ninflight = 0;
}

/* Without waiting: settles the batch in flight once the caller has
 * written it. */
static int settle_if_durable(struct ingest_kafka *k)
{
	int rc;

	if (!k->ninflight || !k->o.hooks.durable)
		return 0;
	rc = k->o.hooks.durable(k->o.hooks.ctx, false);
	if (rc < 0)
		return db_failed(k, rc);
	if (rc == 1)
		settle(k, TELL_SYNC);
	return 0;
}

/* Until the batch in flight is written; 0 or the failed commit's error. */
static int wait_durable(struct ingest_kafka *k)
{
	int rc;

	if (k->ninflight && k->o.hooks.durable &&
	    (rc = k->o.hooks.durable(k->o.hooks.ctx, true)) < 0)
		return db_failed(k, rc);
	return 0;
}

/* The batch in flight written and, unless told not to, acknowledged by
 * the group before the next one goes to the database: so a database is
 * never more than one batch ahead of what the group knows, and a next
 * owner that starts at the group's offset stores at most that batch
 * again. */
static int confirm_inflight(struct ingest_kafka *k, enum kafka_tell tell)
{
	int rc;

	if (!k->ninflight)
		return 0;
	if ((rc = wait_durable(k)))
		return rc;
	settle(k, tell == TELL_NONE ? TELL_NONE : TELL_SYNC);
	return 0;
}

/* Hands the pending batch over: the database first, then Kafka. With
 * TELL_ASYNC it may still be in flight on return; otherwise it (and any
 * batch before it) is durable and Kafka is told as asked. */
static int flush(struct ingest_kafka *k, enum kafka_tell tell)
{
	size_t n = 0;
	int rc;

	if (k->fatal)
		return k->fatal;
	for (size_t i = 0; i < k->nparts; i++) {
		struct kpart *p = &k->parts[i];

		if (!p->in_batch)
			continue;
		k->batch[n++] = (struct ingest_kafka_part){
			.topic = p->topic, .partition = p->partition,
			.start = p->batch_start, .next = p->expected,
			.global = p->global };
	}
	if (n && (rc = confirm_inflight(k, tell)))
		return rc;
	if (k->held)
		return 0;       /* the batch waits for the rebalance */
	k->batch_msgs = k->batch_bytes = 0;
	if (n) {
		if ((rc = k->o.hooks.commit(k->o.hooks.ctx, k->batch, n)))
			return db_failed(k, rc);
		for (size_t i = 0; i < k->nparts; i++) {
			struct kpart *p = &k->parts[i];

			if (p->in_batch) {
				p->submitted = p->expected;
				p->in_batch = false;
			}
		}
		memcpy(k->inflight, k->batch, n * sizeof(*k->batch));
		k->ninflight = n;
	}
	if (k->o.hooks.durable && tell == TELL_ASYNC)
		return 0;
	if ((rc = wait_durable(k)))
		return rc;
	settle(k, tell == TELL_NONE ? TELL_NONE : TELL_SYNC);
	return 0;
}

int ingest_kafka_flush(struct ingest_kafka *k)
{
	return flush(k, TELL_ASYNC);
}

static int64_t message_time_ns(const rd_kafka_message_t *m)
{
	rd_kafka_timestamp_type_t type;
	int64_t ms = rd_kafka_message_timestamp(m, &type);

	return ms > 0 ? ms * 1000000 : 0;
}

static int decode(struct ingest_kafka *k, const rd_kafka_message_t *m,
		  struct kpart *p)
{
	const struct ingest_stats *s = ingest_stats(k->o.in);
	uint64_t rejects = s->rejects, records = s->records;
	struct rt_pos pos = { .source = p->topic, .offset = (uint64_t)m->offset,
			      .partition = p->partition,
			      .kafka_offset = m->offset };
	int rc;

	if (!m->payload || !m->len) {   /* a tombstone: nothing to read */
		k->st.rejects++;
		k->st.empty++;
		return 0;
	}
	rc = ingest_decode_message(k->o.in, m->payload, m->len, m->key,
				   m->key ? m->key_len : 0, message_time_ns(m),
				   &pos, k->o.arena,
				   p->global ? global_emit : k->o.hooks.emit,
				   p->global ? (void *)k : k->o.hooks.ctx);
	k->st.rejects += s->rejects - rejects;
	k->st.records += s->records - records;
	return rc;
}

static int handle_error(struct ingest_kafka *k, const rd_kafka_message_t *m)
{
	char what[512];
	const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : NULL;
	struct kpart *p;

	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		if (topic && (p = part_find(k, topic, m->partition)))
			p->at_end = true;
		return 0;
	}
	snprintf(what, sizeof(what), "%s%s%s: %s", topic ? topic : "",
		 topic ? " " : "", topic ? "partition" : "consumer",
		 rd_kafka_message_errstr(m));
	report_error(k, m->err, what);
	if (m->err == RD_KAFKA_RESP_ERR__FATAL && !k->fatal)
		k->fatal = RT_EKAFKA;
	return 0;
}

static int handle_message(struct ingest_kafka *k, const rd_kafka_message_t *m)
{
	struct kpart *p;

	if (m->err)
		return handle_error(k, m);
	if (!(p = part_get(k, rd_kafka_topic_name(m->rkt), m->partition)))
		return RT_ENOMEM;
	brokers_up(k);
	p->at_end = false;
	/* A message fetched before its partition was revoked belongs to the
	 * next owner now; one below the next expected offset is already in
	 * the database. */
	if (!p->assigned || (p->expected >= 0 && m->offset < p->expected)) {
		k->st.redelivered++;
		return 0;
	}
	return take(k, m, p);
}

/* m, of p and not yet processed, into the batch. */
static int take(struct ingest_kafka *k, const rd_kafka_message_t *m,
		struct kpart *p)
{
	int rc;

	if (!p->in_batch) {
		p->in_batch = true;
		p->batch_start = p->submitted;
	}
	if (!k->batch_msgs++)
		k->deadline_ms = now_ms() + k->o.batch_ms;
	if ((rc = decode(k, m, p)))
		return rc;
	p->expected = m->offset + 1;
	k->batch_bytes += m->len;
	k->st.messages++;
	k->st.bytes += m->len;
	return 0;
}

/* Every bound of a batch but its age: messages, value bytes, and the
 * caller's (stored events). Both the group's messages and the global
 * topics' stop at it, so a batch held for a rebalance stays inside the
 * bounds too: records of the Helm topic (megabytes each, at times) wait
 * in librdkafka's read-ahead, which has a bound of its own. */
static bool batch_full(struct ingest_kafka *k)
{
	return k->batch_msgs >= k->o.batch_messages ||
		k->batch_bytes >= k->o.batch_bytes ||
		(k->o.hooks.full && k->o.hooks.full(k->o.hooks.ctx));
}

static bool all_at_end(const struct ingest_kafka *k)
{
	int n = 0;

	for (size_t i = 0; i < k->nparts; i++) {
		if (!k->parts[i].assigned && !k->parts[i].global)
			continue;
		if (!k->parts[i].at_end)
			return false;
		n += k->parts[i].assigned;   /* the global ones are no sign
		                              * of the group's assignment */
	}
	return n > 0;
}

int ingest_kafka_poll(struct ingest_kafka *k, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;

	if (!k->rk)
		return RT_EINVAL;
	for (;;) {
		int64_t now = now_ms(), wait = end - now;
		rd_kafka_message_t *m;
		int rc = 0;

		if (k->batch_msgs && k->deadline_ms - now < wait)
			wait = k->deadline_ms - now;
		m = rd_kafka_consumer_poll(k->rk, wait > 0 && k->joined ?
					   (int)wait : 0);
		if (m) {
			rc = handle_message(k, m);
			rd_kafka_message_destroy(m);
			if (rc && !k->fatal)
				k->fatal = rc;
		}
		if (k->g && (!m || !(++k->gtick % 64)))
			global_step(k, k->joined || wait <= 0 ? 0 : (int)wait);
		if (k->fatal || settle_if_durable(k))
			return k->fatal;
		probe(k);
		now = now_ms();
		if (k->kafka_behind && !k->st.brokers_down &&
		    now >= k->retry_ms)
			catch_up(k);
		if (k->batch_msgs && !k->held &&
		    (batch_full(k) || now >= k->deadline_ms) &&
		    (rc = flush(k, TELL_ASYNC)))
			return rc;
		if (k->o.exit_at_end && all_at_end(k))
			return (rc = flush(k, TELL_SYNC)) ? rc : 1;
		if (now >= end)
			return 0;
	}
}

/* Leaving the group: close through a queue we serve ourselves, so a
 * coordinator that does not answer cannot hold shutdown for long; with
 * every broker down, nobody can answer, so hardly wait at all. */
#define CLOSE_TIMEOUT_MS 10000
#define CLOSE_DOWN_TIMEOUT_MS 1000

/*
 * One event of the close queue. rd_kafka_consumer_close_queue forwards the
 * consumer's queue there, so besides the rebalance (the revoke, which is
 * ours to serve: commit, then unassign) it holds the messages librdkafka
 * prefetched and nobody will process now. Serving it with callbacks only
 * (rd_kafka_queue_poll_callback) asserted on those messages with a
 * backlog; as events, they are dropped, and their offsets are left
 * uncommitted for the next owner.
 */
static void close_event(struct ingest_kafka *k, rd_kafka_event_t *ev)
{
	switch (rd_kafka_event_type(ev)) {
	case RD_KAFKA_EVENT_REBALANCE:
		on_rebalance(k->rk, rd_kafka_event_error(ev),
			     rd_kafka_event_topic_partition_list(ev), k);
		break;
	case RD_KAFKA_EVENT_ERROR:
		on_error(k->rk, rd_kafka_event_error(ev),
			 rd_kafka_event_error_string(ev), k);
		break;
	case RD_KAFKA_EVENT_OFFSET_COMMIT:
		on_offset_commit(k->rk, rd_kafka_event_error(ev),
				 (rd_kafka_topic_partition_list_t *)
				 rd_kafka_event_topic_partition_list(ev), k);
		break;
	default:                /* messages, logs, stats: not now */
		break;
	}
	rd_kafka_event_destroy(ev);
}

/*
 * librdkafka before 2.3.0 aborts in rd_kafka_destroy (an assertion on the
 * cooperative-sticky assignor's state, confluentinc/librdkafka#4312) when
 * the member joined its group but never had an assignment: a stop during
 * startup. So such a close first waits, briefly, for the assignment the
 * join is bound to bring; if none comes, the handle is left to the
 * process's exit rather than destroyed.
 */
#define FIRST_ASSIGN_WAIT_MS 3000

static void dodge_4312(struct ingest_kafka *k)
{
	const char *proto;
	int64_t end = now_ms() + FIRST_ASSIGN_WAIT_MS;

	if (rd_kafka_version() >= 0x020300ff || k->ever_assigned)
		return;
	proto = rd_kafka_rebalance_protocol(k->rk);
	if (!proto || strcmp(proto, "COOPERATIVE"))
		return;
	while (!k->ever_assigned && !k->st.brokers_down && !k->fatal &&
	       now_ms() < end)
		ingest_kafka_poll(k, 50);
	k->leak_handle = !k->ever_assigned;
}

int ingest_kafka_close(struct ingest_kafka *k)
{
	rd_kafka_queue_t *q;
	rd_kafka_error_t *e;
	bool down;
	int64_t end;
	int rc;

	if (!k->rk)
		return 0;
	dodge_4312(k);
	down = k->st.brokers_down;
	end = now_ms() + (down ? CLOSE_DOWN_TIMEOUT_MS : CLOSE_TIMEOUT_MS);
	/* The database has the batch either way; a synchronous Kafka commit
	 * with no broker would only hold the exit. */
	rc = flush(k, down ? TELL_NONE : TELL_SYNC);
	q = rd_kafka_queue_new(k->rk);
	if ((e = rd_kafka_consumer_close_queue(k->rk, q))) {
		log_at(k, RT_LOG_WARN, "close: %s", rd_kafka_error_string(e));
		rd_kafka_error_destroy(e);
	} else {
		while (!rd_kafka_consumer_closed(k->rk) && now_ms() < end) {
			rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 100);

			if (ev)
				close_event(k, ev);
		}
		if (!rd_kafka_consumer_closed(k->rk))
			log_at(k, RT_LOG_WARN, "close: the group did not "
			       "answer; leaving anyway");
	}
	rd_kafka_queue_destroy(q);
	if (!rc)
		rc = k->fatal;
	return rc;
}

const struct ingest_kafka_stats *ingest_kafka_stats(const struct ingest_kafka *k)
{
	return &k->st;
}

size_t ingest_kafka_lags(struct ingest_kafka *k, struct ingest_kafka_lag *out,
			 size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < k->nparts; i++) {
		struct kpart *p = &k->parts[i];
		int64_t lo, hi, pos;

		if (!p->assigned)
			continue;
		if (n < max) {
			pos = p->committed >= 0 ? p->committed : p->expected;
			if (!k->rk || rd_kafka_get_watermark_offsets(
				    k->rk, p->topic, p->partition, &lo, &hi) ||
			    hi < 0)
				hi = -1;
			/* Nothing read, nothing stored, and at the end: none
			 * of it is ours to read (a quiet topic, --start
			 * latest). */
			if (pos < 0 && p->at_end)
				pos = hi;
			out[n] = (struct ingest_kafka_lag){
				.topic = p->topic, .partition = p->partition,
				.committed = p->committed, .high = hi,
				.lag = hi >= 0 && pos >= 0 ? hi - pos : -1 };
		}
		n++;
	}
	return n;
}

struct rd_kafka_s *ingest_kafka_handle(struct ingest_kafka *k)
{
	return k->rk;
}

/* ---- global topics --------------------------------------------------- */

/*
 * The global topics' partitions are kparts like the group's, named with
 * INGEST_KAFKA_GLOBAL_PREFIX, never assigned by the group: their messages
 * go into the same batches, their positions into the same commits (and
 * the fence), and kafka_commit leaves them out. Until they are read to
 * their end the group is not joined, so no partition of the event topics
 * is processed by an instance without the Helm state, as Kafka Streams
 * restores its global stores before it processes.
 */
#define GLOBAL_DRAIN 1024               /* messages a step takes at most */
#define GLOBAL_WAIT_LOG_MS 10000

bool ingest_kafka_helm_state(const struct rt_record *rec)
{
	return (rec->nrevs && rec->revs) ||
		(rec->format == RT_FMT_JSON && rt_str_eq(rec->kind, "HelmChart")
		 && rec->release.n);
}

/* The kpart of a global topic's partition, NULL when it has none (not
 * assigned) or on ENOMEM with create. */
static struct kpart *global_part(struct ingest_kafka *k, const char *topic,
				 int32_t partition, bool create)
{
	char key[INGEST_KAFKA_GLOBAL_PREFIX_LEN + 256];
	struct kpart *p;

	snprintf(key, sizeof(key), INGEST_KAFKA_GLOBAL_PREFIX "%s", topic);
	if ((p = part_find(k, key, partition)) || !create)
		return p;
	if ((p = part_get(k, key, partition)))
		p->global = true;
	return p;
}

/* kglobal_start_fn: a partition read before goes on from its next
 * offset; a new one from the database's, else from its beginning. */
static int global_start(void *ctx, const char *topic, int32_t partition,
			int64_t *offset)
{
	struct ingest_kafka *k = ctx;
	struct kpart *p = global_part(k, topic, partition, false);
	int64_t next = -1;
	int rc;

	if (p) {
		*offset = p->expected >= 0 ? p->expected :
			RD_KAFKA_OFFSET_BEGINNING;
		return 0;
	}
	if (!(p = global_part(k, topic, partition, true)))
		return RT_ENOMEM;
	if (k->o.hooks.stored_offset &&
	    (rc = k->o.hooks.stored_offset(k->o.hooks.ctx, p->topic,
					   p->partition, &next))) {
		log_at(k, RT_LOG_ERROR, "%s[%d]: cannot read the stored "
		       "offset: %s", p->topic, p->partition, rt_strerror(rc));
		return rc;
	}
	p->expected = p->committed = p->submitted = next;
	*offset = next >= 0 ? next : RD_KAFKA_OFFSET_BEGINNING;
	if (next >= 0)
		logf_(k, "%s[%d]@%" PRId64, p->topic, p->partition, next);
	else
		logf_(k, "%s[%d]@beginning", p->topic, p->partition);
	return 0;
}

/* The group's handle shares every property but the callbacks. */
static int start_global(struct ingest_kafka *k, char *err, size_t errsz)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_dup(k->conf);

	if (!conf) {
		set_err(err, errsz, "out of memory");
		return RT_ENOMEM;
	}
	k->g = kglobal_new(conf, k->o.global_topics, k->o.nglobal, err, errsz);
	return k->g ? 0 : RT_EKAFKA;
}

static int global_emit(void *ctx, struct rt_record *rec)
{
	struct ingest_kafka *k = ctx;

	if (!ingest_kafka_helm_state(rec)) {
		k->st.global_skipped++;
		return 0;
	}
	return k->o.hooks.emit(k->o.hooks.ctx, rec);
}

static int handle_global(struct ingest_kafka *k, const rd_kafka_message_t *m)
{
	const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : NULL;
	struct kpart *p = topic ? global_part(k, topic, m->partition, false) :
		NULL;

	if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
		if (p)
			p->at_end = true;
		return 0;
	}
	if (m->err)
		return handle_error(k, m);
	if (!p)                 /* not assigned by us: cannot happen */
		return 0;
	brokers_up(k);
	p->at_end = false;
	if (p->expected >= 0 && m->offset < p->expected) {
		k->st.redelivered++;
		return 0;
	}
	return take(k, m, p);
}

int ingest_kafka_global_lag(struct ingest_kafka *k, int64_t *lag)
{
	rd_kafka_t *rk = kglobal_handle(k->g);
	int64_t sum = 0, lo, hi, pos;

	for (size_t i = 0; i < k->nparts && rk; i++) {
		struct kpart *p = &k->parts[i];

		if (!p->global)
			continue;
		pos = p->committed >= 0 ? p->committed : p->expected;
		if (rd_kafka_get_watermark_offsets(
			    rk, p->topic + INGEST_KAFKA_GLOBAL_PREFIX_LEN,
			    p->partition, &lo, &hi) || hi < 0) {
			sum = -1;
			break;
		}
		/* Read from the beginning, nothing stored yet: all of it. */
		sum += hi - (pos >= 0 ? pos : lo >= 0 ? lo : 0);
	}
	*lag = rk ? sum : -1;
	return kglobal_assigned(k->g);
}

/* Every global partition assigned has been read to its end. */
static bool global_at_end(const struct ingest_kafka *k)
{
	if (!kglobal_assigned(k->g))
		return false;
	for (size_t i = 0; i < k->nparts; i++)
		if (k->parts[i].global && !k->parts[i].at_end)
			return false;
	return true;
}

static void join(struct ingest_kafka *k)
{
	char err[256];
	int rc;

	logf_(k, "global topics read to their end: joining the group");
	k->joined = true;
	if ((rc = subscribe(k, err, sizeof(err)))) {
		log_at(k, RT_LOG_ERROR, "%s", err);
		k->fatal = rc;
	}
}

/* Assigns the global partitions (when due) and takes what they hold,
 * waiting up to timeout_ms for the first message; joins the group once
 * they are caught up. Errors go to k->fatal. */
static void global_step(struct ingest_kafka *k, int timeout_ms)
{
	int64_t now = now_ms();
	int rc = kglobal_refresh(k->g, now, global_start, k);

	if (rc < 0) {
		k->fatal = rc;
		return;
	}
	k->st.global_assigned = rc;
	for (int i = 0; i < GLOBAL_DRAIN && !k->fatal && !batch_full(k);
	     i++) {
		rd_kafka_message_t *m = kglobal_poll(k->g, i ? 0 : timeout_ms);

		if (!m)
			break;
		rc = handle_global(k, m);
		rd_kafka_message_destroy(m);
		if (rc && !k->fatal)
			k->fatal = rc;
	}
	if (k->joined || k->fatal)
		return;
	if (global_at_end(k)) {
		join(k);
	} else if (now - k->boot_log_ms >= GLOBAL_WAIT_LOG_MS) {
		if (k->boot_log_ms)
			logf_(k, "reading the global topics (%d partition(s)) "
			      "before joining the group", rc);
		k->boot_log_ms = now;
	}
}
