/*
 * trialreq: the trial request's codec (see trialreq.h). One walk over the struct does both
 * directions: writing, each field goes into a JSON object under its name; reading, each is
 * taken from it and checked (present, of its type, in range). The field names are here and
 * nowhere else.
 */
#include "trialreq.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The walk's state: its direction, its first error, and where in the request it is
 * ("launch.", "windows[3].") for that error. */
typedef struct {
    int reading;
    int bad;
    char *err;
    size_t cap;
    char path[96];
} codec;

/* An object being walked, with the names taken from it (reading: any other is refused). */
typedef struct {
    json_t *o;
    size_t path_len; /* the codec's path before this object's name was added */
    const char *names[32];
    size_t n;
} obj;

static void fail(codec *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(codec *c, const char *fmt, ...)
{
    if (c->bad) return; /* the first error is the one to tell */
    c->bad = 1;
    if (!c->cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->cap, fmt, ap);
    va_end(ap);
}

/* Writing: v stored under name (NULL v: it could not be made). */
static void put(codec *c, obj *o, const char *name, json_t *v)
{
    if (!v || json_object_set_new(o->o, name, v) != 0)
        fail(c, "the request's %s%s cannot be written (out of memory, or not UTF-8)", c->path,
             name);
}

/* Reading: the value under name (recorded as known), or NULL with the error said. */
static json_t *get(codec *c, obj *o, const char *name)
{
    if (o->n < sizeof o->names / sizeof o->names[0]) o->names[o->n++] = name;
    json_t *v = json_object_get(o->o, name);
    if (!v) fail(c, "the request has no %s%s", c->path, name);
    return v;
}

static void wrong(codec *c, const char *name, const char *what)
{
    fail(c, "the request's %s%s is not %s", c->path, name, what);
}

/* Enters the object in *slot under name: writing, a new one; reading, it must be one. */
static int begin(codec *c, json_t **slot, const char *name, obj *o)
{
    memset(o, 0, sizeof *o);
    if (c->bad) return 0;
    if (!c->reading) *slot = json_object();
    if (!c->reading && !*slot) {
        fail(c, "the request cannot be written (out of memory)");
        return 0;
    }
    if (c->reading && !json_is_object(*slot)) {
        if (!c->path[0] && !name[0])
            fail(c, "the request is not a JSON object");
        else
            wrong(c, name, "an object");
        return 0;
    }
    o->o = *slot;
    o->path_len = strlen(c->path);
    if (name[0]) snprintf(c->path + o->path_len, sizeof c->path - o->path_len, "%s.", name);
    return 1;
}

/* Leaves it; reading, a name the walk did not take is refused (the sides disagree). */
static void end(codec *c, obj *o)
{
    if (c->reading && !c->bad && o->o) {
        const char *key;
        json_t *v;
        json_object_foreach(o->o, key, v)
        {
            size_t i = 0;
            while (i < o->n && strcmp(o->names[i], key) != 0)
                i++;
            if (i == o->n) fail(c, "the request has an unknown field %s%s", c->path, key);
        }
    }
    c->path[o->path_len] = 0;
}

/* ---- fields ------------------------------------------------------------------------------ */

/* An integer in [lo, hi]. */
static void f_int(codec *c, obj *o, const char *name, int64_t *v, int64_t lo, int64_t hi)
{
    if (c->bad) return;
    if (!c->reading) {
        put(c, o, name, json_integer((json_int_t)*v));
        return;
    }
    json_t *j = get(c, o, name);
    if (!j) return;
    if (!json_is_integer(j)) {
        wrong(c, name, "an integer");
        return;
    }
    int64_t x = (int64_t)json_integer_value(j);
    if (x < lo || x > hi) {
        fail(c, "the request's %s%s is %" PRId64 ", out of range [%" PRId64 ", %" PRId64 "]",
             c->path, name, x, lo, hi);
        return;
    }
    *v = x;
}

static void f_i32(codec *c, obj *o, const char *name, int32_t *v)
{
    int64_t x = *v;
    f_int(c, o, name, &x, INT32_MIN, INT32_MAX);
    if (c->reading) *v = (int32_t)x;
}

static void f_u32(codec *c, obj *o, const char *name, uint32_t *v)
{
    int64_t x = *v;
    f_int(c, o, name, &x, 0, UINT32_MAX);
    if (c->reading) *v = (uint32_t)x;
}

/* 64 bits (addresses, sizes, values), carried as JSON's signed integer bit for bit. */
static void f_u64(codec *c, obj *o, const char *name, uint64_t *v)
{
    int64_t x = (int64_t)*v;
    f_int(c, o, name, &x, INT64_MIN, INT64_MAX);
    if (c->reading) *v = (uint64_t)x;
}

static void f_i64(codec *c, obj *o, const char *name, int64_t *v)
{
    f_int(c, o, name, v, INT64_MIN, INT64_MAX);
}

/* A flag: JSON true or false, 1 or 0 here. */
static void f_flag(codec *c, obj *o, const char *name, int32_t *v)
{
    if (c->bad) return;
    if (!c->reading) {
        put(c, o, name, json_boolean(*v));
        return;
    }
    json_t *j = get(c, o, name);
    if (j && !json_is_boolean(j)) {
        wrong(c, name, "true or false");
        return;
    }
    if (j) *v = json_is_true(j);
}

static void f_double(codec *c, obj *o, const char *name, double *v)
{
    if (c->bad) return;
    if (!c->reading) {
        put(c, o, name, json_real(*v));
        return;
    }
    json_t *j = get(c, o, name);
    if (j && !json_is_number(j)) {
        wrong(c, name, "a number");
        return;
    }
    if (j) *v = json_number_value(j);
}

/* A string the decoded request owns (nullable: JSON null is NULL). */
static void f_str(codec *c, obj *o, const char *name, const char **v, int nullable)
{
    if (c->bad) return;
    if (!c->reading) {
        if (!*v && !nullable) {
            fail(c, "the request's %s%s is not set", c->path, name);
            return;
        }
        put(c, o, name, *v ? json_string(*v) : json_null());
        return;
    }
    json_t *j = get(c, o, name);
    if (!j) return;
    if (nullable && json_is_null(j)) return;
    if (!json_is_string(j)) {
        wrong(c, name, nullable ? "a string or null" : "a string");
        return;
    }
    if (!(*v = strdup(json_string_value(j)))) fail(c, "out of memory");
}

/* A string into a fixed array of cap bytes: it must fit. */
static void f_chars(codec *c, obj *o, const char *name, char *buf, size_t cap)
{
    if (c->bad) return;
    if (!c->reading && strnlen(buf, cap) == cap) {
        fail(c, "the request's %s%s is not NUL-terminated", c->path, name);
        return;
    }
    if (!c->reading) {
        put(c, o, name, json_string(buf));
        return;
    }
    json_t *j = get(c, o, name);
    if (!j) return;
    if (!json_is_string(j)) {
        wrong(c, name, "a string");
        return;
    }
    if (json_string_length(j) >= cap || strlen(json_string_value(j)) != json_string_length(j)) {
        fail(c, "the request's %s%s is longer than %zu bytes (or holds a NUL)", c->path, name,
             cap - 1);
        return;
    }
    memcpy(buf, json_string_value(j), json_string_length(j) + 1);
}

/* 64 bits as 16 hex digits (a fingerprint). */
static void f_hex64(codec *c, obj *o, const char *name, uint64_t *v)
{
    if (c->bad) return;
    if (!c->reading) {
        char b[17];
        snprintf(b, sizeof b, "%016" PRIx64, *v);
        put(c, o, name, json_string(b));
        return;
    }
    json_t *j = get(c, o, name);
    if (!j) return;
    const char *s = json_string_value(j);
    if (!s || strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16) {
        wrong(c, name, "16 hex digits");
        return;
    }
    *v = strtoull(s, NULL, 16);
}

static int nibble(char h)
{
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
}

/* Bytes as 2n hex digits in *slot, at most max bytes (0: no limit). */
static void f_bytes(codec *c, json_t **slot, const char *name, xmt_tr_bytes *b, size_t max)
{
    if (c->bad) return;
    if (!c->reading) {
        if (max && b->len > max) {
            fail(c, "the request's %s%s has %zu bytes, more than %zu", c->path, name, b->len, max);
            return;
        }
        char *hex = malloc(2 * b->len + 1);
        if (!hex) {
            fail(c, "the request cannot be written (out of memory)");
            return;
        }
        for (size_t i = 0; i < b->len; i++)
            snprintf(hex + 2 * i, 3, "%02x", b->bytes[i]);
        hex[2 * b->len] = 0;
        *slot = json_string(hex);
        free(hex);
        if (!*slot) fail(c, "the request cannot be written (out of memory)");
        return;
    }
    const char *s = json_string_value(*slot);
    size_t n = s ? json_string_length(*slot) : 0;
    if (!s || n % 2) {
        wrong(c, name, "hex bytes");
        return;
    }
    if (max && n / 2 > max) {
        fail(c, "the request's %s%s has %zu bytes, more than %zu", c->path, name, n / 2, max);
        return;
    }
    uint8_t *out = malloc(n / 2 ? n / 2 : 1);
    if (!out) {
        fail(c, "out of memory");
        return;
    }
    b->bytes = out; /* the decoded request's (xmt_trialreq_free) */
    b->len = n / 2;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            wrong(c, name, "hex bytes");
            return;
        }
        out[i] = (uint8_t)(hi << 4 | lo);
    }
}

