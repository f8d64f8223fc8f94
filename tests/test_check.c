/* mguard_ctx_check must see every broken invariant it claims to check.
   Every assert_ctx_ok of the suite, and the differential model's check
   after each operation, rely on it: a checker that answers OK without
   looking would let them all pass. This file compiles its own private copy
   of mguard (MGUARD_STATIC) so it can reach the private structures. Each
   test builds a small valid state, then, one at a time, breaks one
   invariant by hand, expects MGUARD_EINVAL with the exact log line and
   repairs the state; at the end the state checks OK again (so the context
   is destroyed sound). stb_ds comes from the suite's implementation
   object.

   Every check of mguard_ctx_check, of the scope and dynamism trackers'
   checks and of mgt_ledger_check is broken here once, except:
   - mgt_ledger_check's "<what> %p is not held" for tracked objects,
     values, payloads and hooked objects: the same helper as for hook
     functions, which is tested;
   - the debug registry's checks (MGUARD_DEBUG builds; tests/test_debug.c
     covers that registry). */
#define MGUARD_STATIC
#define MGUARD_IMPLEMENTATION
#include "common.h"

static test_log lg;
static char want[512];

/* The check fails, logging exactly this line (printf format: the words
   name the broken invariant) and nothing else. */
#define EXPECT_BROKEN(ctx, ...) do { \
        snprintf(want, sizeof want, __VA_ARGS__); \
        lg.count = lg.errors = 0; \
        assert_int_equal(mguard_ctx_check(ctx), MGUARD_EINVAL); \
        assert_int_equal(lg.count, 1); \
        assert_int_equal(lg.errors, 1); \
        assert_int_equal(lg.code, MGUARD_LOG_CHECK_FAILED); \
        assert_string_equal(lg.last, want); \
    } while (0)
/* Set `field` to `bad`, expect that line, put the field back. */
#define BROKEN_WHILE(ctx, field, bad, ...) do { \
        unsigned char saved_[sizeof(field)]; \
        memcpy(saved_, &(field), sizeof saved_); \
        (field) = (bad); \
        EXPECT_BROKEN(ctx, __VA_ARGS__); \
        memcpy(&(field), saved_, sizeof saved_); \
    } while (0)
#define EXPECT_SOUND(ctx) do { \
        lg.count = 0; \
        assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK); \
        assert_int_equal(lg.count, 0); \
    } while (0)

static mguard_ctx *new_ctx(void)
{
    mguard_ctx *ctx = test_ctx(&lg, NULL);
    assert_non_null(ctx);
    return ctx;
}

static mguard_weak *new_table(mguard_ctx *ctx)
{
    mguard_weak_desc d;
    mguard_weak *t;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    t = mguard_weak_create(ctx, &d);
    assert_non_null(t);
    return t;
}

static void setl(mguard_weak *t, const void *k, long v) { assert_int_equal(mguard_weak_set(t, k, &v), MGUARD_OK); }

static uint32_t rec_of(mguard_ctx *ctx, const void *obj)
{
    uint32_t r = mguard__reg_find(ctx, obj);
    assert_true(r != 0);
    return r;
}

/* The slot of index ix that holds dense index idx1. */
static size_t slot_of(const mguard__index *ix, uint32_t idx1)
{
    size_t i;
    for (i = 0; i <= ix->mask; i++)
        if (ix->slots[i].idx == idx1) return i;
    fail_msg("no slot holds %u", idx1);
    return 0;
}

static void nop_watch(void *g, const void *o, const char *a, void *u) { (void)g; (void)o; (void)a; (void)u; }

/* ---- the dense-array hash index (interned strings, scope names, dyn paths,
   caches) ----
   Shown on a dynamism tracker with one path, whose slot is its home and
   whose neighbours are empty. */
