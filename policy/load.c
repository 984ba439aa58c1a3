/* load.c - reading policy files: YAML (libyaml) into compiled entries.
 *
 * libyaml builds the document; this module walks it with its own checks, because
 * libyaml accepts duplicate keys silently and lets an anchor contain its own alias. A
 * first pass over the whole document rejects alias cycles and bounds alias expansion;
 * then each kernel entry is compiled on its own: the first error in an entry is
 * reported ("file:line:col: what was expected", 1-based) and the entry is dropped, the
 * others are kept. Names are resolved in dependency order: parameters, tensors,
 * tunables, functional triggers, triggers, then everything that may use tunables.
 */
#include "entry.h"
#include "types.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

typedef struct {
    const char *file;
    xmt_diag_fn diag;
    void *ud;
    int nerr;
    yaml_document_t *doc;
    jmp_buf jb; /* an error inside an entry unwinds to parse_entry */
    struct xmt_entry *cur;
    size_t order;
} ld;

/* ---- messages ------------------------------------------------------------------------ */

static void vreport(ld *L, yaml_mark_t m, size_t extra, const char *fmt, va_list ap)
{
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "%s:%zu:%zu: ", L->file, m.line + 1, m.column + 1 + extra);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof msg) vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    L->nerr++;
    if (L->diag) L->diag(L->ud, msg);
}

static void ld_report(ld *L, yaml_mark_t m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(L, m, 0, fmt, ap);
    va_end(ap);
}

/* Reports at node n and abandons the current entry. */
__attribute__((noreturn)) static void ld_fail(ld *L, const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(L, n->start_mark, 0, fmt, ap);
    va_end(ap);
    longjmp(L->jb, 1);
}

__attribute__((noreturn)) static void ld_fail_col(ld *L, const yaml_node_t *n, size_t extra,
                                                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(L, n->start_mark, extra, fmt, ap);
    va_end(ap);
    longjmp(L->jb, 1);
}

static void *ld_xcalloc(ld *L, const yaml_node_t *n, size_t a, size_t b)
{
    void *p = calloc(a ? a : 1, b ? b : 1);
    if (!p) ld_fail(L, n, "out of memory");
    return p;
}

/* ---- YAML helpers -------------------------------------------------------------------- */

static yaml_node_t *ld_node(ld *L, int i)
{
    return yaml_document_get_node(L->doc, i);
}

static const char *ld_kind_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

static const char *ld_scalar(ld *L, const yaml_node_t *n, const char *what)
{
    if (n->type != YAML_SCALAR_NODE)
        ld_fail(L, n, "%s: expected a scalar, found %s", what, ld_kind_name(n));
    return (const char *)n->data.scalar.value;
}

static int ld_is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return 0;
    const char *s = (const char *)n->data.scalar.value;
    return s[0] == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

/* Column offset of the first character of a scalar's text (after an opening quote). */
static size_t ld_text_col(const yaml_node_t *n)
{
    return (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
            n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
               ? 1
               : 0;
}

static int ld_parse_bool(const char *s, int *b)
{
    static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "on", "On"};
    static const char *const f[] = {"false", "False", "FALSE", "no", "No", "off", "Off"};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strcmp(s, t[i]) == 0) return *b = 1, 0;
        if (strcmp(s, f[i]) == 0) return *b = 0, 0;
    }
    return -1;
}

/* Decimal, or hexadecimal with 0x: never octal, "010" is ten. */
static int ld_num_base(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    return (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
}

static int64_t ld_get_int(ld *L, const yaml_node_t *n, const char *what, int64_t lo, int64_t hi)
{
    const char *s = ld_scalar(L, n, what);
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, ld_num_base(s));
    if (end == s || *end || errno)
        ld_fail(L, n, "%s: expected a whole number, found '%s'", what, s);
    if (v < lo || v > hi)
        ld_fail(L, n, "%s: %lld is out of range (%lld..%lld)", what, v, (long long)lo,
                (long long)hi);
    return v;
}

static double ld_get_double(ld *L, const yaml_node_t *n, const char *what, double lo, double hi)
{
    const char *s = ld_scalar(L, n, what);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        ld_fail(L, n, "%s: expected a number, found '%s'", what, s);
    if (v < lo || v > hi) ld_fail(L, n, "%s: %g is out of range (%g..%g)", what, v, lo, hi);
    return v;
}

