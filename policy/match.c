/* match.c - which policy entry applies to a kernel.
 *
 * Kernels arrive as mangled names. libiberty (static, so the shim does not drag
 * libstdc++ into every process) demangles them into the signature without return type,
 * matched by signature:, and the signature reader (signature.c) reads from it the name
 * without parameters, matched by match:; mangled: compares the raw name. Names that do
 * not demangle (extern "C", Triton) are used as they are. When an entry names
 * parameters without types, the types come from the reader's classes of the parameters,
 * into a per-signature copy of the entry.
 */
#include "entry.h"
#include "types.h"

#include <libiberty/demangle.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int copy_out(char *dst, size_t cap, const char *src)
{
    if (!dst || !cap) return 0;
    size_t n = strlen(src);
    if (n >= cap) {
        memcpy(dst, src, cap - 1);
        dst[cap - 1] = 0;
        return -1;
    }
    memcpy(dst, src, n + 1);
    return 0;
}

int xmt_demangle(const char *mangled, char *name, size_t name_cap, char *sig, size_t sig_cap)
{
    char *full = NULL;
    int rc = 0;
    if (mangled && mangled[0] == '_' && mangled[1] == 'Z')
        full = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_RET_DROP);
    if (!full) {
        rc |= copy_out(name, name_cap, mangled ? mangled : "");
        rc |= copy_out(sig, sig_cap, mangled ? mangled : "");
        return rc ? -1 : 0;
    }
    /* the name is the signature's, as the one reader reads it (signature.c) */
    if (name && name_cap && xmt_sig_name(full, name, name_cap) >= name_cap) rc = -1;
    rc |= copy_out(sig, sig_cap, full);
    free(full);
    return rc ? -1 : 1;
}

/* Glob: '*' any run, '?' one character, '\' quotes the next; '[' is literal because C++
 * names contain brackets (operator[]). Iterative, linear backtracking on the last '*'. */
static int glob(const char *p, const char *s)
{
    const char *star = NULL, *ss = NULL;
    while (*s) {
        if (*p == '*') {
            star = ++p;
            ss = s;
            continue;
        }
        if (*p == '?' || (*p == '\\' && p[1] && p[1] == *s) || (*p != '\\' && *p == *s)) {
            p += (*p == '\\') ? 2 : 1;
            s++;
            continue;
        }
        if (star) {
            p = star;
            s = ++ss;
            continue;
        }
        return 0;
    }
    while (*p == '*')
        p++;
    return *p == 0;
}

static size_t literal_chars(const char *p)
{
    size_t n = 0;
    for (; *p; p++) {
        if (*p == '*' || *p == '?') continue;
        if (*p == '\\' && p[1]) p++;
        n++;
    }
    return n;
}

static int entry_matches(const struct xmt_entry *e, const char *mangled, const char *name,
                         const char *sig)
{
    switch (e->patkind) {
    case XMT_PAT_MANGLED: return strcmp(e->pattern, mangled) == 0;
    case XMT_PAT_SIGNATURE: return glob(e->pattern, sig);
    case XMT_PAT_MATCH: return glob(e->pattern, name);
    }
    return 0;
}

/* Demangles into malloc'd name and sig; 0 ok. */
static int demangle_alloc(const char *mangled, char **name, char **sig)
{
    size_t cap = strlen(mangled) * 8 + 256;
    for (int tries = 0; tries < 4; tries++, cap *= 4) {
        *name = malloc(cap);
        *sig = malloc(cap);
        if (!*name || !*sig) {
            free(*name);
            free(*sig);
            return -1;
        }
        if (xmt_demangle(mangled, *name, cap, *sig, cap) >= 0) return 0;
        free(*name);
        free(*sig);
    }
    return -1;
}

int xmt_entry_matches(const xmt_entry *e, const char *mangled)
{
    char *name, *sig;
    if (!e || !mangled || demangle_alloc(mangled, &name, &sig)) return 0;
    int m = entry_matches(e, mangled, name, sig);
    free(name);
    free(sig);
    return m;
}

