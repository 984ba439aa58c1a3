/* load_launch.c - what is tuned: the tunable names, space:, configs: and pin:, and the
 * launch: (grid, block, shared) and args: that an entry or a config sets.
 */
#include "load_internal.h"

#include <stdio.h>
#include <string.h>

/* Collects the tunable names: the space's, else the first config's. */
void ld_collect_tunables(ld *L, const yaml_node_t *space, const yaml_node_t *configs)
{
    struct xmt_entry *e = L->cur;
    static const char *const reserved[] = {"condition", "launch", "args"};
    if (space) {
        ld_map_names(L, space, "space");
        for (yaml_node_pair_t *q = space->data.mapping.pairs.start;
             q < space->data.mapping.pairs.top; q++) {
            yaml_node_t *k = ld_node(L, q->key);
            if (e->ntun >= XMT_MAX_TUNABLES)
                ld_fail(L, k, "space: more than %d names", XMT_MAX_TUNABLES);
            ld_check_new_name(L, k, (const char *)k->data.scalar.value, "space");
            snprintf(e->tunames[e->ntun++], XMT_NAME_MAX, "%s", (const char *)k->data.scalar.value);
        }
        if (e->ntun == 0)
            ld_fail(L, space, "space: is empty (give at least one name with a list of values)");
    } else if (configs && configs->type == YAML_SEQUENCE_NODE &&
               configs->data.sequence.items.top > configs->data.sequence.items.start) {
        yaml_node_t *c0 = ld_node(L, configs->data.sequence.items.start[0]);
        if (c0->type != YAML_MAPPING_NODE) return; /* reported later */
        ld_map_keys(L, c0, "config", NULL, 0, NULL);
        for (yaml_node_pair_t *q = c0->data.mapping.pairs.start; q < c0->data.mapping.pairs.top;
             q++) {
            yaml_node_t *k = ld_node(L, q->key);
            const char *ks = (const char *)k->data.scalar.value;
            int r = 0;
            for (int j = 0; j < 3; j++)
                r |= !strcmp(ks, reserved[j]);
            if (r) continue;
            if (e->ntun >= XMT_MAX_TUNABLES)
                ld_fail(L, k, "configs: more than %d names", XMT_MAX_TUNABLES);
            ld_check_new_name(L, k, ks, "config");
            snprintf(e->tunames[e->ntun++], XMT_NAME_MAX, "%s", ks);
        }
    }
}

/* Marks the parameters that a config's args: set, before anything refers to them. */
static void mark_args(ld *L, const yaml_node_t *args)
{
    struct xmt_entry *e = L->cur;
    if (!args) return;
    ld_map_keys(L, args, "args", NULL, 0, NULL);
    for (yaml_node_pair_t *q = args->data.mapping.pairs.start; q < args->data.mapping.pairs.top;
         q++) {
        yaml_node_t *k = ld_node(L, q->key);
        const char *ks = (const char *)k->data.scalar.value;
        int pi = ld_find_param(e, ks);
        if (pi < 0) ld_fail(L, k, "args: '%s' is not a parameter", ks);
        uint8_t t = e->params[pi].type;
        if (t == XMT_PT_PTR || t == XMT_PT_BLOB)
            ld_fail(L, k,
                    "args: %s is %s; a config can set only scalar (integer or float) parameters",
                    ks, e->params[pi].tname);
        e->params[pi].tuned = 1;
    }
}

void ld_parse_args(ld *L, const yaml_node_t *n, xmt_args *a)
{
    struct xmt_entry *e = L->cur;
    size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (cnt > XMT_MAX_ARG_OVERRIDES)
        ld_fail(L, n, "args: more than %d parameters", XMT_MAX_ARG_OVERRIDES);
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
        yaml_node_t *k = ld_node(L, q->key);
        int pi = ld_find_param(e, (const char *)k->data.scalar.value);
        xmt_argexpr *x = &a->a[a->nargs++];
        x->param = (unsigned)pi;
        char where[128];
        snprintf(where, sizeof where, "args: %s", e->params[pi].name);
        ld_compile(L, ld_node(L, q->value), SC_PARAMS | SC_TENSORS | SC_TUNABLES | SC_FTRIG, where,
                   &x->code);
    }
}

