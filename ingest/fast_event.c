/*
 * fast_event.c: one-line core/v1 and events.k8s.io/v1 Events, bare or in a
 * watch envelope, decoded from json_scan.h's nodes instead of a cJSON tree.
 * `kubectl get events -w -o json`, event exporters and Kafka topics carry
 * them by the million, and building the tree cost five times the rest.
 *
 * This is dec_kube.c's kube_event read through the other parser, field for
 * field and fallback for fallback; test_ingest_fast.c checks that both give
 * the same records. Exporter events (labels and owners on the involved
 * object) and anything unusual are left to dec_kube.c: ing_event_fast then
 * declines before emitting anything.
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

/* dec_json_time: 0 for absent, empty or unparseable. An escaped value
 * (never seen in practice) is decoded into the arena first. RFC 3339, what
 * Events carry, goes to ing_rfc3339, which reads what rt_time_parse reads
 * (test_ingest_fast.c checks) and remembers the last second: an Event's
 * times mostly share theirs. 355 instructions a time before, 70 after. */
static int64_t json_time(struct rt_arena *a, const struct js_node *it)
{
	struct rt_str s;
	int64_t ns = 0;

	if (!js_nonempty(it))
		return 0;
	s = it->esc ? js_str(a, it) : rt_str_make(it->s, it->n);
	if (s.n && ing_rfc3339(s.p, s.n, &ns) == s.n)
		return ns;
	return rt_time_parse(s.p, s.n, &ns) ? 0 : ns;
}

static int64_t first_time(struct rt_arena *ar, const struct js_node *a,
			  const struct js_node *b, const struct js_node *c,
			  const struct js_node *e)
{
	int64_t ns;

	if ((ns = json_time(ar, a)) || (ns = json_time(ar, b)) ||
	    (ns = json_time(ar, c)))
		return ns;
	return json_time(ar, e);
}

static int64_t json_count(const struct js_node *it)
{
	return js_is(it, JS_NUM) && it->num >= 1 ? (int64_t)it->num : 0;
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

/* The tables above, hashed for js_pick once per process. */
static struct js_keyset ev_set, ref_set, meta_set, src_set, ser_set;
static pthread_once_t sets_once = PTHREAD_ONCE_INIT;

static void init_sets(void)
{
	js_keyset_init(&ev_set, ev_keys, EV_N);
	js_keyset_init(&ref_set, ref_keys, REF_N);
	js_keyset_init(&meta_set, meta_keys, META_N);
	js_keyset_init(&src_set, src_keys, SRC_N);
	js_keyset_init(&ser_set, ser_keys, SER_N);
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

/* The members of a watch envelope, or of a bare Event, that tell them
 * apart, in one walk of the root: three names need no hashing (with
 * js_pick, ing_event_of took 568 instructions an Event; 266 now). */
enum { TOP_TYPE, TOP_OBJECT, TOP_KIND, TOP_N };

static void top_members(const struct js_doc *doc, const struct js_node *root,
			const struct js_node **top)
{
	top[TOP_TYPE] = top[TOP_OBJECT] = top[TOP_KIND] = NULL;
	if (root->type != JS_OBJ)
		return;
	for (uint32_t i = root->child; i; i = doc->node[i].next) {
		const struct js_node *m = &doc->node[i];
		int k = -1;

		if (m->keyn == 4 && !memcmp(m->key, "type", 4))
			k = TOP_TYPE;
		else if (m->keyn == 4 && !memcmp(m->key, "kind", 4))
			k = TOP_KIND;
		else if (m->keyn == 6 && !memcmp(m->key, "object", 6))
			k = TOP_OBJECT;
		if (k >= 0 && !top[k])
			top[k] = m;
	}
}

const struct js_node *ing_event_of(const struct js_doc *doc)
{
	const struct js_node *root = &doc->node[0], *top[TOP_N];

	top_members(doc, root, top);
	if (is_watch_type(top[TOP_TYPE]) && js_is(top[TOP_OBJECT], JS_OBJ)) {
		if (js_str_is(top[TOP_TYPE], "ERROR") ||
		    js_str_is(top[TOP_TYPE], "BOOKMARK"))
			return NULL;
		root = top[TOP_OBJECT];
		top[TOP_KIND] = js_get(doc, root, "kind");
	}
	return js_str_is(top[TOP_KIND], "Event") ? root : NULL;
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
			const struct js_doc *doc, const struct js_node **ev,
			const struct js_node **meta)
{
	const struct js_node *ser[SER_N];
	int64_t count;

	js_pick(doc, ev[EV_SERIES], &ser_set, ser);
	rec->ts_ns = first_time(d->arena, ev[EV_LAST], ev[EV_DEP_LAST],
				ser[SER_LAST], ev[EV_EVENT_TIME]);
	if (!rec->ts_ns)
		rec->ts_ns = json_time(d->arena, meta[META_CREATED]);
	if (!rec->ts_ns && d->hint_ts_ns)
		rec->ts_ns = d->hint_ts_ns;
	rec->first_ns = first_time(d->arena, ev[EV_FIRST], ev[EV_DEP_FIRST],
				   ev[EV_EVENT_TIME], NULL);
	if ((count = json_count(ev[EV_COUNT])) ||
	    (count = json_count(ser[SER_COUNT])) ||
	    (count = json_count(ev[EV_DEP_COUNT])))
		rec->count = count;
	else
		rec->count = 1;
}

int ing_event_fast(struct dec_ctx *d, const struct js_doc *doc,
		   const struct js_node *event)
{
	struct rt_record rec = *d->base;
	const struct js_node *ev[EV_N], *ref[REF_N], *meta[META_N], *src[SRC_N];
	const struct js_node *r, *s;
	int rc;

	pthread_once(&sets_once, init_sets);
	js_pick(doc, event, &ev_set, ev);
	r = js_is(ev[EV_INVOLVED], JS_OBJ) ? ev[EV_INVOLVED] : ev[EV_REGARDING];
	s = js_is(ev[EV_SOURCE], JS_OBJ) ? ev[EV_SOURCE] : ev[EV_DEP_SOURCE];
	js_pick(doc, r, &ref_set, ref);
	js_pick(doc, ev[EV_METADATA], &meta_set, meta);
	js_pick(doc, s, &src_set, src);
	/* Exporter events: dec_kube.c reads their labels and owners. */
	if (ev[EV_CLUSTER] || ref[REF_LABELS] || ref[REF_ANNOTATIONS] ||
	    ref[REF_OWNERS] || ref[REF_DELETED])
		return DEC_NO;
	rec.format = RT_FMT_K8S_EVENT;
	rec.ns = js_str(d->arena, first_str(meta[META_NAMESPACE],
					    ref[REF_NAMESPACE], NULL));
	rec.kind = js_str(d->arena, ref[REF_KIND]);
	rec.name = js_str(d->arena, ref[REF_NAME]);
	rec.pod = rt_str_eq(rec.kind, "Pod") ? rec.name : RT_STR_NULL;
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
	rec.revs = NULL;
	rec.nrevs = 0;
	if ((rc = dec_emit(d, &rec)) != 0)
		return rc;
	return DEC_YES;
}
