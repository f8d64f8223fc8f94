/* bench.c - mguard.h against the peers a C or C++ program would pick
   instead, in one run on the same keys: raw stb_ds (the floor mguard is
   built on), GLib (GHashTable + g_object_weak_ref, g_object_add_weak_pointer,
   GWeakRef, signals, qdata, GMutex), Abseil's absl::flat_hash_map
   (bench/peer_absl.cc) and Python 3 (weakref.WeakKeyDictionary and a
   pure-Python copy of the reference's ExactWeakKeyDictionary /
   MutationTracker / GenerationTracker, bench/bench_py.py, a co-process).

   For each row, a round takes one sample of every system that has the row,
   Python included, in a fresh random order; a sample repeats its pass until
   it has run for at least 20 ms. Every sample is written to the TSV;
   bench/tsv2md.py prints the table (medians, and ratios taken per round
   with their min-max) and the medians the charts are drawn from. Lookups go
   over the keys in a random order different from the insertion order.
   Every measured loop checks its own results (a lookup that misses where
   it should hit fails the run), so a fast wrong answer can't pass.

   Usage: bench [--full|--quick] [--no-py] [--py SCRIPT] [--tsv FILE] [--only ID]
                [--rows ID,ID...] [--sys S[,S...]] [--max-n N] [--ir] [--ir-n N]
                [--mem-only]
     --full      11 samples per figure, 5 at 1M keys (also BENCH_FULL=1)
     --only ID   run only the rows whose id contains ID (profiling)
     --rows L    run only the rows whose id is in the comma-separated list L
                 (no memory rows; `make bench-targets` uses it)
     --sys S     run only the systems in S, a comma-separated list of
                 mguard, stbds, glib, absl, py_wkd, py_ref (with --ir: the
                 systems of the weak-table rows)
     --max-n N   run the sized rows only up to N keys (profiling)
     --ir        run each core row a fixed number of times with no timing,
                 for `valgrind --tool=callgrind` (see `make bench-ir` and,
                 with the cache simulation, `make bench-cache`)
     --ir-n N    the weak-table rows of --ir at N keys (default 100000)
     --mem-only  only bytes per entry (deterministic: no samples)
     --quick     3 samples per figure, up to 100K keys (also BENCH_QUICK=1)

   Rows live in the table `rows[]` below: one line per operation, one
   sample function per C system. To add a capability, write its sample
   functions and add a line (and, for Python, a function in bench_py.py). */
#define _GNU_SOURCE
#include <glib-object.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* stb_ds with a byte-counting allocator, so its memory per entry can be
   measured the same way as mguard's. */
static long long stb_live_bytes;
static void *bench_stb_realloc(void *p, size_t n);
static void bench_stb_free(void *p);
#define STBDS_REALLOC(c, p, s) bench_stb_realloc((p), (s))
#define STBDS_FREE(c, p) bench_stb_free(p)
#define STB_DS_IMPLEMENTATION
#define STBDS_NO_SHORT_NAMES
#include "stb_ds.h"
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

/* Abseil's absl::flat_hash_map<const void *, long> (bench/peer_absl.cc):
   each call is a whole pass over n keys, inlined on the C++ side. */
void *absl_map_new(void);
void absl_map_free(void *m);
size_t absl_map_size(const void *m);
long long absl_live_bytes(void);
long absl_get_hit(const void *m, void *const *keys, size_t n);
size_t absl_get_miss(const void *m, void *const *keys, size_t n);
size_t absl_set(void *m, void *const *keys, size_t n, size_t off);
size_t absl_remove(void *m, void *const *keys, size_t n);
long absl_iterate(const void *m);

typedef union bench_hdr { size_t size; long double a_; void *p_; } bench_hdr;
static void *bench_stb_realloc(void *p, size_t n)
{
    bench_hdr *h = p ? (bench_hdr *)p - 1 : NULL;
    long long old = h ? (long long)h->size : 0;
    bench_hdr *nh = (bench_hdr *)realloc(h, sizeof *nh + n);
    if (!nh) return NULL;
    nh->size = n;
    stb_live_bytes += (long long)n - old;
    return nh + 1;
}
static void bench_stb_free(void *p)
{
    if (!p) return;
    stb_live_bytes -= (long long)((bench_hdr *)p - 1)->size;
    free((bench_hdr *)p - 1);
}

/* ---- systems, options, results ----------------------------------------- */

enum { SYS_MG, SYS_STB, SYS_GLIB, SYS_ABSL, NSYS_C, SYS_PYWKD = NSYS_C, SYS_PYREF, NSYS };
static const char *sys_id[NSYS] = { "mguard", "stbds", "glib", "absl", "py_wkd", "py_ref" };

static struct {
    int full;
    int samples;          /* samples per figure (median taken) */
    int samples_big;      /* at 1M keys */
    double min_ns;        /* minimum duration of one sample */
    const char *only;
    const char *rows;     /* run only these rows (comma-separated ids) */
    const char *sys;      /* run only these systems (comma-separated) */
    unsigned long max_n;  /* skip sized rows above this key count */
    const char *py;
    const char *tsv;
    int ir;
    size_t ir_n;    /* keys of the weak-table rows of --ir */
    int quick;
    int mem_only;   /* only the memory rows (deterministic: no samples) */
} opt;

#define MAXRES 256
#define MAXSAMP 32
typedef struct result {
    const char *id;
    const char *label;
    size_t n;
    int nsamp;
    double ns[NSYS];              /* median */
    double smp[NSYS][MAXSAMP];    /* every sample, in the order of the rounds */
} result;
static result results[MAXRES];
static int nresults;

static result *result_for(const char *id, const char *label, size_t n)
{
    int i, s;
    for (i = 0; i < nresults; i++)
        if (results[i].n == n && strcmp(results[i].id, id) == 0) return &results[i];
    if (nresults == MAXRES) { fprintf(stderr, "bench: too many results\n"); exit(2); }
    results[nresults].id = id;
    results[nresults].label = label;
    results[nresults].n = n;
    for (s = 0; s < NSYS; s++) results[nresults].ns[s] = NAN;
    return &results[nresults++];
}

static void fail(const char *what)
{
    fprintf(stderr, "bench: WRONG RESULT: %s\n", what);
    exit(1);
}
#define CHECK(cond, what) do { if (!(cond)) fail(what); } while (0)
static size_t mg_objects(mguard_ctx *c)
{
    mguard_ctx_stats st;
    return mguard_ctx_get_stats(c, &st) == MGUARD_OK ? st.objects : 0;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static void shuffle(void **a, size_t n)
{
    size_t i;
    for (i = n; i > 1; i--) {
        size_t j = (size_t)(rng() % i);
        void *t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* 1 when `item` is in the comma-separated `list` (a NULL list holds all). */
static int in_list(const char *list, const char *item)
{
    size_t n = strlen(item);
    const char *p = list;
    if (!list) return 1;
    while (*p) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, item, n) == 0) return 1;
        p += k + (p[k] == ',');
    }
    return 0;
}
static int sys_on(int sy) { return in_list(opt.sys, sys_id[sy]); }

/* ---- key objects: GObjects with a "mutated" signal --------------------- */

typedef struct BenchObj { GObject parent; long id; } BenchObj;
typedef struct BenchObjClass { GObjectClass parent; } BenchObjClass;
static GType bench_obj_get_type(void);
G_DEFINE_TYPE(BenchObj, bench_obj, G_TYPE_OBJECT)
static guint sig_mutated;
static void bench_obj_class_init(BenchObjClass *c)
{
    /* NULL marshaller: GLib picks its generic one and keeps its fast path
       for a signal with one handler (an explicit g_cclosure_marshal_*
       disables it; issue 16 measured about 160 ns against 115 per
       one-handler emit). */
    sig_mutated = g_signal_new("mutated", G_TYPE_FROM_CLASS(c), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                               NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
}
static void bench_obj_init(BenchObj *o) { o->id = 0; }

static void **new_objs(size_t n)
{
    void **a = (void **)malloc(n * sizeof *a);
    size_t i;
    for (i = 0; i < n; i++) {
        BenchObj *o = (BenchObj *)g_object_new(bench_obj_get_type(), NULL);
        o->id = (long)i + 1;
        a[i] = o;
    }
    return a;
}
static void free_objs(void **a, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) g_object_unref(a[i]);
    free(a);
}
#define OBJ_ID(p) (((BenchObj *)(p))->id)

/* ---- the GLib weak table: GHashTable + g_object_weak_ref ---------------
   The way a GLib program gets a weak-keyed table today: a weak-ref notify
   per (key, table) removes the entry when the key is disposed. */
static void gl_key_died(gpointer table, GObject *where)
{
    g_hash_table_remove((GHashTable *)table, where);
}
static GHashTable *gl_new(void) { return g_hash_table_new(g_direct_hash, g_direct_equal); }
static inline void gl_set(GHashTable *t, void *k, long v)
{
    if (g_hash_table_insert(t, k, (gpointer)(intptr_t)v)) g_object_weak_ref((GObject *)k, gl_key_died, t);
}
static inline int glw_remove(GHashTable *t, void *k)
{
    if (!g_hash_table_remove(t, k)) return 0;
    g_object_weak_unref((GObject *)k, gl_key_died, t);
    return 1;
}
static void gl_free(GHashTable *t)
{
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, t);
    while (g_hash_table_iter_next(&it, &k, &v)) g_object_weak_unref((GObject *)k, gl_key_died, t);
    g_hash_table_destroy(t);
}

/* ---- stb_ds map on pointer keys ---------------------------------------- */
typedef struct stb_kv { void *key; long value; } stb_kv;

/* ---- mguard helpers ---------------------------------------------------- */
static mguard_ctx *mg_ctx(void)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    d.quiet = true;
    return mguard_ctx_create(&d);
}
/* A table of long values, with a value destructor or none. */
static mguard_weak *mg_table_d(mguard_ctx *ctx, mguard_value_dtor dtor)
{
    mguard_weak_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.value_dtor = dtor;
    return mguard_weak_create(ctx, &d);
}
static mguard_weak *mg_table(mguard_ctx *ctx) { return mg_table_d(ctx, NULL); }

/* ---- the fixture --------------------------------------------------------
   For a sized row: n key objects, the same keys in two random orders
   (insertion, lookup), n other addresses that are never keys, and one
   steady table per system holding every key (value = the key's id). */
typedef struct fx {
    size_t n;
    void **keys;        /* creation order */
    void **ins;         /* insertion order */
    void **look;        /* lookup order */
    void **miss;        /* never inserted */
    char *missblock;
    long sum;           /* sum of every key's value: n(n+1)/2 */
    mguard_ctx *ctx;
    mguard_weak *mt;
    mguard_ctx *live;   /* a long-lived context with no steady table: fresh
                           tables come and go in it, as in a running program */
    stb_kv *hm;
    GHashTable *gt;
    void *am;           /* absl::flat_hash_map */
} fx;

/* One untimed read of every entry of the steady tables: the first pass over
   a table just filled runs slower (the fill's dirty lines are written back as
   it evicts them), and at 1M keys a sample is a single pass. */
static void fx_warm(fx *f)
{
    size_t i;
    long s = 0;
    for (i = 0; i < f->n; i++) {
        s += *(const long *)mguard_weak_get(f->mt, f->look[i]);
        if (f->hm) s += f->hm[stbds_hmgeti(f->hm, f->look[i])].value;
        if (f->gt) s += (long)(intptr_t)g_hash_table_lookup(f->gt, f->look[i]);
    }
    if (f->am) s += absl_get_hit(f->am, f->look, f->n);
    CHECK(s != 0, "fixture warm-up");
}

static void fx_init(fx *f, size_t n, int steady)
{
    size_t i;
    memset(f, 0, sizeof *f);
    f->n = n;
    f->keys = new_objs(n);
    f->ins = (void **)malloc(n * sizeof(void *));
    f->look = (void **)malloc(n * sizeof(void *));
    f->miss = (void **)malloc(n * sizeof(void *));
    f->missblock = (char *)malloc(n * 32);
    memcpy(f->ins, f->keys, n * sizeof(void *));
    memcpy(f->look, f->keys, n * sizeof(void *));
    shuffle(f->ins, n);
    shuffle(f->look, n);
    for (i = 0; i < n; i++) f->miss[i] = f->missblock + 32 * i;
    shuffle(f->miss, n);
    f->sum = (long)n * ((long)n + 1) / 2;
    f->live = mg_ctx();
    if (!steady) return;
    f->ctx = mg_ctx();
    f->mt = mg_table(f->ctx);
    /* the peers' steady tables only for the systems selected (--sys) */
    if (sys_on(SYS_GLIB)) f->gt = gl_new();
    for (i = 0; i < n; i++) {
        long v = OBJ_ID(f->ins[i]);
        CHECK(mguard_weak_set(f->mt, f->ins[i], &v) == MGUARD_OK, "fixture set");
        if (sys_on(SYS_STB)) stbds_hmput(f->hm, f->ins[i], v);
        if (f->gt) gl_set(f->gt, f->ins[i], v);
    }
    if (sys_on(SYS_ABSL)) {
        f->am = absl_map_new();
        CHECK(absl_set(f->am, f->ins, n, offsetof(BenchObj, id)) == n, "fixture absl set");
    }
    fx_warm(f);
}

static void fx_free(fx *f)
{
    mguard_ctx_destroy(f->ctx);
    mguard_ctx_destroy(f->live);
    stbds_hmfree(f->hm);
    if (f->gt) gl_free(f->gt);
    if (f->am) absl_map_free(f->am);
    free_objs(f->keys, f->n);
    free(f->ins);
    free(f->look);
    free(f->miss);
    free(f->missblock);
}

/* Repeat `pass` (a statement doing f->n operations) until min_ns elapsed;
   evaluates to ns per operation. */
#define TIMED_PASSES(f, ...) do {                                      \
        double t0_ = now_ns(), el_;                                    \
        long passes_ = 0;                                              \
        do { __VA_ARGS__; passes_++; } while ((el_ = now_ns() - t0_) < opt.min_ns); \
        return el_ / ((double)passes_ * (double)(f)->n);               \
    } while (0)

/* ---- weak table rows ---------------------------------------------------- */

static double mg_get_hit(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        long s = 0;
        for (i = 0; i < f->n; i++) {
            const long *v = (const long *)mguard_weak_get(f->mt, f->look[i]);
            if (!v) fail("mguard get hit");
            s += *v;
        }
        CHECK(s == f->sum, "mguard get sum");
    });
}
static double stb_get_hit(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        long s = 0;
        for (i = 0; i < f->n; i++) {
            ptrdiff_t j = stbds_hmgeti(f->hm, f->look[i]);
            if (j < 0) fail("stb_ds get hit");
            s += f->hm[j].value;
        }
        CHECK(s == f->sum, "stb_ds get sum");
    });
}
static double gl_get_hit(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        long s = 0;
        for (i = 0; i < f->n; i++) {
            gpointer v = g_hash_table_lookup(f->gt, f->look[i]);
            if (!v) fail("GLib get hit");
            s += (long)(intptr_t)v;
        }
        CHECK(s == f->sum, "GLib get sum");
    });
}

