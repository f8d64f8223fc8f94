/* bench_threads_ops.h - the mguard loops of bench/bench_threads.c, included
   by two translation units: bench_threads.c (mguard.h as it is) and
   bench_threads_base.c (the measured calls go straight to the unlocked
   bodies, skipping the public functions' lock test). Both
   get identical loops, so the default context's cost with and without the
   layer is compared in one run. BENCH_OPS names the exported table. */
#ifndef BENCH_OPS
#error "define BENCH_OPS before including bench_threads_ops.h"
#endif

typedef long (*bench_loop_fn)(void *w, const uint32_t *order, size_t n, long reps);
enum { OP_WEAK_GET, OP_GET_COPY, OP_SET, OP_REF_GET, OP_REF_RETAINED, OP_MUTATION, NOPS };
typedef struct bench_ops {
    void *(*setup)(int thread_safe, void **keys, size_t n);
    void (*teardown)(void *w);
    bench_loop_fn loop[NOPS];
} bench_ops;
extern const bench_ops bench_ops_layer, bench_ops_base;

/* The measured calls go through these pointers, as calls from another
   translation unit would: neither build is inlined into the loops, so the
   loops see exactly what a program linking mguard.h's implementation sees. */
static void *(*volatile bench_p_weak_get)(const mguard_weak *, const void *) = mguard_weak_get;
static mguard_status (*volatile bench_p_get_copy)(const mguard_weak *, const void *, void *) = mguard_weak_get_copy;
static mguard_status (*volatile bench_p_set)(mguard_weak *, const void *, const void *) = mguard_weak_set;
static void *(*volatile bench_p_ref_get)(const mguard_ctx *, mguard_ref) = mguard_ref_get;
static void *(*volatile bench_p_ref_get_retained)(const mguard_ctx *, mguard_ref, mguard_retain_fn, void *) = mguard_ref_get_retained;
static void (*volatile bench_p_on_mutation_at)(mguard_ctx *, const void *, const char *, const char *, int) = mguard_on_mutation_at;

/* A workload: n keys, each in one weak table (a long value), each with a
   tracker (watched once by a guard that is then unwatched) and a ref. */
typedef struct bench_work {
    mguard_ctx *ctx;
    mguard_weak *t;
    void **keys;
    mguard_ref *refs;
    size_t n;
    int guard;
} bench_work;

static void bench_nop_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard;
    (void)obj;
    (void)attr;
    (void)user;
}

static void *bench_setup(int thread_safe, void **keys, size_t n)
{
    bench_work *w = (bench_work *)calloc(1, sizeof *w);
    mguard_ctx_desc d;
    mguard_weak_desc wd;
    size_t i;
    memset(&d, 0, sizeof d);
    d.thread_safe = thread_safe != 0;
    w->ctx = mguard_ctx_create(&d);
    if (!w->ctx) return NULL;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof(long);
    w->t = mguard_weak_create(w->ctx, &wd);
    w->keys = keys;
    w->n = n;
    w->refs = (mguard_ref *)malloc(n * sizeof *w->refs);
    for (i = 0; i < n; i++) {
        long v = (long)i;
        mguard_weak_set(w->t, keys[i], &v);
        w->refs[i] = mguard_ref_make(w->ctx, keys[i]);
        mguard_watch(w->ctx, keys[i], &w->guard, bench_nop_invalidate, NULL);
        mguard_unwatch(w->ctx, keys[i], &w->guard);
    }
    return w;
}

static void bench_teardown(void *vw)
{
    bench_work *w = (bench_work *)vw;
    mguard_ctx_destroy(w->ctx);
    free(w->refs);
    free(w);
}

/* Each loop goes reps times over order[0..n) and returns a checksum the
   caller checks (a lookup that misses where it must hit is an error). */
static long bench_weak_get(void *vw, const uint32_t *order, size_t n, long reps)
{
    bench_work *w = (bench_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) {
            const long *v = (const long *)bench_p_weak_get(w->t, w->keys[order[i]]);
            sum += v ? *v : -1000000;
        }
    return sum;
}

static long bench_get_copy(void *vw, const uint32_t *order, size_t n, long reps)
{
    bench_work *w = (bench_work *)vw;
    long sum = 0, r, v;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++)
            sum += bench_p_get_copy(w->t, w->keys[order[i]], &v) == MGUARD_OK ? v : -1000000;
    return sum;
}

static long bench_set(void *vw, const uint32_t *order, size_t n, long reps)
{
    bench_work *w = (bench_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) {
            long v = (long)order[i];
            sum += bench_p_set(w->t, w->keys[order[i]], &v) == MGUARD_OK ? v : -1000000;
        }
    return sum;
}

static long bench_ref_get(void *vw, const uint32_t *order, size_t n, long reps)
{
    bench_work *w = (bench_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++)
            sum += bench_p_ref_get(w->ctx, w->refs[order[i]]) == w->keys[order[i]] ? (long)order[i] : -1000000;
    return sum;
}

/* The keys of bench_threads.c start with an int reference count. */
static bool bench_try_retain(void *obj, void *user)
{
    int *rc = (int *)obj, c = __atomic_load_n(rc, __ATOMIC_RELAXED);
    (void)user;
    while (c > 0)
        if (__atomic_compare_exchange_n(rc, &c, c + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return true;
    return false;
}

static long bench_ref_get_retained(void *vw, const uint32_t *order, size_t n, long reps)
{
    bench_work *w = (bench_work *)vw;
    long sum = 0, r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) {
            int *o = (int *)bench_p_ref_get_retained(w->ctx, w->refs[order[i]], bench_try_retain, NULL);
            if (o) {
                sum += (long)order[i];
                __atomic_sub_fetch(o, 1, __ATOMIC_RELEASE);
            } else {
                sum -= 1000000;
            }
        }
    return sum;
}

static long bench_mutation(void *vw, const uint32_t *order, size_t n, long reps)
{
    bench_work *w = (bench_work *)vw;
    long r;
    size_t i;
    for (r = 0; r < reps; r++)
        for (i = 0; i < n; i++) bench_p_on_mutation_at(w->ctx, w->keys[order[i]], "x", __FILE__, __LINE__);   /* as mguard_on_mutation */
    return (long)mguard_mutation_count(w->ctx, w->keys[order[0]]) > 0 ? 0 : -1;
}

const bench_ops BENCH_OPS = {
    bench_setup, bench_teardown,
    { bench_weak_get, bench_get_copy, bench_set, bench_ref_get, bench_ref_get_retained, bench_mutation }
};
