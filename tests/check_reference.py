#!/usr/bin/env python3
"""The reference check (make test): docs/api.md must name every public
function, type and macro of mguard.h, and name nothing the header lacks.

Public names are read from the header's API part (before the
implementation): MGUARDDEF functions, typedef'd types, enum values and
#define'd macros starting with mguard_ / MGUARD_ (private names have a
double underscore and are skipped). A name in api.md is any identifier
starting with mguard_ or MGUARD_. Exit status 1 lists what is missing or
stale."""
import re
import sys

hdr = open("mguard.h").read()
api_part = hdr.split("#ifdef MGUARD_IMPLEMENTATION")[0]
api_part = re.sub(r"/\*.*?\*/", " ", api_part, flags=re.S)   # comments only mention names
doc = open("docs/api.md").read()

public = set()
public |= set(re.findall(r"MGUARDDEF[^;(]*?\b(mguard_[a-z0-9_]+)\s*\(", api_part))
public |= set(re.findall(r"\b(mguard_[a-z0-9_]+)\s*;", api_part)) & set(re.findall(r"typedef[^;]*\b(mguard_[a-z0-9_]+)\s*;", api_part, flags=re.S))
public |= set(re.findall(r"}\s*(mguard_[a-z0-9_]+)\s*;", api_part))
public |= set(re.findall(r"\(\*\s*(mguard_[a-z0-9_]+)\)\s*\(", api_part))
public |= set(re.findall(r"^\s*(MGUARD_[A-Z0-9_]+)\s*[=,]", api_part, flags=re.M))
public |= set(re.findall(r"^\s*(MGUARD_[A-Z0-9_]+)\s*$", api_part, flags=re.M))
public |= set(re.findall(r"#define\s+(MGUARD_[A-Z0-9_]+)", api_part))
public = {n for n in public if "__" not in n and n not in ("MGUARD_H",)}

in_doc = set(re.findall(r"\b((?:mguard|MGUARD)_[A-Za-z0-9_]*[A-Za-z0-9])", doc))
in_doc = {n for n in in_doc if "__" not in n}
# names of the whole header, implementation included: options such as
# MGUARD_IMPLEMENTATION and MGUARD_DEBUG are documented and real
every = set(re.findall(r"\b((?:mguard|MGUARD)_[A-Za-z0-9_]*[A-Za-z0-9])", hdr))
# file and project names that are not identifiers
allowed = {"mguard_h"}

# Every struct or enum api.md spells out must have the header's members, in
# the header's order (comments and layout may differ).
def members(body):
    body = re.sub(r"/\*.*?\*/", " ", body, flags=re.S)
    names = []
    for decl in re.split(r"[;,]", body):
        decl = re.sub(r"\(\*\s*(\w+)\)\s*\(.*", r" \1", decl.strip(), flags=re.S)   # function pointers
        decl = re.sub(r"=.*", "", decl, flags=re.S)
        m = re.search(r"(\w+)\s*(\[[^]]*\])?\s*$", decl)
        if m:
            if not m.group(1).endswith("_"):   # trailing underscore: private member
                names.append(m.group(1))
    return names

def blocks(text):
    out = {}
    for m in re.finditer(r"typedef\s+(struct|enum)\s+(mguard_\w+)\s*\{(.*?)\}\s*(mguard_\w+)\s*;", text, flags=re.S):
        out.setdefault(m.group(2), []).append(members(m.group(3)))
    return out

hdr_blocks = blocks(re.sub(r"/\*.*?\*/", " ", hdr.split("#ifdef MGUARD_IMPLEMENTATION")[0], flags=re.S))
drift = []
for name, shown in blocks(doc).items():
    want = hdr_blocks.get(name, [None])[0]
    for got in shown:
        if want is not None and got != want:
            drift.append("check-reference: docs/api.md shows %s with members %s; mguard.h has %s" % (name, got, want))
for line in drift:
    print(line)

missing = sorted(public - in_doc)
stale = sorted(n for n in in_doc - every - allowed)
for n in missing:
    print("check-reference: %s is public in mguard.h but docs/api.md does not name it" % n)
for n in stale:
    print("check-reference: docs/api.md names %s, which mguard.h does not have" % n)
if missing or stale or drift:
    sys.exit(1)
print("check-reference: docs/api.md names all %d public names of mguard.h and none it lacks" % len(public))
