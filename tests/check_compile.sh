#!/bin/sh
# Compile the header's API part and implementation part with every compiler
# we promise, in strict mode, and fail on any diagnostic at all.
# Usage: tests/check_compile.sh OUTDIR "STB_CFLAGS"
out="$1"; stb="$2"
mkdir -p "$out"
printf '#include "mguard.h"\nint main(void) { return mguard_ctx_get_stats(0, 0) != MGUARD_EINVAL; }\n' > "$out/api.c"
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\nint main(void) { return 0; }\n' > "$out/impl.c"
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#define MGUARD_STATIC\n#include "mguard.h"\nint main(void) { mguard_ctx *c = mguard_ctx_create(0); mguard_ctx_destroy(c); return 0; }\n' > "$out/static.c"
printf '#define STBDS_NO_SHORT_NAMES\n#include "stb_ds.h"\n#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\nint main(void) { return 0; }\n' > "$out/noshort.c"
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#define MGUARD_DEBUG\n#include "mguard.h"\nint main(void) { mguard_ctx *c = mguard_ctx_create(0); mguard_ctx_destroy(c); return 0; }\n' > "$out/debug.c"
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#define MGUARD_NO_PTHREADS\n#include "mguard.h"\nint main(void) { mguard_ctx_desc d; memset(&d, 0, sizeof d); d.thread_safe = 1; d.quiet = 1; return mguard_ctx_create(&d) != 0; }\n' > "$out/nopthreads.c"
fail=0
# Every (compiler, file) pair runs as its own job, two at a time per core
# pair. C99 with gcc and clang is checked below, under the strict flags
# (a superset of -Wall -Wextra -Wpedantic); here C11 with gcc, and C++11
# with g++ for every option variant and clang++ for the implementation with
# and without MGUARD_DEBUG (-fsyntax-only: C++ validity needs no object
# code, and gcc's C build reports unused statics; clang++ warns of what g++
# does not, e.g. an enum as va_start's parameter).
n=0
for cc in "gcc -std=c11" "g++ -x c++ -std=c++11" "clang++ -x c++ -std=c++11"; do
    command -v ${cc%% *} >/dev/null 2>&1 || { echo "check-compile: ${cc%% *} not installed, skipped"; continue; }
    files="api impl"
    mode="-c"
    case "$cc" in
        g++*) files="api impl static noshort debug nopthreads"; mode="-fsyntax-only" ;;
        clang++*) files="impl debug"; mode="-fsyntax-only" ;;   # what g++ covers, but the warnings only clang has
    esac
    for f in $files; do
        n=$((n + 1))
        ( if [ "$mode" = -c ]; then msg=$($cc -Wall -Wextra -Wpedantic -I. $stb -c "$out/$f.c" -o "$out/$f.$n.o" 2>&1)
          else msg=$($cc -Wall -Wextra -Wpedantic -I. $stb -fsyntax-only "$out/$f.c" 2>&1); fi
          if [ $? -ne 0 ] || [ -n "$msg" ]; then
              printf "check-compile: '%s' on %s.c:\n%s\n" "$cc" "$f" "$msg" > "$out/job$n.fail"
          fi ) &
        [ $((n % 4)) = 0 ] && wait
    done
