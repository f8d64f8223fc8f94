/* dynamic_shapes.c - which dimensions change from one input to the next?

   A compiler that specialises code on input shapes wants to know which
   dimensions to treat as dynamic. The program feeds the shapes of a few
   example batches to the dynamism tracker (PyTorch's
   track_dynamism_across_examples) and prints, for every input, which
   dimensions changed. Paths may be written "L.cfg.lr" or "L['cfg']['lr']":
   mguard_dyn_normalize_name makes them the same. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

#include <stdio.h>

typedef struct example {
    int64_t batch, channels, seq;
    double lr;
    int step;
} example;

static void observe(mguard_dyn *dyn, const example *ex)
{
    int64_t images[4], tokens[2], mask[3];
    images[0] = ex->batch; images[1] = ex->channels; images[2] = 32; images[3] = 32;
    tokens[0] = ex->batch; tokens[1] = ex->seq;
    mguard_dyn_observe(dyn, "L['images']", images, 4);
    mguard_dyn_observe(dyn, "L['text'][0]", tokens, 2);
    /* the mask gains a broadcast dimension in the later examples: ranks may differ */
    mask[0] = ex->batch; mask[1] = ex->seq; mask[2] = 1;
    mguard_dyn_observe(dyn, "L['text'][1]", mask, ex->step < 2 ? 2 : 3);
    mguard_dyn_observe_scalar(dyn, "L.cfg.lr", ex->lr);          /* dotted form */
    mguard_dyn_observe_scalar(dyn, "L['cfg']['step']", ex->step); /* bracketed form */
}

int main(void)
{
    static const example examples[] = {
        {8, 3, 128, 0.001, 0},
        {16, 3, 128, 0.001, 1},
        {8, 3, 77, 0.001, 2},
        {4, 3, 77, 0.001, 3},
    };
    static const char *samples[] = {"L.x.y", "L['x'].y", "L.layers.0.weight", "L.self._modules.fc"};
    mguard_ctx *ctx = mguard_ctx_create(NULL);
    mguard_dyn *dyn = mguard_dyn_create(ctx);
    mguard_dyn_iter it;
    const char *group = NULL;
    char text[1024];
    size_t i;
    bool varies;

    printf("source names, normalized:\n");
    for (i = 0; i < sizeof samples / sizeof *samples; i++) {
        mguard_dyn_normalize_name(samples[i], text, sizeof text);
        printf("  %-22s -> %s\n", samples[i], text);
    }

    printf("\nfeeding %lu examples:\n", (unsigned long)(sizeof examples / sizeof *examples));
    for (i = 0; i < sizeof examples / sizeof *examples; i++) {
        const example *ex = &examples[i];
        printf("  example %lu: images %ldx%ldx32x32, text %ldx%ld, lr %g, step %d\n", (unsigned long)i,
               (long)ex->batch, (long)ex->channels, (long)ex->batch, (long)ex->seq, ex->lr, ex->step);
        observe(dyn, ex);
    }

    printf("\nwhat changed, by argument:\n");
    it = mguard_dyn_iterate(dyn);
    while (mguard_dyn_next(&it)) {
        size_t d, ndyn = 0;
        if (it.group != group) printf("  %s\n", it.group);
        group = it.group;
        printf("    %-20s %-7s rank %lu:", it.path, it.is_shape ? "tensor" : "scalar", (unsigned long)it.rank);
        for (d = 0; d < it.rank; d++) {
            if (!it.varies[d]) continue;
            printf(" dim %lu dynamic", (unsigned long)d);
            ndyn++;
        }
        printf("%s\n", ndyn ? "" : " static");
    }

    /* position 0 of each: one flag, whether it varies */
    printf("\nspecialise on the batch size of the images? %s\n",
           mguard_dyn_dims(dyn, "L.images", NULL, &varies, 1) && varies ? "no, it changes" : "yes");
    printf("specialise on the learning rate? %s\n",
           mguard_dyn_dims(dyn, "L['cfg']['lr']", NULL, &varies, 1) && varies ? "no, it changes" : "yes, it never changed");

    mguard_dyn_format(dyn, text, sizeof text);
    printf("\nas track_dynamism_across_examples prints it:\n%s\n", text);

    mguard_ctx_destroy(ctx);
    return 0;
}
