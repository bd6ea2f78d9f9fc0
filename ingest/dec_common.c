/*
 * dec_common.c: what every decoder shares (ingest/decode.h): emitting a
 * record, and a time parser's answer as a record's time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"

void dec_count(struct dec_ctx *d, uint64_t *count, char *where)
{
	dec_count_at(&d->base->pos, count, where);
}

void dec_count_at(const struct rt_pos *p, uint64_t *count, char *where)
{
	const char *src = p->source ? p->source : "-";

	if ((*count)++)
		return;
	if (p->partition >= 0)
		snprintf(where, INGEST_WHERE_MAX, "%.250s[%" PRId32 "]@%" PRId64,
			 src, p->partition, p->kafka_offset);
	else
		snprintf(where, INGEST_WHERE_MAX, "%.250s:%" PRIu64, src,
			 p->offset);
}

/* Counts the record (and once whether its decoding read a time out of
 * range), numbers it, fills the Kafka time when the payload had none, and
 * hands it to the callback; returns the callback's return. */
int dec_emit(struct dec_ctx *d, struct rt_record *rec)
{
	if (d->time_range) {
		d->time_range = false;
		dec_count(d, &d->stats->times_out_of_range,
			  d->stats->first_out_of_range);
	}
	if (!rec->ts_ns)
		rec->ts_ns = d->hint_ts_ns;
	if (rec->count < 1)
		rec->count = 1;
	if ((unsigned)rec->format >= RT_FMT_COUNT)
		rec->format = RT_FMT_UNKNOWN;
	rec->n = ++d->stats->records;
	d->stats->by_format[rec->format]++;
	return d->emit ? d->emit(d->emit_ctx, rec) : 0;
}

int64_t dec_time(struct dec_ctx *d, int rc, const int64_t *ns)
{
	if (rc == RT_ERANGE)
		d->time_range = true;
	return rc == RT_OK ? *ns : 0;
}

struct rt_str dec_event_container(struct rt_str fp)
{
	static const char *const pre[] = {
		"spec.containers{", "spec.initContainers{",
		"spec.ephemeralContainers{",
	};

	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t len = strlen(pre[i]);
		const char *close;

		if (!rt_str_has_prefix(fp, pre[i]))
			continue;
		close = memchr(fp.p + len, '}', fp.n - len);
		if (close && close > fp.p + len)
			return rt_str_make(fp.p + len, (size_t)(close - fp.p) - len);
	}
	return RT_STR_NULL;
}

#define COMBINED_PREFIX "(combined from similar events): "

struct rt_str dec_event_message(struct rt_str msg)
{
	if (rt_str_has_prefix(msg, COMBINED_PREFIX)) {
		msg.p += strlen(COMBINED_PREFIX);
		msg.n -= strlen(COMBINED_PREFIX);
	}
	return msg;
}
