/* A reference model of mguard's core, scope tracker and ledger, for the
   differential tests.

   Same contract as mguard.h sections 1-6 (objects, weak tables with value
   destructors, weak refs, trackers and watchers, generation tags), plus a
   scope tracker without callbacks (section 7: names, frames, path, phase,
   reset, counters), the dynamism tracker (section 8) and ledgers with
   plain values and no hooks, records or hook registrations (section 9,
   apply included) and the guarded caches (section 10, every function),
   each described above its code; written
   to be obviously correct rather than fast: plain arrays, linear scans,
   one malloc per value, nothing shared with mguard's implementation. The
   callbacks have mguard's own types, so the same callback functions can
   drive both. Every function is static; include this file where needed.

   Semantics the model pins down (each one is a sentence of the contract in
   mguard.h or of issues 2 and 6):
   - An object is known while it is a key in a table, has a tracker, a tag
     or a class mark, or was handed out as a ref or a guard, or is a key of
     a cache entry's remembered drop; each time it becomes known it gets a
     new serial. Only mguard_on_destroy forgets a pinned (ref, guard, drop
     reason) object.
   - Deaths run in two phases: every entry of the object is removed from
     every table (in the order the object entered them), its record is
     forgotten; then its watchers fire (attr NULL, registration order), then
     for each removed entry key_death and the value destructor. During
     phase 2 the object cannot become known again.
   - Watchers fire once, in registration order, on the next mutation or
     death; watchers added meanwhile wait; a watcher whose guard died, or
     that was unwatched meanwhile, is skipped. Unwatch matches the guard's
     current life (a dead guard's watchers are already gone) and the
     object's: once an object's death completed, an invalidation of it still
     in progress is not about the object now at its address.
   - Tables: insertion order; overwrite keeps the position and destroys the
     old value after the new one is stored; clear removes the entries
     present when it starts, one at a time; destroy drains the table and
     refuses new keys meanwhile; a destroy requested while a clear/destroy
     of the same table is walking it is finished by the outermost walk.
   - Iterators visit the first live entry inserted after the last one
     visited: removed entries are never visited, new ones come last.
   - Caches: an entry depends on its keys (whole objects) and on the
     (obj, attr) it declared; a mutation of obj drops the entries with a
     whole-object dependency on obj or one on the attribute named (attr
     NULL: all of them), a death all of them. An object is known while a
     stored entry depends on it or one of its cache's last reasons names
     it (a compute in progress makes nothing known). In a death, the cache
     entries go in phase 1 after the tables, and their values are
     destroyed last in phase 2 (after the watchers and the tables'
     key_death and destructors); in a mutation, after the watchers.
     Values are destroyed exactly once, each call's in the order of their
     drops (orders: see the caches' code). That order, and the
     iteration order of positions, are mguard's own, which the contract
     does not promise: the model follows them so that the decoder can
     compare destructor calls and walks one by one. A computing entry a
     change reaches is not stored: its value is returned and parked until
     the next change. A destroy from any callback of a get_or_compute or
     a clear waits for that call; one while values of the cache wait for
     phase 2 waits for them.

   Allocation failure: the model never fails by itself. The driver sets
   fail_next before an operation that mguard answered with ENOMEM; the
   operation then checks its arguments as usual and, where mguard may
   allocate, fails with ENOMEM changing nothing (a cache's get_or_compute
   has two such points, the entry before the compute and the store
   after, numbered apart by the driver). A failure stays armed while
   callbacks run operations of their own (a parked value's destructor
   before the entry): the driver arms and disarms those apart.

   The scope tracker and the ledgers keep their weakly held objects in
   ordinary model tables (marked `part`) whose key_death does their
   phase-2 work, so deaths reach them in the same order as in mguard.
   Extending it: add the component's state to model_ctx, forget it in
   model_on_destroy's phase 1 and notify in phase 2, the same way. */
#ifndef MGUARD_TESTS_MODEL_H
#define MGUARD_TESTS_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "mguard.h"

#if defined(__GNUC__) || defined(__clang__)
#define MODEL_DEF static __attribute__((unused))
#else
#define MODEL_DEF static
#endif

typedef struct model_ctx model_ctx;
typedef struct model_weak model_weak;

/* A ref names its context by a process-wide id (an address can be reused
   by the next context): a ref of another context reads NULL. */
typedef struct model_ref { const void *obj; uint64_t serial, ctx_id; } model_ref;

typedef struct model_entry { const void *key; uint64_t seq; unsigned char *value; } model_entry;

struct model_weak {
    model_ctx *ctx;
    size_t value_size;
    mguard_value_dtor dtor;
    mguard_key_death_fn on_death;
    void *user;
    model_entry *e;          /* live entries, ascending seq */
    size_t n, cap;
    uint64_t next_seq;
    uint64_t order;          /* creation order: ctx destroy goes newest first */
    int busy;                /* clear/destroy walks running */
    int destroying;
    int freed;               /* finished: the handle is gone (memory kept) */
    int part;                /* a component's own table (scope, ledgers) */
};

typedef struct model_watcher {
    void *guard;
    uint64_t guard_serial;
    mguard_invalidate_fn fn; /* NULL: cancelled by unwatch */
    void *user;
} model_watcher;

typedef struct model_obj {
    const void *addr;
    uint64_t serial;
    bool pinned, tracker, tagged, classdyn;
    long gen;
    uint64_t mutations;
    model_weak **tables;     /* tables holding addr as a key, order entered */
    size_t ntables;
    model_watcher *w;
    size_t nw;
} model_obj;

/* An invalidation in progress (mutation or death): its watchers. */
typedef struct model_frame {
    const void *obj;
    model_watcher *w;
    size_t n;
    bool dead;               /* obj's death completed: an unwatch of its address is not about it */
} model_frame;

struct model_look { const void *const *keys; size_t n; bool died; struct model_look *next; };

struct model_ctx {
    uint64_t id;             /* process-wide, never reused */
    model_obj **objs;        /* known objects, any order */
    size_t nobjs;
    uint64_t next_serial;
    long generation;
    bool strict;             /* mguard_ctx_desc.strict_generations */
    model_weak **tables;     /* every table ever created (freed ones kept) */
    size_t ntables;
    uint64_t next_order;
    model_frame **frames;    /* invalidations in progress, innermost last */
    size_t nframes;
    const void **dying;      /* objects in phase 2 of their death */
    size_t ndying;
    struct model_look *looks; /* keys watched across a compute's callouts (C stack) */
    int fail_next;           /* the next allocating step fails (driver) */
    int fail_taken;          /* ... and it did */
    /* scope tracker (one, no callbacks) and ledgers (plain values) */
    struct model_scope *scope;
    struct model_ledger **ledgers; /* live ledgers, creation order */
    size_t nledgers;
    model_weak *lwatch;      /* the ledgers' weak table of deaths, or NULL */
    struct model_dyn **dyns; /* live dynamism trackers (destroyed with c) */
    size_t ndyns;
    /* guarded caches: every one ever created (freed ones kept), and every
       entry whose dependencies are linked (stored or being computed) */
    struct model_cache **caches;
    size_t ncaches;
    struct model_centry **cents;
    size_t ncents;
    uint64_t next_link;      /* dependency links, in the order made */
};

/* Cache values waiting for phase 2, run from the last one back; the rest
   is defined with the caches (below). */
typedef struct model_cpend { struct model_centry **e; size_t n; } model_cpend;
static bool model__cache_refers(const model_ctx *c, const void *obj);
static bool model__cache_computes_on(const model_ctx *c, const void *obj);
static void model__cache_event(model_ctx *c, const void *obj, const char *attr, const char *file, int line,
                               int death, model_cpend *p);
static void model__cfinish(model_cpend *p);
static void model__cdestroy_now(struct model_cache *c);

/* ---- helpers ---------------------------------------------------------- */

MODEL_DEF void *model__xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) { fprintf(stderr, "model: out of memory\n"); abort(); }
    return q;
}

#define MODEL__PUSH(arr, n, item) \
    do { (arr) = model__xrealloc((arr), ((n) + 1) * sizeof *(arr)); (arr)[(n)++] = (item); } while (0)

MODEL_DEF bool model__take_fail(model_ctx *c)
{
    if (!c->fail_next) return false;
    c->fail_next = 0;
    c->fail_taken = 1;
    return true;
}

MODEL_DEF model_obj *model__find(const model_ctx *c, const void *addr)
{
    size_t i;
    for (i = 0; i < c->nobjs; i++)
        if (c->objs[i]->addr == addr) return c->objs[i];
    return NULL;
}

MODEL_DEF model_obj *model__ensure(model_ctx *c, const void *addr)
{
    model_obj *o = model__find(c, addr);
    if (o) return o;
    o = (model_obj *)calloc(1, sizeof *o);
    if (!o) abort();
    o->addr = addr;
    o->serial = ++c->next_serial;
    o->gen = -1;
    MODEL__PUSH(c->objs, c->nobjs, o);
    return o;
}

/* Does mguard keep a record for o (a ref, guard, tracker, tag or class
   mark)? An object known by tables or caches alone has none: giving it
   one may allocate. */
MODEL_DEF bool model__has_record(const model_obj *o)
{
    return o->pinned || o->tracker || o->tagged || o->classdyn;
}

MODEL_DEF void model__drop(model_ctx *c, model_obj *o)
{
    size_t i;
    for (i = 0; i < c->nobjs; i++) {
        if (c->objs[i] == o) {
            c->objs[i] = c->objs[--c->nobjs];
            break;
        }
    }
    free(o->tables);
    free(o->w);
    free(o);
}

MODEL_DEF void model__drop_if_empty(model_ctx *c, model_obj *o)
{
    if (!o->ntables && !o->pinned && !o->tracker && !o->tagged && !o->classdyn && !model__cache_refers(c, o->addr))
        model__drop(c, o);
}

MODEL_DEF bool model__is_dying(const model_ctx *c, const void *addr)
{
    size_t i;
    for (i = 0; i < c->ndying; i++)
        if (c->dying[i] == addr) return true;
    return false;
}

MODEL_DEF bool model__alive(const model_ctx *c, const void *addr, uint64_t serial)
{
    const model_obj *o = model__find(c, addr);
    return o && o->serial == serial;
}

/* ---- context ---------------------------------------------------------- */

MODEL_DEF model_ctx *model_create(void)
{
    static uint64_t last_id;
    model_ctx *c = (model_ctx *)calloc(1, sizeof *c);
    if (!c) abort();
    c->id = ++last_id;
    return c;
}

MODEL_DEF size_t model_object_count(const model_ctx *c) { return c->nobjs; }
MODEL_DEF bool model_is_known(const model_ctx *c, const void *obj) { return obj && model__find(c, obj) != NULL; }

/* ---- weak tables ------------------------------------------------------ */

MODEL_DEF model_weak *model_weak_create(model_ctx *c, size_t value_size, mguard_value_dtor dtor,
                                     mguard_key_death_fn on_death, void *user)
{
    model_weak *t;
    if (value_size == 0 || value_size > ((size_t)1 << 24)) return NULL;
    if (model__take_fail(c)) return NULL;
    t = (model_weak *)calloc(1, sizeof *t);
    if (!t) abort();
    t->ctx = c;
    t->value_size = value_size;
    t->dtor = dtor;
    t->on_death = on_death;
    t->user = user;
    t->order = c->next_order++;
    MODEL__PUSH(c->tables, c->ntables, t);
    return t;
}

MODEL_DEF long model__find_entry(const model_weak *t, const void *key)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        if (t->e[i].key == key) return (long)i;
    return -1;
}

/* Take entry i out of t (order kept); the caller owns the value bytes. */
MODEL_DEF unsigned char *model__take_entry(model_weak *t, size_t i)
{
    unsigned char *v = t->e[i].value;
    memmove(&t->e[i], &t->e[i + 1], (t->n - i - 1) * sizeof *t->e);
    t->n--;
    return v;
}

MODEL_DEF void model__unlink_table(model_obj *o, const model_weak *t)
{
    size_t i;
    for (i = 0; i < o->ntables; i++) {
        if (o->tables[i] == t) {
            memmove(&o->tables[i], &o->tables[i + 1], (o->ntables - i - 1) * sizeof *o->tables);
            o->ntables--;
            return;
        }
    }
    fprintf(stderr, "model: table missing from its key's record\n");
    abort();
}

MODEL_DEF mguard_status model_weak_set(model_weak *t, const void *key, const void *value)
{
    model_ctx *c;
    long i;
    unsigned char *nv;
    if (!t || t->freed || !key || !value) return MGUARD_EINVAL;
    c = t->ctx;
    if (t->destroying) return MGUARD_EINVAL;
    i = model__find_entry(t, key);
    if (i >= 0) {
        /* Overwrite: the new value is stored, then the old one destroyed.
           mguard allocates here only for values over 256 bytes. */
        unsigned char *old;
        if (t->dtor && t->value_size > 256 && model__take_fail(c)) return MGUARD_ENOMEM;
        old = t->e[i].value;
        nv = (unsigned char *)model__xrealloc(NULL, t->value_size);
        memcpy(nv, value, t->value_size);
        t->e[i].value = nv;
        if (t->dtor) t->dtor(old, t->user);
        free(old);
        return MGUARD_OK;
    }
    if (!model__find(c, key) && model__is_dying(c, key)) return MGUARD_EINVAL;
    if (model__take_fail(c)) return MGUARD_ENOMEM;
    nv = (unsigned char *)model__xrealloc(NULL, t->value_size);
    memcpy(nv, value, t->value_size);
    {
        model_entry en;
        model_obj *o = model__ensure(c, key);
        en.key = key;
        en.seq = t->next_seq++;
        en.value = nv;
        MODEL__PUSH(t->e, t->n, en);
        MODEL__PUSH(o->tables, o->ntables, t);
    }
    return MGUARD_OK;
}

