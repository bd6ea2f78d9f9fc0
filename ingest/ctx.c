/*
 * ctx.c: a source's contexts -- what a source's file name or a `tail -F`
 * header ("==> path <==") says about the pod behind its lines (path.c
 * reads a kubelet log path), one context per file named, the least
 * recently used given up when they run out. Below ingest.c and frame.c,
 * which call it; it calls detect.c (to emit what a context it gives up
 * still holds) and path.c.
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"

void ing_ctx_release(struct ing_ctx *ctx)
{
	free(ctx->path);
	for (int i = 0; i < 2; i++) {
		rt_buf_release(&ctx->part[i].raw);
		rt_buf_release(&ctx->part[i].text);
	}
	memset(ctx, 0, sizeof(*ctx));
}

void ing_ctx_parse(struct ing_ctx *ctx, const char *path, size_t n)
{
	if (!ing_path_parse(path, n, &ctx->pod, &ctx->ns, &ctx->container))
		ctx->pod = ctx->ns = ctx->container = RT_STR_NULL;
}

/* Evicting a context emits its pending partials first. */
static int ctx_take(struct ingest *in, struct ing_src *src, int *slot)
{
	int lru = 1, rc;

	if (src->nctx < ING_MAX_CTX) {
		*slot = src->nctx++;
		return 0;
	}
	for (int i = 2; i < src->nctx; i++)
		if (src->ctx[i].used < src->ctx[lru].used)
			lru = i;
	if ((rc = ing_flush_parts(in, src, &src->ctx[lru])) != 0)
		return rc;
	ing_ctx_release(&src->ctx[lru]);
	*slot = lru;
	return 0;
}

int ing_set_header(struct ingest *in, struct ing_src *src, const char *path,
		   size_t n)
{
	struct ing_ctx *ctx;
	int slot, rc;

	for (int i = 1; i < src->nctx; i++) {
		ctx = &src->ctx[i];
		if (strlen(ctx->path) == n && memcmp(ctx->path, path, n) == 0) {
			src->cur = i;
			ctx->used = ++in->tick;
			return 0;
		}
	}
	if ((rc = ctx_take(in, src, &slot)) != 0)
		return rc;
	ctx = &src->ctx[slot];
	memset(ctx, 0, sizeof(*ctx));
	ctx->path = strndup(path, n);
	if (!ctx->path)
		return RT_ENOMEM;
	ing_ctx_parse(ctx, ctx->path, n);
	ctx->used = ++in->tick;
	src->cur = slot;
	return 0;
}
