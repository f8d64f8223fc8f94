#include "common.h"
static void test_smoke(void **state)
{
    test_log log; test_alloc al; dtor_log dl = {0};
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d = {sizeof(long), dtor_count_long, NULL, &dl};
    mguard_weak *t = mguard_weak_create(ctx, &d);
    int a, b;
    long v = 1;
    (void)state;
    assert_int_equal(mguard_weak_set(t, &a, &v), MGUARD_OK);
    v = 2;
    assert_int_equal(mguard_weak_set(t, &b, &v), MGUARD_OK);
    assert_int_equal(*MGUARD_WEAK_GET(t, &a, long), 1);
    mguard_on_destroy(ctx, &a);
    assert_null(mguard_weak_get(t, &a));
    assert_int_equal(dl.calls, 1);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(dl.calls, 2);
    assert_int_equal(al.live_blocks, 0);
}
int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_smoke) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
