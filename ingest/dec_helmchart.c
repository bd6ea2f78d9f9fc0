/*
 * dec_helmchart.c: k3s/RKE2 helm-controller HelmChart objects
 * (helm.cattle.io/v1, docs/formats.md §4.1) read from json_scan.h nodes.
 *
 * A HelmChart names the namespace its release is installed in
 * (spec.targetNamespace, else its own), which is what the job
 * helm-install-NAME it runs in its own namespace does not say. It is
 * emitted as one record of the HelmChart whose release hint carries that
 * namespace: the batch keeps it as the mapping "HelmChart/NAME" of the
 * chart's namespace (corr_record_job_alias), the same evidence the job's
 * `helm_v3 upgrade --namespace N NAME` line gives. The record says no
 * failure, so no rule tags it and it is not stored as an event.
 */
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "frame.h"
#include "json_scan.h"

/* Kubernetes bounds: a namespace is a DNS label, a name a subdomain. */
#define HC_NS_MAX 63
#define HC_NAME_MAX 253

bool dec_helmchart_is(const struct js_doc *doc, const struct js_node *obj)
{
	const struct js_node *api = js_get(doc, obj, "apiVersion");
	static const char group[] = "helm.cattle.io/";

	return js_is(obj, JS_OBJ) &&
	       js_str_is(js_get(doc, obj, "kind"), "HelmChart") &&
	       js_is(api, JS_STR) && !api->esc &&
	       api->n > sizeof(group) - 1 &&
	       !memcmp(api->s, group, sizeof(group) - 1);
}

/* A name of 1..max bytes, else empty. */
static struct rt_str bounded(struct dec_ctx *d, const struct js_node *it,
			     size_t max)
{
	struct rt_str s = js_str(d->arena, it);

	return s.n && s.n <= max ? s : RT_STR_NULL;
}

/* "HelmChart kube-system/redis: chart C version V into namespace cache" */
static struct rt_str chart_message(struct dec_ctx *d, const struct rt_record *r,
				   struct rt_str chart, struct rt_str version)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf), "HelmChart %.*s/%.*s: chart %.*s%s%.*s "
		     "into namespace %.*s", (int)r->ns.n, r->ns.p,
		     (int)r->name.n, r->name.p,
		     (int)(chart.n > 512 ? 512 : chart.n), chart.p,
		     version.n ? " version " : "",
		     (int)(version.n > 128 ? 128 : version.n), version.p,
		     (int)r->release_ns.n, r->release_ns.p);
	if (n < 0)
		return RT_STR_NULL;
	return rt_arena_strdup(d->arena, buf,
			       (size_t)n < sizeof(buf) ? (size_t)n :
			       sizeof(buf) - 1);
}

int dec_helmchart(struct dec_ctx *d, const struct js_doc *doc,
		  const struct js_node *obj)
{
	const struct js_node *meta = js_get(doc, obj, "metadata");
	const struct js_node *spec = js_get(doc, obj, "spec");
	const struct js_node *target = js_get(doc, spec, "targetNamespace");
	struct rt_record rec = *d->base;
	int64_t ns = 0;
	struct rt_str t;
	int rc;

	if (!js_is(meta, JS_OBJ) || (spec && !js_is(spec, JS_OBJ)) ||
	    (target && !js_is(target, JS_STR) && !js_is(target, JS_NULL)))
		return DEC_NO;
	rec.format = RT_FMT_JSON;
	rec.kind = RT_STR_LIT("HelmChart");
	rec.ns = bounded(d, js_get(doc, meta, "namespace"), HC_NS_MAX);
	rec.name = bounded(d, js_get(doc, meta, "name"), HC_NAME_MAX);
	/* helm-controller: an empty targetNamespace is the chart's own */
	rec.release_ns = js_nonempty(target) ?
			 bounded(d, target, HC_NS_MAX) : rec.ns;
	if (!rec.ns.n || !rec.name.n || !rec.release_ns.n)
		return DEC_NO;
	rec.release = rec.name;
	/* its own text, not the List's, should --keep-untagged store it */
	rec.raw = rt_str_make(obj->s, obj->n);
	t = js_str(d->arena, js_get(doc, meta, "creationTimestamp"));
	if (t.n)
		rec.ts_ns = dec_time(d, rt_time_parse(t.p, t.n, &ns), &ns);
	rec.first_ns = rec.ts_ns;
	rec.message = chart_message(d, &rec,
				    js_str(d->arena, js_get(doc, spec, "chart")),
				    js_str(d->arena, js_get(doc, spec,
							    "version")));
	rec.revs = NULL;
	rec.nrevs = 0;
	if (!rec.message.p)
		return RT_ENOMEM;
	if ((rc = dec_emit(d, &rec)) != 0)
		return rc;
	return DEC_YES;
}
