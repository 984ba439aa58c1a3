/*
 * memo: each thread's memo of the kernels it launched (see memo.h).
 */
#include "memo.h"

#include <pthread.h>
#include <stdlib.h>

#include "log.h"
#include "tls.h"

typedef struct memo_block {
    xmt_memo slots[XMT_MEMO_SLOTS];
    struct memo_block *next;
} memo_block;

__thread xmt_memo *xmt_tls_memo __attribute__((tls_model("initial-exec")));
static void memo_release(void *p);
/* Every live thread's block, for the flush at exit; each freed at its thread's exit
 * (memo_release), after its counts are added up. */
static xmt_tls_list memo_blocks = XMT_TLS_LIST(memo_block, next, NULL, memo_release);
/* A slot's serial with this bit set was forgotten (xmt_memo_forget): it matches no kernel, so
 * its thread looks again, but its counts are still its kernel's (memo_flush adds them). */
#define MEMO_FORGOTTEN ((uint64_t)1 << 63)

int xmt_memo_args(const xmt_kernel *k, xmt_memo_arg *args)
{
    uint8_t read[XMT_KERNEL_MAX_PARAMS];
    unsigned bytes = 0;
    if (k->nparams > XMT_KERNEL_MAX_PARAMS) return -1;
    if (k->entry)
        xmt_entry_params_read(k->entry, read, k->nparams);
    else
        memset(read, 1, k->nparams);
    int n = 0;
    for (size_t i = 0; i < k->nparams; i++) {
        if (!read[i]) continue;
        if ((bytes += k->sizes[i]) > XMT_MEMO_ARG_BYTES) return -1;
        args[n++] = (xmt_memo_arg){(uint16_t)i, (uint16_t)k->sizes[i]};
    }
    return n;
}

/* A slot's k and serial are its thread's to write, and read by other threads (the walks
 * below; the exit's flush): relaxed atomics, plain moves on x86, so the hit path's loads are
 * as they were. */
static void memo_flush(xmt_memo *m)
{
    xmt_kernel *k = (xmt_kernel *)__atomic_load_n(&m->k, __ATOMIC_RELAXED);
    if (!k) return;
    /* Record structs are never freed, so k can be read; a retired one's counts go to its
     * summary, a reused one's are another kernel's and these are dropped. */
    if (atomic_load_explicit(&k->serial, memory_order_acquire) !=
        (__atomic_load_n(&m->serial, __ATOMIC_RELAXED) & ~MEMO_FORGOTTEN)) {
        m->launches = m->rewritten = m->passed = 0;
        return;
    }
    xmt_kernel *to = atomic_load_explicit(&k->retired_to, memory_order_acquire);
    if (to) k = to;
    atomic_fetch_add_explicit(&k->launches, m->launches, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->rewritten, m->rewritten, memory_order_relaxed);
    atomic_fetch_add_explicit(&k->passed, m->passed, memory_order_relaxed);
    m->launches = m->rewritten = m->passed = 0;
}

static void memo_flush_block(void *p)
{
    memo_block *b = p;
    for (int i = 0; i < XMT_MEMO_SLOTS; i++)
        memo_flush(&b->slots[i]);
}

/* At thread exit: the thread's counts go to the kernels, its block is freed. */
static void memo_release(void *p)
{
    xmt_tls_unlist(&memo_blocks, p, memo_flush_block);
    xmt_tls_memo = NULL;
    free(p);
}

xmt_memo *xmt_memo_slot(const xmt_kernel *k)
{
    xmt_memo *m = xmt_tls_memo;
    if (__builtin_expect(!m, 0)) {
        memo_block *b = xmt_tls_new(&memo_blocks);
        if (!b) return NULL;
        m = xmt_tls_memo = b->slots;
    }
    return xmt_memo_of(m, k);
}

