#!/usr/bin/env python3
"""Every public function whose contract in mguard.h has a "Cost:" line has
a row in tests/complexity.c, or is listed there as unmeasured with a reason;
every row names a public function (make complexity, make test).

usage: check_complexity.py HEADER COMPLEXITY_BINARY"""
import re
import subprocess
import sys


def costed(header):
    """(functions whose contract states a cost, every public function)"""
    src = open(header).read()
    api = src[:src.index("#endif /* MGUARD_H */")]
    comment, in_comment, with_cost, public = [], False, set(), set()
    for line in api.split("\n"):
        s = line.strip()
        if in_comment or s.startswith("/*"):
            if not in_comment:
                comment = []
            comment.append(s)
            in_comment = "*/" not in s
            continue
        m = re.match(r"MGUARDDEF\s+[^(]*?\b(mguard_\w+)\s*\(", s)
        if m:
            public.add(m.group(1))
            if "Cost:" in " ".join(comment):
                with_cost.add(m.group(1))
        elif s.startswith(("typedef", "}", "#define")):
            comment = []   # a comment above a type is not a function's contract
    return with_cost, public


def main():
    header, binary = sys.argv[1], sys.argv[2]
    with_cost, public = costed(header)
    out = subprocess.run([binary, "--list"], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    rows, unmeasured, bad = set(), set(), []
    for line in out.splitlines():
        kind, _, rest = line.partition(" ")
        name = rest.split(" ")[0]
        (rows if kind == "row" else unmeasured).add(name)
        if name not in public:
            bad.append("%s names %s, which mguard.h does not declare" % (kind, name))
    for f in sorted(with_cost - rows - unmeasured):
        bad.append("%s has a Cost: line but no row in tests/complexity.c (nor an unmeasured entry)" % f)
    for b in bad:
        print("check_complexity: " + b)
    if bad:
        return 1
    print("check_complexity: %d functions with a Cost: line, %d measured, %d unmeasured; %d public functions have a row"
          % (len(with_cost), len(with_cost & rows), len(with_cost & unmeasured), len(rows & public)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