/* Three dimensions as [x, y, z]. */
static void f_dim3(codec *c, obj *o, const char *name, xmt_tr_dim3 *d)
{
    if (c->bad) return;
    if (!c->reading) {
        put(c, o, name, json_pack("[III]", (json_int_t)d->x, (json_int_t)d->y, (json_int_t)d->z));
        return;
    }
    json_t *j = get(c, o, name);
    if (!j) return;
    uint32_t *v[3] = {&d->x, &d->y, &d->z};
    if (!json_is_array(j) || json_array_size(j) != 3) {
        wrong(c, name, "3 integers");
        return;
    }
    for (size_t i = 0; i < 3; i++) {
        json_t *x = json_array_get(j, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            json_integer_value(x) > UINT32_MAX) {
            wrong(c, name, "3 integers of 32 bits");
            return;
        }
        *v[i] = (uint32_t)json_integer_value(x);
    }
}

/* An array of *n items of size bytes at *items, at most max, each walked by elem in its
 * slot (reading: allocated here, zeroed, *n set as soon as they are, for the free). */
typedef void (*elem_fn)(codec *c, json_t **slot, const char *name, void *item);

static void f_array(codec *c, obj *o, const char *name, uint64_t *n, void **items, size_t size,
                    size_t max, elem_fn elem)
{
    if (c->bad) return;
    json_t *a;
    if (!c->reading) {
        if (*n > max) {
            fail(c, "the request's %s%s has %" PRIu64 " items, more than %zu", c->path, name, *n,
                 max);
            return;
        }
        if (!(a = json_array())) {
            fail(c, "the request cannot be written (out of memory)");
            return;
        }
        put(c, o, name, a);
    } else {
        if (!(a = get(c, o, name))) return;
        if (!json_is_array(a)) {
            wrong(c, name, "an array");
            return;
        }
        if (json_array_size(a) > max) {
            fail(c, "the request's %s%s has %zu items, more than %zu", c->path, name,
                 json_array_size(a), max);
            return;
        }
        *items = calloc(json_array_size(a) ? json_array_size(a) : 1, size);
        if (!*items) {
            fail(c, "out of memory");
            return;
        }
        *n = json_array_size(a);
    }
    for (uint64_t i = 0; !c->bad && i < *n; i++) {
        char at[48];
        snprintf(at, sizeof at, "%s[%" PRIu64 "]", name, i);
        json_t *slot = c->reading ? json_array_get(a, (size_t)i) : NULL;
        elem(c, &slot, at, (char *)*items + i * size);
        if (!c->reading && slot && json_array_append_new(a, slot) != 0)
            fail(c, "the request cannot be written (out of memory)");
    }
}

