/*
 * fast_event.c: one-line core/v1 and events.k8s.io/v1 Events, bare or in a
 * watch envelope, decoded from json_scan.h's nodes instead of a cJSON tree.
 * `kubectl get events -w -o json`, event exporters and Kafka topics carry
 * them by the million, and building the tree cost five times the rest.
 *
 * The one Event reader: one-line Events from the dispatcher, Events in
 * Lists, arrays and envelopes from dec_kube.c. Exporter events (no kind;
 * labels, annotations and owners on the involved object) are read here
 * too: a Kafka topic of them paid three times its decoding for a cJSON
 * tree.
 */
#include <pthread.h>
#include <string.h>

#include "frame.h"
#include "json_scan.h"

static const struct js_node *first_str(const struct js_node *a,
				       const struct js_node *b,
				       const struct js_node *c)
{
	return js_nonempty(a) ? a : js_nonempty(b) ? b : js_nonempty(c);
}

/* A time: 0 for absent, empty or unparseable. An escaped value
 * (never seen in practice) is decoded into the arena first. RFC 3339, what
 * Events carry, goes to ing_rfc3339, which reads what rt_time_parse reads
 * (test_ingest_fast.c checks) and remembers the last second: an Event's
 * times mostly share theirs. 355 instructions a time before, 70 after. */
static int64_t json_time(struct dec_ctx *d, const struct js_node *it)
{
	struct rt_str s;
	int64_t ns = 0;

	if (!js_nonempty(it))
		return 0;
	s = it->esc ? js_str(d->arena, it) : rt_str_make(it->s, it->n);
	if (s.n && ing_rfc3339(s.p, s.n, &ns) == s.n)
		return ns;
	return dec_time(d, rt_time_parse(s.p, s.n, &ns), &ns);
}

static int64_t first_time(struct dec_ctx *d, const struct js_node *a,
			  const struct js_node *b, const struct js_node *c,
			  const struct js_node *e)
{
	int64_t ns;

	if ((ns = json_time(d, a)) || (ns = json_time(d, b)) ||
	    (ns = json_time(d, c)))
		return ns;
	return json_time(d, e);
}

/* Digits only: read as an integer from the text, exact beyond 2^53 and
 * saturated at INT64_MAX; anything else (a fraction, an exponent, a sign)
 * through the double, clamped. */
static int64_t json_count(const struct js_node *it)
{
	uint64_t v = 0;
	size_t i;

	if (!js_is(it, JS_NUM))
		return 0;
	for (i = 0; i < it->n && it->s[i] >= '0' && it->s[i] <= '9'; i++) {
		uint64_t d = (uint64_t)(it->s[i] - '0');

		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return INT64_MAX;
		v = v * 10 + d;
	}
	if (i < it->n || i == 0)
		return rt_count_of_double(it->num);
	return (int64_t)v;      /* 0 stays "not stated" */
}

/* The members of an Event that kube_event reads. */
enum {
	EV_KIND, EV_TYPE, EV_OBJECT, EV_METADATA, EV_INVOLVED, EV_REGARDING,
	EV_SOURCE, EV_DEP_SOURCE, EV_CLUSTER, EV_REASON, EV_MESSAGE, EV_NOTE,
	EV_REP_COMPONENT, EV_REP_CONTROLLER, EV_SERIES, EV_LAST, EV_DEP_LAST,
	EV_EVENT_TIME, EV_FIRST, EV_DEP_FIRST, EV_COUNT, EV_DEP_COUNT, EV_N
};
static const struct js_key ev_keys[EV_N] = {
	JS_KEY("kind"), JS_KEY("type"), JS_KEY("object"), JS_KEY("metadata"),
	JS_KEY("involvedObject"), JS_KEY("regarding"), JS_KEY("source"),
	JS_KEY("deprecatedSource"), JS_KEY("clusterName"), JS_KEY("reason"),
	JS_KEY("message"), JS_KEY("note"), JS_KEY("reportingComponent"),
	JS_KEY("reportingController"), JS_KEY("series"),
	JS_KEY("lastTimestamp"), JS_KEY("deprecatedLastTimestamp"),
	JS_KEY("eventTime"), JS_KEY("firstTimestamp"),
	JS_KEY("deprecatedFirstTimestamp"), JS_KEY("count"),
	JS_KEY("deprecatedCount"),
};
_Static_assert(EV_N <= ING_EVENT_MEMBERS, "struct ing_event holds them");

