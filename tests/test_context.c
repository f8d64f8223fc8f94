/* The context: creation options, status strings, interning, and the rule
   that an allocation failure anywhere returns MGUARD_ENOMEM and leaves
   every structure as it was; bad input (a NULL context, a handle of
   another kind, a destroy from inside a callback). */
#include "common.h"

static void test_create_with_defaults_and_destroy(void **state)
{
    mguard_ctx *ctx = mguard_ctx_create(NULL);
    (void)state;
    assert_non_null(ctx);
    assert_int_equal(mgt_objects(ctx), 0);
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
    mguard_ctx_destroy(ctx);
    mguard_ctx_destroy(NULL);
}

/* realloc_fn without free_fn, then free_fn without realloc_fn. */
static void test_half_an_allocator_is_refused(void **state)
{
    test_log log;
    mguard_ctx_desc d;
    int half;
    (void)state;
    for (half = 0; half < 2; half++) {
        memset(&log, 0, sizeof log);
        memset(&d, 0, sizeof d);
        d.logger.func = test_log_fn;
        d.logger.user = &log;
        if (half == 0) d.allocator.realloc_fn = fa_realloc;
        else d.allocator.free_fn = fa_free;
        assert_null(mguard_ctx_create(&d));
        EXPECT_LOG(log, log.errors, MGUARD_LOG_HALF_ALLOCATOR);
    }
}

static void test_create_out_of_memory_returns_null(void **state)
{
    test_log log;
    test_alloc al;
    mguard_ctx_desc d;
    (void)state;
    memset(&log, 0, sizeof log);
    memset(&al, 0, sizeof al);
    memset(&d, 0, sizeof d);
    d.logger.func = test_log_fn;
    d.logger.user = &log;
    d.allocator.realloc_fn = fa_realloc;
    d.allocator.free_fn = fa_free;
    d.allocator.user = &al;
    al.fail_at = 1;
    assert_null(mguard_ctx_create(&d));
    assert_int_equal(log.code, MGUARD_LOG_NOMEM);
    assert_int_equal(al.live_blocks, 0);
}

static void test_every_allocation_goes_through_the_allocator(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_weak_desc d = {sizeof(int), NULL, NULL, NULL};
    mguard_weak *t = mguard_weak_create(ctx, &d);
    static char keys[100];
    int i, v = 0;
    (void)state;
    for (i = 0; i < 100; i++) mguard_weak_set(t, &keys[i], &v);
    mguard_ref_make(ctx, &keys[0]);
    assert_true(al.live_blocks > 3);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
    assert_int_equal(al.live_bytes, 0);
}

static void test_status_strings(void **state)
{
    (void)state;
    assert_string_equal(mguard_status_str(MGUARD_OK), "MGUARD_OK");
    assert_string_equal(mguard_status_str(MGUARD_NOT_FOUND), "MGUARD_NOT_FOUND");
    assert_string_equal(mguard_status_str(MGUARD_EINVAL), "MGUARD_EINVAL");
    assert_string_equal(mguard_status_str(MGUARD_ENOMEM), "MGUARD_ENOMEM");
    assert_string_equal(mguard_status_str(MGUARD_EEXIST), "MGUARD_EEXIST");
    assert_string_equal(mguard_status_str(MGUARD_DELETED), "MGUARD_DELETED");
    assert_string_equal(mguard_status_str((mguard_status)99), "unknown status");
}

