/*
 * trialproc: the trial helper, seen from the program (see trialproc.h).
 */
#include "trialproc.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
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
    int pid;   /* the process started (READY says the same) */
    int child; /* it is the program's child (PID 1 of a namespace), reaped by the shim */
    int restarts;
    uint32_t seq;
    int final;       /* H_FAILED for good: 1 (restarted too often), 2 (no helper may run) */
    int failures;    /* starts failed in a row; the next is tried at retry_at */
    double retry_at; /* xmt_now_ms() */
    int said;        /* the fallback was said on stderr */
    /* what fd and pidfd are: a program that closes every descriptor may have closed them,
     * and opened files of its own into their numbers, which the shim must never use or close */
    dev_t fd_dev, pidfd_dev;
    ino_t fd_ino, pidfd_ino;
    int spare; /* it was a spare (below): logged so */
} helper_t;

static pthread_mutex_t trial_lock = PTHREAD_MUTEX_INITIALIZER;
static helper_t helpers[XMT_TRIAL_DEVICES];

/* ---- the helper's executable: found once, absolutely, opened and checked ---------------- */

/* The shim's own file (its folder is where the helper is looked for), absolute whatever the
 * program's current folder: the kernel's name for the mapping that holds this code (the
 * loader's name for it, dladdr's, is relative when LD_PRELOAD was, and would be read
 * against the folder the program is in now), else dladdr's when that is absolute. Asked
 * once; "" with why when it cannot be told. */
static struct {
    int asked;
    char dir[XMT_PATH_MAX];
    char why[200];
    struct stat st; /* the shim's file, for its owner and group */
    int has_st;
    int fd;    /* the helper, O_PATH, once opened and found trusted; kept for every spawn */
    dev_t dev; /* what fd is: a program that closes every descriptor may have closed it, */
    ino_t ino; /* and the number may be another file's now */
    char path[XMT_PATH_MAX];
} exe = {.fd = -1};

static void shim_dir_once(void)
{
    if (exe.asked) return;
    exe.asked = 1;
    char self[XMT_PATH_MAX] = "";
    uintptr_t at = (uintptr_t)(void *)xmt_trial_get;
    FILE *f = fopen("/proc/self/maps", "re");
    char line[XMT_PATH_MAX + 128];
    while (f && fgets(line, sizeof line, f)) {
        /* "lo-hi perms offset dev inode   name" */
        char *end;
        uintptr_t lo = (uintptr_t)strtoul(line, &end, 16);
        uintptr_t hi = *end == '-' ? (uintptr_t)strtoul(end + 1, &end, 16) : 0;
        if (at < lo || at >= hi) continue;
        char *name = end;
        for (int field = 0; field < 4; field++) {
            name += strspn(name, " ");
            name += strcspn(name, " \n");
        }
        name += strspn(name, " ");
        name[strcspn(name, "\n")] = 0;
        size_t len = strlen(name);
        const char *del =
            " (deleted)"; /* the file replaced since it was loaded: its folder holds */
        if (len > strlen(del) && !strcmp(name + len - strlen(del), del))
            name[len - strlen(del)] = 0;
        /* the kernel writes a newline in a name as \012: such a name is not read back */
        if (name[0] == '/' && !strchr(name, '\\')) snprintf(self, sizeof self, "%s", name);
        break;
    }
    if (f) (void)fclose(f);
    Dl_info di;
    if (!self[0] && dladdr((void *)xmt_trial_get, &di) && di.dli_fname && di.dli_fname[0] == '/')
        snprintf(self, sizeof self, "%s", di.dli_fname);
    if (!self[0]) {
        snprintf(exe.why, sizeof exe.why,
                 "the shim cannot tell its own absolute path (no /proc/self/maps, and the "
                 "loader's name for it is relative)");
        return;
    }
    exe.has_st = stat(self, &exe.st) == 0;
    *strrchr(self, '/') = 0;
    snprintf(exe.dir, sizeof exe.dir, "%s", self[0] ? self : "/");
}

/* The trust rule for the helper's file and folder, as the cache's (docs/cache.md) but for a
 * program that runs as the user: it must be exactly as trusted as the shim itself. Owned
 * by the user, root or the shim's owner; writable by nobody else: not by others, not by its
 * group unless the shim's own file is writable by that group too; a folder others or its
 * group may write passes only with the sticky bit (as /tmp: then only the file's owner can
 * replace the file, and the file's owner is checked). NULL, or why not. */
