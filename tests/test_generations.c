/* Generation tags and dynamic classes, with the reference's semantics
   (GenerationTracker in torch/_dynamo/mutation_guard.py). */
#include "common.h"

static void test_untagged_object_has_generation_minus_one(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj;
    (void)state;
    assert_int_equal(mguard_gen_current(ctx), 0);
    assert_int_equal(mguard_gen_get(ctx, &obj), -1);
    assert_false(mguard_gen_is_current(ctx, &obj));
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    mguard_ctx_destroy(ctx);
}

static void test_objects_made_after_advance_are_dynamic(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int old_obj, new_obj, cls;
    (void)state;
    assert_int_equal(mguard_gen_tag(ctx, &old_obj), MGUARD_OK);
    assert_int_equal(mguard_gen_get(ctx, &old_obj), 0);
    assert_true(mguard_gen_is_current(ctx, &old_obj));    /* tagged in the current generation */
    assert_int_equal(mguard_gen_advance(ctx), 1);
    assert_int_equal(mguard_gen_current(ctx), 1);
    assert_false(mguard_gen_is_current(ctx, &old_obj));
    assert_int_equal(mguard_gen_tag(ctx, &new_obj), MGUARD_OK);
    assert_int_equal(mguard_gen_get(ctx, &new_obj), 1);
    assert_true(mguard_gen_is_current(ctx, &new_obj));
    assert_true(mguard_gen_is_dynamic(ctx, &new_obj, &cls));
    assert_false(mguard_gen_is_dynamic(ctx, &old_obj, &cls));
    assert_int_equal(mguard_gen_advance(ctx), 2);
    assert_false(mguard_gen_is_dynamic(ctx, &new_obj, &cls));
    mguard_ctx_destroy(ctx);
}

static void test_retag_moves_object_to_current_generation(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj;
    (void)state;
    mguard_gen_tag(ctx, &obj);
    mguard_gen_advance(ctx);
    mguard_gen_advance(ctx);
    mguard_gen_tag(ctx, &obj);   /* like the reference's __setstate__ re-tag */
    assert_int_equal(mguard_gen_get(ctx, &obj), 2);
    assert_true(mguard_gen_is_current(ctx, &obj));
    mguard_ctx_destroy(ctx);
}

static void test_dynamic_class_makes_every_instance_dynamic(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int cls, other_cls, obj;
    (void)state;
    assert_false(mguard_gen_is_class_dynamic(ctx, &cls));
    assert_int_equal(mguard_gen_mark_class_dynamic(ctx, &cls), MGUARD_OK);
    assert_true(mguard_gen_is_class_dynamic(ctx, &cls));
    assert_false(mguard_gen_is_class_dynamic(ctx, &other_cls));
    assert_true(mguard_gen_is_dynamic(ctx, &obj, &cls));        /* untagged obj */
    assert_false(mguard_gen_is_dynamic(ctx, &obj, &other_cls));
    assert_false(mguard_gen_is_dynamic(ctx, &obj, NULL));
    mguard_ctx_destroy(ctx);
}

static void test_clear_resets_generation_tags_and_marks(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int cls, obj, watched, guard;
    (void)state;
    mguard_gen_tag(ctx, &obj);
    mguard_gen_mark_class_dynamic(ctx, &cls);
    mguard_gen_advance(ctx);
    mguard_gen_advance(ctx);
    mguard_gen_tag(ctx, &watched);
    assert_int_equal(mguard_watch(ctx, &watched, &guard, NULL, NULL), MGUARD_EINVAL);
    mguard_gen_clear(ctx);
    assert_int_equal(mguard_gen_current(ctx), 0);
    assert_int_equal(mguard_gen_get(ctx, &obj), -1);
    assert_int_equal(mguard_gen_get(ctx, &watched), -1);
    assert_false(mguard_gen_is_current(ctx, &obj));
    assert_false(mguard_gen_is_class_dynamic(ctx, &cls));
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    assert_ctx_ok(ctx);
    /* tagging after clear starts again at generation 0 */
    mguard_gen_tag(ctx, &obj);
    assert_true(mguard_gen_is_current(ctx, &obj));
    mguard_ctx_destroy(ctx);
}

static void test_death_forgets_tag_and_mark(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static long slot;
    (void)state;
    mguard_gen_tag(ctx, &slot);
    mguard_gen_mark_class_dynamic(ctx, &slot);
    mguard_on_destroy(ctx, &slot);
    /* a new object at the same address is untagged and not a dynamic class */
    assert_int_equal(mguard_gen_get(ctx, &slot), -1);
    assert_false(mguard_gen_is_class_dynamic(ctx, &slot));
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    mguard_ctx_destroy(ctx);
}

static void test_gen_bad_input_and_out_of_memory(void **state)
{
    test_log log;
    test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    static int obj;
    (void)state;
    assert_int_equal(mguard_gen_tag(NULL, &obj), MGUARD_EINVAL);
    assert_int_equal(mguard_gen_tag(ctx, NULL), MGUARD_EINVAL);
    assert_string_equal(log.last, "mguard_gen_tag: NULL object");
    assert_int_equal(mguard_gen_mark_class_dynamic(ctx, NULL), MGUARD_EINVAL);
    assert_string_equal(log.last, "mguard_gen_mark_class_dynamic: NULL object");
    assert_int_equal(mguard_gen_get(NULL, &obj), -1);
    assert_int_equal(mguard_gen_get(ctx, NULL), -1);
    assert_false(mguard_gen_is_current(NULL, &obj));
    assert_int_equal(mguard_gen_current(NULL), -1);
    assert_int_equal(mguard_gen_advance(NULL), -1);
    assert_false(mguard_gen_is_class_dynamic(NULL, &obj));
    assert_false(mguard_gen_is_dynamic(NULL, &obj, &obj));
    mguard_gen_clear(NULL);
    al.fail_at = al.calls + 1;
    assert_int_equal(mguard_gen_tag(ctx, &obj), MGUARD_ENOMEM);
    assert_string_equal(log.last, "mguard_gen_tag: out of memory");
    assert_int_equal(mguard_gen_get(ctx, &obj), -1);
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untagged_object_has_generation_minus_one),
        cmocka_unit_test(test_objects_made_after_advance_are_dynamic),
        cmocka_unit_test(test_retag_moves_object_to_current_generation),
        cmocka_unit_test(test_dynamic_class_makes_every_instance_dynamic),
        cmocka_unit_test(test_clear_resets_generation_tags_and_marks),
        cmocka_unit_test(test_death_forgets_tag_and_mark),
        cmocka_unit_test(test_gen_bad_input_and_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