/* A number literal as a value: integer when it reads as one, else a float. */
static xmt_val ld_get_number(ld *L, const yaml_node_t *n, const char *what)
{
    const char *s = ld_scalar(L, n, what);
    char *end;
    xmt_val v;
    errno = 0;
    long long i = strtoll(s, &end, ld_num_base(s));
    if (end != s && !*end && !errno) {
        v.isf = 0;
        v.u.i = i;
        return v;
    }
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(d) || s[0] == 0)
        ld_fail(L, n, "%s: expected a number, found '%s'", what, s);
    v.isf = 1;
    v.u.f = d;
    return v;
}

static int ld_get_bool(ld *L, const yaml_node_t *n, const char *what)
{
    int b;
    const char *s = ld_scalar(L, n, what);
    if (ld_parse_bool(s, &b)) ld_fail(L, n, "%s: expected true or false, found '%s'", what, s);
    return b;
}

static int ld_valid_ident(const char *s)
{
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return 0;
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || s[n] == '_' ||
              (s[n] >= '0' && s[n] <= '9')))
            return 0;
    return n < XMT_NAME_MAX;
}

/* Walks a mapping: every key must be a scalar, appear once, and be one of allowed (NULL:
 * any). Fills vals[i] with the value node of allowed[i], or NULL. */
static void ld_map_keys(ld *L, const yaml_node_t *m, const char *what, const char *const *allowed,
                        size_t nallowed, yaml_node_t **vals)
{
    if (m->type != YAML_MAPPING_NODE)
        ld_fail(L, m, "%s: expected a mapping, found %s", what, ld_kind_name(m));
    for (size_t i = 0; i < nallowed; i++)
        vals[i] = NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = ld_node(L, p->key);
        if (k->type != YAML_SCALAR_NODE)
            ld_fail(L, k, "%s: keys must be plain names, found %s", what, ld_kind_name(k));
        const char *ks = (const char *)k->data.scalar.value;
        for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = ld_node(L, q->key);
            if (k2->type == YAML_SCALAR_NODE &&
                strcmp((const char *)k2->data.scalar.value, ks) == 0)
                ld_fail(L, k, "%s: duplicate key '%s' (first at line %zu)", what, ks,
                        k2->start_mark.line + 1);
        }
        if (!allowed) continue;
        size_t i;
        for (i = 0; i < nallowed; i++)
            if (strcmp(allowed[i], ks) == 0) break;
        if (i == nallowed) {
            char list[512];
            size_t at = 0;
            list[0] = 0;
            for (size_t j = 0; j < nallowed && at < sizeof list; j++)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", j ? ", " : "",
                                       allowed[j]);
            ld_fail(L, k, "%s: unknown key '%s' (expected one of: %s)", what, ks, list);
        }
        vals[i] = ld_node(L, p->value);
    }
}

/* Only the duplicate check, for mappings whose keys are user names. */
static void ld_map_names(ld *L, const yaml_node_t *m, const char *what)
{
    ld_map_keys(L, m, what, NULL, 0, NULL);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = ld_node(L, p->key);
        if (!ld_valid_ident((const char *)k->data.scalar.value))
            ld_fail(L, k,
                    "%s: '%s' is not a valid name (letters, digits, _; at most %d characters)",
                    what, (const char *)k->data.scalar.value, XMT_NAME_MAX - 1);
    }
}

/* Rejects alias cycles and bounds expansion: a DFS over the graph that the aliases make. */
static int check_graph(ld *L, int idx, unsigned char *onpath, size_t *visits)
{
    yaml_node_t *n = ld_node(L, idx);
    if (!n) return 0;
    if (++*visits > XMT_MAX_YAML_NODES) {
        ld_report(L, n->start_mark, "aliases expand to more than %d nodes", XMT_MAX_YAML_NODES);
        return -1;
    }
    if (onpath[idx]) {
        ld_report(L, n->start_mark, "an alias refers to a node that contains it (recursive alias)");
        return -1;
    }
    onpath[idx] = 1;
    int rc = 0;
    if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = n->data.sequence.items.start;
             !rc && it < n->data.sequence.items.top; it++)
            rc = check_graph(L, *it, onpath, visits);
    } else if (n->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
             !rc && p < n->data.mapping.pairs.top; p++) {
            rc = check_graph(L, p->key, onpath, visits);
            if (!rc) rc = check_graph(L, p->value, onpath, visits);
        }
    }
    onpath[idx] = 0;
    return rc;
}

