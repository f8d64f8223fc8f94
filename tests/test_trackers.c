/* Mutation trackers: watchers held weakly, fired once in registration
   order, counts kept until death (MutationTracker in the reference);
   bad input and regressions. */
#include "common.h"

typedef struct call { void *guard; const void *obj; char attr[32]; void *user; } call;
static call calls[64];
static int ncalls;

static void record(void *guard, const void *obj, const char *attr, void *user)
{
    call *c = &calls[ncalls++ % 64];
    c->guard = guard;
    c->obj = obj;
    snprintf(c->attr, sizeof c->attr, "%s", attr ? attr : "(null)");
    c->user = user;
}

static void note_nothing(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
}

static int reset(void **state)
{
    (void)state;
    ncalls = 0;
    memset(calls, 0, sizeof calls);
    return 0;
}

static void test_unwatched_mutation_changes_nothing(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj;
    (void)state;
    mguard_on_mutation(ctx, &obj, "x");
    assert_int_equal(mguard_mutation_count(ctx, &obj), 0);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 0);
    assert_int_equal(mgt_objects(ctx), 0);
    mguard_ctx_destroy(ctx);
}

static void test_watchers_fire_once_in_registration_order(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g1, g2, g3;
    int u1 = 0, u2 = 0;
    (void)state;
    assert_int_equal(mguard_watch(ctx, &obj, &g2, record, &u2), MGUARD_OK);
    assert_int_equal(mguard_watch(ctx, &obj, &g1, record, &u1), MGUARD_OK);
    assert_int_equal(mguard_watch(ctx, &obj, &g3, record, NULL), MGUARD_OK);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 3);
    mguard_on_mutation(ctx, &obj, "weight");
    assert_int_equal(ncalls, 3);
    assert_ptr_equal(calls[0].guard, &g2);
    assert_ptr_equal(calls[0].user, &u2);
    assert_ptr_equal(calls[1].guard, &g1);
    assert_ptr_equal(calls[1].user, &u1);
    assert_ptr_equal(calls[2].guard, &g3);
    assert_ptr_equal(calls[0].obj, &obj);
    assert_string_equal(calls[0].attr, "weight");
    assert_int_equal(mguard_mutation_count(ctx, &obj), 1);
    /* dropped after firing: the next mutation calls nobody, counts on */
    assert_int_equal(mgt_watcher_count(ctx, &obj), 0);
    mguard_on_mutation(ctx, &obj, "bias");
    assert_int_equal(ncalls, 3);
    assert_int_equal(mguard_mutation_count(ctx, &obj), 2);
    mguard_ctx_destroy(ctx);
}

static void test_destroyed_guard_is_skipped_and_not_counted(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g1, g2;
    (void)state;
    mguard_watch(ctx, &obj, &g1, record, NULL);
    mguard_watch(ctx, &obj, &g2, record, NULL);
    mguard_on_destroy(ctx, &g1);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 1);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 1);
    assert_ptr_equal(calls[0].guard, &g2);
    mguard_ctx_destroy(ctx);
}

static void test_guard_address_reuse_does_not_revive_watcher(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj;
    static long guard_slot;
    (void)state;
    mguard_watch(ctx, &obj, &guard_slot, record, NULL);
    mguard_on_destroy(ctx, &guard_slot);
    mguard_ref_make(ctx, &guard_slot);       /* a new guard object in the slot */
    assert_int_equal(mgt_watcher_count(ctx, &obj), 0);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 0);
    mguard_ctx_destroy(ctx);
}

static void test_death_fires_watchers_with_null_attr_and_forgets_tracker(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static long slot;
    static int g;
    (void)state;
    mguard_watch(ctx, &slot, &g, record, NULL);
    mguard_on_mutation(ctx, &slot, "a");
    mguard_watch(ctx, &slot, &g, record, NULL);
    assert_int_equal(mguard_mutation_count(ctx, &slot), 1);
    mguard_on_destroy(ctx, &slot);
    assert_int_equal(ncalls, 2);
    assert_string_equal(calls[1].attr, "(null)");
    assert_ptr_equal(calls[1].obj, &slot);
    /* a new object at the address starts with no tracker */
    assert_int_equal(mguard_mutation_count(ctx, &slot), 0);
    assert_int_equal(mgt_watcher_count(ctx, &slot), 0);
    mguard_on_mutation(ctx, &slot, "b");
    assert_int_equal(mguard_mutation_count(ctx, &slot), 0);
    mguard_ctx_destroy(ctx);
}

