/*
 * session: (moved from tuner.c)
 */
#include "session.h"

/* ---- timing helpers ----------------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double statistic(const double *t, int n, int mean)
{
    if (n <= 0) return INFINITY;
    if (mean) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += t[i];
        return s / n;
    }
    double tmp[MAX_ITERATIONS];
    memcpy(tmp, t, (size_t)n * sizeof *t);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* ---- one tuning session -------------------------------------------------------------------- */

enum { C_OK = 0, C_SKIPPED, C_REJECTED };

typedef struct {
    xmt_candidate c;
    long index; /* XMT_OWN_CONFIG for the program's own */
    int status;
    char why[300];
    double *times;
    int ntimes;
    double stat;
    CUevent start, end;
} cand_t;

typedef struct {
    xmt_buffer b;
    CUdeviceptr ptr, snap;
    uint8_t *host_ref, *host_got;
} buf_t;

typedef struct {
    xmt_kernel *k;
    const xmt_launch *l;
    const xmt_launch_view *v;
    CUstream s;
    buf_t *bufs;
    size_t nbufs;
    int snapshots_taken;
    CUdeviceptr flush;
    size_t flush_bytes;
    CUresult error; /* first driver failure; ends the session */
    const char *error_at;
} session_t;

#define TRY(sess, call, what)                                                                      \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            if ((sess)->error == CUDA_SUCCESS) {                                                   \
                (sess)->error = r_;                                                                \
                (sess)->error_at = (what);                                                         \
            }                                                                                      \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* Puts the declared buffers into the state every run starts from: restore buffers (and
 * reset ones, when snapshots exist for the final put-back only) from their snapshots,
 * reset buffers zeroed, verify-only buffers poisoned when asked; and flushes L2. */
static int prepare(session_t *S, int poison, int flush)
{
    for (size_t i = 0; i < S->nbufs; i++) {
        buf_t *b = &S->bufs[i];
        if (b->b.roles & XMT_BUF_RESTORE)
            TRY(S, xmt_drv.cuMemcpyDtoDAsync(b->ptr, b->snap, b->b.bytes, S->s), "restore");
        else if (b->b.roles & XMT_BUF_RESET)
            TRY(S, xmt_drv.cuMemsetD8Async(b->ptr, 0, b->b.bytes, S->s), "reset_to_zero");
        else if (poison && (b->b.roles & XMT_BUF_VERIFY))
            TRY(S, xmt_drv.cuMemsetD8Async(b->ptr, POISON, b->b.bytes, S->s), "poison");
    }
    if (flush && S->flush)
        TRY(S, xmt_drv.cuMemsetD8Async(S->flush, 0, S->flush_bytes, S->s), "l2 flush");
    return 0;
fail:
    return -1;
}

/* Puts every declared buffer back as the program left it. */
static int put_back(session_t *S)
{
    if (!S->snapshots_taken) return 0;
    for (size_t i = 0; i < S->nbufs; i++)
        if (S->bufs[i].snap)
            TRY(S,
                xmt_drv.cuMemcpyDtoDAsync(S->bufs[i].ptr, S->bufs[i].snap, S->bufs[i].b.bytes,
                                          S->s),
                "put back");
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    return 0;
fail:
    return -1;
}

/* One launch of candidate c (the program's own when c->index is XMT_OWN_CONFIG). Returns
 * 0 when it ran; 1 when the driver refused it (c is then skipped, saying why, and the
 * session goes on without it); -1 when the session must end: the program's own config
 * failed, or a launch failed in a way that may have left the context broken. */
static int run_candidate(session_t *S, cand_t *c)
{
    CUresult r = launch_as(S->k, S->l, c->index == XMT_OWN_CONFIG ? NULL : &c->c);
    if (r == CUDA_SUCCESS) return 0;
    if (c->index != XMT_OWN_CONFIG) {
        char b[32];
        c->status = C_SKIPPED;
        snprintf(c->why, sizeof c->why, "launch failed: %s", xmt_cu_name(r, b, sizeof b));
        if (refused(r)) return 1;
    }
    if (S->error == CUDA_SUCCESS) {
        S->error = r;
        S->error_at =
            c->index == XMT_OWN_CONFIG ? "the program's own config" : "a candidate's launch";
    }
    return -1;
}

/* One run of a candidate for verification; reads its verify buffers into host memory.
 * Returns as run_candidate, and -1 on a failed copy. */