MODEL_DEF void *model_weak_get(const model_weak *t, const void *key)
{
    long i;
    if (!t || t->freed || !key) return NULL;
    i = model__find_entry(t, key);
    return i >= 0 ? t->e[i].value : NULL;
}

MODEL_DEF bool model_weak_contains(const model_weak *t, const void *key) { return model_weak_get(t, key) != NULL; }
MODEL_DEF size_t model_weak_count(const model_weak *t) { return (t && !t->freed) ? t->n : 0; }

/* Remove entry i, forget t in the key's record, then destroy the value
   (out: copy it there instead, never destroyed: mguard_weak_take).
   t must not be touched after the destructor (it may destroy t). */
MODEL_DEF void model__remove_at(model_weak *t, size_t i, void *out)
{
    model_ctx *c = t->ctx;
    const void *key = t->e[i].key;
    mguard_value_dtor dtor = t->dtor;
    void *user = t->user;
    unsigned char *v = model__take_entry(t, i);
    model_obj *o = model__find(c, key);
    if (!o) { fprintf(stderr, "model: key without a record\n"); abort(); }
    model__unlink_table(o, t);
    model__drop_if_empty(c, o);
    if (out) memcpy(out, v, t->value_size);
    else if (dtor) dtor(v, user);
    free(v);
}

/* take (out: the value, not destroyed; NULL out: destroyed) */
MODEL_DEF mguard_status model_weak_take(model_weak *t, const void *key, void *out)
{
    long i;
    if (!t || t->freed || !key) return MGUARD_EINVAL;
    i = model__find_entry(t, key);
    if (i < 0) return MGUARD_NOT_FOUND;
    model__remove_at(t, (size_t)i, out);
    return MGUARD_OK;
}

/* Remove, one at a time and in order, every entry with seq < bound. */
MODEL_DEF void model__drain(model_weak *t, uint64_t bound)
{
    uint64_t cursor = 0;
    t->busy++;
    for (;;) {
        size_t i;
        for (i = 0; i < t->n && t->e[i].seq < cursor; i++) {}
        if (i == t->n || t->e[i].seq >= bound) break;
        cursor = t->e[i].seq + 1;
        model__remove_at(t, i, NULL);
    }
    t->busy--;
}

MODEL_DEF void model__finish(model_weak *t)
{
    model__drain(t, UINT64_MAX);
    if (t->n) { fprintf(stderr, "model: destroyed table not empty\n"); abort(); }
    t->freed = 1;
}

MODEL_DEF void model_weak_clear(model_weak *t)
{
    if (!t || t->freed) return;
    model__drain(t, t->next_seq);
    if (t->destroying && !t->busy) model__finish(t);
}

MODEL_DEF void model_weak_destroy(model_weak *t)
{
    if (!t || t->freed || t->destroying) return;
    t->destroying = 1;
    if (t->busy) return;
    model__finish(t);
}

/* Iteration: the first live entry with seq >= next. */
typedef struct model_iter { model_weak *t; uint64_t next; bool done; } model_iter;

MODEL_DEF model_iter model_weak_iterate(model_weak *t)
{
    model_iter it;
    it.t = t;
    it.next = 0;
    it.done = !t || t->freed;
    return it;
}

MODEL_DEF bool model_weak_next(model_iter *it, const void **key, void **value)
{
    size_t i;
    model_weak *t = it->t;
    if (it->done || !t || t->freed) { it->done = true; return false; }
    for (i = 0; i < t->n; i++) {
        if (t->e[i].seq >= it->next) {
            it->next = t->e[i].seq + 1;
            *key = t->e[i].key;
            *value = t->e[i].value;
            return true;
        }
    }
    it->done = true;
    return false;
}

/* ---- watchers --------------------------------------------------------- */

MODEL_DEF void model__fire(model_ctx *c, const void *obj, model_watcher *w, size_t n, const char *attr)
{
    model_frame f;
    size_t i;
    f.obj = obj;
    f.w = w;
    f.n = n;
    f.dead = false;
    MODEL__PUSH(c->frames, c->nframes, &f);
    for (i = 0; i < n; i++) {
        mguard_invalidate_fn fn = w[i].fn;
        if (!fn || !model__alive(c, w[i].guard, w[i].guard_serial)) continue;
        w[i].fn = NULL;   /* told: an unwatch no longer finds it */
        fn(w[i].guard, obj, attr, w[i].user);
    }
    c->nframes--;
}

MODEL_DEF mguard_status model_watch(model_ctx *c, const void *obj, void *guard, mguard_invalidate_fn fn, void *user)
{
    model_obj *o, *g;
    model_watcher w;
    if (!obj || !guard || !fn) return MGUARD_EINVAL;
    if (model__is_dying(c, obj) || model__is_dying(c, guard)) return MGUARD_EINVAL;
    o = model__find(c, obj);
    g = model__find(c, guard);
    if (o && g) {
        /* the same (obj, guard, fn) already waiting: EEXIST, nothing changed */
        size_t i;
        for (i = 0; i < o->nw; i++)
            if (o->w[i].guard == guard && o->w[i].fn == fn && o->w[i].guard_serial == g->serial) return MGUARD_EEXIST;
    }
    if (model__take_fail(c)) return MGUARD_ENOMEM;
    o = model__ensure(c, obj);
    g = model__ensure(c, guard);
    g->pinned = true;
    o->tracker = true;
    w.guard = guard;
    w.guard_serial = g->serial;
    w.fn = fn;
    w.user = user;
    MODEL__PUSH(o->w, o->nw, w);
    return MGUARD_OK;
}

MODEL_DEF mguard_status model_unwatch(model_ctx *c, const void *obj, const void *guard)
{
    const model_obj *g;
    model_obj *o;
    size_t found = 0, i, k;
    if (!obj || !guard) return MGUARD_EINVAL;
    g = model__find(c, guard);
    o = model__find(c, obj);
    if (o) {
        size_t n = 0;
        for (i = 0; i < o->nw; i++) {
            if (o->w[i].guard == guard && g && o->w[i].guard_serial == g->serial) found++;
            else o->w[n++] = o->w[i];
        }
        o->nw = n;
    }
    for (k = 0; k < c->nframes; k++) {
        model_frame *f = c->frames[k];
        if (f->obj != obj || f->dead) continue;
        for (i = 0; i < f->n; i++) {
            if (f->w[i].fn && f->w[i].guard == guard && g && f->w[i].guard_serial == g->serial) {
                f->w[i].fn = NULL;
                found++;
            }
        }
    }
    return found ? MGUARD_OK : MGUARD_NOT_FOUND;
}

/* A mutation: the cache entries depending on (obj, attr) leave their
   caches; then the tracker counts and the watchers fire; then the values
   of those entries are destroyed. */
MODEL_DEF void model_on_mutation_at(model_ctx *c, const void *obj, const char *attr, const char *file, int line)
{
    model_obj *o;
    model_watcher *w;
    size_t n;
    model_cpend p = { NULL, 0 };
    if (!obj) return;
    o = model__find(c, obj);
    if ((o && model__cache_refers(c, obj)) || model__cache_computes_on(c, obj)) {
        model__cache_event(c, obj, attr, file, line, 0, &p);
        if (o) model__drop_if_empty(c, o);
        o = model__find(c, obj);
    }
    if (o && o->tracker) {
        o->mutations++;
        if (o->nw) {
            w = o->w;
            n = o->nw;
            o->w = NULL;
            o->nw = 0;
            model__fire(c, obj, w, n, attr);
            free(w);
        }
    }
    model__cfinish(&p);
}

/* mguard_on_mutation's macro: the caller's place */
#define model_on_mutation(c, obj, attr) model_on_mutation_at((c), (obj), (attr), __FILE__, __LINE__)

MODEL_DEF uint64_t model_mutation_count(const model_ctx *c, const void *obj)
{
    const model_obj *o = obj ? model__find(c, obj) : NULL;
    return o ? o->mutations : 0;
}

MODEL_DEF size_t model_watcher_count(const model_ctx *c, const void *obj)
{
    const model_obj *o = obj ? model__find(c, obj) : NULL;
    size_t i, n = 0;
    if (!o) return 0;
    for (i = 0; i < o->nw; i++)
        if (model__alive(c, o->w[i].guard, o->w[i].guard_serial)) n++;
    return n;
}

/* ---- refs ------------------------------------------------------------- */

MODEL_DEF model_ref model_ref_make(model_ctx *c, const void *obj)
{
    model_ref r;
    model_obj *o;
    r.obj = NULL;
    r.serial = 0;
    r.ctx_id = c->id;
    if (!obj) return r;
    o = model__find(c, obj);
    if (!o) {
        if (model__is_dying(c, obj) || model__take_fail(c)) return r;
        o = model__ensure(c, obj);
    } else if (!model__has_record(o) && model__take_fail(c)) {
        return r;   /* known by tables or caches alone: mguard makes its record */
    }
    o->pinned = true;
    r.obj = obj;
    r.serial = o->serial;
    return r;
}

MODEL_DEF void *model_ref_get(const model_ctx *c, model_ref r)
{
    if (!r.serial || r.ctx_id != c->id) return NULL;
    return model__alive(c, r.obj, r.serial) ? (void *)r.obj : NULL;
}

/* ---- generations ------------------------------------------------------ */

MODEL_DEF mguard_status model__flag(model_ctx *c, const void *obj, int tag)
{
    model_obj *o;
    if (!obj) return MGUARD_EINVAL;
    o = model__find(c, obj);
    if (!o) {
        if (model__is_dying(c, obj)) return MGUARD_EINVAL;
        if (model__take_fail(c)) return MGUARD_ENOMEM;
        o = model__ensure(c, obj);
    } else if (!model__has_record(o) && model__take_fail(c)) {
        return MGUARD_ENOMEM;   /* known by tables or caches alone: mguard makes its record */
    }
    if (tag) {
        o->tagged = true;
        o->gen = c->generation;
    } else {
        o->classdyn = true;
    }
    return MGUARD_OK;
}

MODEL_DEF mguard_status model_gen_tag(model_ctx *c, const void *obj) { return model__flag(c, obj, 1); }
MODEL_DEF mguard_status model_gen_mark_class_dynamic(model_ctx *c, const void *cls) { return model__flag(c, cls, 0); }

MODEL_DEF long model_gen_get(const model_ctx *c, const void *obj)
{
    const model_obj *o = obj ? model__find(c, obj) : NULL;
    return (o && o->tagged) ? o->gen : -1;
}

/* Tagged in generation since or later; an untagged object is new on a
   strict context, old otherwise. */
MODEL_DEF bool model_gen_is_since(const model_ctx *c, const void *obj, long since)
{
    long g = model_gen_get(c, obj);
    if (!obj) return false;
    return g >= 0 ? g >= since : c->strict;
}

MODEL_DEF bool model_gen_check(const model_ctx *c, const void *obj)
{
    return model_gen_is_since(c, obj, c->generation);
}

MODEL_DEF long model_gen_current(const model_ctx *c) { return c->generation; }
MODEL_DEF long model_gen_advance(model_ctx *c) { return ++c->generation; }

MODEL_DEF bool model_gen_is_dynamic(const model_ctx *c, const void *obj, const void *cls)
{
    const model_obj *o = cls ? model__find(c, cls) : NULL;
    return (o && o->classdyn) || model_gen_check(c, obj);
}

MODEL_DEF void model_gen_clear(model_ctx *c)
{
    size_t i = 0;
    c->generation = 0;
    while (i < c->nobjs) {
        model_obj *o = c->objs[i];
        size_t before = c->nobjs;
        o->tagged = false;
        o->classdyn = false;
        o->gen = -1;
        model__drop_if_empty(c, o);
        if (c->nobjs == before) i++;   /* dropped: objs[i] now holds another */
    }
}

/* ---- the destructor hook ---------------------------------------------- */

typedef struct model__pending {
    mguard_value_dtor dtor;
    mguard_key_death_fn on_death;
    void *user;
    unsigned char *value;
} model__pending;

MODEL_DEF void model_on_destroy(model_ctx *c, const void *obj)
{
    model_obj *o;
    model__pending *p;
    model_watcher *w;
    size_t np, nw, i;
    model_cpend cp = { NULL, 0 };
    struct model_look *lk;
    if (!obj) return;
    for (lk = c->looks; lk; lk = lk->next)
        for (i = 0; i < lk->n; i++) lk->died |= lk->keys[i] == obj;
    o = model__find(c, obj);
    if (!o) {
        if (model__cache_computes_on(c, obj)) {   /* only spoiled computes: nothing to call */
            model__cache_event(c, obj, NULL, NULL, 0, 1, &cp);
            o = model__find(c, obj);   /* a reason's key now: it died all the same */
            if (o) model__drop(c, o);
            model__cfinish(&cp);
        }
        return;
    }
    /* phase 1: forget obj everywhere (tables, then caches) */
    np = o->ntables;
    p = (model__pending *)model__xrealloc(NULL, np * sizeof *p);
    for (i = 0; i < np; i++) {
        model_weak *t = o->tables[i];
        long k = model__find_entry(t, obj);
        if (k < 0) { fprintf(stderr, "model: record lists a table without the key\n"); abort(); }
        p[i].dtor = t->dtor;
        p[i].on_death = t->on_death;
        p[i].user = t->user;
        p[i].value = model__take_entry(t, (size_t)k);
    }
    model__cache_event(c, obj, NULL, NULL, 0, 1, &cp);
    w = o->w;
    nw = o->nw;
    o->w = NULL;
    o->nw = 0;
    model__drop(c, o);
    /* phase 2: call out (the cache values last) */
    MODEL__PUSH(c->dying, c->ndying, obj);
    if (nw) model__fire(c, obj, w, nw, NULL);
    free(w);
    for (i = 0; i < np; i++) {
        if (p[i].on_death) p[i].on_death(obj, p[i].value, p[i].user);
        if (p[i].dtor) p[i].dtor(p[i].value, p[i].user);
        free(p[i].value);
    }
    model__cfinish(&cp);
    c->ndying--;
    for (i = 0; i < c->nframes; i++)
        if (c->frames[i]->obj == obj) c->frames[i]->dead = true;
    free(p);
}

