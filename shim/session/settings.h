/*
 * settings: what a tuning session of a policy entry is set to, resolved once: the entry's
 * value, else the option's (XMATUNE_*), else the option's default.
 *
 * A session resolves them when it starts (xmt_settings_resolve) and reads only the struct
 * from then on. The two rules that others ask of an entry without a session -- whether
 * its launches are protected automatically (plan.c: it is part of the cache identity and
 * decides whether a pin is verified) and whether its float outputs are compared within a
 * tolerance (trialtune.c: the fidelity check compares as the candidates were) -- live here
 * too, so that each rule is written once.
 */
#ifndef XMT_SETTINGS_H
#define XMT_SETTINGS_H

#include "xmt_policy.h"

typedef struct {
    int warmup;          /* warm-up runs per candidate (warmup:, XMATUNE_WARMUP) */
    int iterations;      /* timed rounds (iterations:, XMATUNE_ITERATIONS), 1..XMT_MAX_ITERATIONS */
    int mean;            /* the statistic is the mean (else the median) */
    int flush;           /* the L2 is flushed before every timed run */
    double budget_ms;    /* the key's tuning budget (< 0: none) */
    double warmup_ms;    /* clock warm-up by time */
    double self_lead_ms; /* a candidate faster than this has a self lead-in (0: none) */
    double gate_ms;      /* a round with a candidate faster than this is gated (0: never) */
    int racing;          /* racing (race.h) is on for this key */
    int cap;             /* the timed runs a candidate's times hold */
    int automatic;       /* protect: auto (protect.h) */
    int has_tol;         /* the entry's tolerance: (auto): float extents compared within it */
    double tol_rtol, tol_atol;
} xmt_settings;

/* The settings of a session of entry e (verify_only: a pin or a single config, which is
 * verified, not benchmarked: it does not race). */
void xmt_settings_resolve(const xmt_entry *e, int verify_only, xmt_settings *s);

/* 1 when the entry's launches are protected automatically (its protect:, else
 * XMATUNE_PROTECT). */
int xmt_settings_protects_auto(const xmt_entry *e);

/* 1 with *rtol, *atol when the entry's float outputs are compared within its tolerance:
 * protected automatically, with a tolerance: that is not 0 (rounding.h). */
int xmt_settings_tolerance(const xmt_entry *e, double *rtol, double *atol);

#endif
