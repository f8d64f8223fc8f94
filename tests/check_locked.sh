#!/bin/sh
# Every public function that touches a context must go through the lock
# layer of thread-safe contexts (mguard.h, "10. threads"): renamed to its
# unlocked implementation by a `#define mguard_x(...)` line, listed in
# MGUARD__API (or, for mguard_ctx_destroy, wrapped by hand) and undone by an
# `#undef` before the wrappers. A new function forgotten there would be
# callable without the lock; this check names it.
# Usage (from the repository root): sh tests/check_locked.sh
hdr=${1:-mguard.h}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mguard-locked.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# functions that touch no shared state, and so are not wrapped
unlocked='mguard_ctx_create mguard_ctx_is_thread_safe mguard_status_str mguard_ref_is_null
mguard_normalize_source_name mguard_ledger_kind_str mguard_ledger_diff_count
mguard_ledger_diff_at mguard_ledger_diff_text'
sed -n '1,/#endif \/\* MGUARD_H \*\//p' "$hdr" | tr '\n' ' ' | sed 's/;/;\n/g' |
    sed -n 's/.*MGUARDDEF[^(]*[ *]\(mguard_[a-z0-9_]*\) *(.*/\1/p' | sort -u > "$tmp/api"
printf '%s\n' $unlocked | sort -u > "$tmp/unlocked"
comm -23 "$tmp/api" "$tmp/unlocked" > "$tmp/want"
sed -n 's/^#define \(mguard_[a-z0-9_]*\)(\.\.\.) mguard__u_[a-z0-9_]*(__VA_ARGS__)$/\1/p' "$hdr" | sort > "$tmp/renamed"
sed -n 's/^#undef \(mguard_[a-z0-9_]*\)$/\1/p' "$hdr" | sort > "$tmp/undone"
sed -n '/^#define MGUARD__API(X, V)/,/^$/p' "$hdr" | sed -n 's/^ *X([^,]*, \([a-z0-9_]*\),.*/mguard_\1/p; s/^ *V(\([a-z0-9_]*\),.*/mguard_\1/p' |
    sort > "$tmp/listed"
echo mguard_ctx_destroy >> "$tmp/listed"
sort -o "$tmp/listed" "$tmp/listed"
fail=0
for f in renamed undone listed; do
    if ! cmp -s "$tmp/want" "$tmp/$f"; then
        echo "check-locked: the public functions and the $f ones differ (< missing, > extra):"
        diff "$tmp/want" "$tmp/$f" | grep '^[<>]'
        fail=1
    fi
done
[ $fail = 0 ] && echo "check-locked: all $(wc -l < "$tmp/want") context functions go through the lock layer"
exit $fail
