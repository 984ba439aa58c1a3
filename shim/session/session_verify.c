/*
 * session_verify: see session_verify.h.
 */
#include "session_verify.h"

#include <math.h>
#include <string.h>

#include "clock.h"
#include "driver.h"
#include "log.h"
#include "session_base.h"
#include "session_data.h"
#include "session_timing.h"
#include "verify.h"

/* Does a verify run poison anything (outputs the own config writes whole, or declared
 * verify-only buffers)? Only then can a byte left unwritten pass, and a second pattern
 * tell. Never in the program's own process under auto (xmt_sess_program_data). */
static int poisons_any(const xmt_session *S)
{
    for (size_t i = 0; S->set.automatic && !xmt_sess_program_data(S) && i < S->data.nspans; i++)
        if (S->data.spans[i].pure) return 1;
    for (size_t i = 0; !S->set.automatic && i < S->data.nbufs; i++) {
        const xmt_sbuf *b = &S->data.bufs[i];
        if ((b->b.roles & XMT_BUF_VERIFY) && !(b->b.roles & (XMT_BUF_RESTORE | XMT_BUF_RESET)))
            return 1;
    }
    return 0;
}

/* Whether verify runs poison with the complement of the reference: the comparison
 * kernels run on the GPU (xmt_not is among them) and every poisoned declared buffer has
 * its reference. Else a candidate that matches runs again from the second pattern. */
static int complement_poison(const xmt_session *S)
{
    if (!xmt_gc_on_gpu(&S->check.gc)) return 0;
    for (size_t i = 0; !S->set.automatic && i < S->data.nbufs; i++) {
        const xmt_sbuf *b = &S->data.bufs[i];
        if ((b->b.roles & XMT_BUF_VERIFY) && !(b->b.roles & (XMT_BUF_RESTORE | XMT_BUF_RESET)) &&
            !b->ref)
            return 0;
    }
    return 1;
}

/* After a verify run from the complement: whether comparison d's first difference is the
 * poison left as it was (every byte of the element the complement of the reference's). */
static int left_unwritten(xmt_session *S, long d)
{
    const xmt_gc_cmp *g = &S->data.segs[d];
    uint8_t a[8], b[8];
    size_t es = g->es < sizeof a ? g->es : sizeof a;
    CUdeviceptr at = S->data.results[d].first * g->es;
    if (xmt_drv.cuMemcpyDtoHAsync(a, g->got + at, es, S->run.s) != CUDA_SUCCESS ||
        xmt_drv.cuMemcpyDtoHAsync(b, g->ref + at, es, S->run.s) != CUDA_SUCCESS ||
        xmt_drv.cuStreamSynchronize(S->run.s) != CUDA_SUCCESS)
        return 0;
    for (size_t i = 0; i < es; i++)
        if ((a[i] ^ b[i]) != 0xFF) return 0;
    return 1;
}

/* The pointer argument i, when it points into region rg: 1 and *p. */
static int points_into(const xmt_session *S, size_t i, const xmt_region *rg, CUdeviceptr *p)
{
    if (i >= S->req.v->nparams || i >= S->req.k->nparams || S->req.k->sizes[i] != 8 ||
        !S->req.v->params[i])
        return 0;
    memcpy(p, S->req.v->params[i], 8);
    return *p >= rg->base && *p < rg->base + rg->bytes;
}

/* Parameter i's name in the policy ("p1", "y"), else "parameter i". */
static void param_name(const xmt_kernel *k, size_t i, char *out, size_t cap)
{
    const char *name = NULL;
    if (xmt_entry_param(k->entry, i, &name, NULL, NULL) && name)
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "parameter %zu", i);
}

/* The pointer arguments that point into region rg, in the policy's terms ("x, y"; "" when
 * none does). Returns how many. */
static size_t arguments_into(const xmt_session *S, const xmt_region *rg, char *out, size_t cap)
{
    size_t at = 0, count = 0;
    CUdeviceptr p;
    char pn[64];
    out[0] = 0;
    for (size_t i = 0; i < S->req.v->nparams; i++) {
        if (!points_into(S, i, rg, &p)) continue;
        param_name(S->req.k, i, pn, sizeof pn);
        if (at < cap) at += (size_t)snprintf(out + at, cap - at, "%s%s", count ? ", " : "", pn);
        count++;
    }
    return count;
}

