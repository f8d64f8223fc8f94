/* mguard.h - v0.1.0 - weak tables, weak refs and invalidation for C - MIT or public domain

   mguard tells a program exactly when work it cached against live objects
   goes stale: the object was mutated (its watchers are invalidated), the
   object died (every weak table keyed by it drops the entry and destroys the
   value; weak refs read NULL), or the object is younger than a point in time
   (generation tags). The semantics follow PyTorch Dynamo's
   ExactWeakKeyDictionary, MutationTracker and GenerationTracker; C has no
   garbage collector, so the program tells mguard when an object dies by
   calling mguard_on_destroy() from the object's own destructor.

   USAGE
     In exactly ONE C or C++ file:
        #define STB_DS_IMPLEMENTATION   // omit if stb_ds is implemented elsewhere
        #define MGUARD_IMPLEMENTATION   //   or you link Debian's -lstb
        #include "mguard.h"
     Everywhere else just #include "mguard.h". The API part includes only
     standard headers; stb_ds.h (Debian libstb-dev, `pkg-config --cflags stb`)
     is needed by the implementation file only.

   TABLE OF CONTENTS
     1. context and status codes     mguard_ctx_create, mguard_status_str, ...
     2. object lifetimes             mguard_on_destroy
     3. weak key tables              mguard_weak_create, _set, _get, _remove, ...
     4. weak refs                    mguard_ref_make, mguard_ref_get
     5. mutation trackers            mguard_watch, mguard_on_mutation, ...
     6. generation tags              mguard_gen_tag, mguard_gen_advance, ...

   COMPILE-TIME OPTIONS
     #define MGUARD_IMPLEMENTATION   (one file) compile the implementation.
     #define MGUARD_STATIC           (globally or in the one file that uses it)
                                     make every function static: a private copy.
     #define MGUARD_DEBUG            (implementation file) validate handles on
                                     every call (catches use after destroy).
     #define MGUARD_ASSERT(x)        (implementation file) internal assertions;
                                     default assert() from <assert.h>.
     stb_ds's own options (STBDS_NO_SHORT_NAMES, STBDS_REALLOC/STBDS_FREE) are
     honoured: mguard only uses the stbds_-prefixed names.

   LIFETIME CONTRACT (the whole library rests on it)
     - Call mguard_on_destroy(ctx, obj) from the destructor of every object you
       used as a key, a watched object, a guard, a ref target or a tagged object,
       before its memory is reused. Afterwards nothing in ctx refers to obj.
     - Every stored value is destroyed exactly once: on overwrite, remove,
       clear, key death or table destroy.
     - Every event runs in two phases: first every structure is updated (the
       dead object is gone from every table, every ref reads NULL), then the
       callbacks run. A callback may call any mguard function on the same
       context, including destroying other objects or tables.
     - A reused address never revives an old entry, ref, watcher or tag: each
       object mguard knows carries a serial number that is never reused.

   THREADS
     A context is not thread-safe: use one context per thread, or hold your
     own lock around every call on a shared context. Different contexts may be
     used on different threads at the same time (stb_ds's global hash seed is
     never written by mguard).

   MEMORY
     Every allocation mguard makes goes through the allocator in
     mguard_ctx_desc; a failure returns MGUARD_ENOMEM and leaves every
     structure as it was. mguard does not use stb_ds's allocating macros
     (stb_ds v0.67 does not check what its realloc returns: on failure it
     dereferences NULL), so that never happens inside mguard. If your own
     code uses stb_ds and wants the same allocator, define
     STBDS_REALLOC(c,p,s) and STBDS_FREE(c,p) before EVERY include of
     stb_ds.h (see docs/install.md and docs/guide.md, "Memory").

   See README.md and docs/ for the guide, the API reference and the design.
   License: MIT or public domain (Unlicense), at the end of this file.
*/
#ifndef MGUARD_H
#define MGUARD_H

#define MGUARD_VERSION_MAJOR 0
#define MGUARD_VERSION_MINOR 1
#define MGUARD_VERSION_PATCH 0
#define MGUARD_VERSION_STRING "0.1.0"

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef MGUARD_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define MGUARDDEF static __attribute__((unused))
#else
#define MGUARDDEF static
#endif
#else
#define MGUARDDEF extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ==== 1. context and status codes ======================================= */

typedef enum mguard_status {
    MGUARD_OK = 0,        /* success */
    MGUARD_NOT_FOUND,     /* no such key, watcher, attribute or entry */
    MGUARD_EINVAL,        /* NULL or foreign handle, NULL key, misuse */
    MGUARD_ENOMEM,        /* the allocator failed; nothing was changed */
    MGUARD_EEXIST,        /* already present; nothing was changed */
    MGUARD_DELETED        /* the attribute has a pending deletion (ledger) */
} mguard_status;

typedef enum mguard_log_level {
    MGUARD_LOG_ERROR = 1, /* an operation could not be done as asked */
    MGUARD_LOG_WARN = 2,  /* misuse that mguard survived */
    MGUARD_LOG_INFO = 3
} mguard_log_level;

typedef struct mguard_ctx mguard_ctx;

/* realloc/free style allocator. realloc_fn(NULL, n) allocates; it returns
   NULL on failure (and must leave the old block valid). Both or neither. */
typedef struct mguard_allocator {
    void *(*realloc_fn)(void *ptr, size_t size, void *user);
    void (*free_fn)(void *ptr, void *user);
    void *user;
} mguard_allocator;

/* Receives warnings about misuse and errors. msg is a complete line without
   the newline, valid only during the call. Default: stderr. */
typedef struct mguard_logger {
    void (*func)(mguard_log_level level, const char *msg, void *user);
    void *user;
} mguard_logger;

/* Zero-initialise and set what you need; zero means default. */
typedef struct mguard_ctx_desc {
    mguard_allocator allocator; /* default: realloc/free */
    mguard_logger logger;       /* default: print warnings and errors to stderr */
    bool quiet;                 /* true: no default stderr logger */
} mguard_ctx_desc;

/* Create a context (NULL desc = defaults). NULL on allocation failure or an
   allocator with only one of its two functions. Cost: O(1). */
MGUARDDEF mguard_ctx *mguard_ctx_create(const mguard_ctx_desc *desc);
/* Destroy ctx and everything created from it (tables, ...); every stored
   value is destroyed. NULL is a no-op. Calling it from inside one of ctx's
   own callbacks is refused with a log message. Cost: O(everything). */
MGUARDDEF void mguard_ctx_destroy(mguard_ctx *ctx);
/* A static string naming the status ("MGUARD_OK", ...); "unknown status" for
   values outside the enum. */
MGUARDDEF const char *mguard_status_str(mguard_status status);
/* Validate every internal invariant of ctx (for tests and debugging). OK, or
   EINVAL with a log line naming the first broken invariant. Cost: O(all). */
MGUARDDEF mguard_status mguard_ctx_check(mguard_ctx *ctx);
/* Number of objects ctx currently knows about (keys, watched, guards, ref
   targets, tagged). 0 for NULL. Cost: O(1). */
MGUARDDEF size_t mguard_ctx_object_count(const mguard_ctx *ctx);

/* ==== 2. object lifetimes =============================================== */

/* The destructor hook: call it from obj's destructor. Removes obj from every
   weak table (their value destructors run), makes refs to obj read NULL,
   fires obj's watchers once with attr == NULL and forgets its tracker,
   generation tag and dynamic-class mark. An object mguard never saw (or
   already forgot: a second call) is a cheap no-op. NULL ctx or obj: no-op
   with a log line for a NULL ctx. Callbacks run after all structures are
   updated: first obj's watchers in registration order, then the value
   destructors in the order obj entered those tables.
   Cost: one hash lookup + O(tables holding obj + watchers of obj). */
MGUARDDEF void mguard_on_destroy(mguard_ctx *ctx, const void *obj);
/* The context's own copy of the string s: equal strings give the same
   pointer, valid until ctx is destroyed (callers may pass temporaries).
   NULL for NULL ctx/s or on allocation failure. Cost: one hash of s. */
MGUARDDEF const char *mguard_intern(mguard_ctx *ctx, const char *s);
/* true when ctx knows obj (see mguard_ctx_object_count). Cost: one lookup. */
MGUARDDEF bool mguard_is_known(const mguard_ctx *ctx, const void *obj);

/* ==== 3. weak key tables ================================================ */

typedef struct mguard_weak mguard_weak;

/* Destroys one stored value. value points to a copy of the value's bytes
   that is valid only during the call. */
typedef void (*mguard_value_dtor)(void *value, void *user);
/* Told that an entry is leaving because its key died (before the value's
   destructor runs). key must not be used as a key again. */
typedef void (*mguard_key_death_fn)(const void *key, void *value, void *user);

typedef struct mguard_weak_desc {
    size_t value_size;              /* bytes per value, > 0 (required) */
    mguard_value_dtor value_dtor;   /* optional */
    mguard_key_death_fn on_key_death; /* optional */
    void *user;                     /* passed to both callbacks */
} mguard_weak_desc;

/* Create an identity-keyed table whose values are value_size bytes stored
   inline (no allocation per entry). NULL (and a log line) for a NULL ctx or
   desc, value_size 0, or allocation failure. Cost: O(1). */
MGUARDDEF mguard_weak *mguard_weak_create(mguard_ctx *ctx, const mguard_weak_desc *desc);
/* Destroy t, destroying every value (in insertion order). NULL is a no-op;
   destroying a table from inside its own destroy/clear is refused with a
   log line. Cost: O(entries). */
MGUARDDEF void mguard_weak_destroy(mguard_weak *t);
/* Copy value_size bytes from value under key (compared by address only).
   An overwritten value is destroyed after the new one is stored.
   EINVAL: NULL t/key/value or t being destroyed. ENOMEM: nothing changed.
   Cost: O(1) amortized: one table lookup (+ one object-registry lookup and
   insert for a new key). */
