/*
 * session_types: the types of a tuning session (session.h), shared by the session's
 * phases (session_base.c, session_cands.c, session_data.c, session_verify.c,
 * session_timing.c, session_search.c, session.c) and by those who read a session after it
 * ran (tune_event.c, plan.c, the trial helper). A header of types alone: the phases
 * include it rather than session.h, whose module (session.c) uses them all.
 */
#ifndef XMT_SESSION_TYPES_H
#define XMT_SESSION_TYPES_H

#include <cuda.h>

#include "cache.h"
#include "drvtime.h"
#include "gpucheck.h"
#include "invariant.h"
#include "kernels.h"
#include "launch.h"
#include "outputs.h"
#include "protect.h"
#include "rounding.h"
#include "settings.h"
#include "slack.h"
#include "xmt_policy.h"

#define XMT_PIN_CONFIG (-2) /* the choice is a pin (or single config) of the entry */

/* A candidate's fate. XMT_C_FAULT: it faulted on the GPU or ran past the watchdog in the
 * trial helper (a session there never runs it again: the helper was restarted).
 * XMT_C_UNVISITED: a point of a searched space (search.h) the search did not visit: never
 * built, run or reported (the tune event lists the visited points only). */
enum { XMT_C_OK = 0, XMT_C_SKIPPED, XMT_C_REJECTED, XMT_C_FAULT, XMT_C_UNVISITED };

/* What a session in the trial helper is given besides the launch (trial/tune.c): the
 * regions staged for it (protect.c's, found in the program, at the addresses the helper
 * sees them), the windows they are mapped in (where the helper has them: their bytes
 * outside the regions are its guard bytes, slack.h), and the candidates that faulted in an
 * earlier helper, by index, with why. */
typedef struct {
    const xmt_region *regs;
    size_t nregs;
    const CUdeviceptr *win;
    const size_t *win_bytes;
    size_t nwin;
    const long *faulted;
    char (*faulted_why)[160];
    char (*faulted_key)[160]; /* "" this key's, else the other key it faulted at (family.h) */
    size_t nfaulted;
    size_t staged_bytes; /* the staging memory mapped for it */
    int moved;           /* 1: not at the program's addresses (pointer arguments translated) */
    size_t guard_va;     /* address space left unmapped each side of the mapping (trial/tune.c) */
    double staging_ms;   /* what the program spent on it (regions, copies, globals) */
    double module_ms;    /* the helper's load of the kernel's code before the session: the
                          * program's module (a new image) and the function (cuFuncLoad);
                          * counted in the session's module_load and duration */
    const xmt_drvtime *drv0; /* the driver-call sums before that load (drvtime.h), or NULL */
    int in_place_first;      /* a candidate faulted from unsorted outputs in an earlier helper:
                              * the in-place check runs before any candidate (outputs()) */
} xmt_trial_in;

typedef struct {
    xmt_candidate c;
    long index; /* XMT_OWN_CONFIG for the program's own */
    int status; /* XMT_C_* */
    char why[300];
    double *times;
    int ntimes;
    double stat;
    int warmed;               /* warm-up runs it had */
    int elim_round;           /* racing stopped timing it after this round (0: it did not) */
    int in_round;             /* it ran in the timed round being read: its place in the
                               * round's launch order (1, 2, ...), 0 when it did not */
    int rounded;              /* its float outputs differed from the own config's by
                                 rounding alone (rounding.h): rel says how much */
    double rel;               /* every difference within rel times its output's scale */
    CUevent start, end, prep; /* prep: before its restores and resets */
    /* skipped (XMT_C_SKIPPED) because after_fault, a candidate that faulted in an earlier
     * helper, condemns it (family.h) */
    int skipped_after_fault;
    int decided_earlier; /* skipped (XMT_C_SKIPPED): req.decided has it */
    long after_fault;
    char after_fault_label[160];
} xmt_cand;

/* Where the time of a session went (ms), as the tune event reports it. verify_*: the
 * parts of verification (its `verification_ms`): the program's own config's outputs runs,
 * the data check, the candidates' verify runs (their poison, launch and wait), the
 * comparisons after them (with the rounding measure and a rejection's description and
 * put-back), and the guard bytes' checks. */
typedef struct {
    double module_load, clock_warmup, snapshot, verification, warmup_runs, timed_runs, restores,
        put_back;
    double verify_own, verify_data, verify_runs, verify_compares, verify_guard;
} xmt_phases;

