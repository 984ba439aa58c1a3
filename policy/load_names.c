/* load_names.c - names in a policy entry's expressions: what each refers to (parameter,
 * blob field, tensor attribute, tunable value, functional trigger, device attribute or
 * original launch dimension) and where it may be used (the SC_* scopes); compiling a
 * scalar node into code; checking that a new name clashes with none of these.
 */
#include "load_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- name resolution -------------------------------------------------------------------- */

int ld_find_param(const struct xmt_entry *e, const char *name)
{
    for (unsigned i = 0; i < e->nparams; i++)
        if (strcmp(e->params[i].name, name) == 0) return (int)i;
    return -1;
}

int ld_find_tun(const struct xmt_entry *e, const char *name)
{
    for (unsigned i = 0; i < e->ntun; i++)
        if (strcmp(e->tunames[i], name) == 0) return (int)i;
    return -1;
}

int ld_find_ft(const struct xmt_entry *e, const char *name)
{
    for (unsigned i = 0; i < e->nft; i++)
        if (strcmp(e->ftnames[i], name) == 0) return (int)i;
    return -1;
}

static int tensor_member(const xmt_tensor *t, const xmt_path *p, xmt_ref *r, char *err, size_t cap)
{
    const char *m = p->member;
    int need_shape = 1;
    if ((!strcmp(m, "itemsize") && p->suffix == XMT_SFX_NONE) ||
        (!strcmp(m, "element_size") && p->suffix == XMT_SFX_CALL0)) {
        r->kind = XMT_REF_CONST_I;
        r->i = (int64_t)xmt_dtype_size(t->dtype);
        return 0;
    }
    if (t->ndim < 0 && !strcmp(m, "nbytes") && p->suffix == XMT_SFX_NONE) {
        r->kind = XMT_REF_CODE;
        r->code = &t->bytes;
        return 0;
    }
    if (t->ndim < 0 && need_shape) {
        snprintf(err, cap, "%s has no shape (declared with bytes: only): %s.%s is not defined",
                 t->name, t->name, m);
        return -1;
    }
    if (((!strcmp(m, "shape") && p->suffix == XMT_SFX_INDEX) ||
         (!strcmp(m, "size") && p->suffix == XMT_SFX_CALL1) ||
         (!strcmp(m, "stride") && p->suffix == XMT_SFX_CALL1))) {
        if (p->k >= t->ndim) {
            snprintf(err, cap, "%s has %d dimension%s: dimension %lld does not exist", t->name,
                     t->ndim, t->ndim == 1 ? "" : "s", (long long)p->k);
            return -1;
        }
        r->kind = XMT_REF_CODE;
        r->code = m[1] == 't' ? &t->stride[p->k] : &t->shape[p->k];
        return 0;
    }
    if ((!strcmp(m, "numel") && (p->suffix == XMT_SFX_NONE || p->suffix == XMT_SFX_CALL0))) {
        r->kind = XMT_REF_CODE;
        r->code = &t->numel;
        return 0;
    }
    if (!strcmp(m, "nbytes") && p->suffix == XMT_SFX_NONE) {
        r->kind = XMT_REF_CODE;
        r->code = &t->nbytes;
        return 0;
    }
    if ((!strcmp(m, "ndim") && p->suffix == XMT_SFX_NONE) ||
        (!strcmp(m, "dim") && p->suffix == XMT_SFX_CALL0)) {
        r->kind = XMT_REF_CONST_I;
        r->i = t->ndim;
        return 0;
    }
    if ((!strcmp(m, "shape") || !strcmp(m, "size") || !strcmp(m, "stride")))
        snprintf(err, cap,
                 "%s.%s is a tuple, not a number: use %s.shape[i], %s.size(i) or %s.stride(i)",
                 t->name, m, t->name, t->name, t->name);
    else
        snprintf(err, cap,
                 "unknown tensor attribute '%s.%s' (expected shape[i], size(i), stride(i), numel, "
                 "ndim, itemsize, nbytes)",
                 t->name, m);
    return -1;
}

/* NAME.MEMBER: an original launch dimension (grid0.x), a blob field or a tensor attribute. */
static int resolve_member(const rctx *c, const xmt_path *p, xmt_ref *r, char *err, size_t cap)
{
    const struct xmt_entry *e = c->e;
    int i;
    int o = xmt_orig_index(p->base, p->member);
    if (o >= 0 && p->suffix == XMT_SFX_NONE) {
        r->kind = XMT_REF_ORIG;
        r->index = (unsigned)o;
        return 0;
    }
    if (o == -2) {
        snprintf(err, cap, "%s has members x, y and z, not '%s'", p->base, p->member);
        return -1;
    }
    if ((i = ld_find_param(e, p->base)) >= 0 && (c->scope & SC_PARAMS)) {
        const xmt_param *pp = &e->params[i];
        if (pp->type == XMT_PT_BLOB) {
            for (unsigned f = 0; f < pp->nfields; f++)
                if (!strcmp(pp->fields[f].name, p->member) && p->suffix == XMT_SFX_NONE) {
                    if (pp->tuned) {
                        snprintf(err, cap, "%s is set by a config (args:): not allowed in %s",
                                 p->base, c->where);
                        return -1;
                    }
                    r->kind = XMT_REF_FIELD;
                    r->index = (unsigned)i;
                    r->offset = pp->fields[f].offset;
                    r->type = pp->fields[f].type;
                    return 0;
                }
            snprintf(err, cap, "%s has no field '%s'", p->base, p->member);
            return -1;
        }
        if (pp->tensor >= 0) {
            if (!(c->scope & SC_TENSORS)) {
                snprintf(err, cap, "tensor attributes (%s.%s) are not allowed in %s", p->base,
                         p->member, c->where);
                return -1;
            }
            return tensor_member(&e->tensors[pp->tensor], p, r, err, cap);
        }
        snprintf(err, cap, "%s is not declared in tensors: (%s.%s needs its dtype and shape)",
                 p->base, p->base, p->member);
        return -1;
    }
    snprintf(err, cap, "unknown name '%s.%s'", p->base, p->member);
    return -1;
}

