/* Fault injection and death storms, checked against the reference model.

   Each workload is a decoder program (tests/fuzz_decoder.h). It runs once
   to count mguard's allocations, K; then once for every N in 1..K with the
   Nth allocation failing. Each run must agree with the model all the way:
   every call either succeeds or answers MGUARD_ENOMEM having changed
   nothing (the model skips exactly the calls mguard refused), every void
   call (deaths, mutations, clears, destroys) behaves exactly as without
   the failure, mguard_ctx_check passes after every operation and inside
   every callback, every stored value is destroyed exactly once, and no
   block is left when the context is gone.

   The workloads reach every allocation site of mguard.h: context, registry
   records and index, table entries and index, a key's heap list of tables
   (a key in 8 tables), watcher lists (first list, growth, pruning), the
   copies of values over 256 bytes (overwrite, remove, clear), the death
   buffer (a key in 8 tables), and interned strings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "fuzz_decoder.h"

typedef struct sweep { long allocs, runs, enomem, ops, checks; } sweep;

/* Run prog without failures, then with each allocation failing in turn. */
static sweep fail_every_allocation(const fz_prog *p, fz_opts o, const char *name)
{
    sweep s;
    fz_result r;
    long n;
    memset(&s, 0, sizeof s);
    o.label = name;
    o.fail_at = 0;
    fz_run(p->b, p->n, &o, &r);
    assert_int_equal(r.enomem, 0);
    s.allocs = r.allocs;
    for (n = 1; n <= s.allocs; n++) {
        o.fail_at = n;
        fz_run(p->b, p->n, &o, &r);
        assert_int_equal(r.failures, 1);
        s.runs++;
        s.enomem += r.enomem;
        s.ops += r.ops;
        s.checks += r.checks;
    }
    printf("  %s: %ld allocations, each failed in turn: %ld runs agreed with the model "
           "(%ld ENOMEM answers, %ld operations, %ld ctx checks)\n",
           name, s.allocs, s.runs, s.enomem, s.ops, s.checks);
    return s;
}

/* Every capability, with re-entrant actions, sized to reach every
   allocation site. Pool of 10 objects, 8 tables. */