/* ---- scope tracker ------------------------------------------------------
   One tracker without callbacks (no type_name, no child, no trace): names
   come only from model_scope_set_name and are the values of a weak table
   (the component is a key, so it is known while named, and its death
   forgets the name in phase 1; in phase 2 the table's key_death closes
   the component's frames, innermost first). Frames keep the name they
   entered with; a name is active while it has frames, the root always.
   Strings are the caller's (they must outlive the model). */

typedef struct model_sframe { const void *comp; const char *name; } model_sframe;
/* A name: explicit (set_name) or placed under from (attach) as seg, in the
   life from_serial of from; a placed name follows from's renames. */
typedef struct model_sname {
    const char *name;
    const void *from;
    uint64_t from_serial;
    const char *seg;
} model_sname;
typedef struct model_sactive { const char *name; size_t count; } model_sactive;

typedef struct model_scope {
    model_ctx *ctx;
    model_weak *names;       /* comp -> model_sname */
    char **joined;           /* the names made by joining, freed with the tracker */
    size_t njoined;
    model_sframe *f;
    size_t nf;
    model_sactive *a;        /* active names in order of activation, root excluded */
    size_t na;
    size_t phase;             /* of the default two: 0 forward, 1 backward */
    struct model_scount *cnt; /* counters by (name, counter), first use order */
    size_t ncnt;
} model_scope;

/* Counter `counter` of name `name` (the root included): what was added while
   the name was active (total) and while it was the innermost frame's (self). */
typedef struct model_scount { const char *name, *counter; double total, self; } model_scount;

#define MODEL_SCOPE_ROOT "Global"

MODEL_DEF bool model__streq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

MODEL_DEF void model__scope_pop(model_scope *s, size_t i)
{
    const char *name = s->f[i].name;
    size_t j;
    memmove(&s->f[i], &s->f[i + 1], (s->nf - i - 1) * sizeof *s->f);
    s->nf--;
    for (j = 0; j < s->na; j++) {
        if (model__streq(s->a[j].name, name)) {
            if (--s->a[j].count == 0) {
                memmove(&s->a[j], &s->a[j + 1], (s->na - j - 1) * sizeof *s->a);
                s->na--;
            }
            return;
        }
    }
    fprintf(stderr, "model: popped a frame whose name is not active\n");
    abort();
}

MODEL_DEF void model__scope_on_death(const void *comp, void *value, void *user)
{
    model_ctx *c = (model_ctx *)user;
    model_scope *s = c->scope;
    size_t i;
    (void)value;
    if (!s) return;
    for (i = s->nf; i-- > 0;)
        if (s->f[i].comp == comp) model__scope_pop(s, i);
}

MODEL_DEF model_scope *model_scope_create(model_ctx *c)
{
    model_scope *s;
    if (c->scope) { fprintf(stderr, "model: one scope tracker only\n"); abort(); }
    if (model__take_fail(c)) return NULL;
    s = (model_scope *)calloc(1, sizeof *s);
    if (!s) abort();
    s->ctx = c;
    s->names = model_weak_create(c, sizeof(model_sname), NULL, model__scope_on_death, c);
    if (!s->names) abort();
    s->names->part = 1;
    c->scope = s;
    return s;
}

MODEL_DEF const char *model_scope_known_name(const model_scope *s, const void *comp)
{
    const model_sname *v;
    if (!s || !comp) return NULL;
    v = (const model_sname *)model_weak_get(s->names, comp);
    return v ? v->name : NULL;
}

MODEL_DEF uint64_t model__serial(const model_ctx *c, const void *addr)
{
    const model_obj *o = model__find(c, addr);
    return o ? o->serial : 0;
}

/* Placed names follow their parent's new name, down the tree, each once. */
MODEL_DEF void model__scope_follow(model_scope *s, const void *comp)
{
    const void **todo = (const void **)malloc(sizeof *todo);
    size_t n = 1, q, i;
    if (!todo) abort();
    todo[0] = comp;
    for (q = 0; q < n; q++) {
        const char *xname = model_scope_known_name(s, todo[q]);
        uint64_t xs = model__serial(s->ctx, todo[q]);
        model_iter it = model_weak_iterate(s->names);
        const void *key;
        void *value;
        if (!xname) continue;
        while (model_weak_next(&it, &key, &value)) {
            model_sname *v = (model_sname *)value;
            char *j;
            if (v->from != todo[q] || v->from_serial != xs) continue;
            for (i = 0; i < n && todo[i] != key; i++) {}
            if (i < n) continue;
            j = (char *)malloc(strlen(xname) + strlen(v->seg) + 2);
            s->joined = (char **)realloc(s->joined, (s->njoined + 1) * sizeof *s->joined);
            if (!j || !s->joined) abort();
            sprintf(j, "%s.%s", xname, v->seg);
            s->joined[s->njoined++] = j;
            v->name = j;
            todo = (const void **)realloc((void *)todo, (n + 1) * sizeof *todo);
            if (!todo) abort();
            todo[n++] = key;
        }
    }
    free((void *)todo);
}

MODEL_DEF mguard_status model_scope_set_name(model_scope *s, const void *comp, const char *fqn)
{
    model_sname v;
    mguard_status st;
    if (!s || !comp || !fqn || !*fqn) return MGUARD_EINVAL;
    if (model__take_fail(s->ctx)) return MGUARD_ENOMEM;
    memset(&v, 0, sizeof v);
    v.name = fqn;
    st = model_weak_set(s->names, comp, (const void *)&v);
    if (!st) model__scope_follow(s, comp);
    return st;
}

/* No callbacks in the model: the parent has a name only if it was given. */
MODEL_DEF mguard_status model_scope_attach(model_scope *s, const void *parent, const void *child, const char *seg)
{
    model_sname v;
    const char *pname;
    char *j;
    mguard_status st;
    if (!s || !child || !parent || parent == child || !seg || !*seg) return MGUARD_EINVAL;
    if (model__is_dying(s->ctx, child)) return MGUARD_EINVAL;   /* before the parent's lookup */
    pname = model_scope_known_name(s, parent);
    if (!pname) return MGUARD_NOT_FOUND;
    if (model__take_fail(s->ctx)) return MGUARD_ENOMEM;
    j = (char *)malloc(strlen(pname) + strlen(seg) + 2);
    s->joined = (char **)realloc(s->joined, (s->njoined + 1) * sizeof *s->joined);
    if (!j || !s->joined) abort();
    sprintf(j, "%s.%s", pname, seg);
    s->joined[s->njoined++] = j;
    memset(&v, 0, sizeof v);
    v.name = j;
    v.from = parent;
    v.from_serial = model__serial(s->ctx, parent);
    v.seg = seg;
    st = model_weak_set(s->names, child, (const void *)&v);
    if (!st) model__scope_follow(s, child);
    return st;
}

/* Without walks there is nothing a walk named: only the answers. */
MODEL_DEF mguard_status model_scope_forget(model_scope *s, const void *comp)
{
    if (!s || !comp) return MGUARD_EINVAL;
    if (!model_scope_known_name(s, comp)) return MGUARD_NOT_FOUND;
    if (model__take_fail(s->ctx)) return MGUARD_ENOMEM;
    return MGUARD_OK;
}

MODEL_DEF mguard_status model_scope_enter(model_scope *s, const void *comp)
{
    const char *name;
    model_sframe f;
    size_t j;
    if (!s || !comp) return MGUARD_EINVAL;
    name = model_scope_known_name(s, comp);
    if (!name) return MGUARD_NOT_FOUND;
    if (model__take_fail(s->ctx)) return MGUARD_ENOMEM;
    f.comp = comp;
    f.name = name;
    MODEL__PUSH(s->f, s->nf, f);
    for (j = 0; j < s->na; j++) {
        if (model__streq(s->a[j].name, name)) { s->a[j].count++; return MGUARD_OK; }
    }
    {
        model_sactive a;
        a.name = name;
        a.count = 1;
        MODEL__PUSH(s->a, s->na, a);
    }
    return MGUARD_OK;
}

MODEL_DEF mguard_status model_scope_exit(model_scope *s, const void *comp)
{
    size_t i;
    if (!s || !comp) return MGUARD_EINVAL;
    for (i = s->nf; i > 0 && s->f[i - 1].comp != comp; i--) {}
    if (!i) return MGUARD_NOT_FOUND;
    model__scope_pop(s, i - 1);
    return MGUARD_OK;
}

MODEL_DEF bool model_scope_is_active(const model_scope *s, const char *fqn)
{
    size_t j;
    if (!s || !fqn) return false;
    if (strcmp(fqn, MODEL_SCOPE_ROOT) == 0) return true;
    for (j = 0; j < s->na; j++)
        if (model__streq(s->a[j].name, fqn)) return true;
    return false;
}

/* Root first, then the active names in order of activation. */
MODEL_DEF size_t model_scope_parents(const model_scope *s, const char **out, size_t cap)
{
    size_t j;
    if (!s) return 0;
    if (cap > 0 && out) out[0] = MODEL_SCOPE_ROOT;
    for (j = 0; j < s->na && j + 1 < cap && out; j++) out[j + 1] = s->a[j].name;
    return s->na + 1;
}

/* The stack read from the top: the innermost frame first, the root last. */
MODEL_DEF size_t model_scope_frames(const model_scope *s, const char **out, size_t cap)
{
    size_t j;
    if (!s) return 0;
    for (j = 0; j <= s->nf && j < cap && out; j++) out[j] = j < s->nf ? s->f[s->nf - 1 - j].name : MODEL_SCOPE_ROOT;
    return s->nf + 1;
}

/* No type_name callback: a component has a name only if it was given one. */
MODEL_DEF const char *model_scope_name(const model_scope *s, const void *comp) { return model_scope_known_name(s, comp); }

/* Append text to buf like snprintf (n: the full length so far). */
MODEL_DEF void model__put(char *buf, size_t cap, size_t *n, const char *text)
{
    for (; *text; text++, (*n)++)
        if (*n + 1 < cap) { buf[*n] = *text; buf[*n + 1] = '\0'; }
}

/* The PATH view, "Global > a > b": the root, then every frame's name, outermost first. */
MODEL_DEF size_t model_scope_path(const model_scope *s, char *buf, size_t cap)
{
    size_t n = 0, i;
    if (cap) buf[0] = '\0';
    if (!s) return 0;
    model__put(buf, cap, &n, MODEL_SCOPE_ROOT);
    for (i = 0; i < s->nf; i++) {
        model__put(buf, cap, &n, " > ");
        model__put(buf, cap, &n, s->f[i].name);
    }
    return n;
}

/* CLEAR_FRAMES: every frame closed, the active set back to the root, phase
   forward; the trace and the warnings are not modelled. */
MODEL_DEF mguard_status model_scope_clear(model_scope *s, unsigned flags)
{
    if (!s || (flags & ~7u)) return MGUARD_EINVAL;
    if (!(flags & MGUARD_SCOPE_CLEAR_FRAMES)) return MGUARD_OK;
    s->nf = 0;
    s->na = 0;
    s->phase = 0;
    return MGUARD_OK;
}

MODEL_DEF model_scount *model__scount(const model_scope *s, const char *name, const char *counter)
{
    size_t i;
    for (i = 0; i < s->ncnt; i++)
        if (strcmp(s->cnt[i].name, name) == 0 && strcmp(s->cnt[i].counter, counter) == 0) return &s->cnt[i];
    return NULL;
}

MODEL_DEF void model__scount_add(model_scope *s, const char *name, const char *counter, double amount)
{
    model_scount *t = model__scount(s, name, counter);
    if (!t) {
        model_scount z;
        z.name = name;
        z.counter = counter;
        z.total = z.self = 0.0;
        MODEL__PUSH(s->cnt, s->ncnt, z);
        t = &s->cnt[s->ncnt - 1];
    }
    t->total += amount;
}

/* amount to counter of the root and of each active name, once each, and to
   the self of the innermost frame's name (the root's with no frame). */
MODEL_DEF mguard_status model_scope_add(model_scope *s, const char *counter, double amount)
{
    size_t j;
    if (!s || !counter || !*counter || !(amount - amount == 0.0)) return MGUARD_EINVAL;
    if (model__take_fail(s->ctx)) return MGUARD_ENOMEM;
    model__scount_add(s, MODEL_SCOPE_ROOT, counter, amount);
    for (j = 0; j < s->na; j++) model__scount_add(s, s->a[j].name, counter, amount);
    model__scount(s, s->nf ? s->f[s->nf - 1].name : MODEL_SCOPE_ROOT, counter)->self += amount;
    return MGUARD_OK;
}

MODEL_DEF double model_scope_counter(const model_scope *s, const char *fqn, const char *counter, double *self)
{
    const model_scount *t = (s && fqn && counter) ? model__scount(s, fqn, counter) : NULL;
    if (self) *self = t ? t->self : 0.0;
    return t ? t->total : 0.0;
}

MODEL_DEF void model_scope_destroy(model_scope *s)
{
    if (!s) return;
    s->ctx->scope = NULL;
    model_weak_destroy(s->names);
    while (s->njoined) free(s->joined[--s->njoined]);
    free(s->joined);
    free(s->f);
    free(s->a);
    free(s->cnt);
    free(s);
}

