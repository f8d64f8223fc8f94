/* Complexity check: every "Cost:" line of mguard.h is a promise, and this
   program keeps it (make complexity, part of make stress; a quick form in
   make test).

   One row per public function (a few functions have two rows, for two
   cases of their promise). A row builds a structure of size n outside the
   clock and times a loop whose promised total work grows by `scale` when
   n grows to 8n: n calls of an O(1) function on a structure of n, one
   call of an O(n) function, a fixed number of calls of an O(n) one. The
   check: median time at 8n <= scale x 2.5 x median time at n (2.5: head
   room for the noise of a shared machine and for caches); and the same
   for the number of allocator calls in the timed part (deterministic).
   A quadratic loop grows 64x and fails. Time is the thread's CPU time
   (CLOCK_THREAD_CPUTIME_ID): another process taking the core does not
   count. Each row is calibrated (repetitions) so its measurement at n
   takes about 10 ms (less when its setup, outside the clock, would take
   over 50 ms); the rounds at n and 8n alternate; a failing row
   is measured twice more before it counts as failed.

   tests/check_complexity.py checks that every public function whose
   contract has a "Cost:" line has a row here, or is in `unmeasured` with
   the reason (./complexity --list prints both).

   ./complexity            every row timed, 10 ms at n, 5 rounds (a few
                           minutes); every row fails on its break, rows
                           marked `known` (a reported break being fixed)
                           included
   ./complexity --quick    (make test, a few seconds) sizes halved, one
                           round, only the allocator calls judged: a
                           measure of a millisecond on a shared machine
                           is too noisy to judge time by; rows marked
                           `known` are skipped
   ./complexity --only mguard_weak_set,mguard_ledger_apply
   ./complexity --list     the rows and the unmeasured functions */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

/* ---- clock, allocator, object addresses ------------------------------- */
typedef struct cx {
    mguard_ctx *ctx;
    size_t n;
    unsigned reps;
    double ns;        /* timed total */
    long allocs;      /* allocator calls in the timed parts */
    double t0;
    long a0;
    double cold_ns;   /* spent in cold(): not the row's setup */
} cx;

static long g_calls;
static cx *C;

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}
static void T0(void) { C->a0 = g_calls; C->t0 = cpu_ns(); }
static void T1(void) { C->ns += cpu_ns() - C->t0; C->allocs += g_calls - C->a0; }

static void *c_realloc(void *p, size_t n, void *user) { (void)user; g_calls++; return realloc(p, n); }
static void c_free(void *p, void *user) { (void)user; if (p) g_calls++; free(p); }
static void nolog(mguard_log_level level, mguard_log_code code, const char *msg, void *user) { (void)level; (void)code; (void)msg; (void)user; }

static mguard_ctx *new_ctx(bool thread_safe)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    d.allocator.realloc_fn = c_realloc;
    d.allocator.free_fn = c_free;
    d.logger.func = nolog;
    d.thread_safe = thread_safe;
    return mguard_ctx_create(&d);
}

#define NMAX 8192                  /* the largest base n */
#define NOBJ (4 * 8 * NMAX)        /* objects a row may use: 4 x 8n */
static char *OBJ;
static char **NM;                  /* "a0", "a1", ...: attribute names, paths */
static char **IX;                  /* "0", "1", ...: child names */
static char **GP;                  /* "L['x'][0]", ...: paths of one group */
#define O(i) ((const void *)&OBJ[(i)])
#define P(i) ((void *)&OBJ[(i)])
#define LOOP for (r = 0; r < c->reps; r++)

static int failures;
static void must(bool ok, const char *what)
{
    if (!ok) { printf("  setup failed: %s\n", what); failures++; }
}

/* ---- 1. context --------------------------------------------------------- */
static mguard_weak *weak_n(mguard_ctx *ctx, size_t n)
{
    mguard_weak_desc d = {sizeof(long), NULL, NULL, NULL};
    mguard_weak *t = mguard_weak_create(ctx, &d);
    size_t i;
    long v = 1;
    for (i = 0; i < n; i++) mguard_weak_set(t, O(i), &v);
    return t;
}

static void cold(void);
static void r_ctx_create(cx *c)
{
    unsigned r;
    size_t i;
    mguard_ctx **v = (mguard_ctx **)malloc(c->n * sizeof *v);
    LOOP {
        cold();   /* n contexts' first blocks stay in the last-level cache, 8n not */
        T0();
        for (i = 0; i < c->n; i++) v[i] = new_ctx(false);
        T1();
        for (i = 0; i < c->n; i++) mguard_ctx_destroy(v[i]);
    }
    free(v);
}
static void inval_nop(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
}
static mguard_ctx *ctx_full(size_t n)
{
    mguard_ctx *ctx = new_ctx(false);
    size_t i;
    weak_n(ctx, n);
    for (i = 0; i < n; i++) {
        mguard_watch(ctx, O(i), P(NOBJ - 1), inval_nop, NULL);
        mguard_gen_tag(ctx, O(n + i));
    }
    return ctx;
}
static void r_ctx_destroy(cx *c)
{
    unsigned r;
    LOOP {
        mguard_ctx *ctx = ctx_full(c->n);
        T0();
        mguard_ctx_destroy(ctx);
        T1();
    }
}
/* The caches emptied of what the program touched: a 64 MB buffer (more than
   a last-level cache) written, a line at a time. For a walk of a structure
   timed again and again: warm, it stays in the cache at n and not at 8n,
   and the ratio says where the machine's cache sizes fall (ctx_check: 24-28x
   at 8192 on a 1 MB L2, 12x at 2048), not how the walk grows. The same for
   memory written again and again (cache_create: 2 KB a cache, 4 MB at n and
   32 MB at 8n, 36x on a 32 MB last-level cache, 8.1x cold; ctx_create:
   17-19x, 8.8-9.4x cold). Its time is
   left out of the row's setup, which bounds the calibration. */
#define COLD_BYTES ((size_t)64 << 20)
static unsigned char *cold_buf;
static void cold(void)
{
    double t0 = cpu_ns();
    size_t i;
    if (!cold_buf) cold_buf = (unsigned char *)calloc(COLD_BYTES, 1);
    must(cold_buf != NULL, "cold: a 64 MB buffer");
    if (!cold_buf) return;
    for (i = 0; i < COLD_BYTES; i += 64) cold_buf[i]++;
    C->cold_ns += cpu_ns() - t0;
}
static void r_ctx_check(cx *c)
{
    unsigned r;
    mguard_ctx *ctx = ctx_full(c->n);
    LOOP {
        cold();
        T0();
        must(mguard_ctx_check(ctx) == MGUARD_OK, "ctx_check");
        T1();
    }
    mguard_ctx_destroy(ctx);
}
static void r_ctx_get_stats(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    mguard_ctx_stats st;
    weak_n(c->ctx, c->n);
    T0();
    LOOP for (i = 0; i < c->n; i++) k += mguard_ctx_get_stats(c->ctx, &st) == MGUARD_OK ? st.objects : 0;
    T1();
    must(k == (size_t)c->reps * c->n * c->n, "get_stats");
}

/* ---- 2. lifetimes ------------------------------------------------------ */
static void r_on_destroy(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_weak *t = weak_n(c->ctx, c->n);
        for (i = 0; i < c->n; i++) mguard_watch(c->ctx, O(i), P(NOBJ - 1), inval_nop, NULL);
        T0();
        for (i = 0; i < c->n; i++) mguard_on_destroy(c->ctx, O(i));
        T1();
        mguard_weak_destroy(t);
    }
}
static void r_intern(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        T0();
        for (i = 0; i < c->n; i++) must(mguard_intern(ctx, NM[i]) != NULL, "intern");
        T1();
        mguard_ctx_destroy(ctx);
    }
}

