/*
 * test_shim: Check unit tests of the shim's parts that need no driver — the options
 * table, the messages and the log, and the on-disk cache. The launch path itself is
 * tested whole on the simulated driver (tests/integration).
 */
#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aborts.h"
#include "cache.h"
#include "cachefile.h"
#include "cacherec.h"
#include "invariant.h"
#include "log.h"
#include "options.h"

static char tmpdir[256];

/* What the shim passes to xmt_options_load: the capped xmatune: message. */
#define test_warn xmt_warn_msg

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/xmt-unit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    static const char *const vars[] = {
        "XMATUNE_MODE",      "XMATUNE_POLICY",     "XMATUNE_LOG",     "XMATUNE_CACHE",
        "XMATUNE_WARMUP",    "XMATUNE_ITERATIONS", "XMATUNE_VERBOSE", "XMATUNE_MAX_MESSAGES",
        "XMATUNE_STATISTIC", "XMATUNE_BUDGET_MS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* The test's folder goes with it (before, every test left one in /tmp). */
static void teardown(void)
{
    nftw(tmpdir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Runs fn with stderr captured into buf. */
static void capture_stderr(void (*fn)(void), char *buf, size_t cap)
{
    char path[300];
    snprintf(path, sizeof path, "%s/stderr", tmpdir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, cap - 1);
    buf[n > 0 ? n : 0] = 0;
    close(fd);
}

static void load(void)
{
    xmt_options_load(test_warn);
}

START_TEST(options_defaults)
{
    xmt_options_load(test_warn);
    ck_assert_int_eq(xmt_opt.mode, XMT_MODE_OFF);
    ck_assert_int_eq(xmt_opt.warmup, 5);
    ck_assert_int_eq(xmt_opt.iterations, 10);
    ck_assert_int_eq(xmt_opt.statistic, XMT_STAT_MEDIAN);
    ck_assert_str_eq(xmt_opt.libcuda, "libcuda.so.1");
    ck_assert(xmt_opt.budget_ms < 0);
    setenv("XMATUNE_POLICY", "p.yaml", 1);
    xmt_options_load(test_warn);
    ck_assert_int_eq(xmt_opt.mode, XMT_MODE_TUNE); /* a policy implies tune */
    setenv("XMATUNE_MODE", "replay", 1);
    xmt_options_load(test_warn);
    ck_assert_int_eq(xmt_opt.mode, XMT_MODE_REPLAY);
    setenv("XMATUNE_MODE", "discover", 1);
    setenv("XMATUNE_STATISTIC", "mean", 1);
    setenv("XMATUNE_BUDGET_MS", "2.5", 1);
    xmt_options_load(test_warn);
    ck_assert_int_eq(xmt_opt.mode, XMT_MODE_DISCOVER);
    ck_assert_int_eq(xmt_opt.statistic, XMT_STAT_MEAN);
    ck_assert(xmt_opt.budget_ms == 2.5);
}
END_TEST

START_TEST(options_bad_values_warn_and_keep_default)
{
    char err[4096];
    setenv("XMATUNE_WARMUP", "lots", 1);
    setenv("XMATUNE_ITERATIONS", "0", 1); /* below its minimum */
    setenv("XMATUNE_MODE", "fast", 1);
    setenv("XMATUNE_VERBOSE", "1x", 1);
    capture_stderr(load, err, sizeof err);
    ck_assert_int_eq(xmt_opt.warmup, 5);
    ck_assert_int_eq(xmt_opt.iterations, 10);
    ck_assert_int_eq(xmt_opt.mode, XMT_MODE_OFF);
    ck_assert_int_eq(xmt_opt.verbose, 0);
    ck_assert_ptr_nonnull(strstr(err, "xmatune: XMATUNE_WARMUP=\"lots\" is not valid"));
    ck_assert_ptr_nonnull(strstr(err, "xmatune: XMATUNE_ITERATIONS=\"0\" is not valid"));
    ck_assert_ptr_nonnull(strstr(err, "xmatune: XMATUNE_MODE=\"fast\" is not valid"));
    ck_assert_ptr_nonnull(strstr(err, "the mode in effect is \"off\""));
    ck_assert_ptr_nonnull(strstr(err, "(an integer from 0 to 1000); keeping the default \"5\""));
}
END_TEST

/* DESIGN.md: an unknown mode is off, even with a policy set (it used to keep the
 * default, tune: a misspelt `replay` in production would tune). */
START_TEST(options_unknown_mode_is_off)
{
    char err[4096];
    setenv("XMATUNE_POLICY", "p.yaml", 1);
    setenv("XMATUNE_MODE", "replya", 1);
    capture_stderr(load, err, sizeof err);
    ck_assert_int_eq(xmt_opt.mode, XMT_MODE_OFF);
    ck_assert_ptr_nonnull(strstr(err, "XMATUNE_MODE=\"replya\" is not valid (one of off, "
                                      "discover, tune, replay); the mode in effect is \"off\""));
    setenv("XMATUNE_MODE", "replay", 1);
    capture_stderr(load, err, sizeof err);
    ck_assert_int_eq(xmt_opt.mode, XMT_MODE_REPLAY);
    unsetenv("XMATUNE_MODE");
    capture_stderr(load, err, sizeof err);
    ck_assert_int_eq(xmt_opt.mode, XMT_MODE_TUNE);
    unsetenv("XMATUNE_POLICY");
}
END_TEST

/* strtod reads "nan" and "inf": a NaN budget compares false with every bound. */
START_TEST(options_nan_rejected)
{
    char err[4096];
    setenv("XMATUNE_BUDGET_MS", "nan", 1);
    setenv("XMATUNE_WARMUP_MS", "-NaN", 1);
    setenv("XMATUNE_TOTAL_BUDGET_MS", "inf", 1);
    capture_stderr(load, err, sizeof err);
    ck_assert(xmt_opt.budget_ms == -1);
    ck_assert(xmt_opt.warmup_ms == 50);
    ck_assert(xmt_opt.total_budget_ms == -1);
    ck_assert_ptr_nonnull(strstr(err, "XMATUNE_BUDGET_MS=\"nan\" is not valid"));
    ck_assert_ptr_nonnull(strstr(err, "XMATUNE_WARMUP_MS=\"-NaN\" is not valid"));
    ck_assert_ptr_nonnull(strstr(err, "XMATUNE_TOTAL_BUDGET_MS=\"inf\" is not valid"));
    unsetenv("XMATUNE_WARMUP_MS");
    unsetenv("XMATUNE_TOTAL_BUDGET_MS");
}
END_TEST

static void print_options(void)
{
    xmt_options_print(stderr);
}

START_TEST(options_print_and_markdown)
{
    char out[8192];
    setenv("XMATUNE_MODE", "tune", 1);
    xmt_options_load(test_warn);
    capture_stderr(print_options, out, sizeof out);
    ck_assert_ptr_nonnull(strstr(out, "xmatune: XMATUNE_MODE=tune\n"));
    ck_assert_ptr_nonnull(strstr(out, "xmatune: XMATUNE_WARMUP=5\n"));
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    xmt_options_markdown(m);
    fclose(m);
    ck_assert_ptr_nonnull(strstr(buf, "| `XMATUNE_ITERATIONS` | `10` |"));
    ck_assert_ptr_nonnull(strstr(buf, "| `XMATUNE_LOG` | empty |"));
    free(buf);
}
END_TEST

START_TEST(log_expand_path)
{
    char out[64], want[64];
    ck_assert_int_eq(xmt_expand_path("log-%p-%%.jsonl", out, sizeof out), 0);
    snprintf(want, sizeof want, "log-%ld-%%.jsonl", (long)getpid());
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(xmt_expand_path("a-much-too-long-path-%p-for-this-buffer", out, 16), -1);
}
END_TEST

static void five_warnings(void)
{
    for (int i = 0; i < 5; i++)
        xmt_warn("warning %d", i);
    xmt_log_close();
}

START_TEST(log_messages_capped)
{
    char err[4096];
    setenv("XMATUNE_MAX_MESSAGES", "3", 1);
    xmt_options_load(test_warn);
    capture_stderr(five_warnings, err, sizeof err);
    ck_assert_ptr_nonnull(
        strstr(err, "xmatune: warning 0\nxmatune: warning 1\nxmatune: warning 2\n"));
    ck_assert_ptr_null(strstr(err, "warning 3"));
    ck_assert_ptr_nonnull(strstr(err, "xmatune: 2 further messages were suppressed"));
}
END_TEST

/* XMT_ASSERT (invariant.h): a false condition says "xmatune: internal error: ..." once per
 * place, with the condition and where, and the program goes on past it. */
static int assert_passes;
static void assert_false_twice(void)
{
    for (int i = 0; i < 2; i++) {
        XMT_ASSERT(i < 0, "a test's false condition (%d)", 7);
        assert_passes++;
    }
    XMT_ASSERT(assert_passes == 2, "a true condition says nothing");
    xmt_log_close();
}

START_TEST(assert_says_once_and_goes_on)
{
    char err[4096];
    unsetenv("XMATUNE_MAX_MESSAGES");
    xmt_options_load(test_warn);
    capture_stderr(assert_false_twice, err, sizeof err);
    ck_assert_int_eq(assert_passes, 2);
    const char *m = strstr(err, "xmatune: internal error: a test's false condition (7) (i < 0 "
                                "is false at ");
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_ptr_nonnull(strstr(m, "test_shim.c:"));
    ck_assert_ptr_null(strstr(m + strlen("xmatune: internal error"), "internal error")); /* once */
    ck_assert_ptr_null(strstr(err, "a true condition"));
}
END_TEST

/* 0 means none (it used to mean 100). */
START_TEST(log_max_messages_zero_is_silence)
{
    char err[4096];
    setenv("XMATUNE_MAX_MESSAGES", "0", 1);
    xmt_options_load(test_warn);
    ck_assert_int_eq(xmt_opt.max_messages, 0);
    capture_stderr(five_warnings, err, sizeof err);
    ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(log_events_lines_and_lazy_file)
{
    char path[300];
    snprintf(path, sizeof path, "%s/log-%%p.jsonl", tmpdir);
    setenv("XMATUNE_LOG", path, 1);
    xmt_options_load(test_warn);
    char real[300];
    xmt_expand_path(path, real, sizeof real);
    ck_assert_int_ne(access(real, F_OK), 0); /* nothing before the first event */
    xmt_log_event(json_pack("{ss si}", "event", "a", "n", 1));
    xmt_log_event(json_pack("{ss ss}", "event", "b", "s", "line\nbreak"));
    xmt_log_close();
    FILE *f = fopen(real, "r");
    ck_assert_ptr_nonnull(f);
    char line[256];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "{\"event\":\"a\",\"n\":1}\n");
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "{\"event\":\"b\",\"s\":\"line\\nbreak\"}\n");
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
}
END_TEST

static int records_seen;
static void count_record(void *ud, const xmt_cacherec *r)
{
    (void)ud;
    const char *key_hex = r->key_hex;
    const xmt_choice *c = &r->choice;
    ck_assert(strlen(key_hex) % 2 == 0);
    ck_assert(c->index >= -1);
    records_seen++;
}

START_TEST(cache_store_reload_last_wins)
{
    char path[300];
    snprintf(path, sizeof path, "%s/cache.jsonl", tmpdir);
    setenv("XMATUNE_CACHE", path, 1);
    xmt_options_load(test_warn);
    xmt_cache_free();
    xmt_cache_load(); /* fixes the path */
    const uint8_t key[] = {1, 0, 0, 0, 0xff, 0x10};
    xmt_choice a = {.index = 3, .label = "BLOCK=256", .time_ms = 0.5, .data = ""},
               b = {.index = -1,
                    .label = "grid=(1,1,1) block=(32,1,1)",
                    .time_ms = 0.25,
                    .data = ""},
               got;
    int chk = 0;
    xmt_cache_id id = {"GPU|cc9.0|sm132|drv13000", "_Z1kv", "00aa", "match: k", "77"};
    xmt_cache_store(&id, key, sizeof key, 0, "n=1", &a);
    ck_assert(xmt_cache_find(&id, key, sizeof key, 0, &got, &chk));
    ck_assert_int_eq(got.index, 3);
    ck_assert(chk); /* stored by this process: checked on device 0, not on device 1 */
    ck_assert(xmt_cache_find(&id, key, sizeof key, 1, &got, &chk) && !chk);
    /* every part of the identity counts: device, kernel code, entry content, key */
    xmt_cache_id other = id;
    other.device = "GPU|cc9.0|sm114|drv13000";
    ck_assert(!xmt_cache_find(&other, key, sizeof key, 0, &got, &chk));
    other = id;
    other.code = "00ab";
    ck_assert(!xmt_cache_find(&other, key, sizeof key, 0, &got, &chk));
    other = id;
    other.entry_fp = "78";
    ck_assert(!xmt_cache_find(&other, key, sizeof key, 0, &got, &chk));
    ck_assert(!xmt_cache_find(&id, key, 5, 0, &got, &chk));
    xmt_cache_store(&id, key, sizeof key, 0, "n=1", &b);
    /* A line that is not a record, a record of the old format, and a partial last line
     * (a killed writer): the next record must not be glued to it. */
    FILE *f = fopen(path, "a");
    fputs("not json at all\n", f);
    fputs("{\"device\":\"d\",\"kernel\":\"k\",\"entry\":\"e\",\"key\":\"00\",\"index\":2}\n", f);
    fputs("{\"v\":2,\"device\":\"trunc", f);
    fclose(f);
    xmt_cache_id q = {"GPU \"quoted\"\\x", "_Z1kv", "00aa", "match: k", "77"};
    xmt_cache_store(&q, key, sizeof key, 0, "n=\"2\"", &a);
    xmt_cache_free();
    char err[4096];
    capture_stderr(xmt_cache_load, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "2 line(s) are not cache records"));
    ck_assert_ptr_nonnull(strstr(err, "1 record(s) of an older format were dropped"));
    ck_assert_ptr_null(strstr(err, "newer format"));
    ck_assert(xmt_cache_find(&id, key, sizeof key, 0, &got, &chk));
    ck_assert_int_eq(got.index, -1); /* the later line won */
    ck_assert_str_eq(got.label, "grid=(1,1,1) block=(32,1,1)");
    ck_assert(got.time_ms == 0.25);
    ck_assert(xmt_cache_find(&q, key, sizeof key, 0, &got, &chk));
    ck_assert_int_eq(got.index, 3);
    records_seen = 0;
    xmt_cacherec_other old;
    ck_assert_int_eq(xmt_cacherec_read(path, count_record, NULL, &old), 2);
    ck_assert_int_eq(records_seen, 3);
    ck_assert_int_eq(old.older, 1);
    ck_assert_int_eq(old.newer, 0);
    xmt_cache_free();
}
END_TEST

/* ---- the records point into the file (shim/records/cache.c keeps where each line is, not what
 * it says): what happens when the file changes under a process ---- */

static const xmt_cache_id test_id = {"GPU|cc9.0|sm132|drv13000", "_Z1kv", "00aa", "match: k", "77"};

/* Loads the cache at tmpdir/name afresh (the path fixed, the records read). */
static void cache_at(const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmpdir, name);
    setenv("XMATUNE_CACHE", path, 1);
    xmt_options_load(test_warn);
    xmt_cache_free();
    xmt_cache_load();
}

