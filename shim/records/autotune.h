/*
 * autotune: tuning with no policy (XMATUNE_AUTO=1).
 *
 * A kernel that no policy entry names gets an entry derived by the policy library
 * (xmt_derive_entry: the launch idioms, tagged, with triggers on its integer scalars and
 * its own launch shape) unless auto declines it: a name on the default list (NCCL's
 * kernels, whose launches synchronise with other ranks) or XMATUNE_EXCLUDE, or a kernel
 * whose parameters the driver does not report. Its candidates run only in the trial helper
 * (plan.c), its keys are capped (tuner.c), and a kernel auto declines or stops tuning
 * passes through. One derived set per kernel name, kept for the process's life, so that
 * a handle the driver reuses or a module loaded again finds the same entry.
 */
#ifndef XMT_AUTOTUNE_H
#define XMT_AUTOTUNE_H

#include <stddef.h>
#include <stdint.h>

#include "xmt_policy.h"

/* The globs (case-insensitive, on the mangled and demangled names) auto never tunes. */
#define XMT_AUTO_DEFAULT_EXCLUDE "*nccl*"

/* The derived entry for a kernel (its mangled and demangled names, np parameters of the
 * sizes the driver reports), or NULL with why set when auto declines it; *ahead (may be
 * NULL) 1 when the entry was derived ahead (xmt_auto_prederive), else 0. Cold: derives
 * and loads a policy text; takes a lock. */
const xmt_entry *xmt_auto_entry(const char *mangled, const char *demangled, size_t np,
                                const uint32_t *sizes, int *ahead, char *why, size_t cap);

/* 1 when e is an entry xmt_auto_entry made (no lock). */
int xmt_auto_owns(const xmt_entry *e);

/* The idiom a candidate's label names ("IDIOM=2, BX=..."), as xmt_idiom_name says it;
 * NULL when the label has none (a policy's own entry, the program's own config). */
const char *xmt_auto_idiom_of(const char *label);

/* Derives, on a thread of its own, the entries of the kernels the cache file at
 * cache_path holds auto's records of (at most 512), from the parameter layout their
 * signatures give: a derivation costs the program's thread milliseconds (a 28 KB entry
 * parsed and compiled: 18.8 M instructions, 4 to 9 ms on the development VM), and a warm
 * run would pay it at the first launch of each kernel it tuned before. A kernel seen before
 * its entry is ready, or whose driver layout is not its signature's, is derived at its
 * first sight as before. Nothing without XMATUNE_AUTO. */
void xmt_auto_prederive(const char *cache_path);

/* Waits until the derivations ahead are over, at most timeout_ms (-1: no limit): 1 when
 * they are (or none ran), 0 when not yet (xmatune_background_wait). */
int xmt_auto_ahead_wait(int timeout_ms);

/* fork(2) phases (log.h): the lock of the derived sets. */
void xmt_auto_atfork(int phase);

#endif