/* ---- the request's parts ------------------------------------------------------------------ */

static void e_arg(codec *c, json_t **slot, const char *name, void *item)
{
    xmt_tr_arg *a = item;
    obj o;
    if (!begin(c, slot, name, &o)) return;
    f_u32(c, &o, "param", &a->param);
    f_u64(c, &o, "value", &a->value);
    f_u32(c, &o, "size", &a->size);
    end(c, &o);
}

static void e_candidate(codec *c, json_t **slot, const char *name, xmt_tr_candidate *k)
{
    obj o;
    if (!begin(c, slot, name, &o)) return;
    f_dim3(c, &o, "grid", &k->grid);
    f_dim3(c, &o, "block", &k->block);
    f_u32(c, &o, "shared", &k->shared);
    f_chars(c, &o, "label", k->label, sizeof k->label);
    uint64_t n = k->nargs;
    void *args = k->args;
    if (!c->reading) {
        f_array(c, &o, "args", &n, &args, sizeof k->args[0], XMT_TR_MAX_ARGS, e_arg);
    } else { /* into the candidate's own array, not an allocated one */
        void *got = NULL;
        f_array(c, &o, "args", &n, &got, sizeof k->args[0], XMT_TR_MAX_ARGS, e_arg);
        if (got) memcpy(k->args, got, n * sizeof k->args[0]);
        free(got);
        k->nargs = (uint32_t)n;
    }
    end(c, &o);
}

