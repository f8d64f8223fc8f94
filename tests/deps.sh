#!/bin/sh
# Make sure the Debian packages the build needs are present: install them
# with apt-get when we can (root), otherwise print the exact command.
# Usage: tests/deps.sh stb cmocka valgrind clang ...
pkgs=""
for dep in "$@"; do
    case "$dep" in
    stb)      test -f /usr/include/stb/stb_ds.h || pkgs="$pkgs libstb-dev" ;;
    cmocka)   test -f /usr/include/cmocka.h || pkgs="$pkgs libcmocka-dev" ;;
    valgrind) command -v valgrind >/dev/null 2>&1 || pkgs="$pkgs valgrind" ;;
    clang)    command -v clang >/dev/null 2>&1 || pkgs="$pkgs clang" ;;
    pkgconf)  command -v pkg-config >/dev/null 2>&1 || pkgs="$pkgs pkg-config" ;;
    lua)      test -f /usr/include/lua5.4/lua.h || pkgs="$pkgs liblua5.4-dev" ;;
    cmake)    command -v cmake >/dev/null 2>&1 || pkgs="$pkgs cmake" ;;
    *)        pkgs="$pkgs $dep" ;;
    esac
done
[ -z "$pkgs" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing:$pkgs"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -q $pkgs || { apt-get update -q && apt-get install -y -q $pkgs; }; } >/dev/null || {
        echo "apt-get could not install:$pkgs" >&2; exit 1; }
    exit 0
fi
echo "missing packages:$pkgs" >&2
echo "install them with:  sudo apt-get install -y$pkgs" >&2
exit 1
