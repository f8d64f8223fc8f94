/* Lifetimes and re-entrancy: the two-phase destructor hook, callbacks that
   call back into the library, death storms; objects destroyed twice or
   registered while they die, and the regressions of the death path. */
#include "common.h"

static mguard_ctx *ctx;
static mguard_weak *t1, *t2;
static test_log lg;
static test_alloc al;
static char objs[64];
static int events[256];
static int nevents;

static int setup(void **state)
{
    (void)state;
    ctx = test_ctx(&lg, &al);
    t1 = t2 = NULL;
    nevents = 0;
    return ctx ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
    return 0;
}

static mguard_weak *mk(mguard_value_dtor dtor, mguard_key_death_fn death)
{
    mguard_weak_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(int);
    d.value_dtor = dtor;
    d.key_death = death;
    return mguard_weak_create(ctx, &d);
}

static void seti(mguard_weak *t, int key_index, int v)
{
    assert_int_equal(mguard_weak_set(t, &objs[key_index], &v), MGUARD_OK);
}

/* ---- the two phases -------------------------------------------------- */

/* During phase 2 the dead object is gone from every table and refs to it
   read NULL, whichever callback runs first. */
static mguard_ref probe_ref;
static void probe_dtor(void *value, void *user)
{
    int v;
    (void)user;
    memcpy(&v, value, sizeof v);
    events[nevents++] = v;
    assert_null(mguard_weak_get(t1, &objs[0]));
    assert_null(mguard_weak_get(t2, &objs[0]));
    assert_null(mguard_ref_get(ctx, probe_ref));
    assert_false(mgt_ctx_contains(ctx, &objs[0]));
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
}
static void probe_watch(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)user;
    assert_null(attr);
    assert_ptr_equal(obj, &objs[0]);
    events[nevents++] = 100;
    assert_null(mguard_weak_get(t1, &objs[0]));
    assert_null(mguard_ref_get(ctx, probe_ref));
}

static void test_callbacks_see_the_object_fully_dead(void **state)
{
    (void)state;
    t1 = mk(probe_dtor, NULL);
    t2 = mk(probe_dtor, NULL);
    seti(t2, 0, 2);   /* obj 0 enters t2 first, then t1 */
    seti(t1, 0, 1);
    probe_ref = mguard_ref_make(ctx, &objs[0]);
    mguard_watch(ctx, &objs[0], &objs[1], probe_watch, NULL);
    mguard_on_destroy(ctx, &objs[0]);
    /* watchers first, then values in the order obj entered the tables */
    assert_int_equal(nevents, 3);
    assert_int_equal(events[0], 100);
    assert_int_equal(events[1], 2);
    assert_int_equal(events[2], 1);
}

/* key_death runs before the destructor, only for deaths. */
static void death_note(const void *key, void *value, void *user)
{
    int v;
    (void)user;
    memcpy(&v, value, sizeof v);
    assert_ptr_equal(key, &objs[3]);
    events[nevents++] = 1000 + v;
}
static void plain_dtor(void *value, void *user)
{
    int v;
    (void)user;
    memcpy(&v, value, sizeof v);
    events[nevents++] = v;
}

static void test_key_death_callback_only_for_deaths(void **state)
{
    (void)state;
    t1 = mk(plain_dtor, death_note);
    seti(t1, 3, 7);
    seti(t1, 4, 8);
    mguard_weak_take(t1, &objs[4], NULL);
    mguard_on_destroy(ctx, &objs[3]);
    assert_int_equal(nevents, 3);
    assert_int_equal(events[0], 8);
    assert_int_equal(events[1], 1007);
    assert_int_equal(events[2], 7);
}

/* ---- callbacks that call back in -------------------------------------- */

/* Each value names the next object to destroy: a chain reaction. */
static void chain_dtor(void *value, void *user)
{
    int next;
    (void)user;
    memcpy(&next, value, sizeof next);
    events[nevents++] = next;
    if (next >= 0) mguard_on_destroy(ctx, &objs[next]);
}

static void test_destructor_destroys_other_objects_each_once(void **state)
{
    int i;
    (void)state;
    t1 = mk(chain_dtor, NULL);
    for (i = 0; i < 10; i++) seti(t1, i, i + 1 < 10 ? i + 1 : -1);
    mguard_on_destroy(ctx, &objs[0]);
    assert_int_equal(nevents, 10);
    for (i = 0; i < 9; i++) assert_int_equal(events[i], i + 1);
    assert_int_equal(events[9], -1);
    assert_int_equal(mguard_weak_count(t1), 0);
    assert_int_equal(mgt_objects(ctx), 0);
}

static void self_destroy_dtor(void *value, void *user)
{
    (void)value; (void)user;
    events[nevents++] = 1;
    mguard_on_destroy(ctx, &objs[0]);      /* the object dying right now */
}

/* A second mguard_on_destroy from inside the death changes nothing and is
   logged (a double destroy in the program); after the death it is silent
   (the address is simply unknown). */
static void test_destroy_hook_called_again_from_its_own_callback_is_logged_and_ignored(void **state)
{
    (void)state;
    t1 = mk(self_destroy_dtor, NULL);
    t2 = mk(self_destroy_dtor, NULL);
    seti(t1, 0, 0);
    seti(t2, 0, 0);
    lg.count = lg.warnings = 0;
    mguard_on_destroy(ctx, &objs[0]);
    assert_int_equal(nevents, 2);
    assert_int_equal(lg.count, 2);      /* one per destructor */
    assert_int_equal(lg.warnings, 2);
    assert_int_equal(lg.code, MGUARD_LOG_ON_DESTROY_TWICE);
    mguard_on_destroy(ctx, &objs[0]);   /* after the death: unknown, silent */
    assert_int_equal(nevents, 2);
    assert_int_equal(lg.count, 2);
    assert_int_equal(mguard_weak_count(t1) + mguard_weak_count(t2), 0);
}

/* A callback may not register the object that is dying (it is about to be
   freed): refused with EINVAL and a log line. */
static void resurrect_dtor(void *value, void *user)
{
    int v = 5;
    (void)value; (void)user;
    assert_int_equal(mguard_weak_set(t2, &objs[0], &v), MGUARD_EINVAL);
    assert_true(mguard_ref_is_null(mguard_ref_make(ctx, &objs[0])));
    assert_int_equal(mguard_watch(ctx, &objs[0], &objs[1], probe_watch, NULL), MGUARD_EINVAL);
    assert_int_equal(mguard_watch(ctx, &objs[1], &objs[0], probe_watch, NULL), MGUARD_EINVAL);
    assert_int_equal(mguard_gen_tag(ctx, &objs[0]), MGUARD_EINVAL);
    /* other objects are fine */
    assert_int_equal(mguard_weak_set(t2, &objs[1], &v), MGUARD_OK);
    events[nevents++] = 1;
}

static void test_dying_object_cannot_be_registered_from_its_callbacks(void **state)
{
    (void)state;
    t1 = mk(resurrect_dtor, NULL);
    t2 = mk(NULL, NULL);
    seti(t1, 0, 0);
    lg.warnings = 0;
    mguard_on_destroy(ctx, &objs[0]);
    assert_int_equal(nevents, 1);
    assert_false(mgt_ctx_contains(ctx, &objs[0]));
    assert_int_equal(mguard_weak_count(t2), 1);
    /* one line per refusal: weak_set, ref_make, watch as object, watch
       as guard, gen_tag */
    assert_int_equal(lg.warnings, 5);
    assert_int_equal(lg.code, MGUARD_LOG_OBJECT_DYING);
}