MGUARDDEF mguard_status mguard_weak_set(mguard_weak *t, const void *key, const void *value);
/* Pointer to the value stored under key, NULL when absent (or NULL t/key).
   Valid until the next change to t (set, remove, clear, key death).
   Cost: one hash lookup; never writes. */
MGUARDDEF void *mguard_weak_get(const mguard_weak *t, const void *key);
/* true when key is in t. Cost: one hash lookup. */
MGUARDDEF bool mguard_weak_contains(const mguard_weak *t, const void *key);
/* Remove key's entry and destroy its value. NOT_FOUND when absent, EINVAL
   for NULL t/key. Cost: O(1) + O(tables holding key). */
MGUARDDEF mguard_status mguard_weak_remove(mguard_weak *t, const void *key);
/* Number of live entries. 0 for NULL. Cost: O(1). */
MGUARDDEF size_t mguard_weak_count(const mguard_weak *t);
/* Remove every entry present when the call starts, in insertion order, each
   value destroyed after its entry is gone (entries added by the destructors
   stay). NULL is a no-op. Cost: O(entries). */
MGUARDDEF void mguard_weak_clear(mguard_weak *t);

/* Iteration in insertion order:
       mguard_weak_iter it = mguard_weak_iterate(t);
       while (mguard_weak_next(&it)) use(it.key, it.value);
   Any entry may be removed during the walk (including by callbacks): a
   removed entry is never visited, no live entry is skipped or repeated.
   Entries added during the walk are visited (they come last). it.value is
   valid until the next change to t. Do not use the iterator after t is
   destroyed. */
typedef struct mguard_weak_iter {
    const void *key;    /* current entry's key */
    void *value;        /* current entry's value */
    /* private */
    mguard_weak *t_;
    size_t pos_;
    uint64_t seq_;
    uint64_t epoch_;
} mguard_weak_iter;
MGUARDDEF mguard_weak_iter mguard_weak_iterate(mguard_weak *t);
MGUARDDEF bool mguard_weak_next(mguard_weak_iter *it);

/* Typed helpers for the common value types. */
#define MGUARD_WEAK_GET(t, key, type) ((type *)mguard_weak_get((t), (key)))
/* Pointer values: a table created with value_size = sizeof(void *). */
MGUARDDEF mguard_status mguard_weak_set_ptr(mguard_weak *t, const void *key, void *value);
/* The stored pointer, or NULL when absent. */
MGUARDDEF void *mguard_weak_get_ptr(const mguard_weak *t, const void *key);

/* ==== 4. weak refs ====================================================== */

/* A weak ref is a plain value: copy it, store it anywhere, no destroy. */
typedef struct mguard_ref {
    const void *obj_;
    uint64_t serial_;   /* 0: the null ref */
} mguard_ref;

/* A ref to obj. The null ref (reads NULL) for a NULL ctx/obj or on
   allocation failure (logged). Cost: one lookup (+ insert if obj is new). */
MGUARDDEF mguard_ref mguard_ref_make(mguard_ctx *ctx, const void *obj);
/* The object, or NULL once mguard_on_destroy(obj) was called, even when a
   new object now lives at the same address. A ref from another context
   reads NULL (and logs). Cost: one lookup. */
MGUARDDEF void *mguard_ref_get(const mguard_ctx *ctx, mguard_ref ref);
/* true for the null ref. */
MGUARDDEF bool mguard_ref_is_null(mguard_ref ref);

/* ==== 5. mutation trackers ============================================== */

/* Called once when the watched obj is mutated (attr as given to
   mguard_on_mutation) or destroyed (attr NULL). The watcher is already
   removed when this runs: call mguard_watch again to keep watching. */
typedef void (*mguard_invalidate_fn)(void *guard, const void *obj, const char *attr, void *user);

/* Register guard (held weakly: a guard passed to mguard_on_destroy is never
   called) to be invalidated on obj's next mutation or death. The first watch
   creates obj's tracker, which lives until obj is destroyed. A watcher
   added during an invalidation waits for the next event. EINVAL: NULL
   ctx/obj/guard/fn. ENOMEM: nothing changed. Cost: O(1) amortized. */
MGUARDDEF mguard_status mguard_watch(mguard_ctx *ctx, const void *obj, void *guard,
                                     mguard_invalidate_fn fn, void *user);
/* Remove every watcher of guard on obj, including ones about to be called
   by an invalidation in progress. NOT_FOUND when there was none. */
MGUARDDEF mguard_status mguard_unwatch(mguard_ctx *ctx, const void *obj, const void *guard);
/* Tell mguard that obj was mutated. If obj has a tracker: its mutation count
   goes up by one and every watcher registered so far fires once, in
   registration order, and is dropped. An object nobody watched costs one
   lookup and nothing else. NULL ctx/obj: no-op (logged for NULL ctx). */
MGUARDDEF void mguard_on_mutation(mguard_ctx *ctx, const void *obj, const char *attr);
/* Mutations counted by obj's tracker; 0 for an object never watched. */
MGUARDDEF uint64_t mguard_mutation_count(const mguard_ctx *ctx, const void *obj);
/* Watchers of obj whose guard is alive. Cost: O(watchers). */
MGUARDDEF size_t mguard_watcher_count(const mguard_ctx *ctx, const void *obj);

/* Assign a struct field, then notify: the C spelling of the reference's
   patched __setattr__. (The reference notifies before the write; in C a
   watcher may destroy the object, so the write comes first.) */
