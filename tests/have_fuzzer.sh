#!/bin/sh
# Exit 0 when clang can build a libFuzzer target (clang and its fuzzer
# runtime, Debian libclang-rt-14-dev, are installed), 1 otherwise.
command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1 || exit 1
dir=$(mktemp -d) || exit 1
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$dir/t.c"
"${FUZZ_CC:-clang}" -fsanitize=fuzzer "$dir/t.c" -o "$dir/t" >/dev/null 2>&1
ok=$?
rm -rf "$dir"
exit $ok