static void representative(fz_prog *p)
{
    static const int size_class[8] = { 3, 3, 0, 1, 2, 0, 1, 3 };
    int t, o, g, i;
    for (t = 0; t < 8; t++) fz_emit(p, FZ_CREATE_TABLE, t, size_class[t], (t % 2) ? 1 : 5, 0);
    /* the first values carry one new action each (actions 1..8) */
    fz_emit(p, FZ_SET, 0, 0, 0, FZ_INLINE); fz_emit(p, FZ_DESTROY_OBJ, 5, 0, 0, 0);
    fz_emit(p, FZ_SET, 1, 1, 0, FZ_INLINE); fz_emit(p, FZ_WATCH, 2, 3, 0, 0);
    fz_emit(p, FZ_SET, 2, 2, 0, FZ_INLINE); fz_emit(p, FZ_SET, 3, 4, 0, 0);
    fz_emit(p, FZ_SET, 3, 3, 0, FZ_INLINE); fz_emit(p, FZ_MUTATE, 2, 1, 0, 0);
    fz_emit(p, FZ_SET, 4, 4, 0, FZ_INLINE); fz_emit(p, FZ_DESTROY_TABLE, 6, 0, 0, 0);
    fz_emit(p, FZ_SET, 5, 5, 0, FZ_INLINE); fz_emit(p, FZ_REMOVE, 0, 6, 0, 0);
    fz_emit(p, FZ_SET, 6, 6, 0, FZ_INLINE); fz_emit(p, FZ_REF_MAKE, 0, 7, 0, 0);
    fz_emit(p, FZ_SET, 7, 7, 0, FZ_INLINE); fz_emit(p, FZ_GEN_TAG, 8, 0, 0, 0);
    /* every object in every table: keys with a heap list of 8 tables */
    for (o = 0; o < 10; o++)
        for (t = 0; t < 8; t++) fz_emit(p, FZ_SET, t, o, 0, (o * 8 + t) % 9);
    /* watcher lists: 12 watchers on object 0 (growth, then pruning of the
       ones whose guard died), a few elsewhere */
    for (g = 1; g < 10; g++) fz_emit(p, FZ_WATCH, 0, g, 0, g % 9);
    fz_emit(p, FZ_DESTROY_OBJ, 9, 0, 0, 0);
    for (g = 1; g < 5; g++) fz_emit(p, FZ_WATCH, 0, g, 0, 0);
    fz_emit(p, FZ_WATCH, 1, 0, 0, 4);
    fz_emit(p, FZ_WATCH, 2, 2, 0, 1);
    for (i = 0; i < 6; i++) fz_emit(p, FZ_REF_MAKE, i, i + 2, 0, 0);
    fz_emit(p, FZ_GEN_TAG, 1, 0, 0, 0);
    fz_emit(p, FZ_GEN_ADVANCE, 0, 0, 0, 0);
    fz_emit(p, FZ_GEN_TAG, 2, 0, 0, 0);
    fz_emit(p, FZ_MARK_CLASS, 3, 0, 0, 0);
    for (i = 0; i < 8; i++) fz_emit(p, FZ_INTERN, i, 0, 0, 0);
    fz_emit(p, FZ_MUTATE, 0, 0, 0, 0);
    fz_emit(p, FZ_MUTATE, 1, 2, 0, 0);
    fz_emit(p, FZ_ITER_START, 0, 0, 0, 0);
    fz_emit(p, FZ_ITER_NEXT, 0, 0, 0, 0);
    /* values over 256 bytes: overwrite, remove, clear copy them */
    fz_emit(p, FZ_SET, 0, 1, 0, 3);
    fz_emit(p, FZ_SET, 1, 2, 0, 0);
    fz_emit(p, FZ_REMOVE, 1, 3, 0, 0);
    fz_emit(p, FZ_ITER_NEXT, 0, 0, 0, 0);
    fz_emit(p, FZ_CLEAR, 0, 0, 0, 0);
    fz_emit(p, FZ_ITER_NEXT, 0, 0, 0, 0);
    /* a death with 8 table entries: the death buffer */
    fz_emit(p, FZ_DESTROY_OBJ, 4, 0, 0, 0);
    fz_emit(p, FZ_DESTROY_OBJ, 3, 0, 0, 0);
    for (o = 0; o < 10; o++) fz_emit(p, FZ_SET, 7, o, 0, 0);
    fz_emit(p, FZ_DESTROY_TABLE, 2, 0, 0, 0);
    fz_emit(p, FZ_REF_GET, 1, 0, 0, 0);
    fz_emit(p, FZ_GEN_CLEAR, 0, 0, 0, 0);
    fz_emit(p, FZ_CREATE_TABLE, 2, 2, 5, 0);
    for (o = 0; o < 10; o++) fz_emit(p, FZ_SET, 2, o, 0, 1 + o % 8);
    fz_emit(p, FZ_DESTROY_OBJ, 0, 0, 0, 0);
    fz_emit(p, FZ_DESTROY_OBJ, 7, 0, 0, 0);
    /* a key in two tables of 264-byte values (a death buffer with the
       inline table list) whose watcher destroys one of them mid-death */
    fz_emit(p, FZ_DESTROY_OBJ, 4, 0, 0, 0);
    fz_emit(p, FZ_SET, 0, 4, 0, 0);
    fz_emit(p, FZ_SET, 1, 4, 0, 0);
    fz_emit(p, FZ_WATCH, 4, 5, 0, FZ_INLINE); fz_emit(p, FZ_DESTROY_TABLE, 0, 0, 0, 0);
    fz_emit(p, FZ_DESTROY_OBJ, 4, 0, 0, 0);
    /* a value over 256 bytes whose destructor destroys its own table */
    fz_emit(p, FZ_SET, 1, 6, 0, FZ_INLINE); fz_emit(p, FZ_DESTROY_TABLE, 8, 0, 0, 0);
    fz_emit(p, FZ_REMOVE, 1, 6, 0, 0);
}