/* ---- name resolution -------------------------------------------------------------------- */

enum {
    SC_PARAMS = 1,
    SC_TENSORS = 2,
    SC_TUNABLES = 4,
    SC_FTRIG = 8,
};

typedef struct {
    struct xmt_entry *e;
    unsigned scope;
    const char *where; /* "a tensor shape", "a functional trigger", ... */
} rctx;

static int ld_find_param(const struct xmt_entry *e, const char *name)
{
    for (unsigned i = 0; i < e->nparams; i++)
        if (strcmp(e->params[i].name, name) == 0) return (int)i;
    return -1;
}

static int ld_find_tun(const struct xmt_entry *e, const char *name)
{
    for (unsigned i = 0; i < e->ntun; i++)
        if (strcmp(e->tunames[i], name) == 0) return (int)i;
    return -1;
}

static int ld_find_ft(const struct xmt_entry *e, const char *name)
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

static int ld_resolve(void *vctx, const xmt_path *p, xmt_ref *r, char *err, size_t cap)
{
    rctx *c = vctx;
    struct xmt_entry *e = c->e;
    int i;
    if (p->has_member) {
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
             "%sgrid0.x/block0.x/shared0 or a device "
             "attribute such as sm_count)",
             p->base, (c->scope & SC_TUNABLES) ? "a space value, " : "");
    return -1;
}

/* Compiles the scalar node n as an expression in the given scope. */
static void ld_compile(ld *L, const yaml_node_t *n, unsigned scope, const char *where,
                       xmt_code *out)
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

/* ---- entry parts ------------------------------------------------------------------------- */

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

static void ld_check_new_name(ld *L, const yaml_node_t *n, const char *name, const char *what)
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

static void ld_parse_params(ld *L, const yaml_node_t *n)
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

