/*
 * tune_event: the verbose lines and the log's `tune` event (see tune_event.h).
 */
#include "tune_event.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "autotune.h"
#include "driver.h"
#include "log.h"
#include "logevent.h"
#include "options.h"

static json_t *dims_json(const xmt_dims *d)
{
    return json_pack("{s[iii]s[iii]si}", XMT_F_GRID, (int)d->grid.x, (int)d->grid.y, (int)d->grid.z,
                     XMT_F_BLOCK, (int)d->block.x, (int)d->block.y, (int)d->block.z, XMT_F_SHARED,
                     (int)d->shared);
}

static json_t *times_json(const xmt_cand *c)
{
    json_t *a = json_array();
    for (int i = 0; i < c->ntimes; i++)
        json_array_append_new(a, json_real(c->times[i]));
    return a;
}

/* The candidates whose float outputs differed from the own config's by rounding alone
 * (rounding.h): how many, how many of them were rejected, the largest difference. */
typedef struct {
    size_t n, rejected;
    double max_rel;
} rounding_tally;

static rounding_tally tally_rounding(const xmt_session *S)
{
    rounding_tally t = {0, 0, 0};
    for (size_t i = 1; i <= S->cand.n; i++) {
        const xmt_cand *c = &S->cand.cands[i];
        if (!c->rounded) continue;
        t.n++;
        t.rejected += c->status == XMT_C_REJECTED;
        t.max_rel = fmax(t.max_rel, c->rel);
    }
    return t;
}

