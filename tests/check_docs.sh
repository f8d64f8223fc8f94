#!/bin/sh
# The docs check: every C code block in README.md and docs/*.md marked as a
# complete program must compile against mguard.h in strict C99 and run with
# exit status 0; a marked output block must match what the program printed.
# The markers (docs/contributing.md explains them), each alone on the line
# just before an opening fence that starts in column 1:
#     <!-- mguard:program -->     before a ```c block: a complete program
#     <!-- mguard:output -->      before a ``` block: the exact stdout of the
#                                 program block above it in the same file
#     <!-- mguard:example F.c --> before a ``` block: the exact stdout of
#                                 examples/F.c (built as a program block)
#     <!-- mguard:fragment -->    before a ```c block: declarations and
#                                 functions (no main) that must compile as a
#                                 file after mguard.h and the common C headers
#                                 (its own leading #define/#include lines go
#                                 first, so a feature macro works)
# Compiler errors point at the Markdown file and line (#line directives).
# Usage (from the repository root): sh tests/check_docs.sh OUTDIR "STB_CFLAGS"
out=${1:?usage: check_docs.sh OUTDIR STB_CFLAGS}
stb=${2:-}
CC=${CC:-cc}
strict="-std=c99 -Wall -Wextra -Wpedantic -Werror"
rm -rf "$out"
mkdir -p "$out"

docs=""
for f in README.md docs/*.md; do [ -f "$f" ] && docs="$docs $f"; done
[ -n "$docs" ] || { echo "check-docs: no README.md or docs/*.md"; exit 0; }

# Extract the blocks. Each program becomes OUT/<file>_<n>.c (with a #line
# directive), its output block OUT/<file>_<n>.out; the manifest lists
# "name<TAB>file<TAB>line". Malformed markers are errors.
# shellcheck disable=SC2086
awk -v out="$out" '
function fail(msg) { printf "check-docs: %s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; bad = 1 }
function fence_run(line,   c, k) {
    c = substr(line, 1, 1)
    if (c != "`" && c != "~") return 0
    for (k = 1; substr(line, k, 1) == c; k++) ;
    return k - 1 >= 3 ? k - 1 : 0
}
FNR == 1 {
    if (state != "") { printf "check-docs: %s: a block is not closed\n", lastfile > "/dev/stderr"; bad = 1 }
    lastfile = FILENAME
    base = FILENAME; gsub(/[^A-Za-z0-9]/, "_", base); prog = ""; state = ""
}
state == "body" {
    if ($0 ~ /^```[ \t]*$/) { close(dest); state = ""; next }
    print > dest
    next
}
state == "skip" {
    if (substr($0, 1, 1) == fchar && fence_run($0) >= flen && $0 ~ /^[`~]+[ \t]*$/) state = ""
    next
}
state == "fence-fragment" {
    if ($0 !~ /^```c[ \t]*$/) { fail("<!-- mguard:fragment --> must be followed by a ```c fence"); state = ""; next }
    nf++
    dest = out "/" base "_f" nf ".frag"
    printf "%s_f%d\t%s\t%d\n", base, nf, FILENAME, FNR + 1 > (out "/fragments")
    state = "body"
    next
}
state == "fence-program" || state == "fence-output" {
    if (state == "fence-program" && $0 !~ /^```c[ \t]*$/) { fail("<!-- mguard:program --> must be followed by a ```c fence"); state = ""; next }
    if (state == "fence-output" && $0 !~ /^```[A-Za-z0-9_-]*[ \t]*$/) { fail("<!-- mguard:output --> must be followed by a ``` fence"); state = ""; next }
    if (state == "fence-program") {
        n++
        prog = base "_" n
        dest = out "/" prog ".c"
        printf "#line %d \"%s\"\n", FNR + 1, FILENAME > dest
        printf "%s\t%s\t%d\n", prog, FILENAME, FNR + 1 > (out "/manifest")
    } else {
        dest = out "/" prog ".out"
        printf "" > dest
    }
    state = "body"
    next
}
/^<!-- mguard:program -->[ \t]*$/ { state = "fence-program"; next }
/^<!-- mguard:fragment -->[ \t]*$/ { state = "fence-fragment"; next }
/^<!-- mguard:example [A-Za-z0-9_]+\.c -->[ \t]*$/ {
    n++
    prog = base "_" n
    dest = out "/" prog ".c"
    src = "examples/" $3
    printf "#line 1 \"%s\"\n", src > dest
    while ((getline l < src) > 0) print l > dest
    close(src)
    close(dest)
    printf "%s\t%s\t%d\n", prog, FILENAME, FNR > (out "/manifest")
    has_output[prog] = 1
    state = "fence-output"
    next
}
/^<!-- mguard:output -->[ \t]*$/ {
    if (prog == "") { fail("<!-- mguard:output --> without a program block above it in this file"); next }
    if (prog in has_output) { fail("a second <!-- mguard:output --> for the same program"); next }
    has_output[prog] = 1
    state = "fence-output"
    next
}
/^<!-- *mguard:/ { fail("unknown mguard marker: " $0); next }
{
    k = fence_run($0)
    if (k) { state = "skip"; fchar = substr($0, 1, 1); flen = k }
}
END {
    if (state == "body" || state == "fence-program" || state == "fence-output" || state == "fence-fragment") {
        printf "check-docs: %s: a marked block is not closed\n", lastfile > "/dev/stderr"; bad = 1
    }
    exit bad
}' $docs || { echo "check-docs: FAILED (malformed markers)"; exit 1; }

# The example at the top of mguard.h: the lines under "   EXAMPLE" up to
# the next heading, indented by 5 spaces; it must print what its last
# comment says.
awk -v out="$out" '
/^   EXAMPLE/ { on = 1; printf "#line %d \"mguard.h\"\n", NR + 1 > (out "/mguard_h_example.c"); next }
on && /^   [A-Z]/ { exit }
on { sub(/^     /, ""); print > (out "/mguard_h_example.c") }
' mguard.h
if [ -s "$out/mguard_h_example.c" ]; then
    sed -n 's|.*// prints: ||p' "$out/mguard_h_example.c" > "$out/mguard_h_example.out"
    line=$(grep -n '^   EXAMPLE' mguard.h | cut -d: -f1)
    printf 'mguard_h_example\tmguard.h\t%s\n' "$((line + 1))" >> "$out/manifest"
