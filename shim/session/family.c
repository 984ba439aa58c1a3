/*
 * family: fault families (see family.h).
 */
#include "family.h"

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
