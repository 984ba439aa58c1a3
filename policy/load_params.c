/* load_params.c - params: the kernel's parameters, with their types (i32, float*,
 * bytes(N) with named fields, or a name alone, typed later from the signature).
 */
#include "load_internal.h"
#include "types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_type(ld *L, const yaml_node_t *n, xmt_param *p, const char *ts)
{
    snprintf(p->tname, sizeof p->tname, "%s", ts);
    if (!strncmp(ts, "bytes(", 6)) {
        char *end;
        long v = strtol(ts + 6, &end, 10);
        if (end == ts + 6 || strcmp(end, ")") || v < 1 || v > XMT_MAX_BLOB_BYTES)
            ld_fail(L, n, "parameter %s: expected bytes(N) with N from 1 to %d, found '%s'",
                    p->name, XMT_MAX_BLOB_BYTES, ts);
        p->type = XMT_PT_BLOB;
        p->size = (uint32_t)v;
        return;
    }
    int pe;
    uint32_t sz;
    int t = xmt_type_parse(ts, &pe, &sz);
    if (t < 0)
        ld_fail(L, n,
                "parameter %s: unknown type '%s' (expected i8..i64, u8..u64, f16, bf16, f32, f64, "
                "ptr, a C type such "
                "as int or float*, or bytes(N))",
                p->name, ts);
    p->type = (uint8_t)t;
    p->pointee = pe;
    p->size = sz;
}

static void parse_fields(ld *L, xmt_param *p, const yaml_node_t *fm)
{
    ld_map_names(L, fm, "fields");
    size_t n = (size_t)(fm->data.mapping.pairs.top - fm->data.mapping.pairs.start);
    if (n > XMT_MAX_FIELDS) ld_fail(L, fm, "more than %d fields", XMT_MAX_FIELDS);
    p->fields = ld_xcalloc(L, fm, n, sizeof *p->fields);
    for (yaml_node_pair_t *q = fm->data.mapping.pairs.start; q < fm->data.mapping.pairs.top; q++) {
        yaml_node_t *k = ld_node(L, q->key), *v = ld_node(L, q->value);
        xmt_field *f = &p->fields[p->nfields++];
        snprintf(f->name, sizeof f->name, "%s", (const char *)k->data.scalar.value);
        char tbuf[64];
        long off;
        yaml_node_t *tn = v, *on = v;
        if (v->type == YAML_SCALAR_NODE) {
            /* short form "i32@8" */
            const char *s = (const char *)v->data.scalar.value;
            const char *at = strchr(s, '@');
            char *end;
            if (!at || (size_t)(at - s) >= sizeof tbuf)
                ld_fail(L, v,
                        "field %s: expected TYPE@OFFSET (e.g. i32@8) or {type: i32, offset: 8}",
                        f->name);
            memcpy(tbuf, s, (size_t)(at - s));
            tbuf[at - s] = 0;
            off = strtol(at + 1, &end, ld_num_base(at + 1));
            if (end == at + 1 || *end)
                ld_fail(L, v, "field %s: expected a byte offset after '@'", f->name);
        } else {
            static const char *const fk[] = {"type", "offset"};
            yaml_node_t *fv[2];
            ld_map_keys(L, v, "field", fk, 2, fv);
            if (!fv[0] || !fv[1]) ld_fail(L, v, "field %s: needs type: and offset:", f->name);
            snprintf(tbuf, sizeof tbuf, "%s", ld_scalar(L, fv[0], "type"));
            tn = fv[0];
            on = fv[1];
            off = (long)ld_get_int(L, fv[1], "offset", 0, XMT_MAX_BLOB_BYTES);
        }
        int pe;
        uint32_t sz;
        int t = xmt_type_parse(tbuf, &pe, &sz);
        if (t < 0) ld_fail(L, tn, "field %s: unknown type '%s'", f->name, tbuf);
        if (off < 0 || (uint64_t)off + sz > p->size)
            ld_fail(L, on, "field %s: %u bytes at offset %ld do not fit in bytes(%u)", f->name, sz,
                    off, p->size);
        for (unsigned j = 0; j + 1 < p->nfields; j++)
            if (!strcmp(p->fields[j].name, f->name)) ld_fail(L, k, "duplicate field '%s'", f->name);
        f->type = (uint8_t)t;
        f->offset = (uint32_t)off;
    }
}

