/* module_tree.c - which modules am I inside, and who did the work?

   A small network of nested modules runs forward and then backward. Every
   module calls mguard_scope_enter/_exit around its work (the forward pre-
   and post-hooks); the leaf operations ask the tracker which modules are
   active and charge their FLOPs with mguard_scope_add: to the leaf's own
   count (self) and to the total of every module it is inside. At the end
   the program prints self and total per module as a tree and the
   enter/exit spans as a Chrome trace (save it to a file and open it in
   https://ui.perfetto.dev or chrome://tracing).

   Usage: module_tree [trace.json]    (no argument: the trace on stdout) */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

#include <stdio.h>
#include <stdlib.h>

/* A module: a type, named children, and for leaves a matrix size. */
typedef struct module module;
struct module {
    const char *type;
    int n;
    const char *names[4];
    module *kids[4];
    int in, out;            /* a Linear leaf: in x out weights */
};

static const char *type_name(const void *comp, void *user)
{
    (void)user;
    return ((const module *)comp)->type;
}

static bool child(const void *comp, size_t i, const char **name, const void **kid, void *user)
{
    const module *m = (const module *)comp;
    (void)user;
    if ((int)i >= m->n) return false;
    *name = m->names[i];
    *kid = m->kids[i];
    return true;
}

static void add(module *parent, const char *name, module *kid)
{
    parent->names[parent->n] = name;
    parent->kids[parent->n] = kid;
    parent->n++;
}

static mguard_scope *tracker;
static const int batch = 4;

static void show_parents(const char *what)
{
    const char *p[16];
    size_t n = mguard_scope_parents(tracker, p, 16), i;
    printf("  %-8s in {", what);
    for (i = 0; i < n && i < 16; i++) printf("%s%s", i ? ", " : "", p[i]);
    printf("}\n");
}

/* Forward: enter, do the work (leaves) or run the children, exit. */
static void forward(module *m)
{
    int i;
    mguard_scope_enter(tracker, m);
    if (m->n == 0) {
        double flops = 2.0 * batch * m->in * m->out;
        show_parents(m->type);
        mguard_scope_add(tracker, "flops", flops);
        mguard_scope_add(tracker, "params", (double)m->in * m->out);
    }
    for (i = 0; i < m->n; i++) forward(m->kids[i]);
    mguard_scope_exit(tracker, m);
}

/* Backward: the same modules in reverse; a leaf costs twice its forward. */
static void backward(module *m)
{
    int i;
    mguard_scope_enter(tracker, m);
    if (m->n == 0) {
        show_parents("grad");
        mguard_scope_add(tracker, "flops", 4.0 * batch * m->in * m->out);
    }
    for (i = m->n - 1; i >= 0; i--) backward(m->kids[i]);
    mguard_scope_exit(tracker, m);
}

/* mguard's warnings, printed in line with the rest of the output. */
static void log_line(mguard_log_level level, mguard_log_code code, const char *msg, void *user)
{
    (void)code;
    (void)user;
    printf("  [mguard %s] %s\n", level == MGUARD_LOG_ERROR ? "error" : level == MGUARD_LOG_WARN ? "warning" : "info", msg);
}

/* A report of any size: ask its length (cap 0), allocate, render, write. */
static size_t write_view(mguard_scope_view view, FILE *f)
{
    size_t n = mguard_scope_format(tracker, view, NULL, 0);
    char *text = (char *)malloc(n + 1);
    if (!text) return 0;
    mguard_scope_format(tracker, view, text, n + 1);
    fwrite(text, 1, n, f);
    free(text);
    return n;
}

/* One module's FLOPs: its own and its subtree's. */
static void show_flops(const char *name)
{
    double self, total = mguard_scope_counter(tracker, name, "flops", &self);
    printf("  %-18s %6g of its own, %6g in all\n", name, self, total);
}

int main(int argc, char **argv)
{
    mguard_ctx_desc cdesc = {0};
    mguard_ctx *ctx;
    mguard_scope_desc desc = {0};
    module net = {"Net", 0, {0}, {0}, 0, 0}, encoder = {"Sequential", 0, {0}, {0}, 0, 0};
    module block0 = {"Block", 0, {0}, {0}, 0, 0}, block1 = {"Block", 0, {0}, {0}, 0, 0};
    module fc0a = {"Linear", 0, {0}, {0}, 16, 32}, fc0b = {"Linear", 0, {0}, {0}, 32, 16};
    module fc1a = {"Linear", 0, {0}, {0}, 16, 32}, fc1b = {"Linear", 0, {0}, {0}, 32, 16};
    module head = {"Linear", 0, {0}, {0}, 16, 10};
    FILE *f;
    const char *current;
    size_t frames;

    cdesc.logger.func = log_line;
    ctx = mguard_ctx_create(&cdesc);
    add(&net, "encoder", &encoder);
    add(&net, "head", &head);
    add(&encoder, "0", &block0);
    add(&encoder, "1", &block1);
    add(&block0, "fc1", &fc0a);
    add(&block0, "fc2", &fc0b);
    add(&block1, "fc1", &fc1a);
    add(&block1, "fc2", &fc1b);

    desc.type_name = type_name;
    desc.child = child;
    desc.trace = true;
    tracker = mguard_scope_create(ctx, &desc);

    printf("forward pass (batch %d): the active modules at each leaf\n", batch);
    forward(&net);
    frames = mguard_scope_frames(tracker, &current, 1);   /* the innermost first, the root last */
    printf("after forward: current scope is %s, depth %lu\n", current, (unsigned long)frames - 1);

    printf("\nbackward pass\n");
    mguard_scope_set_phase(tracker, 1);
    backward(&net);
    mguard_scope_clear(tracker, MGUARD_SCOPE_CLEAR_FRAMES);    /* the end of the backward pass */
    mguard_scope_frames(tracker, &current, 1);
    printf("after reset: backward=%s, current scope is %s\n",
           (mguard_scope_phase(tracker) == 1) ? "true" : "false", current);

    printf("\nwhat a misbehaving hook looks like: exiting %s twice\n", mguard_scope_name(tracker, &head));
    mguard_scope_enter(tracker, &head);
    mguard_scope_exit(tracker, &head);
    mguard_scope_exit(tracker, &head);   /* logged once */
    mguard_scope_exit(tracker, &head);   /* identical: not logged again */

    printf("\nFLOPs and parameters per module (forward + backward), self and total:\n");
    write_view(MGUARD_SCOPE_TREE, stdout);
    printf("\nthe same, asked one module at a time:\n");
    show_flops("Net");
    show_flops("Net.encoder.0");
    show_flops("Net.encoder.0.fc1");

    if (argc > 1) {
        f = fopen(argv[1], "w");
        if (f) {
            size_t n = write_view(MGUARD_SCOPE_TRACE_JSON, f);
            fclose(f);
            printf("\nwrote %lu bytes of Chrome trace to %s\n", (unsigned long)n, argv[1]);
        } else {
            printf("\ncould not write %s\n", argv[1]);
        }
    } else {
        printf("\nthe Chrome trace (module_tree FILE writes it to FILE instead):\n");
        write_view(MGUARD_SCOPE_TRACE_JSON, stdout);
    }

    mguard_ctx_destroy(ctx);    /* destroys the tracker too */
    return 0;
}
