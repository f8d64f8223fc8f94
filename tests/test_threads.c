/* Thread-safe contexts: the lock is held around every call and never
   around a callback (checked with a lock of our own), callbacks call back
   into the context from the same thread and from a thread they join
   without deadlock, log lines reach the logger outside the lock,
   mguard_weak_get_copy, mguard_cache_get_copy (against a writer) and
   mguard_ref_get_retained, mguard_on_destroy of a
   guard waits for the guard's callback running on another thread, a
   ledger release never overtaking its retain (issue 11, defect 1), and two
   stress runs of four threads on one context: one sharing objects, tables,
   watchers and refs, one sharing reference-counted objects, ledgers, scope
   trackers and dynamism trackers; each checks its invariants at the end.
   MGUARD_THREADS_ITERS sets the stress length (make tsan runs a longer one
   under ThreadSanitizer). */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "common.h"

/* ---- small thread helpers --------------------------------------------- */

static void *run_and_join(void *(*fn)(void *), void *arg)
{
    pthread_t th;
    void *ret = NULL;
    if (pthread_create(&th, NULL, fn, arg) != 0) abort();
    pthread_join(th, &ret);
    return ret;
}

static int flag_get(const int *f) { return __atomic_load_n(f, __ATOMIC_SEQ_CST); }
static void flag_set(int *f, int v) { __atomic_store_n(f, v, __ATOMIC_SEQ_CST); }
static long count_add(long *c, long v) { return __atomic_add_fetch(c, v, __ATOMIC_SEQ_CST); }

static void sleep_ms(long ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0) {}
}

static mguard_ctx *ts_ctx(test_log *log)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    d.thread_safe = true;
    if (log) {
        memset(log, 0, sizeof *log);
        d.logger.func = test_log_fn;
        d.logger.user = log;
    } else {
        d.quiet = true;
    }
    return mguard_ctx_create(&d);
}

/* A lock of our own: a mutex plus a flag that says whether mguard holds it,
   so callbacks can check they never run under it. */
typedef struct my_lock {
    pthread_mutex_t m;
    int held;
    long locks, unlocks;
} my_lock;

static void my_lock_fn(void *user)
{
    my_lock *l = (my_lock *)user;
    pthread_mutex_lock(&l->m);
    flag_set(&l->held, 1);
    l->locks++;
}

static void my_unlock_fn(void *user)
{
    my_lock *l = (my_lock *)user;
    l->unlocks++;
    flag_set(&l->held, 0);
    pthread_mutex_unlock(&l->m);
}

static my_lock *g_log_lock;
static long g_log_held, g_log_calls;
static void lock_checking_log(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    g_log_calls++;
    if (g_log_lock && flag_get(&g_log_lock->held)) g_log_held++;
    test_log_fn(level, code, msg, user);
}

static mguard_ctx *user_lock_ctx(my_lock *l, test_log *log)
{
    mguard_ctx_desc d;
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->m, NULL);
    memset(&d, 0, sizeof d);
    d.lock.lock_fn = my_lock_fn;
    d.lock.unlock_fn = my_unlock_fn;
    d.lock.user = l;
    memset(log, 0, sizeof *log);
    d.logger.func = lock_checking_log;
    d.logger.user = log;
    return mguard_ctx_create(&d);
}

/* ---- creation ---------------------------------------------------------- */

static void test_thread_safe_context_says_so(void **state)
{
    test_log log;
    mguard_ctx *ts = ts_ctx(&log), *plain = mguard_ctx_create(NULL);
    (void)state;
    assert_non_null(ts);
    assert_true(mgt_stats(ts).thread_safe);
    assert_false(mgt_stats(plain).thread_safe);
    assert_false(mgt_stats(NULL).thread_safe);
    assert_ctx_ok(ts);
    mguard_ctx_destroy(ts);
    mguard_ctx_destroy(plain);
    assert_int_equal(log.count, 0);
}

static void test_half_given_lock_is_refused(void **state)
{
    test_log log;
    my_lock l;
    mguard_ctx_desc d;
    (void)state;
    memset(&l, 0, sizeof l);
    memset(&log, 0, sizeof log);
    memset(&d, 0, sizeof d);
    d.lock.lock_fn = my_lock_fn;
    d.lock.user = &l;
    d.logger.func = test_log_fn;
    d.logger.user = &log;
    assert_null(mguard_ctx_create(&d));
    assert_int_equal(log.errors, 1);
    assert_int_equal(log.code, MGUARD_LOG_HALF_LOCK);
}

static void test_allocation_failure_creating_the_lock_leaks_nothing(void **state)
{
    test_log log;
    test_alloc alloc;
    mguard_ctx_desc d;
    (void)state;
    memset(&log, 0, sizeof log);
    memset(&alloc, 0, sizeof alloc);
    memset(&d, 0, sizeof d);
    d.thread_safe = true;
    d.allocator.realloc_fn = fa_realloc;
    d.allocator.free_fn = fa_free;
    d.allocator.user = &alloc;
    d.logger.func = test_log_fn;
    d.logger.user = &log;
    alloc.fail_at = 2;   /* the context is the first block, the lock the second */
    assert_null(mguard_ctx_create(&d));
    assert_int_equal(alloc.live_blocks, 0);
    assert_int_equal(log.code, MGUARD_LOG_NOMEM);
}

/* ---- every public function takes the lock --------------------------------
   Each function of the lock layer's list (MGUARD__API in mguard.h, read
   from the header itself so a new function cannot be forgotten here) is
   called once on a thread-safe context with a counting lock: the call must
   take the lock exactly once and let it go exactly once, plus once more
   for each callback it runs (callbacks run outside the lock: each checks
   it). The context has no value destructor, no watcher and no ledger hook
   that could fire, so no other call-out happens. */
static my_lock *g_cl_lock;
static long g_cl_callbacks, g_cl_held;
static void cl_callback_seen(void)
{
    g_cl_callbacks++;
    if (flag_get(&g_cl_lock->held)) g_cl_held++;
}
static void cl_apply(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    (void)obj; (void)attr; (void)value; (void)deleted; (void)user;
    cl_callback_seen();
}
static void cl_invalidate_never(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
    fail_msg("no watcher may fire in this test");
}
/* The compute of section 10: a callback that calls two functions of the
   lock layer (each takes the lock once more: counted like a callback). */
static mguard_status cl_compute(mguard_cache_job *job, void *value, void *user);
static bool cl_retain(void *obj, void *user)
{
    (void)obj;
    /* try_retain runs under the lock, by contract */
    *(int *)user += flag_get(&g_cl_lock->held);
    return true;
}

#define CL_MAX 160
static char g_cl_done[CL_MAX][40];
static int g_cl_ndone;

/* L's sizes (all 0 when refused). */
static mguard_ledger_stats ledger_stats(const mguard_ledger *L)
{
    mguard_ledger_stats s;
    memset(&s, 0, sizeof s);
    if (mguard_ledger_get_stats(L, &s) != MGUARD_OK) memset(&s, 0, sizeof s);
    return s;
}

/* Call `call`, naming the function; check the lock's counts. */
#define LOCKED(name, call) do { \
        long l0_ = l.locks, u0_ = l.unlocks, c0_ = g_cl_callbacks; \
        call; \
        assert_int_equal(l.locks - l0_, 1 + (g_cl_callbacks - c0_)); \
        assert_int_equal(l.unlocks - u0_, 1 + (g_cl_callbacks - c0_)); \
        assert_false(flag_get(&l.held)); \
        assert_true(g_cl_ndone < CL_MAX); \
        snprintf(g_cl_done[g_cl_ndone++], sizeof g_cl_done[0], "%s", name); \
    } while (0)

static mguard_status cl_compute(mguard_cache_job *job, void *value, void *user)
{
    cl_callback_seen();
    cl_callback_seen();   /* the lock taken by each of the three calls */
    cl_callback_seen();
    cl_callback_seen();
    assert_int_equal(mguard_cache_job_depend(job, user, "w"), MGUARD_OK);
    assert_int_equal(mguard_cache_job_set_cost(job, 2), MGUARD_OK);
    assert_non_null(mguard_cache_job_key(job, 0));
    snprintf(g_cl_done[g_cl_ndone++], sizeof g_cl_done[0], "%s", "mguard_cache_job_key");
    snprintf(g_cl_done[g_cl_ndone++], sizeof g_cl_done[0], "%s", "mguard_cache_job_depend");
    snprintf(g_cl_done[g_cl_ndone++], sizeof g_cl_done[0], "%s", "mguard_cache_job_set_cost");
    *(int *)value = 7;
    return MGUARD_OK;
}

/* The names listed in MGUARD__API (its per-section lists
   MGUARD__API_CORE, _SCOPE, _DYN, _LEDGER), one per line. */
static int api_list(char names[][40], int cap)
{
    FILE *f = fopen("mguard.h", "r");
    char line[1024];
    int n = 0;
    if (!f) fail_msg("mguard.h not found: run the tests from the repository root, as make does");
    while (fgets(line, sizeof line, f)) {
        const char *p = line, *q;
        if (strncmp(p, "    X(", 6) == 0 || strncmp(p, "    Q(", 6) == 0 || strncmp(p, "    W(", 6) == 0) {
            p = strchr(p, ',');
            assert_non_null(p);
            p += 2;
        } else if (strncmp(p, "    V(", 6) == 0) {
            p += 6;
        } else {
            continue;
        }
        q = strchr(p, ',');
        assert_non_null(q);
        assert_true(n < cap && q - p < 32);
        snprintf(names[n++], 40, "mguard_%.*s", (int)(q - p), p);
    }
    fclose(f);
    return n;
}

