"""The benchmark's table, from the samples `bench` writes
(build/bench-samples.tsv: one line per sample, "id n system sample value
label"). Given several sample files (several `make bench` runs), the rounds
of all of them are pooled; the memory rows (ids mem_*, bytes, not sampled)
come from one file: the last `bench --mem-only` output given, else the last
file that has them.

Each time cell is the median of that system's samples. Each ratio is taken
per round (a round holds one sample of every system, taken one after the
other in a random order), so the two figures of a ratio come from the same
moment of the machine: the cell gives the median ratio over the rounds and,
in brackets, the lowest and highest. Memory rows (ids mem_*) are bytes.
Rows ratio_* are ratios within mguard that bench takes per sample
(alternating passes of two operations), printed apart: median (min-max).

Usage: python3 bench/tsv2md.py [--write-tsv OUT] [--plain] [SAMPLES.tsv ...]
--write-tsv  also writes the medians as a TSV (id n mguard stbds glib absl
             py_wkd py_ref label), what bench/plot.gp draws
--plain      no min-max brackets in the ratio cells"""
import math
import statistics
import sys

args = sys.argv[1:]
write_tsv = None
plain = False
while args[:1] and args[0].startswith("--"):
    if args[0] == "--write-tsv":
        write_tsv, args = args[1], args[2:]
    elif args[0] == "--plain":
        plain, args = True, args[1:]
    else:
        sys.exit(__doc__)
paths = args or ["build/bench-samples.tsv"]
SYS = ["mguard", "stbds", "glib", "absl", "py_wkd", "py_ref"]
HEAD = {"mguard": "mguard", "stbds": "stb_ds", "glib": "GLib", "absl": "absl", "py_wkd": "py WKD", "py_ref": "py ref"}


def ns(v):
    if v is None:
        return "-"
    return "%.2f" % v if v < 10 else "%.1f" % v if v < 1000 else "%.0f" % v


def size(n):
    return "%dM" % (n // 1000000) if n >= 1000000 else "%dK" % (n // 1000) if n >= 1000 else str(n)


# rows[(id, n)] = {"label": ..., "s": {system: {(run, k): value}}}, in first-seen order
rows = {}
machine = []
mem_file = mem_only = None
for path in paths:
    with open(path) as f:
        ids = {line.split("\t", 1)[0] for line in f if not line.startswith("#") and not line.startswith("id\t")}
    if any(i.startswith("mem_") for i in ids):
        mem_file = path
        if all(i.startswith("mem_") for i in ids):
            mem_only = path
mem_file = mem_only or mem_file
for run, path in enumerate(paths):
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                if run == 0:
                    machine.append(line[1:].strip())
                continue
            if line.startswith("id\t"):
                continue
            p = line.rstrip("\n").split("\t")
            if p[0].startswith("mem_") and path != mem_file:
                continue
            key = (p[0], int(p[1]))
            v = float(p[4])
            if math.isnan(v):
                continue
            r = rows.setdefault(key, {"label": p[5], "s": {}})
            r["s"].setdefault(p[2], {})[(run, int(p[3]))] = v


def median(r, s):
    vals = list(r["s"].get(s, {}).values())
    return statistics.median(vals) if vals else None


def ratio(r, a, b):
    """Per-round a/b: (median, min, max), or None."""
    A, B = r["s"].get(a, {}), r["s"].get(b, {})
    q = [A[k] / B[k] for k in A if k in B and B[k] > 0]
    if not q:
        return None
    return statistics.median(q), min(q), max(q)


def rcell(x):
    if x is None:
        return "-"
    if plain or abs(x[1] - x[2]) < 1e-9:
        return "%.2fx" % x[0]
    return "%.2fx (%.2f-%.2f)" % x


timed = [(k, r) for k, r in rows.items() if not k[0].startswith(("mem_", "ratio_"))]
ratios = [(k, r) for k, r in rows.items() if k[0].startswith("ratio_")]
mem = [(k, r) for k, r in rows.items() if k[0].startswith("mem_")]

print("Machine: " + (machine[0] if machine else "unknown"))
for m in machine[1:]:
    print(m)
if len(paths) > 1:
    print("Rounds of %d runs pooled." % len(paths))
print()
print("ns per operation (median of the samples). Ratios per round, median (min-max):")
print("mg/absl, mg/stb = mguard's time over absl's, stb_ds's (how many times slower mguard is);")
print("X/mg = X's time over mguard's (how many times faster mguard is).")
print()
cols = ["operation", "n"] + [HEAD[s] for s in SYS] + ["mg/absl", "mg/stb", "GLib/mg", "pyWKD/mg", "pyref/mg"]
print("| " + " | ".join(cols) + " |")
print("|---|" + "---:|" * (len(cols) - 1))
for (rid, n), r in timed:
    cells = [r["label"], size(n)] + [ns(median(r, s)) for s in SYS]
    cells += [rcell(ratio(r, "mguard", "absl")), rcell(ratio(r, "mguard", "stbds")),
              rcell(ratio(r, "glib", "mguard")), rcell(ratio(r, "py_wkd", "mguard")), rcell(ratio(r, "py_ref", "mguard"))]
    print("| " + " | ".join(cells) + " |")

if ratios:
    print()
    print("Ratios within mguard, one per sample (alternating passes or cycles of the two operations):")
    print()
    print("| ratio | n | median | min-max |")
    print("|---|---:|---:|---:|")
    for (rid, n), r in ratios:
        v = list(r["s"].get("mguard", {}).values())
        print("| %s | %s | %.2fx | %.2f-%.2f |" % (r["label"], size(n), statistics.median(v), min(v), max(v)))

if mem:
    print()
    print("Bytes per entry (mguard, stb_ds, absl: requested through the allocator; GLib: malloc heap growth;")
    print("Python: tracemalloc; the indented rows split mguard's figure by structure):")
    print()
    ns_ = sorted({n for (_i, n), _r in mem})
    print("| what | n | " + " | ".join(HEAD[s] for s in SYS) + " |")
    print("|---|---:|" + "---:|" * len(SYS))
    ids = []
    for (rid, _n), _r in mem:
        if rid not in ids:
            ids.append(rid)
    for rid in ids:
        for n in ns_:
            r = rows.get((rid, n))
            if not r:
                continue
            print("| %s | %s | %s |" % (r["label"], size(n), " | ".join(
                "-" if median(r, s) is None else "%.1f" % median(r, s) for s in SYS)))

if write_tsv:
    with open(write_tsv, "w") as f:
        for m in machine:
            f.write("# %s\n" % m)
        f.write("id\tn\t" + "\t".join(SYS) + "\tlabel\n")
        for (rid, n), r in list(rows.items()):
            f.write("%s\t%d\t%s\t%s\n" % (rid, n, "\t".join(
                "nan" if median(r, s) is None else "%.3f" % median(r, s) for s in SYS), r["label"]))
