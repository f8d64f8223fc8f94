#!/bin/sh
# make lint: cppcheck and clang-tidy (.clang-tidy) on mguard.h, in the
# plain, MGUARD_DEBUG and MGUARD_STATIC configurations. Clean means no
# finding at all; the script prints them and exits 1 otherwise.
# Usage: tests/lint.sh OUTDIR "STB_CFLAGS"
out="$1"; stb="$2"; fail=0
mkdir -p "$out"
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\n' > "$out/impl.c"
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#define MGUARD_DEBUG\n#include "mguard.h"\n' > "$out/debug.c"
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#define MGUARD_STATIC\n#include "mguard.h"\n' > "$out/static.c"

# cppcheck reads mguard.h only (stb_ds.h is not on its include path).
# variableScope is left out: the project declares a function's locals at
# its top on purpose (docs/STYLE); it is a preference, not a defect.
# toomanyconfigs is information, not a finding: the header's compiler
# checks (typeof for MGUARD_SET_FIELD, pthreads, C++) make more #ifdef
# combinations than cppcheck's default 12, and it checks 12.
for f in impl debug static; do
    msg=$(cppcheck --std=c99 --enable=warning,style,performance,portability --inline-suppr --quiet \
          --error-exitcode=1 --suppress=missingIncludeSystem --suppress=variableScope --suppress=toomanyconfigs -I. "$out/$f.c" 2>&1) || fail=1
    if [ -n "$msg" ]; then echo "cppcheck ($f):"; echo "$msg"; fail=1; fi
done

# clang-tidy: findings in mguard.h only (HeaderFilterRegex), all errors.
for f in impl debug static; do
    msg=$(clang-tidy --quiet --config-file=.clang-tidy "$out/$f.c" -- -std=c99 -I. $stb 2>&1 |
          grep -v -e 'warnings* generated' -e '^Suppressed ' -e 'Use -header-filter') || true
    if [ -n "$msg" ]; then echo "clang-tidy ($f):"; echo "$msg"; fail=1; fi
done
[ $fail = 0 ] && echo "lint: cppcheck and clang-tidy report nothing on mguard.h"
exit $fail
