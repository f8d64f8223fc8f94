#!/usr/bin/env python3
"""docs/api.md is generated from mguard.h: the header is the reference.

    python3 tests/gen_api.py            print the reference (make docs writes it)
    python3 tests/gen_api.py --check    make test: docs/api.md must equal it

The reference is the header's own text, nothing added but headings: the
top comment's blocks (COMPILE-TIME OPTIONS, LIFETIME CONTRACT, ...), then
each section of the API part (a banner `/* ==== N. title ==== */`) in
header order, split at each comment that starts a line after a
declaration: a group's contract comment and declarations go verbatim in a
C block under a heading naming what it declares (a comment that declares
nothing is printed as prose). Python 3 standard library only."""
import difflib
import re
import sys

HDR, DOC = "mguard.h", "docs/api.md"


def slug(text, seen):
    """GitHub's anchor for a heading: lower case, punctuation but - and _
    dropped, spaces to -, a repeat gets -1, -2, ..."""
    s = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
    n = seen.get(s, 0)
    seen[s] = n + 1
    return s if n == 0 else "%s-%d" % (s, n)


def names(code):
    """The public names a group declares, in order."""
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    found = []
    pats = (r"MGUARDDEF[^;(]*?\b(mguard_\w+)\s*\(",          # functions
            r"\(\*\s*(mguard_\w+)\)\s*\(",                      # function pointer types
            r"}\s*(mguard_\w+)\s*;",                            # struct and enum types
            r"typedef\s+struct\s+\w+\s+(mguard_\w+)\s*;",       # opaque handles
            r"#define\s+(MGUARD_[A-Z0-9_]+)")                   # macros
    for m in sorted((m for p in pats for m in re.finditer(p, code)), key=lambda m: m.start()):
        n = m.group(1)
        if "__" not in n and n not in found:
            found.append(n)
    return found


def top_comment(hdr):
    """The top comment's blocks: an upper-case heading line indented by 3
    spaces starts one; (title, lines)."""
    text = hdr[hdr.index("/*") + 2:hdr.index("*/")]
    blocks, cur = [], None
    for line in text.split("\n")[1:]:
        m = re.match(r"   ([A-Z][A-Z -]+[A-Z])\b(.*)", line)
        if m:
            cur = (m.group(1), [line[3:]] if m.group(2).strip() else [])
            blocks.append(cur)
        elif re.match(r"   \S", line):
            cur = None                                 # a closing line: no block's
        elif cur is not None:
            cur[1].append(line[3:] if line.startswith("   ") else line.strip())
    out = []
    for t, ls in blocks:
        ls = [l.rstrip() for l in ls]
        while ls and not ls[-1]:
            ls.pop()
        out.append((t, ls))
    return out


def api_sections(hdr):
    """(title, [lines]) per section banner of the API part; first the
    version macros (after #define MGUARD_H, before the first #include)."""
    lines = hdr.split("\n#ifdef MGUARD_IMPLEMENTATION")[0].split("\n")
    start = lines.index("#define MGUARD_H") + 1
    first = next(i for i, l in enumerate(lines) if l.startswith("#include"))
    end = max(i for i, l in enumerate(lines) if l.startswith("#ifdef __cplusplus"))
    secs = [("Version", lines[start:first])]
    for line in lines[first:end]:
        m = re.match(r"/\* =+ (\d+\. .*?) =+ \*/$", line)
        if m:
            num, title = m.group(1).split(" ", 1)
            secs.append((num + " " + title[0].upper() + title[1:], []))
        elif len(secs) > 1 and not re.match(r"#(ifndef|endif /\*) MGUARD_NO_[A-Z]+", line):
            secs[-1][1].append(line)                   # a part's guard: told in the options
    return secs


def groups(lines):
    """Split a section at blank lines and at each column-0 comment that
    follows code."""
    out, cur, in_comment, code_seen = [], [], False, False
    for line in lines:
        if in_comment:
            cur.append(line)
            in_comment = "*/" not in line
            continue
        if not line.strip() or (line.startswith("/*") and code_seen):
            if cur:
                out.append(cur)
            cur, code_seen = [], False
            if not line.strip():
                continue
        cur.append(line)
        code_seen = code_seen or not line.lstrip().startswith("/*")
        in_comment = "/*" in line and "*/" not in line.rsplit("/*", 1)[1]
    if cur:
        out.append(cur)
    return out


def prose(group):
    text = "\n".join(group).strip()
    text = re.sub(r"^/\*\s?", "", text)
    text = re.sub(r"\s*\*/$", "", text)
    return "\n".join(l.strip() for l in text.split("\n"))


def generate(hdr):
    top, secs = top_comment(hdr), api_sections(hdr)
    seen, toc, body, undocumented = {}, [], [], []
    for title, lines in top:
        if title == "TABLE OF CONTENTS":
            continue
        head = title.capitalize()
        toc.append("- [%s](#%s)" % (head, slug(head, seen)))
        body += ["## " + head, "", "```"] + lines + ["```", ""]
    for title, lines in secs:
        anchor = slug(title, seen)
        toc.append("- [%s](#%s)" % (title, anchor))
        part, index = [], []
        for g in groups(lines):
            declared = names("\n".join(g))
            if not declared:
                part += [prose(g), ""]
                continue
            if not any(l.lstrip().startswith("/*") for l in g):
                undocumented += re.findall(r"MGUARDDEF[^;(]*?\b(mguard_\w+)\s*\(", "\n".join(g))
            head = ", ".join("`%s`" % n for n in declared)
            anchor = slug(head, seen)
            index += ["[`%s`](#%s)" % (n, anchor) for n in declared]
            part += ["### " + head, "", "```c"] + g + ["```", ""]
        body += ["## " + title, ""] + ([" · ".join(index), ""] if index else []) + part
    out = ["# mguard.h API reference", "",
           "Generated from `mguard.h` by `tests/gen_api.py` (`make docs`); do not edit:",
           "the header is the reference, this file is its declarations and contract",
           "comments in header order. The guide is [guide.md](guide.md), the design",
           "notes [design.md](design.md).", ""] + toc + [""] + body
    while out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n", undocumented


def main():
    want, undocumented = generate(open(HDR).read())
    if sys.argv[1:] == ["--check"]:
        for n in undocumented:
            print("check-reference: mguard.h declares %s with no contract comment above it" % n)
        have = open(DOC).read()
        if have != want:
            sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                                       DOC + " (committed)", DOC + " (from mguard.h)"))
            print("check-reference: docs/api.md is not what mguard.h generates; run: make docs")
        if have != want or undocumented:
            sys.exit(1)
        print("check-reference: docs/api.md is generated from mguard.h")
    elif sys.argv[1:]:
        sys.exit(__doc__)
    else:
        sys.stdout.write(want)


if __name__ == "__main__":
    main()