static void test_every_allocation_failure_is_survived(void **state)
{
    fz_prog p = { NULL, 0, 0 };
    fz_opts o;
    sweep s;
    (void)state;
    representative(&p);
    memset(&o, 0, sizeof o);
    o.nobj = 10;
    o.ntab = 8;
    o.depth = 12;
    o.budget = 400;
    s = fail_every_allocation(&p, o, "representative workload");
    assert_true(s.allocs > 100);
    assert_true(s.enomem > 0);
    free(p.b);
}

/* The scope tracker and the ledgers under every allocation failure: names,
   nested and out-of-order frames, the three kinds of tracking, writes,
   deletions, loads, clones, equal, restore, prune, and deaths reaching
   named active components and objects tracked by a ledger and its clones.
   Pool of 6 objects, 2 tables. */
static void scope_and_ledger(fz_prog *p)
{
    fz_emit(p, FZ_CREATE_TABLE, 0, 1, 5, 0);
    fz_emit(p, FZ_SET, 0, 0, 0, 0);
    fz_emit(p, FZ_S_NAME, 0, 0, 0, 0);
    fz_emit(p, FZ_S_NAME, 1, 6, 0, 0);
    fz_emit(p, FZ_S_ENTER, 0, 0, 0, 0);
    fz_emit(p, FZ_S_ENTER, 1, 0, 0, 0);
    fz_emit(p, FZ_S_ENTER, 0, 0, 0, 0);
    fz_emit(p, FZ_S_NAME, 2, 3, 0, 0);
    fz_emit(p, FZ_S_ENTER, 2, 0, 0, 0);
    fz_emit(p, FZ_S_EXIT, 1, 0, 0, 0);
    fz_emit(p, FZ_S_QUERY, 0, 0, 0, 0);
    fz_emit(p, FZ_L_TRACK, 1, 0, 0, 0);
    fz_emit(p, FZ_L_TRACK, 2, 1, 1, 0);
    fz_emit(p, FZ_L_TRACK, 3, 2, 8, 0);
    fz_emit(p, FZ_L_TRACK, 4, 1, 2, 0);
    fz_emit(p, FZ_L_WRITE, 1, 2, 0, 0);
    fz_emit(p, FZ_L_WRITE, 2, 4, 1, 0);
    fz_emit(p, FZ_L_WRITE, 1, 0xff, 4, 0);
    fz_emit(p, FZ_L_WRITE, 4, 1, 2, 0);
    fz_emit(p, FZ_L_MARK, 3, 0, 0, 0);
    fz_emit(p, FZ_L_LOAD, 1, 0, 0, 0);
    fz_emit(p, FZ_L_LOAD, 2, 0, 1, 0);
    fz_emit(p, FZ_L_CLONE, 0, 0, 0, 0);
    fz_emit(p, FZ_L_WRITE, 1, 3, 1, 0);
    fz_emit(p, FZ_L_EQUAL, 1, 0, 0, 0);
    fz_emit(p, FZ_L_RESTORE, 1, 0, 0, 0);
    fz_emit(p, FZ_L_PRUNE, 4, 0, 1, 0);
    fz_emit(p, FZ_L_CLONE, 1, 0, 0x10, 0);
    fz_emit(p, FZ_DESTROY_OBJ, 2, 0, 0, 0);
    fz_emit(p, FZ_DESTROY_OBJ, 0, 0, 0, 0);
    fz_emit(p, FZ_L_CLEAR, 0, 0, 0x20, 0);
    fz_emit(p, FZ_L_DESTROY, 0, 0, 0x10, 0);
    fz_emit(p, FZ_L_PRUNE, 0, 0, 0, 0);
    fz_emit(p, FZ_S_QUERY, 1, 6, 0, 0);
}

/* A workload written by build, over 6 objects and 2 tables, with every
   allocation failing in turn: it makes more than 20 allocations and some
   operation answers ENOMEM. */