static const char *untrusted(const struct stat *st, int dir, char *why, size_t cap)
{
    const char *what = dir ? "its folder" : "it";
    uid_t me = geteuid();
    int sticky = dir && (st->st_mode & S_ISVTX);
    if (st->st_uid != me && st->st_uid != 0 && !(exe.has_st && st->st_uid == exe.st.st_uid)) {
        snprintf(why, cap, "%s is owned by uid %u: neither you, root nor the shim's owner", what,
                 (unsigned)st->st_uid);
        return why;
    }
    if ((st->st_mode & S_IWOTH) && !sticky) {
        snprintf(why, cap, "%s may be written by anyone (mode %04o)", what,
                 (unsigned)(st->st_mode & 07777));
        return why;
    }
    if ((st->st_mode & S_IWGRP) && !sticky &&
        !(exe.has_st && (exe.st.st_mode & S_IWGRP) && exe.st.st_gid == st->st_gid)) {
        snprintf(why, cap,
                 "%s may be written by its group (gid %u, mode %04o), which may not write the "
                 "shim",
                 what, (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
        return why;
    }
    return NULL;
}

/* A descriptor of 3 or more (close-on-exec), so that the spawned child's stdio redirections
 * never land on it; fd itself when it is already, else a copy (fd closed). */
static int above_stdio(int fd)
{
    if (fd < 0 || fd > 2) return fd;
    int c = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return c;
}

/* Opens the helper beside the shim (shim/ -> trial/ in the build tree), else where an
 * installed shim has it (XMATUNE_TRIAL_REL from the library directory); never PATH, never
 * the current folder. Kept open once found trusted: every later start runs that file. 0, or
 * -1 with why (asked again at a later start: a helper may be installed meanwhile). */
static int helper_open(char *why, size_t wcap)
{
    struct stat now;
    if (exe.fd >= 0 && fstat(exe.fd, &now) == 0 && now.st_dev == exe.dev && now.st_ino == exe.ino)
        return 0;
    exe.fd = -1; /* not ours any more (never closed here): opened again from the same folder */
    shim_dir_once();
    if (!exe.dir[0]) {
        snprintf(why, wcap, "%s", exe.why);
        return -1;
    }
    const char *const rel[] = {"../trial/xmatune-trial", XMATUNE_TRIAL_REL};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char at[XMT_PATH_MAX * 2], real[PATH_MAX];
        snprintf(at, sizeof at, "%s/%s", exe.dir, rel[i]);
        if (!realpath(at, real)) continue;
        char *slash = strrchr(real, '/');
        *slash = 0;
        int dfd = above_stdio(open(real[0] ? real : "/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        int fd =
            dfd < 0 ? -1 : above_stdio(openat(dfd, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC));
        struct stat ds, fs;
        char bad[200];
        const char *no = NULL;
        if (fd < 0 || fstat(dfd, &ds) != 0 || fstat(fd, &fs) != 0)
            no = "it cannot be opened";
        else if (!S_ISREG(fs.st_mode))
            no = "it is not a regular file";
        else if (faccessat(dfd, slash + 1, X_OK, AT_EACCESS) != 0)
            no = "it is not executable";
        else if (!(no = untrusted(&fs, 0, bad, sizeof bad)))
            no = untrusted(&ds, 1, bad, sizeof bad);
        *slash = '/';
        if (dfd >= 0) close(dfd);
        if (no) {
            if (fd >= 0) close(fd);
            snprintf(why, wcap, "the trial helper %.1000s is not started: %s", real, no);
            return -1;
        }
        exe.fd = fd;
        exe.dev = fs.st_dev;
        exe.ino = fs.st_ino;
        snprintf(exe.path, sizeof exe.path, "%s", real);
        return 0;
    }
    snprintf(why, wcap, "no trial helper beside the shim (%.1000s/%s or %.1000s/%s)", exe.dir,
             rel[0], exe.dir, rel[1]);
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

/* ---- starting and ending a helper -------------------------------------------------------- */

/* What the spawned child needs, made before it runs: it shares the program's memory (a
 * vfork-like clone) and may call nothing but system calls. */
typedef struct {
    int exe, chan, null;
    char **argv, **env;
    unsigned char dflt[65]; /* signals set to their default whatever the program did */
    volatile int err;       /* written by the child when its exec failed */
} child_t;

/* The kernel's struct sigaction (x86-64 and arm64 alike: handler, flags, restorer, mask). */
typedef struct {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
} ksigaction;

/* The child shares the program's memory until its exec (no copy of a large address
 * space). Not under ThreadSanitizer: across such a clone its runtime, which cannot see
 * the child, reported races between accesses that one lock orders (both sides holding
 * trial_lock: 6 tests of CI's TSan stage), and none without CLONE_VM; there the child gets
 * a copy of the memory instead. */
#if defined(__SANITIZE_THREAD__)
#define SPAWN_SHARE 0
#else
#define SPAWN_SHARE CLONE_VM
#endif

/* The spawned child, from clone to exec, on a stack of its own in the program's memory
 * while the spawning thread waits (CLONE_VFORK): raw system calls only (no handler of the
 * program may run here, no sanitizer or libc state is touched). The program's handlers
 * become the default (its ignored signals stay ignored across exec, as posix_spawn does,
 * except those in dflt), every signal is unblocked, the helper gets a process group of its
 * own (the terminal's ^C is the program's), /dev/null for
 * its stdio (it never holds the program's stdout open: a pipe reader sees the program's end
 * when it ends) and the channel; then the helper opened at the first start, by descriptor. */
__attribute__((no_sanitize("address", "thread", "undefined"))) static int child_main(void *arg)
{
    child_t *c = arg;
    const ksigaction dfl = {0};
    for (int sig = 1; sig < 65; sig++) {
        ksigaction old;
        if (syscall(SYS_rt_sigaction, sig, NULL, &old, 8) != 0) continue;
        if (c->dflt[sig] || (old.handler != (void *)SIG_IGN && old.handler != (void *)SIG_DFL))
            syscall(SYS_rt_sigaction, sig, &dfl, NULL, 8);
    }
    syscall(SYS_setpgid, 0, 0);
    for (int fd = 0; fd < 3; fd++)
        syscall(SYS_dup3, c->null, fd, 0);
    /* the channel crosses the exec; so does the helper's own descriptor, which a script's
     * interpreter opens as /dev/fd/N (the helper closes it) */
    syscall(SYS_fcntl, c->chan, F_SETFD, 0);
    syscall(SYS_fcntl, c->exe, F_SETFD, 0);
    const uint64_t none = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8);
    syscall(SYS_execveat, c->exe, "", c->argv, c->env, AT_EMPTY_PATH);
    c->err = errno ? errno : ENOEXEC;
    syscall(SYS_exit, 127);
    return 127;
}

/* Spawns the helper on a new channel: *fd gets the program's end, *pid and *pidfd the
 * helper, *child whether it is the program's child. It is made the child of the program's
 * own parent (clone's CLONE_PARENT: a sibling of the program), so that no wait, waitpid or
 * waitid of the program ever sees it, as a subreaper too; its end is a SIGCHLD and a
 * zombie for the program's parent, as any of its children's (docs/tuning.md, What a
 * program sees of the helper). Where the kernel refuses that (the program is PID 1 of a
 * PID namespace), it is the program's child, reaped by the shim when it ends it. 0, or -1
 * with why. */
static int spawn(int *fd, pid_t *pid, int *pidfd, int *child, char *why, size_t wcap)
{
    if (helper_open(why, wcap) != 0) return -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, wcap, "socketpair: %s", strerror(errno));
        return -1;
    }
    sv[0] = above_stdio(sv[0]);
    sv[1] = above_stdio(sv[1]);
    int null = above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC));
    Dl_info di;
    char **env = sv[1] >= 0
                     ? helper_env(dladdr((void *)xmt_trial_get, &di) ? di.dli_fname : NULL, sv[1])
                     : NULL;
    const size_t stack_size = 256 << 10;
    void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    child_t c = {.exe = exe.fd, .chan = sv[1], .null = null, .argv = NULL, .env = env};
    char *argv[] = {exe.path, NULL};
    c.argv = argv;
    const int sigs[] = {SIGPIPE, SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        c.dflt[sigs[i]] = 1;
    pid_t p = -1;
    int e = ENOMEM, pfd = -1;
    if (env && stack != MAP_FAILED && sv[0] >= 0 && sv[1] >= 0 && null >= 0) {
        /* every signal blocked from clone until the child has made the program's handlers
         * the default: none of them may run in the child */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        /* CLONE_PARENT is refused to PID 1 of a namespace; Linux before 5.2 has no
         * CLONE_PIDFD */
        const int tries[] = {CLONE_PARENT | CLONE_PIDFD, CLONE_PARENT, CLONE_PIDFD, 0};
        for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
            pfd = -1;
            p = clone(child_main, (char *)stack + stack_size, SPAWN_SHARE | CLONE_VFORK | tries[i],
                      &c, &pfd);
            e = errno;
            *child = !(tries[i] & CLONE_PARENT);
            if (p >= 0 || e != EINVAL) break;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (stack != MAP_FAILED) munmap(stack, stack_size);
    free_env(env);
    if (sv[1] >= 0) close(sv[1]);
    if (null >= 0) close(null);
    if (p > 0 && pfd < 0 && !c.err) /* it has just exec'd: the pid is still its own */
        pfd = (int)syscall(SYS_pidfd_open, p, 0);
    if (p > 0 && c.err) { /* the exec failed: the child has exited */
        e = c.err;
        while (*child && waitpid(p, NULL, 0) < 0 && errno == EINTR) {
        }
        if (pfd >= 0) close(pfd);
        p = -1;
    }
    if (p <= 0) {
        if (sv[0] >= 0) close(sv[0]);
        snprintf(why, wcap, "cannot start %.1000s: %s", exe.path, strerror(e));
        return -1;
    }
    *fd = sv[0];
    *pid = p;
    *pidfd = pfd;
    return 0;
}

/* Helpers killed but not yet reaped (one in an uninterruptible driver call may take a while
 * to end): reaped at later uses. */
static struct {
    pid_t pid;
    int pidfd;
} unreaped[16];

static int reaped(pid_t pid)
{
    int r;
    while ((r = (int)waitpid(pid, NULL, WNOHANG)) < 0 && errno == EINTR) {
    }
    return r != 0; /* ended and reaped, or not ours (ECHILD: the program's wait got it) */
}

static void reap_unreaped(void)
{
    for (size_t i = 0; i < sizeof unreaped / sizeof unreaped[0]; i++)
        if (unreaped[i].pid > 0 && reaped(unreaped[i].pid)) {
            if (unreaped[i].pidfd >= 0) close(unreaped[i].pidfd);
            unreaped[i].pid = 0;
        }
}

/* Kills a helper (SIGKILL ends a stopped one too), through its pidfd where there is one
 * (never a recycled pid), else its pid; one that is the program's child is reaped, waiting
 * at most 2 s for it to end (never without a bound), else at later uses. Closes pidfd. */
static void kill_and_reap(pid_t pid, int pidfd, int child)
{
    if (pid <= 0 || (pidfd < 0 && !child)) { /* no pidfd: its pid may be another's by now */
        if (pidfd >= 0) close(pidfd);
        return;
    }
    if (pidfd >= 0)
        syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    else
        kill(pid, SIGKILL); /* the program's child: its pid is not reused before it is reaped */
    if (!child) {
        close(pidfd);
        return;
    }
    for (int ms = 0; ms < 2000; ms += 10) {
        if (reaped(pid)) {
            if (pidfd >= 0) close(pidfd);
            return;
        }
        if (pidfd >= 0) {
            struct pollfd p = {.fd = pidfd, .events = POLLIN};
            (void)poll(&p, 1, 10);
        } else {
            usleep(10000);
        }
    }
    for (size_t i = 0; i < sizeof unreaped / sizeof unreaped[0]; i++)
        if (unreaped[i].pid <= 0) {
            unreaped[i].pid = pid;
            unreaped[i].pidfd = pidfd;
            return;
        }
    if (pidfd >= 0) close(pidfd); /* more than 16 at once: a zombie until the program ends */
}

/* Is the helper's end closed (the process gone)? Asked without waiting. */
static int hung_up(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL));
}