/* `only`: the config, or null (has_only 0). */
static void f_only(codec *c, obj *o, const char *name, xmt_trialreq *q)
{
    if (c->bad) return;
    json_t *j = NULL;
    if (!c->reading && !q->has_only) {
        put(c, o, name, json_null());
        return;
    }
    if (c->reading && !(j = get(c, o, name))) return;
    if (c->reading && json_is_null(j)) return;
    e_candidate(c, &j, name, &q->only);
    if (!c->reading && j) put(c, o, name, j); /* even on an error: o owns it, to free */
    if (c->reading) q->has_only = !c->bad;
}

static void e_param(codec *c, json_t **slot, const char *name, void *item)
{
    f_bytes(c, slot, name, item, XMT_TR_MAX_PARAM_BYTES);
}

static void f_launch(codec *c, obj *parent, const char *name, xmt_tr_launch *l)
{
    json_t *j = c->reading ? get(c, parent, name) : NULL;
    obj o;
    if (c->reading && !j) return;
    if (!begin(c, &j, name, &o)) return;
    if (!c->reading) put(c, parent, name, j);
    f_dim3(c, &o, "grid", &l->grid);
    f_dim3(c, &o, "block", &l->block);
    f_u32(c, &o, "shared", &l->shared);
    f_i32(c, &o, "max_dynamic_shared", &l->max_dynamic_shared);
    f_i32(c, &o, "carveout", &l->carveout);
    uint64_t n = l->nparams;
    f_array(c, &o, "params", &n, (void **)&l->params, sizeof *l->params, XMT_TR_MAX_PARAMS,
            e_param);
    if (c->reading) l->nparams = (uint32_t)n;
    end(c, &o);
}

static void e_jit(codec *c, json_t **slot, const char *name, void *item)
{
    xmt_tr_jit *x = item;
    if (!c->reading) {
        *slot = json_pack("[II]", (json_int_t)x->option, (json_int_t)x->value);
        if (!*slot) fail(c, "the request cannot be written (out of memory)");
        return;
    }
    json_t *a = *slot;
    if (!json_is_array(a) || json_array_size(a) != 2 || !json_is_integer(json_array_get(a, 0)) ||
        !json_is_integer(json_array_get(a, 1))) {
        wrong(c, name, "an [option, value] pair of integers");
        return;
    }
    x->option = (int64_t)json_integer_value(json_array_get(a, 0));
    x->value = (uint64_t)json_integer_value(json_array_get(a, 1));
}

