/*
 * dec_kube.c: Kubernetes API objects (docs/formats.md §1, §5) read from
 * json_scan.h nodes: Events (decoded by fast_event.c, the one Event
 * reader) bare, inside a watch envelope {"type","object"}, as items of a
 * List or elements of an array. HelmCharts go to dec_helmchart.c. Objects
 * that are neither go to the Helm decoder (storage Secrets/ConfigMaps,
 * release JSON, history/list arrays), which reads the same nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "frame.h"
#include "json_scan.h"

/* One object as if it stood alone: an Event, or something Helm. */
static int kube_item(struct dec_ctx *d, const struct js_doc *doc,
		     const struct js_node *obj)
{
	struct ing_event ev;

	if (!js_is(obj, JS_OBJ))
		return DEC_NO;
	if (ing_event_at(doc, obj, false, &ev))
		return ing_event_fast(d, doc, &ev);
	if (dec_helmchart_is(doc, obj))
		return dec_helmchart(d, doc, obj);
	return dec_helm_json(d, doc, obj);
}

/* Item results: DEC_NO for an item we do not read is counted, not fatal. */
static int kube_counted(struct dec_ctx *d, const struct js_doc *doc,
			const struct js_node *obj)
{
	int rc = kube_item(d, doc, obj);

	if (rc == DEC_NO) {
		d->stats->skipped++;
		return DEC_YES;
	}
	return rc;
}

/*
 * An item of a List or bare array: an Event's raw text is its own JSON,
 * printed compact as cJSON printed it (js_print), not the whole document,
 * so rules reading `raw` see one event at a time.
 */
static int kube_list_item(struct dec_ctx *d, const struct js_doc *doc,
			  const struct js_node *obj)
{
	struct ing_event ev;
	struct rt_record base;
	struct dec_ctx sub;

	if (!js_is(obj, JS_OBJ) || !ing_event_at(doc, obj, false, &ev))
		return kube_counted(d, doc, obj);
	base = *d->base;
	base.raw = js_print(d->arena, doc, obj);
	if (!base.raw.p)
		return RT_ENOMEM;
	sub = *d;
	sub.base = &base;
	return ing_event_fast(&sub, doc, &ev);
}

static bool is_watch_type(const struct js_node *t)
{
	static const char *const types[] = {
		"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR",
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (js_str_is(t, types[i]))
			return true;
	return false;
}

static bool is_list(struct dec_ctx *d, const struct js_doc *doc,
		    const struct js_node *obj)
{
	const struct js_node *kind = js_get(doc, obj, "kind");
	struct rt_str k;

	if (!js_is(js_get(doc, obj, "items"), JS_ARR) || !js_is(kind, JS_STR))
		return false;
	/* kubectl prints "List"; the API server "EventList", "SecretList". */
	k = js_str(d->arena, kind);
	return k.n >= 4 && memcmp(k.p + k.n - 4, "List", 4) == 0;
}

static int kube_items(struct dec_ctx *d, const struct js_doc *doc,
		      const struct js_node *arr)
{
	int rc;

	for (uint32_t i = arr->child; i; i = doc->node[i].next)
		if ((rc = kube_list_item(d, doc, &doc->node[i])) != DEC_YES)
			return rc;
	return DEC_YES;
}

int dec_kube_json(struct dec_ctx *d, const struct js_doc *doc,
		  const struct js_node *root)
{
	const struct js_node *type, *object;
	struct ing_event ev;

	if (js_is(root, JS_ARR)) {
		/* `kubectl get events -o json | jq .items`: a bare array. */
		if (!root->child ||
		    (!ing_event_at(doc, &doc->node[root->child], false, &ev) &&
		     !dec_helmchart_is(doc, &doc->node[root->child])))
			return dec_helm_json(d, doc, root);
		return kube_items(d, doc, root);
	}
	if (!js_is(root, JS_OBJ))
		return DEC_NO;
	type = js_get(doc, root, "type");
	object = js_get(doc, root, "object");
	if (is_watch_type(type) && js_is(object, JS_OBJ)) {
		if (js_str_is(type, "ERROR") || js_str_is(type, "BOOKMARK")) {
			d->stats->skipped++;
			return DEC_YES;
		}
		return kube_counted(d, doc, object);
	}
	if (is_list(d, doc, root))
		return kube_items(d, doc, js_get(doc, root, "items"));
	return kube_item(d, doc, root);
}
