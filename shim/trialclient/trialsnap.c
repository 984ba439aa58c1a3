/*
 * trialsnap: a snapshot of what a launch reaches (see trialsnap.h).
 */
#include "trialsnap.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "driver.h"
#include "log.h"
#include "logevent.h"
#include "options.h"
#include "trialmod.h"

static const char *const step_names[SNAP_STEPS] = {"admit", "reach", "alloc",
                                                   "copy",  "event", "after"};

/* Can the helper make this launch as the program did? A plain launch, or an Ex launch
 * without attributes (clusters, cooperative groups, priorities are not replayed yet). */
static int replayable(const xmt_launch *l)
{
    switch (l->kind) {
    case XMT_K_LAUNCH: return 1;
    case XMT_K_EX: return l->cfg && l->cfg->numAttrs == 0;
    case XMT_K_COOP: return 0;
    }
    return 0;
}

int xmt_trial_admissible(const xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                         xmt_image *img, char *why, size_t cap)
{
    if (!replayable(l)) {
        snprintf(why, cap, "its launch has attributes the helper does not replay (%s)",
                 l->kind == XMT_K_COOP ? "cooperative" : "cuLaunchKernelEx attributes");
        return 0;
    }
    if (!k->params_known) {
        snprintf(why, cap, "the driver did not tell its parameters");
        return 0;
    }
    for (size_t i = 0; i < k->nparams; i++) {
        unsigned long long h = 0;
        if (k->sizes[i] != 8 || !v->params[i]) continue;
        memcpy(&h, v->params[i], 8);
        if (xmt_modload_is_texobj(h)) {
            snprintf(why, cap,
                     "its parameter %zu is a texture or surface object, which the helper "
                     "cannot see",
                     i);
            return 0;
        }
    }
    if (!xmt_trial_image_of(k, img)) {
        snprintf(why, cap, "the shim did not see its module load (no image to give the helper)");
        return 0;
    }
    return 1;
}

/* The contexts whose memory pool the worker made ready (xmt_trial_pool_ready). */
#define POOL_CTXS 8
static _Atomic(CUcontext) pools_ready[POOL_CTXS];

void xmt_trial_pool_ready(CUcontext ctx)
{
    for (int i = 0; i < POOL_CTXS; i++) {
        CUcontext none = NULL;
        if (atomic_load(&pools_ready[i]) == ctx ||
            atomic_compare_exchange_strong(&pools_ready[i], &none, ctx))
            return;
    }
}

/* Whether a stream-ordered allocation in ctx is cheap now: its pool made ready. The first one
 * of a process cost 4 to 12 ms on an H100 whatever its size (1 MiB to 512 MiB; later ones 3
 * to 125 µs: docs/benchmarks.md, "Never slower"), and a key's first launch can come before
 * the worker's warm-up has ended (it is queued at the module load, which the runtime makes
 * lazily, at the first launch): until then a snapshot takes the program's allocator, whose
 * first call the program has paid for. */
static int pool_ready(CUcontext ctx)
{
    for (int i = 0; i < POOL_CTXS; i++) {
        CUcontext c = atomic_load(&pools_ready[i]);
        if (!c) return 0;
        if (c == ctx) return 1;
    }
    return 0;
}

