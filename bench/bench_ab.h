/* bench_ab.h - what bench/bench_ab_main.c and the two copies of
   bench/bench_ab.c (one per header, `make bench-ab`) share. */
#ifndef BENCH_AB_H
#define BENCH_AB_H
#include <stddef.h>
#include <time.h>

/* The keys of one fixture, made once and handed to both sides, so both
   hash the same addresses: n objects of 32 bytes (their addresses are the
   keys), the same keys in two random orders, n addresses never used as
   keys. */
typedef struct ab_keys {
    size_t n;
    char *block;                  /* the objects: key i is block + 32 * i */
    void **keys, **ins, **look, **miss;
    long sum;                     /* sum of the values 1..n */
} ab_keys;

typedef struct ab_row {
    const char *id;               /* stable: bench/ab.py pairs rows by it */
    const char *label;
    size_t n;                     /* the fixture's size */
} ab_row;

/* One side: the benchmark compiled against one copy of mguard.h. */
typedef struct ab_side {
    const char *version;          /* that header's MGUARD_VERSION_STRING */
    size_t nrows;
    const ab_row *(*row)(size_t i);
    void *(*fixture_new)(const ab_keys *k);
    void (*fixture_free)(void *fx);
    /* one sample of row i: ns per operation; NAN when the header lacks a
       function the row needs */
    double (*sample)(void *fx, size_t i);
} ab_side;

extern const ab_side ab_side_old, ab_side_new;

/* Set by main: the minimum duration of one sample, and the clock. */
extern double ab_min_ns;
extern clockid_t ab_clock;

#endif