static void test_get_stats_counts_objects_and_says_whether_thread_safe(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak *t = long_table(ctx, NULL);
    mguard_ctx_stats st = {99, true};
    static int a, b;
    long v = 1;
    (void)state;
    assert_int_equal(mguard_weak_set(t, &a, &v), MGUARD_OK);
    assert_int_equal(mguard_gen_tag(ctx, &b), MGUARD_OK);
    assert_int_equal(mguard_ctx_get_stats(ctx, &st), MGUARD_OK);
    assert_int_equal(st.objects, 2);
    assert_false(st.thread_safe);
    assert_int_equal(mguard_ctx_get_stats(ctx, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    st.objects = 99;
    assert_int_equal(mguard_ctx_get_stats(NULL, &st), MGUARD_EINVAL);
    assert_int_equal(st.objects, 99);   /* out untouched */
    EXPECT_NO_LOG(log);
    mguard_ctx_destroy(ctx);
}

static void test_intern_returns_one_copy_per_content(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    char tmp[16];
    const char *a, *b, *c;
    (void)state;
    strcpy(tmp, "weight");
    a = mguard_intern(ctx, tmp);
    strcpy(tmp, "bias");
    b = mguard_intern(ctx, tmp);
    c = mguard_intern(ctx, "weight");
    assert_string_equal(a, "weight");
    assert_string_equal(b, "bias");
    assert_ptr_equal(a, c);
    assert_ptr_not_equal(a, b);
    assert_null(mguard_intern(NULL, "x"));
    assert_null(mguard_intern(ctx, NULL));
    assert_string_equal(mguard_intern(ctx, ""), "");
    mguard_ctx_destroy(ctx);
}

static void test_unknown_object_destroy_is_a_cheap_noop(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj;
    (void)state;
    mguard_on_destroy(ctx, &obj);
    mguard_on_destroy(ctx, NULL);
    mguard_on_destroy(NULL, &obj);
    assert_false(mgt_ctx_contains(ctx, &obj));
    assert_false(mgt_ctx_contains(NULL, &obj));
    assert_int_equal(mgt_objects(NULL), 0);
    assert_int_equal(mguard_ctx_check(NULL), MGUARD_EINVAL);
    assert_int_equal(log.count, 0);
    mguard_ctx_destroy(ctx);
}

/* ---- allocation failure, exhaustively --------------------------------- */

/* A representative workload run with the Nth allocation failing, for every
   N until a run completes without a failure. Every call either succeeds or
   returns ENOMEM (or the null ref); after each failure the context passes
   its consistency check and the observable state equals what the
   successful calls alone would produce; at the end nothing leaks and every
   stored value was destroyed exactly once. */
typedef struct shadow {
    int present[32];      /* key i present in table j: present[j*8+i] */
    long value[32];
} shadow;

static int live_values;
static void count_dtor(void *v, void *user) { (void)v; (void)user; live_values--; }
static void noop_watch(void *g, const void *o, const char *a, void *u) { (void)g; (void)o; (void)a; (void)u; }

static void check_shadow(mguard_weak **ts, const shadow *s, char *keys)
{
    int j, i;
    for (j = 0; j < 4; j++) {
        size_t n = 0;
        for (i = 0; i < 8; i++) {
            long *p = MGUARD_WEAK_GET(ts[j], &keys[i], long);
            if (s->present[j * 8 + i]) {
                assert_non_null(p);
                assert_int_equal(*p, s->value[j * 8 + i]);
                n++;
            } else {
                assert_null(p);
            }
        }
        assert_int_equal(mguard_weak_count(ts[j]), n);
    }
}

static void test_every_allocation_failure_leaves_state_unchanged(void **state)
{
    long n, failures_seen = 0;
    (void)state;
    for (n = 1; n < 10000; n++) {
        test_alloc al;
        test_log log;
        mguard_ctx *ctx = test_ctx(&log, &al);
        mguard_weak *ts[4];
        mguard_weak_desc d = {sizeof(long), count_dtor, NULL, NULL};
        shadow s;
        static char keys[8];
        int step, j, hit = 0;
        unsigned r = 7;
        memset(&s, 0, sizeof s);
        live_values = 0;
        for (j = 0; j < 4; j++) {
            ts[j] = mguard_weak_create(ctx, &d);
            assert_non_null(ts[j]);
        }
        al.fail_at = al.calls + n;
        for (step = 0; step < 400; step++) {
            int op, i, k;
            long v = step;
            r = r * 1103515245u + 12345u;
            op = (int)((r >> 16) % 7);
            i = (int)((r >> 8) % 8);
            j = (int)((r >> 4) % 4);
            k = j * 8 + i;
            if (op <= 2) {
                int errors_before = log.errors;
                mguard_status st = mguard_weak_set(ts[j], &keys[i], &v);
                if (st != MGUARD_OK) {
                    /* one failure, one log line */
                    assert_int_equal(log.errors, errors_before + 1);
                    assert_int_equal(log.code, MGUARD_LOG_NOMEM);
                }
                if (st == MGUARD_OK) {
                    live_values++;   /* every stored value is destroyed once */
                    s.present[k] = 1;
                    s.value[k] = v;
                } else {
                    assert_int_equal(st, MGUARD_ENOMEM);
                    hit = 1;
                }
            } else if (op == 3) {
                if (mguard_weak_take(ts[j], &keys[i], NULL) == MGUARD_OK) s.present[k] = 0;
            } else if (op == 4) {
                int jj;
                mguard_on_destroy(ctx, &keys[i]);
                for (jj = 0; jj < 4; jj++) s.present[jj * 8 + i] = 0;
            } else if (op == 5) {
                mguard_status st = mguard_watch(ctx, &keys[i], &keys[(i + 1) % 8], noop_watch, NULL);
                /* EEXIST: this very watcher waits already (nothing allocated) */
                if (st != MGUARD_OK && st != MGUARD_EEXIST) { assert_int_equal(st, MGUARD_ENOMEM); hit = 1; }
                mguard_on_mutation(ctx, &keys[(i + 3) % 8], "x");
            } else {
                mguard_ref ref = mguard_ref_make(ctx, &keys[i]);
                if (mguard_ref_is_null(ref)) hit = 1;
                else assert_ptr_equal(mguard_ref_get(ctx, ref), &keys[i]);
                if (mguard_gen_tag(ctx, &keys[(i + 2) % 8]) == MGUARD_ENOMEM) hit = 1;
            }
            if (al.failures) {
                assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
                check_shadow(ts, &s, keys);
            }
        }
        check_shadow(ts, &s, keys);
        assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
        /* every allocation of this workload is made by a call that can
           answer ENOMEM (no value is big enough for the death path to
           allocate): the one failure was answered, and logged, once */
        assert_int_equal(hit, al.failures ? 1 : 0);
        assert_int_equal(log.errors, al.failures ? 1 : 0);
        mguard_ctx_destroy(ctx);
        assert_int_equal(live_values, 0);
        assert_int_equal(al.live_blocks, 0);
        if (!al.failures) break;      /* N beyond the workload's allocations */
        failures_seen++;
    }
    assert_int_equal(failures_seen, n - 1);   /* each allocation failed once */
    assert_true(failures_seen > 15);   /* 18 allocations with the engine of issue 24 */
}

/* ---- misuse: every bad input gets its documented answer -------------- */

static void test_null_context_is_refused_everywhere(void **state)
{
    static int obj, cls;
    mguard_weak_desc d;
    mguard_ref ref;
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = 8;
    mguard_ctx_destroy(NULL);
    assert_int_equal(mguard_ctx_check(NULL), MGUARD_EINVAL);
    assert_int_equal(mgt_objects(NULL), 0);
    assert_null(mguard_weak_create(NULL, &d));
    mguard_on_destroy(NULL, &obj);
    assert_null(mguard_intern(NULL, "x"));
    assert_false(mgt_ctx_contains(NULL, &obj));
    ref = mguard_ref_make(NULL, &obj);
    assert_true(mguard_ref_is_null(ref));
    assert_null(mguard_ref_get(NULL, ref));
    assert_int_equal(mguard_watch(NULL, &obj, &cls, inval_nop, NULL), MGUARD_EINVAL);
    assert_int_equal(mguard_unwatch(NULL, &obj, &cls), MGUARD_EINVAL);
    mguard_on_mutation(NULL, &obj, "x");
    assert_int_equal(mguard_mutation_count(NULL, &obj), 0);
    assert_int_equal(mgt_watcher_count(NULL, &obj), 0);
    assert_int_equal(mguard_gen_tag(NULL, &obj), MGUARD_EINVAL);
    assert_int_equal(mguard_gen_get(NULL, &obj), -1);
    assert_false(mguard_gen_is_dynamic(NULL, &obj, NULL));
    assert_int_equal(mguard_gen_current(NULL), -1);
    assert_int_equal(mguard_gen_advance(NULL), -1);
    assert_int_equal(mguard_gen_mark_class_dynamic(NULL, &cls), MGUARD_EINVAL);
    assert_false(mguard_gen_is_dynamic(NULL, NULL, &cls));
    assert_false(mguard_gen_is_dynamic(NULL, &obj, &cls));
    mguard_gen_clear(NULL);
}

static void test_a_table_handle_is_not_a_context(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak *t = long_table(ctx, NULL);
    mguard_ctx *wrong = (mguard_ctx *)(void *)t;
    static int obj;
    (void)state;
    assert_int_equal(mguard_ctx_check(wrong), MGUARD_EINVAL);
    assert_int_equal(mgt_objects(wrong), 0);
    assert_null(mguard_weak_create(wrong, NULL));
    mguard_on_destroy(wrong, &obj);
    assert_int_equal(mguard_watch(wrong, &obj, &obj, inval_nop, NULL), MGUARD_EINVAL);
    assert_int_equal(mguard_gen_tag(wrong, &obj), MGUARD_EINVAL);
    assert_int_equal(mguard_gen_advance(wrong), -1);
    mguard_ctx_destroy(wrong);
    EXPECT_NO_LOG(log);
    assert_int_equal(mguard_weak_count(t), 0);   /* t untouched */
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

typedef struct destroy_ctx_in_dtor { mguard_ctx *ctx; int calls; } destroy_ctx_in_dtor;

static void dtor_destroys_ctx(void *value, void *user)
{
    destroy_ctx_in_dtor *x = (destroy_ctx_in_dtor *)user;
    (void)value;
    x->calls++;
    mguard_ctx_destroy(x->ctx);
}

static void test_ctx_destroy_inside_a_callback_is_refused(void **state)
{
    test_log log; test_alloc al;
    destroy_ctx_in_dtor x;
    mguard_weak_desc d;
    mguard_weak *t;
    static int key;
    long v = 1;
    (void)state;
    x.ctx = test_ctx(&log, &al);
    x.calls = 0;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof v;
    d.value_dtor = dtor_destroys_ctx;
    d.user = &x;
    t = mguard_weak_create(x.ctx, &d);
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    assert_int_equal(mguard_weak_take(t, &key, NULL), MGUARD_OK);
    assert_int_equal(x.calls, 1);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_DESTROY_IN_CALLBACK);
    assert_ctx_ok(x.ctx);                      /* still alive and whole */
    mguard_ctx_destroy(x.ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* Blind mutant blind-ctx-destroy-gone-not-restored: on a thread-safe
   context, a destroy refused inside a callback of the destroy itself must
   leave the lock as it was: the outer destroy then lets it go once and
   frees it (each lock taken once, let go once). */
typedef struct counting_lock { long locks, unlocks; int held; } counting_lock;
static void cl_lock(void *u) { counting_lock *l = (counting_lock *)u; l->locks++; l->held++; }
static void cl_unlock(void *u) { counting_lock *l = (counting_lock *)u; l->unlocks++; l->held--; }

static void test_a_destroy_refused_inside_the_destroy_keeps_the_lock_balanced(void **state)
{
    counting_lock l;
    test_alloc al;
    mguard_ctx_desc cd;
    destroy_ctx_in_dtor x;
    mguard_weak_desc d;
    mguard_weak *t;
    static int key;
    long v = 1;
    (void)state;
    memset(&l, 0, sizeof l);
    memset(&al, 0, sizeof al);
    memset(&cd, 0, sizeof cd);
    cd.quiet = true;
    cd.lock.lock_fn = cl_lock;
    cd.lock.unlock_fn = cl_unlock;
    cd.lock.user = &l;
    cd.allocator.realloc_fn = fa_realloc;
    cd.allocator.free_fn = fa_free;
    cd.allocator.user = &al;
    x.ctx = mguard_ctx_create(&cd);
    assert_true(mgt_stats(x.ctx).thread_safe);
    x.calls = 0;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof v;
    d.value_dtor = dtor_destroys_ctx;
    d.user = &x;
    t = mguard_weak_create(x.ctx, &d);
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    mguard_ctx_destroy(x.ctx);                 /* the value's destructor tries again: refused */
    assert_int_equal(x.calls, 1);
    assert_int_equal(l.held, 0);
    assert_int_equal(l.locks, l.unlocks);
    assert_int_equal(al.live_blocks, 0);
}

static void test_status_str_of_unknown_status(void **state)
{
    (void)state;
    assert_string_equal(mguard_status_str(MGUARD_EINVAL), "MGUARD_EINVAL");
    assert_string_equal(mguard_status_str((mguard_status)99), "unknown status");
    assert_string_equal(mguard_status_str((mguard_status)-1), "unknown status");
}

/* Regression (issue 23): mguard_ctx_destroy destroys the add-ons, then the
   caches, then the tables, running value destructors as it goes; a
   destructor that called a sibling destroyed before it read freed memory
   (ASan: heap-use-after-free on 90f3a0c). Now the sibling is refused like
   any destroyed handle, and one not yet destroyed is alive. */
typedef struct sibling_probe {
    mguard_cache *first, *second;   /* created in this order: second goes first */
    mguard_ledger *ledger;          /* an add-on: goes before the caches */
    size_t ledger_count;
    mguard_ledger_stats ledger_stats;
    int cache_dtor_calls, table_dtor_calls;
    size_t first_saw_second, table_saw_first;
    void *got;
    bool contained;
} sibling_probe;
static sibling_probe probe;
static const void *probe_key[1];

static void first_cache_dtor(void *value, void *user)
{
    (void)value; (void)user;
    probe.cache_dtor_calls++;
    probe.first_saw_second = mguard_cache_count(probe.second);   /* destroyed before: refused */
    probe.got = mguard_cache_get(probe.second, probe_key, 1);
}
static void second_cache_dtor(void *value, void *user)
{
    (void)value; (void)user;
    probe.cache_dtor_calls++;
    probe.contained = mguard_cache_contains(probe.first, probe_key, 1);   /* alive */
    probe.ledger_count = mguard_ledger_get_stats(probe.ledger, &probe.ledger_stats) == MGUARD_EINVAL ? 20 : 0;   /* destroyed: refused */
}
static void table_dtor(void *value, void *user)
{
    (void)value; (void)user;
    probe.table_dtor_calls++;
    probe.table_saw_first = mguard_cache_count(probe.first) + 10;   /* destroyed: 0 */
}

static void test_destroy_callbacks_find_destroyed_siblings_refused(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_cache_desc cd;
    mguard_weak_desc wd;
    mguard_weak *t;
    static int key;
    long v = 1;
    (void)state;
    memset(&probe, 0, sizeof probe);
    probe_key[0] = &key;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof v;
    wd.value_dtor = table_dtor;
    t = mguard_weak_create(ctx, &wd);
    probe.ledger = mguard_ledger_create(ctx, NULL);
    assert_int_equal(mguard_ledger_track(probe.ledger, &key, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof v;
    cd.value_dtor = first_cache_dtor;
    probe.first = mguard_cache_create(ctx, &cd);
    cd.value_dtor = second_cache_dtor;
    probe.second = mguard_cache_create(ctx, &cd);
    assert_int_equal(mguard_cache_set(probe.first, probe_key, 1, &v, 0), MGUARD_OK);
    assert_int_equal(mguard_cache_set(probe.second, probe_key, 1, &v, 0), MGUARD_OK);
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    probe.first_saw_second = probe.table_saw_first = 99;
    probe.got = &probe;
    mguard_ctx_destroy(ctx);
    assert_int_equal(probe.cache_dtor_calls, 2);
    assert_int_equal(probe.table_dtor_calls, 1);
    assert_true(probe.contained);                  /* the first cache, alive when the second went */
    assert_int_equal(probe.first_saw_second, 0);   /* the second, refused */
    assert_null(probe.got);
    assert_int_equal(probe.table_saw_first, 10);   /* the caches go before the tables */
    assert_int_equal(probe.ledger_count, 20);      /* the ledger, before the caches */
    assert_int_equal(al.live_blocks, 0);
    assert_int_equal(al.live_bytes, 0);
}

/* The context's describe hook names, in the scope's warnings, a component
   the program passed (the address when it leaves the name empty). */
static void name_widgets(const void *obj, char *buf, size_t size, void *user)
{
    int *calls = (int *)user;
    (*calls)++;
    if (*(const int *)obj == 7) snprintf(buf, size, "widget #%d", *(const int *)obj);
}

static void test_describe_names_components_in_scope_warnings(void **state)
{
#ifndef MGUARD_NO_SCOPE
    test_log log;
    mguard_ctx_desc d;
    mguard_ctx *ctx;
    mguard_scope *s;
    int calls = 0;
    static int named = 7, unnamed = 8;
    (void)state;
    memset(&log, 0, sizeof log);
    memset(&d, 0, sizeof d);
    d.logger.func = test_log_fn;
    d.logger.user = &log;
    d.describe.func = name_widgets;
    d.describe.user = &calls;
    ctx = mguard_ctx_create(&d);
    s = mguard_scope_create(ctx, NULL);
    assert_int_equal(mguard_scope_enter(s, &named), MGUARD_NOT_FOUND);
    /* the words are the contract here: the describe hook names the objects */
    EXPECT_LOG_TEXT(log, log.warnings, MGUARD_LOG_SCOPE_UNNAMED, "mguard_scope_enter: component widget #7 has no name (no type_name callback, no parent named it, never named with mguard_scope_set_name)");
    assert_int_equal(mguard_scope_exit(s, &unnamed), MGUARD_NOT_FOUND);
    EXPECT_LOG_TEXT(log, log.warnings, MGUARD_LOG_SCOPE_EXIT_UNENTERED, "mguard_scope_exit: exiting component %p, which was never entered (during forward)", (void *)&unnamed);
    assert_int_equal(mguard_scope_attach(s, &named, &unnamed, "child"), MGUARD_NOT_FOUND);
    EXPECT_LOG_TEXT(log, log.warnings, MGUARD_LOG_SCOPE_PARENT_UNNAMED, "mguard_scope_attach: the parent widget #7 has no name");
    assert_int_equal(calls, 3);
    mguard_ctx_destroy(ctx);
#else
    (void)state;
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_with_defaults_and_destroy),
        cmocka_unit_test(test_half_an_allocator_is_refused),
        cmocka_unit_test(test_create_out_of_memory_returns_null),
        cmocka_unit_test(test_every_allocation_goes_through_the_allocator),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_get_stats_counts_objects_and_says_whether_thread_safe),
        cmocka_unit_test(test_intern_returns_one_copy_per_content),
        cmocka_unit_test(test_unknown_object_destroy_is_a_cheap_noop),
        cmocka_unit_test(test_every_allocation_failure_leaves_state_unchanged),
        cmocka_unit_test(test_null_context_is_refused_everywhere),
        cmocka_unit_test(test_a_table_handle_is_not_a_context),
        cmocka_unit_test(test_ctx_destroy_inside_a_callback_is_refused),
        cmocka_unit_test(test_destroy_callbacks_find_destroyed_siblings_refused),
        cmocka_unit_test(test_a_destroy_refused_inside_the_destroy_keeps_the_lock_balanced),
        cmocka_unit_test(test_status_str_of_unknown_status),
        cmocka_unit_test(test_describe_names_components_in_scope_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