/* A refusal of a dying object comes before any reservation: with the
   allocator failing, a watch of a new object by the dying guard (or of the
   dying object) is still EINVAL and OBJECT_DYING, never ENOMEM. */
static mguard_status oom_watch_st[2];
static long oom_watch_failures;
static void oom_watch_on_death(void *guard, const void *obj, const char *attr, void *user)
{
    long failures = al.failures;
    (void)guard; (void)attr; (void)user;
    al.fail_at = al.calls + 1;
    oom_watch_st[0] = mguard_watch(ctx, &objs[2], &objs[0], probe_watch, NULL);
    oom_watch_st[1] = mguard_watch(ctx, obj, &objs[3], probe_watch, NULL);
    oom_watch_failures = al.failures - failures;
    al.fail_at = 0;
    events[nevents++] = lg.code == MGUARD_LOG_OBJECT_DYING ? 2 : -1;
}

static void test_a_dying_guard_is_refused_before_any_allocation(void **state)
{
    static char filler[4096];
    mguard_status st = MGUARD_OK;
    int i;
    (void)state;
    assert_int_equal(mguard_watch(ctx, &objs[0], &objs[1], oom_watch_on_death, NULL), MGUARD_OK);
    /* tag objects until the registry is full: the next new object needs memory */
    for (i = 0; i < (int)sizeof filler && st == MGUARD_OK; i++) {
        al.fail_at = al.calls + 1;
        st = mguard_gen_tag(ctx, &filler[i]);
        al.fail_at = 0;
    }
    assert_int_equal(st, MGUARD_ENOMEM);
    lg.warnings = 0;
    mguard_on_destroy(ctx, &objs[0]);
    assert_int_equal(nevents, 1);
    assert_int_equal(events[0], 2);
    assert_int_equal(oom_watch_st[0], MGUARD_EINVAL);
    assert_int_equal(oom_watch_st[1], MGUARD_EINVAL);
    assert_int_equal(oom_watch_failures, 0);   /* nothing was asked of the allocator */
    assert_int_equal(lg.warnings, 2);
    assert_false(mgt_ctx_contains(ctx, &objs[2]));
    assert_false(mgt_ctx_contains(ctx, &objs[3]));
}

/* A destructor that destroys another table (not the one being walked). */
static void destroy_t2_dtor(void *value, void *user)
{
    (void)value; (void)user;
    events[nevents++] = 1;
    if (t2) {
        mguard_weak *t = t2;
        t2 = NULL;
        mguard_weak_destroy(t);
    }
}

static void test_destructor_destroys_another_table_holding_the_dead_key(void **state)
{
    static int d2calls;
    (void)state;
    d2calls = 0;
    t1 = mk(destroy_t2_dtor, NULL);
    t2 = mk(plain_dtor, NULL);
    seti(t1, 0, 0);
    seti(t2, 0, 50);   /* already detached and copied when t2 dies */
    seti(t2, 1, 51);
    mguard_on_destroy(ctx, &objs[0]);
    /* t1's dtor (1), then t2's destroy runs 51; the dead key's value 50
       was copied in phase 1 and is destroyed exactly once after */
    assert_int_equal(nevents, 3);
    assert_int_equal(events[0], 1);
    assert_int_equal(events[1], 51);
    assert_int_equal(events[2], 50);
    (void)d2calls;
}

/* A destructor that destroys the table being cleared: the destroy is
   finished by the clear when it returns, every value once. */
static void destroy_t1_dtor(void *value, void *user)
{
    int v;
    (void)user;
    memcpy(&v, value, sizeof v);
    events[nevents++] = v;
    if (v == 1) mguard_weak_destroy(t1);
    if (v == 1) mguard_weak_destroy(t1);   /* twice: refused, logged */
}

static void test_destroying_the_table_being_cleared_is_deferred(void **state)
{
    int i;
    (void)state;
    t1 = mk(destroy_t1_dtor, NULL);
    for (i = 0; i < 4; i++) seti(t1, i, i);
    lg.warnings = 0;
    mguard_weak_clear(t1);
    t1 = NULL;
    assert_int_equal(nevents, 4);
    for (i = 0; i < 4; i++) assert_int_equal(events[i], i);
    assert_int_equal(lg.warnings, 1);
    assert_int_equal(mgt_objects(ctx), 0);
}

/* Sets and removes on the table being cleared, from its destructors. */
static void churn_dtor(void *value, void *user)
{
    int v, nv;
    (void)user;
    memcpy(&v, value, sizeof v);
    events[nevents++] = v;
    if (v == 0) {
        mguard_weak_take(t1, &objs[2], NULL);          /* a later one: destroyed now */
        nv = 99;
        mguard_weak_set(t1, &objs[10], &nv);       /* a new one: survives the clear */
    }
}

static void test_clear_with_destructors_that_change_the_table(void **state)
{
    int i;
    (void)state;
    t1 = mk(churn_dtor, NULL);
    for (i = 0; i < 4; i++) seti(t1, i, i);
    mguard_weak_clear(t1);
    assert_int_equal(nevents, 4);
    assert_int_equal(events[0], 0);
    assert_int_equal(events[1], 2);
    assert_int_equal(events[2], 1);
    assert_int_equal(events[3], 3);
    assert_int_equal(mguard_weak_count(t1), 1);
    assert_non_null(mguard_weak_get(t1, &objs[10]));
}

/* Invalidation that mutates and destroys. */
static void mutate_in_watch(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)user;
    events[nevents++] = attr ? attr[0] : 0;
    if (attr && attr[0] == 'a') {
        mguard_on_mutation(ctx, obj, "b");         /* nested event: nobody left to call */
        mguard_on_destroy(ctx, obj);               /* and the object dies */
    }
}

static void test_invalidate_callback_mutates_and_destroys_its_object(void **state)
{
    (void)state;
    t1 = mk(plain_dtor, NULL);
    seti(t1, 0, 7);
    mguard_watch(ctx, &objs[0], &objs[1], mutate_in_watch, NULL);
    mguard_watch(ctx, &objs[0], &objs[2], mutate_in_watch, NULL);
    mguard_on_mutation(ctx, &objs[0], "a");
    /* first watcher: 'a' then destroys obj (value 7 destroyed); second
       watcher of the same mutation still fires once with 'a' */
    assert_int_equal(nevents, 3);
    assert_int_equal(events[0], 'a');
    assert_int_equal(events[1], 7);
    assert_int_equal(events[2], 'a');
    assert_false(mgt_ctx_contains(ctx, &objs[0]));
    assert_int_equal(mguard_weak_count(t1), 0);
}

static void destroy_ctx_in_callback(void *value, void *user)
{
    (void)value; (void)user;
    events[nevents++] = 1;
    mguard_ctx_destroy(ctx);   /* refused */
}

