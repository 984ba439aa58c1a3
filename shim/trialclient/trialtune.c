/*
 * trialtune: a key's tuning session run in the trial helper (see trialtune.h).
 */
#include "trialtune.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "devinfo.h"
#include "driver.h"
#include "family.h"
#include "gpucheck.h"
#include "launch.h"
#include "log.h"
#include "logevent.h"
#include "modload.h"
#include "options.h"
#include "outputs.h"
#include "protect.h"
#include "rounding.h"
#include "session.h"
#include "settings.h"
#include "trialmod.h"
#include "trialproc.h"
#include "trialprog.h"
#include "trialproto.h"
#include "trialreq.h"
#include "trialsnap.h"
#include "trialstage.h"
#include "verify.h"

/* ---- the request (common/trialreq.h) ----------------------------------------------------- */

_Static_assert(XMT_TR_MAX_ARGS == XMT_MAX_ARG_OVERRIDES, "a request carries every argument");
_Static_assert(sizeof(((xmt_candidate *)0)->label) == XMT_TP_LABEL, "a request carries labels");
_Static_assert(XMT_TR_MAX_PARAMS >= XMT_KERNEL_MAX_PARAMS, "a request carries every parameter");
_Static_assert(XMT_TR_MAX_FAULTED >= XMT_TRIAL_MAX_FAULTS + XMT_FAMILY_KEPT,
               "a request carries every fault, its key's and those its kernel's other keys had");
_Static_assert(XMT_TR_WHY == XMT_FAMILY_TEXT, "a learned fault fits a request's");

/* How an attempt's staging is filled: from the program's memory (the program is held at
 * its launch), or from a snapshot's copy (background tuning). */
typedef CUresult (*fill_fn)(const xmt_staging *st, const void *ud);

/* One session's setting: what run_attempts runs. */
typedef struct {
    xmt_kernel *k;
    const xmt_launch *l;
    const xmt_launch_view *v;
    const char *key_text;
    int device;
    xmt_staging *st;
    const xmt_image *img;
    const xmt_tr_globals *globals;
    double staging_ms;
    int verify_only;
    const xmt_candidate *only;
    long only_index;
    int from_cache, recheck;
    const char *record_data;
    int may_launch;
    const xmt_trial_snap *after; /* background tuning: the fidelity check's copy */
    fill_fn fill;
    const void *fill_ud;
    const char *decided; /* a partial record's candidates decided in an earlier run, or NULL */
} sess_t;

/* A config as the request carries it. */
static void tr_candidate(const xmt_candidate *c, xmt_tr_candidate *out)
{
    memset(out, 0, sizeof *out);
    out->grid = (xmt_tr_dim3){c->dims.grid.x, c->dims.grid.y, c->dims.grid.z};
    out->block = (xmt_tr_dim3){c->dims.block.x, c->dims.block.y, c->dims.block.z};
    out->shared = c->dims.shared;
    out->nargs = c->nargs;
    for (unsigned i = 0; i < c->nargs && i < XMT_TR_MAX_ARGS; i++)
        out->args[i] = (xmt_tr_arg){c->args[i].value, c->args[i].param, c->args[i].size};
    snprintf(out->label, sizeof out->label, "%s", c->label);
}

/* The request of one attempt of session c (fl: the nf candidates that faulted in earlier
 * helpers), as the wire's text: malloc'd, *len its length; NULL with why. */
