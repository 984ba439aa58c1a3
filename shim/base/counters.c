/*
 * counters: launches seen, per thread (see counters.h).
 */
#include "counters.h"

#include "log.h"
#include "tls.h"

#include <pthread.h>

__thread xmt_tcount *xmt_tls_count __attribute__((tls_model("initial-exec")));

/* Every thread's counter, living or gone: a block is never released (no destructor), so
 * that a gone thread's launches stay in the total. A cache line of its own (tls.h):
 * threads' counters side by side would share lines and every launch would bounce them
 * between cores. */
static xmt_tls_list counts = XMT_TLS_LIST(xmt_tcount, next, NULL, NULL);
static xmt_tcount spare_count; /* if malloc fails, threads share this one (counts stay right
                                  only approximately, which beats crashing) */

xmt_tcount *xmt_tcount_register(void)
{
    xmt_tcount *c = xmt_tls_new(&counts);
    return xmt_tls_count = c ? c : &spare_count;
}

void xmt_counters_atfork(int phase)
{
    if (phase == XMT_FORK_CHILD) {
        atomic_store(&spare_count.launches, 0);
        for (xmt_tcount *c = counts.head; c; c = c->next)
            atomic_store_explicit(&c->launches, 0, memory_order_relaxed);
    }
    xmt_fork_mutex(&counts.lock, phase);
}

uint64_t xmt_launches_total(void)
{
    uint64_t n = atomic_load(&spare_count.launches);
    pthread_mutex_lock(&counts.lock);
    for (xmt_tcount *c = counts.head; c; c = c->next)
        n += atomic_load_explicit(&c->launches, memory_order_relaxed);
    pthread_mutex_unlock(&counts.lock);
    return n;
}
