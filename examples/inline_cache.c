/* inline_cache.c - an inline cache guarded by mguard.

   A toy object system: every object has a few numeric fields. "Compiling"
   an object produces a fast path specialised to its current fields (here:
   a precomputed weighted sum). The compiled code is kept in a guarded
   cache keyed by the object, so that
     - a mutation of the object drops the cached code (recompiled on the
       next call), and
     - the death of the object drops the cache entry and frees the code,
   with no watcher, guard or invalidate callback to write: the cache
   depends on its key. Run it and read what it prints. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct object {
    const char *name;
    double a, b, c;
} object;

typedef struct compiled {
    double result;       /* the "fast path": a constant folded from the fields */
    int generation;      /* how many times code was compiled */
} compiled;

static mguard_ctx *ctx;
static mguard_cache *cache;   /* object -> compiled * */
static int compiles;

/* ---- the object system's own constructor/destructor/setter ------------ */
static object *object_new(const char *name, double a, double b, double c)
{
    object *o = (object *)malloc(sizeof *o);
    o->name = name;
    o->a = a;
    o->b = b;
    o->c = c;
    return o;
}

static void object_free(object *o)
{
    printf("  [%s] destroyed\n", o->name);
    mguard_on_destroy(ctx, o);     /* the destructor hook */
    free(o);
}

#define OBJECT_SET(o, field, v) MGUARD_SET_FIELD(ctx, (o), field, (v))

/* ---- the cache ---------------------------------------------------------- */

/* The value destructor: the cache owns the compiled code. It runs exactly
   once per value, whatever drops it. */
static void free_code(void *value, void *user)
{
    compiled *code = *(compiled **)value;
    (void)user;
    printf("  (code #%d freed)\n", code->generation);
    free(code);
}

/* Called on a miss. */
static mguard_status compile(mguard_cache_job *job, void *value, void *user)
{
    const object *o = (const object *)mguard_cache_job_key(job, 0);
    compiled *code = (compiled *)malloc(sizeof *code);
    static int gen;
    (void)user;
    if (!code) return MGUARD_ENOMEM;
    code->result = o->a * 1 + o->b * 10 + o->c * 100;
    code->generation = ++gen;
    compiles++;
    *(compiled **)value = code;
    printf("  [%s] compiled fast path #%d\n", o->name, code->generation);
    return MGUARD_OK;
}

static double call(object *o)
{
    compiled **code = (compiled **)mguard_cache_get_or_compute(cache, MGUARD_CACHE_KEYS(o), compile, NULL, NULL);
    return (*code)->result;
}

int main(void)
{
    mguard_cache_desc d = {0};
    mguard_cache_reason why;
    object *x, *y;
    char report[256];
    int i;

    ctx = mguard_ctx_create(NULL);
    d.value_size = sizeof(compiled *);
    d.value_dtor = free_code;
    d.name = "fast paths";
    cache = mguard_cache_create(ctx, &d);
    x = object_new("x", 1, 2, 3);
    y = object_new("y", 4, 5, 6);

    printf("calling x and y three times each:\n");
    for (i = 0; i < 3; i++) {
        double rx = call(x), ry = call(y);
        printf("  x -> %g, y -> %g\n", rx, ry);
    }
    printf("compilations so far: %d, cache entries: %lu\n\n", compiles, (unsigned long)mguard_cache_count(cache));

    printf("mutating x.b = 20:\n");
    OBJECT_SET(x, b, 20);
    mguard_cache_last_reason(cache, MGUARD_CACHE_KEYS(x), &why);
    printf("  x's code was dropped by a %s of .%s\n", mguard_cache_cause_str(why.cause), why.attr);
    printf("  x -> %g (after recompiling)\n\n", call(x));

    printf("destroying y:\n");
    object_free(y);
    printf("  cache entries left: %lu\n\n", (unsigned long)mguard_cache_count(cache));

    printf("a new object may reuse y's address; it starts uncached:\n");
    y = object_new("z", 7, 8, 9);
    printf("  z cached before first call: %s\n", mguard_cache_contains(cache, MGUARD_CACHE_KEYS(y)) ? "yes" : "no");
    printf("  z -> %g\n\n", call(y));

    object_free(x);
    object_free(y);
    mguard_cache_format(cache, report, sizeof report);
    printf("total compilations: %d\n%s\n", compiles, report);
    mguard_ctx_destroy(ctx);
    return 0;
}
