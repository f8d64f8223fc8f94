/* The differential decoder: turns a byte string into a sequence of
   operations over a small pool of objects and a few table slots, runs each
   operation on mguard and on the reference model (tests/model.h) in
   lockstep, and stops at the first difference in any result, callback,
   destructor count or full state (fz_fail: a report, then the driver's
   fz_mismatch_hook or abort).

   Used by three drivers: tests/test_differential.c (seeded PRNG bytes and
   the files in tests/corpus/), tests/fuzz_mguard.c (libFuzzer) and
   tests/test_faults.c (the allocator fails the Nth allocation).

   Encoding: every operation is 5 bytes {kind, a, b, c, ref}; a missing
   byte reads as 0 and ends the run after that operation.
     kind  picks the operation through a weight map (byte % FZ_MAPSIZE).
     a,b,c arguments: an object is a pool address (byte % nobj), the
           callback's own object or guard (two extra values), or NULL (0xff);
           a table is a slot (byte % ntab) or the callback's own table.
     ref   the action attached to what SET stores, WATCH registers or a
           ledger APPLY calls back with: with bit 7 set a new action
           follows inline (5 more bytes), else it names an existing action
           (ref % (nactions + 1); 0 is none).
   An action is an operation run by a callback: a value destructor runs
   the action stored in the value, an invalidated watcher runs its own,
   a ledger apply runs its own for each write.
   Actions of actions only name earlier actions, and every top-level
   operation has a budget of nested actions and a depth limit, so each run
   ends. Object addresses are reused after death on purpose: the pool is
   fixed, so a destroyed object's address comes back as a new object.

   Besides the core, operations drive one scope tracker, one dynamism
   tracker (both created on first use) and three ledger slots (slot 0
   created on first use, slots 1-2 hold clones; with bit 1 of header byte
   1 their values are 8-byte integers, not pointers; LEDGER_TRACK with c
   bit 6 binds the x and y attributes to fields of the pool object, whose
   memory apply writes and both sides compare; LEDGER_MARK o, b puts b
   in o's contents, which the ledgers' refs hook lists), two guarded caches
   (CACHE: created on first use, computes that re-enter; see "guarded
   caches on the differential context"), replace the context by a
   new one (thread-safe or not: CTX_CYCLE), and run an auxiliary context
   that mguard alone runs, checked by invariants instead of the model: its
   ledgers and scope tracker have every hook and callback, re-entering
   (see "the auxiliary context" below). Every public function of mguard.h
   is called here: tests/check_fuzz_coverage.sh, run by make test, fails
   when one is not. See docs/reliability.md for what they cover and leave
   out.

   Extending it: add an operation kind to fz_kind, a weight in fz_weights
   (they sum to FZ_MAPSIZE), its two sides in fz_exec, its state to
   fz_snapshot and its state in the model (or, where the model can't
   predict the result, mguard's side alone with checks of what must hold,
   as the auxiliary context does); the driver code does not change. */
#ifndef MGUARD_TESTS_FUZZ_DECODER_H
#define MGUARD_TESTS_FUZZ_DECODER_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mguard.h"
#include "introspect.h"
#include "model.h"
#include "json_check.h"

#define FZ_MAXOBJ 64
#define FZ_MAXTAB 8
#define FZ_NREF 6
#define FZ_NITER 3
#define FZ_MAXACT 1024
#define FZ_MAXUID 256
#define FZ_NLED 3
#define FZ_NCACHE 2
#define FZ_MG 0
#define FZ_MODEL 1

typedef struct fz_opts {
    int nobj;          /* objects in the pool, 1..FZ_MAXOBJ (0: 8) */
    int ntab;          /* table slots, 1..FZ_MAXTAB (0: 4) */
    int max_ops;       /* top-level operations (0: 4096) */
    int depth;         /* nested callback depth (0: 6) */
    int budget;        /* nested actions per top-level operation (0: 48) */
    long fail_at;      /* make mguard's Nth allocation fail (0: never) */
    int verbose;       /* print every operation and event */
    int thread_safe;   /* start with a thread-safe context */
    int sized;         /* ledgers of 8-byte integer values (the pool slot of the
                          object the operation names), not pointers */
    const char *label; /* named in failure reports (seed, file) */
} fz_opts;

typedef struct fz_result {
    long allocs;       /* allocations mguard made */
    long failures;     /* allocations that failed (0 or 1) */
    long enomem;       /* operations that answered ENOMEM */
    int ops;           /* top-level operations run */
    long events;       /* callbacks and results compared */
    long checks;       /* mguard_ctx_check calls, all passed */
    int no_ctx;        /* the context could not be created */
    long aux_ops;      /* operations on the auxiliary context */
    long aux_calls;    /* its hooks and callbacks called */
    long aux_retains;  /* ... of which retain hooks */
    long aux_log_lines, aux_log_destroys; /* its logger's lines; handles it destroyed */
} fz_result;

/* ---- operations -------------------------------------------------------- */

enum fz_kind {
    FZ_NOP, FZ_SET, FZ_REMOVE, FZ_GET, FZ_DESTROY_OBJ, FZ_MUTATE, FZ_WATCH, FZ_UNWATCH,
    FZ_CLEAR, FZ_DESTROY_TABLE, FZ_CREATE_TABLE, FZ_REF_MAKE, FZ_REF_GET, FZ_GEN_TAG,
    FZ_GEN_ADVANCE, FZ_GEN_CLEAR, FZ_MARK_CLASS, FZ_GEN_QUERY, FZ_ITER_START, FZ_ITER_NEXT,
    FZ_COUNT, FZ_QUERY_OBJ, FZ_INTERN,
    FZ_S_NAME, FZ_S_ENTER, FZ_S_EXIT, FZ_S_QUERY,
    FZ_L_TRACK, FZ_L_WRITE, FZ_L_LOAD, FZ_L_MARK, FZ_L_CLONE, FZ_L_EQUAL, FZ_L_RESTORE,
    FZ_L_PRUNE, FZ_L_CLEAR, FZ_L_DESTROY,
    /* issue 11: every public function */
    FZ_MISC, FZ_CTX_CYCLE,
    FZ_D_OBSERVE, FZ_D_SCALAR, FZ_D_QUERY, FZ_D_ITER, FZ_D_FORMAT, FZ_D_DESTROY,
    FZ_S_NAME2, FZ_S_PHASE, FZ_S_ADD, FZ_S_COUNTER, FZ_S_REPORT, FZ_S_DESTROY,
    FZ_L_APPLY, FZ_L_DIFF,
    FZ_X_CTX, FZ_X_LEDGER, FZ_X_SCOPE,
    /* issue 15: guarded caches (auxiliary context, then the model's) */
    FZ_X_CACHE, FZ_CACHE, FZ_NKINDS
};

static const char *const fz_kind_names[FZ_NKINDS] = {
    "nop", "set", "remove", "get", "destroy_obj", "mutate", "watch", "unwatch",
    "clear", "destroy_table", "create_table", "ref_make", "ref_get", "gen_tag",
    "gen_advance", "gen_clear", "mark_class", "gen_query", "iter_start", "iter_next",
    "count", "query_obj", "intern",
    "scope_set_name", "scope_enter", "scope_exit", "scope_query",
    "ledger_track", "ledger_write", "ledger_load", "ledger_mark", "ledger_clone", "ledger_equal", "ledger_restore",
    "ledger_prune", "ledger_clear", "ledger_destroy",
    "misc", "ctx_cycle",
    "dyn_observe", "dyn_scalar", "dyn_query", "dyn_iter", "dyn_format", "dyn_destroy",
    "scope_name", "scope_phase", "scope_add", "scope_counter", "scope_report", "scope_destroy",
    "ledger_apply", "ledger_diff",
    "aux_ctx", "aux_ledger", "aux_scope", "aux_cache", "cache"
};

/* Weights out of FZ_MAPSIZE: what a random byte picks (byte % FZ_MAPSIZE).
   The first 64 are the core, the scope tracker and the model's ledgers;
   the rest reach every other public function (issue 11). */
#define FZ_MAPSIZE 128
static const unsigned char fz_weights[FZ_NKINDS] = {
    0, 4, 2, 2, 4, 4, 4, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1,
    2, 2, 1, 1,
    3, 3, 2, 1, 1, 1, 1,
    1, 1, 1,
    2, 1,
    4, 4, 3, 2, 2, 1,
    2, 3, 3, 1, 3, 1,
    4, 3,
    3, 6, 5, 2, 9
};

typedef struct fz_op {
    uint8_t kind, a, b, c;
    uint16_t act;      /* action index + 1, 0: none */
} fz_op;

/* Events: what each side did, compared one by one. */
enum { FZ_EV_OP = 1, FZ_EV_RES, FZ_EV_DTOR, FZ_EV_KDEATH, FZ_EV_INVAL, FZ_EV_SKIP, FZ_EV_SNAP, FZ_EV_APPLY };
static const char *const fz_ev_names[] = { "?", "op", "result", "dtor", "key_death", "invalidate", "skip", "state", "apply" };

typedef struct fz_event { int kind; long v[5]; } fz_event;

typedef struct fz_tinfo { int side, uid, slot, has_dtor; size_t value_size; } fz_tinfo;
typedef struct fz_wuser { int side, act; } fz_wuser;

/* The object, guard and table a callback is about (NULL/-1: none). */
typedef struct fz_ev { const void *obj; const void *guard; int tslot; } fz_ev;

typedef struct fz_side {
    mguard_ctx *ctx;
    model_ctx *mctx;
    mguard_weak *tab[FZ_MAXTAB];
    model_weak *mtab[FZ_MAXTAB];
    int tab_uid[FZ_MAXTAB];       /* 0: slot closed */
    int tab_calls[FZ_MAXTAB];     /* clear/destroy calls on it in progress */
    int tab_req[FZ_MAXTAB];       /* destroy requested */
    size_t tab_vs[FZ_MAXTAB];
    mguard_weak_iter it[FZ_NITER];
    model_iter mit[FZ_NITER];
    int it_slot[FZ_NITER];        /* -1: none */
    mguard_ref ref[FZ_NREF];
    model_ref mref[FZ_NREF];
    mguard_scope *scope;          /* created by the first scope operation */
    model_scope *mscope;
    int parts_closed;             /* context destroy: no scope/ledger ops */
    mguard_ledger *led[FZ_NLED];  /* slot 0: created on first use; others: clones */
    model_ledger *mled[FZ_NLED];
    uint64_t lcont[FZ_MAXOBJ];    /* per pool object: the pool objects it
                                     contains (what the ledgers' refs hook
                                     lists; LEDGER_MARK appends or removes) */
    int in_apply;                 /* ledger applies running: their callbacks
                                     don't destroy, clone over or restore a
                                     ledger (the model walks its own) */
    int thread_safe;              /* the context is thread-safe (header, CTX_CYCLE) */
    mguard_dyn *dyn;              /* created by the first dynamism operation */
    model_dyn *mdyn;
    mguard_cache *cache[FZ_NCACHE];   /* created by the slot's first operation */
    model_cache *mcache[FZ_NCACHE];
    int cache_uid[FZ_NCACHE];     /* 0: slot closed */
    int cache_busy[FZ_NCACHE];    /* its get_or_compute and clear calls running */
    int cache_req[FZ_NCACHE];     /* destroy requested while busy */
    fz_event *ev;
    size_t nev, capev;
    unsigned char *vstate;        /* per value id: 0 none, 1 stored, 2 destroyed */
    size_t capv;
    uint32_t next_id;
    int depth, budget;
    int fq;                       /* allocating operations so far (this op) */
    int fx;                       /* cache reasons read so far (this op) */
    int nuid;
    fz_tinfo tinfo[FZ_MAXUID];
    fz_wuser wuser[FZ_MAXACT + 1];
} fz_side;

typedef struct fz_alloc_state { long calls, fail_at, failures, live_blocks; } fz_alloc_state;

static struct fz_state {
    fz_opts o;
    const uint8_t *data;
    size_t size, pos;
    int eof;
    unsigned char kind_map[FZ_MAPSIZE];
    fz_op act[FZ_MAXACT];
    int nact;
    int opno;
    fz_op cur;
    fz_side s[2];
    signed char fstat[4096];      /* mguard's ENOMEM answers this op, by order */
    int nfstat;
    signed char fsaved[4096];     /* the model's armed failure when op k began */
    signed char fexact[4096];     /* per cache reason read this op, by order:
                                     no allocation had failed yet on mguard's side */
    fz_alloc_state alloc;
    const char *interned[8];
    fz_result res;
    int in_destroy;               /* the final context destroy is running */
} fz;

static char fz_pool[FZ_MAXOBJ][16];
static const char *const fz_attrs[4] = { "x", "y", "z", NULL };
static const char *const fz_strings[8] = { "a", "b", "ab", "weight", "bias", "", "a.b.c", "x" };
static const size_t fz_sizes[4] = { 8, 16, 40, 264 };
/* The ledgers' field tables over a pool object (16 bytes): "x" and "y" are
   fields, "z" is not. Three for pointer values, three for sized ones (an
   unbound attribute: 8 bytes of INT): y of 4 bytes, y of 8 bytes of
   another type (a rebinding refused while y has a pending write of the
   other shape), and a table refused for y's size. */
static const mguard_ledger_field fz_fields_ptr[3][2] = {
    { { "x", 0, sizeof(void *), MGUARD_LEDGER_VALUE_PTR }, { "y", sizeof(void *), sizeof(void *), MGUARD_LEDGER_VALUE_INT } },
    { { "x", 0, sizeof(void *), MGUARD_LEDGER_VALUE_BYTES }, { "y", sizeof(void *), sizeof(void *), MGUARD_LEDGER_VALUE_PTR } },
    { { "x", 0, sizeof(void *), MGUARD_LEDGER_VALUE_PTR }, { "y", sizeof(void *), 2, MGUARD_LEDGER_VALUE_UINT } } };
static const mguard_ledger_field fz_fields_num[3][2] = {
    { { "x", 0, 8, MGUARD_LEDGER_VALUE_INT }, { "y", 8, 4, MGUARD_LEDGER_VALUE_INT } },
    { { "x", 0, 8, MGUARD_LEDGER_VALUE_INT }, { "y", 8, 8, MGUARD_LEDGER_VALUE_UINT } },
    { { "x", 0, 1, MGUARD_LEDGER_VALUE_BOOL }, { "y", 8, 3, MGUARD_LEDGER_VALUE_INT } } };

/* ---- failure ----------------------------------------------------------- */

static void fz_print_event(const char *who, size_t i, const fz_event *e)
{
    fprintf(stderr, "  %s[%lu] %s %ld %ld %ld %ld %ld\n", who, (unsigned long)i,
            e->kind > 0 && e->kind <= FZ_EV_APPLY ? fz_ev_names[e->kind] : "?",
            e->v[0], e->v[1], e->v[2], e->v[3], e->v[4]);
}

/* A driver may report a mismatch its own way (tests/test_differential.c
   makes it a cmocka failure): the hook gets the report line and must not
   return (cmocka's fail_msg jumps back to the test runner). Without a hook,
   or if it returns, the run aborts (what libFuzzer wants). */
static void (*fz_mismatch_hook)(const char *report);

#if defined(__GNUC__) || defined(__clang__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
static void fz_fail(const char *fmt, ...)
{
    va_list ap;
    char report[1024];
    int n = snprintf(report, sizeof report, "differential mismatch (%s, fail_at %ld) at op %d (%s %u %u %u act %u): ",
                     fz.o.label ? fz.o.label : "input", fz.o.fail_at, fz.opno,
                     fz.cur.kind < FZ_NKINDS ? fz_kind_names[fz.cur.kind] : "?", fz.cur.a, fz.cur.b, fz.cur.c, fz.cur.act);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof report) vsnprintf(report + n, sizeof report - (size_t)n, fmt, ap);
    va_end(ap);
    if (fz_mismatch_hook) fz_mismatch_hook(report);
    fprintf(stderr, "\n%s\n", report);
    abort();
}

/* ---- allocator: counts, fails the Nth call, tracks live blocks ---------- */

typedef union fz_hdr { size_t size; long double a_; void *p_; } fz_hdr;

static void *fz_realloc(void *p, size_t n, void *user)
{
    fz_alloc_state *a = (fz_alloc_state *)user;
    fz_hdr *h = p ? (fz_hdr *)p - 1 : NULL, *nh;
    a->calls++;
    if (a->fail_at && a->calls == a->fail_at) {
        a->failures++;
        return NULL;
    }
    nh = (fz_hdr *)realloc(h, sizeof *nh + n);
    if (!nh) abort();
    nh->size = n;
    if (!p) a->live_blocks++;
    return nh + 1;
}

static void fz_free(void *p, void *user)
{
    fz_alloc_state *a = (fz_alloc_state *)user;
    if (!p) return;
    a->live_blocks--;
    free((fz_hdr *)p - 1);
}

/* A quiet context on the counting allocator a; flags: 1 thread-safe,
   2 strict generations. */
static mguard_ctx *fz_new_ctx_logged(fz_alloc_state *a, int flags, mguard_log_fn log)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    d.allocator.realloc_fn = fz_realloc;
    d.allocator.free_fn = fz_free;
    d.allocator.user = a;
    d.quiet = true;
    d.logger.func = log;
    d.thread_safe = (flags & 1) != 0;
    d.strict_generations = (flags & 2) != 0;
    return mguard_ctx_create(&d);
}
static mguard_ctx *fz_new_ctx(fz_alloc_state *a, int flags) { return fz_new_ctx_logged(a, flags, NULL); }

/* ---- events ------------------------------------------------------------ */

/* A get_or_compute's store on mguard's side, from compute's return: its job's
   count of allocation failures at the first callback after that (fz_cgoc). */
static long *fz_store_f3;

static void fz_event_add(int side, int kind, long a, long b, long c, long d, long e)
{
    fz_side *S = &fz.s[side];
    fz_event *ev;
    if (side == FZ_MG && fz_store_f3) {
        *fz_store_f3 = fz.alloc.failures;
        fz_store_f3 = NULL;
    }
    if (S->nev == S->capev) {
        S->capev = S->capev ? S->capev * 2 : 256;
        S->ev = (fz_event *)realloc(S->ev, S->capev * sizeof *S->ev);
        if (!S->ev) abort();
    }
    ev = &S->ev[S->nev++];
    ev->kind = kind;
    ev->v[0] = a; ev->v[1] = b; ev->v[2] = c; ev->v[3] = d; ev->v[4] = e;
    if (fz.o.verbose) fz_print_event(side == FZ_MG ? "mguard" : "model", S->nev - 1, ev);
}

static int fz_event_eq(const fz_event *a, const fz_event *b)
{
    int i;
    if (a->kind != b->kind) return 0;
    for (i = 0; i < 5; i++)
        if (a->v[i] != b->v[i]) return 0;
    return 1;
}

static void fz_compare_events(const char *what)
{
    fz_side *A = &fz.s[FZ_MG], *B = &fz.s[FZ_MODEL];
    size_t i, n = A->nev < B->nev ? A->nev : B->nev;
    for (i = 0; i < n; i++)
        if (!fz_event_eq(&A->ev[i], &B->ev[i])) break;
    if (i < n || A->nev != B->nev) {
        size_t k, lo = i > 6 ? i - 6 : 0;
        fprintf(stderr, "\n%s differ at event %lu (mguard %lu events, model %lu):\n", what,
                (unsigned long)i, (unsigned long)A->nev, (unsigned long)B->nev);
        for (k = lo; k < i + 4 && k < A->nev; k++) fz_print_event("mguard", k, &A->ev[k]);
        for (k = lo; k < i + 4 && k < B->nev; k++) fz_print_event("model ", k, &B->ev[k]);
        fz_fail("%s differ", what);
    }
    fz.res.events += (long)n;
    A->nev = B->nev = 0;
}

/* ---- objects, values --------------------------------------------------- */

static long fz_slot_of(const void *p)
{
    uintptr_t base = (uintptr_t)(const void *)fz_pool, u = (uintptr_t)p;
    if (!p) return -1;
    if (u >= base && u < base + sizeof fz_pool && (u - base) % sizeof fz_pool[0] == 0)
        return (long)((u - base) / sizeof fz_pool[0]);
    return -2;
}

/* A ledger value as a number both sides agree on: the pool slot of a
   pointer value (fz_slot_of), or a sized value (the slot it was made from;
   -1 for none). */
static long fz_lval(const void *v)
{
    int64_t n;
    if (!fz.o.sized) return fz_slot_of(v);
    if (!v) return -1;
    memcpy(&n, v, sizeof n);
    return (long)n;
}

static long fz_mlval(const model_lwrite *w)
{
    if (!fz.o.sized) return fz_slot_of(w->value);
    return w->deleted ? -1 : (long)w->num;
}

static const void *fz_obj(uint8_t x, const fz_ev *ev)
{
    int r;
    if (x == 0xff) return NULL;
    r = x % (fz.o.nobj + 2);
    if (r == fz.o.nobj && ev && ev->obj) return ev->obj;
    if (r == fz.o.nobj + 1 && ev && ev->guard) return ev->guard;
    return fz_pool[x % fz.o.nobj];
}

static int fz_tslot(uint8_t x, const fz_ev *ev)
{
    int r = x % (fz.o.ntab + 1);
    if (r == fz.o.ntab) return ev && ev->tslot >= 0 ? ev->tslot : x % fz.o.ntab;
    return r;
}

/* Value layout: id (4 bytes), action (2), key slot (1), check (1), then a
   pattern of the id up to value_size. */
static void fz_value_make(unsigned char *v, size_t size, uint32_t id, uint16_t act, long key)
{
    size_t i;
    memcpy(v, &id, 4);
    memcpy(v + 4, &act, 2);
    v[6] = (unsigned char)key;
    v[7] = (unsigned char)(id * 7u + act);
    for (i = 8; i < size; i++) v[i] = (unsigned char)(id * 31u + i);
}

static uint32_t fz_value_read(const void *value, size_t size, uint16_t *act, long *key)
{
    const unsigned char *v = (const unsigned char *)value;
    uint32_t id;
    uint16_t a;
    size_t i;
    memcpy(&id, v, 4);
    memcpy(&a, v + 4, 2);
    if (v[7] != (unsigned char)(id * 7u + a)) fz_fail("value %u: header bytes corrupted", id);
    for (i = 8; i < size; i++)
        if (v[i] != (unsigned char)(id * 31u + i)) fz_fail("value %u: byte %lu corrupted", id, (unsigned long)i);
    if (act) *act = a;
    if (key) *key = v[6] == 0xff ? -1 : (long)v[6];
    return id;
}

static unsigned char *fz_vstate(fz_side *S, uint32_t id)
{
    if (id >= S->capv) {
        size_t n = S->capv ? S->capv : 1024;
        while (n <= id) n *= 2;
        S->vstate = (unsigned char *)realloc(S->vstate, n);
        if (!S->vstate) abort();
        memset(S->vstate + S->capv, 0, n - S->capv);
        S->capv = n;
    }
    return &S->vstate[id];
}

/* ---- table slots ------------------------------------------------------- */

static int fz_open(const fz_side *S, int t) { return S->tab_uid[t] != 0; }

static void fz_close_slot(fz_side *S, int t)
{
    int i;
    S->tab[t] = NULL;
    S->mtab[t] = NULL;
    S->tab_uid[t] = 0;
    S->tab_req[t] = 0;
    for (i = 0; i < FZ_NITER; i++)
        if (S->it_slot[i] == t) S->it_slot[i] = -1;
}

