/*
 * cacherec: one record of the on-disk cache, read and written (see cacherec.h).
 */
#include "cacherec.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

void xmt_cacherec_hex(const uint8_t *key, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[key[i] >> 4];
        out[2 * i + 1] = digits[key[i] & 15];
    }
    out[2 * len] = 0;
}

/* ---- the reader: a small parser for the one shape a record has (a flat JSON object) ----
 * libyaml took ~7 us a line (a document tree per line); this reads a line in place, in one
 * pass, with no allocation but one scratch buffer per read. It accepts JSON: an object of
 * string keys; values that are strings (escapes decoded, \u0000 and lone surrogates refused),
 * numbers, true, false or null; a nested object or array is skipped (up to MAX_DEPTH deep),
 * so that a later format's extra fields do not make a line unreadable. */

#define MAX_DEPTH 16

typedef struct {
    char *p, *end; /* the line, a copy of it: strings are decoded in place */
    char *out;     /* where scalars' text goes (the rest of the scratch buffer) */
    size_t len;    /* the length of the text string() decoded last */
} cursor;

static void ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
        c->p++;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = p[i];
        unsigned d = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                     : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                     : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10)
                                              : 16u;
        if (d == 16) return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

static char *utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3f));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

/* Where the run of plain bytes at p ends: the first '"', '\\' or control byte, or end.
 * Eight bytes at a time while eight are left (a record's strings are mostly plain): a
 * byte b of the word v is flagged when b ^ '"' or b ^ '\\' is below 1 (zero) or b is below
 * 0x20 (the usual "has a byte below n" test: whether any byte is flagged is exact, and so
 * is the lowest flag; a byte from 0x80 up, of a UTF-8 sequence, is plain and not flagged). */
static char *plain_run(char *p, const char *end)
{
#ifdef __SSE2__
    /* sixteen at a time where SSE2 is (every x86-64): equal to '"' or '\\', or at most 0x1f */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  ctl = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                         _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v));
        int m = _mm_movemask_epi8(hit);
        if (m) return p + __builtin_ctz((unsigned)m);
        p += 16;
    }
#endif
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (end - p >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
        uint64_t hit = (((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v)) & highs;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* the lowest flag is exact (a borrow only runs to higher bytes): the first hit */
        if (hit) return p + (__builtin_ctzll(hit) >> 3);
#else
        if (hit) break;
#endif
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
        p++;
    return p;
}

/* A string at c->p (its opening quote), decoded in place: the decoded text, ended by a
 * NUL where its closing quote or an earlier byte was; NULL when it is not a valid JSON
 * string. Decoding never makes text longer than its source, so the text only moves
 * (towards its start) after an escape; a string without one is not copied at all. */
static const char *string(cursor *c)
{
    char *start = ++c->p, *o = start;
    for (;;) {
        char *q = plain_run(c->p, c->end);
        if (o != c->p) memmove(o, c->p, (size_t)(q - c->p));
        o += q - c->p;
        c->p = q;
        if (q >= c->end || (unsigned char)*q < 0x20) return NULL;
        if (*q == '"') break;
        if (q + 1 >= c->end) return NULL;
        char e = q[1];
        c->p = q + 2;
        switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (c->end - c->p < 4 || hex4(c->p, &cp) != 0 || cp == 0) return NULL;
            c->p += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff) return NULL;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u' ||
                    hex4(c->p + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
                    return NULL;
                c->p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            o = utf8(o, cp);
            break;
        }
        default: return NULL;
        }
    }
    c->p++; /* the closing quote */
    *o = 0; /* at the closing quote, or before it */
    c->len = (size_t)(o - start);
    return start;
}

