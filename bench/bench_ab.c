/* bench_ab.c - the hot paths of mguard.h, one side of `make bench-ab`.
   This file is compiled twice, each time against another copy of mguard.h
   (-DAB_SIDE=old with BASE's header, -DAB_SIDE=new with the current one),
   with MGUARD_STATIC so that the two implementations live side by side in
   one program; bench/bench_ab_main.c runs their samples in turn
   (docs/performance.md, "Old header against new").

   The file calls only functions whose names both headers declare. A
   function that was renamed is called through an ab_ name that bench/ab.py
   maps, per header, to whichever name that header declares (its table
   AB_NAMES; the generated bench_ab_names.h sits beside each copy of the
   header). AB_HAVE_x is 0 when neither name is there: the rows that need
   x then give NAN, and the table says which header lacks them.

   Every timed loop checks its results, as in bench.c. The loops repeat
   the mguard loops of bench.c on purpose: these must build against any
   past header and twice in one program, with the aliases above and no
   GLib, while bench.c follows the current API with its peers; sharing
   them would make every rename of mguard.h a change to `make bench` and
   move its published figures. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define STBDS_NO_SHORT_NAMES
#define MGUARD_STATIC
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#include "bench_ab_names.h"
#include "bench_ab.h"

#define min_ns ab_min_ns
#define AB_CAT(a, b) a##b
#define AB_XCAT(a, b) AB_CAT(a, b)

static void fail(const char *what)
{
    fprintf(stderr, "bench_ab: WRONG RESULT: %s\n", what);
    exit(1);
}
#define CHECK(cond, what) do { if (!(cond)) fail(what); } while (0)

/* The thread's CPU time by default (main sets ab_clock): time spent
   descheduled by other load is not counted. Reading it is a system call
   (about 0.6 us here), hence the batches of PASSES. */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(ab_clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- the fixture ------------------------------------------------------------
   The keys (made by main, shared with the other side), a context holding
   one table with every key (value: the key's index + 1) and a long-lived
   context where fresh tables come and go. */
typedef struct fx {
    size_t n;
    char *block;
    void **keys, **ins, **look, **miss;
    long sum;
    mguard_ctx *ctx, *live;
    mguard_weak *mt;
} fx;

static mguard_ctx *new_ctx(void)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    d.quiet = true;
    return mguard_ctx_create(&d);
}
static mguard_weak *new_table(mguard_ctx *ctx)
{
    mguard_weak_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    return mguard_weak_create(ctx, &d);
}
#define KEY_VALUE(f, p) ((long)(((char *)(p) - (f)->block) / 32) + 1)

static void fill(fx *f, mguard_weak *t, void **keys)
{
    size_t i;
    for (i = 0; i < f->n; i++) {
        long v = KEY_VALUE(f, keys[i]);
        if (mguard_weak_set(t, keys[i], &v) != MGUARD_OK) fail("weak set");
    }
}

static void *fixture_new(const ab_keys *k)
{
    fx *f = (fx *)calloc(1, sizeof *f);
    CHECK(f != NULL, "fixture");
    f->n = k->n;
    f->block = k->block;
    f->keys = k->keys;
    f->ins = k->ins;
    f->look = k->look;
    f->miss = k->miss;
    f->sum = k->sum;
    f->live = new_ctx();
    f->ctx = new_ctx();
    f->mt = new_table(f->ctx);
    fill(f, f->mt, f->ins);
    return f;
}
static void fixture_free(void *p)
{
    fx *f = (fx *)p;
    mguard_ctx_destroy(f->ctx);
    mguard_ctx_destroy(f->live);
    free(f);
}

/* Repeat a statement doing f->n operations until min_ns have passed and
   store ns per operation in out. The clock is read after batches of
   passes that double until one takes a tenth of min_ns. */
#define PASSES(f, out, ...) do {                                             \
        double t0_ = now_ns(), t_ = t0_, t1_;                                \
        long passes_ = 0, batch_ = 1, b_;                                    \
        do {                                                                 \
            for (b_ = 0; b_ < batch_; b_++) { __VA_ARGS__; }                 \
            passes_ += batch_;                                               \
            t1_ = now_ns();                                                  \
            if (t1_ - t_ < min_ns / 10) batch_ *= 2;                         \
            t_ = t1_;                                                        \
        } while (t_ - t0_ < min_ns);                                         \
        (out) = (t_ - t0_) / ((double)passes_ * (double)(f)->n);             \
    } while (0)
