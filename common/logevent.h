/*
 * logevent: the JSON log's contract (docs/log.md) — the event names, the field names, and
 * one builder per event. The shim writes every event through these builders and the tools
 * read them by the same names (common/logread.h holds the tools' reader), so a field is
 * spelt once. Builders return a new object for xmt_log_event (which takes it), or NULL
 * when jansson is out of memory; a json_t * argument is stolen, even on failure. Only
 * jansson's writer is used here, so the shim can link it.
 *
 * To add an event or a field: the builder (and its struct) here, the field's name below,
 * its row in docs/log.md; tests/unit/test_logevent.c checks that the two agree.
 */
#ifndef XMT_LOGEVENT_H
#define XMT_LOGEVENT_H

#include <jansson.h>
#include <stdint.h>

typedef enum {
    XMT_EV_START,
    XMT_EV_KERNEL,
    XMT_EV_KERNEL_SUMMARY,
    XMT_EV_TUNE,
    XMT_EV_GRAPH_NODE,
    XMT_EV_GRAPHS,
    XMT_EV_CACHE_LOAD,
    XMT_EV_REPLAY_MISS,
    XMT_EV_EXIT,
    XMT_EV_MODULE_LOAD,
    XMT_EV_TRIAL_HELPER,
    XMT_EV_RECHECK,
    XMT_EV_TRIAL_CHECK,
    XMT_EV_CACHE_HIT,
    XMT_EV_SNAPSHOT,
    XMT_EV_SWITCH,
    XMT_EV_COUNT
} xmt_event;

/* The value of an event's "event" field. */
const char *xmt_event_name(xmt_event ev);
/* The event of an object read back, or -1 when it has no known "event". */
int xmt_event_of(const json_t *obj);

/* Field names (docs/log.md). One event's fields are listed with it; names several events
 * share appear once. */
#define XMT_F_EVENT "event"
#define XMT_F_KERNEL "kernel"
#define XMT_F_NAME "name"
#define XMT_F_DEVICE "device"
#define XMT_F_POLICY "policy"
#define XMT_F_KEY "key"
#define XMT_F_CAUSE "cause"
#define XMT_F_FROM_CACHE "from_cache"
#define XMT_F_TRIAL "trial"
#define XMT_F_STAGED "staged"
#define XMT_F_VERIFICATION_MS "verification_ms"
#define XMT_F_DRIVER_CALLS "driver_calls"
#define XMT_F_PID "pid"
#define XMT_F_LAUNCHES "launches"
#define XMT_F_REWRITTEN "rewritten"
/* launch shapes and configs */
#define XMT_F_GRID "grid"
#define XMT_F_BLOCK "block"
#define XMT_F_SHARED "shared"
#define XMT_F_COUNT "count"
#define XMT_F_VALUES "values"
/* an args set's value of an untyped 8-byte parameter that was memory the driver knows (its
 * address is not recorded) */