static void test_tracker_outlives_its_watchers(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g;
    int i;
    (void)state;
    mguard_watch(ctx, &obj, &g, record, NULL);
    for (i = 0; i < 5; i++) mguard_on_mutation(ctx, &obj, "x");
    assert_int_equal(mguard_mutation_count(ctx, &obj), 5);
    assert_int_equal(ncalls, 1);
    assert_true(mgt_ctx_contains(ctx, &obj));
    mguard_ctx_destroy(ctx);
}

/* A watcher that re-watches (the reference's pattern for long-lived guards)
   is not called again by the same mutation. */
static mguard_ctx *rewatch_ctx;
static void rewatch(void *guard, const void *obj, const char *attr, void *user)
{
    record(guard, obj, attr, user);
    assert_int_equal(mguard_watch(rewatch_ctx, obj, guard, rewatch, user), MGUARD_OK);
}

static void test_watcher_added_during_invalidation_waits_for_next_event(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g;
    (void)state;
    rewatch_ctx = ctx;
    mguard_watch(ctx, &obj, &g, rewatch, NULL);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 1);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 1);
    mguard_on_mutation(ctx, &obj, "b");
    assert_int_equal(ncalls, 2);
    assert_string_equal(calls[1].attr, "b");
    mguard_ctx_destroy(ctx);
}

static void test_unwatch_removes_only_that_guard(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g1, g2;
    (void)state;
    mguard_watch(ctx, &obj, &g1, record, NULL);
    mguard_watch(ctx, &obj, &g2, record, NULL);
    mguard_watch(ctx, &obj, &g1, record, NULL);
    assert_int_equal(mguard_unwatch(ctx, &obj, &g1), MGUARD_OK);
    assert_int_equal(mguard_unwatch(ctx, &obj, &g1), MGUARD_NOT_FOUND);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 1);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 1);
    assert_ptr_equal(calls[0].guard, &g2);
    mguard_ctx_destroy(ctx);
}

/* A callback that unwatches a pending watcher of the same event: that
   watcher must not fire (wl_signal_emit_mutable's rule). */
static mguard_ctx *cancel_ctx;
static int cancel_g2;
static void cancel_next(void *guard, const void *obj, const char *attr, void *user)
{
    record(guard, obj, attr, user);
    assert_int_equal(mguard_unwatch(cancel_ctx, obj, &cancel_g2), MGUARD_OK);
}

static void test_unwatch_during_invalidation_cancels_pending_watcher(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g1, g3;
    (void)state;
    cancel_ctx = ctx;
    mguard_watch(ctx, &obj, &g1, cancel_next, NULL);
    mguard_watch(ctx, &obj, &cancel_g2, record, NULL);
    mguard_watch(ctx, &obj, &g3, record, NULL);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 2);
    assert_ptr_equal(calls[0].guard, &g1);
    assert_ptr_equal(calls[1].guard, &g3);
    mguard_ctx_destroy(ctx);
}

/* A callback that destroys the object of the mutation, then unwatches a
   guard of the new object at the same address (which has none): the old
   object's pending watcher is not the new object's, so it is still told
   (once), and the unwatch finds nothing. */
static mguard_ctx *reuse_ctx;
static int reuse_g2;
static mguard_status reuse_unwatch_st;
static void destroy_then_unwatch_new(void *guard, const void *obj, const char *attr, void *user)
{
    record(guard, obj, attr, user);
    mguard_on_destroy(reuse_ctx, obj);
    assert_int_equal(mguard_watch(reuse_ctx, obj, guard, record, NULL), MGUARD_OK);   /* a new object there */
    reuse_unwatch_st = mguard_unwatch(reuse_ctx, obj, &reuse_g2);
}

