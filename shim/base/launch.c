/*
 * launch: calling a launch as made, and its attributes (see launch.h).
 */
#include "launch.h"

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
