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
