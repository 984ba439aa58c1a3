/* entry.c - evaluating an entry for one launch: lookup key, candidates, buffers.
 *
 * Everything here runs on the shim's paths after load: it allocates nothing, takes no
 * lock, and turns every evaluation fault into an invalid result with a reason, never a
 * crash. The key has a fixed layout per entry: per trigger slot either one dtype byte or
 * a tag byte (0 integer, 1 float) and 8 value bytes, in declaration order, functional
 * triggers last; so equal keys mean equal trigger values, and rendering needs no parsing.
 */
#include "entry.h"
#include "eval.h"
#include "sbuf.h"
#include "types.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_launch(xmt_launch_exprs *l)
{
    for (int i = 0; i < 3; i++) {
        xmt_code_free(&l->grid.c[i]);
        xmt_code_free(&l->block.c[i]);
        xmt_code_free(&l->shared.c[i]);
    }
}

static void free_args(xmt_args *a)
{
    for (unsigned i = 0; i < a->nargs; i++)
        xmt_code_free(&a->a[i].code);
}

static void free_config(xmt_config *c)
{
    xmt_code_free(&c->cond);
    free_launch(&c->launch);
    free_args(&c->args);
}

void xmt_entry_destroy(struct xmt_entry *e)
{
    if (!e) return;
    free(e->ptypes);
    free(e->psizes);
    if (!e->owner) {
        free(e);
        return;
    }
    free(e->pattern);
    for (unsigned i = 0; i < e->nparams; i++)
        free(e->params[i].fields);
    free(e->params);
    for (unsigned i = 0; i < e->ntensors_alloc; i++) {
        xmt_tensor *t = &e->tensors[i];
        for (int d = 0; d < XMT_MAX_DIMS; d++) {
            xmt_code_free(&t->shape[d]);
            xmt_code_free(&t->stride[d]);
        }
        xmt_code_free(&t->numel);
        xmt_code_free(&t->nbytes);
        xmt_code_free(&t->bytes);
    }
    free(e->tensors);
    for (unsigned i = 0; i < e->nft; i++)
        xmt_code_free(&e->ftcode[i]);
    if (e->slots)
        for (unsigned i = 0; i < XMT_MAX_TRIGGERS * (1 + 2 * XMT_MAX_DIMS); i++)
            if (e->slots[i].kind == XMT_SLOT_EXPR) xmt_code_free(&e->slots[i].code);
    free(e->slots);
    free(e->triggers);
    for (unsigned i = 0; i < e->nspace; i++)
        free(e->space[i].vals);
    free(e->space);
    if (e->configs)
        for (unsigned i = 0; i < e->nconfigs; i++)
            free_config(&e->configs[i]);
    free(e->configs);
    free_config(&e->pin);
    xmt_code_free(&e->cond);
    free_launch(&e->launch);
    free_args(&e->args);
    if (e->bufs)
        for (unsigned i = 0; i < e->nparams; i++)
            xmt_code_free(&e->bufs[i].cond);
    free(e->bufs);
    free(e);
}

/* ---- getters ------------------------------------------------------------------------ */

const char *xmt_entry_origin(const xmt_entry *e)
{
    return e->origin;
}
const char *xmt_entry_pattern(const xmt_entry *e)
{
    return e->pattern_text;
}
int xmt_entry_warmup(const xmt_entry *e)
{
    return e->warmup;
}
int xmt_entry_iterations(const xmt_entry *e)
{
    return e->iterations;
}
double xmt_entry_budget_ms(const xmt_entry *e)
{
    return e->budget_ms;
}
int xmt_entry_search(const xmt_entry *e)
{
    return e->search;
}

int xmt_entry_searched(const xmt_entry *e)
{
    if (!e->nspace || e->search == XMT_SEARCH_EXHAUSTIVE) return 0;
    return e->search == XMT_SEARCH_LOCAL || e->spacesize > XMT_SEARCH_DEFAULT_THRESHOLD;
}

