#!/bin/sh
# Builds a tiny program that uses mguard.h, in a temporary folder, every way
# docs/install.md offers, and runs it each time:
#   1. copied into the tree (mguard.h and stb_ds.h next to the program,
#      a strict tree's flags);
#   2. through pkg-config after `make install DESTDIR=...`, once compiling
#      stb_ds's implementation and once linking Debian's -lstb instead;
#   3. through CMake: find_package(mguard CONFIG) on that install (stb_ds's
#      implementation from the libstb the target links, as pkg-config's
#      --libs), and add_subdirectory() on the source tree with
#      MGUARD_STB_DS_DIR set (the consumer compiles stb_ds itself);
# and checks that `cmake --install` writes the same files as `make install`
# and that `make uninstall` removes them all. The CMake parts are skipped
# (with a message) when cmake is not installed.
# Usage (from the repository root): sh tests/test_packaging.sh
set -u
root=$(pwd)
CC=${CC:-cc}
MAKE=${MAKE:-make}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mguard-packaging.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
log="$tmp/log"
strict="-std=c99 -Wall -Wextra -Wpedantic -Werror"
# the flags of a strict tree mguard.h is copied into (tests/check_compile.sh)
tree_strict="$strict -Wconversion -Wsign-conversion -Wshadow -Wcast-qual -Wstrict-prototypes -Wmissing-prototypes"
version=$(sed -n 's/.*MGUARD_VERSION_STRING "\(.*\)"/\1/p' mguard.h)
expected="consumer: mguard $version: 1 value destroyed with its key, 0 entries left"
nways=0

fail() {
    echo "test_packaging: FAIL: $*"
    [ -s "$log" ] && sed 's/^/    /' "$log"
    exit 1
}

# Run the consumer binary $1 and compare its one line of output.
check_run() {
    out=$("$1" 2>&1) || fail "$2: the consumer exited with an error: $out"
    [ "$out" = "$expected" ] || fail "$2: the consumer printed '$out', expected '$expected'"
    nways=$((nways + 1))
}

# ---- the consumer: main.c uses the API, impl.c holds the implementation --
mkdir -p "$tmp/src"
cat > "$tmp/src/main.c" <<'EOF'
#include <stdio.h>
#include "mguard.h"

typedef struct thing { int value; } thing;

static void count_destroyed(void *value, void *user)
{
    (void)value;
    ++*(int *)user;
}

int main(void)
{
    mguard_ctx *ctx = mguard_ctx_create(NULL);
    mguard_weak_desc desc = {0};
    mguard_weak *cache;
    thing a = {42};
    int cached = 84, destroyed = 0;
    size_t left;
    if (!ctx) return 1;
    desc.value_size = sizeof cached;
    desc.value_dtor = count_destroyed;
    desc.user = &destroyed;
    cache = mguard_weak_create(ctx, &desc);
    if (!cache || mguard_weak_set(cache, &a, &cached) != MGUARD_OK) return 2;
    mguard_on_destroy(ctx, &a);   /* a's destructor would call this */
    left = mguard_weak_count(cache);
    printf("consumer: mguard %s: %d value destroyed with its key, %lu entries left\n",
           MGUARD_VERSION_STRING, destroyed, (unsigned long)left);
    mguard_ctx_destroy(ctx);
    return destroyed == 1 && left == 0 ? 0 : 3;
}
EOF
cat > "$tmp/src/impl.c" <<'EOF'
/* The one file that compiles mguard's implementation. A program that links
   Debian's libstb (-lstb) does not compile stb_ds's own implementation. */
#ifndef CONSUMER_LINKS_LIBSTB
#define STB_DS_IMPLEMENTATION
#endif
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
EOF

# ---- 1. copied into the tree --------------------------------------------
stb_dir=$(pkg-config --variable=includedir stb 2>/dev/null)
[ -f "$stb_dir/stb_ds.h" ] || stb_dir=/usr/include/stb
[ -f "$stb_dir/stb_ds.h" ] || fail "stb_ds.h not found (install libstb-dev)"
mkdir -p "$tmp/copy"
cp "$tmp/src/main.c" "$tmp/src/impl.c" mguard.h "$stb_dir/stb_ds.h" "$tmp/copy/"
(cd "$tmp/copy" && $CC $tree_strict -I. main.c impl.c -o consumer) > "$log" 2>&1 \
    || fail "copied into the tree: the build failed"
check_run "$tmp/copy/consumer" "copied into the tree"

# ---- 2. make install DESTDIR=... then pkg-config ------------------------
# The prefix is a folder that does not exist yet: everything must land under
# DESTDIR. A link then puts the staged tree where the prefix says, as a
# package manager would.
prefix="$tmp/prefix"
stage="$tmp/stage"
$MAKE -s -C "$root" install PREFIX="$prefix" DESTDIR="$stage" > "$log" 2>&1 || fail "make install failed"
[ -e "$prefix" ] && fail "make install wrote outside DESTDIR"
for f in include/mguard.h share/pkgconfig/mguard.pc share/cmake/mguard/mguardConfig.cmake \
         share/cmake/mguard/mguardConfigVersion.cmake share/cmake/mguard/mguard-stb.cmake; do
    [ -f "$stage$prefix/$f" ] || fail "make install did not install $f"
