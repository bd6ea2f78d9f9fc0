/* Log lines and the folding of repeats (core/rt_log.c): time, level and
 * component on every line, escaped text, valid JSON whatever the message
 * holds, and a repeated error written once plus a count. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "revtrail/log.h"
#include "revtrail/rt.h"
#include "tap.h"

/* 2024-11-03T14:41:07.123Z */
#define T0 (1730644867123LL * 1000000)
static int64_t fake_now = T0;

static int64_t fake_clock(void)
{
	return fake_now;
}

static char *mem;
static size_t memlen;
static FILE *memf;

static void capture(enum rt_log_format fmt)
{
	if (memf)
		fclose(memf);
	free(mem);
	mem = NULL;
	memf = open_memstream(&mem, &memlen);
	rt_log_setup(fmt, memf);
}

static int count_lines(void)
{
	int n = 0;

	fflush(memf);
	for (size_t i = 0; i < memlen; i++)
		n += mem[i] == '\n';
	return n;
}

static cJSON *json_line(const char *line)
{
	cJSON *j = cJSON_Parse(line);

	ok(j && cJSON_IsObject(j), "a JSON object: %s", line);
	return j;
}

static const char *jstr(cJSON *j, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static long jint(cJSON *j, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

	return cJSON_IsNumber(v) ? (long)v->valuedouble : -1;
}

static void test_text(void)
{
	char line[512];

	rt_log_format_line(line, sizeof(line), RT_LOG_TEXT, T0, RT_LOG_WARN,
			   "kafka", NULL, "all brokers are down", 0);
	is_str(line, "2024-11-03T14:41:07.123Z WARN kafka: all brokers are "
	       "down\n", "text: time, level, component, message");
	rt_log_format_line(line, sizeof(line), RT_LOG_TEXT, T0, RT_LOG_ERROR,
			   "consume", NULL, "pod \x1b[2Jx\nforged line", 0);
	is_str(line, "2024-11-03T14:41:07.123Z ERROR consume: pod "
	       "\\x1b[2Jx\\nforged line\n",
	       "text: control characters escaped, one line");
	rt_log_format_line(line, sizeof(line), RT_LOG_TEXT, T0, RT_LOG_ERROR,
			   "librdkafka", "FAIL", "connect failed", 3);
	is_str(line, "2024-11-03T14:41:07.123Z ERROR librdkafka: [FAIL] "
	       "connect failed (repeated 3 times)\n",
	       "text: facility and repeat count");
}

static void test_json(void)
{
	char line[512];
	cJSON *j;

	rt_log_format_line(line, sizeof(line), RT_LOG_JSON, T0, RT_LOG_INFO,
			   "consume", NULL, "say \"hi\" \\ \x01\x7f\xff\xc2\x9b"
			   " \xc3\xa9", 0);
	j = json_line(line);
	is_str(jstr(j, "time"), "2024-11-03T14:41:07.123Z", "json: time");
	is_str(jstr(j, "level"), "info", "json: level");
	is_str(jstr(j, "component"), "consume", "json: component");
	is_str(jstr(j, "msg"), "say \"hi\" \\ \\x01\\x7f\\xff\\u009b \xc3\xa9",
	       "json: quotes kept, controls and bad bytes escaped, UTF-8 kept");
	ok(!cJSON_GetObjectItem(j, "repeated"), "json: no count on a first line");
	cJSON_Delete(j);
	ok(line[strlen(line) - 1] == '\n' && !strchr(line, '\n')[1],
	   "json: exactly one line");

	rt_log_format_line(line, sizeof(line), RT_LOG_JSON, T0, RT_LOG_ERROR,
			   "librdkafka", "FAIL", "down", 7);
	j = json_line(line);
	is_str(jstr(j, "fac"), "FAIL", "json: facility");
	is_str(jstr(j, "msg"), "down (repeated 7 times)", "json: summary text");
	is_int(jint(j, "repeated"), 7,
	       "json: repeated count");
	cJSON_Delete(j);
}

static void test_long(void)
{
	static char msg[3 * RT_LOG_MAX_MSG], line[RT_LOG_MAX_MSG * 9];
	char small[100];
	cJSON *j;
	size_t n;

	memset(msg, '\\', sizeof(msg) - 1);
	n = rt_log_format_line(line, sizeof(line), RT_LOG_JSON, T0,
			       RT_LOG_INFO, "consume", NULL, msg, 0);
	ok(n < sizeof(line) - 1, "a long message is cut, not the line");
	j = json_line(line);
	ok(jstr(j, "msg") && strlen(jstr(j, "msg")) == RT_LOG_MAX_MSG + 3,
	   "cut at RT_LOG_MAX_MSG, with ...");
	cJSON_Delete(j);
	n = rt_log_format_line(small, sizeof(small), RT_LOG_JSON, T0,
			       RT_LOG_INFO, "consume", NULL, msg, 0);
	is_int(n, strlen(small), "a small buffer: length returned");
	ok(n < sizeof(small) && small[n - 1] == '\n', "ends in a newline");
	j = json_line(small);
	cJSON_Delete(j);
}

static void test_repeats(void)
{
	cJSON *j;
	char *last;

	capture(RT_LOG_JSON);
	fake_now = T0;
	for (int i = 0; i < 50; i++) {
		rt_log(RT_LOG_ERROR, "kafka", "offset commit failed: %s",
		       "coordinator not available");
		fake_now += 100 * 1000000LL;
	}
	is_int(count_lines(), 1, "50 identical errors in 5 s: one line");
	rt_log(RT_LOG_ERROR, "kafka", "another error");
	rt_log(RT_LOG_INFO, "consume", "status");
	rt_log(RT_LOG_INFO, "consume", "status");
	is_int(count_lines(), 4, "other errors and info lines are not held");
	fake_now = T0 + 29 * 1000000000LL;
	rt_log_tick();
	is_int(count_lines(), 4, "no summary before the window ends");
	fake_now = T0 + 31 * 1000000000LL;
	rt_log_tick();
	is_int(count_lines(), 5, "one summary when it ends");
	fflush(memf);
	mem[memlen - 1] = '\0';
	last = strrchr(mem, '\n');
	j = json_line(last ? last + 1 : mem);
	is_int(jint(j, "repeated"), 49,
	       "it counts the 49 held back");
	is_str(jstr(j, "level"), "error", "at the line's level");
	cJSON_Delete(j);
	mem[memlen - 1] = '\n';

	/* Still failing: folded into the next window, summed up at exit. */
	rt_log(RT_LOG_ERROR, "kafka", "offset commit failed: coordinator "
	       "not available");
	is_int(count_lines(), 5, "a repeat after the summary is held too");
	rt_log_flush();
	is_int(count_lines(), 6, "and summed up at exit");
	rt_log(RT_LOG_ERROR, "kafka", "offset commit failed: coordinator "
	       "not available");
	is_int(count_lines(), 7, "after the flush it is new again");
}

static void test_many_distinct(void)
{
	capture(RT_LOG_TEXT);
	fake_now = T0;
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 40; i++)
			rt_log(RT_LOG_WARN, "store", "error %d", i);
	ok(count_lines() >= 40 && count_lines() <= 80,
	   "more distinct lines than slots: each still written");
	rt_log_flush();
	is_int(count_lines(), 80, "every repeat written or summed up");
}