done
# The strict flags of the trees the header is copied into (-Wconversion,
# -Wcast-qual, ...), stb_ds.h found by a plain -I as in such a tree (its
# warnings, of its implementation too, are silenced around mguard's include
# of it): the API and implementation parts with gcc and clang, and as a
# 32-bit build where gcc-multilib is installed.
strict="-Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Wcast-qual -Wstrict-prototypes -Wmissing-prototypes"
m32=""
printf 'int main(void) { return 0; }\n' > "$out/m32.c"
gcc -m32 "$out/m32.c" -o "$out/m32" >/dev/null 2>&1 && m32="-m32"
for cc in "gcc -std=c99" "clang -std=c99" ${m32:+"gcc -std=c99 -m32"}; do
    command -v ${cc%% *} >/dev/null 2>&1 || { echo "check-compile: ${cc%% *} not installed, strict check skipped"; continue; }
    files="api impl"
    # the option variants once, with gcc (each costs a full compile)
    [ "$cc" = "gcc -std=c99" ] && files="api impl static noshort debug nopthreads"
    for f in $files; do
        n=$((n + 1))
        ( msg=$($cc $strict -I. $stb -c "$out/$f.c" -o "$out/$f.$n.o" 2>&1)
          if [ $? -ne 0 ] || [ -n "$msg" ]; then
              printf "check-compile: '%s' (strict flags) on %s.c:\n%s\n" "$cc" "$f" "$msg" > "$out/job$n.fail"
          fi ) &
        [ $((n % 4)) = 0 ] && wait
    done
done
wait
for r in "$out"/job*.fail; do
    [ -f "$r" ] || continue
    cat "$r"; rm -f "$r"; fail=1
done
# Link $2 (strict flags, gcc) from the remaining arguments, and run it if
# $1 is "run"; any message fails.
link_strict() {
    run=$1; name=$2; shift 2
    msg=$(gcc -std=c99 $strict -I. $stb "$@" -o "$out/$name" 2>&1)
    if [ $? -ne 0 ] || [ -n "$msg" ]; then
        printf "check-compile: %s (strict flags):\n%s\n" "$name" "$msg"; fail=1; return 1
    fi
    [ "$run" = run ] || return 0
    "$out/$name" || { echo "check-compile: $name failed"; fail=1; return 1; }
}
# Two private copies (MGUARD_STATIC) in one program, as the README says:
# STB_DS_IMPLEMENTATION in one file of the program only.
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_STATIC\n#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\nint copy_a(void);\nint copy_a(void) { mguard_ctx *c = mguard_ctx_create(0); int ok = c != 0 && mguard_intern(c, "a") != 0; mguard_ctx_destroy(c); return ok; }\n' > "$out/copy_a.c"
printf '#define MGUARD_STATIC\n#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\nint copy_a(void);\nint main(void) { mguard_ctx *c = mguard_ctx_create(0); int ok = c != 0 && mguard_intern(c, "b") != 0; mguard_ctx_destroy(c); return !(ok && copy_a()); }\n' > "$out/copy_b.c"
link_strict run two_static_copies "$out/copy_a.c" "$out/copy_b.c" > "$out/static2.msg" &
# MGUARDDEF set by the program: a shared library built with hidden
# visibility exports mguard's functions (and only through MGUARDDEF).
if link_strict no mguarddef.so -shared -fPIC -fvisibility=hidden \
    '-DMGUARDDEF=extern __attribute__((visibility("default")))' "$out/impl.c"; then
    syms=$(nm -D --defined-only "$out/mguarddef.so" 2>&1)
    case "$syms" in
        *" T mguard_ctx_create"*) ;;
        *) echo "check-compile: -DMGUARDDEF=...visibility(\"default\"): mguard_ctx_create not exported"; fail=1 ;;
    esac
fi
if command -v g++ >/dev/null 2>&1; then
    msg=$(g++ -std=c++11 -Wall -Wextra -Wpedantic -I. $stb tests/cxx_smoke.cc -o "$out/cxx_smoke" 2>&1)
    if [ $? -ne 0 ] || [ -n "$msg" ]; then echo "check-compile: tests/cxx_smoke.cc:"; echo "$msg"; fail=1
    else "$out/cxx_smoke" || fail=1; fi
fi
wait   # the two private copies, built beside the rest
if [ -s "$out/static2.msg" ]; then cat "$out/static2.msg"; fail=1; fi
[ $fail = 0 ] && echo "check-compile: header clean with gcc/clang C99, C11 and C++11, and under strict flags${m32:+ (64- and 32-bit)}"
exit $fail
