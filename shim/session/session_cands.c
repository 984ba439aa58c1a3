/*
 * session_cands: see session_cands.h.
 */
#include "session_cands.h"

#include <stdlib.h>

#include "autotune.h"
#include "driver.h"
#include "family.h"
#include "launch.h"
#include "options.h"

void xmt_sess_own_label(const xmt_launch *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u", l->grid[0], l->grid[1],
             l->grid[2], l->block[0], l->block[1], l->block[2], l->shared);
}

/* The dynamic shared memory a candidate may ask for: what the program opted the kernel
 * into (asked again: it may have raised it since the record was made), at least its own. */
static int allowed_dynamic_shared(const xmt_kernel *k, const xmt_launch *l)
{
    int allowed = k->max_dynamic_shared;
    if (xmt_drv.cuFuncGetAttribute && !k->is_cukernel) {
        int a = 0;
        if (xmt_drv.cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l->f) ==
            CUDA_SUCCESS)
            allowed = a;
    }
    return allowed < (int)l->shared ? (int)l->shared : allowed;
}

/* In the trial helper: c faulted in an earlier helper (its why copied into c). */
static int faulted_before(const xmt_session *S, xmt_cand *c)
{
    for (size_t i = 0; S->run.trial && i < S->run.trial->nfaulted; i++)
        if (S->run.trial->faulted[i] == c->index && !S->run.trial->faulted_key[i][0]) {
            snprintf(c->why, sizeof c->why, "%s", S->run.trial->faulted_why[i]);
            return 1;
        }
    return 0;
}

/* c's index is one a partial record says an earlier run decided cannot win. */
static int decided_before(const xmt_session *S, const xmt_cand *c)
{
    const char *p = S->req.decided;
    while (p && *p) {
        char *end;
        long i = strtol(p, &end, 10);
        if (end == p) return 0;
        if (i == c->index) return 1;
        p = *end == ' ' ? end + 1 : end;
    }
    return 0;
}

/* In the trial helper: c reaches further along the idiom of a candidate that faulted in
 * an earlier helper (family.h): 1, with the one that condemns it and why in c. */
static int after_fault(const xmt_session *S, xmt_cand *c, size_t i)
{
    int derived = xmt_auto_owns(S->req.k->entry),
        g = xmt_family_group(derived, c->c.label, i, S->cand.space_first);
    for (size_t j = 0; S->run.trial && !S->req.only && j < S->run.trial->nfaulted; j++) {
        xmt_candidate f;
        long fi = S->run.trial->faulted[j];
        char dims[160];
        if (fi < 0 || (size_t)fi >= S->cand.n ||
            xmt_entry_candidate(S->req.k->entry, (size_t)fi, S->req.v, &f) != 1 ||
            xmt_family_group(derived, f.label, (size_t)fi, S->cand.space_first) != g ||
            !xmt_family_reaches(&S->req.v->orig, &f.dims, &c->c.dims, dims, sizeof dims))
            continue;
        c->skipped_after_fault = 1;
        c->after_fault = fi;
        snprintf(c->after_fault_label, sizeof c->after_fault_label, "%s", f.label);
        const char *at = S->run.trial->faulted_key[j]; /* at another key (family.h) */
        char w[400];
        snprintf(w, sizeof w,
                 "candidate %ld (%.80s) faulted in the trial helper%s%.100s, and this one "
                 "reaches at least as far along its idiom (%.60s): not run",
                 fi, f.label, at[0] ? " at key " : "", at, dims);
        snprintf(c->why, sizeof c->why, "%.299s", w);
        return 1;
    }
    return 0;
}

void xmt_sess_admit(xmt_session *S, xmt_cand *c, size_t i)
{
    if (S->req.only) c->c = *S->req.only;
    if (!S->req.only && xmt_entry_candidate(S->req.k->entry, i, S->req.v, &c->c) != 1) {
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "%s", c->c.why);
    } else if (S->cand.allowed_dyn > 0 && c->c.dims.shared > (unsigned)S->cand.allowed_dyn) {
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "shared %u > %d bytes the program opted the kernel into",
                 c->c.dims.shared, S->cand.allowed_dyn);
    } else if (xmt_candidate_is_own(&c->c, S->req.l)) {
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "same as the program's own config");
    } else if (faulted_before(S, c)) {
        c->status = XMT_C_FAULT;
    } else if (!S->req.only && decided_before(S, c)) {
        c->status = XMT_C_SKIPPED;
        c->decided_earlier = 1;
        snprintf(c->why, sizeof c->why,
                 "decided in an earlier run that the program's exit cut (its key's partial "
                 "record): it cannot win");
    } else if (after_fault(S, c, i)) {
        c->status = XMT_C_SKIPPED;
    } else {
        c->status = XMT_C_OK;
        S->cand.valid++;
    }
}

int xmt_sess_candidates(xmt_session *S)
{
    XMT_ASSERT(S->req.k && S->req.l && S->req.v && !S->cand.cands, "candidates: no request");
    size_t n = S->req.only ? 1 : xmt_entry_ncandidates(S->req.k->entry);
    size_t nb = xmt_entry_nbuffers(S->req.k->entry);
    S->cand.n = n;
    S->cand.cands = calloc(n + 1, sizeof *S->cand.cands);
    S->cand.times = calloc((n + 1) * (size_t)S->set.cap, sizeof *S->cand.times);
    S->data.bufs = calloc(nb ? nb : 1, sizeof *S->data.bufs);
    /* comparisons: a declared verify buffer each (auto: regions() makes room for its) */
    size_t nseg = nb + 1;
    S->data.segs = calloc(nseg, sizeof *S->data.segs);
    S->data.results = calloc(nseg, sizeof *S->data.results);
    if (!S->cand.cands || !S->cand.times || !S->data.bufs || !S->data.segs || !S->data.results)
        return -1;
    S->cand.cands[0].index = XMT_OWN_CONFIG;
    xmt_sess_own_label(S->req.l, S->cand.cands[0].c.label, sizeof S->cand.cands[0].c.label);
    S->cand.cands[0].times = S->cand.times;
    S->cand.allowed_dyn = allowed_dynamic_shared(S->req.k, S->req.l);
    S->cand.searched = !S->req.only && !S->req.verify_only && xmt_entry_searched(S->req.k->entry);
    S->cand.space_first = S->cand.searched ? xmt_entry_space_first(S->req.k->entry) : n;
    for (size_t i = 0; i < n; i++) {
        xmt_cand *c = &S->cand.cands[i + 1];
        c->index = S->req.only ? S->req.only_index : (long)i;
        c->times = S->cand.times + (i + 1) * (size_t)S->set.cap;
        if (i >= S->cand.space_first)
            c->status = XMT_C_UNVISITED;
        else
            xmt_sess_admit(S, c, i);
    }
    return 0;
}