unsigned xmt_entry_space_dims(const xmt_entry *e, unsigned *dims, unsigned cap)
{
    for (unsigned d = 0; d < e->nspace && d < cap; d++)
        dims[d] = e->space[d].n;
    return e->nspace;
}

size_t xmt_entry_space_first(const xmt_entry *e)
{
    return e->nconfigs;
}

size_t xmt_entry_search_evals(const xmt_entry *e)
{
    size_t n = e->nspace ? e->spacesize : 0, k;
    if (e->search_evals > 0)
        k = (size_t)e->search_evals;
    else if (e->search_share > 0) {
        k = (size_t)floor((double)n * e->search_share);
        if (k < 1) k = 1;
    } else
        k = xmt_search_default_evals(n);
    return k < n ? k : n;
}

static double log_ratio(uint64_t a, uint64_t b)
{
    if (a == b) return 0;
    if (a == 0 || b == 0 || a > INT32_MAX || b > INT32_MAX) return 1;
    return fabs(log2((double)a / (double)b));
}

/* How far candidate c is from the program's own launch in v (xmt_entry_space_nearest). */
static double own_distance(const xmt_candidate *c, const xmt_launch_view *v)
{
    const xmt_dims *o = &v->orig;
    double d = log_ratio(c->dims.block.x, o->block.x) + log_ratio(c->dims.block.y, o->block.y) +
               log_ratio(c->dims.block.z, o->block.z) + log_ratio(c->dims.grid.x, o->grid.x) +
               log_ratio(c->dims.grid.y, o->grid.y) + log_ratio(c->dims.grid.z, o->grid.z) +
               log_ratio((uint64_t)c->dims.shared + 1, (uint64_t)o->shared + 1);
    for (unsigned i = 0; i < c->nargs; i++) {
        uint64_t own = 0;
        unsigned size = c->args[i].size < 8 ? c->args[i].size : 8;
        if (c->args[i].param >= v->nparams || !v->params[c->args[i].param]) continue;
        memcpy(&own, v->params[c->args[i].param], size); /* little-endian, as the value */
        uint64_t mine = c->args[i].value & (size < 8 ? (1ull << (8 * size)) - 1 : ~0ull);
        d += log_ratio(mine, own);
    }
    return d;
}

size_t xmt_entry_space_nearest(const xmt_entry *e, const xmt_launch_view *v)
{
    size_t best = SIZE_MAX;
    double bd = INFINITY;
    if (!e->nspace) return SIZE_MAX;
    for (size_t p = 0; p < e->spacesize; p++) {
        xmt_candidate c;
        if (!xmt_entry_candidate(e, e->nconfigs + p, v, &c)) continue;
        double d = own_distance(&c, v);
        if (d < bd) {
            bd = d;
            best = p;
        }
    }
    return best;
}

double xmt_entry_warmup_ms(const xmt_entry *e)
{
    return e->warmup_ms;
}
int xmt_entry_use_mean(const xmt_entry *e)
{
    return e->use_mean;
}
int xmt_entry_l2_flush(const xmt_entry *e)
{
    return e->l2_flush;
}
int xmt_entry_protect(const xmt_entry *e)
{
    return e->protect;
}
int xmt_entry_tolerance(const xmt_entry *e, double *rtol, double *atol)
{
    if (!e || e->tol_rtol < 0) return 0;
    *rtol = e->tol_rtol;
    *atol = e->tol_atol;
    return 1;
}
int xmt_entry_pointee(const xmt_entry *e, unsigned param)
{
    if (!e || param >= e->nparams) return -1;
    const xmt_param *p = &e->params[param];
    return p->tensor >= 0 ? (int)e->tensors[p->tensor].dtype : p->pointee;
}
uint64_t xmt_entry_fingerprint(const xmt_entry *e)
{
    return e->fingerprint;
}
size_t xmt_entry_pointers(const xmt_entry *e, uint32_t *param, uint32_t *offset, size_t cap)
{
    size_t n = 0;
    for (unsigned i = 0; i < e->nparams; i++) {
        const xmt_param *p = &e->params[i];
        if (e->ptypes[i] == XMT_PT_PTR || p->tensor >= 0) {
            if (n < cap) param[n] = i, offset[n] = 0;
            n++;
        }
        for (unsigned f = 0; f < p->nfields; f++)
            if (p->fields[f].type == XMT_PT_PTR) {
                if (n < cap) param[n] = i, offset[n] = p->fields[f].offset;
                n++;
            }
    }
    return n;
}
size_t xmt_entry_nparams(const xmt_entry *e)
{
    return e->nparams;
}
int xmt_entry_needs_signature(const xmt_entry *e)
{
    return e->needs_sig;
}
const char *xmt_entry_mangled(const xmt_entry *e)
{
    return e->patkind == XMT_PAT_MANGLED ? e->pattern : NULL;
}
size_t xmt_entry_nbuffers(const xmt_entry *e)
{
    return e->nbufs;
}

