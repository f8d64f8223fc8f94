/* Weak key tables: identity keys, inline values of any size, value
   destructors run exactly once, iteration with removal; bad input, and
   the regressions of the bugs found in tables. */
#include "common.h"

typedef struct fixture {
    test_log log;
    test_alloc alloc;
    dtor_log dl;
    mguard_ctx *ctx;
    mguard_weak *t;
} fixture;

static int setup(void **state)
{
    fixture *f = (fixture *)calloc(1, sizeof *f);
    mguard_weak_desc d;
    memset(&d, 0, sizeof d);
    f->ctx = test_ctx(&f->log, &f->alloc);
    d.value_size = sizeof(long);
    d.value_dtor = dtor_count_long;
    d.user = &f->dl;
    f->t = mguard_weak_create(f->ctx, &d);
    *state = f;
    return f->ctx && f->t ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = (fixture *)*state;
    test_ctx_finish(f->ctx, &f->alloc);
    free(f);
    return 0;
}

static mguard_status setl(mguard_weak *t, const void *k, long v) { return mguard_weak_set(t, k, &v); }
static long getl(mguard_weak *t, const void *k)
{
    long *p = MGUARD_WEAK_GET(t, k, long);
    return p ? *p : -999;
}

/* The typed get checks the type's size against the table's value size:
   a wrong type answers NULL with a warning instead of a misread. */
typedef struct three_longs { long x[3]; } three_longs;
static void test_typed_get_catches_a_wrong_type(void **state)
{
    fixture *f = (fixture *)*state;
    int a = 0, b = 0;
    assert_int_equal(setl(f->t, &a, 10), MGUARD_OK);
    assert_int_equal(*MGUARD_WEAK_GET(f->t, &a, long), 10);
    assert_null(MGUARD_WEAK_GET(f->t, &b, long));           /* absent: no warning */
    assert_int_equal(f->log.warnings, 0);
    assert_null(MGUARD_WEAK_GET(f->t, &a, char));           /* 1 byte, not sizeof(long) */
    assert_int_equal(f->log.warnings, 1);
    assert_null(MGUARD_WEAK_GET(f->t, &a, three_longs));
    assert_int_equal(f->log.warnings, 2);
    assert_int_equal(f->log.code, MGUARD_LOG_WEAK_SIZE_MISMATCH);
    assert_ptr_equal(mguard_weak_get_sized(f->t, &a, sizeof(long)), mguard_weak_get(f->t, &a));
    assert_null(mguard_weak_get_sized(NULL, &a, sizeof(long)));
    assert_null(mguard_weak_get_sized(f->t, NULL, sizeof(long)));
    assert_int_equal(f->log.warnings, 2);
    assert_int_equal(mguard_weak_count(f->t), 1);            /* nothing changed */
}

static void test_set_get_contains_count(void **state)
{
    fixture *f = (fixture *)*state;
    int a = 0, b = 0, c = 0;
    assert_int_equal(setl(f->t, &a, 10), MGUARD_OK);
    assert_int_equal(setl(f->t, &b, 20), MGUARD_OK);
    assert_int_equal(getl(f->t, &a), 10);
    assert_int_equal(getl(f->t, &b), 20);
    assert_null(mguard_weak_get(f->t, &c));
    assert_true(mguard_weak_contains(f->t, &a));
    assert_false(mguard_weak_contains(f->t, &c));
    assert_int_equal(mguard_weak_count(f->t), 2);
    assert_int_equal(mgt_objects(f->ctx), 2);
    assert_int_equal(f->dl.calls, 0);
}

static void test_keys_compare_by_address_not_content(void **state)
{
    fixture *f = (fixture *)*state;
    int a = 7, b = 7;   /* equal contents, different objects */
    assert_int_equal(setl(f->t, &a, 1), MGUARD_OK);
    assert_int_equal(setl(f->t, &b, 2), MGUARD_OK);
    assert_int_equal(mguard_weak_count(f->t), 2);
    assert_int_equal(getl(f->t, &a), 1);
    assert_int_equal(getl(f->t, &b), 2);
}

static void test_overwrite_destroys_old_value_once(void **state)
{
    fixture *f = (fixture *)*state;
    int a = 0;
    setl(f->t, &a, 1);
    setl(f->t, &a, 2);
    setl(f->t, &a, 3);
    assert_int_equal(f->dl.calls, 2);
    assert_int_equal(f->dl.seen[0], 1);
    assert_int_equal(f->dl.seen[1], 2);
    assert_int_equal(getl(f->t, &a), 3);
    assert_int_equal(mguard_weak_count(f->t), 1);
}

static void test_take_with_null_out_destroys_value_once_and_reports_not_found(void **state)
{
    fixture *f = (fixture *)*state;
    int a = 0, b = 0;
    setl(f->t, &a, 5);
    assert_int_equal(mguard_weak_take(f->t, &a, NULL), MGUARD_OK);
    assert_int_equal(f->dl.calls, 1);
    assert_int_equal(f->dl.seen[0], 5);
    assert_int_equal(mguard_weak_take(f->t, &a, NULL), MGUARD_NOT_FOUND);
    assert_int_equal(mguard_weak_take(f->t, &b, NULL), MGUARD_NOT_FOUND);
    assert_int_equal(f->dl.calls, 1);
    assert_int_equal(mguard_weak_count(f->t), 0);
    /* the registry forgets an object nothing refers to any more */
    assert_int_equal(mgt_objects(f->ctx), 0);
}

static void test_take_copies_the_value_out_and_never_destroys_it(void **state)
{
    fixture *f = (fixture *)*state;
    int a = 0, b = 0;
    long out = -1;
    setl(f->t, &a, 5);
    setl(f->t, &b, 7);
    assert_int_equal(mguard_weak_take(f->t, &a, &out), MGUARD_OK);
    assert_int_equal(out, 5);
    assert_int_equal(f->dl.calls, 0);
    assert_false(mguard_weak_contains(f->t, &a));
    assert_int_equal(mguard_weak_count(f->t), 1);
    assert_int_equal(mgt_objects(f->ctx), 1);   /* a is forgotten */
    out = -1;
    assert_int_equal(mguard_weak_take(f->t, &a, &out), MGUARD_NOT_FOUND);
    assert_int_equal(out, -1);                                /* untouched */
    assert_int_equal(f->log.warnings, 0);
    mguard_on_destroy(f->ctx, &a);                            /* no entry: nothing runs */
    assert_int_equal(f->dl.calls, 0);
    assert_int_equal(getl(f->t, &b), 7);
}