/* ---- 3. weak tables ---------------------------------------------------- */
static void r_weak_create(cx *c)
{
    unsigned r;
    size_t i;
    mguard_weak_desc d = {sizeof(long), NULL, NULL, NULL};
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        T0();
        for (i = 0; i < c->n; i++) mguard_weak_create(ctx, &d);
        T1();
        mguard_ctx_destroy(ctx);
    }
}
static void r_weak_destroy(cx *c)
{
    unsigned r;
    LOOP {
        mguard_weak *t = weak_n(c->ctx, c->n);
        T0();
        mguard_weak_destroy(t);
        T1();
    }
}
static void r_weak_set(cx *c)
{
    unsigned r;
    size_t i;
    mguard_weak_desc d = {sizeof(long), NULL, NULL, NULL};
    long v = 2;
    LOOP {
        mguard_weak *t = mguard_weak_create(c->ctx, &d);
        T0();
        for (i = 0; i < c->n; i++) mguard_weak_set(t, O(i), &v);
        T1();
        mguard_weak_destroy(t);
    }
}
#define WEAK_QUERY(fname, expr, expect)                       \
    static void fname(cx *c)                                  \
    {                                                         \
        unsigned r;                                           \
        size_t i, k = 0;                                      \
        long out;                                             \
        mguard_weak *t = weak_n(c->ctx, c->n);                \
        (void)out;                                            \
        T0();                                                 \
        LOOP for (i = 0; i < c->n; i++) k += (expr) ? 1 : 0;  \
        T1();                                                 \
        must(k == (expect), #fname);                          \
    }
WEAK_QUERY(r_weak_get, mguard_weak_get(t, O(i)) != NULL, (size_t)c->reps * c->n)
WEAK_QUERY(r_weak_get_copy, mguard_weak_get_copy(t, O(i), &out) == MGUARD_OK, (size_t)c->reps * c->n)
WEAK_QUERY(r_weak_contains, mguard_weak_contains(t, O(i)), (size_t)c->reps * c->n)
WEAK_QUERY(r_weak_count, mguard_weak_count(t) == c->n, (size_t)c->reps * c->n)
WEAK_QUERY(r_weak_get_sized, mguard_weak_get_sized(t, O(i), sizeof(long)) != NULL, (size_t)c->reps * c->n)
static void r_weak_remove(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_weak *t = weak_n(c->ctx, c->n);
        T0();
        for (i = 0; i < c->n; i++) mguard_weak_take(t, O(i), NULL);
        T1();
        mguard_weak_destroy(t);
    }
}
static void r_weak_take(cx *c)
{
    unsigned r;
    size_t i;
    long v;
    LOOP {
        mguard_weak *t = weak_n(c->ctx, c->n);
        T0();
        for (i = 0; i < c->n; i++) must(mguard_weak_take(t, O(i), &v) == MGUARD_OK && v == 1, "take");
        T1();
        mguard_weak_destroy(t);
    }
}
static void r_weak_clear(cx *c)
{
    unsigned r;
    LOOP {
        mguard_weak *t = weak_n(c->ctx, c->n);
        T0();
        mguard_weak_clear(t);
        T1();
        mguard_weak_destroy(t);
    }
}
static void r_weak_iterate(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_weak *t = weak_n(c->ctx, c->n);
    T0();
    LOOP {
        mguard_weak_iter it = mguard_weak_iterate(t);
        while (mguard_weak_next(&it)) k++;
    }
    T1();
    must(k == (size_t)c->reps * c->n, "weak walk");
}

/* ---- 4. refs ----------------------------------------------------------- */
static bool retain_yes(void *obj, void *user) { (void)obj; (void)user; return true; }
static void r_ref_make(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        T0();
        for (i = 0; i < c->n; i++) mguard_ref_make(ctx, O(i));
        T1();
        mguard_ctx_destroy(ctx);
    }
}
static mguard_ref *refs_n(cx *c)
{
    mguard_ref *v = (mguard_ref *)malloc(c->n * sizeof *v);
    size_t i;
    for (i = 0; i < c->n; i++) v[i] = mguard_ref_make(c->ctx, O(i));
    return v;
}
static void r_ref_get(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    mguard_ref *v = refs_n(c);
    T0();
    LOOP for (i = 0; i < c->n; i++) k += mguard_ref_get(c->ctx, v[i]) != NULL;
    T1();
    must(k == (size_t)c->reps * c->n, "ref_get");
    free(v);
}
static void r_ref_get_retained(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    mguard_ref *v = refs_n(c);
    T0();
    LOOP for (i = 0; i < c->n; i++) k += mguard_ref_get_retained(c->ctx, v[i], retain_yes, NULL) != NULL;
    T1();
    must(k == (size_t)c->reps * c->n, "ref_get_retained");
    free(v);
}

/* ---- 5. trackers, 6. generations -------------------------------------- */
static void r_watch(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        T0();
        for (i = 0; i < c->n; i++) mguard_watch(ctx, O(i), P(NOBJ - 1), inval_nop, NULL);
        T1();
        mguard_ctx_destroy(ctx);
    }
}
static void r_on_mutation(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        for (i = 0; i < c->n; i++) mguard_watch(c->ctx, O(i), P(NOBJ - 1), inval_nop, NULL);
        T0();
        for (i = 0; i < c->n; i++) mguard_on_mutation(c->ctx, O(i), "x");
        T1();
    }
}
static void r_gen_tag(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        T0();
        for (i = 0; i < c->n; i++) mguard_gen_tag(ctx, O(i));
        T1();
        mguard_ctx_destroy(ctx);
    }
}
static void r_gen_clear(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        for (i = 0; i < c->n; i++) mguard_gen_tag(c->ctx, O(i));
        T0();
        mguard_gen_clear(c->ctx);
        T1();
    }
}

#ifndef MGUARD_NO_SCOPE
/* ---- 7. scopes: a parent SCP whose children kids[0..nkids) are named by
   their index ("0", "1", ...), as in a sequential container ------------- */
static char SCP;
static const void **kids;
static size_t nkids;
static const char *type_cb(const void *comp, void *user) { (void)comp; (void)user; return "T"; }
static bool child_cb(const void *comp, size_t i, const char **name, const void **kid, void *user)
{
    (void)user;
    if (comp != &SCP || i >= nkids) return false;
    *name = IX[i];
    *kid = kids[i];
    return true;
}
static mguard_scope *scope_new(mguard_ctx *ctx, bool trace)
{
    mguard_scope_desc d;
    memset(&d, 0, sizeof d);
    d.type_name = type_cb;
    d.child = child_cb;
    d.trace = trace;
    return mguard_scope_create(ctx, &d);
}
/* kids = n objects; SCP looked up (all named "T.i") */
static mguard_scope *scope_n(cx *c, size_t n, bool trace)
{
    mguard_scope *s = scope_new(c->ctx, trace);
    size_t i;
    for (i = 0; i < n; i++) kids[i] = O(i);
    nkids = n;
    must(mguard_scope_name(s, &SCP) != NULL, "scope parent");
    return s;
}
/* ... and all of them entered: depth n */
static mguard_scope *scope_deep(cx *c, size_t n, bool trace)
{
    mguard_scope *s = scope_n(c, n, trace);
    size_t i;
    for (i = 0; i < n; i++) mguard_scope_enter(s, kids[i]);
    return s;
}
static void r_scope_create(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        T0();
        for (i = 0; i < c->n; i++) scope_new(ctx, false);
        T1();
        mguard_ctx_destroy(ctx);
    }
}
static void r_scope_destroy(cx *c)
{
    unsigned r;
    LOOP {
        mguard_scope *s = scope_deep(c, c->n, true);
        mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_FRAMES);
        T0();
        mguard_scope_destroy(s);
        T1();
    }
}
static void r_scope_name(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    mguard_scope *s = scope_n(c, c->n, false);
    T0();
    LOOP for (i = 0; i < c->n; i++) k += mguard_scope_name(s, kids[i]) != NULL;
    T1();
    must(k == (size_t)c->reps * c->n, "scope_name");
}
/* issue 23: the children were looked up before their parent (named by
   their type), so the parent's first lookup renames every one of them */
static void r_scope_name_children_first(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_scope *s = scope_new(c->ctx, false);
        for (i = 0; i < c->n; i++) kids[i] = O(i);
        nkids = c->n;
        for (i = 0; i < c->n; i++) mguard_scope_name(s, kids[i]);
        T0();
        must(mguard_scope_name(s, &SCP) != NULL, "parent");
        T1();
        mguard_scope_destroy(s);
    }
}
/* issue 23: after mguard_scope_forget(parent) a child is inserted at the
   front of its list; the next lookup renames every child ("i" to "i+1") */
