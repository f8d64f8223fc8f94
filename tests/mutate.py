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
in the API part rebuilds everything). Those binaries run first, quickest
first; the ones that compile their own copy of the implementation
(test_debug, test_check) are built and run only if none of the others
caught the mutant. Builds and runs go in parallel (-j, default 2) and a
mutant stops at its first failing binary.

A mutant that survives the plain run is built once more under ASan and
UBSan (-fsanitize=address,undefined -fno-sanitize-recover=all, as
`make sanitize` builds the suites) and every binary run again: it is
CAUGHT BY ASAN+UBSAN when one fails there (an off-by-one read past a
buffer, say, that the plain run cannot see). The two scores are reported
apart; a mutant that survives both runs fails `make mutate`. The
sanitized baseline (build and run of the real header) is made at the
first survivor only. --no-sanitize skips the re-run.

When to add a mutant: with every new promise the header makes (a new
function, a new guarantee in a contract, a new invariant of
mguard_ctx_check), add at least one mutant that breaks exactly that promise
and check that `make mutate` catches it. A survivor is either a missing
test (write it) or an equivalent mutant (the program cannot tell it from
the original: move it to EQUIVALENT, below the list, with the reason).
See docs/contributing.md, "Mutation testing".

Usage: python3 tests/mutate.py [-j N] [--only ID[,ID...]] [--list] [--check [--compile]] [--keep] [--no-sanitize]
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
    # ---- 1. context: the hash index and the object registry -----------
    ("ix-del-no-backshift", "lookups find every key after removals (hash index)",
     "if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {",
     "if (i <= j ? (home < i || home > j) : (home < i && home > j)) {"),
    ("ix-reserve-full-load", "the index stays at most half full (lookups end)",
     "if (need * 2 <= cap) return MGUARD_OK;",
     "if (need <= cap) return MGUARD_OK;"),
    # the context's index (mguard__kx)
    ("reg-look-first-group-misses-a-table-key", "a new record's lookup that ends in its first group still sees a table's entry of the object there (known: counted once)",
     "            *known = ctx->kx.slots[pos + MGUARD__KX_FIRST_BIT(m)].key == obj;",
     "            *known = ctx->kx.slots[pos + MGUARD__KX_FIRST_BIT(m)].key == obj && 0;"),
    ("kx-probe-visits-a-group-twice", "a walk of a probe ends after cap / 8 groups (one more revisits a group: a death listed its slot twice)",
     "(step) + MGUARD__KX_GROUP > (kx)->mask)",
     "(step) >= (kx)->mask)"),
    ("kx-take-no-count-up", "an insertion counts up each group its probe passed (a later probe goes on past it)",
     "        if (kx->ovf[pos / MGUARD__KX_GROUP] != MGUARD__KX_STICKY) kx->ovf[pos / MGUARD__KX_GROUP]++;\n        step += MGUARD__KX_GROUP;\n        pos = (pos + step) & kx->mask;\n    }\n    kx->growth_left--;",
     "        step += MGUARD__KX_GROUP;\n        pos = (pos + step) & kx->mask;\n    }\n    kx->growth_left--;"),
    ("kx-take-count-not-sticky", "an overflow count that reached 255 stays (it never wraps to 0 under probes that pass)",
     "        if (kx->ovf[pos / MGUARD__KX_GROUP] != MGUARD__KX_STICKY) kx->ovf[pos / MGUARD__KX_GROUP]++;\n        step += MGUARD__KX_GROUP;\n        pos = (pos + step) & kx->mask;\n    }\n    kx->growth_left--;",
     "        kx->ovf[pos / MGUARD__KX_GROUP]++;\n        step += MGUARD__KX_GROUP;\n        pos = (pos + step) & kx->mask;\n    }\n    kx->growth_left--;"),
    ("kx-erase-no-count-down", "an erasure counts down each group its key's probe passed (exact overflow counts)",
     "        if (kx->ovf[pos / MGUARD__KX_GROUP] != MGUARD__KX_STICKY) kx->ovf[pos / MGUARD__KX_GROUP]--;",
     "        (void)0;"),
    ("kx-erase-count-not-sticky", "an overflow count at 255 is never counted down (it no longer knows how many probes pass)",
     "        if (kx->ovf[pos / MGUARD__KX_GROUP] != MGUARD__KX_STICKY) kx->ovf[pos / MGUARD__KX_GROUP]--;",
     "        kx->ovf[pos / MGUARD__KX_GROUP]--;"),
    ("kx-erase-keeps-tid", "an erased slot says table id 0 (a table's place naming it is dead: mguard__weak_at; a ring slot's hint)",
     "    kx->slots[i].tid = 0;\n    kx->ctrl[i] = MGUARD__KX_EMPTY;",
     "    kx->ctrl[i] = MGUARD__KX_EMPTY;"),
    ("kx-probe-ends-early", "a probe ends at the first group whose overflow count is 0 (not before)",
     "#define MGUARD__KX_ON(kx, pos) ((kx)->ovf[(pos) / MGUARD__KX_GROUP] != 0)",
     "#define MGUARD__KX_ON(kx, pos) ((kx)->ovf[(pos) / MGUARD__KX_GROUP] > 1)"),
    ("kx-take-not-counted", "growth_left: taking an EMPTY slot decrements it (one slot in 8 stays EMPTY: probes end)",
     "    }\n    kx->growth_left--;\n    kx->ctrl[i] = (unsigned char)MGUARD__KX_TAG(h);",
     "    }\n    kx->ctrl[i] = (unsigned char)MGUARD__KX_TAG(h);"),
    ("kx-erase-not-counted", "growth_left: an erase gives the slot back (EMPTY at once)",
     "    kx->ctrl[i] = MGUARD__KX_EMPTY;\n    kx->growth_left++;",
     "    kx->ctrl[i] = MGUARD__KX_EMPTY;"),
    ("kx-rehash-drops-pending", "a rehash moves pending slots too (an out-of-memory death's callback may grow the index)",
     "        if (kx->ctrl[i] < MGUARD__KX_EMPTY || kx->ctrl[i] == MGUARD__KX_PENDING) {",
     "        if (kx->ctrl[i] < MGUARD__KX_EMPTY) {"),
    ("kx-rehash-pending-revived", "a rehash keeps a pending slot pending (out of every lookup)",
     "            if (kx->ctrl[i] == MGUARD__KX_PENDING) nk.ctrl[j] = MGUARD__KX_PENDING;\n",
     "\n"),
    ("kx-rehash-tables-not-told", "a rehash tells each table where its entries went",
     "            if (s->tid) mguard__kx_moved(ctx, s, j);",
     "            if (!ctx) mguard__kx_moved(ctx, s, j);"),
    ("kx-reserve-never-grows", "kx_reserve grows a table whose EMPTY slots that may be taken run short",
     "    if (kx->growth_left >= n) {\n        if (need * 9 > cap) kx->sparse = 0;",
     "    if (cap) {\n        if (need * 9 > cap) kx->sparse = 0;"),
    ("kx-reserve-grows-early", "kx_reserve grows only when growth_left < n (a table may be 7/8 full)",
     "    if (kx->growth_left >= n) {\n        if (need * 9 > cap) kx->sparse = 0;",
     "    if (kx->growth_left > n) {\n        if (need * 9 > cap) kx->sparse = 0;"),
    ("kx-reserve-no-shrink", "an insertion into an index a ninth full or less (over 64 slots) shrinks it",
     "        if (cap <= 64 || need * 9 > cap) return MGUARD_OK;",
     "        if (1) return MGUARD_OK;"),
    ("kx-shrink-threshold", "the index shrinks at a ninth full, not before",
     "        if (cap <= 64 || need * 9 > cap) return MGUARD_OK;",
     "        if (cap <= 64 || need * 8 > cap) return MGUARD_OK;"),
    ("kx-shrink-small-index", "an index of 64 slots or fewer never shrinks",
     "        if (cap <= 64 || need * 9 > cap) return MGUARD_OK;",
     "        if (cap <= 32 || need * 9 > cap) return MGUARD_OK;"),
    ("kx-shrink-waits", "an index a ninth full or less shrinks only once cap / 8 reservations in a row found it so (a refill does not shrink it)",
     "        if (++kx->sparse < cap / 8) return MGUARD_OK;",
     "        if (++kx->sparse < 1) return MGUARD_OK;"),
    ("kx-shrink-wait-length", "the shrink comes at the (cap / 8)th sparse reservation in a row, not later",
     "        if (++kx->sparse < cap / 8) return MGUARD_OK;",
     "        if (++kx->sparse < cap / 8 + 1) return MGUARD_OK;"),
    ("kx-sparse-run-no-reset", "a reservation that finds the index over a ninth full ends the run of sparse ones",
     "        if (need * 9 > cap) kx->sparse = 0;",
     "        if (need * 9 > cap) kx->sparse += 0;"),
    ("kx-shrink-target", "a shrink makes the index about 7/16 full (the smallest power of two it fills to 7/16 at most)",
     "        for (ncap = 8; need * 16 > ncap * 7; ncap *= 2) {}",
     "        for (ncap = 8; need * 8 > ncap * 7; ncap *= 2) {}"),
    ("kx-find-known-stops-at-hit", "kx_find's known: the key's slot under another id counts even when it lies past the hit",
     "            if ((hit || tid == MGUARD__TID_NONE) && (!known || *known)) return hit;",
     "            if (hit || (tid == MGUARD__TID_NONE && *known)) return hit;"),
    ("kx-known-stops-early", "a probe that only asks whether an object is known says so at its first slot",
     "            if ((hit || tid == MGUARD__TID_NONE) && (!known || *known)) return hit;",
     "            if ((hit || tid == MGUARD__TID_NONE) && (!known || !*known)) return hit;"),
    ("kx-find-known-never", "kx_find's known: a key with a slot under another id is known",
     "            else if (known) *known = true;",
     "            else if (known) *known = false;"),
    ("kx-match-any-byte", "a probe matches only full slots (never an empty, deleted or pending slot's stale key)",
     "    return (x - MGUARD__KX_LSB) & ~x & MGUARD__KX_MSB;\n}",
     "    return (x - MGUARD__KX_LSB) & MGUARD__KX_MSB;\n}"),
    ("kx-match-wrong-tag", "a probe matches the slots whose control byte is the key's tag",
     "    uint64_t x = g ^ (MGUARD__KX_LSB * tag);",
     "    uint64_t x = g ^ (MGUARD__KX_LSB * (tag ^ 1u));"),
    ("reg-look-not-known", "reg_look's known: an object held by tables alone is known (a record made for it does not count it again)",
     "    (void)mguard__kx_find(&ctx->kx, obj, 0, h, known);\n    return 0;",
     "    *known = false;\n    return 0;"),
    ("serial-reused", "a reused address never revives an entry, ref, watcher or tag",
     "    ctx->kx.slots[i].v.u = ++ctx->next_serial;",
     "    ctx->kx.slots[i].v.u = ctx->next_serial + 1;"),
    ("registry-live-count", "mguard_ctx_get_stats counts the objects known exactly (a death forgets its object, on both paths)",
     "    ctx->live_objs--;\n",
     "\n"),
    ("registry-new-double-counts", "a record made for a key a table holds does not count the object again",
     "    if (!known) ctx->live_objs++;",
     "    if (known || !known) ctx->live_objs++;", 0),
    ("weak-insert-double-counts", "a key entering a second table does not count the object again",
     "    if (!known) ctx->live_objs++;",
     "    (void)known;\n    ctx->live_objs++;", 1),
    ("registry-recs-not-counted", "live_recs counts the records (a freed one leaves the count)",
     "    ctx->live_recs--;\n",
     "\n"),
    ("reg-drop-forgets-table-key", "dropping a record keeps the object known while a table holds it",
     "    mguard__reg_free(ctx, r, (size_t)(s - ctx->kx.slots));\n    if (!known) ctx->live_objs--;",
     "    mguard__reg_free(ctx, r, (size_t)(s - ctx->kx.slots));\n    ctx->live_objs--;"),
    ("weak-remove-forgets-other-slots", "removing a key from one table keeps it known while another table or a record holds it",
     "    if (!known) ctx->live_objs--;\n    if (!dtor) return;",
     "    if (known || !known) ctx->live_objs--;\n    if (!dtor) return;"),
    ("side-record-leaks", "a record's side record goes with it (and is reused)",
     "        sd->w.vacant.next = ctx->free_side;\n        ctx->free_side = o->side;\n        ctx->live_sides--;\n",
     "\n"),
    ("side-record-not-cleared", "a reused side record starts empty (no watchers, count 0)",
     "        memset(&ctx->sides[x - 1], 0, sizeof ctx->sides[x - 1]);",
     "        ctx->sides[x - 1].w.vacant.mark = 0;"),
    ("watch-self-two-records", "an object that watches itself has one record",
     "        if (guard == obj) {\n            g = r;\n        } else {",
     "        if (0) {\n            g = r;\n        } else {"),
    ("dyn-any-unquoted-key-is-index", "only a decimal integer subscript is an integer group key (L[x] and L[00] are strings)",
     "            *is_index = e > d && (*d != '0' || (e == d + 1 && d == p)) && *e == ']';   /* 0, not -0 */",
     "            *is_index = e > d || *e != ']';"),
    ("dyn-path-no-reference", "a path whose text was interned elsewhere holds its own copy (issue 23)",
     "        in = in ? mguard__str_take(in) : mguard__str_intern(ctx, norm);   /* the record's reference */",
     "        if (!in) in = mguard__str_intern(ctx, norm);"),
    ("weak-no-shrink", "a compacted table far below its peak gives memory back (issue 23)",
     "        if (ncap < t->cap) (void)mguard__weak_resize(t, ncap);",
     "        if (ncap < t->cap && 0) (void)mguard__weak_resize(t, ncap);"),
    ("watch-second-loses-inline", "a second watcher keeps the first (inline) one",
     "            list[0] = sd->w.one;",
     "            list[0].fn = NULL;"),
    ("watch-list-giveback-drops-inline", "a watcher added by a callback survives the list's reuse",
     "            if (k) w[0] = sd->w.one;",
     "            k = 0;"),
    ("intern-copies-twice", "one interned copy per string (same pointer for equal text)",
     "    if (found) return mguard__str_take(mguard__str_recent(ctx, found));\n",
     "    (void)found;\n"),
    ("intern-first-memo-any-text", "a repeated intern returns the copy of the same text only (the latest string's fast path)",
     "    if (ctx->recent[0] && strcmp(ctx->recent[0], s) == 0) return mguard__str_take(ctx->recent[0]);",
     "    if (ctx->recent[0]) return mguard__str_take(ctx->recent[0]);"),
    ("intern-memo-any-text", "a repeated intern returns the copy of the same text only",
     "    if (ctx->recent[1] && strcmp(ctx->recent[1], s) == 0) return ctx->recent[1];",
     "    if (ctx->recent[1]) return ctx->recent[1];"),
    ("intern-last-release-keeps", "a string nothing holds any more is freed (issue 23)",
     "    if (h->refs == MGUARD__STR_STICKY || --h->refs) return;",
     "    if (h->refs == MGUARD__STR_STICKY || --h->refs || h->pos != MGUARD__STR_STICKY) return;"),
    ("intern-release-no-retarget", "a string moved by a release is found at its new position",
     "        ctx->str_index.slots[i].idx = h->pos + 1;",
     "        (void)i;"),
    ("intern-check-nothing", "mguard_ctx_check finds every interned string by its content",
     "        MGUARD__CHECK(ctx, h->hash == mguard__hash_str(ctx->strs[i]) && mguard__str_find_h(ctx, ctx->strs[i], h->hash) == ctx->strs[i],",
     "        MGUARD__CHECK(ctx, 1,"),
    ("ctx-destroy-inside-callback", "mguard_ctx_destroy is refused inside the context's own callbacks",
     "    if (ctx->in_callback || ctx->destroying) {",
     "    if (ctx->destroying) {"),
    # ---- 3. weak key tables -------------------------------------------
    ("weak-overwrite-no-dtor", "every stored value is destroyed exactly once (overwrite)",
     "        memmove(e, value, t->value_size);\n        mguard__call_value(ctx, t->dtor, NULL, t->user, key, old);\n    } else {",
     "        memmove(e, value, t->value_size);\n    } else {"),
    ("weak-overwrite-big-no-dtor", "every stored value is destroyed exactly once (overwrite of a value over 256 bytes)",
     "        mguard__call_value(ctx, t->dtor, NULL, t->user, key, old);\n        mguard__free(ctx, old);",
     "        mguard__free(ctx, old);"),
    ("weak-remove-no-dtor", "every stored value is destroyed exactly once (remove)",
     "        mguard__call_value(ctx, dtor, NULL, user, key, tmp);",
     "        (void)user;"),
    ("weak-take-destroys-value", "mguard_weak_take never destroys the value it hands out (issue 25)",
     "    mguard_value_dtor dtor = out ? NULL : t->dtor;",
     "    mguard_value_dtor dtor = t->dtor;"),
    ("weak-take-copies-nothing", "mguard_weak_take copies the value into out (issue 25; the general path)",
     "    if (out) memmove(out, mguard__kvalue(t, s), t->value_size);",
     "    if (out && !out) memmove(out, mguard__kvalue(t, s), t->value_size);", 0),
    ("weak-take-fast-copies-nothing", "mguard_weak_take copies the value into out (the inline fast path)",
     "    if (out) memmove(out, mguard__kvalue(t, s), t->value_size);",
     "    if (out && !out) memmove(out, mguard__kvalue(t, s), t->value_size);", 1),
    ("weak-take-null-out-keeps-value", "mguard_weak_take with a NULL out destroys the value (issue 26: remove folded into take)",
     "    mguard_value_dtor dtor = out ? NULL : t->dtor;",
     "    mguard_value_dtor dtor = NULL;"),
    ("weak-set-oom-leaks-copy", "ENOMEM changes nothing and leaks nothing (new key with a value over 256 bytes)",
     "    if (st) {\n        if (tmp != small) mguard__free(ctx, tmp);\n        return st;\n    }",
     "    if (st) {\n        return st;\n    }"),
    ("weak-clear-spares-last", "clear destroys every value",
     "mguard__weak_drain(t, t->ctx->next_stamp);",
     "mguard__weak_drain(t, t->ctx->next_stamp - 1);"),
    ("weak-compact-no-epoch", "iteration is exact across compaction (the iterator notices it)",
     "        t->len = n;\n        t->epoch++;\n",
     "        t->len = n;\n"),
    ("weak-iter-resume-one-too-far", "iteration is exact across compaction (resumes by stamp at the next live entry)",
     "if (MGUARD__STAMP(t, t->order[mid]) < it->seq_) lo = mid + 1; else hi = mid;",
     "if (MGUARD__STAMP(t, t->order[mid]) <= it->seq_) lo = mid + 1; else hi = mid;"),
    ("weak-iter-resume-repeats", "iteration is exact across compaction (never visits an entry twice)",
     "        it->seq_ = MGUARD__STAMP(t, t->order[i]) + 1;   /* the next one to look for */",
     "        it->seq_ = MGUARD__STAMP(t, t->order[i]);"),
    ("weak-at-shows-pending", "a dying key's pending entry is dead to its pinned table (iterators, compaction, the check)",
     "    return t->pinned && kx->ctrl[k] >= MGUARD__KX_EMPTY ? NULL : s;",
     "    return s;"),
    ("weak-at-ignores-pos", "a place is live only if its slot names this position (a slot reused by a later entry of the table)",
     "    if (s->tid != t->tid || s->pos != i) return NULL;",
     "    if (s->tid != t->tid) return NULL;"),
    ("weak-at-ignores-tid", "a place is live only if its slot names this table (an erased slot says id 0; another table's entry)",
     "    if (s->tid != t->tid || s->pos != i) return NULL;",
     "    if (s->pos != i) return NULL;"),
    ("weak-at-no-bound", "a place naming a slot past a shrunk index is dead (never read)",
     "    if (k > kx->mask) return NULL;\n",
     "\n"),
    ("weak-destroy-during-drain", "a table destroyed by a destructor of its own clear is destroyed once, after the clear",
     "    if (t->busy) return;   /* the clear in progress finishes the job */\n",
     "\n"),
    ("weak-compact-positions-stale", "order compaction updates each moved entry's slot (its pos): a remove or a death after it reaches the entry",
     "                ctx->kx.slots[el.slot].pos = n;\n",
     "                (void)ctx;\n"),
    ("weak-compact-while-pinned", "entries do not move under an out-of-memory destructor (ENOMEM instead)",
     "    if (t->pinned) return MGUARD_ENOMEM; /* entries must not move now */\n",
     "\n"),
    ("weak-stamps-not-advanced", "stamps grow along a table's order (each entry made counts)",
     "    t->order[t->len].stamp = (uint32_t)(ctx->next_stamp++ - t->base);",
     "    t->order[t->len].stamp = (uint32_t)(ctx->next_stamp - t->base);"),
    ("weak-rebase-never", "stamps never span 2^32: the tables renumber them when one's would",
     "    if (!st && t->ctx->next_stamp - t->base >= 0xffffffffu) st = mguard__weak_rebase(t->ctx);",
     "    if (!st && t->ctx->next_stamp - t->base >= 0xffffffffu && !t) st = mguard__weak_rebase(t->ctx);"),
    ("weak-rebase-count-wrong", "a renumbering leaves the context's count at the number of entries ranked",
     "    ctx->next_stamp = total;",
     "    ctx->next_stamp = total + 1;"),
    ("weak-rebase-one-table", "a renumbering ranks every table's entries together (a death's order across tables)",
     "        if (!t->len) t->base = total;\n        else { h[n].t = t; h[n].pos = 0; n++; }",
     "        if (!t->len) t->base = total;\n        else if (n == 0) { h[n].t = t; h[n].pos = 0; n++; }"),
    ("weak-rebase-heap-unsorted", "the renumbering's merge takes the oldest entry next",
     "        if (l < n && MGUARD__RN_KEY(h[l]) < MGUARD__RN_KEY(h[m])) m = l;",
     "        if (l < n && MGUARD__RN_KEY(h[l]) > MGUARD__RN_KEY(h[m])) m = l;"),
    ("weak-rebase-nomem-changes", "a renumbering out of memory changes nothing, and the set fails",
     "    if (!st && t->ctx->next_stamp - t->base >= 0xffffffffu) st = mguard__weak_rebase(t->ctx);",
     "    if (!st && t->ctx->next_stamp - t->base >= 0xffffffffu) (void)mguard__weak_rebase(t->ctx);"),
    ("weak-rebase-before-room", "a set that fails for want of room renumbers nothing (the renumbering comes last)",
     "    mguard_status st = mguard__weak_room(t);\n    if (!st && t->ctx->next_stamp - t->base >= 0xffffffffu) st = mguard__weak_rebase(t->ctx);",
     "    mguard_status st = t->ctx->next_stamp - t->base >= 0xffffffffu ? mguard__weak_rebase(t->ctx) : MGUARD_OK;\n    if (!st) st = mguard__weak_room(t);"),
    ("weak-rebase-iterator-not-ended", "a walk paused across a rebase ends, logged",
     "    for (t = ctx->tables; t; t = t->next) t->rebased = ++t->epoch;",
     "    for (t = ctx->tables; t; t = t->next) t->rebased = t->epoch++;"),
    ("weak-rebase-drain-bound-stays", "a clear's bound moves along with a renumbering (entries there at its start all go, later ones stay)",
     "        if (d->bound != UINT64_MAX) d->bound = d->moved ? d->nb : total;",
     "        (void)d;"),
    ("weak-drain-ends-at-rebase", "a clear outlasts a renumbering caused by its destructors",
     "        if (it.epoch_ < t->rebased) it = mguard__weak_iterate(t);",
     "        (void)0;"),
    ("weak-compact-values-stay", "values over 8 bytes move with their entries when the order compacts",
     "                if (t->vstride) memcpy(t->vals + (size_t)n * t->vstride, t->vals + (size_t)i * t->vstride, t->vstride);\n",
     "\n"),
    ("weak-resize-shrinks-values-first", "a shrink cuts the value array only after the order (out of memory, the value array is never the smaller)",
     "    if (t->vstride && grow) {",
     "    if (t->vstride) {"),
    ("tid-take-not-popped", "a reused table or cache id leaves the free list (two tables never share an id)",
     "        memcpy(freeid, (unsigned char *)*arr + (size_t)id * sizeof(void *), sizeof *freeid);\n        return id;",
     "        return id;"),
    ("tid-put-not-reused", "a destroyed table's or cache's id is reused (the id array stays as large as the most at once)",
     "    memcpy(e, freeid, sizeof *freeid);\n    *freeid = id;\n}",
     "    memcpy(e, freeid, sizeof *freeid);\n}"),
    # ---- 2. object lifetimes ------------------------------------------
    ("fast-set-skips-dtor", "mguard_weak_set's fast path leaves a table with a destructor to the general path (the old value is destroyed)",
     "    if (!MGUARD__PLAIN_WEAK(t) || t->dtor || !value || t->destroying) return false;",
     "    if (!MGUARD__PLAIN_WEAK(t) || !value || t->destroying) return false;"),
    ("fast-set-null-value", "mguard_weak_set with a NULL value is refused (EINVAL, logged), even for a key present",
     "    if (!MGUARD__PLAIN_WEAK(t) || t->dtor || !value || t->destroying) return false;",
     "    if (!MGUARD__PLAIN_WEAK(t) || t->dtor || t->destroying) return false;"),
    ("fast-set-any-table", "mguard_weak_set's fast path takes only a live table of a default context (a thread-safe one locks, a dead one is refused)",
     "    if (!MGUARD__PLAIN_WEAK(t) || t->dtor || !value || t->destroying) return false;",
     "    if (!t || t->dtor || !value || t->destroying) return false;"),
    ("fast-remove-skips-dtor", "mguard_weak_take's fast path leaves a table with a destructor, NULL out, to the general path (the value is destroyed)",
     "    if (!MGUARD__PLAIN_WEAK(t) || (t->dtor && !out)) return false;",
     "    if (!MGUARD__PLAIN_WEAK(t)) return false;"),
    ("fast-remove-forgets-other-slots", "mguard_weak_take's fast path keeps the key known while another table or a record holds it",
     "    if (!known) t->ctx->live_objs--;\n    return true;",
     "    t->ctx->live_objs--;\n    return true;"),
    ("fast-remove-live-count", "mguard_weak_take's fast path counts the entry out of its table",
     "    t->live--;\n    mguard__kx_erase(kx, (size_t)(s - kx->slots), h);",
     "    mguard__kx_erase(kx, (size_t)(s - kx->slots), h);"),
    ("fast-next-ignores-epoch", "mguard_weak_next's fast path falls back when the table was compacted since the last step (resume by stamp)",
     "    return MGUARD__PLAIN_WEAK(t) && it->epoch_ == t->epoch && mguard__weak_step(t, it) != NULL;",
     "    return MGUARD__PLAIN_WEAK(t) && mguard__weak_step(t, it) != NULL;"),
    ("fast-next-any-table", "mguard_weak_next's fast path takes only a live table of a default context (a destroyed one ends the walk)",
     "    return MGUARD__PLAIN_WEAK(t) && it->epoch_ == t->epoch && mguard__weak_step(t, it) != NULL;",
     "    return t && it->epoch_ == t->epoch && mguard__weak_step(t, it) != NULL;"),
    ("death-values-before-watchers", "order of callbacks: watchers, then each table's value callbacks",
     "        if (nw) mguard__death_fire(ctx, obj, serial, w, nw, &cq);\n        else MGUARD__EV_NAME(ctx, obj, &cq);\n        for (i = 0; i < nt; i++)\n            mguard__call_value(ctx, pend[i].dtor, pend[i].on_death, pend[i].user, obj, buf + pend[i].off);",
     "        for (i = 0; i < nt; i++)\n            mguard__call_value(ctx, pend[i].dtor, pend[i].on_death, pend[i].user, obj, buf + pend[i].off);\n        if (nw) mguard__death_fire(ctx, obj, serial, w, nw, &cq);\n        else MGUARD__EV_NAME(ctx, obj, &cq);"),
    ("death-tables-reversed", "order of callbacks: tables in the order the key entered them",
     "        for (i = 0; i < nt; i++)\n            mguard__call_value(ctx, pend[i].dtor,",
     "        for (i = nt; i-- > 0;)\n            mguard__call_value(ctx, pend[i].dtor,"),
    ("death-dtor-before-on-death", "order of callbacks: key_death before the value destructor",
     "        if (on_death) on_death(key, bytes, user);\n        if (dtor) dtor(bytes, user);",
     "        if (dtor) dtor(bytes, user);\n        if (on_death) on_death(key, bytes, user);"),
    ("death-skips-on-key-death", "a key's death calls each table's key_death",
     "        pend[i].on_death = t->on_death;",
     "        pend[i].on_death = NULL;"),
    ("death-no-copy-for-key-death-only", "a key's death hands each table's key_death its own value (a table with key_death and no destructor)",
     "        mguard__copy_value(buf + off, mguard__kvalue(t, &kx->slots[pend[i].slot]), t->value_size);",
     "        if (t->dtor) mguard__copy_value(buf + off, mguard__kvalue(t, &kx->slots[pend[i].slot]), t->value_size);"),
    ("death-slots-drops-callback-tables", "a death detaches at once only the entries of tables with no callback (the others are called)",
     "        if (!t->dtor && !t->on_death) {",
     "        if (!t->dtor || !t->on_death) {"),
    ("death-slots-live-count", "a death detaching an entry of a table with no callback leaves its live count right",
     "        if (!t->dtor && !t->on_death) {\n            t->live--;\n",
     "        if (!t->dtor && !t->on_death) {\n"),
    ("death-phase2-skips-cache", "a death of a cache key destroys the dropped cache values (phase 2 runs for them alone)",
     "    if (nt || nw || cq.hpos || cq.ev || (ctx->lk && serial) || ctx->hooking) {",
     "    if (nt || nw || (ctx->lk && serial) || ctx->hooking) {"),
    ("death-phase2-skips-guard-wait", "a death on a thread-safe context waits for another thread's watcher of the object (phase 2 runs for the wait alone)",
     "    if (nt || nw || cq.hpos || cq.ev || (ctx->lk && serial) || ctx->hooking) {",
     "    if (nt || nw || cq.hpos || cq.ev || ctx->hooking) {"),
    ("death-phase2-skips-hook-wait", "a death waits for a ledger hook running on the object (phase 2 runs for the wait alone)",
     "    if (nt || nw || cq.hpos || cq.ev || (ctx->lk && serial) || ctx->hooking) {",
     "    if (nt || nw || cq.hpos || cq.ev || (ctx->lk && serial)) {"),
    ("death-revive-while-dying", "a dying object cannot be registered again by its callbacks",
     "        if (d->obj == obj) return true;",
     "        if (d->obj == obj) return false;"),
    ("death-double-destroy-silent", "a second mguard_on_destroy inside the first is logged",
     "        if (ctx->dying && mguard__is_dying(ctx, obj))\n            mguard__logf(ctx, MGUARD_LOG_ON_DESTROY_TWICE, \"mguard_on_destroy\", mguard__named(ctx, obj, nm));",
     "        (void)nm;"),
    ("kwalk-pending-misses", "out of memory during a death: every pending entry's value is destroyed (the walk for them matches PENDING bytes)",
     "    mguard__kwalk_start(kx, &w, h, MGUARD__KX_PENDING);",
     "    mguard__kwalk_start(kx, &w, h, MGUARD__KX_TAG(h));"),
    ("death-in-place-not-pending", "out of memory during a death: each entry's slot is PENDING (out of every lookup) before any callback",
     "        kx->ctrl[k] = MGUARD__KX_PENDING;\n",
     "\n"),
    ("death-slots-unsorted", "a death calls the tables' callbacks in the order obj entered them (sorted by stamp, not by slot)",
     "    for (i = 1; i < n && i < cap; i++) {",
     "    for (i = n; i < n && i < cap; i++) {"),
    ("death-list-overflows-stack", "a key in more tables than the stack list holds gets a heap list",
     "    if (nt > MGUARD__DEATH_LIST) {",
     "    if (nt > 4 * MGUARD__DEATH_LIST) {"),
    ("death-heap-list-not-filled", "the heap list of a death lists every entry",
     "        (void)mguard__death_slots(ctx, obj, h, pend, nt, &rslot, &found);\n",
     "\n"),
    ("death-in-place-value-in-slot", "an out-of-memory death hands a value kept in a slot over as a copy (a callback may move the slots)",
     "        mguard__call_value(ctx, t->dtor, t->on_death, t->user, obj, mguard__kvalue(t, &v));",
     "        (void)v;\n        mguard__call_value(ctx, t->dtor, t->on_death, t->user, obj, mguard__kvalue(t, s));"),
    ("death-in-place-unpins-before-call", "an out-of-memory death keeps each table pinned while its value's callbacks run",
     "        mguard__call_value(ctx, t->dtor, t->on_death, t->user, obj, mguard__kvalue(t, &v));\n        if (--t->pinned == 0 && t->zombie) mguard__weak_free(t);",
     "        if (--t->pinned == 0 && t->zombie) mguard__weak_free(t);\n        mguard__call_value(ctx, t->dtor, t->on_death, t->user, obj, mguard__kvalue(t, &v));"),
    # ---- 4. weak refs -------------------------------------------------
    ("serial-not-compared", "a ref or watcher of a dead object never matches a new object at its address",
     "    return s && s->v.u == serial ? s->pos : 0;",
     "    return s && (s->v.u == serial || serial) ? s->pos : 0;"),
    ("ref-not-pinned", "a weak ref keeps its object's record (and serial) while the object lives",
     "    ctx->objs[r - 1].flags |= MGUARD__F_PINNED;\n    ref.obj_ = obj;",
     "    ref.obj_ = obj;"),
    ("ref-get-retained-ignores-refusal", "mguard_ref_get_retained returns NULL when try_retain refuses",
     "    if (obj && try_retain && !try_retain(obj, user)) return NULL;",
     "    if (obj && try_retain) (void)try_retain(obj, user);"),
    ("weak-get-copy-copies-nothing", "mguard_weak_get_copy copies the value out",
     "    mguard__copy_value(out, p, t->value_size);   /* out may overlap a stored value */",
     "    (void)out;"),
    # ---- 5. mutation trackers -----------------------------------------
    ("fire-calls-dead-guard", "a guard destroyed by an earlier callback is not called",
     "        if (!fn || !mguard__find_serial(ctx, guard, w[i].guard_serial)) continue;",
     "        if (!fn) continue;"),
    ("unwatch-pending-fires", "a watcher unwatched during emission does not fire",
     "                f->w[k].fn = NULL;\n",
     "\n"),
    ("mutation-not-counted", "mguard_mutation_count counts every mutation",
     "    if (sd) sd->mutations++;\n",
     "\n"),
    ("mutation-attr-dropped", "watchers receive the mutated attribute's name",
     "    mguard__fire(ctx, &f, attr);",
     "    mguard__fire(ctx, &f, attr ? \"\" : NULL);"),
    ("watch-oom-silent", "ENOMEM leaves things unchanged and says so (second watcher)",
     "            if (!list) { mguard__logf(ctx, MGUARD_LOG_NOMEM, \"mguard_watch\"); return MGUARD_ENOMEM; }\n            list[0] = sd->w.one;",
     "            if (!list) return MGUARD_OK;\n            list[0] = sd->w.one;"),
    ("prune-watchers-drops-live", "pruning dead watchers keeps every live one",
     "        if (mguard__find_serial(ctx, ws[i].guard, ws[i].guard_serial)) ws[n++] = ws[i];",
     "        if (!mguard__find_serial(ctx, ws[i].guard, ws[i].guard_serial)) ws[n++] = ws[i];"),
    ("watch-duplicate-registered", "mguard_watch answers EEXIST for an (obj, guard, fn) already waiting",
     "ws[i].guard_serial == gs) return MGUARD_EEXIST;",
     "ws[i].guard_serial == gs) break;"),
    ("unwatch-inline-still-fires", "an unwatched inline watcher is gone (it does not fire)",
     "        else if (!n) memset(&sd->w.one, 0, sizeof sd->w.one);",
     "        else (void)n;"),
    ("take-watchers-keeps-list-flag", "a death or mutation takes the heap list out of the side record (the record keeps none)",
     "        o->flags &= ~(uint32_t)MGUARD__F_WLIST;\n",
     "\n"),
    ("watch-dying-after-reserve", "a watch of a dying guard is EINVAL even when memory runs out (refused before any reservation)",
     "    st = mguard__refuse_dying(ctx, both, (size_t)!r + (size_t)!g, \"mguard_watch\");",
     "    st = mguard__refuse_dying(ctx, both, (size_t)!r, \"mguard_watch\");"),
    # ---- 6. generation tags -------------------------------------------
    ("gen-advance-past-limit", "the generation stops at LONG_MAX, logged (no signed overflow)",
     "    if (ctx->generation == LONG_MAX) { mguard__logf(ctx, MGUARD_LOG_GEN_LIMIT, \"mguard_gen_advance\"); return LONG_MAX; }",
     "    if (ctx->generation == LONG_MAX) return LONG_MAX;"),
    ("gen-tag-generation-zero", "a tag records the current generation",
     "    if (flag == MGUARD__F_TAGGED) ctx->objs[r - 1].gen = ctx->generation;",
     "    if (flag == MGUARD__F_TAGGED) ctx->objs[r - 1].gen = 0;"),
    ("gen-check-any-generation", "a tag is new only from the generation asked about on",
     "return ctx->objs[r - 1].gen >= since;",
     "return ctx->objs[r - 1].gen >= since - since;"),
    ("gen-strict-ignored", "a strict context counts an untagged object as new",
     "    if (!ctx->strict_gen) return false;",
     "    if (ctx->strict_gen || !ctx->strict_gen) return false;"),
    ("gen-strict-reports-every-time", "a strict context reports the first untagged object only",
     "        ((mguard_ctx *)mguard__unconst(ctx))->warned_untagged = true;",
     "        ;"),
    ("gen-clear-keeps-generation", "mguard_gen_clear resets the generation",
     "    ctx->generation = 0;\n",
     "\n"),
    ("gen-is-dynamic-and", "an object is dynamic if its class is, or it is young",
     "    if (r && (ctx->objs[r - 1].flags & MGUARD__F_CLASS_DYN)) return true;",
     "    if (r && (ctx->objs[r - 1].flags & MGUARD__F_CLASS_DYN) && mguard__gen_since(ctx, obj, ctx->generation, \"mguard_gen_is_dynamic\")) return true;"),
    # ---- 7. scope tracker ---------------------------------------------
    ("scope-exit-after-destroying-clock", "an exit whose clock destroyed the tracker is refused",
     "    if (s->destroying) st = MGUARD_EINVAL;\n",
     "    if (0) st = MGUARD_EINVAL;\n"),
    ("scope-warn-dedup-on-cut-line", "two warnings that differ past a log line's length are both logged",
     "    if (mguard__scope_dedup(s, full ? full : buf)) mguard__log_line(ctx, code, buf);",
     "    if (mguard__scope_dedup(s, buf)) mguard__log_line(ctx, code, buf);"),
    ("scope-enter-newcomer-after-clock", "an enter whose clock destroyed comp is refused, though a newcomer at its address is named",
     "        if (s->destroying || look.died || !mguard__scope_entry(s, comp)) st = MGUARD_EINVAL;",
     "        if (s->destroying || !mguard__scope_entry(s, comp)) st = MGUARD_EINVAL;"),
    ("scope-lookup-newcomer-after-walk", "a lookup whose walk destroyed comp fails, though a newcomer at its address is named",
     "        if (!st && look.died) st = MGUARD_EINVAL;   /* died meanwhile */",
     "        if (!st && look.died && !look.obj) st = MGUARD_EINVAL;   /* died meanwhile */"),
    ("scope-exit-pops-newcomer", "an exit whose clock destroyed comp leaves a newcomer's frame at its address alone",
     "        if (look.died && !s->destroying) st = MGUARD_NOT_FOUND;",
     "        if (look.died && !s->destroying && !look.obj) st = MGUARD_NOT_FOUND;"),
    ("scope-walk-judges-before-flush", "a walk delivers the lines it queued before judging its next parent alive (a logger may destroy it)",
     "        MGUARD__FLUSH(ctx);\n        if (s->destroying) return MGUARD_EINVAL;\n        t = &w->todo[w->ntodo - 1];",
     "        t = &w->todo[w->ntodo - 1];"),
    ("scope-attach-dying-late", "an attach of a child in its own death is refused before the parent's lookup (no callout, no ENOMEM)",
     "    if (mguard__refuse_dying(s->hd.ctx, &child, 1, \"mguard_scope_attach\")) return MGUARD_EINVAL;\n    s->busy++;",
     "    s->busy++;"),
    ("scope-enter-dying-says-unnamed", "enter of an unnamed component in its own death logs that it is dying, not that it has no name",
     "        if (!mguard__refuse_dying(s->hd.ctx, &comp, 1, \"mguard_scope_enter\")) {",
     "        if (1) {"),
    ("scope-exit-out-of-order-silent", "scope nesting: an out-of-order exit is warned about",
     "    } else if (i == s->nframes) {\n        mguard__scope_pop(s, i - 1, now);",
     "    } else if (i >= 1) {\n        mguard__scope_pop(s, i - 1, now);"),
    ("scope-parents-truncated-count", "mguard_scope_parents returns the full count whatever cap is",
     "    for (i = 0; i < s->nactive && i < cap && out; i++) out[i] = s->recs[s->active[i]].name;\n    return s->nactive;",
     "    for (i = 0; i < s->nactive && i < cap && out; i++) out[i] = s->recs[s->active[i]].name;\n    return i;"),
    ("scope-current-outermost", "scope nesting: the current scope (mguard_scope_frames' first name) is the innermost frame",
     "out[i] = s->recs[s->frames[s->nframes - 1 - i].rec].name;",
     "out[i] = s->recs[s->frames[i].rec].name;"),
    ("scope-path-innermost-first", "the PATH view lists the frames outermost first",
     "mguard__out_str(&o, i ? s->recs[s->frames[i - 1].rec].name : s->root);",
     "mguard__out_str(&o, i ? s->recs[s->frames[s->nframes - i].rec].name : s->root);"),
    ("scope-add-current-only", "a counter is added to every active scope",
     "    for (i = 0; i < s->nactive; i++) s->recs[s->active[i]].vals[2 * (size_t)k + 1] += amount;",
     "    for (i = s->nactive - 1; i < s->nactive; i++) s->recs[s->active[i]].vals[2 * (size_t)k + 1] += amount;"),
    ("scope-add-self-outermost", "a counter's self goes to the innermost frame's name",
     "    s->recs[s->nframes ? s->frames[s->nframes - 1].rec : 0].vals[2 * (size_t)k] += amount;",
     "    s->recs[s->nframes ? s->frames[0].rec : 0].vals[2 * (size_t)k] += amount;"),
    ("scope-add-self-last-active", "a counter's self goes to the innermost frame's name, not the newest active one (recursion)",
     "    s->recs[s->nframes ? s->frames[s->nframes - 1].rec : 0].vals[2 * (size_t)k] += amount;",
     "    s->recs[s->active[s->nactive - 1]].vals[2 * (size_t)k] += amount;"),
    ("scope-add-self-not-at-root", "with no frame open, a counter's self goes to the root",
     "    s->recs[s->nframes ? s->frames[s->nframes - 1].rec : 0].vals[2 * (size_t)k] += amount;",
     "    if (s->nframes) s->recs[s->frames[s->nframes - 1].rec].vals[2 * (size_t)k] += amount;"),
    ("scope-counter-self-is-total", "mguard_scope_counter's *self is the self, its result the total",
     "    if (self) *self = mguard__scope_val(&s->recs[r - 1], 2 * k);",
     "    if (self) *self = mguard__scope_val(&s->recs[r - 1], 2 * k + 1);"),
    ("scope-counter-self-stale", "mguard_scope_counter sets *self to 0 for bad input and unknown names",
     "    if (self) *self = 0.0;\n    if (!mguard__scope_ok(s) || !fqn || !counter) return 0.0;",
     "    if (!mguard__scope_ok(s) || !fqn || !counter) return 0.0;"),
    ("scope-report-columns-swapped", "a report's columns are each counter's self, then its total",
     "        mguard__out_str(o, k & 1 ? \".total\" : \".self\");",
     "        mguard__out_str(o, k & 1 ? \".self\" : \".total\");"),
    ("scope-add-grows-half", "an active record's counter array holds a self and a total per counter",
     "            nv = (double *)mguard__realloc(ctx, r->vals, (size_t)ncap * 2 * sizeof *nv);",
     "            nv = (double *)mguard__realloc(ctx, r->vals, (size_t)ncap * sizeof *nv);"),
    ("scope-span-duration", "a span lasts from enter to exit",
     "        e->dur = mguard__scope_dur(e->ts, now);",
     "        e->dur = now + 0 * mguard__scope_dur(e->ts, now);"),
    ("scope-span-nan-open", "a span whose clock is not a number (inf - inf) is closed, of length 0",
     "    return d >= 0 ? d : 0.0;",
     "    return now >= ts ? d : 0.0;"),
    ("scope-span-phase-lost", "a span records the phase it ran in",
     "        e->phase = s->phase;",
     "        e->phase = 0;"),
    ("scope-rename-no-follow", "a renamed component's subtree follows its name",
     "    if (!st && had) st = mguard__scope_follow(s, &w, comp);",
     "    (void)had;"),
    ("scope-forget-attached", "forget keeps attached components",
     "                !(e->flags & (MGUARD__SCOPE_EXPLICIT | MGUARD__SCOPE_ATTACHED | MGUARD__SCOPE_FORGOTTEN)))",
     "                !(e->flags & (MGUARD__SCOPE_EXPLICIT | MGUARD__SCOPE_FORGOTTEN)))"),
    ("scope-forgotten-still-named", "a forgotten component counts as unnamed",
     "    return v && !(v->flags & MGUARD__SCOPE_FORGOTTEN) ? v : NULL;",
     "    return v;"),
    ("scope-attach-new-child-follows-nothing", "an attached child that had a name brings what is placed under it",
     "    if (!st && had) st = mguard__scope_follow(s, &w, child);",
     "    (void)had;"),
    ("scope-walk-moved-no-follow", "a walk's renamed children bring what is placed under them",
     "    return w->nmoved ? mguard__scope_follow_all(s, w, w->moved, w->nmoved) : MGUARD_OK;",
     "    return MGUARD_OK;"),
    ("scope-death-counts-before-clock", "a dying component's warning counts the frames it closed",
     "    if (n)\n        mguard__scope_warn(s, MGUARD_LOG_SCOPE_ACTIVE_DESTROYED,",
     "    if (1)\n        mguard__scope_warn(s, MGUARD_LOG_SCOPE_ACTIVE_DESTROYED,"),
    ("scope-forget-forgets-framed", "forget keeps the name of a component with an open frame",
     "            if (!(xv->flags & MGUARD__SCOPE_FRAMED)) xv->flags |= MGUARD__SCOPE_FORGOTTEN;",
     "            xv->flags |= MGUARD__SCOPE_FORGOTTEN;"),
    ("scope-forget-keeps-seen", "forget makes the next lookup walk again",
     "        if (v) v->flags &= ~(uint32_t)MGUARD__SCOPE_SEEN;",
     "        ;"),
    ("scope-walk-overrides-attach", "a walk never overrides an attached name",
     "        if (!cv || !(cv->flags & (MGUARD__SCOPE_EXPLICIT | MGUARD__SCOPE_ATTACHED))) {",
     "        if (!cv || !(cv->flags & MGUARD__SCOPE_EXPLICIT)) {"),
    ("scope-phase-bound-one-over", "set_phase refuses a phase the tracker was not given",
     "    if (phase >= s->nphases) {",
     "    if (phase > s->nphases) {"),
    ("scope-trace-one-over", "the trace holds at most max_trace_events spans",
     "bool record = s->desc.trace && s->nevents < s->desc.max_trace_events;",
     "bool record = s->desc.trace && s->nevents <= s->desc.max_trace_events;"),
    ("scope-is-active-ever-entered", "a name is active only while one of its frames is open",
     "    return r && s->recs[r - 1].active > 0;",
     "    return r != 0;"),
    # ---- 8. dynamism tracker ------------------------------------------
    ("dyn-first-observation-dynamic", "a dimension seen once is static",
     "            r->dyn[i] = false;",
     "            r->dyn[i] = true;"),
    ("dyn-change-not-dynamic", "a dimension that changes becomes dynamic",
     "        } else if (!r->dyn[i] && !mguard__dyn_eq(&r->vals[i], &v)) {",
     "        } else if (!r->dyn[i] && mguard__dyn_eq(&r->vals[i], &v)) {"),
    ("dyn-rank-never-grows", "a path's rank grows to the largest seen",
     "    if (ndim > r->rank) r->rank = (uint32_t)ndim;",
     "    if (ndim > r->rank && !r->rank) r->rank = (uint32_t)ndim;"),
    # ---- 9. side-effects ledger ---------------------------------------
    ("ledger-restore-keeps-positions", "ledger iteration is exact across mguard_ledger_restore",
     "    L->epoch++;\n    L->stamp = cp->stamp;",
     "    L->stamp = cp->stamp;"),
    ("ledger-clear-keeps-positions", "ledger iteration is exact across mguard_ledger_clear",
     "    L->epoch++;\n    mguard__ledger_touch(L);\n}",
     "    mguard__ledger_touch(L);\n}"),
    ("ledger-iter-resume-one-too-far", "ledger iteration resumes at the next live entry",
     "if (L->ents[mid].seq < it->seq_) lo = mid + 1; else hi = mid;",
     "if (L->ents[mid].seq <= it->seq_) lo = mid + 1; else hi = mid;"),
    ("ledger-new-counted-modified", "only EXISTING objects with writes count as modified",
     "        if (en->nwrites++ == 0 && en->kind == MGUARD_LEDGER_EXISTING) L->nmod++;",
     "        if (en->nwrites++ == 0) L->nmod++;"),
    ("ledger-delete-after-store-null", "a delete after a store of NULL is recorded",
     "    if (w && L->writes[w - 1].value == value && L->writes[w - 1].deleted == deleted && L->writes[w - 1].size == size &&\n",
     "    if (w && L->writes[w - 1].value == value && L->writes[w - 1].size == size &&\n"),
    ("ledger-clone-shares-entries", "ledger isolation: a clone owns its own entries",
     "    C->ents = (mguard__lent *)dst[0];",
     "    C->ents = (mguard__lent *)(void *)src->ents;"),
    ("ledger-track-unknown-kind-accepted", "mguard_ledger_track refuses a kind that is none of the three (issue 25)",
     "    if (kind < MGUARD_LEDGER_EXISTING || kind > MGUARD_LEDGER_CONTAINER) {",
     "    if (kind < MGUARD_LEDGER_EXISTING || kind > MGUARD_LEDGER_CONTAINER + 1) {"),
    ("ledger-mark-not-counted", "marking a container counts it as modified",
     "        en->flags |= MGUARD__LE_MARKED;\n        L->nmod++;",
     "        en->flags |= MGUARD__LE_MARKED;"),
    ("ledger-hook-id-from-zero", "a hook's id is the smallest free id from the number of live hooks",
     "    for (cand = (int)L->nhooks; mguard__ledger_hook_find(L, cand); cand++) {}",
     "    for (cand = 0; mguard__ledger_hook_find(L, cand); cand++) {}"),
    ("ledger-apply-loses-deletions", "apply hands each pending deletion over as a deletion",
     "            snap[k].deleted = wr->deleted;",
     "            snap[k].deleted = 0;"),
    ("ledger-sized-value-partly-copied", "a sized value is copied whole (issue 14)",
     "        if (!deleted) memcpy(bytes, value, size);",
     "        if (!deleted) memcpy(bytes, value, 1);"),
    ("ledger-sized-equal-by-address", "sized values are equal by memcmp by default (issue 14)",
     "    if (!c->a->desc.equal) return memcmp(ba, bb, wa->size) == 0;",
     "    if (!c->a->desc.equal) return ba == bb;"),
    ("ledger-field-deletion-kept", "apply zeroes a field whose attribute has a pending deletion (issue 14)",
     "    if (pw->deleted) memset(dst, 0, pw->field->size);",
     "    if (pw->deleted) memset(dst, 0, 0);"),
    ("ledger-field-write-calls-back", "apply writes a field itself instead of calling back (issue 14)",
     "        if (snap[i].field) {\n            mguard__ledger_apply_field(L, &snap[i]);",
     "        if (snap[i].field && !snap[i].field) {\n            mguard__ledger_apply_field(L, &snap[i]);"),
    ("ledger-sized-equal-hook-handed-storage", "a sized ledger's equal hook gets copies of the values, never the writes arrays (issue 23)",
     "    MGUARD__L_CALLOUT(c->a->hd.ctx, NULL, NULL, r = c->a->desc.equal(ca, cb, c->a->desc.user));",
     "    MGUARD__L_CALLOUT(c->a->hd.ctx, NULL, NULL, r = c->a->desc.equal(ba, bb, c->a->desc.user));"),
    ("ledger-apply-field-last-name-wins", "apply's field index keeps the first of two fields of one name, as read (issue 23)",
     "        if (t[i].ent == e) continue;   /* a repeated name: the first one counts, as in mguard__ledger_field */\n",
     ""),
    ("ledger-apply-field-index-one-object", "apply's field index is filled for each object with writes (issue 23)",
     "        if (en->nfields) mguard__ledger_fix_fill(fix, nfix - 1, en, i + 1);",
     "        if (en->nfields) mguard__ledger_fix_fill(fix, nfix - 1, en, 1);"),
    ("ledger-diff-text-ignores-describe", "the diff text names an object through the context's describe hook (issue 25)",
     "    if (!buf[0] && kind == MGUARD__LF_OBJECT && p) {",
     "    if (!buf[0] && kind == -1 && p) {"),
    ("ledger-apply-field-unreported", "apply reports each field it writes as a mutation (issue 25's trial)",
     "            mguard__on_mutation_at(L->hd.ctx, snap[i].obj, snap[i].attr, NULL, 0);   /* as the program's own write would */\n",
     ""),
    ("kx-block-assumes-16-aligned", "the index's block has room to align its slots in a block of any alignment (32-bit heap corruption)",
     "#define MGUARD__KX_BYTES(cap) (MGUARD__KX_CTRLBYTES(cap) + 63 + (cap) * sizeof(mguard__kslot))",
     "#define MGUARD__KX_BYTES(cap) (MGUARD__KX_CTRLBYTES(cap) + 48 + (cap) * sizeof(mguard__kslot))"),
    ("ledger-load-ignores-field", "mguard_ledger_read reads the real field when nothing is pending (issue 14)",
     "    if (!f) return mguard__ledger_not_found(L, obj, attr, MGUARD_NOT_FOUND, fn);\n    memcpy(out, (const unsigned char *)obj + f->offset, vs);",
     "    if (f || !f) return mguard__ledger_not_found(L, obj, attr, MGUARD_NOT_FOUND, fn);\n    memcpy(out, (const unsigned char *)obj + f->offset, vs);"),
    ("ledger-check-shape-skipped", "mguard_ctx_check sees a write not of its attribute's size and type (issue 25)",
     "    return wr->size == size && wr->type == type;",
     "    return wr->type == type;"),
    ("ledger-load-miss-silent", "a read of an attribute neither bound nor pending logs a warning (issue 25)",
     "    if (!f) return mguard__ledger_not_found(L, obj, attr, MGUARD_NOT_FOUND, fn);",
     "    if (!f) return MGUARD_NOT_FOUND;"),
    ("ledger-load-attr-miss-silent", "mguard_ledger_pending of an attribute neither bound nor pending logs a warning (issue 25)",
     "    if (!w) return !value || mguard__ledger_field(&L->ents[e - 1], attr) ? MGUARD_NOT_FOUND : mguard__ledger_not_found(L, obj, attr, MGUARD_NOT_FOUND, fn);",
     "    if (!w) return MGUARD_NOT_FOUND;"),
    ("ledger-pending-null-value-logs", "mguard_ledger_pending with a NULL value pointer logs no miss (issue 26)",
     "    if (!w) return !value || mguard__ledger_field(",
     "    if (!w) return mguard__ledger_field("),
    ("ledger-get-null-out-always-ok", "mguard_ledger_get with a NULL out still says NOT_FOUND for an untracked object (issue 26)",
     "    if (!e) return MGUARD_NOT_FOUND;\n    if (!out) return MGUARD_OK;",
     "    if (!out) return MGUARD_OK;\n    if (!e) return MGUARD_NOT_FOUND;"),
    ("ledger-stats-modified-is-entries", "mguard_ledger_get_stats counts the modified entries, not all (issue 26)",
     "    out->modified = L->nmod;",
     "    out->modified = L->live_ents;"),
    ("ledger-iterate-unknown-walk-silent", "mguard_ledger_iterate logs an unknown walk (issue 26)",
     "    if ((unsigned)what - 1u > MGUARD_LEDGER_WALK_HOOKS - 1u) {",
     "    if ((unsigned)what > MGUARD_LEDGER_WALK_HOOKS) {"),
    ("ledger-diff-format-writes-cap", "mguard_ledger_diff_format writes at most cap bytes, the NUL included (issue 26)",
     "k = n < cap ? n : cap - 1;",
     "k = n < cap ? n : cap;"),
    ("ledger-write-default-size", "a write to a bound attribute stores its field's size and type (issue 25)",
     "        mguard__ledger_shape(L, mguard__ledger_field(&L->ents[e - 1], attr), &size, &type);",
     "        mguard__ledger_shape(L, NULL, &size, &type);"),
    ("ledger-load-default-size", "load copies a bound field's size, not the value size (issue 25)",
     "    mguard__ledger_shape(L, f, &vs, &t);",
     "    mguard__ledger_shape(L, NULL, &vs, &t);"),
    ("ledger-field-type-unchecked", "set_fields refuses a field whose size its type does not allow (issue 25)",
     "                            : L->desc.value_size ? mguard__ledger_type_needs(t, f->size)",
     "                            : L->desc.value_size ? NULL"),
    ("ledger-rebind-type-unchecked", "set_fields refuses to change the type of a pending write (issue 25)",
     "            if (size != wr->size || type != wr->type) {",
     "            if (size != wr->size) {"),
    ("ledger-equal-ignores-type", "writes of another type differ though their bytes match (issue 25)",
     "    if (wa->size != wb->size || wa->type != wb->type) return false;",
     "    if (wa->size != wb->size) return false;"),
    ("ledger-text-by-desc-type", "the diff prints each sized value by its own type (issue 25)",
     "    if (!buf[0]) mguard__ledger_fmt_bytes((const unsigned char *)s->value, s->size, s->type, buf);",
     "    if (!buf[0]) mguard__ledger_fmt_bytes((const unsigned char *)s->value, s->size, X->desc.value_type, buf);"),
    ("ledger-text-hook-output-replaced", "a format hook's text stands; only an empty one gets the default text (issue 25)",
     "    if (!buf[0]) mguard__ledger_fmt_bytes((const unsigned char *)s->value, s->size, s->type, buf);",
     "    mguard__ledger_fmt_bytes((const unsigned char *)s->value, s->size, s->type, buf);"),
    ("ledger-format-hook-not-told-attr", "format_value is told the attribute of the value it prints (issue 25)",
     "X->desc.format_value(obj, it->attr, s->value, s->size,",
     "X->desc.format_value(obj, NULL, s->value, s->size,"),
    ("ledger-sized-value-watched-apply", "apply never checks a sized value's life by address (issue 14)",
     "                               !mguard__ledger_same(L, L->desc.value_size ? NULL : snap[i].value, snap[i].value_serial)))",
     "                               !mguard__ledger_same(L, snap[i].value, snap[i].value_serial)))"),
    ("ledger-seq-walk-returns-twice", "a records or hooks walk never returns one twice when positions move (issue 14)",
     "        if (s <= it->seq_) lo = mid + 1; else hi = mid;",
     "        if (s < it->seq_) lo = mid + 1; else hi = mid;"),
    ("ledger-record-seq-not-advanced", "records carry increasing seqs, as mguard_ledger_check verifies (issue 14)",
     "    L->recs[L->nrecs].seq = ++L->root->seq;",
     "    L->recs[L->nrecs].seq = L->root->seq;"),
    ("ledger-format-object-is-value-hook", "object labels go through format_object, values through format_value (issue 14)",
     "    mguard_ledger_format_fn format = kind == MGUARD__LF_OBJECT ? X->desc.format_object : X->desc.format_value;",
     "    mguard_ledger_format_fn format = kind == MGUARD__LF_OBJECT ? X->desc.format_value : X->desc.format_value;"),
    ("prune-hooked-not-roots", "prune keeps objects that have hooks",
     "    for (i = 0; i < nv; i++) mguard__ledger_prune_visit(hobj[i], &p);\n",
     "\n"),
    ("prune-not-transitive", "prune keeps what is reachable through kept values",
     "        for (j = off[e - 1]; j < off[e]; j++) mguard__ledger_prune_visit(vals[j], &p);",
     "        for (j = off[e - 1]; j < off[e - 1]; j++) mguard__ledger_prune_visit(vals[j], &p);"),
    ("prune-pre-existing-not-looked-into", "prune asks the refs hook what every pre-existing object refers to (issue 14)",
     "        mguard__ledger_prune_ask(&p, x);\n",
     "        if (!mguard__ledger_ent_find(L, x) || L->ents[mguard__ledger_ent_find(L, x) - 1].kind == MGUARD_LEDGER_NEW) mguard__ledger_prune_ask(&p, x);\n"),
    ("prune-seen-loses-on-growth", "the set of untracked pointers prune looked into keeps them all when it grows",
     "            if (!p->seen[j]) continue;\n",
     "            continue;\n"),
    ("prune-root-only-through-refs", "a root is live itself, whatever the refs hook lists (issue 14)",
     "    for (r = 0; r < nroots; r++) mguard__ledger_prune_visit(roots[r], &p);",
     "    for (r = 0; r < nroots; r++) if (L->desc.refs) mguard__ledger_prune_ask(&p, roots[r]); else mguard__ledger_prune_visit(roots[r], &p);"),
    ("prune-untracked-not-asked", "an untracked pointer the refs hook lists is asked about in turn (issue 14)",
     "    } else if (!p->L->desc.refs || !mguard__ledger_prune_seen(p, obj)) {",
     "    } else if (!p->L->desc.refs || !mguard__ledger_prune_seen(p, obj) || obj) {"),
    ("prune-existing-not-seeds", "every EXISTING object is reached (issue 14)",
     "        if (L->ents[i].obj && L->ents[i].kind != MGUARD_LEDGER_NEW) mguard__ledger_prune_visit(L->ents[i].obj, &p);",
     "        if (L->ents[i].obj && L->ents[i].kind == MGUARD_LEDGER_CONTAINER) mguard__ledger_prune_visit(L->ents[i].obj, &p);"),
    ("prune-oom-drops-anyway", "a prune that ran out of memory drops nothing",
     "    } else if (p.oom) {\n        st = mguard__ledger_oom(L, MGUARD_ENOMEM, fn);\n    } else {",
     "    } else if (p.oom && !p.oom) {\n        st = mguard__ledger_oom(L, MGUARD_ENOMEM, fn);\n    } else {"),
    ("prune-drops-reached", "prune drops only unreached NEW objects",
     "            if (L->ents[i].obj && L->ents[i].kind == MGUARD_LEDGER_NEW && !p.mark[i]) {",
     "            if (L->ents[i].obj && L->ents[i].kind == MGUARD_LEDGER_NEW) {"),
    ("diff-value-copy-oom-silent", "a diff that cannot copy a changed sized value answers ENOMEM",
     "        if (mguard__reserve(d->hd.ctx, (void **)&d->vbytes, &d->capvbytes, (size_t)d->n + 1, MGUARD__LVBYTES)) {\n            c->st = MGUARD_ENOMEM;\n",
     "        if (mguard__reserve(d->hd.ctx, (void **)&d->vbytes, &d->capvbytes, (size_t)d->n + 1, MGUARD__LVBYTES)) {\n            c->st = MGUARD_OK;\n"),
    ("diff-misses-added-objects", "diff completeness: objects only in b",
     "    for (i = 0; i < B->nents; i++) {\n        const void *obj = B->ents[i].obj;\n        if (!obj || (i < A->nents",
     "    for (i = B->nents; i < B->nents; i++) {\n        const void *obj = B->ents[i].obj;\n        if (!obj || (i < A->nents"),
    ("diff-misses-added-hooks", "diff completeness: hooks only in b",
     "    for (i = 0; i < B->nhooks; i++) {\n        if (mguard__ledger_hook_find(A, B->hooks[i].id)) continue;",
     "    for (i = B->nhooks; i < B->nhooks; i++) {\n        if (mguard__ledger_hook_find(A, B->hooks[i].id)) continue;"),
    ("diff-record-tag-ignored", "diff completeness: a record whose tag changed",
     "        same = A->recs[i].tag == B->recs[i].tag;",
     "        same = true;"),
    ("diff-container-flag-ignored", "diff completeness: a container's own modified flag",
     "(A->ents[i].kind == MGUARD_LEDGER_CONTAINER && A->ents[i].flags != B->ents[eb - 1].flags)",
     "(0)"),
    # ---- checkers: mguard_ctx_check must see a corrupted structure ----
    ("check-nothing", "mguard_ctx_check checks something at all",
     "    if (!mguard__ctx_ok(ctx, \"mguard_ctx_check\")) return MGUARD_EINVAL;\n",
     "    if (!mguard__ctx_ok(ctx, \"mguard_ctx_check\")) return MGUARD_EINVAL;\n    if (ctx) return MGUARD_OK;\n"),
    ("check-index-load", "checker detection: an index over half full",
     "    MGUARD__CHECK(ctx, ix->used * 2 <= ix->mask + 1, \"%s: index over half full\", what);",
     "    MGUARD__CHECK(ctx, 1, \"%s: index over half full\", what);"),
    ("check-record-positions", "checker detection: a table entry's slot and its table's order disagree on its position",
     "MGUARD__CHECK(ctx, s->pos < tt->len && tt->order[s->pos].slot == k,",
     "MGUARD__CHECK(ctx, s->pos < tt->len,"),
    ("check-table-order", "checker detection: table entries out of insertion order (stamps not increasing)",
     "MGUARD__CHECK(ctx, i == 0 || el.stamp > t->order[i - 1].stamp,",
     "MGUARD__CHECK(ctx, i == 0 || el.stamp >= t->order[i - 1].stamp,"),
    ("check-index-pending", "checker detection: a pending slot with no death in progress",
     "MGUARD__CHECK(ctx, c < MGUARD__KX_EMPTY || ctx->dying,",
     "MGUARD__CHECK(ctx, 1,"),
    ("check-index-tag", "checker detection: a slot with a stale tag",
     "MGUARD__CHECK(ctx, s->key && c == MGUARD__KX_TAG(mguard__hash64(s->key)),",
     "MGUARD__CHECK(ctx, s->key != NULL,"),
    ("check-index-unreachable", "checker detection: a slot its key's probe does not reach (tables' and records' slots; a cache's: cache-check-*)",
     "MGUARD__CHECK(ctx, (s->tid & MGUARD__TID_PART) || mguard__kx_find(kx, s->key, s->tid, mguard__hash64(s->key), NULL) == s,",
     "MGUARD__CHECK(ctx, (s->tid & MGUARD__TID_PART) || mguard__kx_find(kx, s->key, s->tid, mguard__hash64(s->key), NULL) == s || 1,"),
    ("check-index-record", "checker detection: a registry slot naming another object's record",
     "r >= 1 && r <= ctx->nobjs && ctx->objs[r - 1].key == s->key,",
     "r >= 1 && r <= ctx->nobjs,"),
    ("check-index-dead-table", "checker detection: a slot naming a dead table",
     "MGUARD__CHECK(ctx, mguard__weak_ok(tt) && tt->tid == s->tid,",
     "MGUARD__CHECK(ctx, tt != NULL,"),
    ("check-index-used", "checker detection: the index's count of slots in use",
     "MGUARD__CHECK(ctx, full == kx->used,",
     "MGUARD__CHECK(ctx, 1,"),
    ("check-index-growth-left", "checker detection: growth_left is the EMPTY slots less one in 8",
     "MGUARD__CHECK(ctx, empty == kx->growth_left + cap / 8,",
     "MGUARD__CHECK(ctx, empty >= cap / 8,"),
    ("check-objects-known", "checker detection: the count of objects known",
     "MGUARD__CHECK(ctx, objs == ctx->live_objs,",
     "MGUARD__CHECK(ctx, 1,"),
    ("check-table-id", "checker detection: a table whose id does not name it",
     "MGUARD__CHECK(ctx, t->tid && t->tid < ctx->ntabs && ctx->tabs[t->tid] == t,",
     "MGUARD__CHECK(ctx, t->tid < ctx->ntabs,"),
    ("check-table-slot", "checker detection: a table entry's slot whose order place does not point back",
     "MGUARD__CHECK(ctx, s->pos < tt->len && tt->order[s->pos].slot == k,",
     "MGUARD__CHECK(ctx, s->pos < tt->len,"),
    ("check-table-live", "checker detection: a table's live count",
     "MGUARD__CHECK(ctx, nlive == t->live,",
     "MGUARD__CHECK(ctx, 1,"),
    ("check-stamps-ahead", "checker detection: a table's stamps ahead of the context's count",
     "MGUARD__CHECK(ctx, ctx->next_stamp - t->base >= (t->len ?",
     "MGUARD__CHECK(ctx, 1 || ctx->next_stamp - t->base >= (t->len ?"),
    ("check-wlist-capacity", "checker detection: a watcher list with no room (cap 0)",
     "&& sd->w.list.at && sd->w.list.cap >= 1,",
     "&& sd->w.list.at,"),
    ("check-inline-empty-fields", "checker detection: an empty inline watcher whose fields are not all zero",
     "!sd->w.one.guard && !sd->w.one.guard_serial && !sd->w.one.user,",
     "!sd->w.one.guard && !sd->w.one.user,"),
    ("check-wlist-no-side", "checker detection: a watcher list flag on a record without a side record",
     "MGUARD__CHECK(ctx, !(o->flags & MGUARD__F_WLIST) || o->side,",
     "MGUARD__CHECK(ctx, 1,"),
    ("check-free-list", "checker detection: the registry's free list",
     "    MGUARD__CHECK(ctx, nfree + live == ctx->nobjs,",
     "    MGUARD__CHECK(ctx, 1,"),
    ("check-scope-frames", "checker detection: a scope record's frame count",
     "        MGUARD__CHECK(ctx, r->active == n,",
     "        MGUARD__CHECK(ctx, 1,"),
    ("check-dyn-groups", "checker detection: the dynamism tracker's groups",
     "    MGUARD__CHECK(ctx, seen == d->nrecs,",
     "    MGUARD__CHECK(ctx, 1,"),
    # ---- issue 11's six defects: each fix is a promise ------------------
    ("retain-outside-the-lock", "a ledger's retain is done before the store returns, before any release (thread-safe)",
     "if (ctx->lk) L->desc.retain(p, L->desc.user);",
     "if (0) L->desc.retain(p, L->desc.user);"),
    ("destroy-skips-hook-wait", "mguard_on_destroy(p) waits for a ledger hook handed p on another thread (both death paths)",
     "    if (ctx->lk && serial) mguard__wait_guard(ctx, obj, serial);\n    if (ctx->hooking) mguard__wait_hooks(ctx, obj);",
     "    if (ctx->lk && serial) mguard__wait_guard(ctx, obj, serial);"),
    ("unknown-destroy-skips-hook-wait", "mguard_on_destroy(p) of an object the context does not know waits for a ledger hook handed p",
     "        if (ctx->hooking) mguard__wait_hooks(ctx, obj);\n        return;",
     "        return;"),
    ("diff-on-dying-context", "no diff result outlives its context",
     "    if (!mguard__ctx_can_create(a->hd.ctx, fn)) return MGUARD_EINVAL;",
     "    if (!mguard__ctx_can_create(a->hd.ctx, fn) && 0) return MGUARD_EINVAL;"),
    ("trace-json-big-number", "every finite time gives valid JSON in the trace",
     "    else k = snprintf(b, sizeof b, \"%.17g\", v);",
     "    else k = snprintf(b, sizeof b, \"%.3f\", v);"),
    ("ref-context-unchecked", "a ref of another context reads NULL",
     "    if (ref.ctx_ != ctx->id) return mguard__ref_foreign(ctx);",
     "    if (ref.ctx_ != ctx->id && 0) return mguard__ref_foreign(ctx);"),
    ("walk-identity-by-address", "a walk never takes a newcomer at a dead pointer's address for it",
     "    if (serial) return mguard__ledger_life(L, p) == serial;",
     "    if (serial) return mguard__ledger_alive(L, p);"),
    ("walk-serial-of-any-record", "a value's identity is a life the ledger itself watches",
     "    if (!r || !(L->refs[r - 1].flags & MGUARD__LR_WATCHED)) return 0;\n    return mguard__ledger_life(L, p);",
     "    (void)r;\n    return mguard__ledger_life(L, p);"),
    ("create-on-dying-context", "nothing is created on a context being destroyed",
     "    if (ctx->destroying) { mguard__logf(ctx, MGUARD_LOG_CTX_DESTROYING, fn); return false; }",
     "    if (ctx->destroying && 0) { mguard__logf(ctx, MGUARD_LOG_CTX_DESTROYING, fn); return false; }"),
    ("lookout-ignored", "a component destroyed during its own first lookup gets no name",
     "        if (s->destroying || look.died) return MGUARD_EINVAL;",
     "        if (s->destroying || (look.died && 0)) return MGUARD_EINVAL;"),
    # ---- 10. threads: every call on a thread-safe context locks ----------
    ("lock-skip-public-x", "lock taken on every thread-safe call (the made public functions that return)",
     "        ret r_; \\\n        if (c_ && c_->lk) return mguard__locked_##name args; \\",
     "        ret r_; \\\n        if (c_ && c_->lk && 0) return mguard__locked_##name args; \\"),
    ("lock-skip-public-w", "lock taken on every thread-safe call (the functions with a fast path, past it)",
     "    static MGUARD__NOINLINE ret mguard__other_##name params MGUARD__PUBLIC_BODY(ret, name, args, ctxof) \\\n    MGUARD__INLINE_API ret mguard_##name params \\\n    { \\\n        if (mguard__fast_##name args)",
     "    static MGUARD__NOINLINE ret mguard__other_##name params { mguard_ctx *c_ = ctxof; ret r_; if (c_ && c_->lk && 0) return mguard__locked_##name args; r_ = mguard__##name args; if (c_ && c_->logq.n) mguard__log_flush(c_); return r_; } \\\n    MGUARD__INLINE_API ret mguard_##name params \\\n    { \\\n        if (mguard__fast_##name args)"),
    ("lock-skip-public-v", "lock taken on every thread-safe call (the made public functions without a result)",
     "        if (c_ && c_->lk) { \\",
     "        if (c_ && c_->lk && 0) { \\"),
    ("log-kept-after-the-call", "a default context's log lines reach the logger when the call ends",
     "        if (c_ && c_->logq.n) mguard__log_flush(c_); \\\n        return r_; \\",
     "        return r_; \\"),
    ("log-kept-after-the-call-w", "a default context's log lines reach the logger when the call ends (the functions with a fast path)",
     "    static MGUARD__NOINLINE ret mguard__other_##name params MGUARD__PUBLIC_BODY(ret, name, args, ctxof) \\\n    MGUARD__INLINE_API ret mguard_##name params \\\n    { \\\n        if (mguard__fast_##name args)",
     "    static MGUARD__NOINLINE ret mguard__other_##name params { mguard_ctx *c_ = ctxof; if (c_ && c_->lk) return mguard__locked_##name args; return mguard__##name args; } \\\n    MGUARD__INLINE_API ret mguard_##name params \\\n    { \\\n        if (mguard__fast_##name args)"),
    ("log-delivered-mid-call", "a log line is never delivered in the middle of an operation",
     "    mguard__logq_push(&mctx->logq, code, line, ctx->log.func, ctx->log.user);\n}",
     "    if (ctx->lk) mguard__logq_push(&mctx->logq, code, line, ctx->log.func, ctx->log.user);\n    else ctx->log.func(mguard__log_items[code].level, code, line, ctx->log.user);\n}"),
    ("lock-variant-skips-lock", "a locked variant really takes the lock (every listed function)",
     "        mguard__lock_acquire(lk_); \\\n        r_ = mguard__##name args; \\\n        mguard__lock_release(lk_); \\\n",
     "        (void)lk_; \\\n        r_ = mguard__##name args; \\\n"),
    ("bury-frees-at-once", "a handle destroyed during mguard_ctx_destroy stays readable (refused) until the destroy is done",
     "    if (!ctx->destroying) {\n        mguard__free(ctx, h);\n        return;\n    }",
     "    if (1) {\n        mguard__free(ctx, h);\n        return;\n    }"),
    ("lock-skip-weak-tables", "lock taken on every thread-safe call (every table function)",
     "    return t && MGUARD__MAGIC_IS(t->magic, MGUARD__MAGIC_WEAK) ? t->ctx : NULL;",
     "    return t && MGUARD__MAGIC_IS(t->magic, MGUARD__MAGIC_WEAK) && 0 ? t->ctx : NULL;"),
    ("lock-log-lines-lost", "log lines of a thread-safe call reach the logger after the lock is let go",
     "    if (lk->q->n) mguard__lock_flush_release(lk);\n    else lk->unlock_fn(lk->user);",
     "    if (lk->q->n && 0) mguard__lock_flush_release(lk);\n    else lk->unlock_fn(lk->user);"),
    ("lock-held-in-callbacks", "no callback runs under the lock",
     "    do { if ((ctx)->lk) mguard__lock_release((ctx)->lk); else if ((ctx)->logq.n) mguard__log_flush(ctx); } while (0)\n#define MGUARD__LK_IN(ctx)  do { if ((ctx)->lk) mguard__lock_acquire((ctx)->lk); } while (0)",
     "    do { if ((ctx)->logq.n && !(ctx)->lk) mguard__log_flush(ctx); } while (0)\n#define MGUARD__LK_IN(ctx)  do { (void)(ctx); } while (0)"),
    # ---- 11. guarded caches ------------------------------------------
    ("cache-attr-ignored", "an attribute dependency is dropped only by its own attribute",
     "        if (attr && (s->pos & MGUARD__CS_DEP) && s->v.cp && s->v.cp != (const void *)MGUARD__EV_IA()) continue;",
     "        if (attr && (s->pos & MGUARD__CS_DEP) && s->v.cp && s->v.cp == (const void *)MGUARD__EV_IA()) continue;"),
    ("cache-null-attr-partial", "a mutation with attr NULL drops every entry depending on the object",
     "        if (attr && (s->pos & MGUARD__CS_DEP) && s->v.cp && s->v.cp != (const void *)MGUARD__EV_IA()) continue;",
     "        if (!death && (s->pos & MGUARD__CS_DEP) && s->v.cp && s->v.cp != (const void *)MGUARD__EV_IA()) continue;"),
    ("cache-stale-stored", "a value computed while a dependency changed is not stored",
     "    } else if (job.stale) {",
     "    } else if (job.stale && 0) {"),
    ("cache-values-leak", "every dropped value is destroyed",
     "    if (dtor) MGUARD__CALLOUT(ctx, dtor(val, user));\n    if (val != (void *)v.b)",
     "    if (dtor && 0) MGUARD__CALLOUT(ctx, dtor(val, user));\n    if (val != (void *)v.b)"),
    ("cache-hit-not-recent", "a hit makes the entry the most recently used",
     "        if (c->newest != p) {",
     "        if (c->newest != p && 0) {"),
    ("cache-fast-hit-uncounted", "every hit is counted, one-key ones too",
     "                c->stats.hits++;\n                return c->inslot ? (void *)s->v.b : s->v.p;",
     "                return c->inslot ? (void *)s->v.b : s->v.p;"),
    ("cache-evicts-new-entry", "eviction never takes the entry just stored",
     "        if (c->oldest == pos + 1) break;\n",
     "\n"),
    ("cache-ring-keeps-forgotten-strings", "a reason the ring forgets lets its attribute go (issue 23)",
     "    mguard__str_release(c->ctx, r->attr);\n    mguard__str_release(c->ctx, r->obj_name);\n    r->attr = r->file = r->obj_name = NULL;",
     "    mguard__str_release(c->ctx, r->obj_name);\n    r->attr = r->file = r->obj_name = NULL;"),
    ("cache-dep-keeps-its-attr", "a dependency's slot lets its attribute go with it (issue 23)",
     "    if ((ctx->kx.slots[i].pos & MGUARD__CS_HUB) == MGUARD__CS_DEP) mguard__str_release(ctx, (const char *)ctx->kx.slots[i].v.cp);",
     "    (void)0;"),
    ("scope-free-keeps-strings", "a destroyed scope tracker lets every string it holds go (issue 23)",
     "    mguard__scope_unhold(ctx, s);\n    mguard__handle_free(s);",
     "    mguard__handle_free(s);"),
    ("scope-create-oom-keeps-strings", "a scope create that fails lets its root and phases go (issue 23)",
     "    mguard__scope_unhold(ctx, s);\n    mguard__free(ctx, s);",
     "    mguard__free(ctx, s);"),
    ("scope-holds-twice", "a scope tracker holds each string once (issue 23)",
     "        mguard__str_release(ctx, in);   /* s holds it already */",
     "        (void)0;"),
    ("scope-oom-keeps-intern", "a scope intern that fails gives its reference back (issue 23)",
     "        mguard__str_release(ctx, in);\n        return NULL;\n    }\n    s->held[s->nheld++] = in;",
     "        return NULL;\n    }\n    s->held[s->nheld++] = in;"),
    ("ledger-write-keeps-attr", "a write that goes lets its attribute go (issue 23)",
     "    mguard__ledger_str_drop(L, wr->attr);\n    wr->obj = NULL;",
     "    wr->obj = NULL;"),
    ("ledger-entry-keeps-source", "an entry that goes lets its source go (issue 23)",
     "    mguard__ledger_str_drop(L, en->source);\n    en->obj = NULL;",
     "    en->obj = NULL;"),
    ("ledger-overwrite-keeps-two", "an overwrite holds its attribute once (issue 23)",
     "    if (!w && !si && !(a = mguard__lstr_intern_found(ctx, attr, a)))",
     "    if (!si && !(a = mguard__lstr_intern_found(ctx, attr, a)))"),
    ("ledger-write-held-taken-again", "a write naming a string its ledger holds counts it, takes no hold",
     "    if (!w && !si && !(a = mguard__lstr_intern_found(ctx, attr, a)))",
     "    if (!w && !(a = mguard__lstr_intern_found(ctx, attr, a)))"),
    ("ledger-track-held-taken-again", "an entry whose source its ledger holds counts it, takes no hold",
     "    if (si) mguard__str_release(ctx, src);\n    mguard__ledger_str_hold(L, src, si);",
     "    mguard__ledger_str_hold(L, src, si);"),
    ("ledger-track-new-string-looked-up-wrong", "a string held only by the track that interned it is new to the ledger; any other is looked up",
     "        else if (MGUARD__STR_HDR(src)->refs != 1) si = mguard__ledger_str_find(L, src);",
     "        else if (MGUARD__STR_HDR(src)->refs > 2) si = mguard__ledger_str_find(L, src);"),
    ("ledger-track-oom-keeps-source", "a track that fails lets the source it interned go",
     "        mguard__str_release(ctx, src);\n        return mguard__ledger_oom(L, st, fn);",
     "        return mguard__ledger_oom(L, st, fn);"),
    ("ledger-write-oom-keeps-attr", "a write that fails lets the attribute it interned go",
     "        if (!w && !si) mguard__str_release(ctx, a);\n",
     "\n"),
    ("ledger-diff-oom-through-a", "a diff's out-of-memory line goes through the context: a hook may have destroyed a",
     "        if (st == MGUARD_ENOMEM) mguard__logf(ctx, MGUARD_LOG_NOMEM, fn);\n        return st;",
     "        (void)ctx;\n        return mguard__ledger_oom(a, st, fn);"),
    ("ledger-str-kept-before-commit", "on a thread-safe context a ledger's string is kept for good only once its call cannot fail",
     "    return found ? mguard__str_take(mguard__str_recent(ctx, found)) : mguard__str_intern(ctx, s);",
     "    const char *r = found ? mguard__str_take(mguard__str_recent(ctx, found)) : mguard__str_intern(ctx, s);\n    mguard__str_keep_if_shared(ctx, r);\n    return r;"),
    ("ledger-pool-str-not-kept", "on a thread-safe context a string entering a ledger's pool is kept for the context's life",
     "        mguard__str_keep_if_shared(L->hd.ctx, s);\n",
     "\n"),
    ("ledger-tag-not-kept", "on a thread-safe context a record's tag is kept for the context's life",
     "    mguard__str_keep_if_shared(L->hd.ctx, t);\n",
     "\n"),
    ("ledger-hook-name-not-kept", "on a thread-safe context a hook's name is kept for the context's life",
     "    mguard__str_keep_if_shared(L->hd.ctx, nm);\n",
     "\n"),
    ("ledger-str-hint-unchecked", "a string's hint is another ledger's slot until the slot says so",
     "    if (h->lslot && h->lslot <= L->nspool && L->strs[h->lslot - 1].s == s) return h->lslot;",
     "    if (h->lslot && h->lslot <= L->nspool) return h->lslot;"),
    ("ledger-str-hint-unbounded", "a hint past the ledger's slots is not read (a cleared ledger's old slots)",
     "    if (h->lslot && h->lslot <= L->nspool && L->strs[h->lslot - 1].s == s) return h->lslot;",
     "    if (h->lslot && h->lslot <= L->capstrs && L->strs[h->lslot - 1].s == s) return h->lslot;"),
    ("ledger-str-drop-first", "a string goes with the last item naming it, not the first",
     "    if (!i || --L->strs[i - 1].count) return;",
     "    if (!i) return;\n    --L->strs[i - 1].count;"),
    ("ledger-str-new-unindexed", "a new string slot is found by its string",
     "        mguard__ix_put(&L->s_ix, MGUARD__STR_HDR(s)->hash, i);\n        L->live_strs++;",
     "        L->live_strs++;"),
    ("ledger-empty-keeps-slots", "an emptied ledger's string slots go with its holds",
     "    L->nspool = L->live_strs = L->sfree = 0;\n    mguard__ix_clear(&L->s_ix);\n",
     "\n"),
    ("ledger-overwrite-sized-unread", "an overwrite of a sized value with other bytes of the same size is a write",
     "(!size || memcmp(L->writes[w - 1].bytes, bytes, size) == 0))",
     "(size || memcmp(L->writes[w - 1].bytes, bytes, size) == 0))"),
    ("ledger-purge-keeps-tag", "a record a death drops lets its tag go (issue 23)",
     "                mguard__str_release(L->hd.ctx, L->recs[i].tag);\n",
     "\n"),
    ("ledger-purge-keeps-hook-name", "a hook a death drops lets its name go (issue 23)",
     "                mguard__str_release(L->hd.ctx, L->hooks[i].name);\n                pu->hooks++;",
     "                pu->hooks++;"),
    ("ledger-removed-hook-keeps-name", "a removed hook lets its name go (issue 23)",
     "    mguard__str_release(L->hd.ctx, L->hooks[h - 1].name);\n",
     "\n"),
    ("ledger-empty-keeps-strings", "an emptied ledger lets its strings go (issue 23)",
     "    uint32_t i;\n    mguard__ledger_strs(L, false);\n",
     "    uint32_t i;\n"),
    ("kx-first-sse2-tag", "the first group's SSE2 match compares h's tag",
     "_mm_set1_epi8((char)((h) & 0x7f)))) & 0xffu))",
     "_mm_set1_epi8((char)(((h) & 0x7f) ^ 1)))) & 0xffu))"),
    ("kx-first-sse2-upper-half", "the first group's SSE2 match keeps the 8 bytes of the group (a tag 0 matches the zero upper half)",
     "_mm_set1_epi8((char)((h) & 0x7f)))) & 0xffu))",
     "_mm_set1_epi8((char)((h) & 0x7f)))) & 0xffffu))"),
    ("kx-first-swar-tag", "the first group's SWAR match (the differential test's build) compares h's tag",
     "#define MGUARD__KX_FIRST_MATCH(kx, pos, h) mguard__kx_match(mguard__kx_load((kx)->ctrl + (pos)), MGUARD__KX_TAG(h))",
     "#define MGUARD__KX_FIRST_MATCH(kx, pos, h) mguard__kx_match(mguard__kx_load((kx)->ctrl + (pos)), MGUARD__KX_TAG(h) ^ 1u)"),
    ("gen-plain-ignores-strict", "a strict context's generation check goes the general way (its line is delivered)",
     "#define MGUARD__PLAIN_GEN(ctx) ((ctx) && (ctx)->magic == MGUARD__MAGIC_CTX && !(ctx)->strict_gen)",
     "#define MGUARD__PLAIN_GEN(ctx) ((ctx) && (ctx)->magic == MGUARD__MAGIC_CTX)"),
    ("gen-untagged-strict-flipped", "an untagged object is new under strict generations only",
     "    if (!ctx->strict_gen) return false;\n    if (!ctx->warned_untagged) {",
     "    if (ctx->strict_gen) return false;\n    if (!ctx->warned_untagged) {"),
    ("ledger-clone-no-take", "a clone holds its own references to its strings (issue 23)",
     "    mguard__ledger_strs(C, true);   /* its own holds: one per string, record and hook */",
     "    (void)0;"),
    ("ledger-restore-no-take", "a restored ledger holds its own references to the checkpoint's strings (issue 23)",
     "    mguard__ledger_content_install(L, &k, cp);\n    mguard__ledger_strs(L, true);",
     "    mguard__ledger_content_install(L, &k, cp);"),
    ("ledger-diff-no-take", "a diff result holds its own references to its strings (issue 23)",
     "    mguard__str_take(it->a.source);\n",
     "\n"),
    ("ledger-apply-no-take", "apply's snapshot holds its own references to its attributes (issue 23)",
     "    for (i = 0; i < k; i++) mguard__str_take(snap[i].attr);",
     "    (void)0;"),
    ("dyn-group-counted-twice", "a path joining a known group does not hold its name again (issue 23)",
     "            mguard__str_release(ctx, gname);   /* the group holds it already */",
     "            (void)0;"),
    ("dyn-free-keeps-paths", "a destroyed tracker lets its paths go (issue 23)",
     "        mguard__str_release(ctx, d->recs[i].path);\n",
     "\n"),
    ("cache-reason-place-uncounted", "a reason's formatted length counts its place (snprintf-style, any file length)",
     "            n = m > 0 ? n + m : n;",
     "            (void)m;"),
    ("dyn-dims-oom-silent", "dims of a long path without memory says so (NOMEM), not silently \"not observed\"",
     "    if (!norm) { mguard__logf(d->hd.ctx, MGUARD_LOG_NOMEM, \"mguard_dyn_dims\"); return 0; }",
     "    if (!norm) return 0;"),
    ("cache-reason-no-file", "a drop reason keeps the mutation's file",
     "        why.file = file; \\",
     "        why.file = file && 0 ? file : NULL; \\"),
    ("cache-iter-visits-new", "entries stored during a walk are not visited",
     "        if (MGUARD__CR_STATE(r) != MGUARD__CR_LIVE || c->sbase + c->seqs[it->pos_ - 1] >= it->bound_) continue;",
     "        if (MGUARD__CR_STATE(r) != MGUARD__CR_LIVE) continue;"),
    ("cache-rebase-keeps-old-walks", "a walk begun before the store orders were renumbered ends (it cannot tell old from new)",
     "    if (c->rebased && it->bound_ <= c->sbase) {",
     "    if (0) {"),
    ("cache-rebase-forgets-live", "renumbered store orders keep every live entry before the next store",
     "            c->seqs[pos] = at <= nb ? 0 : (uint32_t)(at - nb);",
     "            c->seqs[pos] = at <= nb ? 0xfffffffeu : (uint32_t)(at - nb);"),
    ("cache-rebase-ignores-drains", "renumbered store orders keep entries stored before a clear began below its bound",
     "    for (d = c->drains; d; d = d->next) if (d->bound < lo) lo = d->bound;",
     "    (void)d;"),
    ("cache-free-list-lifo", "a free position is reused, the last freed first (a walk's order after drops and stores)",
     "    r->slot = c->freehead;\n    c->freehead = pos + 1;",
     "    r->slot = 0;\n    if (!c->freehead) c->freehead = pos + 1;"),
    ("cache-dying-key-admitted", "an object being destroyed cannot become a key or a dependency",
     "        if (mguard__is_dying(ctx, objs[i])) {",
     "        if (mguard__is_dying(ctx, objs[i]) && 0) {"),
    ("cache-replaced-uncounted", "an overwritten value is counted as replaced",
     "    default: c->stats.replaced++; break;",
     "    default: break;"),
    ("cache-miss-silent", "with log_reasons, a miss is logged with the reason it follows",
     "        if (c->log_reasons) mguard__cache_log_miss(c, keys, nkeys);",
     "        if (c->log_reasons && 0) mguard__cache_log_miss(c, keys, nkeys);"),
    ("cache-bounded-takes-fast-get", "a hit on a bounded cache makes the entry the most recently used (no fast path)",
     "    c->unbounded = !MGUARD__CACHE_BOUNDED(c);",
     "    c->unbounded = true;"),
    ("magic-wide-table-simple", "a table whose values live outside its slots is not the simple case of the hot get",
     "(vs > MGUARD__KX_INSLOT ? MGUARD__MAGIC_GENERAL : 0);",
     "0;"),
    ("magic-bounded-cache-simple", "a bounded cache is not the simple case of the hot get (its hits move the LRU)",
     "(c->unbounded && !c->log_reasons ? 0 : MGUARD__MAGIC_GENERAL);",
     "(!c->log_reasons ? 0 : MGUARD__MAGIC_GENERAL);"),
    ("magic-flags-unchecked", "a handle check ignores both flag bits (a table of wide values, a bounded cache are handles)",
     "#define MGUARD__MAGIC_IS(m, magic) (((m) | MGUARD__MAGIC_FLAGS) == ((magic) | MGUARD__MAGIC_FLAGS))",
     "#define MGUARD__MAGIC_IS(m, magic) (((m) | MGUARD__MAGIC_TS) == ((magic) | MGUARD__MAGIC_TS))"),
    ("handle-debug-unchecked", "MGUARD_DEBUG refuses a destroyed handle (table, cache, add-on) without reading it",
     "    if (!MGUARD__DBG_OK(h, kind, fn)) return false;\n    return h && MGUARD__MAGIC_IS(*(const uint32_t *)h, magic);",
     "    return h && MGUARD__MAGIC_IS(*(const uint32_t *)h, magic);"),
    ("handle-table-wrong-kind", "a table is registered and checked as a table (one registry of kinds)",
     "    return mguard__handle_ok(t, MGUARD__MAGIC_WEAK, MGUARD__DBG_WEAK, fn);",
     "    return mguard__handle_ok(t, MGUARD__MAGIC_WEAK, MGUARD__DBG_CACHE, fn);"),
    ("debug-registry-room-for-one", "a handle made with tables of its own still finds room in the registry",
     "    mguard_status st = mguard__ix_reserve(ctx, &ctx->dbg.hix, (size_t)ctx->dbg.nhs + 2);\n    if (!st) st = mguard__reserve(ctx, (void **)&ctx->dbg.hs, &ctx->dbg.caphs, (size_t)ctx->dbg.nhs + 2, sizeof(mguard__dbg_h));",
     "    mguard_status st = mguard__ix_reserve(ctx, &ctx->dbg.hix, (size_t)ctx->dbg.nhs + 1);\n    if (!st) st = mguard__reserve(ctx, (void **)&ctx->dbg.hs, &ctx->dbg.caphs, (size_t)ctx->dbg.nhs + 1, sizeof(mguard__dbg_h));"),
    ("cache-destroy-from-compute-early", "a cache destroyed by its own compute is freed when the compute returns",
     "    if (c->busy) return;   /* the call or event in progress finishes the job */",
     "    (void)0;"),
    ("cache-compute-after-destroy", "a cache destroyed by a value destructor of its get_or_compute computes nothing more",
     "    if (c->destroying) goto done;   /* by the parked value's destructor or a logger */",
     "    (void)0;"),
    ("cache-cost-wraps", "the entries' total cost is exact: costs near SIZE_MAX never wrap it",
     "    if (c->total_cost < cost) c->cost_carry++;",
     "    (void)0;"),
    ("cache-check-cost-wrap-blind", "mguard_ctx_check sums a cache's costs on its own, wraps counted",
     "            if (cost < c->lru[pos].cost) carry++;",
     "            (void)0;"),
    ("cache-reason-by-address", "a drop reason names its keys' lives, not their addresses (a key's death forgets it)",
     "        if (s->pos & MGUARD__CS_RING) {\n            if (death) {",
     "        if (s->pos & MGUARD__CS_RING) {\n            if (death && 0) {"),
    ("cache-reason-keys-unpinned", "the keys of a remembered drop stay known while the reason is kept (their slots become RING slots)",
     "    } else if (ring >= 0 && keys[0] != dying) {",
     "    } else if (0) {"),
    ("cache-depend-set-misses", "a dependency declared again is kept once, with the job's set as without it",
     "        if (mguard__cpair_has(job, obj, NULL) || (ia && mguard__cpair_has(job, obj, ia))) return MGUARD_OK;",
     "        if (mguard__cpair_has(job, obj, NULL)) return MGUARD_OK;"),
    ("cache-take-destroys-value", "mguard_cache_take never destroys the value it hands out (issue 25)",
     "    mguard_value_dtor dtor = out ? NULL : c->dtor;",
     "    mguard_value_dtor dtor = c->dtor;"),
    ("cache-take-tells-dropped", "mguard_cache_take does not tell dropped (issue 25)",
     "    mguard_cache_dropped_fn dropped = out ? NULL : c->dropped;",
     "    mguard_cache_dropped_fn dropped = c->dropped;"),
    ("cache-take-logged", "mguard_cache_take is not logged as a drop under log_reasons (issue 25)",
     "        if (c->log_reasons && !out) mguard__cache_log(",
     "        if (c->log_reasons) mguard__cache_log("),
    ("cache-take-copies-nothing", "mguard_cache_take copies the value into out (issue 25)",
     "    if (out) memcpy(out, val, c->value_size);",
     "    if (out && !out) memcpy(out, val, c->value_size);"),
    ("cache-take-null-out-keeps-value", "mguard_cache_take with a NULL out destroys the value, told and logged (issue 26: remove folded into take)",
     "    if (!mguard__cache_ok(c, \"mguard_cache_take\") || !mguard__cache_keys_ok(c, keys, nkeys, \"mguard_cache_take\")) return MGUARD_EINVAL;",
     "    if (!out || !mguard__cache_ok(c, \"mguard_cache_take\") || !mguard__cache_keys_ok(c, keys, nkeys, \"mguard_cache_take\")) return MGUARD_EINVAL;"),
    ("cache-get-copy-uncounted", "get_copy counts a hit or a miss and makes a hit the most recently used, as get does",
     "    v = (const unsigned char *)mguard__cache_lookup(c, keys, nkeys);",
     "    { mguard__kslot *k_ = mguard__cache_find(c, keys, nkeys); v = k_ ? (const unsigned char *)mguard__cache_value(c, k_) : NULL; }"),
    ("cache-get-copy-part", "get_copy copies the whole value (value_size bytes)",
     "    memmove(out, v, c->value_size);   /* out may be the value itself */",
     "    memmove(out, v, sizeof(long));   /* out may be the value itself */"),
    ("cache-drop-keeps-dep-slot", "a drop erases each added dependency's DEP slot (no slot names a record that is not LIVE)",
     "    for (i = 0; i < nd; i++) mguard__cslots_retag(c, MGUARD__CR_DEP(r, i)",
     "    for (i = 1; i < nd; i++) mguard__cslots_retag(c, MGUARD__CR_DEP(r, i)"),
    ("cache-drop-value-lost", "a dropped value reaches its destructor intact (the record holds it, or its block, until phase 2)",
     "    r->x.u = v;   /* the value, or its block */",
     "    r->x.u = 0 * v;   /* the value, or its block */"),
    ("cache-ring-slot-outlives-key", "a key's death erases its RING slots (the object is forgotten)",
     "                c->ringlive[s->pos & (MGUARD_CACHE_REASONS - 1)] = false;\n                mguard__cslot_erase(c, k, obj);",
     "                c->ringlive[s->pos & (MGUARD_CACHE_REASONS - 1)] = false;"),
    ("cache-ring-dead-key-still-live", "a key's death marks its reasons dead (their other keys' RING slots answer no more)",
     "                c->ringlive[s->pos & (MGUARD_CACHE_REASONS - 1)] = false;\n",
     "\n"),
    ("cache-drop-keeps-lru-link", "a dropped entry leaves the LRU list (it is never evicted again)",
     "        mguard__lru_unlink(c, pos + 1);\n        mguard__cache_cost_sub",
     "        mguard__cache_cost_sub"),
    ("cache-moved-not-recorded", "a rehash tells each cache entry where its lookup slot went",
     "        MGUARD__CROOT(ctx)->ctabs[s->tid & ~MGUARD__TID_CACHE]->recs[s->pos & MGUARD__CS_POS].slot = (uint32_t)j;",
     "        MGUARD__CROOT(ctx)->ctabs[s->tid & ~MGUARD__TID_CACHE]->recs[s->pos & MGUARD__CS_POS].slot += 0 * (uint32_t)j;"),
    ("cache-event-skips-jobs", "an event spoils the computes in progress that depend on its object",
     "        if (job->stale || !mguard__job_has(job, obj, attr, MGUARD__EV_IA())) continue;",
     "        if (job->stale || !mguard__job_has(job, obj, attr, MGUARD__EV_IA()) || 1) continue;"),
    ("cache-job-misses-declared-attr", "a compute in progress is spoiled by a mutation of an attribute it declared",
     "        if (job->deps[i].obj == obj && (!attr || !job->deps[i].attr || job->deps[i].attr == ia)) return true;",
     "        if (job->deps[i].obj == obj && (!attr || !job->deps[i].attr)) return true;"),
    ("cache-fast-get-ignores-nkeys", "a one-key get never answers a longer tuple that starts with its key (the fast get too)",
     "            if (s->key == key && s->tid == tid && (s->pos >> 28) == 0) {",
     "            if (s->key == key && s->tid == tid) {"),
    ("cache-slot-erase-keeps-object", "an object whose last slot a cache erased is forgotten (the object count)",
     "    if (obj != dying && !mguard__kx_known(ctx, obj, h)) ctx->live_objs--;",
     "    if (obj != dying && !mguard__kx_known(ctx, obj, h)) (void)0;"),
    ("cache-park-destroys-first", "a new stale value is parked before the one parked before is destroyed (its destructor may park another)",
     "    c->parked = block;\n    if (v8) {\n        memcpy(c->parkv.b, v8, sizeof c->parkv.b);\n        c->parked = c->parkv.b;\n    }\n    if (c->parked) c->parkseq = seq = c->next_seq++;\n    if (!old) return seq;\n    if (dtor) MGUARD__CALLOUT(ctx, dtor(old, user));\n",
     "    if (old && dtor) MGUARD__CALLOUT(ctx, dtor(old, user));\n    c->parked = block;\n    if (v8) {\n        memcpy(c->parkv.b, v8, sizeof c->parkv.b);\n        c->parked = c->parkv.b;\n    }\n    if (c->parked) c->parkseq = seq = c->next_seq++;\n    if (!old) return seq;\n"),
    ("str-shared-not-kept", "on a thread-safe context a ledger's strings and a cache reason's are kept for the context's life (a reader holds one after the call)",
     "    if (s && ctx->lk) MGUARD__STR_HDR(s)->refs = MGUARD__STR_STICKY;",
     "    (void)ctx; (void)s;"),
    # issue 25: drops you can see
    ("log-default-hides-info", "the default logger prints INFO lines (a cache's log_reasons) to stderr",
     "    if (level >= MGUARD_LOG_ERROR && level <= MGUARD_LOG_INFO)\n        fprintf",
     "    if (level >= MGUARD_LOG_ERROR && level <= MGUARD_LOG_WARN)\n        fprintf"),
    ("describe-weak-set-reads-t-after-callout", "a refusal's line reads nothing of the handle after describe (the hook may destroy the table)",
     '        mguard__logf(ctx, MGUARD_LOG_OBJECT_DYING, "mguard_weak_set", mguard__named(ctx, key, nm));',
     '        mguard__logf(((void)ctx, t->ctx), MGUARD_LOG_OBJECT_DYING, "mguard_weak_set", mguard__named(t->ctx, key, nm));'),
    ("describe-ledger-misuse-reads-L-after-callout", "a ledger's misuse line reads nothing of the ledger after describe (the hook may destroy it)",
     '    else mguard__logf(ctx, e ? MGUARD_LOG_LEDGER_CONTAINER : MGUARD_LOG_LEDGER_UNTRACKED, fn, mguard__named(ctx, obj, nm));',
     '    else mguard__logf(L->hd.ctx, e ? MGUARD_LOG_LEDGER_CONTAINER : MGUARD_LOG_LEDGER_UNTRACKED, fn, mguard__named(ctx, obj, nm));'),
    ("describe-ledger-misuse-unnamed", "a ledger's misuse warning names its object with the context's describe (issue 25)",
     'MGUARD_LOG_LEDGER_CONTAINER : MGUARD_LOG_LEDGER_UNTRACKED, fn, mguard__named(ctx, obj, nm));',
     'MGUARD_LOG_LEDGER_CONTAINER : MGUARD_LOG_LEDGER_UNTRACKED, fn, (snprintf(nm, sizeof nm, "%p", obj), nm));'),
    ("describe-mark-modified-unnamed", "mark_modified's misuse warning names its object with the context's describe (issue 25)",
     'MGUARD_LOG_LEDGER_NOT_CONTAINER : MGUARD_LOG_LEDGER_UNTRACKED, fn, mguard__named(ctx, obj, nm));',
     'MGUARD_LOG_LEDGER_NOT_CONTAINER : MGUARD_LOG_LEDGER_UNTRACKED, fn, (snprintf(nm, sizeof nm, "%p", obj), nm));'),
    ("describe-gen-untagged-unnamed", "the never-tagged warning names its object with the context's describe (issue 25)",
     "MGUARD_LOG_GEN_UNTAGGED, fn, mguard__named((mguard_ctx *)mguard__unconst(ctx), obj, nm));",
     "MGUARD_LOG_GEN_UNTAGGED, fn, (snprintf(nm, sizeof nm, \"%p\", obj), nm));"),
    ("describe-unused-in-cache-lines", "a cache line names its keys with the context's describe",
     "        (void)mguard__describe(ctx, k[i], name, sizeof name, vouched);",
     "        snprintf(name, sizeof name, \"%p\", k[i]); (void)vouched;"),
    ("describe-sees-the-destroyed", "describe is called only for an object passed to the call, known to the context or dying (never one destroyed meanwhile)",
     "    if (d.func && obj && (known || (ctx->dying && mguard__is_dying(ctx, obj)))) {",
     "    if (d.func && obj) {"),
    ("describe-empty-kept", "a name left empty prints as the address",
     "    if (buf[0]) return true;\n    snprintf(buf, size, \"%p\", obj);",
     "    if (buf[0] || 1) return true;\n    snprintf(buf, size, \"%p\", obj);"),
    ("describe-ring-unnamed", "the ring's reasons of a described event carry its name (obj_name)",
     "        if (!c->ring[i].obj_name) c->ring[i].obj_name = mguard__str_take(name);",
     "        (void)0;"),
    ("describe-drop-unnamed", "a drop's reason kept for phase 2 (the log line, dropped) carries the event's name",
     "        if (w && w->cause && !w->obj_name) w->obj_name = mguard__str_take(name);",
     "        (void)w;"),
    ("describe-jobs-unnamed", "a spoiled compute's remembered reason carries the event's name",
     "    for (job = MGUARD__CROOT(ctx)->jobs; job; job = job->next) mguard__cache_name_ring(job->c, ev, name);",
     "    for (job = MGUARD__CROOT(ctx)->jobs; job && 0; job = job->next) mguard__cache_name_ring(job->c, ev, name);"),
    ("describe-name-leaks", "the name of an event is released once its reasons took theirs",
     "    for (job = MGUARD__CROOT(ctx)->jobs; job; job = job->next) mguard__cache_name_ring(job->c, ev, name);\n    mguard__str_release(ctx, name);",
     "    for (job = MGUARD__CROOT(ctx)->jobs; job; job = job->next) mguard__cache_name_ring(job->c, ev, name);"),
    ("describe-format-by-address", "mguard_cache_reason_format prints obj_name in place of the address",
     "r->obj_name ? r->obj_name : addr,",
     "addr,"),
    ("describe-scope-by-address", "the scope's warnings name a component with describe",
     "        (void)mguard__describe(s->hd.ctx, comp, cn, sizeof cn, true);",
     "        snprintf(cn, sizeof cn, \"%p\", comp);"),
    ("dropped-not-told", "dropped is told each drop with a cause",
     "        if (dropped) MGUARD__CALLOUT(ctx, dropped(val, &why, user));",
     "        if (dropped && 0) MGUARD__CALLOUT(ctx, dropped(val, &why, user));"),
    ("dropped-after-dtor", "dropped is told before the value's destructor runs",
     "        if (dropped) MGUARD__CALLOUT(ctx, dropped(val, &why, user));\n",
     "        if (dtor) MGUARD__CALLOUT(ctx, dtor(val, user));\n        dtor = NULL;\n        if (dropped) MGUARD__CALLOUT(ctx, dropped(val, &why, user));\n"),
    ("dropped-reason-not-kept", "a cache with dropped keeps each drop's reason until phase 2 (no log_reasons needed)",
     "    c->keepwhy = c->log_reasons || c->dropped;",
     "    c->keepwhy = c->log_reasons;"),
    ("job-key-misses-last", "mguard_cache_job_key answers every key of the tuple",
     "    return mguard__job_ok(job) && i < job->nkeys ? job->keys[i] : NULL;",
     "    return mguard__job_ok(job) && i + 1 < job->nkeys ? job->keys[i] : NULL;"),
    ("ring-hint-any-position", "a forgotten reason's slot hint is trusted only if the slot still says RING and the reason's place",
     "        kx->slots[k].tid == MGUARD__CTID(c) && kx->slots[k].pos == (MGUARD__CS_RING | rp))",
     "        kx->slots[k].tid == MGUARD__CTID(c))"),
    ("ring-hint-out-of-bounds", "a forgotten reason's slot hint is checked against the index's size (it may have shrunk)",
     "    if (r->nkeys == 1 && k <= kx->mask && kx->slots[k].key == r->keys[0] &&",
     "    if (r->nkeys == 1 && kx->slots[k].key == r->keys[0] &&"),
    ("ring-hint-many-keys", "only a one-key reason's forget takes the hint (a tuple's other keys have ring slots too)",
     "    if (r->nkeys == 1 && k <= kx->mask && kx->slots[k].key == r->keys[0] &&",
     "    if (k <= kx->mask && kx->slots[k].key == r->keys[0] &&"),
    # ---- blind batch (issue 23): written from the header alone ----
    # context and the log queue
    ("blind-logq-dropped-not-reset", "a call's dropped-lines note counts that call's lines only (the queue empties after a take)",
     "    q->n = q->dropped = 0;",
     "    q->n = 0;"),
    ("blind-logq-drop-note-needs-two", "lines that did not fit in a call's queue are reported (one dropped line too)",
     "    if (dropped && n) {",
     "    if (dropped > 1 && n) {"),
    ("blind-logq-holds-one-less", "a call queues MGUARD__LOGQ lines before any is dropped",
     "    if (q->n == MGUARD__LOGQ) {",
     "    if (q->n + 1 >= MGUARD__LOGQ) {"),
    ("blind-lock-delivers-under-lock", "the logger never runs under mguard's lock (lines delivered after the lock is let go)",
     "    lk->unlock_fn(lk->user);\n    mguard__logq_deliver(q, n, dropped);\n}",
     "    mguard__logq_deliver(q, n, dropped);\n    lk->unlock_fn(lk->user);\n}"),
    ("blind-log-kept-after-void-call", "a default context's log lines reach the logger when a call without a result ends",
     "        mguard__##name args; \\\n        if (c_ && c_->logq.n) mguard__log_flush(c_); \\\n    }",
     "        mguard__##name args; \\\n    }"),
    ("blind-callout-no-flush-default", "a default context's lines are delivered at the next call into user code (before a callback runs)",
     "    do { if ((ctx)->lk) mguard__lock_release((ctx)->lk); else if ((ctx)->logq.n) mguard__log_flush(ctx); } while (0)",
     "    do { if ((ctx)->lk) mguard__lock_release((ctx)->lk); } while (0)"),
    ("blind-ledger2-first-only", "a two-ledger call whose first ledger is refused finds its context through the second",
     "    return c ? c : mguard__ctx_of_ledger(b);",
     "    return c ? c : mguard__ctx_of_ledger(b ? NULL : b);"),
    ("blind-ctx-destroy-unbury-before-lines", "mguard_ctx_destroy delivers its lines while the dead handles are kept (a logger calling one is refused, never reads freed memory)",
     "    if (ctx->logq.n) MGUARD__CALLOUT(ctx, (void)0);\n    mguard__unbury(ctx);   /* every callback has run */",
     "    mguard__unbury(ctx);   /* every callback has run */\n    if (ctx->logq.n) MGUARD__CALLOUT(ctx, (void)0);"),
    ("blind-bury-not-linked", "a handle destroyed during mguard_ctx_destroy is freed once the destroy is done (not leaked)",
     "    ctx->buried = h;\n}",
     "    (void)h;\n}"),
    ("blind-ctx-destroy-gone-not-restored", "a refused mguard_ctx_destroy (from a callback) leaves the lock as it was for the destroy that follows",
     "    lk->gone = outer;\n    mguard__lock_release(lk);",
     "    (void)outer;\n    mguard__lock_release(lk);"),
    # interned strings
    ("blind-str-take-counts-sticky", "a string given out by mguard_intern stays for the context's life (sticky count)",
     "        if (h->refs != MGUARD__STR_STICKY) h->refs++;",
     "        h->refs++;"),
    ("blind-str-release-memo-dangles", "the last release frees the string and forgets it (no later intern returns freed memory)",
     "    if (ctx->recent[1] == s) ctx->recent[1] = NULL;\n",
     "\n"),
    ("blind-str-release-moved-pos-stale", "string i's header says position i, also for the string a release moved",
     "        mh->pos = h->pos;\n",
     "\n"),
    # weak tables
    ("blind-weak-get-sized-smaller-accepted", "mguard_weak_get_sized refuses (NULL and a log line) any size but the table's",
     "    if (size != t->value_size) {\n        mguard__logf(t->ctx, MGUARD_LOG_WEAK_SIZE_MISMATCH,",
     "    if (size > t->value_size) {\n        mguard__logf(t->ctx, MGUARD_LOG_WEAK_SIZE_MISMATCH,"),
    # trackers
    ("blind-unwatch-counts-dead-guard", "unwatch answers NOT_FOUND for watchers of a destroyed guard at the same address",
     "            if (ws[i].guard == guard) found += g && ws[i].guard_serial == gserial;",
     "            if (ws[i].guard == guard) found++;"),
    ("blind-unwatch-cancels-other-object", "unwatch(obj, guard) cancels pending watchers of obj only, not of another object being invalidated",
     "        if (f->obj != obj || f->obj_serial != life) continue;\n        for (k = 0; k < f->n; k++) {",
     "        (void)life;\n        for (k = 0; k < f->n; k++) {"),
    ("mutation-frame-after-naming", "a mutation's watchers are its own from the swap (before the describe hook names its drops): unwatch there cancels, a destroy there leaves them to be told",
     "    mguard__fire_begin(ctx, &f, obj, serial, w, n);\n    MGUARD__EV_NAME(ctx, obj, &cq);\n",
     "    MGUARD__EV_NAME(ctx, obj, &cq);\n    mguard__fire_begin(ctx, &f, obj, mguard__serial_of(ctx, obj), w, n);\n    (void)serial;\n"),
    ("fired-watcher-still-found", "a watcher is removed before it is called: an unwatch from its own callback finds nothing",
     "        w[i].fn = NULL;       /* told: an unwatch from now on does not find it */\n",
     ""),
    ("death-skips-watchers-of-obj-on-other-thread", "mguard_on_destroy(obj) waits until another thread has told every watcher of obj's mutation in progress",
     "            if (((f->calling == guard && f->calling_serial == serial) || (f->obj == guard && f->obj_serial == serial)) &&",
     "            if (((f->calling == guard && f->calling_serial == serial) || (f->obj == guard && f->obj_serial == serial && !f)) &&"),
    ("unwatch-in-a-death-finds-no-life", "unwatch(obj, guard) from a death callback of obj cancels obj's later watchers (obj's life is the dying one)",
     "    life = r ? mguard__serial_of(ctx, obj) : mguard__dying_serial(ctx, obj);",
     "    life = r ? mguard__serial_of(ctx, obj) : 0 * mguard__dying_serial(ctx, obj);"),
    ("unwatch-cancels-an-old-lifes-watcher", "unwatch of a new object at a reused address leaves the old life's invalidation in progress alone",
     "        if (f->obj != obj || f->obj_serial != life) continue;",
     "        if (f->obj != obj || (f->obj_serial != life && !obj)) continue;"),
    # generations
    ("blind-gen-clear-keeps-class-marks", "mguard_gen_clear: every tag and class mark gone",
     "        o->flags &= ~(uint32_t)(MGUARD__F_TAGGED | MGUARD__F_CLASS_DYN);",
     "        o->flags &= ~(uint32_t)MGUARD__F_TAGGED;"),
    ("blind-gen-clear-keeps-records", "mguard_ctx_get_stats counts live records exactly (gen_clear lets go of tag-only records)",
     "        o->gen = -1;\n        mguard__reg_drop_if_empty(ctx, i + 1);\n",
     "        o->gen = -1;\n        (void)mguard__reg_drop_if_empty;\n"),
    # scope tracker
    ("blind-scope-walk-keeps-forgotten", "a forgotten component named again by a walk has a name",
     "            nv.flags = cv ? cv->flags & ~(uint32_t)MGUARD__SCOPE_FORGOTTEN : 0;",
     "            nv.flags = cv ? cv->flags : 0;"),
    ("blind-scope-walk-moves-queued", "a walk's moved list never holds a component the walk is still inside (a cycle)",
     "            moved = cv && cv->name != full && q == w->ntodo;",
     "            moved = cv && cv->name != full && (q == w->ntodo || 1);"),
    ("scope-walk-names-dying-child", "a walk skips a child in its own death (its live parent is still named), with a warning",
     "        if (!cname || !*cname || !child || (ctx->dying && mguard__is_dying(ctx, child))) {",
     "        if (!cname || !*cname || !child) {"),
    ("scope-walk-stale-parent-name", "a walk names the later children of a component a callout renamed from its new name",
     "        if (cv->name != t->mine) pname = t->name = t->mine = cv->name;",
     "        if (cv->name != t->mine) t->mine = cv->name;"),
    ("scope-walk-cycle-rename-counts", "a walk's own rename of a component it is inside (a cycle) does not rename that component's later children",
     "            if (q < w->ntodo) w->todo[q].mine = full;   /* a cycle: its own walk keeps its name */",
     "            (void)q;"),
    ("scope-lookup-cycle-name", "a lookup answers the name it was looked up by when only its own walk (a cycle) renamed it",
     "        if (now != mine) name = now;",
     "        name = now; (void)mine;"),
    ("scope-lookup-callout-rename-stale", "a lookup answers the name a callout gave the component during its walk",
     "        if (now != mine) name = now;",
     "        (void)now; (void)mine;"),
    ("scope-type-name-again-no-follow", "what is attached under a forgotten component follows it when it is named by its type again",
     "            if (!st && forgotten) st = mguard__scope_follow(s, &w, comp);   /* what is attached follows */",
     "            (void)forgotten;"),
    ("ledger-restore-other-type", "mguard_ledger_restore refuses a sized checkpoint of another value type",
     "        (L->desc.value_size ? cp->desc.value_type != L->desc.value_type : cp->desc.plain_values != L->desc.plain_values)) {",
     "        (L->desc.value_size ? 0 : cp->desc.plain_values != L->desc.plain_values)) {"),
    ("ledger-restore-other-plain", "mguard_ledger_restore refuses a pointer checkpoint of other plain_values",
     "        (L->desc.value_size ? cp->desc.value_type != L->desc.value_type : cp->desc.plain_values != L->desc.plain_values)) {",
     "        (L->desc.value_size ? cp->desc.value_type != L->desc.value_type : 0)) {"),
    ("ledger-track-dying-late", "a track of an object in its own death is refused before anything is reserved (EINVAL, never ENOMEM)",
     "    if (ctx->dying && mguard__refuse_dying(ctx, &obj, 1, fn)) return MGUARD_EINVAL;\n    if (mguard__ledger_ent_find(L, obj)) {",
     "    if (mguard__ledger_ent_find(L, obj)) {"),
    ("ledger-store-dying-late", "a store of a value in its own death is refused before anything is reserved",
     "    if (ctx->dying && value && !L->desc.plain_values && mguard__refuse_dying(ctx, (const void *const *)&value, 1, fn))\n        return MGUARD_EINVAL;\n",
     "\n"),
    ("ledger-record-dying-late", "a record of a payload in its own death is refused before anything is reserved",
     "    if (L->hd.ctx->dying && payload && watched && mguard__refuse_dying(L->hd.ctx, (const void *const *)&payload, 1, fn))\n        return MGUARD_EINVAL;\n",
     "\n"),
    ("ledger-hook-dying-late", "a hook on an object (or with a value) in its own death is refused before anything is reserved",
     "        if (mguard__refuse_dying(L->hd.ctx, both, watched && fn_value ? 2 : 1, fn)) return MGUARD_EINVAL;",
     "        (void)both;"),
    ("ledger-apply-judges-before-flush", "apply delivers the lines its last write queued before judging the next write's object alive",
     "        MGUARD__FLUSH(L->hd.ctx);\n        /* releases wait for the walk,",
     "        /* releases wait for the walk,"),
    ("describe-judges-before-flush", "describe delivers the lines queued so far before judging its object alive (a logger may destroy it)",
     "        MGUARD__FLUSH(ctx);\n        mguard__lookout_pop(ctx, &look);\n        if (look.died) d.func = NULL;",
     "        mguard__lookout_pop(ctx, &look);\n        if (look.died) d.func = NULL;"),
    ("cache-compute-key-destroyed-by-logger", "get_or_compute calls no compute for a key a callback destroyed before it ran",
     "        if (look[i].died) {   /* no compute of a key destroyed meanwhile */",
     "        if (look[i].died && 0) {   /* no compute of a key destroyed meanwhile */"),
    ("ledger-compact-keeps-stamp", "a compaction gives the ledger a new stamp (a walk sees a restore from a compacted checkpoint)",
     "    mguard__ledger_touch(L);   /* a new layout: a walk that saved the stamp sees it (a call that then fails too) */",
     "    (void)0;"),
    ("ledger-release-before-logger", "a release waits for the lines queued before it (a logger may destroy the value)",
     "        if (ctx->logq.n && (s->flags & MGUARD__LR_HELD) && L->desc.release) {",
     "        if (0 && ctx->logq.n && (s->flags & MGUARD__LR_HELD) && L->desc.release) {"),
    ("ledger-gone-trusts-stamp", "a diff label checks the object's life, not only whether its holder changed",
     "    return !mguard__ledger_alive(X, p) || !mguard__ledger_same(X, p, serial);\n}",
     "    return !mguard__ledger_alive(X, p) || (!serial && 0);\n}"),
    ("cache-job-depend-dying-stale", "mguard_cache_job_depend refuses a dying object (EINVAL, logged) even once its job is stale",
     "    if (mguard__refuse_dying(ctx, &obj, 1, \"mguard_cache_job_depend\")) {",
     "    if (!job->stale && mguard__refuse_dying(ctx, &obj, 1, \"mguard_cache_job_depend\")) {"),
    ("scope-set-name-dying-unnamed", "mguard_scope_set_name of a component in its own death is refused under its own name",
     "    if (st || (st = mguard__refuse_dying(s->hd.ctx, &comp, 1, \"mguard_scope_set_name\"))) return st;",
     "    if (st) return st;"),
    ("scope-type-name-of-dying", "a component in its own death gets no type name (NOT_FOUND, no callout)",
     "        if (!s->desc.type_name || (ctx->dying && mguard__is_dying(ctx, comp))) return MGUARD_NOT_FOUND;   /* dying: no name */",
     "        if (!s->desc.type_name) return MGUARD_NOT_FOUND;"),
    ("scope-set-phase-while-destroying", "mguard_scope_set_phase is refused while s is being destroyed by its own callback",
     "    if (mguard__scope_refuse(s, s, \"mguard_scope_set_phase\")) return MGUARD_EINVAL;",
     "    if (!mguard__scope_ok(s)) return MGUARD_EINVAL;"),
    ("blind-scope-add-accepts-infinity", "mguard_scope_add refuses an amount that is not finite (EINVAL, logged)",
     "    if (!counter || !*counter || !(amount - amount == 0.0)) {",
     "    if (!counter || !*counter || amount != amount) {"),
    ("blind-scope-reset-keeps-phase", "mguard_scope_clear(FRAMES): the phase is 0",
     "        s->phase = 0;\n    } else {",
     "    } else {"),
    ("scope-clear-frames-unasked", "mguard_scope_clear closes the frames only when CLEAR_FRAMES is given",
     "    if (!(flags & MGUARD_SCOPE_CLEAR_FRAMES)) return MGUARD_OK;",
     "    if (!flags) return MGUARD_OK;"),
    ("scope-clear-unknown-flag", "mguard_scope_clear refuses an unknown flag",
     "    if (!st && (flags & ~7u)) {",
     "    if (!st && (flags & ~15u)) {"),
    # dynamism tracker
    ("blind-dyn-grow-loses-varies", "a dimension that varied stays dynamic when the path's rank grows",
     "        memcpy(blk + ncap * sizeof(mguard__dyn_val), r->dyn, r->rank * sizeof(bool));\n",
     "\n"),
    ("blind-dyn-nan-varies", "values compare as Python numbers, NaN equals NaN here",
     "    if (!a->is_int && !b->is_int) return a->d == b->d || (a->d != a->d && b->d != b->d);",
     "    if (!a->is_int && !b->is_int) return a->d == b->d;"),
    ("blind-dyn-mixed-truncates", "values compare as Python numbers (2 == 2.0, 2 != 2.5)",
     "    return (double)(int64_t)dv->d == dv->d && (int64_t)dv->d == iv->i;",
     "    return (int64_t)dv->d == iv->i;"),
    ("blind-dyn-dims-past-cap", "mguard_dyn_dims stores at most cap flags",
     "    for (i = 0; i < cap && varies; i++)",
     "    for (i = 0; i <= cap && varies; i++)"),
    ("dyn-dims-unknown-rank-kept", "mguard_dyn_dims stores rank 0 for a path never observed",
     "    if (rank) *rank = rec ? rec->rank : 0;",
     "    if (rank && rec) *rank = rec->rank;"),
    # side-effects ledger
    ("blind-ledger-apply-fix-full", "apply's field index is at most half full (a lookup of a name that is no field ends)",
     "        for (nfix = maxf ? 4 : 0; nfix && nfix / 2 < maxf; nfix *= 2)",
     "        for (nfix = maxf ? 4 : 0; nfix && nfix < maxf; nfix *= 2)"),
    ("blind-ledger-apply-fix-hash-unshifted", "apply writes every write to a bound field into the field (the index is probed as it was filled)",
     "    for (i = (mguard__hash_str(attr) >> 1) & mask; t[i].ent == e; i = (i + 1) & mask)",
     "    for (i = mguard__hash_str(attr) & mask; t[i].ent == e; i = (i + 1) & mask)"),
    ("blind-ledger-apply-object-by-address", "apply skips a write whose object was destroyed meanwhile (identity is the serial, not the address)",
     "        if (L->stamp != s0 && (!mguard__ledger_ent_find(L, snap[i].obj) || !mguard__ledger_same(L, snap[i].obj, snap[i].obj_serial) ||",
     "        if (L->stamp != s0 && (!mguard__ledger_ent_find(L, snap[i].obj) ||"),
    ("blind-ledger-beq-b-change-unnoticed", "a ledger changed inside a sized equal hook abandons the comparison (either ledger)",
     "    if (c->a->stamp != c->sa || c->b->stamp != c->sb) {",
     "    if (c->a->stamp != c->sa) {", 1),
    ("blind-ledger-field-smaller-accepted", "a pointer ledger's set_fields refuses a field smaller than a pointer (EINVAL, logged)",
     "                            : f->size != sizeof(void *) ? \"a pointer's size in a ledger of pointer values (desc.value_size: values inline)\" : NULL;",
     "                            : f->size > sizeof(void *) ? \"a pointer's size in a ledger of pointer values (desc.value_size: values inline)\" : NULL;"),
    # guarded caches
    ("blind-cache-pairset-ignores-attr", "past 8 dependencies, (obj, attr) covers only itself: another attribute of obj is still declared",
     "    while (job->set[i].obj && (job->set[i].obj != obj || job->set[i].attr != ia)) i = (i + 1) & (job->setcap - 1);",
     "    while (job->set[i].obj && job->set[i].obj != obj) i = (i + 1) & (job->setcap - 1);"),
    ("blind-cache-pairset-doubled-loses-pairs", "a dependency declared again is kept once (the set, made or doubled, holds every declared one)",
     "        for (i = 0; i + 1 < job->ndeps; i++) job->set[",
     "        for (i = 0; i + 1 < job->ndeps && cap == 4u * MGUARD__JOB_SCAN; i++) job->set["),
    ("blind-cache-pairset-full", "the job's set stays at most half full (lookups end)",
     "    if (!job->set || job->ndeps * 2u > job->setcap) {",
     "    if (!job->set || job->ndeps > job->setcap) {"),
    # hubs (issue 24's quadratic): an object many entries share
    ("hub-erase-no-backshift", "a hub slot erased leaves no hole in its run (the later ones stay found)",
     "        if (((j - MGUARD__HUB_AT(hb, j)->tid) & mask) >= ((j - i) & mask)) {   /* i lies between its home and j */",
     "        if (0) {"),
    ("hub-never-made", "past MGUARD__HUB_AFTER heavy slots on an object's probe, the next go into its hub",
     "    if (hk != SIZE_MAX || heavy >= MGUARD__HUB_AFTER) {",
     "    if (hk != SIZE_MAX) {"),
    ("hub-take-keeps-attr", "a dependency's slot in a hub lets its attribute go with it",
     "    if ((s.pos & MGUARD__CS_HUB) == MGUARD__CS_DEP) mguard__str_release(c->ctx, (const char *)s.v.cp);",
     "    (void)0;"),
    ("hub-retag-skips-hub", "a drop erases its slots in the hubs of its further keys and dependencies",
     "    if (hk == SIZE_MAX) return;\n    while",
     "    return;\n    while"),
    ("hub-ring-not-kept", "a remembered drop's slots in a hub become RING slots (its keys stay pinned)",
     "        mguard__hub_take(c, hk, hi, keys[0] != dying ? ring : -1);",
     "        mguard__hub_take(c, hk, hi, -1);"),
    ("hub-death-keeps-rings", "a death frees its hubs' RING slots (the object is forgotten)",
     "    if (death && hubs) mguard__hubs_die(ctx, obj);",
     "    if (death && hubs && 0) mguard__hubs_die(ctx, obj);"),
    ("hub-find-misses-tuples", "a tuple's lookup slot in its first key's hub is found",
     "    if (hk == SIZE_MAX || n == 1) return NULL;",
     "    if (1) return NULL;"),
    ("hub-lookup-ignores-hub", "mguard_cache_has_dep sees a dependency kept in a hub (no second slot for it)",
     "    if (!hb) return false;\n    mask = hb[0].pos;",
     "    if (1) return false;\n    mask = hb[0].pos;"),
    ("hub-attr-ignored", "a dependency on an attribute kept in a hub is dropped only by that attribute (or NULL)",
     "        if (attr && (e->pos & MGUARD__CS_DEP) && e->v.cp && e->v.cp != (const void *)ia) continue;",
     "        if (attr && (e->pos & MGUARD__CS_DEP) && e->v.cp && e->v.cp == (const void *)ia) continue;"),
    ("hub-ring-dead-still-live", "a key's death makes the reasons kept in its hub answer no more",
     "            if (death) c->ringlive[e->pos & (MGUARD_CACHE_REASONS - 1)] = false;",
     "            if (death && 0) c->ringlive[e->pos & (MGUARD_CACHE_REASONS - 1)] = false;"),
    ("hub-never-shrinks", "a hub shrinks as it empties (an event reads what it holds, not what it once held)",
     "        c->nitems--;\n        mguard__hub_shrink(hb);",
     "        c->nitems--;\n        if (0) mguard__hub_shrink(hb);"),
    ("hub-drop-element-found-before-the-ring", "a drop finds its lookup element after the ring forgot its oldest reason (which may move it)",
     """        ring = (int)mguard__ring_next(c, why, keys, nk, live, dying);
    }
    /* found after the ring made room: forgetting its oldest reason may have
       erased a hub element, moving this one back */
    ls = MGUARD__CREC_LSLOT(c, r, pos, &hk, &hi);""",
     """        ls = MGUARD__CREC_LSLOT(c, r, pos, &hk, &hi);
        ring = (int)mguard__ring_next(c, why, keys, nk, live, dying);
    }
    if (!why->cause) ls = MGUARD__CREC_LSLOT(c, r, pos, &hk, &hi);"""),
    ("blind-cache-reason-oldest-first", "mguard_cache_last_reason returns the newest remembered drop of the tuple",
     "        rp = (c->ringpos + MGUARD_CACHE_REASONS - 1 - i) % MGUARD_CACHE_REASONS;",
     "        rp = (c->ringpos + i) % MGUARD_CACHE_REASONS;"),
    ("blind-cache-cost-sub-carry-on-equal", "the entries' total cost is exact (dropping the whole total leaves 0, no carry)",
     "    if (c->total_cost < cost) c->cost_carry--;",
     "    if (c->total_cost <= cost) c->cost_carry--;"),
]

