#!/bin/sh
# Runs examples/lua_guard (a Lua 5.4 host whose userdata are mguard keys)
# and checks its counts exactly against what examples/lua_guard.lua did:
# with 5000 points, in both of Lua's collector modes, the numbers below are
# the script's arithmetic (docs/guide-lua.md derives them); with an odd
# count the example's own comparison with the script's ledger must pass.
# Usage (from the repository root): sh tests/test_lua_guard.sh BUILD/ex_lua_guard
set -u
bin=${1:?usage: test_lua_guard.sh PATH_TO_ex_lua_guard}
script=examples/lua_guard.lua
out=$(mktemp "${TMPDIR:-/tmp}/mguard-lua.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT INT TERM

fail() {
    echo "test_lua_guard: FAIL: $*"
    sed 's/^/    /' "$out"
    exit 1
}

# Lines that must appear exactly, for 5000 points:
#   10000 norms computed at first (5000 points + 5000 short-lived ones),
#   5000 hits (every point asked twice), 1250 invalidated (every 4th point
#   mutated), 625 recomputed (every 8th), 312 invalidated again (every 16th),
#   1000 points kept through the first collection, 813 of them cached.
expect_5000() {
    cat <<'EOF'
  created            computed 10000  hits  5000  invalidated     0  collected  5000  entries  5000  = script
  mutated            computed 10000  hits  5000  invalidated  1250  collected  5000  entries  3750  = script
  recomputed         computed 10625  hits  5000  invalidated  1562  collected  5000  entries  4063  = script
  first collection   computed 10625  hits  5000  invalidated  1562  collected  8250  entries   813  = script
  last collection    computed 10625  hits  5000  invalidated  1562  collected  9063  entries     0  = script
cache entries invalidated by mutation: 1562
cache entries dropped by the collector: 9063
weak table after the last collection: empty
values computed 10625, destroyed 10625; __gc calls 10000; objects mguard still knows: 1 (the cache, as the guard)
ok: every count matches what the script did
EOF
}

for mode in incremental generational; do
    "$bin" "$script" 5000 $mode > "$out" 2>&1 || fail "$mode collector: the example exited with an error"
    expect_5000 | while IFS= read -r line; do
        grep -qxF -- "$line" "$out" || { echo "missing line: $line"; exit 1; }
    done > "$out.missing" || { cat "$out.missing" >> "$out"; rm -f "$out.missing"; fail "$mode collector: wrong counts"; }
    rm -f "$out.missing"
done

"$bin" "$script" 777 > "$out" 2>&1 || fail "777 points: the example exited with an error"
grep -qxF "weak table after the last collection: empty" "$out" || fail "777 points: the weak table is not empty"

echo "test_lua_guard: counts exact with 5000 points (incremental and generational collector) and 777 points"
