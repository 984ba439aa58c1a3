/* test_signature.c - Check unit tests of the signature reader (policy/signature.c).
 *
 * The cases are data: signatures.tsv, one awkward name a line (see its header for the
 * columns), so that real names from a GPU run's logs can be appended without touching C.
 * A mangled row is demangled both ways the project does (xmt_demangle, and the shim's
 * own cplus_demangle with the return type) and both texts must read alike, with the
 * name libiberty itself gives. Every prefix of every row is read from an allocation of
 * its exact size, so that a read past the end shows under ASan. gpu_suite_names.tsv holds
 * the kernels a GPU-suite discover run logged (mangled, demangled, the driver's parameter
 * sizes): the reader must count what the driver counts and size what it sizes alike.
 */
#include "xmt_policy.h"

#include <check.h>
#include <libiberty/demangle.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 64

static const char *tsv_path, *gpu_path;

/* The classes of the parameters as the table writes them: "ptr:f32, i32, struct". */
static void classes(const xmt_sig_param *p, int n, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < n && i < MAXP && at < cap; i++) {
        char one[32];
        switch (p[i].cls) {
        case XMT_SIG_POINTER:
            if (p[i].dtype >= 0)
                snprintf(one, sizeof one, "ptr:%s", xmt_dtype_name((xmt_dtype)p[i].dtype));
            else
                snprintf(one, sizeof one, "ptr");
            break;
        case XMT_SIG_FUNCPTR: snprintf(one, sizeof one, "fnptr"); break;
        case XMT_SIG_INT:
            snprintf(one, sizeof one, "%c%u", p[i].is_signed ? 'i' : 'u', p[i].bytes * 8);
            break;
        case XMT_SIG_FLOAT:
            if (p[i].dtype >= 0)
                snprintf(one, sizeof one, "%s", xmt_dtype_name((xmt_dtype)p[i].dtype));
            else
                snprintf(one, sizeof one, "f%u", p[i].bytes * 8);
            break;
        case XMT_SIG_STRUCT: snprintf(one, sizeof one, "struct"); break;
        default: snprintf(one, sizeof one, "?"); break;
        }
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", one);
    }
    if (n < 0) snprintf(buf, cap, "-");
}

/* Reads text and compares with the row; appends a line to err on a mismatch. */
static int check_text(const char *what, const char *text, const char *name, int nparams,
                      const char *cls, char *err, size_t cap)
{
    xmt_sig s;
    xmt_sig_param p[MAXP];
    char got[4096];
    int n = xmt_sig_read(text, &s, p, MAXP);
    classes(p, n, got, sizeof got);
    int ok = n == nparams && s.nparams == n && s.name_len == strlen(name) &&
             !strncmp(s.name, name, s.name_len) && !strcmp(got, cls);
    if (ok && n >= 0) {
        /* the list is the text's "(...)" that the parameters lie in */
        ok = s.list && s.list[0] == '(' && s.list[s.list_len - 1] == ')';
        for (int i = 0; ok && i < n && i < MAXP; i++)
            ok = p[i].text >= s.list && p[i].text + p[i].len <= s.list + s.list_len;
    }
    if (!ok) {
        size_t at = strlen(err);
        snprintf(
            err + at, cap - at,
            "%s \"%s\":\n  name \"%.*s\" (want \"%s\"), %d params (want %d), [%s] (want [%s])\n",
            what, text, (int)s.name_len, s.name, name, n, nparams, got, cls);
    }
    return ok;
}