#define MGUARD_SET_FIELD(ctx, objptr, field, value) \
    do { (objptr)->field = (value); mguard_on_mutation((ctx), (objptr), #field); } while (0)

/* ==== 6. generation tags ================================================ */

/* Tag obj with the current generation (call it from obj's constructor).
   EINVAL for NULL ctx/obj, ENOMEM (nothing changed). Cost: one lookup. */
MGUARDDEF mguard_status mguard_gen_tag(mguard_ctx *ctx, const void *obj);
/* obj's generation, -1 when untagged. */
MGUARDDEF long mguard_gen_get(const mguard_ctx *ctx, const void *obj);
/* true when obj was tagged in the current generation. */
MGUARDDEF bool mguard_gen_check(const mguard_ctx *ctx, const void *obj);
/* The current generation (starts at 0); -1 for NULL ctx. */
MGUARDDEF long mguard_gen_current(const mguard_ctx *ctx);
/* generation += 1; returns the new value (-1 for NULL ctx). */
MGUARDDEF long mguard_gen_advance(mguard_ctx *ctx);
/* Mark a class (any address standing for a type) dynamic. */
MGUARDDEF mguard_status mguard_gen_mark_class_dynamic(mguard_ctx *ctx, const void *cls);
MGUARDDEF bool mguard_gen_is_class_dynamic(const mguard_ctx *ctx, const void *cls);
/* cls marked dynamic, or obj tagged in the current generation. */
MGUARDDEF bool mguard_gen_is_dynamic(const mguard_ctx *ctx, const void *obj, const void *cls);
/* Generation back to 0; every tag and class mark gone. Cost: O(objects). */
MGUARDDEF void mguard_gen_clear(mguard_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* MGUARD_H */

/* ======================================================================= */
/*                            IMPLEMENTATION                               */
/* ======================================================================= */
#ifdef MGUARD_IMPLEMENTATION
#ifndef MGUARD__IMPLEMENTED
#define MGUARD__IMPLEMENTED

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>

#ifndef MGUARD_ASSERT
#include <assert.h>
#define MGUARD_ASSERT(x) assert(x)
#endif

/* stb_ds: included once, its own warnings silenced here only. */
#ifndef INCLUDE_STB_DS_H
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include "stb_ds.h"
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define MGUARD__MAGIC_CTX  0x6d677478u  /* "mgtx" */
#define MGUARD__MAGIC_WEAK 0x6d677774u  /* "mgwt" */
#define MGUARD__DEAD       0xdeadbeefu

/* ---- 1. context -------------------------------------------------------- */

/* The pointer-keyed hash index used by every table and by the object
   registry. Open addressing with linear probing over 8-byte slots {hash
   fragment, dense index + 1}; 0 marks an empty slot. The entries themselves
   live in a separate dense array (the owner's), so the index can be rebuilt
   or shifted without moving entries, and the dense array keeps insertion
   order. Load factor <= 1/2; deletion by backward shift (no tombstones in
   the index). A lookup reads one or two slots and one entry, and never
   writes. */
typedef struct mguard__slot { uint32_t hash; uint32_t idx; } mguard__slot;
typedef struct mguard__index {
    mguard__slot *slots;
    size_t mask;       /* capacity - 1; slots == NULL when capacity is 0 */
    size_t used;
} mguard__index;

/* What the registry knows about one object. Invariants: key != NULL for a
   live record (free records are chained through next_free); the record
   stays while anything refers to it (a table entry, a tracker, a tag or a
   class mark) or while its serial was handed out (PINNED: a ref or a
   guard), and goes only through mguard_on_destroy or when it becomes
   empty and unpinned. tables[0..ntables) lists, in the order obj entered
   them, the weak tables holding obj as a key (first two inline, like
   objc4's inline referrers). */
enum {
    MGUARD__F_PINNED = 1u,
    MGUARD__F_TRACKER = 2u,
    MGUARD__F_TAGGED = 4u,
    MGUARD__F_CLASS_DYN = 8u
};
typedef struct mguard__watcher {
    void *guard;
    uint64_t guard_serial;
    mguard_invalidate_fn fn;     /* NULL: cancelled */
    void *user;
} mguard__watcher;
typedef struct mguard__obj {
    const void *key;
    uint64_t serial;
    uint32_t flags;
    uint32_t ntables, captables;
    uint32_t nwatch, capwatch;
    uint32_t next_free;          /* free list link (index + 1) */
    long gen;
    uint64_t mutations;
    mguard_weak **more;          /* heap block once captables > 2, else NULL
                                    (records move: no pointers into them) */
    mguard_weak *inline_tables[2];
    mguard__watcher *watch;
} mguard__obj;

/* An invalidation in progress: the watchers it swapped out of a tracker,
   linked on the C stack so mguard_unwatch can cancel pending ones. */
typedef struct mguard__dying {
    const void *obj;
    struct mguard__dying *next;
} mguard__dying;
typedef struct mguard__firing {
    const void *obj;
    mguard__watcher *w;
    size_t n;
    struct mguard__firing *next;
} mguard__firing;

struct mguard_ctx {
    uint32_t magic;
    uint32_t tag;                /* high 16 bits of every serial */
    mguard_allocator alloc;
    mguard_logger log;
    mguard__index reg_index;     /* object address -> record */
    mguard__obj *objs;           /* dense records, with free list */
    uint32_t nobjs, capobjs, live_objs, free_head;
    uint64_t next_serial;
    long generation;
    mguard_weak *tables;         /* every live table, doubly linked */
    mguard__firing *firing;      /* invalidations in progress (C stack) */
    struct mguard__dying *dying; /* deaths in phase 2 (C stack) */
    int in_callback;             /* user callbacks running now */
    int destroying;
    /* interned strings (for later sections) */
    mguard__index str_index;
    char **strs;
    uint32_t nstrs, capstrs;
};

static void *mguard__default_realloc(void *p, size_t n, void *user) { (void)user; return realloc(p, n); }
static void mguard__default_free(void *p, void *user) { (void)user; free(p); }
static void mguard__default_log(mguard_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level <= MGUARD_LOG_WARN)
        fprintf(stderr, "mguard %s: %s\n", level == MGUARD_LOG_ERROR ? "error" : "warning", msg);
}

static void *mguard__realloc(const mguard_ctx *ctx, void *p, size_t n)
{
    return ctx->alloc.realloc_fn(p, n, ctx->alloc.user);
}
static void *mguard__alloc(const mguard_ctx *ctx, size_t n) { return mguard__realloc(ctx, NULL, n); }
static void mguard__free(const mguard_ctx *ctx, void *p)
{
    if (p) ctx->alloc.free_fn(p, ctx->alloc.user);
}

static void mguard__logf(const mguard_ctx *ctx, mguard_log_level level, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    if (!ctx || !ctx->log.func) return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctx->log.func(level, buf, ctx->log.user);
}

/* Grow *arr (elem bytes each) so it holds at least need elements. On
   failure nothing changes. */
static mguard_status mguard__reserve(const mguard_ctx *ctx, void **arr, uint32_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;
    if (need <= *cap) return MGUARD_OK;
    if (need > 0x7fffffffu) return MGUARD_ENOMEM;
    ncap = *cap ? (size_t)*cap * 2 : 4;
    while (ncap < need) ncap *= 2;
    if (ncap > 0x7fffffffu) ncap = 0x7fffffffu;
    p = mguard__realloc(ctx, *arr, ncap * elem);
    if (!p) return MGUARD_ENOMEM;
    *arr = p;
    *cap = (uint32_t)ncap;
    return MGUARD_OK;
}

const char *mguard_status_str(mguard_status status)
{
    switch (status) {
    case MGUARD_OK: return "MGUARD_OK";
    case MGUARD_NOT_FOUND: return "MGUARD_NOT_FOUND";
    case MGUARD_EINVAL: return "MGUARD_EINVAL";
    case MGUARD_ENOMEM: return "MGUARD_ENOMEM";
    case MGUARD_EEXIST: return "MGUARD_EEXIST";
    case MGUARD_DELETED: return "MGUARD_DELETED";
    }
    return "unknown status";
}

/* ---- the hash index ---------------------------------------------------- */

static uint32_t mguard__hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x *= 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return (uint32_t)(x >> 16) | 1u; /* never 0: keeps the fragment meaningful */
}

/* Find key: returns dense index + 1, or 0. keyat(i) reads dense entry i's
   key at byte offset 0 with the given stride. */
static uint32_t mguard__ix_find(const mguard__index *ix, const unsigned char *dense, size_t stride,
                                const void *key, uint32_t h)
{
    size_t i;
    if (!ix->slots) return 0;
    i = h & ix->mask;
    for (;;) {
        mguard__slot s = ix->slots[i];
        if (!s.idx) return 0;
        if (s.hash == h) {
            const void *k;
            memcpy(&k, dense + (size_t)(s.idx - 1) * stride, sizeof k);
            if (k == key) return s.idx;
        }
        i = (i + 1) & ix->mask;
    }
}

/* Insert a slot known to be absent. Capacity must already allow it. */
static void mguard__ix_put(mguard__index *ix, uint32_t h, uint32_t idx1)
{
    size_t i = h & ix->mask;
    while (ix->slots[i].idx) i = (i + 1) & ix->mask;
    ix->slots[i].hash = h;
    ix->slots[i].idx = idx1;
    ix->used++;
}

/* Remove the slot holding dense index idx1 (hash h): backward shift. */
static void mguard__ix_del(mguard__index *ix, uint32_t h, uint32_t idx1)
{
    size_t i = h & ix->mask, j;
    while (ix->slots[i].idx != idx1) i = (i + 1) & ix->mask;
    j = i;
    for (;;) {
        size_t home;
        j = (j + 1) & ix->mask;
        if (!ix->slots[j].idx) break;
        home = ix->slots[j].hash & ix->mask;
        /* move j back to i unless its home lies cyclically in (i, j] */
        if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
            ix->slots[i] = ix->slots[j];
            i = j;
        }
    }
    ix->slots[i].hash = 0;
    ix->slots[i].idx = 0;
    ix->used--;
}

/* Make room for `need` keys at load <= 1/2, rehashing the slots (the dense
   entries do not move). On failure nothing changes. */
static mguard_status mguard__ix_reserve(const mguard_ctx *ctx, mguard__index *ix, size_t need)
{
    size_t cap = ix->slots ? ix->mask + 1 : 0, ncap, i;
    mguard__slot *ns;
    if (need * 2 <= cap) return MGUARD_OK;
    ncap = cap ? cap : 8;
    while (need * 2 > ncap) ncap *= 2;
    if (ncap > ((size_t)1 << 31)) return MGUARD_ENOMEM;
    ns = (mguard__slot *)mguard__alloc(ctx, ncap * sizeof *ns);
    if (!ns) return MGUARD_ENOMEM;
    memset(ns, 0, ncap * sizeof *ns);
    for (i = 0; i < cap; i++) {
        if (ix->slots[i].idx) {
            size_t k = ix->slots[i].hash & (ncap - 1);
            while (ns[k].idx) k = (k + 1) & (ncap - 1);
            ns[k] = ix->slots[i];
        }
    }
    mguard__free(ctx, ix->slots);
    ix->slots = ns;
    ix->mask = ncap - 1;
    return MGUARD_OK;
}

static void mguard__ix_free(const mguard_ctx *ctx, mguard__index *ix)
{
    mguard__free(ctx, ix->slots);
    ix->slots = NULL;
    ix->mask = 0;
    ix->used = 0;
}

/* ---- 2. object registry ------------------------------------------------ */

static uint32_t mguard__reg_find(const mguard_ctx *ctx, const void *obj)
{
    return mguard__ix_find(&ctx->reg_index, (const unsigned char *)ctx->objs, sizeof(mguard__obj),
                           obj, mguard__hash_ptr(obj));
}

/* Record index + 1 for obj, creating the record if needed (call after
   mguard__reg_reserve succeeded when obj may be new). */
static uint32_t mguard__reg_ensure(mguard_ctx *ctx, const void *obj)
{
    uint32_t h = mguard__hash_ptr(obj);
    uint32_t r = mguard__ix_find(&ctx->reg_index, (const unsigned char *)ctx->objs, sizeof(mguard__obj), obj, h);
    mguard__obj *o;
    if (r) return r;
    if (ctx->free_head) {
        r = ctx->free_head;
        ctx->free_head = ctx->objs[r - 1].next_free;
    } else {
        r = ++ctx->nobjs;
    }
    o = &ctx->objs[r - 1];
    memset(o, 0, sizeof *o);
    o->key = obj;
    o->serial = ((uint64_t)ctx->tag << 48) | (++ctx->next_serial & 0xffffffffffffull);
    o->gen = -1;
    o->captables = 2;
    ctx->live_objs++;
    mguard__ix_put(&ctx->reg_index, h, r);
    return r;
}

/* Drop record r from the registry (the caller has detached everything). */
static void mguard__reg_drop(mguard_ctx *ctx, uint32_t r)
{
    mguard__obj *o = &ctx->objs[r - 1];
    mguard__ix_del(&ctx->reg_index, mguard__hash_ptr(o->key), r);
    mguard__free(ctx, o->more);
    mguard__free(ctx, o->watch);
    memset(o, 0, sizeof *o);
    o->next_free = ctx->free_head;
    ctx->free_head = r;
    ctx->live_objs--;
}

#define MGUARD__TABLES(o) ((o)->more ? (o)->more : (o)->inline_tables)

static bool mguard__obj_empty(const mguard__obj *o)
{
    return o->ntables == 0 && (o->flags & (MGUARD__F_PINNED | MGUARD__F_TRACKER | MGUARD__F_TAGGED | MGUARD__F_CLASS_DYN)) == 0;
}

static void mguard__reg_drop_if_empty(mguard_ctx *ctx, uint32_t r)
{
    if (mguard__obj_empty(&ctx->objs[r - 1])) mguard__reg_drop(ctx, r);
}

