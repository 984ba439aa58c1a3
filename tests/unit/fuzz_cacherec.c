/*
 * fuzz_cacherec: libFuzzer target for the on-disk cache's one reader (common/cacherec.c):
 * any bytes as a cache file must be read without a crash, a leak or undefined behaviour,
 * and every record it accepts must format and identify (the writer and the identity
 * the shim and `xmatune cache` use) and read back as the same record.
 * Built and run by tests/unit/fuzz_cache.sh (clang, called by scripts/test.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cacherec.h"

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
    char *id = xmt_cacherec_identity(r);
    char *line = xmt_cacherec_format(r);
    if (line) {
        int fd = memfd_create("rec", 0);
        if (fd >= 0) {
            if (write(fd, line, strlen(line)) == (ssize_t)strlen(line) &&
                lseek(fd, 0, SEEK_SET) == 0) {
                int old = 0;
                if (xmt_cacherec_read_fd(fd, again, (void *)r, &old) != 0 || old) abort();
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
        int old = 0;
        (void)xmt_cacherec_read_fd(fd, one, NULL, &old);
    }
    close(fd);
    return 0;
}
