/* load_yaml.c - the loader's base: its messages ("file:line:col: ...", and ld_fail, which
 * abandons the entry being compiled) and its reading of YAML nodes: scalars, numbers,
 * booleans, names, and mappings with their keys checked (no duplicates, none unknown).
 */
#include "load_internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void ld_report(ld *L, yaml_mark_t m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(L, m, 0, fmt, ap);
    va_end(ap);
}

/* Reports at node n and abandons the current entry. */
__attribute__((noreturn)) void ld_fail(ld *L, const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(L, n->start_mark, 0, fmt, ap);
    va_end(ap);
    longjmp(L->jb, 1);
}

__attribute__((noreturn)) void ld_fail_col(ld *L, const yaml_node_t *n, size_t extra,
                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(L, n->start_mark, extra, fmt, ap);
    va_end(ap);
    longjmp(L->jb, 1);
}

void *ld_xcalloc(ld *L, const yaml_node_t *n, size_t a, size_t b)
{
    void *p = calloc(a ? a : 1, b ? b : 1);
    if (!p) ld_fail(L, n, "out of memory");
    return p;
}

/* ---- YAML helpers -------------------------------------------------------------------- */

yaml_node_t *ld_node(ld *L, int i)
{
    return yaml_document_get_node(L->doc, i);
}

const char *ld_kind_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

const char *ld_scalar(ld *L, const yaml_node_t *n, const char *what)
{
    if (n->type != YAML_SCALAR_NODE)
        ld_fail(L, n, "%s: expected a scalar, found %s", what, ld_kind_name(n));
    return (const char *)n->data.scalar.value;
}

int ld_is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return 0;
    const char *s = (const char *)n->data.scalar.value;
    return s[0] == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

/* Column offset of the first character of a scalar's text (after an opening quote). */
size_t ld_text_col(const yaml_node_t *n)
{
    return (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
            n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
               ? 1
               : 0;
}

int ld_parse_bool(const char *s, int *b)
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
int ld_num_base(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    return (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
}

int64_t ld_get_int(ld *L, const yaml_node_t *n, const char *what, int64_t lo, int64_t hi)
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

double ld_get_double(ld *L, const yaml_node_t *n, const char *what, double lo, double hi)
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
xmt_val ld_get_number(ld *L, const yaml_node_t *n, const char *what)
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

int ld_get_bool(ld *L, const yaml_node_t *n, const char *what)
{
    int b;
    const char *s = ld_scalar(L, n, what);
    if (ld_parse_bool(s, &b)) ld_fail(L, n, "%s: expected true or false, found '%s'", what, s);
    return b;
}

int ld_valid_ident(const char *s)
{
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return 0;
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || s[n] == '_' ||
              (s[n] >= '0' && s[n] <= '9')))
            return 0;
    return n < XMT_NAME_MAX;
}

/* Reports one unknown key, with the nearest allowed one when it is a likely typo. */
static void unknown_key(ld *L, const yaml_node_t *k, const char *what, const char *ks,
                        const char *const *allowed, size_t nallowed)
{
    char list[512];
    size_t at = 0, best = 9, bi = 0;
    list[0] = 0;
    for (size_t j = 0; j < nallowed && at < sizeof list; j++) {
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", j ? ", " : "", allowed[j]);
        size_t d = xmt_edit_distance(ks, allowed[j], 2);
        if (d < best) {
            best = d;
            bi = j;
        }
    }
    char hint[96] = "";
    if (best <= 2) snprintf(hint, sizeof hint, "; did you mean '%s'?", allowed[bi]);
    ld_report(L, k->start_mark, "%s: unknown key '%s' (expected one of: %s)%s", what, ks, list,
              hint);
}

/* Walks a mapping: every key must be a scalar, appear once, and be one of allowed (NULL:
 * any). Fills vals[i] with the value node of allowed[i], or NULL. */
void ld_map_keys(ld *L, const yaml_node_t *m, const char *what, const char *const *allowed,
                 size_t nallowed, yaml_node_t **vals)
{
    if (m->type != YAML_MAPPING_NODE)
        ld_fail(L, m, "%s: expected a mapping, found %s", what, ld_kind_name(m));
    for (size_t i = 0; i < nallowed; i++)
        vals[i] = NULL;
    int nunknown = 0;
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
            unknown_key(L, k, what, ks, allowed, nallowed);
            nunknown++;
            continue;
        }
        vals[i] = ld_node(L, p->value);
    }
    /* every unknown key said in one pass (five typos used to take five runs), then the
     * entry is dropped as for any other error */
    if (nunknown) longjmp(L->jb, 1);
}

/* Only the duplicate check, for mappings whose keys are user names. */
void ld_map_names(ld *L, const yaml_node_t *m, const char *what)
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
