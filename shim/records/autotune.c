/*
 * autotune: tuning with no policy (see autotune.h).
 */
#include "autotune.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "options.h"

/* The derived sets, one per kernel name; never freed (a kernel's entry lives as long as
 * the process, like the policies'). */
typedef struct auto_set {
    struct auto_set *next;
    char *mangled;
    xmt_policy_set *set;
    const xmt_entry *entry; /* NULL: the derived text did not load or fit (said once) */
} auto_set;
static auto_set *sets;
static pthread_mutex_t sets_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* Derives and loads the entry of one kernel into a (the caller holds sets_lock). */
static void derive(auto_set *a, const char *demangled, size_t np, const uint32_t *sizes)
{
    static xmt_pinfo info[XMT_DERIVE_MAX_PARAMS];
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
                                const uint32_t *sizes, char *why, size_t cap)
{
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
    auto_set *a = sets;
    while (a && strcmp(a->mangled, mangled))
        a = a->next;
    if (!a && (a = calloc(1, sizeof *a)) != NULL) {
        a->mangled = strdup(mangled);
        if (a->mangled) derive(a, demangled, np, sizes);
        a->next = sets;
        sets = a;
    }
    const xmt_entry *e = a ? a->entry : NULL;
    pthread_mutex_unlock(&sets_lock);
    if (!e) snprintf(why, cap, "no entry could be derived for it");
    return e;
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
}
