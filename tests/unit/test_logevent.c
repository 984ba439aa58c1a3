/*
 * The log's contract (common/logevent.c, common/logread.c) against its documentation:
 * every event, built by its builder with every field it can have, written as the shim
 * writes a line, read back by the tools' collector, has exactly the fields docs/log.md
 * lists for it (its table's first column), and docs/log.md documents no event the
 * builders do not know. A field added on one side only fails here.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logevent.h"
#include "logread.h"

#ifndef XMT_LOG_MD /* the build gives its absolute path */
#define XMT_LOG_MD "docs/log.md"
#endif

/* The fields docs/log.md lists for each event: "## `name`" (maybe followed by a remark)
 * opens an event's section, its
 * table's rows name fields in backquotes in their first cell ("`kernel`, `name`"). */
typedef struct {
    char name[64];
    json_t *fields; /* object used as a set */
} doc_event;

static doc_event docs[32];
static int ndocs;

static void add_backquoted(json_t *set, const char *cell, size_t len)
{
    const char *p = cell, *end = cell + len;
    while (p < end) {
        const char *a = memchr(p, '`', (size_t)(end - p));
        if (!a) return;
        const char *b = memchr(a + 1, '`', (size_t)(end - a - 1));
        if (!b) return;
        char f[128];
        snprintf(f, sizeof f, "%.*s", (int)(b - a - 1), a + 1);
        json_object_set_new(set, f, json_true());
        p = b + 1;
    }
}

static void read_docs(void)
{
    FILE *f = fopen(XMT_LOG_MD, "r");
    ck_assert_msg(f != NULL, "cannot open %s", XMT_LOG_MD);
    char line[4096];
    doc_event *cur = NULL;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "## ", 3)) {
            cur = NULL;
            char name[64];
            if (sscanf(line, "## `%63[a-z_]`", name) == 1 &&
                ndocs < (int)(sizeof docs / sizeof docs[0])) {
                cur = &docs[ndocs++];
                snprintf(cur->name, sizeof cur->name, "%s", name);
                cur->fields = json_object();
            }
            continue;
        }
        if (!cur || line[0] != '|') continue;
        const char *bar = strchr(line + 1, '|');
        if (bar) add_backquoted(cur->fields, line + 1, (size_t)(bar - line - 1));
    }
    (void)fclose(f); /* read only */
}

static const doc_event *doc_of(const char *name)
{
    for (int i = 0; i < ndocs; i++)
        if (!strcmp(docs[i].name, name)) return &docs[i];
    return NULL;
}

/* Every event, each field present (optional ones too). */
static json_t *build(xmt_event ev, int variant)
{
    static const uint32_t offsets[] = {0, 8}, sizes[] = {8, 4};
    static const unsigned g[3] = {4, 1, 1}, b[3] = {256, 1, 1};
    switch (ev) {
    case XMT_EV_START: return xmt_ev_start(42, "tune", "0.1.0", 3);
    case XMT_EV_KERNEL: {
        xmt_ev_kernel_info k = {"_Z1kPf", "k(float*)", 0, 1, 2,    offsets, sizes,
                                1,        1024,        0, 0, 12.5, 1,       NULL};
        return xmt_ev_kernel(&k);
    }
    case XMT_EV_KERNEL_SUMMARY: {
        /* variant 0: discover's per-device summary; 1: tune's per-kernel one */
        xmt_ev_summary_info s = {.kernel = "_Z1kPf",
                                 .name = "k(float*)",
                                 .launches = 5,
                                 .passed_through = 5,
                                 .policy = "p.yaml:3"};
        if (variant == 0) {
            s.discover = 1;
            s.paths = json_pack("[s]", "launch");
            s.shapes = json_pack("[o]", xmt_ev_shape(g, b, 0, 5));
            s.args = json_pack("[o]", xmt_ev_argset(g, b, 0, json_pack("[n]"), 5));
            s.rewritable = 1;
        } else {
            s.keys = 1;
            s.rewritten = 5;
            s.passed_through = 0;
        }
        return xmt_ev_kernel_summary(&s);
    }
    case XMT_EV_TUNE: {
        xmt_ev_tune_info t = {.kernel = "_Z1kPf",
                              .name = "k(float*)",
                              .key = "n=4",
                              .policy = "p.yaml:3",
                              .own = json_object(),
                              .candidates = json_array(),
                              .winner = json_object(),
                              .protect = json_string("declared"),
                              .iterations = 10,
                              .warmup = 5,
                              .benchmarked = 1,
                              .untuned = "why",
                              .error = json_string("CUDA_ERROR_UNKNOWN at x"),
                              .clock_warmup = json_object(),
                              .staged = json_object(),
                              .verification_ms = json_object(),
                              .driver_calls = json_object(),
                              .data = json_object(),
                              .race = json_object(),
                              .search = json_object(),
                              .rounding = json_object(),
                              .budget_cut = "verify"};
        return xmt_ev_tune(&t);
    }
    case XMT_EV_GRAPH_NODE:
        return xmt_ev_graph_node("_Z1kPf", "k(float*)", "n=4", "untuned", "why", "p.yaml:3");
    case XMT_EV_GRAPHS: return xmt_ev_graphs(1, 2, 3);
    case XMT_EV_SWITCH:
        return xmt_ev_switch("_Z1kPf", "k(float*)", "n=4", 0, variant ? "BLOCK=64" : NULL,
                             variant ? NULL : "BLOCK=64", variant ? "failed" : "tuned", 41.5);
    case XMT_EV_SNAPSHOT:
        return xmt_ev_snapshot("_Z1kPf", "k(float*)", "n=4", 0, "verify", 4096, 2,
                               json_pack("{sf}", "copy", 3.5), 12.5);
    case XMT_EV_CACHE_HIT:
        return xmt_ev_cache_hit("_Z1kPf", "k(float*)", "n=4", 0, "B=128", "", "", "used", "remote",
                                4.5);
    case XMT_EV_CACHE_LOAD: return xmt_ev_cache_load("/tmp/c.jsonl", 1, 2, 0, 0, 0.5, 4096);
    case XMT_EV_REPLAY_MISS:
        return xmt_ev_replay_miss("_Z1kPf", "k(float*)", "n=4", "p.yaml:3", 0, "no record");
    case XMT_EV_EXIT: return xmt_ev_exit(5, 5, 1, 42, json_pack("{si}", "cuLibraryLoadData", 1));
    case XMT_EV_MODULE_LOAD:
        return xmt_ev_module_load("cuModuleLoadData", "ELF", 5840, "copied", 0);
    case XMT_EV_RECHECK:
        return xmt_ev_recheck("_Z1kPf", "k(float*)", 0, "n=4", "p.yaml:3", "B=1", "failed", "why",
                              json_object(), "helper", 1.5);
    case XMT_EV_TRIAL_CHECK:
        return xmt_ev_trial_check("_Z1kPf", "k(float*)", "n=1", 0, 0, 4096, 12, "why");
    case XMT_EV_TRIAL_HELPER:
        return xmt_ev_trial_helper("gone", 0, 42, 1.5, 1, 1, 1, "00112233445566778899aabbccddeeff",
                                   "H200", "why", 1);
    case XMT_EV_COUNT: break;
    }
    return NULL;
}