xmt_trial_snap *xmt_trial_snapshot(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                                   int device, char *why, size_t cap)
{
    double t0 = xmt_now_ms(), ts = t0, step[SNAP_STEPS] = {0};
    xmt_image img;
    if (!xmt_trial_admissible(k, l, v, &img, why, cap)) return NULL;
    if (!xmt_drv.cuCtxSetCurrent || !xmt_drv.cuCtxGetCurrent || !xmt_drv.cuMemCreate) {
        snprintf(why, cap, "the driver has no cuCtxSetCurrent or cuMemCreate");
        return NULL;
    }
#define STEP(i) (step[i] = (xmt_now_ms() - ts) * 1000.0, ts = xmt_now_ms())
    STEP(S_ADMIT);
    xmt_trial_snap *s = calloc(1, sizeof *s);
    size_t total = 0;
    for (size_t i = 0; s && i < k->nparams; i++)
        total += k->sizes[i];
    if (s) s->args = malloc(total ? total : 1);
    if (!s || !s->args || k->nparams > XMT_KERNEL_MAX_PARAMS) {
        snprintf(why, cap, "out of memory");
        if (s) free(s->args);
        free(s);
        return NULL;
    }
    s->st.fd = -1;
    for (size_t i = 0, at = 0; i < k->nparams; at += k->sizes[i], i++) {
        memcpy(s->args + at, v->params[i], k->sizes[i]);
        s->argp[i] = s->args + at;
    }
    s->k = k;
    s->serial = atomic_load(&k->serial);
    s->device = device;
    s->l = *l;
    s->l.kind = XMT_K_LAUNCH; /* admissible: no attributes to replay */
    s->l.params = s->argp;
    s->l.extra = NULL;
    s->l.cfg = NULL;
    if (v->attrs) s->attrs = *v->attrs;
    s->v = (xmt_launch_view){s->argp, k->nparams, v->orig, v->attrs ? &s->attrs : NULL};
    /* what the launch reaches (the driver's ranges: no GPU wait), within the scratch limit */
    size_t reach = 0, free_b = 0, tot = 0;
    if (xmt_drv.cuMemGetInfo) xmt_drv.cuMemGetInfo(&free_b, &tot);
    double limit = xmt_opt.scratch_mb >= 0 ? xmt_opt.scratch_mb * 1048576.0 : (double)free_b / 4;
    CUresult r = xmt_drv.cuCtxGetCurrent(&s->ctx);
    int f = r == CUDA_SUCCESS
                ? xmt_protect_find(k, &s->v, (size_t)limit, &s->regs, &s->nregs, &reach, why, cap)
                : -1;
    if (f == -2)
        snprintf(why, cap, "its memory (%.1f MiB) is more than a snapshot may take (%.1f MiB)",
                 (double)reach / 1048576.0, limit / 1048576.0);
    if (f != 0) r = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; r == CUDA_SUCCESS && i < s->nregs; i++)
        s->bytes += (s->regs[i].bytes + 255) & ~(size_t)255;
    STEP(S_REACH);
    /* stream-ordered, so the launch's own stream orders it before the launch and the
     * program's thread does not wait for the GPU; a device without a memory pool gets a
     * plain allocation */
    CUstream stream = xmt_launch_stream(l);
    if (r == CUDA_SUCCESS && s->bytes && xmt_drv.cuMemAllocAsync && pool_ready(s->ctx) &&
        xmt_drv.cuMemAllocAsync(&s->copy, s->bytes, stream) == CUDA_SUCCESS)
        s->copy_async = 1;
    else if (r == CUDA_SUCCESS && s->bytes)
        r = xmt_drv.cuMemAlloc(&s->copy, s->bytes);
    STEP(S_ALLOC);
    for (size_t i = 0, at = 0; r == CUDA_SUCCESS && i < s->nregs;
         at += (s->regs[i].bytes + 255) & ~(size_t)255, i++)
        r = xmt_drv.cuMemcpyDtoDAsync(s->copy + at, s->regs[i].base, s->regs[i].bytes, stream);
    STEP(S_COPY);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuEventCreate(&s->copied, 0);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuEventRecord(s->copied, stream);
    STEP(S_EVENT);
#undef STEP
    memcpy(s->step_us, step, sizeof step);
    if (r != CUDA_SUCCESS) {
        if (!why[0]) {
            char b[32];
            snprintf(why, cap, "its memory cannot be copied (%s)", xmt_cu_name(r, b, sizeof b));
        }
        xmt_trial_snap_free(s);
        return NULL;
    }
    s->snap_ms = xmt_now_ms() - t0;
    return s;
}

