/*
 * http.h (private to cli/): `consume --http ADDR:PORT`, a small HTTP
 * server (libmicrohttpd, its own thread) for /metrics, /healthz and
 * /readyz, read from a struct metrics (metrics.h).
 */
#ifndef REVTRAIL_CLI_HTTP_H
#define REVTRAIL_CLI_HTTP_H

#include <stddef.h>

#include "metrics.h"

struct http;

/*
 * Listens on addr ("127.0.0.1:9100", "0.0.0.0:9100", "[::]:9100",
 * ":9100" for every address; port 0 picks a free one) and serves m, which
 * must outlive the server. Logs the address it listens on. Returns 0, or
 * RT_EINVAL for an address it cannot parse and RT_EIO when it cannot
 * listen, with err filled.
 */
int http_start(const char *addr, struct metrics *m, struct http **out,
	       char *err, size_t errsz);
/* Closes every connection and ends the thread. Accepts NULL. */
void http_stop(struct http *h);

#endif
