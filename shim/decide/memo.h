/*
 * memo: each thread's memo of the kernels it launched, the fast path of a decided key
 * (docs/architecture.md, "The launch, walked": a memo hit). tuner.c's hit path
 * (xmt_tune_launch) reads it inline, through the inline functions below, and its slow path
 * stores what it decided here; bgjobs.c forgets a kernel's slots when a background
 * outcome changes its decision. What a slot holds is tuner.c's to decide: this module keeps
 * the slots, their counts (added to the kernels' counters when a slot is replaced, at a
 * thread's exit and at the process's), and the walks over every thread's slots.
 *
 * Apart from tuner.c so that the one structure every decided launch reads has one home,
 * with its rules (serials, forgetting, the own ways) beside it.
 */
#ifndef XMT_MEMO_H
#define XMT_MEMO_H

#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "launch.h"
#include "xmt_policy.h"

/* An argument the memo compares: its index and size. */
typedef struct {
    uint16_t param, size;
} xmt_memo_arg;

/* The memo's byte budget for a launch's compared arguments. */
#define XMT_MEMO_ARG_BYTES 256

/* A program launches the same kernel with the same arguments again and again. Key and
 * candidate are pure functions of the arguments the entry's expressions read
 * (xmt_memo_args), the program's own dims and the device, so each thread remembers, per kernel,
 * the last such bytes it saw decided and what was decided: a launch with the same bytes
 * skips key derivation, the cache lookup and expression evaluation, and costs a compare
 * of those arguments. Pointers no expression reads are not compared, so a program whose
 * tensors move hits it too. Only decided keys are remembered (never "another thread is
 * tuning"). */
#define XMT_MEMO_SLOTS 8
/* Keys of a slot's kernel that this thread saw decided "the program's own config", beside
 * the slot's last decision: a kernel launched in turn with several keys (a layer of each
 * shape, a scalar with a few values) whose decisions all keep the program's config would
 * otherwise miss the memo at every launch and pay the key and its lookup (~1,000
 * instructions: docs/benchmarks.md, "Pass-through costs pass-through"). Each way is the
 * launch's dims and the compared arguments' bytes, zero-padded; kernels whose compared
 * arguments take more than XMT_MEMO_OWN_BYTES keep none. Valid while the slot's serial
 * matches its kernel's, like the slot itself: xmt_memo_forget clears them with it. */
#define XMT_MEMO_OWN_WAYS 8
#define XMT_MEMO_OWN_BYTES 32
typedef struct {
    unsigned grid[3], block[3], shared;
    int device;
    uint64_t bytes[XMT_MEMO_OWN_BYTES / 8];
} xmt_memo_own;
typedef struct {
    const xmt_kernel *k;
    uint64_t serial; /* k's incarnation (kernels.h): a reused struct is another kernel */
    int device;
    int own; /* the decision is the program's own config */
    /* the compared arguments (xmt_memo_args, kept in k's tuner state: alive while serial
     * matches) */
    const xmt_memo_arg *args;
    unsigned nargs;
    unsigned grid[3], block[3], shared;
    uint8_t bytes[XMT_MEMO_ARG_BYTES];
    xmt_candidate c;
    /* This thread's counts for k since the entry was filled, added to k's shared counters
     * when the entry is replaced and at exit: a hit writes no shared cache line. */
    uint64_t launches, rewritten, passed;
    /* Launches of a winner until this thread re-checks it (the hit path counts down; 1 set
     * by another thread that dropped the winner, so that this one looks again). For the
     * program's own config: UINT32_MAX, or XMT_QUEUED_SAMPLE while the key waits for the
     * background worker (its launches counted: tuner.c's queued_due). */
    uint32_t recheck_in;
    unsigned arg_bytes; /* the compared arguments' bytes in all */
    /* ways in use; the one the next own decision replaces; the one that answered last */
    unsigned own_n, own_next, own_last;
    xmt_memo_own owns[XMT_MEMO_OWN_WAYS];
} xmt_memo;
/* This thread's slots (XMT_MEMO_SLOTS of them; NULL before its first decided launch).
 * Initial-exec and hidden: the hit path reads it as directly as a static of its own file. */
extern __thread xmt_memo *xmt_tls_memo
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* k's slot among a thread's slots m. */
static inline xmt_memo *xmt_memo_of(xmt_memo *m, const xmt_kernel *k)
{
    return &m[((uintptr_t)k >> 6) % XMT_MEMO_SLOTS];
}

/* Equality of a few argument bytes: fixed-size loads for the usual 4 and 8, not a call. */
static inline int xmt_memo_same_bytes(const uint8_t *a, const void *b, unsigned n)
{
    if (n == 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x == y;
    }
    if (n == 4) {
        uint32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return x == y;
    }
    return memcmp(a, b, n) == 0;
}

