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

/* Out of memory in mguard_on_destroy (the buffer for a key in two tables
   of large values) switched to a path that handled one table at a time:
   key_death and the destructors ran while the key was still in the
   other table and still known, and before the watchers. The two phases
   must hold whatever the allocator does. */
typedef struct order_log {
    mguard_ctx *ctx;
    mguard_weak *t[2];
    char seen[16][16];
    int n;
    int key_known, key_in_a_table;
} order_log;

static void order_note(order_log *l, const char *what)
{
    if (l->n < 16) snprintf(l->seen[l->n++], sizeof l->seen[0], "%s", what);
}

static void order_key_death(const void *key, void *value, void *user)
{
    order_log *l = (order_log *)user;
    char what[16];
    snprintf(what, sizeof what, "death %c", ((char *)value)[0]);
    order_note(l, what);
    l->key_known += mgt_ctx_contains(l->ctx, key);
    l->key_in_a_table += mguard_weak_contains(l->t[0], key) + mguard_weak_contains(l->t[1], key);
}

static void order_dtor(void *value, void *user)
{
    char what[16];
    snprintf(what, sizeof what, "dtor %c", ((char *)value)[0]);
    order_note((order_log *)user, what);
}

static void order_inval(void *guard, const void *obj, const char *attr, void *user)
{
    order_log *l = (order_log *)user;
    (void)guard; (void)attr;
    order_note(l, "watcher");
    l->key_known += mgt_ctx_contains(l->ctx, obj);
}