/* ---- side-effects ledger ------------------------------------------------
   Ledgers with plain values and no hooks but refs (no retain/release/equal),
   of pointer values or (sized) int64_t values, with field tables
   (set_fields: apply writes the pool object's memory, read reads it; on a
   sized ledger each field has its size and type, and a write to it keeps
   that many bytes of its number; unbound: 8 bytes of INT):
   tracked objects in tracking order, each with its writes in first-recorded
   order (an overwrite keeps its place). Every object any ledger tracks
   becomes a key of one weak table shared by all ledgers (known while it
   lives, until the last ledger is destroyed); its death, in phase 2 (that
   table's key_death), drops from every ledger its entry and every write
   whose value is that object. No records, no hooks. Strings are the
   caller's. */

/* A write: a pointer value, or (sized ledgers) an integer value num. */
typedef struct model_lwrite { const char *attr; const void *value; int64_t num; bool deleted; size_t size; int type; } model_lwrite;

typedef struct model_lent {
    const void *obj;
    int kind;                /* mguard_ledger_kind */
    const char *source;
    bool marked;
    model_lwrite *w;
    size_t nw;
    const mguard_ledger_field *fields;   /* set_fields */
    size_t nfields;
} model_lent;

typedef struct model_ledger {
    model_ctx *ctx;
    model_lent *e;
    size_t n;
    bool sized;              /* values are int64_t (value_size 8), not pointers */
    /* prune's refs hook (NULL: a value refers to nothing but itself) */
    void (*refs)(const void *value, mguard_ledger_visit_fn visit, void *visit_ctx, void *user);
    void *user;
} model_ledger;

MODEL_DEF void model__l_free_ents(model_ledger *L)
{
    size_t i;
    for (i = 0; i < L->n; i++) free(L->e[i].w);
    free(L->e);
    L->e = NULL;
    L->n = 0;
}

MODEL_DEF long model__l_find(const model_ledger *L, const void *obj)
{
    size_t i;
    for (i = 0; i < L->n; i++)
        if (L->e[i].obj == obj) return (long)i;
    return -1;
}

MODEL_DEF void model__l_drop_entry(model_ledger *L, size_t i)
{
    free(L->e[i].w);
    memmove(&L->e[i], &L->e[i + 1], (L->n - i - 1) * sizeof *L->e);
    L->n--;
}

MODEL_DEF void model__l_on_death(const void *key, void *value, void *user)
{
    model_ctx *c = (model_ctx *)user;
    size_t k, i, j;
    (void)value;
    for (k = 0; k < c->nledgers; k++) {
        model_ledger *L = c->ledgers[k];
        long e = model__l_find(L, key);
        if (e >= 0) model__l_drop_entry(L, (size_t)e);
        for (i = 0; i < L->n; i++) {
            model_lent *en = &L->e[i];
            size_t n = 0;
            for (j = 0; j < en->nw; j++)
                if (en->w[j].value != key) en->w[n++] = en->w[j];
            en->nw = n;
        }
    }
}

MODEL_DEF model_ledger *model__l_new(model_ctx *c)
{
    model_ledger *L = (model_ledger *)calloc(1, sizeof *L);
    if (!L) abort();
    L->ctx = c;
    if (!c->lwatch) {
        c->lwatch = model_weak_create(c, 1, NULL, model__l_on_death, c);
        if (!c->lwatch) abort();
        c->lwatch->part = 1;
    }
    MODEL__PUSH(c->ledgers, c->nledgers, L);
    return L;
}

MODEL_DEF model_ledger *model_ledger_create(model_ctx *c, void (*refs)(const void *, mguard_ledger_visit_fn, void *, void *), void *user)
{
    model_ledger *L;
    if (model__take_fail(c)) return NULL;
    L = model__l_new(c);
    L->refs = refs;
    L->user = user;
    return L;
}

MODEL_DEF void model_ledger_destroy(model_ledger *L)
{
    model_ctx *c;
    size_t k;
    if (!L) return;
    c = L->ctx;
    for (k = 0; k < c->nledgers; k++) {
        if (c->ledgers[k] == L) {
            memmove(&c->ledgers[k], &c->ledgers[k + 1], (c->nledgers - k - 1) * sizeof *c->ledgers);
            c->nledgers--;
            break;
        }
    }
    model__l_free_ents(L);
    free(L);
    if (!c->nledgers && c->lwatch) {
        model_weak *t = c->lwatch;
        c->lwatch = NULL;
        model_weak_destroy(t);
    }
}

MODEL_DEF mguard_status model_ledger_track(model_ledger *L, const void *obj, const char *source, int kind)
{
    model_ctx *c;
    model_lent en;
    if (!L || !obj || kind < MGUARD_LEDGER_EXISTING || kind > MGUARD_LEDGER_CONTAINER) return MGUARD_EINVAL;
    c = L->ctx;
    if (model__is_dying(c, obj)) return MGUARD_EINVAL;   /* before anything is reserved */
    if (model__l_find(L, obj) >= 0) return MGUARD_EEXIST;
    if (model__take_fail(c)) return MGUARD_ENOMEM;
    if (!model_weak_contains(c->lwatch, obj)) {
        unsigned char one = 1;
        mguard_status st = model_weak_set(c->lwatch, obj, &one);
        if (st) return st;   /* a dying object: EINVAL */
    }
    memset(&en, 0, sizeof en);
    en.obj = obj;
    en.kind = kind;
    en.source = source;
    MODEL__PUSH(L->e, L->n, en);
    return MGUARD_OK;
}

MODEL_DEF bool model__l_modified(const model_lent *en)
{
    if (en->kind == MGUARD_LEDGER_NEW) return true;
    if (en->kind == MGUARD_LEDGER_CONTAINER) return en->marked;
    return en->nw > 0;
}

/* As mguard_ledger_get: out may be NULL (only whether obj is tracked). */
MODEL_DEF mguard_status model_ledger_get(const model_ledger *L, const void *obj, mguard_ledger_entry *out)
{
    long e;
    if (!L || !obj) return MGUARD_EINVAL;
    if ((e = model__l_find(L, obj)) < 0) return MGUARD_NOT_FOUND;
    if (out) {
        out->obj = L->e[e].obj;
        out->kind = (mguard_ledger_kind)L->e[e].kind;
        out->source = L->e[e].source;
        out->modified = model__l_modified(&L->e[e]);
        out->writes = L->e[e].nw;
    }
    return MGUARD_OK;
}

MODEL_DEF mguard_status model_ledger_mark_modified(model_ledger *L, const void *obj)
{
    long e;
    if (!L || !obj) return MGUARD_EINVAL;
    e = model__l_find(L, obj);
    if (e < 0 || L->e[e].kind != MGUARD_LEDGER_CONTAINER) return MGUARD_EINVAL;
    L->e[e].marked = true;
    return MGUARD_OK;
}

MODEL_DEF long model__l_wfind(const model_lent *en, const char *attr)
{
    size_t j;
    for (j = 0; j < en->nw; j++)
        if (strcmp(en->w[j].attr, attr) == 0) return (long)j;
    return -1;
}

MODEL_DEF const mguard_ledger_field *model__l_field(const model_lent *en, const char *attr);

/* The size and type of obj.attr's values on a sized ledger: its field's,
   else the desc's (8 bytes of INT); 0, 0 on a pointer ledger. */
MODEL_DEF void model__l_shape(const model_ledger *L, const model_lent *en, const char *attr, size_t *size, int *type)
{
    const mguard_ledger_field *f = model__l_field(en, attr);
    *size = !L->sized ? 0 : f ? f->size : 8;
    *type = !L->sized ? 0 : f ? (int)f->type : MGUARD_LEDGER_VALUE_INT;
}

MODEL_DEF mguard_status model__l_write(model_ledger *L, const void *obj, const char *attr, const void *value, int64_t num, bool deleted)
{
    long e, w;
    model_lent *en;
    size_t size;
    int type;
    int64_t kept = 0;
    if (!L || !obj || !attr) return MGUARD_EINVAL;
    e = model__l_find(L, obj);
    if (e < 0 || L->e[e].kind == MGUARD_LEDGER_CONTAINER) return MGUARD_EINVAL;
    if (model__take_fail(L->ctx)) return MGUARD_ENOMEM;
    en = &L->e[e];
    model__l_shape(L, en, attr, &size, &type);
    if (deleted) value = NULL;
    else memcpy(&kept, &num, size);   /* the field's bytes of the caller's number */
    w = model__l_wfind(en, attr);
    if (w < 0) {
        model_lwrite nw;
        nw.attr = attr;
        MODEL__PUSH(en->w, en->nw, nw);
        w = (long)en->nw - 1;
    }
    en->w[w].value = value;
    en->w[w].num = kept;
    en->w[w].deleted = deleted;
    en->w[w].size = size;
    en->w[w].type = type;
    return MGUARD_OK;
}

/* A pointer value (or a deletion). */
MODEL_DEF mguard_status model_ledger_write(model_ledger *L, const void *obj, const char *attr, const void *value, bool deleted)
{
    return model__l_write(L, obj, attr, value, 0, deleted);
}

/* A sized ledger's value (or a deletion). */
MODEL_DEF mguard_status model_ledger_write_num(model_ledger *L, const void *obj, const char *attr, int64_t num, bool deleted)
{
    return model__l_write(L, obj, attr, NULL, num, deleted);
}

MODEL_DEF const mguard_ledger_field *model__l_field(const model_lent *en, const char *attr)
{
    size_t i;
    for (i = 0; i < en->nfields; i++)
        if (strcmp(en->fields[i].name, attr) == 0) return &en->fields[i];
    return NULL;
}

/* A size values of type t may have. */
MODEL_DEF bool model__l_size_ok(int t, size_t n)
{
    switch (t) {
    case MGUARD_LEDGER_VALUE_BYTES: return n >= 1 && n <= MGUARD_LEDGER_MAX_VALUE;
    case MGUARD_LEDGER_VALUE_INT: case MGUARD_LEDGER_VALUE_UINT: return n == 1 || n == 2 || n == 4 || n == 8;
    case MGUARD_LEDGER_VALUE_DOUBLE: return n == 4 || n == 8;
    case MGUARD_LEDGER_VALUE_BOOL: return n == 1;
    case MGUARD_LEDGER_VALUE_PTR: return n == sizeof(void *);
    default: return false;
    }
}

/* set_fields: every field named, of a known type and a size it allows (a
   pointer's on a pointer ledger); no pending write of obj changes its size
   or type under the new table. */
MODEL_DEF mguard_status model_ledger_set_fields(model_ledger *L, const void *obj, const mguard_ledger_field *fields, size_t n)
{
    long e;
    size_t i;
    model_lent nb;
    if (!L || !obj) return MGUARD_EINVAL;
    e = model__l_find(L, obj);
    if (e < 0 || L->e[e].kind == MGUARD_LEDGER_CONTAINER || (!fields && n)) return MGUARD_EINVAL;
    for (i = 0; i < n; i++) {
        if (!fields[i].name || (unsigned)fields[i].type > MGUARD_LEDGER_VALUE_PTR) return MGUARD_EINVAL;
        if (L->sized ? !model__l_size_ok((int)fields[i].type, fields[i].size) : fields[i].size != sizeof(void *)) return MGUARD_EINVAL;
    }
    nb = L->e[e];
    nb.fields = fields;
    nb.nfields = n;
    for (i = 0; i < nb.nw; i++) {
        size_t size;
        int type;
        model__l_shape(L, &nb, nb.w[i].attr, &size, &type);
        if (size != nb.w[i].size || type != nb.w[i].type) return MGUARD_EINVAL;
    }
    L->e[e].fields = n ? fields : NULL;
    L->e[e].nfields = n;
    return MGUARD_OK;
}

/* mguard_ledger_read: the pending value, else the real field, copied out
   (the attribute's size: its field's, else 8 bytes or a pointer); out is
   untouched for an untracked object. */
MODEL_DEF mguard_status model_ledger_read(const model_ledger *L, const void *obj, const char *attr, void *out)
{
    size_t vs;
    long e, w;
    const mguard_ledger_field *f;
    if (!L || !out || !obj || !attr) return MGUARD_EINVAL;
    e = model__l_find(L, obj);
    if (e < 0) return MGUARD_NOT_FOUND;
    if (L->e[e].kind == MGUARD_LEDGER_CONTAINER) return MGUARD_EINVAL;
    f = model__l_field(&L->e[e], attr);
    vs = f ? f->size : L->sized ? 8u : sizeof(void *);
    memset(out, 0, vs);
    w = model__l_wfind(&L->e[e], attr);
    if (w >= 0) {
        if (L->e[e].w[w].deleted) return MGUARD_DELETED;
        if (L->sized) memcpy(out, &L->e[e].w[w].num, vs);
        else memcpy(out, &L->e[e].w[w].value, sizeof(void *));
        return MGUARD_OK;
    }
    if (!f) return MGUARD_NOT_FOUND;
    memcpy(out, (const unsigned char *)obj + f->offset, vs);
    return MGUARD_OK;
}

/* As mguard_ledger_pending; value and num may be NULL (only the status). */
MODEL_DEF mguard_status model_ledger_pending(const model_ledger *L, const void *obj, const char *attr, const void **value, int64_t *num)
{
    long e, w;
    if (value) *value = NULL;
    if (num) *num = 0;
    if (!L || !obj || !attr) return MGUARD_EINVAL;
    e = model__l_find(L, obj);
    if (e < 0) return MGUARD_NOT_FOUND;
    if (L->e[e].kind == MGUARD_LEDGER_CONTAINER) return MGUARD_EINVAL;
    w = model__l_wfind(&L->e[e], attr);
    if (w < 0) return MGUARD_NOT_FOUND;
    if (L->e[e].w[w].deleted) return MGUARD_DELETED;
    if (value) *value = L->e[e].w[w].value;
    if (num) *num = L->e[e].w[w].num;
    return MGUARD_OK;
}