/* A number, true, false or null, copied into c->out as text; NULL when it is none. */
static const char *scalar(cursor *c)
{
    const char *s = c->p;
    while (c->p < c->end &&
           ((*c->p >= '0' && *c->p <= '9') || (*c->p >= 'a' && *c->p <= 'z') ||
            (*c->p >= 'A' && *c->p <= 'Z') || *c->p == '-' || *c->p == '+' || *c->p == '.'))
        c->p++;
    size_t n = (size_t)(c->p - s);
    if (n == 0) return NULL;
    if (!((n == 4 && !memcmp(s, "true", 4)) || (n == 5 && !memcmp(s, "false", 5)) ||
          (n == 4 && !memcmp(s, "null", 4)))) {
        /* JSON's number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
        const char *q = s, *e = c->p;
        if (q < e && *q == '-') q++;
        if (q < e && *q == '0')
            q++;
        else if (q < e && *q >= '1' && *q <= '9')
            while (q < e && isdigit((unsigned char)*q))
                q++;
        else
            return NULL;
        if (q < e && *q == '.') {
            if (++q >= e || !isdigit((unsigned char)*q)) return NULL;
            while (q < e && isdigit((unsigned char)*q))
                q++;
        }
        if (q < e && (*q == 'e' || *q == 'E')) {
            q++;
            if (q < e && (*q == '+' || *q == '-')) q++;
            if (q >= e || !isdigit((unsigned char)*q)) return NULL;
            while (q < e && isdigit((unsigned char)*q))
                q++;
        }
        if (q != e) return NULL;
    }
    char *o = c->out;
    memcpy(o, s, n);
    o[n] = 0;
    c->out += n + 1;
    return o;
}

/* Skips a nested object or array at c->p; 0, or -1 when it is malformed or too deep. Its
 * strings and scalars are checked as any other (strings decoded in place, scalars into
 * scratch space that is then given back). */
static int skip_nested(cursor *c, int depth)
{
    if (depth > MAX_DEPTH) return -1;
    char close = *c->p == '{' ? '}' : ']';
    int object = close == '}';
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 0;
    }
    char *mark = c->out;
    for (;;) {
        ws(c);
        if (object) {
            if (c->p >= c->end || *c->p != '"' || !string(c)) return -1;
            ws(c);
            if (c->p >= c->end || *c->p++ != ':') return -1;
            ws(c);
        }
        if (c->p >= c->end) return -1;
        if (*c->p == '{' || *c->p == '[') {
            if (skip_nested(c, depth + 1) != 0) return -1;
        } else if (!(*c->p == '"' ? string(c) : scalar(c))) {
            return -1;
        }
        c->out = mark;
        ws(c);
        if (c->p >= c->end) return -1;
        if (*c->p == ',') {
            c->p++;
            continue;
        }
        if (*c->p++ != close) return -1;
        return 0;
    }
}

enum {
    F_V,
    F_DEVICE,
    F_KERNEL,
    F_CODE,
    F_ENTRY,
    F_ENTRY_FP,
    F_KEY,
    F_KEY_TEXT,
    F_INDEX,
    F_LABEL,
    F_TIME,
    F_DATA,
    F_OUTCOME,
    F_WHY,
    F_ORIGIN,
    F_RECHECKED,
    F_RECHECKS,
    F_FAULTS,
    F_DECIDED,
    NFIELDS
};
/* The fields that are JSON strings in a record (bit i: field i); the others are numbers. */
#define TEXT_FIELDS                                                                                \
    (1u << F_DEVICE | 1u << F_KERNEL | 1u << F_CODE | 1u << F_ENTRY | 1u << F_ENTRY_FP |           \
     1u << F_KEY | 1u << F_KEY_TEXT | 1u << F_LABEL | 1u << F_DATA | 1u << F_OUTCOME |             \
     1u << F_WHY | 1u << F_ORIGIN | 1u << F_FAULTS | 1u << F_DECIDED)
static const char *const field_names[NFIELDS] = {
    "v",        "device",    "kernel",   "code",    "entry",  "entry_fp", "key",
    "key_text", "index",     "label",    "time_ms", "data",   "outcome",  "why",
    "origin",   "rechecked", "rechecks", "faults",  "decided"};

/* The field a name of len bytes is, -1 for another: by its length and first byte before
 * one memcmp (a name compare per field and line was a tenth of the load's work). */
static int field_of(const char *name, size_t len)
{
    int i;
    switch (len) {
    case 1: i = F_V; break;
    case 3: i = name[0] == 'k' ? F_KEY : F_WHY; break;
    case 4: i = name[0] == 'c' ? F_CODE : F_DATA; break;
    case 5: i = name[0] == 'e' ? F_ENTRY : name[0] == 'i' ? F_INDEX : F_LABEL; break;
    case 6:
        i = name[0] == 'd'   ? F_DEVICE
            : name[0] == 'k' ? F_KERNEL
            : name[0] == 'f' ? F_FAULTS
                             : F_ORIGIN;
        break;
    case 7: i = name[0] == 't' ? F_TIME : name[0] == 'd' ? F_DECIDED : F_OUTCOME; break;
    case 9: i = F_RECHECKED; break;
    case 8: i = name[0] == 'e' ? F_ENTRY_FP : name[0] == 'k' ? F_KEY_TEXT : F_RECHECKS; break;
    default: return -1;
    }
    return memcmp(name, field_names[i], len) == 0 ? i : -1;
}

/* The line's fields, by field_names (NULL: absent or not a scalar; the first of a
 * repeated key counts), and in *strs bit i set when field i is a JSON string. 0, or -1 when the
 * line is not one JSON object. */
static int parse_object(cursor *c, const char *f[NFIELDS], unsigned *strs)
{
    *strs = 0;
    for (int i = 0; i < NFIELDS; i++)
        f[i] = NULL;
    ws(c);
    if (c->p >= c->end || *c->p++ != '{') return -1;
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
    } else {
        for (;;) {
            ws(c);
            if (c->p >= c->end || *c->p != '"') return -1;
            const char *name = string(c);
            if (!name) return -1;
            int which = field_of(name, c->len);
            if (which >= 0 && f[which]) which = -1; /* a repeat: the first counts */
            ws(c);
            if (c->p >= c->end || *c->p++ != ':') return -1;
            ws(c);
            if (c->p >= c->end) return -1;
            if (*c->p == '{' || *c->p == '[') {
                char *m2 = c->out;
                if (skip_nested(c, 1) != 0) return -1;
                c->out = m2;
            } else {
                int str = *c->p == '"';
                const char *v = str ? string(c) : scalar(c);
                if (!v) return -1;
                if (which >= 0) {
                    f[which] = v;
                    if (str) *strs |= 1u << which;
                }
            }
            ws(c);
            if (c->p >= c->end) return -1;
            if (*c->p == ',') {
                c->p++;
                continue;
            }
            if (*c->p++ != '}') return -1;
            break;
        }
    }
    ws(c);
    return c->p == c->end ? 0 : -1;
}

