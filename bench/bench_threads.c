/* bench_threads.c - thread-safe contexts against the default context and
   against GLib's GWeakRef, in one run (make bench-threads).

   Columns, each in ns per operation as one thread sees it: the latest
   thread's end minus the earliest thread's start (each thread reads the
   clock itself), over the operations one thread did (every thread does the
   same number); the median of several samples, the systems in a random
   order in each round, with the min-max of the thread-safe samples:
     before       the default context, the implementation built without the
                  lock layer (bench_threads_base.c calls the unlocked bodies):
                  the library as it was before thread-safe contexts
     default      the default context, as shipped (one branch per call)
     thread-safe  a context created with thread_safe = true (pthread mutex)
     glib         what a GLib program shares between threads: a GHashTable
                  under a GMutex (lookup; insert of a present key, the peer
                  of mguard_weak_set's overwrite) and GWeakRef
                  (g_weak_ref_get + g_object_unref, the peer of
                  mguard_ref_get_retained)
     stb_ds       raw stb_ds hmgeti on the same keys (the floor)
   Threads: 1, 2 and 4, but never more than the online cores (4 threads on
   2 cores measures time-slicing, not the lock).
   Rows with threads: "shared" runs every thread on one context (one GWeakRef
   per object, shared) and the same keys: the lock is contended; "own" gives
   each thread its own context (its own objects for GLib): uncontended. The
   default context cannot be shared, so it has only "own" rows.

   Every loop returns a checksum that is checked: a lookup that misses where
   it must hit fails the run.
   Usage: bench_threads [--full]
          bench_threads --ir OP before|default REPS
              run loop OP (0..5, the one-thread rows in order) REPS times
              with no timing, for valgrind --tool=callgrind: the
              instructions one call costs, with and without the lock layer
              (bench/ir_threads.sh, make bench-threads-ir) */
#define _GNU_SOURCE
#include <glib-object.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#define STB_DS_IMPLEMENTATION
#define STBDS_NO_SHORT_NAMES
#include "stb_ds.h"
#define MGUARD_STATIC              /* as in bench_threads_base.c: the same inlining */
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#define BENCH_OPS bench_ops_layer
#include "bench_threads_ops.h"

#define NKEYS 1024
#define MAXT 4

static int g_samples = 5;
static double g_sample_ns = 30e6;   /* one thread's sample: about 30 ms */

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

static void fail(const char *what)
{
    fprintf(stderr, "bench_threads: WRONG RESULT: %s\n", what);
    exit(1);
}

/* ---- keys: malloc'd objects whose first int is a reference count ------- */

static void *g_keys[MAXT][NKEYS];
static uint32_t g_order[NKEYS];

static void make_keys(void)
{
    uint64_t x = 0x2545F4914F6CDD1Dull;
    int t;
    size_t i;
    for (t = 0; t < MAXT; t++)
        for (i = 0; i < NKEYS; i++) {
            int *o = (int *)calloc(1, 64);
            *o = 1;
            g_keys[t][i] = o;
        }
    for (i = 0; i < NKEYS; i++) g_order[i] = (uint32_t)i;
    for (i = NKEYS; i > 1; i--) {
        size_t j;
        uint32_t tmp;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        j = (size_t)((x * 0x2545F4914F6CDD1Dull) % i);
        tmp = g_order[i - 1];
        g_order[i - 1] = g_order[j];
        g_order[j] = tmp;
    }
}

/* ---- GLib: what a GLib program shares between threads ----------------------
   weak_get, get_copy, weak_set: a GHashTable (g_direct_hash) under a GMutex,
   as a GLib program shares a map between threads: lookup, insert of a key
   already present (an overwrite, as mguard_weak_set on these keys).
   ref_get_retained: a GWeakRef per key (g_weak_ref_get + g_object_unref):
   GLib's thread-safe weak reference, the peer of mguard_ref_get_retained.
   ref_get has no GLib peer here: its single-threaded peer (a pointer
   cleared by g_object_add_weak_pointer, a plain load) is a row of
   bench/bench.c; it is not safe across threads. */

typedef struct glib_work {
    GObject *objs[NKEYS];
    GWeakRef refs[NKEYS];
    void *keys[NKEYS];
    GHashTable *ht;
    GMutex mu;
} glib_work;

static void *glib_setup(int unused, void **keys, size_t n)
{
    glib_work *w = (glib_work *)calloc(1, sizeof *w);
    size_t i;
    (void)unused;
    g_mutex_init(&w->mu);
    w->ht = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (i = 0; i < n; i++) {
        w->objs[i] = (GObject *)g_object_new(G_TYPE_OBJECT, NULL);
        g_weak_ref_init(&w->refs[i], w->objs[i]);
        w->keys[i] = keys[i];
        g_hash_table_insert(w->ht, keys[i], (gpointer)(intptr_t)(i + 1));   /* value + 1: NULL is a miss */
    }
    return w;
}

