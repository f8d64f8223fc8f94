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

/* A refused dead handle: its line names the public function called (the
   words are the contract here: the body's __func__ is mapped to it). */
#define EXPECT_NOT_LIVE(log, ...) do { \
        char w_[512]; \
        snprintf(w_, sizeof w_, __VA_ARGS__); \
        EXPECT_LOG_TEXT(log, (log).warnings, strstr(w_, "live context") ? MGUARD_LOG_NOT_LIVE_CTX : MGUARD_LOG_NOT_LIVE, "%s", w_); \
    } while (0)
#define NOT_A_TABLE "%s: %p is not a live table (destroyed, its context destroyed, or not a table)"
#define NOT_A_CTX "%s: %p is not a live context (destroyed, or not a context)"

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
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_set", (void *)t);
    assert_null(mguard_weak_get(t, &key));
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_get", (void *)t);
    assert_false(mguard_weak_contains(t, &key));
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_get", (void *)t);
    assert_int_equal(mguard_weak_take(t, &key, NULL), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_take", (void *)t);
    assert_int_equal(mguard_weak_count(t), 0);
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_count", (void *)t);
    mguard_weak_clear(t);
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_clear", (void *)t);
    mguard_weak_destroy(t);
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_destroy", (void *)t);
    assert_false(mguard_weak_next(&it));
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_next", (void *)t);
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
    EXPECT_NOT_LIVE(lb, NOT_A_TABLE, "mguard_weak_set", (void *)t);
    mguard_on_destroy(a, &key);
    EXPECT_NOT_LIVE(lb, NOT_A_CTX, "mguard_on_destroy", (void *)a);
    assert_int_equal(mguard_watch(a, &key, &key, NULL, NULL), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(lb, NOT_A_CTX, "mguard_watch", (void *)a);
    mguard_ctx_destroy(a);
    EXPECT_NOT_LIVE(lb, NOT_A_CTX, "mguard_ctx_destroy", (void *)a);
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
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_count", (void *)wrong);
    assert_int_equal(mgt_objects((mguard_ctx *)(void *)t), 0);
    EXPECT_NOT_LIVE(log, NOT_A_CTX, "mguard_ctx_get_stats", (void *)t);
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
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_HANDLE_DESTROYING);
    assert_int_equal(mguard_weak_count(d.t), 0);     /* now it is gone */
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_count", (void *)d.t);
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

/* ---- scope trackers, dynamism trackers, ledgers (sections 7-9) ---- */
#define NOT_A_KIND "%s: %p is not a live %s (destroyed, its context destroyed, or not a %s)"
#define NOT_A_SCOPE(fn, p) NOT_A_KIND, fn, (void *)(p), "scope tracker", "scope tracker"
#define NOT_A_DYN(fn, p) NOT_A_KIND, fn, (void *)(p), "dynamism tracker", "dynamism tracker"
#define NOT_A_LEDGER(fn, p) NOT_A_KIND, fn, (void *)(p), "ledger", "ledger"

/* The out of a get_stats refused (left as it is), and a live ledger's entries. */
static mguard_ledger_stats lst;
static size_t ledger_entries(const mguard_ledger *L)
{
    mguard_ledger_stats st;
    assert_int_equal(mguard_ledger_get_stats(L, &st), MGUARD_OK);
    return st.entries;
}

static void test_scope_used_after_destroy_is_caught(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_scope *s = mguard_scope_create(ctx, NULL);
    static int comp;
    char buf[64];
    (void)state;
    assert_non_null(s);
    assert_int_equal(mguard_scope_set_name(s, &comp, "Comp"), MGUARD_OK);
    assert_int_equal(mguard_scope_enter(s, &comp), MGUARD_OK);
    assert_int_equal(mguard_scope_frames(s, NULL, 0), 2);
    assert_ctx_ok(ctx);
    mguard_scope_destroy(s);
    assert_int_equal(log.count, 0);
    assert_int_equal(mguard_scope_enter(s, &comp), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_enter", s));
    assert_int_equal(mguard_scope_exit(s, &comp), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_exit", s));
    assert_int_equal(mguard_scope_frames(s, NULL, 0), 0);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_frames", s));
    assert_int_equal(mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_TRACE), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_clear", s));
    assert_null(mguard_scope_name(s, &comp));
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_name", s));
    assert_int_equal(mguard_scope_add(s, "n", 1.0), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_add", s));
    assert_int_equal(mguard_scope_format(s, MGUARD_SCOPE_TABLE, buf, sizeof buf), 0);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_format", s));
    mguard_scope_destroy(s);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_destroy", s));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_dyn_used_after_destroy_is_caught(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_dyn *d = mguard_dyn_create(ctx);
    mguard_dyn_iter it;
    (void)state;
    assert_non_null(d);
    assert_int_equal(mguard_dyn_observe_scalar(d, "x", 1.0), MGUARD_OK);
    assert_true(mguard_dyn_dims(d, "x", NULL, NULL, 0));
    it = mguard_dyn_iterate(d);
    mguard_dyn_destroy(d);
    assert_int_equal(log.count, 0);
    assert_int_equal(mguard_dyn_observe_scalar(d, "x", 2.0), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_DYN("mguard_dyn_observe_scalar", d));
    assert_false(mguard_dyn_dims(d, "x", NULL, NULL, 0));
    EXPECT_NOT_LIVE(log, NOT_A_DYN("mguard_dyn_dims", d));
    assert_int_equal(mguard_dyn_count(d), 0);
    EXPECT_NOT_LIVE(log, NOT_A_DYN("mguard_dyn_count", d));
    assert_false(mguard_dyn_next(&it));
    EXPECT_NOT_LIVE(log, NOT_A_DYN("mguard_dyn_next", d));
    mguard_dyn_destroy(d);
    EXPECT_NOT_LIVE(log, NOT_A_DYN("mguard_dyn_destroy", d));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_ledger_and_clone_used_after_destroy_are_caught(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_ledger *L = mguard_ledger_create(ctx, NULL), *c;
    static int obj;
    mguard_ledger_iter it;
    (void)state;
    assert_non_null(L);
    assert_int_equal(mguard_ledger_track(L, &obj, MGUARD_LEDGER_EXISTING, "src"), MGUARD_OK);
    c = mguard_ledger_clone(L);
    assert_non_null(c);
    assert_true(mguard_ledger_equal(L, c));
    assert_ctx_ok(ctx);
    it = mguard_ledger_iterate(c, MGUARD_LEDGER_WALK_ENTRIES, NULL);
    mguard_ledger_destroy(c);
    assert_int_equal(log.count, 0);
    assert_int_equal(ledger_entries(L), 1);
    assert_int_equal(mguard_ledger_get_stats(c, &lst), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_get_stats", c));
    assert_false(mguard_ledger_next(&it));
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_next", c));
    assert_false(mguard_ledger_equal(L, c));
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_equal", c));
    assert_int_equal(mguard_ledger_restore(L, c), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_restore", c));
    assert_int_equal(ledger_entries(L), 1);
    mguard_ledger_destroy(L);
    assert_int_equal(mguard_ledger_track(L, &obj, MGUARD_LEDGER_EXISTING, "src"), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_track", L));
    assert_int_equal(mguard_ledger_get(L, &obj, NULL), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_get", L));
    assert_null(mguard_ledger_clone(L));
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_clone", L));
    it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_iterate", L));
    assert_false(mguard_ledger_next(&it));
    mguard_ledger_destroy(L);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_destroy", L));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* A diff result is a handle too: after its free, each use is refused
   unread (no use after free), named by the public function. */
static void test_a_diff_result_used_after_its_free_is_caught(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_ledger *a = mguard_ledger_create(ctx, NULL), *b = mguard_ledger_create(ctx, NULL);
    mguard_ledger_diff_result *d = NULL;
    static int obj;
    size_t n = 9;
    char buf[8] = "x";
    (void)state;
    assert_int_equal(mguard_ledger_track(b, &obj, MGUARD_LEDGER_NEW, "src"), MGUARD_OK);
    assert_int_equal(mguard_ledger_diff(a, b, &d), MGUARD_OK);
    assert_non_null(mguard_ledger_diff_items(d, &n));
    assert_int_equal(n, 1);
    mguard_ledger_diff_free(d);
    assert_int_equal(log.count, 0);
    assert_null(mguard_ledger_diff_items(d, &n));
    assert_int_equal(n, 0);
    EXPECT_NOT_LIVE(log, NOT_A_KIND, "mguard_ledger_diff_items", (void *)d, "ledger diff result", "ledger diff result");
    assert_int_equal(mguard_ledger_diff_format(d, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    EXPECT_NOT_LIVE(log, NOT_A_KIND, "mguard_ledger_diff_format", (void *)d, "ledger diff result", "ledger diff result");
    mguard_ledger_diff_free(d);
    EXPECT_NOT_LIVE(log, NOT_A_KIND, "mguard_ledger_diff_free", (void *)d, "ledger diff result", "ledger diff result");
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_trackers_and_ledgers_used_after_their_context_is_destroyed_are_caught(void **state)
{
    test_log la, lb;
    mguard_ctx *a = test_ctx(&la, NULL), *b = test_ctx(&lb, NULL);
    mguard_scope *s = mguard_scope_create(a, NULL);
    mguard_dyn *d = mguard_dyn_create(a);
    mguard_ledger *L = mguard_ledger_create(a, NULL), *c = mguard_ledger_clone(L);
    static int comp;
    (void)state;
    assert_non_null(s);
    assert_non_null(d);
    assert_non_null(c);
    mguard_ctx_destroy(a);
    assert_int_equal(mguard_scope_enter(s, &comp), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(lb, NOT_A_SCOPE("mguard_scope_enter", s));
    assert_false((mguard_scope_phase(s) == 1));
    EXPECT_NOT_LIVE(lb, NOT_A_SCOPE("mguard_scope_phase", s));
    assert_int_equal(mguard_dyn_observe_scalar(d, "x", 1.0), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(lb, NOT_A_DYN("mguard_dyn_observe_scalar", d));
    assert_int_equal(mguard_ledger_record(L, "t", NULL), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(lb, NOT_A_LEDGER("mguard_ledger_record", L));
    assert_int_equal(mgt_ledger_check(c), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(lb, NOT_A_LEDGER("mgt_ledger_check", c));
    mguard_ledger_destroy(c);
    EXPECT_NOT_LIVE(lb, NOT_A_LEDGER("mguard_ledger_destroy", c));
    assert_int_equal(la.count, 0);
    mguard_ctx_destroy(b);
}

static void test_a_handle_of_another_kind_is_refused(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_scope *s = mguard_scope_create(ctx, NULL);
    mguard_dyn *d = mguard_dyn_create(ctx);
    mguard_ledger *L = mguard_ledger_create(ctx, NULL);
    mguard_weak *t = long_table(ctx, NULL);
    mguard_scope *s_is_dyn = (mguard_scope *)(void *)d;
    mguard_dyn *d_is_ledger = (mguard_dyn *)(void *)L;
    mguard_ledger *L_is_scope = (mguard_ledger *)(void *)s;
    mguard_ledger *L_is_table = (mguard_ledger *)(void *)t;
    mguard_ledger *L_is_ctx = (mguard_ledger *)(void *)ctx;
    static int comp;
    (void)state;
    assert_int_equal(mguard_scope_enter(s_is_dyn, &comp), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_enter", d));
    assert_int_equal(mguard_dyn_count(d_is_ledger), 0);
    EXPECT_NOT_LIVE(log, NOT_A_DYN("mguard_dyn_count", L));
    assert_int_equal(mguard_ledger_get_stats(L_is_scope, &lst), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_get_stats", s));
    assert_int_equal(mguard_ledger_get_stats(L_is_table, &lst), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_get_stats", t));
    assert_int_equal(mguard_ledger_mark_modified(L_is_ctx, &comp), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_mark_modified", ctx));
    assert_int_equal(mguard_weak_count((mguard_weak *)(void *)s), 0);
    EXPECT_NOT_LIVE(log, NOT_A_TABLE, "mguard_weak_count", (void *)s);
    /* the real handles still work, and NULL stays silent */
    assert_int_equal(mguard_scope_set_name(s, &comp, "Comp"), MGUARD_OK);
    assert_int_equal(mguard_scope_enter(s, &comp), MGUARD_OK);
    assert_int_equal(mguard_dyn_count(d), 0);
    assert_int_equal(ledger_entries(L), 0);
    assert_int_equal(mguard_ledger_get_stats(NULL, &lst), MGUARD_EINVAL);
    assert_int_equal(mguard_scope_frames(NULL, NULL, 0), 0);
    assert_int_equal(mguard_dyn_count(NULL), 0);
    assert_int_equal(log.count, 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* A thread-safe context logging into *log. */
static mguard_ctx *ts_ctx(test_log *log)
{
    mguard_ctx_desc desc;
    mguard_ctx *ctx;
    memset(log, 0, sizeof *log);
    memset(&desc, 0, sizeof desc);
    desc.logger.func = test_log_fn;
    desc.logger.user = log;
    desc.thread_safe = true;
    ctx = mguard_ctx_create(&desc);
    assert_non_null(ctx);
    return ctx;
}

static void test_thread_safe_context_checks_trackers_and_ledgers(void **state)
{
    test_log log;
    mguard_ctx *ctx;
    mguard_scope *s;
    mguard_ledger *L, *c;
    static int comp;
    (void)state;
    ctx = ts_ctx(&log);
    s = mguard_scope_create(ctx, NULL);
    L = mguard_ledger_create(ctx, NULL);
    c = mguard_ledger_clone(L);
    assert_int_equal(mguard_scope_set_name(s, &comp, "Comp"), MGUARD_OK);
    assert_int_equal(mguard_scope_enter(s, &comp), MGUARD_OK);
    mguard_scope_destroy(s);
    mguard_ledger_destroy(c);
    assert_int_equal(mguard_scope_exit(s, &comp), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_exit", s));
    assert_int_equal(mguard_ledger_restore(L, c), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_restore", c));
    assert_int_equal(mguard_ledger_get_stats(c, &lst), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_get_stats", c));
    assert_int_equal(ledger_entries(L), 0);
    assert_int_equal(log.count, 0);
    mguard_ctx_destroy(ctx);
}

/* Every allocation of the creates, failed in turn: NULL, the registry and
   the context unchanged, nothing leaked. */
static void test_creates_fail_cleanly_at_each_allocation_with_the_registry(void **state)
{
    long n, failures = 0, made = 0;
    (void)state;
    for (n = 1; n <= 40; n++) {
        test_log log; test_alloc al;
        mguard_ctx *ctx = test_ctx(&log, &al);
        mguard_scope *s; mguard_dyn *d; mguard_ledger *L, *c = NULL;
        al.fail_at = al.calls + n;
        s = mguard_scope_create(ctx, NULL);
        d = mguard_dyn_create(ctx);
        L = mguard_ledger_create(ctx, NULL);
        if (L) c = mguard_ledger_clone(L);
        failures += !s + !d + !L + (L && !c);
        made += s && d && L && c;
        assert_ctx_ok(ctx);
        mguard_scope_destroy(s);
        mguard_dyn_destroy(d);
        mguard_ledger_destroy(c);
        mguard_ledger_destroy(L);
        assert_ctx_ok(ctx);
        mguard_ctx_destroy(ctx);
        assert_int_equal(al.live_blocks, 0);
    }
    assert_true(failures > 0);
    assert_true(made > 0);
}

/* A ledger destroyed from inside its own apply stays a live handle until
   the apply ends (its destroy is deferred), then leaves the registry. */
typedef struct ledger_in_apply { mguard_ledger *L; size_t count; int calls; } ledger_in_apply;

static void apply_destroys_ledger(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    ledger_in_apply *a = (ledger_in_apply *)user;
    (void)obj; (void)attr; (void)value; (void)deleted;
    if (a->calls++) return;
    mguard_ledger_destroy(a->L);
    a->count = ledger_entries(a->L);
}

static void test_ledger_destroy_deferred_by_apply_keeps_the_handle_until_it_ends(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    ledger_in_apply a;
    static int obj;
    static int v1, v2;
    (void)state;
    memset(&a, 0, sizeof a);
    a.L = mguard_ledger_create(ctx, NULL);
    assert_int_equal(mguard_ledger_track(a.L, &obj, MGUARD_LEDGER_NEW, "cls"), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(a.L, &obj, "x", &v1), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(a.L, &obj, "y", &v2), MGUARD_OK);
    assert_int_equal(mguard_ledger_apply(a.L, apply_destroys_ledger, &a), MGUARD_OK);
    assert_int_equal(a.calls, 1);                     /* the rest went with the ledger */
    assert_int_equal(a.count, 0);
    assert_int_equal(log.count, 0);                   /* live during the apply */
    assert_int_equal(mguard_ledger_get_stats(a.L, &lst), MGUARD_EINVAL);    /* now it is gone */
    EXPECT_NOT_LIVE(log, NOT_A_LEDGER("mguard_ledger_get_stats", a.L));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* A scope tracker destroyed from inside its own callback (type_name, during
   a lookup) stays a live handle until the call ends (deferred destroy). */
typedef struct scope_in_call { mguard_scope *s; size_t frames; int calls; } scope_in_call;

static const char *type_destroys_scope(const void *comp, void *user)
{
    scope_in_call *r = (scope_in_call *)user;
    (void)comp;
    if (r->calls++) return "T";
    mguard_scope_destroy(r->s);
    r->frames = mguard_scope_frames(r->s, NULL, 0);
    return "T";
}

static void test_scope_destroy_deferred_by_its_callback_keeps_the_handle_until_the_call_ends(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_scope_desc d;
    scope_in_call r;
    static int comp;
    (void)state;
    memset(&r, 0, sizeof r);
    memset(&d, 0, sizeof d);
    d.type_name = type_destroys_scope;
    d.user = &r;
    r.s = mguard_scope_create(ctx, &d);
    assert_non_null(r.s);
    mguard_scope_name(r.s, &comp);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.frames, 1);                    /* live during the call: the root */
    assert_int_equal(log.count, 0);
    assert_int_equal(mguard_scope_frames(r.s, NULL, 0), 0);   /* now it is gone */
    EXPECT_NOT_LIVE(log, NOT_A_SCOPE("mguard_scope_frames", r.s));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* ---- guarded caches (section 10) ---- */
#define NOT_A_CACHE(fn, p) NOT_A_KIND, fn, (void *)(p), "cache", "cache"

static mguard_cache *long_cache(mguard_ctx *ctx)
{
    mguard_cache_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    return mguard_cache_create(ctx, &d);
}

static void test_cache_used_after_destroy_is_caught(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_cache *c = long_cache(ctx);
    static int obj;
    const void *key = &obj;
    long v = 7;
    mguard_cache_iter it;
    mguard_cache_stats st;
    char buf[64];
    (void)state;
    assert_non_null(c);
    assert_int_equal(mguard_cache_set(c, &key, 1, &v, 0), MGUARD_OK);
    it = mguard_cache_iterate(c);
    mguard_cache_destroy(c);
    assert_int_equal(log.count, 0);
    assert_int_equal(mguard_cache_count(c), 0);
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_count", c));
    assert_null(mguard_cache_get(c, &key, 1));
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_get", c));
    assert_int_equal(mguard_cache_set(c, &key, 1, &v, 0), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_set", c));
    assert_false(mguard_cache_next(&it));
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_next", c));
    assert_int_equal(mguard_cache_get_stats(c, &st), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_get_stats", c));
    assert_int_equal(mguard_cache_format(c, buf, sizeof buf), 0);
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_format", c));
    mguard_cache_destroy(c);
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_destroy", c));
    /* NULL stays silent; the object is still known to nobody */
    assert_int_equal(mguard_cache_count(NULL), 0);
    assert_int_equal(log.count, 0);
    assert_int_equal(mgt_objects(ctx), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_cache_used_after_its_context_is_destroyed_or_as_another_kind_is_caught(void **state)
{
    test_log la, lb;
    mguard_ctx *a = test_ctx(&la, NULL), *b = test_ctx(&lb, NULL);
    mguard_cache *c = long_cache(a), *live = long_cache(b);
    mguard_ledger *L = mguard_ledger_create(b, NULL);
    static int obj;
    const void *key = &obj;
    (void)state;
    assert_non_null(c);
    assert_non_null(live);
    mguard_ctx_destroy(a);
    assert_false(mguard_cache_contains(c, &key, 1));
    EXPECT_NOT_LIVE(lb, NOT_A_CACHE("mguard_cache_contains", c));
    mguard_cache_clear(c);
    EXPECT_NOT_LIVE(lb, NOT_A_CACHE("mguard_cache_clear", c));
    /* a ledger is not a cache, a cache is not a ledger */
    assert_int_equal(mguard_cache_count((mguard_cache *)(void *)L), 0);
    EXPECT_NOT_LIVE(lb, NOT_A_CACHE("mguard_cache_count", L));
    assert_int_equal(mguard_ledger_get_stats((mguard_ledger *)(void *)live, &lst), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(lb, NOT_A_LEDGER("mguard_ledger_get_stats", live));
    assert_int_equal(mguard_cache_count(live), 0);
    assert_int_equal(la.count, 0);
    assert_int_equal(lb.count, 0);
    mguard_ctx_destroy(b);
}

/* A cache destroyed by its own compute stays a live handle until the
   compute returns (the destroy is deferred), then leaves the registry. */
typedef struct cache_in_compute { mguard_cache *c; size_t count; } cache_in_compute;

static mguard_status compute_destroys_cache(mguard_cache_job *job, void *value, void *user)
{
    cache_in_compute *cc = (cache_in_compute *)user;
    (void)job;
    mguard_cache_destroy(cc->c);
    cc->count = mguard_cache_count(cc->c) + 1;   /* still live: 0 entries, no log */
    *(long *)value = 5;
    return MGUARD_OK;
}

static void test_cache_destroy_deferred_by_compute_keeps_the_handle_until_it_ends(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    cache_in_compute cc;
    static int obj;
    const void *key = &obj;
    mguard_status st = MGUARD_EINVAL;
    (void)state;
    cc.c = long_cache(ctx);
    cc.count = 0;
    assert_non_null(cc.c);
    assert_null(mguard_cache_get_or_compute(cc.c, &key, 1, compute_destroys_cache, &cc, &st));
    assert_int_equal(cc.count, 1);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_CACHE_GONE_IN_COMPUTE);
    assert_int_equal(mguard_cache_count(cc.c), 0);
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_count", cc.c));
    assert_int_equal(mgt_objects(ctx), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_thread_safe_context_checks_caches(void **state)
{
    test_log log;
    mguard_ctx *ctx;
    mguard_cache *c;
    static int obj;
    const void *key = &obj;
    long v = 1;
    (void)state;
    ctx = ts_ctx(&log);
    c = long_cache(ctx);
    assert_int_equal(mguard_cache_set(c, &key, 1, &v, 0), MGUARD_OK);
    assert_int_equal(*(const long *)mguard_cache_get(c, &key, 1), 1);
    mguard_cache_destroy(c);
    assert_int_equal(mguard_cache_take(c, &key, 1, NULL), MGUARD_EINVAL);
    EXPECT_NOT_LIVE(log, NOT_A_CACHE("mguard_cache_take", c));
    assert_int_equal(log.count, 0);
    mguard_ctx_destroy(ctx);
}

/* Every allocation of a cache's create and first store, failed in turn:
   NULL or ENOMEM, the registry and the context unchanged, nothing leaked. */
static void test_cache_create_fails_cleanly_at_each_allocation_with_the_registry(void **state)
{
    long n, failures = 0, made = 0;
    (void)state;
    for (n = 1; n <= 40; n++) {
        test_log log; test_alloc al;
        mguard_ctx *ctx = test_ctx(&log, &al);
        mguard_cache *c;
        static int obj;
        const void *key = &obj;
        long v = 3;
        al.fail_at = al.calls + n;
        c = long_cache(ctx);
        if (c && mguard_cache_set(c, &key, 1, &v, 0) == MGUARD_OK) {
            made++;
            assert_int_equal(mguard_cache_count(c), 1);
        } else {
            failures++;
            assert_int_equal(mguard_cache_count(c), 0);
        }
        assert_ctx_ok(ctx);
        mguard_cache_destroy(c);
        assert_ctx_ok(ctx);
        mguard_ctx_destroy(ctx);
        assert_int_equal(al.live_blocks, 0);
    }
    assert_true(failures > 0);
    assert_true(made > 0);
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

/* A mismatch with the model fails the running test instead of aborting. */
static void report_mismatch(const char *report) { fail_msg("%s", report); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_used_after_destroy_is_caught),
        cmocka_unit_test(test_table_used_after_its_context_is_destroyed_is_caught),
        cmocka_unit_test(test_live_handles_pass_and_foreign_ones_are_named),
        cmocka_unit_test(test_destroy_deferred_by_a_clear_keeps_the_handle_until_it_ends),
        cmocka_unit_test(test_registry_stays_consistent_over_many_tables),
        cmocka_unit_test(test_scope_used_after_destroy_is_caught),
        cmocka_unit_test(test_dyn_used_after_destroy_is_caught),
        cmocka_unit_test(test_ledger_and_clone_used_after_destroy_are_caught),
        cmocka_unit_test(test_a_diff_result_used_after_its_free_is_caught),
        cmocka_unit_test(test_trackers_and_ledgers_used_after_their_context_is_destroyed_are_caught),
        cmocka_unit_test(test_a_handle_of_another_kind_is_refused),
        cmocka_unit_test(test_thread_safe_context_checks_trackers_and_ledgers),
        cmocka_unit_test(test_creates_fail_cleanly_at_each_allocation_with_the_registry),
        cmocka_unit_test(test_ledger_destroy_deferred_by_apply_keeps_the_handle_until_it_ends),
        cmocka_unit_test(test_scope_destroy_deferred_by_its_callback_keeps_the_handle_until_the_call_ends),
        cmocka_unit_test(test_cache_used_after_destroy_is_caught),
        cmocka_unit_test(test_cache_used_after_its_context_is_destroyed_or_as_another_kind_is_caught),
        cmocka_unit_test(test_cache_destroy_deferred_by_compute_keeps_the_handle_until_it_ends),
        cmocka_unit_test(test_thread_safe_context_checks_caches),
        cmocka_unit_test(test_cache_create_fails_cleanly_at_each_allocation_with_the_registry),
        cmocka_unit_test(test_debug_build_agrees_with_model),
    };
    fz_mismatch_hook = report_mismatch;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
