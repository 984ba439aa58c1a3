/*
 * tune: one tuning session in the trial helper, asked for by a TUNE message.
 *
 * The helper runs the shim's own session code (shim/session.c, through the xmtcore
 * library): it decodes the request (common/trialreq.h, the TUNE of common/trialproto.h),
 * loads the program's module image once per image, maps the staged copy of the launch's
 * memory at the program's own addresses when they are free here (else anywhere, with the
 * pointer arguments translated; its guards of the granularity the request gives), makes
 * the kernel's record and the launch's view as the shim does, and runs
 * xmt_session_run_trial. Its messages go to the program as NOTEs, its tune event in the
 * RESULT; a heartbeat NOTE at least every 250 ms while the session waits for the GPU.
 */
#ifndef XMT_TRIAL_TUNE_H
#define XMT_TRIAL_TUNE_H

#include <stdint.h>

#include "trialproto.h"

/* Serves one TUNE (its descriptors: fds, nfds; closed here) on channel and sends the
 * RESULT. Returns 0 to go on, 1 when the helper must exit (the session's context may be
 * broken: a fault, a run that does not end, or the channel failed). */
int xmt_trial_tune(int channel, uint32_t seq, const xmt_tp_tune *t, const int *fds, int nfds);

#endif
