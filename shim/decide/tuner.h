/*
 * tuner: XMATUNE_MODE=tune and replay. The first launch of a (device, kernel, key) that
 * a policy describes is benchmarked over the policy's configurations, the program's own
 * among them; every launch with that key then runs with the winner.
 *
 * What the program computes never changes: every buffer the policy declares (reset,
 * restore, verify) is snapshotted before the first candidate runs and put back before
 * the real launch; restore buffers are put back before every run, reset buffers zeroed,
 * and a candidate whose verify buffers differ from the program's own config on the same
 * inputs is rejected. Any driver failure while tuning ends tuning for that key and the
 * launch goes through as the program made it. Exactly one thread tunes a key; others
 * launching it meanwhile run the program's own config. Nothing is benchmarked while the
 * launch's stream is capturing a graph.
 */
#ifndef XMT_TUNER_H
#define XMT_TUNER_H

#include <stdio.h>

#include "devinfo.h"
#include "kernels.h"
#include "launch.h"
#include "launchview.h" /* xmt_tuner_view, which the trial helper calls too */
#include "xmt_policy.h"

void xmt_tuner_init(void); /* at activation: reads the on-disk cache */

/* A launch of a kernel with a policy entry (tune or replay mode). Returns the driver's
 * result for the launch actually made. */
CUresult xmt_tune_launch(xmt_kernel *k, xmt_launch *l);

/* What a launch with these arguments would run if the key is decided without a
 * benchmark or a verification (a graph kernel node: nothing may run now): 1 and *c, the
 * winner's config; 0, the program's own (it won, or the winner does not apply to these
 * arguments); -1, no winner known (*why says which is missing; key_text: the key). */
int xmt_tune_known(xmt_kernel *k, const xmt_launch *l, xmt_candidate *c, char *key_text,
                   size_t key_len, const char **why);

/* k's kernel_summary event and, if table is not NULL, its line of the exit table. */
void xmt_tune_report(xmt_kernel *k, FILE *table);

#endif
