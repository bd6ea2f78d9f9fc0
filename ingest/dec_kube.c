/*
 * dec_kube.c: Kubernetes API objects (docs/formats.md §1, §5): core/v1 and
 * events.k8s.io/v1 Events and kubernetes-event-exporter events, bare,
 * inside a watch envelope {"type","object"} or as items of a List. Objects
 * that are not Events go to the Helm decoder (storage Secrets/ConfigMaps,
 * release JSON, history/list arrays).
 *
 * Both event APIs and both client-go recorders are read through one set of
 * fallbacks, because the API server converts between them and kubectl may
 * show either view of the same object.
 */
#include <stdlib.h>
#include <string.h>

#include "decode.h"

static const cJSON *first_str(const cJSON *a, const cJSON *b,
			      const cJSON *c)
{
	return dec_json_nonempty(a) ? a : dec_json_nonempty(b) ? b : dec_json_nonempty(c);
}

static int64_t first_time(struct dec_ctx *d, const cJSON *a, const cJSON *b,
			  const cJSON *c, const cJSON *e)
{
	int64_t ns;

	if ((ns = dec_json_time(d, a)) || (ns = dec_json_time(d, b)) ||
	    (ns = dec_json_time(d, c)))
		return ns;
	return dec_json_time(d, e);
}

/* Go omits a zero int32 count, so absent and 0 both mean "not stated".
 * cJSON keeps no number's text: beyond 2^53 the count is as near as a
 * double holds it (the fast path, fast_event.c, reads it exactly). */
static int64_t json_count(const cJSON *it)
{
	return cJSON_IsNumber(it) ? rt_count_of_double(it->valuedouble) : 0;
}

static bool is_event(const cJSON *obj)
{
	const cJSON *kind = dec_json_get(obj, "kind");

	if (cJSON_IsString(kind))
		return dec_json_is(kind, "Event");
	/* Informer and exporter payloads may drop apiVersion/kind. */
	return (cJSON_IsObject(dec_json_get(obj, "involvedObject")) ||
		cJSON_IsObject(dec_json_get(obj, "regarding"))) &&
	       (dec_json_get(obj, "reason") || dec_json_get(obj, "message") ||
		dec_json_get(obj, "note"));
}

static bool is_exporter(const cJSON *ev, const cJSON *ref)
{
	return dec_json_get(ev, "clusterName") || dec_json_get(ref, "labels") ||
	       dec_json_get(ref, "annotations") || dec_json_get(ref, "ownerReferences") ||
	       dec_json_get(ref, "deleted");
}

/* ownerReferences[]: the controller entry, else the first. */
static const cJSON *pick_owner(const cJSON *owners)
{
	const cJSON *o;

	if (!cJSON_IsArray(owners))
		return NULL;
	cJSON_ArrayForEach(o, owners)
		if (cJSON_IsTrue(dec_json_get(o, "controller")))
			return o;
	return cJSON_GetArrayItem(owners, 0);
}

/*
 * k3s helm-controller jobs are named helm-install-<chart> / helm-delete-
 * <chart> (their pods add a suffix). The name alone could be any workload,
 * so the release is only taken when the chart label confirms it.
 */
static const cJSON *helm_controller_release(const cJSON *ref,
					    const cJSON *labels)
{
	const cJSON *chart = dec_json_nonempty(dec_json_get(labels,
					   "helmcharts.helm.cattle.io/chart"));
	const cJSON *name = dec_json_nonempty(dec_json_get(ref, "name"));
	static const char *const pre[] = { "helm-install-", "helm-delete-" };

	if (!chart || !name || !(dec_json_is(dec_json_get(ref, "kind"), "Job") ||
				 dec_json_is(dec_json_get(ref, "kind"), "Pod")))
		return NULL;
	for (int i = 0; i < 2; i++) {
		size_t pl = strlen(pre[i]), cl = strlen(chart->valuestring);
		const char *n = name->valuestring;

		if (strncmp(n, pre[i], pl) == 0 &&
		    strncmp(n + pl, chart->valuestring, cl) == 0 &&
		    (n[pl + cl] == '\0' || n[pl + cl] == '-'))
			return chart;
	}
	return NULL;
}

