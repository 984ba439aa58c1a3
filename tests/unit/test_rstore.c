/*
 * test_rstore: the remote tier's URL, password file, key names and record encoding
 * (common/rstore.c), without a server (the integration tests, tests/integration/cases.py's
 * remote_* cases, run a real redis-server).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rstore.h"

START_TEST(url_forms)
{
    xmt_rstore_url u;
    char why[512];
    ck_assert_int_eq(xmt_rstore_url_parse("redis://cache.example:7000/team1", &u, why, sizeof why),
                     0);
    ck_assert_str_eq(u.host, "cache.example");
    ck_assert_int_eq(u.port, 7000);
    ck_assert_str_eq(u.prefix, "team1");
    ck_assert_int_eq(u.tls, 0);
    /* defaults: port 6379, prefix xmatune */
    ck_assert_int_eq(xmt_rstore_url_parse("redis://10.0.0.5", &u, why, sizeof why), 0);
    ck_assert_str_eq(u.host, "10.0.0.5");
    ck_assert_int_eq(u.port, 6379);
    ck_assert_str_eq(u.prefix, "xmatune");
    ck_assert_int_eq(xmt_rstore_url_parse("redis://h/", &u, why, sizeof why), 0);
    ck_assert_str_eq(u.prefix, "xmatune");
    ck_assert_int_eq(xmt_rstore_url_parse("redis://[::1]:6380/a.b:c-d_e", &u, why, sizeof why), 0);
    ck_assert_str_eq(u.host, "::1");
    ck_assert_int_eq(u.port, 6380);
    ck_assert_str_eq(u.prefix, "a.b:c-d_e");
}
END_TEST