/* A tuning that ended this recently left the GPU clock up: no clock warm-up needed. */
#define XMT_CLOCK_STILL_UP_MS 200.0

/* What became of a session's clock warm-up (the tune event's `clock_warmup`). */
enum {
    XMT_WARMUP_NOT_REACHED = 0, /* nothing was to be timed, or the session stopped before */
    XMT_WARMUP_RAN,
    XMT_WARMUP_OFF,      /* warmup_ms is 0 */
    XMT_WARMUP_STILL_UP, /* another tuning ended less than XMT_CLOCK_STILL_UP_MS before */
    XMT_WARMUP_BUDGET,   /* the key's budget was spent before it */
};

/* What a session is asked for, built once by whoever asks (plan.c for a session in the
 * program; in the trial helper, its request reader, trial/tune.c; trialtune.c sends the
 * same to the helper) and passed down whole rather than as positional arguments. The
 * session keeps a copy (xmt_session.req); the pointers are the caller's and must outlive
 * xmt_session_free. */
typedef struct {
    xmt_kernel *k;
    const xmt_launch *l;
    const xmt_launch_view *v;
    const char *key_text; /* the key's rendering, for messages */
    int device;
    int verify_only;           /* a pin or a single config: verified, not benchmarked */
    const xmt_candidate *only; /* that config, or NULL */
    long only_index;           /* its index: XMT_PIN_CONFIG, or a cached winner's */
    int from_cache;            /* that winner came from the disk (logged) */
    int recheck;               /* a re-check of a decided winner (a `recheck` event) */
    const char *record_data;   /* the cached record's data digest, or NULL */
    /* a partial record's candidates decided not to win in an earlier run ("1 4 9", cacherec.h),
     * or NULL: skipped, and said so (docs/tuning.md, "Resuming a session cut at exit") */
    const char *decided;
} xmt_session_req;

/* One session, grouped by who writes what: what is tuned (the request), its settings,
 * the state of each phase (the candidates, the data, the verification, the timed runs,
 * the search, the run as a whole), and what came of it (out: read by the tune event,
 * plan.c and the trial helper's report after the session). */