static char *request_text(const sess_t *c, const xmt_tr_fault *fl, size_t nf, int in_place_first,
                          double staging_ms, size_t *len, char *why, size_t cap)
{
    const xmt_kernel *k = c->k;
    const xmt_launch *l = c->l;
    const xmt_staging *st = c->st;
    xmt_trialreq q = {.kernel = k->mangled,
                      .key = c->key_text,
                      .record_data = c->record_data,
                      .decided = c->decided,
                      .entry_fp = xmt_entry_fingerprint(k->entry),
                      .only_index = c->only_index,
                      .staging_ms = staging_ms,
                      .granularity = st->gran,
                      .device = c->device,
                      .verify_only = !!c->verify_only,
                      .from_cache = !!c->from_cache,
                      .recheck = !!c->recheck,
                      .in_place_first = !!in_place_first,
                      .has_only = c->only != NULL,
                      .nwindows = st->nwin,
                      .nregions = st->nregs,
                      .nfaulted = nf,
                      .faulted = (xmt_tr_fault *)(uintptr_t)fl, /* read only: encoded */
                      .nglobals = c->globals->n,
                      .globals = c->globals->g};
    if (c->only) tr_candidate(c->only, &q.only);
    /* what the program set on the function: its opt-in to more dynamic shared memory and
     * its carveout (asked again: it may have changed them since the record was made) */
    int dyn = k->max_dynamic_shared, carve = -1;
    if (xmt_drv.cuFuncGetAttribute && !k->is_cukernel) {
        xmt_drv.cuFuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l->f);
        xmt_drv.cuFuncGetAttribute(&carve, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                   l->f);
    }
    q.launch = (xmt_tr_launch){.grid = {l->grid[0], l->grid[1], l->grid[2]},
                               .block = {l->block[0], l->block[1], l->block[2]},
                               .shared = l->shared,
                               .max_dynamic_shared = dyn,
                               .carveout = carve,
                               .nparams = (uint32_t)k->nparams};
    snprintf(q.image.id, sizeof q.image.id, "%p:%zu", c->img->owner, c->img->size);
    q.image.njit = c->img->njit;
    for (unsigned i = 0; i < c->img->njit && i < XMT_TR_MAX_JIT; i++)
        q.image.jit[i] =
            (xmt_tr_jit){(int64_t)c->img->jit_opts[i], (uint64_t)(uintptr_t)c->img->jit_vals[i]};
    /* a parameter's bytes (those of more than XMT_TR_MAX_PARAM_BYTES go empty: the helper
     * then refuses the launch) */
    q.launch.params = calloc(k->nparams ? k->nparams : 1, sizeof *q.launch.params);
    q.windows = calloc(st->nwin ? st->nwin : 1, sizeof *q.windows);
    q.regions = calloc(st->nregs ? st->nregs : 1, sizeof *q.regions);
    char *text = NULL;
    if (!q.launch.params || !q.windows || !q.regions) {
        snprintf(why, cap, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < k->nparams; i++)
        if (c->v->params[i] && k->sizes[i] <= XMT_TR_MAX_PARAM_BYTES)
            q.launch.params[i] = (xmt_tr_bytes){c->v->params[i], k->sizes[i]};
    for (size_t i = 0; i < st->nwin; i++)
        q.windows[i] = (xmt_tr_window){st->win_va[i], st->win_bytes[i], st->win_off[i]};
    for (size_t i = 0; i < st->nregs; i++)
        q.regions[i] = (xmt_tr_region){st->regs[i].base, st->regs[i].bytes};
    text = xmt_trialreq_encode(&q, len, why, cap);
out:
    free(q.launch.params);
    free(q.windows);
    free(q.regions);
    return text;
}

/* ---- one session in one helper ----------------------------------------------------------- */

enum { ATTEMPT_DONE, ATTEMPT_FAULT, ATTEMPT_LOST, ATTEMPT_NO_HELPER, ATTEMPT_HELPER_FAILED };

/* Sends the request and waits for its RESULT, saying the helper's NOTEs as they come. A
 * helper silent for XMATUNE_TRIAL_TIMEOUT_MS is taken as hung. */
static int attempt(int device, const int *fds, int nfds, const xmt_tp_tune *t, xmt_tp_result *res,
                   char *why, size_t cap)
{
    int chan = xmt_trial_acquire(device);
    if (chan < 0) {
        snprintf(why, cap, "no trial helper for device %d", device);
        return chan == XMT_TRIAL_FAILED ? ATTEMPT_HELPER_FAILED : ATTEMPT_NO_HELPER;
    }
    static _Atomic uint32_t seqs = 1u << 30;
    xmt_tp_msg m = {.type = XMT_TP_TUNE, .seq = atomic_fetch_add(&seqs, 1)};
    m.u.tune = *t;
    uint32_t seq = m.seq;
    if (xmt_tp_send(chan, &m, fds, nfds) != 0) {
        snprintf(why, cap, "the helper is gone (TUNE: %s)", strerror(errno));
        xmt_trial_release(device, 1, why);
        return ATTEMPT_LOST;
    }
    for (;;) {
        int efd[XMT_TP_MAX_FDS], nefd = 0;
        char err[160];
        int r = xmt_tp_recv(chan, &m, efd, &nefd, xmt_opt.trial_timeout_ms, err, sizeof err);
        if (r != 0 || (m.seq != seq && m.type != XMT_TP_ERROR)) {
            for (int i = 0; i < nefd; i++)
                close(efd[i]);
            if (r == 0) continue; /* a late answer to something else */
            snprintf(why, cap,
                     r == XMT_TP_TIMEOUT ? "the helper stopped answering while tuning (%s)"
                                         : "the helper died while tuning (%s)",
                     err);
            xmt_trial_release(device, 1, why);
            return ATTEMPT_LOST;
        }
        if (m.type == XMT_TP_NOTE) {
            if (m.u.note.text[0]) xmt_message_line(m.u.note.text);
            continue;
        }
        if (m.type == XMT_TP_DECIDED) {
            xmt_trial_prog_add((long)m.u.decided);
            continue;
        }
        if (m.type != XMT_TP_RESULT) {
            snprintf(why, cap, "the helper answered TUNE with %s",
                     m.type == XMT_TP_ERROR ? m.u.error.text : "something else");
            for (int i = 0; i < nefd; i++)
                close(efd[i]);
            xmt_trial_release(device, 1, why);
            return ATTEMPT_LOST;
        }
        *res = m.u.result;
        int fault = res->culprit != XMT_TP_NO_CULPRIT && res->culprit != XMT_OWN_CONFIG;
        if (!fault) xmt_trial_log_lines(nefd ? efd[0] : -1, res->events_bytes);
        for (int i = 0; i < nefd; i++)
            close(efd[i]);
        snprintf(why, cap, "%s", res->why);
        xmt_trial_release(device, res->exiting, res->exiting ? res->why : NULL);
        return fault ? ATTEMPT_FAULT : ATTEMPT_DONE;
    }
}