static void say_verbose(const xmt_session *S)
{
    const xmt_cand *own = &S->cand.cands[0];
    double own_t = own->status == XMT_C_OK && own->ntimes ? own->stat : NAN;
    if (xmt_opt.verbose >= 2)
        for (size_t i = 0; i <= S->cand.n; i++) {
            const xmt_cand *c = &S->cand.cands[i];
            if (c->status == XMT_C_OK && c->ntimes) {
                char el[64] = "";
                if (c->elim_round)
                    snprintf(el, sizeof el, "; eliminated by racing after round %d", c->elim_round);
                xmt_verbose(2, "%s: config %s took %.4f ms (%s of %d%s) for %s",
                            S->req.k->demangled, c->c.label, c->stat,
                            S->set.mean ? "mean" : "median", c->ntimes, el, S->req.key_text);
            } else if (c->status != XMT_C_OK && c->status != XMT_C_UNVISITED)
                xmt_verbose(2, "%s: config %s %s: %s", S->req.k->demangled, c->c.label,
                            c->status == XMT_C_REJECTED ? "rejected"
                            : c->status == XMT_C_FAULT  ? "faulted"
                                                        : "skipped",
                            c->why);
        }
    /* the decision may differ in another process: say so where the user looks */
    if (S->set.racing && S->timing.edge_left)
        xmt_verbose(1,
                    "%s: for %s, %zu config%s still measured at the edge of the tie limit after "
                    "%d rounds of re-timing: another process may choose another config within "
                    "the limit (pin one to make every process use it; docs/tuning.md, Racing, "
                    "\"The edge\")",
                    S->req.k->demangled, S->req.key_text, S->timing.edge_left,
                    S->timing.edge_left == 1 ? " was" : "s were", S->timing.edge_rounds);
    rounding_tally rt = tally_rounding(S);
    if (rt.rejected)
        xmt_verbose(1,
                    "%s: %zu config%s from the program's own for %s by float rounding "
                    "alone (the largest by %.2g times its output's largest magnitude) and "
                    "%s rejected: %s",
                    S->req.k->demangled, rt.rejected, rt.rejected == 1 ? " differs" : "s differ",
                    S->req.key_text, rt.max_rel, rt.rejected == 1 ? "was" : "were",
                    S->set.has_tol ? "beyond the tolerance allowed"
                                   : xmt_rounding_hint(S->req.k->entry));
    if (S->out.untuned[0]) {
        /* without a culprit xmt_tune_event has warned it already: said once */
        if (S->out.has_culprit)
            xmt_verbose(1, "%s: not tuned for %s: %s", S->req.k->demangled, S->req.key_text,
                        S->out.untuned);
    } else if (S->out.uninformative)
        xmt_verbose(1,
                    "%s: not decided for %s at this launch: its data proves nothing (what it "
                    "read and wrote repeats one value); a later launch tries again",
                    S->req.k->demangled, S->req.key_text);
    else if (S->req.verify_only && S->out.choice.index == XMT_OWN_CONFIG && S->cand.n >= 1 &&
             S->cand.cands[1].status != XMT_C_OK)
        /* the one config (pinned, single, cached) did not pass: not "used" */
        xmt_verbose(1, "%s: the program's own config stays for %s: %s%s %s", S->req.k->demangled,
                    S->req.key_text, S->req.from_cache ? "the cache's " : "",
                    S->cand.cands[1].c.label,
                    S->cand.cands[1].status == XMT_C_REJECTED ? "did not pass verification"
                    : S->cand.cands[1].status == XMT_C_FAULT  ? "faulted"
                                                              : "was skipped");
    else if (S->req.verify_only && S->req.from_cache)
        xmt_verbose(1, "%s: config %s from the cache (verified here, not benchmarked) for %s",
                    S->req.k->demangled, S->out.choice.label, S->req.key_text);
    else if (S->req.verify_only)
        xmt_verbose(1, "%s: config %s used without benchmark (%s) for %s", S->req.k->demangled,
                    S->out.choice.label, S->data.any_verify ? "verified" : "single config",
                    S->req.key_text);
    else if (xmt_opt.verbose >= 1) {
        size_t timed = 0, rejected = 0, skipped = 0;
        for (size_t i = 1; i <= S->cand.n; i++) {
            timed += S->cand.cands[i].status == XMT_C_OK && S->cand.cands[i].ntimes > 0;
            rejected += S->cand.cands[i].status == XMT_C_REJECTED;
            skipped += S->cand.cands[i].status == XMT_C_SKIPPED;
        }
        /* the own config is not timed when nothing else passed: no "nan ms" then */
        char own_s[64];
        if (isnan(own_t))
            snprintf(own_s, sizeof own_s, "not timed: no other config passed");
        else
            snprintf(own_s, sizeof own_s, "%.4f ms", own_t);
        if (S->out.choice.index == XMT_OWN_CONFIG)
            xmt_verbose(1,
                        "%s: the program's own config %s stays (%s) for %s; %zu config%s "
                        "timed, %zu rejected, %zu skipped, in %.1f ms (floor %.1f ms: the GPU "
                        "time of the measurements alone)%s",
                        S->req.k->demangled, S->out.choice.label, own_s, S->req.key_text, timed,
                        timed == 1 ? "" : "s", rejected, skipped, S->out.spent_ms, S->out.floor_ms,
                        S->out.error != CUDA_SUCCESS ? "; tuning stopped by an error" : "");
        else
            xmt_verbose(1,
                        "%s: config %s achieved the best time (%.4f ms; own %s, %.2fx) for "
                        "%s; %zu config%s timed, %zu rejected, %zu skipped, in %.1f ms (floor "
                        "%.1f ms: the GPU time of the measurements alone)",
                        S->req.k->demangled, S->out.choice.label, S->out.choice.time_ms, own_s,
                        own_t / S->out.choice.time_ms, S->req.key_text, timed,
                        timed == 1 ? "" : "s", rejected, skipped, S->out.spent_ms, S->out.floor_ms);
    }
}

/* Where the session's time went; "other" is what no phase accounts for. */
static xmt_ev_phases phases_of(const xmt_session *S)
{
    const xmt_phases *p = &S->out.ph;
    double sum = p->module_load + p->clock_warmup + p->snapshot + p->verification + p->warmup_runs +
                 p->timed_runs + p->restores + p->put_back;
    double other = S->out.spent_ms - sum;
    return (xmt_ev_phases){p->module_load,  p->clock_warmup, p->snapshot,
                           p->verification, p->warmup_runs,  p->timed_runs,
                           p->restores,     p->put_back,     other > 0 ? other : 0.0};
}

/* What auto protection found: the regions, the bytes of outputs (all of them counted as
 * written whole when the in-place check was never needed), how they are verified. */