/* A destroyed table's handle stays valid while a clear/destroy of it that
   started earlier is still running (mguard finishes the destroy then). */
static void fz_release_slot(fz_side *S, int t)
{
    if (S->tab_req[t] && S->tab_calls[t] == 0) fz_close_slot(S, t);
}

/* ---- allocation failures: the model follows mguard's ENOMEM answers ---- */

/* Each allocating operation gets its number when it starts (callbacks
   inside it come later), on both sides; mguard's answer is recorded under
   that number and the model, running the same operations in the same
   order, fails the same ones. The model's failure is armed from the
   number to its fault_post, and an operation a callback runs meanwhile
   (a parked value's destructor before get_or_compute makes its entry)
   has its own: it neither takes the armed failure nor disarms it. */
static int fz_fault_pre(int side)
{
    fz_side *S = &fz.s[side];
    int k = S->fq++;
    if (side == FZ_MODEL && k < (int)sizeof fz.fsaved) {
        fz.fsaved[k] = (signed char)S->mctx->fail_next;
        S->mctx->fail_next = fz.o.fail_at && k < fz.nfstat && fz.fstat[k];
    }
    if (side == FZ_MG && k < (int)sizeof fz.fstat) {
        fz.fstat[k] = 0;
        if (k >= fz.nfstat) fz.nfstat = k + 1;
    }
    return k;
}

static void fz_fault_post(int side, int k, int enomem)
{
    fz_side *S = &fz.s[side];
    if (side == FZ_MG) {
        if (k < (int)sizeof fz.fstat) fz.fstat[k] = (signed char)enomem;
        if (enomem) {
            fz.res.enomem++;
            if (!fz.o.fail_at) fz_fail("ENOMEM without allocation failures");
        }
    } else {
        S->mctx->fail_next = k < (int)sizeof fz.fsaved ? fz.fsaved[k] : 0;
    }
}

static void fz_check_ctx(fz_side *S)
{
    if (S->ctx && mguard_ctx_check(S->ctx) != MGUARD_OK) fz_fail("mguard_ctx_check failed");
    fz.res.checks++;
}

/* The check run at the start of a callback (a named component with open
   frames in phase 2 of its death once failed it: see
   test_check_passes_inside_a_named_components_death). */
static void fz_check_ctx_cb(fz_side *S)
{
    fz_check_ctx(S);
}

/* ---- scope tracker and ledgers: created on first use ------------------- */

static long fz_str_ix(const char *p)
{
    int i;
    if (!p) return -1;
    if (strcmp(p, "Global") == 0) return 99;
    for (i = 0; i < 8; i++)
        if (strcmp(p, fz_strings[i]) == 0) return i;
    return -2;
}

/* During a context's destroy (a callback of it) a scope tracker (what 0),
   dynamism tracker (1) or ledger (2) must be refused (issue 11, defect 5:
   it leaked, its table freed under it). mguard only. */
static void fz_create_while_closing(int side, int what)
{
    fz_side *S = &fz.s[side];
    const void *h;
    if (side != FZ_MG || !S->ctx) return;
    if (what == 0) h = mguard_scope_create(S->ctx, NULL);
    else if (what == 1) h = mguard_dyn_create(S->ctx);
    else h = mguard_ledger_create(S->ctx, NULL);
    if (h) fz_fail("a %s was created on a dying context", what == 0 ? "scope tracker" : what == 1 ? "dynamism tracker" : "ledger");
}

/* The scope tracker (dyn 0) or the dynamism tracker (dyn 1) exists,
   created now if needed (an allocating step); 0 with a skip event when it
   cannot be used (a context being destroyed: fz_create_while_closing). */
static int fz_component_ready(int side, int k, int dyn)
{
    fz_side *S = &fz.s[side];
    const int mg = side == FZ_MG;
    int fq, ok;
    if (S->parts_closed) { fz_create_while_closing(side, dyn ? 1 : 0); fz_event_add(side, FZ_EV_SKIP, k, 1, 0, 0, 0); return 0; }
    if (dyn ? (mg ? S->dyn != NULL : S->mdyn != NULL) : (mg ? S->scope != NULL : S->mscope != NULL)) return 1;
    fq = fz_fault_pre(side);
    if (mg && dyn) ok = (S->dyn = mguard_dyn_create(S->ctx)) != NULL;
    else if (mg) ok = (S->scope = mguard_scope_create(S->ctx, NULL)) != NULL;
    else if (dyn) ok = (S->mdyn = model_dyn_create(S->mctx)) != NULL;
    else ok = (S->mscope = model_scope_create(S->mctx)) != NULL;
    fz_fault_post(side, fq, !ok);
    if (!ok) fz_event_add(side, FZ_EV_SKIP, k, 3, 0, 0, 0);
    return ok;
}

static int fz_scope_ready(int side, int k) { return fz_component_ready(side, k, 0); }

/* Destroy it (the next operation on it creates it again). */
static void fz_component_destroy(int side, int dyn)
{
    fz_side *S = &fz.s[side];
    if (side == FZ_MG && dyn) mguard_dyn_destroy(S->dyn);
    else if (side == FZ_MG) mguard_scope_destroy(S->scope);
    else if (dyn) model_dyn_destroy(S->mdyn);
    else model_scope_destroy(S->mscope);
    if (dyn) { S->dyn = NULL; S->mdyn = NULL; }
    else { S->scope = NULL; S->mscope = NULL; }
}

/* The refs hook of both sides' ledgers: a pool object refers to the pool
   objects it contains (user: the side's fz_side). Containers are the
   program's, not the ledger's: prune must look into pre-existing ones. */
static void fz_lrefs(const void *value, mguard_ledger_visit_fn visit, void *visit_ctx, void *user)
{
    const fz_side *S = (const fz_side *)user;
    long slot = fz_slot_of(value);
    int i;
    if (slot < 0) return;
    for (i = 0; i < fz.o.nobj && i < 64; i++)
        if (S->lcont[slot] >> i & 1u) visit(fz_pool[i], visit_ctx);
}

/* Ledger slot l is open (slot 0 is created now if needed). With a pool of
   64 objects mguard's amortized sweep of the death table could run, which
   the model does not follow: ledger operations are skipped then. */
static int fz_ledger_ready(int side, int l, int k)
{
    fz_side *S = &fz.s[side];
    int fq, ok;
    if (S->parts_closed) fz_create_while_closing(side, 2);
    if (S->parts_closed || fz.o.nobj > 48) { fz_event_add(side, FZ_EV_SKIP, k, 1, 0, 0, 0); return 0; }
    if (side == FZ_MG ? S->led[l] != NULL : S->mled[l] != NULL) return 1;
    if (l != 0) { fz_event_add(side, FZ_EV_SKIP, k, 4, 0, 0, 0); return 0; }
    fq = fz_fault_pre(side);
    if (side == FZ_MG) {
        mguard_ledger_desc d;
        memset(&d, 0, sizeof d);
        d.plain_values = true;
        d.refs = fz_lrefs;
        d.user = S;
        if (fz.o.sized) {
            d.value_size = 8;
            d.value_type = MGUARD_LEDGER_VALUE_INT;
        }
        S->led[0] = mguard_ledger_create(S->ctx, &d);
        ok = S->led[0] != NULL;
    } else {
        S->mled[0] = model_ledger_create(S->mctx, fz_lrefs, S);
        if (S->mled[0]) S->mled[0]->sized = fz.o.sized != 0;
        ok = S->mled[0] != NULL;
    }
    fz_fault_post(side, fq, !ok);
    if (!ok) fz_event_add(side, FZ_EV_SKIP, k, 3, 0, 0, 0);
    return ok;
}

/* L's sizes (all 0 when get_stats refuses L). */
static mguard_ledger_stats fz_lstats(const mguard_ledger *L)
{
    mguard_ledger_stats st;
    memset(&st, 0, sizeof st);
    if (mguard_ledger_get_stats(L, &st) != MGUARD_OK) memset(&st, 0, sizeof st);
    return st;
}

/* The i-th (mod count) object tracked by ledger slot l, in ledger order
   (the two sides agree on the order: the snapshot compares it); dflt when
   the ledger is empty. */
static const void *fz_tracked(int side, int l, int i, const void *dflt)
{
    fz_side *S = &fz.s[side];
    if (side == FZ_MG) {
        size_t n = fz_lstats(S->led[l]).entries;
        mguard_ledger_iter it;
        if (!n) return dflt;
        i = (int)((size_t)i % n);
        it = mguard_ledger_iterate(S->led[l], MGUARD_LEDGER_WALK_ENTRIES, NULL);
        while (mguard_ledger_next(&it))
            if (i-- == 0) return it.obj;
        fz_fail("ledger iteration returned fewer objects than its count");
    }
    if (!S->mled[l]->n) return dflt;
    return S->mled[l]->e[(size_t)i % S->mled[l]->n].obj;
}

/* ---- callbacks (shared by both sides) ---------------------------------- */

static void fz_exec(int side, const fz_op *op, const fz_ev *ev);

static void fz_run_action(int side, uint16_t act, const fz_ev *ev)
{
    fz_side *S = &fz.s[side];
    if (!act) return;
    if (S->depth >= fz.o.depth || S->budget <= 0) {
        fz_event_add(side, FZ_EV_SKIP, act, S->depth, 0, 0, 0);
        return;
    }
    S->budget--;
    S->depth++;
    fz_exec(side, &fz.act[act - 1], ev);
    S->depth--;
}

/* try_retain of mguard_ref_get_retained: called under the context's lock,
   so it only counts and answers. */
static long fz_retain_calls;
static bool fz_try_retain(void *obj, void *user)
{
    if (fz_slot_of(obj) < 0) fz_fail("try_retain called with %p", obj);
    fz_retain_calls++;
    return *(const int *)user != 0;
}

static void fz_dtor(void *value, void *user)
{
    fz_tinfo *ti = (fz_tinfo *)user;
    fz_side *S = &fz.s[ti->side];
    uint16_t act;
    long key;
    uint32_t id = fz_value_read(value, ti->value_size, &act, &key);
    unsigned char *st = fz_vstate(S, id);
    fz_ev ev;
    if (*st != 1) fz_fail("%s: value %u destroyed %s", ti->side ? "model" : "mguard", id, *st == 2 ? "twice" : "but never stored");
    *st = 2;
    fz_event_add(ti->side, FZ_EV_DTOR, ti->uid, (long)id, key, 0, 0);
    if (ti->side == FZ_MG) fz_check_ctx_cb(S);
    ev.obj = key >= 0 ? fz_pool[key] : NULL;
    ev.guard = NULL;
    ev.tslot = S->tab_uid[ti->slot] == ti->uid ? ti->slot : -1;
    fz_run_action(ti->side, act, &ev);
}

static long fz_kpack(const void *const *keys, size_t n);

/* A cache's dropped (issue 25): once per drop with a cause, before the
   value's destructor, the value alive, the cache's entry gone. */
static void fz_dropped(void *value, const mguard_cache_reason *why, void *user)
{
    fz_tinfo *ti = (fz_tinfo *)user;
    fz_side *S = &fz.s[ti->side];
    uint32_t id = fz_value_read(value, ti->value_size, NULL, NULL);
    if (*fz_vstate(S, id) != 1) fz_fail("%s: dropped told of value %u, not alive", ti->side ? "model" : "mguard", id);
    if (!why->cause || why->nkeys < 1 || why->nkeys > MGUARD_CACHE_MAX_KEYS) fz_fail("dropped: a bad reason");
    fz_event_add(ti->side, FZ_EV_RES, FZ_CACHE, 5000 + (long)why->cause, (long)id, fz_kpack(why->keys, why->nkeys),
                 fz_slot_of(why->obj));
    if (ti->side == FZ_MG) fz_check_ctx_cb(S);
}

static void fz_key_death(const void *key, void *value, void *user)
{
    fz_tinfo *ti = (fz_tinfo *)user;
    fz_side *S = &fz.s[ti->side];
    long vkey;
    uint32_t id = fz_value_read(value, ti->value_size, NULL, &vkey);
    int open = S->tab_uid[ti->slot] == ti->uid, known, contains = -1;
    if (vkey != fz_slot_of(key)) fz_fail("key death: key %ld, value stored under %ld", fz_slot_of(key), vkey);
    if (ti->side == FZ_MG) {
        known = mgt_ctx_contains(S->ctx, key);
        if (open) contains = mguard_weak_contains(S->tab[ti->slot], key);
        fz_check_ctx_cb(S);
    } else {
        known = model_is_known(S->mctx, key);
        if (open) contains = model_weak_contains(S->mtab[ti->slot], key);
    }
    fz_event_add(ti->side, FZ_EV_KDEATH, ti->uid, fz_slot_of(key), (long)id, known, contains);
}

static void fz_inval(void *guard, const void *obj, const char *attr, void *user)
{
    fz_wuser *wu = (fz_wuser *)user;
    fz_side *S = &fz.s[wu->side];
    long ai = 3, known;
    fz_ev ev;
    if (attr) {
        for (ai = 0; ai < 3; ai++)
            if (strcmp(attr, fz_attrs[ai]) == 0) break;
    }
    if (wu->side == FZ_MG) {
        known = mgt_ctx_contains(S->ctx, obj);
        fz_check_ctx_cb(S);
    } else {
        known = model_is_known(S->mctx, obj);
    }
    fz_event_add(wu->side, FZ_EV_INVAL, fz_slot_of(guard), fz_slot_of(obj), ai, wu->act, known);
    ev.obj = obj;
    ev.guard = guard;
    ev.tslot = -1;
    fz_run_action(wu->side, (uint16_t)wu->act, &ev);
}

/* ---- numbers, strings and paths for the operations of issue 11 --------- */

/* Extreme but finite numbers (and a few non-finite ones, which every
   function taking a double must refuse or survive), picked by one byte. */
static double fz_num(uint8_t x)
{
    static const double v[24] = {
        0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 1e300, -1e300, DBL_MAX, -DBL_MAX, DBL_MIN,
        4.9406564584124654e-324, -4.9406564584124654e-324, 1e-300, 9223372036854775808.0,
        -9223372036854775808.0, 9007199254740993.0, 1e15, 123.456, 1e56, 3.0, 0.0, 0.0, 0.0
    };
    if (x % 32 == 29) return INFINITY;
    if (x % 32 == 30) return -INFINITY;
    if (x % 32 == 31) return NAN;
    return x % 32 < 24 ? v[x % 32] : (double)(x % 32) - 26.0;
}

static int64_t fz_i64(uint8_t x)
{
    static const int64_t v[16] = {
        INT64_MIN, INT64_MAX, 0, -1, 1, 2, 3, (int64_t)1 << 31, -((int64_t)1 << 53), ((int64_t)1 << 53) + 1,
        (int64_t)1 << 62, INT64_MIN + 1, 7, 8, 64, 1000
    };
    return v[x % 16];
}

/* A short digest of a string, to compare texts as event values. */
static long fz_hash(const char *p)
{
    uint64_t h = 1469598103934665603ull;
    if (!p) return -1;
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return (long)(h & 0x7fffffffl);
}

static long fz_dbits(double d)
{
    int64_t b;
    memcpy(&b, &d, sizeof b);
    return (long)(b ^ (b >> 32));
}

/* Paths of the dynamism tracker: attribute and subscript spellings of one
   path, groups by name and by index, quotes, control bytes, long ones
   (over the tracker's 256-byte buffer), empty and NULL. */
static char fz_long_path[2][700];
static const char *fz_dyn_path(uint8_t x)
{
    static const char *const p[16] = {
        "L['x']", "L.x", "L['x'][0]", "L.x[0]", "L['y']['z']", "L.y.z", "L[0]", "L[1]['a']",
        "x", "L.x.y_2.z9", "L[\"it's\"]", "L['t\tab\\\\']", "L['x'].__len", NULL, "", NULL
    };
    if (!fz_long_path[0][0]) {
        size_t i;
        for (i = 0; i + 6 < sizeof fz_long_path[0]; i += 6) memcpy(fz_long_path[0] + i, i ? ".ab_c1" : "L['q']", 6);
        for (i = 0; i + 4 < sizeof fz_long_path[1]; i += 4) memcpy(fz_long_path[1] + i, i ? "[42]" : "L[7]", 4);
    }
    if (x % 16 == 13) return fz_long_path[0];
    if (x % 16 == 15) return fz_long_path[1];
    return p[x % 16];
}

/* ---- the operations of issue 11 on both sides --------------------------- */

/* A query that may allocate (a long path) and answer "unknown" when the
   allocation fails: the model is told to fail the same way. */
#define FZ_QUIET_ALLOC(side, expr) do { \
        int fq_ = fz_fault_pre(side); long f0_ = fz.alloc.failures; \
        expr; \
        fz_fault_post(side, fq_, side == FZ_MG && fz.alloc.failures != f0_); \
    } while (0)

static const size_t fz_ranks[16] = { 0, 1, 1, 2, 2, 3, 3, 4, 5, 8, 17, 300, 4096, 0x80000000u, (size_t)-1, 2 };

static int fz_exec_dyn(int side, const fz_op *op, long *r)
{
    fz_side *S = &fz.s[side];
    const int mg = side == FZ_MG, k = op->kind;
    const char *path = fz_dyn_path(op->a);
    int fq;
    if (!fz_component_ready(side, k, 1)) return 0;
    if (k == FZ_D_OBSERVE || k == FZ_D_SCALAR) {
        static int64_t dims[4096];
        size_t ndim = fz_ranks[op->b % 16], i;
        mguard_status st;
        for (i = 0; i < ndim && i < 4096; i++) dims[i] = fz_i64((uint8_t)(op->c + (i % 3 == 2 ? i : 0)));
        fq = fz_fault_pre(side);
        if (k == FZ_D_SCALAR)
            st = mg ? mguard_dyn_observe_scalar(S->dyn, path, fz_num(op->c)) : model_dyn_observe_scalar(S->mdyn, path, fz_num(op->c));
        else if (op->b % 16 == 15)   /* NULL dims with a rank */
            st = mg ? mguard_dyn_observe(S->dyn, path, NULL, ndim) : model_dyn_observe(S->mdyn, path, NULL, ndim);
        else
            st = mg ? mguard_dyn_observe(S->dyn, path, dims, ndim) : model_dyn_observe(S->mdyn, path, dims, ndim);
        fz_fault_post(side, fq, st == MGUARD_ENOMEM);
        r[0] = st;
    } else if (k == FZ_D_QUERY) {
        size_t dim = op->b == 255 ? (size_t)-1 : op->b % 6, cap = op->c % 6, i;
        bool flags[8], one[8];
        char norm[16];
        long bits = 0;
        memset(flags, 1, sizeof flags);   /* dims writes every one of the cap flags */
        if (mg) {
            size_t rank = 99;   /* dims sets it, to 0 for an unknown path */
            /* contains (a cap without a buffer is ignored); dims; varies at dim */
            FZ_QUIET_ALLOC(side, r[0] = mguard_dyn_dims(S->dyn, path, NULL, NULL, cap));
            FZ_QUIET_ALLOC(side, r[1] = mguard_dyn_dims(S->dyn, path, &rank, cap ? flags : NULL, cap) + 2 * (long)rank);
            FZ_QUIET_ALLOC(side, r[2] = dim < 8 && mguard_dyn_dims(S->dyn, path, NULL, one, dim + 1) && one[dim]);
            r[3] = (long)mguard_dyn_normalize_name(path, (op->c & 8) ? norm : NULL, (op->c & 8) ? sizeof norm : 0);
        } else {
            long e;
            FZ_QUIET_ALLOC(side, r[0] = model__dyn_lookup(S->mdyn, path) >= 0);
            FZ_QUIET_ALLOC(side, e = model__dyn_lookup(S->mdyn, path));
            r[1] = e >= 0 ? 1 + 2 * (long)S->mdyn->p[e].rank : 0;
            for (i = 0; i < cap; i++) flags[i] = e >= 0 && i < S->mdyn->p[e].rank && S->mdyn->p[e].dyn[i];
            FZ_QUIET_ALLOC(side, e = model__dyn_lookup(S->mdyn, path));
            r[2] = e >= 0 && dim < S->mdyn->p[e].rank && S->mdyn->p[e].dyn[dim];
            r[3] = (long)model_normalize(path, (op->c & 8) ? norm : NULL, (op->c & 8) ? sizeof norm : 0);
        }
        for (i = 0; i < cap; i++) bits |= (long)flags[i] << i;
        r[3] += 1000000 * bits + 100000000l * ((op->c & 8) ? fz_hash(norm) % 16 : 0);
    } else if (k == FZ_D_ITER) {
        long n = 0;
        if (mg) {
            mguard_dyn_iter it = mguard_dyn_iterate(S->dyn);
            while (mguard_dyn_next(&it)) {
                uint64_t bits = 0;
                size_t i;
                for (i = 0; i < it.rank; i++) bits = bits * 3 + it.varies[i] + 1;
                fz_event_add(side, FZ_EV_SNAP, 800, n++, fz_hash(it.group), fz_hash(it.path), (long)it.rank * 2 + it.is_shape);
                fz_event_add(side, FZ_EV_SNAP, 801, (long)(bits >> 2), 0, 0, 0);
            }
            r[0] = (long)mguard_dyn_count(S->dyn);
        } else {
            const model_dpath *p;
            while ((p = model_dyn_at(S->mdyn, (size_t)n)) != NULL) {
                uint64_t bits = 0;
                size_t i;
                for (i = 0; i < p->rank; i++) bits = bits * 3 + p->dyn[i] + 1;
                fz_event_add(side, FZ_EV_SNAP, 800, n++, fz_hash(p->group), fz_hash(p->path), (long)p->rank * 2 + p->is_shape);
                fz_event_add(side, FZ_EV_SNAP, 801, (long)(bits >> 2), 0, 0, 0);
            }
            r[0] = (long)model_dyn_count(S->mdyn);
        }
        if (r[0] != n) fz_fail("dyn: iteration visited %ld paths of %ld", n, r[0]);
    } else if (k == FZ_D_FORMAT) {
        static char buf[1 << 17];
        size_t caps[4] = { 0, 1, 12, sizeof buf }, cap = caps[op->b % 4], n;
        buf[0] = 'Q';
        n = mg ? mguard_dyn_format(S->dyn, cap ? buf : NULL, cap) : model_dyn_format(S->mdyn, cap ? buf : NULL, cap);
        if (cap && strlen(buf) != (n < cap ? n : cap - 1)) fz_fail("dyn_format: wrote %lu bytes of %lu into %lu", (unsigned long)strlen(buf), (unsigned long)n, (unsigned long)cap);
        r[0] = (long)n;
        r[1] = cap ? fz_hash(buf) : 0;
    } else if (!(op->b & 1)) {   /* every other time: nothing */
        fz_component_destroy(side, 1);
    }
    return 1;
}

/* A view of the scope tracker: its text can't be predicted, so check what
   must hold. Asked with cap 0, then into a buffer of that length + 1, the
   same bytes; a truncated one is a prefix; a trace is strict JSON. */
