/* load_buffers.c - reset_to_zero:, restore: and verify: (with tolerances): the tensors
 * that benchmarking candidates must zero, restore or compare; and tolerance:, the one
 * protect: auto gives the outputs it finds behind float pointers.
 */
#include "load_internal.h"

#include <stdio.h>
#include <string.h>

/* {rtol: R, atol: A} (either may be left out: 0). */
static void parse_rtol_atol(ld *L, const yaml_node_t *v, const char *what, double *rtol,
                            double *atol)
{
    static const char *const vk[] = {"rtol", "atol"};
    yaml_node_t *vv[2];
    ld_map_keys(L, v, what, vk, 2, vv);
    if (vv[0]) *rtol = ld_get_double(L, vv[0], "rtol", 0, 1e300);
    if (vv[1]) *atol = ld_get_double(L, vv[1], "atol", 0, 1e300);
}

static void parse_bufnames(ld *L, const yaml_node_t *n, unsigned role, const char *what)
{
    struct xmt_entry *e = L->cur;
    int ismap = n->type == YAML_MAPPING_NODE;
    if (n->type != YAML_SEQUENCE_NODE && !ismap)
        ld_fail(L, n, "%s: expected a list of tensor names%s", what,
                role == XMT_BUF_RESET    ? " or a mapping name: condition"
                : role == XMT_BUF_VERIFY ? " or a mapping name: {rtol: R, atol: A}"
                                         : "");
    if (ismap && role == XMT_BUF_RESTORE)
        ld_fail(L, n, "%s: expected a list of tensor names", what);
    if (ismap) ld_map_keys(L, n, what, NULL, 0, NULL);
    size_t cnt = ismap ? (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start)
                       : (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    for (size_t i = 0; i < cnt; i++) {
        yaml_node_t *k = ismap ? ld_node(L, n->data.mapping.pairs.start[i].key)
                               : ld_node(L, n->data.sequence.items.start[i]);
        yaml_node_t *v = ismap ? ld_node(L, n->data.mapping.pairs.start[i].value) : NULL;
        const char *name = ld_scalar(L, k, what);
        if (!ismap)
            for (size_t j = 0; j < i; j++)
                if (!strcmp(name, (const char *)ld_node(L, n->data.sequence.items.start[j])
                                      ->data.scalar.value))
                    ld_fail(L, k, "%s: %s appears twice", what, name);
        int pi = ld_find_param(e, name);
        if (pi < 0) ld_fail(L, k, "%s: '%s' is not a parameter", what, name);
        xmt_param *p = &e->params[pi];
        if (p->type != XMT_PT_PTR)
            ld_fail(L, k, "%s: %s is %s, not a pointer", what, name, p->tname);
        if (p->tensor < 0)
            ld_fail(
                L, k,
                "%s: %s needs an entry in tensors: (dtype and shape, or bytes) to know its size",
                what, name);
        xmt_bufdecl *b = NULL;
        for (unsigned j = 0; j < e->nbufs; j++)
            if (e->bufs[j].param == (unsigned)pi) b = &e->bufs[j];
        if (!b) {
            b = &e->bufs[e->nbufs++];
            snprintf(b->name, sizeof b->name, "%s", name);
            b->param = (unsigned)pi;
            b->tensor = p->tensor;
        }
        b->roles |= role;
        if (role == XMT_BUF_RESET && v && !ld_is_null(v)) {
            b->has_cond = 1;
            char where[128];
            snprintf(where, sizeof where, "the reset condition of %s", name);
            ld_compile(L, v, SC_PARAMS | SC_TENSORS | SC_FTRIG, where, &b->cond);
        }
        if (role == XMT_BUF_VERIFY && v && !ld_is_null(v)) {
            if (v->type == YAML_SCALAR_NODE &&
                !strcmp((const char *)v->data.scalar.value, "bitwise"))
                continue;
            parse_rtol_atol(L, v, "verify tolerance", &b->rtol, &b->atol);
            xmt_dtype dt = e->tensors[p->tensor].dtype;
            if ((b->rtol > 0 || b->atol > 0) && !(dt >= XMT_DT_F16 && dt <= XMT_DT_F64))
                ld_fail(L, v, "verify %s: a tolerance needs a floating-point dtype (%s is %s)",
                        name, name, xmt_dtype_name(dt));
        }
    }
}

/* reset_to_zero:, restore:, verify: (the buffers that benchmarking must look after). */
void ld_parse_buffers(ld *L, const yaml_node_t *m, const yaml_node_t *reset,
                      const yaml_node_t *restore, const yaml_node_t *verify)
{
    struct xmt_entry *e = L->cur;
    if (reset || restore || verify) e->bufs = ld_xcalloc(L, m, e->nparams, sizeof *e->bufs);
    if (reset) parse_bufnames(L, reset, XMT_BUF_RESET, "reset_to_zero");
    if (restore) parse_bufnames(L, restore, XMT_BUF_RESTORE, "restore");
    if (verify) parse_bufnames(L, verify, XMT_BUF_VERIFY, "verify");
}

void ld_parse_tolerance(ld *L, const yaml_node_t *n)
{
    struct xmt_entry *e = L->cur;
    e->tol_rtol = e->tol_atol = -1;
    if (!n) return;
    /* declared protection compares only the verify: buffers, each with its own tolerance */
    if (e->protect == XMT_PROTECT_DECLARED)
        ld_fail(L, n,
                "tolerance: applies under protect: auto (to the outputs it finds behind float "
                "pointers); under protect: declared give each verify: buffer its own");
    e->tol_rtol = e->tol_atol = 0;
    parse_rtol_atol(L, n, "tolerance", &e->tol_rtol, &e->tol_atol);
}
