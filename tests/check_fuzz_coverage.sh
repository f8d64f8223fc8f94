#!/bin/sh
# Every public function of mguard.h (each MGUARDDEF prototype of the API
# part) must be called by the differential decoder, tests/fuzz_decoder.h,
# so that the fuzzer and the seeded differential test reach it. A new
# function without fuzz coverage is named here and fails `make test`.
# A function counts as called when its name appears in the decoder's code
# (comments are left out).
# Usage (from the repository root): sh tests/check_fuzz_coverage.sh [mguard.h [decoder]]
hdr=${1:-mguard.h}
dec=${2:-tests/fuzz_decoder.h}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mguard-fuzzcov.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
sed -n '1,/#endif \/\* MGUARD_H \*\//p' "$hdr" | tr '\n' ' ' | sed 's/;/;\n/g' |
    sed -n 's/.*MGUARDDEF[^(]*[ *]\(mguard_[a-z0-9_]*\) *(.*/\1/p' | sort -u > "$tmp/api"
# the decoder without its comments (block and line), one identifier a line
perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{//[^\n]*}{}g' "$dec" | grep -o 'mguard_[a-z0-9_]*' | sort -u > "$tmp/used"
comm -23 "$tmp/api" "$tmp/used" > "$tmp/missing"
total=$(wc -l < "$tmp/api")
if [ "$total" -lt 100 ]; then
    echo "check-fuzz-coverage: found only $total public functions in $hdr: is the extraction broken?"
    exit 1
fi
if [ -s "$tmp/missing" ]; then
    echo "check-fuzz-coverage: $(wc -l < "$tmp/missing") of $total public functions are never called by $dec:"
    sed 's/^/  /' "$tmp/missing"
    exit 1
fi
echo "check-fuzz-coverage: the decoder calls all $total public functions"
