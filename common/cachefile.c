/*
 * cachefile: the cache's files, lock, compaction and claims (see cachefile.h).
 */
#include "cachefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

#define PATH_CAP 4096

static int make_dir(const char *dir, char *why, size_t why_cap)
{
    if (mkdir(dir, 0700) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
        snprintf(why, why_cap, "%s is not a folder", dir);
        return -1;
    }
    snprintf(why, why_cap, "cannot make %s: %s", dir, strerror(errno));
    return -1;
}

int xmt_cachefile_default(char *out, size_t cap, char *why, size_t why_cap)
{
    char dir[PATH_CAP];
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/') {
        if (snprintf(dir, sizeof dir, "%s", xdg) >= (int)sizeof dir) goto too_long;
    } else if (home && home[0] == '/') {
        if (snprintf(dir, sizeof dir, "%s/.cache", home) >= (int)sizeof dir) goto too_long;
    } else {
        snprintf(why, why_cap, "neither XDG_CACHE_HOME nor HOME is an absolute path");
        return -1;
    }
    if (make_dir(dir, why, why_cap) != 0) return -1;
    size_t n = strlen(dir);
    if (snprintf(dir + n, sizeof dir - n, "/xmatune") >= (int)(sizeof dir - n)) goto too_long;
    if (make_dir(dir, why, why_cap) != 0) return -1;
    if (snprintf(out, cap, "%s/%s", dir, XMT_CACHE_FILE_NAME) >= (int)cap) goto too_long;
    return 0;
too_long:
    snprintf(why, why_cap, "the default cache's path is too long");
    return -1;
}

int xmt_cachefile_no_flock(int err)
{
    return err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS;
}

static int sibling(const char *path, const char *suffix, char *out, size_t cap)
{
    if (snprintf(out, cap, "%s%s", path, suffix) >= (int)cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Opens P.lock, created when missing. Another user's lock file (0644 under umask 022)
 * cannot be opened for writing, but flock works on a read-only descriptor: whoever may
 * read the lock takes it, shared or exclusive, so two users sharing a cache both lock. */
static int open_lock(const char *path)
{
    char lock[PATH_CAP];
    if (sibling(path, ".lock", lock, sizeof lock) != 0) return -1;
    /* group-writable as the umask allows: a team's cache is locked by the whole team */
    int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
        int first = errno; /* a lock file that could not be made: say why, not "no such file" */
        fd = open(lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) errno = first;
    }
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

static int fail_closing(int fd)
{
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

int xmt_cachefile_lock(const char *path, int exclusive)
{
    return xmt_cachefile_lock_for(path, exclusive, -1);
}

int xmt_cachefile_lock_for(const char *path, int exclusive, long wait_ms)
{
    int fd = open_lock(path);
    if (fd < 0) return -1;
    int op = exclusive ? LOCK_EX : LOCK_SH;
    if (wait_ms < 0) {
        while (flock(fd, op) != 0)
            if (errno != EINTR) return fail_closing(fd);
        return fd;
    }
    /* bounded: polled (a timer signal is not a library's to take), 1 ms doubling to 50 */
    struct timespec nap = {0, 1000000};
    uint64_t t0 = xmt_now_ns();
    for (;;) {
        if (flock(fd, op | LOCK_NB) == 0) return fd;
        if (errno != EWOULDBLOCK && errno != EINTR) return fail_closing(fd);
        long long waited = (long long)((xmt_now_ns() - t0) / 1000000);
        if (waited >= wait_ms) {
            errno = ETIMEDOUT;
            return fail_closing(fd);
        }
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 50000000) nap.tv_nsec *= 2;
    }
}

const char *xmt_cachefile_unusable(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return NULL; /* missing: made at the first write */
    if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
    if (!S_ISREG(st.st_mode)) return "it is not a regular file";
    return NULL;
}

/* Makes P.tmp.PID.N (its name in tmp), exclusively, with XMT_CACHEFILE_MODE under the
 * umask: mkstemp's files are 0600 whatever the umask, and a new cache must be a team's
 * file in a team's folder as its .lock and .claims are. The descriptor, or -1 and errno. */
static int make_temp(const char *path, char *tmp, size_t cap)
{
    static atomic_uint serial;
    for (int tries = 0; tries < 100; tries++) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        unsigned n = atomic_fetch_add(&serial, 1) ^ (unsigned)t.tv_nsec;
        if (snprintf(tmp, cap, "%s.tmp.%ld.%08x", path, (long)getpid(), n) >= (int)cap) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, XMT_CACHEFILE_MODE);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

int xmt_cachefile_rewrite(const char *path, const char *(*next)(void *ud, size_t *len), void *ud)
{
    char tmp[PATH_CAP];
    int fd = make_temp(path, tmp, sizeof tmp);
    if (fd < 0) return -1;
    struct stat st;
    int err = 0;
    /* P's mode when there is a P (its owner's choice); a new one as open gave it */
    if (stat(path, &st) == 0 && fchmod(fd, st.st_mode & 0777) != 0) err = errno;
    /* written in blocks: one write per record would be 10,000 system calls */
    char buf[65536];
    size_t have = 0;
    const char *line;
    size_t len;
    while (!err && (line = next(ud, &len))) {
        while (!err && len > 0) {
            if (have == sizeof buf || len >= sizeof buf) {
                const char *from = have ? buf : line;
                size_t n = have ? have : len;
                ssize_t w = write(fd, from, n);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) {
                    err = w < 0 ? errno : EIO;
                    break;
                }
                if (have) {
                    memmove(buf, buf + w, have - (size_t)w);
                    have -= (size_t)w;
                } else {
                    line += w;
                    len -= (size_t)w;
                }
                continue;
            }
            size_t n = sizeof buf - have < len ? sizeof buf - have : len;
            memcpy(buf + have, line, n);
            have += n;
            line += n;
            len -= n;
        }
    }
    for (size_t off = 0; !err && off < have;) {
        ssize_t w = write(fd, buf + off, have - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            err = w < 0 ? errno : EIO;
        else
            off += (size_t)w;
    }
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) {
        unlink(tmp);
        errno = err;
        return -1;
    }
    return 0;
}

void xmt_cachefile_clean_temps(const char *path)
{
    char dir[PATH_CAP], prefix[PATH_CAP];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) return; /* paths are absolute by now */
    *slash = 0;
    if (snprintf(prefix, sizeof prefix, "%s.tmp.", slash + 1) >= (int)sizeof prefix) return;
    DIR *d = opendir(dir[0] ? dir : "/");
    if (!d) return;
    size_t n = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, n) == 0) (void)unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* ---- claims ---------------------------------------------------------------------------- */

