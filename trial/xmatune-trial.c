/*
 * xmatune-trial: the trial helper, the process where candidates are to run (issue 24)
 * so that one that faults or hangs cannot harm the program.
 *
 * The shim spawns it (shim/trialclient/trialproc.c) with its end of a private channel in
 * XMATUNE_TRIAL_FD, the driver to open in XMATUNE_LIBCUDA and /dev/null for its stdio
 * (its messages go back as NOTEs); it speaks
 * common/trialproto.h and nothing of the shim. It lives exactly as long as the program:
 * a watchdog thread waits for the program's end of the channel to close (the program
 * exited, however it ended, or gave up on this helper) and ends the helper then, even
 * when the main thread is stuck in a driver call. It opens its device, answers pings and
 * runs tuning sessions (tune.c); after a session whose context may be broken (a fault, a
 * run past the watchdog) it exits, and the program starts another.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trialproto.h"
#include "tune.h"

static int chan = -1;

/* The entry points the helper calls, fetched through the driver's cuGetProcAddress_v2 at
 * exactly these versions, as the shim's driver.c does. */
#define HELPER_SYMS(X)                                                                             \
    X(cuInit, 2000)                                                                                \
    X(cuGetErrorName, 6000)                                                                        \
    X(cuDeviceGet, 2000)                                                                           \
    X(cuDeviceGetName, 2000)                                                                       \
    X(cuDeviceGetUuid, 11040)                                                                      \
    X(cuDevicePrimaryCtxRetain, 7000)                                                              \
    X(cuCtxSetCurrent, 4000)

static struct {
#define X(name, version) PFN_##name##_v##version name;
    HELPER_SYMS(X)
#undef X
} drv;

/* Ends the helper when the program's end of the channel closes. Only hang-up is asked
 * for, so a request waiting to be read does not wake it. */
static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p = {.fd = chan, .events = POLLRDHUP};
        int r = poll(&p, 1, -1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL))) _exit(0);
    }
    return NULL;
}

/* The shim spawns the helper as a sibling of the program (shim/trialclient/trialproc.c: the
 * child of the program's parent, never seen by the program's wait family), in a process group of
 * its own (the terminal's ^C goes to the program; the helper follows it by EOF). It never
 * forks. No PR_SET_PDEATHSIG: its parent is not the program, and the signal fires when the
 * parent *thread* ends anyway; the watchdog's end-of-channel and the shim's kill at the
 * program's exit tie the two lives together. */

/* The program's descriptors that came through the spawn (pipes it holds open, say) stay
 * open only as long as the program keeps them: close all but stdio and the channel. */
static void close_others(void)
{
    if (close_range(3, (unsigned)chan - 1, 0) == 0 && close_range((unsigned)chan + 1, ~0u, 0) == 0)
        return;
    for (int fd = 3; fd < 65536; fd++) /* a kernel without close_range (before 5.9) */
        if (fd != chan) close(fd);
}

