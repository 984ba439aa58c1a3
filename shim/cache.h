/*
 * cache: the on-disk cache of tuned winners (XMATUNE_CACHE), shared by processes.
 *
 * One JSON object per line, appended with O_APPEND in a single write, so concurrent
 * processes never tear a line; the last line for a given identity wins. A winner is
 * identified by device *model* (name, compute capability, SM count — identical GPUs
 * share results), kernel (mangled name), policy entry (its pattern) and lookup key. It
 * records the candidate's index and label, not its grid: the grid is recomputed from
 * each launch, and a label that no longer matches (the policy was edited) voids it.
 */
#ifndef XMT_CACHE_H
#define XMT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cacherec.h"

/* Reads the cache file if there is one. Bad lines are skipped with one warning. */
void xmt_cache_load(void);

/* 1 and *out when the cache holds a winner for this identity, else 0. Thread-safe. */
int xmt_cache_find(const char *device_id, const char *kernel, const char *entry, const uint8_t *key,
                   size_t keylen, xmt_choice *out);

/* Remembers a winner in memory and appends it to the file. key_text is for people. */
void xmt_cache_store(const char *device_id, const char *kernel, const char *entry,
                     const uint8_t *key, size_t keylen, const char *key_text, const xmt_choice *c);

/* fork(2): cache_lock held across it (XMT_FORK_* phases, common/log.h). */
void xmt_cache_atfork(int phase);

/* Frees the in-memory copy (at exit). */
void xmt_cache_free(void);

#endif