static double mg_get_miss(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++)
            if (mguard_weak_get(f->mt, f->miss[i])) fail("mguard get miss");
    });
}
static double stb_get_miss(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++)
            if (stbds_hmgeti(f->hm, f->miss[i]) >= 0) fail("stb_ds get miss");
    });
}
static double gl_get_miss(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++)
            if (g_hash_table_lookup(f->gt, f->miss[i])) fail("GLib get miss");
    });
}

static double mg_overwrite(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++) {
            long v = OBJ_ID(f->look[i]);
            if (mguard_weak_set(f->mt, f->look[i], &v) != MGUARD_OK) fail("mguard overwrite");
        }
        CHECK(mguard_weak_count(f->mt) == f->n, "mguard overwrite count");
    });
}
static double stb_overwrite(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++) stbds_hmput(f->hm, f->look[i], OBJ_ID(f->look[i]));
        CHECK((size_t)stbds_hmlen(f->hm) == f->n, "stb_ds overwrite count");
    });
}
static double gl_overwrite(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++) gl_set(f->gt, f->look[i], OBJ_ID(f->look[i]));
        CHECK(g_hash_table_size(f->gt) == f->n, "GLib overwrite count");
    });
}

static double mg_iterate(fx *f, int arg)
{
    (void)arg;
    TIMED_PASSES(f, {
        long s = 0;
        mguard_weak_iter it = mguard_weak_iterate(f->mt);
        while (mguard_weak_next(&it)) s += *(const long *)it.value;
        CHECK(s == f->sum, "mguard iterate sum");
    });
}
static double stb_iterate(fx *f, int arg)
{
    (void)arg;
    TIMED_PASSES(f, {
        long s = 0;
        ptrdiff_t i, n = stbds_hmlen(f->hm);
        for (i = 0; i < n; i++) s += f->hm[i].value;
        CHECK(s == f->sum, "stb_ds iterate sum");
    });
}
static double gl_iterate(fx *f, int arg)
{
    (void)arg;
    TIMED_PASSES(f, {
        long s = 0;
        GHashTableIter it;
        gpointer k, v;
        g_hash_table_iter_init(&it, f->gt);
        while (g_hash_table_iter_next(&it, &k, &v)) s += (long)(intptr_t)v;
        CHECK(s == f->sum, "GLib iterate sum");
    });
}

/* set new / remove: each cycle builds a table from empty in a fresh state
   (mguard: a fresh context, so the object registry insert is included),
   timing only the phase being measured. */
#define CYCLES(f, setup, timed, teardown) do {                         \
        double tot_ = 0; long cyc_ = 0;                                \
        do {                                                           \
            double t0_;                                                \
            setup;                                                     \
            t0_ = now_ns();                                            \
            timed;                                                     \
            tot_ += now_ns() - t0_;                                    \
            teardown;                                                  \
            cyc_++;                                                    \
        } while (tot_ < opt.min_ns);                                   \
        return tot_ / ((double)cyc_ * (double)(f)->n);                 \
    } while (0)

static void mg_fill(mguard_weak *t, void **keys, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        long v = OBJ_ID(keys[i]);
        if (mguard_weak_set(t, keys[i], &v) != MGUARD_OK) fail("mguard set new");
    }
}

/* mguard: a fresh table in the long-lived context (its keys are new to the
   registry, whose arrays keep the capacity they reached, as in a running
   program; the table grows from empty like the peers' tables). */
static double mg_set_new(fx *f, int arg)
{
    mguard_weak *t = NULL;
    (void)arg;
    CYCLES(f, { t = mg_table(f->live); },
           mg_fill(t, f->ins, f->n),
           {
               CHECK(mguard_weak_count(t) == f->n && mg_objects(f->live) == f->n, "mguard set count");
               mguard_weak_destroy(t);
           });
}
/* The cold case: a fresh context per cycle, so the registry grows from
   empty too (reallocations, rehashes, fresh pages). */
static double mg_set_new_cold(fx *f, int arg)
{
    mguard_ctx *c = NULL;
    mguard_weak *t = NULL;
    (void)arg;
    CYCLES(f, { c = mg_ctx(); t = mg_table(c); },
           mg_fill(t, f->ins, f->n),
           { CHECK(mguard_weak_count(t) == f->n, "mguard set count"); mguard_ctx_destroy(c); });
}
static double stb_set_new(fx *f, int arg)
{
    stb_kv *hm = NULL;
    size_t i;
    (void)arg;
    CYCLES(f, { hm = NULL; },
           { for (i = 0; i < f->n; i++) stbds_hmput(hm, f->ins[i], OBJ_ID(f->ins[i])); },
           { CHECK((size_t)stbds_hmlen(hm) == f->n, "stb_ds set count"); stbds_hmfree(hm); });
}
static double gl_set_new(fx *f, int arg)
{
    GHashTable *t = NULL;
    size_t i;
    (void)arg;
    CYCLES(f, { t = gl_new(); },
           { for (i = 0; i < f->n; i++) gl_set(t, f->ins[i], OBJ_ID(f->ins[i])); },
           { CHECK(g_hash_table_size(t) == f->n, "GLib set count"); gl_free(t); });
}

static double mg_remove(fx *f, int arg)
{
    mguard_ctx *c = NULL;
    mguard_weak *t = NULL;
    size_t i;
    (void)arg;
    (void)c;
    CYCLES(f, { t = mg_table(f->live); mg_fill(t, f->ins, f->n); },
           { for (i = 0; i < f->n; i++) if (mguard_weak_take(t, f->look[i], NULL) != MGUARD_OK) fail("mguard remove"); },
           { CHECK(mguard_weak_count(t) == 0 && mg_objects(f->live) == 0, "mguard remove count"); mguard_weak_destroy(t); });
}
static double stb_remove(fx *f, int arg)
{
    stb_kv *hm = NULL;
    size_t i;
    (void)arg;
    CYCLES(f, { hm = NULL; for (i = 0; i < f->n; i++) stbds_hmput(hm, f->ins[i], OBJ_ID(f->ins[i])); },
           { for (i = 0; i < f->n; i++) if (!stbds_hmdel(hm, f->look[i])) fail("stb_ds remove"); },
           { CHECK(stbds_hmlen(hm) == 0, "stb_ds remove count"); stbds_hmfree(hm); });
}
static double gl_remove(fx *f, int arg)
{
    GHashTable *t = NULL;
    size_t i;
    (void)arg;
    CYCLES(f, { t = gl_new(); for (i = 0; i < f->n; i++) gl_set(t, f->ins[i], OBJ_ID(f->ins[i])); },
           { for (i = 0; i < f->n; i++) if (!glw_remove(t, f->look[i])) fail("GLib remove"); },
           { CHECK(g_hash_table_size(t) == 0, "GLib remove count"); gl_free(t); });
}

/* ---- absl::flat_hash_map: the same rows ------------------------------------- */
static double ab_get_hit(fx *f, int arg)
{
    (void)arg;
    TIMED_PASSES(f, { CHECK(absl_get_hit(f->am, f->look, f->n) == f->sum, "absl get sum"); });
}
static double ab_get_miss(fx *f, int arg)
{
    (void)arg;
    TIMED_PASSES(f, { CHECK(absl_get_miss(f->am, f->miss, f->n) == 0, "absl get miss"); });
}
static double ab_overwrite(fx *f, int arg)
{
    (void)arg;
    TIMED_PASSES(f, {
        CHECK(absl_set(f->am, f->look, f->n, offsetof(BenchObj, id)) == 0, "absl overwrite added a key");
        CHECK(absl_map_size(f->am) == f->n, "absl overwrite count");
    });
}
static double ab_iterate(fx *f, int arg)
{
    (void)arg;
    TIMED_PASSES(f, { CHECK(absl_iterate(f->am) == f->sum, "absl iterate sum"); });
}
static double ab_set_new(fx *f, int arg)
{
    void *m = NULL;
    (void)arg;
    CYCLES(f, { m = absl_map_new(); },
           CHECK(absl_set(m, f->ins, f->n, offsetof(BenchObj, id)) == f->n, "absl set new"),
           { CHECK(absl_map_size(m) == f->n, "absl set count"); absl_map_free(m); });
}
static double ab_remove(fx *f, int arg)
{
    void *m = NULL;
    (void)arg;
    CYCLES(f, { m = absl_map_new(); absl_set(m, f->ins, f->n, offsetof(BenchObj, id)); },
           CHECK(absl_remove(m, f->look, f->n) == f->n, "absl remove"),
           { CHECK(absl_map_size(m) == 0, "absl remove count"); absl_map_free(m); });
}

/* ---- mutation of an unwatched object (sized: the registry holds n) -----
   mut_unwatched: on_mutation on addresses the context never saw, while its
   registry holds the n keys; the stb_ds column is the raw miss it must
   stay near (the target's baseline). mut_untracked_key: the same n key
   objects for mguard and GLib: mguard's on_mutation of a key nobody
   watches (one registry hit, no tracker) against GLib's emission of a
   signal nobody connected to, on the same objects in the same order. */
static double mg_mut_unwatched(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++) mguard_on_mutation(f->ctx, f->miss[i], "x");
    });
}
static double gl_mut_unwatched(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++) g_signal_emit(f->look[i], sig_mutated, 0, "x");
    });
}
/* A key of a table that nobody watches: one registry hit, no tracker. */
static double mg_mut_untracked_key(fx *f, int arg)
{
    size_t i;
    (void)arg;
    TIMED_PASSES(f, {
        for (i = 0; i < f->n; i++) mguard_on_mutation(f->ctx, f->look[i], "x");
    });
}

/* ---- fixed-size rows: M objects in play ---------------------------------
   Death, refs, trackers and generations use FIX_N fresh objects (f->n is
   FIX_N; f->keys are them, f->ins a random order). */
#define FIX_N 10000
#define UNRELATED 10000

/* Object death: FIX_N objects, each a key in k tables (+ UNRELATED other
   tables alive, when arg < 0: empty, so that only the number of tables
   changes). Timed: the destructor hook of every object, in random order.
   stb_ds: the floor, hmdel from each table (the program must know which). */

static double mg_death(fx *f, int arg)
{
    int k = arg < 0 ? -arg : arg, j;
    mguard_ctx *c = NULL;
    mguard_weak *t[16];
    size_t i;
    CYCLES(f, {
            c = mg_ctx();
            if (arg < 0)
                for (i = 0; i < UNRELATED; i++) mg_table(c);
            for (j = 0; j < k; j++) { t[j] = mg_table(c); mg_fill(t[j], f->keys, f->n); }
        },
        { for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->ins[i]); },
        {
            for (j = 0; j < k; j++) CHECK(mguard_weak_count(t[j]) == 0, "mguard death left an entry");
            CHECK(mg_objects(c) == 0, "mguard death left a record");
            mguard_ctx_destroy(c);
        });
}
static double stb_death(fx *f, int arg)
{
    int k = arg < 0 ? -arg : arg, j;
    stb_kv *t[16], **un = NULL;
    size_t i;
    CYCLES(f, {
            if (arg < 0) {
                un = (stb_kv **)calloc(UNRELATED, sizeof *un);
            }
            for (j = 0; j < k; j++) {
                t[j] = NULL;
                for (i = 0; i < f->n; i++) stbds_hmput(t[j], f->keys[i], 1);
            }
        },
        { for (i = 0; i < f->n; i++) for (j = 0; j < k; j++) (void)stbds_hmdel(t[j], f->ins[i]); },
        {
            for (j = 0; j < k; j++) { CHECK(stbds_hmlen(t[j]) == 0, "stb_ds death left an entry"); stbds_hmfree(t[j]); }
            if (un) { for (i = 0; i < UNRELATED; i++) stbds_hmfree(un[i]); free(un); un = NULL; }
        });
}
/* GLib: g_object_run_dispose fires the weak notifies (each removes the key
   from its table) without freeing the object, so the objects are reused;
   finalization is not counted, as mguard's row does not count free().
   Dispose does work of its own that every GObject pays with or without a
   weak table (signal handlers, qdata, toggle refs: about 40 ns here), so
   each cycle also times a second dispose of the same objects in the same
   order, with no weak refs left, and the row is the difference: GLib's
   weak-notify path net of its dispose baseline. */
static double gl_death(fx *f, int arg)
{
    int k = arg < 0 ? -arg : arg, j;
    GHashTable *t[16], **un = NULL;
    size_t i;
    double gross = 0, base = 0;
    long cyc = 0;
    do {
        double t0;
        if (arg < 0) {
            un = (GHashTable **)calloc(UNRELATED, sizeof *un);
            for (i = 0; i < UNRELATED; i++) un[i] = gl_new();
        }
        for (j = 0; j < k; j++) {
            t[j] = gl_new();
            for (i = 0; i < f->n; i++) gl_set(t[j], f->keys[i], 1);
        }
        t0 = now_ns();
        for (i = 0; i < f->n; i++) g_object_run_dispose((GObject *)f->ins[i]);
        gross += now_ns() - t0;
        t0 = now_ns();
        for (i = 0; i < f->n; i++) g_object_run_dispose((GObject *)f->ins[i]);
        base += now_ns() - t0;
        for (j = 0; j < k; j++) { CHECK(g_hash_table_size(t[j]) == 0, "GLib death left an entry"); g_hash_table_destroy(t[j]); }
        if (un) { for (i = 0; i < UNRELATED; i++) gl_free(un[i]); free(un); un = NULL; }
        cyc++;
    } while (gross < opt.min_ns);
    return (gross - base) / ((double)cyc * (double)f->n);
}
/* The death of an object nobody registered (the registry holds FIX_N
   others): one probe. GLib: disposing an object with no weak ref. */
static double mg_death_unknown(fx *f, int arg)
{
    mguard_ctx *c = mg_ctx();
    mguard_weak *t = mg_table(c);
    size_t i;
    double r;
    (void)arg;
    mg_fill(t, f->keys, f->n);
    r = 0;
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->miss[i]);
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        r = el / ((double)passes * (double)f->n);
    }
    CHECK(mguard_weak_count(t) == f->n, "mguard death of an unknown object removed something");
    mguard_ctx_destroy(c);
    return r;
}
/* ---- weak refs ------------------------------------------------------------ */
static double mg_ref_make(fx *f, int arg)
{
    mguard_ctx *c = NULL;
    mguard_ref *r = (mguard_ref *)malloc(f->n * sizeof *r);
    size_t i;
    (void)arg;
    (void)c;
    CYCLES(f, { ; },
           { for (i = 0; i < f->n; i++) r[i] = mguard_ref_make(f->live, f->ins[i]); },
           {
               for (i = 0; i < f->n; i++) CHECK(mguard_ref_get(f->live, r[i]) == f->ins[i], "mguard ref make");
               for (i = 0; i < f->n; i++) mguard_on_destroy(f->live, f->ins[i]);   /* unpin */
               if (tot_ >= opt.min_ns) free(r);
           });
}
static double mg_ref_get(fx *f, int arg)
{
    mguard_ctx *c = mg_ctx();
    mguard_ref *r = (mguard_ref *)malloc(f->n * sizeof *r);
    size_t i;
    double res;
    for (i = 0; i < f->n; i++) r[i] = mguard_ref_make(c, f->keys[i]);
    if (arg) for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->keys[i]);
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            for (i = 0; i < f->n; i++) {
                size_t j = (i * 7919) % f->n;  /* a fixed scattered order */
                void *p = mguard_ref_get(c, r[j]);
                if (arg ? p != NULL : p != f->keys[j]) fail("mguard ref get");
            }
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        res = el / ((double)passes * (double)f->n);
    }
    mguard_ctx_destroy(c);
    free(r);
    return res;
}
/* GLib, one thread: g_object_add_weak_pointer, which clears the caller's
   pointer when the object is finalized; reading the ref is a plain load
   (what a single-threaded GLib program writes). The thread-safe GWeakRef
   is the peer of mguard_ref_get_retained in the ts: rows. */