int ld_resolve(void *vctx, const xmt_path *p, xmt_ref *r, char *err, size_t cap)
{
    rctx *c = vctx;
    struct xmt_entry *e = c->e;
    int i;
    if (p->has_member) return resolve_member(c, p, r, err, cap);
    if ((i = ld_find_param(e, p->base)) >= 0 && (c->scope & SC_PARAMS)) {
        const xmt_param *pp = &e->params[i];
        if (pp->type == XMT_PT_BLOB) {
            snprintf(err, cap, "%s is a bytes(N) parameter: name one of its fields (%s.field)",
                     p->base, p->base);
            return -1;
        }
        if (pp->tuned && !(c->scope & SC_TUNABLES)) {
            snprintf(err, cap, "%s is set by a config (args:): not allowed in %s", p->base,
                     c->where);
            return -1;
        }
        r->kind = XMT_REF_PARAM;
        r->index = (unsigned)i;
        return 0;
    }
    if ((i = ld_find_tun(e, p->base)) >= 0) {
        if (!(c->scope & SC_TUNABLES)) {
            snprintf(err, cap, "%s is a tunable value (space:/configs:): not allowed in %s",
                     p->base, c->where);
            return -1;
        }
        r->kind = XMT_REF_SPACE;
        r->index = (unsigned)i;
        return 0;
    }
    if ((i = ld_find_ft(e, p->base)) >= 0) {
        if (!(c->scope & SC_FTRIG)) {
            snprintf(err, cap, "functional trigger %s is not allowed in %s", p->base, c->where);
            return -1;
        }
        r->kind = XMT_REF_CODE;
        r->code = &e->ftcode[i];
        return 0;
    }
    if ((i = xmt_attr_index(p->base)) >= 0) {
        r->kind = XMT_REF_ATTR;
        r->index = (unsigned)i;
        return 0;
    }
    int o = xmt_orig_index(p->base, NULL);
    if (o >= 0) {
        r->kind = XMT_REF_ORIG;
        r->index = (unsigned)o;
        return 0;
    }
    if (o == -2) {
        snprintf(err, cap, "%s needs a member: %s.x, %s.y or %s.z", p->base, p->base, p->base,
                 p->base);
        return -1;
    }
    snprintf(err, cap,
             "unknown name '%s' (expected a parameter, a tensor attribute, "
             "%s%sgrid0.x/block0.x/shared0 or a device "
             "attribute such as sm_count)",
             p->base, (c->scope & SC_TUNABLES) ? "a space value, " : "",
             (c->scope & SC_FTRIG) ? "a functional trigger, " : "");
    return -1;
}

/* Compiles the scalar node n as an expression in the given scope. */
void ld_compile(ld *L, const yaml_node_t *n, unsigned scope, const char *where, xmt_code *out)
{
    char text[64];
    const char *s;
    if (n->type == YAML_SCALAR_NODE) {
        s = (const char *)n->data.scalar.value;
        int b;
        if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ld_parse_bool(s, &b) == 0) {
            snprintf(text, sizeof text, "%d", b);
            s = text;
        }
    } else {
        ld_fail(L, n, "%s: expected an expression, found %s", where, ld_kind_name(n));
    }
    rctx c = {L->cur, scope, where};
    char err[512];
    size_t pos = 0;
    if (xmt_compile(s, ld_resolve, &c, out, err, sizeof err, &pos) != 0) {
        size_t extra = (s == text) ? 0 : ld_text_col(n) + pos;
        /* a multi-line scalar: the column of the offset is not known, point at its start */
        if (memchr(s, '\n', pos)) extra = 0;
        /* quote a long expression only in part: the message must still show the reason */
        ld_fail_col(L, n, extra, "in %s '%.60s%s': %s", where, s, strlen(s) > 60 ? "..." : "", err);
    }
}

void ld_check_new_name(ld *L, const yaml_node_t *n, const char *name, const char *what)
{
    struct xmt_entry *e = L->cur;
    if (!ld_valid_ident(name))
        ld_fail(L, n, "%s: '%s' is not a valid name (letters, digits, _; at most %d characters)",
                what, name, XMT_NAME_MAX - 1);
    if (xmt_attr_index(name) >= 0 || xmt_orig_index(name, NULL) != -1 || !strcmp(name, "true") ||
        !strcmp(name, "false"))
        ld_fail(L, n, "%s: '%s' is a reserved name (device attribute, original launch or constant)",
                what, name);
    if (ld_find_param(e, name) >= 0) ld_fail(L, n, "%s: '%s' is already a parameter", what, name);
    if (ld_find_tun(e, name) >= 0) ld_fail(L, n, "%s: '%s' is already a tunable value", what, name);
    if (ld_find_ft(e, name) >= 0)
        ld_fail(L, n, "%s: '%s' is already a functional trigger", what, name);
}
