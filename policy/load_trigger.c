/* load_trigger.c - the lookup key: triggers: and functional_triggers: into key slots
 * (one per value, XMT_KEY_SLOT bytes each, a dtype one byte), a whole-tensor trigger
 * subsuming that tensor's other triggers.
 */
#include "eval.h"
#include "load_internal.h"

#include <stdio.h>
#include <string.h>

static void add_slot_code(ld *L, const yaml_node_t *n, const xmt_code *src)
{
    struct xmt_entry *e = L->cur;
    xmt_slot *s = &e->slots[e->nslots++];
    s->kind = XMT_SLOT_EXPR;
    if (xmt_code_copy(&s->code, src)) ld_fail(L, n, "out of memory");
    e->keylen += XMT_KEY_SLOT;
}

static void add_slot_param(ld *L, const yaml_node_t *n, unsigned pi, const xmt_field *f)
{
    struct xmt_entry *e = L->cur;
    xmt_slot *s = &e->slots[e->nslots++];
    s->kind = XMT_SLOT_EXPR;
    char text[2 * XMT_NAME_MAX + 2];
    snprintf(text, sizeof text, "%s%s%s", e->params[pi].name, f ? "." : "", f ? f->name : "");
    rctx c = {e, SC_PARAMS, "a trigger"};
    char err[256];
    size_t pos;
    if (xmt_compile(text, ld_resolve, &c, &s->code, err, sizeof err, &pos))
        ld_fail(L, n, "trigger %s: %s", text, err);
    e->keylen += XMT_KEY_SLOT;
}

static xmt_trigger *new_trigger(ld *L, const yaml_node_t *n, const char *label, int form)
{
    struct xmt_entry *e = L->cur;
    for (unsigned i = 0; i < e->ntriggers; i++)
        if (!strcmp(e->triggers[i].label, label)) ld_fail(L, n, "trigger %s appears twice", label);
    if (e->ntriggers >= XMT_MAX_TRIGGERS) ld_fail(L, n, "more than %d triggers", XMT_MAX_TRIGGERS);
    xmt_trigger *t = &e->triggers[e->ntriggers++];
    snprintf(t->label, sizeof t->label, "%s", label);
    t->form = form;
    t->first = e->nslots;
    return t;
}

/* The parameter that trigger s (parsed into p) names: one that the key may depend on. */
static int trigger_param(ld *L, const yaml_node_t *n, const char *s, const xmt_path *p)
{
    struct xmt_entry *e = L->cur;
    int pi = ld_find_param(e, p->base);
    if (pi < 0) {
        if (ld_find_tun(e, p->base) >= 0)
            ld_fail(L, n,
                    "trigger '%s': %s is a tunable value (space:/configs:); a lookup key cannot "
                    "depend on what is "
                    "being tuned",
                    s, p->base);
        if (ld_find_ft(e, p->base) >= 0)
            ld_fail(L, n, "trigger '%s': %s is a functional trigger, already part of the key", s,
                    p->base);
        ld_fail(L, n, "trigger '%s': unknown parameter '%s'", s, p->base);
    }
    xmt_param *pp = &e->params[pi];
    if (pp->tuned)
        ld_fail(
            L, n,
            "trigger '%s': %s is set by a config (args:); a lookup key cannot depend on what is "
            "being tuned",
            s, p->base);
    return pi;
}

/* A parameter named alone: its value, or a whole tensor (dtype, shape, strides). */
static void trigger_whole(ld *L, const yaml_node_t *n, const char *s, int pi)
{
    struct xmt_entry *e = L->cur;
    const xmt_param *pp = &e->params[pi];
    const char *label = s;
    if (pp->tensor >= 0) {
        xmt_tensor *t = &e->tensors[pp->tensor];
        if (t->ndim < 0)
            ld_fail(L, n, "trigger '%s': %s has no shape (declared with bytes: only)", s, t->name);
        xmt_trigger *tr = new_trigger(L, n, label, XMT_TR_TENSOR);
        tr->ndim = (unsigned)t->ndim;
        xmt_slot *sl = &e->slots[e->nslots++];
        sl->kind = XMT_SLOT_DTYPE;
        sl->dtype = (uint8_t)t->dtype;
        e->keylen += 1;
        for (int d = 0; d < t->ndim; d++)
            add_slot_code(L, n, &t->shape[d]);
        for (int d = 0; d < t->ndim; d++)
            add_slot_code(L, n, &t->stride[d]);
        tr->nslots = e->nslots - tr->first;
        return;
    }
    if (pp->type == XMT_PT_PTR)
        ld_fail(L, n,
                "trigger '%s': %s is a pointer; declare it in tensors: to key on its dtype and "
                "shape",
                s, s);
    if (pp->type == XMT_PT_BLOB)
        ld_fail(L, n, "trigger '%s': %s is a bytes(N) parameter; name a field (%s.field)", s, s, s);
    xmt_trigger *tr = new_trigger(L, n, label, XMT_TR_SCALAR);
    add_slot_param(L, n, (unsigned)pi, NULL);
    tr->nslots = 1;
    return;
}