static void fz_check_report(mguard_scope *s, int view, size_t cut, const fz_alloc_state *alloc)
{
    char *full, small[64];
    long f0 = alloc->failures;
    size_t n = mguard_scope_format(s, (mguard_scope_view)view, NULL, 0), n2;
    full = (char *)malloc(n + 1);
    if (!full) abort();
    n2 = mguard_scope_format(s, (mguard_scope_view)view, full, n + 1);
    if (cut > sizeof small) cut = sizeof small;
    mguard_scope_format(s, (mguard_scope_view)view, small, cut);
    if (alloc->failures == f0) {
        if (view > MGUARD_SCOPE_PATH && (n || n2)) fz_fail("report: view %d gave %lu bytes", view, (unsigned long)n);
        if (n2 != n || strlen(full) != n) fz_fail("report: %lu bytes, then %lu (%lu written)", (unsigned long)n, (unsigned long)n2, (unsigned long)strlen(full));
        if (cut && (strlen(small) != (n < cut ? n : cut - 1) || strncmp(small, full, strlen(small)) != 0)) fz_fail("report: truncated text is not a prefix");
        if (view == MGUARD_SCOPE_TRACE_JSON && !json_valid(full)) fz_fail("trace report is not valid JSON: %.300s", full);
    }
    free(full);
}

/* depth and current name, from the stack (a NULL tracker: 0 and NULL) */
static size_t fz_scope_depth(const mguard_scope *s) { size_t n = mguard_scope_frames(s, NULL, 0); return n ? n - 1 : 0; }
static const char *fz_scope_current(const mguard_scope *s)
{
    const char *cur = NULL;
    mguard_scope_frames(s, &cur, 1);
    return cur;
}
static size_t fz_mscope_depth(const model_scope *s) { size_t n = model_scope_frames(s, NULL, 0); return n ? n - 1 : 0; }
static const char *fz_mscope_current(const model_scope *s)
{
    const char *cur = NULL;
    model_scope_frames(s, &cur, 1);
    return cur;
}

static const char *const fz_counters[4] = { "flops", "mem", "", NULL };

static int fz_exec_scope2(int side, const fz_op *op, const fz_ev *ev, long *r)
{
    fz_side *S = &fz.s[side];
    const int mg = side == FZ_MG, k = op->kind;
    int fq;
    if (!fz_scope_ready(side, k)) return 0;
    if (k == FZ_S_NAME2 && (op->b % 4 == 1 || op->b % 4 == 2)) {
        /* 1: attach c's object under a's as one of the names; 2: forget a's */
        const void *o = fz_obj(op->a, ev), *child = fz_obj(op->c, ev);
        const char *seg = fz_strings[(op->b >> 2) % 8];
        mguard_status st;
        fq = fz_fault_pre(side);
        if (op->b % 4 == 1) st = mg ? mguard_scope_attach(S->scope, o, child, seg) : model_scope_attach(S->mscope, o, child, seg);
        else st = mg ? mguard_scope_forget(S->scope, o) : model_scope_forget(S->mscope, o);
        fz_fault_post(side, fq, st == MGUARD_ENOMEM);
        r[0] = st;
        r[1] = fz_hash(mg ? mgt_scope_known_name(S->scope, child) : model_scope_known_name(S->mscope, child));
        r[2] = fz_hash(mg ? mgt_scope_known_name(S->scope, o) : model_scope_known_name(S->mscope, o));
    } else if (k == FZ_S_NAME2) {
        const void *o = fz_obj(op->a, ev);
        static const size_t caps[4] = { 0, 1, 9, 256 };
        char buf[256];
        size_t cap = caps[op->c % 4];
        buf[0] = 'Q';
        if (mg) {
            r[0] = fz_str_ix(mguard_scope_name(S->scope, o));
            r[1] = (long)mguard_scope_format(S->scope, MGUARD_SCOPE_PATH, cap ? buf : NULL, cap);
        } else {
            r[0] = fz_str_ix(model_scope_name(S->mscope, o));
            r[1] = (long)model_scope_path(S->mscope, cap ? buf : NULL, cap);
        }
        r[2] = cap ? fz_hash(buf) : 0;
    } else if (k == FZ_S_PHASE) {
        /* 0, 1: phase 1 / 0; 2: clear, mostly the frames, a quarter of the time
           any flags (unknown ones refused); 3: nothing; 4, 5: phase 0-3 of the
           default two (2 and 3 are refused) */
        int what = op->b % 6;
        size_t phase = what == 0 ? 1 : what == 1 ? 0 : (size_t)(op->c % 4);
        unsigned flags = (op->c & 3) == 3 ? (unsigned)op->c >> 2 : MGUARD_SCOPE_CLEAR_FRAMES | (op->c & 6u);
        if (mg) {
            r[0] = what == 2 ? mguard_scope_clear(S->scope, flags) : what == 3 ? 0 : mguard_scope_set_phase(S->scope, phase);
            r[1] = (long)mguard_scope_phase(S->scope);
        } else {
            if (what == 2) r[0] = model_scope_clear(S->mscope, flags);
            else if (what == 3) r[0] = 0;
            else if (phase < 2) { S->mscope->phase = phase; r[0] = MGUARD_OK; }
            else r[0] = MGUARD_EINVAL;
            r[1] = (long)S->mscope->phase;
        }
    } else if (k == FZ_S_ADD) {
        const char *counter = fz_counters[op->b % 4];
        double amount = fz_num(op->c);
        fq = fz_fault_pre(side);
        r[0] = mg ? mguard_scope_add(S->scope, counter, amount) : model_scope_add(S->mscope, counter, amount);
        fz_fault_post(side, fq, r[0] == MGUARD_ENOMEM);
    } else if (k == FZ_S_COUNTER) {
        const char *fqn = op->a % 10 == 8 ? "Global" : op->a % 10 == 9 ? NULL : fz_strings[op->a % 10];
        const char *counter = fz_counters[op->b % 4];
        double self = -1.0;
        r[0] = fz_dbits(mg ? mguard_scope_counter(S->scope, fqn, counter, (op->c & 1) ? &self : NULL)
                           : model_scope_counter(S->mscope, fqn, counter, (op->c & 1) ? &self : NULL));
        r[1] = fz_dbits(self);
    } else if (k == FZ_S_REPORT) {
        /* mguard only (a TREE report allocates: one allocating step) */
        fq = fz_fault_pre(side);
        if (mg) {
            long f0 = fz.alloc.failures;
            fz_check_report(S->scope, op->b % 5, op->c % 70, &fz.alloc);
            if (op->c & 0x80) r[0] = mguard_scope_clear(S->scope, MGUARD_SCOPE_CLEAR_TRACE);
            if (op->c & 0x40) r[1] = mguard_scope_clear(S->scope, MGUARD_SCOPE_CLEAR_WARNINGS);
            fz_fault_post(side, fq, fz.alloc.failures != f0);
        } else {
            fz_fault_post(side, fq, 0);
        }
    } else if (!(op->b & 1)) {   /* every other time: nothing */
        fz_component_destroy(side, 0);
    }
    return 1;
}

/* The apply callback: reports the write, then runs the operation's action
   with the write's object and value as its object and guard. */
static void fz_apply_cb(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    fz_wuser *au = (fz_wuser *)user;
    fz_side *S = &fz.s[au->side];
    fz_ev ev;
    long ai;
    for (ai = 0; ai < 3; ai++)
        if (strcmp(attr, fz_attrs[ai]) == 0) break;
    if (au->side == FZ_MG) fz_check_ctx_cb(S);
    fz_event_add(au->side, FZ_EV_APPLY, fz_slot_of(obj), ai, fz_lval(value), deleted, au->act);
    ev.obj = obj;
    ev.guard = fz.o.sized ? NULL : value;   /* sized: each side's own copy */
    ev.tslot = -1;
    S->in_apply++;
    fz_run_action(au->side, (uint16_t)au->act, &ev);
    S->in_apply--;
}

/* The diff's text, snprintf-style: the length it needs with no buffer,
   cut and terminated in a small one, whole in one of that length + 1
   (malloc'd: free it). The items agree with the count, with or without it. */
static char *fz_diff_text(const mguard_ledger_diff_result *d, size_t *n)
{
    size_t len = mguard_ledger_diff_format(d, NULL, 0);
    const mguard_ledger_diff_item *items = mguard_ledger_diff_items(d, n);
    char small[8], *text = (char *)malloc(len + 1);
    if (!text) fz_fail("out of memory");
    if (mguard_ledger_diff_format(d, small, sizeof small) != len || strlen(small) != (len < 8 ? len : 7) ||
        mguard_ledger_diff_format(d, text, len + 1) != len || strlen(text) != len || strncmp(small, text, strlen(small)) != 0)
        fz_fail("diff_format is not snprintf-style (%lu bytes)", (unsigned long)len);
    if (mguard_ledger_diff_items(d, NULL) != items || (*n == 0) != (items == NULL)) fz_fail("diff_items: %lu items at %p", (unsigned long)*n, (const void *)items);
    return text;
}

/* Every difference the diff lists is consistent with equal and with its
   own text (one line per item). */
static void fz_check_diff(const mguard_ledger *a, const mguard_ledger *b, const mguard_ledger_diff_result *d)
{
    size_t n, i, lines = 0;
    char *text = fz_diff_text(d, &n), *p;
    const mguard_ledger_diff_item *items = mguard_ledger_diff_items(d, NULL);
    if ((n == 0) != mguard_ledger_equal(a, b)) fz_fail("diff lists %lu differences, equal disagrees", (unsigned long)n);
    for (p = text; *p; p++) lines += *p == '\n';
    if (n == 0 ? *text != '\0' : lines != n) fz_fail("diff text has %lu lines for %lu items", (unsigned long)lines, (unsigned long)n);
    for (i = 0; i < n; i++) {
        const mguard_ledger_diff_item *it = &items[i];
        if (it->what < MGUARD_LEDGER_DIFF_OBJECT_REMOVED || it->what > MGUARD_LEDGER_DIFF_HOOK_CHANGED)
            fz_fail("diff item %lu is wrong", (unsigned long)i);
        if (it->a.present != (it->what % 3 != 2) || it->b.present != (it->what % 3 != 1))
            fz_fail("diff item %lu (kind %d): sides present %d %d", (unsigned long)i, (int)it->what, it->a.present, it->b.present);
    }
    free(text);
}

/* FNV-1a of the pool's memory (what apply wrote into fields). */
static long fz_hash_pool(void)
{
    const unsigned char *b = (const unsigned char *)fz_pool;
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < sizeof fz_pool; i++) h = (h ^ b[i]) * 16777619u;
    return (long)(h & 0x7fffffff);
}

static int fz_exec_ledger2(int side, const fz_op *op, const fz_ev *ev, long *r)
{
    fz_side *S = &fz.s[side];
    const int mg = side == FZ_MG, k = op->kind;
    int l = (op->c >> 4) % 4 % FZ_NLED, m = op->a % FZ_NLED, fq;
    (void)ev;
    if (!fz_ledger_ready(side, l, k)) return 0;
    if (k == FZ_L_APPLY) {
        fz_wuser *au = &S->wuser[op->act];
        mguard_ledger_apply_fn fn = (op->b & 7) == 7 ? NULL : fz_apply_cb;
        char before[sizeof fz_pool];
        au->side = side;
        au->act = op->act;
        /* apply writes fields of pool objects: what it left is compared
           (each side runs an operation from the same memory: fz_run) */
        memcpy(before, fz_pool, sizeof fz_pool);
        fq = fz_fault_pre(side);
        r[0] = mg ? mguard_ledger_apply(S->led[l], fn, au) : model_ledger_apply(S->mled[l], fn, au);
        fz_fault_post(side, fq, r[0] == MGUARD_ENOMEM);
        r[2] = fz_hash_pool();
        r[3] = memcmp(before, fz_pool, sizeof fz_pool) != 0;
        return 1;
    }
    /* DIFF: the model says whether it may run; mguard's text is checked */
    if (!fz_ledger_ready(side, m, k)) return 0;
    if (mg) {
        /* empty: apply would do nothing (a NULL out: refused) */
        mguard_ledger_stats ls = fz_lstats(S->led[l]);
        r[1] = ls.modified == 0 && ls.records == 0 && ls.hooks == 0;
        if (ls.storage_bytes == 0) fz_fail("ledger storage_bytes 0");
        if (mguard_ledger_get_stats(S->led[l], NULL) != MGUARD_EINVAL) fz_fail("ledger_get_stats took a NULL out");
    } else {
        model_ledger_stats ls;
        r[1] = model_ledger_get_stats(S->mled[l], &ls) == MGUARD_OK && ls.modified == 0;
    }
    fq = fz_fault_pre(side);
    if (mg) {
        mguard_ledger_diff_result *d = NULL;
        r[0] = mguard_ledger_diff(S->led[l], S->led[m], &d);
        if (r[0] == MGUARD_OK) fz_check_diff(S->led[l], S->led[m], d);
        else if (d) fz_fail("diff failed and still gave a result");
        mguard_ledger_diff_free(d);
        if (strcmp(mguard_ledger_kind_str((mguard_ledger_kind)(op->b % 5)), model_kind_str(op->b % 5)) != 0) fz_fail("ledger_kind_str");
    } else {
        r[0] = model__take_fail(S->mctx) ? MGUARD_ENOMEM : MGUARD_OK;
    }
    fz_fault_post(side, fq, r[0] == MGUARD_ENOMEM);
    return 1;
}

/* Status strings, thread-safety, a context replaced by a new one. */
static int fz_exec_misc(int side, const fz_op *op, long *r)
{
    fz_side *S = &fz.s[side];
    const int mg = side == FZ_MG;
    int st = op->a == 255 ? 1000 : op->a % 8;
    if (mg) {
        mguard_ctx_stats cs;
        r[0] = fz_hash(mguard_status_str((mguard_status)st));
        r[1] = fz_hash(mguard_ledger_kind_str((mguard_ledger_kind)(op->b % 6)));
        r[2] = (mguard_ctx_get_stats(S->ctx, &cs) == MGUARD_OK && cs.thread_safe) * 2 + (mguard_ctx_get_stats(NULL, &cs) == MGUARD_EINVAL) * 4;
    } else {
        r[0] = fz_hash(model_status_str(st));
        r[1] = fz_hash(model_kind_str(op->b % 6));
        r[2] = S->thread_safe * 2 + 4;
    }
    return 1;
}

/* ---- guarded caches on the differential context (issue 15) -------------
   Two cache slots per side, created by their first operation (the desc
   from the operation's bytes: capacity, max_cost, value size, name).
   FZ_CACHE's a: low 4 bits the call, high 4 bits x (its argument); b: the
   first key (fz_obj); c: bits 0-1 the number of keys - 1 (1..3), bits 2-3
   the stride of the other keys in the pool, bit 4 the slot, bits 5-7 y. A
   value is made as a table's (id, action, key) and its destructor runs
   the action; a compute (fz_compute) declares a dependency, sets a cost,
   then may mutate it, destroy a key, re-enter the cache with the same
   keys, run the operation's action (any operation: another cache call,
   a death, a clear...), fail, or destroy the cache. */

static long fz_attr_ix(const char *p)
{
    int i;
    if (!p) return -1;
    for (i = 0; i < 3; i++)
        if (strcmp(p, fz_attrs[i]) == 0) return i;
    return -2;
}

/* A key tuple as one number (pool slots + 1, 4 bits each). */
static long fz_kpack(const void *const *keys, size_t n)
{
    long v = 0;
    size_t i;
    for (i = 0; i < n; i++) v = v * 16 + fz_slot_of(keys[i]) + 1;
    return v * 8 + (long)n;
}

/* The tuple of first key k0 (the others follow in the pool by c's stride). */
static size_t fz_ckeys_from(const fz_op *op, const void *k0, const void **keys)
{
    size_t n = 1 + (size_t)(op->c & 3) % 3, i;
    long s0 = fz_slot_of(k0);
    keys[0] = k0;
    for (i = 1; i < n; i++)
        keys[i] = s0 < 0 ? NULL : fz_pool[(s0 + (long)i * (1 + ((op->c >> 2) & 3))) % fz.o.nobj];
    return n;
}

static size_t fz_ckeys(const fz_op *op, const fz_ev *ev, const void **keys)
{
    return fz_ckeys_from(op, fz_obj(op->b, ev), keys);
}

/* The keys of slot s's entry i (modulo the count, in iteration order),
   copied; 0 when the cache is empty. Counts nothing. */
static size_t fz_ckeys_stored(int side, int s, int i, const void **keys)
{
    fz_side *S = &fz.s[side];
    size_t count = side == FZ_MG ? mguard_cache_count(S->cache[s]) : model_cache_count(S->mcache[s]), n = 0, k;
    const void *const *ks = NULL;
    if (!count) return 0;
    i = (int)((size_t)i % count);
    if (side == FZ_MG) {
        mguard_cache_iter it = mguard_cache_iterate(S->cache[s]);
        while (mguard_cache_next(&it) && i-- >= 0) { ks = it.keys; n = it.nkeys; }
    } else {
        model_citer it = model_cache_iterate(S->mcache[s]);
        const void *const *k2;
        size_t n2;
        void *v;
        while (model_cache_next(&it, &k2, &n2, &v) && i-- >= 0) { ks = k2; n = n2; }
    }
    for (k = 0; k < n; k++) keys[k] = ks[k];
    return n;
}

static int fz_copen(const fz_side *S, int s) { return S->cache_uid[s] != 0; }

static void fz_cclose(fz_side *S, int s)
{
    S->cache[s] = NULL;
    S->mcache[s] = NULL;
    S->cache_uid[s] = 0;
    S->cache_req[s] = 0;
}

/* The slot's cache, created on first use; 0 (an event said why) if none. */
static int fz_cready(int side, const fz_op *op, int s)
{
    fz_side *S = &fz.s[side];
    static const size_t caps[4] = { 0, 2, 3, 4 };
    int x = op->a >> 4, y = op->c >> 5, fq, uid;
    mguard_cache_desc d;
    fz_tinfo *ti;
    if (fz_copen(S, s)) return 1;
    if (S->parts_closed || S->nuid + 1 >= FZ_MAXUID) { fz_event_add(side, FZ_EV_SKIP, FZ_CACHE, 1, 0, 0, 0); return 0; }
    uid = ++S->nuid;
    ti = &S->tinfo[uid];
    ti->side = side;
    ti->uid = uid;
    ti->slot = 0;   /* no table has this uid: a value's callbacks name no table */
    ti->has_dtor = 1;
    ti->value_size = (x & 8) ? 40 : 8;
    memset(&d, 0, sizeof d);
    d.value_size = ti->value_size;
    d.value_dtor = fz_dtor;
    d.user = ti;
    d.capacity = caps[x & 3];
    d.max_cost = (x & 4) ? 5 : 0;
    d.name = (y & 1) ? "plans" : NULL;
    d.log_reasons = (y & 2) != 0;
    d.dropped = (y & 4) ? fz_dropped : NULL;
    fq = fz_fault_pre(side);
    if (side == FZ_MG) S->cache[s] = mguard_cache_create(S->ctx, &d);
    else S->mcache[s] = model_cache_create(S->mctx, &d);
    fz_fault_post(side, fq, side == FZ_MG ? S->cache[s] == NULL : 0);
    if (side == FZ_MG ? S->cache[s] == NULL : S->mcache[s] == NULL) {
        fz_event_add(side, FZ_EV_SKIP, FZ_CACHE, 2, 0, 0, 0);
        return 0;
    }
    S->cache_uid[s] = uid;
    S->cache_busy[s] = 0;
    S->cache_req[s] = 0;
    fz_event_add(side, FZ_EV_RES, FZ_CACHE, 1000, uid, (long)d.capacity, (long)d.max_cost);
    return 1;
}

/* Destroy the slot's cache: at once, or when the compute or clear of it
   in progress returns (the handle stays valid until then). */
static void fz_cdestroy(int side, int s)
{
    fz_side *S = &fz.s[side];
    mguard_cache *c = S->cache[s];
    model_cache *m = S->mcache[s];
    if (S->cache_busy[s]) {
        S->cache_req[s] = 1;
    } else {
        fz_cclose(S, s);   /* first: the destructors' actions find it closed */
    }
    if (side == FZ_MG) mguard_cache_destroy(c); else model_cache_destroy(m);
}

/* After a compute or clear of slot s returned: a destroy requested
   meanwhile is done. */
static void fz_cdone(fz_side *S, int s, int uid)
{
    if (S->cache_uid[s] != uid) return;
    S->cache_busy[s]--;
    if (S->cache_req[s] && S->cache_busy[s] == 0) fz_cclose(S, s);
}

/* What a compute does (fz_cjob.how). */
enum { FZ_CC_DEPEND = 1, FZ_CC_MUTATE = 2, FZ_CC_DESTROY_KEY = 4, FZ_CC_REENTER = 8, FZ_CC_ACTION = 16,
       FZ_CC_VALUE_ACTION = 32, FZ_CC_FAIL = 64 };
typedef struct fz_cjob {
    int side, slot, uid, how, act, k1, k2;
    long f2;           /* mguard's allocation failures when the store began */
    long f3;           /* ... at its first callback (a failed store's discard, or a
                          stored one's evictions; -1: none yet) */
    uint8_t c;
    mguard_cache_job *outer;   /* a re-entered compute's: the job of the compute around it */
} fz_cjob;

static long fz_cgoc(int side, int s, const void *const *keys, size_t n, fz_cjob *j, long *id);

/* The job's key tuple, read back through the side's job_key: its length. */
static size_t fz_job_keys(int side, const mguard_cache_job *job, const void **keys)
{
    size_t n = 0;
    while (n < MGUARD_CACHE_MAX_KEYS &&
           (keys[n] = side == FZ_MG ? mguard_cache_job_key(job, n) : model_cache_job_key(job, n)) != NULL) n++;
    if ((side == FZ_MG ? mguard_cache_job_key(NULL, 0) : model_cache_job_key(NULL, 0)) != NULL) fz_fail("job_key of NULL");
    return n;
}

