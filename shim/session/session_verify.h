/*
 * session_verify: verification -- each candidate run once (twice from a second poison
 * when its first run matched and the comparison kernels are not on the GPU) against the
 * program's own config on the same inputs and compared on the GPU (gpucheck.c); a
 * difference is described in the policy's terms, or told as float rounding alone
 * (rounding.h); what a rejected candidate changed outside the outputs is put back. In
 * the trial helper, the guard bytes around the staged memory (slack.h) reject a
 * candidate that writes past the program's allocations.
 */
#ifndef XMT_SESSION_VERIFY_H
#define XMT_SESSION_VERIFY_H

#include "session_types.h"

/* In the trial helper, before anything runs: the slack of the staged windows (their bytes
 * outside every region), a buffer of the pattern to compare it with, and every byte of it
 * filled. Only where candidates are verified (the comparison kernels are open). Returns
 * 0, 1 untuned (scratch), -1 failure. */
int xmt_sess_guard_arm(xmt_session *S);

/* The guard bytes' pattern freed (not after a failure in the helper, which exits: a free
 * could wait on a run that never ends); their count is kept for the tune event. */
void xmt_sess_guard_release(xmt_session *S);

/* A candidate's verification: its runs compared with the program's own result, and, in
 * the trial helper, its guard bytes checked. 1 untuned, -1 on a driver failure. */
int xmt_sess_verify_one(xmt_session *S, xmt_cand *c);

/* Verify: every candidate once against the program's own config on the same inputs; a
 * candidate that leaves anything different is rejected. The clock warm-up runs as soon as
 * one passes. Returns 0, 1 untuned (the own config wrote guard bytes), -1 failure. */
int xmt_sess_verify(xmt_session *S);

#endif