/* Is fd still the descriptor it was when (dev, ino) were taken? */
static int same_file(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

static void remember_fds(helper_t *h)
{
    struct stat st;
    if (h->fd >= 0 && fstat(h->fd, &st) == 0) {
        h->fd_dev = st.st_dev;
        h->fd_ino = st.st_ino;
    }
    if (h->pidfd >= 0 && fstat(h->pidfd, &st) == 0) {
        h->pidfd_dev = st.st_dev;
        h->pidfd_ino = st.st_ino;
    }
}

/* The program closed the helper's descriptors (a sweep of every one): forgotten, never
 * closed, since their numbers may be the program's files now. 1 when they were. */
static int swept(helper_t *h)
{
    int gone = 0;
    if (h->fd >= 0 && !same_file(h->fd, h->fd_dev, h->fd_ino)) h->fd = -1, gone = 1;
    if (h->pidfd >= 0 && !same_file(h->pidfd, h->pidfd_dev, h->pidfd_ino)) h->pidfd = -1;
    return gone;
}

/* Ends a helper: killed and reaped, its channel closed. */
static void discard(helper_t *h)
{
    (void)swept(h);
    if (h->fd >= 0) close(h->fd);
    kill_and_reap(h->pid, h->pidfd, h->child);
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
                                      r ? r->name : NULL, why, h && r ? h->spare : 0));
}

