#!/bin/sh
# Instructions per operation of the hot paths, from a callgrind profile of
# `bench --ir` (each ir_* function runs its operation 100000 times; the
# set_new_remove ones do 100000 inserts + 100000 removes, the death_t1
# ones 10000 deaths).
# Usage: bench/ir.sh CALLGRIND_OUT
out="$1"
callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
awk '/ir_[a-z_]+/ {
        gsub(",", "", $1); n = 100000;
        name = $0; sub(/.*ir_/, "ir_", name); sub(/[ (].*/, "", name); sub(/'"'"'.*/, "", name);
        if (name ~ /set_new_remove/) n = 200000;
        if (name ~ /death_t1/) n = 10000;
        printf "%-28s %8.1f instructions/op\n", name, $1 / n
     }' | sort -u