typedef struct {
    xmt_session_req req; /* what is tuned (the caller's) */
    xmt_settings set;    /* settings (the entry's, else the options': settings.h) */
    /* the run as a whole (session.c, session_base.c) */
    struct {
        CUstream s;                 /* the launch's stream: every copy and run of the session */
        const xmt_trial_in *trial;  /* in the trial helper; NULL: in the program's process */
        double t0;                  /* when it began */
        const char *cut;            /* the phase the budget cut short ("verify", ...), or NULL */
        double progress_ms;         /* when the last progress line was said */
        const char *progress_phase; /* what it says: "verify" 3 of 30 */
        size_t progress_done, progress_total;
        double progress_phase_ms; /* when that phase began: the estimate of the time left */
        unsigned progress_key;    /* this session's key, counted in the process (1, 2, ...) */
        double own_ms; /* wall time of the program's own config's first run (the watchdog) */
        char deadline_at[160];    /* in the trial helper, the deadline a run went past (error_at) */
        const xmt_cand *last_run; /* the candidate launched last */
        /* in a timed round: other candidates' runs queued, not waited for, before the
         * launch going on (a failure it reports may be theirs) */
        int queued;
        CUstreamCaptureMode capture_mode;
        int capture_swapped;
    } run;
    /* candidates (session_cands.c): [0] the program's own, [1..n] the policy's */
    struct {
        xmt_cand *cands;
        size_t n, valid;
        double *times;
        int allowed_dyn; /* allowed_dynamic_shared, asked once */
        /* the space is searched rather than tried in full (session_search.c): its points
         * are candidates space_first + 1 ... */
        int searched;
        size_t space_first;
    } cand;
    /* the data (session_data.c): the declared buffers, auto protection's regions, their
     * outputs and the comparisons */
    struct {
        xmt_sbuf *bufs; /* declared buffers */
        size_t nbufs;
        int snapshots_taken, any_verify, tolerance;
        /* protect: auto (protect.h, set.automatic): the regions, their outputs, and the
         * comparisons */
        xmt_region *regs;
        size_t nregs, out_bytes;
        xmt_span *spans;
        size_t nspans;
        xmt_gc_cmp *segs;
        uint8_t *seg_kind; /* per comparison (auto): an output piece, outside, or mixed */
        size_t nsegs;
        xmt_gc_result *results;
        /* the buffers compared apart: the declared ones, then the float extents
         * (rounding.h), with the extents' names; per comparison, its buffer (-1: none) */
        xmt_sbuf *segbufs;
        size_t nsegbufs, nextents;
        char (*ext_names)[XMT_EXTENT_NAME];
        double *ext_scale; /* per segbufs entry: its reference's largest magnitude, -1 unread */
        int32_t *seg_buf;
        double scratch_limit;
        size_t scratch_bytes;
        CUdeviceptr flush_buf;
        size_t flush_bytes;
        int own_repeat_due; /* outputs updated in place: own_repeats() may still run */
        /* auto protection: whether the program's own config ran again from poisoned
         * outputs to tell those it writes whole from those it updates in place
         * (in_place_check); until it has, every output is poisoned before a verify run */
        int in_place_known;
    } data;
    /* verification (session_verify.c) */
    struct {
        xmt_gc gc;
        int gc_opened;     /* xmt_gc_open ran for this session */
        int in_verify_run; /* a verify run is going on (blame: from unsorted outputs?) */
        xmt_slack slack;   /* its guard bytes (slack.h); none outside the helper */
    } check;
    /* the timed runs (session_timing.c) */
    struct {
        int warmup_fate;      /* XMT_WARMUP_*: whether it ran, and why not */
        double since_last_ms; /* at the warm-up: since another tuning ended; -1: none did */
        /* racing (race.h, when set.racing): the margin of the last elimination; candidates
         * eliminated; finalists re-timed, and the rounds; the edge's rounds (race.h,
         * xmt_race_edge), and the candidates still at it after them */
        double race_margin;
        size_t eliminated, finalists, edge_left;
        int retime_rounds, edge_rounds;
        long
            self_leads; /* untimed runs of a candidate right before its timed run, lead-ins aside */
        /* gated rounds (timed_round): the next gate's length, the event after the gate, and
         * how many rounds were gated, and of those how many were queued only after it ended */
        double gate_next_ms;
        CUevent gate_ev;
        long gated_rounds, gates_short;
    } timing;
    /* the search (session_search.c, policy/search.h): the start, the budget in points, how
     * many were visited, the search's restarts */
    struct {
        int search_restarts;
        size_t search_start, search_evals, visited;
    } search;
    /* what came of it (session.c's decide and the failures on the way) */
    struct {
        xmt_choice choice;
        CUresult error; /* first driver failure; ends the session */
        const char *error_at;
        char untuned[300];           /* why the key keeps the program's own config untuned, or "" */
        const char *untuned_outcome; /* the outcome that goes on record with it (XMT_OUTCOME_*) */
        /* The data the verification ran on (docs/tuning.md, "Data that proves nothing"). */
        int uninformative;    /* it proves nothing: nothing is decided, the key waits */
        char data_digest[17]; /* a digest of the reference (hex), "" when none was taken */
        double spent_ms, floor_ms;
        double full_floor_ms; /* what timing every candidate in full would have cost */
        double tie_band;      /* relative: 4 standard errors of a difference (race.h) */
        double tie_limit;     /* medians within it of the best tie (decide) */
        xmt_phases ph;
        size_t regions_found, region_bytes; /* kept for the event after release */
        int verified_on_gpu;
        int reference_staged; /* the regions hold the program's own config's result now */
        /* the helper's driver calls during the session (drvtime.h); has_drv when counted
         * (the helper wraps them) */
        xmt_drvtime drv;
        int has_drv;
        long culprit; /* the candidate that faulted or hung (index), when one did */
        int has_culprit;
        /* the culprit faulted in a verify run from outputs poisoned before the in-place
         * check: what it read there may be the poison (the program retries with the check
         * first) */
        int culprit_unsorted;
    } out;
} xmt_session;

/* (session_base.c) Called while a session waits for the GPU and between its phases (NULL: nothing).
 * The trial helper's heartbeat: a helper that stops calling it is hung. */
extern void (*xmt_session_tick)(void);

/* (session_base.c) Called when a session decides that candidate index cannot win (rejected by
 * its verification, or stopped by racing; NULL: nothing). The trial helper streams it to the
 * program (XMT_TP_DECIDED), which keeps it for a session its exit cuts. */
extern void (*xmt_session_decided)(long index);

/* The advice that ends an untuned "changed no byte" why under a policy's entry; a
 * re-check's verbose line leaves it out (its first session found the outputs). */
#define XMT_DECLARE_ADVICE "; else declare them in verify: or use protect: declared"

#endif
