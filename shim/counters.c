/*
 * counters: launches seen, per thread (see counters.h).
 */
#include "counters.h"

#include "log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

__thread xmt_tcount *xmt_tls_count __attribute__((tls_model("initial-exec")));

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static xmt_tcount *count_head;
static xmt_tcount spare_count; /* if malloc fails, threads share this one (counts stay right
                                  only approximately, which beats crashing) */

xmt_tcount *xmt_tcount_register(void)
{
    /* A cache line of its own: threads' counters side by side would share lines and every
     * launch would bounce them between cores. */
    xmt_tcount *c = aligned_alloc(64, 64);
    if (!c) return xmt_tls_count = &spare_count;
    memset(c, 0, 64);
    pthread_mutex_lock(&count_lock);
    c->next = count_head;
    count_head = c;
    pthread_mutex_unlock(&count_lock);
    return xmt_tls_count = c;
}

void xmt_counters_atfork(int phase)
{
    if (phase == XMT_FORK_CHILD) {
        atomic_store(&spare_count.launches, 0);
        for (xmt_tcount *c = count_head; c; c = c->next)
            atomic_store_explicit(&c->launches, 0, memory_order_relaxed);
    }
    xmt_fork_mutex(&count_lock, phase);
}

uint64_t xmt_launches_total(void)
{
    uint64_t n = atomic_load(&spare_count.launches);
    pthread_mutex_lock(&count_lock);
    for (xmt_tcount *c = count_head; c; c = c->next)
        n += atomic_load_explicit(&c->launches, memory_order_relaxed);
    pthread_mutex_unlock(&count_lock);
    return n;
}
