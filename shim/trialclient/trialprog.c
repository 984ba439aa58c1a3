/*
 * trialprog: what a session in the trial helper reports as it goes (see trialprog.h).
 */
#include "trialprog.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cacherec.h"
#include "log.h"

/* The helper's tune event lines, appended to the log. */
void xmt_trial_log_lines(int fd, uint64_t len)
{
    if (fd < 0 || !len || len > (64u << 20)) return;
    char *b = malloc(len + 1);
    if (b && pread(fd, b, len, 0) == (ssize_t)len) {
        b[len] = 0;
        for (char *save = NULL, *line = strtok_r(b, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save))
            xmt_log_line(line);
    }
    free(b);
}

/* The background session running (one at a time, on bgverify's worker): the candidates decided
 * not to win, the partial record's first, then each DECIDED as the helper streams it, for
 * xmt_trial_tune_progress at exit (docs/tuning.md, "Resuming a session cut at exit"). */
static struct {
    pthread_mutex_t lock;
    int on;
    char list[sizeof(((xmt_choice *)0)->decided)];
} prog = {.lock = PTHREAD_MUTEX_INITIALIZER};
static _Thread_local int collecting; /* this thread runs that session */

/* Whether index is in the list s ("1 4 9"). */
static int listed(const char *s, long index)
{
    while (*s) {
        char *end;
        long i = strtol(s, &end, 10);
        if (end == s) return 0;
        if (i == index) return 1;
        s = *end == ' ' ? end + 1 : end;
    }
    return 0;
}

void xmt_trial_prog_add(long index)
{
    if (!collecting || index < 0) return;
    pthread_mutex_lock(&prog.lock);
    size_t n = strlen(prog.list);
    char t[24];
    int w = snprintf(t, sizeof t, "%s%ld", n ? " " : "", index);
    /* a full list keeps what it has: a candidate left out is timed again, never skipped */
    int kept = prog.on && !listed(prog.list, index) && n + (size_t)w < sizeof prog.list;
    if (kept) memcpy(prog.list + n, t, (size_t)w + 1);
    pthread_mutex_unlock(&prog.lock);
    if (kept)
        xmt_verbose(2,
                    "background: candidate %ld was decided not to win (kept for the next run "
                    "if the exit cuts this session)",
                    index);
}

void xmt_trial_prog_begin(const char *decided)
{
    pthread_mutex_lock(&prog.lock);
    prog.on = 1;
    snprintf(prog.list, sizeof prog.list, "%s", decided ? decided : "");
    pthread_mutex_unlock(&prog.lock);
    collecting = 1;
}

void xmt_trial_prog_end(void)
{
    collecting = 0;
    pthread_mutex_lock(&prog.lock);
    prog.on = 0;
    prog.list[0] = 0;
    pthread_mutex_unlock(&prog.lock);
}

int xmt_trial_tune_progress(char *out, size_t cap)
{
    pthread_mutex_lock(&prog.lock);
    int any = prog.on && prog.list[0];
    snprintf(out, cap, "%s", any ? prog.list : "");
    pthread_mutex_unlock(&prog.lock);
    return any;
}