/* The line as xmt_cacherec_format writes it (jansson, compact, in this order, strings
 * without escapes): its fields straight from the separators between them, a third of
 * what the general parser costs. 0 with f and *strs as parse_object gives them; -1 for
 * any other line (parse_object then reads it from a fresh copy: this one may have NULs
 * written in). */
static int writers_shape(cursor *c, const char *f[NFIELDS], unsigned *strs)
{
#define LIT(s) (s), sizeof(s) - 1
    static const struct {
        int field;
        const char *sep; /* what comes before the field's value */
        size_t len;
    } shape[] = {
        {F_V, LIT("{\"v\":")},
        {F_DEVICE, LIT(",\"device\":\"")},
        {F_KERNEL, LIT("\",\"kernel\":\"")},
        {F_CODE, LIT("\",\"code\":\"")},
        {F_ENTRY, LIT("\",\"entry\":\"")},
        {F_ENTRY_FP, LIT("\",\"entry_fp\":\"")},
        {F_KEY, LIT("\",\"key\":\"")},
        {F_KEY_TEXT, LIT("\",\"key_text\":\"")},
        {F_INDEX, LIT("\",\"index\":")},
        {F_LABEL, LIT(",\"label\":\"")},
        {F_TIME, LIT("\",\"time_ms\":")},
        {F_DATA, LIT(",\"data\":\"")},
    };
#undef LIT
    char *open = NULL; /* the opening quote's byte after the last string value, if any */
    for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++) {
        if ((size_t)(c->end - c->p) < shape[i].len || memcmp(c->p, shape[i].sep, shape[i].len))
            return -1;
        if (open) *open = 0; /* the last string ends here: its closing quote was checked */
        c->p += shape[i].len;
        int fi = shape[i].field;
        if (TEXT_FIELDS >> fi & 1) {
            char *q = plain_run(c->p, c->end);
            if (q >= c->end || *q != '"') return -1; /* an escape, a control byte, the end */
            f[fi] = c->p;
            c->p = q;
            open = q;
        } else {
            if (!(f[fi] = scalar(c))) return -1;
            open = NULL;
        }
    }
    /* the last field is a string: its closing quote, then the object's end */
    if (!open || c->end - c->p != 2 || c->p[1] != '}') return -1;
    *open = 0;
    *strs = TEXT_FIELDS;
    return 0;
}

/* An integer of at most 18 digits (and an optional '-') into *v: 0, or -1 when s is not
 * one (a fraction, an exponent, more digits: no index or version is like that). strtol
 * was a fiftieth of the load's work. */