/* The check's comparisons, in *out (malloc'd): each staged region against the helper's
 * reference bitwise, except, under an entry's tolerance: (protect: auto, rounding.h), what
 * its float pointer arguments reach: from where each points to the next pointer argument
 * or the region's end (the helper's outputs are not known here, so a little more than its
 * extents), compared within it, as the candidates were. Returns how many; 0 when out of
 * memory (*out NULL). */
static size_t check_comparisons(const xmt_kernel *k, const xmt_launch_view *v,
                                const xmt_staging *st, xmt_gc_cmp **out)
{
    double rtol = 0, atol = 0;
    int tol = xmt_settings_tolerance(k->entry, &rtol, &atol);
    size_t nr = st->nregs, next = 0, n = 0;
    xmt_region *g = calloc(nr ? nr : 1, sizeof *g);
    xmt_sbuf ext[XMT_MAX_EXTENTS];
    char names[XMT_MAX_EXTENTS][XMT_EXTENT_NAME];
    int ok = g != NULL;
    for (size_t i = 0; ok && i < nr; i++) {
        g[i].base = st->regs[i].base;
        g[i].bytes = st->regs[i].bytes;
        g[i].ref = st->va + xmt_staged_at(st, g[i].base);
        g[i].nchunks = (g[i].bytes + (1u << XMT_CHUNK_SHIFT) - 1) >> XMT_CHUNK_SHIFT;
        g[i].out = malloc(g[i].nchunks ? g[i].nchunks : 1);
        ok = g[i].out != NULL;
        if (ok) memset(g[i].out, 1, g[i].nchunks); /* all of it, as one piece */
    }
    if (ok && tol)
        next = xmt_rounding_extents(k, v, g, nr, NULL, 0, rtol, atol, ext, names, XMT_MAX_EXTENTS);
    size_t room = nr * XMT_MAX_PIECES * (2 * next + 1) + 1;
    *out = ok ? calloc(room, sizeof **out) : NULL;
    uint8_t *kinds = *out ? calloc(room, 1) : NULL;
    if (kinds) n = xmt_outputs_segments(g, nr, ext, next, *out, kinds, NULL);
    for (size_t i = 0; g && i < nr; i++)
        free(g[i].out);
    free(g);
    free(kinds);
    if (*out && !n && nr) {
        free(*out);
        *out = NULL;
    }
    return n;
}

/* The program's own config run for real, and what it left compared with the helper's
 * reference in the staged memory: 1 when equal (within the entry's tolerance: where it
 * has one). *rc: the launch's result. */
static void translate_after(const xmt_trial_snap *s, xmt_gc_cmp *c, size_t n);

/* The comparison that check() and check_after() share: what the program's own config left
 * (in its memory, or, given after, in that snapshot's copy of it) against the helper's
 * reference in the staging, on the GPU, logged as the trial_check event. 1 when equal. */