/* An own decision also goes into the slot's ways (replacing the oldest when all are used). */
static void own_add(xmt_memo *m, int device, const xmt_launch *l, void *const *params)
{
    if (m->arg_bytes > XMT_MEMO_OWN_BYTES) return;
    xmt_memo_own *o = &m->owns[m->own_next];
    m->own_next = (m->own_next + 1) % XMT_MEMO_OWN_WAYS;
    if (m->own_n < XMT_MEMO_OWN_WAYS) m->own_n++;
    memcpy(o->grid, l->grid, sizeof o->grid);
    memcpy(o->block, l->block, sizeof o->block);
    o->shared = l->shared;
    o->device = device;
    xmt_memo_own_of(m, params, o->bytes);
}

void xmt_memo_store(xmt_memo *m, const xmt_kernel *k, const xmt_memo_arg *args, int nargs,
                    int device, const xmt_launch *l, void *const *params, const xmt_candidate *c,
                    int queued)
{
    if (!m) return;
    memo_flush(m);
    /* another kernel's slot now, or forgotten (xmt_memo_forget): its own ways go with it */
    if (__atomic_load_n(&m->k, __ATOMIC_RELAXED) != k ||
        __atomic_load_n(&m->serial, __ATOMIC_RELAXED) !=
            atomic_load_explicit(&k->serial, memory_order_relaxed))
        m->own_n = m->own_next = m->own_last = 0;
    if (nargs < 0) {
        __atomic_store_n(&m->k, NULL, __ATOMIC_RELAXED);   /* too many argument bytes */
        __atomic_store_n(&m->serial, 0, __ATOMIC_RELAXED); /* (serials start at 1) */
        return;
    }
    unsigned off = 0;
    for (int j = 0; j < nargs; j++) {
        memcpy(m->bytes + off, params[args[j].param], args[j].size);
        off += args[j].size;
    }
    m->args = args;
    m->nargs = (unsigned)nargs;
    m->arg_bytes = off;
    m->device = device;
    memcpy(m->grid, l->grid, sizeof m->grid);
    memcpy(m->block, l->block, sizeof m->block);
    m->shared = l->shared;
    m->own = c == NULL;
    if (c) m->c = *c;
    __atomic_store_n(&m->k, k, __ATOMIC_RELAXED);
    __atomic_store_n(&m->serial, atomic_load_explicit(&k->serial, memory_order_relaxed),
                     __ATOMIC_RELAXED);
    if (!c && !queued) own_add(m, device, l, params);
}

void xmt_memo_drop(xmt_memo *m)
{
    if (m) __atomic_fetch_or(&m->serial, MEMO_FORGOTTEN, __ATOMIC_RELAXED);
}

/* Every thread's slots of kernel k: forgotten (forget), or due to re-check at their next
 * launch. After the caller's change of k's decision: the fence orders it before the walk's
 * reads, so that a thread that stored its slot from the old decision meanwhile sees the new
 * one (tuner.c's memo_settle). */
static void slots_of(const xmt_kernel *k, int forget)
{
    atomic_thread_fence(memory_order_seq_cst);
    pthread_mutex_lock(&memo_blocks.lock);
    for (memo_block *b = memo_blocks.head; b; b = b->next)
        for (int i = 0; i < XMT_MEMO_SLOTS; i++) {
            xmt_memo *m = &b->slots[i];
            if (__atomic_load_n(&m->k, __ATOMIC_RELAXED) != k) continue;
            if (forget)
                __atomic_fetch_or(&m->serial, MEMO_FORGOTTEN, __ATOMIC_RELAXED);
            else
                __atomic_store_n(&m->recheck_in, 1, __ATOMIC_RELAXED);
        }
    pthread_mutex_unlock(&memo_blocks.lock);
}

void xmt_memo_forget(const xmt_kernel *k)
{
    slots_of(k, 1);
}

void xmt_memo_recheck_soon(const xmt_kernel *k)
{
    slots_of(k, 0);
}

void xmt_memo_flush_counts(void)
{
    xmt_tls_each(&memo_blocks, memo_flush_block);
}

void xmt_memo_atfork(int phase)
{
    if (phase == XMT_FORK_CHILD)
        for (memo_block *b = memo_blocks.head; b; b = b->next)
            for (int i = 0; i < XMT_MEMO_SLOTS; i++)
                b->slots[i].launches = b->slots[i].rewritten = b->slots[i].passed = 0;
    xmt_fork_mutex(&memo_blocks.lock, phase);
}