static void glib_teardown(void *vw)
{
    glib_work *w = (glib_work *)vw;
    size_t i;
    for (i = 0; i < NKEYS; i++) {
        g_weak_ref_clear(&w->refs[i]);
        g_object_unref(w->objs[i]);
    }
    g_hash_table_destroy(w->ht);
    g_mutex_clear(&w->mu);
    free(w);
}

static long glib_ref_get(void *vw, const uint32_t *order, size_t n, long reps)
{
    glib_work *w = (glib_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) {
            GObject *o = (GObject *)g_weak_ref_get(&w->refs[order[i]]);
            sum += o == w->objs[order[i]] ? (long)order[i] : -1000000;
            if (o) g_object_unref(o);
        }
    return sum;
}

static long glib_map_get(void *vw, const uint32_t *order, size_t n, long reps)
{
    glib_work *w = (glib_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) {
            gpointer v;
            g_mutex_lock(&w->mu);
            v = g_hash_table_lookup(w->ht, w->keys[order[i]]);
            g_mutex_unlock(&w->mu);
            sum += v ? (long)(intptr_t)v - 1 : -1000000;
        }
    return sum;
}

static long glib_map_set(void *vw, const uint32_t *order, size_t n, long reps)
{
    glib_work *w = (glib_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) {
            uint32_t k = order[i];
            g_mutex_lock(&w->mu);
            g_hash_table_insert(w->ht, w->keys[k], (gpointer)(intptr_t)(k + 1));
            g_mutex_unlock(&w->mu);
            sum += (long)k;
        }
    return sum;
}

static const bench_ops glib_ops = {
    glib_setup, glib_teardown,
    { glib_map_get, glib_map_get, glib_map_set, NULL, glib_ref_get, NULL }
};

/* ---- raw stb_ds -------------------------------------------------------- */

typedef struct stb_kv { void *key; long value; } stb_kv;
typedef struct stb_work { stb_kv *map; void **keys; } stb_work;

static void *stb_setup(int unused, void **keys, size_t n)
{
    stb_work *w = (stb_work *)calloc(1, sizeof *w);
    size_t i;
    (void)unused;
    w->keys = keys;
    for (i = 0; i < n; i++) stbds_hmput(w->map, keys[i], (long)i);
    return w;
}

static void stb_teardown(void *vw)
{
    stb_work *w = (stb_work *)vw;
    stbds_hmfree(w->map);
    free(w);
}

static long stb_get(void *vw, const uint32_t *order, size_t n, long reps)
{
    stb_work *w = (stb_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) {
            ptrdiff_t k = stbds_hmgeti(w->map, w->keys[order[i]]);
            sum += k >= 0 ? w->map[k].value : -1000000;
        }
    return sum;
}

static const bench_ops stb_ops = { stb_setup, stb_teardown, { stb_get, NULL, NULL, NULL, NULL, NULL } };

/* ---- running threads ------------------------------------------------------ */

typedef struct job {
    bench_loop_fn fn;
    void *w;
    long reps, sum;
    double t_start, t_end;   /* this thread's own clock readings */
    pthread_barrier_t *bar;
} job;

static void *job_run(void *arg)
{
    job *j = (job *)arg;
    pthread_barrier_wait(j->bar);
    j->t_start = now_ns();
    j->sum = j->fn(j->w, g_order, NKEYS, j->reps);
    j->t_end = now_ns();
    return NULL;
}

/* The skew of the last sample: the slowest thread's time over the
   fastest's (1: they ran side by side). */
static double g_last_skew = 1;

/* One sample: nthreads threads run op on ws[t] (all the same when shared);
   ns per operation per thread. Each thread reads the clock itself, after
   the barrier and after its loop; the sample is the latest end minus the
   earliest start. (The main thread's clock, read after the barrier, once
   started late: descheduled until the workers were done, it timed nothing.) */
