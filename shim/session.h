/*
 * session: one tuning session — the benchmark of every candidate configuration of one
 * (device, kernel, key), with the data protected.
 *
 * The phases, each a function of session.c: settings (iterations, statistic, budget),
 * candidates (the program's own first, the policy's after it, invalid ones skipped with
 * a reason), buffers (evaluate and snapshot every declared buffer before anything runs),
 * verify (each candidate once against the program's own on the same inputs), warm-up
 * (by time, then untimed runs), timed runs (round-robin, rotating start), put-back,
 * decide. Any driver failure ends the session: the buffers are put back and the
 * program's own config is the choice. The outcome stays in the session for the tune
 * event (tune_event.c) until xmt_session_free.
 */
#ifndef XMT_SESSION_H
#define XMT_SESSION_H

#include <cuda.h>

#include "cache.h"
#include "kernels.h"
#include "launch.h"
#include "xmt_policy.h"

#define XMT_PIN_CONFIG (-2) /* the choice is a pin (or single config) of the entry */

enum { XMT_C_OK = 0, XMT_C_SKIPPED, XMT_C_REJECTED };

typedef struct {
    xmt_candidate c;
    long index; /* XMT_OWN_CONFIG for the program's own */
    int status; /* XMT_C_* */
    char why[300];
    double *times;
    int ntimes;
    double stat;
    CUevent start, end;
} xmt_cand;

typedef struct {
    xmt_buffer b;
    CUdeviceptr ptr, snap;
    uint8_t *host_ref, *host_got;
} xmt_sbuf;

typedef struct {
    /* what is tuned */
    xmt_kernel *k;
    const xmt_launch *l;
    const xmt_launch_view *v;
    const char *key_text;
    int device;
    int verify_only;           /* a pin or a single config: verified, not benchmarked */
    const xmt_candidate *only; /* that config, or NULL */
    CUstream s;
    /* settings (the entry's, else the options') */
    int warmup, iterations, mean, flush;
    double budget_ms;
    /* candidates: [0] the program's own, [1..n] the policy's */
    xmt_cand *cands;
    size_t n, valid;
    double *times;
    /* declared buffers */
    xmt_sbuf *bufs;
    size_t nbufs;
    int snapshots_taken, any_verify, tolerance;
    CUdeviceptr flush_buf;
    size_t flush_bytes;
    CUstreamCaptureMode capture_mode;
    int capture_swapped;
    /* outcome */
    CUresult error; /* first driver failure; ends the session */
    const char *error_at;
    double t0, spent_ms;
    xmt_choice choice;
} xmt_session;

/* Runs a whole session and fills S->choice (the program's own config on any failure).
 * Returns -1 only when the session could not start (out of memory, said once). */
int xmt_session_run(xmt_session *S, xmt_kernel *k, const xmt_launch *l, const xmt_launch_view *v,
                    const char *key_text, int device, int verify_only, const xmt_candidate *only);

/* Frees what the session kept for the report. */
void xmt_session_free(xmt_session *S);

/* Milliseconds of CLOCK_MONOTONIC. */
double xmt_now_ms(void);

#endif