/* A value larger than the stack copy remove makes: take copies all of it. */
typedef struct big_value { long x[40]; } big_value;
static void test_take_copies_a_large_value_whole(void **state)
{
    fixture *f = (fixture *)*state;
    mguard_weak_desc d = {sizeof(big_value), dtor_count_long, NULL, NULL};
    mguard_weak *t;
    big_value v, out;
    int a = 0, i;
    d.user = &f->dl;
    t = mguard_weak_create(f->ctx, &d);
    for (i = 0; i < 40; i++) v.x[i] = 100 + i;
    assert_int_equal(mguard_weak_set(t, &a, &v), MGUARD_OK);
    memset(&out, 0, sizeof out);
    assert_int_equal(mguard_weak_take(t, &a, &out), MGUARD_OK);
    for (i = 0; i < 40; i++) assert_int_equal(out.x[i], 100 + i);
    assert_int_equal(mguard_weak_count(t), 0);
    mguard_weak_destroy(t);
    assert_int_equal(f->dl.calls, 0);
}

static void test_take_during_iteration_of_current_and_others(void **state)
{
    fixture *f = (fixture *)*state;
    int k[10] = {0}, i, n = 0;
    const void *seen[10];
    long got[3] = {-1, -1, -1};
    mguard_weak_iter it;
    for (i = 0; i < 10; i++) setl(f->t, &k[i], 10 + i);
    it = mguard_weak_iterate(f->t);
    while (mguard_weak_next(&it)) {
        seen[n++] = it.key;
        if (it.key == &k[2]) {
            assert_int_equal(mguard_weak_take(f->t, &k[2], &got[0]), MGUARD_OK);   /* the current one */
            assert_int_equal(mguard_weak_take(f->t, &k[5], &got[1]), MGUARD_OK);   /* one ahead */
            assert_int_equal(mguard_weak_take(f->t, &k[0], &got[2]), MGUARD_OK);   /* one behind */
        }
    }
    assert_int_equal(got[0], 12);
    assert_int_equal(got[1], 15);
    assert_int_equal(got[2], 10);
    assert_int_equal(n, 9);   /* 0..9 minus k[5] */
    assert_ptr_equal(seen[2], &k[2]);
    assert_ptr_equal(seen[3], &k[3]);
    assert_ptr_equal(seen[5], &k[6]);
    assert_ptr_equal(seen[8], &k[9]);
    assert_int_equal(mguard_weak_count(f->t), 7);
    assert_int_equal(f->dl.calls, 0);
}

/* A value destructor and a key_death callback take another entry of
   their own table: it leaves with its value, whose destructor never runs. */
typedef struct take_in_cb {
    mguard_weak *t;
    const void *other;
    long got;
    mguard_status st;
    int dtors;
    long destroyed[4];
} take_in_cb;
static void tic_dtor(void *value, void *user)
{
    take_in_cb *c = (take_in_cb *)user;
    long v;
    memcpy(&v, value, sizeof v);
    c->destroyed[c->dtors++] = v;
    if (c->other) {
        c->st = mguard_weak_take(c->t, c->other, &c->got);
        c->other = NULL;
    }
}
static void tic_death(const void *key, void *value, void *user)
{
    (void)key; (void)value;
    tic_dtor(value, user);
    ((take_in_cb *)user)->dtors--;   /* counted by the destructor that follows */
}
static void test_take_from_a_destructor_or_death_callback_of_the_same_table(void **state)
{
    fixture *f = (fixture *)*state;
    take_in_cb c;
    mguard_weak_desc d = {sizeof(long), tic_dtor, NULL, NULL};
    int a = 0, b = 0, x = 0, y = 0;
    memset(&c, 0, sizeof c);
    c.got = -1;
    d.user = &c;
    c.t = mguard_weak_create(f->ctx, &d);
    setl(c.t, &a, 1);
    setl(c.t, &b, 2);
    c.other = &b;
    assert_int_equal(mguard_weak_take(c.t, &a, NULL), MGUARD_OK);   /* a's destructor takes b */
    assert_int_equal(c.st, MGUARD_OK);
    assert_int_equal(c.got, 2);
    assert_int_equal(c.dtors, 1);
    assert_int_equal(c.destroyed[0], 1);
    assert_int_equal(mguard_weak_count(c.t), 0);
    mguard_weak_destroy(c.t);
    d.key_death = tic_death;
    c.t = mguard_weak_create(f->ctx, &d);
    setl(c.t, &x, 3);
    setl(c.t, &y, 4);
    c.other = &y;
    c.got = -1;
    mguard_on_destroy(f->ctx, &x);                              /* x's key_death takes y */
    assert_int_equal(c.st, MGUARD_OK);
    assert_int_equal(c.got, 4);
    assert_int_equal(c.dtors, 2);
    assert_int_equal(c.destroyed[1], 3);                        /* x's value, once; y's never */
    assert_int_equal(mguard_weak_count(c.t), 0);
    c.other = &x;                                               /* gone: NOT_FOUND from a destructor */
    setl(c.t, &y, 5);
    assert_int_equal(mguard_weak_take(c.t, &y, NULL), MGUARD_OK);
    assert_int_equal(c.st, MGUARD_NOT_FOUND);
    assert_int_equal(c.dtors, 3);
    mguard_weak_destroy(c.t);
    assert_int_equal(f->log.warnings, 0);
}

static void test_key_death_removes_entry_from_every_table(void **state)
{
    fixture *f = (fixture *)*state;
    dtor_log d2 = {0};
    mguard_weak_desc d = {sizeof(long), dtor_count_long, NULL, NULL};
    mguard_weak *t2;
    int a = 0, b = 0;
    d.user = &d2;
    t2 = mguard_weak_create(f->ctx, &d);
    setl(f->t, &a, 1);
    setl(t2, &a, 2);
    setl(t2, &b, 3);
    mguard_on_destroy(f->ctx, &a);
    assert_null(mguard_weak_get(f->t, &a));
    assert_null(mguard_weak_get(t2, &a));
    assert_int_equal(getl(t2, &b), 3);
    assert_int_equal(f->dl.calls, 1);
    assert_int_equal(f->dl.seen[0], 1);
    assert_int_equal(d2.calls, 1);
    assert_int_equal(d2.seen[0], 2);
    assert_ctx_ok(f->ctx);
    mguard_weak_destroy(t2);
    assert_int_equal(d2.calls, 2);
    assert_int_equal(d2.seen[1], 3);
}

static void test_address_reuse_does_not_revive_entry(void **state)
{
    fixture *f = (fixture *)*state;
    static long slot;            /* one storage slot, two objects in turn */
    setl(f->t, &slot, 1);        /* object A lives in the slot */
    mguard_on_destroy(f->ctx, &slot);
    /* object B is constructed in the same slot: it is a new key */
    assert_null(mguard_weak_get(f->t, &slot));
    assert_int_equal(setl(f->t, &slot, 2), MGUARD_OK);
    assert_int_equal(getl(f->t, &slot), 2);
    assert_int_equal(f->dl.calls, 1);
    mguard_on_destroy(f->ctx, &slot);
    assert_int_equal(f->dl.calls, 2);
    assert_int_equal(f->dl.seen[1], 2);
}

