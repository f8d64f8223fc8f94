/* bench_threads_base.c - the mguard loops of bench_threads.c calling the
   unlocked bodies directly: mguard_x's body is the static mguard__x, so
   with the implementation in this file (MGUARD_STATIC, linked beside the
   other copy) the loops below skip the public function's lock test. That
   is the library as it was before thread-safe contexts, in the same
   binary. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define STBDS_NO_SHORT_NAMES
#define MGUARD_STATIC
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#define mguard_weak_get mguard__weak_get
#define mguard_weak_get_copy mguard__weak_get_copy
#define mguard_weak_set mguard__weak_set
#define mguard_ref_get mguard__ref_get
#define mguard_ref_get_retained mguard__ref_get_retained
#define mguard_on_mutation_at mguard__on_mutation_at
#define BENCH_OPS bench_ops_base
#include "bench_threads_ops.h"