static int small_int(const char *s, long *v)
{
    int neg = *s == '-';
    s += neg;
    long n = 0;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        if (++digits > 18)
            return -1;
        else
            n = n * 10 + (*s - '0');
    if (*s || digits == 0) return -1;
    *v = neg ? -n : n;
    return 0;
}

/* A JSON number's text (scalar() checked its form) as a double, correctly rounded: a
 * plain decimal of at most 15 significant digits and 22 decimals is exact as an integer
 * divided by an exact power of ten (one rounding); anything else goes to strtod. */
static double number(const char *s)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *q = s;
    int neg = *q == '-';
    q += neg;
    uint64_t m = 0;
    int sig = 0, frac = 0, dot = 0;
    for (;; q++) {
        if (*q >= '0' && *q <= '9') {
            if (m || *q != '0') sig++;
            m = m * 10 + (uint64_t)(*q - '0');
            frac += dot;
            if (sig > 15 || frac > 22) return strtod(s, NULL);
        } else if (*q == '.' && !dot) {
            dot = 1;
        } else {
            break;
        }
    }
    if (*q) return strtod(s, NULL); /* an exponent */
    double d = (double)m / p10[frac];
    return neg ? -d : d;
}

/* An optional text field into out (cap bytes, cut at a character boundary); "" when absent. */
static void copy_text(char *out, size_t cap, const char *v)
{
    size_t n = v ? strnlen(v, cap - 1) : 0;
    while (n > 0 && n == cap - 1 && ((unsigned char)v[n] & 0xc0) == 0x80)
        n--; /* not in the middle of a UTF-8 sequence */
    memcpy(out, v ? v : "", n);
    out[n] = 0;
}

/* scratch: the line's copy (parsed in place) and its scalars' text */
/* Whether s is the writer's shape of a list of indices ("0 35": digits, single spaces, none
 * first or last), or "". */
static int index_list(const char *s)
{
    size_t n = strlen(s);
    return !n ||
           (strspn(s, "0123456789 ") == n && s[0] != ' ' && s[n - 1] != ' ' && !strstr(s, "  "));
}

int xmt_cacherec_parse(const char *line, size_t len, char *scratch, xmt_cacherec *r)
{
    if (len > XMT_CACHEREC_MAX_LINE) return -1;
    memcpy(scratch, line, len);
    scratch[len] = 0;
    cursor c = {scratch, scratch + len, scratch + len + 1, 0};
    const char *f[NFIELDS] = {0}; /* writers_shape sets only the fields it knows */
    unsigned strs;
    if (writers_shape(&c, f, &strs) != 0) {
        /* not byte for byte what the writer makes: the general parser, on a fresh copy */
        memcpy(scratch, line, len);
        c = (cursor){scratch, scratch + len, scratch + len + 1, 0};
        if (parse_object(&c, f, &strs) != 0) return -1;
    }
    /* a version that is not a string is an integer: anything else (a fraction, an
     * exponent, more digits than a version has, true, null) makes the line no record */
    long v = 0;
    int v_number = f[F_V] && !(strs & 1u << F_V);
    if (v_number && small_int(f[F_V], &v) != 0) return -1;
    if (!v_number || v != XMT_CACHEREC_VERSION)
        return !f[F_DEVICE] ? -1 : v_number && v > XMT_CACHEREC_VERSION ? 2 : 1;
    /* text fields are strings, numbers are not: the writer's shape and nothing else */
    for (int i = 0; i < NFIELDS; i++)
        if (f[i] && ((strs >> i & 1) != (TEXT_FIELDS >> i & 1))) return -1;
    r->device = f[F_DEVICE];
    r->kernel = f[F_KERNEL];
    r->code = f[F_CODE];
    r->entry = f[F_ENTRY];
    r->entry_fp = f[F_ENTRY_FP];
    r->key_hex = f[F_KEY];
    r->key_text = f[F_KEY_TEXT] ? f[F_KEY_TEXT] : "";
    const char *index = f[F_INDEX];
    if (!r->device || !r->kernel || !r->code || !r->entry || !r->entry_fp || !r->key_hex || !index)
        return -1;
    if (small_int(index, &r->choice.index) != 0 || r->choice.index < XMT_OWN_CONFIG) return -1;
    const char *label = f[F_LABEL] ? f[F_LABEL] : "";
    size_t ll = strnlen(label, sizeof r->choice.label - 1);
    memcpy(r->choice.label, label, ll);
    r->choice.label[ll] = 0;
    r->choice.time_ms = f[F_TIME] ? number(f[F_TIME]) : 0;
    /* data is optional (records written before it existed load as before); anything but
     * 16 hex digits reads as no digest */
    const char *data = f[F_DATA] ? f[F_DATA] : "";
    r->choice.data[0] = 0;
    if (strlen(data) == 16 && strspn(data, "0123456789abcdef") == 16)
        memcpy(r->choice.data, data, 17);
    /* the outcome's fields are optional too (a timed decision has none); an outcome names a
     * decision other than a winner, so it goes with the program's own config only */
    copy_text(r->choice.outcome, sizeof r->choice.outcome, f[F_OUTCOME]);
    copy_text(r->choice.why, sizeof r->choice.why, f[F_WHY]);
    copy_text(r->choice.origin, sizeof r->choice.origin, f[F_ORIGIN]);
    if (r->choice.outcome[0] && r->choice.index != XMT_OWN_CONFIG) return -1;
    long rc = 0;
    if (f[F_RECHECKED] && (small_int(f[F_RECHECKED], &rc) != 0 || rc < 0 || rc > 1000000))
        return -1;
    r->choice.rechecked = (int)rc;
    rc = 0;
    if (f[F_RECHECKS] && (small_int(f[F_RECHECKS], &rc) != 0 || rc < 0 || rc > 1000000)) return -1;
    r->choice.rechecks = (int)rc;
    /* optional, and only advice (a later process skips what faulted): a value not of the
     * writer's shape is dropped, not the record */
    r->choice.faults[0] = 0;
    if (f[F_FAULTS] && strlen(f[F_FAULTS]) < sizeof r->choice.faults) /* never a cut list */
        copy_text(r->choice.faults, sizeof r->choice.faults, f[F_FAULTS]);
    if (!index_list(r->choice.faults)) r->choice.faults[0] = 0;
    r->choice.decided[0] = 0; /* a partial record's: advice of the same kind */
    if (f[F_DECIDED] && strlen(f[F_DECIDED]) < sizeof r->choice.decided)
        copy_text(r->choice.decided, sizeof r->choice.decided, f[F_DECIDED]);
    if (!index_list(r->choice.decided)) r->choice.decided[0] = 0;
    r->raw = line;
    r->raw_len = len;
    r->offset = 0;
    return 0;
}