/* Names, in the policy's terms, the pointer argument whose data holds addr (a byte of
 * region rg that differed): the one pointing into rg nearest below addr, into out, and
 * where addr is, the byte's offset from where it points, into where. One allocation can
 * serve several arguments: then where says so and names them. Writes "" when no argument
 * points into rg (a pointer inside a struct). */
static void name_argument(const xmt_session *S, const xmt_region *rg, CUdeviceptr addr, int is_out,
                          char *out, size_t cap, char *where, size_t wcap)
{
    size_t best = (size_t)-1;
    CUdeviceptr bp = 0, p;
    char all[192], pn[64];
    size_t count = arguments_into(S, rg, all, sizeof all);
    for (size_t i = 0; i < S->req.v->nparams; i++)
        if (points_into(S, i, rg, &p) && p <= addr && (best == (size_t)-1 || p > bp)) {
            best = i;
            bp = p;
        }
    out[0] = 0;
    if (best == (size_t)-1) return;
    param_name(S->req.k, best, pn, sizeof pn);
    snprintf(out, cap, "%s (%s)", pn, is_out ? "an output" : "outside the outputs");
    if (count > 1)
        snprintf(where, wcap,
                 "byte %llu from where %s points, of one allocation that %s point into: named is "
                 "the one that points nearest below that byte",
                 (unsigned long long)(addr - bp), pn, all);
    else
        snprintf(where, wcap, "byte %llu from where %s points", (unsigned long long)(addr - bp),
                 pn);
}

/* Describes comparison d, which differed, into c->why; reads the first differing
 * values when there is a tolerance. */
static void describe(xmt_session *S, xmt_cand *c, long d)
{
    const xmt_gc_cmp *g = &S->data.segs[d];
    const xmt_gc_result *r = &S->data.results[d];
    char name[384], where[512];
    double got = 0, ref = 0;
    int at_byte = 0;
    if (S->set.automatic) {
        const xmt_region *rg = NULL;
        for (size_t i = 0; i < S->data.nregs; i++)
            if (g->got >= S->data.regs[i].base &&
                g->got < S->data.regs[i].base + S->data.regs[i].bytes)
                rg = &S->data.regs[i];
        uint64_t off = rg ? g->got - rg->base + r->first * g->es : 0;
        int is_out = rg && rg->out[off >> XMT_CHUNK_SHIFT];
        name[0] = 0;
        at_byte = 1;
        if (rg)
            name_argument(S, rg, rg->base + off, is_out, name, sizeof name, where, sizeof where);
        if (!name[0]) { /* no argument points into it: a pointer inside a struct */
            snprintf(name, sizeof name, "allocation 0x%llx (%s)",
                     (unsigned long long)(rg ? rg->base : 0),
                     is_out ? "an output" : "outside the outputs");
            snprintf(where, sizeof where, "byte %llu of it", (unsigned long long)off);
        }
    } else {
        for (size_t i = 0; i < S->data.nbufs; i++)
            if (S->data.bufs[i].ptr == g->got)
                snprintf(name, sizeof name, "%s", S->data.bufs[i].b.name);
    }
    if (g->kind != XMT_CMP_BITS) {
        uint8_t a[8] = {0}, b[8] = {0};
        if (xmt_drv.cuMemcpyDtoHAsync(a, g->got + r->first * g->es, g->es, S->run.s) ==
                CUDA_SUCCESS &&
            xmt_drv.cuMemcpyDtoHAsync(b, g->ref + r->first * g->es, g->es, S->run.s) ==
                CUDA_SUCCESS &&
            xmt_drv.cuStreamSynchronize(S->run.s) == CUDA_SUCCESS) {
            got = xmt_verify_value(a, 0, g->kind);
            ref = xmt_verify_value(b, 0, g->kind);
        }
    }
    xmt_verify_describe(name, r->count, g->bytes / g->es, r->first, g->kind,
                        S->set.automatic && g->es == 1, g->rtol, g->atol, got, ref,
                        at_byte ? where : NULL, c->why, sizeof c->why);
}

/* A rejected candidate under auto protection: what it changed outside the outputs is put
 * back from the snapshot (the outputs are prepared before every run anyway). */
