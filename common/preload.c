/*
 * preload: LD_PRELOAD as xmatune reads and writes it (see preload.h).
 */
#include "preload.h"

#include <string.h>

size_t xmt_preload_sanitizer_first(const char *preload)
{
    if (!preload) return 0;
    size_t n = strcspn(preload, ": ");
    const char *base = preload;
    for (size_t i = 0; i < n; i++)
        if (preload[i] == '/') base = preload + i + 1;
    if (!strncmp(base, "libasan.so", 10) || !strncmp(base, "libtsan.so", 10) ||
        !strncmp(base, "libclang_rt.", 12))
        return n;
    return 0;
}

/* Is the entry e (n bytes) the shim? */
static int is_shim(const char *e, size_t n, const char *self)
{
    const char *base = e;
    for (size_t i = 0; i < n; i++)
        if (e[i] == '/') base = e + i + 1;
    size_t bn = n - (size_t)(base - e);
    return (self && strlen(self) == n && !strncmp(e, self, n)) ||
           (bn == strlen("libxmatune.so") && !strncmp(base, "libxmatune.so", bn));
}

int xmt_preload_without(const char *preload, const char *self, char *out, size_t cap)
{
    size_t at = 0;
    if (!cap) return -1;
    out[0] = 0;
    for (const char *p = preload ? preload : ""; *p;) {
        size_t n = strcspn(p, ": ");
        if (n && !is_shim(p, n, self)) {
            if (at + (at ? 1 : 0) + n + 1 > cap) return -1;
            if (at) out[at++] = ':';
            memcpy(out + at, p, n);
            at += n;
            out[at] = 0;
        }
        p += n;
        p += strspn(p, ": ");
    }
    return 0;
}
