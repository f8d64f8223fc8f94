/* Generation tags and dynamic classes, with the reference's semantics
   (GenerationTracker in torch/_dynamo/mutation_guard.py). */
#include <limits.h>
#include "common.h"

static void test_untagged_object_has_generation_minus_one(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj;
    (void)state;
    assert_int_equal(mguard_gen_current(ctx), 0);
    assert_int_equal(mguard_gen_get(ctx, &obj), -1);
    assert_false(mguard_gen_is_dynamic(ctx, &obj, NULL));
    assert_int_equal(mgt_objects(ctx), 0);
    mguard_ctx_destroy(ctx);
}

static void test_objects_made_after_advance_are_dynamic(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int old_obj, new_obj, cls;
    (void)state;
    assert_int_equal(mguard_gen_tag(ctx, &old_obj), MGUARD_OK);
    assert_int_equal(mguard_gen_get(ctx, &old_obj), 0);
    assert_true(mguard_gen_is_dynamic(ctx, &old_obj, NULL));    /* tagged in the current generation */
    assert_true(mguard_gen_is_since(ctx, &old_obj, mguard_gen_current(ctx)));   /* the same question */
    assert_int_equal(mguard_gen_advance(ctx), 1);
    assert_int_equal(mguard_gen_current(ctx), 1);
    assert_false(mguard_gen_is_dynamic(ctx, &old_obj, NULL));
    assert_int_equal(mguard_gen_tag(ctx, &new_obj), MGUARD_OK);
    assert_int_equal(mguard_gen_get(ctx, &new_obj), 1);
    assert_true(mguard_gen_is_dynamic(ctx, &new_obj, NULL));
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
    assert_true(mguard_gen_is_dynamic(ctx, &obj, NULL));
    mguard_ctx_destroy(ctx);
}

static void test_dynamic_class_makes_every_instance_dynamic(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int cls, other_cls, obj;
    (void)state;
    assert_false(mguard_gen_is_dynamic(ctx, NULL, &cls));
    assert_int_equal(mguard_gen_mark_class_dynamic(ctx, &cls), MGUARD_OK);
    assert_true(mguard_gen_is_dynamic(ctx, NULL, &cls));
    assert_false(mguard_gen_is_dynamic(ctx, NULL, &other_cls));
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
    assert_false(mguard_gen_is_dynamic(ctx, &obj, NULL));
    assert_false(mguard_gen_is_dynamic(ctx, NULL, &cls));
    assert_int_equal(mgt_objects(ctx), 0);
    assert_ctx_ok(ctx);
    /* tagging after clear starts again at generation 0 */
    mguard_gen_tag(ctx, &obj);
    assert_true(mguard_gen_is_dynamic(ctx, &obj, NULL));
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
    assert_false(mguard_gen_is_dynamic(ctx, NULL, &slot));
    assert_int_equal(mgt_objects(ctx), 0);
    mguard_ctx_destroy(ctx);
}

/* Several plans, each remembering the generation it was built in: an
   object is new to a plan when it was tagged in that generation or later. */
static void test_is_since_compares_with_any_generation(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int a, b, c, never;
    long plan1, plan2;
    (void)state;
    mguard_gen_tag(ctx, &a);                  /* generation 0 */
    plan1 = mguard_gen_advance(ctx);          /* plan 1 built; new objects from 1 */
    mguard_gen_tag(ctx, &b);                  /* generation 1 */
    plan2 = mguard_gen_advance(ctx);          /* plan 2 built; new objects from 2 */
    mguard_gen_tag(ctx, &c);                  /* generation 2 */
    assert_int_equal(plan1, 1);
    assert_int_equal(plan2, 2);
    assert_false(mguard_gen_is_since(ctx, &a, plan1));
    assert_true(mguard_gen_is_since(ctx, &b, plan1));
    assert_true(mguard_gen_is_since(ctx, &c, plan1));
    assert_false(mguard_gen_is_since(ctx, &b, plan2));
    assert_true(mguard_gen_is_since(ctx, &c, plan2));
    assert_true(mguard_gen_is_since(ctx, &a, 0));
    assert_false(mguard_gen_is_since(ctx, &c, 3));
    assert_false(mguard_gen_is_since(ctx, &never, 0));   /* untagged: old */
    assert_false(mguard_gen_is_since(NULL, &a, 0));
    assert_false(mguard_gen_is_since(ctx, NULL, 0));
    assert_int_equal(mgt_objects(ctx), 3);    /* questions add nothing */
    mguard_ctx_destroy(ctx);
}

/* A strict context counts an object never tagged as dynamic and reports
   the first one: a constructor that forgot mguard_gen_tag is caught. */
