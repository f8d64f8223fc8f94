/* speculate.c - a tiny interpreter that runs a script speculatively.

   Every attribute write goes into a side-effects ledger instead of the real
   objects; reads look at the ledger first and fall back to the real
   object. Before the risky part the interpreter takes a checkpoint (a
   clone of the ledger). When a step fails it prints what the failed steps
   changed (a diff against the checkpoint), restores the checkpoint, prunes
   the new objects the program can no longer reach, and only then commits
   the surviving writes to the real objects.

   Objects are C structs; every attribute is a long field, listed once in a
   field table. The ledger stores the longs themselves (sized values), so
   reads and the commit go straight to the fields. An object refers to
   another by its number (next, head). (transfer.c binds a struct of
   fields of every type.) */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct obj {
    char name[8];
    long mode, count, val, next, head;   /* next, head: object numbers, 0 none */
} obj;

static const mguard_ledger_field obj_fields[] = {
    MGUARD_LEDGER_FIELD(obj, mode, MGUARD_LEDGER_VALUE_INT), MGUARD_LEDGER_FIELD(obj, count, MGUARD_LEDGER_VALUE_INT),
    MGUARD_LEDGER_FIELD(obj, val, MGUARD_LEDGER_VALUE_INT), MGUARD_LEDGER_FIELD(obj, next, MGUARD_LEDGER_VALUE_INT),
    MGUARD_LEDGER_FIELD(obj, head, MGUARD_LEDGER_VALUE_INT)
};

static obj heap[8] = {{"-", 0, 0, 0, 0, 0}, {"cfg", 0, 0, 0, 0, 0}, {"stats", 0, 0, 0, 0, 0}};
static long nheap = 3;
static struct { char name[8]; long ref; } vars[8] = {{"cfg", 1}, {"stats", 2}};
static int nvars = 2;
static mguard_ledger *L;

static long *var(const char *name)
{
    int i;
    for (i = 0; i < nvars; i++)
        if (strcmp(vars[i].name, name) == 0) return &vars[i].ref;
    snprintf(vars[nvars].name, sizeof vars[0].name, "%s", name);
    return &vars[nvars++].ref;
}

static long eval(const char *tok) { return (tok[0] >= '0' && tok[0] <= '9') ? atol(tok) : *var(tok); }

/* The ledger's hooks: an object's label, and what it refers to (read
   through the ledger: the references the run would leave). */
static void label(const void *o, const char *attr, const void *p, size_t vsize, char *buf, size_t size, void *user)
{
    const obj *x = o;
    (void)attr, (void)p, (void)vsize, (void)user;
    snprintf(buf, size, "%s", x->name);
}
static void refs(const void *o, mguard_ledger_visit_fn visit, void *vctx, void *user)
{
    const obj *x = o;
    long next = x->next, head = x->head;   /* untracked: the real fields */
    (void)user;
    if (mguard_ledger_get(L, o, NULL) == MGUARD_OK) {   /* tracked */
        mguard_ledger_read(L, o, "next", &next);
        mguard_ledger_read(L, o, "head", &head);
    }
    if (next) visit(&heap[next], vctx);
    if (head) visit(&heap[head], vctx);
}

/* Runs one statement; returns 0, or -1 when the statement fails. */
static int step(const char *line)
{
    char a[8], b[16], c[16];
    long v;
    printf("  %-22s", line);
    if (sscanf(line, "%7[a-z] = new %15s", a, b) == 2) {
        obj *o = &heap[nheap];
        snprintf(o->name, sizeof o->name, "%s", a);
        mguard_ledger_track(L, o, MGUARD_LEDGER_NEW, b);
        mguard_ledger_set_fields(L, o, obj_fields, 5);
        *var(a) = nheap++;
        printf("new %s, tracked as new\n", b);
    } else if (sscanf(line, "%7[a-z].%15[a-z] = %15s", a, b, c) == 3 || sscanf(line, "del %7[a-z].%15[a-z]", a, b) == 2) {
        obj *o = &heap[*var(a)];
        bool del = line[0] == 'd';
        if (mguard_ledger_get(L, o, NULL) == MGUARD_NOT_FOUND) {
            mguard_ledger_track(L, o, MGUARD_LEDGER_EXISTING, a);
            mguard_ledger_set_fields(L, o, obj_fields, 5);
        }
        v = del ? 0 : eval(c);
        if (del) mguard_ledger_delete_attr(L, o, b); else mguard_ledger_store_attr(L, o, b, &v);
        printf("%s (the real %s.%s is untouched)\n", del ? "deletion recorded" : "recorded", a, b);
    } else if (sscanf(line, "%7[a-z] = %15s", a, b) == 2) {
        *var(a) = eval(b);
        printf("variable %s rebound\n", a);
    } else if (sscanf(line, "print %7[a-z].%15[a-z]", a, b) == 2) {
        const obj *o = &heap[*var(a)];
        if (mguard_ledger_read(L, o, b, &v) == MGUARD_DELETED) printf("-> deleted (pending deletion)\n");
        else printf("-> %ld (%s)\n", v, mguard_ledger_pending(L, o, b, NULL) == MGUARD_OK ? "pending write" : "real object");
    } else if (strncmp(line, "fail", 4) == 0) {
        printf("FAILED:%s\n", line + 4);
        return -1;
    }
    return 0;
}