size_t mguard_ctx_object_count(const mguard_ctx *ctx)
{
    return (ctx && ctx->magic == MGUARD__MAGIC_CTX) ? ctx->live_objs : 0;
}

bool mguard_is_known(const mguard_ctx *ctx, const void *obj)
{
    return ctx && ctx->magic == MGUARD__MAGIC_CTX && obj && mguard__reg_find(ctx, obj) != 0;
}

/* ---- interned strings (shared by the later sections) --------------------
   Content-compared strings stored once per context and freed with it, so a
   caller may pass temporaries. Hashing is stb_ds's string hash. */
static uint32_t mguard__hash_str(const char *s)
{
    size_t h = stbds_hash_string((char *)s, 0x5bd1e995u);
    return (uint32_t)(h ^ (h >> 32)) | 1u;
}

/* The context's copy of s, NULL on allocation failure. */
static const char *mguard__intern(mguard_ctx *ctx, const char *s)
{
    uint32_t h = mguard__hash_str(s);
    size_t i, len;
    char *copy;
    if (ctx->str_index.slots) {
        for (i = h & ctx->str_index.mask; ctx->str_index.slots[i].idx; i = (i + 1) & ctx->str_index.mask) {
            mguard__slot sl = ctx->str_index.slots[i];
            if (sl.hash == h && strcmp(ctx->strs[sl.idx - 1], s) == 0) return ctx->strs[sl.idx - 1];
        }
    }
    if (mguard__ix_reserve(ctx, &ctx->str_index, (size_t)ctx->nstrs + 1)) return NULL;
    if (mguard__reserve(ctx, (void **)&ctx->strs, &ctx->capstrs, (size_t)ctx->nstrs + 1, sizeof(char *))) return NULL;
    len = strlen(s);
    copy = (char *)mguard__alloc(ctx, len + 1);
    if (!copy) return NULL;
    memcpy(copy, s, len + 1);
    ctx->strs[ctx->nstrs++] = copy;
    mguard__ix_put(&ctx->str_index, h, ctx->nstrs);
    return copy;
}

const char *mguard_intern(mguard_ctx *ctx, const char *s)
{
    const char *r;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !s) return NULL;
    r = mguard__intern(ctx, s);
    if (!r) mguard__logf(ctx, MGUARD_LOG_ERROR, "mguard_intern: out of memory");
    return r;
}

/* ---- 3. weak key tables ------------------------------------------------ */

/* A table: the hash index over a dense array of entries, each
   {key, seq, value bytes}, in insertion order. A removed entry leaves a
   tombstone (key NULL) so positions never move under an iterator; the dense
   array is compacted (order kept, epoch bumped) only when it is full and at
   least a quarter tombstones, and never during a death. seq numbers grow
   with insertion, so an iterator that sees the epoch change finds its place
   again by binary search. Invariants: live == index.used == number of
   non-NULL keys in dense[0..len); each live key's registry record lists
   this table exactly once. */
typedef struct mguard__entry_hdr { const void *key; uint64_t seq; } mguard__entry_hdr;

struct mguard_weak {
    uint32_t magic;
    mguard_ctx *ctx;
    mguard_weak *prev, *next;     /* ctx's table list */
    size_t value_size, stride, voff;
    mguard_value_dtor dtor;
    mguard_key_death_fn on_death;
    void *user;
    mguard__index index;
    unsigned char *dense;
    uint32_t len, cap, live;
    uint64_t next_seq, epoch;
    int busy;         /* drains (clear/destroy) walking the table now */
    int pinned;       /* out-of-memory destructors running on entry bytes */
    int destroying;   /* destroy requested: new keys refused */
    int zombie;       /* destroyed while pinned: freed at unpin */
};

#define MGUARD__ENTRY(t, i) ((t)->dense + (size_t)(i) * (t)->stride)

static bool mguard__weak_ok(const mguard_weak *t)
{
    return t && t->magic == MGUARD__MAGIC_WEAK;
}

mguard_weak *mguard_weak_create(mguard_ctx *ctx, const mguard_weak_desc *desc)
{
    mguard_weak *t;
    size_t vs;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX) return NULL;
    if (!desc || desc->value_size == 0 || desc->value_size > ((size_t)1 << 24)) {
        mguard__logf(ctx, MGUARD_LOG_WARN, "mguard_weak_create: %s", !desc ? "NULL desc" : "value_size must be 1..16M bytes");
        return NULL;
    }
    t = (mguard_weak *)mguard__alloc(ctx, sizeof *t);
    if (!t) {
        mguard__logf(ctx, MGUARD_LOG_ERROR, "mguard_weak_create: out of memory");
        return NULL;
    }
    memset(t, 0, sizeof *t);
    t->magic = MGUARD__MAGIC_WEAK;
    t->ctx = ctx;
    vs = desc->value_size;
    t->value_size = vs;
    t->voff = sizeof(mguard__entry_hdr);
    t->stride = t->voff + ((vs + 7) & ~(size_t)7);
    if (vs >= 16) t->stride = (t->stride + 15) & ~(size_t)15; /* 16-aligned values */
    t->dtor = desc->value_dtor;
    t->on_death = desc->on_key_death;
    t->user = desc->user;
    t->next = ctx->tables;
    if (ctx->tables) ctx->tables->prev = t;
    ctx->tables = t;
    return t;
}

/* Remove t from record r's table list (keeping the order). */
static void mguard__obj_unlink_table(mguard__obj *o, const mguard_weak *t)
{
    uint32_t i;
    for (i = 0; i < o->ntables; i++) {
        mguard_weak **tables = MGUARD__TABLES(o);
        if (tables[i] == t) {
            memmove(&tables[i], &tables[i + 1], (o->ntables - i - 1) * sizeof(mguard_weak *));
            o->ntables--;
            return;
        }
    }
    MGUARD_ASSERT(!"table missing from its key's record");
}

/* Detach the entry at dense position pos (index + 1 = e1): tombstone it and
   drop it from the index. Does not touch the registry. */
static void mguard__weak_detach(mguard_weak *t, uint32_t e1, uint32_t h)
{
    mguard__entry_hdr hdr;
    unsigned char *e = MGUARD__ENTRY(t, e1 - 1);
    mguard__ix_del(&t->index, h, e1);
    memcpy(&hdr, e, sizeof hdr);
    hdr.key = NULL;
    memcpy(e, &hdr, sizeof hdr);
    t->live--;
}

/* Call a value's callbacks: on_key_death first (deaths only), then the
   destructor. ctx counts callbacks in progress so that mguard_ctx_destroy
   can refuse to run inside one. */
static void mguard__call_value(mguard_ctx *ctx, mguard_value_dtor dtor, mguard_key_death_fn on_death,
                               void *user, const void *key, void *bytes)
{
    if (!dtor && !on_death) return;
    ctx->in_callback++;
    if (on_death) on_death(key, bytes, user);
    if (dtor) dtor(bytes, user);
    ctx->in_callback--;
}

static void mguard__weak_free(mguard_weak *t)
{
    mguard_ctx *ctx = t->ctx;
    mguard__ix_free(ctx, &t->index);
    mguard__free(ctx, t->dense);
    t->magic = MGUARD__DEAD;
    mguard__free(ctx, t);
}

/* Out-of-memory path: destroy a detached entry's value where it lies,
   because no copy could be made. The table is pinned meanwhile: an insert
   that would move its entries (grow or compact) fails with ENOMEM, and a
   destroy of the table during the call leaves the final free to us. */
static void mguard__destroy_in_place(mguard_weak *t, uint32_t pos, const void *key, int death)
{
    t->pinned++;
    mguard__call_value(t->ctx, t->dtor, death ? t->on_death : NULL, t->user, key, MGUARD__ENTRY(t, pos) + t->voff);
    if (--t->pinned == 0 && t->zombie) mguard__weak_free(t);
}

/* Is obj in phase 2 of its death right now? Such an object may not be
   registered again (it is about to be freed): mguard refuses. */
static bool mguard__is_dying(const mguard_ctx *ctx, const void *obj)
{
    const mguard__dying *d;
    for (d = ctx->dying; d; d = d->next)
        if (d->obj == obj) return true;
    return false;
}

/* Admit obj as a new record: refuse a dying object (EINVAL, logged),
   reserve room for n records (ENOMEM, not logged). On failure nothing
   changes. */
static mguard_status mguard__admit(mguard_ctx *ctx, const void *obj, uint32_t n, const char *fn)
{
    mguard_status st;
    if (ctx->dying && mguard__is_dying(ctx, obj)) {
        mguard__logf(ctx, MGUARD_LOG_WARN, "%s: %p is being destroyed; refused", fn, obj);
        return MGUARD_EINVAL;
    }
    st = mguard__ix_reserve(ctx, &ctx->reg_index, (size_t)ctx->live_objs + n);
    if (!st) st = mguard__reserve(ctx, (void **)&ctx->objs, &ctx->capobjs, (size_t)ctx->nobjs + n, sizeof(mguard__obj));
    return st;   /* the caller logs ENOMEM */
}

/* Make room for one more entry at the end of the dense array: compact if it
   is full and at least a quarter tombstones, else grow. */
