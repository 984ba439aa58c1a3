/* entry_tools.c - what the xmatune command asks of an entry, and the shim never: setting a
 * named argument (or a field of one) in a launch's parameters (xmatune check --arg), an
 * entry described in words (xmatune check), and an expression evaluated on its own
 * (xmatune check --expr). Declared in the public header, xmt_policy.h (see entry_tools.h).
 */
#include "entry_tools.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "eval.h"
#include "sbuf.h"
#include "types.h"

/* ---- tools -------------------------------------------------------------------------- */

int xmt_entry_set_arg(const xmt_entry *e, const char *name, const char *value, void *const *params,
                      char *why, size_t cap)
{
    char base[XMT_NAME_MAX * 2 + 2];
    snprintf(base, sizeof base, "%s", name);
    char *dot = strchr(base, '.');
    if (dot) *dot++ = 0;
    for (unsigned i = 0; i < e->nparams; i++) {
        const xmt_param *p = &e->params[i];
        if (strcmp(p->name, base)) continue;
        unsigned t = e->ptypes[i], off = 0;
        if (dot) {
            int found = 0;
            for (unsigned f = 0; f < p->nfields; f++)
                if (!strcmp(p->fields[f].name, dot)) {
                    t = p->fields[f].type;
                    off = p->fields[f].offset;
                    found = 1;
                }
            if (!found) {
                snprintf(why, cap, "%s has no field %s", base, dot);
                return -1;
            }
        }
        if (t == XMT_PT_UNKNOWN || t == XMT_PT_BLOB) {
            snprintf(why, cap, "%s: type %s cannot be set from a number", name, xmt_type_name(t));
            return -1;
        }
        xmt_val v;
        char *end;
        errno = 0;
        long long ll = strtoll(value, &end, 0);
        if (end != value && !*end && !errno) {
            v.isf = 0;
            v.u.i = ll;
        } else {
            errno = 0;
            double d = strtod(value, &end);
            if (end == value || *end || errno) {
                snprintf(why, cap, "%s: '%s' is not a number", name, value);
                return -1;
            }
            v.isf = 1;
            v.u.f = d;
        }
        uint64_t bits;
        unsigned size;
        if (xmt_store_scalar(v, t == XMT_PT_PTR ? XMT_DT_U64 : t, &bits, &size)) {
            snprintf(why, cap, "%s: %s does not fit %s", name, value, xmt_type_name(t));
            return -1;
        }
        memcpy((char *)params[i] + off, &bits, size); /* little-endian host */
        return 0;
    }
    snprintf(why, cap, "no parameter %s", base);
    return -1;
}

/* "  search: local (the default for its size), seed 1, at most 96 of 1920 points
 * evaluated"; only for an entry that says search: or whose space is searched. */
static void describe_search(const xmt_entry *e, xmt_sbuf *b)
{
    int how = e->search;
    const char *why = how == XMT_SEARCH_UNSET ? " (the default for its size)" : "";
    if (!xmt_entry_searched(e)) {
        xmt_sb(b, "  search: exhaustive, every point of the space timed\n");
        return;
    }
    xmt_sb(b, "  search: local%s, seed %d, at most %zu of %zu points evaluated", why,
           XMT_SEARCH_SEED, xmt_entry_search_evals(e), e->spacesize);
    if (e->search_evals > 0)
        xmt_sb(b, " (search_evals: %d)", e->search_evals);
    else if (e->search_share > 0)
        xmt_sb(b, " (search_evals: %g%%)", e->search_share * 100);
    xmt_sb(b, "\n");
}