/* A mangled row: both demangled forms, and libiberty's own name. */
static void check_mangled(const char *in, const char *name, int np, const char *cls, char *err,
                          size_t cap)
{
    static char dname[16384], dsig[16384];
    if (xmt_demangle(in, dname, sizeof dname, dsig, sizeof dsig) != 1) {
        check_text("undemangled", in, name, np, cls, err, cap); /* "_Zgarbage" stays as is */
        return;
    }
    check_text("xmt_demangle's", dsig, name, np, cls, err, cap);
    if (strcmp(dname, name)) {
        size_t at = strlen(err);
        snprintf(err + at, cap - at, "%s: xmt_demangle's name \"%s\", want \"%s\"\n", in, dname,
                 name);
    }
    /* shim/records/kernels.c */
    char *shim = cplus_demangle(in, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
    char *base = cplus_demangle(in, DMGL_ANSI);
    if (shim) check_text("the shim's", shim, name, np, cls, err, cap);
    if (!base || strcmp(base, name)) {
        size_t at = strlen(err);
        snprintf(err + at, cap - at, "%s: libiberty's name \"%s\", want \"%s\"\n", in,
                 base ? base : "(none)", name);
    }
    free(shim);
    free(base);
}

/* Every prefix of text, each from an allocation of its exact size. */
static void read_prefixes(const char *text)
{
    size_t n = strlen(text);
    for (size_t i = 0; i <= n; i++) {
        char *c = malloc(i + 1);
        ck_assert_ptr_nonnull(c);
        memcpy(c, text, i);
        c[i] = 0;
        xmt_sig s;
        xmt_sig_param p[4];
        int r = xmt_sig_read(c, &s, p, 4);
        ck_assert(r >= -1);
        ck_assert(s.name >= c && s.name + s.name_len <= c + i);
        free(c);
    }
}

START_TEST(table)
{
    FILE *f = fopen(tsv_path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", tsv_path);
    static char line[16384], err[1 << 16];
    err[0] = 0;
    int rows = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        char *in = line, *name = strchr(in, '\t');
        char *np = name ? strchr(name + 1, '\t') : NULL;
        char *cls = np ? strchr(np + 1, '\t') : NULL;
        if (!name || !np || !cls) {
            ck_abort_msg("a row needs four columns: %s", line);
            break;
        }
        *name++ = *np++ = *cls++ = 0;
        int n = strcmp(np, "-") ? atoi(np) : -1;
        size_t before = strlen(err);
        if (in[0] == '_' && in[1] == 'Z')
            check_mangled(in, name, n, cls, err, sizeof err);
        else
            check_text("", in, name, n, cls, err, sizeof err);
        bad += strlen(err) != before;
        read_prefixes(in);
        rows++;
    }
    fclose(f);
    ck_assert_msg(rows >= 40, "only %d rows in %s", rows, tsv_path);
    if (bad) fputs(err, stderr); /* Check caps its own message's length */
    ck_assert_msg(bad == 0, "%d of %d rows read wrong (above)", bad, rows);
}
END_TEST

/* Appends a formatted line to err. */
static void appendf(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void appendf(char *err, size_t cap, const char *fmt, ...)
{
    size_t at = strlen(err);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + at, cap - at, fmt, ap);
    va_end(ap);
}

/* One row of gpu_suite_names.tsv; appends to err what does not hold. */
static void check_gpu_row(char *mangled, const char *demangled, char *sizes, char *err, size_t cap)
{
    xmt_sig s, s2;
    xmt_sig_param p[MAXP], p2[MAXP];
    static char dname[16384], dsig[16384];
    char c1[4096], c2[4096];
    long sz[MAXP];
    int nsz = 0;
    for (char *t = strtok(sizes, ","); t && nsz < MAXP; t = strtok(NULL, ","))
        sz[nsz++] = atol(t);
    int n = xmt_sig_read(demangled, &s, p, MAXP);
    int dm = xmt_demangle(mangled, dname, sizeof dname, dsig, sizeof dsig);
    int n2 = xmt_sig_read(dsig, &s2, p2, MAXP);
    classes(p, n, c1, sizeof c1);
    classes(p2, n2, c2, sizeof c2);
    /* the log's name (with return type) and xmt_demangle's read alike */
    if (n != n2 || strcmp(c1, c2) || s.name_len != s2.name_len ||
        strncmp(s.name, s2.name, s.name_len))
        appendf(err, cap, "%s: the log's and xmt_demangle's forms differ: %d [%s] / %d [%s]\n",
                mangled, n, c1, n2, c2);
    else if (dm == 1 && (strlen(dname) != s.name_len || strncmp(dname, s.name, s.name_len)))
        appendf(err, cap, "%s: xmt_demangle's name \"%s\"\n", mangled, dname);
    else if (n < 0 ? dm == 1 : n != nsz)
        appendf(err, cap, "%s: %d parameters, the driver %d\n", mangled, n, nsz);
    else
        for (int i = 0; i < n && i < MAXP; i++) {
            /* what the reader knows of a size must be the driver's */
            long want = p[i].bytes;
            if (want && sz[i] != want) {
                appendf(err, cap, "%s: parameter %d (%.*s, %s) is %ld bytes, the driver %ld\n",
                        mangled, i, (int)p[i].len, p[i].text, c1, want, sz[i]);
                break;
            }
        }
}

/* The names a GPU-suite run's discover logged (PyTorch, CUB, cuBLAS, CuPy, Triton, the
 * suite's own), with the parameter sizes the driver gave: the reader's count, and every
 * size it knows (pointers 8, scalars their width), must be the driver's. */
START_TEST(gpu_suite_names)
{
    FILE *f = fopen(gpu_path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", gpu_path);
    static char line[1 << 16], err[1 << 16];
    err[0] = 0;
    int rows = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        char *dem = strchr(line, '\t');
        char *sizes = dem ? strchr(dem + 1, '\t') : NULL;
        if (!dem || !sizes) {
            ck_abort_msg("a row needs three columns: %s", line);
            break;
        }
        *dem++ = *sizes++ = 0;
        size_t before = strlen(err);
        check_gpu_row(line, dem, sizes, err, sizeof err);
        bad += strlen(err) != before;
        rows++;
    }
    fclose(f);
    if (bad) fputs(err, stderr);
    ck_assert_msg(rows >= 50, "only %d rows in %s", rows, gpu_path);
    ck_assert_msg(bad == 0, "%d of %d rows read wrong (above)", bad, rows);
}
END_TEST

START_TEST(edges)
{
    xmt_sig s;
    xmt_sig_param p[2];
    ck_assert_int_eq(xmt_sig_read(NULL, &s, NULL, 0), -1);
    ck_assert_uint_eq(s.name_len, 0);
    ck_assert_ptr_null(s.list);
    /* more parameters than room: the count, and only cap filled */
    p[1].cls = XMT_SIG_STRUCT;
    ck_assert_int_eq(xmt_sig_read("k(float*, int, double)", &s, p, 1), 3);
    ck_assert_int_eq(p[0].cls, XMT_SIG_POINTER);
    ck_assert_int_eq(p[1].cls, XMT_SIG_STRUCT); /* untouched */
    ck_assert_int_eq(xmt_sig_read("k(float*, int)", &s, NULL, 0), 2);
    /* the text of a parameter points into the signature, trimmed */
    const char *t = "void k<(int)128>( float const* ,  int )";
    ck_assert_int_eq(xmt_sig_read(t, &s, p, 2), 2);
    ck_assert_int_eq((int)p[0].len, 12);
    ck_assert(!strncmp(p[0].text, "float const*", 12));
    ck_assert(!strncmp(p[1].text, "int", p[1].len) && p[1].len == 3);
    ck_assert_ptr_eq(s.list, strchr(t + 16, '('));
    ck_assert_uint_eq(s.list_len, strlen(s.list));
    /* the name alone, copied and truncated */
    char b[8];
    ck_assert_uint_eq(xmt_sig_name(t, b, sizeof b), 11);
    ck_assert_str_eq(b, "k<(int)");
    ck_assert_uint_eq(xmt_sig_name("triton_poi_fused_add_0", NULL, 0), 22);
}
END_TEST

static Suite *signature_suite(void)
{
    Suite *s = suite_create("signature");
    TCase *t = tcase_create("read");
    tcase_add_test(t, table);
    tcase_add_test(t, edges);
    tcase_add_test(t, gpu_suite_names);
    tcase_set_timeout(t, 60);
    suite_add_tcase(s, t);
    return s;
}

int main(int argc, char **argv)
{
    tsv_path = argc > 1 ? argv[1] : "signatures.tsv";
    gpu_path = argc > 2 ? argv[2] : "gpu_suite_names.tsv";
    SRunner *sr = srunner_create(signature_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
