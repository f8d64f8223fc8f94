/* memo.c - an interpreter's memo table over mutable objects.

   A tiny interpreter runs a script that creates, mutates and frees bodies;
   an expensive function of one or two of them (a force, a radius) is
   memoized in guarded caches keyed by the bodies. A mutation or a death
   drops exactly the entries keyed by that body, and the dropped callback
   prints why (the context's describe hook names the bodies). A key is a
   whole-object dependency: `set c color 7` drops force(a,c) although
   force never reads color (docs/guide.md, "Multi-object keys", says how
   to depend on some attributes only). Written from the README and docs
   alone, by a first-time user. Run it and read what it prints. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct body { char name[8]; double x, y, mass; int color; } body;

static mguard_ctx *ctx;
static body *vars[26];                 /* the interpreter's variables a..z */
static int computed;                   /* how many times compute ran */

/* describe hook: how drop reasons and log lines name an object */
static void name_body(const void *obj, char *buf, size_t size, void *user)
{
    (void)user;
    snprintf(buf, size, "%s", ((const body *)obj)->name);
}

/* the cache's dropped callback: why each entry went */
static void dropped(void *value, const mguard_cache_reason *why, void *user)
{
    char text[160];
    size_t i;
    mguard_cache_reason_format(why, text, sizeof text);
    printf("    dropped %s(", (const char *)user);
    for (i = 0; i < why->nkeys; i++)    /* keys still readable: on_destroy precedes free */
        printf("%s%s", i ? "," : "", ((const body *)why->keys[i])->name);
    printf(") = %g: %s\n", *(double *)value, text);
}

/* expensive: the gravitational force between two bodies */
static mguard_status force(mguard_cache_job *job, void *value, void *user)
{
    const body *a = mguard_cache_job_key(job, 0), *b = mguard_cache_job_key(job, 1);
    double dx = a->x - b->x, dy = a->y - b->y;
    (void)user;
    computed++;
    *(double *)value = a->mass * b->mass / (dx * dx + dy * dy);
    return MGUARD_OK;
}

/* expensive: one body's distance from the origin */
static mguard_status radius(mguard_cache_job *job, void *value, void *user)
{
    const body *a = mguard_cache_job_key(job, 0);
    (void)user;
    computed++;
    *(double *)value = sqrt(a->x * a->x + a->y * a->y);
    return MGUARD_OK;
}

static void body_free(body *b)
{
    mguard_on_destroy(ctx, b);         /* first: tell mguard */
    free(b);
}

int main(void)
{
    static const char *script[] = {
        "new a 0 0 10", "new b 3 4 2", "new c 6 8 1",
        "force a b", "force a b", "force a c", "force b c", "radius b", "radius b",
        "set b x 0",                   /* drops force(a,b), force(b,c), radius(b) */
        "force a b", "force a c", "radius b",
        "set c color 7",               /* color is read by nobody, but c is a key */
        "force a c",
        "free a",                      /* drops force(a,b), force(a,c) */
        "radius b", "force b c",
    };
    mguard_ctx_desc cd = {0};
    mguard_cache_desc fd = {0}, rd = {0};
    mguard_cache *forces, *radii;
    char line[256];
    size_t i;

    cd.describe.func = name_body;
    ctx = mguard_ctx_create(&cd);
    fd.value_size = sizeof(double);
    fd.name = "force";
    fd.dropped = dropped;
    fd.user = "force";
    forces = mguard_cache_create(ctx, &fd);
    rd = fd;
    rd.name = "radius";
    rd.user = "radius";
    radii = mguard_cache_create(ctx, &rd);

    for (i = 0; i < sizeof script / sizeof *script; i++) {
        char v1 = 0, v2 = 0, field[8];
        double n1, n2, n3;
        int before = computed;
        printf("%s\n", script[i]);
        if (sscanf(script[i], "new %c %lf %lf %lf", &v1, &n1, &n2, &n3) == 4) {
            body *b = malloc(sizeof *b);
            snprintf(b->name, sizeof b->name, "%c", v1);
            b->x = n1, b->y = n2, b->mass = n3, b->color = 0;
            vars[v1 - 'a'] = b;
        } else if (sscanf(script[i], "set %c %7s %lf", &v1, field, &n1) == 3) {
            body *b = vars[v1 - 'a'];
            if (strcmp(field, "x") == 0) MGUARD_SET_FIELD(ctx, b, x, n1);
            else if (strcmp(field, "y") == 0) MGUARD_SET_FIELD(ctx, b, y, n1);
            else if (strcmp(field, "mass") == 0) MGUARD_SET_FIELD(ctx, b, mass, n1);
            else if (strcmp(field, "color") == 0) MGUARD_SET_FIELD(ctx, b, color, (int)n1);
        } else if (sscanf(script[i], "free %c", &v1) == 1) {
            body_free(vars[v1 - 'a']);
            vars[v1 - 'a'] = NULL;
        } else if (sscanf(script[i], "force %c %c", &v1, &v2) == 2) {
            double *f = mguard_cache_get_or_compute(forces,
                MGUARD_CACHE_KEYS(vars[v1 - 'a'], vars[v2 - 'a']), force, NULL, NULL);
            printf("    = %g (%s)\n", *f, computed > before ? "miss" : "hit");
        } else if (sscanf(script[i], "radius %c", &v1) == 1) {
            double *r = mguard_cache_get_or_compute(radii,
                MGUARD_CACHE_KEYS(vars[v1 - 'a']), radius, NULL, NULL);
            printf("    = %g (%s)\n", *r, computed > before ? "miss" : "hit");
        }
    }
    mguard_cache_format(forces, line, sizeof line);
    printf("%s\n", line);
    mguard_cache_format(radii, line, sizeof line);
    printf("%s\n", line);
    for (i = 0; i < 26; i++)
        if (vars[i]) body_free(vars[i]);
    mguard_ctx_destroy(ctx);
    return 0;
}