/* NAME.MEMBER: a blob field, a tensor's dtype, or its shape or strides, whole or one
 * dimension. */
static void trigger_member(ld *L, const yaml_node_t *n, const char *s, const xmt_path *p, int pi)
{
    struct xmt_entry *e = L->cur;
    const xmt_param *pp = &e->params[pi];
    const char *label = s;
    char lbuf[96];
    if (pp->type == XMT_PT_BLOB) {
        for (unsigned f = 0; f < pp->nfields; f++)
            if (!strcmp(pp->fields[f].name, p->member) && p->suffix == XMT_SFX_NONE) {
                xmt_trigger *tr = new_trigger(L, n, label, XMT_TR_SCALAR);
                add_slot_param(L, n, (unsigned)pi, &pp->fields[f]);
                tr->nslots = 1;
                return;
            }
        ld_fail(L, n, "trigger '%s': %s has no field '%s'", s, p->base, p->member);
    }
    if (pp->tensor < 0) ld_fail(L, n, "trigger '%s': %s is not declared in tensors:", s, p->base);
    xmt_tensor *t = &e->tensors[pp->tensor];
    const char *mb = p->member;
    int whole = 0, dim = -1, stride = 0;
    if (!strcmp(mb, "dtype") && p->suffix == XMT_SFX_NONE) {
        xmt_trigger *tr = new_trigger(L, n, label, XMT_TR_DTYPE);
        xmt_slot *sl = &e->slots[e->nslots++];
        sl->kind = XMT_SLOT_DTYPE;
        sl->dtype = (uint8_t)t->dtype;
        e->keylen += 1;
        tr->nslots = 1;
        return;
    }
    if ((!strcmp(mb, "shape") && p->suffix == XMT_SFX_NONE) ||
        (!strcmp(mb, "size") && p->suffix == XMT_SFX_CALL0)) {
        whole = 1;
    } else if ((!strcmp(mb, "shape") && p->suffix == XMT_SFX_INDEX) ||
               (!strcmp(mb, "size") && p->suffix == XMT_SFX_CALL1)) {
        dim = (int)p->k;
    } else if (!strcmp(mb, "stride") && p->suffix == XMT_SFX_CALL0) {
        whole = 1;
        stride = 1;
    } else if (!strcmp(mb, "stride") && p->suffix == XMT_SFX_CALL1) {
        dim = (int)p->k;
        stride = 1;
    } else {
        ld_fail(L, n,
                "trigger '%s': unknown tensor trigger (expected %s, %s.dtype, %s.shape, %s.size(), "
                "%s.size(i), "
                "%s.shape[i], %s.stride(), %s.stride(i))",
                s, p->base, p->base, p->base, p->base, p->base, p->base, p->base, p->base);
    }
    if (t->ndim < 0)
        ld_fail(L, n, "trigger '%s': %s has no shape (declared with bytes: only)", s, t->name);
    if (dim >= t->ndim)
        ld_fail(L, n, "trigger '%s': %s has %d dimension%s", s, t->name, t->ndim,
                t->ndim == 1 ? "" : "s");
    /* normalise the label so that x.size() and x.shape name the same trigger */
    if (whole)
        snprintf(lbuf, sizeof lbuf, "%s.%s", p->base, stride ? "stride()" : "shape");
    else
        snprintf(lbuf, sizeof lbuf, "%s.%s%d%s", p->base, stride ? "stride(" : "shape[", dim,
                 stride ? ")" : "]");
    xmt_trigger *tr = new_trigger(L, n, lbuf, whole ? XMT_TR_TUPLE : XMT_TR_SCALAR);
    if (whole) {
        tr->ndim = (unsigned)t->ndim;
        for (int d = 0; d < t->ndim; d++)
            add_slot_code(L, n, stride ? &t->stride[d] : &t->shape[d]);
    } else {
        add_slot_code(L, n, stride ? &t->stride[dim] : &t->shape[dim]);
    }
    tr->nslots = e->nslots - tr->first;
}

static void parse_trigger(ld *L, const yaml_node_t *n, const char *s)
{
    xmt_path p;
    char err[256];
    int m = xmt_parse_path(s, &p, err, sizeof err);
    if (m < 0) ld_fail_col(L, n, ld_text_col(n), "trigger '%s': %s", s, err);
    if (m == 0 || s[m] != 0)
        ld_fail(
            L, n,
            "trigger '%s': expected a parameter name or a tensor form (x, x.dtype, x.shape, "
            "x.size(), x.size(i), "
            "x.shape[i], x.stride(), x.stride(i)); computed keys belong in functional_triggers:",
            s);
    int pi = trigger_param(L, n, s, &p);
    if (!p.has_member)
        trigger_whole(L, n, s, pi);
    else
        trigger_member(L, n, s, &p, pi);
}

/* XMA: a trigger on the whole tensor subsumes its other triggers. Drops those, then
 * compacts the slots so that each trigger's slots stay contiguous, functional triggers last. */