#define TIMED_PASSES(f, ...) do { double r_; PASSES(f, r_, __VA_ARGS__); return r_; } while (0)
/* Untimed setup, timed part, untimed teardown, until min_ns were timed. */
#define CYCLES(f, setup, timed, teardown) do {                               \
        double tot_ = 0; long cyc_ = 0;                                      \
        do {                                                                 \
            double t0_;                                                      \
            setup;                                                           \
            t0_ = now_ns();                                                  \
            timed;                                                           \
            tot_ += now_ns() - t0_;                                          \
            teardown;                                                        \
            cyc_++;                                                          \
        } while (tot_ < min_ns);                                             \
        return tot_ / ((double)cyc_ * (double)(f)->n);                       \
    } while (0)

/* ---- weak tables (sized rows) ----------------------------------------------- */
static double get_hit(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        long s = 0;
        for (i = 0; i < f->n; i++) {
            const long *v = (const long *)mguard_weak_get(f->mt, f->look[i]);
            if (!v) fail("get hit");
            s += *v;
        }
        CHECK(s == f->sum, "get hit sum");
    });
}
static double get_miss(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++)
            if (mguard_weak_get(f->mt, f->miss[i])) fail("get miss");
    });
}
/* A fresh table in the long-lived context: every key is new to the table
   and to the context's registry. */
static double set_new(fx *f, int arg)
{
    mguard_weak *t = NULL;
    (void)arg;
    CYCLES(f, { t = new_table(f->live); }, fill(f, t, f->ins),
           { CHECK(mguard_weak_count(t) == f->n, "set new count"); mguard_weak_destroy(t); });
}
static double overwrite(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++) {
            long v = KEY_VALUE(f, f->look[i]);
            if (mguard_weak_set(f->mt, f->look[i], &v) != MGUARD_OK) fail("overwrite");
        }
        CHECK(mguard_weak_count(f->mt) == f->n, "overwrite count");
    });
}
static double weak_remove(fx *f, int arg)
{
    mguard_weak *t = NULL;
    size_t i;
    (void)arg;
    CYCLES(f, { t = new_table(f->live); fill(f, t, f->ins); },
           { for (i = 0; i < f->n; i++) if (ab_weak_remove(t, f->look[i]) != MGUARD_OK) fail("remove"); },
           { CHECK(mguard_weak_count(t) == 0, "remove count"); mguard_weak_destroy(t); });
}
static double iterate(fx *f, int arg)
{
    (void)arg;
    TIMED_PASSES(f, {
        long s = 0;
        mguard_weak_iter it = mguard_weak_iterate(f->mt);
        while (mguard_weak_next(&it)) s += *(const long *)it.value;
        CHECK(s == f->sum, "iterate sum");
    });
}
/* on_mutation of addresses the context never saw (its registry holds n). */
static double mut_unwatched(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, { for (i = 0; i < f->n; i++) mguard_on_mutation(f->ctx, f->miss[i], "x"); });
}

/* ---- lifetimes, refs, trackers, generations (fixed rows, FIX_N objects) ----- */
#define FIX_N 10000

/* Each object a key in arg tables; timed: the death of every object. */
static double death(fx *f, int arg)
{
    mguard_ctx *c = NULL;
    mguard_weak *t[16];
    size_t i;
    int j;
    CYCLES(f, { c = new_ctx(); for (j = 0; j < arg; j++) { t[j] = new_table(c); fill(f, t[j], f->keys); } },
           { for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->ins[i]); },
           {
               for (j = 0; j < arg; j++) CHECK(mguard_weak_count(t[j]) == 0, "death left an entry");
               mguard_ctx_destroy(c);
           });
}
static double ref_make(fx *f, int arg)
{
    mguard_ctx *c = NULL;
    mguard_ref *r = (mguard_ref *)malloc(f->n * sizeof *r);
    size_t i;
    (void)arg;
    CYCLES(f, { c = new_ctx(); },
           { for (i = 0; i < f->n; i++) r[i] = mguard_ref_make(c, f->ins[i]); },
           {
               for (i = 0; i < f->n; i++) CHECK(mguard_ref_get(c, r[i]) == f->ins[i], "ref make");
               mguard_ctx_destroy(c);
               if (tot_ >= min_ns) free(r);
           });
}
/* arg 0: every object alive; 1: every object destroyed (the ref reads NULL). */
static double ref_get(fx *f, int arg)
{
    mguard_ctx *c = new_ctx();
    mguard_ref *r = (mguard_ref *)malloc(f->n * sizeof *r);
    size_t i;
    double ns;
    for (i = 0; i < f->n; i++) r[i] = mguard_ref_make(c, f->keys[i]);
    if (arg) for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->keys[i]);
    PASSES(f, ns, {
        for (i = 0; i < f->n; i++) {
            size_t j = (i * 7919) % f->n;   /* a fixed scattered order */
            void *p = mguard_ref_get(c, r[j]);
            if (arg ? p != NULL : p != f->keys[j]) fail("ref get");
        }
    });
    mguard_ctx_destroy(c);
    free(r);
    return ns;
}

