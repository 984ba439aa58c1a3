/*
 * counters: launches seen, counted per thread so that counting costs no shared cache
 * line; summed for the exit report and xmatune_launch_count().
 */
#ifndef XMT_COUNTERS_H
#define XMT_COUNTERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Launches seen, counted per thread so that counting costs no shared cache line. */
typedef struct xmt_tcount {
    _Atomic uint64_t launches;
    struct xmt_tcount *next;
} xmt_tcount;
extern __thread xmt_tcount *xmt_tls_count __attribute__((tls_model("initial-exec")));
xmt_tcount *xmt_tcount_register(void);

static inline void xmt_count_launch(void)
{
    xmt_tcount *c = xmt_tls_count;
    if (__builtin_expect(c == NULL, 0)) c = xmt_tcount_register();
    atomic_store_explicit(&c->launches,
                          atomic_load_explicit(&c->launches, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Total over all threads, living or gone. */
uint64_t xmt_launches_total(void);

/* fork(2): count_lock held across it; the child starts counting from zero (its exit
 * report counts its own launches, not its parent's). */
void xmt_counters_atfork(int phase);

#endif