/* Stores key k (one byte) with candidate index, label "B=<index>". */
static void store_key(uint8_t k, long index)
{
    xmt_choice c = {.index = index, .label = "", .time_ms = 0.5, .data = ""};
    snprintf(c.label, sizeof c.label, "B=%ld", index);
    xmt_cache_store(&test_id, &k, 1, 0, "n=1", &c);
}

/* The index cached for key k, -2 when none; *chk whether checked on device 0. */
static long found(uint8_t k, int *chk)
{
    xmt_choice got;
    int c = 0;
    long r = xmt_cache_find(&test_id, &k, 1, 0, &got, &c) ? got.index : -2;
    if (chk) *chk = c;
    return r;
}

/* What descriptor fd of this process is open on (as /proc shows it) into to; 0, or -1
 * when it is not open. */
static int fd_link(int fd, char *to, size_t cap)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t l = readlink(link, to, cap - 1);
    if (l <= 0) return -1;
    to[l] = 0;
    return 0;
}

/* Descriptors of this process open on a file of tmpdir that is gone (replaced by a
 * rename; Check's own files are deleted ones too). */
static int deleted_fds(void)
{
    int n = 0;
    char to[512];
    for (int fd = 0; fd < 1024; fd++)
        n += fd_link(fd, to, sizeof to) == 0 && strncmp(to, tmpdir, strlen(tmpdir)) == 0 &&
             strstr(to, " (deleted)") != NULL;
    return n;
}

