#!/bin/sh
# make fault-sites: list every place in mguard.h that allocates (the
# allocator calls and the calls of the two growth helpers) with how often
# the workloads of tests/test_faults.c reach it. test_faults fails every
# allocation of its workloads in turn, so a site reached there is a site
# whose failure was survived. Exits 1 when a site is never reached.
# Usage: tests/fault_sites.sh OUTDIR "STB_CFLAGS"
out="$1"; stb="$2"
mkdir -p "$out"
rm -f "$out"/*.gcda "$out"/*.gcov
gcc -std=c99 -O0 -g --coverage -I. -Itests $stb tests/mguard_impl.c tests/test_faults.c \
    -o "$out/test_faults" -lcmocka || exit 1
"$out/test_faults" >/dev/null 2>&1 || { echo "fault-sites: test_faults failed"; exit 1; }
gcov -o "$out" "$out/test_faults-mguard_impl.gcda" >/dev/null 2>&1 || exit 1
mv -f ./*.gcov "$out/" 2>/dev/null
[ -f "$out/mguard.h.gcov" ] || { echo "fault-sites: no coverage for mguard.h"; exit 1; }
awk '
    # lines that allocate: the allocator itself and the growth helpers
    /mguard__alloc\(ctx|mguard__realloc\(ctx|realloc_fn\(NULL|mguard__reserve\(ctx|mguard__ix_reserve\(ctx/ {
        split($0, f, ":"); count = f[1]; line = f[2]; code = $0
        sub(/^[^:]*:[^:]*:/, "", code); gsub(/^ +/, "", code)
        gsub(/ /, "", count); gsub(/ /, "", line)
        if (code ~ /^static /) next            # the helpers definitions
        if (count == "-") { skipped++; next }  # compiled out (MGUARD_DEBUG)
        sites++
        if (count == "#####") { missed++; printf("  NOT REACHED  line %5d  %s\n", line, code) }
        else printf("  %10s  line %5d  %s\n", count, line, code)
    }
    END {
        printf("fault-sites: %d allocating sites in mguard.h, %d reached by the fault-injection workloads", sites, sites - missed)
        if (skipped) printf(" (%d more only in MGUARD_DEBUG builds)", skipped)
        printf("\n")
        exit missed ? 1 : 0
    }' "$out/mguard.h.gcov"