static void test_context_destroy_inside_callback_is_refused(void **state)
{
    (void)state;
    t1 = mk(destroy_ctx_in_callback, NULL);
    seti(t1, 0, 0);
    lg.warnings = 0;
    mguard_on_destroy(ctx, &objs[0]);
    assert_int_equal(nevents, 1);
    assert_int_equal(lg.warnings, 1);
    assert_int_equal(lg.code, MGUARD_LOG_DESTROY_IN_CALLBACK);
}

/* ---- death storms ----------------------------------------------------- */

/* Every destructor destroys a pseudo-random other object; every watcher
   destroys one too. Every value is destroyed exactly once. */
static unsigned rng = 12345;
static unsigned next_rand(void) { rng = rng * 1103515245u + 12345u; return (rng >> 16) & 0x7fff; }
static int storm_seen[64];
static void storm_dtor(void *value, void *user)
{
    int v;
    (void)user;
    memcpy(&v, value, sizeof v);
    storm_seen[v % 64]++;
    mguard_on_destroy(ctx, &objs[next_rand() % 64]);
}
static void storm_watch(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
    mguard_on_destroy(ctx, &objs[next_rand() % 64]);
}

static void test_death_storm_destroys_every_value_exactly_once(void **state)
{
    int round, i;
    (void)state;
    t1 = mk(storm_dtor, NULL);
    t2 = mk(storm_dtor, NULL);
    for (round = 0; round < 20; round++) {
        memset(storm_seen, 0, sizeof storm_seen);
        for (i = 0; i < 32; i++) {
            seti(t1, i, i);
            seti(t2, 32 + i, 32 + i);
            mguard_watch(ctx, &objs[i], &objs[63 - i], storm_watch, NULL);
        }
        mguard_on_destroy(ctx, &objs[next_rand() % 64]);
        for (i = 0; i < 64; i++) mguard_on_destroy(ctx, &objs[(i * 37 + round) % 64]);
        for (i = 0; i < 64; i++) assert_int_equal(storm_seen[i], 1);
        assert_int_equal(mguard_weak_count(t1), 0);
        assert_int_equal(mguard_weak_count(t2), 0);
        assert_int_equal(mgt_objects(ctx), 0);
        assert_ctx_ok(ctx);
    }
}

/* ---- allocation failure on the death path ----------------------------- */

/* An object in many tables with big values needs a heap block for phase
   1; if that fails, the tables are handled one at a time, still exactly
   once per value. */
typedef struct big { int id; char pad[400]; } big;
static int big_seen[8];
static void big_dtor(void *value, void *user)
{
    big b;
    (void)user;
    memcpy(&b, value, sizeof b);
    big_seen[b.id]++;
}

static void test_death_without_memory_still_destroys_each_value_once(void **state)
{
    mguard_weak *ts[8];
    mguard_weak_desc d;
    big b;
    int i;
    (void)state;
    memset(&d, 0, sizeof d);
    memset(&b, 0, sizeof b);
    memset(big_seen, 0, sizeof big_seen);
    d.value_size = sizeof(big);
    d.value_dtor = big_dtor;
    for (i = 0; i < 8; i++) {
        ts[i] = mguard_weak_create(ctx, &d);
        b.id = i;
        assert_int_equal(mguard_weak_set(ts[i], &objs[0], &b), MGUARD_OK);
    }
    lg.errors = 0;
    al.fail_at = al.calls + 1;   /* the phase-1 block */
    mguard_on_destroy(ctx, &objs[0]);
    al.fail_at = 0;
    assert_int_equal(lg.errors, 1);
    for (i = 0; i < 8; i++) {
        assert_int_equal(big_seen[i], 1);
        assert_int_equal(mguard_weak_count(ts[i]), 0);
    }
    assert_false(mgt_ctx_contains(ctx, &objs[0]));
}

/* While an out-of-memory death destroys a value where it lies, its table
   is pinned: an insert that would move the entries (here a compaction: the
   array is full and 3 of its 8 entries are tombstones) answers ENOMEM, so
   the bytes under the running destructor stay put. */
typedef struct wide { char fill[600]; } wide;   /* over the death path's stack buffer */
static mguard_weak *pin_table;
static int pin_calls, pin_intact;
static mguard_status pin_status;
static void pin_dtor(void *value, void *user)
{
    wide w;
    int i;
    (void)user;
    if (((char *)value)[0] != 'D') return;   /* only the dying key's value */
    pin_calls++;
    memset(&w, 'N', sizeof w);
    pin_status = mguard_weak_set(pin_table, &objs[20], &w);
    for (i = 0, pin_intact = 1; i < (int)sizeof w; i++) pin_intact &= ((char *)value)[i] == 'D';
}

static void test_out_of_memory_death_pins_its_table_against_moves(void **state)
{
    mguard_weak_desc d;
    wide w;
    int i;
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(wide);
    d.value_dtor = pin_dtor;
    pin_table = mguard_weak_create(ctx, &d);
    assert_non_null(pin_table);
    pin_calls = pin_intact = 0;
    pin_status = MGUARD_OK;
    for (i = 0; i < 8; i++) {   /* k0..k7 fill the 8 entries; k3 will die */
        memset(&w, i == 3 ? 'D' : 'a' + i, sizeof w);
        assert_int_equal(mguard_weak_set(pin_table, &objs[i], &w), MGUARD_OK);
    }
    for (i = 0; i < 3; i++) assert_int_equal(mguard_weak_take(pin_table, &objs[i], NULL), MGUARD_OK);
    lg.count = lg.errors = 0;
    al.fail_at = al.calls + 1;   /* the phase-1 block */
    mguard_on_destroy(ctx, &objs[3]);
    al.fail_at = 0;
    assert_int_equal(pin_calls, 1);
    assert_int_equal(pin_status, MGUARD_ENOMEM);
    assert_int_equal(pin_intact, 1);
    assert_int_equal(lg.count, 2);
    assert_int_equal(lg.errors, 2);
    assert_int_equal(lg.code, MGUARD_LOG_WEAK_PINNED);
    assert_int_equal(mguard_weak_count(pin_table), 4);
    assert_null(mguard_weak_get(pin_table, &objs[20]));
    /* unpinned: the same insert compacts and succeeds */
    memset(&w, 'N', sizeof w);
    assert_int_equal(mguard_weak_set(pin_table, &objs[20], &w), MGUARD_OK);
    assert_int_equal(mguard_weak_count(pin_table), 5);
    assert_ctx_ok(ctx);
}

/* A death calls the tables' callbacks in the order the key entered them,
   whatever slots the index gave its entries: a key that left its first
   table and came back (taking its old slot again, ahead of its other
   entries on its probe) entered that table last. */
static int entered_seen[16], nentered;
static void entered_dtor(void *value, void *user)
{
    int v;
    (void)user;
    memcpy(&v, value, sizeof v);
    if (nentered < 16) entered_seen[nentered] = v;
    nentered++;
}

static void test_death_calls_tables_in_the_order_the_key_entered_them(void **state)
{
    mguard_weak *t[3];
    int i;
    (void)state;
    nentered = 0;
    for (i = 0; i < 3; i++) t[i] = mk(entered_dtor, NULL);
    for (i = 0; i < 3; i++) seti(t[i], 0, i);
    assert_int_equal(mguard_weak_take(t[0], &objs[0], NULL), MGUARD_OK);   /* destroys 0 */
    seti(t[0], 0, 3);
    mguard_on_destroy(ctx, &objs[0]);
    assert_int_equal(nentered, 4);
    assert_int_equal(entered_seen[0], 0);
    assert_int_equal(entered_seen[1], 1);
    assert_int_equal(entered_seen[2], 2);
    assert_int_equal(entered_seen[3], 3);
}