static void test_unwatch_of_a_new_object_leaves_the_old_ones_watchers(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g1;
    (void)state;
    reuse_ctx = ctx;
    reuse_unwatch_st = MGUARD_EINVAL;
    mguard_watch(ctx, &obj, &g1, destroy_then_unwatch_new, NULL);
    mguard_watch(ctx, &obj, &reuse_g2, record, NULL);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(reuse_unwatch_st, MGUARD_NOT_FOUND);
    assert_int_equal(ncalls, 2);
    assert_ptr_equal(calls[0].guard, &g1);
    assert_ptr_equal(calls[1].guard, &reuse_g2);
    assert_string_equal(calls[1].attr, "a");
    assert_int_equal(mgt_watcher_count(ctx, &obj), 1);   /* g1 on the new object */
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static mguard_status self_unwatch_st;
/* In obj's death, an unwatch of obj from a callback of that death is about
   obj (its dying life): it cancels a later watcher of the death. */
static void unwatch_next_in_death(void *guard, const void *obj, const char *attr, void *user)
{
    record(guard, obj, attr, user);
    self_unwatch_st = mguard_unwatch(cancel_ctx, obj, &cancel_g2);
}

static void test_unwatch_in_a_death_cancels_a_later_watcher_of_it(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g1;
    (void)state;
    cancel_ctx = ctx;
    self_unwatch_st = MGUARD_EEXIST;
    mguard_watch(ctx, &obj, &g1, unwatch_next_in_death, NULL);
    mguard_watch(ctx, &obj, &cancel_g2, record, NULL);
    mguard_on_destroy(ctx, &obj);
    assert_int_equal(self_unwatch_st, MGUARD_OK);
    assert_int_equal(ncalls, 1);
    assert_ptr_equal(calls[0].guard, &g1);
    assert_string_equal(calls[0].attr, "(null)");
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* A watcher is removed before it is called: its own callback's unwatch of
   it finds nothing (the same answer as right after the event). */
static void unwatch_self(void *guard, const void *obj, const char *attr, void *user)
{
    record(guard, obj, attr, user);
    self_unwatch_st = mguard_unwatch((mguard_ctx *)user, obj, guard);
}

static void test_a_watcher_unwatching_itself_when_called_finds_nothing(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g1, g2;
    (void)state;
    self_unwatch_st = MGUARD_EEXIST;
    mguard_watch(ctx, &obj, &g1, unwatch_self, ctx);
    mguard_watch(ctx, &obj, &g2, record, NULL);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(self_unwatch_st, MGUARD_NOT_FOUND);
    assert_int_equal(ncalls, 2);
    assert_ptr_equal(calls[1].guard, &g2);
    assert_int_equal(mguard_unwatch(ctx, &obj, &g1), MGUARD_NOT_FOUND);
    mguard_ctx_destroy(ctx);
}

/* A callback that destroys the guard of a later watcher of the same event:
   that watcher is skipped. */
static mguard_ctx *kill_ctx;
static int kill_g2;
static void kill_next_guard(void *guard, const void *obj, const char *attr, void *user)
{
    record(guard, obj, attr, user);
    mguard_on_destroy(kill_ctx, &kill_g2);
}

static void test_guard_destroyed_by_earlier_callback_is_skipped(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj, g1;
    (void)state;
    kill_ctx = ctx;
    mguard_watch(ctx, &obj, &g1, kill_next_guard, NULL);
    mguard_watch(ctx, &obj, &kill_g2, record, NULL);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 1);
    assert_ptr_equal(calls[0].guard, &g1);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_object_that_guards_itself(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static int obj;
    (void)state;
    assert_int_equal(mguard_watch(ctx, &obj, &obj, record, NULL), MGUARD_OK);
    assert_int_equal(mgt_objects(ctx), 1);   /* one record, tracker and guard */
    assert_ctx_ok(ctx);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 1);
    mguard_watch(ctx, &obj, &obj, record, NULL);
    /* on death the guard is dead too: not called */
    mguard_on_destroy(ctx, &obj);
    assert_int_equal(ncalls, 1);
    assert_int_equal(mgt_objects(ctx), 0);
    mguard_ctx_destroy(ctx);
}

typedef struct point { int x, y; } point;

static void test_set_field_macro_assigns_then_notifies(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static point p;
    static int g;
    (void)state;
    mguard_watch(ctx, &p, &g, record, NULL);
    MGUARD_SET_FIELD(ctx, &p, y, 42);
    assert_int_equal(p.y, 42);
    assert_int_equal(ncalls, 1);
    assert_string_equal(calls[0].attr, "y");
    assert_int_equal(mguard_mutation_count(ctx, &p), 1);
    mguard_ctx_destroy(ctx);
}

/* Regression (issue 23): the object argument was evaluated twice, so
   p++ wrote one object and reported the next one as mutated. */
static void test_set_field_macro_evaluates_the_object_once(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    static point pts[2];
    static int g0, g1;
    point *p = pts;
    (void)state;
    mguard_watch(ctx, &pts[0], &g0, record, NULL);
    mguard_watch(ctx, &pts[1], &g1, record, NULL);
    MGUARD_SET_FIELD(ctx, p++, x, 7);
    assert_ptr_equal(p, &pts[1]);
    assert_int_equal(pts[0].x, 7);
    assert_int_equal(pts[1].x, 0);
    assert_int_equal(mguard_mutation_count(ctx, &pts[0]), 1);
    assert_int_equal(mguard_mutation_count(ctx, &pts[1]), 0);
    assert_int_equal(ncalls, 1);
    assert_ptr_equal(calls[0].guard, &g0);
    mguard_ctx_destroy(ctx);
}

static void test_many_dead_guards_are_pruned(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    static int obj;
    static char guards[1000];
    long long peak;
    int i;
    (void)state;
    /* watch with 1000 short-lived guards that die unfired */
    for (i = 0; i < 1000; i++) {
        mguard_watch(ctx, &obj, &guards[i], record, NULL);
        mguard_on_destroy(ctx, &guards[i]);
    }
    peak = al.peak_bytes;   /* the most ever held, not the end state */
    assert_int_equal(mgt_watcher_count(ctx, &obj), 0);
    /* the list stays small: dead guards pruned (unpruned, 1000 watchers
       alone would take over 16 KB) */
    assert_true(peak < 8192);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 0);
    mguard_ctx_destroy(ctx);
}

