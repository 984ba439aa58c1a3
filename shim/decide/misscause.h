/*
 * misscause: why a replay found no winner for a key, in words a user can act on (no
 * record, another driver, another device, the kernel's code or the policy entry changed
 * since it was tuned). It reads the cache file once per miss (a cold path: a replay miss
 * happens once per key and process) and compares the records of the same kernel with
 * the identity that was looked for.
 */
#ifndef XMT_MISSCAUSE_H
#define XMT_MISSCAUSE_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"

/* The cause of a miss for (id, key) in the cache file at path ("" when there is none),
 * one short phrase into out ("another driver: the cache has drv12080, this is
 * drv13000"). Never fails: a file that cannot be read says so. */
void xmt_miss_cause(const char *path, const xmt_cache_id *id, const uint8_t *key, size_t keylen,
                    char *out, size_t cap);

#endif