static int compare_ref(xmt_kernel *k, const xmt_launch_view *v, const xmt_staging *st,
                       const xmt_trial_snap *after, CUstream stream, const char *key_text,
                       int device, char *why, size_t cap)
{
    xmt_gc_cmp *c = NULL;
    size_t n = check_comparisons(k, v, st, &c);
    xmt_gc_result *res = calloc(n ? n : 1, sizeof *res);
    uint64_t bytes = 0, differ = 0;
    CUresult r = (c || !st->nregs) && res ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < st->nregs; i++)
        bytes += st->regs[i].bytes;
    if (after) translate_after(after, c, r == CUDA_SUCCESS ? n : 0);
    xmt_gc gc;
    if (r == CUDA_SUCCESS) {
        xmt_gc_open(&gc, stream);
        r = xmt_gc_compare(&gc, c, n, res);
        xmt_gc_close(&gc);
    }
    for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++)
        differ += res[i].count;
    free(c);
    free(res);
    if (r != CUDA_SUCCESS) {
        char b[32];
        snprintf(why, cap, "the comparison failed (%s)", xmt_cu_name(r, b, sizeof b));
    } else if (differ) {
        snprintf(why, cap,
                 "the program's own run differs from the trial helper's in %llu of %llu bytes: "
                 "the helper does not see all the kernel reads (a module global the program "
                 "set without asking the driver for its address, a texture, memory reached "
                 "through pointers outside the staged regions)",
                 (unsigned long long)differ, (unsigned long long)bytes);
    }
    int equal = r == CUDA_SUCCESS && !differ;
    if (xmt_log_enabled())
        xmt_log_event(xmt_ev_trial_check(k->mangled, k->demangled, key_text, device, equal, bytes,
                                         differ, equal ? NULL : why));
    return equal;
}

static int check(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                 const xmt_staging *st, const char *key_text, int device, CUresult *rc, char *why,
                 size_t cap)
{
    *rc = xmt_pass(k, l);
    if (*rc != CUDA_SUCCESS) {
        char b[32];
        snprintf(why, cap, "the program's own launch failed (%s)", xmt_cu_name(*rc, b, sizeof b));
        return 0;
    }
    return compare_ref(k, v, st, NULL, xmt_launch_stream(l), key_text, device, why, cap);
}

/* The fault of a candidate, as its `why` says it. */
static void fault_why(const xmt_tp_result *res, char *out, size_t cap)
{
    static const char at[] = "CUDA_ERROR_TIMEOUT at ";
    if (res->culprit_error == CUDA_ERROR_TIMEOUT && !strncmp(res->why, at, sizeof at - 1))
        snprintf(out, cap, "ran past %.130s in the trial helper", res->why + sizeof at - 1);
    else if (res->culprit_error == CUDA_ERROR_TIMEOUT)
        snprintf(out, cap, "ran past the watchdog in the trial helper (it never ended)");
    else
        snprintf(out, cap, "faulted in the trial helper: %.120s", res->why);
}

/* The helper's decision taken into *out; a winner other than the program's own config
 * is checked first (may_launch: this launch runs the program's own config, check()). */
static int check_after(xmt_kernel *k, const xmt_launch_view *v, const xmt_staging *st,
                       const xmt_trial_snap *s, const char *key_text, int device, char *why,
                       size_t cap);

/* ... after: a snapshot of what the program's own launch left (background tuning): the
 * check compares the helper's reference with it instead of making this launch. */
static void take_result(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                        const xmt_staging *st, const char *key_text, int device,
                        const xmt_tp_result *res, int may_launch, const xmt_trial_snap *after,
                        xmt_trial_outcome *out)
{
    out->choice.index = (long)res->choice;
    snprintf(out->choice.label, sizeof out->choice.label, "%s", res->label);
    out->choice.time_ms = res->time_ms;
    out->storable = res->storable;
    out->uninformative = res->uninformative;
    snprintf(out->choice.data, sizeof out->choice.data, "%s", res->data);
    /* an undecided key's outcome, remembered so that no later run tries it again */
    if (!res->storable && !res->uninformative && res->culprit == XMT_OWN_CONFIG)
        xmt_choice_outcome(&out->choice, XMT_OUTCOME_FAULTED, res->why);
    else if (!res->storable && !res->uninformative && res->outcome[0])
        xmt_choice_outcome(&out->choice, res->outcome, res->why);
    if (!res->reference || (!may_launch && !after) || res->choice == XMT_OWN_CONFIG) return;
    char cw[600];
    int equal;
    if (after) {
        equal = check_after(k, v, st, after, key_text, device, cw, sizeof cw);
    } else {
        out->launched = 1;
        equal = check(k, l, v, st, key_text, device, &out->launch_rc, cw, sizeof cw);
    }
    if (!equal) {
        xmt_warn("%s: key %s is not tuned: %s; the program's own config is used", k->demangled,
                 key_text, cw);
        xmt_choice_outcome(&out->choice, XMT_OUTCOME_DECLINED, cw);
        out->storable = 0;
    }
}