static void test_watch_bad_input(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj, g;
    (void)state;
    assert_int_equal(mguard_watch(NULL, &obj, &g, record, NULL), MGUARD_EINVAL);
    assert_int_equal(mguard_watch(ctx, NULL, &g, record, NULL), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_watch(ctx, &obj, NULL, record, NULL), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_watch(ctx, &obj, &g, NULL, NULL), MGUARD_EINVAL);
    assert_int_equal(log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(log.warnings, 3);
    assert_int_equal(mguard_unwatch(NULL, &obj, &g), MGUARD_EINVAL);
    assert_int_equal(mguard_unwatch(ctx, NULL, &g), MGUARD_EINVAL);
    assert_int_equal(mguard_unwatch(ctx, &obj, NULL), MGUARD_EINVAL);
    assert_int_equal(mguard_unwatch(ctx, &obj, &g), MGUARD_NOT_FOUND);
    mguard_on_mutation(NULL, &obj, "a");
    mguard_on_mutation(ctx, NULL, "a");
    assert_int_equal(mguard_mutation_count(NULL, &obj), 0);
    assert_int_equal(mgt_watcher_count(ctx, NULL), 0);
    assert_int_equal(mgt_objects(ctx), 0);
    mguard_ctx_destroy(ctx);
}

static void test_watch_out_of_memory_changes_nothing(void **state)
{
    test_log log;
    test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    static int obj, g, g2, gs[3];
    long n;
    (void)state;
    /* every allocation of a first watch fails in turn */
    for (n = 1;; n++) {
        mguard_status st;
        al.fail_at = al.calls + n;
        st = mguard_watch(ctx, &obj, &g, record, NULL);
        al.fail_at = 0;
        assert_ctx_ok(ctx);
        if (st == MGUARD_OK) break;
        assert_int_equal(st, MGUARD_ENOMEM);
        assert_int_equal(log.code, MGUARD_LOG_NOMEM);
        assert_int_equal(mgt_objects(ctx), 0);
        assert_false(mgt_ctx_contains(ctx, &obj));
    }
    assert_true(n > 1);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 1);
    /* more watchers on the existing tracker: three fit in its first list
       (room for 4); the fifth needs a bigger list (its guard's record
       fits in the registry's room), and that allocation fails */
    assert_int_equal(mguard_watch(ctx, &obj, &gs[0], record, NULL), MGUARD_OK);
    assert_int_equal(mguard_watch(ctx, &obj, &gs[1], record, NULL), MGUARD_OK);
    assert_int_equal(mguard_watch(ctx, &obj, &gs[2], record, NULL), MGUARD_OK);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 4);
    for (n = 1;; n++) {
        mguard_status st;
        long calls0 = al.calls, failures0 = al.failures;
        al.fail_at = al.calls + n;
        st = mguard_watch(ctx, &obj, &g2, record, NULL);
        al.fail_at = 0;
        assert_ctx_ok(ctx);
        if (al.failures == failures0) {
            /* no allocation left to fail: this one went through */
            assert_int_equal(st, MGUARD_OK);
            assert_true(al.calls - calls0 < n);
            break;
        }
        assert_int_equal(st, MGUARD_ENOMEM);
        assert_int_equal(log.code, MGUARD_LOG_NOMEM);
        assert_int_equal(mgt_watcher_count(ctx, &obj), 4);
        assert_false(mgt_ctx_contains(ctx, &g2));
    }
    assert_int_equal(n, 2);   /* one injection: the list's growth */
    assert_int_equal(mgt_watcher_count(ctx, &obj), 5);
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 5);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