static mguard_status fz_compute(mguard_cache_job *job, void *value, void *user)
{
    fz_cjob *j = (fz_cjob *)user;
    fz_side *S = &fz.s[j->side];
    const int side = j->side, mg = side == FZ_MG;
    const void *keys[MGUARD_CACHE_MAX_KEYS];
    size_t nkeys = fz_job_keys(side, job, keys);
    long k0 = fz_slot_of(keys[0]);
    const void *dep = fz_pool[(k0 + 1) % fz.o.nobj];
    const char *attr = fz_attrs[j->c % 4];
    mguard_status st;
    uint32_t id;
    int fq;
    if (j->k1 >= 0) {   /* the entry was made: mguard's first allocation passed */
        fz_fault_post(side, j->k1, 0);
        j->k1 = -1;
    }
    if (mg) fz_check_ctx_cb(S);
    fz_event_add(side, FZ_EV_APPLY, 2000 + j->uid, fz_kpack(keys, nkeys), j->how, S->depth, 0);
    if (j->how & FZ_CC_DEPEND) {
        fq = fz_fault_pre(side);
        st = mg ? mguard_cache_job_depend(job, dep, attr) : model_cache_job_depend(job, dep, attr);
        fz_fault_post(side, fq, st == MGUARD_ENOMEM);
        fz_event_add(side, FZ_EV_RES, FZ_CACHE, 2001, st, 0, 0);
        if (j->outer) {
            /* the compute around this one learns a dependency from it */
            fq = fz_fault_pre(side);
            st = mg ? mguard_cache_job_depend(j->outer, fz_pool[(k0 + 2) % fz.o.nobj], "y") : model_cache_job_depend(j->outer, fz_pool[(k0 + 2) % fz.o.nobj], "y");
            fz_fault_post(side, fq, st == MGUARD_ENOMEM);
            fz_event_add(side, FZ_EV_RES, FZ_CACHE, 2003, st, 0, 0);
        }
    }
    st = mg ? mguard_cache_job_set_cost(job, (size_t)(j->c >> 2) % 4) : model_cache_job_set_cost(job, (size_t)(j->c >> 2) % 4);
    if (st != MGUARD_OK) fz_fail("job_set_cost answered %d", (int)st);
    if ((j->how & (FZ_CC_MUTATE | FZ_CC_DESTROY_KEY | FZ_CC_REENTER | FZ_CC_ACTION)) && !fz.in_destroy) {
        if (S->depth >= fz.o.depth || S->budget <= 0) {
            fz_event_add(side, FZ_EV_SKIP, FZ_CACHE, 3, S->depth, 0, 0);
        } else {
            S->budget--;
            S->depth++;
            if (j->how & FZ_CC_MUTATE) {
                const char *a = fz_attrs[(j->c >> 1) % 4];
                if (mg) mguard_on_mutation_at(S->ctx, dep, a, "compute.c", j->c);
                else model_on_mutation_at(S->mctx, dep, a, "compute.c", j->c);
            }
            if (j->how & FZ_CC_DESTROY_KEY) {
                if (mg) mguard_on_destroy(S->ctx, keys[nkeys - 1]); else model_on_destroy(S->mctx, keys[nkeys - 1]);
            }
            if ((j->how & FZ_CC_REENTER) && S->cache_uid[j->slot] == j->uid) {
                fz_cjob inner = *j;
                long rid = -1, rs;
                inner.how &= ~(FZ_CC_REENTER | FZ_CC_ACTION);
                inner.outer = job;
                rs = fz_cgoc(side, j->slot, keys, nkeys, &inner, &rid);
                fz_event_add(side, FZ_EV_RES, FZ_CACHE, 2002, rs, rid, 0);
            }
            if ((j->how & FZ_CC_ACTION) && j->act) {
                fz_ev ev;
                ev.obj = keys[0];
                ev.guard = dep;
                ev.tslot = -1;
                S->depth--;
                fz_run_action(side, (uint16_t)j->act, &ev);
                S->depth++;
            }
            S->depth--;
        }
    }
    if (j->how & FZ_CC_FAIL) return MGUARD_EEXIST;   /* no value */
    id = ++S->next_id;
    fz_value_make((unsigned char *)value, S->tinfo[j->uid].value_size, id,
                  (uint16_t)((j->how & FZ_CC_VALUE_ACTION) ? j->act : 0), k0);
    *fz_vstate(S, id) = 1;
    j->k2 = fz_fault_pre(side);   /* the store: mguard's second allocation */
    j->f2 = fz.alloc.failures;
    j->f3 = -1;
    if (mg) fz_store_f3 = &j->f3;
    return MGUARD_OK;
}

/* mguard_cache_get_or_compute on slot s (open): the status, and the id of
   the value returned (-1: none). */
static long fz_cgoc(int side, int s, const void *const *keys, size_t n, fz_cjob *j, long *id)
{
    fz_side *S = &fz.s[side];
    mguard_status st;
    const void *v;
    int uid = S->cache_uid[s];
    j->k1 = fz_fault_pre(side);
    j->f3 = -1;
    j->k2 = -1;
    S->cache_busy[s]++;
    if (side == FZ_MG) v = mguard_cache_get_or_compute(S->cache[s], keys, n, fz_compute, j, &st);
    else v = model_cache_get_or_compute(S->mcache[s], keys, n, fz_compute, j, &st);
    if (side == FZ_MG) {
        if (fz_store_f3 == &j->f3) fz_store_f3 = NULL;
        if (j->f3 < 0) j->f3 = fz.alloc.failures;
    }
    *id = v ? (long)fz_value_read(v, S->tinfo[uid].value_size, NULL, NULL) : -1;
    if (v && *fz_vstate(S, (uint32_t)*id) != 1) fz_fail("get_or_compute returned value %ld, not alive", *id);
    if (j->k1 >= 0) fz_fault_post(side, j->k1, st == MGUARD_ENOMEM);
    /* a store that failed: ENOMEM, or EINVAL when the discarded value's destructor destroyed the cache
       (the failure came before any callback of the store: a later one is a callback's own, e.g. an
       evicted value's destructor that reopens the cache) */
    if (j->k2 >= 0) fz_fault_post(side, j->k2, st == MGUARD_ENOMEM || (side == FZ_MG && st == MGUARD_EINVAL && j->f3 > j->f2));
    fz_cdone(S, s, uid);
    return (long)st;
}

static void fz_creason(int side, const mguard_cache_reason *r, mguard_status st)
{
    char buf[600];
    size_t len;
    /* An allocation failure may cost a reason its strings: compared
       exactly while none has failed. Decided on mguard's side when it reads
       the reason (failures only grow, and the model's side runs after the
       whole operation, by which time a later failure may have come) and
       replayed, by the order of the reads, on the model's. */
    int k = fz.s[side].fx++, exact = 0;
    if (k < (int)sizeof fz.fexact) {
        if (side == FZ_MG) fz.fexact[k] = (signed char)(fz.alloc.failures == 0);
        exact = fz.fexact[k];
    }
    if (st != MGUARD_OK) { fz_event_add(side, FZ_EV_RES, FZ_CACHE, 3000, st, 0, 0); return; }
    len = side == FZ_MG ? mguard_cache_reason_format(r, buf, sizeof buf) : model_cache_reason_format(r, buf, sizeof buf);
    fz_event_add(side, FZ_EV_RES, FZ_CACHE, 3001, (long)r->cause, fz_kpack(r->keys, r->nkeys), fz_slot_of(r->obj));
    fz_event_add(side, FZ_EV_RES, 3002, exact ? fz_attr_ix(r->attr) : 0, exact ? fz_hash(r->file) : 0,
                 r->line, exact ? fz_hash(buf) * 1000 + (long)len : 0);
    fz_event_add(side, FZ_EV_RES, FZ_CACHE, 3003,
                 fz_hash(side == FZ_MG ? mguard_cache_cause_str(r->cause) : model_cache_cause_str(r->cause)), 0, 0);
}

static void fz_cstats(int side, int s, int what)
{
    fz_side *S = &fz.s[side];
    mguard_cache_stats t;
    mguard_status st;
    memset(&t, 0, sizeof t);
    st = side == FZ_MG ? mguard_cache_get_stats(S->cache[s], &t) : model_cache_get_stats(S->mcache[s], &t);
    fz_event_add(side, what, FZ_CACHE, 4000 + st, (long)t.hits, (long)t.misses, (long)t.stored);
    fz_event_add(side, what, FZ_CACHE, 4100, (long)t.mutations, (long)t.deaths, (long)t.evictions);
    fz_event_add(side, what, FZ_CACHE, 4200, (long)t.explicit_drops, (long)t.replaced, (long)t.stale);
}

/* mguard_cache_set of a new value (its destructor runs act) on slot s. */
static long fz_cset(int side, int s, const void *const *keys, size_t n, size_t cost, uint16_t act, long *id)
{
    fz_side *S = &fz.s[side];
    unsigned char buf[40];
    mguard_status st;
    int fq;
    *id = ++S->next_id;
    fz_value_make(buf, S->tinfo[S->cache_uid[s]].value_size, (uint32_t)*id, act, fz_slot_of(keys[0]));
    *fz_vstate(S, (uint32_t)*id) = 1;
    fq = fz_fault_pre(side);
    st = side == FZ_MG ? mguard_cache_set(S->cache[s], keys, n, buf, cost) : model_cache_set(S->mcache[s], keys, n, buf, cost);
    fz_fault_post(side, fq, st == MGUARD_ENOMEM);
    if (st != MGUARD_OK && *fz_vstate(S, (uint32_t)*id) == 2) fz_fail("cache value %ld destroyed although set failed", *id);
    if (st != MGUARD_OK) *fz_vstate(S, (uint32_t)*id) = 0;
    return (long)st;
}

/* A walk of slot s: every entry in order. At step at: with x bit 2, the
   tuple okeys is set (an entry stored during the walk, never visited);
   with bit 3, the current entry is removed; then the action runs (the
   entry its object). The walk goes on while the cache lives. */
static void fz_cwalk(int side, int s, int at, uint16_t act, int x, const void *const *okeys, size_t on, int what)
{
    fz_side *S = &fz.s[side];
    int uid = S->cache_uid[s], i = 0;
    size_t vs = S->tinfo[uid].value_size;
    mguard_cache_iter it;
    model_citer mit;
    if (side == FZ_MG) it = mguard_cache_iterate(S->cache[s]); else mit = model_cache_iterate(S->mcache[s]);
    for (;; i++) {
        const void *const *keys;
        size_t n;
        void *v;
        if (side == FZ_MG) {
            if (!mguard_cache_next(&it)) break;
            keys = it.keys; n = it.nkeys; v = it.value;
            if (!mguard_cache_contains(S->cache[s], keys, n)) fz_fail("cache contains and iteration disagree");
        } else {
            if (!model_cache_next(&mit, &keys, &n, &v)) break;
        }
        fz_event_add(side, what, 5000 + s, i, fz_kpack(keys, n), (long)fz_value_read(v, vs, NULL, NULL), 0);
        if (i == at) {
            const void *cur[MGUARD_CACHE_MAX_KEYS];
            long id = -1, st;
            fz_ev ev;
            memcpy((void *)cur, keys, n * sizeof *keys);   /* the entry may go */
            if (x & 4) {
                st = fz_cset(side, s, okeys, on, 0, 0, &id);
                fz_event_add(side, FZ_EV_RES, FZ_CACHE, 5100, st, id, 0);
            }
            if ((x & 8) && S->cache_uid[s] == uid) {
                st = side == FZ_MG ? mguard_cache_take(S->cache[s], cur, n, NULL) : model_cache_take(S->mcache[s], cur, n, NULL);
                fz_event_add(side, FZ_EV_RES, FZ_CACHE, 5101, st, 0, 0);
            }
            ev.obj = cur[0];
            ev.guard = NULL;
            ev.tslot = -1;
            if (act && S->cache_uid[s] == uid) fz_run_action(side, act, &ev);
            if (S->cache_uid[s] != uid) break;   /* destroyed: the iterator is done */
        }
    }
}

/* Bad input, spelled once for both sides (P: mguard or model; C its
   cache, X its context): each refusal a bit of r[0] or r[1]. */