# Mutants left out because no program can tell them from the original.
# (id, old, new, why)
EQUIVALENT = [
    ("intern-memo-not-mru",
     "        ctx->recent[1] = ctx->recent[0];\n        ctx->recent[0] = s;",
     "        ctx->recent[0] = s;",
     "the memo of recent strings is a cache of lookups: keeping one string "
     "instead of two changes the instructions of a cache invalidation (its "
     "attribute is found by a strcmp), not what any call returns; "
     "bench-ir's ir_mguard_cache_inval row shows it."),
    ("wlist-giveback-to-non-tracker",
     "        sd = o && (o->flags & MGUARD__F_TRACKER) ? MGUARD__SIDE(ctx, o) : NULL;",
     "        sd = o ? MGUARD__SIDE(ctx, o) : NULL;",
     "a side record is made only with the tracker flag (mguard_watch) and goes "
     "with its record, so a record with a side record is a tracker: the test "
     "is a guard, not a branch. (It was not equivalent while cache keys had "
     "records of their own; they have none since the caches moved onto the "
     "index. test_heap_list_not_given_to_a_new_life_without_a_tracker keeps "
     "the behaviour it guards.)"),
    ("kx-slots-not-line-aligned",
     "    i += (64 - ((uintptr_t)(blk + i) & 63)) & 63;   /* blocks are 16-aligned at least */\n",
     "\n",
     "the slot array then starts right after the control bytes, on the "
     "16-byte boundary MGUARD__KX_CTRLBYTES rounds to: still aligned for "
     "mguard__kslot (8 bytes at most), inside the block (the 48 spare bytes "
     "go unused), and every slot keeps its index; only the cache lines a "
     "group's slots straddle change, which is speed, not a result."),
    ("kx-no-one-line-preference",
     "            i = pos + mguard__kx_bit((m & MGUARD__KX_ONELINE) ? m & MGUARD__KX_ONELINE : m);",
     "            i = pos + mguard__kx_bit(m);",
     "an insertion then takes the group's first EMPTY slot instead of its "
     "first EMPTY one-line slot: a slot of the same group of the same probe, "
     "passing the same groups (the same overflow counts), so every lookup, "
     "erase, rehash and death finds the same slots; which slot of the group "
     "a key holds is seen by no caller (iteration follows each table's "
     "order, a death sorts by stamp, the tests find slots by key), only the "
     "lines a lookup reads."),
    ("kx-probe-ignores-overflow-count",
     "        if (!MGUARD__KX_ON(kx, pos) || step >= kx->mask) return hit;",
     "        if (step >= kx->mask) return hit;",
     "a probe then reads every group (its triangular steps reach each one "
     "once before step reaches the mask) instead of ending at the first "
     "group whose overflow count is 0: no slot lies past that group on the "
     "key's probe (the counts are exact or sticky), and EMPTY and PENDING "
     "control bytes never match a tag, so it finds the same slot and the "
     "same `known`, only later."),
]

