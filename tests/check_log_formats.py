#!/usr/bin/env python3
"""The log-format check (make test): every log call's arguments match the
printf format its code has in MGUARD_LOG_ITEMS, and every code is logged.

A log site names its code (mguard__logf(ctx, MGUARD_LOG_NOMEM, fn)); the
format lives in the list, out of the compiler's sight. This script writes a
copy of mguard.h (into OUTDIR) where each call becomes a call of a
printf-checked function with its code's format, once per code the call can
log (a ternary names several), and compiles it with -Wformat as errors (the
default build and MGUARD_DEBUG). A call whose code it cannot read, a level
passed as a code, or a code of the list that no call logs fails the check."""
import os
import re
import subprocess
import sys

outdir = sys.argv[1] if len(sys.argv) > 1 else "build/logfmt"
stb = sys.argv[2].split() if len(sys.argv) > 2 else []
src = open("mguard.h").read()
items = {m.group(1): m.group(3) for m in re.finditer(r'^    L\((\w+), (\w+), ("(?:[^"\\]|\\.)*")\)', src, flags=re.M)}
CALLS = {"mguard__logf": 1, "mguard__log_now": 1, "mguard__scope_warn": 1, "mguard__dbg_complain": 0}
# the one call whose code is a variable: ctx_create's lock errors, each "%s: ..." with the function's name
UNREAD = {"err": ["HALF_LOCK", "NO_PTHREADS", "NOMEM"]}


def close(s, j):
    depth = 1
    while depth:
        c = s[j]
        if c == '"':
            j += 1
            while s[j] != '"':
                j += 2 if s[j] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        j += 1
    return j


def split_args(inner):
    args, depth, cur, k = [], 0, "", 0
    while k < len(inner):
        c = inner[k]
        if c == '"':
            e = k + 1
            while inner[e] != '"':
                e += 2 if inner[e] == "\\" else 1
            cur += inner[k:e + 1]
            k = e + 1
            continue
        if c in "([":
            depth += 1
        if c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += c
        k += 1
    args.append(cur.strip())
    return args


errors, used, out, i = [], set(), [], 0
pat = re.compile(r"\b(" + "|".join(CALLS) + r")\(")
for m in pat.finditer(src):
    if m.start() < i:
        continue
    j = close(src, m.end())
    line = src.count("\n", 0, m.start()) + 1
    out.append(src[i:m.start()])
    i = j
    call = src[m.start():j]
    if re.match(r"(static|void)\b", src[src.rfind("\n", 0, m.start()) + 1:m.start()].strip()) or "..." in call:
        out.append(call)   # the definition
        continue
    args = split_args(call[len(m.group(1)) + 1:-1])
    code = args[CALLS[m.group(1)]]
    codes = UNREAD.get(code) or [c for c in re.findall(r"MGUARD_LOG_(\w+)", code)]
    bad = [c for c in codes if c not in items]
    if not codes or bad:
        errors.append("mguard.h:%d: %s: the code %s is not one of MGUARD_LOG_ITEMS" % (line, m.group(1), code))
        out.append(call)
        continue
    used.update(codes)
    rest = "".join(", " + a for a in args[CALLS[m.group(1)] + 1:])
    out.append("(" + ", ".join("mguard__fmt_check(%s%s)" % (items[c], rest) for c in codes) + ")")
out.append(src[i:])
for c in items:
    if c not in used:
        errors.append("mguard.h: MGUARD_LOG_%s is in MGUARD_LOG_ITEMS but no call logs it" % c)

copy = "".join(out).replace(
    "#ifdef MGUARD_IMPLEMENTATION",
    "#ifdef MGUARD_IMPLEMENTATION\n#if defined(__GNUC__)\n__attribute__((format(printf, 1, 2)))\n#endif\n"
    "static void mguard__fmt_check(const char *fmt, ...);\nstatic void mguard__fmt_check(const char *fmt, ...) { (void)fmt; }\n", 1)
os.makedirs(outdir, exist_ok=True)
open(os.path.join(outdir, "mguard.h"), "w").write(copy)
open(os.path.join(outdir, "impl.c"), "w").write('#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\n')
for extra in ([], ["-DMGUARD_DEBUG"]):
    r = subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-fsyntax-only", "-Wformat", "-Werror=format",
                        "-Wno-format-extra-args", "-I" + outdir] + stb + extra + [os.path.join(outdir, "impl.c")],
                       capture_output=True, text=True)
    if r.returncode:
        errors.append("log call arguments do not match their code's format (%s):\n%s" % (" ".join(extra) or "default build", r.stderr))
for e in errors:
    print("check-log-formats: " + e)
if errors:
    sys.exit(1)
print("check-log-formats: %d codes; every log call's arguments match its code's format, and every code is logged" % len(items))
