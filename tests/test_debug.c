/* MGUARD_DEBUG: handles used after they were destroyed are caught with a
   log line instead of reading freed memory. This file compiles its own
   private copy of mguard (MGUARD_STATIC) with MGUARD_DEBUG; stb_ds comes
   from the suite's implementation object. The differential decoder also
   runs against this build, so the registry is checked under heavy use. */
#define MGUARD_STATIC
#define MGUARD_DEBUG
#define MGUARD_IMPLEMENTATION
#include "common.h"
#include "fuzz_decoder.h"

static char want[512];
#define EXPECT_LOG(log, ...) do { \
        snprintf(want, sizeof want, __VA_ARGS__); \
        assert_int_equal((log).count, 1); \
        assert_int_equal((log).warnings, 1); \
        assert_string_equal((log).last, want); \
        memset(&(log), 0, sizeof (log)); \
    } while (0)
#define NOT_A_TABLE "%s: %p is not a live table (destroyed, its context destroyed, or not a table)"
#define NOT_A_CTX "%s: %p is not a live context (destroyed, or not a context)"

static mguard_weak *long_table(mguard_ctx *ctx, dtor_log *dl)
{
    mguard_weak_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.value_dtor = dl ? dtor_count_long : NULL;
    d.user = dl;
    return mguard_weak_create(ctx, &d);
}

static void test_table_used_after_destroy_is_caught(void **state)
{
    test_log log; test_alloc al;
    dtor_log dl = { 0, { 0 } };
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak *t = long_table(ctx, &dl);
    mguard_weak_iter it;
    static int key;
    long v = 1;
    (void)state;
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    it = mguard_weak_iterate(t);
    mguard_weak_destroy(t);
    assert_int_equal(log.count, 0);
    assert_int_equal(dl.calls, 1);
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_EINVAL);
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_set", (void *)t);
    assert_null(mguard_weak_get(t, &key));
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_get", (void *)t);
    assert_false(mguard_weak_contains(t, &key));
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_get", (void *)t);
    assert_int_equal(mguard_weak_remove(t, &key), MGUARD_EINVAL);
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_remove", (void *)t);
    assert_int_equal(mguard_weak_count(t), 0);
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_count", (void *)t);
    mguard_weak_clear(t);
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_clear", (void *)t);
    mguard_weak_destroy(t);
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_destroy", (void *)t);
    assert_false(mguard_weak_next(&it));
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_next", (void *)t);
    assert_false(mguard_weak_next(&it));        /* the iterator is spent: silent */
    assert_int_equal(log.count, 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_table_used_after_its_context_is_destroyed_is_caught(void **state)
{
    test_log la, lb;
    mguard_ctx *a = test_ctx(&la, NULL), *b = test_ctx(&lb, NULL);
    mguard_weak *t = long_table(a, NULL);
    static int key;
    long v = 1;
    (void)state;
    mguard_ctx_destroy(a);
    /* reported through the contexts that are still alive */
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_EINVAL);
    EXPECT_LOG(lb, NOT_A_TABLE, "mguard_weak_set", (void *)t);
    mguard_on_destroy(a, &key);
    EXPECT_LOG(lb, NOT_A_CTX, "mguard_on_destroy", (void *)a);
    assert_int_equal(mguard_watch(a, &key, &key, NULL, NULL), MGUARD_EINVAL);
    EXPECT_LOG(lb, NOT_A_CTX, "mguard_watch", (void *)a);
    mguard_ctx_destroy(a);
    EXPECT_LOG(lb, NOT_A_CTX, "mguard_ctx_destroy", (void *)a);
    assert_int_equal(la.count, 0);
    mguard_ctx_destroy(b);
}

static void test_live_handles_pass_and_foreign_ones_are_named(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak *t = long_table(ctx, NULL);
    mguard_weak *wrong = (mguard_weak *)(void *)ctx;
    static int key;
    long v = 3;
    (void)state;
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    assert_int_equal(*MGUARD_WEAK_GET(t, &key, long), 3);
    assert_int_equal(log.count, 0);
    assert_int_equal(mguard_weak_count(wrong), 0);
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_count", (void *)wrong);
    assert_int_equal(mguard_ctx_object_count((mguard_ctx *)(void *)t), 0);
    EXPECT_LOG(log, NOT_A_CTX, "mguard_ctx_object_count", (void *)t);
    mguard_ctx_destroy(ctx);
}

/* A table destroyed while a walk of it is running stays a live handle
   until the walk ends (the documented deferred destroy). */
typedef struct deferred { mguard_weak *t; mguard_status set; size_t count; int calls; } deferred;

static void dtor_destroys_own_table(void *value, void *user)
{
    deferred *d = (deferred *)user;
    static int late;
    long v = 9;
    (void)value;
    if (d->calls++) return;
    mguard_weak_destroy(d->t);
    d->set = mguard_weak_set(d->t, &late, &v);
    d->count = mguard_weak_count(d->t);
}

static void test_destroy_deferred_by_a_clear_keeps_the_handle_until_it_ends(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak_desc wd;
    deferred d;
    static int k[3];
    long v = 1;
    int i;
    (void)state;
    memset(&d, 0, sizeof d);
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof v;
    wd.value_dtor = dtor_destroys_own_table;
    wd.user = &d;
    d.t = mguard_weak_create(ctx, &wd);
    for (i = 0; i < 3; i++) mguard_weak_set(d.t, &k[i], &v);
    mguard_weak_clear(d.t);
    assert_int_equal(d.calls, 3);
    assert_int_equal(d.set, MGUARD_EINVAL);          /* refused, but the handle is live */
    assert_int_equal(d.count, 2);
    EXPECT_LOG(log, "mguard_weak_set: table is being destroyed");
    assert_int_equal(mguard_weak_count(d.t), 0);     /* now it is gone */
    EXPECT_LOG(log, NOT_A_TABLE, "mguard_weak_count", (void *)d.t);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_registry_stays_consistent_over_many_tables(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak *t[100];
    uint64_t rng = 42;
    int i, live = 100;
    (void)state;
    for (i = 0; i < 100; i++) assert_non_null(t[i] = long_table(ctx, NULL));
    while (live) {
        int k = (int)(fz_rand(&rng) % (uint64_t)live);
        mguard_weak_destroy(t[k]);
        t[k] = t[--live];
        assert_ctx_ok(ctx);
        for (i = 0; i < live; i++) assert_int_equal(mguard_weak_count(t[i]), 0);
    }
    assert_int_equal(log.count, 0);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_debug_build_agrees_with_model(void **state)
{
    uint64_t seed;
    unsigned char buf[1024];
    (void)state;
    for (seed = 1; seed <= 400; seed++) {
        uint64_t rng = seed * 0x9E3779B97F4A7C15ull;
        size_t i, len = 2 + 40 + (size_t)(fz_rand(&rng) % 500);
        char label[64];
        for (i = 0; i < len; i++) buf[i] = (unsigned char)fz_rand(&rng);
        snprintf(label, sizeof label, "debug seed %lu", (unsigned long)seed);
        fz_run_input(buf, len, label, NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_used_after_destroy_is_caught),
        cmocka_unit_test(test_table_used_after_its_context_is_destroyed_is_caught),
        cmocka_unit_test(test_live_handles_pass_and_foreign_ones_are_named),
        cmocka_unit_test(test_destroy_deferred_by_a_clear_keeps_the_handle_until_it_ends),
        cmocka_unit_test(test_registry_stays_consistent_over_many_tables),
        cmocka_unit_test(test_debug_build_agrees_with_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
