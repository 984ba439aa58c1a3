/*
 * logevent: the log's events, built (see logevent.h). Field order is the order in which a
 * line shows them: keep it when adding a field (readers do not depend on it, people do).
 */
#include "logevent.h"

#include <string.h>

static const char *const event_names[XMT_EV_COUNT] = {
    [XMT_EV_START] = "start",
    [XMT_EV_KERNEL] = "kernel",
    [XMT_EV_KERNEL_SUMMARY] = "kernel_summary",
    [XMT_EV_TUNE] = "tune",
    [XMT_EV_GRAPH_NODE] = "graph_node",
    [XMT_EV_GRAPHS] = "graphs",
    [XMT_EV_CACHE_LOAD] = "cache_load",
    [XMT_EV_REPLAY_MISS] = "replay_miss",
    [XMT_EV_EXIT] = "exit",
    [XMT_EV_MODULE_LOAD] = "module_load",
    [XMT_EV_TRIAL_HELPER] = "trial_helper",
    [XMT_EV_RECHECK] = "recheck",
    [XMT_EV_TRIAL_CHECK] = "trial_check",
    [XMT_EV_CACHE_HIT] = "cache_hit",
    [XMT_EV_SNAPSHOT] = "snapshot",
    [XMT_EV_SWITCH] = "switch",
};

const char *xmt_event_name(xmt_event ev)
{
    return (unsigned)ev < XMT_EV_COUNT ? event_names[ev] : "?";
}

int xmt_event_of(const json_t *obj)
{
    const char *s = json_string_value(json_object_get(obj, XMT_F_EVENT));
    for (int i = 0; s && i < XMT_EV_COUNT; i++)
        if (!strcmp(s, event_names[i])) return i;
    return -1;
}

/* A string, or null for NULL. */
static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* A new event object with its "event" field first. */
static json_t *event(xmt_event ev)
{
    return json_pack("{ss}", XMT_F_EVENT, event_names[ev]);
}

json_t *xmt_ev_start(long long pid, const char *mode, const char *version, int policies)
{
    return json_pack("{sssIsssssi}", XMT_F_EVENT, event_names[XMT_EV_START], XMT_F_PID,
                     (json_int_t)pid, XMT_F_MODE, mode, XMT_F_VERSION, version, XMT_F_POLICIES,
                     policies);
}

json_t *xmt_ev_kernel(const xmt_ev_kernel_info *k)
{
    json_t *params = json_array();
    for (size_t i = 0; params && i < k->nparams; i++)
        json_array_append_new(params, json_pack("{sIsI}", XMT_F_OFFSET, (json_int_t)k->offsets[i],
                                                XMT_F_SIZE, (json_int_t)k->sizes[i]));
    json_t *ev = json_pack("{sssssssisosbsisisi}", XMT_F_EVENT, event_names[XMT_EV_KERNEL],
                           XMT_F_KERNEL, k->kernel, XMT_F_NAME, k->name, XMT_F_DEVICE, k->device,
                           XMT_F_PARAMS, params, XMT_F_PARAMS_KNOWN, k->params_known,
                           XMT_F_MAX_THREADS, k->max_threads, XMT_F_STATIC_SHARED, k->static_shared,
                           XMT_F_MAX_DYNAMIC_SHARED, k->max_dynamic_shared);
    if (!ev) return NULL;
    json_object_set_new(ev, XMT_F_HANDLE, json_string(k->is_cukernel ? "CUkernel" : "CUfunction"));
    json_object_set_new(ev, XMT_F_POLICY, str_or_null(k->policy));
    json_object_set_new(ev, XMT_F_HOST_US, json_real(k->host_us));
    if (k->ahead >= 0) json_object_set_new(ev, "entry_ahead", json_boolean(k->ahead));
    return ev;
}

