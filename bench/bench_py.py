"""The Python peers of bench.c, run by it as a subprocess.

Two systems, each printed as lines "row_id<TAB>n<TAB>system<TAB>ns_per_op":
  py_wkd  the standard library's weakref.WeakKeyDictionary
  py_ref  a pure-Python identity-keyed weak dictionary, mutation tracker and
          generation tracker written the way the reference works (PyTorch
          Dynamo's ExactWeakKeyDictionary, MutationTracker, GenerationTracker;
          see the reference notes): a dict by id(key) plus a weakref whose
          callback removes the entry; a watcher list swapped out on mutation;
          mutation notified from a patched __setattr__ that swallows KeyError.

Rows and sizes follow bench.c (same ids). bench.c runs this file as a
co-process (--serve) and takes the Python samples in the same rounds as the
C systems, in a random order per round, with as many samples: the commands
on stdin, one answer line each, are
  fixture sized N | fixture fixed   build the Python side of a fixture;
                                    answer "rows id:sys id:sys ... "
  sample ID N SYS                   one sample: ns per operation
  mem N                             bytes per entry: "wkd ref tracked"
  quit
A sample repeats its pass until it ran for at least --min-ns (20 ms); at 1M
keys every pass goes over all the keys. The cyclic garbage collector is off
while timing. Every loop checks its result, so a fast wrong answer fails the
run ("WRONG RESULT ..." on stdout, and bench.c stops).
Usage: python3 bench_py.py --serve [--min-ns NS]
"""
import gc
import random
import statistics
import sys
import time
import tracemalloc
import weakref

ONLY = None
FIX_N = 10000
UNRELATED = 10000
SAMPLES = 1
MIN_NS = float(sys.argv[sys.argv.index("--min-ns") + 1]) if "--min-ns" in sys.argv else 20e6
REG = {}   # row id -> {system: sample function}, for the fixture built last
now = time.perf_counter_ns
rnd = random.Random(12345)


class WrongResult(Exception):
    pass


def check(cond, what):
    if not cond:
        raise WrongResult(what)


# ---- the reference, written from its described behaviour -------------------
class ExactWeakKeyDict:
    """Identity-keyed weak dictionary: values by id(key), a weakref per key
    whose callback drops the entry when the key dies."""

    def __init__(self):
        self.values = {}
        self.refs = {}

    def __getitem__(self, key):
        return self.values[id(key)]

    def get(self, key, default=None):
        return self.values.get(id(key), default)

    def __contains__(self, key):
        return id(key) in self.values

    def __setitem__(self, key, value):
        idx = id(key)
        if idx not in self.refs:
            self.refs[idx] = weakref.ref(key, lambda ref: self._remove_id(idx))
        self.values[idx] = value

    def __delitem__(self, key):
        idx = id(key)
        del self.values[idx]
        del self.refs[idx]

    def _remove_id(self, idx):
        if idx in self.values:
            del self.values[idx]
        if idx in self.refs:
            del self.refs[idx]

    def __len__(self):
        return len(self.values)

    def items(self):
        return self.values.items()


class MutationTracker:
    db = ExactWeakKeyDict()

    def __init__(self):
        self.mutation_count = 0
        self.watchers = []

    def on_mutation(self, name):
        self.mutation_count += 1
        tmp = self.watchers
        self.watchers = []
        for ref in tmp:
            guarded = ref()
            if guarded is not None:
                guarded.invalidate(ref)

    def track(self, guarded):
        self.watchers.append(weakref.ref(guarded))


def watch(obj, guarded):
    if obj not in MutationTracker.db:
        MutationTracker.db[obj] = MutationTracker()
    MutationTracker.db[obj].track(guarded)


class GenerationTracker:
    generation = 0
    generation_values = ExactWeakKeyDict()

    @classmethod
    def tag(cls, obj):
        cls.generation_values[obj] = cls.generation

    @classmethod
    def check(cls, obj):
        return obj in cls.generation_values and cls.generation_values[obj] == cls.generation