static void r_scope_name_after_forget(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_scope *s = scope_n(c, c->n, false);
        must(mguard_scope_forget(s, &SCP) == MGUARD_OK, "forget");
        for (i = c->n; i > 0; i--) kids[i] = kids[i - 1];
        kids[0] = O(c->n);
        nkids = c->n + 1;
        T0();
        must(mguard_scope_name(s, &SCP) != NULL, "parent");
        T1();
        mguard_scope_destroy(s);
    }
}
static void r_scope_set_name(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_scope *s = scope_new(c->ctx, false);
        T0();
        for (i = 0; i < c->n; i++) mguard_scope_set_name(s, O(i), NM[i]);
        T1();
        mguard_scope_destroy(s);
    }
}
static void r_scope_attach(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_scope *s = scope_n(c, 0, false);
        T0();
        for (i = 0; i < c->n; i++) mguard_scope_attach(s, &SCP, O(i), IX[i]);
        T1();
        mguard_scope_destroy(s);
    }
}
static void r_scope_forget(cx *c)
{
    unsigned r;
    mguard_scope *s = scope_n(c, c->n, false);
    LOOP {
        T0();
        must(mguard_scope_forget(s, &SCP) == MGUARD_OK, "forget");
        T1();
        mguard_scope_name(s, &SCP);
    }
}
static void r_scope_enter(cx *c)
{
    unsigned r;
    size_t i;
    mguard_scope *s = scope_n(c, c->n, false);
    LOOP {
        T0();
        for (i = 0; i < c->n; i++) mguard_scope_enter(s, kids[i]);
        T1();
        mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_FRAMES);
    }
}
/* O(depth) calls at depth n: 16 of them per repetition */
static void r_scope_exit(cx *c)
{
    unsigned r, j;
    mguard_scope *s = scope_deep(c, c->n, false);
    LOOP {
        T0();
        for (j = 0; j < 16; j++) mguard_scope_exit(s, kids[c->n - 1 - j]);
        T1();
        for (j = 16; j > 0; j--) mguard_scope_enter(s, kids[c->n - j]);
    }
}
static void r_scope_parents(cx *c)
{
    unsigned r;
    size_t k = 0;
    const char **out = (const char **)malloc((c->n + 1) * sizeof *out);
    mguard_scope *s = scope_deep(c, c->n, false);
    T0();
    LOOP k += mguard_scope_parents(s, out, c->n + 1);
    T1();
    must(k == (size_t)c->reps * (c->n + 1), "parents");
    free(out);
}
#define SCOPE_QUERY(fname, expr)                              \
    static void fname(cx *c)                                  \
    {                                                         \
        unsigned r;                                           \
        size_t i, k = 0;                                      \
        mguard_scope *s = scope_deep(c, c->n, false);         \
        T0();                                                 \
        LOOP for (i = 0; i < c->n; i++) k += (expr) ? 1 : 0;  \
        T1();                                                 \
        must(k == (size_t)c->reps * c->n, #fname);            \
    }
static const char *cur_of(const mguard_scope *s)   /* the current name */
{
    const char *cur = NULL;
    mguard_scope_frames(s, &cur, 1);
    return cur;
}
SCOPE_QUERY(r_scope_current, cur_of(s) != NULL)
SCOPE_QUERY(r_scope_set_phase, mguard_scope_set_phase(s, i & 1) == MGUARD_OK)
SCOPE_QUERY(r_scope_phase, mguard_scope_phase(s) < 1000)
SCOPE_QUERY(r_scope_counter, mguard_scope_counter(s, cur_of(s), "flops", NULL) >= 0.0)
SCOPE_QUERY(r_scope_is_active, mguard_scope_is_active(s, cur_of(s)))
static void r_scope_frames(cx *c)
{
    unsigned r;
    size_t k = 0;
    const char **out = (const char **)malloc((c->n + 1) * sizeof *out);
    mguard_scope *s = scope_deep(c, c->n, false);
    T0();
    LOOP k += mguard_scope_frames(s, out, c->n + 1);
    T1();
    must(k == (size_t)c->reps * (c->n + 1), "frames");
    free(out);
}
static void r_scope_path(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_scope *s = scope_deep(c, c->n, false);
    T0();
    LOOP k += mguard_scope_format(s, MGUARD_SCOPE_PATH, NULL, 0) > c->n;
    T1();
    must(k == c->reps, "path");
}
static void r_scope_reset(cx *c)
{
    unsigned r;
    size_t i;
    mguard_scope *s = scope_n(c, c->n, false);
    LOOP {
        for (i = 0; i < c->n; i++) mguard_scope_enter(s, kids[i]);
        T0();
        mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_FRAMES);
        T1();
    }
}
static void r_scope_add(cx *c)
{
    unsigned r;
    mguard_scope *s = scope_deep(c, c->n, false);
    T0();
    LOOP must(mguard_scope_add(s, "flops", 1.0) == MGUARD_OK, "add");
    T1();
}
static void r_scope_report(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_scope *s = scope_deep(c, c->n, false);
    mguard_scope_add(s, "flops", 1.0);
    T0();
    LOOP k += mguard_scope_format(s, MGUARD_SCOPE_TABLE, NULL, 0) > c->n;
    T1();
    must(k == c->reps, "report");
}
static void r_scope_report_trace(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_scope *s = scope_deep(c, c->n, true);
    mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_FRAMES);
    T0();
    LOOP k += mguard_scope_format(s, MGUARD_SCOPE_TRACE_JSON, NULL, 0) > c->n;
    T1();
    must(k == c->reps, "report trace");
}
static void r_scope_clear_trace(cx *c)
{
    unsigned r;
    size_t i;
    mguard_scope *s = scope_n(c, c->n, true);
    LOOP {
        for (i = 0; i < c->n; i++) mguard_scope_enter(s, kids[i]);
        T0();
        mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_TRACE);
        T1();
        mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_FRAMES);
    }
}
static void r_scope_clear_warnings(cx *c)
{
    unsigned r;
    size_t i;
    mguard_scope *s = scope_n(c, c->n, false);
    LOOP {
        for (i = 0; i < c->n; i++) mguard_scope_exit(s, kids[i]);   /* "never entered": n warnings */
        T0();
        mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_WARNINGS);
        T1();
    }
}
#endif

#ifndef MGUARD_NO_DYN
/* ---- 8. dynamism ------------------------------------------------------- */
static const int64_t dims2[2] = {3, 4};
static mguard_dyn *dyn_n(cx *c, size_t n)
{
    mguard_dyn *d = mguard_dyn_create(c->ctx);
    size_t i;
    for (i = 0; i < n; i++) mguard_dyn_observe(d, NM[i], dims2, 2);
    return d;
}
static void r_dyn_create(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        T0();
        for (i = 0; i < c->n; i++) mguard_dyn_create(ctx);
        T1();
        mguard_ctx_destroy(ctx);
    }
}
static void r_dyn_destroy(cx *c)
{
    unsigned r;
    LOOP {
        mguard_dyn *d = dyn_n(c, c->n);
        T0();
        mguard_dyn_destroy(d);
        T1();
    }
}
static void r_dyn_observe(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_dyn *d = mguard_dyn_create(c->ctx);
        T0();
        for (i = 0; i < c->n; i++) mguard_dyn_observe(d, NM[i], dims2, 2);
        T1();
        mguard_dyn_destroy(d);
    }
}
static void r_dyn_observe_group(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_dyn *d = mguard_dyn_create(c->ctx);
        T0();
        for (i = 0; i < c->n; i++) mguard_dyn_observe(d, GP[i], dims2, 2);
        T1();
        mguard_dyn_destroy(d);
    }
}
/* O(ndim): one path of rank n */
static void r_dyn_observe_rank(cx *c)
{
    unsigned r;
    size_t i;
    int64_t *dims = (int64_t *)malloc(c->n * sizeof *dims);
    mguard_dyn *d = mguard_dyn_create(c->ctx);
    for (i = 0; i < c->n; i++) dims[i] = (int64_t)i;
    T0();
    LOOP { dims[r % c->n]++; mguard_dyn_observe(d, "x", dims, c->n); }
    T1();
    free(dims);
}
static void r_dyn_dims(cx *c)
{
    unsigned r;
    size_t i, k = 0, rank;
    bool v[2];
    mguard_dyn *d = dyn_n(c, c->n);
    T0();
    LOOP for (i = 0; i < c->n; i++) k += mguard_dyn_dims(d, NM[i], &rank, v, 2) ? rank : 0;
    T1();
    must(k == (size_t)c->reps * c->n * 2, "dims");
}
static void r_dyn_iterate(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    mguard_dyn *d = dyn_n(c, c->n);
    T0();
    LOOP for (i = 0; i < c->n; i++) { mguard_dyn_iter it = mguard_dyn_iterate(d); k += it.rank == 0; }
    T1();
    must(k == (size_t)c->reps * c->n, "dyn_iterate");
}
static void r_dyn_next(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_dyn *d = dyn_n(c, c->n);
    T0();
    LOOP {
        mguard_dyn_iter it = mguard_dyn_iterate(d);
        while (mguard_dyn_next(&it)) k++;
    }
    T1();
    must(k == (size_t)c->reps * c->n, "dyn_next");
}
static void r_dyn_format(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_dyn *d = dyn_n(c, c->n);
    T0();
    LOOP k += mguard_dyn_format(d, NULL, 0) > c->n;
    T1();
    must(k == c->reps, "dyn_format");
}
static void r_dyn_normalize_name(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    char *in = (char *)malloc(2 * c->n + 2);
    in[0] = 'L';
    for (i = 0; i < c->n; i++) { in[1 + 2 * i] = '.'; in[2 + 2 * i] = 'x'; }
    in[1 + 2 * c->n] = '\0';
    T0();
    LOOP k += mguard_dyn_normalize_name(in, NULL, 0) == 1 + 5 * c->n;
    T1();
    must(k == c->reps, "normalize");
    free(in);
}
#endif