static void test_destroy_table_destroys_values_in_insertion_order(void **state)
{
    fixture *f = (fixture *)*state;
    int k[5] = {0}, i;
    for (i = 0; i < 5; i++) setl(f->t, &k[i], 100 + i);
    mguard_weak_take(f->t, &k[1], NULL);
    mguard_weak_destroy(f->t);
    f->t = NULL;
    assert_int_equal(f->dl.calls, 5);
    assert_int_equal(f->dl.seen[0], 101);
    assert_int_equal(f->dl.seen[1], 100);
    assert_int_equal(f->dl.seen[2], 102);
    assert_int_equal(f->dl.seen[3], 103);
    assert_int_equal(f->dl.seen[4], 104);
    /* keys held by no table are forgotten */
    assert_int_equal(mgt_objects(f->ctx), 0);
    /* later deaths of those keys are no-ops */
    mguard_on_destroy(f->ctx, &k[0]);
    assert_int_equal(f->dl.calls, 5);
}

static void test_clear_destroys_all_and_table_stays_usable(void **state)
{
    fixture *f = (fixture *)*state;
    int k[3] = {0}, i;
    for (i = 0; i < 3; i++) setl(f->t, &k[i], i);
    mguard_weak_clear(f->t);
    assert_int_equal(mguard_weak_count(f->t), 0);
    assert_int_equal(f->dl.calls, 3);
    assert_int_equal(f->dl.seen[2], 2);
    assert_int_equal(setl(f->t, &k[0], 9), MGUARD_OK);
    assert_int_equal(getl(f->t, &k[0]), 9);
}

static void test_iterate_in_insertion_order(void **state)
{
    fixture *f = (fixture *)*state;
    int k[4] = {0}, i;
    mguard_weak_iter it;
    long seen[4];
    int n = 0;
    for (i = 0; i < 4; i++) setl(f->t, &k[i], i * 10);
    setl(f->t, &k[1], 11); /* overwrite keeps the position */
    it = mguard_weak_iterate(f->t);
    while (mguard_weak_next(&it)) {
        assert_ptr_equal(it.key, &k[n]);
        memcpy(&seen[n], it.value, sizeof(long));
        n++;
    }
    assert_int_equal(n, 4);
    assert_int_equal(seen[0], 0);
    assert_int_equal(seen[1], 11);
    assert_int_equal(seen[2], 20);
    assert_int_equal(seen[3], 30);
    assert_false(mguard_weak_next(&it)); /* stays finished */
}

static void test_iterate_with_removal_of_current_and_others(void **state)
{
    fixture *f = (fixture *)*state;
    int k[10] = {0}, i, n = 0;
    const void *seen[10];
    mguard_weak_iter it;
    for (i = 0; i < 10; i++) setl(f->t, &k[i], i);
    it = mguard_weak_iterate(f->t);
    while (mguard_weak_next(&it)) {
        const int *key = (const int *)it.key;
        seen[n++] = key;
        if (key == &k[2]) {
            mguard_weak_take(f->t, &k[2], NULL);   /* the current one */
            mguard_weak_take(f->t, &k[5], NULL);   /* one ahead */
            mguard_weak_take(f->t, &k[0], NULL);   /* one behind */
        }
    }
    assert_int_equal(n, 9);   /* 0..9 minus k[5] */
    assert_ptr_equal(seen[0], &k[0]);
    assert_ptr_equal(seen[2], &k[2]);
    assert_ptr_equal(seen[3], &k[3]);
    assert_ptr_equal(seen[4], &k[4]);
    assert_ptr_equal(seen[5], &k[6]);
    assert_ptr_equal(seen[8], &k[9]);
    assert_int_equal(mguard_weak_count(f->t), 7);
}

/* Removing while iterating, with enough inserts meanwhile to force a
   compaction: every live entry is still visited exactly once. */
static void test_iterate_survives_compaction(void **state)
{
    fixture *f = (fixture *)*state;
    enum { N = 64, M = 200 };
    static int k[N], extra[M];
    int i, n = 0, visited[N + M];
    mguard_weak_iter it;
    memset(visited, 0, sizeof visited);
    for (i = 0; i < N; i++) setl(f->t, &k[i], i);
    it = mguard_weak_iterate(f->t);
    while (mguard_weak_next(&it)) {
        long v;
        memcpy(&v, it.value, sizeof v);
        visited[v]++;
        n++;
        if (v == 10) {
            for (i = 11; i < 40; i++) mguard_weak_take(f->t, &k[i], NULL);
            for (i = 0; i < M; i++) setl(f->t, &extra[i], N + i);
        }
    }
    for (i = 0; i < N + M; i++) {
        int expect = (i >= 11 && i < 40) ? 0 : 1;
        assert_int_equal(visited[i], expect);
    }
    assert_int_equal(n, N + M - 29);
    assert_int_equal(mguard_weak_count(f->t), N + M - 29);
    assert_ctx_ok(f->ctx);
}

/* Compaction under an iterator, entry by entry. A table starts with room
   for 8 entries: keys k[0..7] fill it; when the cursor reaches k[at], the
   keys in `removed` go (at least 3 tombstones: a quarter of 8, plus one)
   and the keys k[8..8+ninsert) arrive, the first of which compacts the
   full array under the iterator. The walk must visit exactly `want`. */
static void walk_with_compaction(fixture *f, int at, const int *removed, int nremoved, int ninsert, const char *want)
{
    static int k[16];
    char seen[128] = "";
    mguard_weak_iter it;
    uint64_t epoch0;
    int i;
    for (i = 0; i < 8; i++) assert_int_equal(setl(f->t, &k[i], i), MGUARD_OK);
    it = mguard_weak_iterate(f->t);
    epoch0 = it.epoch_;
    while (mguard_weak_next(&it)) {
        long v;
        size_t n = strlen(seen);
        memcpy(&v, it.value, sizeof v);
        snprintf(seen + n, sizeof seen - n, "%s%ld", n ? " " : "", v);
        if (v == at) {
            for (i = 0; i < nremoved; i++) assert_int_equal(mguard_weak_take(f->t, &k[removed[i]], NULL), MGUARD_OK);
            for (i = 8; i < 8 + ninsert; i++) assert_int_equal(setl(f->t, &k[i], i), MGUARD_OK);
        }
    }
    assert_string_equal(seen, want);
    assert_true(it.epoch_ != epoch0);   /* the table really was compacted */
    assert_int_equal(mguard_weak_count(f->t), 8 - nremoved + ninsert);
    assert_int_equal(f->dl.calls, nremoved);
    assert_ctx_ok(f->ctx);
}

/* The entry after the cursor is still live when the table compacts: the
   walk resumes exactly there (not one further). */
static void test_iterate_compaction_with_the_next_entry_live(void **state)
{
    static const int rm[] = {3, 4, 5};
    walk_with_compaction((fixture *)*state, 0, rm, 3, 1, "0 1 2 6 7 8");
}

static void test_iterate_compaction_after_removing_the_current_entry(void **state)
{
    static const int rm[] = {2, 4, 5};
    walk_with_compaction((fixture *)*state, 2, rm, 3, 1, "0 1 2 3 6 7 8");
}

