/*
 * cli.h (private to cli/): the subcommands and the few helpers they share.
 * Each subcommand lives in its own file cli/cmd_NAME.c, parses its own
 * options (getopt_long) and returns the process exit code: 0 ok,
 * 1 runtime failure, 2 usage or configuration error. Only main() exits.
 */
#ifndef REVTRAIL_CLI_H
#define REVTRAIL_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "revtrail/ingest.h"
#include "revtrail/pipeline.h"
#include "revtrail/rules.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

int cmd_classify(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_incidents(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_consume(int argc, char **argv);
int cmd_fleet(int argc, char **argv);

/* Options every command that classifies shares. */
struct cli_rules_opts {
	const char *paths[32];   /* --rules PATH, repeatable */
	int npaths;
	bool no_default;         /* --no-default-rules */
};

/* Loads built-in packs (unless no_default) and every --rules path, then
 * compiles. On error prints "revtrail: FILE:LINE: problem" and returns NULL. */
struct rules *cli_load_rules(const struct cli_rules_opts *o);

/* The two commands that give revtrail the history of release ns/rel into
 * database db (helm history, the release Secrets), every name quoted for
 * the shell so that they work when pasted. */
#define CLI_HINT_MAX 2400
void cli_history_commands(const char *db, const char *ns, const char *rel,
			  char cmd[2][CLI_HINT_MAX]);

/* --db: the flag, else $REVTRAIL_DB, else ./revtrail.db. */
const char *cli_db_path(const char *flag);

/* Prints "revtrail CMD: message" to stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- options and help (opts.c) --------------------------------------- */
/* One option of a command: what getopt_long needs and its --help line. */
struct cli_opt {
	const char *name;   /* long name; NULL: a short option only */
	int val;            /* a letter for -X (and --name), else >= 256 */
	const char *arg;    /* the value's placeholder ("PATH"); NULL: none */
	const char *help;   /* one line */
	const char *dflt;   /* the default, or NULL */
};
/* A command's options table (ended by val 0) and its help. */
struct cli_cmd {
	const char *name;       /* "ingest" */
	const char *synopsis;   /* after "usage: revtrail ingest " */
	const char *about;      /* lines ending in '\n', or NULL */
	const struct cli_opt *opts;
	const char *example;    /* lines ending in '\n', each one that works */
};
/*
 * getopt_long over c's table, with -h/--help added. Errors are printed
 * here, "revtrail CMD: ..." with a "did you mean" for a long option, and
 * return '?'. A short option's value written "-n=shop" is "shop".
 */
int cli_getopt(int argc, char **argv, const struct cli_cmd *c);
/* usage, about, one line per option with its default, an example. */
void cli_help(FILE *f, const struct cli_cmd *c);
/* Damerau-Levenshtein (optimal string alignment) distance; words over
 * CLI_EDIT_MAX bytes are CLI_EDIT_MAX + 1 away from everything. */
#define CLI_EDIT_MAX 40
int cli_edit_distance(const char *a, size_t m, const char *b, size_t n);
/* The name nearest to word within CLI_SUGGEST_MAX edits, or NULL. */
#define CLI_SUGGEST_MAX 2
const char *cli_nearest(const char *word, size_t len,
			const char *const *names, size_t n);

/* Options of every command that reads input (classify, ingest, consume). */
enum {
	CLI_OPT_FORMAT = 256,
	CLI_OPT_MAX_RECORD,
	CLI_OPT_RULES,
	CLI_OPT_NO_DEFAULT,
	CLI_OPT_RELEASE,
	CLI_OPT_HELM_TZ,
	CLI_OPT_FIRST_FREE,     /* commands number their own long options from here */
};

#define CLI_INPUT_OPTS \
	{ "format", CLI_OPT_FORMAT, "NAME", "force a decoder: k8s-event, " \
	  "cri, docker, fluentbit, vector, helm-history, json, text...", \
	  "by content" }, \
	{ "max-record", CLI_OPT_MAX_RECORD, "BYTES", "a longer text line is " \
	  "truncated; a longer JSON document or List item skipped and " \
	  "counted (k/M; at most 1024M)", "4M" }, \
	{ "rules", CLI_OPT_RULES, "PATH", "add a rule pack or a directory of " \
	  "*.rules (repeatable)", NULL }, \
	{ "no-default-rules", CLI_OPT_NO_DEFAULT, NULL, "drop the built-in " \
	  "packs", NULL }, \
	{ "release", CLI_OPT_RELEASE, "[NS/]NAME", "the release of inputs " \
	  "that do not name it", NULL }, \
	{ "helm-tz", CLI_OPT_HELM_TZ, "ZONE", "the zone of Helm table times " \
	  "printed without one", "TZ, else the system zone" }, \
	{ "verbose", 'v', NULL, "print every rejected record, and every one " \
	  "that joins no incident", NULL }

/* --db of the commands that read (incidents, show, report, query). */
#define CLI_READ_DB_OPT \
	{ "db", 'd', "PATH", "the database; repeatable, or a quoted glob: " \
	  "up to 10 read as one", "$REVTRAIL_DB, else ./revtrail.db" }

/*
 * The input counts a summary speaks of (ingest_stats: times without a zone,
 * undecodable Helm payloads, bad docker times, times out of range), each as
 * one line naming where it first happened, handed to fn with its level
 * (RT_LOG_INFO for the zone assumed, RT_LOG_WARN for the fallbacks).
 */
struct ingest_stats;
typedef void (*cli_note_fn)(void *ctx, int level, const char *line);
void cli_input_notes(const struct ingest_stats *is, cli_note_fn fn,
		     void *ctx);

/*
 * The zone Helm's zoneless table times are read in: --helm-tz's, else
 * TZ's, else "the system zone (/etc/localtime)". For the summaries.
 */
const char *cli_helm_tz(void);

/*
 * Handles one of the options above (and -v). Returns 1 when handled, 0 when
 * opt is not one of them, CLI_USAGE after printing an error.
 */
/* The summary's warning about JSON documents and List items over
 * --max-record (max: the bound in force, 0 for the default), escaped for a
 * terminal, into buf; false (buf untouched) when there were none. */
bool cli_oversize_note(char *buf, size_t n, const struct ingest_stats *s,
		       size_t max);
int cli_input_opt(const char *cmd, int opt, const char *arg,
		  struct ingest_opts *io, struct cli_rules_opts *ro);
/* "NS/NAME" or "NAME" (no namespace: NULL) into io->release_ns and
 * release_name (static storage). -1 when malformed. */
int cli_parse_release(const char *arg, struct ingest_opts *io);
/* "1048576", "512k", "1M" -> bytes; -1 when malformed or over 1 GiB. */
int cli_parse_size(const char *arg, size_t *out);

/* Durations always carry units: "15m", "1h30m", "90s", "500ms", "2d",
 * "1w", decimals allowed ("1.5h"). Returns 0, -1 when malformed (a bare
 * number, NaN, a sign), -2 when not in 1ns..CLI_DURATION_MAX_NS. */
#define CLI_DURATION_MAX_NS (100LL * 365 * 86400 * 1000000000)
int cli_parse_duration(const char *s, int64_t *ns);
/* --gap: a duration from 1s to 30d; else prints why, returns CLI_USAGE. */
#define CLI_GAP_MIN_NS 1000000000LL
#define CLI_GAP_MAX_NS (30LL * 86400 * 1000000000)
int cli_gap_opt(const char *cmd, const char *arg, int64_t *ns);
/* "15m", "1h30m", "1d2h", "45s": whole seconds, for messages. */
void cli_format_duration(int64_t ns, char *out, size_t size);
/* A signed offset in its two largest units, for timelines: "+2m05s",
 * "-1h03m", "+3d04h", "+0s". */
void cli_format_offset(int64_t d, char *out, size_t size);
/* --max-registry SIZE (1M..1024M) into *bytes; else prints why and
 * returns CLI_USAGE. */
int cli_registry_opt(const char *cmd, const char *arg, size_t *bytes);
struct store_stats;
/* --retain DURATION (1m to 100y): 0, or CLI_USAGE after the message. */
int cli_retain_opt(const char *cmd, const char *arg, int64_t *ns);
/* The summary line of what retention deleted (nothing when nothing was). */
void cli_note_retained(const char *cmd, const struct store_stats *s,
		       int64_t retain_ns);
/* The warning of registry refusals (store_stats.registry_refused), a
 * format for the command's own logger: the count, then two plural "s". */
#define CLI_REGISTRY_NOTE "%" PRIu64 " Helm revision%s or workload " \
	"mapping%s past the release registry's bounds (--max-registry, 1024 " \
	"revisions a release): not kept, so events get no revision from them"
/* The warning of records ignored for closing incidents
 * (store_stats.watermark_ignored): the count, then a plural "s". */
#define CLI_WATERMARK_NOTE "%" PRIu64 " record%s far ahead of the others " \
	"or of the wall clock (a bad clock?): stored, but ignored for " \
	"closing incidents"
/* The summary line of a --regap. */
void cli_note_regap(const char *cmd, int64_t old_ns, int64_t new_ns);
/* --since: a date (2024-11-03, midnight UTC), a time (RFC 3339, epoch
 * seconds...) or a duration back from now ("2h"). -1 when none of those. */
int cli_parse_since(const char *arg, int64_t *ns);

/* Output formats for -o. csv guards cells a spreadsheet would run as
 * formulas (rows.c), csv-raw writes them exactly. */
enum cli_output { CLI_OUT_TABLE, CLI_OUT_JSON, CLI_OUT_CSV, CLI_OUT_TEXT,
		  CLI_OUT_CSV_RAW };
/* Returns -1 when name is none of table/json/csv/text/csv-raw. */
int cli_output_from_name(const char *name);

/* ---- text for a terminal (term.c) ----------------------------------- */
/* --color auto|always|never (auto: a terminal, no NO_COLOR, TERM not dumb).
 * Returns 0, or CLI_USAGE after printing the error. */
int cli_color_opt(const char *cmd, const char *arg);
bool cli_color(FILE *f);
/* The SGR sequence of a severity or status word, NULL for others. */
const char *cli_color_of(const char *word);
/* word, coloured when cli_color(f) and it is a severity or status. */
void cli_put_colored(FILE *f, const char *word);
/* Columns of f's terminal, else $COLUMNS, else 80. */
int cli_width(FILE *f);
/* s with control characters escaped (rt_escape_terminal); malloc'd. */
char *cli_escape(const char *s, size_t n);
/* Writes s escaped: all text output from the database goes through here. */
void cli_put_text(FILE *f, const char *s);
void cli_put_textn(FILE *f, const char *s, size_t n);
/* Display columns of UTF-8 text (one per character). */
size_t cli_text_width(const char *s);
/* One paragraph, escaped, wrapped at width: first before the first line,
 * rest before the others; a `command` in backticks is never split. */
void cli_wrap(FILE *f, const char *s, size_t len, const char *first,
	      const char *rest, int width);

/* ---- the live progress line of a long ingest (progress.c) ------------ */
struct cli_progress {
	bool on, large, shown;
	int64_t start_ns, last_ns;
};
/* on only when stderr is a terminal; large when the named files hold
 * 64 MiB or more (else the line waits two seconds). */
void cli_progress_start(struct cli_progress *p, char **paths, int n);
/* Rewrites the line, at most four times a second. */
void cli_progress_tick(struct cli_progress *p, uint64_t records,
		       uint64_t bytes, uint64_t tagged, uint64_t incidents);
/* Clears the line before the summary. */
void cli_progress_end(struct cli_progress *p);

/* ---- clusters (cluster.c) ------------------------------------------- */
/*
 * A cluster name (--cluster, -t TOPIC@CLUSTER): 1 to CLI_CLUSTER_MAX
 * printable ASCII characters, no space, '/' or '@' (they separate it from
 * namespaces and topics). Returns 0, or CLI_USAGE after printing
 * "revtrail CMD: OPTION: the problem".
 */
#define CLI_CLUSTER_MAX 63
int cli_cluster_check(const char *cmd, const char *option, const char *name);
/* --cluster NAME of the read commands: a name as above, or "" for the
 * default cluster. 0 or CLI_USAGE. */
int cli_cluster_filter(const char *cmd, const char *name);

/* consume: the cluster of each topic (-t TOPIC@CLUSTER), else --cluster's,
 * else the default one (empty). */
#define CLI_MAX_TOPICS 64
#define CLI_TOPIC_MAX 255             /* Kafka's own limit is 249 */
struct cli_topics {
	char name[CLI_MAX_TOPICS][CLI_TOPIC_MAX + 1];
	const char *names[CLI_MAX_TOPICS];    /* into name[]: for the source */
	const char *cluster[CLI_MAX_TOPICS];  /* NULL: --cluster's */
	int n;
	const char *dflt;                     /* --cluster, or NULL */
	const char *last_src;                 /* the last lookup, by pointer */
	struct rt_str last;
};
/* Adds ARG of option (-t, --helm-topic): TOPIC or TOPIC@CLUSTER. 0, or
 * CLI_USAGE after printing why (too many, too long, a bad cluster name),
 * naming option as the user typed it. */
int cli_topics_add(struct cli_topics *t, const char *option,
		   const char *arg);
/* The cluster of a record read from topic source (rt_record.cluster).
 * A subscription by pattern (^...) takes --cluster's. */
struct rt_str cli_topics_cluster(struct cli_topics *t, const char *source);

/* JSON string writer (quotes, escapes control bytes, passes UTF-8). */
void cli_json_str(FILE *f, const char *p, size_t n);

/* The read commands' output spooled while they read (cli/spool.c): begin
 * points stdout at a temporary file unless it is a terminal (or no
 * temporary can be made); end, after the database is closed, copies it to
 * the real stdout. end returns 0, or -1 when the output could not be
 * written (as fflush(stdout) would). */
struct cli_spool {
	int fd, saved;
};
void cli_spool_begin(struct cli_spool *sp);
int cli_spool_end(struct cli_spool *sp);

#endif
