/*
 * fuzz_cacherec: libFuzzer target for the on-disk cache's one reader (common/cacherec.c):
 * any bytes as a cache file must be read without a crash, a leak or undefined behaviour,
 * and every record it accepts must format and identify (the writer and the identity
 * the shim and `xmatune cache` use) and read back as the same record. Every line it
 * accepts must also be JSON to jansson, with the same decoded fields (the reader decodes
 * in place and parses numbers itself: this holds it to a reference).
 * Built and run by tests/unit/fuzz_cache.sh (clang, called by scripts/test.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "cacherec.h"

/* r's line as jansson reads it: an object whose fields are r's. Left out: a line with a
 * key twice (the reader takes the first, jansson the last), a number jansson cannot hold,
 * and bytes that are not UTF-8 (the reader passes them through unchecked). */
static void as_jansson(const xmt_cacherec *r)
{
    json_error_t err;
    json_t *j = json_loadb(r->raw, r->raw_len, JSON_REJECT_DUPLICATES, &err);
    if (!j) {
        enum json_error_code code = json_error_code(&err);
        if (code == json_error_duplicate_key || code == json_error_numeric_overflow ||
            code == json_error_invalid_utf8)
            return;
        abort(); /* the reader took what is not JSON */
    }
    if (!json_is_object(j)) abort();
    const char *names[] = {"device", "kernel", "code", "entry", "entry_fp", "key"};
    const char *mine[] = {r->device, r->kernel, r->code, r->entry, r->entry_fp, r->key_hex};
    for (int i = 0; i < 6; i++) {
        const char *v = json_string_value(json_object_get(j, names[i]));
        if (!v || strcmp(v, mine[i]) != 0) abort();
    }
    json_t *kt = json_object_get(j, "key_text");
    if (kt && strcmp(json_string_value(kt) ? json_string_value(kt) : "?", r->key_text) != 0)
        abort();
    json_t *lb = json_object_get(j, "label");
    const char *l = lb ? json_string_value(lb) : "";
    if (!l || strncmp(l, r->choice.label, sizeof r->choice.label - 1) != 0) abort();
    if (json_integer_value(json_object_get(j, "index")) != r->choice.index) abort();
    json_t *t = json_object_get(j, "time_ms");
    if (t && json_is_number(t) && json_number_value(t) != r->choice.time_ms) abort();
    json_decref(j);
}

static void again(void *ud, const xmt_cacherec *r)
{
    const xmt_cacherec *want = ud;
    if (strcmp(r->device, want->device) || strcmp(r->kernel, want->kernel) ||
        strcmp(r->code, want->code) || strcmp(r->entry, want->entry) ||
        strcmp(r->entry_fp, want->entry_fp) || strcmp(r->key_hex, want->key_hex) ||
        r->choice.index != want->choice.index)
        abort(); /* the writer's line must read back as the record it was made from */
}

static void one(void *ud, const xmt_cacherec *r)
{
    (void)ud;
    as_jansson(r);
    char *id = xmt_cacherec_identity(r);
    char *line = xmt_cacherec_format(r);
    if (line) {
        int fd = memfd_create("rec", 0);
        if (fd >= 0) {
            if (write(fd, line, strlen(line)) == (ssize_t)strlen(line) &&
                lseek(fd, 0, SEEK_SET) == 0) {
                xmt_cacherec_other old;
                if (xmt_cacherec_read_fd(fd, again, (void *)r, &old) != 0 || old.older || old.newer)
                    abort();
            }
            close(fd);
        }
    }
    free(line);
    free(id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("cache", 0);
    if (fd < 0) return 0;
    if (write(fd, data, size) == (ssize_t)size && lseek(fd, 0, SEEK_SET) == 0) {
        xmt_cacherec_other old;
        (void)xmt_cacherec_read_fd(fd, one, NULL, &old);
    }
    close(fd);
    return 0;
}