static void test_every_public_function_takes_the_lock_once(void **state)
{
    my_lock l;
    test_log log;
    mguard_ctx *ctx = user_lock_ctx(&l, &log);
    static int o1, o2, o3, guard, cls, comp, val;
    static char api[CL_MAX][40];
    mguard_weak_desc wd;
    mguard_weak *t = NULL;
    mguard_weak_iter wit;
    mguard_scope *s = NULL;
    mguard_dyn *d = NULL;
    mguard_dyn_iter dit;
    mguard_ledger *L = NULL, *C = NULL;
    mguard_ledger_iter lit;
    mguard_ledger_entry le;
    mguard_ledger_stats lst;
    mguard_ledger_diff_result *diff = NULL;
    mguard_ref ref;
    const char *names[4];
    void *pv;
    bool dyn[4];
    size_t rank = 0;
    char buf[256];
    long out;
    int64_t dims[2] = {2, 3};
    int id = -1, retained_held = 0, i, j, napi;
    (void)state;
    assert_non_null(ctx);
    g_cl_lock = &l;
    g_cl_callbacks = g_cl_held = 0;
    g_cl_ndone = 0;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof(long);
    out = 7;

    /* 1, 2: context and lifetimes */
    LOCKED("mguard_ctx_check", assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK));
    LOCKED("mguard_intern", assert_string_equal(mguard_intern(ctx, "name"), "name"));
    /* 3: weak tables */
    LOCKED("mguard_weak_create", t = mguard_weak_create(ctx, &wd));
    assert_non_null(t);
    LOCKED("mguard_weak_set", assert_int_equal(mguard_weak_set(t, &o1, &out), MGUARD_OK));
    LOCKED("mguard_weak_get", assert_non_null(mguard_weak_get(t, &o1)));
    LOCKED("mguard_weak_get_sized", assert_non_null(mguard_weak_get_sized(t, &o1, sizeof(long))));
    LOCKED("mguard_weak_contains", assert_true(mguard_weak_contains(t, &o1)));
    LOCKED("mguard_weak_count", assert_int_equal(mguard_weak_count(t), 1));
    LOCKED("mguard_weak_iterate", wit = mguard_weak_iterate(t));
    LOCKED("mguard_weak_next", assert_true(mguard_weak_next(&wit)));
    LOCKED("mguard_weak_get_copy", assert_int_equal(mguard_weak_get_copy(t, &o1, &out), MGUARD_OK));
    LOCKED("mguard_weak_take", assert_int_equal(mguard_weak_take(t, &o1, &out), MGUARD_OK));
    assert_int_equal(mguard_weak_set(t, &o1, &out), MGUARD_OK);
    assert_int_equal(mguard_weak_take(t, &o1, NULL), MGUARD_OK);
    assert_int_equal(mguard_weak_set(t, &o1, &out), MGUARD_OK);
    LOCKED("mguard_weak_clear", mguard_weak_clear(t));
    LOCKED("mguard_ctx_get_stats", assert_int_equal(mgt_objects(ctx), 0));
    LOCKED("mguard_weak_destroy", mguard_weak_destroy(t));
    /* 4: refs */
    LOCKED("mguard_ref_make", ref = mguard_ref_make(ctx, &o2));
    LOCKED("mguard_ref_get", assert_ptr_equal(mguard_ref_get(ctx, ref), &o2));
    LOCKED("mguard_ref_get_retained", assert_ptr_equal(mguard_ref_get_retained(ctx, ref, cl_retain, &retained_held), &o2));
    assert_int_equal(retained_held, 1);
    LOCKED("mgt_ctx_contains", assert_true(mgt_ctx_contains(ctx, &o2))); g_cl_ndone--;   /* a test helper, not an API function */
    /* 5: trackers (no watcher fires: o1 is watched but never mutated) */
    LOCKED("mguard_watch", assert_int_equal(mguard_watch(ctx, &o1, &guard, cl_invalidate_never, NULL), MGUARD_OK));
    LOCKED("mgt_watcher_count", assert_int_equal(mgt_watcher_count(ctx, &o1), 1)); g_cl_ndone--;   /* a test helper, not an API function */
    LOCKED("mguard_unwatch", assert_int_equal(mguard_unwatch(ctx, &o1, &guard), MGUARD_OK));
    LOCKED("mguard_on_mutation_at", mguard_on_mutation(ctx, &o1, "x"));   /* the macro */
    LOCKED("mguard_mutation_count", assert_int_equal(mguard_mutation_count(ctx, &o1), 1));
    mguard_on_mutation_at(ctx, &o1, "x", NULL, 0);
    /* 11: a guarded cache (no value destructor) */
    {
        mguard_cache_desc cd = {sizeof(int), NULL, 0, 0, false, NULL, NULL, NULL};
        mguard_cache *cc;
        mguard_cache_iter cit;
        mguard_cache_stats cs;
        mguard_cache_reason cr;
        mguard_status cst;
        int one = 1, cv = 0;
        char buf[256];
        const void *k1[1] = {&o1}, *k2[1] = {&o2};
        LOCKED("mguard_cache_create", cc = mguard_cache_create(ctx, &cd));
        assert_non_null(cc);
        LOCKED("mguard_cache_set", assert_int_equal(mguard_cache_set(cc, k1, 1, &one, 0), MGUARD_OK));
        LOCKED("mguard_cache_get", assert_int_equal(*(int *)mguard_cache_get(cc, k1, 1), 1));
        LOCKED("mguard_cache_get_copy", assert_int_equal(mguard_cache_get_copy(cc, k1, 1, &one), MGUARD_OK));
        LOCKED("mguard_cache_contains", assert_true(mguard_cache_contains(cc, k1, 1)));
        LOCKED("mguard_cache_depend", assert_int_equal(mguard_cache_depend(cc, k1, 1, &o3, NULL), MGUARD_OK));
        LOCKED("mguard_cache_get_or_compute", assert_int_equal(*(int *)mguard_cache_get_or_compute(cc, k2, 1, cl_compute, &o3, &cst), 7));
        assert_int_equal(cst, MGUARD_OK);
        LOCKED("mguard_cache_count", assert_int_equal(mguard_cache_count(cc), 2));
        LOCKED("mguard_cache_iterate", cit = mguard_cache_iterate(cc));
        LOCKED("mguard_cache_next", assert_true(mguard_cache_next(&cit)));
        LOCKED("mguard_cache_get_stats", assert_int_equal(mguard_cache_get_stats(cc, &cs), MGUARD_OK));
        assert_int_equal(cs.stored, 2);
        LOCKED("mguard_cache_format", assert_true(mguard_cache_format(cc, buf, sizeof buf) > 0));
        LOCKED("mguard_cache_take", assert_int_equal(mguard_cache_take(cc, k2, 1, &cv), MGUARD_OK));
        assert_int_equal(cv, 7);
        assert_int_equal(mguard_cache_take(cc, k1, 1, NULL), MGUARD_OK);
        LOCKED("mguard_cache_last_reason", assert_int_equal(mguard_cache_last_reason(cc, k1, 1, &cr), MGUARD_OK));
        assert_int_equal(cr.cause, MGUARD_CACHE_EXPLICIT);
        LOCKED("mguard_cache_clear", mguard_cache_clear(cc));
        LOCKED("mguard_cache_destroy", mguard_cache_destroy(cc));
    }
    /* 6: generations */
    LOCKED("mguard_gen_advance", assert_int_equal(mguard_gen_advance(ctx), 1));
    LOCKED("mguard_gen_tag", assert_int_equal(mguard_gen_tag(ctx, &o2), MGUARD_OK));
    LOCKED("mguard_gen_get", assert_int_equal(mguard_gen_get(ctx, &o2), 1));
    assert_true(mguard_gen_is_dynamic(ctx, &o2, NULL));
    LOCKED("mguard_gen_is_since", mguard_gen_is_since(ctx, &o1, 0));
    LOCKED("mguard_gen_current", assert_int_equal(mguard_gen_current(ctx), 1));
    LOCKED("mguard_gen_mark_class_dynamic", assert_int_equal(mguard_gen_mark_class_dynamic(ctx, &cls), MGUARD_OK));
    assert_true(mguard_gen_is_dynamic(ctx, NULL, &cls));
    LOCKED("mguard_gen_is_dynamic", assert_true(mguard_gen_is_dynamic(ctx, &o1, &cls)));
    LOCKED("mguard_gen_clear", mguard_gen_clear(ctx));
    /* 7: scope tracker (no callbacks in its desc: the logical clock) */
    LOCKED("mguard_scope_create", s = mguard_scope_create(ctx, NULL));
    assert_non_null(s);
    LOCKED("mguard_scope_set_name", assert_int_equal(mguard_scope_set_name(s, &comp, "Net"), MGUARD_OK));
    LOCKED("mguard_scope_attach", assert_int_equal(mguard_scope_attach(s, &comp, &cls, "head"), MGUARD_OK));
    LOCKED("mguard_scope_forget", assert_int_equal(mguard_scope_forget(s, &comp), MGUARD_OK));
    LOCKED("mguard_scope_name", assert_string_equal(mguard_scope_name(s, &comp), "Net"));
    LOCKED("mgt_scope_known_name", assert_string_equal(mgt_scope_known_name(s, &comp), "Net")); g_cl_ndone--;   /* a test helper, not an API function */
    LOCKED("mguard_scope_enter", assert_int_equal(mguard_scope_enter(s, &comp), MGUARD_OK));
    LOCKED("mguard_scope_is_active", assert_true(mguard_scope_is_active(s, "Net")));
    LOCKED("mguard_scope_parents", assert_int_equal(mguard_scope_parents(s, names, 4), 2));
    LOCKED("mguard_scope_frames", assert_int_equal(mguard_scope_frames(s, names, 4), 2));
    assert_string_equal(names[0], "Net");
    LOCKED("mguard_scope_format", assert_int_equal(mguard_scope_format(s, MGUARD_SCOPE_PATH, buf, sizeof buf), strlen("Global > Net")));
    assert_string_equal(buf, "Global > Net");
    LOCKED("mguard_scope_add", assert_int_equal(mguard_scope_add(s, "flops", 2.0), MGUARD_OK));
    LOCKED("mguard_scope_counter", assert_true(mguard_scope_counter(s, "Net", "flops", NULL) == 2.0));
    LOCKED("mguard_scope_exit", assert_int_equal(mguard_scope_exit(s, &comp), MGUARD_OK));
    LOCKED("mguard_scope_set_phase", assert_int_equal(mguard_scope_set_phase(s, 1), MGUARD_OK));
    LOCKED("mguard_scope_phase", assert_true((mguard_scope_phase(s) == 1)));
    assert_true(mguard_scope_format(s, MGUARD_SCOPE_TABLE, buf, sizeof buf) > 0);
    LOCKED("mguard_scope_clear", assert_int_equal(mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_FRAMES | MGUARD_SCOPE_CLEAR_TRACE | MGUARD_SCOPE_CLEAR_WARNINGS), MGUARD_OK));
    LOCKED("mguard_scope_destroy", mguard_scope_destroy(s));
    /* 8: dynamism tracker */
    LOCKED("mguard_dyn_create", d = mguard_dyn_create(ctx));
    assert_non_null(d);
    LOCKED("mguard_dyn_observe", assert_int_equal(mguard_dyn_observe(d, "x", dims, 2), MGUARD_OK));
    LOCKED("mguard_dyn_observe_scalar", assert_int_equal(mguard_dyn_observe_scalar(d, "lr", 0.5), MGUARD_OK));
    LOCKED("mguard_dyn_dims", assert_true(mguard_dyn_dims(d, "x", &rank, dyn, 4) && rank == 2 && !dyn[0]));
    LOCKED("mguard_dyn_count", assert_int_equal(mguard_dyn_count(d), 2));
    LOCKED("mguard_dyn_iterate", dit = mguard_dyn_iterate(d));
    LOCKED("mguard_dyn_next", assert_true(mguard_dyn_next(&dit)));
    LOCKED("mguard_dyn_format", assert_true(mguard_dyn_format(d, buf, sizeof buf) > 0));
    LOCKED("mguard_dyn_destroy", mguard_dyn_destroy(d));
    /* 9: ledger (no hooks) */
    LOCKED("mguard_ledger_create", L = mguard_ledger_create(ctx, NULL));
    assert_non_null(L);
    LOCKED("mguard_ledger_track", assert_int_equal(mguard_ledger_track(L, &o1, MGUARD_LEDGER_EXISTING, "G['o1']"), MGUARD_OK));
    assert_int_equal(mguard_ledger_track(L, &o2, MGUARD_LEDGER_NEW, "Point"), MGUARD_OK);
    assert_int_equal(mguard_ledger_track(L, &cls, MGUARD_LEDGER_CONTAINER, NULL), MGUARD_OK);
    LOCKED("mguard_ledger_get", assert_int_equal(mguard_ledger_get(L, &o1, &le), MGUARD_OK));
    LOCKED("mguard_ledger_mark_modified", assert_int_equal(mguard_ledger_mark_modified(L, &cls), MGUARD_OK));
    LOCKED("mguard_ledger_get", assert_true(mguard_ledger_get(L, &cls, &le) == MGUARD_OK && le.modified));
    g_cl_ndone--;   /* mguard_ledger_get again: listed once */
    LOCKED("mguard_ledger_clone", C = mguard_ledger_clone(L));
    assert_non_null(C);
    LOCKED("mguard_ledger_store_attr", assert_int_equal(mguard_ledger_store_attr(L, &o1, "a", &val), MGUARD_OK));
    LOCKED("mguard_ledger_delete_attr", assert_int_equal(mguard_ledger_delete_attr(L, &o1, "b"), MGUARD_OK));
    LOCKED("mguard_ledger_pending", assert_int_equal(mguard_ledger_pending(L, &o1, "a", &pv), MGUARD_OK));
    LOCKED("mguard_ledger_read", assert_int_equal(mguard_ledger_read(L, &o1, "a", &pv), MGUARD_OK));
    LOCKED("mguard_ledger_set_fields", assert_int_equal(mguard_ledger_set_fields(L, &o1, NULL, 0), MGUARD_OK));
    LOCKED("mguard_ledger_pending", assert_int_equal(mguard_ledger_pending(L, &o1, "b", NULL), MGUARD_DELETED));
    g_cl_ndone--;   /* again, with a NULL value: listed once */
    LOCKED("mguard_ledger_get_stats", assert_int_equal(mguard_ledger_get_stats(L, &lst), MGUARD_OK));
    assert_true(lst.entries == 3 && lst.modified == 3 && lst.writes == 2 && lst.storage_bytes > 0);
    LOCKED("mguard_ledger_iterate", lit = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL));
    LOCKED("mguard_ledger_next", assert_true(mguard_ledger_next(&lit)));
    LOCKED("mguard_ledger_iterate", lit = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_WRITES, &o1));
    LOCKED("mguard_ledger_next", assert_true(mguard_ledger_next(&lit)));
    g_cl_ndone -= 2;   /* iterate and next again, on a writes walk: listed once */
    LOCKED("mguard_ledger_record", assert_int_equal(mguard_ledger_record(L, "saved", &val), MGUARD_OK));
    LOCKED("mguard_ledger_iterate", lit = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_RECORDS, NULL));
    LOCKED("mguard_ledger_next", assert_true(mguard_ledger_next(&lit) && lit.payload == &val));
    g_cl_ndone -= 2;   /* on a records walk */
    LOCKED("mguard_ledger_register_hook", assert_int_equal(mguard_ledger_register_hook(L, &o1, "h", &val, &id), MGUARD_OK));
    LOCKED("mguard_ledger_iterate", lit = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_HOOKS, NULL));
    LOCKED("mguard_ledger_next", assert_true(mguard_ledger_next(&lit) && lit.fn == &val));
    g_cl_ndone -= 2;   /* on a hooks walk */
    LOCKED("mguard_ledger_get_stats", assert_int_equal(mguard_ledger_get_stats(L, &lst), MGUARD_OK));
    g_cl_ndone--;
    assert_true(lst.records == 1 && lst.hooks == 1);
    LOCKED("mguard_ledger_equal", assert_false(mguard_ledger_equal(L, C)));
    LOCKED("mguard_ledger_diff", assert_int_equal(mguard_ledger_diff(C, L, &diff), MGUARD_OK));
    assert_non_null(diff);
    LOCKED("mguard_ledger_diff_free", mguard_ledger_diff_free(diff));
    LOCKED("mguard_ledger_apply", assert_int_equal(mguard_ledger_apply(L, cl_apply, NULL), MGUARD_OK));
    LOCKED("mguard_ledger_remove_hook", assert_int_equal(mguard_ledger_remove_hook(L, id), MGUARD_OK));
    LOCKED("mguard_ledger_prune", assert_int_equal(mguard_ledger_prune(L, NULL, 0), MGUARD_OK));
    LOCKED("mgt_ledger_check", assert_int_equal(mgt_ledger_check(L), MGUARD_OK)); g_cl_ndone--;   /* a test helper, not an API function */
    LOCKED("mguard_ledger_restore", assert_int_equal(mguard_ledger_restore(L, C), MGUARD_OK));
    assert_true(mguard_ledger_get_stats(L, &lst) == MGUARD_OK && lst.modified > 0);   /* not empty */
    LOCKED("mguard_ledger_clear", mguard_ledger_clear(L));
    LOCKED("mguard_ledger_destroy", mguard_ledger_destroy(C));
    /* 2: a death with nothing to call back (o3 only has a ref) */
    assert_false(mguard_ref_is_null(mguard_ref_make(ctx, &o3)));
    LOCKED("mguard_on_destroy", mguard_on_destroy(ctx, &o3));
    assert_false(mgt_ctx_contains(ctx, &o3));
    assert_int_equal(g_cl_held, 0);
    assert_int_equal(log.count, 0);
    LOCKED("mguard_ctx_destroy", mguard_ctx_destroy(ctx));

    /* every function of the lock layer's list was called above */
    napi = api_list(api, CL_MAX);
    assert_int_equal(napi, g_cl_ndone - 1);   /* + mguard_ctx_destroy, written out by hand */
    for (i = 0; i < napi; i++) {
        for (j = 0; j < g_cl_ndone && strcmp(api[i], g_cl_done[j]) != 0; j++) {}
        if (j == g_cl_ndone) fail_msg("%s is not checked by this test", api[i]);
    }
    pthread_mutex_destroy(&l.m);
    g_cl_lock = NULL;
}

/* ---- the lock is never held around a callback ---------------------------- */

typedef struct cb_env {
    mguard_ctx *ctx;
    my_lock *lock;
    mguard_weak *t;
    int obj, other, guard, guard2;
    long held_in_callback, callbacks;
    mguard_status st;
    size_t count;
    void *got;
} cb_env;

static void note_callback(cb_env *e)
{
    e->callbacks++;
    if (e->lock && flag_get(&e->lock->held)) e->held_in_callback++;
}

static void env_dtor(void *value, void *user) { (void)value; note_callback((cb_env *)user); }
static void env_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard;
    (void)obj;
    (void)attr;
    note_callback((cb_env *)user);
}

static void test_user_lock_is_taken_around_calls_and_never_held_in_callbacks(void **state)
{
    test_log log;
    my_lock l;
    cb_env e;
    mguard_weak_desc wd;
    mguard_ctx *ctx = user_lock_ctx(&l, &log);
    long v = 7;
    (void)state;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    e.lock = &l;
    g_log_lock = &l;
    g_log_held = g_log_calls = 0;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof v;
    wd.value_dtor = env_dtor;
    wd.user = &e;
    e.t = mguard_weak_create(ctx, &wd);
    assert_non_null(e.t);
    assert_true(l.locks > 0);
    assert_int_equal(mguard_weak_set(e.t, &e.obj, &v), MGUARD_OK);
    assert_int_equal(mguard_weak_set(e.t, &e.obj, &v), MGUARD_OK);      /* overwrite: dtor */
    assert_int_equal(mguard_watch(ctx, &e.obj, &e.guard, env_invalidate, &e), MGUARD_OK);
    mguard_on_mutation(ctx, &e.obj, "x");                               /* invalidate */
    assert_int_equal(mguard_watch(ctx, &e.obj, &e.guard, env_invalidate, &e), MGUARD_OK);
    mguard_on_destroy(ctx, &e.obj);                                     /* invalidate + dtor */
    assert_int_equal(e.callbacks, 4);
    assert_int_equal(e.held_in_callback, 0);
    /* a log line: delivered outside the lock */
    assert_int_equal(mguard_weak_set(e.t, NULL, &v), MGUARD_EINVAL);
    assert_int_equal(log.warnings, 1);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(g_log_calls, 1);
    assert_int_equal(g_log_held, 0);
    assert_int_equal(l.locks, l.unlocks);
    assert_int_equal(flag_get(&l.held), 0);
    mguard_ctx_destroy(ctx);
    assert_int_equal(l.locks, l.unlocks);
    g_log_lock = NULL;
    pthread_mutex_destroy(&l.m);
}

/* mguard_ctx_destroy from inside a callback is refused, as on one thread,
   and the lock is let go as usual. */
static void destroying_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard;
    (void)obj;
    (void)attr;
    mguard_ctx_destroy((mguard_ctx *)user);
}

static void test_destroy_from_a_callback_is_refused_and_lets_the_lock_go(void **state)
{
    test_log log;
    my_lock l;
    mguard_ctx *ctx = user_lock_ctx(&l, &log);
    int obj, guard;
    (void)state;
    g_log_lock = &l;
    g_log_held = g_log_calls = 0;
    assert_int_equal(mguard_watch(ctx, &obj, &guard, destroying_invalidate, ctx), MGUARD_OK);
    mguard_on_mutation(ctx, &obj, "x");
    assert_int_equal(log.warnings, 1);
    assert_int_equal(log.code, MGUARD_LOG_DESTROY_IN_CALLBACK);
    assert_int_equal(g_log_held, 0);
    assert_int_equal(l.locks, l.unlocks);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(l.locks, l.unlocks);
    g_log_lock = NULL;
    pthread_mutex_destroy(&l.m);
}

/* ---- callbacks that call back in ------------------------------------------ */

/* What a callback does inside the context; run on the callback's own
   thread or on a thread the callback joins. */
static void *call_back_in(void *arg)
{
    cb_env *e = (cb_env *)arg;
    long v = 42;
    mguard_ref r;
    e->st = mguard_watch(e->ctx, &e->other, &e->guard2, env_invalidate, e);
    if (!e->st) e->st = mguard_weak_set(e->t, &e->other, &v);
    mguard_on_mutation(e->ctx, &e->other, "y");          /* fires guard2 */
    r = mguard_ref_make(e->ctx, &e->other);
    e->got = mguard_ref_get(e->ctx, r);
    e->count = mguard_weak_count(e->t);
    return NULL;
}

static int g_join_in_callback;
static void reentrant_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    cb_env *e = (cb_env *)user;
    (void)guard;
    (void)obj;
    (void)attr;
    note_callback(e);
    if (g_join_in_callback) run_and_join(call_back_in, e);
    else call_back_in(e);
}

static void reentry_case(int join)
{
    test_log log;
    cb_env e;
    mguard_weak_desc wd;
    mguard_ctx *ctx = ts_ctx(&log);
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof(long);
    e.t = mguard_weak_create(ctx, &wd);
    g_join_in_callback = join;
    assert_int_equal(mguard_watch(ctx, &e.obj, &e.guard, reentrant_invalidate, &e), MGUARD_OK);
    mguard_on_mutation(ctx, &e.obj, "x");
    assert_int_equal(e.st, MGUARD_OK);
    assert_int_equal(e.callbacks, 2);                   /* guard, then guard2 inside */
    assert_ptr_equal(e.got, &e.other);
    assert_int_equal(e.count, 1);
    assert_int_equal(mguard_mutation_count(ctx, &e.other), 1);
    assert_int_equal(mguard_mutation_count(ctx, &e.obj), 1);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(log.count, 0);
}

static void test_invalidate_callback_calls_back_in_on_its_own_thread(void **state)
{
    (void)state;
    reentry_case(0);
}

static void test_invalidate_callback_joins_a_thread_that_calls_back_in(void **state)
{
    (void)state;
    reentry_case(1);
}

/* The same from a value destructor, during a death. */
static void joining_dtor(void *value, void *user)
{
    cb_env *e = (cb_env *)user;
    (void)value;
    note_callback(e);
    if (e->callbacks == 1) run_and_join(call_back_in, e);
}