/* The descriptor of this process open on path, -1 when none. */
static int fd_on(const char *path)
{
    char to[512];
    for (int fd = 0; fd < 1024; fd++)
        if (fd_link(fd, to, sizeof to) == 0 && strcmp(to, path) == 0) return fd;
    return -1;
}

/* Makes key k's record refresh the in-memory view of the file (a claim reads what
 * changed), then gives the claim back. */
static void refresh(void)
{
    uint8_t k = 200;
    xmt_choice got;
    int chk;
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, NULL), XMT_CACHE_TUNE);
    xmt_cache_unclaim(&test_id, &k, 1);
}

/* Another process's compaction or `xmatune cache clear` renames a new file over the one
 * this process read: records the new file has point into it, the others are kept in
 * memory, and the old file's descriptor is closed. */
START_TEST(cache_records_outlive_their_file)
{
    char path[300], tmp[320];
    cache_at("outlive.jsonl", path, sizeof path);
    for (uint8_t k = 1; k <= 3; k++)
        store_key(k, k);
    cache_at("outlive.jsonl", path, sizeof path); /* a new process: the lines are in the file */
    ck_assert_int_eq(found(2, NULL), 2);
    /* the other process: a file holding key 1 only (another choice), renamed over it */
    snprintf(tmp, sizeof tmp, "%s.other", path);
    FILE *f = fopen(tmp, "w");
    char key_hex[3];
    uint8_t one = 1;
    xmt_cacherec_hex(&one, 1, key_hex);
    xmt_cacherec r = {.device = test_id.device,
                      .kernel = test_id.kernel,
                      .code = test_id.code,
                      .entry = test_id.entry,
                      .entry_fp = test_id.entry_fp,
                      .key_hex = key_hex,
                      .key_text = "n=1",
                      .choice = {6, "B=6", 0.25}};
    char *line = xmt_cacherec_format(&r);
    fputs("\n\n", f); /* at other offsets than before */
    fputs(line, f);
    free(line);
    fclose(f);
    ck_assert_int_eq(rename(tmp, path), 0);
    refresh();
    ck_assert_int_eq(found(1, NULL), 6); /* the new file's */
    ck_assert_int_eq(found(2, NULL), 2); /* kept from the old one */
    ck_assert_int_eq(found(3, NULL), 3);
    ck_assert_int_eq(deleted_fds(), 0); /* the old file is not held open */
    /* and a compaction by this process writes what the file has and what it tuned, not
     * what the file lost (keys 2 and 3: a compaction by another process keeps every
     * record, so the file lost them to `xmatune cache clear`, and they stay cleared) */
    for (int i = 0; i < 12; i++)
        store_key(4, 10 + i);
    cache_at("outlive.jsonl", path, sizeof path);
    for (uint8_t k = 1; k <= 4; k++)
        ck_assert_int_eq(found(k, NULL), k == 1 ? 6 : k == 4 ? 21 : -2);
    ck_assert_int_eq(deleted_fds(), 0);
    xmt_cache_free();
    ck_assert_int_eq(fd_on(path), -1); /* closed at the end */
}
END_TEST

/* Compaction in this process: every record still found, in this process (pointing into
 * the new file) and in the next, and the file within twice its live records. */
START_TEST(cache_compaction_keeps_every_record)
{
    char path[300];
    cache_at("compact.jsonl", path, sizeof path);
    for (uint8_t k = 1; k <= 5; k++)
        store_key(k, k);
    for (int i = 0; i < 30; i++)
        store_key((uint8_t)(1 + i % 2), 100 + i);
    ck_assert_int_eq(found(1, NULL), 128);
    ck_assert_int_eq(found(2, NULL), 129);
    for (uint8_t k = 3; k <= 5; k++)
        ck_assert_int_eq(found(k, NULL), k);
    ck_assert_int_eq(deleted_fds(), 0);
    records_seen = 0;
    ck_assert_int_eq(xmt_cacherec_read(path, count_record, NULL, NULL), 0);
    ck_assert_int_le(records_seen, 10);
    cache_at("compact.jsonl", path, sizeof path);
    ck_assert_int_eq(found(1, NULL), 128);
    for (uint8_t k = 3; k <= 5; k++)
        ck_assert_int_eq(found(k, NULL), k);
    xmt_cache_free();
}
END_TEST

/* A program that closes descriptors it did not open, and opens another file on the
 * number: the shim reads its file again by path, and never closes the program's file. */