int xmt_entry_param(const xmt_entry *e, size_t i, const char **name, const char **type,
                    size_t *size)
{
    if (i >= e->nparams) return 0;
    if (name) *name = e->params[i].name;
    if (type) {
        /* a specialised copy shows the type the signature gave */
        *type = (e->params[i].type == XMT_PT_UNKNOWN) ? xmt_type_name(e->ptypes[i])
                                                      : e->params[i].tname;
    }
    if (size) *size = e->psizes[i];
    return 1;
}

static void env_init(xmt_env *env, const xmt_entry *e, const xmt_launch_view *v, const xmt_val *tun)
{
    env->v = v;
    env->ptypes = e->ptypes;
    env->nptypes = e->nparams;
    env->tun = tun;
    env->ntun = tun ? e->ntun : 0;
}

/* ---- layout ------------------------------------------------------------------------- */

int xmt_entry_check_layout(const xmt_entry *e, size_t n, const size_t *offsets, const size_t *sizes,
                           char *why, size_t cap)
{
    int ok = (n == e->nparams);
    for (size_t i = 0; ok && i < n; i++)
        if (e->psizes[i] && e->psizes[i] != sizes[i]) ok = 0;
    if (ok) return 0;
    if (why && cap) {
        size_t at = 0;
        int w = snprintf(why, cap, "policy: %u param%s (", e->nparams, e->nparams == 1 ? "" : "s");
        at = w > 0 ? (size_t)w : 0;
        for (unsigned i = 0; i < e->nparams && at < cap; i++) {
            w = snprintf(why + at, cap - at, "%s%s %s=%u", i ? ", " : "", e->params[i].name,
                         e->params[i].type == XMT_PT_UNKNOWN ? xmt_type_name(e->ptypes[i])
                                                             : e->params[i].tname,
                         e->psizes[i]);
            if (w > 0) at += (size_t)w;
        }
        if (at < cap) {
            w = snprintf(why + at, cap - at, " bytes); kernel: %zu param%s (", n,
                         n == 1 ? "" : "s");
            if (w > 0) at += (size_t)w;
        }
        for (size_t i = 0; i < n && at < cap; i++) {
            w = snprintf(why + at, cap - at, "%s%zu@%zu", i ? ", " : "", sizes[i],
                         offsets ? offsets[i] : 0);
            if (w > 0) at += (size_t)w;
        }
        if (at < cap) snprintf(why + at, cap - at, " size@offset)");
    }
    return -1;
}

/* ---- key ---------------------------------------------------------------------------- */