static void subsume_triggers(struct xmt_entry *e)
{
    unsigned char dead[XMT_MAX_TRIGGERS] = {0};
    for (unsigned i = 0; i < e->ntriggers; i++) {
        if (e->triggers[i].form != XMT_TR_TENSOR) continue;
        size_t bl = strlen(e->triggers[i].label);
        for (unsigned j = 0; j < e->ntriggers; j++)
            if (j != i && !strncmp(e->triggers[j].label, e->triggers[i].label, bl) &&
                e->triggers[j].label[bl] == '.')
                dead[j] = 1;
    }
    unsigned w = 0, tw = 0;
    size_t kl = 0;
    for (unsigned t = 0; t < e->ntriggers; t++) {
        xmt_trigger tr = e->triggers[t];
        if (dead[t]) {
            for (unsigned s = tr.first; s < tr.first + tr.nslots; s++)
                if (e->slots[s].kind == XMT_SLOT_EXPR) xmt_code_free(&e->slots[s].code);
            continue;
        }
        unsigned first = w;
        for (unsigned s = tr.first; s < tr.first + tr.nslots; s++) {
            e->slots[w++] = e->slots[s];
            kl += e->slots[s].kind == XMT_SLOT_DTYPE ? 1 : XMT_KEY_SLOT;
        }
        tr.first = first;
        e->triggers[tw++] = tr;
    }
    e->ntriggers = tw;
    for (unsigned f = 0; f < e->nft; f++)
        e->slots[w++] = e->slots[e->nslots - e->nft + f];
    /* the tail held slots that moved down: forget them, they are not owned twice */
    for (unsigned s = w; s < e->nslots; s++)
        memset(&e->slots[s], 0, sizeof e->slots[s]);
    e->nslots = w;
    e->keylen = kl + XMT_KEY_SLOT * e->nft;
    /* auto's gx..sh, a policy's "grid0.x": copied into the key (xmt_entry_key) */
    for (unsigned s = 0; s < e->nslots; s++)
        e->slots[s].orig1 =
            e->slots[s].kind == XMT_SLOT_EXPR ? (uint8_t)xmt_code_orig_leaf(&e->slots[s].code) : 0;
}

/* functional_triggers: named expressions, compiled before triggers: may name them. */
static void parse_ftriggers(ld *L, const yaml_node_t *n)
{
    struct xmt_entry *e = L->cur;
    ld_map_names(L, n, "functional_triggers");
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
        yaml_node_t *k = ld_node(L, q->key);
        const char *ks = (const char *)k->data.scalar.value;
        if (e->nft >= XMT_MAX_TRIGGERS)
            ld_fail(L, k, "more than %d functional triggers", XMT_MAX_TRIGGERS);
        ld_check_new_name(L, k, ks, "functional_triggers");
        char where[128];
        snprintf(where, sizeof where, "the functional trigger %s", ks);
        ld_compile(L, ld_node(L, q->value), SC_PARAMS | SC_TENSORS, where, &e->ftcode[e->nft]);
        snprintf(e->ftnames[e->nft++], XMT_NAME_MAX, "%s", ks);
    }
}

/* The lookup key: functional triggers, then triggers, then their slots in key order. */
void ld_parse_key(ld *L, const yaml_node_t *m, const yaml_node_t *ftrig, const yaml_node_t *trig)
{
    struct xmt_entry *e = L->cur;
    e->slots = ld_xcalloc(L, m, XMT_MAX_TRIGGERS * (1 + 2 * XMT_MAX_DIMS), sizeof *e->slots);
    e->triggers = ld_xcalloc(L, m, XMT_MAX_TRIGGERS, sizeof *e->triggers);
    if (ftrig) parse_ftriggers(L, ftrig);
    if (trig) {
        const yaml_node_t *t = trig;
        if (t->type == YAML_SCALAR_NODE) {
            parse_trigger(L, t, (const char *)t->data.scalar.value);
        } else if (t->type == YAML_SEQUENCE_NODE) {
            for (yaml_node_item_t *it = t->data.sequence.items.start;
                 it < t->data.sequence.items.top; it++) {
                yaml_node_t *tn = ld_node(L, *it);
                parse_trigger(L, tn, ld_scalar(L, tn, "triggers"));
            }
        } else {
            ld_fail(L, t, "triggers: expected a list such as [x.shape, n]");
        }
    }
    if (e->ntriggers + e->nft > XMT_MAX_TRIGGERS)
        ld_fail(L, m, "more than %d triggers and functional triggers", XMT_MAX_TRIGGERS);
    for (unsigned f = 0; f < e->nft; f++) {
        xmt_slot *s = &e->slots[e->nslots++];
        s->kind = XMT_SLOT_EXPR;
        if (xmt_code_copy(&s->code, &e->ftcode[f])) ld_fail(L, m, "out of memory");
    }
    subsume_triggers(e);
    if (e->keylen > XMT_KEY_MAX)
        ld_fail(L, trig ? trig : m, "the lookup key would take %zu bytes, more than %d", e->keylen,
                XMT_KEY_MAX);
}
