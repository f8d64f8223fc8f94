"""Print the benchmark TSV (build/bench.tsv) as the Markdown table used in
docs/performance.md. Usage: python3 bench/tsv2md.py [build/bench.tsv]"""
import math
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "build/bench.tsv"
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


rows, mem = [], []
with open(path) as f:
    for line in f:
        if line.startswith("#") or line.startswith("id\t"):
            if line.startswith("# "):
                print("Machine: " + line[2:].strip() + "\n")
            continue
        p = line.rstrip("\n").split("\t")
        v = dict(zip(SYS, [num(x) for x in p[2:7]]))
        (mem if p[0].startswith("mem_") else rows).append((p[0], int(p[1]), p[7], v))

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