/* ---- spare helpers (issue 48) ---------------------------------------------------------- */

/* A helper started ahead of need, one per device at most, once a session that runs
 * candidates asked for it (xmt_trial_spare): spawned (spawn: a sibling, as a helper) and
 * sent its HELLO then, or with the device helper's start (start), so that it opens its
 * device while that one starts and runs its sessions; the next start on that
 * device (after a fault ended the helper) takes it and only reads its READY. Its pid,
 * pidfd, child and descriptors are kept as a helper's (a helper_t, pid 0 when none), so
 * that it is ended as one: discard (spare_end_locked, when the device falls back), and
 * killed at exit (xmt_trial_at_exit). Under trial_lock. */
static helper_t spares[XMT_TRIAL_DEVICES] = {
    [0 ... XMT_TRIAL_DEVICES - 1] = {.fd = -1, .pidfd = -1}};
static int spares_wanted[XMT_TRIAL_DEVICES]; /* xmt_trial_spare asked for this device */

static void spare_start_locked(int device)
{
    helper_t *s = &spares[device];
    if (!xmt_opt.trial_spare || !spares_wanted[device] || s->pid > 0) return;
    char why[XMT_PATH_MAX + 600];
    pid_t pid = -1;
    s->fd = s->pidfd = -1;
    if (spawn(&s->fd, &pid, &s->pidfd, &s->child, why, sizeof why) != 0) {
        s->fd = s->pidfd = -1;
        return; /* a start when needed says why */
    }
    s->pid = pid;
    remember_fds(s);
    xmt_tp_msg m = {.type = XMT_TP_HELLO, .seq = 1};
    m.u.hello = (xmt_tp_hello){XMT_TP_VERSION, (int32_t)getpid(), device};
    s->seq = m.seq;
    if (xmt_tp_send(s->fd, &m, NULL, 0) != 0) {
        discard(s);
        return;
    }
    xmt_verbose(1, "trial helper for device %d: a spare is starting (process %d)", device,
                (int)pid);
}