static int undo(xmt_session *S, xmt_cand *c)
{
    size_t put = 0;
    if (!S->set.automatic || xmt_sess_changes(S, 0) < 0) return S->set.automatic ? -1 : 0;
    XMT_TRY(S, xmt_outputs_put_back_outside(S->data.regs, S->data.nregs, S->run.s, &put),
            "put back");
    if (put) {
        size_t l = strlen(c->why);
        snprintf(c->why + l, sizeof c->why - l,
                 "; put back %zu bytes it changed outside the outputs", put);
        xmt_warn(
            "%s: candidate %s changed memory outside the outputs for key %s; put back (%zu bytes)",
            S->req.k->demangled, c->c.label, S->req.key_text, put);
    }
    return 0;
fail:
    return -1;
}

/* Whether the last compare found a difference that may lie outside the outputs. */
static int changed_outside(const xmt_session *S)
{
    return S->set.automatic &&
           xmt_outputs_changed_outside(S->data.results, S->data.seg_kind, S->data.nsegs);
}

/* The float extent comparison i compares, or NULL. */
static const xmt_sbuf *extent_of(const xmt_session *S, size_t i)
{
    int32_t b = S->set.automatic && S->data.seg_buf ? S->data.seg_buf[i] : -1;
    return b >= 0 && (S->data.segbufs[b].b.roles & XMT_SBUF_EXTENT) ? &S->data.segbufs[b] : NULL;
}

/* Measures the float extents whose comparisons which[0 .. n) found a difference, first[i]
 * the first differing element of which[i]'s. 1 when each differs by rounding alone
 * (c->rounded and c->rel set; *elements the differing elements, *name the first extent's),
 * 0 when one does not, -1 on failure. */
static int measure_rounding(xmt_session *S, xmt_cand *c, const size_t *which, const uint64_t *first,
                            size_t n, uint64_t *elements, const char **name)
{
    double rel = 0;
    *elements = 0;
    *name = NULL;
    for (size_t i = 0; i < n; i++) {
        const xmt_sbuf *b = extent_of(S, which[i]);
        const xmt_gc_cmp *g = &S->data.segs[which[i]];
        double *scale = &S->data.ext_scale[S->data.seg_buf[which[i]]];
        unsigned es;
        int kind = xmt_verify_kind(b->b.dtype, 1, 0, &es);
        xmt_rounding r;
        CUresult e = CUDA_SUCCESS;
        if (*scale < 0) e = xmt_gc_absmax(&S->check.gc, g->ref, g->bytes, kind, scale);
        if (e == CUDA_SUCCESS)
            e = xmt_rounding_measure(&S->check.gc, g, kind, *scale, first[i], &r);
        if (e != CUDA_SUCCESS) {
            xmt_sess_error(S, e, "verification");
            return -1;
        }
        if (!r.rounding) return 0;
        rel = fmax(rel, r.max_rel);
        *elements += r.elements;
        if (!*name) *name = b->b.name;
    }
    c->rounded = 1;
    c->rel = rel;
    return 1;
}

/* A candidate the last compare rejected: when every difference lies in float extents and
 * is rounding alone, says so in c->why and returns 1; 0 when not; -1 on failure. */
static int rounding_rejected(xmt_session *S, xmt_cand *c)
{
    size_t which[XMT_MAX_EXTENTS], n = 0;
    uint64_t first[XMT_MAX_EXTENTS];
    if (!S->data.nextents) return 0;
    for (size_t i = 0; i < S->data.nsegs; i++) {
        if (!S->data.results[i].count) continue;
        if (!extent_of(S, i) || n == XMT_MAX_EXTENTS) return 0;
        first[n] = S->data.results[i].first;
        which[n++] = i;
    }
    uint64_t elements;
    const char *name;
    int m = n ? measure_rounding(S, c, which, first, n, &elements, &name) : 0;
    if (m <= 0) return m;
    size_t l = (size_t)snprintf(c->why, sizeof c->why,
                                "%.40s%s: float rounding alone: %llu element%s from the "
                                "program's own config's, by at most %.2g times the largest "
                                "magnitude there; ",
                                name, n > 1 ? " and others" : "", (unsigned long long)elements,
                                elements == 1 ? " differs" : "s differ", c->rel);
    if (l >= sizeof c->why) return 1;
    if (S->set.has_tol)
        snprintf(c->why + l, sizeof c->why - l, "beyond the tolerance (rtol %g, atol %g)",
                 S->set.tol_rtol, S->set.tol_atol);
    else
        snprintf(c->why + l, sizeof c->why - l, "%s", xmt_rounding_hint(S->req.k->entry));
    return 1;
}