TEST_TIMEOUT = 15    # seconds per binary (the slowest takes about 1 s); a hang counts as caught
SAN_TIMEOUT = 90     # the same under ASan + UBSan (several times slower)
SAN_FLAGS = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]


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
    if nth is not None and count == 1:
        # an occurrence went: the index may now name another place than the one meant
        return None, "STALE: pattern occurs once but an occurrence index is given (is it still the place meant?)"
    k = 0 if nth is None else nth
    if k >= count:
        return None, "STALE: occurrence %d asked, %d found" % (k, count)
    pos = -1
    for _ in range(k + 1):
        pos = src.index(old, pos + 1)
    return (src[:pos] + new + src[pos + len(old):], pos), None


# test_differential links an implementation built with these (the Makefile's
# $(BUILD)/mguard_impl_hub1.o): hubs from the second slot, SWAR on x86-64 too.
IMPL_OWN_TESTS = {"test_differential"}
IMPL_OWN_FLAGS = ["-DMGUARD__HUB_AFTER=1", "-DMGUARD__NO_SSE2"]


class Builder:
    def __init__(self, root, cc, cflags, jobs, sanitize=False):
        self.root, self.cc, self.jobs = root, cc, jobs
        self.timeout = SAN_TIMEOUT if sanitize else TEST_TIMEOUT
        if sanitize:
            cflags = cflags + SAN_FLAGS
        stb = sh(["pkg-config", "--cflags", "stb"])
        stb_flags = stb.stdout.split() if stb.returncode == 0 else ["-I/usr/include/stb"]
        self.cflags = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-pthread"] + cflags + stb_flags
        self.libs = ["-lcmocka", "-pthread"] + (["-fsanitize=address,undefined"] if sanitize else [])
        tests = sorted(f for f in os.listdir(os.path.join(root, "tests"))
                       if f.startswith("test_") and f.endswith(".c"))
        self.names = [t[:-2] for t in tests]
        self.own_impl = set()   # test files that compile the implementation themselves
        for t in tests:
            with open(os.path.join(root, "tests", t)) as f:
                if re.search(r"^#define MGUARD_IMPLEMENTATION", f.read(), re.M):
                    self.own_impl.add(t[:-2])

    def compile(self, hdr_dir, src, out, obj=True, extra=()):
        cmd = [self.cc] + self.cflags + list(extra) + ["-I" + hdr_dir] + (["-c"] if obj else []) + [src, "-o", out]
        return sh(cmd, cwd=self.root)

    def parallel(self, jobs):
        with ThreadPoolExecutor(self.jobs) as ex:
            return list(ex.map(lambda j: j(), jobs))

    def build(self, hdr_dir, out_dir, base_dir, everything, names, impl_too=True):
        """Build the test binaries `names` in out_dir against
        hdr_dir/mguard.h (and the implementation object first, unless it is
        there already). Returns None, or the first compiler output that
        failed."""
        os.makedirs(out_dir, exist_ok=True)
        t = os.path.join(self.root, "tests")
        impl = os.path.join(out_dir, "mguard_impl.o")
        impl_own = os.path.join(out_dir, "mguard_impl_hub1.o")   # the Makefile's for test_differential
        jobs = []
        if impl_too:
            jobs.append(lambda: self.compile(hdr_dir, os.path.join(t, "mguard_impl.c"), impl))
            jobs.append(lambda: self.compile(hdr_dir, os.path.join(t, "mguard_impl.c"), impl_own, extra=IMPL_OWN_FLAGS))
        for n in names:
            if everything or n in self.own_impl:
                jobs.append(lambda n=n: self.compile(hdr_dir, os.path.join(t, n + ".c"),
                                                     os.path.join(out_dir, n + ".o")))
        for r in self.parallel(jobs):
            if r.returncode:
                return r.stdout
        links = []
        for n in names:
            o = os.path.join(out_dir if (everything or n in self.own_impl) else base_dir, n + ".o")
            cmd = [self.cc, o, impl_own if n in IMPL_OWN_TESTS else impl, "-o", os.path.join(out_dir, n)] + self.libs
            links.append(lambda cmd=cmd: sh(cmd))
        for r in self.parallel(links):
            if r.returncode:
                return r.stdout
        return None

    def run(self, out_dir, order, stop_early=True):
        """Run the binaries (cwd: the repository). Returns (name, output) of
        the first that failed, or None."""
        failed = []

        def one(n):
            if failed and stop_early:
                return
            p = subprocess.Popen([os.path.join(out_dir, n)], cwd=self.root, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, universal_newlines=True,
                                 errors="replace",   # a mutant may print freed memory
                                 start_new_session=True)
            try:
                out, _ = p.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)
                p.communicate()
                failed.append((n, "timed out after %d s" % self.timeout))
                return
            if p.returncode:
                failed.append((n, out))

        self.parallel([lambda n=n: one(n) for n in order])
        return failed[0] if failed else None