static double sample(bench_loop_fn fn, void **ws, int nthreads, long reps, long expect)
{
    pthread_t th[MAXT];
    job jobs[MAXT];
    pthread_barrier_t bar;
    double t0, t1, lo = INFINITY, hi = 0;
    int t;
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
    for (t = 0; t < nthreads; t++) {
        jobs[t].fn = fn;
        jobs[t].w = ws[t];
        jobs[t].reps = reps;
        jobs[t].bar = &bar;
        pthread_create(&th[t], NULL, job_run, &jobs[t]);
    }
    pthread_barrier_wait(&bar);
    for (t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bar);
    t0 = jobs[0].t_start;
    t1 = jobs[0].t_end;
    for (t = 0; t < nthreads; t++) {
        double el = jobs[t].t_end - jobs[t].t_start;
        if (jobs[t].sum != expect) fail("checksum");
        if (jobs[t].t_start < t0) t0 = jobs[t].t_start;
        if (jobs[t].t_end > t1) t1 = jobs[t].t_end;
        if (el < lo) lo = el;
        if (el > hi) hi = el;
    }
    g_last_skew = hi / lo;
    return (t1 - t0) / ((double)reps * NKEYS);
}

static long expected(int op, long reps)
{
    return op == OP_MUTATION ? 0 : reps * ((long)NKEYS * (NKEYS - 1) / 2);
}

/* One system in one row: its loop, its workloads, its samples. */
typedef struct runner {
    const bench_ops *ops;
    int thread_safe, shared;
    void *ws[MAXT];
    double s[16], skew[16];
    double lo, med, hi, skew_med;   /* over the samples */
} runner;

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static unsigned rnd_below(unsigned n)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return (unsigned)((g_rng * 0x2545F4914F6CDD1Dull) >> 33) % n;
}

/* Min, median and max ns/op of each runner for op with nthreads threads.
   The runners' samples are interleaved (one of each, in a fresh random
   order, then the next round), so a slow moment of the machine does not
   land on one column only. */
static void measure_row(runner *rs, int nr, int op, int nthreads, long reps, double *out)
{
    int r, t, k, ord[8];
    for (r = 0; r < nr; r++) {
        runner *x = &rs[r];
        out[r] = x->lo = x->med = x->hi = x->skew_med = NAN;
        if (!x->ops->loop[op]) continue;
        for (t = 0; t < nthreads; t++) {
            x->ws[t] = (x->shared && t) ? x->ws[0] : x->ops->setup(x->thread_safe, g_keys[t], NKEYS);
            if (!x->ws[t]) fail("setup");
        }
        x->ops->loop[op](x->ws[0], g_order, NKEYS, 1);   /* warm up */
    }
    for (k = 0; k < g_samples; k++) {
        for (r = 0; r < nr; r++) ord[r] = r;
        for (r = nr; r > 1; r--) { int j = (int)rnd_below((unsigned)r), tmp = ord[r - 1]; ord[r - 1] = ord[j]; ord[j] = tmp; }
        for (t = 0; t < nr; t++) {
            runner *x = &rs[ord[t]];
            if (!x->ops->loop[op]) continue;
            x->s[k] = sample(x->ops->loop[op], x->ws, nthreads, reps, expected(op, reps));
            x->skew[k] = g_last_skew;
        }
    }
    for (r = 0; r < nr; r++) {
        runner *x = &rs[r];
        if (!x->ops->loop[op]) continue;
        for (t = 0; t < nthreads; t++)
            if (!(x->shared && t)) x->ops->teardown(x->ws[t]);
        qsort(x->s, (size_t)g_samples, sizeof x->s[0], cmp_double);
        qsort(x->skew, (size_t)g_samples, sizeof x->skew[0], cmp_double);
        x->lo = x->s[0];
        x->hi = x->s[g_samples - 1];
        out[r] = x->med = x->s[g_samples / 2];
        x->skew_med = x->skew[g_samples / 2];
    }
}

/* Passes so that one thread's sample takes about g_sample_ns. */
static long calibrate(const bench_ops *ops, int thread_safe, int op)
{
    void *w = ops->setup(thread_safe, g_keys[0], NKEYS);
    double t0 = now_ns(), ns;
    long reps = 1;
    for (;;) {
        ops->loop[op](w, g_order, NKEYS, reps);
        ns = now_ns() - t0;
        if (ns > 2e6) break;
        reps *= 2;
        t0 = now_ns();
    }
    ops->teardown(w);
    reps = (long)(reps * g_sample_ns / ns);
    return reps < 1 ? 1 : reps;
}

static void cell(double v)
{
    if (isnan(v)) printf(" %11s", "-");
    else printf(" %11.1f", v);
}

static void ratio(double a, double b)
{
    if (isnan(a) || isnan(b)) printf(" %9s", "-");
    else printf(" %9.2f", a / b);
}

static const char *op_name[NOPS] = {
    "weak_get", "weak_get_copy", "weak_set", "ref_get", "ref_get_retained", "on_mutation"
};
static const char *glib_name[NOPS] = { "GHashTable lookup + GMutex", "GHashTable lookup + GMutex", "GHashTable insert + GMutex", "", "g_weak_ref_get", "" };