START_TEST(cache_descriptor_taken_by_the_program)
{
    char path[300];
    cache_at("fd.jsonl", path, sizeof path);
    for (uint8_t k = 1; k <= 3; k++)
        store_key(k, k);
    cache_at("fd.jsonl", path, sizeof path);
    int fd = fd_on(path);
    ck_assert_int_ge(fd, 0);
    int null = open("/dev/null", O_RDONLY);
    ck_assert_int_eq(dup2(null, fd), fd); /* the program's file on the shim's number now */
    close(null);
    for (uint8_t k = 1; k <= 3; k++)
        ck_assert_int_eq(found(k, NULL), k);
    int fd2 = fd_on(path); /* the file's new descriptor, taken over too before the exit */
    ck_assert_int_ge(fd2, 0);
    null = open("/dev/null", O_RDONLY);
    ck_assert_int_eq(dup2(null, fd2), fd2);
    close(null);
    xmt_cache_free();
    ck_assert_int_ne(fcntl(fd2, F_GETFD), -1);
    close(fd2);
    ck_assert_int_ne(fcntl(fd, F_GETFD), -1); /* still open: not the shim's to close */
    char to[64];
    ck_assert_int_eq(fd_link(fd, to, sizeof to), 0);
    ck_assert_str_eq(to, "/dev/null");
    close(fd);
}
END_TEST

/* A file edited in place (same inode, same size): a lookup reads the line as it is now,
 * and a winner other than the one verified here is not taken as verified. A file cut
 * short and written anew: what it no longer holds is not found. */
START_TEST(cache_file_edited_in_place)
{
    char path[300];
    cache_at("edit.jsonl", path, sizeof path);
    store_key(1, 3);
    store_key(2, 4);
    cache_at("edit.jsonl", path, sizeof path);
    int chk = 1;
    ck_assert_int_eq(found(1, &chk), 3);
    ck_assert(!chk); /* read from the file: not verified in this process yet */
    uint8_t one = 1;
    xmt_cache_checked(&test_id, &one, 1, 0);
    ck_assert_int_eq(found(1, &chk), 3);
    ck_assert(chk);
    /* "index":3,"label":"B=3" becomes "index":7,"label":"B=7", in place */
    FILE *f = fopen(path, "r+");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    char *at = strstr(buf, "\"index\":3,\"label\":\"B=3\"");
    ck_assert_ptr_nonnull(at);
    at[8] = '7';
    at[20] = '7';
    rewind(f);
    fwrite(buf, 1, n, f);
    fclose(f);
    ck_assert_int_eq(found(1, &chk), 7);
    ck_assert(!chk); /* another winner than the one verified: verified again */
    /* cut short and written anew: key 2 only, at another offset (key 1 is gone) */
    f = fopen(path, "w");
    fputs("\n", f);
    fclose(f);
    store_key(2, 9);
    ck_assert_int_eq(found(2, NULL), 9);
    ck_assert_int_eq(found(1, NULL), -2);
    xmt_cache_free();
}
END_TEST

/* A killed writer's partial last line: the next store ends it and appends after it; the
 * record then points at its own line (found without reading the file again: the shim's
 * descriptor on it stays the same). */