/* The event written as the shim writes a line, then read back by the collector. */
static json_t *round_trip(json_t *built, xmt_event ev)
{
    char path[] = "/tmp/xmt_logevent_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    char *text = json_dumps(built, JSON_COMPACT | JSON_PRESERVE_ORDER);
    ck_assert_ptr_nonnull(text);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s\n", text);
    ck_assert_int_eq(fclose(f), 0);
    free(text);
    json_t *lists[XMT_EV_COUNT] = {0};
    lists[ev] = json_array();
    ck_assert_int_eq(xmt_log_collect(path, lists), 0);
    unlink(path);
    ck_assert_int_eq(json_array_size(lists[ev]), 1);
    json_t *back = json_incref(json_array_get(lists[ev], 0));
    json_decref(lists[ev]);
    return back;
}

/* "a, b" for the keys of one set that the other has not. */
static void missing(json_t *from, json_t *in, char *out, size_t cap)
{
    const char *k;
    json_t *v;
    out[0] = 0;
    json_object_foreach(from, k, v)
    {
        (void)v;
        if (json_object_get(in, k)) continue;
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", n ? ", " : "", k);
    }
}

START_TEST(every_event_matches_docs)
{
    read_docs();
    ck_assert_int_gt(ndocs, 0);
    for (int e = 0; e < XMT_EV_COUNT; e++)
        for (int variant = 0; variant < (e == XMT_EV_KERNEL_SUMMARY ? 2 : 1); variant++) {
            const char *name = xmt_event_name((xmt_event)e);
            const doc_event *d = doc_of(name);
            ck_assert_msg(d != NULL, "docs/log.md has no section \"## `%s`\"", name);
            json_t *built = build((xmt_event)e, variant);
            ck_assert_ptr_nonnull(built);
            json_t *back = round_trip(built, (xmt_event)e);
            ck_assert_int_eq(xmt_event_of(back), e);
            ck_assert(json_equal(built, back));
            json_object_del(back, XMT_F_EVENT); /* every event has it (docs/log.md, top) */
            char undoc[1024], unbuilt[1024];
            missing(back, d->fields, undoc, sizeof undoc);
            missing(d->fields, back, unbuilt, sizeof unbuilt);
            ck_assert_msg(!undoc[0], "%s (variant %d): written but not in docs/log.md: %s", name,
                          variant, undoc);
            ck_assert_msg(!unbuilt[0], "%s (variant %d): in docs/log.md but not written: %s", name,
                          variant, unbuilt);
            json_decref(built);
            json_decref(back);
        }
    /* and docs/log.md documents no event the builders do not know */
    for (int i = 0; i < ndocs; i++) {
        json_t *probe = json_pack("{ss}", XMT_F_EVENT, docs[i].name);
        ck_assert_msg(xmt_event_of(probe) >= 0, "docs/log.md documents an unknown event %s",
                      docs[i].name);
        json_decref(probe);
    }
}
END_TEST

/* The collector keeps only the kinds asked for, skips what is not JSON and counts it. */
START_TEST(collector_sorts_by_kind)
{
    char path[] = "/tmp/xmt_logread_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"event\":\"start\",\"pid\":1}\nnot json\n{\"event\":\"exit\",\"launches\":3}\n"
          "{\"event\":\"someday\"}\n{\"no_event\":1}\n{\"event\":\"exit\",\"launches\":4}\n",
          f);
    ck_assert_int_eq(fclose(f), 0);
    json_t *lists[XMT_EV_COUNT] = {0};
    lists[XMT_EV_EXIT] = json_array();
    ck_assert_int_eq(xmt_log_collect(path, lists), 1);
    ck_assert_int_eq(json_array_size(lists[XMT_EV_EXIT]), 2);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_array_get(lists[XMT_EV_EXIT], 1), "launches")), 4);
    json_decref(lists[XMT_EV_EXIT]);
    unlink(path);
    ck_assert_int_eq(xmt_log_collect("/nonexistent/xmt.jsonl", lists), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("logevent");
    TCase *tc = tcase_create("contract");
    tcase_add_test(tc, every_event_matches_docs);
    tcase_add_test(tc, collector_sorts_by_kind);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