static void test_value_destructor_joins_a_thread_that_calls_back_in(void **state)
{
    test_log log;
    cb_env e;
    mguard_weak_desc wd;
    mguard_ctx *ctx = ts_ctx(&log);
    long v = 1;
    (void)state;
    memset(&e, 0, sizeof e);
    e.ctx = ctx;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof v;
    wd.value_dtor = joining_dtor;
    wd.user = &e;
    e.t = mguard_weak_create(ctx, &wd);
    assert_int_equal(mguard_weak_set(e.t, &e.obj, &v), MGUARD_OK);
    mguard_on_destroy(ctx, &e.obj);
    assert_int_equal(e.st, MGUARD_OK);
    assert_ptr_equal(e.got, &e.other);
    assert_int_equal(e.count, 1);                       /* obj gone, other in */
    mguard_ctx_destroy(ctx);                            /* other's value: dtor */
    assert_int_equal(e.callbacks, 3);                   /* obj's dtor, guard2, other's dtor */
    assert_int_equal(log.count, 0);
}

/* The logger may call into the context, on its thread or another one. */
static mguard_ctx *g_logging_ctx;
static size_t g_count_in_log;
static void *count_objects(void *arg)
{
    (void)arg;
    g_count_in_log = mgt_objects(g_logging_ctx);
    return NULL;
}
static void calling_log(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    test_log_fn(level, code, msg, user);
    run_and_join(count_objects, NULL);
}

static void test_logger_runs_outside_the_lock(void **state)
{
    test_log log;
    mguard_ctx_desc d;
    int a;
    (void)state;
    memset(&log, 0, sizeof log);
    memset(&d, 0, sizeof d);
    d.thread_safe = true;
    d.logger.func = calling_log;
    d.logger.user = &log;
    g_logging_ctx = mguard_ctx_create(&d);
    assert_int_equal(mguard_gen_tag(g_logging_ctx, &a), MGUARD_OK);
    assert_int_equal(mguard_watch(g_logging_ctx, &a, NULL, NULL, NULL), MGUARD_EINVAL);
    assert_int_equal(log.warnings, 1);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(g_count_in_log, 1);
    mguard_ctx_destroy(g_logging_ctx);
}

/* Scope and ledger hooks run outside the lock as well. */
static mguard_ctx *g_hook_ctx;
static void *tag_something(void *arg)
{
    static int thing;
    (void)arg;
    return (void *)(intptr_t)mguard_gen_tag(g_hook_ctx, &thing);
}
static const char *joining_type_name(const void *comp, void *user)
{
    (void)comp;
    (void)user;
    return run_and_join(tag_something, NULL) == (void *)(intptr_t)MGUARD_OK ? "Net" : NULL;
}
static void joining_apply(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    (void)obj;
    (void)attr;
    (void)value;
    (void)deleted;
    if (run_and_join(tag_something, NULL) == (void *)(intptr_t)MGUARD_OK) ++*(int *)user;
}

static void test_scope_and_ledger_hooks_join_a_thread_that_calls_back_in(void **state)
{
    test_log log;
    mguard_scope_desc sd;
    mguard_scope *s;
    mguard_ledger *L;
    const char *cur = NULL;
    int net, applied = 0;
    (void)state;
    g_hook_ctx = ts_ctx(&log);
    memset(&sd, 0, sizeof sd);
    sd.type_name = joining_type_name;
    s = mguard_scope_create(g_hook_ctx, &sd);
    assert_int_equal(mguard_scope_enter(s, &net), MGUARD_OK);
    assert_int_equal(mguard_scope_frames(s, &cur, 1), 2);
    assert_string_equal(cur, "Net");
    L = mguard_ledger_create(g_hook_ctx, NULL);
    assert_int_equal(mguard_ledger_track(L, &net, MGUARD_LEDGER_EXISTING, "net"), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(L, &net, "w", NULL), MGUARD_OK);
    assert_int_equal(mguard_ledger_apply(L, joining_apply, &applied), MGUARD_OK);
    assert_int_equal(applied, 1);
    assert_ctx_ok(g_hook_ctx);
    mguard_on_destroy(g_hook_ctx, &net);   /* closes the frame, drops the entry: warnings */
    assert_int_equal(mguard_scope_frames(s, NULL, 0), 1);   /* the root alone */
    assert_int_equal(ledger_stats(L).entries, 0);
    assert_int_equal(log.warnings, 2);
    mguard_ctx_destroy(g_hook_ctx);
}

/* ---- readers for shared contexts ------------------------------------------ */

static void test_weak_get_copy_copies_or_says_why_not(void **state)
{
    test_log log;
    mguard_ctx *ctx = ts_ctx(&log);
    mguard_weak_desc wd;
    mguard_weak *t;
    int k, other;
    long v = 5, out = -1;
    (void)state;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof v;
    t = mguard_weak_create(ctx, &wd);
    assert_int_equal(mguard_weak_set(t, &k, &v), MGUARD_OK);
    assert_int_equal(mguard_weak_get_copy(t, &k, &out), MGUARD_OK);
    assert_int_equal(out, 5);
    out = -1;
    assert_int_equal(mguard_weak_get_copy(t, &other, &out), MGUARD_NOT_FOUND);
    assert_int_equal(out, -1);
    assert_int_equal(mguard_weak_get_copy(NULL, &k, &out), MGUARD_EINVAL);
    assert_int_equal(log.count, 0);
    assert_int_equal(mguard_weak_get_copy(t, &k, NULL), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_weak_get_copy(t, NULL, &out), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    mguard_ctx_destroy(ctx);
}

/* mguard_cache_get_copy against a writer: while one thread stores,
   overwrites, removes and mutates the keys of a cache (its records grow
   and move), two threads read every key with get_copy; each copy is a
   whole value (its words agree), and every call counted a hit or a miss. */
enum { CG_KEYS = 64, CG_ROUNDS = 200, CG_READERS = 2 };
typedef struct cg_value { long id, w[7]; } cg_value;
typedef struct cg_shared {
    mguard_ctx *ctx;
    mguard_cache *c;
    int keys[CG_KEYS];
    int done;
    long reads, hits, torn;
} cg_shared;

static void cg_make(cg_value *v, long id)
{
    int i;
    v->id = id;
    for (i = 0; i < 7; i++) v->w[i] = ~id * (i + 1);
}

static void *cg_write(void *arg)
{
    cg_shared *g = (cg_shared *)arg;
    cg_value v;
    long id = 0;
    int r, i;
    for (r = 0; r < CG_ROUNDS; r++) {
        for (i = 0; i < CG_KEYS; i++) {
            const void *k[1];
            k[0] = &g->keys[i];
            cg_make(&v, ++id);
            if (mguard_cache_set(g->c, k, 1, &v, 0) != MGUARD_OK) abort();
            if (i % 7 == r % 7) (void)mguard_cache_take(g->c, k, 1, NULL);
            if (i % 11 == r % 11) mguard_on_mutation(g->ctx, &g->keys[i], "x");
        }
        if (r % 50 == 49) mguard_cache_clear(g->c);
    }
    flag_set(&g->done, 1);
    return NULL;
}

static void *cg_read(void *arg)
{
    cg_shared *g = (cg_shared *)arg;
    long reads = 0, hits = 0, torn = 0;
    int i, w;
    do {   /* at least one pass, however early the writer ends */
        for (i = 0; i < CG_KEYS; i++) {
            const void *k[1];
            cg_value v, want;
            k[0] = &g->keys[i];
            reads++;
            if (mguard_cache_get_copy(g->c, k, 1, &v) != MGUARD_OK) continue;
            hits++;
            cg_make(&want, v.id);
            for (w = 0; w < 7; w++) torn += v.w[w] != want.w[w];
        }
    } while (!flag_get(&g->done));
    count_add(&g->reads, reads);
    count_add(&g->hits, hits);
    count_add(&g->torn, torn);
    return NULL;
}

static void test_cache_get_copy_reads_whole_values_while_another_thread_changes_the_cache(void **state)
{
    cg_shared g;
    mguard_cache_desc cd;
    mguard_cache_stats s;
    pthread_t w, r[CG_READERS];
    int t;
    (void)state;
    memset(&g, 0, sizeof g);
    g.ctx = ts_ctx(NULL);
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof(cg_value);
    g.c = mguard_cache_create(g.ctx, &cd);
    assert_non_null(g.c);
    for (t = 0; t < CG_READERS; t++) pthread_create(&r[t], NULL, cg_read, &g);
    pthread_create(&w, NULL, cg_write, &g);
    pthread_join(w, NULL);
    for (t = 0; t < CG_READERS; t++) pthread_join(r[t], NULL);
    assert_int_equal(g.torn, 0);
    assert_true(g.reads >= CG_READERS * CG_KEYS);
    assert_int_equal(mguard_cache_get_stats(g.c, &s), MGUARD_OK);
    assert_int_equal(s.hits, g.hits);
    assert_int_equal(s.hits + s.misses, g.reads);   /* only the readers look up */
    assert_int_equal(s.stored, CG_ROUNDS * CG_KEYS);
    assert_ctx_ok(g.ctx);
    mguard_ctx_destroy(g.ctx);
}

typedef struct counted { int refs; my_lock *lock; int retain_calls, retain_held; } counted;

static bool try_retain(void *obj, void *user)
{
    counted *c = (counted *)obj;
    (void)user;
    c->retain_calls++;
    if (c->lock && flag_get(&c->lock->held)) c->retain_held++;
    if (c->refs == 0) return false;
    c->refs++;
    return true;
}

static void test_ref_get_retained_retains_under_the_lock_or_returns_null(void **state)
{
    test_log log;
    my_lock l;
    mguard_ctx *ctx = user_lock_ctx(&l, &log);
    counted c;
    mguard_ref r;
    (void)state;
    memset(&c, 0, sizeof c);
    c.refs = 1;
    c.lock = &l;
    r = mguard_ref_make(ctx, &c);
    assert_ptr_equal(mguard_ref_get_retained(ctx, r, try_retain, NULL), &c);
    assert_int_equal(c.refs, 2);
    assert_int_equal(c.retain_held, 1);                  /* ran under the lock */
    c.refs = 0;                                          /* on its way out */
    assert_null(mguard_ref_get_retained(ctx, r, try_retain, NULL));
    assert_ptr_equal(mguard_ref_get_retained(ctx, r, NULL, NULL), &c);
    mguard_on_destroy(ctx, &c);
    assert_null(mguard_ref_get_retained(ctx, r, try_retain, NULL));
    assert_int_equal(c.retain_calls, 2);                 /* not called for a dead ref */
    mguard_ctx_destroy(ctx);
    pthread_mutex_destroy(&l.m);
}

/* ---- mguard_on_destroy of a guard waits for its running callback -------- */

typedef struct wait_env {
    mguard_ctx *ctx;
    int obj, guard;
    int in_callback, destroy_started, callback_done;
    int rewatch_status;
} wait_env;

static void slow_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    wait_env *w = (wait_env *)user;
    (void)guard;
    (void)attr;
    flag_set(&w->in_callback, 1);
    while (!flag_get(&w->destroy_started)) sched_yield();
    sleep_ms(30);
    /* the guard is being destroyed: registering it again is refused */
    w->rewatch_status = mguard_watch(w->ctx, obj, &w->guard, slow_invalidate, w);
    flag_set(&w->callback_done, 1);
}

static void *mutate_obj(void *arg)
{
    wait_env *w = (wait_env *)arg;
    mguard_on_mutation(w->ctx, &w->obj, "x");
    return NULL;
}

/* ---- issue 11, defect 1: ledger retain/release across threads ----------
   The ledger marked a pointer held under the lock, let the lock go, then
   called retain: another thread could run release(p) first, or retain an
   object it had already destroyed. Now retain runs under the lock (before
   the storing call returns), and mguard_on_destroy(p) waits for a hook
   handed p that runs on another thread. */
static my_lock *g_retain_lock;
static long g_retains, g_retains_unlocked;
static void lock_checking_retain(void *p, void *user)
{
    (void)p;
    (void)user;
    g_retains++;
    if (!flag_get(&g_retain_lock->held)) g_retains_unlocked++;
}

