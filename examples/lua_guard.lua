-- lua_guard.lua - the script that examples/lua_guard.c runs.
--
-- Point.new(x, y) makes a full userdata; p:norm() is memoized by the host
-- in an mguard weak table keyed by p. Writing p.x, p.y or p.peer is a
-- mutation (the cached norm is invalidated); when Lua collects p, its __gc
-- tells mguard, and the entry is dropped.
--
-- The script keeps its own ledger of what it did: which points have a
-- cached norm right now, what it mutated, what it let go of. At each
-- checkpoint it hands the ledger to check(), and the host compares it with
-- mguard's counts. Every norm read is also compared with a fresh
-- computation, so a stale cache hit (an entry that survived its key's
-- death and was found again at a reused address) would be caught.
local N, mode = ...
N = math.tointeger(tonumber(N)) or 5000
collectgarbage(mode or "incremental")

local ledger = {computed = 0, hits = 0, invalidated = 0, collected = 0,
                entries = 0, finalized = 0, stale = 0}
local cached = {}          -- cached[i]: point i has a norm in the cache

local function check(label)
    ledger.label = label
    host_check(ledger)
end

-- p:norm(), checked against a fresh computation and booked in the ledger.
local function norm(p, i)
    local n = p:norm()
    if n ~= math.sqrt(p.x * p.x + p.y * p.y) then ledger.stale = ledger.stale + 1 end
    if i and cached[i] then
        ledger.hits = ledger.hits + 1
    else
        ledger.computed = ledger.computed + 1
        if i then cached[i] = true; ledger.entries = ledger.entries + 1 end
    end
    return n
end

-- A write to point i: drops its cached norm, if it has one.
local function mutated(i)
    if cached[i] then
        cached[i] = nil
        ledger.entries = ledger.entries - 1
        ledger.invalidated = ledger.invalidated + 1
    end
end

-- Let go of point i (the caller drops its last reference).
local function dropped(i)
    ledger.finalized = ledger.finalized + 1
    if cached[i] then
        cached[i] = nil
        ledger.entries = ledger.entries - 1
        ledger.collected = ledger.collected + 1
    end
end

-- 1. N points, linked in pairs (p[2k-1].peer = p[2k] and back: cycles the
--    collector must find). The links are mutations too, but nothing is
--    cached yet, so they cost mguard one lookup each and invalidate nothing.
--    Every norm is asked twice: a miss, then a hit.
local pts = {}
for i = 1, N do pts[i] = Point.new(i, 2 * i) end
for i = 1, N - 1, 2 do
    pts[i].peer = pts[i + 1]
    pts[i + 1].peer = pts[i]
end
for i = 1, N do norm(pts[i], i); norm(pts[i], i) end

--    Then ten rounds of short-lived points, each with a cached norm, that
--    become garbage at once. Lua frees a finalized object's memory in the
--    cycle after its __gc ran, so later rounds are born at the addresses of
--    earlier ones: had mguard kept a dead point's entry, the newcomer would
--    read its predecessor's norm (a stale hit; every round uses new values).
local dead_at, reused = {}, 0
for round = 1, 10 do
    local born = {}
    for j = 1, N // 10 do
        local p = Point.new(-(round * N + j), j)
        local at = tostring(p)
        if dead_at[at] then reused = reused + 1 end
        born[j] = at
        norm(p)
        ledger.finalized = ledger.finalized + 1
        ledger.collected = ledger.collected + 1
    end
    collectgarbage()
    for _, at in ipairs(born) do dead_at[at] = true end
end
print(string.format("  (%d short-lived points were born at the address of a collected one)", reused))
check("created")

-- 2. Mutate every 4th point twice: the first write invalidates its cached
--    norm, the second finds nothing to invalidate.
for i = 4, N, 4 do pts[i].x = pts[i].x + 1; mutated(i) end
for i = 4, N, 4 do pts[i].y = pts[i].y + 1; mutated(i) end
check("mutated")

-- 3. Recompute every 8th point (misses: the watchers were used up), then
--    rewrite the peer of every 16th point: a mutation through the user value.
for i = 8, N, 8 do norm(pts[i], i) end
for i = 16, N, 16 do pts[i].peer = pts[i].peer; mutated(i) end
check("recomputed")

-- 4. Keep one pair in five, drop the rest, collect. The finalizers run in
--    the collector's order, pairs die together as cycles.
local keep = {}
for i = 1, N do
    if (i + 1) // 2 % 5 == 0 then keep[i] = pts[i] else dropped(i) end
end
pts = nil
collectgarbage()
check("first collection")

-- 5. Drop the rest. The weak table must be empty afterwards.
for i in pairs(keep) do dropped(i) end
keep = nil
collectgarbage()
check("last collection")