START_TEST(cache_store_after_a_partial_line)
{
    char path[300];
    cache_at("partial.jsonl", path, sizeof path);
    store_key(1, 3);
    cache_at("partial.jsonl", path, sizeof path);
    FILE *f = fopen(path, "a");
    fputs("{\"v\":2,\"device\":\"trunc", f);
    fclose(f);
    store_key(2, 4);
    int fd = fd_on(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(found(2, NULL), 4);
    ck_assert_int_eq(fd_on(path), fd); /* not read again */
    ck_assert_int_eq(found(1, NULL), 3);
    cache_at("partial.jsonl", path, sizeof path);
    ck_assert_int_eq(found(2, NULL), 4);
    xmt_cache_free();
}
END_TEST

/* A record too long for any reader (a policy entry's pattern of 17,000 bytes) is not
 * written: the next load would count it a bad line. */
START_TEST(cache_line_too_long_not_written)
{
    char path[300];
    cache_at("long.jsonl", path, sizeof path);
    static char entry[17000];
    memset(entry, 'x', sizeof entry - 1);
    xmt_cache_id id = test_id;
    id.entry = entry;
    uint8_t k = 1;
    xmt_choice c = {.index = 3, .label = "B=3", .time_ms = 0.5, .data = ""}, got;
    xmt_cache_store(&id, &k, 1, 0, "n=1", &c);
    store_key(2, 4);
    int chk;
    ck_assert(!xmt_cache_find(&id, &k, 1, 0, &got, &chk));
    records_seen = 0;
    ck_assert_int_eq(xmt_cacherec_read(path, count_record, NULL, NULL), 0); /* no bad line */
    ck_assert_int_eq(records_seen, 1);
    xmt_cache_free();
}
END_TEST

/* A record of a newer format (a later xmatune's) was called "of an older format". */
START_TEST(cache_newer_format_said)
{
    char path[300], err[4096];
    snprintf(path, sizeof path, "%s/newer.jsonl", tmpdir);
    FILE *f = fopen(path, "w");
    fputs(
        "{\"v\":3,\"device\":\"d\",\"kernel\":\"k\",\"entry\":\"e\",\"key\":\"00\",\"index\":2}\n",
        f);
    fclose(f);
    setenv("XMATUNE_CACHE", path, 1);
    xmt_options_load(test_warn);
    xmt_cache_free();
    capture_stderr(xmt_cache_load, err, sizeof err);
    ck_assert_msg(strstr(err, "1 record(s) of a newer format (written by a later xmatune) were "
                              "skipped (this one reads format 2"),
                  "%s", err);
    ck_assert_ptr_null(strstr(err, "older"));
    xmt_cacherec_other old;
    ck_assert_int_eq(xmt_cacherec_read(path, count_record, NULL, &old), 0);
    ck_assert(old.older == 0 && old.newer == 1);
    xmt_cache_free();
}
END_TEST

/* ...and said (once): every run tunes that key again. */
static void store_long(void)
{
    static char kernel[17000];
    memset(kernel, 'k', sizeof kernel - 1);
    xmt_cache_id id = test_id;
    id.kernel = kernel;
    uint8_t k = 1;
    xmt_choice c = {.index = 3, .label = "B=3", .time_ms = 0.5, .data = ""};
    xmt_cache_store(&id, &k, 1, 0, "n=1", &c);
    xmt_cache_store(&id, &k, 1, 0, "n=1", &c);
}

START_TEST(cache_line_too_long_said)
{
    char path[300], err[4096];
    cache_at("long-said.jsonl", path, sizeof path);
    capture_stderr(store_long, err, sizeof err);
    const char *m = strstr(err, "is longer than a record may be (16384 bytes): not cached, so "
                                "every run tunes that key again");
    ck_assert_msg(m, "%s", err);
    ck_assert_ptr_null(strstr(m + 20, "longer than a record may be")); /* once */
    xmt_cache_free();
}
END_TEST

/* Appends another process's record of key k (choice index) to path. */
static void other_record(const char *path, uint8_t k, long index)
{
    char key_hex[3];
    xmt_cacherec_hex(&k, 1, key_hex);
    xmt_cacherec r = {.device = test_id.device,
                      .kernel = test_id.kernel,
                      .code = test_id.code,
                      .entry = test_id.entry,
                      .entry_fp = test_id.entry_fp,
                      .key_hex = key_hex,
                      .key_text = "n=1",
                      .choice = {index, "B=x", 0.25}};
    char *line = xmt_cacherec_format(&r);
    FILE *f = fopen(path, "a");
    fputs(line, f);
    fclose(f);
    free(line);
}

static unsigned char keys_seen[256];
static void note_key(void *ud, const xmt_cacherec *r)
{
    (void)ud;
    keys_seen[strtoul(r->key_hex, NULL, 16) & 255] = 1;
}

/* `xmatune cache clear` under a running process (an empty file renamed over the one it
 * read): the process's next compaction writes back what it tuned itself, not the
 * cleared records it still has in memory (issue 25: it wrote back 40 of 40). */
START_TEST(cache_cleared_records_stay_cleared)
{
    char path[300], tmp[320];
    snprintf(path, sizeof path, "%s/cleared.jsonl", tmpdir);
    unlink(path);
    for (uint8_t k = 1; k <= 10; k++)
        other_record(path, k, k);
    cache_at("cleared.jsonl", path, sizeof path);
    store_key(20, 1); /* this process's own */
    ck_assert_int_eq(found(3, NULL), 3);
    snprintf(tmp, sizeof tmp, "%s.clear", path);
    fclose(fopen(tmp, "w"));
    ck_assert_int_eq(rename(tmp, path), 0);
    refresh();
    ck_assert_int_eq(found(3, NULL), 3); /* a process goes on using what it had loaded */
    for (int i = 0; i < 12; i++)         /* past twice the live records: compacted */
        store_key(21, 10 + i);
    memset(keys_seen, 0, sizeof keys_seen);
    ck_assert_int_eq(xmt_cacherec_read(path, note_key, NULL, NULL), 0);
    for (int k = 0; k < 256; k++) /* keys 20 and 21, none of the cleared ones */
        ck_assert_int_eq(keys_seen[k], k == 20 || k == 21);
    cache_at("cleared.jsonl", path, sizeof path);
    ck_assert_int_eq(found(3, NULL), -2);
    ck_assert_int_eq(found(20, NULL), 1);
    ck_assert_int_eq(found(21, NULL), 21);
    xmt_cache_free();
}
END_TEST

/* A claim from another machine (another boot id) is live for the claims' age cap from its
 * time stamp; one dated far in the future (a clock ahead) expired as never. */
START_TEST(cache_remote_claim_age_capped)
{
    char path[300], claims[320];
    snprintf(path, sizeof path, "%s/claims.jsonl", tmpdir);
    snprintf(claims, sizeof claims, "%s.claims", path);
    long long now = (long long)time(NULL);
    long cap = XMT_CLAIM_AGE_MIN_S;
    FILE *f = fopen(claims, "w");
    fprintf(f, "aaaa 1 1 another-boot %lld\n", now - 10);          /* live */
    fprintf(f, "bbbb 1 1 another-boot %lld\n", now + 86400 * 365); /* a year ahead */
    fprintf(f, "cccc 1 1 another-boot %lld\n", now - 2 * cap);
    fprintf(f, "dddd 1 1 another-boot %lld\n", now + 10); /* a clock a little ahead */
    fclose(f);
    ck_assert_int_eq(xmt_cachefile_claim(path, "aaaa", cap, NULL), XMT_CLAIM_THEIRS);
    ck_assert_int_eq(xmt_cachefile_claim(path, "bbbb", cap, NULL), XMT_CLAIM_MINE);
    ck_assert_int_eq(xmt_cachefile_claim(path, "cccc", cap, NULL), XMT_CLAIM_MINE);
    ck_assert_int_eq(xmt_cachefile_claim(path, "dddd", cap, NULL), XMT_CLAIM_THEIRS);
    xmt_cachefile_unclaim(path, NULL, cap);
}
END_TEST

/* /proc/PID/stat's start time (field 22), as a claim names a process. */
static unsigned long long start_time(long pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = strrchr(buf, ')');
    ck_assert_ptr_nonnull(s);
    for (int field = 2; *s && field < 22; s++)
        if (*s == ' ') field++;
    return strtoull(s, NULL, 10);
}

/* The claims file's one line with what its time stamp moved by shift seconds and its
 * process made pid 1 (alive for ever, as a group member may forge it). */
static void forge_claim(const char *claims, long long shift)
{
    char line[512], what[64], boot[64], host[128];
    long pid;
    unsigned long long start;
    long long when;
    FILE *f = fopen(claims, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_int_eq(
        sscanf(line, "%63s %ld %llu %63s %lld %127s", what, &pid, &start, boot, &when, host), 6);
    f = fopen(claims, "w");
    fprintf(f, "%s 1 %llu %s %lld %s\n", what, start_time(1), boot, when + shift, host);
    fclose(f);
}

/* A group member's forged claim (pid 1, alive, this machine) kept a key from ever being
 * tuned, and silently: a claim older than the cap is ignored whoever made it (dated
 * ahead too), and a key that waits on one is told whose claim it is, once. */
START_TEST(cache_forged_claim_capped_and_said)
{
    char path[300], claims[320], text[8192];
    cache_at("forged.jsonl", path, sizeof path);
    snprintf(claims, sizeof claims, "%s.claims", path);
    long cap = xmt_cachefile_claim_max_age_s(xmt_opt.budget_ms, xmt_opt.trial_timeout_ms);
    ck_assert_int_eq(cap, XMT_CLAIM_AGE_MIN_S); /* no budget: the floor */
    /* derived from a per-key budget when that is longer: twice it and a helper's start */
    ck_assert_int_eq(xmt_cachefile_claim_max_age_s(1000e3, 30000), 2030 + 1);
    ck_assert_int_eq(xmt_cachefile_claim_max_age_s(1000, 30000), XMT_CLAIM_AGE_MIN_S);
    uint8_t k = 7;
    xmt_choice got;
    int chk;
    xmt_cache_wait w;
    /* this process's claim: the line to forge from */
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, &w), XMT_CACHE_TUNE);
    forge_claim(claims, 0); /* pid 1's now */
    memset(&w, 0, sizeof w);
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, &w), XMT_CACHE_WAIT);
    ck_assert_int_eq(w.who.pid, 1);
    ck_assert(w.who.this_machine);
    ck_assert_int_eq(w.max_age_s, cap);
    ck_assert(w.who.age_s >= 0 && w.who.age_s < 60 && w.who.left_s == cap - w.who.age_s);
    ck_assert(w.first);
    xmt_cache_wait_text(&w, text, sizeof text);
    ck_assert_msg(strstr(text, "waits for process 1 on this machine, which claimed it ") &&
                      strstr(text, "for at most") == NULL && strstr(text, "s more at most") &&
                      strstr(text, "(a claim older than 600 s is ignored)") && strstr(text, claims),
                  "%s", text);
    /* looked at again: still waiting, not said again */
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, &w), XMT_CACHE_WAIT);
    ck_assert(!w.first);
    /* older than the cap, or dated as far ahead: ignored, the key is this process's */
    forge_claim(claims, -cap - 5);
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, &w), XMT_CACHE_TUNE);
    xmt_cache_unclaim(&test_id, &k, 1);
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, &w), XMT_CACHE_TUNE);
    forge_claim(claims, cap + 5);
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, &w), XMT_CACHE_TUNE);
    xmt_cache_unclaim(&test_id, &k, 1);
    /* a claim from another machine names its host, as its line says */
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, &w), XMT_CACHE_TUNE);
    char line[512], what[64];
    FILE *f = fopen(claims, "r");
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_int_eq(sscanf(line, "%63s", what), 1);
    f = fopen(claims, "w");
    fprintf(f, "%s 42 1 another-boot %lld gpu\x1b[31m7\n", what, (long long)time(NULL) - 20);
    fclose(f);
    ck_assert_int_eq(xmt_cache_claim(&test_id, &k, 1, 0, &got, &chk, &w), XMT_CACHE_WAIT);
    ck_assert(!w.first); /* key 7 was said already */
    ck_assert(w.who.pid == 42 && !w.who.this_machine);
    xmt_cache_wait_text(&w, text, sizeof text);
    ck_assert_msg(strstr(text, "waits for process 42 on host gpu__31m7, which claimed it 2") &&
                      strstr(text, " s ago in "),
                  "%s", text);
    xmt_cache_free();
}
END_TEST

