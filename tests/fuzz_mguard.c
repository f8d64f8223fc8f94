/* libFuzzer target: each input is a program for the differential decoder
   (tests/fuzz_decoder.h: a 2-byte header, then 5-byte operations). mguard
   and the reference model run it in lockstep; the first difference in a
   result, a callback, a destructor count or the state aborts with a
   report, and so does anything ASan or UBSan sees. Header bit 6 makes one
   of mguard's allocations fail.
   Build and run: make fuzz [FUZZ_SECONDS=60]. Replay one input:
       build/fuzz/fuzz_mguard FILE      (FZ_VERBOSE=1 prints every event) */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#define MGUARD__HUB_AFTER 2   /* a cache's objects shared by 3 entries get hubs */
#include "mguard.h"
#include "introspect.h"
#include "fuzz_decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_run_input(data, size, "fuzz input", NULL);
    return 0;
}
