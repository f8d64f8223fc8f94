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
    mguard_ctx_destroy(ctx);
    ok = ok && destroyed == 2;
    std::printf("check-compile: C++ program %s\n", ok ? "ran correctly" : "FAILED");
    return ok ? 0 : 1;
}