static mguard_status mguard__weak_reserve(mguard_weak *t)
{
    mguard_ctx *ctx = t->ctx;
    mguard_status st = mguard__ix_reserve(ctx, &t->index, (size_t)t->live + 1);
    if (st) return st;
    if (t->len < t->cap) return MGUARD_OK;
    if (t->pinned) return MGUARD_ENOMEM; /* entries must not move now */
    if (t->len - t->live >= t->len / 4 + 1) {
        uint32_t i, n = 0;
        for (i = 0; i < t->len; i++) {
            const void *k;
            memcpy(&k, MGUARD__ENTRY(t, i), sizeof k);
            if (!k) continue;
            if (n != i) memcpy(MGUARD__ENTRY(t, n), MGUARD__ENTRY(t, i), t->stride);
            n++;
        }
        t->len = n;
        t->epoch++;
        memset(t->index.slots, 0, (t->index.mask + 1) * sizeof(mguard__slot));
        t->index.used = 0;
        for (i = 0; i < n; i++) {
            const void *k;
            memcpy(&k, MGUARD__ENTRY(t, i), sizeof k);
            mguard__ix_put(&t->index, mguard__hash_ptr(k), i + 1);
        }
        return MGUARD_OK;
    }
    {
        size_t ncap = t->cap ? (size_t)t->cap * 2 : 8;
        unsigned char *nd;
        if (ncap > 0x7fffffffu) return MGUARD_ENOMEM;
        nd = (unsigned char *)mguard__realloc(ctx, t->dense, ncap * t->stride);
        if (!nd) return MGUARD_ENOMEM;
        t->dense = nd;
        t->cap = (uint32_t)ncap;
    }
    return MGUARD_OK;
}

/* Reserve room in record r for one more table back-reference. */
static mguard_status mguard__obj_reserve_table(mguard_ctx *ctx, mguard__obj *o)
{
    mguard_weak **nt;
    size_t ncap;
    if (o->ntables < o->captables) return MGUARD_OK;
    ncap = (size_t)o->captables * 2;
    if (!o->more) {
        nt = (mguard_weak **)mguard__alloc(ctx, ncap * sizeof *nt);
        if (!nt) return MGUARD_ENOMEM;
        memcpy(nt, o->inline_tables, sizeof o->inline_tables);
    } else {
        nt = (mguard_weak **)mguard__realloc(ctx, o->more, ncap * sizeof *nt);
        if (!nt) return MGUARD_ENOMEM;
    }
    o->more = nt;
    o->captables = (uint32_t)ncap;
    return MGUARD_OK;
}

/* Copy for an old value destroyed after an overwrite/remove: the stack for
   small values, else the heap. */
#define MGUARD__STACK_VALUE 256

static mguard_status mguard__weak_set_impl(mguard_weak *t, const void *key, const void *value)
{
    mguard_ctx *ctx = t->ctx;
    uint32_t h = mguard__hash_ptr(key);
    uint32_t e1 = mguard__ix_find(&t->index, t->dense, t->stride, key, h);
    unsigned char *e;
    if (e1) {
        /* Overwrite: store the new bytes, then destroy the old ones. */
        e = MGUARD__ENTRY(t, e1 - 1) + t->voff;
        if (!t->dtor) {
            memmove(e, value, t->value_size);
        } else if (t->value_size <= MGUARD__STACK_VALUE) {
            unsigned char old[MGUARD__STACK_VALUE];
            memcpy(old, e, t->value_size);
            memmove(e, value, t->value_size);
            mguard__call_value(ctx, t->dtor, NULL, t->user, key, old);
        } else {
            unsigned char *old = (unsigned char *)mguard__alloc(ctx, t->value_size);
            if (!old) return MGUARD_ENOMEM;
            memcpy(old, e, t->value_size);
            memmove(e, value, t->value_size);
            mguard__call_value(ctx, t->dtor, NULL, t->user, key, old);
            mguard__free(ctx, old);
        }
        return MGUARD_OK;
    }
    {
        /* New key: reserve everything first, then insert (cannot fail). The
           value may live inside this table (a pointer from mguard_weak_get),
           so copy it before the dense array can move. */
        unsigned char small[MGUARD__STACK_VALUE];
        unsigned char *tmp = small;
        mguard__entry_hdr hdr;
        uint32_t r;
        mguard_status st;
        if (t->value_size > MGUARD__STACK_VALUE) {
            tmp = (unsigned char *)mguard__alloc(ctx, t->value_size);
            if (!tmp) return MGUARD_ENOMEM;
        }
        memcpy(tmp, value, t->value_size);
        r = mguard__reg_find(ctx, key);
        st = r ? mguard__obj_reserve_table(ctx, &ctx->objs[r - 1]) : mguard__admit(ctx, key, 1, "mguard_weak_set");
        if (!st) st = mguard__weak_reserve(t);
        if (st) {
            if (tmp != small) mguard__free(ctx, tmp);
            return st;
        }
        /* a brand-new record has inline room for two tables */
        r = mguard__reg_ensure(ctx, key);
        MGUARD__TABLES(&ctx->objs[r - 1])[ctx->objs[r - 1].ntables++] = t;
        e = MGUARD__ENTRY(t, t->len);
        hdr.key = key;
        hdr.seq = t->next_seq++;
        memcpy(e, &hdr, sizeof hdr);
        memcpy(e + t->voff, tmp, t->value_size);
        t->len++;
        t->live++;
        mguard__ix_put(&t->index, h, t->len);
        if (tmp != small) mguard__free(ctx, tmp);
        return MGUARD_OK;
    }
}

mguard_status mguard_weak_set(mguard_weak *t, const void *key, const void *value)
{
    mguard_status st;
    if (!mguard__weak_ok(t)) return MGUARD_EINVAL;
    if (!key || !value || t->destroying) {
        mguard__logf(t->ctx, MGUARD_LOG_WARN, "mguard_weak_set: %s", !key ? "NULL key" : !value ? "NULL value" : "table is being destroyed");
        return MGUARD_EINVAL;
    }
    st = mguard__weak_set_impl(t, key, value);
    if (st == MGUARD_ENOMEM) mguard__logf(t->ctx, MGUARD_LOG_ERROR, "mguard_weak_set: out of memory%s", t->pinned ? " (table pinned by an out-of-memory destructor)" : "");
    return st;
}

void *mguard_weak_get(const mguard_weak *t, const void *key)
{
    uint32_t e1;
    if (!t || !key) return NULL;
    e1 = mguard__ix_find(&t->index, t->dense, t->stride, key, mguard__hash_ptr(key));
    return e1 ? (void *)(t->dense + (size_t)(e1 - 1) * t->stride + t->voff) : NULL;
}

bool mguard_weak_contains(const mguard_weak *t, const void *key)
{
    return mguard_weak_get(t, key) != NULL;
}

size_t mguard_weak_count(const mguard_weak *t)
{
    return mguard__weak_ok(t) ? t->live : 0;
}

mguard_status mguard_weak_set_ptr(mguard_weak *t, const void *key, void *value)
{
    if (mguard__weak_ok(t) && t->value_size != sizeof(void *)) {
        mguard__logf(t->ctx, MGUARD_LOG_WARN, "mguard_weak_set_ptr: table value_size is %lu, not sizeof(void *)", (unsigned long)t->value_size);
        return MGUARD_EINVAL;
    }
    return mguard_weak_set(t, key, &value);
}

void *mguard_weak_get_ptr(const mguard_weak *t, const void *key)
{
    void *v = NULL, *p = mguard_weak_get(t, key);
    if (p && t->value_size == sizeof(void *)) memcpy(&v, p, sizeof v);
    return v;
}

/* Remove the live entry e1 of t with key `key`: detach it, unlink t from
   the key's record, then destroy the value from a copy (in place, pinned,
   if no copy can be had). Never fails. */
static void mguard__weak_remove_entry(mguard_weak *t, const void *key, uint32_t e1, uint32_t h)
{
    mguard_ctx *ctx = t->ctx;
    unsigned char small[MGUARD__STACK_VALUE];
    unsigned char *tmp = NULL;
    mguard_value_dtor dtor = t->dtor;
    void *user = t->user;
    uint32_t r;
    if (dtor) {
        tmp = t->value_size <= sizeof small ? small : (unsigned char *)mguard__alloc(ctx, t->value_size);
        if (tmp) memcpy(tmp, MGUARD__ENTRY(t, e1 - 1) + t->voff, t->value_size);
    }
    mguard__weak_detach(t, e1, h);
    r = mguard__reg_find(ctx, key);
    MGUARD_ASSERT(r);
    if (r) {
        mguard__obj_unlink_table(&ctx->objs[r - 1], t);
        mguard__reg_drop_if_empty(ctx, r);
    }
    if (!dtor) return;
    if (tmp) {
        mguard__call_value(ctx, dtor, NULL, user, key, tmp);
        if (tmp != small) mguard__free(ctx, tmp);
    } else {
        mguard__destroy_in_place(t, e1 - 1, key, 0);
    }
}

mguard_status mguard_weak_remove(mguard_weak *t, const void *key)
{
    uint32_t h, e1;
    if (!mguard__weak_ok(t)) return MGUARD_EINVAL;
    if (!key) {
        mguard__logf(t->ctx, MGUARD_LOG_WARN, "mguard_weak_remove: NULL key");
        return MGUARD_EINVAL;
    }
    h = mguard__hash_ptr(key);
    e1 = mguard__ix_find(&t->index, t->dense, t->stride, key, h);
    if (!e1) return MGUARD_NOT_FOUND;
    mguard__weak_remove_entry(t, key, e1, h);
    return MGUARD_OK;
}


mguard_weak_iter mguard_weak_iterate(mguard_weak *t)
{
    mguard_weak_iter it;
    memset(&it, 0, sizeof it);
    if (mguard__weak_ok(t)) {
        it.t_ = t;
        it.epoch_ = t->epoch;
    }
    return it;
}