static json_t *protect_json(const xmt_session *S)
{
    if (!S->set.automatic) return json_string("declared");
    size_t pure = 0, in_place = 0;
    for (size_t i = 0; i < S->data.nspans; i++)
        *(S->data.spans[i].pure ? &pure : &in_place) += S->data.spans[i].bytes;
    return json_pack(
        "{sssIsIsIsIsbss}", XMT_F_MODE, "auto", XMT_F_REGIONS, (json_int_t)S->out.regions_found,
        XMT_F_REGION_BYTES, (json_int_t)S->out.region_bytes, XMT_F_OUTPUT_BYTES, (json_int_t)pure,
        XMT_F_IN_PLACE_BYTES, (json_int_t)in_place, XMT_F_IN_PLACE_CHECKED, S->data.in_place_known,
        XMT_F_VERIFY_ON, S->out.verified_on_gpu ? "gpu" : "host");
}

/* A config's times: its statistic and every timed run; when racing stopped timing it,
 * after which round and the runs it got. */
static void times_into(json_t *o, const xmt_session *S, const xmt_cand *c)
{
    if (!c->ntimes) return;
    json_object_set_new(o, S->set.mean ? XMT_F_MEAN_MS : XMT_F_MEDIAN_MS, json_real(c->stat));
    json_object_set_new(o, XMT_F_TIMES_MS, times_json(c));
    if (c->status == XMT_C_OK && c->elim_round)
        json_object_set_new(o, XMT_F_ELIMINATED,
                            json_pack("{sisisi}", XMT_F_ROUND, c->elim_round, XMT_F_TIMED_RUNS,
                                      c->ntimes, XMT_F_WARMUP_RUNS, c->warmed));
}

/* One candidate (or the program's own) as the event reports it. */
static json_t *candidate_json(const xmt_session *S, const xmt_cand *c)
{
    xmt_dims d = c->index == XMT_OWN_CONFIG ? S->req.v->orig : c->c.dims;
    json_t *o = dims_json(&d);
    json_object_set_new(o, XMT_F_CONFIG, json_string(c->c.label));
    const char *idiom = c->index == XMT_OWN_CONFIG ? NULL : xmt_auto_idiom_of(c->c.label);
    if (idiom) json_object_set_new(o, XMT_F_AUTO, json_pack("{ss}", XMT_F_IDIOM, idiom));
    int family = c->status == XMT_C_SKIPPED && c->skipped_after_fault;
    json_object_set_new(o, XMT_F_STATUS,
                        json_string(c->status == XMT_C_OK        ? "ok"
                                    : family                     ? "skipped_after_fault"
                                    : c->decided_earlier         ? "decided_earlier"
                                    : c->status == XMT_C_SKIPPED ? "skipped"
                                    : c->status == XMT_C_FAULT   ? "fault"
                                                                 : "rejected"));
    if (c->status != XMT_C_OK) json_object_set_new(o, XMT_F_WHY, json_string(c->why));
    if (family)
        json_object_set_new(o, XMT_F_AFTER_FAULT,
                            json_pack("{sIss}", XMT_F_INDEX, (json_int_t)c->after_fault,
                                      XMT_F_CONFIG, c->after_fault_label));
    times_into(o, S, c);
    if (c->rounded)
        json_object_set_new(o, XMT_F_ROUNDING, json_pack("{sf}", XMT_F_MAX_REL, c->rel));
    if (c->c.nargs) {
        json_t *args = json_array();
        for (unsigned a = 0; a < c->c.nargs; a++)
            json_array_append_new(args, json_pack("{sisI}", XMT_F_PARAM, (int)c->c.args[a].param,
                                                  XMT_F_VALUE, (json_int_t)c->c.args[a].value));
        json_object_set_new(o, XMT_F_ARGS, args);
    }
    return o;
}

/* The error that stopped tuning, "CUDA_ERROR_... at where", or NULL. */
static json_t *error_json(const xmt_session *S)
{
    if (S->out.error == CUDA_SUCCESS) return NULL;
    char b[32];
    return json_sprintf("%s at %s", xmt_cu_name(S->out.error, b, sizeof b),
                        S->out.error_at ? S->out.error_at : "?");
}

/* Whether the clock warm-up ran and, when not, why: a test or a reader learns from the log
 * that a tuning followed another closely enough to skip it, instead of assuming so. */
