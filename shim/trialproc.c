/*
 * trialproc: the trial helper, seen from the program (see trialproc.h).
 */
#include "trialproc.h"

#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "log.h"
#include "logevent.h"
#include "options.h"
#include "preload.h"
#include "trialproto.h"

extern char **environ;

typedef enum { H_NONE = 0, H_LIVE, H_FAILED } helper_state;

typedef struct {
    helper_state state;
    int fd;    /* the program's end of the channel (close-on-exec) */
    int pidfd; /* the helper, to kill it without racing pid reuse; -1 if none */
    int pid;   /* as the helper said in READY */
    int restarts;
    uint32_t seq;
} helper_t;

static pthread_mutex_t trial_lock = PTHREAD_MUTEX_INITIALIZER;
static helper_t helpers[XMT_TRIAL_DEVICES];

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The helper's path: beside the shim in the build tree (shim/ -> trial/), else where an
 * installed shim has it (XMATUNE_TRIAL_REL from the library directory). Never PATH.
 * Returns 0, or -1 with why. */
static int helper_path(char *out, size_t cap, char *why, size_t wcap)
{
    Dl_info di;
    if (!dladdr((void *)xmt_trial_get, &di) || !di.dli_fname || !strchr(di.dli_fname, '/')) {
        snprintf(why, wcap, "the shim cannot tell its own path (dladdr)");
        return -1;
    }
    const char *slash = strrchr(di.dli_fname, '/');
    int dirlen = (int)(slash - di.dli_fname);
    const char *const rel[] = {"../trial/xmatune-trial", XMATUNE_TRIAL_REL};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(out, cap, "%.*s/%s", dirlen, di.dli_fname, rel[i]);
        if (access(out, X_OK) == 0) return 0;
    }
    snprintf(why, wcap, "no trial helper beside the shim (%.*s/%s or %.*s/%s)", dirlen,
             di.dli_fname, rel[0], dirlen, di.dli_fname, rel[1]);
    return -1;
}

/* The driver the shim opened, as a path when the loader tells it. */
static const char *driver_path(void)
{
    struct link_map *lm = NULL;
    if (xmt_drv.handle && dlinfo(xmt_drv.handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name &&
        lm->l_name[0] == '/')
        return lm->l_name;
    return xmt_opt.libcuda[0] ? xmt_opt.libcuda : "libcuda.so.1";
}

/* The helper's environment: the program's, with the shim out of LD_PRELOAD (other
 * entries, a sanitizer runtime first, kept), XMATUNE_LIBCUDA the driver the shim opened,
 * SIMCUDA_ROLE=helper (the simulated driver's switches keep meaning the program) and the
 * channel. Returns a malloc'd array of malloc'd strings, or NULL. */
static char **helper_env(const char *self, int fd)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc(n + 5, sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    const char *ours[] = {"LD_PRELOAD=", "XMATUNE_LIBCUDA=", "SIMCUDA_ROLE=", XMT_TP_FD_ENV "="};
    for (size_t i = 0; i < n; i++) {
        int skip = 0;
        for (size_t j = 0; j < sizeof ours / sizeof ours[0]; j++)
            skip |= !strncmp(environ[i], ours[j], strlen(ours[j]));
        if (!skip && !(env[k++] = strdup(environ[i]))) goto fail;
    }
    char pre[8192];
    if (xmt_preload_without(getenv("LD_PRELOAD"), self, pre, sizeof pre) == 0 && pre[0] &&
        asprintf(&env[k++], "LD_PRELOAD=%s", pre) < 0)
        goto fail;
    if (asprintf(&env[k++], "XMATUNE_LIBCUDA=%s", driver_path()) < 0 ||
        !(env[k++] = strdup("SIMCUDA_ROLE=helper")) ||
        asprintf(&env[k++], XMT_TP_FD_ENV "=%d", fd) < 0)
        goto fail;
    return env;
fail:
    for (size_t i = 0; i < n + 5; i++)
        free(env[i]);
    free(env);
    return NULL;
}

static void free_env(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

/* Spawns the helper on a new channel; *fd gets the program's end, *pid the process
 * spawned (the helper's first process: it forks once to leave the program's tree, then
 * exits; reap_first reaps it). 0, or -1 with why. */
static int spawn(int *fd, pid_t *pid, char *why, size_t wcap)
{
    char path[4096];
    if (helper_path(path, sizeof path, why, wcap) != 0) return -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, wcap, "socketpair: %s", strerror(errno));
        return -1;
    }
    Dl_info di;
    char **env = helper_env(dladdr((void *)xmt_trial_get, &di) ? di.dli_fname : NULL, sv[1]);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    /* dup2 onto itself clears close-on-exec: only the helper's end crosses the exec */
    posix_spawn_file_actions_adddup2(&fa, sv[1], sv[1]);
    sigset_t none, dflt;
    sigemptyset(&none);
    sigemptyset(&dflt);
    const int sigs[] = {SIGPIPE, SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&dflt, sigs[i]);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dflt);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {path, NULL};
    int e = env ? posix_spawn(pid, path, &fa, &at, argv, env) : ENOMEM;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free_env(env);
    close(sv[1]);
    if (e != 0) {
        close(sv[0]);
        snprintf(why, wcap, "cannot start %.400s: %s", path, strerror(e));
        return -1;
    }
    *fd = sv[0];
    return 0;
}