/* A key in more tables than a death's stack list holds (8): the death
   lists them on the heap, and still calls each table's destructor once,
   in the order the key entered them (here its first table last: it left
   and came back). */
static void test_death_of_a_key_in_many_tables_calls_each_once_in_order(void **state)
{
    mguard_weak *t[12];
    int i;
    (void)state;
    nentered = 0;
    for (i = 0; i < 12; i++) t[i] = mk(entered_dtor, NULL);
    for (i = 0; i < 12; i++) seti(t[i], 0, i);
    assert_int_equal(mguard_weak_take(t[0], &objs[0], NULL), MGUARD_OK);   /* destroys 0 */
    seti(t[0], 0, 12);
    nentered = 0;
    mguard_on_destroy(ctx, &objs[0]);
    assert_int_equal(al.failures, 0);
    assert_int_equal(nentered, 12);
    for (i = 0; i < 12; i++) assert_int_equal(entered_seen[i], i + 1);
    for (i = 0; i < 12; i++) assert_int_equal(mguard_weak_count(t[i]), 0);
    assert_false(mgt_ctx_contains(ctx, &objs[0]));
}

/* An out-of-memory death of a key in more tables than a death's stack
   list holds (the heap list cannot be had: values destroyed in place),
   with values kept in the index's slots. The first key_death grows the
   index: the rehash moves every slot, the dying key's pending ones too.
   Each table still hands its own value (a copy) to key_death and then the
   destructor, once, in the order the key entered the tables; meanwhile no
   table holds the key and no walk shows it; the other keys keep their
   values. */
#define GROW_TABLES 9
static mguard_weak *grow_t[GROW_TABLES], *grow_other;
static long grow_seen[2 * GROW_TABLES];
static int ngrow, grow_visible;
static void grow_key_death(const void *key, void *value, void *user)
{
    static char many[600];
    mguard_weak_iter it;
    long v;
    int i;
    (void)user;
    if (ngrow == 0)
        for (i = 0; i < 600; i++) { v = i; assert_int_equal(mguard_weak_set(grow_other, &many[i], &v), MGUARD_OK); }
    memcpy(&v, value, sizeof v);
    if (ngrow < 2 * GROW_TABLES) grow_seen[ngrow] = v;
    ngrow++;
    for (i = 0; i < GROW_TABLES; i++) {
        grow_visible += mguard_weak_contains(grow_t[i], key);
        it = mguard_weak_iterate(grow_t[i]);
        while (mguard_weak_next(&it)) grow_visible += it.key == key;
    }
}
static void grow_dtor(void *value, void *user)
{
    long v;
    (void)user;
    memcpy(&v, value, sizeof v);
    if (ngrow < 2 * GROW_TABLES) grow_seen[ngrow] = -v;
    ngrow++;
}

static void test_out_of_memory_death_survives_a_callback_that_grows_the_index(void **state)
{
    mguard_weak_desc d;
    long v;
    int i;
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.value_dtor = grow_dtor;
    d.key_death = grow_key_death;
    for (i = 0; i < GROW_TABLES; i++) {
        grow_t[i] = mguard_weak_create(ctx, &d);
        v = i;
        assert_int_equal(mguard_weak_set(grow_t[i], &objs[1], &v), MGUARD_OK);
        v = 100 + i;
        assert_int_equal(mguard_weak_set(grow_t[i], &objs[0], &v), MGUARD_OK);
    }
    grow_other = long_table(ctx, NULL);
    ngrow = grow_visible = 0;
    lg.errors = 0;
    al.fail_at = al.calls + 1;   /* the death's heap list */
    mguard_on_destroy(ctx, &objs[0]);
    al.fail_at = 0;
    assert_int_equal(al.failures, 1);
    assert_int_equal(lg.errors, 1);
    assert_int_equal(ngrow, 2 * GROW_TABLES);
    for (i = 0; i < GROW_TABLES; i++) {
        assert_int_equal(grow_seen[2 * i], 100 + i);
        assert_int_equal(grow_seen[2 * i + 1], -(100 + i));
    }
    assert_int_equal(grow_visible, 0);
    assert_int_equal(mguard_weak_count(grow_other), 600);
    for (i = 0; i < GROW_TABLES; i++) {
        assert_int_equal(mguard_weak_count(grow_t[i]), 1);
        assert_int_equal(*MGUARD_WEAK_GET(grow_t[i], &objs[1], long), i);
    }
    assert_false(mgt_ctx_contains(ctx, &objs[0]));
    assert_int_equal(mgt_objects(ctx), 601);
    assert_ctx_ok(ctx);
    for (i = 0; i < GROW_TABLES; i++) mguard_weak_destroy(grow_t[i]);   /* their destructors, not to count */
}

/* Issue 11, defect 5: a scope, dynamism or ledger handle created by a
   value destructor during mguard_ctx_destroy leaked, and its internal table
   was freed by the still-running table loop (a later destructor using it
   read freed memory). Creating anything on a dying context is refused. */
typedef struct dying_maker {
    mguard_ctx *ctx;
    int calls, made;
    char lines[4][512];
    test_log *log;
} dying_maker;

static void make_handles_on_death(void *value, void *user)
{
    dying_maker *m = (dying_maker *)user;
    mguard_weak_desc wd;
    mguard_scope *s;
    int comp;
    (void)value;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof(int);
    m->calls++;
    s = mguard_scope_create(m->ctx, NULL);
    snprintf(m->lines[0], sizeof m->lines[0], "%s", m->log->last);
    /* a second destructor uses what the first made: no read of freed memory */
    m->made += s != NULL;
    if (s) m->made += mguard_scope_name(s, &comp) != NULL;
    m->made += mguard_dyn_create(m->ctx) != NULL;
    snprintf(m->lines[1], sizeof m->lines[1], "%s", m->log->last);
    m->made += mguard_ledger_create(m->ctx, NULL) != NULL;
    snprintf(m->lines[2], sizeof m->lines[2], "%s", m->log->last);
    m->made += mguard_weak_create(m->ctx, &wd) != NULL;
    snprintf(m->lines[3], sizeof m->lines[3], "%s", m->log->last);
}

static void test_nothing_can_be_created_on_a_dying_context(void **state)
{
    test_log log;
    test_alloc al;
    dying_maker m;
    mguard_weak_desc d;
    mguard_weak *t;
    static int k1, k2;
    int v = 7;
    (void)state;
    memset(&m, 0, sizeof m);
    m.ctx = test_ctx(&log, &al);
    m.log = &log;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof v;
    d.value_dtor = make_handles_on_death;
    d.user = &m;
    t = mguard_weak_create(m.ctx, &d);
    assert_int_equal(mguard_weak_set(t, &k1, &v), MGUARD_OK);
    assert_int_equal(mguard_weak_set(t, &k2, &v), MGUARD_OK);
    mguard_ctx_destroy(m.ctx);
    assert_int_equal(m.calls, 2);
    assert_int_equal(m.made, 0);
    assert_int_equal(log.warnings, 8);
    assert_string_equal(m.lines[0], "mguard_scope_create: refused: the context is being destroyed");
    assert_string_equal(m.lines[1], "mguard_dyn_create: refused: the context is being destroyed");
    assert_string_equal(m.lines[2], "mguard_ledger_create: refused: the context is being destroyed");
    assert_string_equal(m.lines[3], "mguard_weak_create: refused: the context is being destroyed");
    assert_int_equal(al.live_blocks, 0);   /* nothing leaked */
}