/* A candidate that passed within the entry's tolerance: whether its float extents equal
 * the own config's bitwise, and how far by rounding when not. 0, or -1 on failure. */
static int rounding_passed(xmt_session *S, xmt_cand *c)
{
    xmt_gc_cmp t[XMT_MAX_EXTENTS];
    size_t at[XMT_MAX_EXTENTS], which[XMT_MAX_EXTENTS], n = 0, nd = 0;
    uint64_t first[XMT_MAX_EXTENTS];
    for (size_t i = 0; i < S->data.nsegs && n < XMT_MAX_EXTENTS; i++)
        if (extent_of(S, i)) {
            t[n] = S->data.segs[i];
            t[n].kind = XMT_CMP_BITS;
            at[n++] = i;
        }
    CUresult e = n ? xmt_gc_compare(&S->check.gc, t, n, S->data.results) : CUDA_SUCCESS;
    if (e != CUDA_SUCCESS) {
        xmt_sess_error(S, e, "verification");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (S->data.results[i].count) {
            first[nd] = S->data.results[i].first;
            which[nd++] = at[i];
        }
    uint64_t elements;
    const char *name;
    return nd && measure_rounding(S, c, which, first, nd, &elements, &name) < 0 ? -1 : 0;
}

/* verify_compare's second half: what the comparisons d (-1: none differs) say of c. */
static int verify_outcome(xmt_session *S, xmt_cand *c, long d, int comp, int second)
{
    if (d < 0) return S->set.has_tol && rounding_passed(S, c) < 0 ? -1 : 0;
    c->status = XMT_C_REJECTED;
    int rounding = rounding_rejected(S, c);
    if (rounding < 0) return -1;
    if (!rounding) describe(S, c, d);
    size_t l = strlen(c->why);
    if (second)
        snprintf(c->why + l, sizeof c->why - l,
                 " (from outputs filled with 0x00; from 0xFF it matched: it leaves output "
                 "bytes unwritten)");
    else if (comp && !rounding && left_unwritten(S, d))
        snprintf(c->why + l, sizeof c->why - l,
                 " (there it left the complement of the program's own result the outputs "
                 "were filled with: it leaves output bytes unwritten)");
    return changed_outside(S) && undo(S, c) != 0 ? -1 : 0;
}

static int check_candidate(xmt_session *S, xmt_cand *c);
static int guard_own(xmt_session *S);

/* A candidate's run from outputs all poisoned differed before the in-place check: the
 * outputs the program's own config updates in place were poisoned too, and c may have read
 * them. The own config is asked (in_place_check) and c verified again from what they
 * should hold; what c changed outside the outputs (when the comparison says it may have)
 * and in the guard bytes is put back first, so that the own config runs on the program's
 * data and a guard byte it changes is its own. 0, 1 untuned, -1 failure. */
static int sort_and_check_again(xmt_session *S, xmt_cand *c)
{
    size_t put = 0;
    if (changed_outside(S)) {
        if (xmt_sess_changes(S, 0) < 0) return -1;
        XMT_TRY(S, xmt_outputs_put_back_outside(S->data.regs, S->data.nregs, S->run.s, &put),
                "put back");
    }
    if (S->check.slack.pattern)
        XMT_TRY(S, xmt_slack_fill(&S->check.slack, &S->check.gc, S->run.s), "guard bytes");
    double t0 = xmt_now_ms();
    int r = xmt_sess_in_place_check(S);
    if (r == 0) r = guard_own(S);
    S->out.ph.verify_own += xmt_now_ms() - t0;
    return r != 0 ? r : check_candidate(S, c);
fail:
    return -1;
}

/* One candidate's verification run(s) against the program's own result: it stays ok, or
 * is rejected (or skipped: the budget was spent). 1 when the key is untuned (the in-place
 * check found the own config not deterministic), -1 on a driver failure. */
static int check_candidate(xmt_session *S, xmt_cand *c)
{
    if (c->status != XMT_C_OK || !S->data.any_verify) return 0;
    if (xmt_sess_over_budget(S, "verify")) { /* never timed: it was not verified */
        c->status = XMT_C_SKIPPED;
        snprintf(c->why, sizeof c->why, "not verified: the key's budget (budget_ms) was spent");
        return 0;
    }
    int comp = !xmt_sess_program_data(S) && complement_poison(S);
    int r = xmt_sess_verify_run_from(S, c, comp ? XMT_POISON_COMPLEMENT : 1);
    if (r != 0) return r < 0 ? -1 : 0;
    long d = xmt_sess_compare_all(S);
    if (d == -2) return -1;
    int second = 0;
    if (d < 0 && !comp && poisons_any(S)) { /* again from the other pattern: every byte written? */
        second = 1;
        if ((r = xmt_sess_verify_run_from(S, c, 2)) != 0) return r < 0 ? -1 : 0;
        if ((d = xmt_sess_compare_all(S)) == -2) return -1;
    }
    /* from the program's own data (its own process) nothing was poisoned: the difference
     * is the candidate's, and the own config never runs from poisoned outputs there */
    if (d >= 0 && S->set.automatic && !S->data.in_place_known && !xmt_sess_program_data(S))
        return sort_and_check_again(S, c);
    return verify_outcome(S, c, d, comp, second);
}

/* check_candidate, its time beyond the runs counted as verification's comparisons. */
static int verify_compare(xmt_session *S, xmt_cand *c)
{
    double t0 = xmt_now_ms(), runs0 = S->out.ph.verify_runs, own0 = S->out.ph.verify_own;
    int r = check_candidate(S, c);
    S->out.ph.verify_compares +=
        xmt_now_ms() - t0 - (S->out.ph.verify_runs - runs0) - (S->out.ph.verify_own - own0);
    return r;
}

int xmt_sess_guard_arm(xmt_session *S)
{
    XMT_ASSERT(!S->check.slack.n && S->out.error == CUDA_SUCCESS, "guard bytes armed twice");
    const xmt_trial_in *in = S->run.trial;
    if (!in || !in->nwin || !S->data.any_verify) return 0;
    if (xmt_slack_find(in->win, in->win_bytes, in->nwin, in->regs, in->nregs, &S->check.slack) !=
        0) {
        xmt_sess_error(S, CUDA_ERROR_OUT_OF_MEMORY, "guard bytes");
        return -1;
    }
    if (!S->check.slack.n) return 0;
    int r =
        xmt_sess_scratch(S, &S->check.slack.pattern, S->check.slack.pattern_bytes, "guard alloc");
    if (r != 0) return r;
    XMT_TRY(S, xmt_slack_fill(&S->check.slack, &S->check.gc, S->run.s), "guard bytes");
    return 0;
fail:
    return -1;
}

/* The pointer arguments that point into given region i, in the policy's terms ("x, y"),
 * else the region's address. */
static void region_name(const xmt_session *S, long i, char *out, size_t cap)
{
    const xmt_region *rg = &S->run.trial->regs[i];
    if (!arguments_into(S, rg, out, cap))
        snprintf(out, cap, "0x%llx", (unsigned long long)rg->base);
}

/* Where in the guard bytes a run wrote: "after the allocation out points into, from byte 0
 * past its end". */
static void guard_where(const xmt_session *S, size_t span, uint64_t first, char *out, size_t cap)
{
    const xmt_slack_span *g = &S->check.slack.spans[span];
    char name[128];
    if (g->after >= 0) {
        region_name(S, g->after, name, sizeof name);
        snprintf(out, cap, "after the allocation %.64s points into, from byte %llu past its end",
                 name, (unsigned long long)first);
    } else if (g->before >= 0) {
        region_name(S, g->before, name, sizeof name);
        snprintf(out, cap,
                 "before the allocation %.64s points into, from byte %llu before its start", name,
                 (unsigned long long)(g->bytes - first));
    } else {
        snprintf(out, cap, "of a window without memory of its own");
    }
}

/* Checks the guard bytes: 0 unchanged, 1 changed (N bytes and where, in why), -1 failure. */
static int guard_changed(xmt_session *S, const char *who, char *why, size_t cap)
{
    uint64_t n, first;
    size_t span;
    CUresult r = xmt_slack_check(&S->check.slack, &S->check.gc, &n, &span, &first);
    if (r != CUDA_SUCCESS) {
        xmt_sess_error(S, r, "guard bytes");
        return -1;
    }
    if (!n) return 0;
    char where[256];
    guard_where(S, span, first, where, sizeof where);
    snprintf(why, cap,
             "%schanged %llu bytes past the memory its pointer arguments reach (in the trial "
             "helper's guard bytes %.160s)",
             who, (unsigned long long)n, where);
    return 1;
}

/* In the trial helper, once the program's own config has run (its outputs found, or its
 * reference taken): when it changed a guard byte, the key is untuned -- it writes memory
 * that was not staged, and the helper cannot protect it. Returns 0, 1 untuned, -1. */
static int guard_own(xmt_session *S)
{
    char why[300];
    int r = S->check.slack.pattern ? guard_changed(S, "its own config ", why, sizeof why) : 0;
    if (r <= 0) return r;
    char b[300];
    snprintf(b, sizeof b, "%.240s; the helper cannot protect what it writes there", why);
    return xmt_sess_untuned(S, "%s", b);
}

/* In the trial helper, after candidate c's verify runs (ran: it had some): a candidate
 * that changed any guard byte is rejected, whatever its outputs, and never timed (in the
 * program the same writes fault, or overwrite a neighbouring allocation); the guard bytes
 * are filled again for the next. 0, or -1 on failure. */
static int guard_check(xmt_session *S, xmt_cand *c, int ran)
{
    char why[300];
    if (!S->check.slack.pattern || !ran || (c->status != XMT_C_OK && c->status != XMT_C_REJECTED))
        return 0;
    int r = guard_changed(S, "", why, sizeof why);
    if (r <= 0) return r;
    snprintf(c->why, sizeof c->why, "%.220s: it would write past the program's allocations%s", why,
             c->status == XMT_C_REJECTED ? " (its outputs differ too)" : "");
    c->rounded = 0; /* rejected for something worse than rounding */
    c->status = XMT_C_REJECTED;
    XMT_TRY(S, xmt_slack_fill(&S->check.slack, &S->check.gc, S->run.s), "guard bytes");
    return 0;
fail:
    return -1;
}

void xmt_sess_guard_release(xmt_session *S)
{
    S->check.slack.pattern_set = 0;
    if (S->check.slack.pattern && !(S->run.trial && S->out.error != CUDA_SUCCESS))
        xmt_drv.cuMemFree(S->check.slack.pattern);
    S->check.slack.pattern = 0;
    xmt_slack_free(&S->check.slack);
}

int xmt_sess_verify_one(xmt_session *S, xmt_cand *c)
{
    int ran = c->status == XMT_C_OK && S->data.any_verify;
    int v = verify_compare(S, c);
    if (v != 0) return v;
    double t0 = xmt_now_ms();
    int r = guard_check(S, c, ran);
    S->out.ph.verify_guard += xmt_now_ms() - t0;
    return r;
}

int xmt_sess_verify(xmt_session *S)
{
    XMT_ASSERT(S->out.error == CUDA_SUCCESS && !S->out.uninformative, "verify: after a failure");
    if (!S->data.any_verify) return 0;
    double t0 = xmt_now_ms(), cw0 = S->out.ph.clock_warmup;
    if (!S->set.automatic &&
        (xmt_sess_verify_run(S, &S->cand.cands[0]) != 0 || xmt_sess_take_reference(S) != 0))
        return -1;
    S->out.ph.verify_own += xmt_now_ms() - t0;
    int own = guard_own(S);
    if (own != 0) return own;
    for (size_t i = 1; i <= S->cand.n && own == 0; i++) {
        xmt_sess_progress(S, "verify", i - 1, S->cand.n);
        own = xmt_sess_verify_one(S, &S->cand.cands[i]);
        if (own == 0 && S->cand.cands[i].status == XMT_C_REJECTED && !S->req.verify_only &&
            xmt_session_decided)
            xmt_session_decided(S->cand.cands[i].index);
        /* once something passed, something will be timed: the clock goes up now, so that
         * the remaining verification runs at speed too (at the idle clock it was most of
         * what tuning cost beyond its timed runs: docs/benchmarks.md) */
        if (own == 0 && S->cand.cands[i].status == XMT_C_OK && i < S->cand.n &&
            !S->req.verify_only && S->timing.warmup_fate == XMT_WARMUP_NOT_REACHED &&
            xmt_sess_clock_warm_up(S) != 0)
            return -1;
    }
    if (own < 0) return -1;
    if (own == 0) own = xmt_sess_own_repeats(S);
    /* the clock warm-up is its own phase */
    S->out.ph.verification += xmt_now_ms() - t0 - (S->out.ph.clock_warmup - cw0);
    return own;
}
