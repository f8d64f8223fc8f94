/* transfer.c - speculative transfers between bank accounts, C structs of
   fields of every kind, bound once to one ledger; the diff prints each by
   its type, and apply writes each into its field. */
#include <stdio.h>
#include <string.h>
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

typedef struct account {
    char name[8];
    long balance;               /* cents */
    double rate;                /* percent */
    bool frozen;
    struct account *peer;       /* the last transfer's other side */
    char memo[8];
} account;

static const mguard_ledger_field account_fields[] = {
    MGUARD_LEDGER_FIELD(account, balance, MGUARD_LEDGER_VALUE_INT),
    MGUARD_LEDGER_FIELD(account, rate, MGUARD_LEDGER_VALUE_DOUBLE),
    MGUARD_LEDGER_FIELD(account, frozen, MGUARD_LEDGER_VALUE_BOOL),
    MGUARD_LEDGER_FIELD(account, peer, MGUARD_LEDGER_VALUE_PTR),
    MGUARD_LEDGER_FIELD(account, memo, MGUARD_LEDGER_VALUE_BYTES)
};

/* Diff text: accounts by name; peer and memo by this hook, the rest (it
   writes nothing) by their type. */
static void label(const void *obj, const char *attr, const void *p, size_t size, char *buf, size_t bufsize, void *user)
{
    (void)obj, (void)attr, (void)size, (void)user;
    snprintf(buf, bufsize, "%s", ((const account *)p)->name);
}
static void show(const void *obj, const char *attr, const void *p, size_t size, char *buf, size_t bufsize, void *user)
{
    const account *peer;
    (void)obj, (void)user;
    if (strcmp(attr, "memo") == 0) snprintf(buf, bufsize, "\"%.*s\"", (int)size, (const char *)p);
    if (strcmp(attr, "peer") != 0) return;
    memcpy(&peer, p, sizeof peer);
    snprintf(buf, bufsize, "%s", peer ? peer->name : "none");
}

/* Move amount from a to b: reads and writes go through the ledger. */
static const char *transfer(mguard_ledger *L, account *a, account *b, long amount, const char *memo)
{
    long from, to;
    bool frozen;
    char m[8] = {0};
    mguard_ledger_read(L, b, "frozen", &frozen);
    mguard_ledger_read(L, a, "balance", &from);
    mguard_ledger_read(L, b, "balance", &to);
    if (frozen) return "refused: frozen";
    if (from < amount) return "refused: too little";
    from -= amount;
    to += amount;
    strncpy(m, memo, sizeof m - 1);
    mguard_ledger_store_attr(L, a, "balance", &from);
    mguard_ledger_store_attr(L, b, "balance", &to);
    mguard_ledger_store_attr(L, a, "peer", &b);
    mguard_ledger_store_attr(L, b, "peer", &a);
    mguard_ledger_store_attr(L, b, "memo", m);
    return "done";
}

int main(void)
{
    account alice = {"alice", 10000, 1.5, false, NULL, ""}, bob = {"bob", 2500, 1.5, false, NULL, ""};
    account carol = {"carol", 0, 0.5, true, NULL, ""};
    account *all[3] = {&alice, &bob, &carol};
    mguard_ctx *ctx = mguard_ctx_create(NULL);
    mguard_ledger_desc d = {0};
    mguard_ledger *L, *start;
    mguard_ledger_diff_result *diff;
    char text[1024];
    double rate = 2.25;
    bool no = false;
    int i;

    d.value_size = sizeof(long);     /* unbound attributes: longs */
    d.value_type = MGUARD_LEDGER_VALUE_INT;
    d.format_object = label;
    d.format_value = show;
    L = mguard_ledger_create(ctx, &d);
    for (i = 0; i < 3; i++) {
        mguard_ledger_track(L, all[i], MGUARD_LEDGER_EXISTING, all[i]->name);
        mguard_ledger_set_fields(L, all[i], account_fields, 5);
    }
    start = mguard_ledger_clone(L);

    printf("alice -> bob   30.00: %s\n", transfer(L, &alice, &bob, 3000, "rent"));
    mguard_ledger_store_attr(L, &bob, "rate", &rate);
    printf("bob   -> carol  5.00: %s\n", transfer(L, &bob, &carol, 500, "gift"));
    mguard_ledger_store_attr(L, &carol, "frozen", &no);
    printf("bob   -> carol  5.00: %s\n", transfer(L, &bob, &carol, 500, "gift"));
    printf("carol -> alice 99.00: %s\n", transfer(L, &carol, &alice, 9900, "loan"));

    printf("\nwhat the run would change:\n");
    mguard_ledger_diff(start, L, &diff);
    mguard_ledger_diff_format(diff, text, sizeof text);   /* snprintf-style: cut to fit */
    fputs(text, stdout);
    mguard_ledger_diff_free(diff);

    printf("\nbefore apply: alice %ld, bob %ld, carol %ld\n", alice.balance, bob.balance, carol.balance);
    mguard_ledger_apply(L, NULL, NULL);   /* every write is a field's */
    printf("after apply:  alice %ld, bob %ld, carol %ld (frozen: %s, memo: %s)\n", alice.balance, bob.balance,
           carol.balance, carol.frozen ? "yes" : "no", carol.memo);
    mguard_ledger_destroy(start);
    mguard_ledger_destroy(L);
    mguard_ctx_destroy(ctx);
    return 0;
}