/* §5: labels, annotations and owners the exporter adds to involvedObject. */
static void exporter_hints(struct dec_ctx *d, struct rt_record *rec,
			   const cJSON *ref)
{
	const cJSON *labels = dec_json_get(ref, "labels");
	const cJSON *ann = dec_json_get(ref, "annotations");
	const cJSON *rel, *owner;

	rel = first_str(dec_json_get(ann, "meta.helm.sh/release-name"),
			dec_json_get(labels, "app.kubernetes.io/instance"),
			dec_json_get(labels, "release"));
	if (!rel)
		rel = dec_json_nonempty(dec_json_get(labels, "helm.sh/release"));
	if (!rel)
		rel = helm_controller_release(ref, labels);
	if (rel)
		rec->release = dec_json_str(d, rel);
	rec->release_ns = dec_json_str(d, dec_json_get(ann,
					"meta.helm.sh/release-namespace"));
	rec->template_hash = dec_json_str(d, dec_json_get(labels, "pod-template-hash"));
	rec->chart = dec_json_str(d, dec_json_get(labels, "helm.sh/chart"));
	owner = pick_owner(dec_json_get(ref, "ownerReferences"));
	rec->owner_kind = dec_json_str(d, dec_json_get(owner, "kind"));
	rec->owner_name = dec_json_str(d, dec_json_get(owner, "name"));
}

/* Event identity for dedupe: a re-sent or patched event keeps its uid and
 * its namespace/name, whatever its count. */
static struct rt_str event_uid(struct dec_ctx *d, const cJSON *meta,
			       struct rt_str ns)
{
	const cJSON *name = dec_json_nonempty(dec_json_get(meta, "name"));
	size_t nn;
	char *p;

	if (dec_json_nonempty(dec_json_get(meta, "uid")))
		return dec_json_str(d, dec_json_get(meta, "uid"));
	if (!name)
		return RT_STR_NULL;
	nn = strlen(name->valuestring);
	if (!(p = rt_arena_alloc(d->arena, ns.n + nn + 2)))
		return RT_STR_NULL;
	if (ns.n)
		memcpy(p, ns.p, ns.n);
	p[ns.n] = '/';
	memcpy(p + ns.n + 1, name->valuestring, nn + 1);
	return rt_str_make(p, ns.n + 1 + nn);
}

static void event_message(struct dec_ctx *d, struct rt_record *rec,
			  const cJSON *ev)
{
	rec->message = dec_json_str(d, first_str(dec_json_get(ev, "message"),
						 dec_json_get(ev, "note"), NULL));
	rec->message = dec_event_message(rec->message);
}

/* Last seen, first seen and count, per docs/formats.md §1.3. */
static void event_times(struct dec_ctx *d, struct rt_record *rec,
			const cJSON *ev)
{
	const cJSON *series = dec_json_get(ev, "series");
	int64_t count;

	rec->ts_ns = first_time(d, dec_json_get(ev, "lastTimestamp"),
				dec_json_get(ev, "deprecatedLastTimestamp"),
				dec_json_get(series, "lastObservedTime"),
				dec_json_get(ev, "eventTime"));
	if (!rec->ts_ns)
		rec->ts_ns = dec_json_time(d, dec_json_get(
			dec_json_get(ev, "metadata"), "creationTimestamp"));
	if (!rec->ts_ns && d->hint_ts_ns)
		rec->ts_ns = d->hint_ts_ns;
	rec->first_ns = first_time(d, dec_json_get(ev, "firstTimestamp"),
				   dec_json_get(ev, "deprecatedFirstTimestamp"),
				   dec_json_get(ev, "eventTime"), NULL);
	if ((count = json_count(dec_json_get(ev, "count"))) ||
	    (count = json_count(dec_json_get(series, "count"))) ||
	    (count = json_count(dec_json_get(ev, "deprecatedCount"))))
		rec->count = count;
	else
		rec->count = 1;
}

