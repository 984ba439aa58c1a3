/*
 * modload: counting the module and library loads (see modload.h).
 */
#include "modload.h"

#include <stdatomic.h>
#include <string.h>

/* Seven load entry points exist; a few more slots cost nothing. A slot is claimed by
 * storing its entry's name (hook.c's static strings), and never given back: no lock, so
 * nothing to hold across fork(2) or at exit. */
#define MAX_ENTRIES 16

static struct {
    _Atomic(const char *) entry;
    atomic_ullong ok, failed;
} seen[MAX_ENTRIES];

void xmt_modload_seen(const char *entry, CUresult r)
{
    for (int i = 0; i < MAX_ENTRIES; i++) {
        const char *e = atomic_load_explicit(&seen[i].entry, memory_order_acquire);
        if (!e && atomic_compare_exchange_strong(&seen[i].entry, &e, entry)) e = entry;
        if (strcmp(e, entry) != 0) continue;
        atomic_fetch_add_explicit(r == CUDA_SUCCESS ? &seen[i].ok : &seen[i].failed, 1,
                                  memory_order_relaxed);
        return;
    }
}

void xmt_modload_each(void (*fn)(void *ud, const char *entry, unsigned long long ok,
                                 unsigned long long failed),
                      void *ud)
{
    for (int i = 0; i < MAX_ENTRIES; i++) {
        const char *e = atomic_load_explicit(&seen[i].entry, memory_order_acquire);
        if (!e) break;
        fn(ud, e, atomic_load(&seen[i].ok), atomic_load(&seen[i].failed));
    }
}