static void test_iterate_compaction_after_removing_the_previous_entries(void **state)
{
    static const int rm[] = {1, 0, 5};
    walk_with_compaction((fixture *)*state, 2, rm, 3, 1, "0 1 2 3 4 6 7 8");
}

static void test_iterate_compaction_after_removing_the_next_entry(void **state)
{
    static const int rm[] = {3, 5, 6};
    walk_with_compaction((fixture *)*state, 2, rm, 3, 1, "0 1 2 4 7 8");
}

/* The key's record remembers where its entry lies in each table; a
   compaction moves entries, and the records follow: a remove after a
   compaction destroys the moved entry's value (not a neighbour's), the
   entries left keep insertion order, and a key held by another table too
   keeps its value there. mguard_ctx_check compares every remembered
   position with the entry found by lookup. */
static void test_remove_after_compaction_moved_the_entry(void **state)
{
    fixture *f = (fixture *)*state;
    static int k[9];
    mguard_weak *t2 = long_table(f->ctx, NULL);
    mguard_weak_iter it;
    uint64_t epoch0;
    char seen[64] = "";
    int i;
    for (i = 0; i < 8; i++) assert_int_equal(setl(f->t, &k[i], i), MGUARD_OK);
    assert_int_equal(setl(t2, &k[5], 50), MGUARD_OK);
    for (i = 0; i < 3; i++) assert_int_equal(mguard_weak_take(f->t, &k[i], NULL), MGUARD_OK);
    epoch0 = mguard_weak_iterate(f->t).epoch_;
    assert_int_equal(setl(f->t, &k[8], 8), MGUARD_OK);   /* full, 3 tombstones: compacts */
    assert_true(mguard_weak_iterate(f->t).epoch_ != epoch0);
    assert_ctx_ok(f->ctx);
    assert_int_equal(mguard_weak_take(f->t, &k[5], NULL), MGUARD_OK);   /* moved from 5 to 2 */
    assert_int_equal(f->dl.calls, 4);
    assert_int_equal(f->dl.seen[3], 5);
    assert_int_equal(getl(t2, &k[5]), 50);
    assert_int_equal(mguard_weak_take(f->t, &k[7], NULL), MGUARD_OK);   /* moved from 7 to 4 */
    assert_int_equal(f->dl.calls, 5);
    assert_int_equal(f->dl.seen[4], 7);
    assert_int_equal(mguard_weak_take(f->t, &k[7], NULL), MGUARD_NOT_FOUND);
    assert_int_equal(mguard_weak_take(f->t, &k[0], NULL), MGUARD_NOT_FOUND);
    assert_int_equal(f->dl.calls, 5);
    it = mguard_weak_iterate(f->t);
    while (mguard_weak_next(&it)) {
        size_t n = strlen(seen);
        snprintf(seen + n, sizeof seen - n, "%s%ld", n ? " " : "", *(const long *)it.value);
    }
    assert_string_equal(seen, "3 4 6 8");
    assert_int_equal(mgt_objects(f->ctx), 5);   /* k3, k4, k6, k8, and k5 (in t2) */
    assert_ctx_ok(f->ctx);
}

/* A key held by five tables (past the record's two inline back-references:
   the heap block of tables and positions): removed from a middle table,
   then the others in another order, each remove destroys that table's
   value only, and the record goes with the last one. */
static void test_key_in_many_tables_removed_one_by_one(void **state)
{
    fixture *f = (fixture *)*state;
    static int key, other;
    dtor_log dl[5];
    mguard_weak *t[5];
    static const int order[5] = {2, 0, 4, 1, 3};
    int i, j;
    memset(dl, 0, sizeof dl);
    for (i = 0; i < 5; i++) {
        t[i] = long_table(f->ctx, &dl[i]);
        assert_int_equal(setl(t[i], &other, 100 + i), MGUARD_OK);   /* key's entry at position 1 */
        assert_int_equal(setl(t[i], &key, 10 * i), MGUARD_OK);
    }
    assert_ctx_ok(f->ctx);
    for (i = 0; i < 5; i++) {
        assert_int_equal(mguard_weak_take(t[order[i]], &key, NULL), MGUARD_OK);
        assert_int_equal(dl[order[i]].calls, 1);
        assert_int_equal(dl[order[i]].seen[0], 10 * order[i]);
        for (j = 0; j < 5; j++) assert_int_equal(getl(t[j], &other), 100 + j);
        assert_int_equal(mgt_ctx_contains(f->ctx, &key), i < 4);
        assert_ctx_ok(f->ctx);
    }
    for (i = 0; i < 5; i++) {
        assert_int_equal(mguard_weak_take(t[i], &key, NULL), MGUARD_NOT_FOUND);
        assert_int_equal(dl[i].calls, 1);
        mguard_weak_destroy(t[i]);
    }
}

/* Several inserts: the first compacts, the later ones fill the array and
   grow it; every new key is visited once, after the old ones. */
static void test_iterate_compaction_then_growth_by_inserts(void **state)
{
    static const int rm[] = {2, 3, 4};
    walk_with_compaction((fixture *)*state, 1, rm, 3, 6, "0 1 5 6 7 8 9 10 11 12 13");
}

/* Values of any size, stored inline and copied in and out intact. */
typedef struct big { char name[300]; double x; } big;
static int big_dtors;
static char big_last[300];
static void big_dtor(void *v, void *user)
{
    (void)user;
    big_dtors++;
    memcpy(big_last, ((big *)v)->name, sizeof big_last);
}

static void test_large_values_are_copied_and_destroyed(void **state)
{
    fixture *f = (fixture *)*state;
    mguard_weak_desc d = {sizeof(big), big_dtor, NULL, NULL};
    mguard_weak *t = mguard_weak_create(f->ctx, &d);
    big v;
    int a = 0, b = 0;
    big_dtors = 0;
    memset(&v, 0, sizeof v);
    strcpy(v.name, "first");
    v.x = 1.5;
    assert_int_equal(mguard_weak_set(t, &a, &v), MGUARD_OK);
    strcpy(v.name, "second");
    assert_int_equal(mguard_weak_set(t, &a, &v), MGUARD_OK);
    assert_int_equal(big_dtors, 1);
    assert_string_equal(big_last, "first");
    assert_string_equal(MGUARD_WEAK_GET(t, &a, big)->name, "second");
    assert_true(MGUARD_WEAK_GET(t, &a, big)->x == 1.5);
    strcpy(v.name, "third");
    mguard_weak_set(t, &b, &v);
    mguard_on_destroy(f->ctx, &a);
    assert_int_equal(big_dtors, 2);
    assert_string_equal(big_last, "second");
    mguard_weak_destroy(t);
    assert_int_equal(big_dtors, 3);
    assert_string_equal(big_last, "third");
}