size_t xmt_entry_key(const xmt_entry *e, const xmt_launch_view *v, uint8_t *key, size_t cap)
{
    if (e->nslots == 0) { /* no triggers: every launch has the same one-byte key */
        if (cap < 1) return 0;
        key[0] = 0;
        return 1;
    }
    if (e->keylen > cap) return 0;
    xmt_env env;
    env_init(&env, e, v, NULL);
    uint8_t *k = key;
    for (unsigned s = 0; s < e->nslots; s++) {
        const xmt_slot *sl = &e->slots[s];
        if (sl->kind == XMT_SLOT_DTYPE) {
            *k++ = sl->dtype;
            continue;
        }
        if (sl->orig1 && v) { /* what evaluating it gives, the bytes included */
            const xmt_dims *d = &v->orig;
            const uint32_t o[7] = {d->grid.x,  d->grid.y,  d->grid.z, d->block.x,
                                   d->block.y, d->block.z, d->shared};
            int64_t x = o[sl->orig1 - 1];
            *k++ = 0;
            memcpy(k, &x, 8);
            k += 8;
            continue;
        }
        xmt_val val;
        if (xmt_code_eval(&sl->code, &env, &val)) return 0;
        *k++ = (uint8_t)val.isf;
        memcpy(k, &val.u, 8);
        k += 8;
    }
    return (size_t)(k - key);
}

static void sb_val(xmt_sbuf *b, const uint8_t *k)
{
    xmt_val v;
    memcpy(&v.u, k + 1, 8);
    if (k[0])
        xmt_sb(b, "%.17g", v.u.f);
    else
        xmt_sb(b, "%lld", (long long)v.u.i);
}

static void sb_tuple(xmt_sbuf *b, const uint8_t *k, unsigned n)
{
    xmt_sb(b, "(");
    for (unsigned i = 0; i < n; i++) {
        sb_val(b, k + XMT_KEY_SLOT * i);
        xmt_sb(b, "%s", (n == 1) ? "," : (i + 1 < n ? ", " : ""));
    }
    xmt_sb(b, ")");
}

int xmt_entry_key_render(const xmt_entry *e, const uint8_t *key, size_t len, char *buf, size_t cap)
{
    if (!buf || !cap) return -1;
    if (e->nslots == 0) {
        if (len != 1) return -1;
        return snprintf(buf, cap, "(no triggers)") > 0 ? (int)strlen(buf) : -1;
    }
    if (len != e->keylen) return -1;
    xmt_sbuf b = {buf, cap, 0};
    buf[0] = 0;
    const uint8_t *k = key;
    for (unsigned t = 0; t < e->ntriggers; t++) {
        const xmt_trigger *tr = &e->triggers[t];
        xmt_sb(&b, "%s%s=", t ? ", " : "", tr->label);
        switch (tr->form) {
        case XMT_TR_DTYPE:
            xmt_sb(&b, "%s", xmt_dtype_name((xmt_dtype)k[0]));
            k += 1;
            break;
        case XMT_TR_SCALAR:
            sb_val(&b, k);
            k += XMT_KEY_SLOT;
            break;
        case XMT_TR_TUPLE:
            sb_tuple(&b, k, tr->ndim);
            k += XMT_KEY_SLOT * tr->ndim;
            break;
        case XMT_TR_TENSOR:
            xmt_sb(&b, "(%s, ", xmt_dtype_name((xmt_dtype)k[0]));
            k += 1;
            sb_tuple(&b, k, tr->ndim);
            k += XMT_KEY_SLOT * tr->ndim;
            xmt_sb(&b, ", ");
            sb_tuple(&b, k, tr->ndim);
            k += XMT_KEY_SLOT * tr->ndim;
            xmt_sb(&b, ")");
            break;
        }
    }
    for (unsigned f = 0; f < e->nft; f++) {
        xmt_sb(&b, "%s%s=", (e->ntriggers || f) ? ", " : "", e->ftnames[f]);
        sb_val(&b, k);
        k += XMT_KEY_SLOT;
    }
    return (int)b.at;
}

/* ---- candidates --------------------------------------------------------------------- */

size_t xmt_entry_ncandidates(const xmt_entry *e)
{
    return e->nconfigs + (e->nspace ? e->spacesize : 0);
}

static void label_of(const xmt_entry *e, const xmt_val *vals, size_t idx, int pin, char *out,
                     size_t cap)
{
    xmt_sbuf b = {out, cap, 0};
    out[0] = 0;
    if (pin) xmt_sb(&b, "pin%s", e->ntun ? ": " : "");
    for (unsigned t = 0; t < e->ntun; t++) {
        xmt_sb(&b, "%s%s=", t ? ", " : "", e->tunames[t]);
        if (vals[t].isf)
            xmt_sb(&b, "%g", vals[t].u.f);
        else
            xmt_sb(&b, "%lld", (long long)vals[t].u.i);
    }
    if (!e->ntun && !pin) xmt_sb(&b, "config %zu", idx);
}

