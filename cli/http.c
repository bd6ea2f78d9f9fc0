/*
 * http.c: the /metrics, /healthz and /readyz server of `consume --http`
 * (http.h), on libmicrohttpd.
 *
 * Why libmicrohttpd: it is GNU's small embeddable HTTP/1.1 server, packaged
 * by Debian (libmicrohttpd-dev) and kept up to date there, and it does the
 * parts a hand-written server gets wrong under hostile clients: request
 * parsing, slow and half-open connections, pipelining, HEAD. It runs its
 * own thread here, so the consume loop never waits for a scrape.
 *
 * The port may face anyone on the pod network, so: GET and HEAD only (405
 * otherwise), 404 for any other path, at most HTTP_CONNECTIONS
 * connections (HTTP_PER_IP from one address), each closed after
 * HTTP_TIMEOUT_S idle seconds and given HTTP_MEMORY bytes for its
 * request. A response is built from a copy of the metrics taken under
 * their mutex; nothing here touches librdkafka or SQLite.
 *
 * The kubelet's probe must get through a slowloris flood (connections
 * that send half a header and wait), or it restarts a healthy pod. One
 * polling thread (epoll, which MHD_USE_AUTO picks on Linux) serves every
 * connection, so a half-open one costs a socket and HTTP_MEMORY, never a
 * turn of the thread; a thread per connection would cost a stack each
 * and answer no faster. What a flood can take is the connection table:
 * the per-address limit is small and the table is large, so the flood
 * needs HTTP_CONNECTIONS / HTTP_PER_IP addresses to fill it (a
 * NetworkPolicy is the answer past that), and what it holds is freed
 * after a few idle seconds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include <librdkafka/rdkafka.h>
#include <microhttpd.h>
#include <sqlite3.h>

#include "http.h"
#include "revtrail/log.h"
#include "revtrail/rt.h"

#ifndef REVTRAIL_VERSION
#define REVTRAIL_VERSION "unknown"
#endif

#define HTTP_CONNECTIONS 128     /* at most 4 MiB of HTTP_MEMORY */
#define HTTP_PER_IP 4            /* a scraper and the kubelet need fewer */
#define HTTP_TIMEOUT_S 5
#define HTTP_MEMORY (32 * 1024)

struct http {
	struct MHD_Daemon *d;
	struct metrics *m;
	struct metrics_build build;
	/* Scratch for a scrape: the snapshot is too large for a stack that
	 * libmicrohttpd sizes. One thread serves every request. */
	struct metrics_snap snap;
};

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- responses ------------------------------------------------------- */

/* Queues body (taken over when owned) with status and type. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *type, char *body, size_t len,
			     bool owned)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status,
				  const char *text)
{
	char body[512];
	int n = snprintf(body, sizeof(body), "%s\n", text);

	return reply(c, status, "text/plain; charset=utf-8", body,
		     n < (int)sizeof(body) ? (size_t)n : sizeof(body) - 1,
		     false);
}

static enum MHD_Result serve_metrics(struct http *h, struct MHD_Connection *c)
{
	struct metrics_hist hist;
	int64_t ready_lag;
	size_t len = 0;
	char *text;

	metrics_copy(h->m, &h->snap, &hist, &ready_lag);
	if (!(text = metrics_render(&h->snap, &hist, &h->build, &len)))
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "out of memory");
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		     text, len, true);
}

static enum MHD_Result serve_probe(struct http *h, struct MHD_Connection *c,
				   bool ready)
{
	struct metrics_hist hist;
	int64_t ready_lag, now = mono_ms();
	char why[512];
	bool good;

	metrics_copy(h->m, &h->snap, &hist, &ready_lag);
	good = ready ? metrics_ready(&h->snap, now, ready_lag, why, sizeof(why)) :
		metrics_healthy(&h->snap, now, why, sizeof(why));
	return reply_text(c, good ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
			  why);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	struct http *h = cls;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)state;
	/* Answered at the first call, before any body is read: a body is
	 * never wanted, and is discarded with the connection. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed: GET or HEAD");
	if (!strcmp(url, "/metrics"))
		return serve_metrics(h, c);
	if (!strcmp(url, "/healthz"))
		return serve_probe(h, c, false);
	if (!strcmp(url, "/readyz"))
		return serve_probe(h, c, true);
	return reply_text(c, MHD_HTTP_NOT_FOUND,
			  "not found: /metrics, /healthz, /readyz");
}

/* libmicrohttpd's own messages (a connection limit reached, a malformed
 * request) become log lines, folded when they repeat. */
/* ---- the listening address ------------------------------------------ */

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 5)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" into ss. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss,
		      char *err, size_t errsz)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *res = NULL;
	size_t hn;
	uint16_t port;
	int rc;

	if (!colon || parse_port(colon + 1, &port)) {
		snprintf(err, errsz, "--http wants ADDR:PORT, got '%s'", addr);
		return RT_EINVAL;
	}
	hn = (size_t)(colon - addr);
	if (hn >= 2 && addr[0] == '[' && addr[hn - 1] == ']')
		addr++, hn -= 2;
	if (hn >= sizeof(host)) {
		snprintf(err, errsz, "--http: address too long");
		return RT_EINVAL;
	}
	memcpy(host, addr, hn);
	host[hn] = '\0';
	if ((rc = getaddrinfo(hn ? host : "0.0.0.0", NULL, &hints, &res)) ||
	    !res) {
		snprintf(err, errsz, "--http: %s: %s", host, gai_strerror(rc));
		return RT_EINVAL;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	return 0;
}

/* ---- lifecycle ------------------------------------------------------- */

static struct MHD_Daemon *listen_on(struct http *h,
				    const struct sockaddr_storage *ss)
{
	/* No MHD_USE_ERROR_LOG: libmicrohttpd's own lines said "Failed to
	 * bind to port 0" before revtrail's error, and any client could make
	 * it write one a refused connection; revtrail reports what matters
	 * (a failed start, in http_start) itself. */
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD |
		(ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	sigset_t block, old;
	struct MHD_Daemon *d;

	/* The server's thread inherits this mask: SIGINT and SIGTERM are
	 * for the consume loop's thread. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
			     MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss,
			     MHD_OPTION_CONNECTION_LIMIT,
			     (unsigned)HTTP_CONNECTIONS,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT,
			     (unsigned)HTTP_PER_IP,
			     MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned)HTTP_TIMEOUT_S,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			     (size_t)HTTP_MEMORY,
			     MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d;
}

int http_start(const char *addr, struct metrics *m, struct http **out,
	       char *err, size_t errsz)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	struct http *h;
	int rc;

	*out = NULL;
	if ((rc = parse_addr(addr, &ss, err, errsz)))
		return rc;
	if (!(h = calloc(1, sizeof(*h)))) {
		snprintf(err, errsz, "out of memory");
		return RT_ENOMEM;
	}
	h->m = m;
	h->build = (struct metrics_build){
		REVTRAIL_VERSION, rd_kafka_version_str(), sqlite3_libversion(),
		(double)time(NULL) };
	errno = 0;
	if (!(h->d = listen_on(h, &ss))) {
		snprintf(err, errsz, "--http %s: cannot listen%s%s", addr,
			 errno ? ": " : "", errno ? strerror(errno) : "");
		free(h);
		return RT_EIO;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	rt_log(RT_LOG_INFO, "http", "listening on %.*s:%u (/metrics, /healthz, "
	       "/readyz)", (int)(strrchr(addr, ':') - addr), addr,
	       info ? info->port : 0);
	*out = h;
	return 0;
}

void http_stop(struct http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