class ModuleTracker:
    """The reference's ModuleTracker logic without torch: names from a weak
    dictionary of known modules and a weak set of seen ones, the active set
    `parents` always holding "Global"; pre/post are the forward hooks."""

    def __init__(self):
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        mod_name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for name, submod in mod.named_children():
                self._known_modules[submod] = "%s.%s" % (mod_name, name)
                self._get_mod_name(submod)
            self._seen_modules.add(mod)
        return mod_name

    def pre(self, mod):
        name = self._get_mod_name(mod)
        if name in self.parents:
            pass   # the reference logs "already entered" here
        self.parents.add(name)

    def post(self, mod):
        name = self._get_mod_name(mod)
        if name in self.parents:
            self.parents.remove(name)


class Module:
    def __init__(self, children=()):
        self.children = list(children)

    def named_children(self):
        return [("c%d" % i, m) for i, m in enumerate(self.children)]


class AttributeMutationExisting:
    __slots__ = ("source",)

    def __init__(self, source):
        self.source = source


class AttributeMutationNew:
    __slots__ = ("cls_source",)

    def __init__(self, cls_source):
        self.cls_source = cls_source


class Var:
    """A VariableTracker: what the ledger knows of one object."""
    __slots__ = ("mutable_local",)

    def __init__(self, mutable_local):
        self.mutable_local = mutable_local


class SideEffects:
    """The reference's SideEffects bookkeeping: id(obj) -> variable, and the
    pending attribute writes per mutable_local; clone, ==, diff and
    prune_dead_object_new written the way the reference does them."""

    def __init__(self, id_to_variable=None, store_attr_mutations=None, keepalive=None):
        self.id_to_variable = id_to_variable or {}
        self.store_attr_mutations = store_attr_mutations or {}
        self.keepalive = keepalive or []

    def track(self, obj, mutable_local):
        var = Var(mutable_local)
        self.id_to_variable[id(obj)] = var
        self.keepalive.append(obj)
        return var

    def store_attr(self, var, name, value):
        if var.mutable_local not in self.store_attr_mutations:
            self.store_attr_mutations[var.mutable_local] = {}
        self.store_attr_mutations[var.mutable_local][name] = value

    def clone(self):
        return SideEffects(
            id_to_variable=dict(self.id_to_variable),
            store_attr_mutations={k: dict(v) for k, v in self.store_attr_mutations.items()},
            keepalive=list(self.keepalive),
        )

    def __eq__(self, other):
        return (self.id_to_variable == other.id_to_variable
                and self.store_attr_mutations == other.store_attr_mutations)

    def diff(self, other):
        if self.id_to_variable != other.id_to_variable:
            sk, ok = self.id_to_variable.keys(), other.id_to_variable.keys()
            if sk != ok:
                return "id_to_variable keys: %s != %s" % (sk, ok)
            return "id_to_variable: unknown diff"
        if self.store_attr_mutations != other.store_attr_mutations:
            sk, ok = self.store_attr_mutations.keys(), other.store_attr_mutations.keys()
            if sk != ok:
                return "store_attr_mutations keys: %s != %s" % (sk, ok)
            return "store_attr_mutations: unknown diff"
        return None

    def prune_dead_object_new(self, roots=()):
        live_new_objects = set()
        visited = set()

        def visit(var):
            mutable_local = var.mutable_local
            if mutable_local in visited:
                return
            visited.add(mutable_local)
            if isinstance(mutable_local, AttributeMutationNew):
                live_new_objects.add(mutable_local)
            if mutable_local in self.store_attr_mutations:
                for value in self.store_attr_mutations[mutable_local].values():
                    visit(value)

        def is_live(x):
            if isinstance(x, AttributeMutationNew):
                return x in live_new_objects
            if isinstance(x, Var):
                return is_live(x.mutable_local)
            return True

        pre_existing = [v for v in self.id_to_variable.values()
                        if not isinstance(v.mutable_local, AttributeMutationNew)]
        for v in list(roots) + pre_existing:
            visit(v)
        self.id_to_variable = {k: v for k, v in self.id_to_variable.items() if is_live(v)}
        self.store_attr_mutations = {k: v for k, v in self.store_attr_mutations.items() if is_live(k)}