static json_t *clock_warmup_json(const xmt_session *S)
{
    json_t *o = json_pack("{sbsf}", "ran", S->timing.warmup_fate == XMT_WARMUP_RAN, "still_up_ms",
                          XMT_CLOCK_STILL_UP_MS);
    if (S->timing.since_last_ms >= 0)
        json_object_set_new(o, "since_last_tuning_ms", json_real(S->timing.since_last_ms));
    const char *off = "warm-up time 0 (XMATUNE_WARMUP_MS or the entry's warmup_ms)";
    if (S->timing.warmup_fate == XMT_WARMUP_OFF)
        json_object_set_new(o, "why", json_string(off));
    else if (S->timing.warmup_fate == XMT_WARMUP_BUDGET)
        json_object_set_new(o, "why", json_string("the key's budget (budget_ms) was spent"));
    else if (S->timing.warmup_fate == XMT_WARMUP_STILL_UP)
        json_object_set_new(
            o, "why", json_sprintf("another tuning ended %.1f ms before", S->timing.since_last_ms));
    return o;
}

/* The data the comparisons ran on (docs/tuning.md, "Data that proves nothing"): NULL
 * when no reference was taken. */
/* The helper's driver calls during the session (drvtime.h): {"cuStreamSynchronize":
 * {"calls": 14, "ms": 3.2}, ...}, the entry points it called, in drvtime.h's order; NULL
 * when they were not counted (the session ran in the program's process). */
static json_t *driver_calls_json(const xmt_session *S)
{
    if (!S->out.has_drv) return NULL;
    json_t *o = json_object();
    for (int i = 0; o && i < XMT_DT_COUNT; i++)
        if (S->out.drv.calls[i])
            json_object_set_new(o, xmt_drvtime_name(i),
                                json_pack("{sIsf}", "calls", (json_int_t)S->out.drv.calls[i], "ms",
                                          S->out.drv.ms[i]));
    return o;
}

static json_t *data_json(const xmt_session *S)
{
    if (!S->out.uninformative && !S->out.data_digest[0]) return NULL;
    json_t *o = json_pack("{sb}", XMT_F_INFORMATIVE, !S->out.uninformative);
    if (!o) return NULL;
    if (S->out.data_digest[0])
        json_object_set_new(o, XMT_F_DIGEST, json_string(S->out.data_digest));
    if (S->out.uninformative)
        json_object_set_new(o, XMT_F_WHY,
                            json_string("what the launch read and what it wrote each repeats one "
                                        "value: a wrong config can give the same answer"));
    if (S->req.record_data)
        json_object_set_new(o, XMT_F_SAME_AS_RECORD,
                            json_boolean(S->out.data_digest[0] &&
                                         strcmp(S->req.record_data, S->out.data_digest) == 0));
    return o;
}

/* Racing and the tie rule, when benchmarked (race.h). */
static json_t *race_json(const xmt_session *S)
{
    json_t *o =
        json_pack("{sbsfsfsIsfsIsI}", XMT_F_RACE_ON, S->set.racing, XMT_F_TIE_LIMIT,
                  S->out.tie_limit, XMT_F_SELF_LEAD_US, S->set.self_lead_ms * 1000.0,
                  XMT_F_SELF_LEADS, (json_int_t)S->timing.self_leads, XMT_F_GATE_US,
                  S->set.gate_ms * 1000.0, XMT_F_GATED_ROUNDS, (json_int_t)S->timing.gated_rounds,
                  XMT_F_GATES_SHORT, (json_int_t)S->timing.gates_short);
    if (o && S->set.racing) {
        json_object_set_new(o, XMT_F_MARGIN, json_real(S->timing.race_margin));
        json_object_set_new(o, XMT_F_ELIMINATED, json_integer((json_int_t)S->timing.eliminated));
        json_object_set_new(o, XMT_F_FINALISTS, json_integer((json_int_t)S->timing.finalists));
        json_object_set_new(o, XMT_F_RETIME_ROUNDS, json_integer(S->timing.retime_rounds));
        json_object_set_new(o, XMT_F_EDGE_ROUNDS, json_integer(S->timing.edge_rounds));
        json_object_set_new(o, XMT_F_EDGE_LEFT, json_integer((json_int_t)S->timing.edge_left));
    }
    return o;
}

/* A searched space (policy/search.h): its size, the points visited, the budget, the start,
 * the seed and the restarts. */
