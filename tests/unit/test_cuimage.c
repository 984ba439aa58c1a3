/*
 * Unit tests of common/cuimage.c: where a module image's bytes end, on real images that
 * nvcc made (tests/unit/images, tools/dev/gen_test_images.sh) and on hostile ones.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuimage.h"

static const char *images_dir;

/* A file's bytes, with `extra` bytes of 0xAB after them (what follows an image in memory
 * must not count). */
static unsigned char *slurp(const char *name, size_t extra, size_t *n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", images_dir, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + extra + 1);
    ck_assert(b != NULL);
    ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    memset(b + len, 0xAB, extra + 1);
    *n = (size_t)len;
    return b;
}

#define LIMIT ((size_t)1 << 30)

START_TEST(real_fatbin)
{
    size_t n;
    unsigned char *b = slurp("tiny.fatbin", 100, &n);
    const void *at;
    size_t size;
    ck_assert_int_eq(xmt_image_locate(b, LIMIT, &at, &size), XMT_IMAGE_FATBIN);
    ck_assert_ptr_eq(at, b);
    ck_assert_uint_eq(size, n);
    /* what nvcc's runtime passes: the wrapper, pointing at the fatbin */
    struct {
        int32_t magic, version;
        const void *data, *fatbins;
    } w = {0x466243b1, 1, b, NULL};
    ck_assert_int_eq(xmt_image_locate(&w, LIMIT, &at, &size), XMT_IMAGE_FATBIN_WRAPPER);
    ck_assert_ptr_eq(at, b);
    ck_assert_uint_eq(size, n);
    ck_assert_str_eq(xmt_image_format_name(XMT_IMAGE_FATBIN_WRAPPER), "fatbin wrapper");
    /* an image cut short by the limit is not one */
    ck_assert_int_eq(xmt_image_locate(b, n - 1, &at, &size), XMT_IMAGE_UNKNOWN);
    ck_assert_ptr_null(at);
    ck_assert_uint_eq(size, 0);
    free(b);
}
END_TEST

START_TEST(real_cubin)
{
    size_t n;
    unsigned char *b = slurp("tiny.cubin", 4096, &n);
    const void *at;
    size_t size;
    ck_assert_int_eq(xmt_image_locate(b, LIMIT, &at, &size), XMT_IMAGE_ELF);
    ck_assert_uint_eq(size, n);
    ck_assert_int_eq(xmt_image_locate(b, n - 1, &at, &size), XMT_IMAGE_UNKNOWN);
    free(b);
}
END_TEST

START_TEST(real_ptx)
{
    size_t n;
    unsigned char *b = slurp("tiny.ptx", 0, &n);
    b[n] = 0; /* PTX is passed NUL-terminated */
    const void *at;
    size_t size;
    ck_assert_int_eq(xmt_image_locate(b, LIMIT, &at, &size), XMT_IMAGE_TEXT);
    ck_assert_uint_eq(size, n + 1);
    /* no NUL within the limit: not an image */
    ck_assert_int_eq(xmt_image_locate(b, n, &at, &size), XMT_IMAGE_UNKNOWN);
    free(b);
}
END_TEST

START_TEST(hostile_headers)
{
    const void *at;
    size_t size;
    ck_assert_int_eq(xmt_image_locate(NULL, LIMIT, &at, &size), XMT_IMAGE_UNKNOWN);
    /* a fatbin claiming more than the limit, or a header shorter than a header */
    unsigned char f[64] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0};
    uint64_t huge = UINT64_MAX - 8;
    memcpy(f + 8, &huge, 8);
    ck_assert_int_eq(xmt_image_locate(f, LIMIT, &at, &size), XMT_IMAGE_UNKNOWN);
    uint64_t small = 8;
    memcpy(f + 8, &small, 8);
    f[6] = 4;
    ck_assert_int_eq(xmt_image_locate(f, LIMIT, &at, &size), XMT_IMAGE_UNKNOWN);
    f[6] = 16;
    ck_assert_int_eq(xmt_image_locate(f, LIMIT, &at, &size), XMT_IMAGE_FATBIN);
    ck_assert_uint_eq(size, 24);
    /* a wrapper without its fatbin */
    struct {
        int32_t magic, version;
        const void *data, *fatbins;
    } w = {0x466243b1, 1, NULL, NULL};
    ck_assert_int_eq(xmt_image_locate(&w, LIMIT, &at, &size), XMT_IMAGE_UNKNOWN);
    /* an ELF whose section headers lie past the limit, or that is ELF32 */
    unsigned char e[128] = {0x7f, 'E', 'L', 'F', 2, 1};
    uint64_t shoff = (uint64_t)1 << 40;
    memcpy(e + 0x28, &shoff, 8);
    uint16_t shent = 64, shnum = 3;
    memcpy(e + 0x3A, &shent, 2);
    memcpy(e + 0x3C, &shnum, 2);
    ck_assert_int_eq(xmt_image_locate(e, LIMIT, &at, &size), XMT_IMAGE_UNKNOWN);
    e[4] = 1;
    ck_assert_int_eq(xmt_image_locate(e, LIMIT, &at, &size), XMT_IMAGE_UNKNOWN);
    /* the header alone is 64 bytes */
    e[4] = 2;
    memset(e + 0x28, 0, 8);
    memset(e + 0x3C, 0, 2);
    ck_assert_int_eq(xmt_image_locate(e, LIMIT, &at, &size), XMT_IMAGE_ELF);
    ck_assert_uint_eq(size, 64);
    ck_assert_int_eq(xmt_image_locate(e, 63, &at, &size), XMT_IMAGE_UNKNOWN);
}
END_TEST

int main(int argc, char **argv)
{
    images_dir = argc > 1 ? argv[1] : "images";
    Suite *s = suite_create("cuimage");
    TCase *tc = tcase_create("locate");
    tcase_add_test(tc, real_fatbin);
    tcase_add_test(tc, real_cubin);
    tcase_add_test(tc, real_ptx);
    tcase_add_test(tc, hostile_headers);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
