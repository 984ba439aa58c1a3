/* load_tensors.c - tensors: which pointer parameters are tensors, with their dtype,
 * shape and strides (or bytes: alone), compiled into the expressions that key on them.
 */
#include "load_internal.h"
#include "types.h"

#include <stdio.h>
#include <string.h>

/* "f32 [m, k] strides [lda, 1]" from the expressions as written. */
static void describe_tensor(ld *L, xmt_tensor *t, const yaml_node_t *sh, const yaml_node_t *st,
                            const yaml_node_t *by)
{
    size_t at = 0, cap = sizeof t->desc;
    const yaml_node_t *lists[2] = {sh, st};
    at += (size_t)snprintf(t->desc, cap, "%s",
                           (sh || t->dtype != XMT_DT_BYTES) ? xmt_dtype_name(t->dtype) : "");
    for (int l = 0; l < 2; l++) {
        if (!lists[l] || at >= cap) continue;
        at += (size_t)snprintf(t->desc + at, cap - at, "%s[", l ? " strides " : " ");
        for (yaml_node_item_t *it = lists[l]->data.sequence.items.start;
             it < lists[l]->data.sequence.items.top && at < cap; it++)
            at += (size_t)snprintf(t->desc + at, cap - at, "%s%s",
                                   it == lists[l]->data.sequence.items.start ? "" : ", ",
                                   (const char *)ld_node(L, *it)->data.scalar.value);
        if (at < cap) at += (size_t)snprintf(t->desc + at, cap - at, "]");
    }
    if (by && at < cap)
        snprintf(t->desc + at, cap - at, "%sbytes: %s", at ? ", " : "",
                 (const char *)by->data.scalar.value);
}

/* dtype:, else the pointee of a typed pointer ("float*"), else bytes when no shape. */
static void tensor_dtype(ld *L, xmt_tensor *t, const xmt_param *p, yaml_node_t *const *tv,
                         const yaml_node_t *v)
{
    const char *name = t->name;
    if (tv[0]) {
        const char *ds = ld_scalar(L, tv[0], "dtype");
        int d = xmt_dtype_parse(ds);
        if (d < 0)
            ld_fail(L, tv[0],
                    "dtype: unknown '%s' (expected i8..i64, u8..u64, f16, bf16, f32, f64, bytes)",
                    ds);
        t->dtype = (xmt_dtype)d;
    } else if (p->pointee >= 0) {
        t->dtype = (xmt_dtype)p->pointee;
    } else if (tv[1] || tv[2]) {
        ld_fail(L, v, "tensor %s: needs dtype: (e.g. dtype: f32)", name);
    } else {
        t->dtype = XMT_DT_BYTES;
    }
}

/* No strides: given: contiguous, stride[d] = product of the later dimensions. */
static void contiguous_strides(ld *L, xmt_tensor *t, const yaml_node_t *sh, size_t nd)
{
    for (size_t d = 0; d < nd; d++) {
        int rc;
        if (d + 1 == nd) {
            rc = xmt_code_const(&t->stride[d], 1);
        } else {
            const xmt_code *f[XMT_MAX_DIMS];
            for (size_t j = d + 1; j < nd; j++)
                f[j - d - 1] = &t->shape[j];
            rc = xmt_code_product(&t->stride[d], f, nd - d - 1);
        }
        if (rc) ld_fail(L, sh, "tensor %s: shape too large to compile its strides", t->name);
    }
}

/* numel = product of the shape, nbytes = numel * itemsize. */
static void tensor_sizes(ld *L, xmt_tensor *t, const yaml_node_t *sh, size_t nd)
{
    xmt_code item;
    int rc = xmt_code_const(&item, (int64_t)xmt_dtype_size(t->dtype));
    if (!rc) {
        if (nd == 0) {
            rc = xmt_code_const(&t->numel, 1);
        } else {
            const xmt_code *f[XMT_MAX_DIMS];
            for (size_t j = 0; j < nd; j++)
                f[j] = &t->shape[j];
            rc = xmt_code_product(&t->numel, f, nd);
        }
        if (!rc) {
            const xmt_code *f2[2] = {&t->numel, &item};
            rc = xmt_code_product(&t->nbytes, f2, 2);
        }
        xmt_code_free(&item);
    }
    if (rc) ld_fail(L, sh, "tensor %s: shape too large to compile", t->name);
}