/* Evaluates an integer launch value; 0 ok, else sets why. */
static int eval_u(const xmt_code *c, const xmt_env *env, const char *what, int64_t *out, char *why,
                  size_t cap)
{
    xmt_val v;
    int err = xmt_code_eval(c, env, &v);
    if (err) {
        snprintf(why, cap, "%s in %s", xmt_eval_strerror(err), what);
        return -1;
    }
    if (v.isf) {
        if (!(v.u.f == trunc(v.u.f)) || fabs(v.u.f) > 9.0e18) {
            snprintf(why, cap, "%s = %g is not a whole number", what, v.u.f);
            return -1;
        }
        *out = (int64_t)v.u.f;
    } else {
        *out = v.u.i;
    }
    return 0;
}

static int truth(const xmt_code *c, const xmt_env *env, const char *what, char *why, size_t cap)
{
    xmt_val v;
    int err = xmt_code_eval(c, env, &v);
    if (err) {
        snprintf(why, cap, "%s in %s", xmt_eval_strerror(err), what);
        return -1;
    }
    if (v.isf ? v.u.f == 0 : v.u.i == 0) {
        snprintf(why, cap, "%s false", what);
        return 0;
    }
    return 1;
}

static int check_limit(int64_t v, int64_t lim, const char *what, const char *limname, char *why,
                       size_t cap)
{
    if (lim > 0 && v > lim) {
        snprintf(why, cap, "%s %lld > %s %lld", what, (long long)v, limname, (long long)lim);
        return -1;
    }
    return 0;
}

/* Block, grid and shared bytes: the config's, else the entry's, else the program's (its
 * threads per dimension kept when only the block changes). 0 with why set when invalid. */
static int eval_dims(const xmt_entry *e, const xmt_config *cfg, const xmt_env *env,
                     const xmt_launch_view *v, int64_t *b, int64_t *g, int64_t *shp, char *why,
                     size_t cap)
{
    int64_t sh;
    const xmt_dimexpr *blk = (cfg && cfg->launch.block.set) ? &cfg->launch.block : &e->launch.block;
    const xmt_dimexpr *grd = (cfg && cfg->launch.grid.set) ? &cfg->launch.grid : &e->launch.grid;
    const xmt_dimexpr *shm =
        (cfg && cfg->launch.shared.set) ? &cfg->launch.shared : &e->launch.shared;
    const uint32_t o_block[3] = {v->orig.block.x, v->orig.block.y, v->orig.block.z};
    const uint32_t o_grid[3] = {v->orig.grid.x, v->orig.grid.y, v->orig.grid.z};
    static const char *const bn[3] = {"block.x", "block.y", "block.z"};
    static const char *const gn[3] = {"grid.x", "grid.y", "grid.z"};
    for (int d = 0; d < 3; d++) {
        if (!blk->set)
            b[d] = o_block[d];
        else if ((unsigned)d >= blk->n)
            b[d] = 1;
        else if (eval_u(&blk->c[d], env, bn[d], &b[d], why, cap))
            return 0;
        if (b[d] < 1 || b[d] > UINT32_MAX) {
            snprintf(why, cap, "%s = %lld is not a positive 32-bit count", bn[d], (long long)b[d]);
            return 0;
        }
    }
    for (int d = 0; d < 3; d++) {
        if (!grd->set) {
            /* keep the program's threads per dimension */
            g[d] = ((int64_t)o_grid[d] * o_block[d] + b[d] - 1) / b[d];
            if (g[d] < 1) g[d] = 1;
        } else if ((unsigned)d >= grd->n) {
            g[d] = 1;
        } else if (eval_u(&grd->c[d], env, gn[d], &g[d], why, cap)) {
            return 0;
        }
        if (g[d] < 1 || g[d] > UINT32_MAX) {
            snprintf(why, cap, "%s = %lld is not a positive 32-bit count", gn[d], (long long)g[d]);
            return 0;
        }
    }
    if (!shm->set)
        sh = v->orig.shared;
    else if (eval_u(&shm->c[0], env, "shared", &sh, why, cap))
        return 0;
    if (sh < 0 || sh > UINT32_MAX) {
        snprintf(why, cap, "shared = %lld bytes is out of range", (long long)sh);
        return 0;
    }
    *shp = sh;
    return 1;
}