/* As mguard_ledger_get_stats, for what the model keeps (no records, hooks
   or storage: those stay 0). */
typedef mguard_ledger_stats model_ledger_stats;
MODEL_DEF mguard_status model_ledger_get_stats(const model_ledger *L, model_ledger_stats *out)
{
    size_t i;
    if (!L || !out) return MGUARD_EINVAL;
    memset(out, 0, sizeof *out);
    out->entries = L->n;
    for (i = 0; i < L->n; i++) {
        out->modified += model__l_modified(&L->e[i]);
        out->writes += L->e[i].nw;
    }
    return MGUARD_OK;
}

MODEL_DEF void model__l_copy(model_ledger *dst, const model_ledger *src)
{
    size_t i;
    model__l_free_ents(dst);
    dst->e = (model_lent *)model__xrealloc(NULL, src->n * sizeof *dst->e);
    dst->n = src->n;
    for (i = 0; i < src->n; i++) {
        dst->e[i] = src->e[i];
        dst->e[i].w = (model_lwrite *)model__xrealloc(NULL, src->e[i].nw * sizeof *src->e[i].w);
        if (src->e[i].nw) memcpy(dst->e[i].w, src->e[i].w, src->e[i].nw * sizeof *src->e[i].w);
    }
}

MODEL_DEF model_ledger *model_ledger_clone(const model_ledger *L)
{
    model_ledger *C;
    if (!L || model__take_fail(L->ctx)) return NULL;
    C = model__l_new(L->ctx);
    C->refs = L->refs;
    C->user = L->user;
    C->sized = L->sized;
    model__l_copy(C, L);
    return C;
}

MODEL_DEF mguard_status model_ledger_restore(model_ledger *L, const model_ledger *cp)
{
    if (!L || !cp) return MGUARD_EINVAL;
    if (L == cp) return MGUARD_OK;
    if (model__take_fail(L->ctx)) return MGUARD_ENOMEM;
    model__l_copy(L, cp);
    return MGUARD_OK;
}

/* Same objects (kind, source, modified), same writes (by attribute: value
   pointer or number, size, type and deletion); order does not count. */
MODEL_DEF bool model_ledger_equal(const model_ledger *a, const model_ledger *b)
{
    size_t i, j;
    if (!a || !b) return false;
    if (a->n != b->n) return false;
    for (i = 0; i < a->n; i++) {
        const model_lent *x = &a->e[i];
        long k = model__l_find(b, x->obj);
        const model_lent *y;
        if (k < 0) return false;
        y = &b->e[k];
        if (x->kind != y->kind || !model__streq(x->source, y->source) || model__l_modified(x) != model__l_modified(y))
            return false;
        if (x->nw != y->nw) return false;
        for (j = 0; j < x->nw; j++) {
            long w = model__l_wfind(y, x->w[j].attr);
            if (w < 0 || y->w[w].value != x->w[j].value || y->w[w].num != x->w[j].num || y->w[w].deleted != x->w[j].deleted ||
                y->w[w].size != x->w[j].size || y->w[w].type != x->w[j].type)
                return false;
        }
    }
    return true;
}

/* Prune, the rule as the header states it: the roots and every EXISTING
   or CONTAINER object are reached; every pointer reached is looked into once:
   what the refs hook lists for it and, when tracked, its pending values are
   reached too. An untracked pointer is only worth reaching with a refs hook
   (without one nothing can be asked about it). NEW objects not reached are
   dropped with their writes. */
typedef struct model__lreach {
    const model_ledger *L;
    const void **p;
    size_t n;
} model__lreach;

MODEL_DEF void model__l_reach(const void *x, void *vctx)
{
    model__lreach *r = (model__lreach *)vctx;
    size_t i;
    if (!x || (model__l_find(r->L, x) < 0 && !r->L->refs)) return;
    for (i = 0; i < r->n; i++)
        if (r->p[i] == x) return;
    MODEL__PUSH(r->p, r->n, x);
}

MODEL_DEF mguard_status model_ledger_prune(model_ledger *L, const void *const *roots, size_t nroots)
{
    model__lreach r;
    size_t i, j;
    if (!L || (!roots && nroots)) return MGUARD_EINVAL;
    if (model__take_fail(L->ctx)) return MGUARD_ENOMEM;
    memset(&r, 0, sizeof r);
    r.L = L;
    for (i = 0; i < nroots; i++) model__l_reach(roots[i], &r);
    for (i = 0; i < L->n; i++)
        if (L->e[i].kind != MGUARD_LEDGER_NEW) model__l_reach(L->e[i].obj, &r);
    for (i = 0; i < r.n; i++) {   /* r.n grows as pointers are reached */
        const void *x = r.p[i];
        long e = model__l_find(L, x);
        if (L->refs) L->refs(x, model__l_reach, &r, L->user);
        for (j = 0; e >= 0 && j < L->e[e].nw; j++) model__l_reach(L->e[e].w[j].value, &r);
    }
    for (i = L->n; i-- > 0;) {
        bool live = false;
        for (j = 0; j < r.n && !live; j++) live = r.p[j] == L->e[i].obj;
        if (L->e[i].kind == MGUARD_LEDGER_NEW && !live) model__l_drop_entry(L, i);
    }
    free((void *)r.p);
    return MGUARD_OK;
}

MODEL_DEF void model_ledger_clear(model_ledger *L)
{
    if (L) model__l_free_ents(L);
}

/* Apply: the pending writes are snapshotted in ledger order, then each is
   written into its field (set_fields; a deletion zeroes it) or handed to
   fn (NULL only when every write has a field); once fn changed things, a
   write whose object is no
   longer tracked, or whose value (an object some ledger tracks) died since
   the snapshot, is skipped; identity is the object's life, not its
   address (a newcomer at a dead object's address gets none of its writes:
   issue 11, defect 4). */
typedef struct model__lsnap {
    const void *obj;
    const char *attr;
    const void *value;
    int64_t num;             /* sized ledgers */
    const mguard_ledger_field *field;   /* written by apply itself */
    uint64_t oserial;        /* the object's life: a newcomer at its address is
                                another (0: already dying, still tracked) */
    uint64_t vserial;        /* 0: the value's death is not watched */
    bool deleted;
} model__lsnap;

MODEL_DEF mguard_status model_ledger_apply(model_ledger *L, mguard_ledger_apply_fn fn, void *user)
{
    model_ctx *c;
    model__lsnap *snap;
    model_ledger_stats ls;
    size_t i, j, k = 0, unbound = 0;
    if (!L) return MGUARD_EINVAL;
    c = L->ctx;
    for (i = 0; i < L->n; i++)
        for (j = 0; j < L->e[i].nw; j++) unbound += model__l_field(&L->e[i], L->e[i].w[j].attr) == NULL;
    /* mguard allocates its snapshot (and field index) first, when there is
       a write; then a NULL fn is fine only when every write goes to a field */
    if (model__take_fail(c)) return MGUARD_ENOMEM;
    if (!fn && unbound) return MGUARD_EINVAL;
    model_ledger_get_stats(L, &ls);
    snap = (model__lsnap *)model__xrealloc(NULL, (ls.writes + 1) * sizeof *snap);
    for (i = 0; i < L->n; i++) {
        for (j = 0; j < L->e[i].nw; j++) {
            const model_lwrite *w = &L->e[i].w[j];
            const model_obj *vo = w->value ? model__find(c, w->value) : NULL;
            snap[k].obj = L->e[i].obj;
            snap[k].oserial = model__find(c, L->e[i].obj) ? model__find(c, L->e[i].obj)->serial : 0;
            snap[k].attr = w->attr;
            snap[k].value = w->value;
            snap[k].num = w->num;
            snap[k].field = model__l_field(&L->e[i], w->attr);
            snap[k].vserial = (vo && model_weak_contains(c->lwatch, w->value)) ? vo->serial : 0;
            snap[k].deleted = w->deleted;
            k++;
        }
    }
    for (i = 0; i < k; i++) {
        unsigned char *dst = (unsigned char *)(uintptr_t)snap[i].obj;
        if (model__l_find(L, snap[i].obj) < 0) continue;
        if (snap[i].oserial && !model__alive(c, snap[i].obj, snap[i].oserial)) continue;
        if (snap[i].vserial && !model__alive(c, snap[i].value, snap[i].vserial)) continue;
        if (snap[i].field) {
            dst += snap[i].field->offset;
            if (snap[i].deleted) memset(dst, 0, snap[i].field->size);
            else if (L->sized) memcpy(dst, &snap[i].num, snap[i].field->size);
            else memcpy(dst, &snap[i].value, sizeof(void *));
            model_on_mutation_at(c, snap[i].obj, snap[i].attr, NULL, 0);   /* reported, as the program's write */
        } else if (L->sized) {
            fn(dst, snap[i].attr, snap[i].deleted ? NULL : &snap[i].num, snap[i].deleted, user);
        } else {
            fn(dst, snap[i].attr, (void *)(uintptr_t)snap[i].value, snap[i].deleted, user);
        }
    }
    free(snap);
    return MGUARD_OK;
}


/* ---- strings of the API ------------------------------------------------- */

MODEL_DEF const char *model_status_str(int st)
{
    static const char *const names[] = { "MGUARD_OK", "MGUARD_NOT_FOUND", "MGUARD_EINVAL", "MGUARD_ENOMEM",
                                         "MGUARD_EEXIST", "MGUARD_DELETED" };
    return st >= 0 && st < 6 ? names[st] : "unknown status";
}

MODEL_DEF const char *model_kind_str(int kind)
{
    return kind == 1 ? "existing" : kind == 2 ? "new" : kind == 3 ? "container" : "unknown";
}

/* ---- dynamism tracker ------------------------------------------------------
   Paths are normalized (".name" becomes "['name']"), then each keeps the
   first value seen at every position (an int64 dimension or a double
   scalar) and whether a different one was seen since; values compare as
   Python numbers (an int and a double are equal only when the double is
   exactly that integer; NaN equals NaN). Paths are grouped by their
   top-level argument name, groups and paths in order of first observation.
   A normalized path of 256 bytes or more costs the tracker a temporary
   allocation on every call, which the driver can make fail. */

MODEL_DEF int model__ident_start(char ch) { return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }
MODEL_DEF int model__ident(char ch) { return model__ident_start(ch) || (ch >= '0' && ch <= '9'); }

MODEL_DEF size_t model_normalize(const char *in, char *out, size_t cap)
{
    size_t n = 0, i = 0;
    char one[2] = { 0, 0 };
    if (cap) out[0] = '\0';
    if (!in) return 0;
    while (in[i]) {
        if (in[i] == '.' && model__ident_start(in[i + 1])) {
            size_t e = i + 1;
            model__put(out, cap, &n, "['");
            while (model__ident(in[e])) {
                one[0] = in[e++];
                model__put(out, cap, &n, one);
            }
            model__put(out, cap, &n, "']");
            i = e;
        } else {
            one[0] = in[i++];
            model__put(out, cap, &n, one);
        }
    }
    return n;
}

typedef struct model_dval { int is_int; int64_t i; double d; } model_dval;

MODEL_DEF bool model__dval_eq(const model_dval *a, const model_dval *b)
{
    const model_dval *iv = a->is_int ? a : b, *dv = a->is_int ? b : a;
    if (a->is_int && b->is_int) return a->i == b->i;
    if (!a->is_int && !b->is_int) return a->d == b->d || (a->d != a->d && b->d != b->d);
    /* Python: an int equals a float only when the float is that integer */
    if (dv->d != dv->d || dv->d < -9223372036854775808.0 || dv->d >= 9223372036854775808.0) return false;
    if (dv->d != (double)(int64_t)dv->d) return false;
    return (int64_t)dv->d == iv->i;
}

typedef struct model_dpath {
    char *path, *group;
    bool is_index, is_shape;
    model_dval *v;
    bool *dyn;
    size_t rank;
} model_dpath;

typedef struct model_dyn {
    model_ctx *ctx;
    model_dpath *p;          /* order of first observation */
    size_t n;
} model_dyn;

MODEL_DEF model_dyn *model_dyn_create(model_ctx *c)
{
    model_dyn *d;
    if (model__take_fail(c)) return NULL;
    d = (model_dyn *)calloc(1, sizeof *d);
    if (!d) abort();
    d->ctx = c;
    MODEL__PUSH(c->dyns, c->ndyns, d);
    return d;
}

MODEL_DEF void model_dyn_destroy(model_dyn *d)
{
    size_t i;
    if (!d) return;
    for (i = 0; i < d->ctx->ndyns; i++)
        if (d->ctx->dyns[i] == d) d->ctx->dyns[i] = d->ctx->dyns[--d->ctx->ndyns];
    for (i = 0; i < d->n; i++) {
        free(d->p[i].path);
        free(d->p[i].group);
        free(d->p[i].v);
        free(d->p[i].dyn);
    }
    free(d->p);
    free(d);
}

/* The normalized path (malloc'd); NULL when the long path's temporary
   allocation fails. */
MODEL_DEF char *model__dyn_norm(model_dyn *d, const char *path)
{
    size_t n = model_normalize(path, NULL, 0);
    char *out;
    if (n >= 256 && model__take_fail(d->ctx)) return NULL;
    out = (char *)model__xrealloc(NULL, n + 1);
    model_normalize(path, out, n + 1);
    return out;
}

MODEL_DEF long model__dyn_find(const model_dyn *d, const char *norm)
{
    size_t i;
    for (i = 0; i < d->n; i++)
        if (strcmp(d->p[i].path, norm) == 0) return (long)i;
    return -1;
}

