#!/usr/bin/env python3
"""Write tests/fuzz.dict and the issue-11 seeds of tests/corpus/ from the
operation kinds and weights of tests/fuzz_decoder.h. Run it (from the
repository root) whenever fz_kind or fz_weights changes: the first byte of
an operation is the first weight-map slot of its kind.
    python3 tests/fuzz_seeds.py"""
import re

SRC = open("tests/fuzz_decoder.h").read()
_kinds = re.sub(r"/\*.*?\*/", "", re.search(r"enum fz_kind \{(.*?)\};", SRC, re.S).group(1), flags=re.S)
KINDS = [k.strip() for k in _kinds.split(",") if k.strip()][:-1]          # FZ_NKINDS dropped
WEIGHTS = [int(x) for x in re.search(r"fz_weights\[FZ_NKINDS\] = \{(.*?)\};", SRC, re.S).group(1).split(",") if x.strip()]
MAPSIZE = int(re.search(r"#define FZ_MAPSIZE (\d+)", SRC).group(1))
assert len(KINDS) == len(WEIGHTS) and sum(WEIGHTS) == MAPSIZE, "fz_kind and fz_weights disagree"
FIRST = {}
_acc = 0
for _k, _w in zip(KINDS, WEIGHTS):
    FIRST[_k] = _acc
    _acc += _w


def op(kind, a=0, b=0, c=0, ref=0):
    """One operation: {kind, a, b, c, ref}."""
    return bytes([FIRST["FZ_" + kind], a, b, c, ref])


def aux_ledger(a, b, c):
    return op("X_LEDGER", a, b, c)


def aux_scope(a, b, c):
    """a picks the sub-operation through the decoder's table (subs[a % 32])."""
    return op("X_SCOPE", a, b, c)