/* Ends the device's spare, if any, as a helper is ended: killed (reaped when it is the
 * program's child), its channel closed. */
static void spare_end_locked(int device)
{
    if (spares[device].pid > 0) discard(&spares[device]);
}

/* Takes the device's spare for h, its READY read into *m (waited for at most
 * XMATUNE_TRIAL_TIMEOUT_MS, as a helper's answer): 1, else 0 (none, or it did not answer,
 * or not as the process spawned: then ended, and h is as it was). */
static int spare_take_locked(helper_t *h, int device, xmt_tp_msg *m)
{
    helper_t *s = &spares[device];
    if (s->pid <= 0) return 0;
    char err[160] = "the program closed its channel";
    int r = swept(s) ? -1
                     : xmt_tp_recv(s->fd, m, NULL, NULL, xmt_opt.trial_timeout_ms, err, sizeof err);
    if (r == 0 && m->type == XMT_TP_READY && m->seq == s->seq && m->u.ready.pid == s->pid) {
        h->fd = s->fd;
        h->pidfd = s->pidfd;
        h->pid = s->pid;
        h->child = s->child;
        h->seq = s->seq;
        h->fd_dev = s->fd_dev;
        h->fd_ino = s->fd_ino;
        h->pidfd_dev = s->pidfd_dev;
        h->pidfd_ino = s->pidfd_ino;
        s->fd = s->pidfd = -1;
        s->pid = 0;
        return 1;
    }
    if (r == 0 && m->type == XMT_TP_READY && m->seq == s->seq)
        snprintf(err, sizeof err, "it answered as pid %d, not the process started (pid %d)",
                 (int)m->u.ready.pid, (int)s->pid);
    else if (r == 0)
        snprintf(err, sizeof err, "not READY");
    xmt_verbose(1, "the spare trial helper for device %d did not answer (%s): starting another",
                device, err);
    spare_end_locked(device);
    return 0;
}