int main(int argc, char **argv)
{
    int op, nt, i, ncores;
    static const int threads[] = { 1, 2, 4 };
    if (argc == 5 && strcmp(argv[1], "--ir") == 0) {
        const bench_ops *ops = strcmp(argv[3], "before") == 0 ? &bench_ops_base : &bench_ops_layer;
        long reps = atol(argv[4]);
        void *w;
        op = atoi(argv[2]);
        if (op < 0 || op >= NOPS) return 2;
        make_keys();
        w = ops->setup(0, g_keys[0], NKEYS);
        if (ops->loop[op](w, g_order, NKEYS, reps) != expected(op, reps)) fail("checksum");
        ops->teardown(w);
        return 0;
    }
    if ((argc > 1 && strcmp(argv[1], "--full") == 0) || getenv("BENCH_FULL")) {
        g_samples = 7;
        g_sample_ns = 100e6;
    }
    make_keys();
    ncores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    printf("mguard %s thread-safe contexts, %d keys, %d online cores, GLib %d.%d.%d; ns per operation per thread\n"
           "(the latest thread's end minus the earliest thread's start, over the operations of one thread),\n"
           "median of %d samples in a random order per round (lower is better); [min-max] of the samples.\n"
           "before: the default context without the lock layer. Threads: at most the online cores (more\n"
           "would measure time-slicing); skew: the slowest thread's time over the fastest's, median.\n\n",
           MGUARD_VERSION_STRING, NKEYS, ncores, glib_major_version, glib_minor_version,
           glib_micro_version, g_samples);

    printf("one thread          %11s %11s %11s %11s %11s %9s %9s %9s %9s\n", "before", "default", "thread-safe",
           "glib", "stb_ds", "def/bef", "def/stb", "ts/def", "ts/glib");
    for (op = 0; op < NOPS; op++) {
        runner rs[5];
        double v[5];
        long reps = calibrate(&bench_ops_layer, 0, op);
        memset(rs, 0, sizeof rs);
        rs[0].ops = &bench_ops_base;
        rs[1].ops = &bench_ops_layer;
        rs[2].ops = &bench_ops_layer;
        rs[2].thread_safe = 1;
        rs[3].ops = &glib_ops;
        rs[4].ops = &stb_ops;
        measure_row(rs, 5, op, 1, reps, v);
        printf("%-19s", op_name[op]);
        cell(v[0]); cell(v[1]); cell(v[2]); cell(v[3]); cell(v[4]);
        ratio(v[1], v[0]); ratio(v[1], v[4]); ratio(v[2], v[1]); ratio(v[2], v[3]);
        printf("   [ts %.1f-%.1f]  %s\n", rs[2].lo, rs[2].hi, glib_name[op]);
    }

    printf("\nthreads             %7s %11s %11s %11s %9s %9s %15s %5s   %s\n", "mode", "default", "thread-safe", "glib",
           "ts/def", "ts/glib", "ts [min-max]", "skew", "glib op");
    for (op = OP_GET_COPY; op < NOPS; op++) {
        long reps = calibrate(&bench_ops_layer, 1, op);
        for (i = 0; i < 3; i++) {
            runner rs[5];
            double v[5];
            char rng[40];
            nt = threads[i];
            if (nt > ncores) continue;
            memset(rs, 0, sizeof rs);
            rs[0].ops = &bench_ops_layer;                        /* default, own */
            rs[1].ops = &bench_ops_layer;                        /* thread-safe, own */
            rs[1].thread_safe = 1;
            rs[2].ops = &glib_ops;                               /* own objects */
            rs[3].ops = &bench_ops_layer;                        /* thread-safe, shared */
            rs[3].thread_safe = 1;
            rs[3].shared = 1;
            rs[4].ops = &glib_ops;                               /* shared objects */
            rs[4].shared = 1;
            measure_row(rs, 5, op, nt, reps, v);
            snprintf(rng, sizeof rng, "%.1f-%.1f", rs[1].lo, rs[1].hi);
            printf("%-16s %d %7s", op_name[op], nt, "own");
            cell(v[0]); cell(v[1]); cell(v[2]); ratio(v[1], v[0]); ratio(v[1], v[2]);
            printf(" %15s %5.2f   %s\n", rng, rs[1].skew_med, glib_name[op]);
            snprintf(rng, sizeof rng, "%.1f-%.1f", rs[3].lo, rs[3].hi);
            printf("%-16s %d %7s", op_name[op], nt, "shared");
            cell(NAN); cell(v[3]); cell(v[4]); ratio(NAN, NAN); ratio(v[3], v[4]);
            printf(" %15s %5.2f   %s\n", rng, rs[3].skew_med, glib_name[op]);
        }
    }
    return 0;
}