/* ... of its involved object (regarding in events.k8s.io/v1) ... */
enum {
	REF_NAMESPACE, REF_KIND, REF_NAME, REF_FIELD_PATH, REF_LABELS,
	REF_ANNOTATIONS, REF_OWNERS, REF_DELETED, REF_N
};
static const struct js_key ref_keys[REF_N] = {
	JS_KEY("namespace"), JS_KEY("kind"), JS_KEY("name"),
	JS_KEY("fieldPath"), JS_KEY("labels"), JS_KEY("annotations"),
	JS_KEY("ownerReferences"), JS_KEY("deleted"),
};

/* ... and of its metadata, source and series. */
enum { META_NAMESPACE, META_NAME, META_UID, META_CREATED, META_N };
static const struct js_key meta_keys[META_N] = {
	JS_KEY("namespace"), JS_KEY("name"), JS_KEY("uid"),
	JS_KEY("creationTimestamp"),
};
enum { SRC_COMPONENT, SRC_HOST, SRC_N };
static const struct js_key src_keys[SRC_N] = {
	JS_KEY("component"), JS_KEY("host"),
};
enum { SER_LAST, SER_COUNT, SER_N };
static const struct js_key ser_keys[SER_N] = {
	JS_KEY("lastObservedTime"), JS_KEY("count"),
};

/* ... and of the labels and annotations an exporter adds to it. */
enum { LAB_INSTANCE, LAB_RELEASE, LAB_HELM_RELEASE, LAB_CATTLE_CHART,
       LAB_HASH, LAB_CHART, LAB_N };
static const struct js_key lab_keys[LAB_N] = {
	JS_KEY("app.kubernetes.io/instance"), JS_KEY("release"),
	JS_KEY("helm.sh/release"), JS_KEY("helmcharts.helm.cattle.io/chart"),
	JS_KEY("pod-template-hash"), JS_KEY("helm.sh/chart"),
};
enum { ANN_RELEASE, ANN_RELEASE_NS, ANN_N };
static const struct js_key ann_keys[ANN_N] = {
	JS_KEY("meta.helm.sh/release-name"),
	JS_KEY("meta.helm.sh/release-namespace"),
};

/* The tables above, hashed for js_pick once per process. */
static struct js_keyset ev_set, ref_set, meta_set, src_set, ser_set;
static struct js_keyset lab_set, ann_set;
static pthread_once_t sets_once = PTHREAD_ONCE_INIT;

static void init_sets(void)
{
	js_keyset_init(&ev_set, ev_keys, EV_N);
	js_keyset_init(&ref_set, ref_keys, REF_N);
	js_keyset_init(&meta_set, meta_keys, META_N);
	js_keyset_init(&src_set, src_keys, SRC_N);
	js_keyset_init(&ser_set, ser_keys, SER_N);
	js_keyset_init(&lab_set, lab_keys, LAB_N);
	js_keyset_init(&ann_set, ann_keys, ANN_N);
}