/* Starts this device's helper: spawn, HELLO, READY. The process that answers must be the
 * one started (the file checked; the pid the shim kills and reaps). 0, or -1 with why. */
static int start(helper_t *h, int device, char *why, size_t wcap)
{
    double t0 = xmt_now_ms();
    h->fd = h->pidfd = -1;
    h->pid = 0;
    pid_t pid = -1;
    xmt_tp_msg m = {.type = XMT_TP_HELLO};
    h->spare = spare_take_locked(h, device, &m);
    if (!h->spare) {
        /* a spare that did not answer may have written its answer into m */
        m = (xmt_tp_msg){.type = XMT_TP_HELLO};
        if (spawn(&h->fd, &pid, &h->pidfd, &h->child, why, wcap) != 0) return -1;
        h->pid = pid;
        remember_fds(h);
        m.u.hello = (xmt_tp_hello){XMT_TP_VERSION, (int32_t)getpid(), device};
    }
    spare_start_locked(device); /* the next one, opening its device while this one works */
    pid = h->pid;
    int r = h->spare ? 0 : ask(h, &m, XMT_TP_READY, why, wcap);
    if (r == 0 && m.u.ready.pid != pid) {
        snprintf(why, wcap, "the helper answered as pid %d, not the process started (pid %d)",
                 (int)m.u.ready.pid, (int)pid);
        r = -1;
    } else if (r == 0 && (m.u.ready.status != 0 || hung_up(h->fd))) {
        snprintf(why, wcap, "the helper could not open device %d: %s", device,
                 m.u.ready.status ? m.u.ready.name : "it exited");
        r = -1;
    }
    if (r != 0) {
        discard(h);
        return -1;
    }
    h->state = H_LIVE;
    log_event(h->restarts ? "restarted" : "started", device, h, xmt_now_ms() - t0, &m.u.ready,
              NULL);
    xmt_verbose(1, "trial helper for device %d: pid %d (%s)", device, h->pid, m.u.ready.name);
    return 0;
}

/* No helper for this device for now: logged each time, said once per device. final: for
 * good (a device no helper may use, a helper restarted too often); else a start that
 * failed, tried again at a later key after a backoff (1 s, doubling up to 64 s). */
static int fall_back(helper_t *h, int device, const char *why, int final)
{
    h->state = H_FAILED;
    spare_end_locked(device);
    h->final = final;
    if (!final) {
        h->failures++;
        h->retry_at =
            xmt_now_ms() + 1000.0 * (double)(1 << (h->failures < 7 ? h->failures - 1 : 6));
    }
    log_event("fallback", device, NULL, -1, NULL, why);
    if (!h->said++)
        xmt_warn("the trial helper for device %d is not available: %s%s", device, why,
                 final ? "" : " (tried again at later keys)");
    else
        xmt_verbose(1, "the trial helper for device %d is still not available: %s", device, why);
    return final == 2 ? XMT_TRIAL_UNFIT : XMT_TRIAL_FAILED;
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
    char why[XMT_PATH_MAX + 600];
    reap_unreaped();
    if (h->state == H_FAILED && (h->final || xmt_now_ms() < h->retry_at))
        return h->final == 2 ? XMT_TRIAL_UNFIT : XMT_TRIAL_FAILED;
    if (h->state == H_NONE && !h->restarts && unfit(device, why, sizeof why))
        return fall_back(h, device, why, 2);
    if (h->state == H_LIVE) {
        if (swept(h)) { /* never a PING into a file of the program's */
            snprintf(why, sizeof why, "the program closed its channel");
        } else {
            xmt_tp_msg m = {.type = XMT_TP_PING};
            m.u.token = ((uint64_t)h->seq << 32) ^ (uint64_t)getpid();
            uint64_t token = m.u.token;
            if (ask(h, &m, XMT_TP_PONG, why, sizeof why) == 0 && m.u.token == token) return 0;
        }
        log_event("gone", device, h, -1, NULL, why);
        discard(h);
        if (h->restarts >= XMT_TRIAL_MAX_RESTARTS) {
            char cap[sizeof why + 64];
            snprintf(cap, sizeof cap, "%s, and it was restarted %d times already", why,
                     h->restarts);
            return fall_back(h, device, cap, 1);
        }
        h->restarts++;
    }
    if (start(h, device, why, sizeof why) != 0) return fall_back(h, device, why, 0);
    if (h->failures)
        xmt_verbose(1, "the trial helper for device %d started at a later try", device);
    h->failures = 0;
    return 0;
}

