/*
 * util.c: small containers the store's commit uses: interned tag names,
 * a JSON text buffer, key sets, the touched-incident list and the per
 * incident object deltas. Nothing here talks SQL but objmap_write.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

const char *store_intern(struct store_intern *in, const char *p, size_t n)
{
	size_t mask, i;
	char *s;

	if (in->nslots == 0 || (in->count + 1) * 2 > in->nslots) {
		size_t nn = in->nslots ? in->nslots * 2 : 64;
		char **slot = calloc(nn, sizeof(*slot));

		if (!slot)
			return NULL;
		for (size_t j = 0; j < in->nslots; j++) {
			char *t = in->slot[j];

			if (!t)
				continue;
			i = corr_hash(0, t, strlen(t)) & (nn - 1);
			while (slot[i])
				i = (i + 1) & (nn - 1);
			slot[i] = t;
		}
		free(in->slot);
		in->slot = slot;
		in->nslots = nn;
	}
	mask = in->nslots - 1;
	i = corr_hash(0, p, n) & mask;
	while (in->slot[i]) {
		if (strlen(in->slot[i]) == n && memcmp(in->slot[i], p, n) == 0)
			return in->slot[i];
		i = (i + 1) & mask;
	}
	s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, p, n);
	s[n] = '\0';
	in->slot[i] = s;
	in->count++;
	return s;
}

const char *store_intern_cb(void *ctx, const char *p, size_t n)
{
	return store_intern(ctx, p, n);
}

void store_intern_release(struct store_intern *in)
{
	for (size_t i = 0; i < in->nslots; i++)
		free(in->slot[i]);
	free(in->slot);
	memset(in, 0, sizeof(*in));
}

void buf_reset(struct store_buf *b)
{
	b->n = 0;
	b->oom = false;
}

static bool buf_reserve(struct store_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->n + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < b->n + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void buf_add(struct store_buf *b, const char *p, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = '\0';
}

void buf_addc(struct store_buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_addf(struct store_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n :
			sizeof(tmp) - 1);
}

/* JSON string: quotes, escapes control bytes, passes UTF-8 through. */
void buf_json_str(struct store_buf *b, const char *p, size_t n)
{
	buf_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		size_t run = i;

		/* copy a run of plain bytes at once */
		while (run < n && (unsigned char)p[run] >= 0x20 &&
		       p[run] != '"' && p[run] != '\\' && p[run] != 0x7f)
			run++;
		if (run > i) {
			buf_add(b, p + i, run - i);
			i = run - 1;
			continue;
		}
		if (c == '"' || c == '\\') {
			buf_addc(b, '\\');
			buf_addc(b, (char)c);
		} else if (c == '\n') {
			buf_add(b, "\\n", 2);
		} else if (c == '\t') {
			buf_add(b, "\\t", 2);
		} else if (c == '\r') {
			buf_add(b, "\\r", 2);
		} else if (c < 0x20 || c == 0x7f) {
			buf_addf(b, "\\u%04x", c);
		} else {
			buf_addc(b, (char)c);
		}
	}
	buf_addc(b, '"');
}

const char *buf_str(struct store_buf *b)
{
	if (b->oom)
		return NULL;
	if (!b->p)
		buf_add(b, "", 0);
	return b->oom ? NULL : b->p;
}

const char *scratch_dup(struct store *st, const char *p, size_t n)
{
	return rt_arena_strdup(&st->scratch, p ? p : "", p ? n : 0).p;
}

static bool key_eq(const struct store_key *k, struct rt_str ns,
		   struct rt_str rel)
{
	return strlen(k->ns) == ns.n && strlen(k->rel) == rel.n &&
	       memcmp(k->ns, ns.p ? ns.p : "", ns.n) == 0 &&
	       memcmp(k->rel, rel.p ? rel.p : "", rel.n) == 0;
}

bool keyset_has(const struct store_keyset *ks, struct rt_str ns,
		struct rt_str rel)
{
	for (size_t i = 0; i < ks->n; i++)
		if (key_eq(&ks->k[i], ns, rel))
			return true;
	return false;
}

int keyset_add(struct store *st, struct store_keyset *ks, struct rt_str ns,
	       struct rt_str rel)
{
	struct store_key k;

	if (rel.n == 0 || keyset_has(ks, ns, rel))
		return 0;
	if (ks->n == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 16;
		struct store_key *p = realloc(ks->k, cap * sizeof(*p));

		if (!p)
			return RT_ENOMEM;
		ks->k = p;
		ks->cap = cap;
	}
	k.ns = scratch_dup(st, ns.p, ns.n);
	k.rel = scratch_dup(st, rel.p, rel.n);
	if (!k.ns || !k.rel)
		return RT_ENOMEM;
	ks->k[ks->n++] = k;
	return 0;
}