static int verify_run(session_t *S, cand_t *c, int into_ref)
{
    if (prepare(S, 1, 0) != 0) return -1;
    int r = run_candidate(S, c);
    if (r != 0) return r;
    for (size_t i = 0; i < S->nbufs; i++) {
        buf_t *b = &S->bufs[i];
        if (b->b.roles & XMT_BUF_VERIFY)
            TRY(S,
                xmt_drv.cuMemcpyDtoHAsync(into_ref ? b->host_ref : b->host_got, b->ptr, b->b.bytes,
                                          S->s),
                "verify copy");
    }
    TRY(S, xmt_drv.cuStreamSynchronize(S->s), "synchronize");
    return 0;
fail:
    return -1;
}

static void own_label(const xmt_launch *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u", l->grid[0], l->grid[1],
             l->grid[2], l->block[0], l->block[1], l->block[2], l->shared);
}

static int same_as_own(const xmt_candidate *c, const xmt_launch *l)
{
    return c->nargs == 0 && c->dims.grid.x == l->grid[0] && c->dims.grid.y == l->grid[1] &&
           c->dims.grid.z == l->grid[2] && c->dims.block.x == l->block[0] &&
           c->dims.block.y == l->block[1] && c->dims.block.z == l->block[2] &&
           c->dims.shared == l->shared;
}

/* Benchmarks the candidates of one key. Fills *choice with the winner (the program's own
 * config on any failure). The event for the log is built on the way. */