uint64_t xmt_trial_family_id(const xmt_kernel *k, int device)
{
    char code[17];
    xmt_code_fingerprint(k, (CUdevice)device, code);
    const char *parts[] = {k->mangled, xmt_entry_pattern(k->entry), code};
    uint64_t h = 0xcbf29ce484222325ull ^ xmt_entry_fingerprint(k->entry);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (const char *p = parts[i] ? parts[i] : "";; p++) {
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
            if (!*p) break;
        }
    return h;
}

/* The faults the kernel's other keys had in this process, first in fl (the session skips
 * their families where they reach past this key's own config, trial's session_cands.c):
 * how many. Only for a session that runs the entry's candidates. */
static size_t inherited(const sess_t *c, uint64_t fid, xmt_tr_fault *fl)
{
    xmt_family_fault f[XMT_FAMILY_KEPT];
    size_t n = xmt_family_learned(fid, c->key_text, f, XMT_FAMILY_KEPT);
    for (size_t i = 0; i < n; i++) {
        fl[i].index = f[i].index;
        memcpy(fl[i].why, f[i].why, sizeof fl[i].why);
        memcpy(fl[i].key, f[i].key, sizeof fl[i].key);
    }
    if (n)
        xmt_verbose(1,
                    "%s: key %s: %zu candidate%s that faulted at the kernel's other keys skip%s "
                    "their fault families here",
                    c->k->demangled, c->key_text, n, n == 1 ? "" : "s", n == 1 ? "s" : "");
    return n;
}

void xmt_trial_learn_record(const xmt_kernel *k, int device, const xmt_choice *ch,
                            const char *key_text)
{
    if (!ch->faults[0]) return;
    uint64_t fid = xmt_trial_family_id(k, device);
    char key[XMT_FAMILY_TEXT];
    snprintf(key, sizeof key, "%.120s, in an earlier run", key_text);
    for (const char *p = ch->faults; *p;) {
        char *end = NULL;
        long i = strtol(p, &end, 10);
        if (end == p) break;
        xmt_family_learn(fid, i, "faulted in the trial helper in an earlier run (its key's record)",
                         key);
        p = *end ? end + 1 : end;
    }
}

static CUresult fill_program(const xmt_staging *st, const void *ud)
{
    (void)ud;
    return xmt_stage_refill(st);
}

/* This key's own faults (fl[0..n)) go with its record, as "0 35": a later process skips
 * their families at the kernel's other keys (xmt_trial_learn_record). */
static void faults_text(xmt_choice *ch, const xmt_tr_fault *fl, size_t n)
{
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        char one[24];
        int w = snprintf(one, sizeof one, "%s%ld", at ? " " : "", fl[i].index);
        if (w <= 0 || at + (size_t)w >= sizeof ch->faults) break;
        memcpy(ch->faults + at, one, (size_t)w + 1);
        at += (size_t)w;
    }
}

/* The attempts of one session: a helper each, until it decides, a fault is retried without
 * its candidate, or it cannot run. 1 decided (*out), -1 the helper failed to start, 0 it
 * cannot run there (why). */
