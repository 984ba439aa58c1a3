/*
 * family: fault families (see family.h).
 */
#include "family.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NDIMS 10

/* The dimensions a launch reaches along: its grid and block in x, y, z, its threads in each
 * axis (grid times block: how far an index of blockIdx * blockDim + threadIdx goes) and
 * its dynamic shared memory. */
static void reach(const xmt_dims *d, uint64_t v[NDIMS])
{
    const uint32_t g[3] = {d->grid.x, d->grid.y, d->grid.z};
    const uint32_t b[3] = {d->block.x, d->block.y, d->block.z};
    for (int i = 0; i < 3; i++) {
        v[i] = g[i];
        v[3 + i] = b[i];
        v[6 + i] = (uint64_t)g[i] * b[i];
    }
    v[9] = d->shared;
}

int xmt_family_reaches(const xmt_dims *own, const xmt_dims *f, const xmt_dims *c, char *why,
                       size_t cap)
{
    static const char *const names[NDIMS] = {
        "grid.x",  "grid.y",       "grid.z",       "block.x",      "block.y",
        "block.z", "threads in x", "threads in y", "threads in z", "shared"};
    uint64_t o[NDIMS], a[NDIMS], b[NDIMS];
    reach(own, o);
    reach(f, a);
    reach(c, b);
    size_t len = 0;
    int grew = 0;
    if (cap) why[0] = 0;
    for (int d = 0; d < NDIMS; d++) {
        if (a[d] <= o[d]) continue; /* f did not grow there: c may do as it likes */
        if (b[d] < a[d]) return 0;
        grew++;
        int n = snprintf(len < cap ? why + len : NULL, len < cap ? cap - len : 0,
                         "%s%s %llu >= %llu", grew > 1 ? ", " : "", names[d],
                         (unsigned long long)b[d], (unsigned long long)a[d]);
        if (n > 0) len += (size_t)n;
    }
    return grew > 0;
}

int xmt_family_group(int derived, const char *label, size_t i, size_t space_first)
{
    const char *p = derived && label ? strstr(label, "IDIOM=") : NULL;
    if (p) return 2 + (int)strtol(p + 6, NULL, 10);
    return i < space_first ? 0 : 1;
}

/* The table: slots claimed in order (used), each published once written (ready). A slot
 * claimed by a thread that died or forked away mid-write stays unready and is never read. */
static struct {
    _Atomic int ready;
    uint64_t id;
    xmt_family_fault f;
} slots[XMT_FAMILY_SLOTS];
static atomic_size_t used;

/* How many ready slots of id there are, and whether index is among them. */
static size_t count_of(uint64_t id, long index, int *has)
{
    size_t n = atomic_load_explicit(&used, memory_order_acquire), k = 0;
    *has = 0;
    for (size_t i = 0; i < n && i < XMT_FAMILY_SLOTS; i++) {
        if (!atomic_load_explicit(&slots[i].ready, memory_order_acquire) || slots[i].id != id)
            continue;
        k++;
        if (slots[i].f.index == index) *has = 1;
    }
    return k;
}

void xmt_family_learn(uint64_t id, long index, const char *why, const char *key)
{
    int has = 0;
    if (count_of(id, index, &has) >= XMT_FAMILY_KEPT || has) return;
    size_t i = atomic_fetch_add(&used, 1);
    if (i >= XMT_FAMILY_SLOTS) { /* full: the counter stays past the end */
        atomic_store(&used, XMT_FAMILY_SLOTS);
        return;
    }
    slots[i].id = id;
    slots[i].f.index = index;
    snprintf(slots[i].f.why, sizeof slots[i].f.why, "%s", why ? why : "");
    snprintf(slots[i].f.key, sizeof slots[i].f.key, "%s", key ? key : "");
    atomic_store_explicit(&slots[i].ready, 1, memory_order_release);
}

size_t xmt_family_learned(uint64_t id, const char *key, xmt_family_fault *out, size_t cap)
{
    size_t n = atomic_load_explicit(&used, memory_order_acquire), k = 0;
    for (size_t i = 0; i < n && i < XMT_FAMILY_SLOTS && k < cap; i++)
        if (atomic_load_explicit(&slots[i].ready, memory_order_acquire) && slots[i].id == id &&
            strcmp(slots[i].f.key, key ? key : "") != 0)
            out[k++] = slots[i].f;
    return k;
}

void xmt_family_forget(void)
{
    for (size_t i = 0; i < XMT_FAMILY_SLOTS; i++)
        atomic_store(&slots[i].ready, 0);
    atomic_store(&used, 0);
}
