/*
 * tune_event: what a tuning session tells people — the XMATUNE_VERBOSE lines and the
 * `tune` event of the JSON log (schema in docs/log.md), built from a finished session.
 */
#ifndef XMT_TUNE_EVENT_H
#define XMT_TUNE_EVENT_H

#include "session.h"

/* The verbose lines (levels 1 and 2) and, when there is a log, its `tune` event. */
void xmt_tune_event(const xmt_session *S);

/* A re-check's session (S->recheck, docs/tuning.md "Data that proves nothing"): its
 * verbose line and the log's `recheck` event (outcome passed, failed or untold). */
void xmt_recheck_event(const xmt_session *S);

#endif