static void test_ledger_retain_runs_under_the_lock_before_the_store_returns(void **state)
{
    test_log log;
    my_lock l;
    mguard_ctx *ctx = user_lock_ctx(&l, &log);
    mguard_ledger_desc d;
    mguard_ledger *L, *C;
    static int obj, v1, v2;
    (void)state;
    g_retain_lock = &l;
    g_retains = g_retains_unlocked = 0;
    memset(&d, 0, sizeof d);
    d.retain = lock_checking_retain;
    L = mguard_ledger_create(ctx, &d);
    assert_int_equal(mguard_ledger_track(L, &obj, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    assert_int_equal(g_retains, 1);
    assert_int_equal(mguard_ledger_store_attr(L, &obj, "a", &v1), MGUARD_OK);
    assert_int_equal(g_retains, 2);
    assert_int_equal(mguard_ledger_store_attr(L, &obj, "b", &v2), MGUARD_OK);
    assert_int_equal(g_retains, 3);
    C = mguard_ledger_clone(L);                 /* the clone retains all three */
    assert_non_null(C);
    assert_int_equal(g_retains, 6);
    assert_int_equal(g_retains_unlocked, 0);
    assert_int_equal(l.locks, l.unlocks);
    mguard_ctx_destroy(ctx);
    g_retain_lock = NULL;
    pthread_mutex_destroy(&l.m);
}

typedef struct release_env {
    mguard_ctx *ctx;
    mguard_ledger *L;
    int obj, value;
    int in_release, release_done, destroyed;
    int release_after_destroy;
} release_env;

static void slow_release(void *p, void *user)
{
    release_env *e = (release_env *)user;
    if (p != &e->value) return;
    if (flag_get(&e->destroyed)) flag_set(&e->release_after_destroy, 1);
    flag_set(&e->in_release, 1);
    sleep_ms(50);                                /* the other thread destroys p now */
    if (flag_get(&e->destroyed)) flag_set(&e->release_after_destroy, 1);
    flag_set(&e->release_done, 1);
}

static void *drop_value(void *arg)
{
    release_env *e = (release_env *)arg;
    mguard_ledger_store_attr(e->L, &e->obj, "a", NULL);    /* releases value */
    return NULL;
}

static void test_destroying_a_value_waits_for_its_release_on_another_thread(void **state)
{
    test_log log;
    release_env e;
    mguard_ledger_desc d;
    pthread_t th;
    (void)state;
    memset(&e, 0, sizeof e);
    e.ctx = ts_ctx(&log);
    memset(&d, 0, sizeof d);
    d.release = slow_release;
    d.user = &e;
    e.L = mguard_ledger_create(e.ctx, &d);
    assert_int_equal(mguard_ledger_track(e.L, &e.obj, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(e.L, &e.obj, "a", &e.value), MGUARD_OK);
    pthread_create(&th, NULL, drop_value, &e);
    while (!flag_get(&e.in_release)) sched_yield();
    mguard_on_destroy(e.ctx, &e.value);          /* the program frees value after this */
    assert_int_equal(flag_get(&e.release_done), 1);   /* returned only after the release */
    flag_set(&e.destroyed, 1);
    pthread_join(th, NULL);
    assert_int_equal(flag_get(&e.release_after_destroy), 0);
    assert_int_equal(log.count, 0);
    assert_ctx_ok(e.ctx);
    mguard_ctx_destroy(e.ctx);
}

/* The same for a value of a ledger of plain values: the context does not
   know it (nothing watches its death), and mguard_on_destroy(p) still
   waits for the hook handed p. */
static void test_destroying_an_unknown_value_waits_for_its_release_on_another_thread(void **state)
{
    test_log log;
    release_env e;
    mguard_ledger_desc d;
    pthread_t th;
    (void)state;
    memset(&e, 0, sizeof e);
    e.ctx = ts_ctx(&log);
    memset(&d, 0, sizeof d);
    d.release = slow_release;
    d.user = &e;
    d.plain_values = true;
    e.L = mguard_ledger_create(e.ctx, &d);
    assert_int_equal(mguard_ledger_track(e.L, &e.obj, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(e.L, &e.obj, "a", &e.value), MGUARD_OK);
    assert_false(mgt_ctx_contains(e.ctx, &e.value));
    pthread_create(&th, NULL, drop_value, &e);
    while (!flag_get(&e.in_release)) sched_yield();
    mguard_on_destroy(e.ctx, &e.value);          /* the program frees value after this */
    assert_int_equal(flag_get(&e.release_done), 1);   /* returned only after the release */
    flag_set(&e.destroyed, 1);
    pthread_join(th, NULL);
    assert_int_equal(flag_get(&e.release_after_destroy), 0);
    assert_int_equal(log.count, 0);
    assert_ctx_ok(e.ctx);
    mguard_ctx_destroy(e.ctx);
}

/* The same for a value the context knows only as a key of a table with
   no callback: its death detaches the entry in its probe and has nothing
   to call, and still waits for the hook handed the value. */
static void test_destroying_a_value_in_a_plain_table_waits_for_its_release_on_another_thread(void **state)
{
    test_log log;
    release_env e;
    mguard_ledger_desc d;
    mguard_weak_desc wd;
    mguard_weak *t;
    long one = 1;
    pthread_t th;
    (void)state;
    memset(&e, 0, sizeof e);
    e.ctx = ts_ctx(&log);
    memset(&d, 0, sizeof d);
    d.release = slow_release;
    d.user = &e;
    d.plain_values = true;
    e.L = mguard_ledger_create(e.ctx, &d);
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof one;
    t = mguard_weak_create(e.ctx, &wd);
    assert_int_equal(mguard_weak_set(t, &e.value, &one), MGUARD_OK);
    assert_int_equal(mguard_ledger_track(e.L, &e.obj, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(e.L, &e.obj, "a", &e.value), MGUARD_OK);
    pthread_create(&th, NULL, drop_value, &e);
    while (!flag_get(&e.in_release)) sched_yield();
    mguard_on_destroy(e.ctx, &e.value);          /* the program frees value after this */
    assert_int_equal(flag_get(&e.release_done), 1);   /* returned only after the release */
    flag_set(&e.destroyed, 1);
    pthread_join(th, NULL);
    assert_int_equal(flag_get(&e.release_after_destroy), 0);
    assert_int_equal(mguard_weak_count(t), 0);
    assert_false(mgt_ctx_contains(e.ctx, &e.value));
    assert_int_equal(log.count, 0);
    assert_ctx_ok(e.ctx);
    mguard_ctx_destroy(e.ctx);
}

/* The same when mguard_on_destroy runs out of memory and destroys the
   values in place (found by review: that path did not wait). */
static int big_fail;
static void *big_failing_realloc(void *p, size_t n, void *user)
{
    (void)user;
    if (flag_get(&big_fail) && !p && n >= 512) return NULL;
    return realloc(p, n);
}
static void plain_free(void *p, void *user) { (void)user; free(p); }

typedef struct apply_env {
    mguard_ledger *L;
    int in_apply, apply_done;
} apply_env;

static void slow_apply(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    apply_env *e = (apply_env *)user;
    (void)obj; (void)attr; (void)value; (void)deleted;
    flag_set(&e->in_apply, 1);
    sleep_ms(50);                                /* the other thread destroys obj now */
    flag_set(&e->apply_done, 1);
}

static void *run_apply(void *arg)
{
    apply_env *e = (apply_env *)arg;
    mguard_ledger_apply(e->L, slow_apply, e);
    return NULL;
}

/* A value destructor with nothing to do: a death copies the values of
   tables with a callback only, and this one makes it need its buffer. */
static void nothing_to_free(void *value, void *user)
{
    (void)value; (void)user;
}

static void test_an_out_of_memory_death_waits_for_a_hook_on_another_thread(void **state)
{
    test_log log;
    mguard_ctx_desc d;
    mguard_weak_desc wd;
    mguard_ctx *ctx;
    mguard_weak *t;
    apply_env e;
    pthread_t th;
    static char big[1024];
    static int obj, val;
    (void)state;
    memset(&d, 0, sizeof d);
    memset(&log, 0, sizeof log);
    memset(&e, 0, sizeof e);
    d.thread_safe = true;
    d.allocator.realloc_fn = big_failing_realloc;
    d.allocator.free_fn = plain_free;
    d.logger.func = test_log_fn;
    d.logger.user = &log;
    ctx = mguard_ctx_create(&d);
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof big;                  /* the death needs a buffer over 512 bytes */
    wd.value_dtor = nothing_to_free;
    t = mguard_weak_create(ctx, &wd);
    assert_int_equal(mguard_weak_set(t, &obj, big), MGUARD_OK);
    e.L = mguard_ledger_create(ctx, NULL);
    assert_int_equal(mguard_ledger_track(e.L, &obj, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(e.L, &obj, "a", &val), MGUARD_OK);
    pthread_create(&th, NULL, run_apply, &e);
    while (!flag_get(&e.in_apply)) sched_yield();
    flag_set(&big_fail, 1);
    mguard_on_destroy(ctx, &obj);
    flag_set(&big_fail, 0);
    assert_int_equal(flag_get(&e.apply_done), 1);   /* returned only after the hook */
    pthread_join(th, NULL);
    assert_int_equal(log.errors, 1);                 /* the out-of-memory line */
    assert_int_equal(mguard_weak_count(t), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_destroying_a_guard_waits_for_its_callback_on_another_thread(void **state)
{
    test_log log;
    wait_env w;
    pthread_t th;
    (void)state;
    memset(&w, 0, sizeof w);
    w.ctx = ts_ctx(&log);
    assert_int_equal(mguard_watch(w.ctx, &w.obj, &w.guard, slow_invalidate, &w), MGUARD_OK);
    pthread_create(&th, NULL, mutate_obj, &w);
    while (!flag_get(&w.in_callback)) sched_yield();
    flag_set(&w.destroy_started, 1);
    mguard_on_destroy(w.ctx, &w.guard);
    assert_int_equal(flag_get(&w.callback_done), 1);     /* returned only after it */
    pthread_join(th, NULL);
    assert_int_equal(w.rewatch_status, MGUARD_EINVAL);
    assert_int_equal(log.warnings, 1);
    assert_int_equal(log.code, MGUARD_LOG_OBJECT_DYING);
    assert_int_equal(mgt_watcher_count(w.ctx, &w.obj), 0);
    assert_ctx_ok(w.ctx);
    mguard_ctx_destroy(w.ctx);
}

/* Destroying the watched object waits until the other thread has told
   every watcher of the mutation in progress (each is handed the object):
   the first one, running, and the second one, still to come. */
typedef struct objwait_env {
    mguard_ctx *ctx;
    int obj, g1, g2;
    int in_first, first_done, second_done, destroyed, called_after_destroy, seen[2];
} objwait_env;

static void objwait_first(void *guard, const void *obj, const char *attr, void *user)
{
    objwait_env *e = (objwait_env *)user;
    (void)guard; (void)attr;
    flag_set(&e->in_first, 1);
    sleep_ms(50);                                /* the other thread destroys obj now */
    if (flag_get(&e->destroyed)) flag_set(&e->called_after_destroy, 1);
    flag_set(&e->seen[0], *(const int *)obj);
    flag_set(&e->first_done, 1);
}

static void objwait_second(void *guard, const void *obj, const char *attr, void *user)
{
    objwait_env *e = (objwait_env *)user;
    (void)guard; (void)attr;
    if (flag_get(&e->destroyed)) flag_set(&e->called_after_destroy, 1);
    flag_set(&e->seen[1], *(const int *)obj);
    flag_set(&e->second_done, 1);
}

static void *objwait_mutate(void *arg)
{
    objwait_env *e = (objwait_env *)arg;
    mguard_on_mutation(e->ctx, &e->obj, "x");
    return NULL;
}

static void test_destroying_an_object_waits_for_its_watchers_on_another_thread(void **state)
{
    test_log log;
    objwait_env e;
    pthread_t th;
    (void)state;
    memset(&e, 0, sizeof e);
    e.ctx = ts_ctx(&log);
    e.obj = 7;
    assert_int_equal(mguard_watch(e.ctx, &e.obj, &e.g1, objwait_first, &e), MGUARD_OK);
    assert_int_equal(mguard_watch(e.ctx, &e.obj, &e.g2, objwait_second, &e), MGUARD_OK);
    pthread_create(&th, NULL, objwait_mutate, &e);
    while (!flag_get(&e.in_first)) sched_yield();
    mguard_on_destroy(e.ctx, &e.obj);
    assert_int_equal(flag_get(&e.first_done), 1);    /* returned only after both */
    assert_int_equal(flag_get(&e.second_done), 1);
    flag_set(&e.obj, 0);                              /* "freed" */
    flag_set(&e.destroyed, 1);
    pthread_join(th, NULL);
    assert_int_equal(e.called_after_destroy, 0);
    assert_int_equal(e.seen[0], 7);                   /* both read the live object */
    assert_int_equal(e.seen[1], 7);
    assert_int_equal(log.count, 0);
    assert_ctx_ok(e.ctx);
    mguard_ctx_destroy(e.ctx);
}

/* ... also while the other thread still names what the mutation drops
   (its describe hook runs before any watcher is told): the watchers were
   swapped out already, and the destroy waits for them. */
static struct { pthread_t mutator; int in_hook; } nw_env;
static void objwait_describe(const void *obj, char *buf, size_t size, void *user)
{
    (void)obj; (void)user;
    snprintf(buf, size, "x");
    if (pthread_equal(pthread_self(), nw_env.mutator) && !flag_get(&nw_env.in_hook)) {
        flag_set(&nw_env.in_hook, 1);
        sleep_ms(50);                            /* the other thread destroys obj now */
    }
}

static void test_destroying_an_object_waits_for_watchers_its_mutation_has_not_told_yet(void **state)
{
    objwait_env e;
    mguard_ctx_desc d;
    mguard_cache_desc cd;
    mguard_cache *c;
    const void *k[1];
    int v = 1;
    (void)state;
    memset(&e, 0, sizeof e);
    memset(&nw_env, 0, sizeof nw_env);
    memset(&d, 0, sizeof d);
    d.thread_safe = true;
    d.quiet = true;
    d.describe.func = objwait_describe;
    e.ctx = mguard_ctx_create(&d);
    e.obj = 7;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof v;
    c = mguard_cache_create(e.ctx, &cd);
    k[0] = &e.g1;
    assert_int_equal(mguard_cache_set(c, k, 1, &v, 0), MGUARD_OK);
    assert_int_equal(mguard_cache_depend(c, k, 1, &e.obj, NULL), MGUARD_OK);   /* its drop names obj */
    assert_int_equal(mguard_watch(e.ctx, &e.obj, &e.g2, objwait_first, &e), MGUARD_OK);   /* a slow one */
    pthread_create(&nw_env.mutator, NULL, objwait_mutate, &e);
    while (!flag_get(&nw_env.in_hook)) sched_yield();
    mguard_on_destroy(e.ctx, &e.obj);
    assert_int_equal(flag_get(&e.first_done), 1);    /* returned only after the watcher */
    flag_set(&e.obj, 0);                              /* "freed" */
    flag_set(&e.destroyed, 1);
    pthread_join(nw_env.mutator, NULL);
    assert_int_equal(e.called_after_destroy, 0);
    assert_int_equal(e.seen[0], 7);
    assert_int_equal(mguard_cache_count(c), 0);
    assert_ctx_ok(e.ctx);
    mguard_ctx_destroy(e.ctx);
}

/* A callback destroying its own guard on its own thread does not wait for
   itself. */
static void self_destroying_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    (void)obj;
    (void)attr;
    mguard_on_destroy((mguard_ctx *)user, guard);
}

static void test_callback_destroying_its_own_guard_does_not_wait(void **state)
{
    mguard_ctx *ctx = ts_ctx(NULL);
    int obj, guard;
    (void)state;
    assert_int_equal(mguard_watch(ctx, &obj, &guard, self_destroying_invalidate, ctx), MGUARD_OK);
    mguard_on_mutation(ctx, &obj, "x");
    assert_false(mgt_ctx_contains(ctx, &guard));
    mguard_ctx_destroy(ctx);
}

/* Another thread's mguard_unwatch cancels a watcher about to be called by
   an invalidation in progress. */
typedef struct unwatch_env { mguard_ctx *ctx; int obj, g1, g2; int fired1, fired2; mguard_status st; } unwatch_env;
static void *unwatch_g2(void *arg)
{
    unwatch_env *u = (unwatch_env *)arg;
    u->st = mguard_unwatch(u->ctx, &u->obj, &u->g2);
    return NULL;
}
static void first_watcher(void *guard, const void *obj, const char *attr, void *user)
{
    unwatch_env *u = (unwatch_env *)user;
    (void)guard;
    (void)obj;
    (void)attr;
    u->fired1++;
    run_and_join(unwatch_g2, u);
}
static void second_watcher(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard;
    (void)obj;
    (void)attr;
    ((unwatch_env *)user)->fired2++;
}

static void test_unwatch_from_another_thread_cancels_a_pending_watcher(void **state)
{
    unwatch_env u;
    (void)state;
    memset(&u, 0, sizeof u);
    u.ctx = ts_ctx(NULL);
    assert_int_equal(mguard_watch(u.ctx, &u.obj, &u.g1, first_watcher, &u), MGUARD_OK);
    assert_int_equal(mguard_watch(u.ctx, &u.obj, &u.g2, second_watcher, &u), MGUARD_OK);
    mguard_on_mutation(u.ctx, &u.obj, "x");
    assert_int_equal(u.st, MGUARD_OK);
    assert_int_equal(u.fired1, 1);
    assert_int_equal(u.fired2, 0);
    mguard_ctx_destroy(u.ctx);
}

/* ---- stress: four threads sharing everything ------------------------------
   Objects are reference counted: a slot holds one reference and a ref
   (mguard_ref) to its object; a thread that wants the object takes its own
   reference with mguard_ref_get_retained, and whoever drops the last
   reference calls mguard_on_destroy and frees the object. Guards belong to
   one thread each, which destroys and replaces them; destroyed guards are
   kept (not freed) so a late callback would be seen. Every value stored in
   the shared table carries a fresh id; its destructor counts per id. One
   thread mostly reads, in runs of reads with no write between them, so a
   read path that went around the lock would race with the writers. */
#define ST_THREADS 4
#define ST_SLOTS 16
#define ST_GUARDS 4
#define ST_DEAD_REFS 64

typedef struct st_obj { int refs; int id; } st_obj;
typedef struct st_guard { int destroyed; long fired; } st_guard;
typedef struct st_value { long id; long check; } st_value;

typedef struct st_shared {
    mguard_ctx *ctx;
    mguard_weak *table;
    pthread_mutex_t slot_lock[ST_SLOTS];
    st_obj *slot_obj[ST_SLOTS];
    mguard_ref slot_ref[ST_SLOTS];
    pthread_mutex_t dead_lock;
    mguard_ref dead[ST_DEAD_REFS];
    long ndead;
    long iters;
    long next_id, max_ids;
    unsigned char *stored;      /* id -> 1 when the table took the value */
    long *destroyed;            /* id -> destructor calls */
    long bad_value, late_fire, revived, fires, watches, rewatch_refused, objects, guards, check_failed;
    pthread_mutex_t graveyard_lock;
    st_guard **graveyard;
    long ngraveyard, capgraveyard;
} st_shared;

static st_shared g_st;

static bool st_try_retain(void *obj, void *user)
{
    st_obj *o = (st_obj *)obj;
    int n = __atomic_load_n(&o->refs, __ATOMIC_SEQ_CST);
    (void)user;
    while (n > 0)
        if (__atomic_compare_exchange_n(&o->refs, &n, n + 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return true;
    return false;
}

static void st_unref(st_obj *o)
{
    mguard_ref r;
    if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_SEQ_CST) != 0) return;
    r = mguard_ref_make(g_st.ctx, o);   /* kept to check that it reads NULL from now on */
    mguard_on_destroy(g_st.ctx, o);
    /* destroyed: every ref to it reads NULL from now on, on every thread */
    pthread_mutex_lock(&g_st.dead_lock);
    g_st.dead[g_st.ndead++ % ST_DEAD_REFS] = r;
    pthread_mutex_unlock(&g_st.dead_lock);
    free(o);
}

static void st_value_dtor(void *value, void *user)
{
    st_value v;
    (void)user;
    memcpy(&v, value, sizeof v);
    if (v.id < 0 || v.id >= g_st.max_ids || v.check != ~v.id) {
        count_add(&g_st.bad_value, 1);
        return;
    }
    count_add(&g_st.destroyed[v.id], 1);
}

static void st_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    st_guard *g = (st_guard *)guard;
    (void)user;
    count_add(&g_st.fires, 1);
    count_add(&g->fired, 1);
    if (flag_get(&g->destroyed)) count_add(&g_st.late_fire, 1);
    /* keep watching after a mutation (the object is alive: the mutating
       thread holds it); refused while the guard's owner destroys it */
    if (attr && (((uintptr_t)obj >> 4) & 1)) {
        mguard_status st = mguard_watch(g_st.ctx, obj, guard, st_invalidate, NULL);
        if (st == MGUARD_OK) count_add(&g_st.watches, 1);
        else count_add(&g_st.rewatch_refused, 1);
    }
}

static st_guard *st_new_guard(void)
{
    st_guard *g = (st_guard *)calloc(1, sizeof *g);
    count_add(&g_st.guards, 1);
    return g;
}

static void st_bury_guard(st_guard *g)
{
    mguard_on_destroy(g_st.ctx, g);
    flag_set(&g->destroyed, 1);
    pthread_mutex_lock(&g_st.graveyard_lock);
    if (g_st.ngraveyard == g_st.capgraveyard) {
        g_st.capgraveyard = g_st.capgraveyard ? g_st.capgraveyard * 2 : 64;
        g_st.graveyard = (st_guard **)realloc(g_st.graveyard, (size_t)g_st.capgraveyard * sizeof *g_st.graveyard);
    }
    g_st.graveyard[g_st.ngraveyard++] = g;
    pthread_mutex_unlock(&g_st.graveyard_lock);
}

static unsigned st_rand(unsigned *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* The object in slot i with a reference of our own, or NULL. */
static st_obj *st_take(int i)
{
    mguard_ref r;
    pthread_mutex_lock(&g_st.slot_lock[i]);
    r = g_st.slot_ref[i];
    pthread_mutex_unlock(&g_st.slot_lock[i]);
    return (st_obj *)mguard_ref_get_retained(g_st.ctx, r, st_try_retain, NULL);
}

static void *st_worker(void *arg)
{
    unsigned seed = 2463534242u ^ (unsigned)(uintptr_t)arg * 2654435761u;
    int reader = (uintptr_t)arg == 1;   /* thread 1 mostly reads */
    st_guard *guards[ST_GUARDS];
    long it;
    int k;
    for (k = 0; k < ST_GUARDS; k++) guards[k] = st_new_guard();
    for (it = 0; it < g_st.iters; it++) {
        unsigned op = st_rand(&seed) % 100;
        int i = (int)(st_rand(&seed) % ST_SLOTS);
        st_obj *o;
        if (op < 8) {                                   /* create in an empty slot */
            mguard_ref r;
            int empty;
            pthread_mutex_lock(&g_st.slot_lock[i]);
            empty = !g_st.slot_obj[i];
            pthread_mutex_unlock(&g_st.slot_lock[i]);
            if (!empty) continue;
            /* made known and tagged outside any lock of ours, as a
               program would: only mguard's lock orders these calls */
            o = (st_obj *)calloc(1, sizeof *o);
            o->refs = 1;
            o->id = (int)count_add(&g_st.objects, 1);
            r = mguard_ref_make(g_st.ctx, o);
            if (mguard_gen_tag(g_st.ctx, o) != MGUARD_OK || mguard_gen_get(g_st.ctx, o) < 0)
                count_add(&g_st.bad_value, 1);
            pthread_mutex_lock(&g_st.slot_lock[i]);
            if (!g_st.slot_obj[i]) {
                g_st.slot_obj[i] = o;
                g_st.slot_ref[i] = r;
                o = NULL;
            }
            pthread_mutex_unlock(&g_st.slot_lock[i]);
            if (o) st_unref(o);                         /* the slot was taken meanwhile */
            continue;
        }
        if (op < 14) {                                  /* drop a slot's reference */
            pthread_mutex_lock(&g_st.slot_lock[i]);
            o = g_st.slot_obj[i];
            g_st.slot_obj[i] = NULL;
            pthread_mutex_unlock(&g_st.slot_lock[i]);
            if (o) st_unref(o);
            continue;
        }
        if (op < 17) {                                  /* replace one of our guards */
            k = (int)(st_rand(&seed) % ST_GUARDS);
            st_bury_guard(guards[k]);
            guards[k] = st_new_guard();
            continue;
        }
        if (reader && it % 64 == 0 && mguard_ctx_check(g_st.ctx) != MGUARD_OK) {
            count_add(&g_st.check_failed, 1);             /* every invariant holds between calls */
            continue;
        }
        if (op < 20) {                                  /* a destroyed object's ref reads NULL */
            mguard_ref r;
            long n;
            pthread_mutex_lock(&g_st.dead_lock);
            n = g_st.ndead;
            r = n ? g_st.dead[st_rand(&seed) % (n < ST_DEAD_REFS ? n : ST_DEAD_REFS)] : g_st.dead[0];
            pthread_mutex_unlock(&g_st.dead_lock);
            if (n && mguard_ref_get(g_st.ctx, r)) count_add(&g_st.revived, 1);
            continue;
        }
        o = st_take(i);
        if (!o) continue;
        if (reader) {                                   /* a run of reads, no writes */
            st_value v;
            for (k = 0; k < 16; k++) {
                if (mguard_weak_get_copy(g_st.table, o, &v) == MGUARD_OK && v.check != ~v.id)
                    count_add(&g_st.bad_value, 1);
                if (!mgt_ctx_contains(g_st.ctx, o)) count_add(&g_st.revived, 1);
                (void)mguard_weak_count(g_st.table);
                (void)mguard_mutation_count(g_st.ctx, o);
            }
        } else if (op < 40) {                           /* store a fresh value */
            st_value v;
            v.id = count_add(&g_st.next_id, 1) - 1;
            if (v.id >= g_st.max_ids) abort();
            v.check = ~v.id;
            g_st.stored[v.id] = mguard_weak_set(g_st.table, o, &v) == MGUARD_OK;
        } else if (op < 55) {                           /* read it back */
            st_value v;
            if (mguard_weak_get_copy(g_st.table, o, &v) == MGUARD_OK &&
                (v.id < 0 || v.id >= g_st.max_ids || v.check != ~v.id))
                count_add(&g_st.bad_value, 1);
        } else if (op < 70) {                           /* watch it */
            k = (int)(st_rand(&seed) % ST_GUARDS);
            if (mguard_watch(g_st.ctx, o, guards[k], st_invalidate, NULL) == MGUARD_OK) count_add(&g_st.watches, 1);
        } else if (op < 85) {                           /* mutate it */
            mguard_on_mutation(g_st.ctx, o, "field");
        } else if (op < 92) {                           /* its ref reads it */
            mguard_ref r = mguard_ref_make(g_st.ctx, o);
            if (mguard_ref_get(g_st.ctx, r) != o) count_add(&g_st.revived, 1);
            if (mguard_gen_get(g_st.ctx, o) < 0) count_add(&g_st.bad_value, 1);   /* tagged at birth */
            (void)mguard_mutation_count(g_st.ctx, o);
        } else {                                        /* remove its value */
            (void)mguard_weak_take(g_st.table, o, NULL);
        }
        st_unref(o);
    }
    for (k = 0; k < ST_GUARDS; k++) st_bury_guard(guards[k]);
    return NULL;
}

static void test_four_threads_share_objects_tables_watchers_and_refs(void **state)
{
    pthread_t th[ST_THREADS];
    mguard_weak_desc wd;
    const char *env = getenv("MGUARD_THREADS_ITERS");
    long i, stored = 0, once = 0;
    int t;
    (void)state;
    memset(&g_st, 0, sizeof g_st);
    g_st.iters = env ? atol(env) : 10000;
    g_st.max_ids = g_st.iters * ST_THREADS + 1;
    g_st.stored = (unsigned char *)calloc((size_t)g_st.max_ids, 1);
    g_st.destroyed = (long *)calloc((size_t)g_st.max_ids, sizeof(long));
    g_st.ctx = ts_ctx(NULL);
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof(st_value);
    wd.value_dtor = st_value_dtor;
    g_st.table = mguard_weak_create(g_st.ctx, &wd);
    for (t = 0; t < ST_SLOTS; t++) pthread_mutex_init(&g_st.slot_lock[t], NULL);
    pthread_mutex_init(&g_st.dead_lock, NULL);
    pthread_mutex_init(&g_st.graveyard_lock, NULL);
    for (t = 0; t < ST_THREADS; t++) pthread_create(&th[t], NULL, st_worker, (void *)(intptr_t)(t + 1));
    for (t = 0; t < ST_THREADS; t++) pthread_join(th[t], NULL);
    /* every slot's object dies: nothing is left in the context */
    for (t = 0; t < ST_SLOTS; t++)
        if (g_st.slot_obj[t]) st_unref(g_st.slot_obj[t]);
    assert_ctx_ok(g_st.ctx);
    assert_int_equal(mguard_weak_count(g_st.table), 0);
    assert_int_equal(mgt_objects(g_st.ctx), 0);
    /* every stored value was destroyed exactly once, by its key's death or
       an overwrite or a remove; none that was refused */
    for (i = 0; i < g_st.next_id; i++) {
        stored += g_st.stored[i];
        once += g_st.destroyed[i] == 1;
        assert_int_equal(g_st.destroyed[i], g_st.stored[i]);
    }
    assert_int_equal(stored, once);
    assert_int_equal(g_st.bad_value, 0);
    assert_int_equal(g_st.check_failed, 0);
    assert_int_equal(g_st.late_fire, 0);
    assert_int_equal(g_st.revived, 0);
    assert_true(g_st.fires <= g_st.watches);
    {
        long fired = 0;
        for (i = 0; i < g_st.ngraveyard; i++) fired += g_st.graveyard[i]->fired;
        assert_int_equal(fired, g_st.fires);
        assert_int_equal(g_st.ngraveyard, g_st.guards);
    }
    if (env)
        print_message("  %ld iterations x %d threads: %ld objects, %ld values, %ld watches, %ld fired, %ld re-watches refused\n",
                      g_st.iters, ST_THREADS, g_st.objects, stored, g_st.watches, g_st.fires, g_st.rewatch_refused);
    mguard_ctx_destroy(g_st.ctx);
    for (i = 0; i < g_st.ngraveyard; i++) free(g_st.graveyard[i]);
    free(g_st.graveyard);
    free(g_st.stored);
    free(g_st.destroyed);
    for (t = 0; t < ST_SLOTS; t++) pthread_mutex_destroy(&g_st.slot_lock[t]);
    pthread_mutex_destroy(&g_st.dead_lock);
    pthread_mutex_destroy(&g_st.graveyard_lock);
}

/* ---- reference-counted objects for the ledger ------------------------------
   The documented way to hand a ledger objects with lifetimes of their own
   (docs/guide.md, "The side-effects ledger"): its retain hook takes a
   reference, its release hook drops one, and whoever drops the last one
   runs the destructor, which calls mguard_on_destroy. An rc_obj counts
   every hook call and logs it, so a test can check, per pointer:
   - every release has a completed retain before it (release strictly
     after the matching retain: `holds`, retains completed minus releases
     begun, never goes below 0);
   - no hook is called once the object's mguard_on_destroy has returned
     (`dead`, set right after it returns);
   - each object is destroyed exactly once, with as many releases as
     retains at that moment.
   A dead object is not given back to malloc at once (where it goes is up
   to rc_bury), so a late hook reads the flag instead of freed memory. */
typedef struct rc_obj {
    int refs;            /* references: owners, threads, ledger holds */
    int holds;           /* retains completed minus releases begun */
    long retains, releases;
    int dead;            /* mguard_on_destroy returned */
    int destroyed;       /* destructor runs */
    int id;
    long tag_gen;        /* the stress: its generation tag, */
    long tag_epoch;      /* in this epoch of gen_clear (-1: unknown) */
    int nev;             /* events logged (the first sizeof ev - 1 kept) */
    char ev[24];         /* r/R retain begins/ends, l/L release begins/ends,
                            d/D destructor starts/on_destroy returned */
} rc_obj;

/* What went wrong, over every object of a run. */
typedef struct rc_checks {
    long retain_dead;      /* retain hook of an object whose on_destroy returned */
    long retain_zero;      /* retain of an object whose count was 0 (dying) */
    long release_dead;     /* release hook of a dead object */
    long release_early;    /* release with no completed retain outstanding */
    long hook_dead;        /* any other hook or callback on a dead object */
    long unbalanced;       /* retains != releases when the object died */
    long destroyed_twice;
    long refs_negative;
    long deaths, deaths_in_release;  /* figures: every death, those run by a release hook */
    long retains, releases;          /* figures: over every object */
} rc_checks;

static rc_checks g_rc;
static mguard_ctx *g_rc_ctx;                 /* where rc_obj deaths go */
static void (*g_rc_bury)(rc_obj *o);         /* after death; NULL: kept */
/* defect-1 test: the retain hook of this object waits for another thread's
   delete_attr before it takes its reference */
static rc_obj *g_rc_pause_on;
static int g_rc_in_retain, g_rc_calling, g_rc_done;

static void rc_event(rc_obj *o, char c)
{
    int i = __atomic_fetch_add(&o->nev, 1, __ATOMIC_SEQ_CST);
    if (i < (int)sizeof o->ev - 1) __atomic_store_n(&o->ev[i], c, __ATOMIC_SEQ_CST);
}

static void rc_reset(mguard_ctx *ctx, void (*bury)(rc_obj *o))
{
    memset(&g_rc, 0, sizeof g_rc);
    g_rc_ctx = ctx;
    g_rc_bury = bury;
    g_rc_pause_on = NULL;
}

static void rc_init(rc_obj *o, int id)
{
    memset(o, 0, sizeof *o);
    o->refs = 1;
    o->id = id;
}

static int rc_is_dead(const rc_obj *o) { return __atomic_load_n(&o->dead, __ATOMIC_SEQ_CST); }
static void rc_check_alive(const rc_obj *o) { if (o && rc_is_dead(o)) count_add(&g_rc.hook_dead, 1); }

/* Drop one reference; the last one runs the destructor (true). */
static bool rc_unref(rc_obj *o)
{
    int n = __atomic_sub_fetch(&o->refs, 1, __ATOMIC_SEQ_CST);
    if (n < 0) count_add(&g_rc.refs_negative, 1);
    if (n != 0) return false;
    rc_event(o, 'd');
    if (__atomic_fetch_add(&o->destroyed, 1, __ATOMIC_SEQ_CST) != 0) {
        count_add(&g_rc.destroyed_twice, 1);   /* revived by a late retain */
        return true;
    }
    if (__atomic_load_n(&o->retains, __ATOMIC_SEQ_CST) != __atomic_load_n(&o->releases, __ATOMIC_SEQ_CST))
        count_add(&g_rc.unbalanced, 1);
    mguard_on_destroy(g_rc_ctx, o);
    flag_set(&o->dead, 1);
    rc_event(o, 'D');
    count_add(&g_rc.deaths, 1);
    if (g_rc_bury) g_rc_bury(o);
    return true;
}

/* mguard_ref_get_retained's try_retain (under the lock): +1 unless 0. */
static bool rc_try_retain(void *obj, void *user)
{
    rc_obj *o = (rc_obj *)obj;
    int n = __atomic_load_n(&o->refs, __ATOMIC_SEQ_CST);
    (void)user;
    rc_check_alive(o);
    while (n > 0)
        if (__atomic_compare_exchange_n(&o->refs, &n, n + 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return true;
    return false;
}

static void wait_flag(const int *f, long ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!flag_get(f)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L >= ms) return;
        sched_yield();
    }
}

static void rc_retain(void *p, void *user)
{
    rc_obj *o = (rc_obj *)p;
    (void)user;
    rc_event(o, 'r');
    if (o == __atomic_load_n(&g_rc_pause_on, __ATOMIC_SEQ_CST)) {
        /* as if this thread were preempted here: another thread's
           delete_attr of the same pointer runs now (bounded waits, so a
           library that makes that thread wait for us cannot deadlock) */
        __atomic_store_n(&g_rc_pause_on, NULL, __ATOMIC_SEQ_CST);
        flag_set(&g_rc_in_retain, 1);
        wait_flag(&g_rc_calling, 2000);
        wait_flag(&g_rc_done, 20);
    }
    if (rc_is_dead(o)) count_add(&g_rc.retain_dead, 1);
    if (__atomic_fetch_add(&o->refs, 1, __ATOMIC_SEQ_CST) <= 0) count_add(&g_rc.retain_zero, 1);
    count_add(&o->retains, 1);
    count_add(&g_rc.retains, 1);
    __atomic_add_fetch(&o->holds, 1, __ATOMIC_SEQ_CST);
    rc_event(o, 'R');
}

static void rc_release(void *p, void *user)
{
    rc_obj *o = (rc_obj *)p;
    (void)user;
    rc_event(o, 'l');
    if (rc_is_dead(o)) count_add(&g_rc.release_dead, 1);
    if (__atomic_sub_fetch(&o->holds, 1, __ATOMIC_SEQ_CST) < 0) count_add(&g_rc.release_early, 1);
    count_add(&o->releases, 1);
    count_add(&g_rc.releases, 1);
    rc_event(o, 'L');
    if (rc_unref(o)) count_add(&g_rc.deaths_in_release, 1);
}

/* The event log's rules, for one object: no hook begins after 'D'; every
   release begins after more retains ended than releases began before it;
   one destructor run. NULL when they hold, else what broke. */
static const char *rc_log_broken(const rc_obj *o)
{
    int i, n = __atomic_load_n(&o->nev, __ATOMIC_SEQ_CST), ended = 0, begun = 0, dead = 0, d = 0;
    if (n > (int)sizeof o->ev - 1) return "too many events to check";
    for (i = 0; i < n; i++) {
        char c = o->ev[i];
        if ((c == 'r' || c == 'l') && dead) return "a hook began after mguard_on_destroy returned";
        if (c == 'R') ended++;
        if (c == 'l' && ++begun > ended) return "a release began before its retain ended";
        if (c == 'd') d++;
        if (c == 'D') dead = 1;
    }
    if (d != 1 || !dead) return "not destroyed exactly once";
    if (ended != begun) return "retains and releases differ";
    return NULL;
}

static mguard_ledger *rc_ledger(mguard_ctx *ctx)
{
    mguard_ledger_desc ld;
    memset(&ld, 0, sizeof ld);
    ld.retain = rc_retain;
    ld.release = rc_release;
    return mguard_ledger_create(ctx, &ld);
}

static void assert_rc_clean(void)
{
    assert_int_equal(g_rc.retain_dead, 0);
    assert_int_equal(g_rc.retain_zero, 0);
    assert_int_equal(g_rc.release_dead, 0);
    assert_int_equal(g_rc.release_early, 0);
    assert_int_equal(g_rc.hook_dead, 0);
    assert_int_equal(g_rc.unbalanced, 0);
    assert_int_equal(g_rc.destroyed_twice, 0);
    assert_int_equal(g_rc.refs_negative, 0);
}

static void assert_rc_log(const rc_obj *o)
{
    const char *why = rc_log_broken(o);
    if (why) fail_msg("object %d: %s (events: %.*s)", o->id, why, (int)sizeof o->ev - 1, o->ev);
}

/* ---- issue 11, defect 1: a release never overtakes its retain -------------
   On a thread-safe context the ledger used to mark a pointer held under the
   lock, let the lock go, then call retain: another thread dropping the
   pointer in that window called release first, and with reference counting
   the object died before the retain that was to keep it alive, which then
   ran on a dead object (heap-use-after-free when it is freed). */

typedef struct d1_env {
    mguard_ledger *L;
    rc_obj *obj;
    mguard_status st;
} d1_env;

static void *d1_delete_during_retain(void *arg)
{
    d1_env *e = (d1_env *)arg;
    wait_flag(&g_rc_in_retain, 2000);
    flag_set(&g_rc_calling, 1);
    e->st = mguard_ledger_delete_attr(e->L, e->obj, "a");
    flag_set(&g_rc_done, 1);
    return NULL;
}

/* Deterministic: the retain hook of the stored value waits (as if
   preempted) while another thread deletes the attribute. The value is
   owned by this thread throughout, so the only way it can die before the
   end is a release that overtook the retain. */
static void test_ledger_release_never_overtakes_a_retain_in_progress(void **state)
{
    enum { ROUNDS = 8 };
    mguard_ctx *ctx = ts_ctx(NULL);
    mguard_ledger *L;
    rc_obj obj, val[ROUNDS];
    d1_env e;
    pthread_t th;
    int r;
    (void)state;
    rc_reset(ctx, NULL);
    L = rc_ledger(ctx);
    rc_init(&obj, 100);
    assert_int_equal(mguard_ledger_track(L, &obj, MGUARD_LEDGER_EXISTING, "obj"), MGUARD_OK);
    for (r = 0; r < ROUNDS; r++) {
        rc_obj *v = &val[r];
        rc_init(v, r);
        flag_set(&g_rc_in_retain, 0);
        flag_set(&g_rc_calling, 0);
        flag_set(&g_rc_done, 0);
        __atomic_store_n(&g_rc_pause_on, v, __ATOMIC_SEQ_CST);
        e.L = L;
        e.obj = &obj;
        e.st = MGUARD_EINVAL;
        pthread_create(&th, NULL, d1_delete_during_retain, &e);
        assert_int_equal(mguard_ledger_store_attr(L, &obj, "a", v), MGUARD_OK);
        pthread_join(th, NULL);
        assert_int_equal(e.st, MGUARD_OK);
        /* whatever order the two calls took, the ledger lets v go now */
        assert_int_equal(mguard_ledger_delete_attr(L, &obj, "a"), MGUARD_OK);
        if (flag_get(&v->dead))                         /* we still own it */
            fail_msg("round %d: the value died while this thread owned it (events: %s)", r, v->ev);
        rc_unref(v);
        assert_int_equal(v->destroyed, 1);
        assert_int_equal(v->retains, 1);
        assert_int_equal(v->releases, 1);
        assert_string_equal(v->ev, "rRlLdD");
        assert_rc_log(v);
    }
    mguard_ledger_destroy(L);
    rc_unref(&obj);
    assert_rc_log(&obj);
    assert_int_equal(obj.retains, 1);
    assert_int_equal(g_rc.deaths, ROUNDS + 1);
    assert_rc_clean();
    assert_ctx_ok(ctx);
    assert_int_equal(mgt_objects(ctx), 0);
    mguard_ctx_destroy(ctx);
}

/* The same race left to the scheduler: one thread stores short-lived
   values (its own reference dropped right after the store, so the ledger's
   is the last), another deletes the attribute as fast as it can, so values
   die on the deleting thread's release. Every value's events are checked. */
#define D1_VALUES 20000
typedef struct d1_race {
    mguard_ledger *L;
    rc_obj *obj, *vals;
    int deleting, stores_done;
    long stored, deletes;
} d1_race;

static void *d1_store_values(void *arg)
{
    d1_race *d = (d1_race *)arg;
    int i;
    wait_flag(&d->deleting, 2000);          /* overlap with the deleting thread */
    for (i = 0; i < D1_VALUES; i++) {
        rc_obj *v = &d->vals[i];
        if (mguard_ledger_store_attr(d->L, d->obj, "a", v) == MGUARD_OK) d->stored++;
        rc_unref(v);
    }
    flag_set(&d->stores_done, 1);
    return NULL;
}

static void *d1_delete_values(void *arg)
{
    d1_race *d = (d1_race *)arg;
    flag_set(&d->deleting, 1);
    while (!flag_get(&d->stores_done)) {
        void *got = NULL;
        if (mguard_ledger_delete_attr(d->L, d->obj, "a") == MGUARD_OK) d->deletes++;
        (void)mguard_ledger_pending(d->L, d->obj, "a", &got);
    }
    return NULL;
}

static void test_ledger_store_racing_delete_keeps_every_retain_before_its_release(void **state)
{
    enum { ROUNDS = 10 };
    mguard_ctx *ctx = ts_ctx(NULL);
    d1_race d;
    rc_obj obj;
    pthread_t a, b;
    int i, r;
    (void)state;
    rc_reset(ctx, NULL);
    memset(&d, 0, sizeof d);
    d.L = rc_ledger(ctx);
    d.vals = (rc_obj *)calloc(D1_VALUES, sizeof *d.vals);
    rc_init(&obj, -1);
    d.obj = &obj;
    assert_int_equal(mguard_ledger_track(d.L, &obj, MGUARD_LEDGER_EXISTING, "obj"), MGUARD_OK);
    for (r = 0; r < ROUNDS; r++) {
        for (i = 0; i < D1_VALUES; i++) rc_init(&d.vals[i], r * D1_VALUES + i);
        d.deleting = d.stores_done = 0;
        d.stored = d.deletes = 0;
        pthread_create(&b, NULL, d1_delete_values, &d);
        pthread_create(&a, NULL, d1_store_values, &d);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        mguard_ledger_clear(d.L);                /* the last value, and obj */
        assert_int_equal(mguard_ledger_track(d.L, &obj, MGUARD_LEDGER_EXISTING, "obj"), MGUARD_OK);
        for (i = 0; i < D1_VALUES; i++) {
            assert_rc_log(&d.vals[i]);
            assert_int_equal(d.vals[i].retains, 1);
            assert_int_equal(d.vals[i].releases, 1);
        }
        assert_int_equal(d.stored, D1_VALUES);
        assert_true(d.deletes > 0);
        assert_rc_clean();
        assert_int_equal(g_rc.deaths, (r + 1) * D1_VALUES);
    }
    mguard_ledger_destroy(d.L);
    rc_unref(&obj);
    assert_int_equal(obj.destroyed, 1);
    assert_int_equal(obj.retains, ROUNDS + 1);
    assert_int_equal(obj.releases, ROUNDS + 1);
    assert_rc_clean();
    assert_ctx_ok(ctx);
    assert_int_equal(mgt_objects(ctx), 0);
    mguard_ctx_destroy(ctx);
    free(d.vals);
}

/* ---- stress: ledgers, scope trackers, dynamism trackers on four threads ---
   One thread-safe context shared by four threads, with the objects of
   section "reference-counted objects" above: slots hold one reference and
   a ref each, a thread takes its own with mguard_ref_get_retained, the
   ledgers take theirs through their retain hook, and whoever drops the last
   reference runs the destructor (mguard_on_destroy), on any thread, often
   inside a ledger's release hook. Dead objects wait in a quarantine of
   LX_QUARANTINE before free(), so a late hook reads a flag rather than
   freed memory, and addresses are still reused. Every thread:
   - creates, tags (mguard_gen_tag, outside any lock of the test) and drops
     objects, advances and reads the generation, marks classes dynamic;
   - tracks objects in two shared ledgers (every kind), stores, deletes and
     loads attributes whose values are objects, records, registers and
     removes hooks, applies, compares, diffs, checks and sometimes clears
     or restores them; clones them into private checkpoints on which clone,
     equal, diff, restore, apply and prune have exact answers;
   - enters and exits objects in a scope tracker of its own (named by a
     type_name callback) and adds to its counters, adds to and names in a
     shared tracker, renders reports in every format from both;
   - observes shapes and scalars in a shared dynamism tracker, reads it
     back, and uses a private one with exact answers.
   Every answer a thread can know is checked on the spot (lx_expect); at
   the end: the rc_obj rules for every object (retain before release, no
   hook after death, one destructor run, retains == releases), every object
   destroyed, exact counters of the trackers, the generation, the dynamic
   positions, no ledger warned of an object destroyed while it held it, no
   log line other than the ones a race explains, mguard_ctx_check. */
#define LX_THREADS 4
#define LX_SLOTS 24
#define LX_LEDGERS 2
#define LX_PATHS 8
#define LX_CLASSES 4
#define LX_QUARANTINE 1024
#define LX_REPORT 131072

typedef struct lx_thread {
    int n;
    unsigned seed;
    mguard_scope *scope;       /* this thread's own tracker */
    long adds, name_adds[2];   /* since it was created: every add, adds while
                                  a "Layer" / a "Net" was active */
    long shared_adds;          /* this thread's adds to the shared tracker */
    long last_gen, gen_epoch;  /* generations only grow, between two clears */
    char *buf;                 /* LX_REPORT bytes for reports */
} lx_thread;

typedef struct lx_shared {
    mguard_ctx *ctx;
    long iters;
    pthread_mutex_t slot_lock[LX_SLOTS];
    rc_obj *slot_obj[LX_SLOTS];
    mguard_ref slot_ref[LX_SLOTS];
    mguard_ledger *ledger[LX_LEDGERS];
    mguard_scope *scope;
    mguard_dyn *dyn;
    int classes[LX_CLASSES];
    long class_marked[LX_CLASSES];    /* epoch + 1 of the last sure mark */
    long gen_clears;                  /* +1 before each mguard_gen_clear, +1 after */
    unsigned path_values[LX_PATHS];   /* bit per distinct value observed */
    pthread_mutex_t q_lock;
    rc_obj *quarantine[LX_QUARANTINE];
    long nq;
    pthread_mutex_t note_lock;
    long wrong, log_death, log_other;
    char first_wrong[160], first_log[256];
    long objects, shared_adds, advances, tag_checks, tracks, stores, deletes, clones, walks, clears, restores, reports, observes;
} lx_shared;

static lx_shared g_lx;
static const char *const lx_attrs[3] = {"x", "y", "z"};

static unsigned lx_rand(lx_thread *t) { return st_rand(&t->seed); }

static void lx_note(long *count, char *first, size_t cap, const char *what)
{
    pthread_mutex_lock(&g_lx.note_lock);
    if ((*count)++ == 0) snprintf(first, cap, "%s", what);
    pthread_mutex_unlock(&g_lx.note_lock);
}

#define lx_expect(cond) \
    do { if (!(cond)) lx_note(&g_lx.wrong, g_lx.first_wrong, sizeof g_lx.first_wrong, #cond); } while (0)

/* Lines a race explains (a thread acts on what another just changed), a
   full trace (a tracker with a trace records max_trace_events spans), and
   the random reads' misses (a load_attr of nothing pending says so). */
static void lx_log(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    (void)level;
    (void)user;
    switch (code) {
    case MGUARD_LOG_LEDGER_HELD_DESTROYED: case MGUARD_LOG_SCOPE_ACTIVE_DESTROYED:
    case MGUARD_LOG_SCOPE_CHILD_GONE: case MGUARD_LOG_SCOPE_ENTER_GONE:
        lx_note(&g_lx.log_death, g_lx.first_log, sizeof g_lx.first_log, msg);
        return;
    case MGUARD_LOG_LEDGER_TRACKED: case MGUARD_LOG_LEDGER_UNTRACKED: case MGUARD_LOG_LEDGER_READ_UNTRACKED:
    case MGUARD_LOG_LEDGER_CHANGED_IN_HOOK: case MGUARD_LOG_SCOPE_TRACE_FULL: case MGUARD_LOG_LEDGER_UNBOUND:
        return;   /* explained by the workload */
    default:
        lx_note(&g_lx.log_other, g_lx.first_log, sizeof g_lx.first_log, msg);
    }
}

static void lx_bury(rc_obj *o)
{
    rc_obj *old = NULL;
    pthread_mutex_lock(&g_lx.q_lock);
    if (g_lx.nq >= LX_QUARANTINE) old = g_lx.quarantine[g_lx.nq % LX_QUARANTINE];
    g_lx.quarantine[g_lx.nq++ % LX_QUARANTINE] = o;
    pthread_mutex_unlock(&g_lx.q_lock);
    free(old);
}

/* ---- the hooks: each checks its objects are alive ---- */
static bool lx_equal(const void *a, const void *b, void *user)
{
    (void)user;
    rc_check_alive((const rc_obj *)a);
    rc_check_alive((const rc_obj *)b);
    return ((const rc_obj *)a)->id % 4 == ((const rc_obj *)b)->id % 4;
}
static void lx_refs(const void *value, mguard_ledger_visit_fn visit, void *visit_ctx, void *user)
{
    (void)user;
    rc_check_alive((const rc_obj *)value);
    visit(value, visit_ctx);
}
static void lx_format(const void *obj, const char *attr, const void *value, size_t vsize, char *buf, size_t size, void *user)
{
    (void)obj;
    (void)attr;
    (void)vsize;
    (void)user;
    rc_check_alive((const rc_obj *)value);
    snprintf(buf, size, "obj%d", ((const rc_obj *)value)->id);
}
static void lx_apply(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    (void)attr;
    (void)deleted;
    rc_check_alive((const rc_obj *)obj);
    rc_check_alive((const rc_obj *)value);
    ++*(long *)user;
}
static const char *lx_type_name(const void *comp, void *user)
{
    (void)user;
    rc_check_alive((const rc_obj *)comp);
    return (((const rc_obj *)comp)->id & 1) ? "Net" : "Layer";
}
/* Brackets balance outside strings, and the text is one value. */
static bool lx_json_balanced(const char *s)
{
    char stack[64];
    int depth = 0, in_str = 0;
    if (*s != '{' && *s != '[') return false;
    for (; *s; s++) {
        if (in_str) {
            if (*s == '\\' && s[1]) s++;
            else if (*s == '"') in_str = 0;
        } else if (*s == '"') {
            in_str = 1;
        } else if (*s == '{' || *s == '[') {
            if (depth == (int)sizeof stack) return false;
            stack[depth++] = *s == '{' ? '}' : ']';
        } else if (*s == '}' || *s == ']') {
            if (!depth || stack[--depth] != *s) return false;
            if (!depth && s[1] && s[1] != '\n') return false;
        }
    }
    return !depth && !in_str;
}

static mguard_scope *lx_scope_create(int trace)
{
    mguard_scope_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.type_name = lx_type_name;
    sd.trace = trace != 0;
    sd.max_trace_events = 256;
    return mguard_scope_create(g_lx.ctx, &sd);
}

/* ---- generations, without any lock of the test ----
   A rare mguard_gen_clear drops every tag and class mark and restarts the
   generation. g_lx.gen_clears is raised before and after each clear (odd:
   one is running), and an answer is checked only when the count read
   before and after it is the same even number (the epoch): no clear
   overlapped it, and every earlier one had finished. */
static long lx_epoch(void) { return __atomic_load_n(&g_lx.gen_clears, __ATOMIC_SEQ_CST); }
static int lx_same_epoch(long c0, long c1) { return c0 == c1 && c0 % 2 == 0; }

static void lx_gen_tag(rc_obj *o)
{
    long c0 = lx_epoch(), c1;
    lx_expect(mguard_gen_tag(g_lx.ctx, o) == MGUARD_OK);
    o->tag_gen = mguard_gen_get(g_lx.ctx, o);
    c1 = lx_epoch();
    o->tag_epoch = lx_same_epoch(c0, c1) ? c0 : -1;
    if (o->tag_epoch >= 0) lx_expect(o->tag_gen >= 0);
}

/* A generation g read between epochs c0 and c1: never smaller than the
   last one this thread saw in the same epoch (strictly greater when it
   was advanced). */
static void lx_gen_seen(lx_thread *t, long g, long c0, long c1, int advanced)
{
    if (lx_same_epoch(c0, c1) && c0 == t->gen_epoch) lx_expect(advanced ? g > t->last_gen : g >= t->last_gen);
    t->gen_epoch = lx_same_epoch(c0, c1) ? c0 : -1;
    t->last_gen = g;
}

static void lx_gen_global(lx_thread *t)
{
    long g, c0 = lx_epoch(), c1;
    int k = (int)(lx_rand(t) % LX_CLASSES);
    unsigned what = lx_rand(t) % 3;
    if (t->n == LX_THREADS && lx_rand(t) % 256 == 0) {
        count_add(&g_lx.gen_clears, 1);
        mguard_gen_clear(g_lx.ctx);
        count_add(&g_lx.gen_clears, 1);
        return;
    }
    switch (what) {
    case 0:
        g = mguard_gen_advance(g_lx.ctx);
        count_add(&g_lx.advances, 1);
        c1 = lx_epoch();
        lx_expect(g > 0);
        lx_gen_seen(t, g, c0, c1, 1);
        break;
    case 1:
        g = mguard_gen_current(g_lx.ctx);
        c1 = lx_epoch();
        lx_expect(g >= 0);
        lx_gen_seen(t, g, c0, c1, 0);
        break;
    default:
        lx_expect(mguard_gen_mark_class_dynamic(g_lx.ctx, &g_lx.classes[k]) == MGUARD_OK);
        g = mguard_gen_is_dynamic(g_lx.ctx, NULL, &g_lx.classes[k]);
        c1 = lx_epoch();
        if (lx_same_epoch(c0, c1)) {
            lx_expect(g);
            __atomic_store_n(&g_lx.class_marked[k], c0 + 1, __ATOMIC_SEQ_CST);
        }
    }
}

static void lx_gen_obj(lx_thread *t, rc_obj *o)
{
    int k = (int)(lx_rand(t) % LX_CLASSES);
    long c0 = lx_epoch(), c1, marked = __atomic_load_n(&g_lx.class_marked[k], __ATOMIC_SEQ_CST);
    long before = mguard_gen_current(g_lx.ctx), after, got;
    bool now = mguard_gen_is_dynamic(g_lx.ctx, o, NULL), dyn;
    after = mguard_gen_current(g_lx.ctx);
    got = mguard_gen_get(g_lx.ctx, o);
    dyn = mguard_gen_is_dynamic(g_lx.ctx, o, &g_lx.classes[k]);
    c1 = lx_epoch();
    lx_gen_seen(t, after, c0, c1, 0);
    lx_expect(mgt_ctx_contains(g_lx.ctx, o));        /* it has a ref until it dies */
    lx_expect(mguard_intern(g_lx.ctx, "Layer") == mguard_intern(g_lx.ctx, "Layer"));
    lx_expect(mgt_objects(g_lx.ctx) > 0);
    if (!lx_same_epoch(c0, c1)) return;
    count_add(&g_lx.tag_checks, 1);
    if (o->tag_epoch == c0) {                     /* tagged in this epoch */
        lx_expect(got == o->tag_gen);
        if (o->tag_gen < before) lx_expect(!now);
        if (before == after) lx_expect(now == (o->tag_gen == before));
    } else if (o->tag_epoch >= 0) {               /* its tag was cleared */
        lx_expect(got == -1 && !now);
    }
    if (marked == c0 + 1) lx_expect(dyn);
}

/* ---- objects in slots ---- */
static void lx_create(lx_thread *t, int i)
{
    rc_obj *o;
    mguard_ref r;
    int empty;
    (void)t;
    pthread_mutex_lock(&g_lx.slot_lock[i]);
    empty = !g_lx.slot_obj[i];
    pthread_mutex_unlock(&g_lx.slot_lock[i]);
    if (!empty) return;
    o = (rc_obj *)malloc(sizeof *o);
    rc_init(o, (int)count_add(&g_lx.objects, 1));
    lx_expect(mguard_gen_tag(g_lx.ctx, o) == MGUARD_OK);
    lx_gen_tag(o);
    r = mguard_ref_make(g_lx.ctx, o);
    pthread_mutex_lock(&g_lx.slot_lock[i]);
    if (!g_lx.slot_obj[i]) {
        g_lx.slot_obj[i] = o;
        g_lx.slot_ref[i] = r;
        o = NULL;
    }
    pthread_mutex_unlock(&g_lx.slot_lock[i]);
    if (o) rc_unref(o);                 /* the slot was taken meanwhile: it dies */
}

static void lx_drop(int i)
{
    rc_obj *o;
    pthread_mutex_lock(&g_lx.slot_lock[i]);
    o = g_lx.slot_obj[i];
    g_lx.slot_obj[i] = NULL;
    pthread_mutex_unlock(&g_lx.slot_lock[i]);
    if (o) rc_unref(o);
}

static rc_obj *lx_take(int i)
{
    mguard_ref r;
    pthread_mutex_lock(&g_lx.slot_lock[i]);
    r = g_lx.slot_ref[i];
    pthread_mutex_unlock(&g_lx.slot_lock[i]);
    return (rc_obj *)mguard_ref_get_retained(g_lx.ctx, r, rc_try_retain, NULL);
}

/* ---- the shared ledgers ---- */
static void lx_ledger_op(lx_thread *t, rc_obj *o, rc_obj *v)
{
    mguard_ledger *L = g_lx.ledger[lx_rand(t) % LX_LEDGERS];
    mguard_ledger_kind kind = (mguard_ledger_kind)(MGUARD_LEDGER_EXISTING + o->id % 3);
    const char *attr = lx_attrs[lx_rand(t) % 3];
    mguard_status st;
    void *got;
    int id;
    switch (lx_rand(t) % 10) {
    case 0:
    case 1:
        st = kind == MGUARD_LEDGER_EXISTING ? mguard_ledger_track(L, o, MGUARD_LEDGER_EXISTING, "existing")
           : kind == MGUARD_LEDGER_NEW      ? mguard_ledger_track(L, o, MGUARD_LEDGER_NEW, "Cls")
                                            : mguard_ledger_track(L, o, MGUARD_LEDGER_CONTAINER, "list");
        lx_expect(st == MGUARD_OK || st == MGUARD_EEXIST);
        if (st == MGUARD_OK) count_add(&g_lx.tracks, 1);
        break;
    case 2:
    case 3:
    case 4:
        if (kind == MGUARD_LEDGER_CONTAINER) break;        /* no attribute writes */
        st = mguard_ledger_store_attr(L, o, attr, v);
        lx_expect(st == MGUARD_OK || st == MGUARD_EINVAL);
        if (st == MGUARD_OK) count_add(&g_lx.stores, 1);
        break;
    case 5:
        if (kind == MGUARD_LEDGER_CONTAINER) break;
        st = mguard_ledger_delete_attr(L, o, attr);
        lx_expect(st == MGUARD_OK || st == MGUARD_EINVAL);
        if (st == MGUARD_OK) count_add(&g_lx.deletes, 1);
        break;
    case 6: {
        mguard_ledger_entry e;
        got = NULL;
        st = kind == MGUARD_LEDGER_CONTAINER ? MGUARD_NOT_FOUND : mguard_ledger_pending(L, o, attr, &got);
        lx_expect(st == MGUARD_OK || st == MGUARD_DELETED || st == MGUARD_NOT_FOUND || st == MGUARD_EINVAL);
        lx_expect(st == MGUARD_OK || got == NULL);
        if (kind != MGUARD_LEDGER_CONTAINER) (void)mguard_ledger_pending(L, o, attr, NULL);
        (void)mguard_ledger_get(L, o, NULL);
        if (mguard_ledger_get(L, o, &e) == MGUARD_OK) lx_expect(e.obj == o && e.kind == kind);
        break;
    }
    case 7:
        if (kind == MGUARD_LEDGER_CONTAINER) {
            st = mguard_ledger_mark_modified(L, o);
            lx_expect(st == MGUARD_OK || st == MGUARD_EINVAL);
        }
        lx_expect(mguard_ledger_record(L, "saved", o) == MGUARD_OK);
        (void)ledger_stats(L);
        break;
    case 8:
        if (v) {
            lx_expect(mguard_ledger_register_hook(L, o, "hook", v, &id) == MGUARD_OK);
        } else {
            mguard_ledger_iter h;
            st = mguard_ledger_remove_hook(L, (int)(lx_rand(t) % 8));
            lx_expect(st == MGUARD_OK || st == MGUARD_NOT_FOUND);
            h = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_HOOKS, NULL);
            while (mguard_ledger_next(&h)) lx_expect(h.obj && h.fn);
        }
        break;
    default: {
        long n = 0;
        mguard_ledger_diff_result *d = NULL;
        mguard_ledger_iter it;
        count_add(&g_lx.walks, 1);
        lx_expect(mguard_ledger_apply(L, lx_apply, &n) == MGUARD_OK);
        (void)mguard_ledger_equal(g_lx.ledger[0], g_lx.ledger[1]);
        st = mguard_ledger_diff(g_lx.ledger[0], g_lx.ledger[1], &d);
        lx_expect(st == MGUARD_OK || st == MGUARD_EINVAL);
        mguard_ledger_diff_free(d);
        lx_expect(mgt_ledger_check(L) == MGUARD_OK);
        it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL);
        for (n = 0; mguard_ledger_next(&it); n++) lx_expect(it.obj != NULL);
        it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_WRITES, o);             /* o is ours: alive */
        while (mguard_ledger_next(&it)) lx_expect(it.obj == o && it.attr && (!it.deleted || !it.value));
        it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_RECORDS, NULL);
        while (mguard_ledger_next(&it)) lx_expect(it.tag && strcmp(it.tag, "saved") == 0 && it.payload);
        it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_MODIFIED, NULL);
        while (mguard_ledger_next(&it)) lx_expect(it.modified);
        (void)ledger_stats(L);
    }
    }
}

/* A private checkpoint: nobody else changes it, so every answer is exact. */
static void lx_ledger_private(lx_thread *t)
{
    mguard_ledger *L = g_lx.ledger[lx_rand(t) % LX_LEDGERS], *c, *c2;
    mguard_ledger_diff_result *d = NULL;
    mguard_ledger_iter it;
    const void *x = NULL;
    long n = 0;
    unsigned r = lx_rand(t);
    c = mguard_ledger_clone(L);
    count_add(&g_lx.clones, 1);
    lx_expect(c != NULL);
    if (!c) return;
    c2 = mguard_ledger_clone(c);
    lx_expect(c2 != NULL && mguard_ledger_equal(c, c2));
    lx_expect(mguard_ledger_diff(c, c2, &d) == MGUARD_OK && mguard_ledger_diff_items(d, NULL) == NULL &&
              mguard_ledger_diff_format(d, NULL, 0) == 0);
    mguard_ledger_diff_free(d);
    it = mguard_ledger_iterate(c, MGUARD_LEDGER_WALK_ENTRIES, NULL);
    while (!x && mguard_ledger_next(&it))
        if (it.kind == MGUARD_LEDGER_EXISTING) x = it.obj;
    if (x) {                                 /* a write only c2 has */
        const mguard_ledger_diff_item *item = NULL;
        size_t nd = 0;
        rc_check_alive((const rc_obj *)x);   /* c holds it */
        lx_expect(mguard_ledger_store_attr(c2, x, "private", NULL) == MGUARD_OK);
        lx_expect(!mguard_ledger_equal(c, c2));
        lx_expect(mguard_ledger_diff(c, c2, &d) == MGUARD_OK && (item = mguard_ledger_diff_items(d, &nd)) != NULL && nd == 1);
        lx_expect(item && item->what == MGUARD_LEDGER_DIFF_ATTR_ADDED && item->obj == x &&
                  strcmp(item->attr, "private") == 0);
        mguard_ledger_diff_free(d);
        lx_expect(mguard_ledger_restore(c2, c) == MGUARD_OK && mguard_ledger_equal(c, c2));
    }
    lx_expect(mguard_ledger_apply(c, lx_apply, &n) == MGUARD_OK);
    lx_expect(n == (long)ledger_stats(c).writes);
    lx_expect(mguard_ledger_prune(c2, NULL, 0) == MGUARD_OK);
    lx_expect(mgt_ledger_check(c2) == MGUARD_OK);
    lx_expect(ledger_stats(c2).entries <= ledger_stats(c).entries);
    if (r % 8 == 0) {                        /* the shared ledger shrinks */
        lx_expect(mguard_ledger_restore(L, c2) == MGUARD_OK);
        count_add(&g_lx.restores, 1);
    } else if (r % 8 == 1) {
        mguard_ledger_clear(L);
        count_add(&g_lx.clears, 1);
    }
    mguard_ledger_destroy(c2);
    mguard_ledger_destroy(c);
}

/* ---- scope trackers ---- */
static void lx_scope_check_and_renew(lx_thread *t)
{
    lx_expect(mguard_scope_counter(t->scope, "Global", "flops", NULL) == (double)t->adds);
    lx_expect(mguard_scope_counter(t->scope, "Layer", "flops", NULL) == (double)t->name_adds[0]);
    lx_expect(mguard_scope_counter(t->scope, "Net", "flops", NULL) == (double)t->name_adds[1]);
    mguard_scope_destroy(t->scope);
    t->scope = NULL;
    t->adds = t->name_adds[0] = t->name_adds[1] = 0;
}

/* The thread's own tracker: nobody else changes it (other threads' deaths
   only drop names of components it no longer has open), so its stack,
   active set, path and phase are exact; a quarter of the time the pass is
   a backward one, ended by mguard_scope_clear. */
static void lx_scope_op(lx_thread *t, rc_obj *o, rc_obj *v)
{
    mguard_scope *s = t->scope;
    const char *name, *parents[4], *frames[4];
    char path[64], want[64];
    unsigned r = lx_rand(t);
    int no = o->id & 1, nested = 0, backward = r % 4 == 0;
    if (backward) lx_expect(mguard_scope_set_phase(s, 1) == MGUARD_OK && (mguard_scope_phase(s) == 1));
    lx_expect(mguard_scope_enter(s, o) == MGUARD_OK);
    if (v && v != o) {
        nested = mguard_scope_enter(s, v) == MGUARD_OK;
        lx_expect(nested);
    }
    lx_expect(mguard_scope_frames(s, frames, 4) == (size_t)(2 + nested));   /* depth + 1 */
    lx_expect(strcmp(frames[0], lx_type_name(nested ? v : o, NULL)) == 0);
    lx_expect(mguard_scope_parents(s, parents, 4) == (size_t)(2 + (nested && (v->id & 1) != no)));
    lx_expect(strcmp(parents[0], "Global") == 0 && strcmp(parents[1], lx_type_name(o, NULL)) == 0);
    snprintf(want, sizeof want, "Global > %s%s%s", lx_type_name(o, NULL), nested ? " > " : "",
             nested ? lx_type_name(v, NULL) : "");
    lx_expect(mguard_scope_format(s, MGUARD_SCOPE_PATH, path, sizeof path) == strlen(want) && strcmp(path, want) == 0);
    lx_expect(mguard_scope_add(s, "flops", 1.0) == MGUARD_OK);
    t->adds++;
    t->name_adds[no]++;
    if (nested && (v->id & 1) != no) t->name_adds[v->id & 1]++;
    if (backward) {
        lx_expect(mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_FRAMES) == MGUARD_OK && mguard_scope_phase(s) == 0);
    } else {
        if (nested) lx_expect(mguard_scope_exit(s, v) == MGUARD_OK);
        lx_expect(mguard_scope_exit(s, o) == MGUARD_OK);
    }
    lx_expect(mguard_scope_frames(s, NULL, 0) == 1 && mguard_scope_parents(s, parents, 4) == 1);
    if (r % 64 == 1) lx_expect(mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_TRACE) == MGUARD_OK);
    if (r % 64 == 2) lx_expect(mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_WARNINGS) == MGUARD_OK);
    /* the shared tracker: names and counters only (frames are per thread) */
    lx_expect(mguard_scope_add(g_lx.scope, "calls", 1.0) == MGUARD_OK);
    t->shared_adds++;
    count_add(&g_lx.shared_adds, 1);
    lx_expect(mguard_scope_counter(g_lx.scope, "Global", "calls", NULL) >= (double)t->shared_adds);
    name = mguard_scope_name(g_lx.scope, o);
    lx_expect(name && strcmp(name, lx_type_name(o, NULL)) == 0);
    name = mgt_scope_known_name(g_lx.scope, o);
    lx_expect(name && strcmp(name, lx_type_name(o, NULL)) == 0);
    lx_expect(mguard_scope_is_active(g_lx.scope, "Global"));
}

static void lx_report(lx_thread *t)
{
    int own = lx_rand(t) & 1;
    mguard_scope *s = own ? t->scope : g_lx.scope;
    mguard_scope_view f = (mguard_scope_view)(lx_rand(t) % 4);
    size_t n = mguard_scope_format(s, f, t->buf, LX_REPORT);
    count_add(&g_lx.reports, 1);
    lx_expect(n > 0 && n < LX_REPORT && strlen(t->buf) == n);
    if (f == MGUARD_SCOPE_TRACE_JSON) lx_expect(lx_json_balanced(t->buf));
    if (own) {                               /* nobody else changes it */
        lx_expect(mguard_scope_format(s, f, NULL, 0) == n);
    }
}

/* ---- dynamism trackers ---- */
/* Path k: 0-2 a tensor whose second size varies, 3-5 one whose sizes are
   fixed, 6 a scalar that varies, 7 one that does not; half the time
   spelled with attribute access (the same path once normalized). */
static void lx_path(lx_thread *t, int k, char *buf, size_t cap)
{
    snprintf(buf, cap, (lx_rand(t) & 1) ? "L['p%d']" : "L.p%d", k);
}

static void lx_observe(lx_thread *t, mguard_dyn *d, unsigned *values)
{
    char path[32];
    int k = (int)(lx_rand(t) % LX_PATHS);
    lx_path(t, k, path, sizeof path);
    if (k < 6) {
        int64_t dims[2];
        dims[0] = 8;
        dims[1] = k < 3 ? 1 + (int64_t)(lx_rand(t) % 3) : 4;
        lx_expect(mguard_dyn_observe(d, path, dims, 2) == MGUARD_OK);
        __atomic_fetch_or(&values[k], 1u << dims[1], __ATOMIC_SEQ_CST);
    } else {
        int which = k == 6 ? (int)(lx_rand(t) & 1) : 2;
        lx_expect(mguard_dyn_observe_scalar(d, path, 0.5 + which) == MGUARD_OK);
        __atomic_fetch_or(&values[k], 1u << which, __ATOMIC_SEQ_CST);
    }
    count_add(&g_lx.observes, 1);
}

/* Exact answers for paths whose observations all came before. */
static void lx_expect_dims(const mguard_dyn *d, const unsigned *values)
{
    int k;
    size_t seen = 0;
    for (k = 0; k < LX_PATHS; k++) {
        char path[32];
        bool dyn[2] = {true, true};
        size_t rank = 0;
        unsigned m = __atomic_load_n(&values[k], __ATOMIC_SEQ_CST);
        int varies = m && (m & (m - 1)) != 0;
        snprintf(path, sizeof path, "L['p%d']", k);
        if (!m) {
            lx_expect(!mguard_dyn_dims(d, path, NULL, NULL, 0));
            continue;
        }
        seen++;
        lx_expect(mguard_dyn_dims(d, path, &rank, dyn, 2) && rank == (size_t)(k < 6 ? 2 : 1));
        if (k < 6) lx_expect(!dyn[0] && dyn[1] == varies);
        else lx_expect(dyn[0] == varies);
    }
    lx_expect(mguard_dyn_count(d) == seen);
}

static void lx_dyn_read(lx_thread *t)
{
    char path[32];
    int k = (int)(lx_rand(t) % LX_PATHS);
    unsigned m = __atomic_load_n(&g_lx.path_values[k], __ATOMIC_SEQ_CST);
    mguard_dyn_iter it;
    size_t n, paths = 0, rank = 0;
    bool first = true;
    lx_path(t, k, path, sizeof path);
    if (m) lx_expect(mguard_dyn_dims(g_lx.dyn, path, &rank, &first, 1) && rank == (size_t)(k < 6 ? 2 : 1));
    if (m && k < 6) lx_expect(!first);
    it = mguard_dyn_iterate(g_lx.dyn);          /* varies not read: another thread may move it */
    while (mguard_dyn_next(&it)) {
        paths++;
        lx_expect(it.path && it.group && (it.rank == 1 || it.rank == 2));
    }
    lx_expect(paths <= LX_PATHS);
    n = mguard_dyn_format(g_lx.dyn, t->buf, LX_REPORT);
    lx_expect(n >= 2 && n < LX_REPORT && strlen(t->buf) == n && t->buf[0] == '{' && t->buf[n - 1] == '}');
    if (lx_rand(t) % 16 == 0) {                 /* a private tracker: exact */
        unsigned values[LX_PATHS];
        mguard_dyn *d = mguard_dyn_create(g_lx.ctx);
        int i;
        memset(values, 0, sizeof values);
        lx_expect(d != NULL);
        if (!d) return;
        for (i = 0; i < 12; i++) lx_observe(t, d, values);
        lx_expect_dims(d, values);
        mguard_dyn_destroy(d);
    }
}

static void *lx_worker(void *arg)
{
    lx_thread *t = (lx_thread *)arg;
    long it;
    t->scope = lx_scope_create(t->n & 1);
    lx_expect(t->scope != NULL);
    for (it = 0; it < g_lx.iters; it++) {
        unsigned op = lx_rand(t) % 100;
        int i = (int)(lx_rand(t) % LX_SLOTS);
        rc_obj *o, *v = NULL;
        if (op < 6) {
            lx_create(t, i);
            continue;
        }
        if (op < 10) {
            lx_drop(i);
            continue;
        }
        if (op < 13) {
            lx_gen_global(t);
            continue;
        }
        if (t->n == 1 && it % 64 == 0) lx_expect(mguard_ctx_check(g_lx.ctx) == MGUARD_OK);
        if (op < 16) {
            lx_report(t);
            continue;
        }
        if (op < 28) {
            if (op < 24) lx_observe(t, g_lx.dyn, g_lx.path_values);
            else lx_dyn_read(t);
            continue;
        }
        if (op == 28 && lx_rand(t) % 8 == 0) {
            lx_scope_check_and_renew(t);
            t->scope = lx_scope_create(t->n & 1);
            lx_expect(t->scope != NULL);
            continue;
        }
        o = lx_take(i);
        if (!o) continue;
        if (lx_rand(t) & 1) v = lx_take((i + 1 + (int)(lx_rand(t) % (LX_SLOTS - 1))) % LX_SLOTS);
        if (op < 34) lx_gen_obj(t, o);
        else if (op < 80) lx_ledger_op(t, o, v);
        else if (op < 84) lx_ledger_private(t);
        else lx_scope_op(t, o, v);
        if (v) rc_unref(v);
        rc_unref(o);
    }
    lx_scope_check_and_renew(t);
    return NULL;
}

static void test_four_threads_share_ledgers_scopes_and_dynamism_trackers(void **state)
{
    pthread_t th[LX_THREADS];
    lx_thread thr[LX_THREADS];
    mguard_ctx_desc cd;
    mguard_ledger_desc ld;
    const char *env = getenv("MGUARD_THREADS_ITERS");
    long i, marked = 0;
    int t;
    (void)state;
    memset(&g_lx, 0, sizeof g_lx);
    g_lx.iters = env ? atol(env) : 10000;
    memset(&cd, 0, sizeof cd);
    cd.thread_safe = true;
    cd.logger.func = lx_log;
    g_lx.ctx = mguard_ctx_create(&cd);
    rc_reset(g_lx.ctx, lx_bury);
    memset(&ld, 0, sizeof ld);
    ld.retain = rc_retain;
    ld.release = rc_release;
    ld.equal = lx_equal;
    ld.refs = lx_refs;
    ld.format_value = lx_format;
    ld.format_object = lx_format;
    for (t = 0; t < LX_LEDGERS; t++) g_lx.ledger[t] = mguard_ledger_create(g_lx.ctx, &ld);
    g_lx.scope = lx_scope_create(0);
    g_lx.dyn = mguard_dyn_create(g_lx.ctx);
    for (t = 0; t < LX_SLOTS; t++) pthread_mutex_init(&g_lx.slot_lock[t], NULL);
    pthread_mutex_init(&g_lx.q_lock, NULL);
    pthread_mutex_init(&g_lx.note_lock, NULL);
    for (t = 0; t < LX_THREADS; t++) {
        memset(&thr[t], 0, sizeof thr[t]);
        thr[t].n = t + 1;
        thr[t].seed = 0x9e3779b9u * (unsigned)(t + 1);
        thr[t].buf = (char *)malloc(LX_REPORT);
        pthread_create(&th[t], NULL, lx_worker, &thr[t]);
    }
    for (t = 0; t < LX_THREADS; t++) pthread_join(th[t], NULL);
    /* exact answers now that nobody else changes anything */
    assert_true(mguard_scope_counter(g_lx.scope, "Global", "calls", NULL) == (double)g_lx.shared_adds);
    lx_expect_dims(g_lx.dyn, g_lx.path_values);
    if (g_lx.gen_clears == 0) assert_int_equal(mguard_gen_current(g_lx.ctx), g_lx.advances);
    assert_true(mguard_gen_current(g_lx.ctx) <= g_lx.advances);
    for (t = 0; t < LX_CLASSES; t++) {
        bool dyn = mguard_gen_is_dynamic(g_lx.ctx, NULL, &g_lx.classes[t]);
        marked += dyn;
        if (g_lx.class_marked[t] == g_lx.gen_clears + 1) assert_true(dyn);   /* marked since the last clear */
    }
    /* every object dies: the slots' references, then the ledgers' */
    for (t = 0; t < LX_SLOTS; t++) lx_drop(t);
    assert_ctx_ok(g_lx.ctx);
    for (t = 0; t < LX_LEDGERS; t++) mguard_ledger_destroy(g_lx.ledger[t]);
    mguard_scope_destroy(g_lx.scope);
    mguard_dyn_destroy(g_lx.dyn);
    if (g_lx.wrong || g_lx.log_death || g_lx.log_other || g_rc.retain_dead || g_rc.retain_zero || g_rc.release_dead ||
        g_rc.release_early || g_rc.hook_dead || g_rc.unbalanced || g_rc.destroyed_twice || g_rc.refs_negative)
        fail_msg("%ld wrong answers (first: %s); %ld ledger death warnings, %ld unexplained log lines (first: %s); "
                 "retains of dead %ld, of dying %ld; releases of dead %ld, before their retain %ld; other hooks on "
                 "dead %ld; deaths unbalanced %ld, repeated %ld; negative counts %ld",
                 g_lx.wrong, g_lx.wrong ? g_lx.first_wrong : "-", g_lx.log_death, g_lx.log_other,
                 g_lx.log_death || g_lx.log_other ? g_lx.first_log : "-", g_rc.retain_dead, g_rc.retain_zero,
                 g_rc.release_dead, g_rc.release_early, g_rc.hook_dead, g_rc.unbalanced, g_rc.destroyed_twice,
                 g_rc.refs_negative);
    assert_int_equal(g_rc.deaths, g_lx.objects);
    assert_int_equal(g_rc.retains, g_rc.releases);
    assert_ctx_ok(g_lx.ctx);
    assert_int_equal(mgt_objects(g_lx.ctx), marked);
    if (env)
        print_message("  %ld iterations x %d threads: %ld objects (%ld died in a release hook), %ld retains, "
                      "%ld tracks, %ld stores, %ld deletes, %ld clones, %ld walks, %ld clears, %ld restores, "
                      "%ld scope adds, %ld reports, %ld observations, %ld advances, %ld generation clears, %ld tag checks\n",
                      g_lx.iters, LX_THREADS, g_lx.objects, g_rc.deaths_in_release, g_rc.retains, g_lx.tracks,
                      g_lx.stores, g_lx.deletes, g_lx.clones, g_lx.walks, g_lx.clears, g_lx.restores,
                      g_lx.shared_adds, g_lx.reports, g_lx.observes, g_lx.advances, g_lx.gen_clears / 2,
                      g_lx.tag_checks);
    mguard_ctx_destroy(g_lx.ctx);
    for (i = 0; i < g_lx.nq && i < LX_QUARANTINE; i++) free(g_lx.quarantine[i]);
    for (t = 0; t < LX_THREADS; t++) free(thr[t].buf);
    for (t = 0; t < LX_SLOTS; t++) pthread_mutex_destroy(&g_lx.slot_lock[t]);
    pthread_mutex_destroy(&g_lx.q_lock);
    pthread_mutex_destroy(&g_lx.note_lock);
}

/* A ledger's strings and a cache reason's attr and file, handed to a
   reader on a thread-safe context, stay readable whatever another thread
   does to the ledger or cache afterwards: they are kept for the
   context's life (the stress test below read a record's tag that
   another thread's clear and destroys had let go: ThreadSanitizer saw
   the free race the strcmp). */
static void test_strings_handed_out_on_a_shared_context_outlive_their_holders(void **state)
{
    mguard_ctx_desc cd;
    mguard_ctx *ctx;
    mguard_ledger *L;
    mguard_ledger_iter it;
    mguard_cache_desc cad;
    mguard_cache *c;
    mguard_cache_reason r;
    const char *tag = NULL, *attr;
    char name[32];
    static int obj, key;
    long v = 1;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.thread_safe = true;
    cd.quiet = true;
    ctx = mguard_ctx_create(&cd);
    L = mguard_ledger_create(ctx, NULL);
    snprintf(name, sizeof name, "saved-%d", 1);
    assert_int_equal(mguard_ledger_record(L, name, &obj), MGUARD_OK);
    it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_RECORDS, NULL);
    assert_true(mguard_ledger_next(&it));
    tag = it.tag;
    {   /* a source, an attribute and a hook name too, each kept once stored */
        static int hooked, fnv;
        int id;
        const char *src, *at, *hook;
        assert_int_equal(mguard_ledger_track(L, &hooked, MGUARD_LEDGER_EXISTING, "src-2"), MGUARD_OK);
        assert_int_equal(mguard_ledger_store_attr(L, &hooked, "attr-3", NULL), MGUARD_OK);
        assert_int_equal(mguard_ledger_register_hook(L, &hooked, "hook-4", &fnv, &id), MGUARD_OK);
        it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL);
        assert_true(mguard_ledger_next(&it));
        src = it.source;
        it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_WRITES, &hooked);
        assert_true(mguard_ledger_next(&it));
        at = it.attr;
        it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_HOOKS, NULL);
        assert_true(mguard_ledger_next(&it));
        hook = it.name;
        mguard_ledger_clear(L);
        mguard_ledger_destroy(L);
        assert_int_equal(mgt_interned_count(ctx), 4);   /* none let go */
        assert_string_equal(src, "src-2");
        assert_string_equal(at, "attr-3");
        assert_string_equal(hook, "hook-4");
    }
    assert_string_equal(tag, "saved-1");           /* still the context's */
    memset(&cad, 0, sizeof cad);
    cad.value_size = sizeof v;
    c = mguard_cache_create(ctx, &cad);
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&key), &v, 0), MGUARD_OK);
    snprintf(name, sizeof name, "attr-%d", 7);
    mguard_on_mutation(ctx, &key, name);
    assert_int_equal(mguard_cache_last_reason(c, MGUARD_CACHE_KEYS(&key), &r), MGUARD_OK);
    attr = r.attr;
    mguard_cache_destroy(c);                       /* its ring goes */
    assert_string_equal(attr, "attr-7");
    mguard_on_destroy(ctx, &key);
    mguard_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_handed_out_on_a_shared_context_outlive_their_holders),
        cmocka_unit_test(test_thread_safe_context_says_so),
        cmocka_unit_test(test_half_given_lock_is_refused),
        cmocka_unit_test(test_allocation_failure_creating_the_lock_leaks_nothing),
        cmocka_unit_test(test_every_public_function_takes_the_lock_once),
        cmocka_unit_test(test_user_lock_is_taken_around_calls_and_never_held_in_callbacks),
        cmocka_unit_test(test_destroy_from_a_callback_is_refused_and_lets_the_lock_go),
        cmocka_unit_test(test_invalidate_callback_calls_back_in_on_its_own_thread),
        cmocka_unit_test(test_invalidate_callback_joins_a_thread_that_calls_back_in),
        cmocka_unit_test(test_value_destructor_joins_a_thread_that_calls_back_in),
        cmocka_unit_test(test_logger_runs_outside_the_lock),
        cmocka_unit_test(test_scope_and_ledger_hooks_join_a_thread_that_calls_back_in),
        cmocka_unit_test(test_weak_get_copy_copies_or_says_why_not),
        cmocka_unit_test(test_cache_get_copy_reads_whole_values_while_another_thread_changes_the_cache),
        cmocka_unit_test(test_ref_get_retained_retains_under_the_lock_or_returns_null),
        cmocka_unit_test(test_destroying_a_guard_waits_for_its_callback_on_another_thread),
        cmocka_unit_test(test_destroying_an_object_waits_for_its_watchers_on_another_thread),
        cmocka_unit_test(test_destroying_an_object_waits_for_watchers_its_mutation_has_not_told_yet),
        cmocka_unit_test(test_ledger_retain_runs_under_the_lock_before_the_store_returns),
        cmocka_unit_test(test_destroying_a_value_waits_for_its_release_on_another_thread),
        cmocka_unit_test(test_destroying_an_unknown_value_waits_for_its_release_on_another_thread),
        cmocka_unit_test(test_destroying_a_value_in_a_plain_table_waits_for_its_release_on_another_thread),
        cmocka_unit_test(test_an_out_of_memory_death_waits_for_a_hook_on_another_thread),
        cmocka_unit_test(test_callback_destroying_its_own_guard_does_not_wait),
        cmocka_unit_test(test_unwatch_from_another_thread_cancels_a_pending_watcher),
        cmocka_unit_test(test_four_threads_share_objects_tables_watchers_and_refs),
        cmocka_unit_test(test_ledger_release_never_overtakes_a_retain_in_progress),
        cmocka_unit_test(test_ledger_store_racing_delete_keeps_every_retain_before_its_release),
        cmocka_unit_test(test_four_threads_share_ledgers_scopes_and_dynamism_trackers),
    };
    if (getenv("MGUARD_TEST_FILTER")) cmocka_set_test_filter(getenv("MGUARD_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
