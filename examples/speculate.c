/* speculate.c - a tiny interpreter that runs a script speculatively.

   Every attribute write goes into a side-effects ledger instead of the real
   objects; reads look at the ledger first. Before the risky part the
   interpreter takes a checkpoint (a clone of the ledger). When a step fails
   it prints what the failed steps changed (a diff against the checkpoint),
   restores the checkpoint, prunes the objects the program can no longer
   reach, and only then commits the surviving writes to the real objects.

   Values are tagged integers (odd) or object pointers. Objects are
   reference counted; the ledger holds them through its retain/release
   hooks, and an object whose count drops to zero tells mguard it died. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct obj {
    char name[16];
    int rc;
    int nfields;
    struct { const char *attr; void *value; } fields[8];
} obj;

static mguard_ctx *ctx;

static void *int_val(long n) { return (void *)(uintptr_t)(((uintptr_t)n << 1) | 1u); }
static int is_int(const void *v) { return ((uintptr_t)v & 1u) != 0; }
static long int_of(const void *v) { return (long)((uintptr_t)v >> 1); }

static void show(const void *v, char *buf, size_t size)
{
    if (!v) snprintf(buf, size, "0");
    else if (is_int(v)) snprintf(buf, size, "%ld", int_of(v));
    else snprintf(buf, size, "%s", ((const obj *)v)->name);
}

/* ---- reference counts, and the ledger's hooks on top of them ----------- */
static void retain(void *v, void *user) { (void)user; if (v && !is_int(v)) ((obj *)v)->rc++; }
static void release(void *v, void *user)
{
    obj *o = (obj *)v;
    int i;
    (void)user;
    if (!v || is_int(v) || --o->rc > 0) return;
    printf("    (%s is no longer referenced: freed)\n", o->name);
    mguard_on_destroy(ctx, o);      /* its destructor tells mguard */
    for (i = 0; i < o->nfields; i++) release(o->fields[i].value, NULL);
    free(o);
}
static void refs(const void *v, mguard_ledger_visit_fn visit, void *vctx, void *user)
{
    (void)user;
    if (v && !is_int(v)) visit(v, vctx);   /* an object refers to itself */
}
static void format(const void *v, char *buf, size_t size, void *user) { (void)user; show(v, buf, size); }

/* ---- the interpreter ---------------------------------------------------- */
static obj cfg = {"cfg", 1, 0, {{NULL, NULL}}}, stats = {"stats", 1, 0, {{NULL, NULL}}};
static struct { char name[8]; void *value; } vars[8] = {{"cfg", &cfg}, {"stats", &stats}};
static int nvars = 2;

static void **var(const char *name)
{
    int i;
    for (i = 0; i < nvars; i++)
        if (strcmp(vars[i].name, name) == 0) return &vars[i].value;
    strcpy(vars[nvars].name, name);
    vars[nvars].value = NULL;
    return &vars[nvars++].value;
}

static void *eval(const char *tok)
{
    if ((tok[0] >= '0' && tok[0] <= '9') || tok[0] == '-') return int_val(atol(tok));
    return *var(tok);
}

/* The real field, for reads the ledger has nothing for. */
static void *real_field(const obj *o, const char *attr)
{
    int i;
    for (i = 0; i < o->nfields; i++)
        if (strcmp(o->fields[i].attr, attr) == 0) return o->fields[i].value;
    return NULL;
}

/* Runs one statement; returns 0, or -1 when the statement fails. */
static int step(mguard_ledger *L, const char *line)
{
    char a[16], b[16], c[16], buf[32];
    void *v;
    printf("  %-22s", line);
    if (sscanf(line, "%15[a-z] = new %15s", a, b) == 2) {
        obj *o = (obj *)calloc(1, sizeof *o);
        void **slot = var(a);
        snprintf(o->name, sizeof o->name, "%s", a);
        o->rc = 1;                                  /* held by the variable */
        mguard_ledger_track_new(L, o, b);
        release(*slot, NULL);
        *slot = o;
        printf("new %s, tracked as new\n", b);
    } else if (sscanf(line, "%15[a-z].%15[a-z] = %15s", a, b, c) == 3) {
        obj *o = (obj *)*var(a);
        if (!mguard_ledger_contains(L, o)) mguard_ledger_track_existing(L, o, a);
        mguard_ledger_store_attr(L, o, b, eval(c));
        printf("recorded (the real %s.%s is untouched)\n", a, b);
    } else if (sscanf(line, "del %15[a-z].%15[a-z]", a, b) == 2) {
        obj *o = (obj *)*var(a);
        if (!mguard_ledger_contains(L, o)) mguard_ledger_track_existing(L, o, a);
        mguard_ledger_delete_attr(L, o, b);
        printf("deletion recorded\n");
    } else if (sscanf(line, "%15[a-z] = %15s", a, b) == 2) {
        void **slot = var(a), *old = *slot;
        *slot = eval(b);
        retain(*slot, NULL);
        release(old, NULL);
        printf("variable %s rebound\n", a);
    } else if (sscanf(line, "print %15[a-z].%15[a-z]", a, b) == 2) {
        const obj *o = (const obj *)*var(a);
        mguard_status st = mguard_ledger_load_attr(L, o, b, &v);
        if (st == MGUARD_NOT_FOUND) v = real_field(o, b);
        show(v, buf, sizeof buf);
        printf("-> %s (%s)\n", st == MGUARD_DELETED ? "deleted" : buf,
               st == MGUARD_OK ? "pending write" : st == MGUARD_DELETED ? "pending deletion" : "real object");
    } else if (strncmp(line, "fail", 4) == 0) {
        printf("FAILED:%s\n", line + 4);
        return -1;
    }
    return 0;
}

