/* Misuse: every bad input gets its documented answer and, where the
   program could not see the problem otherwise, exactly one log line; never
   a crash. docs/reliability.md has the same cases as a table. Handles used
   after they were destroyed are the program's error in a plain build
   (reading them reads freed memory); tests/test_debug.c shows MGUARD_DEBUG
   catching them. */
#include "common.h"

static char expect_buf[512];
#define EXPECT_LOG(log, level_count, ...) do { \
        snprintf(expect_buf, sizeof expect_buf, __VA_ARGS__); \
        assert_int_equal((log).count, 1); \
        assert_int_equal((level_count), 1); \
        assert_string_equal((log).last, expect_buf); \
        memset(&(log), 0, sizeof (log)); \
    } while (0)
#define EXPECT_NO_LOG(log) assert_int_equal((log).count, 0)

static mguard_weak *long_table(mguard_ctx *ctx, dtor_log *dl)
{
    mguard_weak_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.value_dtor = dl ? dtor_count_long : NULL;
    d.user = dl;
    return mguard_weak_create(ctx, &d);
}

static void inval_nop(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
}

/* ---- context --------------------------------------------------------- */

static void test_allocator_with_one_function_is_refused(void **state)
{
    test_log log;
    mguard_ctx_desc d;
    (void)state;
    memset(&log, 0, sizeof log);
    memset(&d, 0, sizeof d);
    d.allocator.realloc_fn = fa_realloc;
    d.logger.func = test_log_fn;
    d.logger.user = &log;
    assert_null(mguard_ctx_create(&d));
    EXPECT_LOG(log, log.errors, "mguard_ctx_create: the allocator needs both realloc_fn and free_fn");
}

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
    assert_int_equal(mguard_ctx_object_count(NULL), 0);
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
    assert_false(mguard_gen_is_current(NULL, &obj));
    assert_int_equal(mguard_gen_current(NULL), -1);
    assert_int_equal(mguard_gen_advance(NULL), -1);
    assert_int_equal(mguard_gen_mark_class_dynamic(NULL, &cls), MGUARD_EINVAL);
    assert_false(mguard_gen_is_class_dynamic(NULL, &cls));
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
    assert_int_equal(mguard_ctx_object_count(wrong), 0);
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
    assert_int_equal(mguard_weak_remove(t, &key), MGUARD_OK);
    assert_int_equal(x.calls, 1);
    EXPECT_LOG(log, log.warnings, "mguard_ctx_destroy: refused inside one of the context's own callbacks");
    assert_ctx_ok(x.ctx);                      /* still alive and whole */
    mguard_ctx_destroy(x.ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_status_str_of_unknown_status(void **state)
{
    (void)state;
    assert_string_equal(mguard_status_str(MGUARD_EINVAL), "MGUARD_EINVAL");
    assert_string_equal(mguard_status_str((mguard_status)99), "unknown status");
    assert_string_equal(mguard_status_str((mguard_status)-1), "unknown status");
}

/* ---- weak tables ----------------------------------------------------- */

static void test_weak_create_refuses_bad_descs(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak_desc d;
    (void)state;
    memset(&d, 0, sizeof d);
    assert_null(mguard_weak_create(ctx, NULL));
    EXPECT_LOG(log, log.warnings, "mguard_weak_create: NULL desc");
    assert_null(mguard_weak_create(ctx, &d));
    EXPECT_LOG(log, log.warnings, "mguard_weak_create: value_size must be 1..16M bytes");
    d.value_size = ((size_t)1 << 24) + 1;
    assert_null(mguard_weak_create(ctx, &d));
    EXPECT_LOG(log, log.warnings, "mguard_weak_create: value_size must be 1..16M bytes");
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    mguard_ctx_destroy(ctx);
}

static void test_null_table_is_refused_everywhere(void **state)
{
    static int key;
    long v = 1;
    mguard_weak_iter it;
    (void)state;
    assert_int_equal(mguard_weak_set(NULL, &key, &v), MGUARD_EINVAL);
    assert_null(mguard_weak_get(NULL, &key));
    assert_false(mguard_weak_contains(NULL, &key));
    assert_int_equal(mguard_weak_remove(NULL, &key), MGUARD_EINVAL);
    assert_int_equal(mguard_weak_count(NULL), 0);
    mguard_weak_clear(NULL);
    mguard_weak_destroy(NULL);
    assert_int_equal(mguard_weak_set_ptr(NULL, &key, &v), MGUARD_EINVAL);
    assert_null(mguard_weak_get_ptr(NULL, &key));
    it = mguard_weak_iterate(NULL);
    assert_false(mguard_weak_next(&it));
    assert_false(mguard_weak_next(NULL));
}

static void test_a_context_handle_is_not_a_table(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak *wrong = (mguard_weak *)(void *)ctx;
    mguard_weak_iter it;
    static int key;
    long v = 1;
    (void)state;
    assert_int_equal(mguard_weak_set(wrong, &key, &v), MGUARD_EINVAL);
    assert_null(mguard_weak_get(wrong, &key));
    assert_int_equal(mguard_weak_remove(wrong, &key), MGUARD_EINVAL);
    assert_int_equal(mguard_weak_count(wrong), 0);
    mguard_weak_clear(wrong);
    mguard_weak_destroy(wrong);
    it = mguard_weak_iterate(wrong);
    assert_false(mguard_weak_next(&it));
    EXPECT_NO_LOG(log);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_null_key_and_value_are_refused(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak *t = long_table(ctx, NULL);
    static int key;
    long v = 1;
    (void)state;
    assert_int_equal(mguard_weak_set(t, NULL, &v), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_weak_set: NULL key");
    assert_int_equal(mguard_weak_set(t, &key, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_weak_set: NULL value");
    assert_int_equal(mguard_weak_remove(t, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_weak_remove: NULL key");
    assert_null(mguard_weak_get(t, NULL));
    assert_false(mguard_weak_contains(t, NULL));
    assert_int_equal(mguard_weak_remove(t, &key), MGUARD_NOT_FOUND);
    EXPECT_NO_LOG(log);
    assert_int_equal(mguard_weak_count(t), 0);
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    mguard_ctx_destroy(ctx);
}

static void test_pointer_helpers_on_a_table_of_other_values(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak_desc d;
    mguard_weak *t;
    static int key;
    char v[16] = "sixteen bytes..";
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = 16;
    t = mguard_weak_create(ctx, &d);
    assert_int_equal(mguard_weak_set_ptr(t, &key, &key), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_weak_set_ptr: table value_size is 16, not sizeof(void *)");
    assert_int_equal(mguard_weak_set(t, &key, v), MGUARD_OK);
    assert_null(mguard_weak_get_ptr(t, &key));   /* not a pointer table: NULL, not 8 of the 16 bytes */
    EXPECT_NO_LOG(log);
    mguard_ctx_destroy(ctx);
}

typedef struct table_reentry { mguard_weak *t; int calls; mguard_status set_status; } table_reentry;
static int other_key;

static void dtor_reenters_table(void *value, void *user)
{
    table_reentry *x = (table_reentry *)user;
    long v = 7;
    (void)value;
    if (x->calls++ == 0) {
        x->set_status = mguard_weak_set(x->t, &other_key, &v);
        mguard_weak_destroy(x->t);
    }
}

static void test_table_being_destroyed_refuses_set_and_second_destroy(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d;
    table_reentry x;
    static int k1, k2;
    long v = 1;
    char want[512];
    (void)state;
    memset(&x, 0, sizeof x);
    memset(&d, 0, sizeof d);
    d.value_size = sizeof v;
    d.value_dtor = dtor_reenters_table;
    d.user = &x;
    x.t = mguard_weak_create(ctx, &d);
    assert_int_equal(mguard_weak_set(x.t, &k1, &v), MGUARD_OK);
    assert_int_equal(mguard_weak_set(x.t, &k2, &v), MGUARD_OK);
    snprintf(want, sizeof want, "mguard_weak_destroy: table %p is already being destroyed", (void *)x.t);
    mguard_weak_destroy(x.t);
    assert_int_equal(x.calls, 2);
    assert_int_equal(x.set_status, MGUARD_EINVAL);
    assert_int_equal(log.count, 2);
    assert_int_equal(log.warnings, 2);
    assert_string_equal(log.last, want);   /* after "mguard_weak_set: table is being destroyed" */
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_iterator_keeps_its_place_when_the_table_changes(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak *t = long_table(ctx, NULL);
    static int k[64];
    long v, seen[128];
    int n = 0, i;
    mguard_weak_iter it;
    (void)state;
    for (i = 0; i < 8; i++) {
        v = i;
        mguard_weak_set(t, &k[i], &v);
    }
    it = mguard_weak_iterate(t);
    while (mguard_weak_next(&it)) {
        long cur = *(long *)it.value;
        seen[n++] = cur;
        if (cur == 1) {
            mguard_weak_remove(t, &k[2]);             /* not yet visited: skipped */
            mguard_weak_remove(t, &k[0]);             /* visited already */
            v = 100;
            mguard_weak_set(t, &k[3], &v);            /* overwrite: keeps its place */
            for (i = 8; i < 40; i++) {                /* growth and compaction */
                v = i;
                mguard_weak_set(t, &k[i], &v);
                if (i % 2) mguard_weak_remove(t, &k[i]);
            }
        }
        if (cur == 5) mguard_on_destroy(ctx, &k[6]);  /* a key dies mid-walk */
    }
    assert_false(mguard_weak_next(&it));              /* stays finished */
    assert_int_equal(n, 2 + 4 + 16);
    assert_int_equal(seen[0], 0);
    assert_int_equal(seen[1], 1);
    assert_int_equal(seen[2], 100);
    assert_int_equal(seen[3], 4);
    assert_int_equal(seen[4], 5);
    assert_int_equal(seen[5], 7);
    for (i = 0; i < 16; i++) assert_int_equal(seen[6 + i], 8 + 2 * i);
    EXPECT_NO_LOG(log);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* ---- objects --------------------------------------------------------- */

static void test_destroying_an_object_twice_is_a_silent_no_op(void **state)
{
    test_log log;
    dtor_log dl;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak *t;
    static int obj;
    long v = 5;
    (void)state;
    memset(&dl, 0, sizeof dl);
    t = long_table(ctx, &dl);
    mguard_weak_set(t, &obj, &v);
    mguard_on_destroy(ctx, &obj);
    mguard_on_destroy(ctx, &obj);   /* same as an object mguard never saw */
    assert_int_equal(dl.calls, 1);
    EXPECT_NO_LOG(log);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(dl.calls, 1);
}

static void destroy_obj_again(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)attr;
    mguard_on_destroy((mguard_ctx *)user, obj);
}

static void test_destroying_an_object_from_its_own_death_is_logged(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj, guard;
    (void)state;
    mguard_watch(ctx, &obj, &guard, destroy_obj_again, ctx);
    mguard_on_destroy(ctx, &obj);
    EXPECT_LOG(log, log.warnings, "mguard_on_destroy: %p is already being destroyed; ignored", (void *)&obj);
    mguard_ctx_destroy(ctx);
}

static void test_null_object_is_refused_everywhere(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj;
    (void)state;
    mguard_on_destroy(ctx, NULL);
    assert_false(mgt_ctx_contains(ctx, NULL));
    mguard_on_mutation(ctx, NULL, "x");
    assert_int_equal(mguard_mutation_count(ctx, NULL), 0);
    assert_int_equal(mgt_watcher_count(ctx, NULL), 0);
    assert_true(mguard_ref_is_null(mguard_ref_make(ctx, NULL)));
    assert_int_equal(mguard_gen_get(ctx, NULL), -1);
    assert_false(mguard_gen_is_current(ctx, NULL));
    assert_false(mguard_gen_is_class_dynamic(ctx, NULL));
    assert_null(mguard_intern(ctx, NULL));
    EXPECT_NO_LOG(log);
    assert_int_equal(mguard_watch(ctx, NULL, &obj, inval_nop, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_watch: NULL object");
    assert_int_equal(mguard_watch(ctx, &obj, NULL, inval_nop, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_watch: NULL guard");
    assert_int_equal(mguard_watch(ctx, &obj, &obj, NULL, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_watch: NULL callback");
    assert_int_equal(mguard_unwatch(ctx, NULL, &obj), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_unwatch: NULL object");
    assert_int_equal(mguard_unwatch(ctx, &obj, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_unwatch: NULL guard");
    assert_int_equal(mguard_gen_tag(ctx, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_gen_tag: NULL object");
    assert_int_equal(mguard_gen_mark_class_dynamic(ctx, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, "mguard_gen_mark_class_dynamic: NULL object");
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    mguard_ctx_destroy(ctx);
}

typedef struct dying_probe {
    mguard_ctx *ctx;
    mguard_weak *t;
    mguard_status set, watch_obj, watch_guard, tag, mark;
    int ref_null;
    test_log *log;
    char lines[6][512];
} dying_probe;

static void probe_dying(void *guard, const void *obj, const char *attr, void *user)
{
    dying_probe *p = (dying_probe *)user;
    static int other;
    long v = 1;
    (void)guard; (void)attr;
    p->set = mguard_weak_set(p->t, obj, &v);
    snprintf(p->lines[0], sizeof p->lines[0], "%s", p->log->last);
    p->watch_obj = mguard_watch(p->ctx, obj, &other, inval_nop, NULL);
    snprintf(p->lines[1], sizeof p->lines[1], "%s", p->log->last);
    p->watch_guard = mguard_watch(p->ctx, &other, (void *)obj, inval_nop, NULL);
    snprintf(p->lines[2], sizeof p->lines[2], "%s", p->log->last);
    p->ref_null = mguard_ref_is_null(mguard_ref_make(p->ctx, obj));
    snprintf(p->lines[3], sizeof p->lines[3], "%s", p->log->last);
    p->tag = mguard_gen_tag(p->ctx, obj);
    snprintf(p->lines[4], sizeof p->lines[4], "%s", p->log->last);
    p->mark = mguard_gen_mark_class_dynamic(p->ctx, obj);
    snprintf(p->lines[5], sizeof p->lines[5], "%s", p->log->last);
}

static void test_a_dying_object_cannot_be_registered_again(void **state)
{
    test_log log;
    dying_probe p;
    static int obj, guard;
    char want[512];
    (void)state;
    memset(&p, 0, sizeof p);
    p.ctx = test_ctx(&log, NULL);
    p.t = long_table(p.ctx, NULL);
    p.log = &log;
    mguard_watch(p.ctx, &obj, &guard, probe_dying, &p);
    mguard_on_destroy(p.ctx, &obj);
    assert_int_equal(p.set, MGUARD_EINVAL);
    assert_int_equal(p.watch_obj, MGUARD_EINVAL);
    assert_int_equal(p.watch_guard, MGUARD_EINVAL);
    assert_true(p.ref_null);
    assert_int_equal(p.tag, MGUARD_EINVAL);
    assert_int_equal(p.mark, MGUARD_EINVAL);
    assert_int_equal(log.count, 6);
    assert_int_equal(log.warnings, 6);
    snprintf(want, sizeof want, "mguard_weak_set: %p is being destroyed; refused", (void *)&obj);
    assert_string_equal(p.lines[0], want);
    snprintf(want, sizeof want, "mguard_watch: %p is being destroyed; refused", (void *)&obj);
    assert_string_equal(p.lines[1], want);
    assert_string_equal(p.lines[2], want);
    snprintf(want, sizeof want, "mguard_ref_make: %p is being destroyed; refused", (void *)&obj);
    assert_string_equal(p.lines[3], want);
    snprintf(want, sizeof want, "mguard_gen_tag: %p is being destroyed; refused", (void *)&obj);
    assert_string_equal(p.lines[4], want);
    snprintf(want, sizeof want, "mguard_gen_mark_class_dynamic: %p is being destroyed; refused", (void *)&obj);
    assert_string_equal(p.lines[5], want);
    assert_false(mgt_ctx_contains(p.ctx, &obj));
    assert_int_equal(mguard_weak_count(p.t), 0);
    assert_ctx_ok(p.ctx);
    mguard_ctx_destroy(p.ctx);
}

static void test_ref_from_another_context_reads_null(void **state)
{
    test_log la, lb;
    mguard_ctx *a = test_ctx(&la, NULL), *b = test_ctx(&lb, NULL);
    static int obj;
    mguard_ref ra = mguard_ref_make(a, &obj), rb = mguard_ref_make(b, &obj), forged;
    (void)state;
    assert_null(mguard_ref_get(b, ra));
    EXPECT_LOG(lb, lb.warnings, "mguard_ref_get: ref belongs to another context");
    assert_ptr_equal(mguard_ref_get(a, ra), &obj);
    assert_ptr_equal(mguard_ref_get(b, rb), &obj);
    assert_null(mguard_ref_get(a, rb));
    EXPECT_LOG(la, la.warnings, "mguard_ref_get: ref belongs to another context");
    forged = ra;
    forged.serial_ += 1;                      /* right context, no such life */
    assert_null(mguard_ref_get(a, forged));
    forged.serial_ = 0;                       /* the null ref */
    assert_null(mguard_ref_get(a, forged));
    EXPECT_NO_LOG(la);
    mguard_ctx_destroy(a);
    mguard_ctx_destroy(b);
}

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
    a->kept_size = 4096;   /* any block mguard frees last is a context's or smaller */
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
    EXPECT_LOG(log, log.warnings, "mguard_ref_get: ref belongs to another context");
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

static void test_unwatch_without_a_watch_is_not_found(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj, guard;
    (void)state;
    assert_int_equal(mguard_unwatch(ctx, &obj, &guard), MGUARD_NOT_FOUND);
    mguard_watch(ctx, &obj, &guard, inval_nop, NULL);
    assert_int_equal(mguard_unwatch(ctx, &obj, &guard), MGUARD_OK);
    assert_int_equal(mguard_unwatch(ctx, &obj, &guard), MGUARD_NOT_FOUND);
    EXPECT_NO_LOG(log);
    mguard_ctx_destroy(ctx);
}

typedef struct attr_seen { const char *attr; int calls; } attr_seen;

static void record_attr(void *guard, const void *obj, const char *attr, void *user)
{
    attr_seen *a = (attr_seen *)user;
    (void)guard; (void)obj;
    a->attr = attr;
    a->calls++;
}

static void test_empty_and_very_long_attr_names_pass_through(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    static int obj, guard;
    static char longname[100001];
    attr_seen a;
    const char *i1, *i2;
    (void)state;
    memset(&a, 0, sizeof a);
    memset(longname, 'a', sizeof longname - 1);
    mguard_watch(ctx, &obj, &guard, record_attr, &a);
    mguard_on_mutation(ctx, &obj, "");
    assert_int_equal(a.calls, 1);
    assert_string_equal(a.attr, "");
    mguard_watch(ctx, &obj, &guard, record_attr, &a);
    mguard_on_mutation(ctx, &obj, longname);
    assert_int_equal(a.calls, 2);
    assert_ptr_equal(a.attr, longname);
    assert_int_equal(mguard_mutation_count(ctx, &obj), 2);
    i1 = mguard_intern(ctx, "");
    i2 = mguard_intern(ctx, longname);
    assert_non_null(i1);
    assert_string_equal(i1, "");
    assert_non_null(i2);
    assert_int_equal(strlen(i2), 100000);
    assert_ptr_equal(mguard_intern(ctx, longname), i2);
    EXPECT_NO_LOG(log);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_mutating_an_unwatched_object_changes_nothing(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj;
    (void)state;
    mguard_on_mutation(ctx, &obj, "x");
    assert_false(mgt_ctx_contains(ctx, &obj));
    assert_int_equal(mguard_mutation_count(ctx, &obj), 0);
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    EXPECT_NO_LOG(log);
    mguard_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_with_one_function_is_refused),
        cmocka_unit_test(test_null_context_is_refused_everywhere),
        cmocka_unit_test(test_a_table_handle_is_not_a_context),
        cmocka_unit_test(test_ctx_destroy_inside_a_callback_is_refused),
        cmocka_unit_test(test_status_str_of_unknown_status),
        cmocka_unit_test(test_weak_create_refuses_bad_descs),
        cmocka_unit_test(test_null_table_is_refused_everywhere),
        cmocka_unit_test(test_a_context_handle_is_not_a_table),
        cmocka_unit_test(test_null_key_and_value_are_refused),
        cmocka_unit_test(test_pointer_helpers_on_a_table_of_other_values),
        cmocka_unit_test(test_table_being_destroyed_refuses_set_and_second_destroy),
        cmocka_unit_test(test_iterator_keeps_its_place_when_the_table_changes),
        cmocka_unit_test(test_destroying_an_object_twice_is_a_silent_no_op),
        cmocka_unit_test(test_destroying_an_object_from_its_own_death_is_logged),
        cmocka_unit_test(test_null_object_is_refused_everywhere),
        cmocka_unit_test(test_a_dying_object_cannot_be_registered_again),
        cmocka_unit_test(test_ref_from_another_context_reads_null),
        cmocka_unit_test(test_ref_of_a_destroyed_context_reads_null_in_a_new_one_at_its_address),
        cmocka_unit_test(test_refs_of_two_thousand_live_contexts_never_read_across),
        cmocka_unit_test(test_unwatch_without_a_watch_is_not_found),
        cmocka_unit_test(test_empty_and_very_long_attr_names_pass_through),
        cmocka_unit_test(test_mutating_an_unwatched_object_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