static void test_strict_context_counts_an_untagged_object_as_dynamic(void **state)
{
    test_log log;
    mguard_ctx_desc d;
    mguard_ctx *ctx;
    static int tagged, forgot, forgot2, cls;
    (void)state;
    memset(&log, 0, sizeof log);
    memset(&d, 0, sizeof d);
    d.logger.func = test_log_fn;
    d.logger.user = &log;
    d.strict_generations = true;
    ctx = mguard_ctx_create(&d);
    assert_non_null(ctx);
    mguard_gen_tag(ctx, &tagged);
    mguard_gen_advance(ctx);
    assert_false(mguard_gen_is_dynamic(ctx, &tagged, NULL));   /* tagged and old: old */
    assert_int_equal(log.warnings, 0);
    assert_true(mguard_gen_is_dynamic(ctx, &forgot, NULL));    /* never tagged: dynamic */
    assert_int_equal(log.warnings, 1);
    assert_int_equal(log.code, MGUARD_LOG_GEN_UNTAGGED);
    assert_true(mguard_gen_is_dynamic(ctx, &forgot2, &cls));
    assert_true(mguard_gen_is_since(ctx, &forgot2, 7));
    assert_int_equal(log.warnings, 1);                    /* once per context */
    assert_int_equal(mguard_gen_get(ctx, &forgot), -1);   /* still untagged */
    assert_int_equal(mgt_objects(ctx), 1);
    assert_false(mguard_gen_is_dynamic(ctx, NULL, NULL));
    mguard_ctx_destroy(ctx);
    /* the default: untagged counts as old, silently */
    ctx = test_ctx(&log, NULL);
    assert_false(mguard_gen_is_dynamic(ctx, &forgot, &cls));
    assert_int_equal(log.warnings, 0);
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
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_gen_mark_class_dynamic(ctx, NULL), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_gen_get(NULL, &obj), -1);
    assert_int_equal(mguard_gen_get(ctx, NULL), -1);
    assert_false(mguard_gen_is_dynamic(NULL, &obj, NULL));
    assert_int_equal(mguard_gen_current(NULL), -1);
    assert_int_equal(mguard_gen_advance(NULL), -1);
    assert_false(mguard_gen_is_dynamic(NULL, NULL, &obj));
    assert_false(mguard_gen_is_dynamic(NULL, &obj, &obj));
    mguard_gen_clear(NULL);
    al.fail_at = al.calls + 1;
    assert_int_equal(mguard_gen_tag(ctx, &obj), MGUARD_ENOMEM);
    assert_int_equal(log.code, MGUARD_LOG_NOMEM);
    assert_int_equal(mguard_gen_get(ctx, &obj), -1);
    assert_int_equal(mgt_objects(ctx), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* The generation stops at LONG_MAX (2^31 - 1 advances where long is 32
   bits), logged at each advance refused; tags and comparisons hold there. */
static void test_the_generation_stops_at_its_limit(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int old, young;
    (void)state;
    mgt_gen_set(ctx, LONG_MAX - 1);
    assert_int_equal(mguard_gen_tag(ctx, &old), MGUARD_OK);
    assert_true(mguard_gen_advance(ctx) == LONG_MAX);
    EXPECT_NO_LOG(log);
    assert_int_equal(mguard_gen_tag(ctx, &young), MGUARD_OK);
    assert_true(mguard_gen_advance(ctx) == LONG_MAX);
    EXPECT_LOG_TEXT(log, log.warnings, MGUARD_LOG_GEN_LIMIT, "mguard_gen_advance: the generation is at its limit, LONG_MAX; it stays there");
    assert_true(mguard_gen_advance(ctx) == LONG_MAX);
    assert_int_equal(log.warnings, 1);
    assert_true(mguard_gen_current(ctx) == LONG_MAX);
    assert_true(mguard_gen_get(ctx, &old) == LONG_MAX - 1);
    assert_true(mguard_gen_get(ctx, &young) == LONG_MAX);
    assert_false(mguard_gen_is_dynamic(ctx, &old, NULL));
    assert_true(mguard_gen_is_dynamic(ctx, &young, NULL));
    mguard_gen_clear(ctx);
    assert_int_equal(mguard_gen_advance(ctx), 1);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* The never-tagged warning names the object with the describe hook (issue 25). */
static void test_never_tagged_warning_names_the_object(void **state)
{
    test_log log;
    test_namer nm;
    mguard_ctx *ctx;
    static int forgot;
    (void)state;
    memset(&nm, 0, sizeof nm);
    test_namer_add(&nm, &forgot, "forgot");
    ctx = test_named_ctx(&log, &nm, true, NULL);
    assert_true(mguard_gen_is_since(ctx, &forgot, 3));
    EXPECT_LOG_TEXT(log, log.warnings, MGUARD_LOG_GEN_UNTAGGED, "mguard_gen_is_since: forgot was never tagged (mguard_gen_tag in its constructor?); "
               "counted as dynamic, as every untagged object on this strict context (reported once)");
    assert_int_equal(nm.calls, 1);
    mguard_ctx_destroy(ctx);
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
        cmocka_unit_test(test_is_since_compares_with_any_generation),
        cmocka_unit_test(test_strict_context_counts_an_untagged_object_as_dynamic),
        cmocka_unit_test(test_gen_bad_input_and_out_of_memory),
        cmocka_unit_test(test_never_tagged_warning_names_the_object),
        cmocka_unit_test(test_the_generation_stops_at_its_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