/* shape: and strides: (st may be NULL), then the sizes they give. */
static void tensor_shape(ld *L, xmt_tensor *t, const yaml_node_t *sh, const yaml_node_t *st,
                         const char *where)
{
    const char *name = t->name;
    if (sh->type != YAML_SEQUENCE_NODE)
        ld_fail(L, sh, "tensor %s: shape: expected a list of expressions such as [m, n]", name);
    size_t nd = (size_t)(sh->data.sequence.items.top - sh->data.sequence.items.start);
    if (nd > XMT_MAX_DIMS) ld_fail(L, sh, "tensor %s: more than %d dimensions", name, XMT_MAX_DIMS);
    t->ndim = (int)nd;
    for (size_t d = 0; d < nd; d++)
        ld_compile(L, ld_node(L, sh->data.sequence.items.start[d]), SC_PARAMS, where, &t->shape[d]);
    if (st) {
        if (st->type != YAML_SEQUENCE_NODE ||
            (size_t)(st->data.sequence.items.top - st->data.sequence.items.start) != nd)
            ld_fail(L, st,
                    "tensor %s: strides: expected a list of %zu expressions (one per "
                    "dimension)",
                    name, nd);
        for (size_t d = 0; d < nd; d++)
            ld_compile(L, ld_node(L, st->data.sequence.items.start[d]), SC_PARAMS, where,
                       &t->stride[d]);
    } else {
        contiguous_strides(L, t, sh, nd);
    }
    tensor_sizes(L, t, sh, nd);
}

/* A parameter given by name alone becomes a pointer: a tensor is one, whatever the
 * signature says. */
static void type_as_pointer(struct xmt_entry *e, xmt_param *p, int pi)
{
    p->type = XMT_PT_PTR;
    p->size = 8;
    snprintf(p->tname, sizeof p->tname, "ptr");
    e->ptypes[pi] = XMT_PT_PTR;
    e->psizes[pi] = 8;
    int still = 0;
    for (unsigned i = 0; i < e->nparams; i++)
        still |= e->params[i].type == XMT_PT_UNKNOWN;
    e->needs_sig = still;
}

/* One item of tensors:, name k, value v. */
static void parse_tensor(ld *L, const yaml_node_t *k, const yaml_node_t *v)
{
    struct xmt_entry *e = L->cur;
    const char *name = (const char *)k->data.scalar.value;
    int pi = ld_find_param(e, name);
    if (pi < 0) ld_fail(L, k, "tensors: '%s' is not a parameter", name);
    xmt_param *p = &e->params[pi];
    if (p->type != XMT_PT_PTR && p->type != XMT_PT_UNKNOWN)
        ld_fail(L, k, "tensors: %s is declared as %s, a tensor must be a pointer", name, p->tname);
    static const char *const tk[] = {"dtype", "shape", "strides", "bytes"};
    yaml_node_t *tv[4];
    ld_map_keys(L, v, "tensor", tk, 4, tv);
    xmt_tensor *t = &e->tensors[e->ntensors];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->param = (unsigned)pi;
    tensor_dtype(L, t, p, tv, v);
    if (!tv[1] && !tv[3]) ld_fail(L, v, "tensor %s: needs shape: [..] or bytes: EXPR", name);
    if (tv[2] && !tv[1]) ld_fail(L, tv[2], "tensor %s: strides: needs shape:", name);
    char where[128];
    snprintf(where, sizeof where, "the tensor %s", name);
    if (tv[3]) {
        t->has_bytes = 1;
        ld_compile(L, tv[3], SC_PARAMS, where, &t->bytes);
    }
    t->ndim = -1;
    if (tv[1]) tensor_shape(L, t, tv[1], tv[2], where);
    describe_tensor(L, t, tv[1], tv[2], tv[3]);
    p->tensor = (int)e->ntensors++;
    if (p->type == XMT_PT_UNKNOWN) type_as_pointer(e, p, pi);
}

void ld_parse_tensors(ld *L, const yaml_node_t *n)
{
    struct xmt_entry *e = L->cur;
    ld_map_names(L, n, "tensors");
    size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    e->tensors = ld_xcalloc(L, n, cnt, sizeof *e->tensors);
    e->ntensors_alloc = (unsigned)cnt;
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++)
        parse_tensor(L, ld_node(L, q->key), ld_node(L, q->value));
}