static void ld_parse_tensors(ld *L, const yaml_node_t *n)
{
    struct xmt_entry *e = L->cur;
    ld_map_names(L, n, "tensors");
    size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    e->tensors = ld_xcalloc(L, n, cnt, sizeof *e->tensors);
    e->ntensors_alloc = (unsigned)cnt;
    for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
        yaml_node_t *k = ld_node(L, q->key), *v = ld_node(L, q->value);
        const char *name = (const char *)k->data.scalar.value;
        int pi = ld_find_param(e, name);
        if (pi < 0) ld_fail(L, k, "tensors: '%s' is not a parameter", name);
        xmt_param *p = &e->params[pi];
        if (p->type != XMT_PT_PTR && p->type != XMT_PT_UNKNOWN)
            ld_fail(L, k, "tensors: %s is declared as %s, a tensor must be a pointer", name,
                    p->tname);
        static const char *const tk[] = {"dtype", "shape", "strides", "bytes"};
        yaml_node_t *tv[4];
        ld_map_keys(L, v, "tensor", tk, 4, tv);
        xmt_tensor *t = &e->tensors[e->ntensors];
        snprintf(t->name, sizeof t->name, "%s", name);
        t->param = (unsigned)pi;
        if (tv[0]) {
            const char *ds = ld_scalar(L, tv[0], "dtype");
            int d = xmt_dtype_parse(ds);
            if (d < 0)
                ld_fail(
                    L, tv[0],
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
        if (!tv[1] && !tv[3]) ld_fail(L, v, "tensor %s: needs shape: [..] or bytes: EXPR", name);
        if (tv[2] && !tv[1]) ld_fail(L, tv[2], "tensor %s: strides: needs shape:", name);
        char where[128];
        snprintf(where, sizeof where, "the tensor %s", name);
        if (tv[3]) {
            t->has_bytes = 1;
            ld_compile(L, tv[3], SC_PARAMS, where, &t->bytes);
        }
        t->ndim = -1;
        if (tv[1]) {
            const yaml_node_t *sh = tv[1];
            if (sh->type != YAML_SEQUENCE_NODE)
                ld_fail(L, sh, "tensor %s: shape: expected a list of expressions such as [m, n]",
                        name);
            size_t nd = (size_t)(sh->data.sequence.items.top - sh->data.sequence.items.start);
            if (nd > XMT_MAX_DIMS)
                ld_fail(L, sh, "tensor %s: more than %d dimensions", name, XMT_MAX_DIMS);
            t->ndim = (int)nd;
            for (size_t d = 0; d < nd; d++)
                ld_compile(L, ld_node(L, sh->data.sequence.items.start[d]), SC_PARAMS, where,
                           &t->shape[d]);
            if (tv[2]) {
                const yaml_node_t *st = tv[2];
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
                /* contiguous: stride[d] = product of the later dimensions */
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
                    if (rc)
                        ld_fail(L, sh, "tensor %s: shape too large to compile its strides", name);
                }
            }
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
            if (rc) ld_fail(L, sh, "tensor %s: shape too large to compile", name);
        }
        describe_tensor(L, t, tv[1], tv[2], tv[3]);
        p->tensor = (int)e->ntensors++;
        if (p->type == XMT_PT_UNKNOWN) {
            /* a tensor is a pointer whatever the signature says */
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
    }
}

/* Collects the tunable names: the space's, else the first config's. */
static void ld_collect_tunables(ld *L, const yaml_node_t *space, const yaml_node_t *configs)
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

static void ld_parse_args(ld *L, const yaml_node_t *n, xmt_args *a)
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

static void ld_parse_launch(ld *L, const yaml_node_t *n, xmt_launch_exprs *l)
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
static void ld_parse_config(ld *L, const yaml_node_t *n, xmt_config *c, const char *what)
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

static void ld_parse_space(ld *L, const yaml_node_t *n)
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

static void parse_trigger(ld *L, const yaml_node_t *n, const char *s)
{
    struct xmt_entry *e = L->cur;
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
    const char *label = s;
    char lbuf[96];
    int pi = ld_find_param(e, p.base);
    if (pi < 0) {
        if (ld_find_tun(e, p.base) >= 0)
            ld_fail(L, n,
                    "trigger '%s': %s is a tunable value (space:/configs:); a lookup key cannot "
                    "depend on what is "
                    "being tuned",
                    s, p.base);
        if (ld_find_ft(e, p.base) >= 0)
            ld_fail(L, n, "trigger '%s': %s is a functional trigger, already part of the key", s,
                    p.base);
        ld_fail(L, n, "trigger '%s': unknown parameter '%s'", s, p.base);
    }
    xmt_param *pp = &e->params[pi];
    if (pp->tuned)
        ld_fail(
            L, n,
            "trigger '%s': %s is set by a config (args:); a lookup key cannot depend on what is "
            "being tuned",
            s, p.base);
    if (!p.has_member) {
        if (pp->tensor >= 0) {
            xmt_tensor *t = &e->tensors[pp->tensor];
            if (t->ndim < 0)
                ld_fail(L, n, "trigger '%s': %s has no shape (declared with bytes: only)", s,
                        t->name);
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
            ld_fail(L, n, "trigger '%s': %s is a bytes(N) parameter; name a field (%s.field)", s, s,
                    s);
        xmt_trigger *tr = new_trigger(L, n, label, XMT_TR_SCALAR);
        add_slot_param(L, n, (unsigned)pi, NULL);
        tr->nslots = 1;
        return;
    }
    if (pp->type == XMT_PT_BLOB) {
        for (unsigned f = 0; f < pp->nfields; f++)
            if (!strcmp(pp->fields[f].name, p.member) && p.suffix == XMT_SFX_NONE) {
                xmt_trigger *tr = new_trigger(L, n, label, XMT_TR_SCALAR);
                add_slot_param(L, n, (unsigned)pi, &pp->fields[f]);
                tr->nslots = 1;
                return;
            }
        ld_fail(L, n, "trigger '%s': %s has no field '%s'", s, p.base, p.member);
    }
    if (pp->tensor < 0) ld_fail(L, n, "trigger '%s': %s is not declared in tensors:", s, p.base);
    xmt_tensor *t = &e->tensors[pp->tensor];
    const char *mb = p.member;
    int whole = 0, dim = -1, stride = 0;
    if (!strcmp(mb, "dtype") && p.suffix == XMT_SFX_NONE) {
        xmt_trigger *tr = new_trigger(L, n, label, XMT_TR_DTYPE);
        xmt_slot *sl = &e->slots[e->nslots++];
        sl->kind = XMT_SLOT_DTYPE;
        sl->dtype = (uint8_t)t->dtype;
        e->keylen += 1;
        tr->nslots = 1;
        return;
    }
    if ((!strcmp(mb, "shape") && p.suffix == XMT_SFX_NONE) ||
        (!strcmp(mb, "size") && p.suffix == XMT_SFX_CALL0)) {
        whole = 1;
    } else if ((!strcmp(mb, "shape") && p.suffix == XMT_SFX_INDEX) ||
               (!strcmp(mb, "size") && p.suffix == XMT_SFX_CALL1)) {
        dim = (int)p.k;
    } else if (!strcmp(mb, "stride") && p.suffix == XMT_SFX_CALL0) {
        whole = 1;
        stride = 1;
    } else if (!strcmp(mb, "stride") && p.suffix == XMT_SFX_CALL1) {
        dim = (int)p.k;
        stride = 1;
    } else {
        ld_fail(L, n,
                "trigger '%s': unknown tensor trigger (expected %s, %s.dtype, %s.shape, %s.size(), "
                "%s.size(i), "
                "%s.shape[i], %s.stride(), %s.stride(i))",
                s, p.base, p.base, p.base, p.base, p.base, p.base, p.base, p.base);
    }
    if (t->ndim < 0)
        ld_fail(L, n, "trigger '%s': %s has no shape (declared with bytes: only)", s, t->name);
    if (dim >= t->ndim)
        ld_fail(L, n, "trigger '%s': %s has %d dimension%s", s, t->name, t->ndim,
                t->ndim == 1 ? "" : "s");
    /* normalise the label so that x.size() and x.shape name the same trigger */
    if (whole)
        snprintf(lbuf, sizeof lbuf, "%s.%s", p.base, stride ? "stride()" : "shape");
    else
        snprintf(lbuf, sizeof lbuf, "%s.%s%d%s", p.base, stride ? "stride(" : "shape[", dim,
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
            static const char *const vk[] = {"rtol", "atol"};
            yaml_node_t *vv[2];
            ld_map_keys(L, v, "verify tolerance", vk, 2, vv);
            if (vv[0]) b->rtol = ld_get_double(L, vv[0], "rtol", 0, 1e300);
            if (vv[1]) b->atol = ld_get_double(L, vv[1], "atol", 0, 1e300);
            xmt_dtype dt = e->tensors[p->tensor].dtype;
            if ((b->rtol > 0 || b->atol > 0) && !(dt >= XMT_DT_F16 && dt <= XMT_DT_F64))
                ld_fail(L, v, "verify %s: a tolerance needs a floating-point dtype (%s is %s)",
                        name, name, xmt_dtype_name(dt));
        }
    }
}

enum {
    K_MATCH,
    K_SIGNATURE,
    K_MANGLED,
    K_PARAMS,
    K_TENSORS,
    K_TRIGGERS,
    K_FTRIGGERS,
    K_SPACE,
    K_CONFIGS,
    K_CONDITION,
    K_LAUNCH,
    K_ARGS,
    K_PIN,
    K_RESET,
    K_RESTORE,
    K_VERIFY,
    K_WARMUP,
    K_ITERATIONS,
    K_BUDGET,
    K_STATISTIC,
    K_L2FLUSH,
    K_N
};
static const char *const entry_keys[K_N] = {
    "match",
    "signature",
    "mangled",
    "params",
    "tensors",
    "triggers",
    "functional_triggers",
    "space",
    "configs",
    "condition",
    "launch",
    "args",
    "pin",
    "reset_to_zero",
    "restore",
    "verify",
    "warmup",
    "iterations",
    "budget_ms",
    "statistic",
    "l2_flush",
};

/* match:, signature: or mangled: (exactly one). */
static void parse_pattern(ld *L, const yaml_node_t *m, yaml_node_t *const *v)
{
    struct xmt_entry *e = L->cur;
    int npat = !!v[K_MATCH] + !!v[K_SIGNATURE] + !!v[K_MANGLED];
    if (npat == 0)
        ld_fail(L, m,
                "kernel entry: needs one of match: (glob on the name), signature: or mangled:");
    if (npat > 1) ld_fail(L, m, "kernel entry: give only one of match:, signature:, mangled:");
    int pk = v[K_MATCH] ? K_MATCH : v[K_SIGNATURE] ? K_SIGNATURE : K_MANGLED;
    const char *pat = ld_scalar(L, v[pk], entry_keys[pk]);
    if (!pat[0]) ld_fail(L, v[pk], "%s: empty pattern", entry_keys[pk]);
    e->patkind = pk == K_MATCH       ? XMT_PAT_MATCH
                 : pk == K_SIGNATURE ? XMT_PAT_SIGNATURE
                                     : XMT_PAT_MANGLED;
    e->pattern = strdup(pat);
    if (!e->pattern) ld_fail(L, m, "out of memory");
    snprintf(e->pattern_text, sizeof e->pattern_text, "%s: %s", entry_keys[pk], pat);
}

/* Marks the parameters that any args: sets (the entry's, each config's, the pin's). */
static void ld_mark_all_args(ld *L, const yaml_node_t *args, const yaml_node_t *configs,
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
static void ld_parse_key(ld *L, const yaml_node_t *m, const yaml_node_t *ftrig,
                         const yaml_node_t *trig)
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

/* configs: a non-empty list of configs. */
static void ld_parse_configs(ld *L, const yaml_node_t *c)
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

/* reset_to_zero:, restore:, verify: (the buffers that benchmarking must look after). */
static void ld_parse_buffers(ld *L, const yaml_node_t *m, const yaml_node_t *reset,
                             const yaml_node_t *restore, const yaml_node_t *verify)
{
    struct xmt_entry *e = L->cur;
    if (reset || restore || verify) e->bufs = ld_xcalloc(L, m, e->nparams, sizeof *e->bufs);
    if (reset) parse_bufnames(L, reset, XMT_BUF_RESET, "reset_to_zero");
    if (restore) parse_bufnames(L, restore, XMT_BUF_RESTORE, "restore");
    if (verify) parse_bufnames(L, verify, XMT_BUF_VERIFY, "verify");
}

/* warmup:, iterations:, budget_ms:, statistic:, l2_flush: (how to benchmark). */
static void parse_measure(ld *L, yaml_node_t *const *v)
{
    struct xmt_entry *e = L->cur;
    e->warmup = v[K_WARMUP] ? (int)ld_get_int(L, v[K_WARMUP], "warmup", 0, 1000000) : -1;
    e->iterations =
        v[K_ITERATIONS] ? (int)ld_get_int(L, v[K_ITERATIONS], "iterations", 1, 1000000) : -1;
    e->budget_ms = v[K_BUDGET] ? ld_get_double(L, v[K_BUDGET], "budget_ms", 1e-3, 1e9) : -1;
    if (v[K_STATISTIC]) {
        const char *s = ld_scalar(L, v[K_STATISTIC], "statistic");
        if (!strcmp(s, "mean"))
            e->use_mean = 1;
        else if (strcmp(s, "median"))
            ld_fail(L, v[K_STATISTIC], "statistic: expected median or mean, found '%s'", s);
    }
    e->l2_flush = v[K_L2FLUSH] ? ld_get_bool(L, v[K_L2FLUSH], "l2_flush") : -1;
}

/* One kernel entry, its keys in dependency order (see the top of this file). */
static void parse_entry_body(ld *L, const yaml_node_t *m)
{
    struct xmt_entry *e = L->cur;
    yaml_node_t *v[K_N];
    ld_map_keys(L, m, "kernel entry", entry_keys, K_N, v);
    parse_pattern(L, m, v);
    if (v[K_PARAMS])
        ld_parse_params(L, v[K_PARAMS]);
    else {
        e->ptypes = ld_xcalloc(L, m, 1, 1);
        e->psizes = ld_xcalloc(L, m, 1, sizeof *e->psizes);
    }
    /* tunable names before tensors, so that a shape naming one says why it may not */
    if (v[K_SPACE] || v[K_CONFIGS]) ld_collect_tunables(L, v[K_SPACE], v[K_CONFIGS]);
    if (v[K_TENSORS]) ld_parse_tensors(L, v[K_TENSORS]);
    ld_mark_all_args(L, v[K_ARGS], v[K_CONFIGS], v[K_PIN]);
    ld_parse_key(L, m, v[K_FTRIGGERS], v[K_TRIGGERS]);

    const unsigned all = SC_PARAMS | SC_TENSORS | SC_TUNABLES | SC_FTRIG;
    if (v[K_CONDITION]) {
        e->has_cond = 1;
        ld_compile(L, v[K_CONDITION], all, "the entry's condition", &e->cond);
    }
    if (v[K_LAUNCH]) ld_parse_launch(L, v[K_LAUNCH], &e->launch);
    if (v[K_ARGS]) ld_parse_args(L, v[K_ARGS], &e->args);
    if (v[K_SPACE]) ld_parse_space(L, v[K_SPACE]);
    if (v[K_CONFIGS]) ld_parse_configs(L, v[K_CONFIGS]);
    if (v[K_PIN]) {
        ld_parse_config(L, v[K_PIN], &e->pin, "pin");
        e->has_pin = 1;
    }
    if (!e->nconfigs && !e->nspace && !e->has_pin)
        ld_fail(L, m, "kernel entry: nothing to tune: give configs:, space: or pin:");
    ld_parse_buffers(L, m, v[K_RESET], v[K_RESTORE], v[K_VERIFY]);
    parse_measure(L, v);
}

static struct xmt_entry *parse_entry(ld *L, const yaml_node_t *m)
{
    struct xmt_entry *volatile e = calloc(1, sizeof *e); /* survives the longjmp */
    if (!e) {
        ld_report(L, m->start_mark, "out of memory");
        return NULL;
    }
    e->owner = 1;
    e->order = L->order++;
    snprintf(e->origin, sizeof e->origin, "%s:%zu", L->file, m->start_mark.line + 1);
    L->cur = e;
    if (setjmp(L->jb)) {
        xmt_entry_destroy(L->cur);
        L->cur = NULL;
        return NULL;
    }
    parse_entry_body(L, m);
    L->cur = NULL;
    return e;
}

/* ---- files ------------------------------------------------------------------------------- */

int xmt_set_add(struct xmt_policy_set *s, struct xmt_entry *e)
{
    if (s->n >= XMT_MAX_ENTRIES) return -1;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        struct xmt_entry **nv = realloc(s->v, nc * sizeof *nv);
        if (!nv) return -1;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = e;
    return 0;
}

static void load_text(ld *L, const char *text, size_t len, struct xmt_policy_set *set)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_mark_t m0 = {0, 0, 0};
    if (len > XMT_MAX_FILE_BYTES) {
        ld_report(L, m0, "file larger than %d bytes", XMT_MAX_FILE_BYTES);
        return;
    }
    if (!yaml_parser_initialize(&parser)) {
        ld_report(L, m0, "out of memory");
        return;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        yaml_mark_t mk = parser.problem_mark;
        if (parser.context)
            ld_report(L, mk, "YAML: %s %s (line %zu)", parser.problem ? parser.problem : "error",
                      parser.context, parser.context_mark.line + 1);
        else
            ld_report(L, mk, "YAML: %s", parser.problem ? parser.problem : "error");
        yaml_parser_delete(&parser);
        return;
    }
    /* cleared at out: below, before doc goes out of scope */
    // cppcheck-suppress autoVariables
    L->doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) goto out; /* empty file: no entries */
    /* a second document would be silently ignored: refuse it */
    yaml_document_t doc2;
    if (yaml_parser_load(&parser, &doc2)) {
        yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
        if (r2) ld_report(L, r2->start_mark, "one YAML document per file (found a second one)");
        yaml_document_delete(&doc2);
        if (r2) goto out;
    } else {
        ld_report(L, parser.problem_mark, "YAML: %s", parser.problem ? parser.problem : "error");
        goto out;
    }
    size_t nn = (size_t)(doc.nodes.top - doc.nodes.start);
    unsigned char *onpath = calloc(nn + 2, 1);
    size_t visits = 0;
    if (!onpath) {
        ld_report(L, m0, "out of memory");
        goto out;
    }
    int rc = check_graph(L, 1, onpath, &visits);
    free(onpath);
    if (rc) goto out;
    if (setjmp(L->jb)) goto out; /* an error in the top level */
    static const char *const top[] = {"kernels", "version"};
    yaml_node_t *tv[2];
    ld_map_keys(L, root, "policy file (top level)", top, 2, tv);
    if (tv[1]) ld_get_int(L, tv[1], "version", 1, 1);
    if (!tv[0]) {
        ld_report(L, root->start_mark,
                  "policy file: expected 'kernels:' with a list of kernel entries");
        goto out;
    }
    if (tv[0]->type != YAML_SEQUENCE_NODE) {
        if (ld_is_null(tv[0])) goto out; /* kernels: with nothing */
        ld_report(L, tv[0]->start_mark,
                  "kernels: expected a list of kernel entries (each starting with '- match:')");
        goto out;
    }
    for (yaml_node_item_t *it = tv[0]->data.sequence.items.start;
         it < tv[0]->data.sequence.items.top; it++) {
        struct xmt_entry *e = parse_entry(L, ld_node(L, *it));
        if (!e) continue;
        if (xmt_set_add(set, e)) {
            ld_report(L, ld_node(L, *it)->start_mark, "more than %d entries", XMT_MAX_ENTRIES);
            xmt_entry_destroy(e);
            break;
        }
    }
out:
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    L->doc = NULL;
}

