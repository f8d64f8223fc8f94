/* lua_guard.c - mguard driven by a real garbage collector: a Lua 5.4 host.

   The keys are Lua objects: every Point is a full userdata with a
   metatable. The host memoizes p:norm() in an mguard weak table keyed by
   the userdata's address, and guards each cached value with a watcher on
   the point:
     - the metatable's __newindex writes the field, then calls
       mguard_on_mutation: the watcher drops the cached norm;
     - the metatable's __gc calls mguard_on_destroy: the entry leaves the
       table (key_death counts it) before Lua frees or reuses the memory.
   The script (examples/lua_guard.lua) keeps its own ledger of what it did
   and, at checkpoints, asks the host to compare mguard's counts with it.

   Build and run (Debian: apt-get install liblua5.4-dev libstb-dev):
     cc -std=c99 -I. $(pkg-config --cflags stb lua5.4) examples/lua_guard.c \
        -o lua_guard $(pkg-config --libs lua5.4) -lm
     ./lua_guard examples/lua_guard.lua [points] [incremental|generational]
   It exits with status 0 only when every count matches the script's. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#define POINT_MT "mguard.Point"

/* A Point's payload, inside the Lua userdata. Its address is the mguard
   key; `peer` lives in the userdata's user value (so Lua traces it). */
typedef struct point {
    double x, y;
    int finalized;      /* set by __gc: the object must not be used again */
} point;

/* Everything the host counts. */
typedef struct host {
    mguard_ctx *ctx;
    mguard_weak *cache;     /* point -> double: its memoized norm */
    long computed;          /* cache misses: norms computed and stored */
    long hits;              /* norms served from the cache */
    long invalidated;       /* entries dropped because the point was mutated */
    long collected;         /* entries dropped because Lua collected the point */
    long destroyed;         /* cached values destroyed (each exactly once) */
    long finalized;         /* __gc calls */
    int mismatches;         /* checkpoints where mguard and the script differ */
} host;

/* ---- mguard callbacks ---------------------------------------------------- */

/* The watcher: the point was mutated (attr names the field) or is dying
   (attr NULL: its entry already left the table; key_death counts it).
   The guard is the cache itself. */
static void on_invalidate(void *guard, const void *obj, const char *attr, void *user)
{
    host *h = (host *)user;
    if (!attr) return;
    if (mguard_weak_take((mguard_weak *)guard, obj, NULL) == MGUARD_OK) h->invalidated++;
}

static void key_death(const void *key, void *value, void *user)
{
    (void)key;
    (void)value;
    ((host *)user)->collected++;
}

static void on_value_destroyed(void *value, void *user)
{
    (void)value;
    ((host *)user)->destroyed++;
}

/* ---- the Point type ---------------------------------------------------- */

static host *host_of(lua_State *L) { return (host *)lua_touserdata(L, lua_upvalueindex(1)); }

/* The point at stack index i; a Lua error for anything else, and for a
   point whose finalizer already ran (a resurrected object must not become
   a key again: mguard has forgotten it, and its memory will be reused). */
static point *check_point(lua_State *L, int i)
{
    point *p = (point *)luaL_checkudata(L, i, POINT_MT);
    if (p->finalized) luaL_error(L, "Point used after it was collected");
    return p;
}

static int point_new(lua_State *L)
{
    double x = luaL_checknumber(L, 1), y = luaL_checknumber(L, 2);
    point *p = (point *)lua_newuserdatauv(L, sizeof *p, 1);
    p->x = x;
    p->y = y;
    p->finalized = 0;
    luaL_setmetatable(L, POINT_MT);
    return 1;
}

/* __gc: the destructor hook. Lua frees the memory only after this returns
   (and not before the next cycle), so no other object can have this
   address while mguard still knows it. */
static int point_gc(lua_State *L)
{
    host *h = host_of(L);
    point *p = (point *)luaL_checkudata(L, 1, POINT_MT);
    p->finalized = 1;
    h->finalized++;
    mguard_on_destroy(h->ctx, p);
    return 0;
}