static json_t *search_json(const xmt_session *S)
{
    if (!S->cand.searched) return NULL;
    return json_pack("{sIsIsIsIsisi}", XMT_F_SPACE, (json_int_t)(S->cand.n - S->cand.space_first),
                     XMT_F_VISITED, (json_int_t)S->search.visited, XMT_F_EVALS,
                     (json_int_t)S->search.search_evals, XMT_F_START,
                     (json_int_t)S->search.search_start, XMT_F_SEED, XMT_SEARCH_SEED,
                     XMT_F_RESTARTS, S->search.search_restarts);
}

/* Float outputs that differed by rounding alone (rounding.h), and the tolerance allowed:
 * NULL when neither. */
static json_t *rounding_json(const xmt_session *S)
{
    rounding_tally rt = tally_rounding(S);
    if (!rt.n && !S->set.has_tol) return NULL;
    json_t *o = json_pack("{sIsIsf}", XMT_F_ROUNDED, (json_int_t)rt.n, XMT_F_REJECTED,
                          (json_int_t)rt.rejected, XMT_F_MAX_REL, rt.max_rel);
    if (o && S->set.has_tol)
        json_object_set_new(
            o, XMT_F_TOLERANCE,
            json_pack("{sfsf}", XMT_F_RTOL, S->set.tol_rtol, XMT_F_ATOL, S->set.tol_atol));
    return o;
}

static void log_event(const xmt_session *S)
{
    const xmt_cand *own = &S->cand.cands[0];
    json_t *cl = json_array();
    json_t *winner = NULL;
    for (size_t i = 0; i <= S->cand.n; i++) {
        const xmt_cand *c = &S->cand.cands[i];
        if (c->status == XMT_C_UNVISITED) continue; /* a point the search did not visit */
        json_t *o = candidate_json(S, c);
        if (c->index == S->out.choice.index) winner = json_deep_copy(o);
        if (i == 0) {
            json_decref(o); /* the program's own: reported under "own" */
            continue;
        }
        json_object_set_new(o, XMT_F_INDEX, json_integer(c->index));
        json_array_append_new(cl, o);
    }
    json_t *owno = dims_json(&S->req.v->orig);
    json_object_set_new(owno, XMT_F_CONFIG, json_string(own->c.label));
    times_into(owno, S, own);
    if (!winner) winner = json_deep_copy(owno);
    json_object_set_new(winner, XMT_F_INDEX, json_integer(S->out.choice.index));
    int benchmarked = !S->req.verify_only && S->cand.valid > 0;
    xmt_ev_tune_info t = {.kernel = S->req.k->mangled,
                          .name = S->req.k->demangled,
                          .device = S->req.device,
                          .key = S->req.key_text,
                          .policy = xmt_entry_origin(S->req.k->entry),
                          .own = owno,
                          .candidates = cl,
                          .winner = winner,
                          .protect = protect_json(S),
                          .mean = S->set.mean,
                          .iterations = S->set.iterations,
                          .warmup = S->set.warmup,
                          .tolerance = S->data.tolerance || (S->set.has_tol && S->data.nextents),
                          .l2_flush = S->data.flush_buf != 0,
                          .verified = S->data.any_verify,
                          .benchmarked = benchmarked,
                          .from_cache = S->req.from_cache,
                          .trial = S->run.trial ? "helper" : "inline",
                          .tie_band = S->out.tie_band,
                          .duration_ms = S->out.spent_ms,
                          .floor_ms = S->out.floor_ms,
                          .full_floor_ms = S->out.full_floor_ms,
                          .race = benchmarked ? race_json(S) : NULL,
                          .search = search_json(S),
                          .rounding = rounding_json(S),
                          .budget_cut = S->run.cut,
                          .phases = phases_of(S),
                          .untuned = S->out.untuned,
                          .error = error_json(S),
                          .clock_warmup = S->timing.warmup_fate != XMT_WARMUP_NOT_REACHED
                                              ? clock_warmup_json(S)
                                              : NULL,
                          .data = data_json(S)};
    const xmt_phases *p = &S->out.ph;
    if (S->data.any_verify && p->verification > 0)
        t.verification_ms =
            json_pack("{sfsfsfsfsf}", "own_outputs", p->verify_own, "data_check", p->verify_data,
                      "candidate_runs", p->verify_runs, "comparisons", p->verify_compares,
                      "guard_bytes", p->verify_guard);
    t.driver_calls = driver_calls_json(S);
    if (S->run.trial)
        t.staged =
            json_pack("{sIsIsbsfsIsI}", "bytes", (json_int_t)S->run.trial->staged_bytes, "windows",
                      (json_int_t)S->run.trial->nwin, "moved", S->run.trial->moved, "staging_ms",
                      S->run.trial->staging_ms, "guard_bytes", (json_int_t)S->check.slack.total,
                      "guard_va", (json_int_t)S->run.trial->guard_va);
    xmt_log_event(xmt_ev_tune(&t));
}