static bool is_watch_type(const struct js_node *t)
{
	static const struct js_key types[] = {
		JS_KEY("ADDED"), JS_KEY("MODIFIED"), JS_KEY("DELETED"),
		JS_KEY("BOOKMARK"), JS_KEY("ERROR"),
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (js_str_is_n(t, types[i].s, types[i].n))
			return true;
	return false;
}

/*
 * An Event, bare or in a watch envelope, told apart by the members the
 * decoder reads anyway: one js_pick of the root serves both (a separate
 * walk to tell them cost 400 instructions an Event). An Event without a
 * kind (exporter and informer payloads) is told by its shape, as
 * dec_kube.c's is_event does: an involved object and a reason, message or
 * note.
 */
static bool is_event(const struct js_node **ev)
{
	if (js_is(ev[EV_KIND], JS_STR))
		return js_str_is(ev[EV_KIND], "Event");
	return (js_is(ev[EV_INVOLVED], JS_OBJ) ||
		js_is(ev[EV_REGARDING], JS_OBJ)) &&
	       (ev[EV_REASON] || ev[EV_MESSAGE] || ev[EV_NOTE]);
}

bool ing_event_at(const struct js_doc *doc, const struct js_node *obj,
		  bool envelope, struct ing_event *out)
{
	const struct js_node **ev = out->m;

	if (!js_is(obj, JS_OBJ))
		return false;
	pthread_once(&sets_once, init_sets);
	js_pick(doc, obj, &ev_set, ev);
	if (envelope && is_watch_type(ev[EV_TYPE]) &&
	    js_is(ev[EV_OBJECT], JS_OBJ)) {
		if (js_str_is(ev[EV_TYPE], "ERROR") ||
		    js_str_is(ev[EV_TYPE], "BOOKMARK"))
			return false;
		js_pick(doc, ev[EV_OBJECT], &ev_set, ev);
	}
	return is_event(ev);
}

static struct rt_str event_uid(struct dec_ctx *d, const struct js_node **meta,
			       struct rt_str ns)
{
	struct rt_str name;
	char *p;

	if (js_nonempty(meta[META_UID]))
		return js_str(d->arena, meta[META_UID]);
	if (!js_nonempty(meta[META_NAME]))
		return RT_STR_NULL;
	name = js_str(d->arena, meta[META_NAME]);
	if (!(p = rt_arena_alloc(d->arena, ns.n + name.n + 2)))
		return RT_STR_NULL;
	if (ns.n)
		memcpy(p, ns.p, ns.n);
	p[ns.n] = '/';
	memcpy(p + ns.n + 1, name.p, name.n);
	p[ns.n + 1 + name.n] = '\0';
	return rt_str_make(p, ns.n + 1 + name.n);
}

static void event_times(struct dec_ctx *d, struct rt_record *rec,
			const struct js_doc *doc, const struct js_node *const *ev,
			const struct js_node **meta)
{
	const struct js_node *ser[SER_N];
	int64_t count;

	js_pick(doc, ev[EV_SERIES], &ser_set, ser);
	rec->ts_ns = first_time(d, ev[EV_LAST], ev[EV_DEP_LAST],
				ser[SER_LAST], ev[EV_EVENT_TIME]);
	if (!rec->ts_ns)
		rec->ts_ns = json_time(d, meta[META_CREATED]);
	if (!rec->ts_ns && d->hint_ts_ns)
		rec->ts_ns = d->hint_ts_ns;
	rec->first_ns = first_time(d, ev[EV_FIRST], ev[EV_DEP_FIRST],
				   ev[EV_EVENT_TIME], NULL);
	if ((count = json_count(ev[EV_COUNT])) ||
	    (count = json_count(ser[SER_COUNT])) ||
	    (count = json_count(ev[EV_DEP_COUNT])))
		rec->count = count;
	else
		rec->count = 1;
}

/* dec_kube.c's pick_owner: the controller entry, else the first. */
static const struct js_node *pick_owner(const struct js_doc *doc,
					const struct js_node *owners)
{
	if (!js_is(owners, JS_ARR))
		return NULL;
	for (uint32_t i = owners->child; i; i = doc->node[i].next)
		if (js_is(js_get(doc, &doc->node[i], "controller"), JS_TRUE))
			return &doc->node[i];
	return owners->child ? &doc->node[owners->child] : NULL;
}

/* dec_kube.c's helm_controller_release: helm-install-<chart> or
 * helm-delete-<chart>, a Job or Pod, confirmed by the chart label. */
static const struct js_node *helm_controller_release(struct dec_ctx *d,
	const struct js_node **ref, const struct js_node **lab)
{
	static const struct js_key pre[] = {
		JS_KEY("helm-install-"), JS_KEY("helm-delete-"),
	};
	const struct js_node *chart = js_nonempty(lab[LAB_CATTLE_CHART]);
	struct rt_str c, n;

	if (!chart || !js_nonempty(ref[REF_NAME]) ||
	    !(js_str_is(ref[REF_KIND], "Job") || js_str_is(ref[REF_KIND], "Pod")))
		return NULL;
	c = js_str(d->arena, chart);
	n = js_str(d->arena, ref[REF_NAME]);
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t pl = pre[i].n;

		if (n.n >= pl + c.n && !memcmp(n.p, pre[i].s, pl) &&
		    !memcmp(n.p + pl, c.p, c.n) &&
		    (n.n == pl + c.n || n.p[pl + c.n] == '-'))
			return chart;
	}
	return NULL;
}