static int kube_event(struct dec_ctx *d, const cJSON *ev)
{
	struct rt_record rec = *d->base;
	const cJSON *meta = dec_json_get(ev, "metadata");
	const cJSON *ref = dec_json_get(ev, "involvedObject");
	const cJSON *src = dec_json_get(ev, "source");
	int rc;

	if (!cJSON_IsObject(ref))
		ref = dec_json_get(ev, "regarding");
	if (!cJSON_IsObject(src))
		src = dec_json_get(ev, "deprecatedSource");
	rec.format = is_exporter(ev, ref) ? RT_FMT_EXPORTER : RT_FMT_K8S_EVENT;
	/* The event describes its involved object, not whatever pod wrote the
	 * file it came from, so path-derived names are replaced. */
	rec.ns = dec_json_str(d, first_str(dec_json_get(meta, "namespace"),
					   dec_json_get(ref, "namespace"), NULL));
	rec.kind = dec_json_str(d, dec_json_get(ref, "kind"));
	rec.name = dec_json_str(d, dec_json_get(ref, "name"));
	rec.pod = rt_str_eq(rec.kind, "Pod") ? rec.name : RT_STR_NULL;
	rec.field_path = dec_json_str(d, dec_json_get(ref, "fieldPath"));
	rec.container = dec_event_container(rec.field_path);
	rec.reason = dec_json_str(d, dec_json_get(ev, "reason"));
	rec.type = dec_json_str(d, dec_json_get(ev, "type"));
	event_message(d, &rec, ev);
	rec.component = dec_json_str(d, first_str(dec_json_get(ev, "reportingComponent"),
						  dec_json_get(ev, "reportingController"),
						  dec_json_get(src, "component")));
	rec.host = dec_json_str(d, dec_json_get(src, "host"));
	rec.uid = event_uid(d, meta, rec.ns);
	event_times(d, &rec, ev);
	if (rec.format == RT_FMT_EXPORTER)
		exporter_hints(d, &rec, ref);
	rec.revs = NULL;
	rec.nrevs = 0;
	if ((rc = dec_emit(d, &rec)) != 0)
		return rc;
	return DEC_YES;
}

/* One object as if it stood alone: an Event, or something Helm. */
static int kube_item(struct dec_ctx *d, const cJSON *obj)
{
	if (!cJSON_IsObject(obj))
		return DEC_NO;
	if (is_event(obj))
		return kube_event(d, obj);
	return dec_helm_json(d, obj);
}

/* Item results: DEC_NO for an item we do not read is counted, not fatal. */
static int kube_counted(struct dec_ctx *d, const cJSON *obj)
{
	int rc = kube_item(d, obj);

	if (rc == DEC_NO) {
		d->stats->skipped++;
		return DEC_YES;
	}
	return rc;
}

/*
 * An item of a List or bare array: an Event's raw text is its own JSON, not
 * the whole document, so rules reading `raw` see one event at a time.
 */
static int kube_list_item(struct dec_ctx *d, const cJSON *obj)
{
	struct rt_record base;
	struct dec_ctx sub;
	char *text;

	if (!is_event(obj) || !(text = cJSON_PrintUnformatted(obj)))
		return kube_counted(d, obj);
	base = *d->base;
	base.raw = rt_arena_strdup(d->arena, text, strlen(text));
	free(text);
	if (!base.raw.p)
		return RT_ENOMEM;
	sub = *d;
	sub.base = &base;
	return kube_counted(&sub, obj);
}

static bool is_watch_type(const cJSON *t)
{
	static const char *const types[] = {
		"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR",
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (dec_json_is(t, types[i]))
			return true;
	return false;
}

static bool is_list(const cJSON *obj)
{
	const cJSON *kind = dec_json_get(obj, "kind");
	size_t n;

	if (!cJSON_IsString(kind) || !cJSON_IsArray(dec_json_get(obj, "items")))
		return false;
	n = strlen(kind->valuestring);
	/* kubectl prints "List"; the API server "EventList", "SecretList". */
	return n >= 4 && strcmp(kind->valuestring + n - 4, "List") == 0;
}

int dec_kube_json(struct dec_ctx *d, const cJSON *root)
{
	const cJSON *type, *object, *item;
	int rc;

	if (cJSON_IsArray(root)) {
		/* `kubectl get events -o json | jq .items`: a bare array. */
		if (!is_event(cJSON_GetArrayItem(root, 0)))
			return dec_helm_json(d, root);
		cJSON_ArrayForEach(item, root)
			if ((rc = kube_list_item(d, item)) != DEC_YES)
				return rc;
		return DEC_YES;
	}
	if (!cJSON_IsObject(root))
		return DEC_NO;
	type = dec_json_get(root, "type");
	object = dec_json_get(root, "object");
	if (is_watch_type(type) && cJSON_IsObject(object)) {
		if (dec_json_is(type, "ERROR") || dec_json_is(type, "BOOKMARK")) {
			d->stats->skipped++;
			return DEC_YES;
		}
		return kube_counted(d, object);
	}
	if (is_list(root)) {
		cJSON_ArrayForEach(item, dec_json_get(root, "items"))
			if ((rc = kube_list_item(d, item)) != DEC_YES)
				return rc;
		return DEC_YES;
	}
	return kube_item(d, root);
}
