#!/bin/sh
# Instructions per operation of every core row, from a callgrind profile of
# `bench --ir` (each ir_<system>_<row> function runs its operation a known
# number of times; `bench --ir` prints "name ops" for each, in OPS).
# GLib's death rows are also given net of a second dispose of the same
# objects (ir_glib_dispose_base), as the timed rows are.
# Usage: bench/ir.sh CALLGRIND_OUT OPS
out="$1"
ops="$2"
callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
awk -v opsfile="$ops" '
    BEGIN { while ((getline l < opsfile) > 0) { split(l, f, "\t"); if (f[1] ~ /^ir_/) n[f[1]] = f[2] } }
    /ir_[a-z0-9_]+/ {
        c = $1; gsub(",", "", c);
        name = $0; sub(/.*ir_/, "ir_", name); sub(/[^a-z0-9_].*/, "", name);
        if (name in n && !(name in seen)) { seen[name] = 1; ir[name] = c / n[name] }
    }
    END {
        for (k in ir) printf "%-32s %9.1f instructions/op\n", k, ir[k] | "sort";
        close("sort");
        if ("ir_glib_dispose_base" in ir)
            for (k in ir) if (k ~ /^ir_glib_death_/)
                printf "%-32s %9.1f instructions/op (net of ir_glib_dispose_base)\n", k " net", ir[k] - ir["ir_glib_dispose_base"];
    }'