/* dec_kube.c's exporter_hints: release, chart, template hash and owner
 * from the labels, annotations and owners on the involved object. */
static void exporter_hints(struct dec_ctx *d, struct rt_record *rec,
			   const struct js_doc *doc, const struct js_node **ref)
{
	const struct js_node *lab[LAB_N], *ann[ANN_N], *rel, *owner;

	js_pick(doc, ref[REF_LABELS], &lab_set, lab);
	js_pick(doc, ref[REF_ANNOTATIONS], &ann_set, ann);
	rel = first_str(ann[ANN_RELEASE], lab[LAB_INSTANCE], lab[LAB_RELEASE]);
	if (!rel)
		rel = js_nonempty(lab[LAB_HELM_RELEASE]);
	if (!rel)
		rel = helm_controller_release(d, ref, lab);
	if (rel)
		rec->release = js_str(d->arena, rel);
	rec->release_ns = js_str(d->arena, ann[ANN_RELEASE_NS]);
	rec->template_hash = js_str(d->arena, lab[LAB_HASH]);
	rec->chart = js_str(d->arena, lab[LAB_CHART]);
	owner = pick_owner(doc, ref[REF_OWNERS]);
	rec->owner_kind = js_str(d->arena, js_get(doc, owner, "kind"));
	rec->owner_name = js_str(d->arena, js_get(doc, owner, "name"));
}

int ing_event_fast(struct dec_ctx *d, const struct js_doc *doc,
		   const struct ing_event *event)
{
	struct rt_record rec = *d->base;
	const struct js_node *const *ev = event->m;
	const struct js_node *ref[REF_N], *meta[META_N], *src[SRC_N];
	const struct js_node *r, *s;
	bool exporter;
	int rc;

	r = js_is(ev[EV_INVOLVED], JS_OBJ) ? ev[EV_INVOLVED] : ev[EV_REGARDING];
	s = js_is(ev[EV_SOURCE], JS_OBJ) ? ev[EV_SOURCE] : ev[EV_DEP_SOURCE];
	js_pick(doc, r, &ref_set, ref);
	js_pick(doc, ev[EV_METADATA], &meta_set, meta);
	js_pick(doc, s, &src_set, src);
	exporter = ev[EV_CLUSTER] || ref[REF_LABELS] || ref[REF_ANNOTATIONS] ||
		   ref[REF_OWNERS] || ref[REF_DELETED];
	rec.format = exporter ? RT_FMT_EXPORTER : RT_FMT_K8S_EVENT;
	rec.ns = js_str(d->arena, first_str(meta[META_NAMESPACE],
					    ref[REF_NAMESPACE], NULL));
	rec.kind = js_str(d->arena, ref[REF_KIND]);
	rec.name = js_str(d->arena, ref[REF_NAME]);
	/* rt_str_eq, inline: a call and a strlen cost 70 instructions. */
	rec.pod = rec.kind.n == 3 && !memcmp(rec.kind.p, "Pod", 3) ? rec.name :
		  RT_STR_NULL;
	rec.field_path = js_str(d->arena, ref[REF_FIELD_PATH]);
	rec.container = dec_event_container(rec.field_path);
	rec.reason = js_str(d->arena, ev[EV_REASON]);
	rec.type = js_str(d->arena, ev[EV_TYPE]);
	rec.message = js_str(d->arena, first_str(ev[EV_MESSAGE], ev[EV_NOTE],
						 NULL));
	rec.message = dec_event_message(rec.message);
	rec.component = js_str(d->arena, first_str(ev[EV_REP_COMPONENT],
						   ev[EV_REP_CONTROLLER],
						   src[SRC_COMPONENT]));
	rec.host = js_str(d->arena, src[SRC_HOST]);
	rec.uid = event_uid(d, meta, rec.ns);
	event_times(d, &rec, doc, ev, meta);
	if (exporter)
		exporter_hints(d, &rec, doc, ref);
	rec.revs = NULL;
	rec.nrevs = 0;
	if ((rc = dec_emit(d, &rec)) != 0)
		return rc;
	return DEC_YES;
}
