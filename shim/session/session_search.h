/*
 * session_search: a searched space (policy/search.h) instead of trying every point: the
 * search's batches, each verified, warmed up and timed as the full list would be, and
 * reported back with its statistic until the search's budget of points is spent.
 */
#ifndef XMT_SESSION_SEARCH_H
#define XMT_SESSION_SEARCH_H

#include "session_types.h"

/* Instead of verifying and timing every point of the space: the search's batches, from the
 * point nearest the program's own config, with a fixed seed (processes that measure alike
 * visit alike), each reported back with its statistic (INFINITY: skipped, rejected,
 * faulted, not timed), until its budget of points is spent; then the finalists are
 * re-timed and the decision is the usual one, over the points visited. */
int xmt_sess_search_space(xmt_session *S);

#endif
