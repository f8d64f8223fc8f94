#!/bin/sh
# The optional sections: MGUARD_NO_SCOPE, MGUARD_NO_DYN, MGUARD_NO_LEDGER,
# MGUARD_NO_CACHE in every combination (16), each compiled strictly (C99 with gcc and clang
# under the strict flags of the trees the header is copied into, C++11 with
# g++; MGUARD_DEBUG with all sections and with none), linked with a program that uses the core,
# and run. A removed section leaves no symbol behind (nm), and its API is
# gone (a program calling it does not compile).
# Usage: tests/check_parts.sh OUTDIR "STB_CFLAGS"
#        tests/check_parts.sh --sizes OUTDIR "STB_CFLAGS"   (the table of docs/design.md)
sizes=0
[ "$1" = --sizes ] && { sizes=1; shift; }
out="$1"; stb="$2"
mkdir -p "$out"
sys_stb=$(printf '%s' "$stb" | sed 's/-I/-isystem /g')
strict="-Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Wcast-qual -Wstrict-prototypes -Wmissing-prototypes -Werror"
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\n' > "$out/impl.c"
printf '#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\n' > "$out/impl_only.c"
cat > "$out/core.c" <<'PROG'
#include <stdio.h>
#include <string.h>
#include "mguard.h"
int main(void)
{
    mguard_ctx *ctx = mguard_ctx_create(NULL);
    mguard_weak_desc d;
    mguard_weak *t;
    int key = 1;
    long v = 42;
    mguard_ref r;
    memset(&d, 0, sizeof d);
    d.value_size = sizeof v;
    t = mguard_weak_create(ctx, &d);
    r = mguard_ref_make(ctx, &key);
    if (mguard_weak_set(t, &key, &v) != MGUARD_OK) return 1;
    mguard_on_destroy(ctx, &key);
    printf("%lu %d\n", (unsigned long)mguard_weak_count(t), mguard_ref_get(ctx, r) == NULL);
    mguard_ctx_destroy(ctx);
    return 0;
}
PROG
printf '#include "mguard.h"\nint main(void) { return mguard_scope_create(0, 0) != 0; }\n' > "$out/use_scope.c"
printf '#include "mguard.h"\nint main(void) { return mguard_dyn_create(0) != 0; }\n' > "$out/use_dyn.c"
printf '#include "mguard.h"\nint main(void) { return mguard_ledger_create(0, 0) != 0; }\n' > "$out/use_ledger.c"
printf '#include "mguard.h"\nint main(void) { return mguard_cache_create(0, 0) != 0; }\n' > "$out/use_cache.c"
# lines of mguard.h inside each #ifndef MGUARD_NO_X ... its own #endif
part_lines() {
    awk -v P="MGUARD_NO_$1" '/^#[ \t]*if/ { d++; if ($0 == "#ifndef " P && !on) on = d }
        on { n++ } /^#[ \t]*endif/ { if (on == d) on = 0; d-- } END { print n + 0 }' mguard.h
}
if [ $sizes = 1 ]; then
    total=$(wc -l < mguard.h)
    l1=$(part_lines SCOPE); l2=$(part_lines DYN); l4=$(part_lines LEDGER); l8=$(part_lines CACHE)
    echo "| sections left out | lines of mguard.h | object code (.text, gcc -O2) | compile time (gcc -O2) | vs all |"
    echo "| --- | --- | --- | --- | --- |"