/* Reaps the helper's first process. Waited for only when it is not the helper itself
 * (the helper detached, so it exits at once) or it was killed (a failed start; pidfd, taken
 * while it was still an unreaped child, so never a recycled pid). ECHILD is fine: a
 * program that reaps every child, or ignores SIGCHLD, got it first. */
static void reap_first(pid_t first, int pidfd, int helper_pid, int failed)
{
    if (failed && pidfd >= 0) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    if (pidfd >= 0) close(pidfd);
    if (!failed && first == helper_pid) return; /* it could not detach: a zombie at the end */
    while (waitpid(first, NULL, 0) < 0 && errno == EINTR) {
    }
}

/* Is the helper's end closed (the process gone)? Asked without waiting. */
static int hung_up(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL));
}

/* Ends a helper: SIGKILL through its pidfd (never a recycled pid), and the channel
 * closed, which ends it anyway (its watchdog) when there is no pidfd. */
static void discard(helper_t *h)
{
    if (h->pidfd >= 0) {
        syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
        close(h->pidfd);
    }
    if (h->fd >= 0) close(h->fd);
    h->fd = h->pidfd = -1;
    h->pid = 0;
    h->state = H_NONE;
}

/* One request and its answer within the deadline. 0, or -1 with why (the helper gone,
 * hung: killed by the caller's discard, or answering nonsense). */
static int ask(helper_t *h, xmt_tp_msg *m, int want, char *why, size_t wcap)
{
    m->seq = ++h->seq;
    char t[32];
    const char *what = xmt_tp_type_name(m->type, t, sizeof t);
    if (xmt_tp_send(h->fd, m, NULL, 0) != 0) {
        snprintf(why, wcap, "the helper is gone (%s: %s)", what, strerror(errno));
        return -1;
    }
    char err[160];
    uint32_t seq = m->seq;
    int r = xmt_tp_recv(h->fd, m, NULL, NULL, xmt_opt.trial_timeout_ms, err, sizeof err);
    if (r == XMT_TP_TIMEOUT)
        snprintf(why, wcap, "the helper is hung: no answer to %s within %d ms", what,
                 xmt_opt.trial_timeout_ms);
    else if (r == XMT_TP_GONE)
        snprintf(why, wcap, "the helper is gone (%s: %s)", what, err);
    else if (r != 0)
        snprintf(why, wcap, "the helper's answer to %s: %s", what, err);
    else if (m->seq != seq || m->type != want)
        snprintf(why, wcap, "the helper answered %s with %s", what,
                 xmt_tp_type_name(m->type, t, sizeof t));
    return r == 0 && m->seq == seq && m->type == want ? 0 : -1;
}

static void log_event(const char *what, int device, const helper_t *h, double ms,
                      const xmt_tp_ready *r, const char *why)
{
    if (!xmt_log_enabled()) return;
    char hex[33] = "";
    if (r) xmt_tp_uuid_hex(r->uuid, hex);
    xmt_log_event(xmt_ev_trial_helper(what, device, h ? (long long)h->pid : 0, ms,
                                      h ? h->restarts : 0, r != NULL, r && r->has_uuid, hex,
                                      r ? r->name : NULL, why));
}

/* Starts this device's helper: spawn, HELLO, READY. 0, or -1 with why. */
static int start(helper_t *h, int device, char *why, size_t wcap)
{
    double t0 = now_ms();
    h->fd = h->pidfd = -1;
    h->pid = 0;
    pid_t first = -1;
    if (spawn(&h->fd, &first, why, wcap) != 0) return -1;
    int first_fd = (int)syscall(SYS_pidfd_open, first, 0);
    xmt_tp_msg m = {.type = XMT_TP_HELLO};
    m.u.hello = (xmt_tp_hello){XMT_TP_VERSION, (int32_t)getpid(), device};
    int r = ask(h, &m, XMT_TP_READY, why, wcap);
    if (r == 0) {
        h->pid = m.u.ready.pid;
        h->pidfd = (int)syscall(SYS_pidfd_open, h->pid, 0);
        if (m.u.ready.status != 0 || hung_up(h->fd))
            snprintf(why, wcap, "the helper could not open device %d: %s", device,
                     m.u.ready.status ? m.u.ready.name : "it exited");
        r = m.u.ready.status != 0 || hung_up(h->fd) ? -1 : 0;
    }
    reap_first(first, first_fd, h->pid, r != 0);
    if (r != 0) {
        discard(h);
        return -1;
    }
    h->state = H_LIVE;
    log_event(h->restarts ? "restarted" : "started", device, h, now_ms() - t0, &m.u.ready, NULL);
    xmt_verbose(1, "trial helper for device %d: pid %d (%s)", device, h->pid, m.u.ready.name);
    return 0;
}