static long fired;
static void on_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
    fired++;
}
static char guard;
/* arg 0: timed, watch on objects whose tracker exists (the re-watch after
   an invalidation); arg 1: timed, the mutation that fires that watcher. */
static double watch_mut(fx *f, int arg)
{
    mguard_ctx *c = new_ctx();
    size_t i;
    double t0, tot = 0;
    long cyc = 0;
    for (i = 0; i < f->n; i++) mguard_watch(c, f->keys[i], &guard, on_invalidate, NULL);
    for (i = 0; i < f->n; i++) mguard_on_mutation(c, f->keys[i], "x");
    do {
        t0 = now_ns();
        for (i = 0; i < f->n; i++)
            if (mguard_watch(c, f->ins[i], &guard, on_invalidate, NULL) != MGUARD_OK) fail("watch");
        if (arg == 0) tot += now_ns() - t0;
        fired = 0;
        t0 = now_ns();
        for (i = 0; i < f->n; i++) mguard_on_mutation(c, f->look[i], "x");
        if (arg == 1) tot += now_ns() - t0;
        CHECK(fired == (long)f->n, "watchers fired");
        cyc++;
    } while (tot < min_ns);
    mguard_ctx_destroy(c);
    return tot / ((double)cyc * (double)f->n);
}

static double gen_tag(fx *f, int arg)
{
    mguard_ctx *c = NULL;
    size_t i;
    (void)arg;
    CYCLES(f, { c = new_ctx(); mguard_gen_advance(c); },
           { for (i = 0; i < f->n; i++) if (mguard_gen_tag(c, f->ins[i]) != MGUARD_OK) fail("gen tag"); },
           { mguard_ctx_destroy(c); });
}
static double gen_is_current(fx *f, int arg)
{
#if AB_HAVE_gen_is_current
    mguard_ctx *c = new_ctx();
    size_t i;
    double ns;
    (void)arg;
    mguard_gen_advance(c);
    for (i = 0; i < f->n; i++) mguard_gen_tag(c, f->keys[i]);
    PASSES(f, ns, {
        for (i = 0; i < f->n; i++) if (!ab_gen_is_current(c, f->ins[i])) fail("gen is current");
    });
    mguard_ctx_destroy(c);
    return ns;
#else
    (void)f; (void)arg;
    return NAN;
#endif
}

/* ---- dynamism: 64 paths, each seen with two shapes (dim 1 varies) ---------- */
#define DYN_PATHS 64
static char dyn_path[DYN_PATHS][16];
static mguard_dyn *dyn_setup(mguard_ctx *c)
{
    mguard_dyn *d = mguard_dyn_create(c);
    int p;
    CHECK(d != NULL, "dyn create");
    for (p = 0; p < DYN_PATHS; p++) {
        int64_t a[2] = { 8, 3 }, b[2] = { 8, 5 };
        snprintf(dyn_path[p], sizeof dyn_path[p], "L.x%d", p);
        CHECK(mguard_dyn_observe(d, dyn_path[p], a, 2) == MGUARD_OK, "dyn observe");
        CHECK(mguard_dyn_observe(d, dyn_path[p], b, 2) == MGUARD_OK, "dyn observe");
    }
    return d;
}
static double dyn_observe(fx *f, int arg)
{
    mguard_ctx *c = new_ctx();
    mguard_dyn *d = dyn_setup(c);
    size_t i;
    double ns;
    (void)arg;
    PASSES(f, ns, {
        for (i = 0; i < f->n; i++) {
            int64_t s[2] = { 8, (int64_t)(i & 7) };
            if (mguard_dyn_observe(d, dyn_path[i % DYN_PATHS], s, 2) != MGUARD_OK) fail("dyn observe");
        }
    });
    mguard_ctx_destroy(c);
    return ns;
}
/* Headers without a varies function ask mguard_dyn_dims (rank, flags). */
#if !AB_HAVE_dyn_varies
static bool ab_dyn_varies(const mguard_dyn *d, const char *path, size_t dim)
{
    bool v[2];
    return mguard_dyn_dims(d, path, NULL, v, dim + 1) && v[dim];
}
#endif
static double dyn_varies(fx *f, int arg)
{
    mguard_ctx *c = new_ctx();
    mguard_dyn *d = dyn_setup(c);
    size_t i;
    double ns;
    (void)arg;
    PASSES(f, ns, {
        for (i = 0; i < f->n; i++)
            if (ab_dyn_varies(d, dyn_path[i % DYN_PATHS], i & 1) != (bool)(i & 1)) fail("dyn varies");
    });
    mguard_ctx_destroy(c);
    return ns;
}