#define FZ_CACHE_MISUSE(P, C, X) do { \
        r[0] = (P##_cache_set(C, keys, 0, "12345678", 0) == MGUARD_EINVAL) + (P##_cache_set(C, NULL, 1, "12345678", 0) == MGUARD_EINVAL) * 2 + \
               (P##_cache_set(C, five, 5, "12345678", 0) == MGUARD_EINVAL) * 4 + (P##_cache_set(C, none, 1, "12345678", 0) == MGUARD_EINVAL) * 8 + \
               (P##_cache_set(C, keys, n, NULL, 0) == MGUARD_EINVAL) * 16 + (P##_cache_get(C, five, 5) == NULL) * 32 + \
               (P##_cache_get_or_compute(C, keys, n, NULL, NULL, &st) == NULL && st == MGUARD_EINVAL) * 64 + \
               (P##_cache_job_depend(NULL, keys[0], NULL) == MGUARD_EINVAL) * 128 + (P##_cache_job_set_cost(NULL, 1) == MGUARD_EINVAL) * 256 + \
               (P##_cache_get_stats(C, NULL) == MGUARD_EINVAL) * 512 + (P##_cache_last_reason(C, keys, n, NULL) == MGUARD_EINVAL) * 1024 + \
               (P##_cache_depend(C, none, 1, fz_pool[0], NULL) == MGUARD_EINVAL) * 2048 + (P##_cache_take(C, five, 5, NULL) == MGUARD_EINVAL) * 4096 + \
               (P##_cache_take(C, five, 5, cbuf) == MGUARD_EINVAL) * 8192 + (P##_cache_take(NULL, keys, n, cbuf) == MGUARD_EINVAL) * 16384; \
        r[1] = (P##_cache_count(NULL) == 0) + (P##_cache_format(NULL, NULL, 0) == 0) * 2 + (P##_cache_reason_format(NULL, NULL, 0) == 0) * 4 + \
               (P##_cache_create(X, NULL) == NULL) * 8 + (P##_cache_create(X, &d) == NULL) * 16 + \
               (P##_cache_get(NULL, keys, n) == NULL) * 32 + (P##_cache_contains(C, NULL, 1) == 0) * 64 + \
               (strcmp(P##_cache_cause_str((mguard_cache_cause)0), "unknown") == 0) * 128 + \
               (P##_cache_get_copy(C, five, 5, cbuf) == MGUARD_EINVAL) * 256 + (P##_cache_get_copy(C, keys, n, NULL) == MGUARD_EINVAL) * 512 + \
               (P##_cache_get_copy(NULL, keys, n, cbuf) == MGUARD_EINVAL) * 1024 + (P##_cache_get_copy(C, none, 1, cbuf) == MGUARD_EINVAL) * 2048; \
        P##_cache_clear(NULL); \
        P##_cache_destroy(NULL); \
        r[2] = (long)P##_cache_format(C, NULL, 0); \
    } while (0)

/* One FZ_CACHE operation; 0 when skipped (an event said so). */
static int fz_exec_cache(int side, const fz_op *op, const fz_ev *ev, long *r)
{
    fz_side *S = &fz.s[side];
    const int mg = side == FZ_MG;
    int s = (op->c >> 4) & 1, x = op->a >> 4, y = op->c >> 5, what = op->a & 15, fq, uid;
    const void *keys[MGUARD_CACHE_MAX_KEYS];
    size_t n = fz_ckeys(op, ev, keys), stored;
    mguard_cache *c;
    model_cache *m;
    if (!fz_cready(side, op, s)) return 0;
    c = S->cache[s];
    m = S->mcache[s];
    uid = S->cache_uid[s];
    if (op->b != 0xff && (op->b & 0x80) && what >= 2 && what <= 9 && (stored = fz_ckeys_stored(side, s, op->b & 0x7f, keys)))
        n = stored;   /* half the time: a tuple the cache holds */
    switch (what) {
    case 0: case 1:
        if (what == 1 || (x & 1)) fz_cdestroy(side, s);
        r[0] = fz_copen(S, s);
        break;
    case 2: case 3: {
        static const size_t costs[4] = { 0, 1, 3, 6 };   /* 6: over max_cost alone */
        r[0] = fz_cset(side, s, keys, n, costs[x % 4], op->act, &r[1]);
        break;
    }
    case 4: {
        /* the tuple (x bit 0: copied out by get_copy, counted the same),
           then a stored one (a hit: the entry becomes the most recently
           used) */
        const void *v;
        unsigned char copy[40];
        if (x & 1) {
            memset(copy, 0xa5, sizeof copy);
            r[3] = mg ? mguard_cache_get_copy(c, keys, n, copy) : model_cache_get_copy(m, keys, n, copy);
            v = r[3] == MGUARD_OK ? copy : NULL;
            if (!v && copy[0] != 0xa5) fz_fail("cache get_copy wrote out on a miss");
        } else {
            v = mg ? mguard_cache_get(c, keys, n) : model_cache_get(m, keys, n);
        }
        r[0] = v ? (long)fz_value_read(v, S->tinfo[uid].value_size, NULL, NULL) : -1;
        r[1] = mg ? mguard_cache_contains(c, keys, n) : model_cache_contains(m, keys, n);
        if ((n = fz_ckeys_stored(side, s, op->c, keys)) != 0) {
            v = mg ? mguard_cache_get(c, keys, n) : model_cache_get(m, keys, n);
            r[2] = v ? (long)fz_value_read(v, S->tinfo[uid].value_size, NULL, NULL) : -1;
        }
        break;
    }
    case 5: case 6: case 7: {
        fz_cjob j;
        long id = -1;
        j.side = side;
        j.slot = s;
        j.uid = uid;
        j.how = what == 5 ? (x & FZ_CC_DEPEND) : x | (y << 4);
        j.act = op->act;
        j.c = op->c;
        j.outer = NULL;
        r[0] = fz_cgoc(side, s, keys, n, &j, &id);
        r[1] = id;
        break;
    }
    case 8: {
        const void *o = y == 7 ? NULL : fz_obj((uint8_t)x, ev);
        const char *attr = fz_attrs[y % 4];
        mguard_status st;
        fq = fz_fault_pre(side);
        st = mg ? mguard_cache_depend(c, keys, n, o, attr) : model_cache_depend(m, keys, n, o, attr);
        fz_fault_post(side, fq, st == MGUARD_ENOMEM);
        r[0] = st;
        break;
    }
    case 9:
        if ((x & 3) == 3) {
            /* take: the value comes out alive, never destroyed nor told */
            unsigned char out[40];
            memset(out, 0xa5 + side, sizeof out);
            r[0] = mg ? mguard_cache_take(c, keys, n, out) : model_cache_take(m, keys, n, out);
            if (r[0] == MGUARD_OK) {
                unsigned char *st;
                r[1] = (long)fz_value_read(out, S->tinfo[uid].value_size, NULL, NULL);
                st = fz_vstate(S, (uint32_t)r[1]);
                if (*st != 1) fz_fail("cache take: value %ld not alive", r[1]);
                *st = 3;
            } else if (out[0] != 0xa5 + side) {
                fz_fail("cache take wrote out without an entry");
            }
        } else {
            r[0] = mg ? mguard_cache_take(c, keys, n, NULL) : model_cache_take(m, keys, n, NULL);
        }
        break;
    case 10:
        S->cache_busy[s]++;
        if (mg) mguard_cache_clear(c); else model_cache_clear(m);
        fz_cdone(S, s, uid);
        r[0] = fz_copen(S, s);
        r[1] = fz_copen(S, s) ? (long)(mg ? mguard_cache_count(c) : model_cache_count(m)) : -1;
        break;
    case 11:
        fz_cwalk(side, s, x % 4, op->act, x, keys, n, FZ_EV_RES);
        break;
    case 12: {
        char buf[400];
        size_t cap = (x & 8) ? (size_t)x * 3 : sizeof buf, len;
        fz_cstats(side, s, FZ_EV_RES);
        memset(buf, 0, sizeof buf);
        len = mg ? mguard_cache_format(c, buf, cap) : model_cache_format(m, buf, cap);
        r[0] = (long)len;
        r[1] = fz_hash(buf);
        r[2] = (long)(mg ? mguard_cache_count(c) : model_cache_count(m));
        break;
    }
    case 13: {
        /* the op's tuple, then the tuples of its shape from every pool object */
        mguard_cache_reason rs;
        mguard_status st;
        int k;
        for (k = -1; k < fz.o.nobj; k++) {
            if (k >= 0) n = fz_ckeys_from(op, fz_pool[k], keys);
            memset(&rs, 0, sizeof rs);
            st = mg ? mguard_cache_last_reason(c, keys, n, &rs) : model_cache_last_reason(m, keys, n, &rs);
            fz_creason(side, &rs, st);
        }
        break;
    }
    case 14: {
        const void *o = fz_obj(op->b, ev);
        const char *attr = fz_attrs[op->c % 4], *file = (x & 1) ? "fz_cache.c" : NULL;
        if (mg) mguard_on_mutation_at(S->ctx, o, attr, file, (int)x * 10);
        else model_on_mutation_at(S->mctx, o, attr, file, (int)x * 10);
        break;
    }
    default: {
        /* bad input: the same neutral answers on both sides */
        static const void *const none[1] = { NULL };
        const void *five[5];
        mguard_cache_desc d;
        mguard_status st = MGUARD_OK;
        unsigned char cbuf[40];
        int i;
        memset(&d, 0, sizeof d);
        for (i = 0; i < 5; i++) five[i] = fz_pool[i];
        if (mg) FZ_CACHE_MISUSE(mguard, c, S->ctx);
        else FZ_CACHE_MISUSE(model, m, S->mctx);
        break;
    }
    }
    return 1;
}

/* ---- the auxiliary context: hooks and callbacks that re-enter -----------
   mguard only, no model: what it does can't be predicted exactly, so
   every operation is followed by a check of what must hold. A context of
   its own (created by the first AUX operation; AUX_CTX destroys it,
   creates it again, thread-safe or not, so its address and its objects'
   come back, and can make one of its allocations fail), a pool of
   FZ_XOBJ objects of its own, its own allocator (no leak at its destroy):
   - ledgers (slot 0 created with every value hook, slots 1-2 its clones)
     whose retain, release, equal, refs and format hooks and whose apply
     callback re-enter the library: the release hook destroys an object
     whose last reference went (reference counting), the equal, refs and
     format hooks change a ledger or destroy an object meanwhile; records,
     hooks, diff, prune, apply, restore, clear, destroy;
   - a scope tracker with type_name, child, clock and report-writer
     callbacks that re-enter (queries, counters, naming, the tracker's
     own destroy), a trace, small limits.
   Checked after every operation: mguard_ctx_check and mgt_ledger_check;
   each ledger's counts against its iterators, records and hooks (ids
   distinct), is_empty; per object, retains minus releases equal to the
   number of ledgers that refer to it (exact balance: every retain matched
   by exactly one release, none for an object being or already destroyed,
   all zero once the context is gone); a write handed to apply never
   belongs to an object destroyed earlier in that apply; reports as in
   fz_check_report, the trace strict JSON; the root's counters equal to
   the sum of the amounts accepted, in order (its self: of those accepted
   with no frame open). */

#define FZ_XOBJ 12
#define FZ_XLED 3
static char fz_xpool[FZ_XOBJ][16];

static struct fz_aux {
    mguard_ctx *ctx;
    fz_alloc_state alloc;
    mguard_ledger *led[FZ_XLED];
    int mode;                  /* the ledgers' hook behaviour, FZ_XM_* bits */
    long held[FZ_XOBJ];        /* retains minus releases */
    int dying[FZ_XOBJ];        /* its mguard_on_destroy is running */
    int dead[FZ_XOBJ];         /* destroyed, not handed to mguard since */
    int in_hook;               /* a hook is re-entering: no further re-entry */
    bool thread_safe;          /* fz_x.ctx was made thread-safe (retain runs under its lock) */
    int closing;               /* the context is being destroyed: no re-entry */
    int applying;
    mguard_scope *scope;
    int smode;                 /* the scope's callback behaviour, FZ_XS_* bits */
    const char *root;
    double root_total[2];      /* "flops", "mem" of the root: accepted adds */
    double root_self[2];       /* the same, accepted at depth 0 */
    uint8_t clock_next;
    long calls, retains;       /* hooks and callbacks called (figures) */
    const void *self_destroyed; /* destroyed by type_name during its own lookup */
    /* guarded caches (fz_xcache): two slots; every value carries the
       fingerprint of what it was computed from (fz_xfp) and an id whose
       state says stored (1) or destroyed (2): destroyed twice fails */
    mguard_cache *cache[2];
    long ver[FZ_XOBJ][4];      /* per object: attributes a, b, c, and the whole object */
    unsigned char cval[8192];
    uint32_t next_cval;
    int cdepth;                /* computes running (nested) */
    /* the logger (fz_xlog) re-enters: it queries the handle a line is
       about, and destroys it where the decoder is done with it for the
       operation (bits: 1, 2 caches 0 and 1; 4 the scope tracker) */
    int log_may_destroy, in_log;
    long log_lines, log_destroys;
} fz_x;

enum {
    FZ_XM_RETAIN_REENTER = 1, FZ_XM_REFCOUNT = 2, FZ_XM_EQUAL_CHANGES = 4, FZ_XM_REFS_CHAIN = 8,
    FZ_XM_REFS_CHANGES = 16, FZ_XM_FORMAT_DESTROYS = 32, FZ_XM_APPLY_DESTROYS = 64, FZ_XM_APPLY_DELETES = 128
};
enum { FZ_XS_TYPE_QUERIES = 1, FZ_XS_TYPE_DESTROYS_OTHER = 2, FZ_XS_CHILD_CYCLES = 4, FZ_XS_CHILD_NAMES = 8,
       FZ_XS_CLOCK_QUERIES = 16 };

static const void *fz_xobj(uint8_t x)
{
    return x % (FZ_XOBJ + 1) == FZ_XOBJ ? NULL : fz_xpool[x % (FZ_XOBJ + 1)];
}

/* Pool index of p; -1 for NULL; anything else is a failure. */
static int fz_xix(const void *p, const char *who)
{
    uintptr_t base = (uintptr_t)(const void *)fz_xpool, u = (uintptr_t)p;
    if (!p) return -1;
    if (u >= base && u < base + sizeof fz_xpool && (u - base) % sizeof fz_xpool[0] == 0) return (int)((u - base) / sizeof fz_xpool[0]);
    fz_fail("aux: %s got %p, not an object of the pool", who, p);
}

/* Object i changed: attribute a (0-2), the whole object (3, attr NULL),
   or died (4: everything). */
static void fz_xbump(int i, int a)
{
    int k;
    for (k = 0; k < 4; k++)
        if (a == 4 || k == a || (a == 3 && k == 3)) fz_x.ver[i][k]++;
}

/* p is handed to mguard: a new life if it was destroyed. */
static const void *fz_xuse(const void *p)
{
    int i = fz_xix(p, "use");
    if (i >= 0) fz_x.dead[i] = 0;
    return p;
}

/* mguard_on_destroy(p): every ledger drops p without releasing it. */
static void fz_xdestroy(const void *p)
{
    int i = fz_xix(p, "destroy");
    if (i < 0) return;
    fz_x.dying[i]++;
    fz_xbump(i, 4);
    mguard_on_destroy(fz_x.ctx, p);
    fz_x.dying[i]--;
    if (!fz_x.dying[i]) {
        fz_x.held[i] = 0;
        fz_x.dead[i] = 1;
    }
}

/* ---- the ledgers' hooks ---- */

static void fz_xretain(void *p, void *user)
{
    int i = fz_xix(p, "retain");
    (void)user;
    fz_x.calls++;
    fz_x.retains++;
    if (i < 0) fz_fail("aux: retain(NULL)");
    if (fz_x.dying[i] || fz_x.dead[i]) fz_fail("aux: retain of object %d, %s", i, fz_x.dying[i] ? "being destroyed" : "destroyed");
    fz_x.held[i]++;
    /* on a thread-safe context retain runs under the lock: it must not
       call in (issue 11, defect 1); elsewhere it may */
    if ((fz_x.mode & FZ_XM_RETAIN_REENTER) && !fz_x.in_hook && !fz_x.closing && !fz_x.thread_safe) {
        fz_x.in_hook++;
        (void)mgt_ctx_contains(fz_x.ctx, p);
        (void)mguard_intern(fz_x.ctx, "retained");
        (void)mgt_objects(fz_x.ctx);
        fz_x.in_hook--;
    }
}

static void fz_xrelease(void *p, void *user)
{
    int i = fz_xix(p, "release");
    (void)user;
    fz_x.calls++;
    if (i < 0) fz_fail("aux: release(NULL)");
    if (fz_x.dying[i]) fz_fail("aux: release of object %d while it is being destroyed", i);
    if (fz_x.dead[i]) fz_fail("aux: release of object %d after its destroy", i);
    if (fz_x.held[i] <= 0) fz_fail("aux: release of object %d without a retain", i);
    fz_x.held[i]--;
    /* reference counting: the last reference gone, the object dies */
    if (fz_x.held[i] == 0 && (fz_x.mode & FZ_XM_REFCOUNT) && !fz_x.in_hook && !fz_x.closing) {
        fz_x.in_hook++;
        fz_xdestroy(p);
        fz_x.in_hook--;
    }
}

static bool fz_xequal(const void *a, const void *b, void *user)
{
    int i = fz_xix(a, "equal"), j = fz_xix(b, "equal");
    (void)user;
    fz_x.calls++;
    if (i < 0 || j < 0 || a == b) fz_fail("aux: equal(%d, %d)", i, j);
    if ((fz_x.mode & FZ_XM_EQUAL_CHANGES) && !fz_x.in_hook && fz_x.led[0]) {
        fz_x.in_hook++;
        mguard_ledger_record(fz_x.led[0], "equal", NULL);
        fz_x.in_hook--;
    }
    return i % 3 == j % 3;
}

static void fz_xrefs(const void *value, mguard_ledger_visit_fn visit, void *vctx, void *user)
{
    int i = fz_xix(value, "refs");
    (void)user;
    fz_x.calls++;
    if (i < 0) return;
    visit(value, vctx);
    if (fz_x.mode & FZ_XM_REFS_CHAIN) visit(fz_xpool[(i + 1) % FZ_XOBJ], vctx);
    if ((fz_x.mode & FZ_XM_REFS_CHANGES) && !fz_x.in_hook && fz_x.led[0] && i % 4 == 0) {
        fz_x.in_hook++;
        mguard_ledger_track(fz_x.led[0], fz_xuse(fz_xpool[(i + 5) % FZ_XOBJ]), MGUARD_LEDGER_NEW, "refs");
        fz_x.in_hook--;
    }
}

static void fz_xformat(const void *obj, const char *attr, const void *value, size_t vsize, char *buf, size_t size, void *user)
{
    int i = fz_xix(value, "format");
    int oi = fz_xix(obj, "format's object");
    (void)user;
    (void)attr;
    if (oi >= 0 && fz_x.dead[oi]) fz_fail("aux: a format hook was handed destroyed object %d", oi);
    if (vsize) fz_fail("aux: a pointer value formatted with size %lu", (unsigned long)vsize);
    fz_x.calls++;
    snprintf(buf, size, "x%d", i);
    if ((fz_x.mode & FZ_XM_FORMAT_DESTROYS) && !fz_x.in_hook && i >= 0 && i % 5 == 1) {
        fz_x.in_hook++;
        fz_xdestroy(value);
        fz_x.in_hook--;
    }
}

/* apply: never a write of an object or value destroyed earlier in it */
static void fz_xapply_cb(void *obj, const char *attr, void *value, bool deleted, void *user)
{
    int i = fz_xix(obj, "apply"), j = fz_xix(value, "apply");
    mguard_ledger *L = (mguard_ledger *)user;
    fz_x.calls++;
    if (i < 0 || !attr || (deleted && value)) fz_fail("aux: apply(%d, %s, %d, %d)", i, attr ? attr : "NULL", j, deleted);
    if (fz_x.dead[i] || (j >= 0 && fz_x.dead[j])) fz_fail("aux: apply handed a write of destroyed object %d", fz_x.dead[i] ? i : j);
    if (fz_x.in_hook) return;
    fz_x.in_hook++;
    if ((fz_x.mode & FZ_XM_APPLY_DESTROYS) && i % 3 == 0) fz_xdestroy(obj);
    else if ((fz_x.mode & FZ_XM_APPLY_DESTROYS) && j >= 0 && j % 3 == 1) fz_xdestroy(value);
    if (fz_x.mode & FZ_XM_APPLY_DELETES) mguard_ledger_delete_attr(L, obj, "y");
    fz_x.in_hook--;
}

/* ---- the scope's callbacks ---- */

static const char *fz_xtype(const void *comp, void *user)
{
    static const char *const types[4] = { "Net", "Block", NULL, "Leaf" };
    int i = fz_xix(comp, "type_name");
    (void)user;
    fz_x.calls++;
    if (i < 0) fz_fail("aux: type_name(NULL)");
    if (!fz_x.in_hook && (fz_x.smode & (FZ_XS_TYPE_QUERIES | FZ_XS_TYPE_DESTROYS_OTHER))) {
        fz_x.in_hook++;
        (void)mgt_scope_known_name(fz_x.scope, comp);
        (void)mguard_scope_frames(fz_x.scope, NULL, 0);
        /* comp itself too (issue 11, defect 6: it was named anyway); its
           lookup must then fail */
        if ((fz_x.smode & FZ_XS_TYPE_DESTROYS_OTHER) && (fz_x.smode & 0x80)) {
            fz_x.self_destroyed = comp;
            fz_xdestroy(comp);
        } else if (fz_x.smode & FZ_XS_TYPE_DESTROYS_OTHER) {
            fz_xdestroy(fz_xpool[(i + 7) % FZ_XOBJ]);
        }
        fz_x.in_hook--;
    }
    return types[i % 4];
}

static bool fz_xchild(const void *comp, size_t index, const char **name, const void **child, void *user)
{
    static const char *const names[3] = { "0", "enc", "a.b" };
    int i = fz_xix(comp, "child"), c;
    (void)user;
    fz_x.calls++;
    if (index >= 2) return false;
    c = index == 0 ? i + 1 : i + 3;
    if (c >= FZ_XOBJ && !(fz_x.smode & FZ_XS_CHILD_CYCLES)) return false;
    *name = names[(i + (int)index) % 3];
    *child = fz_xpool[c % FZ_XOBJ];
    if ((fz_x.smode & FZ_XS_CHILD_NAMES) && !fz_x.in_hook) {
        fz_x.in_hook++;
        (void)mguard_scope_name(fz_x.scope, fz_xpool[(i + 2) % FZ_XOBJ]);
        fz_x.in_hook--;
    }
    return true;
}

/* Clock values from the extreme numbers, up to +-DBL_MAX (issue 11,
   defect 2: the trace of times from about 1e60 over-read a buffer). */
static double fz_xclock(void *user)
{
    double t = fz_num(fz_x.clock_next++);
    (void)user;
    fz_x.calls++;
    if ((fz_x.smode & FZ_XS_CLOCK_QUERIES) && !fz_x.in_hook) {
        fz_x.in_hook++;
        (void)fz_scope_depth(fz_x.scope);
        (void)fz_scope_current(fz_x.scope);
        fz_x.in_hook--;
    }
    return t;
}


/* ---- the context ---- */

/* The auxiliary context's logger (issue 23: every callout is a re-entry
   point, the logger included). A line reaches it only once the call that
   logged is done with its structures (or at that call's next callout): it
   calls functions of the cache or scope tracker the line is about, and
   destroys that handle where the decoder allows it. */
static void fz_xlog(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    (void)level;
    (void)user;
    fz_x.log_lines++;
    if (fz_x.in_hook || fz_x.closing || !fz_x.ctx || fz_x.in_log) return;
    fz_x.in_log++;
    if (code == MGUARD_LOG_CACHE_REASON) {
        int k;
        for (k = 0; k < 2; k++) {
            mguard_cache *c = fz_x.cache[k];
            mguard_cache_stats st;
            if (!c) continue;
            if (mguard_cache_get_stats(c, &st) != MGUARD_OK || st.stored < mguard_cache_count(c))
                fz_fail("aux: the logger's view of cache %d", k);
            if (fz_x.log_may_destroy & (1 << k)) {
                fz_x.cache[k] = NULL;
                fz_x.log_destroys++;
                mguard_cache_destroy(c);
            }
        }
    } else if (strncmp(msg, "mguard_scope", 12) == 0 && fz_x.scope) {
        const char *cur = fz_scope_current(fz_x.scope);
        if (fz_scope_depth(fz_x.scope) && !cur) fz_fail("aux: the logger's view of the scope tracker");
        if (fz_x.log_may_destroy & 4) {
            mguard_scope *sc = fz_x.scope;
            fz_x.scope = NULL;
            fz_x.log_destroys++;
            mguard_scope_destroy(sc);
        }
    }
    fz_x.in_log--;
}

/* call, where the decoder does not use the handle(s) of bits afterwards */
#define FZ_XLOG_MAY_DESTROY(bits, call) do { fz_x.log_may_destroy = (bits); call; fz_x.log_may_destroy = 0; } while (0)

/* The auxiliary context's describe hook (issue 25): pool objects only,
   named "x<index>"; it re-enters like the logger (queries the caches,
   destroys one where the decoder allows it). */
static void fz_xdescribe(const void *obj, char *buf, size_t size, void *user)
{
    int i = fz_xix(obj, "describe"), k;
    (void)user;
    fz.res.aux_calls++;
    if (size < 64) fz_fail("aux: describe given %lu bytes", (unsigned long)size);
    if (buf[0]) fz_fail("aux: describe's buffer does not start empty");
    if (i % 4 == 3) return;   /* no name: the address */
    snprintf(buf, size, "x%d", i);
    if (fz_x.in_hook || fz_x.closing || !fz_x.ctx || fz_x.in_log) return;
    fz_x.in_log++;
    for (k = 0; k < 2; k++) {
        mguard_cache *c = fz_x.cache[k];
        if (!c) continue;
        (void)mguard_cache_count(c);
        if ((fz_x.log_may_destroy & (1 << k)) && i % 4 == 2) {
            fz_x.cache[k] = NULL;
            fz_x.log_destroys++;
            mguard_cache_destroy(c);
        }
    }
    fz_x.in_log--;
}

/* A reason's obj_name is the hook's name of its object, or NULL. */
static void fz_xcheck_name(const mguard_cache_reason *r)
{
    char want[16];
    if (!r->obj_name) return;
    snprintf(want, sizeof want, "x%d", fz_xix(r->obj, "a reason"));
    if (strcmp(r->obj_name, want) != 0) fz_fail("aux: a reason names %s as %s", want, r->obj_name);
}

static void fz_xopen(int thread_safe)
{
    mguard_ctx_desc d;
    memset(&d, 0, sizeof d);
    d.allocator.realloc_fn = fz_realloc;
    d.allocator.free_fn = fz_free;
    d.allocator.user = &fz_x.alloc;
    d.quiet = true;
    d.logger.func = fz_xlog;
    d.describe.func = fz_xdescribe;
    d.thread_safe = (thread_safe & 1) != 0;
    d.strict_generations = (thread_safe & 2) != 0;
    fz_x.ctx = mguard_ctx_create(&d);
    if (!fz_x.ctx) fz_fail("aux: mguard_ctx_create failed");
    fz_x.thread_safe = (thread_safe & 1) != 0;
    {
        mguard_ctx_stats cs;
        if (mguard_ctx_get_stats(fz_x.ctx, &cs) != MGUARD_OK || cs.thread_safe != fz_x.thread_safe) fz_fail("aux: get_stats thread_safe");
    }
}

static void fz_xclose(void)
{
    int i;
    if (!fz_x.ctx) return;
    fz_x.closing = 1;
    mguard_ctx_destroy(fz_x.ctx);
    fz_x.closing = 0;
    fz_x.ctx = NULL;
    fz_x.scope = NULL;
    memset((void *)fz_x.led, 0, sizeof fz_x.led);
    memset((void *)fz_x.cache, 0, sizeof fz_x.cache);
    for (i = 0; i < (int)fz_x.next_cval && i < (int)sizeof fz_x.cval; i++)
        if (fz_x.cval[i] == 1) fz_fail("aux: cache value %d not destroyed with its context", i);
    memset(fz_x.cval, 0, sizeof fz_x.cval);
    fz_x.next_cval = 0;
    for (i = 0; i < FZ_XOBJ; i++)
        if (fz_x.held[i]) fz_fail("aux: object %d retained %ld more times than released after its context's destroy", i, fz_x.held[i]);
    if (fz_x.alloc.live_blocks) fz_fail("aux: %ld blocks leaked", fz_x.alloc.live_blocks);
    fz_x.alloc.fail_at = 0;
}

/* ---- checks ---- */

/* Does L refer to p (tracked, a write's value, a record's payload, a
   hook's object or function)? Walks the iterators, records and hooks. */
static int fz_xrefers(const mguard_ledger *L, const void *p)
{
    mguard_ledger_iter it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL);
    while (mguard_ledger_next(&it)) {
        mguard_ledger_iter w = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_WRITES, it.obj);
        if (it.obj == p) return 1;
        while (mguard_ledger_next(&w))
            if (w.value == p) return 1;
    }
    it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_RECORDS, NULL);
    while (mguard_ledger_next(&it))
        if (it.payload == p) return 1;
    it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_HOOKS, NULL);
    while (mguard_ledger_next(&it))
        if (it.obj == p || it.fn == p) return 1;
    return 0;
}

static void fz_xcheck_ledger(const mguard_ledger *L)
{
    mguard_ledger_iter it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL);
    mguard_ledger_stats ls = fz_lstats(L);
    size_t n = 0, nmod = 0, nw = 0, i;
    int ids[64];
    if (mgt_ledger_check(L) != MGUARD_OK) fz_fail("aux: mgt_ledger_check failed");
    while (mguard_ledger_next(&it)) {
        mguard_ledger_iter w = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_WRITES, it.obj);
        mguard_ledger_entry e;
        int oi = fz_xix(it.obj, "ledger objects");
        n++;
        nmod += it.modified;
        if (oi < 0 || fz_x.dead[oi]) fz_fail("aux: ledger holds destroyed object %d", oi);
        if (mguard_ledger_get(L, it.obj, &e) != MGUARD_OK || e.kind != it.kind || e.modified != it.modified)
            fz_fail("aux: ledger_get disagrees with the iterator");
        while (mguard_ledger_next(&w)) {
            int vi = fz_xix(w.value, "ledger writes");
            nw++;
            if (vi >= 0 && fz_x.dead[vi]) fz_fail("aux: a write's value is destroyed object %d", vi);
        }
    }
    if (n != ls.entries || nmod != ls.modified || nw != ls.writes)
        fz_fail("aux: counts %lu/%lu/%lu, iterated %lu/%lu/%lu", (unsigned long)ls.entries, (unsigned long)ls.modified,
                (unsigned long)ls.writes, (unsigned long)n, (unsigned long)nmod, (unsigned long)nw);
    it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_MODIFIED, NULL);
    for (i = 0; mguard_ledger_next(&it); i++)
        if (!it.modified) fz_fail("aux: the modified walk returned an unmodified object");
    if (i != nmod) fz_fail("aux: %lu modified, the walk returns %lu", (unsigned long)nmod, (unsigned long)i);
    it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_RECORDS, NULL);
    for (i = 0; mguard_ledger_next(&it); i++)
        if (!it.tag) fz_fail("aux: record %lu without a tag", (unsigned long)i);
    if (i != ls.records) fz_fail("aux: %lu records, the walk returns %lu", (unsigned long)ls.records, (unsigned long)i);
    it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_HOOKS, NULL);
    for (i = 0; mguard_ledger_next(&it); i++) {
        size_t j;
        if (it.id < 0 || fz_xix(it.obj, "hooks walk") < 0) fz_fail("aux: hook %lu: id %d", (unsigned long)i, it.id);
        for (j = 0; j < i && j < 64; j++)
            if (ids[j] == it.id) fz_fail("aux: hook id %d twice", it.id);
        if (i < 64) ids[i] = it.id;
    }
    if (i != ls.hooks) fz_fail("aux: %lu hooks, the walk returns %lu", (unsigned long)ls.hooks, (unsigned long)i);
    if (ls.storage_bytes == 0) fz_fail("aux: storage_bytes 0");
}

static void fz_xcheck_cache(mguard_cache *c);
static void fz_xcheck(void)
{
    int i, l;
    char path[512];
    if (!fz_x.ctx) return;
    if (mguard_ctx_check(fz_x.ctx) != MGUARD_OK) fz_fail("aux: mguard_ctx_check failed");
    for (l = 0; l < 2; l++)
        if (fz_x.cache[l]) fz_xcheck_cache(fz_x.cache[l]);
    for (l = 0; l < FZ_XLED; l++)
        if (fz_x.led[l]) fz_xcheck_ledger(fz_x.led[l]);
    for (i = 0; i < FZ_XOBJ; i++) {
        long refs = 0;
        for (l = 0; l < FZ_XLED; l++) refs += fz_x.led[l] && fz_xrefers(fz_x.led[l], fz_xpool[i]);
        if (refs != fz_x.held[i]) fz_fail("aux: object %d: %ld retains not released, %ld ledgers refer to it", i, fz_x.held[i], refs);
    }
    if (fz_x.scope) {
        const char *par[8], *fr[8], *p;
        size_t n = mguard_scope_format(fz_x.scope, MGUARD_SCOPE_PATH, path, sizeof path), depth = 0, np = mguard_scope_parents(fz_x.scope, par, 8);
        size_t nf = mguard_scope_frames(fz_x.scope, fr, 8), j;
        for (p = path; (p = strstr(p, " > ")) != NULL; p += 3) depth++;
        if (n < sizeof path && depth != nf - 1) fz_fail("aux: path %s at depth %lu", path, (unsigned long)nf - 1);
        if (np < 1 || strcmp(par[0], fz_x.root) != 0 || !mguard_scope_is_active(fz_x.scope, fz_x.root)) fz_fail("aux: the root is not active");
        if (!mguard_scope_is_active(fz_x.scope, fr[0])) fz_fail("aux: current is not active");
        /* the PATH view is the stack, outermost first */
        for (j = nf <= 8 && n < sizeof path ? nf : 0, p = path; j-- > 0; p += j ? 3 : 0) {
            if (strncmp(p, fr[j], strlen(fr[j])) != 0) fz_fail("aux: path %s, frame %lu is %s", path, (unsigned long)j, fr[j]);
            p += strlen(fr[j]);
        }
        for (i = 0; i < 2; i++) {
            double self, total = mguard_scope_counter(fz_x.scope, fz_x.root, fz_counters[i], &self);
            if (fz_dbits(total) != fz_dbits(fz_x.root_total[i]) || fz_dbits(self) != fz_dbits(fz_x.root_self[i]))
                fz_fail("aux: root counter %s is %g (self %g), the accepted adds sum to %g (%g)", fz_counters[i],
                        total, self, fz_x.root_total[i], fz_x.root_self[i]);
        }
    }
}

/* ---- the operations ---- */

static const char *const fz_xnames[6] = { "Net", "Net.enc", "a", "", "x.0", NULL };

/* The i-th object ledger l tracks, else p. */
static const void *fz_xtracked(const mguard_ledger *L, uint8_t sel, const void *p)
{
    mguard_ledger_iter it;
    size_t n = fz_lstats(L).entries, i;
    if (!n || !(sel & 0x80)) return p;
    i = sel % n;
    it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL);
    while (mguard_ledger_next(&it))
        if (i-- == 0) return it.obj;
    return p;
}

static void fz_xledger(const fz_op *op)
{
    int sub = op->a % 16, l = (op->b >> 5) % 4 % FZ_XLED, m = (op->b >> 3) % FZ_XLED, id;
    mguard_ledger *L;
    const void *o, *v;
    const char *attr = fz_attrs[op->c % 4];
    if (sub == 0 || !fz_x.led[0]) {
        mguard_ledger_desc d;
        if (fz_x.led[0]) return;
        memset(&d, 0, sizeof d);
        d.retain = fz_xretain;
        d.release = fz_xrelease;
        d.equal = (op->c & 1) ? fz_xequal : NULL;
        d.refs = (op->c & 2) ? fz_xrefs : NULL;
        d.format_value = (op->c & 4) ? fz_xformat : NULL;
        d.format_object = (op->c & 8) ? NULL : d.format_value;
        d.user = &fz_x;
        fz_x.mode = op->b;
        fz_x.led[0] = mguard_ledger_create(fz_x.ctx, &d);
        if (!fz_x.led[0] && !fz_x.alloc.fail_at) fz_fail("aux: ledger_create failed");
        return;
    }
    L = fz_x.led[l];
    if (!L) return;
    o = fz_xtracked(L, op->c, fz_xobj(op->b));
    v = fz_xobj((uint8_t)(op->c >> 2));
    switch (sub) {
    case 1:
        fz_xuse(o);
        mguard_ledger_track(L, o, (mguard_ledger_kind)(MGUARD_LEDGER_EXISTING + op->c % 3), fz_xnames[op->c % 6]);
        break;
    case 2: mguard_ledger_store_attr(L, o, attr, (void *)fz_xuse(v)); break;
    case 3: mguard_ledger_delete_attr(L, o, attr); break;
    case 4: mguard_ledger_record(L, fz_xnames[op->c % 6], (void *)fz_xuse(v)); break;
    case 5:
        if (mguard_ledger_register_hook(L, fz_xuse(o), fz_xnames[op->c % 6], (void *)fz_xuse(v), &id) == MGUARD_OK) {
            mguard_ledger_iter h = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_HOOKS, NULL);
            bool found = false;
            while (!found && mguard_ledger_next(&h)) found = h.id == id;
            if (!found || h.obj != o || h.fn != v) fz_fail("aux: hook %d not found after its registration", id);
        }
        break;
    case 6: {
        /* remove a hook in the middle of a walk over the hooks (or the
           records): it is never returned after, none is returned twice */
        int gone = (int)(op->c % 6) - 1, ids[64];
        size_t n = 0, j;
        mguard_ledger_iter h = mguard_ledger_iterate(L, (op->c & 0x40) ? MGUARD_LEDGER_WALK_RECORDS : MGUARD_LEDGER_WALK_HOOKS, NULL);
        bool removed = false;
        while (mguard_ledger_next(&h)) {
            if (op->c & 0x40) {
                if (!h.tag) fz_fail("aux: a records walk returned no tag");
            } else {
                if (removed && h.id == gone) fz_fail("aux: hook %d returned after its removal", gone);
                for (j = 0; j < n && j < 64; j++)
                    if (ids[j] == h.id) fz_fail("aux: hook id %d returned twice by one walk", h.id);
                if (n < 64) ids[n] = h.id;
                n++;
            }
            if (!removed) {
                removed = true;
                mguard_ledger_remove_hook(L, gone);
            }
        }
        if (!removed) mguard_ledger_remove_hook(L, gone);
        break;
    }
    case 7:
        if (m == 0 || m == l) break;
        if (fz_x.led[m]) mguard_ledger_destroy(fz_x.led[m]);
        fz_x.led[m] = mguard_ledger_clone(L);
        if (fz_x.led[m] && fz_x.mode == 0 && !mguard_ledger_equal(L, fz_x.led[m])) fz_fail("aux: a clone is not equal to its ledger");
        break;
    case 8: if (fz_x.led[m]) mguard_ledger_restore(L, fz_x.led[m]); break;
    case 9:
        if (fz_x.led[m]) {
            mguard_ledger_diff_result *d = NULL;
            mguard_status st = mguard_ledger_diff(L, fz_x.led[m], &d);
            /* without changing hooks the diff agrees with equal */
            if (st == MGUARD_OK && !(fz_x.mode & (FZ_XM_EQUAL_CHANGES | FZ_XM_FORMAT_DESTROYS)) && fz_x.led[l] && fz_x.led[m])
                fz_check_diff(L, fz_x.led[m], d);
            else if (st == MGUARD_OK) {
                size_t n;
                char *text = fz_diff_text(d, &n);
                if ((n == 0) != (*text == '\0')) fz_fail("aux: diff text and items disagree");
                free(text);
            }
            mguard_ledger_diff_free(d);
        }
        break;
    case 10: {
        const void *roots[2];
        roots[0] = o;
        roots[1] = v;
        mguard_ledger_prune(L, roots, op->c % 3);
        break;
    }
    case 11:
        fz_x.applying++;
        mguard_ledger_apply(L, fz_xapply_cb, L);
        fz_x.applying--;
        break;
    case 12: mguard_ledger_clear(L); break;
    case 13:
        mguard_ledger_destroy(L);
        fz_x.led[l] = NULL;
        break;
    case 14: fz_xdestroy(o); break;
    default: {
        void *val = NULL;
        mguard_ledger_entry e;
        mguard_status st = mguard_ledger_pending(L, o, attr, &val), g = mguard_ledger_get(L, o, &e);
        /* the NULL-out forms answer as the full ones */
        if (mguard_ledger_pending(L, o, attr, NULL) != st) fz_fail("aux: pending with and without a value pointer disagree");
        if (mguard_ledger_get(L, o, NULL) != g) fz_fail("aux: get with and without an entry disagree");
        if (g == MGUARD_OK) {
            /* the entry's modified and the walk of what (0 and 6: unknown, empty) */
            mguard_ledger_iter it = mguard_ledger_iterate(L, (mguard_ledger_walk)(op->c % 7), o);
            bool seen = false, walked = false;
            while (mguard_ledger_next(&it)) {
                walked = true;
                seen |= it.obj == o && (op->c % 7 == MGUARD_LEDGER_WALK_ENTRIES || op->c % 7 == MGUARD_LEDGER_WALK_MODIFIED);
                if (op->c % 7 == MGUARD_LEDGER_WALK_WRITES && it.obj != o) fz_fail("aux: a writes walk left its object");
            }
            if (op->c % 7 == MGUARD_LEDGER_WALK_ENTRIES && !seen) fz_fail("aux: a tracked object missing from the walk");
            if (op->c % 7 == MGUARD_LEDGER_WALK_MODIFIED && seen != e.modified) fz_fail("aux: the modified walk and the entry disagree");
            if (op->c % 7 == MGUARD_LEDGER_WALK_WRITES && walked != (e.writes > 0)) fz_fail("aux: the writes walk and the entry disagree");
            if ((op->c % 7 == 0 || op->c % 7 == 6) && walked) fz_fail("aux: an unknown walk returned something");
        }
        mguard_ledger_mark_modified(L, o);
        break;
    }
    }
}

static void fz_xscope(const fz_op *op)
{
    /* enter, exit and reports (the trace) come most often; the tracker is
       created by the first operation when there is none (sub-op 0) */
    static const unsigned char subs[32] = { 1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5,
                                            6, 6, 6, 6, 7, 7, 8, 9, 10, 10, 11, 12, 12, 13, 13, 13 };
    int sub = subs[op->a % 32];
    mguard_scope *s = fz_x.scope;
    const void *o = fz_xobj(op->b);
    if (!s) {
        mguard_scope_desc d;
        memset(&d, 0, sizeof d);
        d.root_name = (op->c & 1) ? "Root" : NULL;
        d.type_name = fz_xtype;
        d.child = (op->c & 2) ? fz_xchild : NULL;
        d.clock = (op->c & 4) ? fz_xclock : NULL;
        d.trace = (op->c & 8) != 0;
        d.max_trace_events = op->b % 8;
        d.max_warnings = op->b % 3;
        d.user = &fz_x;
        fz_x.smode = op->b;
        fz_x.root = (op->c & 1) ? "Root" : "Global";
        fz_x.root_total[0] = fz_x.root_total[1] = fz_x.root_self[0] = fz_x.root_self[1] = 0.0;
        fz_x.clock_next = (uint8_t)(op->b ^ op->c);   /* extremes from the first call on */
        fz_x.scope = mguard_scope_create(fz_x.ctx, &d);
        if (!fz_x.scope && !fz_x.alloc.fail_at) fz_fail("aux: scope_create failed");
        return;
    }
    switch (sub) {
    case 1: {
        /* In a cycle of children, or when a child callback names another
           component whose subtree holds comp, a walk renames comp itself
           (parent + "." + child, as the reference's _get_mod_name does)
           after its name was taken: the answer is then the old name. */
        const char *name;
        int known = mgt_ctx_contains(fz_x.ctx, o);
        fz_x.self_destroyed = NULL;
        name = mguard_scope_name(s, fz_xuse(o));
        if (o && known && fz_x.self_destroyed == o && (name || mgt_scope_known_name(s, o) || mgt_ctx_contains(fz_x.ctx, o)))
            fz_fail("aux: object %d destroyed by type_name during its own lookup is named", fz_xix(o, "name"));
        if (name && (!*name || (mgt_scope_known_name(s, o) != name && !(fz_x.smode & (FZ_XS_CHILD_CYCLES | FZ_XS_CHILD_NAMES)))))
            fz_fail("aux: scope_name of object %d is \"%s\", known_name \"%s\"", fz_xix(o, "name"), name, mgt_scope_known_name(s, o) ? mgt_scope_known_name(s, o) : "(null)");
        break;
    }
    case 2:
        /* set a name, or attach one object under another (the parent's
           lookup may walk, its callbacks re-entering), or forget a subtree */
        if (op->c & 0x80) FZ_XLOG_MAY_DESTROY(4, (void)mguard_scope_forget(s, fz_xuse(o)));
        else if (op->c & 0x40) FZ_XLOG_MAY_DESTROY(4, (void)mguard_scope_attach(s, fz_xuse(o), fz_xuse(fz_xobj((uint8_t)(op->c * 7))), fz_xnames[op->c % 6]));
        else FZ_XLOG_MAY_DESTROY(4, mguard_scope_set_name(s, fz_xuse(o), fz_xnames[op->c % 6]));
        break;
    case 3: {
        size_t depth = fz_scope_depth(s);
        mguard_status st;
        int known = mgt_ctx_contains(fz_x.ctx, o);
        fz_x.self_destroyed = NULL;
        st = mguard_scope_enter(s, fz_xuse(o));
        if (o && known && fz_x.self_destroyed == o && st != MGUARD_EINVAL)
            fz_fail("aux: enter of object %d, destroyed by type_name during its lookup, answered %s", fz_xix(o, "enter"), mguard_status_str(st));
        /* (unless type_name destroyed a component with open frames) */
        if (st == MGUARD_OK && !(fz_x.smode & FZ_XS_TYPE_DESTROYS_OTHER) && fz_scope_depth(s) != depth + 1)
            fz_fail("aux: enter did not push a frame");
        break;
    }
    case 4: FZ_XLOG_MAY_DESTROY(4, mguard_scope_exit(s, o)); break;
    case 5: {
        int c = op->c & 1;
        double amount = fz_num((uint8_t)(op->c >> 1));
        size_t depth = fz_scope_depth(s);
        if (mguard_scope_add(s, fz_counters[c], amount) == MGUARD_OK) {
            fz_x.root_total[c] += amount;
            if (!depth) fz_x.root_self[c] += amount;
        }
        break;
    }
    case 6: {
        static const size_t cuts[4] = { 0, 1, 7, 40 };
        fz_check_report(s, op->c % 5, cuts[(op->c >> 2) % 4], &fz_x.alloc);
        break;
    }
    case 7:
        mguard_scope_format(s, (mguard_scope_view)(op->c % 4), NULL, 0);
        break;
    case 8: mguard_scope_set_phase(s, (size_t)(op->c & 1)); if (mguard_scope_phase(s) != (size_t)(op->c & 1)) fz_fail("aux: phase"); break;
    case 9: FZ_XLOG_MAY_DESTROY(4, mguard_scope_clear(s, MGUARD_SCOPE_CLEAR_FRAMES | (op->c & 6u))); break;
    case 10: FZ_XLOG_MAY_DESTROY(4, mguard_scope_clear(s, (op->c & 1) ? MGUARD_SCOPE_CLEAR_TRACE : op->c & 2 ? MGUARD_SCOPE_CLEAR_WARNINGS : 8u)); break;
    case 11:
        mguard_scope_destroy(s);
        fz_x.scope = NULL;
        break;
    case 12: fz_xdestroy(o); break;
    default: {
        const char *par[4];
        double self;
        (void)mguard_scope_parents(s, par, op->c % 5);
        (void)mguard_scope_is_active(s, fz_xnames[op->c % 6]);
        (void)mguard_scope_counter(s, fz_xnames[op->c % 6], fz_counters[op->c % 4], (op->c & 8) ? &self : NULL);
        break;
    }
    }
}


/* ---- guarded caches (issue 15) ---- */

static const char *const fz_xattrs[3] = { "a", "b", "c" };
typedef struct fz_xcv { long fp; uint32_t id; uint32_t pad; } fz_xcv;

/* The fingerprint of a tuple's value: every version of each key (whole
   objects), and attribute nkeys % 3 of the object after the first key
   (declared by the compute). A stale value has an older fingerprint. */
static long fz_xfp(const void *const *keys, size_t n)
{
    unsigned long h = 17;   /* wraps: unsigned */
    size_t i;
    int k, dep = (fz_xix(keys[0], "cache key") + 1) % FZ_XOBJ;
    for (i = 0; i < n; i++) {
        int o = fz_xix(keys[i], "cache key");
        h = h * 31 + (unsigned long)o;
        for (k = 0; k < 4; k++) h = h * 131 + (unsigned long)fz_x.ver[o][k];
    }
    h = h * 7 + (unsigned long)fz_x.ver[dep][n % 3] * 3 + (unsigned long)fz_x.ver[dep][3];
    return (long)(h >> 1);
}

static void fz_xcdtor(void *value, void *user)
{
    fz_xcv v;
    (void)user;
    fz.res.aux_calls++;
    memcpy(&v, value, sizeof v);
    if (v.id >= sizeof fz_x.cval || fz_x.cval[v.id] != 1) fz_fail("aux: cache value %u destroyed twice (or never made)", v.id);
    fz_x.cval[v.id] = 2;
}

static fz_xcv fz_xcv_make(const void *const *keys, size_t n)
{
    fz_xcv v;
    v.fp = fz_xfp(keys, n);
    v.id = fz_x.next_cval % (uint32_t)sizeof fz_x.cval;
    v.pad = 0;
    fz_x.next_cval++;
    if (fz_x.cval[v.id] == 1) fz_fail("aux: too many cache values");
    fz_x.cval[v.id] = 1;
    return v;
}

/* Every stored value is current (a hit would not be stale). */
static void fz_xcheck_cache(mguard_cache *c)
{
    mguard_cache_iter it = mguard_cache_iterate(c);
    size_t n = 0;
    while (mguard_cache_next(&it)) {
        fz_xcv v;
        memcpy(&v, it.value, sizeof v);
        if (v.fp != fz_xfp(it.keys, it.nkeys)) fz_fail("aux: cache holds a stale value (id %u)", v.id);
        if (v.id >= sizeof fz_x.cval || fz_x.cval[v.id] != 1) fz_fail("aux: cache holds value %u, not live", v.id);
        n++;
    }
    if (n != mguard_cache_count(c)) fz_fail("aux: cache iterates %lu entries, counts %lu", (unsigned long)n, (unsigned long)mguard_cache_count(c));
}

/* A value stored by mguard_cache_set depends on what fz_xfp reads: the
   keys, and the attribute the compute would declare, declared here (the
   entry goes when that fails). */
static void fz_xcache_stored(mguard_cache *c, const void *const *keys, size_t n)
{
    int dep = (fz_xix(keys[0], "cache key") + 1) % FZ_XOBJ;
    mguard_status st = mguard_cache_depend(c, keys, n, fz_xuse(fz_xpool[dep]), fz_xattrs[n % 3]);
    if (st == MGUARD_ENOMEM) mguard_cache_take(c, keys, n, NULL);
    else if (st != MGUARD_OK) fz_fail("aux: cache_depend after a set answered %d", (int)st);
}

/* What a compute does besides computing (op->c bits of the call). */
enum { FZ_XC_MUTATE_DEP = 1, FZ_XC_DESTROY_KEY = 2, FZ_XC_REENTER = 4, FZ_XC_EVICT = 8,
       FZ_XC_DESTROY_CACHE = 16, FZ_XC_CLEAR = 32, FZ_XC_FAIL = 64, FZ_XC_MUTATE_OTHER = 128 };
typedef struct fz_xjob { mguard_cache *c; uint8_t how, b; } fz_xjob;

static mguard_status fz_xcompute(mguard_cache_job *job, void *value, void *user)
{
    const fz_xjob *j = (const fz_xjob *)user;
    const void *keys[MGUARD_CACHE_MAX_KEYS];
    size_t nkeys = fz_job_keys(FZ_MG, job, keys);
    int dep = (fz_xix(keys[0], "compute key") + 1) % FZ_XOBJ;
    fz_xcv v;
    mguard_status st;
    fz.res.aux_calls++;
    fz_x.cdepth++;
    st = mguard_cache_job_depend(job, fz_xuse(fz_xpool[dep]), fz_xattrs[nkeys % 3]);
    if (st != MGUARD_OK && st != MGUARD_ENOMEM && st != MGUARD_EINVAL) fz_fail("aux: job_depend answered %d", (int)st);
    if (mguard_cache_job_set_cost(job, (size_t)(j->b % 4)) != MGUARD_OK) fz_fail("aux: job_set_cost refused");
    v = fz_xcv_make(keys, nkeys);   /* computed now, from what is now */
    if (fz_x.cdepth < 3 && !fz_x.closing) {
        const void *other = fz_xpool[j->b % FZ_XOBJ];
        if (j->how & FZ_XC_MUTATE_DEP) { fz_xbump(dep, (int)(nkeys % 3)); mguard_on_mutation_at(fz_x.ctx, fz_xpool[dep], fz_xattrs[nkeys % 3], __FILE__, __LINE__); }
        if (j->how & FZ_XC_MUTATE_OTHER) { fz_xbump(j->b % FZ_XOBJ, 1); mguard_on_mutation(fz_x.ctx, other, "b"); }
        if (j->how & FZ_XC_DESTROY_KEY) fz_xdestroy(keys[nkeys - 1]);
        if (j->how & FZ_XC_REENTER) {
            fz_xjob inner = *j;
            mguard_status ist;
            inner.how = (uint8_t)(j->how & ~(FZ_XC_REENTER | FZ_XC_DESTROY_CACHE));
            (void)mguard_cache_get_or_compute(j->c, keys, nkeys, fz_xcompute, &inner, &ist);
        }
        if (j->how & FZ_XC_EVICT) {
            fz_xcv e;
            const void *k = fz_xuse(other);
            e = fz_xcv_make(&k, 1);
            if (mguard_cache_set(j->c, &k, 1, &e, 3) != MGUARD_OK) fz_x.cval[e.id] = 2;   /* refused: never stored */
            else fz_xcache_stored(j->c, &k, 1);
        }
        if (j->how & FZ_XC_CLEAR) mguard_cache_clear(j->c);
        if ((j->how & FZ_XC_DESTROY_CACHE) && fz_x.cache[j->b & 1] == j->c) {
            fz_x.cache[j->b & 1] = NULL;
            mguard_cache_destroy(j->c);
        }
    }
    fz_x.cdepth--;
    if (j->how & FZ_XC_FAIL) {
        fz_x.cval[v.id] = 2;        /* no value */
        return MGUARD_NOT_FOUND;
    }
    memcpy(value, &v, sizeof v);
    return MGUARD_OK;
}

/* An aux cache's dropped: the value alive, its reason named right. */
static void fz_xdropped(void *value, const mguard_cache_reason *why, void *user)
{
    fz_xcv v;
    (void)user;
    fz.res.aux_calls++;
    memcpy(&v, value, sizeof v);
    if (v.id >= sizeof fz_x.cval || fz_x.cval[v.id] != 1) fz_fail("aux: dropped told of value %u, not alive", v.id);
    if (!why->cause || why->nkeys < 1 || why->nkeys > 3) fz_fail("aux: dropped: a bad reason");
    fz_xcheck_name(why);
}

static void fz_xcache(const fz_op *op)
{
    int slot = op->b & 1, i;
    mguard_cache *c = fz_x.cache[slot];
    const void *keys[MGUARD_CACHE_MAX_KEYS];
    size_t n = 1 + op->c % 3;
    mguard_status st;
    char buf[300];
    for (i = 0; i < (int)n; i++) keys[i] = fz_xpool[(op->b / 2 + (size_t)i * (op->c / 4 + 1)) % FZ_XOBJ];
    if (!c && op->a % 16 != 1) {
        mguard_cache_desc d;
        static const size_t caps[4] = { 0, 1, 3, 8 };
        memset(&d, 0, sizeof d);
        d.value_size = sizeof(fz_xcv);
        d.value_dtor = fz_xcdtor;
        d.capacity = caps[op->c % 4];
        d.max_cost = op->c & 16 ? 6 : 0;
        d.log_reasons = (op->c & 32) != 0;
        d.name = op->c & 64 ? "plans" : NULL;
        d.dropped = op->c & 128 ? fz_xdropped : NULL;
        c = fz_x.cache[slot] = mguard_cache_create(fz_x.ctx, &d);
        if (!c) return;   /* out of memory */
    }
    switch (op->a % 16) {
    case 1:
        if (c) { fz_x.cache[slot] = NULL; mguard_cache_destroy(c); }
        break;
    case 2: {
        fz_xcv v;
        for (i = 0; i < (int)n; i++) fz_xuse(keys[i]);
        v = fz_xcv_make(keys, n);
        st = mguard_cache_set(c, keys, n, &v, (size_t)(op->c % 5));
        if (st != MGUARD_OK) fz_x.cval[v.id] = 2;
        else fz_xcache_stored(c, keys, n);
        if (st != MGUARD_OK && st != MGUARD_ENOMEM) fz_fail("aux: cache_set answered %d", (int)st);
        break;
    }
    case 3: {
        const fz_xcv *p = (const fz_xcv *)mguard_cache_get(c, keys, n);
        if (p && p->fp != fz_xfp(keys, n)) fz_fail("aux: a stale hit");
        if ((p != NULL) != mguard_cache_contains(c, keys, n)) fz_fail("aux: get and contains disagree");
        break;
    }
    case 4: case 5: case 6: {
        fz_xjob j;
        const fz_xcv *p;
        for (i = 0; i < (int)n; i++) fz_xuse(keys[i]);
        j.c = c;
        j.how = op->a % 16 == 4 ? 0 : (uint8_t)(op->c ^ op->b);
        j.b = op->b;
        p = (const fz_xcv *)mguard_cache_get_or_compute(c, keys, n, fz_xcompute, &j, &st);
        if (st == MGUARD_OK && (!p || p->fp != fz_xfp(keys, n))) fz_fail("aux: get_or_compute returned a stale value");
        if (st == MGUARD_NOT_FOUND && p && fz_x.cval[p->id] != 1) fz_fail("aux: an unstored value was destroyed too early");
        break;
    }
    case 7:
        for (i = 0; i < (int)n; i++) fz_xuse(keys[i]);
        FZ_XLOG_MAY_DESTROY(1 << slot, st = mguard_cache_depend(c, keys, n, fz_xuse(fz_xpool[op->c % FZ_XOBJ]), op->c & 8 ? NULL : fz_xattrs[op->c % 3]));
        if (st != MGUARD_OK && st != MGUARD_NOT_FOUND && st != MGUARD_ENOMEM) fz_fail("aux: cache_depend answered %d", (int)st);
        break;
    case 8:
        FZ_XLOG_MAY_DESTROY(1 << slot, st = mguard_cache_take(c, keys, n, NULL));
        if (st != MGUARD_OK && st != MGUARD_NOT_FOUND) fz_fail("aux: cache_remove answered %d", (int)st);
        break;
    case 9:
        mguard_cache_clear(c);
        if (mguard_cache_count(c) != 0) fz_fail("aux: clear left entries");
        break;
    case 10: case 11: {
        int o = op->c % FZ_XOBJ, a = op->b % 4;
        fz_xbump(o, a);
        FZ_XLOG_MAY_DESTROY(3, mguard_on_mutation_at(fz_x.ctx, fz_xpool[o], a == 3 ? NULL : fz_xattrs[a], "fuzz.c", op->b));
        break;
    }
    case 12:
        FZ_XLOG_MAY_DESTROY(3, fz_xdestroy(fz_xpool[op->c % FZ_XOBJ]));
        break;
    case 13: {
        mguard_cache_stats s;
        mguard_cache_reason r;
        if (mguard_cache_get_stats(c, &s) != MGUARD_OK) fz_fail("aux: get_stats");
        if (mguard_cache_format(c, buf, sizeof buf) == 0) fz_fail("aux: empty report");
        st = mguard_cache_last_reason(c, keys, n, &r);
        if (st == MGUARD_OK) {
            if (r.nkeys != n || mguard_cache_reason_format(&r, buf, sizeof buf) == 0) fz_fail("aux: a reason");
            fz_xcheck_name(&r);
            if (strcmp(mguard_cache_cause_str(r.cause), "unknown") == 0 && r.cause) fz_fail("aux: a cause");
        }
        break;
    }
    default: {
        /* a walk that drops entries as it goes */
        mguard_cache_iter it = mguard_cache_iterate(c);
        int visited = 0;
        while (mguard_cache_next(&it)) {
            if (++visited % 2 == 0) fz_xdestroy(it.keys[0]);
        }
        break;
    }
    }
}

/* One AUX operation (mguard side only). */
static void fz_exec_aux(const fz_op *op)
{
    if (op->kind == FZ_X_CTX) {
        int what = op->a % 4;
        if (what <= 1) fz_xclose();
        if (what == 1) fz_xopen(op->b & 1);
        if (what == 2 && fz_x.ctx) fz_x.alloc.fail_at = fz_x.alloc.calls + 1 + op->b % 32;
        if (what == 3) fz_x.alloc.fail_at = 0;
        fz_xcheck();
        return;
    }
    if (!fz_x.ctx) fz_xopen(op->b & 1);
    fz.res.aux_ops++;
    if (op->kind == FZ_X_LEDGER) fz_xledger(op);
    else if (op->kind == FZ_X_CACHE) fz_xcache(op);
    else fz_xscope(op);
    fz_xcheck();
}
static void fz_ctx_cycle(int side, int thread_safe);

/* ---- one operation on one side ----------------------------------------- */

static void fz_exec(int side, const fz_op *op, const fz_ev *ev)
{
    fz_side *S = &fz.s[side];
    const int mg = side == FZ_MG;
    const int k = op->kind;
    long r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    int fq;
    fz_event_add(side, FZ_EV_OP, k, op->a, op->b, op->c, op->act);
    switch (k) {
    case FZ_SET: {
        int t = fz_tslot(op->a, ev);
        const void *key = fz_obj(op->b, ev);
        unsigned char buf[264];
        uint32_t id;
        unsigned char *st;
        mguard_status s;
        if (!fz_open(S, t)) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        id = ++S->next_id;
        fz_value_make(buf, S->tab_vs[t], id, op->act, fz_slot_of(key));
        st = fz_vstate(S, id);
        if (S->tinfo[S->tab_uid[t]].has_dtor) *st = 1;   /* before: the call may destroy it */
        fq = fz_fault_pre(side);
        if ((op->c & 8) && S->tab_vs[t] == sizeof(void *)) {
            /* a pointer value, set from a void * variable: the same bytes */
            void *pv = NULL;
            memcpy(&pv, buf, sizeof pv);
            s = mg ? mguard_weak_set(S->tab[t], key, &pv) : model_weak_set(S->mtab[t], key, &pv);
        } else {
            s = mg ? mguard_weak_set(S->tab[t], key, buf) : model_weak_set(S->mtab[t], key, buf);
        }
        fz_fault_post(side, fq, s == MGUARD_ENOMEM);
        st = fz_vstate(S, id);
        if (s != MGUARD_OK && *st == 1) *st = 0;
        if (s != MGUARD_OK && *st == 2) fz_fail("value %u destroyed although set failed", id);
        r0 = s; r1 = (long)id;
        break;
    }
    case FZ_REMOVE: {
        int t = fz_tslot(op->a, ev);
        const void *key = fz_obj(op->b, ev);
        if (!fz_open(S, t)) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        if ((op->c & 3) == 3) {
            /* take: the value comes out alive, never to be destroyed */
            unsigned char out[264];
            memset(out, 0xa5 + side, sizeof out);   /* each side its own: nothing left by the other */
            r0 = mg ? mguard_weak_take(S->tab[t], key, out) : model_weak_take(S->mtab[t], key, out);
            if (r0 != MGUARD_OK && out[0] != 0xa5 + side) fz_fail("take wrote out without an entry");
            if (r0 == MGUARD_OK) {
                unsigned char *st;
                r1 = (long)fz_value_read(out, S->tab_vs[t], NULL, NULL);
                st = fz_vstate(S, (uint32_t)r1);
                if (*st == 2) fz_fail("take: value %ld was destroyed", r1);
                if (*st == 1) *st = 3;
            }
        } else {
            r0 = mg ? mguard_weak_take(S->tab[t], key, NULL) : model_weak_take(S->mtab[t], key, NULL);
        }
        break;
    }
    case FZ_GET: {
        int t = fz_tslot(op->a, ev);
        const void *key = fz_obj(op->b, ev);
        const void *v;
        if (!fz_open(S, t)) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        v = mg ? mguard_weak_get(S->tab[t], key) : model_weak_get(S->mtab[t], key);
        r0 = v ? (long)fz_value_read(v, S->tab_vs[t], NULL, NULL) : -1;
        if (mg && (mguard_weak_contains(S->tab[t], key) != (v != NULL))) fz_fail("contains disagrees with get");
        if (mg) {
            unsigned char copy[264];
            mguard_status g = mguard_weak_get_copy(S->tab[t], key, copy);
            if (g != (v ? MGUARD_OK : key ? MGUARD_NOT_FOUND : MGUARD_EINVAL) || (v && memcmp(copy, v, S->tab_vs[t]) != 0))
                fz_fail("get_copy disagrees with get (%s)", mguard_status_str(g));
            if (mguard_weak_get_copy(S->tab[t], key, NULL) != MGUARD_EINVAL) fz_fail("get_copy into NULL");
            if (mguard_weak_get_sized(S->tab[t], key, S->tab_vs[t]) != v) fz_fail("get_sized disagrees with get");
            if (mguard_weak_get_sized(S->tab[t], key, S->tab_vs[t] + 1) != NULL) fz_fail("get_sized of a wrong size");
        }
        if (mg && S->tab_vs[t] == sizeof(void *)) {
            void **pv = MGUARD_WEAK_GET(S->tab[t], key, void *), *want = NULL;
            if (v) memcpy(&want, v, sizeof want);
            if ((pv ? *pv : NULL) != want || (void *)pv != v) fz_fail("MGUARD_WEAK_GET(void *) disagrees with get");
        }
        break;
    }
    case FZ_DESTROY_OBJ: {
        const void *o = fz_obj(op->a, ev);
        if (mg) mguard_on_destroy(S->ctx, o); else model_on_destroy(S->mctx, o);
        break;
    }
    case FZ_MUTATE: {
        const void *o = fz_obj(op->a, ev);
        const char *attr = fz_attrs[op->b % 4];
        if (mg) mguard_on_mutation(S->ctx, o, attr); else model_on_mutation(S->mctx, o, attr);
        break;
    }
    case FZ_WATCH: {
        const void *o = fz_obj(op->a, ev);
        void *g = (void *)fz_obj(op->b, ev);
        fz_wuser *wu = &S->wuser[op->act];
        mguard_status s;
        wu->side = side;
        wu->act = op->act;
        fq = fz_fault_pre(side);
        s = mg ? mguard_watch(S->ctx, o, g, fz_inval, wu) : model_watch(S->mctx, o, g, fz_inval, wu);
        fz_fault_post(side, fq, s == MGUARD_ENOMEM);
        r0 = s;
        break;
    }
    case FZ_UNWATCH: {
        const void *o = fz_obj(op->a, ev), *g = fz_obj(op->b, ev);
        r0 = mg ? mguard_unwatch(S->ctx, o, g) : model_unwatch(S->mctx, o, g);
        break;
    }
    case FZ_CLEAR:
    case FZ_DESTROY_TABLE: {
        int t = fz_tslot(op->a, ev);
        if (!fz_open(S, t)) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        S->tab_calls[t]++;
        if (k == FZ_DESTROY_TABLE) S->tab_req[t] = 1;
        if (mg) {
            if (k == FZ_CLEAR) mguard_weak_clear(S->tab[t]); else mguard_weak_destroy(S->tab[t]);
        } else {
            if (k == FZ_CLEAR) model_weak_clear(S->mtab[t]); else model_weak_destroy(S->mtab[t]);
        }
        S->tab_calls[t]--;
        fz_release_slot(S, t);
        break;
    }
    case FZ_CREATE_TABLE: {
        int t = op->a % fz.o.ntab, uid;
        fz_tinfo *ti;
        int has_dtor = (op->c & 3) != 0, has_death = (op->c & 4) != 0;
        mguard_status s = MGUARD_OK;
        if (S->depth > 0 || fz_open(S, t) || S->nuid + 1 >= FZ_MAXUID) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        uid = ++S->nuid;
        ti = &S->tinfo[uid];
        ti->side = side;
        ti->uid = uid;
        ti->slot = t;
        ti->has_dtor = has_dtor;
        ti->value_size = fz_sizes[op->b % 4];
        fq = fz_fault_pre(side);
        if (mg) {
            mguard_weak_desc d;
            memset(&d, 0, sizeof d);
            d.value_size = ti->value_size;
            d.value_dtor = has_dtor ? fz_dtor : NULL;
            d.key_death = has_death ? fz_key_death : NULL;
            d.user = ti;
            S->tab[t] = mguard_weak_create(S->ctx, &d);
            if (!S->tab[t]) s = MGUARD_ENOMEM;
        } else {
            S->mtab[t] = model_weak_create(S->mctx, ti->value_size, has_dtor ? fz_dtor : NULL,
                                           has_death ? fz_key_death : NULL, ti);
            if (!S->mtab[t]) s = MGUARD_ENOMEM;
        }
        fz_fault_post(side, fq, s == MGUARD_ENOMEM);
        if (s == MGUARD_OK) {
            S->tab_uid[t] = uid;
            S->tab_vs[t] = ti->value_size;
            S->tab_req[t] = 0;
            S->tab_calls[t] = 0;
        }
        r0 = s; r1 = uid;
        break;
    }
    case FZ_REF_MAKE: {
        int i = op->a % FZ_NREF;
        const void *o = fz_obj(op->b, ev);
        int null;
        long failed = fz.alloc.failures;
        fq = fz_fault_pre(side);
        if (mg) {
            S->ref[i] = mguard_ref_make(S->ctx, o);
            null = mguard_ref_is_null(S->ref[i]);
        } else {
            S->mref[i] = model_ref_make(S->mctx, o);
            null = S->mref[i].serial == 0;
        }
        fz_fault_post(side, fq, mg && null && fz.alloc.failures != failed);
        r0 = null;
        break;
    }
    case FZ_REF_GET: {
        /* also through mguard_ref_get_retained: try_retain answers b's
           bit 0, is called only for a live object (or not given: bit 1) */
        int i = op->a % FZ_NREF, answer = op->b & 1, given = !(op->b & 2);
        fz_retain_calls = 0;
        if (mg) {
            r0 = fz_slot_of(mguard_ref_get(S->ctx, S->ref[i]));
            r1 = fz_slot_of(mguard_ref_get_retained(S->ctx, S->ref[i], given ? fz_try_retain : NULL, &answer));
        } else {
            void *p = model_ref_get(S->mctx, S->mref[i]);
            r0 = fz_slot_of(p);
            if (p && given) fz_retain_calls++;
            r1 = given && !answer ? -1 : r0;
        }
        r2 = fz_retain_calls;
        break;
    }
    case FZ_GEN_TAG:
    case FZ_MARK_CLASS: {
        const void *o = fz_obj(op->a, ev);
        mguard_status s;
        fq = fz_fault_pre(side);
        if (k == FZ_GEN_TAG) s = mg ? mguard_gen_tag(S->ctx, o) : model_gen_tag(S->mctx, o);
        else s = mg ? mguard_gen_mark_class_dynamic(S->ctx, o) : model_gen_mark_class_dynamic(S->mctx, o);
        fz_fault_post(side, fq, s == MGUARD_ENOMEM);
        r0 = s;
        break;
    }
    case FZ_GEN_ADVANCE:
        r0 = mg ? mguard_gen_advance(S->ctx) : model_gen_advance(S->mctx);
        break;
    case FZ_GEN_CLEAR:
        if (mg) mguard_gen_clear(S->ctx); else model_gen_clear(S->mctx);
        break;
    case FZ_GEN_QUERY: {
        const void *o = fz_obj(op->a, ev), *c = fz_obj(op->b, ev);
        if (mg) {
            r0 = mguard_gen_get(S->ctx, o);
            r1 = mguard_gen_is_dynamic(S->ctx, o, NULL) * 2 + mguard_gen_is_since(S->ctx, o, (long)(op->c % 4) - 1);
            r2 = mguard_gen_is_dynamic(S->ctx, NULL, c);
            r3 = mguard_gen_is_dynamic(S->ctx, o, c);
        } else {
            r0 = model_gen_get(S->mctx, o);
            r1 = model_gen_check(S->mctx, o) * 2 + model_gen_is_since(S->mctx, o, (long)(op->c % 4) - 1);
            r2 = model_gen_is_dynamic(S->mctx, NULL, c);
            r3 = model_gen_is_dynamic(S->mctx, o, c);
        }
        break;
    }
    case FZ_ITER_START: {
        int i = op->a % FZ_NITER, t = fz_tslot(op->b, ev);
        if (!fz_open(S, t)) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        if (mg) S->it[i] = mguard_weak_iterate(S->tab[t]); else S->mit[i] = model_weak_iterate(S->mtab[t]);
        S->it_slot[i] = t;
        break;
    }
    case FZ_ITER_NEXT: {
        int i = op->a % FZ_NITER, t = S->it_slot[i];
        if (t < 0 || !fz_open(S, t)) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        if (mg) {
            r0 = mguard_weak_next(&S->it[i]);
            if (r0) { r1 = fz_slot_of(S->it[i].key); r2 = (long)fz_value_read(S->it[i].value, S->tab_vs[t], NULL, NULL); }
        } else {
            const void *key;
            void *val;
            r0 = model_weak_next(&S->mit[i], &key, &val);
            if (r0) { r1 = fz_slot_of(key); r2 = (long)fz_value_read(val, S->tab_vs[t], NULL, NULL); }
        }
        break;
    }
    case FZ_COUNT: {
        int t = fz_tslot(op->a, ev);
        if (!fz_open(S, t)) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        r0 = (long)(mg ? mguard_weak_count(S->tab[t]) : model_weak_count(S->mtab[t]));
        break;
    }
    case FZ_QUERY_OBJ: {
        const void *o = fz_obj(op->a, ev);
        if (mg) {
            r0 = mgt_ctx_contains(S->ctx, o);
            r1 = (long)mguard_mutation_count(S->ctx, o);
            r2 = (long)mgt_watcher_count(S->ctx, o);
            r3 = (long)mgt_objects(S->ctx);
        } else {
            r0 = model_is_known(S->mctx, o);
            r1 = (long)model_mutation_count(S->mctx, o);
            r2 = (long)model_watcher_count(S->mctx, o);
            r3 = (long)model_object_count(S->mctx);
        }
        break;
    }
    case FZ_INTERN: {
        /* mguard only: equal strings give one pointer that stays valid. */
        int i = op->a % 8;
        if (mg) {
            const char *p;
            fq = fz_fault_pre(side);
            p = mguard_intern(S->ctx, fz_strings[i]);
            fz_fault_post(side, fq, p == NULL);
            if (p && strcmp(p, fz_strings[i]) != 0) fz_fail("intern: wrong contents");
            if (p && fz.interned[i] && p != fz.interned[i]) fz_fail("intern: two pointers for one string");
            if (p) fz.interned[i] = p;
        } else {
            fq = fz_fault_pre(side);
            fz_fault_post(side, fq, 0);
        }
        break;
    }
    case FZ_S_NAME:
    case FZ_S_ENTER:
    case FZ_S_EXIT:
    case FZ_S_QUERY: {
        const void *o = fz_obj(op->a, ev);
        const char *name = fz_strings[op->b % 8];
        if (!fz_scope_ready(side, k)) return;
        if (k == FZ_S_NAME || k == FZ_S_ENTER) {
            mguard_status s;
            fq = fz_fault_pre(side);
            if (k == FZ_S_NAME) s = mg ? mguard_scope_set_name(S->scope, o, name) : model_scope_set_name(S->mscope, o, name);
            else s = mg ? mguard_scope_enter(S->scope, o) : model_scope_enter(S->mscope, o);
            fz_fault_post(side, fq, s == MGUARD_ENOMEM);
            r0 = s;
        } else if (k == FZ_S_EXIT) {
            r0 = mg ? mguard_scope_exit(S->scope, o) : model_scope_exit(S->mscope, o);
        } else if (mg) {
            r0 = fz_str_ix(mgt_scope_known_name(S->scope, o));
            r1 = mguard_scope_is_active(S->scope, name);
            r2 = (long)fz_scope_depth(S->scope);
            r3 = fz_str_ix(fz_scope_current(S->scope));
        } else {
            r0 = fz_str_ix(model_scope_known_name(S->mscope, o));
            r1 = model_scope_is_active(S->mscope, name);
            r2 = (long)fz_mscope_depth(S->mscope);
            r3 = fz_str_ix(fz_mscope_current(S->mscope));
        }
        break;
    }
    case FZ_L_TRACK:
    case FZ_L_WRITE:
    case FZ_L_LOAD:
    case FZ_L_MARK:
    case FZ_L_CLEAR:
    case FZ_L_PRUNE: {
        int l = (op->c >> 4) % 4 % FZ_NLED;
        const void *o = fz_obj(op->a, ev);
        const char *attr = fz_attrs[op->c & 3];
        mguard_status s = MGUARD_OK;
        if (!fz_ledger_ready(side, l, k)) return;
        if (k != FZ_L_TRACK && op->a != 0xff && (op->a & 0xe0)) o = fz_tracked(side, l, op->a & 0x1f, o);
        if (k == FZ_L_TRACK) {
            int kind = op->b == 0xff ? 0 : 1 + op->b % 3;   /* 0: an unknown kind, refused */
            const char *src = (op->c & 15) % 9 == 8 ? NULL : fz_strings[(op->c & 15) % 9];
            fq = fz_fault_pre(side);
            s = mg ? mguard_ledger_track(S->led[l], o, (mguard_ledger_kind)kind, src) : model_ledger_track(S->mled[l], o, src, kind);
            fz_fault_post(side, fq, s == MGUARD_ENOMEM);
            if (op->c & 0x40) {
                /* its attributes x and y are fields of the pool object (or
                   unbind them, or a NULL table: refused) */
                const mguard_ledger_field *fl = (fz.o.sized ? fz_fields_num : fz_fields_ptr)[(op->b >> 3) % 3];
                size_t nf = op->c & 0x80 ? 0 : 2;
                if (op->b & 0x80) fl = NULL;
                r1 = mg ? mguard_ledger_set_fields(S->led[l], o, fl, nf) : model_ledger_set_fields(S->mled[l], o, fl, nf);
            }
        } else if (k == FZ_L_WRITE) {
            const void *v = fz_obj(op->b, ev);
            int del = (op->c & 4) != 0;
            fq = fz_fault_pre(side);
            int64_t num = fz_slot_of(v);
            if (mg && fz.o.sized) s = del ? mguard_ledger_delete_attr(S->led[l], o, attr) : mguard_ledger_store_attr(S->led[l], o, attr, &num);
            else if (mg) s = del ? mguard_ledger_delete_attr(S->led[l], o, attr) : mguard_ledger_store_attr(S->led[l], o, attr, (void *)v);
            else if (fz.o.sized) s = model_ledger_write_num(S->mled[l], o, attr, num, del != 0);
            else s = model_ledger_write(S->mled[l], o, attr, v, del != 0);
            fz_fault_post(side, fq, s == MGUARD_ENOMEM);
        } else if (k == FZ_L_LOAD) {
            if ((op->c & 4) && o) {
                /* often an attribute with a pending write: o's first one */
                const char *first = NULL;
                int j;
                if (mg) {
                    mguard_ledger_iter w = mguard_ledger_iterate(S->led[l], MGUARD_LEDGER_WALK_WRITES, o);
                    if (mguard_ledger_next(&w)) first = w.attr;
                } else {
                    long e = model__l_find(S->mled[l], o);
                    if (e >= 0 && S->mled[l]->e[e].nw) first = S->mled[l]->e[e].w[0].attr;
                }
                for (j = 0; first && j < 3; j++)
                    if (strcmp(first, fz_attrs[j]) == 0) attr = fz_attrs[j];
            }
            if (mg) {
                void *v = NULL;
                mguard_ledger_entry en;
                mguard_status g = mguard_ledger_get(S->led[l], o, &en), ps;
                union { void *p; int64_t n; } out;
                mguard_status ls;
                memset(&out, 0, sizeof out);   /* a field of fewer bytes, an untracked object: the rest stays 0 */
                ls = mguard_ledger_read(S->led[l], o, attr, &out);
                s = mguard_ledger_pending(S->led[l], o, attr, &v);
                /* load_attr's value, and load's (the real field when
                   nothing is pending) with its status */
                r1 = (fz_lval(v) + 2) * 100000 + (fz_lval(fz.o.sized ? (const void *)&out : out.p) + 2) * 100 + (long)ls;
                /* modified, attr pending, any pending, tracked: the NULL-out forms */
                ps = mguard_ledger_pending(S->led[l], o, attr, NULL);
                r2 = (g == MGUARD_OK && en.modified) | (ps == MGUARD_OK || ps == MGUARD_DELETED) << 1 |
                     (g == MGUARD_OK && en.writes > 0) << 2 | (mguard_ledger_get(S->led[l], o, NULL) == MGUARD_OK) << 3;
                r3 = g == MGUARD_OK ? (long)en.kind * 1000 + (long)en.writes * 2 + en.modified + 100000 * (fz_str_ix(en.source) + 3) : -(long)g;
            } else {
                const void *v = NULL;
                int64_t num = 0;
                mguard_ledger_entry en;
                mguard_status g = model_ledger_get(S->mled[l], o, &en), ps;
                union { void *p; int64_t n; } out;
                mguard_status ls;
                memset(&out, 0, sizeof out);
                ls = model_ledger_read(S->mled[l], o, attr, &out);
                s = model_ledger_pending(S->mled[l], o, attr, &v, &num);
                r1 = ((fz.o.sized ? (s == MGUARD_OK ? (long)num : -1) : fz_slot_of(v)) + 2) * 100000 +
                     (fz.o.sized ? (long)out.n : fz_slot_of(out.p)) * 100 + 200 + (long)ls;
                ps = model_ledger_pending(S->mled[l], o, attr, NULL, NULL);
                r2 = (g == MGUARD_OK && en.modified) | (ps == MGUARD_OK || ps == MGUARD_DELETED) << 1 |
                     (g == MGUARD_OK && en.writes > 0) << 2 | (model_ledger_get(S->mled[l], o, NULL) == MGUARD_OK) << 3;
                r3 = g == MGUARD_OK ? (long)en.kind * 1000 + (long)en.writes * 2 + en.modified + 100000 * (fz_str_ix(en.source) + 3) : -(long)g;
            }
        } else if (k == FZ_L_MARK) {
            /* o.append(b) (or its removal): the container's contents change */
            long co = fz_slot_of(o), cb = op->b == 0xff ? -1 : fz_slot_of(fz_obj(op->b, ev));
            if (co >= 0 && cb >= 0) S->lcont[co] ^= (uint64_t)1 << cb;
            s = mg ? mguard_ledger_mark_modified(S->led[l], o) : model_ledger_mark_modified(S->mled[l], o);
        } else if (k == FZ_L_CLEAR) {
            if (op->b & 1) break;   /* every other time: nothing */
            if (mg) mguard_ledger_clear(S->led[l]); else model_ledger_clear(S->mled[l]);
        } else {
            const void *roots[2];
            roots[0] = o;
            roots[1] = fz_obj(op->b, ev);
            fq = fz_fault_pre(side);
            s = mg ? mguard_ledger_prune(S->led[l], roots, op->c % 3) : model_ledger_prune(S->mled[l], roots, op->c % 3);
            fz_fault_post(side, fq, s == MGUARD_ENOMEM);
        }
        r0 = s;
        break;
    }
    case FZ_L_CLONE:
    case FZ_L_EQUAL:
    case FZ_L_RESTORE:
    case FZ_L_DESTROY: {
        int l = (op->c >> 4) % 4 % FZ_NLED, m = op->a % FZ_NLED;
        if (k == FZ_L_CLONE) m = 1 + op->a % (FZ_NLED - 1);
        if (S->in_apply && k != FZ_L_EQUAL) { fz_event_add(side, FZ_EV_SKIP, k, 5, 0, 0, 0); return; }
        if (!fz_ledger_ready(side, l, k)) return;
        if (k == FZ_L_DESTROY) {
            if (op->b & 3) break;   /* three times out of four: nothing */
            if (mg) mguard_ledger_destroy(S->led[l]); else model_ledger_destroy(S->mled[l]);
            S->led[l] = NULL;
            S->mled[l] = NULL;
            break;
        }
        if (k == FZ_L_CLONE && m == l) { fz_event_add(side, FZ_EV_SKIP, k, 2, 0, 0, 0); return; }
        if (k != FZ_L_CLONE && !fz_ledger_ready(side, m, k)) return;
        if (k == FZ_L_CLONE) {
            int ok;
            if (mg ? S->led[m] != NULL : S->mled[m] != NULL) {
                if (mg) mguard_ledger_destroy(S->led[m]); else model_ledger_destroy(S->mled[m]);
                S->led[m] = NULL;
                S->mled[m] = NULL;
            }
            fq = fz_fault_pre(side);
            if (mg) { S->led[m] = mguard_ledger_clone(S->led[l]); ok = S->led[m] != NULL; }
            else { S->mled[m] = model_ledger_clone(S->mled[l]); ok = S->mled[m] != NULL; }
            fz_fault_post(side, fq, !ok);
            r0 = ok;
        } else if (k == FZ_L_EQUAL) {
            r0 = mg ? mguard_ledger_equal(S->led[l], S->led[m]) : model_ledger_equal(S->mled[l], S->mled[m]);
            r1 = mg ? mguard_ledger_equal(S->led[m], S->led[l]) : model_ledger_equal(S->mled[m], S->mled[l]);
        } else {
            mguard_status s;
            fq = fz_fault_pre(side);
            s = mg ? mguard_ledger_restore(S->led[l], S->led[m]) : model_ledger_restore(S->mled[l], S->mled[m]);
            fz_fault_post(side, fq, s == MGUARD_ENOMEM);
            r0 = s;
        }
        break;
    }
    case FZ_MISC:
    case FZ_D_OBSERVE: case FZ_D_SCALAR: case FZ_D_QUERY: case FZ_D_ITER: case FZ_D_FORMAT: case FZ_D_DESTROY:
    case FZ_S_NAME2: case FZ_S_PHASE: case FZ_S_ADD: case FZ_S_COUNTER: case FZ_S_REPORT: case FZ_S_DESTROY:
    case FZ_L_APPLY: case FZ_L_DIFF: case FZ_CACHE: {
        long r[4] = { 0, 0, 0, 0 };
        int go;
        if (k == FZ_MISC) go = fz_exec_misc(side, op, r);
        else if (k == FZ_CACHE) go = fz_exec_cache(side, op, ev, r);
        else if (k <= FZ_D_DESTROY) go = fz_exec_dyn(side, op, r);
        else if (k <= FZ_S_DESTROY) go = fz_exec_scope2(side, op, ev, r);
        else go = fz_exec_ledger2(side, op, ev, r);
        if (!go) return;
        r0 = r[0]; r1 = r[1]; r2 = r[2]; r3 = r[3];
        break;
    }
    case FZ_CTX_CYCLE:
        if (S->depth > 0) { fz_event_add(side, FZ_EV_SKIP, k, 0, 0, 0, 0); return; }
        fz_ctx_cycle(side, op->a & 3);   /* 1: thread-safe, 2: strict generations */
        break;
    case FZ_X_CTX:
    case FZ_X_LEDGER:
    case FZ_X_SCOPE:
    case FZ_X_CACHE:
        if (mg) fz_exec_aux(op);   /* mguard only: invariants, no model */
        break;
    default:
        break;
    }
    fz_event_add(side, FZ_EV_RES, k, r0, r1, r2, r3);
}

/* ---- full state -------------------------------------------------------- */

static void fz_snapshot(int side)
{
    fz_side *S = &fz.s[side];
    const int mg = side == FZ_MG;
    int i, t;
    if (mg) {
        fz_event_add(side, FZ_EV_SNAP, 0, (long)mgt_objects(S->ctx), mguard_gen_current(S->ctx), 0, 0);
    } else {
        fz_event_add(side, FZ_EV_SNAP, 0, (long)model_object_count(S->mctx), model_gen_current(S->mctx), 0, 0);
    }
    for (i = 0; i < fz.o.nobj; i++) {
        const void *o = fz_pool[i];
        if (mg) {
            fz_event_add(side, FZ_EV_SNAP, 1 + i, mgt_ctx_contains(S->ctx, o), (long)mguard_mutation_count(S->ctx, o),
                         (long)mgt_watcher_count(S->ctx, o), mguard_gen_get(S->ctx, o) * 2 + mguard_gen_is_dynamic(S->ctx, NULL, o));
        } else {
            fz_event_add(side, FZ_EV_SNAP, 1 + i, model_is_known(S->mctx, o), (long)model_mutation_count(S->mctx, o),
                         (long)model_watcher_count(S->mctx, o), model_gen_get(S->mctx, o) * 2 + model_gen_is_dynamic(S->mctx, NULL, o));
        }
    }
    for (i = 0; i < FZ_NREF; i++) {
        void *p = mg ? mguard_ref_get(S->ctx, S->ref[i]) : model_ref_get(S->mctx, S->mref[i]);
        fz_event_add(side, FZ_EV_SNAP, 100 + i, fz_slot_of(p), 0, 0, 0);
    }
    for (t = 0; t < fz.o.ntab; t++) {
        long n = 0;
        if (!fz_open(S, t)) { fz_event_add(side, FZ_EV_SNAP, 200 + t, -1, 0, 0, 0); continue; }
        if (mg) {
            mguard_weak_iter it = mguard_weak_iterate(S->tab[t]);
            while (mguard_weak_next(&it)) {
                fz_event_add(side, FZ_EV_SNAP, 300 + t, n++, fz_slot_of(it.key),
                             (long)fz_value_read(it.value, S->tab_vs[t], NULL, NULL), 0);
                if (mguard_weak_get(S->tab[t], it.key) != it.value) fz_fail("get and iteration disagree");
            }
            fz_event_add(side, FZ_EV_SNAP, 200 + t, (long)mguard_weak_count(S->tab[t]), S->tab_uid[t], 0, 0);
        } else {
            model_iter it = model_weak_iterate(S->mtab[t]);
            const void *key;
            void *val;
            while (model_weak_next(&it, &key, &val))
                fz_event_add(side, FZ_EV_SNAP, 300 + t, n++, fz_slot_of(key), (long)fz_value_read(val, S->tab_vs[t], NULL, NULL), 0);
            fz_event_add(side, FZ_EV_SNAP, 200 + t, (long)model_weak_count(S->mtab[t]), S->tab_uid[t], 0, 0);
        }
    }

    if (mg ? S->scope != NULL : S->mscope != NULL) {
        const char *par[16];
        size_t np, j;
        if (mg) {
            np = mguard_scope_parents(S->scope, par, 16);
            fz_event_add(side, FZ_EV_SNAP, 400, (long)fz_scope_depth(S->scope), fz_str_ix(fz_scope_current(S->scope)), (long)np, 0);
            for (i = 0; i < fz.o.nobj; i++)
                fz_event_add(side, FZ_EV_SNAP, 401, i, fz_str_ix(mgt_scope_known_name(S->scope, fz_pool[i])), 0, 0);
        } else {
            np = model_scope_parents(S->mscope, par, 16);
            fz_event_add(side, FZ_EV_SNAP, 400, (long)fz_mscope_depth(S->mscope), fz_str_ix(fz_mscope_current(S->mscope)), (long)np, 0);
            for (i = 0; i < fz.o.nobj; i++)
                fz_event_add(side, FZ_EV_SNAP, 401, i, fz_str_ix(model_scope_known_name(S->mscope, fz_pool[i])), 0, 0);
        }
        for (j = 0; j < np && j < 16; j++) fz_event_add(side, FZ_EV_SNAP, 402, (long)j, fz_str_ix(par[j]), 0, 0);
    }
    for (t = 0; t < FZ_NCACHE; t++) {
        if (!fz_copen(S, t)) { fz_event_add(side, FZ_EV_SNAP, 800 + t, -1, 0, 0, 0); continue; }
        fz_event_add(side, FZ_EV_SNAP, 800 + t, (long)(mg ? mguard_cache_count(S->cache[t]) : model_cache_count(S->mcache[t])),
                     S->cache_uid[t], 0, 0);
        fz_cwalk(side, t, -1, 0, 0, NULL, 0, FZ_EV_SNAP);
        fz_cstats(side, t, FZ_EV_SNAP);
    }
    for (t = 0; t < FZ_NLED; t++) {
        long n = 0;
        if (mg) {
            mguard_ledger *L = S->led[t];
            mguard_ledger_iter it;
            if (!L) { fz_event_add(side, FZ_EV_SNAP, 500 + t, -1, 0, 0, 0); continue; }
            if (mgt_ledger_check(L) != MGUARD_OK) fz_fail("mgt_ledger_check failed");
            mguard_ledger_stats ls = fz_lstats(L);
            fz_event_add(side, FZ_EV_SNAP, 500 + t, (long)ls.entries, (long)ls.modified, (long)ls.writes, 0);
            it = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_ENTRIES, NULL);
            while (mguard_ledger_next(&it)) {
                mguard_ledger_iter w = mguard_ledger_iterate(L, MGUARD_LEDGER_WALK_WRITES, it.obj);
                fz_event_add(side, FZ_EV_SNAP, 600 + t, n++, fz_slot_of(it.obj), (long)it.kind * 2 + it.modified, fz_str_ix(it.source));
                while (mguard_ledger_next(&w))
                    fz_event_add(side, FZ_EV_SNAP, 700 + t, fz_slot_of(w.obj), fz_str_ix(w.attr), fz_lval(w.value), w.deleted);
            }
        } else {
            const model_ledger *L = S->mled[t];
            size_t e, j;
            if (!L) { fz_event_add(side, FZ_EV_SNAP, 500 + t, -1, 0, 0, 0); continue; }
            model_ledger_stats ls;
            model_ledger_get_stats(L, &ls);
            fz_event_add(side, FZ_EV_SNAP, 500 + t, (long)ls.entries, (long)ls.modified, (long)ls.writes, 0);
            for (e = 0; e < L->n; e++) {
                const model_lent *en = &L->e[e];
                fz_event_add(side, FZ_EV_SNAP, 600 + t, n++, fz_slot_of(en->obj), (long)en->kind * 2 + model__l_modified(en), fz_str_ix(en->source));
                for (j = 0; j < en->nw; j++)
                    fz_event_add(side, FZ_EV_SNAP, 700 + t, fz_slot_of(en->obj), fz_str_ix(en->w[j].attr), fz_mlval(&en->w[j]), en->w[j].deleted);
            }
        }
    }
}

/* ---- decoding ---------------------------------------------------------- */

static uint8_t fz_byte(void)
{
    if (fz.pos < fz.size) return fz.data[fz.pos++];
    fz.eof = 1;
    return 0;
}

/* The operations that carry an action: SET (run by the value's
   destructor), WATCH (by the watcher), ledger APPLY (by each call), CACHE
   (by a compute, a walk, or the value's destructor). */
static int fz_has_action(int kind) { return kind == FZ_SET || kind == FZ_WATCH || kind == FZ_L_APPLY || kind == FZ_CACHE; }

static fz_op fz_decode(int inline_ok)
{
    fz_op op;
    uint8_t ref;
    op.kind = fz.kind_map[fz_byte() % FZ_MAPSIZE];
    op.a = fz_byte();
    op.b = fz_byte();
    op.c = fz_byte();
    ref = fz_byte();
    op.act = 0;
    if (fz_has_action(op.kind) && inline_ok && (ref & 0x80) && fz.nact < FZ_MAXACT) {
        fz_op a = fz_decode(0);
        if (fz.nact < FZ_MAXACT) {
            fz.act[fz.nact++] = a;
            op.act = (uint16_t)fz.nact;
        }
    } else if (fz_has_action(op.kind)) {
        op.act = (uint16_t)(ref % (fz.nact + 1));
    } else {
        op.act = 0;
    }
    if (!inline_ok && op.kind == FZ_CREATE_TABLE) op.kind = FZ_NOP;
    return op;
}

/* ---- one run ----------------------------------------------------------- */

static void fz_init_side(int side)
{
    fz_side *S = &fz.s[side];
    int i;
    free(S->ev);
    free(S->vstate);
    memset(S, 0, sizeof *S);
    for (i = 0; i < FZ_NITER; i++) S->it_slot[i] = -1;
}

static void fz_begin_op(void)
{
    int side;
    for (side = 0; side < 2; side++) {
        fz.s[side].budget = fz.o.budget;
        fz.s[side].depth = 0;
        fz.s[side].fq = 0;
        fz.s[side].fx = 0;
    }
    fz.nfstat = 0;
}

/* Open side's context: thread-safe or not (the same contract: issue 11),
   with strict generations or not (flags as fz_new_ctx's). */
static int fz_ctx_open(int side, int flags)
{
    fz_side *S = &fz.s[side];
    S->parts_closed = 0;
    S->thread_safe = flags & 1;
    if (side == FZ_MODEL) {
        S->mctx = model_create();
        S->mctx->strict = (flags & 2) != 0;
        return 1;
    }
    S->ctx = fz_new_ctx(&fz.alloc, flags);
    return S->ctx != NULL;
}

/* Destroy side's context with everything in it; every stored value must
   have been destroyed and, for mguard, every block freed. */
static void fz_ctx_close(int side)
{
    fz_side *S = &fz.s[side];
    int t;
    size_t id;
    for (t = 0; t < FZ_MAXTAB; t++) fz_close_slot(S, t);
    for (t = 0; t < FZ_NCACHE; t++) fz_cclose(S, t);
    S->parts_closed = 1;   /* mguard_ctx_destroy destroys them */
    S->scope = NULL;
    S->mscope = NULL;
    S->dyn = NULL;
    S->mdyn = NULL;
    memset((void *)S->led, 0, sizeof S->led);
    memset((void *)S->mled, 0, sizeof S->mled);
    fz_event_add(side, FZ_EV_OP, -1, 0, 0, 0, 0);
    if (side == FZ_MG) mguard_ctx_destroy(S->ctx); else model_destroy(S->mctx);
    S->ctx = NULL;
    S->mctx = NULL;
    for (id = 0; id < S->capv; id++)
        if (S->vstate[id] == 1) fz_fail("%s: value %lu never destroyed", side ? "model" : "mguard", (unsigned long)id);
    if (side == FZ_MG && fz.alloc.live_blocks != 0) fz_fail("mguard leaked %ld blocks", fz.alloc.live_blocks);
}

/* CTX_CYCLE: the context is destroyed and a new one (often at the same
   address) takes its place; objects, tables and handles come back at the
   addresses of the old ones. The refs made in the old context must read
   NULL in the new one (issue 11, defect 3: such a ref read an object
   through a new context at the same address). */
static void fz_ctx_cycle(int side, int thread_safe)
{
    fz_ctx_close(side);
    memset((void *)fz.interned, 0, sizeof fz.interned);
    /* a creation failed by fault injection is tried again (only one
       allocation fails) */
    if (!fz_ctx_open(side, thread_safe) && (!fz.alloc.failures || !fz_ctx_open(side, thread_safe)))
        fz_fail("mguard_ctx_create failed");
}

static void fz_end_run(void)
{
    int side;
    fz.cur.kind = FZ_NOP;
    fz_begin_op();
    fz.in_destroy = 1;
    for (side = 0; side < 2; side++) fz_ctx_close(side);
    fz_xclose();   /* after: the destroy's callbacks may use it */
    fz.in_destroy = 0;
    fz_compare_events("callbacks during context destroy");
}

/* Run data on mguard and the model; abort with a report on the first
   difference. Returns normally when they agree all the way. */
MODEL_DEF void fz_run(const uint8_t *data, size_t size, const fz_opts *opts, fz_result *res)
{
    int i, k, n = 0, side;
    memset(&fz.o, 0, sizeof fz.o);
    if (opts) fz.o = *opts;
    if (fz.o.nobj <= 0 || fz.o.nobj > FZ_MAXOBJ) fz.o.nobj = 8;
    if (fz.o.ntab <= 0 || fz.o.ntab > FZ_MAXTAB) fz.o.ntab = 4;
    if (fz.o.max_ops <= 0) fz.o.max_ops = 4096;
    if (fz.o.depth <= 0) fz.o.depth = 6;
    if (fz.o.budget <= 0) fz.o.budget = 48;
    for (k = 0; k < FZ_NKINDS; k++)
        for (i = 0; i < fz_weights[k] && n < FZ_MAPSIZE; i++) fz.kind_map[n++] = (unsigned char)k;
    while (n < FZ_MAPSIZE) fz.kind_map[n++] = FZ_SET;
    fz.data = data;
    fz.size = size;
    fz.pos = 0;
    fz.eof = 0;
    fz.nact = 0;
    fz.opno = 0;
    memset(&fz.cur, 0, sizeof fz.cur);
    memset(&fz.res, 0, sizeof fz.res);
    memset(&fz.alloc, 0, sizeof fz.alloc);
    memset((void *)fz.interned, 0, sizeof fz.interned);
    fz.alloc.fail_at = fz.o.fail_at;
    memset(&fz_x, 0, sizeof fz_x);
    memset(fz_pool, 0, sizeof fz_pool);   /* ledger apply writes fields of pool objects */
    fz_init_side(FZ_MG);
    fz_init_side(FZ_MODEL);

    fz.s[FZ_MG].ctx = NULL;
    if (!fz_ctx_open(FZ_MG, fz.o.thread_safe)) {
        if (!fz.o.fail_at) fz_fail("mguard_ctx_create failed");
        fz.res.no_ctx = 1;
    } else {
        fz_ctx_open(FZ_MODEL, fz.o.thread_safe);
        while (!fz.eof && fz.res.ops < fz.o.max_ops) {
            fz_op op = fz_decode(1);
            static char pool0[sizeof fz_pool];
            fz.cur = op;
            fz.opno = fz.res.ops++;
            fz_begin_op();
            /* both sides start from the same pool memory: mguard's field
               writes (ledger apply) are undone, the model makes its own */
            memcpy(pool0, fz_pool, sizeof fz_pool);
            for (side = 0; side < 2; side++) {
                if (side == FZ_MODEL) memcpy(fz_pool, pool0, sizeof fz_pool);
                fz_exec(side, &op, NULL);
            }
            fz_compare_events("results and callbacks");
            fz_check_ctx(&fz.s[FZ_MG]);
            for (side = 0; side < 2; side++) fz_snapshot(side);
            fz_compare_events("states");
        }
        fz_end_run();
    }
    fz.res.aux_calls = fz_x.calls;
    fz.res.aux_log_lines = fz_x.log_lines;
    fz.res.aux_log_destroys = fz_x.log_destroys;
    fz.res.aux_retains = fz_x.retains;
    fz.res.allocs = fz.alloc.calls;
    fz.res.failures = fz.alloc.failures;
    if (fz.alloc.live_blocks != 0) fz_fail("mguard leaked %ld blocks", fz.alloc.live_blocks);
    for (side = 0; side < 2; side++) fz_init_side(side);
    if (res) *res = fz.res;
}

/* The byte format shared by the fuzzer, the corpus and the seeded test: a
   2-byte header, then operations. Header byte 0: bits 0-2 pool size - 2,
   bits 3-5 table slots - 1, bit 6 fault mode (mguard's allocation number
   1 + byte 1 + 256 * bit 7 fails). Without fault mode, bit 0 of byte 1
   makes the context thread-safe. */
MODEL_DEF void fz_run_input(const uint8_t *data, size_t size, const char *label, fz_result *res)
{
    fz_opts o;
    uint8_t h0 = size > 0 ? data[0] : 0, h1 = size > 1 ? data[1] : 0;
    memset(&o, 0, sizeof o);
    o.nobj = 2 + (h0 & 7);
    o.ntab = 1 + ((h0 >> 3) & 7);
    if (h0 & 0x40) o.fail_at = 1 + h1 + ((h0 & 0x80) ? 256 : 0);
    else o.thread_safe = (h1 & 1) | ((h1 >> 1) & 2);   /* bit 0: thread-safe, bit 2: strict generations */
    o.sized = (h1 >> 1) & 1;
    o.label = label;
    o.verbose = getenv("FZ_VERBOSE") != NULL;
    fz_run(size > 2 ? data + 2 : data + size, size > 2 ? size - 2 : 0, &o, res);
}

/* ---- writing programs: for tests that build their workload ------------- */

typedef struct fz_prog { uint8_t *b; size_t n, cap; } fz_prog;

MODEL_DEF void fz_put(fz_prog *p, int byte)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->b = (uint8_t *)realloc(p->b, p->cap);
        if (!p->b) abort();
    }
    p->b[p->n++] = (uint8_t)byte;
}

/* Append one operation. For SET, WATCH and L_APPLY, ref names an existing action
   (1-based, 0 none); FZ_INLINE | 0 means "the next emitted operation is
   the new action". Object and table arguments are plain indexes. */
#define FZ_INLINE 0x80
MODEL_DEF void fz_emit(fz_prog *p, int kind, int a, int b, int c, int ref)
{
    int k, first = 0;
    for (k = 0; k < kind; k++) first += fz_weights[k];
    fz_put(p, first);
    fz_put(p, a);
    fz_put(p, b);
    fz_put(p, c);
    fz_put(p, ref);
}

/* ---- a tiny deterministic PRNG for the drivers (splitmix64) ------------ */
MODEL_DEF uint64_t fz_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
