/* signature.c - the one reader of demangled C++ signatures (xmt_sig_read, xmt_policy.h).
 *
 * The shim (which parameters are pointers, which scalars discover records), the matcher
 * (match: sees the name, untyped params: take their types from the list) and the
 * command (discover's stub, the report's short names) all read libiberty's text through
 * this file, so that they agree on every name. The text is C++ as libiberty prints it:
 * an optional return type, a qualified name whose template arguments may hold anything
 * (non-type arguments "(char)1", lambdas "{lambda(float)#1}", "(anonymous namespace)",
 * operator names "operator<" and "operator()"), the parameter list, then cv/ref
 * qualifiers and clone suffixes. Parentheses always balance in it; angle brackets do not
 * where an operator's name holds one, so every scan steps over operator names.
 */
#include "types.h"
#include "xmt_policy.h"

#include <ctype.h>
#include <string.h>

static int is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Past the operator's symbol when p starts the word "operator" (s: where the text
 * begins, e: where it ends), else p. "operator()" and "operator[]" take their brackets,
 * "operator<" "operator->*" "operator," their run of symbol characters; "operator new"
 * and conversion operators are words, which need nothing skipped. */
static const char *skip_operator(const char *s, const char *p, const char *e)
{
    if (e - p < 8 || strncmp(p, "operator", 8) != 0 || (p > s && is_ident(p[-1])) ||
        (p + 8 < e && is_ident(p[8])))
        return p;
    p += 8;
    if (e - p >= 2 && ((p[0] == '(' && p[1] == ')') || (p[0] == '[' && p[1] == ']'))) return p + 2;
    while (p < e && strchr("+-*/%^&|~!=<>,", *p))
        p++;
    return p;
}

/* The bracket depth change of *p within [s, e): ( [ { < open, ) ] } > close, "->" is no
 * bracket. */
static int bracket(const char *s, const char *p)
{
    switch (*p) {
    case '(':
    case '[':
    case '{':
    case '<': return 1;
    case ')':
    case ']':
    case '}': return -1;
    case '>': return (p > s && p[-1] == '-') ? 0 : -1;
    default: return 0;
    }
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && isspace((unsigned char)**b))
        (*b)++;
    while (*e > *b && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* Does [b, e) end with the word w (preceded by a blank or a parenthesis)? */
static int ends_with_word(const char *b, const char *e, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(e - b) <= n) return 0;
    const char *at = e - n; /* after the check above: at > b */
    return !strncmp(at, w, n) && (isspace((unsigned char)at[-1]) || at[-1] == ')');
}

/* The end of the parameter list: e without trailing " [clone .cold]" suffixes and the
 * qualifiers of a member function (const, volatile, &, &&, noexcept), when what is left
 * ends with ')'; else e as it was. */
static const char *list_end(const char *b, const char *e)
{
    static const char *const quals[] = {"const", "volatile", "&&",
                                        "&",     "noexcept", "transaction_safe"};
    const char *q = e;
    for (;;) {
        trim(&b, &q);
        if (q > b && q[-1] == ']') {
            const char *o = q - 1;
            while (o > b && *o != '[')
                o--;
            if (*o == '[' && !strncmp(o, "[clone ", 7)) {
                q = o;
                continue;
            }
        }
        size_t i = 0;
        while (i < sizeof quals / sizeof quals[0] && !ends_with_word(b, q, quals[i]))
            i++;
        if (i == sizeof quals / sizeof quals[0]) break;
        q -= strlen(quals[i]);
    }
    return q > b && q[-1] == ')' ? q : e;
}

/* The '(' that opens the group closed at close (the last character), or NULL. */
static const char *open_of(const char *b, const char *close)
{
    int depth = 0;
    for (const char *p = close + 1; p-- > b;) {
        depth += (*p == ')') - (*p == '(');
        if (depth == 0) return p;
    }
    return NULL;
}