/* A release hook run by the context's destroy can neither clone a ledger
   nor make a diff result: either would outlive its context. */
typedef struct dying_ledger_hook {
    mguard_ledger *other;     /* a ledger still alive when the hook runs */
    test_log *log;
    mguard_ledger *clone;
    mguard_ledger_diff_result *diff;
    mguard_status diff_status;
    char lines[2][512];
} dying_ledger_hook;

static void clone_and_diff_on_release(void *p, void *user)
{
    dying_ledger_hook *h = (dying_ledger_hook *)user;
    (void)p;
    h->clone = mguard_ledger_clone(h->other);
    snprintf(h->lines[0], sizeof h->lines[0], "%s", h->log->last);
    h->diff_status = mguard_ledger_diff(h->other, h->other, &h->diff);
    snprintf(h->lines[1], sizeof h->lines[1], "%s", h->log->last);
}

static void test_no_clone_or_diff_is_made_while_the_context_dies(void **state)
{
    test_log log;
    test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_ledger_desc ld;
    mguard_ledger *b;
    dying_ledger_hook h;
    static int obj;
    (void)state;
    memset(&h, 0, sizeof h);
    h.log = &log;
    h.clone = (mguard_ledger *)&obj;                   /* overwritten by the hook */
    h.diff = (mguard_ledger_diff_result *)&obj;
    memset(&ld, 0, sizeof ld);
    ld.release = clone_and_diff_on_release;
    ld.user = &h;
    h.other = mguard_ledger_create(ctx, NULL);         /* destroyed second */
    b = mguard_ledger_create(ctx, &ld);                /* destroyed first: its release runs the hook */
    assert_non_null(h.other);
    assert_int_equal(mguard_ledger_track(b, &obj, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    mguard_ctx_destroy(ctx);
    assert_null(h.clone);
    assert_int_equal(h.diff_status, MGUARD_EINVAL);
    assert_null(h.diff);
    assert_int_equal(log.warnings, 2);
    assert_string_equal(h.lines[0], "mguard_ledger_clone: refused: the context is being destroyed");
    assert_string_equal(h.lines[1], "mguard_ledger_diff: refused: the context is being destroyed");
    assert_int_equal(al.live_blocks, 0);
}

/* ---- misuse and regressions (each test makes its own context) -------- */

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
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_ON_DESTROY_TWICE);
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
    assert_false(mguard_gen_is_dynamic(ctx, NULL, NULL));
    assert_false(mguard_gen_is_dynamic(ctx, NULL, NULL));
    assert_null(mguard_intern(ctx, NULL));
    EXPECT_NO_LOG(log);
    assert_int_equal(mguard_watch(ctx, NULL, &obj, inval_nop, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_watch(ctx, &obj, NULL, inval_nop, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_watch(ctx, &obj, &obj, NULL, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_unwatch(ctx, NULL, &obj), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_unwatch(ctx, &obj, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_gen_tag(ctx, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_gen_mark_class_dynamic(ctx, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mgt_objects(ctx), 0);
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

/* Regression: out of memory in mguard_on_destroy (the buffer for a key in
   two tables of large values) switched to a path that handled one table at
   a time: key_death and the destructors ran while the key was still in the
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

/* A context and two tables of 300-byte values whose callbacks note into
   l: a death of a key held by both needs a heap buffer for its copies. */
static void order_setup(order_log *l, test_log *log, test_alloc *al)
{
    mguard_weak_desc d;
    memset(l, 0, sizeof *l);
    l->ctx = test_ctx(log, al);
    memset(&d, 0, sizeof d);
    d.value_size = 300;
    d.value_dtor = order_dtor;
    d.key_death = order_key_death;
    d.user = l;
    l->t[0] = mguard_weak_create(l->ctx, &d);
    l->t[1] = mguard_weak_create(l->ctx, &d);
}

/* The death of obj with its buffer's allocation failing: "death A",
   "dtor A", "death B", "dtor B" noted from seen[from], obj unknown and in
   no table meanwhile, one error logged. */
static void order_death_in_place(order_log *l, test_log *log, test_alloc *al, const void *obj, int from)
{
    al->fail_at = al->calls + 1;   /* the death buffer */
    mguard_on_destroy(l->ctx, obj);
    assert_int_equal(al->failures, 1);
    assert_int_equal(l->n, from + 4);
    assert_string_equal(l->seen[from], "death A");
    assert_string_equal(l->seen[from + 1], "dtor A");
    assert_string_equal(l->seen[from + 2], "death B");
    assert_string_equal(l->seen[from + 3], "dtor B");
    assert_int_equal(l->key_known, 0);
    assert_int_equal(l->key_in_a_table, 0);
    assert_int_equal(log->errors, 1);
    assert_int_equal(log->code, MGUARD_LOG_ON_DESTROY_IN_PLACE);
}

/* The out-of-memory death's error line names the object (describe, issue 25). */
static void ignore_value(void *value, void *user) { (void)value; (void)user; }
static void test_death_out_of_memory_line_names_the_object(void **state)
{
    test_log log;
    test_alloc al;
    test_namer nm;
    mguard_ctx *ctx;
    mguard_weak_desc d;
    mguard_weak *t;
    static int obj;
    char big[600];   /* more than the death's stack buffer */
    (void)state;
    memset(&nm, 0, sizeof nm);
    memset(&d, 0, sizeof d);
    memset(big, 'A', sizeof big);
    test_namer_add(&nm, &obj, "obj");
    ctx = test_named_ctx(&log, &nm, false, &al);
    d.value_size = sizeof big;
    d.value_dtor = ignore_value;   /* something to call: the value is copied out */
    t = mguard_weak_create(ctx, &d);
    assert_int_equal(mguard_weak_set(t, &obj, big), MGUARD_OK);
    al.fail_at = al.calls + 1;   /* the death buffer */
    mguard_on_destroy(ctx, &obj);
    EXPECT_LOG_TEXT(log, log.errors, MGUARD_LOG_ON_DESTROY_IN_PLACE, "mguard_on_destroy: out of memory; destroying obj's values in place");
    assert_int_equal(nm.calls, 1);
    mguard_weak_destroy(t);
    test_ctx_finish(ctx, &al);
}

static void test_death_out_of_memory_keeps_two_phases(void **state)
{
    test_log log; test_alloc al;
    order_log l;
    static int obj, guard;
    char big[300];
    (void)state;
    order_setup(&l, &log, &al);
    memset(big, 'A', sizeof big);
    assert_int_equal(mguard_weak_set(l.t[0], &obj, big), MGUARD_OK);
    memset(big, 'B', sizeof big);
    assert_int_equal(mguard_weak_set(l.t[1], &obj, big), MGUARD_OK);
    assert_int_equal(mguard_watch(l.ctx, &obj, &guard, order_inval, &l), MGUARD_OK);
    order_death_in_place(&l, &log, &al, &obj, 1);
    assert_string_equal(l.seen[0], "watcher");
    assert_int_equal(mguard_weak_count(l.t[0]) + mguard_weak_count(l.t[1]), 0);
    assert_ctx_ok(l.ctx);
    mguard_ctx_destroy(l.ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* The out-of-memory death's error line goes to a logger that may call
   back in (found by review): it used to be logged after the record was
   read and before phase 1, so a logger that put obj in another table left
   a dangling key there, and one that grew the registry left
   mguard__death_in_place reading the freed record array (ASan). Now it is
   logged in phase 2: obj is dying (refused) and nothing points into the
   registry. */
typedef struct oom_relog {
    mguard_ctx *ctx;
    mguard_weak *other;
    const void *obj;
    int armed, refused;
    test_log log;
} oom_relog;

static void oom_relog_fn(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    oom_relog *r = (oom_relog *)user;
    static int many[600];
    long v = 7;
    int i;
    test_log_fn(level, code, msg, &r->log);
    if (!r->armed || code != MGUARD_LOG_ON_DESTROY_IN_PLACE) return;
    r->armed = 0;
    r->refused = mguard_weak_set(r->other, r->obj, &v) == MGUARD_EINVAL;
    for (i = 0; i < 600; i++) assert_int_equal(mguard_weak_set(r->other, &many[i], &v), MGUARD_OK);
}

static void test_death_out_of_memory_logger_calls_back_in(void **state)
{
    test_alloc a;
    oom_relog rl;
    mguard_ctx_desc d;
    order_log l;
    static int obj;
    char big[300];
    (void)state;
    memset(&rl, 0, sizeof rl);
    memset(&a, 0, sizeof a);
    memset(&d, 0, sizeof d);
    d.logger.func = oom_relog_fn;
    d.logger.user = &rl;
    d.allocator.realloc_fn = fa_realloc;
    d.allocator.free_fn = fa_free;
    d.allocator.user = &a;
    memset(&l, 0, sizeof l);
    l.ctx = rl.ctx = mguard_ctx_create(&d);
    {
        mguard_weak_desc wd;
        memset(&wd, 0, sizeof wd);
        wd.value_size = 300;
        wd.value_dtor = order_dtor;
        wd.key_death = order_key_death;
        wd.user = &l;
        l.t[0] = mguard_weak_create(l.ctx, &wd);
        l.t[1] = mguard_weak_create(l.ctx, &wd);
    }
    rl.other = long_table(rl.ctx, NULL);
    rl.obj = &obj;
    memset(big, 'A', sizeof big);
    assert_int_equal(mguard_weak_set(l.t[0], &obj, big), MGUARD_OK);
    memset(big, 'B', sizeof big);
    assert_int_equal(mguard_weak_set(l.t[1], &obj, big), MGUARD_OK);
    rl.armed = 1;
    a.fail_at = a.calls + 1;   /* the death buffer */
    mguard_on_destroy(l.ctx, &obj);
    assert_int_equal(a.failures, 1);
    assert_int_equal(rl.armed, 0);
    assert_true(rl.refused);
    assert_false(mguard_weak_contains(rl.other, &obj));
    assert_int_equal(mguard_weak_count(rl.other), 600);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.seen[0], "death A");
    assert_string_equal(l.seen[3], "dtor B");
    assert_int_equal(mguard_weak_count(l.t[0]) + mguard_weak_count(l.t[1]), 0);
    assert_ctx_ok(l.ctx);
    mguard_ctx_destroy(l.ctx);
    assert_int_equal(a.live_blocks, 0);
}

/* A death copies the values of the tables with a callback only (a table
   with neither a destructor nor key_death has nothing to call): tables
   with and without callbacks, in any order, each callback sees its own
   table's value. */
static void count_key_death(const void *key, void *value, void *user)
{
    (void)key;
    dtor_count_long(value, user);
}

static void test_death_copies_only_values_with_a_callback(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    static int obj;
    dtor_log dl, kl;
    mguard_weak_desc d;
    mguard_weak *t[4];
    long v;
    int i;
    (void)state;
    memset(&dl, 0, sizeof dl);
    memset(&kl, 0, sizeof kl);
    t[0] = long_table(ctx, NULL);
    t[1] = long_table(ctx, &dl);
    t[2] = long_table(ctx, NULL);
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.key_death = count_key_death;   /* key_death alone, no destructor */
    d.user = &kl;
    t[3] = mguard_weak_create(ctx, &d);
    for (i = 0; i < 4; i++) { v = 11 * (i + 1); assert_int_equal(mguard_weak_set(t[i], &obj, &v), MGUARD_OK); }
    mguard_on_destroy(ctx, &obj);
    assert_int_equal(dl.calls, 1);
    assert_int_equal(dl.seen[0], 22);
    assert_int_equal(kl.calls, 1);
    assert_int_equal(kl.seen[0], 44);
    for (i = 0; i < 4; i++) assert_int_equal(mguard_weak_count(t[i]), 0);
    assert_ctx_ok(ctx);
    test_ctx_finish(ctx, &al);
}

/* A death reads each entry where the key's record says it lies. After
   compactions moved the key's entries (in two of its three tables, the
   third past the record's inline back-references), the death destroys
   each table's own value exactly once and leaves the other keys' values
   alone. */
static void test_death_after_compaction_destroys_each_value_once(void **state)
{
    test_log log; test_alloc al;
    mguard_ctx *ctx = test_ctx(&log, &al);
    static int obj, fill[3][8];
    dtor_log dl[3];
    mguard_weak *t[3];
    long v;
    int i, j;
    (void)state;
    memset(dl, 0, sizeof dl);
    for (i = 0; i < 3; i++) {
        t[i] = long_table(ctx, &dl[i]);
        for (j = 0; j < 3; j++) { v = 100 * i + j; assert_int_equal(mguard_weak_set(t[i], &fill[i][j], &v), MGUARD_OK); }
        v = 10 * i;
        assert_int_equal(mguard_weak_set(t[i], &obj, &v), MGUARD_OK);   /* at position 3 */
        for (j = 3; j < 7; j++) { v = 100 * i + j; assert_int_equal(mguard_weak_set(t[i], &fill[i][j], &v), MGUARD_OK); }
    }
    for (i = 0; i < 3; i += 2) {
        for (j = 0; j < 3; j++) assert_int_equal(mguard_weak_take(t[i], &fill[i][j], NULL), MGUARD_OK);
        v = 100 * i + 7;
        assert_int_equal(mguard_weak_set(t[i], &fill[i][7], &v), MGUARD_OK);   /* compacts: obj moves to 0 */
    }
    assert_ctx_ok(ctx);
    mguard_on_destroy(ctx, &obj);
    for (i = 0; i < 3; i++) {
        int before = i == 1 ? 0 : 3;   /* the fillers removed above */
        assert_int_equal(dl[i].calls, before + 1);
        assert_int_equal(dl[i].seen[before], 10 * i);
        assert_int_equal(mguard_weak_count(t[i]), i == 1 ? 7 : 5);
        for (j = i == 1 ? 0 : 3; j < (i == 1 ? 7 : 8); j++) {
            long *p = MGUARD_WEAK_GET(t[i], &fill[i][j], long);
            assert_non_null(p);
            assert_int_equal(*p, 100 * i + j);
        }
    }
    assert_false(mgt_ctx_contains(ctx, &obj));
    assert_ctx_ok(ctx);
    test_ctx_finish(ctx, &al);
}

/* The out-of-memory death (values destroyed in place) after a compaction
   moved the key's entry: phase 2 finds each pending entry where phase 1
   left it, destroys the right value once, and turns it into a
   tombstone. */
static void test_death_out_of_memory_after_compaction(void **state)
{
    test_log log; test_alloc al;
    order_log l;
    static int obj, fill[8];
    char big[300];
    int j;
    (void)state;
    order_setup(&l, &log, &al);
    for (j = 0; j < 8; j++) {
        memset(big, 'a' + j, sizeof big);
        if (j == 3) {
            memset(big, 'A', sizeof big);
            assert_int_equal(mguard_weak_set(l.t[0], &obj, big), MGUARD_OK);   /* at position 3 */
        } else {
            assert_int_equal(mguard_weak_set(l.t[0], &fill[j], big), MGUARD_OK);
        }
    }
    for (j = 0; j < 3; j++) assert_int_equal(mguard_weak_take(l.t[0], &fill[j], NULL), MGUARD_OK);
    memset(big, 'B', sizeof big);
    assert_int_equal(mguard_weak_set(l.t[1], &obj, big), MGUARD_OK);
    memset(big, 'z', sizeof big);
    assert_int_equal(mguard_weak_set(l.t[0], &fill[3], big), MGUARD_OK);   /* full: compacts, obj moves to 0 */
    assert_ctx_ok(l.ctx);
    l.n = 0;                     /* forget the three removals' dtors */
    order_death_in_place(&l, &log, &al, &obj, 0);
    assert_int_equal(mguard_weak_count(l.t[0]), 5);
    assert_int_equal(*(const char *)mguard_weak_get(l.t[0], &fill[4]), 'e');
    assert_int_equal(*(const char *)mguard_weak_get(l.t[0], &fill[3]), 'z');
    assert_int_equal(mguard_weak_count(l.t[1]), 0);
    assert_ctx_ok(l.ctx);
    mguard_ctx_destroy(l.ctx);
    assert_int_equal(l.n, 9);    /* the five fillers left, once each */
    assert_int_equal(al.live_blocks, 0);
}

/* Regression: a second mguard_on_destroy of an object from inside its own
   death (a double destroy in the program) was silent; it is now logged. */
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
    assert_int_equal(log.code, MGUARD_LOG_ON_DESTROY_TWICE);
    mguard_on_destroy(r.ctx, &obj);   /* afterwards: an unknown object, silent */
    assert_int_equal(log.count, 1);
    assert_ctx_ok(r.ctx);
    mguard_ctx_destroy(r.ctx);
}

/* ---- a logger between a decision and its callout --------------------------
   A line is delivered at the next callout; a logger may destroy anything.
   So before a callout is handed an object, the lines queued so far go out
   and the object is judged after them. Each object here is marked dead
   when the logger destroys it; a callback that sees a dead one counts it. */
typedef struct lobj { int n; bool dead; } lobj;
static struct { mguard_ctx *ctx; lobj *victim; int dead_seen, applied, computed, described; } lq;
static void lq_logger(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    (void)level; (void)msg; (void)user;
    if (code == MGUARD_LOG_CACHE_REASON && lq.victim) {
        lobj *o = lq.victim;
        lq.victim = NULL;
        mguard_on_destroy(lq.ctx, o);
        o->dead = true;   /* as if freed */
    }
}
static void lq_describe(const void *obj, char *buf, size_t size, void *user)
{
    (void)user;
    lq.described++;
    lq.dead_seen += ((const lobj *)obj)->dead;
    snprintf(buf, size, "o%d", ((const lobj *)obj)->n);
}
static mguard_ctx *lq_ctx(bool describe)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    memset(&lq, 0, sizeof lq);
    d.logger.func = lq_logger;
    if (describe) d.describe.func = lq_describe;
    lq.ctx = mguard_ctx_create(&d);
    assert_non_null(lq.ctx);
    return lq.ctx;
}
static mguard_cache *lq_cache(void)
{
    mguard_cache_desc cd;
    mguard_cache *c;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof(int);
    cd.log_reasons = true;
    c = mguard_cache_create(lq.ctx, &cd);
    assert_non_null(c);
    return c;
}

/* apply: a bound field's write drops a cache entry (a queued line); the
   logger destroys the next write's object: that write is skipped. */
static void lq_apply(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    (void)attr; (void)value; (void)deleted; (void)user;
    lq.applied++;
    lq.dead_seen += ((lobj *)obj)->dead;
}
static void test_apply_skips_a_write_whose_object_a_logger_destroyed(void **state)
{
    mguard_ctx *ctx = lq_ctx(false);
    static const mguard_ledger_field fa[] = { MGUARD_LEDGER_FIELD(lobj, n, MGUARD_LEDGER_VALUE_INT) };
    mguard_ledger_desc ld;
    mguard_ledger *L;
    mguard_cache *c = lq_cache();
    lobj a = { 0, false }, b = { 0, false };
    int v = 7, one = 1;
    (void)state;
    memset(&ld, 0, sizeof ld);
    ld.value_size = sizeof(int);
    ld.value_type = MGUARD_LEDGER_VALUE_INT;
    L = mguard_ledger_create(ctx, &ld);
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&a), &one, 0), MGUARD_OK);
    assert_int_equal(mguard_ledger_track(L, &a, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    assert_int_equal(mguard_ledger_set_fields(L, &a, fa, 1), MGUARD_OK);
    assert_int_equal(mguard_ledger_track(L, &b, MGUARD_LEDGER_EXISTING, NULL), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(L, &a, "n", &v), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(L, &b, "other", &v), MGUARD_OK);
    lq.victim = &b;
    assert_int_equal(mguard_ledger_apply(L, lq_apply, NULL), MGUARD_OK);
    assert_int_equal(a.n, 7);          /* the bound field written */
    assert_true(b.dead);
    assert_int_equal(lq.applied, 0);   /* b's write skipped */
    assert_int_equal(lq.dead_seen, 0);
    assert_int_equal(mguard_cache_count(c), 0);
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
    mguard_ctx_destroy(ctx);
}

/* describe: one mutation drops two entries; the first drop's line destroys
   the second's key, which is then named by its address, never described. */
static void test_describe_never_names_a_key_a_logger_destroyed(void **state)
{
    mguard_ctx *ctx = lq_ctx(true);
    mguard_cache *c = lq_cache();
    lobj k1 = { 1, false }, k2 = { 2, false }, d = { 3, false };
    int one = 1;
    (void)state;
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&k1), &one, 0), MGUARD_OK);
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&k2), &one, 0), MGUARD_OK);
    assert_int_equal(mguard_cache_depend(c, MGUARD_CACHE_KEYS(&k1), &d, NULL), MGUARD_OK);
    assert_int_equal(mguard_cache_depend(c, MGUARD_CACHE_KEYS(&k2), &d, NULL), MGUARD_OK);
    lq.victim = &k2;
    mguard_on_mutation(ctx, &d, "x");
    assert_true(k2.dead);
    assert_true(lq.described > 0);
    assert_int_equal(lq.dead_seen, 0);
    assert_int_equal(mguard_cache_count(c), 0);
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
    mguard_ctx_destroy(ctx);
}

