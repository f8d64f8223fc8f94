#!/usr/bin/env python3
"""make mutate: mutation testing of mguard.h against the unit test binaries.

Each mutant below is one small deliberate bug: an exact string of mguard.h
and what it becomes (`nth` picks the occurrence when the string is not
unique; without it the string must occur exactly once). For each mutant the
script writes the mutated header into a temporary directory, builds the
unit test binaries of tests/test_*.c against it and runs them; the mutant is
CAUGHT when any binary fails (or hangs past the timeout), SURVIVED when all
pass. A mutant whose string no longer matches is STALE and one that does
not compile is BROKEN: both fail the run, so the list moves with the code.

Only the implementation part is mutated as a rule; the test objects that do
not compile the implementation themselves are built once from the real
header and relinked against each mutant's implementation object (a mutant
in the API part rebuilds everything). The binaries run in parallel (-j,
default 2) and a mutant stops at its first failing binary.

When to add a mutant: with every new promise the header makes (a new
function, a new guarantee in a contract, a new invariant of
mguard_ctx_check), add at least one mutant that breaks exactly that promise
and check that `make mutate` catches it. A survivor is either a missing
test (write it) or an equivalent mutant (the program cannot tell it from
the original: say why in EQUIVALENT at the end and leave it out of the
list). See docs/contributing.md.

Usage: python3 tests/mutate.py [-j N] [--only ID[,ID...]] [--list] [--keep]
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

# (id, promise it breaks, old, new[, nth])
MUTANTS = [
    # ---- 1. context and the hash index --------------------------------
    ("ix-wrong-home", "lookups find every key (hash index)",
     "    MGUARD__CHECK(ix->used * 2 <= ix->mask + 1, \"%s: index over half full\", what);",
     "    MGUARD__CHECK(ix->used * 2 <= ix->mask + 1 || 1, \"%s: index over half full\", what);"),
]

# Mutants left out because no program can tell them from the original.
# (id, old, new, why)
EQUIVALENT = [
]

TEST_TIMEOUT = 120   # seconds per binary; a hang counts as caught


def sh(cmd, cwd=None):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)


def apply(src, m):
    mid, _promise, old, new = m[:4]
    nth = m[4] if len(m) > 4 else None
    count = src.count(old)
    if count == 0:
        return None, "STALE: pattern not found"
    if nth is None and count > 1:
        return None, "STALE: pattern occurs %d times and no occurrence index is given" % count
    k = 0 if nth is None else nth
    if k >= count:
        return None, "STALE: occurrence %d asked, %d found" % (k, count)
    pos = -1
    for _ in range(k + 1):
        pos = src.index(old, pos + 1)
    return (src[:pos] + new + src[pos + len(old):], pos), None


class Builder:
    def __init__(self, root, work, cc, cflags, jobs):
        self.root, self.work, self.cc, self.jobs = root, work, cc, jobs
        stb = sh(["pkg-config", "--cflags", "stb"])
        stb_flags = stb.stdout.split() if stb.returncode == 0 else ["-I/usr/include/stb"]
        self.cflags = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-pthread"] + cflags + stb_flags
        self.libs = ["-lcmocka", "-pthread"]
        tests = sorted(f for f in os.listdir(os.path.join(root, "tests"))
                       if f.startswith("test_") and f.endswith(".c"))
        self.names = [t[:-2] for t in tests]
        self.own_impl = set()   # test files that compile the implementation themselves
        for t in tests:
            with open(os.path.join(root, "tests", t)) as f:
                if re.search(r"^#define MGUARD_IMPLEMENTATION", f.read(), re.M):
                    self.own_impl.add(t[:-2])

    def compile(self, hdr_dir, src, out, obj=True):
        cmd = [self.cc] + self.cflags + ["-I" + hdr_dir] + (["-c"] if obj else []) + [src, "-o", out]
        return sh(cmd, cwd=self.root)

    def parallel(self, jobs):
        with ThreadPoolExecutor(self.jobs) as ex:
            return list(ex.map(lambda j: j(), jobs))

    def build(self, hdr_dir, out_dir, base_dir, everything):
        """Build every test binary in out_dir against hdr_dir/mguard.h.
        Returns None, or the first compiler output that failed."""
        os.makedirs(out_dir, exist_ok=True)
        t = os.path.join(self.root, "tests")
        impl = os.path.join(out_dir, "mguard_impl.o")
        jobs = [lambda: self.compile(hdr_dir, os.path.join(t, "mguard_impl.c"), impl)]
        for n in self.names:
            if everything or n in self.own_impl:
                jobs.append(lambda n=n: self.compile(hdr_dir, os.path.join(t, n + ".c"),
                                                     os.path.join(out_dir, n + ".o")))
        for r in self.parallel(jobs):
            if r.returncode:
                return r.stdout
        links = []
        for n in self.names:
            o = os.path.join(out_dir if (everything or n in self.own_impl) else base_dir, n + ".o")
            cmd = [self.cc, o, impl, "-o", os.path.join(out_dir, n)] + self.libs
            links.append(lambda cmd=cmd: sh(cmd))
        for r in self.parallel(links):
            if r.returncode:
                return r.stdout
        return None

    def run(self, out_dir, order, stop_early=True):
        """Run the binaries (cwd: the repository). Returns (name, output) of
        the first that failed, or None."""
        failed = []
        procs = {}

        def one(n):
            if failed and stop_early:
                return
            p = subprocess.Popen([os.path.join(out_dir, n)], cwd=self.root, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, universal_newlines=True,
                                 start_new_session=True)
            procs[n] = p
            try:
                out, _ = p.communicate(timeout=TEST_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.communicate()
                failed.append((n, "timed out after %d s" % TEST_TIMEOUT))
                return
            if p.returncode:
                failed.append((n, out))

        self.parallel([lambda n=n: one(n) for n in order])
        return failed[0] if failed else None


def last_lines(text, n=3):
    lines = [l for l in text.splitlines() if l.strip()]
    return "\n".join("      " + l for l in lines[-n:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-j", type=int, default=2, help="parallel jobs (default 2)")
    ap.add_argument("--only", default="", help="comma-separated mutant ids")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="-O1", help="optimisation flags (default -O1)")
    a = ap.parse_args()

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ids = [m[0] for m in MUTANTS]
    dup = sorted(set(i for i in ids if ids.count(i) > 1))
    if dup:
        print("mutate: duplicate ids: " + ", ".join(dup))
        return 2
    if a.list:
        for m in MUTANTS:
            print("%-28s %s" % (m[0], m[1]))
        print("%d mutants" % len(MUTANTS))
        return 0
    chosen = MUTANTS
    if a.only:
        want = a.only.split(",")
        unknown = [w for w in want if w not in ids]
        if unknown:
            print("mutate: unknown ids: " + ", ".join(unknown))
            return 2
        chosen = [m for m in MUTANTS if m[0] in want]

    with open(os.path.join(root, "mguard.h")) as f:
        src = f.read()
    impl_at = src.index("#ifdef MGUARD_IMPLEMENTATION")
    work = tempfile.mkdtemp(prefix="mguard-mutate.")
    t0 = time.time()
    b = Builder(root, work, a.cc, shlex.split(a.cflags), a.j)
    try:
        # the real header: every test object, and a run that must pass
        base = os.path.join(work, "base")
        os.makedirs(base)
        shutil.copy(os.path.join(root, "mguard.h"), base)
        err = b.build(base, base, base, True)
        if err:
            print("mutate: the unmutated tree does not build:\n" + err)
            return 2
        times = {}
        for n in b.names:
            s = time.time()
            r = sh([os.path.join(base, n)], cwd=root)
            times[n] = time.time() - s
            if r.returncode:
                print("mutate: %s fails without any mutant:\n%s" % (n, last_lines(r.stdout, 10)))
                return 2
        # quick binaries first, so most mutants are caught early
        order = sorted(b.names, key=lambda n: times[n])
        print("mutate: %d mutants, %d test binaries, -j%d (baseline build and run %.0f s)" %
              (len(chosen), len(b.names), a.j, time.time() - t0))
        caught, survived, bad = [], [], []
        for i, m in enumerate(chosen):
            s = time.time()
            res, why = apply(src, m)
            tag = "[%2d/%d] %-28s" % (i + 1, len(chosen), m[0])
            if res is None:
                bad.append(m[0])
                print("%s %s" % (tag, why))
                continue
            text, pos = res
            d = os.path.join(work, "m%02d" % i)
            os.makedirs(d)
            with open(os.path.join(d, "mguard.h"), "w") as f:
                f.write(text)
            err = b.build(d, d, base, pos < impl_at)
            if err:
                bad.append(m[0])
                print("%s BROKEN: does not compile\n%s" % (tag, last_lines(err, 4)))
                continue
            r = b.run(d, order)
            if r:
                caught.append(m[0])
                print("%s caught by %s (%.1f s)" % (tag, r[0], time.time() - s))
            else:
                survived.append(m[0])
                print("%s SURVIVED (%.1f s): %s" % (tag, time.time() - s, m[1]))
            if not a.keep:
                shutil.rmtree(d, ignore_errors=True)
        total = time.time() - t0
        n = len(caught) + len(survived)
        print("mutate: %d/%d caught (%.0f%%), %d survived, %d stale or broken, %d equivalent left out; %.0f s" %
              (len(caught), n, 100.0 * len(caught) / n if n else 0, len(survived), len(bad),
               len(EQUIVALENT), total))
        if survived:
            print("survived: " + ", ".join(survived))
        if bad:
            print("stale or broken: " + ", ".join(bad))
        return 1 if survived or bad else 0
    finally:
        if a.keep:
            print("mutate: kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