bool mguard_weak_next(mguard_weak_iter *it)
{
    mguard_weak *t;
    if (!it || !it->t_) return false;
    t = it->t_;
    if (!mguard__weak_ok(t)) { it->t_ = NULL; return false; }
    if (it->epoch_ != t->epoch) {
        /* Compacted since the last step: find the first entry after the
           last one visited (seq grows along the dense array). */
        size_t lo = 0, hi = t->len;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            mguard__entry_hdr hdr;
            memcpy(&hdr, MGUARD__ENTRY(t, mid), sizeof hdr);
            if (hdr.seq < it->seq_) lo = mid + 1; else hi = mid;
        }
        it->pos_ = lo;
        it->epoch_ = t->epoch;
    }
    while (it->pos_ < t->len) {
        mguard__entry_hdr hdr;
        unsigned char *e = MGUARD__ENTRY(t, it->pos_);
        memcpy(&hdr, e, sizeof hdr);
        it->pos_++;
        if (!hdr.key) continue;
        it->key = hdr.key;
        it->value = e + t->voff;
        it->seq_ = hdr.seq + 1;   /* the next one to look for */
        return true;
    }
    it->key = NULL;
    it->value = NULL;
    it->t_ = NULL;
    return false;
}

/* Remove every entry with seq < bound, in order, one at a time; each
   destructor runs with its entry already gone. busy keeps the table alive
   under the walk: a destroy requested by a destructor meanwhile is done by
   the outermost walk when it ends. */
static void mguard__weak_finish(mguard_weak *t);

static void mguard__weak_drain(mguard_weak *t, uint64_t bound)
{
    mguard_weak_iter it = mguard_weak_iterate(t);
    t->busy++;
    while (mguard_weak_next(&it)) {
        const void *key = it.key;
        uint32_t h, e1;
        if (it.seq_ > bound) break;
        h = mguard__hash_ptr(key);
        e1 = mguard__ix_find(&t->index, t->dense, t->stride, key, h);
        MGUARD_ASSERT(e1);
        mguard__weak_remove_entry(t, key, e1, h);
    }
    t->busy--;
}

void mguard_weak_clear(mguard_weak *t)
{
    if (!mguard__weak_ok(t)) return;
    mguard__weak_drain(t, t->next_seq);
    if (t->destroying && !t->busy) mguard__weak_finish(t);
}

static void mguard__weak_finish(mguard_weak *t)
{
    mguard_ctx *ctx = t->ctx;
    /* destroying refuses new keys, so one drain empties the table */
    mguard__weak_drain(t, UINT64_MAX);
    MGUARD_ASSERT(t->live == 0);
    if (t->prev) t->prev->next = t->next; else ctx->tables = t->next;
    if (t->next) t->next->prev = t->prev;
    t->prev = t->next = NULL;
    if (t->pinned) {
        t->magic = MGUARD__DEAD;
        t->zombie = 1;     /* the in-place destructor frees it */
    } else {
        mguard__weak_free(t);
    }
}

void mguard_weak_destroy(mguard_weak *t)
{
    if (!mguard__weak_ok(t)) return;
    if (t->destroying) {
        mguard__logf(t->ctx, MGUARD_LOG_WARN, "mguard_weak_destroy: table %p is already being destroyed", (void *)t);
        return;
    }
    t->destroying = 1;
    if (t->busy) return;   /* the clear in progress finishes the job */
    mguard__weak_finish(t);
}

/* ---- 2. object lifetimes: the destructor hook ---------------------------
   Phase 1 detaches obj from everything with no callback and, in the common
   case, no allocation: values are copied into a buffer on the C stack (a
   heap block when they do not fit), watchers are swapped out of the
   record, the record is dropped. Phase 2 calls out: watchers in
   registration order (attr NULL), then on_key_death and the value
   destructor of each table entry, in the order obj entered the tables.
   While phase 2 runs, obj is on the context's dying list and cannot be
   registered again. If the heap block cannot be had, tables are handled
   one at a time instead (logged): values are still destroyed exactly once. */
typedef struct mguard__pending {
    mguard_value_dtor dtor;
    mguard_key_death_fn on_death;
    void *user;
    size_t size;
    size_t off;
} mguard__pending;

static void mguard__fire(mguard_ctx *ctx, const void *obj, mguard__watcher *w, size_t n, const char *attr);

#define MGUARD__DEATH_STACK 512
#define MGUARD__ROUND16(n) (((n) + 15) & ~(size_t)15)

/* Take obj's watchers and drop its record (its tables are detached). */
static void mguard__death_drop_record(mguard_ctx *ctx, uint32_t r, mguard__watcher **w, size_t *nw)
{
    mguard__obj *o = &ctx->objs[r - 1];
    *w = o->watch;
    *nw = o->nwatch;
    o->watch = NULL;
    o->nwatch = o->capwatch = 0;
    o->ntables = 0;
    mguard__reg_drop(ctx, r);
}

static void mguard__death_degraded(mguard_ctx *ctx, const void *obj)
{
    mguard__watcher *w = NULL;
    size_t nw = 0;
    uint32_t r;
    unsigned char small[MGUARD__STACK_VALUE];
    mguard__logf(ctx, MGUARD_LOG_ERROR, "mguard_on_destroy: out of memory; destroying %p's table entries one at a time", obj);
    while ((r = mguard__reg_find(ctx, obj)) != 0 && ctx->objs[r - 1].ntables) {
        mguard__obj *o = &ctx->objs[r - 1];
        mguard_weak *t = MGUARD__TABLES(o)[0];
        uint32_t h = mguard__hash_ptr(obj);
        uint32_t e1 = mguard__ix_find(&t->index, t->dense, t->stride, obj, h);
        MGUARD_ASSERT(e1);
        mguard__weak_detach(t, e1, h);
        mguard__obj_unlink_table(o, t);
        if (t->value_size <= sizeof small) {
            memcpy(small, MGUARD__ENTRY(t, e1 - 1) + t->voff, t->value_size);
            mguard__call_value(ctx, t->dtor, t->on_death, t->user, obj, small);
        } else {
            mguard__destroy_in_place(t, e1 - 1, obj, 1);
        }
    }
    if (r) {
        mguard__death_drop_record(ctx, r, &w, &nw);
        if (nw) mguard__fire(ctx, obj, w, nw, NULL);
        mguard__free(ctx, w);
    }
}

void mguard_on_destroy(mguard_ctx *ctx, const void *obj)
{
    uint32_t r, i, nt;
    mguard__obj *o;
    mguard__watcher *w;
    mguard__dying dying;
    size_t nw, need, off;
    union { unsigned char bytes[MGUARD__DEATH_STACK]; long double a1_; uint64_t a2_; void *a3_; } stackbuf;
    unsigned char *buf = stackbuf.bytes;
    mguard__pending *pend;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !obj) return;
    r = mguard__reg_find(ctx, obj);
    if (!r) return;
    o = &ctx->objs[r - 1];
    nt = o->ntables;
    need = MGUARD__ROUND16((size_t)nt * sizeof(mguard__pending));
    for (i = 0; i < nt; i++) need += MGUARD__ROUND16(MGUARD__TABLES(o)[i]->value_size);
    if (need > sizeof stackbuf.bytes) {
        buf = (unsigned char *)mguard__alloc(ctx, need);
        if (!buf) {
            mguard__death_degraded(ctx, obj);
            return;
        }
    }
    /* Phase 1: detach. */
    pend = (mguard__pending *)(void *)buf;
    off = MGUARD__ROUND16((size_t)nt * sizeof(mguard__pending));
    for (i = 0; i < nt; i++) {
        mguard_weak *t = MGUARD__TABLES(o)[i];
        uint32_t h = mguard__hash_ptr(obj);
        uint32_t e1 = mguard__ix_find(&t->index, t->dense, t->stride, obj, h);
        MGUARD_ASSERT(e1);
        pend[i].dtor = t->dtor;
        pend[i].on_death = t->on_death;
        pend[i].user = t->user;
        pend[i].size = t->value_size;
        pend[i].off = off;
        memcpy(buf + off, MGUARD__ENTRY(t, e1 - 1) + t->voff, t->value_size);
        off += MGUARD__ROUND16(t->value_size);
        mguard__weak_detach(t, e1, h);
    }
    mguard__death_drop_record(ctx, r, &w, &nw);
    /* Phase 2: call out. */
    dying.obj = obj;
    dying.next = ctx->dying;
    ctx->dying = &dying;
    if (nw) mguard__fire(ctx, obj, w, nw, NULL);
    mguard__free(ctx, w);
    for (i = 0; i < nt; i++)
        mguard__call_value(ctx, pend[i].dtor, pend[i].on_death, pend[i].user, obj, buf + pend[i].off);
    ctx->dying = dying.next;
    if (buf != stackbuf.bytes) mguard__free(ctx, buf);
}


/* ---- 4. weak refs ------------------------------------------------------ */

mguard_ref mguard_ref_make(mguard_ctx *ctx, const void *obj)
{
    mguard_ref ref;
    uint32_t r;
    ref.obj_ = NULL;
    ref.serial_ = 0;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !obj) return ref;
    r = mguard__reg_find(ctx, obj);
    if (!r) {
        mguard_status st = mguard__admit(ctx, obj, 1, "mguard_ref_make");
        if (st == MGUARD_ENOMEM) mguard__logf(ctx, MGUARD_LOG_ERROR, "mguard_ref_make: out of memory");
        if (st) return ref;   /* the null ref */
        r = mguard__reg_ensure(ctx, obj);
    }
    ctx->objs[r - 1].flags |= MGUARD__F_PINNED;
    ref.obj_ = obj;
    ref.serial_ = ctx->objs[r - 1].serial;
    return ref;
}

/* The record of a live object whose serial is `serial`, or 0. */
static uint32_t mguard__find_serial(const mguard_ctx *ctx, const void *obj, uint64_t serial)
{
    uint32_t r = mguard__reg_find(ctx, obj);
    return (r && ctx->objs[r - 1].serial == serial) ? r : 0;
}