/* The cache file follows the umask as its .lock and .claims do: it was made 0644 whatever
 * the umask, so that in a team's setgid folder (umask 002) the second user could not
 * write it. Under umask 002: group-writable after the first write, after a compaction
 * (a new file renamed over it) and when a rewrite makes it (`xmatune cache import`). */
static const char *no_lines(void *ud, size_t *len)
{
    (void)ud, (void)len;
    return NULL;
}

START_TEST(cache_file_follows_umask)
{
    char path[300], fresh[320];
    mode_t old = umask(002);
    cache_at("umask.jsonl", path, sizeof path);
    store_key(1, 1);
    struct stat st, was;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg((st.st_mode & 0777) == 0664, "made %o", st.st_mode & 0777);
    for (int round = 0; round < 2; round++) {
        /* held open: its inode cannot be the new file's */
        int held = open(path, O_RDONLY);
        ck_assert_int_ge(held, 0);
        ck_assert_int_eq(fstat(held, &was), 0);
        /* a rewrite keeps the mode the file has (its owner's choice) */
        if (round == 1) ck_assert_int_eq(chmod(path, 0640), 0);
        for (int i = 0; i < 12; i++)
            store_key(1, 10 + i);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_msg(st.st_ino != was.st_ino, "not compacted"); /* a new file */
        ck_assert_msg((st.st_mode & 0777) == (round ? 0640 : 0664), "compacted to %o",
                      st.st_mode & 0777);
        close(held);
    }
    xmt_cache_free();
    snprintf(fresh, sizeof fresh, "%s/fresh.jsonl", tmpdir);
    ck_assert_int_eq(xmt_cachefile_rewrite(fresh, no_lines, NULL), 0);
    ck_assert_int_eq(stat(fresh, &st), 0);
    ck_assert_msg((st.st_mode & 0777) == 0664, "rewritten to %o", st.st_mode & 0777);
    umask(077);
    ck_assert_int_eq(unlink(fresh), 0);
    ck_assert_int_eq(xmt_cachefile_rewrite(fresh, no_lines, NULL), 0);
    ck_assert_int_eq(stat(fresh, &st), 0);
    ck_assert_msg((st.st_mode & 0777) == 0600, "rewritten to %o", st.st_mode & 0777);
    umask(old);
}
END_TEST

/* A cache file anyone may write, a symlink, a FIFO: refused with a message, never
 * blocking, never written. */
START_TEST(cache_untrusted_files_refused)
{
    char path[300], link[300], fifo[300], err[4096];
    snprintf(path, sizeof path, "%s/open.jsonl", tmpdir);
    FILE *f = fopen(path, "w");
    fclose(f);
    chmod(path, 0666);
    setenv("XMATUNE_CACHE", path, 1);
    xmt_options_load(test_warn);
    capture_stderr(xmt_cache_load, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "may be written by anyone (mode 666): not used"));
    const uint8_t key[] = {1};
    xmt_choice a = {.index = 3, .label = "BLOCK=256", .time_ms = 0.5, .data = ""};
    xmt_cache_id id = {"d", "k", "c", "e", "f"};
    xmt_cache_store(&id, key, sizeof key, 0, "n=1", &a);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 0); /* not written */
    snprintf(link, sizeof link, "%s/link.jsonl", tmpdir);
    chmod(path, 0644);
    ck_assert_int_eq(symlink(path, link), 0);
    setenv("XMATUNE_CACHE", link, 1);
    xmt_options_load(test_warn);
    capture_stderr(xmt_cache_load, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "it is a symbolic link: not used"));
    snprintf(fifo, sizeof fifo, "%s/fifo.jsonl", tmpdir);
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    setenv("XMATUNE_CACHE", fifo, 1);
    xmt_options_load(test_warn);
    capture_stderr(xmt_cache_load, err, sizeof err);
    ck_assert_ptr_nonnull(strstr(err, "is not a regular file: not used"));
    xmt_cache_free();
}
END_TEST

/* The identity fields every record line needs, for the tests that add one field to them. */
#define REC_HEAD                                                                                   \
    "{\"v\":2,\"device\":\"d\",\"kernel\":\"k\",\"code\":\"c\",\"entry\":\"e\","                   \
    "\"entry_fp\":\"f\",\"key\":\"00\","

/* What the one reader skips: the shim and `xmatune cache` both count exactly these. */
START_TEST(cacherec_skips_what_is_not_a_record)
{
    char path[300];
    snprintf(path, sizeof path, "%s/rec.jsonl", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("garbage\n"
          "{\"a\":1}\n"
          "\n"
          "[1, 2]\n" REC_HEAD "\"index\":-2}\n" REC_HEAD "\"index\":\"\"}\n"
          "{\"v\":2,\"device\":\"d\",\"kernel\":\"k\",\"entry\":\"e\",\"key\":\"00\",\"index\":2}"
          "\n" REC_HEAD "\"index\":2}\n",
          f);
    fclose(f);
    records_seen = 0;
    ck_assert_int_eq(xmt_cacherec_read(path, count_record, NULL, NULL), 6);
    ck_assert_int_eq(records_seen, 1);
    ck_assert_int_eq(xmt_cacherec_read("/nonexistent/x", count_record, NULL, NULL), -1);
    /* The writer's line reads back as the same record. */
    xmt_cacherec r = {.device = "GPU \"q\"",
                      .kernel = "_Z1kv",
                      .code = "c0de",
                      .entry = "match: k",
                      .entry_fp = "e17e",
                      .key_hex = "0a0b",
                      .key_text = "n=1",
                      .choice = {3, "B=1", 0.5}};
    char *line = xmt_cacherec_format(&r);
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(line[strlen(line) - 1], '\n');
    f = fopen(path, "w");
    fputs(line, f);
    fclose(f);
    free(line);
    records_seen = 0;
    ck_assert_int_eq(xmt_cacherec_read(path, count_record, NULL, NULL), 0);
    ck_assert_int_eq(records_seen, 1);
}
END_TEST

/* A record whose "v" is a number but not a small integer (a fraction, an exponent, more
 * digits than any version has) is not a record: the reader read v uninitialized there and
 * counted the line as of an older or a newer format at random (a Release build's
 * -Werror said so). A version that is an integer is older or newer as it says. */
START_TEST(cacherec_version_not_a_small_integer)
{
    static const char *const bad[] = {
        "2.0", "2e0", "1e3", "-0.5", "3.5", "99999999999999999999", "-99999999999999999999"};
    char line[512], scratch[XMT_CACHEREC_SCRATCH(512)], path[300];
    snprintf(path, sizeof path, "%s/v.jsonl", tmpdir);
    FILE *f = fopen(path, "w");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int n = snprintf(line, sizeof line,
                         "{\"v\":%s,\"device\":\"d\",\"kernel\":\"k\",\"code\":\"c\","
                         "\"entry\":\"e\",\"entry_fp\":\"f\",\"key\":\"00\",\"index\":2}",
                         bad[i]);
        xmt_cacherec r;
        ck_assert_msg(xmt_cacherec_parse(line, (size_t)n, scratch, &r) == -1, "v %s: %d", bad[i],
                      xmt_cacherec_parse(line, (size_t)n, scratch, &r));
        fprintf(f, "%s\n", line);
    }
    static const struct {
        const char *v;
        int want;
    } versions[] = {{"1", 1}, {"0", 1}, {"-3", 1}, {"3", 2}, {"123456789012345678", 2}};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        int n = snprintf(line, sizeof line,
                         "{\"v\":%s,\"device\":\"d\",\"kernel\":\"k\",\"code\":\"c\","
                         "\"entry\":\"e\",\"entry_fp\":\"f\",\"key\":\"00\",\"index\":2}",
                         versions[i].v);
        xmt_cacherec r;
        ck_assert_msg(xmt_cacherec_parse(line, (size_t)n, scratch, &r) == versions[i].want, "v %s",
                      versions[i].v);
    }
    fclose(f);
    xmt_cacherec_other old;
    records_seen = 0;
    ck_assert_int_eq(xmt_cacherec_read(path, count_record, NULL, &old), 7);
    ck_assert_int_eq(records_seen, 0);
    ck_assert(old.older == 0 && old.newer == 0);
}
END_TEST