/* One line (without its '\n', at file offset at): a record for fn, a blank line, or a
 * bad one counted. */
static void one_line(const char *line, size_t len, uint64_t at, char *scratch,
                     void (*fn)(void *ud, const xmt_cacherec *r), void *ud, int *bad,
                     xmt_cacherec_other *old)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
        i++;
    if (i == len) return;              /* blank */
    if (len > XMT_CACHEREC_MAX_LINE) { /* no record is that long: not parsed at all */
        ++*bad;
        return;
    }
    xmt_cacherec r;
    int k = xmt_cacherec_parse(line, len, scratch, &r);
    if (k == 0) {
        r.offset = at;
        fn(ud, &r);
    } else if (k == 1 || k == 2) {
        if (old && k == 1) old->older++;
        if (old && k == 2) old->newer++;
    } else
        ++*bad;
}

#define CHUNK 65536

int xmt_cacherec_read_at(int fd, uint64_t *pos, void (*fn)(void *ud, const xmt_cacherec *r),
                         void *ud, xmt_cacherec_other *old)
{
    /* buf holds a chunk after the start of a line carried over from the last one (at most
     * MAX_LINE bytes: a longer line is only counted, never kept) */
    char *buf = malloc(CHUNK + XMT_CACHEREC_MAX_LINE + 2);
    char *scratch = malloc(XMT_CACHEREC_SCRATCH(XMT_CACHEREC_MAX_LINE));
    if (old) *old = (xmt_cacherec_other){0, 0};
    if (!buf || !scratch) {
        free(buf);
        free(scratch);
        errno = ENOMEM;
        return -1;
    }
    int bad = 0;
    size_t have = 0;      /* bytes of an unfinished line at buf[0..have) */
    int too_long = 0;     /* the unfinished line is over the cap (its start was dropped) */
    uint64_t off = *pos;  /* where the next read starts */
    uint64_t done = *pos; /* the offset after the last '\n' seen */
    for (;;) {
        ssize_t n = pread(fd, buf + have, CHUNK, (off_t)off);
        if (n < 0) {
            if (errno == EINTR) continue;
            free(buf);
            free(scratch);
            return -1;
        }
        if (n == 0) break;
        uint64_t base = off - have; /* the file offset of buf[0] */
        off += (uint64_t)n;
        char *p = buf, *end = buf + have + n, *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
            if (too_long)
                bad++;
            else
                one_line(p, (size_t)(nl - p), base + (uint64_t)(p - buf), scratch, fn, ud, &bad,
                         old);
            too_long = 0;
            done = base + (uint64_t)(nl + 1 - buf);
            p = nl + 1;
        }
        have = (size_t)(end - p);
        if (have > XMT_CACHEREC_MAX_LINE) { /* keep none of it: it is counted at its end */
            too_long = 1;
            have = 0;
        } else {
            memmove(buf, p, have);
        }
    }
    /* What is left has no '\n': a killed writer's partial line, counted, and not
     * consumed (the next record is appended after a '\n' that ends it). */
    if (too_long)
        bad++;
    else if (have)
        one_line(buf, have, off - have, scratch, fn, ud, &bad, old);
    *pos = done;
    free(buf);
    free(scratch);
    return bad;
}