/* ---- scopes: with depth - 1 named frames open, enter and exit one more ----- */
static char scope_comps[16];
static double scope_enter_exit(fx *f, int depth)
{
    mguard_ctx *c = new_ctx();
    mguard_scope *s = mguard_scope_create(c, NULL);
    const void *comp = &scope_comps[depth - 1];
    char name[32];
    size_t i;
    double ns;
    int k;
    CHECK(s != NULL, "scope create");
    for (k = 0; k < 16; k++) {
        snprintf(name, sizeof name, "Net.c%d", k);
        CHECK(mguard_scope_set_name(s, &scope_comps[k], name) == MGUARD_OK, "scope name");
    }
    for (k = 0; k < depth - 1; k++) CHECK(mguard_scope_enter(s, &scope_comps[k]) == MGUARD_OK, "scope enter");
    PASSES(f, ns, {
        for (i = 0; i < f->n; i++)
            if (mguard_scope_enter(s, comp) != MGUARD_OK || mguard_scope_exit(s, comp) != MGUARD_OK) fail("scope enter/exit");
    });
    mguard_ctx_destroy(c);
    return ns;
}

/* ---- ledger: FIX_N objects, even ones EXISTING, odd ones NEW --------------- */
static mguard_ledger *ledger_tracked(fx *f, mguard_ctx *c)
{
    mguard_ledger *L = mguard_ledger_create(c, NULL);
    size_t i;
    CHECK(L != NULL, "ledger create");
    for (i = 0; i < f->n; i++)
        CHECK((i % 2 ? ab_ledger_track_new(L, f->keys[i])
                     : ab_ledger_track_existing(L, f->keys[i], "L")) == MGUARD_OK, "ledger track");
    return L;
}
static void ledger_store_all(fx *f, mguard_ledger *L)
{
    size_t i;
    for (i = 0; i < f->n; i++)
        if (mguard_ledger_store_attr(L, f->ins[i], "attr", f->ins[i]) != MGUARD_OK) fail("ledger store");
}
/* Every object tracked with one write (get and its entry: in every header). */
static int ledger_all_written(fx *f, const mguard_ledger *L)
{
    size_t i;
    for (i = 0; i < f->n; i++) {
        mguard_ledger_entry e;
        if (mguard_ledger_get(L, f->ins[i], &e) != MGUARD_OK || e.writes != 1) return 0;
    }
    return 1;
}
/* arg 0: a first write of each object; 1: an overwrite. */
static double ledger_store(fx *f, int arg)
{
    mguard_ctx *c = new_ctx();
    mguard_ledger *L = NULL;
    CYCLES(f, { L = ledger_tracked(f, c); if (arg) ledger_store_all(f, L); },
           ledger_store_all(f, L),
           { CHECK(ledger_all_written(f, L), "ledger count"); mguard_ledger_destroy(L);
             if (tot_ >= min_ns) mguard_ctx_destroy(c); });
}
static double ledger_load(fx *f, int arg)
{
    mguard_ctx *c = new_ctx();
    mguard_ledger *L = ledger_tracked(f, c);
    size_t i;
    double ns;
    (void)arg;
    ledger_store_all(f, L);
    PASSES(f, ns, {
        for (i = 0; i < f->n; i++) {
            void *v = NULL;
            if (ab_ledger_pending(L, f->look[i], "attr", &v) != MGUARD_OK || v != f->look[i]) fail("ledger load");
        }
    });
    mguard_ctx_destroy(c);
    return ns;
}
static double ledger_clone(fx *f, int arg)
{
    mguard_ctx *c = new_ctx();
    mguard_ledger *L = ledger_tracked(f, c), *k = NULL;
    (void)arg;
    ledger_store_all(f, L);
    CYCLES(f, { ; }, { k = mguard_ledger_clone(L); },
           { CHECK(k && ledger_all_written(f, k), "ledger clone"); mguard_ledger_destroy(k);
             if (tot_ >= min_ns) mguard_ctx_destroy(c); });
}