#define XMT_V_POINTER "pointer"
/* start */
#define XMT_F_MODE "mode"
#define XMT_F_VERSION "version"
#define XMT_F_POLICIES "policies"
/* kernel */
#define XMT_F_HANDLE "handle"
#define XMT_F_PARAMS "params"
#define XMT_F_OFFSET "offset"
#define XMT_F_SIZE "size"
#define XMT_F_PARAMS_KNOWN "params_known"
#define XMT_F_MAX_THREADS "max_threads"
#define XMT_F_STATIC_SHARED "static_shared"
#define XMT_F_MAX_DYNAMIC_SHARED "max_dynamic_shared"
/* kernel_summary */
#define XMT_F_PASSED_THROUGH "passed_through"
#define XMT_F_KEYS "keys"
#define XMT_F_PATHS "paths"
#define XMT_F_REWRITABLE "rewritable"
#define XMT_F_SHAPES "shapes"
#define XMT_F_OTHER_SHAPES "other_shapes"
#define XMT_F_ARGS "args"
#define XMT_F_OTHER_ARGS "other_args"
#define XMT_F_GRAPH_LAUNCHES "graph_launches"
#define XMT_F_GRAPH_NODES "graph_nodes"
#define XMT_F_GRAPH_NODES_REWRITTEN "graph_nodes_rewritten"
#define XMT_F_GRAPH_NODES_UNTUNED "graph_nodes_untuned"
/* tune, and its configs (own, candidates, winner) */
#define XMT_F_OWN "own"
#define XMT_F_CANDIDATES "candidates"
#define XMT_F_WINNER "winner"
#define XMT_F_STATISTIC "statistic"
#define XMT_F_ITERATIONS "iterations"
#define XMT_F_WARMUP "warmup"
#define XMT_F_TOLERANCE "tolerance"
#define XMT_F_L2_FLUSH "l2_flush"
#define XMT_F_VERIFIED "verified"
#define XMT_F_BENCHMARKED "benchmarked"
#define XMT_F_TIE_BAND "tie_band"
#define XMT_F_DURATION_MS "duration_ms"
#define XMT_F_FLOOR_MS "floor_ms"
#define XMT_F_FULL_FLOOR_MS "full_floor_ms"
#define XMT_F_RACE "race" /* and its fields: */
#define XMT_F_RACE_ON "on"
#define XMT_F_TIE_LIMIT "tie_limit"
#define XMT_F_MARGIN "margin"
#define XMT_F_ELIMINATED "eliminated" /* also a candidate's: */
#define XMT_F_ROUND "round"
#define XMT_F_TIMED_RUNS "timed_runs"
#define XMT_F_WARMUP_RUNS "warmup_runs"
#define XMT_F_FINALISTS "finalists"
#define XMT_F_RETIME_ROUNDS "retime_rounds"
#define XMT_F_EDGE_ROUNDS "edge_rounds"
#define XMT_F_EDGE_LEFT "edge_left"
#define XMT_F_SELF_LEAD_US "self_lead_us"
#define XMT_F_SELF_LEADS "self_leads"
#define XMT_F_GATE_US "gate_us"
#define XMT_F_GATED_ROUNDS "gated_rounds"
#define XMT_F_GATES_SHORT "gates_short"
#define XMT_F_BUDGET_CUT "budget_cut"
#define XMT_F_SEARCH "search" /* and its fields (and XMT_F_RESTARTS): */
#define XMT_F_SPACE "space"
#define XMT_F_VISITED "visited"
#define XMT_F_EVALS "evals"
#define XMT_F_START "start"
#define XMT_F_SEED "seed"
#define XMT_F_ROUNDING "rounding" /* and its fields: */
#define XMT_F_MAX_REL "max_rel"
#define XMT_F_ROUNDED "candidates"
#define XMT_F_REJECTED "rejected"
#define XMT_F_RTOL "rtol"
#define XMT_F_ATOL "atol"
#define XMT_F_PHASES_MS "phases_ms"
#define XMT_F_PH_MODULE_LOAD "module_load"
#define XMT_F_PH_CLOCK_WARMUP "clock_warmup"
#define XMT_F_PH_SNAPSHOT "snapshot"
#define XMT_F_PH_VERIFICATION "verification"
#define XMT_F_PH_WARMUP_RUNS "warmup_runs"
#define XMT_F_PH_TIMED_RUNS "timed_runs"
#define XMT_F_PH_RESTORES "restores"
#define XMT_F_PH_PUT_BACK "put_back"
#define XMT_F_PH_OTHER "other"
#define XMT_F_PROTECT "protect"
#define XMT_F_UNTUNED "untuned"
#define XMT_F_ERROR "error"
#define XMT_F_CLOCK_WARMUP "clock_warmup"
#define XMT_F_DATA "data" /* and its fields: */
#define XMT_F_INFORMATIVE "informative"
#define XMT_F_DIGEST "digest"
#define XMT_F_SAME_AS_RECORD "same_as_record"
#define XMT_F_INDEX "index"
#define XMT_F_CONFIG "config"
#define XMT_F_AUTO "auto" /* a derived config's (XMATUNE_AUTO), with: */
#define XMT_F_IDIOM "idiom"
#define XMT_F_STATUS "status"
#define XMT_F_SPARE "spare"             /* trial_helper: it was a spare helper */
#define XMT_F_AFTER_FAULT "after_fault" /* skipped after a fault: the one that faulted */
#define XMT_F_WHY "why"
#define XMT_F_MEDIAN_MS "median_ms"
#define XMT_F_MEAN_MS "mean_ms"
#define XMT_F_TIMES_MS "times_ms"
#define XMT_F_PARAM "param"
#define XMT_F_VALUE "value"
#define XMT_F_REGIONS "regions"
#define XMT_F_REGION_BYTES "region_bytes"
#define XMT_F_OUTPUT_BYTES "output_bytes"
#define XMT_F_IN_PLACE_BYTES "in_place_bytes"
#define XMT_F_IN_PLACE_CHECKED "in_place_checked"
#define XMT_F_VERIFY_ON "verify_on"
/* graph_node */
#define XMT_F_OUTCOME "outcome"
/* graphs */
#define XMT_F_REPLAYS "replays"
#define XMT_F_UNSEEN_REPLAYS "unseen_replays"
#define XMT_F_CONDITIONAL_GRAPHS "conditional_graphs"
/* cache_load */
#define XMT_F_PATH "path"
#define XMT_F_RECORDS "records"
#define XMT_F_LINES "lines"
#define XMT_F_BAD "bad"
#define XMT_F_OLD "old"
#define XMT_F_MS "ms"
#define XMT_F_HEAP_BYTES "heap_bytes"
/* exit */
#define XMT_F_KERNELS "kernels"
#define XMT_F_MODULE_LOADS "module_loads"
/* module_load */
#define XMT_F_ENTRY "entry"
/* cache_hit */
#define XMT_F_TRUST "trust"
#define XMT_F_ORIGIN "origin"
#define XMT_F_HOST_US "host_us"
#define XMT_F_PURPOSE "purpose"
#define XMT_F_HOST_US_STEPS "steps_us"
#define XMT_F_FROM "from"
#define XMT_F_TO "to"
#define XMT_F_AFTER_MS "after_ms"
/* trial_helper */
#define XMT_F_WHAT "what"
#define XMT_F_MS "ms"
#define XMT_F_UUID "uuid"
#define XMT_F_RESTARTS "restarts"
#define XMT_F_WHY "why"
#define XMT_F_FORMAT "format"
#define XMT_F_BYTES "bytes"
#define XMT_F_KEPT "kept"
#define XMT_F_JIT_OPTIONS "jit_options"