static inline int xmt_memo_hit(const xmt_memo *m, const xmt_kernel *k, int device,
                               const xmt_launch *l, void *const *params)
{
    /* relaxed: another thread clears it to make this thread look again (xmt_memo_forget) */
    if (__atomic_load_n(&m->serial, __ATOMIC_RELAXED) !=
            atomic_load_explicit(&k->serial, memory_order_relaxed) ||
        m->device != device || m->shared != l->shared || m->grid[0] != l->grid[0] ||
        m->grid[1] != l->grid[1] || m->grid[2] != l->grid[2] || m->block[0] != l->block[0] ||
        m->block[1] != l->block[1] || m->block[2] != l->block[2])
        return 0;
    unsigned off = 0;
    for (unsigned j = 0; j < m->nargs; j++) {
        unsigned sz = m->args[j].size;
        if (!xmt_memo_same_bytes(m->bytes + off, params[m->args[j].param], sz)) return 0;
        off += sz;
    }
    return 1;
}

/* The compared arguments of a launch, zero-padded into XMT_MEMO_OWN_BYTES (arg_bytes fit),
 * with fixed-size copies for the usual 4 and 8 bytes (not calls). */
static inline void xmt_memo_own_of(const xmt_memo *m, void *const *params, uint64_t *w)
{
    uint8_t *b = (uint8_t *)w;
    w[0] = w[1] = w[2] = w[3] = 0;
    unsigned off = 0;
    for (unsigned j = 0; j < m->nargs; j++) {
        unsigned sz = m->args[j].size;
        const void *src = params[m->args[j].param];
        if (sz == 4)
            memcpy(b + off, src, 4);
        else if (sz == 8)
            memcpy(b + off, src, 8);
        else
            memcpy(b + off, src, sz);
        off += sz;
    }
}

/* One of the slot's own ways matches this launch (its serial checked again here: memo_hit
 * may have missed on it). Only a launch that missed the slot's last decision comes here;
 * inlined into xmt_tune_launch, where a call's register saves cost more (callgrind: 284
 * instructions over the pass-through for 8 keys in turn, 306 out of line), and the
 * single-key hit path stays as it was (221). */
static inline int xmt_memo_own_hit(xmt_memo *m, const xmt_kernel *k, int device,
                                   const xmt_launch *l, void *const *params)
{
    if (__atomic_load_n(&m->serial, __ATOMIC_RELAXED) !=
        atomic_load_explicit(&k->serial, memory_order_relaxed))
        return 0;
    uint64_t now[XMT_MEMO_OWN_BYTES / 8];
    xmt_memo_own_of(m, params, now);
    /* from the way after the last one that answered (keys launched in turn hit at once);
     * the first 8 bytes first: mostly the scalar that tells the keys apart */
    unsigned i = m->own_last;
    for (unsigned left = m->own_n; left; left--) {
        if (++i >= m->own_n) i = 0;
        const xmt_memo_own *o = &m->owns[i];
        if (o->bytes[0] == now[0] && o->device == device && o->shared == l->shared &&
            o->grid[0] == l->grid[0] && o->grid[1] == l->grid[1] && o->grid[2] == l->grid[2] &&
            o->block[0] == l->block[0] && o->block[1] == l->block[1] &&
            o->block[2] == l->block[2] &&
            !((o->bytes[1] ^ now[1]) | (o->bytes[2] ^ now[2]) | (o->bytes[3] ^ now[3]))) {
            m->own_last = i;
            return 1;
        }
    }
    return 0;
}

/* The arguments k's decisions read, into args (room for k->nparams): the memo compares only
 * those, so a launch whose other arguments (mostly pointers) change at every call still hits
 * it. All of them when k has no entry to ask. Returns their count, or -1 when they take more
 * than XMT_MEMO_ARG_BYTES (nothing of k is memoized then). */
int xmt_memo_args(const xmt_kernel *k, xmt_memo_arg *args);

/* This thread's slot for k, its slots made at the thread's first decided launch; NULL when
 * they cannot be (then nothing is memoized). */
xmt_memo *xmt_memo_slot(const xmt_kernel *k);

/* Slot m now remembers this launch of k decided: c, or NULL for the program's own config
 * (remembered in an own way too unless queued: a key that waits for the background worker,
 * whose launches must reach the slow path now and then to be counted). args, nargs: k's
 * compared arguments (xmt_memo_args; nargs < 0: nothing is remembered), alive as long as k's
 * serial. m NULL: nothing. */
void xmt_memo_store(xmt_memo *m, const xmt_kernel *k, const xmt_memo_arg *args, int nargs,
                    int device, const xmt_launch *l, void *const *params, const xmt_candidate *c,
                    int queued);

/* Slot m (this thread's) is forgotten: its thread looks again at its next launch (what it
 * just stored came from a decision that changed meanwhile: tuner.c's run_winner). */
void xmt_memo_drop(xmt_memo *m);

/* Every thread's memo of kernel k is forgotten: each looks at its key's result again at its
 * next launch (a background verification switched or dropped a winner). */
void xmt_memo_forget(const xmt_kernel *k);

/* Every thread that remembers a winner of k re-checks at its next launch of it (another
 * thread dropped the winner: each then finds the program's own config). */
void xmt_memo_recheck_soon(const xmt_kernel *k);

/* Adds every thread's unreported per-kernel counts to the kernels' counters (at exit,
 * before the report; a thread still launching meanwhile may miss a launch or two). */
void xmt_memo_flush_counts(void);

/* fork(2): the slots' lock held across it; in the child, the parent's threads' unreported
 * counts are dropped (the child reports its own launches). */
void xmt_memo_atfork(int phase);

#endif
