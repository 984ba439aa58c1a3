/* types.c - the type names of policy files and signatures: dtypes ("f32") and C types
 * ("float*", "unsigned int", "c10::Half") to XMT_DT_* / XMT_PT_* and back. Used by the
 * loader (declared types), the matcher (demangled signatures) and evaluation (names and
 * element sizes in messages and buffer sizes).
 */
#include "types.h"

#include <stdio.h>
#include <string.h>

struct type_name {
    const char *name;
    int type;
};

/* The policy language's own spellings (docs/policy.md), never read from a signature. */
static const struct type_name policy_names[] = {
    {"i8", XMT_DT_I8},   {"i16", XMT_DT_I16},   {"i32", XMT_DT_I32}, {"i64", XMT_DT_I64},
    {"u8", XMT_DT_U8},   {"u16", XMT_DT_U16},   {"u32", XMT_DT_U32}, {"u64", XMT_DT_U64},
    {"f16", XMT_DT_F16}, {"bf16", XMT_DT_BF16}, {"f32", XMT_DT_F32}, {"f64", XMT_DT_F64},
    {"ptr", XMT_PT_PTR},
};

/* C and CUDA spellings, as libiberty writes them in signatures (and policies may too). */
static const struct type_name c_names[] = {
    {"char", XMT_DT_I8},
    {"signed char", XMT_DT_I8},
    {"int8_t", XMT_DT_I8},
    {"unsigned char", XMT_DT_U8},
    {"uint8_t", XMT_DT_U8},
    {"bool", XMT_DT_U8},
    {"short", XMT_DT_I16},
    {"int16_t", XMT_DT_I16},
    {"unsigned short", XMT_DT_U16},
    {"uint16_t", XMT_DT_U16},
    {"int", XMT_DT_I32},
    {"int32_t", XMT_DT_I32},
    {"unsigned", XMT_DT_U32},
    {"unsigned int", XMT_DT_U32},
    {"uint32_t", XMT_DT_U32},
    {"long", XMT_DT_I64},
    {"long long", XMT_DT_I64},
    {"int64_t", XMT_DT_I64},
    {"ptrdiff_t", XMT_DT_I64},
    {"unsigned long", XMT_DT_U64},
    {"unsigned long long", XMT_DT_U64},
    {"uint64_t", XMT_DT_U64},
    {"size_t", XMT_DT_U64},
    {"half", XMT_DT_F16},
    {"__half", XMT_DT_F16},
    {"c10::Half", XMT_DT_F16},
    {"bfloat16", XMT_DT_BF16},
    {"__nv_bfloat16", XMT_DT_BF16},
    {"c10::BFloat16", XMT_DT_BF16},
    {"float", XMT_DT_F32},
    {"double", XMT_DT_F64},
    {"wchar_t", XMT_DT_I32},
    {"char8_t", XMT_DT_U8},
    {"char16_t", XMT_DT_U16},
    {"char32_t", XMT_DT_U32},
};

#define NAMES(t) (sizeof(t) / sizeof(t)[0])

/* The type of a stripped name in table t (n rows), -1 when not there. */
static int lookup(const struct type_name *t, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, t[i].name) == 0) return t[i].type;
    return -1;
}

const char *xmt_dtype_name(xmt_dtype t)
{
    static const char *const n[] = {"i8",  "i16", "i32",  "i64", "u8",  "u16",  "u32",
                                    "u64", "f16", "bf16", "f32", "f64", "bytes"};
    return (unsigned)t <= XMT_DT_BYTES ? n[t] : "?";
}

size_t xmt_dtype_size(xmt_dtype t)
{
    static const unsigned char s[] = {1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 1};
    return (unsigned)t <= XMT_DT_BYTES ? s[t] : 0;
}

const char *xmt_type_name(unsigned t)
{
    if (t <= XMT_DT_BYTES) return xmt_dtype_name((xmt_dtype)t);
    if (t == XMT_PT_PTR) return "ptr";
    if (t == XMT_PT_BLOB) return "bytes";
    return "?";
}

/* Trims blanks and const/volatile qualifiers into buf. */
static void strip_type(const char *s, char *buf, size_t cap)
{
    char tmp[256];
    size_t n = 0;
    /* drop the words const / volatile / __restrict__ wherever they are */
    const char *p = s;
    while (*p && n + 1 < sizeof tmp) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ' && *p != '*')
            p++;
        size_t wl = (size_t)(p - w);
        int drop =
            (wl == 5 && !strncmp(w, "const", 5)) || (wl == 8 && !strncmp(w, "volatile", 8)) ||
            (wl == 12 && !strncmp(w, "__restrict__", 12)) ||
            (wl == 10 && !strncmp(w, "__restrict", 10)) || (wl == 8 && !strncmp(w, "restrict", 8));
        if (!drop && wl) {
            if (n && tmp[n - 1] != '*' && n + 1 < sizeof tmp) tmp[n++] = ' ';
            for (size_t i = 0; i < wl && n + 1 < sizeof tmp; i++)
                tmp[n++] = w[i];
        }
        while (*p == '*' && n + 1 < sizeof tmp) {
            while (n && tmp[n - 1] == ' ')
                n--;
            tmp[n++] = '*';
            p++;
        }
    }
    while (n && tmp[n - 1] == ' ')
        n--;
    tmp[n] = 0;
    snprintf(buf, cap, "%s", tmp);
}

int xmt_type_parse(const char *s, int *pointee, uint32_t *size)
{
    char t[256];
    strip_type(s, t, sizeof t);
    *pointee = -1;
    size_t n = strlen(t);
    if (n && t[n - 1] == '*') {
        while (n && t[n - 1] == '*')
            t[--n] = 0;
        int pe = lookup(policy_names, NAMES(policy_names), t);
        if (pe < 0) pe = lookup(c_names, NAMES(c_names), t);
        *pointee = pe == XMT_PT_PTR ? -1 : pe;
        *size = 8;
        return XMT_PT_PTR;
    }
    int ty = lookup(policy_names, NAMES(policy_names), t);
    if (ty < 0) ty = lookup(c_names, NAMES(c_names), t);
    if (ty >= 0) *size = ty == XMT_PT_PTR ? 8 : (uint32_t)xmt_dtype_size((xmt_dtype)ty);
    return ty;
}

int xmt_ctype_parse(const char *s)
{
    char t[256];
    strip_type(s, t, sizeof t);
    return lookup(c_names, NAMES(c_names), t);
}

int xmt_dtype_parse(const char *s)
{
    int pe;
    uint32_t sz;
    if (strcmp(s, "bytes") == 0) return XMT_DT_BYTES;
    int t = xmt_type_parse(s, &pe, &sz);
    return (t >= 0 && t <= XMT_DT_F64) ? t : -1;
}
