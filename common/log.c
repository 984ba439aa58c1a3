/*
 * log: capped stderr messages and the JSON Lines log (see log.h).
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"

static atomic_int messages_printed;
static atomic_int messages_dropped;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static dev_t log_dev;         /* the file log_fd was opened on: a program that closes its */
static ino_t log_ino;         /* descriptors (a daemon's start-up sweep) may reuse the number */
static atomic_int log_failed; /* read without log_lock by xmt_log_enabled */

static void (*relay_message)(const char *line);
static void (*relay_event)(const char *json);

void xmt_log_set_relay(void (*message)(const char *line), void (*event)(const char *json))
{
    relay_message = message;
    relay_event = event;
}

static void vmessage(const char *fmt, va_list ap)
{
    char buf[1024];
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    if (n < 0) return;
    if ((size_t)n > sizeof buf - 2) n = sizeof buf - 2;
    if (relay_message) {
        buf[n] = 0;
        relay_message(buf);
        return;
    }
    buf[n++] = '\n';
    /* One write per message so lines from several threads do not interleave. */
    char line[1100];
    int m = snprintf(line, sizeof line, "xmatune: %.*s", n, buf);
    if (m > 0) (void)!write(2, line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1);
}

void xmt_warn(const char *fmt, ...)
{
    if (atomic_fetch_add(&messages_printed, 1) >= xmt_opt.max_messages) {
        atomic_fetch_add(&messages_dropped, 1);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

void xmt_message_line(const char *line)
{
    char l[1100];
    int m = snprintf(l, sizeof l, "xmatune: %s\n", line);
    if (m > 0) (void)!write(2, l, (size_t)m < sizeof l ? (size_t)m : sizeof l - 1);
}

void xmt_warn_msg(const char *msg)
{
    xmt_warn("%s", msg);
}

void xmt_warn_diag(void *ud, const char *msg)
{
    (void)ud;
    xmt_warn("%s", msg);
}

void xmt_verbose(int level, const char *fmt, ...)
{
    if (xmt_opt.verbose < level) return;
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

void xmt_progress(const char *fmt, ...)
{
    static int on = -1; /* decided once: XMATUNE_PROGRESS, else whether stderr is a tty */
    if (on < 0) on = xmt_opt.progress >= 0 ? xmt_opt.progress : isatty(2);
    if (!on) return;
    va_list ap;
    va_start(ap, fmt);
    vmessage(fmt, ap);
    va_end(ap);
}

int xmt_expand_path(const char *tmpl, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = tmpl; *p; p++) {
        char tmp[32];
        const char *ins = NULL;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%ld", (long)getpid());
            ins = tmp;
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            ins = "%";
            p++;
        }
        if (ins) {
            size_t l = strlen(ins);
            if (o + l >= cap) return -1;
            memcpy(out + o, ins, l);
            o += l;
        } else {
            if (o + 1 >= cap) return -1;
            out[o++] = *p;
        }
    }
    out[o] = 0;
    return 0;
}

int xmt_log_enabled(void)
{
    return xmt_opt.log[0] != 0 && !log_failed;
}

/* Is log_fd still the file the log opened? A program that closed it, or closed it and
 * opened something else that got the same number, must never get our lines. */
static int log_fd_is_ours(void)
{
    struct stat st;
    return fstat(log_fd, &st) == 0 && st.st_dev == log_dev && st.st_ino == log_ino;
}

/* Opens the log on first use, and again when the program took its descriptor away (the
 * number is left alone: it is the program's now). Called with log_lock held. */
static int open_log(void)
{
    if (log_fd >= 0 && log_fd_is_ours()) return 0;
    if (log_fd >= 0) {
        log_fd = -1;
        static atomic_int said;
        if (xmt_first_time(&said))
            xmt_warn("the program closed the log's descriptor; the log is opened again");
    }
    if (log_failed) return -1;
    char path[XMT_PATH_MAX];
    if (xmt_expand_path(xmt_opt.log, path, sizeof path) != 0) {
        log_failed = 1;
        xmt_warn("XMATUNE_LOG is too long; no log is written");
        return -1;
    }
    /* Non-blocking, so that a FIFO nobody reads fails (ENXIO) instead of hanging the
     * program at its first CUDA call; then blocking again, as a log's writes should be. */
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
    if (log_fd < 0) {
        log_failed = 1;
        if (errno == ENXIO)
            xmt_warn("the log %s is a FIFO with no reader; no log is written", path);
        else
            xmt_warn("cannot open the log %s: %m; no log is written", path);
        return -1;
    }
    struct stat st;
    int fl = fcntl(log_fd, F_GETFL);
    if (fstat(log_fd, &st) != 0 || S_ISDIR(st.st_mode) || fl < 0 ||
        fcntl(log_fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        close(log_fd);
        log_fd = -1;
        log_failed = 1;
        xmt_warn("the log %s is not a file, FIFO or device; no log is written", path);
        return -1;
    }
    log_dev = st.st_dev;
    log_ino = st.st_ino;
    return 0;
}

/* Appends one line (len bytes, no newline) under the lock. */
static void append_line(const char *text, size_t len)
{
    pthread_mutex_lock(&log_lock);
    if (open_log() == 0) {
        /* One write() per line: O_APPEND keeps lines whole across processes. */
        char *line = malloc(len + 2);
        if (line) {
            memcpy(line, text, len);
            line[len] = '\n';
            if (write(log_fd, line, len + 1) != (ssize_t)(len + 1) && !log_failed) {
                log_failed = 1;
                xmt_warn("writing the log failed: %m; no further events are written");
            }
            free(line);
        }
    }
    pthread_mutex_unlock(&log_lock);
}

void xmt_log_event(json_t *obj)
{
    if (!obj) return;
    if (!relay_event && !xmt_log_enabled()) {
        json_decref(obj);
        return;
    }
    char *text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(obj);
    if (!text) return;
    if (relay_event)
        relay_event(text);
    else
        append_line(text, strlen(text));
    free(text);
}

void xmt_log_line(const char *json)
{
    if (!json || !xmt_log_enabled() || strchr(json, '\n')) return;
    append_line(json, strlen(json));
}

void xmt_log_atfork(int phase)
{
    if (phase == XMT_FORK_CHILD) { /* the child's messages are its own */
        atomic_store(&messages_printed, 0);
        atomic_store(&messages_dropped, 0);
    }
    xmt_fork_mutex(&log_lock, phase);
}

void xmt_log_close(void)
{
    int dropped = atomic_load(&messages_dropped);
    if (dropped > 0 && xmt_opt.max_messages > 0) { /* 0: silence, the count too */
        char line[128];
        int n =
            snprintf(line, sizeof line, "xmatune: %d further messages were suppressed\n", dropped);
        if (n > 0) (void)!write(2, line, (size_t)n);
    }
    pthread_mutex_lock(&log_lock);
    if (log_fd >= 0 && log_fd_is_ours()) close(log_fd);
    log_fd = -1;
    pthread_mutex_unlock(&log_lock);
}
