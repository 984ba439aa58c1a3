/*
 * autotune: tuning with no policy (see autotune.h).
 */
#include "autotune.h"

#include <errno.h>
#include <fnmatch.h>
#include <libiberty/demangle.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cacherec.h"
#include "guard.h"
#include "log.h"
#include "options.h"

/* The derived sets, one per kernel name and parameter layout; never freed (a kernel's
 * entry lives as long as the process, like the policies'). ahead: derived before the
 * kernel was seen (xmt_auto_prederive), from the layout its signature gives. */
typedef struct auto_set {
    struct auto_set *next;
    char *mangled;
    size_t np;
    uint32_t *sizes;
    int ahead;
    xmt_policy_set *set;
    const xmt_entry *entry; /* NULL: the derived text did not load or fit (said once) */
} auto_set;
static auto_set *sets;
static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether the thread that derives ahead is still at work (xmt_auto_ahead_wait). */
static pthread_mutex_t ahead_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ahead_done = PTHREAD_COND_INITIALIZER;
static int ahead_running;

/* The set of a kernel name and layout (sets_lock held); NULL when none. */
static auto_set *find_locked(const char *mangled, size_t np, const uint32_t *sizes)
{
    for (auto_set *a = sets; a; a = a->next)
        if (a->np == np && !strcmp(a->mangled, mangled) &&
            (np == 0 || !memcmp(a->sizes, sizes, np * sizeof *sizes)))
            return a;
    return NULL;
}

static auto_set *new_set(const char *mangled, size_t np, const uint32_t *sizes)
{
    auto_set *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->mangled = strdup(mangled);
    a->sizes = malloc((np ? np : 1) * sizeof *sizes);
    if (!a->mangled || !a->sizes) {
        free(a->mangled);
        free(a->sizes);
        free(a);
        return NULL;
    }
    if (np) memcpy(a->sizes, sizes, np * sizeof *sizes);
    a->np = np;
    return a;
}

static int default_excluded(const char *mangled, const char *demangled)
{
    return fnmatch(XMT_AUTO_DEFAULT_EXCLUDE, mangled, FNM_CASEFOLD) == 0 ||
           fnmatch(XMT_AUTO_DEFAULT_EXCLUDE, demangled, FNM_CASEFOLD) == 0;
}

static void load_diag(void *ud, const char *msg)
{
    (void)ud;
    xmt_warn("XMATUNE_AUTO: derived entry: %s", msg);
}

/* Derives and loads the entry of one kernel into a (no lock: a is not in the list yet). */
static void derive(auto_set *a, const char *demangled, size_t np, const uint32_t *sizes)
{
    xmt_pinfo info[XMT_DERIVE_MAX_PARAMS];
    int typed = xmt_derive_params(demangled, np, sizes, info);
    size_t cap = 65536; /* the entry of every idiom: about 28 KB (rules 2) */
    char *text = malloc(cap);
    if (!text) return;
    memcpy(text, "kernels:\n", 10);
    /* every idiom, each under a condition on the launch's shape: one entry for every key */
    int len = xmt_derive_entry(a->mangled, info, np, typed, NULL, 0, text + 9, cap - 9);
    /* XMATUNE_AUTO_TOLERANCE: the entry's own tolerance:, as a hand-written one would say
     * it (and so in its fingerprint: a record tuned under another tolerance is not used) */
    const xmt_tol *t = &xmt_opt.auto_tol;
    if (len > 0 && (t->rtol > 0 || t->atol > 0))
        snprintf(text + 9 + len, cap - 9 - (size_t)len,
                 "    tolerance: {rtol: %.17g, atol: %.17g}\n", t->rtol, t->atol);
    if (len > 0 &&
        xmt_policy_load_string("(auto)", text, strlen(text), &a->set, load_diag, NULL) == 0)
        a->entry = xmt_policy_match(a->set, a->mangled, load_diag, NULL);
    free(text);
}

const xmt_entry *xmt_auto_entry(const char *mangled, const char *demangled, size_t np,
                                const uint32_t *sizes, int *ahead, char *why, size_t cap)
{
    if (ahead) *ahead = 0;
    if (default_excluded(mangled, demangled)) {
        snprintf(why, cap, "on auto's default list (%s)", XMT_AUTO_DEFAULT_EXCLUDE);
        return NULL;
    }
    if (np > XMT_DERIVE_MAX_PARAMS) {
        snprintf(why, cap, "%zu parameters, more than auto derives for (%d)", np,
                 XMT_DERIVE_MAX_PARAMS);
        return NULL;
    }
    pthread_mutex_lock(&sets_lock);
    auto_set *a = find_locked(mangled, np, sizes);
    if (a) {
        if (ahead) *ahead = a->ahead;
    } else if ((a = new_set(mangled, np, sizes)) != NULL) {
        /* derived under the lock: a second thread's first sight of the kernel waits for
         * this one's instead of deriving it again */
        derive(a, demangled, np, sizes);
        a->next = sets;
        sets = a;
    }
    const xmt_entry *e = a ? a->entry : NULL;
    pthread_mutex_unlock(&sets_lock);
    if (!e) snprintf(why, cap, "no entry could be derived for it");
    return e;
}

/* ---- derived ahead -------------------------------------------------------------------- */

/* The kernels the cache holds auto's records of, to derive before they are seen. At most
 * this many: a cache of a fleet's may name thousands, and a kernel not derived here is
 * derived at its first sight as without the cache. */