/* get_or_compute: the miss line's logger destroys the key: no compute. */
static mguard_status lq_compute(mguard_cache_job *job, void *value, void *user)
{
    const lobj *k = (const lobj *)mguard_cache_job_key(job, 0);
    (void)user;
    lq.computed++;
    lq.dead_seen += k->dead;
    *(int *)value = k->n;
    return MGUARD_OK;
}
static void test_no_compute_for_a_key_a_logger_destroyed(void **state)
{
    mguard_ctx *ctx = lq_ctx(false);
    mguard_cache *c = lq_cache();
    lobj k = { 21, false };
    mguard_status st = MGUARD_OK;
    (void)state;
    lq.victim = &k;
    assert_null(mguard_cache_get_or_compute(c, MGUARD_CACHE_KEYS(&k), lq_compute, NULL, &st));
    assert_int_equal(st, MGUARD_EINVAL);
    assert_true(k.dead);
    assert_int_equal(lq.computed, 0);
    assert_int_equal(mguard_cache_count(c), 0);
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
    mguard_ctx_destroy(ctx);
}

/* A mutation's watchers are swapped out before the event names what it
   drops (the describe hook, a callout): from then on they belong to that
   mutation of that object. A describe hook that unwatches one cancels it;
   one that destroys the object leaves them to be told, and an unwatch of
   the object's address afterwards (its life is over) cancels none. */