else
    echo "check-docs: mguard.h has no EXAMPLE block at the top"; exit 1
fi

[ -f "$out/manifest" ] || { echo "check-docs: no marked program blocks in$docs"; exit 0; }

fail=0
count=0
if command -v timeout >/dev/null 2>&1; then run="timeout 10"; else run=""; fi
tab=$(printf '\t')
# Compile every program first, JOBS at a time (default: the CPUs), then
# run them one by one. A program whose only configuration is the two
# implementation macros links one shared copy of the implementation
# (compiled once, with the same flags) instead of compiling its own: its
# two #define lines are blanked, so compiler lines still match the docs.
# A program with any other STBDS_/MGUARD_ macro compiles its own.
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
printf '#define STB_DS_IMPLEMENTATION\n#define MGUARD_IMPLEMENTATION\n#include "mguard.h"\n' > "$out/shared_impl.c"
$CC $strict -I. $stb -c "$out/shared_impl.c" -o "$out/shared_impl.o" > "$out/shared_impl.log" 2>&1 ||
    { echo "check-docs: the implementation does not compile cleanly:"; sed 's/^/    /' "$out/shared_impl.log"; exit 1; }
k=0
while IFS="$tab" read -r name file line; do
    k=$((k + 1))
    src="$out/$name.c"; impl=""
    if [ "$(grep -c '^#define \(MGUARD\|STB\)' "$src")" = 2 ] &&
       grep -q '^#define STB_DS_IMPLEMENTATION[ \t]*$' "$src" && grep -q '^#define MGUARD_IMPLEMENTATION[ \t]*$' "$src"; then
        sed 's/^#define \(STB_DS\|MGUARD\)_IMPLEMENTATION[ \t]*$//' "$src" > "$out/$name.shared.c"
        src="$out/$name.shared.c"; impl="$out/shared_impl.o"
    fi
    ( $CC $strict -I. $stb "$src" $impl -o "$out/$name" -lm -pthread > "$out/$name.log" 2>&1
      echo $? > "$out/$name.rc" ) &
    [ $((k % jobs)) = 0 ] && wait
done < "$out/manifest"
wait
while IFS="$tab" read -r name file line; do
    count=$((count + 1))
    src="$out/$name.c"
    if [ "$(cat "$out/$name.rc")" != 0 ]; then
        echo "check-docs: $file:$line: the program does not compile cleanly:"
        sed 's/^/    /' "$out/$name.log"
        fail=1
        continue
    fi
    $run "$out/$name" > "$out/$name.stdout" 2> "$out/$name.stderr"
    rc=$?
    if [ $rc != 0 ]; then
        echo "check-docs: $file:$line: the program exited with status $rc:"
        sed 's/^/    /' "$out/$name.stdout" "$out/$name.stderr"
        fail=1
        continue
    fi
    if [ -f "$out/$name.out" ] && ! diff -u "$out/$name.out" "$out/$name.stdout" > "$out/$name.diff"; then
        echo "check-docs: $file:$line: the output differs from the marked output block (- docs, + program):"
        sed 's/^/    /' "$out/$name.diff"
        fail=1
    fi
done < "$out/manifest"

# Fragments: the block's leading preprocessor lines, then the common
# headers and mguard.h, then the rest, each part with its #line.
nfrag=0
if [ -f "$out/fragments" ]; then
    while IFS="$tab" read -r name file line; do
        nfrag=$((nfrag + 1))
        frag="$out/$name.frag"
        src="$out/$name.c"
        lead=$(awk '/^#/ { n++; next } { exit } END { print n + 0 }' "$frag")
        {
            if [ "$lead" -gt 0 ]; then printf '#line %d "%s"\n' "$line" "$file"; head -n "$lead" "$frag"; fi
            printf '#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include "mguard.h"\n'
            printf '#line %d "%s"\n' "$((line + lead))" "$file"
            tail -n +"$((lead + 1))" "$frag"
        } > "$src"
        if ! $CC $strict -Wno-unused-function -I. $stb -fsyntax-only "$src" > "$out/$name.log" 2>&1; then
            echo "check-docs: $file:$line: the fragment does not compile cleanly:"
            sed 's/^/    /' "$out/$name.log"
            fail=1
        fi
    done < "$out/fragments"
fi

[ $fail = 0 ] && echo "check-docs: $count program blocks (the docs' marked ones and mguard.h's example) compile (C99, -Werror) and run as documented; $nfrag fragments compile"
exit $fail
