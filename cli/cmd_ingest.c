/*
 * cmd_ingest.c: `revtrail ingest [--db PATH] [--release [NS/]NAME] [--gap DUR]
 * [--keep-untagged] [--rules PATH]... [--no-default-rules] [--format NAME]
 * [--max-record BYTES] [-v] [FILE...]`.
 *
 * Options and output; the loop that reads every input at once into
 * batches and commits them is the pipeline's driver (pipeline/driver.c).
 * EOF and SIGINT/SIGTERM/SIGHUP commit the last batch. The signal handler
 * only sets the flag the driver checks after each chunk and each quiet
 * poll; it also points stdin at /dev/null, for a read of stdin.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "revtrail/log.h"
#include "revtrail/store_read.h"
#include "rows.h"
#include "revtrail/driver.h"

static volatile sig_atomic_t stop_flag;
static int devnull_fd = -1;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
	if (devnull_fd >= 0)
		dup2(devnull_fd, 0);
}

struct run {
	struct rules *rules;
	struct pipeline_db *db;
	struct store *st;           /* db's */
	struct pipeline_driver *drv;
	struct store_stats stats;       /* the writer's until it is idle */
	size_t max_record;              /* --max-record, 0 for the default */
	bool keep;                      /* --keep-untagged */
	bool follow;                    /* --follow */
	uint64_t limit_hits;
	struct ingest *in;
	FILE *verbose;                  /* -v */
	struct cli_progress progress;
	struct rt_str cluster;          /* --cluster, else empty */
	int64_t retain_ns;              /* --retain, or 0 */
	/* input that joins no incident, for the summary's warnings */
	uint64_t helm_no_release, no_time;
};

/* A line on stderr: "ingest: MSG" ("ingest: warning: MSG", "revtrail
 * ingest: MSG" for an error) for a terminal, or with --log-format a log
 * line with time, level and component. */
