// peer_absl.cc - Abseil's absl::flat_hash_map<const void *, long> (the
// SwissTable design) as a column of bench/bench.c, behind a C interface.
//
// Each function is a whole timed pass (a loop over n keys) so the map's
// calls inline into the loop as they do in a C++ program; mguard's loops in
// bench.c likewise call functions compiled in the same translation unit.
// A key's value is the long at byte offset `off` of the key object (the
// BenchObj id bench.c's loops read too), so every system touches the same
// memory per operation. The allocator counts requested bytes, for bytes
// per entry measured the way bench.c counts mguard's and stb_ds's.
// Built with g++ -O2 and Debian's libabsl-dev (make bench installs it).
#include <absl/container/flat_hash_map.h>
#include <cstddef>
#include <cstdlib>
#include <new>

static long long absl_live;

template <class T> struct counting_alloc {
    using value_type = T;
    counting_alloc() = default;
    template <class U> counting_alloc(const counting_alloc<U> &) {}
    T *allocate(std::size_t n)
    {
        void *p = std::malloc(n * sizeof(T));
        if (!p) throw std::bad_alloc();
        absl_live += (long long)(n * sizeof(T));
        return static_cast<T *>(p);
    }
    void deallocate(T *p, std::size_t n)
    {
        absl_live -= (long long)(n * sizeof(T));
        std::free(p);
    }
    template <class U> bool operator==(const counting_alloc<U> &) const { return true; }
    template <class U> bool operator!=(const counting_alloc<U> &) const { return false; }
};

typedef absl::flat_hash_map<const void *, long, absl::Hash<const void *>, std::equal_to<const void *>,
                            counting_alloc<std::pair<const void *const, long>>>
    map_t;

static inline long val_of(const void *k, std::size_t off) { return *(const long *)((const char *)k + off); }

extern "C" {

void *absl_map_new(void) { return new map_t(); }
void absl_map_free(void *m) { delete static_cast<map_t *>(m); }
std::size_t absl_map_size(const void *m) { return static_cast<const map_t *>(m)->size(); }
long long absl_live_bytes(void) { return absl_live; }

// Sum of the values of keys[0..n); -1 when one is missing.
long absl_get_hit(const void *mp, void *const *keys, std::size_t n)
{
    const map_t &m = *static_cast<const map_t *>(mp);
    long s = 0;
    for (std::size_t i = 0; i < n; i++) {
        auto it = m.find(keys[i]);
        if (it == m.end()) return -1;
        s += it->second;
    }
    return s;
}

// How many of keys[0..n) are found (0 for a miss pass).
std::size_t absl_get_miss(const void *mp, void *const *keys, std::size_t n)
{
    const map_t &m = *static_cast<const map_t *>(mp);
    std::size_t found = 0;
    for (std::size_t i = 0; i < n; i++) found += m.find(keys[i]) != m.end();
    return found;
}

// insert_or_assign of every key with its value; returns the new keys.
std::size_t absl_set(void *mp, void *const *keys, std::size_t n, std::size_t off)
{
    map_t &m = *static_cast<map_t *>(mp);
    std::size_t added = 0;
    for (std::size_t i = 0; i < n; i++) added += m.insert_or_assign(keys[i], val_of(keys[i], off)).second;
    return added;
}

// erase of every key; returns how many were there.
std::size_t absl_remove(void *mp, void *const *keys, std::size_t n)
{
    map_t &m = *static_cast<map_t *>(mp);
    std::size_t gone = 0;
    for (std::size_t i = 0; i < n; i++) gone += m.erase(keys[i]);
    return gone;
}

// Sum of every value, in the map's order.
long absl_iterate(const void *mp)
{
    long s = 0;
    for (const auto &kv : *static_cast<const map_t *>(mp)) s += kv.second;
    return s;
}

} // extern "C"