/* This process: pid, start time (clock ticks since boot, /proc/self/stat field 22) and
 * the boot's id: together they name it across pid reuse and reboots. */
typedef struct {
    long pid;
    unsigned long long start;
    char boot[40];
    char host[64]; /* for people only: nothing is decided by it */
} who_t;

static unsigned long long start_of(long pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *s = strrchr(buf, ')'); /* the command's name may hold spaces and parentheses */
    if (!s) return 0;
    /* after ") ": field 3 (state) ... field 22 (starttime) */
    int field = 2;
    for (; *s && field < 22; s++)
        if (*s == ' ') field++;
    return strtoull(s, NULL, 10);
}

static void boot_id(char out[40])
{
    out[0] = 0;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, out, 39);
    close(fd);
    out[n > 0 ? n : 0] = 0;
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
}

/* A host name as a claim line holds it and a message prints it: a word of letters,
 * digits, '.', '-' and '_' (anything else '_'), "" for none. Another user may have written
 * the line: nothing else of it reaches a terminal. */
static void printable_host(const char *in, char out[64])
{
    size_t n = 0;
    for (; n < 63 && in[n]; n++) {
        char ch = in[n];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '-' || ch == '_';
        out[n] = ok ? ch : '_';
    }
    out[n] = 0;
}

static void me(who_t *w)
{
    w->pid = (long)getpid();
    w->start = start_of(w->pid);
    boot_id(w->boot);
    char h[256];
    if (gethostname(h, sizeof h) != 0) h[0] = 0;
    h[sizeof h - 1] = 0;
    printable_host(h, w->host);
}

long xmt_cachefile_claim_max_age_s(double budget_ms, int trial_timeout_ms)
{
    double s =
        budget_ms >= 0 ? (2 * budget_ms + (trial_timeout_ms > 0 ? trial_timeout_ms : 0)) / 1000 : 0;
    return s > XMT_CLAIM_AGE_MIN_S ? (long)s + 1 : XMT_CLAIM_AGE_MIN_S;
}

/* Room for the line this process adds: a name (16 hex digits from the shim), two numbers,
 * the boot id, the time and a host name of at most 63 bytes fit well. */
#define CLAIM_LINE_CAP 512

/* One claim line: "WHAT PID START BOOT TIME HOST\n" (HOST since 2026-12-07: a line
 * without it is read as before, and earlier readers read the first five words only). */
typedef struct {
    char what[64];
    who_t who;
    long long when;
} claim_t;

/* The next space-separated word of *p into out (cap bytes); 0, or -1 when there is none
 * or it does not fit. */
static int word(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    size_t n = strcspn(s, " ");
    if (n == 0 || n >= cap) return -1;
    memcpy(out, s, n);
    out[n] = 0;
    *p = s + n;
    return 0;
}

static int number(const char **p, long long *v)
{
    char w[32], *end;
    if (word(p, w, sizeof w) != 0) return -1;
    errno = 0;
    *v = strtoll(w, &end, 10);
    return *end || errno ? -1 : 0;
}