/* "x" for L['x'][0] and x['y'], "0" (an index) for L[0], "L" for L. */
MODEL_DEF char *model__dyn_group(const char *norm, bool *is_index)
{
    const char *p = norm, *e;
    char *g;
    *is_index = false;
    if (p[0] == 'L' && p[1] == '[') p++;
    if (*p == '[') {
        p++;
        if (*p == '\'' || *p == '"') {
            e = strchr(p + 1, *p);
            p++;
            if (!e) e = p + strlen(p);
        } else {
            /* an index: a decimal integer as Python writes one (no leading zero) */
            const char *d = p + (*p == '-');
            size_t nd = strspn(d, "0123456789");
            e = strchr(p, ']');
            if (!e) e = p + strlen(p);
            *is_index = nd > 0 && d + nd == e && (*d != '0' || (nd == 1 && d == p));
        }
    } else {
        e = strchr(p, '[');
        if (!e) e = p + strlen(p);
    }
    g = (char *)model__xrealloc(NULL, (size_t)(e - p) + 1);
    memcpy(g, p, (size_t)(e - p));
    g[e - p] = '\0';
    return g;
}

MODEL_DEF mguard_status model__dyn_observe(model_dyn *d, const char *path, const model_dval *vals, size_t ndim)
{
    char *norm;
    long i;
    size_t k;
    model_dpath *r;
    if (!d || !path || !*path) return MGUARD_EINVAL;
    norm = model__dyn_norm(d, path);
    if (!norm || model__take_fail(d->ctx)) { free(norm); return MGUARD_ENOMEM; }
    i = model__dyn_find(d, norm);
    if (i < 0) {
        model_dpath np;
        memset(&np, 0, sizeof np);
        np.path = norm;
        np.group = model__dyn_group(norm, &np.is_index);
        np.is_shape = !vals || vals[0].is_int;
        MODEL__PUSH(d->p, d->n, np);
        i = (long)d->n - 1;
    } else {
        free(norm);
    }
    r = &d->p[i];
    if (ndim > r->rank) {
        r->v = (model_dval *)model__xrealloc(r->v, ndim * sizeof *r->v);
        r->dyn = (bool *)model__xrealloc(r->dyn, ndim);
    }
    for (k = 0; k < ndim; k++) {
        if (k >= r->rank) { r->v[k] = vals[k]; r->dyn[k] = false; }
        else if (!model__dval_eq(&r->v[k], &vals[k])) r->dyn[k] = true;
    }
    if (ndim > r->rank) r->rank = ndim;
    return MGUARD_OK;
}

MODEL_DEF mguard_status model_dyn_observe(model_dyn *d, const char *path, const int64_t *dims, size_t ndim)
{
    model_dval *v;
    size_t k;
    mguard_status st;
    if (!d || !path || !*path || (ndim && !dims) || ndim > 0x7fffffffu) return MGUARD_EINVAL;
    v = (model_dval *)model__xrealloc(NULL, (ndim + 1) * sizeof *v);
    for (k = 0; k < ndim; k++) { v[k].is_int = 1; v[k].i = dims[k]; v[k].d = 0.0; }
    st = model__dyn_observe(d, path, ndim ? v : NULL, ndim);
    free(v);
    return st;
}

MODEL_DEF mguard_status model_dyn_observe_scalar(model_dyn *d, const char *path, double value)
{
    model_dval v;
    v.is_int = 0;
    v.i = 0;
    v.d = value;
    return model__dyn_observe(d, path, &v, 1);
}

/* The record of path, -1 when unknown (or its temporary allocation failed). */
MODEL_DEF long model__dyn_lookup(model_dyn *d, const char *path)
{
    char *norm;
    long i;
    if (!d || !path) return -1;
    norm = model__dyn_norm(d, path);
    if (!norm) return -1;
    i = model__dyn_find(d, norm);
    free(norm);
    return i;
}

MODEL_DEF size_t model_dyn_count(const model_dyn *d) { return d ? d->n : 0; }

/* The i-th path in iteration order (groups in order of first observation,
   paths of a group likewise); NULL past the end. */
MODEL_DEF const model_dpath *model_dyn_at(const model_dyn *d, size_t i)
{
    size_t g, k, seen = 0;
    for (g = 0; g < d->n; g++) {
        bool first = true;
        for (k = 0; k < g; k++)
            if (strcmp(d->p[k].group, d->p[g].group) == 0 && d->p[k].is_index == d->p[g].is_index) first = false;
        if (!first) continue;
        for (k = g; k < d->n; k++) {
            if (strcmp(d->p[k].group, d->p[g].group) != 0 || d->p[k].is_index != d->p[g].is_index) continue;
            if (seen++ == i) return &d->p[k];
        }
    }
    return NULL;
}

/* Python's repr of a str (ASCII): single quotes unless it holds ' and no ". */
MODEL_DEF void model__pyrepr(char *buf, size_t cap, size_t *n, const char *text)
{
    const char *q = (strchr(text, '\'') && !strchr(text, '"')) ? "\"" : "'";
    char e[8];
    model__put(buf, cap, n, q);
    for (; *text; text++) {
        unsigned char ch = (unsigned char)*text;
        if (ch == (unsigned char)q[0] || ch == '\\') { e[0] = '\\'; e[1] = (char)ch; e[2] = '\0'; }
        else if (ch == '\t') strcpy(e, "\\t");
        else if (ch == '\n') strcpy(e, "\\n");
        else if (ch == '\r') strcpy(e, "\\r");
        else if (ch < 0x20 || ch == 0x7f) snprintf(e, sizeof e, "\\x%02x", (unsigned)ch);
        else { e[0] = (char)ch; e[1] = '\0'; }
        model__put(buf, cap, n, e);
    }
    model__put(buf, cap, n, q);
}

/* {'x': {"L['x']": (False, True)}, 0: {'L[0]': (True,)}} */
MODEL_DEF size_t model_dyn_format(const model_dyn *d, char *buf, size_t cap)
{
    size_t n = 0, i, k;
    const model_dpath *prev = NULL, *r;
    if (cap) buf[0] = '\0';
    if (!d) return 0;
    model__put(buf, cap, &n, "{");
    for (i = 0; (r = model_dyn_at(d, i)) != NULL; i++) {
        bool new_group = !prev || strcmp(prev->group, r->group) != 0 || prev->is_index != r->is_index;
        if (new_group && prev) model__put(buf, cap, &n, "}, ");
        if (new_group) {
            if (r->is_index) model__put(buf, cap, &n, r->group);
            else model__pyrepr(buf, cap, &n, r->group);
            model__put(buf, cap, &n, ": {");
        } else {
            model__put(buf, cap, &n, ", ");
        }
        model__pyrepr(buf, cap, &n, r->path);
        model__put(buf, cap, &n, ": (");
        for (k = 0; k < r->rank; k++) {
            if (k) model__put(buf, cap, &n, ", ");
            model__put(buf, cap, &n, r->dyn[k] ? "True" : "False");
        }
        model__put(buf, cap, &n, r->rank == 1 ? ",)" : ")");
        prev = r;
    }
    if (prev) model__put(buf, cap, &n, "}");
    model__put(buf, cap, &n, "}");
    return n;
}

/* ---- guarded caches (section 10) ----------------------------------------
   A cache is an array of positions (an entry or NULL) with a stack of free
   positions (the last freed is reused first, freed when phase 2 reaches
   its drop): iteration walks the positions in order and skips entries
   stored after it started. Every entry whose dependencies are linked
   (stored, or being computed) is also in the context's list cents; an
   object is known while a stored one depends on it. A dependency is
   (obj, attr) with attr NULL for the whole object (every key is one): an
   event on obj spoils the computes a matching dependency reaches (the
   innermost first), then drops the stored entries it reaches, the cache
   made first, then the lower position first, and their values are
   destroyed in drop order (the parked value of an earlier stale compute
   first). A compute's entry that
   an event or a refused dependency reaches becomes stale: its value is
   handed out, not stored, and destroyed at the next change (parked). LRU:
   a stamp set when stored and on each hit; the least recently used
   entry, never the one just stored, goes while over capacity or max_cost.
   Reasons: every drop with a cause (also of a computing entry), the last
   MGUARD_CACHE_REASONS of each cache searched newest first, for keys in
   the lives they had at the drop (their serials): a reason keeps its keys
   known while it is one of the last MGUARD_CACHE_REASONS of a live cache. */

enum { MODEL_CE_COMPUTING = 1, MODEL_CE_LIVE, MODEL_CE_STALE, MODEL_CE_DROPPED };

typedef struct model_cdep { const void *obj; const char *attr; uint64_t link; } model_cdep;
typedef struct model_cser { uint64_t s[MGUARD_CACHE_MAX_KEYS]; } model_cser;   /* a reason's keys' serials */

typedef struct model_centry {
    struct model_cache *cache;
    const void *keys[MGUARD_CACHE_MAX_KEYS];
    size_t nkeys;
    model_cdep *deps;            /* the keys first, then the added ones */
    size_t ndeps;
    int state;
    unsigned char *value;
    size_t cost, pos;
    uint64_t seq, used;
    mguard_value_dtor dtor;      /* DROPPED: what destroys the value */
    mguard_cache_dropped_fn dropped; /* DROPPED with a cause: told first, with why */
    mguard_cache_reason why;
    void *user;
    struct model_cache *held;    /* DROPPED from a cache: it waits for the value's turn */
} model_centry;

typedef struct model_cache {
    model_ctx *ctx;
    size_t value_size, capacity, max_cost;
    mguard_value_dtor dtor;
    mguard_cache_dropped_fn dropped;
    void *user;
    char name[64];
    model_centry **slot;         /* positions: an entry, or NULL (free) */
    size_t nslot;
    size_t *freepos;             /* free positions, the last freed on top */
    size_t nfree;
    uint64_t next_seq, next_use, order;
    mguard_cache_stats stats;
    mguard_cache_reason *reasons;  /* every drop with a cause, in order */
    size_t nreasons;
    model_cser *rser;              /* reasons[i]'s keys' serials */
    size_t nrser;
    model_centry *parked;
    int busy, destroying, freed;
} model_cache;

/* A running compute (what mguard_cache_job points to on the model's side). */
typedef struct model_cjob { model_cache *c; model_centry *e; int running; } model_cjob;

/* Does a cache keep obj known: a stored entry depends on it, or one of
   the last MGUARD_CACHE_REASONS reasons of a live cache names it (in its
   life now)? A compute in progress does not. */
MODEL_DEF bool model__cache_refers(const model_ctx *c, const void *obj)
{
    size_t i, k, r;
    const model_obj *o = model__find(c, obj);
    for (i = 0; i < c->ncents; i++)
        for (k = 0; c->cents[i]->state == MODEL_CE_LIVE && k < c->cents[i]->ndeps; k++)
            if (c->cents[i]->deps[k].obj == obj) return true;
    for (i = 0; o && i < c->ncaches; i++) {
        const model_cache *m = c->caches[i];
        if (m->freed) continue;
        for (r = m->nreasons > MGUARD_CACHE_REASONS ? m->nreasons - MGUARD_CACHE_REASONS : 0; r < m->nreasons; r++)
            for (k = 0; k < m->reasons[r].nkeys; k++)
                if (m->reasons[r].keys[k] == obj && m->rser[r].s[k] == o->serial) return true;
    }
    return false;
}

/* Does a compute in progress depend on obj (on attr: NULL, any)? */
MODEL_DEF bool model__cache_computes_on(const model_ctx *c, const void *obj)
{
    size_t i, k;
    for (i = 0; i < c->ncents; i++)
        for (k = 0; c->cents[i]->state == MODEL_CE_COMPUTING && k < c->cents[i]->ndeps; k++)
            if (c->cents[i]->deps[k].obj == obj) return true;
    return false;
}

MODEL_DEF bool model__cache_ok(const model_cache *c) { return c && !c->freed; }

MODEL_DEF bool model__ckeys_ok(const void *const *keys, size_t n)
{
    size_t i;
    if (!keys || n == 0 || n > MGUARD_CACHE_MAX_KEYS) return false;
    for (i = 0; i < n; i++)
        if (!keys[i]) return false;
    return true;
}

MODEL_DEF bool model__ckeys_eq(const void *const *a, size_t na, const void *const *b, size_t nb)
{
    size_t i;
    if (na != nb) return false;
    for (i = 0; i < na; i++)
        if (a[i] != b[i]) return false;
    return true;
}

MODEL_DEF model_centry *model__cfind(const model_cache *c, const void *const *keys, size_t n)
{
    size_t i;
    for (i = 0; i < c->nslot; i++)
        if (c->slot[i] && model__ckeys_eq(c->slot[i]->keys, c->slot[i]->nkeys, keys, n)) return c->slot[i];
    return NULL;
}

MODEL_DEF size_t model_cache_count(const model_cache *c)
{
    size_t i, n = 0;
    if (!model__cache_ok(c)) return 0;
    for (i = 0; i < c->nslot; i++) n += c->slot[i] != NULL;
    return n;
}

MODEL_DEF size_t model__ccost(const model_cache *c)
{
    size_t i, n = 0;
    for (i = 0; i < c->nslot; i++)
        if (c->slot[i]) n += c->slot[i]->cost;
    return n;
}

MODEL_DEF void model__clink(model_ctx *c, model_centry *e, const void *obj, const char *attr)
{
    model_cdep d;
    (void)c;
    d.obj = obj;
    d.attr = attr;
    d.link = ++c->next_link;
    MODEL__PUSH(e->deps, e->ndeps, d);
}

/* e's dependencies go: it leaves cents; an object nothing else knows
   (keep excepted: the event's own, which its caller decides about) is
   forgotten. */