done
ln -s "$stage$prefix" "$prefix"
PKG_CONFIG_PATH="$prefix/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
got=$(pkg-config --modversion mguard 2>"$log") || fail "pkg-config does not find the installed mguard.pc"
[ "$got" = "$version" ] || fail "pkg-config --modversion mguard says '$got', the header says '$version'"
cflags=$(pkg-config --cflags mguard)
case " $cflags " in *" -I$prefix/include "*) ;; *) fail "pkg-config --cflags mguard lacks -I$prefix/include: $cflags" ;; esac
stb_cflags=$(pkg-config --cflags stb)
case " $cflags " in *" $stb_cflags "*) ;; *) fail "pkg-config --cflags mguard lacks stb's $stb_cflags: $cflags" ;; esac
mkdir -p "$tmp/pc"
(cd "$tmp/pc" && $CC $strict $cflags "$tmp/src/main.c" "$tmp/src/impl.c" -o consumer) > "$log" 2>&1 \
    || fail "pkg-config --cflags mguard: the build failed"
check_run "$tmp/pc/consumer" "pkg-config, stb_ds compiled in"
(cd "$tmp/pc" && $CC $strict -DCONSUMER_LINKS_LIBSTB $cflags "$tmp/src/main.c" "$tmp/src/impl.c" \
    -o consumer-libstb $(pkg-config --libs mguard)) > "$log" 2>&1 \
    || fail "pkg-config --cflags --libs mguard (-lstb): the build failed"
check_run "$tmp/pc/consumer-libstb" "pkg-config, Debian's -lstb"

# ---- 3. CMake -------------------------------------------------------------
if command -v cmake >/dev/null 2>&1; then
    mkdir -p "$tmp/cm-find" "$tmp/cm-sub" "$tmp/vendored-stb"
    cat > "$tmp/cm-find/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.10)
project(consumer C)
find_package(mguard 99 CONFIG QUIET)
if(mguard_FOUND)
  message(FATAL_ERROR "find_package(mguard 99) accepted version \${mguard_VERSION}")
endif()
find_package(mguard $version CONFIG REQUIRED)
add_executable(consumer "$tmp/src/main.c" "$tmp/src/impl.c")
target_compile_definitions(consumer PRIVATE CONSUMER_LINKS_LIBSTB)
target_link_libraries(consumer PRIVATE mguard::mguard)
EOF
    cat > "$tmp/cm-sub/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.10)
project(consumer C)
add_subdirectory("$root" mguard)
add_executable(consumer "$tmp/src/main.c" "$tmp/src/impl.c")
target_link_libraries(consumer PRIVATE mguard::mguard)
EOF
    cp "$stb_dir/stb_ds.h" "$tmp/vendored-stb/"
    cmflags="-DCMAKE_C_FLAGS=$strict -DCMAKE_BUILD_TYPE="
    # The two consumers configure at the same time: compiler detection is
    # most of the cost.
    (cmake -S "$tmp/cm-find" -B "$tmp/cm-find/b" "$cmflags" -DCMAKE_PREFIX_PATH="$prefix" \
        && cmake --build "$tmp/cm-find/b") > "$tmp/log-find" 2>&1 &
    pid_find=$!
    (cmake -S "$tmp/cm-sub" -B "$tmp/cm-sub/b" "$cmflags" -DMGUARD_STB_DS_DIR="$tmp/vendored-stb" \
        && cmake --build "$tmp/cm-sub/b") > "$tmp/log-sub" 2>&1 &
    pid_sub=$!
    wait $pid_find; rc_find=$?
    wait $pid_sub; rc_sub=$?
    cp "$tmp/log-find" "$log"
    [ $rc_find = 0 ] || fail "CMake find_package(mguard CONFIG), no STB_DS_IMPLEMENTATION: the build failed"
    check_run "$tmp/cm-find/b/consumer" "CMake find_package"
    cp "$tmp/log-sub" "$log"
    [ $rc_sub = 0 ] || fail "CMake add_subdirectory: the build failed"
    grep -q -- "-I$tmp/vendored-stb" "$tmp/cm-sub/b/CMakeFiles/consumer.dir/flags.make" \
        || fail "add_subdirectory did not compile with MGUARD_STB_DS_DIR's stb_ds.h"
    check_run "$tmp/cm-sub/b/consumer" "CMake add_subdirectory"

    # cmake --install must write exactly what make install wrote.
    (cmake -S "$root" -B "$tmp/cm-inst" && DESTDIR="$tmp/cm-stage" cmake --install "$tmp/cm-inst" \
        --prefix "$prefix") > "$log" 2>&1 || fail "cmake --install failed"
    diff -r "$stage$prefix" "$tmp/cm-stage$prefix" > "$log" 2>&1 \
        || fail "cmake --install and make install wrote different files"
    cmake_note="CMake find_package and add_subdirectory"
else
    cmake_note="CMake skipped: cmake is not installed (apt-get install cmake)"
fi

# ---- make uninstall ---------------------------------------------------------
$MAKE -s -C "$root" uninstall PREFIX="$prefix" DESTDIR="$stage" > "$log" 2>&1 || fail "make uninstall failed"
left=$(find "$stage" -type f)
[ -z "$left" ] || fail "make uninstall left files behind: $left"

echo "test_packaging: $nways consumer builds ran (copied into the tree, pkg-config x2, $cmake_note); install/uninstall clean"