def last_lines(text, n=3):
    lines = [l for l in text.splitlines() if l.strip()]
    return "\n".join("      " + l for l in lines[-n:])


def compile_mutants(root, src, chosen, a):
    """--check --compile: each mutant's implementation compiled (syntax and
    front-end warnings, -Werror) as the tests build it: mguard_impl.c with the
    flags of both test builds, and every test file that holds the
    implementation itself (test_debug: MGUARD_DEBUG). 0: all compile; 1:
    some do not (listed with the compiler's last lines)."""
    b = Builder(root, a.cc, shlex.split(a.cflags), a.j)
    work = tempfile.mkdtemp(prefix="mguard-mutate-cc.")
    impl = os.path.join(root, "tests", "mguard_impl.c")

    def one(m):
        d = os.path.join(work, m[0])
        os.makedirs(d)
        with open(os.path.join(d, "mguard.h"), "w") as f:
            f.write(apply(src, m)[0][0])
        builds = [(impl, (), "the plain build"), (impl, IMPL_OWN_FLAGS, " ".join(IMPL_OWN_FLAGS))]
        builds += [(os.path.join(root, "tests", n + ".c"), (), n) for n in sorted(b.own_impl)]
        for src_file, extra, what in builds:
            r = b.compile(d, src_file, os.devnull, obj=False, extra=list(extra) + ["-fsyntax-only"])
            if r.returncode:
                return m[0], what, r.stdout
        return None

    t0 = time.time()
    try:
        with ThreadPoolExecutor(a.j) as ex:
            broken = [r for r in ex.map(one, chosen) if r]
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    for mid, build, out in broken:
        print("mutate: %s does not compile (%s):\n%s" % (mid, build, last_lines(out, 6)))
    if broken:
        print("mutate: %d of %d mutants do not compile: fix their strings (docs/contributing.md)" % (len(broken), len(chosen)))
        return 1
    print("check-mutants: the %d mutants all compile, in every build of the tests (%.0f s)" % (len(chosen), time.time() - t0))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-j", type=int, default=2, help="parallel jobs (default 2)")
    ap.add_argument("--only", default="", help="comma-separated mutant ids")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutant's string still matches mguard.h (no build; make test runs it)")
    ap.add_argument("--compile", action="store_true",
                    help="--check, and compile each mutant's implementation as the tests build it "
                         "(-fsyntax-only, every build; a few minutes): a mutant that no longer compiles is found "
                         "before a full run counts it broken")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="-O1", help="optimisation flags (default -O1)")
    ap.add_argument("--no-sanitize", action="store_true",
                    help="do not re-run the survivors of the plain run under ASan + UBSan")
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
    if a.check or a.compile:
        stale = [(m[0], apply(src, m)[1]) for m in chosen if apply(src, m)[0] is None]
        for i, why in stale:
            print("mutate: %s %s" % (i, why))
        if stale:
            print("mutate: %d of %d mutants no longer match mguard.h: update their strings (docs/contributing.md)" % (len(stale), len(chosen)))
            return 1
        print("check-mutants: the %d mutants of tests/mutate.py all match mguard.h" % len(chosen))
        return compile_mutants(root, src, chosen, a) if a.compile else 0
    impl_at = src.index("#ifdef MGUARD_IMPLEMENTATION")
    work = tempfile.mkdtemp(prefix="mguard-mutate.")
    t0 = time.time()
    b = Builder(root, a.cc, shlex.split(a.cflags), a.j)
    try:
        # the real header: every test object, and a run that must pass
        base = os.path.join(work, "base")
        os.makedirs(base)
        shutil.copy(os.path.join(root, "mguard.h"), base)
        err = b.build(base, base, base, True, b.names)
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
        caught, caught_san, survived, bad = [], [], [], []
        san = {}   # the sanitized builder and its baseline, made at the first survivor

        def san_base():
            if not san:
                bs = Builder(root, a.cc, shlex.split(a.cflags), a.j, sanitize=True)
                d = os.path.join(work, "base-san")
                s0 = time.time()
                err = bs.build(base, d, d, True, bs.names)
                if err:
                    raise SystemExit("mutate: the unmutated tree does not build under ASan + UBSan:\n" + err)
                r = bs.run(d, order, stop_early=False)
                if r:
                    raise SystemExit("mutate: %s fails under ASan + UBSan without any mutant:\n%s" %
                                     (r[0], last_lines(r[1], 10)))
                print("mutate: ASan + UBSan baseline built and run (%.0f s)" % (time.time() - s0))
                san.update(b=bs, dir=d)
            return san["b"], san["dir"]

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
            # First the binaries that link the implementation object (one
            # compile), then, if none caught it, those that compile the
            # implementation themselves (a compile each).
            everything = pos < impl_at
            first = [n for n in order if n not in b.own_impl]
            second = [n for n in order if n in b.own_impl]
            err = b.build(d, d, base, everything, first)
            r = None
            if not err:
                r = b.run(d, first)
            if not err and not r:
                err = b.build(d, d, base, everything, second, impl_too=False)
                if not err:
                    r = b.run(d, second)
            if err:
                bad.append(m[0])
                print("%s BROKEN: does not compile\n%s" % (tag, last_lines(err, 4)))
                continue
            if r:
                caught.append(m[0])
                print("%s caught by %s (%.1f s)" % (tag, r[0], time.time() - s))
                r = True
            elif not a.no_sanitize:
                # the plain run missed it: every binary again under ASan + UBSan
                bs, bsd = san_base()
                ds = os.path.join(d, "san")
                err = bs.build(d, ds, bsd, everything, order)
                r = None if err else bs.run(ds, order)
                if err:
                    bad.append(m[0])
                    print("%s BROKEN under ASan + UBSan: does not compile\n%s" % (tag, last_lines(err, 4)))
                    r = True
                elif r:
                    caught_san.append(m[0])
                    print("%s caught by %s under ASan + UBSan only (%.1f s)" % (tag, r[0], time.time() - s))
            if not r:
                survived.append(m[0])
                print("%s SURVIVED (%.1f s): %s" % (tag, time.time() - s, m[1]))
            if not a.keep:
                shutil.rmtree(d, ignore_errors=True)
        total = time.time() - t0
        n = len(caught) + len(caught_san) + len(survived)
        print("mutate: %d/%d caught by the plain suites (%.0f%%); of the %d that survived them, %d caught "
              "under ASan + UBSan%s; %d survived both, %d stale or broken, %d equivalent left out; %.0f s" %
              (len(caught), n, 100.0 * len(caught) / n if n else 0, n - len(caught), len(caught_san),
               " (not run: --no-sanitize)" if a.no_sanitize else "", len(survived), len(bad),
               len(EQUIVALENT), total))
        if caught_san:
            print("caught only under ASan + UBSan: " + ", ".join(caught_san))
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