/* Each refusal says why, in words a message can carry. */
START_TEST(url_refused)
{
    static const struct {
        const char *url, *said;
    } bad[] = {
        {"rediss://h:6380/x", "needs hiredis 1.0 or later"},
        {"redis://:secret@h/x", "a user or password in the URL is refused"},
        {"redis://user:secret@h/x", "XMATUNE_CACHE_REMOTE_PASSWORD_FILE"},
        {"http://h/x", "is not a redis://HOST:PORT/PREFIX URL"},
        {"h:6379", "is not a redis://HOST:PORT/PREFIX URL"},
        {"redis://h:0/x", "the port is not a number from 1 to 65535"},
        {"redis://h:65536/x", "the port is not a number from 1 to 65535"},
        {"redis://h:12ab/x", "the port is not a number from 1 to 65535"},
        {"redis://h:/x", "the port is not a number from 1 to 65535"},
        {"redis:///x", "no host"},
        {"redis://[::1/x", "without its closing ]"},
        {"redis://h/a*b", "the prefix may hold letters, digits and . _ : - only"},
        {"redis://h/a b", "the prefix may hold letters, digits and . _ : - only"},
        {"redis://h/a/b", "the prefix may hold letters, digits and . _ : - only"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        xmt_rstore_url u;
        char why[512] = "";
        ck_assert_msg(xmt_rstore_url_parse(bad[i].url, &u, why, sizeof why) == -1, "%s taken",
                      bad[i].url);
        ck_assert_msg(strstr(why, bad[i].said) != NULL, "%s: %s", bad[i].url, why);
    }
    /* rediss:// is recognised as TLS (not as a bad URL) */
    xmt_rstore_url u;
    char why[512];
    (void)xmt_rstore_url_parse("rediss://h/x", &u, why, sizeof why);
    ck_assert_int_eq(u.tls, 1);
}
END_TEST

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(password_file)
{
    char dir[] = "/tmp/xmt-rstore-XXXXXX", path[64], pw[64], why[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/pw", dir);
    write_file(path, "sesame\nignored\n", 0600);
    ck_assert_int_eq(xmt_rstore_password(path, pw, sizeof pw, why, sizeof why), 0);
    ck_assert_str_eq(pw, "sesame");
    write_file(path, "ops s3cret\r\n", 0400);
    ck_assert_int_eq(xmt_rstore_password(path, pw, sizeof pw, why, sizeof why), 0);
    ck_assert_str_eq(pw, "ops s3cret");
    /* others may read it: refused, whatever it holds */
    write_file(path, "sesame\n", 0644);
    ck_assert_int_eq(xmt_rstore_password(path, pw, sizeof pw, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "group or others"));
    write_file(path, "sesame\n", 0640);
    ck_assert_int_eq(xmt_rstore_password(path, pw, sizeof pw, why, sizeof why), -1);
    write_file(path, "\n", 0600);
    ck_assert_int_eq(xmt_rstore_password(path, pw, sizeof pw, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "no password"));
    unlink(path);
    ck_assert_int_eq(xmt_rstore_password(path, pw, sizeof pw, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "cannot read"));
    rmdir(dir);
}
END_TEST

static xmt_cacherec sample(const char *key_hex)
{
    xmt_cacherec r = {.device = "NVIDIA H200|cc9.0|sm132|drv13000",
                      .kernel = "_Z5saxpyifPKfPf",
                      .code = "54835f089b8a9999",
                      .entry = "match: saxpy*",
                      .entry_fp = "f2afed43c98237d3",
                      .key_hex = key_hex,
                      .key_text = "x.shape=(65536,)"};
    r.choice.index = 3;
    snprintf(r.choice.label, sizeof r.choice.label, "BLOCK=256");
    r.choice.time_ms = 0.5;
    snprintf(r.choice.data, sizeof r.choice.data, "affbed15a7bd44d7");
    r.choice.rechecked = 1;
    return r;
}

/* A record goes to Redis as its cache line and comes back as the same record, under the key
 * its identity names; the same identity names the same key, another identity another. */
START_TEST(record_round_trip)
{
    xmt_cacherec r = sample("0088130000");
    char rk[160], ck[160], rk2[160];
    ck_assert_int_eq(xmt_rstore_keys("team", &r, rk, ck, sizeof rk), 0);
    ck_assert_int_eq(strncmp(rk, "team:rec:", 9), 0);
    ck_assert_int_eq(strlen(rk), 9 + 32);
    ck_assert_int_eq(strncmp(ck, "team:claim:", 11), 0);
    ck_assert_str_eq(rk + 9, ck + 11);
    char *v = xmt_rstore_encode(&r);
    ck_assert_ptr_nonnull(v);
    ck_assert_ptr_null(strchr(v, '\n'));
    size_t len = strlen(v);
    char *scratch = malloc(XMT_CACHEREC_SCRATCH(len));
    xmt_cacherec back;
    ck_assert_int_eq(xmt_rstore_decode("team", rk, v, len, scratch, &back), 0);
    ck_assert_str_eq(back.kernel, r.kernel);
    ck_assert_str_eq(back.key_hex, r.key_hex);
    ck_assert_str_eq(back.key_text, r.key_text);
    ck_assert_int_eq(back.choice.index, 3);
    ck_assert_str_eq(back.choice.label, "BLOCK=256");
    ck_assert_str_eq(back.choice.data, "affbed15a7bd44d7");
    ck_assert_int_eq(back.choice.rechecked, 1);
    ck_assert_str_eq(back.choice.origin, "");
    /* the key text and the choice are not the identity: the same key */
    xmt_cacherec same = r;
    same.key_text = "";
    same.choice.index = 1;
    ck_assert_int_eq(xmt_rstore_keys("team", &same, rk2, NULL, sizeof rk2), 0);
    ck_assert_str_eq(rk, rk2);
    /* another key, another prefix: other names */
    xmt_cacherec other = sample("0088130001");
    ck_assert_int_eq(xmt_rstore_keys("team", &other, rk2, NULL, sizeof rk2), 0);
    ck_assert_str_ne(rk, rk2);
    ck_assert_int_eq(xmt_rstore_keys("team2", &r, rk2, NULL, sizeof rk2), 0);
    ck_assert_str_eq(rk + 9, rk2 + 10); /* the same hash under another prefix */
    ck_assert_str_ne(rk, rk2);
    /* a record under another identity's key, or another prefix's, is garbage */
    ck_assert_int_eq(xmt_rstore_keys("team", &other, rk2, NULL, sizeof rk2), 0);
    ck_assert_int_eq(xmt_rstore_decode("team", rk2, v, len, scratch, &back), -1);
    ck_assert_int_eq(xmt_rstore_decode("team2", rk, v, len, scratch, &back), -1);
    /* not checked against a key: the record itself */
    ck_assert_int_eq(xmt_rstore_decode("team", NULL, v, len, scratch, &back), 0);
    free(scratch);
    free(v);
}
END_TEST

/* Values that are not records are never read as one. */
START_TEST(garbage_values)
{
    static const char *bad[] = {"",
                                "garbage",
                                "{}",
                                "{\"v\":2}",
                                "{\"v\":1,\"device\":\"d\"}",
                                "[1,2,3]",
                                "{\"v\":2,\"device\":\"d\",\"kernel\":\"k\"}\n{\"v\":2}"};
    char scratch[4096];
    xmt_cacherec r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(xmt_rstore_decode("p", NULL, bad[i], strlen(bad[i]), scratch, &r) == -1,
                      "%s read as a record", bad[i]);
    /* a record cut short */
    xmt_cacherec s = sample("00");
    char *v = xmt_rstore_encode(&s);
    size_t len = strlen(v);
    char *sc = malloc(XMT_CACHEREC_SCRATCH(len));
    for (size_t n = 1; n < len; n += 7)
        ck_assert_int_eq(xmt_rstore_decode("p", NULL, v, n, sc, &r), -1);
    /* over the longest line a record may be: refused unread */
    size_t big = XMT_CACHEREC_MAX_LINE + 1;
    char *huge = malloc(big + 1);
    memset(huge, ' ', big);
    memcpy(huge, v, len);
    huge[big] = 0;
    ck_assert_int_eq(xmt_rstore_decode("p", NULL, huge, big, sc, &r), -1);
    free(huge);
    free(sc);
    free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rstore");
    TCase *tc = tcase_create("rstore");
    tcase_add_test(tc, url_forms);
    tcase_add_test(tc, url_refused);
    tcase_add_test(tc, password_file);
    tcase_add_test(tc, record_round_trip);
    tcase_add_test(tc, garbage_values);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