int touched_add(struct store *st, int64_t id)
{
	if (st->ntouched && st->touched[st->ntouched - 1] == id)
		return 0;
	if (st->ntouched == st->touchedcap) {
		size_t cap = st->touchedcap ? st->touchedcap * 2 : 64;
		int64_t *p = realloc(st->touched, cap * sizeof(*p));

		if (!p)
			return RT_ENOMEM;
		st->touched = p;
		st->touchedcap = cap;
	}
	st->touched[st->ntouched++] = id;
	return 0;
}

static uint64_t obj_hash(const char *kind, size_t kn, const char *name,
			 size_t nn)
{
	return corr_hash(corr_hash(0, kind, kn), name, nn);
}

static size_t obj_slot(const struct store_objmap *m, const char *kind,
		       size_t kn, const char *name, size_t nn)
{
	size_t mask = m->nslots - 1;
	size_t i = obj_hash(kind, kn, name, nn) & mask;

	while (m->slot[i]) {
		const struct store_obj *o = &m->o[m->slot[i] - 1];

		if (strlen(o->name) == nn && memcmp(o->name, name, nn) == 0 &&
		    strlen(o->kind) == kn && memcmp(o->kind, kind, kn) == 0)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

static int objmap_grow(struct store_objmap *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 64;
	uint32_t *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return RT_ENOMEM;
	free(m->slot);
	m->slot = slot;
	m->nslots = n;
	for (size_t i = 0; i < m->n; i++) {
		const struct store_obj *o = &m->o[i];

		m->slot[obj_slot(m, o->kind, strlen(o->kind), o->name,
				 strlen(o->name))] = (uint32_t)(i + 1);
	}
	return 0;
}

/* Adds an object's deltas: the earliest first, the latest last, a count. */
int objmap_add(struct store *st, struct store_objmap *m, const char *kind,
	       size_t kn, const char *name, size_t nn, int64_t first,
	       int64_t last, int64_t events)
{
	struct store_obj *o;
	size_t i;

	if ((m->n + 1) * 2 > m->nslots && objmap_grow(m))
		return RT_ENOMEM;
	i = obj_slot(m, kind, kn, name, nn);
	if (m->slot[i]) {
		o = &m->o[m->slot[i] - 1];
		if (first < o->first_ns)
			o->first_ns = first;
		if (last > o->last_ns)
			o->last_ns = last;
		o->events += events;
		return 0;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct store_obj *p = realloc(m->o, cap * sizeof(*p));

		if (!p)
			return RT_ENOMEM;
		m->o = p;
		m->cap = cap;
	}
	o = &m->o[m->n];
	o->kind = scratch_dup(st, kind, kn);
	o->name = scratch_dup(st, name, nn);
	if (!o->kind || !o->name)
		return RT_ENOMEM;
	o->first_ns = first;
	o->last_ns = last;
	o->events = events;
	m->slot[i] = (uint32_t)++m->n;
	return 0;
}

void objmap_release(struct store_objmap *m)
{
	free(m->o);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

/* Writes one object's delta: inserts it, or adds to the stored row.
 * *added is set when the row is new. */
static int object_write(struct store *st, const struct store_obj *o,
			int64_t incident, bool *added)
{
	static const enum store_stmt seq[] = { S_OBJ_NEW, S_OBJ_UPSERT };
	int err;

	for (size_t k = 0; k < 2; k++) {
		sqlite3_stmt *s = stmt(st, seq[k]);

		sqlite3_bind_int64(s, 1, incident);
		bind_cstr(s, 2, o->kind);
		bind_cstr(s, 3, o->name);
		sqlite3_bind_int64(s, 4, o->first_ns);
		sqlite3_bind_int64(s, 5, o->last_ns);
		sqlite3_bind_int64(s, 6, o->events);
		/* formatted here: SQLite's strftime + printf per row cost more
		 * than the upsert itself */
		bind_iso(s, 7, o->first_ns);
		bind_iso(s, 8, o->last_ns);
		if ((err = db_done(st, s, "object upsert")))
			return err;
		if (k == 0 && (*added = sqlite3_changes(st->db) > 0))
			break;
	}
	return 0;
}

int objmap_write(struct store *st, struct store_objmap *m, int64_t incident)
{
	int64_t pods = 0;
	int err;

	for (size_t i = 0; i < m->n; i++) {
		bool added;

		if ((err = object_write(st, &m->o[i], incident, &added)))
			return err;
		pods += added && !strcmp(m->o[i].kind, "Pod");
	}
	m->n = 0;
	if (m->nslots)
		memset(m->slot, 0, m->nslots * sizeof(*m->slot));
	if (pods) {
		sqlite3_stmt *s = stmt(st, S_INC_PODS_ADD);

		sqlite3_bind_int64(s, 1, incident);
		sqlite3_bind_int64(s, 2, pods);
		return db_done(st, s, "incident pods");
	}
	return 0;
}

int incident_count_pods(struct store *st, int64_t incident)
{
	sqlite3_stmt *s = stmt(st, S_INC_PODS_COUNT);

	sqlite3_bind_int64(s, 1, incident);
	return db_done(st, s, "incident pods");
}