/* __index: the fields x, y, peer, then the methods (upvalue 2). */
static int point_index(lua_State *L)
{
    point *p = check_point(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "x") == 0) lua_pushnumber(L, p->x);
    else if (strcmp(k, "y") == 0) lua_pushnumber(L, p->y);
    else if (strcmp(k, "peer") == 0) lua_getiuservalue(L, 1, 1);
    else lua_getfield(L, lua_upvalueindex(2), k);
    return 1;
}

/* __newindex: write the field first, then tell mguard (a watcher may run
   Lua-visible code, so the object is already in its new state). */
static int point_newindex(lua_State *L)
{
    host *h = host_of(L);
    point *p = check_point(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "x") == 0) p->x = luaL_checknumber(L, 3);
    else if (strcmp(k, "y") == 0) p->y = luaL_checknumber(L, 3);
    else if (strcmp(k, "peer") == 0) {
        if (!lua_isnil(L, 3)) check_point(L, 3);
        lua_settop(L, 3);
        lua_setiuservalue(L, 1, 1);
    } else {
        return luaL_error(L, "Point has no field '%s'", k);
    }
    mguard_on_mutation(h->ctx, p, k);
    return 0;
}

/* p:norm(): memoized in the weak table, guarded by a watcher on p. */
static int point_norm(lua_State *L)
{
    host *h = host_of(L);
    point *p = check_point(L, 1);
    double *cached = MGUARD_WEAK_GET(h->cache, p, double);
    double n;
    mguard_status st;
    if (cached) {
        h->hits++;
        lua_pushnumber(L, *cached);
        return 1;
    }
    n = sqrt(p->x * p->x + p->y * p->y);
    st = mguard_weak_set(h->cache, p, &n);
    if (st == MGUARD_OK) {
        st = mguard_watch(h->ctx, p, h->cache, on_invalidate, h);
        if (st != MGUARD_OK) mguard_weak_take(h->cache, p, NULL);  /* never cache unguarded */
    }
    if (st != MGUARD_OK) return luaL_error(L, "caching a norm failed: %s", mguard_status_str(st));
    h->computed++;
    lua_pushnumber(L, n);
    return 1;
}

/* ---- checkpoints ----------------------------------------------------------- */

static long expect_field(lua_State *L, const char *name)
{
    long v;
    lua_getfield(L, 1, name);
    v = (long)luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    return v;
}

/* host_check{label=, computed=, hits=, invalidated=, collected=, entries=,
   finalized=, stale=}: compare the script's ledger with mguard's counts
   and print one line. */
static int host_check(lua_State *L)
{
    host *h = host_of(L);
    const char *label;
    long want[6], got[6], stale;
    static const char *const names[6] = {"computed", "hits", "invalidated", "collected", "entries", "finalized"};
    int i, ok;
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "label");
    label = luaL_checkstring(L, -1);
    lua_pop(L, 1);
    for (i = 0; i < 6; i++) want[i] = expect_field(L, names[i]);
    stale = expect_field(L, "stale");
    got[0] = h->computed;
    got[1] = h->hits;
    got[2] = h->invalidated;
    got[3] = h->collected;
    got[4] = (long)mguard_weak_count(h->cache);
    got[5] = h->finalized;
    ok = stale == 0 && mguard_ctx_check(h->ctx) == MGUARD_OK;
    for (i = 0; i < 6; i++) ok = ok && got[i] == want[i];
    printf("  %-18s computed %5ld  hits %5ld  invalidated %5ld  collected %5ld  entries %5ld  %s\n",
           label, got[0], got[1], got[2], got[3], got[4], ok ? "= script" : "MISMATCH");
    if (!ok) {
        h->mismatches++;
        for (i = 0; i < 6; i++)
            if (got[i] != want[i]) printf("    %s: mguard says %ld, the script expects %ld\n", names[i], got[i], want[i]);
        if (stale) printf("    %ld norms read from the cache were stale\n", stale);
    }
    return 0;
}