static void f_image(codec *c, obj *parent, const char *name, xmt_tr_image *im)
{
    json_t *j = c->reading ? get(c, parent, name) : NULL;
    obj o;
    if (c->reading && !j) return;
    if (!begin(c, &j, name, &o)) return;
    if (!c->reading) put(c, parent, name, j);
    f_chars(c, &o, "id", im->id, sizeof im->id);
    uint64_t n = im->njit;
    void *jit = im->jit, *got = NULL;
    f_array(c, &o, "jit", &n, c->reading ? &got : &jit, sizeof im->jit[0], XMT_TR_MAX_JIT, e_jit);
    if (c->reading) { /* into the image's own array */
        if (got) memcpy(im->jit, got, n * sizeof im->jit[0]);
        free(got);
        im->njit = n;
    }
    end(c, &o);
}

static void e_window(codec *c, json_t **slot, const char *name, void *item)
{
    xmt_tr_window *w = item;
    obj o;
    if (!begin(c, slot, name, &o)) return;
    f_u64(c, &o, "va", &w->va);
    f_u64(c, &o, "bytes", &w->bytes);
    f_u64(c, &o, "offset", &w->offset);
    end(c, &o);
}

static void e_region(codec *c, json_t **slot, const char *name, void *item)
{
    xmt_tr_region *r = item;
    obj o;
    if (!begin(c, slot, name, &o)) return;
    f_u64(c, &o, "base", &r->base);
    f_u64(c, &o, "bytes", &r->bytes);
    end(c, &o);
}

static void e_fault(codec *c, json_t **slot, const char *name, void *item)
{
    xmt_tr_fault *f = item;
    obj o;
    if (!begin(c, slot, name, &o)) return;
    f_i64(c, &o, "index", &f->index);
    f_chars(c, &o, "why", f->why, sizeof f->why);
    f_chars(c, &o, "key", f->key, sizeof f->key);
    end(c, &o);
}

static void e_global(codec *c, json_t **slot, const char *name, void *item)
{
    xmt_tr_global *g = item;
    obj o;
    if (!begin(c, slot, name, &o)) return;
    f_str(c, &o, "name", &g->name, 0);
    json_t *h = c->reading ? get(c, &o, "hex") : NULL;
    if (!c->bad) f_bytes(c, &h, "hex", &g->value, 0);
    if (!c->reading && h) put(c, &o, "hex", h);
    end(c, &o);
}

/* The request: every field, in the wire's order. */
static void walk(codec *c, json_t **root, xmt_trialreq *q)
{
    obj o;
    if (!begin(c, root, "", &o)) return;
    int64_t v = XMT_TP_VERSION;
    f_i64(c, &o, "v", &v);
    if (c->reading && !c->bad && v != XMT_TP_VERSION)
        fail(c, "the request is of protocol version %" PRId64 ", this side reads %d", v,
             XMT_TP_VERSION);
    f_str(c, &o, "kernel", &q->kernel, 0);
    f_hex64(c, &o, "entry_fp", &q->entry_fp);
    f_str(c, &o, "key", &q->key, 0);
    f_i32(c, &o, "device", &q->device);
    f_flag(c, &o, "verify_only", &q->verify_only);
    f_i64(c, &o, "only_index", &q->only_index);
    f_only(c, &o, "only", q);
    f_flag(c, &o, "from_cache", &q->from_cache);
    f_flag(c, &o, "recheck", &q->recheck);
    f_flag(c, &o, "in_place_first", &q->in_place_first);
    f_str(c, &o, "record_data", &q->record_data, 1);
    f_str(c, &o, "decided", &q->decided, 1);
    f_launch(c, &o, "launch", &q->launch);
    f_image(c, &o, "image", &q->image);
    f_array(c, &o, "windows", &q->nwindows, (void **)&q->windows, sizeof *q->windows,
            XMT_TR_MAX_WINDOWS, e_window);
    f_array(c, &o, "regions", &q->nregions, (void **)&q->regions, sizeof *q->regions, SIZE_MAX,
            e_region);
    f_array(c, &o, "faulted", &q->nfaulted, (void **)&q->faulted, sizeof *q->faulted,
            XMT_TR_MAX_FAULTED, e_fault);
    f_array(c, &o, "globals", &q->nglobals, (void **)&q->globals, sizeof *q->globals,
            XMT_TR_MAX_GLOBALS, e_global);
    f_double(c, &o, "staging_ms", &q->staging_ms);
    f_u64(c, &o, "granularity", &q->granularity);
    end(c, &o);
}