static void test_index_check_sees_each_broken_invariant(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_dyn *d = mguard_dyn_create(ctx);
    int64_t dims[1] = {2};
    mguard__index *ix = &d->index;
    mguard__slot saved;
    size_t s, away, one = 1;
    (void)state;
    assert_null(ix->slots);
    BROKEN_WHILE(ctx, ix->used, one, "mguard_ctx_check: dyn paths: index without slots has 1 keys");
    assert_int_equal(mguard_dyn_observe(d, "L['x']", dims, 1), MGUARD_OK);
    s = slot_of(ix, 1);
    away = (s + 2) & ix->mask;
    saved = ix->slots[s];
    ix->slots[away] = saved;
    ix->slots[s].hash = 0;
    ix->slots[s].idx = 0;
    EXPECT_BROKEN(ctx, "mguard_ctx_check: dyn paths: key %p not reachable from its home slot", (const void *)d->recs[0].path);
    ix->slots[s] = saved;
    ix->slots[away].hash = 0;
    ix->slots[away].idx = 0;
    BROKEN_WHILE(ctx, ix->used, (ix->mask + 1) / 2 + 1, "mguard_ctx_check: dyn paths: index over half full");
    BROKEN_WHILE(ctx, ix->used, 2, "mguard_ctx_check: dyn paths: index counts 2 keys, holds 1");
    BROKEN_WHILE(ctx, ix->slots[s].idx, 2, "mguard_ctx_check: dyn paths: slot %lu points past the entries", (unsigned long)s);
    BROKEN_WHILE(ctx, ix->slots[s].hash, saved.hash ^ 0x100u, "mguard_ctx_check: dyn paths: slot %lu has a stale hash", (unsigned long)s);
    {
        const char *path = d->recs[0].path;
        d->recs[0].path = NULL;
        EXPECT_BROKEN(ctx, "mguard_ctx_check: dyn paths: slot %lu points at a removed entry", (unsigned long)s);
        d->recs[0].path = path;
    }
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* ---- the context's index, the registry and the tables -------------------
   k in table t (k2 too), o watched by g and kept by a ref, p kept by a
   ref, q's record free (q died); t2 is an empty table. */
typedef struct cfix {
    mguard_ctx *ctx;
    mguard_weak *t, *t2;
    uint32_t ro, rp, rq;
} cfix;
static int ck, ck2, co, cg, cp, cq;

static void core_fixture(cfix *f)
{
    f->ctx = new_ctx();
    f->t = new_table(f->ctx);
    f->t2 = new_table(f->ctx);
    setl(f->t, &ck, 1);
    setl(f->t, &ck2, 2);
    assert_int_equal(mguard_watch(f->ctx, &co, &cg, nop_watch, NULL), MGUARD_OK);
    mguard_ref_make(f->ctx, &co);
    mguard_ref_make(f->ctx, &cp);
    mguard_ref_make(f->ctx, &cq);
    f->rq = rec_of(f->ctx, &cq);
    mguard_on_destroy(f->ctx, &cq);
    f->ro = rec_of(f->ctx, &co);
    f->rp = rec_of(f->ctx, &cp);
    assert_int_equal(mguard__reg_find(f->ctx, &ck), 0);   /* a key alone has no record */
    assert_int_equal(f->ctx->free_head, f->rq);
    assert_int_equal(f->ctx->objs[f->rq - 1].side, 0);
    EXPECT_SOUND(f->ctx);
}

/* The slot of (key, tid) in ctx's index. */
static size_t kslot_of(mguard_ctx *ctx, const void *key, uint32_t tid)
{
    const mguard__kslot *s = mguard__kx_find(&ctx->kx, key, tid, mguard__hash64(key), NULL);
    assert_non_null(s);
    return (size_t)(s - ctx->kx.slots);
}

static void test_context_index_check_sees_each_broken_invariant(void **state)
{
    cfix f;
    mguard_ctx *ctx;
    mguard__kx *kx;
    size_t sk, sp;
    unsigned char c;
    uint32_t bad;
    mguard_weak fake;
    (void)state;
    core_fixture(&f);
    ctx = f.ctx;
    kx = &ctx->kx;
    sk = kslot_of(ctx, &ck, f.t->tid);
    sp = kslot_of(ctx, &cp, 0);
    BROKEN_WHILE(ctx, kx->mask, kx->mask - 1, "mguard_ctx_check: index: capacity %lu is not a power of two >= 8", (unsigned long)kx->mask + 1);
    BROKEN_WHILE(ctx, kx->ctrl[sk], MGUARD__KX_PENDING, "mguard_ctx_check: index: slot %lu is pending with no death in progress", (unsigned long)sk);
    c = kx->ctrl[sk];
    BROKEN_WHILE(ctx, kx->ctrl[sk], (unsigned char)(c ^ 1u), "mguard_ctx_check: index: slot %lu has a stale tag", (unsigned long)sk);
    BROKEN_WHILE(ctx, kx->slots[sp].pos, f.ro, "mguard_ctx_check: index: slot %lu (%p) names record %u, not its own", (unsigned long)sp, (void *)&cp, f.ro);
    /* table ids out of range, and naming a dead table */
    bad = ctx->ntabs;
    {
        mguard__kslot saved = kx->slots[sk];
        mguard_weak *saved_t = ctx->tabs[f.t->tid];
        kx->slots[sk].tid = bad;
        EXPECT_BROKEN(ctx, "mguard_ctx_check: index: slot %lu names table id %u, out of range", (unsigned long)sk, bad);
        kx->slots[sk] = saved;
        memset(&fake, 0, sizeof fake);
        fake.magic = MGUARD__DEAD;
        ctx->tabs[f.t->tid] = &fake;
        EXPECT_BROKEN(ctx, "mguard_ctx_check: index: slot %lu names table id %u, not a live table", (unsigned long)sk, f.t->tid);
        ctx->tabs[f.t->tid] = saved_t;
        BROKEN_WHILE(ctx, kx->slots[sk].pos, 1, "mguard_ctx_check: index: slot %lu (%p): its table's order does not point back", (unsigned long)sk, (void *)&ck);
    }
    assert_int_equal(kx->used, 5);   /* k, k2 in t; the records of o, g, p */
    assert_int_equal(kx->mask, 7);
    BROKEN_WHILE(ctx, kx->used, 6, "mguard_ctx_check: index: 6 slots in use, 5 counted");
    BROKEN_WHILE(ctx, kx->growth_left, 4, "mguard_ctx_check: index: 3 empty slots, 4 may be taken");
    /* k's slot moved to another group than its probe's only one: found
       no more (the index must have two groups: more keys in t2) */
    {
        static int fill[12];
        size_t i, to;
        mguard__kslot saved;
        for (i = 0; i < 12; i++) setl(f.t2, &fill[i], 0);
        assert_true(kx->mask + 1 >= 16);
        sk = kslot_of(ctx, &ck, f.t->tid);
        assert_false(MGUARD__KX_ON(kx, sk & ~(size_t)7));   /* the probe of k ends in its group */
        for (to = 0; kx->ctrl[to] != MGUARD__KX_EMPTY || (to & ~(size_t)7) == (sk & ~(size_t)7); to++) {}
        saved = kx->slots[sk];
        c = kx->ctrl[sk];
        kx->ctrl[to] = c;
        kx->slots[to] = saved;
        kx->ctrl[sk] = MGUARD__KX_EMPTY;
        EXPECT_BROKEN(ctx, "mguard_ctx_check: index: slot %lu (%p, table id %u) not found by its key", (unsigned long)to, (void *)&ck, f.t->tid);
        kx->ctrl[sk] = c;
        kx->ctrl[to] = MGUARD__KX_EMPTY;
        for (i = 0; i < 12; i++) mguard_on_destroy(ctx, &fill[i]);
    }
    /* k, k2, o, g, p: five objects known */
    assert_int_equal(ctx->live_objs, 5);
    BROKEN_WHILE(ctx, ctx->live_objs, 6, "mguard_ctx_check: objects known: 6, counted 5");
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_registry_check_sees_each_broken_invariant(void **state)
{
    cfix f;
    mguard_ctx *ctx;
    mguard__obj *o;
    mguard__side *so;
    uint32_t zero = 0, two = 2;
    size_t sp;
    mguard__kslot saved;
    (void)state;
    core_fixture(&f);
    ctx = f.ctx;
    o = &ctx->objs[f.ro - 1];
    /* o's tracker is its side record, the only one */
    assert_int_equal(o->side, 1);
    assert_int_equal(ctx->nsides, 1);
    assert_int_equal(ctx->live_sides, 1);
    so = &ctx->sides[0];
    BROKEN_WHILE(ctx, ctx->objs[f.rp - 1].flags, zero, "mguard_ctx_check: record %u (%p) is empty but kept", f.rp - 1, (void *)&cp);
    BROKEN_WHILE(ctx, o->side, zero, "mguard_ctx_check: record %u: a tracker without a side record", f.ro - 1);
    BROKEN_WHILE(ctx, o->side, two, "mguard_ctx_check: record %u: side record out of range", f.ro - 1);
    /* one watcher, inline */
    assert_int_equal(o->flags & MGUARD__F_WLIST, 0);
    assert_ptr_equal(so->w.one.guard, &cg);
    BROKEN_WHILE(ctx, so->w.one.guard, NULL, "mguard_ctx_check: record %u: an inline watcher without a guard", f.ro - 1);
    BROKEN_WHILE(ctx, o->flags, o->flags & ~(uint32_t)MGUARD__F_TRACKER, "mguard_ctx_check: record %u: watchers without a tracker", f.ro - 1);
    BROKEN_WHILE(ctx, ctx->live_sides, two, "mguard_ctx_check: side records: 2 in use, 1 counted");
    BROKEN_WHILE(ctx, ctx->free_side, 1, "mguard_ctx_check: side free list reaches a used record");
    BROKEN_WHILE(ctx, ctx->nsides, two, "mguard_ctx_check: side records: 1 used + 0 free != 2");
    /* three live records (o, g, p) and q's free one */
    assert_int_equal(ctx->live_recs, 3);
    assert_int_equal(ctx->nobjs, 4);
    BROKEN_WHILE(ctx, ctx->live_recs, 4, "mguard_ctx_check: live record count 4, counted 3");
    BROKEN_WHILE(ctx, ctx->free_head, f.rp, "mguard_ctx_check: free list reaches a live record");
    BROKEN_WHILE(ctx, ctx->objs[f.rq - 1].side, f.rq, "mguard_ctx_check: free list has a cycle");
    BROKEN_WHILE(ctx, ctx->free_head, zero, "mguard_ctx_check: records: 3 live + 0 free != 4");
    /* p's record out of the index (which stays consistent: p, known by
       its record alone, is no longer counted) */
    sp = kslot_of(ctx, &cp, 0);
    saved = ctx->kx.slots[sp];
    mguard__kx_erase(&ctx->kx, sp, mguard__hash64(&cp));
    ctx->live_objs--;
    EXPECT_BROKEN(ctx, "mguard_ctx_check: record %u (%p) not found by its key", f.rp - 1, (void *)&cp);
    sp = mguard__kx_take(&ctx->kx, mguard__hash64(&cp));
    ctx->kx.slots[sp] = saved;
    ctx->live_objs++;
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* ---- a side record's watchers: inline (none or one), a heap list, free ---- */
static void test_watcher_check_sees_each_broken_invariant(void **state)
{
    mguard_ctx *ctx = new_ctx();
    static int obj, idle, gone, g1, g2;
    mguard__obj *o, *og, *oi;
    mguard__side *sd, *si;
    uint32_t zero = 0, five = 5, rg;
    (void)state;
    /* obj: two watchers, a heap list of 4 */
    assert_int_equal(mguard_watch(ctx, &obj, &g1, nop_watch, NULL), MGUARD_OK);
    assert_int_equal(mguard_watch(ctx, &obj, &g2, nop_watch, NULL), MGUARD_OK);
    /* idle: its one watcher unwatched, inline and empty */
    assert_int_equal(mguard_watch(ctx, &idle, &g1, nop_watch, NULL), MGUARD_OK);
    assert_int_equal(mguard_unwatch(ctx, &idle, &g1), MGUARD_OK);
    /* gone: its side record freed */
    assert_int_equal(mguard_watch(ctx, &gone, &g1, nop_watch, NULL), MGUARD_OK);
    mguard_on_destroy(ctx, &gone);
    EXPECT_SOUND(ctx);
    o = &ctx->objs[rec_of(ctx, &obj) - 1];
    oi = &ctx->objs[rec_of(ctx, &idle) - 1];
    rg = rec_of(ctx, &g1);
    og = &ctx->objs[rg - 1];
    sd = &ctx->sides[o->side - 1];
    si = &ctx->sides[oi->side - 1];
    assert_int_equal(o->flags & MGUARD__F_WLIST, MGUARD__F_WLIST);
    assert_int_equal(sd->w.list.n, 2);
    assert_int_equal(sd->w.list.cap, 4);
    assert_ptr_equal(sd->w.list.at[0].guard, &g1);
    assert_ptr_equal(sd->w.list.at[1].guard, &g2);
    assert_int_equal(oi->flags & MGUARD__F_WLIST, 0);
    assert_null(si->w.one.fn);
    assert_int_equal(og->side, 0);
    assert_int_equal(ctx->live_sides, 2);
    assert_int_equal(ctx->nsides, 3);
    assert_int_not_equal(ctx->free_side, 0);
    BROKEN_WHILE(ctx, sd->w.list.n, five, "mguard_ctx_check: record %u: watcher count over capacity", rec_of(ctx, &obj) - 1);
    BROKEN_WHILE(ctx, sd->w.list.at, NULL, "mguard_ctx_check: record %u: a watcher list without a tracker or block", rec_of(ctx, &obj) - 1);
    BROKEN_WHILE(ctx, sd->w.list.cap, zero, "mguard_ctx_check: record %u: a watcher list without a tracker or block", rec_of(ctx, &obj) - 1);
    BROKEN_WHILE(ctx, o->flags, (o->flags & ~(uint32_t)MGUARD__F_TRACKER) | MGUARD__F_PINNED, "mguard_ctx_check: record %u: a watcher list without a tracker or block",
                 rec_of(ctx, &obj) - 1);
    BROKEN_WHILE(ctx, si->w.one.user, (void *)&obj, "mguard_ctx_check: record %u: no inline watcher, but its fields are set", rec_of(ctx, &idle) - 1);
    BROKEN_WHILE(ctx, si->w.one.guard_serial, 7, "mguard_ctx_check: record %u: no inline watcher, but its fields are set", rec_of(ctx, &idle) - 1);
    BROKEN_WHILE(ctx, og->flags, og->flags | MGUARD__F_WLIST, "mguard_ctx_check: record %u: a watcher list without a side record", rg - 1);
    BROKEN_WHILE(ctx, ctx->sides[ctx->free_side - 1].w.vacant.mark, zero, "mguard_ctx_check: side free list reaches a used record");
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* ---- interned strings: positions, holders, the index ---- */
static void test_interned_string_check_sees_each_broken_invariant(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard__str *a, *b;
    uint32_t zero = 0, one = 1, two = 2;
    (void)state;
    assert_non_null(mguard__str_intern(ctx, "alpha"));
    assert_non_null(mguard__str_intern(ctx, "beta"));
    a = MGUARD__STR_HDR(ctx->strs[0]);
    b = MGUARD__STR_HDR(ctx->strs[1]);
    EXPECT_SOUND(ctx);
    BROKEN_WHILE(ctx, ctx->nstrs, one, "mguard_ctx_check: interned strings: 1, 2 in the index");
    BROKEN_WHILE(ctx, a->refs, zero, "mguard_ctx_check: interned string 0 (\"alpha\"): position 0, 0 holders");
    BROKEN_WHILE(ctx, b->pos, zero, "mguard_ctx_check: interned string 1 (\"beta\"): position 0, 1 holders");
    BROKEN_WHILE(ctx, b->hash, two, "mguard_ctx_check: interned string 1 (\"beta\") not found by its content");
    /* alpha's last holder goes: beta moves to position 0, still found */
    mguard__str_release(ctx, ctx->strs[0]);
    assert_int_equal(ctx->nstrs, 1);
    assert_string_equal(ctx->strs[0], "beta");
    assert_ptr_equal(mguard__str_find(ctx, "beta"), ctx->strs[0]);
    assert_null(mguard__str_find(ctx, "alpha"));
    EXPECT_SOUND(ctx);
    mguard__str_release(ctx, ctx->strs[0]);
    assert_int_equal(ctx->nstrs, 0);
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_table_check_sees_each_broken_invariant(void **state)
{
    cfix f;
    mguard_ctx *ctx;
    mguard_weak *t;
    uint32_t zero = 0;
    (void)state;
    core_fixture(&f);
    ctx = f.ctx;
    t = f.t;
    BROKEN_WHILE(ctx, f.t2->magic, MGUARD__DEAD, "mguard_ctx_check: table list holds a dead table");
    BROKEN_WHILE(ctx, f.t2->tid, zero, "mguard_ctx_check: table %p: id 0 does not name it", (void *)f.t2);
    BROKEN_WHILE(ctx, f.t2->live, f.t2->len + 1, "mguard_ctx_check: table %p: counts out of range", (void *)f.t2);
    BROKEN_WHILE(ctx, t->order[0].stamp, t->order[1].stamp, "mguard_ctx_check: table %p: entries out of order", (void *)t);
    BROKEN_WHILE(ctx, t->live, 1, "mguard_ctx_check: table %p: live count 1, counted 2", (void *)t);
    BROKEN_WHILE(ctx, t->base, ctx->next_stamp, "mguard_ctx_check: table %p: stamps ahead of the context", (void *)t);

    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* Stamps may not span 2^32 entries made: a table whose next stamp would
   renumbers its entries from 0 first (its base: the context's count less
   its entries), and a walk paused across that ends, logged, since the
   stamp it holds no longer compares. A new walk sees every entry, in
   order. (The context's count is moved by hand: as if 2^32 - 2 entries
   had been made meanwhile.) */
static void test_a_table_renumbers_its_stamps_before_they_wrap(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_weak *t = new_table(ctx);
    static int k[5];
    mguard_weak_iter it;
    uint32_t i;
    (void)state;
    setl(t, &k[0], 0);
    setl(t, &k[1], 1);
    it = mguard_weak_iterate(t);
    assert_true(mguard_weak_next(&it));
    assert_ptr_equal(it.key, &k[0]);
    ctx->next_stamp = t->base + 0xfffffffeu;
    setl(t, &k[2], 2);            /* stamp 2^32 - 2: fits */
    assert_int_equal(t->order[2].stamp, 0xfffffffeu);
    assert_int_equal(t->epoch, 0);
    setl(t, &k[3], 3);            /* would be 2^32 - 1: renumbered first */
    setl(t, &k[4], 4);
    assert_true(t->base == ctx->next_stamp - 5);
    for (i = 0; i < 5; i++) assert_int_equal(t->order[i].stamp, i);
    assert_int_equal(t->epoch, 1);
    assert_int_equal(t->rebased, 1);
    EXPECT_SOUND(ctx);
    lg.count = lg.warnings = 0;
    assert_false(mguard_weak_next(&it));
    assert_int_equal(lg.count, 1);
    assert_int_equal(lg.warnings, 1);
    assert_int_equal(lg.code, MGUARD_LOG_WALK_RENUMBERED);
    it = mguard_weak_iterate(t);
    for (i = 0; i < 5; i++) {
        assert_true(mguard_weak_next(&it));
        assert_ptr_equal(it.key, &k[i]);
        assert_int_equal(*(const long *)it.value, (long)i);
    }
    assert_false(mguard_weak_next(&it));
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* ---- the context's index: overflow counts, growth_left, its size ----
   Keys chosen by their hash: n addresses of kx_pool from *from on whose
   home is group g of an index of cap slots (and so, for g = 0, of every
   smaller one). */
static char kx_pool[32768];
static void keys_homed(const void **out, size_t n, size_t cap, size_t g, size_t *from)
{
    size_t i = *from, k = 0;
    for (; k < n; i++) {
        assert_true(i < sizeof kx_pool);
        if ((((size_t)(mguard__hash64(&kx_pool[i]) >> 7)) & (cap - 1) & ~(size_t)7) == g * 8) out[k++] = &kx_pool[i];
    }
    *from = i;
}

/* Each group counts the keys whose probe went past it (F14's overflow
   count): an insertion that finds its home group full counts it up, an
   erasure of a key that lies past it counts it down. An erased slot is
   EMPTY at once (no tombstone: growth_left has it back, one slot in 8
   staying EMPTY) and says table id 0. Ten keys homed in group 0 of a
   16-slot index: the 9th and 10th pass group 0. */
static void test_index_counts_the_probes_that_pass_each_group(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_weak *t = new_table(ctx);
    mguard__kx *kx = &ctx->kx;
    const void *a[10];
    size_t from = 0, s0, s8;
    int i;
    (void)state;
    keys_homed(a, 10, 16, 0, &from);
    for (i = 0; i < 8; i++) setl(t, a[i], i);   /* the 8th grows the index to 16 slots */
    assert_int_equal(kx->mask, 15);
    assert_false(mguard__kx_match_empty(mguard__kx_load(kx->ctrl)));   /* group 0 full */
    assert_int_equal(kx->ovf[0], 0);
    assert_int_equal(kx->ovf[1], 0);
    assert_int_equal(kx->growth_left, 14 - 8);
    setl(t, a[8], 8);                           /* past group 0, into group 1 */
    s8 = kslot_of(ctx, a[8], t->tid);
    assert_true(s8 >= 8);
    assert_int_equal(kx->ovf[0], 1);
    assert_int_equal(kx->ovf[1], 0);
    setl(t, a[9], 9);
    assert_true(kslot_of(ctx, a[9], t->tid) >= 8);
    assert_int_equal(kx->ovf[0], 2);
    assert_int_equal(kx->ovf[1], 0);
    assert_int_equal(kx->used, 10);
    assert_int_equal(kx->growth_left, 14 - 10);
    /* an erasure in the key's home group counts nothing down */
    s0 = kslot_of(ctx, a[0], t->tid);
    assert_true(s0 < 8);
    assert_int_equal(mguard_weak_take(t, a[0], NULL), MGUARD_OK);
    assert_int_equal(kx->ctrl[s0], MGUARD__KX_EMPTY);
    assert_int_equal(kx->slots[s0].tid, 0);
    assert_int_equal(kx->ovf[0], 2);
    assert_int_equal(kx->used, 9);
    assert_int_equal(kx->growth_left, 14 - 9);
    /* one that went past group 0 counts it down */
    assert_int_equal(mguard_weak_take(t, a[8], NULL), MGUARD_OK);
    assert_int_equal(kx->ctrl[s8], MGUARD__KX_EMPTY);
    assert_int_equal(kx->slots[s8].tid, 0);
    assert_int_equal(kx->ovf[0], 1);
    assert_int_equal(kx->used, 8);
    assert_int_equal(kx->growth_left, 14 - 8);
    /* a[0] back: group 0's EMPTY slot, no group passed */
    setl(t, a[0], 0);
    assert_true(kslot_of(ctx, a[0], t->tid) < 8);
    assert_int_equal(kx->ovf[0], 1);
    assert_int_equal(mguard_weak_take(t, a[9], NULL), MGUARD_OK);
    assert_int_equal(kx->ovf[0], 0);
    assert_int_equal(kx->used, 8);
    assert_int_equal(kx->growth_left, 14 - 8);
    for (i = 0; i < 8; i++) assert_int_equal(*MGUARD_WEAK_GET(t, a[i], long), i);
    assert_null(mguard_weak_get(t, a[8]));
    assert_null(mguard_weak_get(t, a[9]));
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* An overflow count that reached 255 stays: it no longer knows how many
   probes pass, so it neither wraps to 0 nor counts down. 268 keys homed in
   group 0 of a 512-slot index, 260 of them past it; with 255 of those
   erased, the 5 left are still found. */
static void test_index_overflow_count_sticks_at_255(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_weak *t = new_table(ctx);
    mguard__kx *kx = &ctx->kx;
    static const void *a[268];
    bool gone[268];
    size_t from = 0;
    int i, n;
    (void)state;
    keys_homed(a, 268, 512, 0, &from);
    for (i = 0; i < 268; i++) setl(t, a[i], i);
    assert_int_equal(kx->mask, 511);
    assert_int_equal(kx->used, 268);
    assert_int_equal(kx->ovf[0], 255);
    memset(gone, 0, sizeof gone);
    for (i = 0, n = 0; n < 255; i++) {
        if (kslot_of(ctx, a[i], t->tid) < 8) continue;   /* in group 0 */
        assert_int_equal(mguard_weak_take(t, a[i], NULL), MGUARD_OK);
        gone[i] = true;
        n++;
    }
    assert_int_equal(kx->used, 268 - 255);
    assert_int_equal(kx->ovf[0], 255);
    for (i = 0; i < 268; i++) {
        const long *v = (const long *)mguard_weak_get(t, a[i]);
        if (gone[i]) {
            assert_null(v);
            continue;
        }
        assert_non_null(v);
        assert_int_equal(*v, i);
    }
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* Regression (found by the fuzzer through the caches): a walk of an
   object's probe visited one group more than the table has once every
   group on its way said "a probe goes past me" (an overflow count, here
   one stuck at 255), so a death listed a slot of that group twice: the
   entry was erased twice (the count of slots in use drifted) and its
   value destroyed twice. The walk ends after cap / 8 groups. */
static int twice_calls;
static void count_twice(void *value, void *user) { (void)value; (void)user; twice_calls++; }
static void test_a_death_walks_each_group_of_the_probe_once(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_weak_desc d;
    mguard_weak *t;
    static int x;
    long v = 7;
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof v;
    d.value_dtor = count_twice;
    t = mguard_weak_create(ctx, &d);
    assert_int_equal(mguard_weak_set(t, &x, &v), MGUARD_OK);
    assert_int_equal(ctx->kx.mask, 7);                    /* one group */
    ctx->kx.ovf[0] = MGUARD__KX_STICKY;                   /* every probe goes on from it */
    twice_calls = 0;
    mguard_on_destroy(ctx, &x);
    assert_int_equal(twice_calls, 1);
    assert_int_equal(ctx->kx.used, 0);
    assert_int_equal(mguard_weak_count(t), 0);
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* The index doubles when its EMPTY slots that may be taken run out (it
   may be 7/8 full). An index of over 64 slots that cap / 8 reservations
   in a row found a ninth full or less (counting the new key) becomes the
   smallest power of two it fills to 7/16 at most: a context holds memory
   in proportion to what it knows, and one whose tables are emptied and
   filled again does not shrink at the first key of each refill. */
#define KX_REMOVE(t, i) assert_int_equal(mguard_weak_take((t), &kx_pool[i], NULL), MGUARD_OK)
static void test_index_grows_when_full_and_shrinks_on_insert_when_mostly_empty(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_weak *t = new_table(ctx);
    mguard__kx *kx = &ctx->kx;
    int i;
    (void)state;
    for (i = 0; i < 56; i++) setl(t, &kx_pool[i], i);
    assert_int_equal(kx->mask, 63);             /* 56 keys: 7/8 of 64 */
    assert_int_equal(kx->growth_left, 0);
    setl(t, &kx_pool[56], 56);
    assert_int_equal(kx->mask, 127);
    assert_int_equal(kx->growth_left, 112 - 57);
    for (i = 57; i < 113; i++) setl(t, &kx_pool[i], i);
    assert_int_equal(kx->mask, 255);
    for (i = 28; i < 113; i++) KX_REMOVE(t, i);
    assert_int_equal(kx->mask, 255);            /* a removal never resizes */
    /* 28 keys left: a 29th (29 * 9 > 256) is no sparse reservation,
       however many times */
    for (i = 0; i < 40; i++) {
        setl(t, &kx_pool[113], 113);
        KX_REMOVE(t, 113);
    }
    assert_int_equal(kx->mask, 255);
    /* 27 left: a 28th (28 * 9 <= 256) is one; 21 of them, then a 29th
       key ends the run */
    KX_REMOVE(t, 27);
    for (i = 0; i < 20; i++) {
        setl(t, &kx_pool[27], 27);
        KX_REMOVE(t, 27);
    }
    setl(t, &kx_pool[27], 27);
    setl(t, &kx_pool[113], 113);
    assert_int_equal(kx->mask, 255);
    assert_int_equal(kx->used, 29);
    /* a new run: the 32nd (256 / 8) makes it 64 slots (28 * 16 <= 64 * 7) */
    KX_REMOVE(t, 113);
    KX_REMOVE(t, 27);
    for (i = 0; i < 31; i++) {
        setl(t, &kx_pool[27], 27);
        KX_REMOVE(t, 27);
    }
    assert_int_equal(kx->mask, 255);
    EXPECT_SOUND(ctx);
    setl(t, &kx_pool[27], 27);
    assert_int_equal(kx->mask, 63);
    assert_int_equal(kx->used, 28);
    assert_int_equal(kx->growth_left, 56 - 28);
    EXPECT_SOUND(ctx);   /* t's order still names slots past 63: dead places */
    /* 64 slots or fewer: never shrunk (7 keys: 7 * 9 <= 64), however many
       sparse reservations */
    for (i = 6; i < 28; i++) KX_REMOVE(t, i);
    for (i = 0; i < 16; i++) {
        setl(t, &kx_pool[6], 6);
        KX_REMOVE(t, 6);
    }
    setl(t, &kx_pool[6], 6);
    assert_int_equal(kx->mask, 63);
    assert_int_equal(kx->used, 7);
    for (i = 0; i < 7; i++) assert_int_equal(*MGUARD_WEAK_GET(t, &kx_pool[i], long), i);
    assert_int_equal(mguard_weak_count(t), 7);
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* Regression (issue 23): after a storm of drops a program held the memory
   of the most entries it ever had. Entries now live in the context's
   index, which gives slots back as they go: 1000 cache entries dropped by
   one mutation leave only the 16 remembered reasons' key slots. */
static void test_a_storm_of_drops_leaves_only_the_reasons_slots(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_cache_desc cd;
    mguard_cache *c;
    static int k[1000], dep;
    long v = 1;
    int i;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof v;
    c = mguard_cache_create(ctx, &cd);
    for (i = 0; i < 1000; i++) {
        assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&k[i]), &v, 0), MGUARD_OK);
        assert_int_equal(mguard_cache_depend(c, MGUARD_CACHE_KEYS(&k[i]), &dep, NULL), MGUARD_OK);
    }
    /* 1000 lookup slots, 8 dependency slots on dep's probe, then its hub: one slot, 992 elements */
    assert_int_equal(ctx->npslots, 1009);
    assert_int_equal(ctx->kx.used, 1009);
    assert_int_equal(c->nitems, 992);
    EXPECT_SOUND(ctx);
    /* 990 entries taken: the hub shrinks as it empties (1/8 full at most then) */
    for (i = 0; i < 990; i++) assert_int_equal(mguard_cache_take(c, MGUARD_CACHE_KEYS(&k[i]), NULL), MGUARD_OK);
    assert_int_equal(c->nitems, 10);   /* the 10 left: the first 8 entries' dependency slots were on dep's probe */
    {
        size_t hk = mguard__hub_slot(c, &dep);
        assert_true(hk != SIZE_MAX);
        assert_int_equal(MGUARD__HUB(&ctx->kx, hk)[0].pos + 1, 64);   /* 2048 -> 64: 10 of 64, between 1/8 and 1/4 */
    }
    EXPECT_SOUND(ctx);
    mguard_on_mutation(ctx, &dep, NULL);
    assert_int_equal(mguard_cache_count(c), 0);
    assert_int_equal(c->nitems, 0);
    assert_int_equal(ctx->npslots, 16);
    assert_int_equal(ctx->kx.used, 16);
    assert_int_equal(mgt_objects(ctx), 16);
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}


/* ---- the scope tracker ---------------------------------------------------
   A tracker with the trace on, Net named and entered (records: 0 the root,
   1 Net; active: 0, 1; one frame with an open span). */
static mguard_scope *entered_scope(mguard_ctx *ctx, const void *comp)
{
    mguard_scope_desc d;
    mguard_scope *s;
    memset(&d, 0, sizeof d);
    d.trace = true;
    s = mguard_scope_create(ctx, &d);
    assert_non_null(s);
    assert_int_equal(mguard_scope_set_name(s, comp, "Net"), MGUARD_OK);
    assert_int_equal(mguard_scope_enter(s, comp), MGUARD_OK);
    assert_int_equal(s->nrecs, 2);
    assert_int_equal(s->nframes, 1);
    assert_int_equal(s->nevents, 1);
    return s;
}

/* Each line breaks one invariant, expects its log line and repairs it; the
   repaired tracker checks sound at the end. */
static void test_scope_check_sees_each_broken_invariant(void **state)
{
    mguard_ctx *ctx = new_ctx();
    static int comp, other, stranger;
    mguard_scope *s = entered_scope(ctx, &comp);
    uint32_t zero = 0, one = 1, two = 2;
    (void)state;
    BROKEN_WHILE(ctx, s->hd.magic, MGUARD__DEAD, "mguard_ctx_check: scope %p: bad magic", (void *)s);
    BROKEN_WHILE(ctx, s->names, NULL, "mguard_ctx_check: scope %p: names table is gone", (void *)s);
    BROKEN_WHILE(ctx, s->root, s->recs[1].name, "mguard_ctx_check: scope %p: record 0 is not the root", (void *)s);
    BROKEN_WHILE(ctx, s->active[0], one, "mguard_ctx_check: scope %p: the root is not first in the active set", (void *)s);
    BROKEN_WHILE(ctx, s->recs[1].active, two, "mguard_ctx_check: scope %p: Net counts 2 frames, has 1", (void *)s);
    BROKEN_WHILE(ctx, s->frames[0].comp, &stranger, "mguard_ctx_check: scope %p: frame 0's component has no name", (void *)s);
    BROKEN_WHILE(ctx, s->events[0].dur, 3.0, "mguard_ctx_check: scope %p: frame 0's span is wrong", (void *)s);
    BROKEN_WHILE(ctx, s->frames[0].event, zero, "mguard_ctx_check: scope %p: 1 open spans for 0 frames", (void *)s);
    BROKEN_WHILE(ctx, s->desc.max_trace_events, 0, "mguard_ctx_check: scope %p: too many spans", (void *)s);
    /* the name index loses Net */
    mguard__ix_del(&s->rec_index, mguard__hash_ptr(s->recs[1].name), 2);
    EXPECT_BROKEN(ctx, "mguard_ctx_check: scope %p: 2 records, 1 indexed", (void *)s);
    mguard__ix_put(&s->rec_index, mguard__hash_ptr(s->recs[1].name), 2);
    /* a frame past the records, Net's counts agreeing with that */
    s->frames[0].rec = 2;
    s->recs[1].active = 0;
    s->nactive = 1;
    EXPECT_BROKEN(ctx, "mguard_ctx_check: scope %p: frame 0 has no record", (void *)s);
    s->frames[0].rec = 1;
    s->recs[1].active = 1;
    s->nactive = 2;
    /* more warnings remembered than allowed */
    s->desc.max_warnings = 0;
    BROKEN_WHILE(ctx, s->nwarns, one, "mguard_ctx_check: scope %p: remembers too many warnings", (void *)s);
    s->desc.max_warnings = 4096;
    /* a counter value past the last counter */
    assert_int_equal(mguard_scope_add(s, "flops", 1.0), MGUARD_OK);
    assert_true(s->recs[1].capvals > s->ncounters);
    BROKEN_WHILE(ctx, s->recs[1].vals[2 * s->ncounters], 5.0, "mguard_ctx_check: scope %p: Net has a value past the last counter", (void *)s);
    /* Net listed twice in the active set (Other, entered and left, made room) */
    assert_int_equal(mguard_scope_set_name(s, &other, "Other"), MGUARD_OK);
    assert_int_equal(mguard_scope_enter(s, &other), MGUARD_OK);
    assert_int_equal(mguard_scope_exit(s, &other), MGUARD_OK);
    assert_true(s->capactive >= 3);
    s->active[s->nactive++] = 1;
    EXPECT_BROKEN(ctx, "mguard_ctx_check: scope %p: Net is listed 2 times in the active set", (void *)s);
    s->nactive--;
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* ---- the dynamism tracker -------------------------------------------------
   Three paths in two groups: x (L['x'], then L['x'].a) and y (L['y']). */
static mguard_dyn *observed_dyn(mguard_ctx *ctx)
{
    mguard_dyn *d = mguard_dyn_create(ctx);
    int64_t dims[2] = {2, 3};
    assert_non_null(d);
    assert_int_equal(mguard_dyn_observe(d, "L['x']", dims, 2), MGUARD_OK);
    assert_int_equal(mguard_dyn_observe(d, "L['y']", dims, 1), MGUARD_OK);
    assert_int_equal(mguard_dyn_observe(d, "L['x'].a", dims, 2), MGUARD_OK);
    assert_int_equal(d->nrecs, 3);
    assert_int_equal(d->ngroups, 2);
    assert_int_equal(d->groups[0].first, 1);
    assert_int_equal(d->recs[0].next_in_group, 3);
    assert_int_equal(d->groups[0].last, 3);
    return d;
}

static void test_dyn_check_sees_each_broken_invariant(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_dyn *d = observed_dyn(ctx);
    uint32_t one = 1, two = 2;
    (void)state;
    BROKEN_WHILE(ctx, d->hd.magic, MGUARD__DEAD, "mguard_ctx_check: dyn %p: bad magic", (void *)d);
    BROKEN_WHILE(ctx, d->recs[1].rank, d->recs[1].cap + 1, "mguard_ctx_check: dyn %p: L['y'] rank over capacity", (void *)d);
    BROKEN_WHILE(ctx, d->recs[1].group, two, "mguard_ctx_check: dyn %p: L['y'] has no group", (void *)d);
    BROKEN_WHILE(ctx, d->recs[0].next_in_group, two, "mguard_ctx_check: dyn %p: group 0's list is broken", (void *)d);   /* L['y'] is in group 1 */
    BROKEN_WHILE(ctx, d->groups[0].last, one, "mguard_ctx_check: dyn %p: group 0's last record is wrong", (void *)d);
    /* the path index loses L['x'].a */
    mguard__ix_del(&d->index, mguard__hash_ptr(d->recs[2].path), 3);
    EXPECT_BROKEN(ctx, "mguard_ctx_check: dyn %p: 3 paths, 2 indexed", (void *)d);
    mguard__ix_put(&d->index, mguard__hash_ptr(d->recs[2].path), 3);
    /* group 0 listed as 3 -> 1 */
    d->groups[0].first = 3;
    d->recs[2].next_in_group = 1;
    d->recs[0].next_in_group = 0;
    d->groups[0].last = 1;
    EXPECT_BROKEN(ctx, "mguard_ctx_check: dyn %p: group 0 out of order", (void *)d);
    d->groups[0].first = 1;
    d->recs[2].next_in_group = 0;
    /* L['x'].a drops out of group 0's list */
    EXPECT_BROKEN(ctx, "mguard_ctx_check: dyn %p: 2 paths in groups, 3 recorded", (void *)d);
    d->recs[0].next_in_group = 3;
    d->groups[0].last = 3;
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* ---- the ledgers (mgt_ledger_check, through mguard_ctx_check) --------
   One ledger without hooks: x (existing, writes a = v1, b = v2), y
   (existing, write c = v3), m (container, marked), n (new), a record and two
   hooks; then y is destroyed, which leaves a removed entry (position 1), a
   free write slot and free ref slots. */
typedef struct lfix {
    mguard_ctx *ctx;
    mguard_ledger *L;
} lfix;
static int lx, lm, ln, ly, lv1, lv2, lv3, lh1, lh2;

static mguard_ledger *ledger_fixture(lfix *f)
{
    mguard_ledger *L;
    int id;
    f->ctx = new_ctx();
    L = f->L = mguard_ledger_create(f->ctx, NULL);
    assert_non_null(L);
    assert_int_equal(mguard_ledger_track(L, &lx, MGUARD_LEDGER_EXISTING, "G.x"), MGUARD_OK);
    assert_int_equal(mguard_ledger_track(L, &ly, MGUARD_LEDGER_EXISTING, "G.y"), MGUARD_OK);
    assert_int_equal(mguard_ledger_track(L, &lm, MGUARD_LEDGER_CONTAINER, "G.m"), MGUARD_OK);
    assert_int_equal(mguard_ledger_track(L, &ln, MGUARD_LEDGER_NEW, "N"), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(L, &lx, "a", &lv1), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(L, &ly, "c", &lv3), MGUARD_OK);
    assert_int_equal(mguard_ledger_store_attr(L, &lx, "b", &lv2), MGUARD_OK);
    assert_int_equal(mguard_ledger_mark_modified(L, &lm), MGUARD_OK);
    assert_int_equal(mguard_ledger_record(L, "save", &lv1), MGUARD_OK);
    assert_int_equal(mguard_ledger_register_hook(L, &lx, "h1", &lh1, &id), MGUARD_OK);
    assert_int_equal(mguard_ledger_register_hook(L, &lx, "h2", &lh2, &id), MGUARD_OK);
    mguard_on_destroy(f->ctx, &ly);   /* entry 1 removed, its write and refs freed */
    assert_int_equal(L->nents, 4);
    assert_int_equal(L->live_ents, 3);
    assert_null(L->ents[1].obj);
    assert_int_equal(L->live_writes, 2);
    assert_true(L->wfree != 0);
    assert_true(L->rfree != 0);
    assert_int_equal(L->rq_head + L->relq_head, 0);
    EXPECT_SOUND(f->ctx);
    return L;
}

static uint32_t lwrite_of(mguard_ledger *L, const void *obj, const char *attr)
{
    uint32_t w = mguard__ledger_w_find(L, obj, mguard__str_find(L->hd.ctx, attr));
    assert_true(w != 0);
    return w;
}

static uint32_t lref_of(mguard_ledger *L, const void *p)
{
    uint32_t r = mguard__ledger_ref_find(L, p);
    assert_true(r != 0);
    return r;
}

#define LEDGER_BROKEN(f, ...) EXPECT_BROKEN((f)->ctx, "mguard_ctx_check: ledger: " __VA_ARGS__)
#define LEDGER_BROKEN_WHILE(f, field, bad, ...) BROKEN_WHILE((f)->ctx, field, bad, "mguard_ctx_check: ledger: " __VA_ARGS__)
#define LEDGER_DONE(f) do { EXPECT_SOUND((f)->ctx); mguard_ctx_destroy((f)->ctx); } while (0)

static void test_ledger_counts_out_of_range(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    uint32_t refs = L->live_refs;
    (void)state;
    L->live_ents = L->nents + 1;
    LEDGER_BROKEN(&f, "entry counts out of range");
    L->live_ents = 3;
    L->live_writes = L->nwpool + 1;
    LEDGER_BROKEN(&f, "write counts out of range");
    L->live_writes = 2;
    L->live_refs = L->nrpool + 1;
    LEDGER_BROKEN(&f, "ref counts out of range");
    L->live_refs = refs;
    L->nhooks = L->caphooks + 1;
    LEDGER_BROKEN(&f, "record or hook counts out of range");
    L->nhooks = 2;
    L->walks = 1;   /* a walk without its frame */
    LEDGER_BROKEN(&f, "walk counters out of range");
    L->walks = 0;
    LEDGER_DONE(&f);
}

static void test_ledger_indexes(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    size_t used = L->ent_ix.used, s;
    uint32_t w = lwrite_of(L, &lx, "a");
    (void)state;
    L->ent_ix.used = (L->ent_ix.mask + 1) / 2 + 1;
    LEDGER_BROKEN(&f, "entry index over half full");
    L->ent_ix.used = used + 1;
    LEDGER_BROKEN(&f, "entry index counts %lu, holds %lu", (unsigned long)used + 1, (unsigned long)used);
    L->ent_ix.used = used;
    s = slot_of(&L->w_ix, w);
    L->w_ix.slots[s].idx = L->nwpool + 1;
    LEDGER_BROKEN(&f, "write index: slot %lu points past the array", (unsigned long)s);
    L->w_ix.slots[s].idx = w;
    /* an index that agrees with itself but not with the live counts */
    mguard__ix_del(&L->ent_ix, mguard__hash_ptr(&ln), 4);
    LEDGER_BROKEN(&f, "3 entries, index holds 2");
    mguard__ix_put(&L->ent_ix, mguard__hash_ptr(&ln), 4);
    mguard__ix_del(&L->w_ix, mguard__ledger_whash(&lx, L->writes[w - 1].attr), w);
    LEDGER_BROKEN(&f, "2 writes, index holds 1");
    mguard__ix_put(&L->w_ix, mguard__ledger_whash(&lx, L->writes[w - 1].attr), w);
    L->live_refs++;
    LEDGER_BROKEN(&f, "%u refs, index holds %lu", L->live_refs, (unsigned long)L->ref_ix.used);
    L->live_refs--;
    LEDGER_DONE(&f);
}

static void test_ledger_entries(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    uint64_t seq = L->ents[2].seq;
    (void)state;
    L->ents[2].seq = L->ents[0].seq;
    LEDGER_BROKEN(&f, "entries out of order at 2");
    L->ents[2].seq = seq;
    seq = L->ents[3].seq;
    L->ents[3].seq = L->root->seq + 1;
    LEDGER_BROKEN(&f, "entry 3: seq ahead");
    L->ents[3].seq = seq;
    L->ents[1].nwrites = 1;
    LEDGER_BROKEN(&f, "removed entry 1 keeps writes");
    L->ents[1].nwrites = 0;
    mguard__ix_del(&L->ent_ix, mguard__hash_ptr(&lm), 3);
    L->live_ents--;
    LEDGER_BROKEN(&f, "entry 2 (%p) not found by its object", (void *)&lm);
    mguard__ix_put(&L->ent_ix, mguard__hash_ptr(&lm), 3);
    L->live_ents++;
    L->ents[3].kind = 9;
    LEDGER_BROKEN(&f, "entry 3: bad kind");
    L->ents[3].kind = MGUARD_LEDGER_NEW;
    L->ents[2].nwrites = 1;
    LEDGER_BROKEN(&f, "container entry 2 has writes");
    L->ents[2].nwrites = 0;
    L->ents[0].flags |= MGUARD__LE_MARKED;
    LEDGER_BROKEN(&f, "entry 0: marked but not a container");
    L->ents[0].flags &= ~(uint32_t)MGUARD__LE_MARKED;
    /* an index slot at the removed entry: every count agrees but one */
    mguard__ix_put(&L->ent_ix, mguard__hash_ptr(&ly), 2);
    L->live_ents++;
    LEDGER_BROKEN(&f, "3 live entries counted, 4 recorded");
    mguard__ix_del(&L->ent_ix, mguard__hash_ptr(&ly), 2);
    L->live_ents--;
    L->nmod++;
    LEDGER_BROKEN(&f, "3 modified counted, 4 recorded");
    L->nmod--;
    LEDGER_DONE(&f);
}

static void test_ledger_write_lists(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    uint32_t wa = lwrite_of(L, &lx, "a"), wb = lwrite_of(L, &lx, "b");
    mguard__lent *x = &L->ents[0];
    uint64_t seq;
    const char *attr;
    (void)state;
    assert_int_equal(x->head, wa);
    assert_int_equal(x->tail, wb);
    x->head = L->nwpool + 1;
    LEDGER_BROKEN(&f, "entry 0: write %u out of range", L->nwpool + 1);
    x->head = wa;
    L->writes[wb - 1].obj = &lm;
    LEDGER_BROKEN(&f, "entry 0: write %u belongs to %p", wb, (void *)&lm);
    L->writes[wb - 1].obj = &lx;
    seq = L->writes[wb - 1].seq;
    L->writes[wb - 1].seq = L->writes[wa - 1].seq;
    LEDGER_BROKEN(&f, "entry 0: writes out of order");
    L->writes[wb - 1].seq = seq;
    attr = L->writes[wb - 1].attr;
    L->writes[wb - 1].attr = mguard_intern(f.ctx, "zz");
    LEDGER_BROKEN(&f, "entry 0: write %u not found by its key", wb);
    L->writes[wb - 1].attr = attr;
    L->writes[wb - 1].deleted = 1;
    LEDGER_BROKEN(&f, "entry 0: deletion with a value");
    L->writes[wb - 1].deleted = 0;
    L->writes[wb - 1].size = 1;   /* a pointer ledger's writes: size 0, type 0 */
    LEDGER_BROKEN(&f, "entry 0: write %u is not of its attribute's size and type", wb);
    L->writes[wb - 1].size = 0;
    x->nwrites = 1;
    LEDGER_BROKEN(&f, "entry 0: more writes than counted");
    x->nwrites = 2;
    x->tail = wa;
    LEDGER_BROKEN(&f, "entry 0: write list counts 2 of 2");
    x->tail = wb;
    LEDGER_DONE(&f);
}

static void test_ledger_free_lists(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    uint32_t wa = lwrite_of(L, &lx, "a"), rx = lref_of(L, &lx), zero = 0;
    uint32_t freew = L->nwpool - L->live_writes, freer = L->nrpool - L->live_refs;
    (void)state;
    LEDGER_BROKEN_WHILE(&f, L->wfree, wa, "write free list reaches a live slot");
    LEDGER_BROKEN_WHILE(&f, L->writes[L->wfree - 1].next, L->wfree, "write free list has a cycle");
    LEDGER_BROKEN_WHILE(&f, L->wfree, zero, "write pool: 0 free of %u", freew);
    LEDGER_BROKEN_WHILE(&f, L->rfree, rx, "ref free list reaches a live slot");
    LEDGER_BROKEN_WHILE(&f, L->refs[L->rfree - 1].rq_next, L->rfree, "ref free list has a cycle");
    LEDGER_BROKEN_WHILE(&f, L->rfree, zero, "ref pool: 0 free of %u", freer);
    LEDGER_DONE(&f);
}

static void test_ledger_queues(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    uint32_t rx = lref_of(L, &lx);
    (void)state;
    L->relq_head = L->relq_tail = rx;   /* not flagged as queued */
    LEDGER_BROKEN(&f, "queue release: bad slot %u", rx);
    L->relq_head = L->relq_tail = 0;
    L->rq_tail = rx;
    LEDGER_BROKEN(&f, "queue retain: wrong tail");
    L->rq_tail = 0;
    L->refs[rx - 1].flags |= MGUARD__LR_RQ;
    LEDGER_BROKEN(&f, "queue retain: 1 flagged, 0 queued");
    L->rq_head = L->rq_tail = rx;
    L->refs[rx - 1].rq_next = rx;
    LEDGER_BROKEN(&f, "queue retain has a cycle");
    L->refs[rx - 1].rq_next = 0;
    L->rq_head = L->rq_tail = 0;
    L->refs[rx - 1].flags &= ~(uint32_t)MGUARD__LR_RQ;
    LEDGER_DONE(&f);
}

static void test_ledger_hold_counts(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    uint32_t rv1 = lref_of(L, &lv1), rx = lref_of(L, &lx);
    int id = L->hooks[1].id;
    (void)state;
    L->refs[rv1 - 1].count++;   /* held by x.a and the record: 2 */
    LEDGER_BROKEN(&f, "%p held 2 times, counted 3", (void *)&lv1);
    L->refs[rv1 - 1].count--;
    L->hooks[1].id = L->hooks[0].id;
    LEDGER_BROKEN(&f, "hook id %d twice", L->hooks[0].id);
    L->hooks[1].id = id;
    L->refs[rx - 1].flags &= ~(uint32_t)MGUARD__LR_HELD;
    LEDGER_BROKEN(&f, "%p held but neither retained nor queued", (void *)&lx);
    L->refs[rx - 1].flags |= MGUARD__LR_HELD;
    LEDGER_DONE(&f);
}

static void test_ledger_more_holds(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    uint32_t rh2 = lref_of(L, &lh2), rx = lref_of(L, &lx);
    static int stranger;
    uint64_t life;
    (void)state;
    /* a live ref slot whose pointer is not the one its index slot hashes */
    L->refs[rx - 1].ptr = &stranger;
    LEDGER_BROKEN(&f, "ref %u not found by its pointer", rx - 1);
    L->refs[rx - 1].ptr = &lx;
    /* a hook function the ledger does not hold */
    L->hooks[0].fn = &stranger;
    LEDGER_BROKEN(&f, "hook %p is not held", (void *)&stranger);
    L->hooks[0].fn = &lh1;
    /* hook 2 hidden (and its hold of x): its function is held by nothing,
       yet not queued for release */
    L->nhooks = 1;
    L->refs[rx - 1].count--;
    L->refs[rh2 - 1].count = 0;
    LEDGER_BROKEN(&f, "%p unheld but not queued for release", (void *)&lh2);
    L->refs[rh2 - 1].count = 1;
    L->refs[rx - 1].count++;
    L->nhooks = 2;
    /* a watched pointer whose death would not reach the ledger (its
       life, the value of the root's table, put back after) */
    assert_int_equal(mguard_weak_get_copy(mguard__ledger_root_of(f.ctx)->watch, &lx, &life), MGUARD_OK);
    assert_int_equal(mguard_weak_take(mguard__ledger_root_of(f.ctx)->watch, &lx, NULL), MGUARD_OK);
    LEDGER_BROKEN(&f, "%p is not watched", (void *)&lx);
    assert_int_equal(mguard_weak_set(mguard__ledger_root_of(f.ctx)->watch, &lx, &life), MGUARD_OK);
    /* an index slot at the free write slot: the lists hold fewer writes */
    mguard__ix_put(&L->w_ix, 12345u, L->wfree);
    L->live_writes++;
    LEDGER_BROKEN(&f, "2 writes in lists, 3 recorded");
    mguard__ix_del(&L->w_ix, 12345u, L->wfree);
    L->live_writes--;
    LEDGER_DONE(&f);
}

/* The strings the entries and writes name: one slot each, counted. The
   fixture's: sources G.x G.y G.m N (slots 1-4), attributes a c b (5-7); y's
   death freed c's slot, then G.y's. */
static uint32_t lstr_of(mguard_ledger *L, const char *s)
{
    uint32_t i = mguard__ledger_str_find(L, mguard__str_find(L->hd.ctx, s));
    assert_true(i != 0);
    return i;
}

static void test_ledger_strings(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    uint32_t gx = lstr_of(L, "G.x"), sa = lstr_of(L, "a"), past = L->nspool + 1, zero = 0;
    const char *src = L->ents[0].source;
    size_t s;
    (void)state;
    assert_int_equal(gx, 1);
    assert_int_equal(sa, 5);
    assert_int_equal(L->nspool, 7);
    assert_int_equal(L->live_strs, 5);
    assert_int_equal(L->sfree, 2);
    assert_int_equal(L->strs[1].next, 6);
    assert_int_equal(L->strs[sa - 1].count, 1);
    LEDGER_BROKEN_WHILE(&f, L->live_strs, past, "string counts out of range");
    s = slot_of(&L->s_ix, sa);
    LEDGER_BROKEN_WHILE(&f, L->s_ix.slots[s].idx, past, "string index: slot %lu points past the array", (unsigned long)s);
    /* an entry naming a string the ledger does not hold */
    L->ents[0].source = mguard_intern(f.ctx, "zz");
    LEDGER_BROKEN(&f, "string \"zz\" is not held");
    L->ents[0].source = src;
    /* a slot its index does not find (the entry finds it by the hint) */
    mguard__ix_del(&L->s_ix, MGUARD__STR_HDR(src)->hash, gx);
    LEDGER_BROKEN(&f, "string slot 0 (\"G.x\") not found by its string");
    mguard__ix_put(&L->s_ix, MGUARD__STR_HDR(src)->hash, gx);
    L->strs[sa - 1].count++;
    LEDGER_BROKEN(&f, "string \"a\" named 1 times, counted 2");
    L->strs[sa - 1].count--;
    L->live_strs--;
    LEDGER_BROKEN(&f, "5 strings, 4 recorded");
    L->live_strs++;
    LEDGER_BROKEN_WHILE(&f, L->sfree, sa, "string free list reaches a live slot");
    LEDGER_BROKEN_WHILE(&f, L->strs[5].next, L->sfree, "string free list has a cycle");
    LEDGER_BROKEN_WHILE(&f, L->sfree, zero, "string pool: 0 free of 2");
    {   /* the holds the ledgers count against the strings' own counts */
        mguard_ledger *C = mguard_ledger_clone(L);   /* a: 2 holders */
        mguard__str *h = MGUARD__STR_HDR(L->strs[sa - 1].s);
        uint32_t one = 1;
        struct { mguard__str h; char c[8]; } fake;
        assert_non_null(C);
        assert_int_equal(h->refs, 2);
        LEDGER_BROKEN_WHILE(&f, h->refs, one, "string \"a\": 1 holders, the ledgers hold it 2 times");
        mguard_ledger_destroy(C);
        /* an entry's source and its slot: a string the context never interned */
        memset(&fake, 0, sizeof fake);
        fake.h.refs = 1;
        fake.h.pos = 999;
        fake.h.hash = MGUARD__STR_HDR(src)->hash;
        fake.h.lslot = gx;
        memcpy(fake.c, "G.x", 4);
        L->ents[0].source = L->strs[gx - 1].s = fake.c;
        LEDGER_BROKEN(&f, "string %p is not interned", (const void *)fake.c);
        L->ents[0].source = L->strs[gx - 1].s = src;
    }
    LEDGER_DONE(&f);
}

static void test_ledger_index_without_slots(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_ledger *L = mguard_ledger_create(ctx, NULL);
    (void)state;
    assert_non_null(L);
    assert_null(L->ent_ix.slots);
    L->ent_ix.used = 1;
    EXPECT_BROKEN(ctx, "mguard_ctx_check: ledger: entry index: 1 keys without slots");
    L->ent_ix.used = 0;
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

static void test_ledger_list_of_the_context(void **state)
{
    lfix f;
    mguard_ledger *L = ledger_fixture(&f);
    struct mguard__lroot *root = mguard__ledger_root_of(f.ctx);
    mguard_weak *watch = root->watch;
    (void)state;
    root->watch = NULL;
    EXPECT_BROKEN(f.ctx, "mguard_ctx_check: the ledgers' weak table is gone");
    root->watch = watch;
    L->hd.magic = MGUARD__DEAD;
    EXPECT_BROKEN(f.ctx, "mguard_ctx_check: ledger list broken at %p", (void *)L);
    L->hd.magic = MGUARD__MAGIC_LEDGER;
    root->nledgers++;
    EXPECT_BROKEN(f.ctx, "mguard_ctx_check: 1 ledgers listed, 2 counted");
    root->nledgers--;
    LEDGER_DONE(&f);
}

/* A dependency declared twice is kept once, also once the job keeps a set
   of them (past 8): the stored entry has one slot per dependency. */
static int dd_objs[10], dd_x, dd_key;
static mguard_status declare_twice(mguard_cache_job *job, void *value, void *user)
{
    int i;
    (void)value; (void)user;
    for (i = 0; i < 10; i++) assert_int_equal(mguard_cache_job_depend(job, &dd_objs[i], NULL), MGUARD_OK);
    assert_int_equal(mguard_cache_job_depend(job, &dd_x, "a"), MGUARD_OK);
    assert_int_equal(mguard_cache_job_depend(job, &dd_x, "a"), MGUARD_OK);
    assert_int_equal(mguard_cache_job_depend(job, &dd_objs[3], "b"), MGUARD_OK);   /* covered by the whole object */
    return MGUARD_OK;
}
static void test_a_dependency_declared_twice_is_one_slot(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_cache_desc cd;
    mguard_cache *c;
    mguard_status st;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof(long);
    c = mguard_cache_create(ctx, &cd);
    assert_non_null(mguard_cache_get_or_compute(c, MGUARD_CACHE_KEYS(&dd_key), declare_twice, NULL, &st));
    assert_int_equal(st, MGUARD_OK);
    assert_int_equal(ctx->npslots, 1 + 10 + 1);   /* the entry, 10 objects, (x, "a") */
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* Every table is renumbered together, each entry taking its rank among all
   the context's entries: a key that entered A before B is still called back
   A first when it dies, though only A needed the renumbering. (0.2
   renumbered A alone, its stamps jumping ahead of B's: B was called first.) */
static int death_seen[4], ndeath_seen;
static void note_death(const void *key, void *value, void *user) { (void)key; (void)value; death_seen[ndeath_seen++] = *(const int *)user; }

static void test_renumbering_keeps_a_deaths_order_across_tables(void **state)
{
    mguard_ctx *ctx = new_ctx();
    static int id[2] = { 0, 1 }, k, other[3];
    mguard_weak_desc d;
    mguard_weak *t[2];
    int i;
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.key_death = note_death;
    for (i = 0; i < 2; i++) {
        d.user = &id[i];
        t[i] = mguard_weak_create(ctx, &d);
        assert_non_null(t[i]);
    }
    setl(t[1], &other[0], 0);      /* B's entries around k's: ranks to keep */
    setl(t[0], &k, 1);             /* k enters A, then B */
    setl(t[1], &k, 2);
    setl(t[1], &other[1], 3);
    ctx->next_stamp += 0xffffffffu; /* as if 2^32 - 1 entries had been made meanwhile */
    setl(t[0], &other[2], 4);      /* A's would span 2^32: every table renumbered */
    assert_int_equal(ctx->next_stamp, 5);
    assert_true(t[1]->base == 0 && t[0]->base == 1);
    assert_int_equal(t[1]->order[0].stamp, 0);   /* other[0]: rank 0 */
    assert_int_equal(t[1]->order[1].stamp, 2);   /* k in B: rank 2 */
    assert_int_equal(t[1]->order[2].stamp, 3);   /* other[1]: rank 3 */
    assert_int_equal(t[0]->order[0].stamp, 0);   /* k in A: rank 1 */
    assert_int_equal(t[0]->order[1].stamp, 3);   /* other[2]: 4, made after */
    assert_int_equal(t[0]->rebased, 1);
    assert_int_equal(t[1]->rebased, 1);
    EXPECT_SOUND(ctx);
    ndeath_seen = 0;
    mguard_on_destroy(ctx, &k);
    assert_int_equal(ndeath_seen, 2);
    assert_int_equal(death_seen[0], 0);          /* A first, as k entered them */
    assert_int_equal(death_seen[1], 1);
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* A clear removes every entry there at its start, however many renumberings
   its destructors cause: its walk starts over on the new stamps, its bound
   moved along, and nothing is logged. An entry a destructor adds stays.
   (0.2's walk ended at the renumbering, WALK_RENUMBERED, two entries left.) */
static mguard_weak *clear_t;
static int clear_k[4], nclear_dtor;
static void clear_dtor(void *value, void *user)
{
    (void)value;
    (void)user;
    if (nclear_dtor++ == 0) {
        clear_t->ctx->next_stamp += 0xffffffffu;
        setl(clear_t, &clear_k[3], 3);            /* renumbers: the clear's walk must go on */
    }
}

static void test_a_clear_outlasts_a_renumbering(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_weak_desc d;
    int i;
    (void)state;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.value_dtor = clear_dtor;
    clear_t = mguard_weak_create(ctx, &d);
    assert_non_null(clear_t);
    for (i = 0; i < 3; i++) setl(clear_t, &clear_k[i], i);
    ctx->next_stamp += 1000;      /* entries made elsewhere: the clear's bound is no rank */
    nclear_dtor = 0;
    lg.count = 0;
    mguard_weak_clear(clear_t);
    assert_int_equal(lg.count, 0);
    assert_int_equal(nclear_dtor, 3);
    assert_int_equal(clear_t->rebased, 1);
    assert_int_equal(mguard_weak_count(clear_t), 1);
    assert_non_null(mguard_weak_get(clear_t, &clear_k[3]));
    for (i = 0; i < 3; i++) assert_null(mguard_weak_get(clear_t, &clear_k[i]));
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(nclear_dtor, 4);
}

/* The renumbering allocates (its merge of the tables' orders), and the set
   that needs it may also need room: out of memory at either, the set fails
   with nothing changed (the renumbering, which the program sees, comes
   last), and the next one renumbers. */
static void test_a_renumbering_out_of_memory_changes_nothing(void **state)
{
    test_alloc al;
    mguard_ctx *ctx;
    mguard_weak *t;
    static int k[9];
    long v = 7;
    uint64_t ns;
    int i, fail;
    (void)state;
    memset(&al, 0, sizeof al);
    ctx = test_ctx(&lg, &al);
    assert_non_null(ctx);
    t = new_table(ctx);
    for (i = 0; i < 8; i++) setl(t, &k[i], i);
    assert_int_equal(t->len, t->cap);   /* full: the next set grows the order first */
    ctx->next_stamp += 0xffffffffu;
    ns = ctx->next_stamp;
    for (fail = 1; fail <= 2; fail++) {   /* the order's growth, then the merge's heap */
        long calls = al.calls;
        al.fail_at = calls + fail;
        assert_int_equal(mguard_weak_set(t, &k[8], &v), MGUARD_ENOMEM);
        assert_int_equal(al.failures, fail);
        assert_true(ctx->next_stamp == ns);
        assert_int_equal(t->rebased, 0);
        assert_int_equal(mguard_weak_count(t), 8);
        assert_null(mguard_weak_get(t, &k[8]));
        EXPECT_SOUND(ctx);
    }
    al.fail_at = 0;
    assert_int_equal(mguard_weak_set(t, &k[8], &v), MGUARD_OK);
    assert_int_equal(ctx->next_stamp, 9);
    assert_int_equal(t->rebased, 1);
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(al.live_blocks, 0);
}

/* A cache's store orders are 32 bits relative to a base: the store that
   would wrap them renumbers the live entries ("stored before now"). An
   iteration begun before ends, logged; one begun after sees every entry
   stored before it and none stored during it. */
static void test_cache_store_orders_are_renumbered_before_they_wrap(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_cache_desc cd;
    mguard_cache *c;
    mguard_cache_iter old, it;
    static int k[4];
    long v = 1;
    int seen = 0;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof v;
    c = mguard_cache_create(ctx, &cd);
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&k[0]), &v, 0), MGUARD_OK);
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&k[1]), &v, 0), MGUARD_OK);
    old = mguard_cache_iterate(c);
    c->next_seq = c->sbase + 0xffffffffu;                 /* the next store would wrap */
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&k[2]), &v, 0), MGUARD_OK);
    assert_true(c->rebased);
    assert_int_equal(c->sbase, (uint64_t)0xffffffffu - 1);
    EXPECT_SOUND(ctx);
    lg.count = 0;
    assert_false(mguard_cache_next(&old));
    assert_int_equal(lg.count, 1);
    assert_int_equal(lg.code, MGUARD_LOG_WALK_RENUMBERED);
    it = mguard_cache_iterate(c);
    while (mguard_cache_next(&it)) {
        if (!seen) assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&k[3]), &v, 0), MGUARD_OK);
        seen++;
    }
    assert_int_equal(seen, 3);                            /* k[0..2], not k[3] */
    assert_int_equal(mguard_cache_count(c), 4);
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

/* A clear whose value destructor stores into the same cache, the store
   renumbering it, still drops exactly the entries there at its start: those
   stored before the clear keep their place below its bound, those stored
   during it above. (0.2 made every
   live entry "stored just before now", above the bound: two entries there
   at the start survived the clear.) */
static mguard_cache *rn_cache;
static int rn_k[6], rn_dtor;
static void rn_cache_dtor(void *value, void *user)
{
    long v = 9;
    (void)value;
    (void)user;
    if (rn_dtor++ == 0) {
        /* k[3] takes the freed position 0, k[4] a new one the walk has ahead */
        assert_int_equal(mguard_cache_set(rn_cache, MGUARD_CACHE_KEYS(&rn_k[3]), &v, 0), MGUARD_OK);
        assert_int_equal(mguard_cache_set(rn_cache, MGUARD_CACHE_KEYS(&rn_k[4]), &v, 0), MGUARD_OK);
        assert_true(!rn_cache->rebased && rn_cache->next_seq == rn_cache->sbase + 0xffffffffu);
        assert_int_equal(mguard_cache_set(rn_cache, MGUARD_CACHE_KEYS(&rn_k[5]), &v, 0), MGUARD_OK);   /* would wrap */
        assert_true(rn_cache->rebased);
    }
}

static void test_cache_clear_outlasts_a_renumbering(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_cache_desc cd;
    long v = 1;
    int i;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof v;
    cd.value_dtor = rn_cache_dtor;
    rn_cache = mguard_cache_create(ctx, &cd);
    assert_non_null(rn_cache);
    rn_cache->next_seq = rn_cache->sbase + 0xffffffffu - 5;   /* as if 2^32 - 6 stores had been made */
    for (i = 0; i < 3; i++) assert_int_equal(mguard_cache_set(rn_cache, MGUARD_CACHE_KEYS(&rn_k[i]), &v, 0), MGUARD_OK);
    rn_dtor = 0;
    lg.count = 0;
    mguard_cache_clear(rn_cache);
    assert_int_equal(lg.count, 0);
    assert_int_equal(rn_dtor, 3);
    assert_int_equal(mguard_cache_count(rn_cache), 3);   /* k[3..5], stored during the clear */
    for (i = 3; i < 6; i++) assert_non_null(mguard_cache_get(rn_cache, MGUARD_CACHE_KEYS(&rn_k[i])));
    for (i = 0; i < 3; i++) assert_null(mguard_cache_get(rn_cache, MGUARD_CACHE_KEYS(&rn_k[i])));
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
    assert_int_equal(rn_dtor, 6);
}

/* Regression (issue 23, 2): a cache's total cost wrapped, and the check,
   summing the same way, could not see it. The check sums on its own,
   exactly (the wraps counted): a total that lost its wrap is seen. */
static void test_cache_total_cost_check_sees_a_lost_wrap(void **state)
{
    mguard_ctx *ctx = new_ctx();
    mguard_cache_desc cd;
    mguard_cache *c;
    static int a, b;
    long v = 1;
    size_t zero = 0;
    (void)state;
    memset(&cd, 0, sizeof cd);
    cd.value_size = sizeof v;
    cd.capacity = 10;   /* bounded: the costs are kept */
    c = mguard_cache_create(ctx, &cd);
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&a), &v, SIZE_MAX), MGUARD_OK);
    assert_int_equal(mguard_cache_set(c, MGUARD_CACHE_KEYS(&b), &v, 3), MGUARD_OK);
    assert_int_equal(c->total_cost, 2);
    assert_int_equal(c->cost_carry, 1);
    EXPECT_SOUND(ctx);
    BROKEN_WHILE(ctx, c->cost_carry, zero, "mguard_ctx_check: cache %p: total cost 2 (+0 wraps), counted 2 (+1 wraps)", (void *)c);
    BROKEN_WHILE(ctx, c->total_cost, (size_t)5, "mguard_ctx_check: cache %p: total cost 5 (+1 wraps), counted 2 (+1 wraps)", (void *)c);
    EXPECT_SOUND(ctx);
    mguard_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_check_sees_each_broken_invariant),
        cmocka_unit_test(test_context_index_check_sees_each_broken_invariant),
        cmocka_unit_test(test_registry_check_sees_each_broken_invariant),
        cmocka_unit_test(test_watcher_check_sees_each_broken_invariant),
        cmocka_unit_test(test_interned_string_check_sees_each_broken_invariant),
        cmocka_unit_test(test_table_check_sees_each_broken_invariant),
        cmocka_unit_test(test_a_storm_of_drops_leaves_only_the_reasons_slots),
        cmocka_unit_test(test_a_table_renumbers_its_stamps_before_they_wrap),
        cmocka_unit_test(test_renumbering_keeps_a_deaths_order_across_tables),
        cmocka_unit_test(test_a_clear_outlasts_a_renumbering),
        cmocka_unit_test(test_a_renumbering_out_of_memory_changes_nothing),
        cmocka_unit_test(test_index_counts_the_probes_that_pass_each_group),
        cmocka_unit_test(test_index_overflow_count_sticks_at_255),
        cmocka_unit_test(test_a_death_walks_each_group_of_the_probe_once),
        cmocka_unit_test(test_index_grows_when_full_and_shrinks_on_insert_when_mostly_empty),
        cmocka_unit_test(test_scope_check_sees_each_broken_invariant),
        cmocka_unit_test(test_dyn_check_sees_each_broken_invariant),
        cmocka_unit_test(test_ledger_counts_out_of_range),
        cmocka_unit_test(test_ledger_indexes),
        cmocka_unit_test(test_ledger_entries),
        cmocka_unit_test(test_ledger_write_lists),
        cmocka_unit_test(test_ledger_free_lists),
        cmocka_unit_test(test_ledger_queues),
        cmocka_unit_test(test_ledger_hold_counts),
        cmocka_unit_test(test_ledger_more_holds),
        cmocka_unit_test(test_ledger_strings),
        cmocka_unit_test(test_ledger_index_without_slots),
        cmocka_unit_test(test_ledger_list_of_the_context),
        cmocka_unit_test(test_a_dependency_declared_twice_is_one_slot),
        cmocka_unit_test(test_cache_store_orders_are_renumbered_before_they_wrap),
        cmocka_unit_test(test_cache_clear_outlasts_a_renumbering),
        cmocka_unit_test(test_cache_total_cost_check_sees_a_lost_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
