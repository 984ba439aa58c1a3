/*
 * trialprog: what a session in the trial helper reports as it goes, besides its result: the
 * candidates a background tuning decided cannot win (the helper's DECIDED messages), kept for
 * the exit that may cut the session (docs/tuning.md, "Resuming a session cut at exit"), and
 * the helper's log lines (its tune event), appended to the program's log.
 */
#ifndef XMT_TRIALPROG_H
#define XMT_TRIALPROG_H

#include <stddef.h>
#include <stdint.h>

/* The helper's log lines, len bytes in the file fd, appended to the log. */
void xmt_trial_log_lines(int fd, uint64_t len);

/* The background session running (one at a time, on bgverify's worker thread): begin with
 * the partial record's candidates (decided, or NULL), add each the helper decides cannot win
 * (only on the thread that began), end when the session is over. */
void xmt_trial_prog_begin(const char *decided);
void xmt_trial_prog_add(long index);
void xmt_trial_prog_end(void);

/* While a background session tunes, on any thread: the candidates it decided cannot win so
 * far, the partial record's it was given included ("1 4 9", in out); 1 when there are any,
 * else 0 (out ""). What the exit keeps of a session it cuts (bgverify.c). */
int xmt_trial_tune_progress(char *out, size_t cap);

#endif
