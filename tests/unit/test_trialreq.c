/*
 * Unit tests of the trial request's codec (common/trialreq.c, trialreq_load.c): every field
 * round-trips, byte for byte; the decoder refuses another version, each field missing, each
 * field (and each array item) of the wrong type, an unknown field at every level, and what
 * breaks a limit, with a sentence naming the field; the shared argument rule.
 *
 * A field added to a struct of trialreq.h breaks the build here until it is listed in the
 * sizes below (each struct is the sum of its fields: no padding, so the round trip compares
 * whole values); once listed, set it in trialreq_sample.h, and the round trip fails until
 * the codec carries it.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trialreq.h"
#include "trialreq_sample.h"

/* ---- every field listed: no padding, none left out ----------------------------------------- */

#define F(T, f) sizeof(((T *)0)->f)
_Static_assert(sizeof(xmt_tr_dim3) == F(xmt_tr_dim3, x) + F(xmt_tr_dim3, y) + F(xmt_tr_dim3, z),
               "xmt_tr_dim3 changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_arg) ==
                   F(xmt_tr_arg, value) + F(xmt_tr_arg, param) + F(xmt_tr_arg, size),
               "xmt_tr_arg changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_candidate) ==
                   F(xmt_tr_candidate, grid) + F(xmt_tr_candidate, block) +
                       F(xmt_tr_candidate, shared) + F(xmt_tr_candidate, nargs) +
                       F(xmt_tr_candidate, args) + F(xmt_tr_candidate, label),
               "xmt_tr_candidate changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_bytes) == F(xmt_tr_bytes, bytes) + F(xmt_tr_bytes, len),
               "xmt_tr_bytes changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_launch) ==
                   F(xmt_tr_launch, grid) + F(xmt_tr_launch, block) + F(xmt_tr_launch, shared) +
                       F(xmt_tr_launch, max_dynamic_shared) + F(xmt_tr_launch, carveout) +
                       F(xmt_tr_launch, nparams) + F(xmt_tr_launch, params),
               "xmt_tr_launch changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_jit) == F(xmt_tr_jit, option) + F(xmt_tr_jit, value),
               "xmt_tr_jit changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_image) ==
                   F(xmt_tr_image, id) + F(xmt_tr_image, njit) + F(xmt_tr_image, jit),
               "xmt_tr_image changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_window) ==
                   F(xmt_tr_window, va) + F(xmt_tr_window, bytes) + F(xmt_tr_window, offset),
               "xmt_tr_window changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_region) == F(xmt_tr_region, base) + F(xmt_tr_region, bytes),
               "xmt_tr_region changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_fault) ==
                   F(xmt_tr_fault, index) + F(xmt_tr_fault, why) + F(xmt_tr_fault, key),
               "xmt_tr_fault changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(sizeof(xmt_tr_global) == F(xmt_tr_global, name) + F(xmt_tr_global, value),
               "xmt_tr_global changed: list its fields here, set them in trialreq_sample.h");
_Static_assert(
    sizeof(xmt_trialreq) ==
        F(xmt_trialreq, kernel) + F(xmt_trialreq, key) + F(xmt_trialreq, record_data) +
            F(xmt_trialreq, decided) + F(xmt_trialreq, entry_fp) + F(xmt_trialreq, only_index) +
            F(xmt_trialreq, staging_ms) + F(xmt_trialreq, granularity) + F(xmt_trialreq, device) +
            F(xmt_trialreq, verify_only) + F(xmt_trialreq, from_cache) + F(xmt_trialreq, recheck) +
            F(xmt_trialreq, in_place_first) + F(xmt_trialreq, has_only) + F(xmt_trialreq, only) +
            F(xmt_trialreq, launch) + F(xmt_trialreq, image) + F(xmt_trialreq, nwindows) +
            F(xmt_trialreq, windows) + F(xmt_trialreq, nregions) + F(xmt_trialreq, regions) +
            F(xmt_trialreq, nfaulted) + F(xmt_trialreq, faulted) + F(xmt_trialreq, nglobals) +
            F(xmt_trialreq, globals),
    "xmt_trialreq changed: list its fields here, set them in trialreq_sample.h");

