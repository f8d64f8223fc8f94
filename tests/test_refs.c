/* Weak refs: read the object while it lives, NULL after its death, and
   never revive when a new object takes the same address. */
#include "common.h"

static void test_ref_reads_object_until_death(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj;
    mguard_ref r = mguard_ref_make(ctx, &obj);
    (void)state;
    assert_false(mguard_ref_is_null(r));
    assert_ptr_equal(mguard_ref_get(ctx, r), &obj);
    assert_ptr_equal(mguard_ref_get(ctx, r), &obj);
    mguard_on_destroy(ctx, &obj);
    assert_null(mguard_ref_get(ctx, r));
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    mguard_ctx_destroy(ctx);
}

static void test_ref_stays_null_after_address_reuse(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static long slot;
    mguard_ref old, fresh;
    mguard_weak_desc d = {sizeof(int), NULL, NULL, NULL};
    mguard_weak *t = mguard_weak_create(ctx, &d);
    int v = 1;
    (void)state;
    old = mguard_ref_make(ctx, &slot);
    mguard_on_destroy(ctx, &slot);
    /* a new object in the same slot, known to mguard through a table */
    assert_int_equal(mguard_weak_set(t, &slot, &v), MGUARD_OK);
    assert_null(mguard_ref_get(ctx, old));
    fresh = mguard_ref_make(ctx, &slot);
    assert_ptr_equal(mguard_ref_get(ctx, fresh), &slot);
    assert_null(mguard_ref_get(ctx, old));
    assert_true(fresh.serial_ != old.serial_);
    mguard_ctx_destroy(ctx);
}

static void test_two_refs_to_one_object_share_fate(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj;
    mguard_ref a = mguard_ref_make(ctx, &obj), b = mguard_ref_make(ctx, &obj);
    (void)state;
    assert_true(a.serial_ == b.serial_);
    mguard_on_destroy(ctx, &obj);
    assert_null(mguard_ref_get(ctx, a));
    assert_null(mguard_ref_get(ctx, b));
    mguard_ctx_destroy(ctx);
}

static void test_ref_from_another_context_reads_null(void **state)
{
    test_log log1, log2;
    mguard_ctx *c1 = test_ctx(&log1, NULL);
    mguard_ctx *c2 = test_ctx(&log2, NULL);
    static int obj;
    mguard_ref r = mguard_ref_make(c1, &obj);
    (void)state;
    mguard_ref_make(c2, &obj);
    assert_null(mguard_ref_get(c2, r));
    assert_int_equal(log2.warnings, 1);
    assert_string_equal(log2.last, "mguard_ref_get: ref belongs to another context");
    assert_ptr_equal(mguard_ref_get(c1, r), &obj);
    mguard_ctx_destroy(c1);
    mguard_ctx_destroy(c2);
}

static void test_ref_bad_input(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj;
    mguard_ref null_ref = {NULL, 0, 0};
    mguard_ref r;
    (void)state;
    r = mguard_ref_make(NULL, &obj);
    assert_true(mguard_ref_is_null(r));
    r = mguard_ref_make(ctx, NULL);
    assert_true(mguard_ref_is_null(r));
    assert_null(mguard_ref_get(ctx, r));
    assert_null(mguard_ref_get(ctx, null_ref));
    assert_null(mguard_ref_get(NULL, mguard_ref_make(ctx, &obj)));
    assert_int_equal(log.count, 0);
    mguard_ctx_destroy(ctx);
}

static void test_ref_make_out_of_memory_returns_null_ref(void **state)
{
    test_log log;
    test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    static int obj;
    mguard_ref r;
    (void)state;
    al.fail_at = al.calls + 1;    /* the registry's first allocation */
    r = mguard_ref_make(ctx, &obj);
    assert_true(mguard_ref_is_null(r));
    assert_int_equal(log.errors, 1);
    assert_string_equal(log.last, "mguard_ref_make: out of memory");
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    assert_ctx_ok(ctx);
    r = mguard_ref_make(ctx, &obj);   /* works again */
    assert_ptr_equal(mguard_ref_get(ctx, r), &obj);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ref_reads_object_until_death),
        cmocka_unit_test(test_ref_stays_null_after_address_reuse),
        cmocka_unit_test(test_two_refs_to_one_object_share_fate),
        cmocka_unit_test(test_ref_from_another_context_reads_null),
        cmocka_unit_test(test_ref_bad_input),
        cmocka_unit_test(test_ref_make_out_of_memory_returns_null_ref),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
