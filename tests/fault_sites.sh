#!/bin/sh
# make fault-sites: list every place in mguard.h that allocates (the
# allocator calls and the calls of the growth helpers), by section, with
# how often the workloads of tests/test_faults.c reach it. test_faults
# fails every allocation of its workloads in turn, so a site reached there
# is a site whose failure was survived. Exits 1 when a site of a required
# section is never reached. Required: FAULT_SECTIONS (default every
# section, "1 2 3 4 5 6 7 8 9 10").
# Usage: tests/fault_sites.sh OUTDIR "STB_CFLAGS"
out="$1"; stb="$2"
mkdir -p "$out"
rm -f "$out"/*.gcda "$out"/*.gcov
# One coverage object for the implementation, linked into every workload,
# so the counts add up: test_faults (the core), and the allocation-failure
# tests of sections 7-9 and 11, selected by name (each fails every allocation of
# its workload in turn, like test_faults).
gcc -std=c99 -O0 -g --coverage -I. -Itests $stb -c tests/mguard_impl.c -o "$out/mguard_impl.o" || exit 1
for t in test_faults test_scope test_dynamism test_ledger test_threads; do
    gcc -std=c99 -O0 -g --coverage -I. -Itests $stb tests/$t.c "$out/mguard_impl.o" -o "$out/$t" -lcmocka -pthread || exit 1
done
"$out/test_faults" >/dev/null 2>&1 || { echo "fault-sites: test_faults failed"; exit 1; }
for t in test_scope test_dynamism test_ledger test_threads; do
    for pattern in "*allocation_failure*" "*out_of_memory*"; do
        MGUARD_TEST_FILTER="$pattern" "$out/$t" >/dev/null 2>&1 || { echo "fault-sites: $t ($pattern) failed"; exit 1; }
    done
done
gcov -o "$out" "$out/mguard_impl.gcda" >/dev/null 2>&1 || exit 1
mv -f ./*.gcov "$out/" 2>/dev/null
[ -f "$out/mguard.h.gcov" ] || { echo "fault-sites: no coverage for mguard.h"; exit 1; }
awk -v required="${FAULT_SECTIONS:-1 2 3 4 5 6 7 8 9 10}" '
    BEGIN { n = split(required, r, " "); for (i = 1; i <= n; i++) req[r[i]] = 1; req[0] = 1; sec = 0 }
    {
        count = $0; sub(/:.*/, "", count); gsub(/ /, "", count)
        rest = $0; sub(/^[^:]*:/, "", rest)
        line = rest; sub(/:.*/, "", line); gsub(/ /, "", line)
        code = rest; sub(/^[^:]*:/, "", code)
    }
    # implementation banners: "---- N. name" starts section N; the handle
    # checks (MGUARD_DEBUG) belong to the core
    code ~ /^\/\* ---- [0-9]+\. / { s = code; sub(/^\/\* ---- /, "", s); sub(/\..*/, "", s); sec = s + 0 }
    code ~ /^\/\* ---- handle checks/ { sec = 0 }
    code ~ /mguard__alloc\(ctx|mguard__realloc\(ctx|realloc_fn\(NULL|mguard__reserve\(ctx|mguard__ix_reserve\(ctx/ {
        c = code; gsub(/^ +/, "", c)
        if (c ~ /^static /) next                    # the helpers themselves
        if (count == "-") { debug_only++; next }     # compiled out (MGUARD_DEBUG)
        if (sec in req) {
            core++
            if (count == "#####") { missed++; printf("  NOT REACHED  line %5d  (section %d)  %s\n", line, sec, c) }
            else printf("  %10s  line %5d  (section %d)  %s\n", count, line, sec, c)
        } else {
            other++
            if (count != "#####") other_hit++
            else later = later sprintf("  not yet     line %5d  (section %d)  %s\n", line, sec, c)
        }
    }
    END {
        printf("%s", later)
        printf("fault-sites: sections %s: %d allocating sites, %d reached by the fault-injection workloads",
               required, core, core - missed)
        if (debug_only) printf(" (%d more only in MGUARD_DEBUG builds)", debug_only)
        printf("\n")
        if (other) printf("fault-sites: other sections: %d allocating sites, %d reached (not required yet)\n", other, other_hit)
        exit missed ? 1 : 0
    }' "$out/mguard.h.gcov"
