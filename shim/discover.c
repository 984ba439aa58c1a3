/*
 * discover: per-(kernel, device) launch shapes and the discovery report (see discover.h).
 */
#include "discover.h"

#include <jansson.h>
#include <stdatomic.h>
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
    uint64_t graph_launches; /* made by graph replays (graph.c), apart from launches */
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

/* Adds one shape's count to d: to an equal shape, a new one while there is room, or to
 * "other". */
static void add_shape(struct xmt_discover *d, const unsigned grid[3], const unsigned block[3],
                      unsigned shared, uint64_t count)
{
    for (int i = 0; i < d->nshapes; i++) {
        shape_t *s = &d->shapes[i];
        if (s->shared == shared && !memcmp(s->grid, grid, sizeof s->grid) &&
            !memcmp(s->block, block, sizeof s->block)) {
            s->count += count;
            return;
        }
    }
    if (d->nshapes < MAX_SHAPES) {
        shape_t *s = &d->shapes[d->nshapes++];
        memcpy(s->grid, grid, sizeof s->grid);
        memcpy(s->block, block, sizeof s->block);
        s->shared = shared;
        s->count = count;
    } else {
        d->other += count;
    }
}

/* k's shapes on one device, made if make and missing (k->lock held). */
static struct xmt_discover *device_of(xmt_kernel *k, int device, int make)
{
    struct xmt_discover *d = k->discover;
    while (d && d->device != device)
        d = d->next;
    if (!d && make && (d = calloc(1, sizeof *d))) {
        d->device = device;
        d->next = k->discover;
        k->discover = d;
    }
    return d;
}

/* A retired record's shapes go to its name's summary (kernels.c; both locks held). */
static void fold_shapes(xmt_kernel *dst, xmt_kernel *src)
{
    for (struct xmt_discover *s = src->discover; s; s = s->next) {
        struct xmt_discover *d = device_of(dst, s->device, 1);
        if (!d) return;
        d->paths |= s->paths;
        d->launches += s->launches;
        d->graph_launches += s->graph_launches;
        d->other += s->other;
        for (int i = 0; i < s->nshapes; i++)
            add_shape(d, s->shapes[i].grid, s->shapes[i].block, s->shapes[i].shared,
                      s->shapes[i].count);
        s->launches = s->other = s->graph_launches = 0;
        s->nshapes = 0;
    }
}

static void release_shapes(xmt_kernel *k)
{
    for (struct xmt_discover *d = k->discover, *next; d; d = next) {
        next = d->next;
        free(d);
    }
    k->discover = NULL;
}

static const xmt_kernel_parts shape_parts = {fold_shapes, release_shapes};

/* Has this kernel's name been seen on this device before, by a record since retired? */
static int seen_before(xmt_kernel *k, int device)
{
    xmt_kernel *sm = k->summary;
    if (!sm) return 0;
    pthread_mutex_lock(&sm->lock);
    int seen = device_of(sm, device, 0) != NULL;
    pthread_mutex_unlock(&sm->lock);
    return seen;
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

    static atomic_int registered;
    if (!atomic_load_explicit(&registered, memory_order_acquire)) {
        xmt_kernels_add_parts(&shape_parts);
        atomic_store_explicit(&registered, 1, memory_order_release);
    }
    pthread_mutex_lock(&k->lock);
    int first = device_of(k, (int)dev, 0) == NULL;
    struct xmt_discover *d = device_of(k, (int)dev, 1);
    if (!d) {
        pthread_mutex_unlock(&k->lock);
        return;
    }
    d->paths |= path;
    d->launches++;
    add_shape(d, l->grid, l->block, l->shared, 1);
    pthread_mutex_unlock(&k->lock);
    /* One kernel event per name and device: a module loaded again is no news. */
    if (first && !seen_before(k, (int)dev)) log_first_sight(k, (int)dev);
}

void xmt_discover_add_graph(xmt_kernel *k, int device, uint64_t launches)
{
    static atomic_int registered;
    if (!atomic_load_explicit(&registered, memory_order_acquire)) {
        xmt_kernels_add_parts(&shape_parts);
        atomic_store_explicit(&registered, 1, memory_order_release);
    }
    pthread_mutex_lock(&k->lock);
    int first = device_of(k, device, 0) == NULL;
    struct xmt_discover *d = device_of(k, device, 1);
    if (d) d->graph_launches += launches;
    pthread_mutex_unlock(&k->lock);
    if (d && first && !seen_before(k, device)) log_first_sight(k, device);
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
            if (ev)
                json_object_set_new(ev, "graph_launches",
                                    json_integer((json_int_t)d->graph_launches));
            if (ev && d->other)
                json_object_set_new(ev, "other_shapes", json_integer((json_int_t)d->other));
            xmt_log_event(ev);
        }
        if (table) {
            const char *origin = k->entry ? xmt_entry_origin(k->entry) : "-";
            const char *slash = strrchr(origin, '/');
            fprintf(table, "xmatune: %10llu %10llu %6d %4d  %-20.20s %s%s\n",
                    (unsigned long long)d->launches, (unsigned long long)d->graph_launches,
                    d->nshapes + (d->other ? 1 : 0), d->device, slash ? slash + 1 : origin,
                    k->demangled,
                    (d->paths & (XMT_PATH_COOP | XMT_PATH_EX_ATTRS)) ? "  [not rewritable]" : "");
        }
    }
    pthread_mutex_unlock(&k->lock);
    return n;
}