static void say(enum rt_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(enum rt_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (rt_log_active()) {
		rt_logv(level, "ingest", fmt, ap);
	} else {
		fputs(level == RT_LOG_ERROR ? "revtrail ingest: " :
		      level == RT_LOG_WARN ? "ingest: warning: " : "ingest: ",
		      stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

static void note(void *ctx, int level, const char *line)
{
	(void)ctx;
	say((enum rt_log_level)level, "%s", line);
}

/* Records that will never be part of an incident, counted for the
 * summary (and named with -v): Helm history that names no release, tagged
 * records without a time. */
static void note_unjoinable(struct run *r, const struct rt_record *rec,
			    const struct rt_class *cls)
{
	FILE *v = r->verbose;
	const char *why = NULL;

	if (rec->nrevs && rec->revs && !rec->revs[0].release.n) {
		r->helm_no_release++;
		why = "Helm history that names no release (--release NS/NAME)";
	} else if (!rec->nrevs && cls->ntags && rec->ts_ns == 0) {
		r->no_time++;
		why = "a tagged record without a time joins no incident";
	}
	if (why && v)
		fprintf(v, "warning: %s:%llu: %s\n", rec->pos.source ?
			rec->pos.source : "-",
			(unsigned long long)rec->pos.offset, why);
}

static void on_record(void *ctx, const struct rt_record *rec,
		      const struct rt_class *cls)
{
	struct run *r = ctx;

	r->limit_hits += cls->limit_hits;
	note_unjoinable(r, rec, cls);
}

/* The writer owns r->stats while it commits: the progress line reads a
 * copy taken under the writer's lock. */
static void progress(void *ctx)
{
	struct run *r = ctx;
	const struct ingest_stats *is = ingest_stats(r->in);
	struct pipeline_driver_counts c;
	struct store_stats s;

	pipeline_driver_stats(r->drv, &s);
	pipeline_driver_counts(r->drv, &c);
	cli_progress_tick(&r->progress, is->records, is->bytes, c.tagged,
			  s.incidents_opened);
}

struct unknown_rev {
	int64_t n;
	char ns[256], rel[256];
};

static int on_unknown_rev(void *ctx, int n, const char *const *names,
			  const struct store_value *v)
{
	struct unknown_rev *u = ctx;

	(void)names;
	if (n < 3 || v[0].type != STORE_INT || v[0].i <= 0 ||
	    v[1].type != STORE_TEXT || v[2].type != STORE_TEXT)
		return 0;
	u->n = v[0].i;
	snprintf(u->ns, sizeof(u->ns), "%s", v[1].p);
	snprintf(u->rel, sizeof(u->rel), "%s", v[2].p);
	return 0;
}

/* Once a run: the incidents of the database with no revision, and the
 * command that would give one (for the release with the most of them). */
static void history_hint(const char *db)
{
	static const char sql[] = "SELECT (SELECT count(*) FROM incidents"
		" WHERE revision = 0), namespace, release FROM incidents"
		" WHERE revision = 0 GROUP BY namespace, release"
		" ORDER BY count(*) DESC, namespace, release LIMIT 1";
	struct unknown_rev u = { 0 };
	char err[256], cmd[2][CLI_HINT_MAX];
	struct store *st;

	if (store_open_read(db, NULL, &st, err, sizeof(err)))
		return;
	store_query(st, sql, NULL, on_unknown_rev, &u, err, sizeof(err));
	store_close(st);
	if (!u.n)
		return;
	cli_history_commands(db, u.ns, u.rel, cmd);
	say(RT_LOG_WARN, "%" PRId64 " incident%s no release history, so no "
	    "revision and no diagnosis that needs one; for %s/%s: %s (or %s)",
	    u.n, u.n == 1 ? " has" : "s have", u.ns, u.rel, cmd[0], cmd[1]);
}

/* After the writer is idle: the counters of both batches. */
static void summary(const struct run *r, const struct ingest_stats *is)
{
	const struct store_stats *s = &r->stats;
	struct pipeline_driver_counts c;
	char over[512];

	pipeline_driver_counts(r->drv, &c);

	say(RT_LOG_INFO, "%" PRIu64 " records, %" PRIu64 " tagged, %"
		PRIu64 " rejected, %" PRIu64 " untagged (%s), %" PRIu64
		" helm records", is->records, c.tagged, is->rejects,
		c.untagged, r->keep ? "kept" : "not stored", c.helm);
	say(RT_LOG_INFO, "events %" PRIu64 " new, %" PRIu64
		" updated; revisions %" PRIu64 "; incidents %" PRIu64
		" opened, %" PRIu64 " updated, %" PRIu64 " merged; %" PRIu64
		" batches", s->events_new, s->events_updated, s->revisions,
		s->incidents_opened, s->incidents_updated, s->incidents_merged,
		s->batches);
	if (r->follow)
		say(RT_LOG_INFO, "followed files: %" PRIu64 " held at the end, "
		    "%" PRIu64 " at most", c.followed, c.followed_peak);
	if (r->limit_hits)
		say(RT_LOG_INFO, "%" PRIu64 " regex limit hits",
			r->limit_hits);
	if (r->helm_no_release)
		say(RT_LOG_WARN, "%" PRIu64 " Helm history "
			"record%s name%s no release: %s dropped; pass --release "
			"NAMESPACE/NAME (helm history NAME -n NAMESPACE)",
			r->helm_no_release, r->helm_no_release == 1 ? "" : "s",
			r->helm_no_release == 1 ? "s" : "",
			r->helm_no_release == 1 ? "its revisions are" :
			"their revisions are");
	if (r->no_time)
		say(RT_LOG_WARN, "%" PRIu64 " tagged record%s "
			"without a time: stored, but %s no incident",
			r->no_time, r->no_time == 1 ? "" : "s",
			r->no_time == 1 ? "it joins" : "they join");
	if (s->events_no_release)
		say(RT_LOG_WARN, "%" PRIu64 " tagged event%s "
			"of no known release: stored, but %s no incident until "
			"a release label or Helm history names %s",
			s->events_no_release, s->events_no_release == 1 ? "" : "s",
			s->events_no_release == 1 ? "it joins" : "they join",
			s->events_no_release == 1 ? "it" : "them");
	if (s->watermark_ignored)
		say(RT_LOG_WARN, CLI_WATERMARK_NOTE, s->watermark_ignored,
		    s->watermark_ignored == 1 ? "" : "s");
	if (s->registry_refused)
		say(RT_LOG_WARN, CLI_REGISTRY_NOTE, s->registry_refused,
		    s->registry_refused == 1 ? "" : "s",
		    s->registry_refused == 1 ? "" : "s");
	cli_input_notes(is, note, NULL);
	if (cli_oversize_note(over, sizeof(over), is, r->max_record))
		say(RT_LOG_WARN, "%s", over);
	cli_note_retained("ingest", s, r->retain_ns);
}

/* path with its directory resolved (the file itself may not exist yet);
 * false when the directory does not exist or the name is too long. */
static bool canon_name(const char *path, char out[PATH_MAX])
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], real[PATH_MAX];
	size_t dn = slash ? (size_t)(slash - path) : 1;

	if (dn >= sizeof(dir))
		return false;
	memcpy(dir, slash ? path : ".", dn);
	dir[dn] = '\0';
	if (slash && !dn)
		strcpy(dir, "/");
	if (!realpath(dir, real))
		return false;
	return (size_t)snprintf(out, PATH_MAX, "%s/%s", real,
				slash ? slash + 1 : path) < PATH_MAX;
}

/* Whether path is the database file, or the -wal, -shm or -journal
 * SQLite keeps beside it: the same file, or the same name, for those
 * appear once the database opens, after this check. */
static bool is_db_file(const char *db, const char *path, bool *aux)
{
	static const char *const suffix[] = { "", "-wal", "-shm", "-journal" };
	char name[PATH_MAX + 16], cp[PATH_MAX], cn[PATH_MAX];
	struct stat in, d;
	bool have_in = !stat(path, &in), have_cp = canon_name(path, cp);

	for (size_t k = 0; k < sizeof(suffix) / sizeof(suffix[0]); k++) {
		snprintf(name, sizeof(name), "%s%s", db, suffix[k]);
		*aux = k > 0;
		if (have_in && !stat(name, &d) && d.st_dev == in.st_dev &&
		    d.st_ino == in.st_ino)
			return true;
		if (have_cp && canon_name(name, cn) && !strcmp(cp, cn))
			return true;
	}
	return false;
}

/* The database (or its WAL) named as input would be read into itself. */
static int check_inputs(const char *db, char **paths, int n)
{
	bool aux;

	for (int i = 0; i < n; i++)
		if (strcmp(paths[i], "-") && is_db_file(db, paths[i], &aux))
			return cli_usage_error("ingest", "%s is the database%s,"
					       " not an input", paths[i],
					       aux ? " file" : "");
	if (n == 0 && isatty(0) && !rt_log_active())
		fputs("revtrail ingest: reading stdin (end with Ctrl-D; name "
		      "FILEs to read files)\n", stderr);
	return 0;
}

enum {
	OPT_GAP = CLI_OPT_FIRST_FREE, OPT_KEEP, OPT_REGAP, OPT_CLUSTER,
	OPT_LOG_FORMAT, OPT_MAX_REGISTRY, OPT_RETAIN,
};

static const struct cli_opt opts[] = {
	{ "db", 'd', "PATH", "the database, created as needed",
	  "$REVTRAIL_DB, else ./revtrail.db" },
	{ "gap", OPT_GAP, "DURATION", "the quiet gap that splits incidents "
	  "(1s to 30d)", "15m, or the database's" },
	{ "regap", OPT_REGAP, NULL, "accept a --gap other than the "
	  "database's and recompute its incidents", NULL },
	{ "keep-untagged", OPT_KEEP, NULL, "store untagged records too", NULL },
	{ "follow", 'f', NULL, "follow the FILEs and quoted globs as tail -F "
	  "does, until a signal, resuming where the database left them",
	  "read each to its end" },
	{ "cluster", OPT_CLUSTER, "NAME", "the cluster the input comes from",
	  "the default one, \"\"" },
	{ "max-registry", OPT_MAX_REGISTRY, "SIZE", "memory of each cluster's "
	  "release registry (1M to 1024M)", "64M" },
	{ "retain", OPT_RETAIN, "DURATION", "delete, a share per commit, what "
	  "aged past DURATION (at least 1m)", "keep everything" },
	{ "log-format", OPT_LOG_FORMAT, "text|json", "stderr lines with "
	  "time, level and component", "plain lines" },
	CLI_INPUT_OPTS,
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct cli_cmd cmd = {
	"ingest", "[OPTIONS] [FILE...]",
	"  Read events, logs and Helm records from the FILEs (else stdin)\n"
	"  into incidents in the database.\n",
	opts,
	"  kubectl get events -A -o json | revtrail ingest --db incidents.db\n"
	"  helm history web -n shop -o json | revtrail ingest --release "
	"shop/web\n"
	"  revtrail ingest --follow '/var/log/containers/*.log'\n",
};

/* SIGHUP (a closed terminal, an ssh session ending) stops like SIGTERM:
 * what was read is committed. SIGPIPE is ignored: a reader of stderr that
 * went away (`ingest -v 2>&1 | head`) must not kill the writer before its
 * commit; the lines it misses fail with EPIPE, which say() and -v ignore. */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;   /* no SA_RESTART: reads return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int ingest_all(struct run *r, char **paths, int n)
{
	struct pipeline_driver_opts o = {
		.keep_untagged = r->keep, .cluster = r->cluster,
		.follow = r->follow, .stop = &stop_flag,
		.on_record = on_record, .on_tick = progress, .ctx = r,
	};
	int rc;

	if (pipeline_driver_new(r->db, r->rules, r->in, &o, &r->stats,
				&r->drv)) {
		say(RT_LOG_ERROR, "out of memory");
		return CLI_FAIL;
	}
	devnull_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	catch_signals();
	rc = pipeline_driver_run(r->drv, paths, n);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (devnull_fd >= 0)
		close(devnull_fd);
	devnull_fd = -1;
	if (rc == RT_ENOMEM)
		say(RT_LOG_ERROR, "out of memory");
	else if (rc && rc != RT_EIO && rc != RT_EINVAL)
		say(RT_LOG_ERROR, "%s", store_errmsg(r->st)[0] ?
		    store_errmsg(r->st) : rt_strerror(rc));
	return rc ? CLI_FAIL : CLI_OK;
}

int cmd_ingest(int argc, char **argv)
{
	struct ingest_opts io = { 0 };
	struct cli_rules_opts ro = { 0 };
	struct pipeline_opts so = { 0 };
	struct run r = { 0 };
	const char *db = NULL;
	struct ingest *in = NULL;
	char err[RT_ERRLEN];
	int opt, rc, log_format = -1;
	FILE *vlog[2] = { NULL, NULL };

	optind = 1;
	while ((opt = cli_getopt(argc, argv, &cmd)) != -1) {
		switch (opt) {
		case 'd':
			db = optarg;
			break;
		case OPT_GAP:
			if (cli_gap_opt("ingest", optarg, &so.gap_ns))
				return CLI_USAGE;
			break;
		case OPT_REGAP:
			so.regap = true;
			break;
		case OPT_MAX_REGISTRY:
			if (cli_registry_opt("ingest", optarg,
					     &so.registry_bytes))
				return CLI_USAGE;
			break;
		case OPT_RETAIN:
			if (cli_retain_opt("ingest", optarg, &so.retain_ns))
				return CLI_USAGE;
			r.retain_ns = so.retain_ns;
			break;
		case 'f':
			r.follow = true;
			break;
		case OPT_KEEP:
			r.keep = true;
			break;
		case OPT_CLUSTER:
			if (cli_cluster_check("ingest", "--cluster", optarg))
				return CLI_USAGE;
			r.cluster = rt_str_make(optarg, strlen(optarg));
			break;
		case OPT_LOG_FORMAT:
			if ((log_format = rt_log_format_from_name(optarg)) < 0)
				return cli_usage_error("ingest", "--log-format "
						       "wants text or json, "
						       "got '%s'", optarg);
			break;
		case 'h':
			cli_help(stdout, &cmd);
			return CLI_OK;
		default:
			if (cli_input_opt("ingest", opt, optarg, &io, &ro) != 1)
				return CLI_USAGE;
		}
	}
	/* Without --log-format: the lines a terminal wants, as before. */
	if (log_format >= 0) {
		rt_log_setup((enum rt_log_format)log_format, NULL);
		if (io.verbose) {
			vlog[0] = rt_log_stream(RT_LOG_INFO, "ingest");
			vlog[1] = rt_log_stream(RT_LOG_INFO, "store");
			io.verbose = vlog[0] ? vlog[0] : stderr;
		}
	}
	if (check_inputs(cli_db_path(db), argv + optind, argc - optind))
		return CLI_USAGE;
	if (r.follow && optind == argc)
		return cli_usage_error("ingest", "--follow wants FILEs or "
				       "quoted globs to follow");
	if (!(r.rules = cli_load_rules(&ro)))
		return CLI_USAGE;
	so.rules = r.rules;
	so.release_ns = io.release_ns;
	so.release_name = io.release_name;
	so.log = vlog[1] ? vlog[1] : io.verbose;
	stop_flag = 0;
	rc = CLI_FAIL;
	if ((rc = pipeline_db_open(cli_db_path(db), &so, &r.db, err,
				   sizeof(err)))) {
		say(RT_LOG_ERROR, "%s", err);
		rc = rc == RT_EINVAL ? CLI_USAGE : CLI_FAIL;
		goto out;
	}
	r.st = pipeline_db_store(r.db);
	rc = CLI_FAIL;
	if (store_regapped_from(r.st))
		cli_note_regap("ingest", store_regapped_from(r.st), so.gap_ns);
	io.defer_payload = !r.keep;       /* an untagged kept event needs its
					 * message */
	if (!(in = ingest_new(&io))) {
		say(RT_LOG_ERROR, "out of memory");
		goto out;
	}
	r.in = in;
	r.verbose = io.verbose;
	r.max_record = io.max_record;
	if (log_format < 0)     /* a live line is no log line */
		cli_progress_start(&r.progress, argv + optind, argc - optind);
	rc = ingest_all(&r, argv + optind, argc - optind);
	cli_progress_end(&r.progress);
	if (r.drv) {
		summary(&r, ingest_stats(in));
		pipeline_driver_free(r.drv);  /* committed: readers see it */
		r.drv = NULL;
		history_hint(cli_db_path(db));
	}
out:
	pipeline_driver_free(r.drv);
	ingest_free(in);
	pipeline_db_close(r.db);
	rules_free(r.rules);
	for (int i = 0; i < 2; i++)
		if (vlog[i])
			fclose(vlog[i]);
	rt_log_flush();
	return rc;
}