static double gl_ref_make(fx *f, int arg)
{
    gpointer *r = (gpointer *)calloc(f->n, sizeof *r);
    size_t i;
    (void)arg;
    CYCLES(f, { for (i = 0; i < f->n; i++) r[i] = f->ins[i]; },
           { for (i = 0; i < f->n; i++) g_object_add_weak_pointer((GObject *)f->ins[i], &r[i]); },
           {
               for (i = 0; i < f->n; i++) g_object_remove_weak_pointer((GObject *)f->ins[i], &r[i]);
               if (tot_ >= opt.min_ns) free(r);
           });
}
static double gl_ref_get(fx *f, int arg)
{
    gpointer *volatile r = (gpointer *)calloc(f->n, sizeof *r);
    void **objs = f->keys;
    size_t i;
    double res;
    if (arg) objs = new_objs(f->n);   /* finalized below: dead refs */
    for (i = 0; i < f->n; i++) { r[i] = objs[i]; g_object_add_weak_pointer((GObject *)objs[i], &r[i]); }
    if (arg) for (i = 0; i < f->n; i++) g_object_unref(objs[i]);
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            for (i = 0; i < f->n; i++) {
                size_t j = (i * 7919) % f->n;
                void *p = ((void *volatile *)r)[j];
                if (arg ? p != NULL : p != objs[j]) fail("GLib ref get");
            }
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        res = el / ((double)passes * (double)f->n);
    }
    if (!arg) for (i = 0; i < f->n; i++) g_object_remove_weak_pointer((GObject *)objs[i], &r[i]);
    if (arg) free(objs);
    free(r);
    return res;
}

/* ---- trackers -------------------------------------------------------------- */
static long fired;
static void mg_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
    fired++;
}
static void gl_handler(gpointer inst, gpointer attr, gpointer user)
{
    (void)inst; (void)attr; (void)user;
    fired++;
}
static char guards[8][16];

/* on_mutation of FIX_N objects with arg watchers each, and the re-arm:
   mguard's watchers are one-shot, GLib's handlers stay connected, so the
   row times what each side must do for the next mutation to notify again:
   for mguard the mutation and arg mguard_watch calls on the same object,
   for GLib the emission alone. */
static double mg_mut_watched(fx *f, int arg)
{
    mguard_ctx *c = mg_ctx();
    size_t i;
    int j;
    double res;
    for (i = 0; i < f->n; i++)
        for (j = 0; j < arg; j++)
            if (mguard_watch(c, f->keys[i], guards[j], mg_invalidate, NULL)) fail("mguard watch");
    {
        double t0 = now_ns(), el;
        long passes = 0;
        fired = 0;
        do {
            for (i = 0; i < f->n; i++) {
                mguard_on_mutation(c, f->ins[i], "x");
                for (j = 0; j < arg; j++)
                    if (mguard_watch(c, f->ins[i], guards[j], mg_invalidate, NULL)) fail("mguard re-watch");
            }
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        CHECK(fired == passes * (long)f->n * arg, "mguard watchers fired");
        res = el / ((double)passes * (double)f->n);
    }
    mguard_ctx_destroy(c);
    return res;
}
/* GLib: arg handlers connected to the "mutated" signal (they stay
   connected: GLib's handlers are not one-shot). */
static double gl_mut_watched(fx *f, int arg)
{
    size_t i;
    int j;
    double res;
    for (i = 0; i < f->n; i++)
        for (j = 0; j < arg; j++) g_signal_connect(f->keys[i], "mutated", G_CALLBACK(gl_handler), guards[j]);
    {
        double t0 = now_ns(), el;
        long passes = 0;
        fired = 0;
        do {
            for (i = 0; i < f->n; i++) g_signal_emit(f->ins[i], sig_mutated, 0, "x");
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        if (fired != passes * (long)f->n * arg) fprintf(stderr, "fired %ld expected %ld\n", fired, passes * (long)f->n * arg);
        CHECK(fired == passes * (long)f->n * arg, "GLib handlers fired");
        res = el / ((double)passes * (double)f->n);
    }
    for (i = 0; i < f->n; i++) g_signal_handlers_disconnect_matched(f->keys[i], G_SIGNAL_MATCH_FUNC, 0, 0, NULL, (gpointer)gl_handler, NULL);
    return res;
}
/* mguard_watch on objects whose tracker exists (the usual re-watch after
   an invalidation). */
static double mg_watch(fx *f, int arg)
{
    mguard_ctx *c = mg_ctx();
    size_t i;
    double tot = 0;
    long cyc = 0;
    (void)arg;
    for (i = 0; i < f->n; i++) mguard_watch(c, f->keys[i], guards[0], mg_invalidate, NULL);
    for (i = 0; i < f->n; i++) mguard_on_mutation(c, f->keys[i], "x");
    do {
        double t0 = now_ns();
        for (i = 0; i < f->n; i++)
            if (mguard_watch(c, f->ins[i], guards[0], mg_invalidate, NULL)) fail("mguard watch");
        tot += now_ns() - t0;
        fired = 0;
        for (i = 0; i < f->n; i++) mguard_on_mutation(c, f->keys[i], "x");
        CHECK(fired == (long)f->n, "mguard watch fired");
        cyc++;
    } while (tot < opt.min_ns);
    mguard_ctx_destroy(c);
    return tot / ((double)cyc * (double)f->n);
}
static double gl_watch(fx *f, int arg)
{
    size_t i;
    gulong *ids = (gulong *)malloc(f->n * sizeof *ids);
    (void)arg;
    CYCLES(f, { ; },
           { for (i = 0; i < f->n; i++) ids[i] = g_signal_connect(f->ins[i], "mutated", G_CALLBACK(gl_handler), guards[0]); },
           {
               for (i = 0; i < f->n; i++) g_signal_handler_disconnect(f->ins[i], ids[i]);
               if (tot_ >= opt.min_ns) free(ids);
           });
}

/* ---- generations --------------------------------------------------------------
   Tag FIX_N fresh objects; check them. stb_ds: a map obj -> generation.
   GLib: qdata on the object. */
static GQuark gen_quark;
static double mg_gen_tag(fx *f, int arg)
{
    mguard_ctx *c = NULL;
    size_t i;
    (void)arg;
    (void)c;
    CYCLES(f, { mguard_gen_advance(f->live); },
           { for (i = 0; i < f->n; i++) if (mguard_gen_tag(f->live, f->ins[i])) fail("mguard gen tag"); },
           {
               CHECK(mguard_gen_get(f->live, f->keys[0]) == mguard_gen_current(f->live), "mguard gen tagged");
               mguard_gen_clear(f->live);
               CHECK(mg_objects(f->live) == 0, "mguard gen clear");
           });
}
static double stb_gen_tag(fx *f, int arg)
{
    stb_kv *hm = NULL;
    size_t i;
    (void)arg;
    CYCLES(f, { hm = NULL; },
           { for (i = 0; i < f->n; i++) stbds_hmput(hm, f->ins[i], 1); },
           { CHECK((size_t)stbds_hmlen(hm) == f->n, "stb_ds gen tag"); stbds_hmfree(hm); });
}
static double gl_gen_tag(fx *f, int arg)
{
    size_t i;
    (void)arg;
    CYCLES(f, { ; },
           { for (i = 0; i < f->n; i++) g_object_set_qdata(f->ins[i], gen_quark, GINT_TO_POINTER(2)); },
           {
               CHECK(g_object_get_qdata(f->keys[0], gen_quark) == GINT_TO_POINTER(2), "GLib gen tag");
               for (i = 0; i < f->n; i++) g_object_set_qdata(f->ins[i], gen_quark, NULL);
           });
}
static double mg_gen_check(fx *f, int arg)
{
    mguard_ctx *c = mg_ctx();
    size_t i;
    double r;
    (void)arg;
    mguard_gen_advance(c);
    for (i = 0; i < f->n; i++) mguard_gen_tag(c, f->keys[i]);
    r = 0;
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            for (i = 0; i < f->n; i++) if (!mguard_gen_is_dynamic(c, f->ins[i], NULL)) fail("mguard gen check");
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        r = el / ((double)passes * (double)f->n);
    }
    mguard_ctx_destroy(c);
    return r;
}
static double stb_gen_check(fx *f, int arg)
{
    stb_kv *hm = NULL;
    size_t i;
    double r;
    long gen = 1;
    (void)arg;
    for (i = 0; i < f->n; i++) stbds_hmput(hm, f->keys[i], 1);
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            for (i = 0; i < f->n; i++) {
                ptrdiff_t j = stbds_hmgeti(hm, f->ins[i]);
                if (j < 0 || hm[j].value != gen) fail("stb_ds gen check");
            }
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        r = el / ((double)passes * (double)f->n);
    }
    stbds_hmfree(hm);
    return r;
}
static double gl_gen_check(fx *f, int arg)
{
    size_t i;
    double r;
    (void)arg;
    for (i = 0; i < f->n; i++) g_object_set_qdata(f->keys[i], gen_quark, GINT_TO_POINTER(2));
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            for (i = 0; i < f->n; i++)
                if (g_object_get_qdata(f->ins[i], gen_quark) != GINT_TO_POINTER(2)) fail("GLib gen check");
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        r = el / ((double)passes * (double)f->n);
    }
    for (i = 0; i < f->n; i++) g_object_set_qdata(f->keys[i], gen_quark, NULL);
    return r;
}

/* ---- scope hierarchy tracker ---------------------------------------------------
   Components "c0".."c15" named explicitly (a chain: c0 is the outermost).
   enter/exit: with depth - 1 frames open, enter and exit one more component
   (ns per pair). add: mguard_scope_add with 8 active names (the root and 7
   open frames). No C peer: the Python column is the reference's
   ModuleTracker logic. */
static char scope_comps[16];
static mguard_scope *bench_scope(mguard_ctx *c, int open)
{
    mguard_scope *s = mguard_scope_create(c, NULL);
    char name[64];
    int i;
    CHECK(s != NULL, "mguard scope create");
    for (i = 0; i < 16; i++) {
        snprintf(name, sizeof name, "Net.c%d", i);
        CHECK(mguard_scope_set_name(s, &scope_comps[i], name) == MGUARD_OK, "mguard scope name");
    }
    for (i = 0; i < open; i++) CHECK(mguard_scope_enter(s, &scope_comps[i]) == MGUARD_OK, "mguard scope enter");
    return s;
}
static double mg_scope_enter_exit(fx *f, int depth)
{
    mguard_ctx *c = mg_ctx();
    mguard_scope *s = bench_scope(c, depth - 1);
    const void *comp = &scope_comps[depth - 1];
    size_t i;
    double r;
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            for (i = 0; i < f->n; i++) {
                if (mguard_scope_enter(s, comp) || mguard_scope_exit(s, comp)) fail("mguard scope enter/exit");
            }
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        r = el / ((double)passes * (double)f->n);
    }
    CHECK(mguard_scope_frames(s, NULL, 0) == (size_t)depth, "mguard scope depth");
    mguard_ctx_destroy(c);
    return r;
}
static double mg_scope_add(fx *f, int active)
{
    mguard_ctx *c = mg_ctx();
    mguard_scope *s = bench_scope(c, active - 1);
    size_t i;
    double r, total;
    long passes = 0;
    {
        double t0 = now_ns(), el;
        do {
            for (i = 0; i < f->n; i++)
                if (mguard_scope_add(s, "flops", 1.0)) fail("mguard scope add");
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        r = el / ((double)passes * (double)f->n);
    }
    total = (double)passes * (double)f->n;
    CHECK(mguard_scope_counter(s, "Global", "flops", NULL) == total, "mguard scope add (root)");
    CHECK(mguard_scope_counter(s, "Net.c6", "flops", NULL) == total, "mguard scope add (innermost)");
    mguard_ctx_destroy(c);
    return r;
}

/* ---- side-effects ledger -------------------------------------------------------
   A ledger of n objects (the fixture's keys): even ones EXISTING, each with
   one pending write; odd ones NEW, each writing itself. An EXISTING object
   at i % 4 == 0 writes the NEW object after it, which keeps that one alive
   for prune; the NEW objects at i % 4 == 3 are unreachable (n / 4 pruned).
   Values are the objects themselves. Figures are ns per tracked object.
   clone: the stb_ds column is a memcpy of the same number of bytes
   (mguard_ledger_get_stats' storage_bytes, allocated like a clone), the issue's
   baseline. equal and diff compare with a second ledger built the same
   way (so the O(1) shortcut for an unchanged clone does not apply; for
   diff every 100th write differs). prune: a fresh clone pruned with no
   roots. */
/* L's tracked objects (0 when refused). */
static size_t ledger_entries(const mguard_ledger *L)
{
    mguard_ledger_stats s;
    return mguard_ledger_get_stats(L, &s) == MGUARD_OK ? s.entries : 0;
}
static mguard_ledger *bench_ledger(fx *f)
{
    mguard_ledger *L = mguard_ledger_create(f->live, NULL);
    size_t i;
    CHECK(L != NULL, "mguard ledger create");
    for (i = 0; i < f->n; i++) {
        void *o = f->keys[i];
        if (i % 2 == 0) {
            void *v = (i % 4 == 0 && i + 1 < f->n) ? f->keys[i + 1] : o;
            CHECK(mguard_ledger_track(L, o, MGUARD_LEDGER_EXISTING, "L") == MGUARD_OK, "mguard ledger track");
            CHECK(mguard_ledger_store_attr(L, o, "attr", v) == MGUARD_OK, "mguard ledger store");
        } else {
            CHECK(mguard_ledger_track(L, o, MGUARD_LEDGER_NEW, NULL) == MGUARD_OK, "mguard ledger track new");
            CHECK(mguard_ledger_store_attr(L, o, "attr", o) == MGUARD_OK, "mguard ledger store");
        }
    }
    return L;
}
/* A second ledger built the same way (not a clone, so no shortcut), with
   every step-th EXISTING object's write given another value (0: none). */
static mguard_ledger *bench_ledger_twin(fx *f, size_t step)
{
    mguard_ledger *c = bench_ledger(f);
    size_t i;
    for (i = 0; step && i < f->n; i += 2)
        if ((i / 2) % step == 0)
            CHECK(mguard_ledger_store_attr(c, f->keys[i], "attr", f->keys[(i + 2) % f->n]) == MGUARD_OK, "mguard ledger store");
    return c;
}
static double mg_ledger_clone(fx *f, int arg)
{
    mguard_ledger *L = bench_ledger(f), *c = NULL;
    (void)arg;
    {
        double tot_ = 0;
        long cyc_ = 0;
        do {
            double t0 = now_ns();
            c = mguard_ledger_clone(L);
            tot_ += now_ns() - t0;
            CHECK(c && ledger_entries(c) == f->n, "mguard ledger clone");
            mguard_ledger_destroy(c);
            cyc_++;
        } while (tot_ < opt.min_ns);
        mguard_ledger_destroy(L);
        return tot_ / ((double)cyc_ * (double)f->n);
    }
}
static double memcpy_ledger_clone(fx *f, int arg)
{
    mguard_ledger *L = bench_ledger(f);
    mguard_ledger_stats st;
    size_t bytes = mguard_ledger_get_stats(L, &st) == MGUARD_OK ? st.storage_bytes : 0;
    unsigned char *src = (unsigned char *)malloc(bytes), *dst;
    double tot = 0;
    long cyc = 0;
    (void)arg;
    memset(src, 1, bytes);
    do {
        double t0 = now_ns();
        dst = (unsigned char *)malloc(bytes);   /* a clone allocates, too */
        memcpy(dst, src, bytes);
        tot += now_ns() - t0;
        CHECK(dst[bytes - 1] == 1, "memcpy");
        free(dst);
        cyc++;
    } while (tot < opt.min_ns);
    free(src);
    mguard_ledger_destroy(L);
    return tot / ((double)cyc * (double)f->n);
}
static double mg_ledger_equal(fx *f, int arg)
{
    mguard_ledger *L = bench_ledger(f), *c = bench_ledger_twin(f, 0);
    double r;
    (void)arg;
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            if (!mguard_ledger_equal(L, c)) fail("mguard ledger equal");
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        r = el / ((double)passes * (double)f->n);
    }
    mguard_ledger_destroy(c);
    mguard_ledger_destroy(L);
    return r;
}
static double mg_ledger_diff(fx *f, int arg)
{
    mguard_ledger *L = bench_ledger(f), *c = bench_ledger_twin(f, 100);
    size_t want = (f->n / 2 + 99) / 100, nd = 0;
    double r;
    (void)arg;
    {
        double t0 = now_ns(), el;
        long passes = 0;
        do {
            mguard_ledger_diff_result *d = NULL;
            if (mguard_ledger_diff(L, c, &d) != MGUARD_OK) fail("mguard ledger diff");
            mguard_ledger_diff_items(d, &nd);
            if (nd != want) fail("mguard ledger diff count");
            mguard_ledger_diff_free(d);
            passes++;
        } while ((el = now_ns() - t0) < opt.min_ns);
        r = el / ((double)passes * (double)f->n);
    }
    mguard_ledger_destroy(c);
    mguard_ledger_destroy(L);
    return r;
}
static double mg_ledger_prune(fx *f, int arg)
{
    mguard_ledger *L = bench_ledger(f), *c = NULL;
    (void)arg;
    {
        double tot_ = 0;
        long cyc_ = 0;
        do {
            double t0;
            c = mguard_ledger_clone(L);
            CHECK(c != NULL, "mguard ledger clone");
            t0 = now_ns();
            if (mguard_ledger_prune(c, NULL, 0) != MGUARD_OK) fail("mguard ledger prune");
            tot_ += now_ns() - t0;
            CHECK(ledger_entries(c) == f->n - f->n / 4, "mguard ledger prune count");
            mguard_ledger_destroy(c);
            cyc_++;
        } while (tot_ < opt.min_ns);
        mguard_ledger_destroy(L);
        return tot_ / ((double)cyc_ * (double)f->n);
    }
}