class Key:
    """A plain object: the keys and watched objects. Its __setattr__ is
    patched the way the reference patches a watched class."""

    def __setattr__(self, key, value):
        try:
            MutationTracker.db[self].on_mutation(key)
        except KeyError:
            pass
        object.__setattr__(self, key, value)


FIRED = [0]


class Guard:
    def invalidate(self, ref):
        FIRED[0] += 1


# ---- harness -----------------------------------------------------------------
def out(row, n, system, ns):
    print("%s\t%d\t%s\t%.3f" % (row, n, system, ns), flush=True)


def wanted(row):
    return ONLY is None or ONLY in row


def passes(n, fn):
    """Repeat fn (n operations) until MIN_NS elapsed: ns per op."""
    count = 0
    t0 = now()
    while True:
        fn()
        count += 1
        el = now() - t0
        if el >= MIN_NS:
            return el / (count * n)


def cycles(n, setup, timed, teardown):
    """Repeat setup / timed / teardown until the timed parts reach MIN_NS."""
    tot = 0
    count = 0
    while True:
        st = setup()
        t0 = now()
        timed(st)
        tot += now() - t0
        teardown(st)
        count += 1
        if tot >= MIN_NS:
            return tot / (count * n)


def run(row, n, systems, samples):
    """Register the row's sample functions; bench.c calls them (sample)."""
    REG[row] = systems


