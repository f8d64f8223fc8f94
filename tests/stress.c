/* Stress and scale (make stress; not part of make test).

   10 million objects pass through 64 weak tables: each is set in two
   tables, tagged with the current generation, half of them watched, some
   mutated, read back (hits and misses), some removed or overwritten, and
   every object is destroyed once it leaves a window of one million live
   objects, so addresses are reused all the time. Generations advance
   every 1000 objects and are cleared every million. At the end the
   program checks every count it can predict (destructor calls, watcher
   calls, mutation counts, entries, live objects), runs mguard_ctx_check,
   destroys the context and checks that no block is left. Time and peak
   memory are printed, never asserted. Then 5 million generation
   advances, and 4 million random operations on two guarded caches (one
   bounded) whose every hit is checked against the versions its keys have
   now. Then the soak of issue 23: a million mutations with distinct
   attribute names and a million insert/remove cycles on weak tables, the
   context's live bytes flat after warm-up. Exit status 0 when every check
   held. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#include "introspect.h"

#ifndef NOBJ
#define NOBJ 10000000L
#endif
#define NTAB 64
#ifndef WINDOW
#define WINDOW 1000000L
#endif
#define SLOTS (WINDOW + 1)

typedef struct mem { long long live, peak; long blocks; long calls; } mem;
typedef union hdr { size_t n; long double a; } hdr;

static void *m_realloc(void *p, size_t n, void *user)
{
    mem *m = (mem *)user;
    hdr *h = p ? (hdr *)p - 1 : NULL;
    size_t old = h ? h->n : 0;
    hdr *nh = (hdr *)realloc(h, sizeof *nh + n);
    m->calls++;
    if (!nh) return NULL;
    if (!p) m->blocks++;
    nh->n = n;
    m->live += (long long)n - (long long)old;
    if (m->live > m->peak) m->peak = m->live;
    return nh + 1;
}

static void m_free(void *p, void *user)
{
    mem *m = (mem *)user;
    hdr *h;
    if (!p) return;
    h = (hdr *)p - 1;
    m->live -= (long long)h->n;
    m->blocks--;
    free(h);
}

static long dtor_calls, inval_calls, death_inval_calls;
static void count_dtor(void *value, void *user) { (void)value; (void)user; dtor_calls++; }
static void count_inval(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)user;
    if (attr) inval_calls++; else death_inval_calls++;
}

static uint64_t rng = 0x1234567887654321ull;
static uint64_t next_rand(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int failures;
#define EXPECT(cond, ...) do { if (!(cond)) { failures++; printf("  FAILED: " __VA_ARGS__); printf("\n"); } } while (0)

int main(void)
{
    mem m;
    mguard_ctx_desc d;
    mguard_ctx *ctx;
    mguard_weak *t[NTAB];
    mguard_weak_desc wd;
    char *slots = (char *)malloc(SLOTS);   /* object addresses; slot i % SLOTS */
    static char guard_obj;
    long i, sets = 0, gets = 0, hits = 0, removes = 0, overwrites = 0, mutations = 0, watches = 0;
    long destroys = 0, advances = 0, clears = 0, expected_inval = 0, expected_death_inval = 0;
    long expected_dtor;
    size_t entries = 0;
    double t0, t1, t2;
    int k;
    if (!slots) return 1;
    memset(&m, 0, sizeof m);
    memset(&d, 0, sizeof d);
    d.allocator.realloc_fn = m_realloc;
    d.allocator.free_fn = m_free;
    d.allocator.user = &m;
    ctx = mguard_ctx_create(&d);
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof(long);
    wd.value_dtor = count_dtor;
    for (k = 0; k < NTAB; k++) t[k] = mguard_weak_create(ctx, &wd);

    printf("mguard stress: %ld objects through %d tables, window %ld live\n", NOBJ, NTAB, WINDOW);
    t0 = now();
    for (i = 0; i < NOBJ; i++) {
        const void *o = &slots[i % SLOTS];
        long v = i;
        uint64_t r = next_rand();
        int a = (int)(r % NTAB), b = (int)((r >> 8) % NTAB);
        if (i >= WINDOW) {
            /* the object that leaves the window dies (its address will be
               reused by object i + 1) */
            mguard_on_destroy(ctx, &slots[(i - WINDOW) % SLOTS]);
            destroys++;
        }
        mguard_weak_set(t[a], o, &v);
        sets++;
        if (b != a) { mguard_weak_set(t[b], o, &v); sets++; }
        mguard_gen_tag(ctx, o);
        if (r & (1u << 20)) {
            mguard_watch(ctx, o, &guard_obj, count_inval, NULL);
            watches++;
            if (r & (1u << 21)) {
                mguard_on_mutation(ctx, o, "field");
                mutations++;
                expected_inval++;
            } else {
                expected_death_inval++;   /* fires at death (or never, if alive at the end) */
            }
        } else if (r & (1u << 22)) {
            mguard_on_mutation(ctx, o, "field");   /* unwatched: one lookup */
            mutations++;
        }
        if (mguard_weak_get(t[a], o)) hits++;
        if (mguard_weak_get(t[(a + 1) % NTAB], &slots[(i + 7) % SLOTS])) hits++;
        gets += 2;
        if ((r >> 24) % 16 == 0) { mguard_weak_set(t[a], o, &v); overwrites++; }
        if ((r >> 28) % 16 == 1 && b != a) { mguard_weak_take(t[b], o, NULL); removes++; }
        if (i % 1000 == 999) { mguard_gen_advance(ctx); advances++; }
        if (i % 1000000 == 999999) { mguard_gen_clear(ctx); clears++; }
    }
    t1 = now();

    /* what can be predicted */
    for (k = 0; k < NTAB; k++) entries += mguard_weak_count(t[k]);
    EXPECT(mgt_objects(ctx) == (size_t)WINDOW + 1, "object count %lu, expected %ld",
           (unsigned long)mgt_objects(ctx), WINDOW + 1);
    EXPECT(dtor_calls + (long)entries == sets + overwrites, "destructor calls %ld + entries %lu != values stored %ld",
           dtor_calls, (unsigned long)entries, sets + overwrites);
    EXPECT(inval_calls == expected_inval, "invalidations %ld, expected %ld", inval_calls, expected_inval);
    EXPECT(mguard_gen_current(ctx) == advances - clears * 1000, "generation %ld", mguard_gen_current(ctx));
    EXPECT(mguard_ctx_check(ctx) == MGUARD_OK, "mguard_ctx_check");
    expected_dtor = sets + overwrites;
    {
        /* watchers still pending belong to the live window */
        long pending = 0;
        long j;
        for (j = NOBJ - WINDOW; j < NOBJ; j++) pending += (long)mgt_watcher_count(ctx, &slots[j % SLOTS]);
        EXPECT(death_inval_calls + pending == expected_death_inval, "death invalidations %ld + pending %ld != %ld",
               death_inval_calls, pending, expected_death_inval);
    }
    mguard_ctx_destroy(ctx);
    t2 = now();
    EXPECT(dtor_calls == expected_dtor, "after destroy: destructor calls %ld, values stored %ld", dtor_calls, expected_dtor);
    EXPECT(m.blocks == 0 && m.live == 0, "leaked %ld blocks, %lld bytes", m.blocks, m.live);

    printf("  operations: %ld sets of new keys, %ld overwrites, %ld gets (%ld hits), %ld removes, %ld watches,\n"
           "              %ld mutations, %ld destroys, %ld generation advances, %ld clears\n",
           sets, overwrites, gets, hits, removes, watches, mutations, destroys, advances, clears);
    printf("  callbacks:  %ld value destructors, %ld invalidations by mutation, %ld by death\n",
           dtor_calls, inval_calls, death_inval_calls);
    printf("  time:       %.2f s for the run (%.0f ns per object), %.2f s for the final destroy\n",
           t1 - t0, (t1 - t0) * 1e9 / NOBJ, t2 - t1);
    printf("  memory:     peak %.1f MB through mguard's allocator (%.0f bytes per live object), %ld allocator calls\n",
           m.peak / 1048576.0, (double)m.peak / (double)(WINDOW + 1), m.calls);

    /* long sequences of generation advances and clears */
    {
        long g, wrong = 0, n = 0;
        mguard_ctx *gc = mguard_ctx_create(&d);
        double g0 = now(), g1;
        for (g = 1; g <= 5000000; g++) {
            const void *o = &slots[g % 4096];
            long cur = mguard_gen_current(gc);
            mguard_gen_tag(gc, o);
            wrong += !mguard_gen_is_dynamic(gc, o, NULL) || mguard_gen_get(gc, o) != cur;
            wrong += mguard_gen_advance(gc) != cur + 1;
            wrong += mguard_gen_is_dynamic(gc, o, NULL) || mguard_gen_get(gc, o) != cur;
            if (g % 100000 == 0) {
                mguard_gen_clear(gc);
                wrong += mguard_gen_current(gc) != 0 || mgt_objects(gc) != 0;
            }
            n += 6;
        }
        g1 = now();
        EXPECT(wrong == 0, "generations: %ld wrong answers", wrong);
        EXPECT(mguard_ctx_check(gc) == MGUARD_OK, "generations: mguard_ctx_check");
        mguard_ctx_destroy(gc);
        EXPECT(m.blocks == 0 && m.live == 0, "generations: leaked %ld blocks", m.blocks);
        printf("  generations: 5000000 advances, a tag and checks each, a clear every 100000: %.2f s (%.0f ns per call)\n",
               g1 - g0, (g1 - g0) * 1e9 / (double)n);
    }
    /* guarded caches: 4 million operations over a window of 100,000
       objects whose versions change with every mutation and death; every
       hit must hold the versions its keys have now (no stale value),
       every value stored is destroyed exactly once, the entry blocks kept
       for reuse never outgrow what the caches held at once */
    {
        enum { CW = 100000 };
        static long ver[CW];
        mguard_ctx *cc = mguard_ctx_create(&d);
        mguard_cache *cu, *cb;
        mguard_cache_desc cd;
        long n, stored = 0, chits = 0, stale = 0, cmut = 0, cdeaths = 0;
        double c0 = now(), c1;
        memset(ver, 0, sizeof ver);
        memset(&cd, 0, sizeof cd);
        cd.value_size = 2 * sizeof(long);
        cd.value_dtor = count_dtor;
        dtor_calls = 0;
        cu = mguard_cache_create(cc, &cd);
        cd.capacity = 20000;
        cb = mguard_cache_create(cc, &cd);
        for (n = 0; n < 4000000; n++) {
            uint64_t r = next_rand();
            long a = (long)(r % CW), b = (long)((r >> 20) % CW);
            const void *keys[2];
            size_t nk = (r >> 40) & 1 ? 2 : 1;
            mguard_cache *c = (r >> 41) & 1 ? cb : cu;
            const long *v;
            keys[0] = &slots[a];
            keys[1] = &slots[b];
            if (nk == 2 && a == b) nk = 1;
            switch ((r >> 42) % 8) {
            case 0: case 1: {
                long val[2];
                val[0] = ver[a];
                val[1] = nk == 2 ? ver[b] : -1;
                if (mguard_cache_set(c, keys, nk, val, 1) == MGUARD_OK) stored++;
                break;
            }
            case 2:
                mguard_on_mutation(cc, keys[0], "x");
                ver[a]++;
                cmut++;
                break;
            case 3:
                if ((r >> 45) % 8 == 0) {
                    mguard_on_destroy(cc, keys[0]);   /* a new object at the address */
                    ver[a]++;
                    cdeaths++;
                }
                break;
            default:
                v = (const long *)mguard_cache_get(c, keys, nk);
                if (v) {
                    chits++;
                    stale += v[0] != ver[a] || (nk == 2 ? v[1] != ver[b] : v[1] != -1);
                }
            }
            if (n % 1000000 == 999999) mguard_cache_clear(cu);
        }
        c1 = now();
        EXPECT(stale == 0, "caches: %ld of %ld hits returned a stale value", stale, chits);
        EXPECT(mguard_cache_count(cb) <= 20000, "caches: the bounded cache holds %lu", (unsigned long)mguard_cache_count(cb));
        EXPECT(dtor_calls + (long)mguard_cache_count(cu) + (long)mguard_cache_count(cb) == stored,
               "caches: %ld destroyed + %lu live != %ld stored", dtor_calls,
               (unsigned long)(mguard_cache_count(cu) + mguard_cache_count(cb)), stored);
        EXPECT(mguard_ctx_check(cc) == MGUARD_OK, "caches: mguard_ctx_check");
        mguard_ctx_destroy(cc);
        EXPECT(dtor_calls == stored, "caches: after destroy %ld destroyed, %ld stored", dtor_calls, stored);
        EXPECT(m.blocks == 0 && m.live == 0, "caches: leaked %ld blocks", m.blocks);
        printf("  caches:     4000000 operations: %ld stored, %ld hits (none stale), %ld mutations, %ld deaths: %.2f s\n",
               stored, chits, cmut, cdeaths, c1 - c0);
    }
    /* soak (issue 23): memory flat after warm-up. A million mutations,
       each naming a new attribute (with a file) and dropping a cache
       entry that depends on the object, so each records a reason and
       a logged drop; then a million insert/remove cycles of new keys on
       two weak tables (a key in both: a table block), after a large table
       was emptied and SETTLE cycles let it compact and shrink. Live bytes
       of the context's allocator after each run must be within SOAK_SLACK
       of those after its warm-up. (The registry's arrays keep the size of
       the most records at once: not shrunk yet.) */
    {
        enum { SOAK = 1000000, WARM = 10000, SETTLE = 300000, SOAK_SLACK = 4096 };
        mguard_ctx_desc qd = d;
        mguard_ctx *sc;
        mguard_cache *c;
        mguard_cache_desc cd;
        mguard_weak *w[2];
        static char obj, other;
        char attr[32];
        long n, val = 1;
        long long warm = 0, mend, warm2 = 0, top = 0;
        double s0 = now(), s1;
        qd.quiet = true;
        sc = mguard_ctx_create(&qd);
        memset(&cd, 0, sizeof cd);
        cd.value_size = sizeof(long);
        cd.log_reasons = true;
        cd.name = "soak";
        c = mguard_cache_create(sc, &cd);
        for (n = 0; n < SOAK; n++) {
            const void *k1[1];
            if (n == WARM) warm = m.live;
            k1[0] = &obj;
            snprintf(attr, sizeof attr, "attr%ld", n);
            mguard_cache_set(c, k1, 1, &val, 0);
            k1[0] = &other;
            mguard_cache_set(c, k1, 1, &val, 0);
            mguard_cache_depend(c, k1, 1, &obj, attr);
            mguard_on_mutation_at(sc, &obj, attr, "soak.c", (int)n);   /* a file outlives sc (the contract) */
            if (mguard_cache_count(c) != 0) { failures++; break; }
        }
        mend = m.live;
        EXPECT(mend <= warm + SOAK_SLACK, "soak: %lld live bytes after %d mutations, %lld after %d",
               mend, SOAK, warm, WARM);
        memset(&wd, 0, sizeof wd);
        wd.value_size = sizeof(long);
        w[0] = mguard_weak_create(sc, &wd);
        w[1] = mguard_weak_create(sc, &wd);
        /* a large table emptied: 200,000 keys in, then out */
        for (n = 0; n < 200000; n++) mguard_weak_set(w[0], &slots[n], &n);
        top = m.live;
        for (n = 0; n < 200000; n++) mguard_weak_take(w[0], &slots[n], NULL);
        for (n = 0; n < SETTLE + SOAK; n++) {
            const void *o = &slots[n % SLOTS];
            if (n == SETTLE) warm2 = m.live;
            mguard_weak_set(w[0], o, &n);
            mguard_weak_set(w[1], o, &n);
            if (n & 1) mguard_weak_take(w[0], o, NULL); else mguard_on_destroy(sc, o);
            mguard_weak_take(w[1], o, NULL);
        }
        EXPECT(mguard_weak_count(w[0]) == 0 && mguard_weak_count(w[1]) == 0, "soak: tables not empty");
        EXPECT(m.live <= warm2 + SOAK_SLACK, "soak: %lld live bytes after %d more insert/remove cycles, %lld after %d",
               m.live, SOAK, warm2, SETTLE);
        EXPECT(mguard_ctx_check(sc) == MGUARD_OK, "soak: mguard_ctx_check");
        s1 = now();
        printf("  soak:       %d mutations with distinct attributes: %lld live bytes after %d, %lld at the end;\n"
               "              insert/remove cycles after a table of 200000 emptied (%lld bytes at its top):\n"
               "              %lld after %d, %lld after %d more; %.2f s\n",
               SOAK, warm, WARM, mend, top, warm2, SETTLE, m.live, SOAK, s1 - s0);
        mguard_ctx_destroy(sc);
        EXPECT(m.blocks == 0 && m.live == 0, "soak: leaked %ld blocks", m.blocks);
    }
    printf("  %s\n", failures ? "FAILED" : "every check held");
    free(slots);
    return failures ? 1 : 0;
}