static void test_set_from_pointer_into_same_table(void **state)
{
    fixture *f = (fixture *)*state;
    static int k[100];
    int i;
    setl(f->t, &k[0], 42);
    /* the value pointer points into the table, which grows meanwhile */
    for (i = 1; i < 100; i++)
        assert_int_equal(mguard_weak_set(f->t, &k[i], mguard_weak_get(f->t, &k[i - 1])), MGUARD_OK);
    assert_int_equal(getl(f->t, &k[99]), 42);
}

static void test_pointer_values_set_from_a_variable_and_read_typed(void **state)
{
    fixture *f = (fixture *)*state;
    mguard_weak_desc d = {sizeof(void *), NULL, NULL, NULL};
    mguard_weak *t = mguard_weak_create(f->ctx, &d);
    int a = 0, b = 0, target = 0;
    void *p = &target;
    assert_int_equal(mguard_weak_set(t, &a, &p), MGUARD_OK);
    assert_ptr_equal(*MGUARD_WEAK_GET(t, &a, void *), &target);
    assert_null(MGUARD_WEAK_GET(t, &b, void *));
    assert_int_equal(f->log.warnings, 0);
    mguard_weak_destroy(t);
}

static void test_many_keys_grow_and_shrink(void **state)
{
    fixture *f = (fixture *)*state;
    enum { N = 5000 };
    char *keys = (char *)malloc(N);
    int i;
    for (i = 0; i < N; i++) assert_int_equal(setl(f->t, keys + i, i), MGUARD_OK);
    assert_int_equal(mguard_weak_count(f->t), N);
    for (i = 0; i < N; i += 2) mguard_weak_take(f->t, keys + i, NULL);
    for (i = 1; i < N; i += 2) assert_int_equal(getl(f->t, keys + i), i);
    for (i = 0; i < N; i += 2) assert_null(mguard_weak_get(f->t, keys + i));
    assert_ctx_ok(f->ctx);
    for (i = 1; i < N; i += 2) mguard_on_destroy(f->ctx, keys + i);
    assert_int_equal(mguard_weak_count(f->t), 0);
    assert_int_equal(f->dl.calls, N);
    assert_int_equal(mgt_objects(f->ctx), 0);
    free(keys);
}

static void test_bad_input(void **state)
{
    fixture *f = (fixture *)*state;
    mguard_weak_desc zero = {0, NULL, NULL, NULL};
    int a = 0;
    long v = 1;
    assert_null(mguard_weak_create(NULL, &zero));
    f->log.warnings = 0;
    assert_null(mguard_weak_create(f->ctx, NULL));
    assert_int_equal(f->log.warnings, 1);
    assert_int_equal(f->log.code, MGUARD_LOG_NULL_ARG);
    assert_null(mguard_weak_create(f->ctx, &zero));
    assert_int_equal(f->log.warnings, 2);
    assert_int_equal(f->log.code, MGUARD_LOG_BAD_VALUE_SIZE);
    assert_int_equal(mguard_weak_set(NULL, &a, &v), MGUARD_EINVAL);
    assert_int_equal(mguard_weak_set(f->t, NULL, &v), MGUARD_EINVAL);
    assert_int_equal(f->log.code, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_weak_set(f->t, &a, NULL), MGUARD_EINVAL);
    assert_int_equal(f->log.code, MGUARD_LOG_NULL_ARG);
    assert_null(mguard_weak_get(NULL, &a));
    assert_null(mguard_weak_get(f->t, NULL));
    assert_false(mguard_weak_contains(NULL, &a));
    assert_int_equal(mguard_weak_take(NULL, &a, NULL), MGUARD_EINVAL);
    assert_int_equal(mguard_weak_take(f->t, NULL, NULL), MGUARD_EINVAL);
    assert_int_equal(f->log.code, MGUARD_LOG_NULL_ARG);
    {
        long out = -1;
        setl(f->t, &a, 3);
        assert_int_equal(mguard_weak_take(NULL, &a, &out), MGUARD_EINVAL);
        assert_int_equal(mguard_weak_take(f->t, NULL, &out), MGUARD_EINVAL);
        assert_int_equal(f->log.code, MGUARD_LOG_NULL_ARG);
        assert_int_equal(out, -1);
        assert_int_equal(getl(f->t, &a), 3);   /* still there, not destroyed */
    }
    assert_int_equal(mguard_weak_count(NULL), 0);
    mguard_weak_clear(NULL);
    mguard_weak_destroy(NULL);
    {
        mguard_weak_iter it = mguard_weak_iterate(NULL);
        assert_false(mguard_weak_next(&it));
        assert_false(mguard_weak_next(NULL));
    }
    assert_int_equal(f->dl.calls, 0);
}

/* ---- misuse: every bad input gets its documented answer -------------- */