/* A record's data digest (docs/log.md, the on-disk cache): the writer's line carries it
 * and reads back with it (the writer's fast shape); a record written before the field
 * existed still loads, without one; anything but 16 hex digits reads as none. */
START_TEST(cacherec_data_digest)
{
    xmt_cacherec r = {
        .device = "d",
        .kernel = "_Z1kv",
        .code = "c0de",
        .entry = "match: k",
        .entry_fp = "e17e",
        .key_hex = "0a0b",
        .key_text = "n=1",
        .choice = {.index = 3, .label = "B=1", .time_ms = 0.5, .data = "0123456789abcdef"}};
    char *line = xmt_cacherec_format(&r);
    ck_assert_ptr_nonnull(line);
    ck_assert_ptr_nonnull(strstr(line, ",\"data\":\"0123456789abcdef\"}"));
    size_t len = strlen(line) - 1;
    char scratch[XMT_CACHEREC_SCRATCH(1024)];
    xmt_cacherec got;
    ck_assert_int_eq(xmt_cacherec_parse(line, len, scratch, &got), 0);
    ck_assert_str_eq(got.choice.data, "0123456789abcdef");
    ck_assert_str_eq(got.choice.label, "B=1");
    ck_assert_int_eq(got.choice.index, 3);
    free(line);
    const char *older = "{\"v\":2,\"device\":\"d\",\"kernel\":\"k\",\"code\":\"c\","
                        "\"entry\":\"e\",\"entry_fp\":\"f\",\"key\":\"00\",\"key_text\":\"\","
                        "\"index\":2,\"label\":\"B=2\",\"time_ms\":0.25}";
    ck_assert_int_eq(xmt_cacherec_parse(older, strlen(older), scratch, &got), 0);
    ck_assert_str_eq(got.choice.data, "");
    ck_assert_str_eq(got.choice.label, "B=2");
    const char *bad[] = {"\"data\":\"0123\"", "\"data\":\"0123456789ABCDEF\"",
                         "\"data\":\"0123456789abcdef0\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char l[512];
        snprintf(l, sizeof l, REC_HEAD "\"index\":2,%s}", bad[i]);
        ck_assert_int_eq(xmt_cacherec_parse(l, strlen(l), scratch, &got), 0);
        ck_assert_str_eq(got.choice.data, "");
    }
    /* a data field that is not a string: not a record (as for every text field) */
    const char *num = REC_HEAD "\"index\":2,\"data\":5}";
    ck_assert_int_eq(xmt_cacherec_parse(num, strlen(num), scratch, &got), -1);
}
END_TEST

/* A record's outcome fields (every outcome is a record: docs/cache.md) round-trip; a timed
 * decision's line has none of them; an outcome with a candidate's index, or a re-check count
 * that is not a small non-negative integer, is not a record. */
START_TEST(cacherec_outcome_fields)
{
    xmt_cacherec r = {.device = "d",
                      .kernel = "_Z1kv",
                      .code = "c0de",
                      .entry = "match: k",
                      .entry_fp = "e17e",
                      .key_hex = "0a0b",
                      .key_text = "n=1",
                      .choice = {.index = XMT_OWN_CONFIG, .label = "own"}};
    snprintf(r.choice.outcome, sizeof r.choice.outcome, "%s", XMT_OUTCOME_UNTOLD);
    snprintf(r.choice.why, sizeof r.choice.why, "its outputs never changed");
    snprintf(r.choice.origin, sizeof r.choice.origin, "import");
    r.choice.rechecked = 3;
    r.choice.rechecks = 4;
    char *line = xmt_cacherec_format(&r);
    ck_assert_ptr_nonnull(line);
    char scratch[XMT_CACHEREC_SCRATCH(1024)];
    xmt_cacherec got;
    ck_assert_int_eq(xmt_cacherec_parse(line, strlen(line) - 1, scratch, &got), 0);
    ck_assert_str_eq(got.choice.outcome, "untold");
    ck_assert_str_eq(got.choice.why, "its outputs never changed");
    ck_assert_str_eq(got.choice.origin, "import");
    ck_assert_int_eq(got.choice.rechecked, 3);
    ck_assert_int_eq(got.choice.rechecks, 4);
    ck_assert_int_eq(got.choice.index, XMT_OWN_CONFIG);
    free(line);
    xmt_cacherec w = r;
    w.choice = (xmt_choice){.index = 2, .label = "B=2", .time_ms = 0.5};
    line = xmt_cacherec_format(&w);
    ck_assert_ptr_null(strstr(line, "outcome"));
    ck_assert_ptr_null(strstr(line, "rechecked"));
    ck_assert_ptr_null(strstr(line, "rechecks"));
    ck_assert_int_eq(xmt_cacherec_parse(line, strlen(line) - 1, scratch, &got), 0);
    ck_assert_str_eq(got.choice.outcome, "");
    ck_assert_int_eq(got.choice.rechecked, 0);
    ck_assert_int_eq(got.choice.rechecks, 0);
    free(line);
    const char *bad[] = {"\"index\":2,\"outcome\":\"untold\"", "\"index\":-1,\"rechecked\":-1",
                         "\"index\":-1,\"rechecked\":1.5",     "\"index\":-1,\"outcome\":7",
                         "\"index\":2,\"rechecks\":-1",        "\"index\":2,\"rechecks\":\"4\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char l[512];
        snprintf(l, sizeof l, REC_HEAD "%s}", bad[i]);
        ck_assert_msg(xmt_cacherec_parse(l, strlen(l), scratch, &got) == -1, "%s", l);
    }
}
END_TEST

/* A record's faults (the candidates that faulted at its key: docs/tuning.md, "Fault
 * families") round-trip; a line without them has none; a value not of the writer's shape
 * (anything but numbers separated by single spaces, or longer than the field) reads as none,
 * the record kept; one that is not a string makes the line no record. */
