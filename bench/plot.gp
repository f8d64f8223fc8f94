# Charts from the TSV that `bench` writes (make bench-plot).
# Called as: gnuplot -e "tsv='build/bench.tsv'; out='docs/img'" bench/plot.gp
# The TSV: the medians bench/tsv2md.py --write-tsv writes from the samples.
# Columns: id n mguard stbds glib absl py_wkd py_ref label ("nan" = not measured).
set datafile separator "\t"
set datafile missing "nan"
set terminal pngcairo size 1400,760 font ",9" noenhanced
set key top left font ",8"
set grid ytics mytics xtics
set style line 1 lc rgb "#d62728" lw 2 pt 7 ps 0.8
set style line 2 lc rgb "#1f77b4" lw 2 pt 5 ps 0.8
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 0.8
set style line 4 lc rgb "#9467bd" lw 2 pt 11 ps 0.8
set style line 5 lc rgb "#8c564b" lw 2 pt 13 ps 0.8
set style line 6 lc rgb "#ff7f0e" lw 2 pt 15 ps 0.8
rows(id) = sprintf("< awk -F'\t' '$1==\"%s\"' %s", id, tsv)

# ---- weak table operations: ns/op against key count --------------------
set output out."/bench-weak.png"
set multiplot layout 2,4 title "weak table: ns per operation against keys, medians (log-log, random order, lower is better; mut_unwatched: an address never seen, stb_ds = a raw miss); mem_entry: bytes per entry"
set logscale xy
set xrange [700:1500000]
set xtics ("1K" 1000, "100K" 100000, "1M" 1000000)
set ylabel "ns/op"
set key bottom right
do for [op in "get_hit get_miss set_new overwrite remove iterate mut_unwatched mem_entry"] {
    set title op
    if (op ne "get_hit") { unset key }
    if (op eq "mem_entry") { set ylabel "bytes/entry" }
    plot rows(op) using 2:3 with linespoints ls 1 title "mguard", \
         ''       using 2:6 with linespoints ls 6 title "absl::flat_hash_map", \
         ''       using 2:4 with linespoints ls 2 title "stb_ds", \
         ''       using 2:5 with linespoints ls 3 title "GLib", \
         ''       using 2:7 with linespoints ls 4 title "py WeakKeyDictionary", \
         ''       using 2:8 with linespoints ls 5 title "py reference"
}
set ylabel "ns/op"
unset multiplot
set key top left

# ---- everything else: one cluster per operation -------------------------
set output out."/bench-ops.png"
unset logscale
set logscale y
set xrange [*:*]
set title "death (GLib, Python: net of a plain object's death), refs, trackers, generations, scopes, threads: ns per operation, medians (10K objects; log scale, lower is better)"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -35 nomirror
set rmargin 10
set bmargin 9
set key top left
plot sprintf("< awk -F'\t' '$2==10000' %s", tsv) \
        using 3:xtic(9) title "mguard" lc rgb "#d62728", \
     '' using 4 title "stb_ds" lc rgb "#1f77b4", \
     '' using 5 title "GLib" lc rgb "#2ca02c", \
     '' using 7 title "py WeakKeyDictionary" lc rgb "#9467bd", \
     '' using 8 title "py reference" lc rgb "#8c564b"

# ---- ledger: ns per tracked object against object count -------------------
set output out."/bench-ledger.png"
set terminal pngcairo size 1400,420 font ",9" noenhanced
set style data linespoints
unset style histogram
set xtics norotate
set rmargin 2
set bmargin 3
set multiplot layout 1,4 title "side-effects ledger: ns per tracked object (log-log, lower is better; clone: the stb_ds line is a memcpy of the same bytes)"
set logscale xy
set xrange [700:150000]
set xtics ("1K" 1000, "100K" 100000)
set ylabel "ns/object"
set key bottom right
do for [op in "ledger_clone ledger_equal ledger_diff ledger_prune"] {
    set title op
    if (op ne "ledger_clone") { unset key }
    plot rows(op) using 2:3 with linespoints ls 1 title "mguard", \
         ''       using 2:4 with linespoints ls 2 title "memcpy", \
         ''       using 2:8 with linespoints ls 5 title "py reference"
}
unset multiplot
