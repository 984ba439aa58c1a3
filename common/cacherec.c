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
    const char *p, *end;
    char *out; /* where decoded text goes (the scratch buffer) */
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

/* A string at c->p (its opening quote), decoded into c->out; the decoded text, NULL when
 * it is not a valid JSON string. Decoding never makes text longer than its source. */
static const char *string(cursor *c)
{
    char *start = c->out, *o = c->out;
    c->p++;
    for (;;) {
        const char *q = c->p;
        while (q < c->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
            q++;
        memcpy(o, c->p, (size_t)(q - c->p));
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
    *o++ = 0;
    c->out = o;
    return start;
}

/* A number, true, false or null, copied into c->out as text; NULL when it is none. */
static const char *scalar(cursor *c)
{
    const char *s = c->p;
    while (c->p < c->end &&
           (isalnum((unsigned char)*c->p) || *c->p == '-' || *c->p == '+' || *c->p == '.'))
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
 * strings and scalars are checked as any other (decoded into scratch space that is then
 * given back). */
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
    NFIELDS
};
static const char *const field_names[NFIELDS] = {"v",     "device",   "kernel", "code",
                                                 "entry", "entry_fp", "key",    "key_text",
                                                 "index", "label",    "time_ms"};

/* The line's fields, by field_names (NULL: absent or not a scalar; the first of a
 * repeated key counts). 0, or -1 when the line is not one JSON object. */
static int parse_object(cursor *c, const char *f[NFIELDS])
{
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
            char *mark = c->out;
            const char *name = string(c);
            if (!name) return -1;
            int which = -1;
            for (int i = 0; i < NFIELDS; i++)
                if (!f[i] && strcmp(name, field_names[i]) == 0) which = i;
            c->out = mark; /* the name is no longer needed */
            ws(c);
            if (c->p >= c->end || *c->p++ != ':') return -1;
            ws(c);
            if (c->p >= c->end) return -1;
            if (*c->p == '{' || *c->p == '[') {
                char *m2 = c->out;
                if (skip_nested(c, 1) != 0) return -1;
                c->out = m2;
            } else {
                const char *v = *c->p == '"' ? string(c) : scalar(c);
                if (!v) return -1;
                if (which >= 0) f[which] = v;
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

/* 0 a record, -1 not a record, 1 a record of another format version. scratch has room
 * for 2 * len + 16 bytes. */
static int parse_line(const char *line, size_t len, char *scratch, xmt_cacherec *r)
{
    cursor c = {line, line + len, scratch};
    const char *f[NFIELDS];
    if (parse_object(&c, f) != 0) return -1;
    if (!f[F_V] || strtol(f[F_V], NULL, 10) != XMT_CACHEREC_VERSION) return f[F_DEVICE] ? 1 : -1;
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
    char *end;
    errno = 0;
    r->choice.index = strtol(index, &end, 10);
    if (*end || end == index || errno || r->choice.index < XMT_OWN_CONFIG) return -1;
    snprintf(r->choice.label, sizeof r->choice.label, "%s", f[F_LABEL] ? f[F_LABEL] : "");
    r->choice.time_ms = f[F_TIME] ? strtod(f[F_TIME], NULL) : 0;
    r->raw = line;
    r->raw_len = len;
    return 0;
}

/* One line (without its '\n'): a record for fn, a blank line, or a bad one counted. */
static void one_line(const char *line, size_t len, char *scratch,
                     void (*fn)(void *ud, const xmt_cacherec *r), void *ud, int *bad, int *old)
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
    int k = parse_line(line, len, scratch, &r);
    if (k == 0)
        fn(ud, &r);
    else if (k == 1 && old)
        ++*old;
    else
        ++*bad;
}

#define CHUNK 65536

int xmt_cacherec_read_at(int fd, uint64_t *pos, void (*fn)(void *ud, const xmt_cacherec *r),
                         void *ud, int *old)
{
    /* buf holds a chunk after the start of a line carried over from the last one (at most
     * MAX_LINE bytes: a longer line is only counted, never kept) */
    char *buf = malloc(CHUNK + XMT_CACHEREC_MAX_LINE + 2);
    char *scratch = malloc(2 * XMT_CACHEREC_MAX_LINE + 16);
    if (old) *old = 0;
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
                one_line(p, (size_t)(nl - p), scratch, fn, ud, &bad, old);
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
        one_line(buf, have, scratch, fn, ud, &bad, old);
    *pos = done;
    free(buf);
    free(scratch);
    return bad;
}

int xmt_cacherec_read_fd(int fd, void (*fn)(void *ud, const xmt_cacherec *r), void *ud, int *old)
{
    off_t at = lseek(fd, 0, SEEK_CUR);
    uint64_t pos = at > 0 ? (uint64_t)at : 0;
    return xmt_cacherec_read_at(fd, &pos, fn, ud, old);
}

int xmt_cacherec_read(const char *path, void (*fn)(void *ud, const xmt_cacherec *r), void *ud,
                      int *old)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    int bad = xmt_cacherec_read_fd(fd, fn, ud, old);
    close(fd);
    return bad;
}

char *xmt_cacherec_format(const xmt_cacherec *r)
{
    json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:f}", "v",
                          XMT_CACHEREC_VERSION, "device", r->device, "kernel", r->kernel, "code",
                          r->code, "entry", r->entry, "entry_fp", r->entry_fp, "key", r->key_hex,
                          "key_text", r->key_text, "index", (json_int_t)r->choice.index, "label",
                          r->choice.label, "time_ms", r->choice.time_ms);
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