def seeds():
    s = {}
    d = b"\x06\x00"   # the dynamism tracker with extreme inputs
    d += op("D_OBSERVE", 0, 3, 0) + op("D_OBSERVE", 1, 3, 1) + op("D_OBSERVE", 2, 5, 2)
    d += op("D_OBSERVE", 13, 12, 0) + op("D_OBSERVE", 13, 12, 5) + op("D_OBSERVE", 6, 13, 0)
    d += op("D_OBSERVE", 6, 14, 0) + op("D_OBSERVE", 7, 15, 0) + op("D_OBSERVE", 14, 0, 0) + op("D_OBSERVE", 15, 2, 0)
    for c in (31, 1, 0, 8, 9, 11, 12, 14, 15, 16, 29, 30, 31):
        d += op("D_SCALAR", 8, 0, c)
    d += op("D_OBSERVE", 8, 1, 0) + op("D_OBSERVE", 8, 1, 1)
    for a in (0, 1, 2, 8, 10, 11, 12, 13, 15):
        d += op("D_QUERY", a, a % 6, 8 + a % 6)
    d += op("D_ITER") + op("D_FORMAT", 0, 3) + op("D_FORMAT", 0, 2) + op("D_FORMAT", 0, 1)
    d += op("D_DESTROY", 0, 0) + op("D_OBSERVE", 4, 4, 3) + op("D_ITER")
    s["seed-dynamism-extremes"] = d

    d = b"\x04\x01"   # scope names, counters, reports; context cycles; thread-safe
    d += op("S_NAME", 0, 0) + op("S_NAME", 1, 1) + op("S_ENTER", 0) + op("S_ENTER", 1)
    d += op("S_NAME2", 0, 0, 3) + op("S_NAME2", 2, 0, 2)
    for c in (2, 8, 8, 9, 6, 29, 31, 1):
        d += op("S_ADD", 0, 0, c)
    d += op("S_ADD", 0, 2, 2) + op("S_ADD", 0, 3, 2)
    for a in (0, 1, 8, 9):
        d += op("S_COUNTER", a, 0)
    for b in (0, 1, 2, 3):
        d += op("S_REPORT", 0, b, 0xC5)
    d += op("S_PHASE", 0, 0) + op("S_PHASE", 0, 2) + op("S_NAME2", 0, 0, 3) + op("S_DESTROY", 0, 0) + op("S_ENTER", 0)
    d += op("MISC", 3, 1) + op("MISC", 255, 5) + op("SET") + op("REF_MAKE", 0, 1)
    d += op("REF_GET", 0, 0) + op("REF_GET", 0, 1) + op("REF_GET", 0, 2)
    d += op("CREATE_TABLE", 0, 1, 3) + op("SET", 0, 1, 0) + op("GET", 0, 1) + op("CTX_CYCLE", 0)
    d += op("CREATE_TABLE", 0, 1, 3) + op("SET", 0, 1, 0) + op("CTX_CYCLE", 1) + op("MISC", 0, 0)
    s["seed-scope-counters-ctx-cycle"] = d

    d = b"\x05\x00"   # ledger apply whose action destroys the write's value; diff
    d += op("L_TRACK", 0, 0, 0) + op("L_TRACK", 1, 0, 1) + op("L_TRACK", 2, 1, 2)
    d += op("L_WRITE", 0xE0, 1, 0) + op("L_WRITE", 0xE1, 2, 1) + op("L_WRITE", 0xE1, 0xFF, 6) + op("L_CLONE")
    d += op("L_APPLY", 0, 0, 0, 0x80) + op("DESTROY_OBJ", 8)
    d += op("L_DIFF", 1, 0, 0) + op("L_APPLY") + op("L_APPLY", 0, 7, 0) + op("L_DIFF", 0, 1, 0x10)
    s["seed-ledger-apply-diff"] = d

    d = b"\x02\x00"   # the auxiliary context: every hook and callback
    d += aux_ledger(0, 0xFF, 7)
    for o in range(6):
        d += aux_ledger(1, o, o)
    d += aux_ledger(2, 0, 0x84) + aux_ledger(2, 1, 0x88) + aux_ledger(3, 2, 1) + aux_ledger(4, 0, 0x08)
    d += aux_ledger(5, 1, 0x0C) + aux_ledger(5, 2, 0x10) + aux_ledger(7, 0x08, 0) + aux_ledger(2, 0, 0x14)
    d += aux_ledger(9, 0x08, 0) + aux_ledger(10, 0, 0x81) + aux_ledger(11, 0, 0) + aux_ledger(6, 0, 1)
    d += aux_ledger(8, 0x08, 0) + aux_ledger(15, 0, 0x80) + aux_ledger(14, 3, 0) + aux_ledger(12, 0, 0)
    d += aux_ledger(13, 0x08, 0) + aux_ledger(13, 0, 0)
    d += op("X_CTX", 1, 1, 0) + aux_scope(4, 0x7F, 0x0F)          # created by the first scope operation
    for o in range(4):
        d += aux_scope(4, o, 0)                                        # enter
    d += aux_scope(0, 5, 0) + aux_scope(2, 6, 1) + aux_scope(14, 0, 0x10) + aux_scope(15, 0, 0x11)
    d += aux_scope(16, 0, 2) + aux_scope(17, 0, 0x0D) + aux_scope(20, 0, 1) + aux_scope(22, 0, 1)
    d += aux_scope(10, 1, 0) + aux_scope(23, 0, 0) + aux_scope(24, 0, 1) + aux_scope(27, 2, 0)
    d += aux_scope(29, 0, 4) + aux_scope(26, 0, 0)
    d += op("X_CTX", 2, 3, 0) + aux_ledger(0, 0x02, 7) + aux_ledger(1, 0, 0) + aux_ledger(1, 1, 0) + op("X_CTX", 0, 0, 0)
    s["seed-aux-hooks-callbacks"] = d

    d = b"\x02\x00"   # a traced scope whose clock jumps to 1e300 and DBL_MAX
    d += aux_scope(4, 4, 0x0C)        # created: clock and trace, the clock from DBL_MAX on (4 ^ 0x0C)
    d += aux_scope(4, 0, 0) + aux_scope(10, 0, 0) + aux_scope(4, 1, 0) + aux_scope(10, 1, 0)
    d += aux_scope(16, 0, 2) + aux_scope(20, 0, 5)
    s["seed-aux-trace-extreme-clock"] = d

    d = b"\x00\x00"   # a ref made before a context cycle, its object known again after
    d += op("REF_MAKE", 0, 0) + op("CTX_CYCLE", 0) + op("GEN_TAG", 0) + op("REF_GET", 0, 0)
    d += op("REF_MAKE", 1, 1) + op("CTX_CYCLE", 1) + op("GEN_TAG", 1) + op("REF_GET", 1, 0)
    s["seed-ref-across-ctx-cycle"] = d

    # apply's callback mutates the write's object O: O's first watcher
    # destroys O, its second tracks a newcomer at O's address (inside the
    # apply: defect 4 of issue 11 when enabled), whose remaining write
    # must not be applied. Pool of 6 (byte 6 is the callback's object).
    d = b"\x04\x00"
    d += op("L_TRACK", 0, 0, 0) + op("L_WRITE", 0, 1, 0) + op("L_WRITE", 0, 2, 1)
    d += op("WATCH", 0, 1, 0, 0x80) + op("DESTROY_OBJ", 6)
    d += op("WATCH", 0, 2, 0, 0x80) + op("L_TRACK", 6, 0, 0)
    d += op("L_APPLY", 0, 0, 0, 0x80) + op("MUTATE", 6, 0)
    s["seed-apply-newcomer"] = d

    # prune with the refs hook over containers (LEDGER_MARK o, b: o.append(b)):
    # a MUTABLE container 0 holds NEW 1 (which holds NEW 5) and, through the
    # untracked 7, NEW 6; EXISTING 3 holds NEW 2 unmarked; NEW 4 is a root;
    # NEW 8 is dead. Pool of 9.
    d = b"\x07\x00"
    for a, kind in ((0, 2), (1, 1), (2, 1), (3, 0), (4, 1), (5, 1), (6, 1), (8, 1)):
        d += op("L_TRACK", a, kind, 0)
    d += op("L_MARK", 0, 1) + op("L_MARK", 3, 2) + op("L_MARK", 1, 5) + op("L_MARK", 0, 7) + op("L_MARK", 7, 6)
    d += op("L_PRUNE", 4, 0xFF, 1)
    for a in range(9):
        d += op("L_LOAD", a, 0, 0)
    d += op("L_MARK", 0, 1) + op("L_PRUNE", 0xFF, 0xFF, 0) + op("L_LOAD", 1, 0, 0) + op("L_LOAD", 5, 0, 0)
    s["seed-ledger-prune-containers"] = d

    # field tables (LEDGER_TRACK with c bit 6): apply writes x and y into
    # the pool object itself (a deletion zeroes x), z goes to the callback;
    # load reads the real field when nothing is pending. Once with 8-byte
    # integer values (header byte 1, bit 1), once with pointer values.
    for name, h1 in (("seed-ledger-sized-fields", 2), ("seed-ledger-pointer-fields", 0)):
        d = bytes([0x07, h1])
        d += op("L_TRACK", 0, 0, 0x40) + op("L_WRITE", 0, 3, 0) + op("L_WRITE", 0, 5, 1) + op("L_WRITE", 0, 2, 2)
        d += op("L_LOAD", 0, 0, 0) + op("L_APPLY", 0, 0, 0) + op("L_CLEAR", 0, 0, 0)
        d += op("L_TRACK", 0, 0, 0x40) + op("L_LOAD", 0, 0, 0) + op("L_WRITE", 0, 0, 4)
        d += op("L_APPLY", 0, 7, 0) + op("L_LOAD", 0, 0, 1) + op("L_CLEAR", 0, 0, 0)
        d += op("L_TRACK", 0, 0, 0x40) + op("L_LOAD", 0, 0, 0) + op("L_TRACK", 1, 2, 0x40) + op("L_TRACK", 2, 0, 0xC0)
        s[name] = d
    # guarded caches on the main context (FZ_CACHE: a = call | x << 4; c =
    # keys - 1 | stride << 2 | slot << 4 | y << 5): a bounded cache (3
    # entries, max_cost 5); computes that go stale (a declared dependency
    # mutated, a key destroyed), re-enter, run an action that sets another
    # key (an eviction), fail; the queries; a cache destroyed by its own
    # compute's action. Pool of 6.
    d = b"\x04\x00"
    d += op("CACHE", 0x60, 0, 0) + op("CACHE", 0x12, 0, 0) + op("CACHE", 0x22, 1, 1)
    d += op("CACHE", 0x36, 2, 0) + op("CACHE", 0x46, 3, 0) + op("CACHE", 0x96, 4, 0)
    d += op("CACHE", 0x06, 5, 0x60, 0x80) + op("CACHE", 0x32, 3, 0)
    d += op("CACHE", 0x07, 1, 0x80) + op("CACHE", 0x04, 4, 0) + op("CACHE", 0x0B, 0, 0) + op("CACHE", 0x0C, 0, 0)
    d += op("CACHE", 0x0D, 2, 0) + op("CACHE", 0x1E, 1, 1) + op("CACHE", 0x0D, 1, 1) + op("CACHE", 0x0F, 0, 0)
    d += op("CACHE", 0x38, 0, 0x41) + op("DESTROY_OBJ", 1) + op("MUTATE", 0, 3) + op("CACHE", 0x09, 0, 0)
    d += op("CACHE", 0x00, 0, 0x10) + op("CACHE", 0x12, 1, 0x10) + op("CACHE", 0x06, 0, 0x30, 0x80) + op("CACHE", 0x01, 0, 0x10)
    d += op("CACHE", 0x0A, 0, 0) + op("CACHE", 0x0C, 0, 0) + op("CACHE", 0x01, 0, 0)
    s["seed-cache-computes"] = d

    # LRU: capacity 2 (a hit saves its entry from the next eviction), then
    # max_cost 5 (evictions until under, never the entry just stored, even
    # when it alone is over). Pool of 6.
    d = b"\x04\x00"
    d += op("CACHE", 0x14, 0, 0) + op("CACHE", 0x02, 0, 0) + op("CACHE", 0x02, 1, 0) + op("CACHE", 0x04, 0, 0)
    d += op("CACHE", 0x02, 2, 0) + op("CACHE", 0x0B, 0, 0) + op("CACHE", 0x0C, 0, 0)
    d += op("CACHE", 0x44, 0, 0x10) + op("CACHE", 0x22, 0, 0x10) + op("CACHE", 0x12, 1, 0x10) + op("CACHE", 0x04, 0, 0x10)
    d += op("CACHE", 0x22, 2, 0x10) + op("CACHE", 0x32, 3, 0x10) + op("CACHE", 0x0B, 0, 0x10) + op("CACHE", 0x0C, 0, 0x10)
    s["seed-cache-lru"] = d

    # a value destructor run by get_or_compute destroys its cache: an
    # evicted value's (capacity 2) after the store, then a parked stale
    # value's before the next miss's compute (the cache was freed under
    # the call; see reliability.md). Pool of 6.
    d = b"\x04\x00"
    d += op("CACHE", 0x14, 0, 0) + op("CACHE", 0x02, 0, 0, 0x80) + op("CACHE", 0x01, 0, 0)
    d += op("CACHE", 0x02, 1, 0) + op("CACHE", 0x05, 2, 0)
    d += op("CACHE", 0x36, 3, 0x40, 0x80) + op("CACHE", 0x01, 0, 0) + op("CACHE", 0x05, 5, 0)
    d += op("CACHE", 0x0C, 0, 0)
    s["regress-cache-destroyed-by-a-value-destructor"] = d
    return s