static void add_param(ld *L, const yaml_node_t *kn, const char *name, const yaml_node_t *tn)
{
    struct xmt_entry *e = L->cur;
    ld_check_new_name(L, kn, name, "params");
    xmt_param *p = &e->params[e->nparams++];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->tensor = -1;
    p->pointee = -1;
    if (!tn || ld_is_null(tn)) {
        p->type = XMT_PT_UNKNOWN;
        snprintf(p->tname, sizeof p->tname, "?");
        e->needs_sig = 1;
        return;
    }
    if (tn->type == YAML_SCALAR_NODE) {
        set_type(L, tn, p, (const char *)tn->data.scalar.value);
        if (p->type == XMT_PT_BLOB) { /* bytes(N) without fields: opaque */
        }
        return;
    }
    static const char *const bk[] = {"bytes", "fields"};
    yaml_node_t *bv[2];
    ld_map_keys(L, tn, "blob parameter", bk, 2, bv);
    if (!bv[0]) ld_fail(L, tn, "parameter %s: a blob needs bytes: N", name);
    p->type = XMT_PT_BLOB;
    p->size = (uint32_t)ld_get_int(L, bv[0], "bytes", 1, XMT_MAX_BLOB_BYTES);
    snprintf(p->tname, sizeof p->tname, "bytes(%u)", p->size);
    if (bv[1]) parse_fields(L, p, bv[1]);
}

void ld_parse_params(ld *L, const yaml_node_t *n)
{
    struct xmt_entry *e = L->cur;
    size_t cnt;
    if (n->type == YAML_SEQUENCE_NODE)
        cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    else if (n->type == YAML_MAPPING_NODE)
        cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    else
        ld_fail(L, n, "params: expected a list such as [n: i32, x: ptr] or [n, x], found %s",
                ld_kind_name(n));
    if (cnt > XMT_MAX_PARAMS) ld_fail(L, n, "params: more than %d parameters", XMT_MAX_PARAMS);
    e->params = ld_xcalloc(L, n, cnt, sizeof *e->params);
    if (n->type == YAML_MAPPING_NODE) {
        ld_map_keys(L, n, "params", NULL, 0, NULL);
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
            add_param(L, ld_node(L, p->key), (const char *)ld_node(L, p->key)->data.scalar.value,
                      ld_node(L, p->value));
    } else {
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            yaml_node_t *item = ld_node(L, *it);
            if (item->type == YAML_SCALAR_NODE) {
                add_param(L, item, (const char *)item->data.scalar.value, NULL);
            } else if (item->type == YAML_MAPPING_NODE &&
                       item->data.mapping.pairs.top - item->data.mapping.pairs.start == 1) {
                yaml_node_pair_t *p = item->data.mapping.pairs.start;
                yaml_node_t *k = ld_node(L, p->key);
                if (k->type != YAML_SCALAR_NODE) ld_fail(L, k, "params: expected a name");
                add_param(L, k, (const char *)k->data.scalar.value, ld_node(L, p->value));
            } else {
                ld_fail(L, item, "params: each item is a name or 'name: type', found %s",
                        ld_kind_name(item));
            }
        }
    }
    e->ptypes = ld_xcalloc(L, n, e->nparams, 1);
    e->psizes = ld_xcalloc(L, n, e->nparams, sizeof *e->psizes);
    for (unsigned i = 0; i < e->nparams; i++) {
        e->ptypes[i] = e->params[i].type;
        e->psizes[i] = e->params[i].size;
    }
}