/* ---- helpers ----------------------------------------------------------------------------------
 */

static char *encode(const xmt_trialreq *q, size_t *len)
{
    char err[256] = "";
    char *text = xmt_trialreq_encode(q, len, err, sizeof err);
    ck_assert_msg(text != NULL, "encode: %s", err);
    ck_assert_uint_eq(strlen(text), *len);
    return text;
}

static int same_bytes(const xmt_tr_bytes *a, const xmt_tr_bytes *b)
{
    return a->len == b->len && (!a->len || !memcmp(a->bytes, b->bytes, a->len));
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* a and b equal field by field: the pointed-to contents compared, then the values whole
 * with b's pointers made a's (no padding: every other byte is a field). */
static void assert_same(const xmt_trialreq *a, const xmt_trialreq *b)
{
    ck_assert(same_str(a->kernel, b->kernel));
    ck_assert(same_str(a->key, b->key));
    ck_assert(same_str(a->record_data, b->record_data));
    ck_assert(same_str(a->decided, b->decided));
    ck_assert_uint_eq(a->launch.nparams, b->launch.nparams);
    for (uint32_t i = 0; i < a->launch.nparams; i++)
        ck_assert_msg(same_bytes(&a->launch.params[i], &b->launch.params[i]), "param %u", i);
    ck_assert_uint_eq(a->nwindows, b->nwindows);
    ck_assert(!a->nwindows || !memcmp(a->windows, b->windows, a->nwindows * sizeof *a->windows));
    ck_assert_uint_eq(a->nregions, b->nregions);
    ck_assert(!a->nregions || !memcmp(a->regions, b->regions, a->nregions * sizeof *a->regions));
    ck_assert_uint_eq(a->nfaulted, b->nfaulted);
    ck_assert(!a->nfaulted || !memcmp(a->faulted, b->faulted, a->nfaulted * sizeof *a->faulted));
    ck_assert_uint_eq(a->nglobals, b->nglobals);
    for (uint64_t i = 0; i < a->nglobals; i++) {
        ck_assert(same_str(a->globals[i].name, b->globals[i].name));
        ck_assert(same_bytes(&a->globals[i].value, &b->globals[i].value));
    }
    xmt_trialreq c = *b;
    c.kernel = a->kernel;
    c.key = a->key;
    c.record_data = a->record_data;
    c.decided = a->decided;
    c.launch.params = a->launch.params;
    c.windows = a->windows;
    c.regions = a->regions;
    c.faulted = a->faulted;
    c.globals = a->globals;
    const unsigned char *x = (const void *)a, *y = (const void *)&c;
    size_t i = 0;
    while (i < sizeof c && x[i] == y[i])
        i++;
    ck_assert_msg(i == sizeof c, "the decoded request differs at byte %zu of xmt_trialreq", i);
}

/* Decodes text, expecting a refusal whose sentence holds want. */
static void refused(const char *text, const char *want)
{
    xmt_trialreq q;
    char err[256] = "";
    int r = xmt_trialreq_decode(text, strlen(text), &q, err, sizeof err);
    ck_assert_msg(r == -1, "accepted (wanted a refusal saying \"%s\"): %.300s", want, text);
    ck_assert_msg(strstr(err, want) != NULL, "refused with \"%s\", wanted \"%s\"", err, want);
    ck_assert_ptr_null(q.kernel); /* left empty */
    ck_assert_ptr_null(q.windows);
}

/* The sample's JSON, parsed, for the tests to change. */
static json_t *sample_json(void)
{
    xmt_trialreq q = trialreq_sample();
    size_t len;
    char *text = encode(&q, &len);
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    free(text);
    ck_assert_ptr_nonnull(j);
    return j;
}

static char *dump(const json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* ---- round trips ---------------------------------------------------------------------------- */

START_TEST(every_field_round_trips)
{
    xmt_trialreq a = trialreq_sample(), b;
    size_t len;
    char *text = encode(&a, &len);
    char err[256] = "";
    ck_assert_msg(xmt_trialreq_decode(text, len, &b, err, sizeof err) == 0, "%s", err);
    assert_same(&a, &b);
    /* and again from what was decoded: the same text */
    size_t len2;
    char *again = encode(&b, &len2);
    ck_assert_str_eq(text, again);
    free(again);
    free(text);
    xmt_trialreq_free(&b);
    ck_assert_ptr_null(b.kernel);
}
END_TEST

/* The sample has no zero field (but the 0-byte parameter, the first window's offset and
 * the one negative jit option, set on purpose): a field the sample forgets to set shows
 * here as a zero. */
START_TEST(the_sample_sets_every_field)
{
    xmt_trialreq q = trialreq_sample();
    ck_assert(q.kernel && q.key && q.record_data && q.decided && q.entry_fp && q.only_index &&
              q.staging_ms);
    ck_assert(q.granularity && q.device && q.verify_only && q.from_cache && q.recheck);
    ck_assert(q.in_place_first && q.has_only);
    ck_assert(q.only.grid.x && q.only.grid.y && q.only.grid.z && q.only.block.x && q.only.block.y &&
              q.only.block.z && q.only.shared && q.only.label[0]);
    ck_assert_uint_eq(q.only.nargs, XMT_TR_MAX_ARGS);
    for (uint32_t i = 0; i < q.only.nargs; i++)
        ck_assert(q.only.args[i].value && q.only.args[i].size);
    ck_assert(q.launch.grid.x && q.launch.grid.y && q.launch.grid.z && q.launch.block.x &&
              q.launch.block.y && q.launch.block.z && q.launch.shared &&
              q.launch.max_dynamic_shared && q.launch.carveout && q.launch.nparams);
    ck_assert(q.image.id[0] && q.image.njit);
    ck_assert(q.nwindows && q.nregions && q.nfaulted && q.nglobals);
    ck_assert(q.windows[1].offset && q.windows[0].va && q.windows[0].bytes);
    ck_assert(q.regions[0].base && q.regions[0].bytes && q.faulted[0].index &&
              q.faulted[0].why[0] && q.faulted[0].key[0] && q.globals[0].name &&
              q.globals[0].value.len);
}
END_TEST

/* The nullable and empty forms: no `only`, no record data, no arrays. */
START_TEST(empty_request_round_trips)
{
    xmt_trialreq a = {.kernel = "k", .key = "(no triggers)", .only_index = -1, .device = 0};
    snprintf(a.image.id, sizeof a.image.id, "0x1:2");
    size_t len;
    char *text = encode(&a, &len);
    ck_assert(strstr(text, "\"only\":null") && strstr(text, "\"record_data\":null"));
    xmt_trialreq b;
    char err[256] = "";
    ck_assert_msg(xmt_trialreq_decode(text, len, &b, err, sizeof err) == 0, "%s", err);
    ck_assert(!b.has_only && !b.record_data && !b.decided);
    /* the decoder allocates even empty arrays: compare them as a's */
    assert_same(&a, &b);
    free(text);
    xmt_trialreq_free(&b);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------------------- */

START_TEST(other_versions_are_refused)
{
    for (int d = -1; d <= 1; d += 2) {
        json_t *j = sample_json();
        json_object_set_new(j, "v", json_integer(XMT_TP_VERSION + d));
        char *t = dump(j), want[80];
        snprintf(want, sizeof want, "protocol version %d, this side reads %d", XMT_TP_VERSION + d,
                 XMT_TP_VERSION);
        refused(t, want);
        free(t);
        json_decref(j);
    }
}
END_TEST

START_TEST(not_json_or_not_an_object)
{
    refused("", "not JSON");
    refused("{\"v\":", "not JSON");
    refused("[1,2]", "the request is not a JSON object");
    refused("{\"v\":5,\"v\":5}", "not JSON"); /* a key twice */
}
END_TEST

/* Visits every key of every object in j (path as the codec says it: "launch.grid",
 * "windows[1].va") and every item of every array, calling fn on each site. */
typedef void (*site_fn)(json_t *root, const char *path, const char *key, size_t index, int in_obj,
                        int *count);

static void each_site(json_t *root, json_t *node, const char *path, site_fn fn, int *count)
{
    if (json_is_object(node)) {
        const char *key;
        json_t *v;
        json_object_foreach(node, key, v)
        {
            char p[160];
            snprintf(p, sizeof p, "%s%s%s", path, path[0] ? "." : "", key);
            fn(root, p, key, 0, 1, count);
            each_site(root, v, p, fn, count);
        }
    } else if (json_is_array(node)) {
        for (size_t i = 0; i < json_array_size(node); i++) {
            char p[160];
            snprintf(p, sizeof p, "%s[%zu]", path, i);
            fn(root, p, NULL, i, 0, count);
            each_site(root, json_array_get(node, i), p, fn, count);
        }
    }
}

/* The node at path in root, and its parent (paths as each_site makes them). */
static json_t *at_path(json_t *root, const char *path, json_t **parent)
{
    json_t *n = root;
    *parent = NULL;
    char buf[160];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf; *p && n;) {
        *parent = n;
        if (*p == '[') {
            size_t i = strtoul(p + 1, &p, 10);
            n = json_array_get(n, i);
            p++; /* ']' */
        } else {
            if (*p == '.') p++;
            size_t k = strcspn(p, ".[");
            char save = p[k];
            p[k] = 0;
            n = json_object_get(n, p);
            p[k] = save;
            p += k;
        }
    }
    return n;
}

/* A value of another type than v's. */
static json_t *other_type(const json_t *v)
{
    if (json_is_string(v) || json_is_null(v) || json_is_boolean(v) || json_is_array(v) ||
        json_is_object(v))
        return json_integer(7);
    return json_string("x");
}

static void missing_site(json_t *root, const char *path, const char *key, size_t index, int in_obj,
                         int *count)
{
    (void)root, (void)index;
    if (!in_obj) return;
    json_t *j = sample_json(), *parent;
    at_path(j, path, &parent);
    ck_assert_int_eq(json_object_del(parent, key), 0);
    char *t = dump(j), want[200];
    snprintf(want, sizeof want, "the request has no %s", path);
    refused(t, want);
    free(t);
    json_decref(j);
    ++*count;
}

START_TEST(each_missing_field_is_refused)
{
    json_t *j = sample_json();
    int n = 0;
    each_site(j, j, "", missing_site, &n);
    /* the top level's 21 names, launch's 6, image's 2, only's 5 and its args' 3 each,
     * windows' 3 each, regions' 2 each, faulted's 3 each, globals' 2 each */
    ck_assert_int_eq(n, 21 + 6 + 2 + 5 + 3 * XMT_TR_MAX_ARGS + 3 * 2 + 2 * 3 + 3 * 2 + 2 * 2);
    json_decref(j);
}
END_TEST

static void wrong_site(json_t *root, const char *path, const char *key, size_t index, int in_obj,
                       int *count)
{
    (void)root;
    json_t *j = sample_json(), *parent;
    json_t *v = at_path(j, path, &parent);
    json_t *w = other_type(v);
    if (in_obj)
        json_object_set_new(parent, key, w);
    else
        json_array_set_new(parent, index, w);
    char *t = dump(j);
    /* named by its path, or, for an item of a fixed tuple (dims, a jit pair), its tuple's */
    char want[200], tuple[200];
    snprintf(want, sizeof want, "the request's %s is not", path);
    snprintf(tuple, sizeof tuple, "%s", path);
    char *b = strrchr(tuple, '[');
    if (b) *b = 0;
    xmt_trialreq q;
    char err[256] = "";
    ck_assert_msg(xmt_trialreq_decode(t, strlen(t), &q, err, sizeof err) == -1,
                  "%s of another type accepted", path);
    char want2[240];
    snprintf(want2, sizeof want2, "the request's %s is not", tuple);
    ck_assert_msg(strstr(err, want) || (!in_obj && strstr(err, want2)),
                  "%s of another type: \"%s\"", path, err);
    free(t);
    json_decref(j);
    ++*count;
}

START_TEST(each_field_of_another_type_is_refused)
{
    json_t *j = sample_json();
    int n = 0;
    each_site(j, j, "", wrong_site, &n);
    ck_assert_int_gt(n, 100);
    json_decref(j);
}
END_TEST

static void unknown_site(json_t *root, const char *path, const char *key, size_t index, int in_obj,
                         int *count)
{
    (void)root, (void)key, (void)index, (void)in_obj;
    json_t *j = sample_json(), *parent;
    json_t *v = at_path(j, path, &parent);
    if (!json_is_object(v)) {
        json_decref(j);
        return;
    }
    json_object_set_new(v, "zz_new", json_integer(1));
    char *t = dump(j), want[200];
    snprintf(want, sizeof want, "unknown field %s.zz_new", path);
    refused(t, want);
    free(t);
    json_decref(j);
    ++*count;
}

START_TEST(unknown_fields_are_refused)
{
    json_t *j = sample_json();
    json_object_set_new(j, "zz_new", json_integer(1));
    char *t = dump(j);
    refused(t, "unknown field zz_new");
    free(t);
    json_decref(j);
    j = sample_json();
    int n = 0;
    each_site(j, j, "", unknown_site, &n);
    /* launch, image, only, its args, the windows, regions, faulted, globals */
    ck_assert_int_eq(n, 3 + XMT_TR_MAX_ARGS + 2 + 3 + 2 + 2);
    json_decref(j);
}
END_TEST

/* Sets path (a key of an object) in the sample to v and expects a refusal saying want. */
static void refused_with(const char *path, json_t *v, const char *want)
{
    json_t *j = sample_json(), *parent;
    at_path(j, path, &parent);
    const char *key = strrchr(path, '.');
    key = key ? key + 1 : path;
    char k[64];
    snprintf(k, sizeof k, "%.*s", (int)strcspn(key, "["), key);
    if (strchr(key, '['))
        json_array_set_new(parent, strtoul(strchr(key, '[') + 1, NULL, 10), v);
    else
        json_object_set_new(parent, k, v);
    char *t = dump(j);
    refused(t, want);
    free(t);
    json_decref(j);
}

START_TEST(values_out_of_range_are_refused)
{
    refused_with("device", json_integer((json_int_t)1 << 40),
                 "device is 1099511627776, out of range");
    refused_with("launch.shared", json_integer(-1), "launch.shared is -1, out of range");
    refused_with("launch.grid", json_pack("[iii]", 1, -2, 3), "launch.grid is not 3 integers");
    refused_with("launch.grid", json_pack("[ii]", 1, 2), "launch.grid is not 3 integers");
    refused_with("launch.params[0]", json_string("0g"), "launch.params[0] is not hex bytes");
    refused_with("launch.params[0]", json_string("abc"), "launch.params[0] is not hex bytes");
    char big[2 * (XMT_TR_MAX_PARAM_BYTES + 1) + 1];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    refused_with("launch.params[0]", json_string(big), "has 257 bytes, more than 256");
    refused_with("entry_fp", json_string("0123"), "entry_fp is not 16 hex digits");
    char label[XMT_TP_LABEL + 1];
    memset(label, 'L', XMT_TP_LABEL);
    label[XMT_TP_LABEL] = 0;
    refused_with("only.label", json_string(label), "only.label is longer than 159 bytes");
    refused_with("image.id", json_string("0123456789012345678901234567890123456789"),
                 "image.id is longer than 39 bytes");
    json_t *w = json_array();
    for (int i = 0; i <= XMT_TR_MAX_WINDOWS; i++)
        json_array_append_new(w, json_pack("{sIsIsI}", "va", (json_int_t)0, "bytes", (json_int_t)0,
                                           "offset", (json_int_t)0));
    refused_with("windows", w, "windows has 257 items, more than 256");
    json_t *jit = json_array();
    for (int i = 0; i <= XMT_TR_MAX_JIT; i++)
        json_array_append_new(jit, json_pack("[ii]", 1, 2));
    refused_with("image.jit", jit, "image.jit has 17 items, more than 16");
    json_t *args = json_array();
    for (int i = 0; i <= XMT_TR_MAX_ARGS; i++)
        json_array_append_new(args, json_pack("{sisisi}", "param", 0, "value", 1, "size", 4));
    refused_with("only.args", args, "only.args has 9 items, more than 8");
}
END_TEST

/* The argument rule, in the decoder: an argument past the launch's parameters (issue 50's
 * index of 100000000), wider than its parameter, of 0 bytes, or of a parameter wider than
 * 8 bytes (not a scalar). */
START_TEST(arguments_that_do_not_fit_are_refused)
{
    refused_with("only.args[0]", json_pack("{sisisi}", "param", 100000000, "value", 1, "size", 4),
                 "only: its config sets parameter 100000000 (4 bytes); the kernel has 5");
    refused_with("only.args[0]", json_pack("{sisisi}", "param", 1, "value", 1, "size", 8),
                 "sets parameter 1 (8 bytes)");
    refused_with("only.args[0]", json_pack("{sisisi}", "param", 0, "value", 1, "size", 0),
                 "sets parameter 0 (0 bytes)");
    refused_with("only.args[0]", json_pack("{sisisi}", "param", 3, "value", 1, "size", 4),
                 "sets parameter 3 (4 bytes)"); /* 16 bytes: a struct */
}
END_TEST

START_TEST(the_argument_rule)
{
    uint32_t sizes[] = {8, 4, 16};
    xmt_tr_candidate c = {.nargs = 2, .args = {{5, 0, 8}, {6, 1, 4}}};
    char why[200];
    ck_assert_int_eq(xmt_tr_args_check(&c, 3, sizes, why, sizeof why), 0);
    c.args[1].size = 5;
    ck_assert_int_eq(xmt_tr_args_check(&c, 3, sizes, why, sizeof why), -1);
    ck_assert_str_eq(why, "its config sets parameter 1 (5 bytes); the kernel has 3");
    c.args[1] = (xmt_tr_arg){1, 2, 4};
    ck_assert_int_eq(xmt_tr_args_check(&c, 3, sizes, why, sizeof why), -1);
    c.args[1] = (xmt_tr_arg){1, 3, 4};
    ck_assert_int_eq(xmt_tr_args_check(&c, 3, sizes, why, sizeof why), -1);
    c.nargs = XMT_TR_MAX_ARGS + 1;
    ck_assert_int_eq(xmt_tr_args_check(&c, 3, sizes, why, sizeof why), -1);
    ck_assert_str_eq(why, "its config sets 9 arguments, more than 8");
}
END_TEST

/* The encoder refuses what the decoder would: past a limit, a string that is not one. */
START_TEST(the_encoder_keeps_the_limits)
{
    xmt_trialreq q = trialreq_sample();
    char err[256] = "";
    size_t len;
    q.nwindows = XMT_TR_MAX_WINDOWS + 1;
    ck_assert_ptr_null(xmt_trialreq_encode(&q, &len, err, sizeof err));
    ck_assert_str_eq(err, "the request's windows has 257 items, more than 256");
    q = trialreq_sample();
    q.key = NULL;
    ck_assert_ptr_null(xmt_trialreq_encode(&q, &len, err, sizeof err));
    ck_assert_str_eq(err, "the request's key is not set");
    q = trialreq_sample();
    memset(q.only.label, 'x', sizeof q.only.label);
    ck_assert_ptr_null(xmt_trialreq_encode(&q, &len, err, sizeof err));
    ck_assert_str_eq(err, "the request's only.label is not NUL-terminated");
    q = trialreq_sample();
    q.kernel = "\xff\xfe";
    ck_assert_ptr_null(xmt_trialreq_encode(&q, &len, err, sizeof err));
    ck_assert_msg(strstr(err, "kernel cannot be written"), "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trialreq");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, every_field_round_trips);
    tcase_add_test(tc, the_sample_sets_every_field);
    tcase_add_test(tc, empty_request_round_trips);
    tcase_add_test(tc, other_versions_are_refused);
    tcase_add_test(tc, not_json_or_not_an_object);
    tcase_add_test(tc, each_missing_field_is_refused);
    tcase_add_test(tc, each_field_of_another_type_is_refused);
    tcase_add_test(tc, unknown_fields_are_refused);
    tcase_add_test(tc, values_out_of_range_are_refused);
    tcase_add_test(tc, arguments_that_do_not_fit_are_refused);
    tcase_add_test(tc, the_argument_rule);
    tcase_add_test(tc, the_encoder_keeps_the_limits);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
