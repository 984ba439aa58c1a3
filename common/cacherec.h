/*
 * cacherec: the on-disk cache's record format, the one reader and the one writer that
 * the shim (shim/cache.c) and `xmatune cache` share.
 */
#ifndef XMT_CACHEREC_H
#define XMT_CACHEREC_H

#include <stddef.h>
#include <stdint.h>

#define XMT_OWN_CONFIG (-1) /* the winner is the program's own launch configuration */

typedef struct {
    long index;      /* candidate index, or XMT_OWN_CONFIG */
    char label[160]; /* the candidate's label when it won */
    double time_ms;  /* its measured time */
} xmt_choice;

/* Lower-case hex of key[0..len) into out (2 * len + 1 bytes). */
void xmt_cacherec_hex(const uint8_t *key, size_t len, char *out);

/* The lines of a cache file, for `xmatune cache`: calls fn for each valid record. */
int xmt_cache_read_file(const char *path,
                        void (*fn)(void *ud, const char *device, const char *kernel,
                                   const char *entry, const char *key_hex, const char *key_text,
                                   const xmt_choice *c),
                        void *ud);

#endif