DICT = [
    ("hdr_thread_safe", b"\x07\x01", "header: pool of 9 objects, 1 table slot, thread-safe context"),
    ("hdr_fault", b"\x47\x20", "header: fault mode, allocation 1 + 0x20 fails"),
    ("op_create_table_264_dtor_death", op("CREATE_TABLE", 0, 3, 7), None),
    ("op_set_with_inline_action", op("SET", 0, 0, 0, 0x80), None),
    ("op_ctx_cycle_thread_safe", op("CTX_CYCLE", 1), None),
    ("op_ctx_cycle_default", op("CTX_CYCLE", 0), None),
    ("op_dyn_long_path_rank_4096", op("D_OBSERVE", 13, 12, 0), "dynamism tracker: long path, rank 4096, INT64 extremes, NaN, -0.0, DBL_MAX, a denormal, 2^63"),
    ("op_dyn_rank_2_int64_min_max", op("D_OBSERVE", 0, 3, 0), None),
    ("op_dyn_rank_2_other", op("D_OBSERVE", 1, 3, 1), None),
    ("op_dyn_rank_2_to_31", op("D_OBSERVE", 2, 13, 0), None),
    ("op_dyn_scalar_nan", op("D_SCALAR", 0, 0, 31), None),
    ("op_dyn_scalar_neg_zero", op("D_SCALAR", 0, 0, 1), None),
    ("op_dyn_scalar_dbl_max", op("D_SCALAR", 0, 0, 8), None),
    ("op_dyn_scalar_denormal", op("D_SCALAR", 0, 0, 11), None),
    ("op_dyn_scalar_2_pow_63", op("D_SCALAR", 0, 0, 14), None),
    ("op_scope_add_dbl_max", op("S_ADD", 0, 0, 8), "the model's scope tracker and ledgers"),
    ("op_scope_report_trace", op("S_REPORT", 0, 2, 0), None),
    ("op_ledger_track", op("L_TRACK"), None),
    ("op_ledger_write", op("L_WRITE", 0xE0, 1, 0), None),
    ("op_ledger_apply_inline_action", op("L_APPLY", 0, 0, 0, 0x80), None),
    ("op_aux_ctx_thread_safe", op("X_CTX", 1, 1, 0), "the auxiliary context: every hook, every callback, thread-safe, faults"),
    ("op_aux_ctx_fail_soon", op("X_CTX", 2, 5, 0), None),
    ("op_aux_ledger_all_hooks", aux_ledger(0, 0xFF, 7), None),
    ("op_aux_ledger_track", aux_ledger(1, 0, 1), None),
    ("op_aux_ledger_store", aux_ledger(2, 0, 0x84), None),
    ("op_aux_ledger_record", aux_ledger(4, 0, 8), None),
    ("op_aux_ledger_hook", aux_ledger(5, 1, 0x0C), None),
    ("op_aux_ledger_clone", aux_ledger(7, 8, 0), None),
    ("op_aux_ledger_diff", aux_ledger(9, 8, 0), None),
    ("op_aux_ledger_apply", aux_ledger(11, 0, 0), None),
    ("op_aux_scope_all_callbacks", aux_scope(4, 0x7F, 0x0F), None),
    ("op_aux_scope_enter", aux_scope(4, 0, 0), None),
    ("op_aux_scope_report_trace", aux_scope(16, 0, 2), None),
    ("op_cache_bounded", op("CACHE", 0x60, 0, 0), "guarded caches on the main context: a bounded cache, computes that go stale, re-enter, run an action"),
    ("op_cache_set_cost_2", op("CACHE", 0x22, 1, 1), None),
    ("op_cache_compute_mutates_its_dependency", op("CACHE", 0x36, 2, 0), None),
    ("op_cache_compute_destroys_a_key", op("CACHE", 0x46, 3, 0), None),
    ("op_cache_compute_reenters", op("CACHE", 0x96, 4, 0), None),
    ("op_cache_compute_inline_action", op("CACHE", 0x06, 0, 0x60, 0x80), None),
    ("op_cache_mutation_at", op("CACHE", 0x1E, 1, 1), None),
]


def main():
    out = ["# libFuzzer dictionary for tests/fuzz_mguard.c (make fuzz passes it with",
           "# -dict). Written by tests/fuzz_seeds.py from tests/fuzz_decoder.h: each",
           "# entry is one 5-byte operation ({kind, a, b, c, ref}, the kind byte the",
           "# first weight-map slot of the operation) or a header: the operations that",
           "# open a surface (a context, a table with destructors, a ledger with every",
           "# hook, a scope tracker with every callback) and extreme arguments."]
    for name, data, comment in DICT:
        if comment:
            out += ["", "# " + comment]
        out.append('%s="%s"' % (name, "".join("\\x%02x" % b for b in data)))
    open("tests/fuzz.dict", "w").write("\n".join(out) + "\n")
    for name, data in seeds().items():
        open("tests/corpus/" + name, "wb").write(data)


if __name__ == "__main__":
    main()