/* ---- ledger values: pointers and sized values side by side ----------------------
   The same n objects, each EXISTING with one pending write "id": a pointer
   value (the object itself) or a sized value (a long: the object's id,
   bound to the field BenchObj.id by a field table). store: ns per
   store_attr overwriting the pending write; load: per load_attr (pointer)
   or mguard_ledger_read (sized: a copy out); clone: per object; apply: per
   write, the pointer ledger through a callback, the sized one straight
   into the field (it writes the id the object already has). */
static const mguard_ledger_field bench_id_field[] = { MGUARD_LEDGER_FIELD(BenchObj, id, MGUARD_LEDGER_VALUE_INT) };
static mguard_ledger *bench_vledger(fx *f, int sized)
{
    mguard_ledger_desc d;
    mguard_ledger *L;
    size_t i;
    memset(&d, 0, sizeof d);
    if (sized) {
        d.value_size = sizeof(long);
        d.value_type = MGUARD_LEDGER_VALUE_INT;
    }
    L = mguard_ledger_create(f->live, &d);
    CHECK(L != NULL, "mguard ledger create");
    for (i = 0; i < f->n; i++) {
        BenchObj *o = (BenchObj *)f->keys[i];
        CHECK(mguard_ledger_track(L, o, MGUARD_LEDGER_EXISTING, NULL) == MGUARD_OK, "mguard ledger track");
        if (sized) CHECK(mguard_ledger_set_fields(L, o, bench_id_field, 1) == MGUARD_OK, "mguard ledger set_fields");
        CHECK(mguard_ledger_store_attr(L, o, "id", sized ? (void *)&o->id : (void *)o) == MGUARD_OK, "mguard ledger store");
    }
    return L;
}
static double mg_ledger_vstore(fx *f, int sized)
{
    mguard_ledger *L = bench_vledger(f, sized);
    double t0 = now_ns(), el;
    long passes = 0;
    size_t i;
    do {
        for (i = 0; i < f->n; i++) {
            void *o = f->keys[i];
            long v = (long)i + passes;
            if (mguard_ledger_store_attr(L, o, "id", sized ? (void *)&v : f->keys[(i + (size_t)passes) % f->n]) != MGUARD_OK)
                fail("mguard ledger store");
        }
        passes++;
    } while ((el = now_ns() - t0) < opt.min_ns);
    mguard_ledger_destroy(L);
    return el / ((double)passes * (double)f->n);
}
static double mg_ledger_vload(fx *f, int sized)
{
    mguard_ledger *L = bench_vledger(f, sized);
    double t0 = now_ns(), el;
    long passes = 0, s = 0;
    size_t i;
    do {
        for (i = 0; i < f->n; i++) {
            void *o = f->look[i], *p = NULL;
            long v = 0;
            if (sized ? mguard_ledger_read(L, o, "id", &v) != MGUARD_OK : mguard_ledger_pending(L, o, "id", &p) != MGUARD_OK)
                fail("mguard ledger load");
            s += sized ? v : (p == o);
        }
        passes++;
    } while ((el = now_ns() - t0) < opt.min_ns);
    CHECK(s > 0, "mguard ledger load values");
    mguard_ledger_destroy(L);
    return el / ((double)passes * (double)f->n);
}
static double mg_ledger_vclone(fx *f, int sized)
{
    mguard_ledger *L = bench_vledger(f, sized), *c;
    double tot = 0;
    long cyc = 0;
    do {
        double t0 = now_ns();
        c = mguard_ledger_clone(L);
        tot += now_ns() - t0;
        CHECK(c && ledger_entries(c) == f->n, "mguard ledger clone");
        mguard_ledger_destroy(c);
        cyc++;
    } while (tot < opt.min_ns);
    mguard_ledger_destroy(L);
    return tot / ((double)cyc * (double)f->n);
}
static void bench_commit(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    (void)attr;
    (void)deleted;
    *(long *)user += (obj == value);
}
static double mg_ledger_vapply(fx *f, int sized)
{
    mguard_ledger *L = bench_vledger(f, sized);
    double t0 = now_ns(), el;
    long passes = 0, hits = 0;
    do {
        if (mguard_ledger_apply(L, sized ? NULL : bench_commit, &hits) != MGUARD_OK) fail("mguard ledger apply");
        passes++;
    } while ((el = now_ns() - t0) < opt.min_ns);
    CHECK(sized || hits == passes * (long)f->n, "mguard ledger apply calls");
    CHECK(((BenchObj *)f->keys[0])->id == 1, "mguard ledger apply field");
    mguard_ledger_destroy(L);
    return el / ((double)passes * (double)f->n);
}

/* ---- thread-safe contexts (docs/guide.md, "Threads") ----------------------
   The calls of the rows get_hit (as get_copy), overwrite and ref get on a
   context created with thread_safe = true, from arg threads that share it
   and the same FIX_N keys (arg 1: the lock's cost alone; arg 0: as many
   threads as online cores, contended; never more, which would measure
   time-slicing). GLib: what a GLib program shares between threads: a
   GHashTable under a GMutex (lookup; insert of a present key, as
   mguard_weak_set overwrites), and GWeakRef (g_weak_ref_get +
   g_object_unref) against mguard_ref_get_retained with a try_retain that
   takes a GObject reference (released after, as GLib's). A figure is ns
   per call as one thread sees it: the latest thread's end minus the
   earliest thread's start (each thread reads the clock itself), over the
   calls one thread made. bench/bench_threads.c (make bench-threads) has
   the full matrix. */
typedef struct mt_fx {
    fx *f;
    mguard_ctx *ctx;
    mguard_weak *t;
    mguard_ref *refs;
    GWeakRef *grefs;
    GHashTable *ght;
    GMutex gmu;
    int op;
} mt_fx;
enum { MT_GET, MT_OVERWRITE, MT_REF_GET, MT_MUT, MT_GL_REF_GET, MT_GL_GET, MT_GL_OVERWRITE };

static bool mt_try_retain(void *obj, void *user)
{
    (void)user;
    g_object_ref(obj);   /* a live key: its count is above zero */
    return true;
}

static void mt_pass(mt_fx *m)
{
    fx *f = m->f;
    size_t i;
    long s = 0, v;
    for (i = 0; i < f->n; i++) {
        size_t j = (i * 7919) % f->n;
        switch (m->op) {
        case MT_GET:
            if (mguard_weak_get_copy(m->t, f->keys[j], &v) != MGUARD_OK) fail("mguard ts get");
            s += v;
            break;
        case MT_OVERWRITE:
            v = (long)j + 1;
            if (mguard_weak_set(m->t, f->keys[j], &v) != MGUARD_OK) fail("mguard ts overwrite");
            break;
        case MT_REF_GET: {
            void *p = mguard_ref_get_retained(m->ctx, m->refs[j], mt_try_retain, NULL);
            if (p != f->keys[j]) fail("mguard ts ref get");
            g_object_unref(p);
            break;
        }
        case MT_MUT:
            mguard_on_mutation(m->ctx, f->keys[j], "x");
            break;
        case MT_GL_GET: {
            gpointer p;
            g_mutex_lock(&m->gmu);
            p = g_hash_table_lookup(m->ght, f->keys[j]);
            g_mutex_unlock(&m->gmu);
            if (!p) fail("GLib ts get");
            s += (long)(intptr_t)p;
            break;
        }
        case MT_GL_OVERWRITE:
            g_mutex_lock(&m->gmu);
            g_hash_table_insert(m->ght, f->keys[j], (gpointer)(intptr_t)(j + 1));
            g_mutex_unlock(&m->gmu);
            break;
        default: {
            GObject *p = (GObject *)g_weak_ref_get(&m->grefs[j]);
            if ((void *)p != f->keys[j]) fail("GLib threaded ref get");
            g_object_unref(p);
        }
        }
    }
    if (m->op == MT_GET || m->op == MT_GL_GET) CHECK(s == f->sum, "ts get sum");
}

typedef struct mt_job { mt_fx *m; long passes; double t_start, t_end; pthread_barrier_t *bar; } mt_job;
static void *mt_thread(void *arg)
{
    mt_job *j = (mt_job *)arg;
    long p;
    pthread_barrier_wait(j->bar);
    j->t_start = now_ns();
    for (p = 0; p < j->passes; p++) mt_pass(j->m);
    j->t_end = now_ns();
    return NULL;
}

static int online_cores(void)
{
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c < 1 ? 1 : c > 8 ? 8 : (int)c;
}

/* As many passes as fill opt.min_ns on one thread, then that many on each
   of nthreads threads at once (0: the online cores; capped at them). */
static double mt_run(mt_fx *m, int nthreads)
{
    pthread_t th[8];
    mt_job jobs[8];
    pthread_barrier_t bar;
    double t0 = now_ns(), t1, el;
    long passes = 0;
    int t;
    do { mt_pass(m); passes++; } while ((el = now_ns() - t0) < opt.min_ns);
    if (nthreads <= 0 || nthreads > online_cores()) nthreads = online_cores();
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
    for (t = 0; t < nthreads; t++) {
        jobs[t].m = m;
        jobs[t].passes = passes;
        jobs[t].bar = &bar;
        pthread_create(&th[t], NULL, mt_thread, &jobs[t]);
    }
    for (t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bar);
    t0 = jobs[0].t_start;
    t1 = jobs[0].t_end;
    for (t = 1; t < nthreads; t++) {
        if (jobs[t].t_start < t0) t0 = jobs[t].t_start;
        if (jobs[t].t_end > t1) t1 = jobs[t].t_end;
    }
    return (t1 - t0) / ((double)passes * (double)m->f->n);
}

static double mg_ts(fx *f, int arg, int op)
{
    mt_fx m;
    mguard_ctx_desc d;
    size_t i;
    double res;
    memset(&m, 0, sizeof m);
    memset(&d, 0, sizeof d);
    d.quiet = true;
    d.thread_safe = true;
    m.f = f;
    m.op = op;
    m.ctx = mguard_ctx_create(&d);
    m.t = mg_table(m.ctx);
    m.refs = (mguard_ref *)malloc(f->n * sizeof *m.refs);
    for (i = 0; i < f->n; i++) {
        long v = (long)i + 1;
        int guard;
        if (mguard_weak_set(m.t, f->keys[i], &v) != MGUARD_OK) fail("mguard ts set");
        m.refs[i] = mguard_ref_make(m.ctx, f->keys[i]);
        mguard_watch(m.ctx, f->keys[i], &guard, mg_invalidate, NULL);   /* a tracker, no watcher */
        mguard_unwatch(m.ctx, f->keys[i], &guard);
    }
    res = mt_run(&m, arg);
    mguard_ctx_destroy(m.ctx);
    free(m.refs);
    return res;
}
static double mg_ts_get(fx *f, int arg) { return mg_ts(f, arg, MT_GET); }
static double mg_ts_overwrite(fx *f, int arg) { return mg_ts(f, arg, MT_OVERWRITE); }
static double mg_ts_ref_get(fx *f, int arg) { return mg_ts(f, arg, MT_REF_GET); }

