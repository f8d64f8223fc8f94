/* Shared helpers for the cmocka test suites: a logger that records what
   mguard said, and an allocator that counts bytes and can fail on demand. */
#ifndef MGUARD_TESTS_COMMON_H
#define MGUARD_TESTS_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <cmocka.h>
#include "mguard.h"
#include "introspect.h"

/* ---- logger ------------------------------------------------------------ */
typedef struct test_log {
    int count;
    int warnings, errors;
    mguard_log_code code;   /* the last line's */
    char last[512];
} test_log;

static inline void test_log_fn(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    test_log *l = (test_log *)user;
    l->count++;
    l->code = code;
    if (level == MGUARD_LOG_WARN) l->warnings++;
    if (level == MGUARD_LOG_ERROR) l->errors++;
    snprintf(l->last, sizeof l->last, "%s", msg);
}

/* ---- allocator --------------------------------------------------------- */
/* Each block carries a header with its size so live bytes can be counted.
   fail_at = N makes the Nth allocation (1-based, counting every
   realloc_fn call) fail; 0 never fails. */
typedef struct test_alloc {
    long calls;
    long fail_at;
    long failures;
    long live_blocks;
    long long live_bytes, peak_bytes;
} test_alloc;

typedef union test_hdr { size_t size; long double align_; void *p_; } test_hdr;

static inline void *fa_realloc(void *p, size_t n, void *user)
{
    test_alloc *a = (test_alloc *)user;
    test_hdr *h = p ? (test_hdr *)p - 1 : NULL;
    size_t old = h ? h->size : 0;
    test_hdr *nh;
    a->calls++;
    if (a->fail_at && a->calls == a->fail_at) {
        a->failures++;
        return NULL;
    }
    nh = (test_hdr *)realloc(h, sizeof *nh + n);
    if (!nh) return NULL;
    nh->size = n;
    if (!p) a->live_blocks++;
    a->live_bytes += (long long)n - (long long)old;
    if (a->live_bytes > a->peak_bytes) a->peak_bytes = a->live_bytes;
    return nh + 1;
}

static inline void fa_free(void *p, void *user)
{
    test_alloc *a = (test_alloc *)user;
    test_hdr *h;
    if (!p) return;
    h = (test_hdr *)p - 1;
    a->live_blocks--;
    a->live_bytes -= (long long)h->size;
    memset(p, 0xA5, h->size);   /* a read after the free sees garbage, not the old fields */
    free(h);
}

/* d allocating through al (NULL: the default). */
static inline void test_wire_alloc(mguard_ctx_desc *d, test_alloc *al)
{
    if (!al) return;
    memset(al, 0, sizeof *al);
    d->allocator.realloc_fn = fa_realloc;
    d->allocator.free_fn = fa_free;
    d->allocator.user = al;
}

/* A context wired to both. */
static inline mguard_ctx *test_ctx(test_log *log, test_alloc *alloc)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    if (log) {
        memset(log, 0, sizeof *log);
        d.logger.func = test_log_fn;
        d.logger.user = log;
    } else {
        d.quiet = true;
    }
    test_wire_alloc(&d, alloc);
    return mguard_ctx_create(&d);
}

/* ---- describe hook ------------------------------------------------------ */
/* A describe hook naming the objects of its list (others: left to their
   address); it counts its calls, and at its first call runs then(arg) once
   (a hook that destroys a handle). */
typedef struct test_namer {
    const void *objs[4];
    const char *names[4];
    int n, calls;
    void (*then)(void *arg);
    void *arg;
} test_namer;
static inline void test_name_fn(const void *obj, char *buf, size_t size, void *user)
{
    test_namer *nm = (test_namer *)user;
    void (*then)(void *) = nm->then;
    int i;
    nm->calls++;
    for (i = 0; i < nm->n; i++)
        if (nm->objs[i] == obj) snprintf(buf, size, "%s", nm->names[i]);
    nm->then = NULL;
    if (then) then(nm->arg);
}
static inline void test_namer_add(test_namer *nm, const void *obj, const char *name)
{
    nm->objs[nm->n] = obj;
    nm->names[nm->n++] = name;
}
/* A context logging to log, naming objects with nm (strict: strict_generations),
   allocating through al (NULL: the default). */
static inline mguard_ctx *test_named_ctx(test_log *log, test_namer *nm, bool strict, test_alloc *al)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    memset(log, 0, sizeof *log);
    d.logger.func = test_log_fn;
    d.logger.user = log;
    d.describe.func = test_name_fn;
    d.describe.user = nm;
    d.strict_generations = strict;
    test_wire_alloc(&d, al);
    return mguard_ctx_create(&d);
}

/* The end of a context made by test_ctx: it checks sound, is destroyed,
   and leaves no block of its allocator (al, when it had one). */
static inline void test_ctx_finish(mguard_ctx *ctx, const test_alloc *al)
{
    assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK);
    mguard_ctx_destroy(ctx);
    if (!al) return;
    assert_int_equal(al->live_blocks, 0);
    assert_int_equal(al->live_bytes, 0);
}

/* A value destructor that counts calls and records the values it saw. */
typedef struct dtor_log {
    int calls;
    long seen[64];
} dtor_log;

static inline void dtor_count_long(void *value, void *user)
{
    dtor_log *d = (dtor_log *)user;
    long v;
    memcpy(&v, value, sizeof v);
    if (d->calls < 64) d->seen[d->calls] = v;
    d->calls++;
}

/* A table of long values, its destructor counting into dl (none when dl
   is NULL). */
static inline mguard_weak *long_table(mguard_ctx *ctx, dtor_log *dl)
{
    mguard_weak_desc d;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);
    d.value_dtor = dl ? dtor_count_long : NULL;
    d.user = dl;
    return mguard_weak_create(ctx, &d);
}

/* A watcher that does nothing. */
static inline void inval_nop(void *guard, const void *obj, const char *attr, void *user)
{
    (void)guard; (void)obj; (void)attr; (void)user;
}

/* A compute's key tuple, read back with mguard_cache_job_key: its length. */
static inline size_t job_keys(const mguard_cache_job *job, const void *keys[MGUARD_CACHE_MAX_KEYS])
{
    size_t n = 0;
    while (n < MGUARD_CACHE_MAX_KEYS && (keys[n] = mguard_cache_job_key(job, n)) != NULL) n++;
    return n;
}

#define assert_ctx_ok(ctx) assert_int_equal(mguard_ctx_check(ctx), MGUARD_OK)

/* Exactly one line was logged since the last check, at the level whose
   counter is level_count, with the code want; the log is then cleared for
   the next check. */
#define EXPECT_LOG(log, level_count, want) do { \
        assert_int_equal((log).count, 1); \
        assert_int_equal((level_count), 1); \
        assert_int_equal((log).code, (want)); \
        memset(&(log), 0, sizeof (log)); \
    } while (0)
/* The same, for a line whose words are the contract (a cache's reasons, the
   describe hook's names): it also reads as the printf-style rest. */
#define EXPECT_LOG_TEXT(log, level_count, want, ...) do { \
        char expect_buf_[512]; \
        snprintf(expect_buf_, sizeof expect_buf_, __VA_ARGS__); \
        assert_string_equal((log).last, expect_buf_); \
        EXPECT_LOG(log, level_count, want); \
    } while (0)
#define EXPECT_NO_LOG(log) assert_int_equal((log).count, 0)

#endif
