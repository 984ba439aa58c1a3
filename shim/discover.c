/*
 * discover: per-(kernel, device) launch shapes and the discovery report (see discover.h).
 */
#include "discover.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "log.h"
#include "xmt_policy.h"

/* Distinct shapes kept per kernel and device; launches beyond them are counted as
 * "other" so that a kernel launched with thousands of sizes cannot grow without bound. */
#define MAX_SHAPES 64

typedef struct {
    unsigned grid[3], block[3], shared;
    uint64_t count;
} shape_t;

struct xmt_discover {
    int device;
    unsigned paths;
    uint64_t launches, other;
    int nshapes;
    shape_t shapes[MAX_SHAPES];
    struct xmt_discover *next;
};

json_t *xmt_paths_json(unsigned paths)
{
    static const char *const names[] = {"launch", "launch_ex", "launch_ex_attrs", "cooperative",
                                        "extra"};
    json_t *a = json_array();
    for (int i = 0; i < 5; i++)
        if (paths & (1u << i)) json_array_append_new(a, json_string(names[i]));
    return a;
}

static json_t *dim3_json(const unsigned d[3])
{
    return json_pack("[III]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2]);
}

static void log_first_sight(const xmt_kernel *k, int device)
{
    if (!xmt_log_enabled()) return;
    json_t *params = json_array();
    for (size_t i = 0; i < k->nparams; i++)
        json_array_append_new(params, json_pack("{sIsI}", "offset", (json_int_t)k->offsets[i],
                                                "size", (json_int_t)k->sizes[i]));
    json_t *ev = json_pack("{sssssssisosbsisisi}", "event", "kernel", "kernel", k->mangled, "name",
                           k->demangled, "device", device, "params", params, "params_known",
                           k->params_known, "max_threads", k->max_threads, "static_shared",
                           k->static_shared, "max_dynamic_shared", k->max_dynamic_shared);
    if (!ev) return;
    json_object_set_new(ev, "handle", json_string(k->is_cukernel ? "CUkernel" : "CUfunction"));
    json_object_set_new(ev, "policy",
                        k->entry ? json_string(xmt_entry_origin(k->entry)) : json_null());
    xmt_log_event(ev);
}

void xmt_discover_record(xmt_kernel *k, const xmt_launch *l)
{
    CUdevice dev = -1;
    XMT_IN_SHIM_SCOPE
    {
        if (xmt_drv.cuCtxGetDevice && xmt_drv.cuCtxGetDevice(&dev) != CUDA_SUCCESS) dev = -1;
    }

    unsigned path = l->kind == XMT_K_COOP ? XMT_PATH_COOP
                    : l->kind == XMT_K_EX
                        ? (xmt_launch_has_blocking_attrs(l->cfg) ? XMT_PATH_EX_ATTRS : XMT_PATH_EX)
                        : XMT_PATH_LAUNCH;
    if (l->extra) path |= XMT_PATH_EXTRA;

    int first = 0;
    pthread_mutex_lock(&k->lock);
    struct xmt_discover *d = k->discover;
    while (d && d->device != (int)dev)
        d = d->next;
    if (!d) {
        d = calloc(1, sizeof *d);
        if (!d) {
            pthread_mutex_unlock(&k->lock);
            return;
        }
        d->device = (int)dev;
        d->next = k->discover;
        k->discover = d;
        first = 1;
    }
    d->paths |= path;
    d->launches++;
    int i;
    for (i = 0; i < d->nshapes; i++) {
        shape_t *s = &d->shapes[i];
        if (s->shared == l->shared && !memcmp(s->grid, l->grid, sizeof s->grid) &&
            !memcmp(s->block, l->block, sizeof s->block)) {
            s->count++;
            break;
        }
    }
    if (i == d->nshapes) {
        if (d->nshapes < MAX_SHAPES) {
            shape_t *s = &d->shapes[d->nshapes++];
            memcpy(s->grid, l->grid, sizeof s->grid);
            memcpy(s->block, l->block, sizeof s->block);
            s->shared = l->shared;
            s->count = 1;
        } else {
            d->other++;
        }
    }
    pthread_mutex_unlock(&k->lock);
    if (first) log_first_sight(k, (int)dev);
}

int xmt_discover_report(xmt_kernel *k, FILE *table)
{
    int n = 0;
    pthread_mutex_lock(&k->lock);
    for (struct xmt_discover *d = k->discover; d; d = d->next, n++) {
        if (xmt_log_enabled()) {
            json_t *shapes = json_array();
            for (int i = 0; i < d->nshapes; i++) {
                const shape_t *s = &d->shapes[i];
                json_array_append_new(shapes, json_pack("{sosos I sI}", "grid", dim3_json(s->grid),
                                                        "block", dim3_json(s->block), "shared",
                                                        (json_int_t)s->shared, "count",
                                                        (json_int_t)s->count));
            }
            unsigned rewritable = XMT_PATH_LAUNCH | XMT_PATH_EX | XMT_PATH_EXTRA;
            json_t *ev = json_pack("{sssssssisIsIsIsosososb}", "event", "kernel_summary", "kernel",
                                   k->mangled, "name", k->demangled, "device", d->device,
                                   "launches", (json_int_t)d->launches, "rewritten", (json_int_t)0,
                                   "passed_through", (json_int_t)d->launches, "paths",
                                   xmt_paths_json(d->paths), "shapes", shapes, "policy",
                                   k->entry ? json_string(xmt_entry_origin(k->entry)) : json_null(),
                                   "rewritable", (d->paths & ~rewritable) == 0);
            if (ev && d->other)
                json_object_set_new(ev, "other_shapes", json_integer((json_int_t)d->other));
            xmt_log_event(ev);
        }
        if (table) {
            const char *origin = k->entry ? xmt_entry_origin(k->entry) : "-";
            const char *slash = strrchr(origin, '/');
            fprintf(table, "xmatune: %10llu %6d %4d  %-20.20s %s%s\n",
                    (unsigned long long)d->launches, d->nshapes + (d->other ? 1 : 0), d->device,
                    slash ? slash + 1 : origin, k->demangled,
                    (d->paths & (XMT_PATH_COOP | XMT_PATH_EX_ATTRS)) ? "  [not rewritable]" : "");
        }
    }
    pthread_mutex_unlock(&k->lock);
    return n;
}