static void sweep_small_workload(void (*build)(fz_prog *), const char *name)
{
    fz_prog p = { NULL, 0, 0 };
    fz_opts o;
    sweep s;
    build(&p);
    memset(&o, 0, sizeof o);
    o.nobj = 6;
    o.ntab = 2;
    s = fail_every_allocation(&p, o, name);
    assert_true(s.allocs > 20);
    assert_true(s.enomem > 0);
    free(p.b);
}

static void test_every_allocation_failure_is_survived_by_scope_and_ledger(void **state)
{
    (void)state;
    sweep_small_workload(scope_and_ledger, "scope and ledger workload");
}

/* Guarded caches under every allocation failure: a bounded cache (3
   entries, max_cost 5) filled past its bounds, a dependency added to an
   entry, computes that declare one (its attribute interned), go stale
   (their dependency mutated, a key destroyed: the value parked), re-enter
   with the same keys, set another key from their action (an eviction); a
   mutation with a file and line (the reason's copies), a reason, the
   counters, a walk, a death, remove; a second cache destroyed by its own
   compute's action; clear and destroy. Pool of 6 objects, 2 tables. */
static void caches(fz_prog *p)
{
    fz_emit(p, FZ_CACHE, 0x60, 0, 0, 0);
    fz_emit(p, FZ_CACHE, 0x12, 0, 0, 0);
    fz_emit(p, FZ_CACHE, 0x22, 1, 1, 0);
    fz_emit(p, FZ_CACHE, 0x38, 1, 0x41, 0);
    fz_emit(p, FZ_CACHE, 0x36, 2, 0, 0);
    fz_emit(p, FZ_CACHE, 0x46, 3, 0, 0);
    fz_emit(p, FZ_CACHE, 0x96, 4, 0, 0);
    fz_emit(p, FZ_CACHE, 0x06, 5, 0x60, FZ_INLINE); fz_emit(p, FZ_CACHE, 0x32, 3, 0, 0);
    fz_emit(p, FZ_CACHE, 0x1E, 1, 1, 0);
    fz_emit(p, FZ_CACHE, 0x0D, 1, 1, 0);
    fz_emit(p, FZ_CACHE, 0x0C, 0, 0, 0);
    fz_emit(p, FZ_CACHE, 0x0B, 0, 0, 0);
    fz_emit(p, FZ_DESTROY_OBJ, 4, 0, 0, 0);
    fz_emit(p, FZ_CACHE, 0x09, 0, 0, 0);
    fz_emit(p, FZ_CACHE, 0x00, 0, 0x10, 0);
    fz_emit(p, FZ_CACHE, 0x12, 1, 0x10, 0);
    fz_emit(p, FZ_CACHE, 0x07, 2, 0x30, FZ_INLINE); fz_emit(p, FZ_CACHE, 0x01, 0, 0x10, 0);
    fz_emit(p, FZ_CACHE, 0x0A, 0, 0, 0);
    fz_emit(p, FZ_CACHE, 0x01, 0, 0, 0);
}

static void test_every_allocation_failure_is_survived_by_caches(void **state)
{
    (void)state;
    sweep_small_workload(caches, "cache workload");
}

/* Regression (issue 23, fuzz findings; the decoder's fault model was
   wrong, not mguard): allocations that fail after a callback inside a
   cache call. A miss's first allocation (its entry) comes after the
   parked value's destructor has run an action that allocates itself: the
   model's failure, armed when the miss began, was taken or disarmed by
   that action, so the model set ENOMEM and computed where mguard set and
   answered ENOMEM. A compute's action reads the drop reasons, then the
   store allocates: with that allocation failing, mguard had read exact
   reasons (nothing had failed yet) and the model, run after the whole
   operation, compared them as inexact. The kept entry blocks matter: the
   second miss has two keys, so the freed one-key block is not reused and
   its entry is a real allocation. Pool of 6 objects, 2 tables. */
