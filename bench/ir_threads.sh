#!/bin/sh
# Instructions per call of the one-thread rows of bench_threads, with and
# without the lock layer (valgrind --tool=callgrind; no timing noise).
# Each figure is (I(11 passes) - I(1 pass)) / (10 passes x 1024 keys), so
# the setup cancels out.
# Usage: bench/ir_threads.sh build/bench_threads
bin=$1
command -v valgrind >/dev/null 2>&1 || { echo "ir_threads: valgrind is not installed"; exit 1; }
ir() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --ir "$1" "$2" "$3" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
printf '%-18s %10s %10s %8s\n' "instructions/call" before default extra
op=0
for name in weak_get weak_get_copy weak_set ref_get ref_get_retained on_mutation; do
    b1=$(ir $op before 1); b11=$(ir $op before 11)
    d1=$(ir $op default 1); d11=$(ir $op default 11)
    awk -v n="$name" -v b1="$b1" -v b11="$b11" -v d1="$d1" -v d11="$d11" 'BEGIN {
        b = (b11 - b1) / 10240; d = (d11 - d1) / 10240;
        printf "%-18s %10.1f %10.1f %8.1f\n", n, b, d, d - b }'
    op=$((op + 1))
done