void xmt_tune_event(const xmt_session *S)
{
    XMT_ASSERT(!S->req.recheck && S->cand.cands && S->req.key_text, "tune event: a re-check");
    /* here, not at the session's end: a re-check that could not tell (its data changed
     * nothing, say) keeps its winner, and says so in its own event */
    if (S->out.untuned[0] && !S->out.has_culprit)
        xmt_warn("%s: key %s is not tuned: %s; the program's own config is used",
                 S->req.k->demangled, S->req.key_text, S->out.untuned);
    say_verbose(S);
    if (xmt_log_enabled()) log_event(S);
}

/* Keys whose re-check told nothing, said once each: a kernel run again on the data it
 * wrote tells nothing at every re-check, and the verbose line would repeat at 1, 8, 64,
 * ... launches (the log keeps every event). A hash of (kernel, device, key) per slot,
 * inserted without a lock; a full table stops remembering, and lines are said again. */
#define UNTOLD_SLOTS 1024
static uint64_t untold_said[UNTOLD_SLOTS];

static int untold_first_time(const xmt_session *S)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const char *parts[] = {S->req.k->mangled ? S->req.k->mangled : "", S->req.key_text};
    for (size_t p = 0; p < 2; p++) {
        for (const char *c = parts[p]; *c; c++)
            h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
        h = (h ^ 0xff) * 0x100000001b3ull;
    }
    h = (h ^ (uint64_t)(unsigned)S->req.device) * 0x100000001b3ull;
    if (!h) h = 1; /* 0 is a free slot */
    for (size_t i = 0; i < UNTOLD_SLOTS; i++) {
        uint64_t *slot = &untold_said[(h + i) % UNTOLD_SLOTS], free_slot = 0;
        if (__atomic_load_n(slot, __ATOMIC_RELAXED) == h) return 0;
        if (__atomic_compare_exchange_n(slot, &free_slot, h, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
        if (free_slot == h) return 0;
    }
    return 1;
}

void xmt_recheck_event(const xmt_session *S)
{
    XMT_ASSERT(S->req.recheck && S->cand.cands, "re-check event of a session that is not one");
    const xmt_cand *w = S->cand.n ? &S->cand.cands[1] : NULL;
    const char *outcome = "passed", *why = NULL;
    if (S->out.error != CUDA_SUCCESS || S->out.untuned[0] || S->out.uninformative || !w) {
        outcome = "untold";
        why = S->out.uninformative ? "what the launch read and what it wrote each repeats one value"
              : S->out.untuned[0]  ? S->out.untuned
              : S->out.error_at    ? S->out.error_at
                                   : "the winner does not apply to this launch";
    } else if (S->out.choice.index != w->index) {
        outcome = "failed";
        why = w->why;
    }
    /* the first session found the outputs: advice about declaring them does not fit */
    const char *advice = why ? strstr(why, XMT_DECLARE_ADVICE) : NULL;
    int why_len = why ? (int)(advice ? (size_t)(advice - why) : strlen(why)) : 0;
    if (strcmp(outcome, "untold") != 0 || untold_first_time(S))
        xmt_verbose(1, "%s: re-check of %s for %s on this launch's data: %s%s%.*s%s",
                    S->req.k->demangled, w ? w->c.label : "?", S->req.key_text, outcome,
                    why ? ": " : "", why_len, why ? why : "",
                    strcmp(outcome, "untold") == 0
                        ? "; the winner stays (later re-checks that tell nothing are not said)"
                        : "");
    if (xmt_log_enabled())
        xmt_log_event(xmt_ev_recheck(S->req.k->mangled, S->req.k->demangled, S->req.device,
                                     S->req.key_text, xmt_entry_origin(S->req.k->entry),
                                     w ? w->c.label : "?", outcome, why, data_json(S),
                                     S->run.trial ? "helper" : "inline", S->out.spent_ms));
}