static int run_attempts(const sess_t *c, xmt_trial_outcome *out, char *why, size_t cap)
{
    xmt_kernel *k = c->k;
    const xmt_launch *l = c->l;
    const xmt_launch_view *v = c->v;
    const char *key_text = c->key_text;
    int device = c->device;
    xmt_staging *stp = c->st;
    int runs = !c->verify_only && !c->recheck && !c->only;       /* the entry's candidates */
    if (!c->verify_only && !c->recheck) xmt_trial_spare(device); /* its candidates may fault */
    xmt_tr_fault *fl = calloc(XMT_TRIAL_MAX_FAULTS + XMT_FAMILY_KEPT, sizeof *fl);
    uint64_t fid = runs && fl ? xmt_trial_family_id(k, device) : 0;
    /* nf: faults in fl, the first ninh the kernel's other keys' (not counted against
     * XMT_TRIAL_MAX_FAULTS) */
    size_t ninh = runs && fl ? inherited(c, fid, fl) : 0, nf = ninh;
    int lost = 0, done = 0, in_place_first = 0, failed = 0;
    out->choice = (xmt_choice){.index = XMT_OWN_CONFIG};
    out->storable = out->uninformative = 0;
    out->launched = 0;
    while (fl && !done) {
        double r0 = xmt_now_ms();
        CUresult fr = c->fill(stp, c->fill_ud);
        size_t len = 0;
        char rw[200] = "";
        char *text = request_text(c, fl, nf, in_place_first, c->staging_ms + xmt_now_ms() - r0,
                                  &len, rw, sizeof rw);
        int fds[3], nfds = 0;
        fds[nfds++] = text ? xmt_memfd_of("xmatune-request", text, len) : -1;
        fds[nfds++] = xmt_memfd_of("xmatune-image", c->img->bytes, c->img->size);
        if (stp->fd >= 0) fds[nfds++] = stp->fd;
        xmt_tp_tune t = {text ? len : 0, c->img->size, stp->fd >= 0 ? stp->bytes : 0};
        free(text);
        xmt_tp_result res;
        if (fr != CUDA_SUCCESS) {
            char b[32];
            snprintf(why, cap, "its memory cannot be staged for the helper (%s)",
                     xmt_cu_name(fr, b, sizeof b));
        } else if (fds[0] < 0 || fds[1] < 0) {
            snprintf(why, cap, "the request cannot be written%s%s%s", rw[0] ? " (" : "", rw,
                     rw[0] ? ")" : "");
        }
        int a = fr != CUDA_SUCCESS || fds[0] < 0 || fds[1] < 0
                    ? ATTEMPT_NO_HELPER
                    : attempt(device, fds, nfds, &t, &res, why, cap);
        if (fds[0] >= 0) close(fds[0]);
        if (fds[1] >= 0) close(fds[1]);
        if (a == ATTEMPT_HELPER_FAILED) failed = 1;
        if (a == ATTEMPT_NO_HELPER || a == ATTEMPT_HELPER_FAILED) break;
        if (a == ATTEMPT_LOST && ++lost < 2) continue;
        if (a == ATTEMPT_LOST) {
            xmt_warn("%s: key %s is not tuned: %s; the program's own config is used", k->demangled,
                     key_text, why);
            xmt_choice_outcome(&out->choice, XMT_OUTCOME_FAULTED, why);
            done = 1;
        } else if (a == ATTEMPT_FAULT && res.culprit_unsorted && !in_place_first) {
            /* it may have read the poison in outputs the own config updates in place: the
             * next helper asks which those are before any candidate runs */
            in_place_first = 1;
            xmt_verbose(1,
                        "%s: candidate %lld for key %s faulted from outputs poisoned before "
                        "the in-place check; trying again with the check first",
                        k->demangled, (long long)res.culprit, key_text);
        } else if (a == ATTEMPT_FAULT && nf - ninh < XMT_TRIAL_MAX_FAULTS) {
            fl[nf].index = (long)res.culprit;
            fault_why(&res, fl[nf].why, sizeof fl[nf].why);
            fl[nf].key[0] = 0;
            xmt_verbose(1, "%s: candidate %ld for key %s %s; trying the others in a new helper",
                        k->demangled, fl[nf].index, key_text, fl[nf].why);
            /* the kernel's other keys skip its family too (family.h) */
            if (runs) xmt_family_learn(fid, fl[nf].index, fl[nf].why, key_text);
            nf++;
        } else {
            if (a == ATTEMPT_DONE && res.status) { /* the helper could not set it up */
                snprintf(why, cap, "the trial helper could not run it: %s", res.why);
                out->declined = 1;
                break;
            }
            if (a == ATTEMPT_DONE) {
                take_result(k, l, v, stp, key_text, device, &res, c->may_launch, c->after, out);
            } else {
                xmt_warn("%s: key %s is not tuned: more than %d of its candidates faulted in the "
                         "trial helper; the program's own config is used",
                         k->demangled, key_text, XMT_TRIAL_MAX_FAULTS);
                char fw[80];
                snprintf(fw, sizeof fw, "more than %d of its candidates faulted",
                         XMT_TRIAL_MAX_FAULTS);
                xmt_choice_outcome(&out->choice, XMT_OUTCOME_FAULTED, fw);
            }
            done = 1;
        }
    }
    out->choice.faults[0] = 0;
    if (done) faults_text(&out->choice, fl + ninh, nf - ninh);
    free(fl);
    return done ? 1 : failed ? -1 : 0;
}