# ---- weak table rows at n keys ---------------------------------------------------
def sized_rows(n):
    samples = SAMPLES
    keys = [Key() for _ in range(n)]
    ins = keys[:]
    rnd.shuffle(ins)
    look = keys[:]
    rnd.shuffle(look)
    misses = [Key() for _ in range(n)]
    val = {id(k): i + 1 for i, k in enumerate(keys)}
    total = n * (n + 1) // 2
    ins_pairs = [(k, val[id(k)]) for k in ins]
    look_pairs = [(k, val[id(k)]) for k in look]

    wkd = weakref.WeakKeyDictionary()
    ref = ExactWeakKeyDict()
    for k, v in ins_pairs:
        wkd[k] = v
    for k, v in ins_pairs:
        ref[k] = v
    tables = {"py_wkd": wkd, "py_ref": ref}

    ops = len(look)

    def get_hit(t):
        def p():
            s = 0
            for k in look:
                s += t[k]
            check(s == total, "get hit")
        return lambda: passes(ops, p)

    def get_miss(t):
        def p():
            g = t.get
            for k in misses:
                if g(k) is not None:
                    raise WrongResult("get miss")
        return lambda: passes(ops, p)

    def overwrite(t):
        def p():
            for k, v in look_pairs:
                t[k] = v
            check(len(t) == n, "overwrite")
        return lambda: passes(ops, p)

    def iterate(t):
        def p():
            s = 0
            for _k, v in t.items():
                s += v
            check(s == n * (n + 1) // 2, "iterate")
        return lambda: passes(n, p)

    def fill(t):
        for k, v in ins_pairs:
            t[k] = v
        return t

    def set_new(make):
        def timed(t):
            for k, v in ins_pairs:
                t[k] = v
        return lambda: cycles(n, make, timed, lambda t: check(len(t) == n, "set new"))

    def remove(make):
        def timed(t):
            for k in look:
                del t[k]
        return lambda: cycles(n, lambda: fill(make()), timed, lambda t: check(len(t) == 0, "remove"))

    run("get_hit", n, {s: get_hit(t) for s, t in tables.items()}, samples)
    run("get_miss", n, {s: get_miss(t) for s, t in tables.items()}, samples)
    run("set_new", n, {"py_wkd": set_new(weakref.WeakKeyDictionary), "py_ref": set_new(ExactWeakKeyDict)}, samples)
    run("overwrite", n, {s: overwrite(t) for s, t in tables.items()}, samples)
    run("iterate", n, {s: iterate(t) for s, t in tables.items()}, samples)

    # An unwatched mutation: the patched setattr on an object with no
    # tracker, while the tracker db holds n objects (the steady table of
    # the reference dictionary: a miss never reads a value).
    def mut_sample():
        MutationTracker.db = ref

        def mut():
            for m in misses:
                m.x = 1
            check(len(MutationTracker.db) == n, "unwatched mutation")
        try:
            return passes(ops, mut)
        finally:
            MutationTracker.db = ExactWeakKeyDict()
    run("mut_unwatched", n, {"py_ref": mut_sample}, samples)
    run("remove", n, {"py_wkd": remove(weakref.WeakKeyDictionary), "py_ref": remove(ExactWeakKeyDict)}, samples)


# ---- fixed rows: FIX_N objects -------------------------------------------------
def fixed_rows():
    n = FIX_N
    samples = SAMPLES

    def death(make, k, unrelated):
        """The death of keys held by k tables, net of the death of as many
        plain objects held by nothing (timed right after, same order): the
        weak-reference work alone, without the object's own deallocation,
        as the C rows do not count free()."""
        def sample():
            gross = base = 0
            count = 0
            while gross < MIN_NS:
                objs = [Key() for _ in range(n)]
                plain = [Key() for _ in range(n)]
                ts = [make() for _ in range(k)]
                un = [make() for _ in range(UNRELATED)] if unrelated else []
                for t in ts:
                    for i in range(n):
                        t[objs[i]] = 1    # no loop variable left holding a key
                order = list(range(n))
                rnd.shuffle(order)
                t0 = now()
                for i in order:
                    objs[i] = None   # the last reference: the object dies
                t1 = now()
                for i in order:
                    plain[i] = None
                t2 = now()
                gross += t1 - t0
                base += t2 - t1
                count += 1
                for t in ts:
                    check(len(t) == 0, "death left an entry")
                del un
            return (gross - base) / (count * n)
        return sample

    for row, k, unrel in (("death_t1", 1, False), ("death_t4", 4, False),
                          ("death_t16", 16, False), ("death_t1_u10k", 1, True)):
        run(row, n, {"py_wkd": death(weakref.WeakKeyDictionary, k, unrel),
                     "py_ref": death(ExactWeakKeyDict, k, unrel)}, samples)

    objs = [Key() for _ in range(n)]
    order = objs[:]
    rnd.shuffle(order)

    def ref_make():
        def timed(refs):
            for o in order:
                refs.append(weakref.ref(o))
        return cycles(n, list, timed, lambda refs: check(len(refs) == n, "ref make"))
    run("ref_make", n, {"py_ref": ref_make}, samples)

    refs = [weakref.ref(o) for o in order]

    def ref_alive():
        for r, o in zip(refs, order):
            if r() is not o:
                raise WrongResult("ref get alive")
    run("ref_get_alive", n, {"py_ref": lambda: passes(n, ref_alive)}, samples)

    dead = [Key() for _ in range(n)]
    dead_refs = [weakref.ref(o) for o in dead]
    del dead

    def ref_dead():
        for r in dead_refs:
            if r() is not None:
                raise WrongResult("ref get dead")
    run("ref_get_dead", n, {"py_ref": lambda: passes(n, ref_dead)}, samples)

    guards = [Guard() for _ in range(8)]

    def mut_watched(k):
        """The mutation and the re-arm (the reference's watchers are
        one-shot, as mguard's): both timed, as in bench.c."""
        def sample():
            MutationTracker.db = ExactWeakKeyDict()
            gs = guards[:k]
            for o in objs:
                for g in gs:
                    watch(o, g)
            FIRED[0] = 0
            done = [0]

            def p():
                for o in order:
                    o.x = 1
                    for g in gs:
                        watch(o, g)
                done[0] += 1
            try:
                r = passes(n, p)
                check(FIRED[0] == n * k * done[0], "watchers fired")
                return r
            finally:
                MutationTracker.db = ExactWeakKeyDict()
        return sample
    run("mut_w1", n, {"py_ref": mut_watched(1)}, samples)
    run("mut_w8", n, {"py_ref": mut_watched(8)}, samples)

    def watch_row():
        MutationTracker.db = ExactWeakKeyDict()
        for o in objs:
            watch(o, guards[0])

        def setup():
            for o in objs:      # fire (and drop) the previous watchers
                o.x = 1

        def timed(_):
            g = guards[0]
            for o in order:
                watch(o, g)
        try:
            return cycles(n, setup, timed, lambda _: None)
        finally:
            MutationTracker.db = ExactWeakKeyDict()
    run("watch", n, {"py_ref": watch_row}, samples)

    # cache_inval: Python's equivalent of a guarded cache entry dropped by
    # a mutation: a memo keyed by id(obj) (entries dropped by a weakref
    # callback when obj dies) and a patched __setattr__ that drops obj's
    # entry before the write.
    memo = ExactWeakKeyDict()

    class MemoKey:
        def __setattr__(self, key, value):
            memo.values.pop(id(self), None)
            object.__setattr__(self, key, value)
    mobjs = [MemoKey() for _ in range(n)]
    morder = mobjs[:]
    rnd.shuffle(morder)

    def cache_inval():
        def setup():
            for i, o in enumerate(mobjs):
                memo[o] = i

        def timed(_):
            for o in morder:
                o.x = 1

        def teardown(_):
            check(len(memo.values) == 0, "memo emptied")
        return cycles(n, setup, timed, teardown)
    run("cache_inval", n, {"py_ref": cache_inval}, samples)
    # (mobjs and morder stay: the sampler calls cache_inval later, in the
    # C rounds)
    MutationTracker.db = ExactWeakKeyDict()

    def gen_tag():
        def setup():
            GenerationTracker.generation_values = ExactWeakKeyDict()
            GenerationTracker.generation = 1

        def timed(_):
            for o in order:
                GenerationTracker.tag(o)
        return cycles(n, setup, timed, lambda _: check(len(GenerationTracker.generation_values) == n, "gen tag"))
    run("gen_tag", n, {"py_ref": gen_tag}, samples)

    def gen_is_current():
        for o in order:
            if not GenerationTracker.check(o):
                raise WrongResult("gen check")
    run("gen_is_current", n, {"py_ref": lambda: passes(n, gen_is_current)}, samples)


def scope_rows():
    """enter+exit of one more module with depth - 1 open; counters added to
    8 active names (a dict per name, the natural Python spelling)."""
    if not any(wanted(r) for r in ("scope_d1", "scope_d16", "scope_add8")):
        return
    n = FIX_N

    def chain():
        # 16 nested modules: Module > Module.c0 > Module.c0.c0 > ...
        inner = Module()
        mods = [inner]
        for _ in range(15):
            inner = Module([inner])
            mods.append(inner)
        mods.reverse()
        return mods

    def enter_exit(depth):
        def sample():
            tr = ModuleTracker()
            mods = chain()
            for m in mods[:depth - 1]:
                tr.pre(m)
            m = mods[depth - 1]

            def p():
                for _ in range(n):
                    tr.pre(m)
                    tr.post(m)
                check(len(tr.parents) == depth, "scope enter/exit")
            return passes(n, p)
        return sample
    run("scope_d1", n, {"py_ref": enter_exit(1)}, SAMPLES)
    run("scope_d16", n, {"py_ref": enter_exit(16)}, SAMPLES)

    def add8():
        tr = ModuleTracker()
        mods = chain()
        for m in mods[:7]:
            tr.pre(m)
        counters = {}
        done = [0]

        def p():
            for _ in range(n):
                for name in tr.parents:
                    c = counters.get(name)
                    if c is None:
                        c = counters[name] = {}
                    c["flops"] = c.get("flops", 0.0) + 1.0
            done[0] += n
            check(len(tr.parents) == 8 and counters["Global"]["flops"] == done[0], "scope add")
        return passes(n, p)
    run("scope_add8", n, {"py_ref": add8}, SAMPLES)


def ledger_rows(sizes):
    """The C ledger workload: n objects, even ones existing with one write,
    odd ones new writing themselves; existing i % 4 == 0 writes new i + 1
    (kept alive by prune), new i % 4 == 3 unreachable. ns per object."""
    for n in sizes:
        objs = [Key() for _ in range(n)]
        se = SideEffects()
        var = [None] * n
        for i in range(1, n, 2):
            var[i] = se.track(objs[i], AttributeMutationNew(None))
        for i in range(0, n, 2):
            var[i] = se.track(objs[i], AttributeMutationExisting("L"))
        for i in range(n):
            se.store_attr(var[i], "attr", var[i + 1] if i % 4 == 0 and i + 1 < n else var[i])

        def clone():
            return cycles(n, lambda: None, lambda _: se.clone(), lambda _: None)
        run("ledger_clone", n, {"py_ref": clone}, SAMPLES)

        twin = se.clone()

        def equal():
            def p():
                check(se == twin, "ledger equal")
            return passes(n, p)
        run("ledger_equal", n, {"py_ref": equal}, SAMPLES)

        other = se.clone()
        for i in range(0, n, 2):
            if (i // 2) % 100 == 0:
                other.store_attr(var[i], "attr", var[(i + 2) % n])

        def diff():
            def p():
                check(se.diff(other) is not None, "ledger diff")
            return passes(n, p)
        run("ledger_diff", n, {"py_ref": diff}, SAMPLES)

        def prune():
            def timed(c):
                c.prune_dead_object_new()

            def teardown(c):
                check(len(c.id_to_variable) == n - n // 4, "ledger prune")
            return cycles(n, se.clone, timed, teardown)
        run("ledger_prune", n, {"py_ref": prune}, SAMPLES)


def memory(n):
    """Bytes per entry (tracemalloc), keys made before counting starts:
    "wkd ref tracked"."""
    keys = [Key() for _ in range(n)]
    res = []
    for make in (weakref.WeakKeyDictionary, ExactWeakKeyDict):
        tracemalloc.start()
        t = make()
        for i, k in enumerate(keys):
            t[k] = i + 1
        cur, _peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        res.append(cur / n)
        del t
    g = Guard()
    MutationTracker.db = ExactWeakKeyDict()
    tracemalloc.start()
    for k in keys:
        watch(k, g)
    cur, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    res.append(cur / n)
    MutationTracker.db = ExactWeakKeyDict()
    return "%.1f %.1f %.1f" % tuple(res)


def fixture(words):
    REG.clear()
    gc.collect()
    if words[0] == "sized":
        n = int(words[1])
        sized_rows(n)
        if n <= 100000:
            ledger_rows([n])
    else:
        fixed_rows()
        scope_rows()
    return "rows " + "".join(" %s:%s " % (row, s) for row, systems in REG.items() for s in systems)


def serve():
    gc.disable()
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        try:
            if w[0] == "quit":
                break
            elif w[0] == "fixture":
                ans = fixture(w[1:])
            elif w[0] == "sample":
                fn = REG.get(w[1], {}).get(w[3])
                ans = "nan" if fn is None else "%.3f" % fn()
            elif w[0] == "mem":
                REG.clear()
                gc.collect()
                ans = memory(int(w[1]))
            else:
                ans = "nan"
        except WrongResult as e:
            ans = "WRONG RESULT: %s" % e
        print(ans, flush=True)


if __name__ == "__main__":
    serve()