static void cache_callbacks_before_allocations(fz_prog *p)
{
    fz_emit(p, FZ_CREATE_TABLE, 0, 0, 5, 0);
    /* a compute depends on "x" of object 2 and mutates it: its value is
       parked, its destructor runs the inline action (a set) */
    fz_emit(p, FZ_CACHE, 0x37, 1, 0x40, FZ_INLINE); fz_emit(p, FZ_SET, 0, 3, 0, 0);
    /* a two-key miss: the parked value's destructor sets, then the entry */
    fz_emit(p, FZ_CACHE, 0x05, 4, 0x01, 0);
    /* a mutation of object 4's "y" at fz_cache.c:10: the entry (4, 5)
       drops, its reason with the interned copies */
    fz_emit(p, FZ_CACHE, 0x1E, 4, 0x01, 0);
    /* a miss on the second cache: its compute's action reads the reasons,
       then the value is stored (the new cache's index and records) */
    fz_emit(p, FZ_CACHE, 0x06, 2, 0x30, FZ_INLINE); fz_emit(p, FZ_CACHE, 0x0D, 4, 0x01, 0);
}

static void test_every_allocation_failure_after_a_cache_callback_agrees_with_model(void **state)
{
    (void)state;
    sweep_small_workload(cache_callbacks_before_allocations, "cache callbacks before allocations");
}

/* The operations of issue 11 under every allocation failure: the
   dynamism tracker (new paths, a path over its 256-byte buffer, ranks
   growing to 300, scalars), scope counters, reports and a destroy, ledger
   apply (its callback destroying the write's value) and diff, and a
   context replaced by a thread-safe one. Pool of 6 objects, 2 tables. */
static void issue11_ops(fz_prog *p)
{
    fz_emit(p, FZ_D_OBSERVE, 0, 3, 0, 0);
    fz_emit(p, FZ_D_OBSERVE, 1, 3, 1, 0);
    fz_emit(p, FZ_D_OBSERVE, 13, 11, 0, 0);
    fz_emit(p, FZ_D_SCALAR, 8, 0, 31, 0);
    fz_emit(p, FZ_D_QUERY, 13, 0, 10, 0);
    fz_emit(p, FZ_D_FORMAT, 0, 3, 0, 0);
    fz_emit(p, FZ_S_NAME, 0, 0, 0, 0);
    fz_emit(p, FZ_S_ENTER, 0, 0, 0, 0);
    fz_emit(p, FZ_S_ADD, 0, 0, 2, 0);
    fz_emit(p, FZ_S_ADD, 0, 1, 8, 0);
    fz_emit(p, FZ_S_REPORT, 0, 1, 0, 0);
    fz_emit(p, FZ_S_DESTROY, 0, 0, 0, 0);
    fz_emit(p, FZ_S_ENTER, 0, 0, 0, 0);
    fz_emit(p, FZ_L_TRACK, 1, 0, 0, 0);
    fz_emit(p, FZ_L_TRACK, 2, 0, 1, 0);
    fz_emit(p, FZ_L_WRITE, 1, 2, 0, 0);
    fz_emit(p, FZ_L_WRITE, 2, 1, 1, 0);
    fz_emit(p, FZ_L_CLONE, 0, 0, 0, 0);
    fz_emit(p, FZ_L_APPLY, 0, 0, 0, FZ_INLINE); fz_emit(p, FZ_DESTROY_OBJ, 7, 0, 0, 0);
    fz_emit(p, FZ_L_DIFF, 1, 0, 0, 0);
    fz_emit(p, FZ_CTX_CYCLE, 1, 0, 0, 0);
    fz_emit(p, FZ_D_OBSERVE, 2, 4, 3, 0);
    fz_emit(p, FZ_MISC, 3, 1, 0, 0);
}

static void test_every_allocation_failure_is_survived_by_issue11_ops(void **state)
{
    (void)state;
    sweep_small_workload(issue11_ops, "issue 11 workload");
}

/* A death storm: every value's destructor and every watcher destroys
   another object (or a table), chosen at random; then one death sets it
   off, and every object is destroyed from the top in random order. */