fi
# one CC MASK DEFS DEBUG PREFIX: build and check one variant; prints only failures
one() {
    cc="$1"; mask="$2"; defs="$3"; dbg="$4"; o="$5"
    if [ "${cc%% *}" != gcc ]; then
        # clang and g++: the diagnostics (clang's -fsyntax-only reports unused
        # statics too; C++ validity needs no object code); gcc builds and runs
        for f in impl core; do
            if ! msg=$($cc -I. $sys_stb $defs $dbg -fsyntax-only "$out/$f.c" 2>&1) || [ -n "$msg" ]; then
                printf 'check-parts: %s%s %s on %s.c:\n%s\n' "${cc%% -W*}" "$defs" "$dbg" "$f" "$msg"
            fi
        done
        return
    fi
    if ! msg=$($cc -I. $sys_stb $defs $dbg -c "$out/impl.c" -o "$o.impl.o" 2>&1) || [ -n "$msg" ]; then
        printf 'check-parts: %s%s %s:\n%s\n' "${cc%% -W*}" "$defs" "$dbg" "$msg"; return
    fi
    if ! msg=$($cc -I. $sys_stb $defs -c "$out/core.c" -o "$o.core.o" 2>&1) || [ -n "$msg" ] ||
       ! ${cc%% *} "$o.impl.o" "$o.core.o" -o "$o.bin" -pthread 2>&1; then
        printf 'check-parts: %s%s: the core program does not build:\n%s\n' "${cc%% -W*}" "$defs" "$msg"; return
    fi
    res=$("$o.bin")
    [ "$res" = "0 1" ] || echo "check-parts:$defs $dbg: the core program printed '$res', not '0 1'"
    for part in scope dyn ledger cache; do
        case "$part" in scope) off=$((mask & 1));; dyn) off=$((mask & 2));; ledger) off=$((mask & 4));; *) off=$((mask & 8));; esac
        k=$(nm "$o.impl.o" | grep -c " T mguard_${part}_")
        if [ "$off" != 0 ]; then
            [ "$k" = 0 ] || echo "check-parts:$defs: $k mguard_${part}_ symbols left"
            if $cc -I. $sys_stb $defs -fsyntax-only "$out/use_$part.c" 2>/dev/null; then
                echo "check-parts:$defs: a program calling the $part API still compiles"
            fi
        else
            [ "$k" -gt 0 ] || echo "check-parts:$defs: no mguard_${part}_ symbol"
        fi
    done
}
fail=0
n=0
for mask in $(seq 0 15); do
    defs=""; name=""
    [ $((mask & 1)) != 0 ] && { defs="$defs -DMGUARD_NO_SCOPE"; name="$name NO_SCOPE"; }
    [ $((mask & 2)) != 0 ] && { defs="$defs -DMGUARD_NO_DYN"; name="$name NO_DYN"; }
    [ $((mask & 4)) != 0 ] && { defs="$defs -DMGUARD_NO_LEDGER"; name="$name NO_LEDGER"; }
    [ $((mask & 8)) != 0 ] && { defs="$defs -DMGUARD_NO_CACHE"; name="$name NO_CACHE"; }
    [ -z "$name" ] && name=" none (the full header)"
    if [ $sizes = 1 ]; then
        t0=$(date +%s%N)
        for i in 1 2 3; do gcc -std=c99 -O2 -I. $sys_stb $defs -c "$out/impl_only.c" -o "$out/size.o"; done
        t1=$(date +%s%N)
        text=$(size "$out/size.o" | awk 'NR == 2 { print $1 }')
        ms=$(( (t1 - t0) / 3000000 ))
        [ $mask = 0 ] && { all_ms=$ms; all_text=$text; }
        lines=$((total - (mask & 1) * l1 - (mask >> 1 & 1) * l2 - (mask >> 2 & 1) * l4 - (mask >> 3 & 1) * l8))
        echo "|$name | $lines | $((text / 1024)) KB ($((100 * text / all_text))%) | $ms ms | $((100 * ms / all_ms))% |"
        continue
    fi
    for cc in "gcc -std=c99 $strict" "clang -std=c99 $strict" "g++ -x c++ -std=c++11 -Wall -Wextra -Wpedantic -Werror"; do
        command -v ${cc%% *} >/dev/null 2>&1 || continue
        for dbg in "" "-DMGUARD_DEBUG"; do
            # MGUARD_DEBUG with gcc only, with no add-on section (each variant
            # is a full compile; make test stays fast). With every section,
            # clang, g++ and MGUARD_DEBUG are check_compile.sh's part.
            [ -n "$dbg" ] && { [ "${cc%% *}" != gcc ] || [ $mask != 15 ]; } && continue
            [ $mask = 0 ] && [ "${cc%% *}" != gcc ] && continue
            n=$((n + 1))
            one "$cc" "$mask" "$defs" "$dbg" "$out/j$n" > "$out/j$n.log" 2>&1 &
            [ $((n % 4)) = 0 ] && wait
        done
    done
done
wait
for f in "$out"/j*.log; do
    [ -s "$f" ] && { cat "$f"; fail=1; }
done
[ $sizes = 1 ] && exit 0
[ $fail = 0 ] && echo "check-parts: MGUARD_NO_SCOPE/NO_DYN/NO_LEDGER/NO_CACHE in all 16 combinations compile strictly (gcc, clang, g++; MGUARD_DEBUG with the core alone; the full header's own checks are check_compile.sh's), run, and leave nothing of a removed section"
exit $fail
