/* bench_ab_main.c - `make bench-ab`: the old and the new mguard.h in one
   program, their samples taken in turn.

   bench/bench_ab.c is compiled once per header (ab_side_old, ab_side_new:
   two MGUARD_STATIC copies of the implementation). For each row, this
   program takes a warm-up sample of each side, then SAMPLES samples of
   old and new one after the other (which one goes first alternates), so
   that a burst of load on a shared machine, which lasts far longer than a
   sample, hits both figures of a pair alike. Both sides get the same keys
   at the same addresses.

   Output: "# ..." comment lines, then per row
   "id<TAB>n<TAB>old ns<TAB>new ns<TAB>new/old<TAB>label": the median of
   each side's samples (ns per operation; nan when that side's header lacks
   a function the row needs) and the median of the ratios of the pairs
   (sample j of new over sample j of old, taken one right after the
   other). bench/ab.py runs this program several times (rounds) and prints
   the table.

   Usage: bench_ab [--quick] [--wall] [--list] [--only ID]
     --quick    3 samples of >= 1 ms per row and side instead of 5 of >= 3 ms
     --wall     time with the monotonic clock instead of the thread's CPU time
     --list     print the rows (id, n, label) and exit
     --only ID  only the row ID; "ID*": the rows whose id starts with ID */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define STB_DS_IMPLEMENTATION
#define STBDS_NO_SHORT_NAMES
#include "stb_ds.h"
#include "bench_ab.h"

double ab_min_ns = 3e6;
clockid_t ab_clock = CLOCK_THREAD_CPUTIME_ID;
#define MAX_SAMPLES 16
static int samples = 5;
static const char *only;

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p) { fprintf(stderr, "bench_ab: out of memory\n"); exit(2); }
    return p;
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static void **shuffled(void **a, size_t n)
{
    void **s = (void **)xmalloc(n * sizeof *s);
    size_t i;
    memcpy(s, a, n * sizeof *s);
    for (i = n; i > 1; i--) {
        size_t j = (size_t)(rng() % i);
        void *t = s[i - 1];
        s[i - 1] = s[j];
        s[j] = t;
    }
    return s;
}

/* The keys of size n; the misses are addresses in missblock (n * 32 bytes). */
static void keys_init(ab_keys *k, size_t n, char *missblock)
{
    void **m = (void **)xmalloc(n * sizeof *m);
    size_t i;
    k->n = n;
    k->block = (char *)xmalloc(n * 32);
    k->keys = (void **)xmalloc(n * sizeof *k->keys);
    for (i = 0; i < n; i++) { k->keys[i] = k->block + 32 * i; m[i] = missblock + 32 * i; }
    k->ins = shuffled(k->keys, n);
    k->look = shuffled(k->keys, n);
    k->miss = shuffled(m, n);
    k->sum = (long)n * ((long)n + 1) / 2;
    free(m);
}
static void keys_free(ab_keys *k)
{
    free(k->block); free(k->keys); free(k->ins); free(k->look); free(k->miss);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *s, int n)
{
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return s[n / 2];
}

static int row_selected(const ab_row *r)
{
    size_t len;
    if (!only) return 1;
    len = strlen(only);
    if (len && only[len - 1] == '*') return strncmp(r->id, only, len - 1) == 0;
    return strcmp(r->id, only) == 0;
}

/* The rows of size n, on one fixture per side. */
static void run_size(size_t n)
{
    const ab_side *side[2] = { &ab_side_old, &ab_side_new };
    char *missblock = (char *)xmalloc(n * 32);
    ab_keys k;
    void *f[2];
    size_t i;
    int s, j;
    keys_init(&k, n, missblock);
    for (s = 0; s < 2; s++) f[s] = side[s]->fixture_new(&k);
    for (i = 0; i < ab_side_new.nrows; i++) {
        const ab_row *r = ab_side_new.row(i);
        double v[2][MAX_SAMPLES], ratio[MAX_SAMPLES];
        if (r->n != n || !row_selected(r)) continue;
        for (s = 0; s < 2; s++) (void)side[s]->sample(f[s], i);   /* warm-up */
        for (j = 0; j < samples; j++)
            for (s = 0; s < 2; s++) {
                int t = (j & 1) ? 1 - s : s;   /* old first, then new first */
                v[t][j] = side[t]->sample(f[t], i);
            }
        for (j = 0; j < samples; j++) ratio[j] = v[1][j] / v[0][j];
        printf("%s\t%lu\t%.4f\t%.4f\t%.4f\t%s\n", r->id, (unsigned long)n, median(v[0], samples),
               median(v[1], samples), median(ratio, samples), r->label);
        fflush(stdout);
    }
    for (s = 0; s < 2; s++) side[s]->fixture_free(f[s]);
    keys_free(&k);
    free(missblock);
}

int main(int argc, char **argv)
{
    size_t sizes[64], nsizes = 0, i, z;
    int a, list = 0;
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--quick") == 0) { samples = 3; ab_min_ns = 1e6; }
        else if (strcmp(argv[a], "--wall") == 0) ab_clock = CLOCK_MONOTONIC;
        else if (strcmp(argv[a], "--list") == 0) list = 1;
        else if (strcmp(argv[a], "--only") == 0 && a + 1 < argc) only = argv[++a];
        else { fprintf(stderr, "usage: %s [--quick] [--wall] [--list] [--only ID]\n", argv[0]); return 2; }
    }
    /* both sides are this same source: the same rows in the same order */
    if (ab_side_old.nrows != ab_side_new.nrows) { fprintf(stderr, "bench_ab: the two sides differ\n"); return 2; }
    for (i = 0; i < ab_side_new.nrows; i++) {
        const ab_row *r = ab_side_new.row(i);
        if (strcmp(r->id, ab_side_old.row(i)->id) != 0) { fprintf(stderr, "bench_ab: the two sides differ\n"); return 2; }
        if (list) printf("%s\t%lu\t%s\n", r->id, (unsigned long)r->n, r->label);
        for (z = 0; z < nsizes && sizes[z] != r->n; z++) continue;
        if (z == nsizes && nsizes < sizeof sizes / sizeof sizes[0]) sizes[nsizes++] = r->n;
    }
    if (list) return 0;
    printf("# old: mguard %s; new: mguard %s; %d samples per row and side, each >= %.0f ms of %s time\n",
           ab_side_old.version, ab_side_new.version, samples, ab_min_ns / 1e6,
           ab_clock == CLOCK_MONOTONIC ? "wall" : "CPU");
    for (z = 0; z < nsizes; z++) run_size(sizes[z]);
    return 0;
}