static double gl_ts(fx *f, int arg, int op)
{
    mt_fx m;
    size_t i;
    double res;
    memset(&m, 0, sizeof m);
    m.f = f;
    m.op = op;
    g_mutex_init(&m.gmu);
    m.ght = gl_new();
    m.grefs = (GWeakRef *)calloc(f->n, sizeof *m.grefs);
    for (i = 0; i < f->n; i++) {
        g_weak_ref_init(&m.grefs[i], f->keys[i]);
        g_hash_table_insert(m.ght, f->keys[i], (gpointer)(intptr_t)(i + 1));
    }
    res = mt_run(&m, arg);
    for (i = 0; i < f->n; i++) g_weak_ref_clear(&m.grefs[i]);
    free(m.grefs);
    g_hash_table_destroy(m.ght);
    g_mutex_clear(&m.gmu);
    return res;
}
static double gl_ts_get(fx *f, int arg) { return gl_ts(f, arg, MT_GL_GET); }
static double gl_ts_overwrite(fx *f, int arg) { return gl_ts(f, arg, MT_GL_OVERWRITE); }
static double gl_ts_ref_get(fx *f, int arg) { return gl_ts(f, arg, MT_GL_REF_GET); }

/* ---- guarded caches (issue 15) -------------------------------------------
   cache_get_hit: the fixture's keys in a cache (value = the key's id),
   looked up in the same order as get_hit's weak table: the target is
   <= 1.15x mguard_weak_get (issue 24). cache_inval / handwired_inval:
   FIX_N entries, each dropped by a mutation of its key, its value
   destroyed (a destructor that counts): by the cache's own dependency, or
   by the pattern a cache replaces (a weak table with the same destructor,
   a watcher per entry whose callback removes it).

   Ratios within mguard (rows ratio_*, one value per sample, written to the
   TSV like a time; bench/tsv2md.py prints them apart): cache_get_hit
   alternates its passes with mguard_weak_get passes over the same keys,
   cache_inval its cycles with hand-wired cycles, so each sample's ratio
   comes from one moment of the machine. */
static void ratio_put(const char *id, const char *label, size_t n, double v)
{
    result *r = result_for(id, label, n);
    if (r->nsamp == MAXSAMP) return;
    r->smp[SYS_MG][r->nsamp++] = v;
    r->ns[SYS_MG] = v;   /* not NaN: written (tsv2md takes the median) */
}
static long destroyed;
static void count_dtor(void *value, void *user)
{
    (void)value; (void)user;
    destroyed++;
}
static mguard_cache *mg_cache_d(mguard_ctx *ctx, mguard_value_dtor dtor)
{
    mguard_cache_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.value_dtor = dtor;
    return mguard_cache_create(ctx, &d);
}
static mguard_cache *mg_cache(mguard_ctx *ctx) { return mg_cache_d(ctx, NULL); }
static double cache_weak_el[2];   /* cache get, weak get: time in alternating passes */
/* One pass of cache gets, of weak gets, over the fixture's keys in lookup order. */
static void cache_pass(fx *f, mguard_cache *k)
{
    size_t i;
    long s = 0;
    for (i = 0; i < f->n; i++) {
        const void *key = f->look[i];
        const long *v = (const long *)mguard_cache_get(k, &key, 1);
        if (!v) fail("mguard cache get hit");
        s += *v;
    }
    CHECK(s == f->sum, "mguard cache get sum");
}
static void weak_pass(fx *f, mguard_weak *wt)
{
    size_t i;
    long s = 0;
    for (i = 0; i < f->n; i++) {
        const long *v = (const long *)mguard_weak_get(wt, f->look[i]);
        if (!v) fail("mguard get hit");
        s += *v;
    }
    CHECK(s == f->sum, "mguard get sum");
}
static double mg_cache_get_hit(fx *f, int arg)
{
    mguard_ctx *c = mg_ctx();
    mguard_cache *k = mg_cache(c);
    mguard_weak *wt = mg_table(c);
    size_t i;
    double t0, el, w_el = 0;
    long passes = 0;
    (void)arg;
    /* the cache and a weak table of the same context, filled in the same
       loop (same keys, same order, same age of their memory: the fixture's
       long-lived table is not what the cache is compared with) */
    for (i = 0; i < f->n; i++) {
        long v = OBJ_ID(f->ins[i]);
        const void *key = f->ins[i];
        if (mguard_cache_set(k, &key, 1, &v, 0) != MGUARD_OK) fail("mguard cache set");
        if (mguard_weak_set(wt, key, &v) != MGUARD_OK) fail("mguard set");
    }
    /* passes alternate with passes of mguard_weak_get over the same keys
       in the same order, so both see the same machine: their ratio is
       printed at the end (cache_weak_ratio). One untimed pass of each
       first, and the two take turns going first: at 1M keys a sample is
       one pass of each, and the first pass after filling 2M entries runs
       measurably slower (up to 1.26x in a test), whichever it is. */
    cache_pass(f, k);
    weak_pass(f, wt);
    el = 0;
    do {
        double t1, t2;
        t0 = now_ns();
        if (passes & 1) weak_pass(f, wt); else cache_pass(f, k);
        t1 = now_ns();
        if (passes & 1) cache_pass(f, k); else weak_pass(f, wt);
        t2 = now_ns();
        el += passes & 1 ? t2 - t1 : t1 - t0;
        w_el += passes & 1 ? t1 - t0 : t2 - t1;
        passes++;
    } while (el < opt.min_ns || passes < 2);
    cache_weak_el[0] += el;
    cache_weak_el[1] += w_el;
    mguard_ctx_destroy(c);
    ratio_put("ratio_cache_get_hit", "ratio: cache get hit / weak get hit (alternating passes)", f->n, el / w_el);
    return el / ((double)passes * (double)f->n);
}
static mguard_weak *bench_hand_table;
static void hand_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)attr; (void)user;
    if (mguard_weak_take(bench_hand_table, obj, NULL) == MGUARD_OK) fired++;
}
/* One cycle: FIX_N entries stored (untimed), then one mutation of each
   key (timed), which drops its entry and destroys its value. hand: the
   hand-wired pattern, else the cache. Returns the timed ns. */
static double inval_cycle(fx *f, mguard_ctx *c, mguard_cache *k, int hand)
{
    size_t i;
    double t0, el;
    for (i = 0; i < f->n; i++) {
        long v = (long)i;
        const void *key = f->keys[i];
        if (hand) {
            if (mguard_weak_set(bench_hand_table, key, &v) != MGUARD_OK) fail("hand-wired set");
            if (mguard_watch(c, key, guards[0], hand_invalidate, NULL) != MGUARD_OK) fail("hand-wired watch");
        } else if (mguard_cache_set(k, &key, 1, &v, 0) != MGUARD_OK) {
            fail("mguard cache set");
        }
    }
    fired = destroyed = 0;
    t0 = now_ns();
    for (i = 0; i < f->n; i++) mguard_on_mutation(c, f->ins[i], "x");
    el = now_ns() - t0;
    CHECK(hand ? fired == (long)f->n : mguard_cache_count(k) == 0, "every entry dropped");
    CHECK(destroyed == (long)f->n, "every value destroyed once");
    CHECK(mguard_weak_count(bench_hand_table) == 0, "hand-wired table emptied");
    return el;
}
/* hand 1: the hand-wired pattern alone. hand 0: the cache, its cycles
   alternating with hand-wired cycles in the same context (a sample's
   ratio_cache_inval is the cache's time over the hand-wired time). */
static double mg_inval(fx *f, int hand)
{
    mguard_ctx *c = mg_ctx();
    mguard_cache *k = mg_cache_d(c, count_dtor);
    double tot = 0, tot_hand = 0;
    long cyc = 0;
    bench_hand_table = mg_table_d(c, count_dtor);
    do {
        tot += inval_cycle(f, c, k, hand);
        if (!hand) tot_hand += inval_cycle(f, c, k, 1);
        cyc++;
    } while (tot < opt.min_ns);
    mguard_ctx_destroy(c);
    if (!hand) ratio_put("ratio_cache_inval", "ratio: cache invalidation / hand-wired (alternating cycles)", f->n, tot / tot_hand);
    return tot / ((double)cyc * (double)f->n);
}

/* ---- the table of rows --------------------------------------------------------
   sized: run at every key count with that count's fixture; otherwise run
   once with FIX_N fresh objects. fn[sys] NULL: not applicable. The stb_ds
   column of mut_unwatched is a raw miss (the target's baseline). */
typedef double (*sample_fn)(fx *f, int arg);
typedef struct row {
    const char *id;
    const char *label;
    int sized;
    int arg;
    sample_fn fn[NSYS_C];
    size_t max_n;       /* sized rows: skip sizes above this (0: none) */
} row;

static const row rows[] = {
    { "get_hit",       "weak get, hit",                 1, 0, { mg_get_hit, stb_get_hit, gl_get_hit, ab_get_hit }, 0 },
    { "get_miss",      "weak get, miss",                1, 0, { mg_get_miss, stb_get_miss, gl_get_miss, ab_get_miss }, 0 },
    { "set_new",       "weak set, new key",             1, 0, { mg_set_new, stb_set_new, gl_set_new, ab_set_new }, 0 },
    { "set_new_cold",  "weak set, new key, new context", 1, 0, { mg_set_new_cold, NULL, NULL, NULL }, 0 },
    { "overwrite",     "weak set, overwrite",           1, 0, { mg_overwrite, stb_overwrite, gl_overwrite, ab_overwrite }, 0 },
    { "remove",        "weak remove",                   1, 0, { mg_remove, stb_remove, gl_remove, ab_remove }, 0 },
    { "iterate",       "weak iterate (per entry)",      1, 0, { mg_iterate, stb_iterate, gl_iterate, ab_iterate }, 0 },
    { "mut_unwatched", "on_mutation, unknown address (stb_ds: a miss)", 1, 0, { mg_mut_unwatched, stb_get_miss, NULL, NULL }, 0 },
    { "mut_untracked_key", "on_mutation, key not watched (GLib: emit, no handler)", 1, 0, { mg_mut_untracked_key, NULL, gl_mut_unwatched, NULL }, 0 },
    { "ledger_clone",  "ledger clone (stb_ds: memcpy)", 1, 0, { mg_ledger_clone, memcpy_ledger_clone, NULL, NULL }, 100000 },
    { "ledger_equal",  "ledger equal",                  1, 0, { mg_ledger_equal, NULL, NULL, NULL }, 100000 },
    { "ledger_diff",   "ledger diff, 1% differ",        1, 0, { mg_ledger_diff, NULL, NULL, NULL }, 100000 },
    { "ledger_prune",  "ledger prune, 1/4 dead",        1, 0, { mg_ledger_prune, NULL, NULL, NULL }, 100000 },
    { "ledger_store",  "ledger store_attr, pointer value", 1, 0, { mg_ledger_vstore, NULL, NULL, NULL }, 100000 },
    { "ledger_store_sized", "ledger store_attr, sized value", 1, 1, { mg_ledger_vstore, NULL, NULL, NULL }, 100000 },
    { "ledger_load",   "ledger load_attr, pointer value", 1, 0, { mg_ledger_vload, NULL, NULL, NULL }, 100000 },
    { "ledger_load_sized", "ledger load, sized value (copy)", 1, 1, { mg_ledger_vload, NULL, NULL, NULL }, 100000 },
    { "ledger_clone_1w", "ledger clone, 1 pointer write/object", 1, 0, { mg_ledger_vclone, NULL, NULL, NULL }, 100000 },
    { "ledger_clone_sized", "ledger clone, 1 sized write/object", 1, 1, { mg_ledger_vclone, NULL, NULL, NULL }, 100000 },
    { "ledger_apply",  "ledger apply, pointer, callback", 1, 0, { mg_ledger_vapply, NULL, NULL, NULL }, 100000 },
    { "ledger_apply_sized", "ledger apply, sized, into field", 1, 1, { mg_ledger_vapply, NULL, NULL, NULL }, 100000 },
    { "death_t1",      "death, key in 1 table",         0, 1, { mg_death, stb_death, gl_death, NULL }, 0 },
    { "death_t4",      "death, key in 4 tables",        0, 4, { mg_death, stb_death, gl_death, NULL }, 0 },
    { "death_t16",     "death, key in 16 tables",       0, 16, { mg_death, stb_death, gl_death, NULL }, 0 },
    { "death_t1_u10k", "death, 1 table + 10K unrelated", 0, -1, { mg_death, stb_death, gl_death, NULL }, 0 },
    { "death_unknown", "death, never registered",       0, 0, { mg_death_unknown, NULL, NULL, NULL }, 0 },
    { "ref_make",      "ref make (GLib: add_weak_pointer)", 0, 0, { mg_ref_make, NULL, gl_ref_make, NULL }, 0 },
    { "ref_get_alive", "ref get, alive (GLib: a load)", 0, 0, { mg_ref_get, NULL, gl_ref_get, NULL }, 0 },
    { "ref_get_dead",  "ref get, dead (GLib: a load)",  0, 1, { mg_ref_get, NULL, gl_ref_get, NULL }, 0 },
    { "mut_w1",        "on_mutation + re-arm, 1 watcher", 0, 1, { mg_mut_watched, NULL, gl_mut_watched, NULL }, 0 },
    { "mut_w8",        "on_mutation + re-arm, 8 watchers", 0, 8, { mg_mut_watched, NULL, gl_mut_watched, NULL }, 0 },
    { "watch",         "watch",                         0, 0, { mg_watch, NULL, gl_watch, NULL }, 0 },
    { "gen_tag",       "gen tag",                       0, 0, { mg_gen_tag, stb_gen_tag, gl_gen_tag, NULL }, 0 },
    { "gen_is_current", "gen check",                    0, 0, { mg_gen_check, stb_gen_check, gl_gen_check, NULL }, 0 },
    { "scope_d1",      "scope enter+exit, depth 1",     0, 1, { mg_scope_enter_exit, NULL, NULL, NULL }, 0 },
    { "scope_d16",     "scope enter+exit, depth 16",    0, 16, { mg_scope_enter_exit, NULL, NULL, NULL }, 0 },
    { "scope_add8",    "scope add, 8 active names",     0, 8, { mg_scope_add, NULL, NULL, NULL }, 0 },
    { "cache_get_hit", "cache get, hit (1-object key)", 1, 0, { mg_cache_get_hit, NULL, NULL, NULL }, 0 },
    { "cache_inval",   "mutation drops 1 cache entry",   0, 0, { mg_inval, NULL, NULL, NULL }, 0 },
    { "handwired_inval", "mutation: watch + weak remove", 0, 1, { mg_inval, NULL, NULL, NULL }, 0 },
    { "ts_get_t1",     "ts: get_copy, 1 thread (GLib: GHashTable + GMutex)", 0, 1, { mg_ts_get, NULL, gl_ts_get, NULL }, 0 },
    { "ts_get_all",    "ts: get_copy, all cores (GLib: GHashTable + GMutex)", 0, 0, { mg_ts_get, NULL, gl_ts_get, NULL }, 0 },
    { "ts_overwrite_t1", "ts: overwrite, 1 thread (GLib: insert + GMutex)", 0, 1, { mg_ts_overwrite, NULL, gl_ts_overwrite, NULL }, 0 },
    { "ts_overwrite_all", "ts: overwrite, all cores (GLib: insert + GMutex)", 0, 0, { mg_ts_overwrite, NULL, gl_ts_overwrite, NULL }, 0 },
    { "ts_ref_get_t1", "ts: ref get_retained, 1 thread (GLib: GWeakRef)", 0, 1, { mg_ts_ref_get, NULL, gl_ts_ref_get, NULL }, 0 },
    { "ts_ref_get_all", "ts: ref get_retained, all cores (GLib: GWeakRef)", 0, 0, { mg_ts_ref_get, NULL, gl_ts_ref_get, NULL }, 0 },
};
#define NROWS (sizeof rows / sizeof rows[0])