/* The device's and the kernel's limits (attrs), on block, grid and shared bytes. */
static int within_limits(const xmt_attrs *a, const int64_t *b, const int64_t *g, int64_t sh,
                         char *why, size_t cap)
{
    int64_t threads = b[0] * b[1] * b[2];
    if (check_limit(threads, a->kernel_max_threads, "block", "kernel_max_threads", why, cap) ||
        check_limit(threads, a->max_threads_per_block, "block", "max_threads_per_block", why,
                    cap) ||
        check_limit(b[0], a->max_block_x, "block.x", "max_block_x", why, cap) ||
        check_limit(b[1], a->max_block_y, "block.y", "max_block_y", why, cap) ||
        check_limit(b[2], a->max_block_z, "block.z", "max_block_z", why, cap) ||
        check_limit(g[0], a->max_grid_x, "grid.x", "max_grid_x", why, cap) ||
        check_limit(g[1], a->max_grid_y, "grid.y", "max_grid_y", why, cap) ||
        check_limit(g[2], a->max_grid_z, "grid.z", "max_grid_z", why, cap))
        return 0;
    int64_t st = a->kernel_static_shared > 0 ? a->kernel_static_shared : 0;
    if (a->max_shared_per_block > 0 && sh + st > a->max_shared_per_block) {
        snprintf(why, cap, "shared %lld + kernel_static_shared %lld > max_shared_per_block %lld",
                 (long long)sh, (long long)st, (long long)a->max_shared_per_block);
        return 0;
    }
    return 1;
}

/* args: the config's override the entry's, parameter by parameter. */
static int eval_args(const xmt_entry *e, const xmt_config *cfg, const xmt_env *env,
                     xmt_candidate *out)
{
    char *why = out->why;
    size_t cap = sizeof out->why;
    const xmt_args *lists[2] = {cfg ? &cfg->args : NULL, &e->args};
    for (int l = 0; l < 2; l++) {
        if (!lists[l]) continue;
        for (unsigned i = 0; i < lists[l]->nargs; i++) {
            const xmt_argexpr *x = &lists[l]->a[i];
            int dup = 0;
            for (unsigned j = 0; j < out->nargs; j++)
                dup |= out->args[j].param == x->param;
            if (dup) continue;
            if (out->nargs >= XMT_MAX_ARG_OVERRIDES) {
                snprintf(why, cap, "more than %d args", XMT_MAX_ARG_OVERRIDES);
                return 0;
            }
            xmt_val val;
            int err = xmt_code_eval(&x->code, env, &val);
            if (err) {
                snprintf(why, cap, "%s in args: %s", xmt_eval_strerror(err),
                         e->params[x->param].name);
                return 0;
            }
            uint64_t bits;
            unsigned size;
            err = xmt_store_scalar(val, e->ptypes[x->param], &bits, &size);
            if (err) {
                snprintf(why, cap, "args: %s: value does not fit %s", e->params[x->param].name,
                         xmt_type_name(e->ptypes[x->param]));
                return 0;
            }
            out->args[out->nargs].param = x->param;
            out->args[out->nargs].value = bits;
            out->args[out->nargs].size = size;
            out->nargs++;
        }
    }
    return 1;
}