static void load_file(ld *L, const char *path, struct xmt_policy_set *set)
{
    yaml_mark_t m0 = {0, 0, 0};
    L->file = path;
    FILE *f = fopen(path, "rb");
    if (!f) {
        ld_report(L, m0, "cannot open: %s", strerror(errno));
        return;
    }
    char *buf = malloc(XMT_MAX_FILE_BYTES + 1);
    if (!buf) {
        fclose(f);
        ld_report(L, m0, "out of memory");
        return;
    }
    size_t n = fread(buf, 1, XMT_MAX_FILE_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        ld_report(L, m0, "cannot read: %s", strerror(errno));
    else
        load_text(L, buf, n, set);
    free(buf);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int yaml_name(const char *n)
{
    size_t l = strlen(n);
    return n[0] != '.' &&
           ((l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml")));
}

static struct xmt_policy_set *new_set(void)
{
    struct xmt_policy_set *s = calloc(1, sizeof *s);
    if (s) pthread_mutex_init(&s->mu, NULL);
    return s;
}

int xmt_policy_load(const char *path, xmt_policy_set **out, xmt_diag_fn diag, void *ud)
{
    ld L;
    memset(&L, 0, sizeof L);
    L.diag = diag;
    L.ud = ud;
    L.file = path;
    struct xmt_policy_set *set = new_set();
    yaml_mark_t m0 = {0, 0, 0};
    if (out) *out = NULL;
    if (!set) {
        ld_report(&L, m0, "out of memory");
        return L.nerr;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        ld_report(&L, m0, "cannot open: %s", strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) {
            ld_report(&L, m0, "cannot open directory: %s", strerror(errno));
        } else {
            char **names = NULL;
            size_t n = 0, cap = 0;
            struct dirent *de;
            while ((de = readdir(d))) {
                if (!yaml_name(de->d_name)) continue;
                if (n == cap) {
                    cap = cap ? cap * 2 : 16;
                    char **nn = realloc(names, cap * sizeof *nn);
                    if (!nn) break;
                    names = nn;
                }
                size_t pl = strlen(path) + strlen(de->d_name) + 2;
                names[n] = malloc(pl);
                if (!names[n]) break;
                snprintf(names[n], pl, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/",
                         de->d_name);
                n++;
            }
            closedir(d);
            if (n) qsort(names, n, sizeof *names, cmp_str);
            for (size_t i = 0; i < n; i++) {
                load_file(&L, names[i], set);
                free(names[i]);
            }
            free(names);
        }
    } else {
        load_file(&L, path, set);
    }
    if (out)
        *out = set;
    else
        xmt_policy_free(set);
    return L.nerr;
}

int xmt_policy_load_string(const char *name, const char *text, size_t len, xmt_policy_set **out,
                           xmt_diag_fn diag, void *ud)
{
    ld L;
    memset(&L, 0, sizeof L);
    L.diag = diag;
    L.ud = ud;
    L.file = name;
    struct xmt_policy_set *set = new_set();
    if (out) *out = NULL;
    if (!set) {
        yaml_mark_t m0 = {0, 0, 0};
        ld_report(&L, m0, "out of memory");
        return L.nerr;
    }
    load_text(&L, text, len, set);
    if (out)
        *out = set;
    else
        xmt_policy_free(set);
    return L.nerr;
}

void xmt_policy_free(xmt_policy_set *set)
{
    if (!set) return;
    for (size_t i = 0; i < set->n; i++)
        xmt_entry_destroy(set->v[i]);
    struct xmt_spec *s = set->specs;
    while (s) {
        struct xmt_spec *nx = s->next;
        if (s->e) xmt_entry_destroy(s->e);
        free(s->sig);
        free(s);
        s = nx;
    }
    free(set->v);
    pthread_mutex_destroy(&set->mu);
    free(set);
}

size_t xmt_policy_count(const xmt_policy_set *set)
{
    return set ? set->n : 0;
}

const xmt_entry *xmt_policy_entry(const xmt_policy_set *set, size_t i)
{
    return (set && i < set->n) ? set->v[i] : NULL;
}