static const size_t sizes[] = { 1000, 100000, 1000000 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int row_selected(const row *r)
{
    return (!opt.only || strstr(r->id, opt.only) != NULL) && in_list(opt.rows, r->id);
}
static int row_at_size(const row *r, size_t n)
{
    return row_selected(r) && (!r->max_n || n <= r->max_n) && !(opt.max_n && n > opt.max_n);
}

/* ---- Python: a co-process sampled like the C systems -----------------------
   bench/bench_py.py --serve reads commands on its stdin and answers one
   line each: "fixture sized N" / "fixture fixed" builds the Python side of
   a fixture and lists the rows it can sample ("rows id:sys id:sys ...");
   "sample ID N SYS" takes one sample (ns per operation, at least
   opt.min_ns); "mem N" gives bytes per entry. So a Python sample is one
   more system in a row's round, in the round's random order, with as many
   samples as the C systems. */
static FILE *py_in, *py_out;
static pid_t py_pid;
static char py_rows[8192];

static void py_start(void)
{
    int to[2], from[2];
    char ms[32];
    if (!opt.py) return;
    if (pipe(to) || pipe(from)) { perror("pipe"); exit(2); }
    snprintf(ms, sizeof ms, "%.0f", opt.min_ns);
    py_pid = fork();
    if (py_pid < 0) { perror("fork"); exit(2); }
    if (py_pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]); close(to[1]); close(from[0]); close(from[1]);
        execlp("python3", "python3", opt.py, "--serve", "--min-ns", ms, (char *)NULL);
        perror("python3");
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    py_in = fdopen(to[1], "w");
    py_out = fdopen(from[0], "r");
}
static int py_ask(char *line, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int py_ask(char *line, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (!py_in) return 0;
    va_start(ap, fmt);
    vfprintf(py_in, fmt, ap);
    va_end(ap);
    fflush(py_in);
    if (!fgets(line, (int)len, py_out)) {
        fprintf(stderr, "bench: python3 %s stopped; its columns are left empty\n", opt.py);
        fclose(py_in);
        py_in = NULL;
        return 0;
    }
    if (strncmp(line, "WRONG", 5) == 0) { fprintf(stderr, "bench: python: %s", line); exit(1); }
    return 1;
}
static void py_fixture(size_t n, int sized)
{
    py_rows[0] = 0;
    if (sized) py_ask(py_rows, sizeof py_rows, "fixture sized %lu\n", (unsigned long)n);
    else py_ask(py_rows, sizeof py_rows, "fixture fixed\n");
}
static int py_has(const char *id, int sys)
{
    char pat[128];
    snprintf(pat, sizeof pat, " %s:%s ", id, sys_id[sys]);
    return strstr(py_rows, pat) != NULL;
}
static double py_sample(const char *id, size_t n, int sys)
{
    char line[128];
    if (!py_ask(line, sizeof line, "sample %s %lu %s\n", id, (unsigned long)n, sys_id[sys])) return NAN;
    return strtod(line, NULL);
}
static void py_stop(void)
{
    if (!py_in) return;
    fprintf(py_in, "quit\n");
    fclose(py_in);
    fclose(py_out);
    waitpid(py_pid, NULL, 0);
}

/* Run one row on fixture f. Each round takes one sample of every system
   that has the row, C and Python, in a fresh random order, so drift in
   the machine's load hits all of them alike and no system always runs
   right after another; every sample is kept (the TSV has them all). */
static void run_row(const row *r, fx *f)
{
    int nsamp = f->n >= 1000000 ? opt.samples_big : opt.samples, k, sy, on[NSYS], order[NSYS], non = 0, i;
    result *res = result_for(r->id, r->label, f->n);
    double tmp[MAXSAMP];
    for (sy = 0; sy < NSYS; sy++) {
        on[sy] = sy < NSYS_C ? r->fn[sy] != NULL : py_has(r->id, sy);
        if (!sys_on(sy)) on[sy] = 0;
        if (on[sy]) order[non++] = sy;
    }
    res->nsamp = nsamp;
    for (k = 0; k < nsamp; k++) {
        for (i = non; i > 1; i--) {
            int j = (int)(rng() % (uint64_t)i), t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (i = 0; i < non; i++) {
            sy = order[i];
            res->smp[sy][k] = sy < NSYS_C ? r->fn[sy](f, r->arg) : py_sample(r->id, f->n, sy);
        }
    }
    for (sy = 0; sy < NSYS; sy++) {
        if (!on[sy]) continue;
        memcpy(tmp, res->smp[sy], (size_t)nsamp * sizeof tmp[0]);
        qsort(tmp, (size_t)nsamp, sizeof(double), cmp_double);
        res->ns[sy] = tmp[nsamp / 2];
    }
    fprintf(stderr, "  %-34.34s n=%-8lu mguard %8.1f  absl %8.1f  GLib %8.1f  py %8.1f ns\n", r->label,
            (unsigned long)f->n, res->ns[SYS_MG], res->ns[SYS_ABSL], res->ns[SYS_GLIB], res->ns[SYS_PYREF]);
}

/* ---- memory per entry at n entries, split by structure ------------------
   mguard: bytes requested through the context's allocator (a counting
   allocator), split by reading the context's and the table's capacities
   (this file compiles the implementation, so it sees them): registry
   records, registry index, table index, table entries, and the rest.
   stb_ds: bytes requested through STBDS_REALLOC. absl: bytes requested
   through its allocator. GLib: growth of malloc's in-use bytes (mallinfo2;
   GLib has no allocator hook), which includes malloc's own headers (so
   mguard's heap growth is given too). Python: tracemalloc. */
static long long counted_live;
static void *cnt_realloc(void *p, size_t n, void *user)
{
    bench_hdr *h = p ? (bench_hdr *)p - 1 : NULL;
    long long old = h ? (long long)h->size : 0;
    bench_hdr *nh = (bench_hdr *)realloc(h, sizeof *nh + n);
    (void)user;
    if (!nh) return NULL;
    nh->size = n;
    counted_live += (long long)n - old;
    return nh + 1;
}
static void cnt_free(void *p, void *user)
{
    (void)user;
    if (!p) return;
    counted_live -= (long long)((bench_hdr *)p - 1)->size;
    free((bench_hdr *)p - 1);
}
/* In-use bytes of the heap and of mmapped blocks (large arrays). */
static long long heap_now(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long long)mi.uordblks + (long long)mi.hblkhd;
}

static void mem_put(const char *id, const char *label, size_t n, int sys, double v)
{
    result *r = result_for(id, label, n);
    r->ns[sys] = v;
    r->smp[sys][0] = v;
    r->nsamp = 1;
}
static double kx_bytes(const mguard_ctx *c)
{
    size_t cap = MGUARD__KX_CAP(&c->kx);
    return cap ? (double)MGUARD__KX_BYTES(cap) : 0;
}

/* compute of the memory row: the value depends on its key and on `user`,
   one further object */
static mguard_status mem_compute_dep(mguard_cache_job *job, void *value, void *user)
{
    *(long *)value = OBJ_ID(mguard_cache_job_key(job, 0));
    return mguard_cache_job_depend(job, user, NULL);
}
static void measure_memory(size_t n)
{
    void **objs = new_objs(n);
    mguard_ctx_desc d;
    mguard_ctx *c;
    mguard_weak *t;
    stb_kv *hm = NULL;
    GHashTable *gt;
    void *am;
    long long h0, b0;
    double dn = (double)n, reg, regix, tent, side;
    size_t i;
    int z;
    char line[512];
    memset(&d, 0, sizeof d);
    d.quiet = true;
    d.allocator.realloc_fn = cnt_realloc;
    d.allocator.free_fn = cnt_free;
    c = mguard_ctx_create(&d);
    b0 = counted_live;
    t = mg_table(c);
    for (i = 0; i < n; i++) { long v = (long)i; mguard_weak_set(t, objs[i], &v); }
    reg = (double)c->capobjs * sizeof(mguard__obj);
    regix = kx_bytes(c);
    tent = (double)t->cap * (sizeof(mguard__oelem) + (double)t->vstride);
    mem_put("mem_entry", "bytes/entry: weak table entry", n, SYS_MG, (double)(counted_live - b0) / dn);
    mem_put("mem_entry_registry", "  mguard: registry records", n, SYS_MG, reg / dn);
    mem_put("mem_entry_index", "  mguard: the context's index", n, SYS_MG, regix / dn);
    mem_put("mem_entry_order", "  mguard: the table's order", n, SYS_MG, tent / dn);
    mem_put("mem_entry_other", "  mguard: the rest", n, SYS_MG, ((double)(counted_live - b0) - reg - regix - tent) / dn);
    mguard_ctx_destroy(c);
    h0 = heap_now();
    c = mg_ctx();
    t = mg_table(c);
    for (i = 0; i < n; i++) { long v = (long)i; mguard_weak_set(t, objs[i], &v); }
    mem_put("mem_entry_heap", "bytes/entry: weak table entry, malloc heap growth", n, SYS_MG, (double)(heap_now() - h0) / dn);
    mguard_ctx_destroy(c);
    /* stb_ds */
    h0 = heap_now();
    b0 = stb_live_bytes;
    for (i = 0; i < n; i++) stbds_hmput(hm, objs[i], (long)i);
    mem_put("mem_entry", "bytes/entry: weak table entry", n, SYS_STB, (double)(stb_live_bytes - b0) / dn);
    mem_put("mem_entry_heap", "bytes/entry: weak table entry, malloc heap growth", n, SYS_STB, (double)(heap_now() - h0) / dn);
    stbds_hmfree(hm);
    /* absl */
    h0 = heap_now();
    b0 = absl_live_bytes();
    am = absl_map_new();
    absl_set(am, objs, n, offsetof(BenchObj, id));
    mem_put("mem_entry", "bytes/entry: weak table entry", n, SYS_ABSL, (double)(absl_live_bytes() - b0) / dn);
    mem_put("mem_entry_heap", "bytes/entry: weak table entry, malloc heap growth", n, SYS_ABSL, (double)(heap_now() - h0) / dn);
    absl_map_free(am);
    /* GLib */
    h0 = heap_now();
    gt = gl_new();
    for (i = 0; i < n; i++) gl_set(gt, objs[i], (long)i + 1);
    mem_put("mem_entry", "bytes/entry: weak table entry", n, SYS_GLIB, (double)(heap_now() - h0) / dn);
    mem_put("mem_entry_heap", "bytes/entry: weak table entry, malloc heap growth", n, SYS_GLIB, (double)(heap_now() - h0) / dn);
    gl_free(gt);

    /* a tracked object: one watcher each */
    c = mguard_ctx_create(&d);
    b0 = counted_live;
    for (i = 0; i < n; i++) mguard_watch(c, objs[i], guards[0], mg_invalidate, NULL);
    reg = (double)c->capobjs * sizeof(mguard__obj);
    regix = kx_bytes(c);
    side = (double)c->capsides * sizeof(mguard__side);
    mem_put("mem_tracked", "bytes/object: tracked, 1 watcher", n, SYS_MG, (double)(counted_live - b0) / dn);
    mem_put("mem_tracked_registry", "  mguard: registry records", n, SYS_MG, reg / dn);
    mem_put("mem_tracked_registry_index", "  mguard: the context's index", n, SYS_MG, regix / dn);
    mem_put("mem_tracked_side", "  mguard: side records", n, SYS_MG, side / dn);
    mem_put("mem_tracked_watchers", "  mguard: watcher lists", n, SYS_MG, ((double)(counted_live - b0) - reg - regix - side) / dn);
    mguard_ctx_destroy(c);
    h0 = heap_now();
    for (i = 0; i < n; i++) g_signal_connect(objs[i], "mutated", G_CALLBACK(gl_handler), guards[0]);
    mem_put("mem_tracked", "bytes/object: tracked, 1 watcher", n, SYS_GLIB, (double)(heap_now() - h0) / dn);
    for (i = 0; i < n; i++) g_signal_handlers_disconnect_matched(objs[i], G_SIGNAL_MATCH_FUNC, 0, 0, NULL, (gpointer)gl_handler, NULL);

    /* guarded caches: n entries of a one-key cache (long values), whose
       keys a weak table of the same context already holds (so the keys'
       registry records exist before; what the cache adds to the registry
       and the side records is counted), with no further dependency, and
       with one further dependency declared by mguard_cache_job_depend (the
       next key object, whole: a further object the registry already
       knows) */
    for (z = 0; z < 2; z++) {
        mguard_cache *k;
        double reg0, side0;
        c = mguard_ctx_create(&d);
        t = mg_table(c);
        for (i = 0; i < n; i++) { long v = (long)i; mguard_weak_set(t, objs[i], &v); }
        reg0 = (double)c->capobjs * sizeof(mguard__obj) + kx_bytes(c);
        side0 = (double)c->capsides * sizeof(mguard__side);
        b0 = counted_live;
        k = mg_cache(c);
        for (i = 0; i < n; i++) {
            const void *key = objs[i];
            mguard_status st = MGUARD_OK;
            if (z == 0) {
                long v = (long)i;
                st = mguard_cache_set(k, &key, 1, &v, 0);
            } else {
                CHECK(mguard_cache_get_or_compute(k, &key, 1, mem_compute_dep, objs[(i + 1) % n], &st) != NULL, "mem cache compute");
            }
            CHECK(st == MGUARD_OK, "mem cache store");
        }
        CHECK(mguard_cache_count(k) == n, "mem cache count");
        reg = (double)c->capobjs * sizeof(mguard__obj) + kx_bytes(c) - reg0;
        side = (double)c->capsides * sizeof(mguard__side) - side0;
        if (z == 0) {
            mem_put("mem_cache_entry", "bytes/entry: cache, 1 key (keys held by a weak table)", n, SYS_MG, (double)(counted_live - b0) / dn);
        } else {
            mem_put("mem_cache_entry_dep", "bytes/entry: cache, 1 key + 1 further dependency (keys held by a weak table)", n, SYS_MG, (double)(counted_live - b0) / dn);
            mem_put("mem_cache_entry_dep_registry", "  mguard: registry growth (records + index)", n, SYS_MG, reg / dn);
            mem_put("mem_cache_entry_dep_side", "  mguard: side records growth", n, SYS_MG, side / dn);
            mem_put("mem_cache_entry_dep_other", "  mguard: the rest (entries, links, cache index)", n, SYS_MG, ((double)(counted_live - b0) - reg - side) / dn);
        }
        mguard_ctx_destroy(c);
    }
    free_objs(objs, n);
    /* Python */
    if (py_ask(line, sizeof line, "mem %lu\n", (unsigned long)n)) {
        double wkd, ref, tr;
        if (sscanf(line, "%lf %lf %lf", &wkd, &ref, &tr) == 3) {
            mem_put("mem_entry", "bytes/entry: weak table entry", n, SYS_PYWKD, wkd);
            mem_put("mem_entry", "bytes/entry: weak table entry", n, SYS_PYREF, ref);
            mem_put("mem_tracked", "bytes/object: tracked, 1 watcher", n, SYS_PYREF, tr);
        }
    }
}

/* ---- output ------------------------------------------------------------------ */
static const char *fmt_n(size_t n)
{
    static char b[4][32];
    static int k;
    char *s = b[k++ & 3];
    if (n >= 1000000 && n % 1000000 == 0) snprintf(s, 32, "%luM", (unsigned long)(n / 1000000));
    else if (n >= 1000 && n % 1000 == 0) snprintf(s, 32, "%luK", (unsigned long)(n / 1000));
    else snprintf(s, 32, "%lu", (unsigned long)n);
    return s;
}

static void print_machine(FILE *out, const char *pfx)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256], model[256] = "unknown";
    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) { snprintf(model, sizeof model, "%s", c + 2); model[strcspn(model, "\n")] = 0; }
                break;
            }
        fclose(f);
    }
    fprintf(out, "%scpu: %s, %ld online cores; compiler: %s; mguard %s; GLib %u.%u.%u\n", pfx, model,
            sysconf(_SC_NPROCESSORS_ONLN),
#ifdef __VERSION__
            "gcc/clang " __VERSION__,
#else
            "unknown",
#endif
            MGUARD_VERSION_STRING, glib_major_version, glib_minor_version, glib_micro_version);
}