static void test_stream(void)
{
	FILE *f;

	capture(RT_LOG_TEXT);
	fake_now = T0;
	f = rt_log_stream(RT_LOG_INFO, "ingest");
	ok(f != NULL, "a stream");
	fprintf(f, "reject: %s:%d: %s\n", "topic/0", 12, "empty");
	fprintf(f, "half ");
	is_int(count_lines(), 1, "each whole line at once");
	fclose(f);
	is_int(count_lines(), 2, "the unfinished one at close");
	fflush(memf);
	is_str(mem, "2024-11-03T14:41:07.123Z INFO ingest: reject: topic/0:12: "
	       "empty\n2024-11-03T14:41:07.123Z INFO ingest: half \n",
	       "lines of the stream's level and component");
}

int main(void)
{
	rt_log_set_clock(fake_clock);
	is_int(rt_log_format_from_name("json"), RT_LOG_JSON, "json");
	is_int(rt_log_format_from_name("text"), RT_LOG_TEXT, "text");
	is_int(rt_log_format_from_name("xml"), -1, "no xml");
	is_int(rt_log_level_from_syslog(3), RT_LOG_ERROR, "LOG_ERR");
	is_int(rt_log_level_from_syslog(4), RT_LOG_WARN, "LOG_WARNING");
	is_int(rt_log_level_from_syslog(6), RT_LOG_INFO, "LOG_INFO");
	is_int(rt_log_level_from_syslog(7), RT_LOG_DEBUG, "LOG_DEBUG");
	test_text();
	test_json();
	test_long();
	test_repeats();
	test_many_distinct();
	test_stream();
	rt_log_setup(RT_LOG_TEXT, NULL);
	fclose(memf);
	free(mem);
	return done_testing();
}