static json_t *dim3(const unsigned d[3])
{
    return json_pack("[III]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2]);
}

json_t *xmt_ev_shape(const unsigned grid[3], const unsigned block[3], uint64_t shared,
                     uint64_t count)
{
    return json_pack("{sosos I sI}", XMT_F_GRID, dim3(grid), XMT_F_BLOCK, dim3(block), XMT_F_SHARED,
                     (json_int_t)shared, XMT_F_COUNT, (json_int_t)count);
}

json_t *xmt_ev_argset(const unsigned grid[3], const unsigned block[3], uint64_t shared,
                      json_t *values, uint64_t count)
{
    return json_pack("{sosos I so sI}", XMT_F_GRID, dim3(grid), XMT_F_BLOCK, dim3(block),
                     XMT_F_SHARED, (json_int_t)shared, XMT_F_VALUES, values, XMT_F_COUNT,
                     (json_int_t)count);
}

static json_t *count_or_null(int known, uint64_t n)
{
    return known ? json_integer((json_int_t)n) : json_null();
}

/* One kernel_summary for both modes: the fields of the other mode are null, so that every
 * summary has the same fields (docs/log.md). */
json_t *xmt_ev_kernel_summary(const xmt_ev_summary_info *s)
{
    json_t *ev = event(XMT_EV_KERNEL_SUMMARY);
    int d = s->discover;
    if (!ev) {
        json_decref(s->paths);
        json_decref(s->shapes);
        json_decref(s->args);
        return NULL;
    }
    json_object_set_new(ev, XMT_F_KERNEL, json_string(s->kernel));
    json_object_set_new(ev, XMT_F_NAME, json_string(s->name));
    json_object_set_new(ev, XMT_F_DEVICE, d ? json_integer(s->device) : json_null());
    json_object_set_new(ev, XMT_F_LAUNCHES, json_integer((json_int_t)s->launches));
    json_object_set_new(ev, XMT_F_REWRITTEN, json_integer((json_int_t)s->rewritten));
    json_object_set_new(ev, XMT_F_PASSED_THROUGH, json_integer((json_int_t)s->passed_through));
    json_object_set_new(ev, XMT_F_KEYS, json_integer((json_int_t)s->keys));
    json_object_set_new(ev, XMT_F_POLICY, str_or_null(s->policy));
    json_object_set_new(ev, XMT_F_PATHS, d && s->paths ? s->paths : json_null());
    json_object_set_new(ev, XMT_F_REWRITABLE, d ? json_boolean(s->rewritable) : json_null());
    json_object_set_new(ev, XMT_F_SHAPES, d && s->shapes ? s->shapes : json_null());
    json_object_set_new(ev, XMT_F_OTHER_SHAPES, count_or_null(d, s->other_shapes));
    json_object_set_new(ev, XMT_F_ARGS, d && s->args ? s->args : json_null());
    json_object_set_new(ev, XMT_F_OTHER_ARGS, count_or_null(d, s->other_args));
    json_object_set_new(ev, XMT_F_GRAPH_LAUNCHES, json_integer((json_int_t)s->graph_launches));
    json_object_set_new(ev, XMT_F_GRAPH_NODES, count_or_null(!d, s->graph_nodes));
    json_object_set_new(ev, XMT_F_GRAPH_NODES_REWRITTEN,
                        count_or_null(!d, s->graph_nodes_rewritten));
    json_object_set_new(ev, XMT_F_GRAPH_NODES_UNTUNED, count_or_null(!d, s->graph_nodes_untuned));
    if (!d) { /* not used: a tune-mode caller passes none, but never leak one */
        json_decref(s->paths);
        json_decref(s->shapes);
        json_decref(s->args);
    }
    return ev;
}

static json_t *phases(const xmt_ev_phases *p)
{
    return json_pack("{sfsfsfsfsfsfsfsfsf}", XMT_F_PH_MODULE_LOAD, p->module_load,
                     XMT_F_PH_CLOCK_WARMUP, p->clock_warmup, XMT_F_PH_SNAPSHOT, p->snapshot,
                     XMT_F_PH_VERIFICATION, p->verification, XMT_F_PH_WARMUP_RUNS, p->warmup_runs,
                     XMT_F_PH_TIMED_RUNS, p->timed_runs, XMT_F_PH_RESTORES, p->restores,
                     XMT_F_PH_PUT_BACK, p->put_back, XMT_F_PH_OTHER, p->other);
}

/* The tune event's fields after key, in their order. Adding a field: one line here. */
static void tune_fields(json_t *ev, const xmt_ev_tune_info *t)
{
    json_object_set_new(ev, XMT_F_POLICY, str_or_null(t->policy));
    json_object_set_new(ev, XMT_F_OWN, t->own);
    json_object_set_new(ev, XMT_F_CANDIDATES, t->candidates);
    json_object_set_new(ev, XMT_F_WINNER, t->winner);
    json_object_set_new(ev, XMT_F_STATISTIC, json_string(t->mean ? "mean" : "median"));
    json_object_set_new(ev, XMT_F_ITERATIONS, json_integer(t->iterations));
    json_object_set_new(ev, XMT_F_WARMUP, json_integer(t->warmup));
    json_object_set_new(ev, XMT_F_TOLERANCE, json_boolean(t->tolerance));
    json_object_set_new(ev, XMT_F_L2_FLUSH, json_boolean(t->l2_flush));
    json_object_set_new(ev, XMT_F_VERIFIED, json_boolean(t->verified));
    json_object_set_new(ev, XMT_F_BENCHMARKED, json_boolean(t->benchmarked));
    json_object_set_new(ev, XMT_F_FROM_CACHE, json_boolean(t->from_cache));
    json_object_set_new(ev, XMT_F_TRIAL, json_string(t->trial ? t->trial : "inline"));
    if (t->benchmarked) json_object_set_new(ev, XMT_F_TIE_BAND, json_real(t->tie_band));
    json_object_set_new(ev, XMT_F_DURATION_MS, json_real(t->duration_ms));
    json_object_set_new(ev, XMT_F_FLOOR_MS, json_real(t->floor_ms));
    json_object_set_new(ev, XMT_F_FULL_FLOOR_MS, json_real(t->full_floor_ms));
    json_object_set_new(ev, XMT_F_PHASES_MS, phases(&t->phases));
    json_object_set_new(ev, XMT_F_PROTECT, t->protect);
    if (t->untuned && t->untuned[0])
        json_object_set_new(ev, XMT_F_UNTUNED, json_string(t->untuned));
    if (t->error) json_object_set_new(ev, XMT_F_ERROR, t->error);
    if (t->clock_warmup) json_object_set_new(ev, XMT_F_CLOCK_WARMUP, t->clock_warmup);
    if (t->staged) json_object_set_new(ev, XMT_F_STAGED, t->staged);
    if (t->verification_ms) json_object_set_new(ev, XMT_F_VERIFICATION_MS, t->verification_ms);
    if (t->driver_calls) json_object_set_new(ev, XMT_F_DRIVER_CALLS, t->driver_calls);
    if (t->data) json_object_set_new(ev, XMT_F_DATA, t->data);
    if (t->race) json_object_set_new(ev, XMT_F_RACE, t->race);
    if (t->search) json_object_set_new(ev, XMT_F_SEARCH, t->search);
    if (t->rounding) json_object_set_new(ev, XMT_F_ROUNDING, t->rounding);
    if (t->budget_cut) json_object_set_new(ev, XMT_F_BUDGET_CUT, json_string(t->budget_cut));
}

json_t *xmt_ev_tune(const xmt_ev_tune_info *t)
{
    json_t *ev =
        json_pack("{sssssssiss}", XMT_F_EVENT, event_names[XMT_EV_TUNE], XMT_F_KERNEL, t->kernel,
                  XMT_F_NAME, t->name, XMT_F_DEVICE, t->device, XMT_F_KEY, t->key);
    if (!ev) {
        json_decref(t->own);
        json_decref(t->candidates);
        json_decref(t->winner);
        json_decref(t->protect);
        json_decref(t->error);
        json_decref(t->clock_warmup);
        json_decref(t->staged);
        json_decref(t->verification_ms);
        json_decref(t->driver_calls);
        json_decref(t->data);
        json_decref(t->race);
        json_decref(t->search);
        json_decref(t->rounding);
        return NULL;
    }
    tune_fields(ev, t);
    return ev;
}

json_t *xmt_ev_graph_node(const char *kernel, const char *name, const char *key,
                          const char *outcome, const char *why, const char *policy)
{
    return json_pack("{ssssssssssssss}", XMT_F_EVENT, event_names[XMT_EV_GRAPH_NODE], XMT_F_KERNEL,
                     kernel, XMT_F_NAME, name, XMT_F_KEY, key, XMT_F_OUTCOME, outcome, XMT_F_WHY,
                     why, XMT_F_POLICY, policy);
}

json_t *xmt_ev_graphs(uint64_t replays, uint64_t unseen_replays, uint64_t conditional_graphs)
{
    return json_pack("{sssIsIsI}", XMT_F_EVENT, event_names[XMT_EV_GRAPHS], XMT_F_REPLAYS,
                     (json_int_t)replays, XMT_F_UNSEEN_REPLAYS, (json_int_t)unseen_replays,
                     XMT_F_CONDITIONAL_GRAPHS, (json_int_t)conditional_graphs);
}

json_t *xmt_ev_cache_load(const char *path, int records, int lines, int bad, int old, double ms,
                          uint64_t heap_bytes)
{
    return json_pack("{sssssisisisisfsI}", XMT_F_EVENT, event_names[XMT_EV_CACHE_LOAD], XMT_F_PATH,
                     path, XMT_F_RECORDS, records, XMT_F_LINES, lines, XMT_F_BAD, bad, XMT_F_OLD,
                     old, XMT_F_MS, ms, XMT_F_HEAP_BYTES, (json_int_t)heap_bytes);
}

json_t *xmt_ev_cache_hit(const char *kernel, const char *name, const char *key, int device,
                         const char *config, const char *outcome, const char *why,
                         const char *trust, const char *origin, double host_us)
{
    json_t *o = json_pack("{sssssssssisosssssssssf}", XMT_F_EVENT, event_names[XMT_EV_CACHE_HIT],
                          XMT_F_KERNEL, kernel, XMT_F_NAME, name, XMT_F_KEY, key, XMT_F_DEVICE,
                          device, XMT_F_CONFIG, str_or_null(config), XMT_F_OUTCOME,
                          outcome ? outcome : "", XMT_F_WHY, why ? why : "", XMT_F_TRUST, trust,
                          XMT_F_ORIGIN, origin ? origin : "", XMT_F_HOST_US, host_us);
    return o;
}

json_t *xmt_ev_snapshot(const char *kernel, const char *name, const char *key, int device,
                        const char *purpose, size_t bytes, size_t regions, json_t *steps,
                        double host_us)
{
    return json_pack("{sssssssssisssIsIsosf}", XMT_F_EVENT, event_names[XMT_EV_SNAPSHOT],
                     XMT_F_KERNEL, kernel, XMT_F_NAME, name, XMT_F_KEY, key, XMT_F_DEVICE, device,
                     XMT_F_PURPOSE, purpose, XMT_F_BYTES, (json_int_t)bytes, XMT_F_REGIONS,
                     (json_int_t)regions, XMT_F_HOST_US_STEPS, steps ? steps : json_object(),
                     XMT_F_HOST_US, host_us);
}

json_t *xmt_ev_switch(const char *kernel, const char *name, const char *key, int device,
                      const char *from, const char *to, const char *why, double after_ms)
{
    return json_pack("{sssssssssisososssf}", XMT_F_EVENT, event_names[XMT_EV_SWITCH], XMT_F_KERNEL,
                     kernel, XMT_F_NAME, name, XMT_F_KEY, key, XMT_F_DEVICE, device, XMT_F_FROM,
                     str_or_null(from), XMT_F_TO, str_or_null(to), XMT_F_WHY, why, XMT_F_AFTER_MS,
                     after_ms);
}

json_t *xmt_ev_replay_miss(const char *kernel, const char *name, const char *key,
                           const char *policy, int device, const char *cause)
{
    return json_pack("{sssssssssssiss}", XMT_F_EVENT, event_names[XMT_EV_REPLAY_MISS], XMT_F_KERNEL,
                     kernel, XMT_F_NAME, name, XMT_F_KEY, key, XMT_F_POLICY, policy, XMT_F_DEVICE,
                     device, XMT_F_CAUSE, cause);
}

json_t *xmt_ev_exit(uint64_t launches, uint64_t rewritten, int kernels, long long pid,
                    json_t *module_loads)
{
    return json_pack("{sssIsIsisIso}", XMT_F_EVENT, event_names[XMT_EV_EXIT], XMT_F_LAUNCHES,
                     (json_int_t)launches, XMT_F_REWRITTEN, (json_int_t)rewritten, XMT_F_KERNELS,
                     kernels, XMT_F_PID, (json_int_t)pid, XMT_F_MODULE_LOADS,
                     module_loads ? module_loads : json_object());
}

json_t *xmt_ev_module_load(const char *entry, const char *format, uint64_t bytes, const char *kept,
                           unsigned jit_options)
{
    return json_pack("{sssssssIsssi}", XMT_F_EVENT, event_names[XMT_EV_MODULE_LOAD], XMT_F_ENTRY,
                     entry, XMT_F_FORMAT, format, XMT_F_BYTES, (json_int_t)bytes, XMT_F_KEPT, kept,
                     XMT_F_JIT_OPTIONS, (int)jit_options);
}

json_t *xmt_ev_trial_check(const char *kernel, const char *name, const char *key, int device,
                           int equal, uint64_t bytes, uint64_t differ, const char *why)
{
    json_t *ev =
        json_pack("{sssssssssisbsIsI}", XMT_F_EVENT, event_names[XMT_EV_TRIAL_CHECK], XMT_F_KERNEL,
                  kernel, XMT_F_NAME, name, XMT_F_KEY, key, XMT_F_DEVICE, device, "equal", equal,
                  "bytes", (json_int_t)bytes, "differ", (json_int_t)differ);
    if (ev && why) json_object_set_new(ev, XMT_F_WHY, json_string(why));
    return ev;
}

json_t *xmt_ev_trial_helper(const char *what, int device, long long pid, double ms, int restarts,
                            int answered, int has_uuid, const char *uuid_hex, const char *name,
                            const char *why, int spare)
{
    json_t *ev = json_pack("{sssssi}", XMT_F_EVENT, event_names[XMT_EV_TRIAL_HELPER], XMT_F_WHAT,
                           what, XMT_F_DEVICE, device);
    if (!ev) return NULL;
    if (pid) json_object_set_new(ev, XMT_F_PID, json_integer((json_int_t)pid));
    if (ms >= 0) json_object_set_new(ev, XMT_F_MS, json_real(ms));
    if (restarts) json_object_set_new(ev, XMT_F_RESTARTS, json_integer(restarts));
    if (answered) {
        json_object_set_new(ev, XMT_F_UUID,
                            has_uuid && uuid_hex ? json_string(uuid_hex) : json_null());
        json_object_set_new(ev, XMT_F_NAME, json_string(name ? name : ""));
    }
    if (why) json_object_set_new(ev, XMT_F_WHY, json_string(why));
    if (spare) json_object_set_new(ev, XMT_F_SPARE, json_true());
    return ev;
}

json_t *xmt_ev_recheck(const char *kernel, const char *name, int device, const char *key,
                       const char *policy, const char *config, const char *outcome, const char *why,
                       json_t *data, const char *trial, double duration_ms)
{
    json_t *ev = json_pack("{sssssssissso}", XMT_F_EVENT, event_names[XMT_EV_RECHECK], XMT_F_KERNEL,
                           kernel, XMT_F_NAME, name, XMT_F_DEVICE, device, XMT_F_KEY, key,
                           XMT_F_POLICY, str_or_null(policy));
    if (!ev) {
        json_decref(data);
        return NULL;
    }
    json_object_set_new(ev, XMT_F_CONFIG, json_string(config));
    json_object_set_new(ev, XMT_F_OUTCOME, json_string(outcome));
    if (why) json_object_set_new(ev, XMT_F_WHY, json_string(why));
    if (data) json_object_set_new(ev, XMT_F_DATA, data);
    json_object_set_new(ev, XMT_F_TRIAL, json_string(trial ? trial : "inline"));
    json_object_set_new(ev, XMT_F_DURATION_MS, json_real(duration_ms));
    return ev;
}