/* Every sample of every row: "id n system sample value label", value in
   ns per operation (bytes for the mem_ rows). bench/tsv2md.py turns one or
   more of these files into the table (medians, min-max, ratios taken per
   round) and the medians TSV the charts are drawn from. */
static void write_tsv(const char *path)
{
    FILE *f = fopen(path, "w");
    int i, s, k;
    if (!f) { fprintf(stderr, "bench: cannot write %s\n", path); return; }
    print_machine(f, "# ");
    fprintf(f, "# %d samples per figure (%d at 1M keys), each >= %.0f ms; systems in a random order per round\n",
            opt.samples, opt.samples_big, opt.min_ns / 1e6);
    fprintf(f, "id\tn\tsystem\tsample\tvalue\tlabel\n");
    for (i = 0; i < nresults; i++) {
        result *r = &results[i];
        for (s = 0; s < NSYS; s++) {
            if (isnan(r->ns[s])) continue;
            for (k = 0; k < r->nsamp; k++)
                fprintf(f, "%s\t%lu\t%s\t%d\t%.3f\t%s\n", r->id, (unsigned long)r->n, sys_id[s], k, r->smp[s][k], r->label);
        }
    }
    fclose(f);
    fprintf(stderr, "wrote %s\n", path);
}

/* ---- --ir: fixed work for callgrind -------------------------------------------
   Each core row's operation runs a known number of times in its own
   noinline function ir_<system>_<row>, its setup outside it, so
   `callgrind_annotate --inclusive=yes` gives the instructions of that
   many operations (loop included). The program prints "name ops" for each
   function; bench/ir.sh divides. Weak-table rows at 100K keys (IR_N;
   --ir-n sets it, and --sys their systems), with ir_mguard_cache_get_hit_n,
   a one-key cache's hit over the same keys in the same order as
   ir_mguard_get_hit;
   death, refs, trackers, generations and scopes with FIX_N objects. GLib's
   death is given net of a second dispose of the same objects
   (ir_glib_dispose_base), as in the timed rows. */
#define IR_N 100000
#define IR_FN(name) __attribute__((noinline)) static void name
static volatile long ir_sink;
static void ir_ops(const char *name, size_t ops) { printf("%s\t%lu\n", name, (unsigned long)ops); }

IR_FN(ir_mguard_get_hit)(fx *f) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += *(const long *)mguard_weak_get(f->mt, f->look[i]); ir_sink = s; }
IR_FN(ir_stbds_get_hit)(fx *f) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += f->hm[stbds_hmgeti(f->hm, f->look[i])].value; ir_sink = s; }
IR_FN(ir_glib_get_hit)(fx *f) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += (long)(intptr_t)g_hash_table_lookup(f->gt, f->look[i]); ir_sink = s; }
IR_FN(ir_absl_get_hit)(fx *f) { ir_sink = absl_get_hit(f->am, f->look, f->n); }
IR_FN(ir_mguard_get_miss)(fx *f) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += mguard_weak_get(f->mt, f->miss[i]) != NULL; ir_sink = s; }
IR_FN(ir_stbds_get_miss)(fx *f) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += stbds_hmgeti(f->hm, f->miss[i]) >= 0; ir_sink = s; }
IR_FN(ir_glib_get_miss)(fx *f) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += g_hash_table_lookup(f->gt, f->miss[i]) != NULL; ir_sink = s; }
IR_FN(ir_absl_get_miss)(fx *f) { ir_sink = (long)absl_get_miss(f->am, f->miss, f->n); }
IR_FN(ir_mguard_overwrite)(fx *f) { size_t i; for (i = 0; i < f->n; i++) { long v = OBJ_ID(f->look[i]); mguard_weak_set(f->mt, f->look[i], &v); } }
IR_FN(ir_stbds_overwrite)(fx *f) { size_t i; for (i = 0; i < f->n; i++) stbds_hmput(f->hm, f->look[i], OBJ_ID(f->look[i])); }
IR_FN(ir_glib_overwrite)(fx *f) { size_t i; for (i = 0; i < f->n; i++) gl_set(f->gt, f->look[i], OBJ_ID(f->look[i])); }
IR_FN(ir_absl_overwrite)(fx *f) { ir_sink = (long)absl_set(f->am, f->look, f->n, offsetof(BenchObj, id)); }
IR_FN(ir_mguard_iterate)(fx *f) { long s = 0; mguard_weak_iter it = mguard_weak_iterate(f->mt); while (mguard_weak_next(&it)) s += *(const long *)it.value; ir_sink = s; }
IR_FN(ir_stbds_iterate)(fx *f) { long s = 0; ptrdiff_t i, n = stbds_hmlen(f->hm); for (i = 0; i < n; i++) s += f->hm[i].value; ir_sink = s; }
IR_FN(ir_glib_iterate)(fx *f) { long s = 0; GHashTableIter it; gpointer k, v; g_hash_table_iter_init(&it, f->gt); while (g_hash_table_iter_next(&it, &k, &v)) s += (long)(intptr_t)v; ir_sink = s; }
IR_FN(ir_absl_iterate)(fx *f) { ir_sink = absl_iterate(f->am); }
IR_FN(ir_mguard_set_new)(fx *f, mguard_weak *t) { mg_fill(t, f->ins, f->n); }
IR_FN(ir_stbds_set_new)(fx *f, stb_kv **hm) { size_t i; for (i = 0; i < f->n; i++) stbds_hmput(*hm, f->ins[i], OBJ_ID(f->ins[i])); }
IR_FN(ir_glib_set_new)(fx *f, GHashTable *t) { size_t i; for (i = 0; i < f->n; i++) gl_set(t, f->ins[i], OBJ_ID(f->ins[i])); }
IR_FN(ir_absl_set_new)(fx *f, void *m) { ir_sink = (long)absl_set(m, f->ins, f->n, offsetof(BenchObj, id)); }
IR_FN(ir_mguard_remove)(fx *f, mguard_weak *t) { size_t i; for (i = 0; i < f->n; i++) mguard_weak_take(t, f->look[i], NULL); }
IR_FN(ir_stbds_remove)(fx *f, stb_kv **hm) { size_t i; for (i = 0; i < f->n; i++) (void)stbds_hmdel(*hm, f->look[i]); }
IR_FN(ir_glib_remove)(fx *f, GHashTable *t) { size_t i; for (i = 0; i < f->n; i++) glw_remove(t, f->look[i]); }
IR_FN(ir_absl_remove)(fx *f, void *m) { ir_sink = (long)absl_remove(m, f->look, f->n); }
IR_FN(ir_mguard_mut_unwatched)(fx *f) { size_t i; for (i = 0; i < f->n; i++) mguard_on_mutation(f->ctx, f->miss[i], "x"); }
IR_FN(ir_mguard_mut_untracked_key)(fx *f) { size_t i; for (i = 0; i < f->n; i++) mguard_on_mutation(f->ctx, f->look[i], "x"); }
IR_FN(ir_glib_mut_untracked_key)(fx *f) { size_t i; for (i = 0; i < f->n; i++) g_signal_emit(f->look[i], sig_mutated, 0, "x"); }
/* death: 4 bodies that differ only in their mark (no folding) */
static volatile int ir_mark;
IR_FN(ir_mguard_death_t1)(fx *f, mguard_ctx *c) { size_t i; ir_mark = 1; for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->ins[i]); }
IR_FN(ir_mguard_death_t4)(fx *f, mguard_ctx *c) { size_t i; ir_mark = 4; for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->ins[i]); }
IR_FN(ir_mguard_death_t16)(fx *f, mguard_ctx *c) { size_t i; ir_mark = 16; for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->ins[i]); }
IR_FN(ir_mguard_death_t1_u10k)(fx *f, mguard_ctx *c) { size_t i; ir_mark = -1; for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->ins[i]); }
IR_FN(ir_mguard_death_unknown)(fx *f, mguard_ctx *c) { size_t i; ir_mark = 0; for (i = 0; i < f->n; i++) mguard_on_destroy(c, f->miss[i]); }
IR_FN(ir_glib_death_t1)(fx *f) { size_t i; ir_mark = 1; for (i = 0; i < f->n; i++) g_object_run_dispose((GObject *)f->ins[i]); }
IR_FN(ir_glib_death_t4)(fx *f) { size_t i; ir_mark = 4; for (i = 0; i < f->n; i++) g_object_run_dispose((GObject *)f->ins[i]); }
IR_FN(ir_glib_death_t16)(fx *f) { size_t i; ir_mark = 16; for (i = 0; i < f->n; i++) g_object_run_dispose((GObject *)f->ins[i]); }
IR_FN(ir_glib_dispose_base)(fx *f) { size_t i; ir_mark = 0; for (i = 0; i < f->n; i++) g_object_run_dispose((GObject *)f->ins[i]); }
IR_FN(ir_mguard_ref_make)(fx *f, mguard_ctx *c, mguard_ref *r) { size_t i; for (i = 0; i < f->n; i++) r[i] = mguard_ref_make(c, f->ins[i]); }
IR_FN(ir_glib_ref_make)(fx *f, gpointer *r) { size_t i; for (i = 0; i < f->n; i++) g_object_add_weak_pointer((GObject *)f->ins[i], &r[i]); }
IR_FN(ir_mguard_ref_get_alive)(fx *f, mguard_ctx *c, mguard_ref *r) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += mguard_ref_get(c, r[i]) != NULL; ir_sink = s; }
IR_FN(ir_mguard_mut_w1)(fx *f, mguard_ctx *c) { size_t i; for (i = 0; i < f->n; i++) { mguard_on_mutation(c, f->ins[i], "x"); mguard_watch(c, f->ins[i], guards[0], mg_invalidate, NULL); } }
IR_FN(ir_glib_mut_w1)(fx *f) { size_t i; for (i = 0; i < f->n; i++) g_signal_emit(f->ins[i], sig_mutated, 0, "x"); }
IR_FN(ir_mguard_watch)(fx *f, mguard_ctx *c) { size_t i; for (i = 0; i < f->n; i++) mguard_watch(c, f->ins[i], guards[0], mg_invalidate, NULL); }
IR_FN(ir_glib_watch)(fx *f, gulong *ids) { size_t i; for (i = 0; i < f->n; i++) ids[i] = g_signal_connect(f->ins[i], "mutated", G_CALLBACK(gl_handler), guards[0]); }
IR_FN(ir_mguard_gen_tag)(fx *f, mguard_ctx *c) { size_t i; for (i = 0; i < f->n; i++) mguard_gen_tag(c, f->ins[i]); }
IR_FN(ir_glib_gen_tag)(fx *f) { size_t i; for (i = 0; i < f->n; i++) g_object_set_qdata(f->ins[i], gen_quark, GINT_TO_POINTER(2)); }
IR_FN(ir_mguard_gen_is_current)(fx *f, mguard_ctx *c) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += mguard_gen_is_dynamic(c, f->ins[i], NULL); ir_sink = s; }
IR_FN(ir_glib_gen_is_current)(fx *f) { size_t i; long s = 0; for (i = 0; i < f->n; i++) s += g_object_get_qdata(f->ins[i], gen_quark) == GINT_TO_POINTER(2); ir_sink = s; }
IR_FN(ir_mguard_scope_d1)(fx *f, mguard_scope *sc) { size_t i; for (i = 0; i < f->n; i++) { mguard_scope_enter(sc, &scope_comps[0]); mguard_scope_exit(sc, &scope_comps[0]); } }
IR_FN(ir_mguard_scope_add8)(fx *f, mguard_scope *sc) { size_t i; for (i = 0; i < f->n; i++) mguard_scope_add(sc, "flops", 1.0); }
/* guarded caches (issue 15): a hit on a one-key cache; a mutation dropping
   one entry, by the cache and by the hand-wired pattern it replaces */
IR_FN(ir_mguard_cache_get_hit_n)(fx *f, mguard_cache *k) { size_t i; long s = 0; for (i = 0; i < f->n; i++) { const void *key = f->look[i]; s += *(const long *)mguard_cache_get(k, &key, 1); } ir_sink = s; }
IR_FN(ir_mguard_cache_get_hit)(fx *f, mguard_cache *k) { size_t i; long s = 0; for (i = 0; i < f->n; i++) { const void *key = f->keys[i]; s += *(const long *)mguard_cache_get(k, &key, 1); } ir_sink = s; }
IR_FN(ir_mguard_cache_inval)(fx *f, mguard_ctx *c) { size_t i; ir_mark = 100; for (i = 0; i < f->n; i++) mguard_on_mutation(c, f->keys[i], "x"); }
IR_FN(ir_mguard_handwired_inval)(fx *f, mguard_ctx *c) { size_t i; ir_mark = 101; for (i = 0; i < f->n; i++) mguard_on_mutation(c, f->keys[i], "x"); }