/* The name in [b, e) (what precedes the parameter list): after the last blank at the top
 * level, which ends the return type; an operator's name may hold blanks of its own
 * ("operator new", "operator unsigned int", "operator< <int>"). */
static const char *name_start(const char *b, const char *e)
{
    const char *start = b;
    int depth = 0;
    for (const char *p = b; p < e; p++) {
        const char *q = skip_operator(b, p, e);
        if (q != p) {
            if (depth == 0) break;
            p = q - 1;
            continue;
        }
        depth += bracket(b, p);
        if (depth < 0) depth = 0;
        if (depth == 0 && *p == ' ') start = p + 1;
    }
    return start;
}

/* The scalar class of a type without pointer or reference: INT, FLOAT or STRUCT. */
static void classify_scalar(const char *b, const char *e, xmt_sig_param *o)
{
    char t[256];
    size_t n = (size_t)(e - b) < sizeof t ? (size_t)(e - b) : sizeof t - 1;
    memcpy(t, b, n);
    t[n] = 0;
    int dt = xmt_ctype_parse(t);
    o->cls = XMT_SIG_STRUCT;
    if (dt >= XMT_DT_I8 && dt <= XMT_DT_U64) {
        o->cls = XMT_SIG_INT;
        o->is_signed = dt <= XMT_DT_I64;
    } else if (dt >= XMT_DT_F16 && dt <= XMT_DT_F64) {
        o->cls = XMT_SIG_FLOAT;
    } else if (!strcmp(t, "__int128") || !strcmp(t, "unsigned __int128")) {
        o->cls = XMT_SIG_INT;
        o->is_signed = t[0] == '_';
        o->bytes = 16;
        return;
    } else if (!strcmp(t, "long double") || !strcmp(t, "__float128")) {
        o->cls = XMT_SIG_FLOAT;
        o->bytes = 16;
        return;
    }
    if (o->cls != XMT_SIG_STRUCT) {
        o->dtype = dt;
        o->bytes = (unsigned)xmt_dtype_size((xmt_dtype)dt);
    }
}

/* A parenthesised group at the type's top level, [g, ge) its inside, [after, e) what
 * follows it: "(*)(int)" a function pointer, "(*) [4]" a pointer to an array, "(A::*)"
 * a member pointer. Returns the class, or UNKNOWN when the group is none of those
 * ("(anonymous namespace)::Foo"). */
static xmt_sig_class group_class(const char *g, const char *ge, const char *after, const char *e)
{
    trim(&g, &ge);
    trim(&after, &e);
    if (g == ge) return XMT_SIG_UNKNOWN;
    for (const char *p = g; p + 2 < ge; p++)
        if (p[0] == ':' && p[1] == ':' && p[2] == '*') return XMT_SIG_STRUCT;
    if (*g != '*' && *g != '&') return XMT_SIG_UNKNOWN;
    const char *r = g + 1; /* "* const", "* __restrict": a single pointer or reference */
    while (r < ge && (*r == ' ' || is_ident(*r)))
        r++;
    if (r == ge && after < e && *after == '(') return XMT_SIG_FUNCPTR;
    return XMT_SIG_POINTER;
}

/* The dtype a pointer or reference type [b, e) points to when that is one scalar, the
 * indirection starting at star: "float const* __restrict" and "double const&" have one,
 * "float**" and "float*&" none (-1). */
static int pointee(const char *b, const char *star, const char *e)
{
    char ind[4];
    size_t n = 0;
    for (const char *p = star; p < e; p++) {
        if (*p == '*' || *p == '&') {
            if (n + 1 >= sizeof ind) return -1;
            ind[n++] = *p;
        } else if (*p != ' ' && !is_ident(*p)) {
            return -1;
        }
    }
    ind[n] = 0;
    if (strcmp(ind, "*") && strcmp(ind, "&") && strcmp(ind, "&&")) return -1;
    char t[256];
    n = (size_t)(star - b) < sizeof t ? (size_t)(star - b) : sizeof t - 1;
    memcpy(t, b, n);
    t[n] = 0;
    return xmt_ctype_parse(t);
}