static void storm(fz_prog *p, uint64_t seed, int nobj, int ntab)
{
    uint64_t rng = seed;
    int t, o, k, i, nact = 0;
    for (t = 0; t < ntab; t++) fz_emit(p, FZ_CREATE_TABLE, t, (int)(fz_rand(&rng) % 4), 1 | (int)(fz_rand(&rng) % 2) * 4, 0);
    for (o = 0; o < nobj; o++) {
        int nt = 1 + (int)(fz_rand(&rng) % (uint64_t)ntab);
        for (k = 0; k < nt; k++) {
            int target = (int)(fz_rand(&rng) % (uint64_t)nobj);
            fz_emit(p, FZ_SET, (int)(fz_rand(&rng) % (uint64_t)ntab), o, 0, FZ_INLINE);
            if (fz_rand(&rng) % 8 == 0) fz_emit(p, FZ_DESTROY_TABLE, (int)(fz_rand(&rng) % (uint64_t)ntab), 0, 0, 0);
            else fz_emit(p, FZ_DESTROY_OBJ, target, 0, 0, 0);
            nact++;
        }
        for (k = 0; k < 2; k++) {
            int g = (int)(fz_rand(&rng) % (uint64_t)nobj);
            fz_emit(p, FZ_WATCH, o, g, 0, FZ_INLINE);
            fz_emit(p, FZ_DESTROY_OBJ, (int)(fz_rand(&rng) % (uint64_t)nobj), 0, 0, 0);
            nact++;
        }
    }
    fz_emit(p, FZ_DESTROY_OBJ, (int)(fz_rand(&rng) % (uint64_t)nobj), 0, 0, 0);
    /* the survivors, from the top, in random order */
    for (i = 0; i < nobj; i++) fz_emit(p, FZ_DESTROY_OBJ, (int)(fz_rand(&rng) % (uint64_t)nobj), 0, 0, 0);
    for (o = 0; o < nobj; o++) fz_emit(p, FZ_DESTROY_OBJ, o, 0, 0, 0);
    for (o = 0; o < nobj; o++) fz_emit(p, FZ_QUERY_OBJ, o, 0, 0, 0);
    (void)nact;
}

static void test_death_storms_agree_with_model(void **state)
{
    uint64_t seed;
    (void)state;
    for (seed = 1; seed <= 40; seed++) {
        fz_prog p = { NULL, 0, 0 };
        fz_opts o;
        fz_result r;
        char label[64];
        storm(&p, seed, 8 + (int)(seed % 40), 1 + (int)(seed % 8));
        memset(&o, 0, sizeof o);
        o.nobj = 8 + (int)(seed % 40);
        o.ntab = 1 + (int)(seed % 8);
        o.depth = 64;
        o.budget = 100000;
        snprintf(label, sizeof label, "storm %lu", (unsigned long)seed);
        o.label = label;
        fz_run(p.b, p.n, &o, &r);
        assert_int_equal(r.enomem, 0);
        free(p.b);
    }
}

static void test_death_storm_survives_every_allocation_failure(void **state)
{
    fz_prog p = { NULL, 0, 0 };
    fz_opts o;
    sweep s;
    (void)state;
    storm(&p, 7, 24, 6);
    memset(&o, 0, sizeof o);
    o.nobj = 24;
    o.ntab = 6;
    o.depth = 64;
    o.budget = 100000;
    s = fail_every_allocation(&p, o, "death storm");
    assert_true(s.allocs > 20);
    free(p.b);
}

/* A mismatch with the model fails the running test instead of aborting. */
static void report_mismatch(const char *report) { fail_msg("%s", report); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_failure_is_survived),
        cmocka_unit_test(test_every_allocation_failure_is_survived_by_scope_and_ledger),
        cmocka_unit_test(test_every_allocation_failure_is_survived_by_caches),
        cmocka_unit_test(test_every_allocation_failure_after_a_cache_callback_agrees_with_model),
        cmocka_unit_test(test_every_allocation_failure_is_survived_by_issue11_ops),
        cmocka_unit_test(test_death_storms_agree_with_model),
        cmocka_unit_test(test_death_storm_survives_every_allocation_failure),
    };
    fz_mismatch_hook = report_mismatch;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