static void test_watching_the_same_guard_and_callback_again_answers_eexist(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj, g1, g2;
    int u1 = 0, u2 = 0;
    (void)state;
    assert_int_equal(mguard_watch(ctx, &obj, &g1, record, &u1), MGUARD_OK);
    /* the same (obj, guard, fn), whatever the user: nothing changes */
    assert_int_equal(mguard_watch(ctx, &obj, &g1, record, &u2), MGUARD_EEXIST);
    assert_int_equal(mguard_watch(ctx, &obj, &g1, record, &u1), MGUARD_EEXIST);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 1);
    /* another guard, or another callback, is another watcher */
    assert_int_equal(mguard_watch(ctx, &obj, &g2, record, &u1), MGUARD_OK);
    assert_int_equal(mguard_watch(ctx, &obj, &g1, note_nothing, NULL), MGUARD_OK);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 3);
    mguard_on_mutation(ctx, &obj, "x");
    assert_int_equal(ncalls, 2);   /* fired once each: g1, g2 */
    assert_ptr_equal(calls[0].user, &u1);
    /* fired and dropped: watching again is new */
    assert_int_equal(mguard_watch(ctx, &obj, &g1, record, &u1), MGUARD_OK);
    /* a guard destroyed and reborn at the same address is a new guard */
    mguard_on_destroy(ctx, &g1);
    assert_int_equal(mguard_watch(ctx, &obj, &g1, record, &u1), MGUARD_OK);
    assert_int_equal(log.count, 0);
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
    mguard_ctx_destroy(ctx);
}

/* ---- misuse and regressions ------------------------------------------ */

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
    assert_int_equal(mgt_objects(ctx), 0);
    EXPECT_NO_LOG(log);
    mguard_ctx_destroy(ctx);
}

static void inval_count(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr;
    (*(int *)user)++;
}

/* Regression: mguard_unwatch matched watchers by the guard's address
   alone: after the guard was destroyed (its watchers dead: never called,
   not counted), a new object at the same address was told OK, and whether
   it was depended on the watcher list's capacity (dead watchers are pruned
   when it grows). */
