/*
 * session_timing: the timed part of a session -- the clock warm-up by time (not when
 * another tuning just ended: the clock is still up), warm-up runs, timed rounds
 * (round-robin, the start rotating, a lead-in run first, gated when runs are short), and
 * racing between rounds with the finalists and the edge re-timed (race.h).
 */
#ifndef XMT_SESSION_TIMING_H
#define XMT_SESSION_TIMING_H

#include "session_types.h"

/* A session ended (any thread's): the next one's clock warm-up may be needed no more. */
void xmt_sess_timing_ended(void);

/* The GPU by time with the program's own config, so that the clock is up before the
 * first candidate is timed; not when a tuning just ended (the clock is still up). */
int xmt_sess_clock_warm_up(xmt_session *S);

/* Warm-up runs of candidate c: with racing, once the clock is up, one (the verification
 * run has loaded its code already); none for the program's own config when the clock
 * warm-up ran, which ran that config over and over for warmup_ms (its warm-up run was one
 * more run of the slowest config, often: saxpy's own took 30 times the best's). */
int xmt_sess_warm_runs(const xmt_session *S, const xmt_cand *c);

/* c's untimed runs, waited for, so that the watchdog knows whom to stop. */
int xmt_sess_warm_one(xmt_session *S, xmt_cand *c, int runs);

/* Untimed runs of each candidate (warm_runs). */
int xmt_sess_warm_up(xmt_session *S);

/* Restores and resets run before every timed run when the policy declares them. */
int xmt_sess_has_prep(const xmt_session *S);

/* One round of timed runs: every candidate in it (in_round) once, starting from the it-th
 * of them; the first after a lead-in run of itself, a short one (self_lead) too. */
int xmt_sess_timed_round(xmt_session *S, int it, int prep, const unsigned char *only);

/* Racing, after timed round `round`: the candidates race.c says are slower than the leader
 * by more than the noise explains are timed no more. Returns how many are still raced. */
size_t xmt_sess_eliminate(xmt_session *S, int round);

/* Agreement (racing only): the finalists (race.c: within twice the tie limit of the best)
 * are timed again in interleaved rounds, A B A B ..., half as many as the timed rounds
 * (3 at least), before the decision, so that the tie rule reads medians of more runs
 * taken side by side. Half: a memory-bound kernel's plateau makes a dozen finalists, and
 * full rounds of them cost more than racing saved (the recorded H200 timings). Then the
 * edge, below. */
int xmt_sess_retime(xmt_session *S, int prep);

/* The events c's timed runs are measured with, made when it first needs them. */
int xmt_sess_make_events(xmt_session *S, xmt_cand *c, int prep);

/* Timed runs, round-robin so that clock drift favours no candidate; the starting
 * candidate rotates each round. Racing eliminates candidates between rounds and ends the
 * rounds when one is left; the finalists are then re-timed. A budget ends it early: the
 * decision is made from what was measured (at least one round, which decides). */
int xmt_sess_timed_runs(xmt_session *S);

#endif