static void parse_dimexpr(ld *L, const yaml_node_t *n, const char *what, xmt_dimexpr *d, int maxn)
{
    const unsigned sc = SC_PARAMS | SC_TENSORS | SC_TUNABLES | SC_FTRIG;
    d->set = 1;
    char where[64];
    if (n->type == YAML_SEQUENCE_NODE) {
        size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
        if (cnt < 1 || (int)cnt > maxn)
            ld_fail(L, n, "launch %s: expected 1 to %d expressions (x, y, z)", what, maxn);
        for (size_t i = 0; i < cnt; i++) {
            snprintf(where, sizeof where, "%s.%c", what, (char)('x' + i));
            ld_compile(L, ld_node(L, n->data.sequence.items.start[i]), sc, where, &d->c[i]);
        }
        d->n = (unsigned)cnt;
    } else {
        snprintf(where, sizeof where, maxn == 1 ? "%s" : "%s.x", what);
        ld_compile(L, n, sc, where, &d->c[0]);
        d->n = 1;
    }
}

void ld_parse_launch(ld *L, const yaml_node_t *n, xmt_launch_exprs *l)
{
    static const char *const lk[] = {"grid", "block", "shared"};
    yaml_node_t *lv[3];
    ld_map_keys(L, n, "launch", lk, 3, lv);
    if (lv[0]) parse_dimexpr(L, lv[0], "grid", &l->grid, 3);
    if (lv[1]) parse_dimexpr(L, lv[1], "block", &l->block, 3);
    if (lv[2]) {
        if (lv[2]->type != YAML_SCALAR_NODE)
            ld_fail(L, lv[2], "launch shared: expected one expression (bytes)");
        parse_dimexpr(L, lv[2], "shared", &l->shared, 1);
    }
}

/* One item of configs:, or the pin. */
void ld_parse_config(ld *L, const yaml_node_t *n, xmt_config *c, const char *what)
{
    struct xmt_entry *e = L->cur;
    if (n->type != YAML_MAPPING_NODE)
        ld_fail(L, n,
                "%s: expected a mapping such as {BLOCK: 256} or {launch: {block: [256]}}, found %s",
                what, ld_kind_name(n));
    ld_map_keys(L, n, what, NULL, 0, NULL);
    c->line = (int)n->start_mark.line + 1;
    unsigned seen = 0;
    yaml_node_t *cond = NULL, *launch = NULL, *args = NULL;
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
        yaml_node_t *k = ld_node(L, q->key), *v = ld_node(L, q->value);
        const char *ks = (const char *)k->data.scalar.value;
        if (!strcmp(ks, "condition")) {
            cond = v;
        } else if (!strcmp(ks, "launch")) {
            launch = v;
        } else if (!strcmp(ks, "args")) {
            args = v;
        } else {
            int ti = ld_find_tun(e, ks);
            if (ti < 0) {
                if (e->nspace || e->ntun)
                    ld_fail(L, k,
                            "%s: '%s' is not a tunable name of this entry (those are the names of "
                            "space: or of the "
                            "first config)",
                            what, ks);
                ld_fail(L, k,
                        "%s: '%s' is not a tunable name (this entry's configs set none; the first "
                        "config decides)",
                        what, ks);
            }
            c->vals[ti] = ld_get_number(L, v, ks);
            seen |= 1u << ti;
        }
    }
    for (unsigned t = 0; t < e->ntun; t++)
        if (!(seen & (1u << t)))
            ld_fail(
                L, n,
                "%s: sets no value for %s (every config sets the same names as the space or the "
                "first config)",
                what, e->tunames[t]);
    if (cond) {
        c->has_cond = 1;
        ld_compile(L, cond, SC_PARAMS | SC_TENSORS | SC_TUNABLES | SC_FTRIG, "a config condition",
                   &c->cond);
    }
    if (launch) ld_parse_launch(L, launch, &c->launch);
    if (args) {
        mark_args(L, args);
        ld_parse_args(L, args, &c->args);
    }
}

