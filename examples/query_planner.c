/* query_planner.c - compiled query plans that are never stale.

   A tiny query planner. A plan is compiled for a (query, session) pair and
   reads a few facts while it is compiled: the row counts and indexes of
   the tables the query touches, and one or two settings of the server's
   configuration. Plans live in a guarded cache:
     - the key (query, session) is a multi-object key: each session gets
       its own plan, and a session's death drops its plans;
     - every fact the planner reads is declared as a dependency on one
       attribute (orders.rows, config.enable_hashjoin, ...), so a mutation
       recompiles exactly the plans that read it, and nothing else;
     - every recompilation says why, down to the line that made the
       mutation (MGUARD_SET_FIELD records __FILE__ and __LINE__), naming
       the fact by the context's describe hook, not by its address.
   Run it and read what it prints. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table { const char *name; long rows; int indexed; } table;
typedef struct config { const char *name; int enable_hashjoin; int work_mem; int log_level; } config;
typedef struct session { const char *name; } session;
typedef struct query { const char *name; table *from, *join; } query;

typedef struct plan { char text[96]; } plan;

static mguard_ctx *ctx;
static mguard_cache *plans;
static config cfg = {"config", 1, 64, 0};
static table orders = {"orders", 1000, 0}, customers = {"customers", 50, 1};
static int compiles;

/* The context's describe hook: what a drop reason calls an object. */
static void describe(const void *obj, char *buf, size_t size, void *user)
{
    (void)user;
    if (obj == &cfg) snprintf(buf, size, "%s", cfg.name);
    else if (obj == &orders || obj == &customers) snprintf(buf, size, "%s", ((const table *)obj)->name);
}

/* The planner: reads facts, declares each one it read. */
static mguard_status compile_plan(mguard_cache_job *job, void *value, void *user)
{
    const query *q = (const query *)mguard_cache_job_key(job, 0);
    const session *s = (const session *)mguard_cache_job_key(job, 1);
    plan *p = (plan *)value;
    mguard_cache_reason why;
    char text[200];
    (void)user;
    compiles++;
    if (mguard_cache_last_reason(plans, MGUARD_CACHE_KEYS(q, s), &why) == MGUARD_OK) {
        mguard_cache_reason_format(&why, text, sizeof text);   /* "mutation of orders.indexed at ..." */
        printf("  recompiling %s for %s: %s\n", q->name, s->name, text);
    } else {
        printf("  compiling %s for %s\n", q->name, s->name);
    }
    mguard_cache_job_depend(job, q->from, "rows");
    mguard_cache_job_depend(job, q->from, "indexed");
    if (!q->join) {
        snprintf(p->text, sizeof p->text, "%s %s", q->from->indexed ? "index scan" : "seq scan", q->from->name);
        return MGUARD_OK;
    }
    mguard_cache_job_depend(job, q->join, "rows");
    mguard_cache_job_depend(job, &cfg, "enable_hashjoin");
    if (cfg.enable_hashjoin) {
        mguard_cache_job_depend(job, &cfg, "work_mem");   /* read only for a hash join */
        snprintf(p->text, sizeof p->text, "hash join %s (build %s, %d MB)", q->from->name,
                 q->join->rows < q->from->rows ? q->join->name : q->from->name, cfg.work_mem);
    } else {
        snprintf(p->text, sizeof p->text, "nested loop %s x %s", q->from->name, q->join->name);
    }
    return MGUARD_OK;
}

static void run(query *q, session *s)
{
    plan *p = (plan *)mguard_cache_get_or_compute(plans, MGUARD_CACHE_KEYS(q, s), compile_plan, NULL, NULL);
    printf("  %-6s %-5s -> %s\n", q->name, s->name, p->text);
}

static void run_all(query *q1, query *q2, session *a, session *b)
{
    int before = compiles;
    run(q1, a);
    run(q2, a);
    run(q2, b);
    printf("  (%d compiled)\n\n", compiles - before);
}

int main(void)
{
    mguard_ctx_desc cd = {0};
    mguard_cache_desc d = {0};
    query lookup = {"lookup", &orders, NULL}, report = {"report", &orders, &customers};
    session *web = (session *)malloc(sizeof *web), *batch = (session *)malloc(sizeof *batch);
    char line[256];

    web->name = "web";
    batch->name = "batch";
    cd.describe.func = describe;
    ctx = mguard_ctx_create(&cd);
    d.value_size = sizeof(plan);
    d.name = "plans";
    plans = mguard_cache_create(ctx, &d);

    printf("first run:\n");
    run_all(&lookup, &report, web, batch);
    printf("second run (every plan cached):\n");
    run_all(&lookup, &report, web, batch);

    printf("config.log_level = 2 (no plan read it):\n");
    MGUARD_SET_FIELD(ctx, &cfg, log_level, 2);
    run_all(&lookup, &report, web, batch);

    printf("an index on orders (every plan scans orders):\n");
    MGUARD_SET_FIELD(ctx, &orders, indexed, 1);
    run_all(&lookup, &report, web, batch);

    printf("customers grows to 5000 rows (only the join reads it):\n");
    MGUARD_SET_FIELD(ctx, &customers, rows, 5000);
    run_all(&lookup, &report, web, batch);

    printf("config.enable_hashjoin = 0:\n");
    MGUARD_SET_FIELD(ctx, &cfg, enable_hashjoin, 0);
    run_all(&lookup, &report, web, batch);

    printf("config.work_mem = 256 (no plan reads it now: nested loops):\n");
    MGUARD_SET_FIELD(ctx, &cfg, work_mem, 256);
    run_all(&lookup, &report, web, batch);

    printf("the batch session ends:\n");
    mguard_on_destroy(ctx, batch);
    free(batch);
    printf("  plans left: %lu\n\n", (unsigned long)mguard_cache_count(plans));

    mguard_cache_format(plans, line, sizeof line);
    printf("%s\n", line);
    mguard_on_destroy(ctx, web);
    free(web);
    mguard_ctx_destroy(ctx);
    return 0;
}