static void diagf(xmt_diag_fn diag, void *ud, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void diagf(xmt_diag_fn diag, void *ud, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (diag) diag(ud, msg);
}

/* 1 when each declared type has the size of the signature's type at its place (where
 * the signature's type is a scalar or a pointer), else 0 with why set: xmatune check
 * compares them. */
static int declared_fit(const struct xmt_entry *e, const uint8_t *types, const uint32_t *sizes,
                        unsigned n, char *why, size_t cap)
{
    for (unsigned i = 0; i < n; i++)
        if (e->params[i].type != XMT_PT_UNKNOWN && types[i] != XMT_PT_UNKNOWN &&
            e->psizes[i] != sizes[i]) {
            snprintf(why, cap,
                     "parameter %s is declared with %u bytes, the signature's type has %u",
                     e->params[i].name, (unsigned)e->psizes[i], (unsigned)sizes[i]);
            return 0;
        }
    return 1;
}

/* Builds the specialised copy of e for signature sig, or NULL with why set. */
static struct xmt_entry *specialise(const struct xmt_entry *e, const char *sig, char *why,
                                    size_t cap)
{
    xmt_sig sg;
    xmt_sig_param ps[XMT_MAX_PARAMS];
    int ns = xmt_sig_read(sig, &sg, ps, XMT_MAX_PARAMS);
    if (ns < 0) {
        snprintf(why, cap,
                 "the kernel name carries no parameter types; declare them (e.g. params: [n: i32, "
                 "x: ptr])");
        return NULL;
    }
    if ((unsigned)ns != e->nparams) {
        snprintf(why, cap, "the signature has %d parameter%s, the policy names %u", ns,
                 ns == 1 ? "" : "s", e->nparams);
        return NULL;
    }
    uint8_t types[XMT_MAX_PARAMS];
    uint32_t sizes[XMT_MAX_PARAMS];
    unsigned n = (unsigned)ns;
    for (unsigned i = 0; i < n; i++) {
        /* a pointer or reference is a ptr, a scalar its dtype; the rest must be declared */
        const xmt_sig_param *q = &ps[i];
        int ty = q->cls == XMT_SIG_POINTER                                             ? XMT_PT_PTR
                 : (q->cls == XMT_SIG_INT || q->cls == XMT_SIG_FLOAT) && q->dtype >= 0 ? q->dtype
                                                                                       : -1;
        if (e->params[i].type == XMT_PT_UNKNOWN && ty < 0) {
            snprintf(
                why, cap,
                "parameter %s has type '%.*s' in the signature, which is not a scalar or pointer; "
                "declare it (e.g. %s: bytes(N))",
                e->params[i].name, (int)q->len, q->text, e->params[i].name);
            return NULL;
        }
        types[i] = ty < 0 ? XMT_PT_UNKNOWN : (uint8_t)ty;
        sizes[i] = ty < 0 ? 0 : ty == XMT_PT_PTR ? 8 : q->bytes;
    }
    struct xmt_entry *c = malloc(sizeof *c);
    if (!c) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    memcpy(c, e, sizeof *c);
    c->owner = 0;
    c->needs_sig = 0;
    c->ptypes = malloc(n ? n : 1);
    c->psizes = malloc((n ? n : 1) * sizeof *c->psizes);
    if (!c->ptypes || !c->psizes) {
        free(c->ptypes);
        free(c->psizes);
        free(c);
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    if (!declared_fit(e, types, sizes, n, why, cap)) goto bad;
    for (unsigned i = 0; i < n; i++) {
        const xmt_param *p = &e->params[i];
        if (p->type != XMT_PT_UNKNOWN) {
            c->ptypes[i] = e->ptypes[i];
            c->psizes[i] = e->psizes[i];
            continue;
        }
        c->ptypes[i] = types[i];
        c->psizes[i] = sizes[i];
    }
    /* what the loader allowed for an untyped name must hold for the type found */
    for (unsigned i = 0; i < n; i++) {
        const xmt_param *p = &e->params[i];
        if (p->type != XMT_PT_UNKNOWN) continue;
        if (p->tuned && c->ptypes[i] == XMT_PT_PTR) {
            snprintf(why, cap, "args: sets %s, which the signature says is a pointer", p->name);
            goto bad;
        }
    }
    return c;
bad:
    free(c->ptypes);
    free(c->psizes);
    free(c);
    return NULL;
}

static const xmt_entry *specialised(struct xmt_policy_set *set, const struct xmt_entry *e,
                                    const char *mangled, const char *sig, xmt_diag_fn diag,
                                    void *ud)
{
    pthread_mutex_lock(&set->mu);
    struct xmt_spec *s;
    for (s = set->specs; s; s = s->next)
        if (s->base == e && !strcmp(s->sig, sig)) break;
    if (!s) {
        char why[512];
        s = calloc(1, sizeof *s);
        if (s) s->sig = strdup(sig);
        if (!s || !s->sig) {
            free(s);
            pthread_mutex_unlock(&set->mu);
            return NULL;
        }
        s->base = e;
        s->e = specialise(e, sig, why, sizeof why);
        if (!s->e)
            diagf(diag, ud, "%s: entry (%s) matches kernel %s but does not apply: %s", e->origin,
                  e->pattern_text, mangled, why);
        s->next = set->specs;
        set->specs = s;
    }
    pthread_mutex_unlock(&set->mu);
    return s->e;
}

static const char *kind_word(xmt_patkind k)
{
    return k == XMT_PAT_MANGLED ? "mangled:" : k == XMT_PAT_SIGNATURE ? "signature:" : "match:";
}

const xmt_entry *xmt_policy_match(const xmt_policy_set *cset, const char *mangled, xmt_diag_fn diag,
                                  void *ud)
{
    struct xmt_policy_set *set =
        (struct xmt_policy_set *)cset; /* only the spec cache changes, under mu */
    if (!set || !mangled || set->n == 0) return NULL;
    char *name, *sig;
    if (demangle_alloc(mangled, &name, &sig)) return NULL;
    const struct xmt_entry *best = NULL;
    size_t nmatch = 0, bestlit = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct xmt_entry *e = set->v[i];
        if (!entry_matches(e, mangled, name, sig)) continue;
        nmatch++;
        size_t lit = literal_chars(e->pattern);
        if (!best || e->patkind > best->patkind || (e->patkind == best->patkind && lit > bestlit)) {
            best = e;
            bestlit = lit;
        }
    }
    if (nmatch > 1) {
        char list[1536];
        size_t at = 0;
        list[0] = 0;
        for (size_t i = 0; i < set->n && at < sizeof list; i++) {
            const struct xmt_entry *e = set->v[i];
            if (!entry_matches(e, mangled, name, sig)) continue;
            int w = snprintf(list + at, sizeof list - at, "%s%s (%s)", at ? ", " : "", e->origin,
                             e->pattern_text);
            if (w > 0) at += (size_t)w;
        }
        diagf(diag, ud,
              "%s: kernel %s matches %zu entries: %s; using %s, by %s (mangled: over signature: "
              "over match:, "
              "then the longer literal pattern, then the first loaded)",
              best->origin, name, nmatch, list, best->origin, kind_word(best->patkind));
    }
    const xmt_entry *r = best;
    if (best && best->needs_sig) r = specialised(set, best, mangled, sig, diag, ud);
    free(name);
    free(sig);
    return r;
}

int xmt_entry_check_signature(const xmt_entry *e, const char *mangled, char *why, size_t cap)
{
    char *name, *sig;
    if (!e || !mangled || demangle_alloc(mangled, &name, &sig)) {
        snprintf(why, cap, "cannot demangle the name");
        return 1;
    }
    int rc = 0;
    xmt_sig sg;
    xmt_sig_param ps[XMT_MAX_PARAMS];
    if (xmt_sig_read(sig, &sg, ps, XMT_MAX_PARAMS) < 0) {
        snprintf(why, cap, "the kernel name carries no parameter types");
        rc = e->needs_sig ? -1 : 1;
        if (e->needs_sig)
            snprintf(why, cap,
                     "the kernel name carries no parameter types; declare them (e.g. params: [n: "
                     "i32, x: ptr])");
    } else {
        struct xmt_entry *c = specialise(e, sig, why, cap);
        rc = c ? 0 : -1;
        if (c) {
            free(c->ptypes);
            free(c->psizes);
            free(c);
        }
    }
    free(name);
    free(sig);
    return rc;
}
