/* The hot paths the benchmark tunes keep their meaning: records survive
   registry growth, a new key's value may come from inside the same table. */
#include "common.h"

/* Regression: a record's inline table list used to keep pointing into the
   old record array after the array was reallocated. */
static void test_keys_in_two_tables_survive_registry_growth(void **state)
{
    test_log log; test_alloc al; dtor_log dl = {0};
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d = {sizeof(long), dtor_count_long, NULL, &dl};
    mguard_weak *a = mguard_weak_create(ctx, &d), *b = mguard_weak_create(ctx, &d);
    static char keys[1000];
    long i;
    (void)state;
    for (i = 0; i < 1000; i++) {
        assert_int_equal(mguard_weak_set(a, &keys[i], &i), MGUARD_OK);
        assert_int_equal(mguard_weak_set(b, &keys[i], &i), MGUARD_OK);
    }
    assert_ctx_ok(ctx);
    for (i = 0; i < 1000; i += 2) mguard_on_destroy(ctx, &keys[i]);
    assert_int_equal(mguard_weak_count(a), 500);
    assert_int_equal(mguard_weak_count(b), 500);
    assert_int_equal(mguard_ctx_object_count(ctx), 500);
    assert_int_equal(dl.calls, 1000);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(dl.calls, 2000);
    assert_int_equal(al.live_blocks, 0);
    assert_int_equal(log.count, 0);
}

/* mguard_weak_set copies a value that lives inside the table itself (a
   pointer from mguard_weak_get) before the entries can move. */
static void test_set_new_key_from_a_value_inside_the_table(void **state)
{
    test_log log; test_alloc al; dtor_log dl = {0};
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d = {sizeof(long), dtor_count_long, NULL, &dl};
    mguard_weak *t = mguard_weak_create(ctx, &d);
    static char keys[100];
    long v = 7, i;
    (void)state;
    assert_int_equal(mguard_weak_set(t, &keys[0], &v), MGUARD_OK);
    for (i = 1; i < 100; i++)   /* grows the entries several times */
        assert_int_equal(mguard_weak_set(t, &keys[i], mguard_weak_get(t, &keys[i - 1])), MGUARD_OK);
    for (i = 0; i < 100; i++) assert_int_equal(*MGUARD_WEAK_GET(t, &keys[i], long), 7);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(dl.calls, 100);
    assert_int_equal(al.live_blocks, 0);
    assert_int_equal(log.count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_in_two_tables_survive_registry_growth),
        cmocka_unit_test(test_set_new_key_from_a_value_inside_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
