/* Weak refs: read the object while it lives, NULL after its death, and
   never revive when a new object takes the same address, nor read
   through another context (even one at the same address). */
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
    assert_int_equal(mgt_objects(ctx), 0);
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
    test_log la, lb;
    mguard_ctx *a = test_ctx(&la, NULL), *b = test_ctx(&lb, NULL);
    static int obj;
    mguard_ref ra = mguard_ref_make(a, &obj), rb = mguard_ref_make(b, &obj), forged;
    (void)state;
    assert_null(mguard_ref_get(b, ra));
    EXPECT_LOG(lb, lb.warnings, MGUARD_LOG_REF_FOREIGN);
    assert_ptr_equal(mguard_ref_get(a, ra), &obj);
    assert_ptr_equal(mguard_ref_get(b, rb), &obj);
    assert_null(mguard_ref_get(a, rb));
    EXPECT_LOG(la, la.warnings, MGUARD_LOG_REF_FOREIGN);
    forged = ra;
    forged.serial_ += 1;                      /* right context, no such life */
    assert_null(mguard_ref_get(a, forged));
    forged.serial_ = 0;                       /* the null ref */
    assert_null(mguard_ref_get(a, forged));
    EXPECT_NO_LOG(la);
    mguard_ctx_destroy(a);
    mguard_ctx_destroy(b);
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
    assert_int_equal(log.code, MGUARD_LOG_NOMEM);
    assert_int_equal(mgt_objects(ctx), 0);
    assert_ctx_ok(ctx);
    r = mguard_ref_make(ctx, &obj);   /* works again */
    assert_ptr_equal(mguard_ref_get(ctx, r), &obj);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* ---- refs across contexts -------------------------------------------- */

/* Issue 11, defect 3: a ref carried 16 bits of a hash of its context's
   address, so a ref of a destroyed context read its object through a new
   context at the same address, and among ~70 live contexts two drew the
   same tag. */

/* An allocator that hands a freed block straight back to the next request
   of any size up to its own (so a new context lands where the old one was,
   with or without ASan's quarantine). */
typedef struct reuse_alloc { void *kept; size_t kept_size; } reuse_alloc;
static void *reuse_realloc(void *p, size_t size, void *user)
{
    reuse_alloc *a = (reuse_alloc *)user;
    if (!p && a->kept && size <= a->kept_size) {
        p = a->kept;
        a->kept = NULL;
        return p;
    }
    return realloc(p, size);
}
static void reuse_free(void *p, void *user)
{
    reuse_alloc *a = (reuse_alloc *)user;
    free(a->kept);
    a->kept = p;
    a->kept_size = 8192;   /* the block mguard frees last is a context (about 4.7 KB: its log queue) */
}

static void test_ref_of_a_destroyed_context_reads_null_in_a_new_one_at_its_address(void **state)
{
    test_log log;
    reuse_alloc ra;
    mguard_ctx_desc d;
    static int obj;
    mguard_ctx *a, *b;
    mguard_ref old;
    (void)state;
    memset(&ra, 0, sizeof ra);
    memset(&log, 0, sizeof log);
    memset(&d, 0, sizeof d);
    d.allocator.realloc_fn = reuse_realloc;
    d.allocator.free_fn = reuse_free;
    d.allocator.user = &ra;
    d.logger.func = test_log_fn;
    d.logger.user = &log;
    a = mguard_ctx_create(&d);
    old = mguard_ref_make(a, &obj);
    mguard_ctx_destroy(a);
    b = mguard_ctx_create(&d);
    assert_ptr_equal(b, a);                 /* the same address */
    mguard_ref_make(b, &obj);               /* the first serial of the new context */
    assert_null(mguard_ref_get(b, old));
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_REF_FOREIGN);
    mguard_ctx_destroy(b);
    free(ra.kept);
}

static void test_refs_of_two_thousand_live_contexts_never_read_across(void **state)
{
    enum { N = 2000 };
    static mguard_ctx *ctxs[N];
    static mguard_ref refs[N];
    static int obj;
    size_t i, j, foreign = 0, read = 0;
    mguard_ctx_desc d;
    (void)state;
    memset(&d, 0, sizeof d);
    d.quiet = true;
    for (i = 0; i < N; i++) {
        ctxs[i] = mguard_ctx_create(&d);
        assert_non_null(ctxs[i]);
        refs[i] = mguard_ref_make(ctxs[i], &obj);   /* serial 1 in every context */
    }
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            void *p = mguard_ref_get(ctxs[i], refs[j]);
            if (i == j) read += p == &obj;
            else foreign += p == NULL;
        }
    assert_int_equal(read, N);
    assert_int_equal(foreign, (size_t)N * (N - 1));
    for (i = 0; i < N; i++) mguard_ctx_destroy(ctxs[i]);
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
        cmocka_unit_test(test_ref_of_a_destroyed_context_reads_null_in_a_new_one_at_its_address),
        cmocka_unit_test(test_refs_of_two_thousand_live_contexts_never_read_across),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
