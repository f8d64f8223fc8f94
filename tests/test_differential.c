/* Differential testing without clang's fuzzer: the decoder of
   tests/fuzz_decoder.h driven by a seeded PRNG, and by every input kept in
   tests/corpus/ (the fuzzer's seeds and its findings, which stay as
   regression inputs). mguard and the reference model must agree on every
   result, callback, destructor count and state; the first difference is a
   failure of the test, its message naming the seed or corpus file, the
   operation and what differed, and how to replay it. To replay one seed
   verbosely:
       FZ_SEED=123 FZ_VERBOSE=1 ./build/test_differential */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "fuzz_decoder.h"

#define SEEDS 3000

/* A mismatch fails the running test (cmocka's fail_msg does not return), so
   the other tests still run and the summary names it. */
static char replay[640];
static void report_mismatch(const char *report)
{
    fail_msg("%s\n  replay: %s", report, replay);
}

typedef struct totals { long runs, ops, events, checks, enomem, faulted, aux_ops, aux_calls, aux_retains, log_lines, log_destroys; } totals;

static void add(totals *t, const fz_result *r)
{
    t->runs++;
    t->ops += r->ops;
    t->events += r->events;
    t->checks += r->checks;
    t->enomem += r->enomem;
    t->faulted += r->failures;
    t->aux_ops += r->aux_ops;
    t->aux_calls += r->aux_calls;
    t->aux_retains += r->aux_retains;
    t->log_lines += r->aux_log_lines;
    t->log_destroys += r->aux_log_destroys;
}

static void test_seeded_sequences_agree_with_model(void **state)
{
    totals t;
    uint64_t seed, first = 1, last = SEEDS;
    unsigned char buf[2048];
    (void)state;
    memset(&t, 0, sizeof t);
    if (getenv("FZ_SEED")) first = last = strtoull(getenv("FZ_SEED"), NULL, 10);
    for (seed = first; seed <= last; seed++) {
        uint64_t rng = seed * 0x2545F4914F6CDD1Dull;
        size_t i, len = 2 + 40 + (size_t)(fz_rand(&rng) % 700);
        char label[64];
        fz_result r;
        for (i = 0; i < len; i++) buf[i] = (unsigned char)fz_rand(&rng);
        /* a third of the runs without allocation failures, whatever the
           header's fault bit says */
        if (seed % 3 == 0) buf[0] &= (unsigned char)~0x40;
        snprintf(label, sizeof label, "seed %lu", (unsigned long)seed);
        snprintf(replay, sizeof replay, "FZ_SEED=%lu FZ_VERBOSE=1 ./build/test_differential", (unsigned long)seed);
        if (buf[0] & 0x40) {
            /* fault mode: fail one of the allocations this input makes */
            buf[0] &= (unsigned char)~0x40;
            fz_run_input(buf, len, label, &r);
            if (r.allocs > 1) {
                long n = 2 + (long)(fz_rand(&rng) % (uint64_t)(r.allocs - 1));
                buf[0] = (unsigned char)((buf[0] & 0x3f) | 0x40 | ((n - 1) > 255 ? 0x80 : 0));
                buf[1] = (unsigned char)((n - 1) & 0xff);
                if (n <= 512) fz_run_input(buf, len, label, &r);
            }
        } else {
            fz_run_input(buf, len, label, &r);
        }
        add(&t, &r);
    }
    printf("  %ld sequences, %ld operations, %ld events compared, %ld ctx checks, %ld runs with an allocation failure (%ld ENOMEM answers)\n",
           t.runs, t.ops, t.events, t.checks, t.faulted, t.enomem);
    printf("  auxiliary context (checked, no model): %ld operations, %ld hook and callback calls (%ld retains)\n",
           t.aux_ops, t.aux_calls, t.aux_retains);
    printf("  its logger: %ld lines, %ld handles destroyed from inside it\n", t.log_lines, t.log_destroys);
    assert_int_equal(t.runs, (long)(last - first + 1));
    if (!getenv("FZ_SEED")) {
        assert_true(t.faulted > 0);
        assert_true(t.log_destroys > 0);   /* the re-entrant logger is exercised */
    }
}

static void test_corpus_inputs_agree_with_model(void **state)
{
    DIR *d = opendir("tests/corpus");
    struct dirent *e;
    totals t;
    (void)state;
    memset(&t, 0, sizeof t);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[512];
        unsigned char buf[1 << 16];
        size_t n;
        FILE *f;
        fz_result r;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "tests/corpus/%s", e->d_name);
        snprintf(replay, sizeof replay, "FZ_VERBOSE=1 ./build/fuzz/fuzz_mguard %s (make fuzz builds it)", path);
        f = fopen(path, "rb");
        assert_non_null(f);
        n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        fz_run_input(buf, n, path, &r);
        add(&t, &r);
    }
    closedir(d);
    printf("  %ld corpus inputs, %ld operations, %ld events compared\n", t.runs, t.ops, t.events);
    assert_true(t.runs > 0);
}

/* The reporting path itself: a mismatch reaches the hook with the label,
   the operation and what differed, and does not abort. */
static jmp_buf caught;
static char caught_report[1024];
static void catch_mismatch(const char *report)
{
    snprintf(caught_report, sizeof caught_report, "%s", report);
    longjmp(caught, 1);
}

static void test_a_mismatch_is_reported_not_aborted(void **state)
{
    void (*saved)(const char *) = fz_mismatch_hook;
    (void)state;
    caught_report[0] = 0;
    fz.o.label = "seed 42";
    fz.o.fail_at = 7;
    fz.opno = 3;
    memset(&fz.cur, 0, sizeof fz.cur);
    fz.cur.kind = 1;   /* set */
    fz.cur.a = 2;
    fz.cur.b = 3;
    fz.cur.c = 4;
    fz.cur.act = 5;
    fz_mismatch_hook = catch_mismatch;
    if (!setjmp(caught)) fz_fail("value %u destroyed twice", 5u);
    fz_mismatch_hook = saved;
    memset(&fz.o, 0, sizeof fz.o);
    memset(&fz.cur, 0, sizeof fz.cur);
    fz.opno = 0;
    assert_string_equal(caught_report, "differential mismatch (seed 42, fail_at 7) at op 3 (set 2 3 4 act 5): value 5 destroyed twice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_mismatch_is_reported_not_aborted),
        cmocka_unit_test(test_seeded_sequences_agree_with_model),
        cmocka_unit_test(test_corpus_inputs_agree_with_model),
    };
    fz_mismatch_hook = report_mismatch;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
