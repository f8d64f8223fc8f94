/* generations.c - which objects were made "during the run"?

   A program builds some modules at start-up, then advances the generation
   and runs a step that creates new modules on the fly. A specialiser that
   caches code per module treats modules created in the current generation
   (and every instance of a class marked dynamic) as dynamic: not worth
   specialising. This is GenerationTracker from PyTorch Dynamo, in C. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct klass { const char *name; } klass;
typedef struct module { const klass *cls; char name[16]; } module;

static mguard_ctx *ctx;

static module *module_new(const klass *cls, const char *name)
{
    module *m = (module *)calloc(1, sizeof *m);
    m->cls = cls;
    snprintf(m->name, sizeof m->name, "%s", name);
    mguard_gen_tag(ctx, m);                 /* from the constructor */
    return m;
}

static void module_free(module *m)
{
    mguard_on_destroy(ctx, m);              /* from the destructor */
    free(m);
}

static void report(module *const *ms, int n)
{
    int i;
    for (i = 0; i < n; i++)
        printf("  %-8s %-7s generation %ld -> %s\n", ms[i]->name, ms[i]->cls->name,
               mguard_gen_get(ctx, ms[i]),
               mguard_gen_is_dynamic(ctx, ms[i], ms[i]->cls) ? "dynamic" : "static");
}

int main(void)
{
    static const klass linear = {"Linear"}, relu = {"ReLU"}, lazy = {"Lazy"};
    module *ms[6];
    ctx = mguard_ctx_create(NULL);

    printf("generation %ld: building the model (tagged in the current generation,\n"
           "so dynamic until the generation advances)\n", mguard_gen_current(ctx));
    ms[0] = module_new(&linear, "fc1");
    ms[1] = module_new(&relu, "act");
    ms[2] = module_new(&lazy, "lazy1");
    report(ms, 3);

    printf("\nadvance to generation %ld (the run starts), mark class Lazy dynamic\n", mguard_gen_advance(ctx));
    mguard_gen_mark_class_dynamic(ctx, &lazy);
    ms[3] = module_new(&linear, "fc_tmp");   /* created inside the step */
    ms[4] = module_new(&relu, "act_tmp");
    ms[5] = module_new(&lazy, "lazy2");
    report(ms, 6);

    printf("\nadvance to generation %ld: last step's modules are static now\n", mguard_gen_advance(ctx));
    report(ms, 6);

    printf("\nclear: generation back to 0, tags and class marks forgotten\n");
    mguard_gen_clear(ctx);
    report(ms, 6);

    {
        int i;
        mguard_ctx_stats st;
        for (i = 0; i < 6; i++) module_free(ms[i]);
        mguard_ctx_get_stats(ctx, &st);
        printf("\nobjects still known to mguard: %lu\n", (unsigned long)st.objects);
    }
    mguard_ctx_destroy(ctx);
    return 0;
}
