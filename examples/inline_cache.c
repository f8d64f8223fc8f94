/* inline_cache.c - an inline cache guarded by mguard.

   A toy object system: every object has a few numeric fields. "Compiling"
   an object produces a fast path specialised to its current fields (here:
   a precomputed weighted sum). The compiled code is cached per object in a
   weak table and guarded by a watcher, so that
     - a mutation of the object invalidates the cached code (recompiled on
       the next call), and
     - the death of the object drops the cache entry and frees the code.
   Run it and read what it prints. */
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
    int generation;      /* how many times this object was compiled */
    int valid;
} compiled;

static mguard_ctx *ctx;
static mguard_weak *cache;   /* object -> compiled * */
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
static void invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    compiled *code = (compiled *)guard;
    (void)user;
    code->valid = 0;
    printf("  [%s] cached code invalidated (%s)\n", ((const object *)obj)->name,
           attr ? attr : "object destroyed");
    mguard_weak_remove(cache, obj);       /* re-entrant call: allowed */
}

/* The value destructor: the cache owns the compiled code. */
static void free_code(void *value, void *user)
{
    compiled *code = *(compiled **)value;
    (void)user;
    mguard_on_destroy(ctx, code);         /* the code is a guard: tell mguard */
    free(code);
}

static double call(object *o)
{
    compiled *code = (compiled *)mguard_weak_get_ptr(cache, o);
    static int gen;
    if (!code) {
        code = (compiled *)malloc(sizeof *code);
        code->result = o->a * 1 + o->b * 10 + o->c * 100;
        code->generation = ++gen;
        code->valid = 1;
        compiles++;
        mguard_weak_set_ptr(cache, o, code);
        mguard_watch(ctx, o, code, invalidate, NULL);
        printf("  [%s] compiled fast path #%d\n", o->name, code->generation);
    }
    return code->result;
}

int main(void)
{
    mguard_weak_desc d = {sizeof(compiled *), free_code, NULL, NULL};
    object *x, *y;
    int i;

    ctx = mguard_ctx_create(NULL);
    cache = mguard_weak_create(ctx, &d);
    x = object_new("x", 1, 2, 3);
    y = object_new("y", 4, 5, 6);

    printf("calling x and y three times each:\n");
    for (i = 0; i < 3; i++) {
        double rx = call(x), ry = call(y);
        printf("  x -> %g, y -> %g\n", rx, ry);
    }
    printf("compilations so far: %d, cache entries: %lu\n\n", compiles, (unsigned long)mguard_weak_count(cache));

    printf("mutating x.b = 20:\n");
    OBJECT_SET(x, b, 20);
    printf("  x -> %g (after recompiling)\n", call(x));
    printf("  x mutations counted: %lu\n\n", (unsigned long)mguard_mutation_count(ctx, x));

    printf("destroying y:\n");
    object_free(y);
    printf("  cache entries left: %lu\n\n", (unsigned long)mguard_weak_count(cache));

    printf("a new object may reuse y's address; it starts uncached:\n");
    y = object_new("z", 7, 8, 9);
    printf("  z cached before first call: %s\n", mguard_weak_contains(cache, y) ? "yes" : "no");
    printf("  z -> %g\n\n", call(y));

    object_free(x);
    object_free(y);
    printf("total compilations: %d, cache entries at the end: %lu\n", compiles, (unsigned long)mguard_weak_count(cache));
    mguard_ctx_destroy(ctx);
    return 0;
}