int xmt_trial_session(const xmt_session_req *rq, int may_launch, xmt_trial_outcome *out, char *why,
                      size_t cap)
{
    xmt_kernel *k = rq->k;
    const xmt_launch *l = rq->l;
    const xmt_launch_view *v = rq->v;
    const char *key_text = rq->key_text, *record_data = rq->record_data;
    int device = rq->device, verify_only = rq->verify_only, from_cache = rq->from_cache,
        recheck = rq->recheck;
    const xmt_candidate *only = rq->only;
    long only_index = rq->only_index;
    xmt_image img;
    out->declined = 0;
    if (!xmt_trial_admissible(k, l, v, &img, why, cap)) return out->declined = 1, 0;
    /* the request's own rule (the helper's decoder refuses it too): declined before
     * anything is staged */
    xmt_tr_candidate oc;
    if (only) tr_candidate(only, &oc);
    if (only && xmt_tr_args_check(&oc, k->nparams, k->sizes, why, cap) != 0)
        return out->declined = 1, 0;
    double t0 = xmt_now_ms();
    xmt_staging st = {.fd = -1};
    if (xmt_stage(k, v, device, &st, why, cap) != 0) {
        xmt_unstage(&st);
        out->declined = 1;
        return 0;
    }
    xmt_tr_globals globals;
    int g = xmt_tr_globals_of(&img, &globals, why, cap);
    double staging_ms = xmt_now_ms() - t0;
    if (g != 0) {
        xmt_unstage(&st);
        return 0;
    }
    sess_t c = {k,           l,          v,           key_text,     device,     &st,        &img,
                &globals,    staging_ms, verify_only, only,         only_index, from_cache, recheck,
                record_data, may_launch, NULL,        fill_program, NULL,       rq->decided};
    int r = run_attempts(&c, out, why, cap);
    xmt_tr_globals_free(&globals);
    xmt_unstage(&st);
    out->spent_ms = xmt_now_ms() - t0;
    return r;
}

/* ---- a snapshot for a verification off the program's path (docs/cache.md, "Trust") ------ */

/* A snapshot's copy into an attempt's staging (background tuning's refill). */
static CUresult fill_snap(const xmt_staging *st, const void *ud)
{
    const xmt_trial_snap *s = ud;
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; r == CUDA_SUCCESS && st->bytes && i < s->nregs; i++)
        r = xmt_drv.cuMemcpyDtoD(st->va + xmt_staged_at(st, s->regs[i].base),
                                 s->copy + xmt_snap_off(s, i), s->regs[i].bytes);
    return r;
}

/* The fidelity check of background tuning (check()'s twin): what the program's own launch
 * left, as its snapshot copied it after the launch, against the helper's reference in the
 * staging. 1 when equal (within the entry's tolerance, where it has one). */
/* The comparisons name the program's addresses: the snapshot's copy of them instead. */
static void translate_after(const xmt_trial_snap *s, xmt_gc_cmp *c, size_t n)
{
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < s->nregs; i++)
            if (c[j].got >= s->regs[i].base && c[j].got < s->regs[i].base + s->regs[i].bytes) {
                c[j].got = s->after + xmt_snap_off(s, i) + (c[j].got - s->regs[i].base);
                break;
            }
}

static int check_after(xmt_kernel *k, const xmt_launch_view *v, const xmt_staging *st,
                       const xmt_trial_snap *s, const char *key_text, int device, char *why,
                       size_t cap)
{
    CUresult r = s->after_ev ? xmt_drv.cuEventSynchronize(s->after_ev) : CUDA_ERROR_NOT_READY;
    if (r != CUDA_SUCCESS) { /* as a failed comparison: said and logged */
        char b[32];
        snprintf(why, cap, "the comparison failed (%s)", xmt_cu_name(r, b, sizeof b));
        if (xmt_log_enabled())
            xmt_log_event(
                xmt_ev_trial_check(k->mangled, k->demangled, key_text, device, 0, 0, 0, why));
        return 0;
    }
    return compare_ref(k, v, st, s, NULL, key_text, device, why, cap);
}

/* The worker's half of a snapshot: the copy waited for, the staging made and filled from
 * it. CUDA_SUCCESS, or the error with why. */
static CUresult snap_stage(xmt_trial_snap *s, char *why, size_t cap)
{
    CUresult r = xmt_drv.cuCtxSetCurrent(s->ctx);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuEventSynchronize(s->copied);
    if (r != CUDA_SUCCESS) {
        snprintf(why, cap, "its snapshot failed");
        return r;
    }
    double t0 = xmt_now_ms();
    s->st.regs = s->regs; /* the staging owns them from here (unstage frees them) */
    s->st.nregs = s->nregs;
    if (xmt_stage_alloc(&s->st, s->device, why, cap) != 0) return CUDA_ERROR_INVALID_VALUE;
    r = fill_snap(&s->st, s);
    s->snap_ms += xmt_now_ms() - t0;
    if (r != CUDA_SUCCESS) snprintf(why, cap, "its snapshot cannot be staged");
    return r;
}

