/*
 * log.h: diagnostic lines on stderr (core/rt_log.c) for the long-running
 * commands: each line carries its time (UTC, RFC 3339, milliseconds), a
 * level and the component that wrote it, as text or as one JSON object.
 *
 *   text: 2024-11-03T14:41:07.123Z WARN kafka: all brokers are down
 *   json: {"time":"2024-11-03T14:41:07.123Z","level":"warn",
 *          "component":"kafka","msg":"all brokers are down"}
 *
 * Messages may hold text from the cluster or from a broker: control
 * characters are escaped in both formats, so no message can forge a line
 * or drive a terminal.
 *
 * Repeated identical warnings and errors (same level, component and text)
 * are rate-limited: the first is written, the repeats within
 * RT_LOG_REPEAT_MS of it are counted, and one "MSG (repeated N times)"
 * line sums them up when that window ends (rt_log_tick) or at exit
 * (rt_log_flush). An outage that fails every batch the same way writes
 * two lines a window, not one a batch.
 *
 * Every function is thread-safe (one mutex): librdkafka calls its log
 * callback from its own threads, the store from its writer thread.
 */
#ifndef REVTRAIL_LOG_H
#define REVTRAIL_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum rt_log_level { RT_LOG_ERROR, RT_LOG_WARN, RT_LOG_INFO, RT_LOG_DEBUG };
enum rt_log_format { RT_LOG_TEXT, RT_LOG_JSON };

#define RT_LOG_REPEAT_MS 30000
/* A message longer than this is cut (and ends in "..."). */
#define RT_LOG_MAX_MSG 4096

/* "text" / "json" -> the format; -1 for another name. */
int rt_log_format_from_name(const char *name);

/* Where lines go (NULL: stderr) and in which format; text on stderr until
 * called. Pending repeat counts are written first. */
void rt_log_setup(enum rt_log_format fmt, FILE *out);
/* Whether rt_log_setup was called: a command that logs this way (consume,
 * ingest) has its shared error messages (cli/) go through rt_log too. */
bool rt_log_active(void);

/* One line. component: a short lower-case word ("consume", "kafka"). */
void rt_log(enum rt_log_level level, const char *component, const char *fmt,
	    ...) __attribute__((format(printf, 3, 4)));
void rt_logv(enum rt_log_level level, const char *component, const char *fmt,
	     va_list ap) __attribute__((format(printf, 3, 0)));
/* A line of a library with its own facility name (librdkafka's "FAIL"):
 * text "COMPONENT: [FAC] MSG", json adds "fac". */
void rt_log_fac(enum rt_log_level level, const char *component,
		const char *fac, const char *msg);
/* librdkafka's syslog levels (0 emerg .. 7 debug) as ours. */
enum rt_log_level rt_log_level_from_syslog(int level);

/* Writes the summaries of repeat windows that have ended; call it now and
 * then (the consume loop does, every poll). */
void rt_log_tick(void);
/* Writes every pending summary, whether its window ended or not (exit). */
void rt_log_flush(void);

/*
 * A stream whose every line becomes one log line of this level and
 * component, for code that reports to a FILE * (the store's and the
 * decoder's -v output). NULL when it cannot be made. The caller fcloses
 * it (which writes an unfinished last line).
 */
FILE *rt_log_stream(enum rt_log_level level, const char *component);

/*
 * The pieces, for tests. rt_log_set_clock replaces the clock (wall time
 * in nanoseconds since the epoch; NULL: the real one). rt_log_format_line
 * writes one line (with its '\n') into out and returns its length, at
 * most size - 1; repeated > 0 makes it a summary.
 */
void rt_log_set_clock(int64_t (*now_ns)(void));
size_t rt_log_format_line(char *out, size_t size, enum rt_log_format fmt,
			  int64_t time_ns, enum rt_log_level level,
			  const char *component, const char *fac,
			  const char *msg, uint64_t repeated);

#endif
