/* bench_threads_base.c - the mguard loops of bench_threads.c against the
   implementation built without the lock layer (MGUARD__NO_LOCK_LAYER): the
   library as it was before thread-safe contexts, in the same binary. Its
   functions are static (MGUARD_STATIC), so it links beside the other copy. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define STBDS_NO_SHORT_NAMES
#define MGUARD__NO_LOCK_LAYER
#define MGUARD_STATIC
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#define BENCH_OPS bench_ops_base
#include "bench_threads_ops.h"
