"""Instructions and simulated cache misses per operation of every core row,
from a callgrind profile of `bench --ir` taken with --cache-sim=yes (the
cache simulation of cachegrind, inclusive per function: each
ir_<system>_<row> function runs its operation a known number of times, and
`bench --ir` prints "name ops" for each, in OPS). Valgrind 3.19's
cachegrind has no start/stop client requests and cg_annotate gives only
exclusive per-function counts, so callgrind's simulator (the same model)
gives the inclusive figures per row.

Columns: Ir/op (instructions), D1/op (first-level data misses, reads and
writes), LL/op (last-level data misses, DLmr + DLmw: the memory accesses).
GLib's death rows are also given net of a second dispose of the same
objects (ir_glib_dispose_base), as the timed rows are.

Usage: python3 bench/ir_cache.py CALLGRIND_OUT OPS [--tsv OUT]"""
import re
import subprocess
import sys

args = sys.argv[1:]
tsv = None
if "--tsv" in args:
    i = args.index("--tsv")
    tsv = args[i + 1]
    del args[i:i + 2]
if len(args) != 2:
    sys.exit(__doc__)
out, opsfile = args
ops = {}
with open(opsfile) as f:
    for line in f:
        p = line.split("\t")
        if p[0].startswith("ir_"):
            ops[p[0]] = int(p[1])

EV = ["Ir", "D1mr", "D1mw", "DLmr", "DLmw"]
text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--show=" + ",".join(EV), out],
                      capture_output=True, text=True, check=True).stdout
cfg = [l for l in text.splitlines() if l.startswith(("I1 cache", "D1 cache", "LL cache"))]
fig = {}
for line in text.splitlines():
    m = re.search(r"\bir_[a-z0-9_]+", line)
    if not m:
        continue
    name = m.group(0)
    if name not in ops or name in fig:
        continue
    toks = re.sub(r"\(\s*[\d.]+%\)", "", line).split()
    if len(toks) < len(EV):
        continue
    try:
        v = [0 if t == "." else int(t.replace(",", "")) for t in toks[:len(EV)]]
    except ValueError:
        continue
    n = ops[name]
    e = dict(zip(EV, v))
    fig[name] = (e["Ir"] / n, (e["D1mr"] + e["D1mw"]) / n, (e["DLmr"] + e["DLmw"]) / n)

if "ir_glib_dispose_base" in fig:
    b = fig["ir_glib_dispose_base"]
    for k in list(fig):
        if k.startswith("ir_glib_death_"):
            fig[k + "_net"] = tuple(x - y for x, y in zip(fig[k], b))
missing = sorted(set(ops) - set(fig))
for c in cfg:
    print("# " + c)
print("%-34s %10s %8s %8s %10s" % ("function", "Ir/op", "D1/op", "LL/op", "ops"))
for k in sorted(fig):
    n = ops.get(k, ops.get(k[:-4], 0))
    print("%-34s %10.1f %8.3f %8.3f %10d" % (k, fig[k][0], fig[k][1], fig[k][2], n))
if missing:
    print("# not found in the profile: " + " ".join(missing))
if tsv:
    with open(tsv, "w") as f:
        f.write("function\tir_per_op\td1_per_op\tll_per_op\tops\n")
        for k in sorted(fig):
            f.write("%s\t%.3f\t%.4f\t%.4f\t%d\n" % (k, fig[k][0], fig[k][1], fig[k][2], ops.get(k, ops.get(k[:-4], 0))))
