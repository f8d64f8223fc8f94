/* mguard.h - v0.1.0 - weak tables, invalidation and speculative state for C - MIT or public domain

   mguard tells a program exactly when work it cached against live objects
   goes stale: the object was mutated (its watchers are invalidated; guarded
   caches drop what depended on it, saying why), the object died (every
   weak table keyed by it drops the entry and destroys the value; weak refs
   read NULL), or the object is younger than a point in time (generation
   tags). Beside them: a scope hierarchy tracker (qualified names, the
   active set, phases, counters), a dynamism tracker (which dimensions of
   example inputs vary) and a side-effects ledger (speculative attribute
   writes: clone, diff, prune, apply). The semantics follow PyTorch
   Dynamo's and its module tracker's; C has no garbage collector, so the
   program tells mguard when an object dies by calling mguard_on_destroy()
   from the object's own destructor.

   EXAMPLE (make test compiles and runs it)
     #define STB_DS_IMPLEMENTATION
     #define MGUARD_IMPLEMENTATION
     #include "mguard.h"
     #include <stdio.h>

     typedef struct point { int x, y; } point;

     int main(void)
     {
         mguard_ctx *ctx = mguard_ctx_create(NULL);
         mguard_weak_desc d = {sizeof(double), NULL, NULL, NULL};
         mguard_weak *norms = mguard_weak_create(ctx, &d);   // point -> norm
         point p = {3, 4};
         double n = 5.0;
         mguard_weak_set(norms, &p, &n);          // work cached against p
         mguard_ref ref = mguard_ref_make(ctx, &p);
         mguard_on_destroy(ctx, &p);              // from p's destructor
         printf("%zu cached, ref %s\n", mguard_weak_count(norms),
                mguard_ref_get(ctx, ref) ? "alive" : "reads NULL"); // prints: 0 cached, ref reads NULL
         mguard_ctx_destroy(ctx);
         return 0;
     }

   USAGE
     In exactly ONE C or C++ file:
        #define STB_DS_IMPLEMENTATION   // omit if stb_ds is implemented elsewhere
        #define MGUARD_IMPLEMENTATION   //   or you link Debian's -lstb
        #include "mguard.h"
     Everywhere else just #include "mguard.h". The API part includes only
     standard headers; stb_ds.h (Debian libstb-dev, `pkg-config --cflags stb`)
     is needed by the implementation file only, and its warnings are
     silenced there. STB_DS_IMPLEMENTATION goes in one file per program,
     however many files compile a MGUARD_STATIC copy.

   TABLE OF CONTENTS (the full list of names: the declarations below)
     1. context and status codes  mguard_ctx_create, mguard_status_str, ...
     2. object lifetimes          mguard_on_destroy, mguard_intern
     3. weak key tables           mguard_weak_create, _set, _get, _take, ...
     4. weak refs                 mguard_ref_make, _get, _get_retained
     5. mutation trackers         mguard_watch, mguard_on_mutation, ...
     6. generation tags           mguard_gen_tag, mguard_gen_advance, ...
     7. scope hierarchy tracker   mguard_scope_create, _enter, _exit, _format, ...
     8. dynamism tracker          mguard_dyn_create, _observe, _dims, _format, ...
     9. side-effects ledger       mguard_ledger_create, _store_attr, _clone, _diff, ...
    10. guarded caches            mguard_cache_create, _get_or_compute, _depend, ...
    11. threads                   (implementation: the lock; see CONVENTIONS)

   COMPILE-TIME OPTIONS
     #define MGUARD_IMPLEMENTATION   (one file) compile the implementation.
     #define MGUARD_STATIC           (globally or in the one file that uses it)
                                     make every function static: a private copy.
     #define MGUARDDEF ...           (before every include) precedes each public
                                     declaration: extern, static under
                                     MGUARD_STATIC; a shared library sets it
                                     (visibility("default"), dllexport/import).
     #define MGUARD_DEBUG            (implementation file) check every handle
                                     against a registry of live ones first: a
                                     destroyed one gets the bad-input answer
                                     and a log line. One lookup per call; one
                                     thread only (docs/guide.md, "MGUARD_DEBUG").
     #define MGUARD_NO_PTHREADS      (implementation file) no POSIX threads: a
                                     thread-safe context then needs
                                     mguard_ctx_desc.lock. Else link -pthread
                                     where glibc < 2.34.
     #define MGUARD_NO_SCOPE         (everywhere, like MGUARD_STATIC) leave out
     #define MGUARD_NO_DYN            section 7, 8, 9 or 10: its API and its
     #define MGUARD_NO_LEDGER         code (all four: about three quarters of
     #define MGUARD_NO_CACHE          the object code; docs/design.md's table).
     #define MGUARD_ASSERT(x)        (implementation file) default assert().
     stb_ds's options (STBDS_NO_SHORT_NAMES, STBDS_REALLOC/STBDS_FREE) are
     honoured: mguard only uses the stbds_-prefixed names.

   LIFETIME CONTRACT (docs/guide.md, "The destructor-hook contract")
     - Call mguard_on_destroy(ctx, obj) from the destructor of every object
       mguard was handed (a key, watched object, guard, ref target, tagged
       object or class, scope component, ledger object or value, cache key
       or dependency) before its memory is reused.
     - Every stored value is destroyed exactly once, unless taken out (_take).
     - Every event (a death, a mutation) runs in two phases: all structures
       are updated, then the callbacks run; a callback may call any mguard
       function. A clear or destroy goes entry by entry, each entry gone
       before its value's destructor runs.
     - A reused address never revives an old entry, ref, watcher or tag.
     - An object inside its own mguard_on_destroy is refused (EINVAL or NULL,
       logged) wherever it would be registered, as a key, ref, watcher, tag.

   CONVENTIONS (docs/guide.md, "Bad input and logging", "Memory", "Threads")
     - A zero-initialised desc (or NULL) means the defaults.
     - A NULL or foreign handle gets the bad-input answer (EINVAL, NULL, false,
       0, no-op) without a crash; misuse of a live one is logged too.
     - Every allocation goes through mguard_ctx_desc.allocator; MGUARD_ENOMEM
       means nothing changed.
     - snprintf-style: at most cap - 1 bytes and a NUL; returns the full length
       (>= cap: truncated); buf may be NULL when cap is 0.
     - A context belongs to one thread at a time, unless made thread_safe (or
       with a lock); a shared one's readers: mguard_ctx_get_stats,
       _weak_get_copy, _ref_get_retained, _cache_get_copy.
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

#ifndef MGUARDDEF
#ifdef MGUARD_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define MGUARDDEF static __attribute__((unused))
#else
#define MGUARDDEF static
#endif
#else
#define MGUARDDEF extern
#endif
#endif

#ifdef __cplusplus
#include <initializer_list>   /* MGUARD_CACHE_KEYS */
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
    MGUARD_LOG_INFO = 3   /* lines a program asked for (a cache's log_reasons) */
} mguard_log_level;
/* Every log line has a code MGUARD_LOG_<code>, made from this one list of
   L(code, level, printf format of the line). Codes are stable: a program
   compares them (or makes its own tables from the list); words may change. */
#define MGUARD_LOG_ITEMS(L) \
    L(NOMEM, ERROR, "%s: out of memory") \
    L(NULL_ARG, WARN, "%s: NULL %s") \
    L(NULL_ARRAY, WARN, "%s: NULL %s with %s %lu") \
    L(BAD_ENUM, WARN, "%s: unknown %s %d") \
    L(BAD_FLAGS, WARN, "%s: unknown flags 0x%x") \
    L(BAD_VALUE_SIZE, WARN, "%s: value_size must be 1..16M bytes") \
    L(HALF_ALLOCATOR, ERROR, "%s: the allocator needs both realloc_fn and free_fn") \
    L(HALF_LOCK, ERROR, "%s: the lock needs both lock_fn and unlock_fn") \
    L(NO_PTHREADS, ERROR, "%s: thread_safe needs desc.lock here (built without pthreads)") \
    L(LOCK_INIT_FAILED, ERROR, "%s: pthread_mutex_init failed") \
    L(CTX_DESTROYING, WARN, "%s: refused: the context is being destroyed") \
    L(DESTROY_IN_CALLBACK, WARN, "%s: refused inside one of the context's own callbacks") \
    L(HANDLE_DESTROYING, WARN, "%s: the %s is being destroyed") \
    L(DESTROY_TWICE, WARN, "%s: %s %p is already being destroyed") \
    L(NOT_LIVE, WARN, "%s%s: %p is not a live %s (destroyed, its context destroyed, or not a %s)") \
    L(NOT_LIVE_CTX, WARN, "%s: %p is not a live context (destroyed, or not a context)") \
    L(LINES_DROPPED, WARN, "mguard: %u more log line(s) of one call dropped (a call queues %d)") \
    L(CHECK_FAILED, ERROR, "mguard_ctx_check: %s") \
    L(CHECK_SKIPPED, INFO, "mguard_ctx_check: ledger: out of memory; hold counts not checked") \
    L(OBJECT_DYING, WARN, "%s: %s is being destroyed; refused") \
    L(ON_DESTROY_TWICE, WARN, "%s: %s is already being destroyed; ignored") \
    L(ON_DESTROY_IN_PLACE, ERROR, "%s: out of memory; destroying %s's values in place") \
    L(WEAK_PINNED, ERROR, "%s: out of memory (table pinned by an out-of-memory destructor)") \
    L(WEAK_SIZE_MISMATCH, WARN, "%s: the table's values are %lu bytes, read as %lu") \
    L(WALK_RENUMBERED, WARN, "%s: the %s was renumbered during the walk; the walk ends") \
    L(REF_FOREIGN, WARN, "%s: ref belongs to another context") \
    L(GEN_UNTAGGED, WARN, "%s: %s was never tagged (mguard_gen_tag in its constructor?); counted as dynamic, as every untagged object on this strict context (reported once)") \
    L(SCOPE_BAD_PHASES, WARN, "%s: %s") \
    L(SCOPE_SELF_PARENT, WARN, "%s: a component under itself") \
    L(SCOPE_CHILD_GONE, WARN, "%s: the child %p was destroyed while its parent was looked up") \
    L(SCOPE_PARENT_UNNAMED, WARN, "%s: the parent %s has no name") \
    L(SCOPE_UNNAMED, WARN, "%s: component %s has no name (no type_name callback, no parent named it, never named with mguard_scope_set_name)") \
    L(SCOPE_ENTER_GONE, WARN, "%s: component %p was destroyed while it was being entered") \
    L(SCOPE_BAD_PHASE, WARN, "%s: phase %lu of %lu") \
    L(SCOPE_NOT_FINITE, WARN, "%s: amount is not finite") \
    L(SCOPE_ACTIVE_DESTROYED, WARN, "mguard_scope: %s was destroyed while active (during %s); its %u frame%s closed") \
    L(SCOPE_CHILD_SKIPPED, WARN, "mguard_scope: child %lu of %s has a %s; skipped") \
    L(SCOPE_TRACE_FULL, WARN, "%s: the trace holds %lu spans (max_trace_events); later spans are not recorded") \
    L(SCOPE_EXIT_UNENTERED, WARN, "%s: exiting %s%s, which was never entered (during %s)") \
    L(SCOPE_EXIT_ORDER, WARN, "%s: %s exits while %s is still active inside it (during %s); exited out of order") \
    L(DYN_RANK, WARN, "%s: rank too large") \
    L(LEDGER_HELD_DESTROYED, WARN, "mguard_ledger: %p was destroyed while %u ledger(s) held it; dropped %u entries, %u writes, %u records, %u hooks") \
    L(LEDGER_BAD_DESC, WARN, "%s: %s (value_size %lu)") \
    L(LEDGER_BAD_TYPE, WARN, "%s: %s needs %s (value_size %lu)") \
    L(LEDGER_TRACKED, WARN, "%s: %s is already tracked") \
    L(LEDGER_UNTRACKED, WARN, "%s: %s is not tracked") \
    L(LEDGER_READ_UNTRACKED, WARN, "%s: %s is not tracked (reading %s)") \
    L(LEDGER_CONTAINER, WARN, "%s: %s is a container (no attribute writes)") \
    L(LEDGER_NOT_CONTAINER, WARN, "%s: %s is not a container") \
    L(LEDGER_NULL_VALUE, WARN, "%s: NULL value for %s.%s (%lu bytes)") \
    L(LEDGER_UNBOUND, WARN, "%s: %s.%s is neither bound (mguard_ledger_set_fields) nor pending") \
    L(LEDGER_TOO_MANY_FIELDS, WARN, "%s: more than 4294967295 fields (n %lu)") \
    L(LEDGER_FIELD_UNNAMED, WARN, "%s: field %lu (NULL) has no name") \
    L(LEDGER_FIELD_TYPE, WARN, "%s: field %lu (%s) of size %lu is %s, which needs %s") \
    L(LEDGER_PENDING_SHAPE, WARN, "%s: %s.%s has a pending write of %u bytes of %s; the binding would make it %lu bytes of %s") \
    L(LEDGER_BAD_CHECKPOINT, WARN, "%s: the checkpoint is %s") \
    L(LEDGER_CHANGED_IN_HOOK, WARN, "%s: a ledger changed inside the %s hook; %s") \
    L(LEDGER_MISMATCH, WARN, "%s: the ledgers %s") \
    L(LEDGER_UNBOUND_WRITES, WARN, "%s: NULL callback, and %u write(s) are to no field") \
    L(CACHE_BAD_NKEYS, WARN, "%s: nkeys must be 1..MGUARD_CACHE_MAX_KEYS") \
    L(CACHE_NULL_KEY, WARN, "%s: key %lu is NULL") \
    L(CACHE_REASON, INFO, "mguard_cache %s: %s (%s)%s%s") \
    L(CACHE_GONE_IN_COMPUTE, WARN, "%s: the cache was destroyed by compute") \
    L(CACHE_GONE_IN_DTOR, WARN, "%s: the cache was destroyed by a callback of the call (a value destructor, the logger)") \
    L(CACHE_NOT_STORED, ERROR, "%s: out of memory; the value will not be stored") \
    L(GEN_LIMIT, WARN, "%s: the generation is at its limit, LONG_MAX; it stays there") \
    L(CACHE_KEY_GONE, WARN, "%s: key %p was destroyed before compute ran; nothing computed")
#define MGUARD__LOG_CODE(code, level, fmt) MGUARD_LOG_##code,
typedef enum mguard_log_code { MGUARD_LOG_ITEMS(MGUARD__LOG_CODE) } mguard_log_code;
typedef struct mguard_ctx mguard_ctx;

/* realloc/free style: realloc_fn(NULL, n) allocates, aligned as malloc's; NULL
   on failure (the old block stays valid). Both or neither. */
typedef void *(*mguard_realloc_fn)(void *ptr, size_t size, void *user);
typedef void (*mguard_free_fn)(void *ptr, void *user);
typedef struct mguard_allocator {
    mguard_realloc_fn realloc_fn;
    mguard_free_fn free_fn;
    void *user;
} mguard_allocator;
/* Gets misuse warnings and errors: code says which (MGUARD_LOG_ITEMS), msg is
   the line without the newline, valid during the call (default: stderr, with
   the code's name). A line is delivered when its call is done
   with its structures (before its next callback, or on return; at most 8 wait,
   the rest counted in one line), so a logger may call any function, even
   destroy the handle named (a pointer the call returns into it goes too) or, at
   the end of a call made outside any callback, the context. */
typedef void (*mguard_log_fn)(mguard_log_level level, mguard_log_code code, const char *msg, void *user);
typedef struct mguard_logger {
    mguard_log_fn func;
    void *user;
} mguard_logger;
/* A lock of the program's own for a thread-safe context. Never taken twice (need
   not be recursive); no user code runs under it but the allocator, try_retain
   (mguard_ref_get_retained) and a ledger's retain hook. Both or neither. */
typedef void (*mguard_lock_fn)(void *user);
typedef struct mguard_lock {
    mguard_lock_fn lock_fn;
    mguard_lock_fn unlock_fn;
    void *user;
} mguard_lock;
/* Name obj (log lines, a cache's drop reasons, a ledger's diff text; docs/guide.md,
   "Seeing drops"): a NUL-terminated name into buf (size >= 64; left empty, obj
   prints as its address). Called only for an object the call in progress was
   given, one the context knows, or one being destroyed (an event's object once,
   first in its phase 2), never inside a structure update. It may call any mguard
   function, destroying the handle named included; its line is already decided.
   Thread-safe context: obj's death on another thread waits for the hook, so the
   hook must not wait for a thread that destroys obj. */
typedef void (*mguard_describe_fn)(const void *obj, char *buf, size_t size, void *user);
typedef struct mguard_describer {
    mguard_describe_fn func;
    void *user;
} mguard_describer;

typedef struct mguard_ctx_desc {
    mguard_allocator allocator; /* default: realloc/free */
    mguard_logger logger;       /* default: print errors, warnings and (asked
                                   for) INFO lines, with their codes, to stderr */
    bool quiet;                 /* true: no default stderr logger */
    bool thread_safe;           /* true: threads may share it; default: one thread */
    mguard_lock lock;           /* thread-safe with this lock; default (zero):
                                   a pthread mutex when thread_safe is set */
    bool strict_generations;    /* true: a never-tagged object counts as new,
                                   the first one reported (section 6) */
    mguard_describer describe;  /* names objects in lines and reasons; default: "%p" */
} mguard_ctx_desc;

/* Create a context (NULL desc = defaults). NULL on allocation failure, an
   allocator or lock with only one of its two functions, or thread_safe
   without a lock where there are no pthreads (logged). Cost: O(1). */
MGUARDDEF mguard_ctx *mguard_ctx_create(const mguard_ctx_desc *desc);
/* Destroy ctx and everything made from it, every value destroyed: the
   add-ons (scope and dynamism trackers, ledgers), then the caches, then
   the tables, each kind last created first. In the callbacks this runs, a
   handle not yet destroyed is alive, one destroyed is refused (its memory
   is kept until the end), and creating a handle is refused (NULL, logged).
   NULL: no-op; from ctx's own callbacks: refused (logged).
   Cost: O(everything). */
MGUARDDEF void mguard_ctx_destroy(mguard_ctx *ctx);
/* "MGUARD_OK", ...; "unknown status" outside the enum. O(1). */
MGUARDDEF const char *mguard_status_str(mguard_status status);
/* Validate every internal invariant of ctx (tests, debugging): OK, or
   EINVAL with a log line naming the first broken one. Cost: O(all). */
MGUARDDEF mguard_status mguard_ctx_check(mguard_ctx *ctx);
typedef struct mguard_ctx_stats {
    size_t objects;     /* objects ctx knows (keys, watched, guards, ref targets, tagged) */
    bool thread_safe;   /* ctx was created thread-safe */
} mguard_ctx_stats;
/* Copy ctx's figures into out. EINVAL for NULL ctx/out. Cost: O(1). */
MGUARDDEF mguard_status mguard_ctx_get_stats(const mguard_ctx *ctx, mguard_ctx_stats *out);

/* ==== 2. object lifetimes =============================================== */

/* The destructor hook: call it from obj's destructor. Removes obj from every
   weak table, makes refs to it read NULL, fires its watchers once (attr NULL),
   forgets its tracker, tag and class mark. Then the callbacks: obj's watchers
   in registration order, then the value destructors in the order obj entered
   the tables. Unknown obj (or a second call): a cheap no-op (logged from obj's
   own death callbacks); NULL ctx/obj: no-op (a destroyed ctx is gone: an
   object that outlives its context must not call this). Out of memory changes none of this
   (logged; docs/design.md, "Death in two phases"). Cost: one probe + O(tables,
   watchers, cache entries of obj) + O(k^2) for k tables with callbacks +
   O(writes + records + hooks) of each ledger holding obj. */
MGUARDDEF void mguard_on_destroy(mguard_ctx *ctx, const void *obj);
/* ctx's own copy of s: equal strings, the same pointer, valid until ctx is
   destroyed. NULL for NULL ctx/s or out of memory. Cost: one hash of s. */
MGUARDDEF const char *mguard_intern(mguard_ctx *ctx, const char *s);
/* ==== 3. weak key tables ================================================ */

typedef struct mguard_weak mguard_weak;
/* Destroys one stored value; value points to a copy of its bytes, valid
   during the call only (with no memory for a copy: to the value in its
   table, which stays put meanwhile). */
typedef void (*mguard_value_dtor)(void *value, void *user);
/* An entry leaves because its key died (before the value's destructor
   runs). key is being destroyed: registering it during this call is
   refused (a new object later at its address is a new key). */
typedef void (*mguard_key_death_fn)(const void *key, void *value, void *user);
typedef struct mguard_weak_desc {
    size_t value_size;              /* bytes per value, 1..16M (required), any size;
                                       stored 8-aligned, 16-aligned from 16 bytes */
    mguard_value_dtor value_dtor;   /* optional */
    mguard_key_death_fn key_death; /* optional */
    void *user;                     /* passed to both callbacks */
} mguard_weak_desc;

/* An identity-keyed table, values stored inline (no allocation per entry).
   NULL for NULL ctx, or (logged) NULL desc, a bad value_size, out of memory.
   Cost: O(1). */
MGUARDDEF mguard_weak *mguard_weak_create(mguard_ctx *ctx, const mguard_weak_desc *desc);
/* Destroy t, every value destroyed in insertion order. NULL: no-op; from
   inside t's own destroy: refused (logged); inside its own clear: done
   when the clear returns (t is gone then). Cost: O(entries). */
MGUARDDEF void mguard_weak_destroy(mguard_weak *t);
/* Copy value_size bytes from value under key (compared by address); value
   may point into any table of the context. An overwritten value is
   destroyed after the new one is stored. EINVAL: NULL t/key/value, t
   being destroyed. ENOMEM: nothing changed (mguard_weak_get pointers may
   have moved). Cost: one lookup, O(1) amortized (+ a renumbering of every
   table's entries, at most once per 2^31 entries made: O(log tables)
   amortized). */
MGUARDDEF mguard_status mguard_weak_set(mguard_weak *t, const void *key, const void *value);
/* The value under key, NULL when absent (or bad input). Valid: a value of
   8 bytes or less lies in the context's index, until the next call that
   may add to the context (a new key in any table, a ref, watch, tag,
   cache entry, ledger or scope change) or change t; a larger one until
   the next change to t. Read it at once or use mguard_weak_get_copy.
   Cost: one lookup (usually one group of 8 control bytes); never writes. */
MGUARDDEF void *mguard_weak_get(const mguard_weak *t, const void *key);
/* Copy key's value into out (value_size bytes): how to read a table other
   threads change. NOT_FOUND (out untouched); EINVAL for NULL or foreign t,
   logged for NULL key/out. Cost: one lookup and a copy; never writes. */
MGUARDDEF mguard_status mguard_weak_get_copy(const mguard_weak *t, const void *key, void *out);
/* true when key is in t. Cost: one lookup. */
MGUARDDEF bool mguard_weak_contains(const mguard_weak *t, const void *key);
/* Remove key's entry: its value copied into out (value_size bytes), never
   destroyed; NULL out: destroyed. NOT_FOUND (out untouched); EINVAL: NULL
   t, or NULL key (logged). Cost: one lookup, O(1) (and a copy). */
MGUARDDEF mguard_status mguard_weak_take(mguard_weak *t, const void *key, void *out);
/* Live entries; 0 for NULL. Cost: O(1). */
MGUARDDEF size_t mguard_weak_count(const mguard_weak *t);
/* Remove the entries present at the start, in insertion order, each value
   destroyed after its entry is gone (entries the destructors add stay).
   A destructor that destroys t: t is gone when this returns. NULL: no-op.
   Cost: O(entries). */
MGUARDDEF void mguard_weak_clear(mguard_weak *t);

/* Insertion order:
       mguard_weak_iter it = mguard_weak_iterate(t);
       while (mguard_weak_next(&it)) use(it.key, it.value);
   Any entry may be removed meanwhile (by callbacks too): no removed entry
   is visited, no live one skipped or repeated; added ones come last. A
   walk left paused while the context renumbers its entries (once per 2^31
   entries made at most) ends at its next step, logged (WALK_RENUMBERED).
   it.value is valid as mguard_weak_get's pointer. Not after t's destroy. */
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

/* mguard_weak_get that checks the value's size: NULL (warned) when size is
   not t's value_size. Cost: mguard_weak_get's and one compare. */
MGUARDDEF void *mguard_weak_get_sized(const mguard_weak *t, const void *key, size_t size);
/* MGUARD_WEAK_GET(t, key, double): a double *, or NULL (as above); pointer
   values: mguard_weak_set(t, key, &p), MGUARD_WEAK_GET(t, key, void *). */
#define MGUARD_WEAK_GET(t, key, type) ((type *)mguard_weak_get_sized((t), (key), sizeof(type)))

/* ==== 4. weak refs ====================================================== */

/* A plain value: copy it, store it anywhere, no destroy; all zero is the null ref. */
typedef struct mguard_ref {
    const void *obj_;
    uint64_t serial_;   /* the object's life in its context; 0: the null ref */
    uint64_t ctx_;      /* the context's id, never reused in the process */
} mguard_ref;

/* A ref to obj; the null ref for NULL ctx/obj or out of memory (logged).
   Cost: one lookup (+ insert if obj is new). */
MGUARDDEF mguard_ref mguard_ref_make(mguard_ctx *ctx, const void *obj);
/* The object, or NULL once mguard_on_destroy(obj) ran (even with a new
   object at its address). A ref of another context reads NULL, logged
   "mguard_ref_get: ref belongs to another context". Cost: one lookup. */
MGUARDDEF void *mguard_ref_get(const mguard_ctx *ctx, mguard_ref ref);
/* true for the null ref. */
MGUARDDEF bool mguard_ref_is_null(mguard_ref ref);
/* Take the caller's own reference on obj: true, or false when it is on its
   way out (count at zero). Runs under the context's lock: no mguard calls. */
typedef bool (*mguard_retain_fn)(void *obj, void *user);
/* mguard_ref_get that retains the object before any mguard_on_destroy can
   run (try_retain false: NULL). NULL try_retain: mguard_ref_get.
   Cost: one lookup and the call. */
MGUARDDEF void *mguard_ref_get_retained(const mguard_ctx *ctx, mguard_ref ref, mguard_retain_fn try_retain, void *user);

/* ==== 5. mutation trackers ============================================== */

/* Called once on the watched obj's mutation (attr as given) or death (attr
   NULL, as a mutation reported with attr NULL: name the attribute, or "*",
   where a watcher must tell them apart); the watcher is already removed:
   watch again to keep watching. obj is an identity only if an earlier
   callback of the same event on this thread destroyed it. */
typedef void (*mguard_invalidate_fn)(void *guard, const void *obj, const char *attr, void *user);

/* Invalidate guard (held weakly) on obj's next mutation or death. A watcher
   added during an invalidation waits for the next event. EEXIST: the same
   (obj, guard, fn) already waits, whatever its user (nothing changed, not
   logged; one an invalidation in progress took out does not count).
   EINVAL: NULL ctx/obj/guard/fn, obj or guard being destroyed (logged).
   ENOMEM: nothing changed. Cost: O(watchers of obj) + O(1) amortized. */
MGUARDDEF mguard_status mguard_watch(mguard_ctx *ctx, const void *obj, void *guard,
                                     mguard_invalidate_fn fn, void *user);
/* Remove every watcher of guard on obj, even ones an invalidation in progress
   of obj is about to call (not of a dead object at obj's address). NOT_FOUND:
   none (a destroyed guard's are gone already). */
MGUARDDEF mguard_status mguard_unwatch(mguard_ctx *ctx, const void *obj, const void *guard);
/* obj was mutated at file:line (file NULL: no place), for the drop reasons of
   caches (section 10; attr is copied, file is kept: a string that outlives ctx,
   as __FILE__ or mguard_intern's copy is): if watched, its count goes
   up by one and every watcher so far fires once, in registration order, and
   is dropped. Unwatched: one lookup. NULL ctx/obj: no-op.
   mguard_on_mutation(ctx, obj, attr) passes the caller's __FILE__, __LINE__. */
MGUARDDEF void mguard_on_mutation_at(mguard_ctx *ctx, const void *obj, const char *attr, const char *file, int line);
#define mguard_on_mutation(ctx, obj, attr) mguard_on_mutation_at((ctx), (obj), (attr), __FILE__, __LINE__)
/* Mutations counted by obj's tracker; 0 for an object never watched. */
MGUARDDEF uint64_t mguard_mutation_count(const mguard_ctx *ctx, const void *obj);

/* Assign a field, then mguard_on_mutation
   (write first: a watcher may destroy the object). ctx, value and objptr
   are evaluated once (objptr twice where neither typeof nor decltype
   exists: no side effects there). */
#if defined(__cplusplus)
#define MGUARD__TYPEOF(x) decltype(x)
#elif defined(__GNUC__) || defined(__clang__) || (defined(_MSC_VER) && _MSC_VER >= 1939)
#define MGUARD__TYPEOF(x) __typeof__(x)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L
#define MGUARD__TYPEOF(x) typeof(x)
#endif
#ifdef MGUARD__TYPEOF
#define MGUARD_SET_FIELD(ctx, objptr, field, value) \
    do { MGUARD__TYPEOF(objptr) mguard_sf_obj_ = (objptr); \
         mguard_sf_obj_->field = (value); \
         mguard_on_mutation((ctx), mguard_sf_obj_, #field); } while (0)
#else
#define MGUARD_SET_FIELD(ctx, objptr, field, value) \
    do { (objptr)->field = (value); mguard_on_mutation((ctx), (objptr), #field); } while (0)
#endif

/* ==== 6. generation tags ================================================ */

/* Tag obj with the current generation (from its constructor; again: moves it).
   EINVAL (logged): NULL ctx/obj, obj being destroyed; ENOMEM: nothing changed.
   Cost: one lookup. */
MGUARDDEF mguard_status mguard_gen_tag(mguard_ctx *ctx, const void *obj);
/* obj's generation, -1 when untagged. */
MGUARDDEF long mguard_gen_get(const mguard_ctx *ctx, const void *obj);
/* obj tagged in generation gen or later (current: mguard_gen_current). Never
   tagged: old, or new under strict_generations (the first one logged).
   false for NULL ctx/obj. */
MGUARDDEF bool mguard_gen_is_since(const mguard_ctx *ctx, const void *obj, long gen);
/* The current generation (starts at 0); -1 for NULL ctx. */
MGUARDDEF long mguard_gen_current(const mguard_ctx *ctx);
/* generation += 1; returns the new value (-1 for NULL ctx). At LONG_MAX
   (2^31 - 1 advances where long is 32 bits) it stays there, logged. */
MGUARDDEF long mguard_gen_advance(mguard_ctx *ctx);
/* Mark a class (any address standing for a type) dynamic. EINVAL (logged):
   NULL ctx/cls, cls being destroyed; ENOMEM: nothing changed. */
MGUARDDEF mguard_status mguard_gen_mark_class_dynamic(mguard_ctx *ctx, const void *cls);
/* cls marked dynamic, or obj tagged in the current generation (as
   mguard_gen_is_since); NULL obj: asks only of cls, NULL cls only of obj. */
MGUARDDEF bool mguard_gen_is_dynamic(const mguard_ctx *ctx, const void *obj, const void *cls);
/* Generation back to 0; every tag and class mark gone. Cost: O(objects). */
MGUARDDEF void mguard_gen_clear(mguard_ctx *ctx);

#ifndef MGUARD_NO_SCOPE
/* ==== 7. scope hierarchy tracker ======================================== */

/* Which components is the program inside (docs/guide.md, "The scope hierarchy
   tracker")? Fully qualified names ("Net.encoder.layer0"), held weakly; an
   active set that always holds the root; counters per name (self, total). */
typedef struct mguard_scope mguard_scope;

/* comp's type name ("Linear"), naming a component first seen with no known
   parent; NULL: no name. Copied when the call returns. */
typedef const char *(*mguard_scope_type_name_fn)(const void *comp, void *user);
/* Child number index (0, 1, ...) of comp: store its name (copied on return)
   and pointer and return true; false when there is none. */
typedef bool (*mguard_scope_child_fn)(const void *comp, size_t index, const char **name,
                                      const void **child, void *user);
/* The time now, in microseconds, for the trace. */
typedef double (*mguard_scope_clock_fn)(void *user);

typedef struct mguard_scope_desc {
    const char *root_name;               /* default "Global" */
    mguard_scope_type_name_fn type_name; /* optional */
    mguard_scope_child_fn child;         /* optional: named children */
    mguard_scope_clock_fn clock;         /* default: a logical clock, +1 per event */
    bool trace;                          /* record enter/exit spans (for TRACE_JSON) */
    size_t max_trace_events;             /* spans kept at most; 0: 1048576 */
    size_t max_warnings;                 /* distinct warnings remembered; 0: 4096 */
    const char *const *phases;           /* names of the phases (trace tracks), copied;
                                            default {"forward", "backward"} */
    size_t nphases;                      /* 1..MGUARD_SCOPE_MAX_PHASES; 0: the default */
    void *user;                          /* passed to every callback */
} mguard_scope_desc;
#define MGUARD_SCOPE_MAX_PHASES 16
typedef enum mguard_scope_view {
    MGUARD_SCOPE_TABLE = 0,  /* one row per name: each counter's self and total */
    MGUARD_SCOPE_TREE,       /* the same, as a tree indented by name */
    MGUARD_SCOPE_TRACE_JSON, /* the recorded spans, Chrome trace-event JSON */
    MGUARD_SCOPE_PATH        /* the open frames: "Global > Net > Net.encoder" */
} mguard_scope_view;
enum { /* what mguard_scope_clear forgets */
    MGUARD_SCOPE_CLEAR_FRAMES = 1,   /* the end of a pass: frames closed (their spans
                                        end now), just the root active, phase 0 */
    MGUARD_SCOPE_CLEAR_TRACE = 2,    /* the spans (open frames no longer recorded) */
    MGUARD_SCOPE_CLEAR_WARNINGS = 4  /* which warnings were logged (each may be once more) */
};

/* A scope tracker (NULL desc = defaults); NULL (logged) for NULL ctx or out
   of memory. mguard_ctx_destroy destroys it at the latest. Cost: O(1). */
MGUARDDEF mguard_scope *mguard_scope_create(mguard_ctx *ctx, const mguard_scope_desc *desc);
/* Destroy s; NULL or foreign: no-op. From s's own callbacks: deferred to
   the end of the outermost call into s, s refusing changes (EINVAL)
   meanwhile. Cost: O(size of s). */
MGUARDDEF void mguard_scope_destroy(mguard_scope *s);
/* comp's fully qualified name. First lookup: each child, recursively, is
   named parent + "." + child name (unless named explicitly); a component
   with no known parent gets its type name. NULL: no name, comp destroyed
   by a callback of this lookup, NULL s/comp, out of memory (logged). Lives
   until s is destroyed. Cost: one lookup; the first walks comp's subtree
   once (renaming components that had names: + O(names log names)). */
MGUARDDEF const char *mguard_scope_name(mguard_scope *s, const void *comp);
/* Name comp explicitly (fqn copied); no walk overwrites it, and what lies
   under comp follows a rename (explicit names stay). Open frames keep
   their names. EINVAL: NULL s/comp, NULL or empty fqn. ENOMEM: nothing
   changed. Cost: one lookup; renaming: O(names log names + subtree). */
MGUARDDEF mguard_status mguard_scope_set_name(mguard_scope *s, const void *comp, const char *fqn);
/* Place child under parent as name (copied), as parent's walk would, and follow
   parent's renames; replaces an explicit name or earlier placement. EINVAL
   (logged; NULL s silent): NULL parent/child, child == parent, NULL or empty
   name, child destroyed by parent's lookup. NOT_FOUND (logged): parent has no
   name. ENOMEM: nothing changed. Cost: as set_name, plus parent's lookup. */
MGUARDDEF mguard_status mguard_scope_attach(mguard_scope *s, const void *parent, const void *child, const char *name);
/* Forget the names comp's walk gave below it (not attached, explicit or
   open-frame ones); comp's next lookup walks again. EINVAL: NULL s/comp;
   NOT_FOUND: comp has no name; ENOMEM: nothing changed. No callback.
   Cost: O(names log names + subtree + depth). */
MGUARDDEF mguard_status mguard_scope_forget(mguard_scope *s, const void *comp);
/* comp starts: push a frame; its name becomes (once more) active.
   NOT_FOUND (logged): no name (a comp in its own death has none: logged
   as such); EINVAL: NULL s/comp, or (logged) comp destroyed by a callback
   of this call (a newcomer at its address is another); ENOMEM: nothing
   changed. A walk skips, with a warning, a child in its own death.
   Cost: one lookup (+ first walk; a full trace: + O(warnings remembered)). */
MGUARDDEF mguard_status mguard_scope_enter(mguard_scope *s, const void *comp);
/* comp ends: pop its innermost frame; its name leaves the active set with
   its last frame. Not active: NOT_FOUND, warned; destroyed by the clock of
   this call (its death closed its frames): NOT_FOUND. Not innermost: popped
   anyway, OK, warned. Each warning once (max_warnings). EINVAL: NULL
   s/comp, s destroyed by the clock. Cost: O(depth); a warning + O(warnings
   remembered). */
MGUARDDEF mguard_status mguard_scope_exit(mguard_scope *s, const void *comp);
/* fqn is active (the root always is); false for NULL. Cost: a hash of fqn and one lookup. */
MGUARDDEF bool mguard_scope_is_active(const mguard_scope *s, const char *fqn);
/* The active set, root first, each once, in order of entry: up to cap into
   out; returns how many there are (0 for NULL s). Cost: O(names returned). */
MGUARDDEF size_t mguard_scope_parents(const mguard_scope *s, const char **out, size_t cap);
/* The stack, innermost frame first (each recursion level counts), the root
   last: up to cap names into out; returns open frames + 1 (0 for NULL s).
   frames(s, &cur, 1) gives the current name, frames(s, NULL, 0) - 1 the
   depth. Cost: O(names returned). */
MGUARDDEF size_t mguard_scope_frames(const mguard_scope *s, const char **out, size_t cap);
/* Frames entered from now on get phase number phase of desc.phases. EINVAL
   for NULL s, logged for phase >= the number of phases or s being destroyed
   (by its own callback). Cost: O(1). */
MGUARDDEF mguard_status mguard_scope_set_phase(mguard_scope *s, size_t phase);
/* The current phase (0 after create and CLEAR_FRAMES; 0 for NULL s). Cost: O(1). */
MGUARDDEF size_t mguard_scope_phase(const mguard_scope *s);
/* Add amount to counter ("flops"): to the total of every active name, root
   included, once each, and to the self of the innermost frame's name (the
   root's with none open). A count stays with the name it was added under:
   a component renamed or moved under another parent counts on under its
   new name, its old name keeps what it had; a total past DBL_MAX reads inf.
   EINVAL: NULL s, NULL or empty counter, amount not finite. ENOMEM:
   nothing changed. Cost: O(active names + counters). */
MGUARDDEF mguard_status mguard_scope_add(mguard_scope *s, const char *counter, double amount);
/* counter's total for fqn; its self into *self unless self is NULL. 0 (and
   *self 0) when unknown or NULL. Cost: a hash of fqn, a lookup, O(counters). */
MGUARDDEF double mguard_scope_counter(const mguard_scope *s, const char *fqn, const char *counter, double *self);
/* Render view into buf, snprintf-style: at most cap bytes, NUL-terminated
   when cap > 0 (buf may be NULL when cap is 0); returns the full length
   without the NUL (a big trace: ask with cap 0, allocate, call again).
   TABLE/TREE: every name ever entered with each counter's self and total;
   TRACE_JSON: the spans as a Chrome trace-event file. 0 for NULL s, and
   (logged) an unknown view, or TREE, or TABLE past 16 counters, out of
   memory. Cost: O(names x counters + name
   lengths) (TREE: + a hash per dotted prefix), O(spans), PATH O(depth). */
MGUARDDEF size_t mguard_scope_format(mguard_scope *s, mguard_scope_view view, char *buf, size_t cap);
/* Forget what flags (MGUARD_SCOPE_CLEAR_*) name; names and counters stay.
   EINVAL: NULL s, s being destroyed or (logged) an unknown flag. Cost:
   O(depth + warnings). */
MGUARDDEF mguard_status mguard_scope_clear(mguard_scope *s, unsigned flags);
#endif /* MGUARD_NO_SCOPE */

#ifndef MGUARD_NO_DYN
/* ==== 8. dynamism tracker =============================================== */

/* Which dimensions change across example inputs (docs/guide.md, "The dynamism
   tracker")? Shapes (a scalar: its 1-element shape) observed at key paths
   ("L['x']"); a position varies when two observations disagree. */
typedef struct mguard_dyn mguard_dyn;

/* A tracker; NULL (logged) for NULL ctx or out of memory; destroyed by
   mguard_ctx_destroy at the latest. Cost: O(1). */
MGUARDDEF mguard_dyn *mguard_dyn_create(mguard_ctx *ctx);
/* Destroy d; NULL or foreign: no-op. Cost: O(paths). */
MGUARDDEF void mguard_dyn_destroy(mguard_dyn *d);
/* Record shape dims[0..ndim) at path ("L.x" is "L['x']":
   mguard_dyn_normalize_name). A larger rank adds positions; a position
   seen once stays static. EINVAL: NULL d, NULL or empty path, NULL dims
   with ndim > 0, ndim over 2^31 - 1. ENOMEM: nothing changed. Cost: one hash of path +
   O(ndim); a new path + O(groups). */
MGUARDDEF mguard_status mguard_dyn_observe(mguard_dyn *d, const char *path, const int64_t *dims, size_t ndim);
/* Record scalar value at path, compared as Python numbers (2 == 2.0; NaN
   equals NaN here). As mguard_dyn_observe. */
MGUARDDEF mguard_status mguard_dyn_observe_scalar(mguard_dyn *d, const char *path, double value);
/* path was observed (false for NULL d/path, and, logged, when a path that
   normalizes to 256 bytes or more finds no memory); its rank (the largest
   seen, 0 when unknown) into *rank and whether each of varies[0..cap)
   varies (false past the rank or when unknown), unless NULL. dims(d, p, NULL, v, k + 1)
   && v[k]: position k varies. Cost: one hash of path + O(cap). */
MGUARDDEF bool mguard_dyn_dims(const mguard_dyn *d, const char *path, size_t *rank, bool *varies, size_t cap);
/* Paths observed; 0 for NULL. */
MGUARDDEF size_t mguard_dyn_count(const mguard_dyn *d);

/* Every path by top-level argument (as mguard_dyn_format), in order seen:
       mguard_dyn_iter it = mguard_dyn_iterate(d);
       while (mguard_dyn_next(&it)) use(it.group, it.path, it.varies, it.rank);
   Paths present at the start are visited once; new ones may or may not be.
   Pointers valid until the next observation (strings: until d's destroy). */
typedef struct mguard_dyn_iter {
    const char *group;        /* top-level argument name: "x" for L['x'][0] */
    const char *path;         /* the normalized path: "L['x'][0]" */
    const bool *varies;   /* rank entries */
    size_t rank;
    bool is_shape;           /* first observed with mguard_dyn_observe */
    /* private */
    const mguard_dyn *d_;
    uint32_t group_, rec_;
} mguard_dyn_iter;
/* Before the first path (empty for NULL or foreign d). Paths observed
   meanwhile may or may not be visited (a walk that adds a path at each step
   need not end). Not after d's destroy. Cost: O(1). */
MGUARDDEF mguard_dyn_iter mguard_dyn_iterate(const mguard_dyn *d);
/* Next path: true, fields set; false at the end or for NULL. Cost: O(1). */
MGUARDDEF bool mguard_dyn_next(mguard_dyn_iter *it);
/* Render the result in Python dict notation into buf,
   {'x': {"L['x']": (False, True)}, 'y': {"L['y']['z']": (True,)}},
   snprintf-style. 0 for NULL d. Cost: O(total rank). */
MGUARDDEF size_t mguard_dyn_format(const mguard_dyn *d, char *buf, size_t cap);
/* Each '.' before an identifier ([A-Za-z_][A-Za-z0-9_]*) becomes a subscript:
   "L.x.y" gives "L['x']['y']"; other dots stay. snprintf-style (in and out
   must not overlap). NULL in: 0 ("" if cap > 0). Cost: O(length). */
MGUARDDEF size_t mguard_dyn_normalize_name(const char *in, char *out, size_t cap);
#endif /* MGUARD_NO_DYN */

#ifndef MGUARD_NO_LEDGER
/* ==== 9. side-effects ledger ============================================= */

/* The writes a speculative run would make to live objects, recorded
   instead of made: tracked objects, attribute stores and deletions,
   records, hooks; cloned cheaply, compared, diffed, pruned, applied. The
   ledger order: objects as tracked, each one's writes as first recorded.
   A death drops what referred to the object, from every clone, warned.
   See docs/guide.md, "The side-effects ledger". */
typedef struct mguard_ledger mguard_ledger;

typedef enum mguard_ledger_kind {
    MGUARD_LEDGER_EXISTING = 1, /* existed before the run; attribute writes recorded */
    MGUARD_LEDGER_NEW,          /* created during the run; always modified */
    MGUARD_LEDGER_CONTAINER     /* existing container; only a modified flag */
} mguard_ledger_kind;

/* Given to a refs hook: call it once for each object the value refers to. */
typedef void (*mguard_ledger_visit_fn)(const void *obj, void *visit_ctx);

/* The ledger's hooks (optional; user: the desc's). p: anything it holds. */
typedef void (*mguard_ledger_retain_fn)(void *p, void *user);
typedef void (*mguard_ledger_release_fn)(void *p, void *user);
typedef bool (*mguard_ledger_equal_fn)(const void *a, const void *b, void *user);
typedef void (*mguard_ledger_refs_fn)(const void *value, mguard_ledger_visit_fn visit, void *visit_ctx, void *user);
/* Write p's text, NUL-terminated, into buf (bufsize bytes, at least 2;
   nothing written: the default text). obj.attr: the write p is the value
   of (size: a sized value's bytes, else 0); an object's label: (p, NULL,
   p, 0); a record's payload or a hook's function: (NULL, NULL, p, 0). */
typedef void (*mguard_ledger_format_fn)(const void *obj, const char *attr, const void *p, size_t size,
                                        char *buf, size_t bufsize, void *user);

/* Sized values (desc.value_size > 0): inline, up to this many bytes. A
   value's type says its sizes and its default text. */
#define MGUARD_LEDGER_MAX_VALUE 16
typedef enum mguard_ledger_value_type {
    MGUARD_LEDGER_VALUE_BYTES = 0,  /* 1..MAX bytes, hex "0x0a00..." (in memory order) */
    MGUARD_LEDGER_VALUE_INT,        /* signed integer of 1, 2, 4 or 8 bytes */
    MGUARD_LEDGER_VALUE_UINT,       /* unsigned integer of 1, 2, 4 or 8 bytes */
    MGUARD_LEDGER_VALUE_DOUBLE,     /* double (8 bytes) or float (4), "%.17g" / "%.9g" */
    MGUARD_LEDGER_VALUE_BOOL,       /* 1 byte, "false" (0) or "true" */
    MGUARD_LEDGER_VALUE_PTR         /* a pointer (never held or watched: a write of it
                                       outlives its pointee, apply writes it back), "%p" */
} mguard_ledger_value_type;

typedef struct mguard_ledger_desc {
    /* Starts holding p (once per distinct pointer: values, tracked objects,
       payloads and hook values alike), before the storing call returns;
       under the lock: no mguard calls (docs/guide.md). */
    mguard_ledger_retain_fn retain;
    /* ... and stops holding it. Never called for an object being destroyed. */
    mguard_ledger_release_fn release;
    /* equal/diff's value equality (different non-NULL pointers); default ==. */
    mguard_ledger_equal_fn equal;
    /* prune: visit(obj, visit_ctx) each pointer value refers to (alive
       until prune returns); default: nothing but itself. */
    mguard_ledger_refs_fn refs;
    mguard_ledger_format_fn format_value;  /* diff text of a value; "%p" */
    mguard_ledger_format_fn format_object; /* diff text of an object; "%p" */
    bool plain_values;  /* values are not objects: their death is not watched */
    /* 0: values are pointers; 1..MGUARD_LEDGER_MAX_VALUE: values are bytes
       (that many for unbound attributes, a field's own for bound ones),
       copied inline, handed out as pointers to bytes, memcmp unless equal,
       never held or watched (docs/guide.md, "Values a C program has"). */
    size_t value_size;
    mguard_ledger_value_type value_type;   /* sized values: the type of unbound attributes */
    void *user;
} mguard_ledger_desc;

/* A C struct field for mguard_ledger_set_fields, with the type of its values:
   {MGUARD_LEDGER_FIELD(account, balance, MGUARD_LEDGER_VALUE_INT), ...}. */
typedef struct mguard_ledger_field {
    const char *name;
    size_t offset, size;
    mguard_ledger_value_type type;
} mguard_ledger_field;
#define MGUARD_LEDGER_FIELD(type, member, vtype) { #member, offsetof(type, member), sizeof(((type *)0)->member), vtype }

/* What the ledger knows about one tracked object. */
typedef struct mguard_ledger_entry {
    const void *obj;
    mguard_ledger_kind kind;
    const char *source;   /* interned, valid while obj's entry stays; the class source for a NEW object; may be NULL */
    bool modified;        /* NEW: always; EXISTING: with a pending write; CONTAINER: marked */
    size_t writes;        /* pending attribute writes, deletions included */
} mguard_ledger_entry;

/* An empty ledger (NULL desc: no hooks); NULL (logged): NULL ctx, out of memory. Cost: O(1). */
MGUARDDEF mguard_ledger *mguard_ledger_create(mguard_ctx *ctx, const mguard_ledger_desc *desc);
/* Destroy L and release what it holds. NULL: no-op; twice: logged; from L's
   callbacks: done when that operation returns. Cost: O(size of L) + releases. */
MGUARDDEF void mguard_ledger_destroy(mguard_ledger *L);

/* Track obj as kind, with source (copied, optional; a NEW object's: its
   class's). EEXIST: tracked already; EINVAL (logged): NULL L/obj, dying
   obj, unknown kind; ENOMEM. Cost: O(1) amortized + a hash of source. */
MGUARDDEF mguard_status mguard_ledger_track(mguard_ledger *L, const void *obj, mguard_ledger_kind kind, const char *source);
/* obj's entry into *out (NULL out: only whether obj is tracked). NOT_FOUND:
   untracked; EINVAL (logged): NULL L/obj. Cost: one lookup. */
MGUARDDEF mguard_status mguard_ledger_get(const mguard_ledger *L, const void *obj, mguard_ledger_entry *out);
/* Mark a CONTAINER entry modified. EINVAL (logged): untracked, another kind, NULL. Cost: one lookup. */
MGUARDDEF mguard_status mguard_ledger_mark_modified(mguard_ledger *L, const void *obj);

/* Record obj.attr = value (attr copied; value may be NULL in a ledger of
   pointer values, EINVAL in a sized one). An overwrite
   keeps its place, releasing the old value. A sized ledger copies the
   attribute's size and type: its field's (set_fields), else the desc's.
   EINVAL (logged): untracked obj, CONTAINER entry, NULL L/obj/attr, dying
   value. ENOMEM: nothing changed. Cost: a hash of attr + O(1) amortized +
   O(fields of obj). */
MGUARDDEF mguard_status mguard_ledger_store_attr(mguard_ledger *L, const void *obj, const char *attr, void *value);
/* Record the deletion of obj.attr (replacing a pending value). Statuses and cost as store_attr. */
MGUARDDEF mguard_status mguard_ledger_delete_attr(mguard_ledger *L, const void *obj, const char *attr);
/* The pending write only (the real field never read): OK and *value;
   DELETED or NOT_FOUND (nothing pending, untracked; logged unless attr is
   bound or value is NULL) with *value NULL; EINVAL (logged): CONTAINER
   entry, NULL L/obj/attr. value NULL: only the status (any attribute
   pending: the entry's writes). Sized values point into L: valid until L
   changes (mguard_ledger_read copies). Never allocates. Cost: a hash of
   attr + two lookups. */
MGUARDDEF mguard_status mguard_ledger_pending(const mguard_ledger *L, const void *obj, const char *attr, void **value);
/* obj's plain fields (the table is not copied: it must outlive L and its
   clones): apply writes them directly (a deletion zeroes), read reads them
   when nothing is pending. On a sized ledger each field has its own size
   and type; a pointer ledger's (value_size 0) fields are pointers: for a
   struct of mixed fields, set any value_size (the unbound attributes').
   n 0 unbinds; clones copy the binding. EINVAL (logged, nothing changed):
   untracked, CONTAINER, NULL L/obj, NULL fields with n > 0, n over
   4294967295, a NULL name, a size its type does not allow, a pending write
   of obj whose size or type the new binding would change. Cost: O(n x (1 + pending writes of obj)). */
MGUARDDEF mguard_status mguard_ledger_set_fields(mguard_ledger *L, const void *obj, const mguard_ledger_field *fields, size_t n);
/* Read through: obj.attr as after apply, copied into out (the attribute's
   size: its field's, else the value size): OK (pending, or the field when
   nothing is); DELETED, out zeroed; NOT_FOUND, logged: neither bound nor
   pending (out zeroed), untracked (out untouched); EINVAL (logged):
   CONTAINER, NULL. Never allocates. Cost: as pending + O(fields of obj). */
MGUARDDEF mguard_status mguard_ledger_read(const mguard_ledger *L, const void *obj, const char *attr, void *out);

/* L's sizes. Nothing modified, no records, no hooks: apply would do nothing. */
typedef struct mguard_ledger_stats {
    size_t entries;       /* tracked objects */
    size_t modified;      /* ... modified ones (as an entry's modified) */
    size_t writes;        /* pending attribute writes, deletions included */
    size_t records;
    size_t hooks;
    size_t storage_bytes; /* what a clone allocates and copies */
} mguard_ledger_stats;
/* Copy L's sizes into out. EINVAL (logged) for NULL L/out. Cost: O(1). */
MGUARDDEF mguard_status mguard_ledger_get_stats(const mguard_ledger *L, mguard_ledger_stats *out);

/* What a walk visits, in the ledger order. */
typedef enum mguard_ledger_walk {
    MGUARD_LEDGER_WALK_ENTRIES = 1, /* the tracked objects */
    MGUARD_LEDGER_WALK_MODIFIED,    /* the modified ones */
    MGUARD_LEDGER_WALK_WRITES,      /* one object's pending writes */
    MGUARD_LEDGER_WALK_RECORDS,     /* the records (the reference's save_for_backward list) */
    MGUARD_LEDGER_WALK_HOOKS        /* the hooks, in registration order */
} mguard_ledger_walk;
/* A walk, its fields set by what it visits:
       mguard_ledger_iter it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_MODIFIED, NULL);
       while (mguard_ledger_next(&it)) {
           mguard_ledger_iter w = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_WRITES, it.obj);
           while (mguard_ledger_next(&w)) use(w.attr, w.value, w.deleted);
       }
       it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_RECORDS, NULL);
       while (mguard_ledger_next(&it)) use(it.tag, it.payload);
   L may change meanwhile: nothing removed is returned, nothing twice,
   nothing left skipped; new items come last; after a restore, the
   checkpoint's items recorded after the last one returned (the order is
   the context's: no two ledgers' items share a place). Not after L's destroy. The
   strings live while L holds them (thread-safe context: as the context). */
typedef struct mguard_ledger_iter {
    const void *obj;            /* objects, writes: the object; hooks: the hooked object */
    mguard_ledger_kind kind;    /* objects: its kind */
    const char *source;         /* objects: its source */
    bool modified;              /* objects: as the entry's */
    const char *attr;           /* writes: the attribute */
    void *value;                /* writes: the value (NULL for a deletion) */
    bool deleted;               /* writes: a pending deletion */
    const char *tag;            /* records: the tag (interned) */
    void *payload;              /* records: the payload (may be NULL) */
    int id;                     /* hooks: the id */
    const char *name;           /* hooks: the name (interned; may be NULL) */
    void *fn;                   /* hooks: the hook itself, a value */
    /* private */
    const mguard_ledger *l_;
    uint64_t seq_, epoch_, wseq_;
    uint32_t pos_, mode_;
} mguard_ledger_iter;
/* Before the first of what (obj: WRITES' object, else unused). Empty: NULL
   L, WRITES of NULL obj, an unknown what (logged). Cost: O(1). */
MGUARDDEF mguard_ledger_iter mguard_ledger_iterate(const mguard_ledger *L, mguard_ledger_walk what, const void *obj);
/* Step a walk: true, fields set; false at the end or for NULL. Cost: O(1)
   amortized (after a removal: writes O(writes of obj), else O(log n)). */
MGUARDDEF bool mguard_ledger_next(mguard_ledger_iter *it);

/* Append a record: tag (copied) and payload (a value or NULL). EINVAL
   (logged): NULL L/tag, dying payload; ENOMEM. Cost: O(1) amortized. */
MGUARDDEF mguard_status mguard_ledger_record(mguard_ledger *L, const char *tag, void *payload);
/* Register hook fn (a value) on obj as name (copied, optional); *id: the
   smallest unused integer >= the live hooks. EINVAL (logged): NULL
   L/obj/id, dying obj/fn; ENOMEM. Cost: O(hooks), O(hooks^2) worst. */
MGUARDDEF mguard_status mguard_ledger_register_hook(mguard_ledger *L, const void *obj, const char *name, void *fn, int *id);
/* Remove hook id. NOT_FOUND when absent, EINVAL for NULL L. O(hooks). */
MGUARDDEF mguard_status mguard_ledger_remove_hook(mguard_ledger *L, int id);

/* An independent copy of L, same hooks (a checkpoint); values shared,
   retained once by the copy. NULL (logged): NULL/dying L, out of memory.
   Cost: one allocation of stats' storage_bytes, a copy of each array, a hold
   of each distinct string its entries and writes name, of each tag and hook
   name + retains. */
MGUARDDEF mguard_ledger *mguard_ledger_clone(const mguard_ledger *L);
/* Make L equal to checkpoint, keeping L's hooks (retain gains, release
   losses). EINVAL (logged): NULL/dying, other contexts, values not alike
   (value_size; value_type if sized, plain_values if not); ENOMEM: nothing
   changed. Cost: a memcpy per array + O(held pointers and strings). */
MGUARDDEF mguard_status mguard_ledger_restore(mguard_ledger *L, const mguard_ledger *checkpoint);
/* Same objects (kind, source, modified), writes (a's equal), records in
   order, hooks by id; object and write order aside. false for NULL, other
   contexts, a ledger the hook changed (logged). Cost: O(1) for an unchanged
   clone, else O(size) + equal calls. */
MGUARDDEF bool mguard_ledger_equal(const mguard_ledger *a, const mguard_ledger *b);

/* One difference between two ledgers (a: the old one, b: the new one). */
typedef enum mguard_ledger_diff_kind {
    MGUARD_LEDGER_DIFF_OBJECT_REMOVED = 1, /* tracked in a only */
    MGUARD_LEDGER_DIFF_OBJECT_ADDED,       /* tracked in b only */
    MGUARD_LEDGER_DIFF_OBJECT_CHANGED,     /* kind, source or a container's mark differ
                                              (other objects' modified flag follows
                                              from their writes: attribute items) */
    MGUARD_LEDGER_DIFF_ATTR_REMOVED,       /* pending write in a only */
    MGUARD_LEDGER_DIFF_ATTR_ADDED,         /* pending write in b only */
    MGUARD_LEDGER_DIFF_ATTR_CHANGED,       /* both; value, size, type or deletion differs */
    MGUARD_LEDGER_DIFF_RECORD_REMOVED,     /* record index in a only */
    MGUARD_LEDGER_DIFF_RECORD_ADDED,       /* record index in b only */
    MGUARD_LEDGER_DIFF_RECORD_CHANGED,     /* tag or payload differ */
    MGUARD_LEDGER_DIFF_HOOK_REMOVED,       /* hook id in a only */
    MGUARD_LEDGER_DIFF_HOOK_ADDED,         /* hook id in b only */
    MGUARD_LEDGER_DIFF_HOOK_CHANGED        /* object, name or function differ */
} mguard_ledger_diff_kind;
/* One side of a difference; present is false on the side that lacks it. */
typedef struct mguard_ledger_diff_side {
    bool present;
    mguard_ledger_kind kind;    /* objects */
    const char *source;         /* objects */
    bool modified;              /* objects */
    const char *name;           /* attributes: attr; records: tag; hooks: name */
    void *value;                /* attributes: value; records: payload; hooks: fn */
    bool deleted;               /* attributes: a pending deletion */
    size_t size;                /* attributes, sized ledgers: the value's size and type */
    mguard_ledger_value_type type;
    const void *obj;            /* hooks: the hooked object */
} mguard_ledger_diff_side;
typedef struct mguard_ledger_diff_item {
    mguard_ledger_diff_kind what;
    const void *obj;            /* objects and attributes: the object */
    const char *attr;           /* attributes: the attribute */
    long index;                 /* records: position; hooks: id; else -1 */
    mguard_ledger_diff_side a, b;
} mguard_ledger_diff_item;
typedef struct mguard_ledger_diff_result mguard_ledger_diff_result;

/* Every difference, in the ledger order, as items and text (one line each, through
   each side's format hooks); free *out with mguard_ledger_diff_free. Items' values
   are not held. EINVAL (logged): NULL, other contexts, a ledger a hook changed;
   ENOMEM. Cost: O(1) for an unchanged clone, else O(size) + hook calls. */
MGUARDDEF mguard_status mguard_ledger_diff(const mguard_ledger *a, const mguard_ledger *b, mguard_ledger_diff_result **out);
/* The items (*count of them; NULL and 0 when equal or for NULL d), valid
   until freed. count may be NULL. Cost: O(1). */
MGUARDDEF const mguard_ledger_diff_item *mguard_ledger_diff_items(const mguard_ledger_diff_result *d, size_t *count);
/* The text, snprintf-style (buf NULL when cap is 0): "" when equal. 0 for
   NULL d. Cost: O(length). */
MGUARDDEF size_t mguard_ledger_diff_format(const mguard_ledger_diff_result *d, char *buf, size_t cap);
/* Free a result before its context is destroyed. NULL: no-op. Cost: O(1). */
MGUARDDEF void mguard_ledger_diff_free(mguard_ledger_diff_result *d);

/* Drop every NEW object not reached (its records released) from the roots,
   EXISTING and CONTAINER objects, payloads, hooked objects and hooks, through refs
   and pending values (cycles safe). The roots, like what refs lists, must stay
   alive until prune returns (refs is asked about them). EINVAL (logged): NULL
   L, NULL roots with nroots > 0, L changed by a refs hook (nothing dropped);
   ENOMEM: nothing changed. Cost: O(size + pointers listed) + a refs call per
   pointer reached. */
MGUARDDEF mguard_status mguard_ledger_prune(mguard_ledger *L, const void *const *roots, size_t nroots);

/* Each pending write for mguard_ledger_apply; obj handed back writable. */
typedef void (*mguard_ledger_apply_fn)(void *obj, const char *attr, void *value, bool deleted, void *user);
/* Commit the pending writes in order, L unchanged: fields (set_fields)
   directly, each then reported as mguard_on_mutation(obj, attr) (watchers
   fire, caches drop), the rest through fn (whose writes are the program's
   to report), from a snapshot (fn and watchers may change L; writes whose
   object or value went are skipped). EINVAL: NULL L (silent), NULL
   fn with a non-field write (logged; nothing applied); ENOMEM: nothing
   applied. Cost: O(objects + writes + fields of the objects written). */
MGUARDDEF mguard_status mguard_ledger_apply(mguard_ledger *L, mguard_ledger_apply_fn fn, void *user);
/* Forget and release everything, keeping the memory. NULL: no-op.
   Cost: O(held pointers) with a release hook, else O(index sizes). */
MGUARDDEF void mguard_ledger_clear(mguard_ledger *L);
/* "existing", "new", "container"; "unknown" for any other value. O(1). */
MGUARDDEF const char *mguard_ledger_kind_str(mguard_ledger_kind kind);
#endif /* MGUARD_NO_LEDGER */

#ifndef MGUARD_NO_CACHE
/* ==== 10. guarded caches ================================================ */

/* Cached work never returned stale: a tuple of objects (by address) maps to
   an inline value with a destructor; the entry drops, its value destroyed
   exactly once, when a dependency (its keys, and objects or attributes
   declared) is mutated or destroyed. Compute on a miss, LRU bounds, drop
   reasons. See docs/guide.md, "Caches". The costs below hold however many
   entries share an object (a key, a dependency): past 8, an object's links
   to a cache's entries go into a table of their own (docs/design.md, "Hubs"). */
typedef struct mguard_cache mguard_cache;
typedef struct mguard_cache_job mguard_cache_job;

#define MGUARD_CACHE_MAX_KEYS 4   /* objects per key tuple */
#define MGUARD_CACHE_REASONS 16   /* drop reasons each cache remembers */
/* (keys, nkeys) from object pointers, each evaluated once, valid for the
   call: mguard_cache_get(c, MGUARD_CACHE_KEYS(&shape, &dtype)). C and C++. */
#ifdef __cplusplus
extern "C++" template <class... A> char (&mguard__nkeys(const A &...))[sizeof...(A)];
#define MGUARD_CACHE_KEYS(...) std::initializer_list<const void *>{__VA_ARGS__}.begin(), sizeof(mguard__nkeys(__VA_ARGS__))
#else
#define MGUARD_CACHE_KEYS(...) (const void *const[]){__VA_ARGS__}, (sizeof((const void *const[]){__VA_ARGS__}) / sizeof(const void *))
#endif

/* Why an entry left its cache. */
typedef enum mguard_cache_cause {
    MGUARD_CACHE_MUTATION = 1, /* a dependency was mutated */
    MGUARD_CACHE_DEATH,        /* a dependency was destroyed */
    MGUARD_CACHE_EVICTION,     /* least recently used, over capacity or max_cost */
    MGUARD_CACHE_EXPLICIT      /* mguard_cache_take, _clear or _destroy */
} mguard_cache_cause;
/* One drop: which entry, why, and what caused it. */
typedef struct mguard_cache_reason {
    mguard_cache_cause cause;
    const void *keys[MGUARD_CACHE_MAX_KEYS];   /* the entry's key tuple */
    size_t nkeys;
    const void *obj;     /* the dependency mutated or destroyed (NULL: eviction, explicit) */
    const char *attr;    /* the mutation's attribute (the context's copy) or NULL
                            (also when memory ran out for its copy) */
    const char *file;    /* where the mutation was reported (and line; the caller's string), or NULL */
    int line;
    const char *obj_name; /* obj as the context's describe named it (its copy), or
                             NULL: printed as the address */
} mguard_cache_reason;
/* An entry left its cache (why->cause: any; not a value a set or compute
   replaced, nor a stale one never stored): called once per drop in the
   phase 2 that destroys its value, just before value_dtor, why (its keys:
   the entry's) and value (writable: the destructor gets it) valid during
   the call. May call any mguard function, as value_dtor may. */
typedef void (*mguard_cache_dropped_fn)(void *value, const mguard_cache_reason *why, void *user);
/* Per-cache counters since its creation. */
typedef struct mguard_cache_stats {
    uint64_t hits;        /* get / get_or_compute found the entry */
    uint64_t misses;      /* ... did not */
    uint64_t stored;      /* entries stored (set, or a computed value kept) */
    uint64_t mutations;   /* entries dropped: a dependency mutated */
    uint64_t deaths;      /* ... destroyed */
    uint64_t evictions;   /* ... evicted (capacity, max_cost) */
    uint64_t explicit_drops; /* ... taken or cleared */
    uint64_t replaced;    /* values overwritten by a set or a later compute */
    uint64_t stale;       /* computed, not stored: a dependency changed meanwhile */
} mguard_cache_stats;
typedef struct mguard_cache_desc {
    size_t value_size;            /* bytes per value, 1..16M (required), any size;
                                     stored 8-aligned, 16-aligned from 16 bytes (where
                                     pointers are 4 bytes, up to 8 bytes: 4-aligned) */
    mguard_value_dtor value_dtor; /* optional; runs exactly once per value */
    size_t capacity;              /* 0: unbounded; else LRU eviction beyond it */
    size_t max_cost;              /* 0: none; else evict LRU while the exact
                                     total cost exceeds it */
    bool log_reasons;             /* log every drop and miss (INFO; the default
                                     logger shows them) */
    const char *name;             /* in log lines and the report (copied); default "cache" */
    void *user;                   /* passed to value_dtor and dropped */
    mguard_cache_dropped_fn dropped; /* optional: told each drop, before value_dtor */
} mguard_cache_desc;

/* On a miss, compute the value of the job's keys (mguard_cache_job_key)
   into value (value_size bytes, zeroed); declare other dependencies with
   mguard_cache_job_depend (job: valid until compute returns; after that
   it is gone, as a destroyed handle: not to be used). OK: store it; any
   other status: no value, passed on. Runs outside the lock; may call into
   the cache, even for the same key (the inner value stored first, then
   replaced by the outer one). */
typedef mguard_status (*mguard_cache_compute_fn)(mguard_cache_job *job, void *value, void *user);

/* A cache; NULL (logged) for NULL ctx/desc, value_size 0 or over 16M, out of memory. Cost: O(1). */
MGUARDDEF mguard_cache *mguard_cache_create(mguard_ctx *ctx, const mguard_cache_desc *desc);
/* Destroy c, each entry gone before its value's destructor. NULL: no-op;
   from c's own get_or_compute or clear callbacks, or while dropped values
   wait for their destructors: finished when that ends; twice: logged.
   Cost: O(positions + dependencies), as mguard_cache_clear. */
MGUARDDEF void mguard_cache_destroy(mguard_cache *c);
/* Store value (copied) under the tuple with cost, replacing an existing entry (old
   value destroyed after, its added dependencies dropped). Then evict while over
   capacity/max_cost (never the new entry). EINVAL (logged): NULL c/keys/value,
   nkeys 0 or over MGUARD_CACHE_MAX_KEYS, a NULL or dying key, c being destroyed.
   ENOMEM: nothing changed. Cost: O(nkeys) + one lookup + evictions. */
MGUARDDEF mguard_status mguard_cache_set(mguard_cache *c, const void *const *keys, size_t nkeys,
                                         const void *value, size_t cost);
/* The tuple's value or NULL (a hit or a miss; a hit becomes most recently
   used); NULL (logged) for bad keys. Valid as mguard_weak_get's (until a
   change to c; 8 bytes or less: to the context); writable (the destructor
   gets it as changed). Cost: one lookup (+ the LRU touch if bounded). */
MGUARDDEF void *mguard_cache_get(mguard_cache *c, const void *const *keys, size_t nkeys);
/* Copy the tuple's value into out: how to read a cache other threads
   change; counted as mguard_cache_get. NOT_FOUND (out untouched); EINVAL
   for NULL or foreign c, logged for bad keys or NULL out (nothing
   counted). Cost: mguard_cache_get's lookup and a copy. */
MGUARDDEF mguard_status mguard_cache_get_copy(mguard_cache *c, const void *const *keys, size_t nkeys, void *out);
/* The tuple has an entry; counts and touches nothing; false for bad input. Cost: one lookup. */
MGUARDDEF bool mguard_cache_contains(const mguard_cache *c, const void *const *keys, size_t nkeys);
/* A hit, or on a miss compute (outside the lock) and store. *status
   (optional): OK; NOT_FOUND: a dependency changed or was refused while
   compute ran, the value returned but not stored (stale; destroyed at the
   next set, take, clear, destroy or missing get_or_compute of c);
   compute's own failure (NULL); EINVAL (logged; NULL): bad input, NULL
   compute, c destroyed by a callback of the call (the value destroyed), a
   key destroyed by one before compute ran (compute not called);
   ENOMEM (NULL). The pointer is valid as mguard_cache_get's. Cost: a hit
   as mguard_cache_get; a miss, the compute and a store. */
MGUARDDEF void *mguard_cache_get_or_compute(mguard_cache *c, const void *const *keys, size_t nkeys,
                                            mguard_cache_compute_fn compute, void *user, mguard_status *status);
/* From compute: the value also depends on obj (attr NULL: any mutation;
   else one naming attr or none); twice is OK. EINVAL: NULL job, or
   (logged) NULL or dying obj (not stored then). ENOMEM: not stored.
   Cost: O(1) amortized + a hash of attr. */
MGUARDDEF mguard_status mguard_cache_job_depend(mguard_cache_job *job, const void *obj, const char *attr);
/* From compute: the entry's cost (default 0). EINVAL: NULL job. Cost: O(1). */
MGUARDDEF mguard_status mguard_cache_job_set_cost(mguard_cache_job *job, size_t cost);
/* From compute: key i of the tuple being computed; NULL past the last key
   or for NULL job. Cost: O(1). */
MGUARDDEF const void *mguard_cache_job_key(const mguard_cache_job *job, size_t i);
/* Add a dependency to a stored entry (as mguard_cache_job_depend).
   NOT_FOUND: no entry; EINVAL (logged): bad keys, NULL or dying obj (the
   entry kept as it was); ENOMEM: nothing changed. Cost: O(1) amortized. */
MGUARDDEF mguard_status mguard_cache_depend(mguard_cache *c, const void *const *keys, size_t nkeys,
                                            const void *obj, const char *attr);
/* Drop the tuple's entry (EXPLICIT): its value copied into out, neither
   destroyed, logged nor told to dropped; NULL out: destroyed, as any drop.
   NOT_FOUND (out untouched); EINVAL for bad input. Cost: O(dependencies). */
MGUARDDEF mguard_status mguard_cache_take(mguard_cache *c, const void *const *keys, size_t nkeys, void *out);
/* Drop the entries present at the start (EXPLICIT), each value destroyed
   after its entry is gone; entries the destructors store stay. NULL:
   no-op. Cost: O(positions + dependencies), positions = most entries held. */
MGUARDDEF void mguard_cache_clear(mguard_cache *c);
/* Live entries; 0 for NULL. Cost: O(1). */
MGUARDDEF size_t mguard_cache_count(const mguard_cache *c);

/* No particular order:
       mguard_cache_iter it = mguard_cache_iterate(c);
       while (mguard_cache_next(&it)) use(it.keys, it.nkeys, it.value);
   Any entry may drop meanwhile (by callbacks too): none dropped is
   visited, no live one skipped or repeated, new ones not visited. it.keys
   and it.value are valid as mguard_cache_get's. Not after c's destroy. */
typedef struct mguard_cache_iter {
    const void *const *keys; /* current entry's key tuple */
    size_t nkeys;
    void *value;             /* current entry's value */
    /* private */
    mguard_cache *c_;
    size_t pos_;
    uint64_t bound_;
} mguard_cache_iter;
MGUARDDEF mguard_cache_iter mguard_cache_iterate(mguard_cache *c);
MGUARDDEF bool mguard_cache_next(mguard_cache_iter *it);

/* Copy c's counters into out. EINVAL for NULL c/out. Cost: O(1). */
MGUARDDEF mguard_status mguard_cache_get_stats(const mguard_cache *c, mguard_cache_stats *out);
/* One line ("plans: 3 entries, 7 hits, ...; dropped: ..."), snprintf-style
   (buf NULL when cap is 0). 0 for NULL c ("" if cap > 0). Cost: O(1). */
MGUARDDEF size_t mguard_cache_format(const mguard_cache *c, char *buf, size_t cap);
/* The newest of the last MGUARD_CACHE_REASONS drops that is the tuple's
   (why a miss recomputed); reasons follow the keys' lives, not addresses
   (a dead key's address answers none). NOT_FOUND: none; EINVAL: bad input,
   NULL out. out->attr and obj_name: valid until the next change to c
   (on a thread-safe context, until its destroy). Cost: O(MGUARD_CACHE_REASONS x nkeys). */
MGUARDDEF mguard_status mguard_cache_last_reason(const mguard_cache *c, const void *const *keys, size_t nkeys,
                                                 mguard_cache_reason *out);
/* "mutation", "death", "eviction", "explicit"; "unknown" otherwise. O(1). */
MGUARDDEF const char *mguard_cache_cause_str(mguard_cache_cause cause);
/* r as one line ("mutation of 0x1234.scale at plan.c:42"; obj_name in place
   of the address when set), snprintf-style (buf NULL when cap is 0). 0 for
   NULL r ("" if cap > 0). Cost: O(1). */
MGUARDDEF size_t mguard_cache_reason_format(const mguard_cache_reason *r, char *buf, size_t cap);
#endif /* MGUARD_NO_CACHE */
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
#include <limits.h>

#ifndef MGUARD_ASSERT
#include <assert.h>
#define MGUARD_ASSERT(x) assert(x)
#endif

/* stb_ds: included once. Its warnings are not ours: silenced here only,
   with its implementation too when the file defines STB_DS_IMPLEMENTATION,
   so a tree's strict flags (-Wconversion, -Wcast-align, ...) find nothing
   with stb_ds.h on a plain -I. An option this compiler lacks is skipped. */
#ifndef INCLUDE_STB_DS_H
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#ifdef __clang__
#pragma GCC diagnostic ignored "-Wunknown-warning-option"
#else
#pragma GCC diagnostic ignored "-Wpragmas"
#endif
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wundef"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wswitch-default"
#pragma GCC diagnostic ignored "-Wpadded"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#elif defined(_MSC_VER)
#pragma warning(push, 0)
#endif
#include "stb_ds.h"
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#elif defined(_MSC_VER)
#pragma warning(pop)
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define MGUARD__MAGIC_CTX  0x6d677478u  /* "mgtx" */
#define MGUARD__MAGIC_WEAK 0x6d677774u  /* "mgwt" */
/* A magic's two low bits are flags, which the handle checks ignore. Bit 0:
   the handle is a thread-safe context's (11: the public functions lock).
   Bit 1: not the simple case (a table whose values live outside its slots, a
   cache that is bounded or logs its reasons). So the hottest reads make one
   compare: the exact magic. */
#define MGUARD__MAGIC_TS 1u
#define MGUARD__MAGIC_GENERAL 2u
#define MGUARD__MAGIC_FLAGS 3u
#define MGUARD__MAGIC_CTX_TS  (MGUARD__MAGIC_CTX | MGUARD__MAGIC_TS)
#define MGUARD__MAGIC_IS(m, magic) (((m) | MGUARD__MAGIC_FLAGS) == ((magic) | MGUARD__MAGIC_FLAGS))
#define MGUARD__DEAD       0xdeadbeefu

/* The optional sections, MGUARD_NO_SCOPE, MGUARD_NO_DYN, MGUARD_NO_LEDGER
   (stb_image's STBI_NO_* is the model): MGUARD__ADDONS when any is in,
   for what only they use (parts, text output, their debug registry). */
#if !defined(MGUARD_NO_SCOPE) || !defined(MGUARD_NO_DYN) || !defined(MGUARD_NO_LEDGER)
#define MGUARD__ADDONS 1
#endif
#if !defined(MGUARD_NO_SCOPE) || !defined(MGUARD_NO_DYN)
#define MGUARD__TRACKERS 1      /* the scope or the dynamism tracker */
#endif
#if defined(MGUARD__ADDONS) || !defined(MGUARD_NO_CACHE)
#define MGUARD__ANYPART 1       /* any add-on, the caches included */
#endif

/* ======================================================================= */
/* >>structs: the private types several sections use (a part's own: in its section) */
/* ======================================================================= */

/* ---- the lock, and how a public function is built (section 11) --------
   A thread-safe context owns a mguard__lock (ctx->lk; NULL: one thread). Each
   public mguard_<name> that touches a context has an unlocked body, the static
   mguard__<name>, which internal code calls (the lock is never taken twice).
   The list MGUARD__API declares the bodies and generates the locked variants
   (take the lock, run the body, let it go) and the public functions (>>public).
   Every call into user code goes between MGUARD__LK_OUT and MGUARD__LK_IN, so
   no callback runs under the lock and any callback may call in from any thread:
   code that keeps mguard's state across a call-out already copes with a
   re-entrant callback having changed anything, and another thread can change no
   more. Log lines are queued (the logger is user code: it must not run in the
   middle of an operation) and delivered at the next safe point by the thread
   that logged them: MGUARD__LK_OUT and the end of the public call. */
#if !defined(MGUARD_NO_PTHREADS) && (defined(__unix__) || defined(__unix) || defined(__APPLE__))
#define MGUARD__PTHREADS 1
#include <pthread.h>
#include <sched.h>
#endif

#define MGUARD__LOGQ 8        /* log lines one call holds until a safe point */
#define MGUARD__LOGLINE 512   /* bytes per line, as mguard__logf formats */

typedef struct mguard__logline {
    mguard_log_code code;
    mguard_log_fn func;
    void *user;
    char msg[MGUARD__LOGLINE];
} mguard__logline;

/* A context's log lines until the next safe point (only the lock's holder queues). */
typedef struct mguard__logq {
    uint32_t n, dropped;      /* lines queued; lines that did not fit */
    mguard__logline line[MGUARD__LOGQ];
} mguard__logq;

typedef struct mguard__lock {
    mguard_lock_fn lock_fn;
    mguard_lock_fn unlock_fn;
    void *user;
    mguard__logq *q;          /* the context's queue */
    bool *gone;               /* mguard_ctx_destroy's wrapper: set when freed */
#ifdef MGUARD__PTHREADS
    pthread_mutex_t mutex;    /* the built-in lock (user points at it) */
#endif
} mguard__lock;

/* ---- the hash index, the registry's record, the context ----------------- */

/* A pointer-keyed hash index over a dense array its user owns (interned
   strings, trackers, the debug registry): linear probing over 8-byte slots
   {hash, dense index + 1} (0: empty), load <= 1/2, deletion by backward
   shift. Entries never move with the index; a lookup never writes. */
typedef struct mguard__slot { uint32_t hash; uint32_t idx; } mguard__slot;
typedef struct mguard__index {
    mguard__slot *slots;
    size_t mask;       /* capacity - 1; slots == NULL when capacity is 0 */
    size_t used;
} mguard__index;

/* The context's index (the engine): one open-addressing table per context holding every
   weak table's entries and every registry record, keyed by (object, table id; 0: the
   registry). All of an object's slots lie on its address's probe, so its death finds
   them with no list of its own. SwissTable control bytes (a 7-bit tag, EMPTY, PENDING),
   matched 8 at a time with SWAR on 64-bit words (the hot reads' first group with SSE2
   where gcc or clang offer it). A slot holds what a hit needs: key,
   value if it fits 8 bytes (else in the table's value array), table id, position in the
   table's order (registry: serial in v, record + 1 in pos). */
#define MGUARD__KX_GROUP 8
#define MGUARD__KX_EMPTY 0x80u
#define MGUARD__KX_PENDING 0xFFu   /* a death's out-of-memory path: detached, value in place */
#define MGUARD__KX_STICKY 255u     /* an overflow count that no longer counts down */
#define MGUARD__KX_INSLOT 8        /* values of up to 8 bytes live in the slot */
typedef struct mguard__kslot {
    /* first, and 24 bytes in all where pointers are 4: the value 8-aligned everywhere */
    union { uint64_t u; void *p; const void *cp; double d; unsigned char b[8]; } v;
    const void *key;
    uint32_t tid;                 /* 0: the registry; else the table's id */
    uint32_t pos;                 /* tables: the entry's position in its order array */
#if UINTPTR_MAX <= 0xffffffffu
    uint32_t pad_;
#endif
} mguard__kslot;
/* The slots of the part that hears events (mguard__evpart) say MGUARD__TID_PART
   | an id of its own; the rest of tid and pos are its to use. */
#define MGUARD__TID_PART 0x80000000u
#define MGUARD__TID_NONE 0xffffffffu        /* no slot's id (a probe that only asks "known?") */
/* What phase 1 of an event left that part for phase 2: a list of drops, in drop
   order, by (id, position + 1) of its head and tail (the links are the part's); ev:
   the event's number when obj's name is wanted first (its name hook), or 0. */
typedef struct mguard__evq {
    uint32_t hcid, hpos, tcid, tpos;
    uint64_t ev;
} mguard__evq;
typedef struct mguard__kx {
    unsigned char *ctrl;          /* cap bytes, cap / 8 overflow counts, cap slots */
    unsigned char *ovf;           /* per group: slots whose probe went past it */
    mguard__kslot *slots;
    size_t mask;                  /* cap - 1; cap is 0 or a power of two >= 8 */
    size_t used;                  /* full and pending slots */
    size_t growth_left;           /* empty slots that may still be taken */
    size_t sparse;                /* reservations in a row finding it sparse */
} mguard__kx;

/* What the registry knows of one object, in three parts: its slot under table id 0
   (serial in v: a ref's check reads that one slot; record + 1 in pos), its record
   (generation tag, flags; 24 bytes on LP64) and, for what only some need, its side
   record (a tracker's count and watchers). A record exists only for an object that
   needs one (a pinned serial, a tracker, a tag, a class mark, a cache node): a key held
   by tables alone has none. A free record has key NULL and `side` links the free list.
   A record stays while anything refers to it or its serial was handed out (PINNED: a
   ref, a guard, a cache's drop reason); it goes only through mguard_on_destroy or when
   empty and unpinned, with its side record. */
enum {
    MGUARD__F_PINNED = 1u, MGUARD__F_TRACKER = 2u, MGUARD__F_TAGGED = 4u, MGUARD__F_CLASS_DYN = 8u,
    MGUARD__F_WLIST = 16u        /* the side record's watchers are a heap list */
};
typedef struct mguard__watcher {
    void *guard;
    uint64_t guard_serial;
    mguard_invalidate_fn fn;     /* NULL: cancelled */
    void *user;
} mguard__watcher;
typedef struct mguard__obj {
    const void *key;
    long gen;                    /* F_TAGGED: the generation of the tag */
    uint32_t flags;
    uint32_t side;               /* side record + 1, or 0; free: next free + 1 */
} mguard__obj;
/* A side record: a tracker's watchers in registration order, by its record's F_WLIST
   either `one` inline (most trackers have one; none when one.fn is NULL, all zero) or
   `list`, n in a heap block of cap >= 1 kept for reuse until the record goes. A free
   one is `vacant` (mark MGUARD__SIDE_FREE, next free + 1). 40 bytes on LP64. */
typedef struct mguard__wlist { mguard__watcher *at; uint32_t n, cap; } mguard__wlist;
typedef struct mguard__side {
    uint64_t mutations;          /* F_TRACKER: mutations counted */
    union {
        mguard__watcher one;     /* !F_WLIST */
        mguard__wlist list;      /* F_WLIST */
        struct { uint32_t mark, next; } vacant;   /* a free side record */
    } w;
} mguard__side;
#define MGUARD__SIDE_FREE 0xffffffffu
/* o's side record, or NULL. */
#define MGUARD__SIDE(ctx, o) ((o)->side ? &(ctx)->sides[(o)->side - 1] : (mguard__side *)NULL)
/* Record o's watchers (side record sd): where they lie, how many, room. */
#define MGUARD__WATCHERS(o, sd) (((o)->flags & MGUARD__F_WLIST) ? (sd)->w.list.at : &(sd)->w.one)
#define MGUARD__NWATCH(o, sd) (((o)->flags & MGUARD__F_WLIST) ? (sd)->w.list.n : (uint32_t)((sd)->w.one.fn != NULL))
#define MGUARD__WCAP(o, sd) (((o)->flags & MGUARD__F_WLIST) ? (sd)->w.list.cap : 1u)

/* A death in phase 2 (the dying list, on the C stack): obj may not be registered. */
typedef struct mguard__dying { const void *obj; uint64_t serial; struct mguard__dying *next; } mguard__dying;
/* A table's drain in progress (C stack): its bound, moved along by a renumbering
   (mguard__weak_rebase); linked both ways, since threads end theirs in any order. */
typedef struct mguard__drainf { struct mguard__drainf *prev, *next; uint64_t bound, nb; bool moved; } mguard__drainf;
/* An object not held yet, watched across one call-out (a scope's type_name
   callback): mguard_on_destroy(obj) sets died even for an unknown obj, so
   the caller does not register a dead address. On the C stack. */
typedef struct mguard__lookout { const void *obj; bool died; struct mguard__lookout *next; } mguard__lookout;
/* A ledger hook running outside a thread-safe context's lock: another
   thread's mguard_on_destroy(p) waits for it, so no hook outlives its
   object's death. On the C stack; pthreads only. */
typedef struct mguard__hookframe {
    const void *p, *q;
    struct mguard__hookframe *next;
#ifdef MGUARD__PTHREADS
    pthread_t thread;
#endif
} mguard__hookframe;
/* Watchers w[0..n) being fired (on the C stack): mguard_unwatch cancels pending ones. */
typedef struct mguard__firing {
    const void *obj;
    uint64_t obj_serial;         /* obj's life these watchers watched */
    mguard__watcher *w;
    size_t n;
    struct mguard__firing *next;
    const void *calling;         /* the guard whose callback runs now, or NULL */
    uint64_t calling_serial;
#ifdef MGUARD__PTHREADS
    pthread_t thread;            /* thread-safe contexts: the firing thread */
#endif
} mguard__firing;

#ifdef MGUARD_DEBUG
/* MGUARD_DEBUG: the context's live tables, dense in tabs, ix mapping each
   to its position + 1; hs/hix the same for the other handles, with kinds. */
typedef struct mguard__dbg_h {
    const void *h;               /* first: the index reads the key here */
    int kind;
} mguard__dbg_h;
typedef struct mguard__debug {
    mguard__index hix;
    mguard__dbg_h *hs;
    uint32_t nhs, caphs;
    struct mguard_ctx *next_live;   /* the process's live contexts */
} mguard__debug;
#endif

struct mguard_ctx {
    uint32_t magic;
    uint64_t id;                 /* process-wide, never reused: refs carry it */
    mguard_allocator alloc;
    mguard_logger log;
    mguard_describer describe;   /* mguard_ctx_desc.describe (mguard__describe) */
    mguard__kx kx;               /* every table entry and record (mguard__kx) */
    uint32_t live_objs;          /* objects known: distinct keys in kx */
    struct mguard_weak **tabs;   /* table id -> table (0 unused; free ids linked) */
    uint32_t ntabs, captabs, free_tid;
    uint64_t next_stamp;         /* table entries made in this context */
    mguard__obj *objs;           /* dense records, with free list */
    uint32_t nobjs, capobjs, live_recs, free_head;
    mguard__side *sides;         /* side records, with free list */
    uint32_t nsides, capsides, live_sides, free_side;
    uint64_t next_serial;
    long generation;
    bool strict_gen, warned_untagged; /* mguard_ctx_desc.strict_generations */
    mguard_weak *tables;         /* every live table, doubly linked */
    mguard__firing *firing;      /* invalidations in progress (C stack) */
    struct mguard__dying *dying; /* deaths in phase 2 (C stack) */
    mguard__drainf *drains;      /* tables' drains in progress (C stack) */
    mguard__lookout *lookouts;   /* objects watched across a call-out (C stack) */
    mguard__hookframe *hooking;  /* 11. ledger hooks outside the lock (C stack) */
    int in_callback;             /* user callbacks running now */
    int destroying;
    void *buried;                /* handles dead during the destroy (mguard__bury) */
    /* interned strings (for later sections) */
    mguard__index str_index;
    char **strs;
    uint32_t nstrs, capstrs;
    const char *recent[2];       /* the strings interned or found last, the latest first
                                    (a repeat costs a strcmp) */
    struct mguard__part *parts;  /* the add-ons: scope and dynamism trackers, the ledgers' root */
    struct mguard__evpart *evpart; /* the part that hears events (the caches' root), or NULL */
    size_t npslots;              /* its slots in kx */
    size_t kx_held;              /* slots of kx it holds room for */
    int hear_all;                /* > 0: it hears every event (a compute runs) */
    mguard__lock *lk;            /* 11. a thread-safe context's lock; NULL: one thread */
#ifdef MGUARD_DEBUG
    mguard__debug dbg;           /* live handles (MGUARD_DEBUG, "handle checks") */
#endif
    mguard__logq logq;           /* log lines not yet delivered (mguard__logq) */
};

/* ---- a weak table (its invariants: >>weak) ----------------------------- */
/* An entry's place in its table's order: its slot in the index and its stamp (the
   context's count of entries made, less the table's base). A removal leaves it; it is
   live while that slot names this table and position (mguard__weak_at). */
typedef struct mguard__oelem { uint32_t slot; uint32_t stamp; } mguard__oelem;

struct mguard_weak {
    uint32_t magic;
    uint32_t tid;                 /* its id in the context's index */
    mguard_ctx *ctx;
    mguard_weak *prev, *next;     /* ctx's table list */
    size_t value_size, vstride;   /* vstride: 0 when values live in the slots */
    mguard_value_dtor dtor;
    mguard_key_death_fn on_death;
    void *user;
    mguard__oelem *order;         /* order[0..len): the entries, oldest first */
    unsigned char *vals;          /* vstride != 0: entry i's value at i * vstride */
    uint32_t len, cap, live;
    uint64_t base;                /* stamps are relative to it */
    uint64_t epoch;               /* compactions so far; rebase: see mguard__weak_rebase */
    uint64_t rebased;             /* the epoch of the last rebase */
    int busy;         /* drains (clear/destroy) walking the table now */
    int pinned;       /* out-of-memory destructors running on entry bytes */
    int destroying;   /* destroy requested: new keys refused */
    int zombie;       /* destroyed while pinned: freed at unpin */
};

/* ---- handles -------------------------------------------------------------- */
/* Every handle but the context begins with its uint32_t magic number (the add-ons'
   with this header): one check (mguard__handle_ok) serves them all; the add-ons'
   handles also share one end (mguard__handle_free). A kind names a handle in the
   MGUARD_DEBUG registry and in its refusals. */
#define MGUARD__DBG_WEAK 0
#define MGUARD__DBG_SCOPE 1
#define MGUARD__DBG_DYN 2
#define MGUARD__DBG_LEDGER 3
#define MGUARD__DBG_CACHE 4     /* a cache (not an mguard__handle) */
#define MGUARD__DBG_DIFF 5      /* a ledger diff result */
typedef struct mguard__handle {
    uint32_t magic;            /* the kind's MGUARD__MAGIC_*; MGUARD__DEAD once freed */
    int kind;                  /* MGUARD__DBG_* */
    mguard_ctx *ctx;
} mguard__handle;

/* ---- parts ------------------------------------------------------------ */
/* Components as long-lived as their context (trackers, the ledgers' root),
   listed so mguard_ctx_destroy and mguard_ctx_check reach them untyped. */
typedef struct mguard__part {
    struct mguard__part *prev, *next;
    void (*destroy)(struct mguard__part *p);
    mguard_status (*check)(struct mguard__part *p);
} mguard__part;
/* The part with slots in the index (the caches' root, ctx->evpart; destroyed last) hears
   events on their objects, all while ctx->hear_all: event detaches onto q (no callout;
   no allocation on a death); phase 2 calls name first (q->ev), finish_one per drop (q->hpos). */
typedef struct mguard__evpart {
    mguard__part part;
    void (*event)(mguard_ctx *ctx, const void *obj, const char *attr, const char *file, int line, int death, mguard__evq *q);
    void (*name)(mguard_ctx *ctx, const void *obj, mguard__evq *q);
    void (*finish_one)(mguard_ctx *ctx, mguard__evq *q, void *out);
    void (*moved)(mguard_ctx *ctx, const mguard__kslot *s, size_t j);
    mguard_status (*check_slot)(mguard_ctx *ctx, const mguard__kslot *s, size_t k);
} mguard__evpart;
#define MGUARD__EV_NAME(ctx, obj, q) do { if ((q)->ev) (ctx)->evpart->name((ctx), (obj), (q)); } while (0)
#define MGUARD__EV_FINISH(ctx, q) do { while ((q)->hpos) (ctx)->evpart->finish_one((ctx), (q), NULL); } while (0)

/* ======================================================================= */
/* >>private: the lock and the callout, allocation and logging, the hash index, interned strings, parts, text output, handle checks */
/* ======================================================================= */

static void mguard__lock_acquire(mguard__lock *lk) { lk->lock_fn(lk->user); }

#define MGUARD__LOG_ITEM(code, level, fmt) { MGUARD_LOG_##level, #code, fmt },
static const struct { mguard_log_level level; const char *name, *fmt; } mguard__log_items[] = { MGUARD_LOG_ITEMS(MGUARD__LOG_ITEM) };

/* A line delivered at once: to a logger no queue serves (before the context or its lock exists). */
static void mguard__log_now(mguard_logger lg, int icode, ...)
{
    mguard_log_code code = (mguard_log_code)icode;   /* an int: va_start's parameter must not be promoted */
    char buf[MGUARD__LOGLINE];
    va_list ap;
    if (!lg.func) return;
    va_start(ap, icode);
    vsnprintf(buf, sizeof buf, mguard__log_items[code].fmt, ap);
    va_end(ap);
    lg.func(mguard__log_items[code].level, code, buf, lg.user);
}

/* Empty the queue into out: the loggers run on a copy no re-entrant call changes. */
static uint32_t mguard__logq_take(mguard__logq *q, mguard__logline *out, uint32_t *dropped)
{
    uint32_t n = q->n;
    memcpy(out, q->line, n * sizeof out[0]);
    *dropped = q->dropped;
    q->n = q->dropped = 0;
    return n;
}

static void mguard__logq_deliver(const mguard__logline *l, uint32_t n, uint32_t dropped)
{
    uint32_t i;
    for (i = 0; i < n; i++) l[i].func(mguard__log_items[l[i].code].level, l[i].code, l[i].msg, l[i].user);
    if (dropped && n) {
        mguard_logger lg = { l[n - 1].func, l[n - 1].user };
        mguard__log_now(lg, MGUARD_LOG_LINES_DROPPED, dropped, MGUARD__LOGQ);
    }
}

/* Let the lock go, then hand the queued lines to their loggers. */
static void mguard__lock_flush_release(mguard__lock *lk)
{
    mguard__logline q[MGUARD__LOGQ];
    uint32_t dropped, n = mguard__logq_take(lk->q, q, &dropped);
    lk->unlock_fn(lk->user);
    mguard__logq_deliver(q, n, dropped);
}

static void mguard__lock_release(mguard__lock *lk)
{
    if (lk->q->n) mguard__lock_flush_release(lk);
    else lk->unlock_fn(lk->user);
}

/* A default context's safe point (out of line: the common call logs nothing). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void mguard__log_flush(mguard_ctx *ctx)
{
    mguard__logline q[MGUARD__LOGQ];
    uint32_t dropped, n = mguard__logq_take(&ctx->logq, q, &dropped);
    mguard__logq_deliver(q, n, dropped);
}

/* A log line: queued until the next safe point (see mguard__logq). */
static void mguard__logq_push(mguard__logq *q, mguard_log_code code, const char *msg, mguard_log_fn func, void *user)
{
    mguard__logline *l;
    size_t len = strlen(msg);
    if (q->n == MGUARD__LOGQ) {
        q->dropped++;
        return;
    }
    l = &q->line[q->n++];
    l->code = code;
    l->func = func;
    l->user = user;
    if (len >= sizeof l->msg) len = sizeof l->msg - 1;
    memcpy(l->msg, msg, len);
    l->msg[len] = 0;
}

#ifdef MGUARD__PTHREADS
/* The lock is held for nanoseconds, a sleeper wakes in microseconds: spin first. */
static void mguard__pt_lock(void *m)
{
    int i;
    for (i = 0; i < 64; i++) {
        if (pthread_mutex_trylock((pthread_mutex_t *)m) == 0) return;
        if (i >= 16) sched_yield();
    }
    pthread_mutex_lock((pthread_mutex_t *)m);
}
static void mguard__pt_unlock(void *m) { pthread_mutex_unlock((pthread_mutex_t *)m); }
#endif

/* Every call into user code: in_callback raised (ctx_destroy refuses), lock let go. */
#define MGUARD__LK_OUT(ctx) \
    do { if ((ctx)->lk) mguard__lock_release((ctx)->lk); else if ((ctx)->logq.n) mguard__log_flush(ctx); } while (0)
#define MGUARD__LK_IN(ctx)  do { if ((ctx)->lk) mguard__lock_acquire((ctx)->lk); } while (0)
#define MGUARD__CALLOUT(ctx, call) \
    do { (ctx)->in_callback++; MGUARD__LK_OUT(ctx); call; MGUARD__LK_IN(ctx); (ctx)->in_callback--; } while (0)
/* The lines queued so far delivered now (a logger may destroy anything):
   before deciding that an object a callout will be handed is alive. */
#define MGUARD__FLUSH(ctx) do { if ((ctx)->logq.n) MGUARD__CALLOUT((ctx), (void)0); } while (0)

/* Every public function that touches a context, with the expression that finds its
   context (NULL: a handle the body refuses). X returns a value, V nothing; Q never logs
   nor calls out when MGUARD__PLAIN_<name> holds (a read that may stay a tail call). Not
   listed: functions that touch no context or shared state, and mguard_ctx_destroy
   (written out at the end). tests/check_locked.sh checks this list against the API. */
#define MGUARD__API_CORE(X, V, Q, W) \
    X(mguard_status, ctx_check, (mguard_ctx *ctx), (ctx), mguard__ctx_of_ctx(ctx)) \
    X(mguard_status, ctx_get_stats, (const mguard_ctx *ctx, mguard_ctx_stats *out), (ctx, out), mguard__ctx_of_ctx(ctx)) \
    V(on_destroy, (mguard_ctx *ctx, const void *obj), (ctx, obj), mguard__ctx_of_ctx(ctx)) \
    X(const char *, intern, (mguard_ctx *ctx, const char *s), (ctx, s), mguard__ctx_of_ctx(ctx)) \
    X(mguard_weak *, weak_create, (mguard_ctx *ctx, const mguard_weak_desc *desc), (ctx, desc), mguard__ctx_of_ctx(ctx)) \
    V(weak_destroy, (mguard_weak *t), (t), mguard__ctx_of_weak(t)) \
    W(mguard_status, weak_set, (mguard_weak *t, const void *key, const void *value), (t, key, value), mguard__ctx_of_weak(t)) \
    Q(void *, weak_get, (const mguard_weak *t, const void *key), (t, key), mguard__ctx_of_weak(t)) \
    X(void *, weak_get_sized, (const mguard_weak *t, const void *key, size_t size), (t, key, size), mguard__ctx_of_weak(t)) \
    X(mguard_status, weak_get_copy, (const mguard_weak *t, const void *key, void *out), (t, key, out), mguard__ctx_of_weak(t)) \
    Q(bool, weak_contains, (const mguard_weak *t, const void *key), (t, key), mguard__ctx_of_weak(t)) \
    W(mguard_status, weak_take, (mguard_weak *t, const void *key, void *out), (t, key, out), mguard__ctx_of_weak(t)) \
    Q(size_t, weak_count, (const mguard_weak *t), (t), mguard__ctx_of_weak(t)) \
    V(weak_clear, (mguard_weak *t), (t), mguard__ctx_of_weak(t)) \
    X(mguard_weak_iter, weak_iterate, (mguard_weak *t), (t), mguard__ctx_of_weak(t)) \
    W(bool, weak_next, (mguard_weak_iter *it), (it), mguard__ctx_of_weak_iter(it)) \
    X(mguard_ref, ref_make, (mguard_ctx *ctx, const void *obj), (ctx, obj), mguard__ctx_of_ctx(ctx)) \
    Q(void *, ref_get, (const mguard_ctx *ctx, mguard_ref ref), (ctx, ref), mguard__ctx_of_ctx(ctx)) \
    X(void *, ref_get_retained, (const mguard_ctx *ctx, mguard_ref ref, mguard_retain_fn try_retain, void *user), (ctx, ref, try_retain, user), mguard__ctx_of_ctx(ctx)) \
    X(mguard_status, watch, (mguard_ctx *ctx, const void *obj, void *guard, mguard_invalidate_fn fn, void *user), (ctx, obj, guard, fn, user), mguard__ctx_of_ctx(ctx)) \
    X(mguard_status, unwatch, (mguard_ctx *ctx, const void *obj, const void *guard), (ctx, obj, guard), mguard__ctx_of_ctx(ctx)) \
    X(uint64_t, mutation_count, (const mguard_ctx *ctx, const void *obj), (ctx, obj), mguard__ctx_of_ctx(ctx)) \
    X(mguard_status, gen_tag, (mguard_ctx *ctx, const void *obj), (ctx, obj), mguard__ctx_of_ctx(ctx)) \
    X(long, gen_get, (const mguard_ctx *ctx, const void *obj), (ctx, obj), mguard__ctx_of_ctx(ctx)) \
    X(bool, gen_is_since, (const mguard_ctx *ctx, const void *obj, long gen), (ctx, obj, gen), mguard__ctx_of_ctx(ctx)) \
    X(long, gen_current, (const mguard_ctx *ctx), (ctx), mguard__ctx_of_ctx(ctx)) \
    X(long, gen_advance, (mguard_ctx *ctx), (ctx), mguard__ctx_of_ctx(ctx)) \
    X(mguard_status, gen_mark_class_dynamic, (mguard_ctx *ctx, const void *cls), (ctx, cls), mguard__ctx_of_ctx(ctx)) \
    Q(bool, gen_is_dynamic, (const mguard_ctx *ctx, const void *obj, const void *cls), (ctx, obj, cls), mguard__ctx_of_ctx(ctx)) \
    V(gen_clear, (mguard_ctx *ctx), (ctx), mguard__ctx_of_ctx(ctx)) \
    V(on_mutation_at, (mguard_ctx *ctx, const void *obj, const char *attr, const char *file, int line), (ctx, obj, attr, file, line), mguard__ctx_of_ctx(ctx))
#ifndef MGUARD_NO_SCOPE
#define MGUARD__API_SCOPE(X, V) \
    X(mguard_scope *, scope_create, (mguard_ctx *ctx, const mguard_scope_desc *desc), (ctx, desc), mguard__ctx_of_ctx(ctx)) \
    V(scope_destroy, (mguard_scope *s), (s), mguard__ctx_of_scope(s)) \
    X(const char *, scope_name, (mguard_scope *s, const void *comp), (s, comp), mguard__ctx_of_scope(s)) \
    X(mguard_status, scope_set_name, (mguard_scope *s, const void *comp, const char *fqn), (s, comp, fqn), mguard__ctx_of_scope(s)) \
    X(mguard_status, scope_attach, (mguard_scope *s, const void *parent, const void *child, const char *name), (s, parent, child, name), mguard__ctx_of_scope(s)) \
    X(mguard_status, scope_forget, (mguard_scope *s, const void *comp), (s, comp), mguard__ctx_of_scope(s)) \
    X(mguard_status, scope_enter, (mguard_scope *s, const void *comp), (s, comp), mguard__ctx_of_scope(s)) \
    X(mguard_status, scope_exit, (mguard_scope *s, const void *comp), (s, comp), mguard__ctx_of_scope(s)) \
    X(bool, scope_is_active, (const mguard_scope *s, const char *fqn), (s, fqn), mguard__ctx_of_scope(s)) \
    X(size_t, scope_parents, (const mguard_scope *s, const char **out, size_t cap), (s, out, cap), mguard__ctx_of_scope(s)) \
    X(size_t, scope_frames, (const mguard_scope *s, const char **out, size_t cap), (s, out, cap), mguard__ctx_of_scope(s)) \
    X(mguard_status, scope_set_phase, (mguard_scope *s, size_t phase), (s, phase), mguard__ctx_of_scope(s)) \
    X(size_t, scope_phase, (const mguard_scope *s), (s), mguard__ctx_of_scope(s)) \
    X(mguard_status, scope_add, (mguard_scope *s, const char *counter, double amount), (s, counter, amount), mguard__ctx_of_scope(s)) \
    X(double, scope_counter, (const mguard_scope *s, const char *fqn, const char *counter, double *self), (s, fqn, counter, self), mguard__ctx_of_scope(s)) \
    X(size_t, scope_format, (mguard_scope *s, mguard_scope_view view, char *buf, size_t cap), (s, view, buf, cap), mguard__ctx_of_scope(s)) \
    X(mguard_status, scope_clear, (mguard_scope *s, unsigned flags), (s, flags), mguard__ctx_of_scope(s))
#else
#define MGUARD__API_SCOPE(X, V)
#endif
#ifndef MGUARD_NO_DYN
#define MGUARD__API_DYN(X, V) \
    X(mguard_dyn *, dyn_create, (mguard_ctx *ctx), (ctx), mguard__ctx_of_ctx(ctx)) \
    V(dyn_destroy, (mguard_dyn *d), (d), mguard__ctx_of_dyn(d)) \
    X(mguard_status, dyn_observe, (mguard_dyn *d, const char *path, const int64_t *dims, size_t ndim), (d, path, dims, ndim), mguard__ctx_of_dyn(d)) \
    X(mguard_status, dyn_observe_scalar, (mguard_dyn *d, const char *path, double value), (d, path, value), mguard__ctx_of_dyn(d)) \
    X(bool, dyn_dims, (const mguard_dyn *d, const char *path, size_t *rank, bool *varies, size_t cap), (d, path, rank, varies, cap), mguard__ctx_of_dyn(d)) \
    X(size_t, dyn_count, (const mguard_dyn *d), (d), mguard__ctx_of_dyn(d)) \
    X(mguard_dyn_iter, dyn_iterate, (const mguard_dyn *d), (d), mguard__ctx_of_dyn(d)) \
    X(bool, dyn_next, (mguard_dyn_iter *it), (it), mguard__ctx_of_dyn_iter(it)) \
    X(size_t, dyn_format, (const mguard_dyn *d, char *buf, size_t cap), (d, buf, cap), mguard__ctx_of_dyn(d))
#else
#define MGUARD__API_DYN(X, V)
#endif
#ifndef MGUARD_NO_LEDGER
#define MGUARD__API_LEDGER(X, V) \
    X(mguard_ledger *, ledger_create, (mguard_ctx *ctx, const mguard_ledger_desc *desc), (ctx, desc), mguard__ctx_of_ctx(ctx)) \
    V(ledger_destroy, (mguard_ledger *L), (L), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_track, (mguard_ledger *L, const void *obj, mguard_ledger_kind kind, const char *source), (L, obj, kind, source), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_get, (const mguard_ledger *L, const void *obj, mguard_ledger_entry *out), (L, obj, out), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_mark_modified, (mguard_ledger *L, const void *obj), (L, obj), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_store_attr, (mguard_ledger *L, const void *obj, const char *attr, void *value), (L, obj, attr, value), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_delete_attr, (mguard_ledger *L, const void *obj, const char *attr), (L, obj, attr), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_pending, (const mguard_ledger *L, const void *obj, const char *attr, void **value), (L, obj, attr, value), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_read, (const mguard_ledger *L, const void *obj, const char *attr, void *out), (L, obj, attr, out), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_set_fields, (mguard_ledger *L, const void *obj, const mguard_ledger_field *fields, size_t n), (L, obj, fields, n), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_get_stats, (const mguard_ledger *L, mguard_ledger_stats *out), (L, out), mguard__ctx_of_ledger(L)) \
    X(mguard_ledger_iter, ledger_iterate, (const mguard_ledger *L, mguard_ledger_walk what, const void *obj), (L, what, obj), mguard__ctx_of_ledger(L)) \
    X(bool, ledger_next, (mguard_ledger_iter *it), (it), mguard__ctx_of_ledger_iter(it)) \
    X(mguard_status, ledger_record, (mguard_ledger *L, const char *tag, void *payload), (L, tag, payload), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_register_hook, (mguard_ledger *L, const void *obj, const char *name, void *fn, int *id), (L, obj, name, fn, id), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_remove_hook, (mguard_ledger *L, int id), (L, id), mguard__ctx_of_ledger(L)) \
    X(mguard_ledger *, ledger_clone, (const mguard_ledger *L), (L), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_restore, (mguard_ledger *L, const mguard_ledger *checkpoint), (L, checkpoint), mguard__ctx_of_ledger(L)) \
    X(bool, ledger_equal, (const mguard_ledger *a, const mguard_ledger *b), (a, b), mguard__ctx_of_ledger2(a, b)) \
    X(mguard_status, ledger_diff, (const mguard_ledger *a, const mguard_ledger *b, mguard_ledger_diff_result **out), (a, b, out), mguard__ctx_of_ledger2(a, b)) \
    V(ledger_diff_free, (mguard_ledger_diff_result *d), (d), mguard__ctx_of_diff(d)) \
    X(mguard_status, ledger_prune, (mguard_ledger *L, const void *const *roots, size_t nroots), (L, roots, nroots), mguard__ctx_of_ledger(L)) \
    X(mguard_status, ledger_apply, (mguard_ledger *L, mguard_ledger_apply_fn fn, void *user), (L, fn, user), mguard__ctx_of_ledger(L)) \
    V(ledger_clear, (mguard_ledger *L), (L), mguard__ctx_of_ledger(L))
#else
#define MGUARD__API_LEDGER(X, V)
#endif
#ifndef MGUARD_NO_CACHE
#define MGUARD__API_CACHE(X, V, Q) \
    X(mguard_cache *, cache_create, (mguard_ctx *ctx, const mguard_cache_desc *desc), (ctx, desc), mguard__ctx_of_ctx(ctx)) \
    V(cache_destroy, (mguard_cache *c), (c), mguard__ctx_of_cache(c)) \
    X(mguard_status, cache_set, (mguard_cache *c, const void *const *keys, size_t nkeys, const void *value, size_t cost), (c, keys, nkeys, value, cost), mguard__ctx_of_cache(c)) \
    Q(void *, cache_get, (mguard_cache *c, const void *const *keys, size_t nkeys), (c, keys, nkeys), mguard__ctx_of_cache(c)) \
    X(mguard_status, cache_get_copy, (mguard_cache *c, const void *const *keys, size_t nkeys, void *out), (c, keys, nkeys, out), mguard__ctx_of_cache(c)) \
    X(bool, cache_contains, (const mguard_cache *c, const void *const *keys, size_t nkeys), (c, keys, nkeys), mguard__ctx_of_cache(c)) \
    X(void *, cache_get_or_compute, (mguard_cache *c, const void *const *keys, size_t nkeys, mguard_cache_compute_fn compute, void *user, mguard_status *status), (c, keys, nkeys, compute, user, status), mguard__ctx_of_cache(c)) \
    X(mguard_status, cache_job_depend, (mguard_cache_job *job, const void *obj, const char *attr), (job, obj, attr), mguard__ctx_of_job(job)) \
    X(mguard_status, cache_job_set_cost, (mguard_cache_job *job, size_t cost), (job, cost), mguard__ctx_of_job(job)) \
    X(const void *, cache_job_key, (const mguard_cache_job *job, size_t i), (job, i), mguard__ctx_of_job(job)) \
    X(mguard_status, cache_depend, (mguard_cache *c, const void *const *keys, size_t nkeys, const void *obj, const char *attr), (c, keys, nkeys, obj, attr), mguard__ctx_of_cache(c)) \
    X(mguard_status, cache_take, (mguard_cache *c, const void *const *keys, size_t nkeys, void *out), (c, keys, nkeys, out), mguard__ctx_of_cache(c)) \
    V(cache_clear, (mguard_cache *c), (c), mguard__ctx_of_cache(c)) \
    X(size_t, cache_count, (const mguard_cache *c), (c), mguard__ctx_of_cache(c)) \
    X(mguard_cache_iter, cache_iterate, (mguard_cache *c), (c), mguard__ctx_of_cache(c)) \
    X(bool, cache_next, (mguard_cache_iter *it), (it), mguard__ctx_of_cache_iter(it)) \
    X(mguard_status, cache_get_stats, (const mguard_cache *c, mguard_cache_stats *out), (c, out), mguard__ctx_of_cache(c)) \
    X(size_t, cache_format, (const mguard_cache *c, char *buf, size_t cap), (c, buf, cap), mguard__ctx_of_cache(c)) \
    X(mguard_status, cache_last_reason, (const mguard_cache *c, const void *const *keys, size_t nkeys, mguard_cache_reason *out), (c, keys, nkeys, out), mguard__ctx_of_cache(c))
#else
#define MGUARD__API_CACHE(X, V, Q)
#endif
#define MGUARD__API(X, V, Q, W) MGUARD__API_CORE(X, V, Q, W) MGUARD__API_SCOPE(X, V) MGUARD__API_DYN(X, V) MGUARD__API_LEDGER(X, V) MGUARD__API_CACHE(X, V, Q)

/* The unlocked bodies, declared from the list. */
#define MGUARD__PROTO_X(ret, name, params, args, lk) static ret mguard__##name params;
#define MGUARD__PROTO_V(name, params, args, lk) static void mguard__##name params;
MGUARD__API(MGUARD__PROTO_X, MGUARD__PROTO_V, MGUARD__PROTO_X, MGUARD__PROTO_X)
static void mguard__ctx_destroy(mguard_ctx *ctx);
#undef MGUARD__PROTO_X
#undef MGUARD__PROTO_V

/* Handle checks at every entry point ("handle checks" below). */
static bool mguard__ctx_ok(const mguard_ctx *ctx, const char *fn);
static bool mguard__ctx_can_create(mguard_ctx *ctx, const char *fn);
static bool mguard__weak_valid(const struct mguard_weak *t, const char *fn);
#ifdef MGUARD_DEBUG
/* MGUARD__DBG_OK(h, kind, fn): h is NULL or a live handle of that kind,
   else false with a log line; always true in a plain build. */
static mguard_status mguard__dbg_h_reserve(mguard_ctx *ctx);
static void mguard__dbg_h_add(mguard_ctx *ctx, const void *h, int kind);
static void mguard__dbg_h_remove(mguard_ctx *ctx, const void *h);
static bool mguard__dbg_h_live(const void *h, int kind);
static bool mguard__dbg_h_valid(const void *h, int kind, const char *fn);
#define MGUARD__DBG_OK(h, kind, fn) mguard__dbg_h_valid((h), (kind), (fn))
#else
#define MGUARD__DBG_OK(h, kind, fn) true
#endif

/* A pointer without its const (objects handed back to the program, mguard's
   own handles given as const), through a union: no -Wcast-qual. */
static void *mguard__unconst(const void *p)
{
    union { const void *c; void *m; } u;
    u.c = p;
    return u.m;
}

static void *mguard__default_realloc(void *p, size_t n, void *user) { (void)user; return realloc(p, n); }
static void mguard__default_free(void *p, void *user) { (void)user; free(p); }
/* INFO lines too: only a request makes them (a cache's log_reasons, a note of
   mguard_ctx_check), so a program that asked sees them with no logger of its own. */
static void mguard__default_log(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    static const char *const names[] = { "error", "warning", "info" };
    (void)user;
    if (level >= MGUARD_LOG_ERROR && level <= MGUARD_LOG_INFO)
        fprintf(stderr, "mguard %s [%s]: %s\n", names[level - 1], mguard__log_items[code].name, msg);
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

/* Free a dead handle (magic already MGUARD__DEAD). During its context's destroy it is
   kept, linked through its second word, until every callback has run (mguard__unbury): a
   callback calling a sibling destroyed before it meets a dead handle, never freed memory. */
static void mguard__bury(mguard_ctx *ctx, void *h)
{
    if (!ctx->destroying) {
        mguard__free(ctx, h);
        return;
    }
    memcpy((char *)h + sizeof(void *), &ctx->buried, sizeof(void *));
    ctx->buried = h;
}

static void mguard__unbury(mguard_ctx *ctx)
{
    while (ctx->buried) {
        void *h = ctx->buried;
        memcpy(&ctx->buried, (char *)h + sizeof(void *), sizeof(void *));
        mguard__free(ctx, h);
    }
}

/* Log one line: queued, never delivered mid-operation (the logger may call
   back in). ctx is const for the read-only callers; only the queue changes. */
static void mguard__log_line(const mguard_ctx *ctx, mguard_log_code code, const char *line)
{
    mguard_ctx *mctx = (mguard_ctx *)mguard__unconst(ctx);   /* never a const object: every ctx is allocated */
    mguard__logq_push(&mctx->logq, code, line, ctx->log.func, ctx->log.user);
}

/* Log code's line, its format's arguments after code (MGUARD_LOG_ITEMS). */
static void mguard__logf(const mguard_ctx *ctx, int icode, ...)
{
    mguard_log_code code = (mguard_log_code)icode;   /* as mguard__log_now */
    char buf[MGUARD__LOGLINE];
    va_list ap;
    if (!ctx || !ctx->log.func) return;
    va_start(ap, icode);
    vsnprintf(buf, sizeof buf, mguard__log_items[code].fmt, ap);
    va_end(ap);
    mguard__log_line(ctx, code, buf);
}

/* mguard_ctx_check's test: a broken invariant is logged (MGUARD_LOG_CHECK_FAILED), MGUARD_EINVAL returned. */
static mguard_status mguard__check_failed(const mguard_ctx *ctx, const char *fmt, ...)
{
    char buf[MGUARD__LOGLINE - 24];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mguard__logf(ctx, MGUARD_LOG_CHECK_FAILED, buf);
    return MGUARD_EINVAL;
}
#define MGUARD__CHECK(ctx, cond, ...) do { if (!(cond)) return mguard__check_failed((ctx), __VA_ARGS__); } while (0)

/* n * elem fits a size_t (32-bit builds; a function: no "redundant" lint on 64). */
static bool mguard__mul_fits(size_t n, size_t elem) { return elem == 0 || n <= SIZE_MAX / elem; }

/* Grow *arr (elem bytes each) to hold need elements; on failure nothing changes. */
static mguard_status mguard__reserve(const mguard_ctx *ctx, void **arr, uint32_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;
    if (need <= *cap) return MGUARD_OK;
    if (need > 0x7fffffffu) return MGUARD_ENOMEM;
    ncap = *cap ? (size_t)*cap * 2 : 4;
    while (ncap < need) ncap *= 2;
    if (ncap > 0x7fffffffu) ncap = 0x7fffffffu;
    if (!mguard__mul_fits(ncap, elem)) return MGUARD_ENOMEM;   /* 32-bit size_t: the bytes would wrap */
    p = mguard__realloc(ctx, *arr, ncap * elem);
    if (!p) return MGUARD_ENOMEM;
    *arr = p;
    *cap = (uint32_t)ncap;
    return MGUARD_OK;
}

/* ---- the hash index ---------------------------------------------------- */

#if defined(MGUARD__ANYPART) || defined(MGUARD_DEBUG)
/* The home slot is hash & mask, so the low bits must depend on every bit of
   the address: fold, multiply, fold the product's high half down (checked:
   aligned addresses at strides 8..4096 probe as a random hash). Never 0. */
static uint32_t mguard__hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    uint32_t h;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    h = (uint32_t)x;
    return h ? h : 0x9E3779B9u;
}
#endif

#if defined(MGUARD_DEBUG) || !defined(MGUARD_NO_SCOPE) || !defined(MGUARD_NO_DYN) || !defined(MGUARD_NO_LEDGER)
/* key's dense index + 1, or 0 (each dense entry begins with its key). */
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
#endif

/* Insert a slot known to be absent. Capacity must already allow it. */
static void mguard__ix_put(mguard__index *ix, uint32_t h, uint32_t idx1)
{
    size_t i = h & ix->mask;
    while (ix->slots[i].idx) i = (i + 1) & ix->mask;
    ix->slots[i].hash = h;
    ix->slots[i].idx = idx1;
    ix->used++;
}

#if defined(MGUARD__ANYPART) || defined(MGUARD_DEBUG)
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
#endif

/* Room for `need` keys at load <= 1/2; on failure nothing changes. */
static mguard_status mguard__ix_reserve(const mguard_ctx *ctx, mguard__index *ix, size_t need)
{
    size_t cap = ix->slots ? ix->mask + 1 : 0, ncap, i;
    mguard__slot *ns;
    if (need * 2 <= cap) return MGUARD_OK;
    ncap = cap ? cap : 8;
    while (need * 2 > ncap) ncap *= 2;
    if (ncap > ((size_t)1 << 31) || !mguard__mul_fits(ncap, sizeof *ns)) return MGUARD_ENOMEM;
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

/* ---- the context's index (the engine; layout: mguard__kx) --------------
   A probe visits groups of 8 at triangular distances (1, 3, 6, ... groups on:
   every group of a power-of-two table). Each group counts the slots whose probe
   went past it (F14's overflow count; 255 sticks): an insertion counts up the
   groups it passed, an erasure counts them down, and a probe ends at the first
   group counting 0. So a miss usually reads one group, and an erased slot is
   EMPTY at once: no tombstones. At most 7/8 full (growth_left). */

/* An address's hash: the low 7 bits are the tag, the rest picks the group. */
#if defined(__SIZEOF_INT128__) && (defined(__GNUC__) || defined(__clang__))
__extension__ typedef unsigned __int128 mguard__u128;
static uint64_t mguard__hash64(const void *p)
{
    /* one 64x64 product's halves folded: every address bit reaches the low half */
    mguard__u128 m = (mguard__u128)(uintptr_t)p * 0xBF58476D1CE4E5B9ull;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}
#else
static uint64_t mguard__hash64(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 32);
}
#endif

/* An empty context's index: one group of EMPTY bytes, never written (the
   first insertion allocates), so a lookup needs no "no table yet" test. */
static unsigned char mguard__kx_none[MGUARD__KX_GROUP + 1] = {
    MGUARD__KX_EMPTY, MGUARD__KX_EMPTY, MGUARD__KX_EMPTY, MGUARD__KX_EMPTY,
    MGUARD__KX_EMPTY, MGUARD__KX_EMPTY, MGUARD__KX_EMPTY, MGUARD__KX_EMPTY,
    0   /* its overflow count */
};
#define MGUARD__KX_CAP(kx) ((kx)->ctrl == mguard__kx_none ? 0 : (kx)->mask + 1)

static void mguard__kx_init(mguard__kx *kx)
{
    memset(kx, 0, sizeof *kx);
    kx->ctrl = mguard__kx_none;
    kx->ovf = mguard__kx_none + MGUARD__KX_GROUP;
    kx->mask = MGUARD__KX_GROUP - 1;
}

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__)) && !defined(MGUARD__NO_SSE2)
#include <emmintrin.h>   /* the first group's match (mguard__kx_first) */
#endif
#define MGUARD__KX_LSB 0x0101010101010101ull
#define MGUARD__KX_MSB 0x8080808080808080ull

/* A group's 8 control bytes as one word, byte i in bits 8i..8i+7. */
static uint64_t mguard__kx_load(const unsigned char *p)
{
    uint64_t g;
    memcpy(&g, p, sizeof g);
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    g = __builtin_bswap64(g);
#elif !defined(__BYTE_ORDER__)
    g = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
        (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
#endif
    return g;
}

/* Bytes equal to tag (top bit of each; a full slot just above a match may
   also show: the key compare rejects it), and EMPTY ones (not PENDING). */
static uint64_t mguard__kx_match(uint64_t g, uint32_t tag)
{
    uint64_t x = g ^ (MGUARD__KX_LSB * tag);
    return (x - MGUARD__KX_LSB) & ~x & MGUARD__KX_MSB;
}
static uint64_t mguard__kx_match_empty(uint64_t g) { return g & ~(g << 6) & MGUARD__KX_MSB; }
/* Does a probe go past the group at pos (some slot's probe did)? */
#define MGUARD__KX_ON(kx, pos) ((kx)->ovf[(pos) / MGUARD__KX_GROUP] != 0)
/* A probe ends at pos: its count is 0, or cap / 8 groups were seen (no revisit). */
#define MGUARD__KX_END(kx, pos, step) (!MGUARD__KX_ON(kx, pos) || (step) + MGUARD__KX_GROUP > (kx)->mask)

/* The slot within its group of a match mask's lowest byte. */
static size_t mguard__kx_bit(uint64_t m)
{
#if defined(__GNUC__) || defined(__clang__)
    return (size_t)((unsigned)__builtin_ctzll(m) >> 3);
#else
    size_t i = 0;
    while (!(m & 0x80u)) { m >>= 8; i++; }
    return i;
#endif
}

#define MGUARD__KX_TAG(h) ((uint32_t)((h) & 0x7f))
#define MGUARD__KX_HOME(kx, h) ((size_t)((h) >> 7) & (kx)->mask & ~(size_t)7)

/* The hot paths' one test: a live table, or a ref of a live context, of a default
   context (thread-safe contexts and MGUARD_DEBUG take the general path). */
#ifndef MGUARD_DEBUG
#define MGUARD__PLAIN_WEAK(t) ((t) && ((t)->magic | MGUARD__MAGIC_GENERAL) == (MGUARD__MAGIC_WEAK | MGUARD__MAGIC_GENERAL))
#define MGUARD__SIMPLE_WEAK(t) ((t) && (t)->magic == MGUARD__MAGIC_WEAK)   /* and its values in the slots */
#define MGUARD__PLAIN_REF(ctx, ref) ((ctx) && (ctx)->magic == MGUARD__MAGIC_CTX && (ref).ctx_ == (ctx)->id)
#define MGUARD__PLAIN_GEN(ctx) ((ctx) && (ctx)->magic == MGUARD__MAGIC_CTX && !(ctx)->strict_gen)   /* logs nothing */
#else
#define MGUARD__PLAIN_WEAK(t) ((void)(t), 0)
#define MGUARD__SIMPLE_WEAK(t) ((void)(t), 0)
#define MGUARD__PLAIN_REF(ctx, ref) ((void)(ctx), (void)(ref), 0)
#define MGUARD__PLAIN_GEN(ctx) ((void)(ctx), 0)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MGUARD__HOT __attribute__((always_inline)) inline
#define MGUARD__NOINLINE __attribute__((noinline))
#else
#define MGUARD__HOT inline
#define MGUARD__NOINLINE
#endif

/* The slot of (key, tid), or NULL. *known (if not NULL) tells whether key has a slot
   under another id (the probe then goes on past a hit until it knows). Never writes. */
static MGUARD__HOT mguard__kslot *mguard__kx_probe(const mguard__kx *kx, const void *key, uint32_t tid, uint64_t h,
                                                   bool *known, size_t step)
{
    mguard__kslot *hit = NULL;
    size_t pos = (MGUARD__KX_HOME(kx, h) + step * (step / MGUARD__KX_GROUP + 1) / 2) & kx->mask;
    uint32_t tag = MGUARD__KX_TAG(h);
    if (known) *known = false;
    for (;;) {
        uint64_t g = mguard__kx_load(kx->ctrl + pos);
        uint64_t m = mguard__kx_match(g, tag);
        for (; m; m &= m - 1) {
            mguard__kslot *s = &kx->slots[pos + mguard__kx_bit(m)];
            if (s->key != key) continue;
            if (s->tid == tid) hit = s;
            else if (known) *known = true;
            if ((hit || tid == MGUARD__TID_NONE) && (!known || *known)) return hit;   /* NONE: known is all it asks */
        }
        if (MGUARD__KX_END(kx, pos, step)) return hit;
        step += MGUARD__KX_GROUP;
        pos = (pos + step) & kx->mask;
    }
}
static MGUARD__NOINLINE mguard__kslot *mguard__kx_find(const mguard__kx *kx, const void *key, uint32_t tid, uint64_t h,
                                                       bool *known)
{
    return mguard__kx_probe(kx, key, tid, h, known, 0);
}

/* A group's slots (8 from pos: 3 lines, the slots being 64-byte aligned) fetched
   while its control bytes are read, in an index larger than a core's caches: a hit
   then waits on one miss, not two in a row (a smaller one is not worth the
   instructions). The three addresses lie inside the group's 8 slots (at least 160
   bytes), so the arithmetic stays within the array. */
#if defined(__GNUC__) || defined(__clang__)
#define MGUARD__PREFETCH(p) __builtin_prefetch(p)
#else
#define MGUARD__PREFETCH(p) ((void)(p))
#endif
#define MGUARD__KX_PREFETCH_CAP 32768
#define MGUARD__KX_PREFETCH(kx, pos) do { \
        if ((kx)->mask >= MGUARD__KX_PREFETCH_CAP - 1) { \
            const unsigned char *g_ = (const unsigned char *)&(kx)->slots[pos]; \
            MGUARD__PREFETCH(g_); \
            MGUARD__PREFETCH(g_ + 64); \
            MGUARD__PREFETCH(g_ + 128); \
        } \
    } while (0)

/* The first group's slots whose control byte is h's tag: with SSE2, one
   compare of the 8 bytes (bit i: slot i; 4 instructions fewer than SWAR: a
   dead ref's read 1.15x -> 0.98x of 90f3a0c); else SWAR (bit 8i + 7).
   MGUARD__NO_SSE2: a test knob, the differential test's SWAR build. */
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__)) && !defined(MGUARD__NO_SSE2)
#define MGUARD__KX_FIRST_MATCH(kx, pos, h) ((uint64_t)((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8( \
        _mm_loadl_epi64((const __m128i *)(const void *)((kx)->ctrl + (pos))), _mm_set1_epi8((char)((h) & 0x7f)))) & 0xffu))
#define MGUARD__KX_FIRST_BIT(m) ((size_t)__builtin_ctzll(m))
#else
#define MGUARD__KX_FIRST_MATCH(kx, pos, h) mguard__kx_match(mguard__kx_load((kx)->ctrl + (pos)), MGUARD__KX_TAG(h))
#define MGUARD__KX_FIRST_BIT(m) mguard__kx_bit(m)
#endif

/* The hot reads' first group (nearly every hit): the slot, or NULL and *more. */
static MGUARD__HOT mguard__kslot *mguard__kx_first(const mguard__kx *kx, const void *key, uint32_t tid, uint64_t h,
                                                   bool *more)
{
    size_t pos = (size_t)(h >> 7) & kx->mask & ~(size_t)7;
    uint64_t m;
    MGUARD__KX_PREFETCH(kx, pos);
    *more = false;
    for (m = MGUARD__KX_FIRST_MATCH(kx, pos, h); m; m &= m - 1) {
        mguard__kslot *s = &kx->slots[pos + MGUARD__KX_FIRST_BIT(m)];
        if (s->key == key && s->tid == tid) return s;
    }
    *more = MGUARD__KX_ON(kx, pos);
    return NULL;
}

/* The probe past its first group, out of line (no saved registers inline). */
static MGUARD__NOINLINE mguard__kslot *mguard__kx_find_rest(const mguard__kx *kx, const void *key, uint32_t tid, uint64_t h)
{
    return mguard__kx_probe(kx, key, tid, h, NULL, MGUARD__KX_GROUP);
}

/* The slot of (key, tid), or NULL (mguard__kx_find, its first group inline). */
static MGUARD__HOT mguard__kslot *mguard__kx_get(const mguard__kx *kx, const void *key, uint32_t tid)
{
    uint64_t h = mguard__hash64(key);
    bool more;
    mguard__kslot *s = mguard__kx_first(kx, key, tid, h, &more);
    return s || !more ? s : mguard__kx_probe(kx, key, tid, h, NULL, MGUARD__KX_GROUP);
}

/* A walk of one key's probe, for the cold paths (a death, the check): each
   slot whose control byte matches tag (the key's, or PENDING), group by
   group; the caller compares the key. A group's END test comes after its
   matches are consumed, so a walk may erase the slots it is given. */
typedef struct mguard__kwalk { size_t pos, step; uint64_t m; uint32_t tag; } mguard__kwalk;
static MGUARD__HOT void mguard__kwalk_start(const mguard__kx *kx, mguard__kwalk *w, uint64_t h, uint32_t tag)
{
    w->pos = MGUARD__KX_HOME(kx, h);
    w->step = 0;
    w->tag = tag;
    w->m = mguard__kx_match(mguard__kx_load(kx->ctrl + w->pos), tag);
}
/* The next candidate slot's index, or SIZE_MAX at the probe's end. */
static MGUARD__HOT size_t mguard__kwalk_next(const mguard__kx *kx, mguard__kwalk *w)
{
    for (;;) {
        if (w->m) {
            size_t k = w->pos + mguard__kx_bit(w->m);
            w->m &= w->m - 1;
            return k;
        }
        if (MGUARD__KX_END(kx, w->pos, w->step)) return SIZE_MAX;
        w->step += MGUARD__KX_GROUP;
        w->pos = (w->pos + w->step) & kx->mask;
        w->m = mguard__kx_match(mguard__kx_load(kx->ctrl + w->pos), w->tag);
    }
}

/* Does the part that hears events hear one on obj: all are heard, or a part
   slot lies on obj's probe (its first group read inline; past it, yes to be
   safe)? The test every event makes before its event hook. */
static MGUARD__HOT bool mguard__part_hears(const mguard_ctx *ctx, const void *obj)
{
    const mguard__kx *kx = &ctx->kx;
    uint64_t h, m;
    size_t pos;
    if (ctx->hear_all) return true;
    if (!ctx->npslots) return false;
    h = mguard__hash64(obj);
    pos = MGUARD__KX_HOME(kx, h);
    for (m = mguard__kx_match(mguard__kx_load(kx->ctrl + pos), MGUARD__KX_TAG(h)); m; m &= m - 1) {
        const mguard__kslot *s = &kx->slots[pos + mguard__kx_bit(m)];
        if (s->key == obj && (s->tid & MGUARD__TID_PART)) return true;
    }
    return MGUARD__KX_ON(kx, pos);
}

/* A group's slots within one cache line (8 slots of 24 bytes: 2 and 5
   straddle two). Insertions prefer them: below 3/4 full a lookup reads one. */
#define MGUARD__KX_ONELINE 0x8080008080008080ull

/* Take the first EMPTY slot of h's probe (room reserved), counting up the groups passed. */
static size_t mguard__kx_take(mguard__kx *kx, uint64_t h)
{
    size_t pos = MGUARD__KX_HOME(kx, h), step = 0, i;
    for (;;) {
        uint64_t m = mguard__kx_match_empty(mguard__kx_load(kx->ctrl + pos));
        if (m) {
            i = pos + mguard__kx_bit((m & MGUARD__KX_ONELINE) ? m & MGUARD__KX_ONELINE : m);
            break;
        }
        if (kx->ovf[pos / MGUARD__KX_GROUP] != MGUARD__KX_STICKY) kx->ovf[pos / MGUARD__KX_GROUP]++;
        step += MGUARD__KX_GROUP;
        pos = (pos + step) & kx->mask;
    }
    kx->growth_left--;
    kx->ctrl[i] = (unsigned char)MGUARD__KX_TAG(h);
    kx->used++;
    return i;
}

/* Free slot i (key hash h), counting down its probe's groups; it says tid 0 after. */
static MGUARD__HOT void mguard__kx_erase(mguard__kx *kx, size_t i, uint64_t h)
{
    size_t pos = MGUARD__KX_HOME(kx, h), step = 0, home = i & ~(size_t)(MGUARD__KX_GROUP - 1);
    while (pos != home) {
        if (kx->ovf[pos / MGUARD__KX_GROUP] != MGUARD__KX_STICKY) kx->ovf[pos / MGUARD__KX_GROUP]--;
        step += MGUARD__KX_GROUP;
        pos = (pos + step) & kx->mask;
    }
    kx->slots[i].tid = 0;
    kx->ctrl[i] = MGUARD__KX_EMPTY;
    kx->growth_left++;
    kx->used--;
}

#define MGUARD__KX_MAXLOAD(cap) ((cap) - (cap) / 8)
/* One block: control bytes, overflow counts, then 64-aligned slots. */
#define MGUARD__KX_CTRLBYTES(cap) (((cap) + (cap) / MGUARD__KX_GROUP + 15) & ~(size_t)15)
#define MGUARD__KX_BYTES(cap) (MGUARD__KX_CTRLBYTES(cap) + 63 + (cap) * sizeof(mguard__kslot))

static void mguard__kx_moved(mguard_ctx *ctx, const mguard__kslot *s, size_t j);

/* Move every slot, pending too, into ncap slots; out of memory nothing changes. */
static mguard_status mguard__kx_rehash(mguard_ctx *ctx, size_t ncap)
{
    mguard__kx *kx = &ctx->kx, nk;
    size_t i, cap = MGUARD__KX_CAP(kx);
    unsigned char *blk;
    if (ncap > ((size_t)1 << 31) || !mguard__mul_fits(ncap, sizeof(mguard__kslot) + 1)) return MGUARD_ENOMEM;
    blk = (unsigned char *)mguard__alloc(ctx, MGUARD__KX_BYTES(ncap));
    if (!blk) return MGUARD_ENOMEM;
    memset(blk, MGUARD__KX_EMPTY, ncap);
    nk.ctrl = blk;
    nk.ovf = blk + ncap;
    memset(nk.ovf, 0, ncap / MGUARD__KX_GROUP);
    i = MGUARD__KX_CTRLBYTES(ncap);
    i += (64 - ((uintptr_t)(blk + i) & 63)) & 63;   /* any block: an allocator may align to 4 */
    nk.slots = (mguard__kslot *)(void *)(blk + i);
    memset(nk.slots, 0, ncap * sizeof *nk.slots);   /* free slots say table id 0 */
    nk.mask = ncap - 1;
    nk.used = 0;
    nk.growth_left = MGUARD__KX_MAXLOAD(ncap);
    nk.sparse = 0;
    for (i = 0; i < cap; i++) {
        if (kx->ctrl[i] < MGUARD__KX_EMPTY || kx->ctrl[i] == MGUARD__KX_PENDING) {
            const mguard__kslot *s = &kx->slots[i];
            size_t j = mguard__kx_take(&nk, mguard__hash64(s->key));
            if (kx->ctrl[i] == MGUARD__KX_PENDING) nk.ctrl[j] = MGUARD__KX_PENDING;
            nk.slots[j] = *s;
            if (s->tid) mguard__kx_moved(ctx, s, j);
        }
    }
    if (cap) mguard__free(ctx, kx->ctrl);
    *kx = nk;
    return MGUARD_OK;
}

/* Room for n more slots: twice the size when EMPTY slots run short. A table a ninth
   full or less (after a storm of deaths) shrinks to about 7/16 full, so memory follows
   what the context knows (issue 23), but only after cap / 8 sparse reservations in a
   row: a table emptied and filled again would otherwise shrink at each refill's first
   key and grow back through every size. The wait is O(1) per reservation. */
static mguard_status mguard__kx_reserve(mguard_ctx *ctx, size_t n)
{
    mguard__kx *kx = &ctx->kx;
    size_t cap = MGUARD__KX_CAP(kx), need, ncap;
    n += ctx->kx_held;   /* the room held by the part that hears events stays */
    need = kx->used + n;
    if (kx->growth_left >= n) {
        if (need * 9 > cap) kx->sparse = 0;   /* the run of sparse reservations ends */
        if (cap <= 64 || need * 9 > cap) return MGUARD_OK;
        if (++kx->sparse < cap / 8) return MGUARD_OK;
        for (ncap = 8; need * 16 > ncap * 7; ncap *= 2) {}
        (void)mguard__kx_rehash(ctx, ncap);
        return MGUARD_OK;
    }
    ncap = cap ? cap * 2 : 8;
    while (MGUARD__KX_MAXLOAD(ncap) < need) ncap *= 2;
    return mguard__kx_rehash(ctx, ncap);
}

static void mguard__kx_free(mguard_ctx *ctx)
{
    if (MGUARD__KX_CAP(&ctx->kx)) mguard__free(ctx, ctx->kx.ctrl);
    mguard__kx_init(&ctx->kx);
}

/* ---- interned strings (shared by the later sections) --------------------
   Strings stored once per context, compared by address. Each counts its
   holders (intern and take add one, release drops one); the last release
   frees it, never allocating (releases happen on death paths). Strings of
   the public mguard_intern are sticky (MGUARD__STR_STICKY): for good.
   Invariants: strs[0..nstrs) dense; string i's header says position i,
   its hash and a count >= 1; the index maps it to i + 1. One block each:
   header, then the characters (what strs[] and holders point at). */
typedef struct mguard__str {
    uint32_t refs;               /* holders; MGUARD__STR_STICKY: for good */
    uint32_t pos;                /* its position in strs */
    uint32_t hash;               /* mguard__hash_str of the characters */
    uint32_t lslot;              /* a hint: its slot + 1 in the last ledger that held it
                                    (mguard__ledger_str_find checks it) */
} mguard__str;
#define MGUARD__STR_STICKY 0xffffffffu
/* The header of interned string s (the characters of its block). */
#define MGUARD__STR_HDR(s) ((mguard__str *)mguard__unconst((s) - sizeof(mguard__str)))

static uint32_t mguard__hash_str(const char *s)
{
    /* stb_ds takes a char *, and never writes through it */
    uint64_t h = stbds_hash_string((char *)mguard__unconst(s), 0x5bd1e995u);
    return (uint32_t)(h ^ (h >> 32)) | 1u;   /* 32-bit size_t: h >> 32 is 0 */
}

/* The interned copy of s (hash h), or NULL; takes no reference. */
static const char *mguard__str_find_h(const mguard_ctx *ctx, const char *s, uint32_t h)
{
    size_t i;
    if (!ctx->str_index.slots) return NULL;
    for (i = h & ctx->str_index.mask; ctx->str_index.slots[i].idx; i = (i + 1) & ctx->str_index.mask) {
        mguard__slot sl = ctx->str_index.slots[i];
        if (sl.hash == h && strcmp(ctx->strs[sl.idx - 1], s) == 0) return ctx->strs[sl.idx - 1];
    }
    return NULL;
}

static const char *mguard__str_find(const mguard_ctx *ctx, const char *s)
{
    if (ctx->recent[0] && strcmp(ctx->recent[0], s) == 0) return ctx->recent[0];
    if (ctx->recent[1] && strcmp(ctx->recent[1], s) == 0) return ctx->recent[1];
    return mguard__str_find_h(ctx, s, mguard__hash_str(s));
}

/* One more holder of interned string s (NULL: nothing); returns s. */
static const char *mguard__str_take(const char *s)
{
    if (s) {
        mguard__str *h = MGUARD__STR_HDR(s);
        if (h->refs != MGUARD__STR_STICKY) h->refs++;
    }
    return s;
}

/* s (interned) becomes the first of the two strings a repeat finds by a strcmp
   (the other: the one before it); returns s. */
static const char *mguard__str_recent(mguard_ctx *ctx, const char *s)
{
    if (ctx->recent[0] != s) {
        ctx->recent[1] = ctx->recent[0];
        ctx->recent[0] = s;
    }
    return s;
}

/* The context's copy of s, one more holder (the caller's); NULL: out of memory. */
static const char *mguard__str_intern(mguard_ctx *ctx, const char *s)
{
    uint32_t h;
    size_t len;
    mguard__str *hd;
    char *copy;
    const char *found;
    if (ctx->recent[0] && strcmp(ctx->recent[0], s) == 0) return mguard__str_take(ctx->recent[0]);
    found = mguard__str_find(ctx, s);
    if (found) return mguard__str_take(mguard__str_recent(ctx, found));
    h = mguard__hash_str(s);
    if (mguard__ix_reserve(ctx, &ctx->str_index, (size_t)ctx->nstrs + 1)) return NULL;
    if (mguard__reserve(ctx, (void **)&ctx->strs, &ctx->capstrs, (size_t)ctx->nstrs + 1, sizeof(char *))) return NULL;
    len = strlen(s);
    hd = (mguard__str *)mguard__alloc(ctx, sizeof *hd + len + 1);
    if (!hd) return NULL;
    hd->refs = 1;
    hd->pos = ctx->nstrs;
    hd->hash = h;
    hd->lslot = 0;
    copy = (char *)(void *)(hd + 1);
    memcpy(copy, s, len + 1);
    ctx->strs[ctx->nstrs++] = copy;
    mguard__ix_put(&ctx->str_index, h, ctx->nstrs);
    return mguard__str_recent(ctx, copy);
}

#ifdef MGUARD__ANYPART
/* One holder fewer of s (NULL: nothing); the last frees it. Never allocates. */
static void mguard__str_release(mguard_ctx *ctx, const char *s)
{
    mguard__str *h;
    uint32_t last;
    size_t i;
    if (!s) return;
    h = MGUARD__STR_HDR(s);
    MGUARD_ASSERT(h->refs > 0);
    if (h->refs == MGUARD__STR_STICKY || --h->refs) return;
    if (ctx->recent[0] == s) ctx->recent[0] = NULL;
    if (ctx->recent[1] == s) ctx->recent[1] = NULL;
    mguard__ix_del(&ctx->str_index, h->hash, h->pos + 1);
    last = --ctx->nstrs;
    if (h->pos != last) {
        char *m = ctx->strs[last];
        mguard__str *mh = MGUARD__STR_HDR(m);
        /* its slot names position last + 1: retarget it */
        for (i = mh->hash & ctx->str_index.mask; ctx->str_index.slots[i].idx != last + 1; i = (i + 1) & ctx->str_index.mask) {}
        ctx->str_index.slots[i].idx = h->pos + 1;
        ctx->strs[h->pos] = m;
        mh->pos = h->pos;
    }
    mguard__free(ctx, h);
}
#endif
#if !defined(MGUARD_NO_LEDGER) || !defined(MGUARD_NO_CACHE)
/* A string handed out that another thread could free: kept for good (thread-safe ctx). */
static void mguard__str_keep_if_shared(const mguard_ctx *ctx, const char *s)
{
    if (s && ctx->lk) MGUARD__STR_HDR(s)->refs = MGUARD__STR_STICKY;
}
#endif

static const char *mguard__intern(mguard_ctx *ctx, const char *s)
{
    const char *r;
    if (!mguard__ctx_ok(ctx, "mguard_intern") || !s) return NULL;
    r = mguard__str_intern(ctx, s);
    if (!r) mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_intern");
    else MGUARD__STR_HDR(r)->refs = MGUARD__STR_STICKY;
    return r;
}

#if defined(MGUARD_DEBUG) || !defined(MGUARD_NO_SCOPE) || !defined(MGUARD_NO_DYN)
/* Defined with mguard_ctx_check, further down. */
static mguard_status mguard__check_index(mguard_ctx *ctx, const mguard__index *ix, const unsigned char *dense,
                                         size_t stride, size_t len, const char *what);
#endif

/* Is h (beginning with its uint32_t magic) a live handle of this kind? The
   magic's flag bits are free (MGUARD__MAGIC_FLAGS). MGUARD_DEBUG
   asks the registry first: a destroyed handle is never read. */
static bool mguard__handle_ok(const void *h, uint32_t magic, int kind, const char *fn)
{
    (void)kind;
    (void)fn;
    if (!MGUARD__DBG_OK(h, kind, fn)) return false;
    return h && MGUARD__MAGIC_IS(*(const uint32_t *)h, magic);
}

#ifdef MGUARD__ADDONS

/* A new handle's header; MGUARD_DEBUG registers it (room reserved). */
static void mguard__handle_init(void *h, uint32_t magic, int kind, mguard_ctx *ctx)
{
    mguard__handle *hd = (mguard__handle *)h;
    hd->magic = magic;
    hd->kind = kind;
    hd->ctx = ctx;
#ifdef MGUARD_DEBUG
    mguard__dbg_h_add(ctx, h, kind);
#endif
}

/* The end of every handle: unregistered, marked dead, buried. */
static void mguard__handle_free(void *h)
{
    mguard__handle *hd = (mguard__handle *)h;
    mguard_ctx *ctx = hd->ctx;
#ifdef MGUARD_DEBUG
    mguard__dbg_h_remove(ctx, h);   /* the handle dies here, even when deferred */
#endif
    hd->magic = MGUARD__DEAD;
    mguard__bury(ctx, h);
}

static void mguard__part_unlink(mguard_ctx *ctx, mguard__part *p)
{
    if (p->prev) p->prev->next = p->next; else ctx->parts = p->next;
    if (p->next) p->next->prev = p->prev;
    p->prev = p->next = NULL;
}
#endif
#ifdef MGUARD__TRACKERS
static void mguard__part_link(mguard_ctx *ctx, mguard__part *p)
{
    p->prev = NULL;
    p->next = ctx->parts;
    if (ctx->parts) ctx->parts->prev = p;
    ctx->parts = p;
}

/* ---- text output of the reports: into a caller's buffer (len counts every
   byte; what does not fit is dropped) -------------------------------------- */
typedef struct mguard__out {
    char *buf;
    size_t cap, len;
} mguard__out;

static void mguard__out_init_buf(mguard__out *o, char *buf, size_t cap)
{
    memset(o, 0, sizeof *o);
    o->buf = cap ? buf : NULL;
    o->cap = buf ? cap : 0;
}

static void mguard__out_put(mguard__out *o, const char *p, size_t n)
{
    if (o->len + 1 < o->cap) {
        size_t room = o->cap - 1 - o->len;
        memcpy(o->buf + o->len, p, n < room ? n : room);
    }
    o->len += n;
}

static void mguard__out_str(mguard__out *o, const char *s) { mguard__out_put(o, s, strlen(s)); }

/* NUL-terminate; the length. */
static size_t mguard__out_end(mguard__out *o)
{
    if (o->cap) o->buf[o->len < o->cap ? o->len : o->cap - 1] = '\0';
    return o->len;
}
#endif /* MGUARD__TRACKERS */

/* ---- handle checks (MGUARD_DEBUG: registry of live handles) ------------
   A plain build refuses NULL and a wrong magic number, which cannot make a destroyed
   handle safe (its magic lies in freed memory). MGUARD_DEBUG looks a handle up before
   reading it: the live contexts (linked through themselves: the one process-wide
   state), and in each one index of its handles with their kinds (MGUARD__DBG_*),
   on the context's allocator (so creates can fail with it). A handle leaves at the end
   of its destroy (a deferred one too). Sections 7-9 check through mguard__scope_ok &
   co. (__func__: mguard__x is reported as mguard_x). A refusal goes to every live
   context's logger, or stderr. Cost: O(live contexts) plus one lookup per call. Not for
   contexts created or destroyed on several threads at once. */
#ifdef MGUARD_DEBUG
static mguard_ctx *mguard__dbg_live;

static void mguard__dbg_complain(int icode, ...)
{
    mguard_log_code code = (mguard_log_code)icode;   /* as mguard__log_now */
    char buf[MGUARD__LOGLINE];
    va_list ap;
    mguard_ctx *c;
    va_start(ap, icode);
    vsnprintf(buf, sizeof buf, mguard__log_items[code].fmt, ap);
    va_end(ap);
    if (!mguard__dbg_live) mguard__default_log(MGUARD_LOG_WARN, code, buf, NULL);
    for (c = mguard__dbg_live; c; c = c->dbg.next_live)
        if (c->log.func) c->log.func(MGUARD_LOG_WARN, code, buf, c->log.user);
}

static bool mguard__dbg_ctx_live(const mguard_ctx *ctx)
{
    const mguard_ctx *c;
    for (c = mguard__dbg_live; c; c = c->dbg.next_live)
        if (c == ctx) return true;
    return false;
}

/* Remove dense element i1 (of n) by swap, the last one's slot renumbered. */
static void mguard__dbg_swap_remove(mguard__index *ix, unsigned char *dense, size_t stride, uint32_t i1, uint32_t n)
{
    const void *key, *moved;
    memcpy(&key, dense + (size_t)(i1 - 1) * stride, sizeof key);
    mguard__ix_del(ix, mguard__hash_ptr(key), i1);
    if (i1 != n) {
        uint32_t h;
        memcpy(&moved, dense + (size_t)(n - 1) * stride, sizeof moved);
        h = mguard__hash_ptr(moved);
        mguard__ix_del(ix, h, n);
        memcpy(dense + (size_t)(i1 - 1) * stride, dense + (size_t)(n - 1) * stride, stride);
        mguard__ix_put(ix, h, i1);
    }
}

/* Every handle of a context, with its kind (MGUARD__DBG_*). */
static const char *const mguard__dbg_kind_names[] = { "table", "scope tracker", "dynamism tracker", "ledger", "cache", "ledger diff result" };

static uint32_t mguard__dbg_h_find(const mguard_ctx *ctx, const void *h)
{
    return mguard__ix_find(&ctx->dbg.hix, (const unsigned char *)ctx->dbg.hs, sizeof(mguard__dbg_h), h, mguard__hash_ptr(h));
}

static bool mguard__dbg_h_live(const void *h, int kind)
{
    const mguard_ctx *c;
    for (c = mguard__dbg_live; c; c = c->dbg.next_live) {
        uint32_t i1 = mguard__dbg_h_find(c, h);
        if (i1) return c->dbg.hs[i1 - 1].kind == kind;
    }
    return false;
}

static bool mguard__dbg_h_valid(const void *h, int kind, const char *fn)
{
    const char *k = mguard__dbg_kind_names[kind];
    int priv;
    if (!h || mguard__dbg_h_live(h, kind)) return true;
    /* the body of mguard_x is mguard__x: name the public function */
    priv = strncmp(fn, "mguard__", 8) == 0;
    mguard__dbg_complain(MGUARD_LOG_NOT_LIVE, priv ? "mguard_" : "", fn + (priv ? 8 : 0), h, k, k);
    return false;
}

/* Room for two: a handle made with tables of its own (a scope tracker, the
   ledgers' root) registers each of them between its reserve and its add. */
static mguard_status mguard__dbg_h_reserve(mguard_ctx *ctx)
{
    mguard_status st = mguard__ix_reserve(ctx, &ctx->dbg.hix, (size_t)ctx->dbg.nhs + 2);
    if (!st) st = mguard__reserve(ctx, (void **)&ctx->dbg.hs, &ctx->dbg.caphs, (size_t)ctx->dbg.nhs + 2, sizeof(mguard__dbg_h));
    return st;
}

static void mguard__dbg_h_add(mguard_ctx *ctx, const void *h, int kind)
{
    ctx->dbg.hs[ctx->dbg.nhs].h = h;
    ctx->dbg.hs[ctx->dbg.nhs++].kind = kind;
    mguard__ix_put(&ctx->dbg.hix, mguard__hash_ptr(h), ctx->dbg.nhs);
}

static void mguard__dbg_h_remove(mguard_ctx *ctx, const void *h)
{
    uint32_t i1 = mguard__dbg_h_find(ctx, h);
    MGUARD_ASSERT(i1);
    if (!i1) return;
    mguard__dbg_swap_remove(&ctx->dbg.hix, (unsigned char *)ctx->dbg.hs, sizeof(mguard__dbg_h), i1, ctx->dbg.nhs--);
}

static void mguard__dbg_forget_ctx(mguard_ctx *ctx)
{
    mguard_ctx **pp;
    for (pp = &mguard__dbg_live; *pp; pp = &(*pp)->dbg.next_live) {
        if (*pp == ctx) {
            *pp = ctx->dbg.next_live;
            break;
        }
    }
    mguard__ix_free(ctx, &ctx->dbg.hix);
    mguard__free(ctx, ctx->dbg.hs);
}
#endif

/* Create's check: a live context not being destroyed (else the handle outlives it). */
static bool mguard__ctx_can_create(mguard_ctx *ctx, const char *fn)
{
    if (!mguard__ctx_ok(ctx, fn)) return false;
    if (ctx->destroying) { mguard__logf(ctx, MGUARD_LOG_CTX_DESTROYING, fn); return false; }
    return true;
}

static bool mguard__ctx_ok(const mguard_ctx *ctx, const char *fn)
{
#ifdef MGUARD_DEBUG
    if (ctx && !mguard__dbg_ctx_live(ctx)) {
        mguard__dbg_complain(MGUARD_LOG_NOT_LIVE_CTX, fn, (const void *)ctx);
        return false;
    }
#endif
    (void)fn;
    return ctx && (ctx->magic | 1u) == MGUARD__MAGIC_CTX_TS;
}

static bool mguard__weak_ok(const mguard_weak *t) { return t && MGUARD__MAGIC_IS(t->magic, MGUARD__MAGIC_WEAK); }

static bool mguard__weak_valid(const mguard_weak *t, const char *fn)
{
    return mguard__handle_ok(t, MGUARD__MAGIC_WEAK, MGUARD__DBG_WEAK, fn);
}

/* ======================================================================= */
/* >>ctx: 1. context and status codes */
/* ======================================================================= */

/* Defined in later sections. */
static bool mguard__lock_init(mguard_ctx *ctx, const mguard_ctx_desc *d);
static void mguard__lock_fini(mguard_ctx *ctx);
static uint32_t mguard__reg_find(const mguard_ctx *ctx, const void *obj);
static bool mguard__obj_empty(const mguard_ctx *ctx, const mguard__obj *o);
static void mguard__call_value(mguard_ctx *ctx, mguard_value_dtor dtor, mguard_key_death_fn on_death, void *user, const void *key, void *bytes);
static void mguard__weak_free(mguard_weak *t);
static bool mguard__is_dying(const mguard_ctx *ctx, const void *obj);
static void mguard__copy_value(void *dst, const void *src, size_t n);
static mguard__kslot *mguard__weak_at(const mguard_weak *t, uint32_t i);

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

/* ---- 1. context: create, destroy, check -------------------------------- */

/* A context's id, carried by its refs: unique in the process (per copy of
   the implementation), so a ref of another context, even a destroyed one
   at the same address, is told apart. Not atomic without GNU C. */
static uint64_t mguard__next_ctx_id(void)
{
    /* cppcheck-suppress unassignedVariable ; written by __atomic_add_fetch */
    static uint64_t next;
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
#else
    return ++next;
#endif
}

mguard_ctx *mguard_ctx_create(const mguard_ctx_desc *desc)
{
    mguard_ctx_desc d;
    mguard_ctx *ctx;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (!d.allocator.realloc_fn != !d.allocator.free_fn) {
        mguard__log_now(d.logger, MGUARD_LOG_HALF_ALLOCATOR, "mguard_ctx_create");
        return NULL;
    }
    if (!d.allocator.realloc_fn) {
        d.allocator.realloc_fn = mguard__default_realloc;
        d.allocator.free_fn = mguard__default_free;
    }
    if (!d.logger.func && !d.quiet) d.logger.func = mguard__default_log;
    ctx = (mguard_ctx *)d.allocator.realloc_fn(NULL, sizeof *ctx, d.allocator.user);
    if (!ctx) {
        mguard__log_now(d.logger, MGUARD_LOG_NOMEM, "mguard_ctx_create");
        return NULL;
    }
    memset(ctx, 0, sizeof *ctx);
    mguard__kx_init(&ctx->kx);
    ctx->magic = MGUARD__MAGIC_CTX;
    ctx->alloc = d.allocator;
    ctx->log = d.logger;
    ctx->describe = d.describe;
    ctx->strict_gen = d.strict_generations;
    ctx->id = mguard__next_ctx_id();
    if (!mguard__lock_init(ctx, &d)) {
        ctx->magic = MGUARD__DEAD;
        d.allocator.free_fn(ctx, d.allocator.user);
        return NULL;
    }
#ifdef MGUARD_DEBUG
    ctx->dbg.next_live = mguard__dbg_live;
    mguard__dbg_live = ctx;
#endif
    return ctx;
}

static void mguard__ctx_destroy(mguard_ctx *ctx)
{
    mguard__logline q[MGUARD__LOGQ];
    uint32_t i, n, dropped;
    if (!mguard__ctx_ok(ctx, "mguard_ctx_destroy")) return;
    if (ctx->in_callback || ctx->destroying) {
        mguard__logf(ctx, MGUARD_LOG_DESTROY_IN_CALLBACK, "mguard_ctx_destroy");
        if (!ctx->lk) mguard__log_flush(ctx);   /* its wrapper cannot tell a refusal */
        return;
    }
    ctx->destroying = 1;
    while (ctx->parts) ctx->parts->destroy(ctx->parts);
    while (ctx->evpart) ctx->evpart->part.destroy(&ctx->evpart->part);   /* last: the caches */
    MGUARD_ASSERT(ctx->npslots == 0);
    while (ctx->tables) mguard__weak_destroy(ctx->tables);
    /* the lines logged so far go out while the dead handles are kept (a
       logger that calls one is refused), as at any callout */
    if (ctx->logq.n) MGUARD__CALLOUT(ctx, (void)0);
    mguard__unbury(ctx);   /* every callback has run */
    for (i = 0; i < ctx->nobjs; i++) {
        mguard__obj *o = &ctx->objs[i];
        if (!o->key) continue;
        if (o->flags & MGUARD__F_WLIST) mguard__free(ctx, ctx->sides[o->side - 1].w.list.at);
    }
    mguard__free(ctx, ctx->objs);
    mguard__free(ctx, ctx->sides);
    mguard__free(ctx, ctx->tabs);
    mguard__kx_free(ctx);
    for (i = 0; i < ctx->nstrs; i++) mguard__free(ctx, MGUARD__STR_HDR(ctx->strs[i]));
    mguard__free(ctx, ctx->strs);
    mguard__ix_free(ctx, &ctx->str_index);
#ifdef MGUARD_DEBUG
    mguard__dbg_forget_ctx(ctx);
#endif
    /* lines logged since (none is expected) go to their loggers once the context is gone */
    n = mguard__logq_take(&ctx->logq, q, &dropped);
    if (ctx->lk) mguard__lock_fini(ctx);
    ctx->magic = MGUARD__DEAD;
    ctx->alloc.free_fn(ctx, ctx->alloc.user);
    mguard__logq_deliver(q, n, dropped);
}

#if defined(MGUARD_DEBUG) || !defined(MGUARD_NO_SCOPE) || !defined(MGUARD_NO_DYN)
/* The check of a dense-array index (debug registry, trackers). */
static mguard_status mguard__check_index(mguard_ctx *ctx, const mguard__index *ix, const unsigned char *dense,
                                         size_t stride, size_t len, const char *what)
{
    size_t i, used = 0;
    if (!ix->slots) {
        MGUARD__CHECK(ctx, ix->used == 0, "%s: index without slots has %lu keys", what, (unsigned long)ix->used);
        return MGUARD_OK;
    }
    MGUARD__CHECK(ctx, ix->used * 2 <= ix->mask + 1, "%s: index over half full", what);
    for (i = 0; i <= ix->mask; i++) {
        const void *k;
        mguard__slot s = ix->slots[i];
        if (!s.idx) continue;
        used++;
        MGUARD__CHECK(ctx, s.idx <= len, "%s: slot %lu points past the entries", what, (unsigned long)i);
        memcpy(&k, dense + (size_t)(s.idx - 1) * stride, sizeof k);
        MGUARD__CHECK(ctx, k != NULL, "%s: slot %lu points at a removed entry", what, (unsigned long)i);
        MGUARD__CHECK(ctx, mguard__hash_ptr(k) == s.hash, "%s: slot %lu has a stale hash", what, (unsigned long)i);
        MGUARD__CHECK(ctx, mguard__ix_find(ix, dense, stride, k, s.hash) == s.idx, "%s: key %p not reachable from its home slot", what, k);
    }
    MGUARD__CHECK(ctx, used == ix->used, "%s: index counts %lu keys, holds %lu", what, (unsigned long)ix->used, (unsigned long)used);
    return MGUARD_OK;
}
#endif

/* The lowest index among key's full slots (the check counts objects). */
static size_t mguard__kx_first_of(const mguard__kx *kx, const void *key)
{
    uint64_t h = mguard__hash64(key);
    size_t k, first = SIZE_MAX;
    mguard__kwalk w;
    mguard__kwalk_start(kx, &w, h, MGUARD__KX_TAG(h));
    while ((k = mguard__kwalk_next(kx, &w)) != SIZE_MAX)
        if (k < first && kx->slots[k].key == key) first = k;
    return first;
}

static mguard_status mguard__ctx_check(mguard_ctx *ctx)
{
    const mguard__kx *kx;
    mguard_weak *t;
    uint32_t i, live = 0, nfree = 0, nside = 0, f;
    size_t k, full = 0, empty = 0, recs = 0, objs = 0;
    if (!mguard__ctx_ok(ctx, "mguard_ctx_check")) return MGUARD_EINVAL;
    kx = &ctx->kx;
    /* the index: every full slot is found by its key and names a live
       table (which says where the entry lies) or a live record */
    if (MGUARD__KX_CAP(kx)) {
        size_t cap = kx->mask + 1;
        MGUARD__CHECK(ctx, cap >= 8 && (cap & (cap - 1)) == 0, "index: capacity %lu is not a power of two >= 8", (unsigned long)cap);
        for (k = 0; k < cap; k++) {
            const mguard__kslot *s = &kx->slots[k];
            unsigned c = kx->ctrl[k];
            if (c == MGUARD__KX_EMPTY) { empty++; continue; }
            MGUARD__CHECK(ctx, c < MGUARD__KX_EMPTY || c == MGUARD__KX_PENDING, "index: slot %lu has control byte 0x%x", (unsigned long)k, c);
            MGUARD__CHECK(ctx, c < MGUARD__KX_EMPTY || ctx->dying, "index: slot %lu is pending with no death in progress", (unsigned long)k);
            full++;
            if (c == MGUARD__KX_PENDING) continue;
            MGUARD__CHECK(ctx, s->key && c == MGUARD__KX_TAG(mguard__hash64(s->key)), "index: slot %lu has a stale tag", (unsigned long)k);
            MGUARD__CHECK(ctx, (s->tid & MGUARD__TID_PART) || mguard__kx_find(kx, s->key, s->tid, mguard__hash64(s->key), NULL) == s,
                          "index: slot %lu (%p, table id %u) not found by its key", (unsigned long)k, s->key, s->tid);
            if (s->tid & MGUARD__TID_PART) {
                MGUARD__CHECK(ctx, ctx->evpart, "index: slot %lu (%p) names a part, but none hears events", (unsigned long)k, s->key);
                if (ctx->evpart->check_slot(ctx, s, k)) return MGUARD_EINVAL;
            } else if (!s->tid) {
                uint32_t r = s->pos;
                MGUARD__CHECK(ctx, r >= 1 && r <= ctx->nobjs && ctx->objs[r - 1].key == s->key, "index: slot %lu (%p) names record %u, not its own", (unsigned long)k, s->key, r);
                recs++;
            } else {
                const mguard_weak *tt;
                MGUARD__CHECK(ctx, s->tid < ctx->ntabs, "index: slot %lu names table id %u, out of range", (unsigned long)k, s->tid);
                tt = ctx->tabs[s->tid];
                MGUARD__CHECK(ctx, mguard__weak_ok(tt) && tt->tid == s->tid, "index: slot %lu names table id %u, not a live table", (unsigned long)k, s->tid);
                MGUARD__CHECK(ctx, s->pos < tt->len && tt->order[s->pos].slot == k, "index: slot %lu (%p): its table's order does not point back", (unsigned long)k, s->key);
            }
            objs += mguard__kx_first_of(kx, s->key) == k;   /* each object once */
        }
        MGUARD__CHECK(ctx, full == kx->used, "index: %lu slots in use, %lu counted", (unsigned long)kx->used, (unsigned long)full);
        MGUARD__CHECK(ctx, empty == kx->growth_left + cap / 8, "index: %lu empty slots, %lu may be taken", (unsigned long)empty, (unsigned long)kx->growth_left);
    }
    MGUARD__CHECK(ctx, objs == ctx->live_objs, "objects known: %u, counted %lu", ctx->live_objs, (unsigned long)objs);
    for (i = 0; i < ctx->nobjs; i++) {
        const mguard__obj *o = &ctx->objs[i];
        if (!o->key) continue;
        live++;
        MGUARD__CHECK(ctx, mguard__reg_find(ctx, o->key) == i + 1, "record %u (%p) not found by its key", i, o->key);
        MGUARD__CHECK(ctx, !mguard__obj_empty(ctx, o), "record %u (%p) is empty but kept", i, o->key);
        MGUARD__CHECK(ctx, !(o->flags & MGUARD__F_TRACKER) || o->side, "record %u: a tracker without a side record", i);
        MGUARD__CHECK(ctx, !(o->flags & MGUARD__F_WLIST) || o->side, "record %u: a watcher list without a side record", i);
        if (o->side) {
            const mguard__side *sd;
            MGUARD__CHECK(ctx, o->side <= ctx->nsides, "record %u: side record out of range", i);
            sd = &ctx->sides[o->side - 1];
            if (o->flags & MGUARD__F_WLIST) {
                MGUARD__CHECK(ctx, (o->flags & MGUARD__F_TRACKER) && sd->w.list.at && sd->w.list.cap >= 1,
                              "record %u: a watcher list without a tracker or block", i);
                MGUARD__CHECK(ctx, sd->w.list.n <= sd->w.list.cap, "record %u: watcher count over capacity", i);
            } else if (!sd->w.one.fn) {
                MGUARD__CHECK(ctx, !sd->w.one.guard && !sd->w.one.guard_serial && !sd->w.one.user,
                              "record %u: no inline watcher, but its fields are set", i);
            } else {
                MGUARD__CHECK(ctx, sd->w.one.guard != NULL, "record %u: an inline watcher without a guard", i);
            }
            MGUARD__CHECK(ctx, MGUARD__NWATCH(o, sd) == 0 || (o->flags & MGUARD__F_TRACKER), "record %u: watchers without a tracker", i);
            nside++;
        }
    }
    MGUARD__CHECK(ctx, live == ctx->live_recs && live == recs, "live record count %u, counted %u", ctx->live_recs, live);
    for (f = ctx->free_head; f; f = ctx->objs[f - 1].side) {
        MGUARD__CHECK(ctx, f <= ctx->nobjs && !ctx->objs[f - 1].key, "free list reaches a live record");
        MGUARD__CHECK(ctx, ++nfree <= ctx->nobjs, "free list has a cycle");
    }
    MGUARD__CHECK(ctx, nfree + live == ctx->nobjs, "records: %u live + %u free != %u", live, nfree, ctx->nobjs);
    MGUARD__CHECK(ctx, nside == ctx->live_sides, "side records: %u in use, %u counted", ctx->live_sides, nside);
    for (f = ctx->free_side, nfree = 0; f; f = ctx->sides[f - 1].w.vacant.next) {
        MGUARD__CHECK(ctx, f <= ctx->nsides && ctx->sides[f - 1].w.vacant.mark == MGUARD__SIDE_FREE, "side free list reaches a used record");
        MGUARD__CHECK(ctx, ++nfree <= ctx->nsides, "side free list has a cycle");
    }
    MGUARD__CHECK(ctx, nfree + nside == ctx->nsides, "side records: %u used + %u free != %u", nside, nfree, ctx->nsides);
    MGUARD__CHECK(ctx, ctx->str_index.used == ctx->nstrs, "interned strings: %u, %u in the index", ctx->nstrs, (unsigned)ctx->str_index.used);
    for (i = 0; i < ctx->nstrs; i++) {
        const mguard__str *h = MGUARD__STR_HDR(ctx->strs[i]);
        MGUARD__CHECK(ctx, h->pos == i && h->refs > 0, "interned string %u (\"%s\"): position %u, %u holders", i, ctx->strs[i], h->pos, h->refs);
        MGUARD__CHECK(ctx, h->hash == mguard__hash_str(ctx->strs[i]) && mguard__str_find_h(ctx, ctx->strs[i], h->hash) == ctx->strs[i],
                      "interned string %u (\"%s\") not found by its content", i, ctx->strs[i]);
    }
    for (t = ctx->tables; t; t = t->next) {
        uint32_t nlive = 0;
        MGUARD__CHECK(ctx, mguard__weak_ok(t), "table list holds a dead table");
        MGUARD__CHECK(ctx, t->tid && t->tid < ctx->ntabs && ctx->tabs[t->tid] == t, "table %p: id %u does not name it", (void *)t, t->tid);
        MGUARD__CHECK(ctx, t->len <= t->cap && t->live <= t->len, "table %p: counts out of range", (void *)t);
        for (i = 0; i < t->len; i++) {
            mguard__oelem el = t->order[i];
            MGUARD__CHECK(ctx, i == 0 || el.stamp > t->order[i - 1].stamp, "table %p: entries out of order", (void *)t);
            nlive += mguard__weak_at(t, i) != NULL;
        }
        MGUARD__CHECK(ctx, nlive == t->live, "table %p: live count %u, counted %u", (void *)t, t->live, nlive);
        MGUARD__CHECK(ctx, ctx->next_stamp - t->base >= (t->len ? (uint64_t)t->order[t->len - 1].stamp + 1 : 0), "table %p: stamps ahead of the context", (void *)t);
    }
    {
        struct mguard__part *p;
        for (p = ctx->parts; p; p = p->next)
            if (p->check(p)) return MGUARD_EINVAL;
        if (ctx->evpart && ctx->evpart->part.check(&ctx->evpart->part)) return MGUARD_EINVAL;
    }
#ifdef MGUARD_DEBUG
    {
        uint32_t ntab = 0, nreg = 0, i1;
        if (mguard__check_index(ctx, &ctx->dbg.hix, (const unsigned char *)ctx->dbg.hs, sizeof(mguard__dbg_h), ctx->dbg.nhs, "debug registry"))
            return MGUARD_EINVAL;
        for (t = ctx->tables; t; t = t->next, ntab++) {
            i1 = mguard__dbg_h_find(ctx, t);
            MGUARD__CHECK(ctx, i1 && ctx->dbg.hs[i1 - 1].kind == MGUARD__DBG_WEAK, "debug registry: table %p missing", (void *)t);
        }
        for (i = 0; i < ctx->dbg.nhs; i++) nreg += ctx->dbg.hs[i].kind == MGUARD__DBG_WEAK;
        MGUARD__CHECK(ctx, ntab == nreg, "debug registry: %u tables, %u live", nreg, ntab);
    }
#endif
    return MGUARD_OK;
}

/* ======================================================================= */
/* >>lifetimes: 2. object lifetimes: the registry and the destructor hook */
/* ======================================================================= */

/* ---- 2. object registry ------------------------------------------------ */

/* Record index + 1 of obj, or 0 (its slot in the index, under id 0, holds it). */
static MGUARD__HOT uint32_t mguard__reg_find(const mguard_ctx *ctx, const void *obj)
{
    const mguard__kslot *s = mguard__kx_get(&ctx->kx, obj, 0);
    return s ? s->pos : 0;
}

/* mguard__reg_find, and (found) the record's serial into *serial. */
static MGUARD__HOT uint32_t mguard__reg_find_serial(const mguard_ctx *ctx, const void *obj, uint64_t *serial)
{
    const mguard__kslot *s = mguard__kx_get(&ctx->kx, obj, 0);
    if (!s) return 0;
    *serial = s->v.u;
    return s->pos;
}

/* obj's serial (it has a record), or 0. */
static uint64_t mguard__serial_of(const mguard_ctx *ctx, const void *obj)
{
    const mguard__kslot *s = mguard__kx_get(&ctx->kx, obj, 0);
    return s ? s->v.u : 0;
}

/* mguard__reg_look past the first group of the probe (more: it goes on). */
static MGUARD__NOINLINE uint32_t mguard__reg_look_rest(const mguard_ctx *ctx, const void *obj, uint64_t h, bool more,
                                                       bool *known, uint64_t *serial)
{
    const mguard__kslot *s;
    if (!more) {   /* the probe ended in its first group: a table's entry of obj would be there */
        size_t pos = (size_t)(h >> 7) & ctx->kx.mask & ~(size_t)7;
        uint64_t m;
        *known = false;
        for (m = MGUARD__KX_FIRST_MATCH(&ctx->kx, pos, h); m && !*known; m &= m - 1)
            *known = ctx->kx.slots[pos + MGUARD__KX_FIRST_BIT(m)].key == obj;
        return 0;
    }
    s = mguard__kx_find_rest(&ctx->kx, obj, 0, h);
    if (s) {
        if (serial) *serial = s->v.u;
        return s->pos;
    }
    (void)mguard__kx_find(&ctx->kx, obj, 0, h, known);
    return 0;
}

/* obj's record index + 1 and (if serial) its serial, or 0 and *known (a
   table holds obj). A first-group hit inline, the rest out of line. */
static MGUARD__HOT uint32_t mguard__reg_look(const mguard_ctx *ctx, const void *obj, bool *known, uint64_t *serial)
{
    uint64_t h = mguard__hash64(obj);
    bool more;
    const mguard__kslot *s = mguard__kx_first(&ctx->kx, obj, 0, h, &more);
    if (s) {
        if (serial) *serial = s->v.u;
        return s->pos;
    }
    return mguard__reg_look_rest(ctx, obj, h, more, known, serial);
}

/* obj's new record (known: a table holds obj; room reserved): serial next_serial. */
static uint32_t mguard__reg_new(mguard_ctx *ctx, const void *obj, bool known)
{
    uint32_t r;
    size_t i;
    mguard__obj *o;
    uint64_t h = mguard__hash64(obj);
    if (!known) ctx->live_objs++;
    if (ctx->free_head) {
        r = ctx->free_head;
        ctx->free_head = ctx->objs[r - 1].side;
    } else {
        r = ++ctx->nobjs;
    }
    o = &ctx->objs[r - 1];
    memset(o, 0, sizeof *o);
    o->key = obj;
    o->gen = -1;
    ctx->live_recs++;
    i = mguard__kx_take(&ctx->kx, h);
    ctx->kx.slots[i].key = obj;
    ctx->kx.slots[i].v.u = ++ctx->next_serial;
    ctx->kx.slots[i].tid = 0;
    ctx->kx.slots[i].pos = r;
    return r;
}

/* Room for n more side records (ENOMEM, not logged: nothing changed). */
static mguard_status mguard__side_reserve(mguard_ctx *ctx, uint32_t n)
{
    if (ctx->nsides - ctx->live_sides >= n) return MGUARD_OK;   /* the free list has them */
    return mguard__reserve(ctx, (void **)&ctx->sides, &ctx->capsides, (size_t)ctx->nsides + n, sizeof(mguard__side));
}

/* Record r's side record, zeroed if new (room reserved: mguard__side_reserve). */
static mguard__side *mguard__side_take(mguard_ctx *ctx, uint32_t r)
{
    mguard__obj *o = &ctx->objs[r - 1];
    uint32_t x = o->side;
    if (!x) {
        if (ctx->free_side) {
            x = ctx->free_side;
            ctx->free_side = ctx->sides[x - 1].w.vacant.next;
        } else {
            x = ++ctx->nsides;
            MGUARD_ASSERT(x <= ctx->capsides);
        }
        memset(&ctx->sides[x - 1], 0, sizeof ctx->sides[x - 1]);
        ctx->live_sides++;
        o->side = x;
    }
    return &ctx->sides[x - 1];
}

/* Free record r, its side record and its slot i; the caller detached the
   rest. A free record keeps key NULL and the free link (side) only. */
static void mguard__reg_free(mguard_ctx *ctx, uint32_t r, size_t i)
{
    mguard__obj *o = &ctx->objs[r - 1];
    mguard__kx_erase(&ctx->kx, i, mguard__hash64(o->key));
    if (o->side) {
        mguard__side *sd = &ctx->sides[o->side - 1];
        if (o->flags & MGUARD__F_WLIST) mguard__free(ctx, sd->w.list.at);
        sd->w.vacant.mark = MGUARD__SIDE_FREE;
        sd->w.vacant.next = ctx->free_side;
        ctx->free_side = o->side;
        ctx->live_sides--;
    }
    o->key = NULL;
    o->side = ctx->free_head;
    ctx->free_head = r;
    ctx->live_recs--;
}

/* Drop record r (all detached); obj stays known while a table holds it. */
static void mguard__reg_drop(mguard_ctx *ctx, uint32_t r)
{
    const void *key = ctx->objs[r - 1].key;
    uint64_t h = mguard__hash64(key);
    bool known;
    const mguard__kslot *s = mguard__kx_find(&ctx->kx, key, 0, h, &known);
    MGUARD_ASSERT(s && s->pos == r);
    mguard__reg_free(ctx, r, (size_t)(s - ctx->kx.slots));
    if (!known) ctx->live_objs--;
}

static bool mguard__obj_empty(const mguard_ctx *ctx, const mguard__obj *o)
{
    (void)ctx;
    return (o->flags & (MGUARD__F_PINNED | MGUARD__F_TRACKER | MGUARD__F_TAGGED | MGUARD__F_CLASS_DYN)) == 0;
}

static void mguard__reg_drop_if_empty(mguard_ctx *ctx, uint32_t r)
{
    if (mguard__obj_empty(ctx, &ctx->objs[r - 1])) mguard__reg_drop(ctx, r);
}

static mguard_status mguard__ctx_get_stats(const mguard_ctx *ctx, mguard_ctx_stats *out)
{
    if (!mguard__ctx_ok(ctx, "mguard_ctx_get_stats")) return MGUARD_EINVAL;
    if (!out) { mguard__logf(ctx, MGUARD_LOG_NULL_ARG, "mguard_ctx_get_stats", "out"); return MGUARD_EINVAL; }
    out->objects = ctx->live_objs;
    out->thread_safe = ctx->lk != NULL;
    return MGUARD_OK;
}

/* The table of id tid (the index's slots name their table by id). */
#define MGUARD__TAB(ctx, tid) ((ctx)->tabs[tid])

/* The index moved slot s (a table entry) to slot j: its order says so. */
static void mguard__kx_moved(mguard_ctx *ctx, const mguard__kslot *s, size_t j)
{
    if (s->tid & MGUARD__TID_PART) ctx->evpart->moved(ctx, s, j);
    else MGUARD__TAB(ctx, s->tid)->order[s->pos].slot = (uint32_t)j;
}

/* A table entry's value: in its slot, or in the table's value array. */
static unsigned char *mguard__kvalue(const mguard_weak *t, mguard__kslot *s)
{
    return t->vstride ? t->vals + (size_t)s->pos * t->vstride : s->v.b;
}

/* An entry's whole stamp: the context's count of entries made when it was made. */
#define MGUARD__STAMP(t, el) ((t)->base + (el).stamp)

/* ---- 2. object lifetimes: the destructor hook ---------------------------
   Phase 1 detaches obj from everything, with no callback and usually no allocation: its
   slots are found on its probe, values copied to a buffer on the C stack (a heap block
   when they do not fit), watchers swapped out, the record dropped. Phase 2 calls out:
   watchers in registration order (attr NULL), then each entry's key_death and
   destructor in the order obj entered the tables; obj is on the dying list meanwhile
   (not registrable). Without the heap block: mguard__death_in_place (logged). */
typedef struct mguard__pending {
    mguard_weak *t;
    mguard_value_dtor dtor;      /* t's callbacks, read in phase 1 (an earlier */
    mguard_key_death_fn on_death;   /* callback may destroy t) */
    void *user;
    uint64_t stamp;              /* when obj entered t: the callbacks' order */
    uint32_t slot, pos;          /* where the entry lay */
    size_t off;                  /* its value's copy in the buffer */
} mguard__pending;

static void mguard__fire_begin(mguard_ctx *ctx, mguard__firing *f, const void *obj, uint64_t serial,
                               mguard__watcher *w, size_t n);
static void mguard__fire(mguard_ctx *ctx, mguard__firing *f, const char *attr);
static void mguard__wait_guard(mguard_ctx *ctx, const void *guard, uint64_t serial);
static void mguard__wait_hooks(mguard_ctx *ctx, const void *obj);

#define MGUARD__DEATH_STACK 512
#define MGUARD__ROUND16(n) (((n) + 15) & ~(size_t)15)
/* p moved up to the next multiple of 16: a stack buffer (of 15 bytes more) aligned as
   the values a destructor is handed (16 from 16 bytes) where the ABI aligns less (i386). */
#define MGUARD__ALIGN16(p) ((p) + ((16u - ((uintptr_t)(p) & 15u)) & 15u))
/* Take o's watchers out of sd for an event: *w the heap list (the caller
   frees it) or `one`, a copy of the inline one; *nw how many. */
static void mguard__take_watchers(mguard__obj *o, mguard__side *sd, mguard__watcher **w, size_t *nw,
                                  mguard__watcher *one)
{
    if (o->flags & MGUARD__F_WLIST) {
        *w = sd->w.list.at;
        *nw = sd->w.list.n;
        o->flags &= ~(uint32_t)MGUARD__F_WLIST;
    } else {
        *one = sd->w.one;
        *w = one;
        *nw = one->fn != NULL;
    }
    memset(&sd->w.one, 0, sizeof sd->w.one);
}

/* Phase 1 on obj's slots: an entry of a table with no callback goes at
   once; one with callbacks is listed in p (up to cap; all are counted),
   sorted by stamp (the order obj entered its tables). *rslot: its record's
   slot or SIZE_MAX; *found: any slot. Returns the entries with callbacks. */
static size_t mguard__death_slots(mguard_ctx *ctx, const void *obj, uint64_t h, mguard__pending *p, size_t cap,
                                  size_t *rslot, bool *found)
{
    mguard__kx *kx = &ctx->kx;
    size_t n = 0, i, j, k, rs = SIZE_MAX, pos = MGUARD__KX_HOME(kx, h), step = 0;
    uint64_t m = mguard__kx_match(mguard__kx_load(kx->ctrl + pos), MGUARD__KX_TAG(h));
    bool any = false;
    for (;; m = mguard__kx_match(mguard__kx_load(kx->ctrl + pos), MGUARD__KX_TAG(h))) {   /* the walk, written out: the hot death */
      for (; m; m &= m - 1) {
        const mguard__kslot *s = &kx->slots[k = pos + mguard__kx_bit(m)];
        mguard_weak *t;
        if (s->key != obj) continue;
        any = true;
        if (!s->tid || (s->tid & MGUARD__TID_PART)) {   /* a part's: its event hook */
            if (!s->tid) rs = k;
            continue;
        }
        t = MGUARD__TAB(ctx, s->tid);
        if (!t->dtor && !t->on_death) {
            t->live--;
            mguard__kx_erase(kx, k, h);
            continue;
        }
        if (n < cap) {
            p[n].t = t;
            p[n].slot = (uint32_t)k;
            p[n].pos = s->pos;
        }
        n++;
      }
      if (MGUARD__KX_END(kx, pos, step)) break;
      step += MGUARD__KX_GROUP;
      pos = (pos + step) & kx->mask;
    }
    *rslot = rs;
    *found = any;
    /* the order obj entered its tables (usually one: nothing to read) */
    for (i = 0; n > 1 && i < n && i < cap; i++) p[i].stamp = MGUARD__STAMP(p[i].t, p[i].t->order[p[i].pos]);
    for (i = 1; i < n && i < cap; i++) {
        mguard__pending x = p[i];
        for (j = i; j > 0 && p[j - 1].stamp > x.stamp; j--) p[j] = p[j - 1];
        p[j] = x;
    }
    return n;
}

/* Phase 1's rest, obj's table entries detached (both paths): its watchers
   taken (mguard__take_watchers) and its record (slot rslot, or SIZE_MAX)
   freed, what the part that hears events has on it detached onto cq. Its serial. */
static MGUARD__HOT uint64_t mguard__death_detach_rest(mguard_ctx *ctx, const void *obj, size_t rslot, mguard__watcher **w,
                                                      size_t *nw, mguard__watcher *one, mguard__evq *cq)
{
    uint64_t serial = 0;
    *w = NULL;
    *nw = 0;
    if (rslot != SIZE_MAX) {
        uint32_t r = ctx->kx.slots[rslot].pos;
        mguard__obj *o = &ctx->objs[r - 1];
        serial = ctx->kx.slots[rslot].v.u;
        if (o->side) mguard__take_watchers(o, &ctx->sides[o->side - 1], w, nw, one);
        mguard__reg_free(ctx, r, rslot);
    }
    memset(cq, 0, sizeof *cq);
    if (mguard__part_hears(ctx, obj)) ctx->evpart->event(ctx, obj, NULL, NULL, 0, 1, cq);
    ctx->live_objs--;
    return serial;
}

/* Phase 2's end (both paths): cq's drops, waits, obj off the dying list. */
static void mguard__death_end(mguard_ctx *ctx, const void *obj, uint64_t serial, mguard__evq *cq,
                              mguard__dying *dying)
{
    mguard__dying **pp;
    MGUARD__EV_FINISH(ctx, cq);
    /* still dying meanwhile: a callback cannot register obj again */
    if (ctx->lk && serial) mguard__wait_guard(ctx, obj, serial);
    if (ctx->hooking) mguard__wait_hooks(ctx, obj);
    /* another thread's death may have been pushed above ours */
    for (pp = &ctx->dying; *pp != dying; pp = &(*pp)->next) {}
    *pp = dying->next;
}

/* Out of memory: the same two phases with no buffer. Phase 1 marks each
   entry's slot PENDING (out of every lookup, not reused), so iterators,
   drains and the check skip it, and pins its table so a value in its array
   neither moves nor is freed (a destroy in phase 2 leaves the free to the
   unpin). Phase 2 fires the watchers, then destroys each value in place.
   mguard__kx_first_pending: obj's pending slot made first, or SIZE_MAX. */
static size_t mguard__kx_first_pending(const mguard_ctx *ctx, const void *obj, uint64_t h)
{
    const mguard__kx *kx = &ctx->kx;
    size_t i, best = SIZE_MAX;
    uint64_t bs = 0;
    mguard__kwalk w;
    mguard__kwalk_start(kx, &w, h, MGUARD__KX_PENDING);
    while ((i = mguard__kwalk_next(kx, &w)) != SIZE_MAX) {
        const mguard_weak *t;
        if (kx->slots[i].key != obj) continue;
        t = MGUARD__TAB(ctx, kx->slots[i].tid);
        if (best == SIZE_MAX || MGUARD__STAMP(t, t->order[kx->slots[i].pos]) < bs) {
            best = i;
            bs = MGUARD__STAMP(t, t->order[kx->slots[i].pos]);
        }
    }
    return best;
}

#define MGUARD__NAME 128
static const char *mguard__named(mguard_ctx *ctx, const void *obj, char *buf);

static void mguard__death_in_place(mguard_ctx *ctx, const void *obj, uint64_t h)
{
    mguard__kx *kx = &ctx->kx;
    size_t k, rslot = SIZE_MAX, nw;
    uint64_t serial;
    mguard__watcher *w, one;
    mguard__firing f;
    mguard__dying dying;
    mguard__evq cq;
    mguard__kwalk kw;
    /* Phase 1: detach, slot by slot on obj's probe. */
    mguard__kwalk_start(kx, &kw, h, MGUARD__KX_TAG(h));
    while ((k = mguard__kwalk_next(kx, &kw)) != SIZE_MAX) {
        mguard__kslot *s = &kx->slots[k];
        mguard_weak *t;
        if (s->key != obj) continue;
        if (!s->tid || (s->tid & MGUARD__TID_PART)) {
            if (!s->tid) rslot = k;
            continue;
        }
        t = MGUARD__TAB(ctx, s->tid);
        kx->ctrl[k] = MGUARD__KX_PENDING;
        t->live--;
        t->pinned++;
    }
    serial = mguard__death_detach_rest(ctx, obj, rslot, &w, &nw, &one, &cq);
    /* Phase 2: call out. */
    dying.obj = obj;
    dying.serial = serial;
    dying.next = ctx->dying;
    /* cppcheck-suppress autoVariables ; popped before this function returns */
    ctx->dying = &dying;
    if (nw) mguard__fire_begin(ctx, &f, obj, serial, w, nw);
    MGUARD__EV_NAME(ctx, obj, &cq);
    /* logged in phase 2: the logger may call back in */
    {
        char nm[MGUARD__NAME];
        mguard__logf(ctx, MGUARD_LOG_ON_DESTROY_IN_PLACE, "mguard_on_destroy", mguard__named(ctx, obj, nm));
    }
    if (nw) mguard__fire(ctx, &f, NULL);
    if (w && w != &one) mguard__free(ctx, w);
    /* found again each time (a callback may rehash, moving pending slots):
       a slot's value as a copy, an array's where it lies (pinned) */
    while ((k = mguard__kx_first_pending(ctx, obj, h)) != SIZE_MAX) {
        mguard__kslot *s = &kx->slots[k];
        mguard_weak *t = MGUARD__TAB(ctx, s->tid);
        mguard__kslot v = *s;
        mguard__kx_erase(kx, k, h);
        mguard__call_value(ctx, t->dtor, t->on_death, t->user, obj, mguard__kvalue(t, &v));
        if (--t->pinned == 0 && t->zombie) mguard__weak_free(t);
    }
    mguard__death_end(ctx, obj, serial, &cq, &dying);
}

static void mguard__lookout_mark(mguard_ctx *ctx, const void *obj)
{
    mguard__lookout *l;
    for (l = ctx->lookouts; l; l = l->next)
        if (l->obj == obj) l->died = true;
}

/* A hook handed p and q: on a thread-safe context the frame makes
   mguard_on_destroy(p or q) on another thread wait for it. */
static void mguard__hook_push(mguard_ctx *ctx, mguard__hookframe *f, const void *p, const void *q)
{
#ifdef MGUARD__PTHREADS
    if (!ctx->lk) return;
    f->p = p;
    f->q = q;
    f->thread = pthread_self();
    f->next = ctx->hooking;
    ctx->hooking = f;
#else
    (void)ctx;
    (void)f;
    (void)p;
    (void)q;
#endif
}

static void mguard__hook_pop(mguard_ctx *ctx, const mguard__hookframe *f)
{
    mguard__hookframe **pp;
    if (!ctx->lk || !ctx->hooking) return;
    /* another thread's frame may have been pushed above ours */
    for (pp = &ctx->hooking; *pp && *pp != f; pp = &(*pp)->next) {}
    if (*pp) *pp = f->next;
}

#define MGUARD__L_CALLOUT(ctx, p, q, call) \
    do { \
        mguard__hookframe hf_; \
        mguard__hook_push((ctx), &hf_, (p), (q)); \
        MGUARD__CALLOUT((ctx), call); \
        mguard__hook_pop((ctx), &hf_); \
    } while (0)

/* Unlink l: lookouts of this thread above it are gone already; on a
   thread-safe context another thread's may still be above it. */
/* Watch obj across a callout (l on the caller's stack, popped before it returns). */
static void mguard__lookout_push(mguard_ctx *ctx, mguard__lookout *l, const void *obj)
{
    l->obj = obj;
    l->died = false;
    l->next = ctx->lookouts;
    ctx->lookouts = l;
}

static void mguard__lookout_pop(mguard_ctx *ctx, const mguard__lookout *l)
{
    mguard__lookout **pp;
    for (pp = &ctx->lookouts; *pp != l; pp = &(*pp)->next) {}
    *pp = l->next;
}

/* obj's name in a line (buf: 64 bytes or more): the describe hook's (a callout) when
   the program passed obj to the call in progress (vouched), or the context knows obj
   (so it is not destroyed) or is destroying it; else, or left empty, "%p". true: the hook's. */
static bool mguard__describe(mguard_ctx *ctx, const void *obj, char *buf, size_t size, bool vouched)
{
    mguard_describer d = ctx->describe;
    bool known = vouched;
    buf[0] = 0;
    if (d.func && obj && ctx->logq.n) {
        /* the lines queued so far go out before obj is judged: a logger may destroy it */
        mguard__lookout look;
        mguard__lookout_push(ctx, &look, obj);
        MGUARD__FLUSH(ctx);
        mguard__lookout_pop(ctx, &look);
        if (look.died) d.func = NULL;
    }
    if (d.func && obj && !known) (void)mguard__kx_find(&ctx->kx, obj, MGUARD__TID_NONE, mguard__hash64(obj), &known);
    if (d.func && obj && (known || (ctx->dying && mguard__is_dying(ctx, obj)))) {
        MGUARD__L_CALLOUT(ctx, obj, NULL, d.func(obj, buf, size, d.user));
        buf[size - 1] = 0;
    }
    if (buf[0]) return true;
    snprintf(buf, size, "%p", obj);
    return false;
}

/* obj, passed to the call in progress, named for a log line's argument (a callout:
   whatever the line's other arguments read must not lie in a handle the hook may free) */
static const char *mguard__named(mguard_ctx *ctx, const void *obj, char *buf)
{
    (void)mguard__describe(ctx, obj, buf, MGUARD__NAME, true);
    return buf;
}

/* The entries the stack list of a death holds; past them, a heap list. */
#define MGUARD__DEATH_LIST 8

/* Phase 2 of a death with watchers (n, swapped out in phase 1): their frame
   linked, the event's drops named (a callout), then each watcher told. Out
   of line: most deaths have none. */
static MGUARD__NOINLINE void mguard__death_fire(mguard_ctx *ctx, const void *obj, uint64_t serial, mguard__watcher *w,
                                                size_t n, mguard__evq *cq)
{
    mguard__firing f;
    mguard__fire_begin(ctx, &f, obj, serial, w, n);
    MGUARD__EV_NAME(ctx, obj, cq);
    mguard__fire(ctx, &f, NULL);
}

static void mguard__on_destroy(mguard_ctx *ctx, const void *obj)
{
    mguard__kx *kx;
    mguard__pending list[MGUARD__DEATH_LIST], *pend = list;
    size_t i, nt, rslot, nw, need = 0, off = 0;
    uint64_t h, serial;
    bool found;
    mguard__watcher *w, one;
    mguard__dying dying;
    unsigned char stackraw[MGUARD__DEATH_STACK + 15];
    unsigned char *const stackbuf = MGUARD__ALIGN16(stackraw), *buf = stackbuf;
    mguard__evq cq;
    if (!mguard__ctx_ok(ctx, "mguard_on_destroy") || !obj) return;
    if (ctx->lookouts) mguard__lookout_mark(ctx, obj);
    kx = &ctx->kx;
    h = mguard__hash64(obj);
    /* Phase 1 begins in the probe: entries with nothing to call go now. */
    nt = mguard__death_slots(ctx, obj, h, list, MGUARD__DEATH_LIST, &rslot, &found);
    if (!found) {
        /* forgotten already; from inside obj's own death it is a double
           destroy the program would not see otherwise */
        char nm[MGUARD__NAME];
        if (ctx->dying && mguard__is_dying(ctx, obj))
            mguard__logf(ctx, MGUARD_LOG_ON_DESTROY_TWICE, "mguard_on_destroy", mguard__named(ctx, obj, nm));
        if (ctx->hear_all) {   /* a compute in progress may depend on obj */
            memset(&cq, 0, sizeof cq);
            ctx->evpart->event(ctx, obj, NULL, NULL, 0, 1, &cq);
            MGUARD__EV_NAME(ctx, obj, &cq);
        }
        if (ctx->hooking) mguard__wait_hooks(ctx, obj);
        return;
    }
    if (nt > MGUARD__DEATH_LIST) {
        /* the list outgrows the stack's: on the heap, found again */
        pend = (mguard__pending *)mguard__alloc(ctx, nt * sizeof *pend);
        if (!pend) {
            mguard__death_in_place(ctx, obj, h);
            return;
        }
        (void)mguard__death_slots(ctx, obj, h, pend, nt, &rslot, &found);
    }
    for (i = 0; i < nt; i++) need += MGUARD__ROUND16(pend[i].t->value_size);
    if (need > MGUARD__DEATH_STACK) {
        buf = (unsigned char *)mguard__alloc(ctx, need);
        if (!buf) {
            if (pend != list) mguard__free(ctx, pend);
            mguard__death_in_place(ctx, obj, h);
            return;
        }
    }
    /* Phase 1: detach the entries with callbacks, copying their values. */
    for (i = 0; i < nt; i++) {
        mguard_weak *t = pend[i].t;
        pend[i].dtor = t->dtor;
        pend[i].on_death = t->on_death;
        pend[i].user = t->user;
        pend[i].off = off;
        mguard__copy_value(buf + off, mguard__kvalue(t, &kx->slots[pend[i].slot]), t->value_size);
        off += MGUARD__ROUND16(t->value_size);
        t->live--;
        mguard__kx_erase(kx, pend[i].slot, h);
    }
    serial = mguard__death_detach_rest(ctx, obj, rslot, &w, &nw, &one, &cq);
    if (nt || nw || cq.hpos || cq.ev || (ctx->lk && serial) || ctx->hooking) {
        /* Phase 2: call out (or wait for another thread's guard callback
           or hook on obj), obj on the dying list meanwhile. */
        dying.obj = obj;
        dying.serial = serial;
        dying.next = ctx->dying;
        /* cppcheck-suppress autoVariables ; unlinked before this function returns */
        ctx->dying = &dying;
        if (nw) mguard__death_fire(ctx, obj, serial, w, nw, &cq);
        else MGUARD__EV_NAME(ctx, obj, &cq);
        for (i = 0; i < nt; i++)
            mguard__call_value(ctx, pend[i].dtor, pend[i].on_death, pend[i].user, obj, buf + pend[i].off);
        mguard__death_end(ctx, obj, serial, &cq, &dying);
    }
    if (w && w != &one) mguard__free(ctx, w);
    if (buf != stackbuf) mguard__free(ctx, buf);
    if (pend != list) mguard__free(ctx, pend);
}

/* ======================================================================= */
/* >>weak: 3. weak key tables */
/* ======================================================================= */

/* A table: its entries are slots of the context's index under its id; it
   keeps their insertion order (`order`; values over 8 bytes in `vals`, by
   position). A removed entry's place stays as a tombstone, so positions
   never move under an iterator; the order is compacted (epoch bumped) only
   when full and a quarter tombstones, never while pinned. An iterator that
   sees the epoch change finds its place by binary search on stamps.
   Invariants: live == its slots == the order's live places; a live slot's
   pos is its position; stamps strictly increase along the order. */

/* The slot of t's entry at position i, or NULL for a tombstone (its slot
   free, pending or another's). A free slot says table id 0, so only a
   death in place (t pinned) needs the control byte read. */
static MGUARD__HOT mguard__kslot *mguard__weak_at(const mguard_weak *t, uint32_t i)
{
    const mguard__kx *kx = &t->ctx->kx;
    uint32_t k = t->order[i].slot;
    mguard__kslot *s;
    if (k > kx->mask) return NULL;
    s = &kx->slots[k];
    if (s->tid != t->tid || s->pos != i) return NULL;
    return t->pinned && kx->ctrl[k] >= MGUARD__KX_EMPTY ? NULL : s;
}

/* A new id in tabs or ctabs (0 unused, free ids linked); 0: out of memory. */
static uint32_t mguard__id_take(const mguard_ctx *ctx, void **arr, uint32_t *n, uint32_t *cap, uint32_t *freeid)
{
    uint32_t id;
    if (*freeid) {
        id = *freeid;
        memcpy(freeid, (unsigned char *)*arr + (size_t)id * sizeof(void *), sizeof *freeid);
        return id;
    }
    if (!*n) *n = 1;
    if (*n == 0x7fffffffu || mguard__reserve(ctx, arr, cap, (size_t)*n + 1, sizeof(void *))) return 0;
    return (*n)++;
}

/* Give id back: its entry links the free ids. */
static void mguard__id_put(void *arr, uint32_t *freeid, uint32_t id)
{
    void **e = (void **)arr + id;
    *e = NULL;
    memcpy(e, freeid, sizeof *freeid);
    *freeid = id;
}

static mguard_weak *mguard__weak_create(mguard_ctx *ctx, const mguard_weak_desc *desc)
{
    mguard_weak *t;
    size_t vs;
    uint32_t tid;
    if (!mguard__ctx_can_create(ctx, "mguard_weak_create")) return NULL;
    if (!desc || desc->value_size == 0 || desc->value_size > ((size_t)1 << 24)) {
        mguard__logf(ctx, !desc ? MGUARD_LOG_NULL_ARG : MGUARD_LOG_BAD_VALUE_SIZE, "mguard_weak_create", "desc");
        return NULL;
    }
#ifdef MGUARD_DEBUG
    if (mguard__dbg_h_reserve(ctx)) { mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_weak_create"); return NULL; }
#endif
    t = (mguard_weak *)mguard__alloc(ctx, sizeof *t);
    tid = t ? mguard__id_take(ctx, (void **)&ctx->tabs, &ctx->ntabs, &ctx->captabs, &ctx->free_tid) : 0;
    if (!tid) {
        mguard__free(ctx, t);
        mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_weak_create");
        return NULL;
    }
    memset(t, 0, sizeof *t);
    vs = desc->value_size;
    t->magic = MGUARD__MAGIC_WEAK | (ctx->lk ? MGUARD__MAGIC_TS : 0) | (vs > MGUARD__KX_INSLOT ? MGUARD__MAGIC_GENERAL : 0);
    t->tid = tid;
    ctx->tabs[tid] = t;
    t->ctx = ctx;
    t->value_size = vs;
    if (vs > MGUARD__KX_INSLOT) t->vstride = vs >= 16 ? (vs + 15) & ~(size_t)15 : (vs + 7) & ~(size_t)7;
    t->dtor = desc->value_dtor;
    t->on_death = desc->key_death;
    t->user = desc->user;
    t->base = ctx->next_stamp;
    t->next = ctx->tables;
    if (ctx->tables) ctx->tables->prev = t;
    ctx->tables = t;
#ifdef MGUARD_DEBUG
    mguard__dbg_h_add(ctx, t, MGUARD__DBG_WEAK);
#endif
    return t;
}

/* A value's callbacks: key_death (deaths only), then the destructor. */
static void mguard__call_value(mguard_ctx *ctx, mguard_value_dtor dtor, mguard_key_death_fn on_death,
                               void *user, const void *key, void *bytes)
{
    if (!dtor && !on_death) return;
    MGUARD__CALLOUT(ctx, {
        if (on_death) on_death(key, bytes, user);
        if (dtor) dtor(bytes, user);
    });
}

static void mguard__weak_free(mguard_weak *t)
{
    mguard_ctx *ctx = t->ctx;
    mguard__free(ctx, t->order);
    mguard__free(ctx, t->vals);
    mguard__id_put(ctx->tabs, &ctx->free_tid, t->tid);
    t->magic = MGUARD__DEAD;
    mguard__bury(ctx, t);
}

/* Is obj in phase 2 of its death (about to be freed: not registrable)? */
static bool mguard__is_dying(const mguard_ctx *ctx, const void *obj)
{
    const mguard__dying *d;
    for (d = ctx->dying; d; d = d->next)
        if (d->obj == obj) return true;
    return false;
}

/* The serial of obj's life in phase 2 of its death, or 0. */
static uint64_t mguard__dying_serial(const mguard_ctx *ctx, const void *obj)
{
    const mguard__dying *d;
    for (d = ctx->dying; d; d = d->next)
        if (d->obj == obj) return d->serial;
    return 0;
}

/* Admit obj as a new record: EINVAL (logged) if dying, ENOMEM (not logged)
   without room for n; on failure nothing changes. */
/* EINVAL (logged) if one of objs[0..n) is in phase 2 of its death, asked before
   anything is reserved (a refusal is never an ENOMEM). Every caller returns at
   once, or holds its handle busy: the hook may free anything. */
static mguard_status mguard__refuse_dying(mguard_ctx *ctx, const void *const *objs, size_t n, const char *fn)
{
    size_t i;
    char nm[MGUARD__NAME];
    for (i = 0; ctx->dying && i < n; i++) {
        if (mguard__is_dying(ctx, objs[i])) { mguard__logf(ctx, MGUARD_LOG_OBJECT_DYING, fn, mguard__named(ctx, objs[i], nm)); return MGUARD_EINVAL; }
    }
    return MGUARD_OK;
}

static mguard_status mguard__admit(mguard_ctx *ctx, const void *obj, uint32_t n, const char *fn)
{
    mguard_status st = mguard__refuse_dying(ctx, &obj, 1, fn);
    if (!st) st = mguard__kx_reserve(ctx, n);
    if (!st) st = mguard__reserve(ctx, (void **)&ctx->objs, &ctx->capobjs, (size_t)ctx->nobjs + n, sizeof(mguard__obj));
    return st;   /* the caller logs ENOMEM */
}

/* Resize t's order and values to ncap. Out of memory nothing changes, but a
   value array may be left larger (harmless: read up to the order's cap). */
static mguard_status mguard__weak_resize(mguard_weak *t, size_t ncap)
{
    mguard_ctx *ctx = t->ctx;
    mguard__oelem *no;
    unsigned char *nv;
    bool grow = ncap > t->cap;
    if (ncap > 0x7fffffffu || (t->vstride && !mguard__mul_fits(ncap, t->vstride))) return MGUARD_ENOMEM;
    if (t->vstride && grow) {
        nv = (unsigned char *)mguard__realloc(ctx, t->vals, ncap * t->vstride);
        if (!nv) return MGUARD_ENOMEM;
        t->vals = nv;
    }
    no = (mguard__oelem *)mguard__realloc(ctx, t->order, ncap * sizeof *no);
    if (!no) return MGUARD_ENOMEM;
    t->order = no;
    t->cap = (uint32_t)ncap;
    if (t->vstride && !grow) {
        nv = (unsigned char *)mguard__realloc(ctx, t->vals, ncap * t->vstride);
        if (nv) t->vals = nv;
    }
    return MGUARD_OK;
}

/* Renumber every table's stamps together, when one table's would span 2^32:
   each entry's new stamp is its rank among all tables' entries, so a death
   still calls a key's tables back in the order it entered them. Iterators
   begun before end (WALK_RENUMBERED); a drain's bound moves along. A merge
   of the tables' orders, each sorted, by a heap of their next places. */
typedef struct mguard__rn { mguard_weak *t; uint32_t pos; uint64_t nbase; } mguard__rn;
#define MGUARD__RN_KEY(r) MGUARD__STAMP((r).t, (r).t->order[(r).pos])

static void mguard__rn_sift(mguard__rn *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        mguard__rn x;
        if (l < n && MGUARD__RN_KEY(h[l]) < MGUARD__RN_KEY(h[m])) m = l;
        if (l + 1 < n && MGUARD__RN_KEY(h[l + 1]) < MGUARD__RN_KEY(h[m])) m = l + 1;
        if (m == i) return;
        x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

static mguard_status mguard__weak_rebase(mguard_ctx *ctx)
{
    mguard__rn *h = NULL;
    mguard_weak *t;
    mguard__drainf *d;
    size_t n = 0, i;
    uint64_t r = 0, total = 0;
    for (t = ctx->tables; t; t = t->next) {
        total += t->len;
        n += t->len != 0;
    }
    /* a context's entries and places ranked in 31 bits, so the next
       renumbering is 2^31 entries away at least */
    if (total > 0x7fffffffu || (n && !(h = (mguard__rn *)mguard__alloc(ctx, n * sizeof *h)))) return MGUARD_ENOMEM;
    for (d = ctx->drains; d; d = d->next) d->moved = false;
    for (n = 0, t = ctx->tables; t; t = t->next) {
        if (!t->len) t->base = total;
        else { h[n].t = t; h[n].pos = 0; n++; }
    }
    for (i = n / 2; i-- > 0;) mguard__rn_sift(h, n, i);
    for (; n; r++) {
        uint64_t old = MGUARD__RN_KEY(h[0]);
        for (d = ctx->drains; d; d = d->next)
            if (!d->moved && d->bound != UINT64_MAX && d->bound <= old) { d->nb = r; d->moved = true; }
        if (!h[0].pos) h[0].nbase = r;
        t = h[0].t;
        t->order[h[0].pos].stamp = (uint32_t)(r - h[0].nbase);
        if (++h[0].pos == t->len) {
            t->base = h[0].nbase;   /* its last key read: its old base no longer needed */
            h[0] = h[--n];
        }
        mguard__rn_sift(h, n, 0);
    }
    for (d = ctx->drains; d; d = d->next)
        if (d->bound != UINT64_MAX) d->bound = d->moved ? d->nb : total;
    for (t = ctx->tables; t; t = t->next) t->rebased = ++t->epoch;
    ctx->next_stamp = total;
    mguard__free(ctx, h);
    return MGUARD_OK;
}

/* Room for one more entry in t's order: compact it when full and a quarter
   tombstones (shrinking when far below its size), else grow it. */
static mguard_status mguard__weak_room(mguard_weak *t)
{
    mguard_ctx *ctx = t->ctx;
    if (t->len < t->cap) return MGUARD_OK;
    if (t->pinned) return MGUARD_ENOMEM; /* entries must not move now */
    if (t->len - t->live >= t->len / 4 + 1) {
        uint32_t i, n = 0;
        size_t ncap = t->cap;
        for (i = 0; i < t->len; i++) {
            mguard__oelem el = t->order[i];
            if (!mguard__weak_at(t, i)) continue;
            if (n != i) {
                t->order[n] = el;
                ctx->kx.slots[el.slot].pos = n;
                if (t->vstride) memcpy(t->vals + (size_t)n * t->vstride, t->vals + (size_t)i * t->vstride, t->vstride);
            }
            n++;
        }
        t->len = n;
        t->epoch++;
        /* far below its peak (under a quarter used): halved until it is
           not, so a table holds memory in proportion to its live entries */
        while (ncap > 8 && (size_t)n + 1 < ncap / 4) ncap /= 2;
        if (ncap < t->cap) (void)mguard__weak_resize(t, ncap);
        return MGUARD_OK;
    }
    return mguard__weak_resize(t, t->cap ? (size_t)t->cap * 2 : 8);
}

/* Room, then the renumbering if due: last, since it is the one step the
   program sees (its walks end), so that out of memory nothing has changed. */
static mguard_status mguard__weak_reserve(mguard_weak *t)
{
    mguard_status st = mguard__weak_room(t);
    if (!st && t->ctx->next_stamp - t->base >= 0xffffffffu) st = mguard__weak_rebase(t->ctx);
    return st;
}

/* An old value's copy for its destructor: on the stack if small, else the heap. */
#define MGUARD__STACK_VALUE 256

/* Copy n value bytes, overlap allowed (small ones through a register). */
static void mguard__copy_value(void *dst, const void *src, size_t n)
{
    if (n == 8) {
        uint64_t x;
        memcpy(&x, src, 8);
        memcpy(dst, &x, 8);
    } else if (n == 4) {
        uint32_t x;
        memcpy(&x, src, 4);
        memcpy(dst, &x, 4);
    } else {
        memmove(dst, src, n);
    }
}

/* Out of memory, no copy: destroy a detached entry's value where it lies,
   t pinned (an insert that would move entries fails with ENOMEM; a destroy
   meanwhile leaves the free to us). */
static void mguard__destroy_in_place(mguard_weak *t, uint32_t pos, const void *key)
{
    t->pinned++;
    mguard__call_value(t->ctx, t->dtor, NULL, t->user, key, t->vals + (size_t)pos * t->vstride);
    if (--t->pinned == 0 && t->zombie) mguard__weak_free(t);
}

/* An overwrite of the value at e: store the new bytes, then destroy the old. */
static mguard_status mguard__weak_overwrite(mguard_weak *t, const void *key, unsigned char *e, const void *value)
{
    mguard_ctx *ctx = t->ctx;
    if (!t->dtor) {
        mguard__copy_value(e, value, t->value_size);
    } else if (t->value_size <= MGUARD__STACK_VALUE) {
        unsigned char raw[MGUARD__STACK_VALUE + 15], *old = MGUARD__ALIGN16(raw);
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

/* A new key (hash h; known: it has other slots) in t: reserve everything,
   then insert (a key in its own death: every caller refused it). The value
   may lie in the index or in t (from mguard_weak_get): it is copied before
   anything can move. */
static mguard_status mguard__weak_insert(mguard_weak *t, const void *key, const void *value, uint64_t h, bool known)
{
    mguard_ctx *ctx = t->ctx;
    unsigned char small[MGUARD__STACK_VALUE];
    unsigned char *tmp = small;
    mguard__kslot *s;
    mguard_status st;
    size_t i;
    if (t->value_size > MGUARD__STACK_VALUE) {
        tmp = (unsigned char *)mguard__alloc(ctx, t->value_size);
        if (!tmp) return MGUARD_ENOMEM;
    }
    mguard__copy_value(tmp, value, t->value_size);
    st = mguard__kx_reserve(ctx, 1);
    if (!st) st = mguard__weak_reserve(t);
    if (st) {
        if (tmp != small) mguard__free(ctx, tmp);
        return st;
    }
    i = mguard__kx_take(&ctx->kx, h);
    s = &ctx->kx.slots[i];
    s->key = key;
    s->tid = t->tid;
    s->pos = t->len;
    t->order[t->len].slot = (uint32_t)i;
    t->order[t->len].stamp = (uint32_t)(ctx->next_stamp++ - t->base);
    mguard__copy_value(mguard__kvalue(t, s), tmp, t->value_size);
    t->len++;
    t->live++;
    if (!known) ctx->live_objs++;
    if (tmp != small) mguard__free(ctx, tmp);
    return MGUARD_OK;
}

#if !defined(MGUARD_NO_SCOPE) || !defined(MGUARD_NO_LEDGER)
/* A set with no checks: the scope and ledger sections' own tables. */
static mguard_status mguard__weak_set_impl(mguard_weak *t, const void *key, const void *value)
{
    uint64_t h = mguard__hash64(key);
    bool known;
    mguard__kslot *s = mguard__kx_find(&t->ctx->kx, key, t->tid, h, &known);
    return s ? mguard__weak_overwrite(t, key, mguard__kvalue(t, s), value) : mguard__weak_insert(t, key, value, h, known);
}
#endif

static mguard_status mguard__weak_set(mguard_weak *t, const void *key, const void *value)
{
    mguard_status st;
    mguard__kslot *s;
    uint64_t h;
    bool known;
    if (!mguard__weak_valid(t, "mguard_weak_set")) return MGUARD_EINVAL;
    if (!key || !value || t->destroying) {
        mguard__logf(t->ctx, key && value ? MGUARD_LOG_HANDLE_DESTROYING : MGUARD_LOG_NULL_ARG, "mguard_weak_set", !key ? "key" : !value ? "value" : "table");
        return MGUARD_EINVAL;
    }
    /* one probe: the entry, or (a new key) whether the key is known under other ids already */
    h = mguard__hash64(key);
    s = mguard__kx_find(&t->ctx->kx, key, t->tid, h, &known);
    if (s) {
        if (!t->dtor) {
            /* an overwrite with no destructor: a lookup and a copy */
            mguard__copy_value(mguard__kvalue(t, s), value, t->value_size);
            return MGUARD_OK;
        }
        st = mguard__weak_overwrite(t, key, mguard__kvalue(t, s), value);
    } else if (!known && t->ctx->dying && mguard__is_dying(t->ctx, key)) {
        mguard_ctx *ctx = t->ctx;   /* refused before anything is reserved, named (the hook may destroy t) */
        char nm[MGUARD__NAME];
        mguard__logf(ctx, MGUARD_LOG_OBJECT_DYING, "mguard_weak_set", mguard__named(ctx, key, nm));
        return MGUARD_EINVAL;
    } else {
        st = mguard__weak_insert(t, key, value, h, known);
    }
    if (st == MGUARD_ENOMEM) mguard__logf(t->ctx, t->pinned ? MGUARD_LOG_WEAK_PINNED : MGUARD_LOG_NOMEM, "mguard_weak_set");
    return st;
}

/* mguard_weak_set's common case, inline: an overwrite in a default
   context's table with no destructor. false: nothing done. */
static MGUARD__HOT bool mguard__fast_weak_set(mguard_weak *t, const void *key, const void *value)
{
    mguard__kslot *s;
    if (!MGUARD__PLAIN_WEAK(t) || t->dtor || !value || t->destroying) return false;
    s = mguard__kx_get(&t->ctx->kx, key, t->tid);   /* NULL key: not found */
    if (!s) return false;
    mguard__copy_value(mguard__kvalue(t, s), value, t->value_size);
    return true;
}

/* mguard_weak_get past the first group of the probe. */
static MGUARD__NOINLINE void *mguard__weak_get_rest(const mguard_weak *t, const void *key, uint64_t h)
{
    mguard__kslot *s = mguard__kx_probe(&t->ctx->kx, key, t->tid, h, NULL, MGUARD__KX_GROUP);
    return s ? (void *)mguard__kvalue(t, s) : NULL;
}

static MGUARD__HOT void *mguard__weak_get(const mguard_weak *t, const void *key)
{
    mguard__kslot *s;
    uint64_t h;
    bool more;
    if (!mguard__weak_valid(t, "mguard_weak_get")) return NULL;
    h = mguard__hash64(key);   /* a NULL key is never a key: not found */
    s = mguard__kx_first(&t->ctx->kx, key, t->tid, h, &more);
    if (s) return t->magic == MGUARD__MAGIC_WEAK ? s->v.b : mguard__kvalue(t, s);   /* the magic says: in the slot */
    return more ? mguard__weak_get_rest(t, key, h) : NULL;
}

static void *mguard__weak_get_sized(const mguard_weak *t, const void *key, size_t size)
{
    if (!mguard__weak_valid(t, "mguard_weak_get_sized")) return NULL;
    if (size != t->value_size) {
        mguard__logf(t->ctx, MGUARD_LOG_WEAK_SIZE_MISMATCH, "mguard_weak_get_sized",
                     (unsigned long)t->value_size, (unsigned long)size);
        return NULL;
    }
    return mguard__weak_get(t, key);
}

static bool mguard__weak_contains(const mguard_weak *t, const void *key) { return mguard__weak_get(t, key) != NULL; }

static size_t mguard__weak_count(const mguard_weak *t)
{
    return mguard__weak_valid(t, "mguard_weak_count") ? t->live : 0;
}

/* Remove t's entry in slot s (known: its key has other slots): detach, then destroy
   the value from a copy (in place if none can be had), or (take) copy it to out. */
static void mguard__weak_remove_slot(mguard_weak *t, mguard__kslot *s, bool known, void *out)
{
    mguard_ctx *ctx = t->ctx;
    unsigned char raw[MGUARD__STACK_VALUE + 15], *const small = MGUARD__ALIGN16(raw);
    unsigned char *tmp = NULL;
    mguard_value_dtor dtor = out ? NULL : t->dtor;
    void *user = t->user;
    const void *key = s->key;
    uint32_t pos = s->pos;
    if (out) memmove(out, mguard__kvalue(t, s), t->value_size);   /* out may lie in a table */
    if (dtor) {
        tmp = t->value_size <= MGUARD__STACK_VALUE ? small : (unsigned char *)mguard__alloc(ctx, t->value_size);
        if (tmp) memcpy(tmp, mguard__kvalue(t, s), t->value_size);
    }
    t->live--;
    mguard__kx_erase(&ctx->kx, (size_t)(s - ctx->kx.slots), mguard__hash64(key));
    if (!known) ctx->live_objs--;
    if (!dtor) return;
    if (tmp) {
        mguard__call_value(ctx, dtor, NULL, user, key, tmp);
        if (tmp != small) mguard__free(ctx, tmp);
    } else {
        /* only a value over MGUARD__STACK_VALUE bytes needs the heap: it lies in t's value array */
        mguard__destroy_in_place(t, pos, key);
    }
}

/* mguard_weak_take's common case, inline: a default context's table with
   no destructor (or out given), the key present. false: nothing done. */
static MGUARD__HOT bool mguard__fast_weak_take(mguard_weak *t, const void *key, void *out)
{
    mguard__kx *kx;
    mguard__kslot *s;
    uint64_t h;
    bool known;
    if (!MGUARD__PLAIN_WEAK(t) || (t->dtor && !out)) return false;
    kx = &t->ctx->kx;
    h = mguard__hash64(key);
    s = mguard__kx_probe(kx, key, t->tid, h, &known, 0);
    if (!s) return false;
    if (out) memmove(out, mguard__kvalue(t, s), t->value_size);   /* out may lie in a table */
    t->live--;
    mguard__kx_erase(kx, (size_t)(s - kx->slots), h);
    if (!known) t->ctx->live_objs--;
    return true;
}

/* The entry leaves t: its value copied into out, or (NULL out) destroyed. */
static mguard_status mguard__weak_take(mguard_weak *t, const void *key, void *out)
{
    mguard__kslot *s;
    bool known;
    if (!mguard__weak_valid(t, "mguard_weak_take")) return MGUARD_EINVAL;
    if (!key) { mguard__logf(t->ctx, MGUARD_LOG_NULL_ARG, "mguard_weak_take", "key"); return MGUARD_EINVAL; }
    s = mguard__kx_find(&t->ctx->kx, key, t->tid, mguard__hash64(key), &known);
    if (!s) return MGUARD_NOT_FOUND;
    mguard__weak_remove_slot(t, s, known, out);
    return MGUARD_OK;
}

static mguard_weak_iter mguard__weak_iterate(mguard_weak *t)
{
    mguard_weak_iter it;
    memset(&it, 0, sizeof it);
    if (mguard__weak_valid(t, "mguard_weak_iterate")) {
        it.t_ = t;
        it.epoch_ = t->epoch;
        it.seq_ = t->base;
    }
    return it;
}

#define MGUARD__WALK_AHEAD 64

/* The next live entry from it->pos_, or NULL at the end of t's order. */
static MGUARD__HOT mguard__kslot *mguard__weak_step(mguard_weak *t, mguard_weak_iter *it)
{
    while (it->pos_ < t->len) {
        uint32_t i = (uint32_t)it->pos_++;
        mguard__kslot *s;
        /* the slots lie in hash order: start loading one a few places on,
           so that a walk waits on memory once, not per entry (in an index
           past a core's L2: below, it costs more than it saves) */
        if (t->ctx->kx.mask >= MGUARD__KX_PREFETCH_CAP - 1 && i + MGUARD__WALK_AHEAD < t->len)
            MGUARD__PREFETCH(&t->ctx->kx.slots[t->order[i + MGUARD__WALK_AHEAD].slot & t->ctx->kx.mask]);
        s = mguard__weak_at(t, i);   /* NULL: removed, or dying in place */
        if (!s) continue;
        it->key = s->key;
        it->value = mguard__kvalue(t, s);
        it->seq_ = MGUARD__STAMP(t, t->order[i]) + 1;   /* the next one to look for */
        return s;
    }
    return NULL;
}

/* mguard_weak_next's common case, inline: a default context's table not
   compacted since the last step, an entry left. false: the general path. */
static MGUARD__HOT bool mguard__fast_weak_next(mguard_weak_iter *it)
{
    mguard_weak *t = it ? it->t_ : NULL;
    return MGUARD__PLAIN_WEAK(t) && it->epoch_ == t->epoch && mguard__weak_step(t, it) != NULL;
}

static bool mguard__weak_next(mguard_weak_iter *it)
{
    mguard_weak *t;
    if (!it || !it->t_) return false;
    t = it->t_;
    if (!mguard__weak_valid(t, "mguard_weak_next")) { it->t_ = NULL; return false; }
    if (it->epoch_ != t->epoch) {
        /* Compacted since the last step: find the first entry after the
           last one visited (stamps grow along the order). */
        size_t lo = 0, hi = t->len;
        if (it->epoch_ < t->rebased) {
            /* 2^32 entries made in the context while the walk was paused */
            mguard__logf(t->ctx, MGUARD_LOG_WALK_RENUMBERED, "mguard_weak_next", "table");
            it->key = NULL;
            it->value = NULL;
            it->t_ = NULL;
            return false;
        }
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (MGUARD__STAMP(t, t->order[mid]) < it->seq_) lo = mid + 1; else hi = mid;
        }
        it->pos_ = lo;
        it->epoch_ = t->epoch;
    }
    if (mguard__weak_step(t, it)) return true;
    it->key = NULL;
    it->value = NULL;
    it->t_ = NULL;
    return false;
}

/* Remove every entry made before stamp bound, in order, each destructor
   run with its entry gone; busy keeps t alive: a destroy requested
   meanwhile is done by the outermost walk. */
static void mguard__weak_finish(mguard_weak *t);

static void mguard__weak_drain(mguard_weak *t, uint64_t bound)
{
    mguard_ctx *ctx = t->ctx;
    mguard_weak_iter it = mguard__weak_iterate(t);
    mguard__drainf f;
    f.bound = bound;
    f.prev = NULL;
    f.next = ctx->drains;
    if (f.next) f.next->prev = &f;
    /* cppcheck-suppress autoVariables ; unlinked before this function returns */
    ctx->drains = &f;
    t->busy++;
    for (;;) {
        bool known;
        mguard__kslot *s;
        /* renumbered by a destructor's insert: again from the start (what
           was drained is gone), the bound moved along */
        if (it.epoch_ < t->rebased) it = mguard__weak_iterate(t);
        if (!mguard__weak_next(&it) || it.seq_ > f.bound) break;
        s = mguard__kx_find(&ctx->kx, it.key, t->tid, mguard__hash64(it.key), &known);
        mguard__weak_remove_slot(t, s, known, NULL);
    }
    t->busy--;
    if (f.prev) f.prev->next = f.next; else ctx->drains = f.next;
    if (f.next) f.next->prev = f.prev;
}

static void mguard__weak_clear(mguard_weak *t)
{
    if (!mguard__weak_valid(t, "mguard_weak_clear")) return;
    mguard__weak_drain(t, t->ctx->next_stamp);
    if (t->destroying && !t->busy) mguard__weak_finish(t);
}

static void mguard__weak_finish(mguard_weak *t)
{
    mguard_ctx *ctx = t->ctx;
    /* destroying refuses new keys, so one drain empties the table */
    mguard__weak_drain(t, UINT64_MAX);
    MGUARD_ASSERT(t->live == 0);
#ifdef MGUARD_DEBUG
    mguard__dbg_h_remove(ctx, t);   /* the handle dies here, even as a zombie */
#endif
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

static void mguard__weak_destroy(mguard_weak *t)
{
    if (!mguard__weak_valid(t, "mguard_weak_destroy")) return;
    if (t->destroying) { mguard__logf(t->ctx, MGUARD_LOG_DESTROY_TWICE, "mguard_weak_destroy", "table", (void *)t); return; }
    t->destroying = 1;
    if (t->busy) return;   /* the clear in progress finishes the job */
    mguard__weak_finish(t);
}

static mguard_status mguard__weak_get_copy(const mguard_weak *t, const void *key, void *out)
{
    const void *p;
    if (!mguard__weak_valid(t, "mguard_weak_get_copy")) return MGUARD_EINVAL;
    if (!key || !out) { mguard__logf(t->ctx, MGUARD_LOG_NULL_ARG, "mguard_weak_get_copy", !key ? "key" : "out"); return MGUARD_EINVAL; }
    p = mguard__weak_get(t, key);
    if (!p) return MGUARD_NOT_FOUND;
    mguard__copy_value(out, p, t->value_size);   /* out may overlap a stored value */
    return MGUARD_OK;
}

/* ======================================================================= */
/* >>ref: 4. weak refs */
/* ======================================================================= */

/* ---- 4. weak refs ------------------------------------------------------ */

static mguard_ref mguard__ref_make(mguard_ctx *ctx, const void *obj)
{
    mguard_ref ref;
    uint32_t r;
    uint64_t serial = 0;
    bool known;
    ref.obj_ = NULL;
    ref.serial_ = 0;
    ref.ctx_ = 0;
    if (!mguard__ctx_ok(ctx, "mguard_ref_make") || !obj) return ref;
    r = mguard__reg_look(ctx, obj, &known, &serial);
    if (!r) {
        mguard_status st = mguard__admit(ctx, obj, 1, "mguard_ref_make");
        if (st == MGUARD_ENOMEM) mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_ref_make");
        if (st) return ref;   /* the null ref */
        r = mguard__reg_new(ctx, obj, known);
        serial = ctx->next_serial;
    }
    ctx->objs[r - 1].flags |= MGUARD__F_PINNED;
    ref.obj_ = obj;
    ref.serial_ = serial;
    ref.ctx_ = ctx->id;
    return ref;
}

/* The record of a live object whose serial is `serial`, or 0: one slot. */
static MGUARD__HOT uint32_t mguard__find_serial(const mguard_ctx *ctx, const void *obj, uint64_t serial)
{
    const mguard__kslot *s = mguard__kx_get(&ctx->kx, obj, 0);
    return s && s->v.u == serial ? s->pos : 0;
}

/* mguard_ref_get's rare answers, out of line (the read stays inlinable):
   another context's ref (logged), a probe past its first group. */
static MGUARD__NOINLINE void *mguard__ref_foreign(const mguard_ctx *ctx)
{
    mguard__logf(ctx, MGUARD_LOG_REF_FOREIGN, "mguard_ref_get");
    return NULL;
}
static MGUARD__NOINLINE void *mguard__ref_get_rest(const mguard_ctx *ctx, mguard_ref ref, uint64_t h)
{
    const mguard__kslot *s = mguard__kx_find_rest(&ctx->kx, ref.obj_, 0, h);
    return s && s->v.u == ref.serial_ ? mguard__unconst(ref.obj_) : NULL;
}

/* The ref's object if its slot (table id 0) holds the ref's serial. */
static MGUARD__HOT void *mguard__ref_get(const mguard_ctx *ctx, mguard_ref ref)
{
    const mguard__kslot *s;
    uint64_t h;
    bool more;
    if (!mguard__ctx_ok(ctx, "mguard_ref_get") || !ref.serial_) return NULL;
    if (ref.ctx_ != ctx->id) return mguard__ref_foreign(ctx);
    h = mguard__hash64(ref.obj_);
    s = mguard__kx_first(&ctx->kx, ref.obj_, 0, h, &more);
    if (s) return s->v.u == ref.serial_ ? mguard__unconst(ref.obj_) : NULL;
    return more ? mguard__ref_get_rest(ctx, ref, h) : NULL;
}

bool mguard_ref_is_null(mguard_ref ref) { return ref.serial_ == 0; }

static void *mguard__ref_get_retained(const mguard_ctx *ctx, mguard_ref ref, mguard_retain_fn try_retain, void *user)
{
    void *obj = mguard__ref_get(ctx, ref);
    if (obj && try_retain && !try_retain(obj, user)) return NULL;
    return obj;
}

/* ======================================================================= */
/* >>trackers: 5. mutation trackers */
/* ======================================================================= */

/* ---- 5. mutation trackers ---------------------------------------------- */

/* Link frame f (on the caller's stack) for the watchers w[0..n) of obj's life
   serial, swapped out just now, before anything calls out: from here
   mguard_unwatch can cancel one, and obj's death on another thread waits
   for them. mguard__fire calls them and unlinks f. */
static void mguard__fire_begin(mguard_ctx *ctx, mguard__firing *f, const void *obj, uint64_t serial,
                               mguard__watcher *w, size_t n)
{
    f->obj = obj;
    f->obj_serial = serial;
    f->w = w;
    f->n = n;
    f->calling = NULL;
    f->calling_serial = 0;
#ifdef MGUARD__PTHREADS
    if (ctx->lk) f->thread = pthread_self();
#endif
    f->next = ctx->firing;
    ctx->firing = f;
}

/* Call f's watchers (attr: the mutation's, NULL at a death); a guard since
   destroyed, or one unwatched meanwhile, is skipped. */
static void mguard__fire(mguard_ctx *ctx, mguard__firing *f, const char *attr)
{
    const void *obj = f->obj;
    mguard__watcher *w = f->w;
    size_t i, n = f->n;
    mguard__firing **pp;
    for (i = 0; i < n; i++) {
        mguard_invalidate_fn fn;
        void *guard, *user;
        MGUARD__FLUSH(ctx);   /* a logger may destroy the guard: then it is not called */
        /* read under the lock: another thread's mguard_unwatch may cancel w[i] while it is let go */
        fn = w[i].fn;
        guard = w[i].guard;
        user = w[i].user;
        if (!fn || !mguard__find_serial(ctx, guard, w[i].guard_serial)) continue;
        w[i].fn = NULL;       /* told: an unwatch from now on does not find it */
        f->calling = guard;   /* seen by other threads only while the lock is out */
        f->calling_serial = w[i].guard_serial;
        MGUARD__CALLOUT(ctx, fn(guard, obj, attr, user));
    }
    /* Unlink the frame. Frames of this thread above it were unlinked by
       their own calls; another thread's may still be above it. */
    for (pp = &ctx->firing; *pp != f; pp = &(*pp)->next) {}
    *pp = f->next;
}

/* Thread-safe contexts: mguard_on_destroy(guard) returns once no callback of
   guard runs on another thread, and no other thread still tells watchers of
   this life of guard (as the watched object) of a mutation (this thread's
   are below us: not waited for); none can start after phase 1 dropped its
   serial. No pthreads: no wait. */
static void mguard__wait_guard(mguard_ctx *ctx, const void *guard, uint64_t serial)
{
#ifdef MGUARD__PTHREADS
    pthread_t self;
    if (!ctx->lk || !ctx->firing) return;
    self = pthread_self();
    for (;;) {
        const mguard__firing *f;
        for (f = ctx->firing; f; f = f->next)
            if (((f->calling == guard && f->calling_serial == serial) || (f->obj == guard && f->obj_serial == serial)) &&
                !pthread_equal(f->thread, self))
                break;
        if (!f) return;
        MGUARD__LK_OUT(ctx);
        sched_yield();
        MGUARD__LK_IN(ctx);
    }
#else
    (void)ctx;
    (void)guard;
    (void)serial;
#endif
}

/* The same for ledger hooks handed obj (the ledgers dropped it already). */
static void mguard__wait_hooks(mguard_ctx *ctx, const void *obj)
{
#ifdef MGUARD__PTHREADS
    pthread_t self = pthread_self();
    for (;;) {
        const mguard__hookframe *f;
        for (f = ctx->hooking; f; f = f->next)
            if ((f->p == obj || f->q == obj) && !pthread_equal(f->thread, self)) break;
        if (!f) return;
        MGUARD__LK_OUT(ctx);
        sched_yield();
        MGUARD__LK_IN(ctx);
    }
#else
    (void)ctx;
    (void)obj;
#endif
}

/* Drop l's dead guards' watchers (else a never-mutated list grows); amortized. */
static void mguard__prune_watchers(mguard_ctx *ctx, mguard__wlist *l)
{
    mguard__watcher *ws = l->at;
    uint32_t i, n = 0;
    for (i = 0; i < l->n; i++)
        if (mguard__find_serial(ctx, ws[i].guard, ws[i].guard_serial)) ws[n++] = ws[i];
    l->n = n;
}

static mguard_status mguard__watch(mguard_ctx *ctx, const void *obj, void *guard, mguard_invalidate_fn fn, void *user)
{
    uint32_t r, g;
    uint64_t gs = 0;
    bool known_o = false, known_g = false;
    mguard__side *sd = NULL;
    const void *both[2];
    mguard_status st;
    if (!mguard__ctx_ok(ctx, "mguard_watch")) return MGUARD_EINVAL;
    if (!obj || !guard || !fn) {
        mguard__logf(ctx, MGUARD_LOG_NULL_ARG, "mguard_watch", !obj ? "object" : !guard ? "guard" : "callback");
        return MGUARD_EINVAL;
    }
    /* Reserve everything first (records for obj and guard, obj's side
       record, one watcher slot), so that failure changes nothing. */
    r = mguard__reg_look(ctx, obj, &known_o, NULL);
    g = mguard__reg_look(ctx, guard, &known_g, &gs);
    both[0] = r ? guard : obj;   /* the ones without a record: a dying object has none */
    both[1] = guard;
    st = mguard__refuse_dying(ctx, both, (size_t)!r + (size_t)!g, "mguard_watch");
    if (!st && !r) st = mguard__admit(ctx, obj, 2, "mguard_watch");
    if (!st && !g) st = mguard__admit(ctx, guard, 2, "mguard_watch");
    if (!st && !(r && ctx->objs[r - 1].side)) st = mguard__side_reserve(ctx, 1);
    if (st) { if (st == MGUARD_ENOMEM) mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_watch"); return st; }
    if (r) sd = MGUARD__SIDE(ctx, &ctx->objs[r - 1]);
    if (sd && g) {
        /* the same (obj, guard, fn) waiting already: EEXIST, nothing changed */
        const mguard__watcher *ws = MGUARD__WATCHERS(&ctx->objs[r - 1], sd);
        uint32_t i, nw = MGUARD__NWATCH(&ctx->objs[r - 1], sd);
        for (i = 0; i < nw; i++)
            if (ws[i].guard == guard && ws[i].fn == fn && ws[i].guard_serial == gs) return MGUARD_EEXIST;
    }
    if (sd && MGUARD__NWATCH(&ctx->objs[r - 1], sd) == MGUARD__WCAP(&ctx->objs[r - 1], sd)) {
        /* full: the inline watcher moves to a heap list, or the list grows */
        if (!(ctx->objs[r - 1].flags & MGUARD__F_WLIST)) {
            mguard__watcher *list = (mguard__watcher *)mguard__alloc(ctx, 4 * sizeof *list);
            if (!list) { mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_watch"); return MGUARD_ENOMEM; }
            list[0] = sd->w.one;
            sd->w.list.at = list;
            sd->w.list.n = 1;
            sd->w.list.cap = 4;
            ctx->objs[r - 1].flags |= MGUARD__F_WLIST;
        } else {
            if (sd->w.list.n >= 8) mguard__prune_watchers(ctx, &sd->w.list);
            if (mguard__reserve(ctx, (void **)&sd->w.list.at, &sd->w.list.cap, (size_t)sd->w.list.n + 1, sizeof(mguard__watcher))) {
                mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_watch");
                return MGUARD_ENOMEM;
            }
        }
    }
    /* a new record for each of them (one if obj is the guard) */
    if (!r) {
        r = mguard__reg_new(ctx, obj, known_o);
        if (guard == obj) gs = ctx->next_serial;
    }
    if (!g) {
        if (guard == obj) {
            g = r;
        } else {
            g = mguard__reg_new(ctx, guard, known_g);
            gs = ctx->next_serial;
        }
    }
    ctx->objs[g - 1].flags |= MGUARD__F_PINNED;
    ctx->objs[r - 1].flags |= MGUARD__F_TRACKER;
    sd = mguard__side_take(ctx, r);
    {
        mguard__watcher *nw;
        if (ctx->objs[r - 1].flags & MGUARD__F_WLIST) {
            nw = &sd->w.list.at[sd->w.list.n++];
        } else {
            MGUARD_ASSERT(!sd->w.one.fn);   /* a full inline watcher moved to a list above */
            nw = &sd->w.one;
        }
        nw->guard = guard;
        nw->guard_serial = gs;
        nw->fn = fn;
        nw->user = user;
    }
    return MGUARD_OK;
}

static mguard_status mguard__unwatch(mguard_ctx *ctx, const void *obj, const void *guard)
{
    uint32_t r, g;
    uint64_t gserial, life;
    size_t found = 0;
    mguard__firing *f;
    if (!mguard__ctx_ok(ctx, "mguard_unwatch")) return MGUARD_EINVAL;
    if (!obj || !guard) { mguard__logf(ctx, MGUARD_LOG_NULL_ARG, "mguard_unwatch", !obj ? "object" : "guard"); return MGUARD_EINVAL; }
    /* only the guard's current life counts: watchers of a dead guard at its address are dropped here */
    g = mguard__reg_find(ctx, guard);
    gserial = g ? mguard__serial_of(ctx, guard) : 0;
    r = mguard__reg_find(ctx, obj);
    if (r && ctx->objs[r - 1].side) {
        const mguard__obj *o = &ctx->objs[r - 1];
        mguard__side *sd = &ctx->sides[o->side - 1];
        mguard__watcher *ws = MGUARD__WATCHERS(o, sd);
        uint32_t i, n, nw = MGUARD__NWATCH(o, sd);
        for (i = 0, n = 0; i < nw; i++) {
            if (ws[i].guard == guard) found += g && ws[i].guard_serial == gserial;
            else ws[n++] = ws[i];
        }
        if (o->flags & MGUARD__F_WLIST) sd->w.list.n = n;
        else if (!n) memset(&sd->w.one, 0, sizeof sd->w.one);
    }
    /* an invalidation in progress of this life of obj (not of one that died at its address) */
    life = r ? mguard__serial_of(ctx, obj) : mguard__dying_serial(ctx, obj);
    for (f = ctx->firing; f; f = f->next) {
        size_t k;
        if (f->obj != obj || f->obj_serial != life) continue;
        for (k = 0; k < f->n; k++) {
            if (f->w[k].guard == guard && f->w[k].fn) {
                f->w[k].fn = NULL;
                found += g && f->w[k].guard_serial == gserial;
            }
        }
    }
    return found ? MGUARD_OK : MGUARD_NOT_FOUND;
}

/* A mutation of obj (r: its record, serial: the record's; or 0). Phase 1:
   what depends on obj leaves (the event hook), the tracker counts, watchers
   are swapped out; phase 2: the watchers fire, then the drops' values are
   destroyed. */
static MGUARD__NOINLINE void mguard__mutation_of(mguard_ctx *ctx, const void *obj, uint32_t r, uint64_t serial, const char *attr,
                                                  const char *file, int line)
{
    mguard__side *sd;
    mguard__watcher *w, one;
    mguard__firing f;
    mguard__evq cq;
    size_t n;
    memset(&cq, 0, sizeof cq);
    if (mguard__part_hears(ctx, obj)) ctx->evpart->event(ctx, obj, attr, file, line, 0, &cq);
    sd = r && (ctx->objs[r - 1].flags & MGUARD__F_TRACKER) ? &ctx->sides[ctx->objs[r - 1].side - 1] : NULL;
    if (sd) sd->mutations++;
    if (!sd || !MGUARD__NWATCH(&ctx->objs[r - 1], sd)) {
        MGUARD__EV_NAME(ctx, obj, &cq);
        MGUARD__EV_FINISH(ctx, &cq);
        return;
    }
    /* Swap the list out: watchers the callbacks add go to a fresh list, for the next mutation. */
    mguard__take_watchers(&ctx->objs[r - 1], sd, &w, &n, &one);
    /* cppcheck-suppress autoVariables ; unlinked by mguard__fire below */
    mguard__fire_begin(ctx, &f, obj, serial, w, n);
    MGUARD__EV_NAME(ctx, obj, &cq);
    mguard__fire(ctx, &f, attr);
    if (w != &one) {
        /* the heap list back for reuse if the tracker lives and got none meanwhile
           (side records may have moved; a callback may have added an inline watcher) */
        mguard__obj *o;
        r = mguard__reg_find(ctx, obj);
        o = r ? &ctx->objs[r - 1] : NULL;
        sd = o && (o->flags & MGUARD__F_TRACKER) ? MGUARD__SIDE(ctx, o) : NULL;
        if (sd && !(o->flags & MGUARD__F_WLIST)) {
            uint32_t k = sd->w.one.fn != NULL;
            if (k) w[0] = sd->w.one;
            sd->w.list.at = w;
            sd->w.list.n = k;
            sd->w.list.cap = (uint32_t)n;  /* at least n, and n >= 1 */
            o->flags |= MGUARD__F_WLIST;
        } else {
            mguard__free(ctx, w);
        }
    }
    MGUARD__EV_FINISH(ctx, &cq);
}

/* Does a mutation of obj (r: its record, or 0) do anything (a tracker, the
   part that hears events)? Most objects are only table keys: a lookup and a test. */
#define MGUARD__MUTATION_MATTERS(ctx, r) \
    (((r) && ((ctx)->objs[(r) - 1].flags & MGUARD__F_TRACKER)) || (ctx)->npslots || (ctx)->hear_all)

static void mguard__on_mutation_at(mguard_ctx *ctx, const void *obj, const char *attr, const char *file, int line)
{
    uint32_t r;
    uint64_t serial = 0;
    if (!mguard__ctx_ok(ctx, "mguard_on_mutation_at") || !obj) return;
    r = mguard__reg_find_serial(ctx, obj, &serial);
    if (MGUARD__MUTATION_MATTERS(ctx, r)) mguard__mutation_of(ctx, obj, r, serial, attr, file, line);
}

static uint64_t mguard__mutation_count(const mguard_ctx *ctx, const void *obj)
{
    uint32_t r;
    if (!mguard__ctx_ok(ctx, "mguard_mutation_count") || !obj) return 0;
    r = mguard__reg_find(ctx, obj);
    return r && ctx->objs[r - 1].side ? ctx->sides[ctx->objs[r - 1].side - 1].mutations : 0;
}

/* ======================================================================= */
/* >>gen: 6. generation tags */
/* ======================================================================= */

/* ---- 6. generation tags ------------------------------------------------ */

static mguard_status mguard__flag(mguard_ctx *ctx, const void *obj, uint32_t flag, const char *fn)
{
    uint32_t r;
    bool known;
    if (!mguard__ctx_ok(ctx, fn)) return MGUARD_EINVAL;
    if (!obj) { mguard__logf(ctx, MGUARD_LOG_NULL_ARG, fn, "object"); return MGUARD_EINVAL; }
    r = mguard__reg_look(ctx, obj, &known, NULL);
    if (!r) {
        mguard_status st = mguard__admit(ctx, obj, 1, fn);
        if (st == MGUARD_ENOMEM) mguard__logf(ctx, MGUARD_LOG_NOMEM, fn);
        if (st) return st;
        r = mguard__reg_new(ctx, obj, known);
    }
    ctx->objs[r - 1].flags |= flag;
    if (flag == MGUARD__F_TAGGED) ctx->objs[r - 1].gen = ctx->generation;
    return MGUARD_OK;
}

static mguard_status mguard__gen_tag(mguard_ctx *ctx, const void *obj)
{
    return mguard__flag(ctx, obj, MGUARD__F_TAGGED, "mguard_gen_tag");
}

static long mguard__gen_get(const mguard_ctx *ctx, const void *obj)
{
    uint32_t r;
    if (!mguard__ctx_ok(ctx, "mguard_gen_get") || !obj) return -1;
    r = mguard__reg_find(ctx, obj);
    return (r && (ctx->objs[r - 1].flags & MGUARD__F_TAGGED)) ? ctx->objs[r - 1].gen : -1;
}

/* An untagged object asked about: old, or new (reported once) if strict. */
static MGUARD__NOINLINE bool mguard__gen_untagged(const mguard_ctx *ctx, const void *obj, const char *fn)
{
    char nm[MGUARD__NAME];
    if (!ctx->strict_gen) return false;
    if (!ctx->warned_untagged) {
        ((mguard_ctx *)mguard__unconst(ctx))->warned_untagged = true;
        mguard__logf(ctx, MGUARD_LOG_GEN_UNTAGGED, fn, mguard__named((mguard_ctx *)mguard__unconst(ctx), obj, nm));
    }
    return true;
}

/* Tagged in generation since or later (ctx checked by the caller). */
static MGUARD__HOT bool mguard__gen_since(const mguard_ctx *ctx, const void *obj, long since, const char *fn)
{
    uint32_t r;
    if (!obj) return false;
    r = mguard__reg_find(ctx, obj);
    if (r && (ctx->objs[r - 1].flags & MGUARD__F_TAGGED)) return ctx->objs[r - 1].gen >= since;
    return mguard__gen_untagged(ctx, obj, fn);
}

static bool mguard__gen_is_since(const mguard_ctx *ctx, const void *obj, long gen)
{
    return mguard__ctx_ok(ctx, "mguard_gen_is_since") && mguard__gen_since(ctx, obj, gen, "mguard_gen_is_since");
}

static long mguard__gen_current(const mguard_ctx *ctx)
{
    return mguard__ctx_ok(ctx, "mguard_gen_current") ? ctx->generation : -1;
}

static long mguard__gen_advance(mguard_ctx *ctx)
{
    if (!mguard__ctx_ok(ctx, "mguard_gen_advance")) return -1;
    if (ctx->generation == LONG_MAX) { mguard__logf(ctx, MGUARD_LOG_GEN_LIMIT, "mguard_gen_advance"); return LONG_MAX; }
    return ++ctx->generation;
}

static mguard_status mguard__gen_mark_class_dynamic(mguard_ctx *ctx, const void *cls)
{
    return mguard__flag(ctx, cls, MGUARD__F_CLASS_DYN, "mguard_gen_mark_class_dynamic");
}

static MGUARD__HOT bool mguard__gen_is_dynamic(const mguard_ctx *ctx, const void *obj, const void *cls)
{
    uint32_t r;
    if (!mguard__ctx_ok(ctx, "mguard_gen_is_dynamic")) return false;
    r = cls ? mguard__reg_find(ctx, cls) : 0;
    if (r && (ctx->objs[r - 1].flags & MGUARD__F_CLASS_DYN)) return true;
    return mguard__gen_since(ctx, obj, ctx->generation, "mguard_gen_is_dynamic");
}

static void mguard__gen_clear(mguard_ctx *ctx)
{
    uint32_t i;
    if (!mguard__ctx_ok(ctx, "mguard_gen_clear")) return;
    ctx->generation = 0;
    for (i = 0; i < ctx->nobjs; i++) {
        mguard__obj *o = &ctx->objs[i];
        if (!o->key) continue;
        o->flags &= ~(uint32_t)(MGUARD__F_TAGGED | MGUARD__F_CLASS_DYN);
        o->gen = -1;
        mguard__reg_drop_if_empty(ctx, i + 1);
    }
}

#ifndef MGUARD_NO_SCOPE
/* ======================================================================= */
/* >>scope: 7. scope hierarchy tracker */
/* ======================================================================= */

/* ---- text output only the reports use ---------------------------------- */

static void mguard__out_pad(mguard__out *o, size_t n)
{
    static const char spaces[] = "                                ";
    while (n) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        mguard__out_put(o, spaces, k);
        n -= k;
    }
}

/* The length snprintf wrote into b[n]; a locale's decimal comma becomes a point. */
static size_t mguard__fmt_len(char *b, size_t n, int k)
{
    size_t i, len = k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
    for (i = 0; i < len; i++)
        if (b[i] == ',') b[i] = '.';
    return len;
}

/* A number for people: integers without a fraction, others with %g. */
static size_t mguard__fmt_num(char *b, size_t n, double v)
{
    int k;
    if (v > -1e15 && v < 1e15 && (double)(long long)v == v) k = snprintf(b, n, "%lld", (long long)v);
    else k = snprintf(b, n, "%g", v);
    return mguard__fmt_len(b, n, k);
}

/* A JSON number (not finite: 0): below 1e15 three decimals (nanoseconds of a
   microsecond clock), beyond %.17g, which fits b. */
static void mguard__out_json_num(mguard__out *o, double v)
{
    char b[64];
    int k;
    if (!(v - v == 0.0)) v = 0.0;
    if (v > -1e15 && v < 1e15 && (double)(long long)v == v) k = snprintf(b, sizeof b, "%lld", (long long)v);
    else if (v > -1e15 && v < 1e15) k = snprintf(b, sizeof b, "%.3f", v);
    else k = snprintf(b, sizeof b, "%.17g", v);
    mguard__out_put(o, b, mguard__fmt_len(b, sizeof b, k));
}

/* Length of the valid UTF-8 sequence at p, 0 if it is not one. */
static size_t mguard__utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return (p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80) ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return (p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80) ? 4 : 0;
    }
    return 0;
}

/* A JSON string, escaped; invalid UTF-8 becomes U+FFFD: any name is valid JSON. */
static void mguard__out_json_str(mguard__out *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    mguard__out_put(o, "\"", 1);
    while (*p) {
        size_t n = mguard__utf8_len(p);
        if (*p == '"' || *p == '\\') {
            char e[2];
            e[0] = '\\';
            e[1] = (char)*p;
            mguard__out_put(o, e, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", (unsigned)*p);
            mguard__out_put(o, e, 6);
        } else if (n) {
            mguard__out_put(o, (const char *)p, n);
            p += n;
            continue;
        } else {
            mguard__out_str(o, "\\ufffd");
        }
        p++;
    }
    mguard__out_put(o, "\"", 1);
}

/* ---- the tracker -------------------------------------------------------
   names: a weak table comp -> naming; its key_death hook closes the frames of a
   component that dies while active. Flags: SEEN, comp's children were named from it;
   EXPLICIT, named by mguard_scope_set_name; ATTACHED, by mguard_scope_attach;
   FORGOTTEN, mguard_scope_forget dropped the name (the entry stays, keeping comp's life
   for what is attached under it, and counts as unnamed until named again); FRAMED, a
   mark forget sets and clears within the call.
   recs: one per name ever entered (rec 0 the root), indexed by interned name, in order
   of first entry; vals[2k] is counters[k]'s self, vals[2k + 1] its total (the
   columns of a report; capvals counters fit, those past ncounters are 0); active
   counts open frames with that name (+1: root).
   active[0..nactive): the records with active > 0, each once, in the order they became
   active; active[0] is the root.
   frames: the stack, innermost last; event is the frame's span + 1 (0: not recorded);
   exactly the frames' spans are open (dur < 0).
   warns: the de-duplication set, oldest first, at most max_warnings. busy counts calls
   into s in progress; a destroy meanwhile only sets destroying and the outermost call
   frees s when it returns. */
enum { MGUARD__SCOPE_SEEN = 1u, MGUARD__SCOPE_EXPLICIT = 2u, MGUARD__SCOPE_ATTACHED = 4u, MGUARD__SCOPE_FORGOTTEN = 8u,
       MGUARD__SCOPE_FRAMED = 16u };
#define MGUARD__MAGIC_SCOPE 0x6d677363u  /* "mgsc" */

/* owner: the scope holding the entry (the key-death hook, whose user is the
   context, checks it still exists). from: the component whose walk or
   attach placed this one, in its life from_serial (a newcomer at a dead
   parent's address is not the parent); seg: the name under it, so the name
   follows the parent's renames. NULL for a type name or an explicit name. */
typedef struct mguard__scope_naming {
    const char *name;
    uint32_t flags;
    uintptr_t owner;
    const void *from;
    uint64_t from_serial;
    uint64_t life;             /* comp's life: a number of the context's
                                  serials, taken when comp was first named */
    const char *seg;
} mguard__scope_naming;
typedef struct mguard__scope_rec {
    const char *name;          /* index key: must stay first */
    uint32_t active, capvals;
    double *vals;              /* 2 x capvals: self, total */
} mguard__scope_rec;
typedef struct mguard__scope_frame { const void *comp; uint32_t rec, event, phase; } mguard__scope_frame;
typedef struct mguard__scope_event {
    const char *name;
    double ts, dur;            /* dur < 0: still open */
    uint32_t depth, phase;
} mguard__scope_event;
typedef struct mguard__scope_wmsg { uint32_t hash; char *msg; } mguard__scope_wmsg;

struct mguard_scope {
    mguard__handle hd;         /* first: magic, kind, context */
    mguard__part part;         /* the context's list of parts */
    mguard_scope_desc desc;
    const char *root;
    mguard_weak *names;
    mguard__index rec_index;
    mguard__scope_rec *recs;
    uint32_t nrecs, caprecs;
    uint32_t *active;
    uint32_t nactive, capactive;
    mguard__scope_frame *frames;
    uint32_t nframes, capframes;
    const char **counters;
    uint32_t ncounters, capcounters;
    mguard__scope_event *events;
    uint32_t nevents, capevents;
    uint64_t dropped;
    double tick;               /* the logical clock */
    mguard__scope_wmsg *warns;
    uint32_t nwarns, capwarns;
    const char *phases[MGUARD_SCOPE_MAX_PHASES]; /* interned */
    uint32_t nphases, phase;
    int busy, destroying;
    const char **held;         /* s's references to interned strings, each once */
    uint32_t nheld, capheld;
    mguard__index held_index;  /* held by pointer */
};

#define mguard__scope_ok(h) mguard__handle_ok((h), MGUARD__MAGIC_SCOPE, MGUARD__DBG_SCOPE, __func__)

/* The interned copy of str, held by s: one reference per distinct string
   (held, indexed by pointer), all released when s is freed, so nothing of
   s reads a released string. NULL on allocation failure (nothing changed). */
static const char *mguard__scope_intern(mguard_ctx *ctx, mguard_scope *s, const char *str)
{
    const char *in = mguard__str_intern(ctx, str);
    if (!in) return NULL;
    if (mguard__ix_find(&s->held_index, (const unsigned char *)s->held, sizeof *s->held, in, mguard__hash_ptr(in))) {
        mguard__str_release(ctx, in);   /* s holds it already */
        return in;
    }
    if (mguard__ix_reserve(ctx, &s->held_index, (size_t)s->nheld + 1) ||
        mguard__reserve(ctx, (void **)&s->held, &s->capheld, (size_t)s->nheld + 1, sizeof *s->held)) {
        mguard__str_release(ctx, in);
        return NULL;
    }
    s->held[s->nheld++] = in;
    mguard__ix_put(&s->held_index, mguard__hash_ptr(in), s->nheld);
    return in;
}

/* Release every string s holds: the last step of a free. Never allocates. */
static void mguard__scope_unhold(mguard_ctx *ctx, mguard_scope *s)
{
    uint32_t i;
    for (i = 0; i < s->nheld; i++) mguard__str_release(ctx, s->held[i]);
    mguard__free(ctx, s->held);
    mguard__ix_free(ctx, &s->held_index);
    s->held = NULL;
    s->nheld = s->capheld = 0;
}

static void mguard__scope_free(mguard_scope *s)
{
    mguard_ctx *ctx = s->hd.ctx;
    uint32_t i;
    mguard__part_unlink(ctx, &s->part);
    mguard__weak_destroy(s->names);
    for (i = 0; i < s->nrecs; i++) mguard__free(ctx, s->recs[i].vals);
    mguard__free(ctx, s->recs);
    mguard__ix_free(ctx, &s->rec_index);
    mguard__free(ctx, s->active);
    mguard__free(ctx, s->frames);
    mguard__free(ctx, s->counters);
    mguard__free(ctx, s->events);
    for (i = 0; i < s->nwarns; i++) mguard__free(ctx, s->warns[i].msg);
    mguard__free(ctx, s->warns);
    mguard__scope_unhold(ctx, s);
    mguard__handle_free(s);
}

/* End of every call that may have called out: finish a destroy a callback asked for (s is gone then). */
static void mguard__scope_release(mguard_scope *s)
{
    if (--s->busy == 0 && s->destroying) mguard__scope_free(s);
}

/* Should msg be logged? Seen before: moved to the newest end, not logged.
   New: remembered (the oldest forgotten beyond max_warnings); out of
   memory: logged, not remembered. */
static bool mguard__scope_dedup(mguard_scope *s, const char *msg)
{
    mguard_ctx *ctx = s->hd.ctx;
    uint32_t h = mguard__hash_str(msg), i;
    mguard__scope_wmsg w;
    size_t len;
    for (i = 0; i < s->nwarns; i++) {
        if (s->warns[i].hash == h && strcmp(s->warns[i].msg, msg) == 0) {
            w = s->warns[i];
            memmove(&s->warns[i], &s->warns[i + 1], (s->nwarns - i - 1) * sizeof w);
            s->warns[s->nwarns - 1] = w;
            return false;
        }
    }
    if (s->nwarns < s->desc.max_warnings &&
        mguard__reserve(ctx, (void **)&s->warns, &s->capwarns, (size_t)s->nwarns + 1, sizeof w))
        return true;
    len = strlen(msg);
    w.hash = h;
    w.msg = (char *)mguard__alloc(ctx, len + 1);
    if (!w.msg) return true;
    memcpy(w.msg, msg, len + 1);
    if (s->nwarns == s->desc.max_warnings) {
        mguard__free(ctx, s->warns[0].msg);
        memmove(&s->warns[0], &s->warns[1], (s->nwarns - 1) * sizeof w);
        s->nwarns--;
    }
    s->warns[s->nwarns++] = w;
    return true;
}

/* A de-duplicated warning. Call it last: the logger may call back in. */
static void mguard__scope_warn(mguard_scope *s, int icode, ...)
{
    mguard_log_code code = (mguard_log_code)icode;   /* as mguard__log_now */
    char buf[MGUARD__LOGLINE], *full = NULL;
    va_list ap, again;
    int n;
    mguard_ctx *ctx = s->hd.ctx;
    if (!ctx->log.func) return;
    va_start(ap, icode);
    va_copy(again, ap);
    n = vsnprintf(buf, sizeof buf, mguard__log_items[code].fmt, ap);
    /* a line cut short is told apart from another by its whole text (no room: by its cut) */
    if (n >= (int)sizeof buf) full = (char *)mguard__alloc(ctx, (size_t)n + 1);
    if (full) vsnprintf(full, (size_t)n + 1, mguard__log_items[code].fmt, again);
    va_end(again);
    va_end(ap);
    if (mguard__scope_dedup(s, full ? full : buf)) mguard__log_line(ctx, code, buf);
    mguard__free(ctx, full);
}

/* The trace clock (a callout when the user gave one). The logical clock
   moves only at commit (mguard__scope_tick): a failed call leaves it. */
static double mguard__scope_now(mguard_scope *s)
{
    double t;
    if (!s->desc.clock) return s->tick + 1.0;
    MGUARD__CALLOUT(s->hd.ctx, t = s->desc.clock(s->desc.user));
    return t;
}

static void mguard__scope_tick(mguard_scope *s, double now)
{
    if (s->desc.trace && !s->desc.clock) s->tick = now;
}

static uint32_t mguard__scope_rec_find(const mguard_scope *s, const char *interned)
{
    return mguard__ix_find(&s->rec_index, (const unsigned char *)s->recs, sizeof(mguard__scope_rec),
                           interned, mguard__hash_ptr(interned));
}

/* Record + 1 of the name equal to fqn, 0 when it was never entered. */
static uint32_t mguard__scope_rec_lookup(const mguard_scope *s, const char *fqn)
{
    const char *in = mguard__str_find(s->hd.ctx, fqn);
    return in ? mguard__scope_rec_find(s, in) : 0;
}

/* A closed span's length from ts to now: 0 when the clock went back or is
   not a number (inf - inf included), never negative: a span is open only
   while its dur is negative. */
static double mguard__scope_dur(double ts, double now)
{
    double d = now - ts;
    return d >= 0 ? d : 0.0;
}

/* Close frame i at time now and remove it; its name leaves the active set
   with its last frame. No callout, no allocation. */
static void mguard__scope_pop(mguard_scope *s, uint32_t i, double now)
{
    mguard__scope_frame f = s->frames[i];
    mguard__scope_rec *r = &s->recs[f.rec];
    mguard__scope_tick(s, now);
    if (f.event) {
        mguard__scope_event *e = &s->events[f.event - 1];
        e->dur = mguard__scope_dur(e->ts, now);
    }
    memmove(&s->frames[i], &s->frames[i + 1], (s->nframes - i - 1) * sizeof f);
    s->nframes--;
    if (--r->active == 0) {
        uint32_t j;
        for (j = 1; j < s->nactive && s->active[j] != f.rec; j++) {}
        MGUARD_ASSERT(j < s->nactive);
        memmove(&s->active[j], &s->active[j + 1], (s->nactive - j - 1) * sizeof(uint32_t));
        s->nactive--;
    }
}

static const char *mguard__scope_phase_name(const mguard_scope *s) { return s->phases[s->phase]; }

/* A component died: close its frames. A phase-2 callback of the death: an
   earlier callback may have destroyed the scope, so it is looked for among
   the context's parts first; on a thread-safe context the lock is taken. */
static void mguard__scope_destroy_part(mguard__part *p);
static void mguard__scope_on_death_locked(mguard_scope *s, const void *comp, const mguard__scope_naming *vp);
static void mguard__scope_on_death(const void *comp, void *value, void *user)
{
    mguard_ctx *ctx = (mguard_ctx *)user;
    mguard__scope_naming v;
    mguard__part *p;
    memcpy(&v, value, sizeof v);
    MGUARD__LK_IN(ctx);
    for (p = ctx->parts; p; p = p->next)
        if ((uintptr_t)(void *)((char *)p - offsetof(mguard_scope, part)) == v.owner && p->destroy == mguard__scope_destroy_part) break;
    if (p) mguard__scope_on_death_locked((mguard_scope *)(void *)((char *)p - offsetof(mguard_scope, part)), comp, &v);
    MGUARD__LK_OUT(ctx);
}

static void mguard__scope_on_death_locked(mguard_scope *s, const void *comp, const mguard__scope_naming *vp)
{
    mguard__scope_naming v = *vp;
    uint32_t i, n = 0, phase = 0;
    double now = 0.0;
    if (!mguard__scope_ok(s)) return;
    for (i = 0; i < s->nframes && s->frames[i].comp != comp; i++) {}
    if (i == s->nframes) return;
    s->busy++;
    if (s->desc.trace) now = mguard__scope_now(s);
    /* counted after the clock, which may have closed some (exit, clear) */
    for (i = s->nframes; i-- > 0;)
        if (s->frames[i].comp == comp) {
            if (!n++) phase = s->frames[i].phase;   /* the innermost frame's */
            mguard__scope_pop(s, i, now);
        }
    if (n)
        mguard__scope_warn(s, MGUARD_LOG_SCOPE_ACTIVE_DESTROYED,
                           v.name, s->phases[phase], n, n == 1 ? " was" : "s were");
    mguard__scope_release(s);
}

static mguard_status mguard__scope_check(mguard__part *p);

/* Intern desc.phases (default: forward, backward); false: out of memory. */
static bool mguard__scope_set_phases(mguard_ctx *ctx, mguard_scope *s)
{
    static const char *const dflt[2] = {"forward", "backward"};
    const char *const *names = s->desc.nphases ? s->desc.phases : dflt;
    size_t i, n = s->desc.nphases ? s->desc.nphases : 2;
    for (i = 0; i < n; i++) {
        s->phases[i] = mguard__scope_intern(ctx, s, names[i]);
        if (!s->phases[i]) return false;
    }
    s->nphases = (uint32_t)n;
    s->desc.phases = NULL;   /* the copy is s->phases */
    return true;
}

/* NULL, or the reason desc's phases can't be used. */
static const char *mguard__scope_bad_phases(const mguard_scope_desc *desc)
{
    size_t i;
    if (!desc || (!desc->nphases && !desc->phases)) return NULL;
    if (!desc->nphases || !desc->phases) return "phases and nphases go together";
    if (desc->nphases > MGUARD_SCOPE_MAX_PHASES) return "more than MGUARD_SCOPE_MAX_PHASES phases";
    for (i = 0; i < desc->nphases; i++)
        if (!desc->phases[i] || !*desc->phases[i]) return "a phase without a name";
    return NULL;
}

static mguard_scope *mguard__scope_create(mguard_ctx *ctx, const mguard_scope_desc *desc)
{
    mguard_scope *s;
    mguard_weak_desc wd;
    const char *root;
    if (!mguard__ctx_can_create(ctx, "mguard_scope_create")) return NULL;
    if (mguard__scope_bad_phases(desc)) {
        mguard__logf(ctx, MGUARD_LOG_SCOPE_BAD_PHASES, "mguard_scope_create", mguard__scope_bad_phases(desc));
        return NULL;
    }
    s = (mguard_scope *)mguard__alloc(ctx, sizeof *s);
    if (!s) goto oom;
    memset(s, 0, sizeof *s);
#ifdef MGUARD_DEBUG
    if (mguard__dbg_h_reserve(ctx)) goto oom_s;
#endif
    if (desc) s->desc = *desc;
    if (!s->desc.root_name || !*s->desc.root_name) s->desc.root_name = "Global";
    if (!s->desc.max_trace_events) s->desc.max_trace_events = (size_t)1 << 20;
    if (s->desc.max_trace_events > 0x7ffffffeu) s->desc.max_trace_events = 0x7ffffffeu;
    if (!s->desc.max_warnings) s->desc.max_warnings = 4096;
    if (s->desc.max_warnings > 0x7ffffffeu) s->desc.max_warnings = 0x7ffffffeu;
    root = mguard__scope_intern(ctx, s, s->desc.root_name);
    if (!root) goto oom_s;
    s->desc.root_name = root;
    s->root = root;
    if (!mguard__scope_set_phases(ctx, s)) goto oom_s;
    if (mguard__ix_reserve(ctx, &s->rec_index, 1)) goto oom_s;
    if (mguard__reserve(ctx, (void **)&s->recs, &s->caprecs, 1, sizeof *s->recs)) goto oom_s;
    if (mguard__reserve(ctx, (void **)&s->active, &s->capactive, 1, sizeof *s->active)) goto oom_s;
    memset(&wd, 0, sizeof wd);
    wd.value_size = sizeof(mguard__scope_naming);
    wd.key_death = mguard__scope_on_death;
    wd.user = ctx;
    s->names = mguard__weak_create(ctx, &wd);
    if (!s->names) goto oom_s;
    memset(&s->recs[0], 0, sizeof s->recs[0]);
    s->recs[0].name = root;
    s->recs[0].active = 1;
    s->nrecs = 1;
    mguard__ix_put(&s->rec_index, mguard__hash_ptr(root), 1);
    s->active[0] = 0;
    s->nactive = 1;
    s->part.destroy = mguard__scope_destroy_part;
    s->part.check = mguard__scope_check;
    mguard__part_link(ctx, &s->part);
    mguard__handle_init(s, MGUARD__MAGIC_SCOPE, MGUARD__DBG_SCOPE, ctx);
    return s;
oom_s:
    mguard__ix_free(ctx, &s->rec_index);
    mguard__free(ctx, s->recs);
    mguard__free(ctx, s->active);
    mguard__scope_unhold(ctx, s);
    mguard__free(ctx, s);
oom:
    mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_scope_create");
    return NULL;
}

static void mguard__scope_destroy(mguard_scope *s)
{
    if (!mguard__scope_ok(s)) return;
    if (s->destroying) { mguard__logf(s->hd.ctx, MGUARD_LOG_DESTROY_TWICE, "mguard_scope_destroy", "scope", (void *)s); return; }
    s->destroying = 1;
    if (!s->busy) mguard__scope_free(s);
}

static void mguard__scope_destroy_part(mguard__part *p)
{
    mguard_scope *s = (mguard_scope *)(void *)((char *)p - offsetof(mguard_scope, part));
    s->destroying = 1;
    mguard__scope_free(s);
}

/* A refused call: NULL handle (silent), destroyed scope, or NULL comp. */
static MGUARD__HOT mguard_status mguard__scope_refuse(const mguard_scope *s, const void *comp, const char *fn)
{
    if (!mguard__handle_ok(s, MGUARD__MAGIC_SCOPE, MGUARD__DBG_SCOPE, fn)) return MGUARD_EINVAL;
    if (s->destroying) { mguard__logf(s->hd.ctx, MGUARD_LOG_HANDLE_DESTROYING, fn, "scope"); return MGUARD_EINVAL; }
    if (!comp) { mguard__logf(s->hd.ctx, MGUARD_LOG_NULL_ARG, fn, "component"); return MGUARD_EINVAL; }
    return MGUARD_OK;
}

/* ---- naming ------------------------------------------------------------
   A walk down from the component looked up: iterative (a deep tree does not
   deepen the C stack) and all-or-nothing (every name it writes is logged in
   `undo`; a failure puts back what the walk changed, unless a callback changed
   it again). A component is SEEN before its children are asked for, so a cycle
   ends. moved: components this walk renamed that had names (their subtrees
   follow at the end, in one pass: a pass each was quadratic). */
typedef struct mguard__scope_undo { const void *comp; mguard__scope_naming old, now; int had_old; } mguard__scope_undo;
/* name: what its children are named from; mine: the name this walk last gave it
   (another differs: a callout renamed it, and its later children follow) */
typedef struct mguard__scope_todo { const void *comp; const char *name, *mine; size_t next; } mguard__scope_todo;
typedef struct mguard__scope_walk {
    mguard__scope_undo *undo;
    uint32_t nundo, capundo;
    mguard__scope_todo *todo;
    uint32_t ntodo, captodo;
    const void **moved;
    uint32_t nmoved, capmoved;
} mguard__scope_walk;

static mguard__scope_naming *mguard__scope_entry(const mguard_scope *s, const void *comp)
{
    return (mguard__scope_naming *)mguard__weak_get(s->names, comp);
}

static mguard_status mguard__scope_put_naming(mguard_scope *s, mguard__scope_walk *w, const void *comp,
                                              const mguard__scope_naming *now)
{
    mguard__scope_undo u;
    mguard__scope_naming *cur;
    mguard_status st;
    if (mguard__reserve(s->hd.ctx, (void **)&w->undo, &w->capundo, (size_t)w->nundo + 1, sizeof u))
        return MGUARD_ENOMEM;
    memset(&u, 0, sizeof u);
    cur = mguard__scope_entry(s, comp);
    u.comp = comp;
    u.had_old = cur != NULL;
    if (cur) u.old = *cur;
    u.now = *now;
    u.now.owner = (uintptr_t)(void *)s;
    u.now.life = cur ? cur->life : s->hd.ctx->next_serial + 1;   /* taken below */
    st = mguard__weak_set_impl(s->names, comp, &u.now);
    if (st) return st;
    if (!cur) s->hd.ctx->next_serial++;
    w->undo[w->nundo++] = u;
    return MGUARD_OK;
}

/* comp's naming with name and flags changed (from, seg kept, or none). */
static mguard_status mguard__scope_put(mguard_scope *s, mguard__scope_walk *w, const void *comp,
                                       const char *name, uint32_t flags)
{
    mguard__scope_naming v, *cur = mguard__scope_entry(s, comp);
    memset(&v, 0, sizeof v);
    if (cur) v = *cur;
    v.name = name;
    v.flags = flags;
    return mguard__scope_put_naming(s, w, comp, &v);
}

/* comp's life (a serial taken when it was first named, kept in its naming until its death
   or forgetting): a newcomer at its address has another. 0 when comp is not named. */
static uint64_t mguard__scope_serial(const mguard_scope *s, const void *comp)
{
    const mguard__scope_naming *v = comp ? mguard__scope_entry(s, comp) : NULL;
    return v ? v->life : 0;
}

static void mguard__scope_rollback(mguard_scope *s, mguard__scope_walk *w)
{
    while (w->nundo) {
        mguard__scope_undo *u = &w->undo[--w->nundo];
        mguard__scope_naming *cur = mguard__scope_entry(s, u->comp);
        uint32_t i;
        if (!cur || cur->name != u->now.name || cur->flags != u->now.flags) continue;
        if (u->had_old) {
            *cur = u->old;
            continue;
        }
        for (i = 0; i < s->nframes && s->frames[i].comp != u->comp; i++) {}
        if (i == s->nframes) mguard__weak_take(s->names, u->comp, NULL);
    }
}

/* parent + "." + child, interned and held by s. */
static const char *mguard__scope_join(mguard_ctx *ctx, mguard_scope *s, const char *parent, const char *child)
{
    char small[256];
    size_t a = strlen(parent), b = strlen(child);
    char *p = a + b + 2 <= sizeof small ? small : (char *)mguard__alloc(ctx, a + b + 2);
    const char *r;
    if (!p) return NULL;
    memcpy(p, parent, a);
    p[a] = '.';
    memcpy(p + a + 1, child, b + 1);
    r = mguard__scope_intern(ctx, s, p);
    if (p != small) mguard__free(ctx, p);
    return r;
}

static mguard_status mguard__scope_follow_all(mguard_scope *s, mguard__scope_walk *w, const void **roots, uint32_t nroots);
static mguard_status mguard__scope_follow(mguard_scope *s, mguard__scope_walk *w, const void *comp);

static mguard_status mguard__scope_walk_run(mguard_scope *s, mguard__scope_walk *w)
{
    mguard_ctx *ctx = s->hd.ctx;
    while (w->ntodo) {
        mguard__scope_todo *t;
        const void *pcomp, *child = NULL;
        const char *pname, *cname = NULL, *full;
        size_t idx;
        mguard__scope_naming *cv;
        bool more, moved;
        uint32_t q;
        mguard_status st;
        /* a warning queued by the last step goes out before pcomp is judged */
        MGUARD__FLUSH(ctx);
        if (s->destroying) return MGUARD_EINVAL;
        t = &w->todo[w->ntodo - 1];
        pcomp = t->comp;
        pname = t->name;
        idx = t->next++;
        /* a callback may have destroyed a component still on the list */
        cv = mguard__scope_entry(s, pcomp);
        if (!cv || !(cv->flags & MGUARD__SCOPE_SEEN)) { w->ntodo--; continue; }
        MGUARD__CALLOUT(ctx, more = s->desc.child(pcomp, idx, &cname, &child, s->desc.user));
        if (s->destroying) return MGUARD_EINVAL;
        cv = mguard__scope_entry(s, pcomp);   /* died during the call: ignore it */
        if (!more || !cv || !(cv->flags & MGUARD__SCOPE_SEEN)) { w->ntodo--; continue; }
        /* renamed by a callout (set_name, attach, another lookup's walk): its
           later children follow; a rename by this walk (a cycle) does not count */
        t = &w->todo[w->ntodo - 1];
        if (cv->name != t->mine) pname = t->name = t->mine = cv->name;
        if (!cname || !*cname || !child || (ctx->dying && mguard__is_dying(ctx, child))) {
            mguard__scope_warn(s, MGUARD_LOG_SCOPE_CHILD_SKIPPED, (unsigned long)idx, pname,
                               !child ? "NULL pointer" : cname && *cname ? "pointer to an object being destroyed"
                               : "NULL or empty name");
            continue;
        }
        full = mguard__scope_join(ctx, s, pname, cname);
        if (!full) return MGUARD_ENOMEM;
        cv = mguard__scope_entry(s, child);
        if (!cv || !(cv->flags & (MGUARD__SCOPE_EXPLICIT | MGUARD__SCOPE_ATTACHED))) {
            mguard__scope_naming nv;
            memset(&nv, 0, sizeof nv);
            nv.name = full;
            nv.flags = cv ? cv->flags & ~(uint32_t)MGUARD__SCOPE_FORGOTTEN : 0;
            nv.from = pcomp;
            nv.from_serial = mguard__scope_serial(s, pcomp);
            nv.seg = mguard__scope_intern(ctx, s, cname);
            if (!nv.seg) return MGUARD_ENOMEM;
            /* a named child moved: its subtree follows at the end (unless this walk is inside it: a cycle) */
            for (q = 0; q < w->ntodo && w->todo[q].comp != child; q++) {}
            moved = cv && cv->name != full && q == w->ntodo;
            if (moved && mguard__reserve(ctx, (void **)&w->moved, &w->capmoved, (size_t)w->nmoved + 1, sizeof *w->moved))
                return MGUARD_ENOMEM;
            st = mguard__scope_put_naming(s, w, child, &nv);
            if (st) return st;
            if (moved) w->moved[w->nmoved++] = child;
            if (q < w->ntodo) w->todo[q].mine = full;   /* a cycle: its own walk keeps its name */
            cv = mguard__scope_entry(s, child);
        }
        if (!(cv->flags & MGUARD__SCOPE_SEEN)) {
            const char *cn = cv->name;
            uint32_t fl = cv->flags | MGUARD__SCOPE_SEEN;
            if (mguard__reserve(ctx, (void **)&w->todo, &w->captodo, (size_t)w->ntodo + 1, sizeof *w->todo))
                return MGUARD_ENOMEM;
            st = mguard__scope_put(s, w, child, cn, fl);
            if (st) return st;
            w->todo[w->ntodo].comp = child;
            w->todo[w->ntodo].name = w->todo[w->ntodo].mine = cn;
            w->todo[w->ntodo].next = 0;
            w->ntodo++;
        }
    }
    /* no callout from here on: the moved subtrees follow in one pass */
    return w->nmoved ? mguard__scope_follow_all(s, w, w->moved, w->nmoved) : MGUARD_OK;
}

/* End a lookup: keep what it named (ok) or put it all back. */
static void mguard__scope_walk_end(mguard_scope *s, mguard__scope_walk *w, bool ok)
{
    if (!ok) mguard__scope_rollback(s, w);
    mguard__free(s->hd.ctx, w->undo);
    mguard__free(s->hd.ctx, w->todo);
    mguard__free(s->hd.ctx, w->moved);
    memset(w, 0, sizeof *w);
}

/* comp's entry if it has a name (a forgotten one has none). */
static mguard__scope_naming *mguard__scope_named(const mguard_scope *s, const void *comp)
{
    mguard__scope_naming *v = mguard__scope_entry(s, comp);
    return v && !(v->flags & MGUARD__SCOPE_FORGOTTEN) ? v : NULL;
}

/* comp's name, naming it (type name) and its subtree (first lookup) when
   needed. NOT_FOUND: no name. EINVAL: s was destroyed by a callback, or
   comp died during its own lookup. ENOMEM: nothing changed. The caller ends
   it with mguard__scope_walk_end(pw, ok): its own failure undoes the names. */
static mguard_status mguard__scope_lookup(mguard_scope *s, const void *comp, const char **out, mguard__scope_walk *pw)
{
    mguard_ctx *ctx = s->hd.ctx;
    mguard__scope_naming *v = mguard__scope_named(s, comp);
    mguard__scope_walk w;
    mguard__lookout look;   /* comp, across each callout: a newcomer at its address is another */
    mguard_status st = MGUARD_OK;
    const char *name;
    *out = NULL;
    memset(pw, 0, sizeof *pw);
    if (v && ((v->flags & MGUARD__SCOPE_SEEN) || !s->desc.child)) {
        *out = v->name;
        return MGUARD_OK;
    }
    memset(&w, 0, sizeof w);
    if (!v) {
        const char *tn = NULL;
        if (!s->desc.type_name || (ctx->dying && mguard__is_dying(ctx, comp))) return MGUARD_NOT_FOUND;   /* dying: no name */
        mguard__lookout_push(ctx, &look, comp);
        MGUARD__FLUSH(ctx);   /* a logger may destroy comp: then no callout */
        if (!s->destroying && !look.died) MGUARD__CALLOUT(ctx, tn = s->desc.type_name(comp, s->desc.user));
        mguard__lookout_pop(ctx, &look);
        if (s->destroying || look.died) return MGUARD_EINVAL;   /* comp died: no name */
        if (!tn || !*tn) return MGUARD_NOT_FOUND;
        name = mguard__scope_intern(ctx, s, tn);
        if (!name) return MGUARD_ENOMEM;
        if (!mguard__scope_named(s, comp)) {   /* the callback may have named it */
            mguard__scope_naming tv;   /* a type name: placed under nothing */
            bool forgotten = mguard__scope_entry(s, comp) != NULL;
            memset(&tv, 0, sizeof tv);
            tv.name = name;
            st = mguard__scope_put_naming(s, &w, comp, &tv);
            if (!st && forgotten) st = mguard__scope_follow(s, &w, comp);   /* what is attached follows */
            if (st) goto done;
        }
        v = mguard__scope_named(s, comp);
    }
    if (!v) { st = MGUARD_EINVAL; goto done; }   /* cannot happen: just put */
    name = v->name;
    if (s->desc.child && !(v->flags & MGUARD__SCOPE_SEEN)) {
        if (mguard__reserve(ctx, (void **)&w.todo, &w.captodo, 1, sizeof *w.todo)) { st = MGUARD_ENOMEM; goto done; }
        st = mguard__scope_put(s, &w, comp, name, v->flags | MGUARD__SCOPE_SEEN);
        if (st) goto done;
        w.todo[0].comp = comp;
        w.todo[0].name = w.todo[0].mine = name;
        w.todo[0].next = 0;
        w.ntodo = 1;
        mguard__lookout_push(ctx, &look, comp);
        st = mguard__scope_walk_run(s, &w);
        mguard__lookout_pop(ctx, &look);
        if (!st && look.died) st = MGUARD_EINVAL;   /* died meanwhile */
    }
    if (!st && !mguard__scope_entry(s, comp)) st = MGUARD_EINVAL;  /* forgotten meanwhile */
    if (!st) {
        /* renamed by a callout: its name now; by this walk (a cycle): the name
           it was looked up by, as the reference's _get_mod_name returns */
        const char *now = mguard__scope_entry(s, comp)->name, *mine = name;
        uint32_t i;
        for (i = w.nundo; i-- > 0;)
            if (w.undo[i].comp == comp) { mine = w.undo[i].now.name; break; }
        if (now != mine) name = now;
    }
done:
    if (st) {
        mguard__scope_walk_end(s, &w, false);
    } else {
        *out = name;
        mguard__free(ctx, w.todo);
        mguard__free(ctx, w.moved);
        w.todo = NULL;
        w.moved = NULL;
        w.ntodo = w.captodo = w.nmoved = w.capmoved = 0;
        *pw = w;
    }
    return st;
}

static const char *mguard__scope_name(mguard_scope *s, const void *comp)
{
    const char *name = NULL;
    mguard__scope_walk w;
    mguard_status st;
    if (!mguard__scope_ok(s) || !comp || s->destroying) return NULL;
    s->busy++;
    st = mguard__scope_lookup(s, comp, &name, &w);
    mguard__scope_walk_end(s, &w, true);
    if (st == MGUARD_ENOMEM) mguard__logf(s->hd.ctx, MGUARD_LOG_NOMEM, "mguard_scope_name");
    mguard__scope_release(s);
    return st ? NULL : name;
}

/* The components placed under another, sorted by it, then by address (one
   placement by binary search): a subtree in O(names log names + subtree). */
typedef struct mguard__scope_placed { uintptr_t from; const void *comp; } mguard__scope_placed;

static int mguard__scope_placed_cmp(const void *a, const void *b)
{
    const mguard__scope_placed *p = (const mguard__scope_placed *)a, *q = (const mguard__scope_placed *)b;
    uintptr_t x = (uintptr_t)p->comp, y = (uintptr_t)q->comp;
    if (p->from != q->from) return p->from < q->from ? -1 : 1;
    return x < y ? -1 : x > y;
}

static mguard_status mguard__scope_placed_list(mguard_scope *s, mguard__scope_placed **out, uint32_t *n)
{
    mguard_weak_iter it = mguard__weak_iterate(s->names);
    uint32_t k = 0, cap = 0;
    *out = NULL;
    while (mguard__weak_next(&it)) {
        const mguard__scope_naming *e = (const mguard__scope_naming *)it.value;
        if (!e->from || (e->flags & MGUARD__SCOPE_FORGOTTEN)) continue;
        if (mguard__reserve(s->hd.ctx, (void **)out, &cap, (size_t)k + 1, sizeof **out)) {
            mguard__free(s->hd.ctx, *out);
            *out = NULL;
            return MGUARD_ENOMEM;
        }
        (*out)[k].from = (uintptr_t)e->from;
        (*out)[k++].comp = it.key;
    }
    if (k) qsort(*out, k, sizeof **out, mguard__scope_placed_cmp);
    *n = k;
    return MGUARD_OK;
}

/* The first of list[0..n) placed under from (n when none). */
static uint32_t mguard__scope_placed_first(const mguard__scope_placed *list, uint32_t n, const void *from)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (list[mid].from < (uintptr_t)from) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static mguard_status mguard__scope_enqueue(mguard_scope *s, mguard__scope_walk *w, const void *comp)
{
    if (mguard__reserve(s->hd.ctx, (void **)&w->todo, &w->captodo, (size_t)w->ntodo + 1, sizeof *w->todo))
        return MGUARD_ENOMEM;
    w->todo[w->ntodo].comp = comp;
    w->todo[w->ntodo].name = w->todo[w->ntodo].mine = NULL;
    w->todo[w->ntodo++].next = 0;
    return MGUARD_OK;
}

/* Is list[k] (placed under x, whose life is xs) still c's placement? A
   callback may have placed c elsewhere, named it explicitly (an explicit
   name has no from: it never follows) or forgotten it. */
static const mguard__scope_naming *mguard__scope_placed_live(const mguard_scope *s, const mguard__scope_placed *e,
                                                             uint64_t xs)
{
    const mguard__scope_naming *cv = mguard__scope_entry(s, e->comp);
    if (!cv || (uintptr_t)cv->from != e->from || cv->from_serial != xs || (cv->flags & MGUARD__SCOPE_FORGOTTEN)) return NULL;
    return cv;
}

/* comp's position in list[0..n) as a live placement, n when it has none. */
static uint32_t mguard__scope_placed_find(const mguard_scope *s, const mguard__scope_placed *list, uint32_t n,
                                          const void *comp)
{
    const mguard__scope_naming *v = mguard__scope_entry(s, comp);
    mguard__scope_placed key;
    uint32_t lo = 0, hi = n;
    if (!v || !v->from || (v->flags & MGUARD__SCOPE_FORGOTTEN)) return n;
    key.from = (uintptr_t)v->from;
    key.comp = comp;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (mguard__scope_placed_cmp(&list[mid], &key) < 0) lo = mid + 1; else hi = mid;
    }
    return lo < n && list[lo].comp == comp && mguard__scope_placed_live(s, &list[lo], mguard__scope_serial(s, v->from)) ? lo : n;
}

static int mguard__scope_ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;
    return x < y ? -1 : x > y;
}

enum { MGUARD__FOLLOW_ROOT = 1, MGUARD__FOLLOW_NESTED = 2, MGUARD__FOLLOW_DONE = 4 };

/* Visit what is placed under x (live placements of list, each once: done
   marks a position taken), renaming each (when rename) and queueing it in
   w->todo. A root met on the way is marked nested instead of queued. */
static mguard_status mguard__scope_follow_step(mguard_scope *s, mguard__scope_walk *w, const mguard__scope_placed *list,
                                               uint32_t n, unsigned char *mark, const void *x, bool rename)
{
    const mguard__scope_naming *xv = mguard__scope_entry(s, x);
    const char *xname = xv && !(xv->flags & MGUARD__SCOPE_FORGOTTEN) ? xv->name : NULL;
    uint64_t xs = mguard__scope_serial(s, x);
    uint32_t k;
    mguard_status st = MGUARD_OK;
    if (!xname) return MGUARD_OK;
    for (k = mguard__scope_placed_first(list, n, x); !st && k < n && list[k].from == (uintptr_t)x; k++) {
        const mguard__scope_naming *cv = mguard__scope_placed_live(s, &list[k], xs);
        if (!cv) continue;
        if (!rename) {
            if (mark[k] & MGUARD__FOLLOW_ROOT) mark[k] |= MGUARD__FOLLOW_NESTED;
            else st = mguard__scope_enqueue(s, w, list[k].comp);
            continue;
        }
        if (mark[k] & MGUARD__FOLLOW_DONE) continue;   /* a cycle back to a root */
        mark[k] |= MGUARD__FOLLOW_DONE;
        {
            mguard__scope_naming v = *cv;
            const char *full = mguard__scope_join(s->hd.ctx, s, xname, v.seg);
            if (!full) return MGUARD_ENOMEM;
            if (full != v.name) {
                v.name = full;
                st = mguard__scope_put_naming(s, w, list[k].comp, &v);
            }
        }
        if (!st) st = mguard__scope_enqueue(s, w, list[k].comp);
    }
    return st;
}

/* The names placed under each root (by a walk or attach) follow its name
   down the subtrees, each component once (a cycle ends); roots is sorted in
   place; every change is logged in w for the caller's rollback; no callback.
   Pass 1 finds the roots under another root (they follow as part of it);
   pass 2 renames from the others down, then from nested roots only a cycle
   reaches. Cost: O(names log names + roots log roots + subtrees). */
static mguard_status mguard__scope_follow_all(mguard_scope *s, mguard__scope_walk *w, const void **roots, uint32_t nroots)
{
    mguard_ctx *ctx = s->hd.ctx;
    mguard__scope_placed *list;
    unsigned char *mark = NULL;
    uint32_t head = w->ntodo, q, n = 0, i, r, *pos = NULL;
    int pass;
    mguard_status st = mguard__scope_placed_list(s, &list, &n);
    if (st || !n) goto done;   /* nothing is placed under anything */
    pos = (uint32_t *)mguard__alloc(ctx, (size_t)nroots * sizeof *pos + n);
    if (!pos) { st = MGUARD_ENOMEM; goto done; }
    mark = (unsigned char *)(pos + nroots);
    memset(mark, 0, n);
    if (nroots > 1) qsort(roots, nroots, sizeof *roots, mguard__scope_ptr_cmp);
    for (i = r = 0; i < nroots; i++)   /* each root once */
        if (!r || roots[r - 1] != roots[i]) roots[r++] = roots[i];
    nroots = r;
    for (i = 0; i < nroots; i++) {
        pos[i] = mguard__scope_placed_find(s, list, n, roots[i]);
        if (pos[i] < n) mark[pos[i]] |= MGUARD__FOLLOW_ROOT;
    }
    /* pass 1: which roots are nested (no renaming) */
    for (i = 0; !st && i < nroots; i++) st = mguard__scope_enqueue(s, w, roots[i]);
    for (q = head; !st && q < w->ntodo; q++)
        st = mguard__scope_follow_step(s, w, list, n, mark, w->todo[q].comp, false);
    w->ntodo = head;
    /* pass 2: rename, from the roots no other root holds, then from the
       nested ones not reached (a cycle of roots) */
    for (pass = 0; !st && pass < 2; pass++) {
        for (i = 0; !st && i < nroots; i++) {
            bool nested = pos[i] < n && (mark[pos[i]] & MGUARD__FOLLOW_NESTED);
            if (nested != (pass == 1) || (pos[i] < n && (mark[pos[i]] & MGUARD__FOLLOW_DONE))) continue;
            if (pos[i] < n) mark[pos[i]] |= MGUARD__FOLLOW_DONE;
            st = mguard__scope_enqueue(s, w, roots[i]);
            for (q = head; !st && q < w->ntodo; q++)
                st = mguard__scope_follow_step(s, w, list, n, mark, w->todo[q].comp, true);
            w->ntodo = head;
        }
    }
done:
    w->ntodo = head;
    mguard__free(ctx, pos);
    mguard__free(ctx, list);
    return st;
}

/* The names placed under comp follow comp's name (see above). */
static mguard_status mguard__scope_follow(mguard_scope *s, mguard__scope_walk *w, const void *comp)
{
    const void *roots[1];
    roots[0] = comp;
    return mguard__scope_follow_all(s, w, roots, 1);
}

static mguard_status mguard__scope_set_name(mguard_scope *s, const void *comp, const char *fqn)
{
    mguard_status st = mguard__scope_refuse(s, comp, "mguard_scope_set_name");
    mguard__scope_naming v, *cur;
    mguard__scope_walk w;
    bool had = false;
    if (st || (st = mguard__refuse_dying(s->hd.ctx, &comp, 1, "mguard_scope_set_name"))) return st;
    if (!fqn || !*fqn) { mguard__logf(s->hd.ctx, MGUARD_LOG_NULL_ARG, "mguard_scope_set_name", "or empty name"); return MGUARD_EINVAL; }
    memset(&v, 0, sizeof v);
    memset(&w, 0, sizeof w);
    v.name = mguard__scope_intern(s->hd.ctx, s, fqn);
    if (!v.name) st = MGUARD_ENOMEM;
    if (!st) {
        cur = mguard__scope_entry(s, comp);
        had = cur != NULL;
        v.flags = ((cur ? cur->flags : 0) & MGUARD__SCOPE_SEEN) | MGUARD__SCOPE_EXPLICIT;
        st = mguard__scope_put_naming(s, &w, comp, &v);
    }
    /* a component never named has nothing placed under it */
    if (!st && had) st = mguard__scope_follow(s, &w, comp);
    mguard__scope_walk_end(s, &w, st == MGUARD_OK);
    if (st == MGUARD_ENOMEM) mguard__logf(s->hd.ctx, MGUARD_LOG_NOMEM, "mguard_scope_set_name");
    return st;
}

static mguard_status mguard__scope_attach(mguard_scope *s, const void *parent, const void *child, const char *name)
{
    bool had = false;
    mguard_status st = mguard__scope_refuse(s, child, "mguard_scope_attach");
    mguard__scope_naming v, *cur;
    mguard__scope_walk w;
    mguard__lookout look;
    const char *pname = NULL;
    if (st) return st;
    if (!parent || parent == child || !name || !*name) {
        mguard__logf(s->hd.ctx, parent == child ? MGUARD_LOG_SCOPE_SELF_PARENT : MGUARD_LOG_NULL_ARG, "mguard_scope_attach", !parent ? "parent" : "or empty name");
        return MGUARD_EINVAL;
    }
    /* in its own death: refused before the parent's lookup allocates or calls out */
    if (mguard__refuse_dying(s->hd.ctx, &child, 1, "mguard_scope_attach")) return MGUARD_EINVAL;
    s->busy++;
    mguard__lookout_push(s->hd.ctx, &look, child);
    st = mguard__scope_lookup(s, parent, &pname, &w);   /* may walk, calling the callbacks */
    mguard__lookout_pop(s->hd.ctx, &look);
    if (!st && look.died) {   /* the child died meanwhile: it must not be named */
        st = MGUARD_EINVAL;
        mguard__logf(s->hd.ctx, MGUARD_LOG_SCOPE_CHILD_GONE, "mguard_scope_attach", child);
    }
    if (st == MGUARD_NOT_FOUND) {
        char pn[128];
        (void)mguard__describe(s->hd.ctx, parent, pn, sizeof pn, true);
        mguard__logf(s->hd.ctx, MGUARD_LOG_SCOPE_PARENT_UNNAMED, "mguard_scope_attach", pn);
    }
    if (!st) {
        memset(&v, 0, sizeof v);
        cur = mguard__scope_entry(s, child);
        had = cur != NULL;
        v.flags = ((cur ? cur->flags : 0) & MGUARD__SCOPE_SEEN) | MGUARD__SCOPE_ATTACHED;
        v.from = parent;
        v.from_serial = mguard__scope_serial(s, parent);
        v.seg = mguard__scope_intern(s->hd.ctx, s, name);
        v.name = v.seg ? mguard__scope_join(s->hd.ctx, s, pname, v.seg) : NULL;
        st = v.name ? mguard__scope_put_naming(s, &w, child, &v) : MGUARD_ENOMEM;
    }
    /* a component never named has nothing placed under it */
    if (!st && had) st = mguard__scope_follow(s, &w, child);
    mguard__scope_walk_end(s, &w, st == MGUARD_OK);
    if (st == MGUARD_ENOMEM) mguard__logf(s->hd.ctx, MGUARD_LOG_NOMEM, "mguard_scope_attach");
    mguard__scope_release(s);
    return st;
}

/* Set or clear FRAMED on every component with an open frame (forget only, no callout between). */
static void mguard__scope_mark_framed(mguard_scope *s, bool on)
{
    uint32_t i;
    for (i = 0; i < s->nframes; i++) {
        mguard__scope_naming *v = mguard__scope_entry(s, s->frames[i].comp);
        if (!v) continue;
        if (on) v->flags |= MGUARD__SCOPE_FRAMED;
        else v->flags &= ~(uint32_t)MGUARD__SCOPE_FRAMED;
    }
}

static mguard_status mguard__scope_forget(mguard_scope *s, const void *comp)
{
    mguard_status st = mguard__scope_refuse(s, comp, "mguard_scope_forget");
    mguard__scope_walk w;
    mguard__scope_naming *v;
    mguard__scope_placed *list = NULL;
    uint32_t q, n = 0, k;
    if (st) return st;
    v = mguard__scope_entry(s, comp);
    if (!v || (v->flags & MGUARD__SCOPE_FORGOTTEN)) return MGUARD_NOT_FOUND;
    memset(&w, 0, sizeof w);
    /* list what a walk placed under comp, recursively (out of memory changes nothing), then forget it */
    st = mguard__scope_placed_list(s, &list, &n);
    if (!st) st = mguard__scope_enqueue(s, &w, comp);
    for (q = 0; !st && q < w.ntodo; q++) {
        const void *x = w.todo[q].comp;
        uint64_t xs = mguard__scope_serial(s, x);
        for (k = mguard__scope_placed_first(list, n, x); !st && k < n && list[k].from == (uintptr_t)x; k++) {
            const mguard__scope_naming *e = mguard__scope_entry(s, list[k].comp);
            if (list[k].comp != comp && e && e->from == x && e->from_serial == xs &&
                !(e->flags & (MGUARD__SCOPE_EXPLICIT | MGUARD__SCOPE_ATTACHED | MGUARD__SCOPE_FORGOTTEN)))
                st = mguard__scope_enqueue(s, &w, list[k].comp);
        }
    }
    if (!st) {
        /* one with an open frame keeps its name (frames marked once) */
        mguard__scope_mark_framed(s, true);
        for (q = 1; q < w.ntodo; q++) {
            const void *x = w.todo[q].comp;
            mguard__scope_naming *xv = mguard__scope_entry(s, x);
            if (!xv) continue;
            xv->flags &= ~(uint32_t)MGUARD__SCOPE_SEEN;   /* walks again */
            if (!(xv->flags & MGUARD__SCOPE_FRAMED)) xv->flags |= MGUARD__SCOPE_FORGOTTEN;
        }
        mguard__scope_mark_framed(s, false);
        v = mguard__scope_entry(s, comp);
        if (v) v->flags &= ~(uint32_t)MGUARD__SCOPE_SEEN;
    }
    mguard__free(s->hd.ctx, list);
    mguard__free(s->hd.ctx, w.todo);
    /* last: the logger may destroy s */
    if (st) mguard__logf(s->hd.ctx, MGUARD_LOG_NOMEM, "mguard_scope_forget");
    return st;
}

/* ---- enter and exit ------------------------------------------------------ */

/* Push a frame, all reserved first (failure changes nothing); no callout but the final warning. */
static mguard_status mguard__scope_push(mguard_scope *s, const void *comp, const char *name, double now)
{
    mguard_ctx *ctx = s->hd.ctx;
    uint32_t r1 = mguard__scope_rec_find(s, name);
    bool new_active = !r1 || s->recs[r1 - 1].active == 0;
    bool record = s->desc.trace && s->nevents < s->desc.max_trace_events;
    mguard__scope_frame f;
    if (mguard__reserve(ctx, (void **)&s->frames, &s->capframes, (size_t)s->nframes + 1, sizeof f)) return MGUARD_ENOMEM;
    if (!r1 && (mguard__ix_reserve(ctx, &s->rec_index, (size_t)s->nrecs + 1) ||
                mguard__reserve(ctx, (void **)&s->recs, &s->caprecs, (size_t)s->nrecs + 1, sizeof *s->recs)))
        return MGUARD_ENOMEM;
    if (new_active && mguard__reserve(ctx, (void **)&s->active, &s->capactive, (size_t)s->nactive + 1, sizeof *s->active))
        return MGUARD_ENOMEM;
    if (record && mguard__reserve(ctx, (void **)&s->events, &s->capevents, (size_t)s->nevents + 1, sizeof *s->events))
        return MGUARD_ENOMEM;
    if (!r1) {
        memset(&s->recs[s->nrecs], 0, sizeof *s->recs);
        s->recs[s->nrecs].name = name;
        s->nrecs++;
        mguard__ix_put(&s->rec_index, mguard__hash_ptr(name), s->nrecs);
        r1 = s->nrecs;
    }
    if (new_active) s->active[s->nactive++] = r1 - 1;
    s->recs[r1 - 1].active++;
    mguard__scope_tick(s, now);
    f.comp = comp;
    f.rec = r1 - 1;
    f.event = 0;
    f.phase = s->phase;
    if (record) {
        mguard__scope_event *e = &s->events[s->nevents++];
        e->name = name;
        e->ts = now;
        e->dur = -1.0;
        e->depth = s->nframes + 1;
        e->phase = s->phase;
        f.event = s->nevents;
    }
    s->frames[s->nframes++] = f;
    if (s->desc.trace && !record) {
        s->dropped++;
        mguard__scope_warn(s, MGUARD_LOG_SCOPE_TRACE_FULL, "mguard_scope_enter",
                           (unsigned long)s->desc.max_trace_events);
    }
    return MGUARD_OK;
}

static mguard_status mguard__scope_enter(mguard_scope *s, const void *comp)
{
    mguard_status st = mguard__scope_refuse(s, comp, "mguard_scope_enter");
    const char *name = NULL;
    mguard__scope_walk w;
    double now = 0.0;
    if (st) return st;
    s->busy++;
    st = mguard__scope_lookup(s, comp, &name, &w);
    if (!st && s->desc.trace) {
        mguard__lookout look;
        mguard__lookout_push(s->hd.ctx, &look, comp);
        now = mguard__scope_now(s);
        mguard__lookout_pop(s->hd.ctx, &look);
        /* the clock destroyed the tracker, or comp (a newcomer at its address is another) */
        if (s->destroying || look.died || !mguard__scope_entry(s, comp)) st = MGUARD_EINVAL;
    }
    if (!st) st = mguard__scope_push(s, comp, name, now);
    mguard__scope_walk_end(s, &w, st == MGUARD_OK);
    if (st == MGUARD_NOT_FOUND) {
        char cn[128];   /* in its own death: logged as such */
        if (!mguard__refuse_dying(s->hd.ctx, &comp, 1, "mguard_scope_enter")) {
            (void)mguard__describe(s->hd.ctx, comp, cn, sizeof cn, true);
            mguard__logf(s->hd.ctx, MGUARD_LOG_SCOPE_UNNAMED, "mguard_scope_enter", cn);
        }
    }
    else if (st == MGUARD_ENOMEM)
        mguard__logf(s->hd.ctx, MGUARD_LOG_NOMEM, "mguard_scope_enter");
    else if (st && !s->destroying)
        mguard__logf(s->hd.ctx, MGUARD_LOG_SCOPE_ENTER_GONE, "mguard_scope_enter", comp);
    mguard__scope_release(s);
    return st;
}

static mguard_status mguard__scope_exit(mguard_scope *s, const void *comp)
{
    mguard_status st = mguard__scope_refuse(s, comp, "mguard_scope_exit");
    double now = 0.0;
    uint32_t i;
    if (st) return st;
    s->busy++;
    if (s->desc.trace) {
        mguard__lookout look;
        mguard__lookout_push(s->hd.ctx, &look, comp);
        now = mguard__scope_now(s);
        mguard__lookout_pop(s->hd.ctx, &look);
        /* the clock destroyed comp: its death closed its frames (a newcomer's are another's) */
        if (look.died && !s->destroying) st = MGUARD_NOT_FOUND;
    }
    if (s->destroying) st = MGUARD_EINVAL;
    if (st) {
        mguard__scope_release(s);
        return st;
    }
    for (i = s->nframes; i > 0 && s->frames[i - 1].comp != comp; i--) {}
    if (!i) {
        const mguard__scope_naming *v = mguard__scope_entry(s, comp);
        char addr[128];
        if (!v) (void)mguard__describe(s->hd.ctx, comp, addr, sizeof addr, true);
        v = mguard__scope_entry(s, comp);   /* the hook may have named it, or freed the old name */
        mguard__scope_warn(s, MGUARD_LOG_SCOPE_EXIT_UNENTERED, "mguard_scope_exit",
                           v ? "" : "component ", v ? v->name : addr, mguard__scope_phase_name(s));
        st = MGUARD_NOT_FOUND;
    } else if (i == s->nframes) {
        mguard__scope_pop(s, i - 1, now);
    } else {
        const char *name = s->recs[s->frames[i - 1].rec].name;
        const char *inner = s->recs[s->frames[s->nframes - 1].rec].name;
        uint32_t phase = s->frames[i - 1].phase;
        mguard__scope_pop(s, i - 1, now);
        mguard__scope_warn(s, MGUARD_LOG_SCOPE_EXIT_ORDER, "mguard_scope_exit",
                           name, inner, s->phases[phase]);
    }
    mguard__scope_release(s);
    return st;
}

/* ---- queries ------------------------------------------------------------ */

static bool mguard__scope_is_active(const mguard_scope *s, const char *fqn)
{
    uint32_t r;
    if (!mguard__scope_ok(s) || !fqn) return false;
    r = mguard__scope_rec_lookup(s, fqn);
    return r && s->recs[r - 1].active > 0;
}

static size_t mguard__scope_parents(const mguard_scope *s, const char **out, size_t cap)
{
    uint32_t i;
    if (!mguard__scope_ok(s)) return 0;
    for (i = 0; i < s->nactive && i < cap && out; i++) out[i] = s->recs[s->active[i]].name;
    return s->nactive;
}

static size_t mguard__scope_frames(const mguard_scope *s, const char **out, size_t cap)
{
    uint32_t i;
    if (!mguard__scope_ok(s)) return 0;
    for (i = 0; i < s->nframes && i < cap && out; i++) out[i] = s->recs[s->frames[s->nframes - 1 - i].rec].name;
    if (i == s->nframes && i < cap && out) out[i] = s->root;
    return s->nframes + 1u;
}

static mguard_status mguard__scope_set_phase(mguard_scope *s, size_t phase)
{
    if (mguard__scope_refuse(s, s, "mguard_scope_set_phase")) return MGUARD_EINVAL;
    if (phase >= s->nphases) {
        mguard__logf(s->hd.ctx, MGUARD_LOG_SCOPE_BAD_PHASE, "mguard_scope_set_phase",
                     (unsigned long)phase, (unsigned long)s->nphases);
        return MGUARD_EINVAL;
    }
    s->phase = (uint32_t)phase;
    return MGUARD_OK;
}

static size_t mguard__scope_phase(const mguard_scope *s) { return mguard__scope_ok(s) ? s->phase : 0; }

/* The warnings and the trace first: they call out to nobody. */
static mguard_status mguard__scope_clear(mguard_scope *s, unsigned flags)
{
    mguard_status st = mguard__scope_refuse(s, s, "mguard_scope_clear");
    double now = 0.0;
    uint32_t i;
    if (!st && (flags & ~7u)) {
        mguard__logf(s->hd.ctx, MGUARD_LOG_BAD_FLAGS, "mguard_scope_clear", flags & ~7u);
        st = MGUARD_EINVAL;
    }
    if (st) return st;
    for (i = 0; (flags & MGUARD_SCOPE_CLEAR_WARNINGS) && i < s->nwarns; i++) mguard__free(s->hd.ctx, s->warns[i].msg);
    if (flags & MGUARD_SCOPE_CLEAR_WARNINGS) s->nwarns = 0;
    for (i = 0; (flags & MGUARD_SCOPE_CLEAR_TRACE) && i < s->nframes; i++) s->frames[i].event = 0;
    if (flags & MGUARD_SCOPE_CLEAR_TRACE) {
        s->nevents = 0;
        s->dropped = 0;
    }
    if (!(flags & MGUARD_SCOPE_CLEAR_FRAMES)) return MGUARD_OK;
    s->busy++;
    if (s->desc.trace && s->nframes) now = mguard__scope_now(s);
    if (!s->destroying) {
        if (s->nframes) mguard__scope_tick(s, now);
        for (i = 0; i < s->nframes; i++) {
            uint32_t ev = s->frames[i].event;
            if (ev) s->events[ev - 1].dur = mguard__scope_dur(s->events[ev - 1].ts, now);
        }
        for (i = 0; i < s->nactive; i++) s->recs[s->active[i]].active = 0;
        s->recs[0].active = 1;
        s->nactive = 1;
        s->nframes = 0;
        s->phase = 0;
    } else {
        st = MGUARD_EINVAL;   /* the clock destroyed the tracker */
    }
    mguard__scope_release(s);
    return st;
}

/* ---- counters ----------------------------------------------------------- */

static uint32_t mguard__scope_counter_find(const mguard_scope *s, const char *counter)
{
    uint32_t k;
    for (k = 0; k < s->ncounters; k++)
        if (strcmp(s->counters[k], counter) == 0) return k;
    return UINT32_MAX;
}

static mguard_status mguard__scope_add(mguard_scope *s, const char *counter, double amount)
{
    mguard_ctx *ctx;
    uint32_t k, i;
    const char *ic = NULL;
    if (!mguard__scope_ok(s)) return MGUARD_EINVAL;
    ctx = s->hd.ctx;
    if (s->destroying) return mguard__scope_refuse(s, s, "mguard_scope_add");
    if (!counter || !*counter || !(amount - amount == 0.0)) {
        mguard__logf(ctx, !counter || !*counter ? MGUARD_LOG_NULL_ARG : MGUARD_LOG_SCOPE_NOT_FINITE, "mguard_scope_add", "or empty counter name");
        return MGUARD_EINVAL;
    }
    k = mguard__scope_counter_find(s, counter);
    if (k == UINT32_MAX) {
        ic = mguard__scope_intern(ctx, s, counter);
        if (!ic || mguard__reserve(ctx, (void **)&s->counters, &s->capcounters, (size_t)s->ncounters + 1, sizeof *s->counters))
            goto oom;
        k = s->ncounters;
    }
    /* Grow every active record's counter array first (capacity only: the
       new slots are zero, so a failure part-way changes nothing visible).
       The innermost frame's record is one of them. */
    for (i = 0; i < s->nactive; i++) {
        mguard__scope_rec *r = &s->recs[s->active[i]];
        if (r->capvals <= k) {
            uint32_t ncap = r->capvals ? r->capvals : 4;
            double *nv;
            uint32_t j;
            while (ncap <= k) ncap *= 2;
            nv = (double *)mguard__realloc(ctx, r->vals, (size_t)ncap * 2 * sizeof *nv);
            if (!nv) goto oom;
            for (j = 2 * r->capvals; j < 2 * ncap; j++) nv[j] = 0.0;
            r->vals = nv;
            r->capvals = ncap;
        }
    }
    if (ic) s->counters[s->ncounters++] = ic;
    for (i = 0; i < s->nactive; i++) s->recs[s->active[i]].vals[2 * (size_t)k + 1] += amount;
    s->recs[s->nframes ? s->frames[s->nframes - 1].rec : 0].vals[2 * (size_t)k] += amount;
    return MGUARD_OK;
oom:
    mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_scope_add");
    return MGUARD_ENOMEM;
}

/* Column c of record r: counter c / 2's self (c even) or total (c odd). */
static double mguard__scope_val(const mguard__scope_rec *r, uint32_t c) { return c / 2 < r->capvals ? r->vals[c] : 0.0; }

static double mguard__scope_counter(const mguard_scope *s, const char *fqn, const char *counter, double *self)
{
    uint32_t r, k;
    if (self) *self = 0.0;
    if (!mguard__scope_ok(s) || !fqn || !counter) return 0.0;
    r = mguard__scope_rec_lookup(s, fqn);
    k = mguard__scope_counter_find(s, counter);
    if (!r || k == UINT32_MAX) return 0.0;
    if (self) *self = mguard__scope_val(&s->recs[r - 1], 2 * k);
    return mguard__scope_val(&s->recs[r - 1], 2 * k + 1);
}

/* ---- reports -------------------------------------------------------------
   A name's parent in the tree: its longest proper prefix before a '.' that is a record,
   else the root; siblings in order of first entry. */
typedef struct mguard__scope_tree { uint32_t *parent, *first, *next, *depth; char *prefix; } mguard__scope_tree;

static mguard_status mguard__scope_tree_build(mguard_scope *s, uint32_t n, mguard__scope_tree *t)
{
    mguard_ctx *ctx = s->hd.ctx;
    uint32_t i, *last, *block;
    size_t maxlen = 0;
    for (i = 0; i < n; i++) {
        size_t l = strlen(s->recs[i].name);
        if (l > maxlen) maxlen = l;
    }
    block = (uint32_t *)mguard__alloc(ctx, (size_t)n * 5 * sizeof(uint32_t) + maxlen + 1);
    if (!block) return MGUARD_ENOMEM;
    t->parent = block;
    t->first = block + n;
    t->next = block + 2 * (size_t)n;
    t->depth = block + 3 * (size_t)n;
    last = block + 4 * (size_t)n;
    t->prefix = (char *)(block + 5 * (size_t)n);
    for (i = 0; i < n; i++) t->first[i] = t->next[i] = last[i] = UINT32_MAX;
    t->parent[0] = UINT32_MAX;
    t->depth[0] = 0;
    for (i = 1; i < n; i++) {
        const char *name = s->recs[i].name;
        size_t l = strlen(name);
        uint32_t p = 0;
        memcpy(t->prefix, name, l + 1);
        while (l-- > 0) {
            if (t->prefix[l] != '.') continue;
            t->prefix[l] = '\0';
            {
                uint32_t r = mguard__scope_rec_lookup(s, t->prefix);
                if (r && r - 1 < n && r - 1 != i) { p = r - 1; break; }
            }
        }
        t->parent[i] = p;
    }
    /* children in record order; depths are set walking from the root */
    for (i = 1; i < n; i++) {
        uint32_t p = t->parent[i];
        if (last[p] == UINT32_MAX) t->first[p] = i; else t->next[last[p]] = i;
        last[p] = i;
    }
    return MGUARD_OK;
}

/* The label of record i in the tree: its name relative to its parent. */
static const char *mguard__scope_label(const mguard_scope *s, const mguard__scope_tree *t, uint32_t i)
{
    const char *name = s->recs[i].name;
    const char *pn;
    size_t pl;
    if (i == 0 || !t) return name;
    pn = s->recs[t->parent[i]].name;
    pl = strlen(pn);
    if (strncmp(name, pn, pl) == 0 && name[pl] == '.') return name + pl + 1;
    return name;
}

/* Next record after i in preorder (UINT32_MAX at the end). */
static uint32_t mguard__scope_tree_next(const mguard__scope_tree *t, uint32_t i)
{
    if (t->first[i] != UINT32_MAX) {
        t->depth[t->first[i]] = t->depth[i] + 1;
        return t->first[i];
    }
    while (i != UINT32_MAX) {
        if (t->next[i] != UINT32_MAX) {
            t->depth[t->next[i]] = t->depth[i];
            return t->next[i];
        }
        i = t->parent[i];
    }
    return UINT32_MAX;
}

/* Rows of the table (t NULL) or the tree; w holds one width per column, nc
   columns: each counter's self ("flops.self"), then its total ("flops.total"). */
static void mguard__scope_render_rows(mguard_scope *s, mguard__out *o, const mguard__scope_tree *t, uint32_t n,
                                      size_t *w, uint32_t nc)
{
    uint32_t k, i;
    size_t w0 = 5;
    char num[64];
    for (k = 0; k < nc; k++) w[k] = strlen(s->counters[k / 2]) + (k & 1 ? 6 : 5);
    /* pass 1: widths */
    for (i = 0; i != UINT32_MAX; i = t ? mguard__scope_tree_next(t, i) : (i + 1 < n ? i + 1 : UINT32_MAX)) {
        size_t l = strlen(mguard__scope_label(s, t, i)) + (t ? 2 * (size_t)t->depth[i] : 0);
        if (l > w0) w0 = l;
        for (k = 0; k < nc; k++) {
            size_t nl = mguard__fmt_num(num, sizeof num, mguard__scope_val(&s->recs[i], k));
            if (nl > w[k]) w[k] = nl;
        }
    }
    /* pass 2: rows */
    mguard__out_str(o, "scope");
    if (nc) mguard__out_pad(o, w0 - 5);
    for (k = 0; k < nc; k++) {
        mguard__out_pad(o, 2 + w[k] - strlen(s->counters[k / 2]) - (k & 1 ? 6 : 5));
        mguard__out_str(o, s->counters[k / 2]);
        mguard__out_str(o, k & 1 ? ".total" : ".self");
    }
    mguard__out_put(o, "\n", 1);
    for (i = 0; i != UINT32_MAX; i = t ? mguard__scope_tree_next(t, i) : (i + 1 < n ? i + 1 : UINT32_MAX)) {
        const char *label = mguard__scope_label(s, t, i);
        size_t indent = t ? 2 * (size_t)t->depth[i] : 0, ll = strlen(label);
        mguard__out_pad(o, indent);
        mguard__out_put(o, label, ll);
        if (nc) mguard__out_pad(o, w0 > indent + ll ? w0 - indent - ll : 0);
        for (k = 0; k < nc; k++) {
            size_t nl = mguard__fmt_num(num, sizeof num, mguard__scope_val(&s->recs[i], k));
            mguard__out_pad(o, 2 + (w[k] > nl ? w[k] - nl : 0));
            mguard__out_put(o, num, nl);
        }
        mguard__out_put(o, "\n", 1);
    }
}

static void mguard__scope_render_trace(mguard_scope *s, mguard__out *o)
{
    uint32_t i, n = s->nevents;
    mguard__out_str(o, "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":");
    mguard__out_json_str(o, s->root);
    mguard__out_str(o, "}}");
    for (i = 0; i < s->nphases; i++) {
        char head[80];
        snprintf(head, sizeof head, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%lu,\"args\":{\"name\":",
                 (unsigned long)i + 1);
        mguard__out_str(o, head);
        mguard__out_json_str(o, s->phases[i]);
        mguard__out_str(o, "}}");
    }
    for (i = 0; i < n && i < s->nevents; i++) {
        mguard__scope_event e = s->events[i];
        char tail[64];
        mguard__out_str(o, ",\n{\"name\":");
        mguard__out_json_str(o, e.name);
        mguard__out_str(o, ",\"cat\":");
        mguard__out_json_str(o, s->phases[e.phase]);
        mguard__out_str(o, e.dur >= 0 ? ",\"ph\":\"X\",\"ts\":" : ",\"ph\":\"B\",\"ts\":");
        mguard__out_json_num(o, e.ts);
        if (e.dur >= 0) {
            mguard__out_str(o, ",\"dur\":");
            mguard__out_json_num(o, e.dur);
        }
        snprintf(tail, sizeof tail, ",\"pid\":1,\"tid\":%d,\"args\":{\"depth\":%lu}}", (int)e.phase + 1, (unsigned long)e.depth);
        mguard__out_str(o, tail);
    }
    mguard__out_str(o, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"root\":");
    mguard__out_json_str(o, s->root);
    {
        char tail[64];
        snprintf(tail, sizeof tail, ",\"dropped_spans\":%lu}}\n", (unsigned long)s->dropped);
        mguard__out_str(o, tail);
    }
}

/* Nothing here calls out: s cannot change while it is rendered. */
static size_t mguard__scope_format(mguard_scope *s, mguard_scope_view view, char *buf, size_t cap)
{
    mguard__out o;
    mguard__scope_tree tree, *t = NULL;
    uint32_t i, n, nc;   /* names, columns */
    size_t wsmall[32], *w = wsmall;
    mguard__out_init_buf(&o, buf, cap);
    if (!mguard__scope_ok(s)) return mguard__out_end(&o);
    if (view == MGUARD_SCOPE_PATH) {
        for (i = 0; i <= s->nframes; i++) {
            if (i) mguard__out_put(&o, " > ", 3);
            mguard__out_str(&o, i ? s->recs[s->frames[i - 1].rec].name : s->root);
        }
        return mguard__out_end(&o);
    }
    n = s->nrecs;
    nc = 2 * s->ncounters;
    if (view != MGUARD_SCOPE_TABLE && view != MGUARD_SCOPE_TREE && view != MGUARD_SCOPE_TRACE_JSON) {
        mguard__logf(s->hd.ctx, MGUARD_LOG_BAD_ENUM, "mguard_scope_format", "view", (int)view);
        mguard__out_end(&o);
        return 0;
    }
    /* temporary memory first, before anything is written */
    if (view != MGUARD_SCOPE_TRACE_JSON && nc > 32) w = (size_t *)mguard__alloc(s->hd.ctx, nc * sizeof *w);
    if (w && view == MGUARD_SCOPE_TREE) t = mguard__scope_tree_build(s, n, &tree) ? NULL : &tree;
    if (!w || (view == MGUARD_SCOPE_TREE && !t)) {
        if (w && w != wsmall) mguard__free(s->hd.ctx, w);
        mguard__logf(s->hd.ctx, MGUARD_LOG_NOMEM, "mguard_scope_format");
        mguard__out_end(&o);
        return 0;
    }
    if (view == MGUARD_SCOPE_TRACE_JSON) mguard__scope_render_trace(s, &o);
    else mguard__scope_render_rows(s, &o, t, n, w, nc);
    if (t) mguard__free(s->hd.ctx, t->parent);
    if (w != wsmall) mguard__free(s->hd.ctx, w);
    return mguard__out_end(&o);
}

/* ---- invariants (mguard_ctx_check) --------------------------------------- */

static mguard_status mguard__scope_check(mguard__part *p)
{
    mguard_scope *s = (mguard_scope *)(void *)((char *)p - offsetof(mguard_scope, part));
    mguard_ctx *ctx = s->hd.ctx;
    uint32_t i, j, open = 0, withev = 0;
    MGUARD__CHECK(ctx, s->hd.magic == MGUARD__MAGIC_SCOPE, "scope %p: bad magic", (void *)s);
    MGUARD__CHECK(ctx, mguard__weak_ok(s->names), "scope %p: names table is gone", (void *)s);
    MGUARD__CHECK(ctx, s->nrecs >= 1 && s->recs[0].name == s->root, "scope %p: record 0 is not the root", (void *)s);
    MGUARD__CHECK(ctx, s->nactive >= 1 && s->active[0] == 0, "scope %p: the root is not first in the active set", (void *)s);
    if (mguard__check_index(ctx, &s->rec_index, (const unsigned char *)s->recs, sizeof(mguard__scope_rec), s->nrecs, "scope names"))
        return MGUARD_EINVAL;
    MGUARD__CHECK(ctx, s->rec_index.used == s->nrecs, "scope %p: %lu records, %lu indexed", (void *)s,
                   (unsigned long)s->nrecs, (unsigned long)s->rec_index.used);
    if (mguard__check_index(ctx, &s->held_index, (const unsigned char *)s->held, sizeof *s->held, s->nheld, "scope strings"))
        return MGUARD_EINVAL;
    MGUARD__CHECK(ctx, s->held_index.used == s->nheld, "scope %p: %lu strings held, %lu indexed", (void *)s,
                   (unsigned long)s->nheld, (unsigned long)s->held_index.used);
    for (i = 0; i < s->nrecs; i++)
        MGUARD__CHECK(ctx, mguard__ix_find(&s->held_index, (const unsigned char *)s->held, sizeof *s->held, s->recs[i].name,
                                           mguard__hash_ptr(s->recs[i].name)) != 0, "scope %p: %s is not held", (void *)s, s->recs[i].name);
    for (i = 0; i < s->nrecs; i++) {
        uint32_t n = i == 0, inlist = 0;
        const mguard__scope_rec *r = &s->recs[i];
        for (j = 0; j < s->nframes; j++) n += s->frames[j].rec == i;
        for (j = 0; j < s->nactive; j++) inlist += s->active[j] == i;
        MGUARD__CHECK(ctx, r->active == n, "scope %p: %s counts %u frames, has %u", (void *)s, r->name, r->active, n);
        MGUARD__CHECK(ctx, inlist == (n > 0), "scope %p: %s is listed %u times in the active set", (void *)s, r->name, inlist);
        for (j = 2 * s->ncounters; j < 2 * r->capvals; j++)
            MGUARD__CHECK(ctx, r->vals[j] == 0.0, "scope %p: %s has a value past the last counter", (void *)s, r->name);
    }
    for (i = 0; i < s->nframes; i++) {
        const mguard__scope_frame *f = &s->frames[i];
        MGUARD__CHECK(ctx, f->rec < s->nrecs, "scope %p: frame %u has no record", (void *)s, i);
        /* a component in phase 2 of its death lost its name already; its
           frames close in the scope's key-death callback, maybe later */
        MGUARD__CHECK(ctx, mguard__scope_entry(s, f->comp) != NULL || mguard__is_dying(ctx, f->comp), "scope %p: frame %u's component has no name", (void *)s, i);
        if (!f->event) continue;
        withev++;
        MGUARD__CHECK(ctx, f->event <= s->nevents && s->events[f->event - 1].dur < 0 &&
                       s->events[f->event - 1].name == s->recs[f->rec].name, "scope %p: frame %u's span is wrong", (void *)s, i);
    }
    for (i = 0; i < s->nevents; i++) open += s->events[i].dur < 0;
    MGUARD__CHECK(ctx, open == withev, "scope %p: %u open spans for %u frames", (void *)s, open, withev);
    MGUARD__CHECK(ctx, s->nwarns <= s->desc.max_warnings, "scope %p: remembers too many warnings", (void *)s);
    MGUARD__CHECK(ctx, s->nevents <= s->desc.max_trace_events, "scope %p: too many spans", (void *)s);
    return MGUARD_OK;
}
#endif /* MGUARD_NO_SCOPE */

#ifndef MGUARD_NO_DYN
/* ======================================================================= */
/* >>dyn: 8. dynamism tracker */
/* ======================================================================= */

size_t mguard_dyn_normalize_name(const char *in, char *out, size_t cap)
{
    mguard__out o;
    const char *p = in;
    mguard__out_init_buf(&o, out, cap);
    if (!in) return mguard__out_end(&o);
    while (*p) {
        const char *q;
        if (p[0] != '.' || !(p[1] == '_' || (p[1] >= 'a' && p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z'))) {
            for (q = p + 1; *q && *q != '.'; q++) {}
            mguard__out_put(&o, p, (size_t)(q - p));
            p = q;
            continue;
        }
        for (q = p + 2; *q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9'); q++) {}
        mguard__out_put(&o, "['", 2);
        mguard__out_put(&o, p + 1, (size_t)(q - p - 1));
        mguard__out_put(&o, "']", 2);
        p = q;
    }
    return mguard__out_end(&o);
}

/* One value at one position: shapes are integers, scalars doubles; they compare as Python numbers do. */
typedef struct mguard__dyn_val { double d; int64_t i; int is_int; } mguard__dyn_val;

static bool mguard__dyn_eq(const mguard__dyn_val *a, const mguard__dyn_val *b)
{
    const mguard__dyn_val *iv, *dv;
    if (a->is_int && b->is_int) return a->i == b->i;
    if (!a->is_int && !b->is_int) return a->d == b->d || (a->d != a->d && b->d != b->d);
    iv = a->is_int ? a : b;
    dv = a->is_int ? b : a;
    if (!(dv->d >= -9223372036854775808.0 && dv->d < 9223372036854775808.0)) return false;
    return (double)(int64_t)dv->d == dv->d && (int64_t)dv->d == iv->i;
}

/* recs: one per path in order of first observation, indexed by interned
   normalized path; vals[i] the first value seen at position i, dyn[i]
   whether another was seen since (one block: cap values, cap bools).
   groups: top-level names in order of first observation, each a list of
   its records (next_in_group: record + 1, 0 at the end). */
#define MGUARD__MAGIC_DYN 0x6d677879u  /* "mgxy" */

typedef struct mguard__dyn_rec {
    const char *path;          /* index key: must stay first */
    uint32_t group, next_in_group;
    uint32_t rank, cap;
    bool is_shape;
    mguard__dyn_val *vals;     /* block start; dyn follows cap values */
    bool *dyn;
} mguard__dyn_rec;
typedef struct mguard__dyn_group { const char *name; bool is_index; uint32_t first, last; } mguard__dyn_group;

struct mguard_dyn {
    mguard__handle hd;         /* first: magic, kind, context */
    mguard__part part;         /* the context's list of parts */
    mguard__index index;
    mguard__dyn_rec *recs;
    uint32_t nrecs, caprecs;
    mguard__dyn_group *groups;
    uint32_t ngroups, capgroups;
};

#define mguard__dyn_ok(h) mguard__handle_ok((h), MGUARD__MAGIC_DYN, MGUARD__DBG_DYN, __func__)

static void mguard__dyn_free(mguard_dyn *d)
{
    mguard_ctx *ctx = d->hd.ctx;
    uint32_t i;
    mguard__part_unlink(ctx, &d->part);
    for (i = 0; i < d->nrecs; i++) {
        mguard__str_release(ctx, d->recs[i].path);
        mguard__free(ctx, d->recs[i].vals);
    }
    for (i = 0; i < d->ngroups; i++) mguard__str_release(ctx, d->groups[i].name);
    mguard__free(ctx, d->recs);
    mguard__free(ctx, d->groups);
    mguard__ix_free(ctx, &d->index);
    mguard__handle_free(d);
}

static void mguard__dyn_destroy_part(mguard__part *p) { mguard__dyn_free((mguard_dyn *)(void *)((char *)p - offsetof(mguard_dyn, part))); }
static mguard_status mguard__dyn_check(mguard__part *p);

static mguard_dyn *mguard__dyn_create(mguard_ctx *ctx)
{
    mguard_dyn *d;
    if (!mguard__ctx_can_create(ctx, "mguard_dyn_create")) return NULL;
    d = NULL;
#ifdef MGUARD_DEBUG
    if (!mguard__dbg_h_reserve(ctx))
#endif
        d = (mguard_dyn *)mguard__alloc(ctx, sizeof *d);
    if (!d) { mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_dyn_create"); return NULL; }
    memset(d, 0, sizeof *d);
    d->part.destroy = mguard__dyn_destroy_part;
    d->part.check = mguard__dyn_check;
    mguard__part_link(ctx, &d->part);
    mguard__handle_init(d, MGUARD__MAGIC_DYN, MGUARD__DBG_DYN, ctx);
    return d;
}

static void mguard__dyn_destroy(mguard_dyn *d)
{
    if (mguard__dyn_ok(d)) mguard__dyn_free(d);
}

/* path normalized, in small or in *heap (to be freed); NULL: out of memory. */
static const char *mguard__dyn_norm(const mguard_ctx *ctx, const char *path, char *small, size_t cap, char **heap)
{
    size_t n = mguard_dyn_normalize_name(path, small, cap);
    *heap = NULL;
    if (n < cap) return small;
    *heap = (char *)mguard__alloc(ctx, n + 1);
    if (!*heap) return NULL;
    mguard_dyn_normalize_name(path, *heap, n + 1);
    return *heap;
}

/* Record + 1 of path, 0 when never observed (or no memory for a long path: logged). */
static uint32_t mguard__dyn_find(const mguard_dyn *d, const char *path)
{
    char small[256], *heap;
    const char *norm, *in;
    uint32_t r = 0;
    if (!mguard__dyn_ok(d) || !path) return 0;
    norm = mguard__dyn_norm(d->hd.ctx, path, small, sizeof small, &heap);
    if (!norm) { mguard__logf(d->hd.ctx, MGUARD_LOG_NOMEM, "mguard_dyn_dims"); return 0; }
    in = mguard__str_find(d->hd.ctx, norm);
    if (in) r = mguard__ix_find(&d->index, (const unsigned char *)d->recs, sizeof(mguard__dyn_rec), in, mguard__hash_ptr(in));
    mguard__free(d->hd.ctx, heap);
    return r;
}

/* The top-level name of a normalized path into out (strlen + 1 bytes): the
   first subscript's key ("x" for L['x'][0], index "0" for L[0]; an unquoted
   key that is not a decimal integer as Python writes one, such as L[x],
   L[00] or L[-0], is a string), else the leading name ("x" for x['y'], "L"
   for L). */
static void mguard__dyn_group_of(const char *path, char *out, bool *is_index)
{
    const char *p = path, *e;
    *is_index = false;
    if (p[0] == 'L' && p[1] == '[') p++;
    if (*p == '[') {
        p++;
        if (*p == '\'' || *p == '"') {
            char q = *p++;
            for (e = p; *e && *e != q; e++) {}
        } else {
            const char *d = p + (*p == '-');
            for (e = d; *e >= '0' && *e <= '9'; e++) {}
            *is_index = e > d && (*d != '0' || (e == d + 1 && d == p)) && *e == ']';   /* 0, not -0 */
            for (e = p; *e && *e != ']'; e++) {}
        }
    } else {
        for (e = p; *e && *e != '['; e++) {}
    }
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = '\0';
}

/* Make room for rank positions in record r's block (capacity only). */
static mguard_status mguard__dyn_grow(mguard_ctx *ctx, mguard__dyn_rec *r, size_t rank)
{
    size_t ncap;
    unsigned char *blk;
    if (rank <= r->cap) return MGUARD_OK;
    ncap = r->cap ? r->cap : 4;
    while (ncap < rank) ncap *= 2;
    /* rank is the user's ndim (< 2^31): the bytes may not wrap (32-bit) */
    if (!mguard__mul_fits(ncap, sizeof(mguard__dyn_val) + sizeof(bool))) return MGUARD_ENOMEM;
    blk = (unsigned char *)mguard__alloc(ctx, ncap * (sizeof(mguard__dyn_val) + sizeof(bool)));
    if (!blk) return MGUARD_ENOMEM;
    if (r->rank) {
        memcpy(blk, r->vals, r->rank * sizeof(mguard__dyn_val));
        memcpy(blk + ncap * sizeof(mguard__dyn_val), r->dyn, r->rank * sizeof(bool));
    }
    mguard__free(ctx, r->vals);
    r->vals = (mguard__dyn_val *)(void *)blk;
    r->dyn = (bool *)(void *)(blk + ncap * sizeof(mguard__dyn_val));
    r->cap = (uint32_t)ncap;
    return MGUARD_OK;
}

static mguard_status mguard__dyn_record(mguard_dyn *d, const char *path, const int64_t *dims, double scalar,
                                         size_t ndim, bool tensor, const char *fn)
{
    mguard_ctx *ctx;
    char small[256], *heap = NULL, gsmall[256], *gheap = NULL, *gbuf;
    const char *norm, *in = NULL, *gname = NULL;
    uint32_t r1 = 0, g = 0, i;
    bool is_index = false;
    mguard__dyn_rec *r;
    mguard_status st = MGUARD_OK;
    if (!mguard__handle_ok(d, MGUARD__MAGIC_DYN, MGUARD__DBG_DYN, fn)) return MGUARD_EINVAL;
    ctx = d->hd.ctx;
    if (!path || !*path || (tensor && ndim && !dims) || ndim > 0x7fffffffu) {
        mguard__logf(ctx, path && *path && ndim > 0x7fffffffu ? MGUARD_LOG_DYN_RANK : MGUARD_LOG_NULL_ARG, fn, !path || !*path ? "or empty path" : "dims");
        return MGUARD_EINVAL;
    }
    norm = mguard__dyn_norm(ctx, path, small, sizeof small, &heap);
    if (!norm) goto oom;
    in = mguard__str_find(ctx, norm);
    if (in) r1 = mguard__ix_find(&d->index, (const unsigned char *)d->recs, sizeof(mguard__dyn_rec), in, mguard__hash_ptr(in));
    if (!r1) {
        /* a new path: reserve its record, index slot, group and block */
        mguard__dyn_rec nr;
        size_t glen = strlen(norm);
        in = in ? mguard__str_take(in) : mguard__str_intern(ctx, norm);   /* the record's reference */
        if (!in) goto oom;
        gbuf = glen < sizeof gsmall ? gsmall : (gheap = (char *)mguard__alloc(ctx, glen + 1));
        if (!gbuf) goto oom;
        mguard__dyn_group_of(norm, gbuf, &is_index);
        gname = mguard__str_intern(ctx, gbuf);
        if (!gname) goto oom;
        for (g = 0; g < d->ngroups && !(d->groups[g].name == gname && d->groups[g].is_index == is_index); g++) {}
        if (g == d->ngroups && mguard__reserve(ctx, (void **)&d->groups, &d->capgroups, (size_t)d->ngroups + 1, sizeof *d->groups))
            goto oom;
        if (mguard__ix_reserve(ctx, &d->index, (size_t)d->nrecs + 1) ||
            mguard__reserve(ctx, (void **)&d->recs, &d->caprecs, (size_t)d->nrecs + 1, sizeof *d->recs))
            goto oom;
        memset(&nr, 0, sizeof nr);
        if (mguard__dyn_grow(ctx, &nr, ndim)) goto oom;
        /* commit */
        nr.path = in;
        nr.group = g;
        nr.is_shape = tensor;
        if (g == d->ngroups) {
            d->groups[g].name = gname;   /* the group's reference */
            d->groups[g].is_index = is_index;
            d->groups[g].first = d->nrecs + 1;
            d->ngroups++;
        } else {
            d->recs[d->groups[g].last - 1].next_in_group = d->nrecs + 1;
            mguard__str_release(ctx, gname);   /* the group holds it already */
        }
        d->groups[g].last = d->nrecs + 1;
        d->recs[d->nrecs++] = nr;
        mguard__ix_put(&d->index, mguard__hash_ptr(in), d->nrecs);
        r1 = d->nrecs;
    } else if (mguard__dyn_grow(ctx, &d->recs[r1 - 1], ndim)) {
        goto oom;
    }
    r = &d->recs[r1 - 1];
    for (i = 0; i < ndim; i++) {
        mguard__dyn_val v;
        v.is_int = tensor;
        v.i = tensor ? dims[i] : 0;
        v.d = tensor ? 0.0 : scalar;
        if (i >= r->rank) {
            r->vals[i] = v;
            r->dyn[i] = false;
        } else if (!r->dyn[i] && !mguard__dyn_eq(&r->vals[i], &v)) {
            r->dyn[i] = true;
        }
    }
    if (ndim > r->rank) r->rank = (uint32_t)ndim;
    goto done;
oom:
    st = MGUARD_ENOMEM;
    if (!r1) {
        /* a new path that could not be recorded: give back what it took */
        mguard__str_release(ctx, in);
        mguard__str_release(ctx, gname);
    }
    mguard__logf(ctx, MGUARD_LOG_NOMEM, fn);
done:
    mguard__free(ctx, heap);
    mguard__free(ctx, gheap);
    return st;
}

static mguard_status mguard__dyn_observe(mguard_dyn *d, const char *path, const int64_t *dims, size_t ndim)
{
    return mguard__dyn_record(d, path, dims, 0.0, ndim, true, "mguard_dyn_observe");
}

static mguard_status mguard__dyn_observe_scalar(mguard_dyn *d, const char *path, double value)
{
    return mguard__dyn_record(d, path, NULL, value, 1, false, "mguard_dyn_observe_scalar");
}

static bool mguard__dyn_dims(const mguard_dyn *d, const char *path, size_t *rank, bool *varies, size_t cap)
{
    uint32_t r = MGUARD__DBG_OK(d, MGUARD__DBG_DYN, "mguard_dyn_dims") ? mguard__dyn_find(d, path) : 0;
    const mguard__dyn_rec *rec = r ? &d->recs[r - 1] : NULL;
    size_t i;
    for (i = 0; i < cap && varies; i++) varies[i] = rec && i < rec->rank && rec->dyn[i];
    if (rank) *rank = rec ? rec->rank : 0;
    return rec != NULL;
}

static size_t mguard__dyn_count(const mguard_dyn *d) { return mguard__dyn_ok(d) ? d->nrecs : 0; }

static mguard_dyn_iter mguard__dyn_iterate(const mguard_dyn *d)
{
    mguard_dyn_iter it;
    memset(&it, 0, sizeof it);
    if (mguard__dyn_ok(d)) it.d_ = d;
    return it;
}

static bool mguard__dyn_next(mguard_dyn_iter *it)
{
    const mguard_dyn *d;
    uint32_t r;
    if (!it || !it->d_) return false;
    d = it->d_;
    if (!mguard__dyn_ok(d)) { it->d_ = NULL; return false; }
    /* rec_ is the record just visited + 1 (0 before the first step) */
    r = it->rec_ ? d->recs[it->rec_ - 1].next_in_group : 0;
    if (!r) {
        if (it->rec_) it->group_++;
        if (it->group_ >= d->ngroups) {
            memset(it, 0, sizeof *it);
            return false;
        }
        r = d->groups[it->group_].first;
    }
    it->rec_ = r;
    it->group = d->groups[it->group_].name;
    it->path = d->recs[r - 1].path;
    it->varies = d->recs[r - 1].dyn;
    it->rank = d->recs[r - 1].rank;
    it->is_shape = d->recs[r - 1].is_shape;
    return true;
}

/* A Python str repr: single quotes unless the text holds only single ones;
   backslash, the quote and control bytes escaped, other bytes as they are. */
static void mguard__out_pyrepr(mguard__out *o, const char *s)
{
    const unsigned char *p;
    char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
    mguard__out_put(o, &q, 1);
    for (p = (const unsigned char *)s; *p; p++) {
        char e[8];
        if (*p == (unsigned char)q || *p == '\\') { e[0] = '\\'; e[1] = (char)*p; mguard__out_put(o, e, 2); }
        else if (*p == '\t') mguard__out_put(o, "\\t", 2);
        else if (*p == '\n') mguard__out_put(o, "\\n", 2);
        else if (*p == '\r') mguard__out_put(o, "\\r", 2);
        else if (*p < 0x20 || *p == 0x7f) { snprintf(e, sizeof e, "\\x%02x", (unsigned)*p); mguard__out_put(o, e, 4); }
        else mguard__out_put(o, (const char *)p, 1);
    }
    mguard__out_put(o, &q, 1);
}

static size_t mguard__dyn_format(const mguard_dyn *d, char *buf, size_t cap)
{
    mguard__out o;
    uint32_t g;
    mguard__out_init_buf(&o, buf, cap);
    if (!mguard__dyn_ok(d)) return mguard__out_end(&o);
    mguard__out_put(&o, "{", 1);
    for (g = 0; g < d->ngroups; g++) {
        uint32_t r;
        if (g) mguard__out_put(&o, ", ", 2);
        if (d->groups[g].is_index) mguard__out_str(&o, d->groups[g].name);
        else mguard__out_pyrepr(&o, d->groups[g].name);
        mguard__out_put(&o, ": {", 3);
        for (r = d->groups[g].first; r; r = d->recs[r - 1].next_in_group) {
            const mguard__dyn_rec *rec = &d->recs[r - 1];
            uint32_t i;
            if (r != d->groups[g].first) mguard__out_put(&o, ", ", 2);
            mguard__out_pyrepr(&o, rec->path);
            mguard__out_put(&o, ": (", 3);
            for (i = 0; i < rec->rank; i++) {
                if (i) mguard__out_put(&o, ", ", 2);
                mguard__out_str(&o, rec->dyn[i] ? "True" : "False");
            }
            mguard__out_str(&o, rec->rank == 1 ? ",)" : ")");
        }
        mguard__out_put(&o, "}", 1);
    }
    mguard__out_put(&o, "}", 1);
    return mguard__out_end(&o);
}

static mguard_status mguard__dyn_check(mguard__part *p)
{
    mguard_dyn *d = (mguard_dyn *)(void *)((char *)p - offsetof(mguard_dyn, part));
    mguard_ctx *ctx = d->hd.ctx;
    uint32_t g, i, seen = 0;
    MGUARD__CHECK(ctx, d->hd.magic == MGUARD__MAGIC_DYN, "dyn %p: bad magic", (void *)d);
    if (mguard__check_index(ctx, &d->index, (const unsigned char *)d->recs, sizeof(mguard__dyn_rec), d->nrecs, "dyn paths"))
        return MGUARD_EINVAL;
    MGUARD__CHECK(ctx, d->index.used == d->nrecs, "dyn %p: %u paths, %lu indexed", (void *)d, d->nrecs, (unsigned long)d->index.used);
    for (i = 0; i < d->nrecs; i++) {
        const mguard__dyn_rec *r = &d->recs[i];
        MGUARD__CHECK(ctx, r->rank <= r->cap, "dyn %p: %s rank over capacity", (void *)d, r->path);
        MGUARD__CHECK(ctx, r->group < d->ngroups, "dyn %p: %s has no group", (void *)d, r->path);
    }
    for (g = 0; g < d->ngroups; g++) {
        uint32_t r, last = 0, n = 0;
        for (r = d->groups[g].first; r; r = d->recs[r - 1].next_in_group) {
            MGUARD__CHECK(ctx, r <= d->nrecs && d->recs[r - 1].group == g && ++n <= d->nrecs, "dyn %p: group %u's list is broken", (void *)d, g);
            MGUARD__CHECK(ctx, r > last, "dyn %p: group %u out of order", (void *)d, g);
            last = r;
        }
        MGUARD__CHECK(ctx, n > 0 && last == d->groups[g].last, "dyn %p: group %u's last record is wrong", (void *)d, g);
        seen += n;
    }
    MGUARD__CHECK(ctx, seen == d->nrecs, "dyn %p: %u paths in groups, %u recorded", (void *)d, seen, d->nrecs);
    return MGUARD_OK;
}
#endif /* MGUARD_NO_DYN */

#ifndef MGUARD_NO_LEDGER
/* ======================================================================= */
/* >>ledger: 9. side-effects ledger */
/* ======================================================================= */

/* At the end of the list: the ledgers outlive the trackers in a destroy. */
static void mguard__part_link_last(mguard_ctx *ctx, mguard__part *p)
{
    mguard__part **at = &ctx->parts;
    p->next = NULL;
    p->prev = NULL;
    while (*at) {
        p->prev = *at;
        at = &(*at)->next;
    }
    *at = p;
}

/* A ledger is seven flat arrays and four hash indexes, all holding indices,
   never pointers into each other, so a clone is one memcpy per array
   (docs/design.md, "The side-effects ledger", has the long version):
   - ents: tracked objects in tracking order (seq grows along the array).
     Removal leaves a tombstone (obj NULL); the array is compacted (order
     kept, epoch bumped) only when full and no walk is in progress.
     ent_ix: obj -> position + 1.
   - writes: a pool of pending attribute writes; value is the held pointer
     (NULL for a sized value, whose bytes are inline); free slots (obj NULL)
     chained through next. Each entry chains its writes head -> tail in
     first-recorded order (an overwrite keeps its slot).
     w_ix: (obj, interned attr) -> slot + 1.
   - refs: a pool of every distinct pointer held (objects, values, payloads,
     hooked objects, hook functions) with its count; free slots (ptr NULL)
     chained through rq_next. ref_ix: ptr -> slot + 1. A pointer's retain
     (first held) and release (count back to 0) are *queued* (rq, relq: FIFO
     lists through the slots) and run by mguard__ledger_flush after the
     structures are updated; releases also wait while a walk (diff, equal,
     prune, apply) is in progress, so every value it sees stays alive.
   - recs and hooks, in order (seq increasing along each array).
   - strs: a pool of every distinct string its entries (source) and writes
     (attribute) name, with their count; one hold each, taken by the first,
     let go with the last; free slots chained through next. s_ix: string ->
     slot + 1; an interned string's header hints at its slot in the last
     ledger that counted it (checked: the slot must name it). Records' tags
     and hooks' names are held one each (there are few).
   Invariants (checked by mguard_ctx_check): live_ents == ent_ix.used; each entry's
   list holds nwrites writes of that object in increasing seq, none for a
   CONTAINER entry; live_writes == w_ix.used == sum of nwrites; nmod counts the
   modified entries; a ref's count is the number of places holding it, a
   string's the live entries and writes naming it;
   HELD means retain ran and release is owed; a WATCHED pointer with
   count > 0 is a key of the root's weak table (that is how deaths reach
   the ledgers); stamp changes with every change of content, and two ledgers
   with the same stamp have the same content (a clone copies it).
   All ledgers of a context share one root: their list, the weak table
   that watches every pointer they hold, and the stamp counter. */
#define MGUARD__MAGIC_LEDGER 0x6d676c64u  /* "mgld" */
#define MGUARD__MAGIC_LDIFF  0x6d676466u  /* "mgdf" */

enum { MGUARD__LE_MARKED = 1u };        /* entry: container marked */
enum {
    MGUARD__LR_HELD = 1u,      /* retain ran (or would have): release owed */
    MGUARD__LR_RQ = 2u,        /* on the retain queue */
    MGUARD__LR_RELQ = 4u,      /* on the release queue */
    MGUARD__LR_WATCHED = 8u    /* its death must reach this ledger */
};

typedef struct mguard__lent {
    const void *obj;           /* NULL: removed */
    const char *source;
    const mguard_ledger_field *fields;   /* set_fields: the user's table */
    uint64_t seq;
    uint32_t kind, flags;
    uint32_t head, tail;       /* the object's writes, slot + 1 */
    uint32_t nwrites, nfields;
} mguard__lent;

typedef struct mguard__lwrite {
    const void *obj;           /* NULL: free slot */
    const char *attr;          /* interned */
    void *value;               /* the held pointer: NULL for a deletion and
                                  for every sized value */
    uint64_t seq;
    uint32_t next;             /* next write of obj, or next free slot */
    unsigned char deleted;
    unsigned char size, type;  /* a sized ledger's: the attribute's (its field's
                                  or the desc's) when recorded; else 0 */
    unsigned char pad_;
    unsigned char bytes[MGUARD_LEDGER_MAX_VALUE];   /* a sized value (zero for a deletion) */
} mguard__lwrite;

typedef struct mguard__lref {
    const void *ptr;           /* NULL: free slot */
    uint32_t count, flags;
    uint32_t rq_next;          /* retain queue link, or next free slot */
    uint32_t relq_next;        /* release queue link */
} mguard__lref;

/* Records and hooks carry their place in the ledger's order (seq, first
   member: walks resume by it, mguard__ledger_resume). */
typedef struct mguard__lrec { uint64_t seq; const char *tag; void *payload; } mguard__lrec;
typedef struct mguard__lhook { uint64_t seq; const void *obj; const char *name; void *fn; int id, pad_; } mguard__lhook;
/* A string L's entries (sources) and writes (attributes) name, held once by L
   however many name it: a clone takes one hold per string, not per item. */
typedef struct mguard__lstr {
    const char *s;             /* NULL: free slot */
    uint32_t count;            /* L's entries and writes naming s */
    uint32_t next;             /* next free slot */
} mguard__lstr;

struct mguard__lroot {
    mguard__part part;         /* first: the context's list of parts */
    mguard_ctx *ctx;
    mguard_ledger *head;       /* every ledger of ctx, doubly linked */
    uint32_t nledgers;
    int frames;                /* death notifications in progress */
    mguard_weak *watch;        /* key: every pointer a ledger watches */
    size_t sweep_at;           /* weak table size that triggers a sweep */
    uint64_t next_stamp;
    uint64_t seq;              /* the last place given in every ledger's order (entries, writes,
                                  records, hooks): a restore or a clone's own run never reuses one */
};

struct mguard_ledger {
    mguard__handle hd;         /* first: magic, kind, context */
    struct mguard__lroot *root; /* the context's ledger root, alive while L is */
    int destroying;            /* destroy requested: emptied, refuses changes */
    size_t block_bytes;        /* this struct heads a block of that size; an
                                  array inside it is never freed on its own */
    mguard_ledger *prev, *next;
    mguard_ledger_desc desc;
    uint64_t stamp;            /* content version (see above) */
    uint64_t epoch;            /* bumped when positions change */
    int walks;                 /* walks in progress: releases wait */
    int frames;                /* C frames using L after a call-out */
    mguard__lent *ents;
    uint32_t nents, capents, live_ents, nmod;
    mguard__index ent_ix;
    mguard__lwrite *writes;
    uint32_t nwpool, capwrites, live_writes, wfree;
    mguard__index w_ix;
    mguard__lref *refs;
    uint32_t nrpool, caprefs, live_refs, rfree;
    mguard__index ref_ix;
    uint32_t rq_head, rq_tail, relq_head, relq_tail;
    mguard__lrec *recs;
    uint32_t nrecs, caprecs;
    mguard__lhook *hooks;
    uint32_t nhooks, caphooks;
    mguard__lstr *strs;        /* the strings its entries and writes name */
    uint32_t nspool, capstrs, live_strs, sfree;
    mguard__index s_ix;
};

struct mguard_ledger_diff_result {
    mguard__handle hd;         /* first: magic, kind, context (MGUARD_DEBUG registers it) */
    mguard_ledger_diff_item *items;
    uint64_t *serials;         /* per item: obj, a.value, a.obj, b.value, b.obj */
    unsigned char *vbytes;     /* sized values: per item a's and b's bytes, which
                                  a.value and b.value of attribute items point to */
    uint32_t n, cap, capserials, capvbytes;
    char *text;
    size_t len, textcap;
};

#define mguard__ledger_ok(h) mguard__handle_ok((h), MGUARD__MAGIC_LEDGER, MGUARD__DBG_LEDGER, __func__)

static void mguard__ix_clear(mguard__index *ix)
{
    if (ix->slots) memset(ix->slots, 0, (ix->mask + 1) * sizeof(mguard__slot));
    ix->used = 0;
}

static size_t mguard__ix_bytes(const mguard__index *ix)
{
    return ix->slots ? (ix->mask + 1) * sizeof(mguard__slot) : 0;
}

static uint32_t mguard__ledger_ent_find(const mguard_ledger *L, const void *obj)
{
    return mguard__ix_find(&L->ent_ix, (const unsigned char *)L->ents, sizeof(mguard__lent), obj, mguard__hash_ptr(obj));
}

static uint32_t mguard__ledger_ref_find(const mguard_ledger *L, const void *p)
{
    return mguard__ix_find(&L->ref_ix, (const unsigned char *)L->refs, sizeof(mguard__lref), p, mguard__hash_ptr(p));
}

/* Hash of an (object, interned attribute) pair. */
static uint32_t mguard__ledger_whash(const void *obj, const char *attr)
{
    uint64_t x = (uint64_t)(uintptr_t)obj * 0x9E3779B97F4A7C15ull;
    x ^= (uint64_t)(uintptr_t)attr * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return (uint32_t)(x >> 16) | 1u;
}

static uint32_t mguard__ledger_w_find(const mguard_ledger *L, const void *obj, const char *attr)
{
    const mguard__index *ix = &L->w_ix;
    uint32_t h;
    size_t i;
    if (!ix->slots) return 0;
    h = mguard__ledger_whash(obj, attr);
    for (i = h & ix->mask; ix->slots[i].idx; i = (i + 1) & ix->mask) {
        mguard__slot s = ix->slots[i];
        if (s.hash == h && L->writes[s.idx - 1].obj == obj && L->writes[s.idx - 1].attr == attr) return s.idx;
    }
    return 0;
}

static bool mguard__ledger_modified(const mguard__lent *e)
{
    if (e->kind == MGUARD_LEDGER_NEW) return true;
    if (e->kind == MGUARD_LEDGER_EXISTING) return e->nwrites > 0;
    return (e->flags & MGUARD__LE_MARKED) != 0;
}

/* The value a write shows (walks, pending, diff, apply): the pointer,
   or for sized values the address of its bytes (NULL for a deletion). */
static void *mguard__ledger_wshow(const mguard_ledger *L, const mguard__lwrite *wr)
{
    if (!L->desc.value_size) return wr->value;
    return wr->deleted ? NULL : mguard__unconst(wr->bytes);
}

/* The field of entry en named attr, NULL if none. */
static const mguard_ledger_field *mguard__ledger_field(const mguard__lent *en, const char *attr)
{
    uint32_t i;
    for (i = 0; i < en->nfields; i++)
        if (strcmp(en->fields[i].name, attr) == 0) return &en->fields[i];
    return NULL;
}

/* Bytes of a value: value_size, or a pointer's. */
static size_t mguard__ledger_vsize(const mguard_ledger *L)
{
    return L->desc.value_size ? L->desc.value_size : sizeof(void *);
}

/* The size and type obj.attr's values have: its field's (f), else the desc's. */
static void mguard__ledger_shape(const mguard_ledger *L, const mguard_ledger_field *f, size_t *size, unsigned *type)
{
    *size = f ? f->size : mguard__ledger_vsize(L);
    *type = f ? (unsigned)f->type : (unsigned)L->desc.value_type;
}

/* A write has its attribute's size and type (a pointer ledger's: 0, 0). */
static bool mguard__ledger_shape_ok(const mguard_ledger *L, const mguard__lent *en, const mguard__lwrite *wr)
{
    size_t size = 0;
    unsigned type = 0;
    if (L->desc.value_size) mguard__ledger_shape(L, mguard__ledger_field(en, wr->attr), &size, &type);
    return wr->size == size && wr->type == type;
}

static const char *mguard__ledger_type_str(unsigned t)
{
    static const char *const names[] = { "MGUARD_LEDGER_VALUE_BYTES", "MGUARD_LEDGER_VALUE_INT", "MGUARD_LEDGER_VALUE_UINT",
                                         "MGUARD_LEDGER_VALUE_DOUBLE", "MGUARD_LEDGER_VALUE_BOOL", "MGUARD_LEDGER_VALUE_PTR" };
    return t <= MGUARD_LEDGER_VALUE_PTR ? names[t] : "an unknown value_type";
}

/* What values of type t need of their size n: NULL when n is one. */
static const char *mguard__ledger_type_needs(unsigned t, size_t n)
{
    switch (t) {
    case MGUARD_LEDGER_VALUE_BYTES: return n >= 1 && n <= MGUARD_LEDGER_MAX_VALUE ? NULL : "1 to MGUARD_LEDGER_MAX_VALUE bytes";
    case MGUARD_LEDGER_VALUE_INT:
    case MGUARD_LEDGER_VALUE_UINT: return n == 1 || n == 2 || n == 4 || n == 8 ? NULL : "1, 2, 4 or 8 bytes";
    case MGUARD_LEDGER_VALUE_DOUBLE: return n == 4 || n == 8 ? NULL : "4 or 8 bytes";
    case MGUARD_LEDGER_VALUE_BOOL: return n == 1 ? NULL : "1 byte";
    case MGUARD_LEDGER_VALUE_PTR: return n == sizeof(void *) ? NULL : "a pointer's size";
    default: return "a known value_type";
    }
}

static struct mguard__lroot *mguard__ledger_root_of(const mguard_ctx *ctx);
static void mguard__ledger_touch(mguard_ledger *L) { L->stamp = ++L->root->next_stamp; }

/* ---- the block: a clone is one allocation ------------------------------
   A clone copies the struct and every array into one block; an array that
   must grow moves out into its own allocation; the block goes with L. */
static bool mguard__ledger_in_block(const mguard_ledger *L, const void *p)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)L;
    return p && a >= b && a < b + L->block_bytes;
}

static void mguard__ledger_free_array(const mguard_ledger *L, void *p)
{
    if (!mguard__ledger_in_block(L, p)) mguard__free(L->hd.ctx, p);
}

/* mguard__reserve for a ledger array (which may live in the block). */
static mguard_status mguard__ledger_grow(const mguard_ledger *L, void **arr, uint32_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;
    if (need <= *cap) return MGUARD_OK;
    if (!mguard__ledger_in_block(L, *arr)) return mguard__reserve(L->hd.ctx, arr, cap, need, elem);
    if (need > 0x7fffffffu) return MGUARD_ENOMEM;
    ncap = *cap ? (size_t)*cap * 2 : 4;
    while (ncap < need) ncap *= 2;
    if (ncap > 0x7fffffffu) ncap = 0x7fffffffu;
    if (!mguard__mul_fits(ncap, elem)) return MGUARD_ENOMEM;   /* 32-bit size_t: the bytes would wrap */
    p = mguard__alloc(L->hd.ctx, ncap * elem);
    if (!p) return MGUARD_ENOMEM;
    memcpy(p, *arr, (size_t)*cap * elem);
    *arr = p;
    *cap = (uint32_t)ncap;
    return MGUARD_OK;
}

/* mguard__ix_reserve for a ledger index (slots in the block: rebuilt beside). */
static mguard_status mguard__ledger_ix_reserve(const mguard_ledger *L, mguard__index *ix, size_t need)
{
    mguard__index fresh;
    size_t i;
    mguard_status st;
    if (!mguard__ledger_in_block(L, ix->slots) || need * 2 <= ix->mask + 1) return mguard__ix_reserve(L->hd.ctx, ix, need);
    memset(&fresh, 0, sizeof fresh);
    st = mguard__ix_reserve(L->hd.ctx, &fresh, need);
    if (st) return st;
    for (i = 0; i <= ix->mask; i++)
        if (ix->slots[i].idx) mguard__ix_put(&fresh, ix->slots[i].hash, ix->slots[i].idx);
    *ix = fresh;
    return MGUARD_OK;
}

static void mguard__ledger_ix_free(const mguard_ledger *L, mguard__index *ix)
{
    mguard__ledger_free_array(L, ix->slots);
    memset(ix, 0, sizeof *ix);
}

/* ---- held pointers: counts and the two queues --------------------------- */

static void mguard__ledger_rq_push(mguard_ledger *L, uint32_t r)
{
    L->refs[r - 1].flags |= MGUARD__LR_RQ;
    L->refs[r - 1].rq_next = 0;
    if (L->rq_tail) L->refs[L->rq_tail - 1].rq_next = r; else L->rq_head = r;
    L->rq_tail = r;
}

static void mguard__ledger_relq_push(mguard_ledger *L, uint32_t r)
{
    L->refs[r - 1].flags |= MGUARD__LR_RELQ;
    L->refs[r - 1].relq_next = 0;
    if (L->relq_tail) L->refs[L->relq_tail - 1].relq_next = r; else L->relq_head = r;
    L->relq_tail = r;
}

/* One more holder of p (room reserved by mguard__ledger_reserve_refs). */
static void mguard__ledger_ref_inc(mguard_ledger *L, const void *p, uint32_t watched)
{
    uint32_t r;
    mguard__lref *s;
    if (!p) return;
    r = mguard__ledger_ref_find(L, p);
    if (!r) {
        if (L->rfree) {
            r = L->rfree;
            L->rfree = L->refs[r - 1].rq_next;
        } else {
            r = ++L->nrpool;
        }
        memset(&L->refs[r - 1], 0, sizeof(mguard__lref));
        L->refs[r - 1].ptr = p;
        mguard__ix_put(&L->ref_ix, mguard__hash_ptr(p), r);
        L->live_refs++;
    }
    s = &L->refs[r - 1];
    s->flags |= watched;
    if (s->count++ == 0 && !(s->flags & (MGUARD__LR_HELD | MGUARD__LR_RQ))) mguard__ledger_rq_push(L, r);
}

/* One holder of p less; at 0 its release is queued. */
static void mguard__ledger_ref_dec(mguard_ledger *L, const void *p)
{
    uint32_t r;
    mguard__lref *s;
    if (!p) return;
    r = mguard__ledger_ref_find(L, p);
    MGUARD_ASSERT(r && L->refs[r - 1].count);
    if (!r) return;
    s = &L->refs[r - 1];
    if (s->count && --s->count == 0 && !(s->flags & MGUARD__LR_RELQ)) mguard__ledger_relq_push(L, r);
}

/* Free slot r (on no queue, count 0). */
static void mguard__ledger_ref_free(mguard_ledger *L, uint32_t r)
{
    mguard__lref *s = &L->refs[r - 1];
    mguard__ix_del(&L->ref_ix, mguard__hash_ptr(s->ptr), r);
    memset(s, 0, sizeof *s);
    s->rq_next = L->rfree;
    L->rfree = r;
    L->live_refs--;
}

/* ---- the strings its items name: one hold each ------------------------- */

/* L's slot + 1 of interned string s, or 0. The hint in s's header is
   checked: a slot that names s is s's (L holds s, so no other string has
   its address). */
static MGUARD__HOT uint32_t mguard__ledger_str_find(const mguard_ledger *L, const char *s)
{
    const mguard__str *h = MGUARD__STR_HDR(s);
    if (h->lslot && h->lslot <= L->nspool && L->strs[h->lslot - 1].s == s) return h->lslot;
    return mguard__ix_find(&L->s_ix, (const unsigned char *)L->strs, sizeof(mguard__lstr), s, h->hash);
}

/* Room for one more string slot (nothing visible changes). */
static mguard_status mguard__ledger_reserve_strs(mguard_ledger *L)
{
    mguard_status st = mguard__ledger_ix_reserve(L, &L->s_ix, (size_t)L->live_strs + 1);
    if (st || L->sfree) return st;
    return mguard__ledger_grow(L, (void **)&L->strs, &L->capstrs, (size_t)L->nspool + 1, sizeof(mguard__lstr));
}

/* One more item of L names s (NULL: nothing). i: s's slot + 1, or 0: a new
   slot takes the caller's hold (room reserved). */
static MGUARD__HOT void mguard__ledger_str_hold(mguard_ledger *L, const char *s, uint32_t i)
{
    if (!s) return;
    if (!i) {
        i = L->sfree ? L->sfree : ++L->nspool;
        if (L->sfree) L->sfree = L->strs[i - 1].next;
        L->strs[i - 1].s = s;
        L->strs[i - 1].count = 0;
        mguard__ix_put(&L->s_ix, MGUARD__STR_HDR(s)->hash, i);
        L->live_strs++;
        mguard__str_keep_if_shared(L->hd.ctx, s);
    }
    L->strs[i - 1].count++;
    MGUARD__STR_HDR(s)->lslot = i;
}

/* One item fewer names s (NULL: nothing); at none L lets s go. Never allocates. */
static void mguard__ledger_str_drop(mguard_ledger *L, const char *s)
{
    uint32_t i;
    if (!s) return;
    i = mguard__ledger_str_find(L, s);
    MGUARD_ASSERT(i && L->strs[i - 1].count);
    if (!i || --L->strs[i - 1].count) return;
    mguard__ix_del(&L->s_ix, MGUARD__STR_HDR(s)->hash, i);
    L->strs[i - 1].s = NULL;
    L->strs[i - 1].next = L->sfree;
    L->sfree = i;
    L->live_strs--;
    mguard__str_release(L->hd.ctx, s);
}

/* Is p safe to hand to a hook: held or awaiting release, not destroyed? */
static bool mguard__ledger_alive(const mguard_ledger *L, const void *p)
{
    uint32_t r;
    if (!p) return true;
    r = mguard__ledger_ref_find(L, p);
    return r && (L->refs[r - 1].count || (L->refs[r - 1].flags & MGUARD__LR_HELD));
}

/* Walks snapshot pointers and call out between steps: identity is p's life, never its
   address (a hook may destroy p and a newcomer take its address). The life: a serial
   taken when p entered the root's weak table, which holds p while a ledger does (a walk
   holds everything); 0 when L does not watch p (a plain value cannot die). */
static uint64_t mguard__ledger_life(const mguard_ledger *L, const void *p)
{
    const uint64_t *v = (const uint64_t *)mguard__weak_get(L->root->watch, p);
    return v ? *v : 0;
}
static uint64_t mguard__ledger_serial(const mguard_ledger *L, const void *p)
{
    uint32_t r = p ? mguard__ledger_ref_find(L, p) : 0;
    if (!r || !(L->refs[r - 1].flags & MGUARD__LR_WATCHED)) return 0;
    return mguard__ledger_life(L, p);
}

/* Is p, whose serial was `serial` when a walk began, still that object? */
static bool mguard__ledger_same(const mguard_ledger *L, const void *p, uint64_t serial)
{
    if (!p) return true;
    if (serial) return mguard__ledger_life(L, p) == serial;
    return mguard__ledger_alive(L, p);
}

static void mguard__ledger_free(mguard_ledger *L);

/* Run queued retains, then (no walk) queued releases, one at a time, each popped before
   its hook runs: the hook may change or destroy L, whose memory L->frames keeps alive. */
static void mguard__ledger_drain(mguard_ledger *L)
{
    mguard_ctx *ctx = L->hd.ctx;
    for (;;) {
        uint32_t r;
        mguard__lref *s;
        if (L->rq_head) {
            r = L->rq_head;
            s = &L->refs[r - 1];
            L->rq_head = s->rq_next;
            if (!L->rq_head) L->rq_tail = 0;
            s->rq_next = 0;
            s->flags &= ~(uint32_t)MGUARD__LR_RQ;
            if (s->count && !(s->flags & MGUARD__LR_HELD) && L->desc.retain && !ctx->lk && ctx->logq.n) {
                /* the lines queued so far go out first: a logger may destroy
                   p (purged: then no retain), or hold it again */
                MGUARD__CALLOUT(ctx, (void)0);
                s = &L->refs[r - 1];
            }
            if (s->count && !(s->flags & MGUARD__LR_HELD)) {
                s->flags |= MGUARD__LR_HELD;
                if (L->desc.retain) {
                    void *p = mguard__unconst(s->ptr);
                    /* thread-safe: under the lock, done before the storing
                       call returns and before a release of p can be popped
                       (the caller holds p: it cannot be dead) */
                    if (ctx->lk) L->desc.retain(p, L->desc.user);
                    else MGUARD__CALLOUT(ctx, L->desc.retain(p, L->desc.user));
                }
            }
            continue;
        }
        if (L->walks || !L->relq_head) break;
        r = L->relq_head;
        s = &L->refs[r - 1];
        L->relq_head = s->relq_next;
        if (!L->relq_head) L->relq_tail = 0;
        s->relq_next = 0;
        s->flags &= ~(uint32_t)MGUARD__LR_RELQ;
        if (s->count) continue;       /* held again meanwhile */
        if (ctx->logq.n && (s->flags & MGUARD__LR_HELD) && L->desc.release) {
            /* as for retains: a logger may destroy p (purged: no release) */
            const void *was = s->ptr;
            MGUARD__CALLOUT(ctx, (void)0);
            s = &L->refs[r - 1];
            if (s->ptr != was || s->count || (s->flags & MGUARD__LR_RELQ)) continue;   /* its own path decides */
        }
        {
            void *p = mguard__unconst(s->ptr);
            bool held = (s->flags & MGUARD__LR_HELD) != 0;
            mguard__ledger_ref_free(L, r);
            if (held && L->desc.release) MGUARD__L_CALLOUT(ctx, p, NULL, L->desc.release(p, L->desc.user));
        }
    }
}

/* Last touch of L in any function that called out: a destroy requested meanwhile is finished here. */
static void mguard__ledger_unframe(mguard_ledger *L)
{
    if (--L->frames == 0 && L->destroying) {
        L->frames++;
        mguard__ledger_drain(L);
        if (--L->frames == 0) mguard__ledger_free(L);
    }
}

/* Phase 2 of every change. */
static void mguard__ledger_flush(mguard_ledger *L)
{
    L->frames++;
    mguard__ledger_drain(L);
    mguard__ledger_unframe(L);
}

static void mguard__ledger_begin_walk(mguard_ledger *L)
{
    L->walks++;
    L->frames++;
}

static void mguard__ledger_end_walk(mguard_ledger *L)
{
    L->walks--;
    mguard__ledger_flush(L);
    mguard__ledger_unframe(L);
}

/* ---- the root: every ledger of a context, the weak table of deaths ------ */

static void mguard__ledger_on_death(const void *key, void *value, void *user);
static void mguard__ledger_root_destroy_part(mguard__part *p);
static mguard_status mguard__ledger_root_check_part(mguard__part *p);

/* The root of ctx's ledgers, a part made with the first ledger (the core
   knows parts, not ledgers); NULL when none. Cost: O(parts). */
static struct mguard__lroot *mguard__ledger_root_of(const mguard_ctx *ctx)
{
    mguard__part *p;
    for (p = ctx->parts; p; p = p->next)
        if (p->destroy == mguard__ledger_root_destroy_part) return (struct mguard__lroot *)(void *)p;
    return NULL;
}

static void mguard__ledger_root_maybe_free(mguard_ctx *ctx)
{
    struct mguard__lroot *root = mguard__ledger_root_of(ctx);
    if (!root || root->nledgers || root->frames) return;
    mguard__part_unlink(ctx, &root->part);
    mguard__weak_destroy(root->watch);
    mguard__free(ctx, root);
}

static mguard_status mguard__ledger_root_ensure(mguard_ctx *ctx)
{
    struct mguard__lroot *root;
    mguard_weak_desc d;
    if (mguard__ledger_root_of(ctx)) return MGUARD_OK;
    root = (struct mguard__lroot *)mguard__alloc(ctx, sizeof *root);
    if (!root) return MGUARD_ENOMEM;
    memset(root, 0, sizeof *root);
    memset(&d, 0, sizeof d);
    d.value_size = sizeof(uint64_t);   /* p's life: see mguard__ledger_serial */
    d.key_death = mguard__ledger_on_death;
    d.user = ctx;
    {
        /* one log line per failed call: the caller logs, not the table */
        mguard_logger saved = ctx->log;
        ctx->log.func = NULL;
        root->watch = mguard__weak_create(ctx, &d);
        ctx->log = saved;
    }
    if (!root->watch) {
        mguard__free(ctx, root);
        return MGUARD_ENOMEM;
    }
    root->ctx = ctx;
    root->sweep_at = 64;
    root->part.destroy = mguard__ledger_root_destroy_part;
    root->part.check = mguard__ledger_root_check_part;
    mguard__part_link_last(ctx, &root->part);
    return MGUARD_OK;
}

/* Drop the keys no ledger holds (amortized: when the table doubled). */
static void mguard__ledger_root_sweep(struct mguard__lroot *root)
{
    mguard_weak_iter it = mguard__weak_iterate(root->watch);
    while (mguard__weak_next(&it)) {
        const mguard_ledger *L;
        for (L = root->head; L; L = L->next)
            if (mguard__ledger_ref_find(L, it.key)) break;
        if (!L) mguard__weak_take(root->watch, it.key, NULL);
    }
    root->sweep_at = 2 * mguard__weak_count(root->watch) + 64;
}

/* Once at the start of an operation that may watch pointers (never between
   two watches of one operation: it could drop the first). */
static void mguard__ledger_maybe_sweep(mguard_ledger *L)
{
    struct mguard__lroot *root = L->root;
    if (mguard__weak_count(root->watch) >= root->sweep_at) mguard__ledger_root_sweep(root);
}

/* Make p's death reach the ledgers; *added: undo with mguard__ledger_unwatch
   if a later step fails. EINVAL (logged) for a dying p. */
static mguard_status mguard__ledger_watch(mguard_ledger *L, const void *p, const char *fn, const void **added)
{
    mguard_ctx *ctx = L->hd.ctx;
    struct mguard__lroot *root = L->root;
    uint64_t life = ctx->next_serial + 1;
    mguard_status st;
    if (!p || mguard__weak_contains(root->watch, p)) return MGUARD_OK;
    if (ctx->dying && mguard__is_dying(ctx, p)) {
        char nm[MGUARD__NAME];
        snprintf(nm, sizeof nm, "%p", p);
        mguard__logf(ctx, MGUARD_LOG_OBJECT_DYING, fn, nm);
        return MGUARD_EINVAL;
    }
    st = mguard__weak_set_impl(root->watch, p, &life);
    if (!st) {
        ctx->next_serial++;
        *added = p;
    }
    return st;
}

static void mguard__ledger_unwatch(mguard_ledger *L, const void *added)
{
    if (added) mguard__weak_take(L->root->watch, added, NULL);
}

/* ---- removal (never allocates, never calls out) ------------------------- */

/* Free write slot w (unlinked, or its whole list is going). */
static void mguard__ledger_free_write(mguard_ledger *L, uint32_t w)
{
    mguard__lwrite *wr = &L->writes[w - 1];
    void *v = wr->value;
    mguard__ix_del(&L->w_ix, mguard__ledger_whash(wr->obj, wr->attr), w);
    mguard__ledger_str_drop(L, wr->attr);
    wr->obj = NULL;
    wr->attr = NULL;
    wr->value = NULL;
    wr->deleted = 0;
    memset(wr->bytes, 0, sizeof wr->bytes);
    wr->next = L->wfree;
    L->wfree = w;
    L->live_writes--;
    mguard__ledger_ref_dec(L, v);
}

/* Remove write w from its entry and free it. */
static void mguard__ledger_drop_write(mguard_ledger *L, uint32_t w)
{
    uint32_t e = mguard__ledger_ent_find(L, L->writes[w - 1].obj), prev = 0, cur;
    mguard__lent *en;
    MGUARD_ASSERT(e);
    en = &L->ents[e - 1];
    for (cur = en->head; cur != w; cur = L->writes[cur - 1].next) prev = cur;
    if (prev) L->writes[prev - 1].next = L->writes[w - 1].next; else en->head = L->writes[w - 1].next;
    if (en->tail == w) en->tail = prev;
    if (--en->nwrites == 0 && en->kind == MGUARD_LEDGER_EXISTING) L->nmod--;
    mguard__ledger_free_write(L, w);
}

/* Remove entry e (position + 1) and everything recorded for its object. */
static void mguard__ledger_drop_entry(mguard_ledger *L, uint32_t e)
{
    mguard__lent *en = &L->ents[e - 1];
    const void *obj = en->obj;
    uint32_t w = en->head;
    if (mguard__ledger_modified(en)) L->nmod--;
    while (w) {
        uint32_t next = L->writes[w - 1].next;
        mguard__ledger_free_write(L, w);
        w = next;
    }
    mguard__ix_del(&L->ent_ix, mguard__hash_ptr(obj), e);
    mguard__ledger_str_drop(L, en->source);
    en->obj = NULL;
    en->source = NULL;
    en->head = en->tail = en->nwrites = 0;
    L->live_ents--;
    mguard__ledger_ref_dec(L, obj);
}

/* A string entering a ledger (source, attribute, tag, hook name), one
   hold the caller's. found: s's interned copy, when a lookup found it
   (else NULL). On a thread-safe context the call that stores it keeps it
   for the context's life once nothing can fail (mguard__str_keep_if_shared):
   a reader keeps one it was handed (an iterator's attr) after the call,
   while another thread could drop the last holder; a call that fails lets
   it go. Else it lives while a ledger holds it. */
static const char *mguard__lstr_intern_found(mguard_ctx *ctx, const char *s, const char *found)
{
    return found ? mguard__str_take(mguard__str_recent(ctx, found)) : mguard__str_intern(ctx, s);
}
#define mguard__lstr_intern(ctx, s) mguard__lstr_intern_found((ctx), (s), NULL)

static void mguard__lstr_hold(mguard_ctx *ctx, const char *s, bool take)
{
    if (take) mguard__str_take(s); else mguard__str_release(ctx, s);
}

/* One more (take) or one fewer holder of every string L holds (one per
   string slot, one per record's tag and hook's name): a clone or restore
   takes them; emptying, restoring over, freeing release. Never allocates.
   Cost: O(string slots + records + hooks). */
static void mguard__ledger_strs(mguard_ledger *L, bool take)
{
    mguard_ctx *ctx = L->hd.ctx;
    uint32_t i;
    for (i = 0; i < L->nspool; i++)
        if (L->strs[i].s) mguard__lstr_hold(ctx, L->strs[i].s, take);
    for (i = 0; i < L->nrecs; i++) mguard__lstr_hold(ctx, L->recs[i].tag, take);
    for (i = 0; i < L->nhooks; i++) mguard__lstr_hold(ctx, L->hooks[i].name, take);
}

/* Forget all content: held pointers queued for release, strings released. */
static void mguard__ledger_empty(mguard_ledger *L)
{
    uint32_t i;
    mguard__ledger_strs(L, false);
    L->nspool = L->live_strs = L->sfree = 0;
    mguard__ix_clear(&L->s_ix);
    L->nents = L->live_ents = L->nmod = 0;
    mguard__ix_clear(&L->ent_ix);
    L->nwpool = L->live_writes = L->wfree = 0;
    mguard__ix_clear(&L->w_ix);
    L->nrecs = L->nhooks = 0;
    if (!L->desc.release && !L->frames) {
        /* nothing will be called: forget every held pointer at once */
        mguard__ix_clear(&L->ref_ix);
        L->nrpool = L->live_refs = L->rfree = 0;
        L->rq_head = L->rq_tail = L->relq_head = L->relq_tail = 0;
    } else {
        for (i = 0; i < L->nrpool; i++) {
            mguard__lref *s = &L->refs[i];
            if (!s->ptr || !s->count) continue;
            s->count = 0;
            if (!(s->flags & MGUARD__LR_RELQ)) mguard__ledger_relq_push(L, i + 1);
        }
    }
    L->epoch++;
    mguard__ledger_touch(L);
}

/* ---- lifetimes: an object a ledger refers to was destroyed -------------- */

typedef struct mguard__lpurge { unsigned ledgers, ents, writes, recs, hooks; } mguard__lpurge;

/* Phase 1 for one ledger: drop all that refers to k (never released). */
static void mguard__ledger_purge(mguard_ledger *L, const void *k, mguard__lpurge *pu)
{
    uint32_t r = mguard__ledger_ref_find(L, k), e, i, n;
    if (!r) return;
    if (L->refs[r - 1].count) {
        pu->ledgers++;
        e = mguard__ledger_ent_find(L, k);
        if (e) {
            pu->ents++;
            pu->writes += L->ents[e - 1].nwrites;
            mguard__ledger_drop_entry(L, e);
        }
        for (i = 0; i < L->nwpool && L->refs[r - 1].count; i++) {
            if (L->writes[i].obj && L->writes[i].value == k) {
                mguard__ledger_drop_write(L, i + 1);
                pu->writes++;
            }
        }
        for (i = 0, n = 0; i < L->nrecs; i++) {
            if (L->recs[i].payload == k) {
                mguard__ledger_ref_dec(L, k);
                mguard__str_release(L->hd.ctx, L->recs[i].tag);
                pu->recs++;
            } else {
                L->recs[n++] = L->recs[i];
            }
        }
        L->nrecs = n;
        for (i = 0, n = 0; i < L->nhooks; i++) {
            if (L->hooks[i].obj == k || L->hooks[i].fn == k) {
                mguard__ledger_ref_dec(L, L->hooks[i].obj);
                mguard__ledger_ref_dec(L, L->hooks[i].fn);
                mguard__str_release(L->hd.ctx, L->hooks[i].name);
                pu->hooks++;
            } else {
                L->hooks[n++] = L->hooks[i];
            }
        }
        L->nhooks = n;
        MGUARD_ASSERT(L->refs[r - 1].count == 0);
        mguard__ledger_touch(L);
    }
    /* never released; freed silently by the next flush */
    L->refs[r - 1].count = 0;
    L->refs[r - 1].flags &= ~(uint32_t)(MGUARD__LR_HELD | MGUARD__LR_WATCHED);
    if (!(L->refs[r - 1].flags & MGUARD__LR_RELQ)) mguard__ledger_relq_push(L, r);
}

/* key_death of the root's weak table: phase 1 purges every ledger (no
   call-out), phase 2 logs once and runs the queued releases. Its user is
   the context, not the root (an earlier callback of the death may have
   freed it); on a thread-safe context the lock is taken here. */
static void mguard__ledger_on_death_locked(struct mguard__lroot *root, const void *key);
static void mguard__ledger_on_death(const void *key, void *value, void *user)
{
    mguard_ctx *ctx = (mguard_ctx *)user;
    struct mguard__lroot *root;
    (void)value;
    MGUARD__LK_IN(ctx);
    root = mguard__ledger_root_of(ctx);
    if (root) mguard__ledger_on_death_locked(root, key);
    MGUARD__LK_OUT(ctx);
}

static void mguard__ledger_on_death_locked(struct mguard__lroot *root, const void *key)
{
    mguard_ctx *ctx = root->ctx;
    mguard_ledger *L;
    mguard__lpurge pu;
    memset(&pu, 0, sizeof pu);
    root->frames++;
    for (L = root->head; L; L = L->next) mguard__ledger_purge(L, key, &pu);
    if (pu.ledgers)
        mguard__logf(ctx, MGUARD_LOG_LEDGER_HELD_DESTROYED, key, pu.ledgers, pu.ents, pu.writes, pu.recs, pu.hooks);
    for (;;) {
        for (L = root->head; L; L = L->next)
            if (L->rq_head || (L->relq_head && !L->walks)) break;
        if (!L) break;
        mguard__ledger_flush(L);
    }
    root->frames--;
    mguard__ledger_root_maybe_free(ctx);
}

/* ---- reserving room (nothing visible changes) --------------------------- */

static void mguard__ledger_compact(mguard_ledger *L)
{
    uint32_t i, n = 0;
    for (i = 0; i < L->nents; i++) {
        if (!L->ents[i].obj) continue;
        if (n != i) L->ents[n] = L->ents[i];
        n++;
    }
    L->nents = n;
    mguard__ix_clear(&L->ent_ix);
    for (i = 0; i < n; i++) mguard__ix_put(&L->ent_ix, mguard__hash_ptr(L->ents[i].obj), i + 1);
    L->epoch++;
    mguard__ledger_touch(L);   /* a new layout: a walk that saved the stamp sees it (a call that then fails too) */
}

static mguard_status mguard__ledger_reserve_ents(mguard_ledger *L, uint32_t k)
{
    mguard_status st = mguard__ledger_ix_reserve(L, &L->ent_ix, (size_t)L->live_ents + k);
    if (st) return st;
    if ((size_t)L->nents + k <= L->capents) return MGUARD_OK;
    if (!L->walks && L->nents - L->live_ents >= L->nents / 4 + k) {
        mguard__ledger_compact(L);
        return MGUARD_OK;
    }
    return mguard__ledger_grow(L, (void **)&L->ents, &L->capents, (size_t)L->nents + k, sizeof(mguard__lent));
}

static mguard_status mguard__ledger_reserve_writes(mguard_ledger *L, uint32_t k)
{
    uint32_t spare = L->nwpool - L->live_writes;
    mguard_status st = mguard__ledger_ix_reserve(L, &L->w_ix, (size_t)L->live_writes + k);
    if (st || spare >= k) return st;
    return mguard__ledger_grow(L, (void **)&L->writes, &L->capwrites, (size_t)L->nwpool + (k - spare), sizeof(mguard__lwrite));
}

static mguard_status mguard__ledger_reserve_refs(mguard_ledger *L, uint32_t k)
{
    uint32_t spare = L->nrpool - L->live_refs;
    mguard_status st;
    if (!k) return MGUARD_OK;
    st = mguard__ledger_ix_reserve(L, &L->ref_ix, (size_t)L->live_refs + k);
    if (st || spare >= k) return st;
    return mguard__ledger_grow(L, (void **)&L->refs, &L->caprefs, (size_t)L->nrpool + (k - spare), sizeof(mguard__lref));
}

/* How many of p, q are new to L (distinct, non-NULL, no slot yet). */
static uint32_t mguard__ledger_new_refs(const mguard_ledger *L, const void *p, const void *q)
{
    uint32_t n = 0;
    if (p && !mguard__ledger_ref_find(L, p)) n++;
    if (q && q != p && !mguard__ledger_ref_find(L, q)) n++;
    return n;
}

/* A usable L for a change, or a status (bad handles cannot be logged). */
static mguard_status mguard__ledger_can_change(const mguard_ledger *L, const char *fn)
{
    if (!mguard__handle_ok(L, MGUARD__MAGIC_LEDGER, MGUARD__DBG_LEDGER, fn)) return MGUARD_EINVAL;
    if (L->destroying) { mguard__logf(L->hd.ctx, MGUARD_LOG_HANDLE_DESTROYING, fn, "ledger"); return MGUARD_EINVAL; }
    return MGUARD_OK;
}

static mguard_status mguard__ledger_oom(const mguard_ledger *L, mguard_status st, const char *fn)
{
    if (st == MGUARD_ENOMEM) mguard__logf(L->hd.ctx, MGUARD_LOG_NOMEM, fn);
    return st;
}

/* ---- create, destroy ---------------------------------------------------- */

/* A desc's sized values make sense: NULL (logged) otherwise. */
static bool mguard__ledger_desc_ok(mguard_ctx *ctx, const mguard_ledger_desc *d)
{
    size_t n = d->value_size;
    unsigned t = (unsigned)d->value_type;
    const char *why = NULL;
    if (n > MGUARD_LEDGER_MAX_VALUE) why = "value_size is more than MGUARD_LEDGER_MAX_VALUE";
    else if (t > MGUARD_LEDGER_VALUE_PTR) why = "unknown value_type";
    else if (t != MGUARD_LEDGER_VALUE_BYTES && n == 0) why = "a value_type needs a value_size";
    else if (n && mguard__ledger_type_needs(t, n)) {
        mguard__logf(ctx, MGUARD_LOG_LEDGER_BAD_TYPE, "mguard_ledger_create", mguard__ledger_type_str(t),
                     mguard__ledger_type_needs(t, n), (unsigned long)n);
        return false;
    }
    if (why) mguard__logf(ctx, MGUARD_LOG_LEDGER_BAD_DESC, "mguard_ledger_create", why, (unsigned long)n);
    return why == NULL;
}

static mguard_ledger *mguard__ledger_create(mguard_ctx *ctx, const mguard_ledger_desc *desc)
{
    mguard_ledger *L;
    if (!mguard__ctx_can_create(ctx, "mguard_ledger_create")) return NULL;
    if (desc && !mguard__ledger_desc_ok(ctx, desc)) return NULL;
    if (mguard__ledger_root_ensure(ctx) ||
#ifdef MGUARD_DEBUG
        mguard__dbg_h_reserve(ctx) ||
#endif
        !(L = (mguard_ledger *)mguard__alloc(ctx, sizeof *L))) {
        mguard__ledger_root_maybe_free(ctx);
        mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_ledger_create");
        return NULL;
    }
    memset(L, 0, sizeof *L);
    L->block_bytes = sizeof *L;
    if (desc) L->desc = *desc;
    {
        struct mguard__lroot *root = mguard__ledger_root_of(ctx);
        L->root = root;
        L->next = root->head;
        if (L->next) L->next->prev = L;
        root->head = L;
        root->nledgers++;
    }
    mguard__handle_init(L, MGUARD__MAGIC_LEDGER, MGUARD__DBG_LEDGER, ctx);
    mguard__ledger_touch(L);
    return L;
}

static void mguard__ledger_free(mguard_ledger *L)
{
    mguard_ctx *ctx = L->hd.ctx;
    struct mguard__lroot *root = L->root;
    mguard__ledger_strs(L, false);   /* what an O(1) destroy left */
    if (L->prev) L->prev->next = L->next; else root->head = L->next;
    if (L->next) L->next->prev = L->prev;
    root->nledgers--;
    mguard__ledger_free_array(L, L->ents);
    mguard__ledger_ix_free(L, &L->ent_ix);
    mguard__ledger_free_array(L, L->writes);
    mguard__ledger_ix_free(L, &L->w_ix);
    mguard__ledger_free_array(L, L->refs);
    mguard__ledger_ix_free(L, &L->ref_ix);
    mguard__ledger_free_array(L, L->recs);
    mguard__ledger_free_array(L, L->hooks);
    mguard__ledger_free_array(L, L->strs);
    mguard__ledger_ix_free(L, &L->s_ix);
    mguard__handle_free(L);
    mguard__ledger_root_maybe_free(ctx);
}

static void mguard__ledger_destroy(mguard_ledger *L)
{
    if (!mguard__ledger_ok(L)) return;
    if (L->destroying) { mguard__logf(L->hd.ctx, MGUARD_LOG_DESTROY_TWICE, "mguard_ledger_destroy", "ledger", (void *)L); return; }
    L->destroying = 1;
    if (!L->frames && !L->desc.release) {
        mguard__ledger_free(L);  /* nothing to call: no queue to run */
        return;
    }
    mguard__ledger_empty(L);
    L->frames++;
    mguard__ledger_unframe(L);   /* finishes now, or when the outermost frame ends */
}

/* mguard_ctx_destroy's loop over the parts: destroy one ledger (or the
   empty root); the loop calls again while the root lives. */
static void mguard__ledger_root_destroy_part(mguard__part *p)
{
    struct mguard__lroot *root = (struct mguard__lroot *)(void *)p;
    mguard_ctx *ctx = root->ctx;
    mguard_ledger *L = root->head;
    if (!L) {
        root->frames = 0;
        mguard__ledger_root_maybe_free(ctx);
    } else if (L->destroying) {
        /* only possible if a callback longjmp'd out: finish it anyway */
        L->walks = 0;
        L->frames = 1;
        mguard__ledger_unframe(L);
    } else {
        mguard__ledger_destroy(L);
    }
}

/* ---- tracking ----------------------------------------------------------- */

static mguard_status mguard__ledger_track(mguard_ledger *L, const void *obj, mguard_ledger_kind kind, const char *source)
{
    const char *fn = "mguard_ledger_track";
    mguard_ctx *ctx;
    const char *src = NULL;
    const void *added = NULL;
    uint32_t si = 0;
    mguard_status st = mguard__ledger_can_change(L, fn);
    mguard__lent *en;
    if (st) return st;
    ctx = L->hd.ctx;
    if (!obj) { mguard__logf(ctx, MGUARD_LOG_NULL_ARG, fn, "object"); return MGUARD_EINVAL; }
    if (kind < MGUARD_LEDGER_EXISTING || kind > MGUARD_LEDGER_CONTAINER) {
        mguard__logf(ctx, MGUARD_LOG_BAD_ENUM, fn, "kind", (int)kind);
        return MGUARD_EINVAL;
    }
    /* in its own death: refused before anything is reserved */
    if (ctx->dying && mguard__refuse_dying(ctx, &obj, 1, fn)) return MGUARD_EINVAL;
    if (mguard__ledger_ent_find(L, obj)) {
        char nm[MGUARD__NAME];
        mguard__logf(ctx, MGUARD_LOG_LEDGER_TRACKED, fn, mguard__named(ctx, obj, nm));
        return MGUARD_EEXIST;
    }
    if (source) {
        /* a string L holds already is counted (the hold taken here goes
           back); one only this call holds is new to L */
        if (!(src = mguard__lstr_intern(ctx, source))) st = MGUARD_ENOMEM;
        else if (MGUARD__STR_HDR(src)->refs != 1) si = mguard__ledger_str_find(L, src);
        if (!st && !si) st = mguard__ledger_reserve_strs(L);
    }
    if (!st) st = mguard__ledger_reserve_ents(L, 1);
    if (!st) st = mguard__ledger_reserve_refs(L, mguard__ledger_new_refs(L, obj, NULL));
    mguard__ledger_maybe_sweep(L);
    if (!st) st = mguard__ledger_watch(L, obj, fn, &added);
    if (st) {
        mguard__str_release(ctx, src);
        return mguard__ledger_oom(L, st, fn);
    }
    if (si) mguard__str_release(ctx, src);
    mguard__ledger_str_hold(L, src, si);
    en = &L->ents[L->nents++];
    memset(en, 0, sizeof *en);
    en->obj = obj;
    en->source = src;
    en->seq = ++L->root->seq;
    en->kind = (uint32_t)kind;
    mguard__ix_put(&L->ent_ix, mguard__hash_ptr(obj), L->nents);
    L->live_ents++;
    if (kind == MGUARD_LEDGER_NEW) L->nmod++;
    mguard__ledger_ref_inc(L, obj, MGUARD__LR_WATCHED);
    mguard__ledger_touch(L);
    mguard__ledger_flush(L);
    return MGUARD_OK;
}

static mguard_status mguard__ledger_get(const mguard_ledger *L, const void *obj, mguard_ledger_entry *out)
{
    uint32_t e;
    const mguard__lent *en;
    if (!mguard__ledger_ok(L)) return MGUARD_EINVAL;
    if (!obj) { mguard__logf(L->hd.ctx, MGUARD_LOG_NULL_ARG, "mguard_ledger_get", "object"); return MGUARD_EINVAL; }
    e = mguard__ledger_ent_find(L, obj);
    if (!e) return MGUARD_NOT_FOUND;
    if (!out) return MGUARD_OK;
    en = &L->ents[e - 1];
    out->obj = en->obj;
    out->kind = (mguard_ledger_kind)en->kind;
    out->source = en->source;
    out->modified = mguard__ledger_modified(en);
    out->writes = en->nwrites;
    return MGUARD_OK;
}

/* mguard__ledger_attr_entry's refusals (e: obj's entry, a container; 0: none),
   out of line: their name buffer would cost every write a stack frame. */
static MGUARD__NOINLINE mguard_status mguard__ledger_attr_refuse(const mguard_ledger *L, const void *obj,
                                                                 const char *attr, const char *fn, uint32_t e)
{
    mguard_ctx *ctx = L->hd.ctx;   /* every caller returns at once after a line: the hook may free L */
    char nm[MGUARD__NAME];
    if (!obj || !attr) mguard__logf(ctx, MGUARD_LOG_NULL_ARG, fn, !obj ? "object" : "attribute");
    else mguard__logf(ctx, e ? MGUARD_LOG_LEDGER_CONTAINER : MGUARD_LOG_LEDGER_UNTRACKED, fn, mguard__named(ctx, obj, nm));
    return MGUARD_EINVAL;
}

/* The entry of obj for an attribute-level call, or a logged status. */
static MGUARD__HOT mguard_status mguard__ledger_attr_entry(const mguard_ledger *L, const void *obj, const char *attr,
                                                      const char *fn, bool untracked_ok, uint32_t *e)
{
    *e = 0;
    if (!obj || !attr) return mguard__ledger_attr_refuse(L, obj, attr, fn, 0);
    *e = mguard__ledger_ent_find(L, obj);
    if (!*e) return untracked_ok ? MGUARD_NOT_FOUND : mguard__ledger_attr_refuse(L, obj, attr, fn, 0);
    if (L->ents[*e - 1].kind == MGUARD_LEDGER_CONTAINER) return mguard__ledger_attr_refuse(L, obj, attr, fn, *e);
    return MGUARD_OK;
}

static mguard_status mguard__ledger_mark_modified(mguard_ledger *L, const void *obj)
{
    const char *fn = "mguard_ledger_mark_modified";
    mguard_status st = mguard__ledger_can_change(L, fn);
    uint32_t e;
    mguard__lent *en;
    if (st) return st;
    if (!obj) { mguard__logf(L->hd.ctx, MGUARD_LOG_NULL_ARG, fn, "object"); return MGUARD_EINVAL; }
    e = mguard__ledger_ent_find(L, obj);
    if (!e || L->ents[e - 1].kind != MGUARD_LEDGER_CONTAINER) {
        mguard_ctx *ctx = L->hd.ctx;
        char nm[MGUARD__NAME];
        mguard__logf(ctx, e ? MGUARD_LOG_LEDGER_NOT_CONTAINER : MGUARD_LOG_LEDGER_UNTRACKED, fn, mguard__named(ctx, obj, nm));
        return MGUARD_EINVAL;
    }
    en = &L->ents[e - 1];
    if (!(en->flags & MGUARD__LE_MARKED)) {
        en->flags |= MGUARD__LE_MARKED;
        L->nmod++;
        mguard__ledger_touch(L);
    }
    return MGUARD_OK;
}

/* ---- attribute writes --------------------------------------------------- */

static mguard_status mguard__ledger_write(mguard_ledger *L, const void *obj, const char *attr, void *value,
                                     uint32_t deleted, const char *fn)
{
    mguard_ctx *ctx;
    const char *a;
    const void *added = NULL;
    uint32_t e, w, si;
    uint32_t watched;
    size_t size = 0;
    unsigned type = 0;
    unsigned char bytes[MGUARD_LEDGER_MAX_VALUE];
    mguard_status st = mguard__ledger_can_change(L, fn);
    if (st) return st;
    ctx = L->hd.ctx;
    st = mguard__ledger_attr_entry(L, obj, attr, fn, false, &e);
    if (st) return st;
    memset(bytes, 0, sizeof bytes);
    if (L->desc.value_size) {
        /* a sized value: the attribute's bytes are copied, no pointer is held */
        mguard__ledger_shape(L, mguard__ledger_field(&L->ents[e - 1], attr), &size, &type);
        if (!deleted && !value) {
            char nm[MGUARD__NAME];
            mguard__logf(ctx, MGUARD_LOG_LEDGER_NULL_VALUE, fn, mguard__named(ctx, obj, nm), attr, (unsigned long)size);
            return MGUARD_EINVAL;
        }
        if (!deleted) memcpy(bytes, value, size);
        value = NULL;
    }
    if (ctx->dying && value && !L->desc.plain_values && mguard__refuse_dying(ctx, (const void *const *)&value, 1, fn))
        return MGUARD_EINVAL;
    a = mguard__str_find(ctx, attr);   /* an overwrite: its write holds a already */
    w = a ? mguard__ledger_w_find(L, obj, a) : 0;
    si = a && !w ? mguard__ledger_str_find(L, a) : 0;   /* L holds a: counted, not taken */
    if (!w && !si && !(a = mguard__lstr_intern_found(ctx, attr, a))) return mguard__ledger_oom(L, MGUARD_ENOMEM, fn);
    if (w && L->writes[w - 1].value == value && L->writes[w - 1].deleted == deleted && L->writes[w - 1].size == size &&
        L->writes[w - 1].type == type && (!size || memcmp(L->writes[w - 1].bytes, bytes, size) == 0))   /* both zero past size */
        return MGUARD_OK;
    watched = L->desc.plain_values ? 0 : MGUARD__LR_WATCHED;
    if (!w) st = mguard__ledger_reserve_writes(L, 1);
    if (!st && !w && !si) st = mguard__ledger_reserve_strs(L);
    if (!st) st = mguard__ledger_reserve_refs(L, mguard__ledger_new_refs(L, value, NULL));
    mguard__ledger_maybe_sweep(L);
    if (!st && watched) st = mguard__ledger_watch(L, value, fn, &added);
    if (st) {
        if (!w && !si) mguard__str_release(ctx, a);
        return mguard__ledger_oom(L, st, fn);
    }
    if (w) {
        mguard__lwrite *wr = &L->writes[w - 1];
        void *old = wr->value;
        wr->value = value;
        wr->deleted = (unsigned char)deleted;
        wr->size = (unsigned char)size;
        wr->type = (unsigned char)type;
        memcpy(wr->bytes, bytes, sizeof bytes);
        mguard__ledger_ref_inc(L, value, watched);
        mguard__ledger_ref_dec(L, old);
    } else {
        mguard__lwrite *wr;
        mguard__lent *en = &L->ents[e - 1];
        if (L->wfree) {
            w = L->wfree;
            L->wfree = L->writes[w - 1].next;
        } else {
            w = ++L->nwpool;
        }
        mguard__ledger_str_hold(L, a, si);
        wr = &L->writes[w - 1];
        wr->obj = obj;
        wr->attr = a;
        wr->value = value;
        wr->seq = ++L->root->seq;
        wr->next = 0;
        wr->deleted = (unsigned char)deleted;
        wr->size = (unsigned char)size;
        wr->type = (unsigned char)type;
        memcpy(wr->bytes, bytes, sizeof bytes);
        mguard__ix_put(&L->w_ix, mguard__ledger_whash(obj, a), w);
        if (en->tail) L->writes[en->tail - 1].next = w; else en->head = w;
        en->tail = w;
        if (en->nwrites++ == 0 && en->kind == MGUARD_LEDGER_EXISTING) L->nmod++;
        L->live_writes++;
        mguard__ledger_ref_inc(L, value, watched);
    }
    mguard__ledger_touch(L);
    mguard__ledger_flush(L);
    return MGUARD_OK;
}

static mguard_status mguard__ledger_store_attr(mguard_ledger *L, const void *obj, const char *attr, void *value)
{
    return mguard__ledger_write(L, obj, attr, value, 0, "mguard_ledger_store_attr");
}

static mguard_status mguard__ledger_delete_attr(mguard_ledger *L, const void *obj, const char *attr)
{
    return mguard__ledger_write(L, obj, attr, NULL, 1, "mguard_ledger_delete_attr");
}

/* NOT_FOUND from a read is never mistaken for a zero: it is logged. */
static mguard_status mguard__ledger_not_found(const mguard_ledger *L, const void *obj, const char *attr, mguard_status st,
                                              const char *fn)
{
    mguard_ctx *ctx;
    char nm[MGUARD__NAME];
    if (st != MGUARD_NOT_FOUND) return st;   /* first: an EINVAL's line may have freed L */
    ctx = L->hd.ctx;   /* the hook may free L */
    if (mguard__ledger_ent_find(L, obj))
        mguard__logf(ctx, MGUARD_LOG_LEDGER_UNBOUND, fn, mguard__named(ctx, obj, nm), attr);
    else
        mguard__logf(ctx, MGUARD_LOG_LEDGER_READ_UNTRACKED, fn, mguard__named(ctx, obj, nm), attr);
    return st;
}

static mguard_status mguard__ledger_pending(const mguard_ledger *L, const void *obj, const char *attr, void **value)
{
    const char *fn = "mguard_ledger_pending";
    const char *a;
    uint32_t e, w;
    mguard_status st;
    if (value) *value = NULL;
    if (!mguard__ledger_ok(L)) return MGUARD_EINVAL;
    st = mguard__ledger_attr_entry(L, obj, attr, fn, true, &e);
    if (st) return value ? mguard__ledger_not_found(L, obj, attr, st, fn) : st;
    a = mguard__str_find(L->hd.ctx, attr);
    w = a ? mguard__ledger_w_find(L, obj, a) : 0;
    if (!w) return !value || mguard__ledger_field(&L->ents[e - 1], attr) ? MGUARD_NOT_FOUND : mguard__ledger_not_found(L, obj, attr, MGUARD_NOT_FOUND, fn);
    if (L->writes[w - 1].deleted) return MGUARD_DELETED;
    if (value) *value = mguard__ledger_wshow(L, &L->writes[w - 1]);
    return MGUARD_OK;
}

static mguard_status mguard__ledger_read(const mguard_ledger *L, const void *obj, const char *attr, void *out)
{
    const char *fn = "mguard_ledger_read";
    const mguard_ledger_field *f;
    const char *a;
    uint32_t e, w;
    size_t vs;
    unsigned t;
    mguard_status st;
    if (!mguard__ledger_ok(L)) return MGUARD_EINVAL;
    if (!out) { mguard__logf(L->hd.ctx, MGUARD_LOG_NULL_ARG, fn, "out"); return MGUARD_EINVAL; }
    st = mguard__ledger_attr_entry(L, obj, attr, fn, true, &e);
    if (st) return mguard__ledger_not_found(L, obj, attr, st, fn);
    /* out has room for the attribute's size (the field's, else the desc's) */
    f = mguard__ledger_field(&L->ents[e - 1], attr);
    mguard__ledger_shape(L, f, &vs, &t);
    memset(out, 0, vs);
    a = mguard__str_find(L->hd.ctx, attr);
    w = a ? mguard__ledger_w_find(L, obj, a) : 0;
    if (w) {
        const mguard__lwrite *wr = &L->writes[w - 1];
        if (wr->deleted) return MGUARD_DELETED;
        memcpy(out, L->desc.value_size ? (const void *)wr->bytes : (const void *)&wr->value, vs);
        return MGUARD_OK;
    }
    /* nothing pending: the real object's field (read-your-writes) */
    if (!f) return mguard__ledger_not_found(L, obj, attr, MGUARD_NOT_FOUND, fn);
    memcpy(out, (const unsigned char *)obj + f->offset, vs);
    return MGUARD_OK;
}

static mguard_status mguard__ledger_set_fields(mguard_ledger *L, const void *obj, const mguard_ledger_field *fields, size_t n)
{
    const char *fn = "mguard_ledger_set_fields";
    uint32_t e;
    size_t i;
    mguard_status st = mguard__ledger_can_change(L, fn);
    if (st) return st;
    st = mguard__ledger_attr_entry(L, obj, "", fn, false, &e);
    if (st) return st;
    if ((!fields && n) || n > 0xffffffffu) {
        if (n > 0xffffffffu) mguard__logf(L->hd.ctx, MGUARD_LOG_LEDGER_TOO_MANY_FIELDS, fn, (unsigned long)n);
        else mguard__logf(L->hd.ctx, MGUARD_LOG_NULL_ARRAY, fn, "fields", "n", (unsigned long)n);
        return MGUARD_EINVAL;
    }
    for (i = 0; i < n; i++) {
        const mguard_ledger_field *f = &fields[i];
        unsigned t = (unsigned)f->type;
        const char *needs = t > MGUARD_LEDGER_VALUE_PTR ? "a known value_type"
                            : L->desc.value_size ? mguard__ledger_type_needs(t, f->size)
                            : f->size != sizeof(void *) ? "a pointer's size in a ledger of pointer values (desc.value_size: values inline)" : NULL;
        if (!f->name) { mguard__logf(L->hd.ctx, MGUARD_LOG_LEDGER_FIELD_UNNAMED, fn, (unsigned long)i); return MGUARD_EINVAL; }
        if (needs) {
            mguard__logf(L->hd.ctx, MGUARD_LOG_LEDGER_FIELD_TYPE, fn, (unsigned long)i,
                         f->name, (unsigned long)f->size, mguard__ledger_type_str(t), needs);
            return MGUARD_EINVAL;
        }
    }
    if (L->desc.value_size) {
        /* a pending write keeps the size and type it was recorded with */
        mguard__lent nb = L->ents[e - 1];
        uint32_t w;
        nb.fields = fields;
        nb.nfields = (uint32_t)n;
        for (w = nb.head; w; w = L->writes[w - 1].next) {
            const mguard__lwrite *wr = &L->writes[w - 1];
            size_t size;
            unsigned type;
            mguard__ledger_shape(L, mguard__ledger_field(&nb, wr->attr), &size, &type);
            if (size != wr->size || type != wr->type) {
                /* the line's words first: the hook may free L, its writes and their names */
                mguard_ctx *ctx = L->hd.ctx;
                char nm[MGUARD__NAME], at[MGUARD__NAME];
                unsigned wsize = wr->size, wtype = wr->type;
                snprintf(at, sizeof at, "%s", wr->attr);
                mguard__logf(ctx, MGUARD_LOG_LEDGER_PENDING_SHAPE, fn, mguard__named(ctx, obj, nm), at, wsize,
                             mguard__ledger_type_str(wtype), (unsigned long)size, mguard__ledger_type_str(type));
                return MGUARD_EINVAL;
            }
        }
    }
    L->ents[e - 1].fields = n ? fields : NULL;
    L->ents[e - 1].nfields = (uint32_t)n;
    return MGUARD_OK;
}

/* ---- iteration ---------------------------------------------------------- */

/* pos_ 0: objects from the first, writes from the entry's head, records and hooks by seq_ */
static mguard_ledger_iter mguard__ledger_iterate(const mguard_ledger *L, mguard_ledger_walk what, const void *obj)
{
    mguard_ledger_iter it;
    memset(&it, 0, sizeof it);
    if (!mguard__ledger_ok(L)) return it;
    if ((unsigned)what - 1u > MGUARD_LEDGER_WALK_HOOKS - 1u) { mguard__logf(L->hd.ctx, MGUARD_LOG_BAD_ENUM, "mguard_ledger_iterate", "walk", (int)what); return it; }
    if (what == MGUARD_LEDGER_WALK_WRITES && !obj) return it;
    it.l_ = L;
    it.epoch_ = L->epoch;
    it.mode_ = (uint32_t)what;
    if (what == MGUARD_LEDGER_WALK_WRITES) it.obj = obj;
    return it;
}

static bool mguard__ledger_next_object(mguard_ledger_iter *it)
{
    const mguard_ledger *L;
    if (!it || !it->l_ || (it->mode_ != MGUARD_LEDGER_WALK_ENTRIES && it->mode_ != MGUARD_LEDGER_WALK_MODIFIED)) return false;
    L = it->l_;
    if (!mguard__ledger_ok(L)) { it->l_ = NULL; return false; }
    if (it->epoch_ != L->epoch) {
        /* positions moved: find the first entry after the last returned */
        uint32_t lo = 0, hi = L->nents;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (L->ents[mid].seq < it->seq_) lo = mid + 1; else hi = mid;
        }
        it->pos_ = lo;
        it->epoch_ = L->epoch;
    }
    while (it->pos_ < L->nents) {
        const mguard__lent *en = &L->ents[it->pos_++];
        if (!en->obj) continue;
        if (it->mode_ == MGUARD_LEDGER_WALK_MODIFIED && !mguard__ledger_modified(en)) continue;
        it->obj = en->obj;
        it->kind = (mguard_ledger_kind)en->kind;
        it->source = en->source;
        it->modified = mguard__ledger_modified(en);
        it->seq_ = en->seq + 1;
        return true;
    }
    it->obj = NULL;
    it->l_ = NULL;
    return false;
}

static bool mguard__ledger_next_write(mguard_ledger_iter *it)
{
    const mguard_ledger *L;
    const mguard__lwrite *wr;
    uint32_t w;
    if (!it || !it->l_ || it->mode_ != MGUARD_LEDGER_WALK_WRITES) return false;
    L = it->l_;
    if (!mguard__ledger_ok(L)) { it->l_ = NULL; return false; }
    w = it->pos_;
    if (!w || it->epoch_ != L->epoch || w > L->nwpool || L->writes[w - 1].obj != it->obj ||
        L->writes[w - 1].seq != it->wseq_) {
        /* the next write went away (or never was): obj's first write recorded after the last one returned */
        uint32_t e = mguard__ledger_ent_find(L, it->obj);
        w = e ? L->ents[e - 1].head : 0;
        while (w && L->writes[w - 1].seq <= it->seq_) w = L->writes[w - 1].next;
        it->epoch_ = L->epoch;
    }
    if (!w) {
        it->attr = NULL;
        it->value = NULL;
        it->deleted = false;
        it->l_ = NULL;
        return false;
    }
    wr = &L->writes[w - 1];
    it->attr = wr->attr;
    it->value = mguard__ledger_wshow(L, wr);
    it->deleted = wr->deleted != 0;
    it->seq_ = wr->seq;
    it->pos_ = wr->next;
    it->wseq_ = wr->next ? L->writes[wr->next - 1].seq : 0;
    return true;
}
/* Where a walk over records or hooks (stride bytes each, seq first and
   increasing) goes on: at pos_ if the last returned (seq_) is still at
   pos_ - 1, else at the first element with a larger seq. */
static uint32_t mguard__ledger_resume(const mguard_ledger_iter *it, const void *arr, size_t stride, uint32_t n)
{
    const unsigned char *b = (const unsigned char *)arr;
    uint32_t lo = 0, hi = n;
    uint64_t s;
    if (!n) return 0;
    if (it->pos_ > 0 && it->pos_ <= n) {
        memcpy(&s, b + (size_t)(it->pos_ - 1) * stride, sizeof s);
        if (s == it->seq_) return it->pos_;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        memcpy(&s, b + (size_t)mid * stride, sizeof s);
        if (s <= it->seq_) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static bool mguard__ledger_next_seq(mguard_ledger_iter *it)
{
    const mguard_ledger *L = it->l_;
    uint32_t i;
    if (it->mode_ == MGUARD_LEDGER_WALK_RECORDS) {
        i = mguard__ledger_resume(it, L->recs, sizeof *L->recs, L->nrecs);
        if (i < L->nrecs) {
            it->tag = L->recs[i].tag;
            it->payload = L->recs[i].payload;
            it->seq_ = L->recs[i].seq;
            it->pos_ = i + 1;
            return true;
        }
    } else {
        i = mguard__ledger_resume(it, L->hooks, sizeof *L->hooks, L->nhooks);
        if (i < L->nhooks) {
            it->id = L->hooks[i].id;
            it->obj = L->hooks[i].obj;
            it->name = L->hooks[i].name;
            it->fn = L->hooks[i].fn;
            it->seq_ = L->hooks[i].seq;
            it->pos_ = i + 1;
            return true;
        }
    }
    it->tag = it->name = NULL;
    it->payload = it->fn = NULL;
    it->obj = NULL;
    it->id = 0;
    it->l_ = NULL;
    return false;
}

static bool mguard__ledger_next(mguard_ledger_iter *it)
{
    if (it && it->l_ && !mguard__ledger_ok(it->l_)) { it->l_ = NULL; return false; }
    if (it && it->mode_ == MGUARD_LEDGER_WALK_WRITES) return mguard__ledger_next_write(it);
    if (it && it->l_ && (it->mode_ == MGUARD_LEDGER_WALK_RECORDS || it->mode_ == MGUARD_LEDGER_WALK_HOOKS)) return mguard__ledger_next_seq(it);
    return mguard__ledger_next_object(it);
}

/* ---- records and hooks -------------------------------------------------- */

static mguard_status mguard__ledger_record(mguard_ledger *L, const char *tag, void *payload)
{
    const char *fn = "mguard_ledger_record";
    const char *t;
    const void *added = NULL;
    uint32_t watched;
    mguard_status st = mguard__ledger_can_change(L, fn);
    if (st) return st;
    if (!tag) { mguard__logf(L->hd.ctx, MGUARD_LOG_NULL_ARG, fn, "tag"); return MGUARD_EINVAL; }
    watched = L->desc.plain_values ? 0 : MGUARD__LR_WATCHED;
    if (L->hd.ctx->dying && payload && watched && mguard__refuse_dying(L->hd.ctx, (const void *const *)&payload, 1, fn))
        return MGUARD_EINVAL;
    if (!(t = mguard__lstr_intern(L->hd.ctx, tag))) st = MGUARD_ENOMEM;
    if (!st) st = mguard__ledger_grow(L, (void **)&L->recs, &L->caprecs, (size_t)L->nrecs + 1, sizeof(mguard__lrec));
    if (!st) st = mguard__ledger_reserve_refs(L, mguard__ledger_new_refs(L, payload, NULL));
    mguard__ledger_maybe_sweep(L);
    if (!st && watched) st = mguard__ledger_watch(L, payload, fn, &added);
    if (st) {
        mguard__str_release(L->hd.ctx, t);
        return mguard__ledger_oom(L, st, fn);
    }
    L->recs[L->nrecs].seq = ++L->root->seq;
    L->recs[L->nrecs].tag = t;
    mguard__str_keep_if_shared(L->hd.ctx, t);
    L->recs[L->nrecs].payload = payload;
    L->nrecs++;
    mguard__ledger_ref_inc(L, payload, watched);
    mguard__ledger_touch(L);
    mguard__ledger_flush(L);
    return MGUARD_OK;
}

static uint32_t mguard__ledger_hook_find(const mguard_ledger *L, int id)
{
    uint32_t i;
    for (i = 0; i < L->nhooks; i++)
        if (L->hooks[i].id == id) return i + 1;
    return 0;
}

static mguard_status mguard__ledger_register_hook(mguard_ledger *L, const void *obj, const char *name, void *fn_value, int *id)
{
    const char *fn = "mguard_ledger_register_hook";
    const char *nm = NULL;
    const void *added1 = NULL, *added2 = NULL;
    uint32_t watched;
    int cand;
    mguard_status st = mguard__ledger_can_change(L, fn);
    if (st) return st;
    if (!obj || !id) { mguard__logf(L->hd.ctx, MGUARD_LOG_NULL_ARG, fn, !obj ? "object" : "id pointer"); return MGUARD_EINVAL; }
    if ((size_t)L->nhooks >= 0x7fffffffu) return mguard__ledger_oom(L, MGUARD_ENOMEM, fn);
    watched = L->desc.plain_values ? 0 : MGUARD__LR_WATCHED;
    {
        const void *both[2];
        both[0] = obj;
        both[1] = fn_value;
        if (mguard__refuse_dying(L->hd.ctx, both, watched && fn_value ? 2 : 1, fn)) return MGUARD_EINVAL;
    }
    if (name && !(nm = mguard__lstr_intern(L->hd.ctx, name))) st = MGUARD_ENOMEM;
    if (!st) st = mguard__ledger_grow(L, (void **)&L->hooks, &L->caphooks, (size_t)L->nhooks + 1, sizeof(mguard__lhook));
    if (!st) st = mguard__ledger_reserve_refs(L, mguard__ledger_new_refs(L, obj, fn_value));
    mguard__ledger_maybe_sweep(L);
    if (!st) st = mguard__ledger_watch(L, obj, fn, &added1);
    if (!st && watched) st = mguard__ledger_watch(L, fn_value, fn, &added2);
    if (st) {
        mguard__ledger_unwatch(L, added1);
        mguard__str_release(L->hd.ctx, nm);
        return mguard__ledger_oom(L, st, fn);
    }
    /* ids: start at the number of live hooks, skip ids in use */
    for (cand = (int)L->nhooks; mguard__ledger_hook_find(L, cand); cand++) {}
    L->hooks[L->nhooks].seq = ++L->root->seq;
    L->hooks[L->nhooks].obj = obj;
    L->hooks[L->nhooks].name = nm;
    mguard__str_keep_if_shared(L->hd.ctx, nm);
    L->hooks[L->nhooks].fn = fn_value;
    L->hooks[L->nhooks].id = cand;
    L->hooks[L->nhooks].pad_ = 0;
    L->nhooks++;
    mguard__ledger_ref_inc(L, obj, MGUARD__LR_WATCHED);
    mguard__ledger_ref_inc(L, fn_value, watched);
    *id = cand;
    mguard__ledger_touch(L);
    mguard__ledger_flush(L);
    return MGUARD_OK;
}

static mguard_status mguard__ledger_remove_hook(mguard_ledger *L, int id)
{
    uint32_t h;
    const void *obj;
    void *fnv;
    mguard_status st = mguard__ledger_can_change(L, "mguard_ledger_remove_hook");
    if (st) return st;
    h = mguard__ledger_hook_find(L, id);
    if (!h) return MGUARD_NOT_FOUND;
    obj = L->hooks[h - 1].obj;
    fnv = L->hooks[h - 1].fn;
    mguard__str_release(L->hd.ctx, L->hooks[h - 1].name);
    memmove(&L->hooks[h - 1], &L->hooks[h], (L->nhooks - h) * sizeof(mguard__lhook));
    L->nhooks--;
    mguard__ledger_ref_dec(L, obj);
    mguard__ledger_ref_dec(L, fnv);
    mguard__ledger_touch(L);
    mguard__ledger_flush(L);
    return MGUARD_OK;
}

/* ---- clone and restore: one memcpy per array ---------------------------- */

/* The content arrays of a ledger (everything but the held pointers). */
typedef struct mguard__lcontent {
    mguard__lent *ents;
    mguard__index ent_ix;
    mguard__lwrite *writes;
    mguard__index w_ix;
    mguard__lrec *recs;
    mguard__lhook *hooks;
    mguard__lstr *strs;
    mguard__index s_ix;
} mguard__lcontent;

static void *mguard__ledger_dup(const mguard_ctx *ctx, const void *src, size_t bytes, mguard_status *st)
{
    void *p;
    if (!bytes || *st) return NULL;
    p = mguard__alloc(ctx, bytes);
    if (!p) *st = MGUARD_ENOMEM;
    else memcpy(p, src, bytes);
    return p;
}

static void mguard__ledger_dup_ix(const mguard_ctx *ctx, mguard__index *dst, const mguard__index *src, mguard_status *st)
{
    *dst = *src;
    dst->slots = (mguard__slot *)mguard__ledger_dup(ctx, src->slots, mguard__ix_bytes(src), st);
    if (!dst->slots) {
        dst->mask = 0;
        dst->used = 0;
    }
}

static void mguard__ledger_content_free(const mguard_ctx *ctx, mguard__lcontent *k)
{
    mguard__free(ctx, k->ents);
    mguard__free(ctx, k->ent_ix.slots);
    mguard__free(ctx, k->writes);
    mguard__free(ctx, k->w_ix.slots);
    mguard__free(ctx, k->recs);
    mguard__free(ctx, k->hooks);
    mguard__free(ctx, k->strs);
    mguard__free(ctx, k->s_ix.slots);
}

static mguard_status mguard__ledger_content_dup(const mguard_ctx *ctx, mguard__lcontent *k, const mguard_ledger *src)
{
    mguard_status st = MGUARD_OK;
    memset(k, 0, sizeof *k);
    k->ents = (mguard__lent *)mguard__ledger_dup(ctx, src->ents, (size_t)src->nents * sizeof(mguard__lent), &st);
    mguard__ledger_dup_ix(ctx, &k->ent_ix, &src->ent_ix, &st);
    k->writes = (mguard__lwrite *)mguard__ledger_dup(ctx, src->writes, (size_t)src->nwpool * sizeof(mguard__lwrite), &st);
    mguard__ledger_dup_ix(ctx, &k->w_ix, &src->w_ix, &st);
    k->recs = (mguard__lrec *)mguard__ledger_dup(ctx, src->recs, (size_t)src->nrecs * sizeof(mguard__lrec), &st);
    k->hooks = (mguard__lhook *)mguard__ledger_dup(ctx, src->hooks, (size_t)src->nhooks * sizeof(mguard__lhook), &st);
    k->strs = (mguard__lstr *)mguard__ledger_dup(ctx, src->strs, (size_t)src->nspool * sizeof(mguard__lstr), &st);
    mguard__ledger_dup_ix(ctx, &k->s_ix, &src->s_ix, &st);
    if (st) mguard__ledger_content_free(ctx, k);
    return st;
}

/* Install copied content k (of src) into L, whose old arrays are freed. */
static void mguard__ledger_content_install(mguard_ledger *L, mguard__lcontent *k, const mguard_ledger *src)
{
    mguard__ledger_free_array(L, L->ents);
    mguard__ledger_free_array(L, L->ent_ix.slots);
    mguard__ledger_free_array(L, L->writes);
    mguard__ledger_free_array(L, L->w_ix.slots);
    mguard__ledger_free_array(L, L->recs);
    mguard__ledger_free_array(L, L->hooks);
    mguard__ledger_free_array(L, L->strs);
    mguard__ledger_free_array(L, L->s_ix.slots);
    L->ents = k->ents;
    L->nents = L->capents = src->nents;
    L->live_ents = src->live_ents;
    L->nmod = src->nmod;
    L->ent_ix = k->ent_ix;
    L->writes = k->writes;
    L->nwpool = L->capwrites = src->nwpool;
    L->live_writes = src->live_writes;
    L->wfree = src->wfree;
    L->w_ix = k->w_ix;
    L->recs = k->recs;
    L->nrecs = L->caprecs = src->nrecs;
    L->hooks = k->hooks;
    L->nhooks = L->caphooks = src->nhooks;
    L->strs = k->strs;
    L->nspool = L->capstrs = src->nspool;
    L->live_strs = src->live_strs;
    L->sfree = src->sfree;
    L->s_ix = k->s_ix;
}

/* A clone's block: the struct, then ents, ent slots, writes, write slots, refs, ref slots, records, hooks,
   strings, string slots. */
#define MGUARD__L_NARRAYS 10
#define MGUARD__L_ALIGN(n) (((n) + 15) & ~(size_t)15)
typedef struct mguard__llayout { size_t off[MGUARD__L_NARRAYS], len[MGUARD__L_NARRAYS], total; } mguard__llayout;

static void mguard__ledger_layout(const mguard_ledger *L, mguard__llayout *lay)
{
    size_t i, off = MGUARD__L_ALIGN(sizeof *L);
    lay->len[0] = (size_t)L->nents * sizeof(mguard__lent);
    lay->len[1] = mguard__ix_bytes(&L->ent_ix);
    lay->len[2] = (size_t)L->nwpool * sizeof(mguard__lwrite);
    lay->len[3] = mguard__ix_bytes(&L->w_ix);
    lay->len[4] = (size_t)L->nrpool * sizeof(mguard__lref);
    lay->len[5] = mguard__ix_bytes(&L->ref_ix);
    lay->len[6] = (size_t)L->nrecs * sizeof(mguard__lrec);
    lay->len[7] = (size_t)L->nhooks * sizeof(mguard__lhook);
    lay->len[8] = (size_t)L->nspool * sizeof(mguard__lstr);
    lay->len[9] = mguard__ix_bytes(&L->s_ix);
    for (i = 0; i < MGUARD__L_NARRAYS; i++) {
        lay->off[i] = off;
        off += MGUARD__L_ALIGN(lay->len[i]);
    }
    lay->total = off;
}

static mguard_ledger *mguard__ledger_clone(const mguard_ledger *src)
{
    const char *fn = "mguard_ledger_clone";
    mguard_ctx *ctx;
    mguard_ledger *C;
    mguard__llayout lay;
    unsigned char *block;
    void *dst[MGUARD__L_NARRAYS];
    const void *from[MGUARD__L_NARRAYS];
    size_t i;
    if (!mguard__ledger_ok(src) || !mguard__ctx_can_create(src->hd.ctx, fn)) return NULL;
    ctx = src->hd.ctx;
    if (src->destroying) { mguard__logf(ctx, MGUARD_LOG_HANDLE_DESTROYING, fn, "ledger"); return NULL; }
    mguard__ledger_layout(src, &lay);
    block = NULL;
#ifdef MGUARD_DEBUG
    if (!mguard__dbg_h_reserve(ctx))
#endif
        block = (unsigned char *)mguard__alloc(ctx, lay.total);
    if (!block) { mguard__logf(ctx, MGUARD_LOG_NOMEM, fn); return NULL; }
    /* One memcpy per array, all into the one block */
    from[0] = src->ents;
    from[1] = src->ent_ix.slots;
    from[2] = src->writes;
    from[3] = src->w_ix.slots;
    from[4] = src->refs;
    from[5] = src->ref_ix.slots;
    from[6] = src->recs;
    from[7] = src->hooks;
    from[8] = src->strs;
    from[9] = src->s_ix.slots;
    for (i = 0; i < MGUARD__L_NARRAYS; i++) {
        dst[i] = lay.len[i] ? block + lay.off[i] : NULL;
        if (lay.len[i]) memcpy(dst[i], from[i], lay.len[i]);
    }
    C = (mguard_ledger *)(void *)block;
    *C = *src;
    C->block_bytes = lay.total;
    C->walks = C->frames = 0;
    C->ents = (mguard__lent *)dst[0];
    C->capents = src->nents;
    C->ent_ix.slots = (mguard__slot *)dst[1];
    C->writes = (mguard__lwrite *)dst[2];
    C->capwrites = src->nwpool;
    C->w_ix.slots = (mguard__slot *)dst[3];
    C->refs = (mguard__lref *)dst[4];
    C->caprefs = src->nrpool;
    C->ref_ix.slots = (mguard__slot *)dst[5];
    C->recs = (mguard__lrec *)dst[6];
    C->caprecs = src->nrecs;
    C->hooks = (mguard__lhook *)dst[7];
    C->caphooks = src->nhooks;
    C->strs = (mguard__lstr *)dst[8];
    C->capstrs = src->nspool;
    C->s_ix.slots = (mguard__slot *)dst[9];
    C->prev = NULL;
    {
        struct mguard__lroot *root = mguard__ledger_root_of(ctx);
        C->next = root->head;
        if (C->next) C->next->prev = C;
        root->head = C;
        root->nledgers++;
    }
    mguard__handle_init(C, MGUARD__MAGIC_LEDGER, MGUARD__DBG_LEDGER, ctx);
    mguard__ledger_strs(C, true);   /* its own holds: one per string, record and hook */
    if (C->rq_head || C->relq_head || C->desc.retain) {
        /* src is mid-flush or the copy must retain: rebuild the queues */
        uint32_t k;
        C->rq_head = C->rq_tail = C->relq_head = C->relq_tail = 0;
        for (k = 0; k < C->nrpool; k++) {
            mguard__lref *s = &C->refs[k];
            if (!s->ptr) continue;
            s->flags &= ~(uint32_t)(MGUARD__LR_RQ | MGUARD__LR_RELQ);
            s->rq_next = s->relq_next = 0;
            if (!s->count) {
                mguard__ledger_ref_free(C, k + 1);
            } else if (C->desc.retain) {
                s->flags &= ~(uint32_t)MGUARD__LR_HELD;
                mguard__ledger_rq_push(C, k + 1);
            } else {
                s->flags |= MGUARD__LR_HELD;
            }
        }
    }
    mguard__ledger_flush(C);
    return C;
}

static mguard_status mguard__ledger_restore(mguard_ledger *L, const mguard_ledger *cp)
{
    const char *fn = "mguard_ledger_restore";
    mguard__lcontent k;
    uint32_t i;
    mguard_status st = mguard__ledger_can_change(L, fn);
    if (st) return st;
    if (!MGUARD__DBG_OK(cp, MGUARD__DBG_LEDGER, fn)) return MGUARD_EINVAL;
    /* values alike: the same size, and type (sized) or watching (pointers) */
    if (!mguard__ledger_ok(cp) || cp->hd.ctx != L->hd.ctx || cp->destroying || cp->desc.value_size != L->desc.value_size ||
        (L->desc.value_size ? cp->desc.value_type != L->desc.value_type : cp->desc.plain_values != L->desc.plain_values)) {
        mguard__logf(L->hd.ctx, MGUARD_LOG_LEDGER_BAD_CHECKPOINT, fn,
                     !mguard__ledger_ok(cp) ? "not a ledger" : cp->destroying ? "being destroyed" :
                     cp->hd.ctx != L->hd.ctx ? "from another context" : cp->desc.value_size != L->desc.value_size ? "of another value size" :
                     L->desc.value_size ? "of another value type" : "of other plain_values");
        return MGUARD_EINVAL;
    }
    if (cp == L) return MGUARD_OK;
    st = mguard__ledger_content_dup(L->hd.ctx, &k, cp);
    if (!st) {
        st = mguard__ledger_reserve_refs(L, cp->live_refs);
        if (st) mguard__ledger_content_free(L->hd.ctx, &k);
    }
    if (st) return mguard__ledger_oom(L, st, fn);
    mguard__ledger_strs(L, false);   /* cp holds its own: none of the new content's goes */
    mguard__ledger_content_install(L, &k, cp);
    mguard__ledger_strs(L, true);
    for (i = 0; i < L->nrpool; i++) {
        mguard__lref *s = &L->refs[i];
        if (!s->ptr || !s->count) continue;
        s->count = 0;
        if (!(s->flags & MGUARD__LR_RELQ)) mguard__ledger_relq_push(L, i + 1);
    }
    for (i = 0; i < cp->nrpool; i++) {
        const mguard__lref *c = &cp->refs[i];
        uint32_t r;
        if (!c->ptr || !c->count) continue;
        mguard__ledger_ref_inc(L, c->ptr, c->flags & MGUARD__LR_WATCHED);
        r = mguard__ledger_ref_find(L, c->ptr);
        L->refs[r - 1].count = c->count;
    }
    L->epoch++;
    L->stamp = cp->stamp;
    mguard__ledger_flush(L);
    return MGUARD_OK;
}

/* ---- equal and diff: one walk over both ledgers ------------------------- */

typedef struct mguard__lcmp {
    mguard_ledger *a, *b;
    uint64_t sa, sb;                 /* stamps when the walk began */
    mguard_ledger_diff_result *res;  /* NULL: stop at the first difference */
    bool differ;
    mguard_status st;
    const char *fn;
} mguard__lcmp;

/* A diff result's copies of one item's sized values: a's, then b's. */
#define MGUARD__LVBYTES ((size_t)MGUARD_LEDGER_MAX_VALUE * 2)

static bool mguard__ledger_emit(mguard__lcmp *c, const mguard_ledger_diff_item *it)
{
    mguard_ledger_diff_result *d = c->res;
    c->differ = true;
    if (!d) return true;
    if (mguard__reserve(d->hd.ctx, (void **)&d->items, &d->cap, (size_t)d->n + 1, sizeof *it) ||
        mguard__reserve(d->hd.ctx, (void **)&d->serials, &d->capserials, ((size_t)d->n + 1) * 5, sizeof(uint64_t))) {
        c->st = MGUARD_ENOMEM;
        return true;
    }
    /* identities now, for the text written after call-outs (the object
       through whichever ledger holds it, values through their side's) */
    d->serials[d->n * 5 + 0] = mguard__ledger_serial(mguard__ledger_ref_find(c->a, it->obj) ? c->a : c->b, it->obj);
    d->serials[d->n * 5 + 1] = mguard__ledger_serial(c->a, it->a.value);
    d->serials[d->n * 5 + 2] = mguard__ledger_serial(c->a, it->a.obj);
    d->serials[d->n * 5 + 3] = mguard__ledger_serial(c->b, it->b.value);
    d->serials[d->n * 5 + 4] = mguard__ledger_serial(c->b, it->b.obj);
    if (c->a->desc.value_size && it->what >= MGUARD_LEDGER_DIFF_ATTR_REMOVED && it->what <= MGUARD_LEDGER_DIFF_ATTR_CHANGED) {
        /* sized values are copied: the ledgers may change before the text */
        unsigned char *vb;
        if (mguard__reserve(d->hd.ctx, (void **)&d->vbytes, &d->capvbytes, (size_t)d->n + 1, MGUARD__LVBYTES)) {
            c->st = MGUARD_ENOMEM;
            return true;
        }
        vb = d->vbytes + (size_t)d->n * MGUARD__LVBYTES;
        memset(vb, 0, MGUARD__LVBYTES);
        if (it->a.value) memcpy(vb, it->a.value, MGUARD_LEDGER_MAX_VALUE);
        if (it->b.value) memcpy(vb + MGUARD_LEDGER_MAX_VALUE, it->b.value, MGUARD_LEDGER_MAX_VALUE);
    }
    d->items[d->n++] = *it;
    /* the result's own references: the ledgers may drop theirs first */
    mguard__str_take(it->attr);
    mguard__str_take(it->a.source);
    mguard__str_take(it->b.source);
    mguard__str_take(it->a.name);
    mguard__str_take(it->b.name);
    return false;
}

/* Point the sized values of d's attribute items at d's copies of them. */
static void mguard__ledger_diff_own_values(const mguard_ledger *a, mguard_ledger_diff_result *d)
{
    uint32_t i;
    if (!a->desc.value_size) return;
    for (i = 0; i < d->n; i++) {
        mguard_ledger_diff_item *it = &d->items[i];
        unsigned char *vb;
        /* only attribute items have copies (vbytes is NULL without any) */
        if (it->what < MGUARD_LEDGER_DIFF_ATTR_REMOVED || it->what > MGUARD_LEDGER_DIFF_ATTR_CHANGED) continue;
        vb = d->vbytes + (size_t)i * MGUARD__LVBYTES;
        if (it->a.value) it->a.value = vb;
        if (it->b.value) it->b.value = vb + MGUARD_LEDGER_MAX_VALUE;
    }
}

/* Values equal under a's hook; *stop: the hook changed a ledger (abandoned). */
static bool mguard__ledger_veq(mguard__lcmp *c, const void *va, const void *vb, bool *stop)
{
    bool r = false;
    *stop = false;
    if (va == vb) return true;
    if (!va || !vb || !c->a->desc.equal || c->a->desc.value_size) return false;
    MGUARD__L_CALLOUT(c->a->hd.ctx, va, vb, r = c->a->desc.equal(va, vb, c->a->desc.user));
    if (c->a->stamp != c->sa || c->b->stamp != c->sb) {
        mguard__logf(c->a->hd.ctx, MGUARD_LOG_LEDGER_CHANGED_IN_HOOK, c->fn, "equal", "comparison abandoned");
        c->st = MGUARD_EINVAL;
        *stop = true;
    }
    return r;
}

/* Sized values equal: a's equal hook, else memcmp. The hook gets copies:
   ba and bb point into writes arrays a re-entrant call (or another thread
   while the lock is let go) may move, free or zero. */
static bool mguard__ledger_beq(mguard__lcmp *c, const mguard__lwrite *wa, const mguard__lwrite *wb, bool *stop)
{
    unsigned char ca[MGUARD_LEDGER_MAX_VALUE], cb[MGUARD_LEDGER_MAX_VALUE];
    const unsigned char *ba = wa->bytes, *bb = wb->bytes;
    bool r = false;
    *stop = false;
    if (wa->size != wb->size || wa->type != wb->type) return false;
    if (!c->a->desc.equal) return memcmp(ba, bb, wa->size) == 0;
    memcpy(ca, ba, sizeof ca);
    memcpy(cb, bb, sizeof cb);
    MGUARD__L_CALLOUT(c->a->hd.ctx, NULL, NULL, r = c->a->desc.equal(ca, cb, c->a->desc.user));
    if (c->a->stamp != c->sa || c->b->stamp != c->sb) {
        mguard__logf(c->a->hd.ctx, MGUARD_LOG_LEDGER_CHANGED_IN_HOOK, c->fn, "equal", "comparison abandoned");
        c->st = MGUARD_EINVAL;
        *stop = true;
    }
    return r;
}

static void mguard__ledger_item(mguard_ledger_diff_item *it, mguard_ledger_diff_kind what, const void *obj,
                           const char *attr, long index)
{
    memset(it, 0, sizeof *it);
    it->what = what;
    it->obj = obj;
    it->attr = attr;
    it->index = index;
}

static void mguard__ledger_side_ent(mguard_ledger_diff_side *s, const mguard__lent *e)
{
    s->present = true;
    s->kind = (mguard_ledger_kind)e->kind;
    s->source = e->source;
    s->modified = mguard__ledger_modified(e);
}

static void mguard__ledger_side_write(const mguard_ledger *X, mguard_ledger_diff_side *s, const mguard__lwrite *w)
{
    s->present = true;
    s->name = w->attr;
    s->value = mguard__ledger_wshow(X, w);
    s->deleted = w->deleted != 0;
    s->size = w->size;
    s->type = (mguard_ledger_value_type)w->type;
}

static void mguard__ledger_side_rec(mguard_ledger_diff_side *s, const mguard__lrec *r)
{
    s->present = true;
    s->name = r->tag;
    s->value = r->payload;
}

static void mguard__ledger_side_hook(mguard_ledger_diff_side *s, const mguard__lhook *h)
{
    s->present = true;
    s->name = h->name;
    s->value = h->fn;
    s->obj = h->obj;
}

#define MGUARD__L_EMIT(c, it) do { if (mguard__ledger_emit((c), (it))) return; } while (0)

/* Emit every write of entry e of X as removed (side a) or added (side b). */
static void mguard__ledger_emit_writes(mguard__lcmp *c, const mguard_ledger *X, uint32_t e, bool side_a)
{
    mguard_ledger_diff_item it;
    uint32_t w;
    for (w = X->ents[e].head; w; w = X->writes[w - 1].next) {
        mguard__ledger_item(&it, side_a ? MGUARD_LEDGER_DIFF_ATTR_REMOVED : MGUARD_LEDGER_DIFF_ATTR_ADDED,
                       X->writes[w - 1].obj, X->writes[w - 1].attr, -1);
        mguard__ledger_side_write(X, side_a ? &it.a : &it.b, &X->writes[w - 1]);
        MGUARD__L_EMIT(c, &it);
    }
}

/* Compare write w of a with write wb of b (same object and attribute); true to stop. */
static bool mguard__ledger_cmp_write(mguard__lcmp *c, uint32_t w, uint32_t wb)
{
    mguard_ledger *A = c->a, *B = c->b;
    mguard_ledger_diff_item it;
    bool same, stop;
    if (A->writes[w - 1].deleted || B->writes[wb - 1].deleted) {
        same = A->writes[w - 1].deleted == B->writes[wb - 1].deleted && A->writes[w - 1].size == B->writes[wb - 1].size &&
               A->writes[w - 1].type == B->writes[wb - 1].type;
    } else {
        same = A->desc.value_size ? mguard__ledger_beq(c, &A->writes[w - 1], &B->writes[wb - 1], &stop)
                                  : mguard__ledger_veq(c, A->writes[w - 1].value, B->writes[wb - 1].value, &stop);
        if (stop) return true;
    }
    if (same) return false;
    mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_ATTR_CHANGED, A->writes[w - 1].obj, A->writes[w - 1].attr, -1);
    mguard__ledger_side_write(A, &it.a, &A->writes[w - 1]);
    mguard__ledger_side_write(B, &it.b, &B->writes[wb - 1]);
    return mguard__ledger_emit(c, &it);
}

/* Same attributes in the same order? (A clone and its original until one
   changes: the walk then needs no hash lookup.) */
static bool mguard__ledger_aligned(const mguard_ledger *A, uint32_t ea, const mguard_ledger *B, uint32_t eb)
{
    uint32_t w = A->ents[ea].head, wb = B->ents[eb].head;
    if (A->ents[ea].nwrites != B->ents[eb].nwrites) return false;
    for (; w; w = A->writes[w - 1].next, wb = B->writes[wb - 1].next)
        if (A->writes[w - 1].attr != B->writes[wb - 1].attr) return false;
    return true;
}

/* The walk: a's objects in order with their attribute differences, b's
   objects not in a, records by position, hooks by id. Objects at the same
   position (a clone's layout) pair without hashing. Positions are read
   afresh after every call-out (arrays may move though content does not). */
static void mguard__ledger_compare(mguard__lcmp *c)
{
    mguard_ledger *A = c->a, *B = c->b;
    mguard_ledger_diff_item it;
    uint32_t i, w, n;
    bool stop, same;
    for (i = 0; i < A->nents; i++) {
        const void *obj = A->ents[i].obj;
        uint32_t eb;
        if (!obj) continue;
        eb = i < B->nents && B->ents[i].obj == obj ? i + 1 : mguard__ledger_ent_find(B, obj);
        if (!eb) {
            mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_OBJECT_REMOVED, obj, NULL, -1);
            mguard__ledger_side_ent(&it.a, &A->ents[i]);
            MGUARD__L_EMIT(c, &it);
            mguard__ledger_emit_writes(c, A, i, true);
            if (c->st || (c->differ && !c->res)) return;
            continue;
        }
        /* modified follows from kind and writes, but a container's flag */
        if (A->ents[i].kind != B->ents[eb - 1].kind || A->ents[i].source != B->ents[eb - 1].source ||
            (A->ents[i].kind == MGUARD_LEDGER_CONTAINER && A->ents[i].flags != B->ents[eb - 1].flags)) {
            mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_OBJECT_CHANGED, obj, NULL, -1);
            mguard__ledger_side_ent(&it.a, &A->ents[i]);
            mguard__ledger_side_ent(&it.b, &B->ents[eb - 1]);
            MGUARD__L_EMIT(c, &it);
        }
        if (mguard__ledger_aligned(A, i, B, eb - 1)) {
            uint32_t wb = B->ents[eb - 1].head;
            for (w = A->ents[i].head; w; w = A->writes[w - 1].next, wb = B->writes[wb - 1].next)
                if (mguard__ledger_cmp_write(c, w, wb)) return;
            continue;
        }
        for (w = A->ents[i].head; w; w = A->writes[w - 1].next) {
            uint32_t wb = mguard__ledger_w_find(B, obj, A->writes[w - 1].attr);
            if (!wb) {
                mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_ATTR_REMOVED, obj, A->writes[w - 1].attr, -1);
                mguard__ledger_side_write(A, &it.a, &A->writes[w - 1]);
                MGUARD__L_EMIT(c, &it);
                continue;
            }
            if (mguard__ledger_cmp_write(c, w, wb)) return;
        }
        for (w = B->ents[eb - 1].head; w; w = B->writes[w - 1].next) {
            if (mguard__ledger_w_find(A, obj, B->writes[w - 1].attr)) continue;
            mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_ATTR_ADDED, obj, B->writes[w - 1].attr, -1);
            mguard__ledger_side_write(B, &it.b, &B->writes[w - 1]);
            MGUARD__L_EMIT(c, &it);
        }
    }
    for (i = 0; i < B->nents; i++) {
        const void *obj = B->ents[i].obj;
        if (!obj || (i < A->nents && A->ents[i].obj == obj) || mguard__ledger_ent_find(A, obj)) continue;
        mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_OBJECT_ADDED, obj, NULL, -1);
        mguard__ledger_side_ent(&it.b, &B->ents[i]);
        MGUARD__L_EMIT(c, &it);
        mguard__ledger_emit_writes(c, B, i, false);
        if (c->st || (c->differ && !c->res)) return;
    }
    n = A->nrecs > B->nrecs ? A->nrecs : B->nrecs;
    for (i = 0; i < n; i++) {
        if (i >= B->nrecs || i >= A->nrecs) {
            bool in_a = i < A->nrecs;
            mguard__ledger_item(&it, in_a ? MGUARD_LEDGER_DIFF_RECORD_REMOVED : MGUARD_LEDGER_DIFF_RECORD_ADDED, NULL, NULL, (long)i);
            if (in_a) mguard__ledger_side_rec(&it.a, &A->recs[i]); else mguard__ledger_side_rec(&it.b, &B->recs[i]);
            MGUARD__L_EMIT(c, &it);
            continue;
        }
        same = A->recs[i].tag == B->recs[i].tag;
        if (same) {
            same = mguard__ledger_veq(c, A->recs[i].payload, B->recs[i].payload, &stop);
            if (stop) return;
        }
        if (!same) {
            mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_RECORD_CHANGED, NULL, NULL, (long)i);
            mguard__ledger_side_rec(&it.a, &A->recs[i]);
            mguard__ledger_side_rec(&it.b, &B->recs[i]);
            MGUARD__L_EMIT(c, &it);
        }
    }
    for (i = 0; i < A->nhooks; i++) {
        uint32_t hb = mguard__ledger_hook_find(B, A->hooks[i].id);
        if (!hb) {
            mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_HOOK_REMOVED, NULL, NULL, A->hooks[i].id);
            mguard__ledger_side_hook(&it.a, &A->hooks[i]);
            MGUARD__L_EMIT(c, &it);
            continue;
        }
        same = A->hooks[i].obj == B->hooks[hb - 1].obj && A->hooks[i].name == B->hooks[hb - 1].name;
        if (same) {
            same = mguard__ledger_veq(c, A->hooks[i].fn, B->hooks[hb - 1].fn, &stop);
            if (stop) return;
        }
        if (!same) {
            mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_HOOK_CHANGED, NULL, NULL, A->hooks[i].id);
            mguard__ledger_side_hook(&it.a, &A->hooks[i]);
            mguard__ledger_side_hook(&it.b, &B->hooks[hb - 1]);
            MGUARD__L_EMIT(c, &it);
        }
    }
    for (i = 0; i < B->nhooks; i++) {
        if (mguard__ledger_hook_find(A, B->hooks[i].id)) continue;
        mguard__ledger_item(&it, MGUARD_LEDGER_DIFF_HOOK_ADDED, NULL, NULL, B->hooks[i].id);
        mguard__ledger_side_hook(&it.b, &B->hooks[i]);
        MGUARD__L_EMIT(c, &it);
    }
}

/* Both ledgers valid and comparable, or a status (logged when possible). */
static mguard_status mguard__ledger_pair_ok(const mguard_ledger *a, const mguard_ledger *b, const char *fn)
{
#ifdef MGUARD_DEBUG
    if (!mguard__dbg_h_valid(a, MGUARD__DBG_LEDGER, fn) || !mguard__dbg_h_valid(b, MGUARD__DBG_LEDGER, fn)) return MGUARD_EINVAL;
#endif
    if (mguard__ledger_ok(a) && mguard__ledger_ok(b)) {
        if (a->hd.ctx == b->hd.ctx && a->desc.value_size == b->desc.value_size) return MGUARD_OK;
        mguard__logf(a->hd.ctx, MGUARD_LOG_LEDGER_MISMATCH, fn,
                     a->hd.ctx != b->hd.ctx ? "belong to different contexts" : "hold values of different sizes");
    } else if (mguard__ledger_ok(a) || mguard__ledger_ok(b)) {
        mguard__logf(mguard__ledger_ok(a) ? a->hd.ctx : b->hd.ctx, MGUARD_LOG_NULL_ARG, fn, "or invalid ledger");
    }
    return MGUARD_EINVAL;
}

static void mguard__ledger_walk_pair(mguard__lcmp *c, const mguard_ledger *a, const mguard_ledger *b)
{
    /* walks only change counters of a heap object: the casts are sound */
    c->a = (mguard_ledger *)mguard__unconst(a);   /* a walk marks them (walks, frames) */
    c->b = (mguard_ledger *)mguard__unconst(b);
    c->sa = a->stamp;
    c->sb = b->stamp;
    mguard__ledger_begin_walk(c->a);
    mguard__ledger_begin_walk(c->b);
}

static void mguard__ledger_end_pair(mguard__lcmp *c)
{
    mguard__ledger_end_walk(c->a);
    mguard__ledger_end_walk(c->b);
}

static bool mguard__ledger_equal(const mguard_ledger *a, const mguard_ledger *b)
{
    mguard__lcmp c;
    if (mguard__ledger_pair_ok(a, b, "mguard_ledger_equal")) return false;
    if (a == b || a->stamp == b->stamp) return true;
    if (a->live_ents != b->live_ents || a->live_writes != b->live_writes || a->nrecs != b->nrecs ||
        a->nhooks != b->nhooks || a->nmod != b->nmod)
        return false;
    memset(&c, 0, sizeof c);
    c.fn = "mguard_ledger_equal";
    mguard__ledger_walk_pair(&c, a, b);
    mguard__ledger_compare(&c);
    mguard__ledger_end_pair(&c);
    return !c.differ && c.st == MGUARD_OK;
}

/* ---- diff text ---------------------------------------------------------- */

static void mguard__ledger_diff_puts(mguard_ledger_diff_result *d, mguard_status *st, const char *s)
{
    size_t n = strlen(s);
    if (*st) return;
    if (d->len + n + 1 > d->textcap) {
        size_t ncap = d->textcap ? d->textcap * 2 : 256;
        char *nt;
        while (ncap < d->len + n + 1) ncap *= 2;
        nt = (char *)mguard__realloc(d->hd.ctx, d->text, ncap);
        if (!nt) {
            *st = MGUARD_ENOMEM;
            return;
        }
        d->text = nt;
        d->textcap = ncap;
    }
    memcpy(d->text + d->len, s, n + 1);
    d->len += n;
}

#define MGUARD__LFMT 128

/* The default format of a sized value of n bytes: by its type. */
static void mguard__ledger_fmt_bytes(const unsigned char *b, size_t n, mguard_ledger_value_type type, char *buf)
{
    size_t i;
    union { int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; float f; double d; void *p; } u;
    memset(&u, 0, sizeof u);
    if (type != MGUARD_LEDGER_VALUE_BYTES) memcpy(&u, b, n);   /* n <= 8 (mguard__ledger_type_needs) */
    switch (type) {
    case MGUARD_LEDGER_VALUE_INT:
        snprintf(buf, MGUARD__LFMT, "%lld", n == 1 ? (long long)u.i8 : n == 2 ? (long long)u.i16 : n == 4 ? (long long)u.i32 : (long long)u.i64);
        return;
    case MGUARD_LEDGER_VALUE_UINT:
        snprintf(buf, MGUARD__LFMT, "%llu", n == 1 ? (unsigned long long)u.u8 : n == 2 ? (unsigned long long)u.u16 :
                                           n == 4 ? (unsigned long long)u.u32 : (unsigned long long)u.u64);
        return;
    case MGUARD_LEDGER_VALUE_DOUBLE:
        if (n == 4) snprintf(buf, MGUARD__LFMT, "%.9g", (double)u.f);
        else snprintf(buf, MGUARD__LFMT, "%.17g", u.d);
        return;
    case MGUARD_LEDGER_VALUE_BOOL:
        snprintf(buf, MGUARD__LFMT, "%s", u.u8 ? "true" : "false");
        return;
    case MGUARD_LEDGER_VALUE_PTR:
        snprintf(buf, MGUARD__LFMT, "%p", u.p);
        return;
    case MGUARD_LEDGER_VALUE_BYTES:
        break;
    }
    buf[0] = '0';
    buf[1] = 'x';
    for (i = 0; i < n; i++) snprintf(buf + 2 + 2 * i, 3, "%02x", (unsigned)b[i]);
}

enum { MGUARD__LF_VALUE, MGUARD__LF_OBJECT };

/* p (held by X) destroyed since the walk found it (serial: its life then)? */
/* Asked every time, not only when X changed: p's death may leave X as it
   was (a slot whose release a walk defers), and its life tells. */
static bool mguard__ledger_gone(const mguard_ledger *X, const void *p, uint64_t serial)
{
    return !mguard__ledger_alive(X, p) || !mguard__ledger_same(X, p, serial);
}

/* Format p (held by X) with X's object or value hook (kind: MGUARD__LF_*;
   an object is its own obj), a value as obj.attr's (NULL, NULL: a payload
   or hook function); a p destroyed meanwhile is not handed to it. */
static void mguard__ledger_fmt(const mguard_ledger *X, const void *obj, const char *attr,
                               const void *p, uint64_t serial, int kind, char *buf)
{
    mguard_ledger_format_fn format = kind == MGUARD__LF_OBJECT ? X->desc.format_object : X->desc.format_value;
    if (kind == MGUARD__LF_OBJECT) obj = p;
    buf[0] = 0;
    if (!p) {
        snprintf(buf, MGUARD__LFMT, "NULL");
    } else if (mguard__ledger_gone(X, p, serial)) {
        snprintf(buf, MGUARD__LFMT, "<destroyed>");
    } else if (format) {
        MGUARD__L_CALLOUT(X->hd.ctx, p, obj, format(obj, attr, p, 0, buf, MGUARD__LFMT, X->desc.user));
        buf[MGUARD__LFMT - 1] = 0;
    }
    /* no hook, or it wrote nothing: the context's describe hook (an object,
       unless the hook destroyed it), else the address */
    if (!buf[0] && kind == MGUARD__LF_OBJECT && p) {
        if (format && mguard__ledger_gone(X, p, serial)) snprintf(buf, MGUARD__LFMT, "<destroyed>");
        else (void)mguard__describe(X->hd.ctx, p, buf, MGUARD__LFMT, true);
    }
    if (!buf[0]) snprintf(buf, MGUARD__LFMT, "%p", p);
}

/* The serial item it's pointer k had when it was found (see l_emit). */
static uint64_t mguard__ledger_item_serial(const mguard__lcmp *c, const mguard_ledger_diff_item *it, int k)
{
    return c->res->serials[(size_t)(it - c->res->items) * 5 + (size_t)k];
}

/* An object's label: with a's format hook if a holds it, else b's. */
static const mguard_ledger *mguard__ledger_holder(const mguard__lcmp *c, const void *obj)
{
    return mguard__ledger_ref_find(c->a, obj) ? c->a : c->b;
}

static void mguard__ledger_label(const mguard__lcmp *c, const mguard_ledger_diff_item *it, char *buf)
{
    mguard__ledger_fmt(mguard__ledger_holder(c, it->obj), NULL, NULL, it->obj, mguard__ledger_item_serial(c, it, 0), MGUARD__LF_OBJECT, buf);
}

/* An attribute's value: a pointer through fmt; sized values (the result's
   own copies) by their type, or through format_value with the object
   (NULL once destroyed: a hook never sees a dead object) and the size. */
static void mguard__ledger_value_text(const mguard__lcmp *c, const mguard_ledger_diff_item *it, int side, char *buf)
{
    const mguard_ledger_diff_side *s = side ? &it->b : &it->a;
    const mguard_ledger *X = side ? c->b : c->a;
    const void *obj = it->obj;
    if (s->deleted) {
        snprintf(buf, MGUARD__LFMT, "<deleted>");
        return;
    }
    if (mguard__ledger_gone(mguard__ledger_holder(c, obj), obj, mguard__ledger_item_serial(c, it, 0))) obj = NULL;
    if (!X->desc.value_size) {
        mguard__ledger_fmt(X, obj, it->attr, s->value, mguard__ledger_item_serial(c, it, side ? 3 : 1), MGUARD__LF_VALUE, buf);
        return;
    }
    buf[0] = 0;
    if (X->desc.format_value) {
        MGUARD__L_CALLOUT(X->hd.ctx, obj, NULL, X->desc.format_value(obj, it->attr, s->value, s->size, buf, MGUARD__LFMT, X->desc.user));
        buf[MGUARD__LFMT - 1] = 0;
    }
    if (!buf[0]) mguard__ledger_fmt_bytes((const unsigned char *)s->value, s->size, s->type, buf);   /* by its type */
}

static void mguard__ledger_entry_text(mguard_ledger_diff_result *d, mguard_status *st, const mguard_ledger_diff_side *s)
{
    mguard__ledger_diff_puts(d, st, mguard_ledger_kind_str(s->kind));
    if (s->source) {
        mguard__ledger_diff_puts(d, st, ", source \"");
        mguard__ledger_diff_puts(d, st, s->source);
        mguard__ledger_diff_puts(d, st, "\"");
    }
    if (s->kind == MGUARD_LEDGER_CONTAINER && s->modified) mguard__ledger_diff_puts(d, st, ", modified");
}

/* "only in a: " / "only in b: " / "" for an item that is on one side. */
static const char *mguard__ledger_only(const mguard_ledger_diff_item *it)
{
    if (!it->b.present) return "only in a: ";
    if (!it->a.present) return "only in b: ";
    return "";
}

/* One line per item, e.g. "p.x: 1 -> 2" or "object q: only in b (new)". */
static void mguard__ledger_item_text(mguard__lcmp *c, const mguard_ledger_diff_item *it, mguard_status *st)
{
    mguard_ledger_diff_result *d = c->res;
    char o[MGUARD__LFMT], x[MGUARD__LFMT], num[32];
    const mguard_ledger_diff_side *one = it->a.present ? &it->a : &it->b;
    switch (it->what) {
    case MGUARD_LEDGER_DIFF_OBJECT_REMOVED:
    case MGUARD_LEDGER_DIFF_OBJECT_ADDED:
        mguard__ledger_label(c, it, o);
        mguard__ledger_diff_puts(d, st, "object ");
        mguard__ledger_diff_puts(d, st, o);
        mguard__ledger_diff_puts(d, st, it->a.present ? ": only in a (" : ": only in b (");
        mguard__ledger_entry_text(d, st, one);
        mguard__ledger_diff_puts(d, st, ")\n");
        break;
    case MGUARD_LEDGER_DIFF_OBJECT_CHANGED: {
        const char *sep = ": ";
        mguard__ledger_label(c, it, o);
        mguard__ledger_diff_puts(d, st, "object ");
        mguard__ledger_diff_puts(d, st, o);
        if (it->a.kind != it->b.kind) {
            mguard__ledger_diff_puts(d, st, sep);
            mguard__ledger_diff_puts(d, st, mguard_ledger_kind_str(it->a.kind));
            mguard__ledger_diff_puts(d, st, " -> ");
            mguard__ledger_diff_puts(d, st, mguard_ledger_kind_str(it->b.kind));
            sep = "; ";
        }
        if (it->a.source != it->b.source) {
            mguard__ledger_diff_puts(d, st, sep);
            mguard__ledger_diff_puts(d, st, "source ");
            mguard__ledger_diff_puts(d, st, it->a.source ? "\"" : "none");
            if (it->a.source) { mguard__ledger_diff_puts(d, st, it->a.source); mguard__ledger_diff_puts(d, st, "\""); }
            mguard__ledger_diff_puts(d, st, " -> ");
            mguard__ledger_diff_puts(d, st, it->b.source ? "\"" : "none");
            if (it->b.source) { mguard__ledger_diff_puts(d, st, it->b.source); mguard__ledger_diff_puts(d, st, "\""); }
            sep = "; ";
        }
        if (it->a.kind == it->b.kind && it->a.modified != it->b.modified) {
            mguard__ledger_diff_puts(d, st, sep);
            mguard__ledger_diff_puts(d, st, it->a.modified ? "modified yes -> no" : "modified no -> yes");
        }
        mguard__ledger_diff_puts(d, st, "\n");
        break;
    }
    case MGUARD_LEDGER_DIFF_ATTR_REMOVED:
    case MGUARD_LEDGER_DIFF_ATTR_ADDED:
    case MGUARD_LEDGER_DIFF_ATTR_CHANGED:
        mguard__ledger_label(c, it, o);
        mguard__ledger_diff_puts(d, st, o);
        mguard__ledger_diff_puts(d, st, ".");
        mguard__ledger_diff_puts(d, st, it->attr);
        mguard__ledger_diff_puts(d, st, ": ");
        mguard__ledger_diff_puts(d, st, mguard__ledger_only(it));
        mguard__ledger_value_text(c, it, it->a.present ? 0 : 1, x);
        mguard__ledger_diff_puts(d, st, x);
        if (it->a.present && it->b.present) {
            mguard__ledger_diff_puts(d, st, " -> ");
            mguard__ledger_value_text(c, it, 1, x);
            mguard__ledger_diff_puts(d, st, x);
        }
        mguard__ledger_diff_puts(d, st, "\n");
        break;
    case MGUARD_LEDGER_DIFF_RECORD_REMOVED:
    case MGUARD_LEDGER_DIFF_RECORD_ADDED:
    case MGUARD_LEDGER_DIFF_RECORD_CHANGED:
    case MGUARD_LEDGER_DIFF_HOOK_REMOVED:
    case MGUARD_LEDGER_DIFF_HOOK_ADDED:
    case MGUARD_LEDGER_DIFF_HOOK_CHANGED: {
        bool rec = it->what <= MGUARD_LEDGER_DIFF_RECORD_CHANGED;
        int side;
        snprintf(num, sizeof num, "%s %ld: ", rec ? "record" : "hook", it->index);
        mguard__ledger_diff_puts(d, st, num);
        mguard__ledger_diff_puts(d, st, mguard__ledger_only(it));
        for (side = 0; side < 2; side++) {
            const mguard_ledger_diff_side *s = side ? &it->b : &it->a;
            const mguard_ledger *S = side ? c->b : c->a;
            if (!s->present) continue;
            if (side && it->a.present) mguard__ledger_diff_puts(d, st, " -> ");
            if (!rec) {
                mguard__ledger_fmt(S, NULL, NULL, s->obj, mguard__ledger_item_serial(c, it, side ? 4 : 2), MGUARD__LF_OBJECT, o);
                mguard__ledger_diff_puts(d, st, o);
                mguard__ledger_diff_puts(d, st, ".");
            }
            mguard__ledger_diff_puts(d, st, s->name ? s->name : "(unnamed)");
            /* sized ledgers: payloads and hook functions are objects */
            mguard__ledger_fmt(S, NULL, NULL, s->value, mguard__ledger_item_serial(c, it, side ? 3 : 1),
                               S->desc.value_size ? MGUARD__LF_OBJECT : MGUARD__LF_VALUE, x);
            mguard__ledger_diff_puts(d, st, rec ? "(" : " ");
            mguard__ledger_diff_puts(d, st, x);
            if (rec) mguard__ledger_diff_puts(d, st, ")");
        }
        mguard__ledger_diff_puts(d, st, "\n");
        break;
    }
    }
}

static mguard_status mguard__ledger_diff(const mguard_ledger *a, const mguard_ledger *b, mguard_ledger_diff_result **out)
{
    const char *fn = "mguard_ledger_diff";
    mguard_ledger_diff_result *d;
    mguard__lcmp c;
    mguard_ctx *ctx;
    mguard_status st;
    if (out) *out = NULL;
    st = mguard__ledger_pair_ok(a, b, fn);
    if (st) return st;
    ctx = a->hd.ctx;
    /* a result made while the context dies would outlive it */
    if (!mguard__ctx_can_create(a->hd.ctx, fn)) return MGUARD_EINVAL;
    if (!out) { mguard__logf(a->hd.ctx, MGUARD_LOG_NULL_ARG, fn, "out"); return MGUARD_EINVAL; }
    d = NULL;
#ifdef MGUARD_DEBUG
    if (!mguard__dbg_h_reserve(a->hd.ctx))
#endif
        d = (mguard_ledger_diff_result *)mguard__alloc(a->hd.ctx, sizeof *d);
    if (!d) return mguard__ledger_oom(a, MGUARD_ENOMEM, fn);
    memset(d, 0, sizeof *d);
    mguard__handle_init(d, MGUARD__MAGIC_LDIFF, MGUARD__DBG_DIFF, a->hd.ctx);
    if (a != b && a->stamp != b->stamp) {
        uint32_t i;
        memset(&c, 0, sizeof c);
        c.fn = fn;
        c.res = d;
        mguard__ledger_walk_pair(&c, a, b);
        mguard__ledger_compare(&c);
        st = c.st;
        if (!st) mguard__ledger_diff_own_values(a, d);
        for (i = 0; i < d->n && !st; i++) mguard__ledger_item_text(&c, &d->items[i], &st);
        mguard__ledger_end_pair(&c);
    }
    if (st) {
        /* not through a: a hook may have destroyed it (end_pair freed it) */
        mguard__ledger_diff_free(d);
        if (st == MGUARD_ENOMEM) mguard__logf(ctx, MGUARD_LOG_NOMEM, fn);
        return st;
    }
    *out = d;
    return MGUARD_OK;
}

const mguard_ledger_diff_item *mguard_ledger_diff_items(const mguard_ledger_diff_result *d, size_t *count)
{
    size_t n = mguard__handle_ok(d, MGUARD__MAGIC_LDIFF, MGUARD__DBG_DIFF, "mguard_ledger_diff_items") ? d->n : 0;
    if (count) *count = n;
    return n ? d->items : NULL;
}

size_t mguard_ledger_diff_format(const mguard_ledger_diff_result *d, char *buf, size_t cap)
{
    size_t n = mguard__handle_ok(d, MGUARD__MAGIC_LDIFF, MGUARD__DBG_DIFF, "mguard_ledger_diff_format") ? d->len : 0;
    size_t k = n < cap ? n : cap - 1;
    if (!buf || !cap) return n;
    if (k) memcpy(buf, d->text, k);
    buf[k] = '\0';
    return n;
}

static void mguard__ledger_diff_free(mguard_ledger_diff_result *d)
{
    mguard_ctx *ctx;
    uint32_t i;
    if (!mguard__handle_ok(d, MGUARD__MAGIC_LDIFF, MGUARD__DBG_DIFF, "mguard_ledger_diff_free")) return;
    ctx = d->hd.ctx;
    for (i = 0; i < d->n; i++) {
        const mguard_ledger_diff_item *it = &d->items[i];
        mguard__str_release(ctx, it->attr);
        mguard__str_release(ctx, it->a.source);
        mguard__str_release(ctx, it->b.source);
        mguard__str_release(ctx, it->a.name);
        mguard__str_release(ctx, it->b.name);
    }
    mguard__free(ctx, d->items);
    mguard__free(ctx, d->serials);
    mguard__free(ctx, d->vbytes);
    mguard__free(ctx, d->text);
#ifdef MGUARD_DEBUG
    mguard__dbg_h_remove(ctx, d);
#endif
    d->hd.magic = MGUARD__DEAD;
    mguard__free(ctx, d);
}

/* ---- prune -------------------------------------------------------------- */

/* Every pointer prune reaches is looked into once: an entry present when prune began
   (positions < n0 do not move during a walk) is marked in mark[], any other pointer goes
   into the set seen (only with a refs hook: else there is nothing to ask). work: reached,
   not yet looked into; it and seen grow, so a refs hook may list any number of pointers. */
typedef struct mguard__lprune {
    mguard_ledger *L;
    uint64_t stamp;
    uint32_t n0, nwork, capwork, nseen, capseen;
    unsigned char *mark;
    const void **work;
    const void **seen;         /* capseen slots (a power of two), NULL: free */
    bool changed, oom;
} mguard__lprune;

/* Add x to the set of untracked pointers reached: true when it is new. */
static bool mguard__ledger_prune_seen(mguard__lprune *p, const void *x)
{
    uint32_t i, mask;
    if ((p->nseen + 1) * 2 > p->capseen) {
        uint32_t ncap = p->capseen ? p->capseen * 2 : 64, j;
        const void **ns = (const void **)mguard__alloc(p->L->hd.ctx, (size_t)ncap * sizeof *ns);
        if (!ns || ncap < p->capseen) { mguard__free(p->L->hd.ctx, (void *)ns); p->oom = true; return false; }
        memset((void *)ns, 0, (size_t)ncap * sizeof *ns);
        for (j = 0; j < p->capseen; j++) {
            if (!p->seen[j]) continue;
            for (i = mguard__hash_ptr(p->seen[j]) & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1)) {}
            ns[i] = p->seen[j];
        }
        mguard__free(p->L->hd.ctx, (void *)p->seen);
        p->seen = ns;
        p->capseen = ncap;
    }
    mask = p->capseen - 1;
    for (i = mguard__hash_ptr(x) & mask; p->seen[i]; i = (i + 1) & mask)
        if (p->seen[i] == x) return false;
    p->seen[i] = x;
    p->nseen++;
    return true;
}

/* x is reached: a tracked entry is live; x is looked into once, later. */
static void mguard__ledger_prune_visit(const void *obj, void *vctx)
{
    mguard__lprune *p = (mguard__lprune *)vctx;
    uint32_t e;
    if (!obj || p->changed || p->oom) return;
    e = mguard__ledger_ent_find(p->L, obj);
    if (e) {
        if (e > p->n0 || p->mark[e - 1]) return;
        p->mark[e - 1] = 1;
    } else if (!p->L->desc.refs || !mguard__ledger_prune_seen(p, obj)) {
        return;
    }
    if (mguard__reserve(p->L->hd.ctx, (void **)&p->work, &p->capwork, (size_t)p->nwork + 1, sizeof *p->work)) {
        p->oom = true;
        return;
    }
    p->work[p->nwork++] = obj;
}

/* The visit function handed to the refs hook (outside the lock). */
static void mguard__ledger_prune_visit_cb(const void *obj, void *vctx)
{
    mguard_ctx *ctx = ((mguard__lprune *)vctx)->L->hd.ctx;
    MGUARD__LK_IN(ctx);
    mguard__ledger_prune_visit(obj, vctx);
    MGUARD__LK_OUT(ctx);
}

/* Ask the refs hook what x refers to; stops for good once the ledger
   changed (the snapshot may then hold released values). */
static void mguard__ledger_prune_ask(mguard__lprune *p, const void *x)
{
    mguard_ledger *L = p->L;
    if (!L->desc.refs || p->changed || p->oom) return;
    MGUARD__L_CALLOUT(L->hd.ctx, x, NULL, L->desc.refs(x, mguard__ledger_prune_visit_cb, p, L->desc.user));
    if (L->stamp != p->stamp) p->changed = true;
}

static mguard_status mguard__ledger_prune(mguard_ledger *L, const void *const *roots, size_t nroots)
{
    const char *fn = "mguard_ledger_prune";
    mguard__lprune p;
    const void **vals, **hobj;
    uint32_t *off, i, k, nv, dropped = 0;
    unsigned char *block;
    size_t r, bytes;
    mguard_status st = mguard__ledger_can_change(L, fn);
    if (st) return st;
    if (!roots && nroots) { mguard__logf(L->hd.ctx, MGUARD_LOG_NULL_ARRAY, fn, "roots", "nroots", (unsigned long)nroots); return MGUARD_EINVAL; }
    /* Snapshot (no call-out yet): entries' pending values, then payloads, hook functions, hooked objects. */
    memset(&p, 0, sizeof p);
    p.L = L;
    p.n0 = L->nents;
    nv = L->live_writes + L->nrecs + L->nhooks;
    bytes = ((size_t)nv + L->nhooks) * sizeof(void *) + ((size_t)p.n0 + 1) * sizeof(uint32_t) + p.n0;
    block = (unsigned char *)mguard__alloc(L->hd.ctx, bytes);
    if (!block || mguard__reserve(L->hd.ctx, (void **)&p.work, &p.capwork, (size_t)p.n0 + 1, sizeof *p.work)) {
        mguard__free(L->hd.ctx, block);
        return mguard__ledger_oom(L, MGUARD_ENOMEM, fn);
    }
    vals = (const void **)(void *)block;
    hobj = vals + nv;
    off = (uint32_t *)(void *)(hobj + L->nhooks);
    p.mark = (unsigned char *)(off + p.n0 + 1);
    memset(p.mark, 0, p.n0);
    for (i = 0, k = 0; i < p.n0; i++) {
        uint32_t w;
        off[i] = k;
        if (!L->ents[i].obj) continue;
        for (w = L->ents[i].head; w; w = L->writes[w - 1].next)
            if (L->writes[w - 1].value) vals[k++] = L->writes[w - 1].value;
    }
    off[p.n0] = k;
    for (i = 0; i < L->nrecs; i++) vals[k++] = L->recs[i].payload;
    for (i = 0; i < L->nhooks; i++) {
        vals[k++] = L->hooks[i].fn;
        hobj[i] = L->hooks[i].obj;
    }
    nv = L->nhooks;
    p.stamp = L->stamp;
    mguard__ledger_begin_walk(L);
    /* Reached at first: roots, hooked objects, payloads, hook functions,
       EXISTING and CONTAINER entries; each reached pointer is then looked
       into (the refs hook, and a tracked object's pending values). */
    for (r = 0; r < nroots; r++) mguard__ledger_prune_visit(roots[r], &p);
    for (i = 0; i < nv; i++) mguard__ledger_prune_visit(hobj[i], &p);
    for (i = off[p.n0]; i < k; i++) mguard__ledger_prune_visit(vals[i], &p);
    for (i = 0; i < p.n0; i++)
        if (L->ents[i].obj && L->ents[i].kind != MGUARD_LEDGER_NEW) mguard__ledger_prune_visit(L->ents[i].obj, &p);
    while (p.nwork && !p.changed && !p.oom) {
        const void *x = p.work[--p.nwork];
        uint32_t e, j;
        mguard__ledger_prune_ask(&p, x);
        if (p.changed || p.oom || !(e = mguard__ledger_ent_find(L, x)) || e > p.n0) continue;
        for (j = off[e - 1]; j < off[e]; j++) mguard__ledger_prune_visit(vals[j], &p);
    }
    if (p.changed) {
        mguard__logf(L->hd.ctx, MGUARD_LOG_LEDGER_CHANGED_IN_HOOK, fn, "refs", "nothing pruned");
        st = MGUARD_EINVAL;
    } else if (p.oom) {
        st = mguard__ledger_oom(L, MGUARD_ENOMEM, fn);
    } else {
        for (i = 0; i < p.n0; i++) {
            if (L->ents[i].obj && L->ents[i].kind == MGUARD_LEDGER_NEW && !p.mark[i]) {
                mguard__ledger_drop_entry(L, i + 1);
                dropped++;
            }
        }
        if (dropped) mguard__ledger_touch(L);
    }
    mguard__free(L->hd.ctx, block);
    mguard__free(L->hd.ctx, (void *)p.work);
    mguard__free(L->hd.ctx, (void *)p.seen);
    mguard__ledger_end_walk(L);   /* the releases of what was dropped run here */
    return st;
}

/* ---- apply, clear, stats ------------------------------------------------ */

/* One pending write as apply found it; identity by serial, never address (see
   mguard__ledger_life). A sized value is copied (value points to bytes); field:
   where it goes when obj's field table names attr (no callback then). */
typedef struct mguard__lpending {
    const void *obj;
    const char *attr;
    void *value;
    const mguard_ledger_field *field;
    uint64_t obj_serial, value_serial;   /* 0: not an object of the context */
    size_t deleted;
    unsigned char bytes[MGUARD_LEDGER_MAX_VALUE];
} mguard__lpending;

/* Write a pending value into the real object's field (a deletion zeroes it). */
static void mguard__ledger_apply_field(const mguard_ledger *L, const mguard__lpending *pw)
{
    unsigned char *dst = (unsigned char *)mguard__unconst(pw->obj) + pw->field->offset;
    if (pw->deleted) memset(dst, 0, pw->field->size);
    else memcpy(dst, L->desc.value_size ? (const void *)pw->bytes : (const void *)&pw->value, pw->field->size);
}

/* apply's index of one object's fields by name: open addressing over
   (position + 1, field + 1), at most half full; another object's slot
   counts as empty, so it is filled once per object, never cleared. Each
   field and write costs one hash (shifted: mguard__hash_str's low bit is
   always set): apply is O(writes + fields), not O(writes x fields). */
typedef struct mguard__lfslot { uint32_t ent, field; } mguard__lfslot;

static void mguard__ledger_fix_fill(mguard__lfslot *t, size_t mask, const mguard__lent *en, uint32_t e)
{
    uint32_t j;
    size_t i;
    for (j = 0; j < en->nfields; j++) {
        const char *nm = en->fields[j].name;
        for (i = (mguard__hash_str(nm) >> 1) & mask; t[i].ent == e; i = (i + 1) & mask)
            if (strcmp(en->fields[t[i].field - 1].name, nm) == 0) break;
        if (t[i].ent == e) continue;   /* a repeated name: the first one counts, as in mguard__ledger_field */
        t[i].ent = e;
        t[i].field = j + 1;
    }
}

/* The field of entry e (filled last) named attr, NULL if none. */
static const mguard_ledger_field *mguard__ledger_fix_find(const mguard__lfslot *t, size_t mask, const mguard__lent *en,
                                                          uint32_t e, const char *attr)
{
    size_t i;
    if (!en->nfields) return NULL;
    for (i = (mguard__hash_str(attr) >> 1) & mask; t[i].ent == e; i = (i + 1) & mask)
        if (strcmp(en->fields[t[i].field - 1].name, attr) == 0) return &en->fields[t[i].field - 1];
    return NULL;
}

static mguard_status mguard__ledger_apply(mguard_ledger *L, mguard_ledger_apply_fn fn, void *user)
{
    const char *name = "mguard_ledger_apply";
    mguard__lpending *snap = NULL;
    mguard__lfslot *fix = NULL;
    uint32_t i, k = 0, unbound = 0, maxf = 0;
    size_t nfix = 0;
    uint64_t s0;
    mguard_status st = mguard__ledger_can_change(L, name);
    if (st) return st;
    for (i = 0; i < L->nents; i++)
        if (L->ents[i].obj && L->ents[i].nwrites && L->ents[i].nfields > maxf) maxf = L->ents[i].nfields;
    if (L->live_writes) {
        /* one block: the snapshot, then the field index */
        size_t bytes = (size_t)L->live_writes * sizeof *snap;
        for (nfix = maxf ? 4 : 0; nfix && nfix / 2 < maxf; nfix *= 2)
            if (!mguard__mul_fits(nfix, 2 * sizeof *fix)) return mguard__ledger_oom(L, MGUARD_ENOMEM, name);
        if (nfix * sizeof *fix > SIZE_MAX - bytes) return mguard__ledger_oom(L, MGUARD_ENOMEM, name);
        snap = (mguard__lpending *)mguard__alloc(L->hd.ctx, bytes + nfix * sizeof *fix);
        if (!snap) return mguard__ledger_oom(L, MGUARD_ENOMEM, name);
        if (nfix) {
            fix = (mguard__lfslot *)(void *)(snap + L->live_writes);
            memset(fix, 0, nfix * sizeof *fix);
        }
    }
    for (i = 0; i < L->nents; i++) {
        const mguard__lent *en = &L->ents[i];
        uint32_t w;
        if (!en->obj || !en->nwrites) continue;
        if (en->nfields) mguard__ledger_fix_fill(fix, nfix - 1, en, i + 1);
        for (w = en->head; w; w = L->writes[w - 1].next) {
            const mguard__lwrite *wr = &L->writes[w - 1];
            snap[k].obj = wr->obj;
            snap[k].attr = wr->attr;
            snap[k].field = mguard__ledger_fix_find(fix, nfix - 1, en, i + 1, wr->attr);
            memcpy(snap[k].bytes, wr->bytes, sizeof wr->bytes);
            snap[k].value = L->desc.value_size ? (wr->deleted ? NULL : snap[k].bytes) : wr->value;
            snap[k].obj_serial = mguard__ledger_serial(L, snap[k].obj);
            snap[k].value_serial = mguard__ledger_serial(L, wr->value);
            snap[k].deleted = wr->deleted;
            unbound += !snap[k].field;
            k++;
        }
    }
    if (!fn && unbound) {
        mguard__free(L->hd.ctx, snap);
        mguard__logf(L->hd.ctx, MGUARD_LOG_LEDGER_UNBOUND_WRITES, name, unbound);
        return MGUARD_EINVAL;
    }
    /* the snapshot's own references: a callback may drop the writes */
    for (i = 0; i < k; i++) mguard__str_take(snap[i].attr);
    s0 = L->stamp;
    mguard__ledger_begin_walk(L);
    for (i = 0; i < k; i++) {
        /* the lines the last write queued (a cache's drops) go out first:
           a logger may destroy this write's object or value */
        MGUARD__FLUSH(L->hd.ctx);
        /* releases wait for the walk, so a value can only have gone away
           by being destroyed; an untracked object means it was dropped */
        if (L->stamp != s0 && (!mguard__ledger_ent_find(L, snap[i].obj) || !mguard__ledger_same(L, snap[i].obj, snap[i].obj_serial) ||
                               !mguard__ledger_same(L, L->desc.value_size ? NULL : snap[i].value, snap[i].value_serial)))
            continue;
        if (snap[i].field) {
            mguard__ledger_apply_field(L, &snap[i]);
            mguard__on_mutation_at(L->hd.ctx, snap[i].obj, snap[i].attr, NULL, 0);   /* as the program's own write would */
        } else MGUARD__L_CALLOUT(L->hd.ctx, snap[i].obj, snap[i].value, fn(mguard__unconst(snap[i].obj), snap[i].attr, snap[i].value, snap[i].deleted != 0, user));
    }
    for (i = 0; i < k; i++) mguard__str_release(L->hd.ctx, snap[i].attr);
    mguard__free(L->hd.ctx, snap);
    mguard__ledger_end_walk(L);
    return MGUARD_OK;
}

static void mguard__ledger_clear(mguard_ledger *L)
{
    if (mguard__ledger_can_change(L, "mguard_ledger_clear")) return;
    mguard__ledger_empty(L);
    mguard__ledger_flush(L);
}

static mguard_status mguard__ledger_get_stats(const mguard_ledger *L, mguard_ledger_stats *out)
{
    mguard__llayout lay;
    if (!mguard__ledger_ok(L)) return MGUARD_EINVAL;
    if (!out) { mguard__logf(L->hd.ctx, MGUARD_LOG_NULL_ARG, "mguard_ledger_get_stats", "out"); return MGUARD_EINVAL; }
    mguard__ledger_layout(L, &lay);
    out->entries = L->live_ents;
    out->modified = L->nmod;
    out->writes = L->live_writes;
    out->records = L->nrecs;
    out->hooks = L->nhooks;
    out->storage_bytes = lay.total;
    return MGUARD_OK;
}

const char *mguard_ledger_kind_str(mguard_ledger_kind kind)
{
    switch (kind) {
    case MGUARD_LEDGER_EXISTING: return "existing";
    case MGUARD_LEDGER_NEW: return "new";
    case MGUARD_LEDGER_CONTAINER: return "container";
    }
    return "unknown";
}

/* ---- consistency check -------------------------------------------------- */

static mguard_status mguard__ledger_check_index(const mguard_ledger *L, const mguard__index *ix, size_t len, const char *what)
{
    size_t i, used = 0;
    if (!ix->slots) {
        MGUARD__CHECK(L->hd.ctx, ix->used == 0, "ledger: %s index: %lu keys without slots", what, (unsigned long)ix->used);
        return MGUARD_OK;
    }
    MGUARD__CHECK(L->hd.ctx, ix->used * 2 <= ix->mask + 1, "ledger: %s index over half full", what);
    for (i = 0; i <= ix->mask; i++) {
        if (!ix->slots[i].idx) continue;
        used++;
        MGUARD__CHECK(L->hd.ctx, ix->slots[i].idx <= len, "ledger: %s index: slot %lu points past the array", what, (unsigned long)i);
    }
    MGUARD__CHECK(L->hd.ctx, used == ix->used, "ledger: %s index counts %lu, holds %lu", what, (unsigned long)ix->used, (unsigned long)used);
    return MGUARD_OK;
}

/* Add one expected holder of p. */
static mguard_status mguard__ledger_check_hold(const mguard_ledger *L, uint32_t *cnt, const void *p, const char *what)
{
    uint32_t r;
    if (!p) return MGUARD_OK;
    r = mguard__ledger_ref_find(L, p);
    MGUARD__CHECK(L->hd.ctx, r, "ledger: %s %p is not held", what, p);
    cnt[r - 1]++;
    return MGUARD_OK;
}

static mguard_status mguard__ledger_check_refs(const mguard_ledger *L, uint32_t *cnt)
{
    const mguard_ctx *ctx = L->hd.ctx;
    uint32_t i, w, n;
    for (i = 0; i < L->nents; i++)
        if (L->ents[i].obj && mguard__ledger_check_hold(L, cnt, L->ents[i].obj, "tracked object")) return MGUARD_EINVAL;
    for (w = 0; w < L->nwpool; w++)
        if (L->writes[w].obj && mguard__ledger_check_hold(L, cnt, L->writes[w].value, "value")) return MGUARD_EINVAL;
    for (i = 0; i < L->nrecs; i++) {
        MGUARD__CHECK(L->hd.ctx, (i == 0 || L->recs[i].seq > L->recs[i - 1].seq) && L->recs[i].seq <= L->root->seq, "ledger: record %u out of order", i);
        if (mguard__ledger_check_hold(L, cnt, L->recs[i].payload, "payload")) return MGUARD_EINVAL;
    }
    for (i = 0; i < L->nhooks; i++) {
        MGUARD__CHECK(L->hd.ctx, (i == 0 || L->hooks[i].seq > L->hooks[i - 1].seq) && L->hooks[i].seq <= L->root->seq, "ledger: hook %u out of order", i);
        if (mguard__ledger_check_hold(L, cnt, L->hooks[i].obj, "hooked object") ||
            mguard__ledger_check_hold(L, cnt, L->hooks[i].fn, "hook")) return MGUARD_EINVAL;
        for (n = 0; n < i; n++) MGUARD__CHECK(L->hd.ctx, L->hooks[n].id != L->hooks[i].id, "ledger: hook id %d twice", L->hooks[i].id);
    }
    for (i = 0; i < L->nrpool; i++) {
        const mguard__lref *s = &L->refs[i];
        if (!s->ptr) continue;
        MGUARD__CHECK(L->hd.ctx, cnt[i] == s->count, "ledger: %p held %u times, counted %u", s->ptr, cnt[i], s->count);
        MGUARD__CHECK(L->hd.ctx, s->count || (s->flags & MGUARD__LR_RELQ), "ledger: %p unheld but not queued for release", s->ptr);
        MGUARD__CHECK(L->hd.ctx, !s->count || (s->flags & (MGUARD__LR_HELD | MGUARD__LR_RQ)), "ledger: %p held but neither retained nor queued", s->ptr);
        MGUARD__CHECK(L->hd.ctx, !s->count || !(s->flags & MGUARD__LR_WATCHED) || mguard__weak_contains(mguard__ledger_root_of(ctx)->watch, s->ptr) ||
                       mguard__is_dying(ctx, s->ptr), "ledger: %p is not watched", s->ptr);
    }
    return MGUARD_OK;
}

/* Add one expected naming of string s (NULL: none). */
static mguard_status mguard__ledger_check_str(const mguard_ledger *L, uint32_t *cnt, const char *s)
{
    uint32_t i;
    if (!s) return MGUARD_OK;
    i = mguard__ledger_str_find(L, s);
    MGUARD__CHECK(L->hd.ctx, i, "ledger: string \"%s\" is not held", s);
    cnt[i - 1]++;
    return MGUARD_OK;
}

/* The string slots: each found by its string, its count the entries and writes naming it. */
static mguard_status mguard__ledger_check_strs(const mguard_ledger *L, uint32_t *cnt)
{
    uint32_t i, n;
    for (i = 0; i < L->nents; i++)
        if (L->ents[i].obj && mguard__ledger_check_str(L, cnt, L->ents[i].source)) return MGUARD_EINVAL;
    for (i = 0; i < L->nwpool; i++)
        if (L->writes[i].obj && mguard__ledger_check_str(L, cnt, L->writes[i].attr)) return MGUARD_EINVAL;
    for (i = 0, n = 0; i < L->nspool; i++) {
        const mguard__lstr *ls = &L->strs[i];
        if (!ls->s) continue;
        n++;
        MGUARD__CHECK(L->hd.ctx, mguard__ix_find(&L->s_ix, (const unsigned char *)L->strs, sizeof(mguard__lstr), ls->s, MGUARD__STR_HDR(ls->s)->hash) == i + 1,
                      "ledger: string slot %u (\"%s\") not found by its string", i, ls->s);
        MGUARD__CHECK(L->hd.ctx, ls->count && cnt[i] == ls->count, "ledger: string \"%s\" named %u times, counted %u", ls->s, cnt[i], ls->count);
    }
    MGUARD__CHECK(L->hd.ctx, n == L->live_strs, "ledger: %u strings, %u recorded", n, L->live_strs);
    for (i = L->sfree, n = 0; i; i = L->strs[i - 1].next) {
        MGUARD__CHECK(L->hd.ctx, i <= L->nspool && !L->strs[i - 1].s, "ledger: string free list reaches a live slot");
        MGUARD__CHECK(L->hd.ctx, ++n <= L->nspool, "ledger: string free list has a cycle");
    }
    MGUARD__CHECK(L->hd.ctx, n == L->nspool - L->live_strs, "ledger: string pool: %u free of %u", n, L->nspool - L->live_strs);
    return MGUARD_OK;
}

/* A queue: flagged slots, in range, no cycle, the tail last. */
static mguard_status mguard__ledger_check_queue(const mguard_ledger *L, bool rq)
{
    uint32_t r = rq ? L->rq_head : L->relq_head, last = 0, n = 0, flagged = 0, i;
    uint32_t flag = rq ? MGUARD__LR_RQ : MGUARD__LR_RELQ;
    for (; r; r = rq ? L->refs[r - 1].rq_next : L->refs[r - 1].relq_next) {
        MGUARD__CHECK(L->hd.ctx, r <= L->nrpool && L->refs[r - 1].ptr && (L->refs[r - 1].flags & flag), "ledger: queue %s: bad slot %u", rq ? "retain" : "release", r);
        MGUARD__CHECK(L->hd.ctx, ++n <= L->nrpool, "ledger: queue %s has a cycle", rq ? "retain" : "release");
        last = r;
    }
    MGUARD__CHECK(L->hd.ctx, last == (rq ? L->rq_tail : L->relq_tail), "ledger: queue %s: wrong tail", rq ? "retain" : "release");
    for (i = 0; i < L->nrpool; i++) flagged += L->refs[i].ptr && (L->refs[i].flags & flag);
    MGUARD__CHECK(L->hd.ctx, flagged == n, "ledger: queue %s: %u flagged, %u queued", rq ? "retain" : "release", flagged, n);
    return MGUARD_OK;
}

static mguard_status mguard__ledger_check(const mguard_ledger *L)
{
    uint32_t i, w, n, nmod = 0, sumw = 0;
    uint64_t last = 0;
    uint32_t *cnt;
    mguard_status st;
    if (!mguard__ledger_ok(L)) return MGUARD_EINVAL;
    MGUARD__CHECK(L->hd.ctx, L->nents <= L->capents && L->live_ents <= L->nents, "ledger: entry counts out of range");
    MGUARD__CHECK(L->hd.ctx, L->nwpool <= L->capwrites && L->live_writes <= L->nwpool, "ledger: write counts out of range");
    MGUARD__CHECK(L->hd.ctx, L->nrpool <= L->caprefs && L->live_refs <= L->nrpool, "ledger: ref counts out of range");
    MGUARD__CHECK(L->hd.ctx, L->nrecs <= L->caprecs && L->nhooks <= L->caphooks, "ledger: record or hook counts out of range");
    MGUARD__CHECK(L->hd.ctx, L->nspool <= L->capstrs && L->live_strs <= L->nspool, "ledger: string counts out of range");
    MGUARD__CHECK(L->hd.ctx, L->walks >= 0 && L->frames >= L->walks, "ledger: walk counters out of range");
    if (mguard__ledger_check_index(L, &L->ent_ix, L->nents, "entry") || mguard__ledger_check_index(L, &L->w_ix, L->nwpool, "write") ||
        mguard__ledger_check_index(L, &L->ref_ix, L->nrpool, "ref") || mguard__ledger_check_index(L, &L->s_ix, L->nspool, "string"))
        return MGUARD_EINVAL;
    MGUARD__CHECK(L->hd.ctx, L->live_ents == L->ent_ix.used, "ledger: %u entries, index holds %lu", L->live_ents, (unsigned long)L->ent_ix.used);
    MGUARD__CHECK(L->hd.ctx, L->live_writes == L->w_ix.used, "ledger: %u writes, index holds %lu", L->live_writes, (unsigned long)L->w_ix.used);
    MGUARD__CHECK(L->hd.ctx, L->live_refs == L->ref_ix.used, "ledger: %u refs, index holds %lu", L->live_refs, (unsigned long)L->ref_ix.used);
    for (i = 0, n = 0; i < L->nents; i++) {
        const mguard__lent *en = &L->ents[i];
        uint32_t steps = 0, prev = 0;
        uint64_t wlast = 0;
        MGUARD__CHECK(L->hd.ctx, i == 0 || en->seq > last, "ledger: entries out of order at %u", i);
        MGUARD__CHECK(L->hd.ctx, en->seq <= L->root->seq, "ledger: entry %u: seq ahead", i);
        last = en->seq;
        if (!en->obj) {
            MGUARD__CHECK(L->hd.ctx, !en->head && !en->nwrites, "ledger: removed entry %u keeps writes", i);
            continue;
        }
        n++;
        MGUARD__CHECK(L->hd.ctx, mguard__ledger_ent_find(L, en->obj) == i + 1, "ledger: entry %u (%p) not found by its object", i, en->obj);
        MGUARD__CHECK(L->hd.ctx, en->kind >= MGUARD_LEDGER_EXISTING && en->kind <= MGUARD_LEDGER_CONTAINER, "ledger: entry %u: bad kind", i);
        MGUARD__CHECK(L->hd.ctx, en->kind != MGUARD_LEDGER_CONTAINER || en->nwrites == 0, "ledger: container entry %u has writes", i);
        MGUARD__CHECK(L->hd.ctx, en->kind == MGUARD_LEDGER_CONTAINER || !(en->flags & MGUARD__LE_MARKED), "ledger: entry %u: marked but not a container", i);
        nmod += mguard__ledger_modified(en);
        for (w = en->head; w; w = L->writes[w - 1].next) {
            const mguard__lwrite *wr;
            MGUARD__CHECK(L->hd.ctx, w <= L->nwpool, "ledger: entry %u: write %u out of range", i, w);
            wr = &L->writes[w - 1];
            MGUARD__CHECK(L->hd.ctx, wr->obj == en->obj, "ledger: entry %u: write %u belongs to %p", i, w, wr->obj);
            MGUARD__CHECK(L->hd.ctx, steps == 0 || wr->seq > wlast, "ledger: entry %u: writes out of order", i);
            MGUARD__CHECK(L->hd.ctx, wr->attr && mguard__ledger_w_find(L, wr->obj, wr->attr) == w, "ledger: entry %u: write %u not found by its key", i, w);
            MGUARD__CHECK(L->hd.ctx, !wr->deleted || !wr->value, "ledger: entry %u: deletion with a value", i);
            MGUARD__CHECK(L->hd.ctx, !L->desc.value_size || !wr->value, "ledger: entry %u: a sized value holds a pointer", i);
            MGUARD__CHECK(L->hd.ctx, mguard__ledger_shape_ok(L, en, wr), "ledger: entry %u: write %u is not of its attribute's size and type", i, w);
            MGUARD__CHECK(L->hd.ctx, ++steps <= en->nwrites, "ledger: entry %u: more writes than counted", i);
            wlast = wr->seq;
            prev = w;
        }
        MGUARD__CHECK(L->hd.ctx, steps == en->nwrites && en->tail == prev, "ledger: entry %u: write list counts %u of %u", i, steps, en->nwrites);
        sumw += en->nwrites;
    }
    MGUARD__CHECK(L->hd.ctx, n == L->live_ents, "ledger: %u live entries counted, %u recorded", n, L->live_ents);
    MGUARD__CHECK(L->hd.ctx, nmod == L->nmod, "ledger: %u modified counted, %u recorded", nmod, L->nmod);
    MGUARD__CHECK(L->hd.ctx, sumw == L->live_writes, "ledger: %u writes in lists, %u recorded", sumw, L->live_writes);
    for (w = L->wfree, n = 0; w; w = L->writes[w - 1].next) {
        MGUARD__CHECK(L->hd.ctx, w <= L->nwpool && !L->writes[w - 1].obj, "ledger: write free list reaches a live slot");
        MGUARD__CHECK(L->hd.ctx, ++n <= L->nwpool, "ledger: write free list has a cycle");
    }
    MGUARD__CHECK(L->hd.ctx, n == L->nwpool - L->live_writes, "ledger: write pool: %u free of %u", n, L->nwpool - L->live_writes);
    for (w = L->rfree, n = 0; w; w = L->refs[w - 1].rq_next) {
        MGUARD__CHECK(L->hd.ctx, w <= L->nrpool && !L->refs[w - 1].ptr, "ledger: ref free list reaches a live slot");
        MGUARD__CHECK(L->hd.ctx, ++n <= L->nrpool, "ledger: ref free list has a cycle");
    }
    MGUARD__CHECK(L->hd.ctx, n == L->nrpool - L->live_refs, "ledger: ref pool: %u free of %u", n, L->nrpool - L->live_refs);
    for (i = 0; i < L->nrpool; i++)
        if (L->refs[i].ptr) MGUARD__CHECK(L->hd.ctx, mguard__ledger_ref_find(L, L->refs[i].ptr) == i + 1, "ledger: ref %u not found by its pointer", i);
    if (mguard__ledger_check_queue(L, true) || mguard__ledger_check_queue(L, false)) return MGUARD_EINVAL;
    if (!L->nrpool && !L->nspool) return MGUARD_OK;
    cnt = (uint32_t *)mguard__alloc(L->hd.ctx, ((size_t)L->nrpool + L->nspool) * sizeof *cnt);
    if (!cnt) { mguard__logf(L->hd.ctx, MGUARD_LOG_CHECK_SKIPPED); return MGUARD_OK; }
    memset(cnt, 0, ((size_t)L->nrpool + L->nspool) * sizeof *cnt);
    st = mguard__ledger_check_refs(L, cnt);
    if (!st) st = mguard__ledger_check_strs(L, cnt + L->nrpool);
    mguard__free(L->hd.ctx, cnt);
    return st;
}

/* mguard_ctx_check's part: the root and every ledger. */
/* One hold the ledgers count on s: s is interned and counts it. */
static bool mguard__ledger_count_hold(mguard_ctx *ctx, uint32_t *cnt, const char *s)
{
    uint32_t pos;
    if (!s) return true;
    pos = MGUARD__STR_HDR(s)->pos;
    if (pos >= ctx->nstrs || ctx->strs[pos] != s) {
        mguard__check_failed(ctx, "ledger: string %p is not interned", (const void *)s);
        return false;
    }
    cnt[pos]++;
    return true;
}

/* Each interned string has at least as many holders as the ledgers' holds
   on it (string slots, tags, hook names): a hold not taken shows here. */
static mguard_status mguard__ledger_check_str_holds(const struct mguard__lroot *root)
{
    mguard_ctx *ctx = root->ctx;
    const mguard_ledger *L;
    uint32_t *cnt, i;
    bool ok = true;
    if (!ctx->nstrs) return MGUARD_OK;
    cnt = (uint32_t *)mguard__alloc(ctx, (size_t)ctx->nstrs * sizeof *cnt);
    if (!cnt) { mguard__logf(ctx, MGUARD_LOG_CHECK_SKIPPED); return MGUARD_OK; }
    memset(cnt, 0, (size_t)ctx->nstrs * sizeof *cnt);
    for (L = root->head; L && ok; L = L->next) {
        for (i = 0; i < L->nspool && ok; i++) ok = mguard__ledger_count_hold(ctx, cnt, L->strs[i].s);
        for (i = 0; i < L->nrecs && ok; i++) ok = mguard__ledger_count_hold(ctx, cnt, L->recs[i].tag);
        for (i = 0; i < L->nhooks && ok; i++) ok = mguard__ledger_count_hold(ctx, cnt, L->hooks[i].name);
    }
    for (i = 0; i < ctx->nstrs && ok; i++) {
        const mguard__str *h = MGUARD__STR_HDR(ctx->strs[i]);
        if (h->refs != MGUARD__STR_STICKY && h->refs < cnt[i]) {
            mguard__check_failed(ctx, "ledger: string \"%s\": %u holders, the ledgers hold it %u times", ctx->strs[i], h->refs, cnt[i]);
            ok = false;
        }
    }
    mguard__free(ctx, cnt);
    return ok ? MGUARD_OK : MGUARD_EINVAL;
}

static mguard_status mguard__ledger_root_check_part(mguard__part *p)
{
    const struct mguard__lroot *root = (const struct mguard__lroot *)(void *)p;
    mguard_ctx *ctx = root->ctx;
    const mguard_ledger *L;
    uint32_t n = 0;
    if (!mguard__weak_ok(root->watch)) { mguard__logf(ctx, MGUARD_LOG_CHECK_FAILED, "the ledgers' weak table is gone"); return MGUARD_EINVAL; }
    for (L = root->head; L; L = L->next) {
        if (!mguard__ledger_ok(L) || L->hd.ctx != ctx || (L->next && L->next->prev != L)) {
            mguard__check_failed(ctx, "ledger list broken at %p", (const void *)L);
            return MGUARD_EINVAL;
        }
        if (mguard__ledger_check(L)) return MGUARD_EINVAL;
        n++;
    }
    if (n != root->nledgers) {
        mguard__check_failed(ctx, "%u ledgers listed, %u counted", n, root->nledgers);
        return MGUARD_EINVAL;
    }
    return mguard__ledger_check_str_holds(root);
}
#endif /* MGUARD_NO_LEDGER */

#ifndef MGUARD_NO_CACHE
/* ======================================================================= */
/* >>cache: 10. guarded caches */
/* ======================================================================= */

/* A cache keeps its entries in the context's index (mguard__kx) under its own id
   (MGUARD__TID_CACHE | cid). An entry is a LOOKUP slot on its first key's probe (the
   value when it fits 8 bytes, else its block's address; and the entry's position); each
   further key and added dependency is a DEP slot on that object's probe (its interned
   attribute as the value), or past 8 of them an element of the object's hub (below).
   So an event on obj finds every entry depending on obj on obj's own probe and hub,
   as a death finds obj's table entries, and a hit reads one slot. A
   position indexes the records, the store orders (32 bits, renumbered before they wrap)
   and, bounded, the LRU links and costs; log_reasons or dropped, a drop's reason until
   phase 2 (lw). A reason's obj_name comes in phase 2 too (mguard__cache_name). Free positions: the last freed first. A remembered drop (the ring,
   mguard_cache_last_reason) turns its keys' slots into RING slots (no allocation); they
   keep the keys known until their death, which forgets the reason: a new object at that
   address never finds it. A compute in progress holds its keys and declared
   dependencies in its job (the root's jobs); an event spoils those it reaches. A record is
   FREE (on the free list), LIVE (its lookup slot names it) or DROPPED (out of the
   index, its value in x, on an event's drop list until phase 2 destroys the value).
   Invariants (mguard__cache_check): live + nfree + npend == nrec; a LIVE record's
   lookup slot names it and is found by its keys, each further key and dependency has
   its DEP slot; every cache slot names a live cache and (LOOKUP, DEP) a LIVE record;
   nslots counts c's slots; a bounded cache's LRU list holds every LIVE entry,
   total_cost with cost_carry their costs. */

/* A cache slot: MGUARD__TID_CACHE | its cache's id; pos: LOOKUP (no flag)
   (nkeys - 1) << 28 | position; DEP flag | position; RING flag | slot. */
#define MGUARD__TID_CACHE MGUARD__TID_PART
#define MGUARD__CS_DEP 0x80000000u
#define MGUARD__CS_RING 0x40000000u
#define MGUARD__CS_POS 0x0fffffffu
#define MGUARD__CS_MAXPOS 0x0fffffffu       /* positions per cache */
#define MGUARD__MAGIC_CACHE    0x6d676364u  /* "mgcd"; flag bits clear */
#define MGUARD__MAGIC_JOB      0x6d676a62u  /* "mgjb" */

enum { MGUARD__CR_FREE = 0, MGUARD__CR_LIVE = 1, MGUARD__CR_DROPPED = 2, MGUARD__CR_MARKED = 3 };
typedef struct mguard__crec {
    uint32_t slot;        /* LIVE, MARKED: its lookup slot; DROPPED: the next drop's position + 1,
                             or 0 (its cache: seqs); FREE: the next free position + 1, or 0 */
    uint32_t meta;        /* state (2 bits), nkeys - 1 (2 bits), added dependencies (the rest) */
    union {
        const void *dep;  /* one key, one added dependency: its object */
        const void **more;/* else (MGUARD__CR_MORE): keys (over one), then dependencies */
        void *block;      /* DROPPED, value over 8 bytes: its block */
        uint64_t u;       /* DROPPED, value of 8 bytes or less: the value */
    } x;
} mguard__crec;
#define MGUARD__CR_STATE(r) ((r)->meta & 3u)
#define MGUARD__CR_NK(r) ((((r)->meta >> 2) & 3u) + 1u)
#define MGUARD__CR_ND(r) ((r)->meta >> 4)
#define MGUARD__CR_MORE(r) (MGUARD__CR_NK(r) > 1 || MGUARD__CR_ND(r) > 1)
#define MGUARD__CR_KOFS(r) (MGUARD__CR_NK(r) > 1 ? MGUARD__CR_NK(r) : 0u)
#define MGUARD__CR_DEP(r, i) (MGUARD__CR_MORE(r) ? (r)->x.more[MGUARD__CR_KOFS(r) + (i)] : (r)->x.dep)

/* A bounded cache's per-position LRU links (position + 1) and cost. */
typedef struct mguard__clru { uint32_t newer, older; size_t cost; } mguard__clru;

struct mguard_cache {
    uint32_t magic;
    uint32_t cid;                      /* its id: slots say MGUARD__TID_CACHE | cid */
    uint64_t order;                    /* the context's count of caches made when it was made */
    mguard_ctx *ctx;
    struct mguard_cache *prev, *next;  /* ctx's cache list */
    size_t value_size, capacity, max_cost, total_cost;
    size_t cost_carry;                 /* total_cost's wraps (the sum is kept exact) */
    mguard_value_dtor dtor;
    void *user;
    const char *name;                  /* interned */
    bool log_reasons;
    bool keepwhy;                      /* log_reasons or dropped: lw is kept */
    mguard_cache_dropped_fn dropped;
    bool unbounded;                    /* no capacity, no max_cost: no LRU (the fast get) */
    bool inslot;                       /* values of 8 bytes or less: in the lookup slot */
    mguard__crec *recs;                /* 16 bytes per position */
    uint32_t nrec, caprec, live, npend;  /* npend: DROPPED, waiting for phase 2 */
    uint32_t freehead, nfree;          /* FREE records, linked (the last freed first) */
    uint32_t *seqs;                    /* LIVE: store order less sbase; DROPPED: the next
                                          drop's cid; MARKED: the next marked position + 1 */
    uint32_t capseq;
    uint64_t sbase;                    /* store orders are relative to it */
    bool rebased;
    mguard__drainf *drains;            /* its drains in progress (C stack) */
    uint32_t mhead, nmarked;           /* an event's phase 1: its marked positions */
    struct mguard_cache *mnext;        /* the next cache with marked positions */
    mguard__clru *lru;                 /* bounded: per position (caplru >= caprec) */
    uint32_t caplru, caplw;
    uint32_t newest, oldest;           /* the LRU list's ends, position + 1 */
    mguard_cache_reason *lw;           /* keepwhy: a DROPPED position's reason (caplw) */
    size_t nslots;                     /* its slots in the context's index */
    size_t nitems;                     /* its slots in hubs */
    uint64_t next_seq;
    mguard_cache_stats stats;
    mguard_cache_reason ring[MGUARD_CACHE_REASONS];
    bool ringlive[MGUARD_CACHE_REASONS];  /* false: a key died (it answers no more) */
    uint64_t ringev[MGUARD_CACHE_REASONS];  /* the event that wrote it, its name to come (the root's cev), or 0 */
    size_t ringk[MGUARD_CACHE_REASONS];     /* the lookup slot its drop made a RING slot (a hint, checked; a one-key
                                               reason's forget uses it), or SIZE_MAX */
    uint32_t nring, ringpos;           /* remembered; next slot to write */
    void *parked;                      /* a stale value handed out (parkv, a block), or NULL */
    uint64_t parkseq;
    union { uint64_t u; unsigned char b[8]; } parkv;
    int busy;                          /* computes, clears and pending drops on c */
    int destroying;
};

/* A compute in progress (on get_or_compute's stack, on the root's jobs): its
   keys and declared dependencies (one reference to each attribute). Past
   MGUARD__JOB_SCAN of them a hash set (at most half full) answers
   "declared already?"; without memory for it the job scans, never fails. */
#define MGUARD__JOB_SCAN 8
typedef struct mguard__cpair {
    const void *obj;                   /* NULL: an empty slot */
    const char *attr;                  /* interned; NULL: the whole object */
} mguard__cpair;
struct mguard_cache_job {
    uint32_t magic;                    /* MGUARD__MAGIC_JOB while compute runs */
    int stale;                         /* a dependency changed: not stored */
    mguard_cache *c;
    const void *keys[MGUARD_CACHE_MAX_KEYS];
    uint32_t nkeys, ndeps, capdeps;
    mguard__cpair *deps;
    mguard__cpair *set;                /* NULL: scan deps */
    uint32_t setcap;
    int noset;
    uint32_t held;                     /* room held in the index for its reason's keys (ctx->kx_held) */
    size_t cost;
    struct mguard_cache_job *next;     /* the root's jobs */
};

/* The caches' root: the part that hears events (ctx->evpart), made with the
   context's first cache, destroyed (each cache first) after the other parts. */
typedef struct mguard__croot {
    mguard__evpart ep;                 /* first */
    mguard_ctx *ctx;
    mguard_cache *caches;              /* every live cache, doubly linked */
    mguard_cache **ctabs;              /* cache id -> cache (as ctx->tabs) */
    uint32_t nctabs, capctabs, free_cid;
    uint64_t made;                     /* caches made: their order */
    mguard_cache_job *jobs;            /* computes in progress (C stack; ctx->hear_all counts them) */
    uint64_t events, cev;              /* events that named reasons; the one in phase 1, or 0 */
} mguard__croot;
#define MGUARD__CROOT(ctx) ((mguard__croot *)(void *)(ctx)->evpart)

/* Each candidate slot k of obj's probe, in a walk w (mguard__kwalk). */
static void mguard__kwalk_key(const mguard__kx *kx, mguard__kwalk *w, const void *obj)
{
    uint64_t h = mguard__hash64(obj);
    mguard__kwalk_start(kx, w, h, MGUARD__KX_TAG(h));
}
#define MGUARD__KWALK_EACH(w, kx, obj, k) \
    for (mguard__kwalk_key((kx), &(w), (obj)), (k) = mguard__kwalk_next((kx), &(w)); (k) != SIZE_MAX; (k) = mguard__kwalk_next((kx), &(w)))

static void mguard__cache_destroy_now(mguard_cache *c);

/* MGUARD_DEBUG refuses a destroyed cache (or its context's) unread. */
static bool mguard__cache_ok(const mguard_cache *c, const char *fn)
{
    return mguard__handle_ok(c, MGUARD__MAGIC_CACHE, MGUARD__DBG_CACHE, fn);
}

static bool mguard__cache_keys_ok(const mguard_cache *c, const void *const *keys, size_t n, const char *fn)
{
    size_t i;
    if (!keys || n == 0 || n > MGUARD_CACHE_MAX_KEYS) {
        mguard__logf(c->ctx, !keys ? MGUARD_LOG_NULL_ARG : MGUARD_LOG_CACHE_BAD_NKEYS, fn, "keys");
        return false;
    }
    for (i = 0; i < n; i++) {
        if (!keys[i]) { mguard__logf(c->ctx, MGUARD_LOG_CACHE_NULL_KEY, fn, (unsigned long)i); return false; }
    }
    return true;
}

#define MGUARD__CTID(c) (MGUARD__TID_CACHE | (c)->cid)
/* A position's record's array of keys and dependencies: its capacity. */
static uint32_t mguard__cap2(uint32_t n)
{
    uint32_t cap = 2;
    while (cap < n) cap *= 2;
    return cap;
}

/* The record's keys (one: its lookup slot's key). */
static const void *const *mguard__crec_keys(const mguard_cache *c, const mguard__crec *r) { return MGUARD__CR_NK(r) > 1 ? r->x.more : &c->ctx->kx.slots[r->slot].key; }

/* ---- hubs: many entries on one object ----
   Every slot of c on an object lies on the object's probe, so an object that many
   entries reach (a further key, a dependency, the first key of many tuples) would
   make each store, lookup and drop there walk them all: quadratic in the entries.
   Past MGUARD__HUB_AFTER such slots on its probe, the object's next ones go into its
   hub: one HUB slot of c on its probe, whose value is an array of slots, open-addressed
   (linear probing, at most 3/4 full, erased by backward shift: no tombstones). A slot
   there is placed by a hash kept in its tid: of its pos (DEP, RING), or of the tuple's
   further keys (a lookup slot; its record's slot says MGUARD__CR_INHUB). Element 0
   holds the count (tid) and the mask (pos). A hub is a shortcut, never needed: without
   memory for one, the slot goes on the probe (the room is reserved), so every walk
   reads both. One-key lookup slots (one per object and cache) never go there. */
#define MGUARD__CS_HUB (MGUARD__CS_DEP | MGUARD__CS_RING)
#define MGUARD__CS_HEAVY(p) (!((p) & MGUARD__CS_RING) && ((p) & (MGUARD__CS_DEP | 0x30000000u)))
#ifndef MGUARD__HUB_AFTER
#define MGUARD__HUB_AFTER 8   /* the differential test and the fuzzer set it low: hubs at every turn */
#endif
#if MGUARD__HUB_AFTER < 1 || (MGUARD__HUB_AFTER & (MGUARD__HUB_AFTER - 1)) != 0
#error "MGUARD__HUB_AFTER must be a power of two (a hub's least size, 2 x it, is a mask + 1)"
#endif
#define MGUARD__CR_INHUB 0xffffffffu
#define MGUARD__HUB_AT(hb, i) (&(hb)[1 + (i)])
#define MGUARD__HUB(kx, k) ((mguard__kslot *)(kx)->slots[k].v.p)

static uint32_t mguard__hub_hpos(uint32_t pos)
{
    uint32_t x = pos * 0x9E3779B1u;
    return x ^ (x >> 16);
}

static uint32_t mguard__hub_htuple(const void *const *keys, uint32_t n)
{
    uint64_t h = n;
    uint32_t i;
    for (i = 1; i < n; i++) h = (h ^ mguard__hash64(keys[i])) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32);
}

/* Does lookup slot s hold the tuple (its first key matched)? */
static bool mguard__cache_is(const mguard_cache *c, const mguard__kslot *s, const void *const *keys, size_t n)
{
    const void *const *more;
    size_t k;
    if ((s->pos & ~MGUARD__CS_POS) != (uint32_t)(n - 1) << 28) return false;
    if (n == 1) return true;
    more = c->recs[s->pos & MGUARD__CS_POS].x.more;
    for (k = 1; k < n && more[k] == keys[k]; k++) {}
    return k == n;
}

/* The lookup slot of the tuple's LIVE entry (on its first key's probe, or in its
   hub), or NULL. Never writes. */
static mguard__kslot *mguard__cache_find(const mguard_cache *c, const void *const *keys, size_t n)
{
    const mguard__kx *kx = &c->ctx->kx;
    mguard__kwalk p;
    size_t i, hk = SIZE_MAX;
    uint32_t tid = MGUARD__CTID(c), mask, j;
    mguard__kslot *hb;
    MGUARD__KWALK_EACH(p, kx, keys[0], i) {
        mguard__kslot *s = &kx->slots[i];
        if (s->key != keys[0] || s->tid != tid) continue;
        if (s->pos == MGUARD__CS_HUB) hk = i;
        else if (mguard__cache_is(c, s, keys, n)) return s;
    }
    if (hk == SIZE_MAX || n == 1) return NULL;
    hb = (mguard__kslot *)kx->slots[hk].v.p;
    mask = hb[0].pos;
    for (j = mguard__hub_htuple(keys, (uint32_t)n) & mask; MGUARD__HUB_AT(hb, j)->pos; j = (j + 1) & mask)
        if (mguard__cache_is(c, MGUARD__HUB_AT(hb, j), keys, n)) return MGUARD__HUB_AT(hb, j);
    return NULL;
}

/* The index moved cache slot s to slot j: a lookup slot's record says so. */
static void mguard__cache_moved(mguard_ctx *ctx, const mguard__kslot *s, size_t j)
{
    if (!(s->pos & (MGUARD__CS_DEP | MGUARD__CS_RING)))
        MGUARD__CROOT(ctx)->ctabs[s->tid & ~MGUARD__TID_CACHE]->recs[s->pos & MGUARD__CS_POS].slot = (uint32_t)j;
}

/* ---- slots of the context's index ---- */

/* Is obj in the index (any slot)? */
static bool mguard__kx_known(const mguard_ctx *ctx, const void *obj, uint64_t h)
{
    bool known;
    (void)mguard__kx_find(&ctx->kx, obj, MGUARD__TID_NONE, h, &known);
    return known;
}

/* A new slot of c for obj (room reserved); obj becomes known. Its index. */
static size_t mguard__cslot_put(mguard_cache *c, const void *obj, uint32_t pos, uint64_t v)
{
    mguard_ctx *ctx = c->ctx;
    uint64_t h = mguard__hash64(obj);
    size_t i;
    if (!mguard__kx_known(ctx, obj, h)) ctx->live_objs++;
    i = mguard__kx_take(&ctx->kx, h);
    ctx->kx.slots[i].key = obj;
    ctx->kx.slots[i].tid = MGUARD__CTID(c);
    ctx->kx.slots[i].pos = pos;
    ctx->kx.slots[i].v.u = v;
    c->nslots++;
    ctx->npslots++;
    return i;
}

/* Free slot i of c (a DEP slot's attribute let go); its object forgotten
   with its last slot, unless `dying` (its death forgets it). */
static void mguard__cslot_erase(mguard_cache *c, size_t i, const void *dying)
{
    mguard_ctx *ctx = c->ctx;
    const void *obj = ctx->kx.slots[i].key;
    uint64_t h = mguard__hash64(obj);
    if ((ctx->kx.slots[i].pos & MGUARD__CS_HUB) == MGUARD__CS_DEP) mguard__str_release(ctx, (const char *)ctx->kx.slots[i].v.cp);
    mguard__kx_erase(&ctx->kx, i, h);
    c->nslots--;
    ctx->npslots--;
    if (obj != dying && !mguard__kx_known(ctx, obj, h)) ctx->live_objs--;
}

/* The first slot of hb's run from h's home saying pos, or the mask + 1. */
static uint32_t mguard__hub_find(const mguard__kslot *hb, uint32_t h, uint32_t pos)
{
    uint32_t mask = hb[0].pos, i;
    for (i = h & mask; MGUARD__HUB_AT(hb, i)->pos; i = (i + 1) & mask)
        if (MGUARD__HUB_AT(hb, i)->pos == pos) return i;
    return mask + 1;
}

/* Place s (room made) at the first free element of its run; where. */
static uint32_t mguard__hub_place(mguard__kslot *hb, const mguard__kslot *s)
{
    uint32_t mask = hb[0].pos, i = s->tid & mask;
    while (MGUARD__HUB_AT(hb, i)->pos) i = (i + 1) & mask;
    *MGUARD__HUB_AT(hb, i) = *s;
    hb[0].tid++;
    return i;
}

/* Erase element i, the rest of its run shifted back where their homes allow. */
static void mguard__hub_erase(mguard__kslot *hb, uint32_t i)
{
    uint32_t mask = hb[0].pos, j;
    for (j = (i + 1) & mask; MGUARD__HUB_AT(hb, j)->pos; j = (j + 1) & mask) {
        if (((j - MGUARD__HUB_AT(hb, j)->tid) & mask) >= ((j - i) & mask)) {   /* i lies between its home and j */
            *MGUARD__HUB_AT(hb, i) = *MGUARD__HUB_AT(hb, j);
            i = j;
        }
    }
    memset(MGUARD__HUB_AT(hb, i), 0, sizeof *hb);
    hb[0].tid--;
}

/* A hub under 1/8 full (past its least size) halved until 1/8-1/4 full, in its own
   block (no allocation: drops run on death paths), so that an event's walk of it
   costs what it holds, not what it once held. Its elements gathered at the front,
   copied to the block's far end, placed again by the smaller mask. */
static void mguard__hub_shrink(mguard__kslot *hb)
{
    uint32_t cap = hb[0].pos + 1, n = hb[0].tid, ncap = cap, i, j = 0;
    while (ncap > 2 * MGUARD__HUB_AFTER && n * 8 < ncap) ncap /= 2;
    if (ncap == cap) return;
    for (i = 0; i < cap; i++)
        if (MGUARD__HUB_AT(hb, i)->pos) *MGUARD__HUB_AT(hb, j++) = *MGUARD__HUB_AT(hb, i);
    memcpy(MGUARD__HUB_AT(hb, cap - n), MGUARD__HUB_AT(hb, 0), (size_t)n * sizeof *hb);   /* n < cap / 8: no overlap */
    memset(MGUARD__HUB_AT(hb, 0), 0, (size_t)(cap - n) * sizeof *hb);
    hb[0].pos = ncap - 1;
    hb[0].tid = 0;
    for (i = cap - n; i < cap; i++) {
        mguard__kslot e = *MGUARD__HUB_AT(hb, i);
        memset(MGUARD__HUB_AT(hb, i), 0, sizeof *hb);
        (void)mguard__hub_place(hb, &e);
    }
}

/* hb (NULL: none yet) with room for one more slot: itself, or a copy twice as
   large (hb freed); NULL without memory (hb unchanged). */
static mguard__kslot *mguard__hub_room(mguard_ctx *ctx, mguard__kslot *hb)
{
    uint32_t cap = hb ? hb[0].pos + 1 : 0, ncap = cap ? cap * 2 : 2 * MGUARD__HUB_AFTER, i;
    mguard__kslot *nb;
    if (hb && (hb[0].tid + 1) * 4 <= cap * 3) return hb;
    if (ncap > 0x10000000u || !mguard__mul_fits((size_t)ncap + 1, sizeof *nb)) return NULL;
    nb = (mguard__kslot *)mguard__alloc(ctx, ((size_t)ncap + 1) * sizeof *nb);
    if (!nb) return NULL;
    memset(nb, 0, ((size_t)ncap + 1) * sizeof *nb);
    nb[0].pos = ncap - 1;
    for (i = 0; i < cap; i++)
        if (MGUARD__HUB_AT(hb, i)->pos) (void)mguard__hub_place(nb, MGUARD__HUB_AT(hb, i));
    mguard__free(ctx, hb);
    return nb;
}

/* c's hub slot on obj, or SIZE_MAX. */
static size_t mguard__hub_slot(const mguard_cache *c, const void *obj)
{
    const mguard__kx *kx = &c->ctx->kx;
    mguard__kwalk p;
    size_t k;
    MGUARD__KWALK_EACH(p, kx, obj, k) {
        const mguard__kslot *s = &kx->slots[k];
        if (s->key == obj && s->tid == MGUARD__CTID(c) && s->pos == MGUARD__CS_HUB) return k;
    }
    return SIZE_MAX;
}

/* A new slot of c on obj saying pos (ph: its hash in a hub), with room reserved in
   the index: on obj's probe, or in its hub past MGUARD__HUB_AFTER heavy slots there.
   *at: its index, or SIZE_MAX (in the hub). */
static mguard__kslot *mguard__clink_put(mguard_cache *c, const void *obj, uint32_t pos, uint32_t ph, size_t *at)
{
    mguard__kx *kx = &c->ctx->kx;
    mguard__kwalk p;
    size_t k, hk = SIZE_MAX, heavy = 0;
    mguard__kslot *hb = NULL, s;
    MGUARD__KWALK_EACH(p, kx, obj, k) {
        const mguard__kslot *o = &kx->slots[k];
        if (o->key != obj || o->tid != MGUARD__CTID(c)) continue;
        if (o->pos == MGUARD__CS_HUB) hk = k;
        else if (MGUARD__CS_HEAVY(o->pos)) heavy++;
    }
    if (hk != SIZE_MAX || heavy >= MGUARD__HUB_AFTER) {
        hb = mguard__hub_room(c->ctx, hk != SIZE_MAX ? MGUARD__HUB(kx, hk) : NULL);
        if (hb && hk == SIZE_MAX) hk = mguard__cslot_put(c, obj, MGUARD__CS_HUB, 0);   /* uses the room the slot would */
        if (hb) kx->slots[hk].v.p = hb;
    }
    if (!hb) {
        *at = mguard__cslot_put(c, obj, pos, 0);
        return &kx->slots[*at];
    }
    memset(&s, 0, sizeof s);
    s.key = obj;
    s.tid = ph;
    s.pos = pos;
    c->nitems++;
    *at = SIZE_MAX;
    return MGUARD__HUB_AT(hb, mguard__hub_place(hb, &s));
}

/* Hub slot hk's element i leaves: erased, or (ring >= 0) made a RING slot. */
static void mguard__hub_take(mguard_cache *c, size_t hk, uint32_t i, int ring)
{
    mguard__kslot *hb = MGUARD__HUB(&c->ctx->kx, hk), s = *MGUARD__HUB_AT(hb, i);
    mguard__hub_erase(hb, i);
    if ((s.pos & MGUARD__CS_HUB) == MGUARD__CS_DEP) mguard__str_release(c->ctx, (const char *)s.v.cp);
    if (ring < 0) {
        c->nitems--;
        mguard__hub_shrink(hb);
        return;
    }
    s.pos = MGUARD__CS_RING | (uint32_t)ring;
    s.tid = mguard__hub_hpos(s.pos);
    s.v.u = 0;
    (void)mguard__hub_place(hb, &s);
}

/* An empty hub goes, with its slot (its object forgotten with it, unless dying). */
static void mguard__hub_tidy(mguard_cache *c, size_t hk, const void *dying)
{
    mguard__kslot *hb = MGUARD__HUB(&c->ctx->kx, hk);
    if (hb[0].tid) return;
    mguard__free(c->ctx, hb);
    mguard__cslot_erase(c, hk, dying);
}

/* LIVE record r's lookup slot (at position pos); *hk, *hi: its hub slot and element, or SIZE_MAX. */
#define MGUARD__CREC_LSLOT(c, r, pos, hk, hi) \
    ((r)->slot != MGUARD__CR_INHUB ? (*(hk) = SIZE_MAX, &(c)->ctx->kx.slots[(r)->slot]) : mguard__crec_hubslot((c), (r), (pos), (hk), (hi)))
static MGUARD__NOINLINE mguard__kslot *mguard__crec_hubslot(const mguard_cache *c, const mguard__crec *r, uint32_t pos, size_t *hk, uint32_t *hi)
{
    mguard__kslot *hb;
    uint32_t nk = MGUARD__CR_NK(r);
    *hk = mguard__hub_slot(c, r->x.more[0]);
    hb = MGUARD__HUB(&c->ctx->kx, *hk);
    *hi = mguard__hub_find(hb, mguard__hub_htuple(r->x.more, nk), (nk - 1) << 28 | pos);
    return MGUARD__HUB_AT(hb, *hi);
}

/* Every slot (obj, c, pos) (pos: DEP or RING): erased, or (ring >= 0) made a RING slot. */
static void mguard__cslots_retag(mguard_cache *c, const void *obj, uint32_t pos, int ring, const void *dying)
{
    mguard__kx *kx = &c->ctx->kx;
    mguard__kwalk p;
    size_t k, hk = SIZE_MAX;
    uint32_t tid = MGUARD__CTID(c), i;
    MGUARD__KWALK_EACH(p, kx, obj, k) {
        mguard__kslot *s = &kx->slots[k];
        if (s->key != obj || s->tid != tid) continue;
        if (s->pos == MGUARD__CS_HUB) hk = k;
        if (s->pos != pos || kx->ctrl[k] >= MGUARD__KX_EMPTY) continue;
        if (ring >= 0) {
            if (pos & MGUARD__CS_DEP) mguard__str_release(c->ctx, (const char *)s->v.cp);
            s->pos = MGUARD__CS_RING | (uint32_t)ring;
            s->v.u = 0;
        } else {
            mguard__cslot_erase(c, k, dying);
        }
    }
    if (hk == SIZE_MAX) return;
    while ((i = mguard__hub_find(MGUARD__HUB(kx, hk), mguard__hub_hpos(pos), pos)) <= MGUARD__HUB(kx, hk)[0].pos)
        mguard__hub_take(c, hk, i, ring);
    mguard__hub_tidy(c, hk, dying);
}

/* ---- the ring of reasons ---- */

/* Forget ring slot rp's reason: its keys' RING slots go. */
static void mguard__ring_forget(mguard_cache *c, uint32_t rp, const void *dying)
{
    mguard_cache_reason *r = &c->ring[rp];
    const mguard__kx *kx = &c->ctx->kx;
    size_t i, k = c->ringk[rp];
    /* a one-key reason's slot is where its drop made it, if that place still says
       (key, c, RING | rp): no other slot can while the reason is kept, an erased one
       says table id 0, a cache's slots are never PENDING. Else (no hint: a spoiled
       compute's reason, a key dying at the drop; the slot erased by a death, its
       place reused, or moved by a rehash) the walk finds what is left. */
    if (r->nkeys == 1 && k <= kx->mask && kx->slots[k].key == r->keys[0] &&
        kx->slots[k].tid == MGUARD__CTID(c) && kx->slots[k].pos == (MGUARD__CS_RING | rp))
        mguard__cslot_erase(c, k, dying);
    else
        for (i = 0; i < r->nkeys; i++) mguard__cslots_retag(c, r->keys[i], MGUARD__CS_RING | rp, -1, dying);
    mguard__str_release(c->ctx, r->attr);
    mguard__str_release(c->ctx, r->obj_name);
    r->attr = r->file = r->obj_name = NULL;
    c->ringlive[rp] = false;
    c->ringev[rp] = 0;
}

/* *r = why with keys, taking its own references to the strings. */
static void mguard__reason_copy(mguard_cache_reason *r, const mguard_cache_reason *why, const void *const *keys, uint32_t n)
{
    *r = *why;
    mguard__str_take(r->attr);
    mguard__str_take(r->obj_name);
    memset(r->keys, 0, sizeof r->keys);
    memcpy(r->keys, keys, n * sizeof *keys);
    r->nkeys = n;
}

/* The next ring slot, for why (its old reason forgotten). live: the caller makes the keys' slots pinning it. */
static uint32_t mguard__ring_next(mguard_cache *c, const mguard_cache_reason *why, const void *const *keys, uint32_t n,
                                  bool live, const void *dying)
{
    mguard_ctx *ctx = c->ctx;
    uint32_t rp = c->ringpos;
    mguard_cache_reason *r = &c->ring[rp];
    if (c->nring == MGUARD_CACHE_REASONS) mguard__ring_forget(c, rp, dying);
    mguard__reason_copy(r, why, keys, n);
    mguard__str_keep_if_shared(ctx, r->attr);   /* a reader on another thread */
    c->ringlive[rp] = live;
    c->ringk[rp] = SIZE_MAX;
    c->ringev[rp] = MGUARD__CROOT(ctx)->cev;
    c->ringpos = (rp + 1) % MGUARD_CACHE_REASONS;
    if (c->nring < MGUARD_CACHE_REASONS) c->nring++;
    return rp;
}

static void mguard__cache_count_cause(mguard_cache *c, mguard_cache_cause cause)
{
    switch (cause) {
    case MGUARD_CACHE_MUTATION: c->stats.mutations++; break;
    case MGUARD_CACHE_DEATH: c->stats.deaths++; break;
    case MGUARD_CACHE_EVICTION: c->stats.evictions++; break;
    case MGUARD_CACHE_EXPLICIT: c->stats.explicit_drops++; break;
    default: c->stats.replaced++; break;
    }
}

/* Only a bounded cache keeps the LRU list (an unbounded one never evicts). */
#define MGUARD__CACHE_BOUNDED(c) ((c)->capacity || (c)->max_cost)

/* The total cost in two words: max_cost compares with the exact sum. */
static void mguard__cache_cost_add(mguard_cache *c, size_t cost)
{
    c->total_cost += cost;
    if (c->total_cost < cost) c->cost_carry++;
}

static void mguard__cache_cost_sub(mguard_cache *c, size_t cost)
{
    if (c->total_cost < cost) c->cost_carry--;
    c->total_cost -= cost;
}

#define MGUARD__CACHE_OVER_COST(c) ((c)->max_cost && ((c)->cost_carry || (c)->total_cost > (c)->max_cost))

static void mguard__lru_unlink(mguard_cache *c, uint32_t p)
{
    mguard__clru *e = &c->lru[p - 1];
    if (e->newer) c->lru[e->newer - 1].older = e->older; else c->newest = e->older;
    if (e->older) c->lru[e->older - 1].newer = e->newer; else c->oldest = e->newer;
    e->newer = e->older = 0;
}

static void mguard__lru_push(mguard_cache *c, uint32_t p)
{
    mguard__clru *e = &c->lru[p - 1];
    e->newer = 0;
    e->older = c->newest;
    if (c->newest) c->lru[c->newest - 1].newer = p; else c->oldest = p;
    c->newest = p;
}

/* ---- leaving a cache ---- */

/* Phase 1 of a drop: the LIVE entry at pos leaves the index and c; its value goes onto q
   (destroyed in phase 2). why (its cause 0: an overwrite) is counted and, with a cause,
   remembered: the keys' slots become the reason's RING slots (unless a key is `dying`). */
static void mguard__cache_drop(mguard_cache *c, uint32_t pos, const mguard_cache_reason *why, const void *dying,
                               mguard__evq *q)
{
    mguard_ctx *ctx = c->ctx;
    mguard__crec *r = &c->recs[pos];
    size_t hk;
    uint32_t hi = 0;
    mguard__kslot *ls;
    const void *keys[MGUARD_CACHE_MAX_KEYS];
    uint32_t nk = MGUARD__CR_NK(r), nd = MGUARD__CR_ND(r), i;
    uint64_t v;
    int ring = -1;
    keys[0] = nk > 1 ? r->x.more[0] : ctx->kx.slots[r->slot].key;
    for (i = 1; i < nk; i++) keys[i] = r->x.more[i];
    if (why->cause) {
        bool live = true;   /* a dying key's reason answers no more; its other keys stay pinned */
        for (i = 0; i < nk; i++) live = live && keys[i] != dying;
        ring = (int)mguard__ring_next(c, why, keys, nk, live, dying);
    }
    /* found after the ring made room: forgetting its oldest reason may have
       erased a hub element, moving this one back */
    ls = MGUARD__CREC_LSLOT(c, r, pos, &hk, &hi);
    v = ls->v.u;
    /* the lookup slot, the keys' DEP slots, the added dependencies' */
    if (hk != SIZE_MAX) {
        mguard__hub_take(c, hk, hi, keys[0] != dying ? ring : -1);
        mguard__hub_tidy(c, hk, dying);
    } else if (ring >= 0 && keys[0] != dying) {
        ls->pos = MGUARD__CS_RING | (uint32_t)ring;
        ls->v.u = 0;
        c->ringk[ring] = r->slot;
    } else {
        mguard__cslot_erase(c, r->slot, dying);
    }
    for (i = 1; i < nk; i++) mguard__cslots_retag(c, keys[i], MGUARD__CS_DEP | pos, keys[i] != dying ? ring : -1, dying);
    for (i = 0; i < nd; i++) mguard__cslots_retag(c, MGUARD__CR_DEP(r, i), MGUARD__CS_DEP | pos, -1, dying);
    if (MGUARD__CR_MORE(r)) mguard__free(ctx, (void *)r->x.more);
    if (MGUARD__CACHE_BOUNDED(c)) {
        mguard__lru_unlink(c, pos + 1);
        mguard__cache_cost_sub(c, c->lru[pos].cost);
    }
    mguard__cache_count_cause(c, why->cause);
    if (c->keepwhy && why->cause) mguard__reason_copy(&c->lw[pos], why, keys, nk);   /* until phase 2 */
    else if (c->keepwhy) c->lw[pos].cause = (mguard_cache_cause)0;
    r->meta = MGUARD__CR_DROPPED;
    r->x.u = v;   /* the value, or its block */
    r->slot = 0;
    c->seqs[pos] = 0;
    if (q->tpos) {
        mguard_cache *tc = MGUARD__CROOT(ctx)->ctabs[q->tcid];
        tc->recs[q->tpos - 1].slot = pos + 1;
        tc->seqs[q->tpos - 1] = c->cid;
    } else {
        q->hcid = c->cid;
        q->hpos = pos + 1;
    }
    q->tcid = c->cid;
    q->tpos = pos + 1;
    c->live--;
    c->npend++;
    c->busy++;   /* until phase 2 is done with it */
}

/* Park a stale value (v8: a value of 8 bytes or less; block: a larger
   one's, taken over; both NULL: none) and destroy the one parked before,
   after (its destructor may park another). The new parking's seq. */
static uint64_t mguard__cache_park(mguard_cache *c, const void *v8, void *block)
{
    mguard_ctx *ctx = c->ctx;
    union { uint64_t u; unsigned char b[8]; } v;
    void *old = c->parked;
    mguard_value_dtor dtor = c->dtor;
    void *user = c->user;
    uint64_t seq = 0;
    if (old == (void *)c->parkv.b) {
        v.u = c->parkv.u;
        old = v.b;
    }
    c->parked = block;
    if (v8) {
        memcpy(c->parkv.b, v8, sizeof c->parkv.b);
        c->parked = c->parkv.b;
    }
    if (c->parked) c->parkseq = seq = c->next_seq++;
    if (!old) return seq;
    if (dtor) MGUARD__CALLOUT(ctx, dtor(old, user));
    if (old != (void *)v.b) mguard__free(ctx, old);
    return seq;
}
static void mguard__cache_unpark(mguard_cache *c) { (void)mguard__cache_park(c, NULL, NULL); }

/* The log line "mguard_cache NAME: what (keys)", then sep and r's text (made first:
   naming the keys calls out, and may change c's reasons). vouched: the program passed
   the keys to this call. c is held meanwhile: a destroy from the hook waits for the line. */
static void mguard__cache_log(mguard_cache *c, const char *what, const void *const *keys, size_t n, /* NOLINT(misc-no-recursion) */
                              const char *sep, const mguard_cache_reason *r, bool vouched)
{
    mguard_ctx *ctx = c->ctx;
    char kb[300], text[256], name[64];
    const void *k[MGUARD_CACHE_MAX_KEYS];
    size_t len = 0, i;
    memcpy(k, keys, n * sizeof *keys);   /* keys may lie in the index or the ring */
    text[0] = 0;
    if (r) mguard_cache_reason_format(r, text, sizeof text);
    kb[0] = 0;
    c->busy++;
    for (i = 0; i < n; i++) {
        int m;
        (void)mguard__describe(ctx, k[i], name, sizeof name, vouched);
        m = snprintf(kb + (len < sizeof kb ? len : sizeof kb), len < sizeof kb ? sizeof kb - len : 0, "%s%s", i ? ", " : "", name);
        if (m > 0) len += (size_t)m;
    }
    mguard__logf(ctx, MGUARD_LOG_CACHE_REASON, c->name, what, kb, r ? sep : "", text);
    if (--c->busy == 0 && c->destroying) mguard__cache_destroy_now(c);
}

/* Phase 2: for each drop of q, in drop order: its position freed; then, with a
   cause, the drop logged (log_reasons) and told (dropped), c held; the value
   destroyed (from a copy, or its block; take: copied to out, none of this called).
   Recursion (misc-no-recursion below): finish_one -> destroy_now -> drain -> finish,
   one level deep (the drain's own drops hold the cache busy). */
static MGUARD__NOINLINE void mguard__cache_finish_one(mguard_ctx *ctx, mguard__evq *q, void *out)   /* NOLINT(misc-no-recursion) */
{
    mguard_cache *c = MGUARD__CROOT(ctx)->ctabs[q->hcid];
    uint32_t pos = q->hpos - 1;
    mguard__crec *r = &c->recs[pos];
    union { uint64_t u; unsigned char b[8]; } v;
    void *val;
    mguard_value_dtor dtor = out ? NULL : c->dtor;
    mguard_cache_dropped_fn dropped = out ? NULL : c->dropped;
    void *user = c->user;
    mguard_cache_reason why;
    v.u = r->x.u;
    val = c->inslot ? (void *)v.b : r->x.block;
    q->hcid = c->seqs[pos];
    q->hpos = r->slot;
    if (!q->hpos) q->tcid = q->tpos = 0;
    r->meta = MGUARD__CR_FREE;
    r->x.u = 0;
    r->slot = c->freehead;
    c->freehead = pos + 1;
    c->nfree++;
    c->npend--;
    why.cause = (mguard_cache_cause)0;
    if (c->keepwhy && c->lw[pos].cause) {
        why = c->lw[pos];   /* a copy: the callouts may reuse the position */
        c->lw[pos].cause = (mguard_cache_cause)0;
    }
    if (why.cause) {
        if (c->log_reasons && !out) mguard__cache_log(c, "dropped", why.keys, why.nkeys, ": ", &why, false);
        if (dropped) MGUARD__CALLOUT(ctx, dropped(val, &why, user));
        mguard__str_release(ctx, why.attr);
        mguard__str_release(ctx, why.obj_name);
    }
    if (out) memcpy(out, val, c->value_size);   /* take: no callout above */
    /* the drop holds c no more: a destroy waiting for it goes now, one from its destructor at once */
    if (--c->busy == 0 && c->destroying) mguard__cache_destroy_now(c);
    if (dtor) MGUARD__CALLOUT(ctx, dtor(val, user));
    if (val != (void *)v.b) mguard__free(ctx, val);
}
static MGUARD__HOT void mguard__cache_finish(mguard_ctx *ctx, mguard__evq *q) { while (q->hpos) mguard__cache_finish_one(ctx, q, NULL); }   /* NOLINT(misc-no-recursion) */

/* ---- computes in progress ---- */

static size_t mguard__cpair_slot(const mguard_cache_job *job, const void *obj, const char *ia)
{
    size_t i = (mguard__hash_ptr(obj) ^ (mguard__hash_ptr(ia) * 0x9E3779B1u)) & (job->setcap - 1);
    while (job->set[i].obj && (job->set[i].obj != obj || job->set[i].attr != ia)) i = (i + 1) & (job->setcap - 1);
    return i;
}

static bool mguard__cpair_has(const mguard_cache_job *job, const void *obj, const char *ia) { return job->set[mguard__cpair_slot(job, obj, ia)].obj != NULL; }

/* Does the job depend on (obj, ia)? attr NULL: on obj at all; else on the
   whole obj or on ia (an uninterned attr: no declared one names it). */
static bool mguard__job_has(const mguard_cache_job *job, const void *obj, const char *attr, const char *ia)
{
    uint32_t i;
    for (i = 0; i < job->nkeys; i++)
        if (job->keys[i] == obj) return true;
    if (job->set && attr) return mguard__cpair_has(job, obj, NULL) || (ia && mguard__cpair_has(job, obj, ia));
    for (i = 0; i < job->ndeps; i++)
        if (job->deps[i].obj == obj && (!attr || !job->deps[i].attr || job->deps[i].attr == ia)) return true;
    return false;
}

/* The job's value will not be stored; why (a cause) is remembered, the
   keys pinned by RING slots in the room the job holds (taken when compute
   began: a death allocates nothing). */
static void mguard__job_spoil(mguard_cache_job *job, const mguard_cache_reason *why, const void *dying)
{
    mguard_cache *c = job->c;
    mguard_ctx *ctx = c->ctx;
    uint32_t i, rp;
    bool live = true;
    job->stale = 1;
    ctx->kx_held -= job->held;   /* used now, or not needed */
    job->held = 0;
    if (!why->cause) return;
    for (i = 0; i < job->nkeys; i++) live = live && job->keys[i] != dying;
    rp = mguard__ring_next(c, why, job->keys, job->nkeys, live, dying);
    for (i = 0; i < job->nkeys; i++)
        if (job->keys[i] != dying) (void)mguard__cslot_put(c, job->keys[i], MGUARD__CS_RING | rp, 0);
}

/* The job's set of declared pairs: made at MGUARD__JOB_SCAN of them,
   doubled (rebuilt) past half full. Out of memory, or past 2^28 slots, it
   goes and the job scans from then on. */
static void mguard__cpair_added(mguard_ctx *ctx, mguard_cache_job *job)
{
    uint32_t cap, i;
    if (job->noset || job->ndeps < MGUARD__JOB_SCAN) return;
    if (!job->set || job->ndeps * 2u > job->setcap) {
        cap = job->set ? job->setcap * 2u : 4u * MGUARD__JOB_SCAN;
        mguard__free(ctx, job->set);
        job->set = cap <= 0x10000000u ? (mguard__cpair *)mguard__alloc(ctx, (size_t)cap * sizeof(mguard__cpair)) : NULL;
        job->setcap = job->set ? cap : 0;
        if (!job->set) {
            job->noset = 1;
            return;
        }
        memset(job->set, 0, (size_t)cap * sizeof(mguard__cpair));
        for (i = 0; i + 1 < job->ndeps; i++) job->set[mguard__cpair_slot(job, job->deps[i].obj, job->deps[i].attr)] = job->deps[i];
    }
    job->set[mguard__cpair_slot(job, job->deps[job->ndeps - 1].obj, job->deps[job->ndeps - 1].attr)] = job->deps[job->ndeps - 1];
}

/* ---- the core's hook ---- */

/* An event's marked positions of c are linked through c->seqs (position
   + 1, 0 ends the list): the list of n from head, sorted by position (a
   merge sort: no allocation, O(n log n), depth log n). */
static uint32_t mguard__cmark_sort(mguard_cache *c, uint32_t head, uint32_t n)   /* NOLINT(misc-no-recursion): depth log2 n */
{
    uint32_t a, b, res = 0, *tail = &res, mid = head, i;
    if (n < 2) return head;
    for (i = 1; i < n / 2; i++) mid = c->seqs[mid - 1];
    b = c->seqs[mid - 1];
    c->seqs[mid - 1] = 0;
    a = mguard__cmark_sort(c, head, n / 2);
    b = mguard__cmark_sort(c, b, n - n / 2);
    while (a && b) {
        uint32_t *take = b < a ? &b : &a;
        *tail = *take;
        tail = &c->seqs[*take - 1];
        *take = *tail;
    }
    *tail = a ? a : b;
    return res;
}

/* An event marks c's entry at pos (once), and c (first) on its list of caches (in
   the order they were made). */
static MGUARD__HOT void mguard__cmark(mguard_cache *c, uint32_t pos, mguard_cache **marked)
{
    mguard__crec *r = &c->recs[pos];
    mguard_cache **pc;
    if (MGUARD__CR_STATE(r) == MGUARD__CR_MARKED) return;
    r->meta |= MGUARD__CR_MARKED;
    if (!c->nmarked++) {
        for (pc = marked; *pc && (*pc)->order < c->order; pc = &(*pc)->mnext) {}
        c->mnext = *pc;
        *pc = c;
        c->mhead = 0;
    }
    c->seqs[pos] = c->mhead;
    c->mhead = pos + 1;
}

/* The same for each element of hub hb (ia: attr interned, or NULL). A death's
   RING elements: their reasons answer no more (the elements go after the drops). */
static MGUARD__NOINLINE void mguard__cmark_hub(mguard_cache *c, const mguard__kslot *hb, const char *attr, const char *ia, int death,
                                               mguard_cache **marked)
{
    uint32_t i;
    for (i = 0; i <= hb[0].pos; i++) {
        const mguard__kslot *e = MGUARD__HUB_AT(hb, i);
        if (!e->pos) continue;
        if (e->pos & MGUARD__CS_RING) {
            if (death) c->ringlive[e->pos & (MGUARD_CACHE_REASONS - 1)] = false;
            continue;
        }
        if (attr && (e->pos & MGUARD__CS_DEP) && e->v.cp && e->v.cp != (const void *)ia) continue;
        mguard__cmark(c, e->pos & MGUARD__CS_POS, marked);
    }
}

/* A death, after its drops: obj's hubs hold only RING slots; they go. */
static MGUARD__NOINLINE void mguard__hubs_die(mguard_ctx *ctx, const void *obj)
{
    mguard__kx *kx = &ctx->kx;
    mguard__kwalk p;
    size_t k;
    MGUARD__KWALK_EACH(p, kx, obj, k) {
        const mguard__kslot *s = &kx->slots[k];
        mguard_cache *c;
        if (s->key != obj || !(s->tid & MGUARD__TID_CACHE) || s->pos != MGUARD__CS_HUB) continue;
        c = MGUARD__CROOT(ctx)->ctabs[s->tid & ~MGUARD__TID_CACHE];
        {   /* by construction: the drops took every element but the RING ones */
            const mguard__kslot *hb = MGUARD__HUB(kx, k);
            uint32_t i;
            for (i = 0; i <= hb[0].pos; i++)
                MGUARD_ASSERT(!MGUARD__HUB_AT(hb, i)->pos || (MGUARD__HUB_AT(hb, i)->pos & MGUARD__CS_RING));
        }
        c->nitems -= MGUARD__HUB(kx, k)[0].tid;
        MGUARD__HUB(kx, k)[0].tid = 0;
        mguard__hub_tidy(c, k, obj);
    }
}

/* mguard_on_destroy, mguard_on_mutation_at: phase 1 for everything of the
   caches that depends on obj (attr: the mutation's; a death: NULL): the running
   computes that depend on it are spoiled (the innermost first), the entries
   with a slot on obj's probe or in its hubs that it reaches are dropped onto q, in a fixed
   order (the cache made first, then the lower position: not the probe's, which
   depends on addresses), and a death forgets the reasons naming obj. q: zeroed. */
static void mguard__cache_event(mguard_ctx *ctx, const void *obj, const char *attr, const char *file, int line,
                                int death, mguard__evq *q)
{
    mguard__kx *kx = &ctx->kx;
    mguard__croot *cr = MGUARD__CROOT(ctx);
    mguard__kwalk pr;
    size_t k;
    const char *ia = NULL;
    int interned = 0, looked = 0, whyset = 0, hubs = 0;
    mguard_cache_job *job;
    mguard_cache *marked = NULL, *c;
    mguard_cache_reason why;
    /* the interned attr (found once, only if needed), the reason (made only if something
       drops or is spoiled): an object no cache depends on costs a walk of its probe */
#define MGUARD__EV_IA() (looked ? ia : (looked = 1, ia = attr ? mguard__str_find(ctx, attr) : NULL, ia ? mguard__str_recent(ctx, ia) : NULL))
#define MGUARD__EV_WHY() \
    do { \
        if (whyset) break; \
        whyset = 1; \
        memset(&why, 0, sizeof why); \
        why.cause = death ? MGUARD_CACHE_DEATH : MGUARD_CACHE_MUTATION; \
        why.obj = obj; \
        if (ctx->describe.func) cr->cev = q->ev = ++cr->events;   /* named in phase 2 */ \
        why.line = death ? 0 : line; \
        if (death) break; \
        /* attr may be a temporary: the reasons keep the context's copy \
           (out of memory, they lack it); file outlives ctx (the contract) */ \
        why.attr = attr ? (MGUARD__EV_IA() ? mguard__str_take(ia) : mguard__str_intern(ctx, attr)) : NULL; \
        why.file = file; \
        interned = 1; \
    } while (0)
    for (job = cr->jobs; job; job = job->next) {
        if (job->stale || !mguard__job_has(job, obj, attr, MGUARD__EV_IA())) continue;
        MGUARD__EV_WHY();
        mguard__job_spoil(job, &why, death ? obj : NULL);
    }
    /* mark the entries reached (each once), on their caches' lists; the
       caches with marks in the order they were made */
    MGUARD__KWALK_EACH(pr, kx, obj, k) {
        const mguard__kslot *s = &kx->slots[k];
        if (s->key != obj || !(s->tid & MGUARD__TID_CACHE) || kx->ctrl[k] >= MGUARD__KX_EMPTY) continue;
        c = cr->ctabs[s->tid & ~MGUARD__TID_CACHE];
        if (s->pos == MGUARD__CS_HUB) {
            hubs = 1;
            mguard__cmark_hub(c, MGUARD__HUB(kx, k), attr, attr ? MGUARD__EV_IA() : NULL, death, &marked);
            continue;
        }
        if (s->pos & MGUARD__CS_RING) {
            if (death) {
                c->ringlive[s->pos & (MGUARD_CACHE_REASONS - 1)] = false;
                mguard__cslot_erase(c, k, obj);
            }
            continue;
        }
        /* attr NULL (a death, or "the whole object changed") reaches every
           slot; a named attribute, whole-object ones and its own */
        if (attr && (s->pos & MGUARD__CS_DEP) && s->v.cp && s->v.cp != (const void *)MGUARD__EV_IA()) continue;
        mguard__cmark(c, s->pos & MGUARD__CS_POS, &marked);
    }
    if (marked) MGUARD__EV_WHY();
#undef MGUARD__EV_WHY
#undef MGUARD__EV_IA
    /* drop them: the cache made first, then the lower position */
    for (c = marked; c; c = c->mnext) {
        uint32_t p = mguard__cmark_sort(c, c->mhead, c->nmarked);
        c->nmarked = 0;
        while (p) {
            uint32_t next = c->seqs[p - 1];
            c->recs[p - 1].meta = (c->recs[p - 1].meta & ~3u) | MGUARD__CR_LIVE;
            mguard__cache_drop(c, p - 1, &why, death ? obj : NULL, q);
            p = next;
        }
    }
    if (death && hubs) mguard__hubs_die(ctx, obj);
    if (interned) {   /* the ring and the logged drops took their own */
        mguard__str_release(ctx, why.attr);
    }
    cr->cev = 0;
}

/* The ring slots of c event ev wrote, not overwritten since, take name. */
static void mguard__cache_name_ring(mguard_cache *c, uint64_t ev, const char *name)
{
    uint32_t i;
    for (i = 0; i < MGUARD_CACHE_REASONS; i++) {
        if (c->ringev[i] != ev) continue;
        c->ringev[i] = 0;
        if (!c->ring[i].obj_name) c->ring[i].obj_name = mguard__str_take(name);
        mguard__str_keep_if_shared(c->ctx, name);   /* a reader on another thread */
    }
}

/* The first callout of the phase 2 of an event whose reasons wait for a name (q->ev):
   obj (the program's argument, or dying) described once; the name goes to the reasons
   the event made: its drops' kept for phase 2, and the ring slots it wrote (its drops',
   its spoiled computes') that no callout has overwritten. Its caches are held (busy)
   by their drops and computes, and its drops' records wait untouched on q. */
static MGUARD__NOINLINE void mguard__cache_name_ev(mguard_ctx *ctx, const void *obj, mguard__evq *q)
{
    char buf[256];
    const char *name;
    uint32_t cid = q->hcid, pos = q->hpos;
    uint64_t ev = q->ev;
    mguard_cache_job *job;
    q->ev = 0;
    if (!mguard__describe(ctx, obj, buf, sizeof buf, true) || !(name = mguard__str_intern(ctx, buf))) return;
    while (pos) {
        mguard_cache *c = MGUARD__CROOT(ctx)->ctabs[cid];
        mguard_cache_reason *w = c->keepwhy ? &c->lw[pos - 1] : NULL;
        mguard__cache_name_ring(c, ev, name);
        if (w && w->cause && !w->obj_name) w->obj_name = mguard__str_take(name);
        cid = c->seqs[pos - 1];
        pos = c->recs[pos - 1].slot;
    }
    for (job = MGUARD__CROOT(ctx)->jobs; job; job = job->next) mguard__cache_name_ring(job->c, ev, name);
    mguard__str_release(ctx, name);
}

/* The end of a call that dropped entries onto q: the parked value, then the dropped
   ones destroyed or (take) copied to out (c may go in the first: q then holds
   none of its drops; a destroy from the others waits for c's drops still to come). */
static void mguard__cache_settle(mguard_cache *c, mguard__evq *q, void *out)
{
    mguard_ctx *ctx = c->ctx;
    mguard__cache_unpark(c);
    while (q->hpos) mguard__cache_finish_one(ctx, q, out);
}

/* ---- create, destroy ---- */

static mguard__croot *mguard__croot_ensure(mguard_ctx *ctx);

static mguard_cache *mguard__cache_create(mguard_ctx *ctx, const mguard_cache_desc *desc)
{
    mguard__croot *cr;
    mguard_cache *c;
    const char *name;
    uint32_t cid = 0;
    if (!mguard__ctx_can_create(ctx, "mguard_cache_create")) return NULL;
    if (!desc || desc->value_size == 0 || desc->value_size > ((size_t)1 << 24)) {
        mguard__logf(ctx, !desc ? MGUARD_LOG_NULL_ARG : MGUARD_LOG_BAD_VALUE_SIZE, "mguard_cache_create", "desc");
        return NULL;
    }
    name = mguard__str_intern(ctx, desc->name ? desc->name : "cache");
#ifdef MGUARD_DEBUG
    if (name && mguard__dbg_h_reserve(ctx)) {
        mguard__str_release(ctx, name);
        name = NULL;
    }
#endif
    cr = name ? mguard__croot_ensure(ctx) : NULL;
    c = cr ? (mguard_cache *)mguard__alloc(ctx, sizeof *c) : NULL;
    if (c) cid = mguard__id_take(ctx, (void **)&cr->ctabs, &cr->nctabs, &cr->capctabs, &cr->free_cid);
    if (!cid) {
        mguard__free(ctx, c);
        mguard__str_release(ctx, name);
        mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_cache_create");
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->cid = cid;
    c->order = cr->made++;
    cr->ctabs[cid] = c;
    c->ctx = ctx;
    c->value_size = desc->value_size;
    c->inslot = c->value_size <= MGUARD__KX_INSLOT;
    c->dtor = desc->value_dtor;
    c->user = desc->user;
    c->capacity = desc->capacity;
    c->max_cost = desc->max_cost;
    c->log_reasons = desc->log_reasons;
    c->dropped = desc->dropped;
    c->keepwhy = c->log_reasons || c->dropped;
    c->unbounded = !MGUARD__CACHE_BOUNDED(c);
    c->magic = MGUARD__MAGIC_CACHE | (ctx->lk ? MGUARD__MAGIC_TS : 0) |
               (c->unbounded && !c->log_reasons ? 0 : MGUARD__MAGIC_GENERAL);
    c->name = name;
#ifdef MGUARD_DEBUG
    mguard__dbg_h_add(ctx, c, MGUARD__DBG_CACHE);
#endif
    c->next = cr->caches;
    if (cr->caches) cr->caches->prev = c;
    cr->caches = c;
    return c;
}

/* Drop, one at a time, every LIVE entry stored before bound (cause
   EXPLICIT): each value is destroyed with its entry already gone. */
static void mguard__cache_drain(mguard_cache *c, uint64_t bound)   /* NOLINT(misc-no-recursion) */
{
    mguard_ctx *ctx = c->ctx;
    mguard__evq q;
    uint32_t pos;
    mguard_cache_reason why;
    mguard__drainf f;
    memset(&why, 0, sizeof why);
    why.cause = MGUARD_CACHE_EXPLICIT;
    f.bound = bound;
    f.prev = NULL;
    f.next = c->drains;
    if (f.next) f.next->prev = &f;
    /* a renumbering keeps its bound apart (mguard__cache_rebase) */
    /* cppcheck-suppress autoVariables ; unlinked before this function returns */
    c->drains = &f;
    c->busy++;
    mguard__cache_unpark(c);
    for (pos = 0; pos < c->nrec; pos++) {
        const mguard__crec *r = &c->recs[pos];
        if (MGUARD__CR_STATE(r) != MGUARD__CR_LIVE || c->sbase + c->seqs[pos] >= f.bound) continue;
        memset(&q, 0, sizeof q);
        mguard__cache_drop(c, pos, &why, NULL, &q);
        mguard__cache_finish(ctx, &q);
    }
    c->busy--;
    if (f.prev) f.prev->next = f.next; else c->drains = f.next;
    if (f.next) f.next->prev = f.prev;
}

static void mguard__cache_clear(mguard_cache *c)
{
    if (!mguard__cache_ok(c, "mguard_cache_clear")) return;
    mguard__cache_drain(c, c->next_seq);
    if (c->destroying && !c->busy) mguard__cache_destroy_now(c);
}

static void mguard__cache_destroy_now(mguard_cache *c)   /* NOLINT(misc-no-recursion) */
{
    mguard_ctx *ctx = c->ctx;
    uint32_t i;
    c->busy++;   /* its drain's drops do not destroy it again */
    /* destroying refuses new entries, so one drain empties the cache */
    mguard__cache_drain(c, UINT64_MAX);
    c->busy--;
    MGUARD_ASSERT(c->live == 0 && c->npend == 0);
    for (i = 0; i < c->nring; i++) mguard__ring_forget(c, i, NULL);
    c->nring = 0;
    MGUARD_ASSERT(c->nslots == 0 && c->nitems == 0);
    if (c->prev) c->prev->next = c->next; else MGUARD__CROOT(ctx)->caches = c->next;
    if (c->next) c->next->prev = c->prev;
    mguard__id_put((void **)MGUARD__CROOT(ctx)->ctabs, &MGUARD__CROOT(ctx)->free_cid, c->cid);
    mguard__free(ctx, c->recs);
    mguard__free(ctx, c->seqs);
    mguard__free(ctx, c->lru);
    mguard__free(ctx, c->lw);
    mguard__str_release(ctx, c->name);
#ifdef MGUARD_DEBUG
    mguard__dbg_h_remove(ctx, c);
#endif
    c->magic = MGUARD__DEAD;
    mguard__bury(ctx, c);
}

static void mguard__cache_destroy(mguard_cache *c)
{
    if (!mguard__cache_ok(c, "mguard_cache_destroy")) return;
    if (c->destroying) { mguard__logf(c->ctx, MGUARD_LOG_DESTROY_TWICE, "mguard_cache_destroy", "cache", (void *)c); return; }
    c->destroying = 1;
    if (c->busy) return;   /* the call or event in progress finishes the job */
    mguard__cache_destroy_now(c);
}

/* ---- storing ---- */

/* Room for one more position (and its LRU and reason records). */
static mguard_status mguard__cache_room(mguard_cache *c)
{
    mguard_ctx *ctx = c->ctx;
    if (c->nfree) return MGUARD_OK;
    if (c->nrec >= MGUARD__CS_MAXPOS) return MGUARD_ENOMEM;
    if (mguard__reserve(ctx, (void **)&c->recs, &c->caprec, (size_t)c->nrec + 1, sizeof *c->recs)) return MGUARD_ENOMEM;
    if (mguard__reserve(ctx, (void **)&c->seqs, &c->capseq, c->caprec, sizeof *c->seqs)) return MGUARD_ENOMEM;
    if (MGUARD__CACHE_BOUNDED(c) && mguard__reserve(ctx, (void **)&c->lru, &c->caplru, c->caprec, sizeof *c->lru))
        return MGUARD_ENOMEM;
    if (c->keepwhy && mguard__reserve(ctx, (void **)&c->lw, &c->caplw, c->caprec, sizeof *c->lw)) return MGUARD_ENOMEM;
    return MGUARD_OK;
}

/* Renumber c's store orders (they may not span 2^32 stores): every live
   entry stored before the oldest drain in progress began (none: before now)
   becomes "stored just before it", later ones keep their order, so a clear
   whose destructor stores still drops exactly what was there at its start
   (unless it stored 2^31 entries meanwhile: then some of those go too). An
   iteration begun before the new base ends (mguard__cache_next); a later
   one's bound stays true. At most once per 2^32 stores: O(positions). */
static void mguard__cache_rebase(mguard_cache *c)
{
    uint32_t pos;
    uint64_t lo = c->next_seq, nb;
    mguard__drainf *d;
    for (d = c->drains; d; d = d->next) if (d->bound < lo) lo = d->bound;
    if (c->next_seq - lo > 0x80000000u) lo = c->next_seq - 0x80000000u;
    for (d = c->drains; d; d = d->next) if (d->bound < lo) d->bound = lo;
    nb = lo - 1;
    for (pos = 0; pos < c->nrec; pos++)
        if (MGUARD__CR_STATE(&c->recs[pos]) == MGUARD__CR_LIVE) {
            uint64_t at = c->sbase + c->seqs[pos];
            c->seqs[pos] = at <= nb ? 0 : (uint32_t)(at - nb);
        }
    c->sbase = nb;
    c->rebased = true;
}

/* Store the tuple's value (val: value_size bytes; or block, the value's own allocation,
   taken over) with deps (interned attributes: the slots take their own references),
   replacing the tuple's entry, then evict while over the bounds (never the new entry).
   ENOMEM: nothing changed (block stays the caller's). */
static mguard_status mguard__cache_put(mguard_cache *c, const void *const *keys, uint32_t n, const void *val, void *block,
                                       const mguard__cpair *deps, uint32_t nd, size_t cost, mguard__evq *q)
{
    mguard_ctx *ctx = c->ctx;
    mguard__crec *r;
    const void **more = NULL;
    uint32_t pos, i, kofs = n > 1 ? n : 0, hdep;
    size_t at;
    mguard__kslot *old, *ls;
    uint64_t v = 0;
    mguard_cache_reason why;
    if (mguard__cache_room(c) || mguard__kx_reserve(ctx, (size_t)n + nd)) return MGUARD_ENOMEM;
    if (n > 1 || nd > 1) {
        more = (const void **)mguard__alloc(ctx, mguard__cap2(kofs + nd) * sizeof *more);
        if (!more) return MGUARD_ENOMEM;
    }
    if (c->inslot) {
        memcpy(&v, val, c->value_size);
    } else {
        if (!block && (block = mguard__alloc(ctx, c->value_size)) != NULL) memcpy(block, val, c->value_size);
        if (!block) {
            mguard__free(ctx, (void *)more);
            return MGUARD_ENOMEM;
        }
        v = (uint64_t)(uintptr_t)block;
    }
    memset(&why, 0, sizeof why);
    old = mguard__cache_find(c, keys, n);
    if (old) mguard__cache_drop(c, old->pos & MGUARD__CS_POS, &why, NULL, q);
    if (c->next_seq - c->sbase >= 0xffffffffu) mguard__cache_rebase(c);   /* before the new position is LIVE */
    if (c->freehead) {
        pos = c->freehead - 1;
        c->freehead = c->recs[pos].slot;
        c->nfree--;
    } else {
        pos = c->nrec++;
    }
    r = &c->recs[pos];
    if (n > 1) {
        ls = mguard__clink_put(c, keys[0], (n - 1) << 28 | pos, mguard__hub_htuple(keys, n), &at);
    } else {
        at = mguard__cslot_put(c, keys[0], pos, 0);
        ls = &ctx->kx.slots[at];
    }
    if (c->inslot) memcpy(ls->v.b, &v, sizeof v); else ls->v.p = block;
    r->slot = at == SIZE_MAX ? MGUARD__CR_INHUB : (uint32_t)at;
    r->meta = MGUARD__CR_LIVE | (n - 1) << 2 | nd << 4;
    c->seqs[pos] = (uint32_t)(c->next_seq++ - c->sbase);
    r->x.u = 0;
    if (more) {
        for (i = 0; i < kofs; i++) more[i] = keys[i];
        for (i = 0; i < nd; i++) more[kofs + i] = deps[i].obj;
        r->x.more = more;
    } else if (nd) {
        r->x.dep = deps[0].obj;
    }
    hdep = mguard__hub_hpos(MGUARD__CS_DEP | pos);
    for (i = 1; i < n; i++) (void)mguard__clink_put(c, keys[i], MGUARD__CS_DEP | pos, hdep, &at);
    for (i = 0; i < nd; i++) mguard__clink_put(c, deps[i].obj, MGUARD__CS_DEP | pos, hdep, &at)->v.cp = mguard__str_take(deps[i].attr);
    if (MGUARD__CACHE_BOUNDED(c)) {
        c->lru[pos].cost = cost;
        mguard__lru_push(c, pos + 1);
        mguard__cache_cost_add(c, cost);
    }
    c->live++;
    c->stats.stored++;
    why.cause = MGUARD_CACHE_EVICTION;
    while ((c->capacity && c->live > c->capacity) || MGUARD__CACHE_OVER_COST(c)) {
        if (c->oldest == pos + 1) break;
        mguard__cache_drop(c, c->oldest - 1, &why, NULL, q);
    }
    return MGUARD_OK;
}

static mguard_status mguard__cache_set(mguard_cache *c, const void *const *keys, size_t nkeys, const void *value, size_t cost)
{
    mguard_ctx *ctx;
    mguard__evq q;
    mguard_status st;
    const void *kcopy[MGUARD_CACHE_MAX_KEYS];
    unsigned char small[MGUARD__KX_INSLOT];
    if (!mguard__cache_ok(c, "mguard_cache_set")) return MGUARD_EINVAL;
    ctx = c->ctx;
    if (!value || c->destroying) {
        mguard__logf(ctx, !value ? MGUARD_LOG_NULL_ARG : MGUARD_LOG_HANDLE_DESTROYING, "mguard_cache_set", !value ? "value" : "cache");
        return MGUARD_EINVAL;
    }
    if (!mguard__cache_keys_ok(c, keys, nkeys, "mguard_cache_set")) return MGUARD_EINVAL;
    /* the keys, and a value of 8 bytes or less, may lie in the context's
       index (read with mguard_weak_get), which storing may move: copies */
    memcpy(kcopy, keys, nkeys * sizeof *keys);
    if (c->inslot) {
        memcpy(small, value, c->value_size);
        value = small;
    }
    st = mguard__refuse_dying(ctx, kcopy, nkeys, "mguard_cache_set");
    if (st) return st;
    memset(&q, 0, sizeof q);
    st = mguard__cache_put(c, kcopy, (uint32_t)nkeys, value, NULL, NULL, 0, cost, &q);
    if (st) { mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_cache_set"); return st; }
    mguard__cache_settle(c, &q, NULL);
    return MGUARD_OK;
}

/* ---- lookups ---- */

static void mguard__cache_log_miss(mguard_cache *c, const void *const *keys, size_t nkeys);

/* The value at lookup slot s. */
static void *mguard__cache_value(const mguard_cache *c, mguard__kslot *s) { return c->inslot ? (void *)s->v.b : s->v.p; }

/* The tuple's value, counted as a hit (made most recently used) or a miss. */
static void *mguard__cache_lookup(mguard_cache *c, const void *const *keys, size_t nkeys)
{
    mguard__kslot *s = mguard__cache_find(c, keys, nkeys);
    if (!s) {
        c->stats.misses++;
        if (c->log_reasons) mguard__cache_log_miss(c, keys, nkeys);
        return NULL;
    }
    c->stats.hits++;
    if (MGUARD__CACHE_BOUNDED(c)) {
        uint32_t p = (s->pos & MGUARD__CS_POS) + 1;
        if (c->newest != p) {
            mguard__lru_unlink(c, p);
            mguard__lru_push(c, p);
        }
    }
    return mguard__cache_value(c, s);
}

/* Every get but a one-key hit in the first group of an unbounded cache (checked, counted, logged there). */
static MGUARD__NOINLINE void *mguard__cache_get_slow(mguard_cache *c, const void *const *keys, size_t nkeys)
{
    if (!mguard__cache_keys_ok(c, keys, nkeys, "mguard_cache_get")) return NULL;
    return mguard__cache_lookup(c, keys, nkeys);
}

static MGUARD__HOT void *mguard__cache_get(mguard_cache *c, const void *const *keys, size_t nkeys)
{
    if (!mguard__cache_ok(c, "mguard_cache_get")) return NULL;
    if (nkeys == 1 && keys && (c->magic == MGUARD__MAGIC_CACHE || c->unbounded)) {
        /* the common case, written out as mguard_weak_get is: one key, no
           LRU to touch, the first group of the probe (a NULL key matches
           no slot: the slow path refuses it) */
        const mguard__kx *kx = &c->ctx->kx;
        const void *key = keys[0];
        uint64_t h = mguard__hash64(key);
        size_t at = MGUARD__KX_HOME(kx, h);
        uint64_t g, m;
        uint32_t tid = MGUARD__CTID(c);
        MGUARD__KX_PREFETCH(kx, at);
        g = mguard__kx_load(kx->ctrl + at);
        for (m = mguard__kx_match(g, MGUARD__KX_TAG(h)); m; m &= m - 1) {
            mguard__kslot *s = &kx->slots[at + mguard__kx_bit(m)];
            if (s->key == key && s->tid == tid && (s->pos >> 28) == 0) {
                c->stats.hits++;
                return c->inslot ? (void *)s->v.b : s->v.p;
            }
        }
    }
    return mguard__cache_get_slow(c, keys, nkeys);
}

static mguard_status mguard__cache_get_copy(mguard_cache *c, const void *const *keys, size_t nkeys, void *out)
{
    const unsigned char *v;
    if (!mguard__cache_ok(c, "mguard_cache_get_copy")) return MGUARD_EINVAL;
    if (!mguard__cache_keys_ok(c, keys, nkeys, "mguard_cache_get_copy")) return MGUARD_EINVAL;
    if (!out) { mguard__logf(c->ctx, MGUARD_LOG_NULL_ARG, "mguard_cache_get_copy", "out"); return MGUARD_EINVAL; }
    v = (const unsigned char *)mguard__cache_lookup(c, keys, nkeys);
    if (!v) return MGUARD_NOT_FOUND;
    memmove(out, v, c->value_size);   /* out may be the value itself */
    return MGUARD_OK;
}

static bool mguard__cache_contains(const mguard_cache *c, const void *const *keys, size_t nkeys)
{
    if (!mguard__cache_ok(c, "mguard_cache_contains") || !mguard__cache_keys_ok(c, keys, nkeys, "mguard_cache_contains")) return false;
    return mguard__cache_find(c, keys, nkeys) != NULL;
}

static size_t mguard__cache_count(const mguard_cache *c) { return mguard__cache_ok(c, "mguard_cache_count") ? c->live : 0; }

/* The tuple's newest remembered reason whose keys live (their RING slots pin them:
   a key's death makes its reasons answer no more). */
static const mguard_cache_reason *mguard__cache_reason_of(const mguard_cache *c, const void *const *keys, size_t n)
{
    uint32_t i, rp;
    size_t k;
    for (i = 0; i < c->nring; i++) {
        const mguard_cache_reason *r;
        rp = (c->ringpos + MGUARD_CACHE_REASONS - 1 - i) % MGUARD_CACHE_REASONS;   /* the newest first */
        r = &c->ring[rp];
        if (!c->ringlive[rp] || r->nkeys != n) continue;
        for (k = 0; k < n && r->keys[k] == keys[k]; k++) {}
        if (k == n) return r;
    }
    return NULL;
}

static void mguard__cache_log_miss(mguard_cache *c, const void *const *keys, size_t nkeys)
{
    mguard__cache_log(c, "miss", keys, nkeys, " after ", mguard__cache_reason_of(c, keys, nkeys), true);
}

static mguard_status mguard__cache_last_reason(const mguard_cache *c, const void *const *keys, size_t nkeys, mguard_cache_reason *out)
{
    const mguard_cache_reason *r;
    if (!mguard__cache_ok(c, "mguard_cache_last_reason")) return MGUARD_EINVAL;
    if (!out) { mguard__logf(c->ctx, MGUARD_LOG_NULL_ARG, "mguard_cache_last_reason", "out"); return MGUARD_EINVAL; }
    if (!mguard__cache_keys_ok(c, keys, nkeys, "mguard_cache_last_reason")) return MGUARD_EINVAL;
    r = mguard__cache_reason_of(c, keys, nkeys);
    if (!r) return MGUARD_NOT_FOUND;
    *out = *r;
    return MGUARD_OK;
}

/* ---- get or compute ---- */

/* The job's end: off the root's jobs, its references and arrays given back. */
static void mguard__job_end(mguard_ctx *ctx, mguard_cache_job *job)
{
    mguard_cache_job **pp;
    uint32_t i;
    for (pp = &MGUARD__CROOT(ctx)->jobs; *pp != job; pp = &(*pp)->next) {}
    *pp = job->next;
    ctx->hear_all--;
    job->magic = 0;
    ctx->kx_held -= job->held;
    job->held = 0;
    for (i = 0; i < job->ndeps; i++) mguard__str_release(ctx, job->deps[i].attr);
    mguard__free(ctx, job->deps);
    mguard__free(ctx, job->set);
}

/* A computed value no cache will hold: destroyed now (its destructor run when computed), its block freed. */
static void mguard__cache_discard(mguard_cache *c, void *val, void *block, bool computed)
{
    mguard_ctx *ctx = c->ctx;
    mguard_value_dtor dtor = c->dtor;
    void *user = c->user;
    if (computed && dtor) MGUARD__CALLOUT(ctx, dtor(val, user));
    mguard__free(ctx, block);
}

/* A miss holds c (busy) from its first callback to its return: a destroy asked by any
   callback of the call (the compute, or a value destructor: a parked value's, an
   overwritten or evicted one's) is finished when the call returns, never under it. */
static void *mguard__cache_get_or_compute(mguard_cache *c, const void *const *keys, size_t nkeys,
                                          mguard_cache_compute_fn compute, void *user, mguard_status *status)
{
    mguard_ctx *ctx;
    mguard__evq q;
    mguard_cache_job job;
    mguard_status st = MGUARD_EINVAL, ignored;
    void *out = NULL, *val, *block = NULL;
    union { uint64_t u; unsigned char b[8]; } small;
    mguard__lookout look[MGUARD_CACHE_MAX_KEYS];
    size_t i;
    int told = 0;
    if (!status) status = &ignored;
    *status = MGUARD_EINVAL;
    if (!mguard__cache_ok(c, "mguard_cache_get_or_compute")) return NULL;
    ctx = c->ctx;
    if (!compute || c->destroying) {
        mguard__logf(ctx, !compute ? MGUARD_LOG_NULL_ARG : MGUARD_LOG_HANDLE_DESTROYING, "mguard_cache_get_or_compute", !compute ? "compute" : "cache");
        return NULL;
    }
    if (!mguard__cache_keys_ok(c, keys, nkeys, "mguard_cache_get_or_compute")) return NULL;
    memset(&job, 0, sizeof job);
    /* the key tuple may lie in the context's index (read with
       mguard_weak_get), which a callout below may move: a copy */
    memcpy(job.keys, keys, nkeys * sizeof *keys);
    job.nkeys = (uint32_t)nkeys;
    /* busy from the lookup on (a miss's log line waits for the next
       callout: mguard__logq, where the logger may destroy c) */
    c->busy++;
    out = mguard__cache_lookup(c, job.keys, nkeys);
    if (out) {   /* a hit calls nothing out */
        c->busy--;
        *status = MGUARD_OK;
        return out;
    }
    /* the parked value's destructor, then the logger of the lines queued so
       far (the miss), run before compute: the keys watched across them */
    for (i = 0; i < nkeys; i++) {
        look[i].obj = job.keys[i];
        look[i].died = false;
        look[i].next = i ? &look[i - 1] : ctx->lookouts;
    }
    /* cppcheck-suppress autoVariables ; popped before this function returns */
    ctx->lookouts = &look[nkeys - 1];
    mguard__cache_unpark(c);
    MGUARD__FLUSH(ctx);
    for (i = nkeys; i-- > 0;) mguard__lookout_pop(ctx, &look[i]);
    if (c->destroying) goto done;   /* by the parked value's destructor or a logger */
    for (i = 0; i < nkeys; i++)
        if (look[i].died) {   /* no compute of a key destroyed meanwhile */
            mguard__logf(ctx, MGUARD_LOG_CACHE_KEY_GONE, "mguard_cache_get_or_compute", job.keys[i]);
            st = MGUARD_EINVAL;
            goto done;
        }
    st = mguard__refuse_dying(ctx, job.keys, nkeys, "mguard_cache_get_or_compute");
    if (st) goto done;
    small.u = 0;
    if (c->inslot) val = small.b;
    else if ((val = block = mguard__alloc(ctx, c->value_size)) != NULL) memset(block, 0, c->value_size);
    if ((!c->inslot && !block) || mguard__kx_reserve(ctx, nkeys)) {   /* and the room its reason's keys may need */
        mguard__free(ctx, block);
        st = MGUARD_ENOMEM;
        mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_cache_get_or_compute");
        goto done;
    }
    ctx->kx_held += nkeys;
    job.held = (uint32_t)nkeys;
    job.magic = MGUARD__MAGIC_JOB;
    job.c = c;
    job.next = MGUARD__CROOT(ctx)->jobs;
    /* cppcheck-suppress autoVariables ; off the list before this function returns */
    MGUARD__CROOT(ctx)->jobs = &job;
    ctx->hear_all++;
    MGUARD__CALLOUT(ctx, st = compute(&job, val, user));
    memset(&q, 0, sizeof q);
    if (c->destroying || st) {
        mguard__job_end(ctx, &job);
        mguard__cache_discard(c, val, block, !st);
        if (c->destroying) {
            mguard__logf(ctx, MGUARD_LOG_CACHE_GONE_IN_COMPUTE, "mguard_cache_get_or_compute");
            told = 1;
        }
    } else if (job.stale) {
        /* a dependency changed while compute ran: hand the value out, keep
           it off the cache, destroy it at the next change */
        uint64_t seq;
        mguard__job_end(ctx, &job);
        c->stats.stale++;
        seq = mguard__cache_park(c, c->inslot ? (const void *)small.b : NULL, block);
        out = c->parked;
        st = MGUARD_NOT_FOUND;
        if (out && c->parkseq != seq) out = NULL;   /* park's callout parked another */
    } else if ((st = mguard__cache_put(c, job.keys, job.nkeys, val, block, job.deps, job.ndeps, job.cost, &q)) != MGUARD_OK) {
        mguard__job_end(ctx, &job);
        mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_cache_get_or_compute");
        mguard__cache_discard(c, val, block, true);
    } else {
        mguard__kslot *s;
        mguard__job_end(ctx, &job);
        mguard__cache_finish(ctx, &q);
        /* the destructors may have changed c: answer what it holds now */
        s = c->destroying ? NULL : mguard__cache_find(c, job.keys, nkeys);
        st = s ? MGUARD_OK : MGUARD_NOT_FOUND;
        out = s ? mguard__cache_value(c, s) : NULL;
    }
done:
    c->busy--;
    if (c->destroying) {
        if (!told) mguard__logf(ctx, MGUARD_LOG_CACHE_GONE_IN_DTOR, "mguard_cache_get_or_compute");
        out = NULL;
        st = MGUARD_EINVAL;
        if (!c->busy) mguard__cache_destroy_now(c);
    }
    *status = st;
    return out;
}

static bool mguard__job_ok(const mguard_cache_job *job) { return job && job->magic == MGUARD__MAGIC_JOB; }

static mguard_status mguard__cache_job_depend(mguard_cache_job *job, const void *obj, const char *attr)
{
    mguard_ctx *ctx;
    const char *ia = NULL;
    mguard_cache_reason why;
    uint32_t i;
    if (!mguard__job_ok(job)) return MGUARD_EINVAL;
    ctx = job->c->ctx;
    if (!obj) { mguard__logf(ctx, MGUARD_LOG_NULL_ARG, "mguard_cache_job_depend", "object"); return MGUARD_EINVAL; }
    memset(&why, 0, sizeof why);
    if (mguard__refuse_dying(ctx, &obj, 1, "mguard_cache_job_depend")) {
        why.cause = MGUARD_CACHE_DEATH;
        why.obj = obj;
        if (!job->stale) mguard__job_spoil(job, &why, NULL);
        return MGUARD_EINVAL;
    }
    if (job->stale) return MGUARD_OK;   /* not stored anyway */
    /* covered already: a key, the whole object, the same attribute */
    if (attr) ia = mguard__str_find(ctx, attr);
    for (i = 0; i < job->nkeys; i++)
        if (job->keys[i] == obj) return MGUARD_OK;
    if (job->set) {
        if (mguard__cpair_has(job, obj, NULL) || (ia && mguard__cpair_has(job, obj, ia))) return MGUARD_OK;
    } else {
        for (i = 0; i < job->ndeps; i++)
            if (job->deps[i].obj == obj && (!job->deps[i].attr || job->deps[i].attr == ia)) return MGUARD_OK;
    }
    /* the job's reference */
    if ((attr && !(ia = ia ? mguard__str_take(ia) : mguard__str_intern(ctx, attr))) ||
        job->ndeps >= MGUARD__CS_MAXPOS ||
        mguard__reserve(ctx, (void **)&job->deps, &job->capdeps, (size_t)job->ndeps + 1, sizeof *job->deps)) {
        mguard__str_release(ctx, ia);
        mguard__logf(ctx, MGUARD_LOG_CACHE_NOT_STORED, "mguard_cache_job_depend");
        mguard__job_spoil(job, &why, NULL);
        return MGUARD_ENOMEM;
    }
    job->deps[job->ndeps].obj = obj;
    job->deps[job->ndeps].attr = ia;
    job->ndeps++;
    mguard__cpair_added(ctx, job);
    return MGUARD_OK;
}

static mguard_status mguard__cache_job_set_cost(mguard_cache_job *job, size_t cost)
{
    if (!mguard__job_ok(job)) return MGUARD_EINVAL;
    job->cost = cost;
    return MGUARD_OK;
}

static const void *mguard__cache_job_key(const mguard_cache_job *job, size_t i)
{
    return mguard__job_ok(job) && i < job->nkeys ? job->keys[i] : NULL;
}

/* Is there a DEP slot of c's entry pos on obj covering ia (the whole object, or ia)? */
static bool mguard__cache_has_dep(const mguard_cache *c, uint32_t pos, const void *obj, const char *ia)
{
    const mguard__kx *kx = &c->ctx->kx;
    mguard__kwalk p;
    size_t k;
    uint32_t tid = MGUARD__CTID(c);
    const mguard__kslot *hb = NULL;
    uint32_t mask, i;
    MGUARD__KWALK_EACH(p, kx, obj, k) {
        const mguard__kslot *s = &kx->slots[k];
        if (s->key != obj || s->tid != tid) continue;
        if (s->pos == MGUARD__CS_HUB) hb = (const mguard__kslot *)s->v.p;
        if (s->pos == (MGUARD__CS_DEP | pos) && (!s->v.cp || s->v.cp == (const void *)ia)) return true;
    }
    if (!hb) return false;
    mask = hb[0].pos;
    for (i = mguard__hub_hpos(MGUARD__CS_DEP | pos) & mask; MGUARD__HUB_AT(hb, i)->pos; i = (i + 1) & mask) {
        const mguard__kslot *s = MGUARD__HUB_AT(hb, i);
        if (s->pos == (MGUARD__CS_DEP | pos) && (!s->v.cp || s->v.cp == (const void *)ia)) return true;
    }
    return false;
}

static mguard_status mguard__cache_depend(mguard_cache *c, const void *const *keys, size_t nkeys, const void *obj, const char *attr)
{
    mguard_ctx *ctx;
    mguard__crec *r;
    const char *ia = NULL;
    const void *const *tk;
    const void **more;
    mguard__kslot *s;
    size_t at;
    uint32_t pos, nd, kofs, i;
    if (!mguard__cache_ok(c, "mguard_cache_depend")) return MGUARD_EINVAL;
    ctx = c->ctx;
    if (!obj) { mguard__logf(ctx, MGUARD_LOG_NULL_ARG, "mguard_cache_depend", "object"); return MGUARD_EINVAL; }
    if (!mguard__cache_keys_ok(c, keys, nkeys, "mguard_cache_depend")) return MGUARD_EINVAL;
    s = mguard__cache_find(c, keys, nkeys);
    if (!s) return MGUARD_NOT_FOUND;
    pos = s->pos & MGUARD__CS_POS;
    r = &c->recs[pos];
    tk = mguard__crec_keys(c, r);
    for (i = 0; i < MGUARD__CR_NK(r); i++)
        if (tk[i] == obj) return MGUARD_OK;
    if (attr) ia = mguard__str_find(ctx, attr);
    if (mguard__cache_has_dep(c, pos, obj, ia)) return MGUARD_OK;
    if (mguard__refuse_dying(ctx, &obj, 1, "mguard_cache_depend")) return MGUARD_EINVAL;
    /* the slot's reference, room in the index, room in the record's array
       (in that order: out of memory, nothing changed) */
    if (attr && !(ia = ia ? mguard__str_take(ia) : mguard__str_intern(ctx, attr))) goto oom;
    if (mguard__kx_reserve(ctx, 1)) goto oom;
    r = &c->recs[pos];   /* the index may have moved: the record did not */
    nd = MGUARD__CR_ND(r);
    kofs = MGUARD__CR_KOFS(r);
    if (nd >= MGUARD__CS_MAXPOS) goto oom;
    if (kofs || nd) {   /* the array holds them (it may have to be made) */
        const void **cur = MGUARD__CR_MORE(r) ? r->x.more : NULL;
        if ((cur ? mguard__cap2(kofs + nd) : 0) < kofs + nd + 1) {
            more = (const void **)mguard__realloc(ctx, (void *)cur, mguard__cap2(kofs + nd + 1) * sizeof *more);
            if (!more) goto oom;
            if (!cur) more[0] = r->x.dep;   /* one key, the inline dependency */
            r->x.more = more;
        }
        r->x.more[kofs + nd] = obj;
    } else {
        r->x.dep = obj;
    }
    r->meta += 1u << 4;
    mguard__clink_put(c, obj, MGUARD__CS_DEP | pos, mguard__hub_hpos(MGUARD__CS_DEP | pos), &at)->v.cp = ia;
    return MGUARD_OK;
oom:
    mguard__str_release(ctx, ia);
    mguard__logf(ctx, MGUARD_LOG_NOMEM, "mguard_cache_depend");
    return MGUARD_ENOMEM;
}

/* The tuple's entry leaves c: its value copied into out, or (NULL out) destroyed. */
static mguard_status mguard__cache_take(mguard_cache *c, const void *const *keys, size_t nkeys, void *out)
{
    mguard__kslot *s;
    mguard__evq q;
    mguard_cache_reason why;
    if (!mguard__cache_ok(c, "mguard_cache_take") || !mguard__cache_keys_ok(c, keys, nkeys, "mguard_cache_take")) return MGUARD_EINVAL;
    memset(&q, 0, sizeof q);
    memset(&why, 0, sizeof why);
    why.cause = MGUARD_CACHE_EXPLICIT;
    s = mguard__cache_find(c, keys, nkeys);
    if (s) mguard__cache_drop(c, s->pos & MGUARD__CS_POS, &why, NULL, &q);
    mguard__cache_settle(c, &q, out);
    return s ? MGUARD_OK : MGUARD_NOT_FOUND;
}

/* ---- iteration, statistics, reasons ---- */

static mguard_cache_iter mguard__cache_iterate(mguard_cache *c)
{
    mguard_cache_iter it;
    memset(&it, 0, sizeof it);
    if (mguard__cache_ok(c, "mguard_cache_iterate")) {
        it.c_ = c;
        it.bound_ = c->next_seq;
    }
    return it;
}

static bool mguard__cache_next(mguard_cache_iter *it)
{
    mguard_cache *c;
    if (!it || !it->c_) return false;
    c = it->c_;
    if (!mguard__cache_ok(c, "mguard_cache_next")) {
        it->c_ = NULL;
        return false;
    }
    if (c->rebased && it->bound_ <= c->sbase) {
        /* 2^32 entries stored while the walk was paused */
        mguard__logf(c->ctx, MGUARD_LOG_WALK_RENUMBERED, "mguard_cache_next", "cache");
        it->pos_ = c->nrec;
    }
    while (it->pos_ < c->nrec) {
        const mguard__crec *r = &c->recs[it->pos_];
        size_t hk;
        uint32_t hi;
        it->pos_++;
        if (MGUARD__CR_STATE(r) != MGUARD__CR_LIVE || c->sbase + c->seqs[it->pos_ - 1] >= it->bound_) continue;
        it->keys = mguard__crec_keys(c, r);
        it->nkeys = MGUARD__CR_NK(r);
        it->value = mguard__cache_value(c, MGUARD__CREC_LSLOT(c, r, (uint32_t)(it->pos_ - 1), &hk, &hi));
        return true;
    }
    it->keys = NULL;
    it->nkeys = 0;
    it->value = NULL;
    it->c_ = NULL;
    return false;
}

static mguard_status mguard__cache_get_stats(const mguard_cache *c, mguard_cache_stats *out)
{
    if (!mguard__cache_ok(c, "mguard_cache_get_stats")) return MGUARD_EINVAL;
    if (!out) { mguard__logf(c->ctx, MGUARD_LOG_NULL_ARG, "mguard_cache_get_stats", "out"); return MGUARD_EINVAL; }
    *out = c->stats;
    return MGUARD_OK;
}

static size_t mguard__cache_format(const mguard_cache *c, char *buf, size_t cap)
{
    const mguard_cache_stats *s;
    int n;
    if (buf && cap) *buf = '\0';
    if (!mguard__cache_ok(c, "mguard_cache_format")) return 0;
    s = &c->stats;
    n = snprintf(buf, buf ? cap : 0,
                 "%s: %lu entries, %llu hits, %llu misses, %llu stored; dropped: %llu mutation, %llu death, "
                 "%llu eviction, %llu explicit; %llu replaced, %llu stale",
                 c->name, (unsigned long)c->live, (unsigned long long)s->hits, (unsigned long long)s->misses,
                 (unsigned long long)s->stored, (unsigned long long)s->mutations, (unsigned long long)s->deaths,
                 (unsigned long long)s->evictions, (unsigned long long)s->explicit_drops,
                 (unsigned long long)s->replaced, (unsigned long long)s->stale);
    return n > 0 ? (size_t)n : 0;
}

const char *mguard_cache_cause_str(mguard_cache_cause cause)
{
    switch (cause) {
    case MGUARD_CACHE_MUTATION: return "mutation";
    case MGUARD_CACHE_DEATH: return "death";
    case MGUARD_CACHE_EVICTION: return "eviction";
    case MGUARD_CACHE_EXPLICIT: return "explicit";
    }
    return "unknown";
}

size_t mguard_cache_reason_format(const mguard_cache_reason *r, char *buf, size_t cap)
{
    int n;
    if (buf == NULL) cap = 0;
    if (cap) *buf = '\0';
    if (!r) return 0;
    if (r->cause == MGUARD_CACHE_MUTATION || r->cause == MGUARD_CACHE_DEATH) {
        char addr[32];
        snprintf(addr, sizeof addr, "%p", r->obj);
        n = snprintf(buf, cap, "%s of %s%s%s", mguard_cache_cause_str(r->cause), r->obj_name ? r->obj_name : addr,
                     r->attr ? "." : "", r->attr ? r->attr : "");
        if (n >= 0 && r->file) {   /* the place, appended: a file name of any length */
            size_t k = (size_t)n < cap ? (size_t)n : cap - (cap > 0);
            int m = snprintf(cap ? buf + k : NULL, cap - k, " at %s:%d", r->file, r->line);
            n = m > 0 ? n + m : n;
        }
    } else {
        n = snprintf(buf, cap, "%s", mguard_cache_cause_str(r->cause));
    }
    return n > 0 ? (size_t)n : 0;
}

/* ---- the check ---- */

static mguard_status mguard__cache_check(mguard_ctx *ctx, const mguard_cache *c)
{
    uint32_t pos, live = 0, nlru = 0, p, i, hi;
    size_t cost = 0, carry = 0, slots = 0, hk;   /* the exact sum, summed here on its own */
    const mguard__kslot *hb, *ls;
    MGUARD__CHECK(ctx, mguard__cache_ok(c, "mguard_ctx_check") && MGUARD__CROOT(ctx)->ctabs[c->cid] == c, "cache list holds a dead cache");
    for (pos = 0; pos < c->nrec; pos++) {
        const mguard__crec *r = &c->recs[pos];
        const void *const *keys;
        uint32_t nk, nd;
        if (MGUARD__CR_STATE(r) != MGUARD__CR_LIVE) continue;
        live++;
        nk = MGUARD__CR_NK(r);
        nd = MGUARD__CR_ND(r);
        slots += nk + nd;
        if (r->slot == MGUARD__CR_INHUB) {
            MGUARD__CHECK(ctx, nk > 1 && (hk = mguard__hub_slot(c, r->x.more[0])) != SIZE_MAX, "cache %p: entry %u: its hub is missing", (const void *)c, pos);
            hb = MGUARD__HUB(&ctx->kx, hk);
            hi = mguard__hub_find(hb, mguard__hub_htuple(r->x.more, nk), (nk - 1) << 28 | pos);
            MGUARD__CHECK(ctx, hi <= hb[0].pos, "cache %p: entry %u: its hub does not name it", (const void *)c, pos);
            ls = MGUARD__HUB_AT(hb, hi);
        } else {
            MGUARD__CHECK(ctx, r->slot <= ctx->kx.mask && ctx->kx.slots[r->slot].tid == MGUARD__CTID(c) &&
                               ctx->kx.slots[r->slot].pos == ((nk - 1) << 28 | pos), "cache %p: entry %u: its lookup slot does not name it", (const void *)c, pos);
            ls = &ctx->kx.slots[r->slot];
        }
        keys = mguard__crec_keys(c, r);
        MGUARD__CHECK(ctx, mguard__cache_find(c, keys, nk) == ls, "cache %p: entry %u not found by its keys", (const void *)c, pos);
        for (i = 1; i < nk; i++)
            MGUARD__CHECK(ctx, mguard__cache_has_dep(c, pos, keys[i], NULL), "cache %p: entry %u: key %u has no slot", (const void *)c, pos, i);
        for (i = 0; i < nd; i++)
            MGUARD__CHECK(ctx, mguard__kx_known(ctx, MGUARD__CR_DEP(r, i), mguard__hash64(MGUARD__CR_DEP(r, i))),
                          "cache %p: entry %u: dependency %u has no slot", (const void *)c, pos, i);
        if (MGUARD__CACHE_BOUNDED(c)) {
            cost += c->lru[pos].cost;
            if (cost < c->lru[pos].cost) carry++;
        }
    }
    for (i = 0; i < MGUARD_CACHE_REASONS; i++)
        if (c->ringlive[i]) slots += c->ring[i].nkeys;
    for (p = c->freehead, nlru = 0; p; p = c->recs[p - 1].slot)
        MGUARD__CHECK(ctx, p <= c->nrec && MGUARD__CR_STATE(&c->recs[p - 1]) == MGUARD__CR_FREE && ++nlru <= c->nfree,
                      "cache %p: the free positions' list", (const void *)c);
    MGUARD__CHECK(ctx, nlru == c->nfree && live == c->live && live + c->nfree + c->npend == c->nrec, "cache %p: %u live, counted %u", (const void *)c, c->live, live);
    nlru = 0;
    MGUARD__CHECK(ctx, slots <= c->nslots + c->nitems, "cache %p: %lu slots, %lu counted", (const void *)c, (unsigned long)(c->nslots + c->nitems), (unsigned long)slots);
    MGUARD__CHECK(ctx, cost == c->total_cost && carry == c->cost_carry, "cache %p: total cost %lu (+%lu wraps), counted %lu (+%lu wraps)",
                  (const void *)c, (unsigned long)c->total_cost, (unsigned long)c->cost_carry, (unsigned long)cost, (unsigned long)carry);
    for (p = c->newest; p; p = c->lru[p - 1].older) {
        MGUARD__CHECK(ctx, ++nlru <= live && p <= c->nrec && MGUARD__CR_STATE(&c->recs[p - 1]) == MGUARD__CR_LIVE, "cache %p: the LRU list", (const void *)c);
        MGUARD__CHECK(ctx, c->lru[p - 1].older ? c->lru[c->lru[p - 1].older - 1].newer == p : c->oldest == p, "cache %p: LRU links", (const void *)c);
    }
    MGUARD__CHECK(ctx, nlru == (MGUARD__CACHE_BOUNDED(c) ? live : 0), "cache %p: %u on the LRU list, %u live", (const void *)c, nlru, live);
    return MGUARD_OK;
}

/* Hub slot s (index k) of c: a count that counts, each element where a lookup
   from its hash finds it, naming a LIVE entry of c (a lookup element: one that says
   it lies in this hub) or a ring slot. */
static mguard_status mguard__hub_check(mguard_ctx *ctx, const mguard_cache *c, const mguard__kslot *s, size_t k)
{
    const mguard__kslot *hb = (const mguard__kslot *)s->v.p;
    uint32_t mask = hb[0].pos, i, j, n = 0;
    MGUARD__CHECK(ctx, mask >= 2 * MGUARD__HUB_AFTER - 1 && !(mask & (mask + 1)), "index: slot %lu: a hub of %u elements", (unsigned long)k, mask + 1);
    for (i = 0; i <= mask; i++) {
        const mguard__kslot *e = MGUARD__HUB_AT(hb, i);
        uint32_t pos = e->pos & MGUARD__CS_POS;
        if (!e->pos) continue;
        n++;
        for (j = e->tid & mask; j != i && MGUARD__HUB_AT(hb, j)->pos; j = (j + 1) & mask) {}
        MGUARD__CHECK(ctx, j == i && e->key == s->key, "index: slot %lu: hub element %u is not where its hash finds it", (unsigned long)k, i);
        if (e->pos & MGUARD__CS_RING) {
            MGUARD__CHECK(ctx, (e->pos & ~MGUARD__CS_RING) < MGUARD_CACHE_REASONS && e->tid == mguard__hub_hpos(e->pos),
                          "index: slot %lu: hub element %u: a ring slot out of range", (unsigned long)k, i);
            continue;
        }
        MGUARD__CHECK(ctx, pos < c->nrec && MGUARD__CR_STATE(&c->recs[pos]) == MGUARD__CR_LIVE, "index: slot %lu: hub element %u: cache %p's entry %u is not live",
                      (unsigned long)k, i, (const void *)c, pos);
        MGUARD__CHECK(ctx, (e->pos & MGUARD__CS_DEP) ? e->tid == mguard__hub_hpos(e->pos) :
                           c->recs[pos].slot == MGUARD__CR_INHUB && MGUARD__CR_NK(&c->recs[pos]) > 1 && c->recs[pos].x.more[0] == s->key &&
                           e->tid == mguard__hub_htuple(c->recs[pos].x.more, MGUARD__CR_NK(&c->recs[pos])),
                      "index: slot %lu: hub element %u: cache %p's entry %u does not point back", (unsigned long)k, i, (const void *)c, pos);
    }
    MGUARD__CHECK(ctx, n == hb[0].tid && n && n * 4 <= (mask + 1) * 3, "index: slot %lu: a hub of %u slots counts %u", (unsigned long)k, n, hb[0].tid);
    return MGUARD_OK;
}

/* A cache slot of the index (slot k): it names a live cache and a LIVE
   entry that points back (LOOKUP) or lists it (DEP). */
static mguard_status mguard__cache_check_slot(mguard_ctx *ctx, const mguard__kslot *s, size_t k)
{
    uint32_t cid = s->tid & ~MGUARD__TID_CACHE, pos = s->pos & MGUARD__CS_POS;
    const mguard__croot *cr = MGUARD__CROOT(ctx);
    const mguard_cache *c;
    MGUARD__CHECK(ctx, cid && cid < cr->nctabs && mguard__cache_ok(cr->ctabs[cid], "mguard_ctx_check") &&
                       cr->ctabs[cid]->cid == cid, "index: slot %lu names cache id %u, not a live cache", (unsigned long)k, cid);
    c = cr->ctabs[cid];
    if (s->pos == MGUARD__CS_HUB) return mguard__hub_check(ctx, c, s, k);
    if (s->pos & MGUARD__CS_RING) {
        MGUARD__CHECK(ctx, (s->pos & ~MGUARD__CS_RING) < MGUARD_CACHE_REASONS, "index: slot %lu: a ring slot out of range", (unsigned long)k);
        return MGUARD_OK;
    }
    MGUARD__CHECK(ctx, pos < c->nrec && MGUARD__CR_STATE(&c->recs[pos]) == MGUARD__CR_LIVE, "index: slot %lu: cache %p's entry %u is not live", (unsigned long)k, (const void *)c, pos);
    MGUARD__CHECK(ctx, (s->pos & MGUARD__CS_DEP) || c->recs[pos].slot == k, "index: slot %lu: cache %p's entry %u does not point back", (unsigned long)k, (const void *)c, pos);
    return MGUARD_OK;
}

/* mguard_ctx_check's part: every cache, their slots and the computes' room. */
static mguard_status mguard__croot_check(mguard__part *p)
{
    const mguard__croot *cr = (const mguard__croot *)(void *)p;
    mguard_ctx *ctx = cr->ctx;
    const mguard_cache *c;
    const mguard_cache_job *job;
    size_t n = 0;
    for (c = cr->caches; c; c = c->next) {
        if (mguard__cache_check(ctx, c)) return MGUARD_EINVAL;
        n += c->nslots;
    }
    MGUARD__CHECK(ctx, n == ctx->npslots, "caches: %lu slots in the index, %lu counted", (unsigned long)ctx->npslots, (unsigned long)n);
    for (job = cr->jobs, n = 0; job; job = job->next) n += job->held;
    MGUARD__CHECK(ctx, n == ctx->kx_held && ctx->kx.growth_left >= n, "caches: the computes hold room for %lu slots, counted %lu (%lu free)",
                  (unsigned long)ctx->kx_held, (unsigned long)n, (unsigned long)ctx->kx.growth_left);
    return MGUARD_OK;
}

/* mguard_ctx_destroy's loop: one cache, or the root once none is left. */
static void mguard__croot_destroy(mguard__part *p)
{
    mguard__croot *cr = (mguard__croot *)(void *)p;
    if (cr->caches) {
        mguard__cache_destroy(cr->caches);
        return;
    }
    cr->ctx->evpart = NULL;
    mguard__free(cr->ctx, cr->ctabs);
    mguard__free(cr->ctx, cr);
}

/* The root, made with the first cache (ENOMEM: none); its hooks. */
static const mguard__evpart mguard__croot_hooks = { { NULL, NULL, mguard__croot_destroy, mguard__croot_check },
    mguard__cache_event, mguard__cache_name_ev, mguard__cache_finish_one, mguard__cache_moved, mguard__cache_check_slot };
static mguard__croot *mguard__croot_ensure(mguard_ctx *ctx)
{
    mguard__croot *cr = MGUARD__CROOT(ctx);
    if (cr || !(cr = (mguard__croot *)mguard__alloc(ctx, sizeof *cr))) return cr;
    memset(cr, 0, sizeof *cr);
    cr->ep = mguard__croot_hooks;
    cr->ctx = ctx;
    ctx->evpart = &cr->ep;
    return cr;
}
#endif /* MGUARD_NO_CACHE */

/* ======================================================================= */
/* >>threads: 11. threads: setting up the lock, finding it, the locked variants */
/* ======================================================================= */

/* Set up ctx->lk for a thread-safe desc. false (logged through the desc's
   logger, nothing allocated) for a half-given lock, for thread_safe
   without a lock where there are no pthreads, or out of memory. */
static bool mguard__lock_init(mguard_ctx *ctx, const mguard_ctx_desc *d)
{
    mguard__lock *lk;
    int err = -1;   /* a mguard_log_code */
    if (!d->thread_safe && !d->lock.lock_fn && !d->lock.unlock_fn) return true;
    if (!d->lock.lock_fn != !d->lock.unlock_fn) err = MGUARD_LOG_HALF_LOCK;
#if !defined(MGUARD__PTHREADS)
    else if (!d->lock.lock_fn) err = MGUARD_LOG_NO_PTHREADS;
#endif
    if (err < 0) {
        lk = (mguard__lock *)mguard__alloc(ctx, sizeof *lk);
        if (!lk) err = MGUARD_LOG_NOMEM;
    }
    if (err >= 0) {
        mguard__log_now(ctx->log, err, "mguard_ctx_create");
        return false;
    }
    memset(lk, 0, sizeof *lk);
    lk->lock_fn = d->lock.lock_fn;
    lk->unlock_fn = d->lock.unlock_fn;
    lk->user = d->lock.user;
    lk->q = &ctx->logq;
#ifdef MGUARD__PTHREADS
    if (!lk->lock_fn) {
        if (pthread_mutex_init(&lk->mutex, NULL) != 0) {
            mguard__free(ctx, lk);
            mguard__log_now(ctx->log, MGUARD_LOG_LOCK_INIT_FAILED, "mguard_ctx_create");
            return false;
        }
        lk->lock_fn = mguard__pt_lock;
        lk->unlock_fn = mguard__pt_unlock;
        lk->user = &lk->mutex;
    }
#endif
    ctx->lk = lk;
    ctx->magic = MGUARD__MAGIC_CTX_TS;
    return true;
}

/* The end of mguard_ctx_destroy on a thread-safe context (the lock is
   held; the last log lines already taken out): let it go, and free it. */
static void mguard__lock_fini(mguard_ctx *ctx)
{
    mguard__lock *lk = ctx->lk;
    if (lk->gone) *lk->gone = true;
    ctx->lk = NULL;
    lk->unlock_fn(lk->user);
#ifdef MGUARD__PTHREADS
    if (lk->lock_fn == mguard__pt_lock) pthread_mutex_destroy(&lk->mutex);
#endif
    mguard__free(ctx, lk);
}

/* Where the wrappers find the context (and through it the lock, NULL on the default
   context). A handle the implementation will refuse gives NULL (no lock is needed to
   refuse it, and it logs nothing). The fields read here are written once, when the handle
   is created. Under MGUARD_DEBUG a handle is looked up among the live ones before it is
   read, as the implementation does (that registry itself is not thread-safe). */
static mguard_ctx *mguard__ctx_of_ctx(const mguard_ctx *ctx)
{
#ifdef MGUARD_DEBUG
    if (ctx && !mguard__dbg_ctx_live(ctx)) return NULL;
#endif
    return ctx && (ctx->magic | 1u) == MGUARD__MAGIC_CTX_TS ? (mguard_ctx *)mguard__unconst(ctx) : NULL;
}
static mguard_ctx *mguard__ctx_of_weak(const mguard_weak *t)
{
#ifdef MGUARD_DEBUG
    if (t && !mguard__dbg_h_live(t, MGUARD__DBG_WEAK)) return NULL;
#endif
    return t && MGUARD__MAGIC_IS(t->magic, MGUARD__MAGIC_WEAK) ? t->ctx : NULL;
}
static mguard_ctx *mguard__ctx_of_weak_iter(const mguard_weak_iter *it) { return it ? mguard__ctx_of_weak(it->t_) : NULL; }
#ifndef MGUARD_NO_CACHE
static mguard_ctx *mguard__ctx_of_cache(const mguard_cache *c)
{
#ifdef MGUARD_DEBUG
    if (c && !mguard__dbg_h_live(c, MGUARD__DBG_CACHE)) return NULL;
#endif
    return c && MGUARD__MAGIC_IS(c->magic, MGUARD__MAGIC_CACHE) ? c->ctx : NULL;
}
static mguard_ctx *mguard__ctx_of_cache_iter(const mguard_cache_iter *it) { return it ? mguard__ctx_of_cache(it->c_) : NULL; }
/* a job lives on the computing thread's stack; its fields are written before compute is called */
static mguard_ctx *mguard__ctx_of_job(const mguard_cache_job *job) { return job && job->magic == MGUARD__MAGIC_JOB ? job->c->ctx : NULL; }
#endif
#ifdef MGUARD__ADDONS
/* The context of an add-on handle, quietly NULL for one the implementation
   will refuse (a dead one is not read under MGUARD_DEBUG). */
static mguard_ctx *mguard__ctx_of_handle(const void *h, uint32_t magic, int kind)
{
    const mguard__handle *hd = (const mguard__handle *)h;
#ifdef MGUARD_DEBUG
    if (h && !mguard__dbg_h_live(h, kind)) return NULL;
#endif
    (void)kind;
    return hd && hd->magic == magic ? hd->ctx : NULL;
}
#endif
#ifndef MGUARD_NO_SCOPE
static mguard_ctx *mguard__ctx_of_scope(const mguard_scope *s) { return mguard__ctx_of_handle(s, MGUARD__MAGIC_SCOPE, MGUARD__DBG_SCOPE); }
#endif
#ifndef MGUARD_NO_DYN
static mguard_ctx *mguard__ctx_of_dyn(const mguard_dyn *d) { return mguard__ctx_of_handle(d, MGUARD__MAGIC_DYN, MGUARD__DBG_DYN); }
static mguard_ctx *mguard__ctx_of_dyn_iter(const mguard_dyn_iter *it) { return it ? mguard__ctx_of_dyn(it->d_) : NULL; }
#endif
#ifndef MGUARD_NO_LEDGER
static mguard_ctx *mguard__ctx_of_ledger(const mguard_ledger *L) { return mguard__ctx_of_handle(L, MGUARD__MAGIC_LEDGER, MGUARD__DBG_LEDGER); }
/* two ledgers: the first valid one's (the body logs a refusal of either through the other's) */
static mguard_ctx *mguard__ctx_of_ledger2(const mguard_ledger *a, const mguard_ledger *b)
{
    mguard_ctx *c = mguard__ctx_of_ledger(a);
    return c ? c : mguard__ctx_of_ledger(b);
}
static mguard_ctx *mguard__ctx_of_ledger_iter(const mguard_ledger_iter *it) { return it ? mguard__ctx_of_ledger(it->l_) : NULL; }
static mguard_ctx *mguard__ctx_of_diff(const mguard_ledger_diff_result *d) { return mguard__ctx_of_handle(d, MGUARD__MAGIC_LDIFF, MGUARD__DBG_DIFF); }
#endif

/* The locked variants, one per listed function: take the lock, run the
   body, let the lock go (delivering the lines it logged). Out of line, so
   that a public function's default path stays short. */
#define MGUARD__LOCKED_X(ret, name, params, args, ctxof) \
    static MGUARD__NOINLINE ret mguard__locked_##name params \
    { \
        mguard__lock *lk_ = (ctxof)->lk; \
        ret r_; \
        mguard__lock_acquire(lk_); \
        r_ = mguard__##name args; \
        mguard__lock_release(lk_); \
        return r_; \
    }
#define MGUARD__LOCKED_V(name, params, args, ctxof) \
    static MGUARD__NOINLINE void mguard__locked_##name params \
    { \
        mguard__lock *lk_ = (ctxof)->lk; \
        mguard__lock_acquire(lk_); \
        mguard__##name args; \
        mguard__lock_release(lk_); \
    }
MGUARD__API(MGUARD__LOCKED_X, MGUARD__LOCKED_V, MGUARD__LOCKED_X, MGUARD__LOCKED_X)
#undef MGUARD__LOCKED_X
#undef MGUARD__LOCKED_V

/* >>public: the public functions that touch a context, one per listed
   function (mguard_ctx_destroy is written out below). On a thread-safe context: the
   locked variant. On the default context: the body, then the lines it logged go to the
   logger (mguard__logq), once the call is done with every structure: a logger may call
   back in, destroy the handle it is told about included. A handle that will be refused
   has no context (c_ NULL): its body refuses it and logs nothing. */
#define MGUARD__PUBLIC_BODY(ret, name, args, ctxof) \
    { \
        mguard_ctx *c_ = ctxof; \
        ret r_; \
        if (c_ && c_->lk) return mguard__locked_##name args; \
        r_ = mguard__##name args; \
        if (c_ && c_->logq.n) mguard__log_flush(c_); \
        return r_; \
    }
#define MGUARD__PUBLIC_X(ret, name, params, args, ctxof) ret mguard_##name params MGUARD__PUBLIC_BODY(ret, name, args, ctxof)
#define MGUARD__PUBLIC_V(name, params, args, ctxof) \
    void mguard_##name params \
    { \
        mguard_ctx *c_ = ctxof; \
        if (c_ && c_->lk) { \
            mguard__locked_##name args; \
            return; \
        } \
        mguard__##name args; \
        if (c_ && c_->logq.n) mguard__log_flush(c_); \
    }
/* Q: the hottest reads, which never log nor call out (no line to hand over) when
   MGUARD__PLAIN_<name> holds: a table of a default context (its magic says so), a
   ref of one, or its generation check when not strict, goes straight to the body; anything else (a thread-safe context, a ref of
   another context, or not a live handle, which the body refuses) out of line. */
#define MGUARD__PLAIN_weak_get(t, key) MGUARD__SIMPLE_WEAK(t)
#define MGUARD__PLAIN_weak_contains(t, key) MGUARD__PLAIN_WEAK(t)
#define MGUARD__PLAIN_weak_count(t) MGUARD__PLAIN_WEAK(t)
#define MGUARD__PLAIN_ref_get(ctx, ref) MGUARD__PLAIN_REF(ctx, ref)
#define MGUARD__PLAIN_gen_is_dynamic(ctx, obj, cls) MGUARD__PLAIN_GEN(ctx)
/* a default context's cache that logs no reasons, asked for one non-NULL key (the body logs nothing then) */
#ifndef MGUARD_DEBUG
#define MGUARD__PLAIN_cache_get(c, keys, nkeys) \
    ((c) && (c)->magic == MGUARD__MAGIC_CACHE && (keys) && (nkeys) == 1 && (keys)[0])
#else
#define MGUARD__PLAIN_cache_get(c, keys, nkeys) ((void)(c), (void)(keys), (void)(nkeys), 0)
#endif
/* In the file that compiles the implementation, the hottest reads may be
   inlined into their callers (C only: a C++ inline function need not be
   emitted for the program's other files). Elsewhere they are calls. */
#if defined(__clang__) && !defined(__cplusplus)
#define MGUARD__INLINE_API __attribute__((always_inline))   /* clang: no `inline` (-Wstatic-in-inline) */
#elif defined(__GNUC__) && !defined(__cplusplus)
#define MGUARD__INLINE_API __attribute__((always_inline)) inline   /* gcc wants it */
#else
#define MGUARD__INLINE_API
#endif
/* W: a call with a fast path (mguard__fast_<name>: done, and the answer is
   MGUARD__FASTRET_<name>; or not for it) inline in the public function;
   the rest as X, out of line. */
#define MGUARD__FASTRET_weak_set MGUARD_OK
#define MGUARD__FASTRET_weak_take MGUARD_OK
#define MGUARD__FASTRET_weak_next true
#define MGUARD__PUBLIC_W(ret, name, params, args, ctxof) \
    static MGUARD__NOINLINE ret mguard__other_##name params MGUARD__PUBLIC_BODY(ret, name, args, ctxof) \
    MGUARD__INLINE_API ret mguard_##name params \
    { \
        if (mguard__fast_##name args) return MGUARD__FASTRET_##name; \
        return mguard__other_##name args; \
    }
#define MGUARD__PUBLIC_Q(ret, name, params, args, ctxof) \
    static MGUARD__NOINLINE ret mguard__other_##name params MGUARD__PUBLIC_BODY(ret, name, args, ctxof) \
    MGUARD__INLINE_API ret mguard_##name params \
    { \
        if (MGUARD__PLAIN_##name args) return mguard__##name args; \
        return mguard__other_##name args; \
    }
MGUARD__API(MGUARD__PUBLIC_X, MGUARD__PUBLIC_V, MGUARD__PUBLIC_Q, MGUARD__PUBLIC_W)
#undef MGUARD__PUBLIC_X
#undef MGUARD__PUBLIC_V
#undef MGUARD__PUBLIC_Q
#undef MGUARD__PUBLIC_W
#undef MGUARD__PUBLIC_BODY
#undef MGUARD__NOINLINE
#undef MGUARD__API
#undef MGUARD__API_CORE
#undef MGUARD__API_SCOPE
#undef MGUARD__API_DYN
#undef MGUARD__API_LEDGER
#undef MGUARD__API_CACHE

/* mguard_ctx_destroy, the one public function that touches a context and
   is not made from the list (the others are, after the locked variants):
   the lock goes with the context when the destroy is done; a refused
   destroy (from inside a callback) lets it go as usual. */
void mguard_ctx_destroy(mguard_ctx *ctx)
{
    mguard_ctx *c = mguard__ctx_of_ctx(ctx);
    mguard__lock *lk = c ? c->lk : NULL;
    bool gone = false, *outer;
    if (!lk) {
        mguard__ctx_destroy(ctx);
        return;
    }
    mguard__lock_acquire(lk);
    outer = lk->gone;
    lk->gone = &gone;
    mguard__ctx_destroy(ctx);
    if (gone) return;
    lk->gone = outer;
    mguard__lock_release(lk);
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
