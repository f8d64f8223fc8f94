/* bench_threads.c - thread-safe contexts against the default context and
   against GLib's GWeakRef, in one run (make bench-threads).

   Columns, each in ns per operation as one thread sees it (wall time of the
   run divided by the operations each thread did; every thread does the
   same number), the median of several samples:
     before       the default context, the implementation built without the
                  lock layer (bench_threads_base.c calls the unlocked bodies):
                  the library as it was before thread-safe contexts
     default      the default context, as shipped (one branch per call)
     thread-safe  a context created with thread_safe = true (pthread mutex)
     glib         GLib's GWeakRef (g_weak_ref_get + g_object_unref, or
                  g_weak_ref_set) on the same number of objects
     stb_ds       raw stb_ds hmgeti on the same keys (the floor)
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

static int g_samples = 3;
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

/* ---- GLib: one GObject and one GWeakRef per key ------------------------- */

typedef struct glib_work {
    GObject *objs[NKEYS];
    GWeakRef refs[NKEYS];
} glib_work;

static void *glib_setup(int unused, void **keys, size_t n)
{
    glib_work *w = (glib_work *)calloc(1, sizeof *w);
    size_t i;
    (void)unused;
    (void)keys;
    for (i = 0; i < n; i++) {
        w->objs[i] = (GObject *)g_object_new(G_TYPE_OBJECT, NULL);
        g_weak_ref_init(&w->refs[i], w->objs[i]);
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
    free(w);
}

static long glib_get(void *vw, const uint32_t *order, size_t n, long reps)
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

/* Point each ref at the next object and back: a set that moves the ref. */
static long glib_set(void *vw, const uint32_t *order, size_t n, long reps)
{
    glib_work *w = (glib_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) {
            uint32_t k = order[i];
            g_weak_ref_set(&w->refs[k], w->objs[(r & 1) ? k : (k + 1) % n]);
            sum += (long)k;
        }
    if (reps & 1)
        for (i = 0; i < n; i++) g_weak_ref_set(&w->refs[i], w->objs[i]);
    return sum;
}

static const bench_ops glib_ops = {
    glib_setup, glib_teardown,
    { NULL, NULL, glib_set, glib_get, glib_get, NULL }
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
    pthread_barrier_t *bar;
} job;

static void *job_run(void *arg)
{
    job *j = (job *)arg;
    pthread_barrier_wait(j->bar);
    j->sum = j->fn(j->w, g_order, NKEYS, j->reps);
    return NULL;
}

/* One sample: nthreads threads run op on ws[t] (all the same when shared);
   ns per operation per thread. */
static double sample(bench_loop_fn fn, void **ws, int nthreads, long reps, long expect)
{
    pthread_t th[MAXT];
    job jobs[MAXT];
    pthread_barrier_t bar;
    double t0, t1;
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
    t0 = now_ns();
    for (t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    t1 = now_ns();
    pthread_barrier_destroy(&bar);
    for (t = 0; t < nthreads; t++)
        if (jobs[t].sum != expect) fail("checksum");
    return (t1 - t0) / ((double)reps * NKEYS);
}

static long expected(int op, long reps)
{
    return op == OP_MUTATION ? 0 : reps * ((long)NKEYS * (NKEYS - 1) / 2);
}

/* One system in one row: its loop, its workloads. */
typedef struct runner {
    const bench_ops *ops;
    int thread_safe, shared;
    void *ws[MAXT];
    double s[16];
} runner;

/* Median ns/op of each runner for op with nthreads threads. The runners'
   samples are interleaved (one of each, then the next round), so a slow
   moment of the machine does not land on one column only. */
static void measure_row(runner *rs, int nr, int op, int nthreads, long reps, double *out)
{
    int r, t, k;
    for (r = 0; r < nr; r++) {
        runner *x = &rs[r];
        out[r] = NAN;
        if (!x->ops->loop[op]) continue;
        for (t = 0; t < nthreads; t++) {
            x->ws[t] = (x->shared && t) ? x->ws[0] : x->ops->setup(x->thread_safe, g_keys[t], NKEYS);
            if (!x->ws[t]) fail("setup");
        }
        x->ops->loop[op](x->ws[0], g_order, NKEYS, 1);   /* warm up */
    }
    for (k = 0; k < g_samples; k++)
        for (r = 0; r < nr; r++)
            if (rs[r].ops->loop[op]) rs[r].s[k] = sample(rs[r].ops->loop[op], rs[r].ws, nthreads, reps, expected(op, reps));
    for (r = 0; r < nr; r++) {
        runner *x = &rs[r];
        if (!x->ops->loop[op]) continue;
        for (t = 0; t < nthreads; t++)
            if (!(x->shared && t)) x->ops->teardown(x->ws[t]);
        qsort(x->s, (size_t)g_samples, sizeof x->s[0], cmp_double);
        out[r] = x->s[g_samples / 2];
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
static const char *glib_name[NOPS] = { "", "", "g_weak_ref_set", "g_weak_ref_get", "g_weak_ref_get", "" };

int main(int argc, char **argv)
{
    int op, nt, i;
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
    printf("mguard %s thread-safe contexts, %d keys, %ld CPUs, GLib %d.%d.%d; ns per operation per thread,\n"
           "median of %d samples (lower is better). before: the default context without the lock layer.\n\n",
           MGUARD_VERSION_STRING, NKEYS, sysconf(_SC_NPROCESSORS_ONLN), glib_major_version, glib_minor_version,
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
        printf("\n");
    }

    printf("\nthreads             %7s %11s %11s %11s %9s %9s   %s\n", "mode", "default", "thread-safe", "glib",
           "ts/def", "ts/glib", "glib op");
    for (op = OP_GET_COPY; op < NOPS; op++) {
        long reps = calibrate(&bench_ops_layer, 1, op);
        for (i = 0; i < 3; i++) {
            runner rs[5];
            double v[5];
            nt = threads[i];
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
            printf("%-16s %d %7s", op_name[op], nt, "own");
            cell(v[0]); cell(v[1]); cell(v[2]); ratio(v[1], v[0]); ratio(v[1], v[2]);
            printf("   %s\n", glib_name[op]);
            printf("%-16s %d %7s", op_name[op], nt, "shared");
            cell(NAN); cell(v[3]); cell(v[4]); ratio(NAN, NAN); ratio(v[3], v[4]);
            printf("   %s\n", glib_name[op]);
        }
    }
    return 0;
}