/* ---- main ------------------------------------------------------------------ */

static void open_point_type(lua_State *L, host *h)
{
    static const luaL_Reg methods[] = {{"norm", point_norm}, {NULL, NULL}};
    luaL_newmetatable(L, POINT_MT);
    lua_pushlightuserdata(L, h);
    lua_pushcclosure(L, point_gc, 1);
    lua_setfield(L, -2, "__gc");
    lua_pushlightuserdata(L, h);
    lua_newtable(L);
    lua_pushlightuserdata(L, h);
    luaL_setfuncs(L, methods, 1);
    lua_pushcclosure(L, point_index, 2);
    lua_setfield(L, -2, "__index");
    lua_pushlightuserdata(L, h);
    lua_pushcclosure(L, point_newindex, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pop(L, 1);

    lua_newtable(L);
    lua_pushlightuserdata(L, h);
    lua_pushcclosure(L, point_new, 1);
    lua_setfield(L, -2, "new");
    lua_setglobal(L, "Point");
    lua_pushlightuserdata(L, h);
    lua_pushcclosure(L, host_check, 1);
    lua_setglobal(L, "host_check");
}

int main(int argc, char **argv)
{
    const char *script = argc > 1 ? argv[1] : "examples/lua_guard.lua";
    host h;
    mguard_weak_desc desc;
    lua_State *L;
    int rc = 0, empty;
    size_t known;
    mguard_ctx_stats st;

    memset(&h, 0, sizeof h);
    memset(&desc, 0, sizeof desc);
    h.ctx = mguard_ctx_create(NULL);
    desc.value_size = sizeof(double);
    desc.value_dtor = on_value_destroyed;
    desc.key_death = key_death;
    desc.user = &h;
    h.cache = h.ctx ? mguard_weak_create(h.ctx, &desc) : NULL;
    L = luaL_newstate();
    if (!h.cache || !L) {
        fprintf(stderr, "lua_guard: out of memory\n");
        return 1;
    }
    luaL_openlibs(L);
    open_point_type(L, &h);

    printf("lua_guard: Lua 5.4 userdata as the keys of an mguard weak table\n");
    if (luaL_loadfile(L, script) != LUA_OK) {
        fprintf(stderr, "lua_guard: %s\n(usage: lua_guard SCRIPT [points] [incremental|generational])\n",
                lua_tostring(L, -1));
        lua_close(L);
        mguard_ctx_destroy(h.ctx);
        return 1;
    }
    lua_pushstring(L, argc > 2 ? argv[2] : "5000");
    lua_pushstring(L, argc > 3 ? argv[3] : "incremental");
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        fprintf(stderr, "lua_guard: script error: %s\n", lua_tostring(L, -1));
        rc = 1;
    }
    empty = mguard_weak_count(h.cache) == 0;
    known = mguard_ctx_get_stats(h.ctx, &st) == MGUARD_OK ? st.objects : 0;
    printf("cache entries invalidated by mutation: %ld\n", h.invalidated);
    printf("cache entries dropped by the collector: %ld\n", h.collected);
    printf("weak table after the last collection: %s\n", empty ? "empty" : "NOT EMPTY");
    printf("values computed %ld, destroyed %ld; __gc calls %ld; objects mguard still knows: %lu (the cache, as the guard)\n",
           h.computed, h.destroyed, h.finalized, (unsigned long)known);
    if (h.mismatches || !empty || h.destroyed != h.computed || known != 1) rc = 1;

    lua_close(L);   /* runs any finalizer still pending: ctx must outlive L */
    mguard_ctx_destroy(h.ctx);
    printf("%s\n", rc ? "FAILED: mguard's counts differ from what the script did" : "ok: every count matches what the script did");
    return rc;
}