void ld_parse_space(ld *L, const yaml_node_t *n)
{
    struct xmt_entry *e = L->cur;
    e->space = ld_xcalloc(L, n, e->ntun, sizeof *e->space);
    e->spacesize = 1;
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
        yaml_node_t *k = ld_node(L, q->key), *v = ld_node(L, q->value);
        xmt_spacedim *d = &e->space[e->nspace++];
        snprintf(d->name, sizeof d->name, "%s", (const char *)k->data.scalar.value);
        char where[XMT_NAME_MAX + 8];
        snprintf(where, sizeof where, "space %s", d->name);
        if (v->type == YAML_SCALAR_NODE) {
            d->vals = ld_xcalloc(L, v, 1, sizeof *d->vals);
            d->vals[0] = ld_get_number(L, v, where);
            d->n = 1;
        } else if (v->type == YAML_SEQUENCE_NODE) {
            size_t cnt = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
            if (cnt == 0) ld_fail(L, v, "space %s: empty list of values", d->name);
            if (cnt > XMT_MAX_SPACE)
                ld_fail(L, v, "space %s: more than %d values", d->name, XMT_MAX_SPACE);
            d->vals = ld_xcalloc(L, v, cnt, sizeof *d->vals);
            for (size_t i = 0; i < cnt; i++) {
                yaml_node_t *it = ld_node(L, v->data.sequence.items.start[i]);
                d->vals[i] = ld_get_number(L, it, where);
                for (size_t j = 0; j < i; j++)
                    if (d->vals[j].isf == d->vals[i].isf && d->vals[j].u.i == d->vals[i].u.i)
                        ld_fail(L, it, "space %s: value %s appears twice", d->name,
                                ld_scalar(L, it, d->name));
            }
            d->n = (unsigned)cnt;
        } else {
            ld_fail(L, v, "space %s: expected a list of numbers such as [64, 128, 256]", d->name);
        }
        if (e->spacesize * d->n > XMT_MAX_SPACE)
            ld_fail(L, v, "space: the product of all value lists exceeds %d candidates",
                    XMT_MAX_SPACE);
        e->spacesize *= d->n;
    }
}

/* Marks the parameters that any args: sets (the entry's, each config's, the pin's). */
void ld_mark_all_args(ld *L, const yaml_node_t *args, const yaml_node_t *configs,
                      const yaml_node_t *pin)
{
    mark_args(L, args);
    if (configs && configs->type == YAML_SEQUENCE_NODE)
        for (yaml_node_item_t *it = configs->data.sequence.items.start;
             it < configs->data.sequence.items.top; it++) {
            yaml_node_t *c = ld_node(L, *it);
            if (c->type != YAML_MAPPING_NODE) continue;
            static const char *const ak[] = {"args"};
            for (yaml_node_pair_t *q = c->data.mapping.pairs.start; q < c->data.mapping.pairs.top;
                 q++)
                if (ld_node(L, q->key)->type == YAML_SCALAR_NODE &&
                    !strcmp((const char *)ld_node(L, q->key)->data.scalar.value, ak[0]))
                    mark_args(L, ld_node(L, q->value));
        }
    if (pin && pin->type == YAML_MAPPING_NODE)
        for (yaml_node_pair_t *q = pin->data.mapping.pairs.start; q < pin->data.mapping.pairs.top;
             q++)
            if (ld_node(L, q->key)->type == YAML_SCALAR_NODE &&
                !strcmp((const char *)ld_node(L, q->key)->data.scalar.value, "args"))
                mark_args(L, ld_node(L, q->value));
}

/* configs: a non-empty list of configs. */
void ld_parse_configs(ld *L, const yaml_node_t *c)
{
    struct xmt_entry *e = L->cur;
    if (c->type != YAML_SEQUENCE_NODE)
        ld_fail(L, c, "configs: expected a list of configs, found %s", ld_kind_name(c));
    size_t cnt = (size_t)(c->data.sequence.items.top - c->data.sequence.items.start);
    if (cnt == 0)
        ld_fail(L, c, "configs: empty list (give at least one config, or leave configs: out)");
    if (cnt > XMT_MAX_CONFIGS) ld_fail(L, c, "configs: more than %d configs", XMT_MAX_CONFIGS);
    e->configs = ld_xcalloc(L, c, cnt, sizeof *e->configs);
    e->nconfigs = (unsigned)cnt; /* zeroed configs free cleanly if one fails */
    for (size_t i = 0; i < cnt; i++)
        ld_parse_config(L, ld_node(L, c->data.sequence.items.start[i]), &e->configs[i], "config");
}