json_t *xmt_ev_start(long long pid, const char *mode, const char *version, int policies);

typedef struct {
    const char *kernel, *name; /* mangled, demangled */
    int device;
    int is_cukernel; /* handle: CUkernel, else CUfunction */
    size_t nparams;
    const uint32_t *offsets, *sizes; /* bytes, as the driver reports them */
    int params_known, max_threads, static_shared, max_dynamic_shared;
    double host_us;     /* the host time its first sight took */
    int ahead;          /* auto's entry: 1 derived ahead, 0 at its first sight; -1 not auto's */
    const char *policy; /* "file:line", or NULL: null */
} xmt_ev_kernel_info;
json_t *xmt_ev_kernel(const xmt_ev_kernel_info *k);

/* A kernel_summary has every field in every mode; what a mode does not record is null
 * (docs/log.md): device, paths, rewritable, shapes, other_shapes, args, other_args are
 * discover's (per device), keys and graph_nodes* tune's and replay's (per kernel). */
typedef struct {
    const char *kernel, *name;
    int discover; /* 1: a per-device summary of discover mode */
    int device;
    uint64_t launches, rewritten, passed_through, keys;
    json_t *paths, *shapes, *args; /* discover: arrays (stolen); else NULL */
    int rewritable;
    uint64_t other_shapes, other_args;
    uint64_t graph_launches, graph_nodes, graph_nodes_rewritten, graph_nodes_untuned;
    const char *policy; /* or NULL: null */
} xmt_ev_summary_info;
json_t *xmt_ev_kernel_summary(const xmt_ev_summary_info *s);
/* The elements of a summary's shapes and args (values: stolen). */
json_t *xmt_ev_shape(const unsigned grid[3], const unsigned block[3], uint64_t shared,
                     uint64_t count);
json_t *xmt_ev_argset(const unsigned grid[3], const unsigned block[3], uint64_t shared,
                      json_t *values, uint64_t count);

/* Where a tuning's time went (phases_ms), in milliseconds. */
typedef struct {
    double module_load, clock_warmup, snapshot, verification, warmup_runs, timed_runs, restores,
        put_back, other;
} xmt_ev_phases;

/* A tune event. The configs (own, candidates, winner) and protect are built by the shim
 * (their fields are named above) and stolen. */