void *mguard_ref_get(const mguard_ctx *ctx, mguard_ref ref)
{
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !ref.serial_) return NULL;
    if ((uint32_t)(ref.serial_ >> 48) != ctx->tag) {
        mguard__logf(ctx, MGUARD_LOG_WARN, "mguard_ref_get: ref belongs to another context");
        return NULL;
    }
    return mguard__find_serial(ctx, ref.obj_, ref.serial_) ? (void *)ref.obj_ : NULL;
}

bool mguard_ref_is_null(mguard_ref ref) { return ref.serial_ == 0; }

/* ---- 5. mutation trackers ---------------------------------------------- */

/* Call the swapped-out watchers w[0..n) of obj. The list is linked on the
   C stack so mguard_unwatch can cancel a pending watcher; a guard destroyed
   by an earlier callback (serial gone) is skipped. */
static void mguard__fire(mguard_ctx *ctx, const void *obj, mguard__watcher *w, size_t n, const char *attr)
{
    mguard__firing f;
    size_t i;
    f.obj = obj;
    f.w = w;
    f.n = n;
    f.next = ctx->firing;
    ctx->firing = &f;
    for (i = 0; i < n; i++) {
        if (!w[i].fn || !mguard__find_serial(ctx, w[i].guard, w[i].guard_serial)) continue;
        ctx->in_callback++;
        w[i].fn(w[i].guard, obj, attr, w[i].user);
        ctx->in_callback--;
    }
    /* frames above ours were popped by their own calls */
    ctx->firing = f.next;
}

/* Drop watchers whose guard is dead (keeps a never-mutated object's list
   from growing with dead guards); amortized over mguard_watch. */
static void mguard__prune_watchers(mguard_ctx *ctx, mguard__obj *o)
{
    uint32_t i, n = 0;
    for (i = 0; i < o->nwatch; i++) {
        if (mguard__find_serial(ctx, o->watch[i].guard, o->watch[i].guard_serial))
            o->watch[n++] = o->watch[i];
    }
    o->nwatch = n;
}

mguard_status mguard_watch(mguard_ctx *ctx, const void *obj, void *guard, mguard_invalidate_fn fn, void *user)
{
    uint32_t r, g;
    mguard__obj *o;
    mguard__watcher *fresh = NULL;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX) return MGUARD_EINVAL;
    if (!obj || !guard || !fn) {
        mguard__logf(ctx, MGUARD_LOG_WARN, "mguard_watch: NULL %s", !obj ? "object" : !guard ? "guard" : "callback");
        return MGUARD_EINVAL;
    }
    /* Reserve everything first (records for obj and guard, one watcher
       slot), so that failure changes nothing. */
    r = mguard__reg_find(ctx, obj);
    g = mguard__reg_find(ctx, guard);
    {
        mguard_status st = r ? MGUARD_OK : mguard__admit(ctx, obj, 2, "mguard_watch");
        if (!st && !g) st = mguard__admit(ctx, guard, 2, "mguard_watch");
        if (st == MGUARD_ENOMEM) mguard__logf(ctx, MGUARD_LOG_ERROR, "mguard_watch: out of memory");
        if (st) return st;
    }
    if (r) {
        o = &ctx->objs[r - 1];
        if (o->nwatch == o->capwatch && o->nwatch >= 8) mguard__prune_watchers(ctx, o);
        if (mguard__reserve(ctx, (void **)&o->watch, &o->capwatch, (size_t)o->nwatch + 1, sizeof(mguard__watcher))) {
            mguard__logf(ctx, MGUARD_LOG_ERROR, "mguard_watch: out of memory");
            return MGUARD_ENOMEM;
        }
    } else {
        fresh = (mguard__watcher *)mguard__alloc(ctx, 4 * sizeof *fresh);
        if (!fresh) {
            mguard__logf(ctx, MGUARD_LOG_ERROR, "mguard_watch: out of memory");
            return MGUARD_ENOMEM;
        }
    }
    r = mguard__reg_ensure(ctx, obj);
    g = mguard__reg_ensure(ctx, guard);
    ctx->objs[g - 1].flags |= MGUARD__F_PINNED;
    o = &ctx->objs[r - 1];
    o->flags |= MGUARD__F_TRACKER;
    if (fresh) {
        o->watch = fresh;
        o->capwatch = 4;
    }
    o->watch[o->nwatch].guard = guard;
    o->watch[o->nwatch].guard_serial = ctx->objs[g - 1].serial;
    o->watch[o->nwatch].fn = fn;
    o->watch[o->nwatch].user = user;
    o->nwatch++;
    return MGUARD_OK;
}

mguard_status mguard_unwatch(mguard_ctx *ctx, const void *obj, const void *guard)
{
    uint32_t r, i, n;
    size_t found = 0;
    mguard__firing *f;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX) return MGUARD_EINVAL;
    if (!obj || !guard) {
        mguard__logf(ctx, MGUARD_LOG_WARN, "mguard_unwatch: NULL %s", !obj ? "object" : "guard");
        return MGUARD_EINVAL;
    }
    r = mguard__reg_find(ctx, obj);
    if (r) {
        mguard__obj *o = &ctx->objs[r - 1];
        for (i = 0, n = 0; i < o->nwatch; i++) {
            if (o->watch[i].guard == guard) found++;
            else o->watch[n++] = o->watch[i];
        }
        o->nwatch = n;
    }
    for (f = ctx->firing; f; f = f->next) {
        size_t k;
        if (f->obj != obj) continue;
        for (k = 0; k < f->n; k++) {
            if (f->w[k].guard == guard && f->w[k].fn) {
                f->w[k].fn = NULL;
                found++;
            }
        }
    }
    return found ? MGUARD_OK : MGUARD_NOT_FOUND;
}

void mguard_on_mutation(mguard_ctx *ctx, const void *obj, const char *attr)
{
    uint32_t r;
    mguard__obj *o;
    mguard__watcher *w;
    size_t n;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !obj) return;
    r = mguard__reg_find(ctx, obj);
    if (!r) return;
    o = &ctx->objs[r - 1];
    if (!(o->flags & MGUARD__F_TRACKER)) return;
    o->mutations++;
    if (!o->nwatch) return;
    /* Swap the list out (the reference does the same): watchers added by
       the callbacks go to a fresh list and wait for the next mutation. */
    w = o->watch;
    n = o->nwatch;
    o->watch = NULL;
    o->nwatch = o->capwatch = 0;
    mguard__fire(ctx, obj, w, n, attr);
    /* Give the buffer back for reuse if the tracker still exists and got no
       new list meanwhile. */
    r = mguard__reg_find(ctx, obj);
    if (r && !ctx->objs[r - 1].watch) {
        ctx->objs[r - 1].watch = w;
        ctx->objs[r - 1].capwatch = (uint32_t)n;  /* at least n */
    } else {
        mguard__free(ctx, w);
    }
}

uint64_t mguard_mutation_count(const mguard_ctx *ctx, const void *obj)
{
    uint32_t r;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !obj) return 0;
    r = mguard__reg_find(ctx, obj);
    return r ? ctx->objs[r - 1].mutations : 0;
}

size_t mguard_watcher_count(const mguard_ctx *ctx, const void *obj)
{
    uint32_t r, i;
    size_t n = 0;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !obj) return 0;
    r = mguard__reg_find(ctx, obj);
    if (!r) return 0;
    for (i = 0; i < ctx->objs[r - 1].nwatch; i++) {
        const mguard__watcher *w = &ctx->objs[r - 1].watch[i];
        if (mguard__find_serial(ctx, w->guard, w->guard_serial)) n++;
    }
    return n;
}

/* ---- 6. generation tags ------------------------------------------------ */

static mguard_status mguard__flag(mguard_ctx *ctx, const void *obj, uint32_t flag, const char *fn)
{
    uint32_t r;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX) return MGUARD_EINVAL;
    if (!obj) {
        mguard__logf(ctx, MGUARD_LOG_WARN, "%s: NULL object", fn);
        return MGUARD_EINVAL;
    }
    r = mguard__reg_find(ctx, obj);
    if (!r) {
        mguard_status st = mguard__admit(ctx, obj, 1, fn);
        if (st == MGUARD_ENOMEM) mguard__logf(ctx, MGUARD_LOG_ERROR, "%s: out of memory", fn);
        if (st) return st;
        r = mguard__reg_ensure(ctx, obj);
    }
    ctx->objs[r - 1].flags |= flag;
    if (flag == MGUARD__F_TAGGED) ctx->objs[r - 1].gen = ctx->generation;
    return MGUARD_OK;
}

mguard_status mguard_gen_tag(mguard_ctx *ctx, const void *obj)
{
    return mguard__flag(ctx, obj, MGUARD__F_TAGGED, "mguard_gen_tag");
}

long mguard_gen_get(const mguard_ctx *ctx, const void *obj)
{
    uint32_t r;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !obj) return -1;
    r = mguard__reg_find(ctx, obj);
    return (r && (ctx->objs[r - 1].flags & MGUARD__F_TAGGED)) ? ctx->objs[r - 1].gen : -1;
}

bool mguard_gen_check(const mguard_ctx *ctx, const void *obj)
{
    long g = mguard_gen_get(ctx, obj);
    return g >= 0 && g == ctx->generation;
}

long mguard_gen_current(const mguard_ctx *ctx)
{
    return (ctx && ctx->magic == MGUARD__MAGIC_CTX) ? ctx->generation : -1;
}

long mguard_gen_advance(mguard_ctx *ctx)
{
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX) return -1;
    return ++ctx->generation;
}

mguard_status mguard_gen_mark_class_dynamic(mguard_ctx *ctx, const void *cls)
{
    return mguard__flag(ctx, cls, MGUARD__F_CLASS_DYN, "mguard_gen_mark_class_dynamic");
}