/* No helper for this device from now on: said once, logged. */
static int fall_back(helper_t *h, int device, const char *why)
{
    h->state = H_FAILED;
    log_event("fallback", device, NULL, -1, NULL, why);
    xmt_warn("the trial helper for device %d is not available: %s", device, why);
    return -1;
}

/* A device where a second process must not run trials: MPS (a fault in one client can
 * reach every client of the GPU), compute modes that allow one context (Exclusive-Process)
 * or none (Prohibited). 1 with why. */
static int unfit(int device, char *why, size_t cap)
{
    int mode = 0, mps = 0;
    if (!xmt_drv.cuDeviceGetAttribute) return 0;
    if (xmt_drv.cuDeviceGetAttribute(&mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, (CUdevice)device) ==
            CUDA_SUCCESS &&
        mps) {
        snprintf(why, cap,
                 "MPS is active on device %d: a fault in the helper could reach the "
                 "program through it",
                 device);
        return 1;
    }
    if (xmt_drv.cuDeviceGetAttribute(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, (CUdevice)device) ==
            CUDA_SUCCESS &&
        (mode == CU_COMPUTEMODE_EXCLUSIVE_PROCESS || mode == CU_COMPUTEMODE_PROHIBITED)) {
        snprintf(why, cap, "device %d is in compute mode %s: no second process can use it", device,
                 mode == CU_COMPUTEMODE_PROHIBITED ? "Prohibited" : "Exclusive-Process");
        return 1;
    }
    return 0;
}

static int get_locked(helper_t *h, int device)
{
    char why[600];
    if (h->state == H_FAILED) return -1;
    if (h->state == H_NONE && !h->restarts && unfit(device, why, sizeof why))
        return fall_back(h, device, why);
    if (h->state == H_LIVE) {
        xmt_tp_msg m = {.type = XMT_TP_PING};
        m.u.token = ((uint64_t)h->seq << 32) ^ (uint64_t)getpid();
        uint64_t token = m.u.token;
        if (ask(h, &m, XMT_TP_PONG, why, sizeof why) == 0 && m.u.token == token) return 0;
        log_event("gone", device, h, -1, NULL, why);
        discard(h);
        if (h->restarts >= XMT_TRIAL_MAX_RESTARTS) {
            char cap[700];
            snprintf(cap, sizeof cap, "%s, and it was restarted %d times already", why,
                     h->restarts);
            return fall_back(h, device, cap);
        }
        h->restarts++;
    }
    if (start(h, device, why, sizeof why) != 0) return fall_back(h, device, why);
    return 0;
}

int xmt_trial_get(int device)
{
    if (device < 0 || device >= XMT_TRIAL_DEVICES) {
        static atomic_int warned;
        if (xmt_first_time(&warned))
            xmt_warn("device %d: trial helpers serve devices 0 to %d only", device,
                     XMT_TRIAL_DEVICES - 1);
        return -1;
    }
    int r;
    XMT_IN_SHIM_SCOPE
    {
        pthread_mutex_lock(&trial_lock);
        r = get_locked(&helpers[device], device);
        pthread_mutex_unlock(&trial_lock);
    }
    return r;
}

static pthread_once_t busy_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t busy[XMT_TRIAL_DEVICES]; /* held for a session on that device */

static int busy_ready;

static void busy_init(void)
{
    busy_ready = 1;
    for (int i = 0; i < XMT_TRIAL_DEVICES; i++)
        pthread_mutex_init(&busy[i], NULL);
}

int xmt_trial_acquire(int device)
{
    if (device < 0 || device >= XMT_TRIAL_DEVICES) return xmt_trial_get(device);
    pthread_once(&busy_once, busy_init);
    pthread_mutex_lock(&busy[device]);
    if (xmt_trial_get(device) != 0) {
        pthread_mutex_unlock(&busy[device]);
        return -1;
    }
    return helpers[device].fd; /* stable while busy is held: only acquirers change it */
}

void xmt_trial_release(int device, int ended, const char *why)
{
    if (device < 0 || device >= XMT_TRIAL_DEVICES) return;
    if (ended) {
        pthread_mutex_lock(&trial_lock);
        helper_t *h = &helpers[device];
        log_event("ended", device, h, -1, NULL, why);
        discard(h);
        pthread_mutex_unlock(&trial_lock);
    }
    pthread_mutex_unlock(&busy[device]);
}

void xmt_trial_atfork(int phase)
{
    if (phase == XMT_FORK_CHILD && busy_ready) /* another thread's session may have held one */
        busy_init();
    if (phase == XMT_FORK_CHILD)
        for (int i = 0; i < XMT_TRIAL_DEVICES; i++) {
            helper_t *h = &helpers[i];
            if (h->fd >= 0 && h->state == H_LIVE) close(h->fd);
            if (h->pidfd >= 0 && h->state == H_LIVE) close(h->pidfd);
            memset(h, 0, sizeof *h);
        }
    xmt_fork_mutex(&trial_lock, phase);
}