MODEL_DEF void model__cunlink(model_ctx *c, model_centry *e, const void *keep)
{
    size_t i;
    for (i = 0; i < c->ncents; i++) {
        if (c->cents[i] == e) {
            memmove(&c->cents[i], &c->cents[i + 1], (c->ncents - i - 1) * sizeof *c->cents);
            c->ncents--;
            break;
        }
    }
    for (i = 0; i < e->ndeps; i++) {
        model_obj *o = e->deps[i].obj == keep ? NULL : model__find(c, e->deps[i].obj);
        if (o) model__drop_if_empty(c, o);
    }
    free(e->deps);
    e->deps = NULL;
    e->ndeps = 0;
}

MODEL_DEF void model__cfree(model_centry *e)
{
    free(e->deps);
    free(e->value);
    free(e);
}

MODEL_DEF void model__cpend_push(model_cpend *p, model_centry *e) { MODEL__PUSH(p->e, p->n, e); }

/* Phase 2: destroy each value, in drop order. */
MODEL_DEF void model__cfinish(model_cpend *p)
{
    size_t i;
    for (i = 0; i < p->n; i++) {
        model_centry *e = p->e[i];
        model_cache *h = e->held;
        /* the drop holds its cache no more: a destroy waiting for it goes
           now, one from its destructor at once */
        if (h) MODEL__PUSH(h->freepos, h->nfree, e->pos);
        if (e->dropped && e->why.cause) e->dropped(e->value, &e->why, e->user);   /* the cache still held */
        if (h && --h->busy == 0 && h->destroying && !h->freed) model__cdestroy_now(h);
        if (e->dtor) e->dtor(e->value, e->user);
        model__cfree(e);
    }
    p->n = 0;
    free(p->e);
    p->e = NULL;
}

/* Reason r of c is forgotten (pushed out of the last ones, or its cache
   gone): its keys may be forgotten (keep excepted: an event's own). */
MODEL_DEF void model__cforget(model_cache *c, size_t r, const void *keep)
{
    size_t k;
    for (k = 0; k < c->reasons[r].nkeys; k++) {
        model_obj *o = c->reasons[r].keys[k] == keep ? NULL : model__find(c->ctx, c->reasons[r].keys[k]);
        if (o) model__drop_if_empty(c->ctx, o);
    }
}

/* Phase 1 of a drop: why's cause 0 is an overwrite (counted as replaced,
   not remembered). A computing entry becomes stale. */
MODEL_DEF void model__cdrop(model_centry *e, const mguard_cache_reason *why, const void *keep, model_cpend *p)
{
    model_cache *c = e->cache;
    mguard_cache_reason r = *why;
    model_cser ser;
    size_t i;
    memset((void *)r.keys, 0, sizeof r.keys);
    memcpy((void *)r.keys, e->keys, e->nkeys * sizeof *e->keys);
    r.nkeys = e->nkeys;
    if (r.cause) {
        memset(&ser, 0, sizeof ser);
        /* the reason keeps its keys known while it is one of the last
           MGUARD_CACHE_REASONS (a compute's keys become known here) */
        for (i = 0; i < e->nkeys; i++) ser.s[i] = model__ensure(c->ctx, e->keys[i])->serial;
        MODEL__PUSH(c->reasons, c->nreasons, r);
        MODEL__PUSH(c->rser, c->nrser, ser);
        if (c->nreasons > MGUARD_CACHE_REASONS) model__cforget(c, c->nreasons - 1 - MGUARD_CACHE_REASONS, keep);
    }
    model__cunlink(c->ctx, e, keep);
    if (e->state == MODEL_CE_COMPUTING) {
        e->state = MODEL_CE_STALE;
        return;
    }
    switch (r.cause) {
    case MGUARD_CACHE_MUTATION: c->stats.mutations++; break;
    case MGUARD_CACHE_DEATH: c->stats.deaths++; break;
    case MGUARD_CACHE_EVICTION: c->stats.evictions++; break;
    case MGUARD_CACHE_EXPLICIT: c->stats.explicit_drops++; break;
    default: c->stats.replaced++; break;
    }
    c->slot[e->pos] = NULL;   /* its position is free once phase 2 reaches it */
    e->state = MODEL_CE_DROPPED;
    e->dtor = c->dtor;
    e->dropped = c->dropped;
    e->why = r;
    e->user = c->user;
    e->cache = NULL;
    e->held = c;
    c->busy++;
    model__cpend_push(p, e);
}

MODEL_DEF void model__cunpark(model_cache *c, model_cpend *p)
{
    model_centry *e = c->parked;
    if (!e) return;
    c->parked = NULL;
    e->state = MODEL_CE_DROPPED;
    e->dtor = c->dtor;
    e->user = c->user;
    model__cpend_push(p, e);
}

MODEL_DEF mguard_cache_reason model__creason(mguard_cache_cause cause, const void *obj)
{
    mguard_cache_reason r;
    memset(&r, 0, sizeof r);
    r.cause = cause;
    r.obj = obj;
    return r;
}

/* Phase 1 of a mutation (attr NULL: of the whole object) or death of obj:
   the entries a matching dependency reaches, in the order of their newest
   matching link, oldest first. */
MODEL_DEF void model__cache_event(model_ctx *c, const void *obj, const char *attr, const char *file, int line,
                                  int death, model_cpend *p)
{
    model_centry **hit = NULL;
    uint64_t *when = NULL;
    size_t nhit = 0, nwhen = 0, i, k;
    mguard_cache_reason why = model__creason(death ? MGUARD_CACHE_DEATH : MGUARD_CACHE_MUTATION, obj);
    if (!death) {
        why.attr = attr;
        why.file = file;
        why.line = line;
    }
    /* the computes in progress first, the innermost first; then the stored
       entries, the cache made first, then the lower position */
    for (i = c->ncents; i-- > 0;) {
        model_centry *e = c->cents[i];
        int reached = 0;
        for (k = 0; k < e->ndeps; k++) {
            const model_cdep *d = &e->deps[k];
            if (d->obj == obj && (!attr || !d->attr || strcmp(attr, d->attr) == 0)) reached = 1;
        }
        if (!reached) continue;
        MODEL__PUSH(hit, nhit, e);
        MODEL__PUSH(when, nwhen, e->state == MODEL_CE_COMPUTING ? nhit : 0);
    }
    for (i = 0; i < nhit; i++)   /* spoiled computes */
        if (hit[i]->state == MODEL_CE_COMPUTING) {
            model__cdrop(hit[i], &why, obj, p);
            hit[i] = NULL;
        }
    for (;;) {
        size_t best = nhit;
        for (i = 0; i < nhit; i++)
            if (hit[i] && (best == nhit || hit[i]->cache->order < hit[best]->cache->order ||
                           (hit[i]->cache->order == hit[best]->cache->order && hit[i]->pos < hit[best]->pos))) best = i;
        if (best == nhit) break;
        model__cdrop(hit[best], &why, obj, p);
        hit[best] = NULL;
    }
    free(hit);
    free(when);
}

MODEL_DEF model_cache *model_cache_create(model_ctx *c, const mguard_cache_desc *d)
{
    model_cache *m;
    if (!d || d->value_size == 0 || d->value_size > ((size_t)1 << 24)) return NULL;
    if (model__take_fail(c)) return NULL;
    m = (model_cache *)calloc(1, sizeof *m);
    if (!m) abort();
    m->ctx = c;
    m->value_size = d->value_size;
    m->capacity = d->capacity;
    m->max_cost = d->max_cost;
    m->dtor = d->value_dtor;
    m->dropped = d->dropped;
    m->user = d->user;
    snprintf(m->name, sizeof m->name, "%s", d->name ? d->name : "cache");
    m->order = c->next_order++;
    MODEL__PUSH(c->caches, c->ncaches, m);
    return m;
}

/* Drop (EXPLICIT), one at a time, every entry stored before bound. */
MODEL_DEF void model__cdrain(model_cache *c, uint64_t bound)
{
    model_cpend p = { NULL, 0 };
    mguard_cache_reason why = model__creason(MGUARD_CACHE_EXPLICIT, NULL);
    size_t pos;
    c->busy++;
    model__cunpark(c, &p);
    model__cfinish(&p);
    for (pos = 0; pos < c->nslot; pos++) {
        model_centry *e = c->slot[pos];
        if (!e || e->seq >= bound) continue;
        model__cdrop(e, &why, NULL, &p);
        model__cfinish(&p);
    }
    c->busy--;
}

MODEL_DEF void model__cdestroy_now(model_cache *c)
{
    size_t r;
    model__cdrain(c, UINT64_MAX);
    if (model_cache_count(c)) { fprintf(stderr, "model: destroyed cache not empty\n"); abort(); }
    c->freed = 1;
    for (r = c->nreasons > MGUARD_CACHE_REASONS ? c->nreasons - MGUARD_CACHE_REASONS : 0; r < c->nreasons; r++)
        model__cforget(c, r, NULL);
}

MODEL_DEF void model_cache_destroy(model_cache *c)
{
    if (!model__cache_ok(c) || c->destroying) return;
    c->destroying = 1;
    if (c->busy) return;
    model__cdestroy_now(c);
}

MODEL_DEF void model_cache_clear(model_cache *c)
{
    if (!model__cache_ok(c)) return;
    model__cdrain(c, c->next_seq);
    if (c->destroying && !c->busy) model__cdestroy_now(c);
}

/* A new computing entry for keys, linked: EINVAL for a key being
   destroyed, ENOMEM (fail_next). */
MODEL_DEF model_centry *model__cmake(model_cache *c, const void *const *keys, size_t n, mguard_status *st)
{
    model_centry *e;
    size_t i;
    for (i = 0; i < n; i++) {
        if (!model__find(c->ctx, keys[i]) && model__is_dying(c->ctx, keys[i])) {
            *st = MGUARD_EINVAL;
            return NULL;
        }
    }
    if (model__take_fail(c->ctx)) {
        *st = MGUARD_ENOMEM;
        return NULL;
    }
    e = (model_centry *)calloc(1, sizeof *e);
    if (!e) abort();
    e->cache = c;
    e->nkeys = n;
    e->value = (unsigned char *)calloc(1, c->value_size);
    if (!e->value) abort();
    e->state = MODEL_CE_COMPUTING;
    for (i = 0; i < n; i++) {
        e->keys[i] = keys[i];
        model__clink(c->ctx, e, keys[i], NULL);
    }
    MODEL__PUSH(c->ctx->cents, c->ctx->ncents, e);
    *st = MGUARD_OK;
    return e;
}

/* Store the computing entry e (replacing the tuple's), then evict the
   least recently used while over the bounds, never e. */
MODEL_DEF mguard_status model__cstore(model_cache *c, model_centry *e, model_cpend *p)
{
    model_centry *old;
    mguard_cache_reason why;
    size_t i;
    if (model__take_fail(c->ctx)) return MGUARD_ENOMEM;
    memset(&why, 0, sizeof why);
    old = model__cfind(c, e->keys, e->nkeys);
    if (old) model__cdrop(old, &why, NULL, p);
    if (c->nfree) e->pos = c->freepos[--c->nfree];
    else {
        model_centry *none = NULL;
        e->pos = c->nslot;
        MODEL__PUSH(c->slot, c->nslot, none);
    }
    c->slot[e->pos] = e;
    for (i = 0; i < e->ndeps; i++) (void)model__ensure(c->ctx, e->deps[i].obj);   /* stored: known */
    e->seq = c->next_seq++;
    e->used = ++c->next_use;
    e->state = MODEL_CE_LIVE;
    c->stats.stored++;
    why.cause = MGUARD_CACHE_EVICTION;
    while ((c->capacity && model_cache_count(c) > c->capacity) || (c->max_cost && model__ccost(c) > c->max_cost)) {
        model_centry *lru = NULL;
        for (i = 0; i < c->nslot; i++)
            if (c->slot[i] && (!lru || c->slot[i]->used < lru->used)) lru = c->slot[i];
        if (lru == e) break;
        model__cdrop(lru, &why, NULL, p);
    }
    return MGUARD_OK;
}

MODEL_DEF mguard_status model_cache_set(model_cache *c, const void *const *keys, size_t n, const void *value, size_t cost)
{
    model_cpend p = { NULL, 0 };
    model_centry *e;
    mguard_status st;
    if (!model__cache_ok(c) || !value || c->destroying || !model__ckeys_ok(keys, n)) return MGUARD_EINVAL;
    e = model__cmake(c, keys, n, &st);
    if (!e) return st;
    memcpy(e->value, value, c->value_size);
    e->cost = cost;
    model__cstore(c, e, &p);   /* the one failure point is taken by cmake */
    {
        model_cpend parked = { NULL, 0 };   /* the parked value first */
        model__cunpark(c, &parked);
        model__cfinish(&parked);
    }
    model__cfinish(&p);
    return MGUARD_OK;
}

/* The tuple's value, counted as a hit (and used now) or a miss. */
MODEL_DEF void *model__clookup(model_cache *c, const void *const *keys, size_t n)
{
    model_centry *e = model__cfind(c, keys, n);
    if (!e) {
        c->stats.misses++;
        return NULL;
    }
    c->stats.hits++;
    e->used = ++c->next_use;
    return e->value;
}

MODEL_DEF void *model_cache_get(model_cache *c, const void *const *keys, size_t n)
{
    if (!model__cache_ok(c) || !model__ckeys_ok(keys, n)) return NULL;
    return model__clookup(c, keys, n);
}

/* get, with the value copied to out (untouched on a miss); nothing
   counted for bad input. */