#define AHEAD_MAX 512
typedef struct {
    char *names[AHEAD_MAX];
    size_t n;
} ahead_list;

static void ahead_collect(void *ud, const xmt_cacherec *r)
{
    ahead_list *l = ud;
    /* auto's entries are "mangled: NAME" (derive.c); a policy's own entry needs nothing */
    if (l->n >= AHEAD_MAX || strncmp(r->entry, "mangled: ", 9) != 0 ||
        strcmp(r->entry + 9, r->kernel) != 0)
        return;
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->names[i], r->kernel)) return;
    if ((l->names[l->n] = strdup(r->kernel)) != NULL) l->n++;
}

/* The layout a kernel's signature gives (the sizes the driver reports for it, unless the
 * signature does not read or names a type of unknown width): the np parameters' sizes, 0
 * when none can be had. */
static int signature_layout(const char *demangled, uint32_t *sizes, size_t *np)
{
    xmt_sig s;
    xmt_sig_param p[XMT_DERIVE_MAX_PARAMS];
    int n = xmt_sig_read(demangled, &s, p, XMT_DERIVE_MAX_PARAMS);
    if (n < 0) return 0;
    for (int i = 0; i < n; i++) {
        if (!p[i].bytes) return 0;
        sizes[i] = p[i].bytes;
    }
    *np = (size_t)n;
    return 1;
}

static void *ahead_thread(void *arg)
{
    char *path = arg;
    xmt_in_shim = 1; /* the shim's own thread: nothing it does is the program's */
    ahead_list *l = calloc(1, sizeof *l);
    if (l) (void)xmt_cacherec_read(path, ahead_collect, l, NULL);
    free(path);
    for (size_t i = 0; l && i < l->n; i++) {
        const char *m = l->names[i];
        char *dm = cplus_demangle(m, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
        const char *demangled = dm ? dm : m;
        uint32_t sizes[XMT_DERIVE_MAX_PARAMS];
        size_t np = 0;
        if (!default_excluded(m, demangled) && signature_layout(demangled, sizes, &np)) {
            pthread_mutex_lock(&sets_lock);
            int have = find_locked(m, np, sizes) != NULL;
            pthread_mutex_unlock(&sets_lock);
            auto_set *a = have ? NULL : new_set(m, np, sizes);
            if (a) {
                derive(a, demangled, np, sizes); /* outside the lock: launches go on */
                a->ahead = 1;
                pthread_mutex_lock(&sets_lock);
                int late = find_locked(m, np, sizes) != NULL; /* seen and derived meanwhile */
                if (!late) {
                    a->next = sets;
                    sets = a;
                }
                pthread_mutex_unlock(&sets_lock);
                if (late) { /* nobody has it: ours goes */
                    if (a->set) xmt_policy_free(a->set);
                    free(a->mangled);
                    free(a->sizes);
                    free(a);
                }
            }
        }
        free(dm);
        free(l->names[i]);
    }
    free(l);
    pthread_mutex_lock(&ahead_lock);
    ahead_running = 0;
    pthread_cond_broadcast(&ahead_done);
    pthread_mutex_unlock(&ahead_lock);
    return NULL;
}

void xmt_auto_prederive(const char *cache_path)
{
    if (!xmt_opt.autotune || !cache_path || !cache_path[0]) return;
    /* no thread for a cache that holds nothing yet (a first run's) */
    struct stat st;
    if (stat(cache_path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return;
    char *path = strdup(cache_path);
    if (!path) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are not for it */
    pthread_t t;
    pthread_mutex_lock(&ahead_lock);
    ahead_running = 1;
    int ok = pthread_create(&t, NULL, ahead_thread, path) == 0;
    if (!ok) ahead_running = 0;
    pthread_mutex_unlock(&ahead_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ok)
        pthread_detach(t);
    else
        free(path);
}

int xmt_auto_ahead_wait(int timeout_ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    long long ns = t.tv_nsec + (long long)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000LL;
    t.tv_sec += (time_t)(ns / 1000000000LL);
    t.tv_nsec = (long)(ns % 1000000000LL);
    pthread_mutex_lock(&ahead_lock);
    int r = 0;
    while (ahead_running && r != ETIMEDOUT)
        r = timeout_ms < 0 ? pthread_cond_wait(&ahead_done, &ahead_lock)
                           : pthread_cond_timedwait(&ahead_done, &ahead_lock, &t);
    int done = !ahead_running;
    pthread_mutex_unlock(&ahead_lock);
    return done;
}

int xmt_auto_owns(const xmt_entry *e)
{
    const char *o = e ? xmt_entry_origin(e) : NULL;
    return o && !strncmp(o, "(auto):", 7);
}

const char *xmt_auto_idiom_of(const char *label)
{
    const char *p = label ? strstr(label, "IDIOM=") : NULL;
    if (!p) return NULL;
    int id = (int)strtol(p + 6, NULL, 10);
    const char *n = xmt_idiom_name(id);
    return strcmp(n, "?") ? n : NULL;
}

void xmt_auto_atfork(int phase)
{
    xmt_fork_mutex(&sets_lock, phase);
    xmt_fork_mutex(&ahead_lock, phase);
    if (phase == XMT_FORK_CHILD) ahead_running = 0; /* the thread is the parent's alone */
}