/* Classifies one parameter's type [b, e) (trimmed) into *o. */
static void classify(const char *b, const char *e, xmt_sig_param *o)
{
    o->text = b;
    o->len = (size_t)(e - b);
    o->cls = XMT_SIG_UNKNOWN;
    o->dtype = -1;
    o->bytes = 0;
    o->is_signed = 0;
    if (b == e || (e - b == 3 && !strncmp(b, "...", 3))) return;
    int depth = 0;
    const char *star = NULL, *group = NULL, *group_end = NULL;
    for (const char *p = b; p < e; p++) {
        const char *q = skip_operator(b, p, e);
        if (q != p) {
            p = q - 1;
            continue;
        }
        if (depth == 0 && (*p == '&' || *p == '*')) {
            if (*p == '*' && p - b >= 2 && p[-1] == ':' && p[-2] == ':') {
                o->cls = XMT_SIG_STRUCT; /* "int A::*": a member pointer */
                return;
            }
            if (!star) star = p;
        }
        if (depth == 0 && *p == '(' && !group) group = p;
        depth += bracket(b, p);
        if (depth < 0) depth = 0;
        if (depth == 0 && *p == ')' && group && !group_end) group_end = p;
    }
    if (group && group_end) {
        xmt_sig_class c = group_class(group + 1, group_end, group_end + 1, e);
        if (c != XMT_SIG_UNKNOWN) {
            o->cls = c;
            o->bytes = c == XMT_SIG_STRUCT ? 0 : 8;
            return;
        }
    }
    if (star) {
        o->cls = XMT_SIG_POINTER;
        o->bytes = 8;
        o->dtype = pointee(b, star, e);
        return;
    }
    classify_scalar(b, e, o);
}

/* Splits the list's inside [b, e) at its top-level commas into params (up to cap).
 * Returns the number of parameters ("" and "void" have none). */
static int split(const char *b, const char *e, xmt_sig_param *params, size_t cap)
{
    trim(&b, &e);
    if (b == e || (e - b == 4 && !strncmp(b, "void", 4))) return 0;
    int n = 0, depth = 0;
    const char *s = b;
    for (const char *p = b;; p++) {
        if (p == e || (depth == 0 && *p == ',')) {
            const char *ts = s, *te = p;
            trim(&ts, &te);
            if ((size_t)n < cap) classify(ts, te, &params[n]);
            n++;
            if (p == e) break;
            s = p + 1;
            continue;
        }
        const char *q = skip_operator(b, p, e);
        if (q != p) {
            p = q - 1;
            continue;
        }
        depth += bracket(b, p);
        if (depth < 0) depth = 0;
    }
    return n;
}

int xmt_sig_read(const char *demangled, xmt_sig *sig, xmt_sig_param *params, size_t cap)
{
    const char *b = demangled ? demangled : "", *e = b + strlen(b);
    trim(&b, &e);
    sig->name = b;
    sig->name_len = (size_t)(e - b);
    sig->list = NULL;
    sig->list_len = 0;
    sig->nparams = -1;
    const char *le = list_end(b, e);
    if (le == b || le[-1] != ')') return -1;
    const char *open = open_of(b, le - 1);
    if (!open || open == b) return -1;
    const char *ne = open, *nb = b;
    trim(&nb, &ne);
    nb = name_start(nb, ne);
    sig->name = nb;
    sig->name_len = (size_t)(ne - nb);
    sig->list = open;
    sig->list_len = (size_t)(le - open);
    sig->nparams = split(open + 1, le - 1, params, params ? cap : 0);
    return sig->nparams;
}

size_t xmt_sig_name(const char *demangled, char *buf, size_t cap)
{
    xmt_sig s;
    xmt_sig_read(demangled, &s, NULL, 0);
    if (cap) {
        size_t n = s.name_len < cap ? s.name_len : cap - 1;
        memcpy(buf, s.name, n);
        buf[n] = 0;
    }
    return s.name_len;
}