static void tune_key(xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                     const char *key_text, int device, int verify_only, const xmt_candidate *only,
                     xmt_choice *choice)
{
    const xmt_entry *e = k->entry;
    double t0 = now_ms();
    session_t S = {.k = k, .l = l, .v = v, .s = xmt_launch_stream(l)};
    int warmup = xmt_entry_warmup(e) >= 0 ? xmt_entry_warmup(e) : xmt_opt.warmup;
    int iterations = xmt_entry_iterations(e) >= 0 ? xmt_entry_iterations(e) : xmt_opt.iterations;
    if (iterations < 1) iterations = 1;
    if (iterations > MAX_ITERATIONS) iterations = MAX_ITERATIONS;
    int mean = xmt_entry_use_mean(e) || xmt_opt.statistic == XMT_STAT_MEAN;
    int flush = xmt_entry_l2_flush(e) >= 0 ? xmt_entry_l2_flush(e) : xmt_opt.l2_flush;
    double budget = xmt_entry_budget_ms(e) >= 0 ? xmt_entry_budget_ms(e) : xmt_opt.budget_ms;
    int tolerance = 0, any_verify = 0;

    choice->index = XMT_OWN_CONFIG;
    own_label(l, choice->label, sizeof choice->label);
    choice->time_ms = 0;

    size_t n = only ? 1 : xmt_entry_ncandidates(e);
    cand_t *cands = calloc(n + 1, sizeof *cands);
    double *times = calloc((n + 1) * (size_t)iterations, sizeof *times);
    size_t nb = xmt_entry_nbuffers(e);
    S.bufs = calloc(nb ? nb : 1, sizeof *S.bufs);
    if (!cands || !times || !S.bufs) {
        free(cands);
        free(times);
        free(S.bufs);
        xmt_warn("%s: out of memory while tuning; the program's own config is used", k->demangled);
        return;
    }

    /* The candidates: the program's own first, then the policy's. */
    cands[0].index = XMT_OWN_CONFIG;
    own_label(l, cands[0].c.label, sizeof cands[0].c.label);
    cands[0].times = times;
    int allowed_dyn = k->max_dynamic_shared;
    if (xmt_drv.cuFuncGetAttribute && !k->is_cukernel) {
        int a = 0;
        if (xmt_drv.cuFuncGetAttribute(&a, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l->f) ==
            CUDA_SUCCESS)
            allowed_dyn = a;
    }
    if (allowed_dyn < (int)l->shared) allowed_dyn = (int)l->shared;
    size_t valid = 0;
    for (size_t i = 0; i < n; i++) {
        cand_t *c = &cands[i + 1];
        c->index = only ? XMT_PIN_CONFIG : (long)i;
        c->times = times + (i + 1) * (size_t)iterations;
        if (only) c->c = *only;
        if (!only && xmt_entry_candidate(e, i, v, &c->c) != 1) {
            c->status = C_SKIPPED;
            snprintf(c->why, sizeof c->why, "%s", c->c.why);
        } else if (allowed_dyn > 0 && c->c.dims.shared > (unsigned)allowed_dyn) {
            c->status = C_SKIPPED;
            snprintf(c->why, sizeof c->why,
                     "shared %u > %d bytes the program opted the kernel into", c->c.dims.shared,
                     allowed_dyn);
        } else if (same_as_own(&c->c, l)) {
            c->status = C_SKIPPED;
            snprintf(c->why, sizeof c->why, "same as the program's own config");
        } else {
            valid++;
        }
    }

    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    int mode_swapped = 0;
    xmt_in_shim++;
    if (valid == 0) goto decide; /* nothing else to try: the program's own config stays */

    if (xmt_drv.cuThreadExchangeStreamCaptureMode &&
        xmt_drv.cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS)
        mode_swapped = 1;

    /* Buffers: evaluate, then snapshot every one before anything runs. */
    for (size_t i = 0; i < nb; i++) {
        buf_t *b = &S.bufs[S.nbufs];
        int r = xmt_entry_buffer(e, i, v, &b->b);
        if (r == 0 || (r == 1 && b->b.bytes == 0)) continue;
        if (r < 0 || b->b.param >= k->nparams || !v->params[b->b.param]) {
            S.error = CUDA_ERROR_INVALID_VALUE;
            S.error_at = "buffer size";
            goto fail;
        }
        memcpy(&b->ptr, v->params[b->b.param], sizeof b->ptr);
        if (b->b.roles & XMT_BUF_VERIFY) {
            any_verify = 1;
            tolerance |= b->b.rtol != 0 || b->b.atol != 0;
            b->host_ref = malloc(b->b.bytes);
            b->host_got = malloc(b->b.bytes);
            if (!b->host_ref || !b->host_got) {
                S.error = CUDA_ERROR_OUT_OF_MEMORY;
                S.error_at = "host verify buffer";
                S.nbufs++;
                goto fail;
            }
        }
        S.nbufs++;
        TRY(&S, xmt_drv.cuMemAlloc(&b->snap, b->b.bytes), "snapshot alloc");
        TRY(&S, xmt_drv.cuMemcpyDtoDAsync(b->snap, b->ptr, b->b.bytes, S.s), "snapshot");
        S.snapshots_taken = 1;
    }
    if (flush && v->attrs && v->attrs->l2_bytes > 0) {
        S.flush_bytes = (size_t)v->attrs->l2_bytes * 2;
        TRY(&S, xmt_drv.cuMemAlloc(&S.flush, S.flush_bytes), "l2 flush alloc");
    }

    /* Verify: every candidate once against the program's own config on the same inputs. */
    if (any_verify) {
        if (verify_run(&S, &cands[0], 1) != 0) goto fail;
        for (size_t i = 1; i <= n; i++) {
            cand_t *c = &cands[i];
            if (c->status != C_OK) continue;
            int r = verify_run(&S, c, 0);
            if (r < 0) goto fail;
            if (r > 0) continue;
            for (size_t j = 0; j < S.nbufs; j++) {
                buf_t *bf = &S.bufs[j];
                if ((bf->b.roles & XMT_BUF_VERIFY) &&
                    compare(&bf->b, bf->host_ref, bf->host_got, c->why, sizeof c->why)) {
                    c->status = C_REJECTED;
                    break;
                }
            }
        }
    }
    if (verify_only) goto measured; /* a pin or a single config: verified, not benchmarked */

    /* Warm the GPU up by time with the program's own config, so the clock is up before
     * the first candidate is timed. */
    if (xmt_opt.warmup_ms > 0) {
        double w0 = now_ms();
        for (int i = 0; i < 100000; i++) {
            if (prepare(&S, 0, 0) != 0 || run_candidate(&S, &cands[0]) != 0) goto fail;
            if (i % 4 == 3) {
                TRY(&S, xmt_drv.cuStreamSynchronize(S.s), "synchronize");
                if (now_ms() - w0 >= xmt_opt.warmup_ms) break;
            }
        }
    }

    /* Untimed warm-up runs of each candidate. */
    for (size_t i = 0; i <= n; i++) {
        cand_t *c = &cands[i];
        if (c->status != C_OK) continue;
        for (int w = 0; w < warmup && c->status == C_OK; w++)
            if (prepare(&S, 0, 0) != 0 || run_candidate(&S, c) < 0) goto fail;
    }

    /* Timed runs, round-robin so that clock drift favours no candidate; the starting
     * candidate rotates each round. */
    for (size_t i = 0; i <= n; i++)
        if (cands[i].status == C_OK) {
            TRY(&S, xmt_drv.cuEventCreate(&cands[i].start, CU_EVENT_DEFAULT), "event create");
            TRY(&S, xmt_drv.cuEventCreate(&cands[i].end, CU_EVENT_DEFAULT), "event create");
        }
    for (int it = 0; it < iterations; it++) {
        CUevent last = NULL;
        for (size_t j = 0; j <= n; j++) {
            cand_t *c = &cands[(j + (size_t)it) % (n + 1)];
            if (c->status != C_OK) continue;
            if (prepare(&S, 0, flush) != 0) goto fail;
            TRY(&S, xmt_drv.cuEventRecord(c->start, S.s), "event record");
            int r = run_candidate(&S, c);
            if (r < 0) goto fail;
            if (r > 0) continue;
            TRY(&S, xmt_drv.cuEventRecord(c->end, S.s), "event record");
            last = c->end;
        }
        if (last) TRY(&S, xmt_drv.cuEventSynchronize(last), "event synchronize");
        for (size_t j = 0; j <= n; j++) {
            cand_t *c = &cands[j];
            if (c->status != C_OK || c->ntimes != it) continue;
            float ms = 0;
            TRY(&S, xmt_drv.cuEventElapsedTime(&ms, c->start, c->end), "event elapsed");
            c->times[c->ntimes++] = ms;
        }
        if (budget >= 0 && now_ms() - t0 > budget)
            break; /* keep the best so far: every candidate has the same rounds */
    }

measured:
    if (put_back(&S) != 0) goto fail;
    goto decide;

fail : {
    char b[32];
    xmt_warn("%s: tuning stopped at %s (%s); the program's own config is used for key %s",
             k->demangled, S.error_at ? S.error_at : "?", xmt_cu_name(S.error, b, sizeof b),
             key_text);
    CUresult saved = S.error;
    S.error = CUDA_SUCCESS;
    if (put_back(&S) != 0)
        xmt_warn("%s: could not put the declared buffers back after a failure (%s)", k->demangled,
                 S.error_at);
    S.error = saved;
}

decide:
    if (S.error == CUDA_SUCCESS && valid > 0) {
        for (size_t i = 0; i <= n; i++) {
            cand_t *c = &cands[i];
            if (c->status == C_OK) c->stat = verify_only ? 0 : statistic(c->times, c->ntimes, mean);
        }
        cand_t *best = NULL;
        if (verify_only) {
            for (size_t i = 1; i <= n && !best; i++)
                if (cands[i].status == C_OK) best = &cands[i];
        } else {
            for (size_t i = 0; i <= n; i++)
                if (cands[i].status == C_OK && cands[i].ntimes > 0 &&
                    (!best || cands[i].stat < best->stat))
                    best = &cands[i];
        }
        if (best) {
            choice->index = best->index;
            snprintf(choice->label, sizeof choice->label, "%s", best->c.label);
            choice->time_ms = best->stat;
        }
    }

    /* Scratch memory is freed whatever happened. */
    for (size_t i = 0; i < S.nbufs; i++) {
        if (S.bufs[i].snap) xmt_drv.cuMemFree(S.bufs[i].snap);
        free(S.bufs[i].host_ref);
        free(S.bufs[i].host_got);
    }
    if (S.flush) xmt_drv.cuMemFree(S.flush);
    for (size_t i = 0; i <= n; i++) {
        if (cands[i].start) xmt_drv.cuEventDestroy(cands[i].start);
        if (cands[i].end) xmt_drv.cuEventDestroy(cands[i].end);
    }
    if (mode_swapped) xmt_drv.cuThreadExchangeStreamCaptureMode(&mode);
    xmt_in_shim--;

    double spent = now_ms() - t0;
    atomic_fetch_add(&total_tuning_us, (uint64_t)(spent * 1000));

    /* Report. */
    cand_t *own = &cands[0];
    double own_t = own->status == C_OK && own->ntimes ? own->stat : NAN;
    if (xmt_opt.verbose >= 2)
        for (size_t i = 0; i <= n; i++) {
            cand_t *c = &cands[i];
            if (c->status == C_OK && c->ntimes)
                xmt_verbose(2, "%s: config %s took %.4f ms (%s of %d) for %s", k->demangled,
                            c->c.label, c->stat, mean ? "mean" : "median", c->ntimes, key_text);
            else if (c->status != C_OK)
                xmt_verbose(2, "%s: config %s %s: %s", k->demangled, c->c.label,
                            c->status == C_REJECTED ? "rejected" : "skipped", c->why);
        }
    if (verify_only)
        xmt_verbose(1, "%s: config %s used without benchmark (%s) for %s", k->demangled,
                    choice->label, any_verify ? "verified" : "single config", key_text);
    else if (xmt_opt.verbose >= 1) {
        size_t timed = 0, rejected = 0, skipped = 0;
        for (size_t i = 1; i <= n; i++) {
            timed += cands[i].status == C_OK && cands[i].ntimes > 0;
            rejected += cands[i].status == C_REJECTED;
            skipped += cands[i].status == C_SKIPPED;
        }
        if (choice->index == XMT_OWN_CONFIG)
            xmt_verbose(1,
                        "%s: the program's own config %s stays (%.4f ms) for %s; %zu configs "
                        "timed, %zu rejected, %zu skipped, in %.1f ms%s",
                        k->demangled, choice->label, own_t, key_text, timed, rejected, skipped,
                        spent, S.error != CUDA_SUCCESS ? " (tuning stopped by an error)" : "");
        else
            xmt_verbose(1,
                        "%s: config %s achieved the best time (%.4f ms; own %.4f ms, %.2fx) for "
                        "%s; %zu configs timed, %zu rejected, %zu skipped, in %.1f ms",
                        k->demangled, choice->label, choice->time_ms, own_t,
                        own_t / choice->time_ms, key_text, timed, rejected, skipped, spent);
    }

    if (xmt_log_enabled()) {
        json_t *cl = json_array();
        json_t *winner = NULL;
        for (size_t i = 0; i <= n; i++) {
            cand_t *c = &cands[i];
            xmt_dims d = c->c.dims;
            if (c->index == XMT_OWN_CONFIG) d = v->orig;
            json_t *o = dims_json(&d);
            json_object_set_new(o, "config", json_string(c->c.label));
            json_object_set_new(o, "status",
                                json_string(c->status == C_OK        ? "ok"
                                            : c->status == C_SKIPPED ? "skipped"
                                                                     : "rejected"));
            if (c->status != C_OK) json_object_set_new(o, "why", json_string(c->why));
            if (c->ntimes) {
                json_object_set_new(o, mean ? "mean_ms" : "median_ms", json_real(c->stat));
                json_object_set_new(o, "times_ms", times_json(c));
            }
            if (c->c.nargs) {
                json_t *args = json_array();
                for (unsigned a = 0; a < c->c.nargs; a++)
                    json_array_append_new(args,
                                          json_pack("{sisI}", "param", (int)c->c.args[a].param,
                                                    "value", (json_int_t)c->c.args[a].value));
                json_object_set_new(o, "args", args);
            }
            if (c->index == choice->index) winner = json_deep_copy(o);
            if (i == 0) {
                json_decref(o); /* the program's own: reported under "own" */
                continue;
            }
            json_object_set_new(o, "index", json_integer(c->index));
            json_array_append_new(cl, o);
        }
        json_t *owno = dims_json(&v->orig);
        json_object_set_new(owno, "config", json_string(own->c.label));
        if (own->ntimes) {
            json_object_set_new(owno, mean ? "mean_ms" : "median_ms", json_real(own->stat));
            json_object_set_new(owno, "times_ms", times_json(own));
        }
        if (!winner) winner = json_deep_copy(owno);
        json_object_set_new(winner, "index", json_integer(choice->index));
        json_t *ev = json_pack("{sssssssiss}", "event", "tune", "kernel", k->mangled, "name",
                               k->demangled, "device", device, "key", key_text);
        if (ev) {
            json_object_set_new(ev, "policy", json_string(xmt_entry_origin(e)));
            json_object_set_new(ev, "own", owno);
            json_object_set_new(ev, "candidates", cl);
            json_object_set_new(ev, "winner", winner);
            json_object_set_new(ev, "statistic", json_string(mean ? "mean" : "median"));
            json_object_set_new(ev, "iterations", json_integer(iterations));
            json_object_set_new(ev, "warmup", json_integer(warmup));
            json_object_set_new(ev, "tolerance", json_boolean(tolerance));
            json_object_set_new(ev, "l2_flush", json_boolean(S.flush != 0));
            json_object_set_new(ev, "verified", json_boolean(any_verify));
            json_object_set_new(ev, "benchmarked", json_boolean(!verify_only && valid > 0));
            json_object_set_new(ev, "duration_ms", json_real(spent));
            if (S.error != CUDA_SUCCESS) {
                char b[32];
                json_object_set_new(ev, "error",
                                    json_sprintf("%s at %s", xmt_cu_name(S.error, b, sizeof b),
                                                 S.error_at ? S.error_at : "?"));
            }
            xmt_log_event(ev);
        } else {
            json_decref(owno);
            json_decref(cl);
            json_decref(winner);
        }
    }
    free(cands);
    free(times);
    free(S.bufs);
}