bool mguard_gen_is_class_dynamic(const mguard_ctx *ctx, const void *cls)
{
    uint32_t r;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX || !cls) return false;
    r = mguard__reg_find(ctx, cls);
    return r && (ctx->objs[r - 1].flags & MGUARD__F_CLASS_DYN);
}

bool mguard_gen_is_dynamic(const mguard_ctx *ctx, const void *obj, const void *cls)
{
    return mguard_gen_is_class_dynamic(ctx, cls) || mguard_gen_check(ctx, obj);
}

void mguard_gen_clear(mguard_ctx *ctx)
{
    uint32_t i;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX) return;
    ctx->generation = 0;
    for (i = 0; i < ctx->nobjs; i++) {
        mguard__obj *o = &ctx->objs[i];
        if (!o->key) continue;
        o->flags &= ~(uint32_t)(MGUARD__F_TAGGED | MGUARD__F_CLASS_DYN);
        o->gen = -1;
        mguard__reg_drop_if_empty(ctx, i + 1);
    }
}

/* ---- 1. context: create, destroy, check -------------------------------- */

mguard_ctx *mguard_ctx_create(const mguard_ctx_desc *desc)
{
    mguard_ctx_desc d;
    mguard_ctx *ctx;
    uint64_t x;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (!d.allocator.realloc_fn != !d.allocator.free_fn) {
        if (d.logger.func) d.logger.func(MGUARD_LOG_ERROR, "mguard_ctx_create: the allocator needs both realloc_fn and free_fn", d.logger.user);
        return NULL;
    }
    if (!d.allocator.realloc_fn) {
        d.allocator.realloc_fn = mguard__default_realloc;
        d.allocator.free_fn = mguard__default_free;
    }
    if (!d.logger.func && !d.quiet) d.logger.func = mguard__default_log;
    ctx = (mguard_ctx *)d.allocator.realloc_fn(NULL, sizeof *ctx, d.allocator.user);
    if (!ctx) {
        if (d.logger.func) d.logger.func(MGUARD_LOG_ERROR, "mguard_ctx_create: out of memory", d.logger.user);
        return NULL;
    }
    memset(ctx, 0, sizeof *ctx);
    ctx->magic = MGUARD__MAGIC_CTX;
    ctx->alloc = d.allocator;
    ctx->log = d.logger;
    /* A per-context tag in every serial, so a ref is recognised as foreign:
       derived from the context's address (distinct among live contexts). */
    x = (uint64_t)(uintptr_t)ctx * 0x9E3779B97F4A7C15ull;
    ctx->tag = (uint32_t)(x >> 48);
    if (!ctx->tag) ctx->tag = 1;
    return ctx;
}

void mguard_ctx_destroy(mguard_ctx *ctx)
{
    uint32_t i;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX) return;
    if (ctx->in_callback || ctx->destroying) {
        mguard__logf(ctx, MGUARD_LOG_WARN, "mguard_ctx_destroy: refused inside one of the context's own callbacks");
        return;
    }
    ctx->destroying = 1;
    while (ctx->tables) mguard_weak_destroy(ctx->tables);
    for (i = 0; i < ctx->nobjs; i++) {
        mguard__obj *o = &ctx->objs[i];
        if (!o->key) continue;
        mguard__free(ctx, o->more);
        mguard__free(ctx, o->watch);
    }
    mguard__free(ctx, ctx->objs);
    mguard__ix_free(ctx, &ctx->reg_index);
    for (i = 0; i < ctx->nstrs; i++) mguard__free(ctx, ctx->strs[i]);
    mguard__free(ctx, ctx->strs);
    mguard__ix_free(ctx, &ctx->str_index);
    ctx->magic = MGUARD__DEAD;
    ctx->alloc.free_fn(ctx, ctx->alloc.user);
}

#define MGUARD__CHECK(cond, ...) \
    do { if (!(cond)) { mguard__logf(ctx, MGUARD_LOG_ERROR, "mguard_ctx_check: " __VA_ARGS__); return MGUARD_EINVAL; } } while (0)

static mguard_status mguard__check_index(mguard_ctx *ctx, const mguard__index *ix, const unsigned char *dense,
                                         size_t stride, size_t len, const char *what)
{
    size_t i, used = 0;
    if (!ix->slots) {
        MGUARD__CHECK(ix->used == 0, "%s: index without slots has %lu keys", what, (unsigned long)ix->used);
        return MGUARD_OK;
    }
    MGUARD__CHECK(ix->used * 2 <= ix->mask + 1, "%s: index over half full", what);
    for (i = 0; i <= ix->mask; i++) {
        const void *k;
        mguard__slot s = ix->slots[i];
        if (!s.idx) continue;
        used++;
        MGUARD__CHECK(s.idx <= len, "%s: slot %lu points past the entries", what, (unsigned long)i);
        memcpy(&k, dense + (size_t)(s.idx - 1) * stride, sizeof k);
        MGUARD__CHECK(k != NULL, "%s: slot %lu points at a removed entry", what, (unsigned long)i);
        MGUARD__CHECK(mguard__hash_ptr(k) == s.hash, "%s: slot %lu has a stale hash", what, (unsigned long)i);
        MGUARD__CHECK(mguard__ix_find(ix, dense, stride, k, s.hash) == s.idx, "%s: key %p not reachable from its home slot", what, k);
    }
    MGUARD__CHECK(used == ix->used, "%s: index counts %lu keys, holds %lu", what, (unsigned long)ix->used, (unsigned long)used);
    return MGUARD_OK;
}

mguard_status mguard_ctx_check(mguard_ctx *ctx)
{
    mguard_weak *t;
    uint32_t i, j, live = 0, nfree = 0, f;
    size_t backrefs = 0, entries = 0;
    if (!ctx || ctx->magic != MGUARD__MAGIC_CTX) return MGUARD_EINVAL;
    if (mguard__check_index(ctx, &ctx->reg_index, (const unsigned char *)ctx->objs, sizeof(mguard__obj), ctx->nobjs, "registry"))
        return MGUARD_EINVAL;
    for (i = 0; i < ctx->nobjs; i++) {
        const mguard__obj *o = &ctx->objs[i];
        if (!o->key) continue;
        live++;
        MGUARD__CHECK(mguard__reg_find(ctx, o->key) == i + 1, "record %u (%p) not found by its key", i, o->key);
        MGUARD__CHECK(!mguard__obj_empty(o), "record %u (%p) is empty but kept", i, o->key);
        MGUARD__CHECK(o->ntables <= o->captables, "record %u: table count over capacity", i);
        MGUARD__CHECK(o->nwatch <= o->capwatch, "record %u: watcher count over capacity", i);
        MGUARD__CHECK(o->nwatch == 0 || (o->flags & MGUARD__F_TRACKER), "record %u: watchers without a tracker", i);
        for (j = 0; j < o->ntables; j++) {
            const mguard_weak *tt = MGUARD__TABLES(o)[j];
            MGUARD__CHECK(mguard__weak_ok(tt), "record %u: back-reference %u is not a live table", i, j);
            MGUARD__CHECK(mguard_weak_get(tt, o->key) != NULL, "record %u: table %p does not hold %p", i, (const void *)tt, o->key);
            backrefs++;
        }
    }
    MGUARD__CHECK(live == ctx->live_objs, "live record count %u, counted %u", ctx->live_objs, live);
    for (f = ctx->free_head; f; f = ctx->objs[f - 1].next_free) {
        MGUARD__CHECK(f <= ctx->nobjs && !ctx->objs[f - 1].key, "free list reaches a live record");
        MGUARD__CHECK(++nfree <= ctx->nobjs, "free list has a cycle");
    }
    MGUARD__CHECK(nfree + live == ctx->nobjs, "records: %u live + %u free != %u", live, nfree, ctx->nobjs);
    for (t = ctx->tables; t; t = t->next) {
        uint64_t last = 0;
        uint32_t nlive = 0;
        MGUARD__CHECK(mguard__weak_ok(t), "table list holds a dead table");
        MGUARD__CHECK(t->len <= t->cap && t->live <= t->len, "table %p: counts out of range", (void *)t);
        if (mguard__check_index(ctx, &t->index, t->dense, t->stride, t->len, "table")) return MGUARD_EINVAL;
        for (i = 0; i < t->len; i++) {
            mguard__entry_hdr hdr;
            memcpy(&hdr, MGUARD__ENTRY(t, i), sizeof hdr);
            MGUARD__CHECK(i == 0 || hdr.seq > last, "table %p: entries out of order", (void *)t);
            last = hdr.seq;
            if (!hdr.key) continue;
            nlive++;
            {
                uint32_t r = mguard__reg_find(ctx, hdr.key), c = 0;
                MGUARD__CHECK(r, "table %p: key %p has no record", (void *)t, hdr.key);
                for (j = 0; j < ctx->objs[r - 1].ntables; j++) c += MGUARD__TABLES(&ctx->objs[r - 1])[j] == t;
                MGUARD__CHECK(c == 1, "table %p: key %p's record lists it %u times", (void *)t, hdr.key, c);
            }
        }
        MGUARD__CHECK(nlive == t->live && nlive == t->index.used, "table %p: live count %u, counted %u", (void *)t, t->live, nlive);
        MGUARD__CHECK(t->next_seq >= t->len, "table %p: seq behind", (void *)t);
        entries += nlive;
    }
    MGUARD__CHECK(entries == backrefs, "%lu table entries but %lu back-references", (unsigned long)entries, (unsigned long)backrefs);
    return MGUARD_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* MGUARD__IMPLEMENTED */
#endif /* MGUARD_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the mguard.h authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We dedicate this interest in the software for the benefit of the
public at large and to the detriment of our heirs and successors. We intend
this dedication to be an overt act of relinquishment in perpetuity of all
present and future rights to this software under copyright law.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