int xmt_entry_describe(const xmt_entry *e, char *buf, size_t cap)
{
    xmt_sbuf b = {buf, cap, 0};
    if (cap) buf[0] = 0;
    xmt_sb(&b, "  params:");
    for (unsigned i = 0; i < e->nparams; i++) {
        const char *tn =
            e->params[i].type == XMT_PT_UNKNOWN ? xmt_type_name(e->ptypes[i]) : e->params[i].tname;
        xmt_sb(&b, "%s %s: %s", i ? "," : "", e->params[i].name, tn);
        for (unsigned f = 0; f < e->params[i].nfields; f++)
            xmt_sb(&b, "%s%s: %s@%u%s", f ? ", " : " {", e->params[i].fields[f].name,
                   xmt_type_name(e->params[i].fields[f].type), e->params[i].fields[f].offset,
                   f + 1 == e->params[i].nfields ? "}" : "");
    }
    if (!e->nparams) xmt_sb(&b, " (none)");
    xmt_sb(&b, "\n");
    for (unsigned i = 0; i < e->ntensors; i++)
        xmt_sb(&b, "  tensor %s: %s\n", e->tensors[i].name, e->tensors[i].desc);
    xmt_sb(&b, "  key fields (%zu bytes):", e->keylen);
    for (unsigned t = 0; t < e->ntriggers; t++)
        xmt_sb(&b, "%s %s", t ? "," : "", e->triggers[t].label);
    for (unsigned f = 0; f < e->nft; f++)
        xmt_sb(&b, "%s %s (functional)", (e->ntriggers || f) ? "," : "", e->ftnames[f]);
    if (!e->ntriggers && !e->nft) xmt_sb(&b, " none: one tuning for every launch");
    xmt_sb(&b, "\n  candidates: %zu", xmt_entry_ncandidates(e));
    if (e->nconfigs) xmt_sb(&b, " (%u configs", e->nconfigs);
    if (e->nspace) {
        xmt_sb(&b, "%sspace", e->nconfigs ? " + " : " (");
        for (unsigned d = 0; d < e->nspace; d++)
            xmt_sb(&b, "%s%s[%u]", d ? " x " : " ", e->space[d].name, e->space[d].n);
    }
    if (e->nconfigs || e->nspace) xmt_sb(&b, ")");
    if (e->has_pin) xmt_sb(&b, ", pinned");
    xmt_sb(&b, "\n");
    if (e->nspace && (e->search != XMT_SEARCH_UNSET || xmt_entry_searched(e)))
        describe_search(e, &b);
    if (e->nbufs) {
        xmt_sb(&b, "  buffers:");
        for (unsigned i = 0; i < e->nbufs; i++) {
            const xmt_bufdecl *x = &e->bufs[i];
            xmt_sb(&b, "%s %s (%s%s%s)", i ? "," : "", x->name,
                   (x->roles & XMT_BUF_RESET) ? (x->has_cond ? "reset if condition" : "reset") : "",
                   (x->roles & XMT_BUF_RESTORE)
                       ? ((x->roles & XMT_BUF_RESET) ? ", restore" : "restore")
                       : "",
                   (x->roles & XMT_BUF_VERIFY)
                       ? ((x->roles & (XMT_BUF_RESET | XMT_BUF_RESTORE)) ? ", verify" : "verify")
                       : "");
        }
        xmt_sb(&b, "\n");
    }
    if (e->warmup >= 0)
        xmt_sb(&b, "  warmup %d", e->warmup);
    else
        xmt_sb(&b, "  warmup default");
    if (e->iterations >= 0)
        xmt_sb(&b, ", iterations %d", e->iterations);
    else
        xmt_sb(&b, ", iterations default");
    if (e->use_mean >= 0)
        xmt_sb(&b, ", statistic %s", e->use_mean ? "mean" : "median");
    else
        xmt_sb(&b, ", statistic default");
    if (e->budget_ms >= 0) xmt_sb(&b, ", budget %g ms", e->budget_ms);
    if (e->warmup_ms >= 0) xmt_sb(&b, ", clock warm-up %g ms", e->warmup_ms);
    if (e->l2_flush >= 0) xmt_sb(&b, ", l2_flush %s", e->l2_flush ? "true" : "false");
    if (e->protect >= 0) xmt_sb(&b, ", protect %s", e->protect ? "declared" : "auto");
    if (e->tol_rtol >= 0) xmt_sb(&b, ", tolerance rtol %g atol %g", e->tol_rtol, e->tol_atol);
    xmt_sb(&b, "\n");
    return (int)b.at;
}

static int standalone_resolve(void *ctx, const xmt_path *p, xmt_ref *r, char *err, size_t cap)
{
    (void)ctx;
    int o = xmt_orig_index(p->base, p->has_member ? p->member : NULL);
    if (o >= 0 && p->suffix == XMT_SFX_NONE) {
        r->kind = XMT_REF_ORIG;
        r->index = (unsigned)o;
        return 0;
    }
    int a = xmt_attr_index(p->base);
    if (a >= 0 && !p->has_member) {
        r->kind = XMT_REF_ATTR;
        r->index = (unsigned)a;
        return 0;
    }
    snprintf(err, cap, "unknown name '%s'", p->base);
    return -1;
}

int xmt_expr_eval_string(const char *text, const xmt_launch_view *v, double *out, int64_t *iout,
                         int *is_float, char *err, size_t cap)
{
    xmt_code c;
    size_t pos;
    char e[256];
    if (xmt_compile(text, standalone_resolve, NULL, &c, e, sizeof e, &pos)) {
        snprintf(err, cap, "column %zu: %s", pos + 1, e);
        return -1;
    }
    xmt_env env = {v, NULL, 0, NULL, 0};
    xmt_val r;
    int rc = xmt_code_eval(&c, &env, &r);
    xmt_code_free(&c);
    if (rc) {
        snprintf(err, cap, "%s", xmt_eval_strerror(rc));
        return -1;
    }
    if (is_float) *is_float = r.isf;
    if (out) *out = r.isf ? r.u.f : (double)r.u.i;
    if (iout) /* saturate: a float beyond int64 must not be converted (UB) */
        *iout = !r.isf             ? r.u.i
                : r.u.f >= 9.2e18  ? INT64_MAX
                : r.u.f <= -9.2e18 ? INT64_MIN
                                   : (int64_t)r.u.f;
    return 0;
}