static int open_driver(char *why, size_t cap)
{
    const char *lib = getenv("XMATUNE_LIBCUDA");
    if (!lib || !*lib) lib = "libcuda.so.1";
    struct stat st;
    if (strchr(lib, '/') && stat(lib, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(why, cap, "the CUDA driver %s is not a regular file", lib);
        return -1;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, cap, "cannot open the CUDA driver %s (%s)", lib, dlerror());
        return -1;
    }
    PFN_cuGetProcAddress_v12000 gp = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
    if (!gp) {
        snprintf(why, cap, "the CUDA driver %s has no cuGetProcAddress_v2", lib);
        return -1;
    }
    CUdriverProcAddressQueryResult q;
#define X(name, version)                                                                           \
    if (gp(#name, (void **)&drv.name, version, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS)   \
        drv.name = NULL;
    HELPER_SYMS(X)
#undef X
    if (!drv.cuInit || !drv.cuDeviceGet || !drv.cuDevicePrimaryCtxRetain || !drv.cuCtxSetCurrent) {
        snprintf(why, cap, "the CUDA driver %s lacks cuInit, cuDeviceGet or the primary context",
                 lib);
        return -1;
    }
    return 0;
}

/* Opens the device of HELLO and fills READY: its UUID when the driver has
 * cuDeviceGetUuid (else has_uuid 0: the ordinal is its only identity), its name. */
static void open_device(const xmt_tp_hello *h, xmt_tp_ready *r)
{
    r->pid = (int32_t)getpid();
    r->device = h->device;
    CUresult e = CUDA_ERROR_NOT_INITIALIZED;
    CUdevice d;
    CUcontext ctx;
    if (open_driver(r->name, sizeof r->name) != 0) {
        r->status = (int32_t)CUDA_ERROR_NOT_INITIALIZED;
        return;
    }
    if ((e = drv.cuInit(0)) != CUDA_SUCCESS ||
        (e = drv.cuDeviceGet(&d, h->device)) != CUDA_SUCCESS ||
        (e = drv.cuDevicePrimaryCtxRetain(&ctx, d)) != CUDA_SUCCESS ||
        (e = drv.cuCtxSetCurrent(ctx)) != CUDA_SUCCESS) {
        const char *s = NULL;
        if (!drv.cuGetErrorName || drv.cuGetErrorName(e, &s) != CUDA_SUCCESS) s = NULL;
        r->status = (int32_t)e;
        snprintf(r->name, sizeof r->name, "cannot open device %d: %s (%d)", (int)h->device,
                 s ? s : "CUresult", (int)e);
        return;
    }
    CUuuid u;
    if (drv.cuDeviceGetUuid && drv.cuDeviceGetUuid(&u, d) == CUDA_SUCCESS) {
        r->has_uuid = 1;
        memcpy(r->uuid, u.bytes, 16);
    }
    if (!drv.cuDeviceGetName ||
        drv.cuDeviceGetName(r->name, (int)sizeof r->name, d) != CUDA_SUCCESS)
        snprintf(r->name, sizeof r->name, "device %d", (int)h->device);
}

static void reply_error(uint32_t seq, int code, const char *text)
{
    xmt_tp_msg e = {.type = XMT_TP_ERROR, .seq = seq};
    e.u.error.code = code;
    snprintf(e.u.error.text, sizeof e.u.error.text, "%s", text);
    xmt_tp_send(chan, &e, NULL, 0);
}

/* One request, one answer. Returns 0 to go on, 1 to exit. */
static int serve(const xmt_tp_msg *m, const int *fds, int nfds)
{
    xmt_tp_msg a = {.seq = m->seq};
    char t[32];
    switch (m->type) {
    case XMT_TP_HELLO:
        a.type = XMT_TP_READY;
        open_device(&m->u.hello, &a.u.ready);
        break;
    case XMT_TP_PING:
        a.type = XMT_TP_PONG;
        a.u.token = m->u.token;
        break;
    case XMT_TP_SHUTDOWN: return 1;
    case XMT_TP_TUNE: return xmt_trial_tune(chan, m->seq, &m->u.tune, fds, nfds);
    default: {
        char text[XMT_TP_NAME];
        snprintf(text, sizeof text, "%s: not a request", xmt_tp_type_name(m->type, t, sizeof t));
        reply_error(m->seq, EPROTO, text);
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        return 0;
    }
    }
    return xmt_tp_send(chan, &a, NULL, 0) == 0 ? 0 : 1;
}

int main(void)
{
    const char *v = getenv(XMT_TP_FD_ENV);
    char *end = NULL;
    long fd = v ? strtol(v, &end, 10) : -1;
    if (!v || !*v || *end || fd < 3 || fd > 65535) {
        fprintf(stderr, "xmatune: xmatune-trial is the shim's trial helper; only the shim "
                        "starts it (no " XMT_TP_FD_ENV ")\n");
        return 2;
    }
    chan = (int)fd;
    (void)signal(SIGPIPE, SIG_IGN);
    close_others(); /* the descriptor it was started from among them */
    /* a wait for the GPU sleeps a few µs between its asks (shim/base/clock.h): the default
     * timer slack (50 µs) would add that much to each sleep, and to each key's tuning */
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    pthread_t w;
    if (pthread_create(&w, NULL, watchdog, NULL) != 0) return 1; /* no watchdog, no helper */
    for (;;) {
        xmt_tp_msg m;
        char err[160];
        int fds[XMT_TP_MAX_FDS], nfds = 0;
        int r = xmt_tp_recv(chan, &m, fds, &nfds, -1, err, sizeof err);
        if (r == XMT_TP_GONE) return 0;
        if (r == XMT_TP_BAD) {
            for (int i = 0; i < nfds; i++)
                close(fds[i]);
            reply_error(m.seq, EPROTO, err);
            continue;
        }
        if (serve(&m, fds, nfds)) _exit(0); /* a broken context: no destructors, no atexit */
    }
}
