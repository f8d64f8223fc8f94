/* A reference model of mguard's core, for the differential tests.

   Same contract as mguard.h sections 1-6 (objects, weak tables with value
   destructors, weak refs, trackers and watchers, generation tags), written
   to be obviously correct rather than fast: plain arrays, linear scans,
   one malloc per value, nothing shared with mguard's implementation. The
   callbacks have mguard's own types, so the same callback functions can
   drive both. Every function is static; include this file where needed.

   Semantics the model pins down (each one is a sentence of the contract in
   mguard.h or of issues 2 and 6):
   - An object is known while it is a key in a table, has a tracker, a tag
     or a class mark, or was handed out as a ref or a guard; each time it
     becomes known it gets a new serial. Only mguard_on_destroy forgets a
     pinned (ref or guard) object.
   - Deaths run in two phases: every entry of the object is removed from
     every table (in the order the object entered them), its record is
     forgotten; then its watchers fire (attr NULL, registration order), then
     for each removed entry on_key_death and the value destructor. During
     phase 2 the object cannot become known again.
   - Watchers fire once, in registration order, on the next mutation or
     death; watchers added meanwhile wait; a watcher whose guard died, or
     that was unwatched meanwhile, is skipped. Unwatch matches the guard's
     current life (a dead guard's watchers are already gone).
   - Tables: insertion order; overwrite keeps the position and destroys the
     old value after the new one is stored; clear removes the entries
     present when it starts, one at a time; destroy drains the table and
     refuses new keys meanwhile; a destroy requested while a clear/destroy
     of the same table is walking it is finished by the outermost walk.
   - Iterators visit the first live entry inserted after the last one
     visited: removed entries are never visited, new ones come last.

   Allocation failure: the model never fails by itself. The driver sets
   fail_next before an operation that mguard answered with ENOMEM; the
   operation then checks its arguments as usual and, where mguard may
   allocate, fails with ENOMEM changing nothing.

   Extending it (scope tracker, ledger): add the component's state to
   model_ctx, forget it in model_on_destroy's phase 1 and notify in phase 2,
   the same way the sections below do. */
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

typedef struct model_ref { const void *obj; uint64_t serial; } model_ref;

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
} model_frame;

struct model_ctx {
    model_obj **objs;        /* known objects, any order */
    size_t nobjs;
    uint64_t next_serial;
    long generation;
    model_weak **tables;     /* every table ever created (freed ones kept) */
    size_t ntables;
    uint64_t next_order;
    model_frame **frames;    /* invalidations in progress, innermost last */
    size_t nframes;
    const void **dying;      /* objects in phase 2 of their death */
    size_t ndying;
    int fail_next;           /* the next allocating step fails (driver) */
    int fail_taken;          /* ... and it did */
};

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
    if (!o->ntables && !o->pinned && !o->tracker && !o->tagged && !o->classdyn) model__drop(c, o);
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
    model_ctx *c = (model_ctx *)calloc(1, sizeof *c);
    if (!c) abort();
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

/* Remove entry i, forget t in the key's record, then destroy the value.
   t must not be touched after the destructor (it may destroy t). */
MODEL_DEF void model__remove_at(model_weak *t, size_t i)
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
    if (dtor) dtor(v, user);
    free(v);
}

MODEL_DEF mguard_status model_weak_remove(model_weak *t, const void *key)
{
    long i;
    if (!t || t->freed || !key) return MGUARD_EINVAL;
    i = model__find_entry(t, key);
    if (i < 0) return MGUARD_NOT_FOUND;
    model__remove_at(t, (size_t)i);
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
        model__remove_at(t, i);
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
    MODEL__PUSH(c->frames, c->nframes, &f);
    for (i = 0; i < n; i++) {
        if (!w[i].fn || !model__alive(c, w[i].guard, w[i].guard_serial)) continue;
        w[i].fn(w[i].guard, obj, attr, w[i].user);
    }
    c->nframes--;
}

MODEL_DEF mguard_status model_watch(model_ctx *c, const void *obj, void *guard, mguard_invalidate_fn fn, void *user)
{
    model_obj *o, *g;
    model_watcher w;
    if (!obj || !guard || !fn) return MGUARD_EINVAL;
    if (model__is_dying(c, obj) || model__is_dying(c, guard)) return MGUARD_EINVAL;
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
        if (f->obj != obj) continue;
        for (i = 0; i < f->n; i++) {
            if (f->w[i].fn && f->w[i].guard == guard && g && f->w[i].guard_serial == g->serial) {
                f->w[i].fn = NULL;
                found++;
            }
        }
    }
    return found ? MGUARD_OK : MGUARD_NOT_FOUND;
}

MODEL_DEF void model_on_mutation(model_ctx *c, const void *obj, const char *attr)
{
    model_obj *o;
    model_watcher *w;
    size_t n;
    if (!obj) return;
    o = model__find(c, obj);
    if (!o || !o->tracker) return;
    o->mutations++;
    if (!o->nw) return;
    w = o->w;
    n = o->nw;
    o->w = NULL;
    o->nw = 0;
    model__fire(c, obj, w, n, attr);
    free(w);
}

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
    if (!obj) return r;
    o = model__find(c, obj);
    if (!o) {
        if (model__is_dying(c, obj) || model__take_fail(c)) return r;
        o = model__ensure(c, obj);
    }
    o->pinned = true;
    r.obj = obj;
    r.serial = o->serial;
    return r;
}

MODEL_DEF void *model_ref_get(const model_ctx *c, model_ref r)
{
    if (!r.serial) return NULL;
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

MODEL_DEF bool model_gen_check(const model_ctx *c, const void *obj)
{
    long g = model_gen_get(c, obj);
    return g >= 0 && g == c->generation;
}

MODEL_DEF long model_gen_current(const model_ctx *c) { return c->generation; }
MODEL_DEF long model_gen_advance(model_ctx *c) { return ++c->generation; }

MODEL_DEF bool model_gen_is_class_dynamic(const model_ctx *c, const void *cls)
{
    const model_obj *o = cls ? model__find(c, cls) : NULL;
    return o && o->classdyn;
}

MODEL_DEF bool model_gen_is_dynamic(const model_ctx *c, const void *obj, const void *cls)
{
    return model_gen_is_class_dynamic(c, cls) || model_gen_check(c, obj);
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
    if (!obj) return;
    o = model__find(c, obj);
    if (!o) return;
    /* phase 1: forget obj everywhere */
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
    w = o->w;
    nw = o->nw;
    o->w = NULL;
    o->nw = 0;
    model__drop(c, o);
    /* phase 2: call out */
    MODEL__PUSH(c->dying, c->ndying, obj);
    if (nw) model__fire(c, obj, w, nw, NULL);
    free(w);
    for (i = 0; i < np; i++) {
        if (p[i].on_death) p[i].on_death(obj, p[i].value, p[i].user);
        if (p[i].dtor) p[i].dtor(p[i].value, p[i].user);
        free(p[i].value);
    }
    c->ndying--;
    free(p);
}

/* ---- teardown --------------------------------------------------------- */

/* Destroy every table, newest first (as mguard_ctx_destroy), then free
   everything. Watchers are not called. */
MODEL_DEF void model_destroy(model_ctx *c)
{
    size_t i;
    if (!c) return;
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
    while (c->nobjs) model__drop(c, c->objs[c->nobjs - 1]);
    free(c->objs);
    free(c->frames);
    free(c->dying);
    free(c);
}

#endif