static struct { mguard_ctx *ctx; int x, g1, g2; int destroy, unwatch, fired2; mguard_status st; } sw;   /* st: the unwatch's */
static void sw_describe(const void *obj, char *buf, size_t size, void *user)
{
    (void)user;
    snprintf(buf, size, "obj");
    if (obj != &sw.x) return;
    if (sw.unwatch) sw.st = mguard_unwatch(sw.ctx, &sw.x, &sw.g2);
    if (sw.destroy) { sw.destroy = 0; mguard_on_destroy(sw.ctx, &sw.x); }
}
static void sw_first(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
    if (!sw.unwatch) sw.st = mguard_unwatch(sw.ctx, &sw.x, &sw.g2);   /* else the hook did */
}
static void sw_second(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
    sw.fired2++;
}
static void sw_run(int destroy, int unwatch)
{
    mguard_ctx_desc d;
    mguard_cache_desc cd;
    mguard_cache *c;
    const void *k[1];
    int v = 1;
    memset(&d, 0, sizeof d);
    memset(&sw, 0, sizeof sw);
    d.describe.func = sw_describe;
    d.quiet = true;
    sw.ctx = mguard_ctx_create(&d);
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof v;
    c = mguard_cache_create(sw.ctx, &cd);
    k[0] = &sw.g1;
    assert_int_equal(mguard_cache_set(c, k, 1, &v, 0), MGUARD_OK);
    assert_int_equal(mguard_cache_depend(c, k, 1, &sw.x, NULL), MGUARD_OK);   /* its drop names x */
    assert_int_equal(mguard_watch(sw.ctx, &sw.x, &sw.g1, sw_first, NULL), MGUARD_OK);
    assert_int_equal(mguard_watch(sw.ctx, &sw.x, &sw.g2, sw_second, NULL), MGUARD_OK);
    sw.destroy = destroy;
    sw.unwatch = unwatch;
    sw.st = MGUARD_EEXIST;   /* not asked yet */
    mguard_on_mutation(sw.ctx, &sw.x, "a");
    assert_int_equal(mguard_cache_count(c), 0);
    assert_ctx_ok(sw.ctx);
    mguard_ctx_destroy(sw.ctx);
}

