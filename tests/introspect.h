/* Questions only a test asks: answered from the implementation's own data.
   They were public functions in 0.1 (mguard_is_known, mguard_watcher_count,
   mguard_scope_known_name, mguard_ledger_check); a program never needs
   them, so they left the header's API for the tests.

   Declared for every test; defined where the implementation is compiled:
   include this file after mguard.h in a translation unit that defines
   MGUARD_IMPLEMENTATION (tests/mguard_impl.c, and the tests that hold the
   implementation themselves). On a thread-safe context each takes the
   context's lock around the question, like a public function. */
#ifndef MGUARD_TEST_INTROSPECT_H
#define MGUARD_TEST_INTROSPECT_H

#if defined(MGUARD_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define MGT_DEF static __attribute__((unused))
#elif defined(MGUARD_STATIC)
#define MGT_DEF static
#else
#define MGT_DEF extern
#endif

/* mguard_ctx_get_stats's answer (all zero when it refuses ctx), and its object count. */
static inline mguard_ctx_stats mgt_stats(const mguard_ctx *ctx)
{
    mguard_ctx_stats st = {0, false};
    (void)mguard_ctx_get_stats(ctx, &st);
    return st;
}
#define mgt_objects(ctx) (mgt_stats(ctx).objects)
/* true when ctx knows obj (a key, watched object, guard, ref target, tagged
   object or class). */
MGT_DEF bool mgt_ctx_contains(const mguard_ctx *ctx, const void *obj);
/* Live watchers of obj (those whose guard has not died). */
MGT_DEF size_t mgt_watcher_count(const mguard_ctx *ctx, const void *obj);
/* comp's name if s has named it already, else NULL (never names it). */
MGT_DEF const char *mgt_scope_known_name(const mguard_scope *s, const void *comp);
/* L's own invariants (mguard_ctx_check checks them for every ledger). */
MGT_DEF mguard_status mgt_ledger_check(const mguard_ledger *L);
/* The strings L holds (each once, however many of its entries and writes name it). */
MGT_DEF size_t mgt_ledger_strings(const mguard_ledger *L);
/* The strings ctx holds interned (mguard_intern's and its own). */
MGT_DEF size_t mgt_interned_count(const mguard_ctx *ctx);
/* The slots of ctx's index (its capacity: 0 or a power of two). */
MGT_DEF size_t mgt_index_capacity(const mguard_ctx *ctx);
/* Not a question: sets ctx's generation (a test's way to its limit, LONG_MAX). */
MGT_DEF void mgt_gen_set(mguard_ctx *ctx, long gen);

#if defined(MGUARD_IMPLEMENTATION) && !defined(MGT_IMPLEMENTED)
#define MGT_IMPLEMENTED

#define MGT_LOCKED(ctxof, type, expr) \
    do { \
        mguard_ctx *c_ = (ctxof); \
        mguard__lock *lk_ = c_ ? c_->lk : NULL; \
        type r_; \
        if (lk_) mguard__lock_acquire(lk_); \
        r_ = (expr); \
        if (lk_) mguard__lock_release(lk_); \
        else if (c_ && c_->logq.n) mguard__log_flush(c_); \
        return r_; \
    } while (0)

static bool mgt__ctx_contains(const mguard_ctx *ctx, const void *obj)
{
    bool known;
    return mguard__ctx_ok(ctx, "mgt_ctx_contains") && obj &&
           (mguard__kx_find(&ctx->kx, obj, 0, mguard__hash64(obj), &known) != NULL || known);
}
MGT_DEF bool mgt_ctx_contains(const mguard_ctx *ctx, const void *obj)
{
    MGT_LOCKED(mguard__ctx_of_ctx(ctx), bool, mgt__ctx_contains(ctx, obj));
}

static size_t mgt__watcher_count(const mguard_ctx *ctx, const void *obj)
{
    uint32_t r, i;
    size_t n = 0;
    const mguard__obj *o;
    const mguard__side *sd;
    if (!mguard__ctx_ok(ctx, "mgt_watcher_count") || !obj) return 0;
    r = mguard__reg_find(ctx, obj);
    if (!r || !ctx->objs[r - 1].side) return 0;
    o = &ctx->objs[r - 1];
    sd = &ctx->sides[o->side - 1];
    for (i = 0; i < MGUARD__NWATCH(o, sd); i++) {
        const mguard__watcher *w = &MGUARD__WATCHERS(o, sd)[i];
        if (mguard__find_serial(ctx, w->guard, w->guard_serial)) n++;
    }
    return n;
}
MGT_DEF size_t mgt_watcher_count(const mguard_ctx *ctx, const void *obj)
{
    MGT_LOCKED(mguard__ctx_of_ctx(ctx), size_t, mgt__watcher_count(ctx, obj));
}

static size_t mgt__interned_count(const mguard_ctx *ctx)
{
    return mguard__ctx_ok(ctx, "mgt_interned_count") ? ctx->nstrs : 0;
}
MGT_DEF size_t mgt_interned_count(const mguard_ctx *ctx)
{
    MGT_LOCKED(mguard__ctx_of_ctx(ctx), size_t, mgt__interned_count(ctx));
}

static size_t mgt__index_capacity(const mguard_ctx *ctx)
{
    return mguard__ctx_ok(ctx, "mgt_index_capacity") ? MGUARD__KX_CAP(&ctx->kx) : 0;
}
MGT_DEF size_t mgt_index_capacity(const mguard_ctx *ctx)
{
    MGT_LOCKED(mguard__ctx_of_ctx(ctx), size_t, mgt__index_capacity(ctx));
}

#ifndef MGUARD_NO_SCOPE
static const char *mgt__scope_known_name(const mguard_scope *s, const void *comp)
{
    const mguard__scope_naming *v;
    if (!mguard__scope_ok(s) || !comp) return NULL;
    v = mguard__scope_entry(s, comp);
    return v && !(v->flags & MGUARD__SCOPE_FORGOTTEN) ? v->name : NULL;
}
MGT_DEF const char *mgt_scope_known_name(const mguard_scope *s, const void *comp)
{
    MGT_LOCKED(mguard__ctx_of_scope(s), const char *, mgt__scope_known_name(s, comp));
}
#endif

#ifndef MGUARD_NO_LEDGER
MGT_DEF mguard_status mgt_ledger_check(const mguard_ledger *L)
{
    if (!mguard__ledger_ok(L)) return MGUARD_EINVAL;   /* before its lock is looked at */
    MGT_LOCKED(mguard__ctx_of_ledger(L), mguard_status, mguard__ledger_check(L));
}
MGT_DEF size_t mgt_ledger_strings(const mguard_ledger *L)
{
    if (!mguard__ledger_ok(L)) return 0;
    MGT_LOCKED(mguard__ctx_of_ledger(L), size_t, L->live_strs);
}
#endif

MGT_DEF void mgt_gen_set(mguard_ctx *ctx, long gen)
{
    if (mguard__ctx_ok(ctx, "mgt_gen_set")) ctx->generation = gen;
}

#undef MGT_LOCKED
#endif /* MGUARD_IMPLEMENTATION */
#endif /* MGUARD_TEST_INTROSPECT_H */
