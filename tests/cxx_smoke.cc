// The header used from C++: implementation compiled as C++, API called
// from C++ code (sokol's habit: one .c and one .cc test per header).
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#include <cstdio>

struct Node { int value; };

static int destroyed = 0;
static void count(void *, void *) { destroyed++; }

int main()
{
    mguard_ctx *ctx = mguard_ctx_create(nullptr);
    mguard_weak_desc d = {sizeof(int), count, nullptr, nullptr};
    mguard_weak *t = mguard_weak_create(ctx, &d);
    Node a{1}, b{2};
    int v = 10;
    mguard_weak_set(t, &a, &v);
    mguard_weak_set(t, &b, &v);
    mguard_ref r = mguard_ref_make(ctx, &a);
    mguard_on_destroy(ctx, &a);
    bool ok = mguard_ref_get(ctx, r) == nullptr && destroyed == 1 && mguard_weak_count(t) == 1;
    // MGUARD_CACHE_KEYS in C++: a braced list, each key evaluated once
    mguard_cache_desc cd = {};
    cd.value_size = sizeof(int);
    mguard_cache *c = mguard_cache_create(ctx, &cd);
    Node k1{3}, k2{4}, *next = &k1;
    int w = 42;
    ok = ok && mguard_cache_set(c, MGUARD_CACHE_KEYS(next++, &k2), &w, 0) == MGUARD_OK && next == &k1 + 1;
    int *got = static_cast<int *>(mguard_cache_get(c, MGUARD_CACHE_KEYS(&k1, &k2)));
    ok = ok && got && *got == 42 && mguard_cache_get(c, MGUARD_CACHE_KEYS(&k2, &k1)) == nullptr;
    ok = ok && mguard_cache_contains(c, MGUARD_CACHE_KEYS(&k2)) == false && mguard_cache_count(c) == 1;
    mguard_ctx_destroy(ctx);
    ok = ok && destroyed == 2;
    std::printf("check-compile: C++ program %s\n", ok ? "ran correctly" : "FAILED");
    return ok ? 0 : 1;
}