int xmt_trial_get(int device)
{
    if (device < 0 || device >= XMT_TRIAL_DEVICES) {
        static atomic_int warned;
        if (xmt_first_time(&warned))
            xmt_warn("device %d: trial helpers serve devices 0 to %d only", device,
                     XMT_TRIAL_DEVICES - 1);
        return XMT_TRIAL_UNFIT;
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

/* set once the busy locks exist; read at exit by another thread than the one that set it */
static atomic_int busy_ready;

static void busy_init(void)
{
    for (int i = 0; i < XMT_TRIAL_DEVICES; i++)
        pthread_mutex_init(&busy[i], NULL);
    atomic_store(&busy_ready, 1);
}

int xmt_trial_acquire(int device)
{
    if (device < 0 || device >= XMT_TRIAL_DEVICES) return xmt_trial_get(device);
    pthread_once(&busy_once, busy_init);
    pthread_mutex_lock(&busy[device]);
    int r = xmt_trial_get(device);
    if (r != 0) {
        pthread_mutex_unlock(&busy[device]);
        return r;
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

void xmt_trial_at_exit(void)
{
    if (!atomic_load(&busy_ready) || pthread_mutex_trylock(&trial_lock) != 0) return;
    /* one in a session (a background verification not waited for) is left to the channel's
     * end: killing it would wake that thread while the program's exit tears down */
    for (int i = 0; i < XMT_TRIAL_DEVICES; i++)
        if (helpers[i].state == H_LIVE && helpers[i].pidfd >= 0 &&
            pthread_mutex_trylock(&busy[i]) == 0) {
            syscall(SYS_pidfd_send_signal, helpers[i].pidfd, SIGKILL, NULL, 0);
            pthread_mutex_unlock(&busy[i]);
        }
    for (int i = 0; i < XMT_TRIAL_DEVICES; i++) { /* a spare is in no session */
        (void)swept(&spares[i]);
        if (spares[i].pid > 0 && spares[i].pidfd >= 0)
            syscall(SYS_pidfd_send_signal, spares[i].pidfd, SIGKILL, NULL, 0);
    }
    pthread_mutex_unlock(&trial_lock);
}

void xmt_trial_spare(int device)
{
    if (device < 0 || device >= XMT_TRIAL_DEVICES || !xmt_opt.trial_spare) return;
    XMT_IN_SHIM_SCOPE
    {
        pthread_mutex_lock(&trial_lock);
        spares_wanted[device] = 1;
        /* a device whose helper runs passed the checks (unfit) that a first start makes */
        if (helpers[device].state == H_LIVE) spare_start_locked(device);
        pthread_mutex_unlock(&trial_lock);
    }
}

void xmt_trial_atfork(int phase)
{
    if (phase == XMT_FORK_CHILD && busy_ready) /* another thread's session may have held one */
        busy_init();
    if (phase == XMT_FORK_CHILD)
        for (int i = 0; i < XMT_TRIAL_DEVICES; i++) {
            helper_t *h = &helpers[i];
            if (h->state == H_LIVE) (void)swept(h);
            if (h->fd >= 0 && h->state == H_LIVE) close(h->fd);
            if (h->pidfd >= 0 && h->state == H_LIVE) close(h->pidfd);
            memset(h, 0, sizeof *h);
            helper_t *s = &spares[i]; /* the parent's: the child has none */
            if (s->pid > 0) (void)swept(s);
            if (s->fd >= 0 && s->pid > 0) close(s->fd);
            if (s->pidfd >= 0 && s->pid > 0) close(s->pidfd);
            *s = (helper_t){.fd = -1, .pidfd = -1};
            spares_wanted[i] = 0;
        }
    xmt_fork_mutex(&trial_lock, phase);
}