int xmt_trial_snap_after(xmt_trial_snap *s, const xmt_launch *l)
{
    double t0 = xmt_now_ms();
    CUstream stream = xmt_launch_stream(l);
    CUresult r = CUDA_SUCCESS;
    if (xmt_drv.cuEventCreate(&s->launched, 0) == CUDA_SUCCESS &&
        xmt_drv.cuEventRecord(s->launched, stream) != CUDA_SUCCESS) {
        xmt_drv.cuEventDestroy(s->launched);
        s->launched = NULL;
    }
    if (s->bytes && xmt_drv.cuMemAllocAsync && pool_ready(s->ctx) &&
        xmt_drv.cuMemAllocAsync(&s->after, s->bytes, stream) == CUDA_SUCCESS)
        s->after_async = 1;
    else if (s->bytes)
        r = xmt_drv.cuMemAlloc(&s->after, s->bytes);
    for (size_t i = 0; r == CUDA_SUCCESS && i < s->nregs; i++)
        r = xmt_drv.cuMemcpyDtoDAsync(s->after + xmt_snap_off(s, i), s->regs[i].base,
                                      s->regs[i].bytes, stream);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuEventCreate(&s->after_ev, CU_EVENT_DISABLE_TIMING);
    if (r == CUDA_SUCCESS) r = xmt_drv.cuEventRecord(s->after_ev, stream);
    s->step_us[S_AFTER] = (xmt_now_ms() - t0) * 1000.0;
    return r == CUDA_SUCCESS ? 0 : -1;
}

double xmt_trial_snap_own_ms(const xmt_trial_snap *s)
{
    float ms = 0;
    if (!s->launched || !s->copied || !xmt_drv.cuEventQuery || !xmt_drv.cuEventElapsedTime ||
        xmt_drv.cuCtxSetCurrent(s->ctx) != CUDA_SUCCESS)
        return -2;
    CUresult r = xmt_drv.cuEventQuery(s->launched);
    if (r == CUDA_ERROR_NOT_READY) return -1;
    return r == CUDA_SUCCESS && xmt_drv.cuEventElapsedTime(&ms, s->copied, s->launched) == 0 ? ms
                                                                                             : -2;
}

void xmt_trial_snap_log(const xmt_trial_snap *s, const char *key_text, const char *purpose)
{
    if (!xmt_log_enabled()) return;
    json_t *steps = json_object();
    double all = 0;
    for (int i = 0; steps && i < SNAP_STEPS; i++) {
        json_object_set_new(steps, step_names[i], json_real(s->step_us[i]));
        all += s->step_us[i];
    }
    xmt_log_event(xmt_ev_snapshot(s->k->mangled, s->k->demangled, key_text, s->device, purpose,
                                  s->bytes, s->nregs, steps, all));
}

void xmt_trial_snap_drop(xmt_trial_snap *s)
{
    if (!s) return;
    xmt_protect_free(s->regs, s->nregs); /* never staged: the regions are still its own */
    free(s->args);
    free(s);
}

void xmt_trial_snap_free(xmt_trial_snap *s)
{
    if (!s) return;
    if (s->ctx && xmt_drv.cuCtxSetCurrent) xmt_drv.cuCtxSetCurrent(s->ctx);
    if (s->copied) {
        xmt_drv.cuEventSynchronize(s->copied); /* the copies are done with their memory */
        xmt_drv.cuEventDestroy(s->copied);
    }
    if (s->after_ev) {
        xmt_drv.cuEventSynchronize(s->after_ev);
        xmt_drv.cuEventDestroy(s->after_ev);
    }
    if (s->launched) xmt_drv.cuEventDestroy(s->launched);
    if (s->copy && s->copy_async && xmt_drv.cuMemFreeAsync)
        xmt_drv.cuMemFreeAsync(s->copy, NULL);
    else if (s->copy)
        xmt_drv.cuMemFree(s->copy);
    if (s->after && s->after_async && xmt_drv.cuMemFreeAsync)
        xmt_drv.cuMemFreeAsync(s->after, NULL);
    else if (s->after)
        xmt_drv.cuMemFree(s->after);
    if (!s->st.regs) xmt_protect_free(s->regs, s->nregs); /* else st's (snap_stage) */
    xmt_unstage(&s->st);
    free(s->args);
    free(s);
}
