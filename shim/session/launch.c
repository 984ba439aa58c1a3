/*
 * launch: calling a launch as made, its attributes, and a launch with a candidate's
 * configuration (see launch.h).
 */
#include "launch.h"

#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "log.h"

CUresult xmt_launch_call(const xmt_launch *l)
{
    switch (l->kind) {
    case XMT_K_LAUNCH:
        return ((xmt_pfn_LAUNCH)l->real)(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                                         l->block[1], l->block[2], l->shared, l->stream, l->params,
                                         l->extra);
    case XMT_K_EX: return ((xmt_pfn_EX)l->real)(l->cfg, l->f, l->params, l->extra);
    case XMT_K_COOP:
        return ((xmt_pfn_COOP)l->real)(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                                       l->block[1], l->block[2], l->shared, l->stream, l->params);
    }
    return CUDA_ERROR_NOT_SUPPORTED; /* not reached: every kind is a case above */
}

int xmt_launch_has_blocking_attrs(const CUlaunchConfig *cfg)
{
    if (!cfg) return 0;
    for (unsigned i = 0; i < cfg->numAttrs; i++) {
        const CUlaunchAttribute *a = &cfg->attrs[i];
        switch (a->id) {
        case CU_LAUNCH_ATTRIBUTE_IGNORE:
        case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
            break; /* about memory or scheduling order, not the shape of the launch */
        case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
            if (a->value.cooperative) return 1;
            break;
        default: return 1; /* clusters, programmatic launch, events, ...: the shape is bound */
        }
    }
    return 0;
}

/* ---- a launch with a candidate's configuration ------------------------------------ */

/* Finds the packed argument buffer of an `extra` array. */
int xmt_extra_buffer(void **extra, uint8_t **buf, size_t *size)
{
    *buf = NULL;
    *size = 0;
    for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END && i < 64; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            *buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            *size = *(size_t *)extra[i + 1];
    }
    return *buf && *size ? 0 : -1;
}

CUresult xmt_launch_as(const xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c)
{
    if (!c) return xmt_launch_call(l);
    xmt_launch m = *l;
    const unsigned grid[3] = {c->dims.grid.x, c->dims.grid.y, c->dims.grid.z};
    const unsigned block[3] = {c->dims.block.x, c->dims.block.y, c->dims.block.z};
    CUlaunchConfig cfg;
    xmt_launch_set_dims(&m, grid, block, c->dims.shared, &cfg);
    if (c->nargs == 0) return xmt_launch_call(&m);
    xmt_cand_args args;
    if (xmt_candidate_args(k, l->params, l->extra, c, &args) != 0) return xmt_launch_call(l);
    m.params = args.params_out;
    m.extra = args.extra_out;
    CUresult r = xmt_launch_call(&m);
    xmt_cand_args_free(&args);
    return r;
}

int xmt_candidate_args(const xmt_kernel *k, void **params, void **extra, const xmt_candidate *c,
                       xmt_cand_args *a)
{
    a->packed = NULL;
    a->params_out = params;
    a->extra_out = extra;
    if (c->nargs == 0) return 0;
    if (params) {
        if (k->nparams > XMT_KERNEL_MAX_PARAMS) return -1;
        memcpy(a->params, params, k->nparams * sizeof *a->params);
        for (unsigned i = 0; i < c->nargs; i++) { /* never an index past the parameters */
            if (c->args[i].param >= k->nparams || c->args[i].size > 8) return -1;
            a->values[i] = c->args[i].value; /* little-endian: the low bytes come first */
            a->params[c->args[i].param] = &a->values[i];
        }
        a->params_out = a->params;
        return 0;
    }
    uint8_t *buf;
    if (xmt_extra_buffer(extra, &buf, &a->packed_size) != 0) return -1;
    a->packed = a->packed_size <= sizeof a->packed_stack ? a->packed_stack : malloc(a->packed_size);
    if (!a->packed) return -1;
    memcpy(a->packed, buf, a->packed_size);
    for (unsigned i = 0; i < c->nargs; i++) {
        unsigned p = c->args[i].param;
        if (p < k->nparams && c->args[i].size <= 8 &&
            k->offsets[p] + c->args[i].size <= a->packed_size)
            memcpy(a->packed + k->offsets[p], &c->args[i].value, c->args[i].size);
    }
    a->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    a->extra[1] = a->packed;
    a->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    a->extra[3] = &a->packed_size;
    a->extra[4] = CU_LAUNCH_PARAM_END;
    a->extra_out = a->extra;
    return 0;
}

void xmt_cand_args_free(xmt_cand_args *a)
{
    if (a->packed && a->packed != a->packed_stack) free(a->packed);
    a->packed = NULL;
}

CUresult xmt_pass(xmt_kernel *k, const xmt_launch *l)
{
    atomic_fetch_add_explicit(&k->passed, 1, memory_order_relaxed);
    return xmt_launch_call(l);
}

int xmt_refused(CUresult r)
{
    return r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ||
           r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_NOT_SUPPORTED ||
           r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
}

CUresult xmt_run_for_real(xmt_kernel *k, const xmt_launch *l, const xmt_candidate *c)
{
    CUresult r = xmt_launch_as(k, l, c);
    if (r == CUDA_SUCCESS) {
        atomic_fetch_add_explicit(&k->rewritten, 1, memory_order_relaxed);
        return r;
    }
    if (xmt_refused(r)) {
        char b[32], label[sizeof c->label];
        /* the launch path's candidates come without their label (xmt_entry_config) */
        if (c->label[0] || !k->entry || xmt_entry_label(k->entry, c, label, sizeof label))
            snprintf(label, sizeof label, "%s", c->label);
        xmt_warn("%s: the driver refused the tuned config %s (%s); the program's own runs",
                 k->demangled, label, xmt_cu_name(r, b, sizeof b));
        return xmt_pass(k, l);
    }
    return r;
}

int xmt_candidate_is_own(const xmt_candidate *c, const xmt_launch *l)
{
    return c->nargs == 0 && c->dims.grid.x == l->grid[0] && c->dims.grid.y == l->grid[1] &&
           c->dims.grid.z == l->grid[2] && c->dims.block.x == l->block[0] &&
           c->dims.block.y == l->block[1] && c->dims.block.z == l->block[2] &&
           c->dims.shared == l->shared;
}