/* ---- entry points ------------------------------------------------------------------------- */

int xmt_tr_args_check(const xmt_tr_candidate *c, size_t nparams, const uint32_t *sizes, char *why,
                      size_t cap)
{
    if (c->nargs > XMT_TR_MAX_ARGS) {
        snprintf(why, cap, "its config sets %u arguments, more than %d", c->nargs, XMT_TR_MAX_ARGS);
        return -1;
    }
    for (uint32_t i = 0; i < c->nargs; i++) {
        const xmt_tr_arg *a = &c->args[i];
        if (a->param >= nparams || a->size < 1 || sizes[a->param] > 8 ||
            a->size > sizes[a->param]) {
            snprintf(why, cap, "its config sets parameter %u (%u bytes); the kernel has %zu",
                     a->param, a->size, nparams);
            return -1;
        }
    }
    return 0;
}

/* What the decoder checks besides the fields' types: that `only`'s arguments fit the
 * launch's parameters (the helper then checks those against its kernel: trial/tune.c). */
static void check_decoded(codec *c, const xmt_trialreq *q)
{
    if (c->bad || !q->has_only) return;
    uint32_t sizes[XMT_TR_MAX_PARAMS];
    for (uint32_t i = 0; i < q->launch.nparams; i++)
        sizes[i] = (uint32_t)q->launch.params[i].len;
    char why[200];
    if (xmt_tr_args_check(&q->only, q->launch.nparams, sizes, why, sizeof why) != 0)
        fail(c, "the request's only: %s", why);
}

char *xmt_trialreq_encode(const xmt_trialreq *q, size_t *len, char *err, size_t errcap)
{
    codec c = {.reading = 0, .err = err, .cap = errcap};
    json_t *root = NULL;
    /* the walk writes through q only when reading */
    walk(&c, &root, (xmt_trialreq *)(uintptr_t)q);
    char *text = c.bad ? NULL : json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text && !c.bad) fail(&c, "the request cannot be written (out of memory)");
    if (len) *len = text ? strlen(text) : 0;
    return text;
}

int xmt_trialreq_from_json(const void *root, xmt_trialreq *q, char *err, size_t errcap)
{
    codec c = {.reading = 1, .err = err, .cap = errcap};
    memset(q, 0, sizeof *q);
    json_t *r = (json_t *)(uintptr_t)root; /* read only: the walk reads when reading */
    walk(&c, &r, q);
    check_decoded(&c, q);
    if (c.bad) xmt_trialreq_free(q);
    return c.bad ? -1 : 0;
}

void xmt_trialreq_free(xmt_trialreq *q)
{
    free((void *)(uintptr_t)q->kernel);
    free((void *)(uintptr_t)q->key);
    free((void *)(uintptr_t)q->record_data);
    free((void *)(uintptr_t)q->decided);
    for (uint32_t i = 0; q->launch.params && i < q->launch.nparams; i++)
        free((void *)(uintptr_t)q->launch.params[i].bytes);
    free(q->launch.params);
    free(q->windows);
    free(q->regions);
    free(q->faulted);
    for (uint64_t i = 0; q->globals && i < q->nglobals; i++) {
        free((void *)(uintptr_t)q->globals[i].name);
        free((void *)(uintptr_t)q->globals[i].value.bytes);
    }
    free(q->globals);
    memset(q, 0, sizeof *q);
}