int main(void)
{
    static const char *script[] = {
        "cfg.mode = 1", "n = new Node", "n.val = 10", "n.next = cfg", "cfg.head = n",
        "t = new Node", "t.val = 5", "t = 0",
        "checkpoint",
        "stats.count = 2", "cfg.mode = 3", "print cfg.mode", "del cfg.head", "print cfg.head",
        "fail division by zero", "stats.count = 9"
    };
    mguard_ctx *ctx = mguard_ctx_create(NULL);
    mguard_ledger_desc d;
    mguard_ledger *checkpoint = NULL;
    mguard_ledger_diff_result *diff;
    mguard_ledger_stats st;
    const void *roots[8];
    size_t i, n, before, nroots = 0;
    char *text, *line, *nl;
    long k;

    memset(&d, 0, sizeof d);
    d.value_size = sizeof(long);              /* values are longs, stored in the ledger */
    d.value_type = MGUARD_LEDGER_VALUE_INT;   /* printed as numbers */
    d.format_object = label;
    d.refs = refs;
    L = mguard_ledger_create(ctx, &d);

    printf("== run the script speculatively\n");
    for (i = 0; i < sizeof script / sizeof script[0]; i++) {
        if (strcmp(script[i], "checkpoint") == 0) {
            checkpoint = mguard_ledger_clone(L);
            mguard_ledger_get_stats(checkpoint, &st);
            printf("  %-22scloned the ledger (%zu bytes copied)\n", script[i], st.storage_bytes);
        } else if (step(script[i]) < 0) {
            break;
        }
    }

    printf("\n== what the failed steps changed (a: the checkpoint, b: now)\n");
    mguard_ledger_diff(checkpoint, L, &diff);
    n = mguard_ledger_diff_format(diff, NULL, 0);   /* snprintf-style: measure, then write */
    text = malloc(n + 1);
    mguard_ledger_diff_format(diff, text, n + 1);
    for (line = text; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        fputs("  ", stdout);
        fwrite(line, 1, nl + 1 - line, stdout);
    }
    free(text);
    mguard_ledger_diff_free(diff);

    printf("\n== restore the checkpoint\n");
    mguard_ledger_restore(L, checkpoint);
    mguard_ledger_destroy(checkpoint);
    mguard_ledger_get_stats(L, &st);
    printf("  equal to the checkpoint again; %zu objects, %zu pending writes\n", st.entries, st.writes);

    printf("\n== prune: the roots are the live variables\n");
    for (k = 0; k < nvars; k++)
        if (vars[k].ref) roots[nroots++] = &heap[vars[k].ref];
    before = st.entries;
    mguard_ledger_prune(L, roots, nroots);
    mguard_ledger_get_stats(L, &st);
    printf("  %zu new object(s) dropped (t), %zu left tracked\n", before - st.entries, st.entries);

    printf("\n== apply: every write goes straight into its field\n");
    mguard_ledger_apply(L, NULL, NULL);
    mguard_ledger_destroy(L);
    for (k = 1; k < nheap; k++)
        printf("  %-5s mode=%ld count=%ld val=%ld next=%s head=%s\n", heap[k].name, heap[k].mode, heap[k].count,
               heap[k].val, heap[heap[k].next].name, heap[heap[k].head].name);
    mguard_ctx_destroy(ctx);
    return 0;
}