int xmt_cacherec_read_fd(int fd, void (*fn)(void *ud, const xmt_cacherec *r), void *ud,
                         xmt_cacherec_other *old)
{
    off_t at = lseek(fd, 0, SEEK_CUR);
    uint64_t pos = at > 0 ? (uint64_t)at : 0;
    return xmt_cacherec_read_at(fd, &pos, fn, ud, old);
}

int xmt_cacherec_read(const char *path, void (*fn)(void *ud, const xmt_cacherec *r), void *ud,
                      xmt_cacherec_other *old)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    int bad = xmt_cacherec_read_fd(fd, fn, ud, old);
    close(fd);
    return bad;
}

char *xmt_cacherec_format(const xmt_cacherec *r)
{
    json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:f, s:s}", "v",
                          XMT_CACHEREC_VERSION, "device", r->device, "kernel", r->kernel, "code",
                          r->code, "entry", r->entry, "entry_fp", r->entry_fp, "key", r->key_hex,
                          "key_text", r->key_text, "index", (json_int_t)r->choice.index, "label",
                          r->choice.label, "time_ms", r->choice.time_ms, "data", r->choice.data);
    /* the optional fields, only when set: a timed decision's line is what it always was */
    const xmt_choice *c = &r->choice;
    if (j && c->outcome[0]) json_object_set_new(j, "outcome", json_string(c->outcome));
    if (j && c->why[0]) json_object_set_new(j, "why", json_string(c->why));
    if (j && c->origin[0]) json_object_set_new(j, "origin", json_string(c->origin));
    if (j && c->rechecked > 0) json_object_set_new(j, "rechecked", json_integer(c->rechecked));
    if (j && c->rechecks > 0) json_object_set_new(j, "rechecks", json_integer(c->rechecks));
    if (j && c->faults[0]) json_object_set_new(j, "faults", json_string(c->faults));
    if (j && c->decided[0]) json_object_set_new(j, "decided", json_string(c->decided));
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text) return NULL;
    size_t len = strlen(text);
    char *line = realloc(text, len + 2);
    if (!line) {
        free(text);
        return NULL;
    }
    line[len] = '\n';
    line[len + 1] = 0;
    return line;
}

char *xmt_cacherec_identity(const xmt_cacherec *r)
{
    const char *f[6] = {r->device, r->kernel, r->code, r->entry, r->entry_fp, r->key_hex};
    size_t n = 6;
    for (int i = 0; i < 6; i++)
        n += strlen(f[i]);
    char *id = malloc(n);
    if (id) snprintf(id, n, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", f[0], f[1], f[2], f[3], f[4], f[5]);
    return id;
}

void xmt_choice_outcome(xmt_choice *c, const char *outcome, const char *why)
{
    *c = (xmt_choice){.index = XMT_OWN_CONFIG};
    snprintf(c->outcome, sizeof c->outcome, "%s", outcome);
    /* cut to the record's room (at a character boundary, as cacherec reads it back): only
     * a reason longer than the room is cut, so why[n] is read only within its string */
    size_t n = why ? strlen(why) : 0;
    if (n >= sizeof c->why) {
        n = sizeof c->why - 1;
        while (n > 0 && ((unsigned char)why[n] & 0xc0) == 0x80)
            n--;
    }
    if (n) memcpy(c->why, why, n);
    c->why[n] = 0;
}