static int evaluate(const xmt_entry *e, const xmt_config *cfg, const xmt_val *vals,
                    const xmt_launch_view *v, xmt_candidate *out)
{
    char *why = out->why;
    size_t cap = sizeof out->why;
    xmt_env env;
    env_init(&env, e, v, vals);
    out->nargs = 0;
    why[0] = 0;
    if (e->has_cond) {
        int t = truth(&e->cond, &env, "condition", why, cap);
        if (t <= 0) return 0;
    }
    if (cfg && cfg->has_cond) {
        int t = truth(&cfg->cond, &env, "config condition", why, cap);
        if (t <= 0) return 0;
    }
    int64_t b[3], g[3], sh;
    if (!eval_dims(e, cfg, &env, v, b, g, &sh, why, cap)) return 0;
    if (v->attrs && !within_limits(v->attrs, b, g, sh, why, cap)) return 0;
    out->dims.block.x = (uint32_t)b[0];
    out->dims.block.y = (uint32_t)b[1];
    out->dims.block.z = (uint32_t)b[2];
    out->dims.grid.x = (uint32_t)g[0];
    out->dims.grid.y = (uint32_t)g[1];
    out->dims.grid.z = (uint32_t)g[2];
    out->dims.shared = (uint32_t)sh;
    return eval_args(e, cfg, &env, out);
}

/* The tunable values of candidate i (a config's, or a point of the space) into vals; the
 * pointer to them, or NULL when there is no candidate i. */
static const xmt_val *candidate_vals(const xmt_entry *e, size_t i, xmt_val *vals)
{
    if (i < e->nconfigs) return e->configs[i].vals;
    i -= e->nconfigs;
    if (!e->nspace || i >= e->spacesize) return NULL;
    /* mixed radix, the last name varying fastest */
    size_t r = i;
    for (unsigned d = e->nspace; d-- > 0;) {
        vals[d] = e->space[d].vals[r % e->space[d].n];
        r /= e->space[d].n;
    }
    return vals;
}

/* xmt_entry_candidate, its label written when label is set. */
static int candidate(const xmt_entry *e, size_t i, const xmt_launch_view *v, xmt_candidate *out,
                     int label)
{
    xmt_val buf[XMT_MAX_TUNABLES];
    memset(out, 0, sizeof *out);
    out->config = (long)i;
    const xmt_val *vals = candidate_vals(e, i, buf);
    if (!vals) {
        snprintf(out->why, sizeof out->why, "no such candidate");
        return 0;
    }
    if (label) label_of(e, vals, i, 0, out->label, sizeof out->label);
    return evaluate(e, i < e->nconfigs ? &e->configs[i] : NULL, vals, v, out);
}

int xmt_entry_candidate(const xmt_entry *e, size_t i, const xmt_launch_view *v, xmt_candidate *out)
{
    return candidate(e, i, v, out, 1);
}

/* xmt_entry_pin, its label written when label is set. */
static int pin(const xmt_entry *e, const xmt_launch_view *v, xmt_candidate *out, int label)
{
    memset(out, 0, sizeof *out);
    out->config = XMT_CAND_PIN;
    if (!e->has_pin) return 0;
    if (label) label_of(e, e->pin.vals, 0, 1, out->label, sizeof out->label);
    return evaluate(e, &e->pin, e->pin.vals, v, out) ? 1 : -1;
}

int xmt_entry_pin(const xmt_entry *e, const xmt_launch_view *v, xmt_candidate *out)
{
    return pin(e, v, out, 1);
}

int xmt_entry_config(const xmt_entry *e, long config, const xmt_launch_view *v, xmt_candidate *out)
{
    if (config == XMT_CAND_PIN) return pin(e, v, out, 0);
    if (config < 0) {
        memset(out, 0, sizeof *out);
        out->config = config;
        snprintf(out->why, sizeof out->why, "no such candidate");
        return 0;
    }
    return candidate(e, (size_t)config, v, out, 0);
}

static void dims_read(const xmt_launch_exprs *x, uint8_t *read, size_t n)
{
    const xmt_dimexpr *d[3] = {&x->grid, &x->block, &x->shared};
    for (int i = 0; i < 3; i++)
        for (unsigned j = 0; d[i]->set && j < d[i]->n; j++)
            xmt_code_params_read(&d[i]->c[j], read, n);
}