static void test_death_out_of_memory_keeps_two_phases(void **state)
{
    test_log log; test_alloc al;
    order_log l;
    mguard_weak_desc d;
    static int obj, guard;
    char big[300];
    (void)state;
    memset(&l, 0, sizeof l);
    l.ctx = test_ctx(&log, &al);
    memset(&d, 0, sizeof d);
    d.value_size = sizeof big;
    d.value_dtor = order_dtor;
    d.key_death = order_key_death;
    d.user = &l;
    l.t[0] = mguard_weak_create(l.ctx, &d);
    l.t[1] = mguard_weak_create(l.ctx, &d);
    memset(big, 'A', sizeof big);
    assert_int_equal(mguard_weak_set(l.t[0], &obj, big), MGUARD_OK);
    memset(big, 'B', sizeof big);
    assert_int_equal(mguard_weak_set(l.t[1], &obj, big), MGUARD_OK);
    assert_int_equal(mguard_watch(l.ctx, &obj, &guard, order_inval, &l), MGUARD_OK);
    al.fail_at = al.calls + 1;   /* the death buffer */
    mguard_on_destroy(l.ctx, &obj);
    assert_int_equal(al.failures, 1);
    assert_int_equal(l.n, 5);
    assert_string_equal(l.seen[0], "watcher");
    assert_string_equal(l.seen[1], "death A");
    assert_string_equal(l.seen[2], "dtor A");
    assert_string_equal(l.seen[3], "death B");
    assert_string_equal(l.seen[4], "dtor B");
    assert_int_equal(l.key_known, 0);
    assert_int_equal(l.key_in_a_table, 0);
    assert_int_equal(log.errors, 1);
    assert_non_null(strstr(log.last, "mguard_on_destroy: out of memory; destroying "));
    assert_non_null(strstr(log.last, "'s values in place"));
    assert_int_equal(mguard_weak_count(l.t[0]) + mguard_weak_count(l.t[1]), 0);
    assert_ctx_ok(l.ctx);
    mguard_ctx_destroy(l.ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* mguard_weak_get (and so _contains and _get_ptr) read through a handle
   that was not a table, where every other table function checks it. */
static void test_weak_get_refuses_a_foreign_handle(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int key;
    mguard_weak *not_a_table = (mguard_weak *)(void *)ctx;
    (void)state;
    assert_null(mguard_weak_get(not_a_table, &key));
    assert_false(mguard_weak_contains(not_a_table, &key));
    assert_null(mguard_weak_get_ptr(not_a_table, &key));
    assert_int_equal(mguard_weak_count(not_a_table), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* A second mguard_on_destroy of an object from inside its own death (a
   double destroy in the program) was silent; it is now logged. */
typedef struct redestroy { mguard_ctx *ctx; int calls; } redestroy;

static void destroy_again(void *guard, const void *obj, const char *attr, void *user)
{
    redestroy *r = (redestroy *)user;
    (void)guard; (void)attr;
    r->calls++;
    mguard_on_destroy(r->ctx, obj);
}

static void test_destroy_from_own_death_is_logged(void **state)
{
    test_log log;
    redestroy r;
    static int obj, guard;
    (void)state;
    r.ctx = test_ctx(&log, NULL);
    r.calls = 0;
    assert_int_equal(mguard_watch(r.ctx, &obj, &guard, destroy_again, &r), MGUARD_OK);
    mguard_on_destroy(r.ctx, &obj);
    assert_int_equal(r.calls, 1);
    assert_int_equal(log.warnings, 1);
    assert_non_null(strstr(log.last, "is already being destroyed; ignored"));
    mguard_on_destroy(r.ctx, &obj);   /* afterwards: an unknown object, silent */
    assert_int_equal(log.count, 1);
    assert_ctx_ok(r.ctx);
    mguard_ctx_destroy(r.ctx);
}

/* mguard_weak_set of a dying key into a table of values over 256 bytes
   allocated its copy of the value before it checked the key, so with the
   allocator failing it answered ENOMEM where the call is misuse (EINVAL).
   Found by the fuzzer (tests/corpus/regress-dying-key-large-value). */
typedef struct late_set { mguard_weak *t; test_alloc *al; mguard_status st; } late_set;

static void set_dying_key(void *guard, const void *obj, const char *attr, void *user)
{
    late_set *x = (late_set *)user;
    char big[300];
    (void)guard; (void)attr;
    memset(big, 1, sizeof big);
    x->al->fail_at = x->al->calls + 1;
    x->st = mguard_weak_set(x->t, obj, big);
    x->al->fail_at = 0;
}

static void test_dying_key_is_einval_whatever_the_allocator_does(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d;
    late_set x;
    static int obj, guard;
    char want[128];
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = 300;
    x.t = mguard_weak_create(ctx, &d);
    x.al = &al;
    x.st = MGUARD_OK;
    mguard_watch(ctx, &obj, &guard, set_dying_key, &x);
    mguard_on_destroy(ctx, &obj);
    assert_int_equal(x.st, MGUARD_EINVAL);
    assert_int_equal(al.failures, 0);
    snprintf(want, sizeof want, "mguard_weak_set: %p is being destroyed; refused", (void *)&obj);
    assert_int_equal(log.count, 1);
    assert_string_equal(log.last, want);
    assert_int_equal(mguard_weak_count(x.t), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* A mguard_weak_set that could not grow the object registry logged
   "out of memory" twice (once in the registry, once in mguard_weak_set). */
static void test_failed_weak_set_logs_once(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d;
    mguard_weak *t;
    static int key;
    long v = 1;
    mguard_status st;
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof v;
    t = mguard_weak_create(ctx, &d);
    al.fail_at = al.calls + 1;   /* the registry's first growth */
    st = mguard_weak_set(t, &key, &v);
    assert_int_equal(st, MGUARD_ENOMEM);
    assert_int_equal(al.failures, 1);
    assert_int_equal(log.count, 1);
    assert_int_equal(log.errors, 1);
    assert_string_equal(log.last, "mguard_weak_set: out of memory");
    assert_int_equal(mguard_ctx_object_count(ctx), 0);
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* mguard_ctx_check inside a callback of the death of a named, entered
   component that entered a table before it was named: the table's
   destructor runs before the scope closes the component's frames, and the
   check used to answer EINVAL ("frame 0's component has no name"). */
static mguard_ctx *check_ctx;
static mguard_status check_seen;
static void check_in_dtor(void *v, void *u)
{
    (void)v; (void)u;
    check_seen = mguard_ctx_check(check_ctx);
}

static void test_check_passes_inside_a_named_components_death(void **state)
{
    static int comp;
    int v = 1;
    mguard_weak_desc d;
    mguard_weak *t;
    mguard_scope *s;
    (void)state;
    memset(&d, 0, sizeof d);
    check_ctx = test_ctx(NULL, NULL);
    d.value_size = sizeof v;
    d.value_dtor = check_in_dtor;
    t = mguard_weak_create(check_ctx, &d);
    s = mguard_scope_create(check_ctx, NULL);
    assert_int_equal(mguard_weak_set(t, &comp, &v), MGUARD_OK);
    assert_int_equal(mguard_scope_set_name(s, &comp, "Net"), MGUARD_OK);
    assert_int_equal(mguard_scope_enter(s, &comp), MGUARD_OK);
    check_seen = MGUARD_NOT_FOUND;
    mguard_on_destroy(check_ctx, &comp);
    assert_int_equal(check_seen, MGUARD_OK);
    assert_int_equal(mguard_scope_depth(s), 0);     /* every frame closed */
    assert_int_equal(mguard_ctx_check(check_ctx), MGUARD_OK);
    mguard_ctx_destroy(check_ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_survive_registry_growth),
        cmocka_unit_test(test_unwatch_ignores_watchers_of_a_destroyed_guard),
        cmocka_unit_test(test_death_out_of_memory_keeps_two_phases),
        cmocka_unit_test(test_weak_get_refuses_a_foreign_handle),
        cmocka_unit_test(test_destroy_from_own_death_is_logged),
        cmocka_unit_test(test_dying_key_is_einval_whatever_the_allocator_does),
        cmocka_unit_test(test_failed_weak_set_logs_once),
        cmocka_unit_test(test_check_passes_inside_a_named_components_death),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
