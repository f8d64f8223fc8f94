/* Regression tests for core bugs found by the differential fuzzer and the
   fault-injection runs (docs/reliability.md lists them). Each test is the
   smallest program that showed the bug, named after the behaviour it
   checks. */
#include "common.h"

/* Records moved when the registry grew, but a record with at most two
   tables pointed at its own inline array: after the move that pointer
   dangled (heap-use-after-free in mguard_on_destroy, a free() of a
   non-heap pointer in mguard_ctx_destroy). */
static void test_keys_survive_registry_growth(void **state)
{
    test_log log; test_alloc al; dtor_log dl;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d;
    mguard_weak *t;
    static int keys[40];
    long v;
    int i;
    (void)state;
    memset(&dl, 0, sizeof dl);
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.value_dtor = dtor_count_long;
    d.user = &dl;
    t = mguard_weak_create(ctx, &d);
    for (i = 0; i < 40; i++) {
        v = i;
        assert_int_equal(mguard_weak_set(t, &keys[i], &v), MGUARD_OK);
    }
    assert_ctx_ok(ctx);
    mguard_on_destroy(ctx, &keys[0]);
    assert_int_equal(dl.calls, 1);
    assert_int_equal(dl.seen[0], 0);
    assert_int_equal(mguard_weak_count(t), 39);
    assert_int_equal(mguard_ctx_object_count(ctx), 39);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(dl.calls, 40);
    assert_int_equal(al.live_blocks, 0);
    assert_int_equal(log.count, 0);
}

static void inval_count(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr;
    (*(int *)user)++;
}

/* mguard_unwatch matched watchers by the guard's address alone: after the
   guard was destroyed (its watchers dead: never called, not counted), a
   new object at the same address was told OK, and whether it was depended
   on the watcher list's capacity (dead watchers are pruned when it
   grows). */
static void test_unwatch_ignores_watchers_of_a_destroyed_guard(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj, guard;
    int calls = 0;
    (void)state;
    assert_int_equal(mguard_watch(ctx, &obj, &guard, inval_count, &calls), MGUARD_OK);
    mguard_on_destroy(ctx, &guard);
    assert_int_equal(mguard_watcher_count(ctx, &obj), 0);
    assert_int_equal(mguard_unwatch(ctx, &obj, &guard), MGUARD_NOT_FOUND);
    /* the new object at &guard watches and unwatches normally */
    assert_int_equal(mguard_watch(ctx, &obj, &guard, inval_count, &calls), MGUARD_OK);
    assert_int_equal(mguard_unwatch(ctx, &obj, &guard), MGUARD_OK);
    mguard_on_mutation(ctx, &obj, "x");
    assert_int_equal(calls, 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_survive_registry_growth),
        cmocka_unit_test(test_unwatch_ignores_watchers_of_a_destroyed_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
