/*
 * preload: LD_PRELOAD as xmatune reads and writes it.
 *
 * `xmatune run` puts the shim into LD_PRELOAD, keeping a sanitizer runtime first; the
 * shim takes itself out of it again for the trial helper it spawns (the helper must not
 * run under the shim), keeping every other entry. Both follow the one reading here.
 */
#ifndef XMT_PRELOAD_H
#define XMT_PRELOAD_H

#include <stddef.h>

/* The length of LD_PRELOAD's first entry when it is a sanitizer runtime (libasan.so,
 * libtsan.so, clang's libclang_rt.*): a sanitized build of the shim runs with
 * LD_PRELOAD=libasan.so:libxmatune.so, and that runtime must stay first. Else 0. */
size_t xmt_preload_sanitizer_first(const char *preload);

/* Writes into out (cap bytes) the preload list without the shim: every entry that is
 * self (the shim's own path) or whose file name is libxmatune.so. The other entries keep
 * their order, ':'-separated (the loader accepts ':' and ' '). Returns 0, or -1 when out
 * is too small. */
int xmt_preload_without(const char *preload, const char *self, char *out, size_t cap);

#endif
