#!/bin/sh
# Every public function that touches a context goes through the lock of
# thread-safe contexts and the log queue (mguard.h, "10. threads"): it is
# listed in MGUARD__API, which makes its locked variant
# mguard__locked_<name> and its public definition (>>public). A public
# function that is not listed has no definition (the test programs fail to
# link); this check names it, and names a listed function that is not
# public. tests/test_threads.c checks at run time that each call takes the
# lock exactly once.
# Usage (from the repository root): sh tests/check_locked.sh
hdr=${1:-mguard.h}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mguard-locked.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# functions that touch no shared state, and so are not wrapped
unlocked='mguard_ctx_create mguard_status_str mguard_ref_is_null mguard_cache_cause_str mguard_cache_reason_format
mguard_dyn_normalize_name mguard_ledger_kind_str mguard_ledger_diff_items
mguard_ledger_diff_format'
sed -n '1,/#endif \/\* MGUARD_H \*\//p' "$hdr" | tr '\n' ' ' | sed 's/;/;\n/g' |
    sed -n 's/.*MGUARDDEF[^(]*[ *]\(mguard_[a-z0-9_]*\) *(.*/\1/p' | sort -u > "$tmp/api"
printf '%s\n' $unlocked | sort -u > "$tmp/unlocked"
comm -23 "$tmp/api" "$tmp/unlocked" > "$tmp/want"
grep '^    [XVQW](' "$hdr" | sed -n 's/^ *[XQW]([^,]*, \([a-z0-9_]*\),.*/mguard_\1/p; s/^ *V(\([a-z0-9_]*\),.*/mguard_\1/p' |
    sort > "$tmp/listed"
echo mguard_ctx_destroy >> "$tmp/listed"
sort -o "$tmp/listed" "$tmp/listed"
fail=0
for f in listed; do
    if ! cmp -s "$tmp/want" "$tmp/$f"; then
        echo "check-locked: the public functions and the $f ones differ (< missing, > extra):"
        diff "$tmp/want" "$tmp/$f" | grep '^[<>]'
        fail=1
    fi
done
[ $fail = 0 ] && echo "check-locked: all $(wc -l < "$tmp/want") context functions are listed, so made by the lock layer"
exit $fail