static void test_weak_create_refuses_bad_descs(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak_desc d;
    (void)state;
    memset(&d, 0, sizeof d);
    assert_null(mguard_weak_create(ctx, NULL));
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_null(mguard_weak_create(ctx, &d));
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_BAD_VALUE_SIZE);
    d.value_size = ((size_t)1 << 24) + 1;
    assert_null(mguard_weak_create(ctx, &d));
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_BAD_VALUE_SIZE);
    assert_int_equal(mgt_objects(ctx), 0);
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
    assert_int_equal(mguard_weak_take(NULL, &key, NULL), MGUARD_EINVAL);
    assert_int_equal(mguard_weak_count(NULL), 0);
    mguard_weak_clear(NULL);
    mguard_weak_destroy(NULL);
    assert_null(MGUARD_WEAK_GET(NULL, &key, void *));
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
    assert_int_equal(mguard_weak_take(wrong, &key, NULL), MGUARD_EINVAL);
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
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_weak_set(t, &key, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(mguard_weak_take(t, NULL, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_null(mguard_weak_get(t, NULL));
    assert_false(mguard_weak_contains(t, NULL));
    assert_int_equal(mguard_weak_take(t, &key, NULL), MGUARD_NOT_FOUND);
    EXPECT_NO_LOG(log);
    assert_int_equal(mguard_weak_count(t), 0);
    assert_int_equal(mgt_objects(ctx), 0);
    mguard_ctx_destroy(ctx);
}

/* A NULL value is refused for a key already present too (an overwrite in
   a table with no destructor: mguard_weak_set's inline fast path): EINVAL,
   logged, the value kept. */
static void test_a_null_value_for_a_present_key_is_refused(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    mguard_weak *t = long_table(ctx, NULL);
    static int key;
    long v = 7;
    (void)state;
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    assert_int_equal(mguard_weak_set(t, &key, NULL), MGUARD_EINVAL);
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_NULL_ARG);
    assert_int_equal(*MGUARD_WEAK_GET(t, &key, long), 7);
    assert_int_equal(mguard_weak_count(t), 1);
    EXPECT_NO_LOG(log);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_a_pointer_read_of_a_table_of_other_values_is_refused(void **state)
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
    assert_int_equal(mguard_weak_set(t, &key, v), MGUARD_OK);
    assert_null(MGUARD_WEAK_GET(t, &key, void *));   /* not a pointer table: NULL, not 8 of the 16 bytes */
    EXPECT_LOG(log, log.warnings, MGUARD_LOG_WEAK_SIZE_MISMATCH);
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
    (void)state;
    memset(&x, 0, sizeof x);
    memset(&d, 0, sizeof d);
    d.value_size = sizeof v;
    d.value_dtor = dtor_reenters_table;
    d.user = &x;
    x.t = mguard_weak_create(ctx, &d);
    assert_int_equal(mguard_weak_set(x.t, &k1, &v), MGUARD_OK);
    assert_int_equal(mguard_weak_set(x.t, &k2, &v), MGUARD_OK);
    mguard_weak_destroy(x.t);
    assert_int_equal(x.calls, 2);
    assert_int_equal(x.set_status, MGUARD_EINVAL);
    assert_int_equal(log.count, 2);
    assert_int_equal(log.warnings, 2);
    assert_int_equal(log.code, MGUARD_LOG_DESTROY_TWICE);   /* after weak_set's MGUARD_LOG_HANDLE_DESTROYING */
    assert_int_equal(mgt_objects(ctx), 0);
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
            mguard_weak_take(t, &k[2], NULL);             /* not yet visited: skipped */
            mguard_weak_take(t, &k[0], NULL);             /* visited already */
            v = 100;
            mguard_weak_set(t, &k[3], &v);            /* overwrite: keeps its place */
            for (i = 8; i < 40; i++) {                /* growth and compaction */
                v = i;
                mguard_weak_set(t, &k[i], &v);
                if (i % 2) mguard_weak_take(t, &k[i], NULL);
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

/* ---- regressions, and the hot paths the benchmark tunes -------------- */

/* Regression: records moved when the registry grew, but a record with at
   most two tables pointed at its own inline array: after the move that
   pointer dangled (heap-use-after-free in mguard_on_destroy, a free() of a
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
    assert_int_equal(mgt_objects(ctx), 39);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(dl.calls, 40);
    assert_int_equal(al.live_blocks, 0);
    assert_int_equal(log.count, 0);
}

/* Regression: a record's inline table list used to keep pointing into the
   old record array after the array was reallocated. */
static void test_keys_in_two_tables_survive_registry_growth(void **state)
{
    test_log log; test_alloc al; dtor_log dl = {0};
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d = {sizeof(long), dtor_count_long, NULL, &dl};
    mguard_weak *a = mguard_weak_create(ctx, &d), *b = mguard_weak_create(ctx, &d);
    static char keys[1000];
    long i;
    (void)state;
    for (i = 0; i < 1000; i++) {
        assert_int_equal(mguard_weak_set(a, &keys[i], &i), MGUARD_OK);
        assert_int_equal(mguard_weak_set(b, &keys[i], &i), MGUARD_OK);
    }
    assert_ctx_ok(ctx);
    for (i = 0; i < 1000; i += 2) mguard_on_destroy(ctx, &keys[i]);
    assert_int_equal(mguard_weak_count(a), 500);
    assert_int_equal(mguard_weak_count(b), 500);
    assert_int_equal(mgt_objects(ctx), 500);
    assert_int_equal(dl.calls, 1000);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(dl.calls, 2000);
    assert_int_equal(al.live_blocks, 0);
    assert_int_equal(log.count, 0);
}

/* mguard_weak_set copies a value that lives inside the table itself (a
   pointer from mguard_weak_get) before the entries can move. */
static void test_set_new_key_from_a_value_inside_the_table(void **state)
{
    test_log log; test_alloc al; dtor_log dl = {0};
    mguard_ctx *ctx = test_ctx(&log, &al);
    mguard_weak_desc d = {sizeof(long), dtor_count_long, NULL, &dl};
    mguard_weak *t = mguard_weak_create(ctx, &d);
    static char keys[100];
    long v = 7, i;
    (void)state;
    assert_int_equal(mguard_weak_set(t, &keys[0], &v), MGUARD_OK);
    for (i = 1; i < 100; i++)   /* grows the entries several times */
        assert_int_equal(mguard_weak_set(t, &keys[i], mguard_weak_get(t, &keys[i - 1])), MGUARD_OK);
    for (i = 0; i < 100; i++) assert_int_equal(*MGUARD_WEAK_GET(t, &keys[i], long), 7);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(dl.calls, 100);
    assert_int_equal(al.live_blocks, 0);
    assert_int_equal(log.count, 0);
}

/* Regression: mguard_weak_get (and so _contains and _get_ptr) read through
   a handle that was not a table, where every other table function checks
   it. */
static void test_weak_get_refuses_a_foreign_handle(void **state)
{
    test_log log;
    mguard_ctx *ctx = test_ctx(&log, NULL);
    static int key;
    mguard_weak *not_a_table = (mguard_weak *)(void *)ctx;
    (void)state;
    assert_null(mguard_weak_get(not_a_table, &key));
    assert_false(mguard_weak_contains(not_a_table, &key));
    assert_null(MGUARD_WEAK_GET(not_a_table, &key, void *));
    assert_int_equal(mguard_weak_count(not_a_table), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* Regression: mguard_weak_set of a dying key into a table of values over
   256 bytes allocated its copy of the value before it checked the key, so
   with the allocator failing it answered ENOMEM where the call is misuse
   (EINVAL). Found by the fuzzer (tests/corpus/regress-dying-key-large-
   value). */
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
    assert_int_equal(log.count, 1);
    assert_int_equal(log.code, MGUARD_LOG_OBJECT_DYING);
    assert_int_equal(mguard_weak_count(x.t), 0);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
}

/* Regression: a mguard_weak_set that could not grow the object registry
   logged "out of memory" twice (once in the registry, once in
   mguard_weak_set). */
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
    assert_int_equal(log.code, MGUARD_LOG_NOMEM);
    assert_int_equal(mgt_objects(ctx), 0);
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    assert_ctx_ok(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* Regression (issue 23): a table's dense array and index kept their peak
   size for good. After 10,000 keys came and went, insert/remove cycles of
   one key at a time compact the table, which now gives back what it no
   longer needs: the table holds memory in proportion to its live keys
   (the registry, warmed up first by another table, keeps its records'
   array). */
static void test_a_table_shrinks_far_below_its_peak(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_weak *t;
    static char keys[30000];
    long long base;
    long i;
    (void)state;
    t = long_table(ctx, NULL);
    for (i = 0; i < 10000; i++) assert_int_equal(mguard_weak_set(t, &keys[i], &i), MGUARD_OK);
    mguard_weak_destroy(t);   /* the registry's arrays stay at 10,000 records */
    t = long_table(ctx, NULL);
    base = al.live_bytes;
    for (i = 0; i < 10000; i++) assert_int_equal(mguard_weak_set(t, &keys[i], &i), MGUARD_OK);
    for (i = 0; i < 10000; i++) assert_int_equal(mguard_weak_take(t, &keys[i], NULL), MGUARD_OK);
    for (i = 10000; i < 30000; i++) {
        assert_int_equal(mguard_weak_set(t, &keys[i], &i), MGUARD_OK);
        assert_int_equal(mguard_weak_take(t, &keys[i], NULL), MGUARD_OK);
    }
    assert_int_equal(mguard_weak_count(t), 0);
    assert_true(al.live_bytes <= base + 1024);
    test_ctx_finish(ctx, &al);
}

/* A destroyed table's id goes back to the context and the next table takes
   it again: creating and destroying tables one at a time, each with an
   entry, holds the context's memory steady (the array of table ids does
   not grow with every table ever made). */
static void test_tables_made_and_destroyed_in_turn_hold_memory_steady(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_weak *t;
    static int key;
    long long bytes;
    long blocks, v = 1;
    int i;
    (void)state;
    t = long_table(ctx, NULL);   /* warms up the index and the id array */
    assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
    mguard_weak_destroy(t);
    bytes = al.live_bytes;
    blocks = al.live_blocks;
    for (i = 0; i < 100; i++) {
        t = long_table(ctx, NULL);
        assert_non_null(t);
        assert_int_equal(mguard_weak_set(t, &key, &v), MGUARD_OK);
        mguard_weak_destroy(t);
    }
    assert_int_equal(al.live_bytes, bytes);
    assert_int_equal(al.live_blocks, blocks);
    test_ctx_finish(ctx, &al);
}

/* A compaction that shrinks a table cuts its order first, then its value
   array (values over 8 bytes): out of memory on the second, the value
   array stays the larger, never smaller than the order, and the table
   goes on with every value in place. 64 entries of 16-byte values, 62
   removed: the next set compacts to 3 and shrinks the order from 64 to 8
   entries (56 of 8 bytes given back); the value array's cut fails. A
   second table keeps 40 other keys in the context's index, so that the
   set does not shrink the index (2 + 40 keys of 128 slots: more than a
   ninth full) and its allocations are the order's cut, then the value
   array's. */
typedef struct pair16 { int64_t a, b; } pair16;   /* 16 bytes on every ABI: a value array */
/* An allocator whose blocks are only 8-aligned (malloc's + 8; on i386 the
   tests' own gives 4): the index's block must still hold its 64-aligned
   slots (it assumed 16-aligned blocks: ASan saw an overflow of up to 8
   bytes, and 32-bit builds a corrupted heap). */
static void *realloc8(void *p, size_t n, void *user)
{
    unsigned char *b = (unsigned char *)realloc(p ? (unsigned char *)p - 8 : NULL, n + 8);
    (void)user;
    return b ? b + 8 : NULL;
}
static void free8(void *p, void *user)
{
    (void)user;
    if (p) free((unsigned char *)p - 8);
}

static void test_the_index_fits_in_blocks_an_allocator_aligns_to_8(void **state)
{
    mguard_ctx_desc cd;
    mguard_ctx *ctx;
    mguard_weak_desc d;
    mguard_weak *t;
    static char keys[3000];
    long i, v, sum = 0;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.allocator.realloc_fn = realloc8;
    cd.allocator.free_fn = free8;
    ctx = mguard_ctx_create(&cd);
    assert_non_null(ctx);
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    t = mguard_weak_create(ctx, &d);
    for (i = 0; i < 3000; i++) {   /* the index grows through every size up to 4096 slots */
        v = i;
        assert_int_equal(mguard_weak_set(t, &keys[i], &v), MGUARD_OK);
    }
    for (i = 0; i < 3000; i++) sum += *(const long *)mguard_weak_get(t, &keys[i]);
    assert_int_equal(sum, 2999L * 3000 / 2);
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
    mguard_ctx_destroy(ctx);
}

static void test_a_shrink_out_of_memory_keeps_the_larger_value_array(void **state)
{
    test_alloc al;
    mguard_ctx *ctx = test_ctx(NULL, &al);
    mguard_weak_desc d;
    mguard_weak *t, *keep;
    static char keys[96], others[40];
    pair16 v;
    const pair16 *p;
    long long before;
    long i;
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(pair16);
    t = mguard_weak_create(ctx, &d);
    keep = mguard_weak_create(ctx, &d);
    assert_non_null(keep);
    for (i = 0; i < 40; i++) {
        v.a = v.b = i;
        assert_int_equal(mguard_weak_set(keep, &others[i], &v), MGUARD_OK);
    }
    for (i = 0; i < 64; i++) {
        v.a = i;
        v.b = -i;
        assert_int_equal(mguard_weak_set(t, &keys[i], &v), MGUARD_OK);
    }
    for (i = 2; i < 64; i++) assert_int_equal(mguard_weak_take(t, &keys[i], NULL), MGUARD_OK);
    before = al.live_bytes;
    al.fail_at = al.calls + 2;   /* the order's cut, then the value array's */
    v.a = 64;
    v.b = -64;
    assert_int_equal(mguard_weak_set(t, &keys[64], &v), MGUARD_OK);
    al.fail_at = 0;
    assert_int_equal(al.failures, 1);
    assert_int_equal(al.live_bytes, before - 56 * 8);
    for (i = 65; i < 96; i++) {
        v.a = i;
        v.b = -i;
        assert_int_equal(mguard_weak_set(t, &keys[i], &v), MGUARD_OK);
    }
    assert_int_equal(mguard_weak_count(t), 2 + 32);
    for (i = 0; i < 96; i++) {
        p = (const pair16 *)mguard_weak_get(t, &keys[i]);
        if (i >= 2 && i < 64) {
            assert_null(p);
            continue;
        }
        assert_non_null(p);
        assert_int_equal(p->a, i);
        assert_int_equal(p->b, -i);
    }
    test_ctx_finish(ctx, &al);
}

/* Inside an object's death, the refusals and the double destroy name it
   with the describe hook (issue 25); the hook may destroy the table whose
   refusal it names for. */
typedef struct dying_calls {
    mguard_ctx *ctx;
    mguard_weak *t;
    test_log *log;
    test_namer *nm;   /* non-NULL: its hook destroys t at the weak_set refusal */
    char lines[3][512];
} dying_calls;
static void destroy_table(void *t) { mguard_weak_destroy((mguard_weak *)t); }
static void call_on_dying(void *guard, const void *obj, const char *attr, void *user)
{
    dying_calls *dc = (dying_calls *)user;
    mguard_ref r;
    long v = 1;
    (void)guard;
    (void)attr;
    mguard_on_destroy(dc->ctx, obj);
    snprintf(dc->lines[0], sizeof dc->lines[0], "%s", dc->log->last);
    r = mguard_ref_make(dc->ctx, obj);
    assert_null(mguard_ref_get(dc->ctx, r));
    snprintf(dc->lines[1], sizeof dc->lines[1], "%s", dc->log->last);
    if (dc->nm) {
        dc->nm->then = destroy_table;
        dc->nm->arg = dc->t;
    }
    assert_int_equal(mguard_weak_set(dc->t, obj, &v), MGUARD_EINVAL);
    snprintf(dc->lines[2], sizeof dc->lines[2], "%s", dc->log->last);
}
static void test_lines_about_a_dying_object_name_it(void **state)
{
    test_log log;
    test_namer nm;
    dying_calls dc;
    static int k, guard;
    mguard_weak_desc d;
    mguard_weak *t0 = NULL;
    int round;
    (void)state;
    memset(&nm, 0, sizeof nm);
    memset(&dc, 0, sizeof dc);
    memset(&d, 0, sizeof d);
    test_namer_add(&nm, &k, "k");
    dc.ctx = test_named_ctx(&log, &nm, false, NULL);
    dc.log = &log;
    d.value_size = sizeof(long);
    /* round 1: the hook destroys the table whose refusal it names k for */
    for (round = 0; round < 2; round++) {
        memset(&log, 0, sizeof log);
        nm.calls = 0;
        dc.nm = round ? &nm : NULL;
        dc.t = mguard_weak_create(dc.ctx, &d);
        assert_int_equal(mguard_watch(dc.ctx, &k, &guard, call_on_dying, &dc), MGUARD_OK);
        mguard_on_destroy(dc.ctx, &k);
        assert_string_equal(dc.lines[0], "mguard_on_destroy: k is already being destroyed; ignored");
        assert_string_equal(dc.lines[1], "mguard_ref_make: k is being destroyed; refused");
        assert_string_equal(dc.lines[2], "mguard_weak_set: k is being destroyed; refused");
        assert_int_equal(log.warnings, 3);
        assert_int_equal(nm.calls, 3);
        assert_ctx_ok(dc.ctx);
        if (!round) t0 = dc.t;
    }
    mguard_weak_destroy(t0);   /* round 1's is gone */
    mguard_ctx_destroy(dc.ctx);
}

/* Values are stored 8-aligned (16 from 16 bytes), and the copy a
   destructor is handed is aligned the same, on 32-bit targets too (where
   the ABI aligns a stack array or a uint64_t less: make test32 runs this). */
static int misaligned, aligned_calls;
static void check_aligned(void *value, void *user)
{
    size_t need = *(const size_t *)user;
    aligned_calls++;
    if ((uintptr_t)value % need) misaligned++;
}

static void test_values_and_their_copies_are_aligned(void **state)
{
    static const size_t sizes[] = {8, 16, 32, 300};
    static char keys[4][8];
    size_t k, i, need[4];
    (void)state;
    for (k = 0; k < 4; k++) {
        mguard_ctx *ctx = test_ctx(NULL, NULL);
        mguard_weak_desc d;
        mguard_weak *t;
        unsigned char v[300];
        memset(&d, 0, sizeof d);
        memset(v, (int)k, sizeof v);
        need[k] = sizes[k] >= 16 ? 16 : 8;
        d.value_size = sizes[k];
        d.value_dtor = check_aligned;
        d.user = &need[k];
        t = mguard_weak_create(ctx, &d);
        misaligned = aligned_calls = 0;
        for (i = 0; i < 4; i++) {
            assert_int_equal(mguard_weak_set(t, keys[i], v), MGUARD_OK);
            assert_int_equal((uintptr_t)mguard_weak_get(t, keys[i]) % need[k], 0);
        }
        assert_int_equal(mguard_weak_set(t, keys[0], v), MGUARD_OK);    /* overwrite */
        assert_int_equal(mguard_weak_take(t, keys[1], NULL), MGUARD_OK); /* take */
        mguard_on_destroy(ctx, keys[2]);                                 /* death */
        mguard_weak_clear(t);                                            /* clear */
        assert_int_equal(mguard_weak_set(t, keys[3], v), MGUARD_OK);
        mguard_weak_destroy(t);                                          /* destroy */
        assert_int_equal(aligned_calls, 6);
        assert_int_equal(misaligned, 0);
        mguard_ctx_destroy(ctx);
    }
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_set_get_contains_count),
        T(test_typed_get_catches_a_wrong_type),
        T(test_keys_compare_by_address_not_content),
        T(test_overwrite_destroys_old_value_once),
        T(test_take_with_null_out_destroys_value_once_and_reports_not_found),
        T(test_take_copies_the_value_out_and_never_destroys_it),
        T(test_take_copies_a_large_value_whole),
        T(test_take_during_iteration_of_current_and_others),
        T(test_take_from_a_destructor_or_death_callback_of_the_same_table),
        T(test_key_death_removes_entry_from_every_table),
        T(test_address_reuse_does_not_revive_entry),
        T(test_destroy_table_destroys_values_in_insertion_order),
        T(test_clear_destroys_all_and_table_stays_usable),
        T(test_iterate_in_insertion_order),
        T(test_iterate_with_removal_of_current_and_others),
        T(test_iterate_survives_compaction),
        T(test_iterate_compaction_with_the_next_entry_live),
        T(test_iterate_compaction_after_removing_the_current_entry),
        T(test_iterate_compaction_after_removing_the_previous_entries),
        T(test_iterate_compaction_after_removing_the_next_entry),
        T(test_iterate_compaction_then_growth_by_inserts),
        T(test_remove_after_compaction_moved_the_entry),
        T(test_key_in_many_tables_removed_one_by_one),
        T(test_large_values_are_copied_and_destroyed),
        T(test_set_from_pointer_into_same_table),
        T(test_pointer_values_set_from_a_variable_and_read_typed),
        T(test_many_keys_grow_and_shrink),
        T(test_bad_input),
        cmocka_unit_test(test_weak_create_refuses_bad_descs),
        cmocka_unit_test(test_values_and_their_copies_are_aligned),
        cmocka_unit_test(test_null_table_is_refused_everywhere),
        cmocka_unit_test(test_a_context_handle_is_not_a_table),
        cmocka_unit_test(test_null_key_and_value_are_refused),
        cmocka_unit_test(test_a_null_value_for_a_present_key_is_refused),
        cmocka_unit_test(test_a_pointer_read_of_a_table_of_other_values_is_refused),
        cmocka_unit_test(test_table_being_destroyed_refuses_set_and_second_destroy),
        cmocka_unit_test(test_iterator_keeps_its_place_when_the_table_changes),
        cmocka_unit_test(test_keys_survive_registry_growth),
        cmocka_unit_test(test_keys_in_two_tables_survive_registry_growth),
        cmocka_unit_test(test_set_new_key_from_a_value_inside_the_table),
        cmocka_unit_test(test_weak_get_refuses_a_foreign_handle),
        cmocka_unit_test(test_dying_key_is_einval_whatever_the_allocator_does),
        cmocka_unit_test(test_failed_weak_set_logs_once),
        cmocka_unit_test(test_a_table_shrinks_far_below_its_peak),
        cmocka_unit_test(test_tables_made_and_destroyed_in_turn_hold_memory_steady),
        cmocka_unit_test(test_the_index_fits_in_blocks_an_allocator_aligns_to_8),
        cmocka_unit_test(test_a_shrink_out_of_memory_keeps_the_larger_value_array),
        cmocka_unit_test(test_lines_about_a_dying_object_name_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