#ifndef MGUARD_NO_LEDGER
/* ---- 9. ledger --------------------------------------------------------- */
static void rel_nop(void *p, void *user) { (void)p; (void)user; }
static mguard_ledger *ledger_new(mguard_ctx *ctx, bool release)
{
    mguard_ledger_desc d;
    memset(&d, 0, sizeof d);
    d.plain_values = true;
    if (release) d.release = rel_nop;
    return mguard_ledger_create(ctx, &d);
}
/* n EXISTING objects, each with one pending write ("a0"); n records */
static mguard_ledger *ledger_n(cx *c, size_t n, bool release)
{
    mguard_ledger *L = ledger_new(c->ctx, release);
    size_t i;
    for (i = 0; i < n; i++) {
        mguard_ledger_track(L, O(i), MGUARD_LEDGER_EXISTING, NULL);
        mguard_ledger_store_attr(L, O(i), "a0", P(n + i));
        mguard_ledger_record(L, "r", P(i));
    }
    return L;
}
static void r_ledger_create(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        T0();
        for (i = 0; i < c->n; i++) ledger_new(ctx, false);
        T1();
        mguard_ctx_destroy(ctx);
    }
}
static void r_ledger_destroy(cx *c)
{
    unsigned r;
    LOOP {
        mguard_ledger *L = ledger_n(c, c->n, true);
        T0();
        mguard_ledger_destroy(L);
        T1();
    }
}
/* n objects tracked, the three kinds in turn */
static void r_ledger_track(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ledger *L = ledger_new(c->ctx, false);
        T0();
        for (i = 0; i < c->n; i++)
            must(mguard_ledger_track(L, O(i), (mguard_ledger_kind)(MGUARD_LEDGER_EXISTING + i % 3), NULL) == MGUARD_OK, "track");
        T1();
        mguard_ledger_destroy(L);
    }
}
#define LEDGER_QUERY(fname, expr)                                    \
    static void fname(cx *c)                                         \
    {                                                                \
        unsigned r;                                                  \
        size_t i, k = 0;                                             \
        mguard_ledger_entry e;                                       \
        mguard_ledger_stats st;                                      \
        void *v;                                                     \
        mguard_ledger *L = ledger_n(c, c->n, false);                 \
        (void)e; (void)v; (void)st;                                  \
        T0();                                                        \
        LOOP for (i = 0; i < c->n; i++) k += (expr) ? 1 : 0;         \
        T1();                                                        \
        must(k == (size_t)c->reps * c->n, #fname);                   \
    }
LEDGER_QUERY(r_ledger_get, mguard_ledger_get(L, O(i), i % 2 ? &e : NULL) == MGUARD_OK)
LEDGER_QUERY(r_ledger_pending, mguard_ledger_pending(L, O(i), "a0", i % 2 ? &v : NULL) == MGUARD_OK)
LEDGER_QUERY(r_ledger_get_stats, mguard_ledger_get_stats(L, &st) == MGUARD_OK && st.entries == c->n && st.storage_bytes > c->n)
LEDGER_QUERY(r_ledger_iterate, mguard_ledger_iterate(L, (mguard_ledger_walk)(1 + i % 5), O(i)).l_ == L)
static void r_ledger_mark_modified(cx *c)
{
    unsigned r;
    size_t i;
    mguard_ledger *L = ledger_new(c->ctx, false);
    for (i = 0; i < c->n; i++) mguard_ledger_track(L, O(i), MGUARD_LEDGER_CONTAINER, NULL);
    T0();
    LOOP for (i = 0; i < c->n; i++) must(mguard_ledger_mark_modified(L, O(i)) == MGUARD_OK, "mark");
    T1();
}
/* one object, n attributes */
static void r_ledger_store_attr(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ledger *L = ledger_new(c->ctx, false);
        mguard_ledger_track(L, O(0), MGUARD_LEDGER_EXISTING, NULL);
        T0();
        for (i = 0; i < c->n; i++) mguard_ledger_store_attr(L, O(0), NM[i], P(i));
        T1();
        mguard_ledger_destroy(L);
    }
}
static void r_ledger_delete_attr(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ledger *L = ledger_new(c->ctx, false);
        mguard_ledger_track(L, O(0), MGUARD_LEDGER_EXISTING, NULL);
        T0();
        for (i = 0; i < c->n; i++) mguard_ledger_delete_attr(L, O(0), NM[i]);
        T1();
        mguard_ledger_destroy(L);
    }
}
/* an object of n pointer fields, and its field table */
static mguard_ledger_field *fields_n(size_t n)
{
    mguard_ledger_field *f = (mguard_ledger_field *)malloc(n * sizeof *f);
    size_t i;
    for (i = 0; i < n; i++) {
        f[i].name = NM[i];
        f[i].offset = i * sizeof(void *);
        f[i].size = sizeof(void *);
        f[i].type = MGUARD_LEDGER_VALUE_PTR;
    }
    return f;
}
static void r_ledger_set_fields(cx *c)
{
    unsigned r;
    mguard_ledger_field *f = fields_n(c->n);
    mguard_ledger *L = ledger_new(c->ctx, false);
    mguard_ledger_track(L, O(0), MGUARD_LEDGER_EXISTING, NULL);
    T0();
    LOOP must(mguard_ledger_set_fields(L, O(0), f, c->n) == MGUARD_OK, "set_fields");
    T1();
    mguard_ledger_destroy(L);
    free(f);
}
/* n objects of 4 fields each, nothing pending: read reads the field */
static void r_ledger_read(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    void **objs = (void **)calloc(4 * c->n, sizeof *objs);
    mguard_ledger_field *f = fields_n(4);
    mguard_ledger *L = ledger_new(c->ctx, false);
    void *out;
    for (i = 0; i < c->n; i++) {
        mguard_ledger_track(L, &objs[4 * i], MGUARD_LEDGER_EXISTING, NULL);
        mguard_ledger_set_fields(L, &objs[4 * i], f, 4);
    }
    T0();
    LOOP for (i = 0; i < c->n; i++) k += mguard_ledger_read(L, &objs[4 * i], NM[3], &out) == MGUARD_OK;
    T1();
    must(k == (size_t)c->reps * c->n, "read");
    mguard_ledger_destroy(L);
    free(f);
    free(objs);
}
static void r_ledger_next(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_ledger *L = ledger_n(c, c->n, false);
    T0();
    LOOP {
        mguard_ledger_iter it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL);
        while (mguard_ledger_next(&it)) k++;
    }
    T1();
    must(k == (size_t)c->reps * c->n, "ledger walk");
}
static void r_ledger_record(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ledger *L = ledger_new(c->ctx, false);
        T0();
        for (i = 0; i < c->n; i++) mguard_ledger_record(L, "r", P(i));
        T1();
        mguard_ledger_destroy(L);
    }
}
/* O(hooks) per registration: one at a time on a ledger of n hooks */
static void r_ledger_register_hook(cx *c)
{
    unsigned r;
    size_t i;
    int id;
    mguard_ledger *L = ledger_new(c->ctx, false);
    for (i = 0; i < c->n; i++) mguard_ledger_register_hook(L, O(i), NULL, P(i), &id);
    LOOP {
        T0();
        must(mguard_ledger_register_hook(L, O(0), NULL, P(0), &id) == MGUARD_OK, "register");
        T1();
        mguard_ledger_remove_hook(L, id);
    }
}
static void r_ledger_remove_hook(cx *c)
{
    unsigned r;
    size_t i;
    int id;
    mguard_ledger *L = ledger_new(c->ctx, false);
    for (i = 0; i < c->n; i++) mguard_ledger_register_hook(L, O(i), NULL, P(i), &id);
    LOOP {
        mguard_ledger_register_hook(L, O(0), NULL, P(0), &id);
        T0();
        must(mguard_ledger_remove_hook(L, id) == MGUARD_OK, "remove_hook");
        T1();
    }
}
static void r_ledger_clone(cx *c)
{
    unsigned r;
    mguard_ledger *L = ledger_n(c, c->n, false);
    LOOP {
        mguard_ledger *k;
        T0();
        k = mguard_ledger_clone(L);
        T1();
        mguard_ledger_destroy(k);
    }
}
static void r_ledger_restore(cx *c)
{
    unsigned r;
    mguard_ledger *L = ledger_n(c, c->n, false);
    mguard_ledger *k = mguard_ledger_clone(L);
    mguard_ledger_store_attr(k, O(0), "a1", P(0));
    LOOP {
        T0();
        must(mguard_ledger_restore(L, (r & 1) ? k : L) == MGUARD_OK, "restore");
        T1();
    }
}
/* O(1) for a clone not changed since: n calls */
static void r_ledger_equal_clone(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    mguard_ledger *L = ledger_n(c, c->n, false);
    mguard_ledger *b = mguard_ledger_clone(L);
    T0();
    LOOP for (i = 0; i < c->n; i++) k += mguard_ledger_equal(L, b);
    T1();
    must(k == (size_t)c->reps * c->n, "equal clone");
}
/* O(size): a clone changed since */
static void r_ledger_equal(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_ledger *L = ledger_n(c, c->n, false);
    mguard_ledger *b = mguard_ledger_clone(L);
    mguard_ledger_store_attr(b, O(0), "a0", P(0));
    mguard_ledger_store_attr(b, O(0), "a0", P(c->n));
    T0();
    LOOP k += mguard_ledger_equal(L, b);
    T1();
    must(k == c->reps, "equal");
}
/* a has n objects with one write each, b the same with every value changed */
static void ledger_pair(cx *c, mguard_ledger **a, mguard_ledger **b)
{
    size_t i;
    *a = ledger_n(c, c->n, false);
    *b = mguard_ledger_clone(*a);
    for (i = 0; i < c->n; i++) mguard_ledger_store_attr(*b, O(i), "a0", P(3 * c->n + i));
}
static void r_ledger_diff(cx *c)
{
    unsigned r;
    size_t i;
    mguard_ledger *a, *b;
    ledger_pair(c, &a, &b);
    LOOP {
        mguard_ledger_diff_result *d = NULL;
        T0();
        must(mguard_ledger_diff(a, b, &d) == MGUARD_OK, "diff");
        T1();
        must(mguard_ledger_diff_items(d, &i) != NULL && i == c->n, "diff count");
        mguard_ledger_diff_free(d);
    }
}
#define DIFF_QUERY(fname, expr)                                   \
    static void fname(cx *c)                                      \
    {                                                             \
        unsigned r;                                               \
        size_t i, k = 0, n = 0;                                   \
        mguard_ledger *a, *b;                                     \
        mguard_ledger_diff_result *d = NULL;                      \
        ledger_pair(c, &a, &b);                                   \
        mguard_ledger_diff(a, b, &d);                             \
        T0();                                                     \
        LOOP for (i = 0; i < c->n; i++) k += (expr) ? 1 : 0;      \
        T1();                                                     \
        must(k == (size_t)c->reps * c->n, #fname);                \
        (void)i;                                                  \
        mguard_ledger_diff_free(d);                               \
    }
DIFF_QUERY(r_ledger_diff_items, mguard_ledger_diff_items(d, &n) != NULL && n == c->n)
/* O(length) per call: the text of n items, copied whole */
static void r_ledger_diff_format(cx *c)
{
    unsigned r;
    size_t k = 0, len;
    mguard_ledger *a, *b;
    mguard_ledger_diff_result *d = NULL;
    char *buf;
    ledger_pair(c, &a, &b);
    mguard_ledger_diff(a, b, &d);
    len = mguard_ledger_diff_format(d, NULL, 0);
    buf = (char *)malloc(len + 1);
    must(buf != NULL && len > c->n, "diff text");
    T0();
    LOOP k += mguard_ledger_diff_format(d, buf, len + 1) == len;
    T1();
    must(k == c->reps, "diff_format");
    free(buf);
    mguard_ledger_diff_free(d);
}
/* O(1) per free of a result of n items: counted in allocator calls */
static void r_ledger_diff_free(cx *c)
{
    unsigned r;
    mguard_ledger *a, *b;
    ledger_pair(c, &a, &b);
    LOOP {
        mguard_ledger_diff_result *d = NULL;
        mguard_ledger_diff(a, b, &d);
        T0();
        mguard_ledger_diff_free(d);
        T1();
    }
}
static void r_ledger_prune(cx *c)
{
    unsigned r;
    size_t i;
    mguard_ledger *L = ledger_new(c->ctx, false);
    for (i = 0; i < c->n; i++) {   /* n NEW objects, each a record's payload: all reached */
        mguard_ledger_track(L, O(i), MGUARD_LEDGER_NEW, NULL);
        mguard_ledger_store_attr(L, O(i), "a0", P(c->n + i));
        mguard_ledger_record(L, "r", P(i));
    }
    T0();
    LOOP must(mguard_ledger_prune(L, NULL, 0) == MGUARD_OK, "prune");
    T1();
    {
        mguard_ledger_stats st;
        must(mguard_ledger_get_stats(L, &st) == MGUARD_OK && st.entries == c->n, "prune kept");
    }
}
static void apply_nop(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    (void)obj; (void)attr; (void)value; (void)deleted; (void)user;
}
/* issue 23: one object of n fields, a pending write to each */
static void r_ledger_apply(cx *c)
{
    unsigned r;
    size_t i;
    void **obj = (void **)calloc(c->n, sizeof *obj);
    mguard_ledger_field *f = fields_n(c->n);
    mguard_ledger *L = ledger_new(c->ctx, false);
    mguard_ledger_track(L, obj, MGUARD_LEDGER_EXISTING, NULL);
    mguard_ledger_set_fields(L, obj, f, c->n);
    for (i = 0; i < c->n; i++) mguard_ledger_store_attr(L, obj, NM[i], P(i));
    T0();
    LOOP must(mguard_ledger_apply(L, apply_nop, NULL) == MGUARD_OK, "apply");
    T1();
    must(obj[c->n - 1] == P(c->n - 1), "applied");
    mguard_ledger_destroy(L);
    free(f);
    free(obj);
}
static void r_ledger_clear(cx *c)
{
    unsigned r;
    LOOP {
        mguard_ledger *L = ledger_n(c, c->n, true);
        T0();
        mguard_ledger_clear(L);
        T1();
        mguard_ledger_destroy(L);
    }
}
#endif

/* ---- 11. caches -------------------------------------------------------- */
static const void **ckeys;   /* ckeys[i] = O(i): key tuples of one object */
#define K(i) (&ckeys[(i)])
static mguard_cache *cache_new(mguard_ctx *ctx)
{
    mguard_cache_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    return mguard_cache_create(ctx, &d);
}
static mguard_cache *cache_n(cx *c, size_t n)
{
    mguard_cache *ca = cache_new(c->ctx);
    size_t i;
    long v = 1;
    for (i = 0; i < n; i++) mguard_cache_set(ca, K(i), 1, &v, 0);
    return ca;
}
typedef struct deps { size_t from, n; bool timed; size_t cost, keyreads; } deps;
/* compute: depend on O(from .. from+n), timed when asked */
static mguard_status comp_deps(mguard_cache_job *job, void *value, void *user)
{
    deps *d = (deps *)user;
    size_t i;
    *(long *)value = 7;
    if (d->timed) T0();
    for (i = 0; i < d->n; i++) mguard_cache_job_depend(job, O(d->from + i), NULL);
    for (i = 0; i < d->cost; i++) mguard_cache_job_set_cost(job, i);
    for (i = 0; i < d->keyreads; i++) must(mguard_cache_job_key(job, 0) != NULL, "job_key");
    if (d->timed) T1();
    return MGUARD_OK;
}
static void r_cache_create(cx *c)
{
    unsigned r;
    size_t i;
    LOOP {
        mguard_ctx *ctx = new_ctx(false);
        cold();   /* 2 KB a cache: n of them stay in the last-level cache, 8n not */
        T0();
        for (i = 0; i < c->n; i++) cache_new(ctx);
        T1();
        mguard_ctx_destroy(ctx);
    }
}
/* an entry (key O(NOBJ-2)) that depends on O(0 .. n) */
static mguard_cache *cache_deps(cx *c, size_t n)
{
    mguard_cache *ca = cache_new(c->ctx);
    deps d = {0, 0, false, 0, 0};
    mguard_status st;
    d.n = n;
    mguard_cache_get_or_compute(ca, K(NOBJ - 2), 1, comp_deps, &d, &st);
    must(st == MGUARD_OK, "cache deps");
    return ca;
}
static void r_cache_destroy(cx *c)
{
    unsigned r;
    LOOP {
        mguard_cache *ca = cache_n(c, c->n);
        T0();
        mguard_cache_destroy(ca);
        T1();
    }
}
static void r_cache_set(cx *c)
{
    unsigned r;
    size_t i;
    long v = 3;
    LOOP {
        mguard_cache *ca = cache_new(c->ctx);
        T0();
        for (i = 0; i < c->n; i++) mguard_cache_set(ca, K(i), 1, &v, 0);
        T1();
        mguard_cache_destroy(ca);
    }
}
#define CACHE_QUERY(fname, expr)                                  \
    static void fname(cx *c)                                      \
    {                                                             \
        unsigned r;                                               \
        size_t i, k = 0;                                          \
        mguard_cache_stats cs;                                    \
        mguard_cache_reason rs;                                   \
        mguard_status st;                                         \
        mguard_cache *ca = cache_n(c, c->n);                      \
        (void)cs; (void)rs; (void)st;                             \
        mguard_cache_take(ca, K(0), 1, NULL);                         \
        T0();                                                     \
        LOOP for (i = 1; i <= c->n; i++) k += (i == c->n || (expr)) ? 1 : 0;     \
        T1();                                                     \
        must(k == (size_t)c->reps * c->n, #fname);                \
    }
CACHE_QUERY(r_cache_get, mguard_cache_get(ca, K(i), 1) != NULL)
CACHE_QUERY(r_cache_contains, mguard_cache_contains(ca, K(i), 1))
static unsigned char cx_vbuf[256];   /* mguard_cache_get_copy's out (values are smaller) */
CACHE_QUERY(r_cache_get_copy, mguard_cache_get_copy(ca, K(i), 1, cx_vbuf) == MGUARD_OK)
CACHE_QUERY(r_cache_get_or_compute, mguard_cache_get_or_compute(ca, K(i), 1, comp_deps, NULL, &st) != NULL)
CACHE_QUERY(r_cache_count, mguard_cache_count(ca) == c->n - 1)
CACHE_QUERY(r_cache_get_stats, mguard_cache_get_stats(ca, &cs) == MGUARD_OK)
CACHE_QUERY(r_cache_format, mguard_cache_format(ca, NULL, 0) > 0)
CACHE_QUERY(r_cache_last_reason, mguard_cache_last_reason(ca, K(0), 1, &rs) == MGUARD_OK)
CACHE_QUERY(r_cache_iterate, mguard_cache_iterate(ca).c_ == ca)
static void r_cache_reason_format(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    mguard_cache_reason rs;
    memset(&rs, 0, sizeof rs);
    rs.cause = MGUARD_CACHE_MUTATION;
    rs.obj = O(0);
    rs.attr = "x";
    T0();
    LOOP for (i = 0; i < c->n; i++) k += mguard_cache_reason_format(&rs, NULL, 0) > 0;
    T1();
    must(k == (size_t)c->reps * c->n, "reason_format");
}
static void r_cache_next(cx *c)
{
    unsigned r;
    size_t k = 0;
    mguard_cache *ca = cache_n(c, c->n);
    T0();
    LOOP {
        mguard_cache_iter it = mguard_cache_iterate(ca);
        while (mguard_cache_next(&it)) k++;
    }
    T1();
    must(k == (size_t)c->reps * c->n, "cache walk");
}
/* issue 23: n declared dependencies in one compute */
static void r_cache_job_depend(cx *c)
{
    unsigned r;
    deps d = {0, 0, true, 0, 0};
    mguard_cache *ca = cache_new(c->ctx);
    mguard_status st;
    d.n = c->n;
    LOOP {
        mguard_cache_get_or_compute(ca, K(NOBJ - 2), 1, comp_deps, &d, &st);
        must(st == MGUARD_OK, "job_depend");
        mguard_cache_take(ca, K(NOBJ - 2), 1, NULL);
    }
}
/* n calls of one job function in one compute: set_cost, or job_key (keys) */
static void r_cache_job_calls(cx *c, bool keys)
{
    unsigned r;
    deps d = {0, 0, false, 0, 0};
    mguard_cache *ca = cache_new(c->ctx);
    mguard_status st;
    if (keys) d.keyreads = c->n; else d.cost = c->n;
    LOOP {
        T0();
        mguard_cache_get_or_compute(ca, K(NOBJ - 2), 1, comp_deps, &d, &st);
        T1();
        mguard_cache_take(ca, K(NOBJ - 2), 1, NULL);
    }
}
static void r_cache_job_set_cost(cx *c) { r_cache_job_calls(c, false); }
static void r_cache_job_key(cx *c) { r_cache_job_calls(c, true); }
/* O(dependencies of the entry): 16 calls on an entry of n */
static void r_cache_depend(cx *c)
{
    unsigned r, j;
    mguard_cache *ca = cache_deps(c, c->n);
    T0();
    LOOP for (j = 0; j < 16; j++) must(mguard_cache_depend(ca, K(NOBJ - 2), 1, O(j), NULL) == MGUARD_OK, "depend");
    T1();
}
static void r_cache_remove(cx *c)
{
    unsigned r;
    LOOP {
        mguard_cache *ca = cache_deps(c, c->n);
        T0();
        must(mguard_cache_take(ca, K(NOBJ - 2), 1, NULL) == MGUARD_OK, "remove");
        T1();
        mguard_cache_destroy(ca);
    }
}
static void r_cache_take(cx *c)
{
    unsigned r;
    long v;
    LOOP {
        mguard_cache *ca = cache_deps(c, c->n);
        T0();
        must(mguard_cache_take(ca, K(NOBJ - 2), 1, &v) == MGUARD_OK, "take");
        T1();
        mguard_cache_destroy(ca);
    }
}
static void r_cache_clear(cx *c)
{
    unsigned r;
    LOOP {
        mguard_cache *ca = cache_n(c, c->n);
        T0();
        mguard_cache_clear(ca);
        T1();
        mguard_cache_destroy(ca);
    }
}

/* n entries that share one object (O(NOBJ - 3)): shape 0, tuples (k_i, S); 1, (S, k_i);
   2, one key k_i and a declared dependency on S. An object many entries share goes
   into a hub: each store, lookup and drop stays O(1), not O(entries on the object). */
static void cache_shared_fill(mguard_cache *ca, size_t n, int shape)
{
    size_t i;
    long v = 1;
    for (i = 0; i < n; i++) {
        const void *k[2];
        k[0] = shape == 1 ? O(NOBJ - 3) : O(i);
        k[1] = shape == 1 ? O(i) : O(NOBJ - 3);
        must(mguard_cache_set(ca, k, shape == 2 ? 1 : 2, &v, 0) == MGUARD_OK, "shared set");
        if (shape == 2) must(mguard_cache_depend(ca, k, 1, O(NOBJ - 3), NULL) == MGUARD_OK, "shared depend");
    }
}
static void r_cache_set_shared(cx *c, int shape)
{
    unsigned r;
    LOOP {
        mguard_cache *ca = cache_new(c->ctx);
        T0();
        cache_shared_fill(ca, c->n, shape);
        T1();
        mguard_cache_destroy(ca);
    }
}
static void r_cache_set_shared_key(cx *c) { r_cache_set_shared(c, 0); }
static void r_cache_depend_shared(cx *c) { r_cache_set_shared(c, 2); }
static void r_cache_get_shared_first(cx *c)
{
    unsigned r;
    size_t i, k = 0;
    mguard_cache *ca = cache_new(c->ctx);
    cache_shared_fill(ca, c->n, 1);
    T0();
    LOOP for (i = 0; i < c->n; i++) {
        const void *t[2];
        t[0] = O(NOBJ - 3);
        t[1] = O(i);
        k += mguard_cache_get(ca, t, 2) != NULL;
    }
    T1();
    must(k == (size_t)c->reps * c->n, "shared get");
}
/* one event (or clear) drops the n entries sharing the object */
static void r_cache_drop_shared(cx *c, int shape, int how)
{
    unsigned r;
    LOOP {
        mguard_cache *ca = cache_new(c->ctx);
        cache_shared_fill(ca, c->n, shape);
        T0();
        if (how == 0) mguard_on_mutation(c->ctx, O(NOBJ - 3), NULL);
        else mguard_cache_clear(ca);
        T1();
        must(mguard_cache_count(ca) == 0, "shared drop");
        mguard_cache_destroy(ca);
    }
}
static void r_cache_mutation_shared(cx *c) { r_cache_drop_shared(c, 2, 0); }
/* n events on an object that n tuples once began with, all taken but one
   (its hub shrinks: an event reads what the hub holds, not what it held) */
static void r_cache_events_after_peak(cx *c)
{
    unsigned r;
    size_t i;
    long v = 1;
    const void *t[2];
    t[0] = O(NOBJ - 3);
    LOOP {
        mguard_cache *ca = cache_new(c->ctx);
        cache_shared_fill(ca, c->n, 1);
        for (i = 1; i < c->n; i++) {
            t[1] = O(i);
            must(mguard_cache_take(ca, t, 2, NULL) == MGUARD_OK, "peak take");
        }
        t[1] = O(0);
        T0();
        for (i = 0; i < c->n; i++) {
            mguard_on_mutation(c->ctx, O(NOBJ - 3), NULL);
            mguard_cache_set(ca, t, 2, &v, 0);
        }
        T1();
        must(mguard_cache_count(ca) == 1, "events after peak");
        mguard_cache_destroy(ca);
    }
}
static void r_cache_clear_shared(cx *c) { r_cache_drop_shared(c, 0, 1); }

/* ---- the table --------------------------------------------------------- */
enum { M_TIME = 0, M_ALLOCS = 1 };
typedef struct row {
    const char *fn;     /* the public function */
    const char *loop;   /* what is timed, at size n */
    void (*run)(cx *c);
    size_t n;           /* base size (0: NDEF, 2048); 8192 for a walk of a
                           whole structure set up just before it: at 2048
                           the structure is still in the cache at n and no
                           longer at 8n (such rows measured 21-53x at 2048,
                           8-17x at 4096 and up) */
    double scale;       /* promised growth of the timed loop, n -> 8n (0: 8) */
    int metric;         /* M_TIME, or M_ALLOCS: allocator calls only */
    const char *known;  /* a reported break (issue) still being fixed */
} row;

#define R(fn, loop, run) {fn, loop, run, 0, 0, M_TIME, NULL}
#define RN(fn, loop, run, n, scale) {fn, loop, run, n, scale, M_TIME, NULL}
static const row rows[] = {
    R("mguard_ctx_create", "n contexts created", r_ctx_create),
    RN("mguard_ctx_destroy", "destroy a context of n keys, watchers, tags", r_ctx_destroy, 8192, 0),
    RN("mguard_ctx_check", "check a context of n keys, watchers, tags", r_ctx_check, 8192, 0),
    R("mguard_ctx_get_stats", "n calls, n objects", r_ctx_get_stats),
    R("mguard_on_destroy", "n objects die (1 table, 1 watcher each)", r_on_destroy),
    R("mguard_intern", "n new strings", r_intern),
    R("mguard_weak_create", "n tables created", r_weak_create),
    R("mguard_weak_destroy", "destroy a table of n", r_weak_destroy),
    R("mguard_weak_set", "n new keys", r_weak_set),
    R("mguard_weak_get", "n hits, table of n", r_weak_get),
    R("mguard_weak_get_copy", "n hits, table of n", r_weak_get_copy),
    R("mguard_weak_contains", "n hits, table of n", r_weak_contains),
    R("mguard_weak_get_sized", "n hits, table of n", r_weak_get_sized),
    R("mguard_weak_take", "n takes, NULL out, table of n", r_weak_remove),
    R("mguard_weak_take", "n takes, table of n", r_weak_take),
    R("mguard_weak_count", "n calls, table of n", r_weak_count),
    R("mguard_weak_clear", "clear a table of n", r_weak_clear),
    R("mguard_weak_next", "walk a table of n", r_weak_iterate),
    R("mguard_ref_make", "n new objects", r_ref_make),
    R("mguard_ref_get", "n reads", r_ref_get),
    R("mguard_ref_get_retained", "n reads", r_ref_get_retained),
    R("mguard_watch", "n objects watched", r_watch),
    R("mguard_on_mutation_at", "n watched objects mutated", r_on_mutation),
    R("mguard_gen_tag", "n objects tagged", r_gen_tag),
    R("mguard_gen_clear", "clear n tags", r_gen_clear),
#ifndef MGUARD_NO_SCOPE
    R("mguard_scope_create", "n trackers created", r_scope_create),
    R("mguard_scope_destroy", "destroy: n names, n spans", r_scope_destroy),
    R("mguard_scope_name", "n lookups of named children", r_scope_name),
    {"mguard_scope_name", "first lookup of a parent of n children looked up first", r_scope_name_children_first,
     1024, 0, M_TIME, NULL},
    {"mguard_scope_name", "lookup after forget + a child inserted at the front (n children)", r_scope_name_after_forget,
     1024, 0, M_TIME, NULL},
    R("mguard_scope_set_name", "n components named", r_scope_set_name),
    R("mguard_scope_attach", "n children attached", r_scope_attach),
    R("mguard_scope_forget", "forget a parent of n children", r_scope_forget),
    R("mguard_scope_enter", "n enters (depth 0 .. n)", r_scope_enter),
    R("mguard_scope_exit", "16 exits at depth n", r_scope_exit),
    R("mguard_scope_parents", "the active set of n", r_scope_parents),
    R("mguard_scope_frames", "n calls at depth n, the current name", r_scope_current),
    R("mguard_scope_frames", "the stack at depth n", r_scope_frames),
    R("mguard_scope_format", "the PATH at depth n", r_scope_path),
    R("mguard_scope_set_phase", "n calls at depth n", r_scope_set_phase),
    R("mguard_scope_phase", "n calls at depth n", r_scope_phase),
    R("mguard_scope_is_active", "n calls at depth n", r_scope_is_active),
    R("mguard_scope_counter", "n calls at depth n", r_scope_counter),
    R("mguard_scope_clear", "FRAMES at depth n", r_scope_reset),
    R("mguard_scope_add", "add to n active names", r_scope_add),
    R("mguard_scope_format", "TABLE of n names", r_scope_report),
    R("mguard_scope_format", "TRACE_JSON of n spans", r_scope_report_trace),
    R("mguard_scope_clear", "TRACE at depth n, n spans", r_scope_clear_trace),
    R("mguard_scope_clear", "WARNINGS, n of them", r_scope_clear_warnings),
#endif
#ifndef MGUARD_NO_DYN
    R("mguard_dyn_create", "n trackers created", r_dyn_create),
    RN("mguard_dyn_destroy", "destroy: n paths", r_dyn_destroy, 8192, 0),
    /* the cost line: a new path + O(groups) (its group is found by a scan):
       n new paths in n groups, O(n^2) in all */
    {"mguard_dyn_observe", "n new paths of rank 2, each its own group", r_dyn_observe, 0, 64, M_TIME, NULL},
    R("mguard_dyn_observe", "n new paths of rank 2 in one group", r_dyn_observe_group),
    R("mguard_dyn_observe", "one path of rank n", r_dyn_observe_rank),
    R("mguard_dyn_dims", "n lookups, n paths", r_dyn_dims),
    R("mguard_dyn_iterate", "n calls, n paths", r_dyn_iterate),
    R("mguard_dyn_next", "walk n paths", r_dyn_next),
    R("mguard_dyn_format", "n paths of rank 2", r_dyn_format),
    R("mguard_dyn_normalize_name", "a name of n dots", r_dyn_normalize_name),
#endif
#ifndef MGUARD_NO_LEDGER
    R("mguard_ledger_create", "n ledgers created", r_ledger_create),
    R("mguard_ledger_destroy", "destroy: n objects, writes, records (release hook)", r_ledger_destroy),
    R("mguard_ledger_track", "n objects tracked, kinds in turn", r_ledger_track),
    R("mguard_ledger_get", "n calls, n objects", r_ledger_get),
    R("mguard_ledger_mark_modified", "n calls, n objects", r_ledger_mark_modified),
    R("mguard_ledger_store_attr", "n attributes of one object", r_ledger_store_attr),
    R("mguard_ledger_delete_attr", "n attributes of one object", r_ledger_delete_attr),
    R("mguard_ledger_pending", "n calls, n objects", r_ledger_pending),
    R("mguard_ledger_set_fields", "a table of n fields", r_ledger_set_fields),
    R("mguard_ledger_read", "n reads of a field, n objects", r_ledger_read),
    R("mguard_ledger_get_stats", "n calls, n objects", r_ledger_get_stats),
    R("mguard_ledger_iterate", "n calls, n objects, each walk in turn", r_ledger_iterate),
    R("mguard_ledger_next", "walk n objects", r_ledger_next),
    R("mguard_ledger_record", "n records", r_ledger_record),
    R("mguard_ledger_register_hook", "one hook registered among n", r_ledger_register_hook),
    R("mguard_ledger_remove_hook", "one hook removed among n", r_ledger_remove_hook),
    R("mguard_ledger_clone", "clone n objects, writes, records", r_ledger_clone),
    R("mguard_ledger_restore", "restore n objects, writes, records", r_ledger_restore),
    R("mguard_ledger_equal", "n calls, an unchanged clone", r_ledger_equal_clone),
    R("mguard_ledger_equal", "a changed clone of n", r_ledger_equal),
    R("mguard_ledger_diff", "n changed writes", r_ledger_diff),
    R("mguard_ledger_diff_items", "n calls, n items", r_ledger_diff_items),
    R("mguard_ledger_diff_format", "the text of n items", r_ledger_diff_format),
    {"mguard_ledger_diff_free", "free a result of n items (allocator calls)", r_ledger_diff_free, 0, 1, M_ALLOCS, NULL},
    RN("mguard_ledger_prune", "n new objects, all reached", r_ledger_prune, 8192, 0),
    {"mguard_ledger_apply", "one object of n fields, a write to each", r_ledger_apply, 2048, 0, M_TIME, NULL},
    R("mguard_ledger_clear", "clear n objects, writes, records (release hook)", r_ledger_clear),
#endif
    R("mguard_cache_create", "n caches created", r_cache_create),
    R("mguard_cache_destroy", "destroy a cache of n", r_cache_destroy),
    R("mguard_cache_set", "n new entries", r_cache_set),
    R("mguard_cache_set", "n new entries sharing a further key", r_cache_set_shared_key),
    R("mguard_cache_get", "n lookups, n entries", r_cache_get),
    R("mguard_cache_get", "n lookups, n entries sharing their first key", r_cache_get_shared_first),
    R("mguard_cache_contains", "n lookups, n entries", r_cache_contains),
    R("mguard_cache_get_copy", "n lookups, n entries", r_cache_get_copy),
    R("mguard_cache_get_or_compute", "n hits, n entries", r_cache_get_or_compute),
    {"mguard_cache_job_depend", "n dependencies declared by one compute", r_cache_job_depend, 4096, 0, M_TIME, NULL},
    R("mguard_cache_job_set_cost", "n calls in one compute", r_cache_job_set_cost),
    R("mguard_cache_job_key", "n calls in one compute", r_cache_job_key),
    R("mguard_cache_depend", "16 calls, an entry of n dependencies", r_cache_depend),
    R("mguard_cache_depend", "n entries depending on one object", r_cache_depend_shared),
    R("mguard_on_mutation_at", "one object n entries depend on, mutated", r_cache_mutation_shared),
    R("mguard_on_mutation_at", "n events on an object n tuples began with, all but one gone", r_cache_events_after_peak),
    R("mguard_cache_take", "NULL out, an entry of n dependencies", r_cache_remove),
    R("mguard_cache_take", "an entry of n dependencies", r_cache_take),
    R("mguard_cache_clear", "clear n entries", r_cache_clear),
    R("mguard_cache_clear", "clear n entries sharing a further key", r_cache_clear_shared),
    R("mguard_cache_count", "n calls, n entries", r_cache_count),
    R("mguard_cache_iterate", "n calls, n entries", r_cache_iterate),
    R("mguard_cache_next", "walk n entries", r_cache_next),
    R("mguard_cache_get_stats", "n calls", r_cache_get_stats),
    R("mguard_cache_format", "n calls", r_cache_format),
    R("mguard_cache_last_reason", "n calls", r_cache_last_reason),
    R("mguard_cache_reason_format", "n calls", r_cache_reason_format),
};

/* Functions with a "Cost:" line that no row measures, and why. */
static const char *const unmeasured[][2] = {
    {NULL, NULL}
};

/* ---- the driver -------------------------------------------------------- */
typedef struct meas { double ns, total; long allocs; } meas;

static meas measure(const row *rw, size_t n, unsigned reps)
{
    cx c;
    meas m;
    double t0 = cpu_ns();
    memset(&c, 0, sizeof c);
    c.n = n;
    c.reps = reps;
    c.ctx = new_ctx(false);
    C = &c;
    rw->run(&c);
    mguard_ctx_destroy(c.ctx);
    C = NULL;
    m.ns = c.ns;
    m.total = cpu_ns() - t0 - c.cold_ns;
    m.allocs = c.allocs;
    return m;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int k)
{
    qsort(v, (size_t)k, sizeof *v, cmp_d);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

#define HEADROOM 2.5
#define MAXROUNDS 16
#define NDEF 2048                  /* the base n of a row that names none */
static double target_ns = 10e6;
static int rounds = 5;
static bool quick;                 /* --quick: n / 2, shorter measures */

static size_t row_n(const row *rw)
{
    size_t n = rw->n ? rw->n : NDEF;
    return quick ? n / 2 : n;
}

/* ratio of the measure at 8n to that at n; true when within the promise */
static bool check_row(const row *rw, int attempt, double *ratio, double *ms1, double *ms8, long *al1, long *al8,
                      unsigned *repsp)
{
    size_t n = row_n(rw);
    double scale = rw->scale > 0 ? rw->scale : 8, limit = scale * HEADROOM;
    unsigned reps = 1;
    double a[MAXROUNDS], b[MAXROUNDS];
    int k, nr = rounds + 2 * attempt;
    meas m1, m8;
    memset(&m1, 0, sizeof m1);
    memset(&m8, 0, sizeof m8);
    if (nr > MAXROUNDS) nr = MAXROUNDS;
    if (quick) nr = 1;                /* allocator calls only: one round */
    else if (rw->metric == M_TIME) {
        for (;;) {   /* calibrate: the measure at n takes target_ns */
            double f;
            m1 = measure(rw, n, reps);
            /* setup outside the clock counts too: a row whose setup
               dwarfs its timed part stops at 5 x target_ns in all */
            if (m1.ns >= target_ns || m1.total >= 5 * target_ns || reps >= (1u << 20)) break;
            f = m1.ns > 0 ? 1.3 * target_ns / m1.ns : 16;
            reps = (unsigned)((double)reps * (f < 2 ? 2 : f > 64 ? 64 : f));
        }
    }
    for (k = 0; k < (rw->metric == M_TIME ? nr : 1); k++) {
        m1 = measure(rw, n, reps);
        m8 = measure(rw, 8 * n, reps);
        a[k] = m1.ns;
        b[k] = m8.ns;
    }
    *repsp = reps;
    *ms1 = median(a, k) / 1e6;
    *ms8 = median(b, k) / 1e6;
    *al1 = m1.allocs;
    *al8 = m8.allocs;
    if (rw->metric == M_ALLOCS) {
        *ratio = (double)m8.allocs / (double)(m1.allocs ? m1.allocs : 1);
        return *ratio <= limit;
    }
    if (quick) {   /* times are printed, not judged: too short to trust */
        *ratio = *ms1 > 0 ? *ms8 / *ms1 : 0;
        return (double)m8.allocs <= limit * (double)m1.allocs + 8;
    }
    *ratio = *ms1 > 0 ? *ms8 / *ms1 : 0;
    /* allocator calls: deterministic; a few more at 8n for doubling arrays */
    if ((double)m8.allocs > limit * (double)m1.allocs + 8) return false;
    return *ratio <= limit;
}

static char *xdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *d = (char *)malloc(len);
    if (d) memcpy(d, s, len);
    return d;
}

static bool listed(const char *only, const char *fn)
{
    const char *p = only;
    size_t len = strlen(fn);
    if (!only) return true;
    while ((p = strstr(p, fn)) != NULL) {
        if ((p == only || p[-1] == ',') && (p[len] == '\0' || p[len] == ',')) return true;
        p += len;
    }
    return false;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    bool list = false;
    size_t i, nrows = sizeof rows / sizeof rows[0];
    int a, failed = 0, known = 0, ran = 0;
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--quick")) quick = true;
        else if (!strcmp(argv[a], "--list")) list = true;
        else if (!strcmp(argv[a], "--only") && a + 1 < argc) only = argv[++a];
        else {
            fprintf(stderr, "usage: %s [--quick] [--list] [--only fn,fn]\n", argv[0]);
            return 2;
        }
    }
    if (list) {
        for (i = 0; i < nrows; i++) printf("row %s\n", rows[i].fn);
        for (i = 0; unmeasured[i][0]; i++)
            printf("unmeasured %s %s\n", unmeasured[i][0], unmeasured[i][1]);
        return 0;
    }
    if (quick) rounds = 1;
#ifdef __GLIBC__
    /* glibc hands a large block back to the kernel when it is freed (mmap
       above a threshold that moves, heap trimming): a destroy at 8n then
       pays for unmapping pages that a destroy at n never does (measured
       53x for mguard_ctx_destroy, linear in a program without this).
       Keep the memory in the process: the rows time mguard's work. */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    OBJ = (char *)calloc(NOBJ, 1);
    NM = (char **)malloc(NOBJ * sizeof *NM);
    IX = (char **)malloc(NOBJ * sizeof *IX);
    GP = (char **)malloc(NOBJ * sizeof *GP);
    kids = (const void **)malloc((NOBJ + 1) * sizeof *kids);
    ckeys = (const void **)malloc(NOBJ * sizeof *ckeys);
    if (!OBJ || !NM || !IX || !GP || !kids || !ckeys) return 1;
    for (i = 0; i < NOBJ; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "a%lu", (unsigned long)i);
        NM[i] = xdup(buf);
        snprintf(buf, sizeof buf, "%lu", (unsigned long)i);
        IX[i] = xdup(buf);
        snprintf(buf, sizeof buf, "L['x'][%lu]", (unsigned long)i);
        GP[i] = xdup(buf);
        ckeys[i] = O(i);
    }
    if (quick)
        printf("mguard complexity --quick: allocator calls of each row's loop at n and 8n, one round;\n"
               "fails when calls(8n) > scale x %.1f x calls(n) + 8 (times printed, not judged)\n", HEADROOM);
    else
        printf("mguard complexity: time (thread CPU) of each row's loop at n and 8n, median of %d rounds;\n"
               "fails when t(8n)/t(n) > scale x %.1f (scale: the promised growth, 8 unless said), or when\n"
               "allocator calls grow so\n", rounds, HEADROOM);
    for (i = 0; i < nrows; i++) {
        const row *rw = &rows[i];
        double ratio = 0, ms1 = 0, ms8 = 0, limit = (rw->scale > 0 ? rw->scale : 8) * HEADROOM;
        long al1 = 0, al8 = 0;
        unsigned reps = 0;
        bool ok = false;
        int attempt;
        if (!listed(only, rw->fn)) continue;
        if (quick && rw->known) {
            printf("%-30s %-56s known break, skipped with --quick\n", rw->fn, rw->loop);
            known++;
            continue;
        }
        ran++;
        for (attempt = 0; attempt < 3 && !ok; attempt++) {
            ok = check_row(rw, attempt, &ratio, &ms1, &ms8, &al1, &al8, &reps);
            if (rw->known && !ok) break;   /* no retries for a break already known */
        }
        printf("%-30s %-56s n=%-5lu reps=%-6u %8.2f ms %8.2f ms x%6.2f (<= %4.1f) allocs %ld -> %ld  %s\n", rw->fn,
               rw->loop, (unsigned long)row_n(rw), reps, ms1, ms8, ratio, limit, al1, al8,
               ok ? (rw->known ? "ok (known break fixed: remove its mark)" : quick ? "ok (allocs)" : "ok")
                  : rw->known ? "FAIL (known)" : "FAIL");
        if (!ok && rw->known) {
            printf("    %s\n", rw->known);
            known++;
            failed++;
        } else if (!ok) {
            failed++;
        }
        fflush(stdout);
    }
    if (failures) printf("%d setup checks failed\n", failures);
    printf("complexity: %d rows, %d failed%s", ran, failed, known ? "" : "\n");
    if (known) printf(" (%d known breaks%s)\n", known, quick ? " skipped" : " among them");
    for (i = 0; i < NOBJ; i++) { free(NM[i]); free(IX[i]); free(GP[i]); }
    free(NM); free(IX); free(GP); free(OBJ); free(kids); free(ckeys);
    return failed || failures ? 1 : 0;
}