static void test_unwatch_ignores_watchers_of_a_destroyed_guard(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int obj, guard;
    int calls = 0;
    (void)state;
    assert_int_equal(mguard_watch(ctx, &obj, &guard, inval_count, &calls), MGUARD_OK);
    mguard_on_destroy(ctx, &guard);
    assert_int_equal(mgt_watcher_count(ctx, &obj), 0);
    assert_int_equal(mguard_unwatch(ctx, &obj, &guard), MGUARD_NOT_FOUND);
    /* the new object at &guard watches and unwatches normally */
    assert_int_equal(mguard_watch(ctx, &obj, &guard, inval_count, &calls), MGUARD_OK);
    assert_int_equal(mguard_unwatch(ctx, &obj, &guard), MGUARD_OK);
    mguard_on_mutation(ctx, &obj, "x");
    assert_int_equal(calls, 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* A callback destroys the object and a cache makes a new record at its
   address (a cache key, no tracker): the swapped-out heap list goes back
   to no one (freed), the new life has no watchers, and the check holds. */
static mguard_ctx *reborn_ctx;
static mguard_cache *reborn_cache;
static void reborn(void *guard, const void *obj, const char *attr, void *user)
{
    long v = 7;
    mguard_on_destroy(reborn_ctx, obj);
    assert_int_equal(mguard_cache_set(reborn_cache, MGUARD_CACHE_KEYS(obj), &v, 0), MGUARD_OK);
    record(guard, obj, attr, user);
}

static void test_heap_list_not_given_to_a_new_life_without_a_tracker(void **state)
{
    mguard_ctx *ctx = test_ctx(NULL, NULL);
    mguard_cache_desc cd;
    static int obj, g1, g2;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof(long);
    reborn_ctx = ctx;
    reborn_cache = mguard_cache_create(ctx, &cd);
    assert_non_null(reborn_cache);
    assert_int_equal(mguard_watch(ctx, &obj, &g1, reborn, NULL), MGUARD_OK);
    assert_int_equal(mguard_watch(ctx, &obj, &g2, record, NULL), MGUARD_OK);   /* a heap list */
    mguard_on_mutation(ctx, &obj, "a");
    assert_int_equal(ncalls, 2);
    assert_ptr_equal(calls[0].guard, &g1);
    assert_ptr_equal(calls[1].guard, &g2);
    assert_ctx_ok(ctx);
    assert_true(mguard_cache_contains(reborn_cache, MGUARD_CACHE_KEYS(&obj)));
    assert_int_equal(mgt_watcher_count(ctx, &obj), 0);
    assert_int_equal(mguard_mutation_count(ctx, &obj), 0);
    mguard_on_mutation(ctx, &obj, "b");   /* drops the entry, calls no one */
    assert_int_equal(ncalls, 2);
    assert_false(mguard_cache_contains(reborn_cache, MGUARD_CACHE_KEYS(&obj)));
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup(fn, reset)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_watching_the_same_guard_and_callback_again_answers_eexist, reset),
        T(test_unwatched_mutation_changes_nothing),
        T(test_watchers_fire_once_in_registration_order),
        T(test_destroyed_guard_is_skipped_and_not_counted),
        T(test_guard_address_reuse_does_not_revive_watcher),
        T(test_death_fires_watchers_with_null_attr_and_forgets_tracker),
        T(test_tracker_outlives_its_watchers),
        T(test_watcher_added_during_invalidation_waits_for_next_event),
        T(test_unwatch_removes_only_that_guard),
        T(test_unwatch_during_invalidation_cancels_pending_watcher),
        T(test_unwatch_of_a_new_object_leaves_the_old_ones_watchers),
        T(test_a_watcher_unwatching_itself_when_called_finds_nothing),
        T(test_unwatch_in_a_death_cancels_a_later_watcher_of_it),
        T(test_guard_destroyed_by_earlier_callback_is_skipped),
        T(test_object_that_guards_itself),
        T(test_set_field_macro_assigns_then_notifies),
        T(test_set_field_macro_evaluates_the_object_once),
        T(test_many_dead_guards_are_pruned),
        T(test_watch_bad_input),
        T(test_watch_out_of_memory_changes_nothing),
        T(test_heap_list_not_given_to_a_new_life_without_a_tracker),
        cmocka_unit_test(test_unwatch_without_a_watch_is_not_found),
        cmocka_unit_test(test_empty_and_very_long_attr_names_pass_through),
        cmocka_unit_test(test_mutating_an_unwatched_object_changes_nothing),
        cmocka_unit_test(test_unwatch_ignores_watchers_of_a_destroyed_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