static mguard_ctx *ir_death_ctx(fx *f, int k)
{
    mguard_ctx *c = mg_ctx();
    int j;
    size_t i;
    if (k < 0) for (i = 0; i < UNRELATED; i++) mg_table(c);
    for (j = 0; j < (k < 0 ? 1 : k); j++) mg_fill(mg_table(c), f->keys, f->n);
    return c;
}
static void ir_glib_tables(fx *f, int k, GHashTable **t)
{
    int j;
    size_t i;
    for (j = 0; j < k; j++) { t[j] = gl_new(); for (i = 0; i < f->n; i++) gl_set(t[j], f->keys[i], 1); }
}

static void run_ir(void)
{
    fx f, d;
    mguard_ctx *c;
    mguard_weak *t;
    stb_kv *hm = NULL;
    GHashTable *gt, *gts[16];
    void *am;
    mguard_ref *r;
    gpointer *wp;
    gulong *ids;
    mguard_scope *sc;
    size_t i;
    int j;

    /* the weak-table rows at ir_n keys, for the systems selected (--sys) */
    fx_init(&f, opt.ir_n, 1);
    if (sys_on(SYS_MG)) { ir_mguard_get_hit(&f); ir_mguard_get_miss(&f); ir_mguard_overwrite(&f); ir_mguard_iterate(&f); }
    if (sys_on(SYS_STB)) { ir_stbds_get_hit(&f); ir_stbds_get_miss(&f); ir_stbds_overwrite(&f); ir_stbds_iterate(&f); }
    if (sys_on(SYS_GLIB)) { ir_glib_get_hit(&f); ir_glib_get_miss(&f); ir_glib_overwrite(&f); ir_glib_iterate(&f); }
    if (sys_on(SYS_ABSL)) { ir_absl_get_hit(&f); ir_absl_get_miss(&f); ir_absl_overwrite(&f); ir_absl_iterate(&f); }
    if (sys_on(SYS_MG)) { ir_mguard_mut_unwatched(&f); ir_mguard_mut_untracked_key(&f); }
    if (sys_on(SYS_GLIB)) ir_glib_mut_untracked_key(&f);
    if (sys_on(SYS_MG)) {
        t = mg_table(f.live); ir_mguard_set_new(&f, t); ir_mguard_remove(&f, t);
        CHECK(mguard_weak_count(t) == 0, "ir remove"); mguard_weak_destroy(t);
    }
    if (sys_on(SYS_STB)) { ir_stbds_set_new(&f, &hm); ir_stbds_remove(&f, &hm); CHECK(stbds_hmlen(hm) == 0, "ir remove"); stbds_hmfree(hm); }
    if (sys_on(SYS_GLIB)) { gt = gl_new(); ir_glib_set_new(&f, gt); ir_glib_remove(&f, gt); CHECK(g_hash_table_size(gt) == 0, "ir remove"); gl_free(gt); }
    if (sys_on(SYS_ABSL)) { am = absl_map_new(); ir_absl_set_new(&f, am); ir_absl_remove(&f, am); CHECK(absl_map_size(am) == 0, "ir remove"); absl_map_free(am); }
    if (sys_on(SYS_MG)) {
        /* a hit on a one-key cache over the same keys in the same order as
           ir_mguard_get_hit (the cache in its own context, as the timed row) */
        mguard_ctx *cc = mg_ctx();
        mguard_cache *k = mg_cache(cc);
        for (i = 0; i < f.n; i++) {
            long v = OBJ_ID(f.ins[i]);
            const void *key = f.ins[i];
            if (mguard_cache_set(k, &key, 1, &v, 0) != MGUARD_OK) fail("mguard cache set");
        }
        ir_mguard_cache_get_hit_n(&f, k);
        CHECK(ir_sink == f.sum, "ir cache get sum");
        mguard_ctx_destroy(cc);
    }
    fx_free(&f);
    {
        static const char *const weak[] = { "get_hit", "get_miss", "overwrite", "iterate", "set_new", "remove" };
        static const int sys[] = { SYS_MG, SYS_STB, SYS_GLIB, SYS_ABSL };
        char name[64];
        size_t a, b;
        for (a = 0; a < sizeof weak / sizeof weak[0]; a++)
            for (b = 0; b < 4; b++)
                if (sys_on(sys[b])) { snprintf(name, sizeof name, "ir_%s_%s", sys_id[sys[b]], weak[a]); ir_ops(name, opt.ir_n); }
        if (sys_on(SYS_MG)) {
            ir_ops("ir_mguard_mut_unwatched", opt.ir_n);
            ir_ops("ir_mguard_mut_untracked_key", opt.ir_n);
            ir_ops("ir_mguard_cache_get_hit_n", opt.ir_n);
        }
        if (sys_on(SYS_GLIB)) ir_ops("ir_glib_mut_untracked_key", opt.ir_n);
    }

    fx_init(&d, FIX_N, 0);
    c = ir_death_ctx(&d, 1); ir_mguard_death_t1(&d, c); CHECK(mg_objects(c) == 0, "ir death"); mguard_ctx_destroy(c);
    c = ir_death_ctx(&d, 4); ir_mguard_death_t4(&d, c); CHECK(mg_objects(c) == 0, "ir death"); mguard_ctx_destroy(c);
    c = ir_death_ctx(&d, 16); ir_mguard_death_t16(&d, c); CHECK(mg_objects(c) == 0, "ir death"); mguard_ctx_destroy(c);
    c = ir_death_ctx(&d, -1); ir_mguard_death_t1_u10k(&d, c); CHECK(mg_objects(c) == 0, "ir death"); mguard_ctx_destroy(c);
    c = ir_death_ctx(&d, 1); ir_mguard_death_unknown(&d, c); mguard_ctx_destroy(c);
    ir_glib_tables(&d, 1, gts); ir_glib_death_t1(&d); g_hash_table_destroy(gts[0]);
    ir_glib_tables(&d, 4, gts); ir_glib_death_t4(&d); for (j = 0; j < 4; j++) g_hash_table_destroy(gts[j]);
    ir_glib_tables(&d, 16, gts); ir_glib_death_t16(&d); for (j = 0; j < 16; j++) g_hash_table_destroy(gts[j]);
    ir_glib_dispose_base(&d);
    c = mg_ctx();
    r = (mguard_ref *)malloc(d.n * sizeof *r);
    ir_mguard_ref_make(&d, c, r); ir_mguard_ref_get_alive(&d, c, r);
    mguard_ctx_destroy(c);
    free(r);
    wp = (gpointer *)calloc(d.n, sizeof *wp);
    for (i = 0; i < d.n; i++) wp[i] = d.ins[i];
    ir_glib_ref_make(&d, wp);
    for (i = 0; i < d.n; i++) g_object_remove_weak_pointer((GObject *)d.ins[i], &wp[i]);
    free(wp);
    c = mg_ctx();
    for (i = 0; i < d.n; i++) mguard_watch(c, d.keys[i], guards[0], mg_invalidate, NULL);
    ir_mguard_mut_w1(&d, c);
    for (i = 0; i < d.n; i++) mguard_on_mutation(c, d.keys[i], "x");
    ir_mguard_watch(&d, c);
    mguard_ctx_destroy(c);
    for (i = 0; i < d.n; i++) g_signal_connect(d.keys[i], "mutated", G_CALLBACK(gl_handler), guards[0]);
    ir_glib_mut_w1(&d);
    for (i = 0; i < d.n; i++) g_signal_handlers_disconnect_matched(d.keys[i], G_SIGNAL_MATCH_FUNC, 0, 0, NULL, (gpointer)gl_handler, NULL);
    ids = (gulong *)malloc(d.n * sizeof *ids);
    ir_glib_watch(&d, ids);
    for (i = 0; i < d.n; i++) g_signal_handler_disconnect(d.ins[i], ids[i]);
    free(ids);
    c = mg_ctx();
    mguard_gen_advance(c);
    ir_mguard_gen_tag(&d, c); ir_mguard_gen_is_current(&d, c);
    mguard_ctx_destroy(c);
    ir_glib_gen_tag(&d); ir_glib_gen_is_current(&d);
    for (i = 0; i < d.n; i++) g_object_set_qdata(d.keys[i], gen_quark, NULL);
    c = mg_ctx();
    sc = bench_scope(c, 0);
    ir_mguard_scope_d1(&d, sc);
    mguard_ctx_destroy(c);
    c = mg_ctx();
    sc = bench_scope(c, 7);
    ir_mguard_scope_add8(&d, sc);
    mguard_ctx_destroy(c);
    c = mg_ctx();
    {
        mguard_cache *k = mg_cache_d(c, count_dtor);
        for (i = 0; i < d.n; i++) {
            long v = (long)i;
            const void *key = d.keys[i];
            if (mguard_cache_set(k, &key, 1, &v, 0) != MGUARD_OK) fail("mguard cache set");
        }
        ir_mguard_cache_get_hit(&d, k);
        destroyed = 0;
        ir_mguard_cache_inval(&d, c);
        CHECK(mguard_cache_count(k) == 0 && destroyed == (long)d.n, "ir cache inval");
        bench_hand_table = mg_table_d(c, count_dtor);
        for (i = 0; i < d.n; i++) {
            long v = (long)i;
            if (mguard_weak_set(bench_hand_table, d.keys[i], &v) != MGUARD_OK) fail("hand-wired set");
            if (mguard_watch(c, d.keys[i], guards[0], hand_invalidate, NULL) != MGUARD_OK) fail("hand-wired watch");
        }
        destroyed = 0;
        ir_mguard_handwired_inval(&d, c);
        CHECK(mguard_weak_count(bench_hand_table) == 0 && destroyed == (long)d.n, "ir hand-wired inval");
    }
    mguard_ctx_destroy(c);
    fx_free(&d);
    {
        static const char *const fixed[] = {
            "ir_mguard_death_t1", "ir_mguard_death_t4", "ir_mguard_death_t16", "ir_mguard_death_t1_u10k",
            "ir_mguard_death_unknown", "ir_glib_death_t1", "ir_glib_death_t4", "ir_glib_death_t16",
            "ir_glib_dispose_base", "ir_mguard_ref_make", "ir_glib_ref_make", "ir_mguard_ref_get_alive",
            "ir_mguard_mut_w1", "ir_glib_mut_w1", "ir_mguard_watch", "ir_glib_watch", "ir_mguard_gen_tag",
            "ir_glib_gen_tag", "ir_mguard_gen_is_current", "ir_glib_gen_is_current", "ir_mguard_scope_d1",
            "ir_mguard_scope_add8", "ir_mguard_cache_get_hit", "ir_mguard_cache_inval", "ir_mguard_handwired_inval"
        };
        size_t a;
        for (a = 0; a < sizeof fixed / sizeof fixed[0]; a++) ir_ops(fixed[a], FIX_N);
    }
}

/* ---- main --------------------------------------------------------------------- */
int main(int argc, char **argv)
{
    int i, z;
    const char *e = getenv("BENCH_FULL");
    opt.full = e && *e && strcmp(e, "0") != 0;
    e = getenv("BENCH_QUICK");
    opt.quick = e && *e && strcmp(e, "0") != 0;
    opt.py = "bench/bench_py.py";
    opt.tsv = "build/bench-samples.tsv";
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0) opt.full = 1;
        else if (strcmp(argv[i], "--quick") == 0) opt.quick = 1;
        else if (strcmp(argv[i], "--no-py") == 0) opt.py = NULL;
        else if (strcmp(argv[i], "--py") == 0 && i + 1 < argc) opt.py = argv[++i];
        else if (strcmp(argv[i], "--tsv") == 0 && i + 1 < argc) opt.tsv = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) opt.only = argv[++i];
        else if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) opt.rows = argv[++i];
        else if (strcmp(argv[i], "--sys") == 0 && i + 1 < argc) opt.sys = argv[++i];
        else if (strcmp(argv[i], "--ir-n") == 0 && i + 1 < argc) opt.ir_n = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--max-n") == 0 && i + 1 < argc) opt.max_n = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--ir") == 0) opt.ir = 1;
        else if (strcmp(argv[i], "--mem-only") == 0) opt.mem_only = 1;
        else { fprintf(stderr, "usage: %s [--full|--quick] [--no-py] [--py SCRIPT] [--tsv FILE] [--only ID] [--rows ID,ID...] [--sys mguard|stbds|glib|absl|py_wkd|py_ref[,...]] [--max-n N] [--ir] [--ir-n N] [--mem-only]\n", argv[0]); return 2; }
    }
    /* Samples of at least 20 ms in every mode; the modes differ in how
       many (and --quick stops at 100K keys). */
    opt.samples = opt.full ? 11 : opt.quick ? 3 : 5;
    opt.samples_big = opt.full ? 5 : 3;
    opt.min_ns = 20e6;
    if (opt.quick && !opt.max_n) opt.max_n = 100000;
    gen_quark = g_quark_from_static_string("bench-generation");
    (void)bench_obj_get_type();
    if (!opt.ir_n) opt.ir_n = IR_N;
    if (opt.ir) { run_ir(); return 0; }
    signal(SIGPIPE, SIG_IGN);
    py_start();

    /* the table's order: sized rows by size, then the fixed rows */
    for (z = 0; z < (int)NSIZES && !opt.mem_only; z++)
        for (i = 0; i < (int)NROWS; i++)
            if (rows[i].sized && row_at_size(&rows[i], sizes[z]))
                result_for(rows[i].id, rows[i].label, sizes[z]);
    for (i = 0; i < (int)NROWS && !opt.mem_only; i++)
        if (!rows[i].sized && row_selected(&rows[i])) result_for(rows[i].id, rows[i].label, FIX_N);

    for (z = 0; z < (int)NSIZES && !opt.mem_only; z++) {
        fx f;
        int any = 0;
        for (i = 0; i < (int)NROWS; i++) any |= rows[i].sized && row_at_size(&rows[i], sizes[z]);
        if (!any) continue;
        fprintf(stderr, "rows at %s keys\n", fmt_n(sizes[z]));
        fx_init(&f, sizes[z], 1);
        cache_weak_el[0] = cache_weak_el[1] = 0;
        py_fixture(sizes[z], 1);
        for (i = 0; i < (int)NROWS; i++)
            if (rows[i].sized && row_at_size(&rows[i], sizes[z])) run_row(&rows[i], &f);
        if (cache_weak_el[1] > 0)
            fprintf(stderr, "  cache get hit / weak get hit, alternating passes: %.2fx\n", cache_weak_el[0] / cache_weak_el[1]);
        fx_free(&f);
    }
    {
        fx f;
        int any = 0;
        for (i = 0; i < (int)NROWS; i++) any |= !rows[i].sized && row_selected(&rows[i]);
        if (any && !opt.mem_only) {
            fprintf(stderr, "rows with %d objects\n", FIX_N);
            fx_init(&f, FIX_N, 0);
            py_fixture(FIX_N, 0);
            for (i = 0; i < (int)NROWS; i++)
                if (!rows[i].sized && row_selected(&rows[i])) run_row(&rows[i], &f);
            fx_free(&f);
        }
    }
    if (!opt.only && !opt.rows)
        for (z = 0; z < (int)NSIZES; z++)
            if (!opt.max_n || sizes[z] <= opt.max_n) measure_memory(sizes[z]);
    py_stop();
    if (opt.tsv) write_tsv(opt.tsv);
    return 0;
}