MODEL_DEF mguard_status model_cache_get_copy(model_cache *c, const void *const *keys, size_t n, void *out)
{
    void *v;
    if (!model__cache_ok(c) || !model__ckeys_ok(keys, n) || !out) return MGUARD_EINVAL;
    v = model__clookup(c, keys, n);
    if (!v) return MGUARD_NOT_FOUND;
    memcpy(out, v, c->value_size);
    return MGUARD_OK;
}

MODEL_DEF bool model_cache_contains(const model_cache *c, const void *const *keys, size_t n)
{
    return model__cache_ok(c) && model__ckeys_ok(keys, n) && model__cfind(c, keys, n) != NULL;
}

/* A miss holds the cache (busy) from the first callback on: a destroy
   requested by any callback (the compute, a value destructor) is finished
   when the call returns, and the call answers EINVAL, NULL. */
MODEL_DEF void *model_cache_get_or_compute(model_cache *c, const void *const *keys, size_t n,
                                           mguard_cache_compute_fn compute, void *user, mguard_status *status)
{
    model_cpend p = { NULL, 0 };
    model_centry *e, *now;
    model_cjob job;
    struct model_look look;
    mguard_status st, ignored;
    void *hit, *out = NULL;
    if (!status) status = &ignored;
    *status = MGUARD_EINVAL;
    if (!model__cache_ok(c) || !compute || c->destroying || !model__ckeys_ok(keys, n)) return NULL;
    hit = model__clookup(c, keys, n);
    if (hit) {
        *status = MGUARD_OK;
        return hit;
    }
    c->busy++;
    look.keys = keys;
    look.n = n;
    look.died = false;
    look.next = c->ctx->looks;
    c->ctx->looks = &look;
    model__cunpark(c, &p);
    model__cfinish(&p);
    c->ctx->looks = look.next;
    /* a key destroyed by the parked value's destructor: no compute */
    e = c->destroying || look.died ? NULL : model__cmake(c, keys, n, &st);
    if (!e) {
        if (c->destroying || look.died) st = MGUARD_EINVAL;
    } else {
        job.c = c;
        job.e = e;
        job.running = 1;
        st = compute((mguard_cache_job *)(void *)&job, e->value, user);
        job.running = 0;
        if (c->destroying || st) {
            /* no value, or no cache to hold it: destroyed now */
            if (e->state == MODEL_CE_COMPUTING) model__cunlink(c->ctx, e, NULL);
            if (!st && c->dtor) c->dtor(e->value, c->user);
            model__cfree(e);
        } else if (e->state == MODEL_CE_STALE) {
            c->stats.stale++;
            model__cunpark(c, &p);
            c->parked = e;
            model__cfinish(&p);
            st = MGUARD_NOT_FOUND;
            if (c->parked == e) out = e->value;
        } else if (model__cstore(c, e, &p) != MGUARD_OK) {
            model__cunlink(c->ctx, e, NULL);
            e->state = MODEL_CE_DROPPED;
            e->dtor = c->dtor;
            e->user = c->user;
            model__cpend_push(&p, e);
            model__cfinish(&p);
            st = MGUARD_ENOMEM;
        } else {
            model__cfinish(&p);
            now = model__cfind(c, keys, n);   /* the destructors may have changed c */
            st = now ? MGUARD_OK : MGUARD_NOT_FOUND;
            out = now ? now->value : NULL;
        }
    }
    c->busy--;
    if (c->destroying) {
        out = NULL;
        st = MGUARD_EINVAL;
        if (!c->busy) model__cdestroy_now(c);
    }
    *status = st;
    return out;
}

/* Add (obj, attr) to e's dependencies; covered already: a key, the whole
   object, the same attribute. */
MODEL_DEF mguard_status model__cadd_dep(model_ctx *c, model_centry *e, const void *obj, const char *attr)
{
    size_t k;
    if (model__take_fail(c)) return MGUARD_ENOMEM;
    for (k = 0; k < e->nkeys; k++)
        if (e->keys[k] == obj) return MGUARD_OK;
    for (k = e->nkeys; k < e->ndeps; k++)
        if (e->deps[k].obj == obj && (!e->deps[k].attr || (attr && strcmp(attr, e->deps[k].attr) == 0))) return MGUARD_OK;
    if (!model__find(c, obj) && model__is_dying(c, obj)) return MGUARD_EINVAL;
    model__clink(c, e, obj, attr);
    if (e->state == MODEL_CE_LIVE) (void)model__ensure(c, obj);   /* a stored entry's: known */
    return MGUARD_OK;
}

MODEL_DEF mguard_status model_cache_job_depend(mguard_cache_job *job, const void *obj, const char *attr)
{
    model_cjob *j = (model_cjob *)(void *)job;
    mguard_status st;
    if (!j || !j->running || !obj) return MGUARD_EINVAL;
    if (j->e->state == MODEL_CE_STALE)   /* a dying object is refused all the same */
        return !model__find(j->c->ctx, obj) && model__is_dying(j->c->ctx, obj) ? MGUARD_EINVAL : MGUARD_OK;
    st = model__cadd_dep(j->c->ctx, j->e, obj, attr);
    if (st) {
        /* spoiled: a refused object is remembered as its death */
        mguard_cache_reason why = model__creason(st == MGUARD_EINVAL ? MGUARD_CACHE_DEATH : (mguard_cache_cause)0,
                                                 st == MGUARD_EINVAL ? obj : NULL);
        model__cdrop(j->e, &why, NULL, NULL);
    }
    return st;
}

MODEL_DEF mguard_status model_cache_job_set_cost(mguard_cache_job *job, size_t cost)
{
    model_cjob *j = (model_cjob *)(void *)job;
    if (!j || !j->running) return MGUARD_EINVAL;
    j->e->cost = cost;
    return MGUARD_OK;
}

MODEL_DEF const void *model_cache_job_key(const mguard_cache_job *job, size_t i)
{
    const model_cjob *j = (const model_cjob *)(const void *)job;
    return j && j->running && i < j->e->nkeys ? j->e->keys[i] : NULL;
}

MODEL_DEF mguard_status model_cache_depend(model_cache *c, const void *const *keys, size_t n, const void *obj, const char *attr)
{
    model_centry *e;
    if (!model__cache_ok(c) || !obj || !model__ckeys_ok(keys, n)) return MGUARD_EINVAL;
    e = model__cfind(c, keys, n);
    if (!e) return MGUARD_NOT_FOUND;
    return model__cadd_dep(c->ctx, e, obj, attr);
}

/* take (out: the value copied there, no dropped, no destructor; NULL out: destroyed) */
MODEL_DEF mguard_status model_cache_take(model_cache *c, const void *const *keys, size_t n, void *out)
{
    model_cpend p = { NULL, 0 };
    model_centry *e;
    mguard_cache_reason why = model__creason(MGUARD_CACHE_EXPLICIT, NULL);
    if (!model__cache_ok(c) || !model__ckeys_ok(keys, n)) return MGUARD_EINVAL;
    model__cunpark(c, &p);
    e = model__cfind(c, keys, n);
    if (e) model__cdrop(e, &why, NULL, &p);
    if (e && out) {
        memcpy(out, e->value, c->value_size);
        e->dtor = NULL;
        e->dropped = NULL;
    }
    model__cfinish(&p);
    return e ? MGUARD_OK : MGUARD_NOT_FOUND;
}

typedef struct model_citer { model_cache *c; size_t pos; uint64_t bound; } model_citer;

MODEL_DEF model_citer model_cache_iterate(model_cache *c)
{
    model_citer it;
    it.c = model__cache_ok(c) ? c : NULL;
    it.pos = 0;
    it.bound = it.c ? c->next_seq : 0;
    return it;
}

/* The next entry: positions in order, stored before the walk started. */
MODEL_DEF bool model_cache_next(model_citer *it, const void *const **keys, size_t *nkeys, void **value)
{
    while (it->c && it->pos < it->c->nslot) {
        model_centry *e = it->c->slot[it->pos++];
        if (!e || e->seq >= it->bound) continue;
        *keys = e->keys;
        *nkeys = e->nkeys;
        *value = e->value;
        return true;
    }
    it->c = NULL;
    return false;
}

MODEL_DEF mguard_status model_cache_get_stats(const model_cache *c, mguard_cache_stats *out)
{
    if (!model__cache_ok(c) || !out) return MGUARD_EINVAL;
    *out = c->stats;
    return MGUARD_OK;
}

MODEL_DEF size_t model_cache_format(const model_cache *c, char *buf, size_t cap)
{
    const mguard_cache_stats *s;
    int n;
    if (buf && cap) *buf = '\0';
    if (!model__cache_ok(c)) return 0;
    s = &c->stats;
    n = snprintf(buf, buf ? cap : 0,
                 "%s: %lu entries, %llu hits, %llu misses, %llu stored; dropped: %llu mutation, %llu death, "
                 "%llu eviction, %llu explicit; %llu replaced, %llu stale",
                 c->name, (unsigned long)model_cache_count(c), (unsigned long long)s->hits, (unsigned long long)s->misses,
                 (unsigned long long)s->stored, (unsigned long long)s->mutations, (unsigned long long)s->deaths,
                 (unsigned long long)s->evictions, (unsigned long long)s->explicit_drops,
                 (unsigned long long)s->replaced, (unsigned long long)s->stale);
    return n > 0 ? (size_t)n : 0;
}

MODEL_DEF mguard_status model_cache_last_reason(const model_cache *c, const void *const *keys, size_t n, mguard_cache_reason *out)
{
    size_t i, k;
    model_cser now;
    if (!model__cache_ok(c) || !out || !model__ckeys_ok(keys, n)) return MGUARD_EINVAL;
    for (k = 0; k < n; k++) {   /* the keys' lives now: an unknown key has none a reason names */
        const model_obj *o = model__find(c->ctx, keys[k]);
        if (!o) return MGUARD_NOT_FOUND;
        now.s[k] = o->serial;
    }
    for (i = 0; i < c->nreasons && i < MGUARD_CACHE_REASONS; i++) {
        const mguard_cache_reason *r = &c->reasons[c->nreasons - 1 - i];
        const model_cser *rs = &c->rser[c->nreasons - 1 - i];
        for (k = 0; k < n && (k >= r->nkeys || rs->s[k] == now.s[k]); k++) {}
        if (k == n && model__ckeys_eq(r->keys, r->nkeys, keys, n)) {
            *out = *r;
            return MGUARD_OK;
        }
    }
    return MGUARD_NOT_FOUND;
}

MODEL_DEF const char *model_cache_cause_str(mguard_cache_cause cause)
{
    static const char *const names[5] = { "unknown", "mutation", "death", "eviction", "explicit" };
    return (int)cause >= 1 && (int)cause <= 4 ? names[cause] : names[0];
}

/* "mutation of <obj>[.attr][ at file:line]", "death of <obj>", or the
   cause alone. */
MODEL_DEF size_t model_cache_reason_format(const mguard_cache_reason *r, char *buf, size_t cap)
{
    char line[512];
    int n;
    if (buf && cap) *buf = '\0';
    if (!r) return 0;
    if (r->cause == MGUARD_CACHE_MUTATION || r->cause == MGUARD_CACHE_DEATH) {
        n = snprintf(line, sizeof line, "%s of %p", model_cache_cause_str(r->cause), r->obj);
        if (r->attr) n += snprintf(line + n, sizeof line - (size_t)n, ".%s", r->attr);
        if (r->file) n += snprintf(line + n, sizeof line - (size_t)n, " at %s:%d", r->file, r->line);
    } else {
        n = snprintf(line, sizeof line, "%s", model_cache_cause_str(r->cause));
    }
    if (buf && cap) snprintf(buf, cap, "%s", line);
    return (size_t)n;
}

/* Free every cache's memory (the context's teardown). */
MODEL_DEF void model__cache_free_all(model_ctx *c)
{
    size_t i;
    for (i = 0; i < c->ncaches; i++) {
        free(c->caches[i]->slot);
        free(c->caches[i]->freepos);
        free(c->caches[i]->reasons);
        free(c->caches[i]->rser);
        free(c->caches[i]);
    }
    free(c->caches);
    free(c->cents);
}

/* ---- teardown --------------------------------------------------------- */

/* Destroy every table, newest first (as mguard_ctx_destroy), then free
   everything. Watchers are not called. */
MODEL_DEF void model_destroy(model_ctx *c)
{
    size_t i;
    if (!c) return;
    /* the components go first, as in mguard_ctx_destroy (their tables
       have no value destructors: nothing is called) */
    while (c->nledgers) model_ledger_destroy(c->ledgers[c->nledgers - 1]);
    while (c->ndyns) model_dyn_destroy(c->dyns[c->ndyns - 1]);
    model_scope_destroy(c->scope);
    for (;;) {   /* then the caches, newest first */
        model_cache *newest = NULL;
        for (i = 0; i < c->ncaches; i++)
            if (!c->caches[i]->freed && (!newest || c->caches[i]->order > newest->order)) newest = c->caches[i];
        if (!newest) break;
        model_cache_destroy(newest);
    }
    for (;;) {
        model_weak *newest = NULL;
        for (i = 0; i < c->ntables; i++)
            if (!c->tables[i]->freed && (!newest || c->tables[i]->order > newest->order)) newest = c->tables[i];
        if (!newest) break;
        if (newest->destroying) { fprintf(stderr, "model: ctx destroy met a table mid-destroy\n"); abort(); }
        model_weak_destroy(newest);
    }
    for (i = 0; i < c->ntables; i++) {
        free(c->tables[i]->e);
        free(c->tables[i]);
    }
    free(c->tables);
    model__cache_free_all(c);
    while (c->nobjs) model__drop(c, c->objs[c->nobjs - 1]);
    free(c->objs);
    free(c->frames);
    free(c->dying);
    free(c->ledgers);
    free(c->dyns);
    free(c);
}

#endif
