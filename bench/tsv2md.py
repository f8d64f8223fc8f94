"""Print the benchmark TSV (build/bench.tsv) as the Markdown table used in
docs/performance.md. Given several TSVs (several `make bench` runs, copied
aside), each cell is the median of the runs that have that row: steadier on
a shared machine.
Usage: python3 bench/tsv2md.py [--write-tsv OUT] [build/bench.tsv ...]
--write-tsv also writes the medians as a TSV, for `gnuplot -e "tsv='OUT'; ..."`."""
import math
import statistics
import sys

args = sys.argv[1:]
write_tsv = None
if args[:1] == ["--write-tsv"]:
    write_tsv, args = args[1], args[2:]
paths = args or ["build/bench.tsv"]
SYS = ["mguard", "stbds", "glib", "py_wkd", "py_ref"]


def num(s):
    v = float(s)
    return None if math.isnan(v) else v


def ns(v):
    if v is None:
        return "-"
    return "%.2f" % v if v < 10 else "%.1f" % v if v < 1000 else "%.0f" % v


def ratio(a, b):
    return "-" if a is None or b is None or b <= 0 else "%.2fx" % (a / b)


def size(n):
    return "%dM" % (n // 1000000) if n >= 1000000 else "%dK" % (n // 1000) if n >= 1000 else str(n)


def load(path):
    rows, mem, machine = [], [], ""
    with open(path) as f:
        for line in f:
            if line.startswith("#") or line.startswith("id\t"):
                if line.startswith("# "):
                    machine = line[2:].strip()
                continue
            p = line.rstrip("\n").split("\t")
            v = dict(zip(SYS, [num(x) for x in p[2:7]]))
            (mem if p[0].startswith("mem_") else rows).append((p[0], int(p[1]), p[7], v))
    return rows, mem, machine


def median_of(runs):
    """Per-cell median over the runs, rows matched by (id, n), in the order
    of the run that has the most rows (runs of older builds may lack some)."""
    base = max(runs, key=len)
    out = []
    for _id, n, label, _v in base:
        cells = [c for run in runs for c in run if (c[0], c[1]) == (_id, n)]
        v = {}
        for s in SYS:
            vals = [c[3][s] for c in cells if c[3][s] is not None]
            v[s] = statistics.median(vals) if vals else None
        out.append((_id, n, label, v))
    return out


loaded = [load(p) for p in paths]
rows = median_of([r for r, _m, _x in loaded])
mem = median_of([m for _r, m, _x in loaded])
if write_tsv:
    with open(write_tsv, "w") as f:
        f.write("# %s\n" % loaded[0][2])
        f.write("id\tn\t" + "\t".join(SYS) + "\tlabel\n")
        for _id, n, label, v in rows + mem:
            f.write("%s\t%d\t%s\t%s\n" % (_id, n, "\t".join(
                "nan" if v[s] is None else "%.3f" % v[s] for s in SYS), label))
print("Machine: " + loaded[0][2])
if len(paths) > 1:
    print("Each cell: the median of the %d runs that have the row." % len(paths))
print()

print("| operation | n | mguard | stb_ds | GLib | py WKD | py ref | mg/stb | GLib/mg | pyWKD/mg | pyref/mg |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for _id, n, label, v in rows:
    m = v["mguard"]
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        label, size(n), ns(m), ns(v["stbds"]), ns(v["glib"]), ns(v["py_wkd"]), ns(v["py_ref"]),
        ratio(m, v["stbds"]), ratio(v["glib"], m), ratio(v["py_wkd"], m), ratio(v["py_ref"], m)))
if mem:
    print("\nBytes per entry at 100K entries (C: growth of malloc's in-use bytes, headers included; Python: tracemalloc):\n")
    print("| what | mguard | stb_ds | GLib | py WKD | py ref |")
    print("|---|---:|---:|---:|---:|---:|")
    for _id, n, label, v in mem:
        print("| %s | %s |" % (label.replace(" (bytes, heap)", ""),
                              " | ".join(ns(v[s]) for s in SYS)))
