/*
 * lat_produce.c: latency.sh's producer. kcat -P reads its input in blocks,
 * so a line written to it waits for the next ones: it cannot pace.
 *
 *   lat_produce BOOTSTRAP TOPIC RATE N FIXTURES SENT
 *
 * Produces the first N lines of FIXTURES ("KEY<TAB>VALUE") to partition 0
 * of TOPIC, line i at start + i / RATE seconds, with linger.ms=0, and
 * writes to SENT "i monotonic_ns" with the time each was handed to
 * librdkafka. Exits 0 once every message is acknowledged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_until(long long ns)
{
	struct timespec t = { .tv_sec = ns / 1000000000LL,
			      .tv_nsec = ns % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) ==
	       EINTR)
		;
}

int main(int argc, char **argv)
{
	char err[512], *line = NULL, *tab;
	size_t cap = 0;
	ssize_t len;
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *rk;
	FILE *in, *sent;
	double rate;
	long n, i = 0;
	long long start;

	if (argc != 7) {
		fprintf(stderr, "usage: lat_produce BOOTSTRAP TOPIC RATE N "
			"FIXTURES SENT\n");
		return 2;
	}
	rate = atof(argv[3]);
	n = atol(argv[4]);
	if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], err,
			      sizeof(err)) ||
	    rd_kafka_conf_set(conf, "linger.ms", "0", err, sizeof(err)) ||
	    !(rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err)))) {
		fprintf(stderr, "lat_produce: %s\n", err);
		return 1;
	}
	if (!(in = fopen(argv[5], "r")) || !(sent = fopen(argv[6], "w"))) {
		perror("lat_produce");
		return 1;
	}
	start = mono_ns();
	while (i < n && (len = getline(&line, &cap, in)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (!(tab = strchr(line, '\t')))
			continue;
		sleep_until(start + (long long)(i * 1e9 / rate));
		fprintf(sent, "%ld %lld\n", i, mono_ns());
		if (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(argv[2]),
				      RD_KAFKA_V_PARTITION(0),
				      RD_KAFKA_V_KEY(line, (size_t)(tab - line)),
				      RD_KAFKA_V_VALUE(tab + 1,
						       (size_t)(len - (tab + 1 - line))),
				      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				      RD_KAFKA_V_END)) {
			fprintf(stderr, "lat_produce: message %ld refused\n", i);
			return 1;
		}
		rd_kafka_poll(rk, 0);
		i++;
	}
	fclose(sent);
	fclose(in);
	free(line);
	if (rd_kafka_flush(rk, 30000)) {
		fprintf(stderr, "lat_produce: not every message delivered\n");
		return 1;
	}
	rd_kafka_destroy(rk);
	return i == n ? 0 : 1;
}