typedef struct {
    const char *kernel, *name;
    int device;
    const char *key, *policy;
    json_t *own, *candidates, *winner, *protect;
    int mean; /* statistic: mean, else median */
    int iterations, warmup;
    int tolerance, l2_flush, verified, benchmarked;
    int from_cache;    /* a winner from the disk cache, verified here: not a tuning */
    const char *trial; /* where the session ran: "helper" or "inline" */
    double tie_band;   /* written when benchmarked */
    double duration_ms, floor_ms;
    double full_floor_ms; /* timing every candidate in full (written with floor_ms) */
    xmt_ev_phases phases;
    json_t *race;            /* or NULL (not benchmarked): absent */
    json_t *search;          /* or NULL (the space was not searched): absent */
    json_t *rounding;        /* or NULL (no float output differed, no tolerance): absent */
    const char *budget_cut;  /* the phase the budget cut short, or NULL: absent */
    const char *untuned;     /* or NULL / "": absent */
    json_t *error;           /* or NULL: absent */
    json_t *clock_warmup;    /* or NULL (the session did not reach it): absent */
    json_t *staged;          /* or NULL (not in the trial helper): absent */
    json_t *verification_ms; /* or NULL (nothing verified): absent */
    json_t *driver_calls;    /* or NULL (not in the trial helper): absent */
    json_t *data;            /* or NULL (no reference was taken): absent */
} xmt_ev_tune_info;
json_t *xmt_ev_tune(const xmt_ev_tune_info *t);

json_t *xmt_ev_graph_node(const char *kernel, const char *name, const char *key,
                          const char *outcome, const char *why, const char *policy);
json_t *xmt_ev_graphs(uint64_t replays, uint64_t unseen_replays, uint64_t conditional_graphs);
json_t *xmt_ev_cache_load(const char *path, int records, int lines, int bad, int old, double ms,
                          uint64_t heap_bytes);
/* A key decided from the on-disk cache at its first launch in this process (docs/log.md):
 * its config (NULL: the program's own), the record's outcome and why ("" for a timed
 * decision), how it is trusted ("used", "hint", "verified first"), where the record came from
 * (origin: "" this user's cache, "import", "remote": the fleet's tier) and the shim's host time
 * on that launch before the launch itself (host_us). */
json_t *xmt_ev_cache_hit(const char *kernel, const char *name, const char *key, int device,
                         const char *config, const char *outcome, const char *why,
                         const char *trust, const char *origin, double host_us);
/* snapshot: the program thread's share of a snapshot for the background (purpose "tune" or
 * "verify"): its bytes and regions, and the host µs of each step (steps: an object of
 * step name to µs) and in all. */
json_t *xmt_ev_snapshot(const char *kernel, const char *name, const char *key, int device,
                        const char *purpose, size_t bytes, size_t regions, json_t *steps,
                        double host_us);
/* switch: a key's launches change config in the middle of the process, once the background
 * decided (why: "tuned", "verified", "failed"): from and to are configs' labels, NULL for
 * the program's own config; after_ms, since the key's first launch here. */
json_t *xmt_ev_switch(const char *kernel, const char *name, const char *key, int device,
                      const char *from, const char *to, const char *why, double after_ms);
/* cause: why the replay had no winner, in words (shim/decide/misscause.h). */
json_t *xmt_ev_replay_miss(const char *kernel, const char *name, const char *key,
                           const char *policy, int device, const char *cause);
/* One module or library load: the entry point, the image's format and size, how the shim
 * keeps it (kept: "copied", "mapped", "file", "no"), its JIT options. */
json_t *xmt_ev_module_load(const char *entry, const char *format, uint64_t bytes, const char *kept,
                           unsigned jit_options);
/* The trial helper of a device started, restarted, gone or given up (fallback). Optional
 * fields are absent when: pid 0, ms < 0, restarts 0, uuid_hex and name NULL (no answer
 * yet; has_uuid 0 writes a null uuid), why NULL, spare 0 (1: the helper was a spare,
 * started ahead of need; ms is then the program's wait for it). */
json_t *xmt_ev_trial_helper(const char *what, int device, long long pid, double ms, int restarts,
                            int answered, int has_uuid, const char *uuid_hex, const char *name,
                            const char *why, int spare);
/* A re-check of a decided winner (docs/tuning.md, "Data that proves nothing"): config
 * its label, outcome "passed", "failed" or "untold"; why and data (stolen) NULL: absent;
 * trial: where its session ran, as the tune event's ("helper" or "inline"). */
json_t *xmt_ev_recheck(const char *kernel, const char *name, int device, const char *key,
                       const char *policy, const char *config, const char *outcome, const char *why,
                       json_t *data, const char *trial, double duration_ms);
/* The program's own first run of a key tuned in the trial helper, compared with the
 * helper's reference: equal (the winner is used from the next launch on), else why not. */
json_t *xmt_ev_trial_check(const char *kernel, const char *name, const char *key, int device,
                           int equal, uint64_t bytes, uint64_t differ, const char *why);
/* module_loads: an object of counts by load entry point (taken; NULL: {}). */
json_t *xmt_ev_exit(uint64_t launches, uint64_t rewritten, int kernels, long long pid,
                    json_t *module_loads);

#endif
