/*
 * settings: a session's settings, the entry's value else the option's (see settings.h).
 */
#include "settings.h"

#include <string.h>

#include "options.h"
#include "race.h"

void xmt_settings_resolve(const xmt_entry *e, int verify_only, xmt_settings *s)
{
    memset(s, 0, sizeof *s);
    s->warmup = xmt_entry_warmup(e) >= 0 ? xmt_entry_warmup(e) : xmt_opt.warmup;
    s->iterations = xmt_entry_iterations(e) >= 0 ? xmt_entry_iterations(e) : xmt_opt.iterations;
    if (s->iterations < 1) s->iterations = 1;
    if (s->iterations > XMT_MAX_ITERATIONS) s->iterations = XMT_MAX_ITERATIONS;
    /* an entry that asks for its count of runs gets exactly that (docs/policy.md) */
    s->racing = xmt_opt.race && xmt_entry_iterations(e) < 0 && !verify_only;
    /* room for the finalists' re-timing rounds and the edge's */
    s->cap = s->racing ? 2 * s->iterations + XMT_EDGE_ROUNDS : s->iterations;
    if (s->cap > XMT_MAX_ITERATIONS) s->cap = XMT_MAX_ITERATIONS;
    s->mean =
        xmt_entry_use_mean(e) >= 0 ? xmt_entry_use_mean(e) : xmt_opt.statistic == XMT_STAT_MEAN;
    s->flush = xmt_entry_l2_flush(e) >= 0 ? xmt_entry_l2_flush(e) : xmt_opt.l2_flush;
    s->budget_ms = xmt_entry_budget_ms(e) >= 0 ? xmt_entry_budget_ms(e) : xmt_opt.budget_ms;
    s->warmup_ms = xmt_entry_warmup_ms(e) >= 0 ? xmt_entry_warmup_ms(e) : xmt_opt.warmup_ms;
    /* an L2 flush before every timed run leaves nothing for a run of itself to set up */
    s->self_lead_ms = s->flush ? 0 : xmt_opt.self_lead_us / 1000.0;
    s->gate_ms = xmt_opt.gate_us / 1000.0;
    s->automatic = xmt_settings_protects_auto(e);
    s->has_tol = xmt_settings_tolerance(e, &s->tol_rtol, &s->tol_atol);
}

/* protect: of the entry, else XMATUNE_PROTECT. */
int xmt_settings_protects_auto(const xmt_entry *e)
{
    int p = xmt_entry_protect(e);
    return (p >= 0 ? p : xmt_opt.protect) == XMT_PROTECT_AUTO;
}

int xmt_settings_tolerance(const xmt_entry *e, double *rtol, double *atol)
{
    return xmt_settings_protects_auto(e) && xmt_entry_tolerance(e, rtol, atol) &&
           (*rtol > 0 || *atol > 0);
}