/* The worker's opening of a snapshot's session (verification or tuning): the kernel's
 * image (its module unloaded meanwhile: nothing to run with), the staging made and filled,
 * the module's globals. 1, or 0 with why. */
static int snap_open(xmt_trial_snap *s, xmt_image *img, xmt_tr_globals *globals, char *why,
                     size_t cap)
{
    if (atomic_load(&s->k->serial) != s->serial || !xmt_trial_image_of(s->k, img)) {
        snprintf(why, cap, "its module is gone");
        return 0;
    }
    if (snap_stage(s, why, cap) != CUDA_SUCCESS) return 0;
    return xmt_tr_globals_of(img, globals, why, cap) == 0;
}

/* What a session on snapshot s has whatever it is for: the launch, its key, the staging the
 * worker filled (snap_open), the image and globals; the caller sets the rest. */
static sess_t snap_sess(xmt_trial_snap *s, const char *key_text, const xmt_image *img,
                        const xmt_tr_globals *globals)
{
    return (sess_t){.k = s->k,
                    .l = &s->l,
                    .v = &s->v,
                    .key_text = key_text,
                    .device = s->device,
                    .st = &s->st,
                    .img = img,
                    .globals = globals,
                    .staging_ms = s->snap_ms};
}

int xmt_trial_verify_snap(xmt_trial_snap *s, const char *key_text, const xmt_candidate *only,
                          long only_index, const char *record_data, xmt_trial_outcome *out,
                          char *why, size_t cap)
{
    xmt_kernel *k = s->k;
    memset(out, 0, sizeof *out);
    out->choice = (xmt_choice){.index = XMT_OWN_CONFIG};
    double t0 = xmt_now_ms();
    xmt_image img;
    xmt_tr_globals globals;
    if (!snap_open(s, &img, &globals, why, cap)) return 0;
    sess_t c = snap_sess(s, key_text, &img, &globals);
    c.verify_only = 1;
    c.only = only;
    c.only_index = only_index;
    c.from_cache = 1;
    c.record_data = record_data;
    size_t len = 0;
    char *text = request_text(&c, NULL, 0, 0, s->snap_ms, &len, why, cap);
    xmt_tr_globals_free(&globals);
    int fds[3], nfds = 0;
    fds[nfds++] = text ? xmt_memfd_of("xmatune-request", text, len) : -1;
    fds[nfds++] = xmt_memfd_of("xmatune-image", img.bytes, img.size);
    if (s->st.fd >= 0) fds[nfds++] = s->st.fd;
    xmt_tp_tune t = {text ? len : 0, img.size, s->st.fd >= 0 ? s->st.bytes : 0};
    free(text);
    xmt_tp_result res;
    int a = fds[0] < 0 || fds[1] < 0 ? ATTEMPT_NO_HELPER
                                     : attempt(s->device, fds, nfds, &t, &res, why, cap);
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    out->spent_ms = xmt_now_ms() - t0;
    if (a == ATTEMPT_NO_HELPER || a == ATTEMPT_HELPER_FAILED || a == ATTEMPT_LOST ||
        (a == ATTEMPT_DONE && res.status))
        return 0;             /* nothing learned: not a failure of the record */
    if (a == ATTEMPT_FAULT) { /* the cached winner faulted on the program's data */
        char fw[200];
        fault_why(&res, fw, sizeof fw);
        xmt_choice_outcome(&out->choice, XMT_OUTCOME_FAILED, fw);
        return 1;
    }
    take_result(k, &s->l, &s->v, &s->st, key_text, s->device, &res, 0, NULL, out);
    return 1;
}

int xmt_trial_tune_snap(xmt_trial_snap *s, const char *key_text, int verify_only,
                        const char *decided, xmt_trial_outcome *out, char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    out->choice = (xmt_choice){.index = XMT_OWN_CONFIG};
    double t0 = xmt_now_ms();
    xmt_image img;
    xmt_tr_globals globals;
    if (!snap_open(s, &img, &globals, why, cap)) return 0;
    sess_t c = snap_sess(s, key_text, &img, &globals);
    c.verify_only = verify_only;
    c.only_index = -1;
    c.after = s->after_ev ? s : NULL;
    c.fill = fill_snap;
    c.fill_ud = s;
    c.decided = decided && decided[0] ? decided : NULL;
    if (!verify_only) xmt_trial_prog_begin(decided);
    int r = run_attempts(&c, out, why, cap);
    if (!verify_only) xmt_trial_prog_end();
    xmt_tr_globals_free(&globals);
    out->spent_ms = xmt_now_ms() - t0;
    return r;
}