static int parse_claim(const char *line, claim_t *c)
{
    long long pid, start;
    if (word(&line, c->what, sizeof c->what) != 0 || number(&line, &pid) != 0 ||
        number(&line, &start) != 0 || word(&line, c->who.boot, sizeof c->who.boot) != 0 ||
        number(&line, &c->when) != 0)
        return 0;
    c->who.pid = (long)pid;
    c->who.start = (unsigned long long)start;
    char host[256];
    if (word(&line, host, sizeof host) != 0) host[0] = 0;
    printable_host(host, c->who.host);
    return 1;
}

static int live(const claim_t *c, const who_t *self, long max_age_s)
{
    /* capped by its age whoever made it: a live process's claim too (pid 1's never ends),
     * and one dated in the future at the same age (else a clock years ahead would make it
     * last for years) */
    long long age = (long long)time(NULL) - c->when;
    if (age >= max_age_s || -age >= max_age_s) return 0;
    if (strcmp(c->who.boot, self->boot) != 0) return 1; /* another machine: it cannot be asked */
    if (kill((pid_t)c->who.pid, 0) != 0 && errno == ESRCH) return 0;
    return start_of(c->who.pid) == c->who.start; /* else the pid was reused */
}

/* Reads the claims file, drops stale lines, and: op 1 adds ours for what (unless a live
 * process other than this one has it: *theirs, the first such claim in *holder when not
 * NULL), op 0 drops ours for what (NULL: all), op -1 only looks (writes nothing). 0, or -1
 * and errno. */
static int update_claims(const char *path, const char *what, int op, long max_age_s, int *theirs,
                         xmt_claim_holder *holder)
{
    char cp[PATH_CAP];
    if (sibling(path, ".claims", cp, sizeof cp) != 0) return -1;
    int fd = open(cp, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20)) {
        /* not ours to read: a megabyte of claims is not a list of keys being tuned */
        close(fd);
        errno = EINVAL;
        return -1;
    }
    char *in = malloc((size_t)st.st_size + 1), *out = malloc((size_t)st.st_size + CLAIM_LINE_CAP);
    ssize_t n = in ? pread(fd, in, (size_t)st.st_size, 0) : -1;
    if (!in || !out || n < 0) {
        free(in);
        free(out);
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    in[n] = 0;
    who_t self;
    me(&self);
    size_t o = 0;
    int changed = 0, have_mine = 0;
    *theirs = 0;
    for (char *line = in, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        claim_t c;
        int mine = 0, keep = parse_claim(line, &c) && live(&c, &self, max_age_s);
        if (keep && c.who.pid == self.pid && strcmp(c.who.boot, self.boot) == 0) mine = 1;
        if (keep && what && strcmp(c.what, what) == 0) {
            if (!mine && !*theirs && holder) {
                long long age = (long long)time(NULL) - c.when;
                *holder = (xmt_claim_holder){.pid = c.who.pid,
                                             .this_machine = !strcmp(c.who.boot, self.boot),
                                             .age_s = age,
                                             .left_s = max_age_s - (age < 0 ? -age : age)};
                memcpy(holder->host, c.who.host, sizeof holder->host);
            }
            if (!mine) *theirs = 1;
            if (mine && op == 1) have_mine = 1;
            if (mine && op == 0) keep = 0; /* unclaim */
        }
        if (keep && mine && !what && op == 0) keep = 0; /* unclaim all */
        if (!keep) {
            changed = 1;
            continue;
        }
        o += (size_t)sprintf(out + o, "%s\n", line); /* fits: out has room for all of in */
        if (!nl) changed = 1;
        if (!nl) break;
    }
    if (op == 1 && !*theirs && !have_mine) {
        int w = snprintf(out + o, CLAIM_LINE_CAP, "%s %ld %llu %s %lld %s\n", what, self.pid,
                         self.start, self.boot[0] ? self.boot : "-", (long long)time(NULL),
                         self.host[0] ? self.host : "-");
        if (w > 0 && w < CLAIM_LINE_CAP) o += (size_t)w; /* else what is no claim's name */
        changed = 1;
    }
    int rc = 0;
    if (changed && op >= 0) {
        /* under the exclusive lock: nobody reads it half-written */
        if (ftruncate(fd, 0) != 0 || (o && pwrite(fd, out, o, 0) != (ssize_t)o)) rc = -1;
    }
    int e = errno;
    free(in);
    free(out);
    close(fd);
    errno = e;
    return rc;
}

int xmt_cachefile_claim(const char *path, const char *what, long max_age_s,
                        xmt_claim_holder *holder)
{
    int theirs = 0;
    if (update_claims(path, what, 1, max_age_s, &theirs, holder) != 0) return -1;
    return theirs ? XMT_CLAIM_THEIRS : XMT_CLAIM_MINE;
}

int xmt_cachefile_claimed(const char *path, const char *what, long max_age_s)
{
    int theirs = 0;
    if (update_claims(path, what, -1, max_age_s, &theirs, NULL) != 0) return 0;
    return theirs;
}

void xmt_cachefile_unclaim(const char *path, const char *what, long max_age_s)
{
    int theirs = 0;
    (void)update_claims(path, what, 0, max_age_s, &theirs, NULL);
}