static void commit(void *o_, const char *attr, void *value, bool deleted, void *user)
{
    obj *o = (obj *)o_;
    char buf[32];
    int i;
    void *old;
    (void)user;
    for (i = 0; i < o->nfields && strcmp(o->fields[i].attr, attr) != 0; i++) {}
    if (i == o->nfields) {
        o->fields[o->nfields].attr = attr;   /* interned: lives as long as ctx */
        o->fields[o->nfields++].value = NULL;
    }
    old = o->fields[i].value;
    o->fields[i].value = deleted ? NULL : value;
    retain(o->fields[i].value, NULL);
    release(old, NULL);
    show(value, buf, sizeof buf);
    printf("  %s.%s %s %s\n", o->name, attr, deleted ? "deleted" : "=", deleted ? "" : buf);
}

static void print_object(const obj *o)
{
    char buf[32];
    int i;
    printf("  %s {", o->name);
    for (i = 0; i < o->nfields; i++) {
        show(o->fields[i].value, buf, sizeof buf);
        printf(" %s=%s", o->fields[i].attr, o->fields[i].value ? buf : "(deleted)");
    }
    printf(" }\n");
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
    mguard_ledger_desc d;
    mguard_ledger *L, *checkpoint = NULL;
    mguard_ledger_diff_result *diff;
    const void *roots[8];
    size_t i, before;
    int nroots = 0, k;

    ctx = mguard_ctx_create(NULL);
    retain(&cfg, NULL);      /* the variables hold the two globals */
    retain(&stats, NULL);
    memset(&d, 0, sizeof d);
    d.retain = retain;
    d.release = release;
    d.refs = refs;
    d.format_value = format;
    d.format_object = format;
    d.plain_values = true;   /* tagged integers are not objects */
    L = mguard_ledger_create(ctx, &d);

    printf("== run the script speculatively\n");
    for (i = 0; i < sizeof script / sizeof script[0]; i++) {
        if (strcmp(script[i], "checkpoint") == 0) {
            checkpoint = mguard_ledger_clone(L);
            printf("  %-22scloned the ledger (%lu bytes copied)\n", script[i],
                   (unsigned long)mguard_ledger_storage_bytes(checkpoint));
        } else if (step(L, script[i]) < 0) {
            break;
        }
    }

    printf("\n== what the failed steps changed (a: the checkpoint, b: now)\n");
    mguard_ledger_diff(checkpoint, L, &diff);
    {
        const char *line = mguard_ledger_diff_text(diff), *nl;
        for (; (nl = strchr(line, '\n')) != NULL; line = nl + 1) printf("  %.*s\n", (int)(nl - line), line);
    }
    mguard_ledger_diff_free(diff);

    printf("\n== restore the checkpoint\n");
    mguard_ledger_restore(L, checkpoint);
    mguard_ledger_destroy(checkpoint);
    printf("  equal to the checkpoint again; %lu objects, %lu pending writes\n",
           (unsigned long)mguard_ledger_count(L), (unsigned long)mguard_ledger_write_count(L));

    printf("\n== prune: the roots are the live variables\n");
    for (k = 0; k < nvars; k++)
        if (vars[k].value && !is_int(vars[k].value)) roots[nroots++] = vars[k].value;
    before = mguard_ledger_count(L);
    mguard_ledger_prune(L, roots, (size_t)nroots);
    printf("  %lu new object(s) dropped, %lu left tracked\n",
           (unsigned long)(before - mguard_ledger_count(L)), (unsigned long)mguard_ledger_count(L));

    printf("\n== apply the surviving writes to the real objects\n");
    mguard_ledger_apply(L, commit, NULL);
    mguard_ledger_destroy(L);

    printf("\n== the real objects now\n");
    print_object(&cfg);
    print_object(&stats);
    print_object((const obj *)*var("n"));

    /* The program lets go of everything (the globals stay: the program
       owns them). */
    printf("\n== the program ends\n");
    for (k = 0; k < cfg.nfields; k++) release(cfg.fields[k].value, NULL);
    cfg.nfields = 0;
    for (k = 0; k < nvars; k++) release(vars[k].value, NULL);
    mguard_ctx_destroy(ctx);
    return 0;
}
