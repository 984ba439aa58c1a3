/*
 * misscause: why a replay found no winner for a key (see misscause.h).
 */
#include "misscause.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { D_DRIVER = 1, D_DEVICE = 2, D_CODE = 4, D_ENTRY = 8 };

typedef struct {
    const xmt_cache_id *id;
    const char *key_hex;
    int kernel_records; /* records of this kernel, any key */
    int best;           /* the fewest differences of a record with this key, or -1 */
    int best_mask;
    char other_device[160]; /* that record's device string */
} scan;

/* The device string without its "|drvN" tail: the model alone. */
static size_t model_len(const char *dev)
{
    const char *d = strstr(dev, "|drv");
    for (const char *n = d; n; n = strstr(n + 1, "|drv"))
        d = n; /* the last one: a model name may hold '|' */
    return d ? (size_t)(d - dev) : strlen(dev);
}

static int popcount(int m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

static void on_record(void *ud, const xmt_cacherec *r)
{
    scan *s = ud;
    if (strcmp(r->kernel, s->id->kernel)) return;
    s->kernel_records++;
    if (strcmp(r->key_hex, s->key_hex)) return;
    int mask = 0;
    if (strcmp(r->device, s->id->device)) {
        size_t a = model_len(r->device), b = model_len(s->id->device);
        mask |= a == b && !strncmp(r->device, s->id->device, a) ? D_DRIVER : D_DEVICE;
    }
    if (strcmp(r->code, s->id->code)) mask |= D_CODE;
    if (strcmp(r->entry, s->id->entry) || strcmp(r->entry_fp, s->id->entry_fp)) mask |= D_ENTRY;
    if (s->best < 0 || popcount(mask) <= s->best) { /* later lines win ties */
        s->best = popcount(mask);
        s->best_mask = mask;
        snprintf(s->other_device, sizeof s->other_device, "%s", r->device);
    }
}

/* The record that differs least, in words. */
static void describe(const scan *s, char *out, size_t cap)
{
    size_t at = 0;
    const char *dev = s->id->device;
    if (s->best_mask & D_DRIVER)
        at += (size_t)snprintf(out + at, cap - at, "another driver: the cache has %s, this is %s",
                               s->other_device + model_len(s->other_device) + 1,
                               dev + model_len(dev) + (dev[model_len(dev)] ? 1 : 0));
    if ((s->best_mask & D_DEVICE) && at < cap)
        at += (size_t)snprintf(out + at, cap - at, "%sanother device: the cache has %s, this is %s",
                               at ? "; " : "", s->other_device, dev);
    if ((s->best_mask & D_CODE) && at < cap)
        at += (size_t)snprintf(out + at, cap - at,
                               "%sthe kernel's code changed (its parameter layout or attributes)",
                               at ? "; " : "");
    if ((s->best_mask & D_ENTRY) && at < cap)
        at += (size_t)snprintf(out + at, cap - at, "%sthe policy entry changed since it was tuned",
                               at ? "; " : "");
    if (!at) snprintf(out, cap, "a record was written after this process read the cache");
}

void xmt_miss_cause(const char *path, const xmt_cache_id *id, const uint8_t *key, size_t keylen,
                    char *out, size_t cap)
{
    if (!path || !*path) {
        snprintf(out, cap, "no cache file (XMATUNE_CACHE=off, or it could not be used)");
        return;
    }
    char key_hex[2 * 512 + 1];
    if (keylen > 512) keylen = 512;
    xmt_cacherec_hex(key, keylen, key_hex);
    scan s = {.id = id, .key_hex = key_hex, .best = -1};
    if (xmt_cacherec_read(path, on_record, &s, NULL) < 0) {
        snprintf(out, cap, "the cache %s cannot be read (%s)", path,
                 errno == ENOENT ? "no such file" : strerror(errno));
        return;
    }
    if (s.best >= 0)
        describe(&s, out, cap);
    else if (s.kernel_records)
        snprintf(out, cap,
                 "no record for this key (the cache has %d of this kernel, for other keys)",
                 s.kernel_records);
    else
        snprintf(out, cap, "no record of this kernel in %s", path);
}