static void test_a_describe_hook_may_unwatch_a_watcher_of_the_mutation_it_names(void **state)
{
    (void)state;
    sw_run(0, 1);
    assert_int_equal(sw.st, MGUARD_OK);
    assert_int_equal(sw.fired2, 0);
}

static void test_a_describe_hook_destroying_the_object_leaves_its_watchers_to_be_told(void **state)
{
    (void)state;
    sw_run(1, 0);
    assert_int_equal(sw.st, MGUARD_NOT_FOUND);   /* x's life is over: not about it */
    assert_int_equal(sw.fired2, 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_callbacks_see_the_object_fully_dead),
        T(test_key_death_callback_only_for_deaths),
        T(test_destructor_destroys_other_objects_each_once),
        T(test_destroy_hook_called_again_from_its_own_callback_is_logged_and_ignored),
        T(test_dying_object_cannot_be_registered_from_its_callbacks),
        T(test_a_dying_guard_is_refused_before_any_allocation),
        T(test_destructor_destroys_another_table_holding_the_dead_key),
        T(test_destroying_the_table_being_cleared_is_deferred),
        T(test_clear_with_destructors_that_change_the_table),
        T(test_invalidate_callback_mutates_and_destroys_its_object),
        T(test_context_destroy_inside_callback_is_refused),
        T(test_death_storm_destroys_every_value_exactly_once),
        T(test_death_without_memory_still_destroys_each_value_once),
        T(test_out_of_memory_death_pins_its_table_against_moves),
        T(test_death_calls_tables_in_the_order_the_key_entered_them),
        T(test_death_of_a_key_in_many_tables_calls_each_once_in_order),
        T(test_out_of_memory_death_survives_a_callback_that_grows_the_index),
        cmocka_unit_test(test_nothing_can_be_created_on_a_dying_context),
        cmocka_unit_test(test_no_clone_or_diff_is_made_while_the_context_dies),
        cmocka_unit_test(test_destroying_an_object_twice_is_a_silent_no_op),
        cmocka_unit_test(test_destroying_an_object_from_its_own_death_is_logged),
        cmocka_unit_test(test_null_object_is_refused_everywhere),
        cmocka_unit_test(test_a_dying_object_cannot_be_registered_again),
        cmocka_unit_test(test_death_out_of_memory_keeps_two_phases),
        cmocka_unit_test(test_death_out_of_memory_line_names_the_object),
        cmocka_unit_test(test_death_out_of_memory_logger_calls_back_in),
        cmocka_unit_test(test_death_out_of_memory_after_compaction),
        cmocka_unit_test(test_death_after_compaction_destroys_each_value_once),
        cmocka_unit_test(test_death_copies_only_values_with_a_callback),
        cmocka_unit_test(test_destroy_from_own_death_is_logged),
        cmocka_unit_test(test_apply_skips_a_write_whose_object_a_logger_destroyed),
        cmocka_unit_test(test_describe_never_names_a_key_a_logger_destroyed),
        cmocka_unit_test(test_no_compute_for_a_key_a_logger_destroyed),
        cmocka_unit_test(test_a_describe_hook_may_unwatch_a_watcher_of_the_mutation_it_names),
        cmocka_unit_test(test_a_describe_hook_destroying_the_object_leaves_its_watchers_to_be_told),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