START_TEST(cacherec_faults_field)
{
    xmt_cacherec r = {.device = "d",
                      .kernel = "_Z1kv",
                      .code = "c0de",
                      .entry = "match: k",
                      .entry_fp = "e17e",
                      .key_hex = "0a0b",
                      .key_text = "n=1",
                      .choice = {.index = 5, .label = "B=256", .faults = "0 35"}};
    char *line = xmt_cacherec_format(&r);
    ck_assert_ptr_nonnull(strstr(line, "\"faults\":\"0 35\""));
    char scratch[XMT_CACHEREC_SCRATCH(1024)];
    xmt_cacherec got;
    ck_assert_int_eq(xmt_cacherec_parse(line, strlen(line) - 1, scratch, &got), 0);
    ck_assert_str_eq(got.choice.faults, "0 35");
    free(line);
    r.choice.faults[0] = 0;
    line = xmt_cacherec_format(&r);
    ck_assert_ptr_null(strstr(line, "faults"));
    free(line);
    char longer[200] = "";
    for (int i = 0; i < 40; i++)
        snprintf(longer + strlen(longer), sizeof longer - strlen(longer), "%s%d", i ? " " : "", i);
    const char *junk[] = {"0,35", " 0", "0 ", "0  35", "-1", "x", longer};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        char l[1024];
        snprintf(l, sizeof l, REC_HEAD "\"index\":2,\"faults\":\"%s\"}", junk[i]);
        ck_assert_msg(xmt_cacherec_parse(l, strlen(l), scratch, &got) == 0, "%s", l);
        ck_assert_msg(!got.choice.faults[0], "%s: %s", l, got.choice.faults);
    }
    const char *bad = REC_HEAD "\"index\":2,\"faults\":0}";
    ck_assert_int_eq(xmt_cacherec_parse(bad, strlen(bad), scratch, &got), -1);
}
END_TEST

/* A partial record's decided candidates (docs/tuning.md, "Resuming a session cut at exit")
 * round-trip with its outcome; a line without them (an older record) has none; a value not of
 * the writer's shape reads as none, the record kept. */
START_TEST(cacherec_decided_field)
{
    xmt_cacherec r = {.device = "d",
                      .kernel = "_Z1kv",
                      .code = "c0de",
                      .entry = "match: k",
                      .entry_fp = "e17e",
                      .key_hex = "0a0b",
                      .key_text = "n=1",
                      .choice = {.index = XMT_OWN_CONFIG}};
    xmt_choice_outcome(&r.choice, XMT_OUTCOME_PARTIAL, "cut");
    snprintf(r.choice.decided, sizeof r.choice.decided, "%s", "1 4 9");
    char *line = xmt_cacherec_format(&r);
    ck_assert_ptr_nonnull(strstr(line, "\"decided\":\"1 4 9\""));
    char scratch[XMT_CACHEREC_SCRATCH(1024)];
    xmt_cacherec got;
    ck_assert_int_eq(xmt_cacherec_parse(line, strlen(line) - 1, scratch, &got), 0);
    ck_assert_str_eq(got.choice.decided, "1 4 9");
    ck_assert_str_eq(got.choice.outcome, "partial");
    free(line);
    r.choice.decided[0] = 0;
    line = xmt_cacherec_format(&r);
    ck_assert_ptr_null(strstr(line, "decided"));
    free(line);
    const char *junk[] = {"1,4", " 1", "1 ", "1  4", "-1", "x"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        char l[1024];
        snprintf(l, sizeof l,
                 REC_HEAD "\"index\":-1,\"outcome\":\"partial\","
                          "\"decided\":\"%s\"}",
                 junk[i]);
        ck_assert_msg(xmt_cacherec_parse(l, strlen(l), scratch, &got) == 0, "%s", l);
        ck_assert_msg(!got.choice.decided[0], "%s: %s", l, got.choice.decided);
    }
}
END_TEST

/* Breaks the cache index (what: XMT_CACHE_BREAK_*) and runs the checker. */
static void break_and_check(int what)
{
    xmt_cache_test_break(what);
    xmt_cache_check();
}

static int aborts_saying(int what, const char *want)
{
    return aborts_saying_fn(break_and_check, what, want);
}

/* The cache's invariant checks (shim/base/invariant.h) hold through stores and a reload, and
 * stop the process, saying what broke, on an index slot that points past the records and
 * on a record that points past what was read of the file. */
START_TEST(cache_invariants_checked)
{
    char path[300];
    snprintf(path, sizeof path, "%s/inv.jsonl", tmpdir);
    setenv("XMATUNE_CACHE", path, 1);
    xmt_options_load(test_warn);
    xmt_cache_free();
    xmt_cache_load();
    xmt_choice a = {.index = 3, .label = "BLOCK=256", .time_ms = 0.5, .data = ""};
    for (uint8_t k = 0; k < 40; k++)
        xmt_cache_store(&test_id, &k, 1, 0, "n=1", &a); /* checked after each */
    xmt_cache_check();
    ck_assert(aborts_saying(XMT_CACHE_BREAK_SLOT, "cache: slot "));
    ck_assert(aborts_saying(XMT_CACHE_BREAK_OFFSET, "past the"));
    xmt_cache_free();
    xmt_cache_load(); /* checked after the load */
    xmt_cache_check();
    ck_assert(aborts_saying(XMT_CACHE_BREAK_OFFSET, "past the"));
    xmt_cache_free();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shim");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, options_defaults);
    tcase_add_test(tc, options_bad_values_warn_and_keep_default);
    tcase_add_test(tc, options_unknown_mode_is_off);
    tcase_add_test(tc, options_print_and_markdown);
    tcase_add_test(tc, log_expand_path);
    tcase_add_test(tc, assert_says_once_and_goes_on);
    tcase_add_test(tc, log_messages_capped);
    tcase_add_test(tc, log_max_messages_zero_is_silence);
    tcase_add_test(tc, options_nan_rejected);
    tcase_add_test(tc, log_events_lines_and_lazy_file);
    tcase_add_test(tc, cache_store_reload_last_wins);
    tcase_add_test(tc, cacherec_skips_what_is_not_a_record);
    tcase_add_test(tc, cacherec_data_digest);
    tcase_add_test(tc, cacherec_outcome_fields);
    tcase_add_test(tc, cacherec_faults_field);
    tcase_add_test(tc, cacherec_decided_field);
    tcase_add_test(tc, cacherec_version_not_a_small_integer);
    tcase_add_test(tc, cache_untrusted_files_refused);
    tcase_add_test(tc, cache_records_outlive_their_file);
    tcase_add_test(tc, cache_compaction_keeps_every_record);
    tcase_add_test(tc, cache_descriptor_taken_by_the_program);
    tcase_add_test(tc, cache_file_edited_in_place);
    tcase_add_test(tc, cache_line_too_long_not_written);
    tcase_add_test(tc, cache_line_too_long_said);
    tcase_add_test(tc, cache_newer_format_said);
    tcase_add_test(tc, cache_cleared_records_stay_cleared);
    tcase_add_test(tc, cache_remote_claim_age_capped);
    tcase_add_test(tc, cache_file_follows_umask);
    tcase_add_test(tc, cache_forged_claim_capped_and_said);
    tcase_add_test(tc, cache_store_after_a_partial_line);
    tcase_add_test(tc, cache_invariants_checked);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