static void config_read(const xmt_config *c, uint8_t *read, size_t n)
{
    if (c->has_cond) xmt_code_params_read(&c->cond, read, n);
    dims_read(&c->launch, read, n);
    for (unsigned i = 0; i < c->args.nargs; i++)
        xmt_code_params_read(&c->args.a[i].code, read, n);
}

size_t xmt_entry_params_read(const xmt_entry *e, uint8_t *read, size_t n)
{
    memset(read, 0, n);
    for (unsigned s = 0; s < e->nslots; s++)
        if (e->slots[s].kind == XMT_SLOT_EXPR) xmt_code_params_read(&e->slots[s].code, read, n);
    xmt_config whole = {
        .has_cond = e->has_cond, .cond = e->cond, .launch = e->launch, .args = e->args};
    config_read(&whole, read, n);
    for (unsigned i = 0; i < e->nconfigs; i++)
        config_read(&e->configs[i], read, n);
    if (e->has_pin) config_read(&e->pin, read, n);
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += read[i];
    return count;
}

int xmt_entry_label(const xmt_entry *e, const xmt_candidate *c, char *buf, size_t cap)
{
    xmt_val vals[XMT_MAX_TUNABLES];
    if (!cap) return -1;
    buf[0] = 0;
    if (c->config == XMT_CAND_PIN) {
        if (!e->has_pin) return -1;
        label_of(e, e->pin.vals, 0, 1, buf, cap);
        return 0;
    }
    const xmt_val *v = c->config >= 0 ? candidate_vals(e, (size_t)c->config, vals) : NULL;
    if (!v) return -1;
    label_of(e, v, (size_t)c->config, 0, buf, cap);
    return 0;
}

/* ---- buffers ------------------------------------------------------------------------ */

int xmt_entry_buffer(const xmt_entry *e, size_t i, const xmt_launch_view *v, xmt_buffer *out)
{
    if (i >= e->nbufs) return -1;
    const xmt_bufdecl *b = &e->bufs[i];
    const xmt_tensor *t = &e->tensors[b->tensor];
    xmt_env env;
    env_init(&env, e, v, NULL);
    memset(out, 0, sizeof *out);
    out->param = b->param;
    out->name = b->name;
    out->roles = b->roles;
    out->dtype = t->dtype;
    out->rtol = b->rtol;
    out->atol = b->atol;
    if ((b->roles & XMT_BUF_RESET) && b->has_cond) {
        xmt_val c;
        if (xmt_code_eval(&b->cond, &env, &c)) return -1;
        if (c.isf ? c.u.f == 0 : c.u.i == 0) out->roles &= ~(unsigned)XMT_BUF_RESET;
        if (!out->roles) return 0;
    }
    xmt_val r;
    if (t->has_bytes) {
        if (xmt_code_eval(&t->bytes, &env, &r) || r.isf || r.u.i < 0) return -1;
        out->bytes = (uint64_t)r.u.i;
        return 1;
    }
    /* extent: 1 + sum((shape[d]-1) * stride[d]) elements, 0 when a dimension is 0 */
    int64_t ext = 1;
    for (int d = 0; d < t->ndim; d++) {
        xmt_val s, st;
        if (xmt_code_eval(&t->shape[d], &env, &s) || xmt_code_eval(&t->stride[d], &env, &st))
            return -1;
        if (s.isf || st.isf || s.u.i < 0 || st.u.i < 0) return -1;
        if (s.u.i == 0) {
            out->bytes = 0;
            return 1;
        }
        int64_t p;
        if (__builtin_mul_overflow(s.u.i - 1, st.u.i, &p) || __builtin_add_overflow(ext, p, &ext))
            return -1;
    }
    int64_t bytes;
    if (__builtin_mul_overflow(ext, (int64_t)xmt_dtype_size(t->dtype), &bytes)) return -1;
    out->bytes = (uint64_t)bytes;
    return 1;
}
