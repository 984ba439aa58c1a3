/*
 * session_cands: a session's candidates -- the program's own config first, then the
 * policy's (or the one pinned), each admitted or skipped with its reason: more dynamic
 * shared memory than the program opted the kernel into, the same as the program's own,
 * or (in the trial helper) a candidate that faulted in an earlier helper or one that
 * reaches at least as far along its idiom (family.h). A searched space's points wait for
 * the search (session_search.c), which admits them as it visits them.
 */
#ifndef XMT_SESSION_CANDS_H
#define XMT_SESSION_CANDS_H

#include "session_types.h"

/* The program's own config as a candidate's label: "grid=(..) block=(..) shared=N". */
void xmt_sess_own_label(const xmt_launch *l, char *buf, size_t cap);

/* A candidate built (candidate i of the entry, or the pin) and either valid (S->cand.valid
 * counts it) or skipped with its reason. */
void xmt_sess_admit(xmt_session *S, xmt_cand *c, size_t i);

/* The candidates: the program's own first, then the policy's (or the one pinned), each
 * either valid or skipped with its reason; a searched space's points wait for the search
 * (XMT_C_UNVISITED). Returns -1 when out of memory. */
int xmt_sess_candidates(xmt_session *S);

#endif