/* ---- the rows ---------------------------------------------------------------
   n: the fixture's size. Keep the ids stable: tables of different runs are
   compared by them. */
typedef double (*sample_fn)(fx *f, int arg);
typedef struct row { ab_row r; sample_fn fn; int arg; } row;
static const row rows[] = {
    { { "get_hit_1k",      "weak get, hit (1K keys)",          1000 },   get_hit, 0 },
    { { "get_miss_1k",     "weak get, miss (1K keys)",         1000 },   get_miss, 0 },
    { { "set_new_1k",      "weak set, new key (1K keys)",      1000 },   set_new, 0 },
    { { "overwrite_1k",    "weak set, overwrite (1K keys)",    1000 },   overwrite, 0 },
    { { "remove_1k",       "weak remove (1K keys)",            1000 },   weak_remove, 0 },
    { { "iterate_1k",      "weak iterate, per entry (1K)",     1000 },   iterate, 0 },
    { { "get_hit_100k",    "weak get, hit (100K keys)",        100000 }, get_hit, 0 },
    { { "get_miss_100k",   "weak get, miss (100K keys)",       100000 }, get_miss, 0 },
    { { "set_new_100k",    "weak set, new key (100K keys)",    100000 }, set_new, 0 },
    { { "overwrite_100k",  "weak set, overwrite (100K keys)",  100000 }, overwrite, 0 },
    { { "remove_100k",     "weak remove (100K keys)",          100000 }, weak_remove, 0 },
    { { "iterate_100k",    "weak iterate, per entry (100K)",   100000 }, iterate, 0 },
    { { "mut_unwatched",   "on_mutation, unknown (100K reg.)", 100000 }, mut_unwatched, 0 },
    { { "death_t1",        "on_destroy, key in 1 table",       FIX_N },  death, 1 },
    { { "death_t4",        "on_destroy, key in 4 tables",      FIX_N },  death, 4 },
    { { "death_t16",       "on_destroy, key in 16 tables",     FIX_N },  death, 16 },
    { { "ref_make",        "ref make",                         FIX_N },  ref_make, 0 },
    { { "ref_get_alive",   "ref get, alive",                   FIX_N },  ref_get, 0 },
    { { "ref_get_dead",    "ref get, dead",                    FIX_N },  ref_get, 1 },
    { { "watch",           "watch (tracker exists)",           FIX_N },  watch_mut, 0 },
    { { "mut_w1",          "on_mutation, 1 watcher",           FIX_N },  watch_mut, 1 },
    { { "gen_tag",         "gen tag",                          FIX_N },  gen_tag, 0 },
    { { "gen_is_current",  "gen is current",                   FIX_N },  gen_is_current, 0 },
    { { "dyn_observe",     "dyn observe, rank 2",              FIX_N },  dyn_observe, 0 },
    { { "dyn_varies",      "dyn varies",                       FIX_N },  dyn_varies, 0 },
    { { "scope_d1",        "scope enter+exit, depth 1",        FIX_N },  scope_enter_exit, 1 },
    { { "scope_d16",       "scope enter+exit, depth 16",       FIX_N },  scope_enter_exit, 16 },
    { { "ledger_store",    "ledger store, first write",        FIX_N },  ledger_store, 0 },
    { { "ledger_overwrite", "ledger store, overwrite",         FIX_N },  ledger_store, 1 },
    { { "ledger_load",     "ledger load",                      FIX_N },  ledger_load, 0 },
    { { "ledger_clone",    "ledger clone, per object",         FIX_N },  ledger_clone, 0 },
};
#define NROWS (sizeof rows / sizeof rows[0])

static const ab_row *row_info(size_t i) { return &rows[i].r; }
static double sample(void *f, size_t i) { return rows[i].fn((fx *)f, rows[i].arg); }

const ab_side AB_XCAT(ab_side_, AB_SIDE) = {
    MGUARD_VERSION_STRING, NROWS, row_info, fixture_new, fixture_free, sample
};

